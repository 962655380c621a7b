/*
 * Reconciliation: the reconciler lists what really exists (attempt and
 * verify dirs, cgroups, processes under attempt uids, mounts, branches
 * named factory/ID, pull records); here it is compared with the journal.  A
 * leftover of an attempt that has ended is removed by its exact id and
 * the removal journaled; anything no journal record accounts for is an
 * orphan, listed by factoryctl orphans and removed only by factoryctl
 * reap ID.  Nothing is ever matched by pattern.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryd.h"
#include "journal.h"
#include "log.h"

struct orphan {
	TAILQ_ENTRY(orphan)	 entry;
	char			 id[64];	/* what reap takes */
	char			 kind[16];	/* dir, cgroup, process, ... */
	char			 what[PATH_MAX];	/* exact path or pid */
	int			 reapable;
};
TAILQ_HEAD(orphans, orphan);

static struct orphans	 orphans = TAILQ_HEAD_INITIALIZER(orphans);
static uint32_t		 pending_ctl;		/* factoryctl reconcile */
static json_t		*last_actions;
static struct event	 ev_reconcile;
static int		 ev_reconcile_set;

static void
orphans_clear(void)
{
	struct orphan	*o;

	while ((o = TAILQ_FIRST(&orphans)) != NULL) {
		TAILQ_REMOVE(&orphans, o, entry);
		free(o);
	}
}

static void
orphan_add(const char *id, const char *kind, const char *what, int reapable)
{
	struct orphan	*o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		fatal(NULL);
	strlcpy(o->id, id, sizeof(o->id));
	strlcpy(o->kind, kind, sizeof(o->kind));
	strlcpy(o->what, what, sizeof(o->what));
	o->reapable = reapable;
	TAILQ_INSERT_TAIL(&orphans, o, entry);
}

static void
reconcile_timer(int fd, short event, void *arg)
{
	attempt_reconcile(NULL);
}

/* Ask the reconciler; the answer comes as IMSG_INVENTORY. */
void
attempt_reconcile(struct ctl_conn *c)
{
	struct timeval	 tv;

	if (!ev_reconcile_set) {
		evtimer_set(&ev_reconcile, reconcile_timer, NULL);
		ev_reconcile_set = 1;
	}
	evtimer_del(&ev_reconcile);
	tv.tv_sec = env->conf->reconcile_interval;
	tv.tv_usec = 0;
	evtimer_add(&ev_reconcile, &tv);
	if (proc_compose_json(PROC_RECONCILER, IMSG_INVENTORY_REQ, -1,
	    json_object()) == -1) {
		if (c != NULL)
			control_fail(c, "reconciler not running, try again");
		return;
	}
	if (c != NULL)
		pending_ctl = c->id;
}

/* The attempt an inventory name belongs to ("a-...", "a-...-v"). */
static struct attempt *
owner(const char *name)
{
	char	 id[ATTEMPT_ID_MAX];
	size_t	 len = strlen(name);

	strlcpy(id, name, sizeof(id));
	if (len > 2 && strcmp(name + len - 2, "-v") == 0 &&
	    len - 2 < sizeof(id))
		id[len - 2] = '\0';
	return (attempt_find(id));
}

/* Ended and torn down (or being): its resources may go. */
static int
finished(struct attempt *a)
{
	return (a->torn_down || a->state == AS_TEARDOWN);
}

static void
act(struct attempt *a, const char *kind, const char *what, int ok)
{
	json_array_append_new(last_actions, json_pack("{s:s, s:s, s:s, s:b}",
	    "attempt", a->id, "kind", kind, "what", what, "removed", ok));
	log_info("%s: reconcile: %s leftover %s %s", a->id, kind, what,
	    ok ? "removed" : "could not be removed");
	attempt_record_reaped(a, kind, what, ok);
}

static void
check_dirs(json_t *names, const char *sub)
{
	struct attempt	*a;
	json_t		*v;
	size_t		 i;
	char		 path[PATH_MAX];
	const char	*name;

	json_array_foreach(names, i, v) {
		name = json_string_value(v);
		snprintf(path, sizeof(path), "%s/%s/%s", env->conf->statedir,
		    sub, name);
		if ((a = attempt_find(name)) == NULL)
			orphan_add(name, "dir", path, 1);
		else if (a->torn_down)
			act(a, "dir", path, fs_remove_tree(path) == 0);
	}
}

