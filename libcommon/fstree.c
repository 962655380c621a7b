/*
 * Walks over trees that a child or an agent wrote (fstree.h): every
 * step is relative to an open directory fd and never follows a
 * symlink, so a link planted in the tree cannot redirect a chown.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
int
fs_chown_one(int dfd, const char *name, uid_t from, uid_t uid, gid_t gid,
    char *why, size_t len)
{
	struct stat	 sb, after;
	int		 fd, rc = -1;

	if ((fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(why, len, "%.200s: %s", name, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) == -1)
		snprintf(why, len, "%.200s: %s", name, strerror(errno));
	else if (fs_chown_ok(&sb, from, uid, name, why, len) == 0) {
#ifdef FACTORY_TESTBUILD
		if (fs_chown_race != NULL)
			fs_chown_race(dfd, name);
#endif
		if ((rc = fchownat(fd, "", uid, gid, AT_EMPTY_PATH)) == -1)
			snprintf(why, len, "%.200s: %s", name,
			    strerror(errno));
		else if (fstat(fd, &after) == -1 || (!S_ISDIR(after.st_mode) &&
		    after.st_nlink != 1)) {
			(void)fchownat(fd, "", sb.st_uid, sb.st_gid,
			    AT_EMPTY_PATH);
			snprintf(why, len, "%.200s: %ju links after its chown, "
			    "given back", name, (uintmax_t)after.st_nlink);
			errno = EMLINK;
			rc = -1;
		}
	}
	close(fd);
	return (rc);
}

static int
fs_walk_chown(int dfd, uid_t from, uid_t uid, gid_t gid, int depth,
    char *why, size_t len)
{
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
	if (fstat(dfd, &sb) == -1 || fs_chown_ok(&sb, from, uid, "directory",
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
			if (fs_walk_chown(fd, from, uid, gid, depth + 1, why,
			    len) == -1) {
				ret = -1;
				break;
			}
		} else if (fs_chown_one(dirfd(d), de->d_name, from, uid, gid,
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
	return (fs_walk_chown(dfd, from, uid, gid, 0, why, len));
}
