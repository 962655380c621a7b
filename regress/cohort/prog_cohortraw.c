/*
 * prog_cohortraw SOCKET: the cohort requests as a misbehaving client
 * sends them, each on a connection of its own: a SUBMIT_N too short
 * for its size, sizes out of bounds, ids without their NUL or too
 * long, a cohort id that is not one.  Each must be answered with
 * IMSG_CTL_FAIL (or the connection closed), never OK; prints one line
 * per request, "NAME: refused: REASON", and exits 1 if any was not.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <err.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "imsg.h"

static int
connect_to(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(2, "%s", path);
	return (s);
}

/* 0 if refused (FAIL, or closed), 1 if answered otherwise. */
static int
request(const char *sock, const char *name, uint32_t type, const void *data,
    size_t len)
{
	struct imsgbuf	 ib;
	struct imsg	 imsg;
	struct pollfd	 pfd;
	char		 why[512] = "closed";
	int		 s, r, ret = -1;

	s = connect_to(sock);
	if (imsgbuf_init(&ib, s) == -1 ||
	    imsgbuf_set_maxsize(&ib, FACTORY_MAXIMSG) == -1 ||
	    imsg_compose(&ib, type, 0, 0, -1, data, len) == -1 ||
	    imsgbuf_flush(&ib) == -1)
		err(2, "send");
	while (ret == -1) {
		pfd.fd = s;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 10000) <= 0)
			errx(2, "%s: no answer", name);
		if ((r = imsgbuf_read(&ib)) <= 0) {
			ret = 0;
			break;
		}
		while (ret == -1 && (r = imsgbuf_get(&ib, &imsg)) > 0) {
			if (imsg_get_type(&imsg) == IMSG_CTL_FAIL) {
				if (imsg_get_strbuf(&imsg, why,
				    sizeof(why)) == -1)
					strlcpy(why, "(unreadable)",
					    sizeof(why));
				ret = 0;
			} else
				ret = 1;
			imsg_free(&imsg);
		}
		if (r == -1)
			ret = 0;
	}
	imsgbuf_clear(&ib);
	close(s);
	if (ret == 0)
		printf("%s: refused: %s\n", name, why);
	else
		printf("%s: ANSWERED\n", name);
	return (ret);
}

int
main(int argc, char *argv[])
{
	char		 buf[128], big[200];
	uint32_t	 n;
	int		 bad = 0;

	if (argc != 2)
		errx(2, "usage: prog_cohortraw socket");
	bad += request(argv[1], "submit-n empty", IMSG_CTL_SUBMIT_N, NULL, 0);
	bad += request(argv[1], "submit-n short", IMSG_CTL_SUBMIT_N, "\0\0",
	    2);
	n = htonl(1);
	memcpy(buf, &n, 4);
	memcpy(buf + 4, "m.yaml\0repository: demo\n", 25);
	bad += request(argv[1], "submit-n 1", IMSG_CTL_SUBMIT_N, buf, 29);
	n = htonl(0xffffffffU);
	memcpy(buf, &n, 4);
	bad += request(argv[1], "submit-n 2^32-1", IMSG_CTL_SUBMIT_N, buf,
	    29);
	n = htonl(2);
	memcpy(buf, &n, 4);
	bad += request(argv[1], "submit-n no manifest", IMSG_CTL_SUBMIT_N,
	    buf, 4);
	bad += request(argv[1], "select no NUL", IMSG_CTL_SELECT,
	    "a-20261201-0001", 15);
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	bad += request(argv[1], "select too long", IMSG_CTL_SELECT, big,
	    sizeof(big));
	bad += request(argv[1], "select empty", IMSG_CTL_SELECT, NULL, 0);
	bad += request(argv[1], "cohort not an id", IMSG_CTL_COHORT,
	    "c-2026120x-0001", 16);
	bad += request(argv[1], "cohort no NUL", IMSG_CTL_COHORT,
	    "c-20261201-0001", 15);
	bad += request(argv[1], "cohort too long", IMSG_CTL_COHORT, big,
	    sizeof(big));
	bad += request(argv[1], "diff no NUL", IMSG_CTL_DIFF,
	    "a-20261201-0001", 15);
	bad += request(argv[1], "diff two strings", IMSG_CTL_DIFF,
	    "a-1\0a-2", 8);
	bad += request(argv[1], "cancel cohort unknown", IMSG_CTL_CANCEL,
	    "c-19990101-0001", 16);
	return (bad > 0);
}
