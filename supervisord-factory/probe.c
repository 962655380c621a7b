/*
 * What the sandbox needs of the kernel, the parent's side (root).  The
 * probes themselves run in the launcher ("factory-sandbox probe",
 * sandbox/probe.c), exec'd once at start: this reads its one answer,
 * strictly (libcommon/probemsg.c), and keeps what the spawn needs and
 * the texts the start-up line, receipts and policy print.  Also the
 * agent's seccomp program, compiled here once and carried in every
 * plan (libcommon/plan.c): libseccomp is the parent's, and so is the
 * program; the launcher links libbsd alone.  Given the state directory
 * (factoryd's), the launcher also makes a real overlay of the
 * attempts' kind there: its answer says how disk.c is to make them
 * (probe_overlay); given the instance, it finds the cgroup layout and
 * makes our directories (probe_cgroup, which cgroup.c checks and
 * keeps).  sandbox_probe_downgrade (sandbox.c) runs the probe, then
 * takes its cgroup layout; this file calls nothing of the spawn's.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "plan.h"
#include "probemsg.h"
#include "sandbox.h"

struct sock_fprog		 sandbox_prog;	/* the agent's, compiled once */
/*
 * What the probe found (probemsg.h), and every kernel feature the
 * sandbox uses, as the log line says it, and those an equivalent
 * mechanism stands in for, as receipts and the isolation policy name
 * them (the parent adds its own: cgroup.kill, the disk's).
 */
static int			 probe_done;
static uint32_t			 probe_downgraded;	/* CONF_DG_* in force */
static int			 probe_llabi;
static int			 probe_memfd_sysctl;	/* vm.memfd_noexec */
static int			 probe_pidfdinfo = 1;	/* PIDFD_GET_INFO */
static char			 probe_feats[PROBE_FEATSLEN];
static char			 probe_repl[PROBE_REPLLEN];
static const char		*probe_statedir;	/* NULL: no disk probe */
static const char		*probe_tag;	/* the cgroups', or NULL */
static struct probe_cgroup	 probe_cg;	/* the layout found */
static int			 probe_ovl;		/* PROBE_OVL_* */
static char			 probe_diskerr[PROBE_ERRLEN];

/*
 * The seccomp denylist.  Agents run compilers, shells and test suites,
 * so everything not listed is allowed.  EPERM where a program may
 * merely probe (unshare, mount, ptrace from sanitizers and debuggers,
 * keyrings) so it fails politely; KILL where the call only makes sense
 * as an attack (kernel modules, kexec, terminal injection, handle-based
 * open).  clone3 gets ENOSYS: its flags live in memory a filter cannot
 * read, and glibc falls back to clone(2), whose flags we do check.
 */
struct probe_rule {
	const char	*name;
	int		 nr;		/* if libseccomp does not know it */
	int		 kill;
};

static const struct probe_rule probe_rules[] = {
	{ "ptrace", -1, 0 },
	{ "process_vm_readv", -1, 0 },
	{ "process_vm_writev", -1, 0 },
	{ "process_madvise", 440, 0 },
	{ "pidfd_getfd", 438, 0 },
	{ "bpf", -1, 0 },
	{ "keyctl", -1, 0 },
	{ "add_key", -1, 0 },
	{ "request_key", -1, 0 },
	{ "mount", -1, 0 },
	{ "umount2", -1, 0 },
	{ "pivot_root", -1, 0 },
	{ "chroot", -1, 0 },
	{ "move_mount", 429, 0 },
	{ "open_tree", 428, 0 },
	{ "open_tree_attr", 467, 0 },
	{ "fsopen", 430, 0 },
	{ "fsconfig", 431, 0 },
	{ "fsmount", 432, 0 },
	{ "fspick", 433, 0 },
	{ "mount_setattr", 442, 0 },
	{ "unshare", -1, 0 },
	{ "setns", -1, 0 },
	{ "io_uring_setup", 425, 0 },
	{ "io_uring_enter", 426, 0 },
	{ "io_uring_register", 427, 0 },
	{ "perf_event_open", -1, 0 },
	{ "userfaultfd", -1, 0 },
	{ "name_to_handle_at", -1, 0 },
	{ "acct", -1, 0 },
	{ "quotactl", -1, 0 },
	{ "quotactl_fd", 443, 0 },
	{ "settimeofday", -1, 0 },
	{ "clock_settime", -1, 0 },
	{ "clock_adjtime", -1, 0 },
	{ "adjtimex", -1, 0 },
	{ "syslog", -1, 0 },
	{ "lookup_dcookie", -1, 0 },
	{ "vhangup", -1, 0 },
	{ "uselib", -1, 0 },
	{ "kexec_load", -1, 1 },
	{ "kexec_file_load", -1, 1 },
	{ "init_module", -1, 1 },
	{ "finit_module", -1, 1 },
	{ "delete_module", -1, 1 },
	{ "reboot", -1, 1 },
	{ "swapon", -1, 1 },
	{ "swapoff", -1, 1 },
	{ "iopl", -1, 1 },
	{ "ioperm", -1, 1 },
	{ "open_by_handle_at", -1, 1 },
};

