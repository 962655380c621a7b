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

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "log.h"

#define DISK_BYTES_PER_INODE	(8 * 1024)
#define DISK_INODES_MIN		1024
#define DISK_FULL_SLACK		(64 * 1024)	/* less free is full */
#define DISK_MAXSTACK		8		/* mounts removed at most */

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
