/*
 * A fleet's adoption as the parent takes it (supervisord-factory/
 * adopt.c, linked alone): the database's answer, its pin and manifest,
 * turned into the publisher's request, or refused with a reason.  The
 * database is no one's word: the title and base are the manifest's,
 * the request vouches for that manifest's digest (which the publisher
 * holds to the signed verdict's: test_publish), and a pin of another
 * verifier key, another manifest or a manifest that does not parse
 * is refused before the publisher is asked anything.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "crypto.h"
#include "fleetmsg.h"
#include "log.h"
#include "msg.h"
#include "../../supervisord-factory/factoryd.h"
#include "../../supervisord-factory/attempt.h"

/* adopt.o is linked alone: what it calls of the parent is here. */
struct factoryd		*env;

static struct factoryd		 fenv;
static struct factoryd_conf	 fconf;
static struct conf_repo		 demo;
static struct child		 publisher;

static fleet_done	 asked;		/* adopt_poll's request's */
static struct msg_publish sent;		/* what the publisher was sent */
static int		 nsent;
static int		 sent_summary;	/* it carried one */
static int		 outcome_to = -1;
static uint64_t		 outcome_epoch;
static char		 outcome_why[FLEET_TEXT_MAX];

static const char	 KEY[] = "MCowBQYDK2VwAyEAAAAAAAAAAAAAAAAAAAAAAAAAAA==";
static const char	 OTHERKEY[] =
			    "MCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAA==";
static const char	 ID[] = "a-20261207-0001";
static const char	 COMMIT[] = "0123456789abcdef0123456789abcdef01234567";

static const char manifest[] =
    "repository: demo\n"
    "baseline: main\n"
    "title: \"the manifest's title\"\n"
    "scope: [\"src/**\"]\n"
    "agent: [\"/bin/true\"]\n"
    "validate: [\"/bin/true\"]\n"
    "approval: auto\n";

struct attempt *
attempt_find(const char *id)
{
	return (NULL);
}

int
attempt_terminal(const struct attempt *a)
{
	return (1);
}

struct child *
proc_find(enum factory_procid id, int slot)
{
	return (id == PROC_PUBLISHER ? &publisher : NULL);
}

static uint64_t	lease(void);

int
proc_compose_msg(enum factory_procid id, uint32_t type, enum msg_kind k,
    int fd, const void *msg, char *err, size_t errlen)
{
	char	*raw;
	size_t	 len;

	ck_assert_int_eq(id, PROC_PUBLISHER);
	ck_assert_int_eq(type, IMSG_PUBLISH_ADOPT);
	ck_assert_int_eq(k, MSG_PUBLISH);
	/* What the publisher would get: it encodes, within the bounds. */
	if ((raw = msg_encode(k, msg, &len, err, errlen)) == NULL)
		ck_abort_msg("the request does not encode: %s", err);
	free(raw);
	/* Its arrays alone: the pointers are adopt.c's, freed after. */
	memcpy(&sent, msg, sizeof(sent));
	sent_summary = sent.summary != NULL;
	/* To begin by the adoption's lease's end, never "no deadline". */
	ck_assert_uint_eq(sent.begin_by, lease());
	sent.verdict = sent.summary = NULL;
	sent.attest = NULL;
	sent.supersede = NULL;
	nsent++;
	return (0);
}

void
publish_forge(const struct conf_repo *repo, struct msg_publish *m)
{
	strlcpy(m->forge, "local", sizeof(m->forge));
	strlcpy(m->repository, repo->name, sizeof(m->repository));
	strlcpy(m->remote, repo->remote, sizeof(m->remote));
	strlcpy(m->pulls, repo->pulls, sizeof(m->pulls));
	m->has_github = 0;
}

static int
request(uint32_t type, struct ibuf *b, fleet_done done, void *arg)
{
	ck_assert_int_eq(type, IMSG_FLEET_ADOPT);
	ibuf_free(b);
	asked = done;
	return (0);
}

static void
outcome(const char *id, uint64_t epoch, int to, const char *why,
    const struct attempt *a, fleet_done done, void *arg)
{
	struct fleet_result	 r = { .code = FLEET_OK };

	outcome_to = to;
	outcome_epoch = epoch;
	strlcpy(outcome_why, why, sizeof(outcome_why));
	done(arg, IMSG_FLEET_RESULT, &r);
}

/* A lease end far off, but one the wire takes (msg.c's bound). */
static uint64_t	 lease_at = 1ULL << 40;

static uint64_t
lease(void)
{
	return (lease_at);
}

static uint64_t
clock0(void)
{
	return (0);
}

static void
setup(void)
{
	log_init(1, LOG_DAEMON);
	memset(&fenv, 0, sizeof(fenv));
	memset(&fconf, 0, sizeof(fconf));
	memset(&demo, 0, sizeof(demo));
	TAILQ_INIT(&fconf.repos);
	strlcpy(demo.name, "demo", sizeof(demo.name));
	demo.forge = FORGE_LOCAL;
	strlcpy(demo.remote, "/srv/demo.git", sizeof(demo.remote));
	strlcpy(demo.pulls, "/srv/pulls", sizeof(demo.pulls));
	TAILQ_INSERT_TAIL(&fconf.repos, &demo, entry);
	fenv.conf = &fconf;
	strlcpy(fenv.verifier_pub_b64, KEY, sizeof(fenv.verifier_pub_b64));
	env = &fenv;
	adopt_init(request, outcome, lease, clock0);
}

