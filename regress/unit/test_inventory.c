/*
 * Unit tests of reconciler/inventory.c and reconciler/dispatch.c: the
 * listings on fake trees (bad names, symbolic links, FIFOs, junk), a
 * real process under a test uid, real repositories, and one request
 * answered over a socketpair as the parent would send it.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <git2.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factory.h"
#include "imsgev.h"
#include "invmsg.h"
#include "../../reconciler/reconciler.h"
#include "../reconciler/invtok.h"

#define TEST_UID	61990		/* the test's attempt uid range */

static char	 base[] = "/tmp/test_inventory.XXXXXX";

/* Unchecked fixture: runs in the runner, also after a failed test. */
static void
setup(void)
{
	if (mkdtemp(base) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	if (flag == FTW_DP)
		return (rmdir(path));
	return (unlink(path));
}

static void
teardown(void)
{
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory for one test: base/name. */
static const char *
tdir(const char *name)
{
	static char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", base, name);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	return (path);
}

static void
mkdirf(const char *fmt, ...)
	__attribute__((__format__ (printf, 1, 2)));
static void
mkdirf(const char *fmt, ...)
{
	char	 path[PATH_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path,
	    strerror(errno));
}

static void
writef(const char *path, const char *text)
{
	FILE	*f;

	ck_assert_msg((f = fopen(path, "w")) != NULL, "%s", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void
symlinkf(const char *target, const char *path)
{
	ck_assert_msg(symlink(target, path) == 0, "symlink %s: %s", path,
	    strerror(errno));
}

/* Does the array of strings hold exactly want (in order)? */
static void
assert_strings(json_t *arr, const char **want, size_t n)
{
	size_t	 i;

	ck_assert_msg(json_array_size(arr) == n, "%zu entries, want %zu",
	    json_array_size(arr), n);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(json_string_value(json_array_get(arr, i)),
		    want[i]);
}

/* The element of arr whose member key has the string value val. */
static json_t *
find_by(json_t *arr, const char *key, const char *val)
{
	size_t	 i;
	json_t	*e;

	json_array_foreach(arr, i, e)
		if (strcmp(json_str(e, key), val) == 0)
			return (e);
	return (NULL);
}

START_TEST(test_id_valid)
{
	ck_assert(inv_id_valid("a-20261129-0001", 0));
	ck_assert(inv_id_valid("a-20261129-123456", 0));
	ck_assert(inv_id_valid("a-20261129-0001-v", 1));
	ck_assert(!inv_id_valid("a-20261129-0001-v", 0));
	ck_assert(!inv_id_valid("a-20261129-001", 0));
	ck_assert(!inv_id_valid("a-2026112-0001", 0));
	ck_assert(!inv_id_valid("a-20261129_0001", 0));
	ck_assert(!inv_id_valid("b-20261129-0001", 0));
	ck_assert(!inv_id_valid("a-20261129-0001 ", 0));
	ck_assert(!inv_id_valid("a-20261129-0001/x", 0));
	ck_assert(!inv_id_valid("a-20261129-0001-vv", 1));
	ck_assert(!inv_id_valid("a-20261129-0001-w", 1));
	ck_assert(!inv_id_valid("a-", 0));
	ck_assert(!inv_id_valid("", 0));
	ck_assert(!inv_id_valid("../a-20261129-0001", 0));
	/* Longer than an attempt id can be. */
	ck_assert(!inv_id_valid("a-20261129-00000000000000000000001", 0));
}
END_TEST

START_TEST(test_parse_uids)
{
	uid_t	 lo, hi;

	ck_assert_int_eq(inv_parse_uids("60000-60999", &lo, &hi), 0);
	ck_assert_uint_eq(lo, 60000);
	ck_assert_uint_eq(hi, 60999);
	ck_assert_int_eq(inv_parse_uids("5-5", &lo, &hi), 0);
	ck_assert_int_eq(inv_parse_uids("6-5", &lo, &hi), -1);
	ck_assert_int_eq(inv_parse_uids("0-5", &lo, &hi), -1);
	ck_assert_int_eq(inv_parse_uids("5", &lo, &hi), -1);
	ck_assert_int_eq(inv_parse_uids("5-", &lo, &hi), -1);
	ck_assert_int_eq(inv_parse_uids("-5-6", &lo, &hi), -1);
	ck_assert_int_eq(inv_parse_uids("5--6", &lo, &hi), -1);
	ck_assert_int_eq(inv_parse_uids("5-6x", &lo, &hi), -1);
	ck_assert_int_eq(inv_parse_uids("5-99999999999999999999", &lo, &hi),
	    -1);
	ck_assert_int_eq(inv_parse_uids(NULL, &lo, &hi), -1);
}
END_TEST

/* state/attempts with good ids, bad names, a symlink and a file. */
static void
make_state(const char *s)
{
	char	 p[PATH_MAX];

	mkdirf("%s/attempts", s);
	mkdirf("%s/attempts/a-20261129-0001", s);
	mkdirf("%s/attempts/a-20261129-0002", s);
	mkdirf("%s/attempts/a-20261129-12345", s);
	mkdirf("%s/attempts/a-20261129-0003 x", s);
	mkdirf("%s/attempts/a-2026112-0006", s);
	mkdirf("%s/attempts/a-20261129-0007-v", s);
	mkdirf("%s/attempts/.hidden", s);
	snprintf(p, sizeof(p), "%s/attempts/a-20261129-0004", s);
	symlinkf("/", p);
	snprintf(p, sizeof(p), "%s/attempts/a-20261129-0005", s);
	writef(p, "not a directory\n");
}
#define STATE_SKIPPED	6

START_TEST(test_attempt_dirs)
{
	const char	*want[] = { "a-20261129-0001", "a-20261129-0002",
			    "a-20261129-12345" };
	struct inv_tally t;
	char		 s[PATH_MAX], p[PATH_MAX];
	json_t		*arr;

	strlcpy(s, tdir("dirs"), sizeof(s));
	make_state(s);
	inv_tally_init(&t);
	snprintf(p, sizeof(p), "%s/attempts", s);
	arr = inv_list_dir(p, &t);
	assert_strings(arr, want, 3);
	ck_assert_int_eq(t.skipped, STATE_SKIPPED);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);

	/* A missing directory is empty, not an error. */
	snprintf(p, sizeof(p), "%s/verify", s);
	arr = inv_list_dir(p, &t);
	ck_assert_uint_eq(json_array_size(arr), 0);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);

	/* A file where a directory should be is one. */
	snprintf(p, sizeof(p), "%s/attempts/a-20261129-0005", s);
	arr = inv_list_dir(p, &t);
	ck_assert_uint_eq(json_array_size(arr), 0);
	ck_assert_uint_eq(json_array_size(t.errors), 1);
	json_decref(arr);
	inv_tally_free(&t);
}
END_TEST

/*
 * A hybrid cgroup tree: v1 controllers (memory, cpu,cpuacct with its
 * cpu symlink, pids whose factory is a symlink), unified, junk.
 */
static void
make_cgroups(const char *r)
{
	char	 p[PATH_MAX], q[PATH_MAX];

	mkdirf("%s/memory", r);
	mkdirf("%s/memory/factory", r);
	mkdirf("%s/memory/factory/a-20261129-0001", r);
	mkdirf("%s/memory/factory/a-20261129-0001-v", r);
	mkdirf("%s/memory/factory/junk", r);
	snprintf(p, sizeof(p), "%s/memory/factory/tasks", r);
	writef(p, "");
	snprintf(p, sizeof(p), "%s/memory/factory/a-20261129-0002", r);
	symlinkf("/tmp", p);
	mkdirf("%s/cpu,cpuacct", r);
	mkdirf("%s/cpu,cpuacct/factory", r);
	mkdirf("%s/cpu,cpuacct/factory/a-20261129-0001", r);
	snprintf(p, sizeof(p), "%s/cpu", r);
	symlinkf("cpu,cpuacct", p);
	mkdirf("%s/unified", r);
	mkdirf("%s/unified/factory", r);
	mkdirf("%s/unified/factory/a-20261129-0001", r);
	mkdirf("%s/blkio", r);
	mkdirf("%s/pids", r);
	snprintf(p, sizeof(p), "%s/pids/factory", r);
	snprintf(q, sizeof(q), "%s/memory/factory", r);
	symlinkf(q, p);
	snprintf(p, sizeof(p), "%s/cgroup.file", r);
	writef(p, "");
}
/* junk, a symlinked cgroup, pids/factory */
#define CGROUPS_SKIPPED	3

START_TEST(test_cgroups)
{
	struct inv_tally t;
	char		 r[PATH_MAX], w[4][PATH_MAX];
	const char	*want[4];
	json_t		*arr;
	int		 i;

	strlcpy(r, tdir("cg"), sizeof(r));
	make_cgroups(r);
	snprintf(w[0], sizeof(w[0]), "%s/cpu,cpuacct/factory/a-20261129-0001",
	    r);
	snprintf(w[1], sizeof(w[1]), "%s/memory/factory/a-20261129-0001", r);
	snprintf(w[2], sizeof(w[2]), "%s/memory/factory/a-20261129-0001-v",
	    r);
	snprintf(w[3], sizeof(w[3]), "%s/unified/factory/a-20261129-0001", r);
	for (i = 0; i < 4; i++)
		want[i] = w[i];
	inv_tally_init(&t);
	arr = inv_list_cgroups(r, &t);
	assert_strings(arr, want, 4);
	ck_assert_int_eq(t.skipped, CGROUPS_SKIPPED);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);
	inv_tally_free(&t);

	/* Pure cgroup2: root/factory/<id>. */
	strlcpy(r, tdir("cg2"), sizeof(r));
	mkdirf("%s/factory", r);
	mkdirf("%s/factory/a-20261129-0001", r);
	mkdirf("%s/factory/a-20261129-0001-v", r);
	mkdirf("%s/system.slice", r);
	snprintf(w[0], sizeof(w[0]), "%s/factory/cgroup.procs", r);
	writef(w[0], "");
	snprintf(w[0], sizeof(w[0]), "%s/factory/a-20261129-0001", r);
	snprintf(w[1], sizeof(w[1]), "%s/factory/a-20261129-0001-v", r);
	inv_tally_init(&t);
	arr = inv_list_cgroups(r, &t);
	assert_strings(arr, want, 2);
	ck_assert_int_eq(t.skipped, 0);
	json_decref(arr);

	/* The host's tree reads without error. */
	arr = inv_list_cgroups("/sys/fs/cgroup", &t);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);
	inv_tally_free(&t);
}
END_TEST

