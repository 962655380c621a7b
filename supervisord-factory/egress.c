/*
 * Egress: the manifest's network.allow list, enforced by the parent.
 *
 * The agent's network namespace stays empty but for lo.  For each
 * allowed host:port, pid 1 of the sandbox listens on an endpoint inside
 * the namespace and hands the listening socket to the parent before it
 * starts the agent (sandbox.c); the parent accepts there and connects,
 * from the host's namespace, to the one destination it decided for that
 * endpoint when the attempt started, then copies bytes both ways.
 * Nothing the agent sends chooses a destination: there is no protocol
 * to parse, only bytes to copy.
 *
 * Inside, an IPv4 or IPv6 literal is reached at the same address (put
 * on lo if it is not a loopback one); a name is given its own loopback
 * address 127.0.0.N in a hosts file that lists only the allowed names,
 * and "localhost" is 127.0.0.1.  Names are resolved once, by the
 * parent, when the sandbox is made (IPv4 first, then IPv6).  There is
 * no DNS: no server is reachable, and the hosts file knows nothing
 * else.  Everything else is refused twice: by the namespace (no route,
 * no listener) and by Landlock (TCP connect only to the allowed ports).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/queue.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "factoryd.h"
#include "log.h"

#define EG_MAXCONNS	64		/* open connections per sandbox */
#define EG_HIWAT	(256 * 1024)	/* bytes queued towards one side */
#define EG_HOSTSMAX	(SANDBOX_MAXLISTEN * 300 + 256)
#define EG_PAUSE_S	1		/* accept retried after, out of fds */

struct eg_conn {
	TAILQ_ENTRY(eg_conn)	 entry;
	struct egress		*eg;
	int			 ep;		/* endpoint index */
	struct bufferevent	*side[2];	/* 0: the agent, 1: the dest */
	int			 eof[2];	/* side i sent EOF */
	int			 shut[2];	/* side i was shut for writing */
};

struct eg_endpoint {
	struct egress		*eg;
	int			 fd;		/* listening, in the sandbox */
	struct event		 ev;
	struct event		 pause;		/* accept off until it fires */
	int			 paused;
	struct sockaddr_storage	 to;		/* the destination */
	socklen_t		 tolen;
	char			 what[300];	/* "host:port (addr)" */
};

struct egress {
	char			 id[ATTEMPT_ID_MAX + 4];
	int			 n;
	struct sandbox_listen	 listen[SANDBOX_MAXLISTEN];
	struct eg_endpoint	 ep[SANDBOX_MAXLISTEN];
	char			*hosts;
	struct event_base	*base;
	int			 started;
	int			 nconns;
	TAILQ_HEAD(, eg_conn)	 conns;
};

static void	eg_accept(int, short, void *);
static void	eg_resume(int, short, void *);
static void	eg_read(struct bufferevent *, void *);
static void	eg_write(struct bufferevent *, void *);
static void	eg_event(struct bufferevent *, short, void *);

static void
eg_sockaddr(struct sockaddr_storage *ss, socklen_t *len, int af,
    const void *addr, uint16_t port)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (af == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, addr, sizeof(sin6->sin6_addr));
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
	} else {
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, addr, sizeof(sin->sin_addr));
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
	}
}