static void
digest_of(const char *text, char out[MSG_DIGEST])
{
	char	 hex[SHA256_HEX_LEN + 1];

	sha256_hex(text, strlen(text), hex);
	snprintf(out, MSG_DIGEST, "sha256:%s", hex);
}

/* A pinned request as fleet.c writes one, with what the pin claims. */
static char *
pin(const char *key, const char *digest)
{
	struct msg_publish	 m;
	char			*raw, *b64, err[MSG_ERRLEN];
	size_t			 len;

	memset(&m, 0, sizeof(m));
	strlcpy(m.id, ID, sizeof(m.id));
	strlcpy(m.forge, "local", sizeof(m.forge));
	strlcpy(m.repository, "demo", sizeof(m.repository));
	strlcpy(m.title, "the database's title", sizeof(m.title));
	strlcpy(m.base, "the-databases-base", sizeof(m.base));
	strlcpy(m.commit, COMMIT, sizeof(m.commit));
	m.verdict = "{}";
	strlcpy(m.verifier_pub, key, sizeof(m.verifier_pub));
	strlcpy(m.manifest_digest, digest, sizeof(m.manifest_digest));
	m.summary = "the database's summary";
	ck_assert_ptr_nonnull(raw = msg_encode(MSG_PUBLISH, &m, &len, err,
	    sizeof(err)));
	ck_assert_ptr_nonnull(b64 = malloc(BASE64_SIZE(len)));
	base64_encode((const uint8_t *)raw, len, 1, b64);
	free(raw);
	return (b64);
}

/* The database hands over the pin at epoch: no answer yet. */
static void
adopted(uint64_t epoch, const char *p, const char *text)
{
	struct fleet_adopt	 fa;

	memset(&fa, 0, sizeof(fa));
	strlcpy(fa.id, ID, sizeof(fa.id));
	fa.epoch = epoch;
	strlcpy(fa.host, "h1", sizeof(fa.host));
	strlcpy(fa.commit, COMMIT, sizeof(fa.commit));
	fa.pin = (char *)p;
	fa.manifest = (char *)text;
	asked = NULL;
	outcome_to = -1;
	adopt_poll(1);
	ck_assert_ptr_nonnull(asked);
	asked(NULL, IMSG_FLEET_ADOPTED, &fa);
}

/*
 * The database hands over this pin and manifest: 1 if the publisher
 * was asked, 0 if the adoption failed (outcome_why says why).
 */
static int
adopt(char *p, const char *text)
{
	int	 before = nsent;

	adopted(2, p, text);
	free(p);
	if (nsent == before) {
		ck_assert_int_eq(outcome_to, FLEET_FAILED);
		return (0);
	}
	ck_assert_int_eq(outcome_to, -1);
	/* The publisher's answer ends it, and frees its slot. */
	ck_assert_int_eq(adopt_answer(ID, NULL, "ended here"), 1);
	ck_assert_int_eq(outcome_to, FLEET_FAILED);
	return (1);
}

START_TEST(test_title_base_of_manifest)
{
	char	 d[MSG_DIGEST];

	digest_of(manifest, d);
	ck_assert_int_eq(adopt(pin(KEY, d), manifest), 1);
	ck_assert_str_eq(sent.title, "the manifest's title");
	ck_assert_str_eq(sent.base, "main");
	ck_assert_str_eq(sent.manifest_digest, d);
	ck_assert_str_eq(sent.remote, "/srv/demo.git");
	/* Nor the pin's check run text: the forge shows the title. */
	ck_assert_int_eq(sent_summary, 0);
}
END_TEST

START_TEST(test_other_manifest)
{
	static const char other[] =
	    "repository: demo\n"
	    "baseline: release\n"
	    "title: \"the manifest's title\"\n"
	    "scope: [\"src/**\"]\n"
	    "agent: [\"/bin/true\"]\n"
	    "validate: [\"/bin/true\"]\n"
	    "approval: auto\n";
	char	 d[MSG_DIGEST], od[MSG_DIGEST];

	/* The pin names one manifest, the database hands over another. */
	digest_of(manifest, d);
	digest_of(other, od);
	ck_assert_int_eq(adopt(pin(KEY, d), other), 0);
	ck_assert_msg(strstr(outcome_why, "its pinned request names "
	    "manifest sha256:") != NULL && strstr(outcome_why, od) != NULL,
	    "%s", outcome_why);
	/* Both changed together: sent, of the other's digest and base. */
	ck_assert_int_eq(adopt(pin(KEY, od), other), 1);
	ck_assert_str_eq(sent.manifest_digest, od);
	ck_assert_str_eq(sent.base, "release");
}
END_TEST