/* A fake /proc: a process in range with a hostile name, others not. */
static void
make_proc(const char *r)
{
	char	 p[PATH_MAX];

	mkdirf("%s/123", r);
	snprintf(p, sizeof(p), "%s/123/status", r);
	writef(p, "Name:\tevil\nUmask:\t0022\nUid:\t61990\t61990\t61990\t"
	    "61990\nGid:\t61990\t61990\t61990\t61990\n");
	snprintf(p, sizeof(p), "%s/123/comm", r);
	writef(p, "ev\x01il\xc3\n");
	mkdirf("%s/125", r);
	snprintf(p, sizeof(p), "%s/125/status", r);
	writef(p, "Name:\tother\nUid:\t1000\t61990\t61990\t61990\n");
	snprintf(p, sizeof(p), "%s/124", r);
	symlinkf("123", p);
	snprintf(p, sizeof(p), "%s/self", r);
	symlinkf("123", p);
	mkdirf("%s/sys", r);
}

START_TEST(test_processes_fake)
{
	struct inv_tally t;
	char		 r[PATH_MAX], p[PATH_MAX];
	json_t		*arr, *e;

	strlcpy(r, tdir("proc"), sizeof(r));
	make_proc(r);
	inv_tally_init(&t);
	arr = inv_list_processes(r, TEST_UID, TEST_UID + 1, &t);
	ck_assert_uint_eq(json_array_size(arr), 1);
	e = json_array_get(arr, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "pid")), 123);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "uid")),
	    TEST_UID);
	ck_assert_str_eq(json_str(e, "comm"), "ev?il?");
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);

	/* A status without its Uid line is reported, not guessed at. */
	mkdirf("%s/126", r);
	snprintf(p, sizeof(p), "%s/126/status", r);
	writef(p, "Name:\tx\n");
	arr = inv_list_processes(r, TEST_UID, TEST_UID + 1, &t);
	ck_assert_uint_eq(json_array_size(arr), 1);
	ck_assert_uint_eq(json_array_size(t.errors), 1);
	json_decref(arr);
	inv_tally_free(&t);
}
END_TEST

