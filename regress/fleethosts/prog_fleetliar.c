/*
 * A lying factory-fleet, installed in a test libexec under that name:
 * it speaks the protocol (fleetmsg.h) without a database, and claims
 * one attempt twice.  The manifest is read from the file beside it,
 * NAME.manifest; the attempt's id, repository and tenant from
 * NAME.claim ("ID REPO TENANT").  Every claim is answered with that
 * same attempt at claim epoch 1 (the host's epoch is its parent's
 * last and one): the second one while the host is
 * still starting the first (or holds it), which the parent must take
 * for the lie it is: kill this child, send nothing back for it, and
 * never journal the id twice.  Everything else is answered OK.
 */
#include <sys/types.h>

#include <err.h>
#include <event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "fleetmsg.h"
#include "imsgev.h"
#include "crypto.h"
#include "util.h"

static struct imsgev	 iev;
static char		*manifest;
static char		 id[ATTEMPT_ID_MAX], repo[REPO_NAME_MAX];
static char		 tenant[FLEET_NAME_MAX];

static void
answer(uint32_t type, uint32_t reqid, struct ibuf *b)
{
	if (b == NULL)
		errx(1, "an answer that does not compose");
	if (imsg_compose_ibuf(&iev.ibuf, type, reqid, 0, b) == -1)
		err(1, "imsg_compose_ibuf");
	imsgev_add(&iev);
}

static int
liar_imsg(struct imsg *imsg)
{
	struct fleet_hello	 h;
	struct fleet_ready	 r;
	struct fleet_result	 res;
	struct fleet_claimed	 cl;
	char			 hex[SHA256_HEX_LEN + 1], e[256];

	switch (imsg_get_type(imsg)) {
	case IMSG_FLEET_HELLO:
		/* A host epoch past the parent's last, as a database's. */
		if (fleet_hello_decode(imsg, &h, e, sizeof(e)) == -1)
			errx(1, "%s", e);
		memset(&r, 0, sizeof(r));
		r.epoch = h.epoch + 1;
		r.schema = 1;
		r.state = FLEET_ACTIVE;
		answer(IMSG_FLEET_READY, 0, fleet_ready_compose(&r));
		break;
	case IMSG_FLEET_CLAIM:
		memset(&cl, 0, sizeof(cl));
		strlcpy(cl.id, id, sizeof(cl.id));
		strlcpy(cl.tenant, tenant, sizeof(cl.tenant));
		strlcpy(cl.repo, repo, sizeof(cl.repo));
		cl.class = FLEET_NORMAL;
		cl.epoch = 1;
		cl.claims = 1;
		sha256_hex(manifest, strlen(manifest), hex);
		snprintf(cl.digest, sizeof(cl.digest), "sha256:%s", hex);
		cl.manifest = manifest;
		answer(IMSG_FLEET_CLAIMED, imsg_get_id(imsg),
		    fleet_claimed_compose(&cl));
		break;
	default:
		memset(&res, 0, sizeof(res));
		res.code = FLEET_OK;
		strlcpy(res.text, "active", sizeof(res.text));
		answer(IMSG_FLEET_RESULT, imsg_get_id(imsg),
		    fleet_result_compose(&res));
		break;
	}
	return (0);
}

static char *
beside(const char *ext)
{
	char	 self[PATH_MAX], *buf;
	ssize_t	 n;
	FILE	*f;
	size_t	 len;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 8)) == -1)
		err(1, "readlink");
	self[n] = '\0';
	strlcat(self, ext, sizeof(self));
	if ((f = fopen(self, "r")) == NULL)
		err(1, "%s", self);
	if ((buf = calloc(1, FLEET_MANIFEST_MAX)) == NULL)
		err(1, NULL);
	len = fread(buf, 1, FLEET_MANIFEST_MAX - 1, f);
	fclose(f);
	buf[len] = '\0';
	return (buf);
}

int
main(int argc, char *argv[])
{
	char	*claim;

	manifest = beside(".manifest");
	claim = beside(".claim");
	if (sscanf(claim, "%31s %63s %63s", id, repo, tenant) != 3)
		errx(1, "NAME.claim: ID REPO TENANT");
	free(claim);
	child_start(&iev, proc_child_init(PROC_FLEET, argc, argv), liar_imsg);
	event_dispatch();
	return (0);
}
