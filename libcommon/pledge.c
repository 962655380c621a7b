/*
 * pledge(2) and unveil(2) on Linux.
 *
 * unveil() collects paths (held open with O_PATH, so a later rename
 * cannot redirect a rule) and the lock turns them into one Landlock
 * layer that handles every file right the kernel knows.  The same
 * layer always scopes abstract unix sockets and signals to the
 * process's own domain.
 *
 * pledge() adds a Landlock layer denying TCP bind and connect unless
 * "inet" is promised, then loads a seccomp filter whose default is to
 * kill the process.  Filters stack, so a second pledge can only narrow;
 * every filter lets the next pledge() through (seccomp, Landlock and
 * no_new_privs can only take rights away).
 *
 * Differences from OpenBSD that a reader should know:
 * - A path given to unveil() must exist (else ENOENT): Landlock rules
 *   hang on open files.  The parent passes only paths it created.
 * - unveil(path, "") adds no right but, like OpenBSD, turns the file
 *   system restriction on; it cannot hide a subtree of an unveiled one.
 * - stat(2) of any path cannot be refused by Landlock: "stdio" lets
 *   fstatat(AT_EMPTY_PATH) through, which names no new path in
 *   practice, but metadata of unveiled-out paths stays visible with
 *   rpath.
 * - recvfd/sendfd: SCM_RIGHTS travels in sendmsg/recvmsg, which stdio
 *   needs anyway; seccomp cannot look into the message, so these two
 *   promises add nothing at the syscall level.
 * - execpromises must be NULL: a seccomp filter survives execve(2), so
 *   a separate set for the new image cannot be expressed.
 * - PROT_EXEC is not restricted (OpenBSD's prot_exec): glibc and
 *   OpenSSL map code as they load.
 * - stdio allows threads (clone with CLONE_THREAD), kill(2) of itself
 *   only, and answers clone3(2) with ENOSYS so glibc falls back.
 * - Without unix, socket(AF_UNIX, SOCK_DGRAM) fails with EACCES under
 *   stdio (syslog(3) reconnecting), and any AF_UNIX socket under getpw
 *   (glibc's nscd probe), which also allows read-only opens; dns: socket(AF_NETLINK) fails with
 *   EAFNOSUPPORT (getaddrinfo's interface probe).  dns, like OpenBSD's,
 *   reads the resolver's files: read-only opens and stat(2) of a path,
 *   which Landlock keeps to what is unveiled (the resolver files).  Any other socket
 *   family not promised kills.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/capability.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "beneath.h"
#include "landlock.h"
#include "pledge.h"

enum {
	P_STDIO		= 1 << 0,
	P_RPATH		= 1 << 1,
	P_WPATH		= 1 << 2,
	P_CPATH		= 1 << 3,
	P_FATTR		= 1 << 4,
	P_CHOWN		= 1 << 5,
	P_FLOCK		= 1 << 6,
	P_UNIX		= 1 << 7,
	P_INET		= 1 << 8,
	P_DNS		= 1 << 9,
	P_RECVFD	= 1 << 10,
	P_SENDFD	= 1 << 11,
	P_PROC		= 1 << 12,
	P_EXEC		= 1 << 13,
	P_ID		= 1 << 14,
	P_GETPW		= 1 << 15,
	P_TTY		= 1 << 16,
	P_ACCEPT	= 1 << 17,
};

static const struct {
	const char	*name;
	unsigned int	 bit;
} promise_names[] = {
	{ "stdio",	P_STDIO },
	{ "rpath",	P_RPATH },
	{ "wpath",	P_WPATH },
	{ "cpath",	P_CPATH },
	{ "fattr",	P_FATTR },
	{ "chown",	P_CHOWN },
	{ "flock",	P_FLOCK },
	{ "unix",	P_UNIX },
	{ "inet",	P_INET },
	{ "dns",	P_DNS },
	{ "recvfd",	P_RECVFD },
	{ "sendfd",	P_SENDFD },
	{ "proc",	P_PROC },
	{ "exec",	P_EXEC },
	{ "id",		P_ID },
	{ "getpw",	P_GETPW },
	{ "tty",	P_TTY },
	/*
	 * Not OpenBSD's: accept(2) on a listening socket it was given,
	 * and nothing more of a network: no socket(2), bind, connect.
	 */
	{ "accept",	P_ACCEPT },
};

/*
 * Syscalls a promise allows whatever their arguments.  Those that need
 * an argument check are added by the functions below the table.
 */
