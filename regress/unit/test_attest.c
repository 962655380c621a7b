/*
 * attest.c: the DSSE pre-authentication encoding against the spec's
 * example, envelopes signed and opened, a file of three verified, and
 * every single flipped byte of every envelope refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "attest.h"
#include "crypto.h"

#define COMMIT	"0123456789abcdef0123456789abcdef01234567"
#define TREE	"89abcdef0123456789abcdef0123456789abcdef"
#define BUNDLE	"00112233445566778899aabbccddeeff" \
		"00112233445566778899aabbccddeeff"

static EVP_PKEY	*rkey, *vkey, *xkey;
static char	 rfp[CRYPTO_FP_SIZE], vfp[CRYPTO_FP_SIZE], xfp[CRYPTO_FP_SIZE];

static void
keys_setup(void)
{
	rkey = ed25519_generate();
	vkey = ed25519_generate();
	xkey = ed25519_generate();
	if (rkey == NULL || vkey == NULL || xkey == NULL ||
	    ed25519_fingerprint(rkey, rfp) == -1 ||
	    ed25519_fingerprint(vkey, vfp) == -1 ||
	    ed25519_fingerprint(xkey, xfp) == -1)
		abort();
}

static void
keys_teardown(void)
{
	EVP_PKEY_free(rkey);
	EVP_PKEY_free(vkey);
	EVP_PKEY_free(xkey);
}

static char *
envelope(const char *type, json_t *pred, EVP_PKEY *k, char *digest)
{
	json_t	*st;
	char	*line;

	st = attest_statement(attest_subject(COMMIT, TREE, BUNDLE), type,
	    pred);
	ck_assert_ptr_nonnull(st);
	line = attest_sign(st, k, digest);
	ck_assert_ptr_nonnull(line);
	json_decref(st);
	return (line);
}

#define BTREE	"456789abcdef0123456789abcdef0123456789ab"

/* A summary naming baseline tree bt (none: NULL). */
static json_t *
vsa_bt(const char *provdigest, const char *result, const char *bt)
{
	json_t	*p;

	p = json_pack("{s:[{s:s, s:{s:s}}], s:s}", "inputAttestations",
	    "uri", "urn:factory:provenance", "digest", "sha256", provdigest,
	    "verificationResult", result);
	if (bt != NULL)
		json_object_set_new(p, "policy", json_pack("{s:{s:s}}",
		    "annotations", "baselineTree", bt));
	return (p);
}

static json_t *
vsa(const char *provdigest, const char *result)
{
	return (vsa_bt(provdigest, result, BTREE));
}

/* A file: provenance by rkey, summary and test result by vkey. */
static char *
file3(const char *result)
{
	char	 d[SHA256_HEX_LEN + 1], *l[3], *f;

	l[0] = envelope(ATTEST_PROVENANCE, json_object(), rkey, d);
	l[1] = envelope(ATTEST_VSA, vsa(d, result), vkey, NULL);
	l[2] = envelope(ATTEST_TEST_RESULT, json_pack("{s:s}", "result",
	    result), vkey, NULL);
	if (asprintf(&f, "%s\n%s\n%s\n", l[0], l[1], l[2]) == -1)
		abort();
	free(l[0]);
	free(l[1]);
	free(l[2]);
	return (f);
}


#define COMMIT2	"fedcba9876543210fedcba9876543210fedcba98"

/* A file of three (two without a test result), each signer chosen. */
static char *
file_by(const char *commit, EVP_PKEY *pk, EVP_PKEY *vk, EVP_PKEY *tk,
    const char *vres, const char *tres)
{
	char	 d[SHA256_HEX_LEN + 1], *l[3] = { NULL }, *f;
	json_t	*st;
	size_t	 i;

	st = attest_statement(attest_subject(commit, TREE, BUNDLE),
	    ATTEST_PROVENANCE, json_object());
	l[0] = attest_sign(st, pk, d);
	json_decref(st);
	st = attest_statement(attest_subject(commit, TREE, BUNDLE),
	    ATTEST_VSA, vsa(d, vres));
	l[1] = attest_sign(st, vk, NULL);
	json_decref(st);
	if (tres != NULL) {
		st = attest_statement(attest_subject(commit, TREE, BUNDLE),
		    ATTEST_TEST_RESULT, json_pack("{s:s}", "result", tres));
		l[2] = attest_sign(st, tk, NULL);
		json_decref(st);
	}
	ck_assert_ptr_nonnull(l[0]);
	ck_assert_ptr_nonnull(l[1]);
	if (asprintf(&f, "%s\n%s\n%s%s", l[0], l[1], l[2] != NULL ? l[2] : "",
	    l[2] != NULL ? "\n" : "") == -1)
		abort();
	for (i = 0; i < 3; i++)
		free(l[i]);
	return (f);
}

