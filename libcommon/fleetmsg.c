/*
 * The parent <-> factory-fleet messages (fleetmsg.h), composed and
 * decoded field by field with wire.c.  Every string is checked for the
 * shape its field allows, on both sides: a name is letters, digits and
 * ".-_", an attempt id "a-" and lower case, digits and '-', text is
 * printable ASCII.  Numbers are checked against their ranges.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetmsg.h"
#include "wire.h"

static const char *const fleet_states[FLEET_NSTATES] = {
	"queued", "claimed", "running", "publishing", "done", "failed",
	"cancelled", "dead", "adoptable"
};
static const char *const fleet_hstates[FLEET_NHSTATES] = {
	"active", "cordoned", "draining", "gone"
};
static const char *const fleet_codes[FLEET_NCODES] = {
	"ok", "none", "superseded", "refused", "error"
};

const char *
fleet_state_name(int s)
{
	return (s >= 0 && s < FLEET_NSTATES ? fleet_states[s] : "?");
}

int
fleet_state_byname(const char *name)
{
	int	 i;

	for (i = 0; i < FLEET_NSTATES; i++)
		if (strcmp(fleet_states[i], name) == 0)
			return (i);
	return (-1);
}

const char *
fleet_hstate_name(int s)
{
	return (s >= 0 && s < FLEET_NHSTATES ? fleet_hstates[s] : "?");
}

int
fleet_hstate_byname(const char *name)
{
	int	 i;

	for (i = 0; i < FLEET_NHSTATES; i++)
		if (strcmp(fleet_hstates[i], name) == 0)
			return (i);
	return (-1);
}

const char *
fleet_code_name(int c)
{
	return (c >= 0 && c < FLEET_NCODES ? fleet_codes[c] : "?");
}

/*
 * claimed -> running -> publishing, any of them to an end, and claimed
 * or running back to the queue (handed back, retried after a backoff).
 * An attempt publishing is never queued again.
 */
int
fleet_transition_ok(int from, int to)
{
	switch (from) {
	case FLEET_CLAIMED:
		return (to == FLEET_RUNNING || to == FLEET_PUBLISHING ||
		    to == FLEET_QUEUED || to == FLEET_DONE ||
		    to == FLEET_FAILED || to == FLEET_CANCELLED);
	case FLEET_RUNNING:
		return (to == FLEET_PUBLISHING || to == FLEET_QUEUED ||
		    to == FLEET_DONE || to == FLEET_FAILED ||
		    to == FLEET_CANCELLED);
	case FLEET_PUBLISHING:
		return (to == FLEET_DONE || to == FLEET_FAILED);
	}
	return (0);
}

int
fleet_valid_name(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n == 0 || n >= FLEET_NAME_MAX || s[0] == '.' || s[0] == '-')
		return (0);
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '.' || s[i] == '-' || s[i] == '_'))
			return (0);
	return (1);
}

int
fleet_valid_id(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n < 3 || n >= ATTEMPT_ID_MAX || s[0] != 'a' || s[1] != '-')
		return (0);
	for (i = 2; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return (0);
	return (1);
}

int
fleet_valid_key(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n >= FLEET_KEY_MAX)
		return (0);
	for (i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return (0);
	return (1);
}

int
fleet_valid_digest(const char *s)
{
	size_t	 i;

	if (strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
		return (0);
	for (i = 7; i < 7 + 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (1);
}

int
fleet_valid_text(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n >= FLEET_TEXT_MAX)
		return (0);
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return (0);
	return (1);
}

/* A manifest: text, no NUL (the length says), at most the bound. */
static int
fleet_valid_manifest(const char *s)
{
	return (s != NULL && strlen(s) <= FLEET_MANIFEST_MAX);
}

int
fleet_valid_commit(const char *s)
{
	size_t	 i;

	if (s[0] == '\0')
		return (1);
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (i == 40);
}

int
fleet_valid_forge(const char *s)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (i == 0 || i == 64);
}

int
fleet_valid_pin(const char *s)
{
	size_t	 i;

	if (s == NULL)
		return (1);
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '+' || s[i] == '/' || s[i] == '='))
			return (0);
	return (i < FLEET_PIN_MAX && i % 4 == 0);
}

/*
 * An ADOPT answer but its pin and manifest, at most: five lengths, the
 * epoch, the id, the host and the commit.
 */
#define FLEET_ADOPT_FIXED	(5 * 4 + 8 + ATTEMPT_ID_MAX + FLEET_NAME_MAX + \
				 FLEET_HEX40)

int
fleet_adopt_fits(size_t pinlen, size_t manifestlen)
{
	return (pinlen < FLEET_PIN_MAX && manifestlen <= FLEET_MANIFEST_MAX &&
	    FLEET_ADOPT_FIXED + pinlen + manifestlen <= FACTORY_MAXIMSG -
	    IMSG_HEADER_SIZE);
}

static struct ibuf *
fleet_open(size_t hint)
{
	return (ibuf_dynamic(hint, FACTORY_MAXIMSG));
}

