/*
 * Reconciliation: the reconciler lists what really exists (attempt and
 * verify dirs, cgroups, processes under attempt uids, mounts, branches
 * named factory/ID, pull records); here it is compared with the journal.  A
 * leftover of an attempt that has ended is removed by its exact id and
 * the removal journaled; anything no journal record accounts for is an
 * orphan, listed by factoryctl orphans and removed only by factoryctl
 * reap ID.  Nothing is ever matched by pattern.
 *
 * The reconciler is as untrusted as any child: it names resources by
 * kind and attempt id (a process by pid and uid), invmsg_decode()
 * checks every byte, and a malformed inventory gets it killed.  Every
 * path acted on is ours, made from an id that passed our own syntax
 * check; a pid is pinned with a pidfd and its uids read again by us
 * before it is signalled.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryd.h"
#include "invmsg.h"
#include "journal.h"
#include "log.h"

#define RC_CGTICK_MS	20	/* a killed cgroup is looked at again */
#define RC_CGTRIES	50	/* for this many ticks, then given up */

enum orphan_kind {
	OK_DIR,		/* attempts/<id> */
	OK_VDIR,	/* verify/<id> */
	OK_CGROUP,
	OK_PROCESS,
	OK_BRANCH,	/* the forge's: listed, never reaped */
	OK_PULL,
	OK_MOUNT	/* an attempt's disk (disk.c) at attempts/ or verify/<id> */
};

static const char *const orphan_kinds[] = {
	"dir", "dir", "cgroup", "process", "branch", "pull", "mount"
};

struct orphan {
	TAILQ_ENTRY(orphan)	 entry;
	char			 id[64];	/* what reap takes */
	enum orphan_kind	 kind;
	int			 validation;	/* cgroup: CG_KIND_*; mount: verify/ */
	pid_t			 pid;		/* process */
	uid_t			 uid;
	char			 what[PATH_MAX];	/* shown, never used */
};
TAILQ_HEAD(orphans, orphan);

/* A cgroup killed, waiting for the kernel to empty it. */
struct cgremoval {
	TAILQ_ENTRY(cgremoval)	 entry;
	char			 id[ATTEMPT_ID_MAX];
	int			 validation;	/* CG_KIND_* */
	int			 reaped;	/* by factoryctl reap */
	uid_t			 reaper;
	int			 tries;
};
TAILQ_HEAD(cgremovals, cgremoval);

static struct orphans	 orphans = TAILQ_HEAD_INITIALIZER(orphans);
static struct cgremovals cgremovals = TAILQ_HEAD_INITIALIZER(cgremovals);
static uint32_t		 pending_ctl;		/* its wait (control.c) */
static json_t		*pending_out;		/* its answer, once ready */
static json_t		*last_actions;
static struct event	 ev_reconcile, ev_cgroups;
static int		 ev_reconcile_set, ev_cgroups_set;

static void	 rc_orphans_clear(void);
static struct orphan *rc_orphan_add(const char *, enum orphan_kind,
		    const char *);
static int	 rc_reapable(const struct orphan *);
static int	 rc_finished(struct attempt *);
static void	 rc_act(struct attempt *, const char *, const char *, int);
static void	 rc_dirpath(const char *, int, char *, size_t);
static void	 rc_cgname(const char *, int, char *, size_t);
static int	 rc_cgroup_try(const char *, int, int);
static void	 rc_cgroup_done(struct cgremoval *, int);
static void	 rc_cgroup_tick(int, short, void *);
static int	 rc_cgroup_remove(const char *, int, int, uid_t);
static int	 rc_kill(pid_t, uid_t, const char *, char *, size_t);
static struct attempt *rc_uid_owner(uid_t);
static void	 rc_check_dirs(struct invmsg_id *, size_t, int);
static void	 rc_check_cgroups(struct invmsg *);
static void	 rc_check_processes(struct invmsg *);
static void	 rc_check_published(struct invmsg *);
static json_t	*rc_orphan_list(void);
static void	 rc_answer(void);

