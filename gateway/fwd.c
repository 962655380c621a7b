/*
 * The provider's side: one HTTPS request per agent request, made
 * with libevent's evhttp client over bufferevent_openssl.  Chosen over
 * libcurl because the gateway is one libevent loop already: the
 * answer streams from the provider's connection to the agent's as its
 * chunks arrive, with no second event loop, no threads and no library
 * outside the suite's list.  The peer is verified against the
 * provider's CA file alone and must name the URL's host.
 *
 * The agent's credential never leaves: the request is rebuilt from an
 * allowlist of headers (providers) or with hop-by-hop and credential
 * headers removed (upstreams), and the real key is put in.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <event.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "esc.h"
#include "gateway.h"
#include "log.h"
#include "proto.h"
#include "util.h"

#define FWD_MAXANSWER	(256 * 1024 * 1024)	/* one streamed answer */
#define FWD_MAXHEADERS	(64 * 1024)
/*
 * What may wait toward one agent's connection: above it the provider's
 * connection is not read until the agent has taken all of it.
 */
#define FWD_MAXQUEUED	(256 * 1024)

struct gw_fwd {
	TAILQ_ENTRY(gw_fwd)	 entry;
	struct gw_ep		*ep;
	struct gw_prov		*prov;		/* only until the request is out */
	char			 where[300];	/* host:port, for the log */
	struct evhttp_request	*req;		/* the agent's; NULL: gone */
	int			 req_owned;	/* detached: ours to free */
	struct evhttp_connection *agent;
	struct evhttp_request	*upreq;		/* NULL once libevent is done */
	int			 kind;
	int			 api;
	struct proto_prices	 pr;		/* what is charged */
	uint64_t		 pin, pout;	/* dearest: reserved at */
	uint64_t		 counted;	/* our share of ep->running */
	uint64_t		 counted_uusd;	/* of ep->running_uusd */
	uint64_t		 in_est;	/* the request in tokens */
	uint64_t		 in_max;	/* at most, a token a byte */
	uint64_t		 reserve;	/* its worst case, tokens */
	uint64_t		 reserve_uusd;	/* and cost */
	struct meter		 m;
	struct gw_usage		 u;
	int			 started;	/* the answer's head is out */
	int			 status;
	int			 sse;
	int			 error;		/* the client's error code */
	int			 cutting;	/* outcome to end with, or -1 */
	int			 overdim;	/* 1 tokens, 2 USD: cut for it */
	int			 paused;	/* the provider is not read */
	int			 sent;		/* request bytes went out */
	int			 idle;		/* the provider's, s */
	struct evbuffer		*upout;		/* toward it, while upreq */
	struct evbuffer_cb_entry *sentcb;
	uint64_t		 paused_ms;	/* since */
	struct event		 cut;
};

static const struct gw_ctx *gw;		/* gateway.c's, serve_init */
static struct evdns_base *fwd_dns;

static void	fwd_finish(struct gw_fwd *, uint32_t);
static void	fwd_unwatch(struct gw_fwd *);

/* Headers of a provider request worth keeping; all else is dropped. */
static const char *fwd_keep[] = {
	"Accept", "Content-Type", "User-Agent", "anthropic-version",
	"anthropic-beta", "OpenAI-Beta", "Idempotency-Key", NULL
};

/*
 * Headers of an upstream request worth keeping; all else is dropped:
 * what a server behind may read as another method or target
 * (X-HTTP-Method-Override, X-Original-URL, X-Rewrite-URL, ...), as a
 * client's identity (X-Forwarded-*) or a credential never passes.
 */
static const char *fwd_keep_upstream[] = {
	"Accept", "Accept-Language", "Cache-Control", "Content-Encoding",
	"Content-Type", "If-Match", "If-Modified-Since", "If-None-Match",
	"If-Range", "If-Unmodified-Since", "Range", "User-Agent", NULL
};

/* Answer headers not passed to the agent: ours to set. */
static const char *fwd_drop_answer[] = {
	"Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length",
	"Trailer", "Upgrade", "Proxy-Authenticate", "Set-Cookie",
	"Alt-Svc", NULL
};

static int
fwd_in(const char **list, const char *name)
{
	for (; *list != NULL; list++)
		if (strcasecmp(*list, name) == 0)
			return (1);
	return (0);
}

