/*
 * factory-egress: the manifest's network.allow, forwarded by a process
 * that is neither root nor the parent.
 *
 * For each allowed host:port the parent makes a listening socket
 * inside the sandbox's network namespace and sends it here with the
 * one destination it decided for it (IMSG_EGRESS_LISTEN).  We accept
 * there, connect from the host's namespace to that destination, and
 * copy bytes both ways.  Nothing the agent sends chooses a
 * destination: there is no protocol to parse, only bytes to copy.  A
 * name is resolved once, when its endpoint arrives (IPv4 first, then
 * IPv6); a name that does not resolve gets every connection reset.
 * IMSG_EGRESS_CLOSE ends an attempt's endpoints and connections.
 *
 * Started only by factoryd, with its channel on fd 3.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/queue.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egressmsg.h"
#include "factory.h"
#include "imsgev.h"
#include "log.h"

#define EG_HIWAT	(256 * 1024)	/* bytes queued towards one side */
#define EG_PAUSE_S	1		/* accept retried after, out of fds */
#define EG_MAXSANDBOX	1024		/* attempts at once, a sanity bound */
#define EG_FAULT_NOFILE	20		/* test builds: egress:nofile */

struct eg_sandbox;

struct eg_conn {
	TAILQ_ENTRY(eg_conn)	 entry;
	struct eg_sandbox	*sb;
	struct eg_endpoint	*ep;
	struct bufferevent	*side[2];	/* 0: the agent, 1: the dest */
	int			 eof[2];	/* side i sent EOF */
	int			 shut[2];	/* side i was shut for writing */
};

struct eg_endpoint {
	struct eg_sandbox	*sb;
	uint32_t		 index;
	int			 fd;		/* listening, in the sandbox */
	struct event		 ev;
	struct event		 pause;		/* accept off until it fires */
	int			 paused;
	int			 resolved;	/* to is the destination */
	struct sockaddr_storage	 to;
	socklen_t		 tolen;
	char			 what[EGRESS_HOSTMAX + 64];
};

struct eg_sandbox {
	TAILQ_ENTRY(eg_sandbox)	 entry;
	char			 id[ATTEMPT_ID_MAX];
	struct eg_endpoint	*ep[EGRESS_MAXEP];
	int			 nconns;
	TAILQ_HEAD(, eg_conn)	 conns;
};

static TAILQ_HEAD(, eg_sandbox)	 sandboxes =
    TAILQ_HEAD_INITIALIZER(sandboxes);
static int			 nsandboxes;
static struct imsgev		 iev_parent;
static struct event_base	*base;

static int	egress_imsg(struct imsg *);
static void	eg_accept(int, short, void *);
static void	eg_resume(int, short, void *);
static void	eg_read(struct bufferevent *, void *);
static void	eg_write(struct bufferevent *, void *);
static void	eg_event(struct bufferevent *, short, void *);

int
main(int argc, char *argv[])
{
	struct rlimit	 rl;
	int		 fd;

	/*
	 * Test builds, regress/egress: so few descriptors that accepting
	 * runs out of them.  Before the policy, which refuses setrlimit.
	 */
	if (faultpoint("egress:nofile") &&
	    getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = EG_FAULT_NOFILE;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}

	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_EGRESS, argc, argv);
	/* A destination that resets must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	child_start(&iev_parent, fd, egress_imsg);
	base = event_get_base(&iev_parent.ev);
	event_dispatch();
	return (0);
}

static struct eg_sandbox *
eg_find(const char *id)
{
	struct eg_sandbox	*sb;

	TAILQ_FOREACH(sb, &sandboxes, entry)
		if (strcmp(sb->id, id) == 0)
			return (sb);
	return (NULL);
}

/* The destination, fixed now: a literal as given, a name looked up. */
static void
eg_resolve(struct eg_endpoint *ep, const struct egress_listen *l)
{
	const int	 fams[] = { AF_INET, AF_INET6 };
	struct addrinfo	 hints, *res;
	char		 port[8], addr[INET6_ADDRSTRLEN];
	size_t		 i;
	int		 rc = EAI_NONAME;

	snprintf(port, sizeof(port), "%u", (unsigned)l->port);
	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		if ((l->kind == EGRESS_ADDR4 && fams[i] != AF_INET) ||
		    (l->kind == EGRESS_ADDR6 && fams[i] != AF_INET6))
			continue;
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = fams[i];
		hints.ai_socktype = SOCK_STREAM;
		if (l->kind != EGRESS_NAME)
			hints.ai_flags = AI_NUMERICHOST;
		if ((rc = getaddrinfo(l->host, port, &hints, &res)) != 0)
			continue;
		if (res->ai_addrlen <= sizeof(ep->to)) {
			memcpy(&ep->to, res->ai_addr, res->ai_addrlen);
			ep->tolen = res->ai_addrlen;
			ep->resolved = 1;
		}
		freeaddrinfo(res);
		break;
	}
	if (!ep->resolved) {
		snprintf(ep->what, sizeof(ep->what), "%s port %u", l->host,
		    (unsigned)l->port);
		log_warnx("%s: egress to %s: %s: every connection is reset",
		    ep->sb->id, ep->what, gai_strerror(rc));
		return;
	}
	if (getnameinfo((struct sockaddr *)&ep->to, ep->tolen, addr,
	    sizeof(addr), NULL, 0, NI_NUMERICHOST) != 0)
		strlcpy(addr, "?", sizeof(addr));
	snprintf(ep->what, sizeof(ep->what), "%s%s%s:%u (%s port %u)",
	    l->kind == EGRESS_ADDR6 ? "[" : "", l->host,
	    l->kind == EGRESS_ADDR6 ? "]" : "", (unsigned)l->port, addr,
	    (unsigned)l->port);
	log_info("%s: egress allowed to %s", ep->sb->id, ep->what);
}

