/*
 * The strict reading of IMSG_INVENTORY (invmsg.h).  Every value comes
 * from the reconciler and is hostile until it has passed here: each
 * object is unpacked with JSON_STRICT (no member left over), each
 * member has its one type, each string its bound and no NUL, each id
 * the syntax the parent gives ids.  Values are quoted in errors with
 * anything but printable ASCII escaped, and cut short.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crypto.h"
#include "invmsg.h"
#include "util.h"

#define INM_VISMAX	48	/* bytes of a bad value quoted in an error */

static void	 inm_vis(const char *, size_t, char *, size_t);
static const char *inm_where(char *, size_t, const char *, size_t,
		    const char *);
static int	 inm_str(json_t *, const char *, char *, size_t, char *,
		    size_t);
static int	 inm_id(json_t *, const char *, size_t, char *, char *,
		    size_t);
static int	 inm_array(json_t *, const char *, size_t, void **,
		    size_t *, char *, size_t);
static int	 inm_unpack(json_t *, const char *, size_t, char *, size_t,
		    const char *, ...);
static int	 inm_ids(json_t *, const char *, struct invmsg_id **,
		    size_t *, char *, size_t);
static int	 inm_cgroups(json_t *, struct invmsg *, char *, size_t);
static int	 inm_procs(json_t *, uid_t, uid_t, struct invmsg *, char *,
		    size_t);
static int	 inm_mounts(json_t *, struct invmsg *, char *, size_t);
static int	 inm_branches(json_t *, struct invmsg *, char *, size_t);
static int	 inm_pulls(json_t *, struct invmsg *, char *, size_t);
static int	 inm_errors(json_t *, struct invmsg *, char *, size_t);

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

/* "field[i]" or "field[i].member", for errors. */
static const char *
inm_where(char *buf, size_t len, const char *field, size_t i,
    const char *member)
{
	snprintf(buf, len, "%s[%zu]%s%s", field, i, member ? "." : "",
	    member ? member : "");
	return (buf);
}

/*
 * A string member: no NUL inside, shorter than bufsz, printable
 * ASCII only.  where names it in the error.
 */
static int
inm_str(json_t *v, const char *where, char *buf, size_t bufsz, char *err,
    size_t errlen)
{
	const char	*s;
	char		 vis[INM_VISMAX * 4 + 8];
	size_t		 len, k;

	if (!json_is_string(v))
		return (errfmt(err, errlen, "%s: not a string", where));
	s = json_string_value(v);
	len = json_string_length(v);
	inm_vis(s, len, vis, sizeof(vis));
	if (strlen(s) != len)
		return (errfmt(err, errlen, "%s: \"%s\": a NUL byte inside",
		    where, vis));
	if (len >= bufsz)
		return (errfmt(err, errlen, "%s: \"%s\": longer than %zu "
		    "bytes", where, vis, bufsz - 1));
	for (k = 0; k < len; k++)
		if (s[k] < 0x20 || s[k] > 0x7e)
			return (errfmt(err, errlen, "%s: \"%s\": not "
			    "printable ASCII", where, vis));
	memcpy(buf, s, len + 1);
	return (0);
}

/* An attempt id, checked by our own syntax, never the child's. */
static int
inm_id(json_t *v, const char *field, size_t i, char *id, char *err,
    size_t errlen)
{
	char	 vis[INM_VISMAX * 4 + 8], where[64];

	snprintf(where, sizeof(where), "%s[%zu]", field, i);
	if (inm_str(v, where, id, ATTEMPT_ID_MAX, err, errlen) == -1)
		return (-1);
	if (!invmsg_id_valid(id, strlen(id))) {
		inm_vis(id, strlen(id), vis, sizeof(vis));
		return (errfmt(err, errlen, "%s: \"%s\" is not an "
		    "attempt id", where, vis));
	}
	return (0);
}

static int
inm_array(json_t *v, const char *field, size_t elsize, void **out,
    size_t *n, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	if (!json_is_array(v))
		return (errfmt(err, errlen, "%s: not an array", field));
	if (json_array_size(v) == 0)
		return (0);
	if ((*out = calloc(json_array_size(v), elsize)) == NULL)
		return (errfmt(err, errlen, "%s: out of memory", field));
	*n = json_array_size(v);
	return (0);
}

/* One object of an array, every member named by fmt, nothing else. */
static int
inm_unpack(json_t *v, const char *field, size_t i, char *err,
    size_t errlen, const char *fmt, ...)
{
	json_error_t	 jerr;
	va_list		 ap;
	int		 rc;

	va_start(ap, fmt);
	rc = json_vunpack_ex(v, &jerr, JSON_STRICT, fmt, ap);
	va_end(ap);
	if (rc == -1)
		return (errfmt(err, errlen, "%s[%zu]: %s", field, i,
		    jerr.text));
	return (0);
}

