/*
 * Walks over trees that a child or an agent wrote (fstree.h): every
 * step is relative to an open directory fd and never follows a
 * symlink, so a link planted in the tree cannot redirect a chown or
 * an unlink.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fstree.h"

/*
 * What a chown walk may meet: entries made by from (or already given
 * to uid), and no file with a second name.  A hard link would hand the
 * file it names, wherever it is, to the new owner.
 */
int
fs_chown_ok(const struct stat *sb, uid_t from, uid_t uid, const char *name,
    char *why, size_t len)
{
	if (sb->st_uid != from && sb->st_uid != uid) {
		snprintf(why, len, "%.200s: owned by uid %u, not %u", name,
		    (unsigned)sb->st_uid, (unsigned)from);
		errno = EPERM;
		return (-1);
	}
	if (!S_ISDIR(sb->st_mode) && sb->st_nlink != 1) {
		snprintf(why, len, "%.200s: %ju links", name,
		    (uintmax_t)sb->st_nlink);
		errno = EMLINK;
		return (-1);
	}
	return (0);
}

#ifdef FACTORY_TESTBUILD
/* regress/unit: run between an entry's look and its chown. */
void	(*fs_chown_race)(int, const char *);
#endif

/*
 * One entry that is not a directory, pinned by an O_PATH fd.  Its
 * links are counted again after the chown: a second name made between
 * the look and the chown (its maker may link its own file anywhere it
 * can write) would name a file now uid's.  It is given back then.
 */
static int
fs_chown_as(int dfd, const char *name, uid_t from, uid_t ok, uid_t uid,
    gid_t gid, char *why, size_t len)
{
	struct stat	 sb, after;
	int		 fd, rc = -1;

	if ((fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(why, len, "%.200s: %s", name, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) == -1)
		snprintf(why, len, "%.200s: %s", name, strerror(errno));
	else if (fs_chown_ok(&sb, from, ok, name, why, len) == 0) {
#ifdef FACTORY_TESTBUILD
		if (fs_chown_race != NULL)
			fs_chown_race(dfd, name);
#endif
		if ((rc = fchownat(fd, "", uid, gid, AT_EMPTY_PATH)) == -1)
			snprintf(why, len, "%.200s: %s", name,
			    strerror(errno));
		else if (fstat(fd, &after) == -1 || (!S_ISDIR(after.st_mode) &&
		    after.st_nlink != 1)) {
			snprintf(why, len, "%.200s: %ju links after its chown, "
			    "%s", name, (uintmax_t)after.st_nlink,
			    fchownat(fd, "", sb.st_uid, sb.st_gid,
			    AT_EMPTY_PATH) == 0 ? "given back" :
			    "NOT given back");
			errno = EMLINK;
			rc = -1;
		}
	}
	close(fd);
	return (rc);
}

int
fs_chown_one(int dfd, const char *name, uid_t from, uid_t uid, gid_t gid,
    char *why, size_t len)
{
	return (fs_chown_as(dfd, name, from, uid, uid, gid, why, len));
}

static int
fs_walk_chown(int dfd, uid_t from, uid_t uid, gid_t gid, int flags,
    int depth, char *why, size_t len)
{
	uid_t		 ok = (flags & FS_CHOWN_FROM_ONLY) ? from : uid;

	DIR		*d;
	struct dirent	*de;
	struct stat	 sb;
	int		 fd, ret = 0;

	if (depth > FS_MAXDEPTH) {
		snprintf(why, len, "deeper than %d directories", FS_MAXDEPTH);
		errno = ELOOP;
		close(dfd);
		return (-1);
	}
	if (fstat(dfd, &sb) == -1 || fs_chown_ok(&sb, from, ok, "directory",
	    why, len) == -1 || fchown(dfd, uid, gid) == -1) {
		if (why[0] == '\0')
			snprintf(why, len, "%s", strerror(errno));
		close(dfd);
		return (-1);
	}
	if ((d = fdopendir(dfd)) == NULL) {
		snprintf(why, len, "%s", strerror(errno));
		close(dfd);
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
		    -1) {
			snprintf(why, len, "%.200s: %s", de->d_name,
			    strerror(errno));
			ret = -1;
			break;
		}
		if (S_ISDIR(sb.st_mode)) {
			if ((fd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC)) == -1) {
				snprintf(why, len, "%.200s: %s", de->d_name,
				    strerror(errno));
				ret = -1;
				break;
			}
			if (fs_walk_chown(fd, from, uid, gid, flags, depth + 1,
			    why, len) == -1) {
				ret = -1;
				break;
			}
		} else if ((flags & FS_CHOWN_WHITEOUTS) &&
		    S_ISCHR(sb.st_mode) && sb.st_rdev == 0)
			continue;	/* the overlay's own, as it is */
		else if (fs_chown_as(dirfd(d), de->d_name, from, ok, uid, gid,
		    why, len) == -1) {
			ret = -1;
			break;
		}
	}
	closedir(d);
	return (ret);
}