/*
 * An attempt's disks (disk.c) are mounted at exactly attempts/ID and
 * verify/ID; they go before the directories under them can.  Other
 * mounts below the state directory are not ours to judge here.
 */
static void
check_mounts(json_t *mounts)
{
	struct attempt	*a;
	json_t		*v;
	size_t		 i;
	char		 path[PATH_MAX];
	const char	*id, *target;

	json_array_foreach(mounts, i, v) {
		id = json_str(v, "attempt");
		target = json_str(v, "target");
		snprintf(path, sizeof(path), "%s/attempts/%s",
		    env->conf->statedir, id);
		if (strcmp(target, path) != 0) {
			snprintf(path, sizeof(path), "%s/verify/%s",
			    env->conf->statedir, id);
			if (strcmp(target, path) != 0)
				continue;
		}
		if ((a = attempt_find(id)) == NULL)
			orphan_add(id, "mount", target, 1);
		else if (a->torn_down)
			act(a, "mount", target, disk_unmount(target) == 0);
	}
}

static int
cgroup_remove(const char *path)
{
	char	 kill[PATH_MAX];
	FILE	*f;

	/* The unified hierarchy's kill switch, where this path has one. */
	snprintf(kill, sizeof(kill), "%s/cgroup.kill", path);
	if ((f = fopen(kill, "w")) != NULL) {
		fputs("1", f);
		fclose(f);
		usleep(20 * 1000);
	}
	return (rmdir(path) == 0 || errno == ENOENT ? 0 : -1);
}

static void
check_cgroups(json_t *paths)
{
	struct attempt	*a;
	json_t		*v;
	size_t		 i;
	char		 tmp[PATH_MAX];
	const char	*path, *name;

	json_array_foreach(paths, i, v) {
		path = json_string_value(v);
		strlcpy(tmp, path, sizeof(tmp));
		name = basename(tmp);
		if ((a = owner(name)) == NULL)
			orphan_add(name, "cgroup", path, 1);
		else if (finished(a))
			act(a, "cgroup", path, cgroup_remove(path) == 0);
	}
}

static struct attempt *
uid_owner(uid_t uid)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (!a->torn_down && a->state != AS_QUEUED &&
		    (a->uid == uid || a->vuid == uid))
			return (a);
	return (NULL);
}

static void
check_processes(json_t *procs)
{
	struct attempt	*a;
	json_t		*v;
	size_t		 i;
	char		 id[64], what[128];
	pid_t		 pid;
	uid_t		 uid;

	json_array_foreach(procs, i, v) {
		pid = json_integer_value(json_object_get(v, "pid"));
		uid = json_integer_value(json_object_get(v, "uid"));
		snprintf(id, sizeof(id), "pid:%d", (int)pid);
		snprintf(what, sizeof(what), "pid %d uid %u (%s)", (int)pid,
		    (unsigned)uid, json_str(v, "comm"));
		if ((a = uid_owner(uid)) == NULL)
			orphan_add(id, "process", what, 1);
		else if (a->state == AS_TEARDOWN)
			act(a, "process", what, kill(pid, SIGKILL) == 0);
	}
}

/* Branches and pull records are the forge's: listed, never removed. */
static void
check_published(json_t *branches, json_t *pulls)
{
	struct attempt	*a;
	json_t		*v;
	size_t		 i;
	const char	*b;
	char		 what[PATH_MAX];

	json_array_foreach(branches, i, v) {
		b = json_str(v, "branch");
		if (strncmp(b, "factory/", 8) != 0)
			continue;
		a = attempt_find(b + 8);
		if (a != NULL && a->outcome == AS_PUBLISHED)
			continue;
		if (a != NULL && a->state == AS_PUBLISHING)
			continue;
		snprintf(what, sizeof(what), "%s in %s", b, json_str(v,
		    "repo"));
		orphan_add(b + 8, "branch", what, 0);
	}
	json_array_foreach(pulls, i, v) {
		a = attempt_find(json_str(v, "attempt"));
		if (a != NULL && (a->outcome == AS_PUBLISHED ||
		    a->state == AS_PUBLISHING))
			continue;
		snprintf(what, sizeof(what), "pull #%lld in %s",
		    json_integer_value(json_object_get(v, "number")),
		    json_str(v, "dir"));
		orphan_add(json_str(v, "attempt"), "pull", what, 0);
	}
}

