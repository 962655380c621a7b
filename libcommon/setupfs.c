/*
 * The setup store's file system walks: what the store helper copies
 * and hashes, the seal the sealer takes, what a helper removes of a
 * refused copy (setupfs.h).  Everything by descriptor, never following
 * a link; the upper walked here is hostile.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/capability.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "conf.h"
#include "esc.h"
#include "pledge.h"
#include "setupfs.h"

/* One length-prefixed field of the key: 8 bytes big-endian, then it. */
int
setup_put(struct sha256_ctx *c, const void *p, size_t len)
{
	uint8_t		 be[8];
	uint64_t	 n = len;
	int		 i;

	for (i = 7; i >= 0; i--) {
		be[i] = n & 0xff;
		n >>= 8;
	}
	if (sha256_update(c, be, sizeof(be)) == -1 ||
	    (len > 0 && sha256_update(c, p, len) == -1))
		return (-1);
	return (0);
}

int
setup_putstr(struct sha256_ctx *c, const char *s)
{
	return (setup_put(c, s, strlen(s)));
}

/*
 * The mode an entry has in the store: read-only for everyone, and
 * executable where it was.  What the digest records, so a re-hash of
 * the store gives the digest of the copy.
 */
static mode_t
setup_mode(mode_t m)
{
	if (S_ISDIR(m))
		return (0555);
	if (S_ISLNK(m))
		return (0777);
	return ((m & 0111) != 0 ? 0555 : 0444);
}

/*
 * One entry of the canonical form, into the digest: its path, type,
 * mode, and the size and sha256 of a file's content or a link's target.
 */
static int
setup_digest_one(struct setup_walk *w, const struct stat *st,
    const char *what)
{
	char	 rec[PATH_MAX + 128];
	int	 n;

	n = snprintf(rec, sizeof(rec), "%s%c%c%c%o%c%llu%c%s", w->path, 0,
	    S_ISDIR(st->st_mode) ? 'd' : S_ISLNK(st->st_mode) ? 'l' : 'f', 0,
	    (unsigned)setup_mode(st->st_mode), 0,
	    (unsigned long long)(S_ISREG(st->st_mode) ? st->st_size : 0), 0,
	    what);
	if (n < 0 || (size_t)n >= sizeof(rec))
		return (-1);
	return (setup_put(&w->ctx, rec, (size_t)n));
}

static int
setup_namecmp(const void *a, const void *b)
{
	return (strcmp(*(char * const *)a, *(char * const *)b));
}

