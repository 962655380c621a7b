/*
 * The model APIs as far as the gateway reads them (proto.h).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "gwmsg.h"
#include "proto.h"

/*
 * An agent's key or value in an error text: its first PROTO_NAMEMAX
 * bytes, escaped (esc.h), so the text stays printable ASCII wherever
 * it is cut and whatever bytes the agent chose.
 */
static const char *
proto_name(const char *s, char *dst, size_t len)
{
	size_t	 n = strlen(s);

	if (n > PROTO_NAMEMAX)
		n = PROTO_NAMEMAX;
	if (esc_encode(s, n, dst, len) == -1)
		strlcpy(dst, "?", len);
	return (dst);
}

/* The target's path (before any query) is p. */
static int
proto_path_is(const char *target, const char *p)
{
	size_t	 n = strcspn(target, "?");

	return (n == strlen(p) && strncmp(target, p, n) == 0);
}

/*
 * Only the calls that are metered, and the model list: anything else
 * of a provider (embeddings, images, files, batches) would spend
 * without a usage field we read.  Routed on the path: the query is
 * proto_query's.
 */
int
proto_route(uint8_t kind, const char *method, const char *target)
{
	int	 get = strcmp(method, "GET") == 0;
	int	 post = strcmp(method, "POST") == 0;
	size_t	 n = strcspn(target, "?");

	if (get && (proto_path_is(target, "/v1/models") ||
	    (n > 11 && strncmp(target, "/v1/models/", 11) == 0)))
		return (API_NONE);
	if (!post)
		return (-1);
	if (kind == GW_OPENAI && proto_path_is(target, "/v1/chat/completions"))
		return (API_CHAT);
	if (kind == GW_OPENAI && proto_path_is(target, "/v1/responses"))
		return (API_RESPONSES);
	if (kind == GW_ANTHROPIC && proto_path_is(target, "/v1/messages"))
		return (API_MESSAGES);
	return (-1);
}

/*
 * The query parameters each API documents for the endpoint: Messages'
 * "beta" (the Anthropic SDKs' beta path, "?beta=true", which Claude
 * Code sends on every request).  No other endpoint takes one.
 */
static const char *proto_query_messages[] = { "beta", NULL };

const char *
proto_query(int api, const char *target, char *bad, size_t badlen)
{
	const char	**allow = api == API_MESSAGES ? proto_query_messages :
			    NULL;
	const char	 *q = strchr(target, '?'), *const *a;
	char		  name[PROTO_NAMEMAX + 1];
	size_t		  n, k;

	if (q == NULL)
		return (NULL);
	for (q++; *q != '\0'; q += n + (q[n] == '&')) {
		n = strcspn(q, "&");
		k = strcspn(q, "=&");
		if (k > PROTO_NAMEMAX)
			k = PROTO_NAMEMAX;
		memcpy(name, q, k);
		name[k] = '\0';
		for (a = allow; a != NULL && *a != NULL; a++)
			if (strcmp(*a, name) == 0)
				break;
		if (allow == NULL || *a == NULL) {
			(void)proto_name(name, bad, badlen);
			return (bad);
		}
	}
	return (NULL);
}

/* A streaming chat completion reports usage only when asked to. */
static int
proto_want_usage(json_t *doc)
{
	json_t	*so;

	so = json_object_get(doc, "stream_options");
	if (so == NULL || json_is_null(so)) {
		so = json_object();
		if (so == NULL || json_object_set_new(doc, "stream_options",
		    so) == -1)
			return (-1);
	}
	if (!json_is_object(so))
		return (-1);
	return (json_object_set_new(so, "include_usage", json_true()));
}

