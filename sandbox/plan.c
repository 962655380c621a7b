/*
 * The plan of one sandbox as bytes: what the parent computed (the
 * spec, the resolved tree, masks and binds, the compiled seccomp
 * program), sent to the launcher as one message on its socket.  The
 * parent is the launcher's only peer and is trusted, but the launcher
 * still decodes field by field: every count and length has a bound,
 * strings carry no NUL, paths are absolute, nothing is left over.
 *
 * Format, integers in host order (the peer is on this host):
 *
 *	u32 magic "SBXP", u32 version
 *	str id; u32 uid, gid; str tree
 *	strv argv; strv env; optstrv exec_allow; u8 has_image [str image]
 *	strv hide
 *	u32 n, n x (str path, u8 exec)		binds
 *	u32 ncgroups; u8 pooled; u8 memfd_noexec
 *	u64 cpu_ms, fsize, nofile
 *	u32 n, n x (u32 len, len bytes, u8 addlo)	egress endpoints
 *	u8 has_hosts [str hosts]
 *	strv home				pairs: a file below HOME, its bytes
 *	u32 n, n x 8 bytes			the seccomp program
 *
 * str is u32 length and bytes; strv is u32 count and strings;
 * optstrv's count is 0xffffffff for "none given".
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx.h"

#define PLAN_MAGIC	0x50584253U	/* "SBXP" */
#define ENTER_MAGIC	0x45584253U	/* "SBXE" */
#define PLAN_VERSION	4U
#define PLAN_NONE	0xffffffffU
#define PLAN_MAXARGV	4096
#define PLAN_MAXENV	4096
#define PLAN_MAXPATHS	256
#define PLAN_MAXHOSTS	(64 * 1024)
#define PLAN_MAXID	63

struct wbuf {
	unsigned char	*p;
	size_t		 len, cap;
	int		 failed;
};

static void
put(struct wbuf *w, const void *data, size_t len)
{
	unsigned char	*n;
	size_t		 cap;

	if (w->failed)
		return;
	if (w->len + len > SBX_PLAN_MAX) {
		w->failed = E2BIG;
		return;
	}
	if (w->len + len > w->cap) {
		cap = w->cap == 0 ? 4096 : w->cap;
		while (cap < w->len + len)
			cap *= 2;
		if ((n = realloc(w->p, cap)) == NULL) {
			w->failed = ENOMEM;
			return;
		}
		w->p = n;
		w->cap = cap;
	}
	memcpy(w->p + w->len, data, len);
	w->len += len;
}

static void
put_u8(struct wbuf *w, uint8_t v)
{
	put(w, &v, sizeof(v));
}

static void
put_u32(struct wbuf *w, uint32_t v)
{
	put(w, &v, sizeof(v));
}

static void
put_u64(struct wbuf *w, uint64_t v)
{
	put(w, &v, sizeof(v));
}

static void
put_str(struct wbuf *w, const char *s)
{
	size_t	 len = strlen(s);

	put_u32(w, (uint32_t)len);
	put(w, s, len);
}

static void
put_strv(struct wbuf *w, char *const *v, int optional)
{
	uint32_t	 n = 0;

	if (v == NULL) {
		put_u32(w, optional ? PLAN_NONE : 0);
		return;
	}
	while (v[n] != NULL)
		n++;
	put_u32(w, n);
	for (n = 0; v[n] != NULL; n++)
		put_str(w, v[n]);
}

/* Who runs what, where: shared with the enter plan. */
static void
put_who(struct wbuf *w, const struct sandbox_spec *spec, const char *tree,
    const char *image)
{
	put_str(w, spec->id);
	put_u32(w, spec->uid);
	put_u32(w, spec->gid);
	put_str(w, tree);
	put_strv(w, spec->argv, 0);
	put_strv(w, spec->env, 0);
	put_strv(w, spec->exec_allow, 1);
	put_u8(w, image != NULL);
	if (image != NULL)
		put_str(w, image);
}

