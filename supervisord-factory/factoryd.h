/*
 * factoryd, the root parent: supervises the children, owns the journal,
 * the control sockets and the spawning of sandboxes.
 */
#ifndef FACTORYD_H
#define FACTORYD_H

#include <sys/types.h>
#include <sys/queue.h>
#include <event.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "conf.h"
#include "crypto.h"
#include "factory.h"
#include "imsgev.h"
#include "msg.h"
#include "sandbox.h"
#include "util.h"

#define CHILD_BACKOFF_MIN	1	/* seconds before a restart */
#define CHILD_BACKOFF_MAX	30
#define CHILD_STABLE		60	/* a child this old gets a fresh backoff */
#define MAX_VERIFIERS		16

enum child_state {
	CHILD_DOWN,		/* waiting for its restart */
	CHILD_STARTING,		/* forked, no HELLO yet */
	CHILD_RUNNING,
	CHILD_STOPPING
};

struct child {
	enum factory_procid	 id;
	int			 slot;		/* verifiers: 0..n-1 */
	pid_t			 pid;
	enum child_state	 state;
	struct imsgev		 iev;
	time_t			 started;
	int			 restarts;
	int			 backoff;
	struct event		 restart_ev;
	char			*policy;	/* what it applied (HELLO) */
	char			*argv_key;	/* its command line, to see reloads */
	int			 recycle;	/* restart at once when it exits */
	int			 reconfig;	/* restart once it is not busy */
	time_t			 reconfig_at;	/* when the reload asked */
	time_t			 stopping_at;	/* SIGTERM sent (proc_restart) */
	int			 recycled;	/* verdicts delivered */
	time_t			 heartbeat;	/* worker: last heartbeat */
};

/*
 * Lifecycle states (DESIGN.md).  Every transition is a journal record
 * carrying a signed receipt; attempt_transition() refuses illegal ones.
 */
enum attempt_state {
	AS_QUEUED,
	AS_PROVISIONING,
	AS_READY,
	AS_RUNNING,
	AS_RESULT_READY,
	AS_VERIFYING,
	AS_VERIFIED,
	AS_PUBLISHING,
	AS_PUBLISHED,
	AS_TEARDOWN,
	AS_TERMINATED,
	AS_FAILED,
	AS_REJECTED,
	AS_CANCELLED,
	AS_ORPHANED,
	/*
	 * A cohort's verified member waits for the selection (cohort.c):
	 * it never publishes on its own; the one selected goes on.
	 */
	AS_SELECTABLE,
	AS_SELECTED,
	AS_MAX
};

/*
 * The stages of an attempt, one after another: they partition its time
 * from "submitted" to "terminated".  t[] holds each one's start (ms
 * since the epoch, 0: not reached), t[ST_MAX] the end; a stage lasts
 * until the next start that is set.  Its sources are journal records
 * (and durations the parent measured, in their facts), so replay
 * rebuilds them as they were.
 */
enum attempt_stage {
	ST_QUEUE,		/* submitted, waiting for a slot and a uid */
	ST_ALLOCATION,		/* allocating: directories, disk */
	ST_CHECKOUT,		/* the worker's tree */
	ST_SANDBOX,		/* ready: the agent's sandbox starts */
	ST_RUN,			/* the agent, from its start to pid 1 reaped */
	ST_COLLECT,		/* sandbox removed, the worker collects */
	ST_VERIFY,		/* result-ready to the verdict */
	ST_PUBLISH,		/* the verdict to published, or approval */
	ST_TEARDOWN,		/* ended: teardown until terminated */
	ST_MAX
};

/*
 * Parts measured inside a stage and shown beside it, not in it: image
 * and cache are taken out of the sandbox stage, the validation run out
 * of verify.  -1: none (shown as null, "-" by factoryctl show).
 */
enum attempt_part {
	PART_IMAGE,		/* the image made ready for the sandbox */
	PART_CACHE,		/* cache lookup, or miss and setup run */
	PART_SERVICES,		/* the agent's services, until ready */
	PART_VALIDATION,	/* the verifier's validation run */
	PART_MAX
};

/* A sandboxed run: the agent, or the verifier's validation run. */
struct run {
	struct attempt		*attempt;
	int			 validation;
	int			 setup;		/* RUN_SETUP */
	int			 service;	/* RUN_SERVICE: index + 1 */
	uid_t			 uid;
	struct sandbox		 sb;
	int			 active;	/* pid 1 not yet reaped */
	int			 status;	/* agent's wait status */
	int			 timedout;
	int			 cancelled;
	int			 detached;	/* attempt gone: free when reaped */
	struct cg_wait		*cgwait;	/* reaped, its cgroups going */
	struct event		 deadline;
	struct event		 logev;
	int			 logpipe;	/* read end */
	int			 logfd;		/* the attempt's log file */
	uint64_t		 logged;
	uint64_t		 logmax;
	int			 logtrunc;
	struct sandbox_usage	 usage;
	uint64_t		 started_ms;	/* pid 1 said the argv runs */
	uint64_t		 ended_ms;	/* pid 1 reaped */
	struct egress		*egress;	/* network.allow, or NULL */
	struct gateway		*gateway;	/* model:, upstreams:, or NULL */
	/* A service's: pid 1's socket, "Y" and "N" of its ready command. */
	void			(*ready)(struct run *, int, int);
	struct event		 sockev;
	int			 sockev_set;
};

