/*
 * A hostile control client, for regress/control.  Each mode is one
 * attack on a control socket; what it observed goes to stdout as one
 * line, and it exits 0 when it could carry the attack out at all.
 *
 *	flood SOCK TYPE ID N HOLD   N requests (TYPE status or receipts of
 *				    attempt ID), never reading an answer,
 *				    until one waits 2s for room,
 *				    then hold the connection HOLD seconds
 *	conns SOCK MAX HOLD	    open up to MAX connections at once, hold
 *				    them HOLD seconds; prints how many the
 *				    daemon kept open
 *	idle SOCK N SECS	    open N connections, send nothing; prints
 *				    how many the daemon closed within SECS
 *	slowloris SOCK SECS	    half a header, a byte a second; prints
 *				    "closed after Ns" or "open"
 *	hugelen SOCK		    a header claiming 2 GiB; prints "closed"
 *	fdpass SOCK		    a STATUS carrying a descriptor; "closed"
 *	manyfds SOCK		    a SHELL_FD carrying 64 descriptors; "closed"
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factory.h"

#define MAXCONNS	4096

static int
dial(const char *path, int nonblock)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    (nonblock ? SOCK_NONBLOCK : 0), 0)) == -1)
		return (-1);
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(s);
		return (-1);
	}
	return (s);
}

static void
header(struct imsg_hdr *h, uint32_t type, uint32_t len)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->len = len;
	h->pid = getpid();
}

/* 1 if the daemon closed s (EOF or reset) within ms, else 0. */
static int
closed_within(int s, int ms)
{
	struct pollfd	 pfd;
	char		 buf[4096];
	ssize_t		 n;
	struct timespec	 t0, t1;
	int		 left = ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		pfd.fd = s;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, left) <= 0)
			return (0);
		n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			return (1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return (0);
	}
}

static int
flood(const char *path, const char *what, const char *id, int n, int hold)
{
	struct imsg_hdr	 h;
	struct timeval	 tv = { 2, 0 };
	char		 msg[sizeof(h) + ATTEMPT_ID_MAX];
	size_t		 len = sizeof(h);
	int		 s, i, sent = 0;

	if ((s = dial(path, 0)) == -1)
		err(2, "%s", path);
	/* A daemon that stops reading us blocks the flood for good. */
	if (setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1)
		err(2, "SO_SNDTIMEO");
	if (strcmp(what, "receipts") == 0) {
		len += strlen(id) + 1;
		header(&h, IMSG_CTL_RECEIPTS, len);
		memcpy(msg + sizeof(h), id, strlen(id) + 1);
	} else
		header(&h, IMSG_CTL_STATUS, len);
	memcpy(msg, &h, sizeof(h));
	for (i = 0; i < n; i++) {
		/* Two seconds without room ends the flood. */
		if (send(s, msg, len, MSG_NOSIGNAL) != (ssize_t)len)
			break;
		sent++;
	}
	printf("sent %d\n", sent);
	fflush(stdout);
	sleep(hold);
	close(s);
	return (0);
}

static int
conns(const char *path, int max, int hold)
{
	static int	 fds[MAXCONNS];
	int		 i, n = 0, open = 0;

	if (max > MAXCONNS)
		max = MAXCONNS;
	for (i = 0; i < max; i++) {
		if ((fds[n] = dial(path, 1)) == -1)
			continue;
		n++;
	}
	/* Give the daemon time to accept and refuse. */
	usleep(500 * 1000);
	for (i = 0; i < n; i++)
		if (!closed_within(fds[i], 0))
			open++;
	printf("connected %d open %d\n", n, open);
	fflush(stdout);
	sleep(hold);
	for (i = 0; i < n; i++)
		close(fds[i]);
	return (0);
}