static struct ibuf *
fleet_close(struct ibuf *b, int bad)
{
	if (bad) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

struct fleet_claimref *
fleet_claimref(const char *id, uint64_t epoch)
{
	struct fleet_claimref	*ref;

	if ((ref = calloc(1, sizeof(*ref))) == NULL)
		return (NULL);
	strlcpy(ref->id, id, sizeof(ref->id));
	ref->epoch = epoch;
	return (ref);
}

/* A host's repositories and their forges, by position (HELLO, SERVES). */
static int
served_add(struct ibuf *b, uint32_t n, const char repos[][REPO_NAME_MAX],
    const char forges[][FLEET_FORGE_MAX])
{
	uint32_t	 i;
	int		 bad;

	bad = ibuf_add_n32(b, n);
	for (i = 0; i < n; i++)
		bad |= m_add_str(b, repos[i]) | m_add_str(b, forges[i]);
	return (bad);
}

struct ibuf *
fleet_hello_compose(const struct fleet_hello *h)
{
	struct ibuf	*b;
	uint32_t	 i;
	int		 bad = 0;

	if (h->conninfo[0] == '\0' ||
	    memchr(h->conninfo, '\0', sizeof(h->conninfo)) == NULL ||
	    !fleet_valid_name(h->host) || h->nrepos > FLEET_REPOS_MAX ||
	    h->slots == 0 || h->slots > FLEET_CAP_MAX ||
	    h->lease_ms == 0 || h->lease_ms > FLEET_MS_MAX ||
	    h->deadline_ms == 0 || h->deadline_ms > FLEET_MS_MAX ||
	    h->adopt_after_ms > FLEET_MS_MAX)
		return (NULL);
	for (i = 0; i < h->nrepos; i++)
		if (!fleet_valid_name(h->repos[i]) ||
		    !fleet_valid_forge(h->forges[i]))
			return (NULL);
	if ((b = fleet_open(256)) == NULL)
		return (NULL);
	bad |= m_add_str(b, h->conninfo) | m_add_str(b, h->host);
	bad |= ibuf_add_n64(b, h->epoch) | ibuf_add_n32(b, h->slots);
	bad |= ibuf_add_n32(b, h->lease_ms) | ibuf_add_n32(b, h->deadline_ms);
	bad |= ibuf_add_n32(b, h->adopt_after_ms);
	bad |= served_add(b, h->nrepos, h->repos, h->forges);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_serves_compose(const struct fleet_serves *v)
{
	struct ibuf	*b;
	uint32_t	 i;

	if (v->nrepos > FLEET_REPOS_MAX)
		return (NULL);
	for (i = 0; i < v->nrepos; i++)
		if (!fleet_valid_name(v->repos[i]) ||
		    !fleet_valid_forge(v->forges[i]))
			return (NULL);
	if ((b = fleet_open(256)) == NULL)
		return (NULL);
	return (fleet_close(b, served_add(b, v->nrepos, v->repos, v->forges)));
}

struct ibuf *
fleet_tenant_compose(const struct fleet_tenant *t)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_name(t->name) || t->weight == 0 ||
	    t->weight > FLEET_WEIGHT_MAX || t->max_running > FLEET_CAP_MAX ||
	    t->max_queued > FLEET_CAP_MAX || (t->paused != 0 && t->paused != 1))
		return (NULL);
	if ((b = fleet_open(64)) == NULL)
		return (NULL);
	bad |= m_add_str(b, t->name) | ibuf_add_n32(b, t->weight);
	bad |= ibuf_add_n32(b, t->max_running) | ibuf_add_n32(b, t->max_queued);
	bad |= ibuf_add_n8(b, t->paused);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_submit_compose(const struct fleet_submit *s)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_name(s->tenant) || s->class >= FLEET_NCLASSES ||
	    !fleet_valid_name(s->repo) || !fleet_valid_key(s->key) ||
	    !fleet_valid_digest(s->digest) || s->max_claims == 0 ||
	    s->max_claims > FLEET_CLAIMS_MAX ||
	    !fleet_valid_manifest(s->manifest))
		return (NULL);
	if ((b = fleet_open(256 + strlen(s->manifest))) == NULL)
		return (NULL);
	bad |= m_add_str(b, s->tenant) | ibuf_add_n8(b, s->class);
	bad |= m_add_str(b, s->repo) | m_add_str(b, s->key);
	bad |= m_add_str(b, s->digest) | ibuf_add_n32(b, s->max_claims);
	bad |= m_add_str(b, s->manifest);
	return (fleet_close(b, bad));
}

static int
use_add(struct ibuf *b, const struct fleet_use *u)
{
	return (ibuf_add_n64(b, u->cpu_ms) | ibuf_add_n64(b, u->mem_peak) |
	    ibuf_add_n64(b, u->wall_ms) | ibuf_add_n64(b, u->tokens) |
	    ibuf_add_n64(b, u->cost_uusd));
}