static const struct {
	unsigned int	 promise;
	int		 nr;
} plain_rules[] = {
	/* any promise, even none: dying is always allowed */
	{ 0, SCMP_SYS(exit) },
	{ 0, SCMP_SYS(exit_group) },

	/* stdio: life on descriptors that are already open */
	{ P_STDIO, SCMP_SYS(read) },
	{ P_STDIO, SCMP_SYS(write) },
	{ P_STDIO, SCMP_SYS(readv) },
	{ P_STDIO, SCMP_SYS(writev) },
	{ P_STDIO, SCMP_SYS(pread64) },
	{ P_STDIO, SCMP_SYS(pwrite64) },
	{ P_STDIO, SCMP_SYS(preadv) },
	{ P_STDIO, SCMP_SYS(pwritev) },
	{ P_STDIO, SCMP_SYS(preadv2) },
	{ P_STDIO, SCMP_SYS(pwritev2) },
	{ P_STDIO, SCMP_SYS(close) },
	{ P_STDIO, SCMP_SYS(close_range) },
	{ P_STDIO, SCMP_SYS(fstat) },
	{ P_STDIO, SCMP_SYS(lseek) },
	{ P_STDIO, SCMP_SYS(fsync) },		/* as OpenBSD: on an open fd */
	{ P_STDIO, SCMP_SYS(fdatasync) },
	{ P_STDIO, SCMP_SYS(ftruncate) },
	{ P_STDIO, SCMP_SYS(mmap) },
	{ P_STDIO, SCMP_SYS(munmap) },
	{ P_STDIO, SCMP_SYS(mprotect) },
	{ P_STDIO, SCMP_SYS(mremap) },
	{ P_STDIO, SCMP_SYS(madvise) },
	{ P_STDIO, SCMP_SYS(msync) },
	{ P_STDIO, SCMP_SYS(mincore) },
	{ P_STDIO, SCMP_SYS(brk) },
	{ P_STDIO, SCMP_SYS(futex) },
	{ P_STDIO, SCMP_SYS(set_robust_list) },
	{ P_STDIO, SCMP_SYS(get_robust_list) },
	{ P_STDIO, SCMP_SYS(rseq) },
	{ P_STDIO, SCMP_SYS(set_tid_address) },
	{ P_STDIO, SCMP_SYS(rt_sigaction) },
	{ P_STDIO, SCMP_SYS(rt_sigprocmask) },
	{ P_STDIO, SCMP_SYS(rt_sigreturn) },
	{ P_STDIO, SCMP_SYS(rt_sigpending) },
	{ P_STDIO, SCMP_SYS(rt_sigsuspend) },
	{ P_STDIO, SCMP_SYS(rt_sigtimedwait) },
	{ P_STDIO, SCMP_SYS(sigaltstack) },
	{ P_STDIO, SCMP_SYS(clock_gettime) },
	{ P_STDIO, SCMP_SYS(clock_getres) },
	{ P_STDIO, SCMP_SYS(clock_nanosleep) },
	{ P_STDIO, SCMP_SYS(nanosleep) },
	{ P_STDIO, SCMP_SYS(gettimeofday) },
	{ P_STDIO, SCMP_SYS(time) },
	{ P_STDIO, SCMP_SYS(alarm) },
	{ P_STDIO, SCMP_SYS(getitimer) },
	{ P_STDIO, SCMP_SYS(setitimer) },
	{ P_STDIO, SCMP_SYS(timerfd_create) },	/* libevent precise timers */
	{ P_STDIO, SCMP_SYS(timerfd_settime) },
	{ P_STDIO, SCMP_SYS(timerfd_gettime) },
	{ P_STDIO, SCMP_SYS(getpid) },
	{ P_STDIO, SCMP_SYS(getppid) },
	{ P_STDIO, SCMP_SYS(gettid) },
	{ P_STDIO, SCMP_SYS(getuid) },
	{ P_STDIO, SCMP_SYS(geteuid) },
	{ P_STDIO, SCMP_SYS(getgid) },
	{ P_STDIO, SCMP_SYS(getegid) },
	{ P_STDIO, SCMP_SYS(getresuid) },
	{ P_STDIO, SCMP_SYS(getresgid) },
	{ P_STDIO, SCMP_SYS(getgroups) },
	{ P_STDIO, SCMP_SYS(getpgrp) },
	{ P_STDIO, SCMP_SYS(getpgid) },
	{ P_STDIO, SCMP_SYS(getsid) },
	{ P_STDIO, SCMP_SYS(getrusage) },
	{ P_STDIO, SCMP_SYS(getrlimit) },
	{ P_STDIO, SCMP_SYS(getrandom) },
	{ P_STDIO, SCMP_SYS(uname) },
	{ P_STDIO, SCMP_SYS(sysinfo) },		/* glibc qsort, sysconf */
	{ P_STDIO, SCMP_SYS(sched_yield) },
	{ P_STDIO, SCMP_SYS(sched_getaffinity) },
	{ P_STDIO, SCMP_SYS(restart_syscall) },
	{ P_STDIO, SCMP_SYS(poll) },
	{ P_STDIO, SCMP_SYS(ppoll) },
	{ P_STDIO, SCMP_SYS(select) },
	{ P_STDIO, SCMP_SYS(pselect6) },
	{ P_STDIO, SCMP_SYS(epoll_create) },
	{ P_STDIO, SCMP_SYS(epoll_create1) },
	{ P_STDIO, SCMP_SYS(epoll_ctl) },
	{ P_STDIO, SCMP_SYS(epoll_wait) },
	{ P_STDIO, SCMP_SYS(epoll_pwait) },
	{ P_STDIO, SCMP_SYS(epoll_pwait2) },
	{ P_STDIO, SCMP_SYS(eventfd) },
	{ P_STDIO, SCMP_SYS(eventfd2) },
	{ P_STDIO, SCMP_SYS(pipe) },
	{ P_STDIO, SCMP_SYS(pipe2) },
	{ P_STDIO, SCMP_SYS(dup) },
	{ P_STDIO, SCMP_SYS(dup2) },
	{ P_STDIO, SCMP_SYS(dup3) },
	/* sendmsg (imsg, SCM_RIGHTS too), sendmmsg, sendto: sends_add() */
	{ P_STDIO, SCMP_SYS(recvmsg) },
	{ P_STDIO, SCMP_SYS(recvmmsg) },
	{ P_STDIO, SCMP_SYS(recvfrom) },
	{ P_STDIO, SCMP_SYS(shutdown) },
	{ P_STDIO, SCMP_SYS(getsockopt) },
	{ P_STDIO, SCMP_SYS(umask) },
	{ P_STDIO, SCMP_SYS(wait4) },
	{ P_STDIO, SCMP_SYS(waitid) },

	/* rpath: look at the file system */
	{ P_RPATH, SCMP_SYS(stat) },
	{ P_RPATH, SCMP_SYS(lstat) },
	{ P_RPATH, SCMP_SYS(newfstatat) },
	{ P_DNS, SCMP_SYS(newfstatat) },	/* resolv.conf changed? */
	{ P_RPATH, SCMP_SYS(statx) },
	{ P_RPATH, SCMP_SYS(access) },
	{ P_RPATH, SCMP_SYS(faccessat) },
	{ P_RPATH, SCMP_SYS(faccessat2) },
	{ P_RPATH, SCMP_SYS(readlink) },
	{ P_RPATH, SCMP_SYS(readlinkat) },
	/* an overlay's opaque-dir marker, on an open directory */
	{ P_RPATH, SCMP_SYS(fgetxattr) },
	{ P_RPATH, SCMP_SYS(getdents) },
	{ P_RPATH, SCMP_SYS(getdents64) },
	{ P_RPATH, SCMP_SYS(getcwd) },
	{ P_RPATH, SCMP_SYS(chdir) },
	{ P_RPATH, SCMP_SYS(fchdir) },
	{ P_RPATH, SCMP_SYS(statfs) },
	{ P_RPATH, SCMP_SYS(fstatfs) },

	/* wpath: opens with write access are in add_open_rules() */
	{ P_WPATH, SCMP_SYS(truncate) },

	/* cpath: make and remove names */
	{ P_CPATH, SCMP_SYS(mkdir) },
	{ P_CPATH, SCMP_SYS(mkdirat) },
	{ P_CPATH, SCMP_SYS(rmdir) },
	{ P_CPATH, SCMP_SYS(unlink) },
	{ P_CPATH, SCMP_SYS(unlinkat) },
	{ P_CPATH, SCMP_SYS(rename) },
	{ P_CPATH, SCMP_SYS(renameat) },
	{ P_CPATH, SCMP_SYS(renameat2) },
	{ P_CPATH, SCMP_SYS(link) },
	{ P_CPATH, SCMP_SYS(linkat) },
	{ P_CPATH, SCMP_SYS(symlink) },
	{ P_CPATH, SCMP_SYS(symlinkat) },

	{ P_FATTR, SCMP_SYS(chmod) },
	{ P_FATTR, SCMP_SYS(fchmod) },
	{ P_FATTR, SCMP_SYS(fchmodat) },
	{ P_FATTR, SCMP_SYS(utimensat) },
	{ P_FATTR, SCMP_SYS(utimes) },
	{ P_FATTR, SCMP_SYS(utime) },
	{ P_FATTR, SCMP_SYS(futimesat) },

	{ P_FLOCK, SCMP_SYS(flock) },

	/* on sockets of the families the promises let socket(2) make */
	{ P_UNIX | P_INET, SCMP_SYS(bind) },
	{ P_UNIX | P_INET, SCMP_SYS(listen) },
	{ P_UNIX | P_INET | P_ACCEPT, SCMP_SYS(accept) },
	{ P_UNIX | P_INET | P_ACCEPT, SCMP_SYS(accept4) },
	{ P_UNIX | P_INET | P_ACCEPT, SCMP_SYS(getsockname) },
	{ P_UNIX | P_INET | P_ACCEPT, SCMP_SYS(getpeername) },
	{ P_UNIX | P_INET, SCMP_SYS(setsockopt) },
	{ P_UNIX | P_INET | P_DNS, SCMP_SYS(connect) },

	{ P_PROC, SCMP_SYS(fork) },
	{ P_PROC, SCMP_SYS(vfork) },
	{ P_PROC, SCMP_SYS(kill) },
	{ P_PROC, SCMP_SYS(tkill) },
	{ P_PROC, SCMP_SYS(tgkill) },
	{ P_PROC, SCMP_SYS(setpgid) },
	{ P_PROC, SCMP_SYS(setsid) },
	{ P_PROC, SCMP_SYS(getpriority) },
	{ P_PROC, SCMP_SYS(setpriority) },
	{ P_PROC | P_ID, SCMP_SYS(prlimit64) },

	{ P_EXEC, SCMP_SYS(execve) },
	{ P_EXEC, SCMP_SYS(execveat) },

	{ P_ID, SCMP_SYS(setuid) },
	{ P_ID, SCMP_SYS(setgid) },
	{ P_ID, SCMP_SYS(setreuid) },
	{ P_ID, SCMP_SYS(setregid) },
	{ P_ID, SCMP_SYS(setresuid) },
	{ P_ID, SCMP_SYS(setresgid) },
	{ P_ID, SCMP_SYS(setgroups) },
	{ P_ID, SCMP_SYS(setfsuid) },
	{ P_ID, SCMP_SYS(setfsgid) },
	{ P_ID, SCMP_SYS(setrlimit) },
};

