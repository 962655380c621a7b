/*
 * crypto.c: SHA-256 vectors, hex and base64, Ed25519 keys, signatures
 * and fingerprints.
 */
#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "crypto.h"

static char	 tmpdir[64];

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return (remove(path));
}

static void
tmp_setup(void)
{
	strlcpy(tmpdir, "/tmp/test_crypto.XXXXXX", sizeof(tmpdir));
	if (mkdtemp(tmpdir) == NULL)
		abort();
}

static void
tmp_teardown(void)
{
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void
tmppath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

START_TEST(t_sha256_vectors)
{
	static const struct {
		const char	*in;
		const char	*md;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb924"
		    "27ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223"
		    "b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		    "248d6a61d20638b8e5c026930c3e6039"
		    "a33ce45964ff2167f6ecedd419db06c1" },
	};
	char	 hex[SHA256_HEX_LEN + 1];
	size_t	 i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_int_eq(sha256_hex(v[i].in, strlen(v[i].in), hex), 0);
		ck_assert_str_eq(hex, v[i].md);
	}
}
END_TEST

START_TEST(t_sha256_incremental)
{
	struct sha256_ctx	 ctx;
	uint8_t			 md[SHA256_LEN], one[SHA256_LEN];
	char			 chunk[1000], hex[SHA256_HEX_LEN + 1];
	int			 i;

	/* One million 'a', fed in pieces. */
	memset(chunk, 'a', sizeof(chunk));
	ck_assert_int_eq(sha256_init(&ctx), 0);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(sha256_update(&ctx, chunk, sizeof(chunk)), 0);
	ck_assert_int_eq(sha256_final(&ctx, md), 0);
	ck_assert_ptr_null(ctx.md);
	hex_encode(md, sizeof(md), hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");

	/* Pieces of odd sizes give the one-shot digest. */
	ck_assert_int_eq(sha256_init(&ctx), 0);
	ck_assert_int_eq(sha256_update(&ctx, "ab", 2), 0);
	ck_assert_int_eq(sha256_update(&ctx, "", 0), 0);
	ck_assert_int_eq(sha256_update(&ctx, "c", 1), 0);
	ck_assert_int_eq(sha256_final(&ctx, md), 0);
	ck_assert_int_eq(sha256("abc", 3, one), 0);
	ck_assert_mem_eq(md, one, SHA256_LEN);

	/* An abandoned context is freed; aborting twice is harmless. */
	ck_assert_int_eq(sha256_init(&ctx), 0);
	sha256_abort(&ctx);
	sha256_abort(&ctx);
	ck_assert_int_eq(sha256_final(&ctx, md), -1);
}
END_TEST

START_TEST(t_hex)
{
	uint8_t	 in[] = { 0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff }, out[6];
	char	 hex[13];

	hex_encode(in, sizeof(in), hex);
	ck_assert_str_eq(hex, "00017f80feff");
	ck_assert_int_eq(hex_decode("00017F80FEff", out, sizeof(out)), 0);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_int_eq(hex_decode("00017f80fef", out, sizeof(out)), -1);
	ck_assert_int_eq(hex_decode("00017f80feff00", out, sizeof(out)), -1);
	ck_assert_int_eq(hex_decode("00017f80fefg", out, sizeof(out)), -1);
}
END_TEST

START_TEST(t_base64)
{
	static const struct {
		const char	*in, *padded, *bare;
	} v[] = {
		{ "", "", "" },
		{ "f", "Zg==", "Zg" },
		{ "fo", "Zm8=", "Zm8" },
		{ "foo", "Zm9v", "Zm9v" },
		{ "foob", "Zm9vYg==", "Zm9vYg" },
		{ "fooba", "Zm9vYmE=", "Zm9vYmE" },
		{ "foobar", "Zm9vYmFy", "Zm9vYmFy" },
	};
	char	 enc[32];
	uint8_t	 dec[32];
	size_t	 i, len;

	/* RFC 4648 section 10; the decoder takes the padded form. */
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		base64_encode((const uint8_t *)v[i].in, strlen(v[i].in), 1, enc);
		ck_assert_str_eq(enc, v[i].padded);
		base64_encode((const uint8_t *)v[i].in, strlen(v[i].in), 0, enc);
		ck_assert_str_eq(enc, v[i].bare);
		ck_assert_int_eq(base64_decode(v[i].padded, dec, sizeof(dec),
		    &len), 0);
		ck_assert_uint_eq(len, strlen(v[i].in));
		ck_assert_mem_eq(dec, v[i].in, len);
	}
	/* Output space is checked before writing. */
	ck_assert_int_eq(base64_decode("Zm9vYmFy", dec, 5, &len), -1);
	ck_assert_int_eq(base64_decode("Zm9vYmFy", dec, 6, &len), 0);
	ck_assert_int_eq(base64_decode("Zm9vYg==", dec, 3, &len), -1);
	ck_assert_int_eq(base64_decode("Zm9vYg==", dec, 4, &len), 0);
	ck_assert_uint_eq(len, 4);
}
END_TEST

