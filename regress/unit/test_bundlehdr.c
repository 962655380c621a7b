/*
 * Unit tests of libcommon/bundlehdr.c: the strict v2 bundle header
 * parser shared by the verifier and the publisher.  Every input is
 * copied to a buffer of exactly its size, so that a read past the end
 * shows under the sanitizers.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundlehdr.h"

#define BASE	"0123456789abcdef0123456789abcdef01234567"
#define TIP	"89abcdef0123456789abcdef0123456789abcdef"
#define GOOD	"# v2 git bundle\n-" BASE " initial\n" TIP \
		" refs/heads/factory/a-20261201-0001\n\nPACK"

static char	 err[512];

static int
parse(const char *s, size_t len, struct bundle_hdr *h)
{
	char	*buf;
	int	 rv;

	ck_assert_ptr_nonnull(buf = malloc(len > 0 ? len : 1));
	memcpy(buf, s, len);
	err[0] = '\0';
	rv = bundle_hdr_parse(buf, len, h, err, sizeof(err));
	free(buf);
	return (rv);
}

static void
refused(const char *s, const char *why)
{
	struct bundle_hdr	 h;

	ck_assert_msg(parse(s, strlen(s), &h) == -1, "accepted: %s", s);
	ck_assert_msg(strstr(err, why) != NULL, "want \"%s\", got \"%s\"",
	    why, err);
	ck_assert_msg(strncmp(err, "bundle: ", 8) == 0, "%s", err);
}

START_TEST(test_good)
{
	struct bundle_hdr	 h;
	const char		*s = GOOD "\2\0\0\0rest of the pack";
	size_t			 len = sizeof(GOOD "\2\0\0\0rest of the pack") - 1;

	ck_assert_int_eq(parse(s, len, &h), 0);
	ck_assert_str_eq(h.prereq, BASE);
	ck_assert_str_eq(h.commit, TIP);
	ck_assert_str_eq(h.attempt, "a-20261201-0001");
	ck_assert_uint_eq(h.pack_offset, strlen(GOOD) - 4);
	/* The pack's magic is enough, and a comment is optional. */
	ck_assert_int_eq(parse(GOOD, strlen(GOOD), &h), 0);
	s = "# v2 git bundle\n-" BASE "\n" TIP " refs/heads/factory/x\n\nPACK";
	ck_assert_int_eq(parse(s, strlen(s), &h), 0);
	ck_assert_str_eq(h.attempt, "x");
	/* Any bytes but NUL and newline in the comment. */
	s = "# v2 git bundle\n-" BASE " \xff\x1b[2K\r\t\n" TIP
	    " refs/heads/factory/a.b_c-9\n\nPACK";
	ck_assert_int_eq(parse(s, strlen(s), &h), 0);
	ck_assert_str_eq(h.attempt, "a.b_c-9");
}
END_TEST

START_TEST(test_signature)
{
	refused("", "not a v2 git bundle");
	refused("# v2 git bundl", "not a v2 git bundle");
	refused("# v2 git bundle", "not a v2 git bundle");
	refused("# v3 git bundle\n-" BASE "\n" TIP
	    " refs/heads/factory/a\n\nPACK", "not a v2 git bundle");
	refused("# v2 git bundle \n-" BASE "\n" TIP
	    " refs/heads/factory/a\n\nPACK", "not a v2 git bundle");
	refused("# v2 git bundle\r\n-" BASE "\r\n" TIP
	    " refs/heads/factory/a\r\n\r\nPACK", "not a v2 git bundle");
	refused("# v2 git bundle\n", "no end of header");
	refused("# v2 git bundle\n\nPACK", "no prerequisite");
}
END_TEST