static int
probe_sysnr(const struct probe_rule *r)
{
	int	 nr;

	nr = seccomp_syscall_resolve_name(r->name);
	if (nr != __NR_SCMP_ERROR)
		return (nr);
#ifdef __x86_64__
	return (r->nr);	/* numbers of x86_64, newer than libseccomp */
#else
	return (-1);
#endif
}

static int
probe_seccomp_rules(scmp_filter_ctx ctx)
{
	const unsigned long nsflags[] = { CLONE_NEWNS, CLONE_NEWUTS,
	    CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	    CLONE_NEWCGROUP };
	const unsigned long ttyioc[] = { TIOCSTI, TIOCLINUX };
	size_t	 i;
	int	 nr;

	for (i = 0; i < sizeof(probe_rules) / sizeof(probe_rules[0]); i++) {
		if ((nr = probe_sysnr(&probe_rules[i])) < 0)
			continue;	/* not on this architecture */
		if (seccomp_rule_add(ctx, probe_rules[i].kill ?
		    SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO(EPERM), nr, 0) < 0)
			return (-1);
	}
	/* Any namespace flag, one rule each: a filter compares, not tests. */
	for (i = 0; i < sizeof(nsflags) / sizeof(nsflags[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
		    nsflags[i], nsflags[i])) < 0)
			return (-1);
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0) < 0)
		return (-1);
	/*
	 * No execution from a descriptor: fexecve(3) and execveat(2) of
	 * an fd run what Landlock never saw by path (a memfd).  Programs
	 * exec by path; this costs them nothing.  No executable memfds
	 * either (pid 1 also sets vm.memfd_noexec=2 for the namespace).
	 */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat),
	    1, SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH)) < 0)
		return (-1);
	/*
	 * A kernel without vm.memfd_noexec makes every memfd executable
	 * through /proc/self/fd: no memfds at all (sandbox/probe.c).
	 */
	if (!probe_memfd_sysctl) {
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
		    SCMP_SYS(memfd_create), 0) < 0)
			return (-1);
	} else if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
	    SCMP_SYS(memfd_create), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, SBX_MFD_EXEC,
	    SBX_MFD_EXEC)) < 0)
		return (-1);
	/*
	 * The kernel reads an ioctl command as 32 bits: compare only those,
	 * so TIOCSTI with high bits set is caught as well.
	 */
	for (i = 0; i < sizeof(ttyioc) / sizeof(ttyioc[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS,
		    SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ,
		    0xffffffffUL, ttyioc[i])) < 0)
			return (-1);
	return (0);
}




/*
 * The checks libseccomp cannot say in one rule, as BPF: they come first
 * in the agent's one filter, and everything they do not decide falls
 * through to libseccomp's denylist below them (probe_seccomp_build).
 * One filter instead of three: the kernel checks a filter for every
 * syscall number when it is loaded (to cache what is always allowed)
 * and runs every filter on every call.  The kernel reads these
 * arguments as ints: the filter compares the low words (x86_64 is
 * little-endian).  Another architecture, or an x32 number, matches
 * nothing here and is killed by the denylist's architecture check.
 *
 * personality(2) may only set PER_LINUX or query (0xffffffff): no
 * switching ASLR off, no READ_IMPLIES_EXEC ("neither 0 nor
 * 0xffffffff" is two compares of one argument).
 *
 * Socket families, an allowlist: unix, inet, inet6, and netlink with
 * the route protocol only (getaddrinfo's AI_ADDRCONFIG and ip(8) read
 * addresses through it).  Anything else, vsock first (on a VM host it
 * reaches the hypervisor side whatever the network namespace), packet,
 * alg, the other netlink protocols and families whose modules would be
 * loaded on demand, is refused before the kernel looks: EAFNOSUPPORT,
 * or EPROTONOSUPPORT for netlink.  socketpair(2) takes unix only.
 */
