/*
 * The attempts' core: each transition journaled and signed, and the
 * steps it authorizes (scheduling, provisioning, the agent's run,
 * collect, verify, publish, teardown).  What drives it sits above:
 * the children's messages (dispatch.c), submission and recovery
 * (submit.c), the control requests (control.c).
 *
 * Every transition is one journal record holding one signed receipt;
 * the record is fsynced before the step it authorizes has any effect,
 * and the state is rebuilt from the same records at start.  What a
 * record means (the table, the apply, the replay) is in lifecycle.c.
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
#include "journal.h"
#include "log.h"
#include "receipt.h"
#include "toolchain.h"

#include "attempt.h"

static void	attempt_provision(struct attempt *);
static void	attempt_send_worker(struct attempt *, uint32_t, enum msg_kind,
		    const void *, char *, size_t);
static int	attempt_baseline_checked(struct attempt *, char *, size_t);
static void	attempt_stall(struct attempt *, const char *, const char *,
		    json_t *);
static void	attempt_after_exit(struct attempt *);

/*
 * What a teardown waits for before it judges: tasks leaving their
 * cgroups (every 2 ms, half a second at most) and a uid's processes
 * dying (three looks, 20 ms apart).  The loop goes on meanwhile.
 */
#define TEARDOWN_KILL_MS	20
#define TEARDOWN_KILL_LOOKS	3

/*
 * Append a receipt line to the attempt's journal and chain, then apply
 * it.  -1 if the journal refused it (disk full): nothing changed.
 */
int
attempt_commit(struct attempt *a, const char *line, json_t *extra)
{
	json_t			*rec, *r;
	const struct transition	*t;
	char			*payload;
	const char		*kind;
	uint64_t		 ms = now_ms();
	json_error_t		 jerr;

	if ((r = json_loads(line, 0, &jerr)) == NULL)
		fatalx("%s: own receipt does not parse", a->id);
	kind = json_string_value(json_object_get(r, "kind"));
	if (kind == NULL || (t = transition_find(kind)) == NULL)
		fatalx("%s: receipt of unknown kind", a->id);

	rec = extra != NULL ? json_incref(extra) : json_object();
	json_object_set_new(rec, "receipt", json_string(line));
	json_object_set_new(rec, "ms", json_integer((json_int_t)ms));
	if ((payload = json_dumps(rec, JSON_COMPACT)) == NULL)
		fatal("json_dumps");
	json_decref(rec);
	if (journal_append(env->journal, payload, strlen(payload), NULL) ==
	    -1) {
		/* Once, and once a minute while it stays refused. */
		if (a->stall_tries % 60 == 0)
			log_warn("%s: journal append of %s", a->id, kind);
		attempt_stall(a, kind, line, extra);
		free(payload);
		json_decref(r);
		return (-1);
	}
	free(payload);

	lifecycle_chain(a, t, line, r, ms);
	log_debug("%s: %s -> %s", a->id, kind, attempt_state_name(a->state));
	json_decref(r);
	return (0);
}

/*
 * A transition decided by the parent: checked against the table,
 * signed with the receipt key, journaled, applied.  facts is stolen.
 */
int
attempt_transition(struct attempt *a, const char *kind, json_t *facts,
    json_t *extra)
{
	const struct transition	*t;
	char			*line;
	int			 ret;

	if ((t = transition_find(kind)) == NULL)
		fatalx("transition to unknown kind %s", kind);
	if (!lifecycle_legal(a, t)) {
		log_warnx("%s: illegal transition %s from state %s, refused",
		    a->id, kind, attempt_state_name(a->state));
		json_decref(facts);
		return (-1);
	}
	if (facts == NULL)
		facts = json_object();
	if (receipt_make(a->id, a->nreceipts, kind, a->epoch, a->prev,
	    RECEIPT_SIGNER_RECEIPTS, env->receipt_key, facts, &line) == -1)
		fatalx("%s: cannot sign a receipt", a->id);
	json_decref(facts);
	ret = attempt_commit(a, line, extra);
	free(line);
	return (ret);
}

void
attempt_fail(struct attempt *a, const char *kind, const char *fmt, ...)
{
	va_list	 ap;
	char	 buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_info("%s: %s: %s", a->id, kind, buf);
	if (attempt_transition(a, kind, json_pack("{s:s}", "reason", buf),
	    NULL) == -1)
		return;
	attempt_teardown(a);
}

/*
 * A record the journal refused (the state file system is full) must
 * not leave its attempt where it was.  It is kept and tried again from
 * a timer while the daemon goes on serving; once journaled, the
 * attempt goes on from there.  Only the records that end an attempt,
 * and the agent's exit, are kept as they were: for any other, the
 * attempt fails with a reason once the journal takes records again.
 * Records the caller answers for (submitted, approved, selected,
 * evidence) or
 * that only inform (reaped, shell) are not kept.
 */
#define STALL_RETRY_SEC	1

static const char *const stall_kept[] = {
	"failed", "cancelled", "rejected", "published", "teardown",
	"terminated", "exited", "verdict", "selectable", "publish-failed",
	NULL
};
static const char *const stall_skipped[] = {
	"submitted", "approved", "selected", "reaped", "shell", "fleet-sent",
	"preview", "preview-opened", "preview-health", "preview-closed",
	"preview-kept", "evidence", NULL
};

static int
kind_in(const char *kind, const char *const *list)
{
	size_t	 i;

	for (i = 0; list[i] != NULL; i++)
		if (strcmp(kind, list[i]) == 0)
			return (1);
	return (0);
}

static void	attempt_unstall_cb(int, short, void *);

static void
attempt_stall(struct attempt *a, const char *kind, const char *line,
    json_t *extra)
{
	struct timeval	 tv = { STALL_RETRY_SEC, 0 };

	if (kind_in(kind, stall_skipped))
		return;
	/* The first refused decision stands. */
	if (a->stall_line == NULL) {
		if ((a->stall_line = strdup(line)) == NULL)
			fatal(NULL);
		a->stall_extra = extra != NULL ? json_incref(extra) : NULL;
		if (a->stall_tries++ % 60 == 0)
			log_warnx("journal: %s: %s refused (%s), retrying "
			    "every %ds", a->id, kind, strerror(errno),
			    STALL_RETRY_SEC);
	}
	if (!a->stall_set) {
		evtimer_set(&a->stall_ev, attempt_unstall_cb, a);
		evtimer_add(&a->stall_ev, &tv);
		a->stall_set = 1;
	}
}

/*
 * Published, in the journal: a cohort's other members go (they waited
 * for this), then the attempt's own teardown.  Every path to published
 * comes here, the one that waited for journal space too.
 */
void
attempt_after_published(struct attempt *a)
{
	if (a->cohort[0] != '\0') {
		crashpoint("parent:cohort-published");
		report_published(a);
	}
	attempt_teardown(a);
}

