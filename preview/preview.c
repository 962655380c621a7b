/*
 * factory-preview: an attempt's application, shown to its operator in
 * a browser, by a process that is neither root nor the parent and
 * connects nowhere itself.
 *
 * The parent sends the key it mints tokens with, the preview domain
 * and the listening TCP socket it bound (IMSG_PREVIEW_CONF), then each
 * live preview: an attempt id, the port its application listens on
 * inside its network namespace, its end and a health path
 * (IMSG_PREVIEW_OPEN), until IMSG_PREVIEW_CLOSE.  A browser asks for
 * "<id>.<domain>"; a token from factoryctl preview, exchanged once at
 * /_factory/preview, becomes a cookie for that host name only
 * (conn.c).  For each request it lets through we ask the parent for a
 * connection to the application (IMSG_PREVIEW_CONNECT), which comes
 * back as a descriptor (IMSG_PREVIEW_CONNECTED), and copy bytes.
 *
 * Started only by factoryd, with its channel on fd 3.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "preview.h"

/* The longest an expiry timer is set for: re-armed when it fires. */
#define PV_EXPIRY_MAX_S	(24 * 60 * 60)
#define PV_FAULT_NOFILE	20		/* test builds: preview:nofile */

/* A token's nonce, taken: a token is exchanged once. */
struct pv_nonce {
	char		 nonce[PREVIEW_NONCEHEX + 1];
	uint64_t	 expires;	/* 0: a free slot */
};

static struct preview_conf	 conf;
static int			 haveconf;
static struct pv_previews	 previews = TAILQ_HEAD_INITIALIZER(previews);
static int			 npreviews;
static struct pv_nonce		 nonces[PV_MAXNONCES];
static uint32_t			 reqseq;
static struct imsgev		 iev_parent;

static int	preview_imsg(struct imsg *);
static struct pv_preview *pv_find_live(const char *);
static int	pv_nonce_take(const char *, uint64_t);
static uint32_t	pv_send_connect(const char *);
static void	pv_send_opened(const char *, const char *);
static void	pv_send_health(const struct preview_health *);
static void	pv_expired(int, short, void *);

static struct pv_ctx	 ctx = {
	.conf = &conf,
	.find = pv_find_live,
	.nonce_take = pv_nonce_take,
	.connect = pv_send_connect,
	.opened = pv_send_opened,
	.health = pv_send_health,
};

int
main(int argc, char *argv[])
{
	struct rlimit	 rl;
	uint8_t		 key0[PREVIEW_KEYLEN] = { 0 };
	char		 mac[PREVIEW_MACHEX + 1];
	int		 fd;

	/*
	 * Test builds: so few descriptors that accepting runs out of
	 * them.  Before the policy, which refuses setrlimit.
	 */
	if (faultpoint("preview:nofile") &&
	    getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = PV_FAULT_NOFILE;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}

	/*
	 * OpenSSL reads its configuration file when the first MAC is
	 * made; under the policy, which allows no file, the first login
	 * was killed for it.  One MAC now, of nothing, reads no input.
	 */
	preview_mac(key0, "token", "a-0", 0, "", mac);

	/* Policy next: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_PREVIEW, argc, argv);
	child_start(&iev_parent, fd, preview_imsg);
	ctx.base = event_get_base(&iev_parent.ev);
	conn_init(&ctx);
	health_init(&ctx);
	event_dispatch();
	return (0);
}

static struct pv_preview *
pv_find(const char *id)
{
	struct pv_preview	*pv;

	TAILQ_FOREACH(pv, &previews, entry)
		if (strcmp(pv->o.id, id) == 0)
			return (pv);
	return (NULL);
}

/* Between its end and the parent's CLOSE a preview is no more. */
static struct pv_preview *
pv_find_live(const char *id)
{
	struct pv_preview	*pv;

	if ((pv = pv_find(id)) == NULL ||
	    pv->o.expires <= (uint64_t)time(NULL))
		return (NULL);
	return (pv);
}

/*
 * A table that forgot a live nonce would let its token in twice: when
 * it is full of live ones the login is refused instead (the caller's
 * 503), and a slot comes free when its token's end passes.
 */
static int
pv_nonce_take(const char *nonce, uint64_t expires)
{
	uint64_t	 now = (uint64_t)time(NULL);
	int		 i, slot = -1;

	for (i = 0; i < PV_MAXNONCES; i++) {
		if (nonces[i].expires <= now) {
			if (slot == -1)
				slot = i;
			continue;
		}
		if (strcmp(nonces[i].nonce, nonce) == 0)
			return (-1);
	}
	if (slot == -1)
		return (-2);
	strlcpy(nonces[slot].nonce, nonce, sizeof(nonces[slot].nonce));
	nonces[slot].expires = expires;
	return (0);
}

static void
pv_compose(uint32_t type, const char *what, struct ibuf *b)
{
	if (b == NULL)
		fatalx("%s: cannot compose", what);
	if (imsgev_compose(&iev_parent, type, 0, 0, -1, ibuf_data(b),
	    ibuf_size(b)) == -1)
		fatal("%s", what);
	ibuf_free(b);
}

static uint32_t
pv_send_connect(const char *id)
{
	uint32_t	 req = ++reqseq;

	pv_compose(IMSG_PREVIEW_CONNECT, "PREVIEW_CONNECT",
	    preview_connect_compose(req, id));
	return (req);
}

static void
pv_send_opened(const char *id, const char *nonce)
{
	pv_compose(IMSG_PREVIEW_OPENED, "PREVIEW_OPENED",
	    preview_opened_compose(id, nonce));
}

static void
pv_send_health(const struct preview_health *h)
{
	log_info("%s: preview health: %u", h->id, (unsigned)h->status);
	pv_compose(IMSG_PREVIEW_HEALTH, "PREVIEW_HEALTH",
	    preview_health_compose(h));
}

/*
 * The descriptor must be what the parent says it is: a listening TCP
 * socket.  Anything else is the parent's bug, and fatal.
 */
static void
pv_check_listener(int fd)
{
	int		 v;
	socklen_t	 len = sizeof(v);

	if (fd == -1)
		fatalx("PREVIEW_CONF: no descriptor");
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 1)
		fatalx("PREVIEW_CONF: descriptor is not listening");
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    (v != AF_INET && v != AF_INET6))
		fatalx("PREVIEW_CONF: descriptor is not inet");
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_STREAM)
		fatalx("PREVIEW_CONF: descriptor is not a stream");
}