static void
rc_orphans_clear(void)
{
	struct orphan	*o;

	while ((o = TAILQ_FIRST(&orphans)) != NULL) {
		TAILQ_REMOVE(&orphans, o, entry);
		free(o);
	}
}

size_t
reconcile_orphan_count(void)
{
	struct orphan	*o;
	size_t		 n = 0;

	TAILQ_FOREACH(o, &orphans, entry)
		n++;
	return (n);
}

static struct orphan *
rc_orphan_add(const char *id, enum orphan_kind kind, const char *what)
{
	struct orphan	*o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		fatal(NULL);
	strlcpy(o->id, id, sizeof(o->id));
	o->kind = kind;
	strlcpy(o->what, what, sizeof(o->what));
	TAILQ_INSERT_TAIL(&orphans, o, entry);
	return (o);
}

static int
rc_reapable(const struct orphan *o)
{
	return (o->kind != OK_BRANCH && o->kind != OK_PULL);
}

static void
rc_timer(int fd, short event, void *arg)
{
	reconcile_start(NULL);
}

/* Ask the reconciler; the answer comes as IMSG_INVENTORY. */
void
reconcile_start(struct ctl_conn *c)
{
	struct timeval	 tv;

	/* One waiting client at a time: a second would strand the first. */
	if (c != NULL && reply_wait_count(CTL_WAIT_RECONCILE) > 0) {
		reply_fail(c, "a reconcile is already running, try again");
		return;
	}
	if (!ev_reconcile_set) {
		evtimer_set(&ev_reconcile, rc_timer, NULL);
		ev_reconcile_set = 1;
	}
	evtimer_del(&ev_reconcile);
	tv.tv_sec = env->conf->reconcile_interval;
	tv.tv_usec = 0;
	evtimer_add(&ev_reconcile, &tv);
	if (proc_compose_json(PROC_RECONCILER, IMSG_INVENTORY_REQ, -1,
	    json_object()) == -1) {
		if (c != NULL)
			reply_fail(c, "reconciler not running, try again");
		return;
	}
	if (c != NULL)
		pending_ctl = reply_wait(c, CTL_WAIT_RECONCILE, NULL, NULL);
}

/* Ended and torn down (or being): its resources may go. */
static int
rc_finished(struct attempt *a)
{
	return (a->torn_down || a->state == AS_TEARDOWN);
}

static void
rc_act(struct attempt *a, const char *kind, const char *what, int ok)
{
	if (last_actions != NULL)
		json_array_append_new(last_actions, json_pack("{s:s, s:s, "
		    "s:s, s:b}", "attempt", a->id, "kind", kind, "what", what,
		    "removed", ok));
	log_info("%s: reconcile: %s leftover %s %s", a->id, kind, what,
	    ok ? "removed" : "could not be removed");
	report_note(a, "reaped", json_pack("{s:s, s:s, s:b}", "resource",
	    kind, "what", what, "removed", ok));
}

/* Our own path of an attempt's directory, from its checked id. */
static void
rc_dirpath(const char *id, int verify, char *path, size_t len)
{
	snprintf(path, len, "%s/%s/%s", env->conf->statedir,
	    verify ? "verify" : "attempts", id);
}

/* Its name for kind (CG_KIND_*); "" for one that is none. */
static void
rc_cgname(const char *id, int kind, char *name, size_t len)
{
	if (cg_name(id, kind, name, len) == -1 && len > 0)
		name[0] = '\0';
}

/*
 * The cgroups we would have made for this name, by our own naming
 * (sandbox_cgroup_paths): killed once (first), then removed, deepest
 * last made first.  1 if all are gone, 0 if one is still busy, -1 on
 * any other error.
 */
