/*
 * factory-gateway: the one process that reads model-provider and
 * upstream keys (factory-workers(8), GATEWAY).
 */
#ifndef FACTORY_GATEWAY_H
#define FACTORY_GATEWAY_H

#include <sys/queue.h>

#include <openssl/ssl.h>

#include "gwmsg.h"

#define GW_KEYMAX	4096		/* a key or secret file, bytes */
#define GW_MAXGRANTS	1024		/* endpoints at once */
#define GW_MAXREVOKED	4096		/* tokens remembered as revoked */

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

/* One grant: an attempt's endpoint for one provider or upstream. */
struct gw_ep {
	TAILQ_ENTRY(gw_ep)	 entry;
	struct gw_grant		 g;
	int			 fd;		/* listening, in the sandbox */
	struct evhttp		*http;
	int			 inflight;	/* forwards running */
	TAILQ_HEAD(, gw_fwd)	 fwds;
};
TAILQ_HEAD(gw_eps, gw_ep);

/* gateway.c */
extern struct gw_provs	 gw_provs;
extern struct gw_eps	 gw_eps;
extern struct event_base *gw_base;
struct gw_prov	*gw_prov_find(const char *);
/* 1 if tok (len bytes) is a revoked token; its attempt in *id. */
int		 gw_revoked(const char *, size_t, char *, size_t);
void		 gw_send_usage(struct gw_usage *);
void		 gw_send_error(const char *, ...)
		    __attribute__((__format__ (printf, 1, 2)));
uint64_t	 gw_now_ms(void);
/* Request and upstream timeouts, seconds (-V gw_timeout=N). */
extern int	 gw_timeout;

/* serve.c */
void		 serve_start(struct gw_ep *);
void		 serve_stop(struct gw_ep *);

#endif /* FACTORY_GATEWAY_H */