/* ioctl(2) requests, compared on all 64 bits of the argument. */
static const unsigned long stdio_ioctls[] = {
	FIONREAD, FIONBIO, FIOCLEX, FIONCLEX, TCGETS
};
static const unsigned long tty_ioctls[] = {
	TIOCGWINSZ, TIOCSWINSZ, TCSETS, TCSETSW, TCSETSF, TCFLSH,
	TIOCGPGRP, TIOCSPGRP
};
/* fcntl(2) commands without side effects beyond the descriptor. */
static const unsigned long stdio_fcntls[] = {
	F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD, F_GETFL, F_SETFL
};
static const unsigned long flock_fcntls[] = {
	F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
};

/* clone(2) flags that make a namespace: never through pledge. */
#define CLONE_NSFLAGS	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
			 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
			 CLONE_NEWCGROUP)
/* The flag bit of O_TMPFILE without its O_DIRECTORY part. */
#define OPEN_TMPFILE	020000000
#define OPEN_MASK	(O_ACCMODE | O_CREAT | O_TRUNC | OPEN_TMPFILE)

#define NR_MAX		1024	/* above every x86_64 syscall number */

struct unveil_rule {
	char		*path;
	char		 perms[5];
	uint64_t	 rights;
	int		 fd;	/* O_PATH until the lock, then -1 */
};

