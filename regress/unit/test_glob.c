/*
 * Unit tests of libcommon/glob.c: scope globs of factory-manifest(5).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"

static const struct {
	const char	*pattern;
	const char	*path;
	int		 match;
} matches[] = {
	/* Literals and the top level. */
	{ "README.md",		"README.md",		1 },
	{ "README.md",		"docs/README.md",	0 },
	{ "README.md",		"README.mdx",		0 },
	{ "*.c",		"x.c",			1 },
	{ "*.c",		"src/x.c",		0 },	/* no slash: top only */
	{ "*.c",		".c",			1 },	/* dots not special */
	{ "*",			"a",			1 },
	{ "*",			"a/b",			0 },
	/* '*' stays within a component. */
	{ "src/*",		"src/a",		1 },
	{ "src/*",		"src/a/b",		0 },
	{ "src/*.h",		"src/x.h",		1 },
	{ "a*b",		"ab",			1 },
	{ "a*b",		"axxb",			1 },
	{ "a*b",		"axxbx",		0 },
	{ "a*b*c",		"abxbxc",		1 },
	/* '?' is one character, not '/', UTF-8 aware. */
	{ "docs/?.md",		"docs/a.md",		1 },
	{ "docs/?.md",		"docs/ab.md",		0 },
	{ "a?b",		"a/b",			0 },
	{ "?",			"\xc3\xa9",		1 },	/* é */
	{ "??",			"\xc3\xa9",		0 },
	/* Classes. */
	{ "[a-z]*",		"main.c",		1 },
	{ "[a-z]*",		"Main.c",		0 },
	{ "[!a-z]*",		"Main.c",		1 },
	{ "[^a-z]*",		"main.c",		0 },
	{ "[]x]",		"]",			1 },
	{ "[!]]",		"]",			0 },
	{ "[a-]",		"-",			1 },
	{ "v[0-9].[0-9]",	"v1.2",			1 },
	{ "[\xc3\xa0-\xc3\xbf]", "\xc3\xa9",		1 },
	/* Escapes. */
	{ "\\*",		"*",			1 },
	{ "\\*",		"a",			0 },
	/* '**' as a whole component. */
	{ "src/**",		"src/a",		1 },
	{ "src/**",		"src/a/b/c.c",		1 },
	{ "src/**",		"src",			0 },	/* inside, not itself */
	{ "src/**",		"srcx/a",		0 },
	{ "**/*.c",		"x.c",			1 },
	{ "**/*.c",		"a/b/x.c",		1 },
	{ "**/*.c",		"a/b/x.h",		0 },
	{ "a/**/b",		"a/b",			1 },
	{ "a/**/b",		"a/x/y/b",		1 },
	{ "a/**/b",		"a/x/y/c",		0 },
	{ "a/**/b/**/c",	"a/1/b/2/b/3/c",	1 },
	{ "**",			"anything/at/all",	1 },
	{ "**/x/**",		"a/x/b",		1 },
	{ "**/x/**",		"a/x",			0 },
	/* Paths that are not clean never match. */
	{ "**",			"/etc/passwd",		0 },
	{ "**",			"a//b",			0 },
	{ "**",			"a/",			0 },
	{ "**",			"",			0 },
	/* Invalid patterns never match. */
	{ "../x",		"../x",			0 },
	{ "a**",		"abc",			0 },
};

START_TEST(test_match_table)
{
	int	 r;

	r = glob_match(matches[_i].pattern, matches[_i].path);
	ck_assert_msg(r == matches[_i].match,
	    "glob_match(\"%s\", \"%s\") = %d, want %d",
	    matches[_i].pattern, matches[_i].path, r, matches[_i].match);
}
END_TEST

static const struct {
	const char	*pattern;
	const char	*why;		/* NULL: valid */
} valids[] = {
	{ "src/**",		NULL },
	{ "**/*.c",		NULL },
	{ "a/**/b",		NULL },
	{ "[a-z]*.md",		NULL },
	{ "[]]",		NULL },
	{ "\\[x",		NULL },
	{ ".github/x",		NULL },
	{ "",			"empty pattern" },
	{ "/etc/passwd",	"absolute" },
	{ "a/../b",		"'.' and '..' components are refused" },
	{ "..",			"'.' and '..' components are refused" },
	{ "./a",		"'.' and '..' components are refused" },
	{ "a/[bc",		"unclosed '['" },
	{ "[a/b]",		"unclosed '['" },
	{ "a**",		"'**' must be a whole component" },
	{ "**a",		"'**' must be a whole component" },
	{ "x/***",		"'**' must be a whole component" },
	{ "src/",		"ends with '/'" },
	{ "a//b",		"empty component" },
	{ "a\tb",		"contains a control character" },
	{ "a\x7f",		"contains a control character" },
	{ "a\\",		"'\\' at the end of a component" },
	/*
	 * Characters are UTF-8: a byte that is not part of a character
	 * would let '?' and '*' split the path in two ways (regress/fuzz
	 * found "*\xe7?\xaf" not matching "\xe7\xe7\xaf\xaf").
	 */
	{ "\xc3\xa9/[\xc3\xa0-\xc3\xbf]",	NULL },
	{ "*\xe7?\xaf",		"not UTF-8" },
	{ "\xff",		"not UTF-8" },
	{ "a\xc3",		"not UTF-8" },
	{ "\xa9x",		"not UTF-8" },
	{ "[\xc3]",		"not UTF-8" },
	{ "\xe2\x82x",		"not UTF-8" },
	{ "\xf8\x88\x80\x80\x80",	"not UTF-8" },
};

