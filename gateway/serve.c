/*
 * The agent's side: one evhttp per endpoint, on the listening socket
 * the parent made in the attempt's network namespace.  libevent's
 * parser reads the request within our limits (headers, body, one
 * request at a time per connection: evhttp stops reading a connection
 * until its answer is sent); we add what it lets through: both
 * Content-Length and Transfer-Encoding, a transfer coding other than
 * chunked, repeated framing or credential headers, a request that
 * takes longer than the timeout to arrive however slowly its bytes
 * trickle in.  Each of those is a 400 and the connection closed.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "gateway.h"
#include "log.h"
#include "proto.h"
#include "util.h"

#define GW_MAXHEADERS	(16 * 1024)	/* request line and headers */
/*
 * Bounds where a request starts, so no agent holds more of the shared
 * gateway than these (each connection reads up to PROTO_MAXBODY before
 * its request is ours; each forward meters up to PROTO_MAXBODY of its
 * answer): past a connection cap the endpoint's listener stops
 * accepting (the kernel's backlog holds the rest, none of their bytes
 * read here) until a connection goes; past a forward cap a request is
 * answered 429 and recorded refused-busy.
 */
#define GW_MAXCONNS	16		/* connections per endpoint */
#define GW_MAXATTEMPTCONNS 32		/* and per attempt, all endpoints */
#define GW_MAXFWDS	8		/* requests in flight per endpoint */
#define GW_MAXATTEMPTFWDS 16		/* and per attempt */
#define GW_PURGE_MS	100		/* while paused: closed ones noticed */
/*
 * Memory: the bytes of requests not yet ours (evhttp holds a request
 * whole, up to PROTO_MAXBODY, until its last byte came).  The caps on
 * connections alone let one tenant's attempts, each holding 16 of them
 * a byte short of complete, take the gateway's whole RLIMIT_DATA, and
 * every other tenant's requests failed.  So an attempt may hold
 * GW_ATTEMPTRX of them (an endpoint's 16 connections with 2 MiB
 * bodies and their headers fit), and all together GW_RXMAX (half the
 * gateway's memory bound); past either, the connection that grew it
 * is dropped, an attempt past its part of GW_RXMAX first.
 */
#define GW_ATTEMPTRX	((size_t)40 * 1024 * 1024)
#define GW_RXMAX	((size_t)512 * 1024 * 1024)

/*
 * A connection, known to us by the bufferevent evhttp reads it with
 * (we hold a reference, so the pointer stays good after evhttp let
 * go of it): its deadline runs from its start (and again after each
 * answer) until its request is complete.
 */
struct gw_conn {
	TAILQ_ENTRY(gw_conn)	 entry;
	struct gw_ep		*ep;
	struct bufferevent	*bev;
	struct evbuffer_cb_entry *incb, *outcb;
	uint64_t		 deadline;	/* ms; 0: a request is served */
	int			 dropped;
	int			 excess;	/* beyond GW_MAXCONNS */
	int			 ours;		/* serve_request has it */
	size_t			 rx;		/* bytes of no request of ours */
};

static const struct gw_ctx *gw;		/* gateway.c's, serve_init */
static size_t	serve_rx_total;		/* c->rx, all connections */

static void	serve_request(struct evhttp_request *, void *);
static struct bufferevent *serve_bev(struct event_base *, void *);
static void	serve_sweep(int, short, void *);
static void	serve_purge_cb(int, short, void *);
static void	serve_throttle(struct gw_ep *);
static void	serve_drop(struct gw_conn *, const char *);

void
serve_init(const struct gw_ctx *ctx)
{
	gw = ctx;
	fwd_init(ctx);
}

void
serve_start(struct gw_ep *ep)
{
	struct timeval	 tv = { 1, 0 };
	int		 on = 1;

	TAILQ_INIT(&ep->conns);
	if ((ep->http = evhttp_new(gw->base)) == NULL)
		fatalx("evhttp_new");
	evhttp_set_max_headers_size(ep->http, GW_MAXHEADERS);
	evhttp_set_max_body_size(ep->http, PROTO_MAXBODY);
	evhttp_set_timeout(ep->http, gw->timeout);
	evhttp_set_allowed_methods(ep->http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
	    EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE);
	evhttp_set_default_content_type(ep->http, "application/json");
	evhttp_set_bevcb(ep->http, serve_bev, ep);
	evhttp_set_gencb(ep->http, serve_request, ep);
	/* The parent's socket may block; our loop must not. */
	if (evutil_make_socket_nonblocking(ep->fd) == -1)
		fatal("%s: listener", ep->g.id);
	/*
	 * An answer streams in small writes, an event each: with Nagle's
	 * algorithm each waited for the agent's delayed ACK, 40 ms an
	 * event (make bench, bench/agents.sh).  Accepted connections
	 * inherit the listener's option.
	 */
	if (setsockopt(ep->fd, IPPROTO_TCP, TCP_NODELAY, &on,
	    sizeof(on)) == -1)
		log_warn("%s: listener: TCP_NODELAY", ep->g.id);
	if ((ep->bound = evhttp_accept_socket_with_handle(ep->http,
	    ep->fd)) == NULL)
		fatalx("%s: evhttp_accept_socket", ep->g.id);
	if ((ep->sweep = event_new(gw->base, -1, EV_PERSIST, serve_sweep,
	    ep)) == NULL || event_add(ep->sweep, &tv) == -1)
		fatalx("%s: sweep timer", ep->g.id);
	if ((ep->purge = evtimer_new(gw->base, serve_purge_cb, ep)) == NULL)
		fatalx("%s: purge timer", ep->g.id);
	/* A restarted gateway: the attempt's other endpoints count too. */
	serve_throttle(ep);
}