static struct {
	struct unveil_rule	*rules;
	size_t			 nrules;
	int			 used;		/* unveil() was called */
	int			 locked;
	int			 pledged;
	unsigned int		 promises;
	int			 abi;
	int			 fs_handled;
	int			 tcp_denied;
	int			 scoped;
	unsigned int		 nallowed;
	unsigned char		 allowed[NR_MAX / 8];
} pl;

static void
unveil_close(void)
{
	size_t	 i;

	for (i = 0; i < pl.nrules; i++) {
		if (pl.rules[i].fd != -1)
			close(pl.rules[i].fd);
		pl.rules[i].fd = -1;
	}
}

static int
unveil_rights(const char *perms, uint64_t *rights)
{
	const char	*p;

	*rights = 0;
	for (p = perms; *p != '\0'; p++) {
		switch (*p) {
		/*
		 * IOCTL_DEV with r and w: seccomp already limits the
		 * requests, and isatty(3) on an unveiled device must work.
		 */
		case 'r':
			*rights |= LL_FS_READ | LANDLOCK_ACCESS_FS_IOCTL_DEV;
			break;
		case 'w':
			*rights |= LL_FS_WRITE | LANDLOCK_ACCESS_FS_IOCTL_DEV;
			break;
		case 'x':
			*rights |= LL_FS_EXEC;
			break;
		case 'c':
			/* bind(2) of a unix socket and mkfifo create too */
			*rights |= LL_FS_CREATE | LANDLOCK_ACCESS_FS_MAKE_SOCK |
			    LANDLOCK_ACCESS_FS_MAKE_FIFO;
			break;
		default:
			return (-1);
		}
	}
	return (0);
}

/*
 * One Landlock layer.  The abstract unix socket and signal scopes ride
 * on every layer: they cost nothing and a second layer repeats them.
 * So do the unveiled paths: once any layer handles file rights, the
 * kernel denies cross-directory rename and link (REFER) in every layer
 * that does not grant it, so a TCP-only layer would break rename(2).
 */
static int
landlock_layer(int deny_tcp)
{
	struct landlock	*ll;
	size_t		 i;
	uint64_t	 net = 0;

	if (deny_tcp)
		net = LANDLOCK_ACCESS_NET_BIND_TCP |
		    LANDLOCK_ACCESS_NET_CONNECT_TCP;
	ll = landlock_new(pl.used ? LL_FS_ALL : 0, net,
	    LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL);
	if (ll == NULL)
		return (-1);
	for (i = 0; pl.used && i < pl.nrules; i++) {
		if (landlock_allow_fd(ll, pl.rules[i].fd,
		    pl.rules[i].rights) == -1) {
			landlock_free(ll);
			return (-1);
		}
	}
	if (landlock_restrict(ll) == -1) {
		landlock_free(ll);
		return (-1);
	}
	landlock_free(ll);
	if (pl.used)
		pl.fs_handled = 1;
	if (deny_tcp && pl.abi >= 4)
		pl.tcp_denied = 1;
	if (pl.abi >= 6)
		pl.scoped = 1;
	/* No later layer will be needed: let the paths go. */
	if (pl.tcp_denied || (deny_tcp && pl.abi < 4))
		unveil_close();
	return (0);
}

