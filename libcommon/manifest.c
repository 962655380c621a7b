/*
 * factory-manifest(5): what a submitter asks for.  The parent parses
 * the bytes it received; the repository name is checked against the
 * configuration by the caller, everything else here.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "crypto.h"
#include "log.h"
#include "util.h"
#include "yaml.h"

#define MANIFEST_MAXSIZE	(64 * 1024)	/* what one imsg carries */
#define TITLE_MAXCHARS		200
#define PIDS_MAX		4194304		/* the kernel's top pid_max */

const struct manifest_limits manifest_default_limits = {
	.wall_ms = 10 * 60 * 1000,
	.cpu_ms = 5 * 60 * 1000,
	.memory = 1024ULL * 1024 * 1024,
	.pids = 256,
	.tree = 1024ULL * 1024 * 1024,
	.log = 8 * 1024 * 1024
};

static const char * const manifest_keys[] = {
	"repository", "baseline", "scope", "agent", "validate", "env",
	"limits", "network", "exec", "title", "approval", "environment", "setup",
	"services", "preview", "model", "upstreams", "tenant", "cohort", NULL
};
/* What a cohort's variant may change: everything else is frozen. */
static const char * const cohort_keys[] = { "size", "variants", NULL };
static const char * const variant_keys[] = { "env", "model", NULL };

static int	m_netallow(struct yerr *, const struct ynode *, char ***);

#define IMAGE_NAMEMAX	64	/* as factoryctl image import takes them */
#define IMAGE_HEX	64
#define IMAGE_SHA	"sha256:"

static int
m_repository(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;

	if ((n = y_need(e, root, "repository")) == NULL ||
	    y_str(e, n, "a repository name", 0, NULL, 0) == -1)
		return (-1);
	if (!name_valid(n->str, sizeof(m->repository) - 1))
		return (y_fail(e, n, "not a repository name: \"%s\"", n->str));
	strlcpy(m->repository, n->str, sizeof(m->repository));
	return (0);
}

/*
 * A ref or a commit id as given; the worker resolves it.  What could
 * be read as an option or walk out of refs/ is refused here.
 */
static int
m_baseline(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;

	if ((n = y_need(e, root, "baseline")) == NULL ||
	    y_str(e, n, "a ref or a commit id", 0, m->baseline,
	    sizeof(m->baseline)) == -1)
		return (-1);
	if (y_hasctl(n->str))
		return (y_fail(e, n, "contains a control character"));
	if (n->str[0] == '-')
		return (y_fail(e, n, "starts with '-'"));
	if (strstr(n->str, "..") != NULL)
		return (y_fail(e, n, "contains \"..\""));
	return (0);
}

/* A single line of at most TITLE_MAXCHARS characters. */
static int
m_title(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;
	const unsigned char	*p;
	size_t			 chars = 0;

	if ((n = y_need(e, root, "title")) == NULL ||
	    y_str(e, n, "a title", 0, m->title, sizeof(m->title)) == -1)
		return (-1);
	if (y_hasctl(n->str))
		return (y_fail(e, n, "a title is a single line without "
		    "control characters"));
	for (p = (const unsigned char *)n->str; *p != '\0'; p++)
		if ((*p & 0xc0) != 0x80)
			chars++;
	if (chars > TITLE_MAXCHARS)
		return (y_fail(e, n, "longer than %d characters",
		    TITLE_MAXCHARS));
	return (0);
}

static int
m_scope(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;
	char			 why[128];
	size_t			 i;

	if ((n = y_need(e, root, "scope")) == NULL ||
	    y_strv(e, n, "globs", &m->scope) == -1)
		return (-1);
	for (i = 0; m->scope[i] != NULL; i++)
		if (glob_valid(m->scope[i], why, sizeof(why)) == -1)
			return (y_fail(e, n->kids[i], "bad glob \"%s\": %s",
			    m->scope[i], why));
	return (0);
}

static int
m_argv(struct yerr *e, const struct ynode *root, const char *key,
    char ***argv)
{
	const struct ynode	*n;

	if ((n = y_need(e, root, key)) == NULL ||
	    y_strv(e, n, "arguments", argv) == -1)
		return (-1);
	/* No PATH search: the program is named exactly. */
	if ((*argv)[0][0] != '/')
		return (y_fail(e, n->kids[0], "not an absolute path: %s",
		    (*argv)[0]));
	return (0);
}

