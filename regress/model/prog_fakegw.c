/*
 * A hostile factory-gateway, installed under that name in a test
 * libexec: it says HELLO, takes the parent's providers and grants,
 * and on the first grant lies in the way its mode (the file
 * "factory-gateway.mode" beside it) says:
 *
 *	usage-ungranted	usage for a provider the attempt was not granted
 *	usage-huge	usage with more tokens than any request has
 *	usage-unknown	usage for an attempt that does not exist
 *	token-other	IMSG_GW_TOKEN with another token than the grant's
 *
 * Well-formed messages all (gwmsg.c composes them): what the parent
 * must refuse is what they say.  Then it waits to be killed.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <err.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "gwmsg.h"
#include "imsg.h"
#include "msg.h"

static struct imsgbuf	 ib;

static void
send_ibuf(uint32_t type, struct ibuf *b)
{
	if (b == NULL)
		errx(1, "cannot compose %u", type);
	if (imsg_compose(&ib, type, 0, 0, -1, ibuf_data(b), ibuf_size(b)) != 1 ||
	    imsgbuf_flush(&ib) == -1)
		err(1, "send %u", type);
	ibuf_free(b);
}

static void
lie(const char *mode, const struct gw_grant *g)
{
	struct gw_usage	 u;
	struct gw_token	 t;

	memset(&u, 0, sizeof(u));
	strlcpy(u.id, g->id, sizeof(u.id));
	strlcpy(u.provider, g->provider, sizeof(u.provider));
	u.seq = 1;
	u.time_ms = 1;
	strlcpy(u.model, "m-small", sizeof(u.model));
	u.tokens_in = 10;
	u.tokens_out = 20;
	u.cost_uusd = 50;
	u.status = 200;
	u.outcome = GW_OK;
	if (strcmp(mode, "usage-ungranted") == 0)
		strlcpy(u.provider, "anthropic", sizeof(u.provider));
	else if (strcmp(mode, "usage-huge") == 0)
		u.tokens_in = UINT64_MAX / 2;
	else if (strcmp(mode, "usage-unknown") == 0)
		strlcpy(u.id, "a-20991231-9999", sizeof(u.id));
	else if (strcmp(mode, "token-other") == 0) {
		memset(&t, 0, sizeof(t));
		strlcpy(t.id, g->id, sizeof(t.id));
		strlcpy(t.provider, g->provider, sizeof(t.provider));
		snprintf(t.token, sizeof(t.token), "%s%064d", GW_TOKEN_PREFIX,
		    7);
		send_ibuf(IMSG_GW_TOKEN, gw_token_compose(&t));
		return;
	} else
		errx(1, "unknown mode %s", mode);
	send_ibuf(IMSG_GW_USAGE, gw_usage_compose(&u));
}

int
main(int argc, char *argv[])
{
	struct pollfd	 pfd;
	struct imsg	 imsg;
	struct gw_grant	 g;
	char		 self[PATH_MAX], mode[64] = "", why[256], *h;
	FILE		*f;
	ssize_t		 n;
	int		 lied = 0, fd;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		err(1, "readlink");
	self[n] = '\0';
	strlcat(self, ".mode", sizeof(self));
	if ((f = fopen(self, "r")) == NULL)
		err(1, "%s", self);
	if (fgets(mode, sizeof(mode), f) == NULL)
		errx(1, "%s: empty", self);
	fclose(f);
	mode[strcspn(mode, "\n")] = '\0';

	if (imsgbuf_init(&ib, PROC_PARENT_FD) == -1)
		err(1, "imsgbuf_init");
	imsgbuf_allow_fdpass(&ib);
	if ((h = msg_hello_make("promises: (hostile test gateway)")) == NULL)
		err(1, "hello");
	if (imsg_compose(&ib, IMSG_HELLO, 0, 0, -1, h, strlen(h) + 1) != 1 ||
	    imsgbuf_flush(&ib) == -1)
		err(1, "hello");
	free(h);
	pfd.fd = PROC_PARENT_FD;
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) == -1)
			err(1, "poll");
		if (imsgbuf_read(&ib) != 1)
			return (0);	/* killed, or the parent is gone */
		while (imsgbuf_get(&ib, &imsg) == 1) {
			if ((fd = imsg_get_fd(&imsg)) != -1)
				close(fd);
			if (imsg_get_type(&imsg) == IMSG_GW_GRANT && !lied) {
				if (gw_grant_decode(&imsg, &g, why,
				    sizeof(why)) == -1)
					errx(1, "%s", why);
				lie(mode, &g);
				lied = 1;
			}
			imsg_free(&imsg);
		}
	}
	(void)argc;
	(void)argv;
}
