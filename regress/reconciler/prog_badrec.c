/*
 * A hostile reconciler, installed in a test libexec as
 * factory-reconciler: it says HELLO, then answers every
 * IMSG_INVENTORY_REQ with the message spelled in
 * "factory-reconciler.msg" beside its binary (invtok.h: one token a
 * line, well-formed or not), as an IMSG_INVENTORY.  The file is read
 * again for each request, so a test can change the answer between two
 * reconciliations.  A file whose first line is "error" is sent, after
 * that line, as an IMSG_ERROR instead.  Everything else from the
 * parent is ignored; EOF ends it.
 */
#include <sys/types.h>

#include <err.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "imsg.h"
#include "invtok.h"

#define BADREC_MAX	(FACTORY_MAXIMSG - IMSG_HEADER_SIZE)

static char	 payload_path[PATH_MAX];

static void
hello(struct imsgbuf *ib)
{
	const char	*t = "promises: (hostile test reconciler)";

	if (imsg_compose(ib, IMSG_HELLO, 0, 0, -1, t, strlen(t) + 1) == -1)
		err(1, "imsg_compose");
}

static void
answer(struct imsgbuf *ib)
{
	static char	 buf[BADREC_MAX];
	struct ibuf	*b;
	FILE		*f;
	size_t		 n;
	uint32_t	 type = IMSG_INVENTORY;
	char		*text = buf;

	if ((f = fopen(payload_path, "r")) == NULL)
		err(1, "%s", payload_path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (strncmp(buf, "error\n", 6) == 0) {
		type = IMSG_ERROR;
		text += 6;
	}
	if ((b = ibuf_dynamic(64, 16 * FACTORY_MAXIMSG)) == NULL)
		err(1, "ibuf_dynamic");
	if (invtok(b, text) == -1)
		errx(1, "%s: a bad token", payload_path);
	if (imsg_compose(ib, type, 0, 0, -1, ibuf_data(b), ibuf_size(b)) ==
	    -1)
		err(1, "imsg_compose");
	ibuf_free(b);
}

int
main(int argc, char *argv[])
{
	struct imsgbuf	 ib;
	struct imsg	 imsg;
	ssize_t		 n;

	if ((n = readlink("/proc/self/exe", payload_path,
	    sizeof(payload_path) - 8)) == -1)
		err(1, "readlink");
	payload_path[n] = '\0';
	strlcat(payload_path, ".msg", sizeof(payload_path));
	if (imsgbuf_init(&ib, PROC_PARENT_FD) == -1 ||
	    imsgbuf_set_maxsize(&ib, FACTORY_MAXIMSG) == -1)
		err(1, "imsgbuf_init");
	hello(&ib);
	if (imsgbuf_flush(&ib) == -1)
		err(1, "imsgbuf_flush");
	for (;;) {
		while ((n = imsgbuf_get(&ib, &imsg)) == 0)
			if (imsgbuf_read(&ib) != 1)
				return (0);
		if (n == -1)
			errx(1, "malformed imsg from the parent");
		if (imsg_get_type(&imsg) == IMSG_INVENTORY_REQ)
			answer(&ib);
		imsg_free(&imsg);
		if (imsgbuf_flush(&ib) == -1)
			err(1, "imsgbuf_flush");
	}
}
