/*
 * Collecting an attempt: the files of the tree, compared with the
 * baseline, become one commit and a bundle.
 *
 * Nothing of the agent's .git is trusted: its index, refs, objects and
 * commits are ignored, and the tree is walked with openat(2) relative
 * to directory fds without following a symlink, so a link planted in
 * the tree cannot make us read (or hash) a file outside it.  Objects go
 * to attempt_dir/collect.git, a scratch repository the agent cannot
 * write; the repository's objects are reached through alternates.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <git2.h>

#include "beneath.h"
#include "conf.h"
#include "crypto.h"
#include "factory.h"
#include "gitcommon.h"
#include "worker.h"
#include "util.h"


struct walk {
	git_repository		*repo;
	git_odb			*odb;
	struct collect_result	*res;
	uint64_t		 total;
	uint64_t		 limit;
	int			 toobig;
	int			 failed;	/* could not decide */
	char			*err;
	size_t			 errlen;
};

static void	 reject(struct walk *, const char *, const char *, ...)
		    __attribute__((__format__ (printf, 3, 4)));
static int	 same_file(int, const char *, const char *, size_t);
static int	 read_names(int, char ***, size_t *);
static void	 free_names(char **, size_t);
static const char *link_escapes(const char *, const char *);
static int	 add_blob(struct walk *, const void *, size_t, git_oid *);
static int	 add_file(struct walk *, int, const char *, const char *,
		    const struct stat *, git_treebuilder *);
static int	 add_link(struct walk *, int, const char *, const char *,
		    git_treebuilder *);
static int	 walk_dir(struct walk *, int, char *, size_t,
		    const git_tree *, int, git_oid *, int *);
static int	 same_as_base(git_treebuilder *, const git_tree *);
static int	 is_whiteout(const struct stat *);
static int	 is_opaque(struct walk *, int);
static int	 walk_entry(struct walk *, int, const char *, char *, size_t,
		    const git_tree *, int, git_treebuilder *);
static void	 reject_hook(struct walk *, const char *);
static void	 check_dotgit(struct walk *, int, const char *);
static int	 diff_add(struct walk *, const char *, char, git_filemode_t,
		    git_filemode_t, char * const *);
static int	 diff_kind(git_filemode_t);
static int	 diff_entry(struct walk *, const git_tree_entry *,
		    const git_tree_entry *, char *, size_t, char * const *);
static int	 diff_trees(struct walk *, const git_tree *, const git_tree *,
		    char *, size_t, char * const *);
static int	 diff_changes(struct walk *, git_tree *, const git_oid *,
		    char * const *);
static int	 open_scratch(const char *, const char *, git_repository **,
		    char *, size_t);
static int	 check_req(const struct collect_req *, char *, size_t);
static int	 namecmp(const void *, const void *);
static int	 make_commit(const struct collect_req *, git_repository *,
		    const git_commit *, const git_oid *, git_oid *, char *,
		    size_t);


/* Records "path: reason"; every reason is kept, not just the first. */
static void
reject(struct walk *w, const char *path, const char *fmt, ...)
{
	char	 reason[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (strv_addf(&w->res->rejects, &w->res->nrejects, "%s: %s", path,
	    reason) == -1 && !w->failed) {
		snprintf(w->err, w->errlen, "out of memory");
		w->failed = 1;
	}
}

/* 1 if path below dirfd is a regular file holding exactly want. */
static int
same_file(int dirfd, const char *path, const char *want, size_t wantlen)
{
	char	 buf[PATH_MAX + 64];
	size_t	 len = 0;
	ssize_t	 n;
	int	 fd;

	if (wantlen >= sizeof(buf))
		return (0);
	if ((fd = open_beneath(dirfd, path, O_RDONLY | O_NONBLOCK)) == -1)
		return (0);
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	return (len == wantlen && memcmp(buf, want, len) == 0);
}

static int
namecmp(const void *a, const void *b)
{
	return (strcmp(*(char * const *)a, *(char * const *)b));
}

/* The entries of a directory, sorted, so reasons come in path order. */
static int
read_names(int fd, char ***names, size_t *n)
{
	struct dirent	*de;
	DIR		*d;
	int		 dfd;

	*names = NULL;
	*n = 0;
	if ((dfd = dup(fd)) == -1)
		return (-1);
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return (-1);
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (strv_addf(names, n, "%s", de->d_name) == -1) {
			errno = ENOMEM;
			break;
		}
	}
	if (errno != 0) {
		closedir(d);
		free_names(*names, *n);
		*names = NULL;
		*n = 0;
		return (-1);
	}
	closedir(d);
	if (*n > 0)		/* an empty directory has no array at all */
		qsort(*names, *n, sizeof(**names), namecmp);
	return (0);
}