static void
fwd_headers_out(struct gw_fwd *f, struct gw_prov *p,
    struct evhttp_request *req, struct evhttp_request *up, size_t blen)
{
	struct evkeyvalq	*in = evhttp_request_get_input_headers(req);
	struct evkeyvalq	*out = evhttp_request_get_output_headers(up);
	struct evkeyval		*kv;
	const char		**keep;
	char			 v[GW_KEYMAX + GW_HEADERMAX], name[GW_HEADERMAX];
	char			 prefix[GW_HEADERMAX], host[300], len[32];

	proto_cred_header(&p->conf, name, prefix);
	keep = p->conf.kind == GW_UPSTREAM ? fwd_keep_upstream : fwd_keep;
	TAILQ_FOREACH(kv, in, next)
		if (fwd_in(keep, kv->key) && strcasecmp(kv->key, name) != 0)
			evhttp_add_header(out, kv->key, kv->value);
	if (p->port == 443)
		strlcpy(host, p->host, sizeof(host));
	else
		snprintf(host, sizeof(host), "%s:%u", p->host,
		    (unsigned)p->port);
	evhttp_add_header(out, "Host", host);
	/* Identity: the usage we meter must be readable. */
	evhttp_add_header(out, "Accept-Encoding", "identity");
	if (blen > 0 || f->api > 0) {
		snprintf(len, sizeof(len), "%zu", blen);
		evhttp_add_header(out, "Content-Length", len);
	}
	if (prefix[0] != '\0')
		snprintf(v, sizeof(v), "%s %s", prefix, p->key);
	else
		strlcpy(v, p->key, sizeof(v));
	evhttp_add_header(out, name, v);
	explicit_bzero(v, sizeof(v));
}

/*
 * Counted into the endpoint's running total while it runs: its
 * reservation, or what it metered once that is more.
 */
static void
fwd_count(struct gw_fwd *f)
{
	uint64_t	 now = meter_in(&f->m) + meter_out(&f->m), c;

	c = proto_meter_cost(&f->m, &f->pr);
	f->ep->running -= f->counted;
	f->counted = now > f->reserve ? now : f->reserve;
	f->ep->running += f->counted;
	f->ep->running_uusd -= f->counted_uusd;
	f->counted_uusd = c > f->reserve_uusd ? c : f->reserve_uusd;
	f->ep->running_uusd += f->counted_uusd;
}

/*
 * 1 (tokens) or 2 (USD) once what this stream metered, with the spend
 * and the other requests running, is past the budget; else 0.
 */
static int
fwd_over(struct gw_fwd *f)
{
	const struct gw_grant	*g = &f->ep->g;
	uint64_t		 in = meter_in(&f->m), out = meter_out(&f->m);
	unsigned __int128	 t;

	t = (unsigned __int128)g->spent_tokens + (f->ep->running -
	    f->counted) + in + out;
	if (g->budget_tokens != 0 && t > g->budget_tokens)
		return (1);
	t = (unsigned __int128)g->spent_uusd + (f->ep->running_uusd -
	    f->counted_uusd) + proto_meter_cost(&f->m, &f->pr);
	if (g->budget_uusd != 0 && t > g->budget_uusd)
		return (2);
	return (0);
}

static void
fwd_cut_cb(int fd, short ev, void *arg)
{
	struct gw_fwd	*f = arg;

	fwd_finish(f, (uint32_t)f->cutting);
}

/* Ended later: never inside a callback of the connection it frees. */
static void
fwd_cut(struct gw_fwd *f, uint32_t outcome)
{
	struct timeval	 tv = { 0, 0 };

	if (f->cutting != -1)
		return;
	f->cutting = (int)outcome;
	evtimer_add(&f->cut, &tv);
}

/* Bytes waiting in our buffer toward the agent. */
static size_t
fwd_queued(struct gw_fwd *f)
{
	if (f->req == NULL || f->agent == NULL || f->req_owned)
		return (0);
	return (evbuffer_get_length(bufferevent_get_output(
	    evhttp_connection_get_bufferevent(f->agent))));
}

