/*
 * Each attempt's disk: its directory (the tree, the scratch repository
 * of the collect, the bundle) and its verify directory are each a
 * tmpfs of their own, with a size and an inode count, mounted by the
 * parent over the directory it just made.  An agent that fills it gets
 * ENOSPC there; the state file system, and so the journal, never sees
 * its bytes.
 *
 * Why a tmpfs: measured on the hosts we test on, mount and umount of
 * one take about 55 us together and need no helper binary; an ext4
 * image (mke2fs, a loop device, mount, umount) took 40-70 ms and a
 * host-global loop device per attempt.  It works whatever the state
 * file system is, and bounds blocks and inodes alike.  Project quotas
 * would need the state file system (ext4 there, without a journal)
 * mounted with prjquota, which it is not.  The price: its pages
 * are memory, charged to the memory cgroup of whoever wrote them (the
 * agent's, for the agent's bytes), so attempt-disk max is also a bound
 * on memory; factoryd.conf(5) says so.
 *
 * Removal is by exact path: the journaled target, nothing matched.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/magic.h>
#include <linux/mount.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "factoryd.h"
#include "fstree.h"
#include "log.h"
#include "ovl.h"

#define DISK_BYTES_PER_INODE	(8 * 1024)
#define DISK_INODES_MIN		1024
#define DISK_FULL_SLACK		(64 * 1024)	/* less free is full */
#define DISK_MAXSTACK		8		/* mounts removed at most */

static int	disk_mounted(const char *);
static int	disk_unmount_one(const char *);

/*
 * Overlayfs takes a detached mount (open_tree's clone, attached
 * nowhere) as a layer only from Linux 6.15; before, the overlay mount
 * fails with EINVAL.  The launcher's probe finds out which kind this
 * kernel is (sandbox/diskprobe.c), in its process, not root's; 1: the
 * layers are attached first, in a mount namespace of their own
 * (disk_overlay_attached).
 */
static int	disk_attach;

uint64_t
disk_inodes(uint64_t bytes)
{
	uint64_t	 n = bytes / DISK_BYTES_PER_INODE;

	return (n < DISK_INODES_MIN ? DISK_INODES_MIN : n);
}

/* The size an attempt gets: its manifest's, or the configured default. */
uint64_t
disk_limit(const struct manifest *m)
{
	return (m->limits.disk != 0 ? m->limits.disk :
	    env->conf->disk_default);
}

/* What the journal records before the mount is made. */
json_t *
disk_facts(const char *path, uint64_t bytes)
{
	return (json_pack("{s:s, s:s, s:I, s:I}", "fs", "tmpfs", "target",
	    path, "size", (json_int_t)bytes, "inodes",
	    (json_int_t)disk_inodes(bytes)));
}

/* Is path the root of a file system of its own (a mount point)? */
static int
disk_mounted(const char *path)
{
	struct stat	 st, pst;
	char		 parent[PATH_MAX];

	if ((size_t)snprintf(parent, sizeof(parent), "%s/..", path) >=
	    sizeof(parent) || lstat(path, &st) == -1 ||
	    stat(parent, &pst) == -1)
		return (0);
	return (S_ISDIR(st.st_mode) && st.st_dev != pst.st_dev);
}

/*
 * A tmpfs of bytes over the directory path (which exists), its root
 * owned by uid:gid, mode 0700.  Already mounted (a redrive, a restart):
 * left as it is.
 */
