/*
 * The lifecycle of an attempt: the transition table, what each
 * journaled receipt means for the attempt in memory, and the replay of
 * journal records at start.  Live and replayed transitions go through
 * the same attempt_apply(), so the rebuilt state is the state we had.
 * Nothing here schedules, signs or talks to a child (attempt.c does).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "factoryd.h"
#include "fleetmsg.h"
#include "log.h"
#include "receipt.h"

static const char *state_names[AS_MAX] = {
	"queued", "provisioning", "ready", "running", "result-ready",
	"verifying", "verified", "publishing", "published", "teardown",
	"terminated", "failed", "rejected", "cancelled", "orphaned",
	"selectable", "selected"
};

/*
 * Receipt kinds, the state each leads to, and the states it may come
 * from.  AS_MAX as the target keeps the state (a fact was recorded);
 * no states (0) is only ever an attempt's first receipt.
 */
#define B(s)	(1U << (s))
#define LIVE	(B(AS_QUEUED) | B(AS_PROVISIONING) | B(AS_READY) | \
		 B(AS_RUNNING) | B(AS_RESULT_READY) | B(AS_VERIFYING) | \
		 B(AS_VERIFIED) | B(AS_PUBLISHING) | B(AS_SELECTABLE) | \
		 B(AS_SELECTED))
#define ENDED	(B(AS_PUBLISHED) | B(AS_FAILED) | B(AS_REJECTED) | \
		 B(AS_CANCELLED) | B(AS_ORPHANED))
static const struct transition transitions[] = {
	{ "submitted",		AS_QUEUED,	 0 },
	{ "allocating",		AS_PROVISIONING, B(AS_QUEUED) },
	{ "ready",		AS_READY,	 B(AS_PROVISIONING) },
	{ "running",		AS_RUNNING,	 B(AS_READY) },
	{ "exited",		AS_MAX,		 B(AS_RUNNING) },
	{ "result-ready",	AS_RESULT_READY, B(AS_RUNNING) },
	{ "verifying",		AS_VERIFYING,	 B(AS_RESULT_READY) |
						 B(AS_VERIFYING) },
	{ "validated",		AS_MAX,		 B(AS_VERIFYING) },
	{ "verdict",		AS_VERIFIED,	 B(AS_VERIFYING) },
	{ "approved",		AS_MAX,		 B(AS_VERIFIED) },
	/*
	 * A cohort's member, verified, waits for the selection; approval
	 * never applies to it.  Only the one selected publishes.
	 */
	{ "selectable",		AS_SELECTABLE,	 B(AS_VERIFIED) },
	{ "selected",		AS_SELECTED,	 B(AS_SELECTABLE) },
	/*
	 * Its publication failed: it waits again, its result kept, and
	 * the cohort may be selected again (the same member or another).
	 */
	{ "publish-failed",	AS_SELECTABLE,	 B(AS_SELECTED) |
						 B(AS_PUBLISHING) },
	{ "publishing",		AS_PUBLISHING,	 B(AS_VERIFIED) |
						 B(AS_SELECTED) },
	{ "published",		AS_PUBLISHED,	 B(AS_PUBLISHING) },
	{ "rejected",		AS_REJECTED,	 B(AS_RUNNING) |
						 B(AS_VERIFYING) },
	{ "failed",		AS_FAILED,	 LIVE },
	{ "cancelled",		AS_CANCELLED,	 LIVE },
	{ "teardown",		AS_TEARDOWN,	 ENDED | B(AS_VERIFIED) |
						 B(AS_SELECTED) },
	{ "terminated",		AS_TERMINATED,	 B(AS_TEARDOWN) },
	/* A new lease: the holder was lost, the epoch fences it off. */
	{ "lease",		AS_MAX,		 B(AS_PROVISIONING) |
						 B(AS_RUNNING) },
	/* A leftover the reconciler found, removed by its exact id. */
	{ "reaped",		AS_MAX,		 ENDED | B(AS_TEARDOWN) |
						 B(AS_TERMINATED) },
	/* A request through the model gateway, as it reported it. */
	{ "model",		AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) },
	/* An operator entered the sandbox (factoryctl shell). */
	{ "shell",		AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) },
	/* Its preview: a token asked for, taken; its health; its end. */
	{ "preview",		AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) },
	{ "preview-opened",	AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) },
	{ "preview-health",	AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) },
	{ "preview-closed",	AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) },
	/* Kept for review past its approval (approve -k). */
	{ "preview-kept",	AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) },
	/*
	 * A file an operator attached (factoryctl attach), also once it
	 * ended: what was gathered is often looked at after.
	 */
	{ "evidence",		AS_MAX,		 LIVE | ENDED | B(AS_TEARDOWN) |
						 B(AS_TERMINATED) },
	/* A fleet's attempt: the database took its outcome (fleet.c). */
	{ "fleet-sent",		AS_MAX,		 B(AS_TERMINATED) },
};
#undef B

const char *
attempt_state_name(enum attempt_state s)
{
	if (s >= AS_MAX)
		return ("unknown");
	return (state_names[s]);
}

const struct transition *
transition_find(const char *kind)
{
	size_t	 i;

	for (i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++)
		if (strcmp(transitions[i].kind, kind) == 0)
			return (&transitions[i]);
	return (NULL);
}

