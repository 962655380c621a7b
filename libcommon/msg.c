/*
 * Strict payloads of the child messages; see msg.h.  Each message is a
 * table of fields; one encoder and one decoder walk the tables.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "imsgev.h"
#include "log.h"
#include "msg.h"
#include "msgtab.h"
#include "util.h"
#include "wire.h"

struct msgdesc {
	const char		*name;
	size_t			 size;
	const struct field	*f;
	size_t			 nf;
	int			(*check)(const void *, char *, size_t);
};

#define MEMBER_SIZE(st, m)	sizeof(((st *)0)->m)
#define NOSUB			NULL, 0, 0	/* sub, nsub, esize */
#define STR(st, m, cls)		{ #m, F_STR, cls, offsetof(st, m), \
				  MEMBER_SIZE(st, m), 0, 0, 0, 0, NOSUB }
#define OSTR(st, m, cls)	{ #m, F_STR, cls, offsetof(st, m), \
				  MEMBER_SIZE(st, m), 0, 0, 0, 1, NOSUB }
#define PSTR(st, m, cls, max)	{ #m, F_PSTR, cls, offsetof(st, m), max, \
				  0, 0, 0, 0, NOSUB }
#define OPSTR(st, m, cls, max)	{ #m, F_PSTR, cls, offsetof(st, m), max, \
				  0, 0, 0, 1, NOSUB }
#define OSTRV(st, m, cls, n)	{ #m, F_STRV, cls, offsetof(st, m), \
				  MSG_LIST_MAX, offsetof(st, n), 0, 0, 1, \
				  NOSUB }
#define NUM(st, m, t, lo, hi)	{ #m, t, 0, offsetof(st, m), 0, 0, lo, hi, \
				  0, NOSUB }
#define BOOL(st, m)		{ #m, F_BOOL, 0, offsetof(st, m), 0, 0, 0, 1, \
				  0, NOSUB }
#define STRV(st, m, cls, n)	{ #m, F_STRV, cls, offsetof(st, m), \
				  MSG_LIST_MAX, offsetof(st, n), 0, 0, 0, \
				  NOSUB }
#define NELEM(a)		(sizeof(a) / sizeof((a)[0]))
#define OBJV(st, m, n, sub, et, max, opt) \
				{ #m, F_OBJV, 0, offsetof(st, m), max, \
				  offsetof(st, n), 0, 0, opt, sub, NELEM(sub), \
				  sizeof(et) }
#define EPOCH_MAX		(1LL << 53)
#define SIZE_LIMIT		(1LL << 62)

static const struct field f_resolve[] = {
	NUM(struct msg_resolve, req, F_U32, 1, UINT32_MAX),
	STR(struct msg_resolve, repo, C_ABS),
	STR(struct msg_resolve, ref, C_TEXT),
};

static const struct field f_resolved[] = {
	NUM(struct msg_resolved, req, F_U32, 1, UINT32_MAX),
	OSTR(struct msg_resolved, oid, C_HEX40),
	OSTR(struct msg_resolved, error, C_ESC),
};

static const struct field f_provision[] = {
	STR(struct msg_provision, id, C_ID),
	NUM(struct msg_provision, epoch, F_U64, 1, EPOCH_MAX),
	STR(struct msg_provision, repo, C_ABS),
	STR(struct msg_provision, baseline, C_HEX40),
	STR(struct msg_provision, dir, C_ABS),
	OSTR(struct msg_provision, pristine, C_ABS),
	STR(struct msg_provision, lower, C_ABS),
};

static const struct field f_ready[] = {
	STR(struct msg_ready, id, C_ID),
	/* A stale epoch is the parent's to refuse, not malformed. */
	NUM(struct msg_ready, epoch, F_U64, 0, EPOCH_MAX),
};

static const struct field f_collect[] = {
	STR(struct msg_collect, id, C_ID),
	NUM(struct msg_collect, epoch, F_U64, 1, EPOCH_MAX),
	STR(struct msg_collect, repo, C_ABS),
	STR(struct msg_collect, baseline, C_HEX40),
	STR(struct msg_collect, dir, C_ABS),
	STRV(struct msg_collect, scope, C_TEXT, nscope),
	STR(struct msg_collect, title, C_TEXT),
	STR(struct msg_collect, digest, C_DIGEST),
	NUM(struct msg_collect, tree_limit, F_U64, 0, SIZE_LIMIT),
	STR(struct msg_collect, bundle, C_ABS),
};

static const struct field f_change[] = {
	STR(struct msg_change, status, C_STATUS),
	PSTR(struct msg_change, path, C_ESC, MSG_ESC_MAX),
};

