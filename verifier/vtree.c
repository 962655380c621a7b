/*
 * The baseline under a validation run, checked before it is used.  The
 * validation tree is an overlay whose lower layer is the pristine
 * checkout of the baseline, made by the worker: the one process the
 * whole design assumes may be compromised.  So before a byte of it is
 * used, every entry of that tree is compared with the baseline's tree
 * in the object store, both ways: no name the tree lacks, none missing,
 * each of the type the tree says, files with git's two modes hashed as
 * blobs, links with the tree's target, gitlinks empty directories,
 * nothing special.  Only then are the commit's own changes written
 * through the overlay (vcheckout), so that every byte of the tree the
 * validation sees is the object store's.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "verifier.h"

#define VT_MAXDEPTH	256	/* directories deep, as fsutil's walks */

struct vt {
	git_repository	*repo;
	char		 path[PATH_MAX];
	char		*where;		/* "path: why" on a difference */
	size_t		 wlen;
	char		*err;
	size_t		 errlen;
	uint64_t	 entries;
};

static int	vt_differs(struct vt *, const char *, ...)
		    __attribute__((__format__ (printf, 2, 3)));
static int	vt_fail(struct vt *, const char *);
static int	vt_name(struct vt *, size_t, const char *);
static int	vt_blob(struct vt *, const git_tree_entry *, int, const char *,
		    const struct stat *);
static int	vt_link(struct vt *, const git_tree_entry *, int, const char *);
static int	vt_empty(struct vt *, int, const char *);
static int	vt_entry(struct vt *, const git_tree_entry *, int, const char *,
		    size_t, int);
static int	vt_dir(struct vt *, const git_tree *, int, size_t, int);

/* 1: the tree is not the baseline's, where says at which path, why. */
static int
vt_differs(struct vt *v, const char *fmt, ...)
{
	char	 why[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(v->where, v->wlen, "%s: %s", v->path[0] != '\0' ? v->path :
	    ".", why);
	return (1);
}

/* -1: could not check (errno). */
static int
vt_fail(struct vt *v, const char *what)
{
	snprintf(v->err, v->errlen, "%s%s%s: %s", v->path, v->path[0] !=
	    '\0' ? ": " : "", what, strerror(errno));
	return (-1);
}

/* v->path[0..len) followed by name, as the path of what is checked. */
static int
vt_name(struct vt *v, size_t len, const char *name)
{
	size_t	 nlen = strlen(name);

	if (len + 1 + nlen >= sizeof(v->path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if (len != 0)
		v->path[len] = '/';
	memcpy(v->path + len + (len != 0), name, nlen + 1);
	return (0);
}

/* A regular file: git's mode for it, and its bytes hashed as a blob. */
static int
vt_blob(struct vt *v, const git_tree_entry *e, int dfd, const char *name,
    const struct stat *sb)
{
	struct stat	 st;
	git_oid		 oid;
	mode_t		 mode;
	void		*p = NULL;
	char		 got[GITV_HEXSZ + 1], want[GITV_HEXSZ + 1];
	int		 fd, rc;

	mode = git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB_EXECUTABLE ?
	    0755 : 0644;
	if ((sb->st_mode & 07777) != mode)
		return (vt_differs(v, "mode %04o, the baseline's is %04o",
		    (unsigned)(sb->st_mode & 07777), (unsigned)mode));
	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC)) == -1)
		return (vt_fail(v, "open"));
	if (fstat(fd, &st) == -1 || st.st_ino != sb->st_ino ||
	    st.st_dev != sb->st_dev || !S_ISREG(st.st_mode)) {
		close(fd);
		return (vt_differs(v, "changed while it was checked"));
	}
	if (st.st_size > 0 && (p = mmap(NULL, st.st_size, PROT_READ,
	    MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return (vt_fail(v, "mmap"));
	}
	close(fd);
	rc = git_odb_hash(&oid, p != NULL ? p : "", st.st_size,
	    GIT_OBJECT_BLOB);
	if (p != NULL)
		munmap(p, st.st_size);
	if (rc < 0) {
		errno = EIO;
		return (vt_fail(v, "hash"));
	}
	if (!git_oid_equal(&oid, git_tree_entry_id(e))) {
		git_oid_tostr(got, sizeof(got), &oid);
		git_oid_tostr(want, sizeof(want), git_tree_entry_id(e));
		return (vt_differs(v, "blob %s, the baseline's is %s", got,
		    want));
	}
	return (0);
}

/* A symbolic link: the tree's target, byte for byte. */
static int
vt_link(struct vt *v, const git_tree_entry *e, int dfd, const char *name)
{
	git_blob	*b;
	char		 target[PATH_MAX];
	ssize_t		 n;
	int		 same;

	if ((n = readlinkat(dfd, name, target, sizeof(target))) == -1)
		return (vt_fail(v, "readlink"));
	if (git_blob_lookup(&b, v->repo, git_tree_entry_id(e)) < 0) {
		git_error_clear();
		errno = ENOENT;
		return (vt_fail(v, "link target blob"));
	}
	same = (size_t)n == git_blob_rawsize(b) &&
	    memcmp(target, git_blob_rawcontent(b), n) == 0;
	git_blob_free(b);
	return (same ? 0 : vt_differs(v, "not the baseline's link target"));
}

/* A gitlink: the empty directory a checkout leaves for it. */
static int
vt_empty(struct vt *v, int dfd, const char *name)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, n = 0;

	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (vt_fail(v, "open"));
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return (vt_fail(v, "opendir"));
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return (n == 0 ? 0 : vt_differs(v, "a gitlink, not empty"));
}

/* One name of the directory dfd, found in the tree as e. */
static int
vt_entry(struct vt *v, const git_tree_entry *e, int dfd, const char *name,
    size_t len, int depth)
{
	struct stat	 sb;
	git_tree	*sub;
	git_filemode_t	 m = git_tree_entry_filemode(e);
	int		 fd, rc;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return (errno == ENOENT ? vt_differs(v, "missing") :
		    vt_fail(v, "stat"));
	v->entries++;
	switch (m) {
	case GIT_FILEMODE_BLOB:
	case GIT_FILEMODE_BLOB_EXECUTABLE:
		if (!S_ISREG(sb.st_mode))
			return (vt_differs(v, "not a regular file"));
		return (vt_blob(v, e, dfd, name, &sb));
	case GIT_FILEMODE_LINK:
		if (!S_ISLNK(sb.st_mode))
			return (vt_differs(v, "not a symbolic link"));
		return (vt_link(v, e, dfd, name));
	case GIT_FILEMODE_COMMIT:
		if (!S_ISDIR(sb.st_mode))
			return (vt_differs(v, "not a directory (a gitlink)"));
		return (vt_empty(v, dfd, name));
	case GIT_FILEMODE_TREE:
		if (!S_ISDIR(sb.st_mode))
			return (vt_differs(v, "not a directory"));
		if (git_tree_lookup(&sub, v->repo, git_tree_entry_id(e)) < 0) {
			git_error_clear();
			errno = ENOENT;
			return (vt_fail(v, "tree"));
		}
		if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1) {
			git_tree_free(sub);
			return (vt_fail(v, "open"));
		}
		rc = vt_dir(v, sub, fd, len, depth + 1);
		git_tree_free(sub);
		return (rc);
	default:
		return (vt_differs(v, "baseline mode %06o",
		    (unsigned)git_tree_entry_filemode_raw(e)));
	}
}

