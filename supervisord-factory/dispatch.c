/*
 * The parent's side of each child: one table of handlers (vmd's and
 * OpenSSH monitor's shape), what each message of a worker, verifier,
 * publisher or reconciler means for an attempt, and what a child's
 * coming up or going away means.  A message is decoded and checked
 * here (msg.c); what it changes goes down to the attempts (attempt.c)
 * and cohorts (cohort.c).
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "esc.h"
#include "factoryd.h"
#include "image.h"
#include "invmsg.h"
#include "journal.h"
#include "log.h"
#include "receipt.h"
#include "toolchain.h"
#include "wire.h"

#include "attempt.h"

/* Messages about attempts from the children. */

/*
 * What each child may send, decoded into one struct.  -1 (the child
 * is killed) for a message that child may not send or that does not
 * decode; why says which.
 */
union child_msg {
	struct msg_resolved	 resolved;
	struct msg_ready	 ready;
	struct msg_result	 result;
	struct msg_error	 error;
	struct msg_validate_req	 validate_req;
	struct msg_verdict	 verdict;
	struct msg_published	 published;
	struct msg_diffed	 diffed;
	struct msg_pchecked	 pchecked;
};

/*
 * The attempt a child's message is about, if it is in a state where
 * that message makes sense and the epoch is current.  A message that
 * comes too late (the attempt was cancelled) is logged and dropped.
 * The id was decoded (msg.h): it is printable.
 */
static struct attempt *
child_attempt(struct child *c, const char *id, uint64_t epoch,
    enum attempt_state want, int check_epoch)
{
	struct attempt	*a;

	if ((a = attempt_find(id)) == NULL) {
		log_warnx("%s: message for unknown attempt %s",
		    factory_procs[c->id].name, id);
		return (NULL);
	}
	if (a->state != want) {
		log_warnx("%s: %s is %s, message dropped",
		    factory_procs[c->id].name, a->id,
		    attempt_state_name(a->state));
		return (NULL);
	}
	if (check_epoch && epoch != a->epoch) {
		log_warnx("%s: %s: stale epoch %llu (current %llu), refused",
		    factory_procs[c->id].name, a->id,
		    (unsigned long long)epoch, (unsigned long long)a->epoch);
		return (NULL);
	}
	return (a);
}

/* The listed changes, as the receipt and factoryctl show keep them. */
static json_t *
changes_json(const struct msg_result *m)
{
	json_t	*list;
	size_t	 i;

	/* Out of memory is fatal: a change is never silently left out. */
	if ((list = json_array()) == NULL)
		fatal(NULL);
	for (i = 0; i < m->nchanges; i++)
		if (json_array_append_new(list, json_pack("{s:s, s:s}",
		    "status", m->changes[i].status, "path",
		    m->changes[i].path)) == -1)
			fatal(NULL);
	return (list);
}

/*
 * The worker's result: rejected if it counted any reject, whatever it
 * listed.  Every listed path and reason is in the suite's encoding
 * (esc.h), which is printable ASCII: safe in a receipt, a log line and
 * factoryctl show.
 */
static void
worker_result(struct attempt *a, const struct msg_result *m)
{
	json_t		*rejects, *facts;
	size_t		 i, shown;
	char		 buf[1024] = "";

	if (m->rejects_total > 0) {
		if ((rejects = json_array()) == NULL)
			fatal(NULL);
		/* Whole reasons only: an escape is never cut in two. */
		for (i = 0, shown = 0; i < m->nrejects; i++) {
			if (json_array_append_new(rejects,
			    json_string(m->rejects[i])) == -1)
				fatal(NULL);
			if (strlen(buf) + strlen(m->rejects[i]) + 2 + 32 >=
			    sizeof(buf))
				continue;
			if (shown > 0)
				strlcat(buf, "; ", sizeof(buf));
			strlcat(buf, m->rejects[i], sizeof(buf));
			shown++;
		}
		if (m->rejects_total > shown)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			    "%sand %llu more", shown > 0 ? "; " : "",
			    (unsigned long long)(m->rejects_total - shown));
		facts = json_pack("{s:s, s:o, s:I}", "reason", buf, "rejects",
		    rejects, "rejects_total", (json_int_t)m->rejects_total);
		log_info("%s: rejected: %s", a->id, buf);
		if (attempt_transition(a, "rejected", facts, NULL) == 0)
			attempt_teardown(a);
		return;
	}
	facts = json_pack("{s:s, s:s, s:s, s:I, s:o, s:I}", "commit",
	    m->commit, "tree", m->tree, "bundle_sha256", m->bundle_sha256,
	    "bundle_size", (json_int_t)m->bundle_size, "changes",
	    changes_json(m), "changes_total", (json_int_t)m->changes_total);
	if (attempt_transition(a, "result-ready", facts, NULL) == -1)
		return;
	crashpoint("parent:after-result-ready");
	log_info("%s: result ready, commit %s", a->id, a->commit);
	attempt_verify(a);
}

