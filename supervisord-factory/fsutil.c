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
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "fstree.h"
#include "log.h"

/*
 * Give a tree that from made to uid:gid, refusing anything from did not
 * make and any hard link; why says what stopped it.
 */
int
fs_chown_tree(const char *path, uid_t from, uid_t uid, gid_t gid, char *why,
    size_t len)
{
	int	 fd;

	why[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1) {
		snprintf(why, len, "%s", strerror(errno));
		return (-1);
	}
	return (fs_chown_fd(fd, from, uid, gid, why, len));
}

static const char *
fs_typename(mode_t m)
{
	if (S_ISFIFO(m))
		return ("a FIFO");
	if (S_ISDIR(m))
		return ("a directory");
	if (S_ISLNK(m))
		return ("a symbolic link");
	if (S_ISSOCK(m))
		return ("a socket");
	if (S_ISCHR(m))
		return ("a character device");
	if (S_ISBLK(m))
		return ("a block device");
	return ("of an unknown type");
}

/*
 * Open for reading a file a child or an agent could have put in place:
 * never blocking (a FIFO), never through a symbolic link, never opening
 * what is not a regular file (opening a device has effects of its own),
 * only one owner made, with no second name.  The file is looked at
 * through an O_PATH descriptor, which opens nothing, and then that very
 * inode is opened.  -1 and a reason otherwise.
 */
int
fs_open_untrusted(const char *path, uid_t owner, char *why, size_t len)
{
	struct stat	 sb, sb2;
	char		 proc[64];
	int		 pfd, fd, fl;

	if ((pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(why, len, "%s", strerror(errno));
		return (-1);
	}
	if (fstat(pfd, &sb) == -1) {
		snprintf(why, len, "%s", strerror(errno));
		close(pfd);
		return (-1);
	}
	if (!S_ISREG(sb.st_mode) || sb.st_uid != owner ||
	    sb.st_nlink != 1) {
		if (!S_ISREG(sb.st_mode))
			snprintf(why, len, "not a regular file: %s",
			    fs_typename(sb.st_mode));
		else if (sb.st_uid != owner)
			snprintf(why, len, "owned by uid %u, not %u",
			    (unsigned)sb.st_uid, (unsigned)owner);
		else
			snprintf(why, len, "%ju links, not one",
			    (uintmax_t)sb.st_nlink);
		close(pfd);
		errno = EPERM;
		return (-1);
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(pfd);
	if (fd == -1 || fstat(fd, &sb2) == -1 || sb2.st_dev != sb.st_dev ||
	    sb2.st_ino != sb.st_ino || (fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		snprintf(why, len, "reopen: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * A directory of ours for a child: made, or found, then owned and
 * moded through a descriptor, never by a path that could be a link.
 */
int
fs_mkdir_owned(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	int	 fd, saved;

	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return (-1);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1)
		return (-1);
	if (fchown(fd, uid, gid) == -1 || fchmod(fd, mode) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	close(fd);
	return (0);
}

/* The real uid of pid from /proc/PID/status, or -1. */
static long
pid_ruid(pid_t pid)
{
	char	 path[64], buf[1024], *p;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	/* "Uid:" comes early, after the name (at most 64 bytes, escaped). */
	if ((p = strstr(buf, "\nUid:")) == NULL)
		return (-1);
	return (strtol(p + 5, NULL, 10));
}

/*
 * Kill every process whose real uid is uid or uid2 (0: none), by exact
 * pid, and say how many there were: one pass over /proc for an
 * attempt's two uids (the caller looks again later, on a timer, while
 * any were found).  Only attempt uids are ever passed: they run
 * nothing but sandboxes.  Each is signalled through a pidfd after its
 * uids were read again (pid_kill_uid), so a pid reused between the
 * scan and the signal is not hit.
 */
int
uid_kill_all(uid_t uid, uid_t uid2)
{
	DIR		*d;
	struct dirent	*de;
	long		 ruid;
	uid_t		 seen;
	int		 found = 0;
	pid_t		 pid;

	if (uid == 0 && uid2 == 0)
		return (0);
	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if ((pid = (pid_t)strtol(de->d_name, NULL, 10)) <= 1)
			continue;
		if ((ruid = pid_ruid(pid)) <= 0 ||
		    ((uid_t)ruid != uid && (uid_t)ruid != uid2))
			continue;
		found++;
		(void)pid_kill_uid(pid, (uid_t)ruid, &seen);
	}
	closedir(d);
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
