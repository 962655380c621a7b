/*
 * The channel to the parent and the answers on it.  Every answer goes
 * through a composer of fleetmsg.c, which checks each field's shape:
 * nothing the database said reaches the parent unchecked.
 */
#include <sys/types.h>

#include <event.h>
#include <string.h>

#include "fleet.h"
#include "imsgev.h"
#include "log.h"

static struct imsgev	 iev_parent;

struct imsgev *
fleet_channel(void)
{
	return (&iev_parent);
}

void
fleet_send(uint32_t type, uint32_t reqid, struct ibuf *b)
{
	if (b == NULL)
		fatalx("an answer that does not compose");
	if (imsg_compose_ibuf(&iev_parent.ibuf, type, reqid, 0, b) == -1)
		fatal("imsg_compose_ibuf");
	imsgev_add(&iev_parent);
}

void
fleet_reply(uint32_t reqid, int code, const char *text)
{
	struct fleet_result	 r;

	memset(&r, 0, sizeof(r));
	r.code = code;
	db_text(r.text, sizeof(r.text), text);
	fleet_send(IMSG_FLEET_RESULT, reqid, fleet_result_compose(&r));
}