static int
child_msg_kind(struct child *c, uint32_t type, enum msg_kind *k)
{
	switch (c->id) {
	case PROC_WORKER:
		if (type == IMSG_RESOLVE)
			*k = MSG_RESOLVED;
		else if (type == IMSG_READY)
			*k = MSG_READY;
		else if (type == IMSG_RESULT)
			*k = MSG_RESULT;
		else if (type == IMSG_DIFF)
			*k = MSG_DIFFED;
		else if (type == IMSG_ERROR)
			*k = MSG_ERROR;
		else
			return (-1);
		return (0);
	case PROC_VERIFIER:
		if (type == IMSG_VALIDATE_REQ)
			*k = MSG_VALIDATE_REQ;
		else if (type == IMSG_VERDICT)
			*k = MSG_VERDICT;
		else if (type == IMSG_PRISTINE_CHECK)
			*k = MSG_PCHECKED;
		else if (type == IMSG_ERROR)
			*k = MSG_ERROR;
		else
			return (-1);
		return (0);
	case PROC_PUBLISHER:
		if (type == IMSG_PUBLISHED)
			*k = MSG_PUBLISHED;
		else if (type == IMSG_ERROR)
			*k = MSG_ERROR;
		else if (type == IMSG_PUBLISH_LATE)
			*k = MSG_LATE;
		else
			return (-1);
		return (0);
	default:
		return (-1);
	}
}

static int
worker_msg(struct child *c, enum msg_kind k, union child_msg *m)
{
	struct attempt	*a;

	switch (k) {
	case MSG_RESOLVED:
		attempt_resolved(&m->resolved);
		return (0);
	case MSG_READY:
		if ((a = child_attempt(c, m->ready.id, m->ready.epoch,
		    AS_PROVISIONING, 1)) == NULL)
			return (0);
		if (attempt_transition(a, "ready", a->t[ST_CHECKOUT] != 0 ?
		    json_pack("{s:I}", "checkout_ms", (json_int_t)(now_ms() -
		    a->t[ST_CHECKOUT])) : NULL, NULL) == 0)
			attempt_start_agent(a);
		return (0);
	case MSG_RESULT:
		if ((a = child_attempt(c, m->result.id, m->result.epoch,
		    AS_RUNNING, 1)) == NULL)
			return (0);
		worker_result(a, &m->result);
		return (0);
	case MSG_DIFFED:
		cohort_diffed(&m->diffed);
		return (0);
	case MSG_ERROR:
		if ((a = attempt_find(m->error.id)) != NULL &&
		    !attempt_terminal(a) && (a->state == AS_PROVISIONING ||
		    a->state == AS_RUNNING))
			attempt_fail(a, "failed", "worker: %s", m->error.error);
		return (0);
	default:
		return (-1);
	}
}

/*
 * A signed verdict must also say one thing: accepted only with no
 * finding counted or listed and a passed validation; every finding in
 * the suite's encoding.  A verifier that signs a contradiction is
 * refused (and killed) like one that signs garbage.  The facts are the
 * message's typed fields, the very ones the signed line was rebuilt
 * from: no JSON of the verifier's is read.
 */
static int
verdict_consistent(const struct msg_verdict *v, char *err, size_t errlen)
{
	size_t	 i;

	if (v->findings_total < v->nfindings) {
		snprintf(err, errlen, "accepted, findings or nfindings "
		    "missing or mistyped");
		return (-1);
	}
	for (i = 0; i < v->nfindings; i++)
		if (!esc_valid(v->findings[i])) {
			snprintf(err, errlen, "finding %zu is not an escaped "
			    "string", i);
			return (-1);
		}
	if (v->accepted && (v->findings_total != 0 || !v->validated ||
	    !v->vpassed)) {
		snprintf(err, errlen, "accepted with %llu findings or no "
		    "passed validation", (unsigned long long)v->findings_total);
		return (-1);
	}
	/* Validated on a baseline the verifier found to be its tree. */
	if (v->accepted && (strcmp(v->pristine, "same") != 0 ||
	    v->baseline_tree[0] == '\0')) {
		snprintf(err, errlen, "accepted without its baseline tree "
		    "checked");
		return (-1);
	}
	if (!v->accepted && (v->reason == NULL || !esc_valid(v->reason))) {
		snprintf(err, errlen, "rejected without a reason");
		return (-1);
	}
	return (0);
}

