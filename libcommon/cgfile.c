/*
 * Reading and writing one cgroup file, for the parent (cgroup.c) and
 * the launcher's start-up probe (sandbox/cgprobe.c) alike.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgfile.h"

/* Does the space- or comma-separated list s contain word w? */
int
cgfile_hasword(const char *s, const char *w)
{
	size_t	 n = strlen(w);
	const char *p = s;

	while ((p = strstr(p, w)) != NULL) {
		if ((p == s || p[-1] == ' ' || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == ',' ||
		    p[n] == '\n'))
			return (1);
		p += n;
	}
	return (0);
}

int
cgfile_read(const char *dir, const char *file, char *buf, size_t len)
{
	char	 path[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n == -1)
		return (-1);
	buf[n] = '\0';
	return (0);
}

int
cgfile_write(const char *dir, const char *file, const char *val,
    char *err, size_t errlen)
{
	char	 path[PATH_MAX];
	size_t	 len = strlen(val);
	int	 fd, saved;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		snprintf(err, errlen, "%s/%s: path too long", dir, file);
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		saved = errno;
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		errno = saved;
		return (-1);
	}
	if (write(fd, val, len) != (ssize_t)len) {
		saved = errno;
		snprintf(err, errlen, "write %s to %s: %s", val, path,
		    strerror(errno));
		close(fd);
		errno = saved;
		return (-1);
	}
	close(fd);
	return (0);
}
