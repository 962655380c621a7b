/*
 * libcommon/fleetmsg.c against what a lying peer sends: each message
 * composed and decoded back field for field; every prefix of it, and
 * it with a byte more, refused; values out of range or of the wrong
 * shape refused by the composer and by the decoder.  Prints "ok - ..."
 * or "not ok - ..." lines; exits 1 if any failed.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleetmsg.h"
#include "wire.h"

typedef int	(*dec_fn)(struct imsg *, char *, size_t);

static int	 failed;

static void
result(int ok, const char *what, const char *detail)
{
	printf("%s - %s%s%s\n", ok ? "ok" : "not ok", what,
	    detail != NULL && *detail != '\0' ? ": " : "",
	    detail != NULL ? detail : "");
	if (!ok)
		failed = 1;
}

/* b's bytes as one message, read from ib. */
static struct imsg *
imsg_of(struct imsg *imsg, struct ibuf *ib, struct ibuf *b)
{
	memset(imsg, 0, sizeof(*imsg));
	ibuf_from_buffer(ib, ibuf_data(b), ibuf_size(b));
	imsg->buf = ib;
	imsg->hdr.len = IMSG_HEADER_SIZE + ibuf_size(b);
	return (imsg);
}

/* Decode len bytes of data as one message. */
static int
decode(dec_fn fn, const void *data, size_t len, char *err, size_t errlen)
{
	struct imsg	 imsg;
	struct ibuf	 ib;

	memset(&imsg, 0, sizeof(imsg));
	ibuf_from_buffer(&ib, (void *)data, len);
	imsg.buf = &ib;
	imsg.hdr.len = IMSG_HEADER_SIZE + len;
	return (fn(&imsg, err, errlen));
}

static int
dec_hello(struct imsg *m, char *e, size_t n)
{
	struct fleet_hello	 h;

	return (fleet_hello_decode(m, &h, e, n));
}

static int
dec_serves(struct imsg *m, char *e, size_t n)
{
	struct fleet_serves	 v;

	return (fleet_serves_decode(m, &v, e, n));
}

static int
dec_tenant(struct imsg *m, char *e, size_t n)
{
	struct fleet_tenant	 t;

	return (fleet_tenant_decode(m, &t, e, n));
}

static int
dec_submit(struct imsg *m, char *e, size_t n)
{
	struct fleet_submit	 s;
	int			 rc;

	rc = fleet_submit_decode(m, &s, e, n);
	free(s.manifest);
	return (rc);
}

static int
dec_write(struct imsg *m, char *e, size_t n)
{
	struct fleet_write	 w;
	int			 rc;

	if ((rc = fleet_write_decode(m, &w, e, n)) == 0)
		fleet_write_free(&w);
	return (rc);
}

static int
dec_adopt(struct imsg *m, char *e, size_t n)
{
	struct fleet_adopt	 a;
	int			 rc;

	if ((rc = fleet_adopt_decode(m, &a, e, n)) == 0)
		fleet_adopt_free(&a);
	return (rc);
}

static int
dec_ready(struct imsg *m, char *e, size_t n)
{
	struct fleet_ready	 r;

	return (fleet_ready_decode(m, &r, e, n));
}

static int
dec_claimed(struct imsg *m, char *e, size_t n)
{
	struct fleet_claimed	 c;
	int			 rc;

	rc = fleet_claimed_decode(m, &c, e, n);
	free(c.manifest);
	return (rc);
}

static int
dec_submitted(struct imsg *m, char *e, size_t n)
{
	struct fleet_submitted	 s;

	return (fleet_submitted_decode(m, &s, e, n));
}

static int
dec_result(struct imsg *m, char *e, size_t n)
{
	struct fleet_result	 r;

	return (fleet_result_decode(m, &r, e, n));
}

