/*
 * The browsers' side: one connection, one request.  Its head is read
 * within a size and a deadline, parsed strictly (http.c), routed by
 * its host name to a live preview, and let through only with the
 * preview's cookie (or exchanged for one at the login path).  A
 * request let through gets a socket to the application from the
 * parent; its head goes rewritten, then bytes are copied both ways
 * until the application closes.  Everything refused is a short answer
 * of ours and the connection closed; nothing else is ever answered
 * here (factoryd's control plane is not reachable through this).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "preview.h"

#define PV_MAXCONNS	256		/* browsers' connections at once */
#define PV_MAXPERPREVIEW 64		/* relayed or waiting, one preview */
#define PV_MAXPENDING	64		/* CONNECTs unanswered, one preview */
#define PV_HEAD_S	10		/* a whole head: no slowloris */
#define PV_CONNECT_S	10		/* the parent's CONNECTED */
#define PV_IDLE_S	(5 * 60)	/* no byte either way */
#define PV_ANSWER_S	10		/* our answer, read by the browser */
#define PV_HIWAT	(256 * 1024)	/* bytes queued towards one side */
#define PV_PAUSE_S	1		/* accept retried after, out of fds */

enum pv_state {
	PV_HEAD,		/* reading the head */
	PV_WAIT,		/* CONNECT sent, no answer yet */
	PV_RELAY,		/* copying bytes */
	PV_ANSWER		/* our answer going, then close */
};

struct pv_conn {
	TAILQ_ENTRY(pv_conn)	 entry;
	enum pv_state		 state;
	struct pv_preview	*pv;		/* counted in its nconns */
	int			 pending;	/* and in its npending */
	uint32_t		 req;
	int			 websocket;
	/*
	 * The body's bytes still to pass to the application: its
	 * Content-Length, and no more.  What a browser sends after it
	 * (a pipelined request) is not passed on: its head was never
	 * checked nor rewritten.  A WebSocket's: no bound, once the
	 * application answered 101 (and not before: a connection it
	 * kept open otherwise must not become a tunnel).
	 */
	uint64_t		 left;
	int			 answered;	/* the app's first bytes seen */
	struct bufferevent	*side[2];	/* 0: the browser, 1: the app */
	int			 eof[2];	/* side i sent EOF */
	int			 shut[2];	/* side i was shut for writing */
	int			 heard;		/* the app sent a byte */
	struct event		 timer;		/* the state's deadline */
	struct ph_head		*head;
};

static const struct pv_ctx	*pc;	/* preview.c's, conn_init */
static TAILQ_HEAD(, pv_conn)	 conns = TAILQ_HEAD_INITIALIZER(conns);
static int			 nconns;
static int			 listenfd = -1;
static struct event		 lev;	/* accept */
static struct event		 lpause;	/* accept off until it fires */
static int			 paused;	/* out of descriptors */

static void	conn_accept(int, short, void *);
static void	conn_resume(int, short, void *);
static void	conn_read(struct bufferevent *, void *);
static void	conn_write(struct bufferevent *, void *);
static void	conn_event(struct bufferevent *, short, void *);
static void	conn_timeout(int, short, void *);
static void	conn_answer(struct pv_conn *, int, const char *);

void
conn_init(const struct pv_ctx *ctx)
{
	pc = ctx;
}

void
conn_listen(int fd)
{
	listenfd = fd;
	/* The parent's socket may block; our loop must not. */
	if (evutil_make_socket_nonblocking(fd) == -1)
		fatal("preview listener");
	event_set(&lev, fd, EV_READ | EV_PERSIST, conn_accept, NULL);
	event_add(&lev, NULL);
	evtimer_set(&lpause, conn_resume, NULL);
}

/* Below the cap and not paused: accept again. */
static void
conn_accepting(void)
{
	if (listenfd == -1 || nconns >= PV_MAXCONNS ||
	    evtimer_pending(&lpause, NULL) || event_pending(&lev, EV_READ,
	    NULL))
		return;
	event_add(&lev, NULL);
}

static void
conn_free(struct pv_conn *c)
{
	int	 i;

	if (c->pending)
		c->pv->npending--;
	if (c->pv != NULL)
		c->pv->nconns--;
	for (i = 0; i < 2; i++)
		if (c->side[i] != NULL)
			bufferevent_free(c->side[i]);
	evtimer_del(&c->timer);
	free(c->head);
	TAILQ_REMOVE(&conns, c, entry);
	nconns--;
	free(c);
	/* Descriptors came free: a paused listener accepts again. */
	if (paused && evtimer_pending(&lpause, NULL))
		evtimer_del(&lpause);
	conn_accepting();
}

