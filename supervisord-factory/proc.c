/*
 * The children: fork+exec from libexec with their socket on fd 3,
 * under their own uid, restarted with backoff when they die or
 * misbehave.  Star topology: each child has one channel, to us.
 * Transport only: what a child's messages mean, and what its coming
 * up or going away means, is the row of its kind in factoryd.c's
 * child_handlers table.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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

#define CHILD_ARGV_MAX	64
#define PROC_BIN_FD	(PROC_PARENT_FD + 1)	/* the binary, until exec */

static void	proc_start(struct child *);
#define PROC_RECONFIG_WAIT	600	/* s a reload waits for a busy child */
#define PROC_STOP_WAIT		10	/* s from SIGTERM to SIGKILL */

static void	proc_restart_cb(int, short, void *);
static void	proc_restart(struct child *);
static void	proc_dispatch(int, short, void *);
static int	proc_argv(struct child *, char **, size_t, char *, size_t);
static void	proc_died(struct child *, int);
__dead static void proc_exec(struct child *, int);

static const char *
child_name(struct child *c)
{
	return (factory_procs[c->id].name);
}

/*
 * Who answers for what: the child handlers and the reapers of pids
 * that are not children (a run's pid 1, a setup store, an image walk)
 * are given by the file that wires the parent together (factoryd.c),
 * so that this file, below them all, never calls up into them.
 */
static const struct child_handler *handlers;
static size_t		 nhandlers;
static int		(*reapers[PROC_REAPERS_MAX])(pid_t, int);
static int		 nreapers;

void
proc_handlers(const struct child_handler *tab, size_t n)
{
	handlers = tab;
	nhandlers = n;
}

void
proc_reaper(int (*fn)(pid_t, int))
{
	if (nreapers == PROC_REAPERS_MAX)
		fatalx("proc_reaper: too many");
	reapers[nreapers++] = fn;
}

static const struct child_handler *
child_handler(enum factory_procid id)
{
	size_t	 i;

	for (i = 0; i < nhandlers; i++)
		if (handlers[i].id == id)
			return (&handlers[i]);
	return (NULL);
}

void
proc_init_children(void)
{
	struct child	*c;
	int		 i, n = 0;
	enum factory_procid ids[] = { PROC_WORKER, PROC_RECONCILER,
	    PROC_PUBLISHER, PROC_EGRESS, PROC_IMAGE, PROC_GATEWAY };

	for (i = 0; i < (int)(sizeof(ids) / sizeof(ids[0])); i++) {
		c = &env->children[n++];
		c->id = ids[i];
	}
	if (env->conf->fleet.enabled)
		env->children[n++].id = PROC_FLEET;
	if (env->conf->preview.enabled)
		env->children[n++].id = PROC_PREVIEW;
	for (i = 0; i < env->conf->verifiers && i < MAX_VERIFIERS; i++) {
		c = &env->children[n++];
		c->id = PROC_VERIFIER;
		c->slot = i;
	}
	env->nchildren = n;
	for (i = 0; i < n; i++) {
		c = &env->children[i];
		c->pid = -1;
		c->state = CHILD_DOWN;
		c->backoff = CHILD_BACKOFF_MIN;
		c->iev.ibuf.fd = -1;
		evtimer_set(&c->restart_ev, proc_restart_cb, c);
	}
}

void
proc_start_all(void)
{
	int	 i;

	for (i = 0; i < env->nchildren; i++)
		proc_start(&env->children[i]);
}

struct child *
proc_find(enum factory_procid id, int slot)
{
	int	 i;

	for (i = 0; i < env->nchildren; i++)
		if (env->children[i].id == id && env->children[i].slot == slot)
			return (&env->children[i]);
	return (NULL);
}

const char *
proc_state_name(enum child_state s)
{
	switch (s) {
	case CHILD_DOWN:
		return ("down");
	case CHILD_STARTING:
		return ("starting");
	case CHILD_RUNNING:
		return ("running");
	case CHILD_STOPPING:
		return ("stopping");
	}
	return ("unknown");
}

/*
 * The command line of a child: its flags and the variables its unveil
 * rules refer to.  Also returns a key to tell whether a reload changed
 * anything the child depends on.
 */
