/*
 * A stand-in for factoryd's side of factory-gateway's channel, so the
 * real gateway runs under its real policy and is driven line by line.
 *
 *	prog_gwparent uid binary [arg ...]
 *
 * Starts binary as uid (no groups) with its end of a socketpair on fd
 * 3 and reads commands on stdin, one a line, words "key=value":
 *
 *	provider name= kind=openai|anthropic|gemini|upstream url= key= ca=
 *	    [header=Name:prefix] [methods=GET,POST] [idle=SECONDS]
 *	    [price=MODEL:IN:OUT[:MAXOUT] [cache=CR:CW:CW1H]
 *	    [long=ABOVE:IN:OUT]]...
 *	configured
 *	grant id= provider= port= [models=a,b] [methods=GET,HEAD]
 *	    [budget_tokens=] [budget_uusd=] [token=] [tenant=]
 *	revoke ID
 *	restart		kill the gateway, start it again, send the
 *			providers and the grants again (same listening
 *			sockets, the tokens and the spend so far), as the
 *			parent does
 *	badgrant	a grant whose count is out of range: the
 *			gateway must die of it
 *	quit
 *
 * and prints, one a line: "hello", "configured-sent", "granted ID
 * PORT" (port= 0 or absent: any), "token ID PROVIDER TOKEN", "refusal
 * ID PROVIDER METHOD PATH REASON" (before the usage line of a request
 * refused or cut), "usage ID PROVIDER seq= model= in= out= cost=
 * status= outcome=", "error REASON", "exit N" or "signal N".
 * Everything from the gateway is decoded by libcommon/gwmsg.c, as
 * the parent decodes it; a message that does not decode is printed as
 * "baddecode REASON".
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "gwmsg.h"
#include "imsg.h"

#define MAXGRANTS	64
#define MAXPROVS	16

static struct gw_provider provs[MAXPROVS];
static int		 nprovs;
static struct gw_grant	 grants[MAXGRANTS];
static int		 grantfd[MAXGRANTS];
static int		 ngrants;
static struct imsgbuf	 ib;
static pid_t		 child = -1;
static int		 chfd = -1;
static char		**cargv;

static void
out(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
spawn(void)
{
	extern char	**environ;
	uid_t		 uid = strtoul(cargv[0], NULL, 10);
	int		 sv[2], bin;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		err(1, "socketpair");
	switch (child = fork()) {
	case -1:
		err(1, "fork");
	case 0:
		if (dup2(sv[1], PROC_PARENT_FD) == -1)
			err(1, "dup2");
		if ((bin = open(cargv[1], O_PATH | O_CLOEXEC)) == -1)
			err(1, "%s", cargv[1]);
		if (setgroups(0, NULL) == -1 ||
		    setresgid(uid, uid, uid) == -1 ||
		    setresuid(uid, uid, uid) == -1)
			err(1, "drop to uid %u", (unsigned)uid);
		fexecve(bin, cargv + 1, environ);
		err(1, "%s", cargv[1]);
	}
	close(sv[1]);
	chfd = sv[0];
	if (imsgbuf_init(&ib, chfd) == -1 ||
	    imsgbuf_set_maxsize(&ib, FACTORY_MAXIMSG) == -1)
		err(1, "imsgbuf_init");
}

static void
reap(void)
{
	int	 status;

	if (child == -1)
		return;
	if (waitpid(child, &status, 0) == -1)
		err(1, "waitpid");
	if (WIFSIGNALED(status))
		out("signal %d", WTERMSIG(status));
	else
		out("exit %d", WEXITSTATUS(status));
	child = -1;
	imsgbuf_clear(&ib);
	close(chfd);
	chfd = -1;
}

static void
send_ibuf(uint32_t type, struct ibuf *b, int fd)
{
	if (b == NULL)
		errx(1, "compose refused the message");
	if (imsg_compose(&ib, type, 0, 0, fd, ibuf_data(b), ibuf_size(b)) ==
	    -1 || imsgbuf_flush(&ib) == -1)
		warn("send to the gateway");
	ibuf_free(b);
}

static uint32_t
methods(const char *v)
{
	static const struct { const char *n; uint32_t bit; } m[] = {
		{ "GET", GW_M_GET }, { "HEAD", GW_M_HEAD },
		{ "POST", GW_M_POST }, { "PUT", GW_M_PUT },
		{ "PATCH", GW_M_PATCH }, { "DELETE", GW_M_DELETE },
	};
	char		 buf[128], *s, *w;
	uint32_t	 r = 0;
	size_t		 i;

	strlcpy(buf, v, sizeof(buf));
	for (s = buf; (w = strsep(&s, ",")) != NULL; )
		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			if (strcmp(w, m[i].n) == 0)
				r |= m[i].bit;
	return (r);
}

static void
price_unset(struct gw_price *e)
{
	e->cache_read = e->cache_write = e->cache_write_1h = GW_PRICE_UNSET;
	e->long_cache_read = e->long_cache_write = e->long_cache_write_1h =
	    GW_PRICE_UNSET;
}

/*
 * The last price's "cache=CR:CW:CW1H" (each a number or "-": unset) or
 * "long=ABOVE:IN:OUT".
 */
