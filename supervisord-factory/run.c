/*
 * Sandboxed runs: the agent of an attempt, and the independent
 * validation run the verifier asks for.  The parent witnesses each:
 * it waits for pid 1 itself, enforces the wall deadline, caps the log
 * and reads resource usage from the cgroups, never from the agent.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include <linux/magic.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryd.h"
#include "image.h"
#include "log.h"

#define RUN_NOFILE	1024
#define RUN_PATH	"PATH=/usr/local/bin:/usr/bin:/bin"
#define RUN_HOME	"HOME=/tmp"
#define RUN_MAXHIDE	64
#define RUN_TREEVAR	"FACTORY_TREE="

_Static_assert(SERVICE_DATA <= SANDBOX_MAXDATA, "a service's data in a plan");

static struct run	*runs[256];

static void
run_log_cb(int fd, short event, void *arg)
{
	struct run	*r = arg;
	char		 buf[8192];
	ssize_t		 n;
	size_t		 keep;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			event_del(&r->logev);
			close(r->logpipe);
			r->logpipe = -1;
			return;
		}
		keep = (size_t)n;
		if (r->logged + keep > r->logmax) {
			keep = r->logmax - r->logged;
			if (!r->logtrunc && !r->detached) {
				r->logtrunc = 1;
				log_info("%s: log reached its limit of %llu "
				    "bytes, dropping the rest",
				    r->attempt->id,
				    (unsigned long long)r->logmax);
			}
		}
		if (keep > 0 && write(r->logfd, buf, keep) != (ssize_t)keep)
			log_warn("log write");
		r->logged += keep;
	}
}

/*
 * A service's pid 1: "Y" its ready command succeeded, "N" and a wait
 * status it failed; its "S" and "W" are kept for run_reap.  Nothing
 * else comes from a launcher; anything else is dropped.
 */
static void
run_sock_cb(int fd, short event, void *arg)
{
	struct run	*r = arg;
	char		 msg[16];
	ssize_t		 n;
	int		 st;

	for (;;) {
		n = recv(fd, msg, sizeof(msg), MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			event_del(&r->sockev);
			r->sockev_set = 0;
			return;
		}
		if (n == 1 && msg[0] == 'W')
			r->sb.watchdog_fired = 1;
		else if (n == 1 + (ssize_t)sizeof(st) && (msg[0] == 'S' ||
		    msg[0] == 'N')) {
			memcpy(&st, msg + 1, sizeof(st));
			if (msg[0] == 'S')
				r->sb.agent_status = st;
			else if (r->ready != NULL)
				r->ready(r, 0, st);
		} else if (n == 1 && msg[0] == 'Y' && r->ready != NULL)
			r->ready(r, 1, 0);
	}
}

static void
run_deadline_cb(int fd, short event, void *arg)
{
	struct run	*r = arg;

	log_info("%s: wall time of %llums reached, killing the %s",
	    r->attempt->id, (unsigned long long)r->attempt->m->limits.wall_ms,
	    r->validation ? "validation run" : r->setup ? "setup" : "agent");
	r->timedout = 1;
	run_kill(r);
}

/*
 * Paths the agent must not see: state, keys, sockets, remotes, homes,
 * the configuration, every other repository.  The sandbox's root holds
 * only system directories and what it is given by path, so most of
 * these are not there anyway; the masks keep them out of those too.
 */
