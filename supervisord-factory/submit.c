/*
 * What enters the parent's table of attempts: a submission, in two
 * steps (the manifest parsed and checked here; the worker resolves the
 * baseline to a commit id; then the attempt exists, journaled with its
 * frozen manifest, and the client hears its id), and at start the
 * attempts the journal holds (recovery).  A submission waits, between
 * the two steps, in reply.c's table, by its connection: a client that
 * leaves before the journal has it leaves no attempt (pending_drop),
 * one that leaves after cancels nothing.
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
#include "fleetmsg.h"
#include "image.h"
#include "journal.h"
#include "log.h"
#include "receipt.h"
#include "toolchain.h"

#include "attempt.h"

/*
 * Free space the state dir keeps for the attempts already accepted:
 * below it, new submissions are refused, before anything is journaled.
 */
#define STATE_RESERVE	(1024 * 1024)

static struct dayseq	 attempt_ids;

struct pending {
	TAILQ_ENTRY(pending)	 entry;		/* in resolving */
	struct msg_resolve	 rq;		/* what the worker is asked */
	int			 sent;		/* times handed to a worker */
	pid_t			 to;		/* the worker it went to last */
	uid_t			 uid;
	char			*raw;
	size_t			 len;
	struct manifest		*m;
	char			 image[IMAGE_HEXLEN + 1];	/* "": host */
	char			 toolchain[SHA256_HEX_LEN + 1];	/* "": none */
	int			 cohort_n;	/* submit -n, or cohort: size */
	/* A fleet's claim: its id and epochs; no client waits for it. */
	char			 fleet_id[ATTEMPT_ID_MAX];
	uint64_t		 fleet_epoch;
	uint64_t		 fleet_host_epoch;
	uint64_t		 fleet_lease_end;
	char			 fleet_tenant[CONF_FLEET_NAMEMAX];
};

/*
 * Submissions whose baseline is with the worker, or waiting for one: a
 * worker restarted by a reload (or after a crash) gets them again when
 * it says hello, so a submission during a reload waits instead of
 * failing.  Bounded by the control wait's own deadline and by
 * PENDING_MAX; resolving is read-only, so asking twice is harmless,
 * but a baseline on which a worker died twice is refused.
 */
#define PENDING_MAX	256
#define PENDING_SENDS	2
static TAILQ_HEAD(, pending)	 resolving =
    TAILQ_HEAD_INITIALIZER(resolving);
static size_t			 nresolving;

static int	pending_send(struct pending *);

static void	submit_common(struct ctl_conn *, struct ibuf *, int,
		    const struct fleet_opts *);
/* The request ids of claims' baselines, apart from reply_wait()'s. */
#define PENDING_FLEET	0x80000000U
static uint32_t		 fleet_reqs;

/*
 * After replay, each attempt is driven on from its last journaled state
 * when that can be done without trusting anything that died with the
 * old parent, and fails with a reason otherwise.  Its leftover
 * sandboxes (their processes died with us: pid 1 of each has the
 * parent-death signal) are removed by their exact cgroup paths first.
 */
void
attempt_recover(void)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry) {
		if (a->torn_down || a->state == AS_QUEUED)
			continue;
		(void)attempt_cleanup_sandboxes(a, CLEANUP_LATER);
		switch (a->state) {
		case AS_PROVISIONING:
			attempt_new_lease(a, "factoryd restarted", 0);
			break;
		case AS_READY:
			/* Provisioned; the agent never ran. */
			attempt_start_agent(a);
			break;
		case AS_RUNNING:
			if (a->exit_status == -1)
				attempt_fail(a, "failed", "agent interrupted: "
				    "factoryd restarted while it ran");
			else
				attempt_new_lease(a, "factoryd restarted", 0);
			break;
		case AS_VERIFYING:
			/* A fresh verifier starts over from the bundle. */
			a->reverify = 1;
			break;
		case AS_VERIFIED:
			if (a->cohort[0] != '\0')
				cohort_member_verified(a);
			else if (a->m->approval == APPROVAL_AUTO ||
			    a->approved)
				attempt_publish(a);
			break;
		case AS_SELECTABLE:
		case AS_SELECTED:
			break;		/* cohort_recover() goes on */
		case AS_RESULT_READY:
		case AS_PUBLISHING:
			break;		/* attempt_schedule() goes on */
		default:
			attempt_teardown(a);
			break;
		}
	}
	cohort_recover();
}

