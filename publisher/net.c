/*
 * The publisher's TCP connections, for the API client (http.c) and for
 * libgit2, which gets them through a stream registered in its place
 * for plain sockets (its own TLS runs on top, with its name checks).
 *
 * Why not libgit2's or libevent's own: both connect to one address of
 * a name only, or without a bound, and libgit2 1.5 has no timeouts at
 * all, so a forge that accepts and never answers would hold the
 * publisher, and its token, forever.  Here every address getaddrinfo
 * gives is tried in its order within one connect budget, and every
 * read and write waits at most the request timeout and never past the
 * publication's deadline.  Writes use MSG_NOSIGNAL: a peer that closes
 * is an error (EPIPE), never a signal.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/stream.h>

#include "log.h"
#include "publisher.h"
#include "util.h"

#define NET_SLICE_MIN_MS	1000	/* per address, budget allowing */

/* libgit2's streams: one publication at a time sets these. */
static int	 net_git_timeout_ms = 30 * 1000;
static int64_t	 net_git_deadline;	/* 0: none */

struct net_stream {
	git_stream	 parent;
	char		*host;
	char		*port;
	int		 fd;
};

static int	 net_try(const struct addrinfo *, int64_t, char *, size_t);
static void	 net_addr(const struct addrinfo *, char *, size_t);
static int64_t	 net_git_until(void);
static int	 ns_connect(git_stream *);
static int	 ns_certificate(git_cert **, git_stream *);
static int	 ns_set_proxy(git_stream *, const git_proxy_options *);
static ssize_t	 ns_read(git_stream *, void *, size_t);
static ssize_t	 ns_write(git_stream *, const char *, size_t, int);
static int	 ns_close(git_stream *);
static void	 ns_free(git_stream *);
static int	 ns_new(git_stream **, const char *, const char *);

/*
 * The publication's clock, CLOCK_BOOTTIME as the fleet's leases (a
 * suspend counts): a publication's budget then ends on the same clock
 * as the adopt-after that waits for it.
 */
int64_t
net_now(void)
{
	return ((int64_t)boot_ms());
}

/* 1 ready, 0 the deadline passed, -1 poll failed. */
int
net_wait(int fd, short events, int64_t until)
{
	struct pollfd	 pfd;
	int64_t		 left;
	int		 n;

	for (;;) {
		if ((left = until - net_now()) <= 0)
			return (0);
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		n = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if (n == 1)
			return (1);
	}
}

static void
net_addr(const struct addrinfo *ai, char *buf, size_t len)
{
	const void	*a;

	if (ai->ai_family == AF_INET6)
		a = &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
	else
		a = &((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	if (inet_ntop(ai->ai_family, a, buf, len) == NULL)
		strlcpy(buf, "?", len);
}

/* One address, until the deadline: a connected socket or -1. */
static int
net_try(const struct addrinfo *ai, int64_t until, char *why, size_t whylen)
{
	socklen_t	 sl;
	int		 fd, e = 0, n;

	if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol)) == -1) {
		snprintf(why, whylen, "%s", strerror(errno));
		return (-1);
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return (fd);
	if (errno != EINPROGRESS) {
		snprintf(why, whylen, "%s", strerror(errno));
		close(fd);
		return (-1);
	}
	if ((n = net_wait(fd, POLLOUT, until)) != 1) {
		snprintf(why, whylen, "%s", n == 0 ? "timed out" :
		    strerror(errno));
		close(fd);
		return (-1);
	}
	sl = sizeof(e);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) == -1)
		e = errno;
	if (e != 0) {
		snprintf(why, whylen, "%s", strerror(e));
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * Every address of host in getaddrinfo's order (which follows
 * gai.conf), each given an even share of what is left of timeout_ms
 * (at least a second while the budget lasts), so that one address that
 * swallows packets does not use up the budget of the others.  A
 * connected non-blocking socket, or -1 with every address's reason.
 */
int
net_connect(const char *host, const char *port, int timeout_ms, char *err,
    size_t errlen)
{
	struct addrinfo	 hints, *res, *ai;
	int64_t		 until = net_now() + timeout_ms, left, slice;
	char		 addr[INET6_ADDRSTRLEN], why[128], tried[384];
	size_t		 n, naddr = 0;
	int		 fd = -1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		errfmt(err, errlen, "%s:%s: %s", host, port,
		    gai_strerror(rc));
		return (-1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next)
		naddr++;
	tried[0] = '\0';
	for (ai = res; ai != NULL; ai = ai->ai_next, naddr--) {
		if ((left = until - net_now()) <= 0) {
			strlcpy(why, "connect budget spent", sizeof(why));
			fd = -1;
		} else {
			slice = left / naddr;
			if (slice < NET_SLICE_MIN_MS)
				slice = left < NET_SLICE_MIN_MS ? left :
				    NET_SLICE_MIN_MS;
			if ((fd = net_try(ai, net_now() + slice, why,
			    sizeof(why))) != -1)
				break;
		}
		net_addr(ai, addr, sizeof(addr));
		n = strlen(tried);
		snprintf(tried + n, sizeof(tried) - n, "%s%s: %s",
		    n > 0 ? "; " : "", addr, why);
	}
	freeaddrinfo(res);
	if (fd == -1)
		errfmt(err, errlen, "%s:%s: cannot connect (%s)", host, port,
		    tried);
	return (fd);
}