static size_t
run_hide_list(const char *own, char **hide, size_t max)
{
	struct factoryd_conf	*conf = env->conf;
	struct conf_repo	*repo;
	static char		 store[RUN_MAXHIDE][PATH_MAX];
	const char		*cand[RUN_MAXHIDE];
	size_t			 n = 0, i, j, g;
	char			 tmp[PATH_MAX];

	cand[n++] = conf->statedir;
	strlcpy(store[0], conf->receipt_key, PATH_MAX);
	cand[n++] = dirname(store[0]);
	strlcpy(store[1], conf->verifier_key, PATH_MAX);
	cand[n++] = dirname(store[1]);
	/* The control sockets themselves, not their directory. */
	cand[n++] = conf->socket;
	snprintf(store[2], PATH_MAX, "%s%s", conf->socket, FACTORYD_ROSUFFIX);
	cand[n++] = store[2];
	cand[n++] = "/root";
	cand[n++] = "/home";
	cand[n++] = "/etc/factory";
	cand[n++] = "/etc/ssh";
	cand[n++] = env->conffile;
	i = 3;
	TAILQ_FOREACH(repo, &conf->repos, entry) {
		if (n + 4 >= RUN_MAXHIDE || i + 2 >= RUN_MAXHIDE)
			break;
		if (strcmp(repo->name, own) != 0)
			cand[n++] = repo->path;
		if (repo->forge == FORGE_LOCAL) {
			cand[n++] = repo->remote;
			cand[n++] = repo->pulls;
		} else if (repo->forge == FORGE_GITHUB) {
			strlcpy(store[i], repo->github.key, PATH_MAX);
			cand[n++] = dirname(store[i++]);
		}
	}
	/* Provider keys and upstream secrets: the gateway's alone. */
	for (g = 0; g < conf->ngw && n + 1 < RUN_MAXHIDE &&
	    i + 1 < RUN_MAXHIDE; g++) {
		strlcpy(store[i], conf->gw[g].key, PATH_MAX);
		cand[n++] = dirname(store[i++]);
	}
	/* Only what exists, each once. */
	j = 0;
	for (i = 0; i < n && j + 1 < max; i++) {
		struct stat	 sb;
		size_t		 k;

		if (stat(cand[i], &sb) == -1)
			continue;
		if (realpath(cand[i], tmp) == NULL || strcmp(tmp, "/") == 0)
			continue;
		for (k = 0; k < j; k++)
			if (strcmp(hide[k], cand[i]) == 0)
				break;
		if (k == j)
			hide[j++] = (char *)cand[i];
	}
	hide[j] = NULL;
	return (j);
}

/*
 * The objects of the attempt's repository, which the tree's .git
 * reaches through alternates: the only part of it the agent sees.
 */
static int
run_objects(const struct manifest *m, char *path, size_t len)
{
	struct conf_repo	*repo;
	struct stat		 sb;

	if ((repo = conf_repo(env->conf, m->repository)) == NULL)
		return (-1);
	snprintf(path, len, "%s/objects", repo->path);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return (0);
	snprintf(path, len, "%s/.git/objects", repo->path);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return (0);
	return (-1);
}

/*
 * The manifest's env, HOME and PATH; the gateway's variables (gw, or
 * none) come first, so a manifest's own OPENAI_API_KEY is not the one
 * read.
 */
static char **
run_env(char * const *menv, char * const *gw, char *tree)
{
	char	**e;
	size_t	 n = 0, i, ng = 0;

	while (menv != NULL && menv[n] != NULL)
		n++;
	while (gw != NULL && gw[ng] != NULL)
		ng++;
	if ((e = calloc(ng + n + 4, sizeof(*e))) == NULL)
		return (NULL);
	for (i = 0; i < ng; i++)
		e[i] = gw[i];
	for (i = 0; i < n; i++)
		e[ng + i] = menv[i];
	n += ng;
	e[n++] = RUN_HOME;
	e[n++] = RUN_PATH;
	if (tree != NULL)
		e[n++] = tree;	/* a service's FACTORY_TREE */
	e[n] = NULL;
	return (e);
}

/* "service NAME: " before what err says. */
static void
run_errname(const char *name, char *err, size_t errlen)
{
	char	 why[512];

	strlcpy(why, err, sizeof(why));
	snprintf(err, errlen, "service %s: %s", name, why);
}

/*
 * The attempt's grants (gateway.c): endpoints after the egress ones,
 * in listen, which spec then points at.
 */
static int
run_gateway(struct attempt *a, struct run *r, struct sandbox_spec *spec,
    struct sandbox_listen *listen, char *err, size_t errlen)
{
	if (gateway_new(a, spec->listen, spec->nlisten, &r->gateway, err,
	    errlen) == -1)
		return (-1);
	if (r->gateway == NULL)
		return (0);
	if (spec->nlisten > 0)
		memcpy(listen, spec->listen, spec->nlisten * sizeof(*listen));
	spec->nlisten = gateway_listen(r->gateway, listen, spec->nlisten);
	spec->listen = listen;
	return (0);
}

/*
 * kind: RUN_AGENT, RUN_VALIDATION, or RUN_SETUP (the manifest's setup,
 * with its own argv, env and network grant, as the attempt's uid).
 */
struct run *
run_start(struct attempt *a, int kind, const char *tree, char *err,
    size_t errlen)
{
	struct run_with	 w;

	memset(&w, 0, sizeof(w));
	w.kind = kind;
	return (run_start_with(a, &w, tree, err, errlen));
}

