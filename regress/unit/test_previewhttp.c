/*
 * Unit tests of factory-preview's request parser (preview/http.c) and
 * of the checks built on it: what a browser sends is parsed or refused
 * whole (two Hosts, both framings, a folded line, a bare LF, too many
 * or too large headers), a host name routes to its attempt only, a
 * cookie of another attempt or past its end is no cookie, an Origin of
 * another host is refused, and the head the application gets carries
 * neither the preview's cookie nor the browser's host name.
 */
#include <sys/types.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "previewmsg.h"
#include "../../preview/http.h"

#define ID	"a-20261202-0001"
#define OTHER	"a-20261202-0002"
#define DOMAIN	"preview.example.org"
#define NONCE	"0123456789abcdef0123456789abcdef"

static struct ph_head	 head;
static char		 err[128];
static const uint8_t	 key[PREVIEW_KEYLEN] = { 1, 2, 3, 4 };

static int
parse(const char *s)
{
	long	 end;
	int	 rc;

	err[0] = '\0';
	end = ph_head_end(s, strlen(s));
	rc = ph_parse(s, strlen(s), &head, err, sizeof(err));
	if (rc == -1)
		ck_assert_msg(err[0] != '\0', "refused without a reason");
	else
		ck_assert_int_eq(end, (long)strlen(s));
	return (rc);
}

START_TEST(test_good)
{
	ck_assert_int_eq(parse("GET /a/b?c=d HTTP/1.1\r\n"
	    "Host: " ID "." DOMAIN "\r\n"
	    "Accept:  text/html \t\r\n"
	    "Empty:\r\n"
	    "Content-Length: 12\r\n\r\n"), 0);
	ck_assert_str_eq(head.method, "GET");
	ck_assert_str_eq(head.target, "/a/b?c=d");
	ck_assert_int_eq(head.minor, 1);
	ck_assert_int_eq(head.nh, 4);
	ck_assert_str_eq(ph_get(&head, "accept"), "text/html");
	ck_assert_str_eq(ph_get(&head, "EMPTY"), "");
	ck_assert_str_eq(head.host, ID "." DOMAIN);
	ck_assert_int_eq(head.haslength, 1);
	ck_assert_uint_eq(head.length, 12);
	ck_assert_ptr_null(ph_get(&head, "cookie"));
	ck_assert_int_eq(parse("POST / HTTP/1.1\r\nHost: x\r\n"
	    "Transfer-Encoding: Chunked\r\n\r\n"), 0);
	ck_assert_int_eq(head.chunked, 1);
	ck_assert_int_eq(parse("GET / HTTP/1.0\r\nHost: x\r\n\r\n"), 0);
	ck_assert_int_eq(head.minor, 0);
}
END_TEST

/* Requests two parsers could read differently: each refused. */
START_TEST(test_smuggling)
{
	const char *bad[] = {
	    "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n",
	    "GET / HTTP/1.1\r\nAccept: x\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 3\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
	    "Content-Length: 3\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: "
	    "99999999999999999999\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, "
	    "chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n"
	    "\r\n",
	    "POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 3\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a\r\n Content-Length: 3\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n folded\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\tfolded\r\n\r\n",
	    NULL
	};
	int	 i;

	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(parse(bad[i]) == -1, "taken: %s", bad[i]);
}
END_TEST

