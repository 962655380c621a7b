/*
 * The plan of one sandbox as bytes: what the parent computed (the
 * spec, the resolved tree, masks and binds, the compiled seccomp
 * program), sent to the launcher as one message on its socket.  The
 * parent is the launcher's only peer and is trusted, but the launcher
 * still decodes field by field: every count and length has a bound,
 * strings carry no NUL, paths are absolute, nothing is left over.
 *
 * Format, integers in network order (ibuf_add_n*), as egressmsg.c:
 *
 *	u32 magic "SBXP", u32 version
 *	str id; u32 uid, gid; str tree
 *	strv argv; strv env; optstrv exec_allow; u8 has_image [str image]
 *	strv hide
 *	u32 n, n x (str path, u8 exec)		binds
 *	u32 ncgroups; u8 pooled; u8 memfd_noexec
 *	u64 cpu_ms, fsize, nofile, watchdog
 *	u32 n, n x (u32 len, len bytes, u8 addlo)	egress endpoints
 *	u8 has_hosts [str hosts]
 *	strv home				pairs: a file below HOME, its bytes
 *	u8 lo; u8 passwd; u32 n, n x u16 connect; u32 n, n x u16 bind;
 *	u32 n, n x u16 reserve
 *	optstrv ready
 *	u64 tree_dev, tree_ino			the tree's pin, or 0, 0
 *	u8 has_data [str data_root; u64 data_dev, data_ino; strv data]
 *	u32 n, n x 8 bytes			the seccomp program
 *
 * str is u32 length and bytes; strv is u32 count and strings;
 * optstrv's count is 0xffffffff for "none given".  A seccomp
 * instruction is u16 code, u8 jt, u8 jf, u32 k; an endpoint's address
 * is the sockaddr's bytes as the kernel takes them.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>
#include <linux/nsfs.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "plan.h"
#include "util.h"

#define PLAN_MAGIC	0x53425850U	/* "SBXP" on the wire */
#define ENTER_MAGIC	0x53425845U	/* "SBXE" on the wire */
#define PLAN_VERSION	9U
#define PLAN_NONE	0xffffffffU
#define PLAN_MAXARGV	4096
#define PLAN_MAXENV	4096
#define PLAN_MAXPATHS	256
#define PLAN_MAXHOSTS	(64 * 1024)
#define PLAN_MAXID	63

/*
 * The writer: an ibuf that may grow to SBX_PLAN_MAX; the first failure
 * sticks (errno E2BIG past the bound, else ENOMEM) and later puts do
 * nothing, so an encoder reads as its format.
 */
struct wbuf {
	struct ibuf	*b;
	int		 failed;
};

static void
put_check(struct wbuf *w, int rc)
{
	if (rc == -1 && w->failed == 0)
		w->failed = errno == ERANGE ? E2BIG : ENOMEM;
}

static void
put(struct wbuf *w, const void *data, size_t len)
{
	if (!w->failed)
		put_check(w, ibuf_add(w->b, data, len));
}

static void
put_u8(struct wbuf *w, uint8_t v)
{
	if (!w->failed)
		put_check(w, ibuf_add_n8(w->b, v));
}

static void
put_u16(struct wbuf *w, uint16_t v)
{
	if (!w->failed)
		put_check(w, ibuf_add_n16(w->b, v));
}

static void
put_u32(struct wbuf *w, uint32_t v)
{
	if (!w->failed)
		put_check(w, ibuf_add_n32(w->b, v));
}

