/*
 * Cohorts (best-of-N): N attempts of one frozen manifest, of which a
 * person selects at most one to publish.
 *
 * A cohort is one journal record, written before any of its members
 * exists; each member is a full attempt whose "submitted" receipt
 * names the cohort and its variant.  A verified member never publishes
 * alone: it waits in "selectable".  "factoryctl select" journals a
 * "selected" receipt in that member's chain (with the operator's uid)
 * and sends it to the publisher; the others go on waiting, their
 * results kept, and no other select is taken meanwhile.  Only once the
 * selected one has published are the others ended.  If its
 * publication fails, a "publish-failed" receipt makes it selectable
 * again and the cohort may be selected again: a forge's failure
 * cannot lose the cohort.  The selection is read back from the
 * chains, never kept beside them, so a crash anywhere after it
 * resumes into the same state: cohort_recover() sends the selected
 * one on or ends the others (by their exact ids, once), and the
 * publisher's idempotency key makes one branch and one pull request of
 * any PUBLISH sent again.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "factoryd.h"
#include "journal.h"
#include "log.h"
#include "msg.h"

static struct dayseq	 cohort_ids;

struct cohort *
cohort_find(const char *id)
{
	return (lifecycle_cohort_find(&env->cohorts, id));
}

static unsigned
cohort_highest(const char *day)
{
	struct cohort	*co;
	unsigned	 n, max = 0;

	TAILQ_FOREACH(co, &env->cohorts, entry)
		if ((n = dayseq_number(co->id, day)) > max)
			max = n;
	return (max);
}

/* "c-YYYYMMDD-NNNN" (dayseq_next). */
void
cohort_newid(char *buf, size_t len)
{
	dayseq_next(&cohort_ids, 'c', cohort_highest, buf, len);
}

/*
 * The cohort's record, fsynced before any member is allocated; then
 * it exists here as replay would rebuild it.
 */
int
cohort_journal(struct cohort *co, char *err, size_t errlen)
{
	struct timespec	 ts;
	json_t		*o, *rec;
	char		*payload;
	uint64_t	 ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	o = json_pack("{s:s, s:i, s:i, s:s, s:s}", "id", co->id, "size",
	    co->size, "submitter", (int)co->submitter, "manifest_digest",
	    co->digest, "repository", co->repo);
	rec = json_pack("{s:O, s:I}", "cohort", o, "ms", (json_int_t)ms);
	if (o == NULL || rec == NULL ||
	    (payload = json_dumps(rec, JSON_COMPACT)) == NULL)
		fatal(NULL);
	json_decref(rec);
	if (journal_append(env->journal, payload, strlen(payload), NULL) ==
	    -1) {
		log_warn("%s: journal append of the cohort", co->id);
		snprintf(err, errlen, "journal refused the cohort (disk "
		    "full?): not accepted");
		free(payload);
		json_decref(o);
		return (-1);
	}
	free(payload);
	if (lifecycle_cohort_record(&env->cohorts, o, ms, err, errlen) == -1)
		fatalx("%s: own cohort record refused: %s", co->id, err);
	json_decref(o);
	log_info("%s: cohort of %d submitted by uid %u, manifest %s", co->id,
	    co->size, (unsigned)co->submitter, co->digest);
	return (0);
}

/* The member that is the cohort's selection, or NULL. */
static struct attempt *
cohort_selected(const struct cohort *co)
{
	return (lifecycle_cohort_selected(&env->attempts, co->id));
}

/*
 * Is the selection's publication over?  Published, or (a repository
 * that publishes nowhere) torn down selected.  Until then the others
 * wait.
 */
static int
cohort_selection_done(const struct attempt *sel)
{
	return (sel->state == AS_PUBLISHED || sel->outcome == AS_PUBLISHED ||
	    sel->outcome == AS_SELECTED);
}

/*
 * Every member but the selected one ends without publication: a
 * running one is killed, a selectable one cancelled.  Those already
 * ended are left as they are, so this may run again after a crash.
 */
