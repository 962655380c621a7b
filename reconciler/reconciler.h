/*
 * factory-reconciler: a read-only inventory of what exists, for the
 * parent to compare with its journal.
 *
 * The listing functions take the paths they look at as arguments, talk
 * no imsg and write nothing.  Each returns a new JSON array (never
 * NULL: running out of memory is fatal).  Names found on the file
 * system are untrusted: only attempt ids (a-YYYYMMDD-NNNN, four to ten
 * digits in the sequence, as the parent checks them) are listed,
 * anything else is counted in the tally's skipped and left out.  Symbolic links are never followed
 * below the configured paths.  What cannot be read becomes one line in
 * the tally's errors; a directory that does not exist is empty.
 */
#ifndef RECONCILER_H
#define RECONCILER_H

#include <sys/types.h>

#include <jansson.h>

#include "factory.h"
#include "imsg.h"
#include "imsgev.h"

/* The most bytes an IMSG_INVENTORY can carry. */
#define INV_MAXWIRE	(FACTORY_MAXIMSG - IMSG_HEADER_SIZE)

struct inv_tally {
	long	 skipped;	/* untrusted names left out */
	json_t	*errors;	/* strings: what could not be read */
};

/* Where to look.  Lists may repeat a path; it is listed once. */
struct inv_config {
	const char	 *state;	/* attempts/, verify/, mounts below */
	const char	**repos;
	size_t		  nrepos;
	const char	**remotes;
	size_t		  nremotes;
	const char	**pulls;
	size_t		  npulls;
	int		  have_uids;	/* attempt_uids was given */
	uid_t		  uid_lo, uid_hi;
	const char	 *cgroot;	/* /sys/fs/cgroup */
	const char	 *procroot;	/* /proc */
	const char	 *mountinfo;	/* /proc/self/mountinfo */
};

/* inventory.c */
void	 inv_set_cgparent(const char *);	/* "factory/<instance>" */
/* 1 if s is an attempt id; with vsuffix, "<id>-v" is one too. */
int	 inv_id_valid(const char *, int);
/* "LO-HI" of attempt_uids: 0, or -1 if malformed, reversed or from 0. */
int	 inv_parse_uids(const char *, uid_t *, uid_t *);
void	 inv_tally_init(struct inv_tally *);
void	 inv_tally_free(struct inv_tally *);
/* libgit2 set up for reading: no host config, no owner check. */
int	 inv_git_init(void);
/* Sub-directories of dir named as attempts (attempts/, verify/). */
json_t	*inv_list_dir(const char *, struct inv_tally *);
/*
 * Cgroup directories, as full paths, of root/factory/ (one cgroup2
 * tree) and root/<hierarchy>/factory/ (v1 controllers, unified).
 */
json_t	*inv_list_cgroups(const char *, struct inv_tally *);
/*
 * {id, validation} of each attempt whose cgroup (or validation run's
 * cgroup, "<id>-v") is in a list of inv_list_cgroups(), which is
 * consumed; each once.
 */
json_t	*inv_cgroup_ids(json_t *);
/* {pid, uid, comm} of processes whose real uid is in [lo, hi]. */
json_t	*inv_list_processes(const char *, uid_t, uid_t,
	    struct inv_tally *);
/*
 * {id, verify} of each attempt with a mount (in a mountinfo file)
 * inside dir/attempts/<id> or, verify true, dir/verify/<id>; each
 * once.
 */
json_t	*inv_list_mounts(const char *, const char *, struct inv_tally *);
/* {repo, id, commit} of refs/heads/factory/<id> in one repository. */
json_t	*inv_list_branches(const char *, struct inv_tally *);
/* {dir, id, number} of the <id>.json pull records in dir. */
json_t	*inv_list_pulls(const char *, struct inv_tally *);
/*
 * The whole inventory object, IMSG_INVENTORY as invmsg.h reads it:
 * the lists above (cgroups by inv_cgroup_ids()) plus "skipped",
 * "errors" and "truncated" (false).
 */
json_t	*inventory_build(const struct inv_config *);
/*
 * Make inv at most maxlen bytes on the wire by dropping the tails of
 * its longest lists, setting "truncated" if it did.  0 if it fits, -1
 * if it cannot be made to (or is not an inventory).
 */
int	 inv_fit(json_t *, size_t);
/*
 * Append inv to b in IMSG_INVENTORY's wire format (invmsg.h).  -1 if
 * a member is missing or of another type, or b is full.
 */
int	 inv_encode(json_t *, struct ibuf *);

/* dispatch.c */
/*
 * Collect the -V variables the reconciler needs from its command line
 * into c (pointers into argv), as proc_child_init() will parse it.
 */
void	 recon_vars(int, char **, struct inv_config *);
/*
 * Handle one message from the parent, answering on iev.  0 if handled,
 * -1 if the message is unexpected or malformed (the caller exits).
 */
int	 recon_imsg(struct imsgev *, struct imsg *,
	    const struct inv_config *);

#endif /* RECONCILER_H */
