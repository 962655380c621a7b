/*
 * sandbox/cgprobe.c, the launcher's cgroup probe: where the attempts'
 * cgroups go, decided from the texts of /proc/self/mountinfo and
 * /proc/self/cgroup as the kernel writes them on a hybrid host (v1
 * controllers and a cgroup2 without any), on a pure v2 host with and
 * without controllers, under systemd's Delegate=yes (its xattr) and
 * after a restart inside our own leaf; odd /proc/self/cgroup contents,
 * refused.  And cgroup.c's parent of the attempts' cgroups.
 */
#include <sys/stat.h>
#include <sys/xattr.h>

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../supervisord-factory/sandbox.h"
#include "probemsg.h"

/* This machine's, shortened: systemd-less hybrid. */
static const char hybrid[] =
    "24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs "
    "sysfs rw\n"
    "27 24 0:25 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs "
    "tmpfs ro,mode=755\n"
    "28 27 0:26 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime "
    "shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
    "31 27 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime "
    "shared:13 - cgroup cgroup rw,memory\n"
    "32 27 0:30 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime "
    "shared:14 - cgroup cgroup rw,pids\n"
    "33 27 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,"
    "relatime shared:15 - cgroup cgroup rw,cpu,cpuacct\n";

/* Debian 12 with systemd: one cgroup2 at /sys/fs/cgroup. */
static const char purev2[] =
    "24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs "
    "sysfs rw\n"
    "26 24 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime "
    "shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

START_TEST(test_layout)
{
	char	 why[128];

	ck_assert_int_eq(cgprobe_layout(hybrid, "", why, sizeof(why)),
	    PROBE_CG_HYBRID);
	/* Pure v2: v2 whatever the root offers; probe checks our own. */
	ck_assert_int_eq(cgprobe_layout(purev2, "cpuset cpu io memory pids",
	    why, sizeof(why)), PROBE_CG_V2);
	ck_assert_int_eq(cgprobe_layout(purev2, "", why, sizeof(why)),
	    PROBE_CG_V2);
	ck_assert_int_eq(cgprobe_layout(purev2, NULL, why, sizeof(why)),
	    PROBE_CG_V2);
	/* No cgroup at all, and v1 without pids. */
	ck_assert_int_eq(cgprobe_layout("24 30 0:22 / /sys rw - sysfs sysfs "
	    "rw\n", NULL, why, sizeof(why)), PROBE_CG_FAIL);
	ck_assert_str_eq(why, "no memory controller");
	ck_assert_int_eq(cgprobe_layout("31 27 0:29 / /sys/fs/cgroup/memory "
	    "rw - cgroup cgroup rw,memory\n", NULL, why, sizeof(why)),
	    PROBE_CG_FAIL);
	ck_assert_str_eq(why, "no pids controller");
	/* An escaped (space in it) mount point is not used. */
	ck_assert_int_eq(cgprobe_layout("26 24 0:24 / /sys/fs/cg\\040x rw - "
	    "cgroup2 cgroup2 rw\n", NULL, why, sizeof(why)), PROBE_CG_FAIL);
}
END_TEST

START_TEST(test_self_path)
{
	char	 own[64];

	ck_assert_int_eq(cgprobe_self_path("0::/system.slice/factoryd."
	    "service\n", own, sizeof(own)), 0);
	ck_assert_str_eq(own, "/system.slice/factoryd.service");
	/* Hybrid: v1 lines first, the cgroup2 one last. */
	ck_assert_int_eq(cgprobe_self_path("12:pids:/\n11:memory:/x\n"
	    "1:name=systemd:/init.scope\n0::/init.scope\n", own,
	    sizeof(own)), 0);
	ck_assert_str_eq(own, "/init.scope");
	ck_assert_int_eq(cgprobe_self_path("0::/\n", own, sizeof(own)), 0);
	ck_assert_str_eq(own, "/");
	/* None, relative, too long for the buffer. */
	ck_assert_int_eq(cgprobe_self_path("12:pids:/\n", own, sizeof(own)),
	    -1);
	ck_assert_int_eq(cgprobe_self_path("0::x/y\n", own, sizeof(own)), -1);
	ck_assert_int_eq(cgprobe_self_path("0::/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", own,
	    sizeof(own)), -1);
	ck_assert_int_eq(cgprobe_self_path("", own, sizeof(own)), -1);
}
END_TEST