/* What the gateway's "model" receipts add up to (live and replay). */
struct attempt_spend {
	uint64_t		 requests;
	uint64_t		 refused;	/* outcome other than ok */
	uint64_t		 estimated;	/* charged without usage */
	uint64_t		 tokens_in;
	uint64_t		 tokens_out;
	uint64_t		 cost_uusd;	/* micro-dollars */
};

struct attempt {
	TAILQ_ENTRY(attempt)	 entry;
	char			 id[ATTEMPT_ID_MAX];
	enum attempt_state	 state;
	enum attempt_state	 outcome;	/* once terminal */
	char			*reason;
	char			*manifest_raw;
	size_t			 manifest_len;
	struct manifest		*m;
	char			 digest[80];	/* "sha256:<hex>" */
	/* Frozen at submission: "sha256:<hex>", or "" for the host root. */
	char			 image[80];
	char			 toolchain[80];	/* "" without a toolchain */
	char			 baseline[41];
	char			 repo[REPO_NAME_MAX];
	uid_t			 submitter;
	uid_t			 uid;		/* agent */
	uid_t			 vuid;		/* validation run */
	/*
	 * Its services' (service.c), journaled with uid at allocation:
	 * the agent's set's, then the validation's (service_uid).
	 */
	uid_t			 suid[2 * MANIFEST_SERVICES];
	struct svcset		*svc;		/* the services running */
	struct svcset		*keep;		/* the agent's, for the preview */
	/* Its preview is live until then (unix seconds), 0: none. */
	uint64_t		 preview_until;
	uint64_t		 preview_from;	/* now_ms() it went live */
	/* approve -k: kept for review past the approval until then. */
	uint64_t		 keep_until;
	int			 preview_health; /* a HEALTH is due */
	/* Its "evidence" receipts: {name, uid, bytes, sha256, type, at}. */
	json_t			*evidence;
	char			 dir[PATH_MAX];
	char			 vdir[PATH_MAX];
	/* The overlays mounted on dir/tree, vdir/checkout: their st_dev. */
	uint64_t		 tree_dev;
	uint64_t		 checkout_dev;
	uint64_t		 epoch;
	int			 approved;
	uid_t			 approver;
	uid_t			 canceller;
	int			 rejected_by_verdict;
	struct run		*run;
	struct child		*verifier;
	char			 commit[41];
	char			 tree[41];
	char			 bundle_sha256[65];
	uint64_t		 bundle_size;
	char			*verdict;	/* the verdict receipt line */
	char			 branch[128];
	int			 pull;
	char			 record[PATH_MAX];
	json_t			*changes;	/* listed, escaped (esc.h) */
	size_t			 changes_total;	/* counted by the worker */
	json_t			*findings;	/* listed, escaped */
	size_t			 findings_total; /* counted by the verifier */
	json_t			*validation;	/* the verdict's, or NULL */
	json_t			*denials;	/* seccomp, from the kernel log */
	struct sandbox_usage	 usage;
	int			 exit_status;	/* -1: none yet */
	uint64_t		 t[ST_MAX + 1];	/* ms at each stage start */
	int64_t			 part_ms[PART_MAX];	/* -1: none */
	/* the receipt chain */
	char		       **receipts;
	size_t			 nreceipts;
	char			 prev[SHA256_HEX_LEN + 1];
	int			 torn_down;
	int			 cancel_requested;
	int			 publish_sent;	/* a PUBLISH is outstanding */
	int			 redrive;	/* resend to a new worker */
	int			 reverify;	/* verify again, a fresh verifier */
	int			 redrives;	/* leases granted after the first */
	int			 verifies;	/* verifications started */
	/*
	 * Its baseline's pristine tree, before the first attempt uses it:
	 * 1 waits for a verifier to check it, 2 is being checked.
	 */
	int			 pcheck;
	int			 pchecks;	/* checks started */
	struct event		 retry_ev;	/* teardown retries */
	int			 retry_set;
	struct event		 wait_ev;	/* a teardown's short waits */
	int			 wait_set;
	int			 cg_tries;
	int			 kill_looks;
	uint64_t		 disk;		/* bytes, journaled at allocation */
	int			 timedout;	/* from the exited record */
	int			 disk_full;	/* from the exited record */
	/*
	 * The setup phase (setup.c): its key, once computed; the digest
	 * of the entry's outputs; whether it was a hit.  From the running
	 * receipt on replay.
	 */
	char			 setup_key[SHA256_HEX_LEN + 1];
	char			 setup_digest[SHA256_HEX_LEN + 1];
	int			 setup_hit;
	/* The baseline tree the entry was built from (its meta's). */
	char			 setup_tree[41];
	int			 setup_ready;	/* the entry is there */
	int			 setup_status;	/* a miss's wait status */
	uint64_t		 setup_files;
	uint64_t		 setup_bytes;
	uint64_t		 setup_ms;
	uint64_t		 setup_t0;
	/*
	 * The entry checked by a job before a verification (1), or to be
	 * checked in the loop as before (-1: the job could not say).
	 */
	int			 setup_vchecked;
	/*
	 * The verifier asked for its validation run (VALIDATE_REQ): 1
	 * until it starts, the setup entry checked by a job first.
	 */
	int			 validate_req;
	/* A record the journal refused (disk full), tried again later. */
	char			*stall_line;
	json_t			*stall_extra;
	struct event		 stall_ev;
	int			 stall_set;
	int			 stall_tries;	/* refused again, for the log */
	struct attempt_spend	 spend;		/* model receipts */
	/* A cohort's member: its id and variant, from "submitted". */
	char			 cohort[COHORT_ID_MAX];
	int			 variant;
	int			 selected;	/* the cohort's selection */
	uid_t			 selector;
	json_t			*select_failures; /* publish-failed */
	/* Claimed from the fleet (fleet.c): its claim epoch, 0 if not. */
	uint64_t		 fleet_epoch;
	uint64_t		 fleet_host_epoch;
	int			 fleet_sent;	/* FLEET_SENT_* */
	/*
	 * Not journaled: until when (mono_ms) its claim is surely this
	 * host's, the lease's end less a margin, counted from when the
	 * claim or its last renewal was sent (0: not known since start);
	 * when its run was frozen for a lapsed lease; a renewal on its
	 * way; another host has it now; its publication held back.
	 */
	uint64_t		 fleet_lease_end;
	uint64_t		 fleet_frozen_at;
	uint64_t		 fleet_watchdog_ms; /* a sandbox's, at its start */
	int			 fleet_watchdog; /* a sandbox's watchdog fired */
	int			 fleet_renewing;
	int			 fleet_superseded;
	int			 fleet_held;
	int			 fleet_handback; /* drained: back to the queue */
	int			 fleet_marking;	/* publishing: asked */
	int			 fleet_marked;	/* publishing: the database's */
	/* boot_ms() its publication must have begun by (fleet.c's gate) */
	uint64_t		 fleet_begin_by;
	/* Its claim's tenant, "" if none: who may act on it (fleet.c). */
	char			 fleet_tenant[CONF_FLEET_NAMEMAX];
};
TAILQ_HEAD(attempts, attempt);
#define FLEET_SENT_NOT		0	/* its outcome is still to go */
#define FLEET_SENT_ASKED	1	/* on its way */
#define FLEET_SENT_DONE		2	/* answered, and journaled so */