void
conn_close_preview(struct pv_preview *p)
{
	struct pv_conn	*c, *next;

	for (c = TAILQ_FIRST(&conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->pv == p)
			conn_free(c);
	}
}

static void
conn_resume(int fd, short event, void *arg)
{
	conn_accepting();
}

/*
 * Out of descriptors: the browser's connection stays in the backlog
 * and the listener readable; accepting again at once would spin.  Stop
 * for a second or until a connection closes, and say so once per
 * episode.
 */
static void
conn_pause(void)
{
	struct timeval	 tv = { PV_PAUSE_S, 0 };

	if (!paused)
		log_warn("preview: accept: not accepting for %ds, or until a "
		    "connection closes", PV_PAUSE_S);
	paused = 1;
	event_del(&lev);
	evtimer_add(&lpause, &tv);
}

static void
conn_deadline(struct pv_conn *c, int secs)
{
	struct timeval	 tv = { secs, 0 };

	evtimer_add(&c->timer, &tv);
}

static void
conn_accept(int fd, short event, void *arg)
{
	struct pv_conn	*c;
	int		 s;

	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			conn_pause();
		else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("preview: accept");
		return;
	}
	if (paused) {
		log_info("preview: accepting again");
		paused = 0;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->side[0] = bufferevent_socket_new(pc->base, s,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warn("preview: a connection");
		free(c);
		close(s);
		return;
	}
	TAILQ_INSERT_TAIL(&conns, c, entry);
	/* At the cap the kernel's backlog holds the rest, unread. */
	if (++nconns >= PV_MAXCONNS)
		event_del(&lev);
	evtimer_set(&c->timer, conn_timeout, c);
	conn_deadline(c, PV_HEAD_S);
	/* Reading stops at the bound: no head grows past it. */
	bufferevent_setwatermark(c->side[0], EV_READ, 0, PH_HEADMAX);
	bufferevent_setcb(c->side[0], conn_read, conn_write, conn_event, c);
	bufferevent_enable(c->side[0], EV_READ);
}

/* Our answer, then the connection closes once it is written. */
static void
conn_send(struct pv_conn *c, const char *buf, size_t len)
{
	if (c->side[1] != NULL) {
		bufferevent_free(c->side[1]);
		c->side[1] = NULL;
	}
	c->state = PV_ANSWER;
	bufferevent_disable(c->side[0], EV_READ);
	if (len == 0 || bufferevent_write(c->side[0], buf, len) == -1) {
		conn_free(c);
		return;
	}
	bufferevent_enable(c->side[0], EV_WRITE);
	conn_deadline(c, PV_ANSWER_S);
}

static void
conn_answer(struct pv_conn *c, int code, const char *text)
{
	char	 buf[PH_ANSWERMAX];

	conn_send(c, buf, ph_answer(code, text, buf, sizeof(buf)));
}

/*
 * A token for the host's attempt, not past its end, not used before:
 * the cookie, and the parent told.  Neither token nor cookie is ever
 * logged: whoever reads the log could open the preview.
 */
static void
conn_login(struct pv_conn *c, struct pv_preview *p, char *tok)
{
	char		 nonce[PREVIEW_NONCEHEX + 1], cookie[PREVIEW_TOKENMAX];
	char		 buf[PH_ANSWERMAX];
	uint64_t	 expires, now = (uint64_t)time(NULL);
	int		 rc;

	rc = preview_token_check(pc->conf->key, p->o.id, tok, &expires,
	    nonce);
	explicit_bzero(tok, strlen(tok));
	if (rc == -1 || expires <= now) {
		log_info("%s: preview login refused: bad or expired token",
		    p->o.id);
		conn_answer(c, 403, "bad or expired token");
		return;
	}
	if ((rc = pc->nonce_take(nonce, expires)) != 0) {
		log_info("%s: preview login refused: %s", p->o.id, rc == -1 ?
		    "token used before" : "too many logins outstanding");
		if (rc == -1)
			conn_answer(c, 403, "this token was used before");
		else
			conn_answer(c, 503, "too many logins; try later");
		return;
	}
	if (preview_cookie(pc->conf->key, p->o.id, expires, nonce, cookie,
	    sizeof(cookie)) == -1)
		fatalx("%s: preview cookie", p->o.id);
	pc->opened(p->o.id, nonce);
	log_info("%s: preview login", p->o.id);
	conn_send(c, buf, ph_answer_login(cookie, expires - now,
	    pc->conf->secure, buf, sizeof(buf)));
	explicit_bzero(cookie, sizeof(cookie));
	explicit_bzero(buf, sizeof(buf));
}

