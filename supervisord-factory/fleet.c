/*
 * The parent's side of factory-fleet, which alone speaks to the fleet's
 * PostgreSQL (factory-fleet(8)): transport and bookkeeping only.  The
 * child is told the database, this host and the tenants; the host's
 * lease is renewed on a timer; every request gets exactly one answer
 * of the kind it asked for, with its id, or the child lied and is
 * killed.  No SQL here, and nothing waits on the database: a caller
 * gets its answer in a callback, or "lost" when the child goes.
 *
 * Claims: whenever this host has a free slot (on a timer, and after
 * an outcome was taken), one claim at a time; the claimed manifest is
 * checked against its digest and handed to submit.c, which journals it
 * as an attempt of the fleet's id only now that the database committed
 * the claim.  Outcomes: an attempt of the fleet that has ended and
 * been torn down is in the journal already; its outcome goes to the
 * database from there (the journal is the outbox), fenced by the claim
 * and host epochs, and once answered (taken, or superseded: never
 * retried) a "fleet-sent" record says so.  After a restart, what has
 * no such record is sent again.
 *
 * Leases and fencing.  The host's lease and each claim's are renewed
 * every third of a lease (HEARTBEAT, and a RENEW per claim the journal
 * holds: a claim this host never journaled is not renewed and is
 * rescued).  Each is known good until its renewal's send time plus the
 * lease, less a quarter of it, on CLOCK_BOOTTIME: before the database
 * can let it lapse.  Past the host's, this host is fenced: it claims
 * nothing and sweeps nothing.  A claim's sandbox starts, and its
 * publication begins, only while both leases are live; before the
 * publication the claim is marked publishing in the database, after
 * which it is never handed back or run again.  Past a claim's lease its
 * running sandbox is frozen (cgroup.freeze), thawed only by a renewal
 * that comes back, and killed once a further lease has gone by, the
 * claim then handed back to the queue.  A renewal that matches no row
 * means another host has the attempt: it ends here, and its outcome is
 * not sent.  Every host sweeps the claims whose lease ran out (RESCUE):
 * no leader.
 *
 * Without a fleet: block nothing of this runs (no child is started).
 */
#include <sys/types.h>

#include <sys/socket.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "factoryd.h"
#include "fleetmsg.h"
#include "log.h"

#include "attempt.h"

#define FLEET_PENDING_MAX	256	/* requests without an answer yet */
#define FLEET_POLL_MS		1000	/* claims and outcomes, at least */
#define FLEET_GAUGES_MS		5000	/* the metrics' queue gauges */
#define FLEET_MAX_CLAIMS	3	/* of one attempt, then dead */
#define FLEET_TICK_MS		100	/* the leases' watch */

struct fleet_req {
	uint32_t	 id;		/* 0: a free row */
	uint32_t	 type;
	fleet_done	 done;
	void		*arg;
	uint64_t	 sent_ms;	/* boot_ms() when it went */
};

static struct fleet_req	 pending[FLEET_PENDING_MAX];
static uint32_t		 lastid;
static struct event	 ev_beat;
static int		 said_hello;	/* to this child: READY next */
static int		 ready;		/* READY: requests may go */
static uint64_t		 host_epoch;	/* the last the database gave */
static struct event	 ev_poll;
static int		 claiming;	/* a CLAIM is out */
static int		 nstarting;	/* claims not attempts yet */
static fleet_run_fn	 run_claim;
static uint64_t		 answer_sent_ms;	/* the answered request's */
static uint64_t		 host_lease_end;	/* boot_ms; 0: none yet */
static int		 fenced;		/* said so in the log */
static int		 rescuing;		/* a RESCUE is out */
static struct event	 ev_tick;
static struct fleet_stats stats = { .hosts_expired = -1 };
_Static_assert(sizeof(stats.queues) / sizeof(stats.queues[0]) ==
    FLEET_GAUGES_MAX, "the metrics hold every gauge row");
_Static_assert(sizeof(stats.queues[0].tenant) >= FLEET_NAME_MAX,
    "a gauge's tenant fits");
/* The gauges' answer being gathered, and when they were last asked. */
static struct fleet_queue_gauge gauges[FLEET_GAUGES_MAX];
static size_t		 ngauges;
static int		 gauging;
static uint64_t		 gauged_ms;
static struct fleet_serves served;	/* what the database was told */
static struct fleet_serves sending;	/* and is being told */
static int		 serving;	/* a SERVES is out */

static void	fleet_beat(int, short, void *);
static void	fleet_poll(int, short, void *);
static void	fleet_tick(int, short, void *);
static void	fleet_report(void);
static int	fleet_may(struct attempt *, const char *);
static int	fleet_gate(struct attempt *, int);
static void	fleet_handback(void);
static void	forge_key(const struct conf_repo *, char [FLEET_FORGE_MAX]);
static void	fleet_outcome(const char *, uint64_t, int, const char *,
		    const struct attempt *, fleet_done, void *);

void
fleet_init(fleet_run_fn fn)
{
	struct timeval	 tv = { 0, FLEET_TICK_MS * 1000 };

	run_claim = fn;
	attempt_set_gate(fleet_gate);
	adopt_init(fleet_request, fleet_outcome, fleet_claim_lease, boot_ms);
	evtimer_set(&ev_poll, fleet_poll, NULL);
	evtimer_set(&ev_tick, fleet_tick, NULL);
	if (env->conf->fleet.enabled)
		evtimer_add(&ev_tick, &tv);
}

/* A lease renewed by a request sent at sent: good until this. */
static uint64_t
lease_end(uint64_t sent)
{
	uint32_t	 ms = env->conf->fleet.lease_ms;

	return (sent + ms - ms / 4);
}

/*
 * When a claim's sandbox ends itself unless factoryd moves the instant
 * on (pid 1's watchdog, sandbox_watchdog): the earlier of the claim's
 * lease and the host's, plus an eighth of a lease.  Both local ends are
 * a quarter of a lease early, so this is still before the database
 * lets the claim lapse and another host may run it: a factoryd that
 * stalls (stopped, or its loop stuck) cannot leave a second executor
 * running.  A live one froze the sandbox before this (fleet_tick), and
 * a frozen pid 1 fires nothing.
 */
static uint64_t
watchdog_of(const struct attempt *a)
{
	uint32_t	 lease = env->conf->fleet.lease_ms;
	uint64_t	 end = a->fleet_lease_end;

	if (host_lease_end < end)
		end = host_lease_end;
	return (end + lease / 8);
}