static int
m_envname(const char *s)
{
	size_t	 n = strlen(s);

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return (0);
	return (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_") == n);
}

/* A mapping of variables to values as "KEY=VALUE" into *out; n may be NULL. */
static int
m_envmap(struct yerr *e, const struct ynode *n, const char *what,
    char ***out)
{
	const struct ynode	*k, *v;
	char			**env;
	size_t			 i;

	if ((env = *out = calloc(n == NULL ? 1 : n->nkids + 1,
	    sizeof(*env))) == NULL)
		return (y_failat(e, 1, 1, what, "out of memory"));
	if (n == NULL)
		return (0);
	if (y_map(e, n, "a mapping of variables to values") == -1)
		return (-1);
	for (i = 0; i < n->nkids; i++) {
		k = n->keys[i];
		v = n->kids[i];
		if (!m_envname(k->str))
			return (y_fail(e, k, "not a variable name: "
			    "[A-Za-z_][A-Za-z0-9_]*"));
		/* The sandbox sets these; a manifest does not move them. */
		if (strcmp(k->str, "HOME") == 0 || strcmp(k->str, "PATH") == 0 ||
		    strcmp(k->str, "FACTORY_TREE") == 0)
			return (y_fail(e, k, "refused: factory sets %s",
			    k->str));
		/* An empty value must be written "". */
		if (v->kind != YN_SCALAR || y_isnull(v))
			return (y_fail(e, v, "expected a string, not %s",
			    y_what(v)));
		if (strlen(v->str) != v->len)
			return (y_fail(e, v, "contains a NUL character"));
		if (asprintf(&env[i], "%s=%s", k->str, v->str) == -1) {
			env[i] = NULL;
			return (y_fail(e, v, "out of memory"));
		}
	}
	return (0);
}

static int
m_env(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	return (m_envmap(e, y_get(root, "env"), "env", &m->env));
}

static int
m_limit(struct yerr *e, const struct ynode *lim, const char *key, int kind,
    uint64_t *out)
{
	const struct ynode	*n;
	uint64_t		 v = 0;

	if ((n = y_get(lim, key)) == NULL)
		return (0);
	if (kind == 'd' && y_duration(e, n, &v) == -1)
		return (-1);
	if (kind == 's' && y_size(e, n, &v) == -1)
		return (-1);
	if (kind == 'n' && y_uint(e, n, 0, PIDS_MAX, &v) == -1)
		return (-1);
	if (v == 0)
		return (y_fail(e, n, "zero is refused: leave %s out for the "
		    "default", key));
	*out = v;
	return (0);
}

static int
m_limits(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	static const char * const keys[] = {
		"wall", "cpu", "memory", "pids", "tree", "log", "disk", NULL
	};
	const struct ynode	*n;

	m->limits = manifest_default_limits;
	if ((n = y_get(root, "limits")) == NULL)
		return (0);
	if (y_map(e, n, "a mapping of limits") == -1 ||
	    y_keys(e, n, keys) == -1 ||
	    m_limit(e, n, "wall", 'd', &m->limits.wall_ms) == -1 ||
	    m_limit(e, n, "cpu", 'd', &m->limits.cpu_ms) == -1 ||
	    m_limit(e, n, "memory", 's', &m->limits.memory) == -1 ||
	    m_limit(e, n, "pids", 'n', &m->limits.pids) == -1 ||
	    m_limit(e, n, "tree", 's', &m->limits.tree) == -1 ||
	    m_limit(e, n, "log", 's', &m->limits.log) == -1 ||
	    m_limit(e, n, "disk", 's', &m->limits.disk) == -1)
		return (-1);
	/* Its maximum is factoryd.conf's: checked when it is submitted. */
	if (m->limits.disk != 0 && m->limits.disk < DISK_MIN)
		return (y_fail(e, y_get(n, "disk"), "%s is less than the 1M "
		    "a checkout needs at least", y_get(n, "disk")->str));
	return (0);
}

/* A host name: dot-separated labels of letters, digits and '-'. */
static int
m_hostname(const char *h, size_t len)
{
	size_t	 i, label = 0;

	if (len == 0 || len > 253)
		return (0);
	for (i = 0; i < len; i++) {
		if (h[i] == '.') {
			if (label == 0 || h[i - 1] == '-')
				return (0);
			label = 0;
			continue;
		}
		if (!((h[i] >= 'a' && h[i] <= 'z') ||
		    (h[i] >= 'A' && h[i] <= 'Z') ||
		    (h[i] >= '0' && h[i] <= '9') || h[i] == '-'))
			return (0);
		if ((label == 0 && h[i] == '-') || ++label > 63)
			return (0);
	}
	return (label > 0 && h[len - 1] != '-');
}

/* "host:port", "1.2.3.4:port" or "[v6]:port". */
static int
m_hostport(const char *s)
{
	char		 addr[INET6_ADDRSTRLEN];
	unsigned char	 bin[sizeof(struct in6_addr)];
	const char	*colon, *end;
	uint64_t	 port;
	size_t		 hlen;

	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL || end[1] != ':')
			return (0);
		hlen = (size_t)(end - s - 1);
		if (hlen == 0 || hlen >= sizeof(addr))
			return (0);
		memcpy(addr, s + 1, hlen);
		addr[hlen] = '\0';
		if (inet_pton(AF_INET6, addr, bin) != 1)
			return (0);
		colon = end + 1;
	} else {
		if ((colon = strchr(s, ':')) == NULL ||
		    strchr(colon + 1, ':') != NULL)
			return (0);
		hlen = (size_t)(colon - s);
		if (!m_hostname(s, hlen))
			return (0);
	}
	if (y_parse_uint(colon + 1, &port) != 0 || port == 0 || port > 65535)
		return (0);
	return (1);
}

static int
m_network(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	return (m_netallow(e, y_get(root, "network"), &m->allow));
}

/* network: none, or {allow: [host:port, ...]} into *out (NULL: none). */
static int
m_netallow(struct yerr *e, const struct ynode *n, char ***out)
{
	static const char * const keys[] = { "allow", NULL };
	const struct ynode	*allow;
	size_t			 i;

	if (n == NULL)
		return (0);
	if (n->kind == YN_SCALAR && strcmp(n->str, "none") == 0)
		return (0);
	if (n->kind == YN_SCALAR && !y_isnull(n))
		return (y_fail(e, n, "expected none or a mapping with allow, "
		    "not \"%s\"", n->str));
	if (n->kind != YN_MAP)
		return (y_fail(e, n, "expected none or a mapping with allow, "
		    "not %s", y_what(n)));
	if (y_keys(e, n, keys) == -1 ||
	    (allow = y_need(e, n, "allow")) == NULL ||
	    y_strv(e, allow, "host:port", out) == -1)
		return (-1);
	for (i = 0; (*out)[i] != NULL; i++)
		if (!m_hostport((*out)[i]))
			return (y_fail(e, allow->kids[i], "expected host:port "
			    "(port 1-65535), not \"%s\"", (*out)[i]));
	return (0);
}

static int
m_exec(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;
	size_t			 i;

	if ((n = y_get(root, "exec")) == NULL)
		return (0);
	if (y_strv(e, n, "absolute paths", &m->exec) == -1)
		return (-1);
	for (i = 0; i < n->nkids; i++)
		if (y_path(e, n->kids[i], NULL, PATH_MAX) == -1)
			return (-1);
	return (0);
}

/* "sha256:" and 64 lower-case hex digits, and nothing after. */
static int
m_imagedigest(const char *s)
{
	size_t	 n = strlen(IMAGE_SHA);

	return (strncmp(s, IMAGE_SHA, n) == 0 && hex_valid(s + n, IMAGE_HEX));
}

/* NAME, NAME@sha256:HEX or sha256:HEX, by syntax; the store decides. */
static int
m_imageref(const char *s)
{
	char		 name[IMAGE_NAMEMAX + 1];
	const char	*at;

	if (strncmp(s, IMAGE_SHA, strlen(IMAGE_SHA)) == 0)
		return (m_imagedigest(s));
	if ((at = strchr(s, '@')) == NULL)
		return (name_valid(s, IMAGE_NAMEMAX));
	if ((size_t)(at - s) > IMAGE_NAMEMAX)
		return (0);
	memcpy(name, s, at - s);
	name[at - s] = '\0';
	return (name_valid(name, IMAGE_NAMEMAX) && m_imagedigest(at + 1));
}

/*
 * A path inside the image, as written: absolute, no empty, "." or ".."
 * component, no trailing '/'.  Where it leads is decided beneath the
 * image's root when it is hashed, never here.
 */
static int
m_imagepath(const char *s, const char **why)
{
	const char	*p, *q;
	size_t		 len;

	*why = "not an absolute path";
	if (s[0] != '/')
		return (0);
	*why = "contains a control character";
	if (y_hasctl(s))
		return (0);
	*why = "longer than PATH_MAX";
	if (strlen(s) >= PATH_MAX)
		return (0);
	*why = "an empty, \".\" or \"..\" component";
	for (p = s + 1; ; p = q + 1) {
		q = strchrnul(p, '/');
		len = (size_t)(q - p);
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return (0);
		if (*q == '\0')
			break;
	}
	return (1);
}

static int
m_toolchain(struct yerr *e, const struct ynode *n, struct manifest *m)
{
	const char	*why;
	size_t		 i, j;

	if (y_strv(e, n, "paths inside the image", &m->toolchain) == -1)
		return (-1);
	if (n->nkids > MANIFEST_TOOLCHAIN_MAX)
		return (y_fail(e, n, "%zu paths, more than %d", n->nkids,
		    MANIFEST_TOOLCHAIN_MAX));
	for (i = 0; m->toolchain[i] != NULL; i++) {
		if (!m_imagepath(m->toolchain[i], &why))
			return (y_fail(e, n->kids[i], "%s: %s",
			    m->toolchain[i], why));
		for (j = 0; j < i; j++)
			if (strcmp(m->toolchain[i], m->toolchain[j]) == 0)
				return (y_fail(e, n->kids[i], "%s: listed "
				    "twice", m->toolchain[i]));
	}
	return (0);
}