struct ibuf *
fleet_write_compose(const struct fleet_write *w)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_id(w->id) || w->from >= FLEET_NSTATES ||
	    w->to >= FLEET_NSTATES || !fleet_valid_text(w->reason) ||
	    !fleet_valid_commit(w->commit) || !fleet_valid_pin(w->pin) ||
	    !fleet_valid_forge(w->forge) ||
	    ((w->commit[0] != '\0' || w->pin != NULL) &&
	    w->to != FLEET_PUBLISHING) || ((w->pin != NULL) !=
	    (w->forge[0] != '\0')) || (w->pin != NULL &&
	    w->commit[0] == '\0'))
		return (NULL);
	if ((b = fleet_open(128 + (w->pin != NULL ? strlen(w->pin) : 0))) ==
	    NULL)
		return (NULL);
	bad |= m_add_str(b, w->id) | ibuf_add_n64(b, w->epoch);
	bad |= ibuf_add_n8(b, w->from) | ibuf_add_n8(b, w->to);
	bad |= m_add_str(b, w->reason) | use_add(b, &w->use);
	bad |= m_add_str(b, w->commit);
	bad |= m_add_str(b, w->pin != NULL ? w->pin : "");
	bad |= m_add_str(b, w->forge);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_adopt_compose(const struct fleet_adopt *a)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_id(a->id) || a->epoch == 0 ||
	    !fleet_valid_name(a->host) || strlen(a->commit) != 40 ||
	    !fleet_valid_commit(a->commit) || a->pin == NULL ||
	    a->pin[0] == '\0' || !fleet_valid_pin(a->pin) ||
	    !fleet_valid_manifest(a->manifest) ||
	    !fleet_adopt_fits(strlen(a->pin), strlen(a->manifest)))
		return (NULL);
	if ((b = fleet_open(FLEET_ADOPT_FIXED + strlen(a->pin) +
	    strlen(a->manifest))) == NULL)
		return (NULL);
	bad |= m_add_str(b, a->id) | ibuf_add_n64(b, a->epoch);
	bad |= m_add_str(b, a->host) | m_add_str(b, a->commit);
	bad |= m_add_str(b, a->pin) | m_add_str(b, a->manifest);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_gaugerow_compose(const struct fleet_gaugerow *g)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_name(g->tenant) || g->class >= FLEET_NCLASSES ||
	    g->queued == 0 || g->queued > FLEET_CAP_MAX ||
	    g->oldest_ms > FLEET_AGE_MAX)
		return (NULL);
	if ((b = fleet_open(96)) == NULL)
		return (NULL);
	bad |= m_add_str(b, g->tenant) | ibuf_add_n8(b, g->class);
	bad |= ibuf_add_n32(b, g->queued) | ibuf_add_n64(b, g->oldest_ms);
	return (fleet_close(b, bad));
}

void
fleet_write_free(struct fleet_write *w)
{
	free(w->pin);
	w->pin = NULL;
}

void
fleet_adopt_free(struct fleet_adopt *a)
{
	free(a->pin);
	free(a->manifest);
	a->pin = a->manifest = NULL;
}

struct ibuf *
fleet_ready_compose(const struct fleet_ready *r)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (r->state >= FLEET_NHSTATES || r->epoch == 0)
		return (NULL);
	if ((b = fleet_open(16)) == NULL)
		return (NULL);
	bad |= ibuf_add_n64(b, r->epoch) | ibuf_add_n32(b, r->schema);
	bad |= ibuf_add_n8(b, r->state);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_claimed_compose(const struct fleet_claimed *c)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_id(c->id) || !fleet_valid_name(c->tenant) ||
	    c->class >= FLEET_NCLASSES || !fleet_valid_name(c->repo) ||
	    c->epoch == 0 || c->claims == 0 || c->claims > FLEET_CLAIMS_MAX ||
	    !fleet_valid_digest(c->digest) ||
	    !fleet_valid_manifest(c->manifest))
		return (NULL);
	if ((b = fleet_open(256 + strlen(c->manifest))) == NULL)
		return (NULL);
	bad |= m_add_str(b, c->id) | m_add_str(b, c->tenant);
	bad |= ibuf_add_n8(b, c->class) | m_add_str(b, c->repo);
	bad |= ibuf_add_n64(b, c->epoch) | ibuf_add_n32(b, c->claims);
	bad |= m_add_str(b, c->digest) | m_add_str(b, c->manifest);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_submitted_compose(const struct fleet_submitted *s)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_id(s->id) || (s->created != 0 && s->created != 1))
		return (NULL);
	if ((b = fleet_open(48)) == NULL)
		return (NULL);
	bad |= m_add_str(b, s->id) | ibuf_add_n8(b, s->created);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_result_compose(const struct fleet_result *r)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (r->code >= FLEET_NCODES || !fleet_valid_text(r->text))
		return (NULL);
	if ((b = fleet_open(64)) == NULL)
		return (NULL);
	bad |= ibuf_add_n8(b, r->code) | m_add_str(b, r->text);
	return (fleet_close(b, bad));
}