/*
 * When a's publication must have begun, boot_ms(): the earlier of its
 * claim's and this host's local lease ends, both before the database
 * lets the claim go; 0 for an attempt that is not a fleet's.  Past it
 * the publisher does not begin (IMSG_PUBLISH_LATE), so a publication
 * of a lost host has begun before the sweep: adopt-after covers the
 * rest of it.
 */
static uint64_t
fleet_begin_by(const struct attempt *a)
{
	uint64_t	 end = a->fleet_lease_end;

	if (a->fleet_epoch == 0)
		return (0);
	if (host_lease_end < end)
		end = host_lease_end;
	/* No lease known is one already spent, never "no deadline". */
	return (end > 0 ? end : 1);
}

/* The attempt's running sandbox told its watchdog's instant, if new. */
static void
watchdog_send(struct attempt *a)
{
	a->fleet_watchdog_ms = watchdog_of(a);
	if (a->run == NULL || !a->run->active ||
	    a->run->sb.watchdog_ms == a->fleet_watchdog_ms)
		return;
	if (sandbox_watchdog(&a->run->sb, a->fleet_watchdog_ms) == -1 &&
	    errno != EAGAIN)
		log_warn("%s: fleet: its sandbox's watchdog", a->id);
}

/* The figures, handed to the metrics on each tick. */
static void
fleet_report(void)
{
	struct fleet_stats	 s;
	uint64_t		 now = boot_ms();

	s = stats;
	adopt_counts(&s.adopted[0], &s.adopted[1]);
	s.epoch = host_epoch;
	s.fenced = fenced;
	s.lease_left_ms = host_lease_end > now ? host_lease_end - now : 0;
	metrics_fleet(&s);
}

/* A child lost and started again does not end the lease it renewed. */
static int
host_live(void)
{
	return (boot_ms() < host_lease_end);
}

static struct attempt *
attempt_of(const char *id)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (strcmp(a->id, id) == 0)
			return (a);
	return (NULL);
}

/* The attempt an answer's argument (its id, strdup'd) names; freed. */
static struct attempt *
attempt_answered(char *id)
{
	struct attempt	*a = attempt_of(id);

	free(id);
	return (a);
}

static int	fleet_may_publish(struct attempt *);

/* attempt.c's gate: a sandbox's start, or a publication. */
static int
fleet_gate(struct attempt *a, int what)
{
	if (what == ATTEMPT_GATE_PUBLISH)
		return (fleet_may_publish(a));
	return (fleet_may(a, "its sandbox's start"));
}

/* The lease of the claim being handed to run_claim. */
uint64_t
fleet_claim_lease(void)
{
	return (lease_end(answer_sent_ms));
}

/*
 * A fleet attempt starts a sandbox or publishes only while the host's
 * lease and its claim's are surely live and no other host has it; else
 * it waits (held, said once) and attempt_schedule tries again once a
 * renewal comes back.
 */
static int
fleet_may(struct attempt *a, const char *what)
{
	if (a->fleet_epoch == 0)
		return (1);
	if (host_live() && !a->fleet_superseded &&
	    boot_ms() < a->fleet_lease_end) {
		a->fleet_held = 0;
		a->fleet_watchdog_ms = watchdog_of(a);
		return (1);
	}
	if (!a->fleet_held)
		log_warnx("%s: fleet: %s held: %s", a->id, what,
		    !env->conf->fleet.enabled ? "the config has no fleet: "
		    "block any more (cancel it, or restore the block)" :
		    a->fleet_superseded ? "another host has it" :
		    "its lease is not surely live");
	a->fleet_held = 1;
	return (0);
}

/*
 * A fenced write of a's claim matched no row: another host has it.  It
 * ends here, once, and its outcome is journaled as superseded.
 */
static void
claim_lost(struct attempt *a)
{
	if (a->fleet_superseded)
		return;
	a->fleet_superseded = 1;
	stats.superseded++;
	log_warnx("%s: fleet: another host has it now (claim epoch %llu "
	    "superseded)", a->id, (unsigned long long)a->fleet_epoch);
	if (!attempt_terminal(a))
		attempt_fail(a, "failed", "superseded: the fleet gave it to "
		    "another host");
}

static void
marked_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *r = ans;
	struct attempt	*a;
	char		*id = arg;

	a = attempt_answered(id);
	if (a == NULL)
		return;
	a->fleet_marking = 0;
	if (r == NULL || (r->code != FLEET_OK &&
	    r->code != FLEET_SUPERSEDED))
		return;		/* asked again from attempt_schedule */
	if (r->code == FLEET_SUPERSEDED) {
		claim_lost(a);
		return;
	}
	a->fleet_marked = 1;
	/* Pinned in the database, the publication not yet asked. */
	crashpoint("parent:fleet-pinned");
	attempt_schedule();
}

/*
 * Where repo publishes, as the fleet compares it (fleetmsg.h): the
 * SHA-256 of the forge's identity, or "" if it publishes nowhere.  A
 * local forge's path names the same repository on another host only
 * if the config says so (shared: yes, e.g. one NFS mount); else it is
 * this host's alone, and so is a publication lost to it: hosts with
 * one config and their own disks would find no branch there.
 */
static void
forge_key(const struct conf_repo *r, char key[FLEET_FORGE_MAX])
{
	char	 id[PATH_MAX + 1024];
	int	 n;

	key[0] = '\0';
	if (r->forge == FORGE_LOCAL && r->shared)
		n = snprintf(id, sizeof(id), "local\n%s", r->remote);
	else if (r->forge == FORGE_LOCAL)
		n = snprintf(id, sizeof(id), "local\n%s\n%s",
		    env->conf->fleet.host, r->remote);
	else if (r->forge == FORGE_GITHUB)
		n = snprintf(id, sizeof(id), "github\n%s\n%s\n%s\n%llu",
		    r->github.api, r->github.owner, r->github.repo,
		    (unsigned long long)r->github.repository_id);
	else
		return;
	if (n < 0 || (size_t)n >= sizeof(id))
		return;
	sha256_hex(id, (size_t)n, key);
}

/*
 * The pin's publish request: what this host's publisher will be asked
 * (but the bundle), base64, malloc'd; NULL if it cannot be (said why):
 * the publication is then pinned without it and cannot be adopted.
 */
