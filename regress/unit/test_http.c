/*
 * Unit tests of http_parse (publisher/http.c): the forge's answers,
 * well formed and not.  Each malformed answer must be refused (-1,
 * with a reason), never taken in part; an answer that is not complete
 * yet asks for more (0) until the connection ends, then is refused.
 */
#include <sys/types.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../publisher/publisher.h"

static char	 err[512];

static int
parse(const char *s, int eof, struct http_resp *r)
{
	int	 rc;

	err[0] = '\0';
	rc = http_parse(s, strlen(s), eof, r, err, sizeof(err));
	if (rc == -1)
		ck_assert_msg(err[0] != '\0', "refused without a reason");
	if (rc != 1)
		ck_assert_ptr_null(r->body);
	return (rc);
}

START_TEST(t_content_length)
{
	struct http_resp r;

	ck_assert_int_eq(parse("HTTP/1.1 201 Created\r\nContent-Length: 5"
	    "\r\nRetry-After: 7\r\nX-RateLimit-Remaining: 0\r\n"
	    "X-RateLimit-Reset: 1700000000\r\n\r\nhello", 0, &r), 1);
	ck_assert_int_eq(r.status, 201);
	ck_assert_str_eq(r.body, "hello");
	ck_assert_uint_eq(r.len, 5);
	ck_assert_int_eq(r.retry_after, 7);
	ck_assert_int_eq(r.ratelimit_remaining, 0);
	ck_assert_int_eq(r.ratelimit_reset, 1700000000);
	http_resp_free(&r);
	/* Bytes past the length are not the body. */
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"
	    "okEXTRA", 0, &r), 1);
	ck_assert_str_eq(r.body, "ok");
	http_resp_free(&r);
	/* The same length twice is one length. */
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "Content-Length:  2 \r\n\r\nok", 0, &r), 1);
	http_resp_free(&r);
}
END_TEST

START_TEST(t_incomplete)
{
	struct http_resp r;

	ck_assert_int_eq(parse("", 0, &r), 0);
	ck_assert_int_eq(parse("", 1, &r), -1);
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Le", 0, &r), 0);
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Le", 1, &r), -1);
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
	    "short", 0, &r), 0);
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
	    "short", 1, &r), -1);
	ck_assert(strstr(err, "5 of 10") != NULL);
	/* No framing: the body ends with the connection. */
	ck_assert_int_eq(parse("HTTP/1.0 200 OK\r\n\r\nall of it", 0, &r), 0);
	ck_assert_int_eq(parse("HTTP/1.0 200 OK\r\n\r\nall of it", 1, &r), 1);
	ck_assert_str_eq(r.body, "all of it");
	http_resp_free(&r);
}
END_TEST

START_TEST(t_chunked)
{
	struct http_resp r;
	const char	*ok = "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n"
	    "\r\n3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
	char		 part[256];
	size_t		 i;

	ck_assert_int_eq(parse(ok, 0, &r), 1);
	ck_assert_str_eq(r.body, "abc0123456789");
	ck_assert_uint_eq(r.len, 13);
	http_resp_free(&r);
	/* Every cut short of the end asks for more, or is refused at EOF. */
	for (i = strstr(ok, "\r\n\r\n") - ok + 4; i < strlen(ok); i++) {
		memcpy(part, ok, i);
		part[i] = '\0';
		ck_assert_int_eq(parse(part, 0, &r), 0);
		ck_assert_int_eq(parse(part, 1, &r), -1);
	}
}
END_TEST

static const char *bad[] = {
	/* chunk sizes */
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n"
	    "0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nabcde\r\n"
	    "0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nabc\r\n"
	    "0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "fffffffffffffffffffff\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "100000000\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "7fffffff\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "0x3\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    " 3\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "3\r\nabcdef\r\n0\r\n\r\n",		/* longer than it said */
	/* framing */
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3"
	    "\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"
	    "abcd",
	"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nContent-Length: 3x\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nContent-Length: 5000000\r\n\r\nabc",
	/* status lines */
	"HTTP/2 200 OK\r\n\r\n",
	"HTTP/1.1 20 OK\r\n\r\n",
	"HTTP/1.1 2000 OK\r\n\r\n",
	"HTTP/1.1 099 Odd\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\n",
	"HTTP/1.1 -20 OK\r\n\r\n",
	"SSH-2.0-OpenSSH\r\n\r\n",
	/* header lines */
	"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
	"HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
	"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: 1\r\n folded: 2\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length : 3\r\n\r\nabc",
};