/*
 * An accepted verdict states the environment frozen at submission: a
 * verifier that passed a result on another image, or none, lies.
 * facts is our own encoding of the verdict's typed fields.
 */
static int
verdict_environment(struct attempt *a, const struct msg_verdict *v,
    json_t *facts, char *err, size_t errlen)
{
	json_t	*got, *want;
	int	 ret = 0;

	got = json_object_get(facts, "environment");
	want = env_facts(a->image, a->toolchain, NULL);
	if (v->accepted && (got == NULL || !json_equal(got, want))) {
		snprintf(err, errlen, "accepted on an environment that is not "
		    "the attempt's");
		ret = -1;
	}
	json_decref(want);
	return (ret);
}

static int
verifier_verdict(struct child *c, struct attempt *a,
    const struct msg_verdict *v, char *why, size_t whylen)
{
	json_t		*facts;
	char		*line = NULL, err[512];
	int		 idx = child_index(c);

	if ((facts = receipt_verdict_facts(v)) == NULL) {
		snprintf(err, sizeof(err), "facts that make no receipt");
		goto refused;
	}
	/*
	 * The signed line must be the one we make of the typed fields,
	 * byte for byte, under the verifier's signature: then what we
	 * journal is our own encoding, and nothing it wrote is parsed.
	 */
	if (receipt_rebuild(a->id, a->nreceipts, "verdict", v->epoch,
	    a->prev, RECEIPT_SIGNER_VERIFIER, env->verifier_pub, facts,
	    (time_t)v->time, v->sig, v->receipt, &line, err,
	    sizeof(err)) == -1)
		goto refused;
	/* The table decides here too: replay would refuse it. */
	if (!lifecycle_legal(a, transition_find("verdict"))) {
		snprintf(err, sizeof(err), "illegal from state %s",
		    attempt_state_name(a->state));
		goto refused;
	}
	if (verdict_consistent(v, err, sizeof(err)) == -1 ||
	    verdict_environment(a, v, facts, err, sizeof(err)) == -1 ||
	    attest_verdict(a, v->vsa, v->test_result, v->accepted,
	    err, sizeof(err)) == -1)
		goto refused;
	json_decref(facts);
	env->busy[idx] = NULL;
	a->verifier = NULL;
	c->recycle = 1;		/* it exits after one verdict */
	if (attempt_commit(a, line, NULL) == -1) {
		free(line);
		return (0);
	}
	free(line);
	/*
	 * A verifier that found the pristine tree under the validation
	 * not to be the baseline's tree: the cache entry is poisoned, and
	 * goes before another attempt takes it as its baseline.
	 */
	if (strcmp(v->pristine, "differs") == 0)
		pristine_poisoned(a, v->reason);
	crashpoint("parent:after-verdict");
	attempt_verdict_next(a);
	return (0);
 refused:
	json_decref(facts);
	free(line);
	log_warnx("%s: verdict refused: %s", a->id, err);
	snprintf(why, whylen, "VERDICT refused: %s", err);
	return (-1);
}

static int
verifier_msg(struct child *c, enum msg_kind k, union child_msg *m,
    char *why, size_t whylen)
{
	struct attempt	*a;
	const char	*id;
	char		 err[1024];
	int		 idx = child_index(c);

	id = k == MSG_VALIDATE_REQ ? m->validate_req.id : k == MSG_VERDICT ?
	    m->verdict.id : k == MSG_PCHECKED ? m->pchecked.id : m->error.id;
	if ((a = env->busy[idx]) == NULL || strcmp(a->id, id) != 0) {
		snprintf(why, whylen, "%s for %s, not what it was given",
		    msg_kind_name(k), id);
		return (-1);
	}
	switch (k) {
	case MSG_VALIDATE_REQ:
		if (a->state != AS_VERIFYING || a->run != NULL) {
			snprintf(why, whylen, "VALIDATE_REQ out of turn");
			return (-1);
		}
		if (a->validate_req) {
			snprintf(why, whylen, "VALIDATE_REQ asked twice");
			return (-1);
		}
		a->validate_req = 1;
		/* A job checks the setup entry first: fresh, not the verifier's. */
		a->setup_vchecked = 0;
		if (attempt_validate(a, err, sizeof(err)) == -1)
			attempt_fail(a, "failed", "%s", err);
		return (0);
	case MSG_VERDICT:
		return (verifier_verdict(c, a, &m->verdict, why, whylen));
	case MSG_PCHECKED:
		return (attempt_pchecked(c, a, &m->pchecked, why, whylen));
	case MSG_ERROR:
		env->busy[idx] = NULL;
		a->verifier = NULL;
		attempt_fail(a, "failed", "verifier: %s", m->error.error);
		return (0);
	default:
		return (-1);
	}
}