struct attempt *
lifecycle_find(struct attempts *list, const char *id)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, list, entry)
		if (strcmp(a->id, id) == 0)
			return (a);
	return (NULL);
}

size_t
transition_count(void)
{
	return (sizeof(transitions) / sizeof(transitions[0]));
}

const struct transition *
transition_at(size_t i)
{
	if (i >= transition_count())
		return (NULL);
	return (&transitions[i]);
}

/* May a receipt of this kind follow in state s? */
int
transition_legal(const struct transition *t, enum attempt_state s)
{
	return (s < AS_MAX && (t->from & (1U << s)) != 0);
}

/*
 * May this receipt be the attempt's next one?  A kind with no states
 * (submitted) is only ever the first receipt; any other needs one
 * before it.  Live transitions and replayed records are both checked,
 * so replay cannot rebuild a state no live run could reach.
 */
int
lifecycle_legal(const struct attempt *a, const struct transition *t)
{
	if (t->from == 0)
		return (a->nreceipts == 0);
	return (a->nreceipts > 0 && transition_legal(t, a->state));
}

struct attempt *
lifecycle_new(struct attempts *list, const char *statedir,
    const char *id)
{
	struct attempt	*a;
	int		 i;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		fatal(NULL);
	strlcpy(a->id, id, sizeof(a->id));
	a->state = AS_QUEUED;
	a->outcome = AS_MAX;
	a->exit_status = -1;
	for (i = 0; i < PART_MAX; i++)
		a->part_ms[i] = -1;
	strlcpy(a->prev, RECEIPT_ZERO_PREV, sizeof(a->prev));
	snprintf(a->dir, sizeof(a->dir), "%s/attempts/%s",
	    statedir, id);
	snprintf(a->vdir, sizeof(a->vdir), "%s/verify/%s",
	    statedir, id);
	TAILQ_INSERT_TAIL(list, a, entry);
	return (a);
}

static void
usage_from_json(struct sandbox_usage *u, json_t *o)
{
	if (o == NULL)
		return;
	u->cpu_ms = json_integer_value(json_object_get(o, "cpu_ms"));
	u->mem_peak = json_integer_value(json_object_get(o, "mem_peak"));
	u->pids_peak = json_integer_value(json_object_get(o, "pids_peak"));
	u->pids_denied = json_integer_value(json_object_get(o,
	    "pids_denied"));
	u->oom_kills = json_integer_value(json_object_get(o, "oom_kills"));
}

static void
set_reason(struct attempt *a, json_t *facts)
{
	const char	*r;

	if ((r = json_string_value(json_object_get(facts, "reason"))) !=
	    NULL) {
		free(a->reason);
		a->reason = strdup(r);
	}
}

/* "sha256:" and 64 lower-case hex digits: what the digests are. */
static int
lifecycle_digest(const char *s)
{
	return (strncmp(s, "sha256:", 7) == 0 && hex_valid(s + 7, 64));
}

/*
 * The services' uids, journaled with the agent's at allocation: two
 * for each service the manifest names (beside the agent, beside
 * validation), each an attempt uid.
 */
static void
apply_service_uids(struct attempt *a, json_t *v)
{
	json_t	*u;
	size_t	 i;

	json_array_foreach(v, i, u) {
		if (i >= 2 * MANIFEST_SERVICES ||
		    (int)i >= 2 * a->m->nservices)
			break;
		if (json_is_integer(u) && json_integer_value(u) >=
		    env->conf->attempt_uid_lo && json_integer_value(u) <=
		    env->conf->attempt_uid_hi)
			a->suid[i] = (uid_t)json_integer_value(u);
	}
}

/*
 * The agent's exit record: how long its sandbox took to start after
 * "ready" and how long it ran, as the parent measured them, and the
 * parts of the sandbox stage.  An old record without them: the
 * record's own time ends the run.
 */
static void
apply_run_times(struct attempt *a, json_t *times, uint64_t ms)
{
	static const struct {
		const char		*name;
		enum attempt_part	 part;
	} parts[] = { { "image_ms", PART_IMAGE }, { "cache_ms", PART_CACHE },
	    { "services_ms", PART_SERVICES } };
	json_t		*sb, *run, *v;
	size_t		 i;

	sb = json_object_get(times, "sandbox_ms");
	run = json_object_get(times, "run_ms");
	if (a->t[ST_SANDBOX] != 0 && json_is_integer(sb) &&
	    json_is_integer(run) && json_integer_value(sb) >= 0 &&
	    json_integer_value(run) >= 0) {
		a->t[ST_RUN] = a->t[ST_SANDBOX] + json_integer_value(sb);
		a->t[ST_COLLECT] = a->t[ST_RUN] + json_integer_value(run);
	} else
		a->t[ST_COLLECT] = ms;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if ((v = json_object_get(times, parts[i].name)) != NULL &&
		    json_is_integer(v) && json_integer_value(v) >= 0)
			a->part_ms[parts[i].part] = json_integer_value(v);
}

/*
 * The terminated receipt carries the stages as they were when it was
 * signed; its total fixes the end, so what show prints later is what
 * the receipt says.
 */