/* environment: {image: REF, toolchain: [PATH, ...]} */
static int
m_environment(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	static const char * const keys[] = { "image", "toolchain", NULL };
	const struct ynode	*n, *img, *tc;

	if ((n = y_get(root, "environment")) == NULL)
		return (0);
	if (y_map(e, n, "a mapping with image and toolchain") == -1 ||
	    y_keys(e, n, keys) == -1)
		return (-1);
	if ((img = y_need(e, n, "image")) == NULL ||
	    y_str(e, img, "an image reference", 0, m->image,
	    sizeof(m->image)) == -1)
		return (-1);
	if (!m_imageref(m->image))
		return (y_fail(e, img, "expected NAME, NAME@sha256:HEX or "
		    "sha256:HEX (64 lower-case hex digits), not \"%s\"",
		    m->image));
	if ((tc = y_get(n, "toolchain")) != NULL &&
	    m_toolchain(e, tc, m) == -1)
		return (-1);
	return (0);
}

/* Is a the path b or inside it? */
static int
m_within(const char *a, const char *b)
{
	size_t	 n = strlen(b);

	return (strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/'));
}

/*
 * A list of at most max paths inside the tree (tree_relpath), none
 * inside another: setup's inputs and outputs, a service's data.
 */
static int
m_treepaths(struct yerr *e, const struct ynode *sn, const char *key,
    int need, size_t max, char ***out)
{
	const struct ynode	*n;
	const char		*why;
	size_t			 i, j;

	if ((n = need ? y_need(e, sn, key) : y_get(sn, key)) == NULL) {
		if (need)
			return (-1);
		if ((*out = calloc(1, sizeof(**out))) == NULL)
			return (y_failat(e, 1, 1, key, "out of memory"));
		return (0);
	}
	if (y_strv(e, n, "paths inside the tree", out) == -1)
		return (-1);
	if (n->nkids > max)
		return (y_fail(e, n, "more than %zu paths", max));
	for (i = 0; (*out)[i] != NULL; i++) {
		if (!tree_relpath((*out)[i], SETUP_PATHMAX, &why))
			return (y_fail(e, n->kids[i], "\"%s\": %s", (*out)[i],
			    why));
		for (j = 0; j < i; j++)
			if (m_within((*out)[i], (*out)[j]) ||
			    m_within((*out)[j], (*out)[i]))
				return (y_fail(e, n->kids[i], "\"%s\" overlaps "
				    "\"%s\"", (*out)[i], (*out)[j]));
	}
	return (0);
}

/*
 * setup.reuse: tree (the default) or inputs.  Reuse across trees is
 * asked for, never assumed: setup reads more than its inputs.
 */
static int
m_setupreuse(struct yerr *e, const struct ynode *n, int *reuse)
{
	*reuse = SETUP_REUSE_TREE;
	if (n == NULL)
		return (0);
	if (y_str(e, n, "tree or inputs", 0, NULL, 0) == -1)
		return (-1);
	if (strcmp(n->str, "tree") == 0)
		return (0);
	if (strcmp(n->str, "inputs") == 0) {
		*reuse = SETUP_REUSE_INPUTS;
		return (0);
	}
	return (y_fail(e, n, "expected tree or inputs, not \"%s\"", n->str));
}

/*
 * setup: {run: ARGV, inputs: [PATH], outputs: [PATH], network: ...,
 * env: {...}, reuse: tree|inputs}: the phase whose outputs are cached
 * by a key over its inputs (factory-manifest(5)).
 */
static int
m_setup(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	static const char * const keys[] = { "run", "inputs", "outputs",
	    "network", "env", "reuse", NULL };
	const struct ynode	*n;
	struct manifest_setup	*s;
	size_t			 i, j;

	if ((n = y_get(root, "setup")) == NULL)
		return (0);
	if (y_map(e, n, "a mapping with run, inputs, outputs, network, env "
	    "and reuse") == -1 || y_keys(e, n, keys) == -1)
		return (-1);
	if ((s = m->setup = calloc(1, sizeof(*s))) == NULL)
		return (y_fail(e, n, "out of memory"));
	if (m_argv(e, n, "run", &s->run) == -1 ||
	    m_treepaths(e, n, "inputs", 0, SETUP_PATHS, &s->inputs) == -1 ||
	    m_treepaths(e, n, "outputs", 1, SETUP_PATHS,
	    &s->outputs) == -1 ||
	    m_netallow(e, y_get(n, "network"), &s->allow) == -1 ||
	    m_envmap(e, y_get(n, "env"), "setup.env", &s->env) == -1 ||
	    m_setupreuse(e, y_get(n, "reuse"), &s->reuse) == -1)
		return (-1);
	if (s->outputs[0] == NULL)
		return (y_fail(e, y_get(n, "outputs"), "no output: a setup "
		    "whose outputs are not kept is not cached"));
	/* An input setup writes would make the key describe nothing. */
	for (i = 0; s->inputs[i] != NULL; i++)
		for (j = 0; s->outputs[j] != NULL; j++)
			if (m_within(s->inputs[i], s->outputs[j]) ||
			    m_within(s->outputs[j], s->inputs[i]))
				return (y_fail(e, y_get(n, "inputs")->kids[i],
				    "\"%s\" overlaps output \"%s\"",
				    s->inputs[i], s->outputs[j]));
	return (0);
}

/* A service's name: a lower-case letter, then letters, digits and '-'. */
static int
m_svcname(const char *s)
{
	size_t	 n = strlen(s);

	if (n == 0 || n >= SERVICE_NAMEMAX || s[0] < 'a' || s[0] > 'z')
		return (0);
	return (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n);
}

/* Is port that of an entry of network.allow (host:port)? */
static int
m_allowport(const struct manifest *m, uint64_t port)
{
	const char	*c;
	uint64_t	 v;
	size_t		 i;

	for (i = 0; m->allow != NULL && m->allow[i] != NULL; i++)
		if ((c = strrchr(m->allow[i], ':')) != NULL &&
		    y_parse_uint(c + 1, &v) == 0 && v == port)
			return (1);
	return (0);
}

/*
 * ports: [PORT, ...]: 1 to SERVICE_PORTS, none another service's and
 * none of network.allow's, whose endpoints the agent's sandbox binds
 * in the same namespace.
 */
static int
m_svcports(struct yerr *e, const struct ynode *n, const struct manifest *m,
    struct manifest_service *sv)
{
	uint64_t	 v;
	size_t		 i;
	int		 j, k;

	if (n->kind != YN_SEQ || n->nkids == 0)
		return (y_fail(e, n, "expected a list of ports, not %s",
		    y_what(n)));
	if (n->nkids > SERVICE_PORTS)
		return (y_fail(e, n, "%zu ports: at most %d", n->nkids,
		    SERVICE_PORTS));
	for (i = 0; i < n->nkids; i++) {
		if (y_uint(e, n->kids[i], 1, 65535, &v) == -1)
			return (-1);
		for (j = 0; j < m->nservices; j++)
			for (k = 0; k < m->services[j].nports; k++)
				if (m->services[j].ports[k] == v)
					return (y_fail(e, n->kids[i],
					    "port %llu is service %s's",
					    (unsigned long long)v,
					    m->services[j].name));
		for (k = 0; k < sv->nports; k++)
			if (sv->ports[k] == v)
				return (y_fail(e, n->kids[i], "port %llu "
				    "twice", (unsigned long long)v));
		if (m_allowport(m, v))
			return (y_fail(e, n->kids[i], "port %llu is also "
			    "network.allow's", (unsigned long long)v));
		sv->ports[sv->nports++] = (uint16_t)v;
	}
	return (0);
}

/*
 * A service's memory, pids and restart.  Its memory and pids are
 * taken from the attempt's limits, not added to them: each service
 * without its own has an equal share (the attempt's divided by the
 * services and the run beside them), and the run has what is left.
 */
static int
m_svclimits(struct yerr *e, const struct ynode *s, const struct manifest *m,
    struct manifest_service *sv)
{
	const struct ynode	*t;
	uint64_t		 v;

	if (m_limit(e, s, "memory", 's', &sv->memory) == -1 ||
	    m_limit(e, s, "pids", 'n', &sv->pids) == -1)
		return (-1);
	if (sv->memory >= m->limits.memory)
		return (y_fail(e, y_get(s, "memory"), "not less than "
		    "limits.memory, %lluM", (unsigned long long)
		    (m->limits.memory >> 20)));
	if (sv->pids >= m->limits.pids)
		return (y_fail(e, y_get(s, "pids"), "not less than "
		    "limits.pids, %llu", (unsigned long long)m->limits.pids));
	if ((t = y_get(s, "restart")) != NULL) {
		if (y_uint(e, t, 0, SERVICE_RESTARTS, &v) == -1)
			return (-1);
		sv->restarts = (int)v;
	}
	return (0);
}

/* What the services take of limits.memory (pids: .pids) together. */
static uint64_t
m_svcsum(const struct manifest *m, int pids)
{
	uint64_t	 sum = 0, v;
	int		 i;

	for (i = 0; i < m->nservices; i++) {
		v = manifest_svc_limit(m, i, pids);
		sum = sum > UINT64_MAX - v ? UINT64_MAX : sum + v;
	}
	return (sum);
}

/*
 * Does every service, and the run beside them, have at least the floor
 * of limits.memory and .pids?  A part of 0 would be no limit at all.
 */
static int
m_svcbudget(struct yerr *e, const struct ynode *n, const struct manifest *m)
{
	static const uint64_t	 floor[2] = { SERVICE_MEMORY_MIN,
				     SERVICE_PIDS_MIN };
	static const char *const what[2] = { "memory", "pids" };
	uint64_t		 sum;
	int			 i, pids;

	for (pids = 0; pids < 2; pids++) {
		for (i = 0; i < m->nservices; i++)
			if (manifest_svc_limit(m, i, pids) < floor[pids])
				return (y_fail(e, n, "service %s has %llu of "
				    "limits.%s, less than the %llu a sandbox "
				    "needs", m->services[i].name,
				    (unsigned long long)manifest_svc_limit(m,
				    i, pids), what[pids],
				    (unsigned long long)floor[pids]));
		sum = m_svcsum(m, pids);
		if (manifest_run_limit(m, pids) >= floor[pids])
			continue;
		return (y_fail(e, n, "the services' %s, %llu together, "
		    "leaves the agent less than %llu of limits.%s %llu",
		    what[pids], (unsigned long long)sum,
		    (unsigned long long)floor[pids], what[pids],
		    (unsigned long long)(pids ? m->limits.pids :
		    m->limits.memory)));
	}
	return (0);
}

/* Service i's memory (pids: its pids): its own, or an equal share. */
uint64_t
manifest_svc_limit(const struct manifest *m, int i, int pids)
{
	const struct manifest_service	*sv = &m->services[i];
	uint64_t			 own = pids ? sv->pids : sv->memory;
	uint64_t			 all = pids ? m->limits.pids :
					     m->limits.memory;

	return (own != 0 ? own : all / (uint64_t)(m->nservices + 1));
}

/* What the agent or the validation run has of the limit beside services. */
uint64_t
manifest_run_limit(const struct manifest *m, int pids)
{
	uint64_t	 all = pids ? m->limits.pids : m->limits.memory;
	uint64_t	 sum = m_svcsum(m, pids);

	return (sum < all ? all - sum : 0);
}

/*
 * services: {NAME: {run: ARGV, ready: ARGV, ready-timeout: DURATION,
 * ports: [PORT], env: {...}, memory: SIZE, pids: N, restart: N,
 * data: [PATH]}}, in the order written.
 */
static int
m_services(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	static const char * const keys[] = { "run", "ready", "ready-timeout",
	    "ports", "env", "memory", "pids", "restart", "data", NULL };
	const struct ynode	*n, *s, *t;
	struct manifest_service	*sv;
	size_t			 i;

	if ((n = y_get(root, "services")) == NULL)
		return (0);
	if (y_map(e, n, "a mapping of service names to services") == -1)
		return (-1);
	if (n->nkids > MANIFEST_SERVICES)
		return (y_fail(e, n, "%zu services: at most %d", n->nkids,
		    MANIFEST_SERVICES));
	for (i = 0; i < n->nkids; i++) {
		s = n->kids[i];
		if (!m_svcname(n->keys[i]->str))
			return (y_fail(e, n->keys[i], "not a service name: "
			    "[a-z][a-z0-9-]*, at most %d bytes",
			    SERVICE_NAMEMAX - 1));
		if (y_map(e, s, "a mapping with run, ready, ready-timeout, "
		    "ports, env, memory, pids, restart and data") == -1 ||
		    y_keys(e, s, keys) == -1)
			return (-1);
		sv = &m->services[i];
		strlcpy(sv->name, n->keys[i]->str, sizeof(sv->name));
		sv->ready_ms = SERVICE_READY_MS;
		if (m_argv(e, s, "run", &sv->run) == -1 ||
		    m_argv(e, s, "ready", &sv->ready) == -1 ||
		    m_envmap(e, y_get(s, "env"), "services.env", &sv->env) ==
		    -1 || m_treepaths(e, s, "data", 0, SERVICE_DATA,
		    &sv->data) == -1)
			return (-1);
		if ((t = y_get(s, "ready-timeout")) != NULL) {
			if (y_duration(e, t, &sv->ready_ms) == -1)
				return (-1);
			if (sv->ready_ms == 0 ||
			    sv->ready_ms > SERVICE_READY_MAXMS)
				return (y_fail(e, t, "not between 1ms and "
				    "10m"));
		}
		if ((t = y_need(e, s, "ports")) == NULL ||
		    m_svcports(e, t, m, sv) == -1 ||
		    m_svclimits(e, s, m, sv) == -1)
			return (-1);
		m->nservices++;
	}
	return (m_svcbudget(e, n, m));
}

/*
 * preview: {port: N, service: NAME | agent, health: /PATH}: the port
 * is the service's (one of its ports) or one the agent may listen on.
 */
static int
m_preview(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	static const char * const keys[] = { "port", "service", "health",
	    NULL };
	struct manifest_preview	*p = &m->preview;
	const struct ynode	*n, *v;
	uint64_t		 port;
	int			 i, j;

	p->service = PREVIEW_AGENT;
	if ((n = y_get(root, "preview")) == NULL)
		return (0);
	if (y_map(e, n, "a mapping with port, service and health") == -1 ||
	    y_keys(e, n, keys) == -1)
		return (-1);
	if ((v = y_need(e, n, "port")) == NULL ||
	    y_uint(e, v, 1, 65535, &port) == -1)
		return (-1);
	p->enabled = 1;
	p->port = (uint16_t)port;
	if ((v = y_get(n, "service")) != NULL) {
		if (y_str(e, v, "a service's name or agent", 0, NULL, 0) == -1)
			return (-1);
		if (strcmp(v->str, "agent") != 0) {
			for (i = 0; i < m->nservices; i++)
				if (strcmp(m->services[i].name, v->str) == 0)
					break;
			if (i == m->nservices)
				return (y_fail(e, v, "no service \"%s\"",
				    v->str));
			p->service = i;
		}
	}
	for (i = 0; i < m->nservices; i++)
		for (j = 0; j < m->services[i].nports; j++) {
			if (m->services[i].ports[j] != p->port)
				continue;
			if (p->service == i)
				goto health;
			return (y_fail(e, y_get(n, "port"), "port %u is service "
			    "%s's", (unsigned)p->port, m->services[i].name));
		}
	if (p->service != PREVIEW_AGENT)
		return (y_fail(e, y_get(n, "port"), "not a port of service "
		    "%s", m->services[p->service].name));
 health:
	if ((v = y_get(n, "health")) != NULL) {
		if (y_str(e, v, "a path", 0, p->health, sizeof(p->health)) ==
		    -1)
			return (-1);
		if (p->health[0] != '/' || strcspn(p->health, " ?#") !=
		    strlen(p->health) || y_hasctl(p->health))
			return (y_fail(e, v, "not a path: /, then no space, "
			    "'?' or '#'"));
	}
	return (0);
}

static int
m_approval(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;

	m->approval = APPROVAL_AUTO;
	if ((n = y_get(root, "approval")) == NULL)
		return (0);
	if (y_str(e, n, "auto or manual", 0, NULL, 0) == -1)
		return (-1);
	if (strcmp(n->str, "auto") == 0)
		return (0);
	if (strcmp(n->str, "manual") == 0) {
		m->approval = APPROVAL_MANUAL;
		return (0);
	}
	return (y_fail(e, n, "expected auto or manual, not \"%s\"", n->str));
}

/* A name of factoryd.conf's providers or upstreams, by syntax. */
static int
m_gwname(struct yerr *e, const struct ynode *n, char *dst, size_t len)
{
	if (y_str(e, n, "a name", 0, dst, len) == -1)
		return (-1);
	if (!name_valid(dst, len - 1))
		return (y_fail(e, n, "not a provider or upstream name: "
		    "\"%s\"", n->str));
	return (0);
}

/* A model name as providers write them: printable, no quotes. */
static int
m_modelname(const char *s)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '"' || *p == '\\')
			return (0);
	return (p != (const unsigned char *)s);
}

