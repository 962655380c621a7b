/*
 * The parent's side of factory-preview (preview/), only with a preview:
 * block (factoryd.conf(5)): the listener, bound here at start and
 * handed to each child; the key of the tokens, made here at start and
 * held by the child too; which attempts have a live preview; and each
 * connection into an attempt's network namespace, made here.
 *
 * A preview is live from the agent's start until its run ends, at
 * most the configured ttl: the application is the agent's or one of
 * its services', and lives no longer.  factoryctl preview mints a
 * token of at most that end (a "preview" receipt says who asked, when
 * and for how long); the child takes it once for a cookie of that
 * attempt's host name alone ("preview-opened"), and asks here for
 * every connection it proxies.  The answer is a TCP socket made inside
 * the attempt's network namespace, connected to its preview port on
 * 127.0.0.1: the child reaches nothing else there, and nothing at all
 * of an attempt whose preview ended.  What the child says is checked
 * like any child's bytes; a lie kills it.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factoryd.h"
#include "log.h"
#include "previewmsg.h"
#include "yaml.h"

#define PREVIEW_BACKLOG		128
#define PREVIEW_TTLMIN		1	/* second a token lasts, at least */

#define PREVIEW_TICK_S		5	/* a preview's end is seen this late */
#define PREVIEW_MINTS		1024	/* tokens minted, not yet taken */
#define PREVIEW_QUEUED		512	/* our answers the child has not read */

static int	 pv_listen = -1;	/* bound at start, or -1 */
static uint8_t	 pv_key[PREVIEW_KEYLEN];
static struct event pv_tick_ev;

/*
 * The tokens minted and not yet taken: the child's OPENED must name
 * one of them, once.  A new key at each start of the child voids them
 * all, and every token and cookie it knew: nothing it was told can be
 * replayed to the next one.
 */
static struct pv_mint {
	char		 id[ATTEMPT_ID_MAX];
	char		 nonce[PREVIEW_NONCEHEX + 1];
	uint64_t	 expires;
} pv_mints[PREVIEW_MINTS];
static int	 pv_nmints;

static void	 pv_tick(int, short, void *);
static int	 preview_count(void);

/*
 * The listener, bound now (a port below 1024 needs root), and the key
 * of this daemon's tokens: a restart makes every token void.  0, or
 * -1 and why: a preview: block whose address cannot be had stops the
 * start, as any configuration error does.
 */
