/*
 * Whether a process's memory holds some bytes: every readable mapping
 * of /proc/PID/maps is read through /proc/PID/mem and searched.  Run
 * as root on the host, to prove that a sandbox's pid 1 holds nothing
 * of the parent's memory (its signing key) and, as the control, that
 * the parent does.  Prints "found" or "absent".
 *
 *	memscan PID HEX
 */
#include <sys/types.h>

#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t
unhex(const char *s, unsigned char *out, size_t max)
{
	size_t	 n = 0;
	unsigned int v;

	while (s[0] != '\0' && s[1] != '\0' && n < max) {
		if (sscanf(s, "%2x", &v) != 1)
			errx(2, "bad hex");
		out[n++] = (unsigned char)v;
		s += 2;
	}
	return (n);
}

int
main(int argc, char *argv[])
{
	unsigned char	 needle[256], *buf;
	char		 path[64], line[512], perms[8];
	unsigned long	 lo, hi;
	size_t		 nlen;
	ssize_t		 n;
	FILE		*maps;
	int		 mem, found = 0;

	if (argc != 3 || (nlen = unhex(argv[2], needle, sizeof(needle))) < 8)
		errx(2, "usage: memscan pid hex (8 bytes at least)");
	snprintf(path, sizeof(path), "/proc/%s/maps", argv[1]);
	if ((maps = fopen(path, "re")) == NULL)
		err(2, "%s", path);
	snprintf(path, sizeof(path), "/proc/%s/mem", argv[1]);
	if ((mem = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		err(2, "%s", path);
	while (!found && fgets(line, sizeof(line), maps) != NULL) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    perms[0] != 'r' || strstr(line, "[vvar") != NULL ||
		    hi - lo > (1UL << 30))
			continue;
		if ((buf = malloc(hi - lo)) == NULL)
			err(2, NULL);
		n = pread(mem, buf, hi - lo, (off_t)lo);
		if (n > 0 && memmem(buf, (size_t)n, needle, nlen) != NULL)
			found = 1;
		free(buf);
	}
	printf("%s\n", found ? "found" : "absent");
	return (0);
}