static int
m_budget(struct yerr *e, const struct ynode *n, struct manifest_model *mm)
{
	static const char * const keys[] = { "tokens", "usd", NULL };
	const struct ynode	*v;

	if (y_map(e, n, "a mapping with tokens and usd") == -1 ||
	    y_keys(e, n, keys) == -1)
		return (-1);
	if ((v = y_get(n, "tokens")) != NULL &&
	    y_uint(e, v, 1, UINT64_MAX, &mm->budget_tokens) == -1)
		return (-1);
	if ((v = y_get(n, "usd")) != NULL) {
		if (y_str(e, v, "an amount in US dollars", 32, NULL, 0) == -1)
			return (-1);
		if (conf_parse_usd(v->str, &mm->budget_uusd) == -1 ||
		    mm->budget_uusd == 0)
			return (y_fail(e, v, "expected US dollars above zero "
			    "with at most six decimals, not \"%s\"", v->str));
	}
	return (0);
}

/*
 * model: {provider: NAME, models: [MODEL, ...], budget: {...}}, the
 * manifest's or a cohort's variant's (n).
 */
static int
m_model_node(struct yerr *e, const struct ynode *n, struct manifest_model *mm)
{
	static const char * const keys[] = { "provider", "models", "budget",
	    NULL };
	const struct ynode	*v;
	size_t			 i, j;

	if (y_map(e, n, "a mapping with provider, models and budget") == -1 ||
	    y_keys(e, n, keys) == -1 ||
	    (v = y_need(e, n, "provider")) == NULL ||
	    m_gwname(e, v, mm->provider, sizeof(mm->provider)) == -1)
		return (-1);
	if ((v = y_need(e, n, "models")) == NULL)
		return (-1);
	if (v->kind != YN_SEQ)
		return (y_fail(e, v, "expected a sequence of model names, "
		    "not %s", y_what(v)));
	if (v->nkids == 0)
		return (y_fail(e, v, "empty: name the models the agent may "
		    "use"));
	if (v->nkids > MANIFEST_MODELS)
		return (y_fail(e, v, "%zu models, more than %d", v->nkids,
		    MANIFEST_MODELS));
	for (i = 0; i < v->nkids; i++) {
		if (y_str(e, v->kids[i], "a model name", 0, mm->models[i],
		    sizeof(mm->models[i])) == -1)
			return (-1);
		if (!m_modelname(mm->models[i]))
			return (y_fail(e, v->kids[i], "not a model name: "
			    "printable, without spaces or quotes"));
		for (j = 0; j < i; j++)
			if (strcmp(mm->models[i], mm->models[j]) == 0)
				return (y_fail(e, v->kids[i], "%s: listed "
				    "twice", mm->models[i]));
	}
	mm->nmodels = v->nkids;
	if ((v = y_get(n, "budget")) != NULL && m_budget(e, v, mm) == -1)
		return (-1);
	return (0);
}