static int
publisher_msg(struct child *c, enum msg_kind k, union child_msg *m,
    char *why, size_t whylen)
{
	struct attempt	*a;
	json_t		*facts;

	switch (k) {
	case MSG_PUBLISHED:
		if (adopt_answer(m->published.id, &m->published, NULL))
			return (0);
		if ((a = child_attempt(c, m->published.id, 0, AS_PUBLISHING,
		    0)) == NULL)
			return (0);
		facts = json_pack("{s:s, s:I, s:s, s:b}",
		    "branch", m->published.branch,
		    "pull", (json_int_t)m->published.number,
		    "record", m->published.record,
		    "reused", m->published.reused);
		if (attempt_transition(a, "published", facts, NULL) == -1)
			return (0);
		log_info("%s: published %s, pull request %d", a->id,
		    a->branch, a->pull);
		attempt_after_published(a);
		return (0);
	case MSG_ERROR:
		if (adopt_answer(m->error.id, NULL, m->error.error))
			return (0);
		if ((a = child_attempt(c, m->error.id, 0, AS_PUBLISHING,
		    0)) == NULL)
			return (0);
		/* A cohort's selection failed: the cohort is not lost. */
		if (a->cohort[0] != '\0')
			cohort_publish_failed(a, m->error.error);
		else
			attempt_fail(a, "failed", "publisher: %s",
			    m->error.error);
		return (0);
	case MSG_LATE:
		/* Not begun: asked again while its lease holds. */
		switch (adopt_late(m->error.id, m->error.error)) {
		case 1:
			return (0);
		case -1:
			snprintf(why, whylen, "LATE for the adoption of %s, "
			    "which is not late", m->error.id);
			return (-1);
		}
		if ((a = child_attempt(c, m->error.id, 0, AS_PUBLISHING,
		    0)) == NULL)
			return (0);
		/*
		 * Not asked, never asked to begin by a time, or that time
		 * not come on the clock both share: a lie, not a wait.
		 */
		if (!a->publish_sent || a->fleet_epoch == 0 ||
		    a->fleet_begin_by == 0 || boot_ms() < a->fleet_begin_by) {
			snprintf(why, whylen, "LATE for %s, which is not late",
			    a->id);
			return (-1);
		}
		log_warnx("%s: publisher: %s: asked again", a->id,
		    m->error.error);
		a->publish_sent = 0;
		attempt_schedule();
		return (0);
	default:
		return (-1);
	}
}

/*
 * The reconciler's ERROR: one string of at most INVMSG_ERRORMAX bytes
 * (invmsg.h), nothing after it.  Its text is the reconciler's, so it
 * is logged in the esc.h encoding, never as it came.
 */
static int
reconciler_error(const void *data, size_t len, char *why, size_t whylen)
{
	struct mread	 m;
	char		*s, *text;

	m_open(&m, "ERROR", data, len, why, whylen);
	if (m_get_strdup(&m, "error", INVMSG_ERRORMAX, &s) == -1 ||
	    m_end(&m) == -1) {
		free(s);
		return (-1);
	}
	if ((text = esc_strdup(s, strlen(s))) == NULL)
		fatal(NULL);
	log_warnx("reconciler: %s", text);
	free(text);
	free(s);
	return (0);
}

/*
 * The parent's side of each kind of child, reached from the dispatch
 * table in factoryd.c: 0 if handled, -1 if the message is not one this
 * child may send or does not decode (proc.c kills the child, logging
 * why).
 */