static void
put_u64(struct wbuf *w, uint64_t v)
{
	if (!w->failed)
		put_check(w, ibuf_add_n64(w->b, v));
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

static void
put_prog(struct wbuf *w, const struct sock_fprog *prog)
{
	int	 i;

	put_u32(w, prog->len);
	for (i = 0; i < prog->len; i++) {
		put_u16(w, prog->filter[i].code);
		put_u8(w, prog->filter[i].jt);
		put_u8(w, prog->filter[i].jf);
		put_u32(w, prog->filter[i].k);
	}
}

static int
put_open(struct wbuf *w)
{
	w->failed = 0;
	return ((w->b = ibuf_dynamic(4096, SBX_PLAN_MAX)) == NULL ? -1 : 0);
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

/* The bytes, the caller's to free(3); NULL and errno if not all fit. */
static void *
put_done(struct wbuf *w, size_t *lenp)
{
	void	*data;

	if (w->failed) {
		ibuf_free(w->b);
		errno = w->failed;
		return (NULL);
	}
	*lenp = ibuf_size(w->b);
	if ((data = malloc(*lenp > 0 ? *lenp : 1)) == NULL) {
		ibuf_free(w->b);
		return (NULL);
	}
	memcpy(data, ibuf_data(w->b), *lenp);
	ibuf_free(w->b);
	return (data);
}

void *
plan_encode(const struct plan *pl, const struct sock_fprog *prog,
    size_t *lenp)
{
	const struct sandbox_spec *spec = pl->spec;
	struct wbuf	 w;
	uint32_t	 n;
	int		 i;

	if (put_open(&w) == -1)
		return (NULL);
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
	put_u64(&w, spec->watchdog_ms);
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
	put_u8(&w, spec->lo != 0);
	put_u8(&w, spec->passwd != 0);
	put_u32(&w, (uint32_t)spec->nconnect);
	for (i = 0; i < spec->nconnect; i++)
		put_u16(&w, spec->connect[i]);
	put_u32(&w, (uint32_t)spec->nbind);
	for (i = 0; i < spec->nbind; i++)
		put_u16(&w, spec->bind[i]);
	put_u32(&w, (uint32_t)spec->nreserve);
	for (i = 0; i < spec->nreserve; i++)
		put_u16(&w, spec->reserve[i]);
	put_strv(&w, spec->ready, 1);
	put_u64(&w, spec->tree_dev);
	put_u64(&w, spec->tree_ino);
	put_u8(&w, spec->data_root != NULL);
	if (spec->data_root != NULL) {
		put_str(&w, spec->data_root);
		put_u64(&w, spec->data_dev);
		put_u64(&w, spec->data_ino);
		put_strv(&w, spec->data, 0);
	}
	put_prog(&w, prog);
	return (put_done(&w, lenp));
}

/*
 * The decoded plan and everything it points to: the spec, the arrays
 * and one arena for the strings, which never needs more bytes than
 * the input (each string's 4-byte length pays for its NUL).
 */
struct plan_out {
	struct plan		 pl;	/* first: plan_free() casts */
	struct sandbox_spec	 spec;
	char			*arena;
	size_t			 used;
	char			**argv;
	char			**env;
	char			**exec;
	char			**home;
	char			**ready;
	char			**data;
	struct sandbox_listen	*listen;
	uint16_t		 connect[SANDBOX_SVCPORTS];
	uint16_t		 bind[SANDBOX_SVCPORTS];
	uint16_t		 reserve[SANDBOX_SVCPORTS];
	struct sock_filter	*bpf;
};

/*
 * The reader: an ibuf over the caller's bytes, the arena the strings
 * are copied to, and the first failure, which names its field.
 */
struct rbuf {
	struct ibuf	 b;
	char		*arena;		/* len + 1 bytes */
	size_t		 used;
	char		*err;
	size_t		 errlen;
	int		 failed;
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
	ibuf_from_buffer(&r->b, (void *)data, len);
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

/* Whether a getter failed; then the field is named as truncated. */
static int
got(struct rbuf *r, int rc, const char *field)
{
	if (r->failed)
		return (-1);
	if (rc == -1) {
		bad(r, "%s: truncated", field);
		return (-1);
	}
	return (0);
}

static int
get(struct rbuf *r, void *data, size_t len, const char *field)
{
	return (r->failed ? -1 : got(r, ibuf_get(&r->b, data, len), field));
}

static uint8_t
get_u8(struct rbuf *r, const char *field)
{
	uint8_t	 v = 0;

	if (!r->failed)
		(void)got(r, ibuf_get_n8(&r->b, &v), field);
	return (v);
}

static uint16_t
get_u16(struct rbuf *r, const char *field)
{
	uint16_t	 v = 0;

	if (!r->failed)
		(void)got(r, ibuf_get_n16(&r->b, &v), field);
	return (v);
}

static uint32_t
get_u32(struct rbuf *r, const char *field)
{
	uint32_t	 v = 0;

	if (!r->failed)
		(void)got(r, ibuf_get_n32(&r->b, &v), field);
	return (v);
}

static uint64_t
get_u64(struct rbuf *r, const char *field)
{
	uint64_t	 v = 0;

	if (!r->failed)
		(void)got(r, ibuf_get_n64(&r->b, &v), field);
	return (v);
}

static int
get_bool(struct rbuf *r, const char *field)
{
	uint8_t	 v = get_u8(r, field);

	if (v > 1)
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
	if (len > max || len > ibuf_size(&r->b)) {
		bad(r, "%s: length %u out of bounds", field, len);
		return (NULL);
	}
	if (memchr(ibuf_data(&r->b), '\0', len) != NULL) {
		bad(r, "%s: contains a NUL", field);
		return (NULL);
	}
	s = r->arena + r->used;
	(void)ibuf_get(&r->b, s, len);
	s[len] = '\0';
	r->used += len + 1;
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
get_binds(struct rbuf *r, struct plan *pl)
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
	uint32_t	 n = get_u32(r, "seccomp"), i;

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
	for (i = 0; i < n && !r->failed; i++) {
		(*bpf)[i].code = get_u16(r, "seccomp");
		(*bpf)[i].jt = get_u8(r, "seccomp");
		(*bpf)[i].jf = get_u8(r, "seccomp");
		(*bpf)[i].k = get_u32(r, "seccomp");
	}
	if (!r->failed) {
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
		if (plan_home_name(o->home[i]) == -1)
			bad(r, "home[%u]: not a plain relative path", i);
		else if (strlen(o->home[i + 1]) > SBX_HOMEFILE)
			bad(r, "home[%u]: more than %d bytes", i + 1,
			    SBX_HOMEFILE);
	}
}

/* A service's ports: at most SANDBOX_SVCPORTS, none of them 0. */
static int
get_svcports(struct rbuf *r, uint16_t *ports, const char *field)
{
	char		 name[64];
	uint32_t	 n = get_u32(r, field), i;

	if (r->failed)
		return (0);
	if (n > SANDBOX_SVCPORTS) {
		bad(r, "%s: %u, more than %d", field, n, SANDBOX_SVCPORTS);
		return (0);
	}
	for (i = 0; i < n && !r->failed; i++) {
		snprintf(name, sizeof(name), "%s[%u]", field, i);
		if ((ports[i] = get_u16(r, name)) == 0 && !r->failed)
			bad(r, "%s: port 0", name);
	}
	return ((int)n);
}

/*
 * A service's data: the tree it is taken from, absolute and not /,
 * pinned; 1 to SANDBOX_MAXDATA paths inside it as a manifest names
 * them (tree_relpath: no "..", no absolute path, not .git), each of
 * which, below the tree, still fits a path.
 */
static void
get_data(struct rbuf *r, struct plan_out *o)
{
	struct sandbox_spec	*spec = &o->spec;
	const char		*why;
	uint32_t		 i;

	if (!get_bool(r, "data"))
		return;
	if ((spec->data_root = get_path(r, "data_root")) != NULL &&
	    strcmp(spec->data_root, "/") == 0)
		bad(r, "data_root: may not be /");
	spec->data_dev = get_u64(r, "data_dev");
	spec->data_ino = get_u64(r, "data_ino");
	if (!r->failed && spec->data_ino == 0)
		bad(r, "data_ino: the tree is not pinned");
	o->data = get_strv(r, SANDBOX_MAXDATA, 0, 0, "data");
	if (!r->failed && o->data[0] == NULL)
		bad(r, "data: none given");
	for (i = 0; !r->failed && o->data[i] != NULL; i++) {
		if (!tree_relpath(o->data[i], PATH_MAX, &why))
			bad(r, "data[%u]: %s", i, why);
		else if (strlen(spec->data_root) + 1 + strlen(o->data[i]) >=
		    PATH_MAX)
			bad(r, "data[%u]: too long below data_root", i);
	}
}

/* 0 if name is a relative path of plain components (get_homefiles). */
int
plan_home_name(const char *name)
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
	struct plan		*pl = &o->pl;

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
	spec->watchdog_ms = get_u64(r, "watchdog");
	get_listen(r, o);
	if (get_bool(r, "hosts"))
		spec->hosts = get_str(r, PLAN_MAXHOSTS, "hosts");
	get_homefiles(r, o);
	spec->lo = get_bool(r, "lo");
	spec->passwd = get_bool(r, "passwd");
	spec->nconnect = get_svcports(r, o->connect, "connect");
	spec->nbind = get_svcports(r, o->bind, "bind");
	spec->nreserve = get_svcports(r, o->reserve, "reserve");
	o->ready = get_strv(r, PLAN_MAXARGV, 1, 0, "ready");
	if (!r->failed && o->ready != NULL && (o->ready[0] == NULL ||
	    o->ready[0][0] != '/'))
		bad(r, "ready: not an absolute program");
	spec->tree_dev = get_u64(r, "tree_dev");
	spec->tree_ino = get_u64(r, "tree_ino");
	if (!r->failed && spec->tree_ino == 0 && spec->tree_dev != 0)
		bad(r, "tree_ino: a device without an inode");
	get_data(r, o);
	get_prog(r, &o->bpf, prog);
	if (!r->failed && ibuf_size(&r->b) != 0)
		bad(r, "%zu bytes after the end", ibuf_size(&r->b));
	spec->tree = pl->tree;
	spec->argv = o->argv;
	spec->env = o->env;
	spec->exec_allow = o->exec;
	spec->home = o->home;
	spec->connect = o->connect;
	spec->bind = o->bind;
	spec->reserve = o->reserve;
	spec->ready = o->ready;
	spec->data = o->data;
	if (spec->image != NULL)
		strlcpy(pl->image, spec->image, sizeof(pl->image));
	pl->spec = spec;
}

struct plan *
plan_decode(const void *data, size_t len, struct sock_fprog *prog,
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
		plan_free(&o->pl);
		return (NULL);
	}
	return (&o->pl);
}

void
plan_free(struct plan *pl)
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
	free(o->ready);
	free(o->data);
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
plan_enter_encode(const struct plan_enter *en, const struct sock_fprog *prog,
    size_t *lenp)
{
	const struct sandbox_spec *spec = en->spec;
	struct wbuf	 w;
	int		 i;

	if (put_open(&w) == -1)
		return (NULL);
	put_u32(&w, ENTER_MAGIC);
	put_u32(&w, PLAN_VERSION);
	put_who(&w, spec, en->tree, spec->image);
	put_u64(&w, spec->cpu_ms);
	put_u64(&w, spec->fsize);
	put_u64(&w, spec->nofile);
	put_u32(&w, (uint32_t)en->nports);
	for (i = 0; i < en->nports && i < SANDBOX_MAXPORTS; i++)
		put_u16(&w, en->ports[i]);
	put_u32(&w, (uint32_t)en->nprocs);
	put_str(&w, en->home);
	put_str(&w, en->cgname);
	put_prog(&w, prog);
	return (put_done(&w, lenp));
}

struct enter_out {
	struct plan_enter	 en;	/* first: plan_enter_free() casts */
	struct sandbox_spec	 spec;
	char			*arena;
	char			**argv;
	char			**env;
	char			**exec;
	struct sock_filter	*bpf;
};

static void
get_ports(struct rbuf *r, struct plan_enter *en)
{
	char		 name[64];
	uint32_t	 n = get_u32(r, "ports"), i;

	if (r->failed)
		return;
	if (n > SANDBOX_MAXPORTS) {
		bad(r, "ports: %u, more than %d", n, SANDBOX_MAXPORTS);
		return;
	}
	for (i = 0; i < n && !r->failed; i++) {
		snprintf(name, sizeof(name), "ports[%u]", i);
		if ((en->ports[i] = get_u16(r, name)) == 0 && !r->failed)
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
get_home(struct rbuf *r, struct plan_enter *en)
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
get_cgname(struct rbuf *r, struct plan_enter *en)
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
	struct plan_enter	*en = &o->en;

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
	if (!r->failed && ibuf_size(&r->b) != 0)
		bad(r, "%zu bytes after the end", ibuf_size(&r->b));
	spec->tree = en->tree;
	spec->argv = o->argv;
	spec->env = o->env;
	spec->exec_allow = o->exec;
	spec->logfd = -1;
	en->spec = spec;
}

struct plan_enter *
plan_enter_decode(const void *data, size_t len, struct sock_fprog *prog,
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
		plan_enter_free(&o->en);
		return (NULL);
	}
	return (&o->en);
}

void
plan_enter_free(struct plan_enter *en)
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

/* --- both sides of the launcher's socket ------------------------------- */

/* Report a failure of pid 1 or the agent on fd and exit. */
__dead void
plan_fail(int fd, const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (strstr(fmt, "%m") == NULL && saved != 0 &&
	    fmt[strlen(fmt) - 1] == ':')
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " %s",
		    strerror(saved));
	/* Nothing more to say if this fails: 127 says it too. */
	if (write(fd, msg, strlen(msg)) == -1)
		_exit(127);
	_exit(127);
}

