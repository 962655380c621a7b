/*
 * Unit tests of libcommon/vis.c: the display form of untrusted bytes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "log.h"
#include "vis.h"

/* The form of n bytes, with flags, in a buffer of the checks' own. */
static const char *
form(const char *s, size_t n, int flags)
{
	static char	 buf[1024];
	size_t		 len;

	len = vis_buf(buf, sizeof(buf), s, n, flags);
	ck_assert_uint_lt(len, sizeof(buf));
	ck_assert_uint_eq(len, strlen(buf));
	return (buf);
}

/* No byte a terminal acts on: below 0x20 (but allowed \n \t), DEL. */
static void
assert_inert(const char *s, int flags)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p == '\n' && (flags & VIS_NL)) ||
		    (*p == '\t' && (flags & VIS_TAB)))
			continue;
		ck_assert_msg(*p >= 0x20 && *p != 0x7f,
		    "raw byte 0x%02x in \"%s\"", *p, s);
	}
}

/* Every byte alone. */
START_TEST(test_every_byte)
{
	char		 in[1], want[8];
	const char	*got;
	int		 flags;

	for (flags = 0; flags <= (VIS_NL | VIS_TAB | VIS_NOSLASH); flags++) {
		in[0] = (char)_i;
		got = form(in, 1, flags);
		if ((_i == '\n' && (flags & VIS_NL)) ||
		    (_i == '\t' && (flags & VIS_TAB)))
			snprintf(want, sizeof(want), "%c", _i);
		else if (_i == '\\' && !(flags & VIS_NOSLASH))
			strlcpy(want, "\\\\", sizeof(want));
		else if (_i < 0x20 || _i >= 0x7f)
			snprintf(want, sizeof(want), "\\x%02x", _i);
		else
			snprintf(want, sizeof(want), "%c", _i);
		ck_assert_str_eq(got, want);
		assert_inert(got, flags);
	}
}
END_TEST

/* Every pair of bytes: never a raw control, never longer than 4x. */
START_TEST(test_every_pair)
{
	char		 in[3];
	const char	*got;
	int		 b;

	for (b = 0; b < 256; b++) {
		in[0] = (char)_i;
		in[1] = (char)b;
		in[2] = 'z';
		got = form(in, 3, 0);
		assert_inert(got, 0);
		ck_assert_uint_le(strlen(got), 12);
		ck_assert_int_eq(got[strlen(got) - 1], 'z');
	}
}
END_TEST