/* Wait until pid has exec'd sleep (its comm says so). */
static int
wait_comm(pid_t pid, const char *want)
{
	char	 path[64], buf[64];
	FILE	*f;
	int	 i;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	for (i = 0; i < 500; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(buf, sizeof(buf), f) != NULL &&
			    strncmp(buf, want, strlen(want)) == 0 &&
			    buf[strlen(want)] == '\n') {
				fclose(f);
				return (0);
			}
			fclose(f);
		}
		usleep(10000);
	}
	return (-1);
}

START_TEST(test_processes_real)
{
	struct inv_tally t;
	json_t		*arr, *e;
	pid_t		 pid, ppid = getpid();
	int		 status;

	switch (pid = fork()) {
	case -1:
		ck_abort_msg("fork: %s", strerror(errno));
		break;
	case 0:
		if (setgroups(0, NULL) == -1 ||
		    setresgid(TEST_UID, TEST_UID, TEST_UID) == -1 ||
		    setresuid(TEST_UID, TEST_UID, TEST_UID) == -1)
			_exit(1);
		/* After setuid, which clears it: die with the test. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
		    getppid() != ppid)
			_exit(1);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(1);
	}
	ck_assert_msg(wait_comm(pid, "sleep") == 0, "child never slept");
	inv_tally_init(&t);
	arr = inv_list_processes("/proc", TEST_UID, TEST_UID + 1, &t);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	ck_assert_uint_eq(json_array_size(arr), 1);
	e = json_array_get(arr, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "pid")), pid);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "uid")),
	    TEST_UID);
	ck_assert_str_eq(json_str(e, "comm"), "sleep");
	json_decref(arr);

	/* Our own uid is out of range: nothing. */
	arr = inv_list_processes("/proc", TEST_UID, TEST_UID + 1, &t);
	ck_assert_uint_eq(json_array_size(arr), 0);
	json_decref(arr);
	inv_tally_free(&t);
}
END_TEST

static void
make_mountinfo(const char *path, const char *s)
{
	FILE	*f;

	ck_assert((f = fopen(path, "w")) != NULL);
	fprintf(f, "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n");
	fprintf(f, "30 22 0:50 / %s rw - tmpfs tmpfs rw\n", s);
	fprintf(f, "31 22 0:51 / %s/attempts/a-20261129-0001/tree rw "
	    "shared:5 master:2 - overlay overlay rw,lowerdir=/x\n", s);
	fprintf(f, "32 22 0:52 / %s/with\\040space rw - tmpfs tmpfs rw\n", s);
	fprintf(f, "33 22 0:53 / %sX/foo rw - tmpfs tmpfs rw\n", s);
	fprintf(f, "34 22 0:54 / %s/verify/a-20261129-0002 rw - tmpfs "
	    "tmpfs rw\n", s);
	fprintf(f, "35 22 0:55 / %s/attempts/bad\001name rw - tmpfs tmpfs "
	    "rw\n", s);
	fprintf(f, "36 22 0:56 / %s/attempts/not-an-id/x rw - tmpfs tmpfs "
	    "rw\n", s);
	fprintf(f, "garbage line\n");
	fprintf(f, "37 22 0:57 / %s/no-separator rw tmpfs\n", s);
	ck_assert_int_eq(fclose(f), 0);
}
#define MOUNTS_SKIPPED	1

START_TEST(test_mounts)
{
	struct inv_tally t;
	char		 s[PATH_MAX], mi[PATH_MAX], below[PATH_MAX];
	json_t		*arr, *e;

	strlcpy(s, tdir("mnt"), sizeof(s));
	snprintf(mi, sizeof(mi), "%s/mountinfo", s);
	make_mountinfo(mi, s);
	snprintf(below, sizeof(below), "%s//", s);	/* trailing slashes */
	inv_tally_init(&t);
	arr = inv_list_mounts(mi, below, &t);
	/* Only attempts' mounts, by id: no paths reach the parent. */
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_int_eq(t.skipped, MOUNTS_SKIPPED);
	ck_assert_ptr_nonnull(e = find_by(arr, "id", "a-20261129-0001"));
	ck_assert(json_is_false(json_object_get(e, "verify")));
	ck_assert_uint_eq(json_object_size(e), 2);
	ck_assert_ptr_nonnull(e = find_by(arr, "id", "a-20261129-0002"));
	ck_assert(json_is_true(json_object_get(e, "verify")));
	json_decref(arr);

	/* The real table reads; nothing of an attempt below /sys. */
	arr = inv_list_mounts("/proc/self/mountinfo", "/sys", &t);
	ck_assert_uint_eq(json_array_size(arr), 0);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);

	arr = inv_list_mounts("/nonexistent/mountinfo", "/", &t);
	ck_assert_uint_eq(json_array_size(arr), 0);
	ck_assert_uint_eq(json_array_size(t.errors), 1);
	json_decref(arr);
	inv_tally_free(&t);
}
END_TEST

