/*
 * factoryd.conf(5) and factory-manifest(5): YAML, parsed with libyaml.
 * Unknown keys and wrong types are errors; every error names
 * FILE:LINE:COLUMN and the key.  The parent parses; children get what
 * they need over imsg.
 */
#ifndef FACTORY_CONF_H
#define FACTORY_CONF_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "factory.h"

#define CONF_ERRLEN	1024

enum forge {
	FORGE_NONE,
	FORGE_LOCAL,
	FORGE_GITHUB
};

struct conf_user {
	char		 name[64];	/* as written: a name or a number */
	uid_t		 uid;
	gid_t		 gid;
};

struct conf_github {
	char		 api[256];
	char		 owner[128];
	char		 repo[128];
	uint64_t	 repository_id;
	char		 app_id[64];	/* app id or client id */
	uint64_t	 installation_id;
	char		 key[PATH_MAX];
	char		 ca[PATH_MAX];
};

/*
 * factoryd.conf environment: the policy on a manifest's environment;
 * a repository's own fields override the global ones where set.
 */
#define CONF_UNSET	(-1)
struct conf_envpolicy {
	int		 require_digest;	/* a name needs @sha256:HEX */
	int		 host_root;		/* 1 allow, 0 deny */
};

/*
 * factoryd.conf providers: and upstreams:, the services the gateway
 * (factory-gateway) reaches for attempts with the key or secret it
 * alone reads.  Prices are micro-dollars per million tokens.
 */
#define CONF_GW_MAX		16	/* providers and upstreams, together */
#define CONF_GW_NAMEMAX		64	/* with its NUL */
#define CONF_GW_URLMAX		512
#define CONF_GW_HEADERMAX	128
#define CONF_GW_MODELMAX	128
#define CONF_GW_PRICES		32
#define CONF_GW_GRANTS		8	/* providers or upstreams per repository */

enum conf_gwkind {
	CONF_GW_OPENAI = 1,
	CONF_GW_ANTHROPIC = 2,
	CONF_GW_UPSTREAM = 3,
	CONF_GW_GEMINI = 4
};

/* Method bits, as the gateway's grant carries them. */
#define CONF_M_GET		0x01
#define CONF_M_HEAD		0x02
#define CONF_M_POST		0x04
#define CONF_M_PUT		0x08
#define CONF_M_PATCH		0x10
#define CONF_M_DELETE		0x20
extern const char *const conf_method_names[];	/* bit i, NULL-terminated */

/* A tier's rates, micro-USD per million tokens; UINT64_MAX: unset. */
struct conf_rates {
	uint64_t	 in_uusd;	/* per million input tokens */
	uint64_t	 out_uusd;	/* per million output tokens */
	uint64_t	 cache_read, cache_write, cache_write_1h;
};

struct conf_price {
	char		 model[CONF_GW_MODELMAX];
	uint64_t	 in_uusd;	/* per million input tokens */
	uint64_t	 out_uusd;	/* per million output tokens */
	uint64_t	 max_output;	/* tokens of one answer; 0: default */
	uint64_t	 cache_read, cache_write, cache_write_1h; /* or unset */
	uint64_t	 long_above;	/* 0: no long-context tier */
	struct conf_rates longctx;
};

struct conf_gw {
	char		 name[CONF_GW_NAMEMAX];
	enum conf_gwkind kind;
	char		 url[CONF_GW_URLMAX];	/* https:// only */
	char		 key[PATH_MAX];		/* key, or an upstream's secret */
	char		 ca[PATH_MAX];
	char		 header[CONF_GW_HEADERMAX];	/* upstreams */
	uint32_t	 methods;		/* upstreams: CONF_M_* */
	size_t		 nprices;
	struct conf_price prices[CONF_GW_PRICES];
	uint32_t	 idle_timeout;	/* seconds; 0: the default */
};

/* A repository's model: and upstreams:, the most a manifest may ask. */
struct conf_modelgrant {
	size_t		 nproviders;
	char		 providers[CONF_GW_GRANTS][CONF_GW_NAMEMAX];
	uint64_t	 max_tokens;	/* 0: no ceiling */
	uint64_t	 max_uusd;	/* micro-dollars, 0: no ceiling */
	size_t		 nupstreams;
	char		 upstreams[CONF_GW_GRANTS][CONF_GW_NAMEMAX];
};

/*
 * fleet: (factory-fleet(8)): the database, this host, and the tenants
 * with the operators who act for each and its repositories.  The sizes
 * are fleetmsg.h's, which the child's messages bound again.
 */