static void
free_names(char **names, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * NULL if a symlink at path (relative to the tree) with this target
 * stays inside the tree, or why not.  Resolution is lexical, from the
 * link's directory.  A ".." after a normal component is refused too:
 * "d/l/.." climbs out of the tree when d/l is itself a link to "..",
 * and refusing it makes every accepted link safe to follow.
 */
static const char *
link_escapes(const char *path, const char *target)
{
	const char	*p, *e;
	size_t		 len;
	long		 depth = 0;
	int		 descended = 0;

	if (target[0] == '\0')
		return ("empty symlink");
	if (target[0] == '/')
		return ("absolute symlink");
	for (p = path; (p = strchr(p, '/')) != NULL; p++)
		depth++;
	for (p = target; *p != '\0'; p = e) {
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		len = e - p;
		if (*e == '/')
			e++;
		if (len == 0 || (len == 1 && p[0] == '.'))
			continue;
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (descended)
				return ("symlink target not normalized");
			if (--depth < 0)
				return ("symlink escapes the tree");
			continue;
		}
		if ((len == 4 || (len > 4 && (p[4] == '.' || p[4] == ' '))) &&
		    strncasecmp(p, ".git", 4) == 0)
			return ("symlink into .git");
		descended = 1;
	}
	return (NULL);
}

/* Writes a blob unless an object store we reach already has it. */
static int
add_blob(struct walk *w, const void *buf, size_t len, git_oid *oid)
{
	/*
	 * git_odb_write() of a known object "freshens" it, touching its
	 * file's times in the repository: test existence first so the
	 * repository's object store is not even touched.
	 */
	if (git_odb_hash(oid, buf, len, GIT_OBJECT_BLOB) < 0)
		return (-1);
	if (git_odb_exists(w->odb, oid))
		return (0);
	return (git_odb_write(oid, w->odb, buf, len, GIT_OBJECT_BLOB));
}

