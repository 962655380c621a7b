/*
 * open_beneath and open_inroot (beneath.h): openat2(2) where the
 * kernel and every filter above us let it through, else one walker
 * that opens a path one component at a time.  The walker holds at
 * most two descriptors for a path beneath (any depth works) and one
 * per directory level, at most BN_MAXDEPTH, for a path in root (".."
 * returns to a descriptor it holds, never to what ".." names now: a
 * directory renamed while we stand in it cannot lead us out).
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "log.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID	0x00001000U
#endif

#define BN_MAXLINKS	40		/* as the kernel's MAXSYMLINKS */
#define BN_MAXDEPTH	128		/* directories held in root */

#define BN_INROOT	0x100		/* the walker's own: links followed */

/* openat2 answered ENOSYS once: every later path is walked. */
static int	 bn_walking;

struct bnwalk {
	int		 fds[BN_MAXDEPTH];	/* fds[0] is the root, not ours */
	int		 depth;
	int		 links;
	int		 how;
	uint64_t	 mnt;			/* the root's, BENEATH_XDEV */
};

static void
bn_reset(struct bnwalk *w)
{
	while (w->depth > 0)
		close(w->fds[w->depth--]);
}

static int
bn_mnt(int fd, uint64_t *mnt)
{
	struct statx	 stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID,
	    &stx) == -1)
		return (-1);
	if ((stx.stx_mask & STATX_MNT_ID) == 0)
		return (errno = ENOSYS, -1);	/* before 5.8 */
	*mnt = stx.stx_mnt_id;
	return (0);
}

/* 0 if fd is on the root's mount, else -1: EXDEV, or why not known. */
static int
bn_samemnt(struct bnwalk *w, int fd)
{
	uint64_t	 mnt;

	if (bn_mnt(fd, &mnt) == -1)
		return (-1);
	if (mnt != w->mnt)
		return (errno = EXDEV, -1);
	return (0);
}

/* fd (ours) as the next directory down; closed on failure. */
static int
bn_push(struct bnwalk *w, int fd)
{
	if ((w->how & BENEATH_XDEV) && bn_samemnt(w, fd) == -1) {
		close(fd);
		return (-1);
	}
	/* Beneath, nothing is ever gone back to: one level is enough. */
	if ((w->how & BN_INROOT) == 0 && w->depth > 0)
		close(w->fds[w->depth--]);
	if (w->depth + 1 >= BN_MAXDEPTH) {
		close(fd);
		return (errno = ELOOP, -1);
	}
	w->fds[++w->depth] = fd;
	return (0);
}

/*
 * A link met on the way (fd, closed here), in root: what is left of the
 * path (rest) now follows the link's text, in buf.
 */
static int
bn_follow(struct bnwalk *w, int fd, const char *rest, char *buf,
    size_t buflen)
{
	char	 target[PATH_MAX];
	ssize_t	 n;

	n = readlinkat(fd, "", target, sizeof(target) - 1);
	close(fd);
	if (n <= 0 || ++w->links > BN_MAXLINKS)
		return (errno = n <= 0 ? EINVAL : ELOOP, -1);
	target[n] = '\0';
	if (strlcat(target, rest, sizeof(target)) >= sizeof(target) ||
	    strlcpy(buf, target, buflen) >= buflen)
		return (errno = ENAMETOOLONG, -1);
	if (buf[0] == '/')
		bn_reset(w);
	return (0);
}

/*
 * Walk path from the root; the last component's name in last, not
 * opened: "." where the path ends on a directory.  0, or -1 and errno.
 */
