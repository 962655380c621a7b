/*
 * The messages between the parent and factory-fleet, the one process
 * that speaks to the fleet's PostgreSQL.  Typed, field by field
 * (wire.h): numbers in network byte order, strings as an n32 length
 * and their bytes.  The request id of a request and of its answer is
 * the imsg's peer id; every request gets exactly one answer.
 *
 * The parent decodes what the child sends as it decodes any child:
 * a message that does not decode is the child's lie, and it is killed.
 * The child decodes the parent's strictly and exits on a bad one.
 *
 * The types are numbered from IMSG_FLEET_BASE, apart from factory.h's
 * enum, until the parent takes the child into its process table.
 */
#ifndef FACTORY_FLEETMSG_H
#define FACTORY_FLEETMSG_H

#include <stdint.h>

#include "factory.h"
#include "imsg.h"

#define FLEET_CONNINFO_MAX	1024	/* with its NUL */
#define FLEET_NAME_MAX		64	/* a host or tenant name, NUL */
#define FLEET_REPOS_MAX		64	/* repositories one host serves */
#define FLEET_KEY_MAX		128	/* an idempotency key, NUL */
#define FLEET_DIGEST_MAX	72	/* "sha256:" and 64 hex, NUL */
#define FLEET_MANIFEST_MAX	(48 * 1024)	/* a frozen manifest */
#define FLEET_TEXT_MAX		256	/* a reason, NUL */
#define FLEET_WEIGHT_MAX	1000
#define FLEET_CAP_MAX		100000	/* running or queued per tenant */
#define FLEET_CLAIMS_MAX	100	/* claims of one attempt */
#define FLEET_MS_MAX		3600000	/* leases and deadlines */
#define FLEET_ROWS_MAX		256	/* rows of one listing */
#define FLEET_USAGE_MAX		(366 * 86400)	/* usage --since, seconds */
/*
 * A publication's pin: the parent's publish request (msg.h's
 * MSG_PUBLISH, without the bundle) as base64, at most this many bytes
 * with its NUL.  A request that does not fit is pinned without it and
 * cannot be adopted.
 */
#define FLEET_PIN_MAX		(40 * 1024)
#define FLEET_HEX40		(40 + 1)	/* a commit, NUL */
/*
 * Where a repository publishes, as a key: the SHA-256 (hex) of the
 * forge's identity (local: its remote; github: api, owner, repository
 * and its id).  Hosts adopt only what they publish to the same forge.
 */
#define FLEET_FORGE_MAX		(64 + 1)
#define FLEET_AGE_MAX		(10ULL * 366 * 86400 * 1000)	/* ms */