/*
 * A cohort (best-of-N): journaled as its own record before any member
 * exists; its members are attempts naming it in their "submitted"
 * receipts, and the one selected is the member with a "selected"
 * receipt, so that nothing of it is kept twice.
 */
struct cohort {
	TAILQ_ENTRY(cohort)	 entry;
	char			 id[COHORT_ID_MAX];
	int			 size;
	uid_t			 submitter;
	uint64_t		 ms;		/* journaled at */
	char			 digest[80];	/* the frozen manifest's */
	char			 repo[REPO_NAME_MAX];
};
TAILQ_HEAD(cohorts, cohort);

struct ctl_conn {
	TAILQ_ENTRY(ctl_conn)	 entry;
	struct imsgev		 iev;
	uint32_t		 id;
	uid_t			 uid;		/* SO_PEERCRED */
	gid_t			 gid;		/* SO_PEERCRED */
	uid_t			 owner;		/* whose share it takes */
	pid_t			 pid;
	int			 readonly;
	int			 awaiting;	/* an answer comes later */
	int			 nwaits;	/* its rows in control.c's waits */
	int			 halfclosed;	/* shut its sending side */
	struct event		 idle;		/* control-idle-timeout */
	int			 sending;	/* an answer is on its way */
	struct shell		*shell;		/* factoryctl shell, or NULL */
	struct ev_upload	*upload;	/* factoryctl attach's bytes */
};

struct factoryd {
	struct factoryd_conf	*conf;
	const char		*conffile;
	int			 debug;
	int			 verbose;
	time_t			 started;
	struct child		 children[PROC_MAX - 1 + MAX_VERIFIERS];
	struct attempt		*busy[PROC_MAX - 1 + MAX_VERIFIERS];
	int			 nchildren;
	int			 shutting_down;
	TAILQ_HEAD(, ctl_conn)	 ctl_conns;
	struct attempts		 attempts;
	struct cohorts		 cohorts;
	struct journal		*journal;
	EVP_PKEY		*receipt_key;
	uint8_t			 receipt_pub[ED25519_PUB_LEN];
	uint8_t			 verifier_pub[ED25519_PUB_LEN];
	char			 verifier_pub_b64[BASE64_SIZE(ED25519_PUB_LEN)];
	int			 replaying;
	char			 instance[16];	/* names our cgroup subtree */
	int			 binfd[PROC_MAX];	/* children, opened at start */
	int			 sandboxfd;	/* factory-sandbox, likewise */
	int			 lockfd;	/* the state dir's, held */
};

extern struct factoryd	*env;

/*
 * What the parent does with each kind of child, one row per kind:
 * dispatch.c's table, given to proc.c, which is transport only.  A
 * NULL member: nothing to do (no dispatch: every message of that child
 * is refused).
 */
struct child_handler {
	enum factory_procid	 id;
	int			(*dispatch)(struct child *, struct imsg *,
				    char *, size_t);
	void			(*ready)(struct child *);
	void			(*lost)(struct child *);
	/* Holds work a restart would lose: a reload waits for it. */
	int			(*busy)(struct child *);
};

/* factoryd.c */
int	 factoryd_reload(char *, size_t);
int	 factoryd_open_binary(const char *, const char *, char *, size_t);

/* proc.c */
void	 proc_init_children(void);
void	 proc_start_all(void);
void	 proc_reap(void);
void	 proc_reconfigure(void);
struct child *proc_find(enum factory_procid, int);
void	 proc_kill(struct child *, const char *);
int	 proc_compose(enum factory_procid, uint32_t, uint32_t, int,
	    const void *, size_t);
