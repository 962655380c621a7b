/*
 * factory-gateway: model-provider and upstream keys, held by a process
 * that is neither root nor the parent, and never by an agent.
 *
 * The parent sends the providers and upstreams of its config
 * (IMSG_GW_PROVIDER ..., IMSG_GW_CONFIGURED); we read their key and CA
 * files ourselves.  For each grant (IMSG_GW_GRANT) the parent makes a
 * listening socket inside the attempt's network namespace; we mint an
 * opaque token (or take back the one we minted before a restart) and
 * answer it (IMSG_GW_TOKEN).  The agent presents that token on that
 * endpoint only; we check it, its model, method and budget, put the
 * real key in its place and forward over TLS (serve.c, fwd.c),
 * metering the provider's own usage fields (meter.c) into one
 * IMSG_GW_USAGE per request.  IMSG_GW_REVOKE ends an attempt's
 * endpoints; its tokens stay known as revoked, so a replay is refused
 * and reported.
 *
 * Started only by factoryd, with its channel on fd 3.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "egressmsg.h"
#include "factory.h"
#include "gateway.h"
#include "imsgev.h"
#include "log.h"

#define GW_TIMEOUT_S	120		/* default request/upstream timeout */
/*
 * The gateway's own memory bound (RLIMIT_DATA: heap and private
 * writable mappings): the agents of every tenant share this process,
 * and what they make it hold is bounded per attempt where requests
 * start (serve.c); past this, an allocation fails, the request that
 * needed it is refused, and should the gateway die of it the parent
 * restarts it: it fails alone, never the host.
 */
#define GW_MEMMAX	((rlim_t)1024 * 1024 * 1024)

struct gw_revoked {
	char	 id[ATTEMPT_ID_MAX];
	char	 token[GW_TOKEN_LEN + 1];
};

static struct gw_provs	 gw_provs = TAILQ_HEAD_INITIALIZER(gw_provs);
static struct gw_eps	 gw_eps = TAILQ_HEAD_INITIALIZER(gw_eps);

/* Providers of a config being sent, installed at IMSG_GW_CONFIGURED. */
static struct gw_provs	 staging = TAILQ_HEAD_INITIALIZER(staging);
static struct imsgev	 iev_parent;
static int		 neps;
/* A ring: the oldest revoked token is forgotten first. */
static struct gw_revoked revoked[GW_MAXREVOKED];
static size_t		 nrevoked, revoked_next;
static uint64_t		 usage_seq;

static int	gateway_imsg(struct imsg *);
static void	gw_memlimit(void);
static struct gw_prov *gw_prov_find(const char *);
static int	gw_revoked(const char *, size_t, char *, size_t);
static void	gw_send_usage(struct gw_usage *);

/* What serve.c and fwd.c are given of ours: they never call up. */
static struct gw_ctx	 ctx = {
	.timeout = GW_TIMEOUT_S,
	.eps = &gw_eps,
	.prov_find = gw_prov_find,
	.revoked = gw_revoked,
	.usage = gw_send_usage,
};

int
main(int argc, char *argv[])
{
	const char	*v;
	const char	*errstr;
	int		 fd;

	/*
	 * The one thing before the policy, which allows no setrlimit:
	 * lowering our own memory bound reads no input.
	 */
	gw_memlimit();
	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_GATEWAY, argc, argv);
	if ((v = proc_getvar("gw_timeout")) != NULL) {
		ctx.timeout = strtonum(v, 1, 3600, &errstr);
		if (errstr != NULL)
			fatalx("-V gw_timeout=%s: %s", v, errstr);
	}
	child_start(&iev_parent, fd, gateway_imsg);
	ctx.base = event_get_base(&iev_parent.ev);
	serve_init(&ctx);
	event_dispatch();
	return (0);
}

/*
 * Lowered, never raised (a lower bound the parent set stays).  Not
 * under AddressSanitizer, whose shadow memory is a private writable
 * mapping of terabytes.
 */
static void
gw_memlimit(void)
{
#if !defined(__SANITIZE_ADDRESS__)
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_DATA, &rl) == -1)
		fatal("getrlimit RLIMIT_DATA");
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= GW_MEMMAX)
		return;
	rl.rlim_cur = GW_MEMMAX;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
		rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_DATA, &rl) == -1)
		fatal("setrlimit RLIMIT_DATA");
#endif
}