#define SBX_A0LO	(offsetof(struct seccomp_data, args[0]))
#define SBX_A2LO	(offsetof(struct seccomp_data, args[2]))
#define SBX_LD(off)	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define SBX_JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define SBX_RET(k)	BPF_STMT(BPF_RET | BPF_K, (k))
static const struct sock_filter probe_args_insns[SBX_ARGS_INSNS] = {
	/* 0 */ SBX_LD(offsetof(struct seccomp_data, arch)),
	/* 1 */ SBX_JEQ(AUDIT_ARCH_X86_64, 0, 20),	/* 22: the denylist */
	/* 2 */ SBX_LD(offsetof(struct seccomp_data, nr)),
	/* 3 */ SBX_JEQ(SYS_personality, 2, 0),		/* 6 */
	/* 4 */ SBX_JEQ(SYS_socket, 6, 0),		/* 11 */
	/* 5 */ SBX_JEQ(SYS_socketpair, 3, 16),		/* 9, else 22 */
	/* personality */
	/* 6 */ SBX_LD(SBX_A0LO),
	/* 7 */ SBX_JEQ(0, 10, 0),			/* 18 */
	/* 8 */ SBX_JEQ(0xffffffffU, 9, 10),		/* 18, else 19 */
	/* socketpair */
	/* 9 */ SBX_LD(SBX_A0LO),
	/* 10 */ SBX_JEQ(AF_UNIX, 7, 9),		/* 18, else 20 */
	/* socket */
	/* 11 */ SBX_LD(SBX_A0LO),
	/* 12 */ SBX_JEQ(AF_UNIX, 5, 0),		/* 18 */
	/* 13 */ SBX_JEQ(AF_INET, 4, 0),
	/* 14 */ SBX_JEQ(AF_INET6, 3, 0),
	/* 15 */ SBX_JEQ(AF_NETLINK, 0, 4),		/* 16, else 20 */
	/* 16 */ SBX_LD(SBX_A2LO),
	/* 17 */ SBX_JEQ(NETLINK_ROUTE, 0, 3),		/* 18, else 21 */
	/* 18 */ SBX_RET(SECCOMP_RET_ALLOW),
	/* 19 */ SBX_RET(SECCOMP_RET_ERRNO | EPERM),
	/* 20 */ SBX_RET(SECCOMP_RET_ERRNO | EAFNOSUPPORT),
	/* 21 */ SBX_RET(SECCOMP_RET_ERRNO | EPROTONOSUPPORT),
	/* 22: libseccomp's denylist */
};

/*
 * Compile once and keep the BPF: a spawn then only calls seccomp(2).
 * libseccomp 2.5 exports only to an fd, hence the memfd.  Only the
 * native architecture is in the filter; any other (i386 through int
 * 0x80, x32 numbers on x86_64, which libseccomp checks for when x32 is
 * not added) hits the bad-arch action, set to kill the process.
 */
static int
probe_seccomp_compile(char *err, size_t errlen)
{
	scmp_filter_ctx	 ctx;
	struct stat	 st;
	void		*buf = NULL;
	int		 fd = -1, rc;

	if (sandbox_prog.filter != NULL)
		return (0);
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		snprintf(err, errlen, "seccomp: seccomp_init failed");
		return (-1);
	}
	/*
	 * Optimize 2 sorts the syscall numbers into a binary tree: an
	 * allowed call walks a few compares instead of the whole list,
	 * and loading the filter costs half (the kernel runs it once for
	 * every syscall number, to cache the ones always allowed).
	 */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0 || (rc = seccomp_attr_set(ctx,
	    SCMP_FLTATR_CTL_NNP, 0)) < 0 || (rc = seccomp_attr_set(ctx,
	    SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		snprintf(err, errlen, "seccomp: attributes: %s",
		    strerror(-rc));
		goto fail;
	}
	if (probe_seccomp_rules(ctx) == -1) {
		snprintf(err, errlen, "seccomp: adding the denylist failed");
		goto fail;
	}
	if ((fd = memfd_create("sbx-bpf", MFD_CLOEXEC)) == -1 ||
	    (rc = seccomp_export_bpf(ctx, fd)) < 0 || fstat(fd, &st) == -1 ||
	    st.st_size == 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    (size_t)st.st_size / sizeof(struct sock_filter) >
	    SBX_BPF_MAX - SBX_ARGS_INSNS ||
	    (buf = malloc(sizeof(probe_args_insns) + st.st_size)) == NULL ||
	    pread(fd, (char *)buf + sizeof(probe_args_insns), st.st_size, 0) !=
	    st.st_size) {
		snprintf(err, errlen, "seccomp: exporting the filter failed");
		free(buf);
		goto fail;
	}
	close(fd);
	seccomp_release(ctx);
	/* The argument checks, then the denylist: one program. */
	memcpy(buf, probe_args_insns, sizeof(probe_args_insns));
	sandbox_prog.len = SBX_ARGS_INSNS +
	    st.st_size / sizeof(struct sock_filter);
	sandbox_prog.filter = buf;
	return (0);
 fail:
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	return (-1);
}

