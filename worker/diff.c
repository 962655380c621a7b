/*
 * factoryctl diff: the patch from the baseline to a result's commit,
 * read from the attempt's collect.git, the repository the bundle was
 * written from (the baseline's objects through its alternates).  The
 * commit is the one the parent journaled from our RESULT: a commit
 * that is not there, or a baseline that is not its parent, is refused.
 * libgit2 runs no diff driver or filter of the tree here.
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

static int
diff_trees(git_repository *repo, const char *base_hex, const char *hex,
    git_buf *out, char *err, size_t errlen)
{
	git_oid		 boid, coid;
	git_commit	*c = NULL, *b = NULL;
	git_tree	*bt = NULL, *ct = NULL;
	git_diff	*d = NULL;
	int		 ret = -1;

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
	if (git_diff_tree_to_tree(&d, repo, bt, ct, NULL) < 0 ||
	    git_diff_to_buf(out, d, GIT_DIFF_FORMAT_PATCH) < 0) {
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

int
diff_result(const char *attempt_dir, const char *base_hex, const char *hex,
    char **patch, size_t *len, char *err, size_t errlen)
{
	git_repository	*repo = NULL;
	git_buf		 out = { 0 };
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
	ret = diff_trees(repo, base_hex, hex, &out, err, errlen);
	git_repository_free(repo);
	if (ret == -1)
		return (-1);
	*len = out.size;
	if ((*patch = malloc(out.size + 1)) == NULL)
		fatal(NULL);
	if (out.size > 0)
		memcpy(*patch, out.ptr, out.size);
	(*patch)[out.size] = '\0';
	git_buf_dispose(&out);
	return (0);
}