void
gw_send_error(const char *fmt, ...)
{
	struct ibuf	*b;
	va_list		 ap;
	char		 line[GW_ERRMAX];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_warnx("%s", line);
	if ((b = gw_error_compose(line)) == NULL)
		fatalx("GW_ERROR: cannot compose");
	if (imsgev_compose(&iev_parent, IMSG_GW_ERROR, 0, 0, -1,
	    ibuf_data(b), ibuf_size(b)) == -1)
		fatal("GW_ERROR");
	ibuf_free(b);
}

static void
gw_send_usage(struct gw_usage *u)
{
	struct ibuf	*b;

	u->seq = ++usage_seq;
	if ((b = gw_usage_compose(u)) == NULL) {
		/* What the agent's bytes made, never the end of the gateway. */
		u->method[0] = u->path[0] = u->reason[0] = '\0';
		if ((b = gw_usage_compose(u)) == NULL)
			fatalx("GW_USAGE %s: cannot compose", u->id);
	}
	if (imsgev_compose(&iev_parent, IMSG_GW_USAGE, 0, 0, -1,
	    ibuf_data(b), ibuf_size(b)) == -1)
		fatal("GW_USAGE");
	ibuf_free(b);
	/* A refusal or a cut: what was asked, and why. */
	if (u->reason[0] != '\0')
		log_info("%s: %s: %s %s: %u %s: %s", u->id, u->provider,
		    u->method[0] != '\0' ? u->method : "-",
		    u->path[0] != '\0' ? u->path : "-", (unsigned)u->status,
		    gw_outcome_name(u->outcome), u->reason);
	log_info("%s: %s %s %u %s in %llu out %llu cost %llu uusd",
	    u->id, u->provider, u->model[0] != '\0' ? u->model : "-",
	    (unsigned)u->status, gw_outcome_name(u->outcome),
	    (unsigned long long)u->tokens_in,
	    (unsigned long long)u->tokens_out,
	    (unsigned long long)u->cost_uusd);
}

static struct gw_prov *
gw_prov_find(const char *name)
{
	struct gw_prov	*p;

	TAILQ_FOREACH(p, &gw_provs, entry)
		if (strcmp(p->conf.name, name) == 0)
			return (p);
	return (NULL);
}

static int
gw_revoked(const char *tok, size_t len, char *id, size_t idlen)
{
	size_t	 i;
	int	 hit = -1;

	if (len != GW_TOKEN_LEN)
		return (0);
	/* Every entry compared, whatever matched: no timing to learn. */
	for (i = 0; i < nrevoked; i++)
		if (CRYPTO_memcmp(revoked[i].token, tok, GW_TOKEN_LEN) == 0)
			hit = (int)i;
	if (hit == -1)
		return (0);
	strlcpy(id, revoked[hit].id, idlen);
	return (1);
}

static void
gw_revoke_token(const struct gw_ep *ep)
{
	struct gw_revoked	*r = &revoked[revoked_next];

	strlcpy(r->id, ep->g.id, sizeof(r->id));
	memcpy(r->token, ep->g.token, sizeof(r->token));
	revoked_next = (revoked_next + 1) % GW_MAXREVOKED;
	if (nrevoked < GW_MAXREVOKED)
		nrevoked++;
}

/*
 * "https://host[:port][/prefix]": the host is a DNS name or an IPv4
 * literal (the certificate must name it), the prefix goes in front of
 * every path the agent asks for.
 */
static int
gw_parse_url(struct gw_prov *p)
{
	return (gw_url_split(p->conf.url, p->host, sizeof(p->host), &p->port,
	    p->prefix, sizeof(p->prefix)));
}

/*
 * The key: one line of visible ASCII (it goes into a header), a
 * trailing newline allowed.  Read here, never sent anywhere but the
 * provider.
 */