static int
rc_cgroup_try(const char *id, int validation, int dokill)
{
	struct sandbox	 sb;
	char		 name[ATTEMPT_ID_MAX + 8];
	int		 i, busy = 0;

	rc_cgname(id, validation, name, sizeof(name));
	if (sandbox_cgroup_paths(name, &sb) == -1) {
		errno = EINVAL;
		return (-1);
	}
	if (dokill && cgroup_kill(&sb) == -1 && errno != ENOENT)
		log_warn("%s: reconcile: cgroup kill", name);
	for (i = sb.ncgroups - 1; i >= 0; i--) {
		if (rmdir(sb.cgroups[i]) == 0 || errno == ENOENT)
			continue;
		if (errno != EBUSY)
			return (-1);
		busy = 1;
	}
	return (busy ? 0 : 1);
}

static void
rc_cgroup_done(struct cgremoval *r, int ok)
{
	struct attempt	*a;
	char		 name[ATTEMPT_ID_MAX + 8];

	rc_cgname(r->id, r->validation, name, sizeof(name));
	if (r->reaped)
		log_info("reap %s: cgroup %s by uid %u: %s", r->id, name,
		    (unsigned)r->reaper, ok ? "removed" : "still busy, "
		    "not removed");
	else if ((a = attempt_find(r->id)) != NULL)
		rc_act(a, "cgroup", name, ok);
	TAILQ_REMOVE(&cgremovals, r, entry);
	free(r);
}

/*
 * Killed processes leave their cgroup a moment later: a timer, never
 * a sleep, in the root event loop.
 */
static void
rc_cgroup_tick(int fd, short event, void *arg)
{
	struct cgremoval	*r, *tmp;
	struct timeval		 tv = { 0, RC_CGTICK_MS * 1000 };
	int			 rc;

	TAILQ_FOREACH_SAFE(r, &cgremovals, entry, tmp) {
		rc = rc_cgroup_try(r->id, r->validation, 0);
		if (rc == 0 && ++r->tries < RC_CGTRIES)
			continue;
		rc_cgroup_done(r, rc == 1);
	}
	if (!TAILQ_EMPTY(&cgremovals))
		evtimer_add(&ev_cgroups, &tv);
	else
		rc_answer();
}

/* 1 removed now, 0 killed and pending (logged when done), -1 error. */
static int
rc_cgroup_remove(const char *id, int validation, int reaped, uid_t reaper)
{
	struct cgremoval	*r;
	struct timeval		 tv = { 0, RC_CGTICK_MS * 1000 };
	int			 rc;

	TAILQ_FOREACH(r, &cgremovals, entry)
		if (strcmp(r->id, id) == 0 && r->validation == validation)
			return (0);	/* killed already, being looked at */
	if ((rc = rc_cgroup_try(id, validation, 1)) != 0)
		return (rc);
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal(NULL);
	strlcpy(r->id, id, sizeof(r->id));
	r->validation = validation;
	r->reaped = reaped;
	r->reaper = reaper;
	TAILQ_INSERT_TAIL(&cgremovals, r, entry);
	if (!ev_cgroups_set) {
		evtimer_set(&ev_cgroups, rc_cgroup_tick, NULL);
		ev_cgroups_set = 1;
	}
	if (!evtimer_pending(&ev_cgroups, NULL))
		evtimer_add(&ev_cgroups, &tv);
	return (0);
}

/*
 * SIGKILL pid if our own reading says it runs as uid; why says what
 * happened otherwise.  0 killed or gone, -1 refused or failed.
 */
static int
rc_kill(pid_t pid, uid_t uid, const char *who, char *why, size_t len)
{
	uid_t	 found;

	if (pid_kill_uid(pid, uid, &found) == 0)
		return (0);
	if (errno == EPERM)
		snprintf(why, len, "pid %d: uid %u, not %s's %u: not "
		    "signalled", (int)pid, (unsigned)found, who,
		    (unsigned)uid);
	else
		snprintf(why, len, "pid %d: %s: not signalled", (int)pid,
		    strerror(errno));
	log_warnx("reconcile: %s", why);
	return (-1);
}