static unsigned
attempt_highest(const char *day)
{
	struct attempt	*a;
	unsigned	 n, max = 0;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if ((n = dayseq_number(a->id, day)) > max)
			max = n;
	return (max);
}

static void
attempt_newid(char *buf, size_t len)
{
	dayseq_next(&attempt_ids, 'a', attempt_highest, buf, len);
}

static void
pending_drop(void *arg)
{
	struct pending	*p = arg;

	if (p->rq.req != 0) {
		TAILQ_REMOVE(&resolving, p, entry);
		nresolving--;
	}

	free(p->raw);
	if (p->m != NULL)
		manifest_free(p->m);
	free(p);
}

/*
 * The manifest's environment against the policy, resolved: the image's
 * digest and the toolchain digest into p.  -1 and the refusal in err.
 */
static int
attempt_environment(const char *name, const struct conf_repo *repo,
    const struct manifest *m, struct pending *p, char *err, size_t errlen)
{
	struct conf_envpolicy	 pol;
	char			 why[CONF_ERRLEN], root[PATH_MAX];
	int			 pinned, fd;

	conf_envpolicy(env->conf, repo, &pol);
	if (m->image[0] == '\0') {
		if (pol.host_root)
			return (0);
		snprintf(err, errlen, "%s: environment: missing: an image is "
		    "required for repository %s (host-root: deny)", name,
		    repo->name);
		return (-1);
	}
	if (image_resolve(m->image, p->image, &pinned, why, sizeof(why)) ==
	    -1) {
		snprintf(err, errlen, "%s: environment.image: %s", name, why);
		return (-1);
	}
	if (!pinned && pol.require_digest) {
		snprintf(err, errlen, "%s: environment.image: %s: no digest, "
		    "refused by require-digest: yes (write %s@sha256:%s)",
		    name, m->image, m->image, p->image);
		return (-1);
	}
	if (m->toolchain == NULL)
		return (0);
	if (image_rootfs(p->image, root, sizeof(root)) == -1 ||
	    (fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: environment.image: sha256:%s: no "
		    "rootfs", name, p->image);
		return (-1);
	}
	/* A path that is not in the image can never run: refused now. */
	if (toolchain_digest(fd, m->toolchain, p->toolchain, why,
	    sizeof(why)) == -1) {
		close(fd);
		snprintf(err, errlen, "%s: environment.%s", name, why);
		return (-1);
	}
	close(fd);
	return (0);
}

void
attempt_submit(struct ctl_conn *c, struct imsg *imsg)
{
	struct ibuf	 ib;

	if (imsg_get_ibuf(imsg, &ib) == -1) {
		reply_fail(c, "submit: empty manifest");
		return;
	}
	submit_common(c, &ib, 0, NULL);
}

/* submit --tenant, --priority, --idempotency-key (fleet: only). */
void
attempt_submit_fleet(struct ctl_conn *c, struct imsg *imsg)
{
	static const char *const classes[] = { "urgent", "normal", "batch" };
	struct fleet_opts	 fo;
	struct ibuf		 ib;
	char			 cls[16];
	size_t			 i;

	memset(&fo, 0, sizeof(fo));
	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, fo.tenant, sizeof(fo.tenant)) == -1 ||
	    ibuf_get_string(&ib, cls, sizeof(cls)) == -1 ||
	    ibuf_get_string(&ib, fo.key, sizeof(fo.key)) == -1) {
		reply_fail(c, "submit: bad fleet request");
		return;
	}
	fo.class = FLEET_NORMAL;
	for (i = 0; cls[0] != '\0' && i < 3; i++)
		if (strcmp(cls, classes[i]) == 0)
			break;
	if (i == 3) {
		reply_fail(c, "submit: --priority: urgent, normal or batch");
		return;
	}
	if (cls[0] != '\0')
		fo.class = i;
	if ((fo.tenant[0] != '\0' && !fleet_valid_name(fo.tenant)) ||
	    (fo.key[0] != '\0' && !fleet_valid_key(fo.key))) {
		reply_fail(c, "submit: --tenant or --idempotency-key: not a "
		    "name");
		return;
	}
	submit_common(c, &ib, 0, &fo);
}