/* Line n (from 1) of a file, malloc'd, with its newline. */
static char *
line_of(const char *f, int n)
{
	const char	*p = f, *nl;

	while (--n > 0)
		p = strchr(p, '\n') + 1;
	nl = strchr(p, '\n');
	return (strndup(p, nl - p + 1));
}

static char	 verr[512];
static struct attest_summary vsum;

/* attest_verify_buf() with pins given as a NULL-terminated list. */
static int
verify_pins(const char *f, const char *p0, const char *p1, const char *p2)
{
	char	*pins[3];
	size_t	 n = 0;

	if (p0 != NULL)
		pins[n++] = (char *)p0;
	if (p1 != NULL)
		pins[n++] = (char *)p1;
	if (p2 != NULL)
		pins[n++] = (char *)p2;
	verr[0] = '\0';
	return (attest_verify_buf(f, strlen(f), pins, n, &vsum, verr,
	    sizeof(verr)));
}

#define REFUSED(f, p0, p1, p2, text) do {				\
	ck_assert_int_eq(verify_pins(f, p0, p1, p2), -1);		\
	ck_assert_msg(strstr(verr, text) != NULL, "error \"%s\", "	\
	    "expected \"%s\"", verr, text);				\
} while (0)
#define ACCEPTED(f, p0, p1, p2) \
	ck_assert_msg(verify_pins(f, p0, p1, p2) == 0, "refused: %s", verr)

/* "role=fingerprint" in a static buffer of four. */
static const char *
role(const char *r, const char *fp)
{
	static char	 b[4][80];
	static int	 i;

	i = (i + 1) % 4;
	snprintf(b[i], sizeof(b[i]), "%s=%s", r, fp);
	return (b[i]);
}

/*
 * An envelope made by hand: the statement signed by signer over the
 * PAE of ptype, showing shown's public key under keyid (its own
 * fingerprint when NULL).
 */
static char *
raw_envelope(const char *ptype, const json_t *st, EVP_PKEY *signer,
    EVP_PKEY *shown, const char *keyid)
{
	uint8_t	 sig[ED25519_SIG_LEN], pub[ED25519_PUB_LEN], *pae;
	char	*body, *b64, sb[BASE64_SIZE(ED25519_SIG_LEN)], *line;
	char	 pb[BASE64_SIZE(ED25519_PUB_LEN)], fp[CRYPTO_FP_SIZE];
	size_t	 plen;
	json_t	*env;

	body = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_ptr_nonnull(body);
	ck_assert_int_eq(attest_pae(ptype, body, strlen(body), &pae, &plen),
	    0);
	ck_assert_int_eq(ed25519_sign(signer, pae, plen, sig), 0);
	ck_assert_int_eq(ed25519_public_raw(shown, pub), 0);
	ck_assert_int_eq(ed25519_fingerprint_raw(pub, fp), 0);
	b64 = malloc(BASE64_SIZE(strlen(body)));
	base64_encode((uint8_t *)body, strlen(body), 1, b64);
	base64_encode(sig, sizeof(sig), 1, sb);
	base64_encode(pub, sizeof(pub), 1, pb);
	env = json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "payload", b64,
	    "payloadType", ptype, "signatures", "keyid", keyid != NULL ?
	    keyid : fp, "publicKey", pb, "sig", sb);
	line = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(env);
	free(pae);
	free(body);
	free(b64);
	return (line);
}

