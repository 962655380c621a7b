/*
 * A hostile agent in one binary: each subcommand tries one forbidden
 * act and prints one line, "ACT: RESULT", where RESULT is the errno name
 * the kernel answered with, or a word that means the act went through
 * ("ALLOWED", "read N", ...).  regress/hostile/run.sh submits it through
 * factoryd and reads the attempt's log.  The exit status is 0 when every
 * act of the invocation was refused, 1 when one went through.
 *
 *	probe read PATH ...		open and read each
 *	probe write PATH ...		create or append to each
 *	probe link SRC DST		hard link
 *	probe tcp ADDR PORT		connect(2) over TCP
 *	probe udp ADDR PORT		sendto(2) one datagram
 *	probe resolve NAME		getaddrinfo(3)
 *	probe abstract NAME		connect to an abstract unix socket
 *	probe unix PATH			connect to a pathname unix socket
 *	probe unixmany DIR N		connect to DIR/s.0 ... DIR/s.N-1, one
 *					line: the errno if every one was
 *					refused alike
 *	probe kill PID ...		kill(PID, SIGTERM)
 *	probe syscalls			ptrace, process_vm_readv, bpf, keyctl,
 *					add_key, mount, umount2, unshare,
 *					clone(CLONE_NEWUSER), clone3, setns,
 *					io_uring_setup, perf_event_open,
 *					userfaultfd, name_to_handle_at,
 *					personality, chroot
 *	probe families			socket(2) and socketpair(2) of every
 *					family but unix, inet, inet6 and
 *					netlink route; those four as controls
 *					("works")
 *	probe written			run bytes the agent wrote: a memfd
 *					through /proc/self/fd, fexecve and
 *					execveat; copies in the tree, /tmp
 *					and /dev/shm by path, by fd and
 *					through the dynamic loader
 *	probe ioctl tiocsti|tioclinux [high]
 *					the terminal injections (the filter
 *					kills the process)
 *	probe fds			fds open now, "fds: 0 1 2", then
 *					what "env" prints
 *	probe env			names of the environment
 *	probe escape			/proc/self/exe, /proc/1/root, /proc/1/exe,
 *					dir fds 3..63
 *	probe forkbomb			fork until refused, then exit 3
 *	probe membomb MB		touch MB megabytes, 1M at a time
 *	probe childmem MB		a child runs membomb MB; once it is
 *					gone, say how and exit 3
 *	probe childfork			a child forks until refused; once it
 *					is gone, exit 0
 *	probe fill PATH			write until refused
 *	probe flood BYTES		write BYTES to stdout
 *	probe hang			ignore SIGTERM, double-fork, setsid,
 *					sleep forever
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
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

extern char	**environ;

static int	 went_through;

/* errno after the call: an argument list has no order of evaluation. */
#define TRY(act, call)	do {						\
	long	 try_r = (long)(call);					\
									\
	report((act), try_r, errno);					\
} while (0)

/* The errno's name, so the test can expect the exact refusal. */
static const char *
ename(int e)
{
	const char	*n = strerrorname_np(e);

	return (n != NULL ? n : "E?");
}

/* Print the result of one act: r == -1 is a refusal, else it worked. */
static void
report(const char *act, long r, int e)
{
	if (r == -1)
		printf("%s: %s\n", act, ename(e));
	else {
		printf("%s: ALLOWED\n", act);
		went_through = 1;
	}
	fflush(stdout);
}

static void
do_read(const char *path)
{
	char	 act[512], buf[4096];
	ssize_t	 n;
	int	 fd;

	snprintf(act, sizeof(act), "read %s", path);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		TRY(act, -1);
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n == -1) {
		TRY(act, -1);
		return;
	}
	/* An empty file (a masked key) gives nothing away. */
	printf("%s: read %zd\n", act, n);
	if (n > 0)
		went_through = 1;
	fflush(stdout);
}

static void
do_write(const char *path)
{
	char	 act[512];
	int	 fd;

	snprintf(act, sizeof(act), "write %s", path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644)) == -1) {
		TRY(act, -1);
		return;
	}
	if (write(fd, "hostile\n", 8) != 8) {
		TRY(act, -1);
		close(fd);
		return;
	}
	close(fd);
	report(act, 0, 0);
}