static void
price_more(struct gw_price *e, const char *what, char *v)
{
	uint64_t	*cache[] = { &e->cache_read, &e->cache_write,
			    &e->cache_write_1h };
	uint64_t	*lng[] = { &e->long_above, &e->long_in, &e->long_out };
	uint64_t	**dst = strcmp(what, "cache") == 0 ? cache : lng;
	char		*f;
	int		 i;

	for (i = 0; i < 3 && (f = strsep(&v, ":")) != NULL; i++)
		*dst[i] = strcmp(f, "-") == 0 ? GW_PRICE_UNSET :
		    strtoull(f, NULL, 10);
}

static void
cmd_provider(char *args)
{
	struct gw_provider	*p;
	char			*w, *v, *c1, *c2;

	if (nprovs >= MAXPROVS)
		errx(1, "too many providers");
	p = &provs[nprovs++];
	memset(p, 0, sizeof(*p));
	while ((w = strsep(&args, " ")) != NULL) {
		if ((v = strchr(w, '=')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(w, "name") == 0)
			strlcpy(p->name, v, sizeof(p->name));
		else if (strcmp(w, "kind") == 0)
			p->kind = strcmp(v, "openai") == 0 ? GW_OPENAI :
			    strcmp(v, "anthropic") == 0 ? GW_ANTHROPIC :
			    strcmp(v, "gemini") == 0 ? GW_GEMINI :
			    strcmp(v, "upstream") == 0 ? GW_UPSTREAM : 9;
		else if (strcmp(w, "url") == 0)
			strlcpy(p->url, v, sizeof(p->url));
		else if (strcmp(w, "key") == 0)
			strlcpy(p->keyfile, v, sizeof(p->keyfile));
		else if (strcmp(w, "ca") == 0)
			strlcpy(p->cafile, v, sizeof(p->cafile));
		else if (strcmp(w, "header") == 0) {
			/* "Name:prefix" on the command line */
			if ((c1 = strchr(v, ':')) != NULL) {
				*c1++ = '\0';
				snprintf(p->header, sizeof(p->header), "%s: %s",
				    v, c1);
			} else
				strlcpy(p->header, v, sizeof(p->header));
		} else if (strcmp(w, "methods") == 0)
			p->methods = methods(v);
		else if (strcmp(w, "idle") == 0)
			p->idle_timeout_s = strtoul(v, NULL, 10);
		else if (strcmp(w, "price") == 0 &&
		    p->nprices < GW_MAXPRICES &&
		    (c1 = strchr(v, ':')) != NULL &&
		    (c2 = strchr(c1 + 1, ':')) != NULL) {
			*c1++ = '\0';
			*c2++ = '\0';
			strlcpy(p->prices[p->nprices].model, v,
			    sizeof(p->prices[0].model));
			p->prices[p->nprices].in_uusd_per_mtok =
			    strtoull(c1, NULL, 10);
			p->prices[p->nprices].out_uusd_per_mtok =
			    strtoull(c2, NULL, 10);
			if ((c1 = strchr(c2, ':')) != NULL)
				p->prices[p->nprices].max_output =
				    strtoull(c1 + 1, NULL, 10);
			price_unset(&p->prices[p->nprices]);
			p->nprices++;
		} else if ((strcmp(w, "cache") == 0 ||
		    strcmp(w, "long") == 0) && p->nprices > 0)
			price_more(&p->prices[p->nprices - 1], w, v);
	}
	send_ibuf(IMSG_GW_PROVIDER, gw_provider_compose(p), -1);
}

static void
cmd_configured(void)
{
	if (imsg_compose(&ib, IMSG_GW_CONFIGURED, 0, 0, -1, NULL, 0) == -1 ||
	    imsgbuf_flush(&ib) == -1)
		warn("send to the gateway");
	out("configured-sent");
}

static int
listener(int port)
{
	struct sockaddr_in	 sin;
	int			 fd, on = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "bind 127.0.0.1:%d", port);
	if (listen(fd, 16) == -1)
		err(1, "listen");
	return (fd);
}