/* If tree lies below dir, the part of it below dir; else NULL. */
const char *
plan_below(const char *tree, const char *dir)
{
	size_t	 n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return (tree + 1);
	if (strncmp(tree, dir, n) == 0 && tree[n] == '/')
		return (tree + n + 1);
	return (NULL);
}

/*
 * The agent's root is built from this allowlist, read-only: the system
 * directories programs need and nothing else of the host (no /home,
 * /root, /srv, /opt, /var, /sys, /mnt, no other repository, no state,
 * keys or sockets).  The tree, the repository's objects and the
 * manifest's exec paths are added by exact path.  A symlink (a merged
 * /usr) is recreated as the same symlink.
 */
const char *const plan_rootdirs[PLAN_NROOTDIRS + 1] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", NULL
};

/*
 * The egress ports of spec and its services' (at most SANDBOX_MAXPORTS),
 * for the Landlock connect rules.
 */
int
plan_ports(const struct sandbox_spec *spec, uint16_t *ports)
{
	const struct sockaddr_storage	*ss;
	int				 i, n = 0;

	for (i = 0; i < spec->nlisten && i < SANDBOX_MAXLISTEN; i++) {
		ss = &spec->listen[i].addr;
		ports[n++] = ntohs(ss->ss_family == AF_INET6 ?
		    ((const struct sockaddr_in6 *)ss)->sin6_port :
		    ((const struct sockaddr_in *)ss)->sin_port);
	}
	for (i = 0; i < spec->nconnect && i < SANDBOX_SVCPORTS; i++)
		ports[n++] = spec->connect[i];
	return (n);
}