/* Line ends, bytes and the request line, each strict. */
START_TEST(test_hostile_bytes)
{
	const char *bad[] = {
	    "GET / HTTP/1.1\nHost: a\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\x7f\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\x80\r\n\r\n",
	    "GET / HTTP/1.1\r\nHo st: a\r\n\r\n",
	    "GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n",
	    "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n",
	    "GET * HTTP/1.1\r\nHost: a\r\n\r\n",
	    "CONNECT a:80 HTTP/1.1\r\nHost: a\r\n\r\n",
	    "GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n",
	    "GET / HTTP/1.2\r\nHost: a\r\n\r\n",
	    "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
	    "GET / http/1.1\r\nHost: a\r\n\r\n",
	    "GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
	    "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
	    "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n\r\n",
	    "",
	    NULL
	};
	char	 nul[] = "GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n";
	int	 i;

	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(parse(bad[i]) == -1, "taken: %s", bad[i]);
	ck_assert_int_eq(ph_parse(nul, sizeof(nul) - 1, &head, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(ph_head_end(nul, sizeof(nul) - 1), -1);
	/* A bare LF is refused as it arrives, not at the deadline. */
	ck_assert_int_eq(ph_head_end("GET / HTTP/1.1\n", 15), -1);
	ck_assert_int_eq(ph_head_end("GET / HTTP/1.1\r\nHost: a\r\n", 25),
	    0);
	ck_assert_int_eq(ph_head_end("GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY"
	    "\n\0", 33), 27);
}
END_TEST

/* Bounds: PH_MAXHEADERS lines, PH_HEADMAX bytes. */
START_TEST(test_oversize)
{
	char	*s;
	size_t	 n;
	int	 i;

	ck_assert_ptr_nonnull(s = malloc(2 * PH_HEADMAX));
	n = strlcpy(s, "GET / HTTP/1.1\r\nHost: a\r\n", 2 * PH_HEADMAX);
	for (i = 1; i < PH_MAXHEADERS; i++)
		n += snprintf(s + n, 2 * PH_HEADMAX - n, "X-%d: v\r\n", i);
	strlcpy(s + n, "\r\n", 2 * PH_HEADMAX - n);
	ck_assert_int_eq(parse(s), 0);
	ck_assert_int_eq(head.nh, PH_MAXHEADERS);
	n += snprintf(s + n, 2 * PH_HEADMAX - n, "X-last: v\r\n\r\n");
	ck_assert_int_eq(parse(s), -1);

	n = strlcpy(s, "GET / HTTP/1.1\r\nHost: a\r\nX: ", 2 * PH_HEADMAX);
	memset(s + n, 'a', PH_HEADMAX);
	strlcpy(s + n + PH_HEADMAX, "\r\n\r\n", PH_HEADMAX - n);
	ck_assert_int_eq(ph_head_end(s, strlen(s)), -1);
	ck_assert_int_eq(ph_parse(s, strlen(s), &head, err, sizeof(err)),
	    -1);
	/* The bound itself, not past it: still incomplete. */
	ck_assert_int_eq(ph_head_end(s, PH_HEADMAX - 1), 0);
	ck_assert_int_eq(ph_head_end(s, PH_HEADMAX), -1);
	free(s);
}
END_TEST

START_TEST(test_host)
{
	char	 id[ATTEMPT_ID_MAX];

	ck_assert_int_eq(ph_host_id(ID "." DOMAIN, DOMAIN, id, sizeof(id)), 0);
	ck_assert_str_eq(id, ID);
	ck_assert_int_eq(ph_host_id("A-20261202-0001.Preview.Example.ORG:8443",
	    DOMAIN, id, sizeof(id)), 0);
	ck_assert_str_eq(id, ID);
	ck_assert_int_eq(ph_host_id(DOMAIN, DOMAIN, id, sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id("." DOMAIN, DOMAIN, id, sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id(ID "." DOMAIN ".", DOMAIN, id,
	    sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id(ID "." DOMAIN ":", DOMAIN, id,
	    sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id(ID "." DOMAIN ":123456", DOMAIN, id,
	    sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id(ID "." DOMAIN ":80:80", DOMAIN, id,
	    sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id("x." ID "." DOMAIN, DOMAIN, id,
	    sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id(ID "x" DOMAIN, DOMAIN, id, sizeof(id)),
	    -1);
	ck_assert_int_eq(ph_host_id(ID ".evil" DOMAIN, DOMAIN, id,
	    sizeof(id)), -1);
	ck_assert_int_eq(ph_host_id("b-1." DOMAIN, DOMAIN, id, sizeof(id)),
	    -1);
	ck_assert_int_eq(ph_host_id("a-_." DOMAIN, DOMAIN, id, sizeof(id)),
	    -1);
	ck_assert_int_eq(ph_host_id("127.0.0.1", DOMAIN, id, sizeof(id)),
	    -1);
	ck_assert_int_eq(ph_host_id("", DOMAIN, id, sizeof(id)), -1);
}
END_TEST

START_TEST(test_login)
{
	char	 tok[PREVIEW_TOKENMAX], good[PREVIEW_TOKENMAX], t[512];
	char	 nonce[PREVIEW_NONCEHEX + 1];
	uint64_t exp;

	ck_assert_int_eq(ph_login("/", tok, sizeof(tok)), 0);
	ck_assert_int_eq(ph_login("/_factory/previews", tok, sizeof(tok)),
	    0);
	ck_assert_int_eq(ph_login(PREVIEW_LOGIN, tok, sizeof(tok)), -1);
	ck_assert_int_eq(ph_login(PREVIEW_LOGIN "?", tok, sizeof(tok)), -1);
	ck_assert_int_eq(ph_login(PREVIEW_LOGIN "?token=", tok, sizeof(tok)),
	    -1);
	ck_assert_int_eq(ph_login(PREVIEW_LOGIN "?token=a&x=1", tok,
	    sizeof(tok)), -1);
	ck_assert_int_eq(ph_login(PREVIEW_LOGIN "?x=1&token=a", tok,
	    sizeof(tok)), -1);
	ck_assert_int_eq(ph_login(PREVIEW_LOGIN "?token=a%2eb", tok,
	    sizeof(tok)), -1);

	ck_assert_int_eq(preview_token(key, ID, 2000000000, NONCE, good,
	    sizeof(good)), 0);
	snprintf(t, sizeof(t), PREVIEW_LOGIN "?token=%s", good);
	ck_assert_int_eq(ph_login(t, tok, sizeof(tok)), 1);
	ck_assert_str_eq(tok, good);
	ck_assert_int_eq(preview_token_check(key, ID, tok, &exp, nonce), 0);
	ck_assert_uint_eq(exp, 2000000000);
	ck_assert_str_eq(nonce, NONCE);
	/* Another attempt's token, a changed byte, a cookie: refused. */
	ck_assert_int_eq(preview_token_check(key, OTHER, tok, &exp, nonce),
	    -1);
	tok[strlen(tok) - 1] ^= 1;
	ck_assert_int_eq(preview_token_check(key, ID, tok, &exp, nonce), -1);
	ck_assert_int_eq(preview_cookie(key, ID, 2000000000, NONCE, good,
	    sizeof(good)), 0);
	ck_assert_int_eq(preview_token_check(key, ID, good, &exp, nonce), -1);
	/* Too long for the caller's buffer: refused, not cut. */
	ck_assert_int_eq(ph_login(t, tok, 8), -1);
}
END_TEST

/* The cookie as conn.c checks it: any one valid, for this id, live. */
static int
cookie_ok(const char *req, const char *id, uint64_t now)
{
	const char	*vals[PH_MAXCOOKIES];
	size_t		 lens[PH_MAXCOOKIES];
	char		 v[PREVIEW_TOKENMAX], nonce[PREVIEW_NONCEHEX + 1];
	uint64_t	 exp;
	int		 i, n;

	ck_assert_int_eq(parse(req), 0);
	n = ph_cookies(&head, PREVIEW_COOKIE, vals, lens, PH_MAXCOOKIES);
	for (i = 0; i < n; i++) {
		if (lens[i] >= sizeof(v))
			continue;
		memcpy(v, vals[i], lens[i]);
		v[lens[i]] = '\0';
		if (preview_cookie_check(key, id, v, &exp, nonce) == 0 &&
		    exp > now)
			return (1);
	}
	return (0);
}

START_TEST(test_cookie)
{
	char	 c[PREVIEW_TOKENMAX], co[PREVIEW_TOKENMAX], req[4096];
	char	 tok[PREVIEW_TOKENMAX];
	int	 i;

	ck_assert_int_eq(preview_cookie(key, ID, 2000, NONCE, c, sizeof(c)),
	    0);
	ck_assert_int_eq(preview_cookie(key, OTHER, 2000, NONCE, co,
	    sizeof(co)), 0);
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: h\r\n"
	    "Cookie: a=b; " PREVIEW_COOKIE "=%s;c=d\r\n\r\n", c);
	ck_assert_int_eq(cookie_ok(req, ID, 1000), 1);
	/* Past its end; another attempt's host name. */
	ck_assert_int_eq(cookie_ok(req, ID, 2000), 0);
	ck_assert_int_eq(cookie_ok(req, OTHER, 1000), 0);
	/* Another attempt's cookie beside ours (tossed for the domain). */
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: h\r\n"
	    "Cookie: " PREVIEW_COOKIE "=%s\r\nCookie: " PREVIEW_COOKIE
	    "=%s\r\n\r\n", co, c);
	ck_assert_int_eq(cookie_ok(req, ID, 1000), 1);
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: h\r\n"
	    "Cookie: " PREVIEW_COOKIE "=%s\r\n\r\n", co);
	ck_assert_int_eq(cookie_ok(req, ID, 1000), 0);
	/* A token is not a cookie; a name differing in case is not ours. */
	ck_assert_int_eq(preview_token(key, ID, 2000, NONCE, tok,
	    sizeof(tok)), 0);
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: h\r\n"
	    "Cookie: " PREVIEW_COOKIE "=%s; Factory_Preview=%s\r\n\r\n",
	    tok, c);
	ck_assert_int_eq(cookie_ok(req, ID, 1000), 0);
	ck_assert_int_eq(cookie_ok("GET / HTTP/1.1\r\nHost: h\r\n"
	    "Cookie: " PREVIEW_COOKIE "=\r\n\r\n", ID, 1000), 0);
	ck_assert_int_eq(cookie_ok("GET / HTTP/1.1\r\nHost: h\r\n"
	    "Cookie: " PREVIEW_COOKIE "\r\n\r\n", ID, 1000), 0);
	/*
	 * A sibling's application set forty cookies of our name for the
	 * whole domain: ours, sent after them, is still found.
	 */
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: h\r\nCookie: ");
	for (i = 0; i < 40; i++)
		strlcat(req, PREVIEW_COOKIE "=junk; ", sizeof(req));
	strlcat(req, PREVIEW_COOKIE "=", sizeof(req));
	strlcat(req, c, sizeof(req));
	strlcat(req, "\r\n\r\n", sizeof(req));
	ck_assert_int_eq(cookie_ok(req, ID, 1000), 1);
}
END_TEST

START_TEST(test_cookie_strip)
{
	char	 out[256];

	ck_assert_uint_eq(ph_cookie_strip("a=b; " PREVIEW_COOKIE "=x;c=d",
	    PREVIEW_COOKIE, out, sizeof(out)), 8);
	ck_assert_str_eq(out, "a=b; c=d");
	ck_assert_uint_eq(ph_cookie_strip(PREVIEW_COOKIE "=x", PREVIEW_COOKIE,
	    out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(ph_cookie_strip(" " PREVIEW_COOKIE "=x ; " 
	    PREVIEW_COOKIE "=y;", PREVIEW_COOKIE, out, sizeof(out)), 0);
	ck_assert_uint_eq(ph_cookie_strip("a; b=c", PREVIEW_COOKIE, out,
	    sizeof(out)), 6);
	ck_assert_str_eq(out, "a; b=c");
	ck_assert_uint_eq(ph_cookie_strip(PREVIEW_COOKIE "x=1",
	    PREVIEW_COOKIE, out, sizeof(out)), 18);
}
END_TEST

START_TEST(test_origin)
{
	const char	*h = ID "." DOMAIN;

	ck_assert_int_eq(ph_origin_ok("https://" ID "." DOMAIN, h), 1);
	ck_assert_int_eq(ph_origin_ok("http://" ID "." DOMAIN ":8080", h), 1);
	ck_assert_int_eq(ph_origin_ok("https://" OTHER "." DOMAIN, h), 0);
	ck_assert_int_eq(ph_origin_ok("https://" ID "." DOMAIN ".evil", h),
	    0);
	ck_assert_int_eq(ph_origin_ok("https://" ID "." DOMAIN "/", h), 0);
	ck_assert_int_eq(ph_origin_ok("https://" ID "." DOMAIN ":", h), 0);
	ck_assert_int_eq(ph_origin_ok("https://x" ID "." DOMAIN, h), 0);
	ck_assert_int_eq(ph_origin_ok("ftp://" ID "." DOMAIN, h), 0);
	ck_assert_int_eq(ph_origin_ok("null", h), 0);
	ck_assert_int_eq(ph_origin_ok("", h), 0);

	ck_assert_int_eq(parse("GET /ws HTTP/1.1\r\nHost: h\r\n"
	    "Upgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n\r\n"),
	    0);
	ck_assert_int_eq(ph_websocket(&head), 1);
	ck_assert_int_eq(parse("GET /ws HTTP/1.1\r\nHost: h\r\n"
	    "Upgrade: websocket\r\nConnection: keep-alive\r\n\r\n"), 0);
	ck_assert_int_eq(ph_websocket(&head), 0);
	ck_assert_int_eq(parse("GET /ws HTTP/1.1\r\nHost: h\r\n"
	    "Upgrade: websockets\r\nConnection: upgrade\r\n\r\n"), 0);
	ck_assert_int_eq(ph_websocket(&head), 0);
}
END_TEST

START_TEST(test_rewrite)
{
	char	 out[PH_OUTMAX];
	long	 n;

	ck_assert_int_eq(parse("POST /x?y HTTP/1.1\r\n"
	    "Host: " ID "." DOMAIN "\r\n"
	    "Cookie: a=b; " PREVIEW_COOKIE "=secret\r\n"
	    "Cookie: " PREVIEW_COOKIE "=secret2\r\n"
	    "Connection: keep-alive\r\nKeep-Alive: 5\r\n"
	    "Proxy-Authorization: x\r\nX-Forwarded-Host: evil\r\n"
	    "Upgrade: h2c\r\nTE: trailers\r\n"
	    "Content-Length: 3\r\nAccept: */*\r\n\r\n"), 0);
	ck_assert_int_gt(n = ph_rewrite(&head, 8080, 0, out, sizeof(out)),
	    0);
	ck_assert_uint_eq((size_t)n, strlen(out));
	ck_assert_str_eq(out, "POST /x?y HTTP/1.1\r\n"
	    "Cookie: a=b\r\n"
	    "Content-Length: 3\r\nAccept: */*\r\n"
	    "Host: 127.0.0.1:8080\r\n"
	    "X-Forwarded-Host: " ID "." DOMAIN "\r\n"
	    "Connection: close\r\n\r\n");
	ck_assert_int_eq(parse("GET /ws HTTP/1.1\r\nHost: h\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n"), 0);
	ck_assert_int_gt(ph_rewrite(&head, 80, 1, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n"
	    "Host: 127.0.0.1:80\r\nX-Forwarded-Host: h\r\n"
	    "Connection: Upgrade\r\n\r\n");
	ck_assert_int_eq(ph_rewrite(&head, 80, 1, out, 10), -1);
}
END_TEST

START_TEST(test_answers)
{
	char	 out[PH_ANSWERMAX], what[32];
	size_t	 n;

	n = ph_answer(404, "no such preview", out, sizeof(out));
	ck_assert_uint_eq(n, strlen(out));
	ck_assert_str_eq(out, "HTTP/1.1 404 Not Found\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: 16\r\nCache-Control: no-store\r\n"
	    "Connection: close\r\n\r\nno such preview\n");
	ph_answer_login("C", 60, 1, out, sizeof(out));
	ck_assert_ptr_nonnull(strstr(out, "Set-Cookie: " PREVIEW_COOKIE
	    "=C; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure\r\n"));
	ph_answer_login("C", 60, 0, out, sizeof(out));
	ck_assert_ptr_null(strstr(out, "Secure"));
	ck_assert_int_eq(ph_status("HTTP/1.1 204 No Content\r\n", 25), 204);
	ck_assert_int_eq(ph_status("HTTP/1.0 503\r\n", 14), 503);
	ck_assert_int_eq(ph_status("HTTP/1.1 20 OK\r\n", 16), -1);
	ck_assert_int_eq(ph_status("HTTP/1.1 2000 OK\r\n", 18), -1);
	ck_assert_int_eq(ph_status("SSH-2.0-x\r\n", 11), -1);
	ph_what("HTTP/1.1 500 Oops\r\nA: b\r\n\r\nx\0y", 30, what,
	    sizeof(what));
	ck_assert_str_eq(what, "HTTP/1.1 500 Oops\nx?y");
	ph_what("HTTP/1.1 500 Oops\r\nA: b\r\n\r\n0123456789abcdef", 43, what,
	    12);
	ck_assert_str_eq(what, "HTTP/1.1 50");
}
END_TEST

static Suite *
previewhttp_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("previewhttp");
	tc = tcase_create("core");
	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_smuggling);
	tcase_add_test(tc, test_hostile_bytes);
	tcase_add_test(tc, test_oversize);
	tcase_add_test(tc, test_host);
	tcase_add_test(tc, test_login);
	tcase_add_test(tc, test_cookie);
	tcase_add_test(tc, test_cookie_strip);
	tcase_add_test(tc, test_origin);
	tcase_add_test(tc, test_rewrite);
	tcase_add_test(tc, test_answers);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(previewhttp_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