static uint64_t
terminated_at(const struct attempt *a, json_t *facts, uint64_t ms)
{
	json_t	*total;

	total = json_object_get(json_object_get(facts, "stages"), "total");
	if (a->t[ST_QUEUE] != 0 && json_is_integer(total) &&
	    json_integer_value(total) >= 0)
		return (a->t[ST_QUEUE] + json_integer_value(total));
	return (ms);
}

/*
 * A model receipt's requests, added to the attempt's totals: one, or
 * "requests" of them counted together (gateway.c, gw_tally_flush).
 */
static void
apply_spend(struct attempt *a, json_t *facts)
{
	const char	*o;
	json_t		*v;
	uint64_t	 n = 1;

	if ((v = json_object_get(facts, "requests")) != NULL &&
	    json_is_integer(v) && json_integer_value(v) > 0)
		n = (uint64_t)json_integer_value(v);
	a->spend.requests += n;
	if ((o = json_string_value(json_object_get(facts, "outcome"))) ==
	    NULL || strcmp(o, "ok") != 0)
		a->spend.refused += n;
	/* Charged its reservation: the totals say how many are guesses. */
	if (json_is_true(json_object_get(facts, "estimated")))
		a->spend.estimated += n;
	a->spend.tokens_in += (uint64_t)json_integer_value(json_object_get(
	    facts, "tokens_in"));
	a->spend.tokens_out += (uint64_t)json_integer_value(json_object_get(
	    facts, "tokens_out"));
	a->spend.cost_uusd += (uint64_t)json_integer_value(json_object_get(
	    facts, "cost_uusd"));
}

/*
 * A file an operator attached: what show lists of it, in the order
 * attached.  The receipt is ours, signed; its fields are checked all
 * the same, as a replayed record's always are.
 */
static void
apply_evidence(struct attempt *a, json_t *facts, uint64_t ms)
{
	static const char *const types[] = { "png", "jpeg", "text", "data" };
	const char	*name, *sha, *type;
	json_t		*bytes;
	size_t		 i;

	name = json_string_value(json_object_get(facts, "name"));
	sha = json_string_value(json_object_get(facts, "sha256"));
	type = json_string_value(json_object_get(facts, "type"));
	bytes = json_object_get(facts, "bytes");
	if (name == NULL || !name_valid(name, EVIDENCE_NAME_MAX) ||
	    sha == NULL || !hex_valid(sha, 64) || type == NULL ||
	    !json_is_integer(bytes) || json_integer_value(bytes) < 0)
		return;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type, types[i]) == 0)
			break;
	if (i == sizeof(types) / sizeof(types[0]))
		return;
	if (a->evidence == NULL && (a->evidence = json_array()) == NULL)
		fatal(NULL);
	if (json_array_append_new(a->evidence, json_pack("{s:s, s:I, s:I, "
	    "s:s, s:s, s:I}", "name", name, "uid", json_integer_value(
	    json_object_get(facts, "uid")), "bytes", json_integer_value(bytes),
	    "sha256", sha, "type", types[i], "at", (json_int_t)(ms / 1000))) ==
	    -1)
		fatal(NULL);
}

/*
 * The member's selection did not publish it (publish-failed, or it
 * ended): it is no longer the cohort's selection, and the cohort keeps
 * what became of it, {"uid", "reason", "ms"}, in the member's order.
 */
static void
selection_failed(struct attempt *a, json_t *facts, uint64_t ms)
{
	const char	*r;

	if ((r = json_string_value(json_object_get(facts, "reason"))) ==
	    NULL)
		r = "no reason given";
	if (a->select_failures == NULL &&
	    (a->select_failures = json_array()) == NULL)
		fatal(NULL);
	if (json_array_append_new(a->select_failures, json_pack(
	    "{s:i, s:s, s:I}", "uid", (int)a->selector, "reason", r, "ms",
	    (json_int_t)ms)) == -1)
		fatal(NULL);
	a->selected = 0;
}

/*
 * What a transition means for the attempt in memory.  The same code
 * runs live and on replay, so the rebuilt state is the state we had.
 */