int
fs_chown_fd(int dfd, uid_t from, uid_t uid, gid_t gid, char *why,
    size_t len)
{
	why[0] = '\0';
	return (fs_walk_chown(dfd, from, uid, gid, 0, 0, why, len));
}

int
fs_chown_fd_flags(int dfd, uid_t from, uid_t uid, gid_t gid, int flags,
    char *why, size_t len)
{
	why[0] = '\0';
	return (fs_walk_chown(dfd, from, uid, gid, flags, 0, why, len));
}

/*
 * Removal holds at most FS_RMLEVELS directories open, however deep the
 * tree: a directory found at the last level is renamed to the top of
 * the tree (in one file system a rename is one step, and the name is
 * ours) and emptied from there later.  No path is ever built, so names
 * of NAME_MAX bytes at any depth are fine.  Each directory is read
 * again until a pass removes nothing: entries removed while a stream
 * reads may move, and hoisted ones arrive at the top.
 */
#define FS_RMLEVELS	8
#define FS_RMPASSES	1000	/* of one directory, plus one per hoist */
#define FS_RMPREFIX	".factory-rm."

struct fs_rmlevel {
	DIR		*d;
	int		 progress;	/* this pass removed something */
	unsigned	 passes;
	char		 name[NAME_MAX + 1];	/* in the level above */
};

struct fs_rm {
	struct fs_rmlevel lv[FS_RMLEVELS];
	int		 depth;
	uint64_t	 mnt_id;	/* of the top: never another mount */
	uint32_t	 dev_major, dev_minor;
	unsigned	 hoisted;
	int		 err;		/* the first errno that stopped us */
};

static void
fs_rm_err(struct fs_rm *rm, int e)
{
	if (rm->err == 0)
		rm->err = e;
}

/* Is it on the top's own mount?  A mount point is never entered. */
static int
fs_rm_ours(const struct fs_rm *rm, const struct statx *stx)
{
	return ((stx->stx_mask & STATX_MNT_ID) != 0 &&
	    stx->stx_mnt_id == rm->mnt_id &&
	    stx->stx_dev_major == rm->dev_major &&
	    stx->stx_dev_minor == rm->dev_minor);
}

/* Move directory name of dfd to the top, under a name of ours. */
static void
fs_rm_hoist(struct fs_rm *rm, struct fs_rmlevel *l, const char *name)
{
	char	 tmp[sizeof(FS_RMPREFIX) + 16];
	int	 tries;

	for (tries = 0; tries < 1000; tries++) {
		snprintf(tmp, sizeof(tmp), FS_RMPREFIX "%u", rm->hoisted++);
		if (renameat2(dirfd(l->d), name, dirfd(rm->lv[0].d), tmp,
		    RENAME_NOREPLACE) == 0) {
			l->progress = rm->lv[0].progress = 1;
			return;
		}
		if (errno == ENOENT)
			return;
		if (errno != EEXIST)
			break;
	}
	fs_rm_err(rm, errno);
}

/* Go into directory name of the current level. */
static void
fs_rm_down(struct fs_rm *rm, struct fs_rmlevel *l, const char *name)
{
	struct fs_rmlevel	*n = &rm->lv[rm->depth + 1];
	struct statx		 stx;
	int			 fd;

	if ((fd = openat(dirfd(l->d), name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			fs_rm_err(rm, errno);
		return;
	}
	/* What was looked at may have been swapped since. */
	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID,
	    &stx) == -1 || !fs_rm_ours(rm, &stx)) {
		fs_rm_err(rm, EBUSY);
		close(fd);
		return;
	}
	if ((n->d = fdopendir(fd)) == NULL) {
		fs_rm_err(rm, errno);
		close(fd);
		return;
	}
	n->progress = 0;
	n->passes = 0;
	strlcpy(n->name, name, sizeof(n->name));
	rm->depth++;
}