static const struct field f_result[] = {
	STR(struct msg_result, id, C_ID),
	NUM(struct msg_result, epoch, F_U64, 0, EPOCH_MAX),
	STR(struct msg_result, commit, C_HEX40E),
	STR(struct msg_result, tree, C_HEX40E),
	STR(struct msg_result, bundle_sha256, C_HEX64E),
	NUM(struct msg_result, bundle_size, F_U64, 0, SIZE_LIMIT),
	OBJV(struct msg_result, changes, nchanges, f_change, struct msg_change,
	    MSG_LIST_MAX, 0),
	NUM(struct msg_result, changes_total, F_U64, 0, SIZE_LIMIT),
	STRV(struct msg_result, rejects, C_ESC, nrejects),
	NUM(struct msg_result, rejects_total, F_U64, 0, SIZE_LIMIT),
};

static const struct field f_error[] = {
	STR(struct msg_error, id, C_ID),
	STR(struct msg_error, error, C_ESC),
};

static const struct field f_verify[] = {
	STR(struct msg_verify, id, C_ID),
	STR(struct msg_verify, repo, C_ABS),
	STR(struct msg_verify, baseline, C_HEX40),
	STRV(struct msg_verify, scope, C_TEXT, nscope),
	STR(struct msg_verify, title, C_TEXT),
	STR(struct msg_verify, digest, C_DIGEST),
	STR(struct msg_verify, commit, C_HEX40),
	STR(struct msg_verify, bundle_sha256, C_HEX64),
	STR(struct msg_verify, dir, C_ABS),
	NUM(struct msg_verify, seq, F_U64, 1, EPOCH_MAX),
	STR(struct msg_verify, prev, C_HEX64),
	NUM(struct msg_verify, epoch, F_U64, 1, EPOCH_MAX),
	NUM(struct msg_verify, wall_ms, F_U64, 0, SIZE_LIMIT),
	OSTR(struct msg_verify, image, C_DIGEST),
	OSTR(struct msg_verify, rootfs, C_ABS),
	STRV(struct msg_verify, tools, C_ABS, ntools),
	OSTR(struct msg_verify, toolchain, C_DIGEST),
	OSTR(struct msg_verify, provenance, C_DIGEST),
	OSTR(struct msg_verify, isolation, C_DIGEST),
};

static const struct field f_validate_req[] = {
	STR(struct msg_validate_req, id, C_ID),
};

static const struct field f_validate_done[] = {
	STR(struct msg_validate_done, id, C_ID),
	NUM(struct msg_validate_done, status, F_I64, INT32_MIN, INT32_MAX),
	BOOL(struct msg_validate_done, timedout),
	BOOL(struct msg_validate_done, passed),
	NUM(struct msg_validate_done, seq, F_U64, 1, EPOCH_MAX),
	STR(struct msg_validate_done, prev, C_HEX64),
	NUM(struct msg_validate_done, epoch, F_U64, 1, EPOCH_MAX),
};

static const struct field f_verdict[] = {
	STR(struct msg_verdict, id, C_ID),
	PSTR(struct msg_verdict, receipt, C_PRINT, FACTORY_MAXIMSG),
	OPSTR(struct msg_verdict, vsa, C_PRINT, FACTORY_MAXIMSG),
	OPSTR(struct msg_verdict, test_result, C_PRINT, FACTORY_MAXIMSG),
	BOOL(struct msg_verdict, accepted),
	STR(struct msg_verdict, baseline, C_HEX40E),
	STR(struct msg_verdict, commit, C_HEX40E),
	STR(struct msg_verdict, tree, C_HEX40E),
	STR(struct msg_verdict, bundle_sha256, C_PRINT),
	STR(struct msg_verdict, manifest_digest, C_PRINT),
	STRV(struct msg_verdict, findings, C_ESC, nfindings),
	NUM(struct msg_verdict, findings_total, F_U64, 0, SIZE_LIMIT),
	BOOL(struct msg_verdict, validated),
	NUM(struct msg_verdict, vstatus, F_I64, INT32_MIN, INT32_MAX),
	BOOL(struct msg_verdict, vpassed),
	BOOL(struct msg_verdict, vtimedout),
	STR(struct msg_verdict, env_image, C_PRINT),
	STR(struct msg_verdict, env_toolchain, C_PRINT),
	STR(struct msg_verdict, baseline_tree, C_HEX40E),
	STR(struct msg_verdict, pristine, C_PRINT),
	OPSTR(struct msg_verdict, reason, C_ESC, FACTORY_MAXIMSG),
	NUM(struct msg_verdict, epoch, F_U64, 0, EPOCH_MAX),
	NUM(struct msg_verdict, time, F_U64, 0, SIZE_LIMIT),
	STR(struct msg_verdict, sig, C_PRINT),
};

static const struct field f_github[] = {
	STR(struct msg_github, api, C_TEXT),
	STR(struct msg_github, owner, C_TEXT),
	STR(struct msg_github, repo, C_TEXT),
	NUM(struct msg_github, repository_id, F_U64, 1, SIZE_LIMIT),
	STR(struct msg_github, app_id, C_TEXT),
	NUM(struct msg_github, installation_id, F_U64, 1, SIZE_LIMIT),
	STR(struct msg_github, key, C_ABS),
	STR(struct msg_github, ca, C_ABS),
};