static const struct {
	const char	*in;
	size_t		 len;
	const char	*want;
} cases[] = {
	/* Printable UTF-8 passes. */
	{ "plain.txt", 9, "plain.txt" },
	{ "\xc3\xa9t\xc3\xa9", 5, "\xc3\xa9t\xc3\xa9" },
	{ "\xe2\x82\xac", 3, "\xe2\x82\xac" },			/* U+20AC */
	{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },		/* U+1F600 */
	{ "\xc2\xa0", 2, "\xc2\xa0" },				/* U+00A0 */
	{ "\xef\xbf\xbd", 3, "\xef\xbf\xbd" },			/* U+FFFD */
	{ "\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf" },		/* U+10FFFF */
	{ "\xed\x9f\xbf", 3, "\xed\x9f\xbf" },			/* U+D7FF */
	{ "\xee\x80\x80", 3, "\xee\x80\x80" },			/* U+E000 */
	/* The file name of the issue. */
	{ "zz\r\x1b[1A\x1b[2K\tM README.md", 23,
	    "zz\\x0d\\x1b[1A\\x1b[2K\\x09M README.md" },
	{ "\x1b]0;title\x07", 10, "\\x1b]0;title\\x07" },
	{ "a\0b", 3, "a\\x00b" },
	{ "back\\slash", 10, "back\\\\slash" },
	/* C1 controls, valid UTF-8 all the same. */
	{ "\xc2\x80", 2, "\\u{0080}" },
	{ "\xc2\x85", 2, "\\u{0085}" },
	{ "\xc2\x9b" "31m", 5, "\\u{009B}31m" },
	{ "\xc2\x9f", 2, "\\u{009F}" },
	/* Bidi and format controls, separators. */
	{ "\xe2\x80\xaa", 3, "\\u{202A}" },
	{ "a\xe2\x80\xae" "cod.exe", 11, "a\\u{202E}cod.exe" },
	{ "\xe2\x81\xa6", 3, "\\u{2066}" },
	{ "\xe2\x81\xa9", 3, "\\u{2069}" },
	{ "\xe2\x81\xaa", 3, "\\u{206A}" },
	{ "\xe2\x80\xa9", 3, "\\u{2029}" },
	{ "\xe2\x80\x8f", 3, "\\u{200F}" },
	{ "\xd8\x9c", 2, "\\u{061C}" },
	/* Overlong forms. */
	{ "\xc0\x80", 2, "\\xc0\\x80" },
	{ "\xc1\xbf", 2, "\\xc1\\xbf" },
	{ "\xe0\x80\xaf", 3, "\\xe0\\x80\\xaf" },
	{ "\xe0\x9f\xbf", 3, "\\xe0\\x9f\\xbf" },
	{ "\xf0\x80\x80\xaf", 4, "\\xf0\\x80\\x80\\xaf" },
	{ "\xf0\x8f\xbf\xbf", 4, "\\xf0\\x8f\\xbf\\xbf" },
	/* Surrogates, and past U+10FFFF. */
	{ "\xed\xa0\x80", 3, "\\xed\\xa0\\x80" },
	{ "\xed\xbf\xbf", 3, "\\xed\\xbf\\xbf" },
	{ "\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80" },
	{ "\xf5\x80\x80\x80", 4, "\\xf5\\x80\\x80\\x80" },
	{ "\xff\xfe", 2, "\\xff\\xfe" },
	/* Truncated sequences: at the end, and before other bytes. */
	{ "\xe2\x82", 2, "\\xe2\\x82" },
	{ "\xf0\x9f\x98", 3, "\\xf0\\x9f\\x98" },
	{ "\xe2\x82" "A", 3, "\\xe2\\x82A" },
	{ "\xc3" "\xc3\xa9", 3, "\\xc3\xc3\xa9" },
	{ "\x80\xbf", 2, "\\x80\\xbf" },
	/* A C1 control cut short is an invalid byte. */
	{ "\xc2", 1, "\\xc2" },
};

START_TEST(test_cases)
{
	const char	*got;

	got = form(cases[_i].in, cases[_i].len, 0);
	ck_assert_msg(strcmp(got, cases[_i].want) == 0,
	    "case %d: got \"%s\", want \"%s\"", _i, got, cases[_i].want);
	assert_inert(got, 0);
}
END_TEST

START_TEST(test_flags)
{
	ck_assert_str_eq(form("a\nb\tc\r", 6, 0), "a\\x0ab\\x09c\\x0d");
	ck_assert_str_eq(form("a\nb\tc\r", 6, VIS_NL), "a\nb\\x09c\\x0d");
	ck_assert_str_eq(form("a\nb\tc\r", 6, VIS_NL | VIS_TAB),
	    "a\nb\tc\\x0d");
	ck_assert_str_eq(form("src/\\xff\x1b", 9, VIS_NOSLASH),
	    "src/\\xff\\x1b");
	ck_assert_str_eq(form("src/\\xff", 8, 0), "src/\\\\xff");
}
END_TEST

