/*
 * factory-fleet: the one process that speaks to the fleet's PostgreSQL.
 */
#ifndef FACTORY_FLEET_H
#define FACTORY_FLEET_H

#include <sys/queue.h>

#include <stdint.h>

#include <libpq-fe.h>

#include "fleetmsg.h"
#include "imsgev.h"

#define FQ_MAXPARAMS	16

struct fq;
/* res is NULL when err says why there is none (deadline, link lost). */
typedef void	(*fq_done)(struct fq *, PGresult *, const char *);

/* One query, queued on the connection, answered once. */
struct fq {
	TAILQ_ENTRY(fq)	 entry;
	uint32_t	 reqid;		/* the parent's request */
	const char	*sql;
	const char	*name;		/* prepared once per link, if set */
	int		 simple;	/* several statements, no parameters */
	int		 nparams;
	char		*params[FQ_MAXPARAMS];
	fq_done		 done;
	int		 tries;		/* of the caller's, for retries */
	void		*arg;		/* the caller's, freed by done */
};

/* db.c */
/* Connect (and after a loss, again); up() each time the link is up. */
void		 db_start(const char *, uint32_t, void (*)(void));
struct fq	*fq_new(uint32_t, const char *, fq_done);
int		 fq_param(struct fq *, const char *, ...)
		    __attribute__((__format__ (printf, 2, 3)));
void		 fq_free(struct fq *);
/* Queued while the link is up; answered at once (an error) if not. */
void		 db_query(struct fq *);
int		 db_up(void);
/* Printable ASCII of at most FLEET_TEXT_MAX - 1 bytes, from anything. */
void		 db_text(char *, size_t, const char *);
/* The SQLSTATE of an error result, "" if none. */
const char	*db_sqlstate(PGresult *);
/* Decoders of one field of a result: 0, or -1 (it is logged). */
int		 res_num(PGresult *, int, int, int64_t, int64_t, int64_t *);
int		 res_str(PGresult *, int, int, char *, size_t,
		    int (*)(const char *));

/* schema.c */
/* Apply the migrations under the lock row, then call done(version). */
void		 schema_apply(void (*)(uint32_t));
uint32_t	 schema_version(void);

/* sql.c */
void		 sql_hello(const struct fleet_hello *, void (*)(uint64_t, int));
void		 sql_serves(uint32_t, const struct fleet_serves *);
void		 sql_tenant(uint32_t, const struct fleet_tenant *);
void		 sql_submit(uint32_t, struct fleet_submit *);
void		 sql_claim(uint32_t);
void		 sql_write(uint32_t, uint32_t, const struct fleet_write *);
void		 sql_heartbeat(uint32_t);
void		 sql_hosts(uint32_t);
void		 sql_queue(uint32_t, const struct fleet_scope *);
void		 sql_rescue(uint32_t);
void		 sql_adopt(uint32_t);
void		 sql_gauges(uint32_t);
void		 sql_setstate(uint32_t, const struct fleet_setstate *);
void		 sql_tenants(uint32_t, const struct fleet_scope *);
void		 sql_cancel(uint32_t, const struct fleet_cancel *);
void		 sql_usage(uint32_t, const struct fleet_scope *);

/* reply.c */
struct imsgev	*fleet_channel(void);
/* An answer to the parent; b NULL (did not compose) is fatal. */
void		 fleet_send(uint32_t, uint32_t, struct ibuf *);
void		 fleet_reply(uint32_t, int, const char *);

#endif /* FACTORY_FLEET_H */