static void *
put_done(struct wbuf *w, size_t *lenp)
{
	if (w->failed) {
		free(w->p);
		errno = w->failed;
		return (NULL);
	}
	*lenp = w->len;
	return (w->p);
}

void *
sbx_plan_encode(const struct sbx_plan *pl, const struct sock_fprog *prog,
    size_t *lenp)
{
	const struct sandbox_spec *spec = pl->spec;
	struct wbuf	 w = { NULL, 0, 0, 0 };
	uint32_t	 n;
	int		 i;

	put_u32(&w, PLAN_MAGIC);
	put_u32(&w, PLAN_VERSION);
	put_who(&w, spec, pl->tree, pl->image[0] != '\0' ? pl->image : NULL);
	put_u32(&w, (uint32_t)pl->nhide);
	for (i = 0; i < pl->nhide; i++)
		put_str(&w, pl->hide[i]);
	put_u32(&w, (uint32_t)pl->nbinds);
	for (i = 0; i < pl->nbinds; i++) {
		put_str(&w, pl->binds[i]);
		put_u8(&w, pl->bexec[i] != 0);
	}
	put_u32(&w, (uint32_t)pl->ncgroups);
	put_u8(&w, pl->netfd != -1);
	put_u8(&w, pl->memfd_noexec != 0);
	put_u64(&w, spec->cpu_ms);
	put_u64(&w, spec->fsize);
	put_u64(&w, spec->nofile);
	put_u32(&w, (uint32_t)spec->nlisten);
	for (i = 0; i < spec->nlisten; i++) {
		put_u32(&w, spec->listen[i].addrlen);
		put(&w, &spec->listen[i].addr, spec->listen[i].addrlen);
		put_u8(&w, spec->listen[i].addlo != 0);
	}
	put_u8(&w, spec->hosts != NULL);
	if (spec->hosts != NULL)
		put_str(&w, spec->hosts);
	for (n = 0; spec->home != NULL && spec->home[n] != NULL; n++)
		;
	put_u32(&w, n);
	for (i = 0; i < (int)n; i++)
		put_str(&w, spec->home[i]);
	put_u32(&w, prog->len);
	put(&w, prog->filter, (size_t)prog->len * sizeof(*prog->filter));
	return (put_done(&w, lenp));
}

/*
 * The decoded plan and everything it points to: the spec, the arrays
 * and one arena for the strings, which never needs more bytes than
 * the input (each string's 4-byte length pays for its NUL).
 */
struct plan_out {
	struct sbx_plan		 pl;	/* first: sbx_plan_free() casts */
	struct sandbox_spec	 spec;
	char			*arena;
	size_t			 used;
	char			**argv;
	char			**env;
	char			**exec;
	char			**home;
	struct sandbox_listen	*listen;
	struct sock_filter	*bpf;
};

struct rbuf {
	const unsigned char	*p;
	size_t			 left;
	char			*arena;		/* len + 1 bytes */
	size_t			 used;
	char			*err;
	size_t			 errlen;
	int			 failed;
};

/*
 * A reader over one plan of at most SBX_PLAN_MAX bytes; its strings
 * are copied, NUL-terminated, into a new arena of len + 1 bytes.
 */
static int
rbuf_open(struct rbuf *r, const void *data, size_t len, char **arena,
    char *err, size_t errlen)
{
	if (len > SBX_PLAN_MAX) {
		snprintf(err, errlen, "plan: %zu bytes, more than %d", len,
		    SBX_PLAN_MAX);
		return (-1);
	}
	if ((*arena = malloc(len + 1)) == NULL) {
		snprintf(err, errlen, "plan: out of memory");
		return (-1);
	}
	memset(r, 0, sizeof(*r));
	r->p = data;
	r->left = len;
	r->arena = *arena;
	r->err = err;
	r->errlen = errlen;
	return (0);
}

static void
bad(struct rbuf *r, const char *fmt, ...)
{
	char	 msg[256];
	va_list	 ap;

	if (r->failed)
		return;
	r->failed = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "plan: %s", msg);
}