START_TEST(test_lines)
{
	/* Counts and order. */
	refused("# v2 git bundle\n" TIP " refs/heads/factory/a\n\nPACK",
	    "no prerequisite");
	refused("# v2 git bundle\n-" BASE "\n\nPACK", "no ref");
	refused("# v2 git bundle\n-" BASE "\n-" TIP "\n" TIP
	    " refs/heads/factory/a\n\nPACK", "line 3: more than one "
	    "prerequisite");
	refused("# v2 git bundle\n-" BASE "\n" TIP " refs/heads/factory/a\n"
	    TIP " refs/heads/factory/b\n\nPACK", "line 4: more than one ref");
	refused("# v2 git bundle\n" TIP " refs/heads/factory/a\n-" BASE
	    "\n\nPACK", "line 3: prerequisite after the ref");
	/* Ids: 40 lower-case hex exactly. */
	refused("# v2 git bundle\n-" BASE "0\n" TIP
	    " refs/heads/factory/a\n\nPACK", "line 2: bad prerequisite");
	refused("# v2 git bundle\n-0123456789abcdef0123456789abcdef0123456\n"
	    TIP " refs/heads/factory/a\n\nPACK", "line 2: bad prerequisite");
	refused("# v2 git bundle\n-0123456789ABCDEF0123456789abcdef01234567\n"
	    TIP " refs/heads/factory/a\n\nPACK", "line 2: bad prerequisite");
	refused("# v2 git bundle\n-\n" TIP " refs/heads/factory/a\n\nPACK",
	    "line 2: bad prerequisite");
	refused("# v2 git bundle\n-" BASE "\n" TIP "\n\nPACK",
	    "line 3: bad ref line");
	refused("# v2 git bundle\n-" BASE "\n" TIP " \n\nPACK",
	    "line 3: bad ref line");
	refused("# v2 git bundle\n-" BASE "\n" TIP "\trefs/heads/factory/a\n"
	    "\nPACK", "line 3: bad ref line");
	refused("# v2 git bundle\n-" BASE "\nX\n\nPACK", "line 3: bad ref");
	refused("# v2 git bundle\n-" BASE "\n89ABCDEF0123456789abcdef0123456"
	    "789abcdef refs/heads/factory/a\n\nPACK", "line 3: bad ref line");
	/* A NUL anywhere in the header. */
	{
		struct bundle_hdr	 h;
		const char		 s[] = "# v2 git bundle\n-" BASE "\n" TIP
		    " refs/heads/factory/a\0b\n\nPACK";

		ck_assert_int_eq(parse(s, sizeof(s) - 1, &h), -1);
		ck_assert_str_eq(err, "bundle: NUL byte in the header");
	}
}
END_TEST

START_TEST(test_ref)
{
	static const char *const bad[] = {
		"refs/heads/main", "refs/heads/factory/", "refs/heads/factory",
		"refs/heads/factory/../x", "refs/heads/factory/a..b",
		"refs/heads/factory/a/b", "refs/heads/factory/a.lock",
		"refs/heads/factory/-a", "refs/heads/factory/.a",
		"refs/heads/factory/_a", "refs/heads/factory/a b",
		"refs/heads/factory/a\r", "refs/heads/factory/\xc3\xa9",
		"refs/heads/factory/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 33 */
		"refs/tags/factory/a", "Refs/heads/factory/a",
	};
	char		 s[512];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(s, sizeof(s), "# v2 git bundle\n-" BASE "\n" TIP
		    " %s\n\nPACK", bad[i]);
		refused(s, "is not refs/heads/factory/<attempt id>");
	}
	/* 32 bytes is the most. */
	snprintf(s, sizeof(s), "# v2 git bundle\n-" BASE "\n" TIP
	    " refs/heads/factory/%s\n\nPACK",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	{
		struct bundle_hdr	 h;

		ck_assert_int_eq(parse(s, strlen(s), &h), 0);
		ck_assert_uint_eq(strlen(h.attempt), ATTEMPT_ID_MAX);
	}
	/* What the ref says reaches a log line escaped, and cut short. */
	refused("# v2 git bundle\n-" BASE "\n" TIP
	    " refs/heads/factory/\x1b[2K\"\\\n\nPACK",
	    "ref \"refs/heads/factory/\\x1b[2K\"\\\\\" is not");
	memset(s, 'x', sizeof(s));
	memcpy(s, "# v2 git bundle\n-" BASE "\n" TIP " ", 16 + 42 + 41);
	memcpy(s + sizeof(s) - 7, "\n\nPACK", 7);
	refused(s, "xxxx\" is not");
	ck_assert_msg(strlen(err) < 200, "%s", err);
}
END_TEST

