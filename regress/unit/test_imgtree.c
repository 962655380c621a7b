/*
 * Unit tests of libcommon/imgtree.c: the entry path checks, and the
 * canonical form and digest of a tree, against a stream written out
 * here apart from imgtree.c.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "imgtree.h"

static char	 top[64];

static void
setup(void)
{
	strlcpy(top, "/tmp/factory-regress.imgtree.XXXXXX", sizeof(top));
	ck_assert_ptr_nonnull(mkdtemp(top));
}

static void
teardown(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

static int
clean(const char *in, char *out)
{
	char	 err[128];

	return (imgpath_clean(in, out, IMG_PATHMAX + 1, IMG_PATHMAX, 8, err,
	    sizeof(err)));
}

START_TEST(test_path_clean)
{
	char	 out[IMG_PATHMAX + 1], *big;

	ck_assert_int_eq(clean("./a/b/", out), 0);
	ck_assert_str_eq(out, "a/b");
	ck_assert_int_eq(clean("a//./b", out), 0);
	ck_assert_str_eq(out, "a/b");
	ck_assert_int_eq(clean(".", out), 1);
	ck_assert_int_eq(clean("./", out), 1);
	ck_assert_int_eq(clean("", out), 1);
	ck_assert_int_eq(clean("/etc/passwd", out), -1);
	ck_assert_int_eq(clean("../x", out), -1);
	ck_assert_int_eq(clean("a/../../x", out), -1);
	ck_assert_int_eq(clean("a/..", out), -1);
	ck_assert_int_eq(clean("a/...", out), 0);
	ck_assert_str_eq(out, "a/...");
	ck_assert_int_eq(clean("a/b/c/d/e/f/g/h", out), 0);
	ck_assert_int_eq(clean("a/b/c/d/e/f/g/h/i", out), -1);
	big = malloc(5001);
	memset(big, 'a', 5000);
	big[5000] = '\0';
	ck_assert_int_eq(clean(big, out), -1);	/* a 5000-byte component */
	memset(big, 'a', NAME_MAX + 1);
	big[NAME_MAX + 1] = '\0';
	ck_assert_int_eq(clean(big, out), -1);
	big[NAME_MAX] = '\0';
	ck_assert_int_eq(clean(big, out), 0);
	free(big);
	/* Non-UTF-8 bytes are bytes. */
	ck_assert_int_eq(clean("a/\xff\xfe", out), 0);
	ck_assert_str_eq(out, "a/\xff\xfe");
}
END_TEST

static void
put(const char *rel, const char *data, mode_t mode)
{
	char	 p[PATH_MAX];
	int	 fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	ck_assert_int_ne(fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600),
	    -1);
	ck_assert_int_eq(write(fd, data, strlen(data)), (int)strlen(data));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void
dir(const char *rel, mode_t mode)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	ck_assert_int_eq(mkdir(p, mode), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
}

static void
lnk(const char *target, const char *rel)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	ck_assert_int_eq(symlink(target, p), 0);
}

static int
walk(const char *sub, FILE *out, FILE *canon, struct imgwalk_result *r,
    char *err, size_t errlen)
{
	char	 p[PATH_MAX];
	int	 fd, rc;

	snprintf(p, sizeof(p), "%s/%s", top, sub);
	ck_assert_int_ne(fd = open(p, O_RDONLY | O_DIRECTORY), -1);
	rc = imgwalk(fd, getuid(), 0, out, canon, r, err, errlen);
	close(fd);
	return (rc);
}

/* One record as the page defines it, for the expected stream. */
static void
rec(struct sha256_ctx *c, const char *path, char type, unsigned mode,
    unsigned long long size, const char *data)
{
	char	 rest[160], hex[65];

	if (data != NULL)
		sha256_hex(data, strlen(data), hex);
	else
		strlcpy(hex, "-", sizeof(hex));
	snprintf(rest, sizeof(rest), "%c %04o %u %u %llu %s\n", type, mode,
	    (unsigned)getuid(), (unsigned)getgid(), size, hex);
	sha256_update(c, path, strlen(path) + 1);
	sha256_update(c, rest, strlen(rest));
}