static int
get(struct rbuf *r, void *data, size_t len, const char *field)
{
	if (r->failed)
		return (-1);
	if (len > r->left) {
		bad(r, "%s: truncated", field);
		return (-1);
	}
	memcpy(data, r->p, len);
	r->p += len;
	r->left -= len;
	return (0);
}

static uint32_t
get_u32(struct rbuf *r, const char *field)
{
	uint32_t	 v = 0;

	(void)get(r, &v, sizeof(v), field);
	return (v);
}

static uint64_t
get_u64(struct rbuf *r, const char *field)
{
	uint64_t	 v = 0;

	(void)get(r, &v, sizeof(v), field);
	return (v);
}

static int
get_bool(struct rbuf *r, const char *field)
{
	uint8_t	 v = 0;

	if (get(r, &v, sizeof(v), field) == 0 && v > 1)
		bad(r, "%s: %u is not 0 or 1", field, v);
	return (v);
}

/* A string of at most max bytes, NUL-terminated in the arena. */
static char *
get_str(struct rbuf *r, size_t max, const char *field)
{
	uint32_t	 len = get_u32(r, field);
	char		*s;

	if (r->failed)
		return (NULL);
	if (len > max || len > r->left) {
		bad(r, "%s: length %u out of bounds", field, len);
		return (NULL);
	}
	if (memchr(r->p, '\0', len) != NULL) {
		bad(r, "%s: contains a NUL", field);
		return (NULL);
	}
	s = r->arena + r->used;
	memcpy(s, r->p, len);
	s[len] = '\0';
	r->used += len + 1;
	r->p += len;
	r->left -= len;
	return (s);
}

static char *
get_path(struct rbuf *r, const char *field)
{
	char	*s = get_str(r, PATH_MAX - 1, field);

	if (s != NULL && s[0] != '/')
		bad(r, "%s: not an absolute path", field);
	return (s);
}

/* A count of at most max, then an array of n + 1 pointers. */
static char **
get_strv(struct rbuf *r, uint32_t max, int optional, int paths,
    const char *field)
{
	char		 name[64];
	char		**v;
	uint32_t	 n = get_u32(r, field), i;

	if (r->failed || (optional && n == PLAN_NONE))
		return (NULL);
	if (n > max) {
		bad(r, "%s: %u entries, more than %u", field, n, max);
		return (NULL);
	}
	if ((v = calloc(n + 1, sizeof(*v))) == NULL) {
		bad(r, "%s: out of memory", field);
		return (NULL);
	}
	for (i = 0; i < n && !r->failed; i++) {
		snprintf(name, sizeof(name), "%s[%u]", field, i);
		v[i] = paths ? get_path(r, name) :
		    get_str(r, SBX_PLAN_MAX, name);
	}
	return (v);
}

static int
get_paths(struct rbuf *r, char (**out)[PATH_MAX], uint32_t max,
    const char *field)
{
	char		 name[64], *s;
	uint32_t	 n = get_u32(r, field), i;

	if (r->failed)
		return (0);
	if (n > max) {
		bad(r, "%s: %u entries, more than %u", field, n, max);
		return (0);
	}
	if (n > 0 && (*out = calloc(n, sizeof(**out))) == NULL) {
		bad(r, "%s: out of memory", field);
		return (0);
	}
	for (i = 0; i < n && !r->failed; i++) {
		snprintf(name, sizeof(name), "%s[%u]", field, i);
		if ((s = get_path(r, name)) != NULL)
			strlcpy((*out)[i], s, PATH_MAX);
	}
	return (int)n;
}

static void
get_id(struct rbuf *r, struct sandbox_spec *spec)
{
	const char	*s = get_str(r, PLAN_MAXID, "id");

	if (s == NULL)
		return;
	if (s[0] == '\0' || s[0] == '.' || strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(s))
		bad(r, "id: not a plain name");
	spec->id = s;
}

