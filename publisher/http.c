/*
 * A small synchronous HTTPS client for the forge API.  Each request
 * opens a fresh connection (net_connect: every address of the name, in
 * order), runs TLS with OpenSSL on it and one HTTP/1.1 exchange with
 * "Connection: close", so that the caller (one publication at a time)
 * reads as straight-line code.  The server certificate is checked
 * against the configured CA file only, and its name against the URL's
 * host.  Every wait is bounded by the request's timeout and by the
 * deadline the caller set.
 *
 * The answer is the forge's, not ours: http_parse() takes it strictly
 * (status line, header syntax, one framing, bounded sizes, chunk sizes
 * checked before use, a body delimited by the close only after a TLS
 * close_notify) and refuses anything else.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "publisher.h"
#include "util.h"

#define HTTP_HEAD_MAX		(64 * 1024)
#define HTTP_BODY_MAX		(4 * 1024 * 1024)
#define HTTP_CHUNK_LINE_MAX	1024	/* size, extensions, CRLF */
#define HTTP_READ		16384
#define HTTP_USER_AGENT		"factory-publisher"

struct http_conn {
	SSL_CTX		*ctx;
	char		 host[256];
	int		 port;
	int		 is_ip;
	char		 prefix[256];	/* "" or "/api/v3" */
	int		 timeout;	/* seconds per request */
	int64_t		 deadline;	/* net_now() ms, 0: none */
};

static int	 http_parse_url(struct http_conn *, const char *, char *,
		    size_t);
static SSL	*http_ssl(struct http_conn *, char *, size_t);
static int	 http_tls_wait(SSL *, int, int, int64_t);
static int	 http_tls_fail(struct http_conn *, SSL *, int, const char *,
		    char *, size_t);
static int	 http_exchange(struct http_conn *, int, const char *, size_t,
		    struct http_resp *, int64_t, char *, size_t);
static char	*http_build(struct http_conn *, const char *, const char *,
		    const char *, const char *, size_t *);
static long	 http_num(const char *, size_t, int);
static int	 http_chunks(const char *, size_t, char *, size_t *, char *,
		    size_t);
