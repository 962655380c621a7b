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
#include "fuzzimsg.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egress_listen	 l;
	struct imsg		 imsg;
	char			 err[128], id[ATTEMPT_ID_MAX];

	if (size < 1)
		return (0);
	if (data[0] & 1) {
		fuzz_imsg(&imsg, IMSG_EGRESS_CLOSE, data + 1, size - 1);
		if (egress_close_decode(&imsg, id, sizeof(id), err,
		    sizeof(err)) == 0) {
			FUZZ_ASSERT(egress_valid_id(id), "close: bad id kept");
			fuzz_same(egress_close_compose(id), data + 1, size - 1,
			    "close");
		}
	} else {
		fuzz_imsg(&imsg, IMSG_EGRESS_LISTEN, data + 1, size - 1);
		if (egress_listen_decode(&imsg, &l, err, sizeof(err)) == 0) {
			FUZZ_ASSERT(l.ep < EGRESS_MAXEP && l.port != 0 &&
			    (l.kind == EGRESS_ADDR4 || l.kind == EGRESS_ADDR6 ||
			    l.kind == EGRESS_NAME) && egress_valid_id(l.id) &&
			    memchr(l.host, '\0', sizeof(l.host)) != NULL,
			    "listen: a field out of range kept");
			fuzz_same(egress_listen_compose(&l), data + 1, size - 1,
			    "listen");
		} else
			FUZZ_ASSERT(err[0] != '\0', "listen: no reason");
	}
	imsg_free(&imsg);
	return (0);
}