static void
get_binds(struct rbuf *r, struct sbx_plan *pl)
{
	char		 name[64], *s;
	uint32_t	 n = get_u32(r, "binds"), i;

	if (r->failed)
		return;
	if (n > SANDBOX_MAXBINDS) {
		bad(r, "binds: %u entries, more than %d", n, SANDBOX_MAXBINDS);
		return;
	}
	if ((pl->binds = calloc(n + 1, sizeof(*pl->binds))) == NULL ||
	    (pl->bexec = calloc(n + 1, sizeof(*pl->bexec))) == NULL) {
		bad(r, "binds: out of memory");
		return;
	}
	for (i = 0; i < n && !r->failed; i++) {
		snprintf(name, sizeof(name), "binds[%u]", i);
		if ((s = get_path(r, name)) != NULL)
			strlcpy(pl->binds[i], s, PATH_MAX);
		snprintf(name, sizeof(name), "binds[%u].exec", i);
		pl->bexec[i] = get_bool(r, name);
	}
	pl->nbinds = (int)n;
}

static void
get_listen(struct rbuf *r, struct plan_out *o)
{
	struct sandbox_listen	*l;
	char			 name[64];
	uint32_t		 n = get_u32(r, "listen"), i;
	sa_family_t		 fam;

	if (r->failed)
		return;
	if (n > SANDBOX_MAXLISTEN) {
		bad(r, "listen: %u endpoints, more than %d", n,
		    SANDBOX_MAXLISTEN);
		return;
	}
	if (n > 0 && (o->listen = calloc(n, sizeof(*o->listen))) == NULL) {
		bad(r, "listen: out of memory");
		return;
	}
	for (i = 0; i < n && !r->failed; i++) {
		l = &o->listen[i];
		snprintf(name, sizeof(name), "listen[%u]", i);
		l->addrlen = get_u32(r, name);
		if (!r->failed && l->addrlen != sizeof(struct sockaddr_in) &&
		    l->addrlen != sizeof(struct sockaddr_in6)) {
			bad(r, "%s: address length %u", name, l->addrlen);
			break;
		}
		if (get(r, &l->addr, l->addrlen, name) == -1)
			break;
		fam = l->addr.ss_family;
		if (!((fam == AF_INET && l->addrlen ==
		    sizeof(struct sockaddr_in)) || (fam == AF_INET6 &&
		    l->addrlen == sizeof(struct sockaddr_in6))))
			bad(r, "%s: family %u with length %u", name, fam,
			    l->addrlen);
		snprintf(name, sizeof(name), "listen[%u].addlo", i);
		l->addlo = get_bool(r, name);
	}
	o->spec.listen = o->listen;
	o->spec.nlisten = (int)n;
}

static void
get_prog(struct rbuf *r, struct sock_filter **bpf, struct sock_fprog *prog)
{
	uint32_t	 n = get_u32(r, "seccomp");

	if (r->failed)
		return;
	if (n == 0 || n > SBX_BPF_MAX) {
		bad(r, "seccomp: %u instructions, not 1 to %d", n,
		    SBX_BPF_MAX);
		return;
	}
	if ((*bpf = calloc(n, sizeof(**bpf))) == NULL) {
		bad(r, "seccomp: out of memory");
		return;
	}
	if (get(r, *bpf, (size_t)n * sizeof(**bpf), "seccomp") == 0) {
		prog->len = (unsigned short)n;
		prog->filter = *bpf;
	}
}

/*
 * Who runs what, where: the part an agent's plan and an enter plan
 * share.  tree has PATH_MAX bytes.
 */
/*
 * The image's rootfs: absolute, not /, and nothing the overlay's
 * option string would read as a separator (',' ':' '\\').
 */
static void
get_image(struct rbuf *r, struct sandbox_spec *spec)
{
	const char	*s;

	spec->image = NULL;
	if (!get_bool(r, "image"))
		return;
	if ((s = get_path(r, "image")) == NULL)
		return;
	if (strcmp(s, "/") == 0)
		bad(r, "image: may not be /");
	else if (strpbrk(s, ",:\\") != NULL)
		bad(r, "image: contains ',', ':' or '\\'");
	spec->image = s;
}