int	 proc_compose_json(enum factory_procid, uint32_t, int, json_t *);
/*
 * A typed message (msg.h) to the first child of that kind: -1 with
 * errno EAGAIN if it is not running, EINVAL (and err) if the struct
 * cannot be encoded.  fd is closed on failure.
 */
int	 proc_compose_msg(enum factory_procid, uint32_t, enum msg_kind, int,
	    const void *, char *, size_t);
void	 proc_watchdog_init(void);
void	 proc_broadcast(uint32_t, const void *, size_t);
const char *proc_state_name(enum child_state);
/* The handlers of each kind, and reapers of pids not children's. */
#define PROC_REAPERS_MAX	8
void	 proc_handlers(const struct child_handler *, size_t);
void	 proc_reaper(int (*)(pid_t, int));

/*
 * lifecycle.c: receipt kinds, the state each leads to (AS_MAX keeps
 * the state: a fact was recorded), and the states it may come from.
 */
struct transition {
	const char		*kind;
	enum attempt_state	 to;
	uint32_t		 from;		/* bit mask of states */
};
/* What lifecycle_replay(), a journal_open() callback, rebuilds into. */
struct lifecycle_replay {
	struct attempts		*attempts;
	const char		*statedir;
	struct cohorts		*cohorts;	/* NULL: cohort records refused */
};
const char *attempt_state_name(enum attempt_state);
const struct transition *transition_find(const char *);
size_t	 transition_count(void);
const struct transition *transition_at(size_t);
int	 transition_legal(const struct transition *, enum attempt_state);
int	 lifecycle_legal(const struct attempt *, const struct transition *);
struct attempt *lifecycle_find(struct attempts *, const char *);
struct attempt *lifecycle_new(struct attempts *, const char *, const char *);
void	 lifecycle_chain(struct attempt *, const struct transition *,
	    const char *, json_t *, uint64_t);
/*
 * The stages in ms (factoryctl show's "stages"): every stage and part
 * by name, a number or null; "total" and "overhead" (total minus the
 * agent's run and the validation run) once ended at end (0: not yet;
 * the stage under way is counted up to now).
 */
json_t	*lifecycle_stages(const struct attempt *, uint64_t, uint64_t);
int	 lifecycle_replay(void *, uint64_t, const char *, size_t);
/*
 * Cohorts: the record journaled for one ({"cohort": {...}}) and its
 * members.  lifecycle_cohort_record() checks and applies a record,
 * live and on replay alike.
 */
int	 lifecycle_cohort_record(struct cohorts *, json_t *, uint64_t, char *,
	    size_t);
struct cohort *lifecycle_cohort_find(struct cohorts *, const char *);
struct attempt *lifecycle_cohort_selected(struct attempts *, const char *);
int	 lifecycle_cohort_id(const char *);
/* Small facts of one attempt, asked by every part of the parent. */
struct attempt *attempt_find(const char *);
int	 attempt_terminal(const struct attempt *);
void	 attempt_logpath(struct attempt *, int, char *, size_t);
void	 service_logpath(struct attempt *, int, const char *, char *, size_t);
/*
 * A part of the sandbox stage measured where it happens (the image
 * made ready, the cache looked up or filled): journaled with the
 * agent's exit, shown by show and in the terminated receipt.
 */
void	 attempt_part_time(struct attempt *, enum attempt_part, uint64_t);
/* The day's ids of attempts and cohorts. */
struct dayseq {
	char		 day[9];
	unsigned	 next;
};
void	 dayseq_next(struct dayseq *, char, unsigned (*)(const char *),
	    char *, size_t);
unsigned dayseq_number(const char *, const char *);

/*
 * dispatch.c: the table proc_handlers() is given.  dispatch_* return
 * -1 and why (for the log) if the child is to be killed; *_ready run
 * once it said HELLO, *_lost once it is gone.
 */
extern const struct child_handler child_handlers[];
extern const size_t nchild_handlers;
int	 dispatch_worker(struct child *, struct imsg *, char *, size_t);
int	 dispatch_verifier(struct child *, struct imsg *, char *, size_t);
int	 dispatch_publisher(struct child *, struct imsg *, char *, size_t);
int	 dispatch_reconciler(struct child *, struct imsg *, char *, size_t);
void	 worker_ready(struct child *);
void	 reconciler_ready(struct child *);
void	 reconciler_lost(struct child *);
void	 egress_ready(struct child *);
void	 child_ready(struct child *);
void	 worker_lost(struct child *);
void	 verifier_lost(struct child *);
void	 publisher_lost(struct child *);
int	 verifier_busy(struct child *);
int	 publisher_busy(struct child *);

/*
 * fleet.c: the parent's side of factory-fleet.  done(arg, answer type,
 * the decoded answer) once; type 0 and NULL when the child was lost.
 */
typedef void	(*fleet_done)(void *, uint32_t, const void *);
struct fleet_opts {
	char		 tenant[CONF_FLEET_NAMEMAX];	/* "": the caller's one */
	int		 class;		/* FLEET_URGENT .. FLEET_BATCH */
	char		 key[128];	/* "": none */
};
struct fleet_claimed;
/*
 * What runs a claim here (submit.c): 0 started, -1 refused (failed,
 * with why), -2 the child lied, -3 handed back to the queue (why).
 */