/* The parent's lookup of an allowed name: IPv4 first, then IPv6. */
static int
eg_resolve(const char *name, uint16_t port, struct sockaddr_storage *ss,
    socklen_t *len, char *err, size_t errlen)
{
	const int	 fams[] = { AF_INET, AF_INET6 };
	struct addrinfo	 hints, *res;
	size_t		 i;
	int		 rc = EAI_NONAME;

	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = fams[i];
		hints.ai_socktype = SOCK_STREAM;
		if ((rc = getaddrinfo(name, NULL, &hints, &res)) != 0)
			continue;
		memcpy(ss, res->ai_addr, res->ai_addrlen);
		*len = res->ai_addrlen;
		if (ss->ss_family == AF_INET6)
			((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
		else
			((struct sockaddr_in *)ss)->sin_port = htons(port);
		freeaddrinfo(res);
		return (0);
	}
	snprintf(err, errlen, "network.allow: %s: %s", name,
	    gai_strerror(rc));
	return (-1);
}

static void
eg_ntop(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*a = ss->ss_family == AF_INET6 ?
			    (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
			    (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (inet_ntop(ss->ss_family, a, buf, len) == NULL)
		strlcpy(buf, "?", len);
}

static int
eg_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b,
    socklen_t len)
{
	return (a->ss_family == b->ss_family && memcmp(a, b, len) == 0);
}

/*
 * One "host:port" of the manifest (already validated by its parser):
 * the endpoint inside and the destination outside.  *nextlo is the
 * next free 127.0.0.N for a name; names[] the ones given so far.
 */
static int
eg_entry(struct egress *eg, const char *ent, int *nextlo,
    char (*names)[256], char *err, size_t errlen)
{
	struct sandbox_listen	*l = &eg->listen[eg->n];
	struct eg_endpoint	*ep = &eg->ep[eg->n];
	struct in6_addr		 a6;
	struct in_addr		 a4;
	const char		*colon;
	char			 host[256], addr[INET6_ADDRSTRLEN];
	unsigned long		 port;
	size_t			 hl;
	int			 i;

	if ((colon = strrchr(ent, ':')) == NULL ||
	    (port = strtoul(colon + 1, NULL, 10)) == 0 || port > 65535 ||
	    (hl = colon - ent) == 0 || hl >= sizeof(host)) {
		snprintf(err, errlen, "network.allow: bad entry \"%s\"", ent);
		return (-1);
	}
	memcpy(host, ent, hl);
	host[hl] = '\0';
	memset(l, 0, sizeof(*l));
	if (host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a6) != 1) {
			snprintf(err, errlen, "network.allow: bad IPv6 "
			    "address in \"%s\"", ent);
			return (-1);
		}
		eg_sockaddr(&l->addr, &l->addrlen, AF_INET6, &a6, port);
		l->addlo = !IN6_IS_ADDR_LOOPBACK(&a6);
		ep->to = l->addr;
		ep->tolen = l->addrlen;
	} else if (inet_pton(AF_INET, host, &a4) == 1) {
		eg_sockaddr(&l->addr, &l->addrlen, AF_INET, &a4, port);
		l->addlo = (ntohl(a4.s_addr) >> 24) != 127;
		ep->to = l->addr;
		ep->tolen = l->addrlen;
	} else {
		if (eg_resolve(host, port, &ep->to, &ep->tolen, err,
		    errlen) == -1)
			return (-1);
		if (strcasecmp(host, "localhost") == 0)
			a4.s_addr = htonl(INADDR_LOOPBACK);
		else {
			for (i = 2; i < *nextlo; i++)
				if (strcasecmp(names[i], host) == 0)
					break;
			if (i == *nextlo) {
				if (*nextlo > 254) {
					snprintf(err, errlen, "network.allow: "
					    "too many names");
					return (-1);
				}
				strlcpy(names[(*nextlo)++], host,
				    sizeof(names[0]));
			}
			a4.s_addr = htonl(INADDR_LOOPBACK - 1 + i);
		}
		eg_sockaddr(&l->addr, &l->addrlen, AF_INET, &a4, port);
	}
	/* Two entries for one endpoint ("localhost:80", "127.0.0.1:80"). */
	for (i = 0; i < eg->n; i++)
		if (eg_same(&eg->listen[i].addr, &l->addr, l->addrlen))
			return (0);
	eg_ntop(&ep->to, addr, sizeof(addr));
	snprintf(ep->what, sizeof(ep->what), "%s (%s port %lu)", ent, addr,
	    port);
	ep->eg = eg;
	ep->fd = -1;
	eg->n++;
	return (0);
}

/* The sandbox's /etc/hosts: the allowed names, nothing else. */
static int
eg_hosts(struct egress *eg, char (*names)[256], int nextlo)
{
	size_t	 off;
	int	 i;

	if ((eg->hosts = malloc(EG_HOSTSMAX)) == NULL)
		return (-1);
	off = snprintf(eg->hosts, EG_HOSTSMAX, "# factoryd: the names of "
	    "this attempt's network.allow, and no others\n"
	    "127.0.0.1\tlocalhost\n::1\tip6-localhost ip6-loopback\n");
	for (i = 2; i < nextlo && off < EG_HOSTSMAX; i++)
		off += snprintf(eg->hosts + off, EG_HOSTSMAX - off,
		    "127.0.0.%d\t%s\n", i, names[i]);
	return (0);
}