static int
inet_sock(int type, const char *addr, const char *port,
    struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1) {
		fprintf(stderr, "probe: bad address %s\n", addr);
		exit(2);
	}
	return (socket(AF_INET, type | SOCK_CLOEXEC, 0));
}

static void
do_tcp(const char *addr, const char *port)
{
	struct sockaddr_in	 sin;
	char			 act[128];
	int			 s, r;

	snprintf(act, sizeof(act), "tcp %s:%s", addr, port);
	if ((s = inet_sock(SOCK_STREAM, addr, port, &sin)) == -1) {
		TRY(act, -1);
		return;
	}
	r = connect(s, (struct sockaddr *)&sin, sizeof(sin));
	TRY(act, r);
	close(s);
}

static void
do_udp(const char *addr, const char *port)
{
	struct sockaddr_in	 sin;
	char			 act[128];
	ssize_t			 r;
	int			 s;

	snprintf(act, sizeof(act), "udp %s:%s", addr, port);
	if ((s = inet_sock(SOCK_DGRAM, addr, port, &sin)) == -1) {
		TRY(act, -1);
		return;
	}
	r = sendto(s, "hostile", 7, 0, (struct sockaddr *)&sin, sizeof(sin));
	TRY(act, r);
	close(s);
}

static void
do_resolve(const char *name)
{
	struct addrinfo	 hints, *res;
	int		 r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(name, "80", &hints, &res);
	if (r == 0) {
		printf("resolve %s: ALLOWED\n", name);
		went_through = 1;
		freeaddrinfo(res);
	} else
		printf("resolve %s: %s\n", name, r == EAI_NONAME ? "EAI_NONAME" :
		    r == EAI_AGAIN ? "EAI_AGAIN" : r == EAI_FAIL ? "EAI_FAIL" :
		    r == EAI_SYSTEM ? ename(errno) : "EAI_OTHER");
	fflush(stdout);
}

static void
do_unix(const char *name, int abstract)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	char			 act[256];
	int			 s, r;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (abstract) {
		strncpy(sun.sun_path + 1, name, sizeof(sun.sun_path) - 2);
		len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
		snprintf(act, sizeof(act), "abstract @%s", name);
	} else {
		strncpy(sun.sun_path, name, sizeof(sun.sun_path) - 1);
		len = sizeof(sun);
		snprintf(act, sizeof(act), "unix %s", name);
	}
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		TRY(act, -1);
		return;
	}
	r = connect(s, (struct sockaddr *)&sun, len);
	TRY(act, r);
	if (r == 0)
		(void)write(s, "hostile\n", 8);
	close(s);
}

static void
do_unixmany(const char *dir, int n)
{
	struct sockaddr_un	 sun;
	char			 act[256];
	int			 i, s, e = 0, mixed = 0, ok = 0;

	snprintf(act, sizeof(act), "unix %s/s.*", dir);
	for (i = 0; i < n; i++) {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/s.%d", dir,
		    i);
		if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1) {
			TRY(act, -1);
			return;
		}
		if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			ok++;
		else if (e == 0)
			e = errno;
		else if (errno != e)
			mixed = 1;
		close(s);
	}
	if (ok > 0) {
		printf("%s: ALLOWED %d of %d\n", act, ok, n);
		went_through = 1;
	} else if (mixed)
		printf("%s: mixed errors\n", act);
	else
		printf("%s: %s\n", act, ename(e));
	fflush(stdout);
}

static void
do_kill(const char *pid)
{
	char	 act[64];

	snprintf(act, sizeof(act), "kill %s", pid);
	TRY(act, kill((pid_t)atoi(pid), SIGTERM));
}

