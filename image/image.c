/*
 * factory-image: an untrusted image archive, parsed by neither root
 * nor the parent.
 *
 * The parent sends one IMAGE_IMPORT with the archive as a descriptor
 * (factoryctl opened it, or made it from a directory, with the
 * operator's rights).  We read it with libarchive and write the tree
 * into our staging directory, checking each entry before anything is
 * written: its path (imgpath_clean: no absolute path, no "..", bounded
 * length and depth), every directory on the way opened beneath the
 * tree without following a link (a link an entry made cannot carry a
 * later entry out), a hard link only to a regular file already
 * written in the tree, a symbolic link's target stored as it is (it is
 * only ever resolved inside a sandbox's root).  setuid and setgid are
 * cleared; devices, FIFOs and sockets are skipped; both are reported.
 * Owners are not ours to set: the parent gives the tree to root after
 * checking it again itself, and computes the digest.
 *
 * An OCI image layout (as a directory, or an oci-archive tar) is
 * recognised once unpacked: index.json leads to one manifest, whose
 * layers are applied in order, each one's whiteouts (".wh.NAME",
 * ".wh..wh..opq") first, then its entries.
 *
 * One import per process: the parent starts a fresh one for the next.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/tree.h>

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factory.h"
#include "imagemsg.h"
#include "imgtree.h"
#include "imsgev.h"
#include "log.h"
#include "util.h"

#define X_BLOCK		(64 * 1024)		/* libarchive read block */
#define X_RESERVE	(16ULL * 1024 * 1024)	/* left free for the journal */
#define X_SPACECHECK	(8ULL * 1024 * 1024)	/* bytes between checks */
#define X_PROGRESS_MS	250
#define X_JSONMAX	(1024 * 1024)		/* index.json, a manifest */
#define X_LAYERSMAX	256

/* A directory's mode, applied once everything below it is written. */
struct xdir {
	RB_ENTRY(xdir)	 entry;
	mode_t		 mode;
	char		*path;
};
RB_HEAD(xdirs, xdir);

#ifndef __unused
#define __unused	__attribute__((__unused__))	/* tree.h's */
#endif

static int
xdir_cmp(struct xdir *a, struct xdir *b)
{
	return (strcmp(a->path, b->path));
}
RB_GENERATE_STATIC(xdirs, xdir, entry, xdir_cmp)

struct x {
	int			 rootfd;
	const struct image_import *lim;
	uint64_t		 entries;
	uint64_t		 bytes;
	uint64_t		 sincecheck;
	uint64_t		 stripped;
	struct xdirs		 dirs;
	uint64_t		 lastms;
	char			 err[IMAGE_REASONMAX];
};

static struct imsgev	 iev_parent;
static int		 stagingfd = -1;

static int	image_imsg(struct imsg *);