/* Connections and forwards of the attempt, all its endpoints. */
static void
serve_attempt_load(const struct gw_ep *ep, int *conns, int *fwds)
{
	struct gw_ep	*e;

	*conns = *fwds = 0;
	TAILQ_FOREACH(e, gw->eps, entry)
		if (strcmp(e->g.id, ep->g.id) == 0 && e->http != NULL) {
			*conns += e->nconns;
			*fwds += e->nfwds;
		}
}

static void
serve_pause(struct gw_ep *ep, int pause)
{
	struct evconnlistener	*l;
	struct timeval		 tv = { 0, GW_PURGE_MS * 1000 };

	if (pause == ep->paused || ep->bound == NULL)
		return;
	l = evhttp_bound_socket_get_listener(ep->bound);
	if (pause) {
		log_info("%s: %s: %d connections here, more for the attempt: "
		    "not accepting until one goes", ep->g.id, ep->g.provider,
		    ep->nconns);
		evconnlistener_disable(l);
		evtimer_add(ep->purge, &tv);
	} else {
		evconnlistener_enable(l);
		evtimer_del(ep->purge);
	}
	ep->paused = pause;
}

/* Each endpoint of the attempt accepts while below both caps. */
static void
serve_throttle(struct gw_ep *ep)
{
	struct gw_ep	*e;
	int		 conns, fwds;

	serve_attempt_load(ep, &conns, &fwds);
	TAILQ_FOREACH(e, gw->eps, entry)
		if (strcmp(e->g.id, ep->g.id) == 0 && e->http != NULL)
			serve_pause(e, e->nconns >= GW_MAXCONNS ||
			    conns >= GW_MAXATTEMPTCONNS);
}

/* c->rx, and the sum of all of them with it. */
static void
serve_rx_set(struct gw_conn *c, size_t n)
{
	serve_rx_total -= c->rx;
	c->rx = n;
	serve_rx_total += n;
}

static void
serve_conn_free(struct gw_ep *ep, struct gw_conn *c)
{
	serve_rx_set(c, 0);
	evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->incb);
	evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->outcb);
	TAILQ_REMOVE(&ep->conns, c, entry);
	ep->nconns--;
	bufferevent_decref(c->bev);
	free(c);
}

void
serve_stop(struct gw_ep *ep)
{
	struct gw_conn	*c;

	fwd_stop(ep);
	event_free(ep->sweep);
	ep->sweep = NULL;
	event_free(ep->purge);
	ep->purge = NULL;
	while ((c = TAILQ_FIRST(&ep->conns)) != NULL)
		serve_conn_free(ep, c);
	/* Closes the listener and every connection of the endpoint. */
	evhttp_free(ep->http);
	ep->http = NULL;
	ep->bound = NULL;
}

/*
 * A request that never reached serve_request, recorded as refused
 * requests are: evhttp answered it itself (a line, header or chunk it
 * could not parse, too large, both Content-Length and
 * Transfer-Encoding as it reads them, a method it does not allow) or
 * we dropped its connection at its deadline.
 */
static void
serve_unparsed(struct gw_ep *ep, int status, const char *why)
{
	struct gw_usage	 u;

	memset(&u, 0, sizeof(u));
	strlcpy(u.id, ep->g.id, sizeof(u.id));
	strlcpy(u.provider, ep->g.provider, sizeof(u.provider));
	strlcpy(u.model, "-", sizeof(u.model));
	u.time_ms = now_ms();
	u.status = status;
	u.outcome = GW_BAD_REQUEST;
	proto_usage_reason(&u, why);
	gw->usage(&u);
}

/* Bytes the agent sent: a request, until serve_request takes one. */
static void
serve_in_cb(struct evbuffer *b, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct gw_conn	*c = arg;
	struct gw_ep	*e;
	struct gw_conn	*o;
	size_t		 held = 0, part;
	int		 neps = 0;
	char		 why[128];

	serve_rx_set(c, c->rx + info->n_added);
	/*
	 * Bytes sent while a request is ours (evhttp goes on reading
	 * while it answers) count too: rx was zeroed when the request
	 * became ours, so what it holds now is the next one's.
	 */
	if (c->dropped || info->n_added == 0)
		return;
	TAILQ_FOREACH(e, gw->eps, entry) {
		if (e->http == NULL)
			continue;
		neps++;
		if (strcmp(e->g.id, c->ep->g.id) == 0)
			TAILQ_FOREACH(o, &e->conns, entry)
				if (!o->dropped)
					held += o->rx;
	}
	part = GW_RXMAX / (size_t)(neps > 0 ? neps : 1);
	if (held > GW_ATTEMPTRX)
		snprintf(why, sizeof(why), "the attempt's unfinished requests "
		    "hold more than %zu MiB", GW_ATTEMPTRX >> 20);
	else if (serve_rx_total > GW_RXMAX && held > part)
		snprintf(why, sizeof(why), "the gateway's memory for requests "
		    "is taken, the attempt holds more than its part");
	else
		return;
	serve_drop(c, why);
}