/* The payload of imsg under the reader m. */
struct ibuf *
fleet_hostrow_compose(const struct fleet_hostrow *h)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_name(h->host) || h->state >= FLEET_NHSTATES ||
	    h->slots > FLEET_CAP_MAX || h->running > FLEET_CAP_MAX ||
	    (h->expired != 0 && h->expired != 1))
		return (NULL);
	if ((b = fleet_open(96)) == NULL)
		return (NULL);
	bad |= m_add_str(b, h->host) | ibuf_add_n64(b, h->epoch) |
	    ibuf_add_n8(b, h->state) | ibuf_add_n32(b, h->slots) |
	    ibuf_add_n32(b, h->running) | ibuf_add_n64(b, h->heartbeat_ms) |
	    ibuf_add_n8(b, h->expired);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_queuerow_compose(const struct fleet_queuerow *q)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_id(q->id) || !fleet_valid_name(q->tenant) ||
	    q->class >= FLEET_NCLASSES || !fleet_valid_name(q->repo) ||
	    !fleet_valid_text(q->why))
		return (NULL);
	if ((b = fleet_open(160)) == NULL)
		return (NULL);
	bad |= m_add_str(b, q->id) | m_add_str(b, q->tenant) |
	    ibuf_add_n8(b, q->class) | m_add_str(b, q->repo) |
	    ibuf_add_n64(b, q->age_ms) | m_add_str(b, q->why);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_rescued_compose(const struct fleet_rescued *r)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (r->requeued > FLEET_ROWS_MAX || r->dead > FLEET_ROWS_MAX ||
	    r->adoptable > FLEET_ROWS_MAX)
		return (NULL);
	if ((b = fleet_open(16)) == NULL)
		return (NULL);
	bad |= ibuf_add_n32(b, r->requeued) | ibuf_add_n32(b, r->dead) |
	    ibuf_add_n32(b, r->adoptable);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_setstate_compose(const struct fleet_setstate *s)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (s->what > FLEET_SET_PAUSE || (s->what == FLEET_SET_HOST &&
	    (!fleet_valid_name(s->name) || s->state >= FLEET_NHSTATES ||
	    s->state == FLEET_GONE)) || (s->what == FLEET_SET_PAUSE &&
	    ((s->name[0] != '\0' && !fleet_valid_name(s->name)) ||
	    s->state > 1)) || s->deadline_s > FLEET_DRAIN_MAX ||
	    !fleet_valid_text(s->note))
		return (NULL);
	if ((b = fleet_open(128)) == NULL)
		return (NULL);
	bad |= ibuf_add_n8(b, s->what) | m_add_str(b, s->name) |
	    ibuf_add_n8(b, s->state) | ibuf_add_n32(b, s->deadline_s) |
	    m_add_str(b, s->note);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_cancel_compose(const struct fleet_cancel *k)
{
	struct ibuf	*b;
	uint32_t	 i;
	int		 bad = 0;

	if (!fleet_valid_id(k->id) || (k->all != 0 && k->all != 1) ||
	    k->ntenants > FLEET_TENANTS_MAX)
		return (NULL);
	for (i = 0; i < k->ntenants; i++)
		if (!fleet_valid_name(k->tenants[i]))
			return (NULL);
	if ((b = fleet_open(64 + k->ntenants * 16)) == NULL)
		return (NULL);
	bad |= m_add_str(b, k->id) | ibuf_add_n8(b, k->all) |
	    ibuf_add_n32(b, k->ntenants);
	for (i = 0; i < k->ntenants; i++)
		bad |= m_add_str(b, k->tenants[i]);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_tenantrow_compose(const struct fleet_tenantrow *t)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_name(t->name) || t->weight < 1 ||
	    t->weight > FLEET_WEIGHT_MAX || t->max_running > FLEET_CAP_MAX ||
	    t->max_queued > FLEET_CAP_MAX || t->running > FLEET_CAP_MAX ||
	    t->queued > FLEET_CAP_MAX || (t->paused != 0 && t->paused != 1) ||
	    (t->held != 0 && t->held != 1) || !fleet_valid_text(t->note))
		return (NULL);
	if ((b = fleet_open(128)) == NULL)
		return (NULL);
	bad |= m_add_str(b, t->name) | ibuf_add_n32(b, t->weight) |
	    ibuf_add_n32(b, t->max_running) | ibuf_add_n32(b, t->max_queued) |
	    ibuf_add_n32(b, t->running) | ibuf_add_n32(b, t->queued) |
	    ibuf_add_n8(b, t->paused) | ibuf_add_n8(b, t->held) |
	    m_add_str(b, t->note);
	return (fleet_close(b, bad));
}

struct ibuf *
fleet_usagerow_compose(const struct fleet_usagerow *u)
{
	struct ibuf	*b;
	int		 bad = 0;

	if (!fleet_valid_name(u->tenant) || !fleet_valid_name(u->host))
		return (NULL);
	if ((b = fleet_open(128)) == NULL)
		return (NULL);
	bad |= m_add_str(b, u->tenant) | m_add_str(b, u->host) |
	    ibuf_add_n32(b, u->attempts) | use_add(b, &u->use);
	return (fleet_close(b, bad));
}

static void
fleet_mopen(struct mread *m, const char *name, struct imsg *imsg,
    char *err, size_t errlen)
{
	struct ibuf	 ib;

	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(m, name, ibuf_data(&ib), ibuf_size(&ib), err, errlen);
}

/* A string of the given shape; m_fail names the field otherwise. */
static int
fleet_get(struct mread *m, const char *field, char *s, size_t size,
    int (*valid)(const char *))
{
	if (m_get_str(m, field, s, size) == -1)
		return (-1);
	if (valid != NULL && !valid(s))
		return (m_fail(m, "field %s: not a valid value", field));
	return (0);
}