static void
get_who(struct rbuf *r, struct sandbox_spec *spec, char *tree, char ***argv,
    char ***env, char ***exec)
{
	char	*s;

	get_id(r, spec);
	spec->uid = get_u32(r, "uid");
	spec->gid = get_u32(r, "gid");
	if (!r->failed && (spec->uid == 0 || spec->gid == 0))
		bad(r, "uid, gid: the agent may not run as root");
	if ((s = get_path(r, "tree")) != NULL) {
		if (strcmp(s, "/") == 0)
			bad(r, "tree: may not be /");
		strlcpy(tree, s, PATH_MAX);
	}
	*argv = get_strv(r, PLAN_MAXARGV, 0, 0, "argv");
	if (!r->failed && ((*argv)[0] == NULL || (*argv)[0][0] != '/'))
		bad(r, "argv[0]: not an absolute path");
	*env = get_strv(r, PLAN_MAXENV, 0, 0, "env");
	*exec = get_strv(r, PLAN_MAXPATHS, 1, 1, "exec");
	get_image(r, spec);
}

/*
 * Files below the agent's HOME (its private /tmp) that pid 1 writes
 * before the agent runs: what a client reads to find its endpoint
 * (supervisord-factory/agents.c).  A name is a relative path of at
 * most SBX_HOMEDEPTH plain components, none of them "." or "..", so
 * pid 1 cannot be led outside /tmp; each file has at most
 * SBX_HOMEFILE bytes.
 */
static void
get_homefiles(struct rbuf *r, struct plan_out *o)
{
	uint32_t	 i;

	o->home = get_strv(r, 2 * SBX_HOMEFILES, 0, 0, "home");
	for (i = 0; !r->failed && o->home[i] != NULL; i += 2) {
		if (o->home[i + 1] == NULL) {
			bad(r, "home: a name without its content");
			return;
		}
		if (sbx_home_name(o->home[i]) == -1)
			bad(r, "home[%u]: not a plain relative path", i);
		else if (strlen(o->home[i + 1]) > SBX_HOMEFILE)
			bad(r, "home[%u]: more than %d bytes", i + 1,
			    SBX_HOMEFILE);
	}
}

/* 0 if name is a relative path of plain components (get_homefiles). */
int
sbx_home_name(const char *name)
{
	size_t	 n, depth = 0;
	const char *p = name;

	if (strlen(name) > SBX_HOMENAME)
		return (-1);
	for (;;) {
		n = strspn(p, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.') ||
		    ++depth > SBX_HOMEDEPTH)
			return (-1);
		if (p[n] == '\0')
			return (0);
		if (p[n] != '/')
			return (-1);
		p += n + 1;
	}
}

static void
get_all(struct rbuf *r, struct plan_out *o, struct sock_fprog *prog)
{
	struct sandbox_spec	*spec = &o->spec;
	struct sbx_plan		*pl = &o->pl;

	if (get_u32(r, "magic") != PLAN_MAGIC && !r->failed)
		bad(r, "magic: not a sandbox plan");
	if (get_u32(r, "version") != PLAN_VERSION && !r->failed)
		bad(r, "version: not %u", PLAN_VERSION);
	get_who(r, spec, pl->tree, &o->argv, &o->env, &o->exec);
	pl->nhide = get_paths(r, &pl->hide, PLAN_MAXPATHS, "hide");
	get_binds(r, pl);
	pl->ncgroups = (int)get_u32(r, "ncgroups");
	if (!r->failed && (pl->ncgroups < 0 || pl->ncgroups > SANDBOX_MAXCG))
		bad(r, "ncgroups: %d out of bounds", pl->ncgroups);
	pl->netfd = pl->ipcfd = get_bool(r, "pooled") ? 0 : -1;
	pl->memfd_noexec = get_bool(r, "memfd_noexec");
	spec->cpu_ms = get_u64(r, "cpu_ms");
	spec->fsize = get_u64(r, "fsize");
	spec->nofile = get_u64(r, "nofile");
	get_listen(r, o);
	if (get_bool(r, "hosts"))
		spec->hosts = get_str(r, PLAN_MAXHOSTS, "hosts");
	get_homefiles(r, o);
	get_prog(r, &o->bpf, prog);
	if (!r->failed && r->left != 0)
		bad(r, "%zu bytes after the end", r->left);
	spec->tree = pl->tree;
	spec->argv = o->argv;
	spec->env = o->env;
	spec->exec_allow = o->exec;
	spec->home = o->home;
	if (spec->image != NULL)
		strlcpy(pl->image, spec->image, sizeof(pl->image));
	pl->spec = spec;
}

