/*
 * The agent sandbox, the parent's side (root): the plan, the cgroups,
 * the namespace pool, the spawn and the teardown by exact path; see
 * sandbox.h for the life of a sandbox.  What runs inside is in
 * sandbox/ (child.c), as the factory-sandbox launcher binary.
 *
 * Three processes take part in one spawn:
 *
 *   parent	computes the plan and queues it on pid 1's socket,
 *		clones pid 1 into new mount, pid and uts namespaces and
 *		a fresh network and IPC namespace (from the pool, see
 *		below), where it execs factory-sandbox at once; while
 *		pid 1 starts, creates the cgroups, hands pid 1 their
 *		cgroup.procs and says "G"; then reads a close-on-exec
 *		pipe: EOF when the agent's execve succeeded, else the
 *		reason pid 1 or the agent failed.
 *   pid 1	reads and decodes the plan, waits for "G" (it is in the
 *		cgroups now), enters the pooled namespaces, builds the
 *		mount view, enters a cgroup
 *		namespace, forks the agent and reaps; when the agent
 *		exits it sends "S<wait status>" and exits, which kills
 *		what is left in the namespace.
 *   agent	rlimits, Landlock, uid, capabilities, seccomp, fds,
 *		execve.
 *
 * Work that does not depend on the attempt is done once per parent,
 * or ahead of the spawn: the seccomp program is compiled to BPF at the
 * first probe or spawn (probe.c, from the launcher's kernel probe), and
 * network and IPC namespaces are made ahead (sandbox_pool_fill), each
 * handed to exactly one sandbox.  The cgroup
 * set-up runs on the parent's side while pid 1 starts (or the launcher
 * of the pool clones it); no process of the agent, and nothing of the
 * view, exists before pid 1 is in the cgroups.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/sched.h>	/* clone3: struct clone_args */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "conf.h"
#include "esc.h"
#include "plan.h"
#include "probemsg.h"
#include "sandbox.h"

#define SBX_RENICE_MS	5	/* a launcher waited for: reniced this often */
#define SBX_NSFLAGS	(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS)
#define SBX_POOLNS	(CLONE_NEWNET | CLONE_NEWIPC)	/* or pooled */

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME		0x00000080
#endif

static int	spawn_launcher = -1;	/* factory-sandbox, or a fork */
static void	(*spawn_forked)(struct plan *, const struct sock_fprog *);

/* A launcher of the pool (see spawn_ready_make). */
struct spawn_ready {
	pid_t	 pid;
	int	 pidfd;		/* kill and reap without a pid reuse race */
	int	 sock;		/* the parent's end */
	int	 errfd;		/* the error pipe's read end */
};

static struct spawn_ready	 spawn_ready[SANDBOX_POOLMAX];
static int		 spawn_nready;

static int	spawn_ready_make(struct spawn_ready *);
static void	spawn_ready_drop(struct spawn_ready *);
static void	spawn_ready_drain(void);
static void	spawn_zygote_stop(void);
static int	spawn_zygote_off;		/* it failed: exec them */
/* The zygote, by its pid. */
static struct spawn_ready	 spawn_zygote = { -1, -1, -1, -1 };


int
sandbox_probe_downgrade(uint32_t allowed, char *err, size_t errlen)
{
	char	 cg[512], br[256] = "";
	int	 nokill, n;

	/* The launcher probes the kernel; its answer builds the filter. */
	if (probe_run(spawn_launcher, allowed, sandbox_cgroup_tag(), err,
	    errlen) == -1 || probe_seccomp_build(err, errlen) == -1)
		return (-1);
	if (cgroup_probe(probe_cgroup(), cg, sizeof(cg), &nokill) == -1) {
		strlcpy(err, cg, errlen);
		return (-1);
	}
	if ((nokill || sandbox_faked_missing("cgroup-kill")) &&
	    probe_lacks(allowed, CONF_DG_CGROUP_KILL, "no cgroup2 cgroup.kill "
	    "(kernel 5.14): a cancel kills pid 1 and sweeps cgroup.procs",
	    err, errlen) == -1)
		return (-1);
	sandbox_feature("cgroup.kill", nokill ||
	    sandbox_faked_missing("cgroup-kill") ? "downgraded" : NULL);
	/* The program is attached to cgroup2 only: none, no rule. */
	if (probe_cgroup()->unified[0] == '\0') {
		strlcpy(br, "no cgroup2 hierarchy to attach the cgroup bind "
		    "program to", sizeof(br));
		bindrule_off = 1;
	} else
		bindrule_off = bindrule_probe(br, sizeof(br)) == -1;
	bindrule_off |= sandbox_faked_missing("bind-rule");
	if (bindrule_off && probe_lacks(allowed, CONF_DG_BIND_RULE, br[0] !=
	    '\0' && !sandbox_faked_missing("bind-rule") ? br :
	    "cgroup bind programs (Linux 4.17, CONFIG_CGROUP_BPF): faked",
	    err, errlen) == -1)
		return (-1);
	sandbox_feature("bind-rule", bindrule_off ? "downgraded" : NULL);
	n = sandbox_pool_fill(SANDBOX_POOL);
	snprintf(err, errlen, "namespaces mnt pid net ipc uts cgroup "
	    "(%s pool %d); landlock abi %d; seccomp denylist %u insns; "
	    "%s; downgraded: %s", spawn_launcher == -1 ? "net+ipc" :
	    spawn_zygote.pid != -1 ? "launcher, zygote" : "launcher", n,
	    probe_abi(), sandbox_prog.len, cg, sandbox_downgrade_text());
	return (0);
}

int
sandbox_probe(char *err, size_t errlen)
{
	return (sandbox_probe_downgrade(0, err, errlen));
}

/*
 * The namespace pool.  A new network namespace is the dearest part of
 * a spawn (about a third of a millisecond here, the kernel setting up
 * every per-namespace subsystem), and an IPC one costs a little too.
 * So they are made ahead, off the spawn's path, and held only as fds
 * by the parent: a throwaway child is cloned into new ones, opens them
 * through /proc into the fd table it shares with the parent, and
 * exits.  Nothing ever runs in a pooled namespace before the sandbox
 * it is given to; each is given once (its fd is closed as pid 1 is
 * cloned) and dies with that sandbox.  An empty pool costs nothing
 * but speed: the clone then makes them as it always did.
 */
struct spawn_nsfds {
	int	 net;
	int	 ipc;
};

static struct spawn_nsfds	 spawn_pool[SANDBOX_POOLMAX];
static int		 spawn_npool;

