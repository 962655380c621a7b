/*
 * The messages between the parent and factory-gateway, the process
 * that holds model-provider and upstream keys (factory-workers(8),
 * GATEWAY).  Each payload is one fixed-size struct, zeroed before it
 * is filled: the decoder takes exactly its size, then checks every
 * string holds a NUL (and nothing but zeroes after it), every enum is
 * in range and every count within its array.  The parent decodes the
 * gateway's messages as hostile; the gateway treats a message from the
 * parent that does not decode as a broken invariant (fatalx).
 *
 *	parent -> gateway	IMSG_GW_PROVIDER (one per provider and
 *				upstream, after HELLO and after a reload),
 *				IMSG_GW_CONFIGURED (empty, after the last),
 *				IMSG_GW_GRANT (+ a listening socket),
 *				IMSG_GW_REVOKE (an attempt id)
 *	gateway -> parent	IMSG_GW_TOKEN, IMSG_GW_USAGE (one per
 *				request), IMSG_GW_ERROR (an escaped line)
 */
#ifndef FACTORY_GWMSG_H
#define FACTORY_GWMSG_H

#include <limits.h>
#include <stdint.h>

#include "factory.h"
#include "imsg.h"

#define GW_NAMEMAX	64	/* provider, upstream, tenant; with NUL */
#define GW_URLMAX	512
#define GW_HEADERMAX	128
#define GW_MODELMAX	128
#define GW_MAXPRICES	32
#define GW_MAXMODELS	16
#define GW_TOKEN_PREFIX	"fgw-"
#define GW_TOKEN_LEN	68	/* "fgw-" and 32 random bytes in hex */
#define GW_ERRMAX	512	/* IMSG_GW_ERROR, with its NUL */
#define GW_METHODMAX	8	/* a usage's method, with its NUL */
#define GW_PATHMAX	256	/* a usage's path, escaped, with its NUL */
#define GW_REASONMAX	256	/* a usage's reason, with its NUL */
/*
 * A model's output ceiling, tokens of one answer: what the price table
 * gives (max-output), else the default; at most GW_MAXOUT_MAX.
 */
#define GW_MAXOUT_DEFAULT 16384
#define GW_MAXOUT_MAX	(1 << 24)
/* A provider's idle timeout, seconds: a model may think long. */
#define GW_IDLE_DEFAULT	300
#define GW_IDLE_MAX	86400

enum gw_kind {
	GW_OPENAI = 1,		/* Chat Completions and Responses */
	GW_ANTHROPIC = 2,	/* Messages */
	GW_UPSTREAM = 3,	/* any https service: a header injected */
	GW_GEMINI = 4		/* (stream)GenerateContent */
};

/* Methods, one bit each: an upstream's grant, a provider's table. */
#define GW_M_GET	0x01
#define GW_M_HEAD	0x02
#define GW_M_POST	0x04
#define GW_M_PUT	0x08
#define GW_M_PATCH	0x10
#define GW_M_DELETE	0x20
#define GW_M_ALL	0x3f

enum gw_outcome {
	GW_OK = 0,
	GW_CUT_BUDGET,		/* a stream was cut: the budget ran out */
	GW_REFUSED_BUDGET,	/* refused before forwarding */
	GW_REFUSED_MODEL,	/* model outside the grant */
	GW_REFUSED_TOKEN,	/* no token, a wrong one, a revoked one */
	GW_REFUSED_METHOD,	/* method outside the grant */
	GW_BAD_REQUEST,		/* malformed HTTP or body */
	GW_UPSTREAM_ERROR,	/* TLS, connect, a dropped answer */
	GW_CUT_STALLED,		/* the agent read nothing for the timeout */
	GW_REFUSED_BUSY,	/* too many requests in flight */
	GW_OUTCOME_MAX
};

/* A rate not configured: the gateway applies the provider's rule. */
#define GW_PRICE_UNSET	UINT64_MAX

struct gw_price {
	char		 model[GW_MODELMAX];
	uint64_t	 in_uusd_per_mtok;	/* micro-USD per 1e6 tokens */
	uint64_t	 out_uusd_per_mtok;
	uint64_t	 max_output;	/* tokens; 0: GW_MAXOUT_DEFAULT */
	/* input read from, written to the provider's cache: or UNSET */
	uint64_t	 cache_read, cache_write, cache_write_1h;
	/*
	 * The long-context tier: every token of a request whose input is
	 * above long_above tokens at these rates (0: no such tier).
	 */
	uint64_t	 long_above;
	uint64_t	 long_in, long_out;
	uint64_t	 long_cache_read, long_cache_write, long_cache_write_1h;
};