#define CONF_FLEET_CONNMAX	1024	/* conninfo, with its NUL */
#define CONF_FLEET_NAMEMAX	64	/* a host or tenant, with its NUL */
#define CONF_FLEET_TENANTS	32
#define CONF_FLEET_IDS		16	/* users, groups of one tenant */
#define CONF_FLEET_REPOS	16	/* repositories of one tenant */
#define CONF_FLEET_WEIGHTMAX	1000
#define CONF_FLEET_CAPMAX	100000

struct conf_tenant {
	char		 name[CONF_FLEET_NAMEMAX];
	uint32_t	 weight;
	uint32_t	 max_running;
	uint32_t	 max_queued;
	int		 paused;
	size_t		 nuids, ngids, nrepos;
	uid_t		 uids[CONF_FLEET_IDS];
	gid_t		 gids[CONF_FLEET_IDS];
	char		 repos[CONF_FLEET_REPOS][REPO_NAME_MAX];
};

struct conf_fleet {
	int		 enabled;	/* 0: one host, no child, no libpq */
	char		 conninfo[CONF_FLEET_CONNMAX];
	char		 host[CONF_FLEET_NAMEMAX];
	uint32_t	 slots;		/* attempts claimed at once */
	uint32_t	 lease_ms;
	uint32_t	 deadline_ms;	/* of one query */
	uint32_t	 adopt_after_ms; /* a lost publication's grace */
	size_t		 ntenants;
	struct conf_tenant tenants[CONF_FLEET_TENANTS];
};

/*
 * preview: {listen: ADDR:PORT, domain: NAME, ttl: DURATION, secure: yes}:
 * factory-preview serves each attempt's preview on ID.NAME.
 */
#define CONF_PREVIEW_TTL	(2 * 60 * 60 * 1000)	/* ttl's default */
#define CONF_PREVIEW_TTLMAX	(7 * 24 * 60 * 60 * 1000ULL)
struct conf_preview {
	int		 enabled;	/* 0: no child, no listener */
	char		 listen[64];	/* as written, ADDR:PORT */
	struct sockaddr_storage addr;
	socklen_t	 addrlen;
	char		 domain[200];
	uint64_t	 ttl_ms;	/* a token's preview, at most */
	int		 secure;	/* cookies Secure: TLS in front */
};

struct conf_repo {
	TAILQ_ENTRY(conf_repo)	 entry;
	struct conf_modelgrant	 grant;		/* model:, upstreams: */
	struct conf_envpolicy	 envpolicy;	/* CONF_UNSET: the global */
	char			 name[REPO_NAME_MAX];
	char			 path[PATH_MAX];
	enum forge		 forge;
	char			 remote[PATH_MAX];	/* forge local */
	char			 pulls[PATH_MAX];	/* forge local */
	int			 shared;	/* local: every fleet host's */
	struct conf_github	 github;		/* forge github */
};
TAILQ_HEAD(conf_repos, conf_repo);

struct factoryd_conf {
	char			 file[PATH_MAX];
	char			 socket[PATH_MAX];
	char			 statedir[PATH_MAX];
	char			 libexec[PATH_MAX];
	struct conf_user	 users[PROC_MAX];	/* by enum factory_procid */
	uid_t			 attempt_uid_lo;
	uid_t			 attempt_uid_hi;
	/* "FILE:L:C: attempt-uids: warning: ..." or "": for -n, the log */
	char			 warning[CONF_ERRLEN];
	int			 max_attempts;
	int			 max_cohort;		/* cohort size bound */
	int			 verifiers;
	int			 lease_ttl;		/* seconds */
	int			 reconcile_interval;	/* seconds */
	int			 control_idle;		/* seconds */
	char			 metrics_file[PATH_MAX];	/* "": none */
	int			 metrics_interval;	/* seconds */
	uint64_t		 disk_default;	/* attempt-disk, bytes */
	uint64_t		 disk_max;
	uint64_t		 pristine_max;	/* pristine-cache, bytes */
	uint64_t		 setup_max;	/* setup-cache, bytes */
	uint64_t		 image_max_size;	/* images: bounds */
	uint64_t		 image_max_files;
	int			 image_max_depth;
	int			 image_max_path;
	char			 receipt_key[PATH_MAX];
	char			 verifier_key[PATH_MAX];
	struct conf_repos	 repos;
	uint32_t		 sandbox_downgrade;	/* CONF_DG_* */
	struct conf_envpolicy	 envpolicy;	/* never CONF_UNSET */
	size_t			 ngw;		/* providers, then upstreams */
	struct conf_gw		 gw[CONF_GW_MAX];
	struct conf_fleet	 fleet;
	struct conf_preview	 preview;
};

/*
 * Sandbox features factoryd.conf may explicitly run without
 * (sandbox.downgrade); bit i is named conf_downgrade_names[i].
 */
