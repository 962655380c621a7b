/*
 * The suite's one wire format for the children's messages, field by
 * field (bgpd's ibuf_add_n* / ibuf_get_n*): numbers in network byte
 * order, a string as an n32 length and that many bytes, no NUL among
 * them.  A reader reads a message in a few visible lines, as
 * OpenSMTPD's handlers do:
 *
 *	m_open(&m, "READY", data, len, err, errlen);
 *	m_get_str(&m, "id", r.id, sizeof(r.id));
 *	m_get_n64(&m, "epoch", &r.epoch);
 *	if (m_end(&m) == -1)
 *		return (-1);		(err names the message and field)
 *
 * The first failure sticks: every later m_get_* does nothing and
 * fails, and m_end fails with the first reason.  m_end also refuses
 * bytes left over.  Nothing here is fatal: the caller decides.
 */
#ifndef FACTORY_WIRE_H
#define FACTORY_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "imsg.h"

struct mread {
	struct ibuf	 ib;
	const char	*name;		/* the message, for the reason */
	char		*err;
	size_t		 errlen;
	int		 bad;
};

/* wire.c */
void	 m_open(struct mread *, const char *, const void *, size_t, char *,
	    size_t);
int	 m_get_n8(struct mread *, const char *, uint8_t *);
int	 m_get_n32(struct mread *, const char *, uint32_t *);
int	 m_get_n64(struct mread *, const char *, uint64_t *);
/* 0 or 1 only. */
int	 m_get_bool(struct mread *, const char *, int *);
/* Into a buffer of size bytes: at most size - 1, NUL-terminated. */
int	 m_get_str(struct mread *, const char *, char *, size_t);
/* At most max bytes, malloc'd and NUL-terminated in *sp. */
int	 m_get_strdup(struct mread *, const char *, size_t, char **);
/* Fail with a reason of the caller's (a value out of its range). */
int	 m_fail(struct mread *, const char *, ...)
	    __attribute__((__format__ (printf, 2, 3)));
int	 m_end(struct mread *);

/* A length-prefixed string; -1 if it is over UINT32_MAX or no memory. */
int	 m_add_str(struct ibuf *, const char *);

#endif /* FACTORY_WIRE_H */
