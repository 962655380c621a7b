/*
 * What every program of the suite shares: the process table, the imsg
 * types, default paths and limits.
 */
#ifndef FACTORY_H
#define FACTORY_H

#include <sys/types.h>
#include <stdint.h>

#include "imsg.h"

#define FACTORY_VERSION		"0.1"
#define FACTORYD_CONF		"/etc/factoryd.conf"
#define FACTORYD_SOCKET		"/run/factoryd.sock"
#define FACTORYD_ROSUFFIX	".ro"
#define FACTORYD_STATEDIR	"/var/lib/factory"
#define FACTORYD_LOCKFILE	"lock"		/* in the state dir: one daemon */
#ifndef FACTORY_LIBEXECDIR
#define FACTORY_LIBEXECDIR	"/usr/local/libexec/factory"
#endif

#define PROC_PARENT_FD		3	/* a child's end of its socketpair */
#define FACTORY_MAXIMSG		(64 * 1024)
/* factoryctl attach: the bytes of one file of an attempt's evidence. */
#define EVIDENCE_MAX_BYTES	(8 * 1024 * 1024)
#define ATTEMPT_ID_MAX		32	/* "a-20261129-0007" */
#define MANIFEST_SERVICES	4	/* services a manifest may name */
#define SERVICE_NAMEMAX		24	/* [a-z][a-z0-9-]*, with the NUL */
/* IMSG_CTL_LOGS: whose log (none: the agent's). */
#define CTL_LOGS_VALIDATION	0x01	/* the validation run's side */
#define CTL_LOGS_SERVICE	0x02	/* a service's, named after the id */
#define COHORT_ID_MAX		32	/* "c-20261129-0007" */
#define COHORT_SUPERSEDE_MAX	63	/* the others of a cohort of
					   COHORT_SIZE_MAX (conf.h) */
#define REPO_NAME_MAX		64

/*
 * The seconds a GitHub publication may take, the publisher's deadline:
 * a fleet adopts one lost with its host no sooner (adopt-after).
 */
#define PUB_GITHUB_BUDGET_S	300

/*
 * Fault injection (test builds only): crashpoint("parent:after-verdict")
 * exits at once when FACTORY_CRASH names that point.
 */
#define FACTORY_CRASH_ENV	"FACTORY_CRASH"
#define CRASH_EXIT		86
#ifdef FACTORY_TESTBUILD
void	crashpoint(const char *);
int	faultpoint(const char *);	/* 1: misbehave there */
#else
#define crashpoint(name)	do { } while (0)
#define faultpoint(name)	0
#endif

enum factory_procid {
	PROC_PARENT,
	PROC_WORKER,
	PROC_VERIFIER,
	PROC_RECONCILER,
	PROC_PUBLISHER,
	PROC_EGRESS,
	PROC_IMAGE,
	PROC_GATEWAY,
	PROC_CONTROL,
	PROC_FLEET,		/* only with a fleet: block */
	PROC_PREVIEW,		/* only with a preview: block */
	PROC_MAX
};

/*
 * One unveil(2) rule of a child.  A path beginning with '$' names a
 * variable the parent passes on the child's command line (-V name=value,
 * repeatable): "$state" becomes the state directory, and a variable
 * with several values gives one rule each.  A permission beginning
 * with '?' marks a system file that may be absent.
 */
struct proc_unveil {
	const char	*path;
	const char	*perm;
};

/*
 * The process table: who runs what, as whom, under which policy.  A
 * security reviewer reads this one table (libcommon/procs.c).
 */
struct factory_proc {
	enum factory_procid	 id;
	const char		*name;		/* "worker": config key, title */
	const char		*binary;	/* in libexec */
	const char		*promises;	/* pledge(2) */
	const char		*why;		/* one line for factoryctl policy */
	struct proc_unveil	 unveils[16];	/* ends with a NULL path */
};

extern const struct factory_proc factory_procs[PROC_MAX];

/* procs.c */
const struct factory_proc *proc_byid(enum factory_procid);
const struct factory_proc *proc_byname(const char *);
/*
 * Run at the top of every child's main, before any message is read:
 * checks fd 3 is a unix socket whose peer is the root parent, closes
 * every other fd above 2, applies the table's unveil and pledge, and
 * sets the title.  Returns the parent's fd.  Fatal on any failure.
 */
int	proc_child_init(enum factory_procid, int, char **);
/* The value of a -V variable given to this child, or NULL. */
const char *proc_getvar(const char *);
/* Expand and apply a table entry's unveils, then its pledge. */
void	proc_apply_policy(const struct factory_proc *, char **, size_t);