static char *
pin_request(struct attempt *a)
{
	const struct conf_repo	*repo;
	struct msg_publish	 m;
	char			*raw, *b64, err[MSG_ERRLEN];
	size_t			 len;

	if ((repo = conf_repo(env->conf, a->m->repository)) == NULL ||
	    repo->forge == FORGE_NONE)
		return (NULL);
	attempt_publish_request(a, repo, &m);
	/*
	 * Not this host's forge settings (paths, the App's ids and key
	 * file) nor a cohort's supersede list: an adopter uses its own
	 * settings and supersedes nothing.
	 */
	strlcpy(m.forge, "local", sizeof(m.forge));
	m.remote[0] = m.pulls[0] = '\0';
	m.has_github = 0;
	memset(&m.github, 0, sizeof(m.github));
	m.nsupersede = 0;
	raw = msg_encode(MSG_PUBLISH, &m, &len, err, sizeof(err));
	attempt_publish_request_free(&m);
	if (raw == NULL) {
		log_warnx("%s: fleet: not adoptable if lost: its publish "
		    "request: %s", a->id, err);
		return (NULL);
	}
	/* An adopter is handed the pin and the manifest in one answer. */
	if (!fleet_adopt_fits((len + 2) / 3 * 4, a->manifest_len)) {
		log_warnx("%s: fleet: not adoptable if lost: its publish "
		    "request of %zu bytes is more than a pin holds beside "
		    "its manifest", a->id, len);
		free(raw);
		return (NULL);
	}
	if ((b64 = malloc((len + 2) / 3 * 4 + 1)) == NULL)
		fatal(NULL);
	base64_encode((const uint8_t *)raw, len, 1, b64);
	free(raw);
	return (b64);
}

/*
 * Before its publication, the claim is marked publishing in the
 * database, fenced: from then on it is never handed back or run again
 * (a host lost now leaves it to be finished from the forge's side).
 * 1 once marked and the leases are live; 0 while it waits.
 */
static int
fleet_may_publish(struct attempt *a)
{
	struct fleet_write	 w;
	struct ibuf		*b;
	char			*id;

	if (a->fleet_epoch == 0)
		return (1);
	if (!fleet_may(a, "publication"))
		return (0);
	if (a->fleet_marked) {
		/* Its request says when it must have begun, from now. */
		a->fleet_begin_by = fleet_begin_by(a);
		return (1);
	}
	if (a->fleet_marking)
		return (0);
	memset(&w, 0, sizeof(w));
	strlcpy(w.id, a->id, sizeof(w.id));
	w.epoch = a->fleet_epoch;
	w.from = FLEET_CLAIMED;
	w.to = FLEET_PUBLISHING;
	strlcpy(w.reason, "publishing", sizeof(w.reason));
	/* The pin: the commit, and what another host needs to finish it. */
	strlcpy(w.commit, a->commit, sizeof(w.commit));
	if ((w.pin = pin_request(a)) != NULL) {
		forge_key(conf_repo(env->conf, a->m->repository), w.forge);
		if (w.forge[0] == '\0') {
			free(w.pin);
			w.pin = NULL;
		}
	}
	if ((id = strdup(a->id)) == NULL)
		fatal(NULL);
	if ((b = fleet_write_compose(&w)) == NULL) {
		/* Never marked, never published: said, not retried. */
		free(w.pin);
		free(id);
		attempt_fail(a, "failed", "fleet: its publishing mark does "
		    "not compose (commit %.64s)", a->commit);
		return (0);
	}
	if (fleet_request(IMSG_FLEET_OUTCOME, b, marked_done, id) == -1) {
		free(w.pin);
		free(id);
		return (0);
	}
	free(w.pin);
	a->fleet_marking = 1;
	return (0);
}

uint64_t
fleet_epoch(void)
{
	return (host_epoch);
}

/*
 * A request to the child; done(arg, type, answer) later, once.  -1
 * (errno EAGAIN) when the child is not ready or too much is pending:
 * the caller answers its own caller at once.
 */
int
fleet_request(uint32_t type, struct ibuf *b, fleet_done done, void *arg)
{
	struct child	*c = proc_find(PROC_FLEET, 0);
	size_t		 i;

	if (b == NULL) {
		errno = EINVAL;
		return (-1);
	}
	for (i = 0; i < FLEET_PENDING_MAX; i++)
		if (pending[i].id == 0)
			break;
	if (!ready || c == NULL || c->state != CHILD_RUNNING ||
	    i == FLEET_PENDING_MAX) {
		ibuf_free(b);
		errno = EAGAIN;
		return (-1);
	}
	if (++lastid == 0)
		lastid = 1;
	if (imsg_compose_ibuf(&c->iev.ibuf, type, lastid, 0, b) == -1)
		return (-1);
	imsgev_add(&c->iev);
	pending[i].id = lastid;
	pending[i].type = type;
	pending[i].done = done;
	pending[i].arg = arg;
	pending[i].sent_ms = boot_ms();
	return (0);
}

/* What this host serves and where each publishes, by its config. */
static void
served_now(struct fleet_serves *v)
{
	const struct conf_repo	*r;

	memset(v, 0, sizeof(*v));
	TAILQ_FOREACH(r, &env->conf->repos, entry)
		if (v->nrepos < FLEET_REPOS_MAX) {
			forge_key(r, v->forges[v->nrepos]);
			strlcpy(v->repos[v->nrepos++], r->name,
			    sizeof(v->repos[0]));
		}
}

static void
serves_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *r = ans;

	serving = 0;
	if (r == NULL || r->code != FLEET_OK) {
		/* The next beat tries again. */
		log_warnx("fleet: the repositories this host serves, as "
		    "reloaded, are not recorded: %s%s%s",
		    r != NULL ? fleet_code_name(r->code) : "not sent",
		    r != NULL && r->text[0] != '\0' ? ": " : "",
		    r != NULL ? r->text : "");
		return;
	}
	served = sending;
	log_info("fleet: the repositories this host serves, as reloaded, "
	    "are recorded");
}

/*
 * After a reload (and on each beat, until the database has it): what
 * this host serves, and where each repository publishes, as claims and
 * adoptions match them, if that changed.  A child not ready yet says
 * its HELLO, which has it.
 */
void
fleet_reconfigure(void)
{
	if (!env->conf->fleet.enabled || !ready || serving)
		return;
	served_now(&sending);
	if (memcmp(&sending, &served, sizeof(sending)) == 0)
		return;
	if (fleet_request(IMSG_FLEET_SERVES, fleet_serves_compose(&sending),
	    serves_done, NULL) == -1) {
		log_warnx("fleet: the repositories this host serves, as "
		    "reloaded, are not sent");
		return;
	}
	serving = 1;
}

