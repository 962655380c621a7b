/*
 * Who holds a mount namespace, for the regress helpers: by its id
 * (NS_GET_MNTNS_ID, Linux 6.8), since inode numbers of namespaces are
 * reused at once.  Static functions: included by prog_launch.c and
 * prog_sbx.c.
 */
#ifndef REGRESS_SANDBOX_MNTNS_H
#define REGRESS_SANDBOX_MNTNS_H

#include <sys/ioctl.h>

#include <dirent.h>
#include <err.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef NS_GET_MNTNS_ID
#define NS_GET_MNTNS_ID	_IOR(0xb7, 0x5, uint64_t)
#endif

/* The id of the mount namespace path is (or is an fd of), or 0. */
static uint64_t
mnt_id(const char *path)
{
	char		 link[64];
	uint64_t	 id = 0;
	ssize_t		 n;
	int		 fd;

	if ((n = readlink(path, link, sizeof(link) - 1)) <= 0)
		return (0);
	link[n] = '\0';
	if (strncmp(link, "mnt:[", 5) != 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (0);
	if (ioctl(fd, NS_GET_MNTNS_ID, &id) == -1)
		id = 0;
	close(fd);
	return (id);
}

/* How many processes are in mount namespace id or hold an fd of it. */
static int
mnt_holders(uint64_t id)
{
	char		 path[PATH_MAX];
	struct dirent	*de, *fe;
	DIR		*d, *fd;
	int		 n = 0, held;

	if ((d = opendir("/proc")) == NULL)
		err(2, "/proc");
	while ((de = readdir(d)) != NULL) {
		if (atol(de->d_name) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", de->d_name);
		held = mnt_id(path) == id;
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		if (!held && (fd = opendir(path)) != NULL) {
			while (!held && (fe = readdir(fd)) != NULL) {
				snprintf(path, sizeof(path), "/proc/%s/fd/%s",
				    de->d_name, fe->d_name);
				held = mnt_id(path) == id;
			}
			closedir(fd);
		}
		n += held;
	}
	closedir(d);
	return (n);
}

/* The id of the mount namespace fd is of, or 0. */
static __attribute__((__unused__)) uint64_t
mnt_id_fd(int fd)
{
	uint64_t	 id = 0;

	if (ioctl(fd, NS_GET_MNTNS_ID, &id) == -1)
		return (0);
	return (id);
}

#endif