static const struct field f_superseded[] = {
	STR(struct msg_superseded, id, C_ID),
	STR(struct msg_superseded, commit, C_HEX40),
};

static const struct field f_publish[] = {
	STR(struct msg_publish, id, C_ID),
	STR(struct msg_publish, forge, C_FORGE),
	STR(struct msg_publish, repository, C_TEXT),
	STR(struct msg_publish, remote, C_TEXT),
	STR(struct msg_publish, pulls, C_TEXT),
	STR(struct msg_publish, title, C_TEXT),
	STR(struct msg_publish, base, C_TEXT),
	STR(struct msg_publish, commit, C_HEX40),
	PSTR(struct msg_publish, verdict, C_PRINT, FACTORY_MAXIMSG),
	STR(struct msg_publish, verifier_pub, C_B64),
	STR(struct msg_publish, manifest_digest, C_DIGEST),
	OSTRV(struct msg_publish, attest, C_PRINT, nattest),
	OPSTR(struct msg_publish, summary, C_TEXT, MSG_ESC_MAX),
	OSTR(struct msg_publish, cohort, C_ID),
	OBJV(struct msg_publish, supersede, nsupersede, f_superseded,
	    struct msg_superseded, COHORT_SUPERSEDE_MAX, 1),
	{ "github", F_GITHUB, 0, offsetof(struct msg_publish, github), 0,
	    offsetof(struct msg_publish, has_github), 0, 0, 1, NOSUB },
	NUM(struct msg_publish, begin_by, F_U64, 0, EPOCH_MAX),
};

static const struct field f_published[] = {
	STR(struct msg_published, id, C_ID),
	STR(struct msg_published, branch, C_ESC),
	NUM(struct msg_published, number, F_I64, 1, INT32_MAX),
	STR(struct msg_published, record, C_ESC),
	BOOL(struct msg_published, reused),
};

static const struct field f_diff[] = {
	NUM(struct msg_diff, req, F_U32, 1, UINT32_MAX),
	STR(struct msg_diff, id, C_ID),
	STR(struct msg_diff, dir, C_ABS),
	STR(struct msg_diff, baseline, C_HEX40),
	STR(struct msg_diff, commit, C_HEX40),
};

/* The encoding is at most four bytes a byte (esc.h). */
static const struct field f_diffed[] = {
	NUM(struct msg_diffed, req, F_U32, 1, UINT32_MAX),
	PSTR(struct msg_diffed, patch, C_ESC, 4 * MSG_DIFF_MAX),
	NUM(struct msg_diffed, bytes, F_U64, 0, SIZE_LIMIT),
	BOOL(struct msg_diffed, truncated),
	OSTR(struct msg_diffed, error, C_ESC),
};

static const struct field f_pcheck[] = {
	STR(struct msg_pcheck, id, C_ID),
	STR(struct msg_pcheck, repo, C_ABS),
	STR(struct msg_pcheck, baseline, C_HEX40),
};

static const struct field f_pchecked[] = {
	STR(struct msg_pchecked, id, C_ID),
	STR(struct msg_pchecked, baseline, C_HEX40),
	OSTR(struct msg_pchecked, tree, C_HEX40),
	BOOL(struct msg_pchecked, same),
	BOOL(struct msg_pchecked, differs),
	OSTR(struct msg_pchecked, error, C_ESC),
};

static int	utf8_ok(const char *);
static int	check_resolved(const void *, char *, size_t);
static int	check_pchecked(const void *, char *, size_t);
static int	check_result(const void *, char *, size_t);
static int	check_verdict(const void *, char *, size_t);
static int	check_verify(const void *, char *, size_t);
static int	check_publish(const void *, char *, size_t);

#define DESC(name, st, f, check)	{ name, sizeof(st), f, NELEM(f), check }
static const struct msgdesc descs[MSG_KIND_MAX] = {
	[MSG_RESOLVE] = DESC("RESOLVE", struct msg_resolve, f_resolve, NULL),
	[MSG_RESOLVED] = DESC("RESOLVE (answer)", struct msg_resolved,
	    f_resolved, check_resolved),
	[MSG_PROVISION] = DESC("PROVISION", struct msg_provision, f_provision,
	    NULL),
	[MSG_READY] = DESC("READY", struct msg_ready, f_ready, NULL),
	[MSG_COLLECT] = DESC("COLLECT", struct msg_collect, f_collect, NULL),
	[MSG_RESULT] = DESC("RESULT", struct msg_result, f_result,
	    check_result),
	[MSG_ERROR] = DESC("ERROR", struct msg_error, f_error, NULL),
	[MSG_LATE] = DESC("LATE", struct msg_error, f_error, NULL),
	[MSG_VERIFY] = DESC("VERIFY", struct msg_verify, f_verify,
	    check_verify),
	[MSG_VALIDATE_REQ] = DESC("VALIDATE_REQ", struct msg_validate_req,
	    f_validate_req, NULL),
	[MSG_VALIDATE_DONE] = DESC("VALIDATE_DONE", struct msg_validate_done,
	    f_validate_done, NULL),
	[MSG_VERDICT] = DESC("VERDICT", struct msg_verdict, f_verdict,
	    check_verdict),
	[MSG_PUBLISH] = DESC("PUBLISH", struct msg_publish, f_publish,
	    check_publish),
	[MSG_PUBLISHED] = DESC("PUBLISHED", struct msg_published, f_published,
	    NULL),
	[MSG_DIFF] = DESC("DIFF", struct msg_diff, f_diff, NULL),
	[MSG_DIFFED] = DESC("DIFF (answer)", struct msg_diffed, f_diffed,
	    NULL),
	[MSG_PCHECK] = DESC("PRISTINE_CHECK", struct msg_pcheck, f_pcheck,
	    NULL),
	[MSG_PCHECKED] = DESC("PRISTINE_CHECK (answer)", struct msg_pchecked,
	    f_pchecked, check_pchecked),
};