static int
proc_argv(struct child *c, char **argv, size_t max, char *key, size_t keylen)
{
	struct factoryd_conf	*conf = env->conf;
	const struct factory_proc *p = &factory_procs[c->id];
	struct conf_repo	*r;
	static char		 vars[CHILD_ARGV_MAX][PATH_MAX + 32];
	size_t			 n = 0, v = 0, i;
	char			 path[PATH_MAX + 32];

#define ADDARG(s) do {							\
	if (n + 1 >= max)						\
		return (-1);						\
	argv[n++] = (char *)(s);					\
} while (0)
#define ADDVAR(fmt, ...) do {						\
	if (v >= CHILD_ARGV_MAX || n + 2 >= max)			\
		return (-1);						\
	snprintf(vars[v], sizeof(vars[v]), fmt, __VA_ARGS__);		\
	ADDARG("-V");							\
	ADDARG(vars[v++]);						\
} while (0)

	ADDARG(p->binary);
	if (env->debug)
		ADDARG("-d");
	if (env->verbose > 0)
		ADDARG(env->verbose > 1 ? "-vv" : "-v");
	ADDVAR("state=%s", conf->statedir);
	TAILQ_FOREACH(r, &conf->repos, entry) {
		ADDVAR("repos=%s", r->path);
		if (r->forge == FORGE_LOCAL) {
			ADDVAR("remotes=%s", r->remote);
			ADDVAR("pulls=%s", r->pulls);
		} else if (r->forge == FORGE_GITHUB) {
			ADDVAR("forge_keys=%s", r->github.key);
			ADDVAR("forge_ca=%s", r->github.ca);
		}
	}
	if (c->id == PROC_VERIFIER)
		ADDVAR("verifier_key=%s", conf->verifier_key);
	/* The gateway reads its keys and CA files, nothing else. */
	for (i = 0; c->id == PROC_GATEWAY && i < conf->ngw; i++) {
		ADDVAR("gw_keys=%s", conf->gw[i].key);
		ADDVAR("gw_ca=%s", conf->gw[i].ca);
	}
	if (c->id == PROC_WORKER)
		ADDVAR("heartbeat_ms=%d", conf->lease_ttl * 1000 / 3);
	if (c->id == PROC_RECONCILER) {
		ADDVAR("attempt_uids=%u-%u", (unsigned)conf->attempt_uid_lo,
		    (unsigned)conf->attempt_uid_hi);
		ADDVAR("cgroup_parent=%s", sandbox_cgroup_parent());
	}
	argv[n] = NULL;
#undef ADDARG
#undef ADDVAR

	snprintf(path, sizeof(path), "%s/%s %u:%u", conf->libexec, p->binary,
	    (unsigned)conf->users[c->id].uid, (unsigned)conf->users[c->id].gid);
	strlcpy(key, path, keylen);
	for (i = 1; i < n; i++) {
		strlcat(key, " ", keylen);
		strlcat(key, argv[i], keylen);
	}
	return (0);
}

static void
proc_start(struct child *c)
{
	int	 sv[2];
	pid_t	 pid;
	char	*argv[CHILD_ARGV_MAX * 2 + 8], key[8192];

	if (env->shutting_down)
		return;
	/* A new process: no reload waits for it, none stops it. */
	c->reconfig = 0;
	c->stopping_at = 0;
	if (proc_argv(c, argv, sizeof(argv) / sizeof(argv[0]), key,
	    sizeof(key)) == -1) {
		log_warnx("%s: too many arguments", child_name(c));
		return;
	}
	free(c->argv_key);
	c->argv_key = strdup(key);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0, sv) == -1) {
		log_warn("%s: socketpair", child_name(c));
		goto retry;
	}
	switch (pid = fork()) {
	case -1:
		log_warn("%s: fork", child_name(c));
		close(sv[0]);
		close(sv[1]);
		goto retry;
	case 0:
		close(sv[0]);
		proc_exec(c, sv[1]);
		/* NOTREACHED */
	}
	close(sv[1]);
	c->pid = pid;
	c->state = CHILD_STARTING;
	c->started = time(NULL);
	free(c->policy);
	c->policy = NULL;
	if (imsgev_init(&c->iev, sv[0], proc_dispatch, c, FACTORY_MAXIMSG)
	    == -1)
		fatal("imsgev_init");
	imsgbuf_allow_fdpass(&c->iev.ibuf);
	log_debug("%s: started pid %d", child_name(c), (int)pid);
	return;
 retry:
	c->state = CHILD_DOWN;
	proc_died(c, 0);
}

