/*
 * The parent <-> factory-gateway messages (gwmsg.h): fixed-size
 * structs, taken by exact size and then checked field by field, so a
 * decoded struct holds only what a correct peer can have meant.
 * Strings must end inside their field and be followed by zeroes only
 * (one spelling per value, nothing smuggled after the NUL).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egressmsg.h"
#include "esc.h"
#include "gwmsg.h"

/* NUL inside the field and zeroes after it. */
static int
gw_strfield(const char *s, size_t size)
{
	const char	*nul;

	if ((nul = memchr(s, '\0', size)) == NULL)
		return (0);
	for (nul++; nul < s + size; nul++)
		if (*nul != '\0')
			return (0);
	return (1);
}

/* Lower case letters, digits, '-', '_', '.'; 1..63 bytes. */
int
gw_valid_name(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n == 0 || n >= GW_NAMEMAX || s[0] == '.' || s[0] == '-')
		return (0);
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		    s[i] == '_' || s[i] == '.'))
			return (0);
	return (1);
}

/* "fgw-" and 64 lower-case hex digits. */
int
gw_valid_token(const char *s)
{
	size_t	 i, n = strlen(GW_TOKEN_PREFIX);

	if (strlen(s) != GW_TOKEN_LEN || strncmp(s, GW_TOKEN_PREFIX, n) != 0)
		return (0);
	for (i = n; i < GW_TOKEN_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (1);
}

/*
 * A model of a grant or a price table: printable ASCII without space,
 * '"' or '\', so it is its own escaping and its own JSON string.
 */
int
gw_valid_model(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n == 0 || n >= GW_MODELMAX)
		return (0);
	for (i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '"' ||
		    s[i] == '\\')
			return (0);
	return (1);
}

const char *
gw_outcome_name(uint32_t o)
{
	static const char *names[GW_OUTCOME_MAX] = {
		[GW_OK] = "ok",
		[GW_CUT_BUDGET] = "cut-budget",
		[GW_REFUSED_BUDGET] = "refused-budget",
		[GW_REFUSED_MODEL] = "refused-model",
		[GW_REFUSED_TOKEN] = "refused-token",
		[GW_REFUSED_METHOD] = "refused-method",
		[GW_BAD_REQUEST] = "bad-request",
		[GW_UPSTREAM_ERROR] = "upstream-error",
		[GW_CUT_STALLED] = "cut-stalled",
		[GW_REFUSED_BUSY] = "refused-busy",
	};

	if (o >= GW_OUTCOME_MAX)
		return (NULL);
	return (names[o]);
}

const char *
gw_kind_name(uint8_t k)
{
	switch (k) {
	case GW_OPENAI:
		return ("openai");
	case GW_ANTHROPIC:
		return ("anthropic");
	case GW_UPSTREAM:
		return ("upstream");
	case GW_GEMINI:
		return ("gemini");
	}
	return (NULL);
}

/* Printable, no space or control byte: one URL, one path, one line. */
static int
gw_valid_visible(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s <= 0x20 || *s >= 0x7f)
			return (0);
	return (1);
}

/* "https://" and a host, nothing to break a request line or a log. */
static int
gw_valid_url(const char *s)
{
	return (strncmp(s, "https://", 8) == 0 && s[8] != '\0' &&
	    s[8] != '/' && gw_valid_visible(s));
}

static int
gw_valid_path(const char *s)
{
	return (s[0] == '/' && gw_valid_visible(s));
}

/* "Name" or "Name: prefix": a token, then one space-free prefix. */
static int
gw_valid_header(const char *s)
{
	size_t	 i, n = strcspn(s, ":");

	if (n == 0)
		return (0);
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return (0);
	if (s[n] == '\0')
		return (1);
	if (s[n + 1] != ' ' || s[n + 2] == '\0')
		return (0);
	return (gw_valid_visible(s + n + 2));
}

static int
gw_zero(const void *p, size_t len)
{
	const unsigned char	*c = p;
	size_t			 i;

	for (i = 0; i < len; i++)
		if (c[i] != 0)
			return (0);
	return (1);
}

static const char *
gw_provider_check(const struct gw_provider *p)
{
	uint32_t	 i;

	if (!gw_strfield(p->name, sizeof(p->name)) || !gw_valid_name(p->name))
		return ("name");
	if (gw_kind_name(p->kind) == NULL)
		return ("kind");
	if (!gw_strfield(p->url, sizeof(p->url)) || !gw_valid_url(p->url))
		return ("url");
	if (!gw_strfield(p->keyfile, sizeof(p->keyfile)) ||
	    !gw_valid_path(p->keyfile))
		return ("keyfile");
	if (!gw_strfield(p->cafile, sizeof(p->cafile)) ||
	    !gw_valid_path(p->cafile))
		return ("cafile");
	if (!gw_strfield(p->header, sizeof(p->header)) ||
	    (p->kind == GW_UPSTREAM) != (p->header[0] != '\0') ||
	    (p->header[0] != '\0' && !gw_valid_header(p->header)))
		return ("header");
	if ((p->methods & ~GW_M_ALL) != 0 ||
	    (p->kind == GW_UPSTREAM && p->methods == 0))
		return ("methods");
	if (p->nprices > GW_MAXPRICES ||
	    (p->kind == GW_UPSTREAM && p->nprices != 0))
		return ("nprices");
	for (i = 0; i < GW_MAXPRICES; i++) {
		if (i >= p->nprices) {
			if (!gw_zero(&p->prices[i], sizeof(p->prices[i])))
				return ("prices");
			continue;
		}
		if (!gw_strfield(p->prices[i].model,
		    sizeof(p->prices[i].model)) ||
		    !gw_valid_model(p->prices[i].model))
			return ("prices.model");
		if (p->prices[i].max_output > GW_MAXOUT_MAX)
			return ("prices.max_output");
	}
	if (p->idle_timeout_s > GW_IDLE_MAX)
		return ("idle_timeout_s");
	return (NULL);
}

