/*
 * factory-sandbox: pid 1 of every sandbox.  factoryd clones it into
 * the new namespaces and execs it at once from the binary it opened at
 * start, so it holds nothing of the parent's memory: only the plan,
 * read from its socket, and the descriptors it was handed (sbx.h).
 * Then it builds the mount view, joins the cgroups the parent made,
 * starts the agent and reaps (child.c).  In its ready mode it is
 * started ahead of the attempt it will serve (the parent's launcher
 * pool): it makes its namespaces, says "R", waits for the plan and
 * clones pid 1 into the attempt's cgroup2 directory (ready_main).  In
 * its enter mode it is the waiter of an operator's factoryctl shell
 * instead (enter.c); in its probe mode, factoryd's kernel probe at
 * start (probe.c).  Started any other way, it refuses.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/sched.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx.h"

static void	*read_msg(int, int, size_t *, int *, int, int *);

/* The descriptors must be what factoryd hands over. */
static void
check_fds(int sock, int errfd)
{
	struct stat	 st;
	int		 type;
	socklen_t	 len = sizeof(type);

	if (fstat(sock, &st) == -1 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) == -1 ||
	    type != SOCK_SEQPACKET)
		errx(1, "fd %d is not a seqpacket socket: not started by "
		    "factoryd", sock);
	if (fstat(errfd, &st) == -1 || !S_ISFIFO(st.st_mode))
		errx(1, "fd %d is not a pipe: not started by factoryd",
		    errfd);
}

/*
 * Nothing the parent ignored (factoryd: SIGPIPE, SIGXFSZ) stays
 * ignored for what runs here: an ignored disposition survives
 * execve(2), and the agent's own would be the parent's.
 */
static void
default_signals(void)
{
	/*
	 * The kernel's struct sigaction, all zero: SIG_DFL, no flags, an
	 * empty mask, whatever the architecture's layout.  Not sigaction(3):
	 * glibc refuses its own two real-time signals (32, 33), and those
	 * may come ignored from whoever started factoryd.
	 */
	unsigned long	 ksa[8];	/* larger than any architecture's */
	int		 sig;

	memset(ksa, 0, sizeof(ksa));
	for (sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)syscall(SYS_rt_sigaction, sig, ksa, NULL,
			    (size_t)8);
}

/*
 * The waiter of an operator's shell: the enter plan, then the
 * sandbox's namespaces (enter.c).  Every descriptor of SBX_EFD_* must
 * be there; the ones above are closed.
 */
static __dead void
enter_main(const char *id)
{
	struct plan_enter	*en;
	struct sigaction	 sa;
	char			 err[512];
	size_t			 len;
	void			*buf;
	int			 fd;

	check_fds(SBX_EFD_SOCK, SBX_EFD_ERR);
	default_signals();
	/* Blocked by the parent around the clone. */
	sigemptyset(&sa.sa_mask);
	(void)sigprocmask(SIG_SETMASK, &sa.sa_mask, NULL);
	for (fd = 0; fd < SBX_EFD_PROCS; fd++)
		if (fcntl(fd, F_GETFD) == -1)
			plan_fail(SBX_EFD_ERR, "enter: fd %d is missing", fd);
	(void)fcntl(SBX_EFD_ERR, F_SETFD, FD_CLOEXEC);
	buf = read_msg(SBX_EFD_SOCK, SBX_EFD_ERR, &len, NULL, 0, NULL);
	if ((en = plan_enter_decode(buf, len, &sbx_prog, err,
	    sizeof(err))) == NULL)
		plan_fail(SBX_EFD_ERR, "%s", err);
	close(SBX_EFD_SOCK);
	if (strcmp(id, en->spec->id) != 0)
		plan_fail(SBX_EFD_ERR, "plan: id %s, started to enter %s",
		    en->spec->id, id);
	for (fd = SBX_EFD_PROCS; fd < SBX_EFD_PROCS + en->nprocs + 2; fd++)
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
			plan_fail(SBX_EFD_ERR, "enter: fd %d is missing", fd);
	syscall(SYS_close_range, SBX_EFD_PROCS + en->nprocs + 2, ~0U, 0);
	sbx_exec_resolve();
	sbx_enter(en);
}

