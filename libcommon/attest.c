/*
 * in-toto Statements in DSSE envelopes.  See attest.h for the format.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "attest.h"
#include "crypto.h"
#include "esc.h"
#include "receipt.h"
#include "util.h"

#define PARSE_FLAGS	(JSON_REJECT_DUPLICATES)
#define SHOWN_MAX	64	/* a whole fingerprint */
#define SHOWN_SIZE	(SHOWN_MAX * ESC_MAXEXPAND + 1)

static const char *const kind_types[ATTEST_K_MAX] = {
	ATTEST_PROVENANCE,
	ATTEST_VSA,
	ATTEST_TEST_RESULT,
};

/* A string from the file, as an error message may show it. */
static const char *
shown(const char *s, char buf[SHOWN_SIZE])
{
	if (esc_encode(s, strnlen(s, SHOWN_MAX), buf, SHOWN_SIZE) == -1)
		return ("?");
	return (buf);
}

int
attest_pae(const char *type, const void *body, size_t len, uint8_t **out,
    size_t *outlen)
{
	char	 head[128];
	size_t	 tlen = strlen(type);
	int	 n;

	/* "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body */
	n = snprintf(head, sizeof(head), "DSSEv1 %zu ", tlen);
	if (n < 0 || (size_t)n >= sizeof(head))
		return (-1);
	if (len > SIZE_MAX / 2 || tlen > SIZE_MAX / 2)
		return (-1);
	if ((*out = malloc(n + tlen + 32 + len)) == NULL)
		return (-1);
	memcpy(*out, head, n);
	memcpy(*out + n, type, tlen);
	*outlen = n + tlen;
	*outlen += snprintf((char *)*out + *outlen, 32, " %zu ", len);
	memcpy(*out + *outlen, body, len);
	*outlen += len;
	return (0);
}

json_t *
attest_subject(const char *commit, const char *tree, const char *bundle)
{
	if (!hex_valid(commit, 40) || !hex_valid(tree, 40) ||
	    !hex_valid(bundle, 64))
		return (NULL);
	return (json_pack("[{s:s, s:{s:s}}, {s:s, s:{s:s}}, {s:s, s:{s:s}}]",
	    "name", "commit", "digest", "gitCommit", commit,
	    "name", "tree", "digest", "gitTree", tree,
	    "name", "bundle", "digest", "sha256", bundle));
}

json_t *
attest_statement(json_t *subject, const char *type, json_t *predicate)
{
	if (subject == NULL || predicate == NULL) {
		json_decref(subject);
		json_decref(predicate);
		return (NULL);
	}
	return (json_pack("{s:s, s:o, s:s, s:o}", "_type",
	    ATTEST_STATEMENT_TYPE, "subject", subject, "predicateType", type,
	    "predicate", predicate));
}

void
attest_time(uint64_t ms, char buf[21])
{
	struct tm	 tm;
	time_t		 t = (time_t)(ms / 1000);

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		strlcpy(buf, "1970-01-01T00:00:00Z", 21);
}

char *
attest_sign(const json_t *statement, EVP_PKEY *key,
    char digest[SHA256_HEX_LEN + 1])
{
	uint8_t		 sig[ED25519_SIG_LEN], pub[ED25519_PUB_LEN], *pae;
	char		*body, *b64 = NULL, *line = NULL, fp[CRYPTO_FP_SIZE];
	char		 sigb64[BASE64_SIZE(ED25519_SIG_LEN)];
	char		 pubb64[BASE64_SIZE(ED25519_PUB_LEN)];
	size_t		 blen, plen;
	json_t		*env;

	if ((body = receipt_canonical(statement)) == NULL)
		return (NULL);
	blen = strlen(body);
	if (blen > ATTEST_PAYLOAD_MAX ||
	    attest_pae(ATTEST_PAYLOAD_TYPE, body, blen, &pae, &plen) == -1) {
		free(body);
		return (NULL);
	}
	if (ed25519_sign(key, pae, plen, sig) == -1 ||
	    ed25519_public_raw(key, pub) == -1 ||
	    ed25519_fingerprint_raw(pub, fp) == -1 ||
	    (b64 = malloc(BASE64_SIZE(blen))) == NULL)
		goto done;
	if (digest != NULL && sha256_hex(body, blen, digest) == -1)
		goto done;
	base64_encode((uint8_t *)body, blen, 1, b64);
	base64_encode(sig, sizeof(sig), 1, sigb64);
	base64_encode(pub, sizeof(pub), 1, pubb64);
	env = json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "payload", b64,
	    "payloadType", ATTEST_PAYLOAD_TYPE, "signatures", "keyid", fp,
	    "publicKey", pubb64, "sig", sigb64);
	if (env != NULL) {
		line = receipt_canonical(env);
		json_decref(env);
	}
 done:
	free(pae);
	free(body);
	free(b64);
	return (line);
}