/* The refused record is in the journal now: what it was to lead to. */
static void
attempt_stall_next(struct attempt *a, const char *kind)
{
	/* A selectable member waits for the selection: nothing follows. */
	if (strcmp(kind, "terminated") == 0 || strcmp(kind, "selectable") ==
	    0 || strcmp(kind, "publish-failed") == 0)
		return;
	if (strcmp(kind, "exited") == 0)
		attempt_after_exit(a);
	else if (strcmp(kind, "verdict") == 0)
		attempt_verdict_next(a);
	else if (strcmp(kind, "published") == 0)
		attempt_after_published(a);
	else
		attempt_teardown(a);
}

/* Try the refused record again, exactly as it was signed if it can be. */
static int
attempt_unstall(struct attempt *a, const char *line, json_t *extra,
    char *kind, size_t kindlen)
{
	json_t		*r;
	int		 same, ret;

	if ((r = json_loads(line, 0, NULL)) == NULL)
		fatalx("%s: own receipt does not parse", a->id);
	strlcpy(kind, json_string_value(json_object_get(r, "kind")), kindlen);
	same = (size_t)json_integer_value(json_object_get(r, "seq")) ==
	    a->nreceipts && strcmp(json_string_value(json_object_get(r,
	    "prev")), a->prev) == 0;
	if (!kind_in(kind, stall_kept))
		ret = -1;
	else if (same)
		ret = attempt_commit(a, line, extra);
	else if (strcmp(kind, "verdict") == 0)
		ret = -1;	/* the verifier's signature is for that place */
	else
		ret = attempt_transition(a, kind, json_deep_copy(
		    json_object_get(r, "facts")), extra);
	json_decref(r);
	return (ret);
}

static void
attempt_unstall_cb(int fd, short event, void *arg)
{
	struct attempt	*a = arg;
	json_t		*extra;
	char		*line, kind[RECEIPT_KIND_MAX + 1];
	int		 ret;

	a->stall_set = 0;
	if ((line = a->stall_line) == NULL || a->torn_down) {
		free(line);
		a->stall_line = NULL;
		return;
	}
	extra = a->stall_extra;
	a->stall_line = NULL;
	a->stall_extra = NULL;
	ret = attempt_unstall(a, line, extra, kind, sizeof(kind));
	free(line);
	json_decref(extra);
	if (a->stall_line != NULL)
		return;		/* refused again; the timer is set */
	a->stall_tries = 0;
	if (ret == 0)
		attempt_stall_next(a, kind);
	else if (!attempt_terminal(a) && a->state != AS_TEARDOWN)
		attempt_fail(a, "failed", "the journal refused its %s record "
		    "(state file system full)", kind);
	else
		attempt_teardown(a);
	attempt_schedule();
}

