/*
 * IMSG_INVENTORY, the reconciler's answer, as the parent reads it.
 *
 * The reconciler names what it found by kind and attempt id (and, for
 * a process, by pid and uid), never by path: every path the parent
 * acts on is its own, derived from an id this decoder accepted.  The
 * decoding is strict: a member missing, extra or of another type, an
 * id that is not an attempt id, a string with a NUL or a byte that is
 * not printable ASCII, a pid or uid out of range is an error, and the
 * parent kills the reconciler that sent it.
 */
#ifndef INVMSG_H
#define INVMSG_H

#include <sys/types.h>

#include <jansson.h>

#include "factory.h"

#define INVMSG_COMMMAX		64	/* a process name, NUL included */
#define INVMSG_STRMAX		1024	/* a path shown, an error line */
#define INVMSG_PIDMAX		(4 * 1024 * 1024)	/* PID_MAX_LIMIT */

struct invmsg_id {
	char		 id[ATTEMPT_ID_MAX];
};

struct invmsg_cgroup {
	char		 id[ATTEMPT_ID_MAX];
	int		 validation;	/* the "<id>-v" cgroup */
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
int	 invmsg_decode(json_t *, uid_t, uid_t, struct invmsg *, char *,
	    size_t);
void	 invmsg_free(struct invmsg *);

#endif /* INVMSG_H */