/*
 * In the forked child: fd 3, nothing else, the child's user, exec of
 * the binary opened at start (fd 4 until the exec closes it).  The
 * parent is single-threaded, so the formatting below is safe here.
 */
__dead static void
proc_exec(struct child *c, int fd)
{
	const struct factory_proc *p = &factory_procs[c->id];
	struct conf_user	*u = &env->conf->users[c->id];
	char			*argv[CHILD_ARGV_MAX * 2 + 8], key[8192];
	char			 path[PATH_MAX];
	char			*envp[] = { NULL, NULL };
	sigset_t		 set;
	int			 i, bin;
#ifdef FACTORY_TESTBUILD
	static char		 crash[128];
	const char		*want = getenv(FACTORY_CRASH_ENV);

	/* Only a child's first life crashes, or it would never recover. */
	if (want != NULL && c->restarts == 0 && !c->recycled) {
		snprintf(crash, sizeof(crash), "%s=%s", FACTORY_CRASH_ENV,
		    want);
		envp[0] = crash;
	}
#endif

	/* Above fd 3 first: the binary's fd may be 3 itself. */
	if ((bin = fcntl(env->binfd[c->id], F_DUPFD_CLOEXEC,
	    PROC_PARENT_FD + 1)) == -1)
		_exit(127);
	if (fd == PROC_PARENT_FD) {
		if (fcntl(fd, F_SETFD, 0) == -1 ||
		    fcntl(fd, F_SETFL, 0) == -1)
			_exit(127);
	} else if (dup2(fd, PROC_PARENT_FD) == -1 ||
	    fcntl(PROC_PARENT_FD, F_SETFL, 0) == -1)
		_exit(127);
	if (bin != PROC_BIN_FD && (dup3(bin, PROC_BIN_FD, O_CLOEXEC) == -1 ||
	    close(bin) == -1))
		_exit(127);
	closefrom(PROC_BIN_FD + 1);

	for (i = 1; i < NSIG; i++)
		signal(i, SIG_DFL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);

	if (setgroups(0, NULL) == -1 ||
	    setresgid(u->gid, u->gid, u->gid) == -1 ||
	    setresuid(u->uid, u->uid, u->uid) == -1) {
		dprintf(2, "%s: cannot become uid %u gid %u: %s\n", p->name,
		    (unsigned)u->uid, (unsigned)u->gid, strerror(errno));
		_exit(127);
	}
	if (proc_argv(c, argv, sizeof(argv) / sizeof(argv[0]), key,
	    sizeof(key)) == -1)
		_exit(127);
	snprintf(path, sizeof(path), "%s/%s", env->conf->libexec, p->binary);
	fexecve(PROC_BIN_FD, argv, envp);
	dprintf(2, "%s: exec %s: %s\n", p->name, path, strerror(errno));
	_exit(127);
}

static void
proc_restart_cb(int fd, short event, void *arg)
{
	proc_start(arg);
}

/*
 * Schedule a restart: 1s, 2s, 4s ... up to 30s; a child that ran for a
 * minute starts again from 1s.
 */
static void
proc_died(struct child *c, int ranfor)
{
	struct timeval	 tv;

	if (env->shutting_down)
		return;
	if (ranfor >= CHILD_STABLE)
		c->backoff = CHILD_BACKOFF_MIN;
	tv.tv_sec = c->backoff;
	tv.tv_usec = 0;
	c->backoff = c->backoff * 2 > CHILD_BACKOFF_MAX ? CHILD_BACKOFF_MAX :
	    c->backoff * 2;
	c->restarts++;
	log_info("%s: restarting in %lds", child_name(c), (long)tv.tv_sec);
	evtimer_add(&c->restart_ev, &tv);
}

void
proc_kill(struct child *c, const char *why)
{
	if (c->pid <= 0)
		return;
	log_warnx("%s (pid %d): %s, killing it", child_name(c), (int)c->pid,
	    why);
	kill(c->pid, SIGKILL);
	imsgev_clear(&c->iev);
}

