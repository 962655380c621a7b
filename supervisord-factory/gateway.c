/*
 * The parent's side of the model gateway (factory-gateway): providers
 * and upstreams from factoryd.conf, one grant per provider or upstream
 * an attempt's manifest asks for, and the spend it reports.
 *
 * At submission gateway_admit() refuses a manifest whose repository
 * does not allow the provider or upstream it names, or whose budget is
 * above the repository's ceilings; the ceilings apply where the
 * manifest asks for none.  When the agent's sandbox is made, each
 * grant is one more listening endpoint in its network namespace,
 * 127.0.0.1:PORT, bound by pid 1 like egress endpoints (egress.c); the
 * parent keeps a copy of each socket and hands it, with the grant, to
 * factory-gateway, which accepts there.
 *
 * The token is minted here, before the sandbox starts: the agent's
 * environment is part of the sandbox's plan and cannot change once
 * its argv runs, so the token must exist before the listening socket
 * does.  factory-gateway gets it in the grant (as it gets a restored
 * one) and answers IMSG_GW_TOKEN with the same token, which is
 * checked.  Connections made before factory-gateway has the socket
 * wait in its backlog: a gateway that is not running (yet, or again)
 * gets every live grant when it says hello, with the spend so far.
 *
 * The token lives only in this process's memory and the agent's
 * environment: never in the journal, a receipt or a log line.  After a
 * crash of the parent the agent is gone with it (its pid 1 dies with
 * us) and the attempt fails on replay ("agent interrupted"), so a
 * token is never re-minted for an attempt that ran: fail closed.
 * The grants go (IMSG_GW_REVOKE) when the agent's run ends, which is
 * when the attempt leaves "running", and again at teardown.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/queue.h>
#include <sys/random.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "factoryd.h"
#include "gwmsg.h"
#include "log.h"

#define GW_PORT_BASE	4100	/* the first endpoint inside a sandbox */
#define GW_ENVMAX	(2 * CONF_GW_GRANTS + 8)
/* Tokens or micro-dollars of one request, at most (2^40). */
#define GW_USAGE_MAX	(1ULL << 40)

struct gw_endpoint {
	int			 fd;		/* listening, in the sandbox */
	int			 kind;		/* enum conf_gwkind */
	uint16_t		 port;
	struct gw_grant		 grant;		/* with the token */
	int			 confirmed;	/* IMSG_GW_TOKEN matched */
};

struct gateway {
	TAILQ_ENTRY(gateway)	 entry;
	char			 id[ATTEMPT_ID_MAX];
	int			 n;
	int			 first;		/* index in spec->listen */
	struct gw_endpoint	 ep[1 + CONF_GW_GRANTS];
	char			*envp[GW_ENVMAX + 1];
	char			*home[AGENTS_HOMEMAX + 1];	/* agents.c */
	int			 nhome;
	int			 started;
};

/* The started ones: handed again to a restarted factory-gateway. */
static TAILQ_HEAD(, gateway)	 gateways = TAILQ_HEAD_INITIALIZER(gateways);

/*
 * What an attempt's requests become in its chain.  Each reported
 * request used to be a signed, fdatasync'd receipt of its own: an
 * agent sending wrong tokens as fast as it could made thousands a
 * second and held the daemon for every tenant.  Now a request is a
 * receipt of its own while it is among the first GW_REFUSAL_ALONE of
 * its kind (a refusal: its provider and outcome) or billable within a
 * rate (a burst of
 * GW_BILL_BURST, then GW_BILL_PER_S a second), and at most
 * GW_MAXRECEIPTS of them an attempt; the rest are counted by
 * provider, model, outcome and estimate (a refusal's model is the
 * agent's and not a key: "-") and journaled as one receipt per count,
 * "requests": N with the sums, at most every GW_TALLY_MS, and before
 * the agent's exit is (gateway_free): the totals of "exited" are those
 * of the receipts before it, as exact as before.
 */
#define GW_REFUSAL_ALONE 8
#define GW_BILL_BURST	60
#define GW_BILL_PER_S	1
#define GW_MAXRECEIPTS	4096
#define GW_TALLY_MS	10000

struct gw_tally {
	TAILQ_ENTRY(gw_tally)	 entry;
	char			 provider[GW_NAMEMAX];
	char			 model[GW_MODELMAX];
	uint32_t		 outcome;
	uint32_t		 estimated;
	uint32_t		 status;	/* the last one's */
	uint64_t		 seq;		/* the last one's */
	uint64_t		 n;		/* counted, not yet journaled */
	uint64_t		 alone;		/* receipts of their own */
	uint64_t		 tokens_in, tokens_out, cost_uusd;
	uint64_t		 first_ms, last_ms;
};

