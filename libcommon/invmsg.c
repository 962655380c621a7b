/*
 * The strict reading of IMSG_INVENTORY (invmsg.h).  Every value comes
 * from the reconciler and is hostile until it has passed here: it is
 * read field by field in the suite's one wire format (wire.h), each
 * count bounded by the bytes left before anything is allocated, each
 * string bounded, NUL-checked and printable, each id the syntax the
 * parent gives ids, nothing left over.  Values are quoted in errors
 * with anything but printable ASCII escaped, and cut short.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "invmsg.h"
#include "util.h"
#include "wire.h"

#define INM_VISMAX	48	/* bytes of a bad value quoted in an error */

static void	 inm_vis(const char *, size_t, char *, size_t);
static int	 inm_count(struct mread *, const char *, size_t, size_t,
		    void **, size_t *);
static int	 inm_str(struct mread *, const char *, char *, size_t);
static int	 inm_id(struct mread *, const char *, size_t, char *);
static int	 inm_ids(struct mread *, const char *, struct invmsg_id **,
		    size_t *);
static int	 inm_cgroups(struct mread *, struct invmsg *);
static int	 inm_procs(struct mread *, uid_t, uid_t, struct invmsg *);
static int	 inm_mounts(struct mread *, struct invmsg *);
static int	 inm_branches(struct mread *, struct invmsg *);
static int	 inm_pulls(struct mread *, struct invmsg *);
static int	 inm_errors(struct mread *, struct invmsg *);

int
invmsg_id_valid(const char *s, size_t len)
{
	size_t	 i;

	/* a-YYYYMMDD-NNNN: the sequence has 4 to 10 digits (%04u). */
	if (len < 15 || len > 21 || len >= ATTEMPT_ID_MAX ||
	    s[0] != 'a' || s[1] != '-' || s[10] != '-')
		return (0);
	for (i = 2; i < len; i++)
		if (i != 10 && (s[i] < '0' || s[i] > '9'))
			return (0);
	return (1);
}

static void
inm_vis(const char *s, size_t len, char *out, size_t outlen)
{
	size_t	 i, o = 0;

	for (i = 0; i < len && i < INM_VISMAX && o + 5 < outlen; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' &&
		    s[i] != '\\')
			out[o++] = s[i];
		else
			o += snprintf(out + o, outlen - o, "\\x%02x",
			    (unsigned char)s[i]);
	}
	if (i < len && o + 4 < outlen)
		o += snprintf(out + o, outlen - o, "...");
	out[o] = '\0';
}

/*
 * A list's count, bounded before anything is allocated: each element
 * takes at least min bytes, so a count the rest of the message cannot
 * hold is a lie.
 */
static int
inm_count(struct mread *r, const char *field, size_t elsize, size_t min,
    void **out, size_t *n)
{
	uint32_t	 count;

	*out = NULL;
	*n = 0;
	if (m_get_n32(r, field, &count) == -1)
		return (-1);
	if (count > ibuf_size(&r->ib) / min)
		return (m_fail(r, "field %s: %u elements, more than the "
		    "%zu bytes left can hold", field, count,
		    ibuf_size(&r->ib)));
	if (count == 0)
		return (0);
	if ((*out = calloc(count, elsize)) == NULL)
		return (m_fail(r, "field %s: out of memory", field));
	*n = count;
	return (0);
}

/*
 * A string: no NUL inside, shorter than bufsz (m_get_str), then
 * printable ASCII only.  where names it in the error.
 */
static int
inm_str(struct mread *r, const char *where, char *buf, size_t bufsz)
{
	char	 vis[INM_VISMAX * 4 + 8];
	size_t	 len, k;

	if (m_get_str(r, where, buf, bufsz) == -1)
		return (-1);
	len = strlen(buf);
	for (k = 0; k < len; k++)
		if (buf[k] < 0x20 || buf[k] > 0x7e) {
			inm_vis(buf, len, vis, sizeof(vis));
			return (m_fail(r, "field %s: \"%s\": not printable "
			    "ASCII", where, vis));
		}
	return (0);
}

/* An attempt id, checked by our own syntax, never the child's. */
static int
inm_id(struct mread *r, const char *field, size_t i, char *id)
{
	char	 vis[INM_VISMAX * 4 + 8], where[64];

	snprintf(where, sizeof(where), "%s[%zu]", field, i);
	if (inm_str(r, where, id, ATTEMPT_ID_MAX) == -1)
		return (-1);
	if (!invmsg_id_valid(id, strlen(id))) {
		inm_vis(id, strlen(id), vis, sizeof(vis));
		return (m_fail(r, "field %s: \"%s\" is not an attempt id",
		    where, vis));
	}
	return (0);
}

