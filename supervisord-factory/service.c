/*
 * Services (factory-manifest(5) SERVICES): what a manifest starts
 * beside its agent, and afresh beside its validation run, such as the
 * database its tests need.
 *
 * Each service is a sandbox of its own (run.c, RUN_SERVICE): its own
 * uid, journaled with the attempt's at allocation; its own cgroups,
 * "<id>-sN" beside the agent and "<id>-vsN" beside validation; its own
 * pid, mount and IPC namespaces; its writable directory on the disk of
 * the run it serves.  The services of one run share one network
 * namespace, made for the first of them, which the run beside them
 * then joins: the agent reaches them on loopback, and nothing outside
 * that namespace reaches them at all.  Landlock lets each bind only
 * its own ports, and every process of the set connect only to the
 * set's ports (and, for the run, its egress endpoints).
 *
 * Pid 1 of each service runs its ready command, confined as the
 * service, until it exits 0, and says so ("Y", run.c); the run starts
 * once every service did, each within its ready-timeout, and not at
 * all if one did not or died first.  A service that dies while its run
 * goes on fails the attempt with its name and status.  When the run
 * ends, its services are killed, and its end is told upward
 * (report_run_done) only once they are reaped and their cgroups gone.
 *
 * But for one: when the manifest's preview is a service's, the agent's
 * set is kept past the agent (a->keep), for the preview alone, until
 * the attempt publishes or ends or the preview's ttl runs out
 * (service_unkeep); the validation run meanwhile has a set of its own.
 * A kept service that dies fails nothing: the agent is done.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "log.h"

enum svc_state {
	SVC_STARTING,		/* not every one is ready yet */
	SVC_READY,		/* the run beside them may start, or runs */
	SVC_STOPPING		/* killed: waiting for them to be reaped */
};

struct svc {
	struct run	*run;		/* NULL once reaped */
	int		 ready;
	int		 last;		/* the ready command's last status */
	uint64_t	 t0;		/* started (again, after a restart) */
	uint64_t	 ready_ms;	/* from the set's start */
	int		 restarts;	/* done, of its restart: */
	uint64_t	 dev, ino;	/* its directory, made at its start */
	struct sandbox_usage usage;	/* of its last run, once reaped */
};

struct svcset {
	struct attempt	*a;
	int		 validation;
	enum svc_state	 state;
	int		 n;
	int		 nlive;		/* not reaped yet */
	int		 nready;
	int		 netns;		/* the set's network namespace */
	uint64_t	 t0;		/* when the first was started */
	uint64_t	 ready_ms;	/* t0 to the last one ready */
	struct event	 timer;		/* the next ready-timeout */
	int		 timer_set;
	struct run	*held;		/* the run whose end waits for us */
	int		 kept;		/* past its run, for the preview */
	uint16_t	 ports[SANDBOX_SVCPORTS];
	int		 nports;
	struct svc	 s[MANIFEST_SERVICES];
};

static void	service_arm(struct svcset *);
static void	service_kill(struct svcset *);
static int	service_start(struct svcset *, int, char *, size_t);

static struct svcset *
service_set(struct attempt *a, struct run *r, int *idx)
{
	struct svcset	*sets[2] = { a->svc, a->keep };
	int		 i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; sets[k] != NULL && i < sets[k]->n; i++)
			if (sets[k]->s[i].run == r) {
				*idx = i;
				return (sets[k]);
			}
	return (NULL);
}

/* "exited with status N" or "killed by signal N", into buf. */
static const char *
service_status(int st, char *buf, size_t len)
{
	if (st == -1)
		snprintf(buf, len, "did not start");
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d", WTERMSIG(st));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	return (buf);
}

/* The set failed: said once upward; every service is killed. */
static void
service_failed(struct svcset *set, const char *fmt, ...)
    __attribute__((__format__ (printf, 2, 3)));

static void
service_failed(struct svcset *set, const char *fmt, ...)
{
	va_list	 ap;
	char	 why[512];

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	service_kill(set);
	report_services_failed(set->a, why);
}

static void
service_free(struct svcset *set)
{
	if (set->timer_set)
		evtimer_del(&set->timer);
	if (set->netns != -1)
		close(set->netns);
	if (set->a->svc == set)
		set->a->svc = NULL;
	if (set->a->keep == set)
		set->a->keep = NULL;
	free(set);
}

