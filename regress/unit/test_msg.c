/*
 * Unit tests of libcommon/msg.c: for every message kind, a valid
 * struct round-trips, and every field missing (the payload cut there,
 * and at every other byte), bytes left over, every field of another
 * type than its own, a wrong kind byte, a NUL in a string and an
 * oversized string are each refused, by name; plus the classes of
 * strings and the relations between fields.  Payloads are spelled as
 * JSON and laid out on the wire by regress/daemon/msgjson.c.
 */
#include <sys/types.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "msg.h"
#include "../daemon/msgjson.h"

#define HEX40	"0123456789abcdef0123456789abcdef01234567"
#define HEX64	"0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"

static char	*scope[] = { "src/**", "README.md", NULL };
static char	*attest[] = { "{\"payload\":\"e30=\"}", "{\"sig\":\"AA==\"}", NULL };
static char	*rejects[] = { "src/\\xff.txt: outside the scope", NULL };
static struct msg_superseded superseded[] = {
	{ "a-20261203-0002", HEX40 },
	{ "a-20261203-0003", HEX40 },
};
static struct msg_change changes[] = {
	{ "A", "src/\\xff.txt" }, { "M", "README.md" }
};

/* A valid struct of each kind, in st (msg_size(k) bytes, zeroed). */
static char	*verdict_findings[] = { "src/a.txt: a token on line 1" };