struct gw_acct {
	TAILQ_ENTRY(gw_acct)	 entry;
	char			 id[ATTEMPT_ID_MAX];
	uint64_t		 receipts;	/* of their own */
	uint64_t		 bucket_mt;	/* billable ones, x1000 */
	uint64_t		 bucket_ms;	/* when it was filled */
	TAILQ_HEAD(, gw_tally)	 tallies;
};

static TAILQ_HEAD(, gw_acct)	 accts = TAILQ_HEAD_INITIALIZER(accts);
static struct event		 tally_ev;
static int			 tally_armed;

static void	gw_tally_flush(const char *, int);

static uint64_t
gw_min(uint64_t want, uint64_t ceiling)
{
	if (ceiling == 0)
		return (want);
	if (want == 0 || want > ceiling)
		return (ceiling);
	return (want);
}

static int
gw_listed(char (*names)[CONF_GW_NAMEMAX], size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (1);
	return (0);
}

/*
 * model: and upstreams: against factoryd.conf and the repository's
 * grant; -1 and the one refusal in err.  The ceilings are applied by
 * the caller again when the grant is made (gateway_new).
 */
int
gateway_admit(const char *name, const struct conf_repo *repo,
    const struct manifest *m, char *err, size_t errlen)
{
	const struct conf_modelgrant	*g = &repo->grant;
	const struct manifest_model	*mm = &m->model;
	const struct conf_gw		*gw;
	char				 a[32], b[32];
	size_t				 i;

	if (mm->provider[0] != '\0') {
		if ((gw = conf_gw(env->conf, mm->provider)) == NULL ||
		    gw->kind == CONF_GW_UPSTREAM) {
			snprintf(err, errlen, "%s: model.provider: %s is not "
			    "a provider of this factoryd", name, mm->provider);
			return (-1);
		}
		if (!gw_listed((char (*)[CONF_GW_NAMEMAX])g->providers,
		    g->nproviders, mm->provider)) {
			snprintf(err, errlen, "%s: model.provider: %s is not "
			    "allowed for repository %s", name, mm->provider,
			    repo->name);
			return (-1);
		}
		if (g->max_tokens != 0 && mm->budget_tokens > g->max_tokens) {
			snprintf(err, errlen, "%s: model.budget.tokens: %llu "
			    "is above the ceiling of repository %s, %llu "
			    "(max-tokens)", name,
			    (unsigned long long)mm->budget_tokens, repo->name,
			    (unsigned long long)g->max_tokens);
			return (-1);
		}
		if (g->max_uusd != 0 && mm->budget_uusd > g->max_uusd) {
			snprintf(err, errlen, "%s: model.budget.usd: %s is "
			    "above the ceiling of repository %s, %s (max-usd)",
			    name, conf_usd(mm->budget_uusd, a, sizeof(a)),
			    repo->name, conf_usd(g->max_uusd, b, sizeof(b)));
			return (-1);
		}
	}
	for (i = 0; i < m->nupstreams; i++) {
		if ((gw = conf_gw(env->conf, m->upstreams[i])) == NULL ||
		    gw->kind != CONF_GW_UPSTREAM) {
			snprintf(err, errlen, "%s: upstreams: %s is not an "
			    "upstream of this factoryd", name,
			    m->upstreams[i]);
			return (-1);
		}
		if (!gw_listed((char (*)[CONF_GW_NAMEMAX])g->upstreams,
		    g->nupstreams, m->upstreams[i])) {
			snprintf(err, errlen, "%s: upstreams: %s is not "
			    "allowed for repository %s", name,
			    m->upstreams[i], repo->name);
			return (-1);
		}
	}
	return (0);
}

/* "fgw-" and 64 hex digits of 32 random bytes. */
static int
gw_mint(char *tok, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	uint8_t			 r[32];
	size_t			 i;

	if (len < GW_TOKEN_LEN + 1 ||
	    getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return (-1);
	memcpy(tok, "fgw-", 4);
	for (i = 0; i < sizeof(r); i++) {
		tok[4 + 2 * i] = hex[r[i] >> 4];
		tok[4 + 2 * i + 1] = hex[r[i] & 0xf];
	}
	tok[4 + 2 * sizeof(r)] = '\0';
	explicit_bzero(r, sizeof(r));
	return (0);
}

/* A port no egress endpoint of this sandbox uses. */
static uint16_t
gw_port(const struct sandbox_listen *l, int nl, uint16_t from)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;
	uint16_t			 p;
	int				 i;

	for (p = from; p < 65535; p++) {
		for (i = 0; i < nl; i++) {
			sin = (const struct sockaddr_in *)&l[i].addr;
			sin6 = (const struct sockaddr_in6 *)&l[i].addr;
			if ((l[i].addr.ss_family == AF_INET &&
			    ntohs(sin->sin_port) == p) ||
			    (l[i].addr.ss_family == AF_INET6 &&
			    ntohs(sin6->sin6_port) == p))
				break;
		}
		if (i == nl)
			return (p);
	}
	return (0);
}