static int
fleet_range(struct mread *m, const char *field, uint64_t v, uint64_t lo,
    uint64_t hi)
{
	if (m->bad)
		return (-1);
	if (v < lo || v > hi)
		return (m_fail(m, "field %s: %llu out of range", field,
		    (unsigned long long)v));
	return (0);
}

static int
use_get(struct mread *m, struct fleet_use *u)
{
	m_get_n64(m, "cpu_ms", &u->cpu_ms);
	m_get_n64(m, "mem_peak", &u->mem_peak);
	m_get_n64(m, "wall_ms", &u->wall_ms);
	m_get_n64(m, "tokens", &u->tokens);
	m_get_n64(m, "cost_uusd", &u->cost_uusd);
	return (m->bad ? -1 : 0);
}

static void
served_get(struct mread *m, uint32_t *n, char repos[][REPO_NAME_MAX],
    char forges[][FLEET_FORGE_MAX])
{
	uint32_t	 i;

	m_get_n32(m, "nrepos", n);
	fleet_range(m, "nrepos", *n, 0, FLEET_REPOS_MAX);
	for (i = 0; !m->bad && i < *n; i++) {
		fleet_get(m, "repo", repos[i], REPO_NAME_MAX,
		    fleet_valid_name);
		fleet_get(m, "forge", forges[i], FLEET_FORGE_MAX,
		    fleet_valid_forge);
	}
}

int
fleet_hello_decode(struct imsg *imsg, struct fleet_hello *h, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(h, 0, sizeof(*h));
	fleet_mopen(&m, "FLEET_HELLO", imsg, err, errlen);
	m_get_str(&m, "conninfo", h->conninfo, sizeof(h->conninfo));
	if (!m.bad && h->conninfo[0] == '\0')
		m_fail(&m, "field conninfo: empty");
	fleet_get(&m, "host", h->host, sizeof(h->host), fleet_valid_name);
	m_get_n64(&m, "epoch", &h->epoch);
	m_get_n32(&m, "slots", &h->slots);
	fleet_range(&m, "slots", h->slots, 1, FLEET_CAP_MAX);
	m_get_n32(&m, "lease_ms", &h->lease_ms);
	fleet_range(&m, "lease_ms", h->lease_ms, 1, FLEET_MS_MAX);
	m_get_n32(&m, "deadline_ms", &h->deadline_ms);
	fleet_range(&m, "deadline_ms", h->deadline_ms, 1, FLEET_MS_MAX);
	m_get_n32(&m, "adopt_after_ms", &h->adopt_after_ms);
	fleet_range(&m, "adopt_after_ms", h->adopt_after_ms, 0, FLEET_MS_MAX);
	served_get(&m, &h->nrepos, h->repos, h->forges);
	return (m_end(&m));
}

int
fleet_serves_decode(struct imsg *imsg, struct fleet_serves *v, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(v, 0, sizeof(*v));
	fleet_mopen(&m, "FLEET_SERVES", imsg, err, errlen);
	served_get(&m, &v->nrepos, v->repos, v->forges);
	return (m_end(&m));
}

int
fleet_tenant_decode(struct imsg *imsg, struct fleet_tenant *t, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(t, 0, sizeof(*t));
	fleet_mopen(&m, "FLEET_TENANT", imsg, err, errlen);
	fleet_get(&m, "name", t->name, sizeof(t->name), fleet_valid_name);
	m_get_n32(&m, "weight", &t->weight);
	fleet_range(&m, "weight", t->weight, 1, FLEET_WEIGHT_MAX);
	m_get_n32(&m, "max_running", &t->max_running);
	fleet_range(&m, "max_running", t->max_running, 0, FLEET_CAP_MAX);
	m_get_n32(&m, "max_queued", &t->max_queued);
	fleet_range(&m, "max_queued", t->max_queued, 0, FLEET_CAP_MAX);
	m_get_bool(&m, "paused", &t->paused);
	return (m_end(&m));
}

int
fleet_submit_decode(struct imsg *imsg, struct fleet_submit *s, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(s, 0, sizeof(*s));
	fleet_mopen(&m, "FLEET_SUBMIT", imsg, err, errlen);
	fleet_get(&m, "tenant", s->tenant, sizeof(s->tenant),
	    fleet_valid_name);
	m_get_n8(&m, "class", &s->class);
	fleet_range(&m, "class", s->class, 0, FLEET_NCLASSES - 1);
	fleet_get(&m, "repo", s->repo, sizeof(s->repo), fleet_valid_name);
	fleet_get(&m, "key", s->key, sizeof(s->key), fleet_valid_key);
	fleet_get(&m, "digest", s->digest, sizeof(s->digest),
	    fleet_valid_digest);
	m_get_n32(&m, "max_claims", &s->max_claims);
	fleet_range(&m, "max_claims", s->max_claims, 1, FLEET_CLAIMS_MAX);
	m_get_strdup(&m, "manifest", FLEET_MANIFEST_MAX, &s->manifest);
	if (m_end(&m) == -1) {
		free(s->manifest);
		s->manifest = NULL;
		return (-1);
	}
	return (0);
}