int
attempt_init(char *err, size_t errlen)
{
	char		 path[PATH_MAX];
	const char	*sub[] = { "attempts", "verify", "logs", "publish",
	    "pristine" };
	struct lifecycle_replay replay = { &env->attempts, env->conf->statedir,
	    &env->cohorts };
	size_t		 i;

	TAILQ_INIT(&env->attempts);
	TAILQ_INIT(&env->cohorts);
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", env->conf->statedir,
		    sub[i]);
		if (mkdir(path, 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return (-1);
		}
	}
	/*
	 * The image store's top, root's (image.h): it exists before the
	 * first verifier starts, whose Landlock rule names it.
	 */
	snprintf(path, sizeof(path), "%s/images", env->conf->statedir);
	if (mkdir(path, 0711) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (setup_init(err, errlen) == -1)
		return (-1);
	/* The publisher's caches (forge github): its own. */
	snprintf(path, sizeof(path), "%s/publish", env->conf->statedir);
	if (fs_mkdir_owned(path, 0700, env->conf->users[PROC_PUBLISHER].uid,
	    env->conf->users[PROC_PUBLISHER].gid) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	snprintf(path, sizeof(path), "%s/journal", env->conf->statedir);
	env->replaying = 1;
	if (journal_open(path, &env->journal, lifecycle_replay, &replay, err,
	    errlen) == -1)
		return (-1);
	env->replaying = 0;
	log_info("journal: %llu records replayed",
	    (unsigned long long)journal_seq(env->journal));
	return (0);
}

static void
schedule_cb(int fd, short event, void *arg)
{
	attempt_schedule();
}

/* Look again in a second: nothing else may happen when space returns. */
static void
schedule_later(void)
{
	static struct event	 ev;
	static int		 set;
	struct timeval		 tv = { STALL_RETRY_SEC, 0 };

	if (!set) {
		evtimer_set(&ev, schedule_cb, NULL);
		set = 1;
	}
	if (!evtimer_pending(&ev, NULL))
		evtimer_add(&ev, &tv);
}

void
attempt_schedule(void)
{
	struct attempt	*a;
	char		 err[512];
	int		 active = 0;

	if (env->replaying || env->shutting_down)
		return;
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (attempt_active(a))
			active++;
	TAILQ_FOREACH(a, &env->attempts, entry) {
		if ((a->state == AS_RESULT_READY || a->reverify) &&
		    a->verifier == NULL)
			attempt_verify(a);
		if (a->validate_req &&
		    attempt_validate(a, err, sizeof(err)) == -1)
			attempt_fail(a, "failed", "%s", err);
		if (a->state == AS_PUBLISHING && !a->publish_sent)
			attempt_publish(a);
		if (a->state == AS_READY && a->pcheck == 1 &&
		    a->verifier == NULL)
			attempt_start_agent(a);
	}
	/* What the journal keeps in reserve is for ending, not starting. */
	if (!journal_reserve_held(env->journal)) {
		schedule_later();
		return;
	}
	TAILQ_FOREACH(a, &env->attempts, entry) {
		if (active >= env->conf->max_attempts)
			break;
		if (a->state != AS_QUEUED)
			continue;
		attempt_provision(a);
		if (attempt_active(a))
			active++;
	}
}

static struct conf_repo *
attempt_repo(struct attempt *a)
{
	struct conf_repo	*r;

	if ((r = conf_repo(env->conf, a->m->repository)) == NULL)
		attempt_fail(a, "failed", "repository %s is no longer "
		    "configured", a->m->repository);
	return (r);
}

/* queued -> provisioning: journal the allocation, then make it. */
static void
attempt_provision(struct attempt *a)
{
	struct conf_repo	*repo;
	struct sandbox		 sb;
	json_t			*facts, *cg, *su;
	uid_t			 uid, uids[1 + 2 * MANIFEST_SERVICES];
	uint64_t		 bytes;
	char			 s1[PATH_MAX + 64], s2[32], lower[PATH_MAX];
	int			 i;

	if ((repo = attempt_repo(a)) == NULL)
		return;
	/*
	 * The agent's uid and each service's, beside the agent and beside
	 * validation: all, or it stays queued.
	 */
	if (uid_allocate_n(uids, 1 + 2 * a->m->nservices) == -1)
		return;
	uid = uids[0];
	memset(&sb, 0, sizeof(sb));
	if (sandbox_cgroup_paths(a->id, &sb) == -1) {
		attempt_fail(a, "failed", "no cgroup layout on this host");
		return;
	}
	cg = json_array();
	for (i = 0; i < sb.ncgroups; i++)
		json_array_append_new(cg, json_string(sb.cgroups[i]));
	if ((bytes = disk_limit(a->m)) > env->conf->disk_max) {
		attempt_fail(a, "failed", "limits: disk: %s is more than the %s "
		    "attempt-disk max", conf_size(bytes, s1, sizeof(s1)),
		    conf_size(env->conf->disk_max, s2, sizeof(s2)));
		return;
	}
	if (pristine_path(a->repo, a->baseline, "", lower, sizeof(lower)) ==
	    -1) {
		json_decref(cg);
		attempt_fail(a, "failed", "%s: pristine path too long",
		    a->repo);
		return;
	}
	facts = json_pack("{s:i, s:s, s:o, s:o, s:o}", "uid", (int)uid,
	    "dir", a->dir, "cgroups", cg, "disk", disk_facts(a->dir, bytes),
	    "overlay", disk_overlay_facts(lower, a->dir, "tree"));
	if (a->m->nservices > 0) {
		su = json_array();
		for (i = 0; i < 2 * a->m->nservices; i++)
			json_array_append_new(su, json_integer(uids[1 + i]));
		json_object_set_new(facts, "service_uids", su);
	}
	a->epoch = 1;		/* the first lease */
	if (attempt_transition(a, "allocating", facts, NULL) == -1)
		return;
	crashpoint("parent:after-allocating");

	/* The worker writes here; the agent sees only tree/, later. */
	if (fs_mkdir_owned(a->dir, 0700, env->conf->users[PROC_WORKER].uid,
	    env->conf->users[PROC_WORKER].gid) == -1) {
		attempt_fail(a, "failed", "%s: %s", a->dir, strerror(errno));
		return;
	}
	if (disk_mount(a->dir, a->disk, env->conf->users[PROC_WORKER].uid,
	    env->conf->users[PROC_WORKER].gid, s1, sizeof(s1)) == -1) {
		attempt_fail(a, "failed", "%s", s1);
		return;
	}
	crashpoint("parent:after-dir");
	a->t[ST_CHECKOUT] = now_ms();
	attempt_send_provision(a);
}

void
attempt_send_provision(struct attempt *a)
{
	struct conf_repo	*repo;
	struct msg_provision	 m;
	char			 err[MSG_ERRLEN];

	if ((repo = attempt_repo(a)) == NULL)
		return;
	memset(&m, 0, sizeof(m));
	/* A cold commit: the worker checks it out for everyone. */
	if (pristine_prepare(a, m.pristine, sizeof(m.pristine), err,
	    sizeof(err)) == -1 || pristine_path(a->repo, a->baseline, "",
	    m.lower, sizeof(m.lower)) == -1) {
		attempt_fail(a, "failed", "%s", err);
		return;
	}
	strlcpy(m.id, a->id, sizeof(m.id));
	m.epoch = a->epoch;
	strlcpy(m.repo, repo->path, sizeof(m.repo));
	strlcpy(m.baseline, a->baseline, sizeof(m.baseline));
	strlcpy(m.dir, a->dir, sizeof(m.dir));
	attempt_send_worker(a, IMSG_PROVISION, MSG_PROVISION, &m, err,
	    sizeof(err));
}

/*
 * A request to the worker; if it is not running, sent again when it
 * is back.  One that cannot be encoded fails the attempt, with why.
 */
static void
attempt_send_worker(struct attempt *a, uint32_t type, enum msg_kind k,
    const void *m, char *err, size_t errlen)
{
	if (proc_compose_msg(PROC_WORKER, type, k, -1, m, err, errlen) == 0)
		return;
	if (errno == EAGAIN)
		a->redrive = 1;		/* when the worker is back */
	else
		attempt_fail(a, "failed", "cannot send %s: %s",
		    msg_kind_name(k), err);
}

/*
 * Before a's agent (or its setup) takes the pristine tree as its
 * baseline: a verifier must have found it to be the baseline's tree
 * (its mark, pristine.c).  1: it has; 0: a verifier checks it now, or
 * will (attempt_schedule), and a goes on when it answers; -1 with err.
 */
static int
attempt_baseline_checked(struct attempt *a, char *err, size_t errlen)
{
	struct conf_repo	*repo;
	struct attempt		*b;
	struct msg_pcheck	 m;
	struct child		*v;
	char			 path[PATH_MAX], tree[41];
	int			 fd;

	switch (pristine_checked(a->repo, a->baseline, tree)) {
	case 1:
		a->pcheck = 0;
		return (1);
	case -1:
		snprintf(err, errlen, "pristine tree of %s: check mark: %s",
		    a->baseline, strerror(errno));
		return (-1);
	}
	if (a->pcheck == 2)
		return (0);
	a->pcheck = 1;
	TAILQ_FOREACH(b, &env->attempts, entry)
		if (b != a && b->pcheck == 2 && strcmp(b->repo, a->repo) ==
		    0 && strcmp(b->baseline, a->baseline) == 0)
			return (0);	/* on its way, for both */
	if (a->pchecks >= 3) {
		snprintf(err, errlen, "pristine tree of %s: no verifier "
		    "answered, three times", a->baseline);
		return (-1);
	}
	if ((v = verifier_free()) == NULL || (repo = attempt_repo(a)) == NULL)
		return (0);
	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1 || (fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "pristine tree %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, a->id, sizeof(m.id));
	strlcpy(m.repo, repo->path, sizeof(m.repo));
	strlcpy(m.baseline, a->baseline, sizeof(m.baseline));
	if (msg_compose(&v->iev, IMSG_PRISTINE_CHECK, MSG_PCHECK, fd, &m,
	    err, errlen) == -1)
		return (-1);
	a->verifier = v;
	env->busy[child_index(v)] = a;
	a->pcheck = 2;
	a->pchecks++;
	log_info("%s: pristine %s/%s: checked by verifier pid %d before its "
	    "first use", a->id, a->repo, a->baseline, (int)v->pid);
	return (0);
}

/*
 * The verifier's answer: the pristine tree is the baseline's (marked,
 * and a goes on), or it is not (evicted, a fails), or it could not
 * tell (a fails).  The verifier served its one request.
 */
int
attempt_pchecked(struct child *c, struct attempt *a,
    const struct msg_pchecked *m, char *why, size_t whylen)
{
	if (a->pcheck != 2 || a->verifier != c ||
	    strcmp(m->baseline, a->baseline) != 0) {
		snprintf(why, whylen, "PRISTINE_CHECK answer out of turn");
		return (-1);
	}
	env->busy[child_index(c)] = NULL;
	a->verifier = NULL;
	a->pcheck = 0;
	c->recycle = 1;		/* it exits after one answer */
	if (m->differs) {
		pristine_poisoned(a, m->error);
		attempt_fail(a, "failed", "baseline: pristine tree of %s is "
		    "not its tree %s: %s (evicted)", a->baseline, m->tree,
		    m->error);
		return (0);
	}
	if (!m->same) {
		attempt_fail(a, "failed", "baseline: pristine tree of %s not "
		    "checked: %s", a->baseline, m->error);
		return (0);
	}
	if (pristine_mark_checked(a->repo, a->baseline, m->tree) == -1) {
		attempt_fail(a, "failed", "baseline: pristine tree of %s: "
		    "cannot mark it checked: %s", a->baseline,
		    strerror(errno));
		return (0);
	}
	log_info("%s: pristine %s/%s is the baseline's tree %s", a->id,
	    a->repo, a->baseline, m->tree);
	attempt_start_agent(a);
	return (0);
}

/* a's cold checkout sealed (err NULL), or not: on, or failed. */
static void
attempt_pristine_sealed(struct attempt *a, const char *err)
{
	if (err != NULL)
		attempt_fail(a, "failed", "%s", err);
	else
		attempt_start_agent(a);
}

/* ready: hand the tree to the attempt's uid and start the agent. */
void
attempt_start_agent(struct attempt *a)
{
	struct run_with	 w;
	char		 tree[PATH_MAX], err[512];
	json_t		*facts, *cg;
	int		 i;

	snprintf(tree, sizeof(tree), "%s/tree", a->dir);
	/* No byte of the worker's reaches the agent unchecked. */
	switch (attempt_pristine(a, attempt_pristine_sealed, err,
	    sizeof(err))) {
	case -1:
		attempt_fail(a, "failed", "%s", err);
		return;
	case 1:
		return;		/* when the seal is done */
	}
	switch (attempt_baseline_checked(a, err, sizeof(err))) {
	case -1:
		attempt_fail(a, "failed", "baseline: %s", err);
		return;
	case 0:
		return;		/* when a verifier answers */
	}
	/* A fleet's claim whose lease is not surely live waits. */
	if (a->run == NULL && !attempt_gate(a, ATTEMPT_GATE_RUN))
		return;
	if (a->m->setup != NULL && !a->setup_ready) {
		if (a->run != NULL)
			return;		/* setup runs */
		if (attempt_env_check(a, err, sizeof(err)) == -1) {
			attempt_fail(a, "failed", "environment: %s", err);
			return;
		}
		if (attempt_pristine(a, NULL, err, sizeof(err)) == -1) {
			attempt_fail(a, "failed", "%s", err);
			return;
		}
		switch (setup_begin(a, err, sizeof(err))) {
		case -1:
			attempt_fail(a, "failed", "%s", err);
			return;
		case 0:
			return;		/* attempt_setup_done() goes on */
		}
	}
	/* Its tree (once), then its services, which may be shown it. */
	if (attempt_mount_tree(a, err, sizeof(err)) == -1) {
		attempt_fail(a, "failed", "%s", err);
		return;
	}
	switch (service_ready(a, 0, err, sizeof(err))) {
	case -1:
		attempt_fail(a, "failed", "services: %s", err);
		return;
	case 0:
		return;		/* attempt_services_ready() goes on */
	}
	if (a->m->nservices > 0)
		attempt_part_time(a, PART_SERVICES, service_ready_ms(a));
	if (attempt_env_check(a, err, sizeof(err)) == -1) {
		attempt_fail(a, "failed", "environment: %s", err);
		return;
	}
	memset(&w, 0, sizeof(w));
	w.kind = RUN_AGENT;
	service_with(a, &w);
	if ((a->run = run_start_with(a, &w, tree, err, sizeof(err))) == NULL) {
		attempt_fail(a, "failed", "sandbox: %s", err);
		return;
	}
	a->t[ST_RUN] = a->run->started_ms;
	cg = json_array();
	for (i = 0; i < a->run->sb.ncgroups; i++)
		json_array_append_new(cg, json_string(a->run->sb.cgroups[i]));
	/* The kernel features the sandbox runs without or replaced. */
	facts = json_pack("{s:i, s:i, s:o, s:o, s:{s:s, s:s}}", "uid",
	    (int)a->uid, "pid", (int)a->run->sb.pid, "cgroups", cg,
	    "environment", env_facts(a->image, a->toolchain, NULL), "sandbox",
	    "downgraded", sandbox_downgrade_text(), "replaced",
	    sandbox_replaced_text());
	if (a->m->setup != NULL)
		json_object_set_new(facts, "setup", setup_facts(a));
	if (a->m->nservices > 0)
		json_object_set_new(facts, "services", service_facts(a));
	if (attempt_transition(a, "running", facts, NULL) == -1) {
		a->run->cancelled = 1;
		run_kill(a->run);
	}
	crashpoint("parent:after-running");
	preview_open(a);
	log_info("%s: agent running as uid %u (epoch %llu)", a->id,
	    (unsigned)a->uid, (unsigned long long)a->epoch);
}

void
attempt_collect(struct attempt *a)
{
	struct conf_repo	*repo;
	struct msg_collect	 m;
	char			 err[MSG_ERRLEN];

	if ((repo = attempt_repo(a)) == NULL)
		return;
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, a->id, sizeof(m.id));
	m.epoch = a->epoch;
	strlcpy(m.repo, repo->path, sizeof(m.repo));
	strlcpy(m.baseline, a->baseline, sizeof(m.baseline));
	strlcpy(m.dir, a->dir, sizeof(m.dir));
	m.scope = a->m->scope;		/* borrowed */
	m.nscope = strv_len(a->m->scope);
	strlcpy(m.title, a->m->title, sizeof(m.title));
	strlcpy(m.digest, a->digest, sizeof(m.digest));
	m.tree_limit = a->m->limits.tree;
	snprintf(m.bundle, sizeof(m.bundle), "%s/bundle", a->dir);
	attempt_send_worker(a, IMSG_COLLECT, MSG_COLLECT, &m, err,
	    sizeof(err));
}

static void
attempt_agent_done(struct attempt *a, struct run *r)
{
	json_t		*facts, *disk;
	const char	*limit;
	char		 why[256];
	int		 st = r->status, timedout = r->timedout, full;

	a->run = NULL;
	a->usage = r->usage;
	preview_ended(a);
	audit_flush();
	facts = json_pack("{s:i, s:b, s:b, s:o, s:I, s:b, s:O, s:o}",
	    "status", st, "timedout", timedout, "cancelled", r->cancelled,
	    "usage", usage_json(&r->usage), "log_bytes",
	    (json_int_t)r->logged, "log_truncated", r->logtrunc,
	    "seccomp_denials", a->denials != NULL ? a->denials : json_array(),
	    "times", run_times(a, r));
	if (a->m->model.provider[0] != '\0' || a->m->nupstreams > 0)
		json_object_set_new(facts, "model", spend_json(&a->spend));
	if ((limit = run_limit("agent", a->m, 1, &r->usage, st, why,
	    sizeof(why))) != NULL)
		json_object_set_new(facts, "limit", json_string(limit));
	run_free(r);
	/* Measured here, on our side of the mount. */
	if ((disk = disk_usage(a->dir, a->disk, &full)) != NULL)
		json_object_set_new(facts, "disk", disk);
	if (a->state != AS_RUNNING) {
		/* Cancelled while running: already recorded. */
		json_decref(facts);
		attempt_teardown(a);
		return;
	}
	if (attempt_transition(a, "exited", facts, NULL) == -1)
		return;
	attempt_after_exit(a);
}

/* The agent's exit is journaled: on to collect, or why not. */
static void
attempt_after_exit(struct attempt *a)
{
	char	 size[32], why[256];
	int	 st = a->exit_status;

	if (a->cancel_requested)
		attempt_fail(a, "cancelled", "cancelled by uid %u",
		    (unsigned)a->canceller);
	else if (a->fleet_watchdog)
		attempt_fail(a, "failed", "fenced: agent ended by its "
		    "sandbox's watchdog, its lease lapsed");
	else if (a->timedout)
		attempt_fail(a, "failed", "agent killed: wall time of %llums "
		    "exceeded", (unsigned long long)a->m->limits.wall_ms);
	else if (run_limit("agent", a->m, 1, &a->usage, st, why,
	    sizeof(why)) != NULL)
		attempt_fail(a, "failed", "%s", why);
	else if (a->disk_full)
		attempt_fail(a, "failed", "agent filled its disk limit of %s",
		    conf_size(a->disk, size, sizeof(size)));
	else if (WIFSIGNALED(st))
		attempt_fail(a, "failed", "agent killed by signal %d",
		    WTERMSIG(st));
	else if (WEXITSTATUS(st) != 0)
		attempt_fail(a, "failed", "agent exited with status %d",
		    WEXITSTATUS(st));
	else
		attempt_collect(a);
}

static void
attempt_validation_done(struct attempt *a, struct run *r)
{
	struct msg_validate_done m;
	json_t		*facts;
	const char	*limit;
	char		 err[MSG_ERRLEN], why[256];
	int		 st = r->status, timedout = r->timedout;

	a->run = NULL;
	audit_flush();
	facts = json_pack("{s:i, s:b, s:o, s:I, s:b, s:O, s:I, s:o}", "status",
	    st, "timedout", timedout, "usage", usage_json(&r->usage),
	    "log_bytes", (json_int_t)r->logged, "log_truncated", r->logtrunc,
	    "seccomp_denials", a->denials != NULL ? a->denials : json_array(),
	    "run_ms", (json_int_t)ms_between(r->started_ms, r->ended_ms),
	    "environment", env_facts(a->image, a->toolchain, NULL));
	/* A limit that fired in any of its processes: not a pass. */
	if ((limit = run_limit("validation", a->m, 1, &r->usage, st,
	    why, sizeof(why))) != NULL) {
		json_object_set_new(facts, "limit", json_string(limit));
		log_info("%s: %s", a->id, why);
	}
	run_free(r);
	if (a->state != AS_VERIFYING || a->verifier == NULL) {
		/* Ended meanwhile, or its verifier died: verified again. */
		json_decref(facts);
		if (attempt_terminal(a))
			attempt_teardown(a);
		return;
	}
	if (a->fleet_watchdog) {
		/* Not a verdict: the run was cut short, not failed. */
		json_decref(facts);
		attempt_fail(a, "failed", "fenced: validation ended by its "
		    "sandbox's watchdog, its lease lapsed");
		return;
	}
	if (attempt_transition(a, "validated", facts, NULL) == -1)
		return;
	if (a->verifier == NULL || a->verifier->state != CHILD_RUNNING) {
		attempt_fail(a, "failed", "verifier lost during validation");
		return;
	}
	/* The chain grew by "validated": the verdict follows it. */
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, a->id, sizeof(m.id));
	m.status = st;
	m.timedout = timedout;
	m.passed = !timedout && limit == NULL && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0;
	m.seq = a->nreceipts;
	strlcpy(m.prev, a->prev, sizeof(m.prev));
	m.epoch = a->epoch;
	if (msg_compose(&a->verifier->iev, IMSG_VALIDATE_DONE,
	    MSG_VALIDATE_DONE, -1, &m, err, sizeof(err)) == -1)
		attempt_fail(a, "failed", "cannot send %s", err);
}

