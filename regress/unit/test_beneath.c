/*
 * Unit tests of libcommon/beneath.c: no link in any component of the
 * path, the last one or one in the middle, no magic link of /proc, no
 * "..", no absolute path, no other mount (BENEATH_XDEV), and nothing
 * outside.  Every case runs twice: once with the kernel's openat2(2),
 * once under a seccomp filter answering openat2 with ENOSYS as
 * systemd's RestrictSUIDSGID= does, so the walker that takes over must
 * give the same answers.  open_inroot's own cases follow.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"

#define DEEP	300	/* levels: more than the walker's in-root bound */

static char	 top[64];
static int	 topfd = -1;

static void
mkpath(const char *rel, int dir)
{
	char	 p[PATH_MAX];
	int	 fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (dir)
		ck_assert_int_eq(mkdir(p, 0700), 0);
	else {
		ck_assert_int_ne(fd = open(p, O_WRONLY | O_CREAT, 0600), -1);
		close(fd);
	}
}

static void
mklink(const char *target, const char *rel)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	ck_assert_int_eq(symlink(target, p), 0);
}

static void
setup(void)
{
	strlcpy(top, "/tmp/factory-regress.beneath.XXXXXX", sizeof(top));
	ck_assert_ptr_nonnull(mkdtemp(top));
	mkpath("a", 1);
	mkpath("a/b", 1);
	mkpath("a/file", 0);
	mkpath("elsewhere", 1);
	mkpath("elsewhere/b", 1);
	/* A middle component swapped for a link, and a last one. */
	mklink("elsewhere", "mid");
	mklink("b", "a/last");
	mklink("/tmp", "a/abs");
	mklink("/proc/self/root", "a/magic");
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

/*
 * Run 1 of each loop test: openat2 refused whole, as systemd's filter
 * for RestrictSUIDSGID= has it (each test is a process of its own).
 */
static void
way(int walk)
{
	scmp_filter_ctx	 ctx;

	if (!walk)
		return;
	ck_assert_ptr_nonnull(ctx = seccomp_init(SCMP_ACT_ALLOW));
	ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
	    SCMP_SYS(openat2), 0), 0);
	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ck_assert_int_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
}

/* open_beneath failed with errno want (any of two). */
static void
refused(int fd, int want, int want2)
{
	int	 e = errno;

	if (fd != -1)
		close(fd);
	ck_assert_int_eq(fd, -1);
	if (e != want && e != want2)
		ck_abort_msg("errno %d (%s), want %d", e, strerror(e), want);
}

