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

static EVP_PKEY	*rkey, *vkey;
static char	 rfp[CRYPTO_FP_SIZE], vfp[CRYPTO_FP_SIZE];

static void
keys_setup(void)
{
	rkey = ed25519_generate();
	vkey = ed25519_generate();
	if (rkey == NULL || vkey == NULL || ed25519_fingerprint(rkey,
	    rfp) == -1 || ed25519_fingerprint(vkey, vfp) == -1)
		abort();
}

static void
keys_teardown(void)
{
	EVP_PKEY_free(rkey);
	EVP_PKEY_free(vkey);
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

static json_t *
vsa(const char *provdigest, const char *result)
{
	return (json_pack("{s:[{s:s, s:{s:s}}], s:s}", "inputAttestations",
	    "uri", "urn:factory:provenance", "digest", "sha256", provdigest,
	    "verificationResult", result));
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
	ck_assert_ptr_nonnull(strstr(err, "not a pinned key"));
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
	tcase_add_test(tc, t_pin_message);
	tcase_add_test(tc, t_flip_every_byte);
	tcase_add_test(tc, t_names_field);
	tcase_add_test(tc, t_roles);
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