int
main(int argc, char *argv[])
{
	char		 path[PATH_MAX];
	const char	*state;
	int		 fd;

	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_IMAGE, argc, argv);
	if ((state = proc_getvar("state")) == NULL)
		fatalx("no state directory");
	snprintf(path, sizeof(path), "%s/images/staging", state);
	if ((stagingfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		fatal("%s", path);
	child_start(&iev_parent, fd, image_imsg);
	event_dispatch();
	return (0);
}

/* A reason naming the entry, escaped: it reaches the operator. */
static int __attribute__((__format__ (printf, 3, 4)))
x_fail(struct x *x, const char *path, const char *fmt, ...)
{
	va_list	 ap;
	char	 name[512], why[256];

	if (x->err[0] != '\0')
		return (-1);	/* the first reason stands */
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (path == NULL)
		snprintf(x->err, sizeof(x->err), "%s", why);
	else {
		if (esc_encode(path, strlen(path), name, sizeof(name)) == -1)
			strlcpy(name, "(a name too long to show)",
			    sizeof(name));
		snprintf(x->err, sizeof(x->err), "%s: %s", name, why);
	}
	return (-1);
}

static void
x_progress(struct x *x, int force)
{
	struct image_progress	 p;
	uint64_t		 now = mono_ms();

	if (!force && now - x->lastms < X_PROGRESS_MS)
		return;
	x->lastms = now;
	p.bytes = x->bytes;
	p.entries = x->entries;
	imsgev_compose(&iev_parent, IMSG_IMAGE_PROGRESS, 0, 0, -1, &p,
	    sizeof(p));
	if (imsgbuf_flush(&iev_parent.ibuf) == -1)
		fatal("parent channel");
}

static void
x_strip(struct x *x, enum image_strip kind, const char *path)
{
	struct ibuf	*b;
	char		 name[IMAGE_REASONMAX];
	uint32_t	 k = kind;

	if (x->stripped++ >= IMAGE_STRIPMAX)
		return;
	if (esc_encode(path, strlen(path), name, sizeof(name)) == -1)
		strlcpy(name, "(a name too long to show)", sizeof(name));
	if ((b = imsg_create(&iev_parent.ibuf, IMSG_IMAGE_STRIPPED, 0, 0,
	    sizeof(k) + strlen(name) + 1)) == NULL ||
	    imsg_add(b, &k, sizeof(k)) == -1 ||
	    imsg_add(b, name, strlen(name) + 1) == -1)
		fatal("IMAGE_STRIPPED");
	imsg_close(&iev_parent.ibuf, b);
}

static void
x_dirmode(struct x *x, const char *path, mode_t mode, int only_new)
{
	struct xdir	 key, *d;

	key.path = (char *)path;
	if ((d = RB_FIND(xdirs, &x->dirs, &key)) != NULL) {
		if (!only_new)
			d->mode = mode;
		return;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL ||
	    (d->path = strdup(path)) == NULL)
		fatal(NULL);
	d->mode = mode;
	RB_INSERT(xdirs, &x->dirs, d);
}

/* Forget the modes of path and of everything below it. */
static void
x_dirforget(struct x *x, const char *path)
{
	struct xdir	 key, *d, *next;
	size_t		 len = strlen(path);

	key.path = (char *)path;
	for (d = RB_NFIND(xdirs, &x->dirs, &key); d != NULL; d = next) {
		if (strncmp(d->path, path, len) != 0 ||
		    (d->path[len] != '\0' && d->path[len] != '/'))
			break;
		next = RB_NEXT(xdirs, &x->dirs, d);
		RB_REMOVE(xdirs, &x->dirs, d);
		free(d->path);
		free(d);
	}
}

/*
 * Remove name of dfd, whatever it is, without following anything.
 * The tree is ours and no deeper than max-depth: recursion is bounded.
 */
static int
x_rm(int dfd, const char *name)
{
	struct stat	 sb;
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return (errno == ENOENT ? 0 : -1);
	if (!S_ISDIR(sb.st_mode))
		return (unlinkat(dfd, name, 0));
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (-1);
	(void)fchmod(fd, 0700);		/* a 0555 directory of an image */
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (x_rm(dirfd(d), de->d_name) == -1) {
			closedir(d);
			return (-1);
		}
	}
	closedir(d);
	return (unlinkat(dfd, name, AT_REMOVEDIR));
}

/* Everything in staging: what an earlier import left. */
static void
x_clean(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if ((fd = dup(stagingfd)) == -1 || (d = fdopendir(fd)) == NULL)
		fatal("staging");
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (x_rm(stagingfd, de->d_name) == -1)
			log_warn("staging: %s", de->d_name);
	}
	closedir(d);
}

/*
 * The directory that holds rel's last component, opened beneath the
 * tree one component at a time, never through a link; missing ones are
 * made if create (mode 0755 unless an entry says otherwise).  *base
 * points at the last component in rel.  -1 and a reason otherwise.
 */