/* A bare repository with one empty commit; its hex in hex. */
static git_repository *
make_repo(const char *path, char *hex)
{
	git_repository	*repo;
	git_treebuilder	*tb;
	git_signature	*sig;
	git_oid		 tree_oid, commit_oid;
	git_tree	*tree;

	ck_assert_int_eq(git_repository_init(&repo, path, 1), 0);
	ck_assert_int_eq(git_treebuilder_new(&tb, repo, NULL), 0);
	ck_assert_int_eq(git_treebuilder_write(&tree_oid, tb), 0);
	git_treebuilder_free(tb);
	ck_assert_int_eq(git_tree_lookup(&tree, repo, &tree_oid), 0);
	ck_assert_int_eq(git_signature_new(&sig, "t", "t@localhost",
	    1700000000, 0), 0);
	ck_assert_int_eq(git_commit_create(&commit_oid, repo, NULL, sig, sig,
	    NULL, "base\n", tree, 0, NULL), 0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, &commit_oid);
	return (repo);
}

static void
make_ref(git_repository *repo, const char *name, const char *hex)
{
	git_reference	*ref;
	git_oid		 oid;

	ck_assert_int_eq(git_oid_fromstr(&oid, hex), 0);
	ck_assert_int_eq(git_reference_create(&ref, repo, name, &oid, 0,
	    NULL), 0);
	git_reference_free(ref);
}

/* repo: one factory branch, main, and three refused names. */
static void
make_repos(const char *dir, char *repo, char *remote, char *hex1,
    char *hex2)
{
	git_repository	*r;
	git_reference	*ref;
	char		 p[PATH_MAX], text[256];

	ck_assert_int_eq(inv_git_init(), 0);
	snprintf(repo, PATH_MAX, "%s/demo.git", dir);
	r = make_repo(repo, hex1);
	make_ref(r, "refs/heads/factory/a-20261129-0001", hex1);
	make_ref(r, "refs/heads/main", hex1);
	make_ref(r, "refs/heads/factory/evil", hex1);
	make_ref(r, "refs/heads/factory/a-20261129-0002-v", hex1);
	ck_assert_int_eq(git_reference_symbolic_create(&ref, r,
	    "refs/heads/factory/a-20261129-0003", "refs/heads/main", 0,
	    NULL), 0);
	git_reference_free(ref);
	git_repository_free(r);

	/* The remote's branch is packed, as after a gc. */
	snprintf(remote, PATH_MAX, "%s/remote.git", dir);
	r = make_repo(remote, hex2);
	git_repository_free(r);
	snprintf(p, sizeof(p), "%s/packed-refs", remote);
	snprintf(text, sizeof(text), "# pack-refs with: peeled fully-peeled "
	    "sorted \n%s refs/heads/factory/a-20261129-0009\n", hex2);
	writef(p, text);
}
#define BRANCHES_SKIPPED	3

START_TEST(test_branches)
{
	struct inv_tally t;
	char		 d[PATH_MAX], repo[PATH_MAX], remote[PATH_MAX];
	char		 hex1[GIT_OID_HEXSZ + 1], hex2[GIT_OID_HEXSZ + 1];
	json_t		*arr, *e;

	strlcpy(d, tdir("git"), sizeof(d));
	make_repos(d, repo, remote, hex1, hex2);
	inv_tally_init(&t);
	arr = inv_list_branches(repo, &t);
	ck_assert_uint_eq(json_array_size(arr), 1);
	e = json_array_get(arr, 0);
	ck_assert_str_eq(json_str(e, "repo"), repo);
	ck_assert_str_eq(json_str(e, "id"), "a-20261129-0001");
	ck_assert_str_eq(json_str(e, "commit"), hex1);
	ck_assert_int_eq(t.skipped, BRANCHES_SKIPPED);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);

	arr = inv_list_branches(remote, &t);
	ck_assert_uint_eq(json_array_size(arr), 1);
	e = json_array_get(arr, 0);
	ck_assert_str_eq(json_str(e, "id"), "a-20261129-0009");
	ck_assert_str_eq(json_str(e, "commit"), hex2);
	json_decref(arr);

	/* Not a repository: an error, no search upwards. */
	snprintf(repo, sizeof(repo), "%s/demo.git/refs", d);
	arr = inv_list_branches(repo, &t);
	ck_assert_uint_eq(json_array_size(arr), 0);
	ck_assert_uint_eq(json_array_size(t.errors), 1);
	json_decref(arr);
	inv_tally_free(&t);
}
END_TEST

static void
make_pulls(const char *d)
{
	char	 p[PATH_MAX], q[PATH_MAX];

#define PULL(name, text) do {						\
	snprintf(p, sizeof(p), "%s/%s", d, name);			\
	writef(p, text);						\
} while (0)
	PULL("a-20261129-0001.json", "{\"number\": 1, \"attempt\": "
	    "\"a-20261129-0001\", \"head\": \"factory/a-20261129-0001\"}\n");
	PULL("a-20261129-0002.json", "{\"number\": 2, \"attempt\": "
	    "\"a-20261129-0002\"}\n");
	PULL(".lock", "");
	PULL("notes.txt", "hello\n");
	PULL("a-20261129-0003.json", "{not json");
	PULL("a-20261129-0004.json", "{\"number\": 4, \"attempt\": "
	    "\"a-20261129-0001\"}\n");
	PULL("bad.json", "{\"number\": 7, \"attempt\": \"bad\"}\n");
	PULL("a-20261129-0008.json", "{\"number\": \"8\", \"attempt\": "
	    "\"a-20261129-0008\"}\n");
	PULL("a-20261129-0011.json", "{\"number\": 0, \"attempt\": "
	    "\"a-20261129-0011\"}\n");
	PULL(".a-20261129-0009.json.tmp", "{}");
