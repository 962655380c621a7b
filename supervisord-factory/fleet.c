/*
 * The parent's side of factory-fleet, which alone speaks to the fleet's
 * PostgreSQL (factory-fleet(8)): transport and bookkeeping only.  The
 * child is told the database, this host and the tenants; the host's
 * lease is renewed on a timer; every request gets exactly one answer
 * of the kind it asked for, with its id, or the child lied and is
 * killed.  No SQL here, and nothing waits on the database: a caller
 * gets its answer in a callback, or "lost" when the child goes.
 *
 * Without a fleet: block nothing of this runs (no child is started).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factoryd.h"
#include "fleetmsg.h"
#include "log.h"

#define FLEET_PENDING_MAX	256	/* requests without an answer yet */

struct fleet_req {
	uint32_t	 id;		/* 0: a free row */
	uint32_t	 type;
	fleet_done	 done;
	void		*arg;
};

static struct fleet_req	 pending[FLEET_PENDING_MAX];
static uint32_t		 lastid;
static struct event	 ev_beat;
static int		 said_hello;	/* to this child: READY next */
static int		 ready;		/* READY: requests may go */
static uint64_t		 host_epoch;	/* the last the database gave */

static void	fleet_beat(int, short, void *);

int
fleet_is_ready(void)
{
	return (ready);
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
	return (0);
}

/* HELLO from the child: it gets this host and its database. */
void
fleet_ready(struct child *c)
{
	const struct conf_fleet	*f = &env->conf->fleet;
	const struct conf_repo	*r;
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
	TAILQ_FOREACH(r, &env->conf->repos, entry)
		if (h->nrepos < FLEET_REPOS_MAX)
			strlcpy(h->repos[h->nrepos++], r->name,
			    sizeof(h->repos[0]));
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
	for (i = 0; i < FLEET_PENDING_MAX; i++) {
		if (pending[i].id == 0)
			continue;
		r = pending[i];
		pending[i].id = 0;
		if (r.done != NULL)
			r.done(r.arg, 0, NULL);
	}
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

	if (res == NULL)
		return;
	if (res->code == FLEET_SUPERSEDED)
		log_warnx("fleet: host %s at epoch %llu is superseded",
		    env->conf->fleet.host, (unsigned long long)host_epoch);
	else if (res->code != FLEET_OK)
		log_warnx("fleet: lease not renewed: %s: %s",
		    fleet_code_name(res->code), res->text);
	else
		log_debug("fleet: lease renewed, host %s", res->text);
}

static void
fleet_beat(int fd, short event, void *arg)
{
	struct timeval	 tv;
	uint32_t	 ms = env->conf->fleet.lease_ms / 3;

	if (fleet_request(IMSG_FLEET_HEARTBEAT, ibuf_open(0), beat_done,
	    NULL) == -1)
		log_warnx("fleet: heartbeat: %s", strerror(errno));
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(&ev_beat, &tv);
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
	evtimer_set(&ev_beat, fleet_beat, NULL);
	fleet_beat(-1, 0, NULL);
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
	} u;
	struct fleet_req	 r;
	uint32_t		 type = imsg_get_type(imsg);
	uint32_t		 id = imsg_get_id(imsg);
	size_t			 i;
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
	memset(&u, 0, sizeof(u));
	switch (type) {
	case IMSG_FLEET_RESULT:
		ok = fleet_result_decode(imsg, &u.result, why, len) == 0;
		/* A claim's none, or a refusal: never "done" for a claim. */
		if (ok && r.type == IMSG_FLEET_CLAIM &&
		    u.result.code == FLEET_OK) {
			snprintf(why, len, "FLEET_RESULT ok to a claim");
			ok = 0;
		}
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
	return (0);
}