/* HELLO from the child: it gets this host and its database. */
void
fleet_ready(struct child *c)
{
	const struct conf_fleet	*f = &env->conf->fleet;
	struct fleet_hello	*h;
	struct ibuf		*b;

	if ((h = calloc(1, sizeof(*h))) == NULL) {
		proc_kill(c, "out of memory for its HELLO");
		return;
	}
	strlcpy(h->conninfo, f->conninfo, sizeof(h->conninfo));
	strlcpy(h->host, f->host, sizeof(h->host));
	h->epoch = host_epoch;
	h->slots = f->slots;
	h->lease_ms = f->lease_ms;
	h->deadline_ms = f->deadline_ms;
	h->adopt_after_ms = f->adopt_after_ms;
	served_now(&served);
	h->nrepos = served.nrepos;
	memcpy(h->repos, served.repos, sizeof(h->repos));
	memcpy(h->forges, served.forges, sizeof(h->forges));
	b = fleet_hello_compose(h);
	explicit_bzero(h, sizeof(*h));
	free(h);
	if (b == NULL ||
	    imsg_compose_ibuf(&c->iev.ibuf, IMSG_FLEET_HELLO, 0, 0, b) == -1) {
		proc_kill(c, "its HELLO does not compose");
		return;
	}
	imsgev_add(&c->iev);
	said_hello = 1;
}

/* Gone: every request still waiting hears so, and nothing goes out. */
void
fleet_lost(struct child *c)
{
	struct fleet_req	 r;
	size_t			 i;

	said_hello = ready = 0;
	evtimer_del(&ev_beat);
	evtimer_del(&ev_poll);
	for (i = 0; i < FLEET_PENDING_MAX; i++) {
		if (pending[i].id == 0)
			continue;
		r = pending[i];
		pending[i].id = 0;
		answer_sent_ms = r.sent_ms;
		if (r.done != NULL)
			r.done(r.arg, 0, NULL);
	}
	claiming = rescuing = 0;
	/* The database's view is not known any more: no stale gauges. */
	stats.hosts_expired = -1;
	stats.nqueues = 0;
}

static void
tenant_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *res = ans;

	if (res != NULL && res->code != FLEET_OK)
		log_warnx("fleet: a tenant was not recorded: %s: %s",
		    fleet_code_name(res->code), res->text);
}

static void
beat_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *res = ans;
	struct child	*c;
	int		 was;

	if (res == NULL)
		return;
	if (res->code == FLEET_SUPERSEDED) {
		/* Another start of this host took a new epoch: start over. */
		log_warnx("fleet: host %s at epoch %llu is superseded",
		    env->conf->fleet.host, (unsigned long long)host_epoch);
		if ((c = proc_find(PROC_FLEET, 0)) != NULL)
			proc_kill(c, "its host's epoch is superseded");
		return;
	}
	if (res->code != FLEET_OK) {
		log_warnx("fleet: lease not renewed: %s: %s",
		    fleet_code_name(res->code), res->text);
		return;
	}
	log_debug("fleet: lease renewed, host %s", res->text);
	if (strcmp(res->text, "drain-due") == 0)
		fleet_handback();
	was = host_live();
	if (lease_end(answer_sent_ms) > host_lease_end)
		host_lease_end = lease_end(answer_sent_ms);
	if (!was && !fenced && host_live()) {
		/* The first lease: claims may start now. */
		evtimer_del(&ev_poll);
		fleet_poll(-1, 0, NULL);
	}
	if (fenced && host_live()) {
		fenced = 0;
		log_warnx("fleet: lease of host %s back: no longer fenced",
		    env->conf->fleet.host);
		attempt_schedule();	/* held publications */
	}
}

/*
 * A drain's deadline passed: what still runs here is handed back to
 * the queue (counted as one of its claims), for another host to run.
 * A publication under way is left to finish.
 */
static void
fleet_handback(void)
{
	struct attempt	*a, *next;

	for (a = TAILQ_FIRST(&env->attempts); a != NULL; a = next) {
		next = TAILQ_NEXT(a, entry);
		if (a->fleet_epoch == 0 || attempt_terminal(a) ||
		    attempt_publishing(a) || a->fleet_marked ||
		    a->fleet_handback)
			continue;
		a->fleet_handback = 1;
		attempt_fail(a, "failed", "drained: handed back to the "
		    "fleet's queue at the drain's deadline");
	}
}

/*
 * A claim's renewal came back: it goes on, or it is another's now.  An
 * answer of an earlier claim of the same attempt moves nothing.
 */
static void
renew_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *r = ans;
	struct fleet_claimref	*ref = arg;
	struct attempt		*a;

	a = attempt_of(ref->id);
	if (a != NULL)
		a->fleet_renewing = 0;
	if (a == NULL || a->fleet_epoch != ref->epoch) {
		free(ref);
		return;
	}
	free(ref);
	if (r == NULL || (r->code != FLEET_OK && r->code != FLEET_SUPERSEDED))
		return;		/* unknown: the watch counts it down */
	if (r->code == FLEET_SUPERSEDED) {
		claim_lost(a);
		return;
	}
	if (lease_end(answer_sent_ms) > a->fleet_lease_end)
		a->fleet_lease_end = lease_end(answer_sent_ms);
	a->fleet_host_epoch = host_epoch;
	/* A renewal answered so late that its lease is spent thaws none. */
	if (a->fleet_frozen_at != 0 && host_live() &&
	    boot_ms() < a->fleet_lease_end && a->run != NULL &&
	    a->run->active) {
		/* Moved on first: a thawed pid 1 must not find it spent. */
		watchdog_send(a);
		if (cgroup_freeze(&a->run->sb, 0) == -1)
			attempt_fail(a, "failed", "fenced: its lease is back "
			    "but its sandbox does not thaw: %s",
			    strerror(errno));
		else
			log_warnx("%s: fleet: lease back, sandbox thawed after "
			    "%llu ms", a->id, (unsigned long long)(boot_ms() -
			    a->fleet_frozen_at));
		a->fleet_frozen_at = 0;
	}
	if (a->fleet_held)
		attempt_schedule();
	if (strcmp(r->text, "cancel") == 0 && !attempt_terminal(a) &&
	    !attempt_publishing(a))
		attempt_cancel_why(a, 0, "cancelled in the fleet");
}

/*
 * The host's lease, and each claim the journal holds whose outcome the
 * database has not taken: renewed, the latter by claim epoch.
 */
