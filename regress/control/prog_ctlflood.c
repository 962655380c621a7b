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
 *	linger SOCK SECS	    a STATUS's first byte carrying a TCP
 *				    socket that lingers SECS on close with
 *				    data its peer never reads; closes its
 *				    own copy, then the connection, so the
 *				    daemon's is the last; keeps that peer
 *				    SECS; prints "sent" or "refused"
 *	lingerreq SOCK SECS	    the same, but the request is sent whole
 *				    and the connection kept: the daemon
 *				    drops the descriptor as the request's
 *	slowread SOCK TYPE ID CHUNK MS SECS
 *				    TYPE (show or receipts) of attempt ID,
 *				    then read CHUNK bytes every MS
 *				    ms, for at most SECS; prints "complete
 *				    B bytes after N ms", "closed after N ms,
 *				    B bytes" or "open after N ms, B bytes"
 *	userns SOCK OWNER BASE N NESTED HOLD
 *				    as OWNER, a user namespace mapping its
 *				    uids 0..N-1 to BASE..BASE+N-1 (written
 *				    by us, root, as newuidmap would), with
 *				    NESTED 1 another inside it; one
 *				    connection from each of its N uids,
 *				    held HOLD seconds; prints "connected C
 *				    open K" (K the ones the daemon kept)
 *	connectexit SOCK	    a child connects and exits at once,
 *				    before the daemon can accept it
 *	submitgone SOCK FILE N	    N times: submit FILE, close after 0 to
 *				    20 ms (the i-th waits i % 21), never
 *				    reading; prints "sent N"
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
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

/*
 * len bytes of a request's header h (marked as carrying one) with nfds
 * copies of fd: what sendmsg(2) returns.
 */
static ssize_t
sendfds(int s, struct imsg_hdr *h, size_t len, int fd, int nfds)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cmsg;
	char		*cbuf;
	ssize_t		 n;
	int		 i;

	h->len |= 0x80000000U;
	iov.iov_base = h;
	iov.iov_len = len;
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
	n = sendmsg(s, &msg, MSG_NOSIGNAL);
	free(cbuf);
	return (n);
}

/* One request with nfds descriptors (of /dev/null) attached. */
static int
withfds(const char *path, uint32_t type, int nfds)
{
	struct imsg_hdr	 h;
	ssize_t		 n;
	int		 s, fd;

	if ((s = dial(path, 0)) == -1)
		err(2, "%s", path);
	if ((fd = open("/dev/null", O_RDONLY)) == -1)
		err(2, "/dev/null");
	header(&h, type, sizeof(h));
	/* SO_PASSRIGHTS 0 on the receiving side (Linux 6.16): EPERM. */
	if ((n = sendfds(s, &h, sizeof(h), fd, nfds)) == -1 &&
	    errno == EPERM) {
		printf("refused\n");
		return (0);
	}
	if (n != sizeof(h))
		err(2, "sendmsg");
	printf("%s\n", closed_within(s, 3000) ? "closed" : "open");
	return (0);
}

/*
 * The last reference of a TCP socket whose close waits, to the daemon:
 * it lingers secs with data queued that its peer, ours, never reads.
 */