START_TEST(t_pae)
{
	uint8_t	*p;
	size_t	 n;
	const char *want =
	    "DSSEv1 29 http://example.com/HelloWorld 11 hello world";

	/* The example of the DSSE protocol document. */
	ck_assert_int_eq(attest_pae("http://example.com/HelloWorld",
	    "hello world", 11, &p, &n), 0);
	ck_assert_uint_eq(n, strlen(want));
	ck_assert_int_eq(memcmp(p, want, n), 0);
	free(p);
	ck_assert_int_eq(attest_pae("", "", 0, &p, &n), 0);
	ck_assert_uint_eq(n, strlen("DSSEv1 0  0 "));
	ck_assert_int_eq(memcmp(p, "DSSEv1 0  0 ", n), 0);
	free(p);
	/* Lengths are bytes, and a NUL in the body is a byte like others. */
	ck_assert_int_eq(attest_pae("t", "a\0b", 3, &p, &n), 0);
	ck_assert_uint_eq(n, 16);
	ck_assert_int_eq(memcmp(p, "DSSEv1 1 t 3 a\0b", n), 0);
	free(p);
}
END_TEST

START_TEST(t_open)
{
	struct attest_env	 e;
	uint8_t			 vpub[ED25519_PUB_LEN];
	char			*line, err[512], d[SHA256_HEX_LEN + 1];

	line = envelope(ATTEST_TEST_RESULT, json_pack("{s:s}", "result",
	    "PASSED"), vkey, d);
	ck_assert_int_eq(attest_open(line, strlen(line), NULL, &e, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(e.kind, ATTEST_K_TEST_RESULT);
	ck_assert_str_eq(e.keyid, vfp);
	ck_assert_str_eq(e.digest, d);
	attest_env_free(&e);
	ed25519_public_raw(vkey, vpub);
	ck_assert_int_eq(attest_open(line, strlen(line), vpub, &e, err,
	    sizeof(err)), 0);
	attest_env_free(&e);
	/* Signed by the other key: refused where the key is pinned. */
	ed25519_public_raw(rkey, vpub);
	ck_assert_int_eq(attest_open(line, strlen(line), vpub, &e, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "keyid"));
	free(line);
	ck_assert_ptr_null(attest_subject("0123", TREE, BUNDLE));
	ck_assert_ptr_null(attest_subject(COMMIT, TREE, "XY"));
}
END_TEST

/* A file whose summary names baseline tree bt (none: NULL). */
static char *
file_bt(const char *result, const char *bt)
{
	char	 d[SHA256_HEX_LEN + 1], *l[3], *f;

	l[0] = envelope(ATTEST_PROVENANCE, json_object(), rkey, d);
	l[1] = envelope(ATTEST_VSA, vsa_bt(d, result, bt), vkey, NULL);
	l[2] = envelope(ATTEST_TEST_RESULT, json_pack("{s:s}", "result",
	    result), vkey, NULL);
	if (asprintf(&f, "%s\n%s\n%s\n", l[0], l[1], l[2]) == -1)
		abort();
	free(l[0]);
	free(l[1]);
	free(l[2]);
	return (f);
}

/*
 * A PASSED summary names the baseline tree its verifier checked the
 * validation's tree against (issue 23); a FAILED one may not have one
 * (rejected before any check); a name is a tree id.
 */
START_TEST(t_baseline_tree)
{
	struct attest_summary	 s;
	char			*f, err[512];

	f = file_bt("PASSED", NULL);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "envelope 2: "
	    "policy.annotations.baselineTree: a PASSED summary"));
	free(f);
	f = file_bt("FAILED", NULL);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(s.baseline_tree, "");
	free(f);
	f = file_bt("PASSED", "89ABCDEF0123456789abcdef0123456789abcdef");
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "baselineTree: not a tree id"));
	free(f);
	f = file_bt("PASSED", BTREE);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), 0);
	attest_summary_str(&s, err, sizeof(err));
	ck_assert_ptr_nonnull(strstr(err, ", baseline tree " BTREE));
	free(f);
}
END_TEST

