/*
 * What the gateway reads of the model APIs, without any I/O: the
 * request body's model (and the streaming switch), and the usage a
 * provider reports in a JSON answer or in the events of a stream.
 * Every byte parsed here is the agent's or the provider's: bounded,
 * and a parse that fails fails closed (the caller refuses or cuts).
 */
#ifndef FACTORY_GW_PROTO_H
#define FACTORY_GW_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define PROTO_MAXBODY	(4 * 1024 * 1024)	/* a request, an answer */
#define PROTO_MAXEVENT	(1024 * 1024)		/* one SSE event */
#define PROTO_MAXCOUNT	((uint64_t)1 << 40)	/* a sane token count */
#define PROTO_CHARS_PER_TOKEN 4	/* the estimate while a stream runs */
#define PROTO_ADDED	96	/* bytes the gateway may add to a request */
#define PROTO_MINOUT	16	/* the least answer a budget must allow */
#define PROTO_MINTHINK	1024	/* Messages: the least thinking budget */
#define PROTO_MAXCHOICES 128	/* a chat completion's "n" */
#define PROTO_NAMEMAX	64	/* bytes of an agent's name in an error */
#define PROTO_NAMEBUF	(PROTO_NAMEMAX * 4 + 1)	/* escaped (esc.h) */
#define PROTO_MSGMAX	1024	/* bytes of an error's message */
/* The body of an error answer when none can be made. */
#define PROTO_ERROR_FALLBACK "{\"error\":{\"message\":\"internal " \
	"error\",\"type\":\"internal\",\"code\":\"internal\"}}"
/*
 * How a checked body is serialized to go: its numbers as jansson's
 * default, 17 digits (0.1 goes as 0.10000000000000001), the value the
 * agent sent exactly; fewer digits would change some values.  The
 * estimate counts these bytes, not the agent's.
 */
#define PROTO_DUMP	JSON_COMPACT

enum proto_api {
	API_NONE,		/* a GET: no body, nothing metered */
	API_CHAT,		/* openai /v1/chat/completions */
	API_RESPONSES,		/* openai /v1/responses */
	API_MESSAGES,		/* anthropic /v1/messages */
	API_GEMINI		/* gemini models/M:generateContent, and
				   :streamGenerateContent (SSE) */
};

/*
 * The API a provider request is for, from its kind, method and the
 * target's path; -1 if the gateway does not forward it.
 */
int	proto_route(uint8_t, const char *, const char *);

/*
 * NULL if every query parameter of the target is one the API documents
 * for the endpoint (forwarded as they came), else the first other
 * one's name, escaped, in bad (PROTO_NAMEBUF bytes).
 */
const char *proto_query(int, const char *, char *, size_t);

/*
 * Gemini: the model of the target's path ("/v1beta/models/M:VERB") in
 * model (size bytes), *stream 1 for streamGenerateContent, which goes
 * as SSE only ("alt=sse", whose events are metered as they come; a
 * JSON array would be read only at its end).  NULL, or a reason.
 */
const char *proto_gemini_target(const char *, char *, size_t, int *);

/*
 * Parse a request body: a JSON object with a string "model" (Gemini:
 * none, the path names it, proto_gemini_target), no duplicate keys.
 * Fills model (size bytes), *stream; for a streaming chat completion
 * asks for the usage chunk (stream_options.include_usage).  Returns
 * the document to forward (the caller serializes and frees it), or
 * NULL with a reason in err.
 */
json_t	*proto_request(int, const char *, size_t, char *, size_t, int *,
	    char *, size_t);

/*
 * The JSON body of an error answer of status, in the shape of the
 * provider kind (enum gw_kind; openai's for an upstream); its message,
 * unless printable ASCII, escaped (esc.h), so any bytes an agent put
 * in it encode.  A malloc'd string, or NULL if memory ran out (the
 * caller sends PROTO_ERROR_FALLBACK).
 */
char	*proto_error_body(int, int, uint32_t, const char *);

/*
 * Input a provider adds by its own rule, in tokens: Messages with
 * tools get a tool-use system prompt (346 tokens as Anthropic states
 * it) whatever their bytes.
 */
#define PROTO_TOOLS_PROMPT	512
uint64_t proto_overhead(int, json_t *);

/* The bytes doc is forwarded as (PROTO_DUMP), without making them. */
size_t	proto_dumped_len(json_t *);

/*
 * The first part of a request whose input the provider bills far above
 * its bytes, by reference or by its own rule (an image, a file, a
 * stored prompt or response, a server-side tool; Gemini: any field or
 * part the gateway cannot read as text, by name): its path in where,
 * e.g. "messages[0].content[1].type: image_url", and 1; 0 if none.
 * A budget cannot reserve what such a part costs: the caller refuses
 * it on a budgeted grant.
 */
int	proto_byref(int, json_t *, char *, size_t);

/*
 * A chat completion's "prediction" (predicted outputs): what of it the
 * answer does not use the provider bills as output all the same, above
 * the output cap.  Its tokens in *tokens at most (a token a byte of it
 * as it goes, whatever its shape; 0 without one) and 0, or 1 with where set
 * if its shape is not the one whose text is all of it: {"type":
 * "content", "content": a string or an array of {"type": "text",
 * "text": a string}}, nothing else.  The caller refuses that on a
 * budgeted grant.
 */
int	proto_prediction(int, json_t *, uint64_t *, char *, size_t);

