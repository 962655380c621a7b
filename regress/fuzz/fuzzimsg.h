/*
 * For the harnesses of imsg payload codecs (fuzz_egressmsg.c,
 * fuzz_fleetmsg.c): a received message holding a payload, and the
 * one-form check (composed again, the same bytes).
 */
#ifndef FACTORY_FUZZIMSG_H
#define FACTORY_FUZZIMSG_H

#include "imsg.h"
#include "fuzz.h"

/* The payload p as a received message of type holds it. */
static inline void
fuzz_imsg(struct imsg *imsg, uint32_t type, const uint8_t *p, size_t len)
{
	memset(imsg, 0, sizeof(*imsg));
	imsg->hdr.type = type;
	imsg->hdr.len = IMSG_HEADER_SIZE + len;
	FUZZ_ASSERT((imsg->buf = ibuf_open(len > 0 ? len : 1)) != NULL,
	    "ibuf_open");
	FUZZ_ASSERT(ibuf_add(imsg->buf, p, len) == 0, "ibuf_add");
	imsg->data = len > 0 ? ibuf_data(imsg->buf) : NULL;
}

/* b (freed here) holds exactly the len bytes at p. */
static inline void
fuzz_same(struct ibuf *b, const uint8_t *p, size_t len, const char *what)
{
	FUZZ_ASSERT(b != NULL, "%s: decoded but cannot compose", what);
	FUZZ_ASSERT(ibuf_size(b) == len && memcmp(ibuf_data(b), p, len) == 0,
	    "%s: composed again, %zu bytes differ from the %zu read", what,
	    ibuf_size(b), len);
	ibuf_free(b);
}

#endif /* FACTORY_FUZZIMSG_H */
