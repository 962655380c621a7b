/*
 * lifecycle.c: every (state, kind) pair the lifecycle does not allow
 * is refused, live and on replay; the allowed ones lead where
 * DESIGN.md says; and replaying the journal records of a sequence
 * rebuilds the attempt the live application of it built.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "crypto.h"
#include "log.h"
#include "receipt.h"
#include "../../supervisord-factory/factoryd.h"

/* lifecycle.o is linked alone; factoryd.h declares this. */
struct factoryd	*env;

#define S(s)	(1U << (s))
#define LIVE	(S(AS_QUEUED) | S(AS_PROVISIONING) | S(AS_READY) | \
		 S(AS_RUNNING) | S(AS_RESULT_READY) | S(AS_VERIFYING) | \
		 S(AS_VERIFIED) | S(AS_PUBLISHING) | S(AS_SELECTABLE) | \
		 S(AS_SELECTED))
#define ENDED	(S(AS_PUBLISHED) | S(AS_FAILED) | S(AS_REJECTED) | \
		 S(AS_CANCELLED) | S(AS_ORPHANED))
#define KEEP	AS_MAX

/*
 * The lifecycle restated here, independently of lifecycle.c's table:
 * a change to one without the other fails.  "submitted" has no states:
 * it is only ever an attempt's first receipt.
 */
static const struct {
	const char		*kind;
	enum attempt_state	 to;
	uint32_t		 from;
} expect[] = {
	{ "submitted",	  AS_QUEUED,	   0 },
	{ "allocating",	  AS_PROVISIONING, S(AS_QUEUED) },
	{ "ready",	  AS_READY,	   S(AS_PROVISIONING) },
	{ "running",	  AS_RUNNING,	   S(AS_READY) },
	{ "exited",	  KEEP,		   S(AS_RUNNING) },
	{ "result-ready", AS_RESULT_READY, S(AS_RUNNING) },
	{ "verifying",	  AS_VERIFYING,	   S(AS_RESULT_READY) |
					   S(AS_VERIFYING) },
	{ "validated",	  KEEP,		   S(AS_VERIFYING) },
	{ "verdict",	  AS_VERIFIED,	   S(AS_VERIFYING) },
	{ "approved",	  KEEP,		   S(AS_VERIFIED) },
	/* a cohort's member: never approved, published once selected */
	{ "selectable",	  AS_SELECTABLE,   S(AS_VERIFIED) },
	{ "selected",	  AS_SELECTED,	   S(AS_SELECTABLE) },
	/* its publication failed: it waits again, the cohort reselects */
	{ "publish-failed", AS_SELECTABLE, S(AS_SELECTED) | S(AS_PUBLISHING) },
	{ "publishing",	  AS_PUBLISHING,   S(AS_VERIFIED) | S(AS_SELECTED) },
	{ "published",	  AS_PUBLISHED,	   S(AS_PUBLISHING) },
	{ "rejected",	  AS_REJECTED,	   S(AS_RUNNING) | S(AS_VERIFYING) },
	{ "failed",	  AS_FAILED,	   LIVE },
	{ "cancelled",	  AS_CANCELLED,	   LIVE },
	{ "teardown",	  AS_TEARDOWN,	   ENDED | S(AS_VERIFIED) |
					   S(AS_SELECTED) },
	{ "terminated",	  AS_TERMINATED,   S(AS_TEARDOWN) },
	{ "lease",	  KEEP,		   S(AS_PROVISIONING) | S(AS_RUNNING) },
	{ "reaped",	  KEEP,		   ENDED | S(AS_TEARDOWN) |
					   S(AS_TERMINATED) },
	{ "model",	  KEEP,		   LIVE | ENDED | S(AS_TEARDOWN) },
	{ "shell",	  KEEP,		   LIVE | ENDED | S(AS_TEARDOWN) },
	{ "preview",	  KEEP,		   LIVE | ENDED | S(AS_TEARDOWN) },
	{ "preview-opened", KEEP,	   LIVE | ENDED | S(AS_TEARDOWN) },
	{ "preview-health", KEEP,	   LIVE | ENDED | S(AS_TEARDOWN) },
	{ "preview-closed", KEEP,	   LIVE | ENDED | S(AS_TEARDOWN) },
	{ "preview-kept", KEEP,	   LIVE | ENDED | S(AS_TEARDOWN) },
	/* an operator's file, also once the attempt ended */
	{ "evidence",	  KEEP,		   LIVE | ENDED | S(AS_TEARDOWN) |
					   S(AS_TERMINATED) },
	{ "fleet-sent",	  KEEP,		   S(AS_TERMINATED) },
};
#define NEXPECT	(sizeof(expect) / sizeof(expect[0]))

static const char manifest[] =
    "repository: demo\n"
    "baseline: main\n"
    "title: \"lifecycle\"\n"
    "scope: [\"src/**\"]\n"
    "agent: [\"/bin/true\"]\n"
    "validate: [\"/bin/true\"]\n"
    "approval: auto\n";

static EVP_PKEY		*key;
static struct attempts	 live_list, replay_list;
static struct cohorts	 replay_cohorts;

static void
setup(void)
{
	log_init(1, LOG_DAEMON);
	if (key == NULL && (key = ed25519_generate()) == NULL)
		abort();
	TAILQ_INIT(&live_list);
	TAILQ_INIT(&replay_list);
	TAILQ_INIT(&replay_cohorts);
}

static void
attempt_free(struct attempt *a)
{
	size_t	 i;

	for (i = 0; i < a->nreceipts; i++)
		free(a->receipts[i]);
	free(a->receipts);
	free(a->reason);
	free(a->verdict);
	free(a->manifest_raw);
	if (a->m != NULL)
		manifest_free(a->m);
	json_decref(a->changes);
	json_decref(a->findings);
	json_decref(a->denials);
	json_decref(a->select_failures);
	json_decref(a->evidence);
	free(a);
}

static void
list_free(struct attempts *l)
{
	struct attempt	*a;

	while ((a = TAILQ_FIRST(l)) != NULL) {
		TAILQ_REMOVE(l, a, entry);
		attempt_free(a);
	}
}