/* Until when the git stream may wait now. */
static int64_t
net_git_until(void)
{
	int64_t	 until = net_now() + net_git_timeout_ms;

	if (net_git_deadline != 0 && net_git_deadline < until)
		until = net_git_deadline;
	return (until);
}

void
net_git_limits(int timeout_s, int64_t deadline)
{
	net_git_timeout_ms = (timeout_s > 0 ? timeout_s : 30) * 1000;
	net_git_deadline = deadline;
}

static int
ns_connect(git_stream *s)
{
	struct net_stream	*ns = (struct net_stream *)s;
	char			 err[512];
	int64_t			 left = net_git_until() - net_now();

	if (left <= 0) {
		git_error_set_str(GIT_ERROR_NET, "the publication's time is "
		    "spent");
		return (-1);
	}
	if ((ns->fd = net_connect(ns->host, ns->port, (int)left, err,
	    sizeof(err))) == -1) {
		git_error_set_str(GIT_ERROR_NET, err);
		return (-1);
	}
	return (0);
}

static int
ns_certificate(git_cert **out, git_stream *s)
{
	git_error_set_str(GIT_ERROR_NET, "a plain socket has no certificate");
	return (-1);
}

static int
ns_set_proxy(git_stream *s, const git_proxy_options *o)
{
	git_error_set_str(GIT_ERROR_NET, "no proxies");
	return (-1);
}

static ssize_t
ns_read(git_stream *s, void *buf, size_t len)
{
	struct net_stream	*ns = (struct net_stream *)s;
	char			 msg[300];
	ssize_t			 n;
	int			 w;

	for (;;) {
		if ((n = recv(ns->fd, buf, len, 0)) >= 0)
			return (n);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			break;
		if ((w = net_wait(ns->fd, POLLIN, net_git_until())) == 1)
			continue;
		if (w == 0) {
			snprintf(msg, sizeof(msg), "%s:%s: timed out waiting "
			    "for the forge", ns->host, ns->port);
			git_error_set_str(GIT_ERROR_NET, msg);
			return (-1);
		}
		break;
	}
	snprintf(msg, sizeof(msg), "%s:%s: read: %s", ns->host, ns->port,
	    strerror(errno));
	git_error_set_str(GIT_ERROR_NET, msg);
	return (-1);
}

static ssize_t
ns_write(git_stream *s, const char *buf, size_t len, int flags)
{
	struct net_stream	*ns = (struct net_stream *)s;
	char			 msg[300];
	ssize_t			 n;
	int			 w;

	for (;;) {
		if ((n = send(ns->fd, buf, len, MSG_NOSIGNAL)) >= 0)
			return (n);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			break;
		if ((w = net_wait(ns->fd, POLLOUT, net_git_until())) == 1)
			continue;
		if (w == 0) {
			snprintf(msg, sizeof(msg), "%s:%s: timed out writing "
			    "to the forge", ns->host, ns->port);
			git_error_set_str(GIT_ERROR_NET, msg);
			return (-1);
		}
		break;
	}
	snprintf(msg, sizeof(msg), "%s:%s: write: %s", ns->host, ns->port,
	    strerror(errno));
	git_error_set_str(GIT_ERROR_NET, msg);
	return (-1);
}

static int
ns_close(git_stream *s)
{
	struct net_stream	*ns = (struct net_stream *)s;

	if (ns->fd != -1)
		close(ns->fd);
	ns->fd = -1;
	return (0);
}

static void
ns_free(git_stream *s)
{
	struct net_stream	*ns = (struct net_stream *)s;

	ns_close(s);
	free(ns->host);
	free(ns->port);
	free(ns);
}

static int
ns_new(git_stream **out, const char *host, const char *port)
{
	struct net_stream	*ns;

	if ((ns = calloc(1, sizeof(*ns))) == NULL ||
	    (ns->host = strdup(host)) == NULL ||
	    (ns->port = strdup(port)) == NULL) {
		if (ns != NULL)
			free(ns->host);
		free(ns);
		git_error_set_oom();
		return (-1);
	}
	ns->fd = -1;
	ns->parent.version = GIT_STREAM_VERSION;
	ns->parent.connect = ns_connect;
	ns->parent.certificate = ns_certificate;
	ns->parent.set_proxy = ns_set_proxy;
	ns->parent.read = ns_read;
	ns->parent.write = ns_write;
	ns->parent.close = ns_close;
	ns->parent.free = ns_free;
	*out = &ns->parent;
	return (0);
}

void
net_git_init(void)
{
	static int		 done;
	git_stream_registration	 reg;

	if (done++)
		return;
	memset(&reg, 0, sizeof(reg));
	reg.version = GIT_STREAM_VERSION;
	reg.init = ns_new;
	if (git_stream_register(GIT_STREAM_STANDARD, &reg) < 0)
		fatalx("libgit2: cannot register the socket stream");
}
