/*
 * factory-publisher: the only holder of forge credentials.  It pushes
 * one branch per attempt and opens (or reuses) one pull request.
 *
 * Functions that take (err, errlen) return 0 on success and -1 on a
 * refusal or failure, with a one-line reason in err.
 */
#ifndef PUBLISHER_H
#define PUBLISHER_H

#include <sys/types.h>
#include <limits.h>
#include <stddef.h>

#define PUB_BRANCH_PREFIX	"factory/"
#define PUB_REF_PREFIX		"refs/heads/" PUB_BRANCH_PREFIX
#define PUB_LOCKFILE		".lock"		/* in the pulls directory */
#define PUB_RECORD_MAX		(64 * 1024)	/* bytes of one pull record */
#define PUB_BUNDLE_HEADER_MAX	(64 * 1024)

/*
 * One publication.  Every string is borrowed and NUL-terminated; the
 * verdict's signed bytes are strlen(verdict) bytes.
 */
struct publish_req {
	const char		*attempt;	/* "a-20261129-0007" */
	const char		*remote;	/* absolute path, bare repository */
	const char		*pulls;		/* absolute path, pull records */
	const char		*title;
	const char		*base;		/* base branch name, "main" */
	const char		*commit;	/* 40 hex: the accepted commit */
	const char		*verdict;	/* canonical JSON, as signed */
	const unsigned char	*sig;		/* Ed25519 over verdict */
	size_t			 siglen;
	const unsigned char	*verifier_pub;	/* 32 raw bytes, pinned */
	int			 bundle_fd;	/* v2 bundle, read from 0 */
};

struct publish_result {
	char		 branch[128];		/* "factory/<attempt>" */
	int		 number;		/* the pull record's number */
	char		 record[PATH_MAX];	/* pulls/<attempt>.json */
	int		 reused;		/* 1: this call changed nothing */
};

/* local.c */
/*
 * Once per process, before publish_local: initialises libgit2, empties
 * its configuration search paths (system, xdg, global, programdata) so
 * no host or $HOME config steers it, turns owner validation off (the
 * remotes belong to another uid) and turns on fsync of what it writes
 * into a git directory.  Fatal on failure.
 */
void	pub_git_init(void);
/*
 * Publish one attempt into a local "forge": a bare repository and a
 * directory of pull records, in this order, failing closed:
 *  1. the verdict's signature by the pinned key, and its content:
 *     "accepted": true, the request's attempt and commit;
 *  2. the bundle: a strict v2 header with one prerequisite and one
 *     ref, refs/heads/factory/<attempt> at the commit; the
 *     prerequisite must be in the remote; the pack is indexed into
 *     the remote with connectivity checks;
 *  3. the branch factory/<attempt>: created at the commit, kept if it
 *     is there already, refused if it holds another commit;
 *  4. the record pulls/<attempt>.json: reused if it names the same
 *     commit, else numbered 1 + the highest number, under an exclusive
 *     flock(2) of pulls/.lock, written atomically and fsynced.
 * A refusal before step 2's indexing changes nothing; after it, at
 * most an unreferenced pack is left in the remote.  Publishing the
 * same attempt again gives the same branch and record, reused = 1.
 */
int	publish_local(const struct publish_req *, struct publish_result *,
	    char *, size_t);

#endif /* PUBLISHER_H */
