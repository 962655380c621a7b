/*
 * What factory-preview reads of a browser's request and of an
 * application's health answer, without any I/O (http.c): a request
 * head parsed strictly into a struct, the host name routed to an
 * attempt, the preview's cookie found among others, an Origin
 * compared, the head spelled again for the application.  Every byte
 * here is a stranger's: bounded, and a parse that fails fails closed
 * (the caller answers 4xx and closes).
 */
#ifndef FACTORY_PREVIEW_HTTP_H
#define FACTORY_PREVIEW_HTTP_H

#include <stddef.h>
#include <stdint.h>

/*
 * A request line and its headers, with the empty line that ends them:
 * a browser's, even with many cookies, is a few KiB.  Beyond this the
 * request is refused, never buffered further.
 */
#define PH_HEADMAX	(16 * 1024)
#define PH_MAXHEADERS	100		/* header lines of one request */
/*
 * The head spelled for the application: the request's own bytes less
 * what is dropped, plus Host, X-Forwarded-Host and Connection, each
 * bounded by the head it came from.
 */
#define PH_OUTMAX	(2 * PH_HEADMAX + 512)
/*
 * Cookies named factory_preview in one request, each checked: as many
 * as a head can hold ("factory_preview=" and a byte each), so that a
 * sibling preview's application, which may set them for the whole
 * domain, cannot push ours past the bound.
 */
#define PH_MAXCOOKIES	(PH_HEADMAX / 17 + 1)
/* A response of ours: status line, three headers, a line of text. */
#define PH_ANSWERMAX	1024

struct ph_field {
	const char	*name;		/* a token, as sent */
	const char	*value;		/* printable, OWS trimmed */
};

/*
 * A parsed head.  The strings point into buf, a copy of the head with
 * a NUL in place of each delimiter, so the caller may free the bytes
 * it parsed from.
 */
struct ph_head {
	char		 buf[PH_HEADMAX + 1];
	const char	*method;
	const char	*target;	/* origin-form: starts with '/' */
	int		 minor;		/* HTTP/1.minor: 0 or 1 */
	struct ph_field	 h[PH_MAXHEADERS];
	int		 nh;
	const char	*host;		/* the one Host header's value */
	int		 chunked;	/* Transfer-Encoding: chunked */
	int		 haslength;	/* Content-Length given */
	uint64_t	 length;
};

/*
 * The length of the head at the start of p (through its CRLFCRLF):
 * > 0 when complete, 0 when more bytes may complete it, -1 when none
 * can (a bare LF, a NUL, or PH_HEADMAX bytes without its end).
 */
long		 ph_head_end(const char *, size_t);
/* Parse a complete head of len bytes: 0, or -1 and why in err. */
int		 ph_parse(const char *, size_t, struct ph_head *, char *,
		    size_t);
/* The value of the first header named name, or NULL. */
const char	*ph_get(const struct ph_head *, const char *);
/* 1 if the comma-separated list has token, case insensitive. */
int		 ph_has_token(const char *, const char *);
/* 1 if the request asks for a WebSocket (Upgrade and Connection). */
int		 ph_websocket(const struct ph_head *);

/*
 * The attempt id of a Host value naming "<id>.<domain>" (lowercased,
 * a port dropped) into id: 0, or -1 if it names anything else.
 */
int		 ph_host_id(const char *, const char *, char *, size_t);
/*
 * 1 if the target is the login path, its token (the query's only
 * parameter) into tok; -1 if the login path with any other query; 0
 * if another path.
 */
int		 ph_login(const char *, char *, size_t);
/*
 * The values of the cookies named name in every Cookie header, up to
 * max: their starts and lengths, and how many.
 */
int		 ph_cookies(const struct ph_head *, const char *,
		    const char **, size_t *, int);
/* 1 if the Origin value is http(s)://host[:port] of exactly host. */
int		 ph_origin_ok(const char *, const char *);

/*
 * The head the application on port gets, into out (PH_OUTMAX): the
 * request line, the headers less Host, the preview's cookie,
 * hop-by-hop and forwarding headers, and ours; a WebSocket's (1) keeps
 * its Upgrade.  Its length, or -1 if it did not fit.
 */
long		 ph_rewrite(const struct ph_head *, uint32_t, int, char *,
		    size_t);
/* The Cookie value less the cookies named name, into out. */
size_t		 ph_cookie_strip(const char *, const char *, char *, size_t);

/*
 * A response's status code, from its status line at the start of p:
 * 100-999, or -1 if p does not start with one.
 */
int		 ph_status(const char *, size_t);
/*
 * For the parent's record: the status line and the first bytes of the
 * body, NUL bytes replaced, into what (len bytes, NUL ended).
 */
void		 ph_what(const char *, size_t, char *, size_t);
/*
 * A short answer of ours with a one-line text body and Connection:
 * close, into out (PH_ANSWERMAX): its length.
 */
size_t		 ph_answer(int, const char *, char *, size_t);
/*
 * The login's answer: 303 to "/" setting the cookie value for maxage
 * seconds, Secure if secure, into out (PH_ANSWERMAX): its length.
 */
size_t		 ph_answer_login(const char *, uint64_t, int, char *, size_t);

#endif /* FACTORY_PREVIEW_HTTP_H */