const char *
msg_kind_name(enum msg_kind k)
{
	if ((unsigned)k >= MSG_KIND_MAX)
		return ("unknown");
	return (descs[k].name);
}

size_t
msg_size(enum msg_kind k)
{
	if ((unsigned)k >= MSG_KIND_MAX)
		return (0);
	return (descs[k].size);
}

static int
all_of(const char *s, const char *set)
{
	return (s[strspn(s, set)] == '\0');
}

/* 1 if the NUL-terminated s is of class c. */
static int
class_ok(enum fclass c, const char *s)
{
	size_t	 len = strlen(s), i;

	switch (c) {
	case C_TEXT:
		return (utf8_ok(s));
	case C_ABS:
		return (s[0] == '/');
	case C_ID:
		return (name_valid(s, ATTEMPT_ID_MAX - 1));
	case C_HEX40E:
		if (len == 0)
			return (1);
		/* FALLTHROUGH */
	case C_HEX40:
		return (hex_valid(s, 40));
	case C_HEX64E:
		if (len == 0)
			return (1);
		/* FALLTHROUGH */
	case C_HEX64:
		return (hex_valid(s, 64));
	case C_DIGEST:
		return (strncmp(s, "sha256:", 7) == 0 && hex_valid(s + 7, 64));
	case C_ESC:
		return (esc_valid(s));
	case C_PRINT:
		for (i = 0; i < len; i++)
			if (s[i] < 0x20 || s[i] > 0x7e)
				return (0);
		return (1);
	case C_B64:
		return (all_of(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789+/="));
	case C_STATUS:
		return (len == 1 && strchr("AMDT", s[0]) != NULL);
	case C_FORGE:
		return (strcmp(s, "local") == 0 || strcmp(s, "github") == 0);
	}
	return (0);
}

/*
 * What JSON once guaranteed of the parent's own text: UTF-8, shortest
 * form, no surrogate, nothing beyond U+10FFFF.
 */
static int
utf8_ok(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	uint32_t		 c;
	int			 n, i;

	while (*p != '\0') {
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf)
			n = 1, c = *p & 0x1f;
		else if (*p >= 0xe0 && *p <= 0xef)
			n = 2, c = *p & 0x0f;
		else if (*p >= 0xf0 && *p <= 0xf4)
			n = 3, c = *p & 0x07;
		else
			return (0);
		for (i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return (0);
			c = (c << 6) | (p[i] & 0x3f);
		}
		if ((n == 2 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
		    (n == 3 && (c < 0x10000 || c > 0x10ffff)))
			return (0);
		p += n + 1;
	}
	return (1);
}

/* An optional string field may be empty, whatever its class. */
static int
str_ok(const struct field *f, const char *s)
{
	if (f->optional && s[0] == '\0')
		return (1);
	return (class_ok(f->cls, s));
}

static int	decode_obj(struct mread *, const struct field *, size_t,
		    void *);

static int
get_num(struct mread *m, const struct field *f, void *p)
{
	uint64_t	 u;
	uint32_t	 u32;
	long long	 n;

	if (f->type == F_U32) {
		if (m_get_n32(m, f->key, &u32) == -1)
			return (-1);
		n = u32;
	} else {
		if (m_get_n64(m, f->key, &u) == -1)
			return (-1);
		if (f->type == F_U64 && u > (uint64_t)f->max)
			return (m_fail(m, "field %s: %llu out of range", f->key,
			    (unsigned long long)u));
		n = (long long)u;
	}
	if (n < f->min || n > f->max)
		return (m_fail(m, "field %s: %lld out of range", f->key, n));
	if (f->type == F_U32)
		*(uint32_t *)p = (uint32_t)n;
	else if (f->type == F_U64)
		*(uint64_t *)p = (uint64_t)n;
	else
		*(int64_t *)p = (int64_t)n;
	return (0);
}

/* A count of entries, at most the field's bound. */
static int
get_count(struct mread *m, const struct field *f, size_t *n)
{
	uint32_t	 c;

	if (m_get_n32(m, f->key, &c) == -1)
		return (-1);
	if (c > f->size)
		return (m_fail(m, "field %s: more than %zu entries", f->key,
		    f->size));
	*n = c;
	return (0);
}

static int
get_strv(struct mread *m, const struct field *f, void *p, size_t *cnt)
{
	char	***vp = p, **list;
	size_t	  i, n = 0;

	if (get_count(m, f, &n) == -1)
		return (-1);
	if ((list = calloc(n + 1, sizeof(*list))) == NULL)
		return (m_fail(m, "field %s: %s", f->key, strerror(errno)));
	*vp = list;
	for (i = 0; i < n; i++) {
		*cnt = i + 1;
		if (m_get_strdup(m, f->key, MSG_ESC_MAX, &list[i]) == -1)
			return (-1);
		if (!class_ok(f->cls, list[i]))
			return (m_fail(m, "field %s: not of its kind", f->key));
	}
	return (0);
}

static int
get_objv(struct mread *m, const struct field *f, void *p, size_t *cnt)
{
	char	**lp = p, *list;
	size_t	  i, n = 0;

	if (get_count(m, f, &n) == -1)
		return (-1);
	if ((list = calloc(n + 1, f->esize)) == NULL)
		return (m_fail(m, "field %s: %s", f->key, strerror(errno)));
	*lp = list;
	for (i = 0; i < n; i++) {
		*cnt = i + 1;
		if (decode_obj(m, f->sub, f->nsub, list + i * f->esize) == -1)
			return (-1);
	}
	return (0);
}

/* A presence byte: optional strings and objects that may be absent. */
static int
get_present(struct mread *m, const struct field *f, int *present)
{
	return (m_get_bool(m, f->key, present));
}

static int
get_field(struct mread *m, const struct field *f, char *base)
{
	void	*p = base + f->off;
	char	**sp = p;
	int	 present;

	switch (f->type) {
	case F_STR:
		if (m_get_str(m, f->key, p, f->size) == -1)
			return (-1);
		if (!str_ok(f, p))
			return (m_fail(m, "field %s: not of its kind", f->key));
		return (0);
	case F_PSTR:
		if (f->optional && (get_present(m, f, &present) == -1 ||
		    !present))
			return (m->bad ? -1 : 0);
		if (m_get_strdup(m, f->key, f->size, sp) == -1)
			return (-1);
		if (!class_ok(f->cls, *sp))
			return (m_fail(m, "field %s: not of its kind", f->key));
		return (0);
	case F_BOOL:
		return (m_get_bool(m, f->key, p));
	case F_U32:
	case F_U64:
	case F_I64:
		return (get_num(m, f, p));
	case F_STRV:
		return (get_strv(m, f, p, (size_t *)(base + f->cnt)));
	case F_OBJV:
		return (get_objv(m, f, p, (size_t *)(base + f->cnt)));
	case F_GITHUB:
		if (get_present(m, f, &present) == -1)
			return (-1);
		*(int *)(base + f->cnt) = present;
		if (!present)
			return (0);
		return (decode_obj(m, f_github, NELEM(f_github), p));
	}
	return (m_fail(m, "field %s: bad table", f->key));
}

/* Every field of the table, in its order. */
static int
decode_obj(struct mread *m, const struct field *f, size_t nf, void *st)
{
	size_t	 i;

	for (i = 0; i < nf; i++)
		if (get_field(m, &f[i], st) == -1)
			return (-1);
	return (0);
}

static void
free_obj(const struct field *f, size_t nf, void *st)
{
	char			*base = st, **v, *c;
	size_t			 i, j, n;

	for (i = 0; i < nf; i++) {
		switch (f[i].type) {
		case F_PSTR:
			free(*(char **)(base + f[i].off));
			*(char **)(base + f[i].off) = NULL;
			break;
		case F_STRV:
			v = *(char ***)(base + f[i].off);
			n = *(size_t *)(base + f[i].cnt);
			for (j = 0; v != NULL && j < n; j++)
				free(v[j]);
			free(v);
			*(char ***)(base + f[i].off) = NULL;
			*(size_t *)(base + f[i].cnt) = 0;
			break;
		case F_OBJV:
			c = *(char **)(base + f[i].off);
			n = *(size_t *)(base + f[i].cnt);
			for (j = 0; c != NULL && j < n; j++)
				free_obj(f[i].sub, f[i].nsub, c +
				    j * f[i].esize);
			free(c);
			*(char **)(base + f[i].off) = NULL;
			*(size_t *)(base + f[i].cnt) = 0;
			break;
		default:
			break;
		}
	}
}

void
msg_free(enum msg_kind k, void *st)
{
	if ((unsigned)k >= MSG_KIND_MAX || st == NULL)
		return;
	free_obj(descs[k].f, descs[k].nf, st);
}

int
msg_read(enum msg_kind k, const void *data, size_t len, void *st, char *err,
    size_t errlen)
{
	const struct msgdesc	*d;
	struct mread		 m;
	uint8_t			 kind;
	char			 e[MSG_ERRLEN];

	if ((unsigned)k >= MSG_KIND_MAX)
		return (errfmt(err, errlen, "unknown message kind"));
	d = &descs[k];
	memset(st, 0, d->size);
	m_open(&m, d->name, data, len, err, errlen);
	if (m_get_n8(&m, "kind", &kind) == 0 && kind != k)
		m_fail(&m, "kind %u on the wire", kind);
	if (decode_obj(&m, d->f, d->nf, st) == -1 || m_end(&m) == -1 ||
	    (d->check != NULL && d->check(st, e, sizeof(e)) == -1)) {
		if (!m.bad)	/* the check's reason, named */
			m_fail(&m, "%s", e);
		free_obj(d->f, d->nf, st);
		memset(st, 0, d->size);
		return (-1);
	}
	return (0);
}

static int
enc_str(struct ibuf *b, const struct field *f, const char *s, size_t max,
    char *err, size_t errlen)
{
	if (s == NULL)
		s = "";
	if (strlen(s) > max || !str_ok(f, s))
		return (errfmt(err, errlen, "field %s: not of its kind or too "
		    "long", f->key));
	if (m_add_str(b, s) == -1)
		return (errfmt(err, errlen, "field %s: %s", f->key,
		    strerror(errno)));
	return (0);
}

static int	encode_obj(struct ibuf *, const struct field *, size_t,
		    const void *, char *, size_t);

static int
enc_list(struct ibuf *b, const struct field *f, const char *base, char *err,
    size_t errlen)
{
	size_t		 i, n = *(const size_t *)(base + f->cnt);
	char * const	*sv;
	const char	*c;
	int		 rv;

	if (n > f->size)
		return (errfmt(err, errlen, "field %s: more than %zu entries",
		    f->key, f->size));
	if (ibuf_add_n32(b, n) == -1)
		return (errfmt(err, errlen, "%s", strerror(errno)));
	for (i = 0; i < n; i++) {
		if (f->type == F_STRV) {
			sv = *(char * const * const *)(base + f->off);
			rv = sv[i] == NULL || !class_ok(f->cls, sv[i]) ?
			    errfmt(err, errlen, "field %s: not of its kind",
			    f->key) : enc_str(b, f, sv[i], MSG_ESC_MAX, err,
			    errlen);
		} else {
			c = *(const char * const *)(base + f->off);
			rv = encode_obj(b, f->sub, f->nsub, c + i * f->esize,
			    err, errlen);
		}
		if (rv == -1)
			return (-1);
	}
	return (0);
}

static int
enc_num(struct ibuf *b, const struct field *f, const void *p, char *err,
    size_t errlen)
{
	long long	 n;

	if (f->type == F_U32)
		n = *(const uint32_t *)p;
	else if (f->type == F_U64)
		n = *(const uint64_t *)p > (uint64_t)f->max ? f->max + 1 :
		    (long long)*(const uint64_t *)p;
	else
		n = *(const int64_t *)p;
	if (n < f->min || n > f->max)
		return (errfmt(err, errlen, "field %s: %lld out of range",
		    f->key, n));
	if ((f->type == F_U32 ? ibuf_add_n32(b, (uint64_t)n) :
	    ibuf_add_n64(b, (uint64_t)n)) == -1)
		return (errfmt(err, errlen, "%s", strerror(errno)));
	return (0);
}

/* Is an optional field set: a present string or object. */
static int
opt_set(const struct field *f, const char *base)
{
	if (f->type == F_GITHUB)
		return (*(const int *)(base + f->cnt));
	if (f->type == F_PSTR)
		return (*(char * const *)(base + f->off) != NULL);
	return (1);
}

static int
enc_field(struct ibuf *b, const struct field *f, const char *base,
    char *err, size_t errlen)
{
	const void	*p = base + f->off;
	int		 set;

	if (f->optional && (f->type == F_PSTR || f->type == F_GITHUB)) {
		set = opt_set(f, base);
		if (ibuf_add_n8(b, set) == -1)
			return (errfmt(err, errlen, "%s", strerror(errno)));
		if (!set)
			return (0);
	}
	switch (f->type) {
	case F_STR:
		if (memchr(p, '\0', f->size) == NULL)
			return (errfmt(err, errlen, "field %s: not "
			    "NUL-terminated", f->key));
		return (enc_str(b, f, p, f->size - 1, err, errlen));
	case F_PSTR:
		return (enc_str(b, f, *(char * const *)p, f->size, err,
		    errlen));
	case F_BOOL:
		if (*(const int *)p != 0 && *(const int *)p != 1)
			return (errfmt(err, errlen, "field %s: not a boolean",
			    f->key));
		if (ibuf_add_n8(b, *(const int *)p) == -1)
			return (errfmt(err, errlen, "%s", strerror(errno)));
		return (0);
	case F_U32:
	case F_U64:
	case F_I64:
		return (enc_num(b, f, p, err, errlen));
	case F_STRV:
	case F_OBJV:
		return (enc_list(b, f, base, err, errlen));
	case F_GITHUB:
		return (encode_obj(b, f_github, NELEM(f_github), p, err,
		    errlen));
	}
	return (errfmt(err, errlen, "field %s: bad table", f->key));
}

static int
encode_obj(struct ibuf *b, const struct field *f, size_t nf, const void *st,
    char *err, size_t errlen)
{
	size_t	 i;

	for (i = 0; i < nf; i++)
		if (enc_field(b, &f[i], st, err, errlen) == -1)
			return (-1);
	return (0);
}

/*
 * The kind in one byte, then every field in the table's order; the
 * bytes in a malloc'd buffer of *len bytes.
 */
char *
msg_encode(enum msg_kind k, const void *st, size_t *len, char *err,
    size_t errlen)
{
	const struct msgdesc	*d;
	struct ibuf		*b;
	char			*s, e[MSG_ERRLEN] = "out of memory";

	if ((unsigned)k >= MSG_KIND_MAX) {
		errfmt(err, errlen, "unknown message kind");
		return (NULL);
	}
	d = &descs[k];
	if ((b = ibuf_dynamic(256, 16 * FACTORY_MAXIMSG)) == NULL ||
	    (d->check != NULL && d->check(st, e, sizeof(e)) == -1) ||
	    ibuf_add_n8(b, k) == -1 ||
	    encode_obj(b, d->f, d->nf, st, e, sizeof(e)) == -1) {
		ibuf_free(b);
		errfmt(err, errlen, "%s: %s", d->name, e);
		return (NULL);
	}
	*len = ibuf_size(b);
	if ((s = malloc(*len)) == NULL) {
		ibuf_free(b);
		errfmt(err, errlen, "%s: %s", d->name, strerror(errno));
		return (NULL);
	}
	memcpy(s, ibuf_data(b), *len);
	ibuf_free(b);
	return (s);
}

/* What the tables cannot say: relations between fields. */
static int
check_resolved(const void *st, char *err, size_t errlen)
{
	const struct msg_resolved	*m = st;

	if ((m->oid[0] == '\0') == (m->error[0] == '\0'))
		return (errfmt(err, errlen, "not exactly one of oid and error"));
	return (0);
}

static int
check_result(const void *st, char *err, size_t errlen)
{
	const struct msg_result	*m = st;

	if (m->changes_total < m->nchanges || m->rejects_total < m->nrejects)
		return (errfmt(err, errlen, "a total below what is listed"));
	if (m->rejects_total > 0 && m->nrejects == 0)
		return (errfmt(err, errlen, "rejects counted, none listed"));
	if (m->rejects_total == 0 && (m->commit[0] == '\0' ||
	    m->tree[0] == '\0' || m->bundle_sha256[0] == '\0'))
		return (errfmt(err, errlen, "no reject and no commit, tree or "
		    "bundle"));
	return (0);
}

/* The same tree, named; or not, with why; never both. */
static int
check_pchecked(const void *st, char *err, size_t errlen)
{
	const struct msg_pchecked	*m = st;

	if (m->same && (m->differs || m->tree[0] == '\0' ||
	    m->error[0] != '\0'))
		return (errfmt(err, errlen, "same, yet differs, without a tree "
		    "or with an error"));
	if (!m->same && m->error[0] == '\0')
		return (errfmt(err, errlen, "not the same, and no why"));
	return (0);
}

static int
check_verdict(const void *st, char *err, size_t errlen)
{
	const struct msg_verdict	*m = st;

	if (m->receipt == NULL || m->receipt[0] == '\0')
		return (errfmt(err, errlen, "no receipt"));
	return (0);
}

/* An image comes with its rootfs; a toolchain with its paths. */
static int
check_verify(const void *st, char *err, size_t errlen)
{
	const struct msg_verify	*m = st;

	if ((m->image[0] == '\0') != (m->rootfs[0] == '\0'))
		return (errfmt(err, errlen, "an image without its rootfs, or "
		    "the reverse"));
	if ((m->toolchain[0] == '\0') != (m->ntools == 0) ||
	    (m->ntools > 0 && m->image[0] == '\0'))
		return (errfmt(err, errlen, "a toolchain without its paths or "
		    "its image"));
	return (0);
}

static int
check_publish(const void *st, char *err, size_t errlen)
{
	const struct msg_publish	*m = st;
	size_t				 i, j;

	if ((strcmp(m->forge, "github") == 0) != (m->has_github != 0))
		return (errfmt(err, errlen, "github settings for forge %s",
		    m->forge));
	if (m->verdict == NULL)
		return (errfmt(err, errlen, "no verdict"));
	if (m->nsupersede > 0 && m->cohort[0] == '\0')
		return (errfmt(err, errlen, "supersede without a cohort"));
	for (i = 0; i < m->nsupersede; i++) {
		if (strcmp(m->supersede[i].id, m->id) == 0)
			return (errfmt(err, errlen, "supersede names the "
			    "attempt itself"));
		for (j = 0; j < i; j++)
			if (strcmp(m->supersede[i].id,
			    m->supersede[j].id) == 0)
				return (errfmt(err, errlen, "supersede names "
				    "%s twice", m->supersede[i].id));
	}
	return (0);
}

char *
msg_hello_make(const char *text)
{
	const char	*p, *nl;
	char		*out, *o;
	size_t		 len = 0, n;

	for (p = text; ; p = nl + 1) {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		len += esc_len(p, n) + 1;
		if (nl == NULL)
			break;
	}
	if ((out = malloc(len + 1)) == NULL)
		return (NULL);
	o = out;
	for (p = text; ; p = nl + 1) {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		o += esc_encode(p, n, o, len + 1 - (o - out));
		if (nl == NULL)
			break;
		*o++ = '\n';
	}
	*o = '\0';
	return (out);
}

int
msg_hello_read(const void *data, size_t len, char **text, char *err,
    size_t errlen)
{
	const char	*p = data, *nl, *line;
	char		*copy;

	*text = NULL;
	if (len < 2 || len > MSG_HELLO_MAX)
		return (errfmt(err, errlen, "HELLO: %zu bytes", len));
	if (p[len - 1] != '\0' || memchr(p, '\0', len - 1) != NULL)
		return (errfmt(err, errlen, "HELLO: not one NUL-terminated "
		    "string"));
	if ((copy = strdup(p)) == NULL)
		return (errfmt(err, errlen, "HELLO: %s", strerror(errno)));
	/* Line by line in the suite's encoding. */
	for (line = copy; ; line = nl + 1) {
		if ((nl = strchr(line, '\n')) != NULL)
			*(char *)nl = '\0';
		if (!esc_valid(line)) {
			free(copy);
			return (errfmt(err, errlen, "HELLO: a line is not "
			    "escaped"));
		}
		if (nl == NULL)
			break;
		*(char *)nl = '\n';
	}
	*text = copy;
	return (0);
}

int
msg_get(struct imsg *imsg, enum msg_kind k, void *st, char *err,
    size_t errlen)
{
	struct ibuf	 ib;

	if (imsg_get_ibuf(imsg, &ib) == -1)
		return (errfmt(err, errlen, "%s: no payload",
		    msg_kind_name(k)));
	return (msg_read(k, ibuf_data(&ib), ibuf_size(&ib), st, err,
	    errlen));
}

int
msg_compose(struct imsgev *iev, uint32_t type, enum msg_kind k, int fd,
    const void *st, char *err, size_t errlen)
{
	char	*s;
	size_t	 len;
	int	 ret;

	if ((s = msg_encode(k, st, &len, err, errlen)) == NULL) {
		if (fd != -1)
			close(fd);
		return (-1);
	}
	if (len > FACTORY_MAXIMSG - IMSG_HEADER_SIZE) {
		free(s);
		if (fd != -1)
			close(fd);
		return (errfmt(err, errlen, "%s: %zu bytes, more than one "
		    "message holds", msg_kind_name(k), len));
	}
	ret = imsgev_compose(iev, type, 0, 0, fd, s, len);
	free(s);
	if (ret == -1)
		return (errfmt(err, errlen, "%s: %s", msg_kind_name(k),
		    strerror(errno)));
	return (0);
}

/* A child's own message breaks the parent's rules only if it is broken. */
void
msg_send(struct imsgev *iev, uint32_t type, enum msg_kind k, const void *st)
{
	char	 err[MSG_ERRLEN];

	if (msg_compose(iev, type, k, -1, st, err, sizeof(err)) == -1)
		fatalx("%s", err);
}

/*
 * IMSG_ERROR for the request id, logged too.  A reason may name a path
 * of a tree or quote a forge: it goes out escaped (esc.h).
 */
void
msg_send_error(struct imsgev *iev, const char *id, const char *reason)
{
	struct msg_error	 m;

	memset(&m, 0, sizeof(m));
	strlcpy(m.id, id, sizeof(m.id));
	if (esc_encode(reason, strlen(reason), m.error, sizeof(m.error)) == -1)
		strlcpy(m.error, "(reason too long)", sizeof(m.error));
	log_warnx("%s: %s", id, m.error);
	msg_send(iev, IMSG_ERROR, MSG_ERROR, &m);
}

const struct field *
msg_fields(enum msg_kind k, size_t *n)
{
	if ((unsigned)k >= MSG_KIND_MAX) {
		*n = 0;
		return (NULL);
	}
	*n = descs[k].nf;
	return (descs[k].f);
}

const struct field *
msg_github_fields(size_t *n)
{
	*n = NELEM(f_github);
	return (f_github);
}
