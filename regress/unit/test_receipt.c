/*
 * receipt.c: a chain of five receipts by two signers, exported and
 * verified, then tampered with in every way the audit row names.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "crypto.h"
#include "log.h"
#include "msg.h"
#include "receipt.h"

#define NREC	5
#define ATTEMPT	"a-20261129-0007"

static EVP_PKEY	*rkey, *vkey;
static uint8_t	 rpub[32], vpub[32];
static char	 rfp[CRYPTO_FP_SIZE], vfp[CRYPTO_FP_SIZE];
static char	*hdr;			/* header line */
static char	*lines[NREC];		/* receipt lines */

static const char *const kinds[NREC] = {
	"submitted", "running", "result-ready", "verdict", "published"
};

static void
keys_setup(void)
{
	rkey = ed25519_generate();
	vkey = ed25519_generate();
	if (rkey == NULL || vkey == NULL ||
	    ed25519_public_raw(rkey, rpub) == -1 ||
	    ed25519_public_raw(vkey, vpub) == -1 ||
	    ed25519_fingerprint(rkey, rfp) == -1 ||
	    ed25519_fingerprint(vkey, vfp) == -1)
		abort();
}

/* Build the chain; receipt 3 (the verdict) is the verifier's. */
static void
chain_setup(void)
{
	char	 prev[SHA256_HEX_LEN + 1] = RECEIPT_ZERO_PREV;
	json_t	*facts;
	int	 i;

	log_init(1, LOG_DAEMON);
	keys_setup();
	for (i = 0; i < NREC; i++) {
		facts = json_pack("{s:s, s:i}", "note", "hello", "n", i);
		if (receipt_make_at(ATTEMPT, i, kinds[i], 1, prev,
		    i == 3 ? RECEIPT_SIGNER_VERIFIER : RECEIPT_SIGNER_RECEIPTS,
		    i == 3 ? vkey : rkey, facts, 1795943411 + i, &lines[i]) == -1)
			abort();
		json_decref(facts);
		if (receipt_hash(lines[i], prev) == -1)
			abort();
	}
	if (receipt_header(ATTEMPT, rpub, vpub, &hdr) == -1)
		abort();
}

static void
chain_teardown(void)
{
	int	 i;

	for (i = 0; i < NREC; i++)
		free(lines[i]);
	free(hdr);
	EVP_PKEY_free(rkey);
	EVP_PKEY_free(vkey);
}

/*
 * An export of header h and the receipts in order[] (-1 ends it);
 * line n (n >= 0) replaced by repl when repl is not NULL.
 */
static char *
export(const char *h, const int *order, int n, const char *repl)
{
	size_t	 len = strlen(h) + 2;
	char	*buf;
	int	 i;

	for (i = 0; order[i] != -1; i++)
		len += strlen(lines[order[i]]) + strlen(repl ? repl : "") + 1;
	ck_assert_ptr_nonnull(buf = malloc(len));
	strlcpy(buf, h, len);
	strlcat(buf, "\n", len);
	for (i = 0; order[i] != -1; i++) {
		strlcat(buf, order[i] == n && repl ? repl : lines[order[i]],
		    len);
		strlcat(buf, "\n", len);
	}
	return (buf);
}

static const int inorder[] = { 0, 1, 2, 3, 4, -1 };

/* Verify buf and expect the error want ('*' matches anything). */
static void
expect_fail(const char *buf, const char *pr, const char *pv, const char *want)
{
	char	 err[512];

	err[0] = '\0';
	ck_assert_int_eq(receipt_verify_buf(buf, strlen(buf), pr, pv, NULL,
	    err, sizeof(err)), -1);
	ck_assert_msg(fnmatch(want, err, 0) == 0, "got \"%s\", want \"%s\"",
	    err, want);
}

#define STARTS(s, lit)	(strncmp((s), (lit), sizeof(lit) - 1) == 0)