/*
 * The launcher's probe mode, in a fork of the parent: its descriptor 3
 * the answer's pipe, 4 the binary (close-on-exec), nothing else; the
 * environment empty but for a test build's FACTORY_TEST_NOFEATURE.
 */
static __dead void
probe_exec(int launcher, int fd, uint32_t allowed)
{
	char	 mask[16], nofeat[256];
	char	*argv[] = { "factory-sandbox", "probe", mask,
		    probe_statedir != NULL ? (char *)probe_statedir : "-",
		    probe_tag != NULL ? (char *)probe_tag : "-", NULL };
	char	*envp[] = { NULL, NULL };
	int	 hi, lhi;
#ifdef FACTORY_TESTBUILD
	const char *s = getenv("FACTORY_TEST_NOFEATURE");

	if (s != NULL && (size_t)snprintf(nofeat, sizeof(nofeat),
	    "FACTORY_TEST_NOFEATURE=%s", s) < sizeof(nofeat))
		envp[0] = nofeat;
#else
	(void)nofeat;
#endif
	snprintf(mask, sizeof(mask), "%u", allowed);
	/* Out of the way first: either may sit on the other's number. */
	if ((hi = fcntl(fd, F_DUPFD_CLOEXEC, 64)) == -1 ||
	    (lhi = fcntl(launcher, F_DUPFD_CLOEXEC, 64)) == -1 ||
	    dup3(hi, PROBE_FD, 0) == -1 ||
	    dup3(lhi, PROBE_FD + 1, O_CLOEXEC) == -1)
		_exit(127);
	syscall(SYS_close_range, PROBE_FD + 2, ~0U, 0);
	syscall(SYS_execveat, PROBE_FD + 1, "", argv, envp, AT_EMPTY_PATH);
	_exit(127);
}

/*
 * Without a launcher (the regress helpers and the bench, whose pid 1
 * runs in a fork): they link the launcher's probe (sandbox/probe.o),
 * which replaces this.  factoryd does not, and always has a launcher.
 */
__attribute__((__weak__)) void
sbx_probe_write(int fd, uint32_t allowed, const char *statedir,
    const char *tag)
{
	(void)fd;
	(void)allowed;
	(void)statedir;
	(void)tag;
	_exit(127);
}

/* The answer, to EOF: at most PROBE_ANSWER_MAX bytes in SBX_SETUP_MS. */
static int
probe_read(int fd, char *buf, size_t *lenp, char *why, size_t whylen)
{
	struct timespec	 t0, t;
	struct pollfd	 pfd;
	ssize_t		 n;
	long		 left;
	size_t		 len = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = SBX_SETUP_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			snprintf(why, whylen, "no answer in %d ms",
			    SBX_SETUP_MS);
			return (-1);
		}
		if ((n = poll(&pfd, 1, (int)left)) == -1 && errno != EINTR) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			return (-1);
		}
		if (n <= 0)
			continue;
		if ((n = read(fd, buf + len, PROBE_ANSWER_MAX + 1 - len)) ==
		    -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(why, whylen, "read: %s", strerror(errno));
			return (-1);
		}
		if (n == 0)
			break;
		if ((len += n) > PROBE_ANSWER_MAX) {
			snprintf(why, whylen, "an answer of more than %d "
			    "bytes", PROBE_ANSWER_MAX);
			return (-1);
		}
	}
	*lenp = len;
	return (0);
}

/* Reaped: 0 if it exited 0, else -1 and how it ended. */
static int
probe_reap(pid_t pid, char *why, size_t whylen)
{
	int	 st;

	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			snprintf(why, whylen, "waitpid: %s", strerror(errno));
			return (-1);
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return (0);
	if (WIFEXITED(st))
		snprintf(why, whylen, "exited %d", WEXITSTATUS(st));
	else
		snprintf(why, whylen, "killed by signal %d", WTERMSIG(st));
	return (-1);
}

