/*
 * Small things every program needs the same way.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/*
 * A reason into a caller's buffer, which may be absent (errlen 0).
 * Returns -1, so that a failing function can return (errfmt(...)).
 */
int
errfmt(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	 ap;

	if (errlen == 0)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return (-1);
}

/* Make a new or renamed directory entry durable: fsync its directory. */
int
fsync_dir_of(const char *path)
{
	char	 copy[PATH_MAX];
	int	 fd, rv;

	if (strlcpy(copy, path, sizeof(copy)) >= sizeof(copy)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return (-1);
	rv = fsync(fd);
	close(fd);
	return (rv);
}

/* Append a formatted string to a growing array of strings. */
int
strv_addf(char ***v, size_t *n, const char *fmt, ...)
{
	char	**nv, *s;
	va_list	  ap;
	int	  r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r == -1)
		return (-1);
	if ((nv = reallocarray(*v, *n + 1, sizeof(*nv))) == NULL) {
		free(s);
		return (-1);
	}
	nv[(*n)++] = s;
	*v = nv;
	return (0);
}

/* The wall clock in ms since the epoch, as receipts and stages count. */
uint64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * The fleet's leases' clock, in ms: CLOCK_BOOTTIME, which counts a
 * suspend as the database does, where the monotonic clock would not (a
 * host resumed would think its leases live).  Shared by every process
 * of one host: the parent's deadlines hold in its children.
 */
uint64_t
boot_ms(void)
{
	struct timespec	 ts;

	/* Never: a lease must not look live for a clock that failed. */
	if (clock_gettime(CLOCK_BOOTTIME, &ts) == -1)
		abort();
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* A clock for intervals, in ms: it never steps back. */
uint64_t
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/*
 * A name that is one safe path component and no option: 1 to max
 * bytes of [A-Za-z0-9._-], not starting with '.' or '-'.
 */
int
name_valid(const char *s, size_t max)
{
	size_t	 n = strlen(s);

	if (n == 0 || n > max || s[0] == '.' || s[0] == '-')
		return (0);
	return (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == n);
}

/*
 * A path inside a tree as a manifest names it (setup's inputs and
 * outputs, a service's data) and the sandbox's plan carries it:
 * relative, shorter than max, no control character, each component a
 * name (no "", ".", ".."), not in .git, no trailing '/'.  1, or 0 and
 * why.
 */
int
tree_relpath(const char *s, size_t max, const char **why)
{
	const char	*p, *end;
	size_t		 len;

	if (*s == '\0' || *s == '/') {
		*why = "not a relative path inside the tree";
		return (0);
	}
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*why = "contains a control character";
			return (0);
		}
	if (strlen(s) >= max) {
		*why = "too long";
		return (0);
	}
	for (p = s; *p != '\0'; p = *end == '\0' ? end : end + 1) {
		if ((end = strchr(p, '/')) == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.')) {
			*why = "an empty, \".\" or \"..\" component";
			return (0);
		}
		if (p == s && len == 4 && strncmp(p, ".git", 4) == 0) {
			*why = "inside .git";
			return (0);
		}
	}
	if (s[strlen(s) - 1] == '/') {
		*why = "ends with '/'";
		return (0);
	}
	return (1);
}

/* All of buf to fd, a blocking one: 0, or -1 and errno. */
int
write_all(int fd, const void *buf, size_t len)
{
	const unsigned char	*p = buf;
	ssize_t			 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		p += n;
		len -= (size_t)n;
	}
	return (0);
}