START_TEST(t_format)
{
	json_t		*obj;
	json_error_t	 jerr;

	/* Canonical: sorted keys, compact, one line. */
	ck_assert_ptr_null(strchr(lines[0], '\n'));
	ck_assert_ptr_null(strstr(lines[0], ": "));
	ck_assert(STARTS(lines[0], "{\"attempt\":\"" ATTEMPT
	    "\",\"epoch\":1,\"facts\":{\"n\":0,\"note\":\"hello\"},\"key\":\""));
	ck_assert_ptr_nonnull(strstr(lines[0], "\"prev\":\"" RECEIPT_ZERO_PREV
	    "\""));
	ck_assert_ptr_nonnull(strstr(lines[0],
	    "\"time\":\"2026-11-29T09:10:11Z\""));
	ck_assert_ptr_nonnull(strstr(lines[3], vfp));
	ck_assert_ptr_nonnull(strstr(lines[4], rfp));
	obj = json_loads(lines[2], 0, &jerr);
	ck_assert_ptr_nonnull(obj);
	ck_assert_int_eq(json_integer_value(json_object_get(obj, "seq")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(obj, "kind")),
	    "result-ready");
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(obj,
	    "sig"))), ED25519_SIG_B64_LEN);
	json_decref(obj);
	ck_assert(STARTS(hdr, "{\"attempt\":\"" ATTEMPT "\","
	    "\"factory-receipts\":1,\"keys\":{\"receipts\":{\"fingerprint\":"));
}
END_TEST

START_TEST(t_verifies)
{
	struct receipt_summary	 s;
	char			*buf, err[256], out[128];
	char			 head[SHA256_HEX_LEN + 1];
	FILE			*f;

	buf = export(hdr, inorder, -1, NULL);
	ck_assert_int_eq(receipt_verify_buf(buf, strlen(buf), NULL, NULL, &s,
	    err, sizeof(err)), 0);
	ck_assert_uint_eq(s.count, 5);
	ck_assert_str_eq(s.last_kind, "published");
	ck_assert_str_eq(s.attempt, ATTEMPT);
	ck_assert_uint_eq(s.last_seq, 4);
	ck_assert_uint_eq(s.last_epoch, 1);
	ck_assert_int_eq(receipt_hash(lines[4], head), 0);
	ck_assert_str_eq(s.head, head);
	receipt_summary_str(&s, out, sizeof(out));
	ck_assert_str_eq(out, "OK: 5 receipts, chain intact, last: published");

	/* Pinned to the right keys, and through a FILE. */
	ck_assert_ptr_nonnull(f = fmemopen(buf, strlen(buf), "r"));
	ck_assert_int_eq(receipt_verify_file(f, rfp, vfp, &s, err,
	    sizeof(err)), 0);
	fclose(f);

	/* The last newline may be missing. */
	buf[strlen(buf) - 1] = '\0';
	ck_assert_int_eq(receipt_verify_buf(buf, strlen(buf), rfp, vfp, &s,
	    err, sizeof(err)), 0);
	free(buf);
}
END_TEST

/* Change one character at the first occurrence of what, plus skip. */
static char *
flip(const char *line, const char *what, size_t skip)
{
	char	*copy, *p;

	ck_assert_ptr_nonnull(copy = strdup(line));
	ck_assert_ptr_nonnull(p = strstr(copy, what));
	p += strlen(what) + skip;
	*p = (*p == 'A' || *p == '0') ? 'B' : (*p == 'a' ? 'b' : 'A');
	if (strstr(what, "prev") != NULL)	/* stay lowercase hex */
		*p = (*p == 'B') ? '1' : '0';
	return (copy);
}

START_TEST(t_flip_facts)
{
	char	*bad, *buf;

	bad = flip(lines[2], "\"note\":\"h", 0);	/* "hello" -> "hAllo" */
	buf = export(hdr, inorder, 2, bad);
	expect_fail(buf, NULL, NULL, "receipt 2 (kind result-ready): bad "
	    "signature");
	free(buf);
	free(bad);
}
END_TEST