int
disk_mount(const char *path, uint64_t bytes, uid_t uid, gid_t gid,
    char *err, size_t errlen)
{
	char	 opts[256];

	if (disk_mounted(path))
		return (0);
	snprintf(opts, sizeof(opts), "size=%llu,nr_inodes=%llu,mode=0700,"
	    "uid=%u,gid=%u", (unsigned long long)bytes,
	    (unsigned long long)disk_inodes(bytes), (unsigned)uid,
	    (unsigned)gid);
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) == -1) {
		snprintf(err, errlen, "mount tmpfs on %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * Unmount whatever is mounted at exactly path (not following a
 * symlink).  0 when nothing is mounted there any more.
 */
int
disk_unmount(const char *path)
{
	/* The tree's overlay sits on the disk: it goes first. */
	if (disk_mounted(path) && (disk_overlay_unmount(path, "tree") == -1 ||
	    disk_overlay_unmount(path, "checkout") == -1))
		return (-1);
	return (disk_unmount_one(path));
}

static int
disk_unmount_one(const char *path)
{
	int	 i;

	for (i = 0; i < DISK_MAXSTACK; i++) {
		if (umount2(path, UMOUNT_NOFOLLOW) == 0)
			continue;
		if (errno == EINVAL || errno == ENOENT)
			return (0);	/* not a mount point (now) */
		log_warn("umount %s", path);
		return (-1);
	}
	errno = EBUSY;
	log_warnx("umount %s: still a mount point after %d unmounts", path,
	    DISK_MAXSTACK);
	return (-1);
}

/*
 * What the attempt's disk holds now; "full" when less than 64 KiB or
 * no inode is left, which is what an agent that ran into the limit
 * leaves behind.  NULL if path is not a mount of its own.
 */
json_t *
disk_usage(const char *path, uint64_t limit, int *full)
{
	struct statvfs	 vfs;
	uint64_t	 freeb;

	*full = 0;
	if (!disk_mounted(path) || statvfs(path, &vfs) == -1)
		return (NULL);
	freeb = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	*full = freeb < DISK_FULL_SLACK || vfs.f_favail == 0;
	return (json_pack("{s:b, s:I, s:I, s:I}", "full", *full, "limit",
	    (json_int_t)limit, "used", (json_int_t)(((uint64_t)vfs.f_blocks -
	    vfs.f_bfree) * vfs.f_frsize), "inodes_used",
	    (json_int_t)(vfs.f_files - vfs.f_ffree)));
}

/*
 * dir, an attempt's or a verify directory below the state directory,
 * by descriptor: every component below the state directory opened
 * with no link followed (beneath.h), not only the last.
 */
static int
disk_openroot(const char *dir, char *err, size_t errlen)
{
	const char	*sd = env->conf->statedir;
	size_t		 n = strlen(sd);
	int		 sfd, fd;

	if (strncmp(dir, sd, n) != 0 || dir[n] != '/' || dir[n + 1] == '\0') {
		snprintf(err, errlen, "%s: not below the state directory", dir);
		return (-1);
	}
	if ((sfd = open(sd, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", sd, strerror(errno));
		return (-1);
	}
	if ((fd = open_beneath(sfd, dir + n + 1, O_PATH | O_DIRECTORY)) == -1)
		snprintf(err, errlen, "%s: %s", dir, errno == ELOOP ||
		    errno == ENOTDIR ? "a symbolic link in the path" :
		    strerror(errno));
	close(sfd);
	return (fd);
}

/* name in the directory dfd (dir), as the directory it is: O_PATH. */
static int
disk_opendir(int dfd, const char *dir, const char *name, char *err,
    size_t errlen)
{
	int	 fd;

	if ((fd = open_beneath(dfd, name, O_PATH | O_DIRECTORY)) == -1)
		snprintf(err, errlen, "%s/%s: %s", dir, name, errno == ELOOP ||
		    errno == ENOTDIR ? "not a directory (a link?)" :
		    strerror(errno));
	return (fd);
}

/*
 * The attempt's tree: an overlay on dir/name (tree, or checkout for the
 * validation run) of lower (a pristine checkout, root's) and dir/upper,
 * dir/work.  The lower is a detached,
 * read-only, idmapped clone of the pristine tree in which root's files
 * are uid's, so the agent may write (copy up) what it owns in its view
 * while the pristine tree itself stays root's and is never written: the
 * overlay only ever writes its upper.  The clone is attached nowhere;
 * the overlay reaches it through /proc/self/fd and keeps it (before
 * Linux 6.15, through a helper's private mount namespace:
 * disk_overlay_attached).  Already mounted (a restart): left as it is.
 */
/* One descriptor (or none, and a message) on a socket. */
static int
disk_sendfd(int sock, int fd, const char *msg)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr	 m;
	struct iovec	 iov;
	struct cmsghdr	*c;

	memset(&m, 0, sizeof(m));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)msg;
	iov.iov_len = strlen(msg) + 1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (fd != -1) {
		m.msg_control = cm.buf;
		m.msg_controllen = sizeof(cm.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return (sendmsg(sock, &m, MSG_NOSIGNAL) == -1 ? -1 : 0);
}

/*
 * What disk_sendfd sent: its descriptor, or -1 and its message in err
 * (the helper is a fork of ours, but its words are still bounded).
 */
static int
disk_recvfd(int sock, char *err, size_t errlen)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr	 m;
	struct iovec	 iov;
	struct cmsghdr	*c;
	char		 msg[512];
	ssize_t		 n;
	int		 fd = -1;

	memset(&m, 0, sizeof(m));
	iov.iov_base = msg;
	iov.iov_len = sizeof(msg) - 1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cm.buf;
	m.msg_controllen = sizeof(cm.buf);
	if ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) <= 0) {
		snprintf(err, errlen, "the overlay helper said nothing");
		return (-1);
	}
	msg[n] = '\0';
	if ((c = CMSG_FIRSTHDR(&m)) != NULL && c->cmsg_level == SOL_SOCKET &&
	    c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fd == -1 || msg[0] != '\0') {
		if (fd != -1)
			close(fd);
		snprintf(err, errlen, "%s", msg[0] != '\0' ? msg :
		    "the overlay helper sent no mount");
		return (-1);
	}
	return (fd);
}