static void
attempt_apply(struct attempt *a, const struct transition *t, json_t *facts,
    uint64_t epoch, uint64_t ms)
{
	const char	*s;
	json_t		*v;

	a->epoch = epoch;
	if (strcmp(t->kind, "submitted") == 0) {
		a->t[ST_QUEUE] = ms;
		if ((s = json_string_value(json_object_get(facts,
		    "baseline"))) != NULL)
			strlcpy(a->baseline, s, sizeof(a->baseline));
		if ((s = json_string_value(json_object_get(facts,
		    "manifest_digest"))) != NULL)
			strlcpy(a->digest, s, sizeof(a->digest));
		if ((s = json_string_value(json_object_get(facts,
		    "repository"))) != NULL)
			strlcpy(a->repo, s, sizeof(a->repo));
		a->submitter = json_integer_value(json_object_get(facts,
		    "submitter"));
		if ((s = json_string_value(json_object_get(facts,
		    "cohort"))) != NULL && lifecycle_cohort_id(s)) {
			strlcpy(a->cohort, s, sizeof(a->cohort));
			a->variant = json_integer_value(json_object_get(facts,
			    "variant"));
		}
		/* Claimed from the fleet: the epochs its outcome needs. */
		v = json_object_get(facts, "fleet");
		if (json_is_integer(json_object_get(v, "epoch")) &&
		    json_integer_value(json_object_get(v, "epoch")) > 0) {
			a->fleet_epoch = json_integer_value(json_object_get(v,
			    "epoch"));
			a->fleet_host_epoch = json_integer_value(
			    json_object_get(v, "host_epoch"));
			if ((s = json_string_value(json_object_get(v,
			    "tenant"))) != NULL && fleet_valid_name(s))
				strlcpy(a->fleet_tenant, s,
				    sizeof(a->fleet_tenant));
		}
		/* The environment as resolved then: never the name again. */
		v = json_object_get(facts, "environment");
		if ((s = json_string_value(json_object_get(v, "image"))) !=
		    NULL && lifecycle_digest(s))
			strlcpy(a->image, s, sizeof(a->image));
		if ((s = json_string_value(json_object_get(v, "toolchain"))) !=
		    NULL && lifecycle_digest(s))
			strlcpy(a->toolchain, s, sizeof(a->toolchain));
	} else if (strcmp(t->kind, "fleet-sent") == 0) {
		a->fleet_sent = FLEET_SENT_DONE;
	} else if (strcmp(t->kind, "allocating") == 0) {
		a->t[ST_ALLOCATION] = ms;
		a->uid = json_integer_value(json_object_get(facts, "uid"));
		apply_service_uids(a, json_object_get(facts, "service_uids"));
		a->disk = json_integer_value(json_object_get(json_object_get(
		    facts, "disk"), "size"));
	} else if (strcmp(t->kind, "ready") == 0) {
		a->t[ST_SANDBOX] = ms;
		/* The checkout began this long before it was ready. */
		if ((v = json_object_get(facts, "checkout_ms")) != NULL &&
		    json_is_integer(v) && json_integer_value(v) >= 0 &&
		    (uint64_t)json_integer_value(v) <= ms)
			a->t[ST_CHECKOUT] = ms - json_integer_value(v);
	} else if (strcmp(t->kind, "running") == 0) {
		/* Live, the start was taken when pid 1 said it ran. */
		if (a->t[ST_RUN] == 0)
			a->t[ST_RUN] = ms;
		/* The setup entry its trees have, by key (setup.c). */
		v = json_object_get(facts, "setup");
		if ((s = json_string_value(json_object_get(v, "key"))) !=
		    NULL && hex_valid(s, 64) && (s = json_string_value(
		    json_object_get(v, "digest"))) != NULL &&
		    lifecycle_digest(s)) {
			strlcpy(a->setup_key, json_string_value(
			    json_object_get(v, "key")), sizeof(a->setup_key));
			strlcpy(a->setup_digest, s + 7,
			    sizeof(a->setup_digest));
			a->setup_ready = 1;
			a->setup_hit = json_is_true(json_object_get(v, "hit"));
			a->setup_files = json_integer_value(json_object_get(v,
			    "files"));
			a->setup_bytes = json_integer_value(json_object_get(v,
			    "bytes"));
			a->setup_ms = json_integer_value(json_object_get(v,
			    "ms"));
			a->setup_status = json_integer_value(json_object_get(v,
			    "status"));
		}
	} else if (strcmp(t->kind, "exited") == 0) {
		apply_run_times(a, json_object_get(facts, "times"), ms);
		a->exit_status = json_integer_value(json_object_get(facts,
		    "status"));
		a->timedout = json_is_true(json_object_get(facts, "timedout"));
		a->disk_full = json_is_true(json_object_get(json_object_get(
		    facts, "disk"), "full"));
		usage_from_json(&a->usage, json_object_get(facts, "usage"));
		if ((v = json_object_get(facts, "seccomp_denials")) != NULL &&
		    json_array_size(v) > 0) {
			json_decref(a->denials);
			a->denials = json_deep_copy(v);
		}
	} else if (strcmp(t->kind, "result-ready") == 0) {
		a->t[ST_VERIFY] = ms;
		if ((s = json_string_value(json_object_get(facts, "commit")))
		    != NULL)
			strlcpy(a->commit, s, sizeof(a->commit));
		if ((s = json_string_value(json_object_get(facts, "tree")))
		    != NULL)
			strlcpy(a->tree, s, sizeof(a->tree));
		if ((s = json_string_value(json_object_get(facts,
		    "bundle_sha256"))) != NULL)
			strlcpy(a->bundle_sha256, s, sizeof(a->bundle_sha256));
		a->bundle_size = json_integer_value(json_object_get(facts,
		    "bundle_size"));
		json_decref(a->changes);
		a->changes = json_incref(json_object_get(facts, "changes"));
		a->changes_total = json_integer_value(json_object_get(facts,
		    "changes_total"));
	} else if (strcmp(t->kind, "verifying") == 0) {
		a->vuid = json_integer_value(json_object_get(facts, "uid"));
		a->verifies++;
	} else if (strcmp(t->kind, "validated") == 0) {
		if ((v = json_object_get(facts, "run_ms")) != NULL &&
		    json_is_integer(v) && json_integer_value(v) >= 0)
			a->part_ms[PART_VALIDATION] = json_integer_value(v);
	} else if (strcmp(t->kind, "model") == 0) {
		apply_spend(a, facts);
	} else if (strcmp(t->kind, "evidence") == 0) {
		apply_evidence(a, facts, ms);
	} else if (strcmp(t->kind, "lease") == 0) {
		/* Counted from the journal; a reload's restart is no death. */
		if (!json_is_true(json_object_get(facts, "planned")))
			a->redrives++;
	} else if (strcmp(t->kind, "verdict") == 0) {
		json_decref(a->findings);
		a->findings = json_incref(json_object_get(facts, "findings"));
		a->findings_total = json_integer_value(json_object_get(facts,
		    "nfindings"));
		json_decref(a->validation);
		a->validation = json_incref(json_object_get(facts,
		    "validation"));
		if (!json_is_true(json_object_get(facts, "accepted"))) {
			/* Nothing to publish: the end follows the verdict. */
			a->t[ST_TEARDOWN] = ms;
			a->state = AS_REJECTED;
			a->outcome = AS_REJECTED;
			a->rejected_by_verdict = 1;
			if (a->reason == NULL && (v = json_object_get(facts,
			    "reason")) != NULL)
				set_reason(a, facts);
			return;
		}
		a->t[ST_PUBLISH] = ms;
	} else if (strcmp(t->kind, "approved") == 0) {
		a->approved = 1;
		a->approver = json_integer_value(json_object_get(facts,
		    "uid"));
	} else if (strcmp(t->kind, "selected") == 0) {
		a->selected = 1;
		a->selector = json_integer_value(json_object_get(facts,
		    "uid"));
	} else if (strcmp(t->kind, "publish-failed") == 0) {
		selection_failed(a, facts, ms);
	} else if (strcmp(t->kind, "published") == 0) {
		a->t[ST_TEARDOWN] = ms;
		if ((s = json_string_value(json_object_get(facts, "branch")))
		    != NULL)
			strlcpy(a->branch, s, sizeof(a->branch));
		a->pull = json_integer_value(json_object_get(facts, "pull"));
		if ((s = json_string_value(json_object_get(facts, "record")))
		    != NULL)
			strlcpy(a->record, s, sizeof(a->record));
	} else if (strcmp(t->kind, "rejected") == 0 ||
	    strcmp(t->kind, "failed") == 0 ||
	    strcmp(t->kind, "cancelled") == 0) {
		set_reason(a, facts);
		/* Selected, ended before it published: no selection now. */
		if (a->selected && (a->state == AS_SELECTED ||
		    a->state == AS_PUBLISHING))
			selection_failed(a, facts, ms);
	} else if (strcmp(t->kind, "teardown") == 0) {
		if (a->state == AS_VERIFIED || a->state == AS_SELECTED)
			a->outcome = a->state;		/* nowhere to publish */
		if (a->t[ST_TEARDOWN] == 0)
			a->t[ST_TEARDOWN] = ms;
	} else if (strcmp(t->kind, "terminated") == 0) {
		a->torn_down = 1;
		a->t[ST_MAX] = terminated_at(a, facts, ms);
	}

	if (t->to != AS_MAX)
		a->state = t->to;
	switch (t->to) {
	case AS_PUBLISHED:
	case AS_FAILED:
	case AS_REJECTED:
	case AS_CANCELLED:
	case AS_ORPHANED:
		a->outcome = t->to;
		if (a->t[ST_TEARDOWN] == 0)
			a->t[ST_TEARDOWN] = ms;
		break;
	default:
		break;
	}
}