/* Stop or resume reading the provider's connection. */
static void
fwd_pause(struct gw_fwd *f, int pause)
{
	struct evhttp_connection *up;
	struct bufferevent	*bev;

	if (pause == f->paused)
		return;
	f->paused = pause;
	f->paused_ms = now_ms();
	if (f->upreq == NULL ||
	    (up = evhttp_request_get_connection(f->upreq)) == NULL)
		return;		/* all of the answer is read */
	bev = evhttp_connection_get_bufferevent(up);
	if (pause)
		bufferevent_disable(bev, EV_READ);
	else
		bufferevent_enable(bev, EV_READ);
}

/*
 * evhttp took all we queued toward the agent: the provider is read
 * again.  The argument is the endpoint, which outlives its forwards:
 * the forward is looked up by its agent's connection.
 */
static void
fwd_drained(struct evhttp_connection *evcon, void *arg)
{
	struct gw_ep	*ep = arg;
	struct gw_fwd	*f;

	TAILQ_FOREACH(f, &ep->fwds, entry)
		if (f->agent == evcon && f->cutting == -1)
			fwd_pause(f, 0);
}

/* A chunk toward the agent; past the bound, the provider waits. */
static void
fwd_send(struct gw_fwd *f, struct evbuffer *b)
{
	evhttp_send_reply_chunk_with_cb(f->req, b, fwd_drained, f->ep);
	if (fwd_queued(f) > FWD_MAXQUEUED)
		fwd_pause(f, 1);
}

/*
 * Once a second (serve.c's sweep): an agent that has taken nothing of
 * what waits for it for the timeout is cut, its usage so far reported.
 */
void
fwd_sweep(struct gw_ep *ep)
{
	struct gw_fwd	*f;
	uint64_t	 now = now_ms();

	TAILQ_FOREACH(f, &ep->fwds, entry) {
		if (!f->paused || f->cutting != -1 ||
		    now - f->paused_ms < (uint64_t)gw->timeout * 1000)
			continue;
		log_warnx("%s: %s: the agent read nothing of its answer for "
		    "%ds: cut", f->u.id, f->u.provider, gw->timeout);
		proto_usage_reason(&f->u, "the agent read nothing of its "
		    "answer");
		fwd_cut(f, GW_CUT_STALLED);
	}
}

static int
fwd_answer_head(struct evhttp_request *up, void *arg)
{
	struct gw_fwd		*f = arg;
	struct evkeyvalq	*in = evhttp_request_get_input_headers(up);
	struct evkeyvalq	*out;
	struct evkeyval		*kv;
	const char		*ct, *ce;

	if (f->cutting != -1 || f->req == NULL)
		return (0);
	f->status = evhttp_request_get_response_code(up);
	if (f->status < 100 || f->status > 599)
		f->status = 502;
	ct = evhttp_find_header(in, "Content-Type");
	f->sse = ct != NULL && strncasecmp(ct, "text/event-stream", 17) == 0;
	meter_init(&f->m, f->api > 0 ? f->api : API_NONE, f->sse);
	f->m.in_est = f->in_est;
	ce = evhttp_find_header(in, "Content-Encoding");
	if (f->kind != GW_UPSTREAM && ce != NULL &&
	    strcasecmp(ce, "identity") != 0) {
		/* Usage we cannot read is spend we cannot cap. */
		log_warnx("%s: %s: answer in %s coding: refused", f->u.id,
		    f->u.provider, ce);
		f->error = 502;
		fwd_cut(f, GW_UPSTREAM_ERROR);
		return (0);
	}
	out = evhttp_request_get_output_headers(f->req);
	evhttp_remove_header(out, "Content-Type");
	TAILQ_FOREACH(kv, in, next)
		if (!fwd_in(fwd_drop_answer, kv->key))
			evhttp_add_header(out, kv->key, kv->value);
	evhttp_send_reply_start(f->req, f->status,
	    evhttp_request_get_response_code_line(up));
	f->started = 1;
	return (0);
}