static void
send_grant(int i)
{
	int	 fd;

	/* The gateway gets its own copy; ours outlives a restart. */
	if ((fd = dup(grantfd[i])) == -1)
		err(1, "dup");
	send_ibuf(IMSG_GW_GRANT, gw_grant_compose(&grants[i]), fd);
	close(fd);
}

static void
cmd_grant(char *args)
{
	struct gw_grant	*g;
	struct sockaddr_in sin;
	socklen_t	 slen;
	char		*w, *v, *s, *m;
	int		 port = 0;

	if (ngrants >= MAXGRANTS)
		errx(1, "too many grants");
	g = &grants[ngrants];
	memset(g, 0, sizeof(*g));
	while ((w = strsep(&args, " ")) != NULL) {
		if ((v = strchr(w, '=')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(w, "id") == 0)
			strlcpy(g->id, v, sizeof(g->id));
		else if (strcmp(w, "provider") == 0)
			strlcpy(g->provider, v, sizeof(g->provider));
		else if (strcmp(w, "port") == 0)
			port = atoi(v);
		else if (strcmp(w, "models") == 0)
			for (s = v; (m = strsep(&s, ",")) != NULL &&
			    g->nmodels < GW_MAXMODELS; )
				strlcpy(g->models[g->nmodels++], m,
				    sizeof(g->models[0]));
		else if (strcmp(w, "methods") == 0)
			g->methods = methods(v);
		else if (strcmp(w, "budget_tokens") == 0)
			g->budget_tokens = strtoull(v, NULL, 10);
		else if (strcmp(w, "budget_uusd") == 0)
			g->budget_uusd = strtoull(v, NULL, 10);
		else if (strcmp(w, "token") == 0)
			strlcpy(g->token, v, sizeof(g->token));
		else if (strcmp(w, "tenant") == 0)
			strlcpy(g->tenant, v, sizeof(g->tenant));
	}
	grantfd[ngrants] = listener(port);
	slen = sizeof(sin);
	if (getsockname(grantfd[ngrants], (struct sockaddr *)&sin,
	    &slen) == -1)
		err(1, "getsockname");
	send_grant(ngrants);
	ngrants++;
	out("granted %s %u", g->id, (unsigned)ntohs(sin.sin_port));
}

static void
cmd_revoke(const char *id)
{
	int	 i, j;

	send_ibuf(IMSG_GW_REVOKE, gw_revoke_compose(id), -1);
	for (i = 0; i < ngrants; ) {
		if (strcmp(grants[i].id, id) != 0) {
			i++;
			continue;
		}
		close(grantfd[i]);
		for (j = i; j + 1 < ngrants; j++) {
			grants[j] = grants[j + 1];
			grantfd[j] = grantfd[j + 1];
		}
		ngrants--;
	}
}

static void
cmd_badgrant(void)
{
	struct gw_grant	 g;
	int		 fd;

	memset(&g, 0, sizeof(g));
	strlcpy(g.id, "a-bad", sizeof(g.id));
	strlcpy(g.provider, "none", sizeof(g.provider));
	g.nmodels = GW_MAXMODELS + 1;
	fd = listener(0);
	/* Around the composer, which would refuse it. */
	if (imsg_compose(&ib, IMSG_GW_GRANT, 0, 0, fd, &g, sizeof(g)) == -1 ||
	    imsgbuf_flush(&ib) == -1)
		warn("send to the gateway");
	close(fd);
}

static void
cmd_restart(void)
{
	int	 i;

	if (child != -1) {
		kill(child, SIGKILL);
		reap();
	}
	spawn();
	for (i = 0; i < nprovs; i++)
		send_ibuf(IMSG_GW_PROVIDER, gw_provider_compose(&provs[i]),
		    -1);
	if (imsg_compose(&ib, IMSG_GW_CONFIGURED, 0, 0, -1, NULL, 0) == -1)
		warn("compose");
	for (i = 0; i < ngrants; i++)
		send_grant(i);
	out("restarted");
}

/* What the parent keeps of a usage: the spend, for a restart. */
static void
account(const struct gw_usage *u)
{
	int	 i;

	for (i = 0; i < ngrants; i++)
		if (strcmp(grants[i].id, u->id) == 0 &&
		    strcmp(grants[i].provider, u->provider) == 0) {
			grants[i].spent_tokens += u->tokens_in + u->tokens_out;
			grants[i].spent_uusd += u->cost_uusd;
		}
}

static void
remember_token(const struct gw_token *t)
{
	int	 i;

	for (i = 0; i < ngrants; i++)
		if (strcmp(grants[i].id, t->id) == 0 &&
		    strcmp(grants[i].provider, t->provider) == 0)
			memcpy(grants[i].token, t->token,
			    sizeof(grants[i].token));
}

static void
from_child(struct imsg *imsg)
{
	struct gw_token	 t;
	struct gw_usage	 u;
	char		 err[256], reason[GW_ERRMAX];

	switch (imsg_get_type(imsg)) {
	case IMSG_HELLO:
		out("hello");
		return;
	case IMSG_GW_TOKEN:
		if (gw_token_decode(imsg, &t, err, sizeof(err)) == -1) {
			out("baddecode %s", err);
			return;
		}
		remember_token(&t);
		out("token %s %s %s", t.id, t.provider, t.token);
		return;
	case IMSG_GW_USAGE:
		if (gw_usage_decode(imsg, &u, err, sizeof(err)) == -1) {
			out("baddecode %s", err);
			return;
		}
		account(&u);
		/* before its usage line: a test waits for that one */
		if (u.reason[0] != '\0')
			out("refusal %s %s %s %s %s", u.id, u.provider,
			    u.method[0] ? u.method : "-",
			    u.path[0] ? u.path : "-", u.reason);
		out("usage %s %s seq=%llu model=%s in=%llu out=%llu cost=%llu "
		    "status=%u outcome=%s%s", u.id, u.provider,
		    (unsigned long long)u.seq, u.model[0] ? u.model : "-",
		    (unsigned long long)u.tokens_in,
		    (unsigned long long)u.tokens_out,
		    (unsigned long long)u.cost_uusd, (unsigned)u.status,
		    gw_outcome_name(u.outcome), u.estimated ? " estimated" : "");
		return;
	case IMSG_GW_ERROR:
		if (gw_error_decode(imsg, reason, sizeof(reason), err,
		    sizeof(err)) == -1) {
			out("baddecode %s", err);
			return;
		}
		out("error %s", reason);
		return;
	}
	out("baddecode type %u", imsg_get_type(imsg));
}

static void
command(char *line)
{
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "provider ", 9) == 0)
		cmd_provider(line + 9);
	else if (strcmp(line, "configured") == 0)
		cmd_configured();
	else if (strncmp(line, "grant ", 6) == 0)
		cmd_grant(line + 6);
	else if (strncmp(line, "revoke ", 7) == 0)
		cmd_revoke(line + 7);
	else if (strcmp(line, "restart") == 0)
		cmd_restart();
	else if (strcmp(line, "badgrant") == 0)
		cmd_badgrant();
	else if (strcmp(line, "quit") == 0) {
		if (child != -1) {
			imsgbuf_clear(&ib);
			close(chfd);
			chfd = -1;
			kill(child, SIGTERM);
			reap();
		}
		exit(0);
	} else if (line[0] != '\0')
		out("unknown command: %s", line);
}

