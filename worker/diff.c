/*
 * factoryctl diff: the patch from the baseline to a result's commit,
 * read from the attempt's collect.git, the repository the bundle was
 * written from (the baseline's objects through its alternates).  The
 * commit is the one the parent journaled from our RESULT: a commit
 * that is not there, or a baseline that is not its parent, is refused.
 * libgit2 runs no diff driver or filter of the tree here.
 *
 * Only the first cap bytes of the patch are made: the print callback
 * stops libgit2 there, so that a result of any size costs at most the
 * cap and one file's diff, and no more files are listed than could
 * be printed in it.  A file larger than DIFF_FILE_MAX is shown as
 * binary (libgit2 then never loads it).
 */
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "gitcommon.h"
#include "log.h"
#include "msg.h"
#include "worker.h"

#define DIFF_FILE_MAX	(1024 * 1024)

/* The patch so far, never more than cap bytes. */
struct diff_out {
	char	*buf;
	size_t	 len;
	size_t	 cap;
	size_t	 files;		/* deltas let into the diff list */
	int	 listed;	/* the list is made: printing */
	int	 skipped;	/* files left out of the list */
	int	 truncated;
};

/* One line of the patch, as git_diff_to_buf writes it; 1 stops it. */
static int
diff_line_cb(const git_diff_delta *delta, const git_diff_hunk *hunk,
    const git_diff_line *line, void *arg)
{
	struct diff_out	*o = arg;
	char		 pfx[1];
	size_t		 n, i, np = 0;
	const char	*part[2];
	size_t		 plen[2];

	(void)delta;
	(void)hunk;
	if (line->origin == GIT_DIFF_LINE_CONTEXT ||
	    line->origin == GIT_DIFF_LINE_ADDITION ||
	    line->origin == GIT_DIFF_LINE_DELETION) {
		pfx[0] = line->origin;
		part[np] = pfx;
		plen[np++] = 1;
	}
	part[np] = line->content;
	plen[np++] = line->content_len;
	for (i = 0; i < np; i++) {
		n = plen[i];
		if (n > o->cap - o->len) {
			n = o->cap - o->len;
			o->truncated = 1;
		}
		memcpy(o->buf + o->len, part[i], n);
		o->len += n;
		if (o->truncated)
			return (1);
	}
	return (0);
}

/*
 * Each file's patch starts with "diff --git a/P b/P\n", at least 16
 * bytes: past cap / 16 files none could be printed, so libgit2 is
 * told to skip the rest as it finds them, and the diff list it holds
 * stays that short whatever the number of files (1M empty files held
 * 175 MB before).
 */
static int
diff_notify_cb(const git_diff *diff, const git_diff_delta *delta,
    const char *matched, void *arg)
{
	struct diff_out	*o = arg;

	(void)diff;
	(void)delta;
	(void)matched;
	if (o->listed)		/* libgit2 asks again as it prints */
		return (0);
	if (o->files >= o->cap / 16 + 1) {
		o->skipped = 1;
		return (1);
	}
	o->files++;
	return (0);
}

static int
diff_trees(git_repository *repo, const char *base_hex, const char *hex,
    struct diff_out *out, char *err, size_t errlen)
{
	git_diff_options opts;
	git_oid		 boid, coid;
	git_commit	*c = NULL, *b = NULL;
	git_tree	*bt = NULL, *ct = NULL;
	git_diff	*d = NULL;
	int		 rc, ret = -1;

	if (git_oid_fromstr(&boid, base_hex) < 0 ||
	    git_oid_fromstr(&coid, hex) < 0 ||
	    git_commit_lookup(&c, repo, &coid) < 0) {
		gitc_err(err, errlen, "commit %s", hex);
		goto done;
	}
	if (git_commit_parentcount(c) != 1 ||
	    !git_oid_equal(git_commit_parent_id(c, 0), &boid)) {
		snprintf(err, errlen, "commit %s: its parent is not the "
		    "baseline %s", hex, base_hex);
		goto done;
	}
	if (git_commit_tree(&ct, c) < 0 ||
	    git_commit_lookup(&b, repo, &boid) < 0 ||
	    git_commit_tree(&bt, b) < 0) {
		gitc_err(err, errlen, "trees of %s", hex);
		goto done;
	}
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.max_size = DIFF_FILE_MAX;
	opts.notify_cb = diff_notify_cb;
	opts.payload = out;
	if (git_diff_tree_to_tree(&d, repo, bt, ct, &opts) < 0) {
		gitc_err(err, errlen, "diff of %s", hex);
		goto done;
	}
	rc = git_diff_print(d, GIT_DIFF_FORMAT_PATCH, diff_line_cb, out);
	if (rc < 0 || (rc > 0 && !out->truncated)) {
		gitc_err(err, errlen, "diff of %s", hex);
		goto done;
	}
	ret = 0;
 done:
	git_diff_free(d);
	git_tree_free(bt);
	git_tree_free(ct);
	git_commit_free(c);
	git_commit_free(b);
	return (ret);
}

/*
 * The first cap bytes of the patch in *patch (NUL-terminated, *len
 * bytes), *truncated if there was more; -1 with why in err.
 */
int
diff_result(const char *attempt_dir, const char *base_hex, const char *hex,
    size_t cap, char **patch, size_t *len, int *truncated, char *err,
    size_t errlen)
{
	git_repository	*repo = NULL;
	struct diff_out	 out;
	char		 path[PATH_MAX];
	int		 ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/collect.git",
	    attempt_dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", attempt_dir);
		return (-1);
	}
	if (git_repository_open_bare(&repo, path) < 0) {
		gitc_err(err, errlen, "open %s", path);
		return (-1);
	}
	memset(&out, 0, sizeof(out));
	out.cap = cap;
	if ((out.buf = malloc(cap + 1)) == NULL)
		fatal(NULL);
	ret = diff_trees(repo, base_hex, hex, &out, err, errlen);
	git_repository_free(repo);
	if (ret == -1) {
		free(out.buf);
		return (-1);
	}
	out.buf[out.len] = '\0';
	*patch = out.buf;
	*len = out.len;
	*truncated = out.truncated || out.skipped;
	return (0);
}
