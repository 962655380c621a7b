/*
 * Attestations: in-toto Statements v1 in DSSE envelopes, signed with
 * the suite's Ed25519 keys.
 *
 * An envelope is one JSON object on one line, in canonical form
 * (receipt_canonical()):
 *
 *	{"payload":"<base64 statement>","payloadType":
 *	 "application/vnd.in-toto+json","signatures":[{"keyid":
 *	 "SHA256:...","publicKey":"<base64 raw key>","sig":"<base64>"}]}
 *
 * "sig" is the Ed25519 signature over the DSSE pre-authentication
 * encoding of the payload,
 *
 *	"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 *
 * (LEN in ASCII decimal, no leading zeros), "keyid" the fingerprint of
 * the key as receipts give it, "publicKey" the raw public key it is
 * the fingerprint of, so a file verifies offline; a pinned fingerprint
 * says whose key it must be.  Exactly one signature per envelope.
 *
 * The statement is compact canonical JSON: "_type"
 * https://in-toto.io/Statement/v1, "subject" the result's commit
 * (gitCommit), tree (gitTree) and bundle (sha256), "predicateType"
 * and "predicate".  Three predicates are made: SLSA Provenance v1
 * (signed by the parent), SLSA Verification Summary v1 and in-toto
 * test-result v0.1 (signed by the verifier).
 *
 * The export format (factoryctl attest ID) is the envelopes, one per
 * line: the provenance first.
 */
#ifndef FACTORY_ATTEST_H
#define FACTORY_ATTEST_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "crypto.h"

#define ATTEST_PAYLOAD_TYPE	"application/vnd.in-toto+json"
#define ATTEST_STATEMENT_TYPE	"https://in-toto.io/Statement/v1"
#define ATTEST_PROVENANCE	"https://slsa.dev/provenance/v1"
#define ATTEST_VSA		"https://slsa.dev/verification_summary/v1"
#define ATTEST_TEST_RESULT \
    "https://in-toto.io/attestation/test-result/v0.1"
#define ATTEST_BUILD_TYPE	"urn:factory:build-type:attempt:v1"
#define ATTEST_LEVEL		"FACTORY_RECHECKED_VALIDATED_1"
#define ATTEST_LINE_MAX		(128 * 1024)	/* one envelope */
#define ATTEST_PAYLOAD_MAX	(64 * 1024)	/* its decoded statement */
#define ATTEST_MAX		8		/* envelopes in one file */
#define ATTEST_FILE		"attestations.intoto.jsonl"

enum attest_kind {
	ATTEST_K_PROVENANCE,
	ATTEST_K_VSA,
	ATTEST_K_TEST_RESULT,
	ATTEST_K_MAX
};

/* One envelope, opened: its signature checked, its statement decoded. */
struct attest_env {
	enum attest_kind	 kind;
	char			 keyid[CRYPTO_FP_SIZE];
	uint8_t			 pub[ED25519_PUB_LEN];
	char			 digest[SHA256_HEX_LEN + 1];	/* payload's */
	json_t			*statement;	/* owned */
};

/* What a verified file holds; filled only on success. */
struct attest_summary {
	size_t		 count;
	char		 result[8];		/* PASSED or FAILED */
	char		 commit[41];
	char		 tree[41];
	char		 baseline_tree[41];	/* the verifier checked */
	char		 bundle[SHA256_HEX_LEN + 1];
	char		 builder_key[CRYPTO_FP_SIZE];
	char		 verifier_key[CRYPTO_FP_SIZE];
};

/* attest.c */
/* The DSSE pre-authentication encoding, malloc'd in *out. */
int	 attest_pae(const char *, const void *, size_t, uint8_t **, size_t *);
/* The three subjects of a result; NULL on a malformed digest. */
json_t	*attest_subject(const char *, const char *, const char *);
/* A Statement v1; subject and predicate are stolen. */
json_t	*attest_statement(json_t *, const char *, json_t *);
/* "2026-11-29T09:10:11Z" from ms since the epoch; buf of 21 bytes. */
void	 attest_time(uint64_t, char [21]);
/*
 * Sign a statement: a malloc'd envelope line, no newline; digest (may
 * be NULL) gets the payload's sha256.
 */
char	*attest_sign(const json_t *, EVP_PKEY *, char [SHA256_HEX_LEN + 1]);
/*
 * Open one envelope line (len bytes, no newline): strictly decoded,
 * the signature checked against the key it carries and, when pub is
 * not NULL, that key must be pub.  err names the field that failed.
 */
int	 attest_open(const char *, size_t, const uint8_t *, struct attest_env *,
	    char *, size_t);
void	 attest_env_free(struct attest_env *);
#define ATTEST_ROLE_BUILDER	0x1	/* signs the provenance */
#define ATTEST_ROLE_VERIFIER	0x2	/* signs the summary, the test result */
/*
 * A pin: "builder=FP", "verifier=FP" or a bare "FP" (either role),
 * FP a fingerprint "SHA256:" and 43 characters of unpadded base64.
 * -1 for anything else.  *fp points into pin.
 */
int	 attest_pin_parse(const char *, int *, const char **);
/*
 * Verify an export: every envelope opens; the provenance first, one
 * summary, at most one test result, nothing else; the provenance
 * signed by a key other than the verifier's, the others by the
 * summary's; the summary names the provenance's digest; the test
 * result's result is the summary's, and a PASSED summary has one;
 * every subject is the same commit, tree and bundle.  Pins (npins >
 * 0, attest_pin_parse()): the provenance's key must be pinned as a
 * builder, the others' as a verifier (a bare pin is both); a
 * malformed pin is refused.  A FAILED summary verifies: sum->result
 * says so.  err: "envelope 2: sig: bad signature".
 */
int	 attest_verify_buf(const char *, size_t, char * const *, size_t,
	    struct attest_summary *, char *, size_t);
/* "OK: 3 envelopes, ..." or, for a FAILED summary, "FAILED: ...". */
void	 attest_summary_str(const struct attest_summary *, char *, size_t);
/* Write a file atomically (temporary, fsync, rename, fsync of the dir). */
int	 attest_write_file(const char *, const void *, size_t, char *, size_t);

#endif /* FACTORY_ATTEST_H */