/* Every whole line read so far (stdio would hide the rest from poll). */
static void
input(char *buf, size_t size, size_t *have)
{
	ssize_t	 n;
	char	*nl;
	size_t	 len;

	if ((n = read(STDIN_FILENO, buf + *have, size - 1 - *have)) <= 0) {
		command(strcpy(buf, "quit"));
		return;
	}
	*have += (size_t)n;
	buf[*have] = '\0';
	while ((nl = strchr(buf, '\n')) != NULL) {
		*nl = '\0';
		len = (size_t)(nl - buf) + 1;
		command(buf);
		memmove(buf, buf + len, *have - len + 1);
		*have -= len;
	}
	if (*have == size - 1)
		errx(1, "command line too long");
}

int
main(int argc, char *argv[])
{
	struct pollfd	 pfd[2];
	struct imsg	 imsg;
	char		 line[4096];
	size_t		 have = 0;
	int		 n;

	if (argc < 3)
		errx(2, "usage: prog_gwparent uid binary [arg ...]");
	signal(SIGPIPE, SIG_IGN);
	cargv = argv + 1;
	spawn();
	for (;;) {
		pfd[0].fd = STDIN_FILENO;
		pfd[0].events = POLLIN;
		pfd[1].fd = chfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		if (pfd[1].revents & (POLLIN | POLLHUP)) {
			if (imsgbuf_read(&ib) != 1) {
				reap();
				/* stays down until "restart" */
				pfd[1].fd = -1;
			} else
				while ((n = imsgbuf_get(&ib, &imsg)) == 1) {
					from_child(&imsg);
					imsg_free(&imsg);
				}
		}
		if (pfd[0].revents & (POLLIN | POLLHUP))
			input(line, sizeof(line), &have);
	}
}