/* NAME as an environment variable's part: upper case, '_' for others. */
static void
gw_envname(const char *name, char *dst, size_t len)
{
	size_t	 i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		dst[i] = isalnum((unsigned char)name[i]) ?
		    (char)toupper((unsigned char)name[i]) : '_';
	dst[i] = '\0';
}

static int
gw_setenv(struct gateway *gw, int *ne, const char *fmt, ...)
    __attribute__((__format__ (printf, 3, 4)));

static int
gw_setenv(struct gateway *gw, int *ne, const char *fmt, ...)
{
	va_list	 ap;
	int	 r;

	if (*ne >= GW_ENVMAX)
		return (-1);
	va_start(ap, fmt);
	r = vasprintf(&gw->envp[*ne], fmt, ap);
	va_end(ap);
	if (r == -1) {
		gw->envp[*ne] = NULL;
		return (-1);
	}
	(*ne)++;
	return (0);
}

static int
gw_endpoint(struct gateway *gw, const struct attempt *a,
    const struct conf_gw *cg, const struct sandbox_listen *l, int nl,
    uint16_t *next, int *ne)
{
	const struct conf_modelgrant	*rg;
	const struct manifest		*m = a->m;
	const struct conf_repo		*repo;
	struct gw_endpoint		*ep = &gw->ep[gw->n];
	struct gw_grant			*g = &ep->grant;
	char				 var[CONF_GW_NAMEMAX];
	size_t				 i;

	if ((repo = conf_repo(env->conf, m->repository)) == NULL ||
	    (ep->port = gw_port(l, nl, *next)) == 0)
		return (-1);
	rg = &repo->grant;
	*next = ep->port + 1;
	ep->fd = -1;
	ep->kind = cg->kind;
	memset(g, 0, sizeof(*g));
	strlcpy(g->id, a->id, sizeof(g->id));
	strlcpy(g->provider, cg->name, sizeof(g->provider));
	strlcpy(g->tenant, m->tenant, sizeof(g->tenant));
	if (gw_mint(g->token, sizeof(g->token)) == -1)
		return (-1);
	if (cg->kind == CONF_GW_UPSTREAM) {
		g->methods = cg->methods;
		gw_envname(cg->name, var, sizeof(var));
		if (gw_setenv(gw, ne, "FACTORY_UPSTREAM_%s_URL=http://"
		    "127.0.0.1:%u/", var, ep->port) == -1 ||
		    gw_setenv(gw, ne, "FACTORY_UPSTREAM_%s_TOKEN=%s", var,
		    g->token) == -1)
			return (-1);
	} else {
		g->nmodels = (uint32_t)m->model.nmodels;
		for (i = 0; i < m->model.nmodels; i++)
			strlcpy(g->models[i], m->model.models[i],
			    sizeof(g->models[i]));
		/* The ceilings again: the config may have been reloaded. */
		g->budget_tokens = gw_min(m->model.budget_tokens,
		    rg->max_tokens);
		g->budget_uusd = gw_min(m->model.budget_uusd, rg->max_uusd);
		/* What each client reads: the table of agents.c. */
		if (agents_grant(cg->kind, ep->port, g->token, &m->model,
		    gw->envp, ne, GW_ENVMAX, gw->home, &gw->nhome,
		    AGENTS_HOMEMAX) == -1)
			return (-1);
	}
	gw->n++;
	return (0);
}

/*
 * The grants of an attempt's agent run, or *out NULL when it has none.
 * l/nl are the endpoints the sandbox has already (egress): ours follow
 * them, on ports they do not use.  -1 and err if a grant cannot be
 * made (the config lost the provider since the submission).
 */
int
gateway_new(const struct attempt *a, const struct sandbox_listen *l, int nl,
    struct gateway **out, char *err, size_t errlen)
{
	const struct manifest	*m = a->m;
	const struct conf_gw	*cg;
	struct gateway		*gw;
	uint16_t		 next = GW_PORT_BASE;
	size_t			 i;
	int			 ne = 0;

