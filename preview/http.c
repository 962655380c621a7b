/*
 * The browser's request head, parsed strictly (http.h).  Strict
 * because factory-preview sits between a browser and an application
 * whose own parser we do not know: whatever the two could read
 * differently (two Hosts, both framings, a folded line, a bare LF) is
 * refused here, before any byte of it reaches the application.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "previewmsg.h"
#include "http.h"

/* A Host value we route: "<id>.<domain>:<port>", with room to spare. */
#define PH_HOSTMAX	(ATTEMPT_ID_MAX + PREVIEW_DOMAINMAX + 8)
#define PH_LENDIGITS	18	/* a Content-Length: below 10^18 */

/* RFC 9110's tchar: the bytes of a method or a field name. */
static int
ph_tchar(int c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return (1);
	return (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
ph_fail(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return (-1);
}

long
ph_head_end(const char *p, size_t len)
{
	size_t	 i, n = len < PH_HEADMAX ? len : PH_HEADMAX;

	for (i = 0; i < n; i++) {
		if (p[i] == '\0')
			return (-1);
		if (p[i] != '\n')
			continue;
		if (i == 0 || p[i - 1] != '\r')
			return (-1);
		if (i >= 3 && p[i - 2] == '\n' && p[i - 3] == '\r')
			return ((long)i + 1);
	}
	return (len >= PH_HEADMAX ? -1 : 0);
}

/*
 * The next line of the copy from *sp, its CRLF made NULs; NULL at a
 * CR without its LF, an LF without its CR, or a NUL.
 */
static char *
ph_line(char **sp, char *end)
{
	char	*s = *sp, *p;

	for (p = s; p < end; p++) {
		if (*p == '\0' || *p == '\n')
			return (NULL);
		if (*p != '\r')
			continue;
		if (p + 1 >= end || p[1] != '\n')
			return (NULL);
		p[0] = p[1] = '\0';
		*sp = p + 2;
		return (s);
	}
	return (NULL);
}

/* METHOD SP origin-form SP HTTP/1.x, nothing else. */
static int
ph_reqline(char *s, struct ph_head *h, char *err, size_t errlen)
{
	char	*p = s;

	while (ph_tchar((unsigned char)*p))
		p++;
	if (p == s || *p != ' ')
		return (ph_fail(err, errlen, "bad method"));
	*p++ = '\0';
	h->method = s;
	if (*p != '/')
		return (ph_fail(err, errlen, "target not in origin-form"));
	h->target = p;
	while (*p > 0x20 && *p < 0x7f)
		p++;
	if (*p != ' ')
		return (ph_fail(err, errlen, "bad byte in the target"));
	*p++ = '\0';
	if (strcmp(p, "HTTP/1.1") == 0)
		h->minor = 1;
	else if (strcmp(p, "HTTP/1.0") == 0)
		h->minor = 0;
	else
		return (ph_fail(err, errlen, "not HTTP/1.1 or HTTP/1.0"));
	return (0);
}

/* name ":" OWS value OWS, the value printable or tab. */
static int
ph_field(char *s, struct ph_field *f, char *err, size_t errlen)
{
	char	*p = s, *e;

	if (*s == ' ' || *s == '\t')
		return (ph_fail(err, errlen, "obsolete line folding"));
	while (ph_tchar((unsigned char)*p))
		p++;
	if (p == s || *p != ':')
		return (ph_fail(err, errlen, "bad header name"));
	*p++ = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	for (e = p; *e != '\0'; e++)
		if ((*e < 0x20 || *e >= 0x7f) && *e != '\t')
			return (ph_fail(err, errlen, "bad byte in a header"));
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	f->name = s;
	f->value = p;
	return (0);
}

/* Digits only, one header only: the length both parsers must agree on. */
static int
ph_length(struct ph_head *h, const char *v, char *err, size_t errlen)
{
	size_t	 i;

	if (h->haslength)
		return (ph_fail(err, errlen, "two Content-Length headers"));
	h->haslength = 1;
	for (i = 0; v[i] != '\0'; i++) {
		if (v[i] < '0' || v[i] > '9' || i >= PH_LENDIGITS)
			return (ph_fail(err, errlen, "bad Content-Length"));
		h->length = h->length * 10 + (uint64_t)(v[i] - '0');
	}
	if (i == 0)
		return (ph_fail(err, errlen, "bad Content-Length"));
	return (0);
}

/* The framing and routing headers, each once and unambiguous. */
static int
ph_special(struct ph_head *h, const struct ph_field *f, char *err,
    size_t errlen)
{
	if (strcasecmp(f->name, "host") == 0) {
		if (h->host != NULL)
			return (ph_fail(err, errlen, "two Host headers"));
		h->host = f->value;
	} else if (strcasecmp(f->name, "content-length") == 0) {
		return (ph_length(h, f->value, err, errlen));
	} else if (strcasecmp(f->name, "transfer-encoding") == 0) {
		if (h->chunked)
			return (ph_fail(err, errlen,
			    "two Transfer-Encoding headers"));
		if (strcasecmp(f->value, "chunked") != 0)
			return (ph_fail(err, errlen,
			    "Transfer-Encoding other than chunked"));
		h->chunked = 1;
	}
	return (0);
}

static int
ph_headers(char **sp, char *end, struct ph_head *h, char *err,
    size_t errlen)
{
	char	*line;

	for (;;) {
		if ((line = ph_line(sp, end)) == NULL)
			return (ph_fail(err, errlen, "bare CR or LF"));
		if (*line == '\0')
			break;
		if (h->nh >= PH_MAXHEADERS)
			return (ph_fail(err, errlen, "too many headers"));
		if (ph_field(line, &h->h[h->nh], err, errlen) == -1 ||
		    ph_special(h, &h->h[h->nh], err, errlen) == -1)
			return (-1);
		h->nh++;
	}
	if (*sp != end)
		return (ph_fail(err, errlen, "bytes after the head"));
	return (0);
}

int
ph_parse(const char *p, size_t len, struct ph_head *h, char *err,
    size_t errlen)
{
	char	*s, *end, *line;

	memset(h, 0, sizeof(*h));
	if (len > PH_HEADMAX)
		return (ph_fail(err, errlen, "head too large"));
	memcpy(h->buf, p, len);
	s = h->buf;
	end = h->buf + len;
	if ((line = ph_line(&s, end)) == NULL)
		return (ph_fail(err, errlen, "bare CR or LF"));
	if (ph_reqline(line, h, err, errlen) == -1 ||
	    ph_headers(&s, end, h, err, errlen) == -1)
		return (-1);
	if (h->host == NULL)
		return (ph_fail(err, errlen, "no Host header"));
	/* Which framing wins is where request smuggling lives. */
	if (h->chunked && h->haslength)
		return (ph_fail(err, errlen,
		    "both Content-Length and Transfer-Encoding"));
	if (h->chunked && h->minor == 0)
		return (ph_fail(err, errlen, "Transfer-Encoding in HTTP/1.0"));
	return (0);
}

const char *
ph_get(const struct ph_head *h, const char *name)
{
	int	 i;

	for (i = 0; i < h->nh; i++)
		if (strcasecmp(h->h[i].name, name) == 0)
			return (h->h[i].value);
	return (NULL);
}

int
ph_has_token(const char *list, const char *token)
{
	size_t	 n = strlen(token), len;
	const char *p = list;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			return (0);
		len = strcspn(p, ",");
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == n && strncasecmp(p, token, n) == 0)
			return (1);
		p += strcspn(p, ",");
	}
}