/*
 * A plan: one message on sock, at most SBX_PLAN_MAX bytes, in a buffer
 * of its own (a process reads one plan, and one freed would be
 * unmapped, tens of microseconds on a spawn's way); errors to errfd.
 * With fdp NULL no descriptor may come with it; else at least one and
 * at most maxfd, which land in fdp (close-on-exec); their number in
 * *nfdp.
 */
static void *
read_msg(int sock, int errfd, size_t *lenp, int *fdp, int maxfd, int *nfdp)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct msghdr	 msg;
	struct cmsghdr	*c;
	static char	 buf[SBX_PLAN_MAX];
	struct iovec	 iov;
	ssize_t		 n;
	int		 nfd = 0;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = buf;
	iov.iov_len = SBX_PLAN_MAX;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	while ((n = recvmsg(sock, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC)) ==
	    -1 && errno == EINTR)
		;
	if (n == -1)
		plan_fail(errfd, "plan: recvmsg:");
	if (n == 0)	/* EOF, or an empty message */
		plan_fail(errfd, "plan: none came");
	c = CMSG_FIRSTHDR(&msg);
	if (fdp == NULL && (c != NULL || (msg.msg_flags & MSG_CTRUNC)))
		plan_fail(errfd, "plan: came with descriptors");
	if (c != NULL && c->cmsg_len >= CMSG_LEN(0))
		nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
	if (fdp != NULL && ((msg.msg_flags & MSG_CTRUNC) || c == NULL ||
	    c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    nfd < 1 || nfd > maxfd ||
	    c->cmsg_len != CMSG_LEN(sizeof(int) * nfd) ||
	    CMSG_NXTHDR(&msg, c) != NULL))
		plan_fail(errfd, "plan: not with 1 to %d descriptors", maxfd);
	if ((size_t)n > SBX_PLAN_MAX || (msg.msg_flags & MSG_TRUNC))
		plan_fail(errfd, "plan: %zd bytes, more than %d", n,
		    SBX_PLAN_MAX);
	if (fdp != NULL) {
		memcpy(fdp, CMSG_DATA(c), sizeof(*fdp) * nfd);
		*nfdp = nfd;
	}
	*lenp = (size_t)n;
	return (buf);
}

/* The plan, and with fdp the 1 to maxfd descriptors that came with it. */
static struct plan *
read_plan(int *fdp, int maxfd, int *nfdp)
{
	struct plan	*pl;
	char		 err[512];
	size_t		 len;
	void		*buf;

	buf = read_msg(SBX_FD_SOCK, SBX_FD_ERR, &len, fdp, maxfd, nfdp);
	if ((pl = plan_decode(buf, len, &sbx_prog, err,
	    sizeof(err))) == NULL)
		plan_fail(SBX_FD_ERR, "%s", err);
	return (pl);
}

/*
 * A launcher of the pool was started as "factory-sandbox ready" (or
 * "zygote") and a third argument of SBX_TITLE_ROOM spaces: once it
 * serves an attempt, its title says which, as a fresh one's does.  The
 * title is written over the arguments (contiguous, as the kernel lays
 * them out), and their last byte is left non-NUL: the kernel then
 * shows everything up to the first NUL as the command line, as for
 * setproctitle(3).  Where the arguments are is taken once, before the
 * first title (title_init), since a title moves them.
 */
static char	*title_base, *title_end;

static void
title_init(int errfd, char *argv[])
{
	if (argv[1] != argv[0] + strlen(argv[0]) + 1 ||
	    argv[2] != argv[1] + strlen(argv[1]) + 1)
		plan_fail(errfd, "title: arguments not contiguous");
	title_base = argv[0];
	title_end = argv[2] + strlen(argv[2]) + 1;
}

static void
set_title(int errfd, const char *what, const char *id)
{
	int	 n;

	memset(title_base, 0, title_end - title_base);
	n = snprintf(title_base, title_end - title_base - 1,
	    "factory-sandbox %s%s%s", what, id[0] != '\0' ? " " : "", id);
	if (n < 0 || n >= title_end - title_base - 1)
		plan_fail(errfd, "title: no room for id %s", id);
	title_end[-1] = ' ';
}

/*
 * The ready mode's pid 1, cloned when the plan came: out of the
 * launcher that waited (CLONE_PARENT: a child of factoryd, as a fresh
 * launcher is), in a new pid namespace (and, with newns, a copy of the
 * host's mount namespace: an image's view is built whole), and, with a
 * cgroup2 directory from the parent, born in it (CLONE_INTO_CGROUP).
 * -1 if not cloned.
 */