	*out = NULL;
	if (m->model.provider[0] == '\0' && m->nupstreams == 0)
		return (0);
	if ((gw = calloc(1, sizeof(*gw))) == NULL) {
		snprintf(err, errlen, "gateway: %s", strerror(errno));
		return (-1);
	}
	strlcpy(gw->id, a->id, sizeof(gw->id));
	if (m->model.provider[0] != '\0') {
		if ((cg = conf_gw(env->conf, m->model.provider)) == NULL ||
		    cg->kind == CONF_GW_UPSTREAM) {
			snprintf(err, errlen, "model.provider: %s is no "
			    "longer a provider of this factoryd",
			    m->model.provider);
			goto fail;
		}
		if (gw_endpoint(gw, a, cg, l, nl, &next, &ne) == -1)
			goto bad;
	}
	for (i = 0; i < m->nupstreams; i++) {
		if ((cg = conf_gw(env->conf, m->upstreams[i])) == NULL ||
		    cg->kind != CONF_GW_UPSTREAM) {
			snprintf(err, errlen, "upstreams: %s is no longer an "
			    "upstream of this factoryd", m->upstreams[i]);
			goto fail;
		}
		if (gw_endpoint(gw, a, cg, l, nl, &next, &ne) == -1)
			goto bad;
	}
	if (nl + gw->n > SANDBOX_MAXLISTEN) {
		snprintf(err, errlen, "gateway: more than %d endpoints",
		    SANDBOX_MAXLISTEN);
		goto fail;
	}
	gw->first = nl;
	*out = gw;
	return (0);
 bad:
	snprintf(err, errlen, "gateway: cannot make the grants of %s", a->id);
 fail:
	gateway_free(gw);
	return (-1);
}

/* Our endpoints after the egress ones in l (room for SANDBOX_MAXLISTEN). */
int
gateway_listen(const struct gateway *gw, struct sandbox_listen *l, int nl)
{
	struct sockaddr_in	*sin;
	int			 i;

	if (gw == NULL)
		return (nl);
	for (i = 0; i < gw->n && nl < SANDBOX_MAXLISTEN; i++, nl++) {
		memset(&l[nl], 0, sizeof(l[nl]));
		sin = (struct sockaddr_in *)&l[nl].addr;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin->sin_port = htons(gw->ep[i].port);
		l[nl].addrlen = sizeof(*sin);
		l[nl].addlo = 0;
	}
	return (nl);
}

/* The agent's variables: base URLs and tokens, NULL-terminated. */
char * const *
gateway_env(const struct gateway *gw)
{
	static char	*none[] = { NULL };

	if (gw == NULL)
		return (none);
	return (gw->envp);
}

/* Files below the agent's HOME: pairs of name and content, or NULL. */
char * const *
gateway_home(const struct gateway *gw)
{
	return (gw == NULL || gw->nhome == 0 ? NULL : gw->home);
}

static void
gw_send(struct gateway *gw)
{
	struct gw_endpoint	*ep;
	struct ibuf		*b;
	int			 i, fd;

	for (i = 0; i < gw->n; i++) {
		ep = &gw->ep[i];
		if (ep->fd == -1)
			continue;
		ep->confirmed = 0;
		if ((b = gw_grant_compose(&ep->grant)) == NULL) {
			log_warnx("%s: gateway grant %s: cannot compose",
			    gw->id, ep->grant.provider);
			continue;
		}
		if ((fd = fcntl(ep->fd, F_DUPFD_CLOEXEC, 0)) == -1) {
			log_warn("%s: gateway grant %s", gw->id,
			    ep->grant.provider);
			ibuf_free(b);
			continue;
		}
		if (proc_compose(PROC_GATEWAY, IMSG_GW_GRANT, 0, fd,
		    ibuf_data(b), ibuf_size(b)) == -1)
			log_info("%s: model gateway not running: %s is handed "
			    "over when it starts", gw->id, ep->grant.provider);
		else
			log_info("%s: grant %s on port %u handed to "
			    "factory-gateway", gw->id, ep->grant.provider,
			    ep->port);
		/* The token is in the grant: no copy left in a buffer. */
		explicit_bzero(ibuf_data(b), ibuf_size(b));
		ibuf_free(b);
	}
}

/*
 * In a child forked from factoryd that reads what a sandbox wrote
 * (setup's store and remove helpers): every attempt's gateway token,
 * and the environment that carries it, wiped from this copy of our
 * memory, as the receipts key is, so that such a helper has none of
 * another tenant's tokens to leak.
 */
void
gateway_forget(void)
{
	struct gateway	*gw;
	int		 i;

	TAILQ_FOREACH(gw, &gateways, entry) {
		for (i = 0; i < gw->n; i++)
			explicit_bzero(gw->ep[i].grant.token,
			    sizeof(gw->ep[i].grant.token));
		for (i = 0; i < GW_ENVMAX && gw->envp[i] != NULL; i++)
			explicit_bzero(gw->envp[i], strlen(gw->envp[i]));
	}
}

/* Takes the sandbox's listening sockets of our endpoints. */
void
gateway_start(struct gateway *gw, struct sandbox *sb)
{
	int	 i, j;

	if (gw == NULL)
		return;
	for (i = 0; i < gw->n; i++) {
		j = gw->first + i;
		if (j < sb->nlfd) {
			gw->ep[i].fd = sb->lfd[j];
			sb->lfd[j] = -1;
		}
	}
	gw->started = 1;
	TAILQ_INSERT_TAIL(&gateways, gw, entry);
	gw_send(gw);
}