/*
 * The tree of the run a service serves, which its data is taken from:
 * the agent's (DIR/tree) or the validation run's (verify DIR/checkout).
 * The owner of DIR (the worker, the verifier) may rename the overlay
 * the parent mounted there, from a mount namespace of its own, and put
 * a directory in its place, or another attempt's overlay: the path
 * must be the overlay mounted for this run (its device, recorded when
 * it was mounted: disk_overlay_dev), whose device and inode then pin
 * it for the launcher.  Its resolved path into var, as
 * "FACTORY_TREE=PATH".
 */
static int
run_data_root(struct attempt *a, int validation, struct sandbox_spec *spec,
    char *var, size_t varlen, char *err, size_t errlen)
{
	const char	*dir = validation ? a->vdir : a->dir;
	const char	*name = validation ? "checkout" : "tree";
	const char	*root = var + strlen(RUN_TREEVAR);
	struct statfs	 sfs;
	struct stat	 st, dst;
	char		 real[PATH_MAX];

	if (realpath(dir, real) == NULL || stat(real, &dst) == -1) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return (-1);
	}
	if ((size_t)snprintf(var, varlen, RUN_TREEVAR "%s/%s", real, name) >=
	    varlen) {
		snprintf(err, errlen, "%s: path too long", dir);
		return (-1);
	}
	if (lstat(root, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_dev == dst.st_dev || statfs(root, &sfs) == -1 ||
	    sfs.f_type != OVERLAYFS_SUPER_MAGIC || (uint64_t)st.st_dev !=
	    (validation ? a->checkout_dev : a->tree_dev)) {
		snprintf(err, errlen, "data: %s is not the tree mounted for "
		    "it", root);
		return (-1);
	}
	spec->data_root = root;
	spec->data_dev = (uint64_t)st.st_dev;
	spec->data_ino = (uint64_t)st.st_ino;
	return (0);
}

/*
 * A service's part of the spec: its argv and uid, no repository, its
 * own ports to bind and its ready command; its data, below the tree of
 * the run it serves, with that tree's path in var (run_data_root).
 */
static int
run_service_spec(struct attempt *a, const struct run_with *w,
    struct sandbox_spec *spec, char *var, size_t varlen, char *err,
    size_t errlen)
{
	const struct manifest_service	*sv = &a->m->services[w->service];

	spec->uid = spec->gid = w->uid;
	spec->memory = manifest_svc_limit(a->m, w->service, 0);
	spec->pids = manifest_svc_limit(a->m, w->service, 1);
	spec->argv = sv->run;
	spec->expose = NULL;
	spec->bind = sv->ports;
	spec->nbind = sv->nports;
	spec->ready = sv->ready;
	if (sv->data == NULL || sv->data[0] == NULL)
		return (0);
	spec->data = sv->data;
	return (run_data_root(a, w->validation, spec, var, varlen, err,
	    errlen));
}

/*
 * As run_start, with more said: RUN_SERVICE and its index, and for any
 * run beside services, their network namespace and ports (w->netns).
 */