static const char *stage_names[ST_MAX] = {
	"queue", "allocation", "checkout", "sandbox", "run", "collect",
	"verify", "publish", "teardown"
};
static const char *part_names[PART_MAX] = { "image", "cache", "services",
	"validation" };

static int64_t
part(const struct attempt *a, enum attempt_part p)
{
	return (a->part_ms[p] > 0 ? a->part_ms[p] : 0);
}

/*
 * A stage lasts from its start to the next start that is set; a stage
 * never reached is null.  The one under way counts up to now.  Parts
 * are taken out of the stage they are in, so that the stages and parts
 * add up to the total.
 */
static json_t *
stage_value(const struct attempt *a, int i, uint64_t now, uint64_t end)
{
	uint64_t	 to = 0;
	int64_t		 d;
	int		 j;

	if (a->t[i] == 0)
		return (json_null());
	for (j = i + 1; j < ST_MAX && to == 0; j++)
		to = a->t[j];
	if (to == 0)
		to = end != 0 ? end : now;
	d = to > a->t[i] ? (int64_t)(to - a->t[i]) : 0;
	if (i == ST_SANDBOX)
		d -= part(a, PART_IMAGE) + part(a, PART_CACHE) +
		    part(a, PART_SERVICES);
	else if (i == ST_VERIFY)
		d -= part(a, PART_VALIDATION);
	return (json_integer(d > 0 ? d : 0));
}