static int
inm_ids(json_t *v, const char *field, struct invmsg_id **out, size_t *n,
    char *err, size_t errlen)
{
	size_t	 i;

	if (inm_array(v, field, sizeof(**out), (void **)out, n, err,
	    errlen) == -1)
		return (-1);
	for (i = 0; i < *n; i++)
		if (inm_id(json_array_get(v, i), field, i, (*out)[i].id, err,
		    errlen) == -1)
			return (-1);
	return (0);
}

static int
inm_cgroups(json_t *v, struct invmsg *m, char *err, size_t errlen)
{
	json_t	*id;
	size_t	 i;

	if (inm_array(v, "cgroups", sizeof(*m->cgroups),
	    (void **)&m->cgroups, &m->ncgroups, err, errlen) == -1)
		return (-1);
	for (i = 0; i < m->ncgroups; i++)
		if (inm_unpack(json_array_get(v, i), "cgroups", i, err, errlen,
		    "{s:o, s:b}", "id", &id, "validation",
		    &m->cgroups[i].validation) == -1 ||
		    inm_id(id, "cgroups", i, m->cgroups[i].id, err,
		    errlen) == -1)
			return (-1);
	return (0);
}

static int
inm_procs(json_t *v, uid_t lo, uid_t hi, struct invmsg *m, char *err,
    size_t errlen)
{
	struct invmsg_proc	*p;
	json_int_t		 pid, uid;
	json_t			*comm;
	char			 w[64];
	size_t			 i;

	if (inm_array(v, "processes", sizeof(*m->procs), (void **)&m->procs,
	    &m->nprocs, err, errlen) == -1)
		return (-1);
	for (i = 0; i < m->nprocs; i++) {
		p = &m->procs[i];
		if (inm_unpack(json_array_get(v, i), "processes", i, err,
		    errlen, "{s:I, s:I, s:o}", "pid", &pid, "uid", &uid,
		    "comm", &comm) == -1 ||
		    inm_str(comm, inm_where(w, sizeof(w), "processes", i,
		    "comm"), p->comm, sizeof(p->comm), err, errlen) == -1)
			return (-1);
		/* Never pid 1, never a process group or "every process". */
		if (pid < 2 || pid > INVMSG_PIDMAX)
			return (errfmt(err, errlen, "processes[%zu]: pid "
			    "%lld out of range", i, (long long)pid));
		if (uid < (json_int_t)lo || uid > (json_int_t)hi)
			return (errfmt(err, errlen, "processes[%zu]: uid "
			    "%lld is not in attempt-uids %u-%u", i,
			    (long long)uid, (unsigned)lo, (unsigned)hi));
		p->pid = (pid_t)pid;
		p->uid = (uid_t)uid;
	}
	return (0);
}

static int
inm_mounts(json_t *v, struct invmsg *m, char *err, size_t errlen)
{
	json_t	*id;
	size_t	 i;

	if (inm_array(v, "mounts", sizeof(*m->mounts), (void **)&m->mounts,
	    &m->nmounts, err, errlen) == -1)
		return (-1);
	for (i = 0; i < m->nmounts; i++)
		if (inm_unpack(json_array_get(v, i), "mounts", i, err, errlen,
		    "{s:o, s:b}", "id", &id, "verify",
		    &m->mounts[i].verify) == -1 ||
		    inm_id(id, "mounts", i, m->mounts[i].id, err,
		    errlen) == -1)
			return (-1);
	return (0);
}

static int
inm_branches(json_t *v, struct invmsg *m, char *err, size_t errlen)
{
	struct invmsg_branch	*b;
	json_t			*id, *commit, *repo;
	char			 buf[INVMSG_STRMAX], w[64];
	size_t			 i;

	if (inm_array(v, "branches", sizeof(*m->branches),
	    (void **)&m->branches, &m->nbranches, err, errlen) == -1)
		return (-1);
	for (i = 0; i < m->nbranches; i++) {
		b = &m->branches[i];
		if (inm_unpack(json_array_get(v, i), "branches", i, err,
		    errlen, "{s:o, s:o, s:o}", "repo", &repo, "id", &id,
		    "commit", &commit) == -1 ||
		    inm_id(id, "branches", i, b->id, err, errlen) == -1 ||
		    inm_str(commit, inm_where(w, sizeof(w), "branches", i,
		    "commit"), b->commit, sizeof(b->commit), err,
		    errlen) == -1 ||
		    inm_str(repo, inm_where(w, sizeof(w), "branches", i,
		    "repo"), buf, sizeof(buf), err, errlen) == -1)
			return (-1);
		if (!hex_valid(b->commit, 40))
			return (errfmt(err, errlen, "branches[%zu]: commit "
			    "is not 40 hex digits", i));
		if ((b->repo = strdup(buf)) == NULL)
			return (errfmt(err, errlen, "out of memory"));
	}
	return (0);
}