int
egress_new(const char *id, char *const *allow, struct egress **out,
    char *err, size_t errlen)
{
	struct egress	*eg;
	char		 (*names)[256];
	int		 i, nextlo = 2;

	*out = NULL;
	if (allow == NULL || allow[0] == NULL)
		return (0);
	if ((eg = calloc(1, sizeof(*eg))) == NULL ||
	    (names = calloc(256, sizeof(*names))) == NULL) {
		free(eg);
		snprintf(err, errlen, "egress: %s", strerror(errno));
		return (-1);
	}
	strlcpy(eg->id, id, sizeof(eg->id));
	TAILQ_INIT(&eg->conns);
	for (i = 0; allow[i] != NULL; i++) {
		if (eg->n == SANDBOX_MAXLISTEN) {
			snprintf(err, errlen, "network.allow: more than %d "
			    "destinations", SANDBOX_MAXLISTEN);
			goto fail;
		}
		if (eg_entry(eg, allow[i], &nextlo, names, err, errlen) == -1)
			goto fail;
	}
	if (eg_hosts(eg, names, nextlo) == -1) {
		snprintf(err, errlen, "egress: %s", strerror(errno));
		goto fail;
	}
	free(names);
	*out = eg;
	return (0);
 fail:
	free(names);
	egress_free(eg);
	return (-1);
}

void
egress_spec(struct egress *eg, struct sandbox_spec *spec)
{
	if (eg == NULL)
		return;
	spec->listen = eg->listen;
	spec->nlisten = eg->n;
	spec->hosts = eg->hosts;
}

/* Takes the sandbox's listening sockets and starts accepting. */
void
egress_start(struct egress *eg, struct sandbox *sb)
{
	struct eg_endpoint	*ep;
	int			 i;

	if (eg == NULL)
		return;
	for (i = 0; i < eg->n && i < sb->nlfd; i++) {
		ep = &eg->ep[i];
		ep->fd = sb->lfd[i];
		sb->lfd[i] = -1;
		if (fcntl(ep->fd, F_SETFL, O_NONBLOCK) == -1)
			log_warn("%s: egress listener", eg->id);
		event_set(&ep->ev, ep->fd, EV_READ | EV_PERSIST, eg_accept,
		    ep);
		event_add(&ep->ev, NULL);
		evtimer_set(&ep->pause, eg_resume, ep);
		/* The loop's base, for the bufferevents: event_set chose it. */
		eg->base = event_get_base(&ep->ev);
		log_info("%s: egress allowed to %s", eg->id, ep->what);
	}
	sb->nlfd = 0;
	eg->started = 1;
}

static void
eg_resume(int fd, short event, void *arg)
{
	struct eg_endpoint	*ep = arg;

	evtimer_del(&ep->pause);
	event_add(&ep->ev, NULL);
}

/*
 * Out of descriptors: the agent's connection stays in the backlog and
 * the listener readable; accepting again at once would spin.  Stop for
 * a second or until a connection of this sandbox closes, and say so
 * once per episode.
 */
static void
eg_pause(struct eg_endpoint *ep)
{
	struct timeval	 tv = { EG_PAUSE_S, 0 };

	if (!ep->paused)
		log_warn("%s: egress to %s: accept: not accepting for %ds, or "
		    "until a connection closes", ep->eg->id, ep->what,
		    EG_PAUSE_S);
	ep->paused = 1;
	event_del(&ep->ev);
	evtimer_add(&ep->pause, &tv);
}

static void
eg_conn_free(struct eg_conn *c)
{
	struct egress	*eg = c->eg;
	int		 i;

	for (i = 0; i < 2; i++)
		if (c->side[i] != NULL)
			bufferevent_free(c->side[i]);
	TAILQ_REMOVE(&eg->conns, c, entry);
	eg->nconns--;
	free(c);
	/* Descriptors came free. */
	for (i = 0; i < eg->n; i++)
		if (eg->ep[i].paused && evtimer_pending(&eg->ep[i].pause,
		    NULL))
			eg_resume(-1, 0, &eg->ep[i]);
}

void
egress_free(struct egress *eg)
{
	struct eg_conn	*c;
	int		 i;

	if (eg == NULL)
		return;
	while ((c = TAILQ_FIRST(&eg->conns)) != NULL)
		eg_conn_free(c);
	for (i = 0; i < eg->n; i++) {
		if (eg->ep[i].fd == -1)
			continue;
		if (eg->started) {
			event_del(&eg->ep[i].ev);
			evtimer_del(&eg->ep[i].pause);
		}
		close(eg->ep[i].fd);
	}
	free(eg->hosts);
	free(eg);
}