static int
linger(const char *path, int secs, int whole)
{
	struct sockaddr_in	 sin;
	struct linger		 lg = { 1, secs };
	struct imsg_hdr		 h;
	socklen_t		 sl = sizeof(sin);
	char			 data[65536];
	int			 l, t, s, small = 4096;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ==
	    -1 || bind(l, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(l, 1) == -1 ||
	    getsockname(l, (struct sockaddr *)&sin, &sl) == -1)
		err(2, "listener");
	if ((t = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    setsockopt(t, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) ==
	    -1 || connect(t, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    fcntl(t, F_SETFL, O_NONBLOCK) == -1)
		err(2, "tcp");
	memset(data, 'x', sizeof(data));
	while (write(t, data, sizeof(data)) > 0)
		;
	if (errno != EAGAIN ||
	    setsockopt(t, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == -1)
		err(2, "linger");
	if ((s = dial(path, 0)) == -1)
		err(2, "%s", path);
	/*
	 * The descriptor rides with a header's first byte: the daemon
	 * holds it until the rest comes, so our close below is never the
	 * last one; the connection's close then makes the daemon's so.
	 */
	header(&h, IMSG_CTL_STATUS, sizeof(h));
	if (sendfds(s, &h, 1, t, 1) == -1) {
		if (errno != EPERM)
			err(2, "sendmsg");
		printf("refused\n");
		return (0);
	}
	/* The daemon's copy is the last one now, its release the wait. */
	close(t);
	if (whole) {
		if (write(s, (char *)&h + 1, sizeof(h) - 1) !=
		    (ssize_t)sizeof(h) - 1)
			err(2, "write");
	} else
		close(s);
	printf("sent\n");
	fflush(stdout);
	sleep(secs);
	return (0);
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec	 t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((t1.tv_sec - t0->tv_sec) * 1000 +
	    (t1.tv_nsec - t0->tv_nsec) / 1000000);
}

/* Has buf[0..len) an END message, after whole messages?  */
static int
has_end(const unsigned char *buf, size_t len)
{
	struct imsg_hdr	 h;
	size_t		 off = 0, n;

	while (len - off >= sizeof(h)) {
		memcpy(&h, buf + off, sizeof(h));
		n = h.len & 0x7fffffffU;
		if (n < sizeof(h) || len - off < n)
			return (0);
		if (h.type == IMSG_CTL_END || h.type == IMSG_CTL_FAIL)
			return (1);
		off += n;
	}
	return (0);
}

static int
slowread(const char *path, const char *what, const char *id, int chunk,
    int ms, int secs)
{
	struct imsg_hdr	 h;
	struct timespec	 t0;
	struct pollfd	 pfd;
	static unsigned char buf[4 * 1024 * 1024];
	char		 msg[sizeof(h) + ATTEMPT_ID_MAX];
	size_t		 got = 0, len = sizeof(h) + strlen(id) + 1;
	ssize_t		 n;
	int		 s;

	if ((s = dial(path, 0)) == -1)
		err(2, "%s", path);
	if (strlen(id) + 1 > ATTEMPT_ID_MAX || chunk < 1)
		errx(2, "bad arguments");
	header(&h, strcmp(what, "receipts") == 0 ? IMSG_CTL_RECEIPTS :
	    IMSG_CTL_SHOW, len);
	memcpy(msg, &h, sizeof(h));
	memcpy(msg + sizeof(h), id, strlen(id) + 1);
	if (send(s, msg, len, MSG_NOSIGNAL) != (ssize_t)len)
		err(2, "send");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < secs * 1000L) {
		usleep(ms * 1000);
		if (got + chunk > sizeof(buf))
			break;
		n = recv(s, buf + got, chunk, MSG_DONTWAIT);
		if (n == 0 || (n == -1 && errno != EAGAIN)) {
			printf("closed after %ld ms, %zu bytes\n",
			    ms_since(&t0), got);
			return (0);
		}
		if (n > 0)
			got += n;
		/* Closed by the daemon, with bytes still in our queue. */
		pfd.fd = s;
		pfd.events = POLLRDHUP;
		if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLRDHUP) &&
		    !has_end(buf, got)) {
			printf("closed after %ld ms, %zu bytes\n",
			    ms_since(&t0), got);
			return (0);
		}
		if (has_end(buf, got)) {
			printf("complete %zu bytes after %ld ms\n", got,
			    ms_since(&t0));
			return (0);
		}
	}
	printf("open after %ld ms, %zu bytes\n", ms_since(&t0), got);
	return (0);
}

/* Map the user namespace of pid: inside 0..n-1 to outside base... */
static int
idmap(pid_t pid, unsigned base, int n)
{
	const char *const files[] = { "uid_map", "gid_map" };
	char	 path[64], map[64];
	int	 fd, i, len;

	len = snprintf(map, sizeof(map), "0 %u %d\n", base, n);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid,
		    files[i]);
		if ((fd = open(path, O_WRONLY)) == -1)
			return (-1);
		if (write(fd, map, len) != len) {
			close(fd);
			return (-1);
		}
		close(fd);
	}
	return (0);
}

/*
 * A child in a new user namespace, mapped by its parent (us): in the
 * child, 0 once it is mapped and root there; in the parent, the
 * child's pid.  The child becomes uid drop (if not -1) first, so that
 * the namespace is that uid's.
 */
static pid_t
userns_child(unsigned base, int n, long drop)
{
	int	 ready[2], go[2];
	char	 c;
	pid_t	 pid;

	if (pipe(ready) == -1 || pipe(go) == -1)
		err(2, "pipe");
	if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		if (drop != -1 && (setgroups(0, NULL) == -1 ||
		    setresgid(drop, drop, drop) == -1 ||
		    setresuid(drop, drop, drop) == -1))
			err(2, "becoming uid %ld", drop);
		if (unshare(CLONE_NEWUSER) == -1)
			err(2, "unshare");
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		if (setresgid(0, 0, 0) == -1 || setresuid(0, 0, 0) == -1)
			err(2, "root in the namespace");
		/* So that a namespace of ours may be mapped by us. */
		if (prctl(PR_SET_DUMPABLE, 1) == -1)
			err(2, "PR_SET_DUMPABLE");
		close(ready[1]);
		close(go[0]);
		return (0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1 || idmap(pid, base, n) == -1 ||
	    write(go[1], "g", 1) != 1)
		err(2, "mapping the user namespace of %d", (int)pid);
	close(ready[0]);
	close(go[1]);
	return (pid);
}

