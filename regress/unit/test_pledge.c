/*
 * pledge(2) and unveil(2): each case pledges in a child of its own and
 * reports by exit status, or dies by SIGSYS where that is the point.
 * Children leave with _exit(2): at exit, sanitizers would need
 * syscalls no promise grants.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "landlock.h"
#include "pledge.h"

#define HIGHBIT		(1UL << 32)

/* Runs fn in a child; returns its wait status. */
static int
in_child(int (*fn)(void))
{
	pid_t	 pid;
	int	 status;

	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0)
		_exit(fn());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return (status);
}

/* Each macro evaluates its status once: it is a call to in_child(). */
#define ck_exited(call, code) do {					\
	int st_ = (call);						\
	ck_assert_msg(WIFEXITED(st_), "child killed by signal %d",	\
	    WIFSIGNALED(st_) ? WTERMSIG(st_) : -1);			\
	ck_assert_int_eq(WEXITSTATUS(st_), (code));			\
} while (0)
#define ck_sigsys(call) do {						\
	int st_ = (call);						\
	ck_assert_msg(WIFSIGNALED(st_) && WTERMSIG(st_) == SIGSYS,	\
	    "child not killed by SIGSYS (status %#x)", st_);		\
} while (0)

/* Failure codes a child returns, one per check, to find it again. */
#define FAIL(n)		(10 + (n))

static int
child_bad_args(void)
{
	if (pledge("stdio bogus", NULL) != -1 || errno != EINVAL)
		return (FAIL(1));
	if (pledge("stdio", "stdio") != -1 || errno != EINVAL)
		return (FAIL(2));
	if (unveil("/", "rz") != -1 || errno != EINVAL)
		return (FAIL(3));
	if (unveil("/nonexistent-factory-unveil", "r") != -1 ||
	    errno != ENOENT)
		return (FAIL(4));
	if (unveil("/", NULL) != -1 || errno != EINVAL)
		return (FAIL(5));
	/* Nothing was applied by the failures above. */
	if (strstr(pledge_describe(), "promises: (not pledged)") == NULL)
		return (FAIL(6));
	return (0);
}

START_TEST(test_bad_args)
{
	ck_exited(in_child(child_bad_args), 0);
}
END_TEST

static int	 ev_ok;

static void
ev_cb(int fd, short what, void *arg)
{
	char	 buf[8];

	if (read(fd, buf, sizeof(buf)) == 4 && memcmp(buf, "ping", 4) == 0)
		ev_ok = 1;
	event_base_loopbreak(arg);
}

static int
child_libevent(void)
{
	struct event_base	*base;
	struct event		*ev;
	struct timeval		 tv = { 5, 0 };
	int			 sv[2];

	if (pledge("stdio", NULL) == -1)
		return (FAIL(1));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == -1)
		return (FAIL(2));
	if ((base = event_base_new()) == NULL)
		return (FAIL(3));
	if (strcmp(event_base_get_method(base), "epoll") != 0)
		return (FAIL(4));
	ev = event_new(base, sv[0], EV_READ | EV_PERSIST, ev_cb, base);
	if (ev == NULL || event_add(ev, &tv) == -1)
		return (FAIL(5));
	if (write(sv[1], "ping", 4) != 4)
		return (FAIL(6));
	if (event_base_dispatch(base) == -1 || !ev_ok)
		return (FAIL(7));
	event_free(ev);
	event_base_free(base);
	return (0);
}

START_TEST(test_libevent_stdio)
{
	ck_exited(in_child(child_libevent), 0);
}
END_TEST

static int
child_fionread(void)
{
	int	 fd, n;

	if ((fd = open("/dev/null", O_RDONLY)) == -1 ||
	    pledge("stdio", NULL) == -1)
		return (FAIL(1));
	/* Allowed request, not a tty: the kernel answers. */
	if (ioctl(fd, FIONREAD, &n) != -1 || errno != ENOTTY)
		return (FAIL(2));
	return (0);
}

static int
child_fionread_high(void)
{
	int	 fd, n;

	if ((fd = open("/dev/null", O_RDONLY)) == -1 ||
	    pledge("stdio", NULL) == -1)
		return (FAIL(1));
	/* The kernel would truncate this to FIONREAD: seccomp must not. */
	ioctl(fd, FIONREAD | HIGHBIT, &n);
	return (FAIL(2));
}

static int
child_tiocsti_high(void)
{
	int	 fd;
	char	 c = 'x';

	if ((fd = open("/dev/null", O_RDONLY)) == -1 ||
	    pledge("stdio tty", NULL) == -1)
		return (FAIL(1));
	ioctl(fd, TIOCSTI | HIGHBIT, &c);
	return (FAIL(2));
}

