/*
 * Unit tests of libcommon/beneath.c: no link in any component of the
 * path, the last one or one in the middle, and nothing outside.
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

#include "beneath.h"

static char	 top[64];
static int	 topfd = -1;

static void
setup(void)
{
	char	 p[PATH_MAX];

	strlcpy(top, "/tmp/factory-regress.beneath.XXXXXX", sizeof(top));
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(p, sizeof(p), "%s/a", top);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/a/b", top);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/elsewhere", top);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/elsewhere/b", top);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	/* A middle component swapped for a link, and a last one. */
	snprintf(p, sizeof(p), "%s/mid", top);
	ck_assert_int_eq(symlink("elsewhere", p), 0);
	snprintf(p, sizeof(p), "%s/a/last", top);
	ck_assert_int_eq(symlink("b", p), 0);
	snprintf(p, sizeof(p), "%s/a/abs", top);
	ck_assert_int_eq(symlink("/tmp", p), 0);
	ck_assert_int_ne(topfd = open(top, O_PATH | O_DIRECTORY), -1);
}

static void
teardown(void)
{
	char	 cmd[128];

	close(topfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(plain_directories)
{
	int	 fd;

	fd = open_beneath(topfd, "a/b", O_PATH | O_DIRECTORY);
	ck_assert_int_ne(fd, -1);
	close(fd);
	fd = open_beneath(topfd, "a", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ne(fd, -1);
	close(fd);
}
END_TEST

START_TEST(link_in_the_middle)
{
	char	 p[PATH_MAX];
	int	 fd;

	/* What open(2) with O_NOFOLLOW does: it follows a middle link. */
	snprintf(p, sizeof(p), "%s/mid/b", top);
	fd = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW);
	ck_assert_int_ne(fd, -1);
	close(fd);
	errno = 0;
	ck_assert_int_eq(open_beneath(topfd, "mid/b", O_PATH | O_DIRECTORY),
	    -1);
	ck_assert_int_eq(errno, ELOOP);
}
END_TEST

START_TEST(link_last)
{
	errno = 0;
	ck_assert_int_eq(open_beneath(topfd, "a/last", O_PATH | O_DIRECTORY),
	    -1);
	ck_assert(errno == ELOOP || errno == ENOTDIR);
	errno = 0;
	ck_assert_int_eq(open_beneath(topfd, "a/abs", O_RDONLY |
	    O_DIRECTORY), -1);
	ck_assert(errno == ELOOP || errno == ENOTDIR);
}
END_TEST

START_TEST(outside)
{
	errno = 0;
	ck_assert_int_eq(open_beneath(topfd, "../tmp", O_PATH | O_DIRECTORY),
	    -1);
	ck_assert_int_eq(errno, EXDEV);
	errno = 0;
	ck_assert_int_eq(open_beneath(topfd, "a/../../x", O_PATH), -1);
	ck_assert_int_eq(errno, EXDEV);
	errno = 0;
	ck_assert_int_eq(open_beneath(topfd, "/tmp", O_PATH | O_DIRECTORY),
	    -1);
	ck_assert_int_eq(errno, EXDEV);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("beneath");
	TCase	*tc = tcase_create("beneath");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, plain_directories);
	tcase_add_test(tc, link_in_the_middle);
	tcase_add_test(tc, link_last);
	tcase_add_test(tc, outside);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