/*
 * A connection whose bytes must not grow: read no more of it, record
 * it, and close it as evhttp closes one that timed out, from the loop
 * (this may run inside evhttp's read of it).
 */
static void
serve_drop(struct gw_conn *c, const char *why)
{
	log_info("%s: %s: connection dropped: %s", c->ep->g.id,
	    c->ep->g.provider, why);
	c->dropped = 1;
	serve_unparsed(c->ep, 503, why);
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_trigger_event(c->bev, BEV_EVENT_READING |
	    BEV_EVENT_TIMEOUT, BEV_TRIG_DEFER_CALLBACKS);
}

/*
 * The first len bytes of b, wherever they lie: evbuffer_copyout fails
 * while the buffer's start is frozen, as it is inside evhttp's write
 * callbacks (a pipelined request answered after the one before).
 */
static int
serve_peek(struct evbuffer *b, char *dst, size_t len)
{
	struct evbuffer_iovec	 v[4];
	size_t			 got = 0, n;
	int			 nv, i;

	nv = evbuffer_peek(b, (ev_ssize_t)len, NULL, v, 4);
	for (i = 0; i < nv && i < 4 && got < len; i++) {
		n = v[i].iov_len < len - got ? v[i].iov_len : len - got;
		memcpy(dst + got, v[i].iov_base, n);
		got += n;
	}
	return (got == len ? 0 : -1);
}

/*
 * Output that starts while no request is ours is evhttp's own answer:
 * its status line is the first thing it writes.
 */
static void
serve_out_cb(struct evbuffer *b, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct gw_conn	*c = arg;
	char		 line[13];
	int		 status;

	if (c->ours || info->orig_size != 0 || info->n_added == 0)
		return;
	if (serve_peek(b, line, sizeof(line) - 1) == -1)
		return;
	line[sizeof(line) - 1] = '\0';
	if (strncmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ' ||
	    line[9] < '1' || line[9] > '5' || line[10] < '0' ||
	    line[10] > '9' || line[11] < '0' || line[11] > '9')
		return;
	status = (line[9] - '0') * 100 + (line[10] - '0') * 10 +
	    (line[11] - '0');
	if (status < 400)
		return;		/* "100 Continue" */
	serve_rx_set(c, 0);
	serve_unparsed(c->ep, status, "answered by evhttp");
}

/*
 * Once a second: forget the connections evhttp closed (it clears all
 * of a bufferevent's callbacks when it lets go; only the read callback
 * while it writes an answer, so the event callback tells), recording
 * one the agent closed with part of a request sent, and drop those
 * past their deadline, however slowly their bytes still trickle in,
 * as if evhttp's own read timeout fired: no answer, the connection
 * closed.
 */