#define CONF_DG_LANDLOCK	0x01	/* no Landlock at all */
#define CONF_DG_LANDLOCK_NET	0x02	/* no TCP bind/connect rules */
#define CONF_DG_LANDLOCK_SCOPES	0x04	/* no abstract unix/signal scopes */
#define CONF_DG_CGROUP_KILL	0x08	/* no cgroup.kill */
#define CONF_DG_BIND_RULE	0x10	/* no cgroup bind programs */
extern const char *const conf_downgrade_names[];	/* NULL-terminated */

enum approval {
	APPROVAL_AUTO,
	APPROVAL_MANUAL
};

struct manifest_limits {
	uint64_t	 wall_ms;
	uint64_t	 cpu_ms;
	uint64_t	 memory;	/* bytes */
	uint64_t	 pids;
	uint64_t	 tree;		/* bytes */
	uint64_t	 log;		/* bytes */
	uint64_t	 disk;		/* bytes; 0: attempt-disk default */
};

#define MANIFEST_IMAGE_MAX	160	/* NAME@sha256:HEX, with room */
#define MANIFEST_TOOLCHAIN_MAX	64	/* toolchain paths, at most */
#define MANIFEST_MODELS		16	/* model: models, at most */
#define MANIFEST_TENANTMAX	64	/* tenant:, with its NUL */

/* model: {provider, models, budget}; provider "" when there is none. */
struct manifest_model {
	char		 provider[CONF_GW_NAMEMAX];
	size_t		 nmodels;
	char		 models[MANIFEST_MODELS][CONF_GW_MODELMAX];
	uint64_t	 budget_tokens;	/* 0: none asked */
	uint64_t	 budget_uusd;	/* micro-dollars, 0: none asked */
};

/*
 * setup: of a manifest.  Paths are relative to the tree, checked
 * (no "..", not .git, none inside another); env "KEY=VALUE"; allow as
 * network.allow, NULL: none.
 */
#define SETUP_PATHS	64
#define SETUP_PATHMAX	1024
struct manifest_setup {
	char			**run;		/* argv, non-empty */
	char			**inputs;	/* may be empty */
	char			**outputs;	/* non-empty */
	char			**allow;
	char			**env;
	/*
	 * Whose entries it may reuse: SETUP_REUSE_TREE (the default)
	 * only one built from the same baseline tree; SETUP_REUSE_INPUTS
	 * one from any tree with the same inputs, its submitter's only.
	 */
	int			  reuse;
};
#define SETUP_REUSE_TREE	0
#define SETUP_REUSE_INPUTS	1

/*
 * services: NAME: {run, ready, ready-timeout, ports, env, data}: a process
 * beside the agent (and, afresh, beside the validation run) in the
 * run's network namespace, as its own uid, that must answer its ready
 * command before the agent starts (factory-manifest(5) SERVICES).
 */
#define SERVICE_PORTS		4	/* ports a service may listen on */
#define SERVICE_DATA		8	/* paths of the run's tree it is shown */
#define SERVICE_READY_MS	(30 * 1000)	/* ready-timeout's default */
#define SERVICE_READY_MAXMS	(10 * 60 * 1000)
struct manifest_service {
	char			 name[SERVICE_NAMEMAX];
	char			**run;		/* argv, non-empty */
	char			**ready;	/* argv, non-empty */
	char			**env;		/* "KEY=VALUE" */
	uint64_t		 ready_ms;
	uint16_t		 ports[SERVICE_PORTS];
	int			 nports;	/* at least one */
	/*
	 * Its part of the attempt's limits.memory and limits.pids, 0: an
	 * equal share (manifest_svc_limit); what the services take
	 * together, the run beside them has not (manifest_run_limit).
	 */
	uint64_t		 memory;
	uint64_t		 pids;
	int			 restarts;	/* restart: after a death */
	/*
	 * Paths inside the tree of the run it serves (as setup's
	 * outputs), shown to it read-only at their paths there; empty:
	 * none, and it sees nothing of that tree.
	 */
	char			**data;
};
#define SERVICE_RESTARTS	5	/* restart:, at most */
/* The least part of the limits a service, or the run beside, may have. */
#define SERVICE_MEMORY_MIN	(4ULL << 20)
#define SERVICE_PIDS_MIN	2

/*
 * preview: {port: N, service: NAME | agent, health: /path}: what
 * factory-preview serves of a running attempt (factory-manifest(5)).
 */
#define PREVIEW_AGENT		(-1)	/* preview.service: the agent */
struct manifest_preview {
	int			 enabled;
	uint16_t		 port;
	int			 service;	/* index, or PREVIEW_AGENT */
	char			 health[256];	/* "" none */
};

