/*
 * The parent's part of the attestations (attest.h, factory-receipts(5)
 * ATTESTATIONS): the provenance it signs with the receipt key before a
 * verifier sees the bundle, the check of the verifier's envelopes
 * against the pinned verifier key, and the file of all three kept in
 * the state directory, root's alone, beyond the attempt's teardown.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest.h"
#include "factoryd.h"
#include "log.h"
#include "receipt.h"
#include "sandbox.h"
#include "util.h"

/* The isolation rows of factory-sandbox(8) the parent enforces on every run. */
static const char *const isolation_rows[] = {
	"identity", "credentials", "filesystem", "network", "syscalls",
	"tools", "time", "budgets", "frozen scope", "kill switch", "replay",
	"audit",
};
#define NROWS	(sizeof(isolation_rows) / sizeof(isolation_rows[0]))

static json_t *
strv_json(char * const *v)
{
	json_t	*a;

	if ((a = json_array()) == NULL)
		fatal(NULL);
	for (; v != NULL && *v != NULL; v++)
		if (json_array_append_new(a, json_string(*v)) == -1)
			fatal(NULL);
	return (a);
}

/*
 * The isolation policy one attempt ran under, from the frozen manifest
 * and the sandbox this host gives: what its digest stands for.
 */
static json_t *
isolation_policy(const struct attempt *a)
{
	const struct manifest_limits *l = &a->m->limits;
	json_t	*p, *rows;
	size_t	 i;

	if ((rows = json_array()) == NULL)
		fatal(NULL);
	for (i = 0; i < NROWS; i++)
		json_array_append_new(rows, json_string(isolation_rows[i]));
	p = json_pack("{s:o, s:s, s:s, s:o, s:o, s:o, s:{s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I}}", "rows", rows, "downgraded",
	    sandbox_downgrade_text(), "replaced", sandbox_replaced_text(),
	    "scope", strv_json(a->m->scope), "exec",
	    a->m->exec != NULL ? strv_json(a->m->exec) : json_string("default"),
	    "egress", strv_json(a->m->allow), "limits",
	    "wall_ms", (json_int_t)l->wall_ms, "cpu_ms", (json_int_t)l->cpu_ms,
	    "memory", (json_int_t)l->memory, "pids", (json_int_t)l->pids,
	    "tree", (json_int_t)l->tree, "log", (json_int_t)l->log,
	    "disk", (json_int_t)a->disk);
	if (p == NULL)
		fatal(NULL);
	return (p);
}

/* "sha256:<hex>" of the policy's canonical form. */
void
attest_isolation(const struct attempt *a, char out[MSG_DIGEST])
{
	json_t	*p = isolation_policy(a);
	char	*s, hex[SHA256_HEX_LEN + 1];

	if ((s = receipt_canonical(p)) == NULL || sha256_hex(s, strlen(s),
	    hex) == -1)
		fatal("isolation policy digest");
	free(s);
	json_decref(p);
	snprintf(out, MSG_DIGEST, "sha256:%s", hex);
}