START_TEST(t_file)
{
	struct attest_summary	 s;
	char			*f, err[512], *pins[2], *bad[1];

	f = file3("PASSED");
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.count, 3);
	ck_assert_str_eq(s.result, "PASSED");
	ck_assert_str_eq(s.commit, COMMIT);
	ck_assert_str_eq(s.tree, TREE);
	ck_assert_str_eq(s.baseline_tree, BTREE);
	ck_assert_str_eq(s.bundle, BUNDLE);
	ck_assert_str_eq(s.builder_key, rfp);
	ck_assert_str_eq(s.verifier_key, vfp);
	pins[0] = rfp;
	pins[1] = vfp;
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), pins, 2, &s, err,
	    sizeof(err)), 0);
	/* One key not pinned: the envelope it signed is named. */
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), pins, 1, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "envelope 2: keyid: "));
	ck_assert_ptr_nonnull(strstr(err, "not a pinned verifier key"));
	bad[0] = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), bad, 1, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "envelope 1: keyid"));
	/* Without its last newline, or a line dropped. */
	ck_assert_int_eq(attest_verify_buf(f, strlen(f) - 1, NULL, 0, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "envelope 3: no newline"));
	ck_assert_int_eq(attest_verify_buf(f, strchr(f, '\n') - f + 1, NULL,
	    0, &s, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "no verification summary");
	free(f);
	f = file3("FAILED");
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(s.result, "FAILED");
	free(f);
}
END_TEST

/* A pin refusal names the key that is not pinned. */
START_TEST(t_pin_message)
{
	struct attest_summary	 s;
	char			*f, err[512], *pins[1];

	f = file3("PASSED");
	pins[0] = rfp;
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), pins, 1, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, vfp));
	free(f);
}
END_TEST

START_TEST(t_flip_every_byte)
{
	struct attest_summary	 s;
	char			*f, err[512];
	size_t			 i, len, bits;
	unsigned		 b;

	f = file3("PASSED");
	len = strlen(f);
	for (i = 0; i < len; i++) {
		if (f[i] == '\n')
			continue;
		for (bits = 0; bits < 2; bits++) {
			b = bits == 0 ? 0x01 : 0x20;
			f[i] ^= b;
			ck_assert_msg(attest_verify_buf(f, len, NULL, 0, &s,
			    err, sizeof(err)) == -1, "byte %zu ^ %#x accepted",
			    i, b);
			ck_assert_msg(strncmp(err, "envelope ", 9) == 0,
			    "byte %zu: %s", i, err);
			f[i] ^= b;
		}
	}
	free(f);
}
END_TEST

/* Field by field, the error names what failed. */
START_TEST(t_names_field)
{
	struct attest_env	 e;
	char			*line, *p, err[512];

	line = envelope(ATTEST_PROVENANCE, json_object(), rkey, NULL);
	p = strstr(line, "in-toto+json");
	*p = 'X';
	ck_assert_int_eq(attest_open(line, strlen(line), NULL, &e, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "payloadType"));
	*p = 'i';
	p = strstr(line, "\"sig\":\"") + 8;
	*p = *p == 'A' ? 'B' : 'A';
	ck_assert_int_eq(attest_open(line, strlen(line), NULL, &e, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "sig"));
	free(line);
	line = envelope(ATTEST_PROVENANCE, json_object(), rkey, NULL);
	p = strstr(line, "\"payload\":\"") + 12;
	*p = *p == 'A' ? 'B' : 'A';
	ck_assert_int_eq(attest_open(line, strlen(line), NULL, &e, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "sig: bad signature"));
	free(line);
	line = envelope(ATTEST_PROVENANCE, json_object(), rkey, NULL);
	p = strstr(line, "\"keyid\":\"SHA256:") + 17;
	*p = *p == 'A' ? 'B' : 'A';
	ck_assert_int_eq(attest_open(line, strlen(line), NULL, &e, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "keyid"));
	free(line);
	line = envelope("https://example.com/other", json_object(), rkey,
	    NULL);
	ck_assert_int_eq(attest_open(line, strlen(line), NULL, &e, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "predicateType"));
	free(line);
}
END_TEST