/*
 * The launcher's answer, its bytes as hostile as any child's: decoded
 * field by field, and no downgrade the configuration did not allow.
 */
static int
probe_ask(int launcher, uint32_t allowed, struct probe_answer *pa,
    char *why, size_t whylen)
{
	char	 buf[PROBE_ANSWER_MAX + 1];
	size_t	 len;
	pid_t	 pid;
	int	 p[2], rc;

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return (-1);
	}
	if ((pid = fork()) == -1) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if (pid == 0) {
		close(p[0]);
		if (launcher == -1)
			sbx_probe_write(p[1], allowed, probe_statedir,
			    probe_tag);
		probe_exec(launcher, p[1], allowed);
	}
	close(p[1]);
	rc = probe_read(p[0], buf, &len, why, whylen);
	close(p[0]);
	if (rc == -1) {
		(void)kill(pid, SIGKILL);
		(void)probe_reap(pid, buf, sizeof(buf));
		return (-1);
	}
	if (probe_reap(pid, why, whylen) == -1)
		return (-1);
	if (probe_answer_decode(buf, len, pa, why, whylen) == -1)
		return (-1);
	if (pa->downgraded & ~allowed) {
		snprintf(why, whylen, "downgrades %#x, not allowed",
		    pa->downgraded & ~allowed);
		return (-1);
	}
	/* A Landlock ABI is what it lacks: each lack a downgrade said. */
	if (pa->ok && ((pa->abi == 0 &&
	    !(pa->downgraded & CONF_DG_LANDLOCK)) || (pa->abi > 0 &&
	    pa->abi < 4 && !(pa->downgraded & CONF_DG_LANDLOCK_NET)) ||
	    (pa->abi > 0 && pa->abi < 6 &&
	    !(pa->downgraded & CONF_DG_LANDLOCK_SCOPES)))) {
		snprintf(why, whylen, "Landlock ABI %u without its "
		    "downgrades (%#x)", pa->abi, pa->downgraded);
		return (-1);
	}
	/* The disk probe's answer exactly when one was asked for. */
	if (pa->ok && (probe_statedir != NULL) !=
	    (pa->overlay != PROBE_OVL_NONE)) {
		snprintf(why, whylen, "overlay %d, %s", pa->overlay,
		    probe_statedir != NULL ? "not probed" : "not asked for");
		return (-1);
	}
	if (pa->ok && (probe_tag != NULL) != (pa->cg.mode != PROBE_CG_NONE)) {
		snprintf(why, whylen, "cgroup mode %d, %s", pa->cg.mode,
		    probe_tag != NULL ? "not probed" : "not asked for");
		return (-1);
	}
	return (0);
}

/* A new probe: nothing found, nothing downgraded yet. */
static void
probe_reset(void)
{
	probe_done = 0;
	probe_downgraded = 0;
	probe_feats[0] = probe_repl[0] = probe_diskerr[0] = '\0';
	probe_ovl = PROBE_OVL_NONE;
	memset(&probe_cg, 0, sizeof(probe_cg));
}

void
probe_set_statedir(const char *statedir)
{
	probe_statedir = statedir;
}

int
probe_run(int launcher, uint32_t allowed, const char *tag, char *err,
    size_t errlen)
{
	struct probe_answer	 pa;
	char			 why[PROBE_ERRLEN];

	probe_reset();
	probe_tag = tag;
	if (probe_ask(launcher, allowed, &pa, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "factory-sandbox probe: %s", why);
		return (-1);
	}
	if (!pa.ok) {
		strlcpy(err, pa.err, errlen);
		return (-1);
	}
	probe_downgraded = pa.downgraded;
	probe_llabi = (int)pa.abi;
	probe_memfd_sysctl = pa.memfd_noexec;
	probe_pidfdinfo = pa.pidinfo;
	strlcpy(probe_feats, pa.feats, sizeof(probe_feats));
	strlcpy(probe_repl, pa.repl, sizeof(probe_repl));
	probe_ovl = pa.overlay;
	strlcpy(probe_diskerr, pa.diskerr, sizeof(probe_diskerr));
	probe_cg = pa.cg;
	probe_done = 1;
	return (0);
}

/* The cgroup layout the probe found (PROBE_CG_NONE: not asked). */
const struct probe_cgroup *
probe_cgroup(void)
{
	return (&probe_cg);
}

/*
 * The disk probe's answer: 0, detached layers work; 1, they must be
 * attached first; -1 and the line to log, no attempt could have a
 * tree.  Its features are named, as the parent probed them before.
 */