static void
teardown(void)
{
	struct cohort	*co;

	list_free(&live_list);
	list_free(&replay_list);
	while ((co = TAILQ_FIRST(&replay_cohorts)) != NULL) {
		TAILQ_REMOVE(&replay_cohorts, co, entry);
		free(co);
	}
}

/* A signed receipt of kind for a's next place in its chain. */
static char *
make(struct attempt *a, const char *kind, json_t *facts)
{
	char	*line;

	ck_assert_int_eq(receipt_make(a->id, a->nreceipts, kind, a->epoch,
	    a->prev, RECEIPT_SIGNER_RECEIPTS, key, facts, &line), 0);
	return (line);
}

/* The live path: the legality check, then the receipt takes effect. */
static int
live(struct attempt *a, const char *kind, json_t *facts, uint64_t ms)
{
	const struct transition	*t;
	json_t			*r;
	char			*line;

	ck_assert_ptr_nonnull(t = transition_find(kind));
	if (!lifecycle_legal(a, t))
		return (-1);
	line = make(a, kind, facts);
	ck_assert_ptr_nonnull(r = json_loads(line, 0, NULL));
	lifecycle_chain(a, t, line, r, ms);
	json_decref(r);
	free(line);
	return (0);
}

/* The journal record attempt_commit() writes for a receipt line. */
static int
replay_line(uint64_t seq, const char *line, uint64_t ms, int first)
{
	struct lifecycle_replay	 ctx = { &replay_list, "/nonexistent",
	    &replay_cohorts };
	json_t			*rec;
	char			*p;
	int			 ret;

	rec = json_pack("{s:s, s:I}", "receipt", line, "ms", (json_int_t)ms);
	if (first)
		json_object_set_new(rec, "manifest", json_string(manifest));
	ck_assert_ptr_nonnull(p = json_dumps(rec, JSON_COMPACT));
	ret = lifecycle_replay(&ctx, seq, p, strlen(p));
	free(p);
	json_decref(rec);
	return (ret);
}

static struct attempt *
fresh(struct attempts *l, const char *id)
{
	struct attempt	*a;
	char		 err[256];

	a = lifecycle_new(l, "/nonexistent", id);
	ck_assert_msg(manifest_parse(id, manifest, strlen(manifest), &a->m,
	    err, sizeof(err)) == 0, "%s", err);
	return (a);
}

/* An attempt in state s with one receipt behind it. */
static struct attempt *
in_state(enum attempt_state s)
{
	struct attempt	*a;

	a = fresh(&live_list, "a-20261201-0001");
	ck_assert_int_eq(live(a, "submitted", NULL, 1), 0);
	a->state = s;
	return (a);
}

START_TEST(test_table_matches)
{
	size_t	 i, j;

	ck_assert_uint_eq(transition_count(), NEXPECT);
	for (i = 0; i < transition_count(); i++) {
		const struct transition *t = transition_at(i);

		for (j = 0; j < NEXPECT; j++)
			if (strcmp(expect[j].kind, t->kind) == 0)
				break;
		ck_assert_msg(j < NEXPECT, "kind %s not in DESIGN", t->kind);
		ck_assert_int_eq(t->to, expect[j].to);
		ck_assert_ptr_eq(transition_find(t->kind), t);
	}
	ck_assert_ptr_null(transition_at(transition_count()));
	ck_assert_ptr_null(transition_find(""));
	ck_assert_ptr_null(transition_find("Submitted"));
	ck_assert_ptr_null(transition_find("submitted "));
	ck_assert_ptr_null(transition_find("terminate"));
}
END_TEST

/* Exhaustive: every kind in every state, legal exactly where allowed. */
START_TEST(test_every_pair)
{
	size_t			 i;
	enum attempt_state	 s;
	struct attempt		*a;
	int			 want, got;
	json_t			*facts;

	for (i = 0; i < NEXPECT; i++) {
		for (s = 0; s < AS_MAX; s++) {
			a = in_state(s);
			want = (expect[i].from & S(s)) != 0;
			ck_assert_int_eq(lifecycle_legal(a,
			    transition_find(expect[i].kind)), want);
			facts = json_pack("{s:b}", "accepted", 1);
			got = live(a, expect[i].kind, facts, 2);
			json_decref(facts);
			ck_assert_msg(got == (want ? 0 : -1),
			    "%s from %s: %s", expect[i].kind,
			    attempt_state_name(s), want ? "refused" :
			    "accepted");
			if (!want) {
				ck_assert_int_eq(a->state, s);
				ck_assert_uint_eq(a->nreceipts, 1);
			} else {
				ck_assert_int_eq(a->state, expect[i].to ==
				    KEEP ? s : expect[i].to);
				ck_assert_uint_eq(a->nreceipts, 2);
			}
			teardown();
		}
	}
}
END_TEST

/* A state out of range is never a place a receipt can come from. */
START_TEST(test_bad_state)
{
	size_t		 i;
	struct attempt	*a;

	a = in_state(AS_MAX);
	for (i = 0; i < NEXPECT; i++)
		ck_assert_int_eq(lifecycle_legal(a,
		    transition_find(expect[i].kind)), 0);
	a->state = (enum attempt_state)31;
	for (i = 0; i < NEXPECT; i++)
		ck_assert_int_eq(lifecycle_legal(a,
		    transition_find(expect[i].kind)), 0);
}
END_TEST

START_TEST(test_verdict_rejects)
{
	struct attempt	*a;
	json_t		*facts;

	a = in_state(AS_VERIFYING);
	facts = json_pack("{s:b, s:s}", "accepted", 0, "reason", "tests fail");
	ck_assert_int_eq(live(a, "verdict", facts, 5), 0);
	json_decref(facts);
	ck_assert_int_eq(a->state, AS_REJECTED);
	ck_assert_int_eq(a->outcome, AS_REJECTED);
	ck_assert_int_eq(a->rejected_by_verdict, 1);
	ck_assert_str_eq(a->reason, "tests fail");
}
END_TEST

struct step {
	const char	*kind;
	const char	*facts;		/* JSON */
};