static int
attest_path(const char *id, const char *suffix, char *buf, size_t len)
{
	char	 dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/attest", env->conf->statedir);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return (-1);
	if (snprintf(buf, len, "%s/%s%s", dir, id, suffix) >= (int)len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

static json_t *
dependency(const char *uri, const char *alg, const char *hex)
{
	return (json_pack("{s:s, s:{s:s}}", "uri", uri, "digest", alg, hex));
}

static json_t *
provenance_predicate(const struct attempt *a, const char *isolation)
{
	json_t	*deps, *p;
	char	 uri[256], t0[21], t1[21], builder[128];

	deps = json_array();
	snprintf(uri, sizeof(uri), "urn:factory:repository:%s", a->repo);
	json_array_append_new(deps, dependency(uri, "gitCommit", a->baseline));
	if (a->image[0] != '\0')
		json_array_append_new(deps, dependency("urn:factory:image",
		    "sha256", a->image + 7));
	if (a->toolchain[0] != '\0')
		json_array_append_new(deps, dependency("urn:factory:toolchain",
		    "sha256", a->toolchain + 7));
	attest_time(a->t[ST_ALLOCATION] != 0 ? a->t[ST_ALLOCATION] :
	    a->t[ST_QUEUE], t0);
	attest_time(a->t[ST_VERIFY] != 0 ? a->t[ST_VERIFY] : a->t[ST_QUEUE],
	    t1);
	snprintf(builder, sizeof(builder), "urn:factory:factoryd:%s",
	    env->instance);
	p = json_pack("{s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:o}, s:o}, "
	    "s:{s:{s:s, s:{s:s}}, s:{s:s, s:s, s:s}, s:[{s:s, s:{s:s}, "
	    "s:{s:I}}]}}",
	    "buildDefinition",
	    "buildType", ATTEST_BUILD_TYPE,
	    "externalParameters", "manifest", a->digest, "repository", a->repo,
	    "baseline", a->baseline,
	    "internalParameters", "isolationPolicy", isolation, "egress",
	    strv_json(a->m->allow),
	    "resolvedDependencies", deps,
	    "runDetails",
	    "builder", "id", builder, "version", "factoryd", FACTORY_VERSION,
	    "metadata", "invocationId", a->id, "startedOn", t0, "finishedOn",
	    t1,
	    "byproducts", "name", "receipts", "digest", "sha256", a->prev,
	    "annotations", "count", (json_int_t)a->nreceipts);
	if (p == NULL)
		fatal("provenance");
	return (p);
}

/*
 * Before the verifier gets the bundle: the provenance, signed, kept;
 * its payload digest and the isolation policy digest go to the
 * verifier, which names them in its summary.
 */
int
attest_provenance(const struct attempt *a, char digest[MSG_DIGEST],
    char isolation[MSG_DIGEST], char *err, size_t errlen)
{
	json_t	*st;
	char	*line, *buf, hex[SHA256_HEX_LEN + 1], path[PATH_MAX];
	int	 rv;

	attest_isolation(a, isolation);
	st = attest_statement(attest_subject(a->commit, a->tree,
	    a->bundle_sha256), ATTEST_PROVENANCE, provenance_predicate(a,
	    isolation));
	if (st == NULL) {
		snprintf(err, errlen, "provenance: no commit, tree or bundle");
		return (-1);
	}
	line = attest_sign(st, env->receipt_key, hex);
	json_decref(st);
	if (line == NULL) {
		snprintf(err, errlen, "provenance: cannot sign");
		return (-1);
	}
	if (attest_path(a->id, ".provenance", path, sizeof(path)) == -1 ||
	    asprintf(&buf, "%s\n", line) == -1) {
		free(line);
		snprintf(err, errlen, "provenance: %s", strerror(errno));
		return (-1);
	}
	free(line);
	rv = attest_write_file(path, buf, strlen(buf), err, errlen);
	free(buf);
	snprintf(digest, MSG_DIGEST, "sha256:%s", hex);
	return (rv);
}

/* A file of ours, bounded: an attestation file is never larger. */
static char *
read_small(const char *path, size_t *lenp)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 max = (size_t)ATTEST_MAX * (ATTEST_LINE_MAX + 1);
	size_t		 off = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return (NULL);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (size_t)st.st_size > max || (buf = malloc(st.st_size + 1)) ==
	    NULL) {
		close(fd);
		errno = EINVAL;
		return (NULL);
	}
	while (off < (size_t)st.st_size && (n = read(fd, buf + off,
	    st.st_size - off)) > 0)
		off += n;
	close(fd);
	buf[off] = '\0';
	*lenp = off;
	return (buf);
}