json_t *
lifecycle_stages(const struct attempt *a, uint64_t now, uint64_t end)
{
	json_t	*o;
	int64_t	 total;
	int	 i;

	if ((o = json_object()) == NULL)
		fatal(NULL);
	if (end == 0)
		end = a->t[ST_MAX];
	for (i = 0; i < ST_MAX; i++)
		json_object_set_new(o, stage_names[i],
		    stage_value(a, i, now, end));
	for (i = 0; i < PART_MAX; i++)
		json_object_set_new(o, part_names[i], a->part_ms[i] >= 0 ?
		    json_integer(a->part_ms[i]) : json_null());
	if (end == 0 || a->t[ST_QUEUE] == 0 || end < a->t[ST_QUEUE]) {
		json_object_set_new(o, "total", json_null());
		json_object_set_new(o, "overhead", json_null());
		return (o);
	}
	total = (int64_t)(end - a->t[ST_QUEUE]);
	json_object_set_new(o, "total", json_integer(total));
	json_object_set_new(o, "overhead", json_integer(total -
	    json_integer_value(json_object_get(o, "run")) -
	    part(a, PART_VALIDATION)));
	return (o);
}

/* A journaled receipt joins the attempt's chain and takes effect. */
void
lifecycle_chain(struct attempt *a, const struct transition *t,
    const char *line, json_t *r, uint64_t ms)
{
	char	 hash[SHA256_HEX_LEN + 1];

	receipt_hash(line, hash);
	a->receipts = reallocarray(a->receipts, a->nreceipts + 1,
	    sizeof(*a->receipts));
	if (a->receipts == NULL || (a->receipts[a->nreceipts] =
	    strdup(line)) == NULL)
		fatal(NULL);
	a->nreceipts++;
	strlcpy(a->prev, hash, sizeof(a->prev));
	if (strcmp(t->kind, "verdict") == 0) {
		free(a->verdict);
		if ((a->verdict = strdup(line)) == NULL)
			fatal(NULL);
	}
	attempt_apply(a, t, json_object_get(r, "facts"),
	    json_integer_value(json_object_get(r, "epoch")), ms);
}

/* "c-YYYYMMDD-NNNN": what a cohort's id is. */
int
lifecycle_cohort_id(const char *s)
{
	return (strlen(s) == 15 && strncmp(s, "c-", 2) == 0 &&
	    strspn(s + 2, "0123456789") == 8 && s[10] == '-' &&
	    strspn(s + 11, "0123456789") == 4);
}

struct cohort *
lifecycle_cohort_find(struct cohorts *list, const char *id)
{
	struct cohort	*co;

	if (list == NULL)
		return (NULL);
	TAILQ_FOREACH(co, list, entry)
		if (strcmp(co->id, id) == 0)
			return (co);
	return (NULL);
}

/*
 * A cohort record, {"id", "size", "submitter", "manifest_digest",
 * "repository"}: checked field by field, then the cohort exists.  The
 * same for the live record and the replayed one.
 */
int
lifecycle_cohort_record(struct cohorts *list, json_t *o, uint64_t ms,
    char *err, size_t errlen)
{
	struct cohort	*co;
	const char	*id, *digest, *repo;
	json_t		*size;

	id = json_string_value(json_object_get(o, "id"));
	digest = json_string_value(json_object_get(o, "manifest_digest"));
	repo = json_string_value(json_object_get(o, "repository"));
	size = json_object_get(o, "size");
	if (list == NULL) {
		snprintf(err, errlen, "a cohort record, no cohorts here");
		return (-1);
	}
	if (!json_is_object(o) || id == NULL || !lifecycle_cohort_id(id) ||
	    digest == NULL || !lifecycle_digest(digest) || repo == NULL ||
	    strlen(repo) >= REPO_NAME_MAX || !json_is_integer(size) ||
	    json_integer_value(size) < 2 ||
	    json_integer_value(size) > COHORT_SIZE_MAX ||
	    !json_is_integer(json_object_get(o, "submitter"))) {
		snprintf(err, errlen, "cohort record: malformed");
		return (-1);
	}
	if (lifecycle_cohort_find(list, id) != NULL) {
		snprintf(err, errlen, "cohort %s: journaled twice", id);
		return (-1);
	}
	if ((co = calloc(1, sizeof(*co))) == NULL)
		fatal(NULL);
	strlcpy(co->id, id, sizeof(co->id));
	strlcpy(co->digest, digest, sizeof(co->digest));
	strlcpy(co->repo, repo, sizeof(co->repo));
	co->size = json_integer_value(size);
	co->submitter = json_integer_value(json_object_get(o, "submitter"));
	co->ms = ms;
	TAILQ_INSERT_TAIL(list, co, entry);
	return (0);
}

/*
 * A member's submitted receipt names its cohort, which was journaled
 * before it, and its variant, one of the cohort's: the variant to
 * parse the frozen manifest with.  -1: not a member; -2: refused.
 */
static int
replay_member(struct lifecycle_replay *ctx, json_t *r, const char *id)
{
	struct cohort	*co;
	json_t		*facts = json_object_get(r, "facts"), *v;
	const char	*cid;

	if ((cid = json_string_value(json_object_get(facts, "cohort"))) ==
	    NULL)
		return (-1);
	v = json_object_get(facts, "variant");
	if ((co = lifecycle_cohort_find(ctx->cohorts, cid)) == NULL ||
	    !json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) >= co->size) {
		log_warnx("journal: %s: member of unknown cohort %s, or of "
		    "no variant of it", id, cid);
		return (-2);
	}
	return ((int)json_integer_value(v));
}