static void
rc_check_dirs(struct invmsg_id *ids, size_t n, int verify)
{
	struct attempt	*a;
	char		 path[PATH_MAX];
	size_t		 i;

	for (i = 0; i < n; i++) {
		rc_dirpath(ids[i].id, verify, path, sizeof(path));
		if ((a = attempt_find(ids[i].id)) == NULL)
			rc_orphan_add(ids[i].id, verify ? OK_VDIR : OK_DIR,
			    path);
		else if (a->torn_down)
			rc_act(a, "dir", path, fs_remove_tree(path) == 0);
	}
}

/*
 * An attempt's disks are mounted at exactly attempts/ID and verify/ID
 * (the path derived here from the id); they go before the directories
 * under them can, so they are looked at, and listed, first.
 */
static void
rc_check_mounts(struct invmsg *m)
{
	struct attempt	*a;
	char		 path[PATH_MAX];
	size_t		 i;

	for (i = 0; i < m->nmounts; i++) {
		rc_dirpath(m->mounts[i].id, m->mounts[i].verify, path,
		    sizeof(path));
		if ((a = attempt_find(m->mounts[i].id)) == NULL)
			rc_orphan_add(m->mounts[i].id, OK_MOUNT,
			    path)->validation = m->mounts[i].verify;
		else if (a->torn_down)
			rc_act(a, "mount", path, disk_unmount(path) == 0);
	}
}

static void
rc_check_cgroups(struct invmsg *m)
{
	struct attempt	*a;
	struct orphan	*o;
	struct sandbox	 sb;
	char		 name[ATTEMPT_ID_MAX + 8];
	size_t		 i;
	int		 rc;

	for (i = 0; i < m->ncgroups; i++) {
		rc_cgname(m->cgroups[i].id, m->cgroups[i].kind, name,
		    sizeof(name));
		if ((a = attempt_find(m->cgroups[i].id)) == NULL) {
			/* Shown as the first of our own paths for it. */
			o = rc_orphan_add(m->cgroups[i].id, OK_CGROUP,
			    sandbox_cgroup_paths(name, &sb) == 0 &&
			    sb.ncgroups > 0 ? sb.cgroups[0] : name);
			o->validation = m->cgroups[i].kind;
		} else if (rc_finished(a) && (rc = rc_cgroup_remove(a->id,
		    m->cgroups[i].kind, 0, 0)) != 0)
			rc_act(a, "cgroup", name, rc == 1);
	}
}

static struct attempt *
rc_uid_owner(uid_t uid)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (!a->torn_down && a->state != AS_QUEUED &&
		    attempt_has_uid(a, uid))
			return (a);
	return (NULL);
}

static void
rc_check_processes(struct invmsg *m)
{
	struct invmsg_proc	*p;
	struct attempt		*a;
	struct orphan		*o;
	char			 id[64], what[128], why[256];
	size_t			 i;

	for (i = 0; i < m->nprocs; i++) {
		p = &m->procs[i];
		snprintf(id, sizeof(id), "pid:%d", (int)p->pid);
		snprintf(what, sizeof(what), "pid %d uid %u (%s)",
		    (int)p->pid, (unsigned)p->uid, p->comm);
		if ((a = rc_uid_owner(p->uid)) == NULL) {
			o = rc_orphan_add(id, OK_PROCESS, what);
			o->pid = p->pid;
			o->uid = p->uid;
		} else if (a->state == AS_TEARDOWN)
			rc_act(a, "process", what, rc_kill(p->pid, p->uid,
			    a->id, why, sizeof(why)) == 0);
	}
}

/* Branches and pull records are the forge's: listed, never removed. */
static void
rc_check_published(struct invmsg *m)
{
	struct attempt	*a;
	size_t		 i;
	char		 what[PATH_MAX];

	for (i = 0; i < m->nbranches; i++) {
		a = attempt_find(m->branches[i].id);
		if (a != NULL && (a->outcome == AS_PUBLISHED ||
		    a->state == AS_PUBLISHING))
			continue;
		snprintf(what, sizeof(what), "factory/%s in %s",
		    m->branches[i].id, m->branches[i].repo);
		rc_orphan_add(m->branches[i].id, OK_BRANCH, what);
	}
	for (i = 0; i < m->npulls; i++) {
		a = attempt_find(m->pulls[i].id);
		if (a != NULL && (a->outcome == AS_PUBLISHED ||
		    a->state == AS_PUBLISHING))
			continue;
		snprintf(what, sizeof(what), "pull #%d in %s",
		    m->pulls[i].number, m->pulls[i].dir);
		rc_orphan_add(m->pulls[i].id, OK_PULL, what);
	}
}