START_TEST(test_manifest_refused)
{
	static const char elsewhere[] =
	    "repository: other\n"
	    "baseline: main\n"
	    "title: \"t\"\n"
	    "scope: [\"src/**\"]\n"
	    "agent: [\"/bin/true\"]\n"
	    "validate: [\"/bin/true\"]\n"
	    "approval: auto\n";
	char	 d[MSG_DIGEST];

	digest_of("title: [", d);
	ck_assert_int_eq(adopt(pin(KEY, d), "title: ["), 0);
	ck_assert_msg(strstr(outcome_why, "adoption: its manifest does not "
	    "parse: ") != NULL, "%s", outcome_why);
	digest_of(elsewhere, d);
	ck_assert_int_eq(adopt(pin(KEY, d), elsewhere), 0);
	ck_assert_msg(strstr(outcome_why, "its pinned request is of "
	    "repository demo, its manifest of other") != NULL, "%s",
	    outcome_why);
}
END_TEST

START_TEST(test_other_verifier)
{
	char	 d[MSG_DIGEST];

	digest_of(manifest, d);
	ck_assert_int_eq(adopt(pin(OTHERKEY, d), manifest), 0);
	ck_assert_msg(strstr(outcome_why, "signed by another verifier key")
	    != NULL, "%s", outcome_why);
}
END_TEST

/*
 * Adopted again here at a newer epoch while its request is with the
 * publisher: no second request, and the answer ends the new claim.
 */
START_TEST(test_readopted_in_place)
{
	char	 d[MSG_DIGEST], *p;
	int	 before = nsent;

	digest_of(manifest, d);
	p = pin(KEY, d);
	adopted(2, p, manifest);
	ck_assert_int_eq(nsent, before + 1);
	adopted(3, p, manifest);
	ck_assert_int_eq(nsent, before + 1);
	ck_assert_int_eq(outcome_to, -1);
	/* Not newer than the one held: dropped, no request beside it. */
	adopted(3, p, manifest);
	ck_assert_int_eq(nsent, before + 1);
	ck_assert_int_eq(adopt_busy(), 1);
	ck_assert_int_eq(adopt_answer(ID, NULL, "ended here"), 1);
	ck_assert_int_eq(outcome_to, FLEET_FAILED);
	ck_assert_uint_eq(outcome_epoch, 3);
	free(p);
}
END_TEST

/* Not begun by the publisher: asked again while the lease holds. */
START_TEST(test_late_asked_again)
{
	char	 d[MSG_DIGEST], *p;
	int	 before = nsent;

	digest_of(manifest, d);
	p = pin(KEY, d);
	adopted(2, p, manifest);
	ck_assert_int_eq(nsent, before + 1);
	/* Its time to begin by not come: LATE is a lie. */
	ck_assert_int_eq(adopt_late(ID, "not begun"), -1);
	ck_assert_int_eq(adopt_answer(ID, NULL, "ended here"), 1);
	/* Begin by an instant long past; the lease (clock0's 0) holds. */
	lease_at = 1;
	adopted(3, p, manifest);
	ck_assert_int_eq(nsent, before + 2);
	ck_assert_int_eq(adopt_busy(), 1);
	ck_assert_int_eq(adopt_late(ID, "not begun"), 1);
	ck_assert_int_eq(adopt_busy(), 0);
	/* Not with the publisher now: another LATE is a lie. */
	ck_assert_int_eq(adopt_late(ID, "not begun"), -1);
	adopt_tick();
	ck_assert_int_eq(nsent, before + 3);
	ck_assert_uint_eq(sent.begin_by, lease());
	/* The publisher lost: sent again when it is back. */
	adopt_publisher_lost();
	adopt_tick();
	ck_assert_int_eq(nsent, before + 4);
	ck_assert_int_eq(adopt_answer(ID, NULL, "ended here"), 1);
	ck_assert_int_eq(adopt_late("a-20261207-0002", "not ours"), 0);
	free(p);
}
END_TEST

/* A repository that publishes nowhere here: let go, not failed. */
START_TEST(test_nowhere_let_go)
{
	char	 d[MSG_DIGEST], *p;
	int	 before = nsent;

	demo.forge = FORGE_NONE;
	digest_of(manifest, d);
	p = pin(KEY, d);
	adopted(2, p, manifest);
	ck_assert_int_eq(nsent, before);
	ck_assert_int_eq(outcome_to, -1);
	ck_assert_int_eq(adopt_answer(ID, NULL, "none"), 0);
	free(p);
}
END_TEST

static Suite *
adopt_suite(void)
{
	Suite	*s = suite_create("adopt");
	TCase	*tc = tcase_create("adopt");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_title_base_of_manifest);
	tcase_add_test(tc, test_other_manifest);
	tcase_add_test(tc, test_manifest_refused);
	tcase_add_test(tc, test_other_verifier);
	tcase_add_test(tc, test_readopted_in_place);
	tcase_add_test(tc, test_late_asked_again);
	tcase_add_test(tc, test_nowhere_let_go);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(adopt_suite());
	int	 nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (nf == 0 ? 0 : 1);
}
