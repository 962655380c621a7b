/*
 * The toolchain digest (toolchain.h).  Paths are resolved by hand,
 * one component at a time beneath the root's fd, as openat2(2)'s
 * RESOLVE_IN_ROOT would: ".." stops at the root, an absolute link
 * starts again from it, and at most TC_MAXLINKS links are followed.
 * Hand-made because the verifier's seccomp filter answers openat2
 * with ENOSYS (its flags sit behind a pointer).  Nothing is opened for
 * reading but a regular file, so no FIFO blocks and no device node of
 * an image is ever opened.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolchain.h"

#define TC_MAXLINKS	40		/* as the kernel's MAXSYMLINKS */
#define TC_MAXDEPTH	128		/* directories deep */
/*
 * Bytes hashed for one digest, all files together: the parent hashes
 * at submission, in its event loop (about 0.8 s at this bound).
 */
#define TC_MAXBYTES	(1024LL * 1024 * 1024)

struct tcwalk {
	int	 fds[TC_MAXDEPTH];	/* fds[0] is the root, not ours */
	int	 depth;
	int	 links;
};

static void
tc_reset(struct tcwalk *w)
{
	while (w->depth > 0)
		close(w->fds[w->depth--]);
}

/*
 * Walk rel from the current directory; the last component's name in
 * last (not opened).  0, or -1 with errno.
 */
static int
tc_walk(struct tcwalk *w, const char *rel, char *last, size_t lastlen,
    int final)
{
	char		 buf[PATH_MAX], name[NAME_MAX + 1], target[PATH_MAX];
	char		*p, *q;
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	if (strlcpy(buf, rel, sizeof(buf)) >= sizeof(buf))
		return (errno = ENAMETOOLONG, -1);
	if (buf[0] == '/')
		tc_reset(w);
	for (p = buf; ; p = q + 1) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		q = strchrnul(p, '/');
		if ((size_t)(q - p) > NAME_MAX)
			return (errno = ENAMETOOLONG, -1);
		memcpy(name, p, q - p);
		name[q - p] = '\0';
		if (strcmp(name, ".") == 0)
			goto next;
		if (strcmp(name, "..") == 0) {
			if (w->depth > 0)
				close(w->fds[w->depth--]);
			goto next;
		}
		/* The last component of the path asked for: the caller's. */
		if (final && q[strspn(q, "/")] == '\0') {
			if (fstatat(w->fds[w->depth], name, &st,
			    AT_SYMLINK_NOFOLLOW) == -1)
				return (-1);
			if (!S_ISLNK(st.st_mode)) {
				strlcpy(last, name, lastlen);
				return (0);
			}
		}
		if ((fd = openat(w->fds[w->depth], name, O_PATH | O_NOFOLLOW |
		    O_CLOEXEC)) == -1)
			return (-1);
		if (fstat(fd, &st) == -1) {
			close(fd);
			return (-1);
		}
		if (S_ISLNK(st.st_mode)) {
			n = readlinkat(fd, "", target, sizeof(target) - 1);
			close(fd);
			if (n <= 0 || ++w->links > TC_MAXLINKS)
				return (errno = n <= 0 ? EINVAL : ELOOP, -1);
			target[n] = '\0';
			/* What is left of the path follows the link's. */
			if (strlcat(target, q, sizeof(target)) >=
			    sizeof(target))
				return (errno = ENAMETOOLONG, -1);
			return (tc_walk(w, target, last, lastlen, final));
		}
		if (!S_ISDIR(st.st_mode) || w->depth + 1 >= TC_MAXDEPTH) {
			close(fd);
			return (errno = S_ISDIR(st.st_mode) ? ELOOP : ENOTDIR,
			    -1);
		}
		w->fds[++w->depth] = fd;
 next:
		if (*q == '\0')
			break;
	}
	/* Ended on a directory (or the root itself): not a file. */
	return (errno = EISDIR, -1);
}

/* The file at path beneath rootfd, open for reading, regular. */
static int
tc_open(int rootfd, const char *path)
{
	struct tcwalk	 w;
	struct stat	 st;
	char		 last[NAME_MAX + 1];
	int		 fd = -1, saved;

	memset(&w, 0, sizeof(w));
	w.fds[0] = rootfd;
	if (tc_walk(&w, path, last, sizeof(last), 1) == 0) {
		fd = openat(w.fds[w.depth], last, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd != -1 && (fstat(fd, &st) == -1 ||
		    !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
			errno = EINVAL;
		}
	}
	saved = errno;
	tc_reset(&w);
	errno = saved;
	return (fd);
}

static int
tc_hashfd(int fd, char hex[SHA256_HEX_LEN + 1])
{
	struct sha256_ctx	 ctx;
	uint8_t			 md[SHA256_LEN], buf[65536];
	ssize_t			 n;

	if (sha256_init(&ctx) == -1)
		return (-1);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&ctx, buf, n);
	if (n == -1) {
		sha256_abort(&ctx);
		return (-1);
	}
	if (sha256_final(&ctx, md) == -1)
		return (-1);
	hex_encode(md, sizeof(md), hex);
	return (0);
}

int
toolchain_digest(int rootfd, char *const *paths,
    char out[SHA256_HEX_LEN + 1], char *err, size_t errlen)
{
	struct sha256_ctx	 ctx;
	struct stat		 st;
	uint8_t			 md[SHA256_LEN];
	char			 hex[SHA256_HEX_LEN + 1];
	long long		 total = 0;
	size_t			 i;
	int			 fd;

	if (sha256_init(&ctx) == -1) {
		snprintf(err, errlen, "toolchain: sha256");
		return (-1);
	}
	for (i = 0; paths != NULL && paths[i] != NULL; i++) {
		if ((fd = tc_open(rootfd, paths[i])) == -1) {
			snprintf(err, errlen, "toolchain: %s: %s in the image",
			    paths[i], errno == EINVAL || errno == EISDIR ?
			    "not a regular file" : strerror(errno));
			sha256_abort(&ctx);
			return (-1);
		}
		if (fstat(fd, &st) == -1 || (total += st.st_size) >
		    TC_MAXBYTES) {
			snprintf(err, errlen, "toolchain: %s: more than %lld "
			    "bytes in all", paths[i], TC_MAXBYTES);
			close(fd);
			sha256_abort(&ctx);
			return (-1);
		}
		if (tc_hashfd(fd, hex) == -1) {
			snprintf(err, errlen, "toolchain: %s: read: %s",
			    paths[i], strerror(errno));
			close(fd);
			sha256_abort(&ctx);
			return (-1);
		}
		close(fd);
		sha256_update(&ctx, paths[i], strlen(paths[i]) + 1);
		sha256_update(&ctx, hex, SHA256_HEX_LEN);
		sha256_update(&ctx, "\n", 1);
	}
	if (sha256_final(&ctx, md) == -1) {
		snprintf(err, errlen, "toolchain: sha256");
		return (-1);
	}
	hex_encode(md, sizeof(md), out);
	return (0);
}
