/*
 * The publisher's reading of an HTTP answer from the forge
 * (publisher/http.c: http_parse, pure): status line, headers,
 * Content-Length, chunked or connection-delimited bodies, each bounded.
 * The client parses what it has each time more arrives, then once more
 * at the end of the connection; so, for every prefix the client could
 * hold, the answer must not depend on where the reads fell: a prefix
 * that is complete gives the answer the whole gives, and one refused
 * means the whole is refused.
 */
#include "../../publisher/publisher.h"
#include "fuzz.h"

#define SPLITS_ALL	512	/* up to this size, every prefix is tried */
#define SPLITS		64

struct answer {
	int		 rc;
	struct http_resp r;
	char		 err[256];
};

static void
parse(const char *buf, size_t len, int eof, struct answer *a)
{
	a->err[0] = '\0';
	a->rc = http_parse(buf, len, eof, &a->r, a->err, sizeof(a->err));
	FUZZ_ASSERT(a->rc == 1 || a->rc == 0 || a->rc == -1, "rc %d", a->rc);
	FUZZ_ASSERT(a->rc != 0 || !eof, "more needed after the end");
	if (a->rc == 1) {
		FUZZ_ASSERT(a->r.status >= 200 && a->r.status <= 999 &&
		    a->r.body != NULL && a->r.body[a->r.len] == '\0' &&
		    a->r.len <= 4 * 1024 * 1024 && a->r.len <= len,
		    "answer: status %d, %zu bytes", a->r.status, a->r.len);
		FUZZ_ASSERT(a->r.retry_after >= -1 &&
		    a->r.ratelimit_remaining >= -1 &&
		    a->r.ratelimit_reset >= -1, "headers");
		return;
	}
	FUZZ_ASSERT(a->r.body == NULL, "a body without an answer");
	/* The reason may quote the answer: publisher.c escapes it. */
	if (a->rc == -1)
		FUZZ_ASSERT(a->err[0] != '\0', "refused without a reason");
}

static void
same(const struct answer *a, const struct answer *b, size_t k)
{
	FUZZ_ASSERT(a->rc == b->rc && a->r.status == b->r.status &&
	    a->r.len == b->r.len && memcmp(a->r.body, b->r.body,
	    a->r.len) == 0 && a->r.retry_after == b->r.retry_after &&
	    a->r.ratelimit_remaining == b->r.ratelimit_remaining &&
	    a->r.ratelimit_reset == b->r.ratelimit_reset,
	    "complete after %zu bytes, but the whole answer differs", k);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct answer	 whole, part;
	const char	*buf = (const char *)data;
	size_t		 k, step;

	parse(buf, size, 1, &whole);
	step = size <= SPLITS_ALL ? 1 : size / SPLITS;
	for (k = 0; k < size; k += step) {
		parse(buf, k, 0, &part);
		if (part.rc == 1)
			same(&part, &whole, k);
		else if (part.rc == -1)
			FUZZ_ASSERT(whole.rc == -1, "refused after %zu bytes "
			    "(%s), but the whole is not", k, part.err);
		http_resp_free(&part.r);
	}
	http_resp_free(&whole.r);
	return (0);
}