static pid_t
ready_clone(int cgfd, int newns)
{
	struct clone_args	 ca;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PARENT | CLONE_NEWPID | (newns ? CLONE_NEWNS : 0) |
	    (cgfd != -1 ? CLONE_INTO_CGROUP : 0);
	/* With CLONE_PARENT, this one's (SIGCHLD): none may be given. */
	ca.exit_signal = 0;
	ca.cgroup = cgfd != -1 ? (uint64_t)cgfd : 0;
	return ((pid_t)syscall(SYS_clone3, &ca, sizeof(ca)));
}

/* The cgroup2 directory fd from the parent, checked; -1 for none. */
static int
ready_cgfd(const int *fds, int n)
{
	struct statfs	 sfs;
	struct stat	 st;

	if (n < 2)
		return (-1);
	if (fstat(fds[1], &st) == -1 || !S_ISDIR(st.st_mode) ||
	    fstatfs(fds[1], &sfs) == -1 || sfs.f_type != CGROUP2_SUPER_MAGIC)
		plan_fail(SBX_FD_ERR, "plan: fd 2 is not a cgroup2 directory");
	return (fds[1]);
}

/*
 * The attempt's part of the host's mounts, taken in the host's mount
 * namespace as it is now (the tree may have been mounted after this
 * launcher started): the binds, the tree and a service's data, as
 * detached mounts for pid 1 to attach over the view built ahead
 * (pl->prepared).  With an image the view is built whole, by pid 1,
 * from the host's mounts: this process goes back to them, and the view
 * built ahead goes.
 */
static void
ready_take(struct plan *pl, int hostns, int prepns)
{
	static int	 bindfd[SANDBOX_MAXBINDS];

	if (setns(hostns, CLONE_NEWNS) == -1)
		plan_fail(SBX_FD_ERR, "ready: back to the host's mounts:");
	if (pl->image[0] != '\0')
		return;
	sbx_take_plan(pl, bindfd, &pl->treefd);
	pl->bindfd = bindfd;
	if (setns(prepns, CLONE_NEWNS) == -1)
		plan_fail(SBX_FD_ERR, "ready: into the view built ahead:");
	pl->prepared = 1;
}

/*
 * A launcher of the pool makes its namespaces and view while an
 * attempt runs, and is needed only at a later spawn: it does that at
 * the lowest priority (nice 19), so that what shares its scheduling
 * group, the parent and the sandboxes' pid 1s, has the processor first
 * (the agents are in cgroups or autogroups of their own, where a nice
 * value does not weigh), and comes back to the priority it was started
 * at when its plan comes.  Only
 * where it can come back: with CAP_SYS_NICE, or where RLIMIT_NICE
 * lets it (the zygote raises it, zygote_main); the parent, waiting for
 * one, brings it back the same way (sandbox.c).  Else it stays where
 * it is.  -1 if it stays, else the priority to come back to.
 */
static int
ready_lower(void)
{
	struct __user_cap_header_struct	 h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct	 d[2];
	struct rlimit			 rl;
	int				 prio;

	errno = 0;
	prio = getpriority(PRIO_PROCESS, 0);
	if (errno != 0 || prio >= 19)
		return (-1);
	if (syscall(SYS_capget, &h, d) == -1 ||
	    !(d[CAP_TO_INDEX(CAP_SYS_NICE)].effective &
	    CAP_TO_MASK(CAP_SYS_NICE))) {
		if (getrlimit(RLIMIT_NICE, &rl) == -1 ||
		    rl.rlim_cur == RLIM_INFINITY ||
		    20 - (int)rl.rlim_cur > prio)
			return (-1);
	}
	if (setpriority(PRIO_PROCESS, 0, 19) == -1)
		return (-1);
	return (prio);
}

/*
 * The ready mode: started by the parent ahead of any attempt, with
 * its socket and error pipe only.  It makes the namespaces it can
 * ahead (uts, network, IPC, mount: fresh, and nothing but this
 * process has been in them), builds the host-root part of the view in
 * the mount one (sbx_view_prepare) and the agent's confinement of it
 * (sbx_confine_ahead), says "R" on the socket, and waits.  The plan then comes with the agent's log and, where the attempt has one, its
 * cgroup2 directory.  It clones pid 1 (ready_clone), which tells the
 * parent who it is ("P" and a pidfd of itself) and from there on is
 * what a fresh launcher is; this process exits.  So nothing of it is
 * ever moved between cgroups: a move into a cgroup2 directory waits
 * for an RCU grace period (~14 ms here).  It serves one attempt: a
 * launcher never sees a second plan.
 */
