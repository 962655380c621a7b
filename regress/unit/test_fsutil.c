/*
 * fsutil.c: root's removal of trees an agent shaped.  Depth beyond any
 * fd limit (300, 5000 and 20000 levels under RLIMIT_NOFILE 32), names
 * of NAME_MAX bytes far past PATH_MAX, modes that lock an owner out,
 * FIFOs and sockets, symbolic links to / and to a tree outside, a
 * mount and a bind mount inside (never crossed), a wide directory.
 * And what root opens or chowns of a child's: a FIFO, a link, a
 * directory, a socket, a device, a hard link, someone else's file.
 * And the kill of an attempt's processes by their uids.
 * Needs root (mounts, chown, mknod).
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../supervisord-factory/factoryd.h"
#include "fstree.h"

static char	 base[] = "/tmp/test_fsutil.XXXXXX";
static char	 mnt[PATH_MAX];

/*
 * On a tmpfs of its own: the disk here discards every freed block,
 * which makes each rmdir cost a millisecond.  The tests run forked:
 * the mount point of test_mounts is known here beforehand.
 */
static void
setup(void)
{
	if (mkdtemp(base) == NULL ||
	    mount("tmpfs", base, "tmpfs", 0, "size=256m,mode=0755") == -1) {
		perror(base);
		exit(1);
	}
	snprintf(mnt, sizeof(mnt), "%s/mnt/d/d/d/m", base);
}

