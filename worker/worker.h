/*
 * factory-worker: libgit2 work on repositories and attempt trees.
 *
 * Every function here returns 0 on success and -1 on failure with a
 * one-line reason, naming the path or object, in err (errlen bytes).
 * None of them keeps state between calls or talks imsg.
 */
#ifndef WORKER_H
#define WORKER_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#define GITW_HEXSZ		40
/*
 * The config provision writes into an attempt tree's .git, byte for
 * byte; collect refuses a tree whose .git/config differs.
 */
#define GITW_TREE_CONFIG \
	"[core]\n" \
	"\trepositoryformatversion = 0\n" \
	"\tbare = false\n"
#define GITW_SIGNATURE_NAME	"factory"
#define GITW_SIGNATURE_EMAIL	"factory@localhost"

struct collect_req {
	const char	 *repo_path;
	const char	 *baseline_hex;		/* 40 hex */
	const char	 *attempt_dir;		/* holds collect.git */
	char * const	 *scope;		/* NULL-terminated globs */
	const char	 *title;		/* one line */
	const char	 *attempt_id;
	const char	 *manifest_digest;	/* "sha256:<hex>" */
	uint64_t	  tree_limit;		/* bytes, 0: no limit */
	const char	 *bundle_path;
	/*
	 * The upper dir of the overlay the agent's tree was: collect walks
	 * it alone, whiteouts as deletions.  tree_limit bounds the bytes
	 * of the files the agent added or changed.
	 */
	const char	 *upper;
};

struct collect_change {
	char		  status;		/* 'A', 'M', 'D', 'T' */
	char		 *path;
};

struct collect_result {
	char			 commit_hex[GITW_HEXSZ + 1];
	char			 tree_hex[GITW_HEXSZ + 1];
	char			 bundle_sha256[64 + 1];
	uint64_t		 bundle_size;
	struct collect_change	*changes;
	size_t			 nchanges;
	char			**rejects;	/* "path: reason" */
	size_t			 nrejects;
};

/* provision.c */
/*
 * Once per process, before any other call: initialises libgit2, hides
 * the system, global and xdg configuration from it, and turns owner
 * validation off (the repositories belong to the operator, not to us;
 * we never open an agent's .git with libgit2).
 */
int	gitw_init(char *, size_t);
/* A 40-hex commit id, or a ref or short name peeled to a commit. */
int	resolve(const char *, const char *, char [GITW_HEXSZ + 1], char *,
	    size_t);
/*
 * pristine_checkout(repo, baseline_hex, dest): the baseline's files,
 * exact bytes, into the empty directory dest; and dest/.git, a file:
 * an index of them.
 */
int	pristine_checkout(const char *, const char *, const char *, char *,
	    size_t);
/* Test builds: a compromised worker (regress/vtree); nothing otherwise. */
void	pristine_fault_late(void);
/*
 * provision_upper(repo, baseline_hex, attempt_dir): attempt_dir/
 * upper holding only the tree's .git (HEAD detached at the baseline,
 * GITW_TREE_CONFIG, alternates to the repository's objects, no hooks;
 * its index made from the baseline's tree in the object store)
 * and attempt_dir/tree, empty: the overlay's upper layer and mount
 * point.
 */
int	provision_upper(const char *, const char *, const char *, char *,
	    size_t);
/* The absolute objects directory of a repository, for alternates. */
int	gitw_objects_dir(const char *, char *, size_t, char *, size_t);
/* 1 if an attempt id is safe in a ref name and a path component. */
int	gitw_attempt_id_valid(const char *);

/* collect.c */
/*
 * Returns 0 when it could decide: if res->nrejects is 0 the commit and
 * the bundle were made, otherwise nothing was (res->rejects says why,
 * "no change" included).  Returns -1 when it could not decide.  The
 * result must be released with collect_result_free() in both cases.
 */
int	collect(const struct collect_req *, struct collect_result *, char *,
	    size_t);
void	collect_result_free(struct collect_result *);

/* bundle.c */
/*
 * gitw_bundle_write(repo, commit_hex, baseline_hex, attempt_id, path,
 * sha256_hex, size): a v2 bundle with one prerequisite (baseline), one
 * ref (refs/heads/factory/<attempt_id>) at commit, and a pack of
 * what commit has that the baseline lacks.  Written to
 * path.tmp, fsynced, renamed.  Fills sha256 hex and size.
 */
struct git_repository;
int	gitw_bundle_write(struct git_repository *, const char *, const char *,
	    const char *, const char *, char [64 + 1], uint64_t *, char *,
	    size_t);

/* diff.c */
/*
 * The patch from baseline to commit, whose parent it must be, from
 * attempt_dir/collect.git: its first cap bytes, malloc'd, its length
 * apart (it may hold any byte), and whether it was cut there.
 */
int	diff_result(const char *, const char *, const char *, size_t,
	    char **, size_t *, int *, char *, size_t);

#endif /* WORKER_H */
