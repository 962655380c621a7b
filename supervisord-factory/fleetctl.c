/*
 * The operator's side of the fleet (factoryctl hosts, queue, tenants,
 * usage, cordon, drain, pause, cancel): control requests turned into
 * the child's, their rows and answers turned into the control
 * socket's JSON.  A row of a tenant's is shown only to root and to
 * whoever acts for that tenant here, and the database is asked for
 * those rows only.  Below control.c, above fleet.c (fleet_request).
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factoryd.h"
#include "fleetmsg.h"
#include "log.h"

/* factoryctl hosts, queue, tenants, usage: the rows, then the answer. */
struct fleet_list {
	uint32_t	 req;		/* the client's wait */
	const char	*key;		/* the answer's key: "queue" */
	json_t		*rows;
	int		 nrows;
	int		 all;		/* root: every tenant's rows */
	uint64_t	 mine;		/* else: the config's tenants, by bit */
};

/*
 * A row of a tenant's (queue, tenants, usage) is shown to root and to
 * whoever acts for that tenant here; the hosts are everyone's.
 */
static int
list_shows(const struct fleet_list *l, uint32_t type, const void *ans)
{
	const struct conf_fleet	*f = &env->conf->fleet;
	const char		*t;
	size_t			 i;

	switch (type) {
	case IMSG_FLEET_QUEUEROW:
		t = ((const struct fleet_queuerow *)ans)->tenant;
		break;
	case IMSG_FLEET_TENANTROW:
		t = ((const struct fleet_tenantrow *)ans)->name;
		break;
	case IMSG_FLEET_USAGEROW:
		t = ((const struct fleet_usagerow *)ans)->tenant;
		break;
	default:
		return (1);
	}
	if (l->all)
		return (1);
	for (i = 0; i < f->ntenants && i < 64; i++)
		if (strcmp(f->tenants[i].name, t) == 0)
			return ((l->mine >> i) & 1);
	return (0);
}

static void
list_drop(void *arg)
{
	struct fleet_list	*l = arg;

	l->req = 0;		/* its client left: rows go nowhere */
}

static json_t *
use_json(json_t *o, const struct fleet_use *u)
{
	json_object_set_new(o, "cpu_seconds", json_real(u->cpu_ms / 1000.0));
	json_object_set_new(o, "memory_peak", json_integer(
	    (json_int_t)(u->mem_peak > INT64_MAX ? INT64_MAX : u->mem_peak)));
	json_object_set_new(o, "wall_seconds", json_real(u->wall_ms /
	    1000.0));
	json_object_set_new(o, "tokens", json_integer(
	    (json_int_t)(u->tokens > INT64_MAX ? INT64_MAX : u->tokens)));
	json_object_set_new(o, "usd", json_real(u->cost_uusd / 1e6));
	return (o);
}

static json_t *
row_json(uint32_t type, const void *ans)
{
	static const char *const classes[] = { "urgent", "normal", "batch" };
	const struct fleet_hostrow	*h = ans;
	const struct fleet_queuerow	*q = ans;
	const struct fleet_tenantrow	*t = ans;
	const struct fleet_usagerow	*u = ans;

	switch (type) {
	case IMSG_FLEET_HOSTROW:
		return (json_pack("{s:s, s:I, s:s, s:i, s:i, s:I, s:b}", "host",
		    h->host, "epoch", (json_int_t)h->epoch, "state",
		    fleet_hstate_name(h->state), "slots", (int)h->slots,
		    "running", (int)h->running, "heartbeat_ms",
		    (json_int_t)h->heartbeat_ms, "expired", h->expired));
	case IMSG_FLEET_QUEUEROW:
		return (json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "id", q->id,
		    "tenant", q->tenant, "priority", classes[q->class],
		    "repository", q->repo, "age_ms", (json_int_t)q->age_ms,
		    "why", q->why));
	case IMSG_FLEET_TENANTROW:
		return (json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:b, s:b, "
		    "s:s}", "tenant", t->name, "weight", (int)t->weight,
		    "max_running", (int)t->max_running, "max_queued",
		    (int)t->max_queued, "running", (int)t->running, "queued",
		    (int)t->queued, "paused", t->paused, "held", t->held,
		    "note", t->note));
	default:
		return (use_json(json_pack("{s:s, s:s, s:i}", "tenant",
		    u->tenant, "host", u->host, "attempts", (int)u->attempts),
		    &u->use));
	}
}

static void
list_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result	*r = ans;
	struct fleet_list		*l = arg;
	struct ctl_conn			*c;

	if (type != 0 && type != IMSG_FLEET_RESULT) {
		if (list_shows(l, type, ans) && l->nrows++ < FLEET_ROWS_MAX)
			json_array_append_new(l->rows, row_json(type, ans));
		return;
	}
	c = l->req != 0 ? reply_wait_take(l->req, CTL_WAIT_FLEET, NULL) :
	    NULL;
	if (c != NULL && type == IMSG_FLEET_RESULT && r->code == FLEET_OK)
		reply_obj(c, json_pack("{s:O}", l->key, l->rows));
	else if (c != NULL)
		reply_fail(c, "the fleet did not answer: %s", r != NULL ?
		    r->text : "factory-fleet was lost");
	json_decref(l->rows);
	free(l);
}