START_TEST(test_digest_vector)
{
	struct imgwalk_result	 r;
	struct sha256_ctx	 c;
	uint8_t			 md[SHA256_LEN];
	char			 err[256], want[65];
	int			 i;

	dir("t", 0755);
	/* Made in an order the walk does not follow. */
	put("t/b", "bee\n", 0644);
	dir("t/a", 0750);
	put("t/a/x", "", 0600);
	lnk("../b", "t/a/l");
	dir("t/a-c", 0700);
	put("t/a-c/y", "why", 0755);
	ck_assert_int_eq(walk("t", NULL, NULL, &r, err, sizeof(err)), 0);

	/* Pre-order, each directory sorted: a, a/l, a/x, a-c, a-c/y, b. */
	sha256_init(&c);
	rec(&c, "a", 'd', 0750, 0, NULL);
	rec(&c, "a/l", 'l', 0777, 4, "../b");
	rec(&c, "a/x", 'f', 0600, 0, "");
	rec(&c, "a-c", 'd', 0700, 0, NULL);
	rec(&c, "a-c/y", 'f', 0755, 3, "why");
	rec(&c, "b", 'f', 0644, 4, "bee\n");
	sha256_final(&c, md);
	for (i = 0; i < SHA256_LEN; i++)
		snprintf(want + 2 * i, 3, "%02x", md[i]);
	ck_assert_str_eq(r.hex, want);
	ck_assert_uint_eq(r.entries, 6);
	ck_assert_uint_eq(r.files, 3);
	ck_assert_uint_eq(r.bytes, 7);
}
END_TEST

static void
tree(const char *t, int order)
{
	char	 p[64];

	dir(t, 0755);
	snprintf(p, sizeof(p), "%s/d", t);
	if (order) {
		dir(p, 0755);
		snprintf(p, sizeof(p), "%s/d/f", t);
		put(p, "x", 0644);
		snprintf(p, sizeof(p), "%s/e", t);
		put(p, "y", 0644);
	} else {
		snprintf(p, sizeof(p), "%s/e", t);
		put(p, "y", 0644);
		snprintf(p, sizeof(p), "%s/d", t);
		dir(p, 0755);
		snprintf(p, sizeof(p), "%s/d/f", t);
		put(p, "x", 0644);
	}
}

START_TEST(test_digest_changes)
{
	struct imgwalk_result	 r1, r2;
	char			 err[256], p[PATH_MAX];

	tree("t1", 0);
	tree("t2", 1);
	ck_assert_int_eq(walk("t1", NULL, NULL, &r1, err, sizeof(err)), 0);
	ck_assert_int_eq(walk("t2", NULL, NULL, &r2, err, sizeof(err)), 0);
	ck_assert_str_eq(r1.hex, r2.hex);	/* order of making */

	snprintf(p, sizeof(p), "%s/t2/e", top);
	ck_assert_int_eq(utimensat(AT_FDCWD, p, NULL, 0), 0);
	ck_assert_int_eq(walk("t2", NULL, NULL, &r2, err, sizeof(err)), 0);
	ck_assert_str_eq(r1.hex, r2.hex);	/* times are not in it */

	ck_assert_int_eq(chmod(p, 0664), 0);
	ck_assert_int_eq(walk("t2", NULL, NULL, &r2, err, sizeof(err)), 0);
	ck_assert_str_ne(r1.hex, r2.hex);	/* modes are */
	ck_assert_int_eq(chmod(p, 0644), 0);

	put("t2/e", "z", 0644);
	ck_assert_int_eq(walk("t2", NULL, NULL, &r2, err, sizeof(err)), 0);
	ck_assert_str_ne(r1.hex, r2.hex);	/* contents are */
	put("t2/e", "y", 0644);
	ck_assert_int_eq(walk("t2", NULL, NULL, &r2, err, sizeof(err)), 0);
	ck_assert_str_eq(r1.hex, r2.hex);

	lnk("a", "t1/s");
	lnk("b", "t2/s");
	ck_assert_int_eq(walk("t1", NULL, NULL, &r1, err, sizeof(err)), 0);
	ck_assert_int_eq(walk("t2", NULL, NULL, &r2, err, sizeof(err)), 0);
	ck_assert_str_ne(r1.hex, r2.hex);	/* link targets are */

	/* A file and an empty directory of one name differ. */
	dir("t3", 0755);
	put("t3/n", "", 0755);
	dir("t4", 0755);
	dir("t4/n", 0755);
	ck_assert_int_eq(walk("t3", NULL, NULL, &r1, err, sizeof(err)), 0);
	ck_assert_int_eq(walk("t4", NULL, NULL, &r2, err, sizeof(err)), 0);
	ck_assert_str_ne(r1.hex, r2.hex);
}
END_TEST

