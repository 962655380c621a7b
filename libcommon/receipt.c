/*
 * Signed, hash-chained receipts and signed verdicts.  See receipt.h
 * for the formats.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "crypto.h"
#include "esc.h"
#include "log.h"
#include "msg.h"
#include "receipt.h"
#include "util.h"

#define CANON_FLAGS	(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII)
#define PARSE_FLAGS	(JSON_REJECT_DUPLICATES)

enum { KEY_RECEIPTS, KEY_VERIFIER, KEY_MAX };

static const char *const key_names[KEY_MAX] = {
	RECEIPT_SIGNER_RECEIPTS,
	RECEIPT_SIGNER_VERIFIER,
};

/* One signer's key, as the header or the caller gives it. */
struct chain_key {
	int		 present;
	uint8_t		 pub[ED25519_PUB_LEN];
	char		 fp[CRYPTO_FP_SIZE];
};

/* What the next receipt of a chain must be. */
struct chain {
	const char		*attempt;
	uint64_t		 seq;
	char			 prev[SHA256_HEX_LEN + 1];
	struct chain_key	 keys[KEY_MAX];
	char			*env;	/* the submitted environment, canonical */
};

/* The members of a receipt and their types: nothing more, nothing less. */
static const struct {
	const char	*name;
	json_type	 type;
} receipt_members[] = {
	{ "attempt",	JSON_STRING },
	{ "epoch",	JSON_INTEGER },
	{ "facts",	JSON_OBJECT },
	{ "key",	JSON_STRING },
	{ "kind",	JSON_STRING },
	{ "prev",	JSON_STRING },
	{ "seq",	JSON_INTEGER },
	{ "sig",	JSON_STRING },
	{ "signer",	JSON_STRING },
	{ "time",	JSON_STRING },
	{ "v",		JSON_INTEGER },
};
#define RECEIPT_NMEMBERS (sizeof(receipt_members) / sizeof(receipt_members[0]))

/*
 * A string from the file being verified, as an error message shows
 * it: its first max bytes in the suite's encoding (esc.h), so that no
 * byte of it reaches a terminal as it is.
 */
#define SHOWN_MAX	64
#define SHOWN_SIZE	(SHOWN_MAX * ESC_MAXEXPAND + 1)
static const char *
shown(const char *s, size_t max, char buf[SHOWN_SIZE])
{
	if (max > SHOWN_MAX)
		max = SHOWN_MAX;
	if (esc_encode(s, strnlen(s, max), buf, SHOWN_SIZE) == -1)
		return ("?");
	return (buf);
}


char *
receipt_canonical(const json_t *obj)
{
	return (json_dumps(obj, CANON_FLAGS));
}

static int
key_index(const char *name)
{
	int	 i;

	for (i = 0; i < KEY_MAX; i++)
		if (strcmp(name, key_names[i]) == 0)
			return (i);
	return (-1);
}