/* The roles: who signs what, and which provenance is summarized. */
START_TEST(t_roles)
{
	struct attest_summary	 s;
	char			 d[SHA256_HEX_LEN + 1], *l[3], *f, err[512];

	/* The verifier's summary of some other provenance. */
	l[0] = envelope(ATTEST_PROVENANCE, json_object(), rkey, d);
	l[1] = envelope(ATTEST_VSA, vsa(BUNDLE, "PASSED"), vkey, NULL);
	ck_assert_int_ne(asprintf(&f, "%s\n%s\n", l[0], l[1]), -1);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "envelope 2: inputAttestations"));
	free(f);
	free(l[1]);
	/* The parent signing for the verifier. */
	l[1] = envelope(ATTEST_VSA, vsa(d, "PASSED"), rkey, NULL);
	ck_assert_int_ne(asprintf(&f, "%s\n%s\n", l[0], l[1]), -1);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "signs for the verifier"));
	free(f);
	free(l[1]);
	/* Order, a second summary, a result of neither kind. */
	l[1] = envelope(ATTEST_VSA, vsa(d, "PASSED"), vkey, NULL);
	ck_assert_int_ne(asprintf(&f, "%s\n%s\n", l[1], l[0]), -1);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), -1);
	free(f);
	ck_assert_int_ne(asprintf(&f, "%s\n%s\n%s\n", l[0], l[1], l[1]), -1);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "envelope 3: a second"));
	free(f);
	l[2] = envelope(ATTEST_VSA, vsa(d, "MAYBE"), vkey, NULL);
	ck_assert_int_ne(asprintf(&f, "%s\n%s\n", l[0], l[2]), -1);
	ck_assert_int_eq(attest_verify_buf(f, strlen(f), NULL, 0, &s, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "verificationResult"));
	free(f);
	free(l[0]);
	free(l[1]);
	free(l[2]);
}
END_TEST


/*
 * Issue 13, finding 1: -K pins name a role.  The provenance must be
 * signed by a builder key, the summary and the test result by a
 * verifier key; a pin without a role may sign in either role.
 */
START_TEST(t_role_pins)
{
	char	*good, *swap, *f;
	char	 B[80], V[80];

	strlcpy(B, role("builder", rfp), sizeof(B));
	strlcpy(V, role("verifier", vfp), sizeof(V));
	good = file_by(COMMIT, rkey, vkey, vkey, "PASSED", "PASSED");
	swap = file_by(COMMIT, vkey, rkey, rkey, "PASSED", "PASSED");
	ACCEPTED(good, B, V, NULL);
	ck_assert_str_eq(vsum.builder_key, rfp);
	ck_assert_str_eq(vsum.verifier_key, vfp);
	ACCEPTED(good, V, B, NULL);
	/* The roles swapped: a verifier-signed provenance. */
	REFUSED(swap, B, V, NULL, "envelope 1: keyid: ");
	REFUSED(swap, B, V, NULL, " is not a pinned builder key");
	ck_assert_ptr_nonnull(strstr(verr, vfp));
	/* A verifier-signed provenance, another verifier summarizing. */
	f = file_by(COMMIT, vkey, xkey, xkey, "PASSED", "PASSED");
	REFUSED(f, B, V, role("verifier", xfp),
	    "envelope 1: keyid: ");
	REFUSED(f, B, V, role("verifier", xfp), "not a pinned builder key");
	free(f);
	/* A parent-signed summary (and test result). */
	f = file_by(COMMIT, xkey, rkey, rkey, "PASSED", "PASSED");
	REFUSED(f, B, V, role("builder", xfp), "envelope 2: keyid: ");
	REFUSED(f, B, V, role("builder", xfp), "not a pinned verifier key");
	ck_assert_ptr_nonnull(strstr(verr, rfp));
	free(f);
	/* A parent-signed test result. */
	f = file_by(COMMIT, rkey, vkey, rkey, "PASSED", "PASSED");
	REFUSED(f, B, V, NULL, "envelope 3: keyid: ");
	REFUSED(f, B, V, NULL, "not a pinned verifier key");
	free(f);
	/* A verifier-signed test result with a parent-signed summary. */
	f = file_by(COMMIT, xkey, rkey, vkey, "PASSED", "PASSED");
	REFUSED(f, B, V, role("builder", xfp), "envelope 2: keyid: ");
	free(f);
	/* One role pinned, the other not: the other's key is unpinned. */
	REFUSED(good, B, NULL, NULL, "envelope 2: keyid: ");
	REFUSED(good, V, NULL, NULL, "envelope 1: keyid: ");
	free(swap);
	free(good);
}
END_TEST