static const struct step published[] = {
	{ "submitted", "{\"baseline\":\"0123456789012345678901234567890123"
	    "456789\",\"manifest_digest\":\"sha256:ab\",\"repository\":"
	    "\"demo\",\"submitter\":1000}" },
	{ "allocating", "{\"uid\":70001,\"disk\":{\"size\":1048576}}" },
	{ "ready", "{}" },
	{ "running", "{}" },
	{ "lease", "{}" },
	{ "exited", "{\"status\":0,\"timedout\":false,\"usage\":{\"cpu_ms\":"
	    "5,\"mem_peak\":4096,\"pids_peak\":3,\"oom_kills\":0},"
	    "\"seccomp_denials\":[{\"nr\":1}]}" },
	{ "result-ready", "{\"commit\":\"1111111111111111111111111111111111"
	    "111111\",\"tree\":\"2222222222222222222222222222222222222222\","
	    "\"bundle_sha256\":\"33\",\"bundle_size\":77,\"changes\":[\"a\"],"
	    "\"changes_total\":1}" },
	{ "verifying", "{\"uid\":70002}" },
	{ "validated", "{}" },
	{ "verifying", "{\"uid\":70003}" },
	{ "verdict", "{\"accepted\":true,\"findings\":[],\"nfindings\":0}" },
	{ "approved", "{\"uid\":0}" },
	{ "publishing", "{}" },
	{ "published", "{\"branch\":\"factory/x\",\"pull\":7,\"record\":"
	    "\"/r\"}" },
	{ "teardown", "{}" },
	{ "reaped", "{}" },
	{ "terminated", "{}" },
	{ NULL, NULL }
};

static const struct step failing[] = {
	{ "submitted", "{\"repository\":\"demo\",\"submitter\":1001}" },
	{ "allocating", "{\"uid\":70004}" },
	{ "lease", "{}" },
	{ "shell", "{}" },
	{ "failed", "{\"reason\":\"worker lost twice\"}" },
	{ "teardown", "{}" },
	{ "terminated", "{}" },
	{ NULL, NULL }
};

static const struct step rejected[] = {
	{ "submitted", "{}" },
	{ "allocating", "{\"uid\":70005}" },
	{ "ready", "{}" },
	{ "running", "{}" },
	{ "result-ready", "{}" },
	{ "verifying", "{\"uid\":70006}" },
	{ "verdict", "{\"accepted\":false,\"reason\":\"scope\","
	    "\"findings\":[\"x\"],\"nfindings\":3}" },
	{ "teardown", "{}" },
	{ NULL, NULL }
};

static void
same(const struct attempt *x, const struct attempt *y)
{
	size_t	 i;

	ck_assert_str_eq(x->id, y->id);
	ck_assert_int_eq(x->state, y->state);
	ck_assert_int_eq(x->outcome, y->outcome);
	ck_assert_int_eq(x->reason == NULL, y->reason == NULL);
	if (x->reason != NULL)
		ck_assert_str_eq(x->reason, y->reason);
	for (i = 0; i <= ST_MAX; i++)
		ck_assert_uint_eq(x->t[i], y->t[i]);
	for (i = 0; i < PART_MAX; i++)
		ck_assert_int_eq(x->part_ms[i], y->part_ms[i]);
	ck_assert_uint_eq(x->nreceipts, y->nreceipts);
	for (i = 0; i < x->nreceipts; i++)
		ck_assert_str_eq(x->receipts[i], y->receipts[i]);
	ck_assert_str_eq(x->prev, y->prev);
	ck_assert_int_eq(x->redrives, y->redrives);
	ck_assert_int_eq(x->verifies, y->verifies);
	ck_assert_int_eq(x->exit_status, y->exit_status);
	ck_assert_int_eq(x->uid, y->uid);
	ck_assert_int_eq(x->vuid, y->vuid);
	ck_assert_int_eq(x->submitter, y->submitter);
	ck_assert_uint_eq(x->disk, y->disk);
	ck_assert_int_eq(x->approved, y->approved);
	ck_assert_int_eq(x->torn_down, y->torn_down);
	ck_assert_int_eq(x->rejected_by_verdict, y->rejected_by_verdict);
	ck_assert_uint_eq(x->changes_total, y->changes_total);
	ck_assert_uint_eq(x->findings_total, y->findings_total);
	ck_assert_uint_eq(x->bundle_size, y->bundle_size);
	ck_assert_uint_eq(x->usage.cpu_ms, y->usage.cpu_ms);
	ck_assert_uint_eq(x->usage.mem_peak, y->usage.mem_peak);
	ck_assert_str_eq(x->baseline, y->baseline);
	ck_assert_str_eq(x->digest, y->digest);
	ck_assert_str_eq(x->repo, y->repo);
	ck_assert_str_eq(x->commit, y->commit);
	ck_assert_str_eq(x->tree, y->tree);
	ck_assert_str_eq(x->branch, y->branch);
	ck_assert_int_eq(x->pull, y->pull);
	ck_assert_int_eq(x->verdict == NULL, y->verdict == NULL);
	ck_assert_int_eq(json_equal(x->changes, y->changes) ||
	    (x->changes == NULL && y->changes == NULL), 1);
	ck_assert_int_eq(json_equal(x->denials, y->denials) ||
	    (x->denials == NULL && y->denials == NULL), 1);
	ck_assert_int_eq(x->selected, y->selected);
	ck_assert_int_eq(x->selector, y->selector);
	ck_assert_int_eq(json_equal(x->select_failures, y->select_failures) ||
	    (x->select_failures == NULL && y->select_failures == NULL), 1);
}

/* Live, then the same receipts as journal records into a fresh list. */
static void
replay_equals_live(const struct step *steps, const char *id,
    enum attempt_state final)
{
	struct attempt	*a, *b;
	json_t		*facts;
	size_t		 i;

	a = fresh(&live_list, id);
	for (i = 0; steps[i].kind != NULL; i++) {
		ck_assert_ptr_nonnull(facts = json_loads(steps[i].facts, 0,
		    NULL));
		ck_assert_msg(live(a, steps[i].kind, facts, 1000 + i) == 0,
		    "%s refused live", steps[i].kind);
		json_decref(facts);
	}
	ck_assert_int_eq(a->state, final);
	for (i = 0; i < a->nreceipts; i++)
		ck_assert_int_eq(replay_line(i + 1, a->receipts[i], 1000 + i,
		    i == 0), 0);
	ck_assert_ptr_nonnull(b = lifecycle_find(&replay_list, id));
	ck_assert_ptr_eq(lifecycle_find(&live_list, id), a);
	ck_assert_ptr_null(lifecycle_find(&replay_list, "a-20261201-9999"));
	same(a, b);
}