/*
 * The member of cohort id that is its selection: its last "selected"
 * receipt was followed by no publish-failed and no end before it
 * published.  NULL if none: at most one ever is, live (cohort_select)
 * and on replay.
 */
struct attempt *
lifecycle_cohort_selected(struct attempts *list, const char *id)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, list, entry)
		if (a->selected && strcmp(a->cohort, id) == 0)
			return (a);
	return (NULL);
}

/* Replay: one journal record. */
int
lifecycle_replay(void *arg, uint64_t seq, const char *payload, size_t len)
{
	json_t			*rec, *r;
	json_error_t		 jerr;
	const char		*line, *id, *kind, *raw;
	const struct transition	*t;
	struct lifecycle_replay	*ctx = arg;
	struct attempt		*a;
	char			 err[256];
	uint64_t		 rseq;
	int			 ret, variant;

	if ((rec = json_loadb(payload, len, 0, &jerr)) == NULL) {
		log_warnx("journal record %llu: %s",
		    (unsigned long long)seq, jerr.text);
		return (-1);
	}
	if (json_object_get(rec, "cohort") != NULL) {
		ret = lifecycle_cohort_record(ctx->cohorts, json_object_get(rec,
		    "cohort"), json_integer_value(json_object_get(rec, "ms")),
		    err, sizeof(err));
		if (ret == -1)
			log_warnx("journal record %llu: %s",
			    (unsigned long long)seq, err);
		json_decref(rec);
		return (ret);
	}
	if (json_object_get(rec, "reap") != NULL ||
	    json_object_get(rec, "image") != NULL) {
		/* An orphan removed, an image stored: nothing to rebuild. */
		json_decref(rec);
		return (0);
	}
	line = json_string_value(json_object_get(rec, "receipt"));
	if (line == NULL || (r = json_loads(line, 0, &jerr)) == NULL) {
		log_warnx("journal record %llu: no receipt",
		    (unsigned long long)seq);
		json_decref(rec);
		return (-1);
	}
	id = json_string_value(json_object_get(r, "attempt"));
	kind = json_string_value(json_object_get(r, "kind"));
	rseq = json_integer_value(json_object_get(r, "seq"));
	if (id == NULL || kind == NULL || (t = transition_find(kind)) ==
	    NULL) {
		log_warnx("journal record %llu: bad receipt",
		    (unsigned long long)seq);
		goto bad;
	}
	if ((a = lifecycle_find(ctx->attempts, id)) == NULL) {
		if (strcmp(kind, "submitted") != 0 ||
		    (raw = json_string_value(json_object_get(rec,
		    "manifest"))) == NULL) {
			log_warnx("journal record %llu: %s before submitted",
			    (unsigned long long)seq, id);
			goto bad;
		}
		if ((variant = replay_member(ctx, r, id)) == -2)
			goto bad;
		a = lifecycle_new(ctx->attempts, ctx->statedir, id);
		a->manifest_raw = strdup(raw);
		a->manifest_len = strlen(raw);
		if (manifest_parse_member(id, raw, a->manifest_len, variant,
		    &a->m, err, sizeof(err)) == -1) {
			log_warnx("journal: %s: frozen manifest: %s", id, err);
			goto bad;
		}
	}
	if (rseq != a->nreceipts || strcmp(json_string_value(
	    json_object_get(r, "prev")), a->prev) != 0) {
		log_warnx("journal record %llu: %s receipt %llu out of chain",
		    (unsigned long long)seq, id, (unsigned long long)rseq);
		goto bad;
	}
	if (!lifecycle_legal(a, t)) {
		log_warnx("journal record %llu: %s: illegal transition %s "
		    "from state %s", (unsigned long long)seq, id, kind,
		    attempt_state_name(a->state));
		goto bad;
	}
	if (strcmp(kind, "selected") == 0 && (a->cohort[0] == '\0' ||
	    lifecycle_cohort_selected(ctx->attempts, a->cohort) != NULL)) {
		log_warnx("journal record %llu: %s: a selection of no cohort, "
		    "or a second one", (unsigned long long)seq, id);
		goto bad;
	}
	/* Only a selection fails to publish: never a plain attempt's. */
	if (strcmp(kind, "publish-failed") == 0 && !a->selected) {
		log_warnx("journal record %llu: %s: publish-failed of no "
		    "selection", (unsigned long long)seq, id);
		goto bad;
	}
	lifecycle_chain(a, t, line, r, json_integer_value(json_object_get(rec,
	    "ms")));
	json_decref(r);
	json_decref(rec);
	return (0);
 bad:
	json_decref(r);
	json_decref(rec);
	return (-1);
}

/*
 * Small facts of one attempt that every part of the parent asks, kept
 * here, below them all.
 */
int
attempt_terminal(const struct attempt *a)
{
	return (a->outcome != AS_MAX);
}

/* attempt.c's gate, set by what stands above it (fleet.c). */
static int	(*gate)(struct attempt *, int);

void
attempt_set_gate(int (*fn)(struct attempt *, int))
{
	gate = fn;
}