/*
 * Cap the request's output to avail tokens in all (its choices
 * together) and to ceiling tokens a choice (the model's output
 * ceiling, which a provider answers 400 above):
 * max_completion_tokens and max_tokens (chat, "n" choices sharing
 * it), max_output_tokens (responses), max_tokens (messages),
 * generationConfig.maxOutputTokens (gemini, "candidateCount" choices
 * sharing it; generationConfig put in if absent), each
 * given set to the least of them and the cap (so whichever the
 * provider reads stays within what is reserved) or, when none is
 * given, the first put in.  Messages with extended thinking: a
 * thinking.budget_tokens not a positive count is refused, one the cap
 * leaves max_tokens at or below is lowered to the cap less one, or
 * refused below 1024.  Responses: a ceiling below 16 is refused.
 * Returns 0 with the output ceiling in *out, 1 if avail leaves less
 * than the least answer (PROTO_MINOUT, or less if the request or the
 * ceiling asks less; the document untouched), -1 with a reason in
 * err.  Without a budget avail is UINT64_MAX: the ceiling caps alone.
 */
int	proto_cap_output(int, json_t *, uint64_t, uint64_t, uint64_t *,
	    char *, size_t);

struct meter {
	int		 api;
	int		 sse;		/* text/event-stream, else one JSON */
	/* SSE: the line being read, the event's data so far */
	char		*line;
	size_t		 linelen;
	int		 skiplf;	/* a '\r' ended the last line */
	char		*data;
	size_t		 datalen;
	int		 hasdata;
	/* JSON: the whole answer */
	char		*body;
	size_t		 bodylen;
	/* what the provider said, what we estimate until it does */
	uint64_t	 in, out;
	int		 have_in, have_out;
	/*
	 * Of in, as the provider split it: read from its cache, written
	 * to it (Anthropic: for 5 minutes, for an hour, or not said).
	 */
	uint64_t	 cache_read, cache_write, cw_5m, cw_1h;
	/* the request's size in tokens: input until the provider says */
	uint64_t	 in_est;
	uint64_t	 chars;
	uint64_t	 events;
	int		 error;		/* beyond a bound */
	int		 done;		/* meter_end() was called */
};

void		 meter_init(struct meter *, int, int);
/* 0, or -1 once the answer is beyond a bound (m->error is set). */
int		 meter_feed(struct meter *, const void *, size_t);
/* The end of the answer: a JSON body is parsed now. */
void		 meter_end(struct meter *);
void		 meter_free(struct meter *);
/* Tokens so far: reported where reported, else estimated. */
uint64_t	 meter_in(const struct meter *);
uint64_t	 meter_out(const struct meter *);
/* Usage fields of one JSON value of the API (exported for fuzzing). */
void		 meter_json(struct meter *, json_t *);

/* micro-USD for the tokens at prices per million tokens, saturated */
uint64_t	 proto_cost(uint64_t, uint64_t, uint64_t, uint64_t);

/* A model's rates, micro-USD per million tokens. */
struct proto_rates {
	uint64_t	 in, out;
	uint64_t	 cache_read;	/* input read from its cache */
	uint64_t	 cache_write;	/* written (Anthropic: 5 min) */
	uint64_t	 cache_write_1h; /* Anthropic: for an hour */
};

/* Its prices: a tier above long_above input tokens (0: none). */
struct proto_prices {
	struct proto_rates	 base, lng;
	uint64_t		 long_above;
};

/*
 * The prices of a price table's entry (gwmsg.h) for a provider kind:
 * a cache rate not configured is the provider's own rule where it has
 * one (Anthropic: reads 0.1, 5-minute writes 1.25, 1-hour writes 2
 * times the input rate, docs.anthropic.com "Pricing"), else the input
 * rate.
 */
struct gw_price;
void	 proto_prices(int, const struct gw_price *, struct proto_prices *);
/*
 * The longest a request asks the provider to cache its input: 0 not
 * at all, 1 five minutes, 2 an hour (Messages' cache_control, "ttl";
 * any other API: 2, its rates decide).
 */
int	 proto_cache_asked(int, json_t *);
/*
 * The highest input and output rates a request may be billed at: what
 * is reserved before its usage is read (long: the request asked for
 * the long-context tier; cache: proto_cache_asked).
 */
void	 proto_worst_rates(const struct proto_prices *, int, int,
	    uint64_t *, uint64_t *);
/*
 * micro-USD for what the meter read, each part of the input at its
 * rate, the whole at the long-context tier's once the input is above
 * its threshold; saturated.
 */
uint64_t proto_meter_cost(const struct meter *, const struct proto_prices *);

/*
 * Only what IMSG_GW_USAGE carries (gwmsg.c), of the agent's bytes: the
 * request's method and path (the target, cut at '?'); why it was
 * refused or cut, escaped and cut to fit.
 */
struct gw_usage;
void	 proto_usage_request(struct gw_usage *, const char *, const char *);
void	 proto_usage_reason(struct gw_usage *, const char *);
/*
 * Where a provider's credential goes: the header's name and the word
 * before the secret, both GW_HEADERMAX bytes.
 */
struct gw_provider;
void	 proto_cred_header(const struct gw_provider *, char *, char *);
/* "budget exhausted: ..." of the tokens (usd 0) or the USD budget. */
struct gw_grant;
void	 proto_budget_message(const struct gw_grant *, int, char *, size_t);

#endif /* FACTORY_GW_PROTO_H */