START_TEST(test_ioctl_width)
{
	ck_exited(in_child(child_fionread), 0);
	ck_sigsys(in_child(child_fionread_high));
	ck_sigsys(in_child(child_tiocsti_high));
}
END_TEST

static void *
thread_fn(void *arg)
{
	*(int *)arg = 1;
	return (NULL);
}

static int
child_threads(void)
{
	pthread_t	 t;
	int		 ran = 0;

	if (pledge("stdio", NULL) == -1)
		return (FAIL(1));
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return (FAIL(2));
	if (pthread_create(&t, NULL, thread_fn, &ran) != 0 ||
	    pthread_join(t, NULL) != 0 || !ran)
		return (FAIL(3));
	return (0);
}

static int
child_fork(void)
{
	if (pledge("stdio", NULL) == -1)
		return (FAIL(1));
	fork();
	return (FAIL(2));
}

START_TEST(test_threads_not_processes)
{
	ck_exited(in_child(child_threads), 0);
	ck_sigsys(in_child(child_fork));
}
END_TEST

static int
child_narrow(void)
{
	const char	*d;

	if (pledge("stdio rpath inet", NULL) == -1)
		return (FAIL(1));
	if (open("/dev/null", O_RDONLY) == -1)
		return (FAIL(2));
	if (pledge("stdio rpath inet wpath", NULL) != -1 || errno != EPERM)
		return (FAIL(3));
	/* Dropping inet adds the TCP layer through the first filter. */
	if (pledge("stdio rpath", NULL) == -1)
		return (FAIL(4));
	d = pledge_describe();
	if (strstr(d, "promises: stdio rpath\n") == NULL ||
	    strstr(d, "tcp bind+connect denied") == NULL)
		return (FAIL(5));
	if (open("/dev/null", O_RDONLY) == -1)
		return (FAIL(6));
	return (0);
}

static int
child_narrow_gone(void)
{
	if (pledge("stdio rpath", NULL) == -1)
		return (FAIL(1));
	if (pledge("stdio", NULL) == -1)
		return (FAIL(2));
	if (strstr(pledge_describe(), "promises: stdio\n") == NULL)
		return (FAIL(3));
	open("/dev/null", O_RDONLY);	/* rpath is gone */
	return (FAIL(4));
}

/*
 * MSG_FASTOPEN connects a socket that is not connected: a connect(2)
 * by another name, refused (EPERM) without inet, on every send call;
 * a plain send goes.  With inet the kernel answers, not the filter:
 * a unix stream socket ignores the flag and sends (want 0).
 */
static int
child_fastopen(const char *promises, int want)
{
	struct msghdr	 mh;
	struct iovec	 iov = { "x", 1 };
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return (FAIL(1));
	if (pledge(promises, NULL) == -1)
		return (FAIL(2));
	if (send(sv[0], "x", 1, 0) != 1)
		return (FAIL(3));
	if (want == 0 ? sendto(sv[0], "x", 1, MSG_FASTOPEN, NULL, 0) != 1 :
	    sendto(sv[0], "x", 1, MSG_FASTOPEN, NULL, 0) != -1 ||
	    errno != want)
		return (FAIL(4));
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (want == 0 ? sendmsg(sv[0], &mh, MSG_FASTOPEN) != 1 :
	    sendmsg(sv[0], &mh, MSG_FASTOPEN) != -1 || errno != want)
		return (FAIL(5));
	return (0);
}

static int
child_fastopen_accept(void)
{
	return (child_fastopen("stdio accept recvfd", EPERM));
}

static int
child_fastopen_inet(void)
{
	return (child_fastopen("stdio inet", 0));
}

START_TEST(test_fastopen)
{
	ck_exited(in_child(child_fastopen_accept), 0);
	ck_exited(in_child(child_fastopen_inet), 0);
}
END_TEST

START_TEST(test_narrow_only)
{
	ck_exited(in_child(child_narrow), 0);
	ck_sigsys(in_child(child_narrow_gone));
}
END_TEST

static int
child_rpath_write(void)
{
	if (pledge("stdio rpath", NULL) == -1)
		return (FAIL(1));
	open("/dev/null", O_WRONLY);
	return (FAIL(2));
}

static int
child_wpath_create(void)
{
	if (pledge("stdio rpath wpath", NULL) == -1)
		return (FAIL(1));
	if (open("/dev/null", O_WRONLY | O_TRUNC) == -1)
		return (FAIL(2));
	open("/dev/null", O_WRONLY | O_CREAT, 0600);
	return (FAIL(3));
}

/* A daemon logs after its pledge, with or without a syslog daemon. */
static int
child_syslog(void)
{
	openlog("test_pledge", LOG_NDELAY, LOG_USER);
	if (pledge("stdio", NULL) == -1)
		return (FAIL(1));
	syslog(LOG_DEBUG, "test_pledge: logging under stdio");
	syslog(LOG_DEBUG, "test_pledge: and again");
	return (0);
}