static int
gw_read_key(struct gw_prov *p)
{
	struct stat	 sb;
	ssize_t		 n;
	size_t		 i, len;
	int		 fd;

	if ((fd = open(p->conf.keyfile, O_RDONLY | O_CLOEXEC)) == -1) {
		gw_send_error("provider %s: key file %s: %s", p->conf.name,
		    p->conf.keyfile, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size <= 0 || sb.st_size >= GW_KEYMAX) {
		close(fd);
		gw_send_error("provider %s: key file %s: not a regular file "
		    "of 1 to %d bytes", p->conf.name, p->conf.keyfile,
		    GW_KEYMAX - 1);
		return (-1);
	}
	n = read(fd, p->key, sizeof(p->key) - 1);
	close(fd);
	if (n != sb.st_size) {
		gw_send_error("provider %s: key file %s: short read",
		    p->conf.name, p->conf.keyfile);
		return (-1);
	}
	len = (size_t)n;
	if (len > 0 && p->key[len - 1] == '\n')
		len--;
	if (len > 0 && p->key[len - 1] == '\r')
		len--;
	p->key[len] = '\0';
	for (i = 0; i < len; i++)
		if (p->key[i] <= 0x20 || p->key[i] >= 0x7f)
			break;
	if (len == 0 || i != len) {
		explicit_bzero(p->key, sizeof(p->key));
		gw_send_error("provider %s: key file %s: not one line of "
		    "visible ASCII", p->conf.name, p->conf.keyfile);
		return (-1);
	}
	return (0);
}

/* Peer verified against this CA file alone: no system store. */
static int
gw_load_ca(struct gw_prov *p)
{
	if ((p->ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		fatalx("SSL_CTX_new");
	SSL_CTX_set_min_proto_version(p->ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(p->ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_load_verify_locations(p->ctx, p->conf.cafile,
	    NULL) != 1) {
		gw_send_error("provider %s: CA file %s: no certificate read",
		    p->conf.name, p->conf.cafile);
		return (-1);
	}
	return (0);
}

static void
gw_prov_free(struct gw_prov *p)
{
	explicit_bzero(p->key, sizeof(p->key));
	if (p->ctx != NULL)
		SSL_CTX_free(p->ctx);	/* open connections hold their own */
	free(p);
}

static void
gw_provider(struct imsg *imsg)
{
	struct gw_prov	*p, *q;
	char		 err[128];

	if (imsg_get_fd(imsg) != -1)
		fatalx("GW_PROVIDER: unexpected descriptor");
	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal(NULL);
	if (gw_provider_decode(imsg, &p->conf, err, sizeof(err)) == -1)
		fatalx("%s", err);
	TAILQ_FOREACH(q, &staging, entry)
		if (strcmp(q->conf.name, p->conf.name) == 0)
			fatalx("GW_PROVIDER: %s sent twice", p->conf.name);
	if (gw_parse_url(p) == -1)
		fatalx("GW_PROVIDER %s: bad url", p->conf.name);
	/* A file we cannot read: said, and the provider refuses. */
	p->usable = gw_read_key(p) == 0 && gw_load_ca(p) == 0;
	TAILQ_INSERT_TAIL(&staging, p, entry);
}

/* The new config replaces the old one whole. */
static void
gw_configured(struct imsg *imsg)
{
	struct gw_prov	*p;
	char		 err[128];
	int		 n = 0;

	if (imsg_get_fd(imsg) != -1 ||
	    gw_configured_decode(imsg, err, sizeof(err)) == -1)
		fatalx("GW_CONFIGURED: unexpected payload");
	while ((p = TAILQ_FIRST(&gw_provs)) != NULL) {
		TAILQ_REMOVE(&gw_provs, p, entry);
		gw_prov_free(p);
	}
	while ((p = TAILQ_FIRST(&staging)) != NULL) {
		TAILQ_REMOVE(&staging, p, entry);
		TAILQ_INSERT_TAIL(&gw_provs, p, entry);
		n++;
	}
	log_info("configured: %d providers and upstreams", n);
}

static struct gw_ep *
gw_ep_find(const char *id, const char *provider)
{
	struct gw_ep	*ep;

	TAILQ_FOREACH(ep, &gw_eps, entry)
		if (strcmp(ep->g.id, id) == 0 &&
		    strcmp(ep->g.provider, provider) == 0)
			return (ep);
	return (NULL);
}

/* The same checks as egress: a listening TCP socket, nothing else. */
static void
gw_check_listener(int fd, const char *id)
{
	int		 v;
	socklen_t	 len = sizeof(v);

	if (fd == -1)
		fatalx("GW_GRANT %s: no descriptor", id);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 1)
		fatalx("GW_GRANT %s: descriptor is not listening", id);
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    (v != AF_INET && v != AF_INET6))
		fatalx("GW_GRANT %s: descriptor is not inet", id);
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_STREAM)
		fatalx("GW_GRANT %s: descriptor is not a stream", id);
}

static void
gw_mint(char *tok, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 r[(GW_TOKEN_LEN - 4) / 2];
	size_t			 i, p = strlen(GW_TOKEN_PREFIX);

	if (len < GW_TOKEN_LEN + 1 || RAND_bytes(r, sizeof(r)) != 1)
		fatalx("token: no randomness");
	memcpy(tok, GW_TOKEN_PREFIX, p);
	for (i = 0; i < sizeof(r); i++) {
		tok[p + 2 * i] = hex[r[i] >> 4];
		tok[p + 2 * i + 1] = hex[r[i] & 0xf];
	}
	tok[GW_TOKEN_LEN] = '\0';
	explicit_bzero(r, sizeof(r));
}

static void
gw_grant(struct imsg *imsg)
{
	struct gw_ep	*ep;
	struct gw_token	 t;
	struct ibuf	*b;
	char		 err[128], rid[ATTEMPT_ID_MAX];
	int		 fd = imsg_get_fd(imsg);

	if ((ep = calloc(1, sizeof(*ep))) == NULL)
		fatal(NULL);
	if (gw_grant_decode(imsg, &ep->g, err, sizeof(err)) == -1)
		fatalx("%s", err);
	gw_check_listener(fd, ep->g.id);
	if (gw_ep_find(ep->g.id, ep->g.provider) != NULL)
		fatalx("GW_GRANT %s: %s granted twice", ep->g.id,
		    ep->g.provider);
	if (neps >= GW_MAXGRANTS)
		fatalx("GW_GRANT %s: more than %d grants", ep->g.id,
		    GW_MAXGRANTS);
	/* A token restored must not be one that died. */
	if (ep->g.token[0] != '\0' && gw_revoked(ep->g.token,
	    strlen(ep->g.token), rid, sizeof(rid))) {
		gw_send_error("grant %s %s: token was revoked with %s",
		    ep->g.id, ep->g.provider, rid);
		close(fd);
		free(ep);
		return;
	}
	if (ep->g.token[0] == '\0')
		gw_mint(ep->g.token, sizeof(ep->g.token));
	ep->fd = fd;
	TAILQ_INIT(&ep->fwds);
	TAILQ_INSERT_TAIL(&gw_eps, ep, entry);
	neps++;
	serve_start(ep);

	memset(&t, 0, sizeof(t));
	strlcpy(t.id, ep->g.id, sizeof(t.id));
	strlcpy(t.provider, ep->g.provider, sizeof(t.provider));
	memcpy(t.token, ep->g.token, sizeof(t.token));
	if ((b = gw_token_compose(&t)) == NULL)
		fatalx("GW_TOKEN %s: cannot compose", t.id);
	if (imsgev_compose(&iev_parent, IMSG_GW_TOKEN, 0, 0, -1,
	    ibuf_data(b), ibuf_size(b)) == -1)
		fatal("GW_TOKEN");
	ibuf_free(b);
	explicit_bzero(&t, sizeof(t));
	log_info("%s: %s granted", ep->g.id, ep->g.provider);
}

static void
gw_revoke(struct imsg *imsg)
{
	struct gw_ep	*ep, *next;
	char		 id[ATTEMPT_ID_MAX], err[128];
	int		 n = 0;

	if (imsg_get_fd(imsg) != -1)
		fatalx("GW_REVOKE: unexpected descriptor");
	if (gw_revoke_decode(imsg, id, sizeof(id), err, sizeof(err)) == -1)
		fatalx("%s", err);
	for (ep = TAILQ_FIRST(&gw_eps); ep != NULL; ep = next) {
		next = TAILQ_NEXT(ep, entry);
		if (strcmp(ep->g.id, id) != 0)
			continue;
		serve_stop(ep);
		gw_revoke_token(ep);
		TAILQ_REMOVE(&gw_eps, ep, entry);
		neps--;
		explicit_bzero(ep, sizeof(*ep));
		free(ep);
		n++;
	}
	log_info("%s: %d grants revoked", id, n);
}

/* Requests from the parent; -1 for anything else. */
static int
gateway_imsg(struct imsg *imsg)
{
	switch (imsg_get_type(imsg)) {
	case IMSG_GW_PROVIDER:
		gw_provider(imsg);
		return (0);
	case IMSG_GW_CONFIGURED:
		gw_configured(imsg);
		return (0);
	case IMSG_GW_GRANT:
		gw_grant(imsg);
		return (0);
	case IMSG_GW_REVOKE:
		gw_revoke(imsg);
		return (0);
	}
	return (-1);
}
