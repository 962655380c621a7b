/*
 * What factory-gateway parses of the agent's and the provider's bytes
 * (gateway/proto.c) and of the gateway's messages (libcommon/gwmsg.c).
 * Byte 0 picks the target, byte 1 an API or a split, the rest is the
 * input.  Promises checked:
 *  - a request body that parses has a valid model, and the document
 *    forwarded parses again with that same model (what was checked is
 *    what goes);
 *  - the usage read from an event stream does not depend on how the
 *    stream is cut into reads, stays within its bounds, and a stream
 *    beyond a bound is refused, never grown;
 *  - a gateway message that decodes has every field in range and
 *    composes again to the bytes read;
 *  - every error text the agent's bytes can reach (a refusal's reason,
 *    the field named, Gemini's path read) is printable ASCII, and the
 *    error body made of it is JSON whatever the bytes: it never fails
 *    (the gateway once exited on an agent's key cut inside a UTF-8
 *    character).
 */
#include "fuzz.h"
#include "gwmsg.h"
#include "../../gateway/proto.h"

static void
printable(const char *s, const char *what)
{
	for (; *s != '\0'; s++)
		FUZZ_ASSERT(*s >= 0x20 && *s < 0x7f, "%s: byte 0x%02x",
		    what, (unsigned char)*s);
}

/* The body of an error answer: JSON, printable, its message escaped. */
static void
fuzz_error_body(const char *msg)
{
	json_t	*doc;
	char	*s;
	size_t	 n = strlen(msg);

	/* Each kind's shape, some status: all have error.message. */
	FUZZ_ASSERT((s = proto_error_body(1 + (int)(n % 4),
	    400 + (int)(n % 200), GW_BAD_REQUEST, msg)) != NULL,
	    "error body: none made");
	printable(s, "error body");
	FUZZ_ASSERT((doc = json_loads(s, 0, NULL)) != NULL,
	    "error body: not JSON");
	FUZZ_ASSERT(json_is_string(json_object_get(json_object_get(doc,
	    "error"), "message")), "error body: no message");
	json_decref(doc);
	free(s);
}

/*
 * The cache any request asks for, in range, and its output cap: a
 * reason printable, a cap within what was given (the document it
 * leaves is the one checked again below).
 */
static void
fuzz_cap(int api, json_t *doc)
{
	char		 err[160];
	uint64_t	 out;
	int		 rc;

	rc = proto_cache_asked(api, doc);
	FUZZ_ASSERT(rc >= 0 && rc <= 2, "cache asked: %d", rc);
	rc = proto_cap_output(api, doc, 1000, GW_MAXOUT_DEFAULT, &out, err,
	    sizeof(err));
	if (rc == -1) {
		printable(err, "cap: reason");
		fuzz_error_body(err);
	} else if (rc == 0)
		FUZZ_ASSERT(out <= 1000 * (uint64_t)PROTO_MAXCHOICES,
		    "cap: beyond what was given");
}

/* A Gemini target: a reason printable, a model valid. */
static void
fuzz_gemini_target(const char *uri)
{
	char		 model[GW_MODELMAX];
	const char	*why;
	int		 stream;

	if ((why = proto_gemini_target(uri, model, sizeof(model),
	    &stream)) != NULL) {
		printable(why, "gemini target: reason");
		return;
	}
	FUZZ_ASSERT(gw_valid_model(model), "gemini target: bad model kept");
}

static void
fuzz_request(int api, const uint8_t *p, size_t len)
{
	char	 model[GW_MODELMAX], model2[GW_MODELMAX], err[160], *s;
	char	 where[160];
	json_t	*doc, *again;
	int	 stream, stream2;
	uint64_t pred;

	doc = proto_request(api, (const char *)p, len, model, sizeof(model),
	    &stream, err, sizeof(err));
	if (doc == NULL) {
		printable(err, "request: reason");
		fuzz_error_body(err);
		return;
	}
	/* Gemini's model is its path's: none is read from the body. */
	if (api == API_GEMINI)
		strlcpy(model, "-", sizeof(model));
	else
		FUZZ_ASSERT(gw_valid_model(model), "request: bad model kept");
	fuzz_cap(api, doc);
	if (proto_byref(api, doc, where, sizeof(where))) {
		FUZZ_ASSERT(memchr(where, '\0', sizeof(where)) != NULL &&
		    where[0] != '\0', "byref: no field named");
		printable(where, "byref: field");
		fuzz_error_body(where);
	}
	if (proto_prediction(api, doc, &pred, where, sizeof(where))) {
		FUZZ_ASSERT(memchr(where, '\0', sizeof(where)) != NULL &&
		    where[0] != '\0', "prediction: no field named");
		printable(where, "prediction: field");
		fuzz_error_body(where);
	}
	FUZZ_ASSERT(pred <= PROTO_MAXBODY, "prediction: beyond the body");
	FUZZ_ASSERT((s = json_dumps(doc, PROTO_DUMP)) != NULL, "dumps");
	FUZZ_ASSERT(proto_dumped_len(doc) == strlen(s),
	    "dumped_len: not the bytes that go");
	again = proto_request(api, s, strlen(s), model2, sizeof(model2),
	    &stream2, err, sizeof(err));
	FUZZ_ASSERT(again != NULL, "request: forwarded body does not parse");
	if (api == API_GEMINI)
		strlcpy(model2, "-", sizeof(model2));
	FUZZ_ASSERT(strcmp(model, model2) == 0 && stream == stream2,
	    "request: forwarded body says another model");
	json_decref(again);
	json_decref(doc);
	free(s);
}

