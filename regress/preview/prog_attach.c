/*
 * An attach client that never ends its uploads, for regress/preview:
 *
 *	prog_attach SOCK ID NAME N BYTES
 *
 * opens N connections (at most 16) and begins an upload on each, as
 * factoryctl attach does: ATTACH of attempt ID and NAME (NAME-1 to
 * NAME-N when N > 1), then BYTES bytes of DATA; never ATTACH_END.
 * Then a STATUS on each: its answer comes after the daemon took all
 * that came before it on that connection.  Prints "held N" and waits
 * to be killed; its uploads go with its connections.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"

#define MAXHOLD		16
#define PIECE		(16 * 1024)

static int
dial(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		errx(2, "%s: path too long", path);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(2, "socket");
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(2, "%s", path);
	return (s);
}

/* ATTACH of id and name, then bytes of DATA, on ibuf. */
static void
begin(struct imsgbuf *ibuf, const char *id, const char *name, size_t bytes)
{
	static char	 piece[PIECE];
	struct ibuf	*b;
	size_t		 n;

	memset(piece, 'x', sizeof(piece));
	if ((b = ibuf_dynamic(64, 1024)) == NULL ||
	    ibuf_add(b, id, strlen(id) + 1) == -1 ||
	    ibuf_add(b, name, strlen(name) + 1) == -1 ||
	    imsg_compose(ibuf, IMSG_CTL_ATTACH, 0, 0, -1, ibuf_data(b),
	    ibuf_size(b)) == -1)
		err(2, "ATTACH");
	ibuf_free(b);
	while (bytes > 0) {
		n = bytes < sizeof(piece) ? bytes : sizeof(piece);
		if (imsg_compose(ibuf, IMSG_CTL_ATTACH_DATA, 0, 0, -1, piece,
		    n) == -1 || imsgbuf_flush(ibuf) == -1)
			err(2, "ATTACH_DATA");
		bytes -= n;
	}
	if (imsg_compose(ibuf, IMSG_CTL_STATUS, 0, 0, -1, NULL, 0) == -1 ||
	    imsgbuf_flush(ibuf) == -1)
		err(2, "STATUS");
}

/* Until STATUS is answered whole; no other answer may come first. */
static void
answered(struct imsgbuf *ibuf)
{
	struct imsg	 imsg;
	uint32_t	 type;
	int		 r;

	for (;;) {
		if ((r = imsgbuf_read(ibuf)) == -1)
			err(2, "read");
		if (r == 0)
			errx(2, "factoryd closed the connection");
		while ((r = imsgbuf_get(ibuf, &imsg)) == 1) {
			type = imsg_get_type(&imsg);
			imsg_free(&imsg);
			if (type == IMSG_CTL_END)
				return;
			if (type != IMSG_CTL_DATA)
				errx(2, "unexpected answer %u", type);
		}
		if (r == -1)
			errx(2, "malformed answer");
	}
}

int
main(int argc, char *argv[])
{
	struct imsgbuf	 ibuf[MAXHOLD];
	char		 name[NAME_MAX + 1];
	const char	*errstr;
	long long	 bytes;
	int		 i, n;

	if (argc != 6)
		errx(2, "usage: prog_attach SOCK ID NAME N BYTES");
	n = strtonum(argv[4], 1, MAXHOLD, &errstr);
	if (errstr != NULL)
		errx(2, "N %s: %s", argv[4], errstr);
	bytes = strtonum(argv[5], 0, EVIDENCE_MAX_BYTES, &errstr);
	if (errstr != NULL)
		errx(2, "BYTES %s: %s", argv[5], errstr);
	for (i = 0; i < n; i++) {
		if (imsgbuf_init(&ibuf[i], dial(argv[1])) == -1 ||
		    imsgbuf_set_maxsize(&ibuf[i], FACTORY_MAXIMSG) == -1)
			err(2, "imsgbuf_init");
		if (n == 1)
			strlcpy(name, argv[3], sizeof(name));
		else
			snprintf(name, sizeof(name), "%s-%d", argv[3], i + 1);
		begin(&ibuf[i], argv[2], name, (size_t)bytes);
	}
	for (i = 0; i < n; i++)
		answered(&ibuf[i]);
	printf("held %d\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