static int
spawn_pool_child(void *arg)
{
	struct spawn_nsfds	*ns = arg;

	ns->net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns->ipc = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	_exit(0);
}

/*
 * CLONE_VM and CLONE_VFORK as posix_spawn does: nothing is copied, and
 * the parent sleeps until the child has exited.  No exit signal: the
 * daemon's SIGCHLD reaper never sees it; it is reaped here.
 */
static int
spawn_pool_make(struct spawn_nsfds *ns)
{
	char	 stack[16384] __attribute__((aligned(16)));
	pid_t	 pid;
	int	 st;

	ns->net = ns->ipc = -1;
	pid = clone(spawn_pool_child, stack + sizeof(stack), CLONE_VM |
	    CLONE_VFORK | CLONE_FILES | SBX_POOLNS, ns);
	if (pid == -1)
		return (-1);
	while (waitpid(pid, &st, __WCLONE) == -1 && errno == EINTR)
		;
	if (ns->net != -1 && ns->ipc != -1)
		return (0);
	if (ns->net != -1)
		close(ns->net);
	if (ns->ipc != -1)
		close(ns->ipc);
	return (-1);
}

int
sandbox_pool_fill(int want)
{
	if (want > SANDBOX_POOLMAX)
		want = SANDBOX_POOLMAX;
	(void)cgroup_spare_fill(want);
	if (spawn_launcher != -1) {
		while (spawn_nready < want &&
		    spawn_ready_make(&spawn_ready[spawn_nready]) == 0)
			spawn_nready++;
		return (spawn_nready);
	}
	while (spawn_npool < want &&
	    spawn_pool_make(&spawn_pool[spawn_npool]) == 0)
		spawn_npool++;
	return (spawn_npool);
}

/*
 * The namespaces of a run beside services: the network namespace of
 * netns (a copy) and a fresh IPC one.  1, or 0 and errno.
 */
static int
spawn_pool_join(int netns, struct spawn_nsfds *ns)
{
	int	 fd;

	if ((fd = fcntl(netns, F_DUPFD_CLOEXEC, 0)) == -1)
		return (0);
	if (spawn_pool_make(ns) == -1) {
		close(fd);
		return (0);
	}
	close(ns->net);
	ns->net = fd;
	return (1);
}

static int
spawn_pool_take(struct spawn_nsfds *ns)
{
	if (spawn_npool == 0)
		return (0);
	*ns = spawn_pool[--spawn_npool];
	return (1);
}




































/*
 * Which mount namespace pid 1 is in (dev and inode of its nsfs file),
 * taken once it said who it is: it never changes its mount namespace.
 * It is our child and not reaped, so its pid is its own; but it may
 * be gone already (an agent of a pool launcher, which it starts
 * without waiting for this, that exited at once).  Then, if it was
 * pid 1 of a pid namespace of its own (the last of its "NSpid" is 1),
 * *nsid is zeroed and its "M" is not held (spawn_recv_mntns); any other
 * process that is gone is no pid 1, and *nsid matches no namespace.
 */
static void
spawn_pid1_mntns(pid_t pid, struct stat *nsid)
{
	char	 path[64], buf[4096], *p;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", (long)pid);
	if (stat(path, nsid) == 0)
		return;
	memset(nsid, 0, sizeof(*nsid));
	nsid->st_ino = (ino_t)-1;
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if ((p = strstr(buf, "\nNSpid:\t")) == NULL)
		return;
	p += 8;
	p[strcspn(p, "\n")] = '\0';
	if (strchr(p, '\t') != NULL && strcmp(strrchr(p, '\t'), "\t1") == 0)
		nsid->st_ino = 0;
}

/*
 * Whether this kernel clones into a cgroup2 directory (Linux 5.7):
 * asked once, by a child that exits at once.
 */
static int
spawn_into_works(int cgfd)
{
	static int		 works = -1;
	struct clone_args	 ca;
	sigset_t		 all, old;
	pid_t			 pid;
	int			 st;

	if (works != -1)
		return (works);
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)cgfd;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	if ((pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca))) == 0)
		_exit(0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	works = pid > 0;
	if (pid > 0)
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
	return (works);
}

/*
 * The cgroup2 directory pid 1 is to be born in: open, or -1 (pid 1
 * joins it itself) where there is none or the kernel cannot.
 */