START_TEST(test_limits)
{
	struct bundle_hdr	 h;
	const char		*head = "# v2 git bundle\n-" BASE " ";
	const char		*tail = "\n" TIP " refs/heads/factory/a\n\n";
	char			*s;
	size_t			 fill, len;

	/* A header of exactly BUNDLE_HDR_MAX bytes, blank line included. */
	fill = BUNDLE_HDR_MAX - strlen(head) - strlen(tail);
	len = BUNDLE_HDR_MAX + 4;
	ck_assert_ptr_nonnull(s = malloc(len + 1));
	memcpy(s, head, strlen(head));
	memset(s + strlen(head), 'c', fill);
	memcpy(s + strlen(head) + fill, tail, strlen(tail));
	memcpy(s + BUNDLE_HDR_MAX, "PACK", 4);
	ck_assert_int_eq(parse(s, len, &h), 0);
	ck_assert_uint_eq(h.pack_offset, BUNDLE_HDR_MAX);
	/* One byte more is refused, however long the file. */
	free(s);
	ck_assert_ptr_nonnull(s = malloc(len + 2));
	memcpy(s, head, strlen(head));
	memset(s + strlen(head), 'c', fill + 1);
	memcpy(s + strlen(head) + fill + 1, tail, strlen(tail));
	memcpy(s + BUNDLE_HDR_MAX + 1, "PACK", 4);
	ck_assert_int_eq(parse(s, len + 1, &h), -1);
	ck_assert_msg(strstr(err, "no end of header") != NULL, "%s", err);
	free(s);
	/* The pack's magic must follow, whole. */
	refused("# v2 git bundle\n-" BASE "\n" TIP " refs/heads/factory/a\n\n",
	    "no pack after the header");
	refused("# v2 git bundle\n-" BASE "\n" TIP " refs/heads/factory/a\n\n"
	    "PAC", "no pack after the header");
	refused("# v2 git bundle\n-" BASE "\n" TIP " refs/heads/factory/a\n\n"
	    "\nPACK", "no pack after the header");
	refused("# v2 git bundle\n-" BASE "\n" TIP " refs/heads/factory/a\n\n"
	    "pack", "no pack after the header");
}
END_TEST

/* Reading from a descriptor: from offset 0, regular files only. */
START_TEST(test_read)
{
	struct bundle_hdr	 h;
	char			 dir[] = "/tmp/factory-regress.bh.XXXXXX";
	char			 path[PATH_MAX];
	int			 fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/b", dir);
	ck_assert_int_ne(fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600), -1);
	ck_assert_int_eq(write(fd, GOOD "\2\0", strlen(GOOD) + 2),
	    (ssize_t)strlen(GOOD) + 2);
	/* The fd's offset is at the end: pread reads from 0 anyway. */
	ck_assert_int_eq(bundle_hdr_read(fd, &h, err, sizeof(err)), 0);
	ck_assert_str_eq(h.commit, TIP);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), strlen(GOOD) + 2);
	close(fd);
	/* A FIFO is refused without blocking. */
	snprintf(path, sizeof(path), "%s/f", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_ne(fd = open(path, O_RDONLY | O_NONBLOCK), -1);
	ck_assert_int_eq(bundle_hdr_read(fd, &h, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "bundle: not a regular file");
	close(fd);
	unlink(path);
	/* A directory too. */
	ck_assert_int_ne(fd = open(dir, O_RDONLY | O_DIRECTORY), -1);
	ck_assert_int_eq(bundle_hdr_read(fd, &h, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "bundle: not a regular file");
	close(fd);
	ck_assert_int_eq(bundle_hdr_read(-1, &h, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "bundle: fstat") != NULL, "%s", err);
	snprintf(path, sizeof(path), "%s/b", dir);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_helpers)
{
	ck_assert_int_eq(bundle_hex40(BASE, 40), 1);
	ck_assert_int_eq(bundle_hex40(BASE, 39), 0);
	ck_assert_int_eq(bundle_hex40("g123456789abcdef0123456789abcdef01234567",
	    40), 0);
	ck_assert_int_eq(bundle_attempt_valid("a-20261201-0001", 15), 1);
	ck_assert_int_eq(bundle_attempt_valid("a-1x", 3), 1);	/* len counts */
	ck_assert_int_eq(bundle_attempt_valid("", 0), 0);
	ck_assert_int_eq(bundle_attempt_valid("a\0b", 3), 0);
	ck_assert_int_eq(bundle_attempt_valid("x.lock", 6), 0);
	ck_assert_int_eq(bundle_attempt_valid("x.lockx", 7), 1);
}
END_TEST

static Suite *
bundlehdr_suite(void)
{
	Suite	*s = suite_create("bundlehdr");
	TCase	*tc = tcase_create("parse");

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_signature);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_ref);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_read);
	tcase_add_test(tc, test_helpers);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(bundlehdr_suite());
	int	 nfail;

	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