typedef int	(*fleet_run_fn)(const struct fleet_claimed *, char *, size_t);
int	 fleet_request(uint32_t, struct ibuf *, fleet_done, void *);
uint32_t fleet_list_of(uint32_t, const char **);
void	 fleet_init(fleet_run_fn);
void	 fleet_submit(struct ctl_conn *, const struct fleet_opts *,
	    const char *, const char *, size_t);

/*
 * tenant.c: who acts for which tenant of the fleet.  The caller's one
 * (or the one named, if it acts for it), or NULL and why; whether it
 * may act on an attempt or a cohort: 0, or -1 and the refusal in why.
 */
const struct conf_tenant *tenant_of(struct ctl_conn *, const char *, char *,
	    size_t);
int	 tenant_may_act(struct ctl_conn *, const char *,
	    const struct attempt *, char *, size_t);
int	 tenant_may_act_cohort(struct ctl_conn *, const char *, const char *,
	    char *, size_t);
/*
 * adopt.c: attempts lost while publishing on another host, finished
 * here from the forge's side.  fleet.c hands it its request and its
 * outcome (a claim's, fenced); dispatch.c the publisher's answers.
 */
struct msg_published;
typedef int	(*adopt_request_fn)(uint32_t, struct ibuf *, fleet_done,
		    void *);
typedef void	(*adopt_outcome_fn)(const char *, uint64_t, int,
		    const char *, const struct attempt *, fleet_done, void *);
/* The lease an answer just taken brings, and the leases' clock (ms). */
typedef uint64_t (*adopt_clock_fn)(void);
void	 adopt_init(adopt_request_fn, adopt_outcome_fn, adopt_clock_fn,
	    adopt_clock_fn);
void	 adopt_poll(int);
void	 adopt_beat(void);
void	 adopt_tick(void);
void	 adopt_publisher_lost(void);
int	 adopt_busy(void);
int	 adopt_late(const char *, const char *);
int	 adopt_answer(const char *, const struct msg_published *,
	    const char *);
void	 adopt_counts(uint64_t *, uint64_t *);

/* A claim handed to fleet_run_fn ended before it was an attempt. */
void	 fleet_claim_dropped(const char *, uint64_t, const char *);
void	 fleet_claim_started(void);
void	 fleet_ctl_list(struct ctl_conn *, struct imsg *);
void	 fleet_ctl_state(struct ctl_conn *, struct imsg *);
void	 fleet_ctl_cancel(struct ctl_conn *, const char *);
uint64_t fleet_epoch(void);
/*
 * This host's side of the fleet since start: fleet.c hands it to the
 * metrics (metrics_fleet) on each of its ticks.
 */
struct fleet_stats {
	uint64_t	 epoch;
	int		 fenced;
	uint64_t	 lease_left_ms;	/* the host's, as counted here */
	uint64_t	 claims;	/* claimed by this host */
	uint64_t	 superseded;	/* claims of it another host has now */
	uint64_t	 fences;	/* times fenced */
	uint64_t	 swept[3];	/* by its sweeps: queued, dead, lost
					   while publishing */
	uint64_t	 adopted[2];	/* adoptions ended here: done, failed */
	/* The fleet's, as the database said last (every few seconds). */
	int		 hosts_expired;	/* -1: not asked yet */
	size_t		 nqueues;
	struct fleet_queue_gauge {
		char		 tenant[CONF_FLEET_NAMEMAX];
		int		 class;
		uint32_t	 queued;
		uint64_t	 oldest_ms;
	}		 queues[64];	/* fleetmsg.h's FLEET_GAUGES_MAX */
};
void	 metrics_fleet(const struct fleet_stats *);
/*
 * A gate above attempt.c (fleet.c sets it): may the attempt start its
 * sandbox (ATTEMPT_GATE_RUN), or begin its publication
 * (ATTEMPT_GATE_PUBLISH), now?  0: not yet, attempt_schedule asks
 * again.  No gate set: always.
 */
#define ATTEMPT_GATE_RUN	0
#define ATTEMPT_GATE_PUBLISH	1
void	 attempt_set_gate(int (*)(struct attempt *, int));
int	 attempt_gate(struct attempt *, int);	/* lifecycle.c */
uint64_t fleet_claim_lease(void);
void	 fleet_ready(struct child *);
void	 fleet_reconfigure(void);
void	 fleet_lost(struct child *);
int	 fleet_dispatch(struct child *, struct imsg *, char *, size_t);

/* submit.c */
void	 attempt_submit(struct ctl_conn *, struct imsg *);
void	 attempt_submit_n(struct ctl_conn *, struct imsg *);
void	 attempt_submit_fleet(struct ctl_conn *, struct imsg *);
int	 attempt_claimed(const struct fleet_claimed *, char *, size_t);
void	 attempt_recover(void);

/* attempt.c */
int	 attempt_init(char *, size_t);
void	 attempt_schedule(void);
void	 attempt_shutdown(void);
json_t	*attempt_json(struct attempt *);
void	 attempt_cancel(struct attempt *, uid_t);
void	 attempt_cancel_why(struct attempt *, uid_t, const char *);
int	 attempt_approve(struct attempt *, uid_t, char *, size_t);
void	 attempt_run_done(struct run *);
void	 attempt_setup_stored(struct attempt *, int, const char *);
void	 attempt_note(struct attempt *, const char *, json_t *);
int	 attempt_mark(struct attempt *, const char *, json_t *);
void	 attempt_publish_selected(struct attempt *);
int	 attempt_publishing(const struct attempt *);