static int
inm_pulls(json_t *v, struct invmsg *m, char *err, size_t errlen)
{
	struct invmsg_pull	*p;
	json_t			*id, *dir;
	json_int_t		 number;
	char			 buf[INVMSG_STRMAX], w[64];
	size_t			 i;

	if (inm_array(v, "pulls", sizeof(*m->pulls), (void **)&m->pulls,
	    &m->npulls, err, errlen) == -1)
		return (-1);
	for (i = 0; i < m->npulls; i++) {
		p = &m->pulls[i];
		if (inm_unpack(json_array_get(v, i), "pulls", i, err, errlen,
		    "{s:o, s:o, s:I}", "dir", &dir, "id", &id, "number",
		    &number) == -1 ||
		    inm_id(id, "pulls", i, p->id, err, errlen) == -1 ||
		    inm_str(dir, inm_where(w, sizeof(w), "pulls", i, "dir"),
		    buf, sizeof(buf), err, errlen) == -1)
			return (-1);
		if (number < 1 || number > INT_MAX)
			return (errfmt(err, errlen, "pulls[%zu]: number "
			    "%lld out of range", i, (long long)number));
		p->number = (int)number;
		if ((p->dir = strdup(buf)) == NULL)
			return (errfmt(err, errlen, "out of memory"));
	}
	return (0);
}

static int
inm_errors(json_t *v, struct invmsg *m, char *err, size_t errlen)
{
	char	 buf[INVMSG_STRMAX], w[64];
	size_t	 i;

	if (inm_array(v, "errors", sizeof(*m->errors), (void **)&m->errors,
	    &m->nerrors, err, errlen) == -1)
		return (-1);
	for (i = 0; i < m->nerrors; i++) {
		if (inm_str(json_array_get(v, i), inm_where(w, sizeof(w),
		    "errors", i, NULL), buf, sizeof(buf), err, errlen) == -1)
			return (-1);
		if ((m->errors[i] = strdup(buf)) == NULL)
			return (errfmt(err, errlen, "out of memory"));
	}
	return (0);
}

int
invmsg_decode(json_t *o, uid_t lo, uid_t hi, struct invmsg *m, char *err,
    size_t errlen)
{
	json_error_t	 jerr;
	json_t		*dirs, *vdirs, *cg, *procs, *mounts, *br, *pulls;
	json_t		*errs, *skipped, *truncated;

	memset(m, 0, sizeof(*m));
	if (o == NULL || !json_is_object(o))
		return (errfmt(err, errlen, "not a JSON object"));
	if (json_unpack_ex(o, &jerr, JSON_STRICT,
	    "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "attempt_dirs", &dirs, "verify_dirs", &vdirs, "cgroups", &cg,
	    "processes", &procs, "mounts", &mounts, "branches", &br,
	    "pulls", &pulls, "skipped", &skipped, "errors", &errs,
	    "truncated", &truncated) == -1)
		return (errfmt(err, errlen, "%s", jerr.text));
	if (!json_is_integer(skipped) || json_integer_value(skipped) < 0)
		return (errfmt(err, errlen, "skipped: not a count"));
	m->skipped = json_integer_value(skipped);
	if (!json_is_boolean(truncated))
		return (errfmt(err, errlen, "truncated: not true or false"));
	m->truncated = json_is_true(truncated);
	if (inm_ids(dirs, "attempt_dirs", &m->dirs, &m->ndirs, err,
	    errlen) == -1 ||
	    inm_ids(vdirs, "verify_dirs", &m->vdirs, &m->nvdirs, err,
	    errlen) == -1 ||
	    inm_cgroups(cg, m, err, errlen) == -1 ||
	    inm_procs(procs, lo, hi, m, err, errlen) == -1 ||
	    inm_mounts(mounts, m, err, errlen) == -1 ||
	    inm_branches(br, m, err, errlen) == -1 ||
	    inm_pulls(pulls, m, err, errlen) == -1 ||
	    inm_errors(errs, m, err, errlen) == -1)
		return (-1);
	return (0);
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