/* A short buffer: cut at a whole unit, the full length returned. */
START_TEST(test_truncation)
{
	char	 buf[8];
	size_t	 n;

	n = vis_buf(buf, sizeof(buf), "abc\x1b" "def", 7, 0);
	ck_assert_uint_eq(n, 10);
	ck_assert_str_eq(buf, "abc\\x1b");
	n = vis_buf(buf, 6, "abc\x1b" "def", 7, 0);
	ck_assert_str_eq(buf, "abc");		/* not "abc\x1" */
	n = vis_buf(buf, 5, "ab\xe2\x82\xac", 5, 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_str_eq(buf, "ab");		/* not half a character */
	ck_assert_uint_eq(vis_buf(NULL, 0, "\xff", 1, 0), 4);
	n = vis_buf(buf, 1, "x", 1, 0);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_alloc)
{
	char	 in[256], *s;
	int	 i;

	for (i = 0; i < 256; i++)
		in[i] = (char)i;
	s = vis_alloc(in, sizeof(in), 0);
	ck_assert_ptr_nonnull(s);
	assert_inert(s, 0);
	ck_assert_uint_eq(strlen(s), vis_buf(NULL, 0, in, sizeof(in), 0));
	free(s);
	s = vis_alloc("", 0, 0);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_tail)
{
	ck_assert_uint_eq(vis_tail("abc", 3), 0);
	ck_assert_uint_eq(vis_tail("a\xe2", 2), 1);
	ck_assert_uint_eq(vis_tail("a\xe2\x82", 3), 2);
	ck_assert_uint_eq(vis_tail("a\xe2\x82\xac", 4), 0);	/* complete */
	ck_assert_uint_eq(vis_tail("\xf0\x9f\x98", 3), 3);
	ck_assert_uint_eq(vis_tail("\xf0", 1), 1);
	ck_assert_uint_eq(vis_tail("\xe0", 1), 1);
	ck_assert_uint_eq(vis_tail("\xe0\x80", 2), 0);	/* overlong anyway */
	ck_assert_uint_eq(vis_tail("\xed\xa0", 2), 0);	/* a surrogate */
	ck_assert_uint_eq(vis_tail("\xc0", 1), 0);
	ck_assert_uint_eq(vis_tail("\xff", 1), 0);
	ck_assert_uint_eq(vis_tail("\x80\x80\x80", 3), 0);
	ck_assert_uint_eq(vis_tail("\xf4\x90", 2), 0);	/* past U+10FFFF */
	ck_assert_uint_eq(vis_tail("", 0), 0);
}
END_TEST

/* What log.c writes to stderr (-d) for one call, through a pipe. */
static const char *
logged(int witherrno, const char *arg)
{
	static char	 buf[4096];
	ssize_t		 n;
	int		 p[2], saved;

	ck_assert_int_eq(pipe(p), 0);
	saved = dup(2);
	ck_assert_int_eq(dup2(p[1], 2), 2);
	log_init(1, LOG_DAEMON);
	log_procinit("t");
	if (witherrno) {
		errno = ENOENT;
		log_warn("open %s", arg);
	} else
		log_warnx("name %s", arg);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	return (buf);
}

/* Every log line: the bytes of its arguments shown, never acted on. */
START_TEST(test_log_line)
{
	ck_assert_str_eq(logged(0, "zz\r\x1b[1A\x1b[2K\tM README.md"),
	    "t: name zz\\x0d\\x1b[1A\\x1b[2K\\x09M README.md\n");
	ck_assert_str_eq(logged(1, "a\nb\xc2\x9b"),
	    "t: open a\\x0ab\\u{009B}: No such file or directory\n");
	/* Text in the suite's encoding shows once, not doubled. */
	ck_assert_str_eq(logged(0, "src/\\xff.txt"),
	    "t: name src/\\xff.txt\n");
}
END_TEST

/*
 * The invisible and format characters (Unicode's Cf, the separators,
 * the tags block): each range's first and last code point is escaped,
 * and the code points just outside it pass.  A list of the checks'
 * own, written from the Unicode tables, not from vis.c.
 */
static const struct {
	unsigned	 lo, hi;
} invisibles[] = {
	{ 0x00ad, 0x00ad },	/* soft hyphen */
	{ 0x0600, 0x0605 },	/* Arabic number signs */
	{ 0x061c, 0x061c },	/* Arabic letter mark */
	{ 0x06dd, 0x06dd },
	{ 0x070f, 0x070f },
	{ 0x0890, 0x0891 },
	{ 0x08e2, 0x08e2 },
	{ 0x180e, 0x180e },	/* Mongolian vowel separator */
	{ 0x200b, 0x200f },	/* zero width space, joiners, marks */
	{ 0x2028, 0x202e },	/* separators, bidi embeddings */
	{ 0x2060, 0x206f },	/* word joiner, isolates, deprecated */
	{ 0xfeff, 0xfeff },	/* zero width no-break space, BOM */
	{ 0xfff9, 0xfffb },	/* interlinear annotation */
	{ 0x110bd, 0x110bd },
	{ 0x110cd, 0x110cd },
	{ 0x13430, 0x1343f },	/* Egyptian hieroglyph format controls */
	{ 0x1bca0, 0x1bca3 },	/* shorthand format controls */
	{ 0x1d173, 0x1d17a },	/* musical symbol format controls */
	{ 0xe0000, 0xe007f },	/* tags */
};

static size_t
utf8(unsigned cp, char *b)
{
	if (cp < 0x80) {
		b[0] = (char)cp;
		return (1);
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		return (2);
	}
	if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		return (3);
	}
	b[0] = (char)(0xf0 | cp >> 18);
	b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	b[3] = (char)(0x80 | (cp & 0x3f));
	return (4);
}