static int
bn_walk(struct bnwalk *w, const char *path, char last[NAME_MAX + 1])
{
	char		 buf[PATH_MAX];
	char		*p, *q;
	struct stat	 st;
	size_t		 len;
	int		 fd, inroot = w->how & BN_INROOT;

	if (path[0] == '\0')
		return (errno = ENOENT, -1);
	if (strlcpy(buf, path, sizeof(buf)) >= sizeof(buf))
		return (errno = ENAMETOOLONG, -1);
	if (buf[0] == '/' && !inroot)
		return (errno = EXDEV, -1);
 again:
	for (p = buf; ; p = q + 1) {
		p += strspn(p, "/");
		if (*p == '\0')
			break;
		q = strchrnul(p, '/');
		if ((len = q - p) > NAME_MAX)
			return (errno = ENAMETOOLONG, -1);
		memcpy(last, p, len);
		last[len] = '\0';
		if (strcmp(last, ".") == 0)
			goto next;
		if (strcmp(last, "..") == 0) {
			if (!inroot)
				return (errno = EXDEV, -1);
			if (w->depth > 0)
				close(w->fds[w->depth--]);
			goto next;
		}
		/* The last component: the caller opens it. */
		if (q[strspn(q, "/")] == '\0') {
			if (!inroot)
				return (0);
			if (fstatat(w->fds[w->depth], last, &st,
			    AT_SYMLINK_NOFOLLOW) == -1)
				return (-1);
			if (!S_ISLNK(st.st_mode))
				return (0);
		}
		if ((fd = openat(w->fds[w->depth], last, O_PATH | O_NOFOLLOW |
		    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
			if (fd != -1)
				close(fd);
			return (-1);
		}
		if (S_ISLNK(st.st_mode)) {
			if (!inroot) {
				close(fd);
				return (errno = ELOOP, -1);
			}
			if (bn_follow(w, fd, q, buf, sizeof(buf)) == -1)
				return (-1);
			goto again;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			return (errno = ENOTDIR, -1);
		}
		if (bn_push(w, fd) == -1)
			return (-1);
 next:
		if (*q == '\0')
			break;
	}
	strlcpy(last, ".", NAME_MAX + 1);
	return (0);
}

/* The last component, from where the walk ended. */
static int
bn_openlast(struct bnwalk *w, const char *last, int flags)
{
	struct stat	 st;
	int		 fd, saved;

	fd = openat(w->fds[w->depth], last, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == ENOTDIR && fstatat(w->fds[w->depth], last,
	    &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		errno = ELOOP;		/* O_DIRECTORY met a link */
	if (fd != -1 && (w->how & BENEATH_XDEV) && bn_samemnt(w, fd) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	return (fd);
}

static int
bn_open(int rootfd, const char *path, int flags, int how)
{
	struct bnwalk	 w;
	char		 last[NAME_MAX + 1];
	int		 fd = -1, saved;

	memset(&w, 0, sizeof(w));
	w.fds[0] = rootfd;
	w.how = how;
	if ((how & BENEATH_XDEV) && bn_mnt(rootfd, &w.mnt) == -1)
		return (-1);
	/* "dir/" must be a directory, as the kernel has it. */
	if (path[0] != '\0' && path[strlen(path) - 1] == '/')
		flags |= O_DIRECTORY;
	if (bn_walk(&w, path, last) == 0)
		fd = bn_openlast(&w, last, flags);
	saved = errno;
	bn_reset(&w);
	errno = saved;
	return (fd);
}

/* 1 if a component of path is "..". */
static int
bn_dotdot(const char *path)
{
	const char	*p = path;

	while ((p = strstr(p, "..")) != NULL) {
		if ((p == path || p[-1] == '/') && (p[2] == '\0' ||
		    p[2] == '/'))
			return (1);
		p += 2;
	}
	return (0);
}

int
open_beneath_how(int rootfd, const char *path, int flags, int how)
{
	struct open_how	 oh;
	int		 fd;

	how &= BENEATH_XDEV;
	if (bn_dotdot(path))
		return (errno = EXDEV, -1);
	if (!bn_walking) {
		memset(&oh, 0, sizeof(oh));
		oh.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
		oh.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		    RESOLVE_NO_MAGICLINKS;
		if (how & BENEATH_XDEV)
			oh.resolve |= RESOLVE_NO_XDEV;
		fd = (int)syscall(SYS_openat2, rootfd, path, &oh, sizeof(oh));
		if (fd != -1 || errno != ENOSYS)
			return (fd);
		/* Refused whole: by this kernel or a filter above us. */
		bn_walking = 1;
		log_info("openat2: %s; paths beneath a directory are walked "
		    "one component at a time", strerror(ENOSYS));
	}
	return (bn_open(rootfd, path, flags, how));
}

int
open_beneath(int rootfd, const char *path, int flags)
{
	return (open_beneath_how(rootfd, path, flags, 0));
}

int
open_inroot(int rootfd, const char *path, int flags)
{
	return (bn_open(rootfd, path, flags, BN_INROOT));
}

int
beneath_walks(void)
{
	return (bn_walking);
}

void
beneath_walk(void)
{
	bn_walking = 1;
}
