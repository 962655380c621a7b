/*
 * Egress: the manifest's network.allow; the parent decides, another
 * process forwards.
 *
 * The agent's network namespace stays empty but for lo.  For each
 * allowed host:port, pid 1 of the sandbox listens on an endpoint inside
 * the namespace and hands the listening socket to the parent before it
 * starts the agent (sandbox.c).  The parent sends each socket, with the
 * one destination it decided for that endpoint when the attempt
 * started, to factory-egress (egress/), which accepts there, connects
 * from the host's namespace and copies bytes.  The parent handles no
 * agent traffic and resolves no names: it keeps only a copy of each
 * listening socket, to hand the endpoints again to a restarted
 * factory-egress.  Nothing the agent sends chooses a destination.
 *
 * Inside, an IPv4 or IPv6 literal is reached at the same address (put
 * on lo if it is not a loopback one); a name is given its own loopback
 * address 127.0.0.N in a hosts file that lists only the allowed names,
 * and "localhost" is 127.0.0.1.  factory-egress resolves a name once,
 * when its endpoint arrives.  There is no DNS inside: no server is
 * reachable, and the hosts file knows nothing else.  Everything else
 * is refused twice: by the namespace (no route, no listener) and by
 * Landlock (TCP connect only to the allowed ports).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/queue.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "egressmsg.h"
#include "factoryd.h"
#include "log.h"

#define EG_HOSTSMAX	(SANDBOX_MAXLISTEN * 300 + 256)

#if SANDBOX_MAXLISTEN > EGRESS_MAXEP
#error "factory-egress takes fewer endpoints than a sandbox may have"
#endif

struct eg_endpoint {
	int			 fd;		/* listening, in the sandbox */
	struct egress_listen	 dest;		/* what factory-egress gets */
	char			 what[300];	/* "host:port" */
};

struct egress {
	TAILQ_ENTRY(egress)	 entry;
	char			 id[ATTEMPT_ID_MAX];
	int			 n;
	struct sandbox_listen	 listen[SANDBOX_MAXLISTEN];
	struct eg_endpoint	 ep[SANDBOX_MAXLISTEN];
	char			*hosts;
	int			 started;
};

/* The started ones: handed again to a restarted factory-egress. */
static TAILQ_HEAD(, egress)	 egresses = TAILQ_HEAD_INITIALIZER(egresses);

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
	char			 host[256];
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
	memset(ep, 0, sizeof(*ep));
	if (host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a6) != 1) {
			snprintf(err, errlen, "network.allow: bad IPv6 "
			    "address in \"%s\"", ent);
			return (-1);
		}
		eg_sockaddr(&l->addr, &l->addrlen, AF_INET6, &a6, port);
		l->addlo = !IN6_IS_ADDR_LOOPBACK(&a6);
		ep->dest.kind = EGRESS_ADDR6;
		strlcpy(ep->dest.host, host + 1, sizeof(ep->dest.host));
	} else if (inet_pton(AF_INET, host, &a4) == 1) {
		eg_sockaddr(&l->addr, &l->addrlen, AF_INET, &a4, port);
		l->addlo = (ntohl(a4.s_addr) >> 24) != 127;
		ep->dest.kind = EGRESS_ADDR4;
		strlcpy(ep->dest.host, host, sizeof(ep->dest.host));
	} else {
		ep->dest.kind = EGRESS_NAME;
		strlcpy(ep->dest.host, host, sizeof(ep->dest.host));
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
	strlcpy(ep->dest.id, eg->id, sizeof(ep->dest.id));
	ep->dest.ep = (uint32_t)eg->n;
	ep->dest.port = (uint16_t)port;
	strlcpy(ep->what, ent, sizeof(ep->what));
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

/*
 * Each endpoint to factory-egress, with a copy of its listening socket
 * (ours stays, for a restarted factory-egress).  Not running: it gets
 * them all when it says hello (egress_child_ready()).
 */
static void
eg_send(struct egress *eg)
{
	struct eg_endpoint	*ep;
	struct ibuf		*b;
	int			 i, fd;

	for (i = 0; i < eg->n; i++) {
		ep = &eg->ep[i];
		if (ep->fd == -1)
			continue;
		if ((b = egress_listen_compose(&ep->dest)) == NULL) {
			log_warnx("%s: egress to %s: cannot compose", eg->id,
			    ep->what);
			continue;
		}
		if ((fd = fcntl(ep->fd, F_DUPFD_CLOEXEC, 0)) == -1) {
			log_warn("%s: egress to %s", eg->id, ep->what);
			ibuf_free(b);
			continue;
		}
		if (proc_compose(PROC_EGRESS, IMSG_EGRESS_LISTEN, 0, fd,
		    ibuf_data(b), ibuf_size(b)) == -1)
			log_info("%s: egress to %s: factory-egress not "
			    "running, handed over when it starts", eg->id,
			    ep->what);
		else
			log_debug("%s: egress to %s handed to factory-egress",
			    eg->id, ep->what);
		ibuf_free(b);
	}
}

/* Takes the sandbox's listening sockets; factory-egress accepts. */
void
egress_start(struct egress *eg, struct sandbox *sb)
{
	int	 i;

	if (eg == NULL)
		return;
	for (i = 0; i < eg->n && i < sb->nlfd; i++) {
		eg->ep[i].fd = sb->lfd[i];
		sb->lfd[i] = -1;
	}
	sb->nlfd = 0;
	eg->started = 1;
	TAILQ_INSERT_TAIL(&egresses, eg, entry);
	eg_send(eg);
}

/* factory-egress (re)started: every running sandbox's endpoints. */
void
egress_child_ready(void)
{
	struct egress	*eg;

	TAILQ_FOREACH(eg, &egresses, entry)
		eg_send(eg);
}

void
egress_free(struct egress *eg)
{
	struct ibuf	*b;
	int		 i;

	if (eg == NULL)
		return;
	if (eg->started) {
		TAILQ_REMOVE(&egresses, eg, entry);
		/* Its connections end with it; a lost message, at restart. */
		if ((b = egress_close_compose(eg->id)) != NULL) {
			(void)proc_compose(PROC_EGRESS, IMSG_EGRESS_CLOSE, 0,
			    -1, ibuf_data(b), ibuf_size(b));
			ibuf_free(b);
		}
	}
	for (i = 0; i < eg->n; i++)
		if (eg->ep[i].fd != -1)
			close(eg->ep[i].fd);
	free(eg->hosts);
	free(eg);
}

/*
 * The descriptors one sandbox's egress may hold: our copies of its
 * listening sockets, and in factory-egress, which inherits our limit,
 * those again and two per connection.
 */
int
egress_nofile(void)
{
	return (SANDBOX_MAXLISTEN + 2 * EGRESS_MAXCONNS);
}
