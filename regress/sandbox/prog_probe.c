/*
 * prog_probe: the hostile agent of the sandbox regress.  Each
 * subcommand tries one forbidden thing and prints what happened on one
 * line: "ok" if it worked, else the errno name ("EPERM").  Being
 * killed (seccomp's SIGSYS, SIGXCPU, the OOM killer) shows in the
 * launcher's "signal N" line instead.  A few subcommands (listen-*)
 * run on the host side of a test.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/perf_event.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

static int
result(long rc)
{
	if (rc == -1) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	printf("ok\n");
	return 0;
}

static int
do_write(const char *path)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		return result(-1);
	if (write(fd, "x\n", 2) != 2)
		return result(-1);
	close(fd);
	return result(0);
}

static int
do_read(const char *path)
{
	char	 buf[256];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return result(-1);
	if ((n = read(fd, buf, sizeof(buf))) == -1)
		return result(-1);
	close(fd);
	printf("read %zd\n", n);
	return 0;
}

static int
do_connect(const char *port)
{
	struct sockaddr_in	 sin;
	int			 s;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(atoi(port));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return result(-1);
	return result(connect(s, (struct sockaddr *)&sin, sizeof(sin)));
}

static socklen_t
abstract(struct sockaddr_un *sun, const char *name)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	strncpy(sun->sun_path + 1, name, sizeof(sun->sun_path) - 2);
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

static int
do_abstract(const char *name)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = abstract(&sun, name);
	int			 s;

	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return result(-1);
	return result(connect(s, (struct sockaddr *)&sun, len));
}

/*
 * bind tcp|tcp6|udp:PORT on the loopback address: ok, or the errno's
 * name (EACCES from Landlock, EPERM from the cgroup's bind rule).
 */
static int
do_bind(const char *arg)
{
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	const char		*c = strchr(arg, ':');
	int			 s, v6 = strncmp(arg, "tcp6:", 5) == 0;

	if (c == NULL)
		return (2);
	s = socket(v6 ? AF_INET6 : AF_INET, strncmp(arg, "udp:", 4) == 0 ?
	    SOCK_DGRAM : SOCK_STREAM, 0);
	if (s == -1)
		return result(-1);
	if (v6) {
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons(atoi(c + 1));
		sin6.sin6_addr = in6addr_loopback;
		return result(bind(s, (struct sockaddr *)&sin6,
		    sizeof(sin6)));
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(atoi(c + 1));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return result(bind(s, (struct sockaddr *)&sin, sizeof(sin)));
}

#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE	51	/* Linux 6.3 */
#endif

/*
 * A TCP socket (tcp|tcp6:LO[-HI]) that autobind picks a port for from
 * LO to HI alone (IP_LOCAL_PORT_RANGE, LO-LO for one port), unbound:
 * -1 and its errno's name printed if there is none.
 */
static int
autosock(const char *arg, int *lo, int *hi)
{
	const char	*c = strchr(arg, ':'), *dash;
	uint32_t	 range;
	int		 s;

	if (c == NULL)
		return (-1);
	*lo = *hi = atoi(c + 1);
	if ((dash = strchr(c, '-')) != NULL)
		*hi = atoi(dash + 1);
	range = (uint32_t)*hi << 16 | (uint32_t)*lo;
	if ((s = socket(strncmp(arg, "tcp6:", 5) == 0 ? AF_INET6 : AF_INET,
	    SOCK_STREAM, 0)) == -1 ||
	    setsockopt(s, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range,
	    sizeof(range)) == -1) {
		result(-1);
		return (-1);
	}
	return (s);
}

static int
sockport(int s)
{
	struct sockaddr_in6	 sin6;
	socklen_t		 len = sizeof(sin6);

	if (getsockname(s, (struct sockaddr *)&sin6, &len) == -1)
		return (-1);
	return (ntohs(sin6.sin6_port));	/* sin_port's place too */
}

/*
 * autolisten tcp|tcp6:PORT: listen(2) without bind(2), the port asked
 * of autobind: "port N" where it landed, or the errno's name.
 */
static int
do_autolisten(const char *arg)
{
	int	 s, lo, hi;

	if ((s = autosock(arg, &lo, &hi)) == -1)
		return (1);
	if (listen(s, 1) == -1)
		return result(-1);
	printf("port %d\n", sockport(s));
	return (0);
}

/*
 * autofill tcp|tcp6:LO-HI: listen(2) without bind(2) again and again,
 * each socket kept, until autobind has no port of LO to HI left: the
 * ports taken ("took 40000 40002"), then why the last failed.  Bounded
 * by the range: every free port of it is taken, none twice.
 */
static int
do_autofill(const char *arg)
{
	int	 s, lo, hi, i, n = 0, taken[64], e = 0;

	do {
		if ((s = autosock(arg, &lo, &hi)) == -1)
			return (1);
		if (listen(s, 1) == -1) {
			e = errno;
			break;
		}
		taken[n++] = sockport(s);
	} while (n < (int)(sizeof(taken) / sizeof(taken[0])) &&
	    n <= hi - lo + 1);
	printf("took");
	for (i = lo; i <= hi; i++)
		for (s = 0; s < n; s++)
			if (taken[s] == i)
				printf(" %d", i);
	printf("\n");
	errno = e;
	return result(e == 0 ? 0 : -1);
}

/* Host side: accept one connection at a time, say so, until killed. */
static int
do_listen(int tcp, const char *arg)
{
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 s, c, one = 1;

	if (tcp) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(atoi(arg));
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			return result(-1);
	} else {
		len = abstract(&sun, arg);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(s, (struct sockaddr *)&sun, len) == -1)
			return result(-1);
	}
	if (listen(s, 5) == -1)
		return result(-1);
	printf("listening\n");
	fflush(stdout);
	while ((c = accept(s, NULL, NULL)) != -1) {
		printf("accepted\n");
		fflush(stdout);
		close(c);
	}
	return 1;
}