static void
gw_revoke(const char *id)
{
	struct ibuf	*b;

	if ((b = gw_revoke_compose(id)) == NULL)
		return;
	/* Not running: a restarted gateway knows no grant of it. */
	(void)proc_compose(PROC_GATEWAY, IMSG_GW_REVOKE, 0, -1, ibuf_data(b),
	    ibuf_size(b));
	ibuf_free(b);
}

/* At teardown, whatever happened before: the attempt's grants go. */
void
gateway_revoke(const char *id)
{
	struct gateway	*gw;

	TAILQ_FOREACH(gw, &gateways, entry)
		if (strcmp(gw->id, id) == 0)
			break;
	if (gw != NULL)
		gateway_free(gw);
	else
		gw_revoke(id);
	/* Teardown: the last counts, and the account goes. */
	gw_tally_flush(id, 1);
}

void
gateway_free(struct gateway *gw)
{
	int	 i;

	if (gw == NULL)
		return;
	if (gw->started) {
		TAILQ_REMOVE(&gateways, gw, entry);
		gw_revoke(gw->id);
		/* The agent's run ends: its counts go before "exited". */
		gw_tally_flush(gw->id, 0);
	}
	for (i = 0; i < gw->n; i++)
		if (gw->ep[i].fd != -1)
			close(gw->ep[i].fd);
	for (i = 0; i < GW_ENVMAX && gw->envp[i] != NULL; i++) {
		explicit_bzero(gw->envp[i], strlen(gw->envp[i]));
		free(gw->envp[i]);
	}
	for (i = 0; i < gw->nhome; i++)
		free(gw->home[i]);
	explicit_bzero(gw, sizeof(*gw));
	free(gw);
}

/* What factory-gateway must know of one provider or upstream. */
static int
gw_provider(const struct conf_gw *cg, struct gw_provider *p)
{
	size_t	 i;

	memset(p, 0, sizeof(*p));
	strlcpy(p->name, cg->name, sizeof(p->name));
	p->kind = cg->kind == CONF_GW_OPENAI ? GW_OPENAI :
	    cg->kind == CONF_GW_ANTHROPIC ? GW_ANTHROPIC :
	    cg->kind == CONF_GW_GEMINI ? GW_GEMINI : GW_UPSTREAM;
	if (strlcpy(p->url, cg->url, sizeof(p->url)) >= sizeof(p->url) ||
	    strlcpy(p->keyfile, cg->key, sizeof(p->keyfile)) >=
	    sizeof(p->keyfile) ||
	    strlcpy(p->cafile, cg->ca, sizeof(p->cafile)) >=
	    sizeof(p->cafile) ||
	    strlcpy(p->header, cg->header, sizeof(p->header)) >=
	    sizeof(p->header))
		return (-1);
	p->methods = cg->methods;
	p->idle_timeout_s = cg->idle_timeout;
	p->nprices = (uint32_t)cg->nprices;
	for (i = 0; i < cg->nprices; i++) {
		strlcpy(p->prices[i].model, cg->prices[i].model,
		    sizeof(p->prices[i].model));
		p->prices[i].in_uusd_per_mtok = cg->prices[i].in_uusd;
		p->prices[i].out_uusd_per_mtok = cg->prices[i].out_uusd;
		p->prices[i].max_output = cg->prices[i].max_output;
		p->prices[i].cache_read = cg->prices[i].cache_read;
		p->prices[i].cache_write = cg->prices[i].cache_write;
		p->prices[i].cache_write_1h = cg->prices[i].cache_write_1h;
		p->prices[i].long_above = cg->prices[i].long_above;
		p->prices[i].long_in = cg->prices[i].longctx.in_uusd;
		p->prices[i].long_out = cg->prices[i].longctx.out_uusd;
		p->prices[i].long_cache_read = cg->prices[i].longctx.cache_read;
		p->prices[i].long_cache_write =
		    cg->prices[i].longctx.cache_write;
		p->prices[i].long_cache_write_1h =
		    cg->prices[i].longctx.cache_write_1h;
	}
	return (0);
}

/* Every provider and upstream, then CONFIGURED: at hello and reload. */
void
gateway_configure(void)
{
	struct gw_provider	*p;
	struct ibuf		*b;
	size_t			 i;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		log_warn("gateway configure");
		return;
	}
	for (i = 0; i < env->conf->ngw; i++) {
		if (gw_provider(&env->conf->gw[i], p) == -1 ||
		    (b = gw_provider_compose(p)) == NULL) {
			log_warnx("gateway: %s: cannot compose",
			    env->conf->gw[i].name);
			continue;
		}
		(void)proc_compose(PROC_GATEWAY, IMSG_GW_PROVIDER, 0, -1,
		    ibuf_data(b), ibuf_size(b));
		ibuf_free(b);
	}
	free(p);
	(void)proc_compose(PROC_GATEWAY, IMSG_GW_CONFIGURED, 0, -1, NULL, 0);
}

