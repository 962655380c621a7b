/*
 * What the sandbox needs of the kernel, found once at start (the
 * parent's side, root): namespaces, clone3, Landlock and its rights,
 * memfd_noexec, seccomp, each used, replaced by an equivalent, or
 * downgraded by factoryd.conf; and the agent's seccomp program,
 * compiled here once and carried in every plan (libcommon/plan.c).
 * sandbox_probe_downgrade (sandbox.c) runs the probes in order; this
 * file calls nothing of the spawn's.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "conf.h"
#include "landlock.h"
#include "plan.h"
#include "sandbox.h"

struct sock_fprog		 sandbox_prog;	/* the agent's, compiled once */
static uint32_t			 probe_downgraded;	/* CONF_DG_* in force */
/*
 * What the start-up probe found: every kernel feature the sandbox
 * uses, as the log line says it, and those an equivalent mechanism
 * stands in for, as receipts and the isolation policy name them.
 */
static char			 probe_feats[1024];
static char			 probe_repl[512];
static int	probe_faked(const char *);
static int			 probe_memfd_sysctl = -1; /* vm.memfd_noexec */
static int			 probe_memfd_none;	/* no memfd_create */

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
	 * through /proc/self/fd: no memfds at all (probe_memfd).
	 */
	if (probe_memfd_none) {
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
int
probe_seccomp_build(char *err, size_t errlen)
{
	scmp_filter_ctx	 ctx;
	struct stat	 st;
	void		*buf = NULL;
	int		 fd = -1, rc;

	if (sandbox_prog.filter != NULL)
		return (0);
	if (probe_memfd_sysctl == -1)
		probe_memfd();
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

int
probe_ns(char *err, size_t errlen)
{
	const char *const ns[] = { "mnt", "pid", "net", "ipc", "uts",
	    "cgroup", NULL };
	char	 path[64];
	int	 i;

	for (i = 0; ns[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
		if (access(path, F_OK) == -1) {
			snprintf(err, errlen, "namespaces: no %s namespace",
			    ns[i]);
			return (-1);
		}
	}
	/* The new mount API: EBADF means the call exists. */
	if (syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) == -1 &&
	    errno == ENOSYS) {
		snprintf(err, errlen, "mount_setattr: ENOSYS (Linux 5.12 has "
		    "it; no downgrade)");
		return (-1);
	}
	sandbox_feature("mount_setattr", NULL);
	if (syscall(SYS_close_range, ~0U, ~0U, 0) == -1 && errno == ENOSYS) {
		snprintf(err, errlen, "close_range: ENOSYS (Linux 5.9 has it; "
		    "no downgrade)");
		return (-1);
	}
	return (0);
}

/*
 * clone3(2) and CLONE_INTO_CGROUP: pid 1 and the launchers are cloned
 * with it.  A size of 0 is EINVAL where the call exists; a service
 * manager's filter that cannot read its flags (systemd's
 * RestrictNamespaces=) makes it ENOSYS.  CLONE_INTO_CGROUP with a
 * descriptor nobody has: EBADF where the flag is known, EINVAL where
 * it is not; either way nothing is cloned.
 */
int
probe_clone(char *err, size_t errlen)
{
	struct clone_args	 ca;

	if (syscall(SYS_clone3, NULL, 0) != -1 || errno == ENOSYS ||
	    probe_faked("clone3")) {
		snprintf(err, errlen, "clone3: ENOSYS (Linux 5.3 has it; masked "
		    "by a service manager's seccomp filter?  no downgrade)");
		return (-1);
	}
	sandbox_feature("clone3", NULL);
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = INT_MAX;
	if (syscall(SYS_clone3, &ca, sizeof(ca)) != -1 || errno != EBADF) {
		/* Not reached by a kernel that has clone3 and can run us. */
		snprintf(err, errlen, "CLONE_INTO_CGROUP: not known (Linux "
		    "5.7 has it; no downgrade)");
		return (-1);
	}
	sandbox_feature("clone-into-cgroup", NULL);
	return (0);
}

/*
 * vm.memfd_noexec (6.3), or what stands in for it: the agent's filter
 * refuses memfd_create(2) with ENOSYS, as a kernel without the call
 * would, so programs fall back to a file (in the noexec /tmp or
 * /dev/shm).  Landlock's execute right is no stand-in: a memfd run
 * through /proc/self/fd is executed all the same (seen on 6.18: its
 * file lies on the kernel's internal shm mount).  Decided before the
 * filter is built.
 */
void
probe_memfd(void)
{
	probe_memfd_sysctl = !probe_faked("memfd-noexec") &&
	    access(SBX_MEMFD_NOEXEC, F_OK) == 0;
	probe_memfd_none = !probe_memfd_sysctl;
	if (probe_memfd_sysctl)
		sandbox_feature("memfd-noexec", NULL);
	else
		sandbox_replaced("memfd-noexec", "memfd_create refused with "
		    "ENOSYS (Linux 6.3 has it)");
}

/*
 * Test builds can pretend a feature is missing, to prove that factoryd
 * refuses to start without it and runs with an explicit downgrade, or
 * with what replaces it: FACTORY_TEST_NOFEATURE is a comma-separated
 * list of downgrade or feature names (memfd-noexec, overlay-detached,
 * landlock-truncate, landlock-ioctl-dev, pidfd-info, clone3).
 */
static int
probe_faked(const char *name)
{
#ifdef FACTORY_TESTBUILD
	const char	*s = getenv("FACTORY_TEST_NOFEATURE"), *p;
	size_t		 n = strlen(name);

	for (p = s; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return (1);
#endif
	return (0);
}

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
	snprintf(err, errlen, "%s: %s; factoryd.conf sandbox.downgrade "
	    "[%s] runs without it", name, why, name);
	return (-1);
}

/*
 * The rights older ABIs lack whose protection the view gives anyway.
 * refer (ABI 2): without it Landlock refuses every rename or link
 * across directories (EXDEV), stricter.  truncate (ABI 3): it is
 * granted where writing is (the tree, /tmp, /dev/shm), and everything
 * else is mounted read-only, where truncate(2) is EROFS.  ioctl-dev
 * (ABI 5): it is granted on every device of the view's /dev, and all
 * else is nodev.
 */
static void
probe_rights(int abi)
{
	sandbox_feature("landlock-refer", abi >= 2 ? NULL :
	    "none: renames across directories refused (ABI 2 has it)");
	if (abi >= 3 && !probe_faked("landlock-truncate"))
		sandbox_feature("landlock-truncate", NULL);
	else
		sandbox_replaced("landlock-truncate", "read-only mounts "
		    "(Landlock ABI 3, Linux 6.2 has it)");
	if (abi >= 5 && !probe_faked("landlock-ioctl-dev"))
		sandbox_feature("landlock-ioctl-dev", NULL);
	else
		sandbox_replaced("landlock-ioctl-dev", "a /dev of its own, "
		    "nodev elsewhere (Landlock ABI 5, Linux 6.10 has it)");
}

/* Landlock and its network and scope rights, each downgradable. */
int
probe_landlock(uint32_t allowed, int *abip, char *err, size_t errlen)
{
	int	 abi = landlock_abi();

	if (probe_faked("landlock"))
		abi = 0;
	*abip = abi;
	if (abi == 0) {
		/* Without Landlock its rights are gone too: one downgrade. */
		sandbox_feature("landlock", "downgraded");
		return (probe_lacks(allowed, CONF_DG_LANDLOCK,
		    "Landlock is not supported by this kernel (Linux 5.13 "
		    "has it; or not enabled in lsm=)", err, errlen));
	}
	sandbox_feature("landlock", NULL);
	probe_rights(abi);
	if (abi < 4 || probe_faked("landlock-net")) {
		sandbox_feature("landlock-net", "downgraded");
		if (probe_lacks(allowed, CONF_DG_LANDLOCK_NET,
		    "Landlock has no TCP bind/connect rules (ABI 4, Linux "
		    "6.7): TCP relies on the network namespace alone", err,
		    errlen) == -1)
			return (-1);
	} else
		sandbox_feature("landlock-net", NULL);
	if (abi < 6 || probe_faked("landlock-scopes")) {
		sandbox_feature("landlock-scopes", "downgraded");
		if (probe_lacks(allowed, CONF_DG_LANDLOCK_SCOPES,
		    "Landlock has no abstract unix socket or signal scopes "
		    "(ABI 6, Linux 6.12)", err, errlen) == -1)
			return (-1);
	} else
		sandbox_feature("landlock-scopes", NULL);
	return (0);
}

int
probe_seccomp(char *err, size_t errlen)
{
	char	 avail[256];
	int	 fd;
	ssize_t	 n;

	if (prctl(PR_GET_SECCOMP) == -1 && errno == EINVAL) {
		snprintf(err, errlen, "seccomp: not supported by this kernel");
		return (-1);
	}
	if ((fd = open("/proc/sys/kernel/seccomp/actions_avail",
	    O_RDONLY | O_CLOEXEC)) == -1 || (n = read(fd, avail,
	    sizeof(avail) - 1)) <= 0) {
		snprintf(err, errlen, "seccomp: no filter mode");
		if (fd != -1)
			close(fd);
		return (-1);
	}
	close(fd);
	avail[n] = '\0';
	if (strstr(avail, "kill_process") == NULL) {
		snprintf(err, errlen, "seccomp: no kill_process action");
		return (-1);
	}
	return (probe_seccomp_build(err, errlen));
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

/* A new probe: nothing found, nothing downgraded yet. */
void
probe_reset(void)
{
	probe_downgraded = 0;
	probe_feats[0] = probe_repl[0] = '\0';
}

/* vm.memfd_noexec to be set in the view: 1, or 0 (memfd refused). */
int
probe_memfd_noexec(void)
{
	if (probe_memfd_sysctl == -1)
		probe_memfd();
	return (probe_memfd_sysctl);
}