struct sbx_plan *
sbx_plan_decode(const void *data, size_t len, struct sock_fprog *prog,
    char *err, size_t errlen)
{
	struct plan_out	*o;
	struct rbuf	 r;

	prog->len = 0;
	prog->filter = NULL;
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		snprintf(err, errlen, "plan: out of memory");
		return (NULL);
	}
	if (rbuf_open(&r, data, len, &o->arena, err, errlen) == -1) {
		free(o);
		return (NULL);
	}
	get_all(&r, o, prog);
	if (r.failed) {
		prog->len = 0;
		prog->filter = NULL;
		sbx_plan_free(&o->pl);
		return (NULL);
	}
	return (&o->pl);
}

void
sbx_plan_free(struct sbx_plan *pl)
{
	struct plan_out	*o = (struct plan_out *)pl;

	if (o == NULL)
		return;
	free(o->pl.hide);
	free(o->pl.binds);
	free(o->pl.bexec);
	free(o->argv);
	free(o->env);
	free(o->exec);
	free(o->home);
	free(o->listen);
	free(o->bpf);
	free(o->arena);
	free(o);
}

/*
 * The enter plan: factoryctl shell's waiter, which joins a running
 * sandbox (sbx.h, SBX_EFD_*).  After the shared part:
 *
 *	u64 cpu_ms, fsize, nofile
 *	u32 n, n x u16				egress ports (Landlock)
 *	u32 nprocs; str home; str cgname
 *	u32 n, n x 8 bytes			the seccomp program
 */
void *
sbx_enter_encode(const struct sbx_enter *en, const struct sock_fprog *prog,
    size_t *lenp)
{
	const struct sandbox_spec *spec = en->spec;
	struct wbuf	 w = { NULL, 0, 0, 0 };
	int		 i;

	put_u32(&w, ENTER_MAGIC);
	put_u32(&w, PLAN_VERSION);
	put_who(&w, spec, en->tree, spec->image);
	put_u64(&w, spec->cpu_ms);
	put_u64(&w, spec->fsize);
	put_u64(&w, spec->nofile);
	put_u32(&w, (uint32_t)en->nports);
	for (i = 0; i < en->nports && i < SANDBOX_MAXLISTEN; i++)
		put(&w, &en->ports[i], sizeof(en->ports[i]));
	put_u32(&w, (uint32_t)en->nprocs);
	put_str(&w, en->home);
	put_str(&w, en->cgname);
	put_u32(&w, prog->len);
	put(&w, prog->filter, (size_t)prog->len * sizeof(*prog->filter));
	return (put_done(&w, lenp));
}

struct enter_out {
	struct sbx_enter	 en;	/* first: sbx_enter_free() casts */
	struct sandbox_spec	 spec;
	char			*arena;
	char			**argv;
	char			**env;
	char			**exec;
	struct sock_filter	*bpf;
};

static void
get_ports(struct rbuf *r, struct sbx_enter *en)
{
	char		 name[64];
	uint32_t	 n = get_u32(r, "ports"), i;

	if (r->failed)
		return;
	if (n > SANDBOX_MAXLISTEN) {
		bad(r, "ports: %u, more than %d", n, SANDBOX_MAXLISTEN);
		return;
	}
	for (i = 0; i < n && !r->failed; i++) {
		snprintf(name, sizeof(name), "ports[%u]", i);
		if (get(r, &en->ports[i], sizeof(en->ports[i]), name) == 0 &&
		    en->ports[i] == 0)
			bad(r, "%s: port 0", name);
	}
	en->nports = (int)n;
}