/*
 * len bytes with n fds (at most SANDBOX_MAXLISTEN) attached; flags for
 * send(2), such as MSG_DONTWAIT.  What sendmsg(2) returns: -1 with
 * errno if nothing was sent.
 */
ssize_t
plan_sendfds(int sock, int flags, const void *data, size_t len,
    const int *fds, int n)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * SANDBOX_MAXLISTEN)];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;

	if (n < 0 || n > SANDBOX_MAXLISTEN) {	/* what cm can hold */
		errno = EINVAL;
		return (-1);
	}
	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)data;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (n > 0) {
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return (sendmsg(sock, &msg, flags | MSG_NOSIGNAL));
}

/*
 * One message between the parent and pid 1: a tag byte and n fds.
 * -1 with errno if not sent.
 */
int
plan_sendtag(int sock, int flags, char tag, const int *fds, int n)
{
	return (plan_sendfds(sock, flags, &tag, 1, fds, n) == -1 ? -1 : 0);
}

/*
 * The next message on sock: its tag in *tag and the fds attached (at
 * most max; close-on-exec) in fds.  Returns how many fds came, or -1
 * if no message did (EOF, an error, or nothing there with
 * MSG_DONTWAIT) or it was cut short; fds that came are closed then.
 */
int
plan_recvtag(int sock, int flags, char *tag, int *fds, int max)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * SANDBOX_MAXLISTEN)];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;
	ssize_t		 r;
	int		 got = 0, n, i;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = tag;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	while ((r = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC)) == -1 &&
	    errno == EINTR)
		;
	for (c = r > 0 ? CMSG_FIRSTHDR(&msg) : NULL; c != NULL;
	    c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int	 fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (got < max)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	if (r != 1 || (msg.msg_flags & MSG_CTRUNC)) {
		while (got > 0)
			close(fds[--got]);
		return (-1);
	}
	return (got);
}

/*
 * Whether fd is a mount namespace (nsfs, of type mnt) other than the
 * caller's own: what pid 1's "M" must carry, and the zygote's "D".
 */
int
plan_mntns_ok(int fd)
{
	struct statfs	 sfs;
	struct stat	 st, own;

	return (fstatfs(fd, &sfs) == 0 && sfs.f_type == NSFS_MAGIC &&
	    ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWNS && fstat(fd, &st) == 0 &&
	    stat("/proc/self/ns/mnt", &own) == 0 && (st.st_ino != own.st_ino ||
	    st.st_dev != own.st_dev));
}
