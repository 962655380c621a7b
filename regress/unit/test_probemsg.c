/*
 * Unit tests of libcommon/probemsg.c: the launcher's kernel probe
 * answer round-trips, and every malformed one (truncated anywhere,
 * trailing bytes, a flag that is not 0 or 1, an ABI or a downgrade out
 * of range, a text with control bytes, empty or too long) is refused
 * with a reason naming the field.
 */
#include <sys/types.h>

#include <arpa/inet.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "probemsg.h"

static void
fill(struct probe_answer *pa)
{
	memset(pa, 0, sizeof(*pa));
	pa->ok = 1;
	pa->abi = 4;
	pa->downgraded = CONF_DG_LANDLOCK_SCOPES;
	pa->memfd_noexec = 1;
	pa->pidinfo = 0;
	strlcpy(pa->feats, "mount_setattr, clone3, landlock-scopes "
	    "(downgraded)", sizeof(pa->feats));
	strlcpy(pa->repl, "landlock-ioctl-dev", sizeof(pa->repl));
}

/* The bytes of pa, malloc'd. */
static unsigned char *
enc(const struct probe_answer *pa, size_t *lenp)
{
	unsigned char	*b;

	b = probe_answer_encode(pa, lenp);
	ck_assert_ptr_nonnull(b);
	return (b);
}

static void
refused(const void *b, size_t len, const char *field)
{
	struct probe_answer	 pa;
	char			 err[256];

	ck_assert_int_eq(probe_answer_decode(b, len, &pa, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "probe answer: ") == err, "%s", err);
	if (field != NULL)
		ck_assert_msg(strstr(err, field) != NULL, "%s lacks %s", err,
		    field);
}

START_TEST(test_round_trip)
{
	struct probe_answer	 in, out;
	unsigned char		*b;
	char			 err[256];
	size_t			 len;

	fill(&in);
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_int_eq(out.ok, 1);
	ck_assert_uint_eq(out.abi, 4);
	ck_assert_uint_eq(out.downgraded, CONF_DG_LANDLOCK_SCOPES);
	ck_assert_int_eq(out.memfd_noexec, 1);
	ck_assert_int_eq(out.pidinfo, 0);
	ck_assert_str_eq(out.feats, in.feats);
	ck_assert_str_eq(out.repl, in.repl);
	free(b);
	/* A refusal carries its line only. */
	memset(&in, 0, sizeof(in));
	strlcpy(in.err, "clone3: ENOSYS (Linux 5.3 has it; no downgrade)",
	    sizeof(in.err));
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_int_eq(out.ok, 0);
	ck_assert_str_eq(out.err, in.err);
	free(b);
}
END_TEST

START_TEST(test_truncated_trailing)
{
	struct probe_answer	 in;
	unsigned char		*b, *c;
	size_t			 len, i;

	fill(&in);
	b = enc(&in, &len);
	for (i = 0; i < len; i++)
		refused(b, i, "truncated");
	ck_assert_ptr_nonnull(c = malloc(len + 1));
	memcpy(c, b, len);
	c[len] = 0;
	refused(c, len + 1, "1 bytes left over");
	free(c);
	free(b);
}
END_TEST

START_TEST(test_fields)
{
	struct probe_answer	 in;
	unsigned char		*b;
	size_t			 len;
	uint32_t		 v;

	fill(&in);
	b = enc(&in, &len);
	b[0] = 2;
	refused(b, len, "field ok");
	b[0] = 1;
	v = htonl(PROBE_ABI_MAX + 1);
	memcpy(b + 1, &v, 4);
	refused(b, len, "field abi");
	v = htonl(4);
	memcpy(b + 1, &v, 4);
	v = htonl(CONF_DG_CGROUP_KILL);
	memcpy(b + 5, &v, 4);
	refused(b, len, "field downgraded");
	v = htonl(CONF_DG_LANDLOCK_SCOPES);
	memcpy(b + 5, &v, 4);
	b[9] = 7;
	refused(b, len, "field memfd_noexec");
	b[9] = 1;
	b[10] = 2;
	refused(b, len, "field pidinfo");
	b[10] = 0;
	b[15] = '\n';		/* in the features' text */
	refused(b, len, "field feats");
	b[15] = 'm';
	b[16] = '\0';
	refused(b, len, "NUL");
	free(b);
	/* Empty features; a text over its buffer. */
	fill(&in);
	in.feats[0] = '\0';
	b = enc(&in, &len);
	refused(b, len, "field feats: empty");
	free(b);
	/* A refusal longer than its buffer. */
	ck_assert_ptr_nonnull(b = calloc(1, 5 + PROBE_ERRLEN));
	v = htonl(PROBE_ERRLEN);
	memcpy(b + 1, &v, 4);
	memset(b + 5, 'x', PROBE_ERRLEN);
	refused(b, 5 + PROBE_ERRLEN, "field error: longer than");
	free(b);
}
END_TEST

START_TEST(test_refusal)
{
	struct probe_answer	 in;
	unsigned char		*b;
	size_t			 len;
	char			 err[256];

	memset(&in, 0, sizeof(in));
	b = enc(&in, &len);
	refused(b, len, "field error: empty");
	free(b);
	probe_refuse(err, sizeof(err), "landlock-net", "no TCP rules");
	ck_assert_str_eq(err, "landlock-net: no TCP rules; factoryd.conf "
	    "sandbox.downgrade [landlock-net] runs without it");
}
END_TEST

static Suite *
probemsg_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("probemsg");
	tc = tcase_create("core");
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_truncated_trailing);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_refusal);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(probemsg_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