static void
cohort_end_others(const struct cohort *co, const struct attempt *sel)
{
	struct attempt	*a, *next;
	char		 why[128];

	snprintf(why, sizeof(why), "not selected: %s selected %s", co->id,
	    sel->id);
	for (a = TAILQ_FIRST(&env->attempts); a != NULL; a = next) {
		next = TAILQ_NEXT(a, entry);
		if (a == sel || strcmp(a->cohort, co->id) != 0 ||
		    attempt_terminal(a))
			continue;
		log_info("%s: %s", a->id, why);
		attempt_cancel_why(a, sel->selector, why);
	}
}

/*
 * The selected member has published (or, publishing nowhere, is done):
 * only now are the others torn down.
 */
void
cohort_published(struct attempt *sel)
{
	struct cohort	*co;

	if ((co = cohort_find(sel->cohort)) == NULL)
		fatalx("%s: cohort %s is not known", sel->id, sel->cohort);
	cohort_end_others(co, sel);
	crashpoint("parent:cohort-torn-down");
}

/*
 * The selected member's publication failed (the publisher's error: the
 * forge refused, failed or dropped it).  It waits again with its
 * result, the others were never touched: the cohort may be selected
 * again.  The failure is journaled in its chain, with why.
 */
void
cohort_publish_failed(struct attempt *a, const char *error)
{
	char	 why[MSG_ERRLEN + 64];

	snprintf(why, sizeof(why), "publication failed: %s", error);
	log_info("%s: %s; cohort %s may be selected again", a->id, why,
	    a->cohort);
	if (attempt_mark(a, "publish-failed", json_pack("{s:s, s:s}",
	    "cohort", a->cohort, "reason", why)) == -1)
		return;		/* kept and tried again (attempt_stall) */
	crashpoint("parent:cohort-publish-failed");
}

_Static_assert(COHORT_SUPERSEDE_MAX == COHORT_SIZE_MAX - 1,
    "a PUBLISH names every other member of the largest cohort");

/*
 * A member's PUBLISH names its cohort, and the other members whose
 * selection did not publish them (a publish-failed, or an end while
 * publishing): the forge may hold a branch and a pull request of
 * theirs, made before the failure (the forge created the pull request
 * and its answer was lost).  The publisher closes those and deletes
 * those branches before it opens this member's, so that the cohort
 * ends with one pull request.  The member itself is never named: its
 * own pull request, if there is one, is reused.  The list is read from
 * the chains, so a PUBLISH sent again after a restart names the same.
 * -1 if out of memory.
 */
int
cohort_publish_fill(const struct attempt *a, struct msg_publish *m)
{
	struct attempt	*o;
	size_t		 n = 0;

	strlcpy(m->cohort, a->cohort, sizeof(m->cohort));
	m->supersede = NULL;
	m->nsupersede = 0;
	TAILQ_FOREACH(o, &env->attempts, entry)
		if (o != a && strcmp(o->cohort, a->cohort) == 0 &&
		    json_array_size(o->select_failures) > 0 &&
		    o->commit[0] != '\0')
			n++;
	if (n == 0)
		return (0);
	if (n > COHORT_SUPERSEDE_MAX)
		fatalx("%s: cohort %s: %zu members to supersede", a->id,
		    a->cohort, n);
	if ((m->supersede = calloc(n, sizeof(*m->supersede))) == NULL)
		return (-1);
	TAILQ_FOREACH(o, &env->attempts, entry) {
		if (o == a || strcmp(o->cohort, a->cohort) != 0 ||
		    json_array_size(o->select_failures) == 0 ||
		    o->commit[0] == '\0')
			continue;
		strlcpy(m->supersede[m->nsupersede].id, o->id,
		    sizeof(m->supersede[0].id));
		strlcpy(m->supersede[m->nsupersede].commit, o->commit,
		    sizeof(m->supersede[0].commit));
		m->nsupersede++;
	}
	log_info("%s: supersedes %zu member%s of cohort %s whose selection "
	    "failed", a->id, m->nsupersede, m->nsupersede == 1 ? "" : "s",
	    a->cohort);
	return (0);
}