/* Exactly the members named, each of its type. */
static int
members_exactly(json_t *o, const char *const *names, const json_type *types,
    size_t n, const char *what, char *err, size_t errlen)
{
	json_t	*v;
	size_t	 i;

	if (!json_is_object(o)) {
		errfmt(err, errlen, "%s: not an object", what);
		return (-1);
	}
	for (i = 0; i < n; i++)
		if ((v = json_object_get(o, names[i])) == NULL ||
		    json_typeof(v) != types[i]) {
			errfmt(err, errlen, "%s: %s missing or mistyped", what,
			    names[i]);
			return (-1);
		}
	if (json_object_size(o) != n) {
		errfmt(err, errlen, "%s: members other than %s", what,
		    names[0]);
		return (-1);
	}
	return (0);
}

static int
b64_exact(const char *s, uint8_t *out, size_t want)
{
	size_t	 got;

	if (base64_decode(s, out, want, &got) == -1 || got != want)
		return (-1);
	return (0);
}

/* The signature object: keyid, publicKey, sig; the key matches its id. */
static int
open_signature(json_t *sigs, struct attest_env *e, uint8_t sig[ED25519_SIG_LEN],
    char *err, size_t errlen)
{
	static const char *const names[] = { "keyid", "publicKey", "sig" };
	static const json_type types[] = { JSON_STRING, JSON_STRING,
	    JSON_STRING };
	json_t		*s;
	const char	*keyid;
	char		 fp[CRYPTO_FP_SIZE], b[SHOWN_SIZE];

	if (!json_is_array(sigs) || json_array_size(sigs) != 1) {
		errfmt(err, errlen, "signatures: not exactly one signature");
		return (-1);
	}
	s = json_array_get(sigs, 0);
	if (members_exactly(s, names, types, 3, "signatures", err,
	    errlen) == -1)
		return (-1);
	keyid = json_string_value(json_object_get(s, "keyid"));
	if (b64_exact(json_string_value(json_object_get(s, "publicKey")),
	    e->pub, ED25519_PUB_LEN) == -1) {
		errfmt(err, errlen, "publicKey: not a base64 Ed25519 key");
		return (-1);
	}
	if (ed25519_fingerprint_raw(e->pub, fp) == -1 ||
	    strcmp(fp, keyid) != 0) {
		errfmt(err, errlen, "keyid: %s is not the publicKey's "
		    "fingerprint", shown(keyid, b));
		return (-1);
	}
	strlcpy(e->keyid, fp, sizeof(e->keyid));
	if (b64_exact(json_string_value(json_object_get(s, "sig")), sig,
	    ED25519_SIG_LEN) == -1) {
		errfmt(err, errlen, "sig: not a base64 Ed25519 signature");
		return (-1);
	}
	return (0);
}

/* One entry of the subject: exactly this name and this one digest. */
static int
subject_entry(json_t *x, const char *name, const char *alg, size_t hexlen)
{
	json_t	*d = json_object_get(x, "digest");

	return (json_is_object(x) && json_object_size(x) == 2 &&
	    json_is_string(json_object_get(x, "name")) &&
	    strcmp(json_string_value(json_object_get(x, "name")), name) ==
	    0 && json_is_object(d) && json_object_size(d) == 1 &&
	    hex_valid(json_string_value(json_object_get(d, alg)), hexlen));
}