START_TEST(plain_directories)
{
	int	 fd;

	way(_i);
	fd = open_beneath(topfd, "a/b", O_PATH | O_DIRECTORY);
	ck_assert_int_ne(fd, -1);
	close(fd);
	ck_assert_int_eq(beneath_walks(), _i);
	fd = open_beneath(topfd, "a", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ne(fd, -1);
	close(fd);
	fd = open_beneath(topfd, "./a//b/", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ne(fd, -1);
	close(fd);
	fd = open_beneath(topfd, "a/file", O_RDONLY);
	ck_assert_int_ne(fd, -1);
	close(fd);
	/* "." is the root itself. */
	ck_assert_int_ne(fd = open_beneath(topfd, ".", O_RDONLY), -1);
	close(fd);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

START_TEST(link_in_the_middle)
{
	char	 p[PATH_MAX];
	int	 fd;

	way(_i);
	/* What open(2) with O_NOFOLLOW does: it follows a middle link. */
	snprintf(p, sizeof(p), "%s/mid/b", top);
	fd = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW);
	ck_assert_int_ne(fd, -1);
	close(fd);
	errno = 0;
	refused(open_beneath(topfd, "mid/b", O_PATH | O_DIRECTORY), ELOOP,
	    ELOOP);
	refused(open_beneath(topfd, "a/abs/x", O_RDONLY), ELOOP, ELOOP);
	refused(open_beneath(topfd, "a/last/.", O_PATH), ELOOP, ELOOP);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

START_TEST(link_last)
{
	struct stat	 st;
	int		 fd;

	way(_i);
	refused(open_beneath(topfd, "a/last", O_PATH | O_DIRECTORY), ELOOP,
	    ENOTDIR);
	refused(open_beneath(topfd, "a/abs", O_RDONLY | O_DIRECTORY), ELOOP,
	    ENOTDIR);
	refused(open_beneath(topfd, "a/abs", O_RDONLY), ELOOP, ELOOP);
	/* O_PATH | O_NOFOLLOW: the link itself, never what it names. */
	ck_assert_int_ne(fd = open_beneath(topfd, "a/abs", O_PATH), -1);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	close(fd);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

START_TEST(outside)
{
	way(_i);
	refused(open_beneath(topfd, "../tmp", O_PATH | O_DIRECTORY), EXDEV,
	    EXDEV);
	refused(open_beneath(topfd, "a/../../x", O_PATH), EXDEV, EXDEV);
	/* Even one that stays below: both ways answer alike. */
	refused(open_beneath(topfd, "a/../a", O_PATH), EXDEV, EXDEV);
	refused(open_beneath(topfd, "a/..", O_PATH), EXDEV, EXDEV);
	refused(open_beneath(topfd, "/tmp", O_PATH | O_DIRECTORY), EXDEV,
	    EXDEV);
	refused(open_beneath(topfd, "", O_PATH), ENOENT, ENOENT);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

/* /proc's magic links (root, cwd, fd/N) lead nowhere, middle or last. */
START_TEST(magic_links)
{
	int	 pfd, dfd, fd;
	char	 p[32];

	way(_i);
	ck_assert_int_ne(pfd = open("/proc/self", O_PATH | O_DIRECTORY), -1);
	ck_assert_int_ne(dfd = open("/etc", O_PATH | O_DIRECTORY), -1);
	refused(open_beneath(pfd, "root/etc/passwd", O_RDONLY), ELOOP, ELOOP);
	refused(open_beneath(pfd, "cwd", O_RDONLY | O_DIRECTORY), ELOOP,
	    ENOTDIR);
	snprintf(p, sizeof(p), "fd/%d/passwd", dfd);
	refused(open_beneath(pfd, p, O_RDONLY), ELOOP, ELOOP);
	snprintf(p, sizeof(p), "fd/%d", dfd);
	refused(open_beneath(pfd, p, O_RDONLY), ELOOP, ELOOP);
	/* A link beneath the root that names a magic link. */
	refused(open_beneath(topfd, "a/magic/etc", O_PATH), ELOOP, ELOOP);
	/* Not a link: read as any file. */
	ck_assert_int_ne(fd = open_beneath(pfd, "status", O_RDONLY), -1);
	close(fd);
	close(dfd);
	close(pfd);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

/* BENEATH_XDEV: /proc is another mount than /, last or in the middle. */
START_TEST(other_mount)
{
	int	 rfd, fd;

	way(_i);
	ck_assert_int_ne(rfd = open("/", O_PATH | O_DIRECTORY), -1);
	ck_assert_int_ne(fd = open_beneath(rfd, "proc", O_PATH |
	    O_DIRECTORY), -1);
	close(fd);
	refused(open_beneath_how(rfd, "proc", O_PATH | O_DIRECTORY,
	    BENEATH_XDEV), EXDEV, EXDEV);
	refused(open_beneath_how(rfd, "proc/version", O_RDONLY,
	    BENEATH_XDEV), EXDEV, EXDEV);
	ck_assert_int_ne(fd = open_beneath_how(topfd, "a/file", O_RDONLY,
	    BENEATH_XDEV), -1);
	close(fd);
	close(rfd);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

START_TEST(not_a_directory)
{
	char	 name[NAME_MAX + 2];

	way(_i);
	refused(open_beneath(topfd, "a/file/", O_RDONLY), ENOTDIR, ENOTDIR);
	refused(open_beneath(topfd, "a/file/x", O_RDONLY), ENOTDIR, ENOTDIR);
	refused(open_beneath(topfd, "a/none/x", O_RDONLY), ENOENT, ENOENT);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	refused(open_beneath(topfd, name, O_RDONLY), ENAMETOOLONG,
	    ENAMETOOLONG);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

/* Any depth: the walker holds two descriptors, not one per level. */
START_TEST(deep)
{
	char	 rel[DEEP * 2 + 8];
	size_t	 len = 0;
	int	 i, fd;

	way(_i);
	for (i = 0; i < DEEP; i++) {
		memcpy(rel + len, i ? "/d" : "d", i ? 2 : 1);
		len += i ? 2 : 1;
		rel[len] = '\0';
		mkpath(rel, 1);
	}
	ck_assert_int_ne(fd = open_beneath(topfd, rel, O_RDONLY |
	    O_DIRECTORY), -1);
	close(fd);
	ck_assert_int_eq(beneath_walks(), _i);
}
END_TEST

/* In root: links followed, but never out of it. */
START_TEST(inroot)
{
	struct stat	 st;
	int		 pfd, fd;

	mklink("../../../a/file", "a/b/up");
	mklink("/a/file", "a/b/absolute");
	mklink("loop2", "loop1");
	mklink("loop1", "loop2");
	ck_assert_int_ne(fd = open_inroot(topfd, "a/b/up", O_RDONLY), -1);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	close(fd);
	ck_assert_int_ne(fd = open_inroot(topfd, "a/b/absolute", O_RDONLY),
	    -1);
	close(fd);
	ck_assert_int_ne(fd = open_inroot(topfd, "/../../a/file", O_RDONLY),
	    -1);
	close(fd);
	refused(open_inroot(topfd, "loop1", O_RDONLY), ELOOP, ELOOP);
	/* "/tmp" in the root: there is none. */
	refused(open_inroot(topfd, "a/abs/x", O_RDONLY), ENOENT, ENOENT);
	/* /proc/self/root read as its text ("/"): the root again. */
	ck_assert_int_ne(pfd = open("/proc/self", O_PATH | O_DIRECTORY), -1);
	refused(open_inroot(pfd, "root/etc/passwd", O_RDONLY), ENOENT,
	    ENOENT);
	close(pfd);
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
	/* Run 0: openat2; run 1: openat2 refused, the walker. */
	tcase_add_loop_test(tc, plain_directories, 0, 2);
	tcase_add_loop_test(tc, link_in_the_middle, 0, 2);
	tcase_add_loop_test(tc, link_last, 0, 2);
	tcase_add_loop_test(tc, outside, 0, 2);
	tcase_add_loop_test(tc, magic_links, 0, 2);
	tcase_add_loop_test(tc, other_mount, 0, 2);
	tcase_add_loop_test(tc, not_a_directory, 0, 2);
	tcase_add_loop_test(tc, deep, 0, 2);
	tcase_add_test(tc, inroot);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
