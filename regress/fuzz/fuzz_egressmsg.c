/*
 * The parent's messages to factory-egress (libcommon/egressmsg.c):
 * byte 0 picks IMSG_EGRESS_LISTEN or IMSG_EGRESS_CLOSE, the rest is
 * the payload.  Promises checked: what decodes has every field in its
 * range (an attempt id, an endpoint below 32, a port, a known kind, a
 * host of that kind), and composing it again gives the input's bytes
 * exactly: the encoding has one form, so nothing is dropped or
 * tolerated on the way.
 */
#include "egressmsg.h"
#include "fuzz.h"

/* The payload as a received message holds it. */
static void
mkimsg(struct imsg *imsg, uint32_t type, const uint8_t *p, size_t len)
{
	memset(imsg, 0, sizeof(*imsg));
	imsg->hdr.type = type;
	imsg->hdr.len = IMSG_HEADER_SIZE + len;
	FUZZ_ASSERT((imsg->buf = ibuf_open(len > 0 ? len : 1)) != NULL,
	    "ibuf_open");
	FUZZ_ASSERT(ibuf_add(imsg->buf, p, len) == 0, "ibuf_add");
	imsg->data = len > 0 ? ibuf_data(imsg->buf) : NULL;
}

static void
same(struct ibuf *b, const uint8_t *p, size_t len, const char *what)
{
	FUZZ_ASSERT(b != NULL, "%s: decoded but cannot compose", what);
	FUZZ_ASSERT(ibuf_size(b) == len && memcmp(ibuf_data(b), p, len) == 0,
	    "%s: composed again, %zu bytes differ from the %zu read", what,
	    ibuf_size(b), len);
	ibuf_free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egress_listen	 l;
	struct imsg		 imsg;
	char			 err[128], id[ATTEMPT_ID_MAX];

	if (size < 1)
		return (0);
	if (data[0] & 1) {
		mkimsg(&imsg, IMSG_EGRESS_CLOSE, data + 1, size - 1);
		if (egress_close_decode(&imsg, id, sizeof(id), err,
		    sizeof(err)) == 0) {
			FUZZ_ASSERT(egress_valid_id(id), "close: bad id kept");
			same(egress_close_compose(id), data + 1, size - 1,
			    "close");
		}
	} else {
		mkimsg(&imsg, IMSG_EGRESS_LISTEN, data + 1, size - 1);
		if (egress_listen_decode(&imsg, &l, err, sizeof(err)) == 0) {
			FUZZ_ASSERT(l.ep < EGRESS_MAXEP && l.port != 0 &&
			    (l.kind == EGRESS_ADDR4 || l.kind == EGRESS_ADDR6 ||
			    l.kind == EGRESS_NAME) && egress_valid_id(l.id) &&
			    memchr(l.host, '\0', sizeof(l.host)) != NULL,
			    "listen: a field out of range kept");
			same(egress_listen_compose(&l), data + 1, size - 1,
			    "listen");
		} else
			FUZZ_ASSERT(err[0] != '\0', "listen: no reason");
	}
	imsg_free(&imsg);
	return (0);
}