/*
 * The subject is what attest_subject() makes, nothing else: the
 * result's commit, its tree and the bundle, in that order.
 */
static int
check_subject(json_t *subj, char *err, size_t errlen)
{
	if (!json_is_array(subj) || json_array_size(subj) != 3 ||
	    !subject_entry(json_array_get(subj, 0), "commit", "gitCommit",
	    40) ||
	    !subject_entry(json_array_get(subj, 1), "tree", "gitTree", 40) ||
	    !subject_entry(json_array_get(subj, 2), "bundle", "sha256", 64)) {
		errfmt(err, errlen, "subject: not a commit (gitCommit), a "
		    "tree (gitTree) and a bundle (sha256), in that order");
		return (-1);
	}
	return (0);
}

static int
open_statement(const char *body, struct attest_env *e, char *err,
    size_t errlen)
{
	static const char *const names[] = { "_type", "predicate",
	    "predicateType", "subject" };
	static const json_type types[] = { JSON_STRING, JSON_OBJECT,
	    JSON_STRING, JSON_ARRAY };
	json_error_t	 jerr;
	const char	*t;
	char		 b[SHOWN_SIZE];
	int		 k;

	if ((e->statement = json_loads(body, PARSE_FLAGS, &jerr)) == NULL) {
		errfmt(err, errlen, "payload: not a JSON statement");
		return (-1);
	}
	if (members_exactly(e->statement, names, types, 4, "payload", err,
	    errlen) == -1)
		return (-1);
	t = json_string_value(json_object_get(e->statement, "_type"));
	if (strcmp(t, ATTEST_STATEMENT_TYPE) != 0) {
		errfmt(err, errlen, "_type: %s, not %s", shown(t, b),
		    ATTEST_STATEMENT_TYPE);
		return (-1);
	}
	t = json_string_value(json_object_get(e->statement, "predicateType"));
	for (k = 0; k < ATTEST_K_MAX; k++)
		if (strcmp(t, kind_types[k]) == 0)
			break;
	if (k == ATTEST_K_MAX) {
		errfmt(err, errlen, "predicateType: %s is none of ours",
		    shown(t, b));
		return (-1);
	}
	e->kind = k;
	return (check_subject(json_object_get(e->statement, "subject"), err,
	    errlen));
}

int
attest_open(const char *line, size_t len, const uint8_t *pub,
    struct attest_env *e, char *err, size_t errlen)
{
	static const char *const names[] = { "payload", "payloadType",
	    "signatures" };
	static const json_type types[] = { JSON_STRING, JSON_STRING,
	    JSON_ARRAY };
	json_t		*o;
	json_error_t	 jerr;
	const char	*ptype, *p64;
	uint8_t		 sig[ED25519_SIG_LEN], *body = NULL, *pae = NULL;
	size_t		 blen, plen;
	char		 b[SHOWN_SIZE];
	int		 rv = -1;

	memset(e, 0, sizeof(*e));
	if (len > ATTEST_LINE_MAX || memchr(line, '\0', len) != NULL) {
		errfmt(err, errlen, "longer than %d bytes or holds a NUL",
		    ATTEST_LINE_MAX);
		return (-1);
	}
	if ((o = json_loadb(line, len, PARSE_FLAGS, &jerr)) == NULL) {
		errfmt(err, errlen, "not JSON (column %d)", jerr.column);
		return (-1);
	}
	if (members_exactly(o, names, types, 3, "envelope", err, errlen) == -1)
		goto done;
	ptype = json_string_value(json_object_get(o, "payloadType"));
	if (strcmp(ptype, ATTEST_PAYLOAD_TYPE) != 0) {
		errfmt(err, errlen, "payloadType: %s, not %s", shown(ptype, b),
		    ATTEST_PAYLOAD_TYPE);
		goto done;
	}
	if (open_signature(json_object_get(o, "signatures"), e, sig, err,
	    errlen) == -1)
		goto done;
	if (pub != NULL && memcmp(pub, e->pub, ED25519_PUB_LEN) != 0) {
		errfmt(err, errlen, "keyid: %s is not the expected key",
		    e->keyid);
		goto done;
	}
	p64 = json_string_value(json_object_get(o, "payload"));
	if ((body = malloc(ATTEST_PAYLOAD_MAX + 1)) == NULL ||
	    base64_decode(p64, body, ATTEST_PAYLOAD_MAX, &blen) == -1) {
		errfmt(err, errlen, "payload: not base64 of at most %d bytes",
		    ATTEST_PAYLOAD_MAX);
		goto done;
	}
	if (attest_pae(ptype, body, blen, &pae, &plen) == -1 ||
	    ed25519_verify(e->pub, pae, plen, sig) == -1) {
		errfmt(err, errlen, "sig: bad signature by %s", e->keyid);
		goto done;
	}
	body[blen] = '\0';
	if (memchr(body, '\0', blen) != NULL) {
		errfmt(err, errlen, "payload: holds a NUL");
		goto done;
	}
	if (sha256_hex(body, blen, e->digest) == -1 ||
	    open_statement((char *)body, e, err, errlen) == -1)
		goto done;
	rv = 0;
 done:
	free(pae);
	free(body);
	json_decref(o);
	if (rv == -1)
		attest_env_free(e);
	return (rv);
}