/* cohort.c */
void	 cohort_newid(char *, size_t);
int	 cohort_journal(struct cohort *, char *, size_t);
void	 cohort_member_verified(struct attempt *);
void	 cohort_published(struct attempt *);
void	 cohort_publish_failed(struct attempt *, const char *);
struct msg_publish;
int	 cohort_publish_fill(const struct attempt *, struct msg_publish *);
void	 cohort_recover(void);
int	 cohort_select(const char *, uid_t, char *, size_t);
int	 cohort_cancel(const char *, uid_t, char *, size_t);
json_t	*cohort_json(const char *, char *, size_t);
json_t	*cohorts_json(void);
struct cohort *cohort_find(const char *);
void	 cohort_diff_request(struct ctl_conn *, struct imsg *);
void	 cohort_diffed(const struct msg_diffed *);

/* reconcile.c */
void	 reconcile_start(struct ctl_conn *);
void	 reconcile_child_lost(void);
json_t	*reconcile_orphans_json(void);
int	 reconcile_reap(const char *, uid_t, json_t **, char *, size_t);
/* Leftovers found, not reaped yet. */
size_t	 reconcile_orphan_count(void);

/* agents.c */
#define AGENTS_FILEMAX	16384	/* bytes of a HOME file (sbx.h's too) */
#define AGENTS_HOMEMAX	16	/* HOME files of a run, 2 strings each */
int	 agents_grant(int, uint16_t, const char *,
	    const struct manifest_model *, char **, int *, int, char **, int *,
	    int);

/* gateway.c */
struct gateway;
int	 gateway_admit(const char *, const struct conf_repo *,
	    const struct manifest *, char *, size_t);
int	 gateway_new(const struct attempt *, const struct sandbox_listen *, int,
	    struct gateway **, char *, size_t);
int	 gateway_listen(const struct gateway *, struct sandbox_listen *, int);
char * const *gateway_env(const struct gateway *);
char * const *gateway_home(const struct gateway *);
void	 gateway_start(struct gateway *, struct sandbox *);
void	 gateway_free(struct gateway *);
void	 gateway_forget(void);
void	 gateway_revoke(const char *);
void	 gateway_configure(void);
void	 gateway_ready(struct child *);
int	 dispatch_gateway(struct child *, struct imsg *, char *, size_t);
int	 gateway_nofile(void);

/* attest.c */
void	 attest_isolation(const struct attempt *, char [MSG_DIGEST]);
int	 attest_provenance(const struct attempt *, char [MSG_DIGEST],
	    char [MSG_DIGEST], char *, size_t);
int	 attest_verdict(const struct attempt *, const char *, const char *,
	    int, char *, size_t);
char	*attest_export(const char *, size_t *);
char	*attest_check_summary(const struct attempt *, uint64_t);
void	 attest_publish_fill(const struct attempt *, struct msg_publish *,
	    uint64_t);
void	 attest_publish_free(struct msg_publish *);
void	 attest_ctl(struct ctl_conn *, struct imsg *);

/* keys.c */
int	 keys_create(struct factoryd_conf *);
int	 keys_load(void);

/* run.c */
/* What a run is: its second argument. */
#define RUN_AGENT	0
#define RUN_VALIDATION	1
#define RUN_SETUP	2	/* the manifest's setup, before the agent */
#define RUN_SERVICE	3	/* a manifest's service (service.c) */
struct run_with {
	int		 kind;		/* RUN_* */
	int		 service;	/* RUN_SERVICE: the manifest's index */
	int		 validation;	/* RUN_SERVICE: beside validation */
	/* Beside services (and for each but the first of them): */
	const int	*netns;		/* their network namespace */
	const uint16_t	*ports;		/* their ports, to connect to */
	int		 nports;
	uid_t		 uid;		/* RUN_SERVICE: the service's */
	/* RUN_SERVICE: its directory's device and inode (plan.h). */
	uint64_t	 tree_dev;
	uint64_t	 tree_ino;
	/* RUN_SERVICE: pid 1's word on its ready command (service.c). */
	void		(*ready)(struct run *, int, int);
};
struct run *run_start(struct attempt *, int, const char *, char *, size_t);
struct run *run_start_with(struct attempt *, const struct run_with *,
	    const char *, char *, size_t);
int	 run_reap(pid_t, int);
void	 run_kill(struct run *);
void	 run_free(struct run *);
const char *run_limit(const char *, const struct manifest *, int,
	    const struct sandbox_usage *, int, char *, size_t);

/* preview.c */
int	 preview_init(char *, size_t);
void	 preview_open(struct attempt *);
void	 preview_close(struct attempt *);
void	 preview_ended(struct attempt *);
void	 preview_ready(struct child *);
int	 preview_dispatch(struct child *, struct imsg *, char *, size_t);
void	 preview_ctl(struct ctl_conn *, struct imsg *);
json_t	*preview_json(const struct attempt *);
int	 preview_keep(struct attempt *, uint64_t, char *, size_t);
void	 preview_kept_note(struct attempt *, uid_t);
int	 preview_kept(const struct attempt *);
void	 preview_unkeep(struct attempt *, uid_t);

/* evidence.c: what an operator attached (factoryctl attach) */
#define EVIDENCE_NAME_MAX	64		/* bytes of a name */
#define EVIDENCE_FILES		16		/* files of one attempt */
void	 evidence_begin(struct ctl_conn *, struct imsg *);
void	 evidence_data(struct ctl_conn *, struct imsg *);
void	 evidence_end(struct ctl_conn *, struct imsg *);
void	 evidence_gone(struct ctl_conn *);