/*
 * A malformed message: its sender is killed, or, reaped already
 * (proc_reap reads what it said before dying), the refusal is still
 * said and the rest of what it sent dropped.
 */
static void
proc_refuse(struct child *c, const char *why)
{
	if (c->pid > 0) {
		proc_kill(c, why);
		return;
	}
	log_warnx("%s (exited): %s; the rest of what it sent is dropped",
	    child_name(c), why);
	imsgev_clear(&c->iev);
}

void
proc_reap(void)
{
	const struct child_handler *h;
	struct child	*c;
	pid_t		 pid;
	int		 status, i;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		c = NULL;
		for (i = 0; i < env->nchildren; i++)
			if (env->children[i].pid == pid)
				c = &env->children[i];
		if (c == NULL) {
			for (i = 0; i < nreapers; i++)
				if (reapers[i](pid, status))
					break;
			if (i == nreapers)
				log_debug("reaped pid %d", (int)pid);
			continue;
		}
		if (WIFSIGNALED(status))
			log_warnx("%s (pid %d) killed by signal %d",
			    child_name(c), (int)pid, WTERMSIG(status));
		else if (WEXITSTATUS(status) != 0 || !env->shutting_down)
			log_warnx("%s (pid %d) exited with status %d",
			    child_name(c), (int)pid, WEXITSTATUS(status));
		/*
		 * What it said before it died still counts (a verifier
		 * exits right after its verdict): read it first.
		 */
		c->pid = -1;	/* reaped: never signal that pid again */
		if (c->iev.ibuf.fd != -1)
			proc_dispatch(c->iev.ibuf.fd, EV_READ, c);
		imsgev_clear(&c->iev);
		c->state = CHILD_DOWN;
		if ((h = child_handler(c->id)) != NULL && h->lost != NULL)
			h->lost(c);
		/*
		 * A verifier that delivered its verdict, factory-image
		 * that finished its import: replaced now.
		 */
		if (c->recycle) {
			c->recycle = 0;
			c->recycled++;
			proc_start(c);
			continue;
		}
		proc_died(c, (int)(time(NULL) - c->started));
	}
}

/*
 * The worker's lease: silent for lease-ttl, it is killed; the parent
 * bumps the epochs of what it held and drives them on with a new one.
 */
static struct event	 ev_watchdog;

static void
proc_watchdog(int fd, short event, void *arg)
{
	struct child	*c;
	struct timeval	 tv;
	time_t		 now = time(NULL);
	char		 why[64];
	int		 i;

	for (i = 0; i < env->nchildren; i++) {
		c = &env->children[i];
		/*
		 * A reload waits for a busy child's work at most
		 * PROC_RECONFIG_WAIT (a publisher that never answers must
		 * not keep the old configuration, and every publication,
		 * for ever); one stopped on purpose gets PROC_STOP_WAIT to
		 * exit before it is killed, so one that ignores SIGTERM
		 * cannot go on answering as a stopping child.
		 */
		if (c->reconfig && c->pid > 0 && c->state == CHILD_RUNNING &&
		    now - c->reconfig_at > PROC_RECONFIG_WAIT) {
			log_warnx("%s: still busy %llds after the reload; "
			    "restarting it now", child_name(c),
			    (long long)(now - c->reconfig_at));
			proc_restart(c);
		}
		if (c->state == CHILD_STOPPING && c->pid > 0 &&
		    c->stopping_at != 0 && now - c->stopping_at >
		    PROC_STOP_WAIT) {
			proc_kill(c, "did not exit after SIGTERM");
			continue;
		}
		if (c->id != PROC_WORKER || c->state != CHILD_RUNNING)
			continue;
		if (now - c->heartbeat > env->conf->lease_ttl) {
			snprintf(why, sizeof(why), "no heartbeat for %llds",
			    (long long)(now - c->heartbeat));
			proc_kill(c, why);
		}
	}
	tv.tv_sec = env->conf->lease_ttl / 3 > 0 ? env->conf->lease_ttl / 3 : 1;
	if (tv.tv_sec > PROC_STOP_WAIT)
		tv.tv_sec = PROC_STOP_WAIT;
	tv.tv_usec = 0;
	evtimer_add(&ev_watchdog, &tv);
}