/*
 * The directory dfd (closed here) against t, both ways: each name it
 * holds is one of t's and as t says, and it holds as many as t has.
 */
static int
vt_dir(struct vt *v, const git_tree *t, int dfd, size_t len, int depth)
{
	const git_tree_entry	*e;
	struct dirent		*de;
	struct stat		 sb;
	DIR			*d;
	size_t			 seen = 0, i, n = git_tree_entrycount(t);
	int			 rc = 0;

	v->path[len] = '\0';
	if (depth > VT_MAXDEPTH) {
		close(dfd);
		return (vt_differs(v, "deeper than %d directories",
		    VT_MAXDEPTH));
	}
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return (vt_fail(v, "opendir"));
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (vt_name(v, len, de->d_name) == -1) {
			rc = vt_fail(v, de->d_name);
			break;
		}
		if ((e = git_tree_entry_byname(t, de->d_name)) == NULL)
			rc = vt_differs(v, "not in the baseline's tree");
		else {
			seen++;
			rc = vt_entry(v, e, dirfd(d), de->d_name,
			    strlen(v->path), depth);
		}
		v->path[len] = '\0';
	}
	/* Each name seen is one of t's: fewer is one of t's missing. */
	for (i = 0; rc == 0 && seen < n && i < n; i++) {
		e = git_tree_entry_byindex(t, i);
		if (vt_name(v, len, git_tree_entry_name(e)) == 0 &&
		    fstatat(dirfd(d), git_tree_entry_name(e), &sb,
		    AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT)
			rc = vt_differs(v, "missing");
		v->path[len] = '\0';
	}
	if (rc == 0 && seen < n)
		rc = vt_differs(v, "%zu of the baseline's entries missing",
		    n - seen);
	closedir(d);
	return (rc);
}

int
vtree_open(const char *repo_path, git_repository **repo, char *err,
    size_t errlen)
{
	git_odb	*odb = NULL;
	char	 objects[PATH_MAX];

	*repo = NULL;
	if (gitv_objects(repo_path, objects, sizeof(objects), err, errlen) ==
	    -1)
		return (-1);
	if (git_odb_open(&odb, objects) < 0 ||
	    git_repository_wrap_odb(repo, odb) < 0) {
		snprintf(err, errlen, "%s: %s", objects, git_error_last() !=
		    NULL ? git_error_last()->message : "cannot be opened");
		git_error_clear();
		git_odb_free(odb);
		return (-1);
	}
	git_odb_free(odb);	/* the repository holds it */
	return (0);
}

int
vtree_check(git_repository *repo, const char *baseline_hex, int rootfd,
    char tree_hex[GITV_HEXSZ + 1], char *where, size_t wlen, char *err,
    size_t errlen)
{
	struct vt	 v;
	git_commit	*commit = NULL;
	git_tree	*tree = NULL;
	git_oid		 oid;
	int		 fd, rc = -1;

	tree_hex[0] = '\0';
	where[0] = '\0';
	if (git_oid_fromstr(&oid, baseline_hex) < 0 ||
	    git_commit_lookup(&commit, repo, &oid) < 0 ||
	    git_commit_tree(&tree, commit) < 0) {
		snprintf(err, errlen, "baseline %s: %s", baseline_hex,
		    git_error_last() != NULL ? git_error_last()->message :
		    "not found");
		git_error_clear();
		goto done;
	}
	git_oid_tostr(tree_hex, GITV_HEXSZ + 1, git_tree_id(tree));
	memset(&v, 0, sizeof(v));
	v.repo = repo;
	v.where = where;
	v.wlen = wlen;
	v.err = err;
	v.errlen = errlen;
	/* From the top, which is the pristine tree itself, never a link. */
	if ((fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "pristine tree: %s", strerror(errno));
		goto done;
	}
	rc = vt_dir(&v, tree, fd, 0, 0);
 done:
	git_tree_free(tree);
	git_commit_free(commit);
	return (rc);
}