/* One envelope of the verifier's, of the kind expected. */
static int
open_verifiers(const char *line, enum attest_kind kind, const char *what,
    char *err, size_t errlen)
{
	struct attest_env	 e;
	char			 why[512];

	if (attest_open(line, strlen(line), env->verifier_pub, &e, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", what, why);
		return (-1);
	}
	attest_env_free(&e);
	if (e.kind != kind) {
		snprintf(err, errlen, "%s: another predicateType", what);
		return (-1);
	}
	return (0);
}

/*
 * The verdict's envelopes: signed by the pinned verifier key, about
 * our provenance and the same subject, and saying what the verdict
 * says.  An accepted verdict without them is refused like one that
 * signs garbage.  The three are then kept, atomically.
 */
int
attest_verdict(const struct attempt *a, const char *vsa, const char *tr,
    int accepted, char *err, size_t errlen)
{
	struct attest_summary	 sum;
	char			 path[PATH_MAX], rfp[CRYPTO_FP_SIZE];
	char			 vfp[CRYPTO_FP_SIZE], *pins[2], *prov, *buf;
	size_t			 len;
	int			 rv;

	if (vsa == NULL || (accepted && tr == NULL)) {
		if (!accepted)
			return (0);	/* rejected before any summary */
		snprintf(err, errlen, "accepted without a verification "
		    "summary and a test result");
		return (-1);
	}
	if (open_verifiers(vsa, ATTEST_K_VSA, "vsa", err, errlen) == -1 ||
	    (tr != NULL && open_verifiers(tr, ATTEST_K_TEST_RESULT,
	    "test_result", err, errlen) == -1))
		return (-1);
	if (attest_path(a->id, ".provenance", path, sizeof(path)) == -1 ||
	    (prov = read_small(path, &len)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (asprintf(&buf, "%s%s\n%s%s", prov, vsa, tr != NULL ? tr : "",
	    tr != NULL ? "\n" : "") == -1)
		fatal(NULL);
	free(prov);
	ed25519_fingerprint_raw(env->receipt_pub, rfp);
	ed25519_fingerprint_raw(env->verifier_pub, vfp);
	pins[0] = rfp;
	pins[1] = vfp;
	if (attest_verify_buf(buf, strlen(buf), pins, 2, &sum, err,
	    errlen) == -1) {
		free(buf);
		return (-1);
	}
	if (strcmp(sum.result, accepted ? "PASSED" : "FAILED") != 0 ||
	    strcmp(sum.builder_key, rfp) != 0) {
		snprintf(err, errlen, "vsa: verificationResult %s, the "
		    "verdict says %s", sum.result, accepted ? "accepted" :
		    "rejected");
		free(buf);
		return (-1);
	}
	if (attest_path(a->id, ".intoto.jsonl", path, sizeof(path)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(buf);
		return (-1);
	}
	rv = attest_write_file(path, buf, strlen(buf), err, errlen);
	free(buf);
	return (rv);
}

/* The kept envelopes of an attempt (malloc'd), or NULL with errno. */
char *
attest_export(const char *id, size_t *lenp)
{
	char	 path[PATH_MAX];

	if (attest_path(id, ".intoto.jsonl", path, sizeof(path)) == -1)
		return (NULL);
	return (read_small(path, lenp));
}

/*
 * The check run's summary (publisher: github): plain text the parent
 * writes from what it witnessed, never from a child's words.
 */
char *
attest_check_summary(const struct attempt *a, uint64_t now)
{
	json_t		*stages;
	const char	*k;
	json_t		*v;
	char		*s = NULL, iso[MSG_DIGEST], st[1024] = "";
	char		 rows[512] = "";
	size_t		 i;

	attest_isolation(a, iso);
	for (i = 0; i < NROWS; i++) {
		if (i > 0)
			strlcat(rows, ", ", sizeof(rows));
		strlcat(rows, isolation_rows[i], sizeof(rows));
	}
	stages = lifecycle_stages(a, now, 0);
	json_object_foreach(stages, k, v)
		if (json_is_integer(v))
			snprintf(st + strlen(st), sizeof(st) - strlen(st),
			    "%s%s %lld ms", st[0] != '\0' ? ", " : "", k,
			    (long long)json_integer_value(v));
	json_decref(stages);
	if (asprintf(&s, "Attempt %s, verdict: accepted.\n\n"
	    "- environment: image %s, toolchain %s\n"
	    "- isolation rows enforced: %s (downgraded: %s; replaced by an "
	    "equivalent: %s; policy %s)\n"
	    "- validation: passed (re-run for the verifier in a fresh "
	    "sandbox)\n"
	    "- receipts: %zu, chain head sha256:%s\n"
	    "- stage times: %s\n\n"
	    "Attestations (in-toto, DSSE): `factoryctl attest %s`, "
	    "verify with `factoryctl verify -a -K builder=RECEIPT-KEY "
	    "-K verifier=VERIFIER-KEY` (the fingerprints factoryd logs at "
	    "start: without -K any key passes).\n",
	    a->id,
	    a->image[0] != '\0' ? a->image : "host (floating)",
	    a->toolchain[0] != '\0' ? a->toolchain : "none", rows,
	    sandbox_downgrade_text(), sandbox_replaced_text(), iso,
	    a->nreceipts,
	    a->prev, st[0] != '\0' ? st : "none", a->id) == -1)
		fatal(NULL);
	return (s);
}

/*
 * What a publication carries: the kept envelopes, one line each, and
 * the check run's text.  Without a kept file (an attempt verified
 * before attestations existed) it carries none; the publisher then
 * makes no check run.
 */
void
attest_publish_fill(const struct attempt *a, struct msg_publish *m,
    uint64_t now)
{
	char	*buf, *p, *nl;
	size_t	 len;

	m->attest = NULL;
	m->nattest = 0;
	m->summary = NULL;
	if ((buf = attest_export(a->id, &len)) == NULL) {
		log_warnx("%s: no attestations kept: %s", a->id,
		    strerror(errno));
		return;
	}
	for (p = buf; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = '\0';
		if (strv_addf(&m->attest, &m->nattest, "%s", p) == -1)
			fatal(NULL);
	}
	free(buf);
	m->summary = attest_check_summary(a, now);
}

void
attest_publish_free(struct msg_publish *m)
{
	size_t	 i;

	for (i = 0; i < m->nattest; i++)
		free(m->attest[i]);
	free(m->attest);
	free(m->summary);
	m->attest = NULL;
	m->nattest = 0;
	m->summary = NULL;
}

/* factoryctl attest: the kept envelopes, one per line. */
void
attest_ctl(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	char		*buf;
	size_t		 len;

	if ((a = reply_attempt(c, imsg)) == NULL)
		return;
	if ((buf = attest_export(a->id, &len)) == NULL) {
		reply_fail(c, "%s: no attestations (%s)", a->id,
		    errno == ENOENT ? "not verified" : strerror(errno));
		return;
	}
	reply_obj(c, json_pack("{s:s, s:s%}", "id", a->id, "export",
	    buf, len));
	free(buf);
}