static void
fuzz_meter(int api, int sse, size_t step, const uint8_t *p, size_t len)
{
	struct meter	 whole, cut;
	size_t		 off, n;
	int		 e1, e2;

	meter_init(&whole, api, sse);
	e1 = meter_feed(&whole, p, len);
	meter_end(&whole);
	meter_init(&cut, api, sse);
	e2 = 0;
	for (off = 0; off < len && e2 == 0; off += n) {
		n = len - off < step ? len - off : step;
		e2 = meter_feed(&cut, p + off, n);
	}
	meter_end(&cut);
	FUZZ_ASSERT(e1 == e2 && whole.error == cut.error,
	    "meter: a bound depends on the reads");
	if (!whole.error)
		FUZZ_ASSERT(meter_in(&whole) == meter_in(&cut) &&
		    meter_out(&whole) == meter_out(&cut),
		    "meter: usage depends on how the stream is cut");
	FUZZ_ASSERT(meter_in(&whole) <= PROTO_MAXCOUNT, "meter: count");
	FUZZ_ASSERT(whole.datalen <= PROTO_MAXEVENT &&
	    whole.bodylen <= PROTO_MAXBODY, "meter: bound exceeded");
	(void)proto_cost(meter_in(&whole), meter_out(&whole), UINT64_MAX,
	    UINT64_MAX);
	meter_free(&whole);
	meter_free(&cut);
}

static void
mkimsg(struct imsg *imsg, uint32_t type, const uint8_t *p, size_t len)
{
	memset(imsg, 0, sizeof(*imsg));
	imsg->hdr.type = type;
	imsg->hdr.len = IMSG_HEADER_SIZE + len;
	FUZZ_ASSERT((imsg->buf = ibuf_open(len > 0 ? len : 1)) != NULL,
	    "ibuf_open");
	FUZZ_ASSERT(ibuf_add(imsg->buf, p, len) == 0, "ibuf_add");
	imsg->data = len > 0 ? ibuf_data(imsg->buf) : NULL;
}

static void
same(struct ibuf *b, const uint8_t *p, size_t len, const char *what)
{
	FUZZ_ASSERT(b != NULL, "%s: decoded but cannot compose", what);
	FUZZ_ASSERT(ibuf_size(b) == len && memcmp(ibuf_data(b), p, len) == 0,
	    "%s: composed again, the bytes differ", what);
	ibuf_free(b);
}

static void
fuzz_msg(int which, const uint8_t *p, size_t len)
{
	struct imsg		 imsg;
	struct gw_provider	 pr;
	struct gw_grant		 g;
	struct gw_token		 t;
	struct gw_usage		 u;
	char			 err[160], s[GW_ERRMAX];

	mkimsg(&imsg, 0, p, len);
	switch (which % 5) {
	case 0:
		if (gw_provider_decode(&imsg, &pr, err, sizeof(err)) == 0)
			same(gw_provider_compose(&pr), p, len, "provider");
		break;
	case 1:
		if (gw_grant_decode(&imsg, &g, err, sizeof(err)) == 0) {
			FUZZ_ASSERT(g.nmodels <= GW_MAXMODELS, "grant: count");
			same(gw_grant_compose(&g), p, len, "grant");
		}
		break;
	case 2:
		if (gw_token_decode(&imsg, &t, err, sizeof(err)) == 0) {
			FUZZ_ASSERT(gw_valid_token(t.token), "token");
			same(gw_token_compose(&t), p, len, "token");
		}
		break;
	case 3:
		if (gw_usage_decode(&imsg, &u, err, sizeof(err)) == 0) {
			FUZZ_ASSERT(gw_outcome_name(u.outcome) != NULL &&
			    u.status >= 100 && u.status <= 599 &&
			    u.estimated <= 1, "usage");
			same(gw_usage_compose(&u), p, len, "usage");
		}
		break;
	default:
		if (gw_error_decode(&imsg, s, sizeof(s), err,
		    sizeof(err)) == 0)
			FUZZ_ASSERT(strlen(s) < GW_ERRMAX, "error");
		break;
	}
	ibuf_free(imsg.buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 uri[256];
	size_t	 n;

	if (size < 2)
		return (0);
	switch (data[0] % 5) {
	case 0:
		fuzz_request(1 + data[1] % 4, data + 2, size - 2);
		break;
	case 1:
		fuzz_meter(1 + data[1] % 4, 1, 1 + data[1] / 4, data + 2,
		    size - 2);
		break;
	case 2:
		fuzz_meter(1 + data[1] % 4, 0, 1 + data[1], data + 2,
		    size - 2);
		break;
	case 3:
		fuzz_msg(data[1], data + 2, size - 2);
		break;
	default:
		n = size - 2 < sizeof(uri) - 1 ? size - 2 : sizeof(uri) - 1;
		memcpy(uri, data + 2, n);
		uri[n] = '\0';
		(void)proto_route(1 + data[1] % 4, data[1] & 0x80 ? "GET" :
		    "POST", uri);
		fuzz_gemini_target(uri);
		/* Any bytes as a message: the body is made all the same. */
		fuzz_error_body(uri);
		break;
	}
	return (0);
}