int
dispatch_reconciler(struct child *c, struct imsg *imsg, char *why,
    size_t whylen)
{
	struct ibuf	 ib;
	int		 ret = -1;

	why[0] = '\0';
	if (imsg_get_ibuf(imsg, &ib) == -1) {
		snprintf(why, whylen, "malformed imsg type %u",
		    imsg_get_type(imsg));
		return (-1);
	}
	if (imsg_get_type(imsg) == IMSG_INVENTORY) {
		if ((ret = reconcile_inventory(ibuf_data(&ib),
		    ibuf_size(&ib))) == -1)
			snprintf(why, whylen, "INVENTORY: malformed");
	} else if (imsg_get_type(imsg) == IMSG_ERROR)
		ret = reconciler_error(ibuf_data(&ib), ibuf_size(&ib), why,
		    whylen);
	attempt_schedule();
	if (ret == -1 && why[0] == '\0')
		snprintf(why, whylen, "unexpected imsg type %u",
		    imsg_get_type(imsg));
	return (ret);
}

/* A typed message (msg.h) from a worker, verifier or publisher. */
static int
dispatch_typed(struct child *c, struct imsg *imsg, char *why, size_t whylen)
{
	union child_msg	 m;
	enum msg_kind	 k;
	int		 ret = -1;

	why[0] = '\0';
	if (child_msg_kind(c, imsg_get_type(imsg), &k) == -1) {
		snprintf(why, whylen, "unexpected imsg type %u",
		    imsg_get_type(imsg));
		return (-1);
	}
	if (msg_get(imsg, k, &m, why, whylen) == -1)
		return (-1);
	switch (c->id) {
	case PROC_WORKER:
		ret = worker_msg(c, k, &m);
		break;
	case PROC_VERIFIER:
		ret = verifier_msg(c, k, &m, why, whylen);
		break;
	case PROC_PUBLISHER:
		ret = publisher_msg(c, k, &m, why, whylen);
		break;
	default:
		break;
	}
	msg_free(k, &m);
	attempt_schedule();
	return (ret);
}

int
dispatch_worker(struct child *c, struct imsg *imsg, char *why,
    size_t whylen)
{
	return (dispatch_typed(c, imsg, why, whylen));
}

int
dispatch_verifier(struct child *c, struct imsg *imsg, char *why,
    size_t whylen)
{
	return (dispatch_typed(c, imsg, why, whylen));
}

int
dispatch_publisher(struct child *c, struct imsg *imsg, char *why,
    size_t whylen)
{
	return (dispatch_typed(c, imsg, why, whylen));
}

/* A child died: what it held cannot complete. */
void
verifier_lost(struct child *c)
{
	struct attempt	*a;
	int		 idx = child_index(c);

	if ((a = env->busy[idx]) == NULL)
		return;
	env->busy[idx] = NULL;
	a->verifier = NULL;
	if (a->run != NULL && a->run->validation) {
		/* Its validation run goes with it. */
		a->run->cancelled = 1;
		run_kill(a->run);
	}
	if (a->pcheck == 2) {
		log_info("%s: verifier died checking the baseline; again",
		    a->id);
		a->pcheck = 1;		/* attempt_schedule() asks again */
		return;
	}
	if (a->state == AS_VERIFYING && a->verifies >= 3)
		attempt_fail(a, "failed", "verifier died, three times");
	else if (a->state == AS_VERIFYING) {
		log_info("%s: verifier died; verifying again", a->id);
		a->reverify = 1;
	}
}

/* A verification or a baseline check is under way in it. */
int
verifier_busy(struct child *c)
{
	return (env->busy[child_index(c)] != NULL);
}

/*
 * A PUBLISH is outstanding.  Killed in the middle of a push to a local
 * forge, the publisher leaves git's ref lock behind, and every later
 * try of that branch fails on it.
 */
int
publisher_busy(struct child *c)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (a->state == AS_PUBLISHING && a->publish_sent)
			return (1);
	return (adopt_busy());
}

void
publisher_lost(struct child *c)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		a->publish_sent = 0;	/* idempotent: send again */
	adopt_publisher_lost();
}

void
worker_lost(struct child *c)
{
	struct attempt	*a;

	/*
	 * Stopped on purpose (a reload changed its command line: recycle
	 * is still set here), it did not fail: its work is driven on
	 * under a new lease that does not count against the three.
	 */
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (attempt_held_by_worker(a))
			attempt_new_lease(a, c->recycle ? "worker restarted "
			    "for a new configuration" : "worker lost",
			    c->recycle);
	/*
	 * Its baselines will not come: nothing of theirs is journaled.
	 * The restarted worker is asked again, once more than it died.
	 */
	pending_lost(c);
	reply_wait_fail(CTL_WAIT_DIFF, "the worker died before it made "
	    "the diff; it is restarted, try again");
}