START_TEST(t_flip_sig)
{
	char	*bad, *buf;

	bad = flip(lines[2], "\"sig\":\"", 20);
	buf = export(hdr, inorder, 2, bad);
	expect_fail(buf, NULL, NULL, "receipt 2 (kind result-ready): bad "
	    "signature");
	free(buf);
	free(bad);

	/* The last character: unused bits set, refused all the same. */
	bad = flip(lines[2], "\"sig\":\"", ED25519_SIG_B64_LEN - 3);
	buf = export(hdr, inorder, 2, bad);
	expect_fail(buf, NULL, NULL, "receipt 2 (kind result-ready): bad "
	    "signature");
	free(buf);
	free(bad);
}
END_TEST

START_TEST(t_flip_prev)
{
	char	*bad, *buf;

	bad = flip(lines[2], "\"prev\":\"", 5);
	buf = export(hdr, inorder, 2, bad);
	expect_fail(buf, NULL, NULL, "receipt 2: prev does not match "
	    "receipt 1");
	free(buf);
	free(bad);
}
END_TEST

START_TEST(t_flip_every_byte)
{
	char	*buf, err[256], *p;
	size_t	 i, start, len;

	/* Whatever byte of receipt 2 changes, the chain fails there. */
	buf = export(hdr, inorder, -1, NULL);
	start = strlen(hdr) + 1 + strlen(lines[0]) + 1 + strlen(lines[1]) + 1;
	len = strlen(lines[2]);
	for (i = start; i < start + len; i++) {
		p = buf + i;
		*p ^= 0x01;
		ck_assert_int_eq(receipt_verify_buf(buf, strlen(buf), NULL,
		    NULL, NULL, err, sizeof(err)), -1);
		ck_assert_msg(strncmp(err, "receipt 2", 9) == 0 ||
		    strcmp(err, "line 4: not JSON") == 0,
		    "byte %zu: %s", i - start, err);
		*p ^= 0x01;
	}
	free(buf);
}
END_TEST

START_TEST(t_drop)
{
	static const int	 drop2[] = { 0, 1, 3, 4, -1 };
	static const int	 drop0[] = { 1, 2, 3, 4, -1 };
	char			*buf;

	buf = export(hdr, drop2, -1, NULL);
	expect_fail(buf, NULL, NULL, "receipt 2: seq 3, expected 2");
	free(buf);
	buf = export(hdr, drop0, -1, NULL);
	expect_fail(buf, NULL, NULL, "receipt 0: seq 1, expected 0");
	free(buf);
}
END_TEST

START_TEST(t_swap)
{
	static const int	 swap23[] = { 0, 1, 3, 2, 4, -1 };
	char			*buf;

	buf = export(hdr, swap23, -1, NULL);
	expect_fail(buf, NULL, NULL, "receipt 2: seq 3, expected 2");
	free(buf);
}
END_TEST

START_TEST(t_resequenced)
{
	char		 prev[SHA256_HEX_LEN + 1], *forged, *buf;
	static const int order[] = { 0, 1, 2, -1 };

	/*
	 * A receipt signed by the right key for the right place in some
	 * other chain: its prev gives it away.
	 */
	ck_assert_int_eq(receipt_hash(lines[0], prev), 0);
	ck_assert_int_eq(receipt_make(ATTEMPT, 2, "running", 1, prev,
	    RECEIPT_SIGNER_RECEIPTS, rkey, NULL, &forged), 0);
	buf = export(hdr, order, 2, forged);
	expect_fail(buf, NULL, NULL, "receipt 2: prev does not match "
	    "receipt 1");
	free(buf);
	free(forged);
}
END_TEST

START_TEST(t_pinned)
{
	char	*buf;

	buf = export(hdr, inorder, -1, NULL);
	expect_fail(buf, vfp, NULL, "header: receipts key SHA256:*");
	expect_fail(buf, rfp, rfp, "header: verifier key SHA256:*");
	expect_fail(buf, "SHA256:nope", NULL, "header: receipts key *");
	free(buf);
}
END_TEST