/* submit -n N: a cohort of N members (factoryctl(8)). */
void
attempt_submit_n(struct ctl_conn *c, struct imsg *imsg)
{
	struct ibuf	 ib;
	uint32_t	 n;

	if (imsg_get_ibuf(imsg, &ib) == -1 || ibuf_get_n32(&ib, &n) == -1) {
		reply_fail(c, "submit: bad cohort request");
		return;
	}
	if (n < 2 || n > (uint32_t)env->conf->max_cohort) {
		reply_fail(c, "submit: -n %u: a cohort has 2 to %d members "
		    "(max-cohort)", n, env->conf->max_cohort);
		return;
	}
	submit_common(c, &ib, (int)n, NULL);
}

/*
 * The cohort's size, from -n or the manifest's cohort: (both: they
 * must agree), within max-cohort.  -1 and why in err.
 */
static int
submit_cohort_size(const char *name, const struct manifest *m, int n,
    char *err, size_t errlen)
{
	if (n > 0 && m->cohort_size > 0 && n != m->cohort_size) {
		snprintf(err, errlen, "%s: cohort: size %d, but -n %d", name,
		    m->cohort_size, n);
		return (-1);
	}
	if (n == 0)
		n = m->cohort_size;
	if (n > env->conf->max_cohort) {
		snprintf(err, errlen, "%s: cohort: size %d is more than the "
		    "max-cohort of %d: not accepted", name, n,
		    env->conf->max_cohort);
		return (-1);
	}
	return (n);
}

/*
 * A cohort's variants may each grant another model: each member's
 * manifest, as it will run, is admitted as a lone manifest would be.
 */
static int
submit_admit_variants(const char *name, const struct conf_repo *repo,
    const struct pending *p, char *err, size_t errlen)
{
	struct manifest	*mm;
	int		 i, ret = 0;

	for (i = 0; ret == 0 && i < p->m->cohort_nvariants; i++) {
		if (manifest_parse_member(name, p->raw, p->len, i, &mm, err,
		    errlen) == -1)
			return (-1);
		ret = gateway_admit(name, repo, mm, err, errlen);
		manifest_free(mm);
	}
	return (ret);
}

