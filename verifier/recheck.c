/*
 * Re-deriving an attempt's facts from the scratch repository alone and
 * the frozen manifest: the worker's checks are done again here, by a
 * process that never saw the attempt tree, plus a secret scan.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
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

#include "conf.h"
#include "factory.h"
#include "gitcommon.h"
#include "verifier.h"
#include "util.h"

struct check {
	git_repository	 *repo;
	git_tree	 *tree;		/* the commit's */
	char		***v;
	size_t		 *n;
	int		  failed;
};

static void	 finding(struct check *, const char *, const char *, ...)
		    __attribute__((__format__ (printf, 3, 4)));
static int	 has_dotgit(const char *);
static const char *link_escapes(const char *, const char *, size_t);
static size_t	 run(const char *, size_t, int (*)(int));
static int	 is_tok(int);
static int	 is_upalnum(int);
static int	 is_pemlabel(int);
static int	 is_patchar(int);
static const char *secret_in(const char *, size_t);
static void	 check_modes(struct check *, const char *);
static void	 check_link(struct check *, const git_diff_delta *);
static void	 scan_delta(struct check *, git_diff *, size_t,
		    const git_diff_delta *);
static void	 check_delta(struct check *, git_diff *, size_t,
		    char * const *);
static void	 check_message(struct check *, const git_commit *,
		    const struct recheck_req *);
static int	 gerr(char *, size_t, const char *);
static int	 va_parent(int, const char *, int, char *, size_t, const char **);
static int	 va_delete(int, const char *);
static int	 va_write(git_repository *, int, const git_diff_file *);
static int	 vapply(git_repository *, git_commit *, const char *, char *,
		    size_t);