START_TEST(t_malformed)
{
	struct http_resp r;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(bad[i], 1, &r) == -1, "taken: %zu", i);
		ck_assert_msg(parse(bad[i], 0, &r) == -1, "waited: %zu", i);
	}
}
END_TEST

START_TEST(t_nul_and_sizes)
{
	struct http_resp r;
	char		*big;
	const char	 nul[] = "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n";
	size_t		 n = 70 * 1024;

	ck_assert_int_eq(http_parse(nul, sizeof(nul) - 1, 1, &r, err,
	    sizeof(err)), -1);
	/* Headers that never end, past the bound: refused, not waited. */
	ck_assert_ptr_nonnull(big = malloc(n + 1));
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(big + 20, 'a', n - 20);
	big[n] = '\0';
	ck_assert_int_eq(parse(big, 0, &r), -1);
	free(big);
	/* 204: no body, whatever follows. */
	ck_assert_int_eq(parse("HTTP/1.1 204 No Content\r\n\r\n", 0, &r), 1);
	ck_assert_uint_eq(r.len, 0);
	ck_assert_str_eq(r.body, "");
	http_resp_free(&r);
	/* 204 and 304 framed as chunked: still no body (fuzz_http found
	 * the chunks copied into the empty one). */
	ck_assert_int_eq(parse("HTTP/1.1 304 Not Modified\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	    0, &r), 1);
	ck_assert_uint_eq(r.len, 0);
	ck_assert_str_eq(r.body, "");
	http_resp_free(&r);
	/* A Retry-After that is not a number is none. */
	ck_assert_int_eq(parse("HTTP/1.1 503 Busy\r\nRetry-After: soon\r\n"
	    "Content-Length: 0\r\n\r\n", 0, &r), 1);
	ck_assert_int_eq(r.retry_after, -1);
	http_resp_free(&r);
}
END_TEST

/*
 * A body that ends with the connection is whole only if TLS said so
 * (close_notify); one cut by a bare close is refused, naming it.  A
 * body framed otherwise needs no close_notify: its framing says where
 * it ends.
 */
START_TEST(t_close_notify)
{
	struct http_resp r;
	char		 part[128];
	const char	*cd = "HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\n{\"full\":1}";
	size_t		 i;

	ck_assert_int_eq(parse(cd, HTTP_EOF_CLEAN, &r), 1);
	ck_assert_str_eq(r.body, "{\"full\":1}");
	http_resp_free(&r);
	/* Whole, or cut anywhere in the body: without close_notify, no. */
	for (i = strstr(cd, "\r\n\r\n") - cd + 4; i <= strlen(cd); i++) {
		memcpy(part, cd, i);
		part[i] = '\0';
		ck_assert_int_eq(parse(part, 0, &r), 0);
		ck_assert_int_eq(parse(part, HTTP_EOF_UNCLEAN, &r), -1);
		ck_assert_msg(strstr(err, "close_notify") != NULL, "%s", err);
	}
	ck_assert_int_eq(parse("HTTP/1.0 200 OK\r\n\r\n", HTTP_EOF_UNCLEAN,
	    &r), -1);
	/* Framed bodies, whole: the close does not matter. */
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "\r\nok", HTTP_EOF_UNCLEAN, &r), 1);
	http_resp_free(&r);
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", HTTP_EOF_UNCLEAN,
	    &r), 1);
	http_resp_free(&r);
	ck_assert_int_eq(parse("HTTP/1.1 204 No Content\r\n\r\n",
	    HTTP_EOF_UNCLEAN, &r), 1);
	http_resp_free(&r);
	/* Framed and cut: refused as before, whichever the close. */
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
	    "\r\nok", HTTP_EOF_UNCLEAN, &r), -1);
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
	    "\r\nok", HTTP_EOF_CLEAN, &r), -1);
}
END_TEST