int
attempt_gate(struct attempt *a, int what)
{
	return (gate == NULL || gate(a, what));
}

struct attempt *
attempt_find(const char *id)
{
	return (lifecycle_find(&env->attempts, id));
}

void
attempt_logpath(struct attempt *a, int validation, char *buf, size_t len)
{
	snprintf(buf, len, "%s/logs/%s%s.log", env->conf->statedir, a->id,
	    validation ? ".validate" : "");
}

/* A service's log, beside the run's: ID[.validate].service-NAME.log */
void
service_logpath(struct attempt *a, int validation, const char *name,
    char *buf, size_t len)
{
	snprintf(buf, len, "%s/logs/%s%s.service-%s.log", env->conf->statedir,
	    a->id, validation ? ".validate" : "", name);
}

void
attempt_part_time(struct attempt *a, enum attempt_part p, uint64_t ms)
{
	if (p >= 0 && p < PART_MAX)
		a->part_ms[p] = (int64_t)ms;
}

/*
 * Ids "P-YYYYMMDD-NNNN" (attempts, cohorts), unique: on a new day the
 * counter starts after the highest number highest() finds of that day.
 */
void
dayseq_next(struct dayseq *d, char prefix, unsigned (*highest)(const char *),
    char *buf, size_t len)
{
	char		 day[9];
	time_t		 t = time(NULL);
	struct tm	 tm;

	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y%m%d", &tm);
	if (strcmp(day, d->day) != 0) {
		strlcpy(d->day, day, sizeof(d->day));
		d->next = highest(day) + 1;
	}
	snprintf(buf, len, "%c-%s-%04u", prefix, day, d->next++);
}

/* The number of id "P-DAY-NNNN" if it is of day, else 0. */
unsigned
dayseq_number(const char *id, const char *day)
{
	unsigned	 n;

	if (strlen(id) < 12 || strncmp(id + 2, day, 8) != 0 ||
	    sscanf(id + 11, "%u", &n) != 1)
		return (0);
	return (n);
}

json_t *
usage_json(const struct sandbox_usage *u)
{
	return (json_pack("{s:I, s:I, s:I, s:I, s:I}",
	    "cpu_ms", (json_int_t)u->cpu_ms,
	    "mem_peak", (json_int_t)u->mem_peak,
	    "pids_peak", (json_int_t)u->pids_peak,
	    "pids_denied", (json_int_t)u->pids_denied,
	    "oom_kills", (json_int_t)u->oom_kills));
}

uint64_t
ms_between(uint64_t from, uint64_t to)
{
	return (from != 0 && to > from ? to - from : 0);
}

/*
 * The exited record's times: the sandbox's start after "ready", the
 * agent's run from its start until pid 1 was reaped, and the parts of
 * the sandbox stage that were measured.
 */
json_t *
run_times(struct attempt *a, struct run *r)
{
	json_t	*o;

	o = json_pack("{s:I, s:I}", "sandbox_ms", (json_int_t)ms_between(
	    a->t[ST_SANDBOX], r->started_ms), "run_ms",
	    (json_int_t)ms_between(r->started_ms, r->ended_ms));
	if (a->part_ms[PART_IMAGE] >= 0)
		json_object_set_new(o, "image_ms",
		    json_integer(a->part_ms[PART_IMAGE]));
	if (a->part_ms[PART_CACHE] >= 0)
		json_object_set_new(o, "cache_ms",
		    json_integer(a->part_ms[PART_CACHE]));
	if (a->part_ms[PART_SERVICES] >= 0)
		json_object_set_new(o, "services_ms",
		    json_integer(a->part_ms[PART_SERVICES]));
	return (o);
}

/* The totals of an attempt's model receipts. */
json_t *
spend_json(const struct attempt_spend *sp)
{
	return (json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
	    "requests", (json_int_t)sp->requests,
	    "refused", (json_int_t)sp->refused,
	    "estimated", (json_int_t)sp->estimated,
	    "tokens_in", (json_int_t)sp->tokens_in,
	    "tokens_out", (json_int_t)sp->tokens_out,
	    "cost_uusd", (json_int_t)sp->cost_uusd));
}

/*
 * The environment as receipts say it: the image and toolchain digests,
 * or "host (floating)".  ref is what the manifest wrote, if known.
 */
json_t *
env_facts(const char *image, const char *toolchain, const char *ref)
{
	json_t	*o;
	char	 buf[80];

	if (image[0] == '\0')
		return (json_string("host (floating)"));
	if (strncmp(image, "sha256:", 7) == 0)
		image += 7;
	if (strncmp(toolchain, "sha256:", 7) == 0)
		toolchain += 7;
	snprintf(buf, sizeof(buf), "sha256:%s", image);
	if ((o = json_pack("{s:s}", "image", buf)) == NULL)
		fatal(NULL);
	if (ref != NULL)
		json_object_set_new(o, "ref", json_string(ref));
	if (toolchain[0] != '\0') {
		snprintf(buf, sizeof(buf), "sha256:%s", toolchain);
		json_object_set_new(o, "toolchain", json_string(buf));
	} else
		json_object_set_new(o, "toolchain", json_null());
	return (o);
}