static void
fwd_chunk(struct evhttp_request *up, void *arg)
{
	struct gw_fwd	*f = arg;
	struct evbuffer	*b = evhttp_request_get_input_buffer(up);
	size_t		 n = evbuffer_get_length(b);

	if (f->cutting != -1 || f->req == NULL || !f->started) {
		evbuffer_drain(b, n);
		return;
	}
	if (f->kind != GW_UPSTREAM && f->status >= 200 && f->status < 300 &&
	    n > 0) {
		if (meter_feed(&f->m, evbuffer_pullup(b, n), n) == -1) {
			log_warnx("%s: %s: answer beyond the meter's bounds: "
			    "cut", f->u.id, f->u.provider);
			proto_usage_reason(&f->u, "the answer is beyond the "
			    "meter's bounds");
			fwd_cut(f, GW_UPSTREAM_ERROR);
		}
		fwd_count(f);
		if (f->sse && f->cutting == -1 &&
		    (f->overdim = fwd_over(f)) != 0) {
			proto_usage_reason(&f->u,
			    "budget exhausted mid-answer");
			fwd_cut(f, GW_CUT_BUDGET);
		}
	}
	fwd_send(f, b);
}

static void
fwd_error(enum evhttp_request_error e, void *arg)
{
	struct gw_fwd	*f = arg;

	char			 why[128];

	if (e == EVREQ_HTTP_REQUEST_CANCEL)
		return;		/* ours: fwd_finish goes on */
	f->error = e == EVREQ_HTTP_TIMEOUT ? 504 : 502;
	/* The provider's own timer: its silence, never the agent's. */
	if (e == EVREQ_HTTP_TIMEOUT)
		snprintf(why, sizeof(why), "the provider sent nothing for "
		    "%ds (its idle-timeout)", f->idle);
	else
		snprintf(why, sizeof(why), "the provider's connection %s",
		    e == EVREQ_HTTP_EOF ? "closed" : "failed");
	log_warnx("%s: %s: upstream %s: %s", f->u.id, f->u.provider,
	    f->where, why);
	proto_usage_reason(&f->u, why);
}

static void
fwd_done(struct evhttp_request *up, void *arg)
{
	struct gw_fwd	*f = arg;

	fwd_unwatch(f);		/* its connection goes after we return */
	f->upreq = NULL;	/* libevent frees it after we return */
	if (f->cutting != -1)
		return;		/* fwd_cut_cb ends it */
	if (up == NULL || f->error != 0) {
		if (f->error == 0)
			f->error = 502;
		fwd_cut(f, GW_UPSTREAM_ERROR);
		return;
	}
	if (!f->started)
		(void)fwd_answer_head(up, f);
	if (evbuffer_get_length(evhttp_request_get_input_buffer(up)) > 0)
		fwd_chunk(up, f);
	meter_end(&f->m);
	fwd_cut(f, f->cutting != -1 ? (uint32_t)f->cutting : GW_OK);
}

/* The agent went (or its endpoint): stop the provider, count. */
static void
fwd_agent_gone(struct evhttp_connection *evcon, void *arg)
{
	struct gw_fwd	*f = arg;

	if (f->req != NULL &&
	    evhttp_request_get_connection(f->req) == NULL)
		f->req_owned = 1;	/* detached by evhttp: ours */
	else
		f->req = NULL;		/* evhttp frees it with evcon */
	f->agent = NULL;
	log_info("%s: %s: the agent's connection closed mid-answer",
	    f->u.id, f->u.provider);
	if (f->u.reason[0] == '\0')
		proto_usage_reason(&f->u, "the agent's connection closed "
		    "mid-answer");
	/* Gone with its answer waiting (evhttp's write timeout): stalled. */
	fwd_finish(f, f->cutting != -1 ? (uint32_t)f->cutting :
	    f->paused ? GW_CUT_STALLED : GW_UPSTREAM_ERROR);
}

/*
 * An SSE stream cut for the budget says why, as its last event: an
 * "error" event whose data is the provider's own error shape (the
 * SDKs throw it as the provider's error).
 */
static void
fwd_cut_event(struct gw_fwd *f)
{
	struct evbuffer	*b;
	char		 msg[128], *s;

	proto_budget_message(&f->ep->g, f->overdim == 2, msg, sizeof(msg));
	if ((s = proto_error_body(f->kind, 403, GW_CUT_BUDGET, msg)) ==
	    NULL)
		return;		/* the stream ends cut all the same */
	if ((b = evbuffer_new()) != NULL) {
		evbuffer_add_printf(b, "event: error\ndata: %s\n\n", s);
		evhttp_send_reply_chunk(f->req, b);
		evbuffer_free(b);
	}
	free(s);
}