/* The n uids of the namespace, a connection each; results to res. */
static void
userns_conns(const char *path, int n, int hold, int res)
{
	pid_t	 pid;
	int	 i, s;
	char	 c;

	for (i = 0; i < n; i++) {
		if ((pid = fork()) == -1)
			err(2, "fork");
		if (pid != 0)
			continue;
		if (setresgid(i, i, i) == -1 || setresuid(i, i, i) == -1)
			err(2, "uid %d in the namespace", i);
		if ((s = dial(path, 1)) == -1)
			c = 'f';
		else {
			usleep(500 * 1000);
			c = closed_within(s, 0) ? 'c' : 'o';
		}
		if (write(res, &c, 1) != 1)
			_exit(2);
		sleep(hold);
		_exit(0);
	}
	while (wait(NULL) > 0)
		;
}

static int
userns(const char *path, unsigned owner, unsigned base, int n, int nested,
    int hold)
{
	int	 res[2], got = 0, open = 0, connected = 0;
	char	 c;

	if (pipe(res) == -1)
		err(2, "pipe");
	if (userns_child(base, n, owner) == 0) {
		close(res[0]);
		if (nested && userns_child(0, n, -1) != 0) {
			close(res[1]);
			while (wait(NULL) > 0)
				;
			_exit(0);
		}
		userns_conns(path, n, hold, res[1]);
		_exit(0);
	}
	close(res[1]);
	while (got < n && read(res[0], &c, 1) == 1) {
		got++;
		if (c != 'f')
			connected++;
		if (c == 'o')
			open++;
	}
	printf("connected %d open %d\n", connected, open);
	fflush(stdout);
	while (wait(NULL) > 0)
		;
	return (0);
}

static int
connectexit(const char *path)
{
	pid_t	 pid;

	if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0)
		_exit(dial(path, 0) == -1 ? 2 : 0);
	if (waitpid(pid, NULL, 0) == -1)
		err(2, "waitpid");
	printf("gone\n");
	return (0);
}

static int
submitgone(const char *path, const char *file, int n)
{
	struct imsg_hdr	 h;
	static char	 msg[sizeof(h) + PATH_MAX + 65536];
	size_t		 nlen = strlen(file) + 1, len;
	ssize_t		 r;
	int		 fd, s, i, sent = 0;

	if (nlen > PATH_MAX || (fd = open(file, O_RDONLY)) == -1)
		err(2, "%s", file);
	memcpy(msg + sizeof(h), file, nlen);
	len = sizeof(h) + nlen;
	while ((r = read(fd, msg + len, sizeof(msg) - len)) > 0)
		len += r;
	close(fd);
	header(&h, IMSG_CTL_SUBMIT, len);
	memcpy(msg, &h, sizeof(h));
	for (i = 0; i < n; i++) {
		if ((s = dial(path, 0)) == -1)
			err(2, "%s", path);
		if (send(s, msg, len, MSG_NOSIGNAL) == (ssize_t)len)
			sent++;
		usleep((i % 21) * 1000);
		close(s);
	}
	printf("sent %d\n", sent);
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
	if (argc == 4 && strcmp(argv[1], "linger") == 0)
		return (linger(argv[2], atoi(argv[3]), 0));
	if (argc == 4 && strcmp(argv[1], "lingerreq") == 0)
		return (linger(argv[2], atoi(argv[3]), 1));
	if (argc == 8 && strcmp(argv[1], "slowread") == 0)
		return (slowread(argv[2], argv[3], argv[4], atoi(argv[5]),
		    atoi(argv[6]), atoi(argv[7])));
	if (argc == 8 && strcmp(argv[1], "userns") == 0)
		return (userns(argv[2], atoi(argv[3]), atoi(argv[4]),
		    atoi(argv[5]), atoi(argv[6]), atoi(argv[7])));
	if (argc == 3 && strcmp(argv[1], "connectexit") == 0)
		return (connectexit(argv[2]));
	if (argc == 5 && strcmp(argv[1], "submitgone") == 0)
		return (submitgone(argv[2], argv[3], atoi(argv[4])));
	fprintf(stderr, "usage: prog_ctlflood flood|conns|idle|slowloris|"
	    "hugelen|fdpass|manyfds|linger|lingerreq|slowread|userns|"
	    "connectexit|"
	    "submitgone "
	    "SOCK ...\n");
	return (2);
}