json_t *
proto_request(int api, const char *body, size_t len, char *model,
    size_t msize, int *stream, char *err, size_t errlen)
{
	json_t		*doc, *m, *s;
	json_error_t	 jerr;
	char		 text[PROTO_NAMEBUF];

	*stream = 0;
	if (len > PROTO_MAXBODY) {
		snprintf(err, errlen, "body of %zu bytes", len);
		return (NULL);
	}
	if ((doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		/* jansson quotes the bytes near the error: the agent's */
		snprintf(err, errlen, "body: not JSON: %s",
		    proto_name(jerr.text, text, sizeof(text)));
		return (NULL);
	}
	if (!json_is_object(doc)) {
		snprintf(err, errlen, "body: not a JSON object");
		goto fail;
	}
	m = json_object_get(doc, "model");
	if (!json_is_string(m) || json_string_length(m) >= msize ||
	    strlen(json_string_value(m)) != json_string_length(m) ||
	    !gw_valid_model(json_string_value(m))) {
		snprintf(err, errlen, "body: no valid \"model\"");
		goto fail;
	}
	strlcpy(model, json_string_value(m), msize);
	if ((s = json_object_get(doc, "stream")) != NULL) {
		if (!json_is_boolean(s)) {
			snprintf(err, errlen, "body: \"stream\" not a boolean");
			goto fail;
		}
		*stream = json_is_true(s);
	}
	/*
	 * A background response is fetched later by polling, past the
	 * gateway: its usage is never seen, so it is not forwarded.
	 */
	if (api == API_RESPONSES &&
	    (s = json_object_get(doc, "background")) != NULL &&
	    !json_is_null(s)) {
		if (!json_is_boolean(s)) {
			snprintf(err, errlen, "body: \"background\" not a "
			    "boolean");
			goto fail;
		}
		if (json_is_true(s)) {
			snprintf(err, errlen, "body: \"background\": true is "
			    "refused: its answer is polled for later and its "
			    "usage cannot be metered");
			goto fail;
		}
	}
	if (api == API_CHAT && *stream && proto_want_usage(doc) == -1) {
		snprintf(err, errlen, "body: bad \"stream_options\"");
		goto fail;
	}
	return (doc);
 fail:
	json_decref(doc);
	return (NULL);
}

/*
 * {"error": {"message": M, "type": T, "code": T}}: M as it is when it
 * is printable ASCII (the names in it escaped already, proto_name),
 * else escaped whole (esc.h), so any bytes encode; NULL only when
 * memory ran out.
 */
char *
proto_error_body(const char *type, const char *msg)
{
	json_t	*doc;
	char	*m, *s;
	size_t	 n = strlen(msg), i;

	if (n > PROTO_MSGMAX)
		n = PROTO_MSGMAX;
	for (i = 0; i < n; i++)
		if (msg[i] < 0x20 || msg[i] >= 0x7f)
			break;
	if ((m = i == n ? strndup(msg, n) : esc_strdup(msg, n)) == NULL)
		return (NULL);
	doc = json_pack("{s:{s:s,s:s,s:s}}", "error", "message", m,
	    "type", type, "code", type);
	free(m);
	if (doc == NULL)
		return (NULL);
	s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return (s);
}

static int
proto_count_cb(const char *buf, size_t len, void *arg)
{
	size_t	*n = arg;

	*n += len;
	return (0);
}

size_t
proto_dumped_len(json_t *doc)
{
	size_t	 n = 0;

	if (json_dump_callback(doc, proto_count_cb, &n, PROTO_DUMP) == -1)
		return (SIZE_MAX);
	return (n);
}

uint64_t
proto_overhead(int api, json_t *doc)
{
	json_t	*t = json_object_get(doc, "tools");

	if (api == API_MESSAGES && json_is_array(t) && json_array_size(t) > 0)
		return (PROTO_TOOLS_PROMPT);
	return (0);
}

#define PROTO_BYREF_DEPTH 4	/* content in content (tool results) */

/* Parts whose tokens are not their bytes: images, audio, files, refs. */
static const char *proto_byref_types[] = {
	"image_url", "input_image", "input_file", "file", "input_audio",
	"image", "document", "item_reference", "container_upload",
	"search_result", NULL
};

/* Top-level fields that bring in what the gateway never sees. */
static const char *proto_byref_keys[] = {
	"previous_response_id", "conversation", "prompt",
	"web_search_options", "mcp_servers", "container", NULL
};

static int
proto_listed(const char **list, const char *s)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return (1);
	return (0);
}

static int	proto_byref_parts(int, json_t *, const char *, int, char *,
		    size_t);

