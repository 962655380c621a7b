/*
 * The parent's messages to factory-egress: one endpoint of a sandbox
 * (its listening socket rides along as the imsg's fd) with the one
 * destination it forwards to, and the end of an attempt's endpoints.
 * Composed by the parent, decoded strictly by the child: a message
 * that does not decode is a broken invariant there (fatalx).
 */
#ifndef FACTORY_EGRESSMSG_H
#define FACTORY_EGRESSMSG_H

#include <stdint.h>

#include "factory.h"
#include "imsg.h"

#define EGRESS_MAXEP		32	/* endpoints of one sandbox */
#define EGRESS_HOSTMAX		256	/* with its NUL */
#define EGRESS_MAXCONNS		64	/* open connections per sandbox */

enum egress_kind {
	EGRESS_ADDR4 = 4,	/* host is an IPv4 literal */
	EGRESS_ADDR6 = 6,	/* host is an IPv6 literal, no brackets */
	EGRESS_NAME = 1		/* host is a name, resolved by the child */
};

struct egress_listen {
	char		 id[ATTEMPT_ID_MAX];	/* attempt */
	uint32_t	 ep;			/* endpoint, < EGRESS_MAXEP */
	uint16_t	 port;			/* destination port, > 0 */
	uint8_t		 kind;			/* enum egress_kind */
	char		 host[EGRESS_HOSTMAX];
};

/* egressmsg.c */
/* The payload of IMSG_EGRESS_LISTEN / _CLOSE; NULL if it does not fit. */
struct ibuf	*egress_listen_compose(const struct egress_listen *);
struct ibuf	*egress_close_compose(const char *);
/* 0, or -1 with a one-line reason naming the field. */
int		 egress_listen_decode(struct imsg *, struct egress_listen *,
		    char *, size_t);
int		 egress_close_decode(struct imsg *, char *, size_t, char *,
		    size_t);
int		 egress_valid_id(const char *);

#endif /* FACTORY_EGRESSMSG_H */