/* Each denied syscall, called with arguments that would work for root. */
static void
do_syscalls(void)
{
	struct perf_event_attr	 pa;
	struct iovec		 l, r;
	char			 buf[64], handle[256];
	long			 ret;
	int			 fd, mnt;
	pid_t			 pp = getppid();

	TRY("ptrace attach", ptrace(PTRACE_ATTACH, pp, 0, 0));
	TRY("ptrace traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
	l.iov_base = buf;
	l.iov_len = sizeof(buf);
	r.iov_base = (void *)&went_through;
	r.iov_len = sizeof(went_through);
	TRY("process_vm_readv", syscall(SYS_process_vm_readv, getpid(), &l,
	    1, &r, 1, 0));
	memset(buf, 0, sizeof(buf));
	buf[0] = 2;	/* BPF_MAP_TYPE_ARRAY */
	buf[4] = 4;
	buf[8] = 4;
	buf[12] = 1;
	TRY("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, buf, 72));
	TRY("keyctl", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */,
	    -3 /* session */, 1));
	TRY("add_key", syscall(SYS_add_key, "user", "hostile", "x", 1,
	    -3));
	TRY("mount", mount("tmpfs", "/tmp", "tmpfs", 0, NULL));
	TRY("umount2", umount2("/proc", MNT_DETACH));
	TRY("unshare user", unshare(CLONE_NEWUSER));
	TRY("unshare net", unshare(CLONE_NEWNET));
	ret = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (ret == 0)
		_exit(0);
	if (ret > 0)
		waitpid((pid_t)ret, NULL, 0);
	TRY("clone newuser", ret);
	memset(buf, 0, sizeof(buf));
	ret = syscall(SYS_clone3, buf, 88);
	if (ret == 0)
		_exit(0);
	TRY("clone3", ret);
	if ((fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1)
		TRY("setns", -1);
	else {
		TRY("setns", setns(fd, 0));
		close(fd);
	}
	memset(buf, 0, sizeof(buf));
	TRY("io_uring_setup", syscall(425, 4, buf));
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_SOFTWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_SW_CPU_CLOCK;
	pa.exclude_kernel = 1;
	TRY("perf_event_open", syscall(SYS_perf_event_open, &pa, 0, -1,
	    -1, 0));
	TRY("userfaultfd", syscall(SYS_userfaultfd, 0));
	memset(handle, 0, sizeof(handle));
	*(unsigned int *)handle = 128;
	TRY("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD,
	    "/", handle, &mnt, 0));
	TRY("personality addr_no_randomize",
	    personality(PER_LINUX | ADDR_NO_RANDOMIZE));
	TRY("chroot", chroot("/tmp"));
}

/*
 * Families an agent has no use for, each with a type and protocol the
 * kernel would take (vsock reaches the hypervisor of a VM host whatever
 * the network namespace; alg, packet and netlink diag are kernel attack
 * surface; an unknown family may load a module).  The family and the
 * protocol are ints to the kernel: "high" variants set bit 32 to catch
 * a filter that compares 64 bits.
 */
static const struct family {
	const char	*name;
	unsigned long	 domain;
	int		 type;
	unsigned long	 proto;
} families[] = {
	{ "unspec", 0, SOCK_STREAM, 0 },
	{ "vsock stream", 40, SOCK_STREAM, 0 },
	{ "vsock dgram", 40, SOCK_DGRAM, 0 },
	{ "vsock seqpacket", 40, SOCK_SEQPACKET, 0 },
	{ "vsock high", 0x100000000UL | 40, SOCK_STREAM, 0 },
	{ "packet raw", 17, SOCK_RAW, 0x0300 },	/* htons(ETH_P_ALL) */
	{ "packet dgram", 17, SOCK_DGRAM, 0x0300 },
	{ "netlink usersock", 16, SOCK_RAW, 2 },
	{ "netlink firewall", 16, SOCK_RAW, 3 },
	{ "netlink sock_diag", 16, SOCK_RAW, 4 },
	{ "netlink nflog", 16, SOCK_RAW, 5 },
	{ "netlink xfrm", 16, SOCK_RAW, 6 },
	{ "netlink selinux", 16, SOCK_RAW, 7 },
	{ "netlink iscsi", 16, SOCK_RAW, 8 },
	{ "netlink audit", 16, SOCK_RAW, 9 },
	{ "netlink fib_lookup", 16, SOCK_RAW, 10 },
	{ "netlink connector", 16, SOCK_RAW, 11 },
	{ "netlink netfilter", 16, SOCK_RAW, 12 },
	{ "netlink kobject_uevent", 16, SOCK_DGRAM, 15 },
	{ "netlink generic", 16, SOCK_RAW, 16 },
	{ "netlink scsitransport", 16, SOCK_RAW, 18 },
	{ "netlink rdma", 16, SOCK_RAW, 20 },
	{ "netlink crypto", 16, SOCK_RAW, 21 },
	{ "netlink smc", 16, SOCK_RAW, 22 },
	{ "netlink sock_diag high", 16, SOCK_RAW, 0x100000000UL | 4 },
	{ "bluetooth hci", 31, SOCK_RAW, 1 },
	{ "bluetooth l2cap", 31, SOCK_SEQPACKET, 0 },
	{ "bluetooth rfcomm", 31, SOCK_STREAM, 3 },
	{ "alg", 38, SOCK_SEQPACKET, 0 },
	{ "key", 15, SOCK_RAW, 2 },			/* PF_KEY_V2 */
	{ "xdp", 44, SOCK_RAW, 0 },
	{ "can raw", 29, SOCK_RAW, 1 },
	{ "tipc", 30, SOCK_RDM, 0 },
	{ "rds", 21, SOCK_SEQPACKET, 0 },
	{ "llc", 26, SOCK_DGRAM, 0 },
	{ "kcm", 41, SOCK_DGRAM, 0 },
	{ "qipcrtr", 42, SOCK_DGRAM, 0 },
	{ "smc", 43, SOCK_STREAM, 0 },
	{ "mctp", 45, SOCK_DGRAM, 0 },
	{ "appletalk", 5, SOCK_DGRAM, 0 },
	{ "ax25", 3, SOCK_SEQPACKET, 0 },
	{ "ipx", 4, SOCK_DGRAM, 0 },
	{ "x25", 9, SOCK_SEQPACKET, 0 },
	{ "phonet", 35, SOCK_DGRAM, 0 },
	{ "ieee802154", 36, SOCK_RAW, 0 },
	{ "caif", 37, SOCK_SEQPACKET, 0 },
	{ "nfc", 39, SOCK_SEQPACKET, 0 },
	{ "rxrpc", 33, SOCK_DGRAM, 2 },
	{ "atmpvc", 8, SOCK_DGRAM, 0 },
	{ "pppox", 24, SOCK_STREAM, 0 },
	{ "family 63", 63, SOCK_STREAM, 0 },
	{ "family 255", 255, SOCK_STREAM, 0 },
	{ "family -1", 0xffffffffUL, SOCK_STREAM, 0 },
};

static void
do_families(void)
{
	char	 act[80];
	size_t	 i;
	long	 r;
	int	 sv[2], e;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		snprintf(act, sizeof(act), "socket %s", families[i].name);
		r = syscall(SYS_socket, families[i].domain, families[i].type,
		    families[i].proto);
		e = errno;
		if (r != -1)
			close((int)r);
		report(act, r, e);
	}
	/* socketpair(2) is for unix sockets only. */
	TRY("socketpair vsock", socketpair(40, SOCK_STREAM, 0, sv));
	TRY("socketpair inet", socketpair(AF_INET, SOCK_STREAM, 0, sv));
	TRY("socketpair netlink", socketpair(AF_NETLINK, SOCK_RAW, 0, sv));
	TRY("socketpair vsock high", syscall(SYS_socketpair,
	    0x100000000UL | 40, SOCK_STREAM, 0, sv));
	/* The controls: what agents need works. */
	r = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("socket unix: %s\n", r == -1 ? ename(errno) : "works");
	r = socket(AF_INET, SOCK_STREAM, 0);
	printf("socket inet: %s\n", r == -1 ? ename(errno) : "works");
	r = socket(AF_INET6, SOCK_DGRAM, 0);
	printf("socket inet6: %s\n", r == -1 ? ename(errno) : "works");
	r = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
	printf("socket netlink route: %s\n", r == -1 ? ename(errno) :
	    "works");
	r = socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	printf("socketpair unix: %s\n", r == -1 ? ename(errno) : "works");
	fflush(stdout);
}