START_TEST(test_replay_published)
{
	replay_equals_live(published, "a-20261201-0002", AS_TERMINATED);
}
END_TEST

/*
 * Stage times: from the records' times and the durations the parent
 * measured in their facts; the stages and parts add up to the total.
 */
struct timed_step {
	const char	*kind;
	const char	*facts;
	uint64_t	 ms;
};

static const struct timed_step timed[] = {
	{ "submitted", "{}", 1000 },
	{ "allocating", "{\"uid\":70001}", 1010 },
	{ "ready", "{\"checkout_ms\":60}", 1100 },
	{ "running", "{}", 1150 },
	{ "exited", "{\"status\":0,\"times\":{\"sandbox_ms\":40,"
	    "\"run_ms\":1000,\"image_ms\":15,\"cache_ms\":5}}", 2150 },
	{ "result-ready", "{}", 2200 },
	{ "verifying", "{\"uid\":70002}", 2210 },
	{ "validated", "{\"run_ms\":300}", 2600 },
	{ "verdict", "{\"accepted\":true,\"findings\":[],\"nfindings\":0}",
	    2700 },
	{ "publishing", "{}", 2705 },
	{ "published", "{}", 2800 },
	{ "teardown", "{}", 2801 },
	/* signed at 2855, journaled a little later */
	{ "terminated", "{\"stages\":{\"total\":1855}}", 2857 },
	{ NULL, NULL, 0 }
};

static json_t *
timed_run(const struct timed_step *steps, const char *id, size_t upto)
{
	struct attempt	*a, *b;
	json_t		*facts, *o, *r;
	size_t		 i;

	a = fresh(&live_list, id);
	for (i = 0; steps[i].kind != NULL && i < upto; i++) {
		ck_assert_ptr_nonnull(facts = json_loads(steps[i].facts, 0,
		    NULL));
		ck_assert_msg(live(a, steps[i].kind, facts, steps[i].ms) == 0,
		    "%s refused live", steps[i].kind);
		json_decref(facts);
	}
	for (i = 0; i < a->nreceipts; i++)
		ck_assert_int_eq(replay_line(i + 1, a->receipts[i],
		    steps[i].ms, i == 0), 0);
	ck_assert_ptr_nonnull(b = lifecycle_find(&replay_list, id));
	same(a, b);
	o = lifecycle_stages(a, 5000, 0);
	r = lifecycle_stages(b, 5000, 0);
	ck_assert(json_equal(o, r));
	json_decref(r);
	return (o);
}

static json_int_t
stage(json_t *o, const char *name)
{
	json_t	*v = json_object_get(o, name);

	ck_assert_msg(json_is_integer(v), "%s is not a number", name);
	return (json_integer_value(v));
}

START_TEST(test_stages)
{
	const char	*keys[] = { "queue", "allocation", "checkout",
	    "sandbox", "image", "cache", "run", "collect", "verify",
	    "validation", "publish", "teardown" };
	json_t		*o;
	json_int_t	 sum = 0;
	size_t		 i;

	o = timed_run(timed, "a-20261201-0010", 100);
	ck_assert_int_eq(stage(o, "queue"), 10);
	ck_assert_int_eq(stage(o, "allocation"), 30);
	ck_assert_int_eq(stage(o, "checkout"), 60);
	/* 40 ms from ready to the agent's start, 20 of them in parts */
	ck_assert_int_eq(stage(o, "sandbox"), 20);
	ck_assert_int_eq(stage(o, "image"), 15);
	ck_assert_int_eq(stage(o, "cache"), 5);
	ck_assert_int_eq(stage(o, "run"), 1000);
	ck_assert_int_eq(stage(o, "collect"), 60);
	ck_assert_int_eq(stage(o, "verify"), 200);
	ck_assert_int_eq(stage(o, "validation"), 300);
	ck_assert_int_eq(stage(o, "publish"), 100);
	/* the end the receipt's total says, not the record's time */
	ck_assert_int_eq(stage(o, "teardown"), 55);
	ck_assert_int_eq(stage(o, "total"), 1855);
	ck_assert_int_eq(stage(o, "overhead"), 1855 - 1000 - 300);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		sum += stage(o, keys[i]);
	ck_assert_int_eq(sum, 1855);
	json_decref(o);
}
END_TEST

/* Under way: the open stage counts up to now, nothing later is set. */
START_TEST(test_stages_running)
{
	json_t	*o;

	o = timed_run(timed, "a-20261201-0011", 4);	/* up to running */
	ck_assert_int_eq(stage(o, "sandbox"), 50);
	ck_assert_int_eq(stage(o, "run"), 5000 - 1150);
	ck_assert(json_is_null(json_object_get(o, "collect")));
	ck_assert(json_is_null(json_object_get(o, "verify")));
	ck_assert(json_is_null(json_object_get(o, "validation")));
	ck_assert(json_is_null(json_object_get(o, "image")));
	ck_assert(json_is_null(json_object_get(o, "total")));
	ck_assert(json_is_null(json_object_get(o, "overhead")));
	json_decref(o);
}
END_TEST

/*
 * Times a broken or older parent journaled (negative, mistyped, longer
 * than the attempt has existed): ignored, the records' own times used,
 * live and on replay alike; no stage is negative.
 */
static const struct timed_step badtimes[] = {
	{ "submitted", "{}", 1000 },
	{ "allocating", "{}", 1010 },
	{ "ready", "{\"checkout_ms\":5000}", 1100 },
	{ "running", "{}", 1150 },
	{ "exited", "{\"times\":{\"sandbox_ms\":-4,\"run_ms\":\"x\","
	    "\"image_ms\":-1,\"cache_ms\":1.5}}", 2150 },
	{ "result-ready", "{}", 2200 },
	{ "verifying", "{}", 2210 },
	{ "validated", "{\"run_ms\":-300}", 2600 },
	{ "failed", "{\"reason\":\"x\"}", 2650 },
	{ "teardown", "{}", 2651 },
	{ "terminated", "{\"stages\":{\"total\":\"long\"}}", 2700 },
	{ NULL, NULL, 0 }
};

