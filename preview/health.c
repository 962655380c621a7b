/*
 * A preview's health path, probed until the application answers 2xx
 * or about a minute has passed, then reported to the parent once
 * (IMSG_PREVIEW_HEALTH): an operator who opens the preview learns
 * whether the application came up, and its first words if not.  The
 * connection is the parent's, as for a browser's request; what the
 * application answers is its own and reaches the parent unparsed but
 * for the status code, NUL bytes replaced, bounded.
 */
#include <sys/types.h>
#include <sys/queue.h>

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
#include "util.h"

#define PV_HEALTH_READMAX	(64 * 1024)	/* of one answer */
#define PV_HEALTH_TRY_S		10	/* one try: connect to answer */
#define PV_HEALTH_FIRST_S	1	/* the first wait between tries */
#define PV_HEALTH_WAITMAX_S	8	/* the wait doubles up to this */
#define PV_HEALTH_TOTAL_S	60	/* no try starts after this */

struct pv_probe {
	TAILQ_ENTRY(pv_probe)	 entry;
	struct pv_preview	*pv;
	uint32_t		 req;
	int			 waiting;	/* a CONNECT unanswered */
	struct bufferevent	*bev;		/* a try's connection */
	struct event		 timer;		/* a try's end, or the wait */
	int			 wait;		/* s before the next try */
	uint64_t		 start;		/* mono ms, the first try */
	struct preview_health	 h;		/* the last try's answer */
};

static const struct pv_ctx	*pc;	/* preview.c's, health_init */
static TAILQ_HEAD(, pv_probe)	 probes = TAILQ_HEAD_INITIALIZER(probes);

static void	health_timer(int, short, void *);
static void	health_read(struct bufferevent *, void *);
static void	health_event(struct bufferevent *, short, void *);

void
health_init(const struct pv_ctx *ctx)
{
	pc = ctx;
}

void
health_stop(struct pv_preview *p)
{
	struct pv_probe	*pr = p->probe;

	if (pr == NULL)
		return;
	if (pr->bev != NULL)
		bufferevent_free(pr->bev);
	evtimer_del(&pr->timer);
	TAILQ_REMOVE(&probes, pr, entry);
	free(pr);
	p->probe = NULL;
}

static void
health_deadline(struct pv_probe *pr, int secs)
{
	struct timeval	 tv = { secs, 0 };

	evtimer_add(&pr->timer, &tv);
}

/* A try: a connection first, as a browser's request gets one. */
static void
health_try(struct pv_probe *pr)
{
	/* A preview past its end is not probed (nor reported). */
	if (pr->pv->o.expires <= (uint64_t)time(NULL)) {
		health_stop(pr->pv);
		return;
	}
	pr->req = pc->connect(pr->pv->o.id);
	pr->waiting = 1;
	health_deadline(pr, PV_HEALTH_TRY_S);
}

void
health_start(struct pv_preview *p)
{
	struct pv_probe	*pr;

	if (p->o.health[0] == '\0' || p->probe != NULL)
		return;
	if ((pr = calloc(1, sizeof(*pr))) == NULL)
		fatal(NULL);
	pr->pv = p;
	pr->wait = PV_HEALTH_FIRST_S;
	pr->start = mono_ms();
	strlcpy(pr->h.id, p->o.id, sizeof(pr->h.id));
	evtimer_set(&pr->timer, health_timer, pr);
	TAILQ_INSERT_TAIL(&probes, pr, entry);
	p->probe = pr;
	health_try(pr);
}

/* 2xx, or no time for another try: the parent hears, once. */
static void
health_next(struct pv_probe *pr)
{
	if ((pr->h.status >= 200 && pr->h.status < 300) ||
	    mono_ms() - pr->start + (uint64_t)pr->wait * 1000 >
	    (uint64_t)PV_HEALTH_TOTAL_S * 1000) {
		pc->health(&pr->h);
		health_stop(pr->pv);
		return;
	}
	health_deadline(pr, pr->wait);
	if ((pr->wait *= 2) > PV_HEALTH_WAITMAX_S)
		pr->wait = PV_HEALTH_WAITMAX_S;
}

