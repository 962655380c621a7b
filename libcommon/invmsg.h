/*
 * IMSG_INVENTORY, the reconciler's answer, as the parent reads it.
 *
 * The reconciler names what it found by kind and attempt id (and, for
 * a process, by pid and uid), never by path: every path the parent
 * acts on is its own, derived from an id this decoder accepted.
 *
 * On the wire (wire.h: numbers in network byte order, a string as an
 * n32 length and its bytes), in this order, each list an n32 count
 * and its elements:
 *
 *	attempt_dirs	list of str id
 *	verify_dirs	list of str id
 *	cgroups		list of { str id, n8 kind }	(CG_KIND_*)
 *	processes	list of { n32 pid, n32 uid, str comm }
 *	mounts		list of { str id, n8 verify }
 *	branches	list of { str repo, str id, str commit }
 *	pulls		list of { str dir, str id, n32 number }
 *	skipped		n64
 *	errors		list of str
 *	truncated	n8
 *
 * The decoding is strict: a count the rest of the message cannot hold,
 * a field cut short, bytes left over, a boolean not 0 or 1, an id that
 * is not an attempt id, a string with a NUL or a byte that is not
 * printable ASCII, a pid or uid out of range is an error, and the
 * parent kills the reconciler that sent it.
 *
 * IMSG_ERROR from the reconciler is one str of at most
 * INVMSG_ERRORMAX bytes.
 */
#ifndef INVMSG_H
#define INVMSG_H

#include <sys/types.h>

#include "factory.h"

#define INVMSG_COMMMAX		64	/* a process name, NUL included */
#define INVMSG_STRMAX		1024	/* a path shown, an error line */
#define INVMSG_ERRORMAX		1024	/* IMSG_ERROR's text */
#define INVMSG_PIDMAX		(4 * 1024 * 1024)	/* PID_MAX_LIMIT */

struct invmsg_id {
	char		 id[ATTEMPT_ID_MAX];
};

/*
 * Whose cgroups of an attempt: its agent's ("<id>"), its validation
 * run's (or setup's, "<id>-v"), or a service's, two kinds a service:
 * beside the agent ("<id>-sN"), beside validation ("<id>-vsN").
 */
#define CG_KIND_AGENT		0
#define CG_KIND_VALIDATION	1
#define CG_KIND_SERVICE		2	/* + 2 x N (+ 1 beside validation) */
#define CG_KINDS		(CG_KIND_SERVICE + 2 * MANIFEST_SERVICES)

struct invmsg_cgroup {
	char		 id[ATTEMPT_ID_MAX];
	int		 kind;		/* CG_KIND_* */
};

struct invmsg_proc {
	pid_t		 pid;
	uid_t		 uid;		/* its real uid, as the child read it */
	char		 comm[INVMSG_COMMMAX];
};

struct invmsg_mount {
	char		 id[ATTEMPT_ID_MAX];
	int		 verify;	/* below verify/<id>, not attempts/ */
};

/* Branches and pull records are only shown: their paths are text. */
struct invmsg_branch {
	char		 id[ATTEMPT_ID_MAX];
	char		 commit[41];
	char		*repo;
};

struct invmsg_pull {
	char		 id[ATTEMPT_ID_MAX];
	int		 number;
	char		*dir;
};

struct invmsg {
	struct invmsg_id	*dirs;
	size_t			 ndirs;
	struct invmsg_id	*vdirs;
	size_t			 nvdirs;
	struct invmsg_cgroup	*cgroups;
	size_t			 ncgroups;
	struct invmsg_proc	*procs;
	size_t			 nprocs;
	struct invmsg_mount	*mounts;
	size_t			 nmounts;
	struct invmsg_branch	*branches;
	size_t			 nbranches;
	struct invmsg_pull	*pulls;
	size_t			 npulls;
	char			**errors;
	size_t			 nerrors;
	long long		 skipped;
	int			 truncated;
};

/* invmsg.c */
/* 1 if s (of len bytes) is an attempt id as the parent makes them. */
int	 invmsg_id_valid(const char *, size_t);
/*
 * Decode an inventory whose processes must have an uid in [lo, hi].
 * 0, or -1 with a one-line reason naming the member.  m is to be
 * freed with invmsg_free() in both cases.
 */
int	 invmsg_decode(const void *, size_t, uid_t, uid_t, struct invmsg *,
	    char *, size_t);
void	 invmsg_free(struct invmsg *);

/*
 * supervisord-factory/reconcile.c: the parent's reading of an
 * IMSG_INVENTORY's bytes.  -1 if they do not decode (the caller kills
 * the reconciler).
 */
int	 reconcile_inventory(const void *, size_t);

/* The cgroup name of id for kind: 0, or -1 if kind is none. */
int	 cg_name(const char *, int, char *, size_t);
/* The kind of a cgroup name, and its id's length; -1: not one of ours. */
int	 cg_kind(const char *, size_t *);

#endif /* INVMSG_H */