/*
 * A member's verdict accepted it: it waits for the selection, unless
 * the selection has published meanwhile and it is one of the others.
 */
void
cohort_member_verified(struct attempt *a)
{
	struct cohort	*co;
	struct attempt	*sel;

	if ((co = cohort_find(a->cohort)) == NULL)
		fatalx("%s: cohort %s is not known", a->id, a->cohort);
	if ((sel = cohort_selected(co)) != NULL &&
	    cohort_selection_done(sel)) {
		cohort_end_others(co, sel);
		return;
	}
	if (attempt_mark(a, "selectable", json_pack("{s:s}", "cohort",
	    co->id)) == 0)
		log_info("%s: verified: selectable in cohort %s", a->id,
		    co->id);
}

/*
 * After a restart: a cohort whose selection has published ends its
 * others; one whose selection was journaled but not sent is sent on
 * (one publishing is sent again by attempt_schedule()).  Members of a
 * cohort whose selection failed just wait: replay made them selectable.
 */
void
cohort_recover(void)
{
	struct cohort	*co;
	struct attempt	*sel;

	TAILQ_FOREACH(co, &env->cohorts, entry) {
		if ((sel = cohort_selected(co)) == NULL)
			continue;
		if (cohort_selection_done(sel))
			cohort_end_others(co, sel);
		else
			attempt_publish_selected(sel);
	}
}

/*
 * factoryctl select MEMBER.  Refused, with the reason: an unknown id,
 * an attempt of no cohort, a cohort whose selection is publishing or
 * has published, a member that is not verified (still running,
 * failed, rejected, cancelled).  The others are not touched here: they
 * wait until the selected one has published (cohort_published).
 */
int
cohort_select(const char *id, uid_t uid, char *err, size_t errlen)
{
	struct attempt	*a, *sel;
	struct cohort	*co;

	if ((a = attempt_find(id)) == NULL) {
		snprintf(err, errlen, "%s: no such attempt", id);
		return (-1);
	}
	if (a->cohort[0] == '\0' || (co = cohort_find(a->cohort)) == NULL) {
		snprintf(err, errlen, "%s is not a member of a cohort: "
		    "approve it instead", a->id);
		return (-1);
	}
	if ((sel = cohort_selected(co)) != NULL &&
	    !cohort_selection_done(sel)) {
		snprintf(err, errlen, "cohort %s: selection in progress: %s "
		    "publishing (selected by uid %u)", co->id, sel->id,
		    (unsigned)sel->selector);
		return (-1);
	}
	if (sel != NULL) {
		snprintf(err, errlen, "cohort %s: %s is already selected "
		    "(%s, by uid %u)", co->id, sel->id, attempt_state_name(
		    sel->outcome != AS_MAX ? sel->outcome : sel->state),
		    (unsigned)sel->selector);
		return (-1);
	}
	if (a->state != AS_SELECTABLE) {
		snprintf(err, errlen, "%s is %s, not verified: only a "
		    "verified member of cohort %s can be selected", a->id,
		    attempt_state_name(a->outcome != AS_MAX ? a->outcome :
		    a->state), co->id);
		return (-1);
	}
	if (attempt_mark(a, "selected", json_pack("{s:s, s:i}", "cohort",
	    co->id, "uid", (int)uid)) == -1) {
		snprintf(err, errlen, "journal refused the selection");
		return (-1);
	}
	log_info("%s: selected by uid %u in cohort %s; the others wait "
	    "until it has published", a->id, (unsigned)uid, co->id);
	crashpoint("parent:cohort-selected");
	attempt_publish_selected(a);
	return (0);
}