/* The connections evhttp let go of; then the attempt may accept again. */
static void
serve_purge(struct gw_ep *ep)
{
	struct gw_conn		*c, *next;
	bufferevent_event_cb	 ecb;
	int			 n = 0;

	for (c = TAILQ_FIRST(&ep->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		bufferevent_getcb(c->bev, NULL, NULL, &ecb, NULL);
		if (ecb != NULL)
			continue;
		if (c->rx > 0 && !c->ours && !c->dropped)
			serve_unparsed(ep, 400, "the connection "
			    "closed before the request was complete");
		serve_conn_free(ep, c);
		n++;
	}
	if (n > 0)
		serve_throttle(ep);
}

static void
serve_purge_cb(int fd, short ev, void *arg)
{
	struct gw_ep	*ep = arg;
	struct gw_ep	*e;
	struct timeval	 tv = { 0, GW_PURGE_MS * 1000 };

	/* A cap of the attempt may be held by its other endpoints. */
	TAILQ_FOREACH(e, gw->eps, entry)
		if (strcmp(e->g.id, ep->g.id) == 0 && e->http != NULL)
			serve_purge(e);
	if (ep->paused)
		evtimer_add(ep->purge, &tv);
}

static void
serve_sweep(int fd, short ev, void *arg)
{
	struct gw_ep		*ep = arg;
	struct gw_conn		*c;
	uint64_t		 now = now_ms();

	fwd_sweep(ep);
	serve_purge(ep);
	TAILQ_FOREACH(c, &ep->conns, entry) {
		if (c->deadline == 0 || now < c->deadline || c->dropped)
			continue;
		log_info("%s: %s: connection dropped: no complete request "
		    "within %ds", ep->g.id, ep->g.provider, gw->timeout);
		c->dropped = 1;
		if (c->rx > 0 && !c->ours)
			serve_unparsed(ep, c->excess ? 503 : 408, c->excess ?
			    "too many connections" : "not complete in time");
		bufferevent_trigger_event(c->bev, BEV_EVENT_READING |
		    BEV_EVENT_TIMEOUT, 0);
	}
}

/*
 * A connection accepted.  Out of memory it is evhttp's alone (its own
 * timeout still holds), never the end of the gateway.
 */
static struct bufferevent *
serve_bev(struct event_base *base, void *arg)
{
	struct gw_ep	*ep = arg;
	struct gw_conn	*c;
	int		 conns, fwds;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto fail;
	if ((c->bev = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		goto fail;
	c->ep = ep;
	if ((c->incb = evbuffer_add_cb(bufferevent_get_input(c->bev),
	    serve_in_cb, c)) == NULL ||
	    (c->outcb = evbuffer_add_cb(bufferevent_get_output(c->bev),
	    serve_out_cb, c)) == NULL)
		goto fail;
	bufferevent_incref(c->bev);
	serve_attempt_load(ep, &conns, &fwds);
	TAILQ_INSERT_TAIL(&ep->conns, c, entry);
	/* Not expected: the listener stops at the caps (serve_throttle). */
	if (++ep->nconns > GW_MAXCONNS || conns + 1 > GW_MAXATTEMPTCONNS) {
		log_warnx("%s: %s: more than %d connections: dropped",
		    ep->g.id, ep->g.provider, GW_MAXCONNS);
		c->deadline = 1;
		c->excess = 1;
	} else
		c->deadline = now_ms() + (uint64_t)gw->timeout * 1000;
	serve_throttle(ep);
	return (c->bev);
 fail:
	log_warnx("%s: %s: a connection: out of memory", ep->g.id,
	    ep->g.provider);
	if (c != NULL && c->bev != NULL)
		bufferevent_free(c->bev);
	free(c);
	return (NULL);
}

static struct gw_conn *
serve_conn(struct gw_ep *ep, struct evhttp_request *req)
{
	struct evhttp_connection *evcon;
	struct bufferevent	*bev;
	struct gw_conn		*c;

	if ((evcon = evhttp_request_get_connection(req)) == NULL)
		return (NULL);
	bev = evhttp_connection_get_bufferevent(evcon);
	TAILQ_FOREACH(c, &ep->conns, entry)
		if (c->bev == bev)
			return (c);
	return (NULL);
}

/* The answer is out: the next request has the timeout to arrive. */
static void
serve_complete(struct evhttp_request *req, void *arg)
{
	struct gw_ep			*ep = arg;
	struct gw_conn			*c;
	struct evhttp_connection	*evcon;

	evcon = evhttp_request_get_connection(req);
	/* A forward lengthened it to the provider's idle timeout. */
	if (evcon != NULL)
		evhttp_connection_set_timeout(evcon, gw->timeout);
	if ((c = serve_conn(ep, req)) != NULL) {
		c->deadline = now_ms() + (uint64_t)gw->timeout * 1000;
		c->ours = 0;
		/* a pipelined request may be here already */
		serve_rx_set(c, evbuffer_get_length(
		    bufferevent_get_input(c->bev)));
	}
}

static int
serve_count(struct evkeyvalq *h, const char *name)
{
	struct evkeyval	*kv;
	int		 n = 0;

	TAILQ_FOREACH(kv, h, next)
		if (strcasecmp(kv->key, name) == 0)
			n++;
	return (n);
}

/*
 * What evhttp lets through and a proxy behind us might read another
 * way: we answer such a request 400 and close, so no second request
 * can hide in its body.
 */
static const char *
serve_framing(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	const char		*te, *uri = evhttp_request_get_uri(req);
	size_t			 i;

	if (serve_count(h, "Content-Length") > 1)
		return ("more than one Content-Length");
	if (serve_count(h, "Transfer-Encoding") > 1)
		return ("more than one Transfer-Encoding");
	if ((te = evhttp_find_header(h, "Transfer-Encoding")) != NULL) {
		if (evhttp_find_header(h, "Content-Length") != NULL)
			return ("both Content-Length and Transfer-Encoding");
		if (strcasecmp(te, "chunked") != 0)
			return ("a transfer coding other than chunked");
	}
	if (serve_count(h, "Host") > 1)
		return ("more than one Host");
	if (evhttp_find_header(h, "Expect") != NULL)
		return ("Expect");
	if (uri == NULL || uri[0] != '/' || strlen(uri) >= GW_MAXURI)
		return ("request target");
	/* A proxy may read a '\\' as a '/': refused anywhere. */
	for (i = 0; uri[i] != '\0'; i++)
		if (uri[i] <= 0x20 || uri[i] >= 0x7f || uri[i] == '#' ||
		    uri[i] == '\\')
			return ("request target");
	return (NULL);
}

static int
serve_hex(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* One segment, raw (n bytes), decoded once into seg; its length or -1. */
static int
serve_decode(const char *raw, size_t n, char *seg, size_t seglen)
{
	size_t	 i, o = 0;
	int	 hi, lo;

	for (i = 0; i < n; i++) {
		if (o + 1 >= seglen)
			return (-1);
		if (raw[i] != '%') {
			seg[o++] = raw[i];
			continue;
		}
		if (i + 2 >= n || (hi = serve_hex(raw[i + 1])) == -1 ||
		    (lo = serve_hex(raw[i + 2])) == -1)
			return (-1);
		seg[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	seg[o] = '\0';
	return ((int)o);
}

/* The bytes a segment goes as unescaped (RFC 3986 pchar less '%'). */
static int
serve_pchar(unsigned char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("-._~!$&'()*+,=:@", c) != NULL);
}

/*
 * The path judged segment by segment, as a servlet container or any
 * other server behind an upstream would read it, and spelled again
 * from what was judged, so the provider or upstream reads what we
 * read: each segment decoded once; a '.' or '..' (whatever follows a
 * ';', which servlet containers drop before resolving dots, and
 * however encoded) refused; so are path parameters (';'), an encoded
 * '/', '\\', ';', NUL or control byte, and an empty segment but the
 * last.  The query goes as it came.  NULL with the target in out, or
 * the reason.
 */
static const char *
serve_target(const char *uri, char *out, size_t outlen)
{
	const char	*p = uri, *end = uri + strcspn(uri, "?");
	char		 seg[GW_MAXURI];
	size_t		 n, name, o = 0, i;
	int		 sl;

	while (p < end) {
		p++;			/* the '/' */
		n = strcspn(p, "/?");
		name = strcspn(p, ";/?");
		if ((sl = serve_decode(p, name, seg, sizeof(seg))) == -1)
			return ("a bad %-escape in the path");
		if (strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0)
			return ("a dot segment in the path");
		if (name < n)
			return ("a ';' in a path segment");
		if (sl == 0 && p + n < end)
			return ("an empty path segment");
		for (i = 0; i < (size_t)sl; i++)
			if ((unsigned char)seg[i] < 0x20 || seg[i] == 0x7f ||
			    seg[i] == '/' || seg[i] == '\\' || seg[i] == ';')
				return ("an encoded '/', '\\', ';' or control "
				    "byte in a path segment");
		if (o + 1 >= outlen)
			return ("request target");
		out[o++] = '/';
		for (i = 0; i < (size_t)sl; i++) {
			if (o + 3 >= outlen)
				return ("request target");
			if (serve_pchar((unsigned char)seg[i]))
				out[o++] = seg[i];
			else
				o += (size_t)snprintf(out + o, outlen - o,
				    "%%%02X", (unsigned char)seg[i]);
		}
		p += n;
	}
	if (o == 0)
		out[o++] = '/';
	if (strlcpy(out + o, end, outlen - o) >= outlen - o)
		return ("request target");
	return (NULL);
}

/*
 * The token, where the kind puts it: "Authorization: Bearer T"
 * (openai), "x-api-key: T" (anthropic), the upstream's own header.
 * Exactly one such header; compared in constant time with this
 * endpoint's token, never another endpoint's.
 */
static int
serve_token(struct gw_ep *ep, struct gw_prov *p, struct evhttp_request *req,
    char *rid, size_t ridlen)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	char			 name[GW_HEADERMAX], prefix[GW_HEADERMAX];
	const char		*v;
	size_t			 plen;

	rid[0] = '\0';
	proto_cred_header(&p->conf, name, prefix);
	if (serve_count(h, name) != 1 ||
	    (v = evhttp_find_header(h, name)) == NULL)
		return (-1);
	if ((plen = strlen(prefix)) > 0) {
		if (strncasecmp(v, prefix, plen) != 0 || v[plen] != ' ')
			return (-1);
		v += plen + 1;
	}
	if (strlen(v) != GW_TOKEN_LEN)
		return (-1);
	if (CRYPTO_memcmp(v, ep->g.token, GW_TOKEN_LEN) == 0)
		return (0);
	(void)gw->revoked(v, strlen(v), rid, ridlen);
	return (-1);
}

static int
serve_method_bit(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return (GW_M_GET);
	case EVHTTP_REQ_HEAD:
		return (GW_M_HEAD);
	case EVHTTP_REQ_POST:
		return (GW_M_POST);
	case EVHTTP_REQ_PUT:
		return (GW_M_PUT);
	case EVHTTP_REQ_PATCH:
		return (GW_M_PATCH);
	case EVHTTP_REQ_DELETE:
		return (GW_M_DELETE);
	default:
		return (0);
	}
}

static const char *
serve_method_name(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return ("GET");
	case EVHTTP_REQ_HEAD:
		return ("HEAD");
	case EVHTTP_REQ_POST:
		return ("POST");
	case EVHTTP_REQ_PUT:
		return ("PUT");
	case EVHTTP_REQ_PATCH:
		return ("PATCH");
	case EVHTTP_REQ_DELETE:
		return ("DELETE");
	default:
		return ("?");
	}
}

/* What budget - spent - running leaves, 0 if nothing. */
static uint64_t
serve_left(uint64_t budget, uint64_t spent, uint64_t running)
{
	unsigned __int128	 used = (unsigned __int128)spent + running;

	return (used >= budget ? 0 : budget - (uint64_t)used);
}

static void
serve_refuse(struct evhttp_request *req, struct gw_usage *u, int code,
    uint32_t outcome, const char *msg, int close)
{
	const struct gw_prov	*p = gw->prov_find(u->provider);

	fwd_answer_error(req, p != NULL ? p->conf.kind : GW_OPENAI, code,
	    outcome, msg, close);
	u->status = code;
	u->outcome = outcome;
	proto_usage_reason(u, msg);
	gw->usage(u);
}

static int
serve_model_granted(const struct gw_ep *ep, const char *model)
{
	uint32_t	 i;

	for (i = 0; i < ep->g.nmodels; i++)
		if (strcmp(ep->g.models[i], model) == 0)
			return (1);
	return (0);
}

/*
 * Anthropic's long-context tier is the request's to ask for, with an
 * anthropic-beta header naming it ("context-1m-2025-08-07"): any token
 * of "context-1m" in any of its values.
 */
static int
serve_asks_long(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;

	TAILQ_FOREACH(kv, h, next)
		if (strcasecmp(kv->key, "anthropic-beta") == 0 &&
		    strstr(kv->value, "context-1m") != NULL)
			return (1);
	return (0);
}

/*
 * Its prices and output ceiling, or those of "*"; 0 if the table has
 * neither (the ceiling is then the default).  What is reserved before
 * the usage is read is at the highest rates the request may be billed
 * at (a cache write, dearer than input, where it asks for one; the
 * long-context tier where it asks for that); what is charged, at the
 * rates of what the provider says it did (proto_meter_cost).
 */
static int
serve_price(const struct gw_prov *p, const char *model,
    struct evhttp_request *req, struct fwd_req *f)
{
	const struct gw_price	*e = NULL;
	uint32_t		 i;

	f->maxout = GW_MAXOUT_DEFAULT;
	for (i = 0; i < p->conf.nprices; i++) {
		if (strcmp(p->conf.prices[i].model, model) == 0) {
			e = &p->conf.prices[i];
			break;
		}
		if (strcmp(p->conf.prices[i].model, "*") == 0)
			e = &p->conf.prices[i];
	}
	proto_prices(p->conf.kind, e, &f->pr);
	if (e == NULL)
		return (0);
	proto_worst_rates(&f->pr, p->conf.kind == GW_ANTHROPIC &&
	    serve_asks_long(req), proto_cache_asked(f->api, f->doc),
	    &f->pin, &f->pout);
	if (e->max_output != 0)
		f->maxout = e->max_output;
	return (1);
}

/*
 * The request's worst case is reserved while it runs, so requests in
 * flight at once cannot together spend past the budget: its size in
 * tokens (with what we add to it) and its output ceiling, the
 * request's own capped to what the budget leaves after the requests
 * already running and to the model's own ceiling, put in when absent.
 * A budget that cannot cover the input and the least answer refuses
 * it.  Without a budget the cap is the model's ceiling all the same:
 * a request whose usage is never read is charged its reservation,
 * which has no bound without one.  0, or -1: answered.
 */
static int
serve_reserve(struct gw_ep *ep, struct evhttp_request *req,
    struct fwd_req *f, size_t len)
{
	const struct gw_grant	*g = &ep->g;
	unsigned __int128	 a;
	uint64_t		 avail = UINT64_MAX, left, cin, out, bound;
	uint64_t		 room = UINT64_MAX, c;
	int			 usd = 0, rc;
	char			 err[160], msg[128];

	/*
	 * The budget's pre-check and the output cap take the input at
	 * an estimate, 4 bytes a token, which the agent can defeat
	 * (digits and commas are a token a byte); a token a byte there
	 * would refuse ordinary requests on modest budgets.  The input
	 * reserved, and charged when the usage is never read, is the
	 * bound, a token a byte, as far as the budget leaves beyond the
	 * output cap (below).
	 */
	f->in_est = (len + PROTO_ADDED + PROTO_CHARS_PER_TOKEN - 1) /
	    PROTO_CHARS_PER_TOKEN + proto_overhead(f->api, f->doc);
	bound = len + PROTO_ADDED + proto_overhead(f->api, f->doc);
	if (g->budget_tokens != 0) {
		left = serve_left(g->budget_tokens, g->spent_tokens,
		    ep->running);
		avail = left > f->in_est + f->pred ? left - f->in_est -
		    f->pred : 0;
	}
	if (g->budget_uusd != 0) {
		left = serve_left(g->budget_uusd, g->spent_uusd,
		    ep->running_uusd);
		/* A prediction is billed as output beyond the cap. */
		cin = proto_cost(f->in_est, f->pred, f->pin, f->pout);
		if (left <= cin)
			a = 0;
		else if (f->pout == 0)
			a = UINT64_MAX;
		else
			a = (unsigned __int128)(left - cin) * 1000000 /
			    f->pout;
		if (a < avail) {
			avail = (uint64_t)a;
			usd = 1;
		}
	}
	if ((rc = proto_cap_output(f->api, f->doc, avail, f->maxout, &out,
	    err, sizeof(err))) == -1) {
		serve_refuse(req, &f->u, 400, GW_BAD_REQUEST, err, 0);
		return (-1);
	}
	if (rc == 1) {
		proto_budget_message(&ep->g, usd, msg, sizeof(msg));
		serve_refuse(req, &f->u, 403, GW_REFUSED_BUDGET, msg, 0);
		return (-1);
	}
	/* The input's bound, within what the budget leaves. */
	if (g->budget_tokens != 0) {
		left = serve_left(g->budget_tokens, g->spent_tokens,
		    ep->running);
		room = left > f->pred + out ? left - f->pred - out : 0;
	}
	if (g->budget_uusd != 0 && f->pin != 0) {
		left = serve_left(g->budget_uusd, g->spent_uusd,
		    ep->running_uusd);
		c = proto_cost(0, f->pred + out, f->pin, f->pout);
		a = left > c ? (unsigned __int128)(left - c) * 1000000 /
		    f->pin : 0;
		if (a < room)
			room = (uint64_t)a;
	}
	f->in_max = bound < room ? bound : room;
	if (f->in_max < f->in_est)
		f->in_max = f->in_est;
	f->reserve = f->in_max + f->pred + out;
	f->reserve_uusd = proto_cost(f->in_max, f->pred + out, f->pin,
	    f->pout);
	return (0);
}

/* A provider's request: route, body, model, price, budget. */
static int
serve_provider(struct gw_ep *ep, struct gw_prov *p,
    struct evhttp_request *req, struct fwd_req *f)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	char		 err[160], msg[256], where[PROTO_NAMEBUF];
	const char	*why;
	size_t		 len;
	int		 stream, budgeted, rc;

	f->api = proto_route(p->conf.kind, serve_method_name(cmd),
	    f->target);
	if (f->api == -1) {
		serve_refuse(req, &f->u, 404, GW_BAD_REQUEST,
		    "not an endpoint of this gateway", 0);
		return (-1);
	}
	if (proto_query(f->api, f->target, where, sizeof(where)) != NULL) {
		snprintf(msg, sizeof(msg), "query parameter \"%s\" is not "
		    "forwarded to this endpoint", where);
		serve_refuse(req, &f->u, 400, GW_BAD_REQUEST, msg, 0);
		return (-1);
	}
	if (f->api == API_GEMINI && (why = proto_gemini_target(f->target,
	    f->u.model, sizeof(f->u.model), &stream)) != NULL) {
		serve_refuse(req, &f->u, 400, GW_BAD_REQUEST, why, 0);
		return (-1);
	}
	if (f->api == API_NONE) {
		if (evbuffer_get_length(in) != 0) {
			serve_refuse(req, &f->u, 400, GW_BAD_REQUEST,
			    "a body on a GET", 1);
			return (-1);
		}
		return (0);
	}
	len = evbuffer_get_length(in);
	/* Gemini's model is its path's (above), the body has none. */
	f->doc = proto_request(f->api, (const char *)evbuffer_pullup(in,
	    len), len, f->api == API_GEMINI ? NULL : f->u.model,
	    sizeof(f->u.model), &stream, err, sizeof(err));
	if (f->doc == NULL) {
		serve_refuse(req, &f->u, 400, GW_BAD_REQUEST, err, 0);
		return (-1);
	}
	/* What goes is made from doc: the agent's bytes need not wait. */
	evbuffer_drain(in, len);
	if (!serve_model_granted(ep, f->u.model)) {
		snprintf(msg, sizeof(msg), "model %s is not granted to this "
		    "attempt", f->u.model);
		serve_refuse(req, &f->u, 403, GW_REFUSED_MODEL, msg, 0);
		return (-1);
	}
	if (!serve_price(p, f->u.model, req, f) && ep->g.budget_uusd != 0) {
		snprintf(msg, sizeof(msg), "model %s has no price and the "
		    "budget is in USD", f->u.model);
		serve_refuse(req, &f->u, 403, GW_REFUSED_MODEL, msg, 0);
		return (-1);
	}
	/*
	 * What the provider bills beyond the bytes it is sent (an image,
	 * a file, a stored prompt or response, a tool it runs itself) no
	 * reservation can bound: refused where a budget holds.
	 */
	budgeted = ep->g.budget_tokens != 0 || ep->g.budget_uusd != 0;
	if (budgeted && proto_byref(f->api, f->doc, where, sizeof(where))) {
		snprintf(msg, sizeof(msg), "body: %s: refused on a budgeted "
		    "grant, the provider bills it beyond its bytes", where);
		serve_refuse(req, &f->u, 400, GW_BAD_REQUEST, msg, 0);
		return (-1);
	}
	/*
	 * A prediction's tokens are reserved as output, grant or not: what
	 * the answer does not use is billed all the same.  With a budget
	 * its text must be all of it, and fit the model's output ceiling.
	 */
	rc = proto_prediction(f->api, f->doc, &f->pred, where,
	    sizeof(where));
	if (rc == 1 && budgeted) {
		snprintf(msg, sizeof(msg), "body: %s: refused on a budgeted "
		    "grant, a prediction is billed as output and only its text "
		    "is counted", where);
		serve_refuse(req, &f->u, 400, GW_BAD_REQUEST, msg, 0);
		return (-1);
	}
	/*
	 * Reserved at a token a byte (the bound); measured against the
	 * ceiling at 4 bytes a token, as a prediction of the longest
	 * answer the model gives must pass.
	 */
	if (budgeted && (f->pred + PROTO_CHARS_PER_TOKEN - 1) /
	    PROTO_CHARS_PER_TOKEN > f->maxout) {
		snprintf(msg, sizeof(msg), "body: prediction: about %llu "
		    "tokens, more than the model's output ceiling of %llu",
		    (unsigned long long)((f->pred + PROTO_CHARS_PER_TOKEN -
		    1) / PROTO_CHARS_PER_TOKEN),
		    (unsigned long long)f->maxout);
		serve_refuse(req, &f->u, 400, GW_BAD_REQUEST, msg, 0);
		return (-1);
	}
	/* The estimate is of what goes, which may be more than came. */
	if ((len = proto_dumped_len(f->doc)) > PROTO_MAXBODY) {
		snprintf(msg, sizeof(msg), "body: %zu bytes once serialized "
		    "again, more than %d", len == SIZE_MAX ? 0 : len,
		    PROTO_MAXBODY);
		serve_refuse(req, &f->u, 413, GW_BAD_REQUEST, msg, 0);
		return (-1);
	}
	return (serve_reserve(ep, req, f, len));
}

/*
 * What is answered here and is no request of a provider, so no record
 * against the agent, only a log line naming it:
 *  - a WebSocket upgrade (Codex CLI tries GET /v1/responses with
 *    "Upgrade: websocket" first): 426, the one status on which Codex
 *    falls back to HTTP at once (codex-rs/core/src/client.rs,
 *    WebsocketStreamOutcome::FallbackToHttp; any other is retried as a
 *    failed stream), before its token is read;
 *  - HEAD / of a provider, the connection warm-up Claude Code sends
 *    without a key: 200, nothing forwarded.
 * 1 if answered.
 */
static int
serve_probe(struct gw_ep *ep, struct evhttp_request *req, struct fwd_req *f)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	const struct gw_prov	*p = gw->prov_find(ep->g.provider);

	if (evhttp_find_header(h, "Upgrade") != NULL) {
		log_info("%s: %s: %s %s: 426: a WebSocket upgrade, refused: "
		    "this gateway speaks HTTP/1.1 only", ep->g.id,
		    ep->g.provider, f->u.method, f->u.path);
		fwd_answer_error(req, p != NULL ? p->conf.kind : GW_OPENAI, 426,
		    GW_BAD_REQUEST, "upgrade refused: this endpoint speaks "
		    "HTTP/1.1 only", 1);
		return (1);
	}
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD &&
	    strcmp(f->target, "/") == 0 && p != NULL &&
	    p->conf.kind != GW_UPSTREAM) {
		log_info("%s: %s: HEAD /: 200: a probe, answered here",
		    ep->g.id, ep->g.provider);
		evhttp_send_reply(req, 200, "OK", NULL);
		return (1);
	}
	return (0);
}

