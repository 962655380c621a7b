/*
 * Unit tests of libcommon/esc.c: every byte, round trips of fixed and
 * random strings, the one canonical spelling, and the bounds.
 */
#include <sys/types.h>

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "esc.h"
#include "receipt.h"

/* What each byte must become, written out apart from esc.c. */
static void
expect_byte(unsigned char c, char *want, size_t len)
{
	if (c == '\\')
		snprintf(want, len, "\\\\");
	else if (c >= 0x20 && c <= 0x7e)
		snprintf(want, len, "%c", c);
	else
		snprintf(want, len, "\\x%02x", c);
}

START_TEST(test_every_byte)
{
	unsigned char	 b = (unsigned char)_i, back[8];
	char		 enc[16], want[8];
	json_t		*o;

	expect_byte(b, want, sizeof(want));
	ck_assert_int_eq(esc_encode(&b, 1, enc, sizeof(enc)),
	    (int)strlen(want));
	ck_assert_str_eq(enc, want);
	ck_assert_uint_eq(esc_len(&b, 1), strlen(want));
	ck_assert_int_eq(esc_valid(enc), 1);
	ck_assert_int_eq(esc_decode(enc, strlen(enc), back, sizeof(back)), 1);
	ck_assert_uint_eq(back[0], b);
	/* Printable ASCII only, whatever the byte. */
	for (size_t i = 0; enc[i] != '\0'; i++)
		ck_assert(enc[i] >= 0x20 && enc[i] <= 0x7e);
	o = esc_json(&b, 1);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(o), want);
	json_decref(o);
}
END_TEST

START_TEST(test_all_bytes_at_once)
{
	unsigned char	 all[256], back[256];
	char		*s;
	int		 i;

	for (i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	ck_assert_ptr_nonnull(s = esc_strdup(all, sizeof(all)));
	ck_assert_uint_eq(strlen(s), esc_len(all, sizeof(all)));
	/* 94 plain, the backslash in 2, the other 161 in 4 each. */
	ck_assert_uint_eq(strlen(s), 94 + 2 + 161 * 4);
	ck_assert_int_eq(esc_decode(s, strlen(s), back, sizeof(back)), 256);
	ck_assert_mem_eq(back, all, 256);
	free(s);
}
END_TEST

START_TEST(test_fixed)
{
	static const struct {
		const char	*in;
		size_t		 len;
		const char	*out;
	} t[] = {
		{ "", 0, "" },
		{ "src/ok.txt", 10, "src/ok.txt" },
		{ "src/\377.txt", 9, "src/\\xff.txt" },
		{ "a\\b", 3, "a\\\\b" },
		{ "\\x41", 4, "\\\\x41" },
		{ "\xc0\xaf", 2, "\\xc0\\xaf" },
		{ "\xed\xa0\x80", 3, "\\xed\\xa0\\x80" },
		{ "caf\xc3\xa9", 5, "caf\\xc3\\xa9" },
		{ "a\nb\r\x1b[2K", 8, "a\\x0ab\\x0d\\x1b[2K" },
		{ "\"'", 2, "\"'" },
		{ "nul\0in", 6, "nul\\x00in" },
		{ "\x7f", 1, "\\x7f" },
	};
	char		 enc[64], dec[64];
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_int_eq(esc_encode(t[i].in, t[i].len, enc,
		    sizeof(enc)), (int)strlen(t[i].out));
		ck_assert_str_eq(enc, t[i].out);
		ck_assert_int_eq(esc_decode(enc, strlen(enc), dec,
		    sizeof(dec)), (int)t[i].len);
		ck_assert_mem_eq(dec, t[i].in, t[i].len);
	}
}
END_TEST

/* Every other spelling is refused: one encoding per byte string. */
START_TEST(test_not_canonical)
{
	static const char *const bad[] = {
		"\\", "a\\", "\\x", "\\x4", "\\x41", "\\xFF", "\\xfF",
		"\\X41", "\\n", "\\0", "\\u0041", "\\x5c", "\\x20", "\\x7e",
		"\\xg0", "\\x0g", "\x01", "\n", "\x7f", "\x80", "\xff",
		"caf\xc3\xa9", "ok\\", "\\\\\\",
	};
	char		 dec[16];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(esc_decode(bad[i], strlen(bad[i]), dec,
		    sizeof(dec)) == -1, "decoded \"%s\"", bad[i]);
		ck_assert_msg(esc_valid(bad[i]) == 0, "valid \"%s\"", bad[i]);
	}
	ck_assert_int_eq(esc_valid("\\x7f\\\\\\xff ok"), 1);
	ck_assert_int_eq(esc_valid(""), 1);
}
END_TEST