static int
inm_ids(struct mread *r, const char *field, struct invmsg_id **out,
    size_t *n)
{
	size_t	 i;

	if (inm_count(r, field, sizeof(**out), 4, (void **)out, n) == -1)
		return (-1);
	for (i = 0; i < *n; i++)
		if (inm_id(r, field, i, (*out)[i].id) == -1)
			return (-1);
	return (0);
}

static int
inm_cgroups(struct mread *r, struct invmsg *m)
{
	char	 w[64];
	size_t	 i;
	uint8_t	 kind;

	if (inm_count(r, "cgroups", sizeof(*m->cgroups), 5,
	    (void **)&m->cgroups, &m->ncgroups) == -1)
		return (-1);
	for (i = 0; i < m->ncgroups; i++) {
		snprintf(w, sizeof(w), "cgroups[%zu].kind", i);
		if (inm_id(r, "cgroups", i, m->cgroups[i].id) == -1 ||
		    m_get_n8(r, w, &kind) == -1)
			return (-1);
		if (kind >= CG_KINDS)
			return (m_fail(r, "%s: %u is no kind", w, kind));
		m->cgroups[i].kind = kind;
	}
	return (0);
}

static int
inm_procs(struct mread *r, uid_t lo, uid_t hi, struct invmsg *m)
{
	struct invmsg_proc	*p;
	uint32_t		 pid, uid;
	char			 w[64];
	size_t			 i;

	if (inm_count(r, "processes", sizeof(*m->procs), 12,
	    (void **)&m->procs, &m->nprocs) == -1)
		return (-1);
	for (i = 0; i < m->nprocs; i++) {
		p = &m->procs[i];
		snprintf(w, sizeof(w), "processes[%zu].pid", i);
		m_get_n32(r, w, &pid);
		snprintf(w, sizeof(w), "processes[%zu].uid", i);
		m_get_n32(r, w, &uid);
		snprintf(w, sizeof(w), "processes[%zu].comm", i);
		if (inm_str(r, w, p->comm, sizeof(p->comm)) == -1)
			return (-1);
		/* Never pid 1, never a process group or "every process". */
		if (pid < 2 || pid > INVMSG_PIDMAX)
			return (m_fail(r, "processes[%zu]: pid %u out of "
			    "range", i, pid));
		if (uid < lo || uid > hi)
			return (m_fail(r, "processes[%zu]: uid %u is not in "
			    "attempt-uids %u-%u", i, uid, (unsigned)lo,
			    (unsigned)hi));
		p->pid = (pid_t)pid;
		p->uid = (uid_t)uid;
	}
	return (0);
}

static int
inm_mounts(struct mread *r, struct invmsg *m)
{
	char	 w[64];
	size_t	 i;

	if (inm_count(r, "mounts", sizeof(*m->mounts), 5,
	    (void **)&m->mounts, &m->nmounts) == -1)
		return (-1);
	for (i = 0; i < m->nmounts; i++) {
		snprintf(w, sizeof(w), "mounts[%zu].verify", i);
		if (inm_id(r, "mounts", i, m->mounts[i].id) == -1 ||
		    m_get_bool(r, w, &m->mounts[i].verify) == -1)
			return (-1);
	}
	return (0);
}

static int
inm_branches(struct mread *r, struct invmsg *m)
{
	struct invmsg_branch	*b;
	char			 buf[INVMSG_STRMAX], w[64];
	size_t			 i;

	if (inm_count(r, "branches", sizeof(*m->branches), 12,
	    (void **)&m->branches, &m->nbranches) == -1)
		return (-1);
	for (i = 0; i < m->nbranches; i++) {
		b = &m->branches[i];
		snprintf(w, sizeof(w), "branches[%zu].repo", i);
		if (inm_str(r, w, buf, sizeof(buf)) == -1 ||
		    inm_id(r, "branches", i, b->id) == -1)
			return (-1);
		snprintf(w, sizeof(w), "branches[%zu].commit", i);
		if (inm_str(r, w, b->commit, sizeof(b->commit)) == -1)
			return (-1);
		if (!hex_valid(b->commit, 40))
			return (m_fail(r, "branches[%zu]: commit is not 40 "
			    "hex digits", i));
		if ((b->repo = strdup(buf)) == NULL)
			return (m_fail(r, "out of memory"));
	}
	return (0);
}