int
fleet_write_decode(struct imsg *imsg, struct fleet_write *w, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(w, 0, sizeof(*w));
	fleet_mopen(&m, "FLEET_WRITE", imsg, err, errlen);
	fleet_get(&m, "id", w->id, sizeof(w->id), fleet_valid_id);
	m_get_n64(&m, "epoch", &w->epoch);
	m_get_n8(&m, "from", &w->from);
	fleet_range(&m, "from", w->from, 0, FLEET_NSTATES - 1);
	m_get_n8(&m, "to", &w->to);
	fleet_range(&m, "to", w->to, 0, FLEET_NSTATES - 1);
	fleet_get(&m, "reason", w->reason, sizeof(w->reason),
	    fleet_valid_text);
	use_get(&m, &w->use);
	fleet_get(&m, "commit", w->commit, sizeof(w->commit),
	    fleet_valid_commit);
	m_get_strdup(&m, "pin", FLEET_PIN_MAX, &w->pin);
	if (!m.bad && !fleet_valid_pin(w->pin))
		m_fail(&m, "field pin: not base64");
	if (!m.bad && w->pin[0] == '\0') {
		free(w->pin);
		w->pin = NULL;
	}
	if (!m.bad && (w->commit[0] != '\0' || w->pin != NULL) &&
	    w->to != FLEET_PUBLISHING)
		m_fail(&m, "field commit: a pin of a write to %s",
		    fleet_state_name(w->to));
	if (!m.bad && w->pin != NULL && w->commit[0] == '\0')
		m_fail(&m, "field pin: without its commit");
	fleet_get(&m, "forge", w->forge, sizeof(w->forge), fleet_valid_forge);
	if (!m.bad && (w->pin != NULL) != (w->forge[0] != '\0'))
		m_fail(&m, "field forge: a pin has one, nothing else");
	if (m_end(&m) == -1) {
		fleet_write_free(w);
		return (-1);
	}
	return (0);
}

int
fleet_adopt_decode(struct imsg *imsg, struct fleet_adopt *a, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(a, 0, sizeof(*a));
	fleet_mopen(&m, "FLEET_ADOPTED", imsg, err, errlen);
	fleet_get(&m, "id", a->id, sizeof(a->id), fleet_valid_id);
	m_get_n64(&m, "epoch", &a->epoch);
	fleet_range(&m, "epoch", a->epoch, 1, INT64_MAX);
	fleet_get(&m, "host", a->host, sizeof(a->host), fleet_valid_name);
	fleet_get(&m, "commit", a->commit, sizeof(a->commit),
	    fleet_valid_commit);
	if (!m.bad && a->commit[0] == '\0')
		m_fail(&m, "field commit: empty");
	m_get_strdup(&m, "pin", FLEET_PIN_MAX, &a->pin);
	if (!m.bad && (!fleet_valid_pin(a->pin) || a->pin[0] == '\0'))
		m_fail(&m, "field pin: not base64");
	m_get_strdup(&m, "manifest", FLEET_MANIFEST_MAX, &a->manifest);
	if (!m.bad && !fleet_adopt_fits(strlen(a->pin), strlen(a->manifest)))
		m_fail(&m, "field manifest: with the pin, more than an "
		    "answer holds");
	if (m_end(&m) == -1) {
		fleet_adopt_free(a);
		return (-1);
	}
	return (0);
}

int
fleet_gaugerow_decode(struct imsg *imsg, struct fleet_gaugerow *g,
    char *err, size_t errlen)
{
	struct mread	 m;

	memset(g, 0, sizeof(*g));
	fleet_mopen(&m, "FLEET_GAUGEROW", imsg, err, errlen);
	fleet_get(&m, "tenant", g->tenant, sizeof(g->tenant),
	    fleet_valid_name);
	m_get_n8(&m, "class", &g->class);
	fleet_range(&m, "class", g->class, 0, FLEET_NCLASSES - 1);
	m_get_n32(&m, "queued", &g->queued);
	fleet_range(&m, "queued", g->queued, 1, FLEET_CAP_MAX);
	m_get_n64(&m, "oldest_ms", &g->oldest_ms);
	fleet_range(&m, "oldest_ms", g->oldest_ms, 0, FLEET_AGE_MAX);
	return (m_end(&m));
}

int
fleet_ready_decode(struct imsg *imsg, struct fleet_ready *r, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(r, 0, sizeof(*r));
	fleet_mopen(&m, "FLEET_READY", imsg, err, errlen);
	m_get_n64(&m, "epoch", &r->epoch);
	fleet_range(&m, "epoch", r->epoch, 1, INT64_MAX);
	m_get_n32(&m, "schema", &r->schema);
	m_get_n8(&m, "state", &r->state);
	fleet_range(&m, "state", r->state, 0, FLEET_NHSTATES - 1);
	return (m_end(&m));
}