static int
spawn_into_fd(const struct sandbox *sb)
{
	int	 fd;

	if (spawn_launcher == -1 || sb->cg_kill < 0 ||
	    (fd = open(sb->cgroups[sb->cg_kill], O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return (-1);
	if (!spawn_into_works(fd)) {
		close(fd);
		return (-1);
	}
	return (fd);
}

void
sandbox_set_launcher(int fd)
{
	/* Launchers started from another binary are not kept. */
	if (fd != spawn_launcher) {
		spawn_ready_drain();
		spawn_zygote_stop();
		spawn_zygote_off = 0;
	}
	spawn_launcher = fd;
}

void
sandbox_set_forked(void (*pid1)(struct plan *, const struct sock_fprog *))
{
	spawn_forked = pid1;
}

/*
 * In the clone, at once: the launcher's descriptors at their numbers
 * (sbx.h), no other, and execveat(2) of the binary opened at start.
 * Until then this is a copy of the parent, keys and all; after it a
 * fresh image that reads its plan from the socket.
 */
static __dead void
spawn_exec_launcher(struct plan *pl)
{
	char	*argv[] = { "factory-sandbox", "attempt", NULL, NULL };
	char	*envp[] = { NULL };
	int	 want[SBX_FD_MAX - SBX_FD_SOCK + 1], hi[SBX_FD_MAX -
		     SBX_FD_SOCK + 1], n = SBX_FD_MAX - SBX_FD_SOCK + 1, i;

	want[SBX_FD_SOCK - SBX_FD_SOCK] = pl->sock;
	want[SBX_FD_ERR - SBX_FD_SOCK] = pl->errfd;
	want[SBX_FD_LOG - SBX_FD_SOCK] = pl->spec->logfd;
	want[SBX_FD_NET - SBX_FD_SOCK] = pl->netfd;
	want[SBX_FD_IPC - SBX_FD_SOCK] = pl->ipcfd;
	want[n - 1] = spawn_launcher;
	/* Its title, from the start: which attempt it serves. */
	argv[2] = (char *)pl->spec->id;
	/* Out of the way first: a wanted fd may sit on another's number. */
	for (i = 0; i < n; i++)
		if ((hi[i] = want[i] == -1 ? -1 : fcntl(want[i],
		    F_DUPFD_CLOEXEC, 64)) == -1 && want[i] != -1)
			plan_fail(pl->errfd, "launcher fds:");
	for (i = 0; i < n; i++) {
		if (hi[i] == -1)
			(void)close(SBX_FD_SOCK + i);
		else if (dup3(hi[i], SBX_FD_SOCK + i, i == n - 1 ?
		    O_CLOEXEC : 0) == -1)
			_exit(127);
	}
	syscall(SYS_close_range, SBX_FD_SOCK + n, ~0U, 0);
	syscall(SYS_execveat, SBX_FD_SOCK + n - 1, "", argv, envp,
	    AT_EMPTY_PATH);
	plan_fail(SBX_FD_ERR, "exec factory-sandbox:");
}

static int
spawn_launcher_child(void *arg)
{
	spawn_exec_launcher(arg);
}

/* What the enter child execs with, on the parent's stack meanwhile. */
struct spawn_enter_args {
	const struct sandbox_enter *se;
	int		 sock;
	const char	*id;
};

/*
 * The enter mode's descriptors at their numbers (sbx.h, SBX_EFD_*),
 * no other, and the launcher.  Like spawn_exec_launcher, on the
 * parent's memory until the execve: nothing is written but the stack.
 */
static int
spawn_enter_child(void *arg)
{
	const struct spawn_enter_args	*ea = arg;
	const struct sandbox_enter	*se = ea->se;
	char	*argv[] = { "factory-sandbox", "enter", NULL, NULL };
	char	*envp[] = { NULL };
	int	 want[SBX_EFD_MAX + 1], hi[SBX_EFD_MAX + 1], n, i;

	want[0] = want[1] = want[2] = se->tty;
	want[SBX_EFD_ERR] = se->errfd;
	want[SBX_EFD_SOCK] = ea->sock;
	want[SBX_EFD_PIDFD] = se->pidfd;
	want[SBX_EFD_KILL] = se->killfd;
	for (i = 0; i < se->ncgfds; i++)
		want[SBX_EFD_PROCS + i] = se->cgfds[i];
	n = SBX_EFD_PROCS + se->ncgfds;
	want[n++] = spawn_launcher;
	argv[2] = (char *)ea->id;
	/* Dies with the parent; kept across the execve. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		plan_fail(se->errfd, "pdeathsig:");
	for (i = 0; i < n; i++)
		if ((hi[i] = fcntl(want[i], F_DUPFD_CLOEXEC, 64)) == -1)
			plan_fail(se->errfd, "enter fds:");
	for (i = 0; i < n; i++)
		if (dup3(hi[i], i, i == n - 1 ? O_CLOEXEC : 0) == -1)
			_exit(127);
	syscall(SYS_close_range, n, ~0U, 0);
	syscall(SYS_execveat, n - 1, "", argv, envp, AT_EMPTY_PATH);
	plan_fail(SBX_EFD_ERR, "exec factory-sandbox:");
}

/*
 * The launcher execs at once, so it need not run on a copy of the
 * parent: CLONE_VM and CLONE_VFORK, as posix_spawn(3) does, copy no
 * page tables and leave the parent asleep until the execve.  Signals
 * stay blocked meanwhile (the parent's handlers must not run in the
 * child); the launcher unblocks them.  With pidfd, a pidfd of the
 * child lands there (CLONE_PIDFD).  -1 with errno if not cloned.
 * For the enter mode, the pool, and a fresh pid 1 where it cannot be
 * born in its cgroup2 directory (spawn_clone_into).
 */
static pid_t
spawn_clone_launcher(int (*fn)(void *), void *arg, int nsflags, int *pidfd)
{
	char		 stack[32768] __attribute__((aligned(16)));
	sigset_t	 all, old;
	pid_t		 pid;
	int		 saved;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(fn, stack + sizeof(stack), CLONE_VM | CLONE_VFORK |
	    nsflags | (pidfd != NULL ? CLONE_PIDFD : 0) | SIGCHLD, arg,
	    pidfd);
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return (pid);
}

/*
 * The agent's pid 1, born in its cgroup2 directory (clone3(2),
 * CLONE_INTO_CGROUP): no move, so none of the global lock and RCU
 * grace period a write to cgroup.procs waits for (~10 ms here, twice
 * an attempt).  Not CLONE_VM: from the syscall's return on, the child
 * would run on a stack of its own, so it runs, like fork(2), on a
 * copy of the parent until the execve, which CLONE_VFORK waits for.
 * Signals are blocked meanwhile, as for spawn_clone_launcher.
 */
static pid_t
spawn_clone_into(struct plan *pl, int nsflags, int cgfd)
{
	struct clone_args	 ca;
	sigset_t		 all, old;
	pid_t			 pid;
	int			 saved;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_VFORK | CLONE_INTO_CGROUP | (uint64_t)nsflags;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)cgfd;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	if ((pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca))) == 0)
		spawn_exec_launcher(pl);
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return (pid);
}


/*
 * The launcher pool.  Exec'ing the launcher and making its namespaces
 * is most of what a spawn costs (an execve alone is about half a
 * millisecond here), and none of it depends on the attempt.  So the
 * parent keeps a few launchers started ahead ("factory-sandbox ready",
 * launcher.c): each cloned from the zygote (spawn_zygote_make), or
 * cloned and exec'd at once as a fresh one is, with its socket and
 * error pipe and nothing else; it makes its own uts, network and IPC
 * namespaces, says "R" and waits for a plan.  A spawn makes the
 * cgroup2 directory, takes the oldest that said "R" and sends it the
 * plan, the agent's log and that directory, then "G" (the other
 * cgroups, made meanwhile);
 * it takes the tree from the host's mounts as they are now (it was
 * mounted after the launcher started) and clones pid 1 (CLONE_PARENT:
 * our child; a new pid namespace, in the mount namespace whose
 * host-root part of the view the launcher built ahead;
 * CLONE_INTO_CGROUP: born in that
 * directory, so nothing is moved in cgroup2, where a move waits for an
 * RCU grace period) and exits; pid 1 says who it is with a pidfd of
 * itself (spawn_ready_pid1), and from there it is what a fresh launcher
 * is.  Each
 * serves one attempt: no fd, namespace or memory of an earlier attempt
 * can be in it, and the uid and cgroups are the attempt's own, as
 * always.  One that died or said anything else is killed through its
 * pidfd and dropped; with the pool empty a spawn starts a fresh
 * launcher.  They die with the parent (PR_SET_PDEATHSIG) and are
 * killed when the launcher binary changes.
 */
/*
 * In the clone: fds 3 and 4, the launcher's binary, nothing else;
 * mode "ready" or "zygote".
 */
static __dead void
spawn_ready_child(const int *fds, char *mode)
{
	char		 room[SBX_TITLE_ROOM + 1];
	char		*argv[] = { "factory-sandbox", mode, room, NULL };
	char		*envp[] = { NULL };
	int		 want[3], hi[3], i;

	memset(room, ' ', SBX_TITLE_ROOM);
	room[SBX_TITLE_ROOM] = '\0';
	want[0] = fds[0];
	want[1] = fds[1];
	want[2] = spawn_launcher;
	for (i = 0; i < 3; i++)
		if ((hi[i] = fcntl(want[i], F_DUPFD_CLOEXEC, 64)) == -1)
			_exit(127);
	for (i = 0; i < 3; i++)
		if (dup3(hi[i], SBX_FD_SOCK + i, i == 2 ? O_CLOEXEC : 0) == -1)
			_exit(127);
	syscall(SYS_close_range, SBX_FD_SOCK + 3, ~0U, 0);
	syscall(SYS_execveat, SBX_FD_SOCK + 2, "", argv, envp, AT_EMPTY_PATH);
	plan_fail(SBX_FD_ERR, "exec factory-sandbox:");
}

/*
 * Like fork(2), with a pidfd (CLONE_PIDFD): the refill runs while an
 * agent runs, and the parent goes on at once instead of sleeping until
 * the launcher's execve (CLONE_VFORK), the dearer half of starting
 * one.  Until the execve the child is a copy of the parent, as with
 * spawn_clone_into; it runs only spawn_ready_child, with every signal
 * blocked (the launcher unblocks them).
 */
static pid_t
spawn_fork_ready(int *fds, char *mode, int *pidfd)
{
	sigset_t	 all, old;
	pid_t		 pid;
	int		 saved;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = (pid_t)syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, NULL, pidfd,
	    NULL, 0);
	if (pid == 0)
		spawn_ready_child(fds, mode);
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return (pid);
}

