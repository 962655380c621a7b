/*
 * Resolving a baseline and provisioning an attempt tree.
 *
 * The attempt tree's .git is made here, file by file, rather than by
 * cloning: the agent gets exactly the files we name (no hooks, no
 * config beyond two keys), and the repository's objects are reached
 * read-only through alternates, so nothing is copied and the
 * repository's object store is never written.
 *
 * HEAD is detached at the baseline: the agent's own commits, if any,
 * are ignored by collect, and no branch of ours appears in its .git.
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
#include <unistd.h>

#include <git2.h>

#include "factory.h"
#include "gitcommon.h"
#include "worker.h"

static int	write_at(int, const char *, const char *, char *, size_t);
static int	mkdir_at(int, const char *, const char *, char *, size_t);
static int	make_gitdir(int, const char *, const char *, char *, size_t);
static int	checkout_baseline(const char *, const git_oid *, char *,
		    size_t);
static int	write_index(git_commit *, const char *, char *, size_t);


int
gitw_init(char *err, size_t errlen)
{
	/*
	 * The repositories belong to the operator, not to _factoryw, and
	 * the only repositories we open are those and our own scratch
	 * ones: an agent's .git is read as plain files, never opened.
	 */
	return (gitc_init(GITC_STRICT, err, errlen));
}

int
gitw_attempt_id_valid(const char *id)
{
	size_t	 i, len;

	len = strlen(id);
	if (len == 0 || len > ATTEMPT_ID_MAX || id[0] == '.' ||
	    id[0] == '-' || strstr(id, "..") != NULL)
		return (0);
	if (len >= 5 && strcmp(id + len - 5, ".lock") == 0)
		return (0);
	for (i = 0; i < len; i++) {
		if (!isalnum((unsigned char)id[i]) && id[i] != '-' &&
		    id[i] != '_' && id[i] != '.')
			return (0);
	}
	return (1);
}