/*
 * Issue 13, finding 3: strict RFC 4648 section 4.  Padding required,
 * the length a multiple of 4, no whitespace or other byte, no pad bit
 * set: each byte string has exactly one accepted encoding.
 */
START_TEST(t_base64_strict)
{
	static const char *bad[] = {
		/* unpadded */
		"Zg", "Zm8", "Zm9vYg", "Zm9vYmE", "AAAAAAA",
		/* a length not a multiple of 4 */
		"Z", "Zm9vY", "Zg=", "Zg===", "Zm8==", "Zm9vYg=",
		/* padding elsewhere than at the end */
		"=Zg=", "Zg=a", "Z=g=", "Z===", "====", "Zm9vYg=x", "Zg==Zg==",
		"Zm8=Zm8=", "=AAA", "A=AA", "AA=A", "AA==AAAA",
		/* whitespace */
		"Zm9v\n", "Zm9v\r\n", " Zm9v", "Zm9v ", "Zm 9v", "Zm\t9v",
		"Zm9vYg==\n", "Zm9v\nYmFy", "Zg= =", "\n",
		/* other bytes */
		"Zm9v!", "Zm-v", "Zm_v", "Zm9\x80", "Zm9\xff", "Zm.v", "Zm9v=",
		"Zg==\x01", "Zm9v\x7f",
		/* pad bits set */
		"Zh==", "Zv==", "Zm9=", "Zm+=", "AB==", "AAB=", "/x==", "//9=",
	};
	uint8_t	 dec[32];
	char	 s[8];
	size_t	 i, len;
	int	 c, want;
	static const char alpha[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(base64_decode(bad[i], dec, sizeof(dec), &len) ==
		    -1, "accepted \"%s\"", bad[i]);
	/* Every last character of one and of two bytes: the pad bits. */
	for (c = 0; c < 64; c++) {
		snprintf(s, sizeof(s), "A%c==", alpha[c]);
		want = (c & 0x0f) == 0 ? 0 : -1;
		ck_assert_msg(base64_decode(s, dec, sizeof(dec), &len) == want,
		    "\"%s\": not %d", s, want);
		if (want == 0)
			ck_assert(len == 1 && dec[0] == c >> 4);
		snprintf(s, sizeof(s), "AA%c=", alpha[c]);
		want = (c & 0x03) == 0 ? 0 : -1;
		ck_assert_msg(base64_decode(s, dec, sizeof(dec), &len) == want,
		    "\"%s\": not %d", s, want);
		if (want == 0)
			ck_assert(len == 2 && dec[0] == 0 && dec[1] == c >> 2);
	}
	/* Every byte outside the alphabet, anywhere in a quantum. */
	for (c = 1; c < 256; c++) {
		if (strchr(alpha, c) != NULL)
			continue;
		for (i = 0; i < 4; i++) {
			strlcpy(s, "AAAA", sizeof(s));
			s[i] = (char)c;
			ck_assert_msg(base64_decode(s, dec, sizeof(dec),
			    &len) == -1 || (c == '=' && i >= 2),
			    "byte %#x at %zu accepted", c, i);
		}
	}
	/* "AA==" and "AAA=" are the only places '=' goes. */
	ck_assert_int_eq(base64_decode("AA==", dec, sizeof(dec), &len), 0);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(base64_decode("AAA=", dec, sizeof(dec), &len), 0);
	ck_assert_uint_eq(len, 2);
}
END_TEST

/* Every length 0..96, random bytes: padded round trip, one encoding. */
START_TEST(t_base64_roundtrip)
{
	uint8_t	 in[96], dec[96];
	char	 enc[BASE64_SIZE(96)], bare[BASE64_SIZE(96)];
	size_t	 n, len;

	for (n = 0; n <= sizeof(in); n++) {
		arc4random_buf(in, n);
		base64_encode(in, n, 1, enc);
		ck_assert_uint_eq(strlen(enc) % 4, 0);
		ck_assert_int_eq(base64_decode(enc, dec, n, &len), 0);
		ck_assert_uint_eq(len, n);
		ck_assert(n == 0 || memcmp(in, dec, n) == 0);
		base64_encode(in, n, 0, bare);
		if (strcmp(bare, enc) != 0)
			ck_assert_msg(base64_decode(bare, dec, sizeof(dec),
			    &len) == -1, "unpadded \"%s\" accepted", bare);
		if (n > 0)
			ck_assert_int_eq(base64_decode(enc, dec, n - 1, &len),
			    -1);
	}
}
END_TEST

/* RFC 8032, 7.1, TEST 1 and TEST 2. */
static const char rfc_sk[] =
    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
static const char rfc_pk[] =
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
static const char rfc_sig[] =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
    "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
static const char rfc2_pk[] =
    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";
static const char rfc2_sig[] =
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00";

START_TEST(t_ed25519_rfc8032)
{
	uint8_t		 sk[32], pk[32], want[64], sig[64], msg = 0x72;
	EVP_PKEY	*key;

	ck_assert_int_eq(hex_decode(rfc_sk, sk, sizeof(sk)), 0);
	key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, sk, 32);
	ck_assert_ptr_nonnull(key);
	ck_assert_int_eq(ed25519_public_raw(key, pk), 0);
	ck_assert_int_eq(hex_decode(rfc_pk, want, 32), 0);
	ck_assert_mem_eq(pk, want, 32);
	ck_assert_int_eq(ed25519_sign(key, "", 0, sig), 0);
	ck_assert_int_eq(hex_decode(rfc_sig, want, 64), 0);
	ck_assert_mem_eq(sig, want, 64);
	ck_assert_int_eq(ed25519_verify(pk, "", 0, sig), 0);
	EVP_PKEY_free(key);

	/* TEST 2: a one-byte message, verified from the public key only. */
	ck_assert_int_eq(hex_decode(rfc2_pk, pk, 32), 0);
	ck_assert_int_eq(hex_decode(rfc2_sig, sig, 64), 0);
	ck_assert_int_eq(ed25519_verify(pk, &msg, 1, sig), 0);
	msg ^= 1;
	ck_assert_int_eq(ed25519_verify(pk, &msg, 1, sig), -1);
}
END_TEST