#undef PULL
	/* A link to a record that would be valid if it were followed. */
	snprintf(q, sizeof(q), "%s/../a-20261129-0005.json.outside", d);
	writef(q, "{\"number\": 5, \"attempt\": \"a-20261129-0005\"}\n");
	snprintf(p, sizeof(p), "%s/a-20261129-0005.json", d);
	symlinkf(q, p);
	snprintf(p, sizeof(p), "%s/a-20261129-0006.json", d);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	mkdirf("%s/a-20261129-0010.json", d);
}
#define PULLS_SKIPPED	10

START_TEST(test_pulls)
{
	struct inv_tally t;
	char		 d[PATH_MAX];
	json_t		*arr, *e;

	strlcpy(d, tdir("pulls"), sizeof(d));
	make_pulls(d);
	inv_tally_init(&t);
	alarm(10);	/* a FIFO that blocked us would hang here */
	arr = inv_list_pulls(d, &t);
	alarm(0);
	ck_assert_uint_eq(json_array_size(arr), 2);
	ck_assert_int_eq(t.skipped, PULLS_SKIPPED);
	ck_assert_ptr_nonnull(e = find_by(arr, "id", "a-20261129-0001"));
	ck_assert_int_eq(json_integer_value(json_object_get(e, "number")), 1);
	ck_assert_str_eq(json_str(e, "dir"), d);
	ck_assert_ptr_nonnull(e = find_by(arr, "id", "a-20261129-0002"));
	ck_assert_int_eq(json_integer_value(json_object_get(e, "number")), 2);
	ck_assert_uint_eq(json_array_size(t.errors), 0);
	json_decref(arr);
	inv_tally_free(&t);
}
END_TEST

/*
 * The parent's side of one request: send type and payload over a
 * socketpair, let recon_imsg() handle it, read the answer.  Returns
 * recon_imsg()'s result; *reply gets the inventory if there is one,
 * decoded as the parent decodes it (which must succeed), reply_len its
 * size on the wire.
 */
static void
noop_handler(int fd, short ev, void *arg)
{
}

static size_t	 reply_len;

static int
roundtrip(const struct inv_config *c, uint32_t type, const void *data,
    size_t len, uint32_t *rtype, struct invmsg *reply)
{
	static int	 evinit;
	struct ibuf	 ib;
	char		 err[512];
	struct imsgbuf	 pb;
	struct imsgev	 iev;
	struct imsg	 imsg;
	int		 sv[2], rc, n;

	if (!evinit) {
		event_init();
		evinit = 1;
	}
	memset(reply, 0, sizeof(*reply));
	reply_len = 0;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(imsgbuf_init(&pb, sv[0]), 0);
	ck_assert_int_eq(imsgbuf_set_maxsize(&pb, FACTORY_MAXIMSG), 0);
	ck_assert_int_eq(imsgev_init(&iev, sv[1], noop_handler, NULL,
	    FACTORY_MAXIMSG), 0);
	ck_assert_int_ne(imsg_compose(&pb, type, 0, 0, -1, data, len), -1);
	ck_assert_int_eq(imsgbuf_flush(&pb), 0);

	ck_assert_int_eq(imsgbuf_read(&iev.ibuf), 1);
	ck_assert_int_eq(imsgbuf_get(&iev.ibuf, &imsg), 1);
	rc = recon_imsg(&iev, &imsg, c);
	imsg_free(&imsg);
	if (rc == 0 && imsgbuf_queuelen(&iev.ibuf) > 0) {
		ck_assert_int_eq(imsgbuf_flush(&iev.ibuf), 0);
		while ((n = imsgbuf_get(&pb, &imsg)) == 0)
			ck_assert_int_eq(imsgbuf_read(&pb), 1);
		ck_assert_int_eq(n, 1);
		*rtype = imsg_get_type(&imsg);
		ck_assert_uint_le(imsg_get_len(&imsg),
		    FACTORY_MAXIMSG - IMSG_HEADER_SIZE);
		if (*rtype == IMSG_INVENTORY) {
			ck_assert_int_eq(imsg_get_ibuf(&imsg, &ib), 0);
			reply_len = ibuf_size(&ib);
			ck_assert_msg(invmsg_decode(ibuf_data(&ib),
			    ibuf_size(&ib), TEST_UID, TEST_UID + 1, reply, err,
			    sizeof(err)) == 0, "%s", err);
		}
		imsg_free(&imsg);
	}
	imsgev_clear(&iev);
	imsgbuf_clear(&pb);
	close(sv[0]);
	return (rc);
}