START_TEST(test_stages_bad_times)
{
	json_t	*o;

	o = timed_run(badtimes, "a-20261201-0012", 100);
	ck_assert_int_eq(stage(o, "allocation"), 90);
	ck_assert(json_is_null(json_object_get(o, "checkout")));
	ck_assert_int_eq(stage(o, "sandbox"), 50);
	ck_assert_int_eq(stage(o, "run"), 1000);
	ck_assert(json_is_null(json_object_get(o, "image")));
	ck_assert(json_is_null(json_object_get(o, "cache")));
	ck_assert(json_is_null(json_object_get(o, "validation")));
	ck_assert_int_eq(stage(o, "verify"), 450);
	ck_assert(json_is_null(json_object_get(o, "publish")));
	ck_assert_int_eq(stage(o, "teardown"), 50);
	ck_assert_int_eq(stage(o, "total"), 1700);
	ck_assert_int_eq(stage(o, "overhead"), 700);
	json_decref(o);
}
END_TEST

START_TEST(test_replay_failed)
{
	replay_equals_live(failing, "a-20261201-0003", AS_TERMINATED);
}
END_TEST

START_TEST(test_replay_rejected)
{
	replay_equals_live(rejected, "a-20261201-0004", AS_TEARDOWN);
}
END_TEST

/*
 * Replay refuses what live refuses: a chained, signed record of a
 * kind its attempt's state does not allow (a journal written by a
 * broken or older parent, or edited) fails the replay instead of
 * rebuilding a state no live run could have reached.
 */
START_TEST(test_replay_refuses_illegal)
{
	struct attempt	*a;
	char		*line;
	const char	*id = "a-20261201-0005";
	size_t		 i, k;

	for (k = 0; k < NEXPECT; k++) {
		a = fresh(&live_list, id);
		ck_assert_int_eq(live(a, "submitted", NULL, 1), 0);
		ck_assert_int_eq(replay_line(1, a->receipts[0], 1, 1), 0);
		/* queued: every kind not allowed from there */
		if (expect[k].from & S(AS_QUEUED))
			goto next;
		line = make(a, expect[k].kind, NULL);
		ck_assert_msg(replay_line(2, line, 2, 0) == -1,
		    "replay applied %s from queued", expect[k].kind);
		free(line);
		a = lifecycle_find(&replay_list, id);
		ck_assert_int_eq(a->state, AS_QUEUED);
		ck_assert_uint_eq(a->nreceipts, 1);
 next:
		teardown();
	}
	/* and deeper in: published straight after running */
	a = fresh(&live_list, id);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(live(a, published[i].kind, NULL, i), 0);
	for (i = 0; i < a->nreceipts; i++)
		ck_assert_int_eq(replay_line(i + 1, a->receipts[i], i,
		    i == 0), 0);
	line = make(a, "published", NULL);
	ck_assert_int_eq(replay_line(5, line, 5, 0), -1);
	free(line);
	ck_assert_int_eq(lifecycle_find(&replay_list, id)->state,
	    AS_RUNNING);
}
END_TEST

/* Out of chain, unknown kind, no receipt: refused as before. */
START_TEST(test_replay_malformed)
{
	struct lifecycle_replay	 ctx = { &replay_list, "/nonexistent",
	    &replay_cohorts };
	struct attempt		*a;
	char			*line;
	const char		*bad[] = { "", "{", "[]", "{\"receipt\":1}",
	    "{\"receipt\":\"{}\"}", "{\"receipt\":\"not json\"}" };
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(lifecycle_replay(&ctx, 1, bad[i],
		    strlen(bad[i])), -1);
	a = fresh(&live_list, "a-20261201-0006");
	/* running before submitted */
	line = make(a, "running", NULL);
	ck_assert_int_eq(replay_line(1, line, 1, 0), -1);
	free(line);
	ck_assert_ptr_null(TAILQ_FIRST(&replay_list));
	ck_assert_int_eq(live(a, "submitted", NULL, 1), 0);
	ck_assert_int_eq(replay_line(1, a->receipts[0], 1, 1), 0);
	/* the same record twice: out of chain */
	ck_assert_int_eq(replay_line(2, a->receipts[0], 1, 1), -1);
	line = make(a, "no-such-kind", NULL);
	ck_assert_int_eq(replay_line(2, line, 2, 0), -1);
	free(line);
}
END_TEST

#define SHA	"0123456789abcdef0123456789abcdef0123456789abcdef" \
		"0123456789abcdef"

/*
 * Evidence receipts: show's list is what they say, in their order,
 * live and replayed alike; a receipt whose facts are not an
 * attachment's (a name no file could have, a digest, a type, a size
 * that are none) adds nothing.
 */
START_TEST(test_replay_evidence)
{
	static const char *const facts[] = {
	    "{\"uid\":0,\"name\":\"shot.png\",\"bytes\":5,\"sha256\":\""
	    SHA "\",\"type\":\"png\"}",
	    "{\"uid\":1000,\"name\":\"a/b\",\"bytes\":5,\"sha256\":\""
	    SHA "\",\"type\":\"png\"}",
	    "{\"uid\":1000,\"name\":\".x\",\"bytes\":5,\"sha256\":\""
	    SHA "\",\"type\":\"png\"}",
	    "{\"uid\":1000,\"name\":\"x\",\"bytes\":5,\"sha256\":"
	    "\"ABCD\",\"type\":\"png\"}",
	    "{\"uid\":1000,\"name\":\"x\",\"bytes\":5,\"sha256\":\""
	    SHA "\",\"type\":\"gif\"}",
	    "{\"uid\":1000,\"name\":\"x\",\"bytes\":-1,\"sha256\":\""
	    SHA "\",\"type\":\"data\"}",
	    "{\"uid\":1000,\"name\":\"notes.txt\",\"bytes\":0,"
	    "\"sha256\":\"" SHA "\",\"type\":\"text\"}",
	};
	struct attempt	*a, *r;
	json_t		*f, *e;
	const char	*id = "a-20261201-0031";
	size_t		 i;

	a = fresh(&live_list, id);
	ck_assert_int_eq(live(a, "submitted", NULL, 1000), 0);
	for (i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		ck_assert_ptr_nonnull(f = json_loads(facts[i], 0, NULL));
		ck_assert_int_eq(live(a, "evidence", f, 2000 + i * 1000), 0);
		json_decref(f);
	}
	ck_assert_uint_eq(json_array_size(a->evidence), 2);
	e = json_array_get(a->evidence, 0);
	ck_assert_str_eq(json_string_value(json_object_get(e, "name")),
	    "shot.png");
	ck_assert_str_eq(json_string_value(json_object_get(e, "sha256")),
	    SHA);
	ck_assert_str_eq(json_string_value(json_object_get(e, "type")),
	    "png");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "bytes")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "at")), 2);
	e = json_array_get(a->evidence, 1);
	ck_assert_str_eq(json_string_value(json_object_get(e, "name")),
	    "notes.txt");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "uid")), 1000);
	for (i = 0; i < a->nreceipts; i++)
		ck_assert_int_eq(replay_line(i + 1, a->receipts[i],
		    1000 + i * 1000, i == 0), 0);
	ck_assert_ptr_nonnull(r = lifecycle_find(&replay_list, id));
	ck_assert(json_equal(r->evidence, a->evidence));
}
END_TEST