/* 1 if any header named name lists token. */
static int
ph_any_token(const struct ph_head *h, const char *name, const char *token)
{
	int	 i;

	for (i = 0; i < h->nh; i++)
		if (strcasecmp(h->h[i].name, name) == 0 &&
		    ph_has_token(h->h[i].value, token))
			return (1);
	return (0);
}

int
ph_websocket(const struct ph_head *h)
{
	return (ph_any_token(h, "upgrade", "websocket") &&
	    ph_any_token(h, "connection", "upgrade"));
}

/* A port after a colon: 1 to 5 digits, nothing else. */
static int
ph_port_ok(const char *p)
{
	size_t	 n = strspn(p, "0123456789");

	return (n >= 1 && n <= 5 && p[n] == '\0');
}

int
ph_host_id(const char *host, const char *domain, char *id, size_t idlen)
{
	char	 buf[PH_HOSTMAX], *colon;
	size_t	 i, n, dl = strlen(domain);

	if ((n = strlen(host)) >= sizeof(buf))
		return (-1);
	for (i = 0; i <= n; i++)
		buf[i] = (host[i] >= 'A' && host[i] <= 'Z') ?
		    host[i] - 'A' + 'a' : host[i];
	if ((colon = strchr(buf, ':')) != NULL) {
		if (!ph_port_ok(colon + 1))
			return (-1);
		*colon = '\0';
		n = (size_t)(colon - buf);
	}
	if (n <= dl + 1 || buf[n - dl - 1] != '.' ||
	    strcmp(buf + n - dl, domain) != 0 || n - dl - 1 >= idlen)
		return (-1);
	buf[n - dl - 1] = '\0';
	/* An id has no dot: a name below another preview's is no id. */
	if (!preview_valid_id(buf))
		return (-1);
	strlcpy(id, buf, idlen);
	return (0);
}