static void
fwd_reply_end(struct gw_fwd *f, uint32_t outcome)
{
	if (f->req_owned) {
		evhttp_send_reply_end(f->req);	/* frees it */
		return;
	}
	if (f->agent != NULL)
		evhttp_connection_set_closecb(f->agent, NULL, NULL);
	if (!f->started) {
		f->status = f->error != 0 ? f->error : 502;
		fwd_answer_error(f->req, f->kind, f->status, outcome,
		    f->status == 504 ? "upstream timeout" :
		    "upstream error", 0);
		return;
	}
	if (outcome == GW_CUT_BUDGET && f->sse)
		fwd_cut_event(f);
	if ((outcome == GW_UPSTREAM_ERROR || outcome == GW_CUT_STALLED) &&
	    f->agent != NULL) {
		/* A truncated answer must not look complete. */
		evhttp_connection_free(f->agent);
		return;
	}
	evhttp_send_reply_end(f->req);
}

/*
 * Bytes of the request left our buffer toward the provider: from now
 * on it may be answered, and billed, whatever becomes of the answer.
 */
static void
fwd_sent_cb(struct evbuffer *b, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct gw_fwd	*f = arg;

	if (info->n_deleted > 0)
		f->sent = 1;
}

static void
fwd_unwatch(struct gw_fwd *f)
{
	if (f->sentcb != NULL)
		evbuffer_remove_cb_entry(f->upout, f->sentcb);
	f->sentcb = NULL;
	f->upout = NULL;
}

/*
 * What the request is charged: the provider's usage where it was read.
 * Where it was not (the agent went or stalled, the answer was cut or
 * dropped before its usage, which a JSON answer gives only at its
 * end) and the provider may have answered (it took the request and
 * did not answer an error), the provider bills what it generated,
 * which we never saw: at least the reservation is charged, the input
 * at a token a byte (a byte-level tokenizer makes no more; 4 bytes a
 * token is the agent's to defeat) as far as a budget left room for
 * it, and the output cap the request was sent with, and the row says
 * so.  A request that never left is charged what was metered.
 */
static void
fwd_charge(struct gw_fwd *f)
{
	uint64_t	 in = meter_in(&f->m), out = meter_out(&f->m);
	uint64_t	 cost = proto_meter_cost(&f->m, &f->pr);
	int		 failed;

	failed = f->started && (f->status < 200 || f->status > 299);
	if (f->api > 0 && f->sent && !failed &&
	    !(f->m.have_in && f->m.have_out)) {
		if (in < f->in_max)
			in = f->in_max;
		if (out < f->reserve - f->in_max)
			out = f->reserve - f->in_max;
		cost = proto_cost(in, out, f->pin, f->pout);
		if (cost < f->reserve_uusd)
			cost = f->reserve_uusd;
		f->u.estimated = 1;
	}
	f->u.tokens_in = in;
	f->u.tokens_out = out;
	f->u.cost_uusd = cost;
}

static void
fwd_finish(struct gw_fwd *f, uint32_t outcome)
{
	struct gw_ep	*ep = f->ep;

	evtimer_del(&f->cut);
	fwd_unwatch(f);
	if (f->upreq != NULL) {
		evhttp_cancel_request(f->upreq);
		f->upreq = NULL;
	}
	if (!f->m.done)
		meter_end(&f->m);
	if (f->kind != GW_UPSTREAM)
		fwd_charge(f);
	ep->running -= f->counted;
	ep->running_uusd -= f->counted_uusd;
	ep->g.spent_tokens += f->u.tokens_in + f->u.tokens_out;
	ep->g.spent_uusd += f->u.cost_uusd;
	if (f->req != NULL)
		fwd_reply_end(f, outcome);
	if (!f->started)
		f->status = f->error != 0 ? f->error : 502;
	f->u.status = f->status;
	f->u.outcome = outcome;
	gw->usage(&f->u);
	meter_free(&f->m);
	TAILQ_REMOVE(&ep->fwds, f, entry);
	ep->nfwds--;
	free(f);
}