/* The current level is as empty as it gets: close it, remove it. */
static void
fs_rm_up(struct fs_rm *rm)
{
	struct fs_rmlevel	*l = &rm->lv[rm->depth];
	struct fs_rmlevel	*p = &rm->lv[rm->depth - 1];

	closedir(l->d);
	l->d = NULL;
	rm->depth--;
	if (unlinkat(dirfd(p->d), l->name, AT_REMOVEDIR) == 0 ||
	    errno == ENOENT)
		p->progress = 1;
	else
		fs_rm_err(rm, errno);
}

static void
fs_rm_entry(struct fs_rm *rm, struct fs_rmlevel *l, const char *name)
{
	struct statx	 stx;

	if (statx(dirfd(l->d), name, AT_SYMLINK_NOFOLLOW, STATX_TYPE |
	    STATX_MNT_ID, &stx) == -1) {
		if (errno != ENOENT)
			fs_rm_err(rm, errno);
		return;
	}
	if (!fs_rm_ours(rm, &stx)) {
		fs_rm_err(rm, EBUSY);	/* something is mounted here */
		return;
	}
	if (!S_ISDIR(stx.stx_mode)) {
		if (unlinkat(dirfd(l->d), name, 0) == 0 || errno == ENOENT)
			l->progress = 1;
		else
			fs_rm_err(rm, errno);
	} else if (rm->depth + 1 == FS_RMLEVELS)
		fs_rm_hoist(rm, l, name);
	else
		fs_rm_down(rm, l, name);
}

/* Empty the top level, open in rm->lv[0]. */
static int
fs_rm_run(struct fs_rm *rm)
{
	struct fs_rmlevel	*l;
	struct dirent		*de;
	unsigned		 max;

	for (;;) {
		l = &rm->lv[rm->depth];
		errno = 0;
		if ((de = readdir(l->d)) != NULL) {
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0)
				fs_rm_entry(rm, l, de->d_name);
			continue;
		}
		if (errno != 0) {
			fs_rm_err(rm, errno);
			l->progress = 0;
		}
		max = FS_RMPASSES + (rm->depth == 0 ? rm->hoisted : 0);
		if (l->progress && ++l->passes < max) {
			l->progress = 0;
			rewinddir(l->d);
			continue;
		}
		if (l->progress)
			fs_rm_err(rm, EAGAIN);	/* something keeps writing */
		if (rm->depth == 0)
			return (rm->err == 0 ? 0 : -1);
		fs_rm_up(rm);
	}
}

/*
 * Empty the directory fd (closed here), which may be another user's,
 * without following links or entering another mount, at any depth.
 * -1 with errno: EBUSY for a mount below.
 */
int
fs_remove_fd(int fd)
{
	struct fs_rm	 rm;
	struct statx	 stx;
	int		 rc;

	memset(&rm, 0, sizeof(rm));
	if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID,
	    &stx) == -1 || (stx.stx_mask & STATX_MNT_ID) == 0) {
		close(fd);
		return (-1);
	}
	rm.mnt_id = stx.stx_mnt_id;
	rm.dev_major = stx.stx_dev_major;
	rm.dev_minor = stx.stx_dev_minor;
	if ((rm.lv[0].d = fdopendir(fd)) == NULL) {
		close(fd);
		return (-1);
	}
	rc = fs_rm_run(&rm);
	closedir(rm.lv[0].d);
	if (rc == -1) {
		errno = rm.err;
		return (-1);
	}
	return (0);
}

/*
 * rm -rf without following links or entering another mount, at any
 * depth; ENOENT is success.  -1 with errno: EBUSY for a mount below.
 */
int
fs_remove_tree(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return (0);
		if (errno == ENOTDIR || errno == ELOOP)
			return (unlink(path) == -1 && errno != ENOENT ? -1 : 0);
		return (-1);
	}
	if (fs_remove_fd(fd) == -1)
		return (-1);
	if (rmdir(path) == -1 && errno != ENOENT)
		return (-1);
	return (0);
}
