/*
 * The one job root gives factory-fswalk (fswalk/) and its one answer,
 * in wire.c's format both ways.  The job arrives on a pipe on
 * FSWALK_FD_JOB, read to its end; the answer leaves on a pipe on
 * FSWALK_FD_ANSWER and is read to its end, at most FSWALK_ANSWER_MAX
 * bytes.  The job's descriptors (a tree, entry lists) are on
 * FSWALK_FD_ARG and up.
 *
 *	job:	n32 kind, then the kind's fields
 *	answer:	n32 kind, n32 rc (0 or 1: failed), string err (escaped,
 *		esc.h; empty when rc is 0), then the kind's fields
 *
 * FSWALK_IMAGE, the walk of an image tree (imgtree.h) on the first
 * argument, its entry list written to the second, compared with the
 * third:
 *	job:	n32 owner, bool chown, bool bounded, n64 max_entries,
 *		n64 max_bytes, n32 max_depth, n32 max_path, bool out,
 *		bool canon
 *	answer:	string hex, n64 entries, n64 files, n64 bytes
 *
 * FSWALK_PRISTINE, the seal of a worker's cold checkout (its top made
 * root's by root already) on the first argument: bounded, given to
 * root, each file a copy of root's with git's modes (supervisord-
 * factory/pristine.c says why):
 *	job:	n32 from (the worker's uid), n64 max (pristine-cache),
 *		string path (the tree's, for the reasons only)
 *	answer:	n64 bytes (its blocks, as du counts them)
 *
 * FSWALK_SETUP_STORE, a setup's outputs copied from its run's upper
 * (the first argument) into an entry (the second) and hashed;
 * FSWALK_SETUP_SEAL, the seal of an entry (the first):
 *	job:	n64 max (setup-cache), string upper, string tmp (the two
 *		directories, for Landlock), n32 count, that many outputs
 *	answer:	string hex (the digest, or the seal), n64 files,
 *		n64 bytes
 * A seal's job also checks a stored entry (its tmp the entry's path).
 *
 * FSWALK_SETUP_INPUTS, the content of a setup's inputs in the pristine
 * tree (the first argument), for its key (supervisord-factory/setup.c):
 *	job:	a setup's, its tmp the tree's path, its outputs the inputs
 *	answer:	n32 count, then for each input in the job's order bool
 *		file (0: missing), string hex (its sha256; empty if
 *		missing)
 *
 * FSWALK_SETUP_REMOVE, what a store left emptied (the first argument):
 *	job:	a setup's, its tmp the directory's path
 *	answer:	nothing more
 */
#ifndef FACTORY_FSWALKMSG_H
#define FACTORY_FSWALKMSG_H

#include <sys/types.h>
#include <stdint.h>

#include "imgtree.h"
#include "wire.h"

#define FSWALK_FD_JOB		3
#define FSWALK_FD_ANSWER	4
#define FSWALK_FD_ARG		5	/* the job's first descriptor */
#define FSWALK_NARGS		2	/* descriptors a job may have */

/*
 * A job is written whole into its pipe before the fork (fsjob.c grows
 * the pipe to hold it): a setup's, the largest, holds two paths and up
 * to SETUP_PATHS outputs of under SETUP_PATHMAX bytes (conf.h).
 */
#define FSWALK_JOB_MAX		(128 * 1024)	/* bytes of a job */
#define FSWALK_ANSWER_MAX	8192	/* bytes of an answer: inputs' */
#define FSWALK_ERRMAX		512	/* an error, with its NUL */

enum fswalk_kind {
	FSWALK_IMAGE = 1,
	FSWALK_PRISTINE,
	FSWALK_SETUP_STORE,
	FSWALK_SETUP_SEAL,
	FSWALK_SETUP_INPUTS,
	FSWALK_SETUP_REMOVE,
	FSWALK_KIND_MAX
};

struct fswalk_image_job {
	uid_t			 owner;
	int			 chown;
	int			 bounded;
	struct imgwalk_limits	 lim;
	int			 out;		/* an entry list to write */
	int			 canon;		/* one to compare with */
};

struct fswalk_pristine_job {
	uid_t			 from;
	uint64_t		 max;
	char			 path[4096];
};

#define FSWALK_OUTPUTS_MAX	64	/* a setup's outputs: SETUP_PATHS */
#define FSWALK_OUTPUT_MAX	1023	/* bytes of one: SETUP_PATHMAX - 1 */

struct fswalk_setup_job {
	uint64_t		 max;
	char			 upper[4096];
	char			 tmp[4096];
	char			**outputs;	/* NULL-terminated */
};

struct fswalk_answer {
	uint32_t		 kind;
	int			 failed;
	char			 err[FSWALK_ERRMAX];
	union {
		struct imgwalk_result	 image;
		uint64_t		 bytes;		/* pristine */
		struct {
			char		 hex[65];
			uint64_t	 files;
			uint64_t	 bytes;
		}			 setup;
		struct {
			uint32_t	 n;
			struct {
				int	 file;		/* 0: missing */
				char	 hex[65];
			}		 in[FSWALK_OUTPUTS_MAX];
		}			 inputs;
	} u;
};

/* fswalkmsg.c: NULL (no memory) or the message. */
struct ibuf	*fswalk_image_job_compose(const struct fswalk_image_job *);
struct ibuf	*fswalk_pristine_job_compose(
		    const struct fswalk_pristine_job *);
struct ibuf	*fswalk_setup_job_compose(uint32_t,
		    const struct fswalk_setup_job *);
struct ibuf	*fswalk_answer_compose(const struct fswalk_answer *);
/* The helper's reason in a->err, escaped: every byte of a name may be. */
void		 fswalk_answer_why(struct fswalk_answer *, const char *);
/* The kind of a job, whose fields m reads on: -1 and err if none. */
int		 fswalk_job_kind(struct mread *, const void *, size_t,
		    uint32_t *, char *, size_t);
int		 fswalk_image_job_parse(struct mread *,
		    struct fswalk_image_job *);
int		 fswalk_pristine_job_parse(struct mread *,
		    struct fswalk_pristine_job *);
int		 fswalk_setup_job_parse(struct mread *,
		    struct fswalk_setup_job *);
void		 fswalk_setup_job_free(struct fswalk_setup_job *);
/*
 * An answer to a job of kind, checked in form: strings escaped and
 * within their bounds, an image's digest 64 lower-case hex digits.
 * -1 and err otherwise.
 */
int		 fswalk_answer_parse(const void *, size_t, uint32_t,
		    struct fswalk_answer *, char *, size_t);

#endif /* FACTORY_FSWALKMSG_H */