/*
 * imsg types, one enum for the whole suite.  The payloads between the
 * parent and the worker, verifier and publisher are the structs of
 * msg.h (MSG_*), encoded and decoded by msg.c only; every dispatcher
 * checks the sender, and a child whose message does not decode is
 * killed (factory-workers(8), MESSAGES).
 */
enum imsg_type {
	IMSG_NONE,

	/* factoryctl <-> parent */
	IMSG_CTL_OK,		/* empty, or a JSON object */
	IMSG_CTL_FAIL,		/* a NUL-terminated reason */
	IMSG_CTL_DATA,		/* a piece of a JSON document or stream */
	IMSG_CTL_END,
	IMSG_CTL_STATUS,
	IMSG_CTL_POLICY,
	IMSG_CTL_RELOAD,
	IMSG_CTL_LOG_VERBOSE,	/* int */
	IMSG_CTL_SUBMIT,	/* struct ctl_submit + manifest bytes */
	IMSG_CTL_LIST,
	IMSG_CTL_SHOW,		/* attempt id */
	IMSG_CTL_LOGS,		/* n64 offset, n8 CTL_LOGS_*, id[, service] */
	IMSG_CTL_CANCEL,	/* attempt id */
	IMSG_CTL_APPROVE,	/* attempt id */
	IMSG_CTL_RECEIPTS,	/* attempt id */
	IMSG_CTL_ORPHANS,
	IMSG_CTL_REAP,
	IMSG_CTL_RECONCILE,
	IMSG_CTL_CACHE_LIST,
	IMSG_CTL_CACHE_RM,	/* "repository/commit", or a setup KEY */
	IMSG_CTL_CACHE_GC,	/* evict to the bounds now */

	/*
	 * child -> parent, once, first: pledge_describe() text, escaped
	 * line by line (msg_hello_make, msg_hello_read)
	 */
	IMSG_HELLO,

	/* parent <-> worker */
	IMSG_RESOLVE,		/* parent: MSG_RESOLVE; worker: MSG_RESOLVED */
	IMSG_PROVISION,		/* parent: MSG_PROVISION */
	IMSG_READY,		/* worker: MSG_READY */
	IMSG_COLLECT,		/* parent: MSG_COLLECT */
	IMSG_RESULT,		/* worker: MSG_RESULT */
	IMSG_HEARTBEAT,		/* worker: no payload */

	/* parent <-> verifier */
	IMSG_VERIFY_LOG,	/* parent: no payload, the attempt log's fd */
	IMSG_VERIFY,		/* parent: MSG_VERIFY + the bundle as an fd */
	IMSG_VALIDATE_REQ,	/* verifier: MSG_VALIDATE_REQ */
	IMSG_VALIDATE_DONE,	/* parent: MSG_VALIDATE_DONE, witnessed */
	IMSG_VERDICT,		/* verifier: MSG_VERDICT */

	/* parent <-> publisher */
	IMSG_PUBLISH,		/* parent: MSG_PUBLISH + the bundle as an fd */
	IMSG_PUBLISHED,		/* publisher: MSG_PUBLISHED */
	/*
	 * parent: MSG_PUBLISH, no fd: finish a publication another host
	 * began (the branch on the forge already), fleet adoption
	 */
	IMSG_PUBLISH_ADOPT,
	/* publisher: MSG_LATE, not begun: its begin_by had passed */
	IMSG_PUBLISH_LATE,

	/* parent <-> reconciler */
	IMSG_INVENTORY_REQ,
	IMSG_INVENTORY,

	IMSG_ERROR,		/* a request failed: MSG_ERROR (reconciler: its own) */

	/* factoryctl shell: SHELL, OK, then SHELL_FD, then the status */
	IMSG_CTL_SHELL,		/* attempt id NUL argv NUL ... (or empty) */
	IMSG_CTL_SHELL_FD,	/* struct ctl_shell_tty; the answer: the master */

	/* parent -> egress (egressmsg.h); egress sends nothing but HELLO */
	IMSG_EGRESS_LISTEN,	/* one endpoint + its listening socket */
	IMSG_EGRESS_CLOSE,	/* attempt id: its endpoints go */

	/*
	 * parent -> verifier, before IMSG_VERIFY, with an image: no
	 * payload, the image's rootfs directory as an fd (the store's
	 * directories above it are root's alone)
	 */
	IMSG_VERIFY_ROOTFS,

	/* factoryctl image (factoryctl(8), IMAGES) */
	IMSG_CTL_IMAGE_IMPORT,	/* name NUL, the archive as an fd */
	IMSG_CTL_IMAGE_LIST,
	IMSG_CTL_IMAGE_RM,	/* reference NUL */
	IMSG_CTL_IMAGE_VERIFY,	/* reference NUL */
	IMSG_CTL_IMAGE_PROGRESS, /* parent: struct image_progress */