static int	 http_copy_printable(const char *, size_t, char *, size_t);
static int	 http_link_next(const char *, size_t, char *, size_t);

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
		return (errfmt(err, errlen, "%s: not an https URL", url));
	p = url + 8;
	path = strchr(p, '/');
	if (path == NULL)
		path = p + strlen(p);
	if (memchr(p, '@', path - p) != NULL || strpbrk(url, "?#") != NULL)
		return (errfmt(err, errlen, "%s: user info, query or "
		    "fragment in the URL", url));
	if (*p == '[')
		return (errfmt(err, errlen, "%s: IPv6 literals are not "
		    "supported: use a name", url));
	if ((hostend = memchr(p, ':', path - p)) != NULL) {
		errno = 0;
		port = strtol(hostend + 1, &end, 10);
		if (end != path || hostend + 1 == end || errno != 0 ||
		    port < 1 || port > 65535)
			return (errfmt(err, errlen, "%s: bad port", url));
	} else
		hostend = path;
	hlen = hostend - p;
	if (hlen == 0 || hlen >= sizeof(hc->host))
		return (errfmt(err, errlen, "%s: bad host", url));
	memcpy(hc->host, p, hlen);
	hc->host[hlen] = '\0';
	hc->port = port;
	if (strlcpy(hc->prefix, path, sizeof(hc->prefix)) >=
	    sizeof(hc->prefix))
		return (errfmt(err, errlen, "%s: path too long", url));
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
		errfmt(err, errlen, "out of memory");
		return (NULL);
	}
	hc->timeout = timeout > 0 ? timeout : 30;
	if (http_parse_url(hc, url, err, errlen) == -1)
		goto fail;
	hc->is_ip = inet_pton(AF_INET, hc->host, &addr) == 1;
	if ((hc->ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(hc->ctx, TLS1_2_VERSION) != 1) {
		errfmt(err, errlen, "TLS context: %s",
		    ERR_reason_error_string(ERR_get_error()));
		goto fail;
	}
	/* Only the configured CA: never the library's default paths. */
	if (SSL_CTX_load_verify_locations(hc->ctx, ca, NULL) != 1) {
		errfmt(err, errlen, "CA file %s: %s", ca,
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
	free(hc);
}

void
http_deadline(struct http_conn *hc, int64_t deadline)
{
	hc->deadline = deadline;
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

static SSL *
http_ssl(struct http_conn *hc, char *err, size_t errlen)
{
	SSL		*ssl;
	X509_VERIFY_PARAM *vp;

	if ((ssl = SSL_new(hc->ctx)) == NULL) {
		errfmt(err, errlen, "SSL_new failed");
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
	errfmt(err, errlen, "TLS: cannot set the host name %s", hc->host);
	SSL_free(ssl);
	return (NULL);
}

/* After SSL_ERROR_WANT_*: 1 go on, 0 the deadline passed, -1 error. */
static int
http_tls_wait(SSL *ssl, int fd, int rc, int64_t until)
{
	switch (SSL_get_error(ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return (net_wait(fd, POLLIN, until));
	case SSL_ERROR_WANT_WRITE:
		return (net_wait(fd, POLLOUT, until));
	default:
		return (-1);
	}
}

/*
 * Why a TLS call failed: HTTP_FINAL for a certificate the CA does not
 * vouch for (trying again cannot mend it), HTTP_TRANSIENT otherwise.
 */
static int
http_tls_fail(struct http_conn *hc, SSL *ssl, int timedout,
    const char *what, char *err, size_t errlen)
{
	long		 v;
	unsigned long	 e;

	if ((v = SSL_get_verify_result(ssl)) != X509_V_OK) {
		errfmt(err, errlen, "%s:%d: TLS: certificate: %s", hc->host,
		    hc->port, X509_verify_cert_error_string(v));
		ERR_clear_error();
		return (HTTP_FINAL);
	}
	if (timedout)
		errfmt(err, errlen, "%s:%d: %s: timed out after %d s",
		    hc->host, hc->port, what, hc->timeout);
	else if ((e = ERR_peek_last_error()) != 0)
		errfmt(err, errlen, "%s:%d: %s: TLS: %s", hc->host, hc->port,
		    what, ERR_reason_error_string(e));
	else if (errno != 0)
		errfmt(err, errlen, "%s:%d: %s: %s", hc->host, hc->port,
		    what, strerror(errno));
	else
		errfmt(err, errlen, "%s:%d: %s: connection closed",
		    hc->host, hc->port, what);
	ERR_clear_error();
	return (HTTP_TRANSIENT);
}

/*
 * The request's bytes, malloc'd (the caller wipes them: they hold the
 * Authorization value).
 */
static char *
http_build(struct http_conn *hc, const char *method, const char *uri,
    const char *auth, const char *body, size_t *lenp)
{
	char	*s, host[300], clen[64];
	int	 n;

	if (hc->port == 443)
		strlcpy(host, hc->host, sizeof(host));
	else
		snprintf(host, sizeof(host), "%s:%d", hc->host, hc->port);
	clen[0] = '\0';
	if (body != NULL)
		snprintf(clen, sizeof(clen), "Content-Type: application/json"
		    "\r\nContent-Length: %zu\r\n", strlen(body));
	n = asprintf(&s, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n"
	    "Accept: application/vnd.github+json\r\n"
	    "X-GitHub-Api-Version: 2022-11-28\r\nConnection: close\r\n"
	    "%s%s%s%s\r\n%s", method, uri, host, HTTP_USER_AGENT,
	    auth != NULL ? "Authorization: " : "", auth != NULL ? auth : "",
	    auth != NULL ? "\r\n" : "", clen, body != NULL ? body : "");
	if (n == -1)
		return (NULL);
	*lenp = n;
	return (s);
}

/* One request on a connected socket: TLS, write, read, parse. */
static int
http_exchange(struct http_conn *hc, int fd, const char *req, size_t reqlen,
    struct http_resp *resp, int64_t until, char *err, size_t errlen)
{
	SSL	*ssl;
	char	*buf = NULL;
	size_t	 len = 0, cap = 0, off = 0;
	int	 rc, w, rv = HTTP_TRANSIENT, eof = 0;

	if ((ssl = http_ssl(hc, err, errlen)) == NULL)
		return (HTTP_FINAL);
	if (SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		return (errfmt(err, errlen, "TLS: SSL_set_fd failed"));
	}
	errno = 0;
	while ((rc = SSL_connect(ssl)) != 1)
		if ((w = http_tls_wait(ssl, fd, rc, until)) != 1) {
			rv = http_tls_fail(hc, ssl, w == 0, "TLS handshake",
			    err, errlen);
			goto done;
		}
	while (off < reqlen) {
		errno = 0;
		if ((rc = SSL_write(ssl, req + off, reqlen - off)) > 0) {
			off += rc;
			continue;
		}
		if ((w = http_tls_wait(ssl, fd, rc, until)) != 1) {
			rv = http_tls_fail(hc, ssl, w == 0, "sending", err,
			    errlen);
			goto done;
		}
	}
	for (;;) {
		if ((rc = http_parse(buf, len, eof, resp, err, errlen)) == 1) {
			rv = 0;
			break;
		}
		if (rc == -1 || eof)
			goto done;	/* err says why: transient */
		if (cap - len < HTTP_READ) {
			if (cap >= HTTP_HEAD_MAX + 2 * HTTP_BODY_MAX) {
				errfmt(err, errlen, "%s:%d: answer too "
				    "large", hc->host, hc->port);
				goto done;
			}
			if (pub_grow(&buf, &cap, cap < 4 * HTTP_READ ?
			    4 * HTTP_READ : 2 * cap) == -1) {
				errfmt(err, errlen, "out of memory");
				goto done;
			}
		}
		errno = 0;
		if ((rc = SSL_read(ssl, buf + len, cap - len)) > 0) {
			len += rc;
			continue;
		}
		/* The peer ended TLS: whatever came is all it sent. */
		if (SSL_get_error(ssl, rc) == SSL_ERROR_ZERO_RETURN) {
			eof = HTTP_EOF_CLEAN;
			continue;
		}
		/*
		 * The connection ended without close_notify (OpenSSL 3
		 * says "unexpected eof"): anyone on the path can do that,
		 * so only an answer whose framing says it is whole may end
		 * here; http_parse() knows which.
		 */
		if ((SSL_get_error(ssl, rc) == SSL_ERROR_SYSCALL &&
		    ERR_peek_error() == 0 && errno == 0) ||
		    ERR_GET_REASON(ERR_peek_error()) ==
		    SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			ERR_clear_error();
			eof = HTTP_EOF_UNCLEAN;
			continue;
		}
		if ((w = http_tls_wait(ssl, fd, rc, until)) != 1) {
			rv = http_tls_fail(hc, ssl, w == 0, "reading the "
			    "answer", err, errlen);
			goto done;
		}
	}
 done:
	if (buf != NULL) {
		explicit_bzero(buf, cap);
		free(buf);
	}
	SSL_free(ssl);
	return (rv);
}

int
http_request(struct http_conn *hc, const char *method, const char *path,
    const char *auth, const char *body, struct http_resp *resp, char *err,
    size_t errlen)
{
	char		 uri[1024], port[8], *req;
	size_t		 reqlen;
	int64_t		 until, left;
	int		 fd, rv;

	memset(resp, 0, sizeof(*resp));
	if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0 &&
	    strcmp(method, "PATCH") != 0 && strcmp(method, "DELETE") != 0)
		return (errfmt(err, errlen, "HTTP method %s", method));
	if ((size_t)snprintf(uri, sizeof(uri), "%s%s", hc->prefix, path) >=
	    sizeof(uri))
		return (errfmt(err, errlen, "URL path too long"));
	if (strpbrk(uri, " \r\n") != NULL || (auth != NULL &&
	    strpbrk(auth, "\r\n") != NULL))
		return (errfmt(err, errlen, "CR, LF or space in the "
		    "request line or a header"));
	until = net_now() + (int64_t)hc->timeout * 1000;
	if (hc->deadline != 0 && hc->deadline < until)
		until = hc->deadline;
	if ((left = until - net_now()) <= 0) {
		errfmt(err, errlen, "%s:%d: no time left", hc->host,
		    hc->port);
		return (HTTP_TRANSIENT);
	}
	if ((req = http_build(hc, method, uri, auth, body, &reqlen)) == NULL)
		return (errfmt(err, errlen, "out of memory"));
	snprintf(port, sizeof(port), "%d", hc->port);
	ERR_clear_error();
	if ((fd = net_connect(hc->host, port, (int)left, err, errlen)) == -1)
		rv = HTTP_TRANSIENT;
	else {
		rv = http_exchange(hc, fd, req, reqlen, resp, until, err,
		    errlen);
		close(fd);
	}
	explicit_bzero(req, reqlen);
	free(req);
	if (rv != 0)
		http_resp_free(resp);
	return (rv);
}

int
http_path_of(struct http_conn *hc, const char *url, char *path,
    size_t pathlen)
{
	char	 origin[300];
	size_t	 n, plen = strlen(hc->prefix);

	if (hc->port == 443)
		snprintf(origin, sizeof(origin), "https://%s", hc->host);
	else
		snprintf(origin, sizeof(origin), "https://%s:%d", hc->host,
		    hc->port);
	n = strlen(origin);
	if (strncasecmp(url, origin, n) != 0 || strncmp(url + n, hc->prefix,
	    plen) != 0 || url[n + plen] != '/')
		return (-1);
	url += n + plen;
	if (strpbrk(url, " \t\r\n#") != NULL || strlcpy(path, url, pathlen) >=
	    pathlen)
		return (-1);
	for (; *url != '\0'; url++)
		if ((unsigned char)*url < 0x21 || (unsigned char)*url > 0x7e)
			return (-1);
	return (0);
}

/* buf grows to at least want bytes; the old block is wiped. */
int
pub_grow(char **buf, size_t *cap, size_t want)
{
	char	*n;

	if (want <= *cap)
		return (0);
	if ((n = malloc(want)) == NULL)
		return (-1);
	if (*buf != NULL) {
		memcpy(n, *buf, *cap);
		explicit_bzero(*buf, *cap);
		free(*buf);
	}
	*buf = n;
	*cap = want;
	return (0);
}

/* A header's value: a non-negative decimal, or -1 (hex: a chunk). */
static long
http_num(const char *s, size_t len, int hex)
{
	long	 n = 0;
	size_t	 i;
	int	 d;

	if (len == 0 || len > (hex ? 8 : 18))
		return (-1);
	for (i = 0; i < len; i++) {
		if (isdigit((unsigned char)s[i]))
			d = s[i] - '0';
		else if (hex && isxdigit((unsigned char)s[i]))
			d = tolower((unsigned char)s[i]) - 'a' + 10;
		else
			return (-1);
		n = n * (hex ? 16 : 10) + d;
	}
	return (n);
}

/*
 * A header's value into dst if it fits and is printable ASCII without
 * controls: 0, else -1 with dst "".
 */
static int
http_copy_printable(const char *v, size_t vlen, char *dst, size_t dstlen)
{
	size_t	 i;

	dst[0] = '\0';
	if (vlen >= dstlen)
		return (-1);
	for (i = 0; i < vlen; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return (-1);
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return (0);
}

/*
 * The rel="next" URL of a Link header (RFC 8288: "<URL>; rel=next" or
 * rel="a next", entries separated by commas), as GitHub paginates:
 * 1 found (in out), 0 none, -1 malformed or too long.
 */
static int
http_link_next(const char *v, size_t vlen, char *out, size_t outlen)
{
	const char	*p = v, *end = v + vlen, *u, *ue, *q;
	const char	*rel;
	size_t		 n;
	int		 inq;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
			p++;
		if (p == end)
			return (0);
		if (*p != '<' || (ue = memchr(p, '>', end - p)) == NULL)
			return (-1);
		u = p + 1;
		/* The parameters run to the next comma outside quotes. */
		for (q = ue + 1, inq = 0; q < end && (inq || *q != ','); q++)
			if (*q == '"')
				inq = !inq;
		for (rel = ue + 1; rel + 4 <= q; rel++) {
			if (strncasecmp(rel, "rel=", 4) != 0)
				continue;
			rel += 4;
			if (rel < q && *rel == '"')
				rel++;
			/* A space-separated list of relation types. */
			while (rel < q && *rel != '"' && *rel != ';') {
				for (n = 0; rel + n < q && rel[n] != ' ' &&
				    rel[n] != '"' && rel[n] != '\t' &&
				    rel[n] != ';'; n++)
					;
				if (n == 4 &&
				    strncasecmp(rel, "next", 4) == 0) {
					if ((size_t)(ue - u) >= outlen)
						return (-1);
					return (http_copy_printable(u, ue - u,
					    out, outlen) == 0 ? 1 : -1);
				}
				rel += n;
				while (rel < q && (*rel == ' ' || *rel == '\t'))
					rel++;
			}
			break;
		}
		p = q;
	}
}

/*
 * A chunked body in buf[0..len): 1 complete (out, if not NULL, gets
 * the data; *outlen its length), 0 more is needed, -1 malformed.
 */
static int
http_chunks(const char *buf, size_t len, char *out, size_t *outlen,
    char *err, size_t errlen)
{
	const char	*p = buf, *end = buf + len, *eol, *semi;
	long		 n;
	size_t		 total = 0;

	for (;;) {
		if ((eol = memmem(p, end - p, "\r\n", 2)) == NULL)
			return ((size_t)(end - p) > HTTP_CHUNK_LINE_MAX ?
			    errfmt(err, errlen, "chunk size line too "
			    "long") : 0);
		if (eol - p > HTTP_CHUNK_LINE_MAX)
			return (errfmt(err, errlen, "chunk size line too "
			    "long"));
		semi = memchr(p, ';', eol - p);
		n = http_num(p, (semi != NULL ? semi : eol) - p, 1);
		if (n < 0)
			return (errfmt(err, errlen, "malformed chunk size "
			    "%.*s", (int)((eol - p) > 24 ? 24 : eol - p),
			    p));
		if ((size_t)n > HTTP_BODY_MAX - total)
			return (errfmt(err, errlen, "chunked body larger "
			    "than %d bytes", HTTP_BODY_MAX));
		p = eol + 2;
		if (n == 0)
			break;
		if ((size_t)(end - p) < (size_t)n + 2)
			return (0);
		if (p[n] != '\r' || p[n + 1] != '\n')
			return (errfmt(err, errlen, "chunk of %ld bytes not "
			    "followed by CRLF", n));
		if (out != NULL)
			memcpy(out + total, p, n);
		total += n;
		p += n + 2;
	}
	/* Trailers, then the empty line. */
	for (;;) {
		if ((eol = memmem(p, end - p, "\r\n", 2)) == NULL)
			return ((size_t)(end - p) > HTTP_CHUNK_LINE_MAX ?
			    errfmt(err, errlen, "chunk trailer too long") :
			    0);
		if (eol == p)
			break;
		p = eol + 2;
	}
	*outlen = total;
	return (1);
}

/*
 * The status line, headers and body of an answer in buf[0..len); eof:
 * the connection ended there.  1 complete (resp filled, its body
 * malloc'd), 0 more is needed, -1 malformed (err says why).
 */
int
http_parse(const char *buf, size_t len, int eof, struct http_resp *r,
    char *err, size_t errlen)
{
	const char	*hend, *p, *eol, *colon, *v, *body;
	size_t		 hlen, vlen, blen;
	long		 clen = -1, n;
	int		 chunked = 0, status, rc;

	memset(r, 0, sizeof(*r));
	r->retry_after = r->ratelimit_remaining = r->ratelimit_reset = -1;
	if (buf == NULL || (hend = memmem(buf, len, "\r\n\r\n", 4)) ==
	    NULL) {
		if (len > HTTP_HEAD_MAX)
			return (errfmt(err, errlen, "answer headers over %d "
			    "bytes", HTTP_HEAD_MAX));
		return (eof ? errfmt(err, errlen, "connection closed "
		    "%s", len == 0 ? "without an answer" : "in the answer's "
		    "headers") : 0);
	}
	hlen = hend - buf + 2;		/* through the last header's CRLF */
	if (hlen > HTTP_HEAD_MAX)
		return (errfmt(err, errlen, "answer headers over %d bytes",
		    HTTP_HEAD_MAX));
	if (hlen < 14 || memcmp(buf, "HTTP/1.", 7) != 0 ||
	    (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
	    (status = (int)http_num(buf + 9, 3, 0)) < 100 ||
	    (buf[12] != ' ' && buf[12] != '\r'))
		return (errfmt(err, errlen, "not an HTTP/1.x status line"));
	if (status < 200)
		return (errfmt(err, errlen, "unexpected status %d", status));
	r->status = status;
	p = memmem(buf, hlen, "\r\n", 2) + 2;
	for (; p < buf + hlen; p = eol + 2) {
		eol = memmem(p, buf + hlen - p, "\r\n", 2);
		if ((colon = memchr(p, ':', eol - p)) == NULL || colon == p ||
		    memchr(p, ' ', colon - p) != NULL ||
		    memchr(p, '\t', colon - p) != NULL)
			return (errfmt(err, errlen, "malformed header line"));
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		for (vlen = eol - v; vlen > 0 && (v[vlen - 1] == ' ' ||
		    v[vlen - 1] == '\t'); vlen--)
			;
		if (memchr(p, '\0', eol - p) != NULL)
			return (errfmt(err, errlen, "NUL in a header"));
#define HDR(name)	((size_t)(colon - p) == strlen(name) && \
			    strncasecmp(p, name, colon - p) == 0)
		if (HDR("Content-Length")) {
			if ((n = http_num(v, vlen, 0)) < 0 ||
			    (clen != -1 && n != clen))
				return (errfmt(err, errlen, "bad or "
				    "conflicting Content-Length"));
			clen = n;
		} else if (HDR("Transfer-Encoding")) {
			if (vlen != 7 || strncasecmp(v, "chunked", 7) != 0 ||
			    chunked)
				return (errfmt(err, errlen, "transfer "
				    "encoding %.*s not supported",
				    (int)(vlen > 32 ? 32 : vlen), v));
			chunked = 1;
		} else if (HDR("Retry-After"))
			r->retry_after = http_num(v, vlen, 0);
		else if (HDR("X-RateLimit-Remaining"))
			r->ratelimit_remaining = http_num(v, vlen, 0);
		else if (HDR("X-RateLimit-Reset"))
			r->ratelimit_reset = http_num(v, vlen, 0);
		else if (HDR("Location"))
			http_copy_printable(v, vlen, r->location,
			    sizeof(r->location));
		else if (HDR("X-Accepted-GitHub-Permissions"))
			http_copy_printable(v, vlen, r->accepted,
			    sizeof(r->accepted));
		else if (HDR("Link")) {
			/* One next page: two Link headers saying two is
			 * one too many. */
			if (r->link++ > 0 || http_link_next(v, vlen, r->next,
			    sizeof(r->next)) == -1) {
				r->next[0] = '\0';
				r->next_bad = 1;
			}
		}
#undef HDR
	}
	if (chunked && clen != -1)
		return (errfmt(err, errlen, "both Content-Length and "
		    "chunked"));
	body = hend + 4;
	blen = buf + len - body;
	if (status == 204 || status == 304) {
		/* No body whatever the headers say: nothing to copy either. */
		blen = 0;
		chunked = 0;
	} else if (chunked) {
		if ((rc = http_chunks(body, blen, NULL, &blen, err,
		    errlen)) != 1)
			return (rc == 0 && eof ? errfmt(err, errlen,
			    "connection closed in a chunked body") : rc);
	} else if (clen != -1) {
		if (clen > HTTP_BODY_MAX)
			return (errfmt(err, errlen, "body of %ld bytes, over "
			    "%d", clen, HTTP_BODY_MAX));
		if (blen < (size_t)clen)
			return (eof ? errfmt(err, errlen, "connection closed "
			    "after %zu of %ld bytes", blen, clen) : 0);
		blen = clen;
	} else if (blen > HTTP_BODY_MAX)
		return (errfmt(err, errlen, "body over %d bytes",
		    HTTP_BODY_MAX));
	else if (!eof)
		return (0);	/* the body ends with the connection */
	else if (eof != HTTP_EOF_CLEAN)
		/* Only close_notify tells its end from an attacker's cut. */
		return (errfmt(err, errlen, "connection closed without TLS "
		    "close_notify after %zu bytes of a body that only the "
		    "close delimits: it may be cut short", blen));
	if ((r->body = malloc(blen + 1)) == NULL)
		return (errfmt(err, errlen, "out of memory"));
	if (chunked)
		http_chunks(body, buf + len - body, r->body, &blen, err,
		    errlen);
	else
		memcpy(r->body, body, blen);
	r->body[blen] = '\0';
	r->len = blen;
	return (1);
}