/* One part of a message, an input item or a content block. */
static int
proto_byref_part(int api, json_t *v, const char *at, int depth, char *where,
    size_t wlen)
{
	const char	*t;
	char		 sub[160];

	if (!json_is_object(v))
		return (0);
	t = json_string_value(json_object_get(v, "type"));
	if (t != NULL && proto_listed(proto_byref_types, t)) {
		snprintf(where, wlen, "%s.type: %s", at, t);
		return (1);
	}
	if (json_object_get(v, "file_id") != NULL) {
		snprintf(where, wlen, "%s.file_id", at);
		return (1);
	}
	/* Responses: an item by its id alone is an item reference. */
	if (api == API_RESPONSES && depth == 0 && t == NULL &&
	    json_object_get(v, "role") == NULL) {
		snprintf(where, wlen, "%s: an item reference", at);
		return (1);
	}
	/* Deeper than we look: not known to be text, so not taken. */
	if (depth >= PROTO_BYREF_DEPTH) {
		if (!json_is_array(json_object_get(v, "content")) &&
		    !json_is_array(json_object_get(v, "output")))
			return (0);
		snprintf(where, wlen, "%s: parts nested deeper than %d", at,
		    PROTO_BYREF_DEPTH);
		return (1);
	}
	snprintf(sub, sizeof(sub), "%s.content", at);
	if (proto_byref_parts(api, json_object_get(v, "content"), sub,
	    depth + 1, where, wlen))
		return (1);
	snprintf(sub, sizeof(sub), "%s.output", at);
	return (proto_byref_parts(api, json_object_get(v, "output"), sub,
	    depth + 1, where, wlen));
}

static int
proto_byref_parts(int api, json_t *a, const char *at, int depth,
    char *where, size_t wlen)
{
	json_t	*v;
	size_t	 i;
	char	 sub[160];

	if (!json_is_array(a))
		return (0);
	json_array_foreach(a, i, v) {
		snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
		if (proto_byref_part(api, v, sub, depth, where, wlen))
			return (1);
	}
	return (0);
}

/* Tools the agent runs itself are text; any other runs at the provider. */
static int
proto_byref_tools(int api, json_t *a, char *where, size_t wlen)
{
	json_t		*v;
	const char	*t;
	char		 name[PROTO_NAMEBUF];
	size_t		 i;

	json_array_foreach(a, i, v) {
		t = json_string_value(json_object_get(v, "type"));
		if (api == API_MESSAGES && t == NULL)
			continue;	/* a custom tool */
		if (t != NULL && (strcmp(t, "function") == 0 ||
		    strcmp(t, "custom") == 0))
			continue;
		snprintf(where, wlen, "tools[%zu].type: %s", i,
		    t != NULL ? proto_name(t, name, sizeof(name)) : "(none)");
		return (1);
	}
	return (0);
}

int
proto_byref(int api, json_t *doc, char *where, size_t wlen)
{
	const char	**k;
	json_t		 *v;

	for (k = proto_byref_keys; *k != NULL; k++)
		if ((v = json_object_get(doc, *k)) != NULL &&
		    !json_is_null(v)) {
			snprintf(where, wlen, "%s", *k);
			return (1);
		}
	if (proto_byref_tools(api, json_object_get(doc, "tools"), where,
	    wlen))
		return (1);
	switch (api) {
	case API_CHAT:
		return (proto_byref_parts(api, json_object_get(doc,
		    "messages"), "messages", 0, where, wlen));
	case API_RESPONSES:
		return (proto_byref_parts(api, json_object_get(doc, "input"),
		    "input", 0, where, wlen));
	case API_MESSAGES:
		return (proto_byref_parts(api, json_object_get(doc,
		    "messages"), "messages", 0, where, wlen) ||
		    proto_byref_parts(api, json_object_get(doc, "system"),
		    "system", 0, where, wlen));
	}
	return (0);
}

/* Each key of o one of keys: else its name in *bad. */
static int
proto_only_keys(json_t *o, const char **keys, const char **bad)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(o, k, v)
		if (!proto_listed(keys, k)) {
			*bad = k;
			return (0);
		}
	return (1);
}

