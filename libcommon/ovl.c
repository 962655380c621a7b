/*
 * The overlay pieces the parent's disk (supervisord-factory/disk.c)
 * mounts an attempt's tree with, and the launcher's start-up probe
 * (sandbox/diskprobe.c) tries once: the same calls, so the probe says
 * what the mounts will do.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/mount.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ovl.h"

/*
 * A user namespace whose root is uid:gid outside, for an idmapped
 * mount: its fd, the process that made it already gone.
 */
int
ovl_userns(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char	 path[64], map[64];
	pid_t	 pid;
	int	 p[2], fd = -1, i, n, mfd;
	char	 c;

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return (-1);
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if (pid == 0) {
		/* Tell the parent, then wait until it has the namespace. */
		close(p[0]);
		c = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1 || c != 'y') {
		snprintf(err, errlen, "unshare(CLONE_NEWUSER) failed");
		goto done;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid,
		    i == 0 ? "uid_map" : "gid_map");
		n = snprintf(map, sizeof(map), "0 %u 1\n",
		    i == 0 ? (unsigned)uid : (unsigned)gid);
		if ((mfd = open(path, O_WRONLY | O_CLOEXEC)) == -1 ||
		    write(mfd, map, n) != n) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			if (mfd != -1)
				close(mfd);
			goto done;
		}
		close(mfd);
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
 done:
	close(p[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	return (fd);
}

/* A detached, read-only, idmapped clone of dir (lower), by its fd. */
int
ovl_idmapped(const char *lower, int ns, char *err, size_t errlen)
{
	struct mount_attr	 attr;
	int			 tfd;

	tfd = syscall(SYS_open_tree, AT_FDCWD, lower, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
	if (tfd == -1) {
		snprintf(err, errlen, "open_tree %s: %s", lower,
		    strerror(errno));
		return (-1);
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY |
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	attr.userns_fd = ns;
	if (syscall(SYS_mount_setattr, tfd, "", AT_EMPTY_PATH, &attr,
	    sizeof(attr)) == -1) {
		snprintf(err, errlen, "idmap %s: %s", lower, strerror(errno));
		close(tfd);
		return (-1);
	}
	return (tfd);
}

/* The overlay mount itself: lowers (a ':'-list), upper and work by fd. */
int
ovl_mount(const char *lowers, int ufd, int wfd, int mfd, char *err,
    size_t errlen)
{
	char	 opts[3 * PATH_MAX + 256], at[32];

	if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=%s,"
	    "upperdir=/proc/self/fd/%d,workdir=/proc/self/fd/%d,"
	    OVL_OPTS, lowers, ufd, wfd) >= sizeof(opts)) {
		snprintf(err, errlen, "unusable in overlay options");
		return (-1);
	}
	snprintf(at, sizeof(at), "/proc/self/fd/%d", mfd);
	if (mount("overlay", at, "overlay", MS_NOSUID | MS_NODEV, opts) ==
	    -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		return (-1);
	}
	return (0);
}