/* The setup run was reaped: its outputs stored, or why not. */
static void
attempt_setup_done(struct attempt *a, struct run *r)
{
	char	 err[1024];
	int	 rc;

	a->run = NULL;
	audit_flush();
	if ((rc = setup_finish(a, r, err, sizeof(err))) == 1)
		return;		/* its store helper runs */
	attempt_setup_stored(a, rc, err);
}

/* The setup's outputs stored (rc 0), or why not: on to the agent. */
void
attempt_setup_stored(struct attempt *a, int rc, const char *err)
{
	if (attempt_terminal(a)) {
		attempt_teardown(a);
		return;
	}
	if (a->cancel_requested) {
		attempt_fail(a, "cancelled", "cancelled by uid %u during "
		    "setup", (unsigned)a->canceller);
		return;
	}
	if (rc == -1) {
		attempt_fail(a, "failed", "%s", err);
		return;
	}
	attempt_start_agent(a);
}

void
attempt_run_done(struct run *r)
{
	struct attempt	*a = r->attempt;

	if (r->service) {
		service_run_done(r);
		attempt_schedule();
		return;
	}
	/* Its services go first: again (report_run_done) once they have. */
	if (service_hold(a, r))
		return;
	if (r->setup)
		attempt_setup_done(a, r);
	else if (r->validation)
		attempt_validation_done(a, r);
	else
		attempt_agent_done(a, r);
	attempt_schedule();
}