	/* parent <-> factory-image (imagemsg.h) */
	IMSG_IMAGE_IMPORT,	/* parent: struct image_import + the archive */
	IMSG_IMAGE_CLEAN,	/* parent: empty; staging is emptied */
	IMSG_IMAGE_PROGRESS,	/* image: struct image_progress */
	IMSG_IMAGE_STRIPPED,	/* image: uint32 kind, escaped path NUL */
	IMSG_IMAGE_DONE,	/* image: struct image_done */
	IMSG_IMAGE_FAILED,	/* image: an escaped reason NUL */

	/* client -> parent (read-only socket too): OpenMetrics text */
	IMSG_CTL_METRICS,

	/* parent <-> factory-gateway (gwmsg.h) */
	IMSG_GW_PROVIDER,	/* parent: struct gw_provider */
	IMSG_GW_CONFIGURED,	/* parent: empty, after the last provider */
	IMSG_GW_GRANT,		/* parent: struct gw_grant + listening socket */
	IMSG_GW_TOKEN,		/* gateway: struct gw_token */
	IMSG_GW_USAGE,		/* gateway: struct gw_usage, one per request */
	IMSG_GW_REVOKE,		/* parent: attempt id, its tokens die */
	IMSG_GW_ERROR,		/* gateway: an escaped one-line reason */

	/* cohorts (factoryctl(8), COHORTS) */
	IMSG_CTL_SUBMIT_N,	/* uint32 size, then as IMSG_CTL_SUBMIT */
	IMSG_CTL_COHORT,	/* cohort id NUL */
	IMSG_CTL_SELECT,	/* member id NUL */
	IMSG_CTL_DIFF,		/* attempt id NUL */
	IMSG_DIFF,		/* parent: MSG_DIFF; worker: MSG_DIFFED */

	/* client -> parent (read-only socket too): attestations */
	IMSG_CTL_ATTEST,	/* attempt id: its attestations (attest.h) */

	/*
	 * parent -> verifier, before IMSG_VERIFY: no payload, the
	 * baseline's pristine checkout (the validation tree's lower
	 * layer, which the worker made) as a directory fd, to be checked
	 * against the baseline's tree before it is used
	 */
	IMSG_VERIFY_PRISTINE,
	/*
	 * parent -> verifier: MSG_PCHECK and the pristine tree's fd,
	 * before the first attempt uses it; verifier: MSG_PCHECKED
	 */
	IMSG_PRISTINE_CHECK,
	/*
	 * factoryctl submit --tenant, --priority, --idempotency-key: the
	 * tenant, the class and the key, each NUL-terminated ("" for the
	 * default), then as IMSG_CTL_SUBMIT (fleet: only).
	 */
	IMSG_CTL_FLEET_SUBMIT,
	IMSG_CTL_HOSTS,		/* empty: the fleet's hosts */
	IMSG_CTL_QUEUE,		/* empty: the fleet's waiting attempts */
	/*
	 * factoryctl cordon, uncordon, drain, pause, resume: the verb, the
	 * host or tenant ("" for the whole fleet), a note and the drain's
	 * deadline in seconds (decimal), each NUL-terminated.
	 */
	IMSG_CTL_FLEET_STATE,
	IMSG_CTL_TENANTS,	/* empty: the fleet's tenants */
	IMSG_CTL_USAGE,		/* the window in seconds, NUL-terminated */

	/* parent <-> factory-preview (previewmsg.h) */
	IMSG_PREVIEW_CONF,	/* parent: the key, domain; the listener */
	IMSG_PREVIEW_OPEN,	/* parent: an attempt's preview is live */
	IMSG_PREVIEW_CLOSE,	/* parent: it is not, from now on */
	IMSG_PREVIEW_CONNECT,	/* preview: a connection to it, please */
	IMSG_PREVIEW_CONNECTED,	/* parent: the answer, with its socket */
	IMSG_PREVIEW_OPENED,	/* preview: a token was exchanged */
	IMSG_PREVIEW_HEALTH,	/* preview: the health path's answer */
	/* factoryctl preview: attempt id NUL, ttl seconds (decimal) NUL */
	IMSG_CTL_PREVIEW,
	/* factoryctl attach: attempt id NUL, name NUL; the file as an fd */
	IMSG_CTL_ATTACH,
	IMSG_CTL_ATTACH_DATA,
	IMSG_CTL_ATTACH_END,
	IMSG_MAX
};

#endif /* FACTORY_H */