static int
inm_pulls(struct mread *r, struct invmsg *m)
{
	struct invmsg_pull	*p;
	uint32_t		 number;
	char			 buf[INVMSG_STRMAX], w[64];
	size_t			 i;

	if (inm_count(r, "pulls", sizeof(*m->pulls), 12, (void **)&m->pulls,
	    &m->npulls) == -1)
		return (-1);
	for (i = 0; i < m->npulls; i++) {
		p = &m->pulls[i];
		snprintf(w, sizeof(w), "pulls[%zu].dir", i);
		if (inm_str(r, w, buf, sizeof(buf)) == -1 ||
		    inm_id(r, "pulls", i, p->id) == -1)
			return (-1);
		snprintf(w, sizeof(w), "pulls[%zu].number", i);
		if (m_get_n32(r, w, &number) == -1)
			return (-1);
		if (number < 1 || number > INT_MAX)
			return (m_fail(r, "pulls[%zu]: number %u out of "
			    "range", i, number));
		p->number = (int)number;
		if ((p->dir = strdup(buf)) == NULL)
			return (m_fail(r, "out of memory"));
	}
	return (0);
}

static int
inm_errors(struct mread *r, struct invmsg *m)
{
	char	 buf[INVMSG_STRMAX], w[64];
	size_t	 i;

	if (inm_count(r, "errors", sizeof(*m->errors), 4,
	    (void **)&m->errors, &m->nerrors) == -1)
		return (-1);
	for (i = 0; i < m->nerrors; i++) {
		snprintf(w, sizeof(w), "errors[%zu]", i);
		if (inm_str(r, w, buf, sizeof(buf)) == -1)
			return (-1);
		if ((m->errors[i] = strdup(buf)) == NULL)
			return (m_fail(r, "out of memory"));
	}
	return (0);
}

int
invmsg_decode(const void *data, size_t len, uid_t lo, uid_t hi,
    struct invmsg *m, char *err, size_t errlen)
{
	struct mread	 r;
	uint64_t	 skipped;

	memset(m, 0, sizeof(*m));
	m_open(&r, "INVENTORY", data, len, err, errlen);
	if (inm_ids(&r, "attempt_dirs", &m->dirs, &m->ndirs) == -1 ||
	    inm_ids(&r, "verify_dirs", &m->vdirs, &m->nvdirs) == -1 ||
	    inm_cgroups(&r, m) == -1 ||
	    inm_procs(&r, lo, hi, m) == -1 ||
	    inm_mounts(&r, m) == -1 ||
	    inm_branches(&r, m) == -1 ||
	    inm_pulls(&r, m) == -1 ||
	    m_get_n64(&r, "skipped", &skipped) == -1)
		return (-1);
	if (skipped > LLONG_MAX)
		return (m_fail(&r, "field skipped: %llu is not a count",
		    (unsigned long long)skipped));
	m->skipped = (long long)skipped;
	if (inm_errors(&r, m) == -1 ||
	    m_get_bool(&r, "truncated", &m->truncated) == -1)
		return (-1);
	return (m_end(&r));
}

void
invmsg_free(struct invmsg *m)
{
	size_t	 i;

	for (i = 0; i < m->nbranches; i++)
		free(m->branches[i].repo);
	for (i = 0; i < m->npulls; i++)
		free(m->pulls[i].dir);
	for (i = 0; i < m->nerrors; i++)
		free(m->errors[i]);
	free(m->dirs);
	free(m->vdirs);
	free(m->cgroups);
	free(m->procs);
	free(m->mounts);
	free(m->branches);
	free(m->pulls);
	free(m->errors);
	memset(m, 0, sizeof(*m));
}

int
cg_name(const char *id, int kind, char *buf, size_t len)
{
	int	 n;

	if (kind < 0 || kind >= CG_KINDS)
		return (-1);
	if (kind < CG_KIND_SERVICE)
		n = snprintf(buf, len, "%s%s", id, kind == CG_KIND_VALIDATION ?
		    "-v" : "");
	else
		n = snprintf(buf, len, "%s-%ss%d", id,
		    (kind - CG_KIND_SERVICE) % 2 ? "v" : "",
		    (kind - CG_KIND_SERVICE) / 2);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

int
cg_kind(const char *name, size_t *idlen)
{
	size_t	 len = strlen(name);
	int	 v;

	*idlen = len;
	if (len > 2 && strcmp(name + len - 2, "-v") == 0) {
		*idlen = len - 2;
		return (CG_KIND_VALIDATION);
	}
	/* "-sN" or "-vsN", N a single digit below MANIFEST_SERVICES. */
	if (len > 3 && name[len - 3] == '-' && name[len - 2] == 's' &&
	    name[len - 1] >= '0' && name[len - 1] < '0' + MANIFEST_SERVICES) {
		*idlen = len - 3;
		return (CG_KIND_SERVICE + 2 * (name[len - 1] - '0'));
	}
	v = len > 4 && name[len - 4] == '-' && name[len - 3] == 'v' &&
	    name[len - 2] == 's';
	if (v && name[len - 1] >= '0' &&
	    name[len - 1] < '0' + MANIFEST_SERVICES) {
		*idlen = len - 4;
		return (CG_KIND_SERVICE + 2 * (name[len - 1] - '0') + 1);
	}
	return (CG_KIND_AGENT);
}