static int
idle(const char *path, int n, int secs)
{
	static int	 fds[MAXCONNS];
	struct pollfd	*pfd;
	int		 i, got = 0, closed = 0;
	time_t		 end = time(NULL) + secs;
	char		 buf[64];

	if (n > MAXCONNS)
		n = MAXCONNS;
	for (i = 0; i < n; i++)
		if ((fds[got] = dial(path, 1)) != -1)
			got++;
	if ((pfd = calloc(got, sizeof(*pfd))) == NULL)
		err(2, NULL);
	for (i = 0; i < got; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
	}
	while (closed < got && time(NULL) < end) {
		if (poll(pfd, got, 200) <= 0)
			continue;
		for (i = 0; i < got; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			if (recv(pfd[i].fd, buf, sizeof(buf),
			    MSG_DONTWAIT) > 0)
				continue;
			close(pfd[i].fd);
			pfd[i].fd = -1;
			closed++;
		}
	}
	printf("idle %d closed %d\n", got, closed);
	return (0);
}

static int
slowloris(const char *path, int secs)
{
	struct imsg_hdr	 h;
	unsigned char	*p = (unsigned char *)&h;
	size_t		 i;
	int		 s, t;

	if ((s = dial(path, 0)) == -1)
		err(2, "%s", path);
	header(&h, IMSG_CTL_STATUS, sizeof(h) + 60000);
	for (t = 0, i = 0; t < secs; t++) {
		if (i < sizeof(h) &&
		    send(s, p + i++, 1, MSG_NOSIGNAL) != 1) {
			printf("closed after %ds\n", t);
			return (0);
		}
		if (closed_within(s, 1000)) {
			printf("closed after %ds\n", t + 1);
			return (0);
		}
	}
	printf("open\n");
	return (0);
}

static int
hugelen(const char *path)
{
	struct imsg_hdr	 h;
	int		 s;

	if ((s = dial(path, 0)) == -1)
		err(2, "%s", path);
	header(&h, IMSG_CTL_RECEIPTS, 0x7fffffffU);
	if (send(s, &h, sizeof(h), MSG_NOSIGNAL) != sizeof(h))
		err(2, "send");
	printf("%s\n", closed_within(s, 3000) ? "closed" : "open");
	return (0);
}

/* One request with nfds descriptors (of /dev/null) attached. */
static int
withfds(const char *path, uint32_t type, int nfds)
{
	struct imsg_hdr	 h;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cmsg;
	char		*cbuf;
	int		 s, i, fd;

	if ((s = dial(path, 0)) == -1)
		err(2, "%s", path);
	if ((fd = open("/dev/null", O_RDONLY)) == -1)
		err(2, "/dev/null");
	header(&h, type, sizeof(h));
	h.len |= 0x80000000U;
	iov.iov_base = &h;
	iov.iov_len = sizeof(h);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if ((cbuf = calloc(1, CMSG_SPACE(sizeof(int) * nfds))) == NULL)
		err(2, NULL);
	msg.msg_control = cbuf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	for (i = 0; i < nfds; i++)
		memcpy(CMSG_DATA(cmsg) + i * sizeof(int), &fd, sizeof(int));
	if (sendmsg(s, &msg, MSG_NOSIGNAL) != sizeof(h))
		err(2, "sendmsg");
	printf("%s\n", closed_within(s, 3000) ? "closed" : "open");
	return (0);
}

int
main(int argc, char *argv[])
{
	if (argc == 7 && strcmp(argv[1], "flood") == 0)
		return (flood(argv[2], argv[3], argv[4], atoi(argv[5]),
		    atoi(argv[6])));
	if (argc == 5 && strcmp(argv[1], "conns") == 0)
		return (conns(argv[2], atoi(argv[3]), atoi(argv[4])));
	if (argc == 5 && strcmp(argv[1], "idle") == 0)
		return (idle(argv[2], atoi(argv[3]), atoi(argv[4])));
	if (argc == 4 && strcmp(argv[1], "slowloris") == 0)
		return (slowloris(argv[2], atoi(argv[3])));
	if (argc == 3 && strcmp(argv[1], "hugelen") == 0)
		return (hugelen(argv[2]));
	if (argc == 3 && strcmp(argv[1], "fdpass") == 0)
		return (withfds(argv[2], IMSG_CTL_STATUS, 1));
	if (argc == 3 && strcmp(argv[1], "manyfds") == 0)
		return (withfds(argv[2], IMSG_CTL_SHELL_FD, 64));
	fprintf(stderr, "usage: prog_ctlflood flood|conns|idle|slowloris|"
	    "hugelen|fdpass|manyfds SOCK ...\n");
	return (2);
}