struct manifest {
	char			 repository[REPO_NAME_MAX];
	char			 baseline[256];	/* a ref or an oid, as given */
	char			**scope;	/* NULL-terminated, each a valid glob */
	char			**agent;	/* argv, NULL-terminated, non-empty */
	char			**validate;	/* argv, NULL-terminated, non-empty */
	char			**env;		/* "KEY=VALUE", NULL-terminated */
	char			**exec;		/* allowed executables/dirs, or NULL: defaults */
	char			**allow;	/* network egress "host:port", NULL: none */
	struct manifest_limits	 limits;
	char			 title[256];
	enum approval		 approval;
	/*
	 * environment.image as written (NAME, NAME@sha256:HEX or
	 * sha256:HEX), "" for the host root; resolved to a digest at
	 * submission.  toolchain: absolute paths inside the image, or NULL.
	 */
	char			 image[MANIFEST_IMAGE_MAX];
	char			**toolchain;
	struct manifest_setup	*setup;		/* NULL: no setup phase */
	struct manifest_service	 services[MANIFEST_SERVICES];
	int			 nservices;
	struct manifest_preview	 preview;

	struct manifest_model	 model;
	/* upstreams: names of factoryd.conf upstreams */
	size_t			 nupstreams;
	char			 upstreams[CONF_GW_GRANTS][CONF_GW_NAMEMAX];
	char			 tenant[MANIFEST_TENANTMAX];	/* "" none */

	/*
	 * cohort: its size (0: not a cohort) and how many variants it
	 * lists (0, or size); a member's manifest is parsed with its
	 * variant laid over the rest (manifest_parse_member).
	 */
	int			 cohort_size;
	int			 cohort_nvariants;
	/* Each variant's env as written, "KEY=VALUE", for the print. */
	char			***cohort_env;
	/* Each variant's model grant, for the print (provider "": none). */
	struct manifest_model	*cohort_model;
};

/* conf.c */
/* 0 ok; -1 with "FILE:LINE:COL: message" in err */
int		 conf_parse(const char *, struct factoryd_conf **, char *, size_t);
int		 conf_fleet_adopt_check(const struct factoryd_conf *,
		    const struct conf_fleet *, char *, size_t);
void		 conf_free(struct factoryd_conf *);
void		 conf_print(FILE *, const struct factoryd_conf *);
struct conf_repo *conf_repo(const struct factoryd_conf *, const char *);
/* The environment policy for repository r (NULL: the global one). */
void		 conf_envpolicy(const struct factoryd_conf *,
		    const struct conf_repo *, struct conf_envpolicy *);
/* A provider or upstream by name, or NULL. */
const struct conf_gw *conf_gw(const struct factoryd_conf *, const char *);
/* The tenant a uid with these groups acts for, or NULL (why says). */
const struct conf_tenant *conf_tenant_of(const struct factoryd_conf *,
		    const char *, uid_t, const gid_t *, int, char *, size_t);
/* Micro-dollars as the files write dollars ("2.5"), in buf. */
const char	*conf_usd(uint64_t, char *, size_t);
/* "2.50" dollars to micro-dollars: 0, or -1 if it is not one. */
int		 conf_parse_usd(const char *, uint64_t *);
/* A size as the files write it ("4M", "1536K"), in buf. */
const char	*conf_size(uint64_t, char *, size_t);

/* manifest.c */
/* name is used in error messages; buf need not be NUL-terminated */
int		 manifest_parse(const char *, const void *, size_t,
		    struct manifest **, char *, size_t);
/*
 * As manifest_parse, for member variant (0..cohort size - 1) of a
 * cohort: its variant's env over the manifest's env, its model in
 * place of the manifest's.  variant -1: the cohort as written.
 */
int		 manifest_parse_member(const char *, const void *, size_t, int,
		    struct manifest **, char *, size_t);
#define COHORT_SIZE_MAX	64	/* max-cohort's ceiling */
void		 manifest_free(struct manifest *);
void		 manifest_print(FILE *, const struct manifest *);
/*
 * The smallest attempt disk (factoryd.conf attempt-disk, a manifest's
 * limits.disk): a checkout must fit.
 */
#define DISK_MIN	(1024 * 1024)
/* Defaults applied to a manifest's missing limits. */
extern const struct manifest_limits manifest_default_limits;
/* Service i's memory (pids nonzero: its pids), its own or a share. */
uint64_t	 manifest_svc_limit(const struct manifest *, int, int);
/* limits.memory (pids: .pids) less what the services take of it. */
uint64_t	 manifest_run_limit(const struct manifest *, int);

/* glob.c: scope globs, the rules are in factory-manifest(5) */
int		 glob_valid(const char *, char *, size_t);	/* 0 ok, -1 reason */
int		 glob_match(const char *, const char *);	/* 1 match */
int		 scope_match(char * const *, const char *);	/* any glob */

#endif /* FACTORY_CONF_H */