enum fleet_imsg {
	IMSG_FLEET_BASE = 0x4600,
	IMSG_FLEET_HELLO,	/* parent: struct fleet_hello; -> READY */
	IMSG_FLEET_TENANT,	/* parent: struct fleet_tenant; -> RESULT */
	IMSG_FLEET_SUBMIT,	/* parent: struct fleet_submit; -> SUBMITTED */
	IMSG_FLEET_CLAIM,	/* parent: empty; -> CLAIMED or RESULT none */
	IMSG_FLEET_RENEW,	/* parent: struct fleet_write (id, epoch) */
	IMSG_FLEET_OUTCOME,	/* parent: struct fleet_write */
	IMSG_FLEET_CANCEL,	/* parent: struct fleet_cancel; -> RESULT */
	IMSG_FLEET_HEARTBEAT,	/* parent: empty; -> RESULT, the host state */
	IMSG_FLEET_HOSTS,	/* parent: empty; -> HOSTROW..., RESULT */
	IMSG_FLEET_QUEUE,	/* parent: struct fleet_scope; -> QUEUEROW...,
				   RESULT */
	IMSG_FLEET_RESCUE,	/* parent: empty; -> RESCUED or RESULT */
	IMSG_FLEET_SETSTATE,	/* parent: struct fleet_setstate; -> RESULT */
	IMSG_FLEET_TENANTS,	/* parent: struct fleet_scope; -> TENANTROW... */
	IMSG_FLEET_USAGE,	/* parent: struct fleet_scope; -> USAGEROW... */
	IMSG_FLEET_ADOPT,	/* parent: empty; -> ADOPTED or RESULT none */
	IMSG_FLEET_GAUGES,	/* parent: empty; -> GAUGEROW..., RESULT ok
				   with the count of expired hosts */
	IMSG_FLEET_SERVES,	/* parent: struct fleet_serves; -> RESULT */
	IMSG_FLEET_READY,	/* fleet: struct fleet_ready */
	IMSG_FLEET_CLAIMED,	/* fleet: struct fleet_claimed */
	IMSG_FLEET_SUBMITTED,	/* fleet: struct fleet_submitted */
	IMSG_FLEET_RESULT,	/* fleet: struct fleet_result */
	IMSG_FLEET_HOSTROW,	/* fleet: struct fleet_hostrow */
	IMSG_FLEET_QUEUEROW,	/* fleet: struct fleet_queuerow */
	IMSG_FLEET_RESCUED,	/* fleet: struct fleet_rescued */
	IMSG_FLEET_TENANTROW,	/* fleet: struct fleet_tenantrow */
	IMSG_FLEET_USAGEROW,	/* fleet: struct fleet_usagerow */
	IMSG_FLEET_ADOPTED,	/* fleet: struct fleet_adopt */
	IMSG_FLEET_GAUGEROW,	/* fleet: struct fleet_gaugerow */
	IMSG_FLEET_MAX
};

/* An attempt's state in the fleet's table. */
enum fleet_state {
	FLEET_QUEUED,
	FLEET_CLAIMED,
	FLEET_RUNNING,
	FLEET_PUBLISHING,
	FLEET_DONE,
	FLEET_FAILED,
	FLEET_CANCELLED,
	FLEET_DEAD,		/* claimed too often: dead-lettered */
	FLEET_ADOPTABLE,	/* lost while publishing: a live host's */
	FLEET_NSTATES
};

/* A host's state. */
enum fleet_hstate {
	FLEET_ACTIVE,
	FLEET_CORDONED,
	FLEET_DRAINING,
	FLEET_GONE,
	FLEET_NHSTATES
};

/* Priority classes, strict: every urgent attempt before any normal. */
#define FLEET_URGENT	0
#define FLEET_NORMAL	1
#define FLEET_BATCH	2
#define FLEET_NCLASSES	3

enum fleet_code {
	FLEET_OK,		/* done; text: a state where one is asked */
	FLEET_NONE,		/* a claim found nothing to claim */
	FLEET_SUPERSEDED,	/* the fenced write matched no row: never retry */
	FLEET_REFUSED,		/* the request cannot be (text says why) */
	FLEET_ERROR,		/* no answer from the database (text): unknown */
	FLEET_NCODES
};

struct fleet_hello {
	char		 conninfo[FLEET_CONNINFO_MAX];
	char		 host[FLEET_NAME_MAX];
	uint64_t	 epoch;		/* the host's last, 0 for none */
	uint32_t	 slots;
	uint32_t	 lease_ms;	/* the host's and attempts' lease */
	uint32_t	 deadline_ms;	/* of every query */
	/* A publication lost with its host is adopted this much later. */
	uint32_t	 adopt_after_ms;
	uint32_t	 nrepos;
	char		 repos[FLEET_REPOS_MAX][REPO_NAME_MAX];
	char		 forges[FLEET_REPOS_MAX][FLEET_FORGE_MAX]; /* "": none */
};

/*
 * A request's claim, for its answer (a renewal's): by id and claim
 * epoch, never the id alone.  fleet_claimref: malloc'd, NULL if not.
 */
struct fleet_claimref {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;
};
struct fleet_claimref *fleet_claimref(const char *, uint64_t);

/* What a host serves, again after a reload: as in its HELLO. */
struct fleet_serves {
	uint32_t	 nrepos;
	char		 repos[FLEET_REPOS_MAX][REPO_NAME_MAX];
	char		 forges[FLEET_REPOS_MAX][FLEET_FORGE_MAX]; /* "": none */
};