/*
 * The descriptor must be what the parent says it is: a listening TCP
 * socket.  Anything else is the parent's bug, and fatal.
 */
static void
eg_check_listener(int fd, const char *id)
{
	int		 v;
	socklen_t	 len = sizeof(v);

	if (fd == -1)
		fatalx("EGRESS_LISTEN %s: no descriptor", id);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 1)
		fatalx("EGRESS_LISTEN %s: descriptor is not listening", id);
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    (v != AF_INET && v != AF_INET6))
		fatalx("EGRESS_LISTEN %s: descriptor is not inet", id);
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_STREAM)
		fatalx("EGRESS_LISTEN %s: descriptor is not a stream", id);
}

static void
eg_listen(struct imsg *imsg)
{
	struct egress_listen	 l;
	struct eg_sandbox	*sb;
	struct eg_endpoint	*ep;
	char			 err[128];
	int			 fd = imsg_get_fd(imsg);

	if (egress_listen_decode(imsg, &l, err, sizeof(err)) == -1)
		fatalx("%s", err);
	eg_check_listener(fd, l.id);
	if ((sb = eg_find(l.id)) == NULL) {
		if (nsandboxes >= EG_MAXSANDBOX)
			fatalx("EGRESS_LISTEN %s: more than %d sandboxes",
			    l.id, EG_MAXSANDBOX);
		if ((sb = calloc(1, sizeof(*sb))) == NULL)
			fatal(NULL);
		strlcpy(sb->id, l.id, sizeof(sb->id));
		TAILQ_INIT(&sb->conns);
		TAILQ_INSERT_TAIL(&sandboxes, sb, entry);
		nsandboxes++;
	}
	if (sb->ep[l.ep] != NULL)
		fatalx("EGRESS_LISTEN %s: endpoint %u given twice", l.id,
		    (unsigned)l.ep);
	if ((ep = calloc(1, sizeof(*ep))) == NULL)
		fatal(NULL);
	ep->sb = sb;
	ep->index = l.ep;
	ep->fd = fd;
	sb->ep[l.ep] = ep;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1)
		fatal("%s: egress listener", sb->id);
	eg_resolve(ep, &l);
	event_set(&ep->ev, fd, EV_READ | EV_PERSIST, eg_accept, ep);
	event_add(&ep->ev, NULL);
	evtimer_set(&ep->pause, eg_resume, ep);
}

static void
eg_conn_free(struct eg_conn *c)
{
	struct eg_sandbox	*sb = c->sb;
	struct eg_endpoint	*ep;
	int			 i;

	for (i = 0; i < 2; i++)
		if (c->side[i] != NULL)
			bufferevent_free(c->side[i]);
	TAILQ_REMOVE(&sb->conns, c, entry);
	sb->nconns--;
	free(c);
	/* Descriptors came free: a paused endpoint accepts again. */
	for (i = 0; i < EGRESS_MAXEP; i++)
		if ((ep = sb->ep[i]) != NULL && ep->paused &&
		    evtimer_pending(&ep->pause, NULL)) {
			evtimer_del(&ep->pause);
			event_add(&ep->ev, NULL);
		}
}