void
attest_env_free(struct attest_env *e)
{
	json_decref(e->statement);
	e->statement = NULL;
}

int
attest_pin_parse(const char *pin, int *roles, const char **fp)
{
	const char	*p = pin;
	size_t		 n;

	*roles = ATTEST_ROLE_BUILDER | ATTEST_ROLE_VERIFIER;
	if (strncmp(p, "builder=", 8) == 0) {
		*roles = ATTEST_ROLE_BUILDER;
		p += 8;
	} else if (strncmp(p, "verifier=", 9) == 0) {
		*roles = ATTEST_ROLE_VERIFIER;
		p += 9;
	}
	/* "SHA256:" and 43 characters of unpadded base64. */
	n = strlen(p);
	if (n != CRYPTO_FP_LEN || strncmp(p, "SHA256:", 7) != 0 ||
	    strspn(p + 7, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+/") != n - 7)
		return (-1);
	*fp = p;
	return (0);
}

/* No pins: any key.  Otherwise a pin of this key in this role. */
static int
pinned(const char *fp, int role, char * const *pins, size_t npins)
{
	const char	*pfp;
	size_t		 i;
	int		 roles;

	if (npins == 0)
		return (1);
	for (i = 0; i < npins; i++)
		if (attest_pin_parse(pins[i], &roles, &pfp) == 0 &&
		    (roles & role) != 0 && strcmp(fp, pfp) == 0)
			return (1);
	return (0);
}

/* A string at a path of objects, or NULL. */
static const char *
path_str(json_t *o, const char *a, const char *b, const char *c)
{
	o = json_object_get(o, a);
	if (b != NULL)
		o = json_object_get(o, b);
	if (c != NULL)
		o = json_object_get(o, c);
	return (json_string_value(o));
}

/*
 * The summary names the provenance by its payload digest; a PASSED one
 * names the baseline tree the verifier checked the validation's tree
 * against (its policy's annotations), which no other party made.
 */
static int
check_vsa(struct attest_env *vsa, struct attest_env *prov,
    struct attest_summary *s, char *err, size_t errlen)
{
	json_t		*p, *in;
	const char	*res, *d, *bt;

	p = json_object_get(vsa->statement, "predicate");
	res = json_string_value(json_object_get(p, "verificationResult"));
	if (res == NULL || (strcmp(res, "PASSED") != 0 &&
	    strcmp(res, "FAILED") != 0)) {
		errfmt(err, errlen, "verificationResult: not PASSED or "
		    "FAILED");
		return (-1);
	}
	strlcpy(s->result, res, sizeof(s->result));
	in = json_object_get(p, "inputAttestations");
	d = path_str(json_array_get(in, 0), "digest", "sha256", NULL);
	if (json_array_size(in) != 1 || d == NULL ||
	    strcmp(d, prov->digest) != 0) {
		errfmt(err, errlen, "inputAttestations: not the provenance "
		    "of this file (sha256 %s)", prov->digest);
		return (-1);
	}
	bt = path_str(p, "policy", "annotations", "baselineTree");
	if (bt != NULL && !hex_valid(bt, 40)) {
		errfmt(err, errlen, "policy.annotations.baselineTree: not a "
		    "tree id");
		return (-1);
	}
	if (bt == NULL && strcmp(res, "PASSED") == 0) {
		errfmt(err, errlen, "policy.annotations.baselineTree: a "
		    "PASSED summary names the baseline tree it checked");
		return (-1);
	}
	strlcpy(s->baseline_tree, bt != NULL ? bt : "",
	    sizeof(s->baseline_tree));
	return (0);
}

/*
 * The test result says what the summary says.  A PASSED summary has
 * one; a FAILED one may not (rejected before validation ran).
 */
static int
check_test_result(struct attest_env *tr, const struct attest_summary *s,
    char *err, size_t errlen)
{
	const char	*res;

	if (tr == NULL) {
		if (strcmp(s->result, "PASSED") != 0)
			return (0);
		errfmt(err, errlen, "no test result: the verification "
		    "summary says PASSED");
		return (-1);
	}
	res = path_str(tr->statement, "predicate", "result", NULL);
	if (res == NULL || (strcmp(res, "PASSED") != 0 &&
	    strcmp(res, "FAILED") != 0)) {
		errfmt(err, errlen, "result: not PASSED or FAILED");
		return (-1);
	}
	if (strcmp(res, s->result) != 0) {
		errfmt(err, errlen, "result: %s, the verification summary "
		    "says %s", res, s->result);
		return (-1);
	}
	return (0);
}

static void
subject_of(struct attest_env *e, struct attest_summary *s)
{
	json_t		*subj = json_object_get(e->statement, "subject"), *x;
	const char	*v;
	size_t		 i;

	json_array_foreach(subj, i, x) {
		if ((v = path_str(x, "digest", "gitCommit", NULL)) != NULL)
			strlcpy(s->commit, v, sizeof(s->commit));
		if ((v = path_str(x, "digest", "gitTree", NULL)) != NULL)
			strlcpy(s->tree, v, sizeof(s->tree));
		if ((v = path_str(x, "digest", "sha256", NULL)) != NULL)
			strlcpy(s->bundle, v, sizeof(s->bundle));
	}
}

/* Across envelopes: one of each kind, signers apart, subjects equal. */
static int
check_set(struct attest_env *e, size_t n, struct attest_summary *s,
    char *err, size_t errlen)
{
	struct attest_env	*by[ATTEST_K_MAX] = { NULL };
	char			 why[512];
	size_t			 i;

	for (i = 0; i < n; i++) {
		if (by[e[i].kind] != NULL) {
			errfmt(err, errlen, "envelope %zu: a second %s", i + 1,
			    kind_types[e[i].kind]);
			return (-1);
		}
		by[e[i].kind] = &e[i];
		if (!json_equal(json_object_get(e[i].statement, "subject"),
		    json_object_get(e[0].statement, "subject"))) {
			errfmt(err, errlen, "envelope %zu: subject: not the "
			    "first envelope's", i + 1);
			return (-1);
		}
	}
	if (by[ATTEST_K_PROVENANCE] == NULL || by[ATTEST_K_VSA] == NULL) {
		errfmt(err, errlen, "no %s", by[ATTEST_K_VSA] == NULL ?
		    "verification summary" : "provenance");
		return (-1);
	}
	if (by[ATTEST_K_PROVENANCE] != &e[0]) {
		errfmt(err, errlen, "envelope 1: not the provenance");
		return (-1);
	}
	for (i = 1; i < n; i++)
		if (strcmp(e[i].keyid, e[0].keyid) == 0 ||
		    strcmp(e[i].keyid, by[ATTEST_K_VSA]->keyid) != 0) {
			errfmt(err, errlen, "envelope %zu: keyid: %s signs "
			    "for the verifier", i + 1, e[i].keyid);
			return (-1);
		}
	if (check_vsa(by[ATTEST_K_VSA], &e[0], s, why, sizeof(why)) == -1) {
		errfmt(err, errlen, "envelope %td: %s",
		    by[ATTEST_K_VSA] - e + 1, why);
		return (-1);
	}
	if (check_test_result(by[ATTEST_K_TEST_RESULT], s, why,
	    sizeof(why)) == -1) {
		if (by[ATTEST_K_TEST_RESULT] == NULL)
			errfmt(err, errlen, "%s", why);
		else
			errfmt(err, errlen, "envelope %td: %s",
			    by[ATTEST_K_TEST_RESULT] - e + 1, why);
		return (-1);
	}
	strlcpy(s->builder_key, e[0].keyid, sizeof(s->builder_key));
	strlcpy(s->verifier_key, by[ATTEST_K_VSA]->keyid,
	    sizeof(s->verifier_key));
	subject_of(&e[0], s);
	return (0);
}

int
attest_verify_buf(const char *buf, size_t len, char * const *pins,
    size_t npins, struct attest_summary *sum, char *err, size_t errlen)
{
	struct attest_env	 e[ATTEST_MAX];
	struct attest_summary	 s;
	const char		*p = buf, *nl, *end = buf + len, *fp;
	char			 why[512], b[SHOWN_SIZE];
	size_t			 n = 0, i;
	int			 rv = -1, role;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < npins; i++)
		if (attest_pin_parse(pins[i], &role, &fp) == -1) {
			errfmt(err, errlen, "pin %zu: %s: not [builder=|"
			    "verifier=]SHA256:<fingerprint>", i + 1,
			    shown(pins[i], b));
			return (-1);
		}
	while (p < end) {
		if ((nl = memchr(p, '\n', end - p)) == NULL) {
			errfmt(err, errlen, "envelope %zu: no newline at the "
			    "end", n + 1);
			goto done;
		}
		if (n == ATTEST_MAX) {
			errfmt(err, errlen, "more than %d envelopes",
			    ATTEST_MAX);
			goto done;
		}
		if (attest_open(p, nl - p, NULL, &e[n], why,
		    sizeof(why)) == -1) {
			errfmt(err, errlen, "envelope %zu: %s", n + 1, why);
			goto done;
		}
		n++;
		role = e[n - 1].kind == ATTEST_K_PROVENANCE ?
		    ATTEST_ROLE_BUILDER : ATTEST_ROLE_VERIFIER;
		if (!pinned(e[n - 1].keyid, role, pins, npins)) {
			errfmt(err, errlen, "envelope %zu: keyid: %s is not "
			    "a pinned %s key", n, e[n - 1].keyid,
			    role == ATTEST_ROLE_BUILDER ? "builder" :
			    "verifier");
			goto done;
		}
		p = nl + 1;
	}
	if (n == 0) {
		errfmt(err, errlen, "no envelope");
		goto done;
	}
	if (check_set(e, n, &s, err, errlen) == -1)
		goto done;
	s.count = n;
	if (sum != NULL)
		*sum = s;
	rv = 0;
 done:
	for (i = 0; i < n; i++)
		attest_env_free(&e[i]);
	return (rv);
}

void
attest_summary_str(const struct attest_summary *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %zu envelopes, provenance by %s, "
	    "verification %s by %s, commit %s%s%s", strcmp(s->result,
	    "PASSED") == 0 ? "OK" : "FAILED", s->count, s->builder_key,
	    s->result, s->verifier_key, s->commit, s->baseline_tree[0] !=
	    '\0' ? ", baseline tree " : "", s->baseline_tree);
}

int
attest_write_file(const char *path, const void *buf, size_t len, char *err,
    size_t errlen)
{
	char		 tmp[PATH_MAX];
	const char	*p = buf;
	ssize_t		 n;
	int		 fd;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp)) {
		errfmt(err, errlen, "%s: path too long", path);
		return (-1);
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1) {
		errfmt(err, errlen, "%s: %s", tmp, strerror(errno));
		return (-1);
	}
	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		p += n;
		len -= n;
	}
	if (len > 0 || fsync(fd) == -1) {
		errfmt(err, errlen, "%s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return (-1);
	}
	close(fd);
	if (rename(tmp, path) == -1 || fsync_dir_of(path) == -1) {
		errfmt(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return (-1);
	}
	return (0);
}
