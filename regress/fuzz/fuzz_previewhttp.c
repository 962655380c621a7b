/*
 * What factory-preview parses of a browser's request and of an
 * application's health answer (preview/http.c), on any bytes.
 * Promises checked:
 *  - the end of a head is found within its bound, after CRLFCRLF;
 *  - a head that parses has a method, an origin-form target, one Host,
 *    at most PH_MAXHEADERS printable headers and one framing;
 *  - the head spelled for the application parses again, with the same
 *    request line and framing, Host 127.0.0.1:port and no preview
 *    cookie (what was checked is what goes, less what must not);
 *  - a host name routes only to a valid attempt id; the checks of
 *    login, cookies and Origin stay within their buffers;
 *  - a health answer's status is in range and its record NUL-free.
 */
#include "fuzz.h"
#include "previewmsg.h"
#include "../../preview/http.h"

#define DOMAIN	"preview.example.org"

static struct ph_head	 head, again;

static void
printable(const char *s, const char *what)
{
	for (; *s != '\0'; s++)
		FUZZ_ASSERT((*s >= 0x20 && *s < 0x7f) || *s == '\t',
		    "%s: byte 0x%02x", what, (unsigned char)*s);
}

static void
fuzz_checks(const struct ph_head *h)
{
	char		 id[ATTEMPT_ID_MAX], tok[PREVIEW_TOKENMAX];
	const char	*vals[PH_MAXCOOKIES], *o;
	size_t		 lens[PH_MAXCOOKIES];
	int		 i, n;

	if (ph_host_id(h->host, DOMAIN, id, sizeof(id)) == 0)
		FUZZ_ASSERT(preview_valid_id(id), "host: bad id %s", id);
	if (ph_login(h->target, tok, sizeof(tok)) == 1)
		FUZZ_ASSERT(strlen(tok) > 0 && strlen(tok) < sizeof(tok) &&
		    strpbrk(tok, "?&=% ") == NULL, "login: bad token");
	n = ph_cookies(h, PREVIEW_COOKIE, vals, lens, PH_MAXCOOKIES);
	FUZZ_ASSERT(n >= 0 && n <= PH_MAXCOOKIES, "cookies: %d", n);
	for (i = 0; i < n; i++)
		FUZZ_ASSERT(vals[i] >= h->buf && vals[i] + lens[i] <=
		    h->buf + sizeof(h->buf), "cookies: outside the head");
	if ((o = ph_get(h, "origin")) != NULL && ph_origin_ok(o, "a-1."
	    DOMAIN))
		FUZZ_ASSERT(strncmp(o, "http", 4) == 0, "origin: %s", o);
	(void)ph_websocket(h);
}

static void
fuzz_rewrite(const struct ph_head *h, int websocket)
{
	static char	 out[PH_OUTMAX];
	char		 err[128], buf[32];
	const char	*vals[PH_MAXCOOKIES];
	size_t		 lens[PH_MAXCOOKIES];
	long		 n;

	n = ph_rewrite(h, 8080, websocket, out, sizeof(out));
	FUZZ_ASSERT(n > 0 && (size_t)n == strlen(out),
	    "rewrite: did not fit");
	/* Past a bound only because of what we add: not parsed again. */
	if (n > PH_HEADMAX || h->nh + 2 > PH_MAXHEADERS)
		return;
	FUZZ_ASSERT(ph_head_end(out, (size_t)n) == n, "rewrite: no end");
	FUZZ_ASSERT(ph_parse(out, (size_t)n, &again, err, sizeof(err)) == 0,
	    "rewrite: does not parse: %s", err);
	FUZZ_ASSERT(strcmp(again.method, h->method) == 0 &&
	    strcmp(again.target, h->target) == 0 && again.minor == h->minor,
	    "rewrite: another request line");
	FUZZ_ASSERT(again.chunked == h->chunked &&
	    again.haslength == h->haslength && again.length == h->length,
	    "rewrite: another framing");
	snprintf(buf, sizeof(buf), "127.0.0.1:%u", 8080);
	FUZZ_ASSERT(strcmp(again.host, buf) == 0, "rewrite: host");
	FUZZ_ASSERT(ph_cookies(&again, PREVIEW_COOKIE, vals, lens,
	    PH_MAXCOOKIES) == 0, "rewrite: the preview's cookie went");
}

static void
fuzz_head(const uint8_t *p, size_t len)
{
	char	 err[128];
	long	 end;
	int	 i;

	end = ph_head_end((const char *)p, len);
	FUZZ_ASSERT(end >= -1 && end <= (long)len && end <= PH_HEADMAX,
	    "head_end: %ld", end);
	if (end > 0)
		FUZZ_ASSERT(memcmp(p + end - 4, "\r\n\r\n", 4) == 0,
		    "head_end: not after CRLFCRLF");
	if (ph_parse((const char *)p, len, &head, err, sizeof(err)) == -1) {
		printable(err, "parse: reason");
		return;
	}
	FUZZ_ASSERT(end == (long)len, "parse: took what head_end did not");
	FUZZ_ASSERT(head.method[0] != '\0' && head.target[0] == '/' &&
	    head.host != NULL && head.nh <= PH_MAXHEADERS &&
	    !(head.chunked && head.haslength), "parse: broken promise");
	printable(head.target, "target");
	for (i = 0; i < head.nh; i++) {
		printable(head.h[i].name, "name");
		printable(head.h[i].value, "value");
	}
	fuzz_checks(&head);
	fuzz_rewrite(&head, 0);
	fuzz_rewrite(&head, 1);
}

static void
fuzz_health(const uint8_t *p, size_t len)
{
	char	 what[PREVIEW_WHATMAX];
	int	 code;

	code = ph_status((const char *)p, len);
	FUZZ_ASSERT(code == -1 || (code >= 100 && code <= 999),
	    "status: %d", code);
	ph_what((const char *)p, len, what, sizeof(what));
	FUZZ_ASSERT(memchr(what, '\0', sizeof(what)) != NULL,
	    "what: not ended");
	FUZZ_ASSERT(strlen(what) <= len + 1, "what: grew");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_head(data, size);
	fuzz_health(data, size);
	return (0);
}