static void
serve_request(struct evhttp_request *req, void *arg)
{
	struct gw_ep	*ep = arg;
	struct gw_prov	*p;
	struct gw_conn	*c;
	struct fwd_req	 f;
	const char	*why;
	char		 rid[ATTEMPT_ID_MAX], msg[160];
	int		 conns, fwds;

	if ((c = serve_conn(ep, req)) != NULL) {
		c->ours = 1;
		serve_rx_set(c, 0);
	}
	/* Dropped for memory as its last bytes came: recorded there. */
	if (c != NULL && c->dropped) {
		p = gw->prov_find(ep->g.provider);
		fwd_answer_error(req, p != NULL ? p->conf.kind : GW_OPENAI, 503,
		    GW_REFUSED_BUSY, "too many bytes of unfinished requests",
		    1);
		return;
	}
	memset(&f, 0, sizeof(f));
	strlcpy(f.u.id, ep->g.id, sizeof(f.u.id));
	strlcpy(f.u.provider, ep->g.provider, sizeof(f.u.provider));
	f.u.time_ms = now_ms();
	f.api = -1;
	if (evhttp_request_get_uri(req) != NULL)
		proto_usage_request(&f.u, serve_method_name(
		    evhttp_request_get_command(req)),
		    evhttp_request_get_uri(req));

	/*
	 * A request evhttp could not parse (a bad line or header, headers
	 * or body too large, bad chunks) is answered by evhttp itself,
	 * 400 or 413, and the connection closed; it never reaches us
	 * (serve_out_cb records it).  Should one arrive without its
	 * target all the same: 400.
	 */
	if (evhttp_request_get_uri(req) == NULL) {
		serve_refuse(req, &f.u, 400, GW_BAD_REQUEST,
		    "malformed request", 1);
		return;
	}
	/* A connection past the caps (or untracked) is never served. */
	if (c == NULL || c->excess) {
		serve_refuse(req, &f.u, 503, GW_REFUSED_BUSY,
		    "too many connections", 1);
		return;
	}
	c->deadline = 0;
	evhttp_request_set_on_complete_cb(req, serve_complete, ep);
	if ((why = serve_framing(req)) != NULL ||
	    (why = serve_target(evhttp_request_get_uri(req), f.target,
	    sizeof(f.target))) != NULL) {
		snprintf(msg, sizeof(msg), "bad request: %s", why);
		serve_refuse(req, &f.u, 400, GW_BAD_REQUEST, msg, 1);
		return;
	}
	if (serve_probe(ep, req, &f))
		return;
	if ((p = gw->prov_find(ep->g.provider)) == NULL || !p->usable) {
		serve_refuse(req, &f.u, 502, GW_UPSTREAM_ERROR,
		    "provider not configured", 0);
		return;
	}
	if (serve_token(ep, p, req, rid, sizeof(rid)) == -1) {
		if (rid[0] != '\0')
			log_warnx("%s: %s: replay of a token revoked with %s",
			    ep->g.id, ep->g.provider, rid);
		serve_refuse(req, &f.u, 401, GW_REFUSED_TOKEN,
		    rid[0] != '\0' ? "token revoked" : "bad token", 0);
		return;
	}
	serve_attempt_load(ep, &conns, &fwds);
	if (ep->nfwds >= GW_MAXFWDS || fwds >= GW_MAXATTEMPTFWDS) {
		snprintf(msg, sizeof(msg), "too many requests in flight: at "
		    "most %d on this endpoint, %d for the attempt",
		    GW_MAXFWDS, GW_MAXATTEMPTFWDS);
		serve_refuse(req, &f.u, 429, GW_REFUSED_BUSY, msg, 0);
		return;
	}
	if (p->conf.kind == GW_UPSTREAM) {
		if ((serve_method_bit(evhttp_request_get_command(req)) &
		    ep->g.methods & p->conf.methods) == 0) {
			serve_refuse(req, &f.u, 405, GW_REFUSED_METHOD,
			    "method not granted", 0);
			return;
		}
	} else if (serve_provider(ep, p, req, &f) == -1) {
		json_decref(f.doc);
		return;
	}
	if (fwd_start(ep, p, req, &f) == -1) {
		json_decref(f.doc);
		serve_refuse(req, &f.u, 502, GW_UPSTREAM_ERROR,
		    "upstream unreachable", 0);
	}
}