#ifndef MFD_EXEC
#define MFD_EXEC		0x0010U
#endif
#define PROBE_LDSO	"/lib64/ld-linux-x86-64.so.2"
#define PROBE_BIN	"/bin/true"

/* A copy of PROBE_BIN's bytes into fd, executable where the mode allows. */
static int
copy_true(int fd)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in;

	if ((in = open(PROBE_BIN, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, n) != n) {
			close(in);
			return (-1);
		}
	close(in);
	(void)fchmod(fd, 0755);
	return (n == 0 ? 0 : -1);
}

/*
 * Run what = 0: execv(path), 1: fexecve(fd), 2: execveat(fd, "",
 * AT_EMPTY_PATH), 3: the dynamic loader on path, in a child.  The
 * copy is /bin/true: exit 0 means the written bytes ran.  A refused
 * exec reports its errno; the loader refusing to map reports its exit.
 */
static void
run_written(const char *act, int what, const char *path, int fd)
{
	char	*argv[] = { (char *)path, NULL };
	char	*ldargv[] = { PROBE_LDSO, (char *)path, NULL };
	pid_t	 pid;
	int	 st, p[2], e = 0;

	if (pipe2(p, O_CLOEXEC) == -1 || (pid = fork()) == -1) {
		TRY(act, -1);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		if (what == 0)
			execv(path, argv);
		else if (what == 1)
			fexecve(fd, argv, environ);
		else if (what == 2)
			syscall(SYS_execveat, fd, "", argv, environ,
			    AT_EMPTY_PATH);
		else
			execv(PROBE_LDSO, ldargv);
		e = errno;
		(void)write(p[1], &e, sizeof(e));
		_exit(126);
	}
	close(p[1]);
	if (read(p[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	if (e != 0)
		report(act, -1, e);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		report(act, 0, 0);
	else {
		printf("%s: exit %d\n", act, WIFEXITED(st) ?
		    WEXITSTATUS(st) : 128 + WTERMSIG(st));
		fflush(stdout);
	}
}

/* A file of written bytes at path, then every way to run it. */
static void
written_file(const char *where, const char *path)
{
	char	 act[128], fdpath[64];
	int	 fd;

	snprintf(act, sizeof(act), "write copy %s", where);
	(void)unlink(path);
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
	    0755)) == -1 || copy_true(fd) == -1) {
		TRY(act, -1);
		return;
	}
	close(fd);
	snprintf(act, sizeof(act), "exec %s copy", where);
	run_written(act, 0, path, -1);
	snprintf(act, sizeof(act), "ld.so %s copy", where);
	run_written(act, 3, path, -1);
	if ((fd = open(path, O_RDONLY)) == -1)
		return;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	snprintf(act, sizeof(act), "exec /proc/self/fd of %s copy", where);
	run_written(act, 0, fdpath, fd);
	snprintf(act, sizeof(act), "fexecve %s copy", where);
	run_written(act, 1, path, fd);
	snprintf(act, sizeof(act), "execveat %s copy", where);
	run_written(act, 2, path, fd);
	close(fd);
	unlink(path);
}

