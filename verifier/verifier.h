/*
 * factory-verifier: re-derives an attempt's facts from its bundle.
 *
 * Every function here returns 0 on success and -1 on failure with a
 * one-line reason, naming the path or object, in err (errlen bytes).
 * None of them keeps state between calls or talks imsg.
 */
#ifndef VERIFIER_H
#define VERIFIER_H

#include <sys/types.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "factory.h"

#define GITV_HEXSZ		40

/* A bundle whose header was parsed; the pack follows at pack_offset. */
struct vbundle {
	int		 fd;			/* not owned */
	off_t		 pack_offset;
	char		 prereq[GITV_HEXSZ + 1];
	char		 commit[GITV_HEXSZ + 1];
	char		 attempt_id[ATTEMPT_ID_MAX + 1];
	char		 gitdir[PATH_MAX];	/* set by vbundle_index */
};

struct recheck_req {
	const char	 *gitdir;		/* vbundle.gitdir */
	const char	 *commit_hex;		/* vbundle.commit */
	/* The frozen manifest's facts, never the bundle's. */
	const char	 *attempt_id;
	const char	 *baseline_hex;
	char * const	 *scope;		/* NULL-terminated globs */
	const char	 *title;
	const char	 *manifest_digest;
	const char	 *log;			/* optional, scanned too */
	size_t		  loglen;
};

struct recheck_result {
	int		  accepted;		/* 1: no finding */
	char		  commit_hex[GITV_HEXSZ + 1];
	char		  tree_hex[GITV_HEXSZ + 1];
	char		**findings;		/* "path: reason" */
	size_t		  nfindings;
};

/* bundle.c */
/*
 * Once per process, before any other call: initialises libgit2 and
 * hides the system, global and xdg configuration from it.  Owner
 * validation stays on: the verifier opens only the scratch
 * repositories it made itself.
 */
int	gitv_init(char *, size_t);
/*
 * Parses the header of the bundle on fd with bundle_hdr_read()
 * (libcommon/bundlehdr.h: the v2 signature, exactly one prerequisite,
 * exactly one ref refs/heads/factory/<id>, then a pack).  Reads with
 * pread(2); fd stays the caller's.
 */
int	vbundle_open(int, struct vbundle *, char *, size_t);
/*
 * vbundle_index(vb, repo_path, scratch_dir, baseline_hex): makes
 * scratch_dir a bare repository with alternates to repo_path's
 * objects, indexes the bundle's pack into it, and checks that the
 * ref's commit exists and has exactly one parent, the prerequisite,
 * which must be baseline_hex (the frozen manifest's).  Sets gitdir.
 */
int	vbundle_index(struct vbundle *, const char *, const char *,
	    const char *, char *, size_t);
/*
 * The objects directory of the repository at repo_path, found without
 * opening the repository: its config and owner are not ours to trust.
 */
int	gitv_objects(const char *, char *, size_t, char *, size_t);

/* recheck.c */
/*
 * Returns 0 when it could decide (res->accepted says how, findings
 * say why not) and -1 when it could not.  Release the result with
 * recheck_result_free() in both cases.
 */
int	recheck(const struct recheck_req *, struct recheck_result *, char *,
	    size_t);
void	recheck_result_free(struct recheck_result *);
/*
 * Appends "label:LINE: reason" for each secret found in buf (one per
 * line), never the secret itself.  -1 on allocation failure.
 */
int	secret_scan(const char *, const char *, size_t, char ***, size_t *);
/*
 * vcheckout(gitdir, commit_hex, dest_dir): the commit's tree, exact
 * bytes, into dest_dir, without a .git.  A dest_dir that does not
 * exist is created and checked out whole; one that exists is factoryd's
 * overlay of the baseline's pristine checkout, and only the commit's
 * changes against its parent (the baseline) are written, through it.
 */
int	vcheckout(const char *, const char *, const char *, char *, size_t);

/* vtree.c */
/*
 * The object store of the repository at repo_path alone, read-only, as
 * a repository without config or work tree, for vtree_check.
 */
int	vtree_open(const char *, git_repository **, char *, size_t);
/*
 * vtree_check(repo, baseline_hex, rootfd, tree_hex, where, wlen): the
 * directory rootfd (the baseline's pristine checkout) against the
 * baseline's tree in repo's object store, every entry both ways:
 * names, types, modes (0644 or 0755), blob ids of the files' bytes,
 * link targets, gitlinks empty.  0: the same; 1: not, where says at
 * which path and why; -1: could not tell, err says why.  tree_hex is
 * the tree it was compared with, when the baseline was found.
 */
int	vtree_check(git_repository *, const char *, int,
	    char [GITV_HEXSZ + 1], char *, size_t, char *, size_t);

#endif /* VERIFIER_H */