static int
unveil_lock(int deny_tcp)
{
	if (pl.locked) {
		errno = EPERM;
		return (-1);
	}
	if ((pl.abi = landlock_abi()) == 0) {
		errno = ENOSYS;
		return (-1);
	}
	tzset();	/* see pledge() */
	if (landlock_layer(deny_tcp) == -1)
		return (-1);
	pl.locked = 1;
	return (0);
}

int
unveil(const char *path, const char *perms)
{
	struct unveil_rule	*r;
	uint64_t		 rights;
	size_t			 i;
	int			 fd;

	if (path == NULL && perms == NULL)
		return (unveil_lock(0));
	if (path == NULL || perms == NULL || strlen(perms) >= sizeof(r->perms) ||
	    unveil_rights(perms, &rights) == -1) {
		errno = EINVAL;
		return (-1);
	}
	if (pl.locked) {
		errno = EPERM;
		return (-1);
	}
	if (landlock_abi() == 0) {
		errno = ENOSYS;		/* fail closed */
		return (-1);
	}
	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return (-1);

	/* As on OpenBSD, unveiling a path again replaces its permissions. */
	for (i = 0; i < pl.nrules; i++)
		if (strcmp(pl.rules[i].path, path) == 0)
			break;
	if (i == pl.nrules) {
		r = reallocarray(pl.rules, pl.nrules + 1, sizeof(*r));
		if (r == NULL)
			goto fail;
		pl.rules = r;
		r = &pl.rules[pl.nrules];
		if ((r->path = strdup(path)) == NULL)
			goto fail;
		pl.nrules++;
	} else {
		r = &pl.rules[i];
		close(r->fd);
	}
	r->fd = fd;
	r->rights = rights;
	strlcpy(r->perms, perms, sizeof(r->perms));
	pl.used = 1;
	return (0);
 fail:
	close(fd);
	errno = ENOMEM;
	return (-1);
}

static int
promises_parse(const char *promises, unsigned int *mask)
{
	char		 word[16];
	const char	*p = promises;
	size_t		 n, i;

	*mask = 0;
	for (;;) {
		p += strspn(p, " ");
		if (*p == '\0')
			return (0);
		n = strcspn(p, " ");
		if (n >= sizeof(word))
			return (-1);
		memcpy(word, p, n);
		word[n] = '\0';
		p += n;
		for (i = 0; i < sizeof(promise_names) /
		    sizeof(promise_names[0]); i++)
			if (strcmp(word, promise_names[i].name) == 0)
				break;
		if (i == sizeof(promise_names) / sizeof(promise_names[0]))
			return (-1);
		*mask |= promise_names[i].bit;
	}
}

static int
rule(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned int ncmp,
    const struct scmp_arg_cmp *cmp)
{
	int	 rc;

	rc = seccomp_rule_add_array(ctx, action, nr, ncmp, cmp);
	if (rc < 0) {
		/* A syscall this architecture lacks allows nothing. */
		if (nr < 0)
			return (0);
		errno = -rc;
		return (-1);
	}
	if (action == SCMP_ACT_ALLOW && nr >= 0 && nr < NR_MAX &&
	    (pl.allowed[nr / 8] & (1 << (nr % 8))) == 0) {
		pl.allowed[nr / 8] |= 1 << (nr % 8);
		pl.nallowed++;
	}
	return (0);
}

static int
allow_eq(scmp_filter_ctx ctx, int nr, unsigned int arg,
    const unsigned long *vals, size_t nvals)
{
	struct scmp_arg_cmp	 cmp;
	size_t			 i;

	for (i = 0; i < nvals; i++) {
		cmp = SCMP_CMP64(arg, SCMP_CMP_EQ, vals[i]);
		if (rule(ctx, SCMP_ACT_ALLOW, nr, 1, &cmp) == -1)
			return (-1);
	}
	return (0);
}

/*
 * open(2), openat(2) and creat(2): each combination of access mode,
 * O_CREAT/O_TMPFILE and O_TRUNC is allowed when the promises cover it.
 */
static int
add_open_rules(scmp_filter_ctx ctx, unsigned int pr)
{
	static const unsigned long accs[] = { O_RDONLY, O_WRONLY, O_RDWR };
	static const unsigned long crs[] = { 0, O_CREAT, OPEN_TMPFILE,
	    O_CREAT | OPEN_TMPFILE };
	static const unsigned long trs[] = { 0, O_TRUNC };
	struct scmp_arg_cmp	 cmp;
	unsigned long		 flags;
	size_t			 a, c, t;
	int			 ok;

	for (a = 0; a < 3; a++)
	for (c = 0; c < 4; c++)
	for (t = 0; t < 2; t++) {
		flags = accs[a] | crs[c] | trs[t];
		ok = 1;
		if (accs[a] != O_WRONLY && (pr & P_RPATH) == 0 &&
		    !((pr & (P_GETPW | P_DNS)) && accs[a] == O_RDONLY &&
		    crs[c] == 0 && trs[t] == 0))
			ok = 0;
		if (accs[a] != O_RDONLY && (pr & P_WPATH) == 0)
			ok = 0;
		if (trs[t] != 0 && (pr & P_WPATH) == 0)
			ok = 0;
		if (crs[c] != 0 && (pr & P_CPATH) == 0)
			ok = 0;
		if (!ok)
			continue;
		cmp = SCMP_CMP64(2, SCMP_CMP_MASKED_EQ, OPEN_MASK, flags);
		if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, &cmp) == -1)
			return (-1);
		cmp = SCMP_CMP64(1, SCMP_CMP_MASKED_EQ, OPEN_MASK, flags);
		if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, &cmp) == -1)
			return (-1);
	}
	if ((pr & (P_WPATH | P_CPATH)) == (P_WPATH | P_CPATH) &&
	    rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(creat), 0, NULL) == -1)
		return (-1);
	return (0);
}