static int
invisible(unsigned cp)
{
	size_t	 i;

	if (cp >= 0x80 && cp <= 0x9f)
		return (1);
	for (i = 0; i < sizeof(invisibles) / sizeof(invisibles[0]); i++)
		if (cp >= invisibles[i].lo && cp <= invisibles[i].hi)
			return (1);
	return (0);
}

/* "x<cp>y": escaped as \u{XXXX} between the two, or passed whole. */
static void
assert_form(unsigned cp)
{
	char	 in[8], want[32];
	size_t	 n;

	in[0] = 'x';
	n = utf8(cp, in + 1);
	in[n + 1] = 'y';
	if (invisible(cp))
		snprintf(want, sizeof(want), "x\\u{%04X}y", cp);
	else {
		memcpy(want, in, n + 2);
		want[n + 2] = '\0';
	}
	ck_assert_msg(strcmp(form(in, n + 2, 0), want) == 0,
	    "U+%04X: \"%s\", not \"%s\"", cp, form(in, n + 2, 0), want);
}

START_TEST(test_invisibles)
{
	unsigned	 lo = invisibles[_i].lo, hi = invisibles[_i].hi;

	ck_assert(invisible(lo) && invisible(hi));
	assert_form(lo);
	assert_form(hi);
	assert_form((lo + hi) / 2);
	assert_form(lo - 1);
	assert_form(hi + 1);
}
END_TEST

/* Between the ranges, a sample of the plane: nothing else escaped. */
START_TEST(test_visible_plane)
{
	unsigned	 cp;

	for (cp = 0xa0; cp < 0x30000; cp += 7) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		assert_form(cp);
	}
	for (cp = 0xdff00; cp <= 0xe0100; cp++)
		assert_form(cp);
}
END_TEST

static Suite *
vis_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("vis");
	tc = tcase_create("core");
	tcase_add_loop_test(tc, test_every_byte, 0, 256);
	tcase_add_loop_test(tc, test_every_pair, 0, 256);
	tcase_add_loop_test(tc, test_cases, 0,
	    sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_flags);
	tcase_add_test(tc, test_truncation);
	tcase_add_test(tc, test_alloc);
	tcase_add_test(tc, test_tail);
	tcase_add_test(tc, test_log_line);
	tcase_add_loop_test(tc, test_invisibles, 0,
	    sizeof(invisibles) / sizeof(invisibles[0]));
	tcase_add_test(tc, test_visible_plane);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(vis_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