/* The names of an open directory, sorted; NULL-terminated. */
char **
setup_names(int dfd, size_t max, size_t *np)
{
	DIR		*d;
	struct dirent	*de;
	char		**v = NULL, **nv;
	size_t		 n = 0;
	int		 fd;

	*np = 0;
	if ((fd = dup(dfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return (NULL);
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n >= max) {
			errno = EFBIG;
			goto fail;
		}
		if ((nv = reallocarray(v, n + 2, sizeof(*v))) == NULL)
			goto fail;
		v = nv;
		if ((v[n] = strdup(de->d_name)) == NULL)
			goto fail;
		v[++n] = NULL;
	}
	closedir(d);
	if (v == NULL && (v = calloc(1, sizeof(*v))) == NULL)
		return (NULL);
	qsort(v, n, sizeof(*v), setup_namecmp);
	*np = n;
	return (v);
 fail:
	closedir(d);
	while (n > 0)
		free(v[--n]);
	free(v);
	return (NULL);
}

void
setup_freenames(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* At most len bytes of hostile s, escaped (esc.h): printable ASCII. */
static const char *
setup_esc(const char *s, size_t len, char *buf, size_t buflen)
{
	size_t	 n = strlen(s);

	if (n > len)
		n = len;
	if (n > (buflen - 1) / ESC_MAXEXPAND)
		n = (buflen - 1) / ESC_MAXEXPAND;
	if (esc_encode(s, n, buf, buflen) == -1)
		strlcpy(buf, "?", buflen);
	return (buf);
}

/* w's path for a message: it is the setup's, hostile. */
static const char *
setup_wpath(struct setup_walk *w)
{
	return (setup_esc(w->path, 96, w->epath, sizeof(w->epath)));
}

/*
 * A link's target stays inside its output, resolved as the kernel
 * would against the tree being stored: from the link's directory (its
 * path in w->path, below w->root), component by component, never above
 * the output (w->floor components) and through no link of the tree,
 * since a component that is a link is no directory its ".." could be
 * counted in ("self -> .", "up -> self/.." leaves).  The last
 * component may be a link: that one is judged on its own.  depth < 0:
 * the output itself, which may not be a link.  0 with the link passed
 * through, if any, in via.
 */
static int
setup_link_inside(struct setup_walk *w, const char *target, int depth,
    char *via, size_t vialen)
{
	struct stat	 st;
	const char	*p, *end;
	char		 cur[PATH_MAX], *slash;
	size_t		 len, clen;
	int		 ncomp = 1;

	via[0] = '\0';
	if (depth < 0 || target[0] == '/' || target[0] == '\0')
		return (0);
	/* The link's directory, and how deep it is below the upper. */
	strlcpy(cur, w->path, sizeof(cur));
	if ((slash = strrchr(cur, '/')) == NULL)
		return (0);
	*slash = '\0';
	for (p = cur; (p = strchr(p, '/')) != NULL; p++)
		ncomp++;
	for (p = target; *p != '\0'; p = *end == '\0' ? end : end + 1) {
		if ((end = strchr(p, '/')) == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len == 0 || (len == 1 && p[0] == '.'))
			continue;
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (ncomp <= w->floor)
				return (0);
			*strrchr(cur, '/') = '\0';
			ncomp--;
			continue;
		}
		clen = strlen(cur);
		if (clen + 1 + len >= sizeof(cur))
			return (0);
		cur[clen] = '/';
		memcpy(cur + clen + 1, p, len);
		cur[clen + 1 + len] = '\0';
		ncomp++;
		/* Only the last component may be a link. */
		if (end[strspn(end, "/")] == '\0')
			break;
		if (fstatat(w->root, cur, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) {
			strlcpy(via, cur, vialen);
			return (0);
		}
	}
	return (1);
}

static int	setup_copy_dir(struct setup_walk *, int, int, int);

/*
 * The file fd is the regular file st described (by fstatat, by name)
 * and is no longer: -1 if not.  st takes fd's size.
 */
static int
setup_same_file(int fd, struct stat *st)
{
	struct stat	 sb;

	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_dev != st->st_dev || sb.st_ino != st->st_ino ||
	    sb.st_size > st->st_size)
		return (-1);
	st->st_size = sb.st_size;
	return (0);
}

/*
 * size bytes of src, exactly, into dst (when not -1) and hashed into
 * hex: 0; 1 when src had fewer or more (it changed: a hostile tree's
 * file); -1 with errno.  Never more than size is read.
 */
int
setup_copy_bounded(int src, int dst, off_t size,
    char hex[SHA256_HEX_LEN + 1])
{
	struct sha256_ctx	 c;
	uint8_t			 buf[65536], md[SHA256_LEN], extra;
	ssize_t			 n = 0;
	off_t			 left = size;

	if (sha256_init(&c) == -1)
		return (-1);
	while (left > 0) {
		n = read(src, buf, left < (off_t)sizeof(buf) ? (size_t)left :
		    sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((dst != -1 && write(dst, buf, (size_t)n) != n) ||
		    sha256_update(&c, buf, (size_t)n) == -1) {
			sha256_abort(&c);
			return (-1);
		}
		left -= n;
	}
	if (n == -1) {
		sha256_abort(&c);
		return (-1);
	}
	/* Shorter than it said, or longer: one byte more is looked for. */
	if (left != 0 || read(src, &extra, 1) != 0) {
		sha256_abort(&c);
		return (1);
	}
	if (sha256_final(&c, md) == -1)
		return (-1);
	hex_encode(md, sizeof(md), hex);
	return (0);
}

/*
 * One entry of src (a hostile tree) named name, at depth below its
 * output, copied into dst (ours) when dst is not -1, and digested.
 */
static int
setup_copy_ent(struct setup_walk *w, int src, int dst, const char *name,
    int depth)
{
	struct stat	 st;
	char		 target[PATH_MAX], hex[SHA256_HEX_LEN + 1];
	char		 via[PATH_MAX], et[260], ev[400];
	ssize_t		 n, len;
	off_t		 looked;
	size_t		 plen = strlen(w->path);
	int		 sfd = -1, dfd = -1, ret = -1;

	if (plen + strlen(name) + 2 >= sizeof(w->path)) {
		snprintf(w->err, w->errlen, "%s: path too long",
		    setup_wpath(w));
		return (-1);
	}
	if (plen > 0)
		strlcat(w->path, "/", sizeof(w->path));
	strlcat(w->path, name, sizeof(w->path));
	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		snprintf(w->err, w->errlen, "%s: %s", setup_wpath(w),
		    strerror(errno));
		goto done;
	}
	if (++w->files > SETUP_MAXFILES) {
		snprintf(w->err, w->errlen, "more than %d files",
		    SETUP_MAXFILES);
		goto done;
	}
	if ((st.st_mode & (S_ISUID | S_ISGID)) != 0) {
		snprintf(w->err, w->errlen, "%s: a setuid or setgid bit, "
		    "refused", setup_wpath(w));
		goto done;
	}
	if (S_ISDIR(st.st_mode)) {
		if ((sfd = openat(src, name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1) {
			snprintf(w->err, w->errlen, "%s: %s", setup_wpath(w), strerror(errno));
			goto done;
		}
		if (setup_digest_one(w, &st, "") == -1)
			goto hash;
		if (dst != -1 && (mkdirat(dst, name, 0755) == -1 ||
		    (dfd = openat(dst, name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1)) {
			snprintf(w->err, w->errlen, "store %s: %s",
			    setup_wpath(w), strerror(errno));
			goto done;
		}
		ret = setup_copy_dir(w, sfd, dfd, depth + 1);
		if (ret == 0 && dfd != -1 &&
		    fchmod(dfd, setup_mode(st.st_mode)) == -1)
			ret = -1;
		goto done;
	}
	if (S_ISLNK(st.st_mode)) {
		if ((len = readlinkat(src, name, target, sizeof(target) - 1))
		    == -1) {
			snprintf(w->err, w->errlen, "%s: %s", setup_wpath(w), strerror(errno));
			goto done;
		}
		target[len] = '\0';
		if (!setup_link_inside(w, target, depth, via, sizeof(via))) {
			snprintf(w->err, w->errlen, "%s: a symbolic link to "
			    "\"%s\" leaves its output%s%s%s, refused",
			    setup_wpath(w),
			    setup_esc(target, 64, et, sizeof(et)),
			    via[0] != '\0' ? " (through " : "",
			    setup_esc(via, 96, ev, sizeof(ev)),
			    via[0] != '\0' ? ")" : "");
			goto done;
		}
		if (setup_digest_one(w, &st, target) == -1)
			goto hash;
		if (dst != -1 && symlinkat(target, dst, name) == -1) {
			snprintf(w->err, w->errlen, "store %s: %s",
			    setup_wpath(w), strerror(errno));
			goto done;
		}
		ret = 0;
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(w->err, w->errlen, "%s: %s, refused", setup_wpath(w),
		    S_ISCHR(st.st_mode) && st.st_rdev == 0 ?
		    "a deletion (whiteout)" : S_ISCHR(st.st_mode) ||
		    S_ISBLK(st.st_mode) ? "a device node" : S_ISFIFO(st.st_mode) ?
		    "a FIFO" : "a socket");
		goto done;
	}
	w->bytes += (uint64_t)st.st_size;
	if (w->bytes > w->maxbytes) {
		snprintf(w->err, w->errlen, "more than %llu bytes",
		    (unsigned long long)w->maxbytes);
		goto done;
	}
	if ((sfd = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NOCTTY | O_NONBLOCK)) == -1) {
		snprintf(w->err, w->errlen, "%s: %s", setup_wpath(w),
		    strerror(errno));
		goto done;
	}
	/*
	 * What was opened, looked at again: the name may have been
	 * swapped since the fstatat (for a FIFO, whose read would never
	 * end), or the file made longer.  The copy takes no more than the
	 * size looked at here, and all of it.
	 */
	looked = st.st_size;
	if (setup_same_file(sfd, &st) == -1) {
		snprintf(w->err, w->errlen, "%s: changed while it was stored, "
		    "refused", setup_wpath(w));
		goto done;
	}
	w->bytes -= (uint64_t)(looked - st.st_size);
	if (dst != -1 && (dfd = openat(dst, name, O_RDWR | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		snprintf(w->err, w->errlen, "store %s: %s", setup_wpath(w),
		    strerror(errno));
		goto done;
	}
	if ((n = setup_copy_bounded(sfd, dfd, st.st_size, hex)) != 0) {
		if (n == 1)
			snprintf(w->err, w->errlen, "%s: changed while it was "
			    "stored, refused", setup_wpath(w));
		else
			snprintf(w->err, w->errlen, "store %s: %s",
			    setup_wpath(w), strerror(errno));
		goto done;
	}
	if (dfd != -1 && (fchmod(dfd, setup_mode(st.st_mode)) == -1 ||
	    fsync(dfd) == -1 || lseek(dfd, 0, SEEK_SET) == -1)) {
		snprintf(w->err, w->errlen, "store %s: %s", setup_wpath(w),
		    strerror(errno));
		goto done;
	}
	/* The digest is of what the store holds, read back. */
	if ((dfd != -1 && sha256_fd(dfd, hex, NULL) == -1) ||
	    setup_digest_one(w, &st, hex) == -1)
		goto hash;
	ret = 0;
	goto done;
 hash:
	snprintf(w->err, w->errlen, "%s: sha256 failed", setup_wpath(w));
 done:
	if (sfd != -1)
		close(sfd);
	if (dfd != -1)
		close(dfd);
	w->path[plen] = '\0';
	return (ret);
}

static int
setup_copy_dir(struct setup_walk *w, int src, int dst, int depth)
{
	char	**names;
	size_t	 n, i;
	int	 ret = 0;

	if (depth > SETUP_MAXDEPTH) {
		snprintf(w->err, w->errlen, "%s: deeper than %d",
		    setup_wpath(w), SETUP_MAXDEPTH);
		return (-1);
	}
	if ((names = setup_names(src, SETUP_MAXFILES, &n)) == NULL) {
		if (errno == EFBIG)
			snprintf(w->err, w->errlen, "more than %d files",
			    SETUP_MAXFILES);
		else
			snprintf(w->err, w->errlen, "%s: %s", w->path[0] ?
			    setup_wpath(w) : ".", strerror(errno));
		return (-1);
	}
	for (i = 0; i < n && ret == 0; i++)
		ret = setup_copy_ent(w, src, dst, names[i], depth);
	setup_freenames(names);
	return (ret);
}

/*
 * The directories on the way to each output, in dst (an entry being
 * made); dfd of the output's parent in *out.  The parents are plain
 * directories of ours, 0755.
 */
static int
setup_mkparents(int dst, const char *output, int *out, const char **leaf)
{
	char	 buf[SETUP_PATHMAX], *p, *slash;
	int	 fd, nfd;

	strlcpy(buf, output, sizeof(buf));
	if ((fd = dup(dst)) == -1)
		return (-1);
	for (p = buf; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		*slash = '\0';
		if (mkdirat(fd, p, 0755) == -1 && errno != EEXIST)
			goto fail;
		if ((nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1)
			goto fail;
		close(fd);
		fd = nfd;
	}
	*leaf = output + (p - buf);
	*out = fd;
	return (0);
 fail:
	close(fd);
	return (-1);
}

/*
 * The directory at path below root, by descriptor, one component at a
 * time and never through a link (openat2(2)'s RESOLVE_NO_SYMLINKS,
 * which the store helper's seccomp filter answers with ENOSYS).  The
 * paths are outputs of a manifest: no "." or ".." component.
 */
int
setup_opendir(int root, const char *path)
{
	char	 buf[SETUP_PATHMAX], *p, *slash;
	int	 fd, nfd;

	if (strlcpy(buf, path, sizeof(buf)) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = dup(root)) == -1)
		return (-1);
	for (p = buf; p != NULL && *p != '\0'; p = slash) {
		if ((slash = strchr(p, '/')) != NULL)
			*slash++ = '\0';
		if ((nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1) {
			close(fd);
			return (-1);
		}
		close(fd);
		fd = nfd;
	}
	return (fd);
}

/*
 * The parent of an output inside a hostile upper, by descriptor: a
 * component that is not a directory there means nothing was written
 * below it (-1, ENOENT).
 */
static int
setup_openparent(int src, const char *output, int *out, const char **leaf)
{
	char	 buf[SETUP_PATHMAX], *slash;
	int	 fd;

	strlcpy(buf, output, sizeof(buf));
	if ((slash = strrchr(buf, '/')) == NULL) {
		*leaf = output;
		return ((*out = dup(src)) == -1 ? -1 : 0);
	}
	*slash = '\0';
	*leaf = output + (slash - buf) + 1;
	if ((fd = setup_opendir(src, buf)) == -1) {
		if (errno == ENOTDIR || errno == ELOOP)
			errno = ENOENT;
		return (-1);
	}
	*out = fd;
	return (0);
}

/*
 * Nothing in the upper but the outputs and the directories leading to
 * them: a write anywhere else is refused, whatever it was.
 */
int
setup_only_outputs(int dfd, const char *rel, char * const *outputs,
    char *err, size_t errlen, int depth)
{
	struct stat	 st;
	char		**names, path[SETUP_PATHMAX], epath[400];
	size_t		 n, i, j, plen;
	int		 fd, ret = 0, inside, above;

	if (depth > SETUP_MAXDEPTH || (names = setup_names(dfd,
	    SETUP_MAXFILES, &n)) == NULL) {
		snprintf(err, errlen, "setup: %s: cannot be read", rel[0] ?
		    setup_esc(rel, 96, epath, sizeof(epath)) : ".");
		return (-1);
	}
	for (i = 0; i < n && ret == 0; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel,
		    rel[0] ? "/" : "", names[i]) >= sizeof(path)) {
			snprintf(err, errlen, "setup: a path too long");
			ret = -1;
			break;
		}
		inside = above = 0;
		plen = strlen(path);
		for (j = 0; outputs[j] != NULL; j++) {
			if (strcmp(path, outputs[j]) == 0)
				inside = 1;
			else if (strncmp(outputs[j], path, plen) == 0 &&
			    outputs[j][plen] == '/')
				above = 1;
		}
		if (inside)
			continue;
		if (above && fstatat(dfd, names[i], &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    (fd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) != -1) {
			ret = setup_only_outputs(fd, path, outputs, err,
			    errlen, depth + 1);
			close(fd);
			continue;
		}
		snprintf(err, errlen, "setup wrote %s, outside its outputs: "
		    "refused", setup_esc(path, 96, epath, sizeof(epath)));
		ret = -1;
	}
	setup_freenames(names);
	return (ret);
}

/*
 * The outputs under src, in order, into w's digest (begun here) and,
 * when dst is not -1, copied into dst at their paths.  An output that
 * is not there is recorded by its name alone.
 */
int
setup_walk_outputs(struct setup_walk *w, int src, int dst,
    char * const *outs, char *err, size_t errlen)
{
	struct stat	 st;
	const char	*leaf, *dleaf, *p;
	size_t		 i;
	int		 sp, dp = -1, rc;

	if (sha256_init(&w->ctx) == -1 ||
	    setup_putstr(&w->ctx, SETUP_DIGTAG) == -1) {
		snprintf(err, errlen, "setup: sha256 failed");
		return (-1);
	}
	for (i = 0; outs[i] != NULL; i++) {
		if (setup_putstr(&w->ctx, outs[i]) == -1) {
			snprintf(err, errlen, "setup: sha256 failed");
			return (-1);
		}
		if (setup_openparent(src, outs[i], &sp, &leaf) == -1) {
			if (errno == ENOENT)
				continue;	/* not made: not kept */
			snprintf(err, errlen, "setup output %s: %s", outs[i],
			    strerror(errno));
			return (-1);
		}
		if (fstatat(sp, leaf, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			close(sp);
			continue;
		}
		if (dst != -1 && setup_mkparents(dst, outs[i], &dp,
		    &dleaf) == -1) {
			close(sp);
			snprintf(err, errlen, "setup: store %s: %s", outs[i],
			    strerror(errno));
			return (-1);
		}
		strlcpy(w->path, outs[i], sizeof(w->path));
		w->path[leaf - outs[i] > 0 ? leaf - outs[i] - 1 : 0] = '\0';
		w->root = src;
		for (w->floor = 1, p = outs[i]; (p = strchr(p, '/')) != NULL;
		    p++)
			w->floor++;
		rc = setup_copy_ent(w, sp, dp, leaf, -1);
		close(sp);
		if (dp != -1)
			close(dp);
		dp = -1;
		if (rc == -1) {
			snprintf(err, errlen, "setup output %s: %s", outs[i],
			    w->err);
			return (-1);
		}
	}
	return (0);
}

/*
 * The seal of an entry: the sha256 of every entry's path, mode, owner,
 * size, inode and modification and change times, the stored directory
 * included (but not its change time, which the rename to KEY sets).
 * Only the kernel sets a change time, and any write, chmod, chown,
 * link, rename or removal below the entry sets one, so an entry whose
 * seal is the one recorded when its content was hashed still holds
 * those bytes: checking it costs one fstatat(2) per entry, where
 * hashing it again read every byte in the event loop (issue 23).
 */
struct setup_seal {
	struct sha256_ctx	 ctx;
	uint64_t		 n;
	char			 path[PATH_MAX];
};

static int
setup_seal_one(struct setup_seal *s, const struct stat *st, int top)
{
	char	 rec[PATH_MAX + 192];
	int	 n;

	n = snprintf(rec, sizeof(rec), "%s%c%o %u %u %llu %llu %lld.%09ld "
	    "%lld.%09ld", s->path, 0, (unsigned)st->st_mode,
	    (unsigned)st->st_uid, (unsigned)st->st_gid,
	    (unsigned long long)st->st_size, (unsigned long long)st->st_ino,
	    (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
	    top ? 0LL : (long long)st->st_ctim.tv_sec,
	    top ? 0L : st->st_ctim.tv_nsec);
	if (n < 0 || (size_t)n >= sizeof(rec))
		return (-1);
	return (setup_put(&s->ctx, rec, (size_t)n));
}

static int
setup_seal_dir(struct setup_seal *s, int dfd, int depth)
{
	struct stat	 st;
	char		**names;
	size_t		 n, i, plen = strlen(s->path);
	int		 fd, ret = 0;

	if (depth > 2 * SETUP_MAXDEPTH ||
	    (names = setup_names(dfd, SETUP_MAXFILES, &n)) == NULL)
		return (-1);
	for (i = 0; i < n && ret == 0; i++) {
		if (plen + strlen(names[i]) + 2 >= sizeof(s->path) ||
		    ++s->n > 2 * SETUP_MAXFILES ||
		    fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1) {
			ret = -1;
			break;
		}
		snprintf(s->path + plen, sizeof(s->path) - plen, "/%s",
		    names[i]);
		if (setup_seal_one(s, &st, 0) == -1)
			ret = -1;
		else if (S_ISDIR(st.st_mode)) {
			if ((fd = openat(dfd, names[i], O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
				ret = -1;
			else {
				ret = setup_seal_dir(s, fd, depth + 1);
				close(fd);
			}
		}
		s->path[plen] = '\0';
	}
	setup_freenames(names);
	return (ret);
}

int
setup_seal(int dfd, char hex[SHA256_HEX_LEN + 1])
{
	struct setup_seal	*s;
	struct stat		 st;
	uint8_t			 md[SHA256_LEN];
	int			 rc = -1;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return (-1);
	if (sha256_init(&s->ctx) == -1) {
		free(s);
		return (-1);
	}
	if (fstat(dfd, &st) == 0 && setup_seal_one(s, &st, 1) == 0 &&
	    setup_seal_dir(s, dfd, 0) == 0 && sha256_final(&s->ctx, md) == 0) {
		hex_encode(md, sizeof(md), hex);
		rc = 0;
	} else
		sha256_abort(&s->ctx);
	free(s);
	return (rc);
}

/*
 * What the helper made of a refused copy, removed by the helper: its
 * own directories are read-only by then, and it has no capability to
 * write through a mode.
 */
int
setup_rm_own(int dfd, int depth)
{
	struct stat	 st;
	char		**names;
	size_t		 n, i;
	int		 fd, ret = 0;

	if (depth > 2 * SETUP_MAXDEPTH ||
	    (names = setup_names(dfd, SETUP_MAXFILES, &n)) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == -1) {
			ret = -1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if ((fd = openat(dfd, names[i], O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
			    fchmod(fd, 0700) == -1 ||
			    setup_rm_own(fd, depth + 1) == -1)
				ret = -1;
			if (fd != -1)
				close(fd);
		}
		if (unlinkat(dfd, names[i], S_ISDIR(st.st_mode) ?
		    AT_REMOVEDIR : 0) == -1)
			ret = -1;
	}
	setup_freenames(names);
	return (ret);
}

int
setup_putv(struct sha256_ctx *c, char * const *v)
{
	size_t	 n = 0, i;
	char	 num[32];

	while (v != NULL && v[n] != NULL)
		n++;
	snprintf(num, sizeof(num), "%zu", n);
	if (setup_putstr(c, num) == -1)
		return (-1);
	for (i = 0; i < n; i++)
		if (setup_putstr(c, v[i]) == -1)
			return (-1);
	return (0);
}

/*
 * The helper's descriptors, and nothing else of the parent's: the
 * upper on 3, the new entry on 4, the reply's pipe on 5.
 */
int
setup_child_fds(int up, int dst, int out)
{
	int	 fds[3], i;

	fds[0] = up;
	fds[1] = dst;
	fds[2] = out;
	for (i = 0; i < 3; i++)
		if ((fds[i] = fcntl(fds[i], F_DUPFD, 10)) == -1)
			return (-1);
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], 3 + i) == -1)
			return (-1);
	closefrom(6);
	return (0);
}

/*
 * A helper's confinement, in this order: default signals, death with
 * the parent; of root's capabilities only those in caps (the store's
 * CAP_DAC_READ_SEARCH: the upper's files are the setup uid's, of any
 * mode; what it writes must be root's, so its uid stays 0 and its
 * writes are fenced by Landlock instead); Landlock: rpath read-only
 * (NULL: none), rwpath read-write, nothing else; then no_new_privs and
 * pledge(2)'s seccomp filter.
 */
int
setup_child_confine(const char *rpath, const char *rwpath, uint32_t caps,
    pid_t parent, char *err, size_t errlen)
{
	sigset_t	 set;
	int		 cap, sig;

	for (sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigemptyset(&set);
	if (sigprocmask(SIG_SETMASK, &set, NULL) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent) {
		snprintf(err, errlen, "setup store: no parent");
		return (-1);
	}
	if (caps_keep(caps, &cap) == -1) {
		if (cap != -1)
			snprintf(err, errlen, "setup store: drop capability "
			    "%d: %s", cap, strerror(errno));
		else
			snprintf(err, errlen, "setup store: capabilities: %s",
			    strerror(errno));
		return (-1);
	}
	/*
	 * rpath: the upper (the sealer: the entry); wpath cpath fattr:
	 * the entry, its modes (the sealer: nothing).
	 */
	if ((rpath != NULL && unveil(rpath, "r") == -1) ||
	    (rwpath != NULL && unveil(rwpath, "rwc") == -1) ||
	    pledge(rwpath != NULL ? "stdio rpath wpath cpath fattr" :
	    "stdio rpath", NULL) == -1) {
		snprintf(err, errlen, "setup store: pledge/unveil: %s",
		    strerror(errno));
		return (-1);
	}
	return (0);
}