int
preview_init(char *err, size_t errlen)
{
	const struct conf_preview	*p = &env->conf->preview;
	int				 one = 1;

	if (!p->enabled)
		return (0);
	if ((pv_listen = socket(p->addr.ss_family, SOCK_STREAM |
	    SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(pv_listen, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) == -1 ||
	    (p->addr.ss_family == AF_INET6 && setsockopt(pv_listen,
	    IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) == -1) ||
	    bind(pv_listen, (const struct sockaddr *)&p->addr, p->addrlen) ==
	    -1 || listen(pv_listen, PREVIEW_BACKLOG) == -1) {
		snprintf(err, errlen, "preview: listen %s: %s", p->listen,
		    strerror(errno));
		if (pv_listen != -1)
			close(pv_listen);
		pv_listen = -1;
		return (-1);
	}
	arc4random_buf(pv_key, sizeof(pv_key));
	evtimer_set(&pv_tick_ev, pv_tick, NULL);
	pv_tick(-1, 0, NULL);
	return (0);
}

/* The listener's port, as configured. */
static uint16_t
pv_port(void)
{
	const struct sockaddr_storage	*ss = &env->conf->preview.addr;

	return (ntohs(ss->ss_family == AF_INET6 ?
	    ((const struct sockaddr_in6 *)ss)->sin6_port :
	    ((const struct sockaddr_in *)ss)->sin_port));
}

/*
 * The preview of a, if it has one now: 1, else 0.  An agent's lives
 * with the agent's run; a service's with the agent's services, kept
 * past the run until the attempt publishes or ends (service.c).
 */
static int
preview_live(const struct attempt *a)
{
	uint64_t	 now = (uint64_t)time(NULL);

	if (a->preview_until == 0 || now >= a->preview_until ||
	    (a->keep_until != 0 && now >= a->keep_until))
		return (0);
	if (a->m->preview.service != PREVIEW_AGENT)
		return (service_netns(a) != -1);
	return (a->run != NULL && a->run->active && !a->run->validation &&
	    !a->run->setup);
}

/* A minted token taken (1), or none such: a lie (0).  Expired ones go. */
static int
pv_mint_take(const char *id, const char *nonce)
{
	uint64_t	 now = (uint64_t)time(NULL);
	int		 i, found = 0;

	for (i = 0; i < pv_nmints; i++) {
		if (!found && strcmp(pv_mints[i].id, id) == 0 &&
		    strcmp(pv_mints[i].nonce, nonce) == 0)
			found = 1;
		else if (pv_mints[i].expires > now)
			continue;
		pv_mints[i--] = pv_mints[--pv_nmints];
	}
	return (found);
}

/*
 * Every few seconds: a preview past its ttl, or whose services died,
 * ends; the services kept for it go.
 */
static void
pv_tick(int fd, short event, void *arg)
{
	struct timeval	 tv = { PREVIEW_TICK_S, 0 };
	struct attempt	*a;

	(void)pv_mint_take("", "");	/* the expired ones */
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (a->preview_until != 0 && !preview_live(a))
			preview_ended(a);
	metrics_previews(preview_count());
	evtimer_add(&pv_tick_ev, &tv);
}

/*
 * What show says of a's preview: its port, whether it is live and
 * until when (unix seconds, 0: not live); NULL without one.
 */
json_t *
preview_json(const struct attempt *a)
{
	if (!a->m->preview.enabled)
		return (NULL);
	return (json_pack("{s:i, s:s, s:b, s:I, s:I}", "port",
	    (int)a->m->preview.port, "service",
	    a->m->preview.service == PREVIEW_AGENT ? "agent" :
	    a->m->services[a->m->preview.service].name, "live",
	    preview_live(a), "until", (json_int_t)a->preview_until,
	    "kept_until", (json_int_t)a->keep_until));
}

/*
 * factoryctl approve -k: a's preview, a service's, is kept for review
 * past the approval and the publication until keep_ms from now, never
 * past its ttl; the attempt's teardown waits for it (preview_kept).
 * Set before the approval is: the publication then leaves it be.
 */
int
preview_keep(struct attempt *a, uint64_t keep_ms, char *err, size_t errlen)
{
	uint64_t	 until = (uint64_t)time(NULL) + keep_ms / 1000;

	if (!a->m->preview.enabled || a->m->preview.service == PREVIEW_AGENT) {
		snprintf(err, errlen, "%s: -k: its preview is no service's: "
		    "there is nothing to keep", a->id);
		return (-1);
	}
	if (!preview_live(a)) {
		snprintf(err, errlen, "%s: -k: its preview is not live", a->id);
		return (-1);
	}
	a->keep_until = until < a->preview_until ? until : a->preview_until;
	return (0);
}

/* The approval that kept a's preview went through: said and receipted. */
void
preview_kept_note(struct attempt *a, uid_t uid)
{
	log_info("%s: preview kept for review until %llu", a->id,
	    (unsigned long long)a->keep_until);
	report_note(a, "preview-kept", json_pack("{s:i, s:I}", "uid",
	    (int)uid, "until", (json_int_t)a->keep_until));
}

/*
 * Is a kept past its approval for review, still: its teardown waits.
 * Not once it failed or was cancelled: a keep is for a publication.
 */
int
preview_kept(const struct attempt *a)
{
	return (a->keep_until != 0 && preview_live(a) &&
	    a->outcome != AS_FAILED && a->outcome != AS_CANCELLED);
}

/*
 * factoryctl cancel of an attempt kept for review: the keep ends now,
 * the preview and the services kept for it with it, and the teardown
 * that waited goes on.  Its publication, or what it ended as, stands.
 */
void
preview_unkeep(struct attempt *a, uid_t uid)
{
	log_info("%s: its keep for review ended by uid %u", a->id,
	    (unsigned)uid);
	a->keep_until = (uint64_t)time(NULL);
	preview_ended(a);
}

/* How many previews are live, for the metrics. */
static int
preview_count(void)
{
	struct attempt	*a;
	int		 n = 0;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (preview_live(a))
			n++;
	return (n);
}

static void
preview_send_open(struct attempt *a)
{
	struct preview_open	 o;
	struct ibuf		*b;

	memset(&o, 0, sizeof(o));
	strlcpy(o.id, a->id, sizeof(o.id));
	o.port = a->m->preview.port;
	o.expires = a->preview_until;
	strlcpy(o.health, a->m->preview.health, sizeof(o.health));
	if ((b = preview_open_compose(&o)) == NULL) {
		log_warnx("%s: preview: cannot say it is open", a->id);
		return;
	}
	if (proc_compose(PROC_PREVIEW, IMSG_PREVIEW_OPEN, 0, -1,
	    ibuf_data(b), ibuf_size(b)) != -1 && o.health[0] != '\0')
		a->preview_health = 1;	/* one HEALTH is due */
	ibuf_free(b);
}

/* The agent of a runs: its preview, if it has one, is live now. */
void
preview_open(struct attempt *a)
{
	if (!env->conf->preview.enabled || !a->m->preview.enabled)
		return;
	a->preview_until = (uint64_t)time(NULL) +
	    env->conf->preview.ttl_ms / 1000;
	a->preview_from = now_ms();
	log_info("%s: preview of port %u live on %s.%s", a->id,
	    (unsigned)a->m->preview.port, a->id, env->conf->preview.domain);
	preview_send_open(a);
	metrics_previews(preview_count());
}

/* The run ended, or the attempt did: its preview is gone, at once. */
void
preview_close(struct attempt *a)
{
	struct ibuf	*b;

	uint64_t	 lived;

	if (a->preview_until == 0)
		return;
	a->preview_until = 0;
	lived = now_ms() - a->preview_from;
	metrics_preview(lived);
	metrics_previews(preview_count());
	if ((b = preview_id_compose(a->id)) != NULL) {
		(void)proc_compose(PROC_PREVIEW, IMSG_PREVIEW_CLOSE, 0, -1,
		    ibuf_data(b), ibuf_size(b));
		ibuf_free(b);
	}
	report_note(a, "preview-closed", json_pack("{s:s, s:I}", "why",
	    "its run ended", "lived_ms", (json_int_t)lived));
}

/*
 * a's run ended, or its state moved on: its preview ends unless it is
 * still live (a service's, kept); with it, the services kept for it.
 */
void
preview_ended(struct attempt *a)
{
	if (preview_live(a))
		return;
	preview_close(a);
	service_unkeep(a);
}

/* factory-preview (re)started: its configuration, then every preview. */
void
preview_ready(struct child *c)
{
	struct preview_conf	 pc;
	struct attempt		*a;
	struct ibuf		*b;
	int			 fd;

	/* A key of its own: nothing of the last child's is good now. */
	arc4random_buf(pv_key, sizeof(pv_key));
	pv_nmints = 0;
	memset(&pc, 0, sizeof(pc));
	memcpy(pc.key, pv_key, sizeof(pc.key));
	strlcpy(pc.domain, env->conf->preview.domain, sizeof(pc.domain));
	pc.secure = env->conf->preview.secure;
	b = preview_conf_compose(&pc);
	explicit_bzero(&pc, sizeof(pc));
	if (b == NULL || (fd = fcntl(pv_listen, F_DUPFD_CLOEXEC, 0)) == -1) {
		ibuf_free(b);
		proc_kill(c, "preview: cannot configure it");
		return;
	}
	(void)imsgev_compose(&c->iev, IMSG_PREVIEW_CONF, 0, 0, fd,
	    ibuf_data(b), ibuf_size(b));
	ibuf_free(b);
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (preview_live(a))
			preview_send_open(a);
}

struct pv_sock {
	int	 netns;
	int	 fd;
	int	 err;
};

/* In a's network namespace, with the caller's files: a socket there. */
static int
pv_sock_child(void *arg)
{
	struct pv_sock	*ps = arg;

	if (setns(ps->netns, CLONE_NEWNET) == -1 ||
	    (ps->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		ps->err = errno;
	_exit(0);
}

/*
 * A TCP socket made inside the namespace of netns (CLONE_VM and
 * CLONE_VFORK, as the sandbox's pool makes its namespaces: nothing is
 * copied, and it is reaped here), connecting to 127.0.0.1:port.  The
 * socket keeps that namespace wherever it goes.  -1 and why.
 */
static int
pv_connect(int netns, uint16_t port, char *why, size_t len)
{
	char			 stack[16384] __attribute__((aligned(16)));
	struct sockaddr_in	 sin;
	struct pv_sock		 ps = { netns, -1, 0 };
	pid_t			 pid;
	int			 st;

	pid = clone(pv_sock_child, stack + sizeof(stack), CLONE_VM |
	    CLONE_VFORK | CLONE_FILES, &ps);
	if (pid == -1) {
		snprintf(why, len, "clone: %s", strerror(errno));
		return (-1);
	}
	while (waitpid(pid, &st, __WCLONE) == -1 && errno == EINTR)
		;
	if (ps.fd == -1) {
		snprintf(why, len, "a socket in its namespace: %s",
		    strerror(ps.err));
		return (-1);
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(ps.fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 &&
	    errno != EINPROGRESS) {
		snprintf(why, len, "port %u: %s", (unsigned)port,
		    strerror(errno));
		close(ps.fd);
		return (-1);
	}
	return (ps.fd);
}

/* The network namespace of a's run, for one connection: an fd, or -1. */
static int
pv_netns(struct attempt *a)
{
	char	 path[64];

	if (a->m->nservices > 0)
		return (service_netns(a));
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)a->run->sb.pid);
	return (open(path, O_RDONLY | O_CLOEXEC));
}

static void
pv_connected(struct child *c, uint32_t req, int fd, const char *why)
{
	struct preview_connected	 pc;
	struct ibuf			*b;

	memset(&pc, 0, sizeof(pc));
	pc.req = req;
	pc.ok = fd != -1;
	strlcpy(pc.why, why, sizeof(pc.why));
	if ((b = preview_connected_compose(&pc)) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	(void)imsgev_compose(&c->iev, IMSG_PREVIEW_CONNECTED, 0, 0, fd,
	    ibuf_data(b), ibuf_size(b));
	ibuf_free(b);
}

static void
pv_connect_req(struct child *c, uint32_t req, const char *id)
{
	struct attempt	*a;
	char		 why[256];
	int		 ns, fd;

	if ((a = attempt_find(id)) == NULL || !preview_live(a)) {
		pv_connected(c, req, -1, "no live preview");
		return;
	}
	if ((ns = pv_netns(a)) == -1) {
		pv_connected(c, req, -1, "its namespace is gone");
		return;
	}
	fd = pv_connect(ns, a->m->preview.port, why, sizeof(why));
	if (a->m->nservices == 0)
		close(ns);
	pv_connected(c, req, fd, fd == -1 ? why : "");
}

/* What factory-preview says: checked, then acted on. */
int
preview_dispatch(struct child *c, struct imsg *imsg, char *why, size_t len)
{
	struct preview_health	 h;
	struct attempt		*a;
	char			 id[ATTEMPT_ID_MAX];
	char			 nonce[PREVIEW_NONCEHEX + 1];
	uint32_t		 req;

	int			 fd;

	if ((fd = imsg_get_fd(imsg)) != -1) {
		close(fd);
		snprintf(why, len, "preview: a descriptor it may not send");
		return (-1);
	}
	/* Asking faster than it reads our answers: their fds pile up. */
	if (imsgbuf_queuelen(&c->iev.ibuf) > PREVIEW_QUEUED) {
		snprintf(why, len, "preview: %u answers unread",
		    imsgbuf_queuelen(&c->iev.ibuf));
		return (-1);
	}
	switch (imsg_get_type(imsg)) {
	case IMSG_PREVIEW_CONNECT:
		if (preview_connect_decode(imsg, &req, id, sizeof(id), why,
		    len) == -1)
			return (-1);
		pv_connect_req(c, req, id);
		return (0);
	case IMSG_PREVIEW_OPENED:
		if (preview_opened_decode(imsg, id, sizeof(id), nonce,
		    sizeof(nonce), why, len) == -1)
			return (-1);
		/* Only a token we minted, once: else a lie. */
		if (!pv_mint_take(id, nonce)) {
			snprintf(why, len, "preview: OPENED %s: no such token "
			    "minted, or taken before", id);
			return (-1);
		}
		if ((a = attempt_find(id)) != NULL && !attempt_terminal(a))
			report_note(a, "preview-opened", json_pack("{s:s}",
			    "nonce", nonce));
		return (0);
	case IMSG_PREVIEW_HEALTH:
		if (preview_health_decode(imsg, &h, why, len) == -1)
			return (-1);
		/* One per OPEN with a health path: the rest is not kept. */
		if ((a = attempt_find(h.id)) != NULL && !attempt_terminal(a) &&
		    a->preview_health) {
			a->preview_health = 0;
			report_note(a, "preview-health", json_pack("{s:i, s:o}",
			    "status", (int)h.status, "answer",
			    esc_json(h.what, strlen(h.what))));
		}
		return (0);
	}
	snprintf(why, len, "preview: unexpected message %u",
	    imsg_get_type(imsg));
	return (-1);
}

/*
 * factoryctl preview ID [-t ttl]: a token for the attempt's live
 * preview, good once, until the earlier of ttl and the preview's end.
 * The token is in the answer alone: never logged, never journaled (the
 * receipt has its nonce and end).
 */
void
preview_ctl(struct ctl_conn *c, struct imsg *imsg)
{
	struct ibuf	 ib;
	struct attempt	*a;
	char		 id[ATTEMPT_ID_MAX], ttls[16], err[256];
	char		 token[PREVIEW_TOKENMAX], url[PREVIEW_TOKENMAX + 512];
	char		 nonce[PREVIEW_NONCEHEX + 1];
	uint8_t		 rnd[PREVIEW_NONCEHEX / 2];
	uint64_t	 ttl, expires, now = (uint64_t)time(NULL);
	const char	*e;

	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, id, sizeof(id)) == -1 ||
	    ibuf_get_string(&ib, ttls, sizeof(ttls)) == -1 ||
	    ibuf_size(&ib) != 0 || y_parse_duration(ttls, &ttl, &e) != 0) {
		reply_fail(c, "bad preview request");
		return;
	}
	if (!env->conf->preview.enabled) {
		reply_fail(c, "no preview: block in %s", env->conffile);
		return;
	}
	if ((a = attempt_find(id)) == NULL) {
		reply_fail(c, "%s: no such attempt", id);
		return;
	}
	if (tenant_may_act(c, "preview", a, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return;
	}
	if (!a->m->preview.enabled) {
		reply_fail(c, "%s: its manifest has no preview", a->id);
		return;
	}
	if (!preview_live(a)) {
		reply_fail(c, "%s: no live preview (it is %s): a preview lives "
		    "while the agent runs", a->id, attempt_state_name(
		    a->outcome != AS_MAX ? a->outcome : a->state));
		return;
	}
	ttl /= 1000;
	if (ttl < PREVIEW_TTLMIN)
		ttl = PREVIEW_TTLMIN;
	expires = now + ttl < a->preview_until ? now + ttl : a->preview_until;
	arc4random_buf(rnd, sizeof(rnd));
	hex_encode(rnd, sizeof(rnd), nonce);
	(void)pv_mint_take("", "");	/* the expired ones */
	if (pv_nmints == PREVIEW_MINTS) {
		reply_fail(c, "%s: %d tokens not yet taken: none more now",
		    a->id, PREVIEW_MINTS);
		return;
	}
	if (preview_token(pv_key, a->id, expires, nonce, token,
	    sizeof(token)) == -1) {
		reply_fail(c, "%s: cannot mint a token", a->id);
		return;
	}
	strlcpy(pv_mints[pv_nmints].id, a->id, sizeof(pv_mints[0].id));
	strlcpy(pv_mints[pv_nmints].nonce, nonce, sizeof(pv_mints[0].nonce));
	pv_mints[pv_nmints++].expires = expires;
	/* Behind TLS, at 443; else at the listener's own port. */
	if (env->conf->preview.secure)
		snprintf(url, sizeof(url), "https://%s.%s%s?token=%s", a->id,
		    env->conf->preview.domain, PREVIEW_LOGIN, token);
	else
		snprintf(url, sizeof(url), "http://%s.%s:%u%s?token=%s", a->id,
		    env->conf->preview.domain, (unsigned)pv_port(),
		    PREVIEW_LOGIN, token);
	report_note(a, "preview", json_pack("{s:i, s:I, s:s}", "uid",
	    (int)c->uid, "expires", (json_int_t)expires, "nonce", nonce));
	log_info("%s: preview token for uid %u, until %" PRIu64, a->id,
	    (unsigned)c->uid, expires);
	reply_obj(c, json_pack("{s:s, s:s, s:I}", "id", a->id, "url", url,
	    "expires", (json_int_t)expires));
	explicit_bzero(token, sizeof(token));
	explicit_bzero(url, sizeof(url));
}
