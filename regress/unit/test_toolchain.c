/*
 * Unit tests of libcommon/toolchain.c: the toolchain digest of
 * factory-manifest(5), over a small tree made here.  Links resolve
 * beneath the root whatever they say (relative ones that climb, absolute
 * ones, chains, loops); only regular files are hashed; a FIFO never
 * blocks; the digest follows the listed order and each file's bytes.
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

#include "toolchain.h"

static char	 root[PATH_MAX];
static int	 rootfd = -1;

static void
put(const char *rel, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fputs(text, fp);
	fclose(fp);
}

static void
link_(const char *target, const char *rel)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_int_eq(symlink(target, path), 0);
}

static void
dir(const char *rel)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

/*
 * The tree:  /bin/cc ("cc\n"), /etc/passwd ("image\n"), /usr -> bin's
 * sibling, links of every kind into it, a FIFO, a loop.
 */
static void
setup(void)
{
	strlcpy(root, "/tmp/factory-test-toolchain.XXXXXX", sizeof(root));
	ck_assert_ptr_nonnull(mkdtemp(root));
	dir("bin");
	dir("etc");
	dir("lib");
	put("bin/cc", "cc\n");
	put("etc/passwd", "image\n");
	link_("../../../../../../../../etc/passwd", "bin/rel");
	link_("/etc/passwd", "bin/abs");
	link_("/bin/rel", "bin/chain");
	link_("/etc/shadow", "bin/gone");
	link_("loop2", "bin/loop1");
	link_("loop1", "bin/loop2");
	link_("/bin", "lib/bin");
	link_("..", "lib/up");
	ck_assert_int_eq(mkfifo(strcat(strcpy((char [PATH_MAX]){0}, root),
	    "/bin/fifo"), 0644), 0);
	ck_assert_int_ne(rootfd = open(root, O_RDONLY | O_DIRECTORY), -1);
}

static void
teardown(void)
{
	char	 cmd[PATH_MAX + 16];

	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

/* What the digest must be: "PATH\0HEX\n" lines, HEX each file's. */
static void
expect(char *const *paths, const char *const *contents)
{
	struct sha256_ctx	 ctx;
	uint8_t			 md[SHA256_LEN];
	char			 hex[SHA256_HEX_LEN + 1];
	char			 want[SHA256_HEX_LEN + 1], got[SHA256_HEX_LEN + 1];
	char			 err[256];
	size_t			 i;

	ck_assert_int_eq(sha256_init(&ctx), 0);
	for (i = 0; paths[i] != NULL; i++) {
		sha256_hex(contents[i], strlen(contents[i]), hex);
		sha256_update(&ctx, paths[i], strlen(paths[i]) + 1);
		sha256_update(&ctx, hex, SHA256_HEX_LEN);
		sha256_update(&ctx, "\n", 1);
	}
	ck_assert_int_eq(sha256_final(&ctx, md), 0);
	hex_encode(md, sizeof(md), want);
	ck_assert_msg(toolchain_digest(rootfd, paths, got, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(got, want);
}

static void
refused(const char *path, const char *why)
{
	char	*paths[2] = { (char *)path, NULL };
	char	 got[SHA256_HEX_LEN + 1], err[256], want[256];

	ck_assert_int_eq(toolchain_digest(rootfd, paths, got, err,
	    sizeof(err)), -1);
	snprintf(want, sizeof(want), "toolchain: %s: %s", path, why);
	ck_assert_str_eq(err, want);
}

START_TEST(test_files)
{
	char		*p1[] = { "/bin/cc", "/etc/passwd", NULL };
	char		*p2[] = { "/etc/passwd", "/bin/cc", NULL };
	const char	*c1[] = { "cc\n", "image\n" };
	const char	*c2[] = { "image\n", "cc\n" };

	expect(p1, c1);
	expect(p2, c2);		/* the order is part of the digest */
	put("bin/cc", "cc, changed\n");
	c1[0] = "cc, changed\n";
	expect(p1, c1);
	put("bin/cc", "cc\n");		/* the tree is shared */
}
END_TEST

/* Links stay beneath the root: the image's /etc/passwd, never ours. */
START_TEST(test_links)
{
	char		*p[] = { "/bin/rel", "/bin/abs", "/bin/chain",
			    "/lib/bin/cc", "/lib/up/../../etc/passwd", NULL };
	const char	*c[] = { "image\n", "image\n", "image\n", "cc\n",
			    "image\n" };

	expect(p, c);
}
END_TEST

START_TEST(test_refused)
{
	refused("/bin/gone", "No such file or directory in the image");
	refused("/bin/none", "No such file or directory in the image");
	refused("/bin/loop1", "Too many levels of symbolic links in the "
	    "image");
	refused("/bin", "not a regular file in the image");
	refused("/lib/bin", "not a regular file in the image");
	/* A FIFO is refused, never opened for reading (it would block). */
	refused("/bin/fifo", "not a regular file in the image");
	refused("/bin/cc/x", "Not a directory in the image");
}
END_TEST

/* A sparse file over the bound: refused before a byte is read. */
START_TEST(test_bound)
{
	char	 path[PATH_MAX], *paths[] = { "/bin/big", NULL };
	char	 got[SHA256_HEX_LEN + 1], err[256];
	int	 fd;

	snprintf(path, sizeof(path), "%s/bin/big", root);
	ck_assert_int_ne(fd = open(path, O_CREAT | O_WRONLY, 0644), -1);
	ck_assert_int_eq(ftruncate(fd, 1024LL * 1024 * 1024 + 1), 0);
	close(fd);
	ck_assert_int_eq(toolchain_digest(rootfd, paths, got, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "toolchain: /bin/big: more than 1073741824 "
	    "bytes in all");
}
END_TEST

static Suite *
toolchain_suite(void)
{
	Suite	*s = suite_create("toolchain");
	TCase	*tc = tcase_create("digest");

	/* In the runner itself: the tree goes even if a test fails. */
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_files);
	tcase_add_test(tc, test_links);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_bound);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(toolchain_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
