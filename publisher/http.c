/*
 * A small synchronous HTTPS client for the forge API: libevent's evhttp
 * over bufferevent_openssl.  Each request opens a fresh connection on
 * a private event base and runs it to completion, so that the caller
 * (one publication at a time) reads as straight-line code.  The server
 * certificate is checked against the configured CA file only, and its
 * name against the URL's host.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "publisher.h"

#define HTTP_BODY_MAX		(4 * 1024 * 1024)
#define HTTP_USER_AGENT		"factory-publisher"

struct http_conn {
	struct event_base	*base;
	SSL_CTX			*ctx;
	char			 host[256];
	int			 port;
	int			 is_ip;
	char			 prefix[256];	/* "" or "/api/v3" */
	int			 timeout;
};

/* One request in flight. */
struct http_call {
	struct http_conn	*hc;
	SSL			*ssl;
	struct http_resp	*resp;
	int			 done;
	int			 failed;
	int			 have_reqerr;
	enum evhttp_request_error reqerr;
};

static int	 http_parse_url(struct http_conn *, const char *, char *,
		    size_t);
static long	 http_header_long(struct evkeyvalq *, const char *);
static void	 http_wipe_auth(struct evhttp_request *);
static void	 http_done(struct evhttp_request *, void *);
static void	 http_error(enum evhttp_request_error, void *);
static SSL	*http_ssl(struct http_conn *, char *, size_t);
static void	 http_why(struct http_call *, char *, size_t);

/* https://host[:port][/prefix], nothing else: no user info, query. */
static int
http_parse_url(struct http_conn *hc, const char *url, char *err,
    size_t errlen)
{
	const char	*p, *hostend, *path;
	char		*end;
	long		 port = 443;
	size_t		 hlen;

	if (strncmp(url, "https://", 8) != 0)
		return (pub_fail(err, errlen, "%s: not an https URL", url));
	p = url + 8;
	path = strchr(p, '/');
	if (path == NULL)
		path = p + strlen(p);
	if (memchr(p, '@', path - p) != NULL || strpbrk(url, "?#") != NULL)
		return (pub_fail(err, errlen, "%s: user info, query or "
		    "fragment in the URL", url));
	if (*p == '[')
		return (pub_fail(err, errlen, "%s: IPv6 literals are not "
		    "supported: use a name", url));
	if ((hostend = memchr(p, ':', path - p)) != NULL) {
		errno = 0;
		port = strtol(hostend + 1, &end, 10);
		if (end != path || hostend + 1 == end || errno != 0 ||
		    port < 1 || port > 65535)
			return (pub_fail(err, errlen, "%s: bad port", url));
	} else
		hostend = path;
	hlen = hostend - p;
	if (hlen == 0 || hlen >= sizeof(hc->host))
		return (pub_fail(err, errlen, "%s: bad host", url));
	memcpy(hc->host, p, hlen);
	hc->host[hlen] = '\0';
	hc->port = port;
	if (strlcpy(hc->prefix, path, sizeof(hc->prefix)) >=
	    sizeof(hc->prefix))
		return (pub_fail(err, errlen, "%s: path too long", url));
	/* The prefix is joined with paths that start with '/'. */
	hlen = strlen(hc->prefix);
	if (hlen > 0 && hc->prefix[hlen - 1] == '/')
		hc->prefix[hlen - 1] = '\0';
	return (0);
}