void
fwd_init(const struct gw_ctx *ctx)
{
	gw = ctx;
}

void
fwd_stop(struct gw_ep *ep)
{
	struct gw_fwd	*f;

	while ((f = TAILQ_FIRST(&ep->fwds)) != NULL)
		fwd_finish(f, GW_REFUSED_TOKEN);
}

static SSL *
fwd_ssl(struct gw_prov *p)
{
	struct in_addr	 a4;
	SSL		*ssl;

	if ((ssl = SSL_new(p->ctx)) == NULL)
		return (NULL);
	if (inet_pton(AF_INET, p->host, &a4) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
		    p->host) != 1)
			goto fail;
	} else {
		SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		if (SSL_set1_host(ssl, p->host) != 1 ||
		    SSL_set_tlsext_host_name(ssl, p->host) != 1)
			goto fail;
	}
	return (ssl);
 fail:
	SSL_free(ssl);
	return (NULL);
}

static int
fwd_body(struct gw_fwd *f, struct evhttp_request *req, struct fwd_req *r,
    struct evhttp_request *up, size_t *len)
{
	struct evbuffer	*out = evhttp_request_get_output_buffer(up);
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	char		*s;

	if (r->doc != NULL) {
		/* What we checked is what goes: no second parser's view. */
		if ((s = json_dumps(r->doc, PROTO_DUMP)) == NULL)
			return (-1);
		*len = strlen(s);
		if (evbuffer_add(out, s, *len) == -1) {
			free(s);
			return (-1);
		}
		free(s);
		json_decref(r->doc);
		r->doc = NULL;
		/* The agent's bytes (up to 4 MiB) are not kept for the answer. */
		evbuffer_drain(in, evbuffer_get_length(in));
		return (0);
	}
	*len = evbuffer_get_length(in);
	return (evbuffer_add_buffer(out, in));
}

int
fwd_start(struct gw_ep *ep, struct gw_prov *p, struct evhttp_request *req,
    struct fwd_req *r)
{
	struct gw_fwd		*f;
	struct bufferevent	*bev;
	struct evhttp_connection *up;
	SSL			*ssl;
	char			 uri[GW_URLMAX + 2048];
	size_t			 blen;

	if (fwd_dns == NULL)
		fwd_dns = evdns_base_new(gw->base,
		    EVDNS_BASE_INITIALIZE_NAMESERVERS);
	/* The target as judged (serve.c), never the agent's spelling. */
	if ((size_t)snprintf(uri, sizeof(uri), "%s%s", p->prefix,
	    r->target) >= sizeof(uri))
		return (-1);
	/* Out of memory is this request's 502, never the gateway's end. */
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return (-1);
	if ((ssl = fwd_ssl(p)) == NULL) {
		free(f);
		return (-1);
	}
	if ((bev = bufferevent_openssl_socket_new(gw->base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS)) == NULL) {
		SSL_free(ssl);
		free(f);
		return (-1);
	}
	if ((up = evhttp_connection_base_bufferevent_new(gw->base, fwd_dns,
	    bev, p->host, p->port)) == NULL) {
		bufferevent_free(bev);
		free(f);
		return (-1);
	}
	f->idle = p->conf.idle_timeout_s != 0 ?
	    (int)p->conf.idle_timeout_s : GW_IDLE_DEFAULT;
	evhttp_connection_set_timeout(up, f->idle);
	evhttp_connection_set_max_headers_size(up, FWD_MAXHEADERS);
	evhttp_connection_set_max_body_size(up, FWD_MAXANSWER);
	evhttp_connection_free_on_completion(up);