struct fleet_tenant {
	char		 name[FLEET_NAME_MAX];
	uint32_t	 weight;	/* 1 .. FLEET_WEIGHT_MAX */
	uint32_t	 max_running;
	uint32_t	 max_queued;
	int		 paused;
};

struct fleet_submit {
	char		 tenant[FLEET_NAME_MAX];
	uint8_t		 class;
	char		 repo[REPO_NAME_MAX];
	char		 key[FLEET_KEY_MAX];	/* "": none */
	char		 digest[FLEET_DIGEST_MAX];
	uint32_t	 max_claims;
	char		*manifest;		/* malloc'd */
};

/* RENEW, OUTCOME (from -> to, reason) and CANCEL (id alone). */
/* What an attempt used, sent with its outcome (0 with the others). */
struct fleet_use {
	uint64_t	 cpu_ms;
	uint64_t	 mem_peak;	/* bytes */
	uint64_t	 wall_ms;	/* queued here to ended */
	uint64_t	 tokens;	/* model, in and out */
	uint64_t	 cost_uusd;	/* micro-dollars */
};

struct fleet_write {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;		/* the claim's */
	uint8_t		 from;		/* enum fleet_state */
	uint8_t		 to;
	char		 reason[FLEET_TEXT_MAX];
	struct fleet_use use;
	/*
	 * The publishing mark's pin (to FLEET_PUBLISHING only): the
	 * commit, and the publish request (base64, malloc'd on decode:
	 * fleet_write_free) or NULL.
	 */
	char		 commit[FLEET_HEX40];
	char		*pin;
	char		 forge[FLEET_FORGE_MAX];	/* "" without a pin */
};

/*
 * An attempt lost while publishing, now this host's to finish from the
 * forge's side: its new claim epoch, the host that lost it, the pinned
 * commit and publish request (base64), and its frozen manifest, whose
 * digest the verdict names and whose title and base the adopter takes
 * (both malloc'd: fleet_adopt_free).  Both fit one answer together:
 * fleet_adopt_fits.
 */
struct fleet_adopt {
	char		 id[ATTEMPT_ID_MAX];
	uint64_t	 epoch;
	char		 host[FLEET_NAME_MAX];
	char		 commit[FLEET_HEX40];
	char		*pin;
	char		*manifest;
};

struct fleet_ready {
	uint64_t	 epoch;		/* this host's, new */
	uint32_t	 schema;	/* the database's schema version */
	uint8_t		 state;		/* enum fleet_hstate */
};

struct fleet_claimed {
	char		 id[ATTEMPT_ID_MAX];
	char		 tenant[FLEET_NAME_MAX];
	uint8_t		 class;
	char		 repo[REPO_NAME_MAX];
	uint64_t	 epoch;		/* the claim's */
	uint32_t	 claims;	/* this one included */
	char		 digest[FLEET_DIGEST_MAX];
	char		*manifest;	/* malloc'd */
};

struct fleet_submitted {
	char		 id[ATTEMPT_ID_MAX];
	int		 created;	/* 0: the key named an existing one */
};

struct fleet_result {
	uint8_t		 code;		/* enum fleet_code */
	char		 text[FLEET_TEXT_MAX];
};

/* One host of factoryctl hosts. */
/*
 * An operator's word: a host cordoned, drained (deadline_s from now)
 * or made active again; a tenant, or every tenant (name ""), paused
 * with a note or resumed.
 */
#define FLEET_SET_HOST		0
#define FLEET_SET_PAUSE		1
#define FLEET_DRAIN_MAX		86400	/* seconds */
struct fleet_setstate {
	uint8_t		 what;		/* FLEET_SET_* */
	char		 name[FLEET_NAME_MAX];
	uint8_t		 state;		/* enum fleet_hstate, or paused 0/1 */
	uint32_t	 deadline_s;	/* draining: then handed back */
	char		 note[FLEET_TEXT_MAX];
};

/*
 * A cancel asked by an operator of any host: of the attempt id, if it
 * is of one of the tenants named (or of any, with all: root).
 */