static void
fleet_beat(int fd, short event, void *arg)
{
	struct attempt	*a;
	struct fleet_write w;
	struct timeval	 tv;
	uint32_t	 ms = env->conf->fleet.lease_ms / 3;
	struct fleet_claimref *ref;

	if (fleet_request(IMSG_FLEET_HEARTBEAT, ibuf_open(0), beat_done,
	    NULL) == -1)
		log_warnx("fleet: heartbeat: %s", strerror(errno));
	TAILQ_FOREACH(a, &env->attempts, entry) {
		if (a->fleet_epoch == 0 || a->fleet_sent == FLEET_SENT_DONE ||
		    a->fleet_renewing || a->fleet_superseded)
			continue;
		memset(&w, 0, sizeof(w));
		strlcpy(w.id, a->id, sizeof(w.id));
		w.epoch = a->fleet_epoch;
		if ((ref = fleet_claimref(a->id, a->fleet_epoch)) == NULL)
			fatal(NULL);
		if (fleet_request(IMSG_FLEET_RENEW, fleet_write_compose(&w),
		    renew_done, ref) == -1) {
			free(ref);
			break;
		}
		a->fleet_renewing = 1;
	}
	adopt_beat();
	fleet_reconfigure();
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(&ev_beat, &tv);
}

/*
 * The watch.  Past the host's lease: fenced (said once).  Past a
 * claim's: its running sandbox is frozen, and killed a lease later if
 * no renewal came back; a sandbox that cannot freeze is killed now.
 */
static void
fleet_tick(int fd, short event, void *arg)
{
	struct timeval	 tv = { 0, FLEET_TICK_MS * 1000 };
	struct attempt	*a, *next;
	uint64_t	 now = boot_ms();
	uint32_t	 lease = env->conf->fleet.lease_ms;

	if (!fenced && host_lease_end != 0 && now >= host_lease_end) {
		fenced = 1;
		stats.fences++;
		log_warnx("fleet: host %s fenced: its lease was not renewed "
		    "for %llu ms; no claims, no publication, lapsed claims "
		    "frozen", env->conf->fleet.host, (unsigned long long)
		    (now - host_lease_end + lease - lease / 4));
	}
	for (a = TAILQ_FIRST(&env->attempts); a != NULL; a = next) {
		next = TAILQ_NEXT(a, entry);
		if (a->fleet_epoch == 0 || attempt_terminal(a))
			continue;
		/* For the next run's start too (setup, validation). */
		a->fleet_watchdog_ms = watchdog_of(a);
		if (a->run == NULL || !a->run->active)
			continue;
		if (a->fleet_frozen_at == 0)
			watchdog_send(a);
		if (a->fleet_frozen_at == 0 && (now >= a->fleet_lease_end ||
		    !host_live())) {
			if (cgroup_freeze(&a->run->sb, 1) == -1) {
				a->fleet_handback = !a->fleet_marked;
				attempt_fail(a, "failed", "fenced: its lease "
				    "lapsed and its sandbox cannot be frozen: "
				    "%s", strerror(errno));
				continue;
			}
			a->fleet_frozen_at = now;
			log_warnx("%s: fleet: its lease is not surely live: "
			    "sandbox frozen", a->id);
		} else if (a->fleet_frozen_at != 0 &&
		    now - a->fleet_frozen_at >= lease) {
			/* Back to the queue, unless its publication began. */
			a->fleet_handback = !a->fleet_marked;
			attempt_fail(a, "failed", "fenced: frozen %llu ms and "
			    "its lease did not come back",
			    (unsigned long long)(now - a->fleet_frozen_at));
		}
	}
	adopt_tick();
	fleet_report();
	evtimer_add(&ev_tick, &tv);
}

/* READY: the host is registered; the tenants go, the lease is kept. */
static int
fleet_got_ready(struct child *c, struct imsg *imsg, char *why, size_t len)
{
	const struct conf_fleet	*f = &env->conf->fleet;
	struct fleet_ready	 r;
	struct fleet_tenant	 t;
	size_t			 i;

	if (!said_hello || ready) {
		snprintf(why, len, "FLEET_READY unasked");
		return (-1);
	}
	if (fleet_ready_decode(imsg, &r, why, len) == -1)
		return (-1);
	if (r.epoch <= host_epoch) {
		snprintf(why, len, "FLEET_READY: epoch %llu, not past %llu",
		    (unsigned long long)r.epoch,
		    (unsigned long long)host_epoch);
		return (-1);
	}
	host_epoch = r.epoch;
	ready = 1;
	log_info("fleet: host %s at epoch %llu, schema %u, %s", f->host,
	    (unsigned long long)host_epoch, r.schema,
	    fleet_hstate_name(r.state));
	for (i = 0; i < f->ntenants; i++) {
		memset(&t, 0, sizeof(t));
		strlcpy(t.name, f->tenants[i].name, sizeof(t.name));
		t.weight = f->tenants[i].weight;
		t.max_running = f->tenants[i].max_running;
		t.max_queued = f->tenants[i].max_queued;
		t.paused = f->tenants[i].paused;
		if (fleet_request(IMSG_FLEET_TENANT, fleet_tenant_compose(&t),
		    tenant_done, NULL) == -1)
			log_warnx("fleet: tenant %s: %s", t.name,
			    strerror(errno));
	}
	/* A reload since the HELLO: what it changed. */
	fleet_reconfigure();
	evtimer_set(&ev_beat, fleet_beat, NULL);
	fleet_beat(-1, 0, NULL);
	fleet_poll(-1, 0, NULL);
	return (0);
}

/*
 * A submission: the caller's tenant, its repository, then the queue.
 * Every one carries an idempotency key, the caller's or one made here:
 * when the answer is lost, the caller is told the key, and submitting
 * the same manifest again with it cannot queue it twice.
 */
struct fleet_subreq {
	uint32_t	 req;
	char		 key[FLEET_KEY_MAX];
};

static void
submit_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_submitted	*s = ans;
	const struct fleet_result	*r = ans;
	struct fleet_subreq		*sr = arg;
	struct ctl_conn			*c;

	c = reply_wait_take(sr->req, CTL_WAIT_FLEET, NULL);
	if (c == NULL)
		;		/* its client left; the queue may have it */
	else if (type == IMSG_FLEET_SUBMITTED)
		reply_obj(c, json_pack("{s:s, s:b, s:s, s:s}", "id", s->id,
		    "created", s->created, "fleet", env->conf->fleet.host,
		    "idempotency_key", sr->key));
	/* Queued through this host: a free slot here claims it now. */
	if (type == IMSG_FLEET_SUBMITTED && s->created && ready) {
		evtimer_del(&ev_poll);
		fleet_poll(-1, 0, NULL);
	}
	else if (type == IMSG_FLEET_RESULT && r->code == FLEET_REFUSED)
		reply_fail(c, "submit: the fleet refused it: %s", r->text);
	else
		reply_fail(c, "submit: no answer from the fleet (%s): it may "
		    "be queued; submit the same manifest again with "
		    "--idempotency-key %s to be sure it is, once",
		    r != NULL ? r->text : "factory-fleet was lost", sr->key);
	free(sr);
}