void
proc_watchdog_init(void)
{
	evtimer_set(&ev_watchdog, proc_watchdog, NULL);
	proc_watchdog(-1, 0, NULL);
}

/*
 * After a reload: a child whose user, binary or unveil variables
 * changed is stopped; proc_reap() starts it again under the new ones
 * at once, not after a backoff (what waits for it waits less).
 */
void
proc_reconfigure(void)
{
	const struct child_handler *h;
	struct child	*c;
	char		*argv[CHILD_ARGV_MAX * 2 + 8], key[8192];
	int		 i;

	for (i = 0; i < env->nchildren; i++) {
		c = &env->children[i];
		if (proc_argv(c, argv, sizeof(argv) / sizeof(argv[0]), key,
		    sizeof(key)) == -1)
			continue;
		if (c->argv_key != NULL && strcmp(key, c->argv_key) == 0)
			continue;
		/*
		 * One at work (a verification, a push) finishes it under
		 * the configuration it began with and restarts after:
		 * stopped now, a verifier's answer was lost and counted as
		 * its death (three reloads failed an attempt), and a
		 * publisher left a push's ref lock behind.
		 */
		if (c->pid > 0 && (h = child_handler(c->id)) != NULL &&
		    h->busy != NULL && h->busy(c)) {
			log_info("%s: configuration changed, restarting after "
			    "its work", child_name(c));
			c->reconfig = 1;
			c->reconfig_at = time(NULL);
			continue;
		}
		if (c->pid > 0) {
			log_info("%s: configuration changed, restarting",
			    child_name(c));
			proc_restart(c);
		}
	}
}

/* Stopped now, started again at once under the current configuration. */
static void
proc_restart(struct child *c)
{
	c->reconfig = 0;
	c->backoff = CHILD_BACKOFF_MIN;
	c->recycle = 1;
	c->state = CHILD_STOPPING;
	c->stopping_at = time(NULL);
	kill(c->pid, SIGTERM);
}

int
proc_compose(enum factory_procid id, uint32_t type, uint32_t peerid, int fd,
    const void *data, size_t len)
{
	struct child	*c = proc_find(id, 0);

	if (c == NULL || c->state != CHILD_RUNNING) {
		if (fd != -1)
			close(fd);
		errno = EAGAIN;
		return (-1);
	}
	return (imsgev_compose(&c->iev, type, peerid, 0, fd, data, len));
}

/* A JSON request to the (first) child of that kind; the object is stolen. */
int
proc_compose_json(enum factory_procid id, uint32_t type, int fd, json_t *o)
{
	struct child	*c = proc_find(id, 0);

	if (c == NULL || c->state != CHILD_RUNNING) {
		json_decref(o);
		if (fd != -1)
			close(fd);
		errno = EAGAIN;
		return (-1);
	}
	return (imsgev_compose_json(&c->iev, type, fd, o));
}

int
proc_compose_msg(enum factory_procid id, uint32_t type, enum msg_kind k,
    int fd, const void *m, char *err, size_t errlen)
{
	struct child	*c = proc_find(id, 0);
	char		*s;
	size_t		 len;
	int		 ret;

	if ((s = msg_encode(k, m, &len, err, errlen)) == NULL) {
		if (fd != -1)
			close(fd);
		errno = EINVAL;
		return (-1);
	}
	/* One a reload waits for takes no new work: it drains. */
	if (c == NULL || c->state != CHILD_RUNNING || c->reconfig) {
		free(s);
		if (fd != -1)
			close(fd);
		snprintf(err, errlen, "%s not running", factory_procs[id].name);
		errno = EAGAIN;
		return (-1);
	}
	ret = imsgev_compose(&c->iev, type, 0, 0, fd, s, len);
	free(s);
	if (ret == -1) {
		snprintf(err, errlen, "%s: %s", msg_kind_name(k),
		    strerror(errno));
		return (-1);
	}
	return (0);
}

void
proc_broadcast(uint32_t type, const void *data, size_t len)
{
	struct child	*c;
	int		 i;

	for (i = 0; i < env->nchildren; i++) {
		c = &env->children[i];
		if (c->state == CHILD_RUNNING)
			imsgev_compose(&c->iev, type, 0, 0, -1, data, len);
	}
}