/*
 * Any operator may list, and sees the rows of the tenants it acts for
 * (root: all); usage takes its window in seconds (a NUL-terminated
 * decimal), the others nothing.
 */
void
fleet_ctl_list(struct ctl_conn *c, struct imsg *imsg)
{
	struct fleet_list	*l;
	struct fleet_scope	 sc;
	struct ibuf		*b;
	struct ibuf		 ib;
	char			 secs[16], why[128];
	const char		*errstr, *key;
	uint32_t		 n = 0, req;
	size_t			 i;

	if ((req = fleet_list_of(imsg_get_type(imsg), &key)) == 0)
		fatalx("fleet_ctl_list: type %u", imsg_get_type(imsg));
	if (!env->conf->fleet.enabled) {
		reply_fail(c, "this factoryd has no fleet:");
		return;
	}
	if (req == IMSG_FLEET_USAGE) {
		if (imsg_get_ibuf(imsg, &ib) == -1 ||
		    ibuf_get_string(&ib, secs, sizeof(secs)) == -1 ||
		    ibuf_size(&ib) != 0) {
			reply_fail(c, "usage: a bad request");
			return;
		}
		n = strtonum(secs, 1, FLEET_USAGE_MAX, &errstr);
		if (errstr != NULL) {
			reply_fail(c, "usage: --since: 1 second to 366 days");
			return;
		}
	} else if (imsg_get_len(imsg) != 0) {
		reply_fail(c, "a listing takes no argument");
		return;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->rows = json_array()) == NULL)
		fatal(NULL);
	l->key = key;
	l->all = c->uid == 0;
	/* The database is asked for the caller's tenants' rows only. */
	memset(&sc, 0, sizeof(sc));
	sc.since_s = n;
	sc.all = l->all;
	for (i = 0; i < env->conf->fleet.ntenants && i < 64; i++)
		if (tenant_of(c, env->conf->fleet.tenants[i].name, why,
		    sizeof(why)) != NULL) {
			l->mine |= (uint64_t)1 << i;
			if (sc.ntenants < FLEET_TENANTS_MAX)
				strlcpy(sc.tenants[sc.ntenants++],
				    env->conf->fleet.tenants[i].name,
				    sizeof(sc.tenants[0]));
		}
	b = req == IMSG_FLEET_HOSTS ? ibuf_open(0) :
	    fleet_scope_compose(&sc);
	l->req = reply_wait(c, CTL_WAIT_FLEET, l, list_drop);
	if (fleet_request(req, b, list_done, l) == -1) {
		reply_wait_take(l->req, CTL_WAIT_FLEET, NULL);
		reply_fail(c, "factory-fleet is not ready, try again");
		json_decref(l->rows);
		free(l);
	}
}

/*
 * factoryctl cordon, uncordon, drain, pause and resume: root's alone,
 * fleet-wide, said to the database; the answer is the new state.
 */
struct fleet_setreq {
	uint32_t	 req;
	char		 verb[16];
	char		 name[FLEET_NAME_MAX];
};

static void
setstate_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result	*r = ans;
	struct fleet_setreq		*s = arg;
	struct ctl_conn			*c;

	if ((c = reply_wait_take(s->req, CTL_WAIT_FLEET, NULL)) == NULL)
		;	/* its client left: done all the same */
	else if (r == NULL)
		reply_fail(c, "%s: factory-fleet was lost before it "
		    "answered: it may be done", s->verb);
	else if (r->code != FLEET_OK)
		reply_fail(c, "%s: %s: %s", s->verb, fleet_code_name(r->code),
		    r->text);
	else
		reply_obj(c, json_pack("{s:s, s:s, s:s}", "verb", s->verb,
		    "name", s->name[0] != '\0' ? s->name : "*", "answer",
		    r->text));
	if (r != NULL && r->code == FLEET_OK)
		log_info("fleet: %s %s: %s", s->verb, s->name[0] != '\0' ?
		    s->name : "every tenant", r->text);
	free(s);
}