/*
 * HOME: a mkdtemp(3) template directly in /tmp, the only place the
 * waiter creates anything; the cgroup: shell-<digits>, one name below
 * the attempt's cgroup2 directory.
 */
static void
get_home(struct rbuf *r, struct sbx_enter *en)
{
	const char	*s = get_path(r, "home");
	size_t		 len;

	if (s == NULL || r->failed)
		return;
	len = strlen(s);
	/* At least one character of a name before XXXXXX: never . or .. */
	if (strncmp(s, "/tmp/", 5) != 0 || len < 5 + 7 ||
	    strchr(s + 5, '/') != NULL || strcmp(s + len - 6, "XXXXXX") != 0) {
		bad(r, "home: not a template /tmp/NAMEXXXXXX");
		return;
	}
	strlcpy(en->home, s, sizeof(en->home));
}

static void
get_cgname(struct rbuf *r, struct sbx_enter *en)
{
	const char	*s = get_str(r, sizeof(en->cgname) - 1, "cgname");

	if (s == NULL || r->failed)
		return;
	if (strncmp(s, "shell-", 6) != 0 || s[6] == '\0' ||
	    strspn(s + 6, "0123456789") != strlen(s + 6)) {
		bad(r, "cgname: not shell-N");
		return;
	}
	strlcpy(en->cgname, s, sizeof(en->cgname));
}

static void
get_enter(struct rbuf *r, struct enter_out *o, struct sock_fprog *prog)
{
	struct sandbox_spec	*spec = &o->spec;
	struct sbx_enter	*en = &o->en;

	if (get_u32(r, "magic") != ENTER_MAGIC && !r->failed)
		bad(r, "magic: not an enter plan");
	if (get_u32(r, "version") != PLAN_VERSION && !r->failed)
		bad(r, "version: not %u", PLAN_VERSION);
	get_who(r, spec, en->tree, &o->argv, &o->env, &o->exec);
	spec->cpu_ms = get_u64(r, "cpu_ms");
	spec->fsize = get_u64(r, "fsize");
	spec->nofile = get_u64(r, "nofile");
	get_ports(r, en);
	en->nprocs = (int)get_u32(r, "nprocs");
	if (!r->failed && (en->nprocs < 1 || en->nprocs > SANDBOX_MAXCG))
		bad(r, "nprocs: %d out of bounds", en->nprocs);
	get_home(r, en);
	get_cgname(r, en);
	get_prog(r, &o->bpf, prog);
	if (!r->failed && r->left != 0)
		bad(r, "%zu bytes after the end", r->left);
	spec->tree = en->tree;
	spec->argv = o->argv;
	spec->env = o->env;
	spec->exec_allow = o->exec;
	spec->logfd = -1;
	en->spec = spec;
}

struct sbx_enter *
sbx_enter_decode(const void *data, size_t len, struct sock_fprog *prog,
    char *err, size_t errlen)
{
	struct enter_out	*o;
	struct rbuf		 r;

	prog->len = 0;
	prog->filter = NULL;
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		snprintf(err, errlen, "plan: out of memory");
		return (NULL);
	}
	if (rbuf_open(&r, data, len, &o->arena, err, errlen) == -1) {
		free(o);
		return (NULL);
	}
	get_enter(&r, o, prog);
	if (r.failed) {
		prog->len = 0;
		prog->filter = NULL;
		sbx_enter_free(&o->en);
		return (NULL);
	}
	return (&o->en);
}

void
sbx_enter_free(struct sbx_enter *en)
{
	struct enter_out	*o = (struct enter_out *)en;

	if (o == NULL)
		return;
	free(o->argv);
	free(o->env);
	free(o->exec);
	free(o->bpf);
	free(o->arena);
	free(o);
}