/* The shape the estimate reads; 1 with where set if it is not. */
static int
proto_prediction_shape(json_t *p, char *where, size_t wlen)
{
	static const char *pkeys[] = { "type", "content", NULL };
	static const char *tkeys[] = { "type", "text", NULL };
	const char	*t, *bad;
	char		 name[PROTO_NAMEBUF];
	json_t		*c, *v;
	size_t		 i;

	if (!json_is_object(p)) {
		snprintf(where, wlen, "prediction: not an object");
		return (1);
	}
	if (!proto_only_keys(p, pkeys, &bad)) {
		snprintf(where, wlen, "prediction.%s: not a field of a "
		    "prediction", proto_name(bad, name, sizeof(name)));
		return (1);
	}
	t = json_string_value(json_object_get(p, "type"));
	if (t == NULL || strcmp(t, "content") != 0) {
		snprintf(where, wlen, "prediction.type: not \"content\"");
		return (1);
	}
	c = json_object_get(p, "content");
	if (json_is_string(c))
		return (0);
	if (!json_is_array(c)) {
		snprintf(where, wlen, "prediction.content: neither a string "
		    "nor an array of text parts");
		return (1);
	}
	json_array_foreach(c, i, v) {
		if (!json_is_object(v)) {
			snprintf(where, wlen, "prediction.content[%zu]: not a "
			    "text part", i);
			return (1);
		}
		if (!proto_only_keys(v, tkeys, &bad)) {
			snprintf(where, wlen, "prediction.content[%zu].%s: "
			    "not a field of a text part", i,
			    proto_name(bad, name, sizeof(name)));
			return (1);
		}
		t = json_string_value(json_object_get(v, "type"));
		if (t == NULL || strcmp(t, "text") != 0) {
			snprintf(where, wlen, "prediction.content[%zu].type: "
			    "not \"text\"", i);
			return (1);
		}
		if (!json_is_string(json_object_get(v, "text"))) {
			snprintf(where, wlen, "prediction.content[%zu].text: "
			    "not a string", i);
			return (1);
		}
	}
	return (0);
}

int
proto_prediction(int api, json_t *doc, uint64_t *tokens, char *where,
    size_t wlen)
{
	json_t	*p;
	size_t	 n;

	*tokens = 0;
	if (api != API_CHAT || (p = json_object_get(doc, "prediction")) ==
	    NULL || json_is_null(p))
		return (0);
	/*
	 * Its bytes as they go bound its text, whatever its shape, and
	 * its tokens: a token a byte at most.
	 */
	if ((n = proto_dumped_len(p)) == SIZE_MAX)
		n = PROTO_MAXBODY;
	*tokens = n;
	return (proto_prediction_shape(p, where, wlen));
}

/*
 * Messages with extended thinking ({"type": "enabled", "budget_tokens":
 * B}) must have max_tokens above B: where the cap lowered max_tokens
 * to B or less, B goes as cap - 1 if thinking still has its least
 * (PROTO_MINTHINK), else the request is refused naming the field.
 * 0, or -1 with a reason in err (doc untouched).
 */
static int
proto_cap_thinking(json_t *doc, uint64_t cap, int lowered, char *err,
    size_t errlen)
{
	json_t		*t, *b;
	const char	*type;
	json_int_t	 x;

	if ((t = json_object_get(doc, "thinking")) == NULL ||
	    !json_is_object(t) || (type = json_string_value(
	    json_object_get(t, "type"))) == NULL ||
	    strcmp(type, "enabled") != 0)
		return (0);
	b = json_object_get(t, "budget_tokens");
	if (b == NULL || !json_is_integer(b) ||
	    (x = json_integer_value(b)) < 1 ||
	    (uint64_t)x > PROTO_MAXCOUNT) {
		snprintf(err, errlen, "body: bad \"thinking.budget_tokens\"");
		return (-1);
	}
	if (!lowered || cap > (uint64_t)x)
		return (0);
	if (cap < PROTO_MINTHINK + 1) {
		snprintf(err, errlen, "body: thinking.budget_tokens: %llu, "
		    "not below the output ceiling of %llu, which leaves "
		    "thinking less than %d", (unsigned long long)x,
		    (unsigned long long)cap, PROTO_MINTHINK);
		return (-1);
	}
	if (json_object_set_new(t, "budget_tokens",
	    json_integer((json_int_t)(cap - 1))) == -1) {
		snprintf(err, errlen, "body: out of memory");
		return (-1);
	}
	return (0);
}