/* A cohort's journal record, as cohort_journal() writes it. */
static int
replay_cohort(uint64_t seq, const char *cohort)
{
	struct lifecycle_replay	 ctx = { &replay_list, "/nonexistent",
	    &replay_cohorts };
	char			 rec[1024];

	snprintf(rec, sizeof(rec), "{\"cohort\":%s,\"ms\":500}", cohort);
	return (lifecycle_replay(&ctx, seq, rec, strlen(rec)));
}

#define DIGEST	"sha256:0123456789abcdef0123456789abcdef0123456789abcdef" \
		"0123456789abcdef"
#define COHORT1	"{\"id\":\"c-20261201-0001\",\"size\":3,\"submitter\":" \
		"1000,\"manifest_digest\":\"" DIGEST "\",\"repository\":" \
		"\"demo\"}"

/* A member verified, selectable, selected, published. */
static const struct step member[] = {
	{ "submitted", "{\"repository\":\"demo\",\"submitter\":1000,"
	    "\"cohort\":\"c-20261201-0001\",\"variant\":2}" },
	{ "allocating", "{\"uid\":70007}" },
	{ "ready", "{}" },
	{ "running", "{}" },
	{ "result-ready", "{}" },
	{ "verifying", "{\"uid\":70008}" },
	{ "verdict", "{\"accepted\":true,\"findings\":[],\"nfindings\":0}" },
	{ "selectable", "{\"cohort\":\"c-20261201-0001\"}" },
	{ "selected", "{\"cohort\":\"c-20261201-0001\",\"uid\":4242}" },
	{ "publishing", "{}" },
	{ "published", "{\"branch\":\"factory/y\",\"pull\":1}" },
	{ "teardown", "{}" },
	{ "terminated", "{}" },
	{ NULL, NULL }
};

START_TEST(test_replay_cohort)
{
	struct attempt	*a, *b;

	ck_assert_int_eq(replay_cohort(1, COHORT1), 0);
	ck_assert_ptr_nonnull(lifecycle_cohort_find(&replay_cohorts,
	    "c-20261201-0001"));
	replay_equals_live(member, "a-20261201-0010", AS_TERMINATED);
	a = lifecycle_find(&live_list, "a-20261201-0010");
	b = lifecycle_find(&replay_list, "a-20261201-0010");
	ck_assert_str_eq(a->cohort, "c-20261201-0001");
	ck_assert_str_eq(b->cohort, a->cohort);
	ck_assert_int_eq(b->variant, 2);
	ck_assert_int_eq(a->variant, b->variant);
	ck_assert_int_eq(b->selected, 1);
	ck_assert_int_eq(a->selected, b->selected);
	ck_assert_int_eq(b->selector, 4242);
	ck_assert_int_eq(b->outcome, AS_PUBLISHED);
}
END_TEST

/*
 * A member selected, its publication failed, selected again, published:
 * replay rebuilds the failure, the second selection and the end.
 */
static const struct step reselected[] = {
	{ "submitted", "{\"repository\":\"demo\",\"submitter\":1000,"
	    "\"cohort\":\"c-20261201-0001\",\"variant\":1}" },
	{ "allocating", "{\"uid\":70009}" },
	{ "ready", "{}" },
	{ "running", "{}" },
	{ "result-ready", "{}" },
	{ "verifying", "{\"uid\":70010}" },
	{ "verdict", "{\"accepted\":true,\"findings\":[],\"nfindings\":0}" },
	{ "selectable", "{\"cohort\":\"c-20261201-0001\"}" },
	{ "selected", "{\"cohort\":\"c-20261201-0001\",\"uid\":4242}" },
	{ "publishing", "{}" },
	{ "publish-failed", "{\"cohort\":\"c-20261201-0001\",\"reason\":"
	    "\"publication failed: forge: 502\"}" },
	{ "selected", "{\"cohort\":\"c-20261201-0001\",\"uid\":4343}" },
	{ "publish-failed", "{\"cohort\":\"c-20261201-0001\"}" },
	{ "selected", "{\"cohort\":\"c-20261201-0001\",\"uid\":4444}" },
	{ "publishing", "{}" },
	{ "published", "{\"branch\":\"factory/z\",\"pull\":2}" },
	{ "teardown", "{}" },
	{ "terminated", "{}" },
	{ NULL, NULL }
};

START_TEST(test_replay_reselected)
{
	struct attempt	*a, *b;
	json_t		*f;

	ck_assert_int_eq(replay_cohort(1, COHORT1), 0);
	replay_equals_live(reselected, "a-20261201-0013", AS_TERMINATED);
	a = lifecycle_find(&live_list, "a-20261201-0013");
	b = lifecycle_find(&replay_list, "a-20261201-0013");
	ck_assert_int_eq(b->selected, 1);
	ck_assert_int_eq(b->selector, 4444);
	ck_assert_int_eq(b->outcome, AS_PUBLISHED);
	ck_assert_ptr_nonnull(b->select_failures);
	ck_assert_uint_eq(json_array_size(b->select_failures), 2);
	f = json_array_get(b->select_failures, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(f, "uid")), 4242);
	ck_assert_str_eq(json_string_value(json_object_get(f, "reason")),
	    "publication failed: forge: 502");
	f = json_array_get(b->select_failures, 1);
	ck_assert_int_eq(json_integer_value(json_object_get(f, "uid")), 4343);
	ck_assert_str_eq(json_string_value(json_object_get(f, "reason")),
	    "no reason given");
	ck_assert_ptr_eq(lifecycle_cohort_selected(&replay_list,
	    "c-20261201-0001"), b);
	ck_assert_ptr_eq(lifecycle_cohort_selected(&live_list,
	    "c-20261201-0001"), a);
}
END_TEST

