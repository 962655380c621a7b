/*
 * Receipts: the signed, hash-chained evidence of one attempt, and the
 * verifier's signed verdicts.
 *
 * A receipt is one JSON object on one line, in canonical form
 * (receipt_canonical(): compact, keys sorted, ASCII only):
 *
 *	{"attempt":"a-...","epoch":E,"facts":{...},"key":"SHA256:...",
 *	 "kind":"submitted","prev":"<hex>","seq":N,"sig":"<base64>",
 *	 "signer":"receipts","time":"2026-11-29T09:10:11Z","v":1}
 *
 * "sig" is the Ed25519 signature over the canonical form of the object
 * without "sig".  "prev" is receipt_hash() of the previous line (the
 * sha256 of the whole line, "sig" included), 64 zeros for seq 0.
 * "key" is the fingerprint of the signer's key.  Two signers exist:
 * "receipts" (the parent's receipt key) and "verifier".
 *
 * The export format (factoryctl receipts ID > file) is a header line
 *
 *	{"factory-receipts":1,"attempt":"a-...","keys":{"receipts":
 *	 {"fingerprint":"SHA256:...","public":"<base64 raw key>"},
 *	 "verifier":{...}}}
 *
 * (made by receipt_header()) followed by the receipt lines in order,
 * each ending in a newline.  It verifies offline with
 * receipt_verify_buf() or receipt_verify_file().
 */
#ifndef FACTORY_RECEIPT_H
#define FACTORY_RECEIPT_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "crypto.h"

#define RECEIPT_VERSION		1
#define RECEIPT_EXPORT_VERSION	1
#define RECEIPT_SIGNER_RECEIPTS	"receipts"
#define RECEIPT_SIGNER_VERIFIER	"verifier"
#define RECEIPT_ATTEMPT_MAX	64
#define RECEIPT_KIND_MAX	32	/* [a-z0-9_-], not empty */
#define RECEIPT_LINE_MAX	(256 * 1024)
#define RECEIPT_FILE_MAX	(64 * 1024 * 1024)
#define RECEIPT_ZERO_PREV \
    "0000000000000000000000000000000000000000000000000000000000000000"

/* What a verified chain holds; filled only on success. */
struct receipt_summary {
	size_t		 count;
	char		 attempt[RECEIPT_ATTEMPT_MAX + 1];
	char		 last_kind[RECEIPT_KIND_MAX + 1];
	uint64_t	 last_seq;
	uint64_t	 last_epoch;
	char		 head[SHA256_HEX_LEN + 1];	/* last line's hash */
};

/* receipt.c */
/*
 * The canonical serialization used for signatures and hashes: a
 * malloc'd NUL-terminated string, or NULL.
 */
char	*receipt_canonical(const json_t *);

/*
 * Make and sign one receipt, timestamped now (receipt_make_at: at the
 * given time).  facts is borrowed (NULL means {}); signer_name is
 * RECEIPT_SIGNER_*.  On success *line_out is a malloc'd line without a
 * newline.  Fails (-1, errno EINVAL) on a bad argument, logging why.
 */
int	 receipt_make(const char *, uint64_t, const char *, uint64_t,
	    const char *, const char *, EVP_PKEY *, json_t *, char **);
int	 receipt_make_at(const char *, uint64_t, const char *, uint64_t,
	    const char *, const char *, EVP_PKEY *, json_t *, time_t, char **);
/*
 * A peer's line, checked without parsing it: the line receipt_make_at()
 * makes of the given parts and facts, with sig (base64), must be line
 * byte for byte ("not the line its typed facts make ..."), and sig
 * must verify under the raw public key pub ("... bad signature").  On
 * success *line_out is our own malloc'd copy of it.
 */
int	 receipt_rebuild(const char *, uint64_t, const char *, uint64_t,
	    const char *, const char *, const uint8_t [ED25519_PUB_LEN],
	    json_t *, time_t, const char *, const char *, char **, char *,
	    size_t);
/*
 * A verdict receipt's facts, made from the verdict message's typed
 * fields: the verifier signs them, the parent rebuilds them to compare.
 */
struct msg_verdict;
json_t	*receipt_verdict_facts(const struct msg_verdict *);
/*
 * Sign m's facts as receipt seq after prev, at epoch m->epoch: sets
 * m->receipt (malloc'd), m->sig and m->time.
 */
int	 receipt_verdict_sign(struct msg_verdict *, uint64_t, const char *,
	    EVP_PKEY *, time_t);
/* The chain hash of a line: the "prev" of the next receipt. */
int	 receipt_hash(const char *, char [SHA256_HEX_LEN + 1]);

/*
 * Check one line before accepting it into a chain (e.g. a receipt the
 * verifier signed): it must be for attempt, carry sequence number seq,
 * chain to prev_hex, be signed by signer with the raw public key pub.
 * kind_out (RECEIPT_KIND_MAX + 1 bytes) may be NULL.
 */
int	 receipt_check(const char *, const char *, uint64_t, const char *,
	    const char *, const uint8_t [ED25519_PUB_LEN], char *,
	    char *, size_t);

/*
 * The export header line (malloc'd, no newline).  Either public key
 * may be NULL when the chain holds no receipt of that signer.
 */
int	 receipt_header(const char *, const uint8_t *, const uint8_t *,
	    char **);

/*
 * Verify an export: header, then every receipt in order.  Pinned
 * fingerprints (NULL: not pinned) must match the header's keys, and a
 * pinned key must be present.  Returns 0 if the whole chain verifies;
 * else -1 with err naming the first bad line or receipt, e.g.
 * "receipt 3 (kind verdict): bad signature".  summary may be NULL.
 */
int	 receipt_verify_buf(const char *, size_t, const char *, const char *,
	    struct receipt_summary *, char *, size_t);
int	 receipt_verify_file(FILE *, const char *, const char *,
	    struct receipt_summary *, char *, size_t);
/* "OK: 7 receipts, chain intact, last: published" */
void	 receipt_summary_str(const struct receipt_summary *, char *,
	    size_t);

/*
 * Detached verdicts: verdict_sign adds "key" (the fingerprint) and
 * "sig" (base64 Ed25519 over the canonical form of the object without
 * "sig") to a JSON object that has neither.  verdict_verify checks
 * both against a raw public key, e.g. the pinned verifier key.
 */
int	 verdict_sign(json_t *, EVP_PKEY *);
int	 verdict_verify(const json_t *, const uint8_t [ED25519_PUB_LEN],
	    char *, size_t);

#endif /* FACTORY_RECEIPT_H */