/* Pid 1 of service r said its ready command succeeded, or failed. */
static void
service_readiness(struct run *r, int ready, int status)
{
	struct svcset	*set;
	struct svc	*s;
	int		 i;

	if ((set = service_set(r->attempt, r, &i)) == NULL ||
	    set->state == SVC_STOPPING)
		return;
	s = &set->s[i];
	if (!ready) {
		s->last = status;
		return;
	}
	if (s->ready)
		return;
	s->ready = 1;
	/* Restarted while its run goes on: nothing waits for it. */
	if (set->state == SVC_READY) {
		log_info("%s: service %s ready again in %llums", set->a->id,
		    set->a->m->services[i].name,
		    (unsigned long long)(now_ms() - s->t0));
		set->nready++;
		service_arm(set);
		return;
	}
	s->ready_ms = now_ms() - set->t0;
	log_info("%s: service %s ready in %llums", set->a->id,
	    set->a->m->services[i].name, (unsigned long long)s->ready_ms);
	if (++set->nready < set->n) {
		service_arm(set);
		return;
	}
	set->state = SVC_READY;
	set->ready_ms = now_ms() - set->t0;
	if (set->timer_set) {
		evtimer_del(&set->timer);
		set->timer_set = 0;
	}
	report_services_ready(set->a, set->validation);
}

/* A ready-timeout went by: the first service not ready by its own fails. */
static void
service_timeout(int fd, short event, void *arg)
{
	struct svcset			*set = arg;
	const struct manifest_service	*sv;
	uint64_t			 now = now_ms();
	char				 st[96], last[48];
	int				 i;

	set->timer_set = 0;
	if (set->state == SVC_STOPPING || set->kept)
		return;
	for (i = 0; i < set->n; i++) {
		sv = &set->a->m->services[i];
		if (set->s[i].ready || set->s[i].run == NULL ||
		    now - set->s[i].t0 < sv->ready_ms)
			continue;
		if (set->s[i].last == -1)
			snprintf(st, sizeof(st), "its ready command did not "
			    "answer");
		else
			snprintf(st, sizeof(st), "its ready command %s",
			    service_status(set->s[i].last, last,
			    sizeof(last)));
		service_failed(set, "service %s: not ready in %llums%s (%s)",
		    sv->name, (unsigned long long)sv->ready_ms,
		    set->s[i].restarts > 0 ? " after a restart" : "", st);
		return;
	}
	service_arm(set);
}

/* The timer at the earliest ready-timeout of a service not ready. */
static void
service_arm(struct svcset *set)
{
	struct timeval	 tv;
	uint64_t	 at = UINT64_MAX, now = now_ms(), ms;
	int		 i;

	/* The earliest instant a service not ready reaches its timeout. */
	for (i = 0; i < set->n; i++)
		if (!set->s[i].ready && set->s[i].run != NULL &&
		    set->s[i].t0 + set->a->m->services[i].ready_ms < at)
			at = set->s[i].t0 + set->a->m->services[i].ready_ms;
	if (at == UINT64_MAX)
		return;
	ms = at > now ? at - now : 0;
	if (set->timer_set)
		evtimer_del(&set->timer);
	evtimer_set(&set->timer, service_timeout, set);
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(&set->timer, &tv);
	set->timer_set = 1;
}

/*
 * A service's directory on the disk of the run it serves, its uid's
 * alone: DIR/services/NAME, made below DIR's descriptor, never through
 * a link (the worker owns DIR, the verifier its verify DIR).  The
 * owner of DIR can still rename what is in it before the spawn looks
 * again: the directory is pinned by its device and inode in w, which
 * the spawn and the launcher hold the path to.
 */
static int
service_dir(struct svcset *set, int i, char *path, size_t len,
    struct run_with *w, char *err, size_t errlen)
{
	struct svc	*s = &set->s[i];
	struct stat	 st;
	struct attempt	*a = set->a;
	int		 made = 0;
	const char	*base = set->validation ? a->vdir : a->dir;
	const char	*name = a->m->services[i].name;
	int		 bfd = -1, sfd = -1, fd = -1, rc = -1;