int
proto_cap_output(int api, json_t *doc, uint64_t avail, uint64_t ceiling,
    uint64_t *out, char *err, size_t errlen)
{
	static const char *chat[] = { "max_completion_tokens", "max_tokens",
	    NULL };
	static const char *resp[] = { "max_output_tokens", NULL };
	static const char *msgs[] = { "max_tokens", NULL };
	const char	**keys;
	json_t		 *v;
	json_int_t	  x;
	uint64_t	  n = 1, per, ask = UINT64_MAX, least, cap;
	size_t		  i;

	*out = 0;
	switch (api) {
	case API_CHAT:
		keys = chat;
		break;
	case API_RESPONSES:
		keys = resp;
		break;
	case API_MESSAGES:
		keys = msgs;
		break;
	default:
		return (0);
	}
	if (api == API_CHAT && (v = json_object_get(doc, "n")) != NULL &&
	    !json_is_null(v)) {
		if (!json_is_integer(v) || (x = json_integer_value(v)) < 1 ||
		    x > PROTO_MAXCHOICES) {
			snprintf(err, errlen, "body: bad \"n\"");
			return (-1);
		}
		n = (uint64_t)x;
	}
	for (i = 0; keys[i] != NULL; i++) {
		if ((v = json_object_get(doc, keys[i])) == NULL ||
		    json_is_null(v))
			continue;
		if (!json_is_integer(v) || (x = json_integer_value(v)) < 1 ||
		    (uint64_t)x > PROTO_MAXCOUNT) {
			snprintf(err, errlen, "body: bad \"%s\"", keys[i]);
			return (-1);
		}
		if ((uint64_t)x < ask)
			ask = (uint64_t)x;
	}
	per = avail / n;
	if (per > ceiling)
		per = ceiling;
	if (per > PROTO_MAXCOUNT)
		per = PROTO_MAXCOUNT;
	/* The Responses API takes no max_output_tokens below 16. */
	if (api == API_RESPONSES && ceiling < PROTO_MINOUT) {
		snprintf(err, errlen, "body: max_output_tokens: the model's "
		    "output ceiling of %llu is below %d, the least the "
		    "Responses API takes", (unsigned long long)ceiling,
		    PROTO_MINOUT);
		return (-1);
	}
	least = ask < PROTO_MINOUT ? ask : PROTO_MINOUT;
	/* A model that gives less: only avail can leave too little. */
	if (least > ceiling)
		least = ceiling;
	if (per < least)
		return (1);
	cap = ask < per ? ask : per;
	if (api == API_MESSAGES &&
	    proto_cap_thinking(doc, cap, cap < ask, err, errlen) == -1)
		return (-1);
	if (ask == UINT64_MAX) {
		if (json_object_set_new(doc, keys[0],
		    json_integer((json_int_t)cap)) == -1) {
			snprintf(err, errlen, "body: out of memory");
			return (-1);
		}
		*out = cap * n;
		return (0);
	}
	/*
	 * Every ceiling given goes as the one reserved: a provider may
	 * read any of them (an older server max_tokens alone).
	 */
	for (i = 0; keys[i] != NULL; i++) {
		if ((v = json_object_get(doc, keys[i])) == NULL ||
		    json_is_null(v))
			continue;
		if (json_object_set_new(doc, keys[i],
		    json_integer((json_int_t)cap)) == -1) {
			snprintf(err, errlen, "body: out of memory");
			return (-1);
		}
	}
	*out = cap * n;
	return (0);
}

uint64_t
proto_cost(uint64_t in, uint64_t out, uint64_t pin, uint64_t pout)
{
	unsigned __int128	 c;

	c = ((unsigned __int128)in * pin + (unsigned __int128)out * pout) /
	    1000000;
	if (c > UINT64_MAX)
		return (UINT64_MAX);
	return ((uint64_t)c);
}

void
meter_init(struct meter *m, int api, int sse)
{
	memset(m, 0, sizeof(*m));
	m->api = api;
	m->sse = sse;
}

void
meter_free(struct meter *m)
{
	free(m->line);
	free(m->data);
	free(m->body);
	m->line = m->data = m->body = NULL;
}