START_TEST(test_valid_table)
{
	char	 why[128];
	int	 r;

	why[0] = '\0';
	r = glob_valid(valids[_i].pattern, why, sizeof(why));
	if (valids[_i].why == NULL)
		ck_assert_msg(r == 0, "glob_valid(\"%s\") refused: %s",
		    valids[_i].pattern, why);
	else {
		ck_assert_msg(r == -1, "glob_valid(\"%s\") accepted",
		    valids[_i].pattern);
		ck_assert_msg(strncmp(why, valids[_i].why,
		    strlen(valids[_i].why)) == 0,
		    "glob_valid(\"%s\"): \"%s\", want \"%s\"",
		    valids[_i].pattern, why, valids[_i].why);
	}
}
END_TEST

START_TEST(test_valid_null_reason)
{
	/* A NULL reason buffer is allowed. */
	ck_assert_int_eq(glob_valid("a**", NULL, 0), -1);
	ck_assert_int_eq(glob_valid(NULL, NULL, 0), -1);
	ck_assert_int_eq(glob_valid("ok/*.c", NULL, 0), 0);
}
END_TEST

START_TEST(test_too_long)
{
	char	*p;
	char	 why[64];

	p = malloc(PATH_MAX + 1);
	ck_assert_ptr_nonnull(p);
	memset(p, 'a', PATH_MAX);
	p[PATH_MAX] = '\0';
	ck_assert_int_eq(glob_valid(p, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "too long");
	free(p);
}
END_TEST

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec + ts.tv_nsec / 1e9);
}

/* "*a*a*a*...b" against "aaaa...": exponential for naive recursion. */
START_TEST(test_no_blowup_stars)
{
	char	 pat[128], path[4096];
	double	 t0;
	size_t	 i;

	pat[0] = '\0';
	for (i = 0; i < 20; i++)
		strlcat(pat, "*a", sizeof(pat));
	strlcat(pat, "*b", sizeof(pat));
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	t0 = now();
	ck_assert_int_eq(glob_match(pat, path), 0);
	path[sizeof(path) - 2] = 'b';
	ck_assert_int_eq(glob_match(pat, path), 1);
	ck_assert_msg(now() - t0 < 1.0, "took %.2f s", now() - t0);
}
END_TEST

/* "**" "/" "a" repeated, against a deep path of a's ending wrongly. */
START_TEST(test_no_blowup_globstars)
{
	char	 pat[256], path[2048];
	double	 t0;
	size_t	 i;

	pat[0] = path[0] = '\0';
	for (i = 0; i < 20; i++)
		strlcat(pat, "**/a/", sizeof(pat));
	strlcat(pat, "b", sizeof(pat));
	for (i = 0; i < 500; i++)
		strlcat(path, "a/", sizeof(path));
	strlcat(path, "c", sizeof(path));
	t0 = now();
	ck_assert_int_eq(glob_match(pat, path), 0);
	path[strlen(path) - 1] = 'b';
	ck_assert_int_eq(glob_match(pat, path), 1);
	ck_assert_msg(now() - t0 < 1.0, "took %.2f s", now() - t0);
}
END_TEST

START_TEST(test_scope_match)
{
	char	*scope[] = { "src/**", "README.md", NULL };
	char	*none[] = { NULL };

	ck_assert_int_eq(scope_match(scope, "src/a/b.c"), 1);
	ck_assert_int_eq(scope_match(scope, "README.md"), 1);
	ck_assert_int_eq(scope_match(scope, ".git/config"), 0);
	ck_assert_int_eq(scope_match(scope, "docs/README.md"), 0);
	ck_assert_int_eq(scope_match(none, "README.md"), 0);
	ck_assert_int_eq(scope_match(NULL, "README.md"), 0);
}
END_TEST

static Suite *
glob_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("glob");
	tc = tcase_create("core");
	tcase_add_loop_test(tc, test_match_table, 0,
	    sizeof(matches) / sizeof(matches[0]));
	tcase_add_loop_test(tc, test_valid_table, 0,
	    sizeof(valids) / sizeof(valids[0]));
	tcase_add_test(tc, test_valid_null_reason);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_no_blowup_stars);
	tcase_add_test(tc, test_no_blowup_globstars);
	tcase_add_test(tc, test_scope_match);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(glob_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
