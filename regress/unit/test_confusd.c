/*
 * Unit tests of the dollar amounts of factoryd.conf and manifests
 * (conf_parse_usd, conf_usd in libcommon/conf.c): prices, ceilings
 * and budgets in micro-dollars, exact, and nothing that would wrap.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

static uint64_t
usd(const char *s)
{
	uint64_t	 v = 12345;

	ck_assert_msg(conf_parse_usd(s, &v) == 0, "\"%s\" refused", s);
	return (v);
}

static void
refused(const char *s)
{
	uint64_t	 v = 12345;

	ck_assert_msg(conf_parse_usd(s, &v) == -1, "\"%s\" accepted", s);
	ck_assert_msg(v == 12345, "\"%s\": output written when refused", s);
}

START_TEST(test_parse)
{
	ck_assert_uint_eq(usd("0"), 0);
	ck_assert_uint_eq(usd("2"), 2000000);
	ck_assert_uint_eq(usd("2.5"), 2500000);
	ck_assert_uint_eq(usd("0.000125"), 125);
	ck_assert_uint_eq(usd("15.000001"), 15000001);
	ck_assert_uint_eq(usd("18446744073708.999999"),
	    UINT64_C(18446744073708999999));
}
END_TEST

START_TEST(test_refused)
{
	refused("");
	refused(".5");
	refused("1.");
	refused("-1");
	refused("+1");
	refused("1e3");
	refused("1,5");
	refused("1.0000001");
	refused("1 ");
	refused(" 1");
	refused("0x10");
	refused("inf");
	/* Would wrap around 2^64 micro-dollars. */
	refused("18446744073709.999999");
	refused("18446744073709.551616");
	refused("18446744073710");
	refused("99999999999999999999");
}
END_TEST

START_TEST(test_print)
{
	char	 b[32];

	ck_assert_str_eq(conf_usd(0, b, sizeof(b)), "0");
	ck_assert_str_eq(conf_usd(2000000, b, sizeof(b)), "2");
	ck_assert_str_eq(conf_usd(2500000, b, sizeof(b)), "2.5");
	ck_assert_str_eq(conf_usd(125, b, sizeof(b)), "0.000125");
	ck_assert_str_eq(conf_usd(UINT64_MAX, b, sizeof(b)),
	    "18446744073709.551615");
	/* What is printed reads back the same. */
	ck_assert_uint_eq(usd(conf_usd(15000001, b, sizeof(b))), 15000001);
}
END_TEST

static Suite *
confusd_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("confusd");
	tc = tcase_create("core");
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_print);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(confusd_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