/* b decodes; no prefix of it does, nor it with a byte more. */
static void
strict(const char *name, struct ibuf *b, dec_fn fn)
{
	char	 what[128], err[256], *more;
	size_t	 len, i;
	int	 prefixes = 0;

	if (b == NULL) {
		snprintf(what, sizeof(what), "%s: composes", name);
		result(0, what, NULL);
		return;
	}
	len = ibuf_size(b);
	snprintf(what, sizeof(what), "%s: decodes what was composed", name);
	result(decode(fn, ibuf_data(b), len, err, sizeof(err)) == 0, what,
	    err);
	for (i = 0; i < len; i++)
		if (decode(fn, ibuf_data(b), i, err, sizeof(err)) == 0)
			prefixes++;
	snprintf(what, sizeof(what), "%s: every one of %zu prefixes refused",
	    name, len);
	result(prefixes == 0, what, NULL);
	if ((more = malloc(len + 1)) == NULL)
		abort();
	memcpy(more, ibuf_data(b), len);
	more[len] = 0;
	snprintf(what, sizeof(what), "%s: a byte more refused", name);
	result(decode(fn, more, len + 1, err, sizeof(err)) == -1 &&
	    strstr(err, "left over") != NULL, what, err);
	free(more);
	ibuf_free(b);
}

/* Raw bytes a composer would refuse: the decoder refuses them too. */
static void
refused(const char *what, struct ibuf *b, dec_fn fn, const char *want)
{
	char	 err[256] = "";

	result(b != NULL && decode(fn, ibuf_data(b), ibuf_size(b), err,
	    sizeof(err)) == -1 && strstr(err, want) != NULL, what, err);
	ibuf_free(b);
}

static struct ibuf *
raw(void)
{
	struct ibuf	*b;

	if ((b = ibuf_dynamic(64, FACTORY_MAXIMSG + 64)) == NULL)
		abort();
	return (b);
}