void
fleet_submit(struct ctl_conn *c, const struct fleet_opts *fo,
    const char *repo, const char *raw, size_t len)
{
	const struct conf_tenant *t;
	struct fleet_submit	 s;
	struct fleet_subreq	*sr;
	char			 why[128], hex[SHA256_HEX_LEN + 1];
	uint8_t			 rnd[16];
	size_t			 i;

	if ((t = tenant_of(c, fo != NULL ? fo->tenant : NULL, why,
	    sizeof(why))) == NULL) {
		reply_fail(c, "submit: refused: %s", why);
		return;
	}
	for (i = 0; i < t->nrepos; i++)
		if (strcmp(t->repos[i], repo) == 0)
			break;
	if (i == t->nrepos) {
		reply_fail(c, "submit: refused: repository %s is not tenant "
		    "%s's", repo, t->name);
		return;
	}
	memset(&s, 0, sizeof(s));
	strlcpy(s.tenant, t->name, sizeof(s.tenant));
	s.class = fo != NULL ? fo->class : FLEET_NORMAL;
	strlcpy(s.repo, repo, sizeof(s.repo));
	if (fo != NULL)
		strlcpy(s.key, fo->key, sizeof(s.key));
	if (s.key[0] == '\0') {
		arc4random_buf(rnd, sizeof(rnd));
		strlcpy(s.key, "auto-", sizeof(s.key));
		for (i = 0; i < sizeof(rnd); i++)
			snprintf(s.key + 5 + 2 * i, 3, "%02x", rnd[i]);
	}
	sha256_hex(raw, len, hex);
	snprintf(s.digest, sizeof(s.digest), "sha256:%s", hex);
	s.max_claims = FLEET_MAX_CLAIMS;
	s.manifest = (char *)raw;
	if ((sr = calloc(1, sizeof(*sr))) == NULL)
		fatal(NULL);
	strlcpy(sr->key, s.key, sizeof(sr->key));
	sr->req = reply_wait(c, CTL_WAIT_FLEET, NULL, NULL);
	if (fleet_request(IMSG_FLEET_SUBMIT, fleet_submit_compose(&s),
	    submit_done, sr) == -1) {
		reply_wait_take(sr->req, CTL_WAIT_FLEET, NULL);
		free(sr);
		reply_fail(c, "submit: factory-fleet is not ready: not "
		    "queued, try again");
		return;
	}
	log_info("fleet: uid %u submits to tenant %s, %s, manifest %s",
	    (unsigned)c->uid, t->name, repo, s.digest);
}

/*
 * A claim's outcome (or a claim this host cannot run), fenced, with
 * what the attempt used (a, or NULL for none).
 */
static void
fleet_outcome(const char *id, uint64_t epoch, int to, const char *reason,
    const struct attempt *a, fleet_done done, void *arg)
{
	struct fleet_write	 w;
	size_t			 i;

	memset(&w, 0, sizeof(w));
	if (a != NULL) {
		w.use.cpu_ms = a->usage.cpu_ms;
		w.use.mem_peak = a->usage.mem_peak;
		w.use.wall_ms = a->t[ST_TEARDOWN] > a->t[ST_QUEUE] ?
		    a->t[ST_TEARDOWN] - a->t[ST_QUEUE] : 0;
		w.use.tokens = a->spend.tokens_in + a->spend.tokens_out;
		w.use.cost_uusd = a->spend.cost_uusd;
	}
	strlcpy(w.id, id, sizeof(w.id));
	w.epoch = epoch;
	w.from = FLEET_CLAIMED;
	w.to = to;
	/* Printable ASCII only, and bounded: the codec checks it. */
	for (i = 0; reason[i] != '\0' && i < sizeof(w.reason) - 1; i++)
		w.reason[i] = reason[i] >= 0x20 && reason[i] < 0x7f ?
		    reason[i] : '?';
	if (fleet_request(IMSG_FLEET_OUTCOME, fleet_write_compose(&w), done,
	    arg) == -1 && done != NULL)
		done(arg, 0, NULL);
}

static void
dropped_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *r = ans;

	if (r != NULL && r->code != FLEET_OK)
		log_warnx("fleet: a claim handed back: %s: %s",
		    fleet_code_name(r->code), r->text);
}

/* A claim that never became an attempt here: back as failed. */
void
fleet_claim_dropped(const char *id, uint64_t epoch, const char *why)
{
	if (nstarting > 0)
		nstarting--;
	log_warnx("fleet: claim %s not run here: %s", id, why);
	fleet_outcome(id, epoch, FLEET_FAILED, why, NULL, dropped_done, NULL);
}

void
fleet_claim_started(void)
{
	if (nstarting > 0)
		nstarting--;
}

static void
claim_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_claimed	*cl = ans;
	const struct fleet_result	*r = ans;
	struct child			*c;
	char				 hex[SHA256_HEX_LEN + 1];
	char				 want[FLEET_DIGEST_MAX], err[CONF_ERRLEN];
	int				 rc;

	claiming = 0;
	if (type != IMSG_FLEET_CLAIMED) {
		if (r != NULL && r->code != FLEET_NONE)
			log_warnx("fleet: claim: %s: %s",
			    fleet_code_name(r->code), r->text);
		return;
	}
	/* Committed in the database, not yet journaled here. */
	crashpoint("parent:fleet-claimed");
	sha256_hex(cl->manifest, strlen(cl->manifest), hex);
	snprintf(want, sizeof(want), "sha256:%s", hex);
	stats.claims++;
	log_info("fleet: claimed %s of tenant %s at epoch %llu", cl->id,
	    cl->tenant, (unsigned long long)cl->epoch);
	nstarting++;
	if (strcmp(want, cl->digest) != 0)
		fleet_claim_dropped(cl->id, cl->epoch, "the manifest does not "
		    "match its digest");
	else if ((rc = run_claim(cl, err, sizeof(err))) == -2) {
		/* A lie: nothing goes back for it, the child goes. */
		fleet_claim_started();
		if ((c = proc_find(PROC_FLEET, 0)) != NULL)
			proc_kill(c, err);
		return;
	} else if (rc == -1)
		fleet_claim_dropped(cl->id, cl->epoch, err);
	else if (rc == -3) {
		if (nstarting > 0)
			nstarting--;
		log_warnx("fleet: claim %s handed back: %s", cl->id, err);
		fleet_outcome(cl->id, cl->epoch, FLEET_QUEUED, err, NULL,
		    dropped_done, NULL);
	}
	/* More, if there is room. */
	evtimer_del(&ev_poll);
	fleet_poll(-1, 0, NULL);
}