/*
 * The sends of stdio.  MSG_FASTOPEN makes a send connect a socket that
 * is not connected (or was reset): a connect(2) in disguise, which only
 * inet may make; without it, refused with EPERM.  The flags are the
 * fourth argument of sendto and sendmmsg, the third of sendmsg.
 */
static int
add_send_rules(scmp_filter_ctx ctx, unsigned int pr)
{
	static const struct {
		int		 nr;
		unsigned int	 arg;
	} sends[] = {
		{ SCMP_SYS(sendto), 3 },
		{ SCMP_SYS(sendmsg), 2 },
		{ SCMP_SYS(sendmmsg), 3 },
	};
	struct scmp_arg_cmp	 cmp[1];
	size_t			 i;

	if ((pr & P_STDIO) == 0)
		return (0);
	for (i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
		if (pr & P_INET) {
			if (rule(ctx, SCMP_ACT_ALLOW, sends[i].nr, 0, NULL) ==
			    -1)
				return (-1);
			continue;
		}
		cmp[0] = SCMP_CMP64(sends[i].arg, SCMP_CMP_MASKED_EQ,
		    MSG_FASTOPEN, 0);
		if (rule(ctx, SCMP_ACT_ALLOW, sends[i].nr, 1, cmp) == -1)
			return (-1);
		cmp[0] = SCMP_CMP64(sends[i].arg, SCMP_CMP_MASKED_EQ,
		    MSG_FASTOPEN, MSG_FASTOPEN);
		if (rule(ctx, SCMP_ACT_ERRNO(EPERM), sends[i].nr, 1, cmp) ==
		    -1)
			return (-1);
	}
	return (0);
}

static int
add_socket_rules(scmp_filter_ctx ctx, unsigned int pr)
{
	struct scmp_arg_cmp	 cmp[2];
	static const unsigned long inets[] = { AF_INET, AF_INET6 };
	size_t			 i;

	if (pr & P_UNIX) {
		cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, AF_UNIX);
		if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, cmp) == -1)
			return (-1);
	} else {
		/*
		 * Refused, not punished: glibc's syslog(3) makes a new
		 * datagram socket whenever /dev/log was not reachable, and
		 * asks nscd first for getpw.
		 */
		cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, AF_UNIX);
		cmp[1] = SCMP_CMP64(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM);
		if ((pr & P_STDIO) && rule(ctx, SCMP_ACT_ERRNO(EACCES),
		    SCMP_SYS(socket), 2, cmp) == -1)
			return (-1);
		/* getaddrinfo(3) also looks for nscd first under dns. */
		if ((pr & (P_GETPW | P_DNS)) && rule(ctx,
		    SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, cmp) == -1)
			return (-1);
	}
	for (i = 0; i < 2; i++) {
		cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, inets[i]);
		if (pr & P_INET) {
			if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			    cmp) == -1)
				return (-1);
		} else if (pr & P_DNS) {
			cmp[1] = SCMP_CMP64(1, SCMP_CMP_MASKED_EQ, 0xf,
			    SOCK_DGRAM);
			if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
			    cmp) == -1)
				return (-1);
		}
	}
	if (pr & P_DNS) {
		/*
		 * getaddrinfo(3) lists interfaces over netlink for
		 * AI_ADDRCONFIG and assumes both families when it can't.
		 */
		cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, AF_NETLINK);
		if (rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket),
		    1, cmp) == -1)
			return (-1);
	}
	return (0);
}