void
fleet_ctl_state(struct ctl_conn *c, struct imsg *imsg)
{
	static const struct {
		const char	*verb;
		uint8_t		 what, state;
	} verbs[] = {
		{ "cordon",	FLEET_SET_HOST,	 FLEET_CORDONED },
		{ "uncordon",	FLEET_SET_HOST,	 FLEET_ACTIVE },
		{ "drain",	FLEET_SET_HOST,	 FLEET_DRAINING },
		{ "pause",	FLEET_SET_PAUSE, 1 },
		{ "resume",	FLEET_SET_PAUSE, 0 },
	};
	struct fleet_setstate	 st;
	struct fleet_setreq	*s;
	struct ibuf		 ib;
	char			 verb[16], secs[16];
	const char		*errstr;
	size_t			 i;

	memset(&st, 0, sizeof(st));
	/* pause and resume: a tenant, or "*", every one; never "". */
	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, verb, sizeof(verb)) == -1 ||
	    ibuf_get_string(&ib, st.name, sizeof(st.name)) == -1 ||
	    ibuf_get_string(&ib, st.note, sizeof(st.note)) == -1 ||
	    ibuf_get_string(&ib, secs, sizeof(secs)) == -1 ||
	    ibuf_size(&ib) != 0) {
		reply_fail(c, "fleet: a bad request");
		return;
	}
	for (i = 0; i < (sizeof(verbs) / sizeof(verbs[0])); i++)
		if (strcmp(verbs[i].verb, verb) == 0)
			break;
	if (i == (sizeof(verbs) / sizeof(verbs[0]))) {
		reply_fail(c, "fleet: no such verb");
		return;
	}
	if (!env->conf->fleet.enabled) {
		reply_fail(c, "%s: this factoryd has no fleet:", verb);
		return;
	}
	if (c->uid != 0) {
		reply_fail(c, "%s: refused: only root changes the fleet's "
		    "hosts and tenants", verb);
		return;
	}
	st.what = verbs[i].what;
	st.state = verbs[i].state;
	if (st.what == FLEET_SET_PAUSE && strcmp(st.name, "*") == 0)
		st.name[0] = '\0';
	else if (st.name[0] == '\0') {
		reply_fail(c, "%s: no host or tenant named", verb);
		return;
	}
	st.deadline_s = strtonum(secs, 0, FLEET_DRAIN_MAX, &errstr);
	if (errstr != NULL || (st.what == FLEET_SET_HOST &&
	    !fleet_valid_name(st.name)) || (st.name[0] != '\0' &&
	    !fleet_valid_name(st.name)) || !fleet_valid_text(st.note)) {
		reply_fail(c, "%s: a bad host, tenant, note or deadline", verb);
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal(NULL);
	strlcpy(s->verb, verb, sizeof(s->verb));
	strlcpy(s->name, st.name, sizeof(s->name));
	s->req = reply_wait(c, CTL_WAIT_FLEET, NULL, NULL);
	if (fleet_request(IMSG_FLEET_SETSTATE, fleet_setstate_compose(&st),
	    setstate_done, s) == -1) {
		reply_wait_take(s->req, CTL_WAIT_FLEET, NULL);
		reply_fail(c, "%s: factory-fleet is not ready: not done, try "
		    "again", verb);
		free(s);
	}
}

/*
 * factoryctl cancel of an attempt not on this host: the fleet's queue
 * ends it if it still waits, or asks its owner (whose renewal hears
 * it); only an attempt of a tenant the caller acts for, or root's.
 */
struct fleet_cancelreq {
	uint32_t	 req;
	char		 id[ATTEMPT_ID_MAX];
};

static void
cancel_done(void *arg, uint32_t type, const void *ans)
{
	const struct fleet_result	*r = ans;
	struct fleet_cancelreq		*k = arg;
	struct ctl_conn			*c;

	if ((c = reply_wait_take(k->req, CTL_WAIT_FLEET, NULL)) == NULL)
		;	/* its client left */
	else if (r == NULL)
		reply_fail(c, "cancel: factory-fleet was lost before it "
		    "answered: %s may be cancelled", k->id);
	else if (r->code != FLEET_OK)
		reply_fail(c, "cancel: %s: %s", k->id, r->text);
	else
		reply_obj(c, json_pack("{s:s, s:s}", "id", k->id, "fleet",
		    strcmp(r->text, "cancelled") == 0 ? "cancelled" :
		    "asked of its host"));
	if (r != NULL && r->code == FLEET_OK)
		log_info("fleet: %s: cancel %s", k->id, r->text);
	free(k);
}

void
fleet_ctl_cancel(struct ctl_conn *c, const char *id)
{
	const struct conf_fleet	*f = &env->conf->fleet;
	struct fleet_cancel	 kc;
	struct fleet_cancelreq	*k;
	char			 why[128];
	size_t			 i;

	memset(&kc, 0, sizeof(kc));
	strlcpy(kc.id, id, sizeof(kc.id));
	kc.all = c->uid == 0;
	for (i = 0; i < f->ntenants && kc.ntenants < FLEET_TENANTS_MAX; i++)
		if (tenant_of(c, f->tenants[i].name, why, sizeof(why)) != NULL)
			strlcpy(kc.tenants[kc.ntenants++], f->tenants[i].name,
			    sizeof(kc.tenants[0]));
	if (!kc.all && kc.ntenants == 0) {
		reply_fail(c, "cancel: refused: uid %u acts for no tenant",
		    (unsigned)c->uid);
		return;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL)
		fatal(NULL);
	strlcpy(k->id, id, sizeof(k->id));
	k->req = reply_wait(c, CTL_WAIT_FLEET, NULL, NULL);
	if (fleet_request(IMSG_FLEET_CANCEL, fleet_cancel_compose(&kc),
	    cancel_done, k) == -1) {
		reply_wait_take(k->req, CTL_WAIT_FLEET, NULL);
		reply_fail(c, "cancel: factory-fleet is not ready: not "
		    "cancelled, try again");
		free(k);
	}
}