static void
pv_conf(struct imsg *imsg)
{
	char	 err[128];
	int	 fd;

	if (haveconf)
		fatalx("PREVIEW_CONF: given twice");
	if (preview_conf_decode(imsg, &conf, err, sizeof(err)) == -1)
		fatalx("%s", err);
	fd = imsg_get_fd(imsg);
	pv_check_listener(fd);
	haveconf = 1;
	conn_listen(fd);
	log_info("preview: serving *.%s%s", conf.domain,
	    conf.secure ? " (secure cookies)" : "");
}

/* Connections end with the preview, though the CLOSE may be late. */
static void
pv_expiry_arm(struct pv_preview *pv)
{
	struct timeval	 tv = { 0, 0 };
	uint64_t	 now = (uint64_t)time(NULL);

	if (pv->o.expires > now)
		tv.tv_sec = pv->o.expires - now > PV_EXPIRY_MAX_S ?
		    PV_EXPIRY_MAX_S : (time_t)(pv->o.expires - now);
	evtimer_add(&pv->expiry, &tv);
}

static void
pv_expired(int fd, short event, void *arg)
{
	struct pv_preview	*pv = arg;

	if (pv->o.expires > (uint64_t)time(NULL)) {
		pv_expiry_arm(pv);
		return;
	}
	log_info("%s: preview ended", pv->o.id);
	conn_close_preview(pv);
	health_stop(pv);
}

static void
pv_nofd(struct imsg *imsg, const char *what)
{
	if (imsg_get_fd(imsg) != -1)
		fatalx("%s: unexpected descriptor", what);
}

/*
 * A second OPEN of an id moves its end, port or health path (the
 * parent's ttl changed, the application moved): connections to the
 * old port go, and the health is probed again only if what is probed
 * changed.
 */
static void
pv_open(struct imsg *imsg)
{
	struct preview_open	 o;
	struct pv_preview	*pv;
	char			 err[128];
	int			 probe = 1;

	pv_nofd(imsg, "PREVIEW_OPEN");
	if (preview_open_decode(imsg, &o, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if ((pv = pv_find(o.id)) == NULL) {
		if (npreviews >= PV_MAXPREVIEWS)
			fatalx("PREVIEW_OPEN %s: more than %d previews", o.id,
			    PV_MAXPREVIEWS);
		if ((pv = calloc(1, sizeof(*pv))) == NULL)
			fatal(NULL);
		evtimer_set(&pv->expiry, pv_expired, pv);
		TAILQ_INSERT_TAIL(&previews, pv, entry);
		npreviews++;
	} else if (pv->o.port != o.port)
		conn_close_preview(pv);
	else
		probe = strcmp(pv->o.health, o.health) != 0;
	pv->o = o;
	pv_expiry_arm(pv);
	if (probe) {
		health_stop(pv);
		health_start(pv);
	}
	log_info("%s: preview open, port %u", o.id, (unsigned)o.port);
}

static void
pv_close(struct imsg *imsg)
{
	struct pv_preview	*pv;
	char			 id[ATTEMPT_ID_MAX], err[128];

	pv_nofd(imsg, "PREVIEW_CLOSE");
	if (preview_id_decode(imsg, "PREVIEW_CLOSE", id, sizeof(id), err,
	    sizeof(err)) == -1)
		fatalx("%s", err);
	if ((pv = pv_find(id)) == NULL)
		return;		/* never opened, or a restart forgot it */
	conn_close_preview(pv);
	health_stop(pv);
	evtimer_del(&pv->expiry);
	TAILQ_REMOVE(&previews, pv, entry);
	npreviews--;
	log_info("%s: preview closed", id);
	free(pv);
}

/* The client or probe that asked may be gone: then the socket goes. */
static void
pv_connected(struct imsg *imsg)
{
	struct preview_connected	 c;
	char				 err[128];
	int				 fd = imsg_get_fd(imsg);

	if (preview_connected_decode(imsg, &c, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (!conn_connected(&c, fd) && !health_connected(&c, fd) &&
	    fd != -1)
		close(fd);
}

/* Requests from the parent; -1 for anything else. */
static int
preview_imsg(struct imsg *imsg)
{
	switch (imsg_get_type(imsg)) {
	case IMSG_PREVIEW_CONF:
		pv_conf(imsg);
		return (0);
	case IMSG_PREVIEW_OPEN:
		pv_open(imsg);
		return (0);
	case IMSG_PREVIEW_CLOSE:
		pv_close(imsg);
		return (0);
	case IMSG_PREVIEW_CONNECTED:
		pv_connected(imsg);
		return (0);
	}
	return (-1);
}