START_TEST(t_header)
{
	char	*buf, *h, *p, *q;

	/* Fingerprint that is not its public key's. */
	ck_assert_ptr_nonnull(h = strdup(hdr));
	ck_assert_ptr_nonnull(p = strstr(h, rfp));
	ck_assert_ptr_nonnull(q = strstr(h, vfp));
	memcpy(p, vfp, CRYPTO_FP_LEN);
	memcpy(q, rfp, CRYPTO_FP_LEN);
	buf = export(h, inorder, -1, NULL);
	expect_fail(buf, NULL, NULL, "header: receipts key fingerprint "
	    "SHA256:* does not match its public key");
	free(buf);
	free(h);

	/* No verifier key: the verdict receipt cannot be checked. */
	ck_assert_int_eq(receipt_header(ATTEMPT, rpub, NULL, &h), 0);
	buf = export(h, inorder, -1, NULL);
	expect_fail(buf, NULL, NULL, "receipt 3: signer verifier has no key "
	    "in the header");
	expect_fail(buf, NULL, vfp, "header: no verifier key, but one is "
	    "pinned");
	free(buf);
	free(h);

	/* Keys swapped between the roles: the key is not the signer's. */
	ck_assert_int_eq(receipt_header(ATTEMPT, vpub, rpub, &h), 0);
	buf = export(h, inorder, -1, NULL);
	expect_fail(buf, NULL, NULL, "receipt 0: key SHA256:* is not the "
	    "receipts key *");
	free(buf);
	free(h);

	/* Another attempt's header. */
	ck_assert_int_eq(receipt_header("a-20261129-0008", rpub, vpub, &h), 0);
	buf = export(h, inorder, -1, NULL);
	expect_fail(buf, NULL, NULL, "receipt 0: not for attempt "
	    "a-20261129-0008");
	free(buf);
	free(h);

	buf = export("{\"hello\":1}", inorder, -1, NULL);
	expect_fail(buf, NULL, NULL, "line 1: not a factory-receipts header");
	free(buf);
	buf = export("not json", inorder, -1, NULL);
	expect_fail(buf, NULL, NULL, "line 1: not JSON");
	free(buf);
}
END_TEST