static void
do_written(void)
{
	char	 fdpath[64];
	int	 fd;
	long	 r;

	r = syscall(SYS_memfd_create, "hostile", MFD_EXEC);
	if (r != -1)
		close((int)r);
	TRY("memfd_create MFD_EXEC", r);
	if ((fd = (int)syscall(SYS_memfd_create, "hostile", 0)) == -1 ||
	    copy_true(fd) == -1) {
		TRY("memfd copy", -1);
		return;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	run_written("exec memfd", 0, fdpath, fd);
	run_written("fexecve memfd", 1, fdpath, fd);
	run_written("execveat memfd", 2, fdpath, fd);
	TRY("memfd fchmod 0755", fchmod(fd, 0755));
	close(fd);
	written_file("tree", "./hostile-true");
	written_file("/tmp", "/tmp/hostile-true");
	written_file("/dev/shm", "/dev/shm/hostile-true");
	/* A binary the agent may run, but not through an fd. */
	if ((fd = open(PROBE_BIN, O_RDONLY | O_CLOEXEC)) != -1) {
		run_written("fexecve /bin/true", 1, PROBE_BIN, fd);
		run_written("execveat /bin/true", 2, PROBE_BIN, fd);
		close(fd);
	}
}

/* The filter kills the process: a line after the ioctl means it did not. */
static void
do_ioctl(const char *which, int high)
{
	unsigned long	 cmd;
	char		 c = 'x';
	int		 fd;

	cmd = strcmp(which, "tiocsti") == 0 ? TIOCSTI : TIOCLINUX;
	if (high)
		cmd |= 0x100000000UL;
	if ((fd = open("/dev/tty", O_RDWR | O_CLOEXEC)) == -1)
		fd = 0;
	printf("ioctl %s%s: trying\n", which, high ? " high" : "");
	fflush(stdout);
	TRY(which, syscall(SYS_ioctl, fd, cmd, &c));
	printf("ioctl %s%s: survived\n", which, high ? " high" : "");
	went_through = 1;
}

static void
do_fds(void)
{
	int	 fd;

	printf("fds:");
	for (fd = 0; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			printf(" %d", fd);
	printf("\n");
	fflush(stdout);
}

static void
do_env(void)
{
	char	**e;

	printf("env:");
	for (e = environ; *e != NULL; e++)
		printf(" %.*s", (int)strcspn(*e, "="), *e);
	printf("\n");
	for (e = environ; *e != NULL; e++)
		printf("envvalue %s\n", *e);
	fflush(stdout);
}

static void
do_escape(const char *secret)
{
	char	 path[512], act[512], buf[256];
	int	 fd, n;
	ssize_t	 len;

	/* The runc escape: write our own executable through /proc. */
	TRY("write /proc/self/exe", open("/proc/self/exe", O_WRONLY |
	    O_CLOEXEC));
	TRY("write /proc/1/exe", open("/proc/1/exe", O_WRONLY | O_CLOEXEC));
	len = readlink("/proc/1/root", buf, sizeof(buf) - 1);
	TRY("readlink /proc/1/root", len);
	snprintf(path, sizeof(path), "/proc/1/root%s", secret);
	do_read(path);
	snprintf(path, sizeof(path), "/proc/1/cwd");
	TRY("open /proc/1/cwd", open(path, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC));
	snprintf(path, sizeof(path), "/proc/self/root%s", secret);
	do_read(path);
	TRY("open /proc/self/fd/3", open("/proc/self/fd/3", O_RDONLY |
	    O_CLOEXEC));
	/* A leaked directory fd leads out of any mount view. */
	n = 0;
	for (fd = 3; fd < 64; fd++) {
		int	 d = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (d != -1) {
			snprintf(act, sizeof(act), "openat fd %d", fd);
			report(act, 0, 0);
			close(d);
			n++;
		}
	}
	if (n == 0)
		printf("leaked dir fds: none\n");
	fflush(stdout);
}

static void
do_forkbomb(void)
{
	pid_t	 pid;
	int	 n, e;

	for (n = 0; n < 100000; n++) {
		if ((pid = fork()) == 0) {
			pause();
			_exit(0);
		}
		if (pid == -1)
			break;
	}
	e = errno;
	printf("forkbomb: %s after %d\n", n == 100000 ? "ALLOWED" : ename(e),
	    n);
	fflush(stdout);
	exit(3);
}

static void
do_membomb(const char *mb)
{
	long	 n, i;
	char	*p;

	n = atol(mb);
	for (i = 0; i < n; i++) {
		if ((p = malloc(1 << 20)) == NULL) {
			printf("membomb: ENOMEM after %ld\n", i);
			exit(3);
		}
		memset(p, 1, 1 << 20);
		if (i % 16 == 0) {
			printf("membomb: %ld MB\n", i);
			fflush(stdout);
		}
	}
	printf("membomb: ALLOWED %ld MB\n", n);
	exit(1);
}

/*
 * A child breaks the limit and the agent carries on: what it reports
 * must be the limit, not the agent's own exit.
 */
static void
do_child(const char *act, const char *arg)
{
	pid_t	 pid;
	int	 st;

	fflush(stdout);
	if ((pid = fork()) == -1) {
		printf("%s: fork: %s\n", act, ename(errno));
		exit(1);
	}
	if (pid == 0) {
		if (arg != NULL)
			do_membomb(arg);
		do_forkbomb();
	}
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	if (WIFSIGNALED(st))
		printf("%s: child killed by signal %d\n", act, WTERMSIG(st));
	else
		printf("%s: child exited with status %d\n", act,
		    WEXITSTATUS(st));
	fflush(stdout);
	exit(arg != NULL ? 3 : 0);
}

static void
do_fill(const char *path)
{
	char		 buf[65536];
	long long	 total = 0;
	ssize_t		 n;
	int		 fd;

	/* See EFBIG rather than die of SIGXFSZ. */
	signal(SIGXFSZ, SIG_IGN);
	memset(buf, 'f', sizeof(buf));
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) == -1) {
		printf("fill %s: %s\n", path, ename(errno));
		return;
	}
	for (;;) {
		n = write(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		total += n;
		if (total >= 4LL << 30)
			break;
	}
	printf("fill %s: %s at %lld\n", path, n <= 0 ? ename(errno) :
	    "ALLOWED", total);
	if (n > 0)
		went_through = 1;
	close(fd);
	fflush(stdout);
}

static void
do_flood(const char *bytes)
{
	char		 buf[4096];
	long long	 want = atoll(bytes), done = 0;
	ssize_t		 n;

	memset(buf, 'L', sizeof(buf));
	buf[sizeof(buf) - 1] = '\n';
	while (done < want) {
		if ((n = write(1, buf, sizeof(buf))) <= 0)
			break;
		done += n;
	}
	fprintf(stderr, "flood: wrote %lld\n", done);
}

/* Outlive the attempt: every trick a process has without privileges. */
static void
do_hang(void)
{
	pid_t	 pid;

	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	if ((pid = fork()) == 0) {
		setsid();
		if (fork() == 0) {
			for (;;)
				pause();
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("hang: double-forked, sleeping\n");
	fflush(stdout);
	for (;;)
		pause();
}

static void __attribute__((__noreturn__))
usage(void)
{
	fprintf(stderr, "usage: probe act [argument ...]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	const char	*act;
	int		 i;

	if (argc < 2)
		usage();
	act = argv[1];
	if (strcmp(act, "read") == 0)
		for (i = 2; i < argc; i++)
			do_read(argv[i]);
	else if (strcmp(act, "write") == 0)
		for (i = 2; i < argc; i++)
			do_write(argv[i]);
	else if (strcmp(act, "link") == 0 && argc == 4) {
		char	 a[512];

		snprintf(a, sizeof(a), "link %s", argv[2]);
		TRY(a, link(argv[2], argv[3]));
	} else if (strcmp(act, "tcp") == 0 && argc == 4)
		do_tcp(argv[2], argv[3]);
	else if (strcmp(act, "udp") == 0 && argc == 4)
		do_udp(argv[2], argv[3]);
	else if (strcmp(act, "resolve") == 0 && argc == 3)
		do_resolve(argv[2]);
	else if (strcmp(act, "abstract") == 0 && argc == 3)
		do_unix(argv[2], 1);
	else if (strcmp(act, "unix") == 0 && argc == 3)
		do_unix(argv[2], 0);
	else if (strcmp(act, "unixmany") == 0 && argc == 4)
		do_unixmany(argv[2], atoi(argv[3]));
	else if (strcmp(act, "kill") == 0)
		for (i = 2; i < argc; i++)
			do_kill(argv[i]);
	else if (strcmp(act, "syscalls") == 0)
		do_syscalls();
	else if (strcmp(act, "families") == 0)
		do_families();
	else if (strcmp(act, "written") == 0)
		do_written();
	else if (strcmp(act, "ioctl") == 0 && argc >= 3)
		do_ioctl(argv[2], argc == 4 && strcmp(argv[3], "high") == 0);
	else if (strcmp(act, "fds") == 0) {
		do_fds();
		do_env();
	}
	else if (strcmp(act, "env") == 0)
		do_env();
	else if (strcmp(act, "escape") == 0 && argc == 3)
		do_escape(argv[2]);
	else if (strcmp(act, "forkbomb") == 0)
		do_forkbomb();
	else if (strcmp(act, "membomb") == 0 && argc == 3)
		do_membomb(argv[2]);
	else if (strcmp(act, "childmem") == 0 && argc == 3)
		do_child(act, argv[2]);
	else if (strcmp(act, "childfork") == 0)
		do_child(act, NULL);
	else if (strcmp(act, "fill") == 0 && argc == 3)
		do_fill(argv[2]);
	else if (strcmp(act, "flood") == 0 && argc == 3)
		do_flood(argv[2]);
	else if (strcmp(act, "hang") == 0)
		do_hang();
	else
		usage();
	return (went_through);
}
