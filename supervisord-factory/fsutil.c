/*
 * Walks over attempt trees, which the agent controlled: every step is
 * relative to an open directory fd and never follows a symlink, so a
 * link planted by the agent cannot redirect root's chown or unlink.
 */
#include <sys/types.h>
#include <sys/pidfd.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "log.h"

#define FS_MAXDEPTH	256

static int
fs_walk_chown(int dfd, uid_t uid, gid_t gid, int depth)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 sb;
	int		 fd, ret = 0;

	if (depth > FS_MAXDEPTH) {
		errno = ELOOP;
		close(dfd);
		return (-1);
	}
	if (fchown(dfd, uid, gid) == -1) {
		close(dfd);
		return (-1);
	}
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
		    -1) {
			ret = -1;
			break;
		}
		if (S_ISDIR(sb.st_mode)) {
			if ((fd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
			    fs_walk_chown(fd, uid, gid, depth + 1) == -1) {
				ret = -1;
				break;
			}
		} else if (fchownat(dirfd(d), de->d_name, uid, gid,
		    AT_SYMLINK_NOFOLLOW) == -1) {
			ret = -1;
			break;
		}
	}
	closedir(d);
	return (ret);
}

int
fs_chown_tree(const char *path, uid_t uid, gid_t gid)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (-1);
	return (fs_walk_chown(fd, uid, gid, 0));
}

static int
fs_walk_remove(int dfd, int depth)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 sb;
	int		 fd, ret = 0;

	if (depth > FS_MAXDEPTH) {
		close(dfd);
		errno = ELOOP;
		return (-1);
	}
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ==
		    -1) {
			if (errno == ENOENT)
				continue;
			ret = -1;
			continue;
		}
		if (S_ISDIR(sb.st_mode)) {
			if ((fd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
			    fs_walk_remove(fd, depth + 1) == -1 ||
			    unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == -1)
				ret = -1;
		} else if (unlinkat(dirfd(d), de->d_name, 0) == -1 &&
		    errno != ENOENT)
			ret = -1;
	}
	closedir(d);
	return (ret);
}

/* rm -rf without following links; ENOENT is success. */
int
fs_remove_tree(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return (0);
		if (errno == ENOTDIR || errno == ELOOP)
			return (unlink(path));
		return (-1);
	}
	if (fs_walk_remove(fd, 0) == -1)
		return (-1);
	if (rmdir(path) == -1 && errno != ENOENT)
		return (-1);
	return (0);
}

int
fs_mkdir_owned(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return (-1);
	if (chown(path, uid, gid) == -1 || chmod(path, mode) == -1)
		return (-1);
	return (0);
}

/*
 * Kill every process whose real uid is uid, by exact pid, and say how
 * many were still there.  Only attempt uids are ever passed: they run
 * nothing but sandboxes.
 */
int
uid_kill_all(uid_t uid)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[64], line[256];
	FILE		*f;
	unsigned long	 ruid;
	int		 found = 0, pass;
	pid_t		 pid;

	for (pass = 0; pass < 3; pass++) {
		found = 0;
		if ((d = opendir("/proc")) == NULL)
			return (-1);
		while ((de = readdir(d)) != NULL) {
			if ((pid = (pid_t)strtol(de->d_name, NULL, 10)) <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/status",
			    (int)pid);
			if ((f = fopen(path, "r")) == NULL)
				continue;
			ruid = (unsigned long)-1;
			while (fgets(line, sizeof(line), f) != NULL)
				if (sscanf(line, "Uid: %lu", &ruid) == 1)
					break;
			fclose(f);
			if (ruid != uid)
				continue;
			found++;
			kill(pid, SIGKILL);
		}
		closedir(d);
		if (found == 0)
			return (0);
		usleep(20 * 1000);
	}
	return (found);
}

/*
 * The real, effective, saved and file system uids of pid, from
 * /proc/PID/status; -1 if it cannot be read (gone: ESRCH).
 */
static int
pid_uids(pid_t pid, uid_t uids[4])
{
	char		 path[64], buf[4096], *p;
	unsigned long	 u[4];
	ssize_t		 n;
	int		 fd, saved;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			errno = ESRCH;
		return (-1);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	saved = errno;
	close(fd);
	if (n == -1) {
		errno = saved;
		return (-1);
	}
	buf[n] = '\0';
	if ((p = strstr(buf, "\nUid:")) == NULL ||
	    sscanf(p + 5, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) !=
	    4) {
		errno = EINVAL;
		return (-1);
	}
	for (n = 0; n < 4; n++)
		uids[n] = (uid_t)u[n];
	return (0);
}

/*
 * SIGKILL pid only if it is a process whose four uids are all uid.
 * The process is pinned with a pidfd before its uids are read, and
 * the signal goes to the pidfd: if the pid was reused meanwhile, the
 * uids read may be another process's, but the signal can only reach
 * the one pinned, which is then gone (ESRCH).  0 if killed or already
 * gone; -1 with errno EPERM (*found is the real uid seen) or another
 * error.
 */
int
pid_kill_uid(pid_t pid, uid_t uid, uid_t *found)
{
	uid_t	 uids[4];
	int	 pfd, i, saved;

	*found = (uid_t)-1;
	if (pid < 2) {
		errno = EINVAL;
		return (-1);
	}
	if ((pfd = pidfd_open(pid, 0)) == -1)
		return (errno == ESRCH ? 0 : -1);
	if (pid_uids(pid, uids) == -1) {
		saved = errno;
		close(pfd);
		errno = saved;
		return (saved == ESRCH ? 0 : -1);
	}
	*found = uids[0];
	for (i = 0; i < 4; i++)
		if (uids[i] != uid) {
			close(pfd);
			errno = EPERM;
			return (-1);
		}
	if (pidfd_send_signal(pfd, SIGKILL, NULL, 0) == -1 &&
	    errno != ESRCH) {
		saved = errno;
		close(pfd);
		errno = saved;
		return (-1);
	}
	close(pfd);
	return (0);
}