/* A count the provider gave: an integer in range, else not taken. */
static int
meter_count(json_t *o, const char *key, uint64_t *v)
{
	json_t		*n = json_object_get(o, key);
	json_int_t	 i;

	if (!json_is_integer(n))
		return (0);
	i = json_integer_value(n);
	if (i < 0 || (uint64_t)i > PROTO_MAXCOUNT)
		return (0);
	*v = (uint64_t)i;
	return (1);
}

static void
meter_usage(struct meter *m, json_t *u, const char *kin, const char *kout)
{
	uint64_t	 v, c;

	if (!json_is_object(u))
		return;
	if (meter_count(u, kin, &v)) {
		/* Anthropic bills cache reads and writes as input too. */
		if (m->api == API_MESSAGES) {
			if (meter_count(u, "cache_creation_input_tokens", &c))
				v += c;
			if (meter_count(u, "cache_read_input_tokens", &c))
				v += c;
		}
		m->in = v;
		m->have_in = 1;
	}
	if (kout != NULL && meter_count(u, kout, &v)) {
		m->out = v;
		m->have_out = 1;
	}
}

static void
meter_chars(struct meter *m, json_t *s)
{
	if (json_is_string(s))
		m->chars += json_string_length(s);
}

static void
meter_chat(struct meter *m, json_t *v)
{
	json_t	*c;
	size_t	 i;

	meter_usage(m, json_object_get(v, "usage"), "prompt_tokens",
	    "completion_tokens");
	json_array_foreach(json_object_get(v, "choices"), i, c) {
		meter_chars(m, json_object_get(json_object_get(c, "delta"),
		    "content"));
		if (i >= 64)
			break;
	}
}

static void
meter_responses(struct meter *m, json_t *v)
{
	const char	*t = json_string_value(json_object_get(v, "type"));

	if (t == NULL) {		/* the answer, not an event */
		meter_usage(m, json_object_get(v, "usage"), "input_tokens",
		    "output_tokens");
		return;
	}
	if (strcmp(t, "response.completed") == 0 ||
	    strcmp(t, "response.incomplete") == 0 ||
	    strcmp(t, "response.failed") == 0)
		meter_usage(m, json_object_get(json_object_get(v,
		    "response"), "usage"), "input_tokens", "output_tokens");
	else if (strcmp(t, "response.output_text.delta") == 0 ||
	    strcmp(t, "response.function_call_arguments.delta") == 0 ||
	    strcmp(t, "response.reasoning_text.delta") == 0)
		meter_chars(m, json_object_get(v, "delta"));
}

static void
meter_messages(struct meter *m, json_t *v)
{
	const char	*t = json_string_value(json_object_get(v, "type"));
	json_t		*d;

	if (t == NULL)
		return;
	if (strcmp(t, "message") == 0)		/* the answer */
		meter_usage(m, json_object_get(v, "usage"), "input_tokens",
		    "output_tokens");
	else if (strcmp(t, "message_start") == 0)
		/*
		 * Its output_tokens is a placeholder (1): taken as the count,
		 * a stream cut before message_delta would be charged that.
		 */
		meter_usage(m, json_object_get(json_object_get(v, "message"),
		    "usage"), "input_tokens", NULL);
	else if (strcmp(t, "message_delta") == 0)
		/* cumulative counts: the last one is the total */
		meter_usage(m, json_object_get(v, "usage"), "input_tokens",
		    "output_tokens");
	else if (strcmp(t, "content_block_delta") == 0) {
		d = json_object_get(v, "delta");
		meter_chars(m, json_object_get(d, "text"));
		meter_chars(m, json_object_get(d, "partial_json"));
		meter_chars(m, json_object_get(d, "thinking"));
	}
}

void
meter_json(struct meter *m, json_t *v)
{
	if (!json_is_object(v))
		return;
	switch (m->api) {
	case API_CHAT:
		meter_chat(m, v);
		break;
	case API_RESPONSES:
		meter_responses(m, v);
		break;
	case API_MESSAGES:
		meter_messages(m, v);
		break;
	}
}