static void
fill(enum msg_kind k, void *st)
{
	memset(st, 0, msg_size(k));
	switch (k) {
	case MSG_RESOLVE: {
		struct msg_resolve *m = st;
		m->req = 7;
		strlcpy(m->repo, "/srv/git/demo.git", sizeof(m->repo));
		strlcpy(m->ref, "main", sizeof(m->ref));
		break;
	}
	case MSG_RESOLVED: {
		struct msg_resolved *m = st;
		m->req = 7;
		strlcpy(m->oid, HEX40, sizeof(m->oid));
		break;
	}
	case MSG_PROVISION: {
		struct msg_provision *m = st;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		m->epoch = 1;
		strlcpy(m->repo, "/srv/git/demo.git", sizeof(m->repo));
		strlcpy(m->baseline, HEX40, sizeof(m->baseline));
		strlcpy(m->dir, "/var/lib/factory/attempts/a", sizeof(m->dir));
		strlcpy(m->lower, "/var/lib/factory/pristine/demo/" HEX40,
		    sizeof(m->lower));
		break;
	}
	case MSG_READY: {
		struct msg_ready *m = st;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		m->epoch = 2;
		break;
	}
	case MSG_COLLECT: {
		struct msg_collect *m = st;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		m->epoch = 1;
		strlcpy(m->repo, "/r", sizeof(m->repo));
		strlcpy(m->baseline, HEX40, sizeof(m->baseline));
		strlcpy(m->dir, "/d", sizeof(m->dir));
		m->scope = scope;
		m->nscope = 2;
		strlcpy(m->title, "Fix caf\xc3\xa9", sizeof(m->title));
		strlcpy(m->digest, "sha256:" HEX64, sizeof(m->digest));
		m->tree_limit = 1 << 20;
		strlcpy(m->bundle, "/d/bundle", sizeof(m->bundle));
		break;
	}
	case MSG_RESULT: {
		struct msg_result *m = st;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		m->epoch = 1;
		strlcpy(m->commit, HEX40, sizeof(m->commit));
		strlcpy(m->tree, HEX40, sizeof(m->tree));
		strlcpy(m->bundle_sha256, HEX64, sizeof(m->bundle_sha256));
		m->bundle_size = 1234;
		m->changes = changes;
		m->nchanges = 2;
		m->changes_total = 5;
		break;
	}
	case MSG_ERROR:
	case MSG_LATE: {
		struct msg_error *m = st;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		strlcpy(m->error, "src/\\xff: unreadable", sizeof(m->error));
		break;
	}
	case MSG_VERIFY: {
		struct msg_verify *m = st;
		strlcpy(m->id, "a-1", sizeof(m->id));
		strlcpy(m->repo, "/r", sizeof(m->repo));
		strlcpy(m->baseline, HEX40, sizeof(m->baseline));
		m->scope = scope;
		m->nscope = 2;
		strlcpy(m->title, "t", sizeof(m->title));
		strlcpy(m->digest, "sha256:" HEX64, sizeof(m->digest));
		strlcpy(m->commit, HEX40, sizeof(m->commit));
		strlcpy(m->bundle_sha256, HEX64, sizeof(m->bundle_sha256));
		strlcpy(m->dir, "/v", sizeof(m->dir));
		m->seq = 6;
		strlcpy(m->prev, HEX64, sizeof(m->prev));
		m->epoch = 1;
		m->wall_ms = 20000;
		strlcpy(m->provenance, "sha256:" HEX64, sizeof(m->provenance));
		strlcpy(m->isolation, "sha256:" HEX64, sizeof(m->isolation));
		break;
	}
	case MSG_VALIDATE_REQ: {
		struct msg_validate_req *m = st;
		strlcpy(m->id, "a-1", sizeof(m->id));
		break;
	}
	case MSG_VALIDATE_DONE: {
		struct msg_validate_done *m = st;
		strlcpy(m->id, "a-1", sizeof(m->id));
		m->status = 256;
		m->passed = 0;
		m->timedout = 1;
		m->seq = 7;
		strlcpy(m->prev, HEX64, sizeof(m->prev));
		m->epoch = 1;
		break;
	}
	case MSG_VERDICT: {
		struct msg_verdict *m = st;
		strlcpy(m->id, "a-1", sizeof(m->id));
		m->receipt = "{\"attempt\":\"a-1\",\"facts\":{\"x\":\"\\n\"}}";
		m->vsa = "{\"payload\":\"e30=\"}";
		m->test_result = "{\"payload\":\"e30=\"}";
		m->accepted = 0;
		strlcpy(m->baseline, HEX40, sizeof(m->baseline));
		strlcpy(m->commit, HEX40, sizeof(m->commit));
		strlcpy(m->tree, HEX40, sizeof(m->tree));
		strlcpy(m->bundle_sha256, HEX64, sizeof(m->bundle_sha256));
		strlcpy(m->manifest_digest, "sha256:" HEX64,
		    sizeof(m->manifest_digest));
		m->findings = verdict_findings;
		m->nfindings = 1;
		m->findings_total = 2;
		m->validated = 1;
		m->vstatus = 256;
		strlcpy(m->env_image, "sha256:" HEX64, sizeof(m->env_image));
		strlcpy(m->baseline_tree, HEX40, sizeof(m->baseline_tree));
		strlcpy(m->pristine, "same", sizeof(m->pristine));
		m->reason = verdict_findings[0];
		m->epoch = 1;
		m->time = 1;
		strlcpy(m->sig, "AAAA", sizeof(m->sig));
		break;
	}
	case MSG_PUBLISH: {
		struct msg_publish *m = st;
		strlcpy(m->id, "a-1", sizeof(m->id));
		strlcpy(m->forge, "github", sizeof(m->forge));
		strlcpy(m->repository, "demo", sizeof(m->repository));
		strlcpy(m->title, "t", sizeof(m->title));
		strlcpy(m->base, "main", sizeof(m->base));
		strlcpy(m->commit, HEX40, sizeof(m->commit));
		m->verdict = "{}";
		strlcpy(m->verifier_pub, "AAAA", sizeof(m->verifier_pub));
		strlcpy(m->manifest_digest, "sha256:" HEX64,
		    sizeof(m->manifest_digest));
		m->attest = attest;
		m->nattest = 2;
		m->summary = "Attempt a-1, verdict: accepted.\n";
		strlcpy(m->cohort, "c-20261203-0001", sizeof(m->cohort));
		m->supersede = superseded;
		m->nsupersede = 2;
		m->has_github = 1;
		strlcpy(m->github.api, "https://api.github.com",
		    sizeof(m->github.api));
		strlcpy(m->github.owner, "o", sizeof(m->github.owner));
		strlcpy(m->github.repo, "r", sizeof(m->github.repo));
		m->github.repository_id = 9;
		strlcpy(m->github.app_id, "123", sizeof(m->github.app_id));
		m->github.installation_id = 10;
		strlcpy(m->github.key, "/k", sizeof(m->github.key));
		strlcpy(m->github.ca, "/ca", sizeof(m->github.ca));
		m->begin_by = 86400000;
		break;
	}
	case MSG_PUBLISHED: {
		struct msg_published *m = st;
		strlcpy(m->id, "a-1", sizeof(m->id));
		strlcpy(m->branch, "factory/a-1", sizeof(m->branch));
		m->number = 3;
		strlcpy(m->record, "/p/a-1.json", sizeof(m->record));
		m->reused = 1;
		break;
	}
	case MSG_DIFF: {
		struct msg_diff *m = st;
		m->req = 9;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		strlcpy(m->dir, "/var/lib/factory/attempts/a-1", sizeof(m->dir));
		strlcpy(m->baseline, HEX40, sizeof(m->baseline));
		strlcpy(m->commit, HEX40, sizeof(m->commit));
		break;
	}
	case MSG_DIFFED: {
		struct msg_diffed *m = st;
		m->req = 9;
		m->patch = "--- a/README.md\\x0a+++ b/README.md\\x0a+\\xff";
		m->bytes = 40;
		m->truncated = 1;
		break;
	}
	case MSG_PCHECK: {
		struct msg_pcheck *m = st;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		strlcpy(m->repo, "/r", sizeof(m->repo));
		strlcpy(m->baseline, HEX40, sizeof(m->baseline));
		break;
	}
	case MSG_PCHECKED: {
		struct msg_pchecked *m = st;
		strlcpy(m->id, "a-20261201-0001", sizeof(m->id));
		strlcpy(m->baseline, HEX40, sizeof(m->baseline));
		strlcpy(m->tree, HEX40, sizeof(m->tree));
		m->differs = 1;
		strlcpy(m->error, "check.sh: blob \\xff", sizeof(m->error));
		break;
	}
	default:
		ck_abort_msg("no fixture for kind %d", k);
	}
}