static int
valid_kind(const char *kind)
{
	size_t	 len = strlen(kind);

	if (len == 0 || len > RECEIPT_KIND_MAX)
		return (0);
	return (strspn(kind, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len);
}

static int
valid_attempt(const char *attempt)
{
	size_t	 len = strlen(attempt);

	if (len == 0 || len > RECEIPT_ATTEMPT_MAX)
		return (0);
	return (strspn(attempt, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == len);
}

/* "2026-11-29T09:10:11Z", and nothing that merely looks like it. */
static int
valid_time(const char *s)
{
	static const char	 shape[] = "dddd-dd-ddTdd:dd:ddZ";
	struct tm		 tm;
	const char		*end;
	size_t			 i;

	if (strlen(s) != sizeof(shape) - 1)
		return (0);
	for (i = 0; shape[i] != '\0'; i++) {
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') :
		    s[i] != shape[i])
			return (0);
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return (end != NULL && *end == '\0');
}

static int
sign_object(json_t *obj, EVP_PKEY *key)
{
	uint8_t	 sig[ED25519_SIG_LEN];
	char	 b64[BASE64_SIZE(ED25519_SIG_LEN)], *canon;
	int	 rv;

	if ((canon = receipt_canonical(obj)) == NULL)
		return (-1);
	rv = ed25519_sign(key, canon, strlen(canon), sig);
	free(canon);
	if (rv == -1)
		return (-1);
	base64_encode(sig, sizeof(sig), 1, b64);
	return (json_object_set_new(obj, "sig", json_string(b64)));
}

/* Check "sig" of obj against pub; obj itself is not changed. */
static int
verify_object(const json_t *obj, const uint8_t pub[ED25519_PUB_LEN])
{
	json_t		*copy;
	const char	*b64;
	uint8_t		 sig[ED25519_SIG_LEN];
	size_t		 siglen;
	char		*canon;
	int		 rv;

	if ((b64 = json_string_value(json_object_get(obj, "sig"))) == NULL ||
	    base64_decode(b64, sig, sizeof(sig), &siglen) == -1 ||
	    siglen != sizeof(sig))
		return (-1);
	if ((copy = json_copy((json_t *)obj)) == NULL)
		return (-1);
	json_object_del(copy, "sig");
	canon = receipt_canonical(copy);
	json_decref(copy);
	if (canon == NULL)
		return (-1);
	rv = ed25519_verify(pub, canon, strlen(canon), sig);
	free(canon);
	return (rv);
}

int
receipt_make(const char *attempt, uint64_t seq, const char *kind,
    uint64_t epoch, const char *prev_hex, const char *signer_name,
    EVP_PKEY *key, json_t *facts, char **line_out)
{
	return (receipt_make_at(attempt, seq, kind, epoch, prev_hex,
	    signer_name, key, facts, time(NULL), line_out));
}

static int
make_args_ok(const char *attempt, uint64_t seq, const char *kind,
    uint64_t epoch, const char *prev_hex, const char *signer_name,
    json_t *facts)
{
	const char	*why = NULL;

	if (attempt == NULL || !valid_attempt(attempt))
		why = "bad attempt id";
	else if (kind == NULL || !valid_kind(kind))
		why = "bad kind";
	else if (seq > INT64_MAX || epoch > INT64_MAX)
		why = "seq or epoch out of range";
	else if (prev_hex == NULL || !hex_valid(prev_hex, SHA256_HEX_LEN))
		why = "prev is not a lowercase sha256";
	else if (seq == 0 && strcmp(prev_hex, RECEIPT_ZERO_PREV) != 0)
		why = "receipt 0 must have a zero prev";
	else if (signer_name == NULL || key_index(signer_name) == -1)
		why = "unknown signer";
	else if (facts != NULL && !json_is_object(facts))
		why = "facts is not an object";
	if (why == NULL)
		return (1);
	log_warnx("receipt_make: %s", why);
	errno = EINVAL;
	return (0);
}

/* The object a receipt signs; takes f's reference, also on failure. */
static json_t *
receipt_object(const char *attempt, uint64_t seq, const char *kind,
    uint64_t epoch, const char *prev_hex, const char *signer_name,
    const char *fp, json_t *f, time_t when)
{
	struct tm	 tm;
	char		 ts[32];

	if (gmtime_r(&when, &tm) == NULL ||
	    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		json_decref(f);
		errno = EINVAL;
		return (NULL);
	}
	return (json_pack("{s:i, s:s, s:I, s:s, s:s, s:I, s:s, s:s, s:s, s:o}",
	    "v", RECEIPT_VERSION, "attempt", attempt, "seq", (json_int_t)seq,
	    "kind", kind, "time", ts, "epoch", (json_int_t)epoch,
	    "prev", prev_hex, "signer", signer_name, "key", fp,
	    "facts", f));
}

int
receipt_make_at(const char *attempt, uint64_t seq, const char *kind,
    uint64_t epoch, const char *prev_hex, const char *signer_name,
    EVP_PKEY *key, json_t *facts, time_t when, char **line_out)
{
	json_t		*obj, *f;
	char		 fp[CRYPTO_FP_SIZE];

	*line_out = NULL;
	if (!make_args_ok(attempt, seq, kind, epoch, prev_hex, signer_name,
	    facts))
		return (-1);
	if (ed25519_fingerprint(key, fp) == -1) {
		log_warnx("receipt_make: not an Ed25519 key");
		errno = EINVAL;
		return (-1);
	}
	if ((f = facts != NULL ? json_incref(facts) : json_object()) == NULL)
		return (-1);
	if ((obj = receipt_object(attempt, seq, kind, epoch, prev_hex,
	    signer_name, fp, f, when)) == NULL)
		return (-1);
	if (sign_object(obj, key) == 0)
		*line_out = receipt_canonical(obj);
	json_decref(obj);
	return (*line_out == NULL ? -1 : 0);
}

int
receipt_rebuild(const char *attempt, uint64_t seq, const char *kind,
    uint64_t epoch, const char *prev_hex, const char *signer_name,
    const uint8_t pub[ED25519_PUB_LEN], json_t *facts, time_t when,
    const char *sig, const char *line, char **line_out, char *err,
    size_t errlen)
{
	json_t		*obj;
	char		 fp[CRYPTO_FP_SIZE], *canon = NULL;
	int		 rv = -1;

	*line_out = NULL;
	if (!make_args_ok(attempt, seq, kind, epoch, prev_hex, signer_name,
	    facts) || facts == NULL || ed25519_fingerprint_raw(pub, fp) == -1)
		return (errfmt(err, errlen, "receipt %" PRIu64 ": bad "
		    "arguments", seq));
	if ((obj = receipt_object(attempt, seq, kind, epoch, prev_hex,
	    signer_name, fp, json_incref(facts), when)) == NULL ||
	    json_object_set_new(obj, "sig", json_string(sig)) == -1 ||
	    (canon = receipt_canonical(obj)) == NULL)
		errfmt(err, errlen, "receipt %" PRIu64 ": cannot make it",
		    seq);
	else if (strcmp(canon, line) != 0)
		errfmt(err, errlen, "not the line its typed facts make "
		    "(receipt %" PRIu64 ", kind %s)", seq, kind);
	else if (verify_object(obj, pub) == -1)
		errfmt(err, errlen, "receipt %" PRIu64 " (kind %s): bad "
		    "signature", seq, kind);
	else {
		*line_out = canon;
		canon = NULL;
		rv = 0;
	}
	free(canon);
	json_decref(obj);
	return (rv);
}

/* The verdict's environment: the image it ran on, or the host. */
static json_t *
verdict_environment_json(const struct msg_verdict *m)
{
	if (m->env_image[0] == '\0')
		return (json_string("host (floating)"));
	return (json_pack("{s:s, s:o}", "image", m->env_image, "toolchain",
	    m->env_toolchain[0] != '\0' ? json_string(m->env_toolchain) :
	    json_null()));
}

json_t *
receipt_verdict_facts(const struct msg_verdict *m)
{
	json_t	*facts, *list, *val;
	size_t	 i;

	if ((list = json_array()) == NULL)
		return (NULL);
	for (i = 0; i < m->nfindings; i++)
		if (json_array_append_new(list, json_string(
		    m->findings[i])) == -1) {
			json_decref(list);
			return (NULL);
		}
	val = m->validated ? json_pack("{s:I, s:b, s:b}", "status",
	    (json_int_t)m->vstatus, "passed", m->vpassed, "timedout",
	    m->vtimedout) : json_null();
	/* "o" takes list's and val's references, also on failure. */
	facts = json_pack("{s:b, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:o}",
	    "accepted", m->accepted,
	    "baseline", m->baseline,
	    "commit", m->commit,
	    "tree", m->tree,
	    "bundle_sha256", m->bundle_sha256,
	    "manifest_digest", m->manifest_digest,
	    "findings", list,
	    "nfindings", (json_int_t)m->findings_total,
	    "validation", val);
	if (facts == NULL)
		return (NULL);
	if (json_object_set_new(facts, "environment",
	    verdict_environment_json(m)) == -1 ||
	    json_object_set_new(facts, "baseline_tree", json_pack("{s:s?, "
	    "s:s}", "tree", m->baseline_tree[0] != '\0' ? m->baseline_tree :
	    NULL, "pristine", m->pristine)) == -1 ||
	    (m->reason != NULL && json_object_set_new(facts, "reason",
	    json_string(m->reason)) == -1)) {
		json_decref(facts);
		return (NULL);
	}
	return (facts);
}

int
receipt_verdict_sign(struct msg_verdict *m, uint64_t seq, const char *prev,
    EVP_PKEY *key, time_t when)
{
	json_t		*facts, *obj;
	char		 fp[CRYPTO_FP_SIZE];
	const char	*sig;

	m->receipt = NULL;
	if ((facts = receipt_verdict_facts(m)) == NULL)
		return (-1);
	if (!make_args_ok(m->id, seq, "verdict", m->epoch, prev,
	    RECEIPT_SIGNER_VERIFIER, facts) ||
	    ed25519_fingerprint(key, fp) == -1) {
		json_decref(facts);
		return (-1);
	}
	if ((obj = receipt_object(m->id, seq, "verdict", m->epoch, prev,
	    RECEIPT_SIGNER_VERIFIER, fp, facts, when)) == NULL)
		return (-1);
	if (sign_object(obj, key) == 0 &&
	    (sig = json_string_value(json_object_get(obj, "sig"))) != NULL &&
	    strlcpy(m->sig, sig, sizeof(m->sig)) < sizeof(m->sig)) {
		m->time = (uint64_t)when;
		m->receipt = receipt_canonical(obj);
	}
	json_decref(obj);
	return (m->receipt == NULL ? -1 : 0);
}

int
receipt_hash(const char *line, char out[SHA256_HEX_LEN + 1])
{
	return (sha256_hex(line, strlen(line), out));
}

static int
check_members(const json_t *obj, uint64_t pos, char *err, size_t errlen)
{
	json_t	*v;
	size_t	 i;

	for (i = 0; i < RECEIPT_NMEMBERS; i++) {
		v = json_object_get(obj, receipt_members[i].name);
		if (v == NULL || json_typeof(v) != receipt_members[i].type) {
			errfmt(err, errlen, "receipt %" PRIu64 ": %s \"%s\"", pos,
			    v == NULL ? "missing" : "bad",
			    receipt_members[i].name);
			return (-1);
		}
	}
	if (json_object_size(obj) != RECEIPT_NMEMBERS) {
		errfmt(err, errlen, "receipt %" PRIu64 ": unexpected members",
		    pos);
		return (-1);
	}
	return (0);
}

/* Who signed and with which key: the key must be the chain's. */
static int
check_signer(const json_t *obj, const struct chain *c, uint64_t pos,
    const struct chain_key **kp, char *err, size_t errlen)
{
	const char	*signer, *fp;
	char		 b1[SHOWN_SIZE], b2[SHOWN_SIZE];
	int		 k;

	signer = json_string_value(json_object_get(obj, "signer"));
	fp = json_string_value(json_object_get(obj, "key"));
	if ((k = key_index(signer)) == -1) {
		errfmt(err, errlen, "receipt %" PRIu64 ": unknown signer %s",
		    pos, shown(signer, 32, b1));
		return (-1);
	}
	if (!c->keys[k].present) {
		errfmt(err, errlen, "receipt %" PRIu64 ": signer %s has no key "
		    "in the header", pos, signer);
		return (-1);
	}
	if (strcmp(fp, c->keys[k].fp) != 0) {
		errfmt(err, errlen, "receipt %" PRIu64 ": key %s is not the "
		    "%s key %s", pos, shown(fp, 60, b1), shown(signer, 32, b2),
		    c->keys[k].fp);
		return (-1);
	}
	*kp = &c->keys[k];
	return (0);
}

/* The fields that say where the receipt belongs. */
static int
check_place(const json_t *obj, const struct chain *c, char *err,
    size_t errlen)
{
	const char	*attempt, *prev;
	json_int_t	 seq;
	uint64_t	 pos = c->seq;

	if (json_integer_value(json_object_get(obj, "v")) != RECEIPT_VERSION) {
		errfmt(err, errlen, "receipt %" PRIu64 ": unsupported version",
		    pos);
		return (-1);
	}
	attempt = json_string_value(json_object_get(obj, "attempt"));
	if (strcmp(attempt, c->attempt) != 0) {
		errfmt(err, errlen, "receipt %" PRIu64 ": not for attempt %s",
		    pos, c->attempt);
		return (-1);
	}
	seq = json_integer_value(json_object_get(obj, "seq"));
	if (seq < 0 || (uint64_t)seq != pos) {
		errfmt(err, errlen, "receipt %" PRIu64 ": seq %lld, expected %"
		    PRIu64, pos, (long long)seq, pos);
		return (-1);
	}
	prev = json_string_value(json_object_get(obj, "prev"));
	if (strcmp(prev, c->prev) != 0) {
		if (pos == 0)
			errfmt(err, errlen, "receipt 0: prev is not the chain "
			    "start (64 zeros)");
		else
			errfmt(err, errlen, "receipt %" PRIu64 ": prev does not "
			    "match receipt %" PRIu64, pos, pos - 1);
		return (-1);
	}
	return (0);
}

static int
check_fields(const json_t *obj, uint64_t pos, char *err, size_t errlen)
{
	const char	*kind, *ts;

	kind = json_string_value(json_object_get(obj, "kind"));
	ts = json_string_value(json_object_get(obj, "time"));
	if (!valid_kind(kind)) {
		errfmt(err, errlen, "receipt %" PRIu64 ": bad kind", pos);
		return (-1);
	}
	if (!valid_time(ts)) {
		errfmt(err, errlen, "receipt %" PRIu64 ": bad time", pos);
		return (-1);
	}
	if (json_integer_value(json_object_get(obj, "epoch")) < 0) {
		errfmt(err, errlen, "receipt %" PRIu64 ": bad epoch", pos);
		return (-1);
	}
	return (0);
}

/*
 * Verify one line as receipt number c->seq of chain c.  lineno (0: a
 * lone line) names the line when it is not JSON at all.
 */
static int
check_line(const char *line, size_t len, const struct chain *c,
    size_t lineno, char *kind_out, char *err, size_t errlen)
{
	json_t			*obj;
	json_error_t		 jerr;
	const struct chain_key	*k;
	char			*canon = NULL;
	const char		*kind;
	int			 rv = -1;

	if ((obj = json_loadb(line, len, PARSE_FLAGS, &jerr)) == NULL ||
	    !json_is_object(obj)) {
		if (lineno > 0)
			errfmt(err, errlen, "line %zu: not JSON", lineno);
		else
			errfmt(err, errlen, "receipt %" PRIu64 ": not JSON",
			    c->seq);
		goto out;
	}
	if (check_members(obj, c->seq, err, errlen) == -1 ||
	    check_place(obj, c, err, errlen) == -1 ||
	    check_fields(obj, c->seq, err, errlen) == -1 ||
	    check_signer(obj, c, c->seq, &k, err, errlen) == -1)
		goto out;
	kind = json_string_value(json_object_get(obj, "kind"));
	/* The line is hashed as written: only one spelling is accepted. */
	if ((canon = receipt_canonical(obj)) == NULL ||
	    strlen(canon) != len || memcmp(canon, line, len) != 0) {
		errfmt(err, errlen, "receipt %" PRIu64 " (kind %s): not in "
		    "canonical form", c->seq, kind);
		goto out;
	}
	if (verify_object(obj, k->pub) == -1) {
		errfmt(err, errlen, "receipt %" PRIu64 " (kind %s): bad "
		    "signature", c->seq, kind);
		goto out;
	}
	if (kind_out != NULL)
		strlcpy(kind_out, kind, RECEIPT_KIND_MAX + 1);
	rv = 0;
 out:
	free(canon);
	json_decref(obj);
	return (rv);
}

int
receipt_check(const char *line, const char *attempt, uint64_t seq,
    const char *prev_hex, const char *signer,
    const uint8_t pub[ED25519_PUB_LEN], char *kind_out, char *err,
    size_t errlen)
{
	struct chain	 c;
	int		 k;

	memset(&c, 0, sizeof(c));
	if ((k = key_index(signer)) == -1 ||
	    strlen(prev_hex) > SHA256_HEX_LEN) {
		errfmt(err, errlen, "receipt %" PRIu64 ": bad arguments", seq);
		return (-1);
	}
	c.attempt = attempt;
	c.seq = seq;
	strlcpy(c.prev, prev_hex, sizeof(c.prev));
	c.keys[k].present = 1;
	memcpy(c.keys[k].pub, pub, ED25519_PUB_LEN);
	if (ed25519_fingerprint_raw(pub, c.keys[k].fp) == -1)
		return (-1);
	return (check_line(line, strlen(line), &c, 0, kind_out, err, errlen));
}

static json_t *
header_key(const uint8_t *pub)
{
	char	 fp[CRYPTO_FP_SIZE], b64[BASE64_SIZE(ED25519_PUB_LEN)];

	if (ed25519_fingerprint_raw(pub, fp) == -1)
		return (NULL);
	base64_encode(pub, ED25519_PUB_LEN, 1, b64);
	return (json_pack("{s:s, s:s}", "fingerprint", fp, "public", b64));
}

int
receipt_header(const char *attempt, const uint8_t *receipts_pub,
    const uint8_t *verifier_pub, char **line_out)
{
	json_t		*hdr, *keys, *k;
	const uint8_t	*pubs[KEY_MAX] = { receipts_pub, verifier_pub };
	int		 i;

	*line_out = NULL;
	if (attempt == NULL || !valid_attempt(attempt)) {
		errno = EINVAL;
		return (-1);
	}
	if ((hdr = json_pack("{s:i, s:s, s:{}}", "factory-receipts",
	    RECEIPT_EXPORT_VERSION, "attempt", attempt, "keys")) == NULL)
		return (-1);
	keys = json_object_get(hdr, "keys");
	for (i = 0; i < KEY_MAX; i++) {
		if (pubs[i] == NULL)
			continue;
		if ((k = header_key(pubs[i])) == NULL ||
		    json_object_set_new(keys, key_names[i], k) == -1) {
			json_decref(hdr);
			return (-1);
		}
	}
	*line_out = receipt_canonical(hdr);
	json_decref(hdr);
	return (*line_out == NULL ? -1 : 0);
}

/* One key of the header: its public key must give its fingerprint. */
static int
parse_header_key(const char *name, json_t *v, const char *pinned,
    struct chain_key *ck, char *err, size_t errlen)
{
	const char	*fp, *b64;
	char		 b1[SHOWN_SIZE];
	size_t		 len;

	fp = json_string_value(json_object_get(v, "fingerprint"));
	b64 = json_string_value(json_object_get(v, "public"));
	if (fp == NULL || b64 == NULL ||
	    base64_decode(b64, ck->pub, sizeof(ck->pub), &len) == -1 ||
	    len != sizeof(ck->pub)) {
		errfmt(err, errlen, "header: bad %s key", name);
		return (-1);
	}
	if (ed25519_fingerprint_raw(ck->pub, ck->fp) == -1)
		return (-1);
	if (strcmp(fp, ck->fp) != 0) {
		errfmt(err, errlen, "header: %s key fingerprint %s does not "
		    "match its public key", name, shown(fp, 60, b1));
		return (-1);
	}
	if (pinned != NULL && strcmp(pinned, ck->fp) != 0) {
		errfmt(err, errlen, "header: %s key %s does not match the "
		    "pinned %s", name, ck->fp, shown(pinned, 60, b1));
		return (-1);
	}
	ck->present = 1;
	return (0);
}

static int
parse_header(const char *line, size_t len, const char *pins[KEY_MAX],
    struct chain *c, json_t **hdrp, char *err, size_t errlen)
{
	json_t		*hdr, *keys, *v;
	json_error_t	 jerr;
	const char	*name, *attempt;
	char		 b1[SHOWN_SIZE];
	int		 k;

	if ((*hdrp = hdr = json_loadb(line, len, PARSE_FLAGS, &jerr)) == NULL ||
	    !json_is_object(hdr)) {
		errfmt(err, errlen, "line 1: not JSON");
		return (-1);
	}
	v = json_object_get(hdr, "factory-receipts");
	attempt = json_string_value(json_object_get(hdr, "attempt"));
	keys = json_object_get(hdr, "keys");
	if (!json_is_integer(v) || attempt == NULL || !json_is_object(keys)) {
		errfmt(err, errlen, "line 1: not a factory-receipts header");
		return (-1);
	}
	if (json_integer_value(v) != RECEIPT_EXPORT_VERSION) {
		errfmt(err, errlen, "header: unsupported version %lld",
		    (long long)json_integer_value(v));
		return (-1);
	}
	if (!valid_attempt(attempt)) {
		errfmt(err, errlen, "header: bad attempt id");
		return (-1);
	}
	c->attempt = attempt;	/* lives as long as hdr */
	json_object_foreach(keys, name, v) {
		if ((k = key_index(name)) == -1) {
			errfmt(err, errlen, "header: unknown key %s",
			    shown(name, 32, b1));
			return (-1);
		}
		if (parse_header_key(name, v, pins[k], &c->keys[k], err,
		    errlen) == -1)
			return (-1);
	}
	for (k = 0; k < KEY_MAX; k++) {
		if (pins[k] != NULL && !c->keys[k].present) {
			errfmt(err, errlen, "header: no %s key, but one is "
			    "pinned", key_names[k]);
			return (-1);
		}
	}
	return (0);
}

static void
summarize(struct receipt_summary *s, const struct chain *c,
    const char *last_kind, uint64_t last_epoch)
{
	memset(s, 0, sizeof(*s));
	s->count = c->seq;
	strlcpy(s->attempt, c->attempt, sizeof(s->attempt));
	strlcpy(s->last_kind, last_kind, sizeof(s->last_kind));
	s->last_seq = c->seq - 1;
	s->last_epoch = last_epoch;
	strlcpy(s->head, c->prev, sizeof(s->head));
}

/* The epoch of an already verified line. */
static uint64_t
line_epoch(const char *line, size_t len)
{
	json_t		*obj;
	json_error_t	 jerr;
	json_int_t	 e = 0;

	if ((obj = json_loadb(line, len, PARSE_FLAGS, &jerr)) != NULL) {
		e = json_integer_value(json_object_get(obj, "epoch"));
		json_decref(obj);
	}
	return ((uint64_t)e);
}

/* Hand out the next line of buf; the last one may lack its newline. */
static int
next_line(const char *buf, size_t len, size_t *off, const char **line,
    size_t *linelen)
{
	const char	*nl;

	if (*off >= len)
		return (0);
	*line = buf + *off;
	if ((nl = memchr(*line, '\n', len - *off)) == NULL) {
		*linelen = len - *off;
		*off = len;
	} else {
		*linelen = nl - *line;
		*off += *linelen + 1;
	}
	return (1);
}

/*
 * An environment as compared: "host (floating)", or the image and the
 * toolchain digests (the submitted receipt also names the reference as
 * written, which later ones need not repeat).
 */
static char *
env_canon(json_t *e)
{
	json_t	*o;
	char	*s;

	if (!json_is_object(e))
		return (json_dumps(e, CANON_FLAGS | JSON_ENCODE_ANY));
	if ((o = json_object()) == NULL)
		return (NULL);
	json_object_set(o, "image", json_object_get(e, "image"));
	json_object_set(o, "toolchain", json_object_get(e, "toolchain"));
	s = json_dumps(o, CANON_FLAGS);
	json_decref(o);
	return (s);
}

/*
 * The environment frozen at submission (factory-manifest(5)) is the one
 * every later run states: running, validated and the verdict carry the
 * same digests.  A chain whose submitted receipt has none (written
 * before environments) has nothing to compare.
 */
static int
check_env(const char *line, size_t len, struct chain *c, char *err,
    size_t errlen)
{
	static const char *const kinds[] = { "running", "validated",
	    "verdict", NULL };
	json_t		*obj, *e;
	const char	*kind;
	char		*got = NULL;
	size_t		 i;
	int		 rv = 0;

	if ((obj = json_loadb(line, len, PARSE_FLAGS, NULL)) == NULL)
		return (0);	/* check_line said it already */
	kind = json_string_value(json_object_get(obj, "kind"));
	e = json_object_get(json_object_get(obj, "facts"), "environment");
	if (kind != NULL && strcmp(kind, "submitted") == 0) {
		if (e != NULL && (c->env = env_canon(e)) == NULL)
			rv = -1;
		goto out;
	}
	for (i = 0; kinds[i] != NULL && kind != NULL; i++)
		if (strcmp(kind, kinds[i]) == 0)
			break;
	if (c->env == NULL || kinds[i] == NULL || kind == NULL)
		goto out;
	if (e == NULL || (got = env_canon(e)) == NULL ||
	    strcmp(got, c->env) != 0) {
		errfmt(err, errlen, "receipt %" PRIu64 " (kind %s): "
		    "environment is not the submitted one", c->seq, kind);
		rv = -1;
	}
 out:
	free(got);
	json_decref(obj);
	return (rv);
}

static int
verify_chain(const char *buf, size_t len, struct chain *c, char *last_kind,
    const char **lastp, size_t *lastlen, char *err, size_t errlen)
{
	const char	*line;
	size_t		 off, linelen, lineno = 1;

	off = 0;
	(void)next_line(buf, len, &off, &line, &linelen);	/* header */
	while (next_line(buf, len, &off, &line, &linelen)) {
		lineno++;
		if (linelen > RECEIPT_LINE_MAX) {
			errfmt(err, errlen, "line %zu: too long", lineno);
			return (-1);
		}
		if (check_line(line, linelen, c, lineno, last_kind, err,
		    errlen) == -1 || check_env(line, linelen, c, err,
		    errlen) == -1)
			return (-1);
		if (sha256_hex(line, linelen, c->prev) == -1) {
			errfmt(err, errlen, "line %zu: sha256 failed", lineno);
			return (-1);
		}
		c->seq++;
		*lastp = line;
		*lastlen = linelen;
	}
	if (c->seq == 0) {
		errfmt(err, errlen, "no receipts after the header");
		return (-1);
	}
	return (0);
}

int
receipt_verify_buf(const char *buf, size_t len, const char *pin_receipts,
    const char *pin_verifier, struct receipt_summary *summary, char *err,
    size_t errlen)
{
	const char	*pins[KEY_MAX] = { pin_receipts, pin_verifier };
	struct chain	 c;
	json_t		*hdr = NULL;
	const char	*line, *last = NULL;
	size_t		 off = 0, linelen, lastlen = 0;
	char		 last_kind[RECEIPT_KIND_MAX + 1];
	int		 rv = -1;

	memset(&c, 0, sizeof(c));
	strlcpy(c.prev, RECEIPT_ZERO_PREV, sizeof(c.prev));
	if (len == 0 || !next_line(buf, len, &off, &line, &linelen)) {
		errfmt(err, errlen, "empty file");
		return (-1);
	}
	if (linelen > RECEIPT_LINE_MAX) {
		errfmt(err, errlen, "line 1: too long");
		return (-1);
	}
	if (parse_header(line, linelen, pins, &c, &hdr, err, errlen) == -1)
		goto out;
	if (verify_chain(buf, len, &c, last_kind, &last, &lastlen, err,
	    errlen) == -1)
		goto out;
	if (summary != NULL) {
		summarize(summary, &c, last_kind, line_epoch(last, lastlen));
	}
	rv = 0;
 out:
	free(c.env);
	json_decref(hdr);
	return (rv);
}

int
receipt_verify_file(FILE *fp, const char *pin_receipts,
    const char *pin_verifier, struct receipt_summary *summary, char *err,
    size_t errlen)
{
	char	*buf = NULL, *nbuf;
	size_t	 len = 0, size = 0, n;
	int	 rv;

	for (;;) {
		if (len == size) {
			if (size >= RECEIPT_FILE_MAX) {
				errfmt(err, errlen, "file larger than %d bytes",
				    RECEIPT_FILE_MAX);
				free(buf);
				return (-1);
			}
			size = size == 0 ? 65536 : size * 2;
			if ((nbuf = realloc(buf, size)) == NULL) {
				errfmt(err, errlen, "out of memory");
				free(buf);
				return (-1);
			}
			buf = nbuf;
		}
		if ((n = fread(buf + len, 1, size - len, fp)) == 0)
			break;
		len += n;
	}
	if (ferror(fp)) {
		errfmt(err, errlen, "read: %s", strerror(errno));
		free(buf);
		return (-1);
	}
	rv = receipt_verify_buf(buf, len, pin_receipts, pin_verifier, summary,
	    err, errlen);
	free(buf);
	return (rv);
}

void
receipt_summary_str(const struct receipt_summary *s, char *buf, size_t len)
{
	snprintf(buf, len, "OK: %zu receipt%s, chain intact, last: %s",
	    s->count, s->count == 1 ? "" : "s", s->last_kind);
}

int
verdict_sign(json_t *verdict, EVP_PKEY *key)
{
	char	 fp[CRYPTO_FP_SIZE];

	if (!json_is_object(verdict) ||
	    json_object_get(verdict, "sig") != NULL ||
	    json_object_get(verdict, "key") != NULL ||
	    ed25519_fingerprint(key, fp) == -1) {
		errno = EINVAL;
		return (-1);
	}
	if (json_object_set_new(verdict, "key", json_string(fp)) == -1)
		return (-1);
	if (sign_object(verdict, key) == -1) {
		json_object_del(verdict, "key");
		return (-1);
	}
	return (0);
}

int
verdict_verify(const json_t *verdict, const uint8_t pub[ED25519_PUB_LEN],
    char *err, size_t errlen)
{
	const char	*key, *sig;
	char		 fp[CRYPTO_FP_SIZE], b1[SHOWN_SIZE];

	if (ed25519_fingerprint_raw(pub, fp) == -1) {
		errfmt(err, errlen, "verdict: cannot fingerprint the key");
		return (-1);
	}
	key = json_string_value(json_object_get(verdict, "key"));
	sig = json_string_value(json_object_get(verdict, "sig"));
	if (!json_is_object(verdict) || key == NULL || sig == NULL) {
		errfmt(err, errlen, "verdict: not a signed verdict");
		return (-1);
	}
	if (strcmp(key, fp) != 0) {
		errfmt(err, errlen, "verdict: signed by %s, not by %s",
		    shown(key, 60, b1), fp);
		return (-1);
	}
	if (verify_object(verdict, pub) == -1) {
		errfmt(err, errlen, "verdict: bad signature");
		return (-1);
	}
	return (0);
}
