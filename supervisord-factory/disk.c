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
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/mount.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "factoryd.h"
#include "log.h"

#define DISK_BYTES_PER_INODE	(8 * 1024)
#define DISK_INODES_MIN		1024
#define DISK_FULL_SLACK		(64 * 1024)	/* less free is full */
#define DISK_MAXSTACK		8		/* mounts removed at most */

static int	disk_mounted(const char *);
static int	disk_unmount_one(const char *);
static int	disk_userns(uid_t, gid_t, char *, size_t);
static int	disk_chown_one(const char *, const struct stat *, int,
		    struct FTW *);

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

#define DISK_OVL_OPTS \
	"volatile,userxattr,redirect_dir=nofollow,metacopy=off,index=off," \
	"xino=off"

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
 * A user namespace whose root is uid:gid outside, for an idmapped
 * mount: its fd, the process that made it already gone.
 */
static int
disk_userns(uid_t uid, gid_t gid, char *err, size_t errlen)
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
 * the overlay reaches it through /proc/self/fd and keeps it.  Already
 * mounted (a restart): left as it is.
 */
static int
disk_idmapped(const char *lower, int ns, char *err, size_t errlen)
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

int
disk_overlay(const char *lower, const char *extra, const char *dir,
    const char *name, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char			 tree[PATH_MAX], opts[3 * PATH_MAX + 256];
	char			 at[32], xl[64];
	int			 ns, tfd = -1, ufd = -1, wfd = -1, mfd = -1;
	int			 dfd = -1, xfd = -1, ret = -1;

	if ((size_t)snprintf(tree, sizeof(tree), "%s/%s", dir, name) >=
	    sizeof(tree)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return (-1);
	}
	if (disk_mounted(tree))
		return (0);
	if ((ns = disk_userns(uid, gid, err, errlen)) == -1)
		return (-1);
	if ((tfd = disk_idmapped(lower, ns, err, errlen)) == -1)
		goto done;
	/* The setup outputs, above the pristine tree (leftmost is top). */
	xl[0] = '\0';
	if (extra != NULL) {
		if ((xfd = disk_idmapped(extra, ns, err, errlen)) == -1)
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
	    (ufd = disk_opendir(dfd, dir, "upper", err, errlen)) == -1 ||
	    (wfd = disk_opendir(dfd, dir, "work", err, errlen)) == -1 ||
	    (mfd = disk_opendir(dfd, dir, name, err, errlen)) == -1)
		goto done;
	if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=%s/proc/self/fd/%d,"
	    "upperdir=/proc/self/fd/%d,workdir=/proc/self/fd/%d,"
	    DISK_OVL_OPTS, xl, tfd, ufd, wfd) >= sizeof(opts)) {
		snprintf(err, errlen, "%s: unusable in overlay options", dir);
		goto done;
	}
	snprintf(at, sizeof(at), "/proc/self/fd/%d", mfd);
	if (mount("overlay", at, "overlay", MS_NOSUID | MS_NODEV, opts) ==
	    -1) {
		snprintf(err, errlen, "mount overlay on %s: %s", tree,
		    strerror(errno));
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
 * itself made, which stay as they are.
 */
static uid_t	 chown_from, chown_to;
static int	 chown_bad;

static int
disk_chown_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	if (S_ISCHR(st->st_mode) && st->st_rdev == 0)
		return (0);
	if (st->st_uid != chown_from || (!S_ISDIR(st->st_mode) &&
	    st->st_nlink > 1) || flag == FTW_NS || flag == FTW_DNR) {
		chown_bad = 1;
		return (1);
	}
	if (fchownat(AT_FDCWD, path, chown_to, chown_to,
	    AT_SYMLINK_NOFOLLOW) == -1)
		return (-1);
	return (0);
}

int
disk_chown_upper(const char *dir, uid_t from, uid_t to, char *err,
    size_t errlen)
{
	char	 upper[PATH_MAX];
	int	 rc;

	snprintf(upper, sizeof(upper), "%s/upper", dir);
	chown_from = from;
	chown_to = to;
	chown_bad = 0;
	rc = nftw(upper, disk_chown_one, 16, FTW_PHYS | FTW_MOUNT);
	if (rc == 0)
		return (0);
	if (chown_bad)
		snprintf(err, errlen, "%s: an entry not made by uid %u",
		    upper, (unsigned)from);
	else
		snprintf(err, errlen, "%s: %s", upper, strerror(errno));
	return (-1);
}