START_TEST(t_fingerprint)
{
	uint8_t		 sk[32], pk[32];
	char		 fp[CRYPTO_FP_SIZE], fp2[CRYPTO_FP_SIZE];
	EVP_PKEY	*key;

	ck_assert_int_eq(hex_decode(rfc_sk, sk, sizeof(sk)), 0);
	key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, sk, 32);
	ck_assert_ptr_nonnull(key);
	ck_assert_int_eq(ed25519_fingerprint(key, fp), 0);
	/* base64(sha256(raw public key)), unpadded, computed by hand */
	ck_assert_str_eq(fp, "SHA256:If4x36FUomFia/hUBG/SJxt77UtqvkWqWId+9H+XIbk");
	ck_assert_uint_eq(strlen(fp), CRYPTO_FP_LEN);
	ck_assert_int_eq(hex_decode(rfc_pk, pk, 32), 0);
	ck_assert_int_eq(ed25519_fingerprint_raw(pk, fp2), 0);
	ck_assert_str_eq(fp, fp2);
	EVP_PKEY_free(key);
}
END_TEST

START_TEST(t_sign_verify)
{
	EVP_PKEY	*a, *b;
	uint8_t		 pa[32], pb[32], sig[64], bad[64];
	char		 msg[] = "receipt line to sign";
	size_t		 i;

	ck_assert_ptr_nonnull(a = ed25519_generate());
	ck_assert_ptr_nonnull(b = ed25519_generate());
	ck_assert_int_eq(ed25519_public_raw(a, pa), 0);
	ck_assert_int_eq(ed25519_public_raw(b, pb), 0);
	ck_assert_int_eq(ed25519_sign(a, msg, strlen(msg), sig), 0);
	ck_assert_int_eq(ed25519_verify(pa, msg, strlen(msg), sig), 0);
	ck_assert_int_eq(ed25519_verify(pb, msg, strlen(msg), sig), -1);

	/* Any one flipped bit of the signature or the message fails. */
	for (i = 0; i < 64 * 8; i++) {
		memcpy(bad, sig, 64);
		bad[i / 8] ^= 1 << (i % 8);
		ck_assert_int_eq(ed25519_verify(pa, msg, strlen(msg), bad), -1);
	}
	for (i = 0; i < strlen(msg) * 8; i++) {
		msg[i / 8] ^= 1 << (i % 8);
		ck_assert_int_eq(ed25519_verify(pa, msg, strlen(msg), sig), -1);
		msg[i / 8] ^= 1 << (i % 8);
	}
	ck_assert_int_eq(ed25519_verify(pa, msg, strlen(msg) - 1, sig), -1);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
}
END_TEST

static size_t
count_entries(const char *dir)
{
	char	 cmd[256], line[64];
	FILE	*p;
	size_t	 n = 0;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	if (fgets(line, sizeof(line), p) != NULL)
		n = strtoul(line, NULL, 10);
	pclose(p);
	return (n);
}