/*
 * The valid payload of a kind, as a JSON object; its layout on the
 * wire is exactly msg_encode's.
 */
static json_t *
valid_json(enum msg_kind k)
{
	char	 st[64 * 1024], err[MSG_ERRLEN], *s, *t;
	size_t	 len, tlen;
	json_t	*o;

	ck_assert_uint_le(msg_size(k), sizeof(st));
	fill(k, st);
	s = msg_encode(k, st, &len, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s: %s", msg_kind_name(k), err);
	o = msgjson_from_struct(k, st);
	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(t = msgjson_encode(k, o, &tlen));
	ck_assert_msg(tlen == len && memcmp(s, t, len) == 0,
	    "%s: msgjson lays it out otherwise", msg_kind_name(k));
	free(t);
	free(s);
	return (o);
}

/* Decode a JSON object laid out as a payload: the decoder's answer. */
static int
read_json(enum msg_kind k, json_t *o, char *err, size_t errlen)
{
	char	 st[64 * 1024], *s;
	size_t	 len;
	int	 rv;

	ck_assert_ptr_nonnull(s = msgjson_encode(k, o, &len));
	rv = msg_read(k, s, len, st, err, errlen);
	if (rv == 0)
		msg_free(k, st);
	free(s);
	return (rv);
}

static int
read_raw(enum msg_kind k, const char *s, size_t len)
{
	char	 st[64 * 1024], err[MSG_ERRLEN];
	int	 rv;

	rv = msg_read(k, s, len, st, err, sizeof(err));
	if (rv == 0)
		msg_free(k, st);
	return (rv);
}

/* A payload given as JSON text. */
static int
read_str(enum msg_kind k, const char *text)
{
	char	*s;
	size_t	 len;
	int	 rv;

	ck_assert_ptr_nonnull(s = msgjson_encode_text(k, text, &len));
	rv = read_raw(k, s, len);
	free(s);
	return (rv);
}

START_TEST(test_round_trip)
{
	enum msg_kind	 k = _i;
	char		 a[64 * 1024], b[64 * 1024], err[MSG_ERRLEN], *s, *s2;
	size_t		 len, len2;

	fill(k, a);
	ck_assert_ptr_nonnull(s = msg_encode(k, a, &len, err, sizeof(err)));
	ck_assert_msg(msg_read(k, s, len, b, err, sizeof(err)) == 0, "%s: %s",
	    msg_kind_name(k), err);
	/* What was read encodes to the same bytes. */
	ck_assert_ptr_nonnull(s2 = msg_encode(k, b, &len2, err, sizeof(err)));
	ck_assert(len == len2 && memcmp(s, s2, len) == 0);
	msg_free(k, b);
	free(s);
	free(s2);
}
END_TEST

START_TEST(test_missing_field)
{
	enum msg_kind	 k = _i;
	json_t		*o = valid_json(k), *c;
	const char	*key;
	json_t		*v;
	char		 err[MSG_ERRLEN];

	json_object_foreach(o, key, v) {
		c = json_deep_copy(o);
		json_object_del(c, key);
		/* RESOLVE's answer, PUBLISH's github, the attestations. */
		if ((k == MSG_RESOLVED && strcmp(key, "oid") == 0)) {
			ck_assert_int_eq(read_json(k, c, err, sizeof(err)),
			    -1);	/* then neither oid nor error */
		} else if (k == MSG_PCHECKED && strcmp(key, "error") == 0) {
			ck_assert_int_eq(read_json(k, c, err, sizeof(err)),
			    -1);	/* not the same, and no why */
		} else if (k == MSG_PCHECKED && strcmp(key, "tree") == 0) {
			ck_assert_int_eq(read_json(k, c, err, sizeof(err)),
			    0);		/* differs: the tree if it was found */
		} else if (k == MSG_PUBLISH && strcmp(key, "github") == 0) {
			ck_assert_int_eq(read_json(k, c, err, sizeof(err)),
			    -1);	/* forge github needs it */
		} else if (strcmp(key, "provenance") == 0 ||
		    strcmp(key, "isolation") == 0 || strcmp(key, "vsa") == 0 ||
		    strcmp(key, "test_result") == 0 ||
		    strcmp(key, "attest") == 0 || strcmp(key, "summary") == 0 ||
		    strcmp(key, "supersede") == 0 ||
		    strcmp(key, "reason") == 0) {
			/*
			 * Attestations are optional: the checks are above.
			 * So is an accepted verdict's reason.
			 */
			ck_assert_msg(read_json(k, c, err, sizeof(err)) == 0,
			    "%s without %s: %s", msg_kind_name(k), key, err);
		} else {
			ck_assert_msg(read_json(k, c, err, sizeof(err)) == -1,
			    "%s without %s accepted", msg_kind_name(k), key);
			ck_assert_msg(strstr(err, key) != NULL, "%s: %s",
			    key, err);
		}
		json_decref(c);
	}
	json_decref(o);
}
END_TEST

START_TEST(test_extra_field)
{
	enum msg_kind	 k = _i;
	json_t		*o = valid_json(k);
	char		 err[MSG_ERRLEN];

	json_object_set_new(o, "extra", json_string("x"));
	ck_assert_int_eq(read_json(k, o, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "5 bytes left over") != NULL, "%s", err);
	json_decref(o);
}
END_TEST

/* Something of another JSON type than v. */
static json_t *
other_type(json_t *v)
{
	if (json_is_string(v))
		return (json_integer(1));
	if (json_is_integer(v))
		return (json_string("1"));
	if (json_is_boolean(v))
		return (json_integer(1));
	if (json_is_array(v))
		return (json_object());
	if (json_is_object(v))
		return (json_array());
	return (json_null());
}

START_TEST(test_wrong_type)
{
	enum msg_kind	 k = _i;
	json_t		*o = valid_json(k), *c, *v, *e;
	const char	*key;
	char		 err[MSG_ERRLEN];

	json_object_foreach(o, key, v) {
		c = json_deep_copy(o);
		json_object_set_new(c, key, other_type(v));
		ck_assert_msg(read_json(k, c, err, sizeof(err)) == -1,
		    "%s.%s of another type accepted", msg_kind_name(k), key);
		json_object_set_new(c, key, json_null());
		ck_assert_int_eq(read_json(k, c, err, sizeof(err)), -1);
		json_object_set_new(c, key, json_real(1.0));
		ck_assert_int_eq(read_json(k, c, err, sizeof(err)), -1);
		/* An entry of a list of the wrong type. */
		if (json_is_array(v) && json_array_size(v) > 0) {
			e = json_deep_copy(v);
			json_array_set_new(e, 0, other_type(json_array_get(v,
			    0)));
			json_object_set_new(c, key, e);
			ck_assert_msg(read_json(k, c, err, sizeof(err)) == -1,
			    "%s.%s[0] of another type accepted",
			    msg_kind_name(k), key);
		}
		json_decref(c);
	}
	json_decref(o);
}
END_TEST

START_TEST(test_trailing_bytes)
{
	enum msg_kind	 k = _i;
	char		 st[64 * 1024], err[MSG_ERRLEN], *s, *t;
	size_t		 len, n;

	fill(k, st);
	ck_assert_ptr_nonnull(s = msg_encode(k, st, &len, err, sizeof(err)));
	ck_assert_int_eq(read_raw(k, s, len), 0);
	/* Cut anywhere: refused, naming a field (or the kind). */
	for (n = 0; n < len; n++) {
		ck_assert_msg(msg_read(k, s, n, st, err, sizeof(err)) == -1,
		    "%s cut at %zu of %zu accepted", msg_kind_name(k), n, len);
		ck_assert_msg(strstr(err, "field ") != NULL &&
		    strstr(err, "truncated") != NULL, "%s", err);
	}
	/* One byte more, or eight. */
	ck_assert_ptr_nonnull(t = calloc(1, len + 8));
	memcpy(t, s, len);
	ck_assert_int_eq(msg_read(k, t, len + 1, st, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "1 bytes left over") != NULL, "%s", err);
	ck_assert_int_eq(read_raw(k, t, len + 8), -1);
	/* Another kind's byte. */
	t[0] = (char)((k + 1) % MSG_KIND_MAX);
	ck_assert_int_eq(msg_read(k, t, len, st, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "on the wire") != NULL, "%s", err);
	t[0] = (char)0xff;
	ck_assert_int_eq(read_raw(k, t, len), -1);
	ck_assert_int_eq(read_raw(k, "", 0), -1);
	free(t);
	free(s);
}
END_TEST

/* A string with a NUL among its bytes, in every string field. */
START_TEST(test_nul)
{
	enum msg_kind	 k = _i;
	json_t		*o = valid_json(k), *c, *v;
	const char	*key;
	char		 err[MSG_ERRLEN];
	int		 n = 0;

	json_object_foreach(o, key, v) {
		if (!json_is_string(v))
			continue;
		c = json_deep_copy(o);
		json_object_set_new(c, key, json_stringn("a\0b", 3));
		ck_assert_int_eq(read_json(k, c, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, "NUL in the string") != NULL,
		    "%s.%s: %s", msg_kind_name(k), key, err);
		json_decref(c);
		n++;
	}
	ck_assert_int_gt(n, 0);
	json_decref(o);
}
END_TEST

START_TEST(test_oversized)
{
	enum msg_kind	 k = _i;
	json_t		*o = valid_json(k), *c, *v;
	const char	*key;
	char		*big, err[MSG_ERRLEN];
	size_t		 n = FACTORY_MAXIMSG + 16;

	ck_assert_ptr_nonnull(big = malloc(n + 1));
	memset(big, 'a', n);
	big[n] = '\0';
	json_object_foreach(o, key, v) {
		if (!json_is_string(v))
			continue;
		c = json_deep_copy(o);
		json_object_set_new(c, key, json_string(big));
		ck_assert_msg(read_json(k, c, err, sizeof(err)) == -1,
		    "%s.%s of %zu bytes accepted", msg_kind_name(k), key, n);
		json_decref(c);
	}
	json_decref(o);
	free(big);
}
END_TEST

/* A field value that must be refused: kind, key, JSON text. */
static void
refuse(enum msg_kind k, const char *key, const char *text)
{
	json_t	*o = valid_json(k), *v;
	char	 err[MSG_ERRLEN];

	ck_assert_ptr_nonnull(v = json_loads(text, JSON_DECODE_ANY, NULL));
	json_object_set_new(o, key, v);
	ck_assert_msg(read_json(k, o, err, sizeof(err)) == -1,
	    "%s.%s = %s accepted", msg_kind_name(k), key, text);
	json_decref(o);
}

static void
accept(enum msg_kind k, const char *key, const char *text)
{
	json_t	*o = valid_json(k), *v;
	char	 err[MSG_ERRLEN];

	ck_assert_ptr_nonnull(v = json_loads(text, JSON_DECODE_ANY, NULL));
	json_object_set_new(o, key, v);
	ck_assert_msg(read_json(k, o, err, sizeof(err)) == 0,
	    "%s.%s = %s refused: %s", msg_kind_name(k), key, text, err);
	json_decref(o);
}

START_TEST(test_classes)
{
	/* Attempt ids. */
	refuse(MSG_READY, "id", "\"\"");
	refuse(MSG_READY, "id", "\"../a\"");
	refuse(MSG_READY, "id", "\"a/b\"");
	refuse(MSG_READY, "id", "\"-a\"");
	refuse(MSG_READY, "id", "\"a\\nb\"");
	refuse(MSG_READY, "id", "\"a-2026120100000000000000000000000001\"");
	accept(MSG_READY, "id", "\"a-20261201-0001\"");
	/* Hex. */
	refuse(MSG_RESOLVED, "oid",
	    "\"0123456789ABCDEF0123456789abcdef01234567\"");
	refuse(MSG_RESOLVED, "oid", "\"0123\"");
	refuse(MSG_RESULT, "commit", "\"0123\"");
	refuse(MSG_VERIFY, "prev", "\"" HEX40 "\"");
	refuse(MSG_VERIFY, "digest", "\"sha256:" HEX40 "\"");
	/* The environment: an image comes with its rootfs, and the reverse. */
	refuse(MSG_VERIFY, "image", "\"sha256:" HEX64 "\"");
	refuse(MSG_VERIFY, "rootfs", "\"/s/images/sha256/x/rootfs\"");
	refuse(MSG_VERIFY, "image", "\"" HEX64 "\"");
	refuse(MSG_VERIFY, "toolchain", "\"sha256:" HEX64 "\"");
	refuse(MSG_VERIFY, "tools", "[\"/usr/bin/cc\"]");
	refuse(MSG_VERIFY, "tools", "[\"usr/bin/cc\"]");
	/* Escaped strings: printable ASCII in the one encoding. */
	refuse(MSG_ERROR, "error", "\"a\\nb\"");
	refuse(MSG_ERROR, "error", "\"caf\\u00e9\"");
	refuse(MSG_ERROR, "error", "\"\\\\x41\\\\\"");
	refuse(MSG_ERROR, "error", "\"\\u001b[2K\"");
	accept(MSG_ERROR, "error", "\"src/\\\\xff\\\\\\\\ ok\"");
	refuse(MSG_RESULT, "rejects", "[\"a\\u007f\"]");
	refuse(MSG_RESULT, "changes", "[{\"status\":\"A\",\"path\":\"\\n\"}]");
	refuse(MSG_RESULT, "changes", "[{\"status\":\"X\",\"path\":\"a\"}]");
	refuse(MSG_RESULT, "changes",
	    "[{\"status\":\"A\",\"path\":\"a\",\"x\":1}]");
	refuse(MSG_RESULT, "changes", "[{\"status\":\"A\"}]");
	refuse(MSG_PUBLISHED, "branch", "\"factory/\\u0007\"");
	refuse(MSG_VERDICT, "receipt", "\"{\\u00e9}\"");
	/* Envelopes are printable lines; digests are digests. */
	refuse(MSG_VERDICT, "vsa", "\"{\\n}\"");
	refuse(MSG_VERDICT, "test_result", "1");
	refuse(MSG_PUBLISH, "attest", "[\"{}\\n{}\"]");
	refuse(MSG_PUBLISH, "attest", "\"{}\"");
	refuse(MSG_VERIFY, "provenance", "\"" HEX64 "\"");
	refuse(MSG_VERIFY, "isolation", "\"sha256:\"");
	/* Paths from the parent are absolute. */
	refuse(MSG_PROVISION, "dir", "\"relative/dir\"");
	refuse(MSG_PROVISION, "lower", "\"relative/pristine\"");
	refuse(MSG_PROVISION, "pristine", "\"relative/pristine.tmp\"");
	refuse(MSG_PUBLISH, "forge", "\"gitlab\"");
	/* Numbers in range. */
	refuse(MSG_RESOLVE, "req", "0");
	refuse(MSG_RESOLVE, "req", "4294967296");
	refuse(MSG_READY, "epoch", "-1");
	accept(MSG_READY, "epoch", "0");	/* stale: the parent says so */
	refuse(MSG_PROVISION, "epoch", "0");
	refuse(MSG_PUBLISHED, "number", "0");
	refuse(MSG_RESULT, "bundle_size", "-1");
	/* All 64 bits set: out of range, not negative. */
	refuse(MSG_READY, "epoch", "-9223372036854775808");
	refuse(MSG_VERIFY, "wall_ms", "-1");
	refuse(MSG_VALIDATE_DONE, "passed", "1");
}
END_TEST

START_TEST(test_relations)
{
	struct msg_resolved	 r;
	struct msg_result	 res;
	struct msg_publish	 p;
	char			 err[MSG_ERRLEN];
	size_t			 len;

	/* Exactly one of oid and error. */
	fill(MSG_RESOLVED, &r);
	strlcpy(r.error, "no such ref", sizeof(r.error));
	ck_assert_ptr_null(msg_encode(MSG_RESOLVED, &r, &len, err,
	    sizeof(err)));
	r.oid[0] = '\0';
	free(msg_encode(MSG_RESOLVED, &r, &len, err, sizeof(err)));
	r.error[0] = '\0';
	ck_assert_ptr_null(msg_encode(MSG_RESOLVED, &r, &len, err,
	    sizeof(err)));
	ck_assert_int_eq(read_str(MSG_RESOLVED, "{\"req\":1}"), -1);
	ck_assert_int_eq(read_str(MSG_RESOLVED,
	    "{\"req\":1,\"oid\":\"" HEX40 "\",\"error\":\"x\"}"), -1);
	ck_assert_int_eq(read_str(MSG_RESOLVED,
	    "{\"req\":1,\"error\":\"x\"}"), 0);

	/* A pristine check: the same tree, named, or why not; not both. */
#define PC	"{\"id\":\"a-20261201-0001\",\"baseline\":\"" HEX40 "\","
	ck_assert_int_eq(read_str(MSG_PCHECKED, PC "\"tree\":\"" HEX40
	    "\",\"same\":true,\"differs\":false}"), 0);
	ck_assert_int_eq(read_str(MSG_PCHECKED, PC "\"same\":true,"
	    "\"differs\":false}"), -1);	/* the same as no tree */
	ck_assert_int_eq(read_str(MSG_PCHECKED, PC "\"tree\":\"" HEX40
	    "\",\"same\":true,\"differs\":true,\"error\":\"x\"}"), -1);
	ck_assert_int_eq(read_str(MSG_PCHECKED, PC "\"tree\":\"" HEX40
	    "\",\"same\":true,\"differs\":false,\"error\":\"x\"}"), -1);
	ck_assert_int_eq(read_str(MSG_PCHECKED, PC "\"same\":false,"
	    "\"differs\":false}"), -1);	/* not the same, no why */
	ck_assert_int_eq(read_str(MSG_PCHECKED, PC "\"same\":false,"
	    "\"differs\":true,\"error\":\"a\\\\x0a\"}"), 0);
#undef PC

	/* Totals never below what is listed; a reject counted is listed. */
	fill(MSG_RESULT, &res);
	res.changes_total = 1;
	ck_assert_ptr_null(msg_encode(MSG_RESULT, &res, &len, err,
	    sizeof(err)));
	fill(MSG_RESULT, &res);
	res.rejects_total = 3;
	ck_assert_ptr_null(msg_encode(MSG_RESULT, &res, &len, err,
	    sizeof(err)));
	res.rejects = rejects;
	res.nrejects = 1;
	free(msg_encode(MSG_RESULT, &res, &len, err, sizeof(err)));
	/* No reject: a commit, a tree and a bundle. */
	fill(MSG_RESULT, &res);
	res.commit[0] = '\0';
	ck_assert_ptr_null(msg_encode(MSG_RESULT, &res, &len, err,
	    sizeof(err)));
	refuse(MSG_RESULT, "rejects_total", "1");
	refuse(MSG_RESULT, "changes_total", "1");

	/* Forge github with its settings, local without. */
	fill(MSG_PUBLISH, &p);
	p.has_github = 0;
	ck_assert_ptr_null(msg_encode(MSG_PUBLISH, &p, &len, err,
	    sizeof(err)));
	strlcpy(p.forge, "local", sizeof(p.forge));
	free(msg_encode(MSG_PUBLISH, &p, &len, err, sizeof(err)));
	p.has_github = 1;
	ck_assert_ptr_null(msg_encode(MSG_PUBLISH, &p, &len, err,
	    sizeof(err)));
	refuse(MSG_PUBLISH, "github", "{\"api\":\"https://x\"}");

	/*
	 * A cohort's supersede list: never the attempt itself, never a
	 * name twice, never without its cohort; each entry exactly an
	 * attempt id and a commit; at most the others of a cohort.
	 */
	refuse(MSG_PUBLISH, "supersede", "[{\"id\":\"a-1\",\"commit\":\""
	    HEX40 "\"}]");
	refuse(MSG_PUBLISH, "supersede", "[{\"id\":\"a-2\",\"commit\":\""
	    HEX40 "\"},{\"id\":\"a-2\",\"commit\":\"" HEX40 "\"}]");
	refuse(MSG_PUBLISH, "supersede", "[{\"id\":\"../a\",\"commit\":\""
	    HEX40 "\"}]");
	refuse(MSG_PUBLISH, "supersede", "[{\"id\":\"a-2\",\"commit\":"
	    "\"main\"}]");
	refuse(MSG_PUBLISH, "supersede", "[{\"id\":\"a-2\"}]");
	refuse(MSG_PUBLISH, "supersede", "[{\"id\":\"a-2\",\"commit\":\""
	    HEX40 "\",\"x\":1}]");
	refuse(MSG_PUBLISH, "supersede", "[\"a-2\"]");
	refuse(MSG_PUBLISH, "supersede", "{\"id\":\"a-2\"}");
	refuse(MSG_PUBLISH, "cohort", "\"c/1\"");
	refuse(MSG_PUBLISH, "cohort", "\"\"");
	fill(MSG_PUBLISH, &p);
	p.cohort[0] = '\0';
	ck_assert_ptr_null(msg_encode(MSG_PUBLISH, &p, &len, err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "supersede without a cohort") != NULL,
	    "%s", err);
	fill(MSG_PUBLISH, &p);
	strlcpy(superseded[1].id, "a-1", sizeof(superseded[1].id));
	ck_assert_ptr_null(msg_encode(MSG_PUBLISH, &p, &len, err,
	    sizeof(err)));
	strlcpy(superseded[1].id, "a-20261203-0003", sizeof(superseded[1].id));
	/* A cohort without a list: its first selection. */
	fill(MSG_PUBLISH, &p);
	p.nsupersede = 0;
	free(msg_encode(MSG_PUBLISH, &p, &len, err, sizeof(err)));
}
END_TEST

/* At most COHORT_SUPERSEDE_MAX others, the largest cohort's. */
START_TEST(test_supersede_bound)
{
	json_t	*o = valid_json(MSG_PUBLISH), *a;
	char	 err[MSG_ERRLEN], id[32];
	int	 i, n;

	for (n = COHORT_SUPERSEDE_MAX; n <= COHORT_SUPERSEDE_MAX + 1; n++) {
		a = json_array();
		for (i = 0; i < n; i++) {
			snprintf(id, sizeof(id), "a-20261203-%04d", i + 10);
			json_array_append_new(a, json_pack("{s:s, s:s}", "id",
			    id, "commit", HEX40));
		}
		json_object_set_new(o, "supersede", a);
		ck_assert_int_eq(read_json(MSG_PUBLISH, o, err, sizeof(err)),
		    n == COHORT_SUPERSEDE_MAX ? 0 : -1);
	}
	ck_assert_msg(strstr(err, "supersede: more than") != NULL ||
	    strstr(err, "field supersede: more than") != NULL, "%s", err);
	json_decref(o);
}
END_TEST

/* The encoder refuses what the decoder would: never a silent drop. */
START_TEST(test_encode_refuses)
{
	struct msg_error	 e;
	struct msg_collect	 c;
	char			 err[MSG_ERRLEN], *bad[] = { "\xff", NULL };
	size_t			 len;

	fill(MSG_ERROR, &e);
	strlcpy(e.error, "raw \xff byte", sizeof(e.error));
	ck_assert_ptr_null(msg_encode(MSG_ERROR, &e, &len, err, sizeof(err)));
	ck_assert_msg(strstr(err, "error") != NULL, "%s", err);
	fill(MSG_COLLECT, &c);
	c.scope = bad;
	c.nscope = 1;
	ck_assert_ptr_null(msg_encode(MSG_COLLECT, &c, &len, err,
	    sizeof(err)));
	fill(MSG_COLLECT, &c);
	c.nscope = MSG_LIST_MAX + 1;
	ck_assert_ptr_null(msg_encode(MSG_COLLECT, &c, &len, err,
	    sizeof(err)));
	ck_assert_ptr_null(msg_encode(MSG_KIND_MAX, &c, &len, err,
	    sizeof(err)));
}
END_TEST

START_TEST(test_list_bound)
{
	json_t	*o = valid_json(MSG_COLLECT), *a;
	char	 err[MSG_ERRLEN];
	int	 i;

	a = json_array();
	for (i = 0; i < MSG_LIST_MAX + 1; i++)
		json_array_append_new(a, json_string("x"));
	json_object_set_new(o, "scope", a);
	ck_assert_int_eq(read_json(MSG_COLLECT, o, err, sizeof(err)), -1);
	json_decref(o);
}
END_TEST

START_TEST(test_hello)
{
	char	*t, *h, err[MSG_ERRLEN], big[MSG_HELLO_MAX + 1];

	ck_assert_ptr_nonnull(h = msg_hello_make("promises: stdio\n"
	    "unveil: /srv/caf\xc3\xa9 r\nlast"));
	ck_assert_str_eq(h, "promises: stdio\nunveil: /srv/caf\\xc3\\xa9 r\n"
	    "last");
	ck_assert_int_eq(msg_hello_read(h, strlen(h) + 1, &t, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(t, h);
	free(t);
	free(h);
	ck_assert_int_eq(msg_hello_read("a\tb", 4, &t, err, sizeof(err)), -1);
	ck_assert_int_eq(msg_hello_read("a\xff", 3, &t, err, sizeof(err)), -1);
	ck_assert_int_eq(msg_hello_read("ab", 2, &t, err, sizeof(err)), -1);
	ck_assert_int_eq(msg_hello_read("a\0b", 4, &t, err, sizeof(err)), -1);
	ck_assert_int_eq(msg_hello_read("", 1, &t, err, sizeof(err)), -1);
	ck_assert_int_eq(msg_hello_read("\\", 2, &t, err, sizeof(err)), -1);
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(msg_hello_read(big, sizeof(big), &t, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(msg_hello_read(big + 1, sizeof(big) - 1, &t, err,
	    sizeof(err)), 0);
	free(t);
}
END_TEST

/*
 * Random damage to a valid payload: the decoder never crashes, and
 * whatever it accepts encodes again, to bytes it accepts the same way.
 */
START_TEST(test_random_damage)
{
	enum msg_kind	 k = _i;
	char		 a[64 * 1024], b[64 * 1024], err[MSG_ERRLEN];
	char		*s, *buf, *e1, *e2;
	size_t		 len, n, l1, l2, j;
	int		 round;

	fill(k, a);
	ck_assert_ptr_nonnull(s = msg_encode(k, a, &len, err, sizeof(err)));
	ck_assert_ptr_nonnull(buf = malloc(len + 8));
	srandom(0xbad + k);
	for (round = 0; round < 3000; round++) {
		memcpy(buf, s, len);
		n = len;
		for (j = 0; j < 1 + (size_t)random() % 3 && n > 1; j++) {
			switch (random() % 4) {
			case 0:		/* a byte changed */
				buf[random() % (n - 1)] = (char)random();
				break;
			case 1:		/* a byte changed to a likely one */
				buf[random() % (n - 1)] =
				    "\"{}[],:0-9\\ux"[random() % 14];
				break;
			case 2:		/* cut short */
				n = 1 + (size_t)random() % n;
				buf[n - 1] = '\0';
				break;
			case 3:		/* a field dropped by its comma */
				buf[random() % (n - 1)] = ',';
				break;
			}
		}
		if (msg_read(k, buf, n, b, err, sizeof(err)) == -1)
			continue;
		e1 = msg_encode(k, b, &l1, err, sizeof(err));
		ck_assert_msg(e1 != NULL, "%s: accepted, not encodable: %s",
		    msg_kind_name(k), err);
		msg_free(k, b);
		ck_assert_int_eq(msg_read(k, e1, l1, b, err, sizeof(err)), 0);
		ck_assert_ptr_nonnull(e2 = msg_encode(k, b, &l2, err,
		    sizeof(err)));
		ck_assert(l1 == l2 && memcmp(e1, e2, l1) == 0);
		msg_free(k, b);
		free(e1);
		free(e2);
	}
	free(buf);
	free(s);
}
END_TEST

static Suite *
msg_suite(void)
{
	Suite	*s = suite_create("msg");
	TCase	*tc = tcase_create("msg");

	tcase_add_loop_test(tc, test_round_trip, 0, MSG_KIND_MAX);
	tcase_add_loop_test(tc, test_missing_field, 0, MSG_KIND_MAX);
	tcase_add_loop_test(tc, test_extra_field, 0, MSG_KIND_MAX);
	tcase_add_loop_test(tc, test_wrong_type, 0, MSG_KIND_MAX);
	tcase_add_loop_test(tc, test_trailing_bytes, 0, MSG_KIND_MAX);
	tcase_add_loop_test(tc, test_nul, 0, MSG_KIND_MAX);
	tcase_add_loop_test(tc, test_oversized, 0, MSG_KIND_MAX);
	tcase_add_loop_test(tc, test_random_damage, 0, MSG_KIND_MAX);
	tcase_add_test(tc, test_classes);
	tcase_add_test(tc, test_relations);
	tcase_add_test(tc, test_encode_refuses);
	tcase_add_test(tc, test_list_bound);
	tcase_add_test(tc, test_supersede_bound);
	tcase_add_test(tc, test_hello);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(msg_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