struct http_conn *
http_open(const char *url, const char *ca, int timeout, char *err,
    size_t errlen)
{
	struct http_conn	*hc;
	struct in_addr		 addr;

	if ((hc = calloc(1, sizeof(*hc))) == NULL) {
		pub_fail(err, errlen, "out of memory");
		return (NULL);
	}
	hc->timeout = timeout > 0 ? timeout : 30;
	if (http_parse_url(hc, url, err, errlen) == -1)
		goto fail;
	hc->is_ip = inet_pton(AF_INET, hc->host, &addr) == 1;
	if ((hc->base = event_base_new()) == NULL) {
		pub_fail(err, errlen, "event_base_new failed");
		goto fail;
	}
	if ((hc->ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(hc->ctx, TLS1_2_VERSION) != 1) {
		pub_fail(err, errlen, "TLS context: %s",
		    ERR_reason_error_string(ERR_get_error()));
		goto fail;
	}
	/* Only the configured CA: never the library's default paths. */
	if (SSL_CTX_load_verify_locations(hc->ctx, ca, NULL) != 1) {
		pub_fail(err, errlen, "CA file %s: %s", ca,
		    ERR_reason_error_string(ERR_get_error()));
		goto fail;
	}
	SSL_CTX_set_verify(hc->ctx, SSL_VERIFY_PEER, NULL);
	return (hc);
 fail:
	http_close(hc);
	return (NULL);
}

void
http_close(struct http_conn *hc)
{
	if (hc == NULL)
		return;
	if (hc->ctx != NULL)
		SSL_CTX_free(hc->ctx);
	if (hc->base != NULL)
		event_base_free(hc->base);
	free(hc);
}

void
http_resp_free(struct http_resp *r)
{
	if (r->body != NULL) {
		/* It may have held a token. */
		explicit_bzero(r->body, r->len);
		free(r->body);
	}
	memset(r, 0, sizeof(*r));
}

/* A non-negative integer header, or -1. */
static long
http_header_long(struct evkeyvalq *h, const char *name)
{
	const char	*v;
	char		*end;
	long		 n;

	if ((v = evhttp_find_header(h, name)) == NULL)
		return (-1);
	while (isspace((unsigned char)*v))
		v++;
	errno = 0;
	n = strtol(v, &end, 10);
	if (end == v || errno != 0 || n < 0)
		return (-1);
	return (n);
}

/* libevent keeps its own copy of each header until the request dies. */
static void
http_wipe_auth(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evkeyval		*kv;

	if (h == NULL)
		return;
	TAILQ_FOREACH(kv, h, next)
		if (strcasecmp(kv->key, "Authorization") == 0)
			explicit_bzero(kv->value, strlen(kv->value));
}

static void
http_error(enum evhttp_request_error e, void *arg)
{
	struct http_call	*call = arg;

	call->reqerr = e;
	call->have_reqerr = 1;
	call->failed = 1;
}

static void
http_done(struct evhttp_request *req, void *arg)
{
	struct http_call	*call = arg;
	struct http_resp	*r = call->resp;
	struct evbuffer		*in;
	struct evkeyvalq	*h;
	size_t			 len;

	call->done = 1;
	event_base_loopbreak(call->hc->base);
	if (req == NULL || evhttp_request_get_response_code(req) == 0) {
		call->failed = 1;
		return;
	}
	http_wipe_auth(req);
	r->status = evhttp_request_get_response_code(req);
	h = evhttp_request_get_input_headers(req);
	r->retry_after = http_header_long(h, "Retry-After");
	r->ratelimit_remaining = http_header_long(h, "X-RateLimit-Remaining");
	r->ratelimit_reset = http_header_long(h, "X-RateLimit-Reset");
	in = evhttp_request_get_input_buffer(req);
	len = evbuffer_get_length(in);
	if ((r->body = malloc(len + 1)) == NULL) {
		call->failed = 1;
		return;
	}
	evbuffer_remove(in, r->body, len);
	r->body[len] = '\0';
	r->len = len;
}

static SSL *
http_ssl(struct http_conn *hc, char *err, size_t errlen)
{
	SSL		*ssl;
	X509_VERIFY_PARAM *vp;

	if ((ssl = SSL_new(hc->ctx)) == NULL) {
		pub_fail(err, errlen, "SSL_new failed");
		return (NULL);
	}
	vp = SSL_get0_param(ssl);
	X509_VERIFY_PARAM_set_hostflags(vp,
	    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (hc->is_ip) {
		if (X509_VERIFY_PARAM_set1_ip_asc(vp, hc->host) != 1)
			goto fail;
	} else if (SSL_set_tlsext_host_name(ssl, hc->host) != 1 ||
	    SSL_set1_host(ssl, hc->host) != 1)
		goto fail;
	return (ssl);
 fail:
	pub_fail(err, errlen, "TLS: cannot set the host name %s", hc->host);
	SSL_free(ssl);
	return (NULL);
}

/* Why a request failed, as precisely as the layers below tell. */
static void
http_why(struct http_call *call, char *err, size_t errlen)
{
	struct http_conn	*hc = call->hc;
	long			 v;
	unsigned long		 e;

	if (call->ssl != NULL &&
	    (v = SSL_get_verify_result(call->ssl)) != X509_V_OK) {
		pub_fail(err, errlen, "%s:%d: TLS: certificate: %s", hc->host,
		    hc->port, X509_verify_cert_error_string(v));
		return;
	}
	if ((e = ERR_peek_last_error()) != 0) {
		pub_fail(err, errlen, "%s:%d: TLS: %s", hc->host, hc->port,
		    ERR_reason_error_string(e));
		ERR_clear_error();
		return;
	}
	if (!call->have_reqerr) {
		pub_fail(err, errlen, "%s:%d: cannot connect", hc->host,
		    hc->port);
		return;
	}
	switch (call->reqerr) {
	case EVREQ_HTTP_TIMEOUT:
		pub_fail(err, errlen, "%s:%d: timed out after %d s", hc->host,
		    hc->port, hc->timeout);
		break;
	case EVREQ_HTTP_EOF:
		pub_fail(err, errlen, "%s:%d: connection closed", hc->host,
		    hc->port);
		break;
	case EVREQ_HTTP_INVALID_HEADER:
	case EVREQ_HTTP_DATA_TOO_LONG:
		pub_fail(err, errlen, "%s:%d: bad or oversized response",
		    hc->host, hc->port);
		break;
	default:
		pub_fail(err, errlen, "%s:%d: cannot connect", hc->host,
		    hc->port);
		break;
	}
}

int
http_request(struct http_conn *hc, const char *method, const char *path,
    const char *auth, const char *body, struct http_resp *resp, char *err,
    size_t errlen)
{
	struct http_call	 call;
	struct bufferevent	*bev = NULL;
	struct evhttp_connection *conn = NULL;
	struct evhttp_request	*req;
	struct evkeyvalq	*h;
	enum evhttp_cmd_type	 cmd;
	char			 uri[1024], len[32], hosthdr[300];
	int			 rv = -1;

	memset(resp, 0, sizeof(*resp));
	memset(&call, 0, sizeof(call));
	call.hc = hc;
	call.resp = resp;
	if (strcmp(method, "GET") == 0)
		cmd = EVHTTP_REQ_GET;
	else if (strcmp(method, "POST") == 0)
		cmd = EVHTTP_REQ_POST;
	else if (strcmp(method, "DELETE") == 0)
		cmd = EVHTTP_REQ_DELETE;
	else
		return (pub_fail(err, errlen, "HTTP method %s", method));
	if ((size_t)snprintf(uri, sizeof(uri), "%s%s", hc->prefix, path) >=
	    sizeof(uri))
		return (pub_fail(err, errlen, "URL path too long"));
	ERR_clear_error();
	if ((call.ssl = http_ssl(hc, err, errlen)) == NULL)
		return (-1);
	/* The bufferevent owns the SSL (and frees it) from here on. */
	if ((bev = bufferevent_openssl_socket_new(hc->base, -1, call.ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		SSL_free(call.ssl);
		return (pub_fail(err, errlen, "TLS bufferevent failed"));
	}
	if ((conn = evhttp_connection_base_bufferevent_new(hc->base, NULL,
	    bev, hc->host, hc->port)) == NULL) {
		bufferevent_free(bev);
		return (pub_fail(err, errlen, "evhttp connection failed"));
	}
	evhttp_connection_set_timeout(conn, hc->timeout);
	evhttp_connection_set_max_body_size(conn, HTTP_BODY_MAX);
	evhttp_connection_set_retries(conn, 0);
	if ((req = evhttp_request_new(http_done, &call)) == NULL) {
		pub_fail(err, errlen, "evhttp request failed");
		goto done;
	}
	evhttp_request_set_error_cb(req, http_error);
	h = evhttp_request_get_output_headers(req);
	snprintf(len, sizeof(len), "%zu", body != NULL ? strlen(body) : 0);
	if (hc->port == 443)
		strlcpy(hosthdr, hc->host, sizeof(hosthdr));
	else
		snprintf(hosthdr, sizeof(hosthdr), "%s:%d", hc->host,
		    hc->port);
	if (evhttp_add_header(h, "Host", hosthdr) != 0 ||
	    evhttp_add_header(h, "User-Agent", HTTP_USER_AGENT) != 0 ||
	    evhttp_add_header(h, "Accept", "application/vnd.github+json") !=
	    0 ||
	    evhttp_add_header(h, "X-GitHub-Api-Version", "2022-11-28") != 0 ||
	    evhttp_add_header(h, "Connection", "close") != 0 ||
	    (auth != NULL && evhttp_add_header(h, "Authorization", auth) !=
	    0) ||
	    (body != NULL && (evhttp_add_header(h, "Content-Type",
	    "application/json") != 0 ||
	    evhttp_add_header(h, "Content-Length", len) != 0 ||
	    evbuffer_add(evhttp_request_get_output_buffer(req), body,
	    strlen(body)) != 0))) {
		http_wipe_auth(req);
		evhttp_request_free(req);
		pub_fail(err, errlen, "evhttp: cannot build the request");
		goto done;
	}
	/* On failure evhttp_make_request frees req. */
	if (evhttp_make_request(conn, req, cmd, uri) != 0) {
		pub_fail(err, errlen, "%s %s: cannot send", method, uri);
		goto done;
	}
	/* Returns when http_done breaks the loop or nothing is pending. */
	event_base_dispatch(hc->base);
	if (!call.done || call.failed) {
		http_why(&call, err, errlen);
		http_resp_free(resp);
		goto done;
	}
	rv = 0;
 done:
	/* Frees the bufferevent and, through it, the SSL. */
	evhttp_connection_free(conn);
	return (rv);
}