#define FLEET_TENANTS_MAX	32
struct fleet_cancel {
	char		 id[ATTEMPT_ID_MAX];
	int		 all;
	uint32_t	 ntenants;
	char		 tenants[FLEET_TENANTS_MAX][FLEET_NAME_MAX];
};

/*
 * A listing of tenants' rows (QUEUE, TENANTS, USAGE): only the rows of
 * the tenants named, or every one's with all (root's); usage's window
 * in seconds back (0 for the others).  The database is asked for just
 * these, so that another tenant's rows never fill a listing's bound.
 */
struct fleet_scope {
	uint32_t	 since_s;
	int		 all;
	uint32_t	 ntenants;
	char		 tenants[FLEET_TENANTS_MAX][FLEET_NAME_MAX];
};

/* Attempts whose lease ran out, taken back by this host's sweep. */
struct fleet_rescued {
	uint32_t	 requeued;	/* back in the queue, after a backoff */
	uint32_t	 dead;		/* at their cap of claims */
	uint32_t	 adoptable;	/* lost while publishing: never rerun */
};

/* For the metrics: what waits, per tenant and class, and for how long. */
#define FLEET_GAUGES_MAX	64	/* rows of one answer */
struct fleet_gaugerow {
	char		 tenant[FLEET_NAME_MAX];
	uint8_t		 class;
	uint32_t	 queued;
	uint64_t	 oldest_ms;	/* the oldest one's wait */
};

struct fleet_hostrow {
	char		 host[FLEET_NAME_MAX];
	uint64_t	 epoch;
	uint8_t		 state;		/* enum fleet_hstate */
	uint32_t	 slots;
	uint32_t	 running;	/* attempts it owns now */
	uint64_t	 heartbeat_ms;	/* ago */
	int		 expired;	/* its lease ran out */
};

/* One waiting attempt of factoryctl queue, and why it waits. */
struct fleet_queuerow {
	char		 id[ATTEMPT_ID_MAX];
	char		 tenant[FLEET_NAME_MAX];
	uint8_t		 class;
	char		 repo[REPO_NAME_MAX];
	uint64_t	 age_ms;
	char		 why[FLEET_TEXT_MAX];
};

struct fleet_tenantrow {
	char		 name[FLEET_NAME_MAX];
	uint32_t	 weight;
	uint32_t	 max_running;
	uint32_t	 max_queued;
	uint32_t	 running;
	uint32_t	 queued;
	int		 paused;	/* the config's */
	int		 held;		/* an operator's pause */
	char		 note[FLEET_TEXT_MAX];
};

/* One tenant's use on one host, of the attempts ended in a window. */
struct fleet_usagerow {
	char		 tenant[FLEET_NAME_MAX];
	char		 host[FLEET_NAME_MAX];
	uint32_t	 attempts;
	struct fleet_use use;		/* sums; mem_peak the greatest */
};

/* fleetmsg.c */
const char	*fleet_state_name(int);
int		 fleet_state_byname(const char *);	/* -1: none */
const char	*fleet_hstate_name(int);
int		 fleet_hstate_byname(const char *);
const char	*fleet_code_name(int);
/* An outcome the fleet accepts: from an owned state, forward only. */
int		 fleet_transition_ok(int, int);
int		 fleet_valid_name(const char *);	/* host, tenant, repo */
int		 fleet_valid_id(const char *);		/* attempt */
int		 fleet_valid_key(const char *);
int		 fleet_valid_digest(const char *);
int		 fleet_valid_text(const char *);	/* printable ASCII */