/* factory-gateway (re)started: the providers, then every live grant. */
void
gateway_ready(struct child *c)
{
	struct gateway	*gw;

	gateway_configure();
	TAILQ_FOREACH(gw, &gateways, entry)
		gw_send(gw);
	report_schedule();
}

static struct gw_endpoint *
gw_find(const char *id, const char *provider, struct gateway **gwp)
{
	struct gateway	*gw;
	int		 i;

	TAILQ_FOREACH(gw, &gateways, entry) {
		if (strcmp(gw->id, id) != 0)
			continue;
		for (i = 0; i < gw->n; i++)
			if (strcmp(gw->ep[i].grant.provider, provider) == 0) {
				if (gwp != NULL)
					*gwp = gw;
				return (&gw->ep[i]);
			}
	}
	return (NULL);
}

/* Equal tokens, compared in constant time. */
static int
gw_tokeq(const char *a, const char *b)
{
	unsigned char	 d = 0;
	size_t		 i;

	for (i = 0; i < GW_TOKEN_LEN + 1; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return (d == 0);
}

/*
 * IMSG_GW_TOKEN: the gateway took a grant.  Ours are minted here; a
 * token that is not the one we sent is a gateway that cannot be
 * trusted with the grants: killed.
 */
static int
gw_token(struct imsg *imsg, char *why, size_t whylen)
{
	struct gw_token		 t;
	struct gw_endpoint	*ep;
	int			 ok;

	if (gw_token_decode(imsg, &t, why, whylen) == -1)
		return (-1);
	if ((ep = gw_find(t.id, t.provider, NULL)) == NULL) {
		/* Revoked since it was sent: nothing to confirm. */
		explicit_bzero(&t, sizeof(t));
		return (0);
	}
	ok = gw_tokeq(t.token, ep->grant.token);
	explicit_bzero(&t, sizeof(t));
	if (!ok) {
		snprintf(why, whylen, "IMSG_GW_TOKEN: %s %s: not the token "
		    "of the grant", ep->grant.id, ep->grant.provider);
		return (-1);
	}
	ep->confirmed = 1;
	return (0);
}

/* Did the manifest ask for this provider or upstream? */
static int
gw_granted(const struct manifest *m, const char *name)
{
	size_t	 i;

	if (m->model.provider[0] != '\0' &&
	    strcmp(m->model.provider, name) == 0)
		return (1);
	for (i = 0; i < m->nupstreams; i++)
		if (strcmp(m->upstreams[i], name) == 0)
			return (1);
	return (0);
}

static struct gw_acct *
gw_acct_get(const char *id)
{
	struct gw_acct	*ac;

	TAILQ_FOREACH(ac, &accts, entry)
		if (strcmp(ac->id, id) == 0)
			return (ac);
	if ((ac = calloc(1, sizeof(*ac))) == NULL)
		fatal(NULL);
	strlcpy(ac->id, id, sizeof(ac->id));
	ac->bucket_mt = GW_BILL_BURST * 1000;
	ac->bucket_ms = now_ms();
	TAILQ_INIT(&ac->tallies);
	TAILQ_INSERT_TAIL(&accts, ac, entry);
	return (ac);
}

static void
gw_acct_free(struct gw_acct *ac)
{
	struct gw_tally	*t;

	while ((t = TAILQ_FIRST(&ac->tallies)) != NULL) {
		TAILQ_REMOVE(&ac->tallies, t, entry);
		free(t);
	}
	TAILQ_REMOVE(&accts, ac, entry);
	free(ac);
}

/* Not forwarded, nothing spent: counted, never billed. */
static int
gw_refusal(const struct gw_usage *u)
{
	switch (u->outcome) {
	case GW_REFUSED_BUDGET:
	case GW_REFUSED_MODEL:
	case GW_REFUSED_TOKEN:
	case GW_REFUSED_METHOD:
	case GW_REFUSED_BUSY:
	case GW_BAD_REQUEST:
		return (u->tokens_in == 0 && u->tokens_out == 0 &&
		    u->cost_uusd == 0 && !u->estimated);
	}
	return (0);
}

/* The count u joins (made with n 0 if none yet). */
static struct gw_tally *
gw_tally_of(struct gw_acct *ac, const struct gw_usage *u, int *made)
{
	struct gw_tally	*t;
	const char	*model = gw_refusal(u) ? "-" : u->model;

	*made = 0;
	TAILQ_FOREACH(t, &ac->tallies, entry)
		if (t->outcome == u->outcome && t->estimated == u->estimated &&
		    strcmp(t->provider, u->provider) == 0 &&
		    strcmp(t->model, model) == 0)
			return (t);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		fatal(NULL);
	strlcpy(t->provider, u->provider, sizeof(t->provider));
	strlcpy(t->model, model, sizeof(t->model));
	t->outcome = u->outcome;
	t->estimated = u->estimated;
	TAILQ_INSERT_TAIL(&ac->tallies, t, entry);
	*made = 1;
	return (t);
}

/* A receipt of its own for u, or counted (gw_tally_add)? */
static int
gw_alone(struct attempt *a, const struct gw_usage *u)
{
	struct gw_acct	*ac = gw_acct_get(a->id);
	struct gw_tally	*t;
	uint64_t	 now = now_ms(), add;
	int		 made;

	if (ac->receipts >= GW_MAXRECEIPTS)
		return (0);
	if (gw_refusal(u)) {
		t = gw_tally_of(ac, u, &made);
		if (t->alone >= GW_REFUSAL_ALONE)
			return (0);
		t->alone++;
	} else {
		if (now > ac->bucket_ms) {
			add = (now - ac->bucket_ms) * GW_BILL_PER_S;
			ac->bucket_mt = ac->bucket_mt + add > GW_BILL_BURST *
			    1000 ? GW_BILL_BURST * 1000 : ac->bucket_mt + add;
			ac->bucket_ms = now;
		}
		if (ac->bucket_mt < 1000)
			return (0);
		ac->bucket_mt -= 1000;
	}
	ac->receipts++;
	return (1);
}

static void
gw_tally_cb(int fd, short ev, void *arg)
{
	struct gw_acct	*ac, *next;

	tally_armed = 0;
	for (ac = TAILQ_FIRST(&accts); ac != NULL; ac = next) {
		next = TAILQ_NEXT(ac, entry);
		gw_tally_flush(ac->id, 0);
	}
}

static void
gw_tally_add(struct attempt *a, const struct gw_usage *u)
{
	struct gw_tally	*t;
	struct timeval	 tv = { GW_TALLY_MS / 1000, 0 };
	int		 made;

	t = gw_tally_of(gw_acct_get(a->id), u, &made);
	if (t->n == 0)
		t->first_ms = u->time_ms;
	t->n++;
	t->tokens_in += u->tokens_in;
	t->tokens_out += u->tokens_out;
	t->cost_uusd += u->cost_uusd;
	t->last_ms = u->time_ms;
	t->status = u->status;
	t->seq = u->seq;
	if (!tally_armed) {
		evtimer_set(&tally_ev, gw_tally_cb, NULL);
		evtimer_add(&tally_ev, &tv);
		tally_armed = 1;
	}
}

/*
 * The counts of attempt id, each one receipt; its account is forgotten
 * at its teardown (end) or once it has ended (what comes after is only
 * logged).
 */
static void
gw_tally_flush(const char *id, int end)
{
	struct gw_acct	*ac;
	struct gw_tally	*t;
	struct attempt	*a;
	json_t		*facts;
	char		 cost[32];

	TAILQ_FOREACH(ac, &accts, entry)
		if (strcmp(ac->id, id) == 0)
			break;
	if (ac == NULL)
		return;
	a = attempt_find(id);
	TAILQ_FOREACH(t, &ac->tallies, entry) {
		if (t->n == 0)
			continue;
		log_info("%s: model %s %s: %llu requests %s, %llu in, %llu "
		    "out, %s USD%s", id, t->provider, t->model,
		    (unsigned long long)t->n, gw_outcome_name(t->outcome),
		    (unsigned long long)t->tokens_in,
		    (unsigned long long)t->tokens_out,
		    conf_usd(t->cost_uusd, cost, sizeof(cost)),
		    a == NULL || a->torn_down ? " after the attempt ended" :
		    "");
		if (a != NULL && !a->torn_down) {
			facts = json_pack("{s:s, s:I, s:I, s:I, s:s, s:I, "
			    "s:I, s:I, s:I, s:b, s:i, s:s, s:s}",
			    "provider", t->provider, "seq", (json_int_t)t->seq,
			    "time_ms", (json_int_t)t->last_ms,
			    "first_ms", (json_int_t)t->first_ms,
			    "model", t->model,
			    "requests", (json_int_t)t->n,
			    "tokens_in", (json_int_t)t->tokens_in,
			    "tokens_out", (json_int_t)t->tokens_out,
			    "cost_uusd", (json_int_t)t->cost_uusd,
			    "estimated", (int)t->estimated,
			    "status", (int)t->status,
			    "outcome", gw_outcome_name(t->outcome),
			    "tenant", a->m->tenant);
			report_note(a, "model", facts);
		}
		t->n = t->tokens_in = t->tokens_out = t->cost_uusd = 0;
	}
	if (end || a == NULL || a->torn_down)
		gw_acct_free(ac);
}

/*
 * IMSG_GW_USAGE, one per request: journaled as a "model" receipt of
 * the attempt while it is not terminated, alone or counted with
 * others (gw_alone), the spend added to the grant's (for a restarted
 * gateway) and the attempt's totals.
 */
static int
gw_usage(struct imsg *imsg, char *why, size_t whylen)
{
	struct gw_usage		 u;
	struct gw_endpoint	*ep;
	struct attempt		*a;
	json_t			*facts;
	char			 cost[32];

	if (gw_usage_decode(imsg, &u, why, whylen) == -1)
		return (-1);
	/* What no request has: totals must not wrap, nor JSON's integers. */
	if (u.tokens_in > GW_USAGE_MAX || u.tokens_out > GW_USAGE_MAX ||
	    u.cost_uusd > GW_USAGE_MAX) {
		snprintf(why, whylen, "GW_USAGE: %s %s: more than %llu tokens "
		    "or micro-dollars in one request", u.id, u.provider,
		    (unsigned long long)GW_USAGE_MAX);
		return (-1);
	}
	if ((a = attempt_find(u.id)) == NULL) {
		snprintf(why, whylen, "GW_USAGE: %s: no such attempt", u.id);
		return (-1);
	}
	/* Only what was granted to it: a lie is not charged to anyone. */
	if (!gw_granted(a->m, u.provider)) {
		snprintf(why, whylen, "GW_USAGE: %s: %s was never granted to "
		    "it", u.id, u.provider);
		return (-1);
	}
	if ((ep = gw_find(u.id, u.provider, NULL)) != NULL) {
		ep->grant.spent_tokens += u.tokens_in + u.tokens_out;
		ep->grant.spent_uusd += u.cost_uusd;
	}
	if (a->torn_down) {
		log_info("%s: gateway %s: %s after the attempt ended (status "
		    "%u)", u.id, u.provider, gw_outcome_name(u.outcome),
		    (unsigned)u.status);
		return (0);
	}
	if (!gw_alone(a, &u)) {
		gw_tally_add(a, &u);
		return (0);
	}
	log_info("%s: model %s %s: %llu in, %llu out, %s USD%s, status %u, "
	    "%s", a->id, u.provider, u.model,
	    (unsigned long long)u.tokens_in, (unsigned long long)u.tokens_out,
	    conf_usd(u.cost_uusd, cost, sizeof(cost)), u.estimated ?
	    " (estimated: no usage from the provider)" : "",
	    (unsigned)u.status, gw_outcome_name(u.outcome));
	facts = json_pack("{s:s, s:I, s:I, s:s, s:I, s:I, s:I, s:b, s:i, "
	    "s:s, s:s}", "provider", u.provider, "seq", (json_int_t)u.seq,
	    "time_ms", (json_int_t)u.time_ms, "model", u.model,
	    "tokens_in", (json_int_t)u.tokens_in,
	    "tokens_out", (json_int_t)u.tokens_out,
	    "cost_uusd", (json_int_t)u.cost_uusd, "estimated",
	    (int)u.estimated, "status", (int)u.status,
	    "outcome", gw_outcome_name(u.outcome), "tenant", a->m->tenant);
	/* A refusal or a cut names what was asked and why. */
	if (facts != NULL && u.reason[0] != '\0') {
		log_info("%s: model %s: %s %s: %s", a->id, u.provider,
		    u.method[0] != '\0' ? u.method : "-",
		    u.path[0] != '\0' ? u.path : "-", u.reason);
		json_object_set_new(facts, "method", json_string(
		    u.method[0] != '\0' ? u.method : "-"));
		json_object_set_new(facts, "path", json_string(
		    u.path[0] != '\0' ? u.path : "-"));
		json_object_set_new(facts, "reason", json_string(u.reason));
	}
	report_note(a, "model", facts);
	return (0);
}

static int
gw_error(struct imsg *imsg, char *why, size_t whylen)
{
	char	 reason[GW_ERRMAX];

	if (gw_error_decode(imsg, reason, sizeof(reason), why, whylen) == -1)
		return (-1);
	log_warnx("factory-gateway: %s", reason);
	return (0);
}

int
dispatch_gateway(struct child *c, struct imsg *imsg, char *why,
    size_t whylen)
{
	switch (imsg_get_type(imsg)) {
	case IMSG_GW_TOKEN:
		return (gw_token(imsg, why, whylen));
	case IMSG_GW_USAGE:
		return (gw_usage(imsg, why, whylen));
	case IMSG_GW_ERROR:
		return (gw_error(imsg, why, whylen));
	default:
		snprintf(why, whylen, "unexpected message type %u",
		    imsg_get_type(imsg));
		return (-1);
	}
}

/*
 * The descriptors the gateway's grants may hold here: a copy of each
 * endpoint's listening socket.
 */
int
gateway_nofile(void)
{
	return (1 + CONF_GW_GRANTS);
}