static void
meter_parse(struct meter *m, const char *s, size_t len)
{
	json_t		*v;
	json_error_t	 jerr;

	if ((v = json_loadb(s, len, 0, &jerr)) == NULL)
		return;		/* not ours to judge: forwarded as is */
	meter_json(m, v);
	json_decref(v);
}

static int
meter_append(char **buf, size_t *len, const void *p, size_t n, size_t max)
{
	char	*nb;

	if (n > max - *len)
		return (-1);
	if ((nb = realloc(*buf, *len + n + 1)) == NULL)
		return (-1);
	memcpy(nb + *len, p, n);
	*len += n;
	nb[*len] = '\0';
	*buf = nb;
	return (0);
}

/* One line of an event stream (WHATWG "text/event-stream"). */
static int
meter_line(struct meter *m)
{
	const char	*l = m->line != NULL ? m->line : "";
	size_t		 n = m->linelen, vo;

	if (n == 0) {			/* dispatch */
		if (m->hasdata && !(m->datalen == 6 &&
		    memcmp(m->data, "[DONE]", 6) == 0))
			meter_parse(m, m->data, m->datalen);
		m->datalen = 0;
		m->hasdata = 0;
		m->events++;
		return (0);
	}
	if (n < 5 || memcmp(l, "data", 4) != 0 || (n > 4 && l[4] != ':'))
		return (0);		/* event:, id:, retry:, comments */
	vo = 5;
	if (vo < n && l[vo] == ' ')
		vo++;
	if (m->hasdata && meter_append(&m->data, &m->datalen, "\n", 1,
	    PROTO_MAXEVENT) == -1)
		return (-1);
	m->hasdata = 1;
	return (meter_append(&m->data, &m->datalen, l + vo, n - vo,
	    PROTO_MAXEVENT));
}

static int
meter_sse(struct meter *m, const char *p, size_t len)
{
	size_t	 i, start = 0;

	for (i = 0; i < len; i++) {
		if (p[i] != '\n' && p[i] != '\r')
			continue;
		if (p[i] == '\n' && m->skiplf && i == start &&
		    m->linelen == 0) {
			m->skiplf = 0;
			start = i + 1;
			continue;
		}
		m->skiplf = p[i] == '\r';
		if (meter_append(&m->line, &m->linelen, p + start, i - start,
		    PROTO_MAXEVENT) == -1 || meter_line(m) == -1)
			return (-1);
		m->linelen = 0;
		start = i + 1;
	}
	if (start < len) {
		m->skiplf = 0;
		if (meter_append(&m->line, &m->linelen, p + start,
		    len - start, PROTO_MAXEVENT) == -1)
			return (-1);
	}
	return (0);
}

int
meter_feed(struct meter *m, const void *p, size_t len)
{
	int	 rc;

	if (m->error)
		return (-1);
	if (m->sse)
		rc = meter_sse(m, p, len);
	else
		rc = meter_append(&m->body, &m->bodylen, p, len,
		    PROTO_MAXBODY);
	if (rc == -1)
		m->error = 1;
	return (rc);
}

void
meter_end(struct meter *m)
{
	m->done = 1;
	if (m->error)
		return;
	if (m->sse) {
		/* An event without its blank line still counts. */
		if (m->linelen > 0 && meter_line(m) == -1)
			m->error = 1;
		m->linelen = 0;
		if (meter_line(m) == -1)
			m->error = 1;
		return;
	}
	if (m->bodylen > 0)
		meter_parse(m, m->body, m->bodylen);
}

uint64_t
meter_in(const struct meter *m)
{
	/*
	 * A stream reports input only at its end: one that ends sooner
	 * (cut, dropped, the agent gone) is charged the request's size.
	 */
	if (m->have_in)
		return (m->in);
	return (m->in > m->in_est ? m->in : m->in_est);
}

/*
 * Output so far: while the answer runs, the larger of what the
 * provider said and an estimate from the text streamed, so a stream
 * that reports only at its end can still be cut on its way; at the
 * end, the provider's count where it gave one.
 */
uint64_t
meter_out(const struct meter *m)
{
	uint64_t	 est;

	est = (m->chars + PROTO_CHARS_PER_TOKEN - 1) / PROTO_CHARS_PER_TOKEN;
	if (m->done && m->have_out)
		return (m->out);
	return (m->out > est ? m->out : est);
}