	if ((size_t)snprintf(path, len, "%s/services/%s", base, name) >= len) {
		snprintf(err, errlen, "%s: path too long", base);
		return (-1);
	}
	if ((bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 ||
	    (mkdirat(bfd, "services", 0755) == -1 && errno != EEXIST) ||
	    (sfd = openat(bfd, "services", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fchown(sfd, 0, 0) == -1 || fchmod(sfd, 0755) == -1 ||
	    ((made = mkdirat(sfd, name, 0700)) == -1 && errno != EEXIST) ||
	    (fd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	/*
	 * Started again: the directory it had, and no other.  Found at
	 * its first start: only one made for its uid before (an earlier
	 * run of the attempt), which the owner of DIR cannot make.
	 */
	else if ((s->ino != 0 && ((uint64_t)st.st_dev != s->dev ||
	    (uint64_t)st.st_ino != s->ino)) || (s->ino == 0 && made == -1 &&
	    st.st_uid != service_uid(a, i, set->validation)))
		snprintf(err, errlen, "%s: not the directory made for it",
		    path);
	else if (fchown(fd, service_uid(a, i, set->validation),
	    service_uid(a, i, set->validation)) == -1 ||
	    fchmod(fd, 0700) == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else {
		s->dev = w->tree_dev = (uint64_t)st.st_dev;
		s->ino = w->tree_ino = (uint64_t)st.st_ino;
		rc = 0;
	}
	if (fd != -1)
		close(fd);
	if (sfd != -1)
		close(sfd);
	if (bfd != -1)
		close(bfd);
	return (rc);
}

/* Start service i of set: in the set's network namespace after the first. */
static int
service_start(struct svcset *set, int i, char *err, size_t errlen)
{
	struct attempt	*a = set->a;
	struct run_with	 w;
	struct run	*r;
	char		 dir[PATH_MAX], path[64];

	memset(&w, 0, sizeof(w));
	if (service_dir(set, i, dir, sizeof(dir), &w, err, errlen) == -1)
		return (-1);
	w.kind = RUN_SERVICE;
	w.service = i;
	w.validation = set->validation;
	w.uid = service_uid(a, i, set->validation);
	w.netns = set->netns != -1 ? &set->netns : NULL;
	w.ports = set->ports;
	w.nports = set->nports;
	w.ready = service_readiness;
	if ((r = run_start_with(a, &w, dir, err, errlen)) == NULL)
		return (-1);
	set->s[i].run = r;
	set->s[i].t0 = now_ms();
	set->nlive++;
	if (set->netns == -1) {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)r->sb.pid);
		/* Gone (ENOENT): its pid 1 exited, and took the link. */
		if ((set->netns = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			if (errno == ENOENT)
				snprintf(err, errlen, "service %s exited before "
				    "it was ready, its network namespace with it",
				    a->m->services[i].name);
			else
				snprintf(err, errlen, "%s: %s", path,
				    strerror(errno));
			return (-1);
		}
	}
	log_info("%s: service %s started as uid %u", a->id,
	    a->m->services[i].name, (unsigned)service_uid(a, i,
	    set->validation));
	return (0);
}

/*
 * The services of a's run (validation: its validation run's), before
 * that run starts: 1 if it may start now (they are ready, or there are
 * none), 0 if it waits for report_services_ready or _failed, -1 and
 * err if they cannot be started (what was started is being stopped).
 */
int
service_ready(struct attempt *a, int validation, char *err, size_t errlen)
{
	struct svcset	*set = a->svc;
	int		 i, j;

	if (a->m->nservices == 0)
		return (1);
	if (set != NULL)
		return (set->validation == validation &&
		    set->state == SVC_READY);
	if ((set = calloc(1, sizeof(*set))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	set->a = a;
	set->validation = validation;
	set->state = SVC_STARTING;
	set->n = a->m->nservices;
	set->netns = -1;
	for (i = 0; i < set->n; i++) {
		set->s[i].last = -1;
		for (j = 0; j < a->m->services[i].nports &&
		    set->nports < SANDBOX_SVCPORTS; j++)
			set->ports[set->nports++] = a->m->services[i].ports[j];
	}
	a->svc = set;
	set->t0 = now_ms();
	for (i = 0; i < set->n; i++) {
		if (service_start(set, i, err, errlen) == 0)
			continue;
		/* The others die; the attempt fails on the caller's word. */
		service_kill(set);
		if (set->nlive == 0)
			service_free(set);
		return (-1);
	}
	service_arm(set);
	return (0);
}

/* Service i's uid beside the agent, or (validation) beside validation. */
uid_t
service_uid(const struct attempt *a, int i, int validation)
{
	return (a->suid[validation ? a->m->nservices + i : i]);
}

/*
 * The network namespace of the agent's set, running or kept (ours:
 * not to be closed), or -1: never the validation run's.
 */
int
service_netns(const struct attempt *a)
{
	const struct svcset	*set = a->keep != NULL ? a->keep : a->svc;

	return (set != NULL && !set->validation && set->state == SVC_READY ?
	    set->netns : -1);
}

/* The set's network namespace and ports, for the run beside it. */
void
service_with(struct attempt *a, struct run_with *w)
{
	if (a->svc == NULL || a->svc->state != SVC_READY)
		return;
	w->netns = &a->svc->netns;
	w->ports = a->svc->ports;
	w->nports = a->svc->nports;
}

static void
service_kill(struct svcset *set)
{
	int	 i;

	set->state = SVC_STOPPING;
	if (set->timer_set) {
		evtimer_del(&set->timer);
		set->timer_set = 0;
	}
	for (i = 0; i < set->n; i++)
		if (set->s[i].run != NULL)
			run_kill(set->s[i].run);
}

/*
 * The run r beside a's services ended: they are stopped, and r's end
 * goes upward once they are gone.  1 if it waits (report_run_done(r)
 * again then), 0 if there is nothing to wait for.
 */
int
service_hold(struct attempt *a, struct run *r)
{
	struct svcset	*set = a->svc;

	if (set == NULL || r->service || r->setup)
		return (0);
	if (set->nlive == 0) {
		service_free(set);
		return (0);
	}
	/* The agent's, serving the preview: it stays, the run goes on. */
	if (!set->validation && set->state == SVC_READY &&
	    set->nready == set->n &&
	    a->m->preview.enabled && a->m->preview.service != PREVIEW_AGENT &&
	    env->conf->preview.enabled && a->preview_until != 0 &&
	    a->keep == NULL && a->state == AS_RUNNING) {
		set->kept = 1;
		a->keep = set;
		a->svc = NULL;
		log_info("%s: services kept for the preview", a->id);
		return (0);
	}
	set->held = r;
	service_kill(set);
	return (1);
}

/*
 * The teardown: every service killed.  1 while one is left (the
 * teardown goes on at report_services_gone), else 0.
 */
int
service_stop(struct attempt *a)
{
	struct svcset	*sets[2] = { a->svc, a->keep };
	int		 k, left = 0;

	for (k = 0; k < 2; k++) {
		if (sets[k] == NULL)
			continue;
		if (sets[k]->nlive == 0) {
			service_free(sets[k]);
			continue;
		}
		service_kill(sets[k]);
		left = 1;
	}
	return (left);
}

/* The preview is over: the set kept for it goes (reaped, then freed). */
void
service_unkeep(struct attempt *a)
{
	struct svcset	*set = a->keep;

	if (set == NULL)
		return;
	log_info("%s: services kept for the preview: stopped", a->id);
	if (set->nlive == 0)
		service_free(set);
	else
		service_kill(set);
}

/*
 * Service i died while its run goes on, and may be restarted: it is,
 * as it was started, and must be ready again within its ready-timeout;
 * its run is not held meanwhile.  -1 if it could not be started.
 */
static int
service_restart(struct svcset *set, int i, int status)
{
	struct attempt	*a = set->a;
	struct svc	*s = &set->s[i];
	char		 st[64], err[256];

	s->restarts++;
	if (s->ready)		/* not if it died restarting */
		set->nready--;
	s->ready = 0;
	s->last = -1;
	log_warnx("%s: service %s %s while the %s ran: restart %d of %d",
	    a->id, a->m->services[i].name, service_status(status, st,
	    sizeof(st)), set->validation ? "validation" : "agent",
	    s->restarts, a->m->services[i].restarts);
	if (service_start(set, i, err, sizeof(err)) == -1) {
		log_warnx("%s: service %s: restart: %s", a->id,
		    a->m->services[i].name, err);
		return (-1);
	}
	service_arm(set);
	return (0);
}

/*
 * A service's pid 1 was reaped and its cgroups are gone.  One that was
 * not stopped fails the attempt; the last one reaped lets the run held
 * for it go on (or the teardown).  The set is gone before anything is
 * told upward: what that starts finds a->svc NULL.
 */
void
service_run_done(struct run *r)
{
	struct attempt	*a = r->attempt;
	struct svcset	*set;
	struct run	*held = NULL;
	char		 st[64], why[512];
	int		 i, status = r->status, failing, gone = 0;

	if ((set = service_set(a, r, &i)) == NULL) {
		run_free(r);
		return;
	}
	set->s[i].run = NULL;
	set->s[i].usage = r->usage;
	set->nlive--;
	run_free(r);
	/* Dead while its run goes on, with a restart: left to it. */
	if (!set->kept && set->state == SVC_READY &&
	    set->s[i].restarts < a->m->services[i].restarts &&
	    service_restart(set, i, status) == 0)
		return;
	/* Kept past the agent: a death ends the preview, nothing else. */
	if (set->kept && set->state != SVC_STOPPING) {
		log_warnx("%s: service %s, kept for the preview, %s", a->id,
		    a->m->services[i].name, service_status(status, st,
		    sizeof(st)));
		service_kill(set);
	}
	failing = set->state != SVC_STOPPING;
	if (failing) {
		snprintf(why, sizeof(why), "service %s %s%s %s%s",
		    a->m->services[i].name, service_status(status, st,
		    sizeof(st)), set->s[i].usage.oom_kills > 0 ?
		    " at its memory limit" : "", set->state == SVC_STARTING ?
		    "before it was ready" : set->validation ?
		    "while the validation ran" : "while the agent ran",
		    set->s[i].restarts == 0 ? "" : set->s[i].restarts == 1 ?
		    ", after 1 restart" : ", after its restarts");
		log_warnx("%s: %s", a->id, why);
		service_kill(set);
	}
	if (set->nlive == 0) {
		held = set->held;
		service_free(set);
		gone = 1;
	}
	if (failing)
		report_services_failed(a, why);
	else if (held != NULL)
		report_run_done(held);
	else if (gone)
		report_services_gone(a);
}

/*
 * What the receipts and show say of a set (its run's): each service's
 * name, uid and time to ready; NULL without services.
 */
json_t *
service_facts(const struct attempt *a)
{
	const struct svcset	*set = a->svc;
	struct sandbox_usage	 u;
	json_t			*arr, *o;
	int			 i;

	if (set == NULL)
		return (NULL);
	if ((arr = json_array()) == NULL)
		return (NULL);
	for (i = 0; i < set->n; i++) {
		o = json_pack("{s:s, s:i, s:I, s:I, s:I, s:i}", "name",
		    a->m->services[i].name, "uid", (int)service_uid(a, i,
		    set->validation),
		    "ready_ms", (json_int_t)set->s[i].ready_ms,
		    "memory", (json_int_t)manifest_svc_limit(a->m, i, 0),
		    "pids", (json_int_t)manifest_svc_limit(a->m, i, 1),
		    "restarts", set->s[i].restarts);
		/* Its usage so far, or of its last run once reaped. */
		u = set->s[i].usage;
		if (set->s[i].run != NULL) {
			json_object_set_new(o, "pid",
			    json_integer(set->s[i].run->sb.pid));
			(void)sandbox_usage(&set->s[i].run->sb, &u);
		}
		json_object_set_new(o, "usage", usage_json(&u));
		json_array_append_new(arr, o);
	}
	return (json_pack("{s:o, s:I}", "services", arr, "ready_ms",
	    (json_int_t)set->ready_ms));
}

/* The set's time to ready, for the stage times: 0 without services. */
uint64_t
service_ready_ms(const struct attempt *a)
{
	return (a->svc != NULL ? a->svc->ready_ms : 0);
}