struct run *
run_start_with(struct attempt *a, const struct run_with *w, const char *tree,
    char *err, size_t errlen)
{
	int				 kind = w->kind;
	const struct manifest_setup	*su = kind == RUN_SETUP ?
					    a->m->setup : NULL;
	const struct manifest_service	*sv = kind == RUN_SERVICE ?
					    &a->m->services[w->service] : NULL;
	int				 validation = kind == RUN_VALIDATION ||
					    (sv != NULL && w->validation);
	struct sandbox_listen	 listen[SANDBOX_MAXLISTEN];
	struct sandbox_spec	 spec;
	struct run		*r;
	struct timeval		 tv;
	char			*hide[RUN_MAXHIDE], logpath[PATH_MAX];
	char			 objects[PATH_MAX], *expose[2];
	char			 image[PATH_MAX];
	char			 treevar[sizeof(RUN_TREEVAR) + PATH_MAX];
	char			 id[ATTEMPT_ID_MAX + 4];
	char			**envp;
	int			 p[2], i;

	for (i = 0; i < (int)(sizeof(runs) / sizeof(runs[0])); i++)
		if (runs[i] == NULL)
			break;
	if (i == (int)(sizeof(runs) / sizeof(runs[0]))) {
		snprintf(err, errlen, "too many sandboxes");
		return (NULL);
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	envp = NULL;
	r->attempt = a;
	r->validation = validation;
	r->setup = su != NULL;
	r->service = sv != NULL ? w->service + 1 : 0;
	r->uid = sv != NULL ? w->uid : validation ? a->vuid :
	    a->uid;
	r->logmax = a->m->limits.log;
	r->logpipe = r->logfd = -1;
	r->status = -1;

	if (sv != NULL)
		service_logpath(a, validation, sv->name, logpath,
		    sizeof(logpath));
	else
		attempt_logpath(a, validation, logpath, sizeof(logpath));
	if ((r->logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND |
	    O_CLOEXEC | O_NOFOLLOW, 0640)) == -1) {
		snprintf(err, errlen, "%s: %s", logpath, strerror(errno));
		goto fail;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	r->logpipe = p[0];
	fcntl(p[0], F_SETFL, O_NONBLOCK);

	/*
	 * Setup ends before the agent starts and the validation run
	 * starts after it: setup's sandbox takes the validation run's
	 * names (cgroups "<id>-v"), which the reconciler and teardown know.
	 */
	if (sv != NULL)
		snprintf(id, sizeof(id), "%s-%ss%d", a->id, validation ? "v" :
		    "", w->service);
	else
		snprintf(id, sizeof(id), "%s%s", a->id, validation ||
		    su != NULL ? "-v" : "");
	run_hide_list(a->m->repository, hide, RUN_MAXHIDE);
	expose[0] = run_objects(a->m, objects, sizeof(objects)) == 0 ?
	    objects : NULL;
	expose[1] = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.id = id;
	spec.uid = r->uid;
	spec.gid = r->uid;
	spec.tree = tree;
	spec.tree_dev = w->tree_dev;
	spec.tree_ino = w->tree_ino;
	spec.argv = validation ? a->m->validate : su != NULL ? su->run :
	    a->m->agent;
	spec.hide = hide;
	spec.exec_allow = a->m->exec;
	spec.expose = expose;
	spec.logfd = p[1];
	/* Beside services, the run has what they leave of the limits. */
	spec.memory = su != NULL ? a->m->limits.memory :
	    manifest_run_limit(a->m, 0);
	spec.pids = su != NULL ? a->m->limits.pids :
	    manifest_run_limit(a->m, 1);
	spec.cpu_ms = a->m->limits.cpu_ms;
	spec.fsize = a->m->limits.tree;
	spec.nofile = RUN_NOFILE;
	/*
	 * A service, or a run beside services: in their network namespace
	 * (the first service makes it), reaching their ports, named in
	 * /etc/passwd.
	 */
	if (sv != NULL || w->netns != NULL) {
		spec.netns = w->netns;
		spec.lo = 1;
		spec.passwd = 1;
		spec.connect = w->ports;
		spec.nconnect = w->nports;
	}
	if (sv != NULL && run_service_spec(a, w, &spec, treevar,
	    sizeof(treevar), err, errlen) == -1) {
		close(p[1]);
		goto fail;
	}
	/* The agent's own preview port: the one it may listen on. */
	if (kind == RUN_AGENT && a->m->preview.enabled &&
	    a->m->preview.service == PREVIEW_AGENT) {
		spec.lo = 1;
		spec.bind = &a->m->preview.port;
		spec.nbind = 1;
	}
	/* Its services, in its namespace first, keep it from autobind. */
	if (sv != NULL && !validation && a->m->preview.enabled &&
	    a->m->preview.service == PREVIEW_AGENT) {
		spec.reserve = &a->m->preview.port;
		spec.nreserve = 1;
	}
	/* A fleet claim's: ends the run if factoryd stalls past its lease. */
	spec.watchdog_ms = a->fleet_epoch != 0 ? a->fleet_watchdog_ms : 0;
	/* The digest frozen at submission, for the agent and validation. */
	if (a->image[0] != '\0') {
		if (image_rootfs(a->image + strlen("sha256:"), image,
		    sizeof(image)) == -1) {
			snprintf(err, errlen, "image %s: not in the store",
			    a->image);
			close(p[1]);
			goto fail;
		}
		spec.image = image;
	}
	if (egress_new(id, sv != NULL ? NULL : su != NULL ? su->allow :
	    a->m->allow, &r->egress, err, errlen) == -1) {
		close(p[1]);
		goto fail;
	}
	egress_spec(r->egress, &spec);
	/* Model and upstream grants: the agent's run only, never validation. */
	if (kind == RUN_AGENT && run_gateway(a, r, &spec, listen, err, errlen) ==
	    -1) {
		close(p[1]);
		goto fail;
	}
	if ((envp = run_env(sv != NULL ? sv->env : su != NULL ? su->env :
	    a->m->env, gateway_env(r->gateway), spec.data_root != NULL ?
	    treevar : NULL)) == NULL) {
		snprintf(err, errlen, "out of memory");
		close(p[1]);
		goto fail;
	}
	spec.env = envp;
	spec.home = gateway_home(r->gateway);

	if (sandbox_spawn(&spec, &r->sb, err, errlen) == -1) {
		close(p[1]);
		goto fail;
	}
	/* Pid 1 has said the argv is exec'd: the run starts here. */
	r->started_ms = now_ms();
	r->sb.watchdog_ms = spec.watchdog_ms;
	close(p[1]);
	gateway_start(r->gateway, &r->sb);
	egress_start(r->egress, &r->sb);
	free(envp);
	envp = NULL;
	r->active = 1;
	runs[i] = r;
	if (sv != NULL) {
		r->ready = w->ready;
		event_set(&r->sockev, r->sb.fd, EV_READ | EV_PERSIST,
		    run_sock_cb, r);
		event_add(&r->sockev, NULL);
		r->sockev_set = 1;
	}
	/* The next sandbox's namespaces, made while this agent runs. */
	(void)sandbox_pool_fill(SANDBOX_POOL);

	event_set(&r->logev, r->logpipe, EV_READ | EV_PERSIST, run_log_cb, r);
	event_add(&r->logev, NULL);
	evtimer_set(&r->deadline, run_deadline_cb, r);
	/* A service lives as long as the run beside it, which has one. */
	if (sv == NULL) {
		tv.tv_sec = a->m->limits.wall_ms / 1000;
		tv.tv_usec = (a->m->limits.wall_ms % 1000) * 1000;
		evtimer_add(&r->deadline, &tv);
	}
	return (r);
 fail:
	/* Which service: the set's failure names it (service.c). */
	if (sv != NULL)
		run_errname(sv->name, err, errlen);
	free(envp);
	gateway_free(r->gateway);
	egress_free(r->egress);
	if (r->logpipe != -1)
		close(r->logpipe);
	if (r->logfd != -1)
		close(r->logfd);
	free(r);
	return (NULL);
}

void
run_kill(struct run *r)
{
	if (r->active && sandbox_kill(&r->sb) == -1)
		log_warn("%s: sandbox kill", r->attempt->id);
}

/*
 * A reaped run's cgroups are removed when its last tasks have left
 * them: tried again on a timer (cgroup.c) for up to this long, the
 * half second a removal waits for emptiness and a second more.
 */
#define RUN_DESTROY_MS	1500

/* The cgroups of a reaped run are gone (or stayed): the attempt goes on. */
static void
run_destroyed(void *arg, int rc, const char *err)
{
	struct run	*r = arg;

	r->cgwait = NULL;
	if (rc == -1)
		log_warnx("%s: sandbox teardown: %s", r->attempt->id, err);
	if (r->logpipe != -1)
		run_log_cb(r->logpipe, EV_READ, r);
	report_run_done(r);
}

/*
 * SIGCHLD for a pid that is not a child process of ours: maybe a
 * sandbox's pid 1.  Everything left in it is killed, the usage read,
 * the cgroups checked empty and removed, then the attempt goes on
 * (run_destroyed, now or once they are).
 */
int
run_reap(pid_t pid, int status)
{
	struct run	*r = NULL;
	char		 err[512];
	int		 i;

	for (i = 0; i < (int)(sizeof(runs) / sizeof(runs[0])); i++)
		if (runs[i] != NULL && runs[i]->sb.pid == pid) {
			r = runs[i];
			runs[i] = NULL;
			break;
		}
	if (r == NULL)
		return (0);
	r->ended_ms = now_ms();
	r->active = 0;
	if (r->sockev_set) {
		event_del(&r->sockev);
		r->sockev_set = 0;
	}
	/* Its connections hold the namespace: they end with pid 1. */
	egress_free(r->egress);
	r->egress = NULL;
	/* The attempt leaves running: its tokens die now. */
	gateway_free(r->gateway);
	r->gateway = NULL;
	if (r->detached) {
		(void)sandbox_kill(&r->sb);
		/* Nobody waits for it: the removal goes on alone. */
		if (sandbox_destroy(&r->sb, err, sizeof(err)) == -1)
			(void)sandbox_destroy_later(&r->sb, RUN_DESTROY_MS,
			    NULL, NULL);
		r->attempt = NULL;
		run_free(r);
		return (1);
	}
	evtimer_del(&r->deadline);
	r->status = sandbox_exitstatus(&r->sb, status);
	if (r->sb.watchdog_fired) {
		/* Lapsed while factoryd did not answer: back to the queue. */
		r->attempt->fleet_watchdog = 1;
		r->attempt->fleet_handback = !r->attempt->fleet_marked;
		log_warnx("%s: fleet: its sandbox's watchdog ended it: the "
		    "lease lapsed and factoryd did not renew it in time",
		    r->attempt->id);
	}
	(void)sandbox_kill(&r->sb);
	if (sandbox_usage(&r->sb, &r->usage) == -1)
		log_warn("%s: usage", r->attempt->id);
	if (sandbox_destroy(&r->sb, err, sizeof(err)) == -1)
		r->cgwait = sandbox_destroy_later(&r->sb, RUN_DESTROY_MS,
		    run_destroyed, r);
	else
		run_destroyed(r, 0, NULL);
	return (1);
}

/*
 * The limit of lim that fired in a run whose pid 1 ended with wait
 * status st: "memory" (an OOM kill), "cpu" (pid 1's SIGXCPU) or "pids"
 * (a fork refused), else NULL.  The cgroups count for every process of
 * the run, so a child that broke a limit is found although pid 1 went
 * on and exited as it liked.  why says it, of what ("agent", "setup").
 */
const char *
run_limit(const char *what, const struct manifest *m, int beside,
    const struct sandbox_usage *u, int st, char *why, size_t len)
{
	struct manifest_limits	 l = m->limits, *lim = &l;
	char			 how[64];

	/* The agent's and validation's: what the services left them. */
	if (beside) {
		l.memory = manifest_run_limit(m, 0);
		l.pids = manifest_run_limit(m, 1);
	}

	if (WIFSIGNALED(st))
		snprintf(how, sizeof(how), "%s killed by signal %d", what,
		    WTERMSIG(st));
	else
		snprintf(how, sizeof(how), "%s exited with status %d", what,
		    WEXITSTATUS(st));
	if (u->oom_kills > 0 && WIFSIGNALED(st)) {
		snprintf(why, len, "%s killed: memory limit of %llu bytes",
		    what, (unsigned long long)lim->memory);
		return ("memory");
	}
	if (u->oom_kills > 0) {
		snprintf(why, len, "memory limit of %llu bytes: %llu OOM "
		    "kill%s in the attempt; %s",
		    (unsigned long long)lim->memory,
		    (unsigned long long)u->oom_kills,
		    u->oom_kills == 1 ? "" : "s", how);
		return ("memory");
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU) {
		snprintf(why, len, "%s killed: cpu limit of %llums", what,
		    (unsigned long long)lim->cpu_ms);
		return ("cpu");
	}
	if (u->pids_denied > 0) {
		snprintf(why, len, "pids limit of %llu: %llu fork%s refused "
		    "in the attempt; %s", (unsigned long long)lim->pids,
		    (unsigned long long)u->pids_denied,
		    u->pids_denied == 1 ? "" : "s", how);
		return ("pids");
	}
	return (NULL);
}

void
run_free(struct run *r)
{
	int	 i;

	if (r == NULL)
		return;
	if (r->active) {
		/* Kill it; run_reap() frees it once pid 1 is gone. */
		r->detached = 1;
		run_kill(r);
		return;
	}
	for (i = 0; i < (int)(sizeof(runs) / sizeof(runs[0])); i++)
		if (runs[i] == r)
			runs[i] = NULL;
	if (r->cgwait != NULL)
		sandbox_destroy_forget(r->cgwait);
	if (r->sockev_set)
		event_del(&r->sockev);
	evtimer_del(&r->deadline);
	egress_free(r->egress);
	r->egress = NULL;
	gateway_free(r->gateway);
	r->gateway = NULL;
	if (r->logpipe != -1) {
		event_del(&r->logev);
		close(r->logpipe);
	}
	if (r->logfd != -1)
		close(r->logfd);
	free(r);
}