int
fleet_claimed_decode(struct imsg *imsg, struct fleet_claimed *c, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(c, 0, sizeof(*c));
	fleet_mopen(&m, "FLEET_CLAIMED", imsg, err, errlen);
	fleet_get(&m, "id", c->id, sizeof(c->id), fleet_valid_id);
	fleet_get(&m, "tenant", c->tenant, sizeof(c->tenant),
	    fleet_valid_name);
	m_get_n8(&m, "class", &c->class);
	fleet_range(&m, "class", c->class, 0, FLEET_NCLASSES - 1);
	fleet_get(&m, "repo", c->repo, sizeof(c->repo), fleet_valid_name);
	m_get_n64(&m, "epoch", &c->epoch);
	fleet_range(&m, "epoch", c->epoch, 1, INT64_MAX);
	m_get_n32(&m, "claims", &c->claims);
	fleet_range(&m, "claims", c->claims, 1, FLEET_CLAIMS_MAX);
	fleet_get(&m, "digest", c->digest, sizeof(c->digest),
	    fleet_valid_digest);
	m_get_strdup(&m, "manifest", FLEET_MANIFEST_MAX, &c->manifest);
	if (m_end(&m) == -1) {
		free(c->manifest);
		c->manifest = NULL;
		return (-1);
	}
	return (0);
}

int
fleet_submitted_decode(struct imsg *imsg, struct fleet_submitted *s,
    char *err, size_t errlen)
{
	struct mread	 m;

	memset(s, 0, sizeof(*s));
	fleet_mopen(&m, "FLEET_SUBMITTED", imsg, err, errlen);
	fleet_get(&m, "id", s->id, sizeof(s->id), fleet_valid_id);
	m_get_bool(&m, "created", &s->created);
	return (m_end(&m));
}

int
fleet_result_decode(struct imsg *imsg, struct fleet_result *r, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(r, 0, sizeof(*r));
	fleet_mopen(&m, "FLEET_RESULT", imsg, err, errlen);
	m_get_n8(&m, "code", &r->code);
	fleet_range(&m, "code", r->code, 0, FLEET_NCODES - 1);
	fleet_get(&m, "text", r->text, sizeof(r->text), fleet_valid_text);
	return (m_end(&m));
}

int
fleet_empty_decode(struct imsg *imsg, const char *name, char *err,
    size_t errlen)
{
	struct mread	 m;

	fleet_mopen(&m, name, imsg, err, errlen);
	return (m_end(&m));
}

int
fleet_hostrow_decode(struct imsg *imsg, struct fleet_hostrow *h, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(h, 0, sizeof(*h));
	fleet_mopen(&m, "FLEET_HOSTROW", imsg, err, errlen);
	fleet_get(&m, "host", h->host, sizeof(h->host), fleet_valid_name);
	m_get_n64(&m, "epoch", &h->epoch);
	m_get_n8(&m, "state", &h->state);
	fleet_range(&m, "state", h->state, 0, FLEET_NHSTATES - 1);
	m_get_n32(&m, "slots", &h->slots);
	fleet_range(&m, "slots", h->slots, 0, FLEET_CAP_MAX);
	m_get_n32(&m, "running", &h->running);
	fleet_range(&m, "running", h->running, 0, FLEET_CAP_MAX);
	m_get_n64(&m, "heartbeat_ms", &h->heartbeat_ms);
	m_get_bool(&m, "expired", &h->expired);
	return (m_end(&m));
}

int
fleet_queuerow_decode(struct imsg *imsg, struct fleet_queuerow *q, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(q, 0, sizeof(*q));
	fleet_mopen(&m, "FLEET_QUEUEROW", imsg, err, errlen);
	fleet_get(&m, "id", q->id, sizeof(q->id), fleet_valid_id);
	fleet_get(&m, "tenant", q->tenant, sizeof(q->tenant),
	    fleet_valid_name);
	m_get_n8(&m, "class", &q->class);
	fleet_range(&m, "class", q->class, 0, FLEET_NCLASSES - 1);
	fleet_get(&m, "repo", q->repo, sizeof(q->repo), fleet_valid_name);
	m_get_n64(&m, "age_ms", &q->age_ms);
	fleet_get(&m, "why", q->why, sizeof(q->why), fleet_valid_text);
	return (m_end(&m));
}

int
fleet_rescued_decode(struct imsg *imsg, struct fleet_rescued *r, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(r, 0, sizeof(*r));
	fleet_mopen(&m, "FLEET_RESCUED", imsg, err, errlen);
	m_get_n32(&m, "requeued", &r->requeued);
	fleet_range(&m, "requeued", r->requeued, 0, FLEET_ROWS_MAX);
	m_get_n32(&m, "dead", &r->dead);
	fleet_range(&m, "dead", r->dead, 0, FLEET_ROWS_MAX);
	m_get_n32(&m, "adoptable", &r->adoptable);
	fleet_range(&m, "adoptable", r->adoptable, 0, FLEET_ROWS_MAX);
	return (m_end(&m));
}

int
fleet_setstate_decode(struct imsg *imsg, struct fleet_setstate *s, char *err,
    size_t errlen)
{
	struct mread	 m;

	memset(s, 0, sizeof(*s));
	fleet_mopen(&m, "FLEET_SETSTATE", imsg, err, errlen);
	m_get_n8(&m, "what", &s->what);
	fleet_range(&m, "what", s->what, 0, FLEET_SET_PAUSE);
	m_get_str(&m, "name", s->name, sizeof(s->name));
	if (!m.bad && (s->what == FLEET_SET_HOST || s->name[0] != '\0') &&
	    !fleet_valid_name(s->name))
		m_fail(&m, "field name: not a valid value");
	m_get_n8(&m, "state", &s->state);
	if (s->what == FLEET_SET_HOST) {
		fleet_range(&m, "state", s->state, 0, FLEET_NHSTATES - 1);
		if (!m.bad && s->state == FLEET_GONE)
			m_fail(&m, "field state: gone is not an operator's");
	} else
		fleet_range(&m, "state", s->state, 0, 1);
	m_get_n32(&m, "deadline_s", &s->deadline_s);
	fleet_range(&m, "deadline_s", s->deadline_s, 0, FLEET_DRAIN_MAX);
	fleet_get(&m, "note", s->note, sizeof(s->note), fleet_valid_text);
	return (m_end(&m));
}