/* A pin without a role: that key may sign in either role. */
START_TEST(t_bare_pins)
{
	char	*good, *swap, *f;

	good = file_by(COMMIT, rkey, vkey, vkey, "PASSED", "PASSED");
	swap = file_by(COMMIT, vkey, rkey, rkey, "PASSED", "PASSED");
	ACCEPTED(good, rfp, vfp, NULL);
	ACCEPTED(swap, rfp, vfp, NULL);
	/* Mixed: the bare key may sign the provenance, not the role key. */
	ACCEPTED(good, role("builder", rfp), vfp, NULL);
	REFUSED(swap, role("builder", rfp), vfp, NULL,
	    "envelope 2: keyid: ");
	REFUSED(swap, role("builder", rfp), vfp, NULL,
	    "not a pinned verifier key");
	/* Still two keys: one bare key cannot sign both roles. */
	f = file_by(COMMIT, rkey, rkey, rkey, "PASSED", "PASSED");
	REFUSED(f, rfp, NULL, NULL, "envelope 2: keyid: ");
	free(f);
	/* Bare and role pins of one key together. */
	ACCEPTED(good, rfp, role("builder", rfp), vfp);
	free(swap);
	free(good);
}
END_TEST

/* A pin is [builder=|verifier=]SHA256:<43 characters>, nothing else. */
START_TEST(t_pin_syntax)
{
	char	*good;
	char	 shortfp[CRYPTO_FP_SIZE], nested[96];

	good = file_by(COMMIT, rkey, vkey, vkey, "PASSED", "PASSED");
	strlcpy(shortfp, rfp, sizeof(shortfp));
	shortfp[CRYPTO_FP_LEN - 1] = '\0';
	REFUSED(good, role("signer", rfp), vfp, NULL, "pin 1: ");
	REFUSED(good, rfp, role("verifier", ""), NULL, "pin 2: ");
	REFUSED(good, role("builder", shortfp), vfp, NULL, "pin 1: ");
	REFUSED(good, role("Builder", rfp), vfp, NULL, "pin 1: ");
	snprintf(nested, sizeof(nested), "builder=verifier=%s", rfp);
	REFUSED(good, nested, vfp, NULL, "pin 1: ");
	REFUSED(good, "", vfp, NULL, "pin 1: ");
	REFUSED(good, "sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", vfp,
	    NULL, "pin 1: ");
	REFUSED(good, "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
	    vfp, NULL, "pin 1: ");
	free(good);
}
END_TEST

/*
 * Issue 13, finding 2: the test result says what the summary says; a
 * PASSED summary comes with its test result.
 */
START_TEST(t_result_agrees)
{
	char	*f;

	f = file_by(COMMIT, rkey, vkey, vkey, "FAILED", "PASSED");
	REFUSED(f, NULL, NULL, NULL, "envelope 3: result: PASSED, the "
	    "verification summary says FAILED");
	free(f);
	f = file_by(COMMIT, rkey, vkey, vkey, "PASSED", "FAILED");
	REFUSED(f, NULL, NULL, NULL, "envelope 3: result: FAILED, the "
	    "verification summary says PASSED");
	free(f);
	f = file_by(COMMIT, rkey, vkey, vkey, "PASSED", NULL);
	REFUSED(f, NULL, NULL, NULL, "no test result");
	free(f);
	f = file_by(COMMIT, rkey, vkey, vkey, "FAILED", "MAYBE");
	REFUSED(f, NULL, NULL, NULL, "envelope 3: result: not PASSED or "
	    "FAILED");
	free(f);
	/* Rejected before validation ran: a FAILED summary alone. */
	f = file_by(COMMIT, rkey, vkey, vkey, "FAILED", NULL);
	ACCEPTED(f, NULL, NULL, NULL);
	ck_assert_str_eq(vsum.result, "FAILED");
	ck_assert_uint_eq(vsum.count, 2);
	free(f);
	f = file_by(COMMIT, rkey, vkey, vkey, "FAILED", "FAILED");
	ACCEPTED(f, NULL, NULL, NULL);
	ck_assert_str_eq(vsum.result, "FAILED");
	free(f);
}
END_TEST