int
ph_login(const char *target, char *tok, size_t len)
{
	size_t	 plen = strcspn(target, "?"), n;
	const char *q;

	if (plen != strlen(PREVIEW_LOGIN) ||
	    strncmp(target, PREVIEW_LOGIN, plen) != 0)
		return (0);
	if (strncmp(target + plen, "?token=", 7) != 0)
		return (-1);
	q = target + plen + 7;
	/* A token's bytes, so nothing in it is percent-encoded. */
	n = strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789.-");
	if (n == 0 || q[n] != '\0' || n >= len)
		return (-1);
	memcpy(tok, q, n);
	tok[n] = '\0';
	return (1);
}

/*
 * Each "name=value" of a Cookie value, OWS around it dropped: the
 * callback's return stops the walk.
 */
static int
ph_cookie_walk(const char *v, int (*cb)(const char *, size_t,
    const char *, size_t, void *), void *arg)
{
	const char	*p = v, *eq;
	size_t		 len;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		if (*p == '\0')
			return (0);
		len = strcspn(p, ";");
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if ((eq = memchr(p, '=', len)) == NULL) {
			if (cb(p, len, p + len, 0, arg))
				return (1);
		} else if (cb(p, (size_t)(eq - p), eq + 1,
		    len - (size_t)(eq - p) - 1, arg))
			return (1);
		p += strcspn(p, ";");
	}
}

struct ph_found {
	const char	 *name;
	const char	**vals;
	size_t		 *lens;
	int		  n, max;
};

static int
ph_cookie_found(const char *name, size_t nlen, const char *val,
    size_t vlen, void *arg)
{
	struct ph_found	*f = arg;

	if (nlen != strlen(f->name) || memcmp(name, f->name, nlen) != 0)
		return (0);
	f->vals[f->n] = val;
	f->lens[f->n] = vlen;
	return (++f->n >= f->max);
}

/*
 * Every one is returned, not the first: a sibling preview's
 * application can set a cookie of this name for the whole domain,
 * which the browser sends beside ours.
 */
int
ph_cookies(const struct ph_head *h, const char *name, const char **vals,
    size_t *lens, int max)
{
	struct ph_found	 f = { name, vals, lens, 0, max };
	int		 i;

	if (max <= 0)
		return (0);
	for (i = 0; i < h->nh; i++)
		if (strcasecmp(h->h[i].name, "cookie") == 0 &&
		    ph_cookie_walk(h->h[i].value, ph_cookie_found, &f))
			break;
	return (f.n);
}

struct ph_strip {
	const char	*name;
	char		*out;
	size_t		 outlen, len;
};

static int
ph_cookie_keep(const char *name, size_t nlen, const char *val, size_t vlen,
    void *arg)
{
	struct ph_strip	*s = arg;
	size_t		 pair = (size_t)(val + vlen - name);

	if (nlen == strlen(s->name) && memcmp(name, s->name, nlen) == 0)
		return (0);
	/* The caller's out is as long as the value: this always fits. */
	if (s->len + pair + 3 > s->outlen)
		return (1);
	if (s->len > 0) {
		memcpy(s->out + s->len, "; ", 2);
		s->len += 2;
	}
	memcpy(s->out + s->len, name, pair);
	s->len += pair;
	s->out[s->len] = '\0';
	return (0);
}

size_t
ph_cookie_strip(const char *value, const char *name, char *out,
    size_t outlen)
{
	struct ph_strip	 s = { name, out, outlen, 0 };

	if (outlen > 0)
		out[0] = '\0';
	(void)ph_cookie_walk(value, ph_cookie_keep, &s);
	return (s.len);
}

int
ph_origin_ok(const char *origin, const char *host)
{
	const char	*p;
	size_t		 n = strlen(host);

	if (strncmp(origin, "https://", 8) == 0)
		p = origin + 8;
	else if (strncmp(origin, "http://", 7) == 0)
		p = origin + 7;
	else
		return (0);
	if (strncasecmp(p, host, n) != 0)
		return (0);
	p += n;
	return (*p == '\0' || (*p == ':' && ph_port_ok(p + 1)));
}

/* Appends to a bounded buffer; once past its end, stays failed. */
struct ph_out {
	char	*buf;
	size_t	 len, size;
	int	 over;
};

static void
ph_put(struct ph_out *o, const char *fmt, ...)
    __attribute__((__format__ (printf, 2, 3)));

static void
ph_put(struct ph_out *o, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (o->over)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->size - o->len)
		o->over = 1;
	else
		o->len += (size_t)n;
}

/*
 * Headers the application does not get: ours to set (Host,
 * X-Forwarded-Host), or of this hop only.  Content-Length and
 * Transfer-Encoding go as they came: the body goes as it came.
 */