static void
submit_common(struct ctl_conn *c, struct ibuf *ibp, int cohort_n,
    const struct fleet_opts *fo)
{
	struct ibuf		 ib = *ibp;
	struct statvfs		 vfs;
	struct pending		*p;
	struct conf_repo	*repo;
	struct manifest		*m;
	char			 name[PATH_MAX], err[CONF_ERRLEN];
	char			 sz1[32], sz2[32];
	size_t			 len;

	if (ibuf_get_string(&ib, name, sizeof(name)) == -1 ||
	    (len = ibuf_size(&ib)) == 0) {
		reply_fail(c, "submit: empty manifest");
		return;
	}
	if (fo != NULL && !env->conf->fleet.enabled) {
		reply_fail(c, "submit: --tenant, --priority, --idempotency-key: "
		    "this factoryd has no fleet:");
		return;
	}
	if (manifest_parse(name, ibuf_data(&ib), len, &m, err,
	    sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	if ((cohort_n = submit_cohort_size(name, m, cohort_n, err,
	    sizeof(err))) == -1) {
		reply_fail(c, "%s", err);
		manifest_free(m);
		return;
	}
	if ((repo = conf_repo(env->conf, m->repository)) == NULL) {
		reply_fail(c, "%s: repository: \"%s\" is not a repository "
		    "of this factoryd", name, m->repository);
		manifest_free(m);
		return;
	}
	if (m->limits.disk > env->conf->disk_max) {
		reply_fail(c, "%s: limits: disk: %s is more than the %s "
		    "attempt-disk max: not accepted", name,
		    conf_size(m->limits.disk, sz1, sizeof(sz1)),
		    conf_size(env->conf->disk_max, sz2, sizeof(sz2)));
		manifest_free(m);
		return;
	}
	if (statvfs(env->conf->statedir, &vfs) == 0 &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < STATE_RESERVE) {
		reply_fail(c, "state-dir %s: %llu KiB free, less than the "
		    "%d KiB kept in reserve: not accepted",
		    env->conf->statedir, (unsigned long long)vfs.f_bavail *
		    vfs.f_frsize / 1024, STATE_RESERVE / 1024);
		manifest_free(m);
		return;
	}
	if (!journal_reserve_held(env->journal)) {
		reply_fail(c, "state-dir %s: the journal cannot keep its "
		    "%zu KiB in reserve: not accepted", env->conf->statedir,
		    journal_reserve_size(env->journal) / 1024);
		manifest_free(m);
		return;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->raw = malloc(len + 1)) == NULL)
		fatal(NULL);
	memcpy(p->raw, ibuf_data(&ib), len);
	p->raw[len] = '\0';
	if (strlen(p->raw) != len) {
		reply_fail(c, "%s: manifest contains a NUL byte", name);
		free(p->raw);
		free(p);
		manifest_free(m);
		return;
	}
	p->len = len;
	p->m = m;
	if (attempt_environment(name, repo, m, p, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		pending_drop(p);
		return;
	}
	if (gateway_admit(name, repo, m, err, sizeof(err)) == -1 ||
	    submit_admit_variants(name, repo, p, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		pending_drop(p);
		return;
	}
	p->uid = c->uid;
	p->cohort_n = cohort_n;
	if (env->conf->fleet.enabled) {
		/* Checked as here, queued there: a claim runs it. */
		if (cohort_n > 0)
			reply_fail(c, "%s: cohort: not in a fleet", name);
		else
			fleet_submit(c, fo, m->repository, p->raw, p->len);
		pending_drop(p);
		return;
	}
	if (nresolving >= PENDING_MAX) {
		reply_fail(c, "%zu submissions are waiting for the worker: "
		    "not accepted, try again", nresolving);
		pending_drop(p);
		return;
	}
	strlcpy(p->rq.repo, repo->path, sizeof(p->rq.repo));
	strlcpy(p->rq.ref, m->baseline, sizeof(p->rq.ref));
	p->rq.req = reply_wait(c, CTL_WAIT_SUBMIT, p, pending_drop);
	TAILQ_INSERT_TAIL(&resolving, p, entry);
	nresolving++;
	pending_send(p);
}

/*
 * To the worker; not running (restarting after a reload or a crash):
 * it stays in resolving, and worker_ready() sends it.  -1 only if it
 * was refused and answered.
 */
static int
pending_send(struct pending *p)
{
	struct ctl_conn	*c;
	char		 err[CONF_ERRLEN];

	struct child	*w;

	if (proc_compose_msg(PROC_WORKER, IMSG_RESOLVE, MSG_RESOLVE, -1,
	    &p->rq, err, sizeof(err)) == 0) {
		w = proc_find(PROC_WORKER, 0);
		p->to = w != NULL ? w->pid : 0;
		p->sent++;
		return (0);
	}
	if (errno == EAGAIN && !env->shutting_down) {
		log_debug("submission %u waits for the worker", p->rq.req);
		return (0);
	}
	if (p->fleet_id[0] != '\0')
		fleet_claim_dropped(p->fleet_id, p->fleet_epoch, err);
	else if ((c = reply_wait_take(p->rq.req, CTL_WAIT_SUBMIT, NULL)) !=
	    NULL)
		reply_fail(c, "%s", errno == EAGAIN ?
		    "worker not running: factoryd is shutting down" : err);
	pending_drop(p);
	return (-1);
}

/*
 * One attempt journaled: its frozen manifest (raw, copied) as m parsed
 * it (m is taken), its baseline, and for a cohort's member the cohort
 * and its variant.  NULL if the journal refused it: nothing exists.
 */
static struct attempt *
attempt_member(const struct pending *p, struct manifest *m, const char *oid,
    const char *cohort, int variant)
{
	struct attempt	*a;
	char		 id[ATTEMPT_ID_MAX], hex[SHA256_HEX_LEN + 1];
	json_t		*facts, *extra;

	if (p->fleet_id[0] != '\0')
		strlcpy(id, p->fleet_id, sizeof(id));
	else
		attempt_newid(id, sizeof(id));
	/* An id journaled twice would stop the journal's replay. */
	if (attempt_find(id) != NULL) {
		log_warnx("%s: not journaled again: an attempt has this id",
		    id);
		manifest_free(m);
		return (NULL);
	}
	a = lifecycle_new(&env->attempts, env->conf->statedir, id);
	if ((a->manifest_raw = strdup(p->raw)) == NULL)
		fatal(NULL);
	a->manifest_len = p->len;
	a->m = m;
	sha256_hex(a->manifest_raw, a->manifest_len, hex);
	facts = json_pack("{s:s, s:s, s:s, s:s, s:i}",
	    "manifest_digest", "", "repository", a->m->repository,
	    "baseline", oid, "requested", a->m->baseline,
	    "submitter", (int)p->uid);
	snprintf(a->digest, sizeof(a->digest), "sha256:%s", hex);
	json_object_set_new(facts, "manifest_digest", json_string(a->digest));
	json_object_set_new(facts, "environment", env_facts(p->image,
	    p->toolchain, a->m->image));
	if (cohort != NULL) {
		json_object_set_new(facts, "cohort", json_string(cohort));
		json_object_set_new(facts, "variant", json_integer(variant));
	}
	if (p->fleet_epoch != 0)
		json_object_set_new(facts, "fleet", json_pack("{s:s, s:I, s:I}",
		    "tenant", p->fleet_tenant, "epoch",
		    (json_int_t)p->fleet_epoch, "host_epoch",
		    (json_int_t)p->fleet_host_epoch));
	extra = json_pack("{s:s}", "manifest", a->manifest_raw);
	if (attempt_transition(a, "submitted", facts, extra) == -1) {
		json_decref(extra);
		TAILQ_REMOVE(&env->attempts, a, entry);
		free(a->manifest_raw);
		manifest_free(a->m);
		free(a);
		return (NULL);
	}
	json_decref(extra);
	log_info("%s: submitted by uid %u: %s at %s, manifest %s%s%s", a->id,
	    (unsigned)p->uid, a->m->repository, a->baseline, a->digest,
	    cohort != NULL ? ", cohort " : "", cohort != NULL ? cohort : "");
	return (a);
}

/*
 * A cohort: its record first, then each member, variant by variant,
 * each parsed from the same frozen bytes.  The answer lists them all.
 */
static void
attempt_resolved_cohort(struct ctl_conn *c, struct pending *p,
    const char *oid)
{
	struct cohort	 co;
	struct attempt	*a;
	struct manifest	*m;
	json_t		*ids;
	char		 err[CONF_ERRLEN], hex[SHA256_HEX_LEN + 1];
	int		 i;

	memset(&co, 0, sizeof(co));
	cohort_newid(co.id, sizeof(co.id));
	co.size = p->cohort_n;
	co.submitter = p->uid;
	sha256_hex(p->raw, p->len, hex);
	snprintf(co.digest, sizeof(co.digest), "sha256:%s", hex);
	strlcpy(co.repo, p->m->repository, sizeof(co.repo));
	if (cohort_journal(&co, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	if ((ids = json_array()) == NULL)
		fatal(NULL);
	for (i = 0; i < co.size; i++) {
		if (manifest_parse_member(co.id, p->raw, p->len, i, &m, err,
		    sizeof(err)) == -1)
			fatalx("%s: member %d: checked at submission: %s",
			    co.id, i, err);
		if ((a = attempt_member(p, m, oid, co.id, i)) == NULL)
			break;
		json_array_append_new(ids, json_string(a->id));
	}
	if (i < co.size)
		log_warnx("%s: journal refused member %d of %d: the cohort "
		    "has %d", co.id, i + 1, co.size, i);
	reply_obj(c, json_pack("{s:s, s:o, s:s, s:s}", "cohort",
	    co.id, "members", ids, "baseline", oid, "manifest_digest",
	    co.digest));
	attempt_schedule();
}

/*
 * A claim's baseline: the attempt is journaled under the fleet's id, or
 * the claim is handed back to the fleet as failed.
 */
static int
claim_resolved(const struct msg_resolved *o)
{
	struct pending	*p;
	struct attempt	*a;

	TAILQ_FOREACH(p, &resolving, entry)
		if (p->fleet_id[0] != '\0' && p->rq.req == o->req)
			break;
	if (p == NULL)
		return (0);	/* a client's, or none */
	TAILQ_REMOVE(&resolving, p, entry);
	nresolving--;
	p->rq.req = 0;
	if (o->oid[0] == '\0') {
		fleet_claim_dropped(p->fleet_id, p->fleet_epoch, o->error);
		pending_drop(p);
		return (1);
	}
	/* The manifest is the attempt's now, or freed with the refusal. */
	a = attempt_member(p, p->m, o->oid, NULL, 0);
	p->m = NULL;
	if (a == NULL)
		fleet_claim_dropped(p->fleet_id, p->fleet_epoch,
		    "the journal refused the claim");
	else {
		a->fleet_epoch = p->fleet_epoch;
		a->fleet_host_epoch = p->fleet_host_epoch;
		a->fleet_lease_end = p->fleet_lease_end;
		fleet_claim_started();
		attempt_schedule();
	}
	pending_drop(p);
	return (1);
}

/*
 * A claim the fleet's database committed for this host: checked as a
 * submission is, then its baseline resolved like one; only then is
 * anything journaled.  -1 and why: it never becomes an attempt here.
 * -2: the claim is the child's lie (an attempt this host holds, or
 * one it ran at that claim epoch or a later one: the database claims
 * only a queued attempt, and each claim bumps its epoch); nothing is
 * sent for it, and no id is journaled twice.
 */
int
attempt_claimed(const struct fleet_claimed *cl, char *err, size_t errlen)
{
	struct pending		*p;
	struct conf_repo	*repo;
	struct manifest		*m;
	struct attempt		*a;
	size_t			 len = strlen(cl->manifest);

	TAILQ_FOREACH(p, &resolving, entry)
		if (strcmp(p->fleet_id, cl->id) == 0) {
			snprintf(err, errlen, "CLAIMED %s, a claim this host "
			    "is starting", cl->id);
			return (-2);
		}
	TAILQ_FOREACH(a, &env->attempts, entry) {
		if (strcmp(a->id, cl->id) != 0)
			continue;
		if (cl->epoch <= a->fleet_epoch) {
			snprintf(err, errlen, "CLAIMED %s at epoch %llu, which "
			    "this host holds at epoch %llu", cl->id,
			    (unsigned long long)cl->epoch,
			    (unsigned long long)a->fleet_epoch);
			return (-2);
		}
		/*
		 * Taken back from this host and given to it again (it alone
		 * serves the repository): it does not run an attempt twice,
		 * the claim goes back to the queue.
		 */
		snprintf(err, errlen, "%s: it ran here at claim epoch %llu; "
		    "handed back for another host", cl->id,
		    (unsigned long long)a->fleet_epoch);
		return (-3);
	}
	if (manifest_parse(cl->id, cl->manifest, len, &m, err, errlen) == -1)
		return (-1);
	/*
	 * The tenant is the fleet's, never the label's the submitter wrote;
	 * setup reuse by inputs is keyed by a submitter a claim does not
	 * name (here it would be the fleet's uid for everyone's).
	 */
	if (m->tenant[0] == '\0')
		strlcpy(m->tenant, cl->tenant, sizeof(m->tenant));
	else if (strcmp(m->tenant, cl->tenant) != 0) {
		snprintf(err, errlen, "%s: the manifest says tenant %s, the "
		    "fleet queued it for %s", cl->id, m->tenant, cl->tenant);
		manifest_free(m);
		return (-1);
	}
	if (m->setup != NULL && m->setup->reuse == SETUP_REUSE_INPUTS) {
		snprintf(err, errlen, "%s: setup reuse: inputs is not taken "
		    "in a fleet: its key needs the submitter", cl->id);
		manifest_free(m);
		return (-1);
	}
	if (m->cohort_size > 0 || (repo = conf_repo(env->conf,
	    m->repository)) == NULL || strcmp(m->repository, cl->repo) != 0) {
		snprintf(err, errlen, "%s: repository %s is not served here, "
		    "or a cohort", cl->id, m->repository);
		manifest_free(m);
		return (-1);
	}
	if (nresolving >= PENDING_MAX) {
		snprintf(err, errlen, "too many submissions waiting for the "
		    "worker");
		manifest_free(m);
		return (-1);
	}
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->raw = strdup(cl->manifest)) == NULL)
		fatal(NULL);
	p->len = len;
	p->m = m;
	p->uid = env->conf->users[PROC_FLEET].uid;
	strlcpy(p->fleet_id, cl->id, sizeof(p->fleet_id));
	strlcpy(p->fleet_tenant, cl->tenant, sizeof(p->fleet_tenant));
	p->fleet_epoch = cl->epoch;
	p->fleet_host_epoch = fleet_epoch();
	p->fleet_lease_end = fleet_claim_lease();
	if (attempt_environment(cl->id, repo, m, p, err, errlen) == -1 ||
	    gateway_admit(cl->id, repo, m, err, errlen) == -1) {
		p->rq.req = 0;
		pending_drop(p);
		return (-1);
	}
	strlcpy(p->rq.repo, repo->path, sizeof(p->rq.repo));
	strlcpy(p->rq.ref, m->baseline, sizeof(p->rq.ref));
	if (++fleet_reqs >= PENDING_FLEET)
		fleet_reqs = 1;
	p->rq.req = PENDING_FLEET | fleet_reqs;
	TAILQ_INSERT_TAIL(&resolving, p, entry);
	nresolving++;
	(void)pending_send(p);	/* a refusal is reported there */
	return (0);
}

void
attempt_resolved(const struct msg_resolved *o)
{
	struct pending	*p;
	struct ctl_conn	*c;
	struct attempt	*a;
	uint32_t	 req = o->req;
	void		*arg;

	if ((req & PENDING_FLEET) && claim_resolved(o))
		return;
	if ((c = reply_wait_take(req, CTL_WAIT_SUBMIT, &arg)) == NULL) {
		/* Its client left: dropped, never journaled. */
		if (reply_wait_issued(req))
			log_debug("worker: baseline of dropped submission %u",
			    req);
		else
			log_warnx("worker: resolve answer for unknown "
			    "request %u", req);
		return;
	}
	p = arg;
	TAILQ_REMOVE(&resolving, p, entry);
	nresolving--;
	p->rq.req = 0;		/* out of resolving */
	if (o->oid[0] == '\0') {
		reply_fail(c, "baseline: %s", o->error);
		goto done;
	}
	if (p->cohort_n > 0) {
		attempt_resolved_cohort(c, p, o->oid);
		goto done;
	}
	if ((a = attempt_member(p, p->m, o->oid, NULL, 0)) == NULL) {
		p->m = NULL;
		reply_fail(c, "journal refused the submission "
		    "(disk full?): not accepted");
		goto done;
	}
	p->m = NULL;
	reply_obj(c, json_pack("{s:s, s:s, s:s}", "id", a->id,
	    "baseline", a->baseline, "manifest_digest", a->digest));
	attempt_schedule();
 done:
	pending_drop(p);
}

void
pending_lost(struct child *w)
{
	struct pending	*p, *tp;
	struct ctl_conn	*c;

	TAILQ_FOREACH_SAFE(p, &resolving, entry, tp) {
		if (w->recycle && p->sent > 0)
			p->sent--;	/* stopped on purpose: not a death */
		if (p->sent < PENDING_SENDS)
			continue;
		if (p->fleet_id[0] != '\0')
			fleet_claim_dropped(p->fleet_id, p->fleet_epoch,
			    "the worker died twice resolving the baseline");
		else if ((c = reply_wait_take(p->rq.req, CTL_WAIT_SUBMIT,
		    NULL)) != NULL)
			reply_fail(c, "the worker died twice resolving "
			    "the baseline: not accepted");
		pending_drop(p);
	}
}

/* A worker said hello: what a reload or a crash kept waiting, or gave
 * the old one, goes to it. */
void
pending_resend(struct child *c)
{
	struct pending	*p, *tp;

	TAILQ_FOREACH_SAFE(p, &resolving, entry, tp)
		if (p->to != c->pid)
			(void)pending_send(p);
}