static void
teardown(void)
{
	char	 cmd[PATH_MAX + 64];

	umount2(mnt, MNT_DETACH);
	if (umount2(base, MNT_DETACH) == -1)
		perror(base);
	/* Not our code: what a failed test left may be deep. */
	snprintf(cmd, sizeof(cmd), "rm -rf --one-file-system '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "%s failed\n", cmd);
}

static void
pathf(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", base, name);
}

/*
 * depth directories below dir, each named name (one fd at a time), a
 * file in the deepest.
 */
static void
make_deep(const char *dir, int depth, const char *name)
{
	int	 fd, nfd, i, f;

	ck_assert_int_ne(fd = open(dir, O_RDONLY | O_DIRECTORY), -1);
	for (i = 0; i < depth; i++) {
		ck_assert_msg(mkdirat(fd, name, 0755) == 0, "mkdir at %d: %s",
		    i, strerror(errno));
		ck_assert_int_ne(nfd = openat(fd, name, O_RDONLY |
		    O_DIRECTORY), -1);
		close(fd);
		fd = nfd;
	}
	ck_assert_int_ne(f = openat(fd, "leaf", O_WRONLY | O_CREAT, 0644),
	    -1);
	close(f);
	close(fd);
}

static void
writef(const char *path, const char *text)
{
	int	 fd;

	ck_assert_msg((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC,
	    0644)) != -1, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int
exists(const char *path)
{
	struct stat	 sb;

	return (lstat(path, &sb) == 0);
}

/* A low fd limit: a walk holding one fd per level cannot pass. */
static void
few_fds(void)
{
	struct rlimit	 rl = { 32, 32 };

	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

START_TEST(test_deep)
{
	char	 t[PATH_MAX];
	int	 depths[] = { 300, 5000, 20000 }, i;

	few_fds();
	for (i = 0; i < 3; i++) {
		pathf(t, "deep");
		ck_assert_int_eq(mkdir(t, 0755), 0);
		make_deep(t, depths[i], "d");
		ck_assert_msg(fs_remove_tree(t) == 0, "depth %d: %s",
		    depths[i], strerror(errno));
		ck_assert(!exists(t));
	}
}
END_TEST

START_TEST(test_long_names)
{
	char	 t[PATH_MAX], name[NAME_MAX + 1];

	few_fds();
	memset(name, 'n', NAME_MAX);
	name[NAME_MAX] = '\0';
	pathf(t, "long");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	/* 100 levels of 255 bytes: a path of 25 KB, six times PATH_MAX. */
	make_deep(t, 100, name);
	ck_assert_msg(fs_remove_tree(t) == 0, "%s", strerror(errno));
	ck_assert(!exists(t));
}
END_TEST

START_TEST(test_modes)
{
	char	 t[PATH_MAX], p[PATH_MAX];
	const mode_t modes[] = { 0, 01777, 04777, 02711, 0111, 0200 };
	size_t	 i;

	pathf(t, "modes");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(p, sizeof(p), "%s/d%zu", t, i);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/d%zu/f", t, i);
		writef(p, "x");
		ck_assert_int_eq(chmod(p, modes[i]), 0);
		snprintf(p, sizeof(p), "%s/d%zu/sub", t, i);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		ck_assert_int_eq(chmod(p, modes[i]), 0);
		snprintf(p, sizeof(p), "%s/d%zu", t, i);
		ck_assert_int_eq(chown(p, 61999, 61999), 0);
		ck_assert_int_eq(chmod(p, modes[i]), 0);
	}
	ck_assert_int_eq(chmod(t, 0), 0);
	ck_assert_msg(fs_remove_tree(t) == 0, "%s", strerror(errno));
	ck_assert(!exists(t));
}
END_TEST

START_TEST(test_special)
{
	struct sockaddr_un	 sun;
	char			 t[PATH_MAX], p[PATH_MAX];
	int			 s;

	pathf(t, "special");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	snprintf(p, sizeof(p), "%s/fifo", t);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", t);
	ck_assert_int_ne(s = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(s);
	snprintf(p, sizeof(p), "%s/null", t);
	ck_assert_int_eq(mknod(p, S_IFCHR | 0666, makedev(1, 3)), 0);
	alarm(10);	/* a FIFO opened would block here */
	ck_assert_msg(fs_remove_tree(t) == 0, "%s", strerror(errno));
	alarm(0);
	ck_assert(!exists(t));
}
END_TEST

START_TEST(test_links)
{
	char	 t[PATH_MAX], out[PATH_MAX], p[PATH_MAX];

	pathf(out, "outside");
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(p, sizeof(p), "%s/keep", out);
	writef(p, "keep");
	pathf(t, "links");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	make_deep(t, 400, "d");
	snprintf(p, sizeof(p), "%s/root", t);
	ck_assert_int_eq(symlink("/", p), 0);
	snprintf(p, sizeof(p), "%s/out", t);
	ck_assert_int_eq(symlink(out, p), 0);
	snprintf(p, sizeof(p), "%s/d/d/d/out", t);
	ck_assert_int_eq(symlink(out, p), 0);
	/* A hard link to a file outside: the link goes, the file stays. */
	snprintf(p, sizeof(p), "%s/d/hard", t);
	snprintf(out, sizeof(out), "%s/outside/keep", base);
	ck_assert_int_eq(link(out, p), 0);
	ck_assert_msg(fs_remove_tree(t) == 0, "%s", strerror(errno));
	ck_assert(!exists(t));
	ck_assert(exists(out));
	ck_assert(exists("/etc/passwd"));

	/* The path itself a link: the link goes, not its target. */
	pathf(p, "outlink");
	pathf(out, "outside");
	ck_assert_int_eq(symlink(out, p), 0);
	ck_assert_int_eq(fs_remove_tree(p), 0);
	ck_assert(!exists(p));
	snprintf(p, sizeof(p), "%s/keep", out);
	ck_assert(exists(p));

	pathf(p, "nonexistent");
	ck_assert_int_eq(fs_remove_tree(p), 0);
}
END_TEST

/* A mount below is another file system: never entered, an error. */
START_TEST(test_mounts)
{
	char	 t[PATH_MAX], out[PATH_MAX], p[PATH_MAX];

	pathf(out, "outside2");
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(p, sizeof(p), "%s/keep", out);
	writef(p, "keep");
	pathf(t, "mnt");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	make_deep(t, 40, "d");
	ck_assert_int_eq(mkdir(mnt, 0755), 0);

	/* The same file system, bound: same st_dev, another mount. */
	ck_assert_int_eq(mount(out, mnt, NULL, MS_BIND, NULL), 0);
	ck_assert_int_eq(fs_remove_tree(t), -1);
	ck_assert(exists(p));
	ck_assert_int_eq(umount2(mnt, MNT_DETACH), 0);

	ck_assert_int_eq(mount("tmpfs", mnt, "tmpfs", 0, "size=1m"), 0);
	snprintf(p, sizeof(p), "%s/inmount", mnt);
	writef(p, "x");
	ck_assert_int_eq(fs_remove_tree(t), -1);
	ck_assert(exists(p));
	ck_assert_int_eq(umount2(mnt, MNT_DETACH), 0);

	/* Unmounted, the rest goes. */
	ck_assert_msg(fs_remove_tree(t) == 0, "%s", strerror(errno));
	ck_assert(!exists(t));
	snprintf(p, sizeof(p), "%s/keep", out);
	ck_assert(exists(p));
}
END_TEST

/* Wide as well as deep: no quadratic rescans. */
START_TEST(test_wide)
{
	char	 t[PATH_MAX], p[PATH_MAX];
	int	 i;

	few_fds();
	pathf(t, "wide");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	for (i = 0; i < 3000; i++) {
		snprintf(p, sizeof(p), "%s/f%d", t, i);
		writef(p, "");
		snprintf(p, sizeof(p), "%s/d%d", t, i);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		if (i % 100 == 0)
			make_deep(p, 60, "x");
	}
	alarm(60);
	ck_assert_msg(fs_remove_tree(t) == 0, "%s", strerror(errno));
	alarm(0);
	ck_assert(!exists(t));
}
END_TEST

/*
 * Files a child may have put where root reads: only a regular file of
 * the expected owner with one link is opened, and nothing blocks.
 */
START_TEST(test_open_untrusted)
{
	struct sockaddr_un	 sun;
	char			 d[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
	char			 why[256], buf[8];
	int			 fd, s;

	pathf(d, "open");
	ck_assert_int_eq(mkdir(d, 0755), 0);
	snprintf(p, sizeof(p), "%s/good", d);
	writef(p, "good");
	ck_assert_int_eq(chown(p, 61999, 61999), 0);
	ck_assert_int_ne(fd = fs_open_untrusted(p, 61999, why, sizeof(why)),
	    -1);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 4);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);

	/* Someone else's. */
	ck_assert_int_eq(fs_open_untrusted(p, 61998, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "owned by uid 61999"));

	/* A second name: a hard link to a root file. */
	snprintf(q, sizeof(q), "%s/rootfile", d);
	writef(q, "root");
	snprintf(p, sizeof(p), "%s/hard", d);
	ck_assert_int_eq(link(q, p), 0);
	ck_assert_int_eq(fs_open_untrusted(p, 0, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "2 links"));

	alarm(10);	/* a FIFO opened for reading would block */
	snprintf(p, sizeof(p), "%s/fifo", d);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	ck_assert_int_eq(fs_open_untrusted(p, 0, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "a FIFO"));
	alarm(0);

	snprintf(p, sizeof(p), "%s/link", d);
	ck_assert_int_eq(symlink("/etc/shadow", p), 0);
	ck_assert_int_eq(fs_open_untrusted(p, 0, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "a symbolic link"));

	ck_assert_int_eq(fs_open_untrusted(d, 0, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "a directory"));

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", d);
	ck_assert_int_ne(s = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(s);
	ck_assert_int_eq(fs_open_untrusted(sun.sun_path, 0, why,
	    sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "a socket"));

	/* A device is never opened: its open(2) could do something. */
	snprintf(p, sizeof(p), "%s/dev", d);
	ck_assert_int_eq(mknod(p, S_IFCHR | 0666, makedev(1, 3)), 0);
	ck_assert_int_eq(fs_open_untrusted(p, 0, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "a character device"));

	snprintf(p, sizeof(p), "%s/none", d);
	ck_assert_int_eq(fs_open_untrusted(p, 0, why, sizeof(why)), -1);
}
END_TEST

/* A tree handed to an attempt: only what its maker made, no links. */
START_TEST(test_chown_tree)
{
	struct stat	 sb;
	char		 t[PATH_MAX], p[PATH_MAX], q[PATH_MAX], why[256];

	pathf(t, "chown");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub", t);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/f", t);
	writef(p, "x");
	snprintf(p, sizeof(p), "%s/sub/fifo", t);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/l", t);
	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "chown -hR 61990:61990 '%s'", t);
	ck_assert_int_eq(system(p), 0);
	alarm(10);
	ck_assert_msg(fs_chown_tree(t, 61990, 61991, 61991, why,
	    sizeof(why)) == 0, "%s", why);
	alarm(0);
	snprintf(p, sizeof(p), "%s/sub/fifo", t);
	ck_assert_int_eq(lstat(p, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 61991);
	ck_assert_int_eq(lstat("/etc/passwd", &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 0);

	/* A hard link to a root file inside: refused, the file stays root's. */
	pathf(q, "rootfile2");
	writef(q, "root");
	snprintf(p, sizeof(p), "%s/sub/hard", t);
	ck_assert_int_eq(link(q, p), 0);
	ck_assert_int_eq(fs_chown_tree(t, 61991, 61992, 61992, why,
	    sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "hard: owned by uid 0"));
	ck_assert_int_eq(stat(q, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 0);
	/* Its maker's, but with a second name outside: refused too. */
	pathf(t, "chown2");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	ck_assert_int_eq(chown(t, 61992, 61992), 0);
	ck_assert_int_eq(chown(q, 61992, 61992), 0);
	snprintf(p, sizeof(p), "%s/hard", t);
	ck_assert_int_eq(link(q, p), 0);
	ck_assert_int_eq(fs_chown_tree(t, 61992, 61993, 61993, why,
	    sizeof(why)), -1);
	ck_assert_msg(strstr(why, "hard: 3 links") != NULL, "%s", why);
	ck_assert_int_eq(stat(q, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 61992);
}
END_TEST

/*
 * A second name made between the chown walk's look at a file and its
 * chown (the file's maker may link it anywhere it writes): its links
 * are counted again after, and the file is given back.  Before, the
 * walk only looked before: the file, with its name outside, was the
 * new owner's.
 */
static char	 race_outside[PATH_MAX];

static void
race_link(int dfd, const char *name)
{
	ck_assert_int_eq(linkat(dfd, name, AT_FDCWD, race_outside, 0), 0);
}

START_TEST(test_chown_link_race)
{
	struct stat	 sb;
	char		 t[PATH_MAX], p[PATH_MAX], why[256];

	pathf(t, "chownrace");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	snprintf(p, sizeof(p), "%s/f", t);
	writef(p, "x");
	ck_assert_int_eq(chown(t, 61994, 61994), 0);
	ck_assert_int_eq(chown(p, 61994, 61994), 0);
	pathf(race_outside, "chownrace-outside");
	fs_chown_race = race_link;
	ck_assert_int_eq(fs_chown_tree(t, 61994, 61995, 61995, why,
	    sizeof(why)), -1);
	fs_chown_race = NULL;
	ck_assert_msg(strstr(why, "f: 2 links after its chown") != NULL,
	    "%s", why);
	ck_assert_int_eq(stat(race_outside, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 61994);
}
END_TEST

/*
 * An upper handed from the verifier to the validation uid: overlay
 * whiteouts stay as they are, and with FS_CHOWN_FROM_ONLY an entry
 * already the new owner's is refused like any other not from's.
 */
START_TEST(test_chown_flags)
{
	struct stat	 sb;
	char		 t[PATH_MAX], p[PATH_MAX], why[256];
	int		 fd;

	pathf(t, "chownflags");
	ck_assert_int_eq(mkdir(t, 0755), 0);
	snprintf(p, sizeof(p), "%s/wh", t);
	ck_assert_int_eq(mknod(p, S_IFCHR | 0, makedev(0, 0)), 0);
	snprintf(p, sizeof(p), "%s/f", t);
	writef(p, "x");
	snprintf(p, sizeof(p), "chown -hR 61996:61996 '%s'", t);
	ck_assert_int_eq(system(p), 0);
	snprintf(p, sizeof(p), "%s/wh", t);
	ck_assert_int_eq(lchown(p, 0, 0), 0);
	ck_assert_int_ne(fd = open(t, O_RDONLY | O_DIRECTORY), -1);
	ck_assert_msg(fs_chown_fd_flags(fd, 61996, 61997, 61997,
	    FS_CHOWN_FROM_ONLY | FS_CHOWN_WHITEOUTS, why, sizeof(why)) == 0,
	    "%s", why);
	ck_assert_int_eq(lstat(p, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 0);
	snprintf(p, sizeof(p), "%s/f", t);
	ck_assert_int_eq(lstat(p, &sb), 0);
	ck_assert_uint_eq(sb.st_uid, 61997);
	/* Already 61997's: refused with FS_CHOWN_FROM_ONLY. */
	ck_assert_int_ne(fd = open(t, O_RDONLY | O_DIRECTORY), -1);
	ck_assert_int_eq(fs_chown_fd_flags(fd, 61996, 61998, 61998,
	    FS_CHOWN_FROM_ONLY, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "owned by uid 61997") != NULL, "%s", why);
}
END_TEST

/*
 * uid_kill_all: one pass kills the processes of both an attempt's uids
 * and nothing else: not another uid, not root for a uid of 0 ("none").
 * The children killed stay zombies (and counted) until reaped here.
 */
static pid_t
child_as(uid_t uid)
{
	pid_t	 pid;

	if ((pid = fork()) == 0) {
		if (setresgid(uid, uid, uid) == -1 ||
		    setresuid(uid, uid, uid) == -1)
			_exit(1);
		for (;;)
			pause();
	}
	ck_assert_int_gt(pid, 0);
	return (pid);
}

static int
killed(pid_t pid)
{
	int	 st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

START_TEST(test_uid_kill_all)
{
	pid_t	 a, b, other;
	int	 st;

	a = child_as(63591);
	b = child_as(63592);
	other = child_as(63594);
	usleep(50 * 1000);	/* each has changed its uids */
	ck_assert_int_ge(uid_kill_all(63591, 63592), 0);
	ck_assert(killed(a));
	ck_assert(killed(b));
	ck_assert_int_eq(uid_kill_all(63591, 63592), 0);
	ck_assert_int_eq(waitpid(other, &st, WNOHANG), 0);
	/* None: 0 is never root, nor anyone else. */
	ck_assert_int_eq(uid_kill_all(0, 0), 0);
	ck_assert_int_eq(waitpid(other, &st, WNOHANG), 0);
	ck_assert_int_ge(uid_kill_all(63594, 0), 0);
	ck_assert(killed(other));
	ck_assert_int_eq(uid_kill_all(0, 63594), 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("fsutil");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_deep);
	tcase_add_test(tc, test_long_names);
	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_special);
	tcase_add_test(tc, test_links);
	tcase_add_test(tc, test_mounts);
	tcase_add_test(tc, test_wide);
	tcase_add_test(tc, test_open_untrusted);
	tcase_add_test(tc, test_chown_tree);
	tcase_add_test(tc, test_chown_link_race);
	tcase_add_test(tc, test_chown_flags);
	tcase_add_test(tc, test_uid_kill_all);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? 0 : 1);
}