/* The database's answer to an outcome, journaled: never sent again. */
static void
outcome_sent(struct attempt *a, int code)
{
	if (attempt_transition(a, "fleet-sent", json_pack("{s:s}", "answer",
	    fleet_code_name(code)), NULL) == -1) {
		a->fleet_sent = FLEET_SENT_NOT;
		return;
	}
	a->fleet_sent = FLEET_SENT_DONE;
}

static void
outcome_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result *r = ans;
	struct attempt	*a;
	char		*id = arg;

	a = attempt_answered(id);
	if (a == NULL || a->fleet_sent != FLEET_SENT_ASKED)
		return;
	/* Unknown (an error, the child lost): sent again later. */
	if (r == NULL || (r->code != FLEET_OK &&
	    r->code != FLEET_SUPERSEDED)) {
		a->fleet_sent = FLEET_SENT_NOT;
		return;
	}
	if (r->code == FLEET_SUPERSEDED)
		log_warnx("%s: fleet: its outcome is superseded (epoch %llu)",
		    a->id, (unsigned long long)a->fleet_epoch);
	outcome_sent(a, r->code);
	if (a->fleet_sent != FLEET_SENT_DONE)
		return;
	evtimer_del(&ev_poll);
	fleet_poll(-1, 0, NULL);
}

/* A gauge row, or the end: the rows become the metrics' queues. */
static void
gauges_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_gaugerow	*g = ans;
	const struct fleet_result	*r = ans;
	const char			*errstr;
	long long			 n;

	if (type == IMSG_FLEET_GAUGEROW) {
		if (ngauges < FLEET_GAUGES_MAX) {
			strlcpy(gauges[ngauges].tenant, g->tenant,
			    sizeof(gauges[ngauges].tenant));
			gauges[ngauges].class = g->class;
			gauges[ngauges].queued = g->queued;
			gauges[ngauges].oldest_ms = g->oldest_ms;
			ngauges++;
		}
		return;
	}
	gauging = 0;
	if (r != NULL && r->code == FLEET_OK) {
		n = strtonum(r->text, 0, FLEET_CAP_MAX, &errstr);
		if (errstr == NULL) {
			stats.hosts_expired = (int)n;
			memcpy(stats.queues, gauges, sizeof(gauges[0]) *
			    ngauges);
			stats.nqueues = ngauges;
		}
	}
	ngauges = 0;
}

static void
rescue_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_rescued	*r = ans;

	rescuing = 0;
	if (type == IMSG_FLEET_RESCUED) {
		stats.swept[0] += r->requeued;
		stats.swept[1] += r->dead;
		stats.swept[2] += r->adoptable;
	}
	if (type == IMSG_FLEET_RESCUED && r->requeued + r->dead +
	    r->adoptable > 0)
		log_warnx("fleet: rescued the lapsed claims of lost hosts: "
		    "%u queued again, %u dead-lettered, %u lost while "
		    "publishing", r->requeued, r->dead, r->adoptable);
}

/*
 * The outbox: every attempt of the fleet ended and torn down, whose
 * outcome is not yet answered, goes (one another host has now is only
 * journaled so); then, while this host's lease is live, the sweep of
 * lapsed claims and a claim if a slot is free.
 */
static void
fleet_poll(int fd, short event, void *arg)
{
	struct attempt	*a;
	struct timeval	 tv = { FLEET_POLL_MS / 1000, 0 };
	uint32_t	 busy = nstarting;
	char		*id;
	int		 to;

	TAILQ_FOREACH(a, &env->attempts, entry) {
		if (a->fleet_epoch == 0 || a->fleet_sent == FLEET_SENT_DONE)
			continue;
		if (a->state != AS_TERMINATED) {
			busy++;
			continue;
		}
		if (a->fleet_sent == FLEET_SENT_ASKED)
			continue;
		if (a->fleet_superseded) {
			outcome_sent(a, FLEET_SUPERSEDED);
			continue;
		}
		to = a->fleet_handback && !a->fleet_marked &&
		    a->outcome != AS_PUBLISHED ?
		    FLEET_QUEUED : a->outcome == AS_PUBLISHED ? FLEET_DONE :
		    a->outcome == AS_CANCELLED ? FLEET_CANCELLED : FLEET_FAILED;
		if ((id = strdup(a->id)) == NULL)
			fatal(NULL);
		a->fleet_sent = FLEET_SENT_ASKED;
		fleet_outcome(a->id, a->fleet_epoch, to, a->reason != NULL ?
		    a->reason : attempt_state_name(a->outcome), a,
		    outcome_done, id);
	}
	/* Starts and publications held for a lease, or a mark to ask. */
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (a->fleet_epoch != 0 && !attempt_terminal(a) &&
		    (a->fleet_held || (a->state == AS_PUBLISHING &&
		    !a->publish_sent))) {
			attempt_schedule();
			break;
		}
	if (ready && host_live() && !rescuing && !env->shutting_down) {
		rescuing = 1;
		if (fleet_request(IMSG_FLEET_RESCUE, ibuf_open(0), rescue_done,
		    NULL) == -1)
			rescuing = 0;
	}
	if (ready && host_live() && !claiming &&
	    busy < env->conf->fleet.slots && !env->shutting_down) {
		claiming = 1;
		if (fleet_request(IMSG_FLEET_CLAIM, ibuf_open(0), claim_done,
		    NULL) == -1)
			claiming = 0;
	}
	/* Publications lost with their host: finished here, if it can. */
	adopt_poll(ready && host_live() && !fenced);
	if (ready && !gauging && now_ms() - gauged_ms >= FLEET_GAUGES_MS) {
		gauging = 1;
		ngauges = 0;
		gauged_ms = now_ms();
		if (fleet_request(IMSG_FLEET_GAUGES, ibuf_open(0), gauges_done,
		    NULL) == -1)
			gauging = 0;
	}
	if (ready)
		evtimer_add(&ev_poll, &tv);
}