/*
 * Location, X-Accepted-GitHub-Permissions and the Link header's next
 * page, as GitHub sends them ("Using pagination in the REST API"): the
 * next page found among the others, in any order and spelling; none
 * when absent; refused (next_bad) when malformed, too long, or given
 * twice.  Controls in a header never reach a copy.
 */
START_TEST(t_link_location)
{
	struct http_resp r;
	const char	*ok[] = {
	    "<https://h/r?page=2>; rel=\"next\", <https://h/r?page=9>; "
	    "rel=\"last\"",
	    "<https://h/r?page=1>; rel=\"first\",<https://h/r?page=2>;"
	    "rel=next",
	    "<https://h/r?page=2>; rel=\"prev next\"",
	    "<https://h/r?page=2>; title=\"a, b\"; REL=\"Next\"",
	};
	const char	*malformed[] = {
	    "https://h/r?page=2; rel=\"next\"",
	    "<https://h/r?page=2; rel=\"next\"",
	    "<https://h/r\x01?page=2>; rel=\"next\"",
	};
	char		 buf[3000], big[1100];
	size_t		 i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nLink: %s\r\n"
		    "Content-Length: 0\r\n\r\n", ok[i]);
		ck_assert_int_eq(parse(buf, 0, &r), 1);
		ck_assert_msg(strcmp(r.next, "https://h/r?page=2") == 0 &&
		    r.link == 1 && !r.next_bad, "%s: %s", ok[i], r.next);
		http_resp_free(&r);
	}
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nLink: <https://h/r?page=1>"
	    "; rel=\"prev\"\r\nContent-Length: 0\r\n\r\n", 0, &r), 1);
	ck_assert_msg(r.next[0] == '\0' && r.link == 1 && !r.next_bad, "%s",
	    r.next);
	http_resp_free(&r);
	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nLink: %s\r\n"
		    "Content-Length: 0\r\n\r\n", malformed[i]);
		ck_assert_int_eq(parse(buf, 0, &r), 1);
		ck_assert_msg(r.next[0] == '\0' && r.next_bad, "%s",
		    malformed[i]);
		http_resp_free(&r);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nLink: <https://h/%s>; "
	    "rel=\"next\"\r\nContent-Length: 0\r\n\r\n", big);
	ck_assert_int_eq(parse(buf, 0, &r), 1);
	ck_assert(r.next[0] == '\0' && r.next_bad);
	http_resp_free(&r);
	ck_assert_int_eq(parse("HTTP/1.1 200 OK\r\nLink: <https://h/2>; rel="
	    "next\r\nLink: <https://h/3>; rel=next\r\nContent-Length: 0\r\n"
	    "\r\n", 0, &r), 1);
	ck_assert(r.next[0] == '\0' && r.next_bad);
	http_resp_free(&r);
	ck_assert_int_eq(parse("HTTP/1.1 301 Moved\r\nLocation: https://h/"
	    "repositories/1\r\nX-Accepted-GitHub-Permissions: checks=write"
	    "\r\nContent-Length: 0\r\n\r\n", 0, &r), 1);
	ck_assert_str_eq(r.location, "https://h/repositories/1");
	ck_assert_str_eq(r.accepted, "checks=write");
	http_resp_free(&r);
	ck_assert_int_eq(parse("HTTP/1.1 301 Moved\r\nLocation: https://h/\x1b"
	    "[2J\r\nContent-Length: 0\r\n\r\n", 0, &r), 1);
	ck_assert_str_eq(r.location, "");
	http_resp_free(&r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("http");
	TCase	*tc = tcase_create("parse");
	SRunner	*sr;
	int	 nf;

	tcase_add_test(tc, t_content_length);
	tcase_add_test(tc, t_incomplete);
	tcase_add_test(tc, t_chunked);
	tcase_add_test(tc, t_malformed);
	tcase_add_test(tc, t_nul_and_sizes);
	tcase_add_test(tc, t_close_notify);
	tcase_add_test(tc, t_link_location);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (nf == 0 ? 0 : 1);
}