int
gitw_objects_dir(const char *repo_path, char *out, size_t outlen, char *err,
    size_t errlen)
{
	git_repository	*repo = NULL;
	char		 path[PATH_MAX];
	int		 n;

	if (git_repository_open_ext(&repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	/* commondir: a linked worktree keeps its objects there. */
	n = snprintf(path, sizeof(path), "%sobjects",
	    git_repository_commondir(repo));
	git_repository_free(repo);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, errlen, "%s: objects path too long", repo_path);
		return (-1);
	}
	if (realpath(path, out) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (strlen(out) >= outlen || strchr(out, '\n') != NULL) {
		snprintf(err, errlen, "%s: unusable objects path", path);
		return (-1);
	}
	return (0);
}

int
resolve(const char *repo_path, const char *ref, char out[GITW_HEXSZ + 1],
    char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_object	*obj = NULL, *commit = NULL;
	git_oid		 oid;
	size_t		 i;
	int		 ret = -1;

	if (git_repository_open_ext(&repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	for (i = 0; ref[i] != '\0' && isxdigit((unsigned char)ref[i]); i++)
		;
	if (i == GITW_HEXSZ && ref[i] == '\0') {
		if (git_oid_fromstr(&oid, ref) < 0 ||
		    git_object_lookup(&obj, repo, &oid, GIT_OBJECT_ANY) < 0) {
			gitc_err(err, errlen, "%s: object %s", repo_path, ref);
			goto done;
		}
	} else if (ref[0] == '\0' || ref[0] == '-' ||
	    git_revparse_single(&obj, repo, ref) < 0) {
		gitc_err(err, errlen, "%s: cannot resolve \"%s\"", repo_path,
		    ref);
		goto done;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		gitc_err(err, errlen, "%s: \"%s\" is not a commit", repo_path,
		    ref);
		goto done;
	}
	git_oid_tostr(out, GITW_HEXSZ + 1, git_object_id(commit));
	ret = 0;
 done:
	git_object_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return (ret);
}

static int
write_at(int dirfd, const char *name, const char *data, char *err,
    size_t errlen)
{
	size_t	 len = strlen(data), off = 0;
	ssize_t	 n;
	int	 fd;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd == -1) {
		snprintf(err, errlen, "create .git/%s: %s", name,
		    strerror(errno));
		return (-1);
	}
	while (off < len) {
		if ((n = write(fd, data + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "write .git/%s: %s", name,
			    strerror(errno));
			close(fd);
			return (-1);
		}
		off += n;
	}
	if (close(fd) == -1) {
		snprintf(err, errlen, "close .git/%s: %s", name,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

static int
mkdir_at(int dirfd, const char *name, const char *what, char *err,
    size_t errlen)
{
	if (mkdirat(dirfd, name, 0755) == -1) {
		snprintf(err, errlen, "mkdir %s%s: %s", what, name,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* Makes tree/.git by hand; gitfd is tree/.git, already created. */
static int
make_gitdir(int gitfd, const char *repo_path, const char *baseline,
    char *err, size_t errlen)
{
	char	 objects[PATH_MAX], alt[PATH_MAX + 2], head[GITW_HEXSZ + 2];

	if (gitw_objects_dir(repo_path, objects, sizeof(objects), err,
	    errlen) == -1)
		return (-1);
	snprintf(alt, sizeof(alt), "%s\n", objects);
	snprintf(head, sizeof(head), "%s\n", baseline);
	if (write_at(gitfd, "HEAD", head, err, errlen) == -1 ||
	    write_at(gitfd, "config", GITW_TREE_CONFIG, err, errlen) == -1 ||
	    mkdir_at(gitfd, "objects", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "objects/info", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "objects/pack", ".git/", err, errlen) == -1 ||
	    write_at(gitfd, "objects/info/alternates", alt, err,
	    errlen) == -1 ||
	    mkdir_at(gitfd, "refs", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "refs/heads", ".git/", err, errlen) == -1 ||
	    mkdir_at(gitfd, "refs/tags", ".git/", err, errlen) == -1)
		return (-1);
	return (0);
}

/* Checks the baseline out into tree/ and writes the matching index. */
static int
checkout_baseline(const char *tree, const git_oid *oid, char *err,
    size_t errlen)
{
	git_checkout_options	 opts;
	git_repository		*repo = NULL;
	git_commit		*commit = NULL;
	char			 hex[GITW_HEXSZ + 1];
	int			 ret = -1;

	git_oid_tostr(hex, sizeof(hex), oid);
	if (git_repository_open_ext(&repo, tree,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open %s", tree);
		return (-1);
	}
	if (git_commit_lookup(&commit, repo, oid) < 0) {
		gitc_err(err, errlen, "%s: baseline %s", tree, hex);
		goto done;
	}
	git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);
	opts.checkout_strategy = GIT_CHECKOUT_FORCE;
	/*
	 * The files hold the blobs' exact bytes (no eol, ident or filter
	 * conversion): collect hashes raw files, and a clean checkout
	 * must compare equal to the baseline.
	 */
	opts.disable_filters = 1;
	if (git_checkout_tree(repo, (git_object *)commit, &opts) < 0) {
		gitc_err(err, errlen, "checkout %s into %s", hex, tree);
		goto done;
	}
	ret = 0;
 done:
	git_commit_free(commit);
	git_repository_free(repo);
	return (ret);
}

int
provision(const char *repo_path, const char *baseline, const char *attempt_dir,
    char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_commit	*commit = NULL;
	git_oid		 oid;
	char		 tree[PATH_MAX];
	int		 afd = -1, tfd = -1, gfd = -1, ret = -1;

	if (strlen(baseline) != GITW_HEXSZ ||
	    git_oid_fromstr(&oid, baseline) < 0) {
		snprintf(err, errlen, "baseline \"%s\" is not a 40-hex id",
		    baseline);
		git_error_clear();
		return (-1);
	}
	/* The baseline must be a commit of the repository itself. */
	if (git_repository_open_ext(&repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	if (git_commit_lookup(&commit, repo, &oid) < 0) {
		gitc_err(err, errlen, "%s: baseline %s", repo_path, baseline);
		goto done;
	}
	if ((size_t)snprintf(tree, sizeof(tree), "%s/tree", attempt_dir) >=
	    sizeof(tree)) {
		snprintf(err, errlen, "%s: path too long", attempt_dir);
		goto done;
	}
	if ((afd = open(attempt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", attempt_dir, strerror(errno));
		goto done;
	}
	if (mkdirat(afd, "tree", 0755) == -1 ||
	    (tfd = openat(afd, "tree", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 ||
	    mkdirat(tfd, ".git", 0755) == -1 ||
	    (gfd = openat(tfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s/.git: %s", tree, strerror(errno));
		goto done;
	}
	if (make_gitdir(gfd, repo_path, baseline, err, errlen) == -1)
		goto done;
	if (checkout_baseline(tree, &oid, err, errlen) == -1)
		goto done;
	ret = 0;
 done:
	if (gfd != -1)
		close(gfd);
	if (tfd != -1)
		close(tfd);
	if (afd != -1)
		close(afd);
	git_commit_free(commit);
	git_repository_free(repo);
	return (ret);
}

/*
 * The pristine checkout of a baseline into dest, an empty directory
 * the parent made for us: the blobs' exact bytes, no .git, no index
 * (nothing reads one: the attempt trees are overlays on it, and their
 * .git is their own).  Checked out from the repository's own object
 * store, which checkout with a target directory and no index update
 * only reads.
 */
int
pristine_checkout(const char *repo_path, const char *baseline,
    const char *dest, char *err, size_t errlen)
{
	git_checkout_options	 opts;
	git_repository		*repo = NULL;
	git_commit		*commit = NULL;
	git_oid			 oid;
	int			 ret = -1;

	if (strlen(baseline) != GITW_HEXSZ ||
	    git_oid_fromstr(&oid, baseline) < 0) {
		snprintf(err, errlen, "baseline \"%s\" is not a 40-hex id",
		    baseline);
		git_error_clear();
		return (-1);
	}
	if (git_repository_open_ext(&repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	if (git_commit_lookup(&commit, repo, &oid) < 0) {
		gitc_err(err, errlen, "%s: baseline %s", repo_path, baseline);
		goto done;
	}
	git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);
	/*
	 * No index to write or compare: the target is empty, so nothing
	 * is looked up in the repository's work tree or index either.
	 */
	opts.checkout_strategy = GIT_CHECKOUT_FORCE |
	    GIT_CHECKOUT_DONT_UPDATE_INDEX;
	opts.disable_filters = 1;	/* exact bytes, as collect hashes */
	opts.target_directory = dest;
	if (git_checkout_tree(repo, (git_object *)commit, &opts) < 0) {
		gitc_err(err, errlen, "checkout %s into %s", baseline, dest);
		goto done;
	}
	ret = 0;
 done:
	git_commit_free(commit);
	git_repository_free(repo);
	return (ret);
}

/*
 * upper/.git/index: the baseline's entries without stat data, so that
 * git in the tree sees a clean checkout (it hashes each file once, on
 * its first refresh, and records what it saw) rather than every file
 * deleted and untracked.
 */
static int
write_index(git_commit *commit, const char *attempt_dir, char *err,
    size_t errlen)
{
	git_index	*idx = NULL;
	git_tree	*tree = NULL;
	char		 path[PATH_MAX];
	int		 ret = -1;

	if ((size_t)snprintf(path, sizeof(path), "%s/upper/.git/index",
	    attempt_dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", attempt_dir);
		return (-1);
	}
	if (git_commit_tree(&tree, commit) < 0 ||
	    git_index_open(&idx, path) < 0 ||
	    git_index_read_tree(idx, tree) < 0 ||
	    git_index_write(idx) < 0) {
		gitc_err(err, errlen, "%s", path);
		goto done;
	}
	ret = 0;
 done:
	git_index_free(idx);
	git_tree_free(tree);
	return (ret);
}

/*
 * The per-attempt layer of an overlay tree: attempt_dir/upper/.git
 * (as provision makes it, with no index: git builds one when the
 * agent first asks) and attempt_dir/tree, the empty directory the
 * overlay is mounted on.  The pristine checkout is the lower layer.
 */
int
provision_upper(const char *repo_path, const char *baseline,
    const char *attempt_dir, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_commit	*commit = NULL;
	git_oid		 oid;
	int		 afd = -1, ufd = -1, gfd = -1, ret = -1;

	if (strlen(baseline) != GITW_HEXSZ ||
	    git_oid_fromstr(&oid, baseline) < 0) {
		snprintf(err, errlen, "baseline \"%s\" is not a 40-hex id",
		    baseline);
		git_error_clear();
		return (-1);
	}
	if (git_repository_open_ext(&repo, repo_path,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		gitc_err(err, errlen, "open repository %s", repo_path);
		return (-1);
	}
	if (git_commit_lookup(&commit, repo, &oid) < 0) {
		gitc_err(err, errlen, "%s: baseline %s", repo_path, baseline);
		goto done;
	}
	if ((afd = open(attempt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", attempt_dir, strerror(errno));
		goto done;
	}
	if (mkdirat(afd, "tree", 0755) == -1 ||
	    mkdirat(afd, "upper", 0755) == -1 ||
	    (ufd = openat(afd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 ||
	    mkdirat(ufd, ".git", 0755) == -1 ||
	    (gfd = openat(ufd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s/upper/.git: %s", attempt_dir,
		    strerror(errno));
		goto done;
	}
	if (make_gitdir(gfd, repo_path, baseline, err, errlen) == -1 ||
	    write_index(commit, attempt_dir, err, errlen) == -1)
		goto done;
	ret = 0;
 done:
	if (gfd != -1)
		close(gfd);
	if (ufd != -1)
		close(ufd);
	if (afd != -1)
		close(afd);
	git_commit_free(commit);
	git_repository_free(repo);
	return (ret);
}