static int
child_empty(void)
{
	if (pledge("", NULL) == -1)
		return (FAIL(1));
	/*
	 * Dying is always allowed.  The raw call: a sanitizer's _exit(2)
	 * wrapper makes other syscalls first.
	 */
	syscall(SYS_exit_group, 7);
	return (FAIL(2));
}

START_TEST(test_open_flags)
{
	ck_sigsys(in_child(child_rpath_write));
	ck_sigsys(in_child(child_wpath_create));
	ck_exited(in_child(child_empty), 7);
	ck_exited(in_child(child_syslog), 0);
}
END_TEST

static char	 tmpdir[64];

static void
make_tree(void)
{
	char	 path[PATH_MAX];
	int	 fd;

	strlcpy(tmpdir, "/tmp/test_pledge.XXXXXX", sizeof(tmpdir));
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/in", tmpdir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/in/sub", tmpdir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/out", tmpdir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/in/f", tmpdir);
	ck_assert_int_ne(fd = open(path, O_WRONLY | O_CREAT, 0600), -1);
	close(fd);
	snprintf(path, sizeof(path), "%s/out/f", tmpdir);
	ck_assert_int_ne(fd = open(path, O_WRONLY | O_CREAT, 0600), -1);
	close(fd);
}

static void
remove_tree(void)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/in/f", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/in/g", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/in/sub/g", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/in/sub", tmpdir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/out/f", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/in", tmpdir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/out", tmpdir);
	rmdir(path);
	rmdir(tmpdir);
}

static int
child_unveil(void)
{
	char	 in[128], out[128], path[PATH_MAX];

	snprintf(in, sizeof(in), "%s/in", tmpdir);
	snprintf(out, sizeof(out), "%s/out/f", tmpdir);
	if (unveil(in, "r") == -1 || unveil(NULL, NULL) == -1)
		return (FAIL(1));
	if (unveil(in, "rwc") != -1 || errno != EPERM)
		return (FAIL(2));
	snprintf(path, sizeof(path), "%s/f", in);
	if (open(path, O_RDONLY) == -1)
		return (FAIL(3));
	if (open(path, O_WRONLY) != -1 || errno != EACCES)
		return (FAIL(4));
	if (open(out, O_RDONLY) != -1 || errno != EACCES)
		return (FAIL(5));
	/* Unveiled root may not be left through "..". */
	snprintf(path, sizeof(path), "%s/../out/f", in);
	if (open(path, O_RDONLY) != -1 || errno != EACCES)
		return (FAIL(6));
	return (0);
}

static int
child_unveil_pledge(void)
{
	char	 in[128], path[PATH_MAX], to[PATH_MAX];
	const char *d;

	snprintf(in, sizeof(in), "%s/in", tmpdir);
	if (unveil(in, "rwc") == -1 || pledge("stdio rpath wpath cpath",
	    NULL) == -1)
		return (FAIL(1));
	snprintf(path, sizeof(path), "%s/g", in);
	if (open(path, O_WRONLY | O_CREAT | O_EXCL, 0600) == -1)
		return (FAIL(2));
	/*
	 * Across directories, as libgit2 moves loose objects: the TCP
	 * layer pledge adds must not take REFER away.
	 */
	snprintf(to, sizeof(to), "%s/sub/g", in);
	if (rename(path, to) == -1)
		return (FAIL(5));
	if (open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES)
		return (FAIL(3));
	d = pledge_describe();
	snprintf(path, sizeof(path), "unveil: %s rwc\n", in);
	if (strstr(d, "promises: stdio rpath wpath cpath\n") == NULL ||
	    strstr(d, path) == NULL ||
	    strstr(d, "fs handled, tcp bind+connect denied, scoped: "
	    "abstract-unix signal\n") == NULL ||
	    strstr(d, "seccomp: default kill-process, ") == NULL)
		return (FAIL(4));
	return (0);
}

START_TEST(test_unveil)
{
	ck_exited(in_child(child_unveil), 0);
	ck_exited(in_child(child_unveil_pledge), 0);
}
END_TEST

/* A listener the children try to reach, opened by the test process. */
static int		 lsock = -1;
static struct sockaddr_un lsun;
static socklen_t	 lsunlen;
static struct sockaddr_in lsin;

static int
child_abstract(void)
{
	int	 s;

	if (pledge("stdio unix", NULL) == -1)
		return (FAIL(1));
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return (FAIL(2));
	if (connect(s, (struct sockaddr *)&lsun, lsunlen) != -1 ||
	    errno != EPERM)
		return (FAIL(3));
	return (0);
}