START_TEST(test_dispatch)
{
	struct inv_config c;
	char		 d[PATH_MAX], s[PATH_MAX], cg[PATH_MAX];
	char		 pr[PATH_MAX];
	char		 mi[PATH_MAX], pulls[PATH_MAX];
	char		 repo[PATH_MAX], remote[PATH_MAX];
	char		 hex1[GIT_OID_HEXSZ + 1], hex2[GIT_OID_HEXSZ + 1];
	const char	*repos[2], *remotes[1], *pullv[1];
	struct invmsg	 m;
	uint32_t	 rtype;
	int		 v = 2;

	strlcpy(d, tdir("all"), sizeof(d));
	snprintf(s, sizeof(s), "%s/state", d);
	mkdirf("%s", s);
	make_state(s);
	mkdirf("%s/verify", s);
	mkdirf("%s/verify/a-20261129-0001", s);
	snprintf(cg, sizeof(cg), "%s/cg", d);
	mkdirf("%s", cg);
	make_cgroups(cg);
	snprintf(pr, sizeof(pr), "%s/proc", d);
	mkdirf("%s", pr);
	make_proc(pr);
	snprintf(mi, sizeof(mi), "%s/mountinfo", d);
	make_mountinfo(mi, s);
	make_repos(d, repo, remote, hex1, hex2);
	snprintf(pulls, sizeof(pulls), "%s/pulls", d);
	mkdirf("%s", pulls);
	make_pulls(pulls);

	memset(&c, 0, sizeof(c));
	c.state = s;
	repos[0] = repos[1] = repo;	/* listed once */
	remotes[0] = remote;
	pullv[0] = pulls;
	c.repos = repos;
	c.nrepos = 2;
	c.remotes = remotes;
	c.nremotes = 1;
	c.pulls = pullv;
	c.npulls = 1;
	c.have_uids = 1;
	c.uid_lo = TEST_UID;
	c.uid_hi = TEST_UID + 1;
	c.cgroot = cg;
	c.procroot = pr;
	c.mountinfo = mi;

	/* What we send is what the parent's strict decoder takes. */
	ck_assert_int_eq(roundtrip(&c, IMSG_INVENTORY_REQ, "{}", 3, &rtype,
	    &m), 0);
	ck_assert_uint_eq(rtype, IMSG_INVENTORY);
	ck_assert_uint_eq(m.ndirs, 3);
	ck_assert_uint_eq(m.nvdirs, 1);
	/* Four cgroup paths: one attempt's and its validation run's. */
	ck_assert_uint_eq(m.ncgroups, 2);
	ck_assert_uint_eq(m.nprocs, 1);
	ck_assert_uint_eq(m.nmounts, 2);
	ck_assert_uint_eq(m.nbranches, 2);
	ck_assert_uint_eq(m.npulls, 2);
	ck_assert_int_eq(m.skipped, STATE_SKIPPED + CGROUPS_SKIPPED +
	    MOUNTS_SKIPPED + BRANCHES_SKIPPED + PULLS_SKIPPED);
	ck_assert_uint_eq(m.nerrors, 0);
	ck_assert(!m.truncated);
	ck_assert_str_eq(m.cgroups[0].id, "a-20261129-0001");
	ck_assert_int_eq(m.cgroups[0].kind, CG_KIND_AGENT);
	ck_assert_int_eq(m.cgroups[1].kind, CG_KIND_VALIDATION);
	ck_assert_int_eq(m.procs[0].pid, 123);
	invmsg_free(&m);

	/* No payload is an empty request too. */
	ck_assert_int_eq(roundtrip(&c, IMSG_INVENTORY_REQ, NULL, 0, &rtype,
	    &m), 0);
	ck_assert_uint_eq(rtype, IMSG_INVENTORY);
	invmsg_free(&m);

	/* Without attempt_uids: no processes, and an error says why. */
	c.have_uids = 0;
	ck_assert_int_eq(roundtrip(&c, IMSG_INVENTORY_REQ, "{}", 3, &rtype,
	    &m), 0);
	ck_assert_uint_eq(m.nprocs, 0);
	ck_assert_uint_eq(m.nerrors, 1);
	invmsg_free(&m);

	/* Malformed or unexpected messages are refused. */
	ck_assert_int_eq(roundtrip(&c, IMSG_INVENTORY_REQ, "[1]", 4, &rtype,
	    &m), -1);
	ck_assert_int_eq(roundtrip(&c, IMSG_INVENTORY_REQ, "{}", 2, &rtype,
	    &m), -1);			/* no NUL */
	ck_assert_int_eq(roundtrip(&c, IMSG_HEARTBEAT, NULL, 0, &rtype,
	    &m), -1);
	ck_assert_int_eq(roundtrip(&c, IMSG_CTL_LOG_VERBOSE, &v, 2, &rtype,
	    &m), -1);
	ck_assert_int_eq(roundtrip(&c, IMSG_CTL_LOG_VERBOSE, &v, sizeof(v),
	    &rtype, &m), 0);
}
END_TEST

/*
 * The parent's strict reading of an inventory: one good message, then
 * each way a hostile reconciler could bend it.  Each bad one is
 * refused with a reason that names the field.  Messages are spelled
 * field by field (invtok.h), in invmsg.h's order.
 */
enum { F_DIRS, F_VDIRS, F_CG, F_PROCS, F_MOUNTS, F_BRANCHES, F_PULLS,
	F_SKIPPED, F_ERRORS, F_TRUNC, F_MAX };

static const char *good_inv[F_MAX] = {
	"n32 1\ns a-20261129-0001",
	"n32 0",
	"n32 1\ns a-20261129-0001\nn8 1",
	"n32 1\nn32 123\nn32 61990\ns sh",
	"n32 1\ns a-20261129-0001\nn8 0",
	"n32 1\ns /r.git\ns a-20261129-0001\n"
	    "s 0123456789abcdef0123456789abcdef01234567",
	"n32 1\ns /p\ns a-20261129-0001\nn32 3",
	"n64 2",
	"n32 1\ns x: denied",
	"n8 0",
};