/*
 * The lifecycle of a selection: publish-failed only from selected or
 * publishing, back to selectable and no longer the selection; a
 * selected member that ends (failed) is no longer the selection either.
 */
START_TEST(test_publish_failed)
{
	struct attempt	*a;
	json_t		*facts;

	a = in_state(AS_SELECTABLE);
	strlcpy(a->cohort, "c-20261201-0001", sizeof(a->cohort));
	ck_assert_int_eq(live(a, "publish-failed", NULL, 2), -1);
	ck_assert_int_eq(live(a, "selected", NULL, 2), 0);
	ck_assert_ptr_eq(lifecycle_cohort_selected(&live_list, a->cohort), a);
	/* selected, not yet sent: its send can fail too */
	ck_assert_int_eq(live(a, "publish-failed", NULL, 3), 0);
	ck_assert_int_eq(a->state, AS_SELECTABLE);
	ck_assert_int_eq(a->selected, 0);
	ck_assert_ptr_null(lifecycle_cohort_selected(&live_list, a->cohort));
	ck_assert_int_eq(live(a, "publish-failed", NULL, 4), -1);
	ck_assert_int_eq(live(a, "publishing", NULL, 4), -1);
	ck_assert_int_eq(live(a, "teardown", NULL, 4), -1);
	ck_assert_int_eq(live(a, "selected", NULL, 4), 0);
	ck_assert_int_eq(live(a, "publishing", NULL, 5), 0);
	ck_assert_int_eq(live(a, "publish-failed", NULL, 6), 0);
	ck_assert_int_eq(a->state, AS_SELECTABLE);
	ck_assert_uint_eq(json_array_size(a->select_failures), 2);
	/* ended while publishing: the selection is gone with it */
	ck_assert_int_eq(live(a, "selected", NULL, 7), 0);
	ck_assert_int_eq(live(a, "publishing", NULL, 8), 0);
	facts = json_pack("{s:s}", "reason", "bundle gone");
	ck_assert_int_eq(live(a, "failed", facts, 9), 0);
	json_decref(facts);
	ck_assert_int_eq(a->state, AS_FAILED);
	ck_assert_int_eq(a->selected, 0);
	ck_assert_ptr_null(lifecycle_cohort_selected(&live_list, a->cohort));
	ck_assert_uint_eq(json_array_size(a->select_failures), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    a->select_failures, 2), "reason")), "bundle gone");
	/*
	 * Replay refuses a publish-failed of an attempt that was never
	 * selected (a plain attempt publishing): no live run makes one.
	 */
	teardown();
	setup();
	a = in_state(AS_PUBLISHING);
	ck_assert_int_eq(replay_line(1, a->receipts[0], 1, 1), 0);
	lifecycle_find(&replay_list, a->id)->state = AS_PUBLISHING;
	ck_assert_int_eq(live(a, "publish-failed", NULL, 2), 0);
	ck_assert_int_eq(replay_line(2, a->receipts[1], 2, 0), -1);
	ck_assert_int_eq(lifecycle_find(&replay_list, a->id)->state,
	    AS_PUBLISHING);
	/* published: never failed after, the selection stays */
	teardown();
	setup();
	a = in_state(AS_PUBLISHING);
	strlcpy(a->cohort, "c-20261201-0001", sizeof(a->cohort));
	a->selected = 1;
	ck_assert_int_eq(live(a, "published", NULL, 2), 0);
	ck_assert_int_eq(live(a, "publish-failed", NULL, 3), -1);
	ck_assert_ptr_eq(lifecycle_cohort_selected(&live_list, a->cohort), a);
}
END_TEST

/* A selectable member is never approved, never publishes unselected. */
START_TEST(test_member_waits)
{
	struct attempt	*a;

	a = in_state(AS_SELECTABLE);
	ck_assert_int_eq(live(a, "approved", NULL, 2), -1);
	ck_assert_int_eq(live(a, "publishing", NULL, 2), -1);
	ck_assert_int_eq(live(a, "teardown", NULL, 2), -1);
	ck_assert_int_eq(live(a, "selectable", NULL, 2), -1);
	ck_assert_int_eq(a->state, AS_SELECTABLE);
	ck_assert_int_eq(live(a, "selected", NULL, 2), 0);
	/* selected once: a second one is refused by the table too */
	ck_assert_int_eq(live(a, "selected", NULL, 3), -1);
	ck_assert_int_eq(live(a, "approved", NULL, 3), -1);
	ck_assert_int_eq(live(a, "publishing", NULL, 3), 0);
	ck_assert_int_eq(a->state, AS_PUBLISHING);
}
END_TEST

/*
 * Replay refuses a member of a cohort never journaled, a variant the
 * cohort does not have, a malformed cohort record, one journaled twice.
 */