static int
child_signal(void)
{
	if (pledge("stdio proc", NULL) == -1)
		return (FAIL(1));
	if (kill(getppid(), 0) != -1 || errno != EPERM)
		return (FAIL(2));
	if (kill(getpid(), 0) == -1)
		return (FAIL(3));
	return (0);
}

static int
child_tcp(void)
{
	int	 s;

	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (FAIL(1));
	if (pledge("stdio unix", NULL) == -1)
		return (FAIL(2));
	if (connect(s, (struct sockaddr *)&lsin, sizeof(lsin)) != -1 ||
	    errno != EACCES)
		return (FAIL(3));
	return (0);
}

static int
child_tcp_inet(void)
{
	int	 s;

	if (pledge("stdio inet", NULL) == -1)
		return (FAIL(1));
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (FAIL(2));
	if (connect(s, (struct sockaddr *)&lsin, sizeof(lsin)) == -1)
		return (FAIL(3));
	return (0);
}

START_TEST(test_landlock_scopes)
{
	int		 t;
	socklen_t	 len = sizeof(lsin);

	if (landlock_abi() < 6)
		return;		/* nothing to test on this kernel */
	memset(&lsun, 0, sizeof(lsun));
	lsun.sun_family = AF_UNIX;
	snprintf(lsun.sun_path + 1, sizeof(lsun.sun_path) - 1,
	    "test_pledge.%d", (int)getpid());
	lsunlen = offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(lsun.sun_path + 1);
	ck_assert_int_ne(lsock = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(lsock, (struct sockaddr *)&lsun, lsunlen), 0);
	ck_assert_int_eq(listen(lsock, 4), 0);
	ck_exited(in_child(child_abstract), 0);
	ck_exited(in_child(child_signal), 0);
	close(lsock);

	memset(&lsin, 0, sizeof(lsin));
	lsin.sin_family = AF_INET;
	lsin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ne(t = socket(AF_INET, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(t, (struct sockaddr *)&lsin, sizeof(lsin)), 0);
	ck_assert_int_eq(getsockname(t, (struct sockaddr *)&lsin, &len), 0);
	ck_assert_int_eq(listen(t, 4), 0);
	ck_exited(in_child(child_tcp), 0);
	ck_exited(in_child(child_tcp_inet), 0);
	close(t);
}
END_TEST

static int
child_forbidden_keyctl(void)
{
	if (pledge("stdio rpath wpath cpath fattr chown flock unix inet dns "
	    "recvfd sendfd proc exec id getpw tty", NULL) == -1)
		return (FAIL(1));
	syscall(SYS_keyctl, 0, 0, 0);
	return (FAIL(2));
}

static int
child_forbidden_unshare(void)
{
	if (pledge("stdio proc exec id", NULL) == -1)
		return (FAIL(1));
	unshare(CLONE_NEWUSER);
	return (FAIL(2));
}

static int
child_forbidden_clone_ns(void)
{
	if (pledge("stdio proc", NULL) == -1)
		return (FAIL(1));
	/* fork(2)'s flags plus a namespace */
	syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	return (FAIL(2));
}

static int
child_forbidden_socket(void)
{
	if (pledge("stdio unix inet dns", NULL) == -1)
		return (FAIL(1));
	socket(AF_PACKET, SOCK_RAW, 0);
	return (FAIL(2));
}

static int
child_forbidden_x32(void)
{
	if (pledge("stdio", NULL) == -1)
		return (FAIL(1));
	/* getpid(2) through the x32 ABI must not slip past the filter. */
	syscall(0x40000000 | SYS_getpid);
	return (FAIL(2));
}

START_TEST(test_never_promised)
{
	ck_sigsys(in_child(child_forbidden_x32));
	ck_sigsys(in_child(child_forbidden_keyctl));
	ck_sigsys(in_child(child_forbidden_unshare));
	ck_sigsys(in_child(child_forbidden_clone_ns));
	ck_sigsys(in_child(child_forbidden_socket));
}
END_TEST

static Suite *
pledge_suite(void)
{
	Suite	*s = suite_create("pledge");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	/* In the runner itself: removed even when a case fails. */
	tcase_add_unchecked_fixture(tc, make_tree, remove_tree);
	tcase_add_test(tc, test_bad_args);
	tcase_add_test(tc, test_libevent_stdio);
	tcase_add_test(tc, test_ioctl_width);
	tcase_add_test(tc, test_threads_not_processes);
	tcase_add_test(tc, test_narrow_only);
	tcase_add_test(tc, test_fastopen);
	tcase_add_test(tc, test_open_flags);
	tcase_add_test(tc, test_unveil);
	tcase_add_test(tc, test_landlock_scopes);
	tcase_add_test(tc, test_never_promised);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(pledge_suite());
	int	 nfailed;

	srunner_run_all(sr, CK_NORMAL);
	nfailed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (nfailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