static int
x_parent(struct x *x, const char *rel, int create, const char **base)
{
	char		 comp[NAME_MAX + 1], sofar[IMG_PATHMAX + 1];
	const char	*p = rel, *e;
	int		 fd = x->rootfd, nfd;

	sofar[0] = '\0';
	while ((e = strchr(p, '/')) != NULL) {
		memcpy(comp, p, (size_t)(e - p));
		comp[e - p] = '\0';
		memcpy(sofar, rel, (size_t)(e - rel));
		sofar[e - rel] = '\0';
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (nfd == -1 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0700) == -1) {
				x_fail(x, sofar, "%s", strerror(errno));
				goto fail;
			}
			x_dirmode(x, sofar, 0755, 1);
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd == -1) {
			if (errno == ELOOP || errno == ENOTDIR)
				x_fail(x, rel, "a path through a symbolic link "
				    "or a file (%s)", sofar);
			else if (errno == ENOENT)
				x_fail(x, rel, "%s is not in the tree", sofar);
			else
				x_fail(x, sofar, "%s", strerror(errno));
			goto fail;
		}
		if (fd != x->rootfd)
			close(fd);
		fd = nfd;
		p = e + 1;
	}
	*base = p;
	return (fd == x->rootfd ? dup(fd) : fd);
 fail:
	if (fd != x->rootfd)
		close(fd);
	return (-1);
}

/* Room left on the state directory's file system, now and then. */
static int
x_space(struct x *x, size_t n)
{
	struct statvfs	 vfs;

	x->bytes += n;
	x->sincecheck += n;
	if (x->bytes > x->lim->max_bytes)
		return (x_fail(x, NULL, "more than %llu bytes of files "
		    "(images: max-size)",
		    (unsigned long long)x->lim->max_bytes));
	if (n < X_SPACECHECK && x->sincecheck < X_SPACECHECK)
		return (0);	/* a big entry is checked at once */
	x->sincecheck = 0;
	if (fstatvfs(x->rootfd, &vfs) == 0 &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < X_RESERVE + n)
		return (x_fail(x, NULL, "the state directory's file system "
		    "is full (less than %lluM free)",
		    (unsigned long long)(X_RESERVE >> 20)));
	return (0);
}