static int
m_model(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;

	if ((n = y_get(root, "model")) == NULL)
		return (0);
	return (m_model_node(e, n, &m->model));
}

/* upstreams: [NAME, ...] */
static int
m_upstreams(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;
	size_t			 i, j;

	if ((n = y_get(root, "upstreams")) == NULL)
		return (0);
	if (n->kind != YN_SEQ)
		return (y_fail(e, n, "expected a sequence of upstream names, "
		    "not %s", y_what(n)));
	if (n->nkids > CONF_GW_GRANTS)
		return (y_fail(e, n, "%zu upstreams, more than %d", n->nkids,
		    CONF_GW_GRANTS));
	for (i = 0; i < n->nkids; i++) {
		if (m_gwname(e, n->kids[i], m->upstreams[i],
		    sizeof(m->upstreams[i])) == -1)
			return (-1);
		for (j = 0; j < i; j++)
			if (strcmp(m->upstreams[i], m->upstreams[j]) == 0)
				return (y_fail(e, n->kids[i], "%s: listed "
				    "twice", m->upstreams[i]));
	}
	m->nupstreams = n->nkids;
	return (0);
}

/* tenant: LABEL, whom the spend is attributed to. */
static int
m_tenant(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n;
	size_t			 l;

	if ((n = y_get(root, "tenant")) == NULL)
		return (0);
	if (y_str(e, n, "a tenant label", 0, m->tenant, sizeof(m->tenant)) ==
	    -1)
		return (-1);
	l = strlen(m->tenant);
	if (m->tenant[0] == '-' || m->tenant[0] == '.' || strspn(m->tenant,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-/@") != l)
		return (y_fail(e, n, "not a tenant label: letters, digits and "
		    "._-/@, not starting with '.' or '-'"));
	return (0);
}

static int
m_build(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	if (y_keys(e, root, manifest_keys) == -1 ||
	    m_repository(e, root, m) == -1 ||
	    m_baseline(e, root, m) == -1 ||
	    m_title(e, root, m) == -1 ||
	    m_scope(e, root, m) == -1 ||
	    m_argv(e, root, "agent", &m->agent) == -1 ||
	    m_argv(e, root, "validate", &m->validate) == -1 ||
	    m_env(e, root, m) == -1 ||
	    m_limits(e, root, m) == -1 ||
	    m_network(e, root, m) == -1 ||
	    m_exec(e, root, m) == -1 ||
	    m_approval(e, root, m) == -1 ||
	    m_environment(e, root, m) == -1 ||
	    m_setup(e, root, m) == -1 ||
	    m_services(e, root, m) == -1 ||
	    m_preview(e, root, m) == -1 ||
	    m_model(e, root, m) == -1 ||
	    m_upstreams(e, root, m) == -1 ||
	    m_tenant(e, root, m) == -1)
		return (-1);
	return (0);
}

/*
 * A variant's env as written, for the print; its names and values are
 * checked where the variant lands, by the parse of its member.
 */
static int
m_variant_env(struct yerr *e, const struct ynode *n, char ***out)
{
	size_t	 i;

	if ((*out = calloc(n == NULL ? 1 : n->nkids + 1, sizeof(**out))) ==
	    NULL)
		return (y_failat(e, 1, 1, "cohort", "out of memory"));
	for (i = 0; n != NULL && i < n->nkids; i++) {
		if (n->kids[i]->kind != YN_SCALAR || y_isnull(n->kids[i]))
			return (y_fail(e, n->kids[i], "expected a string, "
			    "not %s", y_what(n->kids[i])));
		if (strlen(n->kids[i]->str) != n->kids[i]->len)
			return (y_fail(e, n->kids[i], "contains a NUL "
			    "character"));
		if (asprintf(&(*out)[i], "%s=%s", n->keys[i]->str,
		    n->kids[i]->str) == -1) {
			(*out)[i] = NULL;
			return (y_failat(e, 1, 1, "cohort", "out of memory"));
		}
	}
	return (0);
}

/*
 * cohort: {size: N, variants: [{env: {...}, model: ...}, ...]}.  Its
 * shape only: the variants' values are checked where they land, by the
 * parse of each member's manifest.  A list of variants has one for
 * every member: a member without one would be a variant nobody wrote.
 */
static int
m_cohort(struct yerr *e, const struct ynode *root, struct manifest *m)
{
	const struct ynode	*n, *sz, *vs, *v;
	uint64_t		 size;
	size_t			 i;

	if ((n = y_get(root, "cohort")) == NULL)
		return (0);
	if (y_map(e, n, "a mapping (size, variants)") == -1 ||
	    y_keys(e, n, cohort_keys) == -1 ||
	    (sz = y_need(e, n, "size")) == NULL ||
	    y_uint(e, sz, 2, COHORT_SIZE_MAX, &size) == -1)
		return (-1);
	m->cohort_size = (int)size;
	if ((vs = y_get(n, "variants")) == NULL)
		return (0);
	if (vs->kind != YN_SEQ)
		return (y_fail(e, vs, "expected a sequence of variants, not "
		    "%s", y_what(vs)));
	if (vs->nkids != size)
		return (y_fail(e, vs, "%zu variants for a cohort of size "
		    "%llu: one for each member", vs->nkids,
		    (unsigned long long)size));
	for (i = 0; i < vs->nkids; i++) {
		v = vs->kids[i];
		if (y_map(e, v, "a mapping (env, model)") == -1 ||
		    y_keys(e, v, variant_keys) == -1)
			return (-1);
		if ((n = y_get(v, "env")) != NULL &&
		    y_map(e, n, "a mapping of variables to values") == -1)
			return (-1);
	}
	if ((m->cohort_env = calloc(vs->nkids, sizeof(*m->cohort_env))) ==
	    NULL)
		return (y_failat(e, 1, 1, "cohort", "out of memory"));
	m->cohort_nvariants = (int)vs->nkids;
	if ((m->cohort_model = calloc(vs->nkids, sizeof(*m->cohort_model)))
	    == NULL)
		return (y_failat(e, 1, 1, "cohort", "out of memory"));
	for (i = 0; i < vs->nkids; i++) {
		if (m_variant_env(e, y_get(vs->kids[i], "env"),
		    &m->cohort_env[i]) == -1)
			return (-1);
		/* Kept as the variant wrote it, so that the print has it. */
		if ((n = y_get(vs->kids[i], "model")) != NULL &&
		    m_model_node(e, n, &m->cohort_model[i]) == -1)
			return (-1);
	}
	return (0);
}

/* Put value (with its key node) under key in map, replacing any. */
static int
m_put(struct yerr *e, struct ynode *map, struct ynode *key, struct ynode *val)
{
	struct ynode	**k, **v;
	size_t		  i;

	for (i = 0; i < map->nkids; i++)
		if (strcmp(map->keys[i]->str, key->str) == 0) {
			y_free(map->kids[i]);
			map->kids[i] = val;
			y_free(key);
			return (0);
		}
	if ((k = reallocarray(map->keys, map->nkids + 1, sizeof(*k))) ==
	    NULL)
		goto oom;
	map->keys = k;
	if ((v = reallocarray(map->kids, map->nkids + 1, sizeof(*v))) ==
	    NULL)
		goto oom;
	map->kids = v;
	map->keys[map->nkids] = key;
	map->kids[map->nkids] = val;
	map->nkids++;
	return (0);
 oom:
	y_free(key);
	y_free(val);
	return (y_failat(e, 1, 1, NULL, "out of memory"));
}

/*
 * Lay variant i over the manifest: each of its env variables over the
 * manifest's env, its model (whatever a model is) in place of the
 * manifest's.  Nodes are moved out of the variant, never shared: the
 * tree is freed once.
 */
static int
m_overlay(struct yerr *e, struct ynode *root, int i)
{
	struct ynode	*v, *venv, *env, *k, *val;
	size_t		 j, idx;

	v = y_get(y_get(root, "cohort"), "variants")->kids[i];
	for (idx = 0; idx < v->nkids; idx++) {
		if (strcmp(v->keys[idx]->str, "env") != 0)
			continue;
		venv = v->kids[idx];
		if ((env = y_get(root, "env")) == NULL) {
			k = v->keys[idx];
			v->keys[idx] = NULL;
			v->kids[idx] = NULL;
			if (m_put(e, root, k, venv) == -1)
				return (-1);
			continue;
		}
		if (y_map(e, env, "a mapping of variables to values") == -1)
			return (-1);
		for (j = 0; j < venv->nkids; j++) {
			k = venv->keys[j];
			val = venv->kids[j];
			venv->keys[j] = venv->kids[j] = NULL;
			if (m_put(e, env, k, val) == -1)
				return (-1);
		}
	}
	for (idx = 0; idx < v->nkids; idx++) {
		if (v->keys[idx] == NULL ||
		    strcmp(v->keys[idx]->str, "model") != 0)
			continue;
		k = v->keys[idx];
		val = v->kids[idx];
		v->keys[idx] = v->kids[idx] = NULL;
		if (m_put(e, root, k, val) == -1)
			return (-1);
	}
	return (0);
}

int
manifest_parse(const char *name, const void *buf, size_t len,
    struct manifest **mp, char *err, size_t errlen)
{
	return (manifest_parse_member(name, buf, len, -1, mp, err, errlen));
}

/*
 * Every variant of a cohort must make a valid manifest: a member that
 * cannot be parsed is refused at submission, never found at start.
 */
static int
m_variants(const char *name, const void *buf, size_t len, int n, char *err,
    size_t errlen)
{
	struct manifest	*m;
	int		 i;

	for (i = 0; i < n; i++) {
		if (manifest_parse_member(name, buf, len, i, &m, err,
		    errlen) == -1)
			return (-1);
		manifest_free(m);
	}
	return (0);
}

int
manifest_parse_member(const char *name, const void *buf, size_t len,
    int variant, struct manifest **mp, char *err, size_t errlen)
{
	struct manifest	*m;
	struct ynode	*root;
	struct yerr	 e;

	*mp = NULL;
	y_errinit(&e, name, err, errlen);
	if (len > MANIFEST_MAXSIZE)
		return (y_failat(&e, 1, 1, NULL, "larger than %d bytes",
		    MANIFEST_MAXSIZE));
	if ((root = y_load(&e, buf, len)) == NULL)
		return (-1);
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		y_free(root);
		return (y_failat(&e, 1, 1, NULL, "out of memory"));
	}
	if (y_keys(&e, root, manifest_keys) == -1 ||
	    m_cohort(&e, root, m) == -1)
		goto fail;
	if (variant >= 0 && variant >= (m->cohort_size > 0 ?
	    m->cohort_size : COHORT_SIZE_MAX)) {
		y_failat(&e, 1, 1, "cohort", "no member %d", variant);
		goto fail;
	}
	if (variant >= 0 && m->cohort_nvariants > 0 &&
	    m_overlay(&e, root, variant) == -1)
		goto fail;
	if (m_build(&e, root, m) == -1)
		goto fail;
	y_free(root);
	if (variant == -1 && m->cohort_nvariants > 0 &&
	    m_variants(name, buf, len, m->cohort_nvariants, err,
	    errlen) == -1) {
		manifest_free(m);
		return (-1);
	}
	*mp = m;
	return (0);
 fail:
	y_free(root);
	manifest_free(m);
	return (-1);
}

void
manifest_free(struct manifest *m)
{
	int	 i;

	if (m == NULL)
		return;
	y_strvfree(m->scope);
	y_strvfree(m->agent);
	y_strvfree(m->validate);
	y_strvfree(m->env);
	y_strvfree(m->exec);
	y_strvfree(m->allow);
	y_strvfree(m->toolchain);
	if (m->setup != NULL) {
		y_strvfree(m->setup->run);
		y_strvfree(m->setup->inputs);
		y_strvfree(m->setup->outputs);
		y_strvfree(m->setup->allow);
		y_strvfree(m->setup->env);
		free(m->setup);
	}
	for (i = 0; i < MANIFEST_SERVICES; i++) {
		y_strvfree(m->services[i].run);
		y_strvfree(m->services[i].ready);
		y_strvfree(m->services[i].env);
		y_strvfree(m->services[i].data);
	}
	for (i = 0; m->cohort_env != NULL && i < m->cohort_nvariants; i++)
		y_strvfree(m->cohort_env[i]);
	free(m->cohort_env);
	free(m->cohort_model);
	free(m);
}

static void
m_printlist(FILE *fp, const char *indent, const char *key, char * const *v)
{
	size_t	 i;

	if (v == NULL || v[0] == NULL) {
		fprintf(fp, "%s%s: []\n", indent, key);
		return;
	}
	fprintf(fp, "%s%s:\n", indent, key);
	for (i = 0; v[i] != NULL; i++) {
		fprintf(fp, "%s  - ", indent);
		y_printstr(fp, v[i]);
		fputc('\n', fp);
	}
}

static void
m_printenv(FILE *fp, const char *indent, char * const *env)
{
	const char	*eq;
	char		*name;
	size_t		 i;

	if (env == NULL || env[0] == NULL) {
		fprintf(fp, "env: {}\n");
		return;
	}
	fprintf(fp, "env:\n");
	for (i = 0; env[i] != NULL; i++) {
		if ((eq = strchr(env[i], '=')) == NULL)
			continue;
		/* Names have no bound but the manifest's size: print it whole. */
		if ((name = strndup(env[i], eq - env[i])) == NULL)
			fatal("%s", __func__);
		fprintf(fp, "%s  ", indent);
		y_printstr(fp, name);
		fprintf(fp, ": ");
		y_printstr(fp, eq + 1);
		fputc('\n', fp);
		free(name);
	}
}

static void
m_printsetup(FILE *fp, const struct manifest_setup *s)
{
	const char	*eq;
	size_t		 i;

	fprintf(fp, "setup:\n");
	m_printlist(fp, "  ", "run", s->run);
	/* Optional, and never an empty list: none, no key. */
	if (s->inputs[0] != NULL)
		m_printlist(fp, "  ", "inputs", s->inputs);
	m_printlist(fp, "  ", "outputs", s->outputs);
	if (s->allow == NULL)
		fprintf(fp, "  network: none\n");
	else {
		fprintf(fp, "  network:\n");
		m_printlist(fp, "    ", "allow", s->allow);
	}
	if (s->env[0] == NULL)
		fprintf(fp, "  env: {}\n");
	else
		fprintf(fp, "  env:\n");
	for (i = 0; s->env[i] != NULL; i++) {
		if ((eq = strchr(s->env[i], '=')) == NULL)
			continue;
		fprintf(fp, "    %.*s: ", (int)(eq - s->env[i]), s->env[i]);
		y_printstr(fp, eq + 1);
		fputc('\n', fp);
	}
	fprintf(fp, "  reuse: %s\n", s->reuse == SETUP_REUSE_INPUTS ?
	    "inputs" : "tree");
}

static void
m_printservices(FILE *fp, const struct manifest *m)
{
	const struct manifest_service	*sv;
	int				 i, j;

	if (m->nservices == 0)
		return;
	fprintf(fp, "services:\n");
	for (i = 0; i < m->nservices; i++) {
		sv = &m->services[i];
		fprintf(fp, "  %s:\n", sv->name);
		m_printlist(fp, "    ", "run", sv->run);
		m_printlist(fp, "    ", "ready", sv->ready);
		fprintf(fp, "    ready-timeout: ");
		y_printduration(fp, sv->ready_ms);
		fprintf(fp, "\n    ports: [");
		for (j = 0; j < sv->nports; j++)
			fprintf(fp, "%s%u", j > 0 ? ", " : "",
			    (unsigned)sv->ports[j]);
		fprintf(fp, "]\n");
		if (sv->memory != 0) {
			fprintf(fp, "    memory: ");
			y_printsize(fp, sv->memory);
			fprintf(fp, "\n");
		}
		if (sv->pids != 0)
			fprintf(fp, "    pids: %llu\n",
			    (unsigned long long)sv->pids);
		if (sv->restarts != 0)
			fprintf(fp, "    restart: %d\n", sv->restarts);
		fprintf(fp, "    ");
		m_printenv(fp, "    ", sv->env);
		if (sv->data != NULL && sv->data[0] != NULL)
			m_printlist(fp, "    ", "data", sv->data);
	}
}

/* A model grant, its keys under indent ("model:" on the line before). */
static void
m_printgrant(FILE *fp, const char *in, const struct manifest_model *mm)
{
	char	 usd[32];
	size_t	 i;

	fprintf(fp, "%sprovider: ", in);
	y_printstr(fp, mm->provider);
	fprintf(fp, "\n%smodels:\n", in);
	for (i = 0; i < mm->nmodels; i++) {
		fprintf(fp, "%s  - ", in);
		y_printstr(fp, mm->models[i]);
		fputc('\n', fp);
	}
	if (mm->budget_tokens != 0 || mm->budget_uusd != 0)
		fprintf(fp, "%sbudget:\n", in);
	if (mm->budget_tokens != 0)
		fprintf(fp, "%s  tokens: %llu\n", in,
		    (unsigned long long)mm->budget_tokens);
	if (mm->budget_uusd != 0)
		fprintf(fp, "%s  usd: \"%s\"\n", in,
		    conf_usd(mm->budget_uusd, usd, sizeof(usd)));
}

/* model:, upstreams:, tenant:, only where the manifest has them. */
static void
m_printmodel(FILE *fp, const struct manifest *m)
{
	size_t	 i;

	if (m->model.provider[0] != '\0') {
		fprintf(fp, "model:\n");
		m_printgrant(fp, "  ", &m->model);
	}
	if (m->nupstreams > 0) {
		fprintf(fp, "upstreams:\n");
		for (i = 0; i < m->nupstreams; i++) {
			fprintf(fp, "  - ");
			y_printstr(fp, m->upstreams[i]);
			fputc('\n', fp);
		}
	}
	if (m->tenant[0] != '\0') {
		fprintf(fp, "tenant: ");
		y_printstr(fp, m->tenant);
		fputc('\n', fp);
	}
}

/* The cohort, last: its size and each variant's env and model. */
static void
m_printcohort(FILE *fp, const struct manifest *m)
{
	int	 i;

	if (m->cohort_size == 0)
		return;
	fprintf(fp, "cohort:\n  size: %d\n", m->cohort_size);
	if (m->cohort_nvariants == 0)
		return;
	fprintf(fp, "  variants:\n");
	for (i = 0; i < m->cohort_nvariants; i++) {
		fprintf(fp, "    - ");
		m_printenv(fp, "      ", m->cohort_env[i]);
		if (m->cohort_model[i].provider[0] == '\0')
			continue;
		fprintf(fp, "      model:\n");
		m_printgrant(fp, "        ", &m->cohort_model[i]);
	}
}

void
manifest_print(FILE *fp, const struct manifest *m)
{
	const struct manifest_limits	*l = &m->limits;

	fprintf(fp, "repository: ");
	y_printstr(fp, m->repository);
	fprintf(fp, "\nbaseline: ");
	y_printstr(fp, m->baseline);
	fprintf(fp, "\ntitle: ");
	y_printstr(fp, m->title);
	fputc('\n', fp);
	m_printlist(fp, "", "scope", m->scope);
	m_printlist(fp, "", "agent", m->agent);
	m_printlist(fp, "", "validate", m->validate);
	m_printenv(fp, "", m->env);
	fprintf(fp, "limits:\n  wall: ");
	y_printduration(fp, l->wall_ms);
	fprintf(fp, "\n  cpu: ");
	y_printduration(fp, l->cpu_ms);
	fprintf(fp, "\n  memory: ");
	y_printsize(fp, l->memory);
	fprintf(fp, "\n  pids: %llu\n  tree: ", (unsigned long long)l->pids);
	y_printsize(fp, l->tree);
	fprintf(fp, "\n  log: ");
	y_printsize(fp, l->log);
	fputc('\n', fp);
	if (l->disk != 0) {
		fprintf(fp, "  disk: ");
		y_printsize(fp, l->disk);
		fputc('\n', fp);
	}
	if (m->allow == NULL)
		fprintf(fp, "network: none\n");
	else {
		fprintf(fp, "network:\n");
		m_printlist(fp, "  ", "allow", m->allow);
	}
	if (m->exec != NULL)
		m_printlist(fp, "", "exec", m->exec);
	fprintf(fp, "approval: %s\n",
	    m->approval == APPROVAL_MANUAL ? "manual" : "auto");
	if (m->image[0] != '\0') {
		fprintf(fp, "environment:\n  image: ");
		y_printstr(fp, m->image);
		fputc('\n', fp);
		if (m->toolchain != NULL)
			m_printlist(fp, "  ", "toolchain", m->toolchain);
	}
	if (m->setup != NULL)
		m_printsetup(fp, m->setup);
	m_printservices(fp, m);
	if (m->preview.enabled) {
		fprintf(fp, "preview:\n  port: %u\n  service: %s\n",
		    (unsigned)m->preview.port,
		    m->preview.service == PREVIEW_AGENT ? "agent" :
		    m->services[m->preview.service].name);
		if (m->preview.health[0] != '\0') {
			fprintf(fp, "  health: ");
			y_printstr(fp, m->preview.health);
			fputc('\n', fp);
		}
	}
	m_printmodel(fp, m);
	m_printcohort(fp, m);
}