/*
 * The helper's side of disk_overlay_attached, in a mount namespace of
 * its own with nothing propagating out: the state directory covered
 * by a scratch tmpfs (nobody else sees it, and it goes with the
 * namespace), the detached layers attached in it, the overlay mounted
 * there and cloned to a detached mount of its own for the parent.
 * The attempt's directories are opened here, after the unshare: a
 * layer must be a mount of the namespace that mounts the overlay.
 */
static __dead void
disk_attached_child(int sock, const int *lfd, int nl, const char *dir)
{
	const char	*sd = env->conf->statedir;
	char		 err[512], why[256], lowers[64], l[8];
	int		 dfd, ufd, wfd, sfd, ofd, afd, i;

	err[0] = '\0';
	lowers[0] = '\0';
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		snprintf(err, sizeof(err), "private mount namespace: %s",
		    strerror(errno));
		goto fail;
	}
	if ((dfd = disk_openroot(dir, err, sizeof(err))) == -1 ||
	    (ufd = disk_opendir(dfd, dir, "upper", err, sizeof(err))) == -1 ||
	    (wfd = disk_opendir(dfd, dir, "work", err, sizeof(err))) == -1)
		goto fail;
	if (mount("tmpfs", sd, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "size=64k,nr_inodes=64,mode=0700") == -1 ||
	    (sfd = open(sd, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    mkdirat(sfd, "o", 0700) == -1 ||
	    (ofd = openat(sfd, "o", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, sizeof(err), "scratch tmpfs: %s",
		    strerror(errno));
		goto fail;
	}
	/* Leftmost is top: the setup outputs, then the pristine tree. */
	for (i = nl - 1; i >= 0; i--) {
		snprintf(l, sizeof(l), "l%d", i);
		if (mkdirat(sfd, l, 0700) == -1 ||
		    syscall(SYS_move_mount, lfd[i], "", sfd, l,
		    MOVE_MOUNT_F_EMPTY_PATH) == -1 ||
		    (afd = openat(sfd, l, O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1) {
			snprintf(err, sizeof(err), "attach the lower layer: %s",
			    strerror(errno));
			goto fail;
		}
		snprintf(lowers + strlen(lowers), sizeof(lowers) -
		    strlen(lowers), "%s/proc/self/fd/%d", i == nl - 1 ? "" :
		    ":", afd);
	}
	if (ovl_mount(lowers, ufd, wfd, ofd, why, sizeof(why)) == -1) {
		snprintf(err, sizeof(err), "mount overlay: %s", why);
		goto fail;
	}
	if ((ofd = syscall(SYS_open_tree, sfd, "o", OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC)) == -1) {
		snprintf(err, sizeof(err), "open_tree of the overlay: %s",
		    strerror(errno));
		goto fail;
	}
	_exit(disk_sendfd(sock, ofd, "") == -1);
 fail:
	(void)disk_sendfd(sock, -1, err);
	_exit(1);
}

/*
 * Before Linux 6.15: the overlay made by a helper in a private mount
 * namespace, where its layers can be attached without anyone seeing
 * them, and moved from there onto dir/name (mfd).  Nothing is left
 * behind to clean up: the helper's namespace, its scratch tmpfs and
 * the attached layers go when it exits; the overlay keeps private
 * clones of its layers, as it always does.
 */
static int
disk_overlay_attached(const int *lfd, int nl, const char *dir, int mfd,
    char *err, size_t errlen)
{
	pid_t	 pid;
	int	 sv[2], ofd, st, ret = -1;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return (-1);
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return (-1);
	}
	if (pid == 0) {
		close(sv[0]);
		disk_attached_child(sv[1], lfd, nl, dir);
	}
	close(sv[1]);
	if ((ofd = disk_recvfd(sv[0], err, errlen)) != -1) {
		if (syscall(SYS_move_mount, ofd, "", mfd, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == -1)
			snprintf(err, errlen, "move_mount: %s",
			    strerror(errno));
		else
			ret = 0;
		close(ofd);
	}
	close(sv[0]);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	return (ret);
}

void
disk_set_attach(int attach)
{
	disk_attach = attach;
}

int
disk_overlay(const char *lower, const char *extra, const char *dir,
    const char *name, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char			 tree[PATH_MAX], why[512], xl[64];
	int			 ns, tfd = -1, ufd = -1, wfd = -1, mfd = -1;
	int			 dfd = -1, xfd = -1, ret = -1, lfd[2], nl = 1;

	if ((size_t)snprintf(tree, sizeof(tree), "%s/%s", dir, name) >=
	    sizeof(tree)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return (-1);
	}
	if (disk_mounted(tree))
		return (0);
	if ((ns = ovl_userns(uid, gid, err, errlen)) == -1)
		return (-1);
	if ((tfd = ovl_idmapped(lower, ns, err, errlen)) == -1)
		goto done;
	/* The setup outputs, above the pristine tree (leftmost is top). */
	xl[0] = '\0';
	if (extra != NULL) {
		if ((xfd = ovl_idmapped(extra, ns, err, errlen)) == -1)
			goto done;
		snprintf(xl, sizeof(xl), "/proc/self/fd/%d:", xfd);
	}
	/*
	 * dir is the worker's (or the verifier's): dir, then upper, work
	 * and the mount point in it, are taken as the directories they
	 * are now, by descriptor, with no link in any component below the
	 * state directory, so a symbolic link swapped in anywhere is
	 * refused instead of followed by root.
	 */
	if ((dfd = disk_openroot(dir, err, errlen)) == -1 ||
	    (mfd = disk_opendir(dfd, dir, name, err, errlen)) == -1)
		goto done;
	if (disk_attach) {
		lfd[0] = tfd;
		lfd[1] = xfd;
		nl = xfd != -1 ? 2 : 1;
		if (disk_overlay_attached(lfd, nl, dir, mfd, why,
		    sizeof(why)) == -1) {
			snprintf(err, errlen, "overlay on %s (layers attached "
			    "first): %s", tree, why);
			goto done;
		}
		ret = 0;
		goto done;
	}
	if ((ufd = disk_opendir(dfd, dir, "upper", err, errlen)) == -1 ||
	    (wfd = disk_opendir(dfd, dir, "work", err, errlen)) == -1)
		goto done;
	snprintf(xl + strlen(xl), sizeof(xl) - strlen(xl), "/proc/self/fd/%d",
	    tfd);
	if (ovl_mount(xl, ufd, wfd, mfd, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "mount overlay on %s: %s", tree, why);
		goto done;
	}
	ret = 0;
 done:
	if (tfd != -1)
		close(tfd);
	if (xfd != -1)
		close(xfd);
	if (ufd != -1)
		close(ufd);
	if (wfd != -1)
		close(wfd);
	if (mfd != -1)
		close(mfd);
	if (dfd != -1)
		close(dfd);
	close(ns);
	return (ret);
}

/* Is the overlay mounted on dir/name? */
int
disk_overlay_mounted(const char *dir, const char *name)
{
	char	 tree[PATH_MAX];

	if ((size_t)snprintf(tree, sizeof(tree), "%s/%s", dir, name) >=
	    sizeof(tree))
		return (0);
	return (disk_mounted(tree));
}

/*
 * The device of the overlay mounted on dir/name, taken through dir's
 * descriptor, with no link below the state directory: what a later use
 * of the path (a service's data) compares with, so that an overlay the
 * owner of dir moved there from elsewhere is not taken for this one.
 */
int
disk_overlay_dev(const char *dir, const char *name, uint64_t *devp,
    char *err, size_t errlen)
{
	struct statfs	 sfs;
	struct stat	 st, dst;
	int		 dfd, fd = -1, ret = -1;

	if ((dfd = disk_openroot(dir, err, errlen)) == -1)
		return (-1);
	if (fstat(dfd, &dst) == -1 || (fd = open_beneath(dfd, name,
	    O_RDONLY | O_DIRECTORY)) == -1 || fstat(fd, &st) == -1 ||
	    fstatfs(fd, &sfs) == -1)
		snprintf(err, errlen, "%s/%s: %s", dir, name, strerror(errno));
	else if (st.st_dev == dst.st_dev ||
	    sfs.f_type != OVERLAYFS_SUPER_MAGIC)
		snprintf(err, errlen, "%s/%s: no overlay mounted", dir, name);
	else {
		*devp = (uint64_t)st.st_dev;
		ret = 0;
	}
	if (fd != -1)
		close(fd);
	close(dfd);
	return (ret);
}

/* The overlay on dir/name alone, the disk under it kept. */
int
disk_overlay_unmount(const char *dir, const char *name)
{
	char	 tree[PATH_MAX];

	if ((size_t)snprintf(tree, sizeof(tree), "%s/%s", dir, name) >=
	    sizeof(tree)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (disk_unmount_one(tree));
}

/* What the journal records before the overlay is made. */
json_t *
disk_overlay_facts(const char *lower, const char *dir, const char *name)
{
	return (json_pack("{s:s, s:s++, s:s, s:s+, s:s+}", "fs", "overlay",
	    "target", dir, "/", name, "lower", lower, "upper", dir, "/upper",
	    "work", dir, "/work"));
}

/*
 * The upper dir handed from one user to the next (the verifier, who
 * wrote the commit's changes, to the validation run's uid): every
 * entry must be from's, with one name, but the whiteouts the overlay
 * itself made, which stay as they are.  Walked by descriptor
 * (libcommon/fstree.c), never by path: the verifier may still hold a
 * directory of it (through the overlay, a lazy unmount keeps it) and
 * swap a parent for a link while the walk goes, which a chown by path
 * would follow out of the tree.
 */
int
disk_chown_upper(const char *dir, uid_t from, uid_t to, char *err,
    size_t errlen)
{
	char	 upper[PATH_MAX], why[256];
	int	 fd;

	snprintf(upper, sizeof(upper), "%s/upper", dir);
	if ((fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", upper, strerror(errno));
		return (-1);
	}
	if (fs_chown_fd_flags(fd, from, to, to, FS_CHOWN_FROM_ONLY |
	    FS_CHOWN_WHITEOUTS, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", upper, why);
		return (-1);
	}
	return (0);
}