static int
x_file(struct x *x, struct archive *a, struct archive_entry *e, int dfd,
    const char *base, const char *rel, mode_t mode)
{
	const void	*buf;
	size_t		 size;
	la_int64_t	 off, esize;
	int		 fd, r;

	/*
	 * The size the entry says is what counts against the bounds, and
	 * what the parent will read: a sparse entry is as big as it says.
	 */
	esize = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
	if (esize < 0 || x_space(x, (uint64_t)esize) == -1)
		return (x_fail(x, rel, "a size of %lld", (long long)esize));
	if ((fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return (x_fail(x, rel, "%s", strerror(errno)));
	for (;;) {
		r = archive_read_data_block(a, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK) {
			close(fd);
			return (x_fail(x, rel, "archive: %s",
			    archive_error_string(a)));
		}
		if (off < 0 || (uint64_t)off + size > (uint64_t)esize) {
			close(fd);
			return (x_fail(x, rel, "data beyond its size"));
		}
		if (pwrite(fd, buf, size, off) != (ssize_t)size) {
			x_fail(x, rel, "%s", strerror(errno));
			close(fd);
			return (-1);
		}
		x_progress(x, 0);
	}
	if (ftruncate(fd, esize) == -1 || fchmod(fd, mode) == -1) {
		x_fail(x, rel, "%s", strerror(errno));
		close(fd);
		return (-1);
	}
	if (close(fd) == -1)
		return (x_fail(x, rel, "%s", strerror(errno)));
	return (0);
}

/* A hard link: to a regular file already written in the tree. */
static int
x_hardlink(struct x *x, const char *target, int dfd, const char *base,
    const char *rel)
{
	char		 t[IMG_PATHMAX + 1], why[128];
	const char	*tbase;
	struct stat	 sb;
	int		 tfd, rc;

	if ((rc = imgpath_clean(target, t, sizeof(t), x->lim->max_path,
	    (int)x->lim->max_depth, why, sizeof(why))) != 0)
		return (x_fail(x, rel, "hard link target: %s", rc == 1 ?
		    "the root" : why));
	if ((tfd = x_parent(x, t, 0, &tbase)) == -1)
		return (-1);
	if (fstatat(tfd, tbase, &sb, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISREG(sb.st_mode)) {
		close(tfd);
		return (x_fail(x, rel, "a hard link to %s, not a regular file "
		    "of the tree", t));
	}
	rc = linkat(tfd, tbase, dfd, base, 0);
	close(tfd);
	if (rc == -1)
		return (x_fail(x, rel, "link: %s", strerror(errno)));
	return (0);
}

static int
x_special(struct x *x, mode_t type, const char *rel)
{
	switch (type) {
	case AE_IFCHR:
		x_strip(x, IMAGE_STRIP_CHR, rel);
		return (0);
	case AE_IFBLK:
		x_strip(x, IMAGE_STRIP_BLK, rel);
		return (0);
	case AE_IFIFO:
		x_strip(x, IMAGE_STRIP_FIFO, rel);
		return (0);
	case AE_IFSOCK:
		x_strip(x, IMAGE_STRIP_SOCK, rel);
		return (0);
	}
	return (x_fail(x, rel, "an entry of unknown type %o",
	    (unsigned)type));
}

/* One entry of an archive, at the canonical path rel. */
static int
x_entry(struct x *x, struct archive *a, struct archive_entry *e,
    const char *rel)
{
	struct stat	 sb;
	const char	*base, *hl, *sl;
	mode_t		 type = archive_entry_filetype(e);
	mode_t		 mode = archive_entry_perm(e) & 07777;
	int		 dfd, rc;

	hl = archive_entry_hardlink(e);
	if (hl == NULL && type != AE_IFREG && type != AE_IFDIR &&
	    type != AE_IFLNK)
		return (x_special(x, type, rel));
	if ((dfd = x_parent(x, rel, 1, &base)) == -1)
		return (-1);
	/* A later entry of a name replaces the earlier one. */
	if (fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !(S_ISDIR(sb.st_mode) && type == AE_IFDIR && hl == NULL)) {
		if (x_rm(dfd, base) == -1) {
			close(dfd);
			return (x_fail(x, rel, "cannot replace: %s",
			    strerror(errno)));
		}
		x_dirforget(x, rel);
	}
	if ((mode & (S_ISUID | S_ISGID)) && type != AE_IFDIR) {
		mode &= ~(S_ISUID | S_ISGID);
		x_strip(x, IMAGE_STRIP_SETID, rel);
	}
	mode &= ~(S_ISUID | S_ISGID);
	if (hl != NULL)
		rc = x_hardlink(x, hl, dfd, base, rel);
	else if (type == AE_IFDIR) {
		rc = 0;
		if (mkdirat(dfd, base, 0700) == -1 && errno != EEXIST)
			rc = x_fail(x, rel, "%s", strerror(errno));
		x_dirmode(x, rel, mode, 0);
	} else if (type == AE_IFLNK) {
		if ((sl = archive_entry_symlink(e)) == NULL || *sl == '\0' ||
		    strlen(sl) >= PATH_MAX)
			rc = x_fail(x, rel, "a symbolic link without a "
			    "usable target");
		else if ((rc = symlinkat(sl, dfd, base)) == -1)
			x_fail(x, rel, "%s", strerror(errno));
	} else
		rc = x_file(x, a, e, dfd, base, rel, mode);
	close(dfd);
	return (rc);
}

static struct archive *
x_open_archive(int fd)
{
	struct archive	*a;

	/*
	 * Only the filters libarchive does in-process: one that needs an
	 * external program would exec, and we may not.
	 */
	if ((a = archive_read_new()) == NULL)
		fatal(NULL);
	archive_read_support_filter_none(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_fd(a, fd, X_BLOCK) != ARCHIVE_OK) {
		archive_read_free(a);
		return (NULL);
	}
	return (a);
}

/* What a layer's whiteout names, or 0: not one. */
static int
x_whiteout(const char *rel, char *target, size_t len, int *opaque)
{
	const char	*base = strrchr(rel, '/');
	size_t		 dlen;

	base = base == NULL ? rel : base + 1;
	if (strncmp(base, ".wh.", 4) != 0)
		return (0);
	dlen = (size_t)(base - rel);
	*opaque = strcmp(base, ".wh..wh..opq") == 0;
	if (*opaque)
		snprintf(target, len, "%.*s", dlen > 0 ? (int)dlen - 1 : 0,
		    rel);
	else
		snprintf(target, len, "%.*s%s", (int)dlen, rel, base + 4);
	return (1);
}

/* Whiteout pass of a layer: what it removes from the layers below. */
static int
x_apply_whiteout(struct x *x, const char *rel, const char *target,
    int opaque)
{
	struct dirent	*de;
	const char	*base;
	DIR		*d;
	int		 dfd, fd;

	if (opaque) {
		if (target[0] == '\0')
			fd = dup(x->rootfd);
		else {
			if ((dfd = x_parent(x, target, 0, &base)) == -1) {
				x->err[0] = '\0';
				return (0);	/* nothing below to hide */
			}
			fd = openat(dfd, base, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			close(dfd);
		}
		if (fd == -1)
			return (0);
		if ((d = fdopendir(fd)) == NULL) {
			close(fd);
			return (x_fail(x, rel, "%s", strerror(errno)));
		}
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (x_rm(dirfd(d), de->d_name) == -1) {
				closedir(d);
				return (x_fail(x, rel, "%s", strerror(errno)));
			}
		}
		closedir(d);
		return (0);
	}
	if ((dfd = x_parent(x, target, 0, &base)) == -1) {
		x->err[0] = '\0';
		return (0);
	}
	if (x_rm(dfd, base) == -1) {
		close(dfd);
		return (x_fail(x, rel, "whiteout: %s", strerror(errno)));
	}
	close(dfd);
	x_dirforget(x, target);
	return (0);
}

/*
 * Every entry of the archive on fd into the tree.  layer: 1 the
 * whiteout pass of an OCI layer, 2 its entries, 0 a plain archive.
 */
static int
x_archive(struct x *x, int fd, int layer)
{
	struct archive		*a;
	struct archive_entry	*e;
	const char		*p;
	char			 rel[IMG_PATHMAX + 1], target[IMG_PATHMAX + 1];
	char			 why[128];
	la_int64_t		 end = 0;
	int			 r, rc = 0, opaque, wh, entry = 0;

	if ((a = x_open_archive(fd)) == NULL)
		return (x_fail(x, NULL, "not an archive factory-image reads"));
	for (;;) {
		/*
		 * Where the last entry ends, its padding consumed: the
		 * end-of-archive block must come after it.
		 */
		if (entry && (r = archive_read_data_skip(a)) != ARCHIVE_OK)
			break;
		end = archive_filter_bytes(a, 0);
		if ((r = archive_read_next_header(a, &e)) != ARCHIVE_OK &&
		    r != ARCHIVE_WARN)
			break;
		entry = 1;
		if ((p = archive_entry_pathname(e)) == NULL) {
			rc = x_fail(x, NULL, "an entry without a name");
			break;
		}
		if ((r = imgpath_clean(p, rel, sizeof(rel),
		    x->lim->max_path, (int)x->lim->max_depth, why,
		    sizeof(why))) == -1) {
			rc = x_fail(x, p, "%s", why);
			break;
		}
		if (r == 1)
			continue;	/* the root: always 0755 root:root */
		wh = layer != 0 && x_whiteout(rel, target, sizeof(target),
		    &opaque);
		if (layer == 1) {
			if (wh && x_apply_whiteout(x, rel, target, opaque) ==
			    -1) {
				rc = -1;
				break;
			}
			continue;
		}
		if (wh)
			continue;
		if (++x->entries > x->lim->max_entries) {
			rc = x_fail(x, NULL, "more than %llu entries "
			    "(images: max-files)",
			    (unsigned long long)x->lim->max_entries);
			break;
		}
		if (x_entry(x, a, e, rel) == -1) {
			rc = -1;
			break;
		}
		x_progress(x, 0);
	}
	if (rc == 0 && r != ARCHIVE_EOF)
		rc = x_fail(x, NULL, "archive: %s", archive_error_string(a));
	/*
	 * libarchive takes a stream that stops after an entry for a whole
	 * one; a writer that failed part-way leaves exactly that.  Only
	 * an end-of-archive block says the writer finished.
	 */
	if (rc == 0 && archive_filter_bytes(a, 0) <= end)
		rc = x_fail(x, NULL, "archive: no end-of-archive block after "
		    "the last entry (cut short)");
	archive_read_free(a);
	return (rc);
}

/* Directory modes last, deepest first: our own writes needed 0700. */
static int
x_finish(struct x *x)
{
	struct xdir	*d, *prev;
	const char	*base;
	int		 dfd, fd;

	for (d = RB_MAX(xdirs, &x->dirs); d != NULL; d = prev) {
		prev = RB_PREV(xdirs, &x->dirs, d);
		RB_REMOVE(xdirs, &x->dirs, d);
		if ((dfd = x_parent(x, d->path, 0, &base)) == -1) {
			x->err[0] = '\0';
		} else {
			if ((fd = openat(dfd, base, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC)) != -1) {
				if (fchmod(fd, d->mode) == -1)
					x_fail(x, d->path, "%s",
					    strerror(errno));
				close(fd);
			}
			close(dfd);
		}
		free(d->path);
		free(d);
	}
	return (x->err[0] != '\0' ? -1 : 0);
}

/* A file of the layout, beneath it, at most max bytes, read whole. */
static char *
x_readat(struct x *x, int dfd, const char *name, size_t max, size_t *lenp)
{
	struct stat	 sb;
	char		*buf;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1 || fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > max) {
		if (fd != -1)
			close(fd);
		x_fail(x, name, "not a regular file of at most %zu bytes",
		    max);
		return (NULL);
	}
	if ((buf = malloc((size_t)sb.st_size + 1)) == NULL)
		fatal(NULL);
	while (off < (size_t)sb.st_size &&
	    (n = read(fd, buf + off, (size_t)sb.st_size - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	*lenp = off;
	return (buf);
}

/*
 * A blob of the layout by its descriptor: blobs/sha256/HEX, a regular
 * file of the size it says whose SHA-256 is its name.  An open fd at
 * offset 0.
 */
static int
x_blob(struct x *x, int lfd, json_t *desc)
{
	char			 hex[SHA256_HEX_LEN + 1], path[128];
	const char		*dg;
	json_int_t		 size;
	struct stat		 sb;
	int			 bfd, fd;

	dg = json_string_value(json_object_get(desc, "digest"));
	size = json_integer_value(json_object_get(desc, "size"));
	if (dg == NULL || strncmp(dg, "sha256:", 7) != 0 ||
	    !hex_valid(dg + 7, SHA256_HEX_LEN))
		return (x_fail(x, NULL, "OCI: a descriptor without a "
		    "sha256 digest"));
	snprintf(path, sizeof(path), "blobs/sha256/%s", dg + 7);
	if ((bfd = openat(lfd, "blobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (fd = openat(bfd, "sha256", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (bfd != -1)
			close(bfd);
		return (x_fail(x, path, "%s", strerror(errno)));
	}
	close(bfd);
	bfd = openat(fd, dg + 7, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(fd);
	if (bfd == -1 || fstat(bfd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size != size) {
		if (bfd != -1)
			close(bfd);
		return (x_fail(x, path, "missing, or not of size %lld",
		    (long long)size));
	}
	/* sha256_fd reads by offset: bfd stays at the blob's start. */
	if (sha256_fd(bfd, hex, NULL) == -1 || strcmp(hex, dg + 7) != 0) {
		close(bfd);
		return (x_fail(x, path, "its contents do not have its "
		    "digest"));
	}
	return (bfd);
}

static json_t *
x_json_blob(struct x *x, int lfd, json_t *desc)
{
	json_error_t	 jerr;
	json_t		*o;
	char		*buf;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = x_blob(x, lfd, desc)) == -1)
		return (NULL);
	if (json_integer_value(json_object_get(desc, "size")) > X_JSONMAX) {
		close(fd);
		x_fail(x, NULL, "OCI: a manifest of more than %d bytes",
		    X_JSONMAX);
		return (NULL);
	}
	if ((buf = malloc(X_JSONMAX + 1)) == NULL)
		fatal(NULL);
	while (off < X_JSONMAX && (n = read(fd, buf + off, X_JSONMAX - off)) >
	    0)
		off += (size_t)n;
	close(fd);
	o = json_loadb(buf, off, 0, &jerr);
	free(buf);
	if (o == NULL)
		x_fail(x, NULL, "OCI: a manifest: %s", jerr.text);
	return (o);
}

static int
x_is_layout(int fd)
{
	struct stat	 sb;

	return (fstatat(fd, "oci-layout", &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode) && fstatat(fd, "index.json", &sb,
	    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
	    fstatat(fd, "blobs", &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(sb.st_mode));
}

/* index.json (an index in it, once) to the one image manifest. */
static json_t *
x_manifest(struct x *x, int lfd)
{
	json_error_t	 jerr;
	json_t		*idx, *m, *d;
	const char	*mt;
	char		*buf;
	size_t		 len;
	int		 hops;

	if ((buf = x_readat(x, lfd, "index.json", X_JSONMAX, &len)) == NULL)
		return (NULL);
	idx = json_loadb(buf, len, 0, &jerr);
	free(buf);
	if (idx == NULL) {
		x_fail(x, "index.json", "%s", jerr.text);
		return (NULL);
	}
	for (hops = 0; hops < 2; hops++) {
		m = json_object_get(idx, "manifests");
		if (!json_is_array(m) || json_array_size(m) != 1) {
			x_fail(x, "index.json", "must list exactly one "
			    "manifest, not %zu", json_is_array(m) ?
			    json_array_size(m) : 0);
			json_decref(idx);
			return (NULL);
		}
		d = json_array_get(m, 0);
		mt = json_string_value(json_object_get(d, "mediaType"));
		m = x_json_blob(x, lfd, d);
		json_decref(idx);
		if (m == NULL)
			return (NULL);
		if (mt == NULL || strstr(mt, "index") == NULL)
			return (m);
		idx = m;	/* an index in the index */
	}
	json_decref(idx);
	x_fail(x, "index.json", "indexes nested too deep");
	return (NULL);
}

/* The layout unpacked in lfd, its layers applied to the tree. */
static int
x_oci(struct x *x, int lfd, uint32_t *nlayers)
{
	json_t		*m, *layers, *l;
	const char	*mt;
	size_t		 i;
	int		 fd, rc = 0, pass;

	if ((m = x_manifest(x, lfd)) == NULL)
		return (-1);
	/* The config is not ours to read, but a layout must be whole. */
	if ((fd = x_blob(x, lfd, json_object_get(m, "config"))) == -1) {
		json_decref(m);
		return (-1);
	}
	close(fd);
	layers = json_object_get(m, "layers");
	if (!json_is_array(layers) || json_array_size(layers) > X_LAYERSMAX) {
		json_decref(m);
		return (x_fail(x, NULL, "OCI: the manifest's layers must be "
		    "a list of at most %d", X_LAYERSMAX));
	}
	*nlayers = (uint32_t)json_array_size(layers);
	json_array_foreach(layers, i, l) {
		mt = json_string_value(json_object_get(l, "mediaType"));
		if (mt == NULL || (strstr(mt, "layer") == NULL &&
		    strstr(mt, "rootfs.diff") == NULL)) {
			rc = x_fail(x, NULL, "OCI: layer %zu: media type %s",
			    i, mt == NULL ? "missing" : "not a layer");
			break;
		}
		if ((fd = x_blob(x, lfd, l)) == -1) {
			rc = -1;
			break;
		}
		for (pass = 1; pass <= 2 && rc == 0; pass++) {
			if (lseek(fd, 0, SEEK_SET) == -1)
				rc = x_fail(x, NULL, "layer %zu: %s", i,
				    strerror(errno));
			else
				rc = x_archive(x, fd, pass);
		}
		close(fd);
		if (rc == -1)
			break;
	}
	json_decref(m);
	return (rc);
}

static int
x_import(struct x *x, int fd, int wfd, struct image_done *done)
{
	int	 lfd;

	if (mkdirat(wfd, "rootfs", 0700) == -1 ||
	    (x->rootfd = openat(wfd, "rootfs", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return (x_fail(x, NULL, "staging: %s", strerror(errno)));
	if (x_archive(x, fd, 0) == -1)
		return (-1);
	if (x_is_layout(x->rootfd)) {
		/* What came was a layout, not a tree: unpack its layers. */
		lfd = x->rootfd;
		x->entries = x->bytes = 0;
		x_finish(x);
		if (renameat(wfd, "rootfs", wfd, "layout") == -1 ||
		    mkdirat(wfd, "rootfs", 0700) == -1 ||
		    (x->rootfd = openat(wfd, "rootfs", O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
			close(lfd);
			return (x_fail(x, NULL, "staging: %s",
			    strerror(errno)));
		}
		done->oci = 1;
		if (x_oci(x, lfd, &done->layers) == -1) {
			close(lfd);
			return (-1);
		}
		close(lfd);
		if (x_rm(wfd, "layout") == -1)
			return (x_fail(x, NULL, "staging: %s",
			    strerror(errno)));
	}
	return (x_finish(x));
}

static void
image_import(struct imsg *imsg)
{
	struct image_import	 lim;
	struct image_done	 done;
	struct x		 x;
	size_t			 i;
	int			 fd = imsg_get_fd(imsg), wfd, rc;

	if (fd == -1)
		fatalx("IMAGE_IMPORT: no descriptor");
	if (imsg_get_data(imsg, &lim, sizeof(lim)) == -1)
		fatalx("IMAGE_IMPORT: bad size");
	if (strncmp(lim.id, "i-", 2) != 0 || lim.id[2] == '\0' ||
	    memchr(lim.id, '\0', sizeof(lim.id)) == NULL)
		fatalx("IMAGE_IMPORT: bad id");
	for (i = 2; lim.id[i] != '\0'; i++)
		if (lim.id[i] < '0' || lim.id[i] > '9')
			fatalx("IMAGE_IMPORT: bad id");
	if (lim.max_depth < 1 || lim.max_depth > IMG_DEPTHMAX ||
	    lim.max_path < 16 || lim.max_path > IMG_PATHMAX)
		fatalx("IMAGE_IMPORT: bad bounds");
	/* Test builds, regress/imgsafe: a child that ignores its bounds. */
	if (faultpoint("image:no-bounds")) {
		lim.max_bytes = lim.max_entries = UINT64_MAX;
		lim.max_depth = IMG_DEPTHMAX;
		lim.max_path = IMG_PATHMAX;
	}

	memset(&x, 0, sizeof(x));
	memset(&done, 0, sizeof(done));
	RB_INIT(&x.dirs);
	x.rootfd = -1;
	x.lim = &lim;
	x_clean();
	if (mkdirat(stagingfd, lim.id, 0700) == -1 ||
	    (wfd = openat(stagingfd, lim.id, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		rc = x_fail(&x, NULL, "staging %s: %s", lim.id,
		    strerror(errno));
		wfd = -1;
	} else
		rc = x_import(&x, fd, wfd, &done);
	close(fd);
	x_progress(&x, 1);
	if (rc == -1) {
		/* Nothing of a failed import stays. */
		if (x.rootfd != -1)
			close(x.rootfd);
		x.rootfd = -1;
		if (wfd != -1)
			close(wfd);
		x_clean();
		log_warnx("import %s: %s", lim.id, x.err);
		imsgev_compose_str(&iev_parent, IMSG_IMAGE_FAILED, 0, x.err);
	} else {
		done.entries = x.entries;
		done.bytes = x.bytes;
		done.stripped = x.stripped;
		imsgev_compose(&iev_parent, IMSG_IMAGE_DONE, 0, 0, -1, &done,
		    sizeof(done));
	}
	if (imsgbuf_flush(&iev_parent.ibuf) == -1)
		fatal("parent channel");
	/* One import per process. */
	exit(0);
}

/* Requests from the parent; -1 for anything else. */
static int
image_imsg(struct imsg *imsg)
{
	switch (imsg_get_type(imsg)) {
	case IMSG_IMAGE_IMPORT:
		image_import(imsg);
		return (0);
	case IMSG_IMAGE_CLEAN:
		if (imsg_get_fd(imsg) != -1 || imsg_get_len(imsg) != 0)
			fatalx("IMAGE_CLEAN: unexpected payload");
		x_clean();
		return (0);
	}
	return (-1);
}