static const char *
gw_grant_check(const struct gw_grant *g)
{
	uint32_t	 i;

	if (!gw_strfield(g->id, sizeof(g->id)) || !egress_valid_id(g->id))
		return ("id");
	if (!gw_strfield(g->provider, sizeof(g->provider)) ||
	    !gw_valid_name(g->provider))
		return ("provider");
	if (!gw_strfield(g->token, sizeof(g->token)) ||
	    (g->token[0] != '\0' && !gw_valid_token(g->token)))
		return ("token");
	if (g->nmodels > GW_MAXMODELS)
		return ("nmodels");
	for (i = 0; i < GW_MAXMODELS; i++) {
		if (i >= g->nmodels) {
			if (!gw_zero(g->models[i], sizeof(g->models[i])))
				return ("models");
			continue;
		}
		if (!gw_strfield(g->models[i], sizeof(g->models[i])) ||
		    !gw_valid_model(g->models[i]))
			return ("models");
	}
	if ((g->methods & ~GW_M_ALL) != 0)
		return ("methods");
	if (!gw_strfield(g->tenant, sizeof(g->tenant)) ||
	    (g->tenant[0] != '\0' && !gw_valid_name(g->tenant)))
		return ("tenant");
	return (NULL);
}

static const char *
gw_token_check(const struct gw_token *t)
{
	if (!gw_strfield(t->id, sizeof(t->id)) || !egress_valid_id(t->id))
		return ("id");
	if (!gw_strfield(t->provider, sizeof(t->provider)) ||
	    !gw_valid_name(t->provider))
		return ("provider");
	if (!gw_strfield(t->token, sizeof(t->token)) ||
	    !gw_valid_token(t->token))
		return ("token");
	return (NULL);
}