START_TEST(test_walk_refuses)
{
	struct imgwalk_result	 r;
	char			 err[256], p[PATH_MAX], q[PATH_MAX];

	dir("t", 0755);
	snprintf(p, sizeof(p), "%s/t/fifo", top);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	ck_assert_int_eq(walk("t", NULL, NULL, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "fifo: neither"));
	unlink(p);

	/* A hard link inside is fine; one whose other name is out is not. */
	put("t/f", "data", 0644);
	snprintf(p, sizeof(p), "%s/t/f", top);
	snprintf(q, sizeof(q), "%s/t/g", top);
	ck_assert_int_eq(link(p, q), 0);
	ck_assert_int_eq(walk("t", NULL, NULL, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.files, 2);
	snprintf(q, sizeof(q), "%s/outside", top);
	ck_assert_int_eq(link(p, q), 0);
	ck_assert_int_eq(walk("t", NULL, NULL, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "outside the tree"));
	unlink(q);

	ck_assert_int_eq(chmod(p, 04755), 0);
	ck_assert_int_eq(walk("t", NULL, NULL, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "setuid"));
	ck_assert_int_eq(chmod(p, 0755), 0);
	ck_assert_int_eq(walk("t", NULL, NULL, &r, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_canon_compare)
{
	struct imgwalk_result	 r, r2;
	char			 err[256], p[PATH_MAX];
	FILE			*f;
	int			 i;

	dir("t", 0755);
	dir("t/etc", 0755);
	put("t/etc/hostname", "box\n", 0644);
	put("t/z", "last", 0644);
	snprintf(p, sizeof(p), "%s/canon", top);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_int_eq(walk("t", f, NULL, &r, err, sizeof(err)), 0);
	fclose(f);

	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	ck_assert_int_eq(walk("t", NULL, f, &r2, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_str_eq(r.hex, r2.hex);

	/* One byte changed: the walk stops there and says so. */
	put("t/etc/hostname", "bux\n", 0644);
	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	ck_assert_int_eq(walk("t", NULL, f, &r2, err, sizeof(err)), -1);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(err, "etc/hostname: stored"));

	/* An entry gone, one added. */
	put("t/etc/hostname", "box\n", 0644);
	snprintf(p, sizeof(p), "%s/t/z", top);
	unlink(p);
	snprintf(p, sizeof(p), "%s/canon", top);
	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	ck_assert_int_eq(walk("t", NULL, f, &r2, err, sizeof(err)), -1);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(err, "lacks"));
	put("t/z", "last", 0644);
	put("t/zz", "extra", 0644);
	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	ck_assert_int_eq(walk("t", NULL, f, &r2, err, sizeof(err)), -1);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(err, "zz: in the tree"));

	/* Deeper than one descriptor per level could go. */
	snprintf(p, sizeof(p), "%s/deep", top);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	for (i = 0; i < 1500 && strlen(p) + 3 < sizeof(p); i++) {
		strlcat(p, "/d", sizeof(p));
		ck_assert_int_eq(mkdir(p, 0755), 0);
	}
	ck_assert_int_eq(walk("deep", NULL, NULL, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.entries, (unsigned)i);
}
END_TEST

static Suite *
imgtree_suite(void)
{
	Suite	*s = suite_create("imgtree");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);	/* the deep tree, on a loaded host */
	tcase_add_test(tc, test_path_clean);
	tcase_add_test(tc, test_digest_vector);
	tcase_add_test(tc, test_digest_changes);
	tcase_add_test(tc, test_walk_refuses);
	tcase_add_test(tc, test_canon_compare);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(imgtree_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? 0 : 1);
}