/* The good inventory with field f spelled as value (NULL: left out). */
static struct ibuf *
inv_edit(int f, const char *value)
{
	struct ibuf	*b;
	int		 i;

	ck_assert_ptr_nonnull(b = ibuf_dynamic(64, FACTORY_MAXIMSG));
	for (i = 0; i < F_MAX; i++)
		if (i != f)
			ck_assert_int_eq(invtok(b, good_inv[i]), 0);
		else if (value != NULL)
			ck_assert_msg(invtok(b, value) == 0, "tokens %s",
			    value);
	return (b);
}

static int
decode_buf(const void *data, size_t len, char *err, size_t errlen)
{
	struct invmsg	 m;
	int		 rc;

	rc = invmsg_decode(data, len, TEST_UID, TEST_UID + 1, &m, err,
	    errlen);
	invmsg_free(&m);
	return (rc);
}

/* A bad value for field f must be refused with a reason naming want. */
static void
refused(int f, const char *value, const char *want)
{
	struct ibuf	*b;
	char		 err[512];

	b = inv_edit(f, value);
	ck_assert_msg(decode_buf(ibuf_data(b), ibuf_size(b), err,
	    sizeof(err)) == -1, "%d = %s accepted", f, value);
	ck_assert_msg(strstr(err, want) != NULL, "%d = %s: \"%s\" does "
	    "not name %s", f, value, err, want);
	ibuf_free(b);
}