/* service.c */
struct svcset;
int	 service_netns(const struct attempt *);
uid_t	 service_uid(const struct attempt *, int, int);
int	 service_ready(struct attempt *, int, char *, size_t);
void	 service_with(struct attempt *, struct run_with *);
int	 service_hold(struct attempt *, struct run *);
int	 service_stop(struct attempt *);
void	 service_unkeep(struct attempt *);
void	 service_run_done(struct run *);
json_t	*service_facts(const struct attempt *);
uint64_t service_ready_ms(const struct attempt *);

/* audit.c */
void	 audit_init(void);
void	 audit_flush(void);

/* parent_policy.c */
int	 parent_policy_apply(char *, size_t);
const char *parent_policy_describe(void);

/* disk.c */
uint64_t disk_inodes(uint64_t);
uint64_t disk_limit(const struct manifest *);
json_t	*disk_facts(const char *, uint64_t);
int	 disk_mount(const char *, uint64_t, uid_t, gid_t, char *, size_t);
int	 disk_unmount(const char *);
/* The launcher's probe said: layers attached first (1) or not (0). */
void	 disk_set_attach(int);
/* lower, an extra read-only lower above it (setup outputs) or NULL, ... */
int	 disk_overlay(const char *, const char *, const char *, const char *,
	    uid_t, gid_t, char *, size_t);
json_t	*disk_overlay_facts(const char *, const char *, const char *);
int	 disk_overlay_mounted(const char *, const char *);
int	 disk_overlay_dev(const char *, const char *, uint64_t *, char *,
	    size_t);
int	 disk_overlay_unmount(const char *, const char *);
int	 disk_chown_upper(const char *, uid_t, uid_t, char *, size_t);
json_t	*disk_usage(const char *, uint64_t, int *);

/* setup.c */
int	 setup_init(char *, size_t);
int	 setup_begin(struct attempt *, char *, size_t);
int	 setup_finish(struct attempt *, struct run *, char *, size_t);
int	 setup_verify_start(struct attempt *);
int	 setup_verify(struct attempt *, char *, size_t);
int	 setup_teardown(struct attempt *);
int	 setup_reap(pid_t, int);
void	 setup_shutdown(void);
json_t	*setup_facts(struct attempt *);

/* setupcache.c */
int	 setup_path(char *, size_t, const char *, const char *, const char *);
int	 setup_entry_path(const char *, char *, size_t);
int	 setup_run_remove(const char *);
int	 setup_meta(const char *, char [SHA256_HEX_LEN + 1],
	    char [SHA256_HEX_LEN + 1], uint64_t *, uint64_t *,
	    struct timespec *, char [41]);
void	 setup_touch(const char *);
int	 setup_in_use(const char *);
void	 setup_rm_start(const char *);
int	 setup_run_removing(const char *);
void	 setup_run_remove_start(const char *);
int	 setup_rm_reap(pid_t, int);
void	 setup_rm_shutdown(void);
long long setup_job_deadline(void);
int	 setup_remove(const char *);
int	 setup_evict(void);
json_t	*setup_gc(void);
json_t	*setup_list(void);

/* pristine.c */
int	 pristine_path(const char *, const char *, const char *, char *,
	    size_t);
int	 pristine_prepare(struct attempt *, char *, size_t, char *, size_t);
void	 pristine_touch(const char *, const char *);
int	 pristine_commit(struct attempt *, const char *,
	    void (*)(struct attempt *, const char *), char *, size_t);
int	 pristine_drop_tmp(struct attempt *);
void	 pristine_poisoned(struct attempt *, const char *);
int	 pristine_checked(const char *, const char *, char [41]);
int	 pristine_mark_checked(const char *, const char *, const char *);
int	 pristine_in_use(const char *, const char *);
int	 pristine_remove(const char *, const char *);
void	 pristine_evict(void);
json_t	*pristine_list(void);

/* fsutil.c */
int	 fs_chown_tree(const char *, uid_t, uid_t, gid_t, char *, size_t);
int	 fs_open_untrusted(const char *, uid_t, char *, size_t);
int	 fs_remove_tree(const char *);
int	 fs_mkdir_owned(const char *, mode_t, uid_t, gid_t);
int	 uid_kill_all(uid_t, uid_t);
int	 pid_kill_uid(pid_t, uid_t, uid_t *);

/* egress.c */
struct egress;
/* 0 and *out NULL if allow is NULL; -1 and a reason if a name fails. */
int	 egress_new(const char *, char *const *, struct egress **, char *,
	    size_t);
void	 egress_spec(struct egress *, struct sandbox_spec *);
void	 egress_start(struct egress *, struct sandbox *);
void	 egress_free(struct egress *);
void	 egress_child_ready(void);
int	 egress_nofile(void);

/* shell.c */
struct shell;
void	 shell_request(struct ctl_conn *, struct imsg *);
void	 shell_fd(struct ctl_conn *, struct imsg *);
void	 shell_conn_closed(struct ctl_conn *);
int	 shell_reap(pid_t, int);
void	 shell_cgroups_remove(const struct sandbox *);

/*
 * reply.c: the one way an answer reaches a control client.  A request
 * answered later waits in reply.c's table of waits, keyed by its
 * connection.  reply_wait() makes the row (arg is the owner's, drop()
 * frees it if the connection goes first) and returns its id, the one
 * thing the owner keeps or sends to a child; reply_wait_take() removes
 * the row for the answer: its connection and arg, or NULL if the
 * connection closed (the row went with it).
 */