/* factoryctl cancel COHORT: every member still under way. */
int
cohort_cancel(const char *id, uid_t uid, char *err, size_t errlen)
{
	struct cohort	*co;
	struct attempt	*a, *next;
	char		 why[128];
	int		 n = 0;

	if ((co = cohort_find(id)) == NULL) {
		snprintf(err, errlen, "%s: no such cohort", id);
		return (-1);
	}
	snprintf(why, sizeof(why), "cancelled by uid %u (cohort %s)",
	    (unsigned)uid, co->id);
	for (a = TAILQ_FIRST(&env->attempts); a != NULL; a = next) {
		next = TAILQ_NEXT(a, entry);
		if (strcmp(a->cohort, co->id) != 0 || attempt_terminal(a) ||
		    attempt_publishing(a))
			continue;
		attempt_cancel_why(a, uid, why);
		n++;
	}
	log_info("%s: cancel requested by uid %u: %d members", co->id,
	    (unsigned)uid, n);
	if (n == 0) {
		snprintf(err, errlen, "%s: no member left to cancel (ended, "
		    "or publishing)", co->id);
		return (-1);
	}
	return (n);
}

/*
 * The verdict's validation result, as its receipt's facts recorded it
 * (lifecycle.c, live and on replay): only the typed fields are taken.
 */
static json_t *
member_validation(const struct attempt *a)
{
	json_t	*v = a->validation;

	if (!json_is_object(v) || !json_is_boolean(json_object_get(v,
	    "passed")))
		return (json_null());
	return (json_pack("{s:b, s:b, s:I}", "passed",
	    json_is_true(json_object_get(v, "passed")), "timedout",
	    json_is_true(json_object_get(v, "timedout")), "status",
	    json_integer_value(json_object_get(v, "status"))));
}

static const char *
member_verdict(const struct attempt *a)
{
	if (a->verdict == NULL)
		return ("none");
	return (a->rejected_by_verdict ? "rejected" : "accepted");
}

/* What factoryctl cohort shows of one member, side by side. */
static json_t *
member_json(struct attempt *a)
{
	json_t	*o, *full;

	full = attempt_json(a);
	o = json_pack("{s:s, s:s, s:s, s:i, s:b, s:o}", "id", a->id,
	    "state", json_string_value(json_object_get(full, "state")),
	    "verdict", member_verdict(a), "variant", a->variant,
	    "selected", a->selected, "validation", member_validation(a));
	if (o == NULL)
		fatal(NULL);
	json_object_set_new(o, "files_changed", json_integer((json_int_t)
	    (a->changes_total > json_array_size(a->changes) ?
	    a->changes_total : json_array_size(a->changes))));
	json_object_set(o, "changes", a->changes != NULL ? a->changes :
	    json_array());
	json_object_set(o, "usage", json_object_get(full, "usage"));
	json_object_set(o, "stages", json_object_get(full, "stages"));
	/* The model gateway's metering, for a member that has a grant. */
	if (json_object_get(full, "model") != NULL)
		json_object_set(o, "spend", json_object_get(full, "model"));
	if (a->reason != NULL)
		json_object_set_new(o, "reason", json_string(a->reason));
	if (a->pull > 0)
		json_object_set_new(o, "pull", json_integer(a->pull));
	if (a->select_failures != NULL)
		json_object_set(o, "failed_selections", a->select_failures);
	json_decref(full);
	return (o);
}

/* A member's failed selections, each naming it, into the cohort's. */
static void
failures_json(json_t *out, const struct attempt *a)
{
	json_t	*f, *o;
	size_t	 i;

	json_array_foreach(a->select_failures, i, f) {
		if ((o = json_deep_copy(f)) == NULL ||
		    json_object_set_new(o, "member", json_string(a->id)) == -1)
			fatal(NULL);
		json_array_append_new(out, o);
	}
}

static int
by_ms(const void *x, const void *y)
{
	json_int_t	 a, b;

	a = json_integer_value(json_object_get(*(json_t *const *)x, "ms"));
	b = json_integer_value(json_object_get(*(json_t *const *)y, "ms"));
	return (a < b ? -1 : a > b);
}