/*
 * A socket and error pipe, and "factory-sandbox mode" started with
 * their other ends: in *r.
 */
static int
spawn_ready_exec(struct spawn_ready *r, char *mode)
{
	int	 sv[2], ep[2], fds[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return (-1);
	if (pipe2(ep, O_CLOEXEC) == -1) {
		close(sv[0]);
		close(sv[1]);
		return (-1);
	}
	fds[0] = sv[1];
	fds[1] = ep[1];
	r->pidfd = -1;
	/* Not pid 1 of anything: its pid 1 is cloned at the plan. */
	r->pid = spawn_fork_ready(fds, mode, &r->pidfd);
	close(sv[1]);
	close(ep[1]);
	if (r->pid == -1) {
		close(sv[0]);
		close(ep[0]);
		return (-1);
	}
	r->sock = sv[0];
	r->errfd = ep[0];
	return (0);
}

/*
 * The pid of pidfd fd if it is of a child of ours other than notpid,
 * else -1.  Its pid and parent, as this namespace numbers them, in
 * one ioctl where the kernel has PIDFD_GET_INFO; else its pid from
 * fdinfo, and a pidfd of someone else's process makes waitid(2) say
 * ECHILD.
 */
static pid_t
spawn_pidfd_child(int fd, pid_t notpid)
{
	struct spawn_pidfd_info	 info;
	siginfo_t	 si;
	char		 path[64], buf[2048], *p, *ep;
	long		 v;
	pid_t		 pid = -1;
	int		 n, rc;

	/* One the caller can wait on: no PIDFD_NONBLOCK. */
	if ((n = fcntl(fd, F_GETFL)) == -1 || (n & O_NONBLOCK))
		return (-1);
	memset(&info, 0, sizeof(info));
	info.mask = SBX_PIDFD_INFO_PID;
	/* A process's, not a thread's (PIDFD_THREAD). */
	if (probe_pidinfo() && ioctl(fd, SBX_PIDFD_GET_INFO, &info) == 0)
		return ((info.mask & SBX_PIDFD_INFO_PID) && info.pid > 1 &&
		    info.tgid == info.pid && (pid_t)info.pid != notpid &&
		    (pid_t)info.ppid == getpid() ? (pid_t)info.pid : -1);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if ((n = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	rc = (int)read(n, buf, sizeof(buf) - 1);
	close(n);
	buf[rc > 0 ? rc : 0] = '\0';
	if ((p = strstr(buf, "\nPid:\t")) != NULL) {
		v = strtol(p + 6, &ep, 10);
		if (ep != p + 6 && *ep == '\n' && v > 1 && v != (long)notpid)
			pid = (pid_t)v;
	}
	memset(&si, 0, sizeof(si));
	if (pid != -1 && (waitid(P_PIDFD, fd, &si, WEXITED | WNOHANG |
	    WNOWAIT) == -1 || (si.si_pid != 0 && si.si_pid != pid)))
		pid = -1;
	return (pid);
}

/*
 * The zygote ("factory-sandbox zygote", launcher.c): started once,
 * it clones each launcher of the pool from itself on an "F" carrying
 * that launcher's socket and error pipe, and answers "Z" with a pidfd
 * of it, a child of ours.  That saves the launcher's execve and the C
 * library's start-up, most of its cost here.  A zygote that answers
 * anything else, or nothing within SBX_ZYGOTE_MS, is killed, and
 * launchers are exec'd one by one until the launcher binary changes.
 */
#define SBX_ZYGOTE_MS	5000


static void
spawn_zygote_stop(void)
{
	if (spawn_zygote.pid == -1)
		return;
	spawn_ready_drop(&spawn_zygote);
	spawn_zygote.pid = spawn_zygote.pidfd = spawn_zygote.sock =
	    spawn_zygote.errfd = -1;
}

/*
 * Ask the zygote for a launcher: "F" with its socket's and error
 * pipe's other ends.  The answer is not waited for here (the refill
 * runs while an agent runs, and waiting would be one more hand-off
 * between processes): it is read when the launcher is taken or
 * dropped (spawn_zygote_collect), in the order asked, which is the
 * order the zygote answers in.  Until then *r has pid 0 and no pidfd.
 */
static int
spawn_zygote_make(struct spawn_ready *r)
{
	int	 sv[2], ep[2], fds[2], rc;

	if (spawn_zygote_off)
		return (-1);
	if (spawn_zygote.pid == -1 && spawn_ready_exec(&spawn_zygote,
	    "zygote") == -1) {
		spawn_zygote.pid = -1;
		spawn_zygote_off = 1;
		return (-1);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return (-1);
	if (pipe2(ep, O_CLOEXEC) == -1) {
		close(sv[0]);
		close(sv[1]);
		return (-1);
	}
	fds[0] = sv[1];
	fds[1] = ep[1];
	rc = plan_sendtag(spawn_zygote.sock, 0, 'F', fds, 2);
	close(sv[1]);
	close(ep[1]);
	if (rc == -1) {
		close(sv[0]);
		close(ep[0]);
		spawn_zygote_stop();
		spawn_zygote_off = 1;
		return (-1);
	}
	r->pid = 0;
	r->pidfd = -1;
	r->sock = sv[0];
	r->errfd = ep[0];
	return (0);
}

/*
 * The zygote's "Z" for the oldest launcher it still owes, r: a pidfd of
 * a child of ours other than the zygote.  Else the zygote is killed,
 * launchers are exec'd from now on, r's ends are closed (a launcher
 * the zygote made exits at their EOF) and -1.
 */
static int
spawn_zygote_collect(struct spawn_ready *r)
{
	struct pollfd	 pfd;
	char		 tag = 0;
	int		 fd = -1, rc = -1;

	if (spawn_zygote.pid != -1) {
		pfd.fd = spawn_zygote.sock;
		pfd.events = POLLIN;
		while ((rc = poll(&pfd, 1, SBX_ZYGOTE_MS)) == -1 &&
		    errno == EINTR)
			;
		if (rc != 1 || plan_recvtag(spawn_zygote.sock, MSG_DONTWAIT,
		    &tag, &fd, 1) != 1 || tag != 'Z' ||
		    (r->pid = spawn_pidfd_child(fd, spawn_zygote.pid)) == -1)
			rc = -1;
		else
			rc = 0;
	}
	if (rc == 0) {
		r->pidfd = fd;
		return (0);
	}
	if (fd != -1)
		close(fd);
	close(r->sock);
	close(r->errfd);
	spawn_zygote_stop();
	spawn_zygote_off = 1;
	return (-1);
}

static int
spawn_ready_make(struct spawn_ready *r)
{
	if (spawn_zygote_make(r) == 0)
		return (0);
	return (spawn_ready_exec(r, "ready"));
}

/* Kill it and reap it (unless the caller's reaper was first). */
/*
 * Killed and reaped through its pidfd.  The wait is bounded: one that
 * has not died SBX_DROP_MS after a SIGKILL is left to the SIGCHLD
 * reaper (proc_reap, or the one of factoryd's shutdown), by its pid.
 */
#define SBX_DROP_MS	10000

static void
spawn_ready_drop(struct spawn_ready *r)
{
	struct pollfd	 pfd;
	siginfo_t	 si;

	(void)syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
	pfd.fd = r->pidfd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, SBX_DROP_MS) == -1 && errno == EINTR)
		;
	(void)waitid(P_PIDFD, r->pidfd, &si, WEXITED | WNOHANG);
	close(r->pidfd);
	close(r->sock);
	close(r->errfd);
}

static void
spawn_ready_drain(void)
{
	int	 i, n = 0;

	/* The zygote's answers first, in the order it gives them. */
	for (i = 0; i < spawn_nready; i++)
		if (spawn_ready[i].pid != 0 ||
		    spawn_zygote_collect(&spawn_ready[i]) == 0)
			spawn_ready[n++] = spawn_ready[i];
	spawn_nready = n;
	while (spawn_nready > 0)
		spawn_ready_drop(&spawn_ready[--spawn_nready]);
}

/*
 * At shutdown: every launcher of the pool and the zygote are killed
 * and reaped before the parent exits.  PR_SET_PDEATHSIG alone lost the
 * race with the service manager, which kills what a unit's main
 * process leaves, and left them to init unreaped.  What the zygote
 * still owes is taken first (spawn_ready_drain), so each launcher it
 * cloned is ended by its pidfd too.
 */
void
sandbox_pool_end(void)
{
	spawn_ready_drain();
	spawn_zygote_stop();
	while (spawn_npool > 0) {
		spawn_npool--;
		close(spawn_pool[spawn_npool].net);
		close(spawn_pool[spawn_npool].ipc);
	}
}

/*
 * The oldest launcher of the pool that is ready, waiting for its "R"
 * if it has not said it yet; 0 if none is.
 */
static int
spawn_ready_take(struct spawn_ready *r)
{
	struct pollfd	 pfd;
	char		 tag;
	int		 rc, prio, prio_ok, waited;

	while (spawn_nready > 0) {
		*r = spawn_ready[0];
		memmove(&spawn_ready[0], &spawn_ready[1], --spawn_nready *
		    sizeof(spawn_ready[0]));
		/* What the zygote owed and did not give: an exec'd one. */
		if (r->pid == 0 && spawn_zygote_collect(r) == -1 &&
		    spawn_ready_exec(r, "ready") == -1)
			continue;
		pfd.fd = r->sock;
		pfd.events = POLLIN;
		/*
		 * Not ready: it makes its namespaces at nice 19
		 * (launcher.c, ready_lower), and a spawn now waits for it:
		 * back to our priority (its RLIMIT_NICE lets us), again
		 * every SBX_RENICE_MS, since one that had not got as far
		 * as lowering itself lowers itself after.
		 */
		errno = 0;
		prio = getpriority(PRIO_PROCESS, 0);
		prio_ok = errno == 0;
		for (waited = 0;;) {
			rc = poll(&pfd, 1, waited == 0 ? 0 : SBX_RENICE_MS);
			if (rc == -1 && errno == EINTR)
				continue;
			if (rc != 0 || waited >= SBX_SETUP_MS)
				break;
			if (prio_ok)
				(void)setpriority(PRIO_PROCESS, r->pid, prio);
			waited += SBX_RENICE_MS;
		}
		tag = 0;
		if (rc == 1 && plan_recvtag(r->sock, MSG_DONTWAIT, &tag, NULL,
		    0) == 0 && tag == 'R')
			return (1);
		spawn_ready_drop(r);
	}
	return (0);
}

/*
 * The plan, as the launcher's first message: queued before the clone
 * for a fresh launcher, sent to a ready one with the agent's log fd
 * (logfd, or -1 for none) and the cgroup2 directory its pid 1 is to
 * be born in (cgfd, or -1 for none).
 */
static int
spawn_send_plan(int sock, const struct plan *pl, int logfd, int cgfd,
    char *err, size_t errlen)
{
	void		*wire;
	size_t		 len;
	int		 buf = SBX_PLAN_MAX + 4096, fds[2], n = 0;

	if ((wire = plan_encode(pl, &sandbox_prog, &len)) == NULL) {
		snprintf(err, errlen, "plan: %s", strerror(errno));
		return (-1);
	}
	if (len > 128 * 1024)
		(void)setsockopt(sock, SOL_SOCKET, SO_SNDBUFFORCE, &buf,
		    sizeof(buf));
	fds[0] = logfd;
	fds[1] = cgfd;
	if (logfd != -1)
		n = cgfd != -1 ? 2 : 1;
	if (plan_sendfds(sock, 0, wire, len, fds, n) != (ssize_t)len) {
		snprintf(err, errlen, "send the plan: %s", strerror(errno));
		free(wire);
		return (-1);
	}
	free(wire);
	return (0);
}

/*
 * A fresh pid 1: the launcher cloned into new namespaces (the network
 * and IPC ones from the namespace pool, if it has any) and exec'd at
 * once, its plan queued on its socket first; or, without a launcher,
 * a fork of the caller.  Its pid, the parent's end of its socket and
 * the read end of its error pipe; -1 and err if none was started.
 */
static int
spawn_start(struct plan *pl, int cgfd, pid_t *pidp, int *sockp,
    int *efdp, char *err, size_t errlen)
{
	struct spawn_nsfds ns;
	int		 sv[2], ep[2], pooled;
	pid_t		 pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return (-1);
	}
	if (pipe2(ep, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return (-1);
	}
	pl->sock = sv[1];
	pl->errfd = ep[1];
	ns.net = ns.ipc = -1;
	if (pl->spec->netns != NULL) {
		/* A service's run: its network, an IPC namespace of its own. */
		if ((pooled = spawn_pool_join(*pl->spec->netns, &ns)) == 0) {
			snprintf(err, errlen, "namespaces: %s",
			    strerror(errno));
			pid = -2;	/* not cloned */
			goto done;
		}
	} else
		pooled = spawn_pool_take(&ns);
	pl->netfd = pooled ? ns.net : -1;
	pl->ipcfd = pooled ? ns.ipc : -1;
	if (spawn_launcher == -1 && spawn_forked == NULL) {
		snprintf(err, errlen, "no factory-sandbox launcher");
		pid = -2;	/* not cloned */
		goto done;
	}
	if (spawn_launcher != -1 && spawn_send_plan(sv[0], pl, -1, -1, err,
	    errlen) == -1) {
		pid = -2;	/* not cloned */
		goto done;
	}
	if (cgfd != -1)
		pid = spawn_clone_into(pl, SBX_NSFLAGS | (pooled ? 0 :
		    SBX_POOLNS), cgfd);
	else if (spawn_launcher != -1)
		pid = spawn_clone_launcher(spawn_launcher_child, pl,
		    SBX_NSFLAGS | (pooled ? 0 : SBX_POOLNS), NULL);
	else {
		/* Like fork(2), with the namespaces: pid 1 runs on a copy. */
		pid = (pid_t)syscall(SYS_clone, SBX_NSFLAGS | (pooled ? 0 :
		    SBX_POOLNS) | SIGCHLD, NULL, NULL, NULL, 0);
		if (pid == 0) {
			close(sv[0]);
			close(ep[0]);
			spawn_forked(pl, &sandbox_prog);
			_exit(127);
		}
	}
	if (pid == -1)
		snprintf(err, errlen, "clone: %s", strerror(errno));
 done:
	/* Pid 1 holds the pooled namespaces now, and nobody else. */
	if (pooled) {
		close(ns.net);
		close(ns.ipc);
	}
	close(sv[1]);
	close(ep[1]);
	if (pid < 0) {
		close(sv[0]);
		close(ep[0]);
		return (-1);
	}
	*pidp = pid;
	*sockp = sv[0];
	*efdp = ep[0];
	return (0);
}

/*
 * The pid of the pidfd pid 1 sent ("P"), if it is a child of ours
 * (CLONE_PARENT) that is not the launcher it came from; else -1.
 */
static pid_t
spawn_ready_pid1(int sock, pid_t launcher, char *err, size_t errlen)
{
	struct pollfd	 pfd = { sock, POLLIN, 0 };
	char		 tag = 0;
	int		 fd, rc;
	pid_t		 pid;

	while ((rc = poll(&pfd, 1, SBX_SETUP_MS)) == -1 && errno == EINTR)
		;
	if (rc != 1 || plan_recvtag(sock, MSG_DONTWAIT, &tag, &fd, 1) != 1 ||
	    tag != 'P') {
		snprintf(err, errlen, "pooled launcher: no pid 1 (tag %d)",
		    tag);
		return (-1);
	}
	pid = spawn_pidfd_child(fd, launcher);
	close(fd);
	if (pid == -1)
		snprintf(err, errlen, "pooled launcher: pid 1's pidfd is "
		    "not of a child");
	return (pid);
}

/* What a launcher that has exited wrote on its error pipe, if anything. */
static void
spawn_ready_why(int errfd, char *err, size_t errlen)
{
	struct pollfd	 pfd = { errfd, POLLIN, 0 };
	char		 buf[256], shown[256 * ESC_MAXEXPAND + 1], *nl;
	ssize_t		 n;

	if (poll(&pfd, 1, 0) != 1 || (n = read(errfd, buf,
	    sizeof(buf))) <= 0)
		return;
	if ((nl = memchr(buf, '\n', n)) != NULL)
		n = nl - buf;
	esc_show(buf, n, shown, sizeof(shown));
	snprintf(err + strlen(err), errlen - strlen(err), ": %s", shown);
}

/*
 * A launcher of the pool, if one is ready, given the plan, the agent's
 * log and the cgroup2 directory (cgfd, or -1) its pid 1 is to be born
 * in.  One that dies before it has the plan is dropped and the next
 * one tried; 1 if one has it (in *r), 0 if none was ready.
 */
static int
spawn_ready_send(struct plan *pl, int logfd, int cgfd, struct spawn_ready *r)
{
	char	 serr[256];

	if (logfd == -1)
		return (0);	/* a ready one is always given a log */
	pl->netfd = pl->ipcfd = -1;	/* it has made its own */
	while (spawn_ready_take(r)) {
		if (spawn_send_plan(r->sock, pl, logfd, cgfd, serr,
		    sizeof(serr)) == 0)
			return (1);
		spawn_ready_drop(r);
	}
	return (0);
}

/*
 * After the pid 1 the launcher that has the plan cloned said who it is
 * (*pidp, spawn_ready_pid1; -1 if it did not): the parent's end of its
 * socket and the read end of its error pipe; the launcher itself is
 * reaped.  -1 and err if that pid 1 was not started.
 */
static int
spawn_ready_finish(struct spawn_ready *r, pid_t *pidp, int *sockp, int *efdp,
    char *err, size_t errlen)
{
	siginfo_t	 si;

	/* Its pid 1 is cloned: it exits (or is made to). */
	(void)syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
	while (waitid(P_PIDFD, r->pidfd, &si, WEXITED) == -1 &&
	    errno == EINTR)
		;
	close(r->pidfd);
	if (*pidp == -1) {
		spawn_ready_why(r->errfd, err, errlen);
		close(r->sock);
		close(r->errfd);
		return (-1);
	}
	*sockp = r->sock;
	*efdp = r->errfd;
	return (0);
}

/*
 * A start that failed leaves nothing behind: cgroups its tasks are
 * still leaving are removed on a timer (cgroup.c) while the failure is
 * answered; what cannot be removed at all is said in err.
 */
static void
sandbox_destroy_failed(struct sandbox *sb, char *err, size_t errlen,
    const char *derr)
{
	if (errno == EBUSY)
		(void)sandbox_destroy_later(sb, 500, NULL, NULL);
	else
		snprintf(err + strlen(err), errlen - strlen(err), "; %s",
		    derr);
}

int
sandbox_spawn(const struct sandbox_spec *spec, struct sandbox *sb,
    char *err, size_t errlen)
{
	struct plan	 pl;
	struct spawn_ready r;
	struct stat	 nsid;
	char		 derr[256], gerr[256], *perr;
	size_t		 perrlen;
	int		 sock, efd, st, rc, cgfd, born, first, gsent, made;
	int		 pooled = 0;
	int		 gfds[SANDBOX_MAXCG], ngfd = 0;
	pid_t		 pid;

	if (probe_seccomp_build(err, errlen) == -1)
		return (-1);
	if (sandbox_cgroup_paths(spec->id, sb) == -1) {
		snprintf(err, errlen, "attempt id %s: bad, or no cgroups",
		    spec->id ? spec->id : "(null)");
		return (-1);
	}
	if (spawn_plan(&pl, spec, err, errlen) == -1)
		return (-1);
	sb->uid = spec->uid;
	sb->gid = spec->gid;
	strlcpy(sb->tree, pl.tree, sizeof(sb->tree));
	sb->nports = plan_ports(spec, sb->ports);
	/*
	 * Where it can be, pid 1 is born in its cgroup2 directory
	 * (CLONE_INTO_CGROUP: by spawn_clone_into for a fresh launcher, by
	 * the launcher itself for one of the pool), so that directory is
	 * made first, alone, and pid 1 joins only the others (v1) itself.
	 * They are made, with the limits, while pid 1 starts; it waits
	 * for them ("G") before anything else, its view included.
	 */
	cgfd = born = first = sock = efd = -1;
	pid = -1;
	rc = 0;
	if (spawn_launcher != -1 && sb->cg_kill >= 0) {
		if ((rc = cgroup_create_one(sb, sb->cg_kill, err,
		    errlen)) == 0) {
			first = sb->cg_kill;
			if ((cgfd = spawn_into_fd(sb)) != -1)
				born = sb->cg_kill;
		}
	}
	pl.ncgroups = sb->ncgroups - (born != -1);
	gsent = 0;	/* "G": 1 sent, -1 could not be */
	memset(&nsid, 0, sizeof(nsid));
	/* A launcher of the pool made its namespaces: not for a service. */
	if (rc == 0 && spawn_launcher != -1 && spec->netns == NULL &&
	    spawn_ready_send(&pl, spec->logfd, cgfd, &r)) {
		/*
		 * The cgroups while the launcher clones pid 1, and "G" as
		 * soon as they are made, behind the plan on the same
		 * socket: pid 1 reads it there whether it has said who it
		 * is ("P") by then or not (nothing but the launcher and its
		 * pid 1 reads that socket, and nothing of the agent exists
		 * before pid 1 joined them).  What fails after the cgroups
		 * is said in perr, a failed "G" in gerr: a launcher that
		 * fails first says why on its error pipe
		 * (spawn_ready_finish), which is worth more than the broken
		 * pipe "G" met.
		 */
		pooled = 1;
		sb->fd = r.sock;
		made = spawn_cgroups_make(spec, sb, first, born, gfds, &ngfd,
		    err, errlen) == 0;
		perr = made ? err : derr;
		perrlen = made ? errlen : sizeof(derr);
		gsent = made && spawn_cgroups_send(sb, gfds, ngfd, gerr,
		    sizeof(gerr)) == 0 ? 1 : -1;
		pid = spawn_ready_pid1(r.sock, r.pid, perr, perrlen);
		if (pid != -1)
			spawn_pid1_mntns(pid, &nsid);
		/* The launcher is reaped after. */
		rc = spawn_ready_finish(&r, &pid, &sock, &efd, perr, perrlen);
		/* And what pid 1 said, if it said why before it went. */
		if (rc == 0 && made && gsent == -1) {
			strlcpy(err, gerr, errlen);
			spawn_ready_why(efd, err, errlen);
		}
		sb->fd = -1;
	} else if (rc == 0)
		rc = spawn_start(&pl, cgfd, &pid, &sock, &efd, err, errlen);
	if (cgfd != -1)
		close(cgfd);
	free(pl.hide);
	free(pl.binds);
	free(pl.bexec);
	if (rc == -1) {
		sb->pid = -1;
		/*
		 * A launcher of the pool had the cgroup2 directory, and the
		 * others too once "G" went: what it may have started there
		 * dies before the removal (of what of them there is).
		 */
		if (first != -1 || pooled)
			(void)cgroup_kill(sb);
		if ((first != -1 || pooled) && sandbox_destroy(sb, derr,
		    sizeof(derr)) == -1)
			sandbox_destroy_failed(sb, err, errlen, derr);
		return (-1);
	}
	sb->pid = pid;
	sb->fd = sock;
	rc = gsent == -1 ? -1 : 0;
	if (gsent == 0) {
		/* Pid 1 waits for "G": it is there, in its namespace. */
		spawn_pid1_mntns(pid, &nsid);
		rc = spawn_cgroups_make(spec, sb, first, born, gfds, &ngfd, err,
		    errlen);
		if (rc == 0)
			rc = spawn_cgroups_send(sb, gfds, ngfd, err, errlen);
	}
	if (rc == 0)
		rc = spawn_await(efd, err, errlen);
	close(efd);
	if (rc == 0 && (spec->nlisten == 0 ||
	    spawn_recvfds(sb, spec->nlisten, err, errlen) == 0) &&
	    spawn_recv_mntns(sb, &nsid, err, errlen) == 0)
		return (0);

	/* Leave nothing behind: the namespace dies with its pid 1. */
	cgroup_kill(sb);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	sb->pid = -1;
	if (sandbox_destroy(sb, derr, sizeof(derr)) == -1)
		sandbox_destroy_failed(sb, err, errlen, derr);
	return (-1);
}

/*
 * A fleet claim's watchdog moved on to ms (CLOCK_BOOTTIME): pid 1 ends
 * the sandbox then unless told again.  Never blocks: a full socket is
 * -1 and errno, and the watch tries again on its next tick.
 */
int
sandbox_watchdog(struct sandbox *sb, uint64_t ms)
{
	unsigned char	 m[9];
	int		 i;

	if (sb->fd == -1) {
		errno = EBADF;
		return (-1);
	}
	m[0] = 'W';
	for (i = 0; i < 8; i++)
		m[1 + i] = (unsigned char)(ms >> (56 - 8 * i));
	if (send(sb->fd, m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(m))
		return (-1);
	sb->watchdog_ms = ms;
	return (0);
}

int
sandbox_exitstatus(struct sandbox *sb, int status)
{
	char	 msg[16];
	ssize_t	 n;
	int	 st;

	while (sb->agent_status == -1 && sb->fd != -1) {
		n = recv(sb->fd, msg, sizeof(msg), MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (msg[0] == 'W' && n == 1)
			sb->watchdog_fired = 1;
		if (msg[0] == 'S' && n == 1 + (ssize_t)sizeof(st)) {
			memcpy(&st, msg + 1, sizeof(st));
			sb->agent_status = st;
		}
	}
	return (sb->agent_status != -1 ? sb->agent_status : status);
}

/*
 * The zygote drops what it is handed ("D"): the view's teardown, every
 * mount unmounted and the expedited RCU grace period that waits for,
 * runs there while the parent goes on.  Not waited for, and nothing
 * comes back: the zygote's answers stay its "Z"s, in order.  No process
 * of the sandbox is left (pid 1 was reaped, or never started), so
 * nothing runs in the namespace meanwhile; its tmpfs pages stay charged
 * to the attempt's memory cgroup until then.  If the zygote cannot
 * take it now (none, or its socket full), it is dropped here, as it
 * was before.
 */
void
sandbox_release_mntns(struct sandbox *sb)
{
	if (sb->mntns == -1)
		return;
	if (spawn_launcher != -1 && spawn_zygote.pid != -1)
		(void)plan_sendtag(spawn_zygote.sock, MSG_DONTWAIT, 'D',
		    &sb->mntns, 1);
	close(sb->mntns);
	sb->mntns = -1;
}

/*
 * The end of a sandbox whose processes are gone: its descriptors, its
 * mount namespace (first, elsewhere if it can: sandbox_release_mntns),
 * the egress listeners the forwarder did not take, then one try at its
 * cgroups (cgroup_remove, which says when to try again).
 */
int
sandbox_destroy(struct sandbox *sb, char *err, size_t errlen)
{
	int	 i;

	if (sb->fd != -1) {
		close(sb->fd);
		sb->fd = -1;
	}
	sandbox_release_mntns(sb);
	for (i = 0; i < sb->nlfd; i++)
		if (sb->lfd[i] != -1)
			close(sb->lfd[i]);
	sb->nlfd = 0;
	return (cgroup_remove(sb, err, errlen));
}

int
sandbox_kill(struct sandbox *sb)
{
	return (cgroup_kill(sb));
}

/*
 * For the operator's shell (shell.c): the seccomp program its enter
 * plan carries, built once per parent.
 */
int
sandbox_prepare(char *err, size_t errlen)
{
	if (probe_seccomp_build(err, errlen) == -1)
		return (-1);
	return 0;
}

/*
 * An operator's shell session: factory-sandbox enter, with the enter
 * plan queued on its socket before the clone.  The launcher does the
 * rest (sandbox/enter.c); the caller waits on se->errfd's other end.
 */
pid_t
sandbox_enter(const struct sandbox *sb, const struct sandbox_enter *se,
    char *err, size_t errlen)
{
	struct sandbox_spec	 as = *se->spec;
	struct spawn_enter_args	 ea;
	struct plan_enter	 en;
	void			*wire;
	size_t			 len;
	pid_t			 pid;
	int			 sv[2];

	if (spawn_launcher == -1) {
		snprintf(err, errlen, "no factory-sandbox launcher");
		return (-1);
	}
	if (se->ncgfds < 3 || se->ncgfds > SANDBOX_MAXCG + 2) {
		snprintf(err, errlen, "%d session cgroup fds", se->ncgfds);
		return (-1);
	}
	as.uid = sb->uid;
	as.gid = sb->gid;
	memset(&en, 0, sizeof(en));
	en.spec = &as;
	strlcpy(en.tree, sb->tree, sizeof(en.tree));
	memcpy(en.ports, sb->ports, sizeof(en.ports));
	en.nports = sb->nports;
	en.nprocs = se->ncgfds - 2;
	if (strlcpy(en.home, se->home, sizeof(en.home)) >= sizeof(en.home) ||
	    strlcpy(en.cgname, se->cgname, sizeof(en.cgname)) >=
	    sizeof(en.cgname)) {
		snprintf(err, errlen, "HOME or cgroup name too long");
		return (-1);
	}
	if ((wire = plan_enter_encode(&en, &sandbox_prog, &len)) == NULL) {
		snprintf(err, errlen, "enter plan: %s", strerror(errno));
		return (-1);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		free(wire);
		return (-1);
	}
	if (send(sv[0], wire, len, MSG_NOSIGNAL) != (ssize_t)len) {
		snprintf(err, errlen, "send the enter plan: %s",
		    strerror(errno));
		pid = -1;
		goto done;
	}
	ea.se = se;
	ea.sock = sv[1];
	ea.id = as.id;
	if ((pid = spawn_clone_launcher(spawn_enter_child, &ea, 0, NULL)) == -1)
		snprintf(err, errlen, "clone: %s", strerror(errno));
 done:
	free(wire);
	close(sv[0]);
	close(sv[1]);
	return (pid);
}