static int
add_file(struct walk *w, int dirfd, const char *name, const char *path,
    const struct stat *lst, git_treebuilder *bld)
{
	struct stat	 st;
	git_oid		 oid;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd, ret = 0;

	if (lst->st_nlink > 1) {
		reject(w, path, "hardlinked file");
		return (0);
	}
	w->total += lst->st_size;
	if (w->limit != 0 && w->total > w->limit) {
		if (!w->toobig)
			reject(w, path, "tree exceeds the size limit of %llu "
			    "bytes", (unsigned long long)w->limit);
		w->toobig = 1;
	}
	if (w->toobig)
		return (0);
	/* O_NONBLOCK: a fifo swapped in since fstatat must not block us. */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1) {
		reject(w, path, "unreadable file: %s", strerror(errno));
		goto done;
	}
	if (!S_ISREG(st.st_mode) || st.st_ino != lst->st_ino ||
	    st.st_dev != lst->st_dev || st.st_nlink > 1 ||
	    st.st_size != lst->st_size) {
		reject(w, path, "file changed while collecting");
		goto done;
	}
	if ((buf = malloc(st.st_size + 1)) == NULL) {
		snprintf(w->err, w->errlen, "%s: out of memory", path);
		ret = -1;
		goto done;
	}
	/* One byte more than expected: a file still growing is refused. */
	while (len <= (size_t)st.st_size) {
		n = read(fd, buf + len, st.st_size + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			reject(w, path, "unreadable file: %s", strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += n;
	}
	if (len != (size_t)st.st_size) {
		reject(w, path, "file changed while collecting");
		goto done;
	}
	if (add_blob(w, buf, len, &oid) < 0 ||
	    git_treebuilder_insert(NULL, bld, name, &oid,
	    (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE :
	    GIT_FILEMODE_BLOB) < 0) {
		gitc_err(w->err, w->errlen, "%s: store blob", path);
		ret = -1;
	}
 done:
	free(buf);
	if (fd != -1)
		close(fd);
	return (ret);
}

static int
add_link(struct walk *w, int dirfd, const char *name, const char *path,
    git_treebuilder *bld)
{
	const char	*why;
	char		 target[PATH_MAX];
	git_oid		 oid;
	ssize_t		 n;

	n = readlinkat(dirfd, name, target, sizeof(target));
	if (n == -1) {
		reject(w, path, "unreadable symlink: %s", strerror(errno));
		return (0);
	}
	if ((size_t)n >= sizeof(target)) {
		reject(w, path, "symlink target too long");
		return (0);
	}
	target[n] = '\0';
	if ((why = link_escapes(path, target)) != NULL) {
		reject(w, path, "%s", why);
		return (0);
	}
	w->total += n;
	if (w->limit != 0 && w->total > w->limit) {
		if (!w->toobig)
			reject(w, path, "tree exceeds the size limit of %llu "
			    "bytes", (unsigned long long)w->limit);
		w->toobig = 1;
	}
	if (w->toobig)
		return (0);
	if (add_blob(w, target, n, &oid) < 0 ||
	    git_treebuilder_insert(NULL, bld, name, &oid,
	    GIT_FILEMODE_LINK) < 0) {
		gitc_err(w->err, w->errlen, "%s: store symlink", path);
		return (-1);
	}
	return (0);
}

/* 1 if the builder holds exactly the entries of the baseline's tree. */
static int
same_as_base(git_treebuilder *bld, const git_tree *base)
{
	const git_tree_entry	*be, *ne;
	size_t			 i, n;

	if (base == NULL)
		return (0);
	n = git_tree_entrycount(base);
	if (n != git_treebuilder_entrycount(bld))
		return (0);
	for (i = 0; i < n; i++) {
		be = git_tree_entry_byindex(base, i);
		ne = git_treebuilder_get(bld, git_tree_entry_name(be));
		if (ne == NULL ||
		    git_tree_entry_filemode_raw(ne) !=
		    git_tree_entry_filemode_raw(be) ||
		    !git_oid_equal(git_tree_entry_id(ne),
		    git_tree_entry_id(be)))
			return (0);
	}
	return (1);
}

/*
 * An overlay whiteout: a character device 0/0.  The agent has no
 * CAP_MKNOD and never sees the upper dir: only the overlay makes one.
 */
static int
is_whiteout(const struct stat *st)
{
	return (S_ISCHR(st->st_mode) && major(st->st_rdev) == 0 &&
	    minor(st->st_rdev) == 0);
}

/*
 * Does the directory hide everything of the lower below it?  The
 * overlay (mounted with userxattr) marks it with user.overlay.opaque "y"; an
 * agent setting that name through the merged tree gets it escaped to
 * user.overlay.overlay.opaque, which is not this one.  Unreadable:
 * taken as opaque, the choice that can only drop lower entries
 * (deletions), which the scope then judges.
 */
static int
is_opaque(struct walk *w, int fd)
{
	char	 val[8];
	ssize_t	 n;

	n = fgetxattr(fd, "user.overlay.opaque", val, sizeof(val));
	if (n == -1)
		return (errno != ENODATA && errno != ENOTSUP);
	return (n == 1 && val[0] == 'y');
}

/* One entry of a directory, into bld; -1 only when we cannot decide. */
static int
walk_entry(struct walk *w, int fd, const char *name, char *path, size_t len,
    const git_tree *base, int merge, git_treebuilder *bld)
{
	const git_tree_entry	*be;
	git_tree		*sub = NULL;
	struct stat		 st;
	git_oid			 oid;
	int			 cfd, has, ret;

	if (gitc_is_dotgit(name, strlen(name))) {
		reject(w, path, "'.git' path component");
		return (0);
	}
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		reject(w, path, "unreadable: %s", strerror(errno));
		return (0);
	}
	be = base ? git_tree_entry_byname(base, name) : NULL;
	/* What the upper holds replaces the lower's entry, if any. */
	if (merge && git_treebuilder_get(bld, name) != NULL &&
	    git_treebuilder_remove(bld, name) < 0) {
		gitc_err(w->err, w->errlen, "%s: tree entry", path);
		return (-1);
	}
	if (is_whiteout(&st))
		return (0);		/* deleted */
	if (S_ISREG(st.st_mode))
		return (add_file(w, fd, name, path, &st, bld));
	if (S_ISLNK(st.st_mode))
		return (add_link(w, fd, name, path, bld));
	if (S_ISFIFO(st.st_mode))
		reject(w, path, "fifo");
	else if (S_ISSOCK(st.st_mode))
		reject(w, path, "socket");
	else if (!S_ISDIR(st.st_mode))
		reject(w, path, "device");
	if (!S_ISDIR(st.st_mode))
		return (0);
	cfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (cfd == -1) {
		reject(w, path, "unreadable directory: %s", strerror(errno));
		return (0);
	}
	if (be != NULL && git_tree_entry_type(be) == GIT_OBJECT_TREE &&
	    git_tree_lookup(&sub, w->repo, git_tree_entry_id(be)) < 0)
		sub = NULL;
	ret = walk_dir(w, cfd, path, len, sub, merge, &oid, &has);
	git_tree_free(sub);
	close(cfd);
	if (ret == -1)
		return (-1);
	/*
	 * A submodule is checked out as an empty directory: left so, it
	 * is the baseline's gitlink.  Anything else there (a file, a link,
	 * content) is a change of the gitlink, which diff_changes refuses.
	 */
	if (!has && be != NULL &&
	    git_tree_entry_filemode(be) == GIT_FILEMODE_COMMIT &&
	    git_treebuilder_insert(NULL, bld, name, git_tree_entry_id(be),
	    GIT_FILEMODE_COMMIT) < 0) {
		gitc_err(w->err, w->errlen, "%s: gitlink", path);
		return (-1);
	}
	if (has && git_treebuilder_insert(NULL, bld, name, &oid,
	    GIT_FILEMODE_TREE) < 0) {
		gitc_err(w->err, w->errlen, "%s: tree entry", path);
		return (-1);
	}
	return (0);
}

/*
 * Builds the tree of the directory fd, whose path relative to the tree
 * is path[0..len) ("" at the top), base the baseline's tree there.
 * Over an overlay's upper dir, what the upper does not name is the
 * baseline's while the lower shows through (merge: no opaque directory
 * on the way): the cost follows the change, not the tree.  *nonempty
 * is cleared for a directory with nothing git can hold.  -1 only when
 * we cannot decide.
 */
static int
walk_dir(struct walk *w, int fd, char *path, size_t len, const git_tree *base,
    int merge, git_oid *out, int *nonempty)
{
	git_treebuilder		*bld = NULL;
	char			**names;
	size_t			 i, n, nlen;
	int			 ret = -1;

	*nonempty = 0;
	if (read_names(fd, &names, &n) == -1) {
		reject(w, len ? path : ".", "unreadable directory: %s",
		    strerror(errno));
		return (0);
	}
	merge = merge && !is_opaque(w, fd);
	if (git_treebuilder_new(&bld, w->repo, merge ? base : NULL) < 0) {
		gitc_err(w->err, w->errlen, "treebuilder");
		goto done;
	}
	for (i = 0; i < n && !w->failed; i++) {
		if (len == 0 && strcmp(names[i], ".git") == 0)
			continue;	/* the agent's own, checked apart */
		nlen = strlen(names[i]);
		if (len + 1 + nlen >= PATH_MAX) {
			path[len] = '\0';
			reject(w, len ? path : ".", "path too long");
			continue;
		}
		if (len != 0)
			path[len] = '/';
		memcpy(path + len + (len != 0), names[i], nlen + 1);
		if (walk_entry(w, fd, names[i], path,
		    len + (len != 0) + nlen, base, merge, bld) == -1)
			goto done;
	}
	if (w->failed)
		goto done;
	path[len] = '\0';
	if (git_treebuilder_entrycount(bld) == 0 && len != 0)
		ret = 0;	/* git holds no empty directory */
	else if (same_as_base(bld, base)) {
		/* Unchanged: nothing to write, not even a freshen. */
		git_oid_cpy(out, git_tree_id(base));
		*nonempty = 1;
		ret = 0;
	} else if (git_treebuilder_write(out, bld) < 0)
		gitc_err(w->err, w->errlen, "%s: write tree", len ? path : ".");
	else {
		*nonempty = 1;
		ret = 0;
	}
 done:
	git_treebuilder_free(bld);
	free_names(names, n);
	return (ret);
}

/*
 * The agent may use git in its tree (objects, index and refs may
 * change), but nothing that makes a later git command there run code
 * or read another repository: the config, the hooks and the
 * alternates must be as provisioned.
 */
static void
check_dotgit(struct walk *w, int treefd, const char *alternates)
{
	/* Each sends git elsewhere: another config, other hooks. */
	static const char *const redirects[] = {
		"commondir", "config.worktree", "gitdir", "modules",
		"worktrees"
	};
	char		 path[64];
	struct stat	 st;
	char		**names;
	size_t		 i, n;
	int		 gfd, hfd;

	if (fstatat(treefd, ".git", &st, AT_SYMLINK_NOFOLLOW) == -1) {
		reject(w, ".git", "missing: %s", strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode) || (gfd = openat(treefd, ".git", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		reject(w, ".git", "not a directory");
		return;
	}
	if (!same_file(gfd, "config", GITW_TREE_CONFIG,
	    strlen(GITW_TREE_CONFIG)))
		reject(w, ".git/config", "differs from the provisioned config");
	if (!same_file(gfd, "objects/info/alternates", alternates,
	    strlen(alternates)))
		reject(w, ".git/objects/info/alternates", "changed");
	for (i = 0; i < sizeof(redirects) / sizeof(redirects[0]); i++)
		if (fstatat(gfd, redirects[i], &st, AT_SYMLINK_NOFOLLOW) ==
		    0) {
			snprintf(path, sizeof(path), ".git/%s", redirects[i]);
			reject(w, path, "not allowed");
		}
	if (fstatat(gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode) || (hfd = openat(gfd, "hooks",
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			reject(w, ".git/hooks", "not a readable directory");
		else {
			if (read_names(hfd, &names, &n) == -1)
				reject(w, ".git/hooks", "unreadable directory");
			else {
				for (i = 0; i < n; i++)
					reject_hook(w, names[i]);
				free_names(names, n);
			}
			close(hfd);
		}
	}
	close(gfd);
}

static void
reject_hook(struct walk *w, const char *name)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), ".git/hooks/%s", name);
	reject(w, path, "hook installed");
}

/* One change, listed and checked. */
static int
diff_add(struct walk *w, const char *path, char st, git_filemode_t omode,
    git_filemode_t nmode, char * const *scope)
{
	struct collect_result	*res = w->res;
	struct collect_change	*nc;

	if ((nc = reallocarray(res->changes, res->nchanges + 1,
	    sizeof(*nc))) == NULL) {
		snprintf(w->err, w->errlen, "out of memory");
		return (-1);
	}
	res->changes = nc;
	if ((nc[res->nchanges].path = strdup(path)) == NULL) {
		snprintf(w->err, w->errlen, "out of memory");
		return (-1);
	}
	nc[res->nchanges++].status = st;
	/* factory never writes a submodule: no commit to check. */
	if (omode == GIT_FILEMODE_COMMIT || nmode == GIT_FILEMODE_COMMIT)
		reject(w, path, "submodule (gitlink) changed");
	if (scope == NULL || scope_match(scope, path) != 1)
		reject(w, path, "outside the scope");
	if (strncasecmp(path, GITC_WORKFLOWS, strlen(GITC_WORKFLOWS)) == 0)
		reject(w, path, "change under " GITC_WORKFLOWS);
	return (w->failed ? -1 : 0);
}

/* What a change of mode is: a link, a gitlink, or a file (either mode). */
static int
diff_kind(git_filemode_t mode)
{
	if (mode == GIT_FILEMODE_LINK)
		return (1);
	return (mode == GIT_FILEMODE_COMMIT ? 2 : 0);
}

/*
 * One name of either tree (oe old, ne new, NULL where absent), at
 * path[0..len): the same id is the same contents, so a directory is
 * only stepped into where the two differ.
 */
static int
diff_entry(struct walk *w, const git_tree_entry *oe,
    const git_tree_entry *ne, char *path, size_t len, char * const *scope)
{
	git_tree	*ot = NULL, *nt = NULL;
	git_filemode_t	 om, nm;
	const char	*name = git_tree_entry_name(oe != NULL ? oe : ne);
	size_t		 nlen = strlen(name);
	int		 ret = -1;
	char		 st;

	om = oe != NULL ? git_tree_entry_filemode(oe) : 0;
	nm = ne != NULL ? git_tree_entry_filemode(ne) : 0;
	if (oe != NULL && ne != NULL && om == nm &&
	    git_oid_equal(git_tree_entry_id(oe), git_tree_entry_id(ne)))
		return (0);
	if (len + 1 + nlen >= PATH_MAX) {
		snprintf(w->err, w->errlen, "diff: %s/%s: path too long",
		    path, name);
		return (-1);
	}
	if (len != 0)
		path[len] = '/';
	memcpy(path + len + (len != 0), name, nlen + 1);
	if (om != GIT_FILEMODE_TREE && nm != GIT_FILEMODE_TREE) {
		st = oe == NULL ? 'A' : ne == NULL ? 'D' :
		    diff_kind(om) != diff_kind(nm) ? 'T' : 'M';
		ret = diff_add(w, path, st, om, nm, scope);
		goto done;
	}
	/* git_tree_entry_cmp() tells a tree from a file of its name. */
	if ((om == GIT_FILEMODE_TREE && git_tree_lookup(&ot, w->repo,
	    git_tree_entry_id(oe)) < 0) || (nm == GIT_FILEMODE_TREE &&
	    git_tree_lookup(&nt, w->repo, git_tree_entry_id(ne)) < 0)) {
		gitc_err(w->err, w->errlen, "diff: %s", path);
		goto done;
	}
	ret = diff_trees(w, ot, nt, path, len + (len != 0) + nlen, scope);
 done:
	path[len] = '\0';
	git_tree_free(ot);
	git_tree_free(nt);
	return (ret);
}

/*
 * Lists what changed from ot to nt (either may be NULL: no entries)
 * and checks it, in git's order, side by side: git_diff_tree_to_tree()
 * read every tree of both, 5 to 8 ms on git/git for a one-file change.
 */
static int
diff_trees(struct walk *w, const git_tree *ot, const git_tree *nt,
    char *path, size_t len, char * const *scope)
{
	const git_tree_entry	*oe, *ne;
	size_t			 oi = 0, ni = 0, on, nn;
	int			 c, rc;

	on = ot != NULL ? git_tree_entrycount(ot) : 0;
	nn = nt != NULL ? git_tree_entrycount(nt) : 0;
	while (oi < on || ni < nn) {
		oe = oi < on ? git_tree_entry_byindex(ot, oi) : NULL;
		ne = ni < nn ? git_tree_entry_byindex(nt, ni) : NULL;
		if (oe == NULL || ne == NULL)
			c = oe == NULL ? 1 : -1;
		else
			c = git_tree_entry_cmp(oe, ne);
		if (c < 0)
			rc = diff_entry(w, oe, NULL, path, len, scope);
		else if (c > 0)
			rc = diff_entry(w, NULL, ne, path, len, scope);
		else
			rc = diff_entry(w, oe, ne, path, len, scope);
		if (rc == -1)
			return (-1);
		oi += c <= 0;
		ni += c >= 0;
	}
	return (0);
}

/* Lists what changed against the baseline and checks it. */
static int
diff_changes(struct walk *w, git_tree *btree, const git_oid *toid,
    char * const *scope)
{
	git_tree	*tree = NULL;
	char		 path[PATH_MAX];
	int		 ret;

	if (git_tree_lookup(&tree, w->repo, toid) < 0) {
		gitc_err(w->err, w->errlen, "diff against the baseline");
		return (-1);
	}
	path[0] = '\0';
	ret = diff_trees(w, btree, tree, path, 0, scope);
	if (ret == -1)
		w->failed = 1;
	git_tree_free(tree);
	return (ret);
}

/*
 * attempt_dir/collect.git: bare, ours, with alternates to the
 * repository's objects.  Reused if a previous collect made it.
 */
static int
open_scratch(const char *attempt_dir, const char *alternates,
    git_repository **repo, char *err, size_t errlen)
{
	git_repository_init_options	 opts;
	char				 path[PATH_MAX];
	int				 fd, ok;
	size_t				 len = strlen(alternates);

	*repo = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/collect.git",
	    attempt_dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", attempt_dir);
		return (-1);
	}
	git_repository_init_options_init(&opts,
	    GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKDIR;
	if (git_repository_init_ext(repo, path, &opts) < 0) {
		gitc_err(err, errlen, "init %s", path);
		return (-1);
	}
	git_repository_free(*repo);
	*repo = NULL;
	strlcat(path, "/objects/info/alternates", sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	ok = fd != -1 && write(fd, alternates, len) == (ssize_t)len;
	if (fd == -1 || close(fd) == -1 || !ok) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		return (-1);
	}
	path[strlen(path) - strlen("/objects/info/alternates")] = '\0';
	if (git_repository_open_bare(repo, path) < 0) {
		gitc_err(err, errlen, "open %s", path);
		return (-1);
	}
	return (0);
}

static int
make_commit(const struct collect_req *req, git_repository *repo,
    const git_commit *parent, const git_oid *toid, git_oid *out, char *err,
    size_t errlen)
{
	git_signature	*sig = NULL;
	git_tree	*tree = NULL;
	char		*msg = NULL;
	int		 ret = -1;

	if (asprintf(&msg, "%s\n\nAttempt-Id: %s\nManifest-Digest: %s\n",
	    req->title, req->attempt_id, req->manifest_digest) == -1) {
		msg = NULL;
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (git_signature_now(&sig, GITW_SIGNATURE_NAME,
	    GITW_SIGNATURE_EMAIL) < 0 ||
	    git_tree_lookup(&tree, repo, toid) < 0 ||
	    git_commit_create(out, repo, NULL, sig, sig, NULL, msg, tree, 1,
	    &parent) < 0) {
		gitc_err(err, errlen, "commit of attempt %s", req->attempt_id);
		goto done;
	}
	ret = 0;
 done:
	free(msg);
	git_tree_free(tree);
	git_signature_free(sig);
	return (ret);
}

static int
check_req(const struct collect_req *req, char *err, size_t errlen)
{
	if (!gitw_attempt_id_valid(req->attempt_id)) {
		snprintf(err, errlen, "invalid attempt id \"%s\"",
		    req->attempt_id);
		return (-1);
	}
	if (req->title[0] == '\0' || strpbrk(req->title, "\r\n") != NULL ||
	    strpbrk(req->manifest_digest, "\r\n") != NULL ||
	    req->manifest_digest[0] == '\0') {
		snprintf(err, errlen, "attempt %s: title or digest is not "
		    "one line", req->attempt_id);
		return (-1);
	}
	if (req->upper == NULL || req->attempt_dir == NULL) {
		snprintf(err, errlen, "attempt %s: no upper dir", req->attempt_id);
		return (-1);
	}
	if (!hex_valid(req->baseline_hex, GITW_HEXSZ)) {
		snprintf(err, errlen, "baseline \"%s\" is not a 40-hex id",
		    req->baseline_hex);
		return (-1);
	}
	return (0);
}

int
collect(const struct collect_req *req, struct collect_result *res, char *err,
    size_t errlen)
{
	struct walk	 w;
	git_commit	*base = NULL;
	git_tree	*btree = NULL;
	git_oid		 boid, toid, coid;
	char		 objects[PATH_MAX], alt[PATH_MAX + 1], tree[PATH_MAX];
	char		 path[PATH_MAX];
	int		 tfd = -1, has, ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	w.res = res;
	w.limit = req->tree_limit;
	w.err = err;
	w.errlen = errlen;
	if (check_req(req, err, errlen) == -1 ||
	    gitw_objects_dir(req->repo_path, objects, sizeof(objects), err,
	    errlen) == -1)
		return (-1);
	snprintf(alt, sizeof(alt), "%s\n", objects);
	if (open_scratch(req->attempt_dir, alt, &w.repo, err, errlen) == -1)
		return (-1);
	if (git_repository_odb(&w.odb, w.repo) < 0 ||
	    git_oid_fromstr(&boid, req->baseline_hex) < 0 ||
	    git_commit_lookup(&base, w.repo, &boid) < 0 ||
	    git_commit_tree(&btree, base) < 0) {
		gitc_err(err, errlen, "%s: baseline %s", req->repo_path,
		    req->baseline_hex);
		goto done;
	}
	if (strlcpy(tree, req->upper, sizeof(tree)) >= sizeof(tree)) {
		snprintf(err, errlen, "%s: path too long", req->upper);
		goto done;
	}
	if ((tfd = open(tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", tree, strerror(errno));
		goto done;
	}
	path[0] = '\0';
	if (walk_dir(&w, tfd, path, 0, btree, 1, &toid, &has) == -1)
		goto done;
	check_dotgit(&w, tfd, alt);
	if (w.failed)
		goto done;
	if (!w.toobig) {
		git_oid_tostr(res->tree_hex, sizeof(res->tree_hex), &toid);
		if (diff_changes(&w, btree, &toid, req->scope) == -1)
			goto done;
		/* Said only alone: a refused entry also looks unchanged. */
		if (res->nrejects == 0 &&
		    git_oid_equal(&toid, git_tree_id(btree)))
			reject(&w, "tree", "no change");
	}
	if (w.failed)
		goto done;
	if (res->nrejects > 0) {
		ret = 0;
		goto done;
	}
	if (make_commit(req, w.repo, base, &toid, &coid, err, errlen) == -1)
		goto done;
	git_oid_tostr(res->commit_hex, sizeof(res->commit_hex), &coid);
	if (gitw_bundle_write(w.repo, res->commit_hex, req->baseline_hex,
	    req->attempt_id, req->bundle_path, res->bundle_sha256,
	    &res->bundle_size, err, errlen) == -1)
		goto done;
	ret = 0;
 done:
	if (tfd != -1)
		close(tfd);
	git_tree_free(btree);
	git_commit_free(base);
	git_odb_free(w.odb);
	git_repository_free(w.repo);
	return (ret);
}

void
collect_result_free(struct collect_result *res)
{
	size_t	 i;

	for (i = 0; i < res->nchanges; i++)
		free(res->changes[i].path);
	free(res->changes);
	for (i = 0; i < res->nrejects; i++)
		free(res->rejects[i]);
	free(res->rejects);
	memset(res, 0, sizeof(*res));
}