/* The failed selections in the order they failed. */
static void
failures_sort(json_t *arr)
{
	json_t	**v;
	size_t	 i, n = json_array_size(arr);

	if (n < 2)
		return;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		fatal(NULL);
	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), by_ms);
	json_array_clear(arr);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}

json_t *
cohort_json(const char *id, char *err, size_t errlen)
{
	struct cohort	*co;
	struct attempt	*a, *sel;
	json_t		*o, *members, *failed;

	if ((co = cohort_find(id)) == NULL) {
		snprintf(err, errlen, "%s: no such cohort", id);
		return (NULL);
	}
	if ((members = json_array()) == NULL || (failed = json_array()) ==
	    NULL)
		fatal(NULL);
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (strcmp(a->cohort, co->id) == 0) {
			json_array_append_new(members, member_json(a));
			failures_json(failed, a);
		}
	failures_sort(failed);
	sel = cohort_selected(co);
	o = json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:s?, s:o, s:o}",
	    "id", co->id, "size", co->size, "submitter", (int)co->submitter,
	    "repository", co->repo, "manifest_digest", co->digest,
	    "created_ms", (json_int_t)co->ms,
	    "selected", sel != NULL ? sel->id : NULL,
	    "failed_selections", failed, "members", members);
	if (o == NULL)
		fatal(NULL);
	return (o);
}

/* Every cohort, for list and status: its id, size, selection. */
json_t *
cohorts_json(void)
{
	struct cohort	*co;
	struct attempt	*sel;
	json_t		*arr;

	if ((arr = json_array()) == NULL)
		fatal(NULL);
	TAILQ_FOREACH(co, &env->cohorts, entry) {
		sel = cohort_selected(co);
		json_array_append_new(arr, json_pack("{s:s, s:i, s:s?}",
		    "id", co->id, "size", co->size, "selected",
		    sel != NULL ? sel->id : NULL));
	}
	return (arr);
}

/*
 * factoryctl diff ID: the worker makes the patch of a result that is
 * still there (collected, not torn down); the answer comes later.
 */
void
cohort_diff_request(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	struct msg_diff	 m;
	char		 err[MSG_ERRLEN];

	if ((a = reply_attempt(c, imsg)) == NULL)
		return;
	if (tenant_may_act(c, "diff", a, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	if (a->commit[0] == '\0') {
		reply_fail(c, "%s is %s: no result to diff", a->id,
		    attempt_state_name(a->outcome != AS_MAX ? a->outcome :
		    a->state));
		return;
	}
	if (a->torn_down || a->state == AS_TEARDOWN) {
		reply_fail(c, "%s is torn down: its result is gone (the "
		    "pull request has it if it was published)", a->id);
		return;
	}
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, a->id, sizeof(m.id));
	strlcpy(m.dir, a->dir, sizeof(m.dir));
	strlcpy(m.baseline, a->baseline, sizeof(m.baseline));
	strlcpy(m.commit, a->commit, sizeof(m.commit));
	m.req = reply_wait(c, CTL_WAIT_DIFF, NULL, NULL);
	if (proc_compose_msg(PROC_WORKER, IMSG_DIFF, MSG_DIFF, -1, &m, err,
	    sizeof(err)) == -1) {
		reply_wait_take(m.req, CTL_WAIT_DIFF, NULL);
		reply_fail(c, "%s", errno == EAGAIN ?
		    "worker not running, try again" : err);
	}
}

/* The worker's patch, in the escaped form, to the client that asked. */
void
cohort_diffed(const struct msg_diffed *m)
{
	struct ctl_conn	*c;

	if ((c = reply_wait_take(m->req, CTL_WAIT_DIFF, NULL)) == NULL) {
		if (!reply_wait_issued(m->req))
			log_warnx("worker: diff for unknown request %u",
			    m->req);
		return;
	}
	if (m->error[0] != '\0') {
		reply_fail(c, "diff: %s", m->error);
		return;
	}
	reply_obj(c, json_pack("{s:s, s:I, s:b}", "patch", m->patch,
	    "bytes", (json_int_t)m->bytes, "truncated", m->truncated));
}