static const char digest[] = "sha256:"
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void
roundtrips(void)
{
	struct fleet_hello	 h, h2;
	struct fleet_serves	 v, v2;
	struct imsg		 imsg;
	struct ibuf		 ib;
	struct fleet_claimed	 c, c2;
	struct fleet_tenant	 t;
	struct fleet_submit	 s;
	struct fleet_write	 w;
	struct fleet_ready	 r;
	struct fleet_submitted	 sd;
	struct fleet_result	 rs;
	struct ibuf		*b;
	char			 err[256];
	int			 same;

	memset(&h, 0, sizeof(h));
	strlcpy(h.conninfo, "host=/run/postgresql dbname=fleet", sizeof(h.conninfo));
	strlcpy(h.host, "host-1", sizeof(h.host));
	h.epoch = 41;
	h.slots = 4;
	h.lease_ms = 30000;
	h.deadline_ms = 5000;
	h.nrepos = 2;
	strlcpy(h.repos[0], "demo", sizeof(h.repos[0]));
	strlcpy(h.repos[1], "greeter", sizeof(h.repos[1]));
	b = fleet_hello_compose(&h);
	same = b != NULL && fleet_hello_decode(imsg_of(&imsg, &ib, b), &h2,
	    err, sizeof(err)) == 0 && memcmp(&h, &h2, sizeof(h)) == 0;
	result(same, "HELLO: every field back as it was", NULL);
	strict("HELLO", b, dec_hello);

	/* What a host serves after a reload: its repositories and forges. */
	memset(&v, 0, sizeof(v));
	v.nrepos = 3;
	strlcpy(v.repos[0], "demo", sizeof(v.repos[0]));
	strlcpy(v.repos[1], "greeter", sizeof(v.repos[1]));
	strlcpy(v.repos[2], "nfs", sizeof(v.repos[2]));
	strlcpy(v.forges[0], digest + 7, sizeof(v.forges[0]));
	strlcpy(v.forges[2], digest + 7, sizeof(v.forges[2]));
	b = fleet_serves_compose(&v);
	same = b != NULL && fleet_serves_decode(imsg_of(&imsg, &ib, b), &v2,
	    err, sizeof(err)) == 0 && memcmp(&v, &v2, sizeof(v)) == 0;
	result(same, "SERVES: every field back as it was", err);
	strict("SERVES", b, dec_serves);
	strlcpy(v.forges[1], "not-a-key", sizeof(v.forges[1]));
	result(fleet_serves_compose(&v) == NULL,
	    "SERVES: a forge that is not a key does not compose", NULL);

	memset(&t, 0, sizeof(t));
	strlcpy(t.name, "team-a", sizeof(t.name));
	t.weight = 2;
	t.max_running = 8;
	t.max_queued = 100;
	t.paused = 1;
	strict("TENANT", fleet_tenant_compose(&t), dec_tenant);

	memset(&s, 0, sizeof(s));
	strlcpy(s.tenant, "team-a", sizeof(s.tenant));
	s.class = FLEET_URGENT;
	strlcpy(s.repo, "demo", sizeof(s.repo));
	strlcpy(s.key, "key-1", sizeof(s.key));
	strlcpy(s.digest, digest, sizeof(s.digest));
	s.max_claims = 3;
	s.manifest = "argv: [true]\n";
	strict("SUBMIT", fleet_submit_compose(&s), dec_submit);

	memset(&w, 0, sizeof(w));
	strlcpy(w.id, "a-20261206-f12", sizeof(w.id));
	w.epoch = 7;
	w.from = FLEET_RUNNING;
	w.to = FLEET_DONE;
	strlcpy(w.reason, "validation passed", sizeof(w.reason));
	strict("WRITE", fleet_write_compose(&w), dec_write);

	memset(&r, 0, sizeof(r));
	r.epoch = 42;
	r.schema = 1;
	r.state = FLEET_CORDONED;
	strict("READY", fleet_ready_compose(&r), dec_ready);

	memset(&c, 0, sizeof(c));
	strlcpy(c.id, "a-20261206-f12", sizeof(c.id));
	strlcpy(c.tenant, "team-a", sizeof(c.tenant));
	c.class = FLEET_BATCH;
	strlcpy(c.repo, "demo", sizeof(c.repo));
	c.epoch = 3;
	c.claims = 2;
	strlcpy(c.digest, digest, sizeof(c.digest));
	c.manifest = "argv: [true]\n";
	b = fleet_claimed_compose(&c);
	same = 0;
	if (b != NULL) {
		same = fleet_claimed_decode(imsg_of(&imsg, &ib, b), &c2, err,
		    sizeof(err)) == 0 &&
		    strcmp(c2.id, c.id) == 0 && strcmp(c2.tenant, c.tenant) == 0 &&
		    c2.class == c.class && c2.epoch == c.epoch &&
		    c2.claims == c.claims && strcmp(c2.digest, c.digest) == 0 &&
		    strcmp(c2.manifest, c.manifest) == 0;
		free(c2.manifest);
	}
	result(same, "CLAIMED: every field back as it was", err);
	strict("CLAIMED", b, dec_claimed);

	memset(&sd, 0, sizeof(sd));
	strlcpy(sd.id, "a-20261206-f12", sizeof(sd.id));
	sd.created = 1;
	strict("SUBMITTED", fleet_submitted_compose(&sd), dec_submitted);

	memset(&rs, 0, sizeof(rs));
	rs.code = FLEET_SUPERSEDED;
	strict("RESULT", fleet_result_compose(&rs), dec_result);
}