static __dead void
ready_main(void)
{
	struct plan		*pl;
	struct sandbox_spec	*spec;
	sigset_t		 set;
	pid_t			 pid;
	int			 fds[2], nfd, cgfd, self, hostns, prepns, prio;

	check_fds(SBX_FD_SOCK, SBX_FD_ERR);
	prio = ready_lower();
	/* Nothing but the socket and the pipe, whatever was inherited. */
	syscall(SYS_close_range, SBX_FD_ERR + 1, ~0U, 0);
	(void)fcntl(SBX_FD_SOCK, F_SETFD, FD_CLOEXEC);
	(void)fcntl(SBX_FD_ERR, F_SETFD, FD_CLOEXEC);
	/* It may wait long: it dies with the parent meanwhile. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		plan_fail(SBX_FD_ERR, "pdeathsig:");
	default_signals();
	sigemptyset(&set);
	if (sigprocmask(SIG_SETMASK, &set, NULL) == -1)
		plan_fail(SBX_FD_ERR, "sigprocmask:");
	/* The host's mounts, to take the attempt's tree from later. */
	if ((hostns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC)) == -1)
		plan_fail(SBX_FD_ERR, "ready: the host's mount namespace:");
	if (unshare(CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWIPC |
	    CLONE_NEWNS) == -1)
		plan_fail(SBX_FD_ERR, "ready: namespaces:");
	/* Before the view has no /proc. */
	if ((prepns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC)) == -1)
		plan_fail(SBX_FD_ERR, "ready: its mount namespace:");
	sbx_view_prepare(SBX_FD_ERR);
	sbx_exec_resolve();
	sbx_confine_ahead(SBX_FD_ERR);
	if (plan_sendtag(SBX_FD_SOCK, 0, 'R', NULL, 0) == -1)
		_exit(127);	/* the parent is gone */
	pl = read_plan(fds, 2, &nfd);
	if (prio != -1 && setpriority(PRIO_PROCESS, 0, prio) == -1)
		plan_fail(SBX_FD_ERR, "ready: back to priority %d:", prio);
	spec = (struct sandbox_spec *)pl->spec;
	cgfd = ready_cgfd(fds, nfd);
	pl->sock = SBX_FD_SOCK;
	pl->errfd = SBX_FD_ERR;
	ready_take(pl, hostns, prepns);
	if ((pid = ready_clone(cgfd, !pl->prepared)) == -1)
		plan_fail(SBX_FD_ERR, "clone pid 1:");
	if (pid > 0)
		_exit(0);
	/* Pid 1 enters or holds no mount namespace but its own. */
	close(hostns);
	close(prepns);
	if (cgfd != -1)
		close(cgfd);
	/* Who pid 1 is, before anything else on the socket. */
	if ((self = (int)syscall(SYS_pidfd_open, getpid(), 0)) == -1)
		plan_fail(SBX_FD_ERR, "pidfd of pid 1:");
	if (plan_sendtag(SBX_FD_SOCK, 0, 'P', &self, 1) == -1)
		_exit(127);
	close(self);
	/* The first free number may be its number already. */
	if (fds[0] != SBX_FD_LOG) {
		if (dup3(fds[0], SBX_FD_LOG, O_CLOEXEC) == -1)
			plan_fail(SBX_FD_ERR, "the log fd:");
		close(fds[0]);
	}
	set_title(SBX_FD_ERR, "attempt", spec->id);
	pl->sock = SBX_FD_SOCK;
	pl->errfd = SBX_FD_ERR;
	spec->logfd = SBX_FD_LOG;
	/* In its own namespaces already: nothing to enter. */
	pl->netfd = pl->ipcfd = -1;
	sbx_pid1(pl);
}

