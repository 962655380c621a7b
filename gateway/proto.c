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

/* The target's path starts with p and has more after it. */
static int
proto_path_under(const char *target, const char *p)
{
	size_t	 n = strcspn(target, "?"), k = strlen(p);

	return (n > k && strncmp(target, p, k) == 0);
}

/* Gemini's API versions: gemini-cli's @google/genai speaks v1beta. */
static const char *proto_gemini_bases[] = {
	"/v1beta/models", "/v1/models", NULL
};

/* The Gemini base the target is under, or NULL. */
static const char *
proto_gemini_base(const char *target)
{
	const char	**b;
	size_t		  k;

	for (b = proto_gemini_bases; *b != NULL; b++) {
		k = strlen(*b);
		if (strncmp(target, *b, k) == 0 && (target[k] == '/' ||
		    target[k] == '?' || target[k] == '\0'))
			return (*b);
	}
	return (NULL);
}

/*
 * Only the calls that are metered, and the model list: anything else
 * of a provider (embeddings, images, files, batches, Gemini's
 * countTokens and cachedContents) would spend without a usage field we
 * read.  Routed on the path: the query is proto_query's.
 */
int
proto_route(uint8_t kind, const char *method, const char *target)
{
	int		 get = strcmp(method, "GET") == 0;
	int		 post = strcmp(method, "POST") == 0;
	const char	*base;

	if (kind == GW_GEMINI) {
		if ((base = proto_gemini_base(target)) == NULL)
			return (-1);
		if (get)
			return (API_NONE);
		if (post && proto_path_under(target, base))
			return (API_GEMINI);
		return (-1);
	}
	if (get && (proto_path_is(target, "/v1/models") ||
	    proto_path_under(target, "/v1/models/")))
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
 * Code sends on every request); Gemini's "alt" (the system parameter
 * that picks SSE, which @google/genai sends on streamGenerateContent).
 * Gemini's "key" carries a key: the agent's token is taken from
 * x-goog-api-key alone, as @google/genai sends it (src/node/
 * _node_auth.ts), and a "key" is refused, never forwarded.  No other
 * endpoint takes one.
 */
static const char *proto_query_messages[] = { "beta", NULL };
static const char *proto_query_gemini[] = { "alt", NULL };

const char *
proto_query(int api, const char *target, char *bad, size_t badlen)
{
	const char	**allow = api == API_MESSAGES ? proto_query_messages :
			    api == API_GEMINI ? proto_query_gemini : NULL;
	const char	 *q = strchr(target, '?'), *const *a;
	char		  name[PROTO_NAMEMAX + 1];
	size_t		  n, k;
	unsigned int	  seen = 0;

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
		/* Given twice, a server may read either one. */
		if (allow == NULL || *a == NULL ||
		    (seen & (1U << (a - allow))) != 0) {
			(void)proto_name(name, bad, badlen);
			return (bad);
		}
		seen |= 1U << (a - allow);
	}
	return (NULL);
}

/* The value of query parameter name in target ("" if bare), or NULL. */
static const char *
proto_query_value(const char *target, const char *name, char *v,
    size_t vlen)
{
	const char	*q = strchr(target, '?');
	size_t		 n, k, nl = strlen(name);

	if (q == NULL)
		return (NULL);
	for (q++; *q != '\0'; q += n + (q[n] == '&')) {
		n = strcspn(q, "&");
		k = strcspn(q, "=&");
		if (k != nl || strncmp(q, name, k) != 0)
			continue;
		if (q[k] != '=')
			k = n;
		else
			k++;
		if (n - k >= vlen)
			return ("");		/* too long to be ours */
		memcpy(v, q + k, n - k);
		v[n - k] = '\0';
		return (v);
	}
	return (NULL);
}