static void
lies(void)
{
	struct fleet_claimed	 c;
	struct fleet_write	 w;
	struct ibuf		*b;
	char			*big;

	memset(&w, 0, sizeof(w));
	strlcpy(w.id, "a-BAD ID", sizeof(w.id));
	result(fleet_write_compose(&w) == NULL,
	    "WRITE: an id of the wrong shape does not compose", NULL);
	memset(&c, 0, sizeof(c));
	result(fleet_claimed_compose(&c) == NULL,
	    "CLAIMED: an empty claim does not compose", NULL);

	b = raw();
	m_add_str(b, "a-BAD ID");
	ibuf_add_n8(b, 1);
	refused("CLAIMED: an id of the wrong shape refused", b, dec_claimed,
	    "field id");
	b = raw();
	m_add_str(b, "a-1");
	m_add_str(b, "team a");
	refused("CLAIMED: a tenant with a space refused", b, dec_claimed,
	    "field tenant");
	b = raw();
	m_add_str(b, "a-1");
	m_add_str(b, "t");
	ibuf_add_n8(b, FLEET_NCLASSES);
	refused("CLAIMED: a class out of range refused", b, dec_claimed,
	    "field class");
	b = raw();
	m_add_str(b, "a-1");
	m_add_str(b, "t");
	ibuf_add_n8(b, 0);
	m_add_str(b, "demo");
	ibuf_add_n64(b, 0);
	refused("CLAIMED: claim epoch 0 refused", b, dec_claimed, "field epoch");
	b = raw();
	m_add_str(b, "a-1");
	m_add_str(b, "t");
	ibuf_add_n8(b, 0);
	m_add_str(b, "demo");
	ibuf_add_n64(b, 1);
	ibuf_add_n32(b, 1);
	m_add_str(b, "sha256:00");
	refused("CLAIMED: a digest of the wrong shape refused", b, dec_claimed,
	    "field digest");
	if ((big = malloc(FLEET_MANIFEST_MAX + 2)) == NULL)
		abort();
	memset(big, 'x', FLEET_MANIFEST_MAX + 1);
	big[FLEET_MANIFEST_MAX + 1] = '\0';
	b = raw();
	m_add_str(b, "a-1");
	m_add_str(b, "t");
	ibuf_add_n8(b, 0);
	m_add_str(b, "demo");
	ibuf_add_n64(b, 1);
	ibuf_add_n32(b, 1);
	m_add_str(b, digest);
	m_add_str(b, big);
	refused("CLAIMED: a manifest over its bound refused", b, dec_claimed,
	    "longer than");
	free(big);
	b = raw();
	ibuf_add_n32(b, 3);
	ibuf_add(b, "a\0b", 3);
	refused("SUBMITTED: a NUL inside a string refused", b, dec_submitted,
	    "NUL");
	b = raw();
	ibuf_add_n8(b, FLEET_NCODES);
	m_add_str(b, "");
	refused("RESULT: a code out of range refused", b, dec_result,
	    "field code");
	b = raw();
	ibuf_add_n8(b, FLEET_ERROR);
	m_add_str(b, "a\033[2Jclear");
	refused("RESULT: a text with a control character refused", b,
	    dec_result, "field text");
	b = raw();
	ibuf_add_n64(b, 5);
	ibuf_add_n32(b, 1);
	ibuf_add_n8(b, FLEET_NHSTATES);
	refused("READY: a host state out of range refused", b, dec_ready,
	    "field state");
	b = raw();
	m_add_str(b, "a-1");
	ibuf_add_n64(b, 1);
	ibuf_add_n8(b, FLEET_RUNNING);
	ibuf_add_n8(b, 200);
	m_add_str(b, "");
	refused("WRITE: a state out of range refused", b, dec_write,
	    "field to");
	b = raw();
	m_add_str(b, "host=x");
	m_add_str(b, "h");
	ibuf_add_n64(b, 0);
	ibuf_add_n32(b, 1);
	ibuf_add_n32(b, 1000);
	ibuf_add_n32(b, 1000);
	ibuf_add_n32(b, FLEET_REPOS_MAX + 1);
	refused("HELLO: more repositories than the bound refused", b,
	    dec_hello, "field nrepos");
	result(fleet_transition_ok(FLEET_CLAIMED, FLEET_RUNNING) &&
	    fleet_transition_ok(FLEET_RUNNING, FLEET_QUEUED) &&
	    !fleet_transition_ok(FLEET_PUBLISHING, FLEET_QUEUED) &&
	    !fleet_transition_ok(FLEET_DONE, FLEET_RUNNING) &&
	    !fleet_transition_ok(FLEET_QUEUED, FLEET_CLAIMED),
	    "outcomes: forward only; publishing never back to the queue",
	    NULL);
}

static const char commit40[] = "0123456789abcdef0123456789abcdef01234567";