static void
health_none(struct pv_probe *pr, const char *why)
{
	pr->h.status = 0;
	snprintf(pr->h.what, sizeof(pr->h.what), "no answer: %s", why);
}

/* What came of a try, whole or cut at its bound or its deadline. */
static void
health_done(struct pv_probe *pr)
{
	struct evbuffer	*in = bufferevent_get_input(pr->bev);
	size_t		 len = evbuffer_get_length(in);
	const char	*p;
	int		 code;

	if (len > PV_HEALTH_READMAX)
		len = PV_HEALTH_READMAX;
	if (len == 0 || (p = (const char *)evbuffer_pullup(in, len)) ==
	    NULL)
		health_none(pr, "nothing read");
	else {
		code = ph_status(p, len);
		pr->h.status = code > 0 ? (uint32_t)code : 0;
		ph_what(p, len, pr->h.what, sizeof(pr->h.what));
	}
	bufferevent_free(pr->bev);
	pr->bev = NULL;
	evtimer_del(&pr->timer);
	health_next(pr);
}

static int
health_request(struct pv_probe *pr, int fd)
{
	char	 req[PREVIEW_PATHMAX + 128];

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%u\r\n"
	    "User-Agent: factory-preview\r\n"
	    "Connection: close\r\n\r\n", pr->pv->o.health,
	    (unsigned)pr->pv->o.port);
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (pr->bev = bufferevent_socket_new(pc->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		return (-1);
	}
	bufferevent_setwatermark(pr->bev, EV_READ, 0, PV_HEALTH_READMAX);
	bufferevent_setcb(pr->bev, health_read, NULL, health_event, pr);
	if (bufferevent_write(pr->bev, req, strlen(req)) == -1)
		return (-1);
	bufferevent_enable(pr->bev, EV_READ | EV_WRITE);
	return (0);
}

int
health_connected(const struct preview_connected *m, int fd)
{
	struct pv_probe	*pr;

	TAILQ_FOREACH(pr, &probes, entry)
		if (pr->waiting && pr->req == m->req)
			break;
	if (pr == NULL)
		return (0);
	pr->waiting = 0;
	evtimer_del(&pr->timer);
	if (!m->ok || fd == -1) {
		if (fd != -1)
			close(fd);
		health_none(pr, m->ok ? "no descriptor" : m->why);
		health_next(pr);
		return (1);
	}
	if (health_request(pr, fd) == -1) {
		if (pr->bev != NULL) {
			bufferevent_free(pr->bev);
			pr->bev = NULL;
		}
		health_none(pr, "no buffers");
		health_next(pr);
		return (1);
	}
	health_deadline(pr, PV_HEALTH_TRY_S);
	return (1);
}

static void
health_read(struct bufferevent *bev, void *arg)
{
	struct pv_probe	*pr = arg;

	/* Enough of an answer: the rest is not read. */
	if (evbuffer_get_length(bufferevent_get_input(bev)) >=
	    PV_HEALTH_READMAX)
		health_done(pr);
}

static void
health_event(struct bufferevent *bev, short what, void *arg)
{
	struct pv_probe	*pr = arg;

	if (what & BEV_EVENT_CONNECTED)
		return;
	if ((what & BEV_EVENT_ERROR) && evbuffer_get_length(
	    bufferevent_get_input(bev)) == 0) {
		bufferevent_free(pr->bev);
		pr->bev = NULL;
		evtimer_del(&pr->timer);
		health_none(pr, strerror(EVUTIL_SOCKET_ERROR()));
		health_next(pr);
		return;
	}
	health_done(pr);
}

/* A try's end (no CONNECTED, or no whole answer), or a wait's. */
static void
health_timer(int fd, short event, void *arg)
{
	struct pv_probe	*pr = arg;

	if (pr->waiting) {
		/* A late CONNECTED finds no probe: its socket is closed. */
		pr->waiting = 0;
		health_none(pr, "no connection in time");
		health_next(pr);
	} else if (pr->bev != NULL)
		health_done(pr);
	else
		health_try(pr);
}