/* The listings: the control request, the child's, its rows. */
static const struct {
	uint32_t	 ctl, req, row;
	const char	*key;
} lists[] = {
	{ IMSG_CTL_HOSTS, IMSG_FLEET_HOSTS, IMSG_FLEET_HOSTROW, "hosts" },
	{ IMSG_CTL_QUEUE, IMSG_FLEET_QUEUE, IMSG_FLEET_QUEUEROW, "queue" },
	{ IMSG_CTL_TENANTS, IMSG_FLEET_TENANTS, IMSG_FLEET_TENANTROW,
	    "tenants" },
	{ IMSG_CTL_USAGE, IMSG_FLEET_USAGE, IMSG_FLEET_USAGEROW, "usage" },
};
#define NLISTS	(sizeof(lists) / sizeof(lists[0]))

/* The child's request and the answer's key of a control listing; 0. */
uint32_t
fleet_list_of(uint32_t ctl, const char **key)
{
	size_t	 k;

	for (k = 0; k < NLISTS; k++)
		if (lists[k].ctl == ctl) {
			*key = lists[k].key;
			return (lists[k].req);
		}
	return (0);
}

/*
 * An answer: to a request of ours still pending, of a kind that request
 * gets.  Anything else is the child's lie.
 */
int
fleet_dispatch(struct child *c, struct imsg *imsg, char *why, size_t len)
{
	union {
		struct fleet_result	 result;
		struct fleet_claimed	 claimed;
		struct fleet_submitted	 submitted;
		struct fleet_hostrow	 hostrow;
		struct fleet_queuerow	 queuerow;
		struct fleet_rescued	 rescued;
		struct fleet_tenantrow	 tenantrow;
		struct fleet_usagerow	 usagerow;
		struct fleet_adopt	 adopt;
		struct fleet_gaugerow	 gaugerow;
	} u;
	struct fleet_req	 r;
	uint32_t		 type = imsg_get_type(imsg);
	uint32_t		 id = imsg_get_id(imsg);
	size_t			 i, k;
	int			 ok;

	if (type == IMSG_FLEET_READY)
		return (fleet_got_ready(c, imsg, why, len));
	for (i = 0; i < FLEET_PENDING_MAX; i++)
		if (id != 0 && pending[i].id == id)
			break;
	if (i == FLEET_PENDING_MAX) {
		snprintf(why, len, "an answer (type %u) to request %u, "
		    "never asked or answered already", type, id);
		return (-1);
	}
	r = pending[i];
	answer_sent_ms = r.sent_ms;
	memset(&u, 0, sizeof(u));
	/* The gauges' rows: to their request, which goes on waiting. */
	if (type == IMSG_FLEET_GAUGEROW) {
		if (r.type != IMSG_FLEET_GAUGES) {
			snprintf(why, len, "answer type %u to request type %u",
			    type, r.type);
			return (-1);
		}
		if (fleet_gaugerow_decode(imsg, &u.gaugerow, why, len) == -1)
			return (-1);
		if (r.done != NULL)
			r.done(r.arg, type, &u);
		return (0);
	}
	/* A listing's rows: each to its request, which goes on waiting. */
	for (k = 0; k < NLISTS; k++)
		if (lists[k].row == type)
			break;
	if (k < NLISTS) {
		if (r.type != lists[k].req) {
			snprintf(why, len, "answer type %u to request type %u",
			    type, r.type);
			return (-1);
		}
		switch (type) {
		case IMSG_FLEET_HOSTROW:
			ok = fleet_hostrow_decode(imsg, &u.hostrow, why, len);
			break;
		case IMSG_FLEET_QUEUEROW:
			ok = fleet_queuerow_decode(imsg, &u.queuerow, why, len);
			break;
		case IMSG_FLEET_TENANTROW:
			ok = fleet_tenantrow_decode(imsg, &u.tenantrow, why,
			    len);
			break;
		default:
			ok = fleet_usagerow_decode(imsg, &u.usagerow, why, len);
			break;
		}
		if (ok == -1)
			return (-1);
		if (r.done != NULL)
			r.done(r.arg, type, &u);
		return (0);
	}
	switch (type) {
	case IMSG_FLEET_RESULT:
		ok = fleet_result_decode(imsg, &u.result, why, len) == 0;
		/* A claim's none, or a refusal: never "done" for a claim. */
		if (ok && (r.type == IMSG_FLEET_CLAIM ||
		    r.type == IMSG_FLEET_ADOPT) && u.result.code == FLEET_OK) {
			snprintf(why, len, "FLEET_RESULT ok to a claim or "
			    "an adoption");
			ok = 0;
		}
		break;
	case IMSG_FLEET_ADOPTED:
		if (r.type != IMSG_FLEET_ADOPT) {
			snprintf(why, len, "answer type %u to request type %u",
			    type, r.type);
			ok = 0;
		} else
			ok = fleet_adopt_decode(imsg, &u.adopt, why, len) == 0;
		break;
	case IMSG_FLEET_RESCUED:
		if (r.type != IMSG_FLEET_RESCUE) {
			snprintf(why, len, "answer type %u to request type %u",
			    type, r.type);
			ok = 0;
		} else
			ok = fleet_rescued_decode(imsg, &u.rescued, why,
			    len) == 0;
		break;
	case IMSG_FLEET_CLAIMED:
	case IMSG_FLEET_SUBMITTED:
		if (r.type != (type == IMSG_FLEET_CLAIMED ? IMSG_FLEET_CLAIM :
		    IMSG_FLEET_SUBMIT)) {
			snprintf(why, len, "answer type %u to request type %u",
			    type, r.type);
			ok = 0;
		} else if (type == IMSG_FLEET_CLAIMED)
			ok = fleet_claimed_decode(imsg, &u.claimed, why,
			    len) == 0;
		else
			ok = fleet_submitted_decode(imsg, &u.submitted, why,
			    len) == 0;
		break;
	default:
		snprintf(why, len, "unexpected imsg type %u", type);
		ok = 0;
	}
	if (!ok)
		return (-1);
	pending[i].id = 0;
	if (r.done != NULL)
		r.done(r.arg, type, &u);
	if (type == IMSG_FLEET_CLAIMED)
		free(u.claimed.manifest);
	if (type == IMSG_FLEET_ADOPTED)
		fleet_adopt_free(&u.adopt);
	return (0);
}