enum ctl_wait_kind {
	CTL_WAIT_SUBMIT,	/* the worker resolves the baseline */
	CTL_WAIT_RECONCILE,	/* the reconciler's inventory */
	CTL_WAIT_DIFF,		/* the worker's diff of a result */
	CTL_WAIT_FLEET,		/* factory-fleet queues a submission */
	CTL_WAIT_MAX
};
void	 reply_init(void (*)(int, short, void *));
uint32_t reply_wait(struct ctl_conn *, enum ctl_wait_kind, void *,
	    void (*)(void *));
struct ctl_conn *reply_wait_take(uint32_t, enum ctl_wait_kind, void **);
/* Every wait of a kind: its client hears why, its arg is dropped. */
void	 reply_wait_fail(enum ctl_wait_kind, const char *);
size_t	 reply_wait_count(enum ctl_wait_kind);
/* Was id ever returned by reply_wait()? */
int	 reply_wait_issued(uint32_t);
/* 1 if c still waits within its bound; overdue rows are answered. */
int	 reply_wait_bounded(struct ctl_conn *);
void	 reply_wait_drop(struct ctl_conn *);
void	 reply_json(struct ctl_conn *, const char *);
void	 reply_obj(struct ctl_conn *, json_t *);
void	 reply_fail(struct ctl_conn *, const char *, ...)
	    __attribute__((__format__ (printf, 2, 3)));
struct ctl_conn *reply_conn(uint32_t);
/* The attempt a request names, or NULL and the client told why. */
struct attempt *reply_attempt(struct ctl_conn *, struct imsg *);
/* A connection's events: read when idle, write when queued. */
void	 reply_events(struct ctl_conn *);
void	 reply_touch(struct ctl_conn *);
int	 reply_busy(struct ctl_conn *);

/* control.c */
int	 control_init(const char *, int (*)(char *, size_t));
void	 control_cleanup(const char *);
int	 control_nofile(void);

/*
 * report.c: how a part below tells the one above; the table, given
 * once by the parent's main (report_init), names who acts on each.
 */
struct reports {
	void	(*note)(struct attempt *, const char *, json_t *);
	void	(*schedule)(void);
	void	(*run_done)(struct run *);
	void	(*setup_stored)(struct attempt *, int, const char *);
	void	(*published)(struct attempt *);
	void	(*verified)(struct attempt *);
	int	(*publish_fill)(const struct attempt *, struct msg_publish *);
	void	(*services_ready)(struct attempt *, int);
	void	(*services_failed)(struct attempt *, const char *);
	void	(*services_gone)(struct attempt *);
};
void	 report_init(const struct reports *);
void	 report_note(struct attempt *, const char *, json_t *);
void	 report_schedule(void);
void	 report_run_done(struct run *);
void	 report_setup_stored(struct attempt *, int, const char *);
void	 report_published(struct attempt *);
void	 report_verified(struct attempt *);
int	 report_publish_fill(const struct attempt *, struct msg_publish *);
void	 report_services_ready(struct attempt *, int);
void	 report_services_failed(struct attempt *, const char *);
void	 report_services_gone(struct attempt *);

/* holds.c: an attempt's uid, trees, mounts and busy children. */
uid_t	 uid_allocate(void);
int	 uid_allocate_n(uid_t *, int);
int	 attempt_has_uid(const struct attempt *, uid_t);
int	 attempt_active(const struct attempt *);
int	 attempt_env_check(struct attempt *, char *, size_t);
int	 attempt_pristine(struct attempt *,
	    void (*)(struct attempt *, const char *), char *, size_t);
int	 attempt_mount_tree(struct attempt *, char *, size_t);
int	 attempt_mount_checkout(struct attempt *, uid_t, char *, size_t);
int	 attempt_validate(struct attempt *, char *, size_t);
int	 attempt_kill_uids(struct attempt *);
/* attempt_cleanup_sandboxes(): how, and how often a teardown tries. */
#define CLEANUP_TRY	0
#define CLEANUP_LAST	1
#define CLEANUP_LATER	2
#define TEARDOWN_CG_MS		2
#define TEARDOWN_CG_TRIES	250
int	 attempt_cleanup_sandboxes(struct attempt *, int);
void	 attempt_services_ready(struct attempt *, int);
void	 attempt_services_failed(struct attempt *, const char *);
void	 attempt_services_gone(struct attempt *);
size_t	 strv_len(char * const *);
struct child	*verifier_free(void);
int	 child_index(struct child *);
int	 attempt_held_by_worker(struct attempt *);
void	 attempt_publish_sent(void);

/* lifecycle.c: an attempt's facts as JSON. */
json_t	*usage_json(const struct sandbox_usage *);
json_t	*spend_json(const struct attempt_spend *);
uint64_t ms_between(uint64_t, uint64_t);
json_t	*run_times(struct attempt *, struct run *);
json_t	*env_facts(const char *, const char *, const char *);

/* metrics.c */
void	 metrics_init(void);
void	 metrics_reconfigure(void);
void	 metrics_attempt_done(const json_t *);
void	 metrics_teardown_failed(void);
void	 metrics_preview(uint64_t);
void	 metrics_previews(int);
void	 metrics_fsync(uint64_t);
json_t	*metrics_overview(void);
char	*metrics_text(void);

#endif /* FACTORYD_H */