static int
ph_dropped(const char *name, int websocket)
{
	static const char *const drop[] = { "host", "x-forwarded-host",
	    "connection", "keep-alive", "te", "trailer", NULL };
	int	 i;

	for (i = 0; drop[i] != NULL; i++)
		if (strcasecmp(name, drop[i]) == 0)
			return (1);
	if (strncasecmp(name, "proxy-", 6) == 0)
		return (1);
	return (!websocket && strcasecmp(name, "upgrade") == 0);
}

long
ph_rewrite(const struct ph_head *h, uint32_t port, int websocket,
    char *out, size_t outlen)
{
	struct ph_out	 o = { out, 0, outlen, outlen == 0 };
	char		 kept[PH_HEADMAX];
	int		 i;

	ph_put(&o, "%s %s HTTP/1.%d\r\n", h->method, h->target, h->minor);
	for (i = 0; i < h->nh; i++) {
		if (ph_dropped(h->h[i].name, websocket))
			continue;
		if (strcasecmp(h->h[i].name, "cookie") != 0)
			ph_put(&o, "%s: %s\r\n", h->h[i].name, h->h[i].value);
		else if (ph_cookie_strip(h->h[i].value, PREVIEW_COOKIE, kept,
		    sizeof(kept)) > 0)
			ph_put(&o, "%s: %s\r\n", h->h[i].name, kept);
	}
	/* The application sees a local name: no DNS rebinding to it. */
	ph_put(&o, "Host: 127.0.0.1:%u\r\n", (unsigned)port);
	ph_put(&o, "X-Forwarded-Host: %s\r\n", h->host);
	ph_put(&o, "Connection: %s\r\n\r\n", websocket ? "Upgrade" : "close");
	return (o.over ? -1 : (long)o.len);
}

int
ph_status(const char *p, size_t len)
{
	int	 code;

	if (len < 12 || strncmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' ||
	    p[7] > '9' || p[8] != ' ')
		return (-1);
	if (p[9] < '1' || p[9] > '9' || p[10] < '0' || p[10] > '9' ||
	    p[11] < '0' || p[11] > '9')
		return (-1);
	if (len > 12 && p[12] != ' ' && p[12] != '\r')
		return (-1);
	code = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	return (code);
}

/* Up to n bytes of p onto what, NUL bytes made '?'. */
static size_t
ph_what_add(char *what, size_t at, size_t len, const char *p, size_t n)
{
	size_t	 i;

	for (i = 0; i < n && at + 1 < len; i++)
		what[at++] = p[i] == '\0' ? '?' : p[i];
	what[at] = '\0';
	return (at);
}

void
ph_what(const char *p, size_t len, char *what, size_t wlen)
{
	const char	*eol, *body;
	size_t		 at;

	if (wlen == 0)
		return;
	what[0] = '\0';
	if ((eol = memmem(p, len, "\r\n", 2)) == NULL) {
		(void)ph_what_add(what, 0, wlen, p, len);
		return;
	}
	at = ph_what_add(what, 0, wlen, p, (size_t)(eol - p));
	if ((body = memmem(p, len, "\r\n\r\n", 4)) == NULL)
		return;
	body += 4;
	at = ph_what_add(what, at, wlen, "\n", 1);
	(void)ph_what_add(what, at, wlen, body, (size_t)(p + len - body));
}

static const char *
ph_reason(int code)
{
	switch (code) {
	case 303:
		return ("See Other");
	case 400:
		return ("Bad Request");
	case 401:
		return ("Unauthorized");
	case 403:
		return ("Forbidden");
	case 404:
		return ("Not Found");
	case 405:
		return ("Method Not Allowed");
	case 408:
		return ("Request Timeout");
	case 431:
		return ("Request Header Fields Too Large");
	case 502:
		return ("Bad Gateway");
	case 503:
		return ("Service Unavailable");
	case 504:
		return ("Gateway Timeout");
	}
	return ("Error");
}

size_t
ph_answer(int code, const char *text, char *out, size_t len)
{
	struct ph_out	 o = { out, 0, len, len == 0 };

	ph_put(&o, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n\r\n%s\n", code, ph_reason(code),
	    strlen(text) + 1, text);
	return (o.over ? 0 : o.len);
}

size_t
ph_answer_login(const char *cookie, uint64_t maxage, int secure, char *out,
    size_t len)
{
	struct ph_out	 o = { out, 0, len, len == 0 };

	ph_put(&o, "HTTP/1.1 303 See Other\r\n"
	    "Location: /\r\n"
	    "Set-Cookie: %s=%s; Path=/; HttpOnly; SameSite=Lax; "
	    "Max-Age=%" PRIu64 "%s\r\n"
	    "Cache-Control: no-store\r\n"
	    "Content-Length: 0\r\n"
	    "Connection: close\r\n\r\n", PREVIEW_COOKIE, cookie, maxage,
	    secure ? "; Secure" : "");
	return (o.over ? 0 : o.len);
}