int
probe_overlay(char *err, size_t errlen)
{
	if (probe_ovl == PROBE_OVL_FAIL || probe_ovl == PROBE_OVL_NONE) {
		strlcpy(err, probe_ovl == PROBE_OVL_FAIL ? probe_diskerr :
		    "overlay: not probed", errlen);
		return (-1);
	}
	sandbox_feature("idmapped-mounts", NULL);
	if (probe_ovl == PROBE_OVL_ATTACHED)
		sandbox_replaced("overlay-detached", "layers attached in a "
		    "private mount namespace (Linux 6.15 has it)");
	else
		sandbox_feature("overlay-detached", NULL);
	return (probe_ovl == PROBE_OVL_ATTACHED);
}

/*
 * The agent's program, built once.  A caller that did not probe (the
 * regress helpers, the bench, the unit tests, which link the launcher's
 * probe) probes in a fork first, taking every downgrade: only
 * memfd_noexec matters to the program.
 */
int
probe_seccomp_build(char *err, size_t errlen)
{
	if (!probe_done && probe_run(-1, ~0U, NULL, err, errlen) == -1)
		return (-1);
	return (probe_seccomp_compile(err, errlen));
}

/* A test build: is the feature named in FACTORY_TEST_NOFEATURE? */
int
sandbox_faked_missing(const char *name)
{
	return (probe_faked(name));
}

/*
 * Feature bit is missing: allowed if the configuration downgrades it
 * (remembered for sandbox_downgraded), else the reason in err.
 */
int
probe_lacks(uint32_t allowed, uint32_t bit, const char *why, char *err,
    size_t errlen)
{
	const char	*name = "?";
	int		 i;

	for (i = 0; conf_downgrade_names[i] != NULL; i++)
		if (bit == (1U << i))
			name = conf_downgrade_names[i];
	if (allowed & bit) {
		probe_downgraded |= bit;
		return (0);
	}
	probe_refuse(err, errlen, name, why);
	return (-1);
}

/*
 * One kernel feature as the probe found it: how NULL, used; else what
 * this kernel gives instead, or that it was downgraded.
 */
void
sandbox_feature(const char *name, const char *how)
{
	if (probe_feats[0] != '\0')
		strlcat(probe_feats, ", ", sizeof(probe_feats));
	strlcat(probe_feats, name, sizeof(probe_feats));
	if (how != NULL) {
		strlcat(probe_feats, " (", sizeof(probe_feats));
		strlcat(probe_feats, how, sizeof(probe_feats));
		strlcat(probe_feats, ")", sizeof(probe_feats));
	}
}

/* A feature this kernel lacks, replaced by the equivalent by. */
void
sandbox_replaced(const char *name, const char *by)
{
	char	 how[256];

	snprintf(how, sizeof(how), "replaced by %s", by);
	sandbox_feature(name, how);
	if (probe_repl[0] != '\0')
		strlcat(probe_repl, " ", sizeof(probe_repl));
	strlcat(probe_repl, name, sizeof(probe_repl));
}

/* Every feature probed, for the start-up log line. */
const char *
sandbox_features_text(void)
{
	return (probe_feats[0] != '\0' ? probe_feats : "none probed");
}

/* "none", or the names of the features replaced by an equivalent. */
const char *
sandbox_replaced_text(void)
{
	return (probe_repl[0] != '\0' ? probe_repl : "none");
}

uint32_t
sandbox_downgraded(void)
{
	return (probe_downgraded);
}

const char *
sandbox_downgrade_text(void)
{
	static char	 buf[128];
	int		 i;

	buf[0] = '\0';
	for (i = 0; conf_downgrade_names[i] != NULL; i++)
		if (probe_downgraded & (1U << i)) {
			if (buf[0] != '\0')
				strlcat(buf, " ", sizeof(buf));
			strlcat(buf, conf_downgrade_names[i], sizeof(buf));
		}
	return (buf[0] != '\0' ? buf : "none");
}

/* vm.memfd_noexec to be set in the view: 1, or 0 (memfd refused). */
int
probe_memfd_noexec(void)
{
	return (probe_memfd_sysctl);
}

/* PIDFD_GET_INFO: 1 until a probe said otherwise. */
int
probe_pidinfo(void)
{
	return (probe_pidfdinfo);
}

/* Landlock's ABI, 0: none (or downgraded). */
int
probe_abi(void)
{
	return (probe_llabi);
}
