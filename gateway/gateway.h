/*
 * factory-gateway: the one process that reads model-provider and
 * upstream keys (factory-workers(8), GATEWAY).
 */
#ifndef FACTORY_GATEWAY_H
#define FACTORY_GATEWAY_H

#include <sys/queue.h>

#include <openssl/ssl.h>

#include <event2/http.h>
#include <jansson.h>

#include "gwmsg.h"
#include "proto.h"

#define GW_KEYMAX	4096		/* a key or secret file, bytes */
#define GW_MAXGRANTS	1024		/* endpoints at once */
#define GW_MAXREVOKED	4096		/* tokens remembered as revoked */
#define GW_MAXURI	2048		/* a request target, as the agent sent it */

/* A provider or upstream of the config, with its key read. */
struct gw_prov {
	TAILQ_ENTRY(gw_prov)	 entry;
	struct gw_provider	 conf;
	char			 key[GW_KEYMAX];
	SSL_CTX			*ctx;		/* the CA file only */
	char			 host[256];	/* of conf.url */
	uint16_t		 port;
	char			 prefix[GW_URLMAX]; /* url's path, no '/' at end */
	int			 usable;	/* key and CA read */
};
TAILQ_HEAD(gw_provs, gw_prov);

struct gw_fwd;
struct gw_conn;

/* One grant: an attempt's endpoint for one provider or upstream. */
struct gw_ep {
	TAILQ_ENTRY(gw_ep)	 entry;
	struct gw_grant		 g;	/* spent_* kept up to date here */
	int			 fd;		/* listening, in the sandbox */
	struct evhttp		*http;
	uint64_t		 running;	/* tokens of forwards running */
	uint64_t		 running_uusd;	/* and their cost */
	int			 nfwds;
	TAILQ_HEAD(, gw_fwd)	 fwds;
	int			 nconns;
	TAILQ_HEAD(, gw_conn)	 conns;
	struct event		*sweep;		/* deadlines, once a second */
	struct evhttp_bound_socket *bound;	/* the listener */
	int			 paused;	/* not accepting: at a cap */
	struct event		*purge;		/* while paused, often */
};
TAILQ_HEAD(gw_eps, gw_ep);

/* gateway.c */
extern struct gw_provs	 gw_provs;
extern struct gw_eps	 gw_eps;
extern struct event_base *gw_base;
struct gw_prov	*gw_prov_find(const char *);
/* 1 if tok (len bytes) is a revoked token; its attempt in *id. */
int		 gw_revoked(const char *, size_t, char *, size_t);
void		 gw_cred_header(const struct gw_prov *, char *, char *);
void		 gw_send_usage(struct gw_usage *);
/* The request's method and path (the target, cut at '?') in u. */
void		 gw_usage_request(struct gw_usage *, const char *,
		    const char *);
/* Why it was refused or cut, escaped and cut to fit, in u. */
void		 gw_usage_reason(struct gw_usage *, const char *);
void		 gw_send_error(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
/* Request and upstream timeouts, seconds (-V gw_timeout=N). */
extern int	 gw_timeout;

/* serve.c */
void		 serve_start(struct gw_ep *);
void		 serve_stop(struct gw_ep *);
/*
 * An error answer as JSON in the shape of a provider kind, of status
 * and outcome (enum gw_outcome); close: the connection ends after it.
 */
void		 serve_error(struct evhttp_request *, int, int, uint32_t,
		    const char *, int);
/* "budget exhausted: ..." of the tokens (usd 0) or the USD budget. */
void		 serve_budget_message(const struct gw_ep *, int, char *,
		    size_t);

/* fwd.c */
struct fwd_req {
	int		 api;		/* enum proto_api, or -1: upstream */
	json_t		*doc;		/* provider body, or NULL */
	struct proto_prices pr;		/* prices of the model */
	uint64_t	 pin, pout;	/* its dearest: reserved at */
	uint64_t	 maxout;	/* its output ceiling, tokens */
	uint64_t	 in_est;	/* the request's size in tokens */
	uint64_t	 in_max;	/* reserved: a token a byte at most */
	uint64_t	 pred;		/* its prediction, billed as output */
	/* its worst case, counted while it runs: input and output ceiling */
	uint64_t	 reserve, reserve_uusd;
	struct gw_usage	 u;		/* filled in so far */
	/* the target as judged and spelled again (serve.c), at most 3x */
	char		 target[3 * GW_MAXURI];
};
/* Forward req to prov: 0, or -1 (the caller answers 502). */
int		 fwd_start(struct gw_ep *, struct gw_prov *,
		    struct evhttp_request *, struct fwd_req *);
/* The endpoint goes: its forwards end, their usage reported. */
void		 fwd_stop(struct gw_ep *);
/* Once a second: cut a forward whose agent read nothing for long. */
void		 fwd_sweep(struct gw_ep *);

#endif /* FACTORY_GATEWAY_H */
