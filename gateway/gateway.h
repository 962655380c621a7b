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

/*
 * What gateway.c gives serve.c and fwd.c (serve_init): its loop, its
 * tables, and where a request's usage goes.  They reach gateway.c
 * through this alone, so calls run one way, down: gateway.c, serve.c,
 * fwd.c, proto.c.
 */
struct gw_ctx {
	struct event_base	*base;
	int			 timeout;	/* request and upstream, s
						   (-V gw_timeout=N) */
	struct gw_eps		*eps;		/* every endpoint */
	struct gw_prov		*(*prov_find)(const char *);
	/* 1 if tok (len bytes) is a revoked token; its attempt in *id. */
	int			(*revoked)(const char *, size_t, char *,
				    size_t);
	/* One IMSG_GW_USAGE to the parent, logged. */
	void			(*usage)(struct gw_usage *);
};

/* gateway.c */
void		 gw_send_error(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));

/* serve.c */
void		 serve_init(const struct gw_ctx *);
void		 serve_start(struct gw_ep *);
void		 serve_stop(struct gw_ep *);

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
void		 fwd_init(const struct gw_ctx *);
/* Forward req to prov: 0, or -1 (the caller answers 502). */
int		 fwd_start(struct gw_ep *, struct gw_prov *,
		    struct evhttp_request *, struct fwd_req *);
/* The endpoint goes: its forwards end, their usage reported. */
void		 fwd_stop(struct gw_ep *);
/* Once a second: cut a forward whose agent read nothing for long. */
void		 fwd_sweep(struct gw_ep *);
/*
 * An error answer to the agent (serve.c's refusals too), as JSON in
 * the shape of a provider kind, of status and outcome (enum
 * gw_outcome); close: the connection ends after it.
 */
void		 fwd_answer_error(struct evhttp_request *, int, int, uint32_t,
		    const char *, int);

#endif /* FACTORY_GATEWAY_H */