static json_t *
rc_orphan_list(void)
{
	struct orphan	*o;
	json_t		*list = json_array();

	TAILQ_FOREACH(o, &orphans, entry)
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:b}",
		    "id", o->id, "kind", orphan_kinds[o->kind], "what",
		    o->what, "reapable", rc_reapable(o)));
	return (list);
}

/* factoryctl reconcile hears the result once no removal is pending. */
static void
rc_answer(void)
{
	struct ctl_conn	*c;

	if (pending_out == NULL || !TAILQ_EMPTY(&cgremovals))
		return;
	if (pending_ctl != 0 && (c = reply_wait_take(pending_ctl,
	    CTL_WAIT_RECONCILE, NULL)) != NULL) {
		json_object_set(pending_out, "actions", last_actions);
		reply_obj(c, pending_out);
	} else
		json_decref(pending_out);
	pending_out = NULL;
	pending_ctl = 0;
}

/*
 * An IMSG_INVENTORY.  -1 if it is malformed: the caller kills the
 * reconciler.
 */
int
reconcile_inventory(const void *data, size_t len)
{
	struct invmsg	 m;
	struct orphan	*o;
	struct ctl_conn	*c;
	json_t		*errs;
	char		 err[512];
	size_t		 n, i;

	if (invmsg_decode(data, len, env->conf->attempt_uid_lo,
	    env->conf->attempt_uid_hi, &m, err, sizeof(err)) == -1) {
		log_warnx("reconciler: IMSG_INVENTORY refused: %s", err);
		invmsg_free(&m);
		if (pending_out == NULL && pending_ctl != 0 &&
		    (c = reply_wait_take(pending_ctl, CTL_WAIT_RECONCILE,
		    NULL)) != NULL)
			reply_fail(c, "the reconciler sent a malformed "
			    "inventory and is restarted: %s", err);
		if (pending_out == NULL)
			pending_ctl = 0;
		return (-1);
	}
	rc_orphans_clear();
	json_decref(last_actions);
	last_actions = json_array();
	rc_check_mounts(&m);
	rc_check_dirs(m.dirs, m.ndirs, 0);
	rc_check_dirs(m.vdirs, m.nvdirs, 1);
	rc_check_cgroups(&m);
	rc_check_processes(&m);
	rc_check_published(&m);
	n = 0;
	TAILQ_FOREACH(o, &orphans, entry)
		n++;
	if (n > 0)
		log_info("reconcile: %zu orphans (factoryctl orphans)", n);
	if (pending_ctl != 0 && pending_out == NULL) {
		errs = json_array();
		for (i = 0; i < m.nerrors; i++)
			json_array_append_new(errs, json_string(m.errors[i]));
		pending_out = json_pack("{s:o, s:o, s:b, s:o}", "actions",
		    json_array(), "orphans", rc_orphan_list(), "truncated",
		    m.truncated, "errors", errs);
	}
	invmsg_free(&m);
	rc_answer();
	return (0);
}

/* The reconciler died: a factoryctl reconcile waiting for it hears so. */
void
reconcile_child_lost(void)
{
	struct ctl_conn	*c;

	if (pending_out != NULL || pending_ctl == 0)
		return;
	if ((c = reply_wait_take(pending_ctl, CTL_WAIT_RECONCILE,
	    NULL)) != NULL)
		reply_fail(c, "the reconciler died before it answered; it "
		    "is restarted, try again");
	pending_ctl = 0;
}

json_t *
reconcile_orphans_json(void)
{
	return (json_pack("{s:o}", "orphans", rc_orphan_list()));
}