START_TEST(t_keyfile)
{
	EVP_PKEY	*key, *again, *other;
	char		 path[256], err[256], fp[CRYPTO_FP_SIZE];
	char		 fp2[CRYPTO_FP_SIZE], head[64];
	struct stat	 st;
	FILE		*f;

	tmppath(path, sizeof(path), "receipts.key");
	umask(022);
	ck_assert_ptr_nonnull(key = ed25519_generate());
	ck_assert_int_eq(ed25519_save_pem(key, path, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_ptr_nonnull(fgets(head, sizeof(head), f));
	fclose(f);
	ck_assert_str_eq(head, "-----BEGIN PRIVATE KEY-----\n");

	/* Round trip: the same key, the same fingerprint. */
	again = ed25519_load_pem(path, err, sizeof(err));
	ck_assert_msg(again != NULL, "%s", err);
	ck_assert_int_eq(ed25519_fingerprint(key, fp), 0);
	ck_assert_int_eq(ed25519_fingerprint(again, fp2), 0);
	ck_assert_str_eq(fp, fp2);
	EVP_PKEY_free(again);

	/* Without overwrite an existing key is never replaced. */
	ck_assert_ptr_nonnull(other = ed25519_generate());
	ck_assert_int_eq(ed25519_save_pem(other, path, 0, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_ptr_nonnull(strstr(err, "exists, not replaced"));
	again = ed25519_load_pem(path, err, sizeof(err));
	ck_assert_int_eq(ed25519_fingerprint(again, fp2), 0);
	ck_assert_str_eq(fp, fp2);
	EVP_PKEY_free(again);
	ck_assert_uint_eq(count_entries(tmpdir), 1);	/* no temp left */

	/* With overwrite it is, atomically. */
	ck_assert_int_eq(ed25519_save_pem(other, path, 1, err, sizeof(err)), 0);
	again = ed25519_load_pem(path, err, sizeof(err));
	ck_assert_int_eq(ed25519_fingerprint(again, fp2), 0);
	ck_assert_str_ne(fp, fp2);
	EVP_PKEY_free(again);
	ck_assert_uint_eq(count_entries(tmpdir), 1);

	/* A directory that does not exist: a reason, no crash. */
	ck_assert_int_eq(ed25519_save_pem(key, "/nonexistent/dir/k", 0, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/dir/k"));
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
}
END_TEST

START_TEST(t_load_refuses)
{
	EVP_PKEY	*ec, *key;
	char		 path[256], err[256];
	FILE		*f;
	BIO		*bio;
	char		*data;
	long		 len;

	/* Garbage */
	tmppath(path, sizeof(path), "garbage.key");
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("-----BEGIN PRIVATE KEY-----\nnot base64\n"
	    "-----END PRIVATE KEY-----\n", f);
	fclose(f);
	ck_assert_ptr_null(ed25519_load_pem(path, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "not a PEM private key"));

	/* Missing */
	tmppath(path, sizeof(path), "missing.key");
	ck_assert_ptr_null(ed25519_load_pem(path, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "No such file"));

	/* A valid key of another type */
	ck_assert_ptr_nonnull(ec = EVP_EC_gen("P-256"));
	ck_assert_ptr_nonnull(bio = BIO_new(BIO_s_mem()));
	ck_assert_int_eq(PEM_write_bio_PrivateKey(bio, ec, NULL, NULL, 0, NULL,
	    NULL), 1);
	len = BIO_get_mem_data(bio, &data);
	key = ed25519_load_pem_mem(data, len, err, sizeof(err));
	ck_assert_ptr_null(key);
	ck_assert_ptr_nonnull(strstr(err, "not an Ed25519 key"));
	tmppath(path, sizeof(path), "ec.key");
	ck_assert_int_eq(ed25519_save_pem(ec, path, 0, err, sizeof(err)), -1);
	BIO_free(bio);
	EVP_PKEY_free(ec);
}
END_TEST

static Suite *
crypto_suite(void)
{
	Suite	*s = suite_create("crypto");
	TCase	*tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, t_sha256_vectors);
	tcase_add_test(tc, t_sha256_incremental);
	tcase_add_test(tc, t_hex);
	tcase_add_test(tc, t_base64);
	tcase_add_test(tc, t_base64_strict);
	tcase_add_test(tc, t_base64_roundtrip);
	tcase_add_test(tc, t_ed25519_rfc8032);
	tcase_add_test(tc, t_fingerprint);
	tcase_add_test(tc, t_sign_verify);
	tcase_add_test(tc, t_keyfile);
	tcase_add_test(tc, t_load_refuses);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(crypto_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