/* Any of the request's cookies of our name, valid for p and live. */
static int
conn_cookie_ok(struct pv_conn *c, struct pv_preview *p)
{
	const char	*vals[PH_MAXCOOKIES];
	size_t		 lens[PH_MAXCOOKIES];
	char		 v[PREVIEW_TOKENMAX], nonce[PREVIEW_NONCEHEX + 1];
	uint64_t	 expires;
	int		 i, n, ok = 0;

	n = ph_cookies(c->head, PREVIEW_COOKIE, vals, lens, PH_MAXCOOKIES);
	for (i = 0; i < n && !ok; i++) {
		if (lens[i] >= sizeof(v))
			continue;
		memcpy(v, vals[i], lens[i]);
		v[lens[i]] = '\0';
		ok = preview_cookie_check(pc->conf->key, p->o.id, v, &expires,
		    nonce) == 0 && expires > (uint64_t)time(NULL);
	}
	explicit_bzero(v, sizeof(v));
	return (ok);
}

/* A WebSocket is opened only by a page of the preview's own origin. */
static int
conn_origin_ok(struct pv_conn *c, struct pv_preview *p)
{
	const char	*origin = ph_get(c->head, "origin");
	char		 host[ATTEMPT_ID_MAX + PREVIEW_DOMAINMAX + 1];

	snprintf(host, sizeof(host), "%s.%s", p->o.id, pc->conf->domain);
	return (origin != NULL && ph_origin_ok(origin, host));
}

/* A request for p let through: ask the parent for the application. */
static void
conn_ask(struct pv_conn *c, struct pv_preview *p)
{
	if (p->nconns >= PV_MAXPERPREVIEW || p->npending >= PV_MAXPENDING) {
		log_info("%s: preview busy: %d connections, %d waiting",
		    p->o.id, p->nconns, p->npending);
		conn_answer(c, 503, "the preview is busy; try later");
		return;
	}
	c->pv = p;
	p->nconns++;
	c->pending = 1;
	p->npending++;
	c->req = pc->connect(p->o.id);
	c->state = PV_WAIT;
	/* The body's first bytes wait in the buffer; no more are read. */
	bufferevent_disable(c->side[0], EV_READ);
	conn_deadline(c, PV_CONNECT_S);
}

static void
conn_route(struct pv_conn *c)
{
	struct ph_head		*h = c->head;
	struct pv_preview	*p;
	char			 id[ATTEMPT_ID_MAX], tok[PREVIEW_TOKENMAX];
	int			 login;

	if (ph_host_id(h->host, pc->conf->domain, id, sizeof(id)) == -1 ||
	    (p = pc->find(id)) == NULL) {
		conn_answer(c, 404, "no such preview");
		return;
	}
	if ((login = ph_login(h->target, tok, sizeof(tok))) != 0) {
		if (strcmp(h->method, "GET") != 0)
			conn_answer(c, 405, "the login is a GET");
		else if (login == -1)
			conn_answer(c, 403, "bad or expired token");
		else
			conn_login(c, p, tok);
		explicit_bzero(tok, sizeof(tok));
		return;
	}
	if (!conn_cookie_ok(c, p)) {
		conn_answer(c, 401, "open this preview with: factoryctl "
		    "preview ID");
		return;
	}
	if ((c->websocket = ph_websocket(h)) && !conn_origin_ok(c, p)) {
		log_info("%s: preview websocket refused: Origin", p->o.id);
		conn_answer(c, 403, "websocket from another origin");
		return;
	}
	/*
	 * The previews share a site unless their domain is a public
	 * suffix: a page of one could post to another with its Lax
	 * cookie.  A request that is not a read comes from the
	 * preview's own origin, or not at all.
	 */
	if (strcmp(h->method, "GET") != 0 && strcmp(h->method, "HEAD") != 0 &&
	    strcmp(h->method, "OPTIONS") != 0 && !conn_origin_ok(c, p)) {
		log_info("%s: preview %s refused: Origin", p->o.id, h->method);
		conn_answer(c, 403, "a request from another origin");
		return;
	}
	/* A body is passed on by its length alone: not chunked. */
	if (h->chunked) {
		conn_answer(c, 411, "a request body needs a Content-Length");
		return;
	}
	c->left = h->haslength ? h->length : 0;
	conn_ask(c, p);
}