/* A write's bytes up to its pin: the publishing mark's shape. */
static const char forge64[] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static struct ibuf *
raw_write(int to, const char *commit, const char *pin)
{
	struct ibuf	*b;
	int		 i;

	if ((b = ibuf_dynamic(64, FACTORY_MAXIMSG + 64)) == NULL)
		abort();
	m_add_str(b, "a-20261206-f12");
	ibuf_add_n64(b, 7);
	ibuf_add_n8(b, FLEET_CLAIMED);
	ibuf_add_n8(b, to);
	m_add_str(b, "publishing");
	for (i = 0; i < 5; i++)
		ibuf_add_n64(b, 0);
	m_add_str(b, commit);
	m_add_str(b, pin);
	m_add_str(b, pin[0] != '\0' ? forge64 : "");
	return (b);
}

/*
 * A pin and a manifest each within its bound but together more than
 * one answer holds: neither composed nor taken; one byte less is both.
 */
static void
adopt_bounds(void)
{
	struct fleet_adopt	 a;
	struct ibuf		*b;
	char			*pin, *man, err[256] = "";
	size_t			 plen = FLEET_PIN_MAX - 4, mlen;

	/* The most a manifest beside the longest pin may be. */
	for (mlen = FLEET_MANIFEST_MAX; mlen > 0 &&
	    !fleet_adopt_fits(plen, mlen); mlen--)
		;
	if ((pin = malloc(plen + 1)) == NULL ||
	    (man = malloc(mlen + 2)) == NULL)
		abort();
	memset(pin, 'A', plen);
	pin[plen] = '\0';
	memset(man, '#', mlen + 1);
	man[mlen + 1] = '\0';
	memset(&a, 0, sizeof(a));
	strlcpy(a.id, "a-20261206-f12", sizeof(a.id));
	a.epoch = 8;
	strlcpy(a.host, "h1", sizeof(a.host));
	strlcpy(a.commit, commit40, sizeof(a.commit));
	a.pin = pin;
	a.manifest = man;
	result(mlen > 0 && mlen < FLEET_MANIFEST_MAX &&
	    fleet_adopt_compose(&a) == NULL,
	    "ADOPTED: a pin and a manifest too long together do not compose",
	    NULL);
	b = raw();
	m_add_str(b, a.id);
	ibuf_add_n64(b, 8);
	m_add_str(b, "h1");
	m_add_str(b, commit40);
	m_add_str(b, pin);
	m_add_str(b, man);
	refused("ADOPTED: a pin and a manifest too long together refused", b,
	    dec_adopt, "more than an answer holds");
	man[mlen] = '\0';
	b = fleet_adopt_compose(&a);
	result(b != NULL && ibuf_size(b) <= FACTORY_MAXIMSG - IMSG_HEADER_SIZE &&
	    decode(dec_adopt, ibuf_data(b), ibuf_size(b), err,
	    sizeof(err)) == 0, "ADOPTED: one byte less composes, fits an "
	    "imsg and decodes", err);
	ibuf_free(b);
	free(pin);
	free(man);
}