START_TEST(test_replay_cohort_refused)
{
	struct attempt	*a;
	json_t		*facts;
	const char	*bad[] = {
		"{}", "[]", "1", "{\"id\":\"c-1\"}",
		"{\"id\":\"a-20261201-0001\",\"size\":3,\"submitter\":1,"
		    "\"manifest_digest\":\"" DIGEST "\",\"repository\":\"d\"}",
		"{\"id\":\"c-20261201-0002\",\"size\":1,\"submitter\":1,"
		    "\"manifest_digest\":\"" DIGEST "\",\"repository\":\"d\"}",
		"{\"id\":\"c-20261201-0002\",\"size\":65,\"submitter\":1,"
		    "\"manifest_digest\":\"" DIGEST "\",\"repository\":\"d\"}",
		"{\"id\":\"c-20261201-0002\",\"size\":\"3\",\"submitter\":1,"
		    "\"manifest_digest\":\"" DIGEST "\",\"repository\":\"d\"}",
		"{\"id\":\"c-20261201-0002\",\"size\":3,\"submitter\":1,"
		    "\"manifest_digest\":\"sha256:ab\",\"repository\":\"d\"}",
	};
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(replay_cohort(1, bad[i]) == -1, "accepted %s",
		    bad[i]);
	ck_assert_ptr_null(TAILQ_FIRST(&replay_cohorts));
	/* a member before its cohort */
	a = fresh(&live_list, "a-20261201-0011");
	ck_assert_ptr_nonnull(facts = json_loads(member[0].facts, 0, NULL));
	ck_assert_int_eq(live(a, "submitted", facts, 1), 0);
	json_decref(facts);
	ck_assert_int_eq(replay_line(1, a->receipts[0], 1, 1), -1);
	ck_assert_ptr_null(TAILQ_FIRST(&replay_list));
	ck_assert_int_eq(replay_cohort(1, COHORT1), 0);
	ck_assert_int_eq(replay_cohort(2, COHORT1), -1);	/* twice */
	teardown();
	setup();
	/* a variant the cohort of 3 does not have */
	ck_assert_int_eq(replay_cohort(1, COHORT1), 0);
	a = fresh(&live_list, "a-20261201-0012");
	facts = json_pack("{s:s, s:i}", "cohort", "c-20261201-0001",
	    "variant", 3);
	ck_assert_int_eq(live(a, "submitted", facts, 1), 0);
	json_decref(facts);
	ck_assert_int_eq(replay_line(2, a->receipts[0], 1, 1), -1);
	ck_assert_ptr_null(TAILQ_FIRST(&replay_list));
}
END_TEST

/*
 * Replay refuses what select refuses: a second member of one cohort
 * selected (two chains, each valid alone), or a selection of an
 * attempt of no cohort.
 */
START_TEST(test_replay_second_selection)
{
	struct attempt	*a, *b;
	json_t		*facts;
	size_t		 i, j;
	uint64_t	 seq = 2;
	const char	*ids[] = { "a-20261201-0020", "a-20261201-0021" };

	ck_assert_int_eq(replay_cohort(1, COHORT1), 0);
	for (i = 0; i < 2; i++) {
		a = fresh(&live_list, ids[i]);
		/* submitted to selected: the steps before publishing */
		for (j = 0; strcmp(member[j].kind, "publishing") != 0; j++) {
			ck_assert_ptr_nonnull(facts = json_loads(
			    member[j].facts, 0, NULL));
			ck_assert_int_eq(live(a, member[j].kind, facts, j), 0);
			json_decref(facts);
		}
		ck_assert_int_eq(a->state, AS_SELECTED);
	}
	/* the first chain replays whole, the second up to its selection */
	a = lifecycle_find(&live_list, ids[0]);
	for (i = 0; i < a->nreceipts; i++)
		ck_assert_int_eq(replay_line(seq++, a->receipts[i], i, i == 0),
		    0);
	b = lifecycle_find(&live_list, ids[1]);
	for (i = 0; i + 1 < b->nreceipts; i++)
		ck_assert_int_eq(replay_line(seq++, b->receipts[i], i, i == 0),
		    0);
	ck_assert_int_eq(replay_line(seq, b->receipts[i], i, 0), -1);
	ck_assert_int_eq(lifecycle_find(&replay_list, ids[1])->state,
	    AS_SELECTABLE);
	ck_assert_ptr_eq(lifecycle_cohort_selected(&replay_list,
	    "c-20261201-0001"), lifecycle_find(&replay_list, ids[0]));
	/* once the first one's publication failed, the second replays */
	a = lifecycle_find(&live_list, ids[0]);
	ck_assert_int_eq(live(a, "publishing", NULL, 20), 0);
	ck_assert_int_eq(live(a, "publish-failed", NULL, 21), 0);
	ck_assert_int_eq(replay_line(seq++, a->receipts[a->nreceipts - 2], 20,
	    0), 0);
	ck_assert_int_eq(replay_line(seq++, a->receipts[a->nreceipts - 1], 21,
	    0), 0);
	ck_assert_ptr_null(lifecycle_cohort_selected(&replay_list,
	    "c-20261201-0001"));
	ck_assert_int_eq(replay_line(seq, b->receipts[b->nreceipts - 1],
	    22, 0), 0);
	ck_assert_ptr_eq(lifecycle_cohort_selected(&replay_list,
	    "c-20261201-0001"), lifecycle_find(&replay_list, ids[1]));
	teardown();
	setup();
	/* a selection of an attempt of no cohort */
	a = in_state(AS_SELECTABLE);
	ck_assert_int_eq(replay_line(1, a->receipts[0], 1, 1), 0);
	lifecycle_find(&replay_list, a->id)->state = AS_SELECTABLE;
	ck_assert_int_eq(live(a, "selected", NULL, 2), 0);
	ck_assert_int_eq(replay_line(2, a->receipts[1], 2, 0), -1);
}
END_TEST

static Suite *
lifecycle_suite(void)
{
	Suite	*s = suite_create("lifecycle");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_table_matches);
	tcase_add_test(tc, test_every_pair);
	tcase_add_test(tc, test_bad_state);
	tcase_add_test(tc, test_verdict_rejects);
	tcase_add_test(tc, test_replay_published);
	tcase_add_test(tc, test_stages);
	tcase_add_test(tc, test_stages_running);
	tcase_add_test(tc, test_stages_bad_times);
	tcase_add_test(tc, test_replay_failed);
	tcase_add_test(tc, test_replay_rejected);
	tcase_add_test(tc, test_replay_refuses_illegal);
	tcase_add_test(tc, test_replay_malformed);
	tcase_add_test(tc, test_replay_evidence);
	tcase_add_test(tc, test_replay_cohort);
	tcase_add_test(tc, test_member_waits);
	tcase_add_test(tc, test_replay_cohort_refused);
	tcase_add_test(tc, test_replay_second_selection);
	tcase_add_test(tc, test_replay_reselected);
	tcase_add_test(tc, test_publish_failed);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(lifecycle_suite());
	int	 nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (nf == 0 ? 0 : 1);
}