static int
do_fds(void)
{
	DIR		*d;
	struct dirent	*de;
	const char	*sep = "";

	if ((d = opendir("/proc/self/fd")) == NULL)
		return result(-1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		printf("%s%s", sep, de->d_name);
		sep = " ";
	}
	printf("\n");
	closedir(d);
	return 0;
}

static int
do_forkbomb(void)
{
	int	 n;
	pid_t	 pid;

	for (n = 0; n < 100000; n++) {
		if ((pid = fork()) == -1) {
			printf("forks %d then %s\n", n,
			    strerrorname_np(errno));
			return 0;
		}
		if (pid == 0) {
			pause();
			_exit(0);
		}
	}
	printf("forks %d, never refused\n", n);
	return 1;
}

static int
do_membomb(const char *mb)
{
	size_t	 i, n = (size_t)atoi(mb) << 20;
	char	*p;

	if ((p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return result(-1);
	for (i = 0; i < n; i += 4096)
		p[i] = 1;
	printf("touched %s MB\n", mb);
	return 1;
}

/*
 * Double fork, new session, sleep; the pid (in the namespace) to a file.
 * Returns only once the daemon has written the file and runs: a pipe
 * whose write end the daemon alone holds by then gives a byte after
 * the file, or EOF if the daemon died first.  The caller then exits
 * with the daemon certainly alive, which is what the test is about.
 */
static int
do_daemon(const char *pidfile)
{
	pid_t	 pid;
	FILE	*f;
	char	 c;
	int	 p[2];

	if (pipe(p) == -1 || (pid = fork()) == -1)
		return result(-1);
	if (pid > 0) {
		close(p[1]);
		waitpid(pid, NULL, 0);
		if (read(p[0], &c, 1) != 1) {
			printf("daemon did not start\n");
			return 1;
		}
		return 0;
	}
	close(p[0]);
	setsid();
	if ((pid = fork()) != 0)
		_exit(pid == -1);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if ((f = fopen(pidfile, "w")) == NULL ||
	    fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) == EOF)
		_exit(1);
	if (write(p[1], "r", 1) != 1)
		_exit(1);
	close(p[1]);
	for (;;)
		pause();
}

static int
do_i386(void)
{
	long	 rc = 20;	/* getpid on i386 */

	__asm__ volatile ("int $0x80" : "+a"(rc) : : "memory");
	printf("i386 getpid %ld\n", rc);
	return 1;
}

static int
do_perf(void)
{
	struct perf_event_attr	 pe;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.exclude_kernel = 1;
	return result(syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
}

static int
do_iouring(void)
{
	char	 params[120];	/* struct io_uring_params */

	memset(params, 0, sizeof(params));
	return result(syscall(SYS_io_uring_setup, 4, params));
}

static int
do_bpf(void)
{
	char	 attr[128];	/* BPF_MAP_CREATE of a tiny array */

	memset(attr, 0, sizeof(attr));
	((unsigned int *)attr)[0] = 2;	/* BPF_MAP_TYPE_ARRAY */
	((unsigned int *)attr)[1] = 4;
	((unsigned int *)attr)[2] = 4;
	((unsigned int *)attr)[3] = 1;
	return result(syscall(SYS_bpf, 0, attr, 72));
}

/*
 * Every family 0..63 with each common type, one line per family:
 * "family N: R R R R" (stream dgram raw seqpacket), R "ok" or the
 * errno; then every netlink protocol 0..31 the same way, raw only.
 */
static int
do_families(void)
{
	const int	 types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW,
			    SOCK_SEQPACKET };
	int		 f, t, s;

	for (f = 0; f < 64; f++) {
		printf("family %d:", f);
		for (t = 0; t < 4; t++) {
			s = socket(f, types[t], 0);
			printf(" %s", s == -1 ? strerrorname_np(errno) : "ok");
			if (s != -1)
				close(s);
		}
		printf("\n");
	}
	for (f = 0; f < 32; f++) {
		s = socket(AF_NETLINK, SOCK_RAW, f);
		printf("netlink %d: %s\n", f, s == -1 ? strerrorname_np(errno) :
		    "ok");
		if (s != -1)
			close(s);
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	const char	*cmd = argc > 1 ? argv[1] : "";
	const char	*arg = argc > 2 ? argv[2] : "";
	char		 c = 'x', **e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(cmd, "write") == 0)
		return do_write(arg);
	if (strcmp(cmd, "read") == 0)
		return do_read(arg);
	if (strcmp(cmd, "mkdir") == 0)
		return result(mkdir(arg, 0755));
	if (strcmp(cmd, "connect") == 0)
		return do_connect(arg);
	if (strcmp(cmd, "abstract") == 0)
		return do_abstract(arg);
	if (strcmp(cmd, "listen-tcp") == 0)
		return do_listen(1, arg);
	if (strcmp(cmd, "bind") == 0)
		return do_bind(arg);
	if (strcmp(cmd, "autolisten") == 0)
		return do_autolisten(arg);
	if (strcmp(cmd, "autofill") == 0)
		return do_autofill(arg);
	if (strcmp(cmd, "listen-abstract") == 0)
		return do_listen(0, arg);
	if (strcmp(cmd, "unshare") == 0)
		return result(unshare(CLONE_NEWUSER));
	if (strcmp(cmd, "setns") == 0)
		return result(setns(open("/proc/self/ns/net", O_RDONLY), 0));
	if (strcmp(cmd, "mount") == 0)
		return result(mount("none", "/tmp", "tmpfs", 0, NULL));
	if (strcmp(cmd, "ptrace") == 0)
		return result(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
	if (strcmp(cmd, "bpf") == 0)
		return do_bpf();
	if (strcmp(cmd, "keyctl") == 0)	/* KEYCTL_GET_KEYRING_ID, session */
		return result(syscall(SYS_keyctl, 0, -3, 1));
	if (strcmp(cmd, "iouring") == 0)
		return do_iouring();
	if (strcmp(cmd, "perf") == 0)
		return do_perf();
	if (strcmp(cmd, "userfaultfd") == 0)
		return result(syscall(SYS_userfaultfd, 0));
	if (strcmp(cmd, "clone-ns") == 0)
		return result(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0,
		    0, 0, 0));
	if (strcmp(cmd, "clone3") == 0)
		return result(syscall(SYS_clone3, NULL, 0));
	if (strcmp(cmd, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		return result(pid == -1 ? -1 : waitpid(pid, NULL, 0));
	}
	if (strcmp(cmd, "personality") == 0)
		return result(personality(ADDR_NO_RANDOMIZE));
	if (strcmp(cmd, "personality-hi") == 0)
		return result(syscall(SYS_personality,
		    0x100000000UL | ADDR_NO_RANDOMIZE));
	if (strcmp(cmd, "personality-query") == 0)
		return result(personality(0xffffffff));
	if (strcmp(cmd, "tiocsti") == 0)
		return result(syscall(SYS_ioctl, 0, TIOCSTI, &c));
	if (strcmp(cmd, "tiocsti-hi") == 0)
		return result(syscall(SYS_ioctl, 0, 0x100000000UL | TIOCSTI,
		    &c));
	if (strcmp(cmd, "tiocgwinsz") == 0) {
		struct winsize ws;
		return result(ioctl(0, TIOCGWINSZ, &ws));
	}
	if (strcmp(cmd, "x32") == 0)
		return result(syscall(0x40000000 | SYS_getpid));
	if (strcmp(cmd, "i386") == 0)
		return do_i386();
	if (strcmp(cmd, "exec") == 0) {
		execv(arg, argv + 2);
		return result(-1);
	}
	if (strcmp(cmd, "fds") == 0)
		return do_fds();
	if (strcmp(cmd, "families") == 0)
		return do_families();
	if (strcmp(cmd, "env") == 0) {
		for (e = environ; *e != NULL; e++)
			printf("%s\n", *e);
		return 0;
	}
	if (strcmp(cmd, "forkbomb") == 0)
		return do_forkbomb();
	if (strcmp(cmd, "membomb") == 0)
		return do_membomb(arg);
	if (strcmp(cmd, "spin") == 0)
		for (;;)
			;
	if (strcmp(cmd, "daemon") == 0)
		return do_daemon(arg);
	if (strcmp(cmd, "kill") == 0)
		return result(kill(atoi(arg), SIGKILL));
	fprintf(stderr, "prog_probe: unknown subcommand %s\n", cmd);
	return 2;
}