int
fleet_tenantrow_decode(struct imsg *imsg, struct fleet_tenantrow *t,
    char *err, size_t errlen)
{
	struct mread	 m;

	memset(t, 0, sizeof(*t));
	fleet_mopen(&m, "FLEET_TENANTROW", imsg, err, errlen);
	fleet_get(&m, "name", t->name, sizeof(t->name), fleet_valid_name);
	m_get_n32(&m, "weight", &t->weight);
	fleet_range(&m, "weight", t->weight, 1, FLEET_WEIGHT_MAX);
	m_get_n32(&m, "max_running", &t->max_running);
	fleet_range(&m, "max_running", t->max_running, 0, FLEET_CAP_MAX);
	m_get_n32(&m, "max_queued", &t->max_queued);
	fleet_range(&m, "max_queued", t->max_queued, 0, FLEET_CAP_MAX);
	m_get_n32(&m, "running", &t->running);
	fleet_range(&m, "running", t->running, 0, FLEET_CAP_MAX);
	m_get_n32(&m, "queued", &t->queued);
	fleet_range(&m, "queued", t->queued, 0, FLEET_CAP_MAX);
	m_get_bool(&m, "paused", &t->paused);
	m_get_bool(&m, "held", &t->held);
	fleet_get(&m, "note", t->note, sizeof(t->note), fleet_valid_text);
	return (m_end(&m));
}

int
fleet_usagerow_decode(struct imsg *imsg, struct fleet_usagerow *u,
    char *err, size_t errlen)
{
	struct mread	 m;

	memset(u, 0, sizeof(*u));
	fleet_mopen(&m, "FLEET_USAGEROW", imsg, err, errlen);
	fleet_get(&m, "tenant", u->tenant, sizeof(u->tenant),
	    fleet_valid_name);
	fleet_get(&m, "host", u->host, sizeof(u->host), fleet_valid_name);
	m_get_n32(&m, "attempts", &u->attempts);
	use_get(&m, &u->use);
	return (m_end(&m));
}

/* USAGE: the window, in seconds, at most a year. */
struct ibuf *
fleet_scope_compose(const struct fleet_scope *s)
{
	struct ibuf	*b;
	uint32_t	 i;
	int		 bad = 0;

	if (s->since_s > FLEET_USAGE_MAX || (s->all != 0 && s->all != 1) ||
	    s->ntenants > FLEET_TENANTS_MAX)
		return (NULL);
	for (i = 0; i < s->ntenants; i++)
		if (!fleet_valid_name(s->tenants[i]))
			return (NULL);
	if ((b = fleet_open(16 + s->ntenants * 16)) == NULL)
		return (NULL);
	bad |= ibuf_add_n32(b, s->since_s) | ibuf_add_n8(b, s->all) |
	    ibuf_add_n32(b, s->ntenants);
	for (i = 0; i < s->ntenants; i++)
		bad |= m_add_str(b, s->tenants[i]);
	return (fleet_close(b, bad));
}

int
fleet_scope_decode(struct imsg *imsg, const char *name,
    struct fleet_scope *s, char *err, size_t errlen)
{
	struct mread	 m;
	uint32_t	 i;

	memset(s, 0, sizeof(*s));
	fleet_mopen(&m, name, imsg, err, errlen);
	m_get_n32(&m, "seconds", &s->since_s);
	fleet_range(&m, "seconds", s->since_s, 0, FLEET_USAGE_MAX);
	m_get_bool(&m, "all", &s->all);
	m_get_n32(&m, "ntenants", &s->ntenants);
	fleet_range(&m, "ntenants", s->ntenants, 0, FLEET_TENANTS_MAX);
	for (i = 0; !m.bad && i < s->ntenants; i++)
		fleet_get(&m, "tenant", s->tenants[i], sizeof(s->tenants[i]),
		    fleet_valid_name);
	return (m_end(&m));
}

int
fleet_cancel_decode(struct imsg *imsg, struct fleet_cancel *k, char *err,
    size_t errlen)
{
	struct mread	 m;
	uint32_t	 i;

	memset(k, 0, sizeof(*k));
	fleet_mopen(&m, "FLEET_CANCEL", imsg, err, errlen);
	fleet_get(&m, "id", k->id, sizeof(k->id), fleet_valid_id);
	m_get_bool(&m, "all", &k->all);
	m_get_n32(&m, "ntenants", &k->ntenants);
	fleet_range(&m, "ntenants", k->ntenants, 0, FLEET_TENANTS_MAX);
	for (i = 0; !m.bad && i < k->ntenants; i++)
		fleet_get(&m, "tenant", k->tenants[i], sizeof(k->tenants[i]),
		    fleet_valid_name);
	return (m_end(&m));
}