START_TEST(test_random_round_trip)
{
	unsigned char	 in[512], back[512];
	char		*s, enc2[512 * ESC_MAXEXPAND + 1];
	size_t		 len, i;
	int		 n;

	srandom(0x5eed + _i);
	for (n = 0; n < 2000; n++) {
		len = (size_t)random() % sizeof(in);
		for (i = 0; i < len; i++)
			in[i] = (unsigned char)random();
		ck_assert_ptr_nonnull(s = esc_strdup(in, len));
		ck_assert_int_eq(esc_valid(s), 1);
		ck_assert_int_eq(esc_decode(s, strlen(s), back, sizeof(back)),
		    (int)len);
		ck_assert_mem_eq(back, in, len);
		/* Encoding the decoding gives the same text again. */
		ck_assert_int_eq(esc_encode(back, len, enc2, sizeof(enc2)),
		    (int)strlen(s));
		ck_assert_str_eq(enc2, s);
		free(s);
	}
}
END_TEST

/* Decoding random text: refused, or the unique encoding of its result. */
START_TEST(test_random_text)
{
	char		 text[64], enc[64 * ESC_MAXEXPAND + 1];
	unsigned char	 dec[64];
	const char	 alphabet[] = "\\xaf0912AFx \x01\xff";
	size_t		 len, i;
	int		 n, d;

	srandom(0xdec0de);
	for (n = 0; n < 20000; n++) {
		len = (size_t)random() % 16;
		for (i = 0; i < len; i++)
			text[i] = alphabet[random() % (sizeof(alphabet) - 1)];
		text[len] = '\0';
		d = esc_decode(text, len, dec, sizeof(dec));
		ck_assert_int_eq(d != -1, esc_valid(text));
		if (d == -1)
			continue;
		ck_assert_int_eq(esc_encode(dec, d, enc, sizeof(enc)),
		    (int)len);
		ck_assert_str_eq(enc, text);
	}
}
END_TEST

START_TEST(test_bounds)
{
	unsigned char	 ff[8];
	char		 enc[64];
	unsigned char	 dec[4];

	memset(ff, 0xff, sizeof(ff));
	/* 8 bytes take 32 characters and a NUL: 32 do not do. */
	ck_assert_int_eq(esc_encode(ff, 8, enc, 32), -1);
	ck_assert_int_eq(esc_encode(ff, 8, enc, 33), 32);
	ck_assert_int_eq(esc_encode("", 0, enc, 0), -1);
	ck_assert_int_eq(esc_encode("", 0, enc, 1), 0);
	ck_assert_str_eq(enc, "");
	/* A decoding that does not fit is refused whole. */
	ck_assert_int_eq(esc_decode("abcde", 5, dec, 4), -1);
	ck_assert_int_eq(esc_decode("abcd", 4, dec, 4), 4);
	ck_assert_int_eq(esc_decode("\\xff\\xff\\xff\\xff\\xff", 20, dec, 4),
	    -1);
	/* Lengths whose encoding could not be counted are refused. */
	ck_assert_int_eq(esc_encode(ff, SIZE_MAX / 2, enc, sizeof(enc)), -1);
	ck_assert_ptr_null(esc_strdup(ff, SIZE_MAX / 2));
	ck_assert_int_eq(esc_decode("a", (size_t)INT32_MAX + 1, dec, 4), -1);
}
END_TEST

/* A large value: every byte of 1 MiB of 0xff survives. */
START_TEST(test_large)
{
	size_t		 len = 1024 * 1024;
	unsigned char	*in, *back;
	json_t		*o;
	const char	*s;

	ck_assert_ptr_nonnull(in = malloc(len));
	ck_assert_ptr_nonnull(back = malloc(len));
	memset(in, 0xff, len);
	o = esc_json(in, len);
	ck_assert_ptr_nonnull(o);
	s = json_string_value(o);
	ck_assert_uint_eq(strlen(s), 4 * len);
	ck_assert_int_eq(esc_decode(s, strlen(s), back, len), (int)len);
	ck_assert_mem_eq(back, in, len);
	json_decref(o);
	free(in);
	free(back);
}
END_TEST

/*
 * factoryctl verify quotes strings of the file it reads: escaped, so a
 * hostile receipts file cannot write to the operator's terminal.
 */
START_TEST(test_receipt_errors)
{
	const char	*f = "{\"factory-receipts\":1,\"attempt\":\"a-1\","
	    "\"keys\":{\"\\u001b]0;owned\\u0007\\u00ff\":{}}}\n";
	char		 err[512];
	size_t		 i;

	ck_assert_int_eq(receipt_verify_buf(f, strlen(f), NULL, NULL, NULL,
	    err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "unknown key \\x1b]0;owned\\x07\\xc3\\xbf")
	    != NULL, "%s", err);
	for (i = 0; err[i] != '\0'; i++)
		ck_assert(err[i] >= 0x20 && err[i] <= 0x7e);
}
END_TEST

static Suite *
esc_suite(void)
{
	Suite	*s = suite_create("esc");
	TCase	*tc = tcase_create("esc");

	tcase_add_loop_test(tc, test_every_byte, 0, 256);
	tcase_add_test(tc, test_all_bytes_at_once);
	tcase_add_test(tc, test_fixed);
	tcase_add_test(tc, test_not_canonical);
	tcase_add_loop_test(tc, test_random_round_trip, 0, 4);
	tcase_add_test(tc, test_random_text);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_large);
	tcase_add_test(tc, test_receipt_errors);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(esc_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