/* The head, once whole: parsed, then routed. */
static void
conn_head(struct pv_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->side[0]);
	size_t		 len = evbuffer_get_length(in);
	const char	*p;
	char		 err[128];
	long		 end;

	if (len > PH_HEADMAX)
		len = PH_HEADMAX;
	if ((p = (const char *)evbuffer_pullup(in, len)) == NULL) {
		conn_free(c);
		return;
	}
	if ((end = ph_head_end(p, len)) == 0)
		return;
	if (end == -1) {
		if (len >= PH_HEADMAX)
			conn_answer(c, 431, "request head too large");
		else
			conn_answer(c, 400, "bad request");
		return;
	}
	if ((c->head = malloc(sizeof(*c->head))) == NULL) {
		log_warn("preview: a request head");
		conn_free(c);
		return;
	}
	if (ph_parse(p, (size_t)end, c->head, err, sizeof(err)) == -1) {
		log_debug("preview: request refused: %s", err);
		conn_answer(c, 400, "bad request");
		return;
	}
	evbuffer_drain(in, (size_t)end);
	conn_route(c);
}

/*
 * The browser's bytes towards the application: at most what is left
 * of the body; the rest is dropped, and the browser no longer read.
 */
static void
conn_body(struct pv_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->side[0]);
	struct evbuffer	*out = bufferevent_get_output(c->side[1]);
	size_t		 n = evbuffer_get_length(in);

	if (n > c->left)
		n = (size_t)c->left;
	if (n > 0 && evbuffer_remove_buffer(in, out, n) > 0)
		c->left -= n;
	if (c->left == 0) {
		evbuffer_drain(in, evbuffer_get_length(in));
		bufferevent_disable(c->side[0], EV_READ);
	}
}

/*
 * The application's first read: for a WebSocket asked for, a status
 * line of exactly 101 ("HTTP/1.1 101 " or "HTTP/1.1 101\r") opens the
 * browser's side without bound; anything else, a first read too short
 * to say it included, keeps the body's bound for good.
 */
static void
conn_answered(struct pv_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->side[1]);
	const char	*p;
	size_t		 n = strlen("HTTP/1.1 101 ");

	c->answered = 1;
	if (!c->websocket || evbuffer_get_length(in) < n ||
	    (p = (const char *)evbuffer_pullup(in, n)) == NULL ||
	    memcmp(p, "HTTP/1.1 101", n - 1) != 0 ||
	    (p[n - 1] != ' ' && p[n - 1] != '\r'))
		return;
	c->left = UINT64_MAX;
	bufferevent_enable(c->side[0], EV_READ);
}

/* The head as the application sees it, then the body's first bytes. */
static int
conn_upstream_head(struct pv_conn *c)
{
	static char	 buf[PH_OUTMAX];
	struct evbuffer	*out = bufferevent_get_output(c->side[1]);
	long		 n;

	if ((n = ph_rewrite(c->head, c->pv->o.port, c->websocket, buf,
	    sizeof(buf))) == -1 || evbuffer_add(out, buf, (size_t)n) == -1)
		return (-1);
	free(c->head);
	c->head = NULL;
	return (0);
}