/* result-ready -> verifying: a fresh verifier gets the bundle. */
void
attempt_verify(struct attempt *a)
{
	struct conf_repo	*repo;
	struct child		*v;
	struct msg_verify	 m;
	json_t			*facts;
	char			*s, path[PATH_MAX], err[MSG_ERRLEN], why[256];
	size_t			 len;
	uid_t			 vuid;
	uint64_t		 bytes;
	int			 bfd, lfd, rfd, pfd;

	if ((v = verifier_free()) == NULL)
		return;		/* when one says HELLO */
	if ((repo = attempt_repo(a)) == NULL)
		return;
	/* The setup entry checked by a job first: its answer comes back. */
	if (a->m->setup != NULL && setup_verify_start(a) == 0)
		return;
	if (a->reverify) {
		/* Whatever the lost verification left goes first. */
		if (disk_unmount(a->vdir) == -1 ||
		    fs_remove_tree(a->vdir) == -1) {
			attempt_fail(a, "failed", "%s: %s", a->vdir,
			    strerror(errno));
			return;
		}
		a->reverify = 0;
		vuid = a->vuid;
	} else if ((vuid = uid_allocate()) == 0)
		return;
	/* The validation run is bounded as the agent was. */
	bytes = a->disk != 0 ? a->disk : disk_limit(a->m);
	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1) {
		attempt_fail(a, "failed", "%s: pristine path too long",
		    a->repo);
		return;
	}
	facts = json_pack("{s:i, s:s, s:i, s:o, s:o}", "uid", (int)vuid,
	    "dir", a->vdir, "verifier_pid", (int)v->pid, "disk",
	    disk_facts(a->vdir, bytes), "overlay", disk_overlay_facts(path,
	    a->vdir, "checkout"));
	if (attempt_transition(a, "verifying", facts, NULL) == -1)
		return;
	if (fs_mkdir_owned(a->vdir, 0700, env->conf->users[PROC_VERIFIER].uid,
	    env->conf->users[PROC_VERIFIER].gid) == -1) {
		attempt_fail(a, "failed", "%s: %s", a->vdir, strerror(errno));
		return;
	}
	if (disk_mount(a->vdir, bytes, env->conf->users[PROC_VERIFIER].uid,
	    env->conf->users[PROC_VERIFIER].gid, path, sizeof(path)) == -1 ||
	    attempt_mount_checkout(a, env->conf->users[PROC_VERIFIER].uid,
	    path, sizeof(path)) == -1) {
		attempt_fail(a, "failed", "%s", path);
		return;
	}
	snprintf(path, sizeof(path), "%s/bundle", a->dir);
	if ((bfd = fs_open_untrusted(path, env->conf->users[PROC_WORKER].uid,
	    why, sizeof(why))) == -1) {
		attempt_fail(a, "failed", "%s: %s", path, why);
		return;
	}
	attempt_logpath(a, 0, path, sizeof(path));
	if ((lfd = fs_open_untrusted(path, 0, why, sizeof(why))) == -1)
		lfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	memset(&m, 0, sizeof(m));
	strlcpy(m.id, a->id, sizeof(m.id));
	strlcpy(m.repo, repo->path, sizeof(m.repo));
	strlcpy(m.baseline, a->baseline, sizeof(m.baseline));
	m.scope = a->m->scope;		/* borrowed */
	m.nscope = strv_len(a->m->scope);
	strlcpy(m.title, a->m->title, sizeof(m.title));
	strlcpy(m.digest, a->digest, sizeof(m.digest));
	strlcpy(m.commit, a->commit, sizeof(m.commit));
	strlcpy(m.bundle_sha256, a->bundle_sha256, sizeof(m.bundle_sha256));
	strlcpy(m.dir, a->vdir, sizeof(m.dir));
	m.seq = a->nreceipts;
	strlcpy(m.prev, a->prev, sizeof(m.prev));
	m.epoch = a->epoch;
	m.wall_ms = a->m->limits.wall_ms;
	if (attest_provenance(a, m.provenance, m.isolation, why,
	    sizeof(why)) == -1) {
		close(bfd);
		if (lfd != -1)
			close(lfd);
		attempt_fail(a, "failed", "%s", why);
		return;
	}
	/* What the verifier checks again, from the image itself. */
	if (a->image[0] != '\0') {
		strlcpy(m.image, a->image, sizeof(m.image));
		if (image_rootfs(a->image + 7, m.rootfs, sizeof(m.rootfs)) ==
		    -1) {
			close(bfd);
			if (lfd != -1)
				close(lfd);
			attempt_fail(a, "failed", "image %s: no longer in the "
			    "store", a->image);
			return;
		}
		strlcpy(m.toolchain, a->toolchain, sizeof(m.toolchain));
		m.tools = a->m->toolchain;	/* borrowed */
		m.ntools = strv_len(a->m->toolchain);
	}
	if ((s = msg_encode(MSG_VERIFY, &m, &len, err, sizeof(err))) ==
	    NULL) {
		close(bfd);
		if (lfd != -1)
			close(lfd);
		attempt_fail(a, "failed", "cannot send %s", err);
		return;
	}
	a->verifier = v;
	a->validate_req = 0;	/* a lost verifier's, not this one's */
	env->busy[child_index(v)] = a;
	imsgev_compose(&v->iev, IMSG_VERIFY_LOG, 0, 0, lfd, NULL, 0);
	/* The verifier cannot walk the store: it gets the rootfs itself. */
	if (m.rootfs[0] != '\0') {
		if ((rfd = open(m.rootfs, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1)
			log_warn("%s: %s", a->id, m.rootfs);	/* a finding */
		else
			imsgev_compose(&v->iev, IMSG_VERIFY_ROOTFS, 0, 0, rfd,
			    NULL, 0);
	}
	/*
	 * The validation tree's lower layer, which the worker made: the
	 * verifier checks it against the baseline's tree before using it.
	 * Without it, the verifier finds that it has nothing to check.
	 */
	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1 || (pfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		log_warn("%s: pristine tree %s", a->id, path);
	else
		imsgev_compose(&v->iev, IMSG_VERIFY_PRISTINE, 0, 0, pfd,
		    NULL, 0);
	imsgev_compose(&v->iev, IMSG_VERIFY, 0, 0, bfd, s, len);
	free(s);
	log_info("%s: verifying, verifier pid %d", a->id, (int)v->pid);
}

void
attempt_publish(struct attempt *a)
{
	struct conf_repo	*repo;
	struct msg_publish	 m;
	char			 path[PATH_MAX], err[MSG_ERRLEN], why[256];
	int			 bfd;

	if ((repo = attempt_repo(a)) == NULL)
		return;
	if (a->state == AS_VERIFIED || a->state == AS_SELECTED) {
		if (repo->forge == FORGE_NONE) {
			/* Verified is as far as it goes: release it. */
			log_info("%s: verified; repository %s publishes "
			    "nowhere", a->id, repo->name);
			attempt_teardown(a);
			if (a->cohort[0] != '\0')
				report_published(a);
			return;
		}
		/* Looked at until now: the services kept for it go. */
		if (!preview_kept(a)) {
			preview_close(a);
			service_unkeep(a);
		}
		if (attempt_transition(a, "publishing", NULL, NULL) == -1)
			return;
		a->publish_sent = 0;	/* a reselection's too */
	}
	/* A fleet's claim whose lease is not surely live waits. */
	if (!attempt_gate(a, ATTEMPT_GATE_PUBLISH))
		return;
	snprintf(path, sizeof(path), "%s/bundle", a->dir);
	if ((bfd = fs_open_untrusted(path, env->conf->users[PROC_WORKER].uid,
	    why, sizeof(why))) == -1) {
		attempt_fail(a, "failed", "%s: %s", path, why);
		return;
	}
	attempt_publish_request(a, repo, &m);
	m.begin_by = a->fleet_begin_by;	/* the gate's; 0 but in a fleet */
	if (proc_compose_msg(PROC_PUBLISHER, IMSG_PUBLISH, MSG_PUBLISH, bfd,
	    &m, err, sizeof(err)) == 0) {
		a->publish_sent = 1;
		if (a->cohort[0] != '\0')
			attempt_publish_sent();
	} else if (errno == EAGAIN)
		log_info("%s: publisher not running; publishing when it is",
		    a->id);
	else
		attempt_fail(a, "failed", "cannot send %s", err);
	attempt_publish_request_free(&m);
}

/*
 * Kill and remove an attempt's cgroups, the agent's and the validation
 * run's, by the exact paths its id gives (the ones journaled at
 * allocation), whether or not this process created them.  0 when they
 * are gone, 1 while one still holds an exiting task (tried again on a
 * timer, see attempt_teardown), -1 if one cannot be removed.  how:
 * CLEANUP_LAST, the last try, where busy is a failure too;
 * CLEANUP_LATER, busy ones are left to a timer of cgroup.c's (after a
 * restart: nobody waits for them).
 */

static void
attempt_retry_cb(int fd, short event, void *arg)
{
	struct attempt	*a = arg;

	a->retry_set = 0;
	attempt_teardown(a);
}

static void
attempt_wait_cb(int fd, short event, void *arg)
{
	struct attempt	*a = arg;

	a->wait_set = 0;
	attempt_teardown(a);
}

static void
attempt_teardown_wait(struct attempt *a, int ms)
{
	struct timeval	 tv = { 0, ms * 1000 };

	if (a->wait_set)
		return;
	evtimer_set(&a->wait_ev, attempt_wait_cb, a);
	evtimer_add(&a->wait_ev, &tv);
	a->wait_set = 1;
}

/*
 * Teardown is checked, not assumed: every cgroup of the attempt is
 * empty and removed, no process of its uids is left, its directories
 * are gone; only then is "terminated" journaled and its uids free for
 * another attempt.  What cannot be removed now is tried again later.
 */
void
attempt_teardown(struct attempt *a)
{
	struct timeval	 tv = { 5, 0 };
	uint64_t	 end;
	json_t		*stages;
	int		 left = 0;

	if (a->torn_down)
		return;
	if (a->run != NULL) {
		a->run->cancelled = 1;
		run_kill(a->run);
		return;		/* again when it is reaped */
	}
	if (a->verifier != NULL) {
		env->busy[child_index(a->verifier)] = NULL;
		if (a->verifier->pid > 0)
			proc_kill(a->verifier, "its attempt ended");
		a->verifier = NULL;
	}
	/* Whatever ended it, and after a restart: no grant outlives it. */
	gateway_revoke(a->id);
	if (preview_kept(a))
		return;		/* again when its keep ends (preview.c) */
	preview_close(a);
	if (service_stop(a))
		return;		/* again when they are gone */
	if (a->state != AS_TEARDOWN &&
	    attempt_transition(a, "teardown", NULL, NULL) == -1)
		return;
	if (a->wait_set)
		return;		/* again when the wait is over */
	switch (attempt_cleanup_sandboxes(a, a->cg_tries + 1 >=
	    TEARDOWN_CG_TRIES ? CLEANUP_LAST : CLEANUP_TRY)) {
	case 1:
		a->cg_tries++;
		attempt_teardown_wait(a, TEARDOWN_CG_MS);
		return;
	case -1:
		left++;
		break;
	}
	if (attempt_kill_uids(a) > 0) {
		if (++a->kill_looks < TEARDOWN_KILL_LOOKS) {
			attempt_teardown_wait(a, TEARDOWN_KILL_MS);
			return;
		}
		left++;
	}
	/* The next teardown, if one is needed, waits afresh. */
	a->cg_tries = a->kill_looks = 0;
	/* A cold checkout this attempt did not finish goes too. */
	if (pristine_drop_tmp(a) == -1)
		left++;
	if (setup_teardown(a) == -1)
		left++;
	/* The disks by their journaled paths, then what was under them. */
	if (disk_unmount(a->dir) == -1 || disk_unmount(a->vdir) == -1 ||
	    fs_remove_tree(a->dir) == -1 || fs_remove_tree(a->vdir) == -1) {
		log_warn("%s: teardown", a->id);
		left++;
	}
	if (left > 0) {
		metrics_teardown_failed();
		log_warnx("%s: teardown incomplete, retrying in %llds", a->id,
		    (long long)tv.tv_sec);
		if (!a->retry_set) {
			evtimer_set(&a->retry_ev, attempt_retry_cb, a);
			evtimer_add(&a->retry_ev, &tv);
			a->retry_set = 1;
		}
		return;
	}
	/* The receipt says how long each stage took; show says the same. */
	end = now_ms();
	stages = lifecycle_stages(a, end, end);
	(void)attempt_transition(a, "terminated", json_pack(
	    "{s:b, s:b, s:b, s:O}", "cgroups_removed", 1, "processes_gone", 1,
	    "dirs_removed", 1, "stages", stages), NULL);
	metrics_attempt_done(stages);
	json_decref(stages);
}

/* For cohort.c: a transition the caller decided (selectable, selected). */
int
attempt_mark(struct attempt *a, const char *kind, json_t *facts)
{
	return (attempt_transition(a, kind, facts, NULL));
}

/* The selected member of a cohort goes to the publisher, or is ended. */
void
attempt_publish_selected(struct attempt *a)
{
	if (a->state == AS_SELECTED)
		attempt_publish(a);
}

/*
 * A member the selection left out: ended without publication, with
 * why; one still running is killed first (attempt_cancel).
 */
void
attempt_cancel_why(struct attempt *a, uid_t uid, const char *why)
{
	if (attempt_terminal(a))
		return;
	if (a->run != NULL && !a->run->validation) {
		attempt_cancel(a, uid);
		return;
	}
	a->canceller = uid;
	attempt_fail(a, "cancelled", "%s", why);
}

/* Selected for publication, or with the publisher: not cancelled. */
int
attempt_publishing(const struct attempt *a)
{
	return (a->state == AS_SELECTED || a->state == AS_PUBLISHING);
}

void
attempt_cancel(struct attempt *a, uid_t uid)
{
	a->canceller = uid;
	if (a->run != NULL && !a->run->validation) {
		a->cancel_requested = 1;
		a->run->cancelled = 1;
		run_kill(a->run);
		return;
	}
	attempt_fail(a, "cancelled", "cancelled by uid %u", (unsigned)uid);
}

int
attempt_approve(struct attempt *a, uid_t uid, char *err, size_t errlen)
{
	if (a->cohort[0] != '\0') {
		snprintf(err, errlen, "%s is a member of cohort %s: members "
		    "are not approved, one is selected (factoryctl select)",
		    a->id, a->cohort);
		return (-1);
	}
	if (a->state != AS_VERIFIED) {
		snprintf(err, errlen, "%s is %s, not verified", a->id,
		    attempt_state_name(a->outcome != AS_MAX ? a->outcome :
		    a->state));
		return (-1);
	}
	if (a->approved) {
		snprintf(err, errlen, "%s is already approved", a->id);
		return (-1);
	}
	if (attempt_transition(a, "approved", json_pack("{s:i}", "uid",
	    (int)uid), NULL) == -1) {
		snprintf(err, errlen, "journal refused the approval");
		return (-1);
	}
	log_info("%s: approved by uid %u", a->id, (unsigned)uid);
	attempt_publish(a);
	return (0);
}

void
attempt_shutdown(void)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (a->run != NULL)
			run_kill(a->run);
	setup_shutdown();
}

/*
 * A fact about a running attempt that changes no state, signed into its
 * chain (e.g. an operator's shell); refused, with a log line, where
 * the transition table does not allow that kind.
 */
void
attempt_note(struct attempt *a, const char *kind, json_t *facts)
{
	(void)attempt_transition(a, kind, facts, NULL);
}

void
attempt_verdict_next(struct attempt *a)
{
	log_info("%s: verdict: %s", a->id, a->state == AS_VERIFIED ?
	    "accepted" : "rejected");
	if (a->state != AS_VERIFIED)
		attempt_teardown(a);
	else if (a->cohort[0] != '\0')
		report_verified(a);	/* it never publishes alone */
	else if (a->m->approval == APPROVAL_AUTO || a->approved)
		attempt_publish(a);
}

/*
 * The holder of the lease is gone: a new epoch, journaled, fences off
 * anything it might still send; the step is done again by a new
 * holder, at most three times.
 */
void
attempt_new_lease(struct attempt *a, const char *why, int planned)
{
	if (a->redrives >= 3 && !planned) {
		attempt_fail(a, "failed", "%s, three times", why);
		return;
	}
	a->epoch++;
	if (attempt_transition(a, "lease", json_pack("{s:s, s:I, s:b}",
	    "reason", why, "epoch", (json_int_t)a->epoch, "planned", planned),
	    NULL) == -1)
		return;
	log_info("%s: %s: new lease, epoch %llu", a->id, why,
	    (unsigned long long)a->epoch);
	a->redrive = 1;
}

json_t *
attempt_json(struct attempt *a)
{
	json_t		*o;
	const char	*limit;
	char		 why[256];

	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b}",
	    "id", a->id,
	    "state", attempt_state_name(a->outcome != AS_MAX ? a->outcome :
	    a->state),
	    "phase", attempt_state_name(a->state),
	    "repository", a->repo, "baseline", a->baseline,
	    "manifest_digest", a->digest, "title", a->m->title,
	    "approved", a->approved, "terminated", a->torn_down);
	if (a->reason != NULL)
		json_object_set_new(o, "reason", json_string(a->reason));
	if (a->cohort[0] != '\0') {
		json_object_set_new(o, "cohort", json_string(a->cohort));
		json_object_set_new(o, "variant", json_integer(a->variant));
		json_object_set_new(o, "selected", json_boolean(a->selected));
	}
	json_object_set_new(o, "stages", lifecycle_stages(a, now_ms(), 0));
	json_object_set_new(o, "environment", env_facts(a->image,
	    a->toolchain, a->m->image[0] != '\0' ? a->m->image : NULL));
	if (a->commit[0] != '\0')
		json_object_set_new(o, "commit", json_string(a->commit));
	if (a->branch[0] != '\0')
		json_object_set_new(o, "branch", json_string(a->branch));
	if (a->pull > 0)
		json_object_set_new(o, "pull", json_integer(a->pull));
	if (a->record[0] != '\0')
		json_object_set_new(o, "record", json_string(a->record));
	if (a->m != NULL && a->m->setup != NULL && a->setup_ready)
		json_object_set_new(o, "setup", setup_facts(a));
	json_object_set_new(o, "epoch", json_integer((json_int_t)a->epoch));
	json_object_set_new(o, "uid", json_integer(a->uid));
	json_object_set_new(o, "receipts",
	    json_integer((json_int_t)a->nreceipts));
	if (a->exit_status != -1)
		json_object_set_new(o, "exit", json_integer(a->exit_status));
	json_object_set_new(o, "usage", json_pack("{s:f, s:I, s:I, s:I, s:I}",
	    "cpu_seconds", a->usage.cpu_ms / 1000.0,
	    "peak_memory", (json_int_t)a->usage.mem_peak,
	    "pids", (json_int_t)a->usage.pids_peak,
	    "pids_denied", (json_int_t)a->usage.pids_denied,
	    "oom_kills", (json_int_t)a->usage.oom_kills));
	if (a->exit_status != -1 && (limit = run_limit("agent",
	    a->m, 1, &a->usage, a->exit_status, why,
	    sizeof(why))) != NULL)
		json_object_set_new(o, "limit", json_string(limit));
	if (a->changes != NULL)
		json_object_set(o, "changes", a->changes);
	if (a->changes_total > json_array_size(a->changes))
		json_object_set_new(o, "changes_total",
		    json_integer((json_int_t)a->changes_total));
	if (a->findings != NULL)
		json_object_set(o, "findings", a->findings);
	if (a->findings_total > json_array_size(a->findings))
		json_object_set_new(o, "findings_total",
		    json_integer((json_int_t)a->findings_total));
	if (a->denials != NULL)
		json_object_set(o, "seccomp_denials", a->denials);
	if (a->evidence != NULL)
		json_object_set(o, "evidence", a->evidence);
	if (a->m->model.provider[0] != '\0' || a->m->nupstreams > 0)
		json_object_set_new(o, "model", spend_json(&a->spend));
	if (a->m->tenant[0] != '\0')
		json_object_set_new(o, "tenant", json_string(a->m->tenant));
	if (a->m->preview.enabled)
		json_object_set_new(o, "preview", preview_json(a));
	if (a->svc != NULL)	/* its services, running */
		json_object_set_new(o, "services", service_facts(a));
	return (o);
}