/* One orphan, journaled already.  0 removed, -1 not (why says). */
static int
rc_orphan_remove(struct orphan *o, uid_t uid, int *pending, char *why,
    size_t len)
{
	char	 path[PATH_MAX];
	int	 rc;

	*pending = 0;
	why[0] = '\0';
	if (o->kind != OK_PROCESS && attempt_find(o->id) != NULL) {
		snprintf(why, len, "%s is an attempt now", o->id);
		return (-1);
	}
	switch (o->kind) {
	case OK_DIR:
	case OK_VDIR:
		rc_dirpath(o->id, o->kind == OK_VDIR, path, sizeof(path));
		if (fs_remove_tree(path) == 0)
			return (0);
		snprintf(why, len, "%s", strerror(errno));
		return (-1);
	case OK_MOUNT:
		rc_dirpath(o->id, o->validation, path, sizeof(path));
		if (disk_unmount(path) == 0)
			return (0);
		snprintf(why, len, "%s", strerror(errno));
		return (-1);
	case OK_CGROUP:
		if ((rc = rc_cgroup_remove(o->id, o->validation, 1, uid)) ==
		    1)
			return (0);
		if (rc == 0) {
			*pending = 1;
			snprintf(why, len, "killed, removal pending");
		} else
			snprintf(why, len, "%s", strerror(errno));
		return (-1);
	case OK_PROCESS:
		/* Not since taken by an attempt, and still that uid. */
		if (rc_uid_owner(o->uid) != NULL) {
			snprintf(why, len, "uid %u is an attempt's now",
			    (unsigned)o->uid);
			return (-1);
		}
		return (rc_kill(o->pid, o->uid, "the orphan", why, len));
	default:
		snprintf(why, len, "not removable");
		return (-1);
	}
}

/*
 * factoryctl reap ID: every reapable orphan with exactly that id, and
 * nothing else.  Journaled with the operator's uid.
 */
int
reconcile_reap(const char *id, uid_t uid, json_t **out, char *err,
    size_t errlen)
{
	struct orphan	*o, *tmp;
	json_t		*done = json_array(), *rec;
	char		*s, why[256];
	int		 ok, pending, n = 0;

	/* All or nothing: refuse before removing anything. */
	TAILQ_FOREACH(o, &orphans, entry)
		if (strcmp(o->id, id) == 0 && !rc_reapable(o)) {
			snprintf(err, errlen, "%s: %s %s belongs to the forge; "
			    "remove it there", id, orphan_kinds[o->kind],
			    o->what);
			json_decref(done);
			return (-1);
		}
	TAILQ_FOREACH_SAFE(o, &orphans, entry, tmp) {
		if (strcmp(o->id, id) != 0)
			continue;
		rec = json_pack("{s:{s:s, s:s, s:s, s:i}}", "reap", "id", id,
		    "kind", orphan_kinds[o->kind], "what", o->what, "uid",
		    (int)uid);
		s = json_dumps(rec, JSON_COMPACT);
		json_decref(rec);
		if (journal_append(env->journal, s, strlen(s), NULL) == -1) {
			free(s);
			snprintf(err, errlen, "journal: %s", strerror(errno));
			json_decref(done);
			return (-1);
		}
		free(s);
		ok = rc_orphan_remove(o, uid, &pending, why, sizeof(why)) == 0;
		log_info("reap %s: %s %s by uid %u: %s", id,
		    orphan_kinds[o->kind], o->what, (unsigned)uid,
		    ok ? "removed" : why);
		json_array_append_new(done, json_pack("{s:s, s:s, s:b, s:s}",
		    "kind", orphan_kinds[o->kind], "what", o->what, "removed",
		    ok, "reason", why));
		TAILQ_REMOVE(&orphans, o, entry);
		free(o);
		n++;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: no such orphan (factoryctl orphans; "
		    "factoryctl reconcile first)", id);
		json_decref(done);
		return (-1);
	}
	*out = json_pack("{s:s, s:o}", "id", id, "reaped", done);
	return (0);
}