START_TEST(test_base)
{
	char	 b[256];

	/* The root: today's paths. */
	ck_assert_int_eq(cgprobe_base_of("/", b, sizeof(b)), 0);
	ck_assert_str_eq(b, "");
	/* systemd's Delegate=yes: the unit's cgroup. */
	ck_assert_int_eq(cgprobe_base_of("/system.slice/factoryd.service", b,
	    sizeof(b)), 0);
	ck_assert_str_eq(b, "system.slice/factoryd.service");
	/* Restarted inside our own leaf: the same subtree, same paths. */
	ck_assert_int_eq(cgprobe_base_of("/system.slice/factoryd.service/"
	    "supervisor", b, sizeof(b)), 0);
	ck_assert_str_eq(b, "system.slice/factoryd.service");
	ck_assert_int_eq(cgprobe_base_of("/supervisor", b, sizeof(b)), 0);
	ck_assert_str_eq(b, "");
	/* Only the whole last name is our leaf. */
	ck_assert_int_eq(cgprobe_base_of("/a/xsupervisor", b, sizeof(b)), 0);
	ck_assert_str_eq(b, "a/xsupervisor");
	ck_assert_int_eq(cgprobe_base_of("/a/supervisor/b", b, sizeof(b)), 0);
	ck_assert_str_eq(b, "a/supervisor/b");
	/* Odd paths are not a base to write below. */
	ck_assert_int_eq(cgprobe_base_of("a/b", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a/../b", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a/./b", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a//b", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a/", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a b", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a\\b", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a\x01", b, sizeof(b)), -1);
	/* Not ASCII: status -j's json_pack would fail on it (rev of 18). */
	ck_assert_int_eq(cgprobe_base_of("/caf\xe9", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/caf\xc3\xa9", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/a\x7f", b, sizeof(b)), -1);
	ck_assert_int_eq(cgprobe_base_of("/abcdefgh", b, 4), -1);
}
END_TEST

/* The delegation test is on files; a plain directory lacks them. */
START_TEST(test_writable)
{
	char	 dir[] = "/tmp/test_cgroup.XXXXXX", f[PATH_MAX];
	FILE	*fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cgprobe_writable(dir), 0);
	snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dir);
	ck_assert_ptr_nonnull(fp = fopen(f, "w"));
	fclose(fp);
	ck_assert_int_eq(cgprobe_writable(dir), 0);	/* no cgroup.procs */
	snprintf(f, sizeof(f), "%s/cgroup.procs", dir);
	ck_assert_ptr_nonnull(fp = fopen(f, "w"));
	fclose(fp);
	ck_assert_int_eq(cgprobe_writable(dir), 1);
	unlink(f);
	snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dir);
	unlink(f);
	rmdir(dir);
}
END_TEST

/*
 * Under systemd, writable is not enough: the unit's cgroup carries
 * systemd's "delegate" xattr when it says Delegate=yes.
 */