static const char *
gw_usage_check(const struct gw_usage *u)
{
	if (!gw_strfield(u->id, sizeof(u->id)) || !egress_valid_id(u->id))
		return ("id");
	if (!gw_strfield(u->provider, sizeof(u->provider)) ||
	    !gw_valid_name(u->provider))
		return ("provider");
	if (u->seq == 0)
		return ("seq");
	if (!gw_strfield(u->model, sizeof(u->model)) ||
	    !esc_valid(u->model))
		return ("model");
	if (u->status < 100 || u->status > 599)
		return ("status");
	if (u->outcome >= GW_OUTCOME_MAX)
		return ("outcome");
	if (u->estimated > 1)
		return ("estimated");
	if (!gw_strfield(u->method, sizeof(u->method)) ||
	    strspn(u->method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") !=
	    strlen(u->method))
		return ("method");
	if (!gw_strfield(u->path, sizeof(u->path)) || !esc_valid(u->path) ||
	    (u->path[0] != '\0' && u->path[0] != '/'))
		return ("path");
	if (!gw_strfield(u->reason, sizeof(u->reason)) ||
	    !esc_valid(u->reason))
		return ("reason");
	return (NULL);
}

static struct ibuf *
gw_compose(const void *p, size_t len, const char *bad)
{
	struct ibuf	*b;

	if (bad != NULL || (b = ibuf_open(len)) == NULL)
		return (NULL);
	if (ibuf_add(b, p, len) == -1) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

struct ibuf *
gw_provider_compose(const struct gw_provider *p)
{
	return (gw_compose(p, sizeof(*p), gw_provider_check(p)));
}

struct ibuf *
gw_grant_compose(const struct gw_grant *g)
{
	return (gw_compose(g, sizeof(*g), gw_grant_check(g)));
}

struct ibuf *
gw_token_compose(const struct gw_token *t)
{
	return (gw_compose(t, sizeof(*t), gw_token_check(t)));
}

struct ibuf *
gw_usage_compose(const struct gw_usage *u)
{
	return (gw_compose(u, sizeof(*u), gw_usage_check(u)));
}

struct ibuf *
gw_revoke_compose(const char *id)
{
	char	 buf[ATTEMPT_ID_MAX];

	memset(buf, 0, sizeof(buf));
	if (strlcpy(buf, id, sizeof(buf)) >= sizeof(buf))
		return (NULL);
	return (gw_compose(buf, sizeof(buf),
	    egress_valid_id(buf) ? NULL : "id"));
}

struct ibuf *
gw_error_compose(const char *reason)
{
	char	 buf[GW_ERRMAX];
	size_t	 n = strlen(reason);

	/* Cut until the encoding fits: at most ESC_MAXEXPAND per byte. */
	if (esc_len(reason, n) >= sizeof(buf))
		n = (sizeof(buf) - 1) / ESC_MAXEXPAND;
	if (esc_encode(reason, n, buf, sizeof(buf)) == -1)
		return (NULL);
	return (gw_compose(buf, strlen(buf) + 1, NULL));
}

/* Exactly one struct, then the field checks. */
static int
gw_decode(struct imsg *imsg, void *p, size_t len, const char *what,
    const char *(*check)(const void *), char *err, size_t errlen)
{
	const char	*bad;

	if (imsg_get_data(imsg, p, len) == -1) {
		snprintf(err, errlen, "%s: %zu bytes, expected %zu", what,
		    imsg_get_len(imsg), len);
		return (-1);
	}
	if ((bad = check(p)) != NULL) {
		snprintf(err, errlen, "%s: bad %s", what, bad);
		return (-1);
	}
	return (0);
}

static const char *
gw_provider_check_v(const void *p)
{
	return (gw_provider_check(p));
}

static const char *
gw_grant_check_v(const void *p)
{
	return (gw_grant_check(p));
}

static const char *
gw_token_check_v(const void *p)
{
	return (gw_token_check(p));
}

static const char *
gw_usage_check_v(const void *p)
{
	return (gw_usage_check(p));
}

int
gw_provider_decode(struct imsg *imsg, struct gw_provider *p, char *err,
    size_t errlen)
{
	return (gw_decode(imsg, p, sizeof(*p), "GW_PROVIDER",
	    gw_provider_check_v, err, errlen));
}

int
gw_grant_decode(struct imsg *imsg, struct gw_grant *g, char *err,
    size_t errlen)
{
	return (gw_decode(imsg, g, sizeof(*g), "GW_GRANT", gw_grant_check_v,
	    err, errlen));
}

int
gw_token_decode(struct imsg *imsg, struct gw_token *t, char *err,
    size_t errlen)
{
	return (gw_decode(imsg, t, sizeof(*t), "GW_TOKEN", gw_token_check_v,
	    err, errlen));
}

int
gw_usage_decode(struct imsg *imsg, struct gw_usage *u, char *err,
    size_t errlen)
{
	return (gw_decode(imsg, u, sizeof(*u), "GW_USAGE", gw_usage_check_v,
	    err, errlen));
}

int
gw_revoke_decode(struct imsg *imsg, char *id, size_t idlen, char *err,
    size_t errlen)
{
	char	 buf[ATTEMPT_ID_MAX];

	if (imsg_get_data(imsg, buf, sizeof(buf)) == -1 ||
	    !gw_strfield(buf, sizeof(buf)) || !egress_valid_id(buf) ||
	    strlcpy(id, buf, idlen) >= idlen) {
		snprintf(err, errlen, "GW_REVOKE: bad attempt id");
		return (-1);
	}
	return (0);
}

int
gw_error_decode(struct imsg *imsg, char *reason, size_t len, char *err,
    size_t errlen)
{
	size_t	 n = imsg_get_len(imsg);

	if (n == 0 || n > GW_ERRMAX || n > len ||
	    imsg_get_strbuf(imsg, reason, len) == -1 ||
	    strlen(reason) + 1 != n || !esc_valid(reason)) {
		snprintf(err, errlen, "GW_ERROR: bad reason (%zu bytes)", n);
		return (-1);
	}
	return (0);
}

int
gw_configured_decode(struct imsg *imsg, char *err, size_t errlen)
{
	if (imsg_get_len(imsg) != 0) {
		snprintf(err, errlen, "GW_CONFIGURED: %zu bytes, expected 0",
		    imsg_get_len(imsg));
		return (-1);
	}
	return (0);
}

int
gw_url_split(const char *url, char *host, size_t hostlen, uint16_t *port,
    char *prefix, size_t prefixlen)
{
	const char	*h, *e, *errstr;
	char		 num[8];
	size_t		 n;

	if (strncmp(url, "https://", 8) != 0 || strpbrk(url, "?#") != NULL)
		return (-1);
	h = url + 8;
	n = strcspn(h, ":/");
	if (n == 0 || n >= hostlen)
		return (-1);
	memcpy(host, h, n);
	host[n] = '\0';
	if (strspn(host, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != n)
		return (-1);
	e = h + n;
	*port = 443;
	if (*e == ':') {
		n = strcspn(++e, "/");
		if (n == 0 || n >= sizeof(num))
			return (-1);
		memcpy(num, e, n);
		num[n] = '\0';
		*port = strtonum(num, 1, 65535, &errstr);
		if (errstr != NULL)
			return (-1);
		e += n;
	}
	if (*e != '\0' && *e != '/')
		return (-1);
	if (strlcpy(prefix, e, prefixlen) >= prefixlen)
		return (-1);
	n = strlen(prefix);
	while (n > 0 && prefix[n - 1] == '/')
		prefix[--n] = '\0';
	return (0);
}