void
attempt_inventory(json_t *inv)
{
	struct ctl_conn	*c;
	struct orphan	*o;
	json_t		*list, *out;
	size_t		 n;

	orphans_clear();
	json_decref(last_actions);
	last_actions = json_array();
	check_mounts(json_object_get(inv, "mounts"));
	check_dirs(json_object_get(inv, "attempt_dirs"), "attempts");
	check_dirs(json_object_get(inv, "verify_dirs"), "verify");
	check_cgroups(json_object_get(inv, "cgroups"));
	check_processes(json_object_get(inv, "processes"));
	check_published(json_object_get(inv, "branches"),
	    json_object_get(inv, "pulls"));
	n = 0;
	TAILQ_FOREACH(o, &orphans, entry)
		n++;
	if (n > 0)
		log_info("reconcile: %zu orphans (factoryctl orphans)", n);
	if (pending_ctl == 0 || (c = control_byid(pending_ctl)) == NULL) {
		pending_ctl = 0;
		return;
	}
	pending_ctl = 0;
	list = json_array();
	TAILQ_FOREACH(o, &orphans, entry)
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:b}",
		    "id", o->id, "kind", o->kind, "what", o->what,
		    "reapable", o->reapable));
	out = json_pack("{s:O, s:o, s:O, s:O}", "actions", last_actions,
	    "orphans", list, "truncated", json_object_get(inv, "truncated") ?
	    json_object_get(inv, "truncated") : json_false(),
	    "errors", json_object_get(inv, "errors") ?
	    json_object_get(inv, "errors") : json_array());
	control_send_obj(c, out);
}

json_t *
orphans_json(void)
{
	struct orphan	*o;
	json_t		*list = json_array();

	TAILQ_FOREACH(o, &orphans, entry)
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:b}",
		    "id", o->id, "kind", o->kind, "what", o->what,
		    "reapable", o->reapable));
	return (json_pack("{s:o}", "orphans", list));
}

/*
 * factoryctl reap ID: every reapable orphan with exactly that id, and
 * nothing else.  Journaled with the operator's uid.
 */
int
orphans_reap(const char *id, uid_t uid, json_t **out, char *err,
    size_t errlen)
{
	struct orphan	*o, *tmp;
	json_t		*done = json_array(), *rec;
	char		*s;
	int		 ok, n = 0;

	/* All or nothing: refuse before removing anything. */
	TAILQ_FOREACH(o, &orphans, entry)
		if (strcmp(o->id, id) == 0 && !o->reapable) {
			snprintf(err, errlen, "%s: %s %s belongs to the forge; "
			    "remove it there", id, o->kind, o->what);
			json_decref(done);
			return (-1);
		}
	TAILQ_FOREACH_SAFE(o, &orphans, entry, tmp) {
		if (strcmp(o->id, id) != 0)
			continue;
		rec = json_pack("{s:{s:s, s:s, s:s, s:i}}", "reap", "id", id,
		    "kind", o->kind, "what", o->what, "uid", (int)uid);
		s = json_dumps(rec, JSON_COMPACT);
		json_decref(rec);
		if (journal_append(env->journal, s, strlen(s), NULL) == -1) {
			free(s);
			snprintf(err, errlen, "journal: %s", strerror(errno));
			json_decref(done);
			return (-1);
		}
		free(s);
		if (strcmp(o->kind, "mount") == 0)
			ok = disk_unmount(o->what) == 0;
		else if (strcmp(o->kind, "dir") == 0)
			ok = fs_remove_tree(o->what) == 0;
		else if (strcmp(o->kind, "cgroup") == 0)
			ok = cgroup_remove(o->what) == 0;
		else
			ok = kill((pid_t)strtol(id + 4, NULL, 10), SIGKILL) == 0;
		log_info("reap %s: %s %s by uid %u: %s", id, o->kind, o->what,
		    (unsigned)uid, ok ? "removed" : strerror(errno));
		json_array_append_new(done, json_pack("{s:s, s:s, s:b}",
		    "kind", o->kind, "what", o->what, "removed", ok));
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