START_TEST(test_delegated)
{
	char	 dir[] = "/tmp/test_cgroup.XXXXXX", f[PATH_MAX], g[PATH_MAX];
	FILE	*fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cgprobe_delegated(dir, 0), 0);	/* no files */
	snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dir);
	ck_assert_ptr_nonnull(fp = fopen(f, "w"));
	fclose(fp);
	snprintf(f, sizeof(f), "%s/cgroup.procs", dir);
	ck_assert_ptr_nonnull(fp = fopen(f, "w"));
	fclose(fp);
	ck_assert_int_eq(cgprobe_delegated(dir, 0), 1);
	ck_assert_int_eq(cgprobe_delegated(dir, 1), 0);
	/* Another value is no delegation; "1" is. */
	if (setxattr(dir, "trusted.delegate", "0", 1, 0) == 0) {
		ck_assert_int_eq(cgprobe_delegated(dir, 1), 0);
		ck_assert_int_eq(setxattr(dir, "trusted.delegate", "1", 1, 0),
		    0);
		ck_assert_int_eq(cgprobe_delegated(dir, 1), 1);
		ck_assert_int_eq(removexattr(dir, "trusted.delegate"), 0);
	}
	/* A user manager's mark, which the owner may set: not taken. */
	if (setxattr(dir, "user.delegate", "1", 1, 0) == 0) {
		ck_assert_int_eq(cgprobe_delegated(dir, 1), 0);
		ck_assert_int_eq(removexattr(dir, "user.delegate"), 0);
	}
	/*
	 * A cgroup, or either file that hands it over, owned by a user:
	 * hers, not ours, with systemd's mark or without systemd.
	 */
	(void)setxattr(dir, "trusted.delegate", "1", 1, 0);
	ck_assert_int_eq(chown(dir, 69401, 69401), 0);
	ck_assert_int_eq(cgprobe_delegated(dir, 0), 0);
	ck_assert_int_eq(cgprobe_delegated(dir, 1), 0);
	ck_assert_int_eq(chown(dir, 0, 0), 0);
	ck_assert_int_eq(chown(f, 69401, 69401), 0);		/* procs */
	ck_assert_int_eq(cgprobe_delegated(dir, 0), 0);
	ck_assert_int_eq(chown(f, 0, 0), 0);
	snprintf(g, sizeof(g), "%s/cgroup.subtree_control", dir);
	ck_assert_int_eq(chown(g, 69401, 69401), 0);
	ck_assert_int_eq(cgprobe_delegated(dir, 0), 0);
	ck_assert_int_eq(chown(g, 0, 0), 0);
	ck_assert_int_eq(cgprobe_delegated(dir, 0), 1);
	(void)removexattr(dir, "trusted.delegate");
	unlink(f);
	snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dir);
	unlink(f);
	rmdir(dir);
}
END_TEST

/* An ancestor a user owns (or its procs, its subtree_control): not ours. */
START_TEST(test_ancestors)
{
	char	 root[] = "/tmp/test_cgroup.XXXXXX", p[PATH_MAX];
	const char *const files[] = { "", "/cgroup.procs",
	    "/cgroup.subtree_control" };
	size_t	 i;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(p, sizeof(p), "mkdir -p %s/a/b/c && touch %s/a/cgroup.procs "
	    "%s/a/cgroup.subtree_control %s/a/b/cgroup.procs "
	    "%s/a/b/cgroup.subtree_control", root, root, root, root, root);
	ck_assert_int_eq(system(p), 0);
	ck_assert_int_eq(cgprobe_ancestors_owned(root, "a"), 1);
	ck_assert_int_eq(cgprobe_ancestors_owned(root, "a/b/c"), 1);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/a%s", root, files[i]);
		ck_assert_int_eq(chown(p, 69401, 69401), 0);
		ck_assert_int_eq(cgprobe_ancestors_owned(root, "a/b/c"), 0);
		ck_assert_int_eq(cgprobe_ancestors_owned(root, "a/b"), 0);
		/* The base itself is cgprobe_delegated's to check. */
		ck_assert_int_eq(cgprobe_ancestors_owned(root, "a"), 1);
		ck_assert_int_eq(chown(p, 0, 0), 0);
	}
	snprintf(p, sizeof(p), "rm -rf %s", root);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

/* The parent named to the reconciler: the instance, under the base. */
START_TEST(test_parent)
{
	sandbox_set_instance("0123abcd");
	ck_assert_str_eq(sandbox_cgroup_parent(), "factory/0123abcd");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("cgroup");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_self_path);
	tcase_add_test(tc, test_base);
	tcase_add_test(tc, test_writable);
	tcase_add_test(tc, test_delegated);
	tcase_add_test(tc, test_ancestors);
	tcase_add_test(tc, test_parent);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? 0 : 1);
}