/* IMSG_GW_PROVIDER */
struct gw_provider {
	char		 name[GW_NAMEMAX];
	uint8_t		 kind;			/* enum gw_kind */
	char		 url[GW_URLMAX];	/* https:// only */
	char		 keyfile[PATH_MAX];	/* absolute */
	char		 cafile[PATH_MAX];	/* absolute */
	/*
	 * Upstreams: "Name" or "Name: prefix" (e.g. "Authorization:
	 * Bearer"), the header that carries the secret.  Providers:
	 * empty, the kind decides.
	 */
	char		 header[GW_HEADERMAX];
	uint32_t	 methods;		/* GW_M_*; upstreams: != 0 */
	uint32_t	 nprices;		/* <= GW_MAXPRICES; upstreams 0 */
	struct gw_price	 prices[GW_MAXPRICES];
	/*
	 * Seconds the provider may send nothing (connect, the first byte
	 * of its answer, between two of its bytes) before the request is
	 * cut as the provider's silence; 0: GW_IDLE_DEFAULT.
	 */
	uint32_t	 idle_timeout_s;	/* <= GW_IDLE_MAX */
};

/* IMSG_GW_GRANT, with a listening TCP socket as its fd */
struct gw_grant {
	char		 id[ATTEMPT_ID_MAX];
	char		 provider[GW_NAMEMAX];
	char		 token[GW_TOKEN_LEN + 1];	/* empty: mint one */
	uint32_t	 nmodels;		/* providers; 0: none allowed */
	char		 models[GW_MAXMODELS][GW_MODELMAX];
	uint32_t	 methods;		/* upstreams: GW_M_* */
	uint64_t	 budget_tokens;		/* 0: no limit */
	uint64_t	 budget_uusd;		/* 0: no limit */
	uint64_t	 spent_tokens;		/* restored after a restart */
	uint64_t	 spent_uusd;
	char		 tenant[GW_NAMEMAX];	/* may be empty */
};

/* IMSG_GW_TOKEN */
struct gw_token {
	char		 id[ATTEMPT_ID_MAX];
	char		 provider[GW_NAMEMAX];
	char		 token[GW_TOKEN_LEN + 1];
};

/* IMSG_GW_USAGE, one per request; never the prompt, never a key */
struct gw_usage {
	char		 id[ATTEMPT_ID_MAX];
	char		 provider[GW_NAMEMAX];
	uint64_t	 seq;			/* per gateway process, from 1 */
	uint64_t	 time_ms;		/* wall clock, request start */
	char		 model[GW_MODELMAX];	/* esc(3)-encoded, may be "" */
	uint64_t	 tokens_in;
	uint64_t	 tokens_out;
	uint64_t	 cost_uusd;
	uint32_t	 status;		/* HTTP status sent to the agent */
	uint32_t	 outcome;		/* enum gw_outcome */
	/*
	 * 1: the provider's own usage was not read (the answer ended
	 * before it): the counts are the request's reservation, its input
	 * estimate and the output cap it was sent with.  0 or 1.
	 */
	uint32_t	 estimated;
	/*
	 * The request: its method ("" if evhttp answered it before its
	 * line was read), its path without the query (which may hold a
	 * key), esc(3)-encoded and cut to fit; and why it was refused or
	 * cut, "" if it was not.  Printable ASCII.
	 */
	char		 method[GW_METHODMAX];
	char		 path[GW_PATHMAX];
	char		 reason[GW_REASONMAX];
};

/* gwmsg.c */
/*
 * The payload of each message; NULL if the struct does not validate
 * (a bug of the caller) or memory ran out.
 */
struct ibuf	*gw_provider_compose(const struct gw_provider *);
struct ibuf	*gw_grant_compose(const struct gw_grant *);
struct ibuf	*gw_token_compose(const struct gw_token *);
struct ibuf	*gw_usage_compose(const struct gw_usage *);
struct ibuf	*gw_revoke_compose(const char *);
/* reason is escaped here (esc(3)) and cut to fit one line */
struct ibuf	*gw_error_compose(const char *);
/* 0, or -1 with a one-line reason naming the message and field. */
int		 gw_provider_decode(struct imsg *, struct gw_provider *,
		    char *, size_t);
int		 gw_grant_decode(struct imsg *, struct gw_grant *, char *,
		    size_t);
int		 gw_token_decode(struct imsg *, struct gw_token *, char *,
		    size_t);
int		 gw_usage_decode(struct imsg *, struct gw_usage *, char *,
		    size_t);
int		 gw_revoke_decode(struct imsg *, char *, size_t, char *,
		    size_t);
/* reason: an esc(3) encoding, printable ASCII, < GW_ERRMAX */
int		 gw_error_decode(struct imsg *, char *, size_t, char *,
		    size_t);
int		 gw_configured_decode(struct imsg *, char *, size_t);
/* Field checks the gateway and the parent share. */
int		 gw_valid_name(const char *);
int		 gw_valid_token(const char *);
int		 gw_valid_model(const char *);
const char	*gw_outcome_name(uint32_t);
const char	*gw_kind_name(uint8_t);
/*
 * An upstream's base URL, https://HOST[:PORT][/PATH], split: HOST of
 * letters, digits, '.' and '-', PORT 1-65535 (443 when absent), PATH
 * without a query, fragment or trailing '/'.  0, or -1 if it is not
 * one.  The parent checks with it what the gateway will parse.
 */
int		 gw_url_split(const char *, char *, size_t, uint16_t *,
		    char *, size_t);

#endif /* FACTORY_GWMSG_H */