static void
eg_close(struct imsg *imsg)
{
	struct eg_sandbox	*sb;
	struct eg_conn		*c;
	struct eg_endpoint	*ep;
	char			 id[ATTEMPT_ID_MAX], err[128];
	int			 i;

	if (imsg_get_fd(imsg) != -1)
		fatalx("EGRESS_CLOSE: unexpected descriptor");
	if (egress_close_decode(imsg, id, sizeof(id), err, sizeof(err)) == -1)
		fatalx("%s", err);
	if ((sb = eg_find(id)) == NULL)
		return;		/* no endpoint arrived: nothing to end */
	for (i = 0; i < EGRESS_MAXEP; i++) {
		if ((ep = sb->ep[i]) == NULL)
			continue;
		event_del(&ep->ev);
		evtimer_del(&ep->pause);
		close(ep->fd);
		free(ep);
		sb->ep[i] = NULL;
	}
	while ((c = TAILQ_FIRST(&sb->conns)) != NULL)
		eg_conn_free(c);
	TAILQ_REMOVE(&sandboxes, sb, entry);
	nsandboxes--;
	log_debug("%s: egress closed", id);
	free(sb);
}

/* Requests from the parent; -1 for anything else. */
static int
egress_imsg(struct imsg *imsg)
{
	switch (imsg_get_type(imsg)) {
	case IMSG_EGRESS_LISTEN:
		eg_listen(imsg);
		return (0);
	case IMSG_EGRESS_CLOSE:
		eg_close(imsg);
		return (0);
	}
	return (-1);
}

static void
eg_resume(int fd, short event, void *arg)
{
	struct eg_endpoint	*ep = arg;

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
		    "until a connection closes", ep->sb->id, ep->what,
		    EG_PAUSE_S);
	ep->paused = 1;
	event_del(&ep->ev);
	evtimer_add(&ep->pause, &tv);
}

/* The agent sees a reset, as from a refused connect. */
static void
eg_reset(int s)
{
	struct linger	 lg = { 1, 0 };

	(void)setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s);
}

static void
eg_accept(int fd, short event, void *arg)
{
	struct eg_endpoint	*ep = arg;
	struct eg_sandbox	*sb = ep->sb;
	struct eg_conn		*c;
	int			 s, d, i, saved;

	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			eg_pause(ep);
		else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("%s: egress accept", sb->id);
		return;
	}
	if (!ep->resolved) {
		eg_reset(s);
		return;
	}
	if (sb->nconns >= EGRESS_MAXCONNS) {
		log_info("%s: egress to %s refused: %d connections open",
		    sb->id, ep->what, sb->nconns);
		eg_reset(s);
		return;
	}
	if ((d = socket(ep->to.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		/* The accept took the last descriptor: same as above. */
		saved = errno;
		eg_reset(s);
		errno = saved;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			eg_pause(ep);
		else
			log_warn("%s: egress to %s", sb->id, ep->what);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("%s: egress to %s", sb->id, ep->what);
		close(d);
		eg_reset(s);
		return;
	}
	/* Both descriptors: the episode is over. */
	if (ep->paused) {
		log_info("%s: egress to %s: accepting again", sb->id,
		    ep->what);
		ep->paused = 0;
	}
	c->sb = sb;
	c->ep = ep;
	TAILQ_INSERT_TAIL(&sb->conns, c, entry);
	sb->nconns++;
	c->side[0] = bufferevent_socket_new(base, s, BEV_OPT_CLOSE_ON_FREE);
	c->side[1] = bufferevent_socket_new(base, d, BEV_OPT_CLOSE_ON_FREE);
	if (c->side[0] == NULL || c->side[1] == NULL) {
		log_warnx("%s: egress to %s: no buffers", sb->id, ep->what);
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
	log_debug("%s: egress connection to %s", sb->id, ep->what);
	if (bufferevent_socket_connect(c->side[1], (struct sockaddr *)&ep->to,
	    ep->tolen) == -1) {
		log_info("%s: egress to %s: connect failed", sb->id, ep->what);
		eg_conn_free(c);
	}
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
	struct linger	 lg = { 1, 0 };
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
		log_info("%s: egress to %s: %s", c->sb->id, c->ep->what,
		    strerror(EVUTIL_SOCKET_ERROR()));
		/* The agent sees a reset, as from a refused connect. */
		(void)setsockopt(bufferevent_getfd(c->side[0]), SOL_SOCKET,
		    SO_LINGER, &lg, sizeof(lg));
	}
	eg_conn_free(c);
}
