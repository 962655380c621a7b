/*
 * factory-preview: each attempt's preview port, served on its own host
 * name to holders of a token the parent minted (factory-workers(8),
 * PREVIEW).  preview.c keeps the parent's channel and the tables,
 * conn.c the browsers' connections, health.c the health probes,
 * http.c (http.h) what is parsed; calls run one way, down, through
 * struct pv_ctx.
 */
#ifndef FACTORY_PREVIEW_H
#define FACTORY_PREVIEW_H

#include <sys/queue.h>

#include <event.h>

#include "previewmsg.h"

#define PV_MAXPREVIEWS	1024	/* previews at once, a sanity bound */
#define PV_MAXNONCES	4096	/* tokens exchanged and not yet expired */

struct pv_probe;

struct pv_preview {
	TAILQ_ENTRY(pv_preview)	 entry;
	struct preview_open	 o;
	int			 nconns;	/* relayed or waiting */
	int			 npending;	/* CONNECTs unanswered */
	struct pv_probe		*probe;		/* health, NULL: none */
	struct event		 expiry;	/* its end: connections cut */
};
TAILQ_HEAD(pv_previews, pv_preview);

/*
 * What preview.c gives conn.c and health.c: its loop, its conf and
 * tables, and its messages to the parent.  They reach preview.c
 * through this alone.
 */
struct pv_ctx {
	struct event_base	*base;
	const struct preview_conf *conf;
	/* A preview by id, only if live (not past its end). */
	struct pv_preview	*(*find)(const char *);
	/*
	 * A nonce taken once, remembered until its end: 0; -1 if it was
	 * taken before, -2 if the table is full of live ones.
	 */
	int			(*nonce_take)(const char *, uint64_t);
	/* IMSG_PREVIEW_CONNECT for id: the request's number. */
	uint32_t		(*connect)(const char *);
	/* IMSG_PREVIEW_OPENED. */
	void			(*opened)(const char *, const char *);
	/* IMSG_PREVIEW_HEALTH. */
	void			(*health)(const struct preview_health *);
};

/* conn.c */
void		 conn_init(const struct pv_ctx *);
/* Accept browsers on the parent's listening socket. */
void		 conn_listen(int);
/* The parent's answer to a CONNECT: 1 if a connection took it. */
int		 conn_connected(const struct preview_connected *, int);
/* The preview ends: its connections at once. */
void		 conn_close_preview(struct pv_preview *);

/* health.c */
void		 health_init(const struct pv_ctx *);
/* Probe the preview's health path, if it has one. */
void		 health_start(struct pv_preview *);
void		 health_stop(struct pv_preview *);
/* The parent's answer to a CONNECT: 1 if a probe took it. */
int		 health_connected(const struct preview_connected *, int);

#endif /* FACTORY_PREVIEW_H */