START_TEST(test_decode)
{
	struct invmsg	 m;
	struct ibuf	*b;
	char		 err[512];
	size_t		 n;

	b = inv_edit(-1, NULL);
	ck_assert_msg(invmsg_decode(ibuf_data(b), ibuf_size(b), TEST_UID,
	    TEST_UID + 1, &m, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(m.ndirs, 1);
	ck_assert_str_eq(m.dirs[0].id, "a-20261129-0001");
	ck_assert_int_eq(m.cgroups[0].kind, CG_KIND_VALIDATION);
	ck_assert_int_eq(m.procs[0].pid, 123);
	ck_assert_uint_eq(m.procs[0].uid, TEST_UID);
	ck_assert_str_eq(m.branches[0].repo, "/r.git");
	ck_assert_int_eq(m.pulls[0].number, 3);
	ck_assert_int_eq(m.skipped, 2);
	ck_assert_str_eq(m.errors[0], "x: denied");
	ck_assert(!m.truncated);
	invmsg_free(&m);

	/* Every field is required: each shorter message is refused. */
	for (n = 0; n < ibuf_size(b); n++)
		ck_assert_msg(decode_buf(ibuf_data(b), n, err,
		    sizeof(err)) == -1, "cut at %zu accepted", n);
	/* Nothing may follow. */
	ck_assert_int_eq(ibuf_add_n8(b, 0), 0);
	ck_assert_int_eq(decode_buf(ibuf_data(b), ibuf_size(b), err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "left over"));
	ibuf_free(b);
	refused(F_TRUNC, "n8 0\ns /etc", "left over");
	/* Nothing at all. */
	ck_assert_int_eq(decode_buf(NULL, 0, err, sizeof(err)), -1);

	/* Counts: bounded by the bytes left, before any allocation. */
	refused(F_DIRS, "n32 4294967295", "attempt_dirs");
	refused(F_CG, "n32 2\ns a-20261129-0001\nn8 1", "cgroups");
	refused(F_PROCS, "n32 100000000", "processes");
	refused(F_ERRORS, "n32 2\ns x", "errors");

	/* Ids: ours, never a path. */
	refused(F_DIRS, "n32 1\ns ../../etc", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\ns /etc", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\ns a-20261129-0001/../..", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\ns a-20261129-0001\\x00/x", "NUL");
	refused(F_DIRS, "n32 1\ns a-20261129-00000000001", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\ns a-20261129-001", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\ns a-20261129-0001-v", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\ns ", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\ns a-20261129-0001\\x0a", "attempt_dirs[0]");
	refused(F_DIRS, "n32 1\nn32 4294967295", "attempt_dirs[0]");
	refused(F_VDIRS, "n32 2\ns a-20261129-0001\ns ..", "verify_dirs[1]");
	refused(F_CG, "n32 1\ns /sys/fs/cgroup/unified/factory/x/"
	    "a-20261129-0001\nn8 0", "cgroups[0]");
	refused(F_CG, "n32 1\ns a-20261129-0001-v\nn8 0", "cgroups[0]");
	/* Kinds: the agent's, validation's, and two a service. */
	refused(F_CG, "n32 1\ns a-20261129-0001\nn8 10", "cgroups[0]");
	refused(F_CG, "n32 1\ns a-20261129-0001-s0\nn8 2", "cgroups[0]");
	refused(F_MOUNTS, "n32 1\ns ../x\nn8 1", "mounts[0]");
	refused(F_MOUNTS, "n32 1\ns a-20261129-0001\nn8 255", "mounts[0]");

	/* Processes: never pid 1 or below, only attempt uids. */
	refused(F_PROCS, "n32 1\nn32 1\nn32 61990\ns x", "processes[0]");
	refused(F_PROCS, "n32 1\nn32 0\nn32 61990\ns x", "processes[0]");
	refused(F_PROCS, "n32 1\nn32 4294967295\nn32 61990\ns x",
	    "processes[0]");
	refused(F_PROCS, "n32 1\nn32 2147483647\nn32 61990\ns x",
	    "processes[0]");
	refused(F_PROCS, "n32 1\nn32 12\nn32 0\ns x", "uid 0");
	refused(F_PROCS, "n32 1\nn32 12\nn32 61992\ns x", "uid 61992");
	refused(F_PROCS, "n32 1\nn32 12\nn32 4294967295\ns x",
	    "uid 4294967295");
	refused(F_PROCS, "n32 1\nn32 12\nn32 61990\ns \\x1b[2J",
	    "processes[0].comm");
	refused(F_PROCS, "n32 1\nn32 12\nn32 61990\ns "
	    "0123456789012345678901234567890123456789012345678901234567890123",
	    "processes[0].comm");
	refused(F_PROCS, "n32 1\nn32 12\nn32 61990", "processes[0]");

	/* Shown only, but typed and bounded all the same. */
	refused(F_BRANCHES, "n32 1\ns /r\ns a-20261129-0001\ns xyz",
	    "branches[0]");
	refused(F_BRANCHES, "n32 1\ns /r\\xff\ns a-20261129-0001\n"
	    "s 0123456789abcdef0123456789abcdef01234567", "branches[0].repo");
	refused(F_PULLS, "n32 1\ns /p\ns a-20261129-0001\nn32 0", "pulls[0]");
	refused(F_PULLS, "n32 1\ns /p\ns a-20261129-0001\nn32 2147483648",
	    "pulls[0]");
	refused(F_PULLS, "n32 1\ns /p\ns x\nn32 2", "pulls[0]");
	refused(F_SKIPPED, "n64 0xffffffffffffffff", "skipped");
	refused(F_TRUNC, "n8 2", "truncated");
	refused(F_ERRORS, "n32 1\ns \\x07bell", "errors[0]");
	refused(F_ERRORS, "n32 1\ns x\\x00y", "errors[0]");
}
END_TEST

START_TEST(test_truncate)
{
	struct inv_config c;
	char		 s[PATH_MAX], mi[PATH_MAX];
	struct invmsg	 m;
	json_t		*o;
	uint32_t	 rtype;
	int		 i;

	strlcpy(s, tdir("big"), sizeof(s));
	mkdirf("%s/attempts", s);
	for (i = 1; i <= 5000; i++)
		mkdirf("%s/attempts/a-20261129-%05d", s, i);
	snprintf(mi, sizeof(mi), "%s/mountinfo", s);
	writef(mi, "");
	memset(&c, 0, sizeof(c));
	c.state = s;
	c.have_uids = 1;
	c.uid_lo = c.uid_hi = TEST_UID;
	c.cgroot = s;
	c.procroot = "/proc";
	c.mountinfo = mi;

	ck_assert_int_eq(roundtrip(&c, IMSG_INVENTORY_REQ, "{}", 3, &rtype,
	    &m), 0);
	ck_assert_uint_eq(rtype, IMSG_INVENTORY);
	ck_assert(m.truncated);
	ck_assert_uint_gt(m.ndirs, 1000);
	ck_assert_uint_lt(m.ndirs, 5000);
	/* Sorted, cut at the tail. */
	ck_assert_str_eq(m.dirs[0].id, "a-20261129-00001");
	ck_assert_uint_le(reply_len, INV_MAXWIRE);
	ck_assert_uint_gt(reply_len, INV_MAXWIRE - 100);
	invmsg_free(&m);

	/* Nothing left to cut: an empty inventory is 41 bytes. */
	ck_assert_ptr_nonnull(o = json_pack("{s:[], s:[], s:[], s:[], s:[], "
	    "s:[], s:[], s:i, s:[], s:b}", "attempt_dirs", "verify_dirs",
	    "cgroups", "processes", "mounts", "branches", "pulls", "skipped",
	    0, "errors", "truncated", 0));
	ck_assert_int_eq(inv_fit(o, 40), -1);
	ck_assert_int_eq(inv_fit(o, 41), 0);
	json_decref(o);
	/* Not an inventory: it does not encode. */
	ck_assert_ptr_nonnull(o = json_pack("{s:s}", "k", "0123456789"));
	ck_assert_int_eq(inv_fit(o, 100), -1);
	json_decref(o);
}
END_TEST

START_TEST(test_vars)
{
	char	*argv[] = { "factory-reconciler", "-d", "-V", "state=/s",
		    "-vVrepos=/r1", "-V", "repos=/r2", "-V", "remotes=/m",
		    "-Vpulls=/p", "-V", "state=/other", "-dv", "-V",
		    "attempt_uids=1-2", "-V", "pulls=/q", NULL };
	char	*trailing[] = { "x", "-V", NULL };
	struct inv_config c;

	memset(&c, 0, sizeof(c));
	recon_vars(17, argv, &c);
	ck_assert_str_eq(c.state, "/s");
	ck_assert_uint_eq(c.nrepos, 2);
	ck_assert_str_eq(c.repos[0], "/r1");
	ck_assert_str_eq(c.repos[1], "/r2");
	ck_assert_uint_eq(c.nremotes, 1);
	ck_assert_str_eq(c.remotes[0], "/m");
	ck_assert_uint_eq(c.npulls, 2);
	ck_assert_str_eq(c.pulls[0], "/p");
	ck_assert_str_eq(c.pulls[1], "/q");
	free(c.repos);
	free(c.remotes);
	free(c.pulls);

	memset(&c, 0, sizeof(c));
	recon_vars(2, trailing, &c);
	ck_assert_ptr_null(c.state);
	ck_assert_uint_eq(c.nrepos, 0);
}
END_TEST

static Suite *
inventory_suite(void)
{
	Suite	*s = suite_create("inventory");
	TCase	*tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_id_valid);
	tcase_add_test(tc, test_parse_uids);
	tcase_add_test(tc, test_attempt_dirs);
	tcase_add_test(tc, test_cgroups);
	tcase_add_test(tc, test_processes_fake);
	tcase_add_test(tc, test_processes_real);
	tcase_add_test(tc, test_mounts);
	tcase_add_test(tc, test_branches);
	tcase_add_test(tc, test_pulls);
	tcase_add_test(tc, test_dispatch);
	tcase_add_test(tc, test_decode);
	tcase_add_test(tc, test_truncate);
	tcase_add_test(tc, test_vars);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(inventory_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