static void
finding(struct check *c, const char *path, const char *fmt, ...)
{
	char	 reason[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (strv_addf(c->v, c->n, "%s: %s", path, reason) == -1)
		c->failed = 1;
}

static int
gerr(char *err, size_t errlen, const char *what)
{
	const git_error	*e = git_error_last();

	snprintf(err, errlen, "%s%s%s", what, e != NULL ? ": " : "",
	    e != NULL ? e->message : "");
	git_error_clear();
	return (-1);
}

static int
has_dotgit(const char *path)
{
	const char	*e;

	for (;; path = e + 1) {
		if ((e = strchr(path, '/')) == NULL)
			return (gitc_is_dotgit(path, strlen(path)));
		if (gitc_is_dotgit(path, e - path))
			return (1);
	}
}

/*
 * NULL if a symlink at path with this target stays inside the tree,
 * resolved lexically from the link's directory; ".." after a normal
 * component is refused so that links cannot be chained out.
 */
static const char *
link_escapes(const char *path, const char *t, size_t tlen)
{
	const char	*p, *e, *end = t + tlen;
	long		 depth = 0;
	int		 descended = 0;

	if (tlen == 0)
		return ("empty symlink");
	if (memchr(t, '\0', tlen) != NULL)
		return ("NUL in symlink target");
	if (t[0] == '/')
		return ("absolute symlink");
	for (p = path; (p = strchr(p, '/')) != NULL; p++)
		depth++;
	for (p = t; p < end; p = e + 1) {
		if ((e = memchr(p, '/', end - p)) == NULL)
			e = end;
		if (e == p || (e - p == 1 && p[0] == '.'))
			continue;
		if (e - p == 2 && p[0] == '.' && p[1] == '.') {
			if (descended)
				return ("symlink target not normalized");
			if (--depth < 0)
				return ("symlink escapes the tree");
			continue;
		}
		if (gitc_is_dotgit(p, e - p))
			return ("symlink into .git");
		descended = 1;
	}
	return (NULL);
}

static int
is_tok(int ch)
{
	return (isascii(ch) && isalnum(ch));
}

static int
is_upalnum(int ch)
{
	return ((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'));
}

static int
is_pemlabel(int ch)
{
	return (is_upalnum(ch) || ch == ' ');
}

/* How many bytes from p on satisfy ok(). */
static size_t
run(const char *p, size_t len, int (*ok)(int))
{
	size_t	 i;

	for (i = 0; i < len && ok((unsigned char)p[i]); i++)
		;
	return (i);
}

static int
is_patchar(int ch)
{
	return (is_tok(ch) || ch == '_');
}

/* The kind of the first secret in one line, or NULL. */
static const char *
secret_in(const char *s, size_t len)
{
	static const char *const gh[] = {
		"ghp_", "gho_", "ghu_", "ghs_", "ghr_"
	};
	size_t	 i, k, r;

	for (i = 0; i < len; i++) {
		const char	*p = s + i;
		size_t		 left = len - i;

		if (left >= 11 && memcmp(p, "-----BEGIN ", 11) == 0) {
			r = run(p + 11, left - 11, is_pemlabel);
			if (r >= 11 && left - 11 - r >= 5 &&
			    memcmp(p + 11 + r - 11, "PRIVATE KEY", 11) == 0 &&
			    memcmp(p + 11 + r, "-----", 5) == 0)
				return ("private key block");
		}
		for (k = 0; k < sizeof(gh) / sizeof(gh[0]); k++)
			if (left >= 4 && memcmp(p, gh[k], 4) == 0 &&
			    run(p + 4, left - 4, is_tok) >= 36)
				return ("GitHub token");
		if (left >= 11 && memcmp(p, "github_pat_", 11) == 0 &&
		    run(p + 11, left - 11, is_patchar) >= 22)
			return ("GitHub token");
		if (left >= 20 && (memcmp(p, "AKIA", 4) == 0 ||
		    memcmp(p, "ASIA", 4) == 0) &&
		    run(p + 4, 16, is_upalnum) == 16)
			return ("AWS access key id");
		if (left >= 5 && memcmp(p, "xox", 3) == 0 &&
		    strchr("baprs", p[3]) != NULL && p[3] != '\0' &&
		    p[4] == '-')
			return ("Slack token");
	}
	return (NULL);
}

int
secret_scan(const char *label, const char *buf, size_t len, char ***v,
    size_t *n)
{
	const char	*p = buf, *end = buf + len, *nl, *why;
	size_t		 line = 1;

	for (; p < end; p = nl + 1, line++) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		if ((why = secret_in(p, nl - p)) != NULL &&
		    strv_addf(v, n, "%s:%zu: %s", label, line, why) == -1)
			return (-1);
	}
	return (0);
}

/* Every component of a changed path has a mode we allow. */
static void
check_modes(struct check *c, const char *path)
{
	git_tree_entry	*e;
	char		 buf[PATH_MAX], *slash;
	unsigned	 mode;

	if (strlcpy(buf, path, sizeof(buf)) >= sizeof(buf)) {
		finding(c, path, "path too long");
		return;
	}
	for (slash = buf; (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		if (git_tree_entry_bypath(&e, c->tree, buf) == 0) {
			if (git_tree_entry_filemode_raw(e) != GIT_FILEMODE_TREE)
				finding(c, buf, "mode %06o not allowed",
				    git_tree_entry_filemode_raw(e));
			git_tree_entry_free(e);
		}
		*slash = '/';
	}
	if (git_tree_entry_bypath(&e, c->tree, path) != 0) {
		git_error_clear();
		return;		/* deleted */
	}
	mode = git_tree_entry_filemode_raw(e);
	if (mode == GIT_FILEMODE_COMMIT)
		finding(c, path, "gitlink");
	else if (mode != GIT_FILEMODE_BLOB &&
	    mode != GIT_FILEMODE_BLOB_EXECUTABLE && mode != GIT_FILEMODE_LINK)
		finding(c, path, "mode %06o not allowed", mode);
	git_tree_entry_free(e);
}

static void
check_link(struct check *c, const git_diff_delta *d)
{
	git_blob	*b;
	const char	*why;

	if (git_blob_lookup(&b, c->repo, &d->new_file.id) < 0) {
		git_error_clear();
		finding(c, d->new_file.path, "symlink blob missing");
		return;
	}
	why = link_escapes(d->new_file.path, git_blob_rawcontent(b),
	    git_blob_rawsize(b));
	if (why != NULL)
		finding(c, d->new_file.path, "%s", why);
	git_blob_free(b);
}

/* Scans what the change added: added lines, or a whole binary blob. */
static void
scan_delta(struct check *c, git_diff *diff, size_t i,
    const git_diff_delta *d)
{
	const git_diff_line	*l;
	git_patch		*patch = NULL;
	git_blob		*b = NULL;
	const char		*why;
	size_t			 h, j, nlines;

	if (git_patch_from_diff(&patch, diff, i) < 0 || patch == NULL) {
		git_error_clear();
		finding(c, d->new_file.path, "cannot diff");
		return;
	}
	if (d->flags & GIT_DIFF_FLAG_BINARY) {
		if (git_blob_lookup(&b, c->repo, &d->new_file.id) < 0) {
			git_error_clear();
			finding(c, d->new_file.path, "blob missing");
		} else if (secret_scan(d->new_file.path,
		    git_blob_rawcontent(b), git_blob_rawsize(b), c->v,
		    c->n) == -1)
			c->failed = 1;
		git_blob_free(b);
		git_patch_free(patch);
		return;
	}
	for (h = 0; h < git_patch_num_hunks(patch); h++) {
		nlines = git_patch_num_lines_in_hunk(patch, h);
		for (j = 0; j < nlines; j++) {
			if (git_patch_get_line_in_hunk(&l, patch, h, j) < 0)
				continue;
			if (l->origin != GIT_DIFF_LINE_ADDITION)
				continue;
			if ((why = secret_in(l->content, l->content_len)) !=
			    NULL)
				finding(c, d->new_file.path, "%s on line %d",
				    why, l->new_lineno);
		}
	}
	git_patch_free(patch);
}

static void
check_delta(struct check *c, git_diff *diff, size_t i, char * const *scope)
{
	const git_diff_delta	*d = git_diff_get_delta(diff, i);
	const char		*path;

	path = d->status == GIT_DELTA_DELETED ? d->old_file.path :
	    d->new_file.path;
	if (has_dotgit(path))
		finding(c, path, "'.git' path component");
	if (scope == NULL || scope_match(scope, path) != 1)
		finding(c, path, "outside the scope");
	if (strncasecmp(path, GITC_WORKFLOWS, strlen(GITC_WORKFLOWS)) == 0)
		finding(c, path, "change under " GITC_WORKFLOWS);
	if (d->status == GIT_DELTA_DELETED)
		return;
	check_modes(c, path);
	if (d->new_file.mode == GIT_FILEMODE_LINK)
		check_link(c, d);
	else if (d->new_file.mode == GIT_FILEMODE_BLOB ||
	    d->new_file.mode == GIT_FILEMODE_BLOB_EXECUTABLE)
		scan_delta(c, diff, i, d);
}

static void
check_message(struct check *c, const git_commit *commit,
    const struct recheck_req *req)
{
	const char	*msg = git_commit_message_raw(commit), *nl;
	char		*want;
	size_t		 tlen = strlen(req->title);

	if (asprintf(&want, "%s\n\nAttempt-Id: %s\nManifest-Digest: %s\n",
	    req->title, req->attempt_id, req->manifest_digest) == -1) {
		c->failed = 1;
		return;
	}
	if (strcmp(msg, want) != 0) {
		nl = strchr(msg, '\n');
		if (nl == NULL || (size_t)(nl - msg) != tlen ||
		    strncmp(msg, req->title, tlen) != 0)
			finding(c, "commit", "title differs from the manifest");
		else
			finding(c, "commit", "trailers differ from the "
			    "manifest");
	}
	free(want);
}

int
recheck(const struct recheck_req *req, struct recheck_result *res, char *err,
    size_t errlen)
{
	git_diff_options	 opts;
	struct check		 c;
	git_commit		*commit = NULL, *base = NULL;
	git_tree		*btree = NULL;
	git_diff		*diff = NULL;
	git_oid			 oid, boid;
	size_t			 i, n;
	int			 ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&c, 0, sizeof(c));
	c.v = &res->findings;
	c.n = &res->nfindings;
	if (git_repository_open_bare(&c.repo, req->gitdir) < 0)
		return (gerr(err, errlen, req->gitdir));
	if (git_oid_fromstr(&oid, req->commit_hex) < 0 ||
	    git_commit_lookup(&commit, c.repo, &oid) < 0 ||
	    git_commit_tree(&c.tree, commit) < 0) {
		gerr(err, errlen, req->commit_hex);
		goto done;
	}
	if (git_oid_fromstr(&boid, req->baseline_hex) < 0 ||
	    git_commit_lookup(&base, c.repo, &boid) < 0 ||
	    git_commit_tree(&btree, base) < 0) {
		gerr(err, errlen, req->baseline_hex);
		goto done;
	}
	strlcpy(res->commit_hex, req->commit_hex, sizeof(res->commit_hex));
	git_oid_tostr(res->tree_hex, sizeof(res->tree_hex),
	    git_tree_id(c.tree));
	if (git_commit_parentcount(commit) != 1 ||
	    !git_oid_equal(git_commit_parent_id(commit, 0), &boid))
		finding(&c, "commit", "parent is not the baseline %s",
		    req->baseline_hex);
	check_message(&c, commit, req);
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if (git_diff_tree_to_tree(&diff, c.repo, btree, c.tree, &opts) < 0) {
		gerr(err, errlen, "diff against the baseline");
		goto done;
	}
	n = git_diff_num_deltas(diff);
	if (n == 0)
		finding(&c, "tree", "no change");
	for (i = 0; i < n && !c.failed; i++)
		check_delta(&c, diff, i, req->scope);
	if (req->log != NULL && !c.failed && secret_scan("log", req->log,
	    req->loglen, c.v, c.n) == -1)
		c.failed = 1;
	if (c.failed) {
		snprintf(err, errlen, "recheck of %s: out of memory",
		    req->commit_hex);
		goto done;
	}
	res->accepted = res->nfindings == 0;
	ret = 0;
 done:
	git_diff_free(diff);
	git_tree_free(btree);
	git_tree_free(c.tree);
	git_commit_free(base);
	git_commit_free(commit);
	git_repository_free(c.repo);
	if (ret == -1)
		res->accepted = 0;
	return (ret);
}

void
recheck_result_free(struct recheck_result *res)
{
	size_t	 i;

	for (i = 0; i < res->nfindings; i++)
		free(res->findings[i]);
	free(res->findings);
	memset(res, 0, sizeof(*res));
}

/*
 * The directory fd of path's parent below top (made if mkdirs), and in
 * *leaf the last component; every step refuses a symbolic link, so no
 * entry of the tree can send a write elsewhere.  -1 with errno.
 */
static int
va_parent(int top, const char *path, int mkdirs, char *buf, size_t len,
    const char **leaf)
{
	char	*p, *slash;
	int	 fd, next;

	if (strlcpy(buf, path, len) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = dup(top)) == -1)
		return (-1);
	for (p = buf; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		*slash = '\0';
		if (mkdirs && mkdirat(fd, p, 0755) == -1 && errno != EEXIST) {
			close(fd);
			return (-1);
		}
		next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		if (next == -1)
			return (-1);
		fd = next;
	}
	*leaf = p;
	return (fd);
}

/*
 * Removes path, then each directory above it left empty: git holds no
 * empty directory, so the tree looks as a checkout of the commit does.
 */
static int
va_delete(int top, const char *path)
{
	char		 buf[PATH_MAX];
	const char	*leaf;
	char		*slash;
	int		 fd;

	if ((fd = va_parent(top, path, 0, buf, sizeof(buf), &leaf)) == -1)
		return (-1);
	if (unlinkat(fd, leaf, 0) == -1 && errno != ENOENT) {
		close(fd);
		return (-1);
	}
	close(fd);
	strlcpy(buf, path, sizeof(buf));
	while ((slash = strrchr(buf, '/')) != NULL) {
		*slash = '\0';
		if (unlinkat(top, buf, AT_REMOVEDIR) == -1)
			break;		/* not empty, or not ours to judge */
	}
	return (0);
}

/* The blob of f at f->path, with its mode, replacing what is there. */
static int
va_write(git_repository *repo, int top, const git_diff_file *f)
{
	git_blob	*b = NULL;
	char		 buf[PATH_MAX], *target = NULL;
	const char	*leaf, *data;
	size_t		 len, off = 0;
	ssize_t		 n;
	int		 dfd, fd = -1, ret = -1, saved;

	if ((dfd = va_parent(top, f->path, 1, buf, sizeof(buf), &leaf)) == -1)
		return (-1);
	if (git_blob_lookup(&b, repo, &f->id) < 0) {
		git_error_clear();
		errno = ENOENT;
		goto done;
	}
	data = git_blob_rawcontent(b);
	len = git_blob_rawsize(b);
	if (unlinkat(dfd, leaf, 0) == -1 && errno != ENOENT)
		goto done;
	if (f->mode == GIT_FILEMODE_LINK) {
		if (len == 0 || len >= PATH_MAX ||
		    memchr(data, '\0', len) != NULL ||
		    (target = strndup(data, len)) == NULL) {
			errno = EINVAL;
			goto done;
		}
		ret = symlinkat(target, dfd, leaf);
		goto done;
	}
	if ((fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, f->mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 :
	    0644)) == -1)
		goto done;
	while (off < len) {
		if ((n = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			goto done;
		}
		off += n;
	}
	ret = 0;
 done:
	saved = errno;
	if (fd != -1 && close(fd) == -1 && ret == 0) {
		saved = errno;
		ret = -1;
	}
	close(dfd);
	free(target);
	git_blob_free(b);
	errno = saved;
	return (ret);
}

/*
 * dest already shows the commit's parent, the baseline (the parent's
 * overlay of its pristine checkout): only the commit's changes are
 * written, through it.  Deletions first, so a directory that becomes
 * a file (or the reverse) is out of the way when the other comes.
 */
static int
vapply(git_repository *repo, git_commit *commit, const char *dest, char *err,
    size_t errlen)
{
	git_diff_options	 opts;
	const git_diff_delta	*d;
	git_commit		*parent = NULL;
	git_tree		*pt = NULL, *ct = NULL;
	git_diff		*diff = NULL;
	size_t			 i, n;
	int			 top, pass, ret = -1;

	if ((top = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", dest, strerror(errno));
		return (-1);
	}
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if (git_commit_parent(&parent, commit, 0) < 0 ||
	    git_commit_tree(&pt, parent) < 0 ||
	    git_commit_tree(&ct, commit) < 0 ||
	    git_diff_tree_to_tree(&diff, repo, pt, ct, &opts) < 0) {
		gerr(err, errlen, "diff against the baseline");
		goto done;
	}
	n = git_diff_num_deltas(diff);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			d = git_diff_get_delta(diff, i);
			if (pass == 0 && (d->status == GIT_DELTA_DELETED ||
			    d->status == GIT_DELTA_TYPECHANGE) &&
			    va_delete(top, d->old_file.path) == -1) {
				snprintf(err, errlen, "%s/%s: %s", dest,
				    d->old_file.path, strerror(errno));
				goto done;
			}
			if (pass == 1 && d->status != GIT_DELTA_DELETED &&
			    va_write(repo, top, &d->new_file) == -1) {
				snprintf(err, errlen, "%s/%s: %s", dest,
				    d->new_file.path, strerror(errno));
				goto done;
			}
		}
	}
	ret = 0;
 done:
	git_diff_free(diff);
	git_tree_free(ct);
	git_tree_free(pt);
	git_commit_free(parent);
	close(top);
	return (ret);
}