/*
 * The zygote: started once by the parent, as "factory-sandbox zygote"
 * with the room for a title, its socket and error pipe only.  Each
 * message it reads is "F" with two descriptors, the socket and error
 * pipe of a launcher of the pool, nothing else; for each it clones
 * that launcher (CLONE_PARENT: a child of the parent, as an exec'd one
 * is; CLONE_PIDFD) and answers "Z" with a pidfd of it.  The launcher
 * is a copy of the zygote, which has read nothing but such messages
 * and made no namespace: what an exec'd one is, without the execve
 * and the C library's start-up (the most of it, on a virtual machine,
 * where every cpuid instruction traps).  "D" with a mount namespace
 * it drops (zygote_drop).  Anything else on its socket and it exits,
 * naming it on its error pipe; EOF and it exits.
 */
static void
zygote_fork(int *fds)
{
	struct clone_args	 ca;
	int			 pidfd = -1, hi[2], i;
	pid_t			 pid;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PARENT | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	/* With CLONE_PARENT, this one's (SIGCHLD): none may be given. */
	ca.exit_signal = 0;
	if ((pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca))) == -1)
		plan_fail(SBX_FD_ERR, "zygote: clone:");
	if (pid == 0) {
		/* Its own socket and pipe at 3 and 4, over the zygote's. */
		for (i = 0; i < 2; i++)
			if ((hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 64)) == -1)
				_exit(127);
		for (i = 0; i < 2; i++)
			if (dup3(hi[i], SBX_FD_SOCK + i, O_CLOEXEC) == -1)
				_exit(127);
		syscall(SYS_close_range, SBX_FD_ERR + 1, ~0U, 0);
		set_title(SBX_FD_ERR, "ready", "");
		ready_main();
	}
	if (plan_sendtag(SBX_FD_SOCK, 0, 'Z', &pidfd, 1) == -1)
		_exit(127);	/* the parent is gone */
	close(pidfd);
}

/*
 * "D" with one descriptor, a mount namespace no process is in any
 * more (the view of a sandbox whose pid 1 the parent reaped): dropped,
 * so that its teardown runs here and not in a process the parent
 * waits for (sandbox_release_mntns).  Nothing is answered.  The last
 * close pays for the teardown, and the parent closes its own copy
 * only after sending this one: dropped at once, the zygote's close
 * was often not the last (the parent then paid, 1.2 ms).  So it is
 * held until the parent's next message, sent after its close, or
 * until the socket is quiet for ZYGOTE_DROP_MS.
 */
#define ZYGOTE_DROP_MS	10

static int	zygote_held = -1;

static void
zygote_drop(int *fds, int n)
{
	if (n != 1)
		plan_fail(SBX_FD_ERR, "zygote: message 'D' with %d "
		    "descriptors, not 1", n);
	if (!plan_mntns_ok(fds[0]))
		plan_fail(SBX_FD_ERR, "zygote: the fd of 'D' is not a mount "
		    "namespace");
	if (zygote_held != -1)
		close(zygote_held);
	zygote_held = fds[0];
}

/* Until the next message, dropping what is held once it is quiet. */
static void
zygote_wait(void)
{
	struct pollfd	 pfd;
	int		 r;

	if (zygote_held == -1)
		return;
	pfd.fd = SBX_FD_SOCK;
	pfd.events = POLLIN;
	while ((r = poll(&pfd, 1, ZYGOTE_DROP_MS)) == -1 && errno == EINTR)
		;
	if (r != 0)
		return;		/* a message: dropped after it */
	close(zygote_held);
	zygote_held = -1;
}