/* Issue 13, finding 2: files an attacker puts together. */
START_TEST(t_attackers)
{
	struct attest_env e;
	char	*a, *b, *f, *l1, *l2, *l3, *bl2, *bl3, *x;
	json_t	*st;

	a = file_by(COMMIT, rkey, vkey, vkey, "PASSED", "PASSED");
	b = file_by(COMMIT2, rkey, vkey, vkey, "PASSED", "PASSED");
	l1 = line_of(a, 1);
	l2 = line_of(a, 2);
	l3 = line_of(a, 3);
	bl2 = line_of(b, 2);
	bl3 = line_of(b, 3);
	/* Mixed: statements of two attempts. */
	ck_assert_int_ne(asprintf(&f, "%s%s%s", l1, l2, bl3), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 3: subject: not the first");
	free(f);
	ck_assert_int_ne(asprintf(&f, "%s%s%s", l1, bl2, bl3), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 2: subject: not the first");
	free(f);
	/* Missing provenance. */
	ck_assert_int_ne(asprintf(&f, "%s%s", l2, l3), -1);
	REFUSED(f, rfp, vfp, NULL, "no provenance");
	free(f);
	/* Two summaries. */
	f = file_by(COMMIT, rkey, vkey, vkey, "FAILED", NULL);
	x = line_of(f, 2);
	free(f);
	ck_assert_int_ne(asprintf(&f, "%s%s%s%s", l1, l2, x, l3), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 3: a second "
	    "https://slsa.dev/verification_summary/v1");
	free(f);
	free(x);
	/* A duplicated statement. */
	ck_assert_int_ne(asprintf(&f, "%s%s%s", a, l3, ""), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 4: a second "
	    "https://in-toto.io/attestation/test-result/v0.1");
	free(f);
	ck_assert_int_ne(asprintf(&f, "%s%s", a, l1), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 4: a second "
	    "https://slsa.dev/provenance/v1");
	free(f);
	/* A wrong payloadType, the signature over it good. */
	st = attest_statement(attest_subject(COMMIT, TREE, BUNDLE),
	    ATTEST_PROVENANCE, json_object());
	x = raw_envelope("application/json", st, rkey, rkey, NULL);
	ck_assert_int_ne(asprintf(&f, "%s\n%s%s", x, l2, l3), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 1: payloadType: "
	    "application/json, not");
	free(f);
	free(x);
	/* Our own form by hand is accepted (the helper has teeth). */
	x = raw_envelope(ATTEST_PAYLOAD_TYPE, st, rkey, rkey, NULL);
	ck_assert_msg(attest_open(x, strlen(x), NULL, &e, verr,
	    sizeof(verr)) == 0, "%s", verr);
	attest_env_free(&e);
	free(x);
	/* An unknown key under a known keyid. */
	x = raw_envelope(ATTEST_PAYLOAD_TYPE, st, xkey, xkey, rfp);
	ck_assert_int_ne(asprintf(&f, "%s\n%s%s", x, l2, l3), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 1: keyid: ");
	REFUSED(f, rfp, vfp, NULL, "is not the publicKey's fingerprint");
	free(f);
	free(x);
	/* ... or the known key shown, the unknown key signing. */
	x = raw_envelope(ATTEST_PAYLOAD_TYPE, st, xkey, rkey, rfp);
	ck_assert_int_ne(asprintf(&f, "%s\n%s%s", x, l2, l3), -1);
	REFUSED(f, rfp, vfp, NULL, "envelope 1: sig: bad signature");
	free(f);
	free(x);
	json_decref(st);
	/* A FAILED summary with a PASSED test result. */
	f = file_by(COMMIT, rkey, vkey, vkey, "FAILED", "PASSED");
	REFUSED(f, rfp, vfp, NULL, "envelope 3: result: PASSED");
	free(f);
	free(l1);
	free(l2);
	free(l3);
	free(bl2);
	free(bl3);
	free(a);
	free(b);
}
END_TEST

/* Issue 13, finding 2: the one subject is a commit, a tree, a bundle. */
START_TEST(t_subject_shape)
{
	static const char *subjects[] = {
		"[{\"name\":\"x\",\"digest\":{\"sha1\":\"00\"}}]",
		"[{\"name\":\"commit\",\"digest\":{\"gitCommit\":\""
		    COMMIT "\"}}]",
		"[{\"name\":\"commit\",\"digest\":{\"gitCommit\":\"" COMMIT
		    "\"}},{\"name\":\"tree\",\"digest\":{\"gitTree\":\"" TREE
		    "\"}},{\"name\":\"bundle\",\"digest\":{\"sha256\":\""
		    BUNDLE "\"}},{\"name\":\"x\",\"digest\":{\"sha1\":\"00\"}}]",
		"[{\"name\":\"tree\",\"digest\":{\"gitTree\":\"" TREE
		    "\"}},{\"name\":\"commit\",\"digest\":{\"gitCommit\":\""
		    COMMIT "\"}},{\"name\":\"bundle\",\"digest\":{\"sha256\":\""
		    BUNDLE "\"}}]",
		"[{\"name\":\"commit\",\"digest\":{\"gitCommit\":\"" COMMIT
		    "\",\"sha1\":\"" COMMIT "\"}},{\"name\":\"tree\","
		    "\"digest\":{\"gitTree\":\"" TREE "\"}},{\"name\":"
		    "\"bundle\",\"digest\":{\"sha256\":\"" BUNDLE "\"}}]",
		"[{\"name\":\"commit\",\"digest\":{\"gitCommit\":\"0123\"}},"
		    "{\"name\":\"tree\",\"digest\":{\"gitTree\":\"" TREE
		    "\"}},{\"name\":\"bundle\",\"digest\":{\"sha256\":\""
		    BUNDLE "\"}}]",
	};
	char	 d[SHA256_HEX_LEN + 1], *l[3], *f;
	json_t	*subj, *st[3];
	size_t	 i, j;

	for (i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++) {
		subj = json_loads(subjects[i], 0, NULL);
		ck_assert_ptr_nonnull(subj);
		st[0] = attest_statement(json_incref(subj),
		    ATTEST_PROVENANCE, json_object());
		l[0] = attest_sign(st[0], rkey, d);
		st[1] = attest_statement(json_incref(subj),
		    ATTEST_VSA, vsa(d, "PASSED"));
		l[1] = attest_sign(st[1], vkey, NULL);
		st[2] = attest_statement(json_incref(subj),
		    ATTEST_TEST_RESULT, json_pack("{s:s}", "result",
		    "PASSED"));
		l[2] = attest_sign(st[2], vkey, NULL);
		for (j = 0; j < 3; j++)
			json_decref(st[j]);
		json_decref(subj);
		ck_assert_int_ne(asprintf(&f, "%s\n%s\n%s\n", l[0], l[1],
		    l[2]), -1);
		ck_assert_msg(verify_pins(f, NULL, NULL, NULL) == -1,
		    "subject %zu accepted", i);
		ck_assert_msg(strstr(verr, "envelope 1: subject") != NULL,
		    "subject %zu: %s", i, verr);
		free(f);
		free(l[0]);
		free(l[1]);
		free(l[2]);
	}
}
END_TEST

static Suite *
attest_suite(void)
{
	Suite	*s = suite_create("attest");
	TCase	*tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, keys_setup, keys_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_pae);
	tcase_add_test(tc, t_open);
	tcase_add_test(tc, t_file);
	tcase_add_test(tc, t_baseline_tree);
	tcase_add_test(tc, t_pin_message);
	tcase_add_test(tc, t_flip_every_byte);
	tcase_add_test(tc, t_names_field);
	tcase_add_test(tc, t_roles);
	tcase_add_test(tc, t_role_pins);
	tcase_add_test(tc, t_bare_pins);
	tcase_add_test(tc, t_pin_syntax);
	tcase_add_test(tc, t_result_agrees);
	tcase_add_test(tc, t_attackers);
	tcase_add_test(tc, t_subject_shape);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(attest_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