int
vcheckout(const char *gitdir, const char *commit_hex, const char *dest,
    char *err, size_t errlen)
{
	struct stat		 st;
	git_checkout_options	 opts;
	git_repository		*repo = NULL;
	git_commit		*commit = NULL;
	git_oid			 oid;
	int			 ret = -1;

	/* Made by factoryd: the baseline, the overlay on its pristine tree. */
	if (lstat(dest, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (git_repository_open_bare(&repo, gitdir) < 0)
			return (gerr(err, errlen, gitdir));
		if (git_oid_fromstr(&oid, commit_hex) < 0 ||
		    git_commit_lookup(&commit, repo, &oid) < 0)
			gerr(err, errlen, commit_hex);
		else
			ret = vapply(repo, commit, dest, err, errlen);
		goto done;
	}
	if (mkdir(dest, 0755) == -1) {
		snprintf(err, errlen, "%s: %s", dest, strerror(errno));
		return (-1);
	}
	if (git_repository_open_bare(&repo, gitdir) < 0)
		return (gerr(err, errlen, gitdir));
	if (git_oid_fromstr(&oid, commit_hex) < 0 ||
	    git_commit_lookup(&commit, repo, &oid) < 0) {
		gerr(err, errlen, commit_hex);
		goto done;
	}
	/*
	 * A gitlink is looked up as a submodule, which libgit2 refuses in
	 * a bare repository: our scratch one gets the checkout as its work
	 * tree, in memory only (nothing is written to its config).
	 */
	if (git_repository_set_workdir(repo, dest, 0) < 0) {
		gerr(err, errlen, dest);
		goto done;
	}
	git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);
	opts.checkout_strategy = GIT_CHECKOUT_FORCE |
	    GIT_CHECKOUT_DONT_UPDATE_INDEX;
	/* The validation runs on the bundle's exact bytes. */
	opts.disable_filters = 1;
	opts.target_directory = dest;
	if (git_checkout_tree(repo, (git_object *)commit, &opts) < 0) {
		gerr(err, errlen, dest);
		goto done;
	}
	ret = 0;
 done:
	git_commit_free(commit);
	git_repository_free(repo);
	return (ret);
}