START_TEST(t_truncated)
{
	char	*buf, err[256];
	size_t	 len;
	struct receipt_summary s;

	expect_fail("", NULL, NULL, "empty file");
	buf = export(hdr, inorder, -1, NULL);

	/* Cut inside receipt 4 (line 6). */
	len = strlen(buf) - 1 - strlen(lines[4]) / 2;
	ck_assert_int_eq(receipt_verify_buf(buf, len, NULL, NULL, NULL, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "line 6: not JSON");

	/* Cut right after the header. */
	len = strlen(hdr) + 1;
	ck_assert_int_eq(receipt_verify_buf(buf, len, NULL, NULL, NULL, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "no receipts after the header");

	/*
	 * Cut at a line boundary: a shorter chain, and the summary says
	 * so (the chain cannot know it had a tail).
	 */
	len = strlen(buf) - strlen(lines[4]) - 1;
	ck_assert_int_eq(receipt_verify_buf(buf, len, NULL, NULL, &s, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(s.count, 4);
	ck_assert_str_eq(s.last_kind, "verdict");
	free(buf);
}
END_TEST

START_TEST(t_not_json)
{
	char	*buf, *spaced, *p;

	buf = export(hdr, inorder, 1, "garbage");
	expect_fail(buf, NULL, NULL, "line 3: not JSON");
	free(buf);
	buf = export(hdr, inorder, 1, "");
	expect_fail(buf, NULL, NULL, "line 3: not JSON");
	free(buf);
	buf = export(hdr, inorder, 1, "[1,2]");
	expect_fail(buf, NULL, NULL, "line 3: not JSON");
	free(buf);
	buf = export(hdr, inorder, 1, "{\"v\":1}");
	expect_fail(buf, NULL, NULL, "receipt 1: missing \"attempt\"");
	free(buf);

	/* Same object, other spelling: it would hash differently. */
	ck_assert_ptr_nonnull(spaced = malloc(strlen(lines[1]) + 2));
	p = strchr(lines[1], ',');
	snprintf(spaced, strlen(lines[1]) + 2, "%.*s, %s",
	    (int)(p - lines[1]), lines[1], p + 1);
	buf = export(hdr, inorder, 1, spaced);
	expect_fail(buf, NULL, NULL, "receipt 1 (kind running): not in "
	    "canonical form");
	free(buf);
	free(spaced);

	/* A NUL inside a line. */
	buf = export(hdr, inorder, -1, NULL);
	p = strstr(buf, "hello");
	*p = '\0';
	ck_assert_int_eq(receipt_verify_buf(buf, strlen(p + 1) + (p - buf) + 1,
	    NULL, NULL, NULL, NULL, 0), -1);
	free(buf);
}
END_TEST

START_TEST(t_check_line)
{
	char	 prev[SHA256_HEX_LEN + 1], kind[RECEIPT_KIND_MAX + 1], err[256];

	ck_assert_int_eq(receipt_hash(lines[2], prev), 0);
	ck_assert_int_eq(receipt_check(lines[3], ATTEMPT, 3, prev,
	    RECEIPT_SIGNER_VERIFIER, vpub, kind, err, sizeof(err)), 0);
	ck_assert_str_eq(kind, "verdict");
	ck_assert_int_eq(receipt_check(lines[3], ATTEMPT, 4, prev,
	    RECEIPT_SIGNER_VERIFIER, vpub, kind, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "receipt 4: seq 3, expected 4");
	ck_assert_int_eq(receipt_check(lines[3], ATTEMPT, 3, prev,
	    RECEIPT_SIGNER_RECEIPTS, rpub, kind, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "receipt 3: signer verifier has no key in the "
	    "header");
	ck_assert_int_eq(receipt_check(lines[3], ATTEMPT, 3, prev,
	    RECEIPT_SIGNER_VERIFIER, rpub, kind, err, sizeof(err)), -1);
	ck_assert_int_eq(strncmp(err, "receipt 3: key ", 15), 0);
	ck_assert_int_eq(receipt_check("nope", ATTEMPT, 3, prev,
	    RECEIPT_SIGNER_VERIFIER, vpub, kind, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "receipt 3: not JSON");
}
END_TEST

/* A verdict's line, checked by rebuilding it from the typed fields. */
START_TEST(t_rebuild)
{
	struct msg_verdict	 m;
	json_t			*facts;
	char			*line, *mine, *p, sig[sizeof(m.sig)];
	char			 err[256];

	memset(&m, 0, sizeof(m));
	strlcpy(m.id, ATTEMPT, sizeof(m.id));
	m.accepted = m.validated = m.vpassed = 1;
	strlcpy(m.pristine, "same", sizeof(m.pristine));
	m.epoch = 2;
	ck_assert_int_eq(receipt_verdict_sign(&m, 0, RECEIPT_ZERO_PREV, vkey,
	    1000), 0);
	line = m.receipt;
	ck_assert_ptr_nonnull(facts = receipt_verdict_facts(&m));
	ck_assert_int_eq(receipt_rebuild(ATTEMPT, 0, "verdict", 2,
	    RECEIPT_ZERO_PREV, RECEIPT_SIGNER_VERIFIER, vpub, facts, 1000,
	    m.sig, line, &mine, err, sizeof(err)), 0);
	ck_assert_str_eq(mine, line);
	free(mine);
	ck_assert_int_eq(receipt_check(line, ATTEMPT, 0, RECEIPT_ZERO_PREV,
	    RECEIPT_SIGNER_VERIFIER, vpub, NULL, err, sizeof(err)), 0);
	/* Typed fields that are not what was signed. */
	json_decref(facts);
	m.findings_total = 1;
	ck_assert_ptr_nonnull(facts = receipt_verdict_facts(&m));
	ck_assert_int_eq(receipt_rebuild(ATTEMPT, 0, "verdict", 2,
	    RECEIPT_ZERO_PREV, RECEIPT_SIGNER_VERIFIER, vpub, facts, 1000,
	    m.sig, line, &mine, err, sizeof(err)), -1);
	ck_assert_ptr_null(mine);
	ck_assert_str_eq(err, "not the line its typed facts make (receipt "
	    "0, kind verdict)");
	ck_assert_int_eq(receipt_rebuild(ATTEMPT, 0, "verdict", 2,
	    RECEIPT_ZERO_PREV, RECEIPT_SIGNER_VERIFIER, vpub, facts, 1001,
	    m.sig, line, &mine, err, sizeof(err)), -1);
	json_decref(facts);
	m.findings_total = 0;
	ck_assert_ptr_nonnull(facts = receipt_verdict_facts(&m));
	/* The same line under another signature: refused by the key. */
	strlcpy(sig, m.sig, sizeof(sig));
	sig[0] = sig[0] == 'A' ? 'B' : 'A';
	ck_assert_ptr_nonnull(p = strstr(line, m.sig));
	p[0] = sig[0];
	ck_assert_int_eq(receipt_rebuild(ATTEMPT, 0, "verdict", 2,
	    RECEIPT_ZERO_PREV, RECEIPT_SIGNER_VERIFIER, vpub, facts, 1000,
	    sig, line, &mine, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "receipt 0 (kind verdict): bad signature");
	json_decref(facts);
	free(line);
}
END_TEST

START_TEST(t_make_refuses)
{
	char	*line = (char *)1;
	json_t	*arr = json_array();

	ck_assert_int_eq(receipt_make(ATTEMPT, 1, "x", 1, "abc",
	    RECEIPT_SIGNER_RECEIPTS, rkey, NULL, &line), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(line);
	ck_assert_int_eq(receipt_make(ATTEMPT, 0, "x", 1, lines[0] + 1000,
	    RECEIPT_SIGNER_RECEIPTS, rkey, NULL, &line), -1);
	ck_assert_int_eq(receipt_make(ATTEMPT, 0, "x", 1, RECEIPT_ZERO_PREV,
	    "publisher", rkey, NULL, &line), -1);
	ck_assert_int_eq(receipt_make(ATTEMPT, 0, "Bad Kind", 1,
	    RECEIPT_ZERO_PREV, RECEIPT_SIGNER_RECEIPTS, rkey, NULL, &line), -1);
	ck_assert_int_eq(receipt_make("a/../b", 0, "x", 1, RECEIPT_ZERO_PREV,
	    RECEIPT_SIGNER_RECEIPTS, rkey, NULL, &line), -1);
	ck_assert_int_eq(receipt_make(ATTEMPT, 0, "x", 1, RECEIPT_ZERO_PREV,
	    RECEIPT_SIGNER_RECEIPTS, rkey, arr, &line), -1);
	ck_assert_int_eq(receipt_make(ATTEMPT, (uint64_t)INT64_MAX + 1, "x", 1,
	    RECEIPT_ZERO_PREV, RECEIPT_SIGNER_RECEIPTS, rkey, NULL, &line), -1);
	json_decref(arr);
	/* The caller's facts are borrowed, not consumed. */
	arr = json_object();
	ck_assert_int_eq(receipt_make(ATTEMPT, 0, "x", 1, RECEIPT_ZERO_PREV,
	    RECEIPT_SIGNER_RECEIPTS, rkey, arr, &line), 0);
	ck_assert_int_eq(arr->refcount, 1);
	json_decref(arr);
	free(line);
}
END_TEST

START_TEST(t_verdict)
{
	json_t	*v, *copy;
	char	 err[256];

	v = json_pack("{s:s, s:s, s:b, s:{s:i}}", "attempt", ATTEMPT,
	    "bundle", "9f86d081884c7d659a2feaa0c55ad015"
	    "a3bf4f1b2b0b822cd15d6c15b0f00a08",
	    "accept", 1, "checks", "scope", 1);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(verdict_sign(v, vkey), 0);
	ck_assert_str_eq(json_string_value(json_object_get(v, "key")), vfp);
	ck_assert_int_eq(verdict_verify(v, vpub, err, sizeof(err)), 0);
	/* Signing twice is refused. */
	ck_assert_int_eq(verdict_sign(v, vkey), -1);

	/* Through text and back: still verifies. */
	{
		char		*s = receipt_canonical(v);
		json_error_t	 jerr;

		copy = json_loads(s, 0, &jerr);
		free(s);
		ck_assert_int_eq(verdict_verify(copy, vpub, err, sizeof(err)),
		    0);
		json_decref(copy);
	}

	/* Any change, or another key, fails. */
	copy = json_deep_copy(v);
	json_object_set_new(copy, "accept", json_false());
	ck_assert_int_eq(verdict_verify(copy, vpub, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "verdict: bad signature");
	json_decref(copy);
	copy = json_deep_copy(v);
	json_object_set_new(json_object_get(copy, "checks"), "scope",
	    json_integer(0));
	ck_assert_int_eq(verdict_verify(copy, vpub, err, sizeof(err)), -1);
	json_decref(copy);
	ck_assert_int_eq(verdict_verify(v, rpub, err, sizeof(err)), -1);
	ck_assert_int_eq(strncmp(err, "verdict: signed by ", 19), 0);
	/* A key that claims to be the pinned one but is not. */
	copy = json_deep_copy(v);
	json_object_set_new(copy, "key", json_string(rfp));
	ck_assert_int_eq(verdict_verify(copy, rpub, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "verdict: bad signature");
	json_decref(copy);
	json_decref(v);
}
END_TEST

START_TEST(t_long_chain)
{
	char		 prev[SHA256_HEX_LEN + 1] = RECEIPT_ZERO_PREV;
	char		*h, *line, *buf, err[256], pad[5001];
	struct receipt_summary s;
	size_t		 len = 0, size = 1 << 20;
	json_t		*facts;
	FILE		*f;
	int		 i;

	/* 40 receipts of ~5 KB: read through a FILE in several pieces. */
	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	ck_assert_ptr_nonnull(buf = malloc(size));
	ck_assert_int_eq(receipt_header(ATTEMPT, rpub, NULL, &h), 0);
	len = snprintf(buf, size, "%s\n", h);
	free(h);
	for (i = 0; i < 40; i++) {
		facts = json_pack("{s:s}", "log", pad);
		ck_assert_int_eq(receipt_make(ATTEMPT, i, "heartbeat", 7, prev,
		    RECEIPT_SIGNER_RECEIPTS, rkey, facts, &line), 0);
		json_decref(facts);
		ck_assert_int_eq(receipt_hash(line, prev), 0);
		len += snprintf(buf + len, size - len, "%s\n", line);
		free(line);
	}
	ck_assert_uint_gt(len, 150000);
	ck_assert_ptr_nonnull(f = fmemopen(buf, len, "r"));
	ck_assert_int_eq(receipt_verify_file(f, rfp, NULL, &s, err,
	    sizeof(err)), 0);
	fclose(f);
	ck_assert_uint_eq(s.count, 40);
	ck_assert_uint_eq(s.last_epoch, 7);
	ck_assert_str_eq(s.head, prev);
	free(buf);
}
END_TEST

/*
 * A chain of three, submitted-running-verdict, whose environments are
 * given as JSON (NULL: no environment fact); 0 if it verifies, else -1
 * with the error in err.
 */
static int
env_chain(const char *e0, const char *e1, const char *e2, char *err,
    size_t errlen)
{
	static const char *const ek[3] = { "submitted", "running", "verdict" };
	const char	*envs[3] = { e0, e1, e2 };
	char		 prev[SHA256_HEX_LEN + 1] = RECEIPT_ZERO_PREV;
	char		*l[3], *h, *buf;
	json_t		*facts;
	size_t		 len;
	int		 i, rv;

	for (i = 0; i < 3; i++) {
		facts = json_object();
		if (envs[i] != NULL)
			json_object_set_new(facts, "environment",
			    json_loads(envs[i], JSON_DECODE_ANY, NULL));
		ck_assert_int_eq(receipt_make_at(ATTEMPT, i, ek[i], 1, prev,
		    i == 2 ? RECEIPT_SIGNER_VERIFIER : RECEIPT_SIGNER_RECEIPTS,
		    i == 2 ? vkey : rkey, facts, 1795943411 + i, &l[i]), 0);
		json_decref(facts);
		ck_assert_int_eq(receipt_hash(l[i], prev), 0);
	}
	ck_assert_int_eq(receipt_header(ATTEMPT, rpub, vpub, &h), 0);
	ck_assert_int_ne(asprintf(&buf, "%s\n%s\n%s\n%s\n", h, l[0], l[1],
	    l[2]), -1);
	len = strlen(buf);
	err[0] = '\0';
	rv = receipt_verify_buf(buf, len, NULL, NULL, NULL, err, errlen);
	for (i = 0; i < 3; i++)
		free(l[i]);
	free(h);
	free(buf);
	return (rv);
}

#define ENV_A	"{\"image\": \"sha256:" \
		"0000000000000000000000000000000000000000000000000000000000000001" \
		"\", \"toolchain\": \"sha256:" \
		"00000000000000000000000000000000000000000000000000000000000000aa\""
/*
 * The environment frozen at submission is the one every later receipt
 * states: the same digests (the reference as written only at first),
 * or the chain does not verify.
 */
START_TEST(t_environment)
{
	char	 err[256];

	ck_assert_msg(env_chain(ENV_A ", \"ref\": \"bb\"}", ENV_A "}",
	    ENV_A "}", err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(env_chain("\"host (floating)\"", "\"host (floating)\"",
	    "\"host (floating)\"", err, sizeof(err)) == 0, "%s", err);
	/* Before environments: nothing to compare. */
	ck_assert_msg(env_chain(NULL, NULL, NULL, err, sizeof(err)) == 0,
	    "%s", err);
	/* A run on another toolchain, on the host, or silent on it. */
	ck_assert_int_eq(env_chain(ENV_A "}", ENV_A "}",
	    "{\"image\": \"sha256:0000000000000000000000000000000000000000"
	    "000000000000000000000001\", \"toolchain\": null}", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "receipt 2 (kind verdict): environment is not "
	    "the submitted one");
	ck_assert_int_eq(env_chain(ENV_A "}", "\"host (floating)\"", ENV_A "}",
	    err, sizeof(err)), -1);
	ck_assert_str_eq(err, "receipt 1 (kind running): environment is not "
	    "the submitted one");
	ck_assert_int_eq(env_chain(ENV_A "}", NULL, ENV_A "}", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "receipt 1 (kind running): environment is not "
	    "the submitted one");
	ck_assert_int_eq(env_chain("\"host (floating)\"", ENV_A "}", NULL,
	    err, sizeof(err)), -1);
}
END_TEST

static Suite *
receipt_suite(void)
{
	Suite	*s = suite_create("receipt");
	TCase	*tc = tcase_create("chain");

	tcase_add_unchecked_fixture(tc, chain_setup, chain_teardown);
	tcase_add_test(tc, t_format);
	tcase_add_test(tc, t_verifies);
	tcase_add_test(tc, t_flip_facts);
	tcase_add_test(tc, t_flip_sig);
	tcase_add_test(tc, t_flip_prev);
	tcase_add_test(tc, t_flip_every_byte);
	tcase_add_test(tc, t_drop);
	tcase_add_test(tc, t_swap);
	tcase_add_test(tc, t_resequenced);
	tcase_add_test(tc, t_pinned);
	tcase_add_test(tc, t_header);
	tcase_add_test(tc, t_truncated);
	tcase_add_test(tc, t_not_json);
	tcase_add_test(tc, t_check_line);
	tcase_add_test(tc, t_rebuild);
	tcase_add_test(tc, t_make_refuses);
	tcase_add_test(tc, t_verdict);
	tcase_add_test(tc, t_long_chain);
	tcase_add_test(tc, t_environment);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(receipt_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