/* The pin and the adoption: round trips, and what is refused. */
static void
pins(void)
{
	struct fleet_write	 w, w2;
	struct fleet_adopt	 a, a2;
	struct ibuf		*b;
	char			 err[256] = "";
	int			 same = 0;

	memset(&w, 0, sizeof(w));
	strlcpy(w.id, "a-20261206-f12", sizeof(w.id));
	w.epoch = 7;
	w.from = FLEET_CLAIMED;
	w.to = FLEET_PUBLISHING;
	strlcpy(w.reason, "publishing", sizeof(w.reason));
	strlcpy(w.commit, commit40, sizeof(w.commit));
	w.pin = "QUJDRA==";
	strlcpy(w.forge, forge64, sizeof(w.forge));
	if ((b = fleet_write_compose(&w)) != NULL) {
		struct imsg	 imsg;
		struct ibuf	 ib;

		memset(&imsg, 0, sizeof(imsg));
		ibuf_from_buffer(&ib, ibuf_data(b), ibuf_size(b));
		imsg.buf = &ib;
		if (fleet_write_decode(&imsg, &w2, err, sizeof(err)) == 0) {
			same = strcmp(w2.commit, w.commit) == 0 &&
			    w2.pin != NULL && strcmp(w2.pin, w.pin) == 0 &&
			    strcmp(w2.forge, w.forge) == 0;
			fleet_write_free(&w2);
		}
	}
	result(same, "WRITE: the pin back as it was", err);
	strict("WRITE (the publishing mark's pin)", b, dec_write);
	w.to = FLEET_DONE;
	result(fleet_write_compose(&w) == NULL,
	    "WRITE: a pin on a write to done does not compose", NULL);
	w.to = FLEET_PUBLISHING;
	w.forge[0] = '\0';
	result(fleet_write_compose(&w) == NULL,
	    "WRITE: a pin without its forge does not compose", NULL);
	strlcpy(w.forge, forge64, sizeof(w.forge));
	w.commit[0] = '\0';
	result(fleet_write_compose(&w) == NULL,
	    "WRITE: a pin without its commit does not compose", NULL);
	refused("WRITE: a pin on a write to done refused",
	    raw_write(FLEET_DONE, commit40, "QUJD"), dec_write,
	    "a pin of a write to done");
	refused("WRITE: a pin that is not base64 refused",
	    raw_write(FLEET_PUBLISHING, commit40, "QU JD"), dec_write,
	    "field pin");
	refused("WRITE: a pin without its commit refused",
	    raw_write(FLEET_PUBLISHING, "", "QUJD"), dec_write,
	    "without its commit");
	refused("WRITE: a commit not 40 hex refused",
	    raw_write(FLEET_PUBLISHING, "0123", "QUJD"), dec_write,
	    "field commit");

	memset(&a, 0, sizeof(a));
	strlcpy(a.id, "a-20261206-f12", sizeof(a.id));
	a.epoch = 8;
	strlcpy(a.host, "h1", sizeof(a.host));
	strlcpy(a.commit, commit40, sizeof(a.commit));
	a.pin = "QUJDRA==";
	a.manifest = "repository: r\ntitle: t\n";
	same = 0;
	if ((b = fleet_adopt_compose(&a)) != NULL) {
		struct imsg	 imsg;
		struct ibuf	 ib;

		memset(&imsg, 0, sizeof(imsg));
		ibuf_from_buffer(&ib, ibuf_data(b), ibuf_size(b));
		imsg.buf = &ib;
		if (fleet_adopt_decode(&imsg, &a2, err, sizeof(err)) == 0) {
			same = strcmp(a2.id, a.id) == 0 &&
			    a2.epoch == a.epoch &&
			    strcmp(a2.host, a.host) == 0 &&
			    strcmp(a2.commit, a.commit) == 0 &&
			    strcmp(a2.pin, a.pin) == 0 &&
			    strcmp(a2.manifest, a.manifest) == 0;
			fleet_adopt_free(&a2);
		}
	}
	result(same, "ADOPTED: every field back as it was", err);
	strict("ADOPTED", b, dec_adopt);
	a.manifest = NULL;
	result(fleet_adopt_compose(&a) == NULL,
	    "ADOPTED: one without its manifest does not compose", NULL);
	a.manifest = "repository: r\n";
	a.pin = "";
	result(fleet_adopt_compose(&a) == NULL,
	    "ADOPTED: one without its pinned request does not compose", NULL);
	b = raw();
	m_add_str(b, "a-20261206-f12");
	ibuf_add_n64(b, 8);
	m_add_str(b, "h1");
	m_add_str(b, commit40);
	m_add_str(b, "");
	m_add_str(b, "repository: r\n");
	refused("ADOPTED: an empty pin refused", b, dec_adopt, "field pin");
	b = raw();
	m_add_str(b, "a-20261206-f12");
	ibuf_add_n64(b, 8);
	m_add_str(b, "h1");
	m_add_str(b, commit40);
	m_add_str(b, "QUJDRA==");
	refused("ADOPTED: one without its manifest refused", b, dec_adopt,
	    "field manifest");
	adopt_bounds();
}

int
main(void)
{
	roundtrips();
	lies();
	pins();
	return (failed);
}