/* Syscalls of stdio and proc that need an argument check. */
static int
add_arg_rules(scmp_filter_ctx ctx, unsigned int pr)
{
	struct scmp_arg_cmp	 cmp[3];
	unsigned long		 self = (unsigned long)getpid();
	unsigned long		 unix_only = AF_UNIX;

	if ((pr & P_STDIO) == 0)
		return (0);
	if (allow_eq(ctx, SCMP_SYS(ioctl), 1, stdio_ioctls,
	    sizeof(stdio_ioctls) / sizeof(stdio_ioctls[0])) == -1 ||
	    ((pr & P_TTY) && allow_eq(ctx, SCMP_SYS(ioctl), 1, tty_ioctls,
	    sizeof(tty_ioctls) / sizeof(tty_ioctls[0])) == -1) ||
	    allow_eq(ctx, SCMP_SYS(fcntl), 1, stdio_fcntls,
	    sizeof(stdio_fcntls) / sizeof(stdio_fcntls[0])) == -1 ||
	    ((pr & P_FLOCK) && allow_eq(ctx, SCMP_SYS(fcntl), 1, flock_fcntls,
	    sizeof(flock_fcntls) / sizeof(flock_fcntls[0])) == -1) ||
	    allow_eq(ctx, SCMP_SYS(socketpair), 0, &unix_only, 1) == -1)
		return (-1);

	/* fstat(3) is fstatat(fd, "", AT_EMPTY_PATH) in glibc. */
	cmp[0] = SCMP_CMP64(3, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
	    AT_EMPTY_PATH);
	if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1, cmp) == -1)
		return (-1);
	cmp[0] = SCMP_CMP64(2, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
	    AT_EMPTY_PATH);
	if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(statx), 1, cmp) == -1)
		return (-1);

	/* getrlimit(3) is prlimit64(0, r, NULL, old). */
	cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, 0);
	cmp[1] = SCMP_CMP64(2, SCMP_CMP_EQ, 0);
	if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, cmp) == -1)
		return (-1);

	/*
	 * chown: of an open descriptor, to root, and nothing else (the
	 * image walk gives each entry to 0:0).  Landlock has no right for
	 * chown, so a path is never allowed: no chown(2) or lchown(2), and
	 * fchownat(2) only with AT_EMPTY_PATH.
	 */
	if (pr & P_CHOWN) {
		cmp[0] = SCMP_CMP64(1, SCMP_CMP_EQ, 0);
		cmp[1] = SCMP_CMP64(2, SCMP_CMP_EQ, 0);
		if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fchown), 2, cmp) == -1)
			return (-1);
		cmp[0] = SCMP_CMP64(2, SCMP_CMP_EQ, 0);
		cmp[1] = SCMP_CMP64(3, SCMP_CMP_EQ, 0);
		cmp[2] = SCMP_CMP64(4, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
		    AT_EMPTY_PATH);
		if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fchownat), 3, cmp) ==
		    -1)
			return (-1);
	}

	/* raise(3) and abort(3): signals to ourselves only. */
	cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, self);
	if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, cmp) == -1 ||
	    rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, cmp) == -1 ||
	    rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tkill), 1, cmp) == -1)
		return (-1);

	cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, 0xffffffffUL);
	if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1, cmp) == -1)
		return (-1);

	/*
	 * Threads under stdio (OpenBSD's __tfork); new processes need
	 * proc, and no promise makes a namespace.
	 */
	if (pr & P_PROC)
		cmp[0] = SCMP_CMP64(0, SCMP_CMP_MASKED_EQ, CLONE_NSFLAGS, 0);
	else
		cmp[0] = SCMP_CMP64(0, SCMP_CMP_MASKED_EQ,
		    CLONE_NSFLAGS | CLONE_THREAD, CLONE_THREAD);
	if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1, cmp) == -1)
		return (-1);
	return (0);
}

/*
 * A later pledge() or unveil lock must get through this filter: what
 * it calls can only narrow (another filter, another Landlock layer,
 * no_new_privs), so it is allowed under every promise, as on OpenBSD.
 */
static int
add_repledge_rules(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp	 cmp[2];
	static const unsigned long ops[] = {
		SECCOMP_SET_MODE_FILTER, SECCOMP_GET_ACTION_AVAIL
	};

	if (allow_eq(ctx, SCMP_SYS(seccomp), 0, ops,
	    sizeof(ops) / sizeof(ops[0])) == -1)
		return (-1);
	cmp[0] = SCMP_CMP64(0, SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS);
	cmp[1] = SCMP_CMP64(1, SCMP_CMP_EQ, 1);
	if (rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 2, cmp) == -1 ||
	    rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(landlock_create_ruleset), 0,
	    NULL) == -1 ||
	    rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(landlock_add_rule), 0,
	    NULL) == -1 ||
	    rule(ctx, SCMP_ACT_ALLOW, SCMP_SYS(landlock_restrict_self), 0,
	    NULL) == -1)
		return (-1);
	return (0);
}

static scmp_filter_ctx
filter_build(unsigned int pr)
{
	scmp_filter_ctx	 ctx;
	size_t		 i;
	int		 rc;

	memset(pl.allowed, 0, sizeof(pl.allowed));
	pl.nallowed = 0;
	if ((ctx = seccomp_init(SCMP_ACT_KILL_PROCESS)) == NULL) {
		errno = ENOMEM;
		return (NULL);
	}
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0) {
		errno = -rc;
		goto fail;
	}
	for (i = 0; i < sizeof(plain_rules) / sizeof(plain_rules[0]); i++)
		if ((plain_rules[i].promise == 0 ||
		    (plain_rules[i].promise & pr) != 0) &&
		    rule(ctx, SCMP_ACT_ALLOW, plain_rules[i].nr, 0, NULL) == -1)
			goto fail;
	if (add_open_rules(ctx, pr) == -1 ||
	    add_socket_rules(ctx, pr) == -1 ||
	    add_send_rules(ctx, pr) == -1 ||
	    add_arg_rules(ctx, pr) == -1)
		goto fail;
	if (add_repledge_rules(ctx) == -1)
		goto fail;
	/*
	 * Answered, not punished: glibc falls back to clone(2) when
	 * clone3(2) is missing, and nothing of ours needs openat2(2),
	 * whose flags sit behind a pointer seccomp cannot read.
	 */
	if (rule(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0,
	    NULL) == -1 ||
	    rule(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0,
	    NULL) == -1)
		goto fail;
	return (ctx);
 fail:
	rc = errno;
	seccomp_release(ctx);
	errno = rc;
	return (NULL);
}