static __dead void
zygote_main(void)
{
	struct rlimit	 rl;
	struct stat	 st;
	char		 tag;
	int		 fds[3], n, type, prio;
	socklen_t	 len;

	check_fds(SBX_FD_SOCK, SBX_FD_ERR);
	syscall(SYS_close_range, SBX_FD_ERR + 1, ~0U, 0);
	(void)fcntl(SBX_FD_SOCK, F_SETFD, FD_CLOEXEC);
	(void)fcntl(SBX_FD_ERR, F_SETFD, FD_CLOEXEC);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		plan_fail(SBX_FD_ERR, "pdeathsig:");
	/*
	 * Room for the launchers it makes to go down to nice 19 and back
	 * to its own priority (ready_lower), where they lack CAP_SYS_NICE.
	 * Raising the hard limit takes CAP_SYS_RESOURCE.
	 */
	errno = 0;
	prio = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && prio < 19) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)(20 - prio);
		(void)setrlimit(RLIMIT_NICE, &rl);
	}
	/* Once for every launcher it makes: they inherit the list. */
	sbx_exec_resolve();
	for (;;) {
		tag = 0;
		zygote_wait();
		if ((n = plan_recvtag(SBX_FD_SOCK, 0, &tag, fds, 3)) == -1)
			_exit(0);	/* EOF: the parent is gone */
		if (tag == 'D') {
			zygote_drop(fds, n);
			continue;
		}
		if (tag != 'F' || n != 2)
			plan_fail(SBX_FD_ERR, "zygote: message '%c' with %d "
			    "descriptors, not 'F' with 2", tag, n);
		len = sizeof(type);
		if (fstat(fds[0], &st) == -1 || !S_ISSOCK(st.st_mode) ||
		    getsockopt(fds[0], SOL_SOCKET, SO_TYPE, &type, &len) ==
		    -1 || type != SOCK_SEQPACKET)
			plan_fail(SBX_FD_ERR, "zygote: fd 1 is not a seqpacket "
			    "socket");
		if (fstat(fds[1], &st) == -1 || !S_ISFIFO(st.st_mode))
			plan_fail(SBX_FD_ERR, "zygote: fd 2 is not a pipe");
		zygote_fork(fds);
		close(fds[0]);
		close(fds[1]);
		/* The launcher is on its way; the parent closed its copy. */
		if (zygote_held != -1) {
			close(zygote_held);
			zygote_held = -1;
		}
	}
}

int
main(int argc, char *argv[])
{
	struct plan		*pl;
	struct sandbox_spec	*spec;
	sigset_t		 set;
	int			 fd;

	/*
	 * The command line is the title: "factory-sandbox attempt ID",
	 * "factory-sandbox ready" (and its room) until a launcher of the
	 * pool serves one, or "factory-sandbox enter ID" for an
	 * operator's shell.
	 */
	if (argc == 3 && (strcmp(argv[1], "ready") == 0 ||
	    strcmp(argv[1], "zygote") == 0) &&
	    strlen(argv[2]) == SBX_TITLE_ROOM &&
	    strspn(argv[2], " ") == SBX_TITLE_ROOM) {
		title_init(SBX_FD_ERR, argv);
		if (strcmp(argv[1], "zygote") == 0)
			zygote_main();
		ready_main();
	}
	/* "factory-sandbox probe MASK [STATEDIR TAG]": factoryd's, at start. */
	if ((argc == 3 || argc == 5) && strcmp(argv[1], "probe") == 0)
		sbx_probe_main(argv[2], argc == 5 ? argv[3] : NULL,
		    argc == 5 ? argv[4] : NULL);
	if (argc != 3 || (strcmp(argv[1], "attempt") != 0 &&
	    strcmp(argv[1], "enter") != 0))
		errx(1, "usage: factory-sandbox attempt | enter id | probe "
		    "mask [statedir tag] (started by factoryd only)");
	if (strcmp(argv[1], "enter") == 0)
		enter_main(argv[2]);
	if (getpid() != 1)
		errx(1, "not pid 1 of a new pid namespace: started by "
		    "factoryd only");
	check_fds(SBX_FD_SOCK, SBX_FD_ERR);
	default_signals();
	/* Blocked by the parent around the clone: the agent starts clean. */
	sigemptyset(&set);
	if (sigprocmask(SIG_SETMASK, &set, NULL) == -1)
		err(1, "sigprocmask");
	/* The error pipe reports execve of the agent by closing. */
	for (fd = SBX_FD_SOCK; fd < SBX_FD_MAX; fd++)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	pl = read_plan(NULL, 0, NULL);
	spec = (struct sandbox_spec *)pl->spec;
	if (strcmp(argv[2], spec->id) != 0)
		plan_fail(SBX_FD_ERR, "plan: id %s, started as attempt %s",
		    spec->id, argv[2]);
	pl->sock = SBX_FD_SOCK;
	pl->errfd = SBX_FD_ERR;
	spec->logfd = SBX_FD_LOG;
	if (pl->netfd != -1) {
		pl->netfd = SBX_FD_NET;
		pl->ipcfd = SBX_FD_IPC;
	}
	if (fcntl(SBX_FD_LOG, F_GETFD) == -1 || (pl->netfd != -1 &&
	    (fcntl(SBX_FD_NET, F_GETFD) == -1 ||
	    fcntl(SBX_FD_IPC, F_GETFD) == -1)))
		plan_fail(SBX_FD_ERR, "the log or a namespace fd is missing");
	sbx_exec_resolve();
	sbx_pid1(pl);
}