/* The parent's socket, maybe still connecting: writes wait for it. */
static void
conn_relay(struct pv_conn *c, int fd)
{
	int	 i;

	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (c->side[1] = bufferevent_socket_new(pc->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warn("%s: preview upstream", c->pv->o.id);
		close(fd);
		conn_answer(c, 502, "the preview's application is not "
		    "reachable");
		return;
	}
	if (conn_upstream_head(c) == -1) {
		conn_answer(c, 502, "the request could not be forwarded");
		return;
	}
	c->state = PV_RELAY;
	bufferevent_setwatermark(c->side[0], EV_READ, 0, 0);
	for (i = 0; i < 2; i++) {
		bufferevent_setcb(c->side[i], conn_read, conn_write,
		    conn_event, c);
		bufferevent_enable(c->side[i], EV_READ | EV_WRITE);
	}
	conn_body(c);
	conn_deadline(c, PV_IDLE_S);
}

int
conn_connected(const struct preview_connected *m, int fd)
{
	struct pv_conn	*c;

	TAILQ_FOREACH(c, &conns, entry)
		if (c->state == PV_WAIT && c->req == m->req)
			break;
	if (c == NULL)
		return (0);
	c->pending = 0;
	c->pv->npending--;
	if (!m->ok || fd == -1) {
		log_info("%s: preview: no connection to port %u: %s",
		    c->pv->o.id, (unsigned)c->pv->o.port, m->ok ?
		    "no descriptor" : m->why);
		if (fd != -1)
			close(fd);
		conn_answer(c, 502, "the preview's application is not "
		    "reachable");
		return (1);
	}
	conn_relay(c, fd);
	return (1);
}

static int
conn_side(struct pv_conn *c, struct bufferevent *bev)
{
	return (bev == c->side[0] ? 0 : 1);
}

/* Bytes from one side go to the other; a full other side stops reading. */
static void
conn_read(struct bufferevent *bev, void *arg)
{
	struct pv_conn	*c = arg;
	struct evbuffer	*out;
	int		 i;

	if (c->state == PV_HEAD) {
		conn_head(c);
		return;
	}
	if (c->state != PV_RELAY)
		return;
	i = conn_side(c, bev);
	if (i == 1)
		c->heard = 1;
	if (i == 1 && !c->answered)
		conn_answered(c);
	out = bufferevent_get_output(c->side[!i]);
	if (i == 0)
		conn_body(c);
	else
		evbuffer_add_buffer(out, bufferevent_get_input(bev));
	if (evbuffer_get_length(out) >= PV_HIWAT)
		bufferevent_disable(bev, EV_READ);
	conn_deadline(c, PV_IDLE_S);
}

/*
 * Side i's output is empty.  Our answer written: close.  Relaying:
 * read from the other side again, or pass on the browser's EOF as a
 * half-close; once the application is done and all it said is
 * written, close: one request per connection.
 */
static void
conn_write(struct bufferevent *bev, void *arg)
{
	struct pv_conn	*c = arg;
	int		 i = conn_side(c, bev);

	if (c->state == PV_ANSWER) {
		conn_free(c);
		return;
	}
	if (c->state != PV_RELAY)
		return;
	if (i == 0 && c->eof[1]) {
		conn_free(c);
		return;
	}
	if (!c->eof[!i]) {
		bufferevent_enable(c->side[!i], EV_READ);
		return;
	}
	if (!c->shut[i]) {
		c->shut[i] = 1;
		shutdown(bufferevent_getfd(bev), SHUT_WR);
	}
}

static void
conn_relay_event(struct pv_conn *c, int i, short what)
{
	/* Refused, reset or closed before a byte: the browser hears so. */
	if (i == 1 && !c->heard) {
		log_info("%s: preview: port %u: %s", c->pv->o.id,
		    (unsigned)c->pv->o.port, (what & BEV_EVENT_ERROR) ?
		    strerror(EVUTIL_SOCKET_ERROR()) : "closed without answer");
		conn_answer(c, 502, "the preview's application is not "
		    "reachable");
		return;
	}
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
		c->eof[i] = 1;
		bufferevent_disable(c->side[i], EV_READ);
		if (evbuffer_get_length(bufferevent_get_output(
		    c->side[!i])) == 0)
			conn_write(c->side[!i], c);
		return;
	}
	conn_free(c);
}

static void
conn_event(struct bufferevent *bev, short what, void *arg)
{
	struct pv_conn	*c = arg;

	if (what & BEV_EVENT_CONNECTED)
		return;
	if (c->state == PV_RELAY)
		conn_relay_event(c, conn_side(c, bev), what);
	else
		conn_free(c);
}

static void
conn_timeout(int fd, short event, void *arg)
{
	struct pv_conn	*c = arg;

	switch (c->state) {
	case PV_HEAD:
		conn_answer(c, 408, "request head too slow");
		break;
	case PV_WAIT:
		log_info("%s: preview: no answer from the parent in %ds",
		    c->pv->o.id, PV_CONNECT_S);
		conn_answer(c, 504, "the preview's application did not "
		    "answer");
		break;
	case PV_RELAY:
	case PV_ANSWER:
		conn_free(c);
		break;
	}
}