	f->ep = ep;
	f->prov = p;
	f->req = req;
	f->agent = evhttp_request_get_connection(req);
	f->kind = p->conf.kind;
	f->api = r->api;
	f->pr = r->pr;
	f->pin = r->pin;
	f->pout = r->pout;
	f->u = r->u;
	f->cutting = -1;
	snprintf(f->where, sizeof(f->where), "%s:%u", p->host,
	    (unsigned)p->port);
	meter_init(&f->m, API_NONE, 0);
	evtimer_assign(&f->cut, gw->base, fwd_cut_cb, f);
	if ((f->upreq = evhttp_request_new(fwd_done, f)) == NULL)
		goto fail;
	f->upout = bufferevent_get_output(bev);
	if ((f->sentcb = evbuffer_add_cb(f->upout, fwd_sent_cb, f)) == NULL)
		goto fail;
	evhttp_request_set_header_cb(f->upreq, fwd_answer_head);
	evhttp_request_set_chunked_cb(f->upreq, fwd_chunk);
	evhttp_request_set_error_cb(f->upreq, fwd_error);
	if (fwd_body(f, req, r, f->upreq, &blen) == -1)
		goto fail;
	/*
	 * Until the provider says, the request counts as its size in
	 * tokens, and its reservation counts from now: requests in flight
	 * at once share the budget.
	 */
	if (f->kind != GW_UPSTREAM) {
		f->in_est = r->in_est;
		f->in_max = r->in_max;
		f->reserve = r->reserve;
		f->reserve_uusd = r->reserve_uusd;
		f->m.in_est = f->in_est;
		fwd_count(f);
	}
	fwd_headers_out(f, p, req, f->upreq, blen);
	TAILQ_INSERT_TAIL(&ep->fwds, f, entry);
	ep->nfwds++;
	if (f->agent != NULL) {
		evhttp_connection_set_closecb(f->agent, fwd_agent_gone, f);
		/*
		 * The agent waits as long as the provider may be silent:
		 * its connection's own timeout (the endpoint's, for requests
		 * that trickle in) once cut a live stream at 120 s of the
		 * provider's thinking, as "the agent's connection closed".
		 * An agent that reads nothing is fwd_sweep's.  serve.c puts
		 * the endpoint's back when the answer is out.
		 */
		evhttp_connection_set_timeout(f->agent, f->idle + gw->timeout);
	}
	if (evhttp_make_request(up, f->upreq, evhttp_request_get_command(req),
	    uri) == -1) {
		/* Not sent: the agent gets a 502 from fwd_finish. */
		fwd_unwatch(f);
		f->upreq = NULL;
		f->error = 502;
		fwd_cut(f, GW_UPSTREAM_ERROR);
	}
	f->prov = NULL;		/* a reload may free it */
	return (0);
 fail:
	log_warnx("%s: %s: cannot start the forward: out of memory",
	    f->u.id, f->u.provider);
	fwd_unwatch(f);
	if (f->upreq != NULL)
		evhttp_request_free(f->upreq);
	evhttp_connection_free(up);
	free(f);
	return (-1);
}

/*
 * Never fails, whatever bytes msg holds (proto_error_body escapes
 * them): an answer the agent's bytes could stop would stop every
 * tenant's.  Out of memory, a fixed body, or none.  The body is in the
 * provider kind's shape.  A spent budget says so as no rate limit:
 * the official SDKs retry 408, 409, 429 and 5xx unless the answer says
 * "x-should-retry: false" (anthropic-sdk-typescript and openai-node,
 * src/client.ts, shouldRetry), Gemini CLI 429 and 5xx (packages/core/
 * src/utils/retry.ts), Codex CLI 429 and 5xx: with 429 Claude Code
 * retried 10 times over 3.5 minutes of a held sandbox.  Budget
 * refusals are 403 (the caller's status) with that header.
 */
void
fwd_answer_error(struct evhttp_request *req, int kind, int code,
    uint32_t outcome, const char *msg, int close)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*b;
	const char		*body;
	char			*s;

	s = proto_error_body(kind, code, outcome, msg);
	body = s != NULL ? s : PROTO_ERROR_FALLBACK;
	if ((b = evbuffer_new()) != NULL &&
	    evbuffer_add(b, body, strlen(body)) == -1) {
		evbuffer_free(b);
		b = NULL;
	}
	free(s);
	evhttp_remove_header(h, "Content-Type");
	evhttp_add_header(h, "Content-Type", "application/json");
	if (outcome == GW_REFUSED_BUDGET || outcome == GW_CUT_BUDGET)
		evhttp_add_header(h, "x-should-retry", "false");
	if (close || b == NULL)
		evhttp_add_header(h, "Connection", "close");
	evhttp_send_reply(req, code, NULL, b);
	if (b != NULL)
		evbuffer_free(b);
}