const char *
proto_gemini_target(const char *target, char *model, size_t msize,
    int *stream)
{
	const char	*base = proto_gemini_base(target), *m, *alt;
	char		 v[16];
	size_t		 n, verb;

	*stream = 0;
	if (base == NULL || target[strlen(base)] != '/')
		return ("not a model's path");
	m = target + strlen(base) + 1;
	n = strcspn(m, "?");
	verb = strcspn(m, ":?");
	if (verb == n)
		return ("no method after the model (\":generateContent\")");
	if (n - verb - 1 == strlen("generateContent") &&
	    strncmp(m + verb + 1, "generateContent", n - verb - 1) == 0)
		*stream = 0;
	else if (n - verb - 1 == strlen("streamGenerateContent") &&
	    strncmp(m + verb + 1, "streamGenerateContent", n - verb - 1) == 0)
		*stream = 1;
	else
		return ("not an endpoint of this gateway (generateContent "
		    "and streamGenerateContent are)");
	if (verb == 0 || verb >= msize || memchr(m, '/', verb) != NULL)
		return ("no valid model in the path");
	memcpy(model, m, verb);
	model[verb] = '\0';
	if (!gw_valid_model(model) || strchr(model, '%') != NULL)
		return ("no valid model in the path");
	alt = proto_query_value(target, "alt", v, sizeof(v));
	if (*stream && (alt == NULL || strcmp(alt, "sse") != 0))
		return ("query parameter \"alt\": streamGenerateContent is "
		    "forwarded as SSE only (alt=sse)");
	if (!*stream && alt != NULL && strcmp(alt, "json") != 0)
		return ("query parameter \"alt\": generateContent is "
		    "forwarded as JSON only");
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
	/*
	 * Gemini: the path names the model (the caller has it); one in
	 * the body too could be read instead of the one checked.
	 */
	if (api == API_GEMINI) {
		if (json_object_get(doc, "model") != NULL) {
			snprintf(err, errlen, "body: \"model\": the path "
			    "names the model");
			goto fail;
		}
		return (doc);
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
 * Anthropic's error types by status (docs.anthropic.com, "Errors"):
 * what its SDKs and Claude Code read of an error.
 */
static const char *
proto_anthropic_type(int status)
{
	switch (status) {
	case 400:
	case 405:
	case 426:
		return ("invalid_request_error");
	case 401:
		return ("authentication_error");
	case 403:
		return ("permission_error");
	case 404:
		return ("not_found_error");
	case 413:
		return ("request_too_large");
	case 429:
		return ("rate_limit_error");
	case 503:
		return ("overloaded_error");
	}
	return (status >= 500 ? "api_error" : "invalid_request_error");
}

/* Google's canonical codes by status (google.rpc.Code, as Gemini says). */
static const char *
proto_gemini_status(int status)
{
	switch (status) {
	case 401:
		return ("UNAUTHENTICATED");
	case 403:
		return ("PERMISSION_DENIED");
	case 404:
		return ("NOT_FOUND");
	case 408:
	case 504:
		return ("DEADLINE_EXCEEDED");
	case 429:
		return ("RESOURCE_EXHAUSTED");
	case 501:
		return ("UNIMPLEMENTED");
	case 502:
	case 503:
		return ("UNAVAILABLE");
	}
	return (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT");
}

/*
 * The provider's own error shape, so its clients read the message:
 * Anthropic {"type": "error", "error": {"type", "message"}}, Gemini
 * {"error": {"code", "message", "status"}}, OpenAI and upstreams
 * {"error": {"message", "type", "code"}} with the outcome's name as
 * type and code, but for a spent budget OpenAI's own words for it
 * (type insufficient_quota).  M as it is when it is printable ASCII
 * (the names in it escaped already, proto_name), else escaped whole
 * (esc.h), so any bytes encode; NULL only when memory ran out.
 */
char *
proto_error_body(int kind, int status, uint32_t outcome, const char *msg)
{
	json_t		*doc;
	const char	*type = gw_outcome_name(outcome);
	char		*m, *s;
	size_t		 n = strlen(msg), i;
	int		 budget;

	if (type == NULL)
		type = "internal";
	budget = outcome == GW_REFUSED_BUDGET || outcome == GW_CUT_BUDGET;
	if (n > PROTO_MSGMAX)
		n = PROTO_MSGMAX;
	for (i = 0; i < n; i++)
		if (msg[i] < 0x20 || msg[i] >= 0x7f)
			break;
	if ((m = i == n ? strndup(msg, n) : esc_strdup(msg, n)) == NULL)
		return (NULL);
	if (kind == GW_ANTHROPIC)
		doc = json_pack("{s:s,s:{s:s,s:s}}", "type", "error", "error",
		    "type", proto_anthropic_type(status), "message", m);
	else if (kind == GW_GEMINI)
		doc = json_pack("{s:{s:i,s:s,s:s}}", "error", "code", status,
		    "message", m, "status", proto_gemini_status(status));
	else
		doc = json_pack("{s:{s:s,s:s,s:s}}", "error", "message", m,
		    "type", budget ? "insufficient_quota" : type, "code",
		    budget ? "budget_exhausted" : type);
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

static int	proto_byref_gemini(json_t *, char *, size_t);

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

/* A tool the agent runs itself: a function, or custom (free-form). */
static int
proto_own_tool(int api, const char *t)
{
	if (t == NULL)
		return (api == API_MESSAGES);	/* Messages: custom */
	return (strcmp(t, "function") == 0 || strcmp(t, "custom") == 0);
}

/*
 * A Responses "namespace": {"type": "namespace", "name", "description",
 * "tools": [...]}, a group of the client's own tools under one name, as
 * Codex CLI sends its functions (codex-rs/tools/src/responses_api.rs,
 * ResponsesApiNamespace, whose tools are functions; tool_spec.rs
 * ToolSpec::Namespace).  Its tools must be the agent's own, each of
 * them: a namespace holds no namespace, nor a tool the provider runs.
 */
static int
proto_byref_namespace(json_t *ns, size_t i, char *where, size_t wlen)
{
	json_t		*a, *v;
	const char	*t;
	char		 name[PROTO_NAMEBUF];
	size_t		 j;

	if (!json_is_array(a = json_object_get(ns, "tools"))) {
		snprintf(where, wlen, "tools[%zu].tools: not an array", i);
		return (1);
	}
	json_array_foreach(a, j, v) {
		t = json_string_value(json_object_get(v, "type"));
		if (t != NULL && proto_own_tool(API_RESPONSES, t))
			continue;
		snprintf(where, wlen, "tools[%zu].tools[%zu].type: %s", i, j,
		    t != NULL ? proto_name(t, name, sizeof(name)) : "(none)");
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
		if (proto_own_tool(api, t))
			continue;
		if (api == API_RESPONSES && t != NULL &&
		    strcmp(t, "namespace") == 0) {
			if (proto_byref_namespace(v, i, where, wlen))
				return (1);
			continue;
		}
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
	if (api == API_GEMINI)
		return (proto_byref_gemini(doc, where, wlen));
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

/*
 * Gemini (ai.google.dev/api/generate-content): its JSON takes each
 * field in lowerCamelCase and in the proto's snake_case, so the lists
 * name both.  What the gateway can read as text is allowed, all else
 * (inlineData, fileData, a cachedContent, a tool Google runs:
 * googleSearch, codeExecution, urlContext, ...) is named and refused on
 * a budgeted grant.
 */
static const char *proto_gemini_top[] = {
	"contents", "tools", "toolConfig", "tool_config", "safetySettings",
	"safety_settings", "systemInstruction", "system_instruction",
	"generationConfig", "labels", NULL
};
static const char *proto_gemini_part[] = {
	"text", "thought", "thoughtSignature", "thought_signature",
	"functionCall", "function_call", "functionResponse",
	"function_response", "executableCode", "executable_code",
	"codeExecutionResult", "code_execution_result", NULL
};
/* A function's answer: "parts" of it (media) are not. */
static const char *proto_gemini_fnresp[] = {
	"id", "name", "response", "willContinue", "will_continue",
	"scheduling", NULL
};
static const char *proto_gemini_tool[] = {
	"functionDeclarations", "function_declarations", NULL
};

/* A part's function answer of key k with a field not listed. */
static int
proto_gemini_fnresp_bad(json_t *part, const char *k, const char *at,
    size_t i, char *where, size_t wlen)
{
	json_t		*fr = json_object_get(part, k);
	const char	*bad;
	char		 name[PROTO_NAMEBUF];

	if (fr == NULL || json_is_null(fr))
		return (0);
	if (!json_is_object(fr)) {
		snprintf(where, wlen, "%s[%zu].%s: not an object", at, i, k);
		return (1);
	}
	if (proto_only_keys(fr, proto_gemini_fnresp, &bad))
		return (0);
	snprintf(where, wlen, "%s[%zu].%s.%s", at, i, k,
	    proto_name(bad, name, sizeof(name)));
	return (1);
}

/* Each object of array a has only keys of list. */
static int
proto_gemini_objs(json_t *a, const char **list, const char *at,
    char *where, size_t wlen)
{
	json_t		*v;
	const char	*bad;
	char		 name[PROTO_NAMEBUF];
	size_t		 i;

	if (a == NULL || json_is_null(a))
		return (0);
	if (!json_is_array(a)) {
		snprintf(where, wlen, "%s: not an array", at);
		return (1);
	}
	json_array_foreach(a, i, v) {
		if (!json_is_object(v)) {
			snprintf(where, wlen, "%s[%zu]: not an object", at, i);
			return (1);
		}
		if (!proto_only_keys(v, list, &bad)) {
			snprintf(where, wlen, "%s[%zu].%s", at, i,
			    proto_name(bad, name, sizeof(name)));
			return (1);
		}
		if (list == proto_gemini_part && (proto_gemini_fnresp_bad(v,
		    "functionResponse", at, i, where, wlen) ||
		    proto_gemini_fnresp_bad(v, "function_response", at, i,
		    where, wlen)))
			return (1);
	}
	return (0);
}

/* A Content: {"role", "parts": [...]}. */
static int
proto_gemini_content(json_t *c, const char *at, char *where, size_t wlen)
{
	static const char *ckeys[] = { "role", "parts", NULL };
	const char	*bad;
	char		 sub[160], name[PROTO_NAMEBUF];

	if (c == NULL || json_is_null(c))
		return (0);
	if (!json_is_object(c)) {
		snprintf(where, wlen, "%s: not an object", at);
		return (1);
	}
	if (!proto_only_keys(c, ckeys, &bad)) {
		snprintf(where, wlen, "%s.%s", at, proto_name(bad, name,
		    sizeof(name)));
		return (1);
	}
	snprintf(sub, sizeof(sub), "%s.parts", at);
	return (proto_gemini_objs(json_object_get(c, "parts"),
	    proto_gemini_part, sub, where, wlen));
}

static int
proto_byref_gemini(json_t *doc, char *where, size_t wlen)
{
	json_t		*a, *v;
	const char	*bad;
	char		 at[64], name[PROTO_NAMEBUF];
	size_t		 i;

	if (!proto_only_keys(doc, proto_gemini_top, &bad)) {
		snprintf(where, wlen, "%s", proto_name(bad, name,
		    sizeof(name)));
		return (1);
	}
	if ((a = json_object_get(doc, "contents")) != NULL &&
	    !json_is_array(a)) {
		snprintf(where, wlen, "contents: not an array");
		return (1);
	}
	json_array_foreach(a, i, v) {
		snprintf(at, sizeof(at), "contents[%zu]", i);
		if (proto_gemini_content(v, at, where, wlen))
			return (1);
	}
	if (proto_gemini_content(json_object_get(doc, "systemInstruction"),
	    "systemInstruction", where, wlen) ||
	    proto_gemini_content(json_object_get(doc, "system_instruction"),
	    "system_instruction", where, wlen))
		return (1);
	return (proto_gemini_objs(json_object_get(doc, "tools"),
	    proto_gemini_tool, "tools", where, wlen));
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

/*
 * Gemini's output ceiling is generationConfig.maxOutputTokens and its
 * choices generationConfig.candidateCount (thinking, billed as output,
 * counts within the ceiling).  The generationConfig, made if absent;
 * one spelled as the proto spells it (generation_config,
 * max_output_tokens, candidate_count) is refused: which spelling a
 * server reads when both come is not ours to guess.  NULL with a
 * reason in err.
 */
static json_t *
proto_gemini_config(json_t *doc, char *err, size_t errlen)
{
	static const char *snake[] = { "max_output_tokens",
	    "candidate_count", NULL };
	json_t		*gc;
	size_t		 i;

	if (json_object_get(doc, "generation_config") != NULL) {
		snprintf(err, errlen, "body: \"generation_config\": spelled "
		    "generationConfig here");
		return (NULL);
	}
	gc = json_object_get(doc, "generationConfig");
	if (gc == NULL || json_is_null(gc)) {
		if ((gc = json_object()) == NULL ||
		    json_object_set_new(doc, "generationConfig", gc) == -1) {
			snprintf(err, errlen, "body: out of memory");
			return (NULL);
		}
	}
	if (!json_is_object(gc)) {
		snprintf(err, errlen, "body: \"generationConfig\": not an "
		    "object");
		return (NULL);
	}
	for (i = 0; snake[i] != NULL; i++)
		if (json_object_get(gc, snake[i]) != NULL) {
			snprintf(err, errlen, "body: \"generationConfig.%s\": "
			    "spelled in lowerCamelCase here", snake[i]);
			return (NULL);
		}
	return (gc);
}

int
proto_cap_output(int api, json_t *doc, uint64_t avail, uint64_t ceiling,
    uint64_t *out, char *err, size_t errlen)
{
	static const char *chat[] = { "max_completion_tokens", "max_tokens",
	    NULL };
	static const char *resp[] = { "max_output_tokens", NULL };
	static const char *msgs[] = { "max_tokens", NULL };
	static const char *gem[] = { "maxOutputTokens", NULL };
	const char	**keys, *nkey = "n";
	json_t		 *v, *o = doc;
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
	case API_GEMINI:
		keys = gem;
		nkey = "candidateCount";
		if ((o = proto_gemini_config(doc, err, errlen)) == NULL)
			return (-1);
		break;
	default:
		return (0);
	}
	if ((api == API_CHAT || api == API_GEMINI) &&
	    (v = json_object_get(o, nkey)) != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || (x = json_integer_value(v)) < 1 ||
		    x > PROTO_MAXCHOICES) {
			snprintf(err, errlen, "body: bad \"%s\"", nkey);
			return (-1);
		}
		n = (uint64_t)x;
	}
	for (i = 0; keys[i] != NULL; i++) {
		if ((v = json_object_get(o, keys[i])) == NULL ||
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
		if (json_object_set_new(o, keys[0],
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
		if ((v = json_object_get(o, keys[i])) == NULL ||
		    json_is_null(v))
			continue;
		if (json_object_set_new(o, keys[i],
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

static uint64_t
proto_rate_or(uint64_t v, uint64_t dflt)
{
	return (v == GW_PRICE_UNSET ? dflt : v);
}

static void
proto_rates_fill(int kind, uint64_t in, uint64_t out, uint64_t cr,
    uint64_t cw, uint64_t cw1h, struct proto_rates *r)
{
	int	 an = kind == GW_ANTHROPIC;

	r->in = in;
	r->out = out;
	r->cache_read = proto_rate_or(cr, an ? in / 10 : in);
	r->cache_write = proto_rate_or(cw, an ? in + in / 4 : in);
	r->cache_write_1h = proto_rate_or(cw1h, an ? 2 * in : in);
}

void
proto_prices(int kind, const struct gw_price *e, struct proto_prices *p)
{
	memset(p, 0, sizeof(*p));
	if (e == NULL)
		return;
	proto_rates_fill(kind, e->in_uusd_per_mtok, e->out_uusd_per_mtok,
	    e->cache_read, e->cache_write, e->cache_write_1h, &p->base);
	if ((p->long_above = e->long_above) != 0)
		proto_rates_fill(kind, e->long_in, e->long_out,
		    e->long_cache_read, e->long_cache_write,
		    e->long_cache_write_1h, &p->lng);
}

#define PROTO_CACHE_DEPTH 64	/* cache_control looked for this deep */

/* The longest cache v asks to write: 0, 1 (5 minutes) or 2 (an hour). */
static int
proto_cache_ttl(json_t *v, int depth)
{
	json_t		*c, *e;
	const char	*k, *ttl;
	size_t		 i;
	int		 r = 0, x;

	if (depth > PROTO_CACHE_DEPTH)
		return (2);	/* not known not to: the dearest */
	if (json_is_object(v)) {
		c = json_object_get(v, "cache_control");
		if (c != NULL && !json_is_null(c)) {
			ttl = json_string_value(json_object_get(c, "ttl"));
			r = ttl == NULL || strcmp(ttl, "5m") == 0 ? 1 : 2;
		}
		json_object_foreach(v, k, e)
			if (r < 2 && (x = proto_cache_ttl(e, depth + 1)) > r)
				r = x;
	} else if (json_is_array(v))
		json_array_foreach(v, i, e)
			if (r < 2 && (x = proto_cache_ttl(e, depth + 1)) > r)
				r = x;
	return (r);
}

int
proto_cache_asked(int api, json_t *doc)
{
	/* Only Messages writes a cache on the request's word. */
	if (api != API_MESSAGES)
		return (2);
	return (proto_cache_ttl(doc, 0));
}

static uint64_t
proto_max_in(const struct proto_rates *r, int cache)
{
	uint64_t	 m = r->in;

	if (cache >= 1 && r->cache_read > m)
		m = r->cache_read;
	if (cache >= 1 && r->cache_write > m)
		m = r->cache_write;
	if (cache >= 2 && r->cache_write_1h > m)
		m = r->cache_write_1h;
	return (m);
}

void
proto_worst_rates(const struct proto_prices *p, int lng, int cache,
    uint64_t *in, uint64_t *out)
{
	*in = proto_max_in(&p->base, cache);
	*out = p->base.out;
	if (!lng || p->long_above == 0)
		return;
	if (proto_max_in(&p->lng, cache) > *in)
		*in = proto_max_in(&p->lng, cache);
	if (p->lng.out > *out)
		*out = p->lng.out;
}

uint64_t
proto_meter_cost(const struct meter *m, const struct proto_prices *p)
{
	const struct proto_rates *r = &p->base;
	unsigned __int128	 c;
	uint64_t		 in = meter_in(m), cr, cw, cw5, cw1h, rest;

	if (p->long_above != 0 && in > p->long_above)
		r = &p->lng;
	/* What the provider said of its input; all of it plain before. */
	cr = m->have_in ? m->cache_read : 0;
	cw = m->have_in ? m->cache_write : 0;
	cw5 = m->have_in ? m->cw_5m : 0;
	cw1h = m->have_in ? m->cw_1h : 0;
	if (cr > in)
		cr = in;
	if (cw > in - cr)
		cw = in - cr;
	if (cw5 + cw1h > cw)
		cw5 = cw1h = 0;
	rest = cw - cw5 - cw1h;		/* written, for how long? */
	c = (unsigned __int128)(in - cr - cw) * r->in +
	    (unsigned __int128)cr * r->cache_read +
	    (unsigned __int128)cw5 * r->cache_write +
	    (unsigned __int128)cw1h * r->cache_write_1h +
	    (unsigned __int128)rest * (r->cache_write > r->cache_write_1h ?
	    r->cache_write : r->cache_write_1h) +
	    (unsigned __int128)meter_out(m) * r->out;
	c /= 1000000;
	return (c > UINT64_MAX ? UINT64_MAX : (uint64_t)c);
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

/*
 * Anthropic's input beside input_tokens: cache writes (their split by
 * time to live in cache_creation, where given) and cache reads, each
 * billed at its own rate.
 */
static uint64_t
meter_anthropic_cache(struct meter *m, json_t *u)
{
	json_t		*cc = json_object_get(u, "cache_creation");
	uint64_t	 w = 0, r = 0, a = 0, b = 0;

	(void)meter_count(u, "cache_creation_input_tokens", &w);
	(void)meter_count(u, "cache_read_input_tokens", &r);
	(void)meter_count(cc, "ephemeral_5m_input_tokens", &a);
	(void)meter_count(cc, "ephemeral_1h_input_tokens", &b);
	/* A split that says more than the whole is not taken. */
	if (a + b > w)
		a = b = 0;
	m->cache_write = w;
	m->cw_5m = a;
	m->cw_1h = b;
	m->cache_read = r;
	return (w + r);
}

/* OpenAI's cached input, part of its input count. */
static void
meter_openai_cache(struct meter *m, json_t *u, const char *details)
{
	uint64_t	 c;

	if (meter_count(json_object_get(u, details), "cached_tokens", &c))
		m->cache_read = c;
}

static void
meter_usage(struct meter *m, json_t *u, const char *kin, const char *kout)
{
	uint64_t	 v;

	if (!json_is_object(u))
		return;
	if (meter_count(u, kin, &v)) {
		/* Anthropic bills cache reads and writes as input too. */
		if (m->api == API_MESSAGES)
			v += meter_anthropic_cache(m, u);
		else if (m->api == API_CHAT)
			meter_openai_cache(m, u, "prompt_tokens_details");
		else if (m->api == API_RESPONSES)
			meter_openai_cache(m, u, "input_tokens_details");
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

/*
 * Gemini's usageMetadata, in a JSON answer and in each event of a
 * stream, its counts so far (the last one the total): the input is
 * promptTokenCount (with its cachedContentTokenCount) and
 * toolUsePromptTokenCount, the output candidatesTokenCount and
 * thoughtsTokenCount, billed as output.  The text estimate reads the
 * candidates' parts: text (thoughts too) and function calls.
 */
static void
meter_gemini(struct meter *m, json_t *v)
{
	json_t		*u = json_object_get(v, "usageMetadata");
	json_t		*c, *p, *fc;
	uint64_t	 a, b;
	size_t		 i, j, n;
	int		 ha, hb;

	if (json_is_object(u)) {
		if (meter_count(u, "promptTokenCount", &a)) {
			if (meter_count(u, "toolUsePromptTokenCount", &b))
				a += b;
			m->in = a;
			m->have_in = 1;
		}
		ha = meter_count(u, "candidatesTokenCount", &a);
		hb = meter_count(u, "thoughtsTokenCount", &b);
		if (ha || hb) {
			m->out = (ha ? a : 0) + (hb ? b : 0);
			m->have_out = 1;
		}
		if (meter_count(u, "cachedContentTokenCount", &a))
			m->cache_read = a;
	}
	json_array_foreach(json_object_get(v, "candidates"), i, c) {
		if (i >= 64)
			break;
		json_array_foreach(json_object_get(json_object_get(c,
		    "content"), "parts"), j, p) {
			if (j >= 256)
				break;
			meter_chars(m, json_object_get(p, "text"));
			if ((fc = json_object_get(p, "functionCall")) !=
			    NULL && (n = proto_dumped_len(fc)) != SIZE_MAX)
				m->chars += n;
		}
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
	case API_GEMINI:
		meter_gemini(m, v);
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

/* s (n bytes) escaped into dst, its first bytes if all do not fit. */
static void
proto_esc_fit(const char *s, size_t n, char *dst, size_t len)
{
	while (n > 0 && esc_len(s, n) >= len)
		n--;
	if (esc_encode(s, n, dst, len) == -1)
		dst[0] = '\0';
}

/*
 * Only what IMSG_GW_USAGE carries (gwmsg.c): a method of capitals, a
 * path from '/'; a target of another form (absolute, "*"), which is
 * refused, is recorded without one.  A record that did not compose
 * would be fatal (gateway.c, gw_send_usage), and these are the agent's bytes.
 */
void
proto_usage_request(struct gw_usage *u, const char *method, const char *uri)
{
	u->method[0] = u->path[0] = '\0';
	if (strlen(method) < sizeof(u->method) &&
	    strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == strlen(method))
		strlcpy(u->method, method, sizeof(u->method));
	if (uri[0] == '/')
		proto_esc_fit(uri, strcspn(uri, "?"), u->path, sizeof(u->path));
}

void
proto_usage_reason(struct gw_usage *u, const char *why)
{
	size_t	 n = strlen(why);

	/* Already printable (an encoding, names escaped): as it is. */
	if (esc_valid(why) && n < sizeof(u->reason)) {
		strlcpy(u->reason, why, sizeof(u->reason));
		return;
	}
	proto_esc_fit(why, n, u->reason, sizeof(u->reason));
}

/*
 * Where a provider's credential goes: the header's name, and the word
 * before the secret ("Bearer"), or "" for none. openai: "Authorization:
 * Bearer", anthropic: "x-api-key", gemini: "x-goog-api-key", an
 * upstream: its configured "Name: Word" or "Name".  Both buffers are
 * GW_HEADERMAX; the agent's token is looked for, and the real key put,
 * in this one place.
 */
void
proto_cred_header(const struct gw_provider *p, char *name, char *prefix)
{
	const char	*w;
	size_t		 n;

	prefix[0] = '\0';
	switch (p->kind) {
	case GW_OPENAI:
		strlcpy(name, "Authorization", GW_HEADERMAX);
		strlcpy(prefix, "Bearer", GW_HEADERMAX);
		break;
	case GW_ANTHROPIC:
		strlcpy(name, "x-api-key", GW_HEADERMAX);
		break;
	case GW_GEMINI:
		strlcpy(name, "x-goog-api-key", GW_HEADERMAX);
		break;
	default:
		n = strcspn(p->header, ":");
		if (n >= GW_HEADERMAX)
			n = GW_HEADERMAX - 1;
		memcpy(name, p->header, n);
		name[n] = '\0';
		if (p->header[n] == ':') {
			w = p->header + n + 1;
			strlcpy(prefix, w + strspn(w, " "), GW_HEADERMAX);
		}
		break;
	}
}

/* "1,000,000" */
static void
proto_thousands(uint64_t v, char *buf, size_t len)
{
	char	 digits[32], out[48];
	size_t	 n, i, o = 0;

	n = (size_t)snprintf(digits, sizeof(digits), "%llu",
	    (unsigned long long)v);
	for (i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	strlcpy(buf, out, len);
}

void
proto_budget_message(const struct gw_grant *g, int usd, char *buf,
    size_t len)
{
	char	 n[48];

	if (!usd && g->budget_tokens != 0) {
		proto_thousands(g->budget_tokens, n, sizeof(n));
		snprintf(buf, len, "budget exhausted: %s tokens", n);
	} else
		snprintf(buf, len, "budget exhausted: %llu.%06llu USD",
		    (unsigned long long)(g->budget_uusd / 1000000),
		    (unsigned long long)(g->budget_uusd % 1000000));
}