static void
eg_accept(int fd, short event, void *arg)
{
	struct eg_endpoint	*ep = arg;
	struct egress		*eg = ep->eg;
	struct eg_conn		*c;
	int			 s, d, i;

	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			eg_pause(ep);
		else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("%s: egress accept", eg->id);
		return;
	}
	if (ep->paused) {
		log_info("%s: egress to %s: accepting again", eg->id,
		    ep->what);
		ep->paused = 0;
	}
	if (eg->nconns >= EG_MAXCONNS) {
		log_info("%s: egress to %s refused: %d connections open",
		    eg->id, ep->what, eg->nconns);
		close(s);
		return;
	}
	if ((d = socket(ep->to.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 || (c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("%s: egress to %s", eg->id, ep->what);
		if (d != -1)
			close(d);
		close(s);
		return;
	}
	c->eg = eg;
	c->ep = (int)(ep - eg->ep);
	TAILQ_INSERT_TAIL(&eg->conns, c, entry);
	eg->nconns++;
	c->side[0] = bufferevent_socket_new(eg->base, s, BEV_OPT_CLOSE_ON_FREE);
	c->side[1] = bufferevent_socket_new(eg->base, d, BEV_OPT_CLOSE_ON_FREE);
	if (c->side[0] == NULL || c->side[1] == NULL) {
		log_warnx("%s: egress to %s: no buffers", eg->id, ep->what);
		if (c->side[0] == NULL)
			close(s);
		if (c->side[1] == NULL)
			close(d);
		eg_conn_free(c);
		return;
	}
	for (i = 0; i < 2; i++) {
		bufferevent_setcb(c->side[i], eg_read, eg_write, eg_event, c);
		bufferevent_enable(c->side[i], EV_READ | EV_WRITE);
	}
	log_debug("%s: egress connection to %s", eg->id, ep->what);
	if (bufferevent_socket_connect(c->side[1], (struct sockaddr *)&ep->to,
	    ep->tolen) == -1) {
		log_info("%s: egress to %s: connect failed", eg->id, ep->what);
		eg_conn_free(c);
	}
}

/* The descriptors one sandbox's egress may hold at once. */
int
egress_nofile(void)
{
	return (SANDBOX_MAXLISTEN + 2 * EG_MAXCONNS);
}

static int
eg_side(struct eg_conn *c, struct bufferevent *bev)
{
	return (bev == c->side[0] ? 0 : 1);
}

/* Bytes from one side go to the other; a full other side stops reading. */
static void
eg_read(struct bufferevent *bev, void *arg)
{
	struct eg_conn		*c = arg;
	int			 i = eg_side(c, bev);
	struct evbuffer		*out = bufferevent_get_output(c->side[!i]);

	evbuffer_add_buffer(out, bufferevent_get_input(bev));
	if (evbuffer_get_length(out) >= EG_HIWAT)
		bufferevent_disable(bev, EV_READ);
}

/*
 * Side i's output is empty: read from the other again, or pass on the
 * other's EOF as a half-close, and end when both directions are done.
 */
static void
eg_write(struct bufferevent *bev, void *arg)
{
	struct eg_conn	*c = arg;
	int		 i = eg_side(c, bev);

	if (!c->eof[!i]) {
		bufferevent_enable(c->side[!i], EV_READ);
		return;
	}
	if (!c->shut[i]) {
		c->shut[i] = 1;
		shutdown(bufferevent_getfd(bev), SHUT_WR);
	}
	if (c->shut[0] && c->shut[1])
		eg_conn_free(c);
}

static void
eg_event(struct bufferevent *bev, short what, void *arg)
{
	struct eg_conn	*c = arg;
	int		 i = eg_side(c, bev);

	if (what & BEV_EVENT_CONNECTED)
		return;
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
		c->eof[i] = 1;
		bufferevent_disable(bev, EV_READ);
		if (evbuffer_get_length(bufferevent_get_output(
		    c->side[!i])) == 0)
			eg_write(c->side[!i], c);
		return;
	}
	if (i == 1 && (what & BEV_EVENT_ERROR)) {
		struct linger	 lg = { 1, 0 };

		log_info("%s: egress to %s: %s", c->eg->id,
		    c->eg->ep[c->ep].what, strerror(EVUTIL_SOCKET_ERROR()));
		/* The agent sees a reset, as from a refused connect. */
		(void)setsockopt(bufferevent_getfd(c->side[0]), SOL_SOCKET,
		    SO_LINGER, &lg, sizeof(lg));
	}
	eg_conn_free(c);
}