/* NULL if a field is out of its range or no memory. */
struct ibuf	*fleet_hello_compose(const struct fleet_hello *);
struct ibuf	*fleet_tenant_compose(const struct fleet_tenant *);
struct ibuf	*fleet_serves_compose(const struct fleet_serves *);
struct ibuf	*fleet_submit_compose(const struct fleet_submit *);
struct ibuf	*fleet_write_compose(const struct fleet_write *);
struct ibuf	*fleet_ready_compose(const struct fleet_ready *);
struct ibuf	*fleet_claimed_compose(const struct fleet_claimed *);
struct ibuf	*fleet_submitted_compose(const struct fleet_submitted *);
struct ibuf	*fleet_result_compose(const struct fleet_result *);
struct ibuf	*fleet_hostrow_compose(const struct fleet_hostrow *);
struct ibuf	*fleet_queuerow_compose(const struct fleet_queuerow *);
struct ibuf	*fleet_rescued_compose(const struct fleet_rescued *);
struct ibuf	*fleet_setstate_compose(const struct fleet_setstate *);
struct ibuf	*fleet_cancel_compose(const struct fleet_cancel *);
struct ibuf	*fleet_tenantrow_compose(const struct fleet_tenantrow *);
struct ibuf	*fleet_usagerow_compose(const struct fleet_usagerow *);
struct ibuf	*fleet_adopt_compose(const struct fleet_adopt *);
struct ibuf	*fleet_gaugerow_compose(const struct fleet_gaugerow *);

/* 0, or -1 with a reason naming the message and field in err. */
int	 fleet_hello_decode(struct imsg *, struct fleet_hello *, char *,
	    size_t);
int	 fleet_serves_decode(struct imsg *, struct fleet_serves *, char *,
	    size_t);
int	 fleet_tenant_decode(struct imsg *, struct fleet_tenant *, char *,
	    size_t);
int	 fleet_submit_decode(struct imsg *, struct fleet_submit *, char *,
	    size_t);
int	 fleet_write_decode(struct imsg *, struct fleet_write *, char *,
	    size_t);
int	 fleet_ready_decode(struct imsg *, struct fleet_ready *, char *,
	    size_t);
int	 fleet_claimed_decode(struct imsg *, struct fleet_claimed *, char *,
	    size_t);
int	 fleet_submitted_decode(struct imsg *, struct fleet_submitted *,
	    char *, size_t);
int	 fleet_result_decode(struct imsg *, struct fleet_result *, char *,
	    size_t);
int	 fleet_hostrow_decode(struct imsg *, struct fleet_hostrow *, char *,
	    size_t);
int	 fleet_queuerow_decode(struct imsg *, struct fleet_queuerow *, char *,
	    size_t);
int	 fleet_setstate_decode(struct imsg *, struct fleet_setstate *, char *,
	    size_t);
struct ibuf	*fleet_scope_compose(const struct fleet_scope *);
int	 fleet_scope_decode(struct imsg *, const char *, struct fleet_scope *,
	    char *, size_t);
int	 fleet_cancel_decode(struct imsg *, struct fleet_cancel *, char *,
	    size_t);
int	 fleet_tenantrow_decode(struct imsg *, struct fleet_tenantrow *,
	    char *, size_t);
int	 fleet_usagerow_decode(struct imsg *, struct fleet_usagerow *,
	    char *, size_t);
int	 fleet_rescued_decode(struct imsg *, struct fleet_rescued *, char *,
	    size_t);
int	 fleet_adopt_decode(struct imsg *, struct fleet_adopt *, char *,
	    size_t);
int	 fleet_gaugerow_decode(struct imsg *, struct fleet_gaugerow *,
	    char *, size_t);
void	 fleet_write_free(struct fleet_write *);
void	 fleet_adopt_free(struct fleet_adopt *);
/* "" or 40 lower-case hex; "" or base64 of at most FLEET_PIN_MAX - 1. */
int	 fleet_valid_commit(const char *);
int	 fleet_valid_pin(const char *);
int	 fleet_valid_forge(const char *);	/* "" or 64 lower-case hex */
/*
 * Whether an ADOPT answer with a pin and a manifest of these lengths
 * fits one message: a pin that would not is not written (fleet.c).
 */
int	 fleet_adopt_fits(size_t, size_t);
/* An empty request (CLAIM, HEARTBEAT, HOSTS, RESCUE, ADOPT): no payload. */
int	 fleet_empty_decode(struct imsg *, const char *, char *, size_t);

#endif /* FACTORY_FLEETMSG_H */