/* Resend what the lost holder was doing. */
static void
attempt_redrive(struct attempt *a)
{
	char	 tree[PATH_MAX];

	a->redrive = 0;
	if (a->state == AS_PROVISIONING) {
		/* Whatever the last one left of the checkout goes. */
		snprintf(tree, sizeof(tree), "%s/upper", a->dir);
		if (fs_remove_tree(tree) == -1) {
			attempt_fail(a, "failed", "%s: %s", tree,
			    strerror(errno));
			return;
		}
		snprintf(tree, sizeof(tree), "%s/tree", a->dir);
		if (disk_overlay_unmount(a->dir, "tree") == -1 ||
		    fs_remove_tree(tree) == -1 || fs_mkdir_owned(a->dir, 0700,
		    env->conf->users[PROC_WORKER].uid,
		    env->conf->users[PROC_WORKER].gid) == -1) {
			attempt_fail(a, "failed", "%s: %s", a->dir,
			    strerror(errno));
			return;
		}
		if (a->disk != 0 && disk_mount(a->dir, a->disk,
		    env->conf->users[PROC_WORKER].uid,
		    env->conf->users[PROC_WORKER].gid, tree,
		    sizeof(tree)) == -1) {
			attempt_fail(a, "failed", "%s", tree);
			return;
		}
		snprintf(tree, sizeof(tree), "%s/collect.git", a->dir);
		(void)fs_remove_tree(tree);
		attempt_send_provision(a);
	} else if (attempt_held_by_worker(a)) {
		snprintf(tree, sizeof(tree), "%s/collect.git", a->dir);
		(void)fs_remove_tree(tree);
		attempt_collect(a);
	}
}

void
worker_ready(struct child *c)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (a->redrive)
			attempt_redrive(a);
	pending_resend(c);
	attempt_schedule();
}

void
reconciler_ready(struct child *c)
{
	reconcile_start(NULL);
	attempt_schedule();
}

/* A factoryctl reconcile waiting on it is answered. */
void
reconciler_lost(struct child *c)
{
	reconcile_child_lost();
}

/* A restarted factory-egress gets every endpoint again. */
void
egress_ready(struct child *c)
{
	egress_child_ready();
	attempt_schedule();
}

/* A verifier or the publisher is up: work may wait for it. */
void
child_ready(struct child *c)
{
	attempt_schedule();
}

/* Every service of a's run is ready: that run starts. */
void
attempt_services_ready(struct attempt *a, int validation)
{
	if (validation)
		attempt_schedule();	/* its validate_req is still set */
	else
		attempt_start_agent(a);
}

/* A service failed, before or during its run. */
void
attempt_services_failed(struct attempt *a, const char *why)
{
	if (attempt_terminal(a))
		attempt_teardown(a);
	else
		attempt_fail(a, "failed", "%s", why);
}

/* The services a teardown stopped are gone: it goes on. */
void
attempt_services_gone(struct attempt *a)
{
	if (attempt_terminal(a) || a->state == AS_TEARDOWN)
		attempt_teardown(a);
}

/* The parent's side of each kind of child (vmd's shape). */
const struct child_handler child_handlers[] = {
	{ PROC_WORKER,		dispatch_worker,	worker_ready,
	    worker_lost,	NULL },
	{ PROC_VERIFIER,	dispatch_verifier,	child_ready,
	    verifier_lost,	verifier_busy },
	{ PROC_PUBLISHER,	dispatch_publisher,	child_ready,
	    publisher_lost,	publisher_busy },
	{ PROC_RECONCILER,	dispatch_reconciler,	reconciler_ready,
	    reconciler_lost,	NULL },
	/* It sends nothing but HELLO: any other message is malformed. */
	{ PROC_EGRESS,		NULL,			egress_ready,
	    NULL,		NULL },
	/* One import per process (image.c): lost ends the import. */
	{ PROC_IMAGE,		dispatch_image,		image_ready,
	    image_lost,		NULL },
	/* Usage, tokens and errors; a restart gets every live grant. */
	{ PROC_GATEWAY,		dispatch_gateway,	gateway_ready,
	    NULL,		NULL },
	/* Only with a fleet: block (fleet.c). */
	{ PROC_FLEET,		fleet_dispatch,		fleet_ready,
	    fleet_lost,		NULL },
	/* Only with a preview: block (preview.c). */
	{ PROC_PREVIEW,		preview_dispatch,	preview_ready,
	    NULL,		NULL },
};
const size_t nchild_handlers = sizeof(child_handlers) /
    sizeof(child_handlers[0]);