/* HELLO: once, first, its text escaped line by line (msg.h). */
static int
proc_hello(struct child *c, struct imsg *imsg, char *why, size_t whylen)
{
	struct ibuf	 ib;
	char		*text;

	/* One a reload recycled before its hello may still say it, once. */
	if (c->state != CHILD_STARTING && !(c->state == CHILD_STOPPING &&
	    c->recycle && c->policy == NULL)) {
		snprintf(why, whylen, "a second HELLO");
		return (-1);
	}
	if (imsg_get_ibuf(imsg, &ib) == -1 || msg_hello_read(ibuf_data(&ib),
	    ibuf_size(&ib), &text, why, whylen) == -1)
		return (-1);
	c->policy = text;
	if (c->state == CHILD_STOPPING)
		return (0);	/* it goes all the same: no work for it */
	c->state = CHILD_RUNNING;
	c->heartbeat = time(NULL);
	log_info("%s: running as uid %u, pid %d", child_name(c),
	    (unsigned)env->conf->users[c->id].uid, (int)c->pid);
	return (0);
}

/*
 * Messages from a child.  A child is distrusted: anything unexpected
 * or malformed gets it killed and restarted; the parent goes on.
 */
static void
proc_dispatch(int fd, short event, void *arg)
{
	const struct child_handler *h;
	struct child	*c = arg;
	struct imsg	 imsg;
	int		 n;
	uint32_t	 type;
	char		 why[MSG_ERRLEN], msg[MSG_ERRLEN + 64];

	if (!imsgev_io(&c->iev, event)) {
		/* EOF: proc_reap() will see the exit. */
		imsgev_clear(&c->iev);
		return;
	}
	for (;;) {
		if ((n = imsgbuf_get(&c->iev.ibuf, &imsg)) == -1) {
			proc_refuse(c, "malformed imsg");
			return;
		}
		if (n == 0)
			break;
		type = imsg_get_type(&imsg);
		snprintf(why, sizeof(why), "unexpected imsg type %u", type);
		switch (type) {
		case IMSG_HELLO:
			n = proc_hello(c, &imsg, why, sizeof(why));
			if (n == 0 && c->state == CHILD_RUNNING &&
			    (h = child_handler(c->id)) != NULL &&
			    h->ready != NULL)
				h->ready(c);
			break;
		case IMSG_HEARTBEAT:
			/*
			 * Empty, from the worker, once it runs; also while
			 * a reload recycles it (it was on its way).
			 */
			if (c->id != PROC_WORKER ||
			    (c->state != CHILD_RUNNING &&
			    !(c->state == CHILD_STOPPING && c->recycle &&
			    c->policy != NULL)))
				n = -1;
			else if (imsg_get_len(&imsg) != 0) {
				snprintf(why, sizeof(why), "HEARTBEAT: %zu "
				    "bytes of payload", imsg_get_len(&imsg));
				n = -1;
			} else
				c->heartbeat = time(NULL);
			break;
		default:
			/*
			 * One stopped on purpose (recycle: a reload, or a
			 * verifier after its verdict) still answers what
			 * it was asked before the stop: one that had said
			 * HELLO (its policy), else it was asked nothing.
			 */
			if ((c->state != CHILD_RUNNING &&
			    !(c->state == CHILD_STOPPING && c->recycle &&
			    c->policy != NULL)) ||
			    (h = child_handler(c->id)) == NULL ||
			    h->dispatch == NULL)
				n = -1;
			else
				n = h->dispatch(c, &imsg, why, sizeof(why));
			break;
		}
		if (n == -1) {
			snprintf(msg, sizeof(msg), "malformed message (imsg "
			    "type %u): %s", type, why);
			imsg_free(&imsg);
			proc_refuse(c, msg);
			return;
		}
		imsg_free(&imsg);
	}
	/* A reload waited for its work: done now, it restarts. */
	if (c->reconfig && c->pid > 0 && c->state == CHILD_RUNNING &&
	    (h = child_handler(c->id)) != NULL && h->busy != NULL &&
	    !h->busy(c)) {
		log_info("%s: its work done, restarting for the new "
		    "configuration", child_name(c));
		proc_restart(c);
	}
}