static int
seccomp_available(void)
{
	uint32_t	 action = SECCOMP_RET_KILL_PROCESS;

	return (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0,
	    &action) == 0);
}

int
pledge(const char *promises, const char *execpromises)
{
	scmp_filter_ctx	 ctx;
	unsigned int	 pr;
	int		 rc, deny_tcp;

	if (execpromises != NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (promises == NULL)
		return (0);	/* OpenBSD: leave the promises as they are */
	if (promises_parse(promises, &pr) == -1) {
		errno = EINVAL;
		return (-1);
	}
	if (pl.pledged && (pr & ~pl.promises) != 0) {
		errno = EPERM;
		return (-1);
	}
	if (!seccomp_available()) {
		errno = ENOSYS;
		return (-1);
	}
	if ((ctx = filter_build(pr)) == NULL)
		return (-1);
	/*
	 * localtime(3), thus syslog(3), opens /etc/localtime on first
	 * use; read it while we may, rather than die on the first log.
	 */
	tzset();

	/* Landlock first: its own syscalls are not in the filter. */
	deny_tcp = (pr & P_INET) == 0;
	pl.abi = landlock_abi();
	if (!pl.locked && pl.abi > 0)
		rc = unveil_lock(deny_tcp);
	else if (deny_tcp && !pl.tcp_denied && pl.abi >= 4)
		rc = landlock_layer(1);
	else
		rc = 0;
	pl.locked = 1;
	if (rc == -1 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		goto fail;

	if ((rc = seccomp_load(ctx)) < 0) {
		errno = -rc;
		goto fail;
	}
	pl.pledged = 1;
	pl.promises = pr;
	beneath_walk();		/* the filter answers openat2 ENOSYS */
	/* Without stdio, even free(3) may be fatal now. */
	if (pr & P_STDIO)
		seccomp_release(ctx);
	return (0);
 fail:
	rc = errno;
	seccomp_release(ctx);
	errno = rc;
	return (-1);
}

static void __attribute__((__format__ (printf, 3, 4)))
bprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 len = strlen(buf);

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

const char *
pledge_describe(void)
{
	static char	 buf[8192];
	size_t		 i;

	buf[0] = '\0';
	if (!pl.pledged)
		bprintf(buf, sizeof(buf), "promises: (not pledged)\n");
	else {
		bprintf(buf, sizeof(buf), "promises:");
		for (i = 0; i < sizeof(promise_names) /
		    sizeof(promise_names[0]); i++)
			if (pl.promises & promise_names[i].bit)
				bprintf(buf, sizeof(buf), " %s",
				    promise_names[i].name);
		bprintf(buf, sizeof(buf), "\n");
	}
	for (i = 0; i < pl.nrules; i++)
		bprintf(buf, sizeof(buf), "unveil: %s %s\n", pl.rules[i].path,
		    pl.rules[i].perms[0] == '\0' ? "(none)" : pl.rules[i].perms);

	if (!pl.locked)
		bprintf(buf, sizeof(buf), "landlock: not applied\n");
	else if (pl.abi == 0)
		bprintf(buf, sizeof(buf), "landlock: none, the kernel lacks "
		    "it\n");
	else
		bprintf(buf, sizeof(buf), "landlock: abi %d, %s, %s, "
		    "scoped: %s\n", pl.abi,
		    pl.fs_handled ? "fs handled" : "fs not handled (no unveil)",
		    pl.tcp_denied ? "tcp bind+connect denied" :
		    pl.abi < 4 ? "tcp not handled (abi < 4)" :
		    "tcp allowed (inet)",
		    pl.scoped ? "abstract-unix signal" : "none (abi < 6)");
	if (pl.pledged)
		bprintf(buf, sizeof(buf), "seccomp: default kill-process, "
		    "%u syscalls allowed\n", pl.nallowed);
	else
		bprintf(buf, sizeof(buf), "seccomp: not applied\n");
	return (buf);
}

int
caps_keep(uint32_t mask, int *failed)
{
	struct __user_cap_header_struct	 h;
	struct __user_cap_data_struct	 d[2];
	int				 cap;

	*failed = -1;
	for (cap = 0; cap <= 63; cap++)
		if ((cap > 31 || (mask & (1U << cap)) == 0) &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (errno == EINVAL)	/* past the kernel's last */
				break;
			*failed = cap;
			return (-1);
		}
	memset(&h, 0, sizeof(h));
	memset(d, 0, sizeof(d));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	d[0].effective = d[0].permitted = mask;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 ||
	    syscall(SYS_capset, &h, d) == -1)
		return (-1);
	return (0);
}
