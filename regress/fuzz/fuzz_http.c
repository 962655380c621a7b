/*
 * The publisher's HTTP client (publisher/http.c) reading a forge's
 * answer: http_parse() takes the bytes received so far and whether the
 * connection ended there.  The input is one answer; it is parsed whole
 * (with and without the connection's end) and cut in two, and what
 * the parser promises is checked: a complete answer has a status of
 * 200 or more, a NUL-terminated body within the bound, and stays the
 * same answer when more bytes or the end of the connection follow.
 */
#include "../../publisher/http.c"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return (0);
}

static int
parse(const uint8_t *data, size_t size, int eof, struct http_resp *r)
{
	char	 err[256];
	int	 rc;

	err[0] = '\0';
	rc = http_parse((const char *)data, size, eof, r, err, sizeof(err));
	FUZZ_ASSERT(rc == -1 || rc == 0 || rc == 1, "rc %d", rc);
	if (rc == -1)
		FUZZ_ASSERT(err[0] != '\0' && r->body == NULL,
		    "a refusal without a reason, or half an answer");
	if (rc == 0)
		FUZZ_ASSERT(!eof && r->body == NULL, "incomplete at the end");
	if (rc == 1) {
		FUZZ_ASSERT(r->status >= 200 && r->status <= 999, "status %d",
		    r->status);
		FUZZ_ASSERT(r->body != NULL && r->len <= HTTP_BODY_MAX &&
		    r->body[r->len] == '\0', "body");
		FUZZ_ASSERT(r->retry_after >= -1 &&
		    r->ratelimit_remaining >= -1 && r->ratelimit_reset >= -1,
		    "headers");
	}
	return (rc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_resp	 whole, open, half;
	int			 rw, ro, rh;

	rw = parse(data, size, 1, &whole);
	ro = parse(data, size, 0, &open);
	rh = parse(data, size / 2, 0, &half);
	/* What is complete before the end is the same answer at the end. */
	if (ro == 1)
		FUZZ_ASSERT(rw == 1 && whole.status == open.status &&
		    whole.len == open.len &&
		    memcmp(whole.body, open.body, whole.len) == 0,
		    "the end of the connection changed a complete answer");
	if (rh == 1)
		FUZZ_ASSERT(ro == 1 && open.status == half.status &&
		    open.len == half.len &&
		    memcmp(open.body, half.body, open.len) == 0,
		    "more bytes changed a complete answer");
	http_resp_free(&whole);
	http_resp_free(&open);
	http_resp_free(&half);
	return (0);
}
