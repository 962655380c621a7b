/*
 * The agent sandbox launcher.  Runs in the parent (root); see sandbox.h
 * for the life of a sandbox and sandbox(7)-style notes below for why
 * each step is where it is.
 *
 * Three processes take part in one spawn:
 *
 *   parent	clones pid 1 into new mount, pid and uts namespaces and
 *		a fresh network and IPC namespace (from the pool, see
 *		below); while pid 1 builds its mount view, creates the
 *		cgroups, moves pid 1 into them and says "G"; then reads
 *		a close-on-exec pipe: EOF when the agent's execve
 *		succeeded, else the reason pid 1 or the agent failed.
 *   pid 1	enters the pooled namespaces, builds the mount view,
 *		waits for "G" (it is in the cgroups now), enters a cgroup
 *		namespace, forks the agent and reaps; when the agent
 *		exits it sends "S<wait status>" and exits, which kills
 *		what is left in the namespace.
 *   agent	rlimits, Landlock, uid, capabilities, seccomp, fds,
 *		execve.
 *
 * Work that does not depend on the attempt is done once per parent,
 * or ahead of the spawn: the seccomp program is compiled to BPF at the
 * first probe or spawn, and network and IPC namespaces are made ahead
 * (sandbox_pool_fill), each handed to exactly one sandbox.  The cgroup
 * set-up runs on the parent's side beside pid 1's mounts; no process
 * of the agent exists before pid 1 is in the cgroups.
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

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
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
#include "landlock.h"
#include "sandbox.h"

#define SBX_TMPSIZE	"size=64m,nr_inodes=16384"
#define SBX_MAXSOCKS	512	/* host unix sockets masked, at most */
#define SBX_SETUP_MS	30000	/* a spawn that takes longer is broken */
#define SBX_HOSTS	"/run/factory-hosts"	/* then bound on /etc/hosts */
#define SBX_NSFLAGS	(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS)
#define SBX_POOLNS	(CLONE_NEWNET | CLONE_NEWIPC)	/* or pooled */

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif
#define SBX_MFD_EXEC	0x0010U		/* MFD_EXEC, Linux 6.3 */
#define SBX_MEMFD_NOEXEC "/proc/sys/vm/memfd_noexec"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME		0x00000080
#endif

/* What pid 1 needs, computed by the parent before the clone. */
struct sbx_plan {
	const struct sandbox_spec *spec;
	char		 tree[PATH_MAX];	/* realpath */
	char		 (*hide)[PATH_MAX];	/* realpaths, existing ones */
	int		  nhide;
	char		 (*socks)[PATH_MAX];	/* the host's unix sockets */
	int		  nsocks;
	int		  ncgroups;		/* pid 1 joins as many */
	int		  netfd;		/* pooled namespaces, or -1 */
	int		  ipcfd;
	int		  sock;			/* pid 1's end: 'S' status */
	int		  errfd;		/* close-on-exec: setup errors */
};

static const char *const sbx_exec_default[] = {
	"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/libexec",
	"/usr/local/bin", "/usr/lib", "/lib", "/lib64", NULL
};

/*
 * The same, resolved and without duplicates once per parent (with a
 * merged /usr, /bin and /usr/bin are one directory): one Landlock rule
 * each.  NULL until then, or if it could not be done.
 */
static const char	*sbx_exec_dirs[sizeof(sbx_exec_default) /
			    sizeof(sbx_exec_default[0])];
static int		 sbx_exec_done;

/* Device nodes the agent gets: the host's numbers and modes. */
static const char *const sbx_devices[] = {
	"null", "zero", "full", "random", "urandom", "tty", NULL
};

static struct sock_fprog	 sbx_prog;	/* the compiled denylist */
static uint32_t			 sbx_downgraded;	/* CONF_DG_* in force */

static int	sbx_seccomp_build(char *, size_t);
static __dead void sbx_pid1(struct sbx_plan *);
static __dead void sbx_agent(struct sbx_plan *, int);
static void	sbx_confine(const struct sandbox_spec *, const char *,
		    const uint16_t *, int, int);

/* Report a failure of pid 1 or the agent on fd and exit. */
static __dead void
sbx_fail(int fd, const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (strstr(fmt, "%m") == NULL && saved != 0 &&
	    fmt[strlen(fmt) - 1] == ':')
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " %s",
		    strerror(saved));
	(void)write(fd, msg, strlen(msg));
	_exit(127);
}

/*
 * The seccomp denylist.  Agents run compilers, shells and test suites,
 * so everything not listed is allowed.  EPERM where a program may
 * merely probe (unshare, mount, ptrace from sanitizers and debuggers,
 * keyrings) so it fails politely; KILL where the call only makes sense
 * as an attack (kernel modules, kexec, terminal injection, handle-based
 * open).  clone3 gets ENOSYS: its flags live in memory a filter cannot
 * read, and glibc falls back to clone(2), whose flags we do check.
 */
struct sbx_rule {
	const char	*name;
	int		 nr;		/* if libseccomp does not know it */
	int		 kill;
};

static const struct sbx_rule sbx_rules[] = {
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
sbx_sysnr(const struct sbx_rule *r)
{
	int	 nr;

	nr = seccomp_syscall_resolve_name(r->name);
	if (nr != __NR_SCMP_ERROR)
		return nr;
#ifdef __x86_64__
	return r->nr;	/* numbers of x86_64, newer than libseccomp */
#else
	return -1;
#endif
}

static int
sbx_seccomp_rules(scmp_filter_ctx ctx)
{
	const unsigned long nsflags[] = { CLONE_NEWNS, CLONE_NEWUTS,
	    CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	    CLONE_NEWCGROUP };
	const unsigned long ttyioc[] = { TIOCSTI, TIOCLINUX };
	size_t	 i;
	int	 nr;

	for (i = 0; i < sizeof(sbx_rules) / sizeof(sbx_rules[0]); i++) {
		if ((nr = sbx_sysnr(&sbx_rules[i])) < 0)
			continue;	/* not on this architecture */
		if (seccomp_rule_add(ctx, sbx_rules[i].kill ?
		    SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO(EPERM), nr, 0) < 0)
			return -1;
	}
	/* Any namespace flag, one rule each: a filter compares, not tests. */
	for (i = 0; i < sizeof(nsflags) / sizeof(nsflags[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ,
		    nsflags[i], nsflags[i])) < 0)
			return -1;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0) < 0)
		return -1;
	/*
	 * No execution from a descriptor: fexecve(3) and execveat(2) of
	 * an fd run what Landlock never saw by path (a memfd).  Programs
	 * exec by path; this costs them nothing.  No executable memfds
	 * either (pid 1 also sets vm.memfd_noexec=2 for the namespace).
	 */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat),
	    1, SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
	    SCMP_SYS(memfd_create), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, SBX_MFD_EXEC,
	    SBX_MFD_EXEC)) < 0)
		return -1;
	/*
	 * The kernel reads an ioctl command as 32 bits: compare only those,
	 * so TIOCSTI with high bits set is caught as well.
	 */
	for (i = 0; i < sizeof(ttyioc) / sizeof(ttyioc[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS,
		    SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ,
		    0xffffffffUL, ttyioc[i])) < 0)
			return -1;
	return 0;
}

/*
 * personality(2) may only set PER_LINUX or query (0xffffffff): no
 * switching ASLR off, no READ_IMPLIES_EXEC.  libseccomp compares an
 * argument once per rule, and "neither 0 nor 0xffffffff" needs two,
 * so this is a second, hand-written filter.  The kernel reads the
 * argument as 32 bits; so does the filter (the low word, x86_64 is
 * little-endian).  Other architectures are killed by the first filter.
 */
#define SBX_A0LO	(offsetof(struct seccomp_data, args[0]))
static struct sock_filter sbx_persona_insns[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data,
	    arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 5),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SBX_A0LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffU, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};
static const struct sock_fprog sbx_persona = {
	sizeof(sbx_persona_insns) / sizeof(sbx_persona_insns[0]),
	sbx_persona_insns
};

/*
 * Socket families, an allowlist: unix, inet, inet6, and netlink with
 * the route protocol only (getaddrinfo's AI_ADDRCONFIG and ip(8) read
 * addresses through it).  Anything else, vsock first (on a VM host it
 * reaches the hypervisor side whatever the network namespace), packet,
 * alg, the other netlink protocols and families whose modules would be
 * loaded on demand, is refused before the kernel looks: EAFNOSUPPORT,
 * or EPROTONOSUPPORT for netlink.  socketpair(2) takes unix only.  The
 * kernel reads family and protocol as ints: the filter compares the
 * low words.  A hand-written filter, for the same reason as above.
 */
#define SBX_A2LO	(offsetof(struct seccomp_data, args[2]))
#define SBX_EAFNO	(SECCOMP_RET_ERRNO | EAFNOSUPPORT)
#define SBX_EPROTO	(SECCOMP_RET_ERRNO | EPROTONOSUPPORT)
static struct sock_filter sbx_family_insns[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data,
	    arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 12),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 0, 9),
	/* socketpair */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SBX_A0LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 7, 8),
	/* socket */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SBX_A0LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SBX_A2LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NETLINK_ROUTE, 0, 2),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SBX_EAFNO),
	BPF_STMT(BPF_RET | BPF_K, SBX_EPROTO),
};
static const struct sock_fprog sbx_family = {
	sizeof(sbx_family_insns) / sizeof(sbx_family_insns[0]),
	sbx_family_insns
};

static void
sbx_exec_resolve(void)
{
	char	 path[PATH_MAX];
	int	 i, j, n = 0;

	if (sbx_exec_done)
		return;
	sbx_exec_done = 1;
	for (i = 0; sbx_exec_default[i] != NULL; i++) {
		if (realpath(sbx_exec_default[i], path) == NULL)
			continue;	/* not on this host */
		for (j = 0; j < n; j++)
			if (strcmp(sbx_exec_dirs[j], path) == 0)
				break;
		if (j < n)
			continue;
		if ((sbx_exec_dirs[n] = strdup(path)) == NULL) {
			while (n > 0)
				free((char *)sbx_exec_dirs[--n]);
			sbx_exec_dirs[0] = NULL;	/* the list as given */
			return;
		}
		n++;
	}
}

/*
 * Compile once and keep the BPF: a spawn then only calls seccomp(2).
 * libseccomp 2.5 exports only to an fd, hence the memfd.  Only the
 * native architecture is in the filter; any other (i386 through int
 * 0x80, x32 numbers on x86_64, which libseccomp checks for when x32 is
 * not added) hits the bad-arch action, set to kill the process.
 */
static int
sbx_seccomp_build(char *err, size_t errlen)
{
	scmp_filter_ctx	 ctx;
	struct stat	 st;
	void		*buf = NULL;
	int		 fd = -1, rc;

	if (sbx_prog.filter != NULL)
		return 0;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		snprintf(err, errlen, "seccomp: seccomp_init failed");
		return -1;
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
	if (sbx_seccomp_rules(ctx) == -1) {
		snprintf(err, errlen, "seccomp: adding the denylist failed");
		goto fail;
	}
	if ((fd = memfd_create("sbx-bpf", MFD_CLOEXEC)) == -1 ||
	    (rc = seccomp_export_bpf(ctx, fd)) < 0 || fstat(fd, &st) == -1 ||
	    st.st_size == 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    (buf = malloc(st.st_size)) == NULL ||
	    pread(fd, buf, st.st_size, 0) != st.st_size) {
		snprintf(err, errlen, "seccomp: exporting the filter failed");
		free(buf);
		goto fail;
	}
	close(fd);
	seccomp_release(ctx);
	sbx_prog.len = st.st_size / sizeof(struct sock_filter);
	sbx_prog.filter = buf;
	return 0;
 fail:
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	return -1;
}

static int
sbx_probe_ns(char *err, size_t errlen)
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
			return -1;
		}
	}
	/* The new mount API: EBADF means the call exists. */
	if (syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) == -1 &&
	    errno == ENOSYS) {
		snprintf(err, errlen, "mount: no mount_setattr (kernel "
		    "older than 5.12)");
		return -1;
	}
	if (syscall(SYS_close_range, ~0U, ~0U, 0) == -1 && errno == ENOSYS) {
		snprintf(err, errlen, "close_range: not supported");
		return -1;
	}
	if (access(SBX_MEMFD_NOEXEC, F_OK) == -1) {
		snprintf(err, errlen, "memfd: no %s (kernel older than 6.3)",
		    SBX_MEMFD_NOEXEC);
		return -1;
	}
	return 0;
}

/*
 * Test builds can pretend a feature is missing, to prove that factoryd
 * refuses to start without it and runs with an explicit downgrade:
 * FACTORY_TEST_NOFEATURE is a comma-separated list of downgrade names.
 */
static int
sbx_faked_missing(const char *name)
{
#ifdef FACTORY_TESTBUILD
	const char	*s = getenv("FACTORY_TEST_NOFEATURE"), *p;
	size_t		 n = strlen(name);

	for (p = s; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return 1;
#endif
	return 0;
}

/*
 * Feature bit is missing: allowed if the configuration downgrades it
 * (remembered for sandbox_downgraded), else the reason in err.
 */
static int
sbx_lacks(uint32_t allowed, uint32_t bit, const char *why, char *err,
    size_t errlen)
{
	const char	*name = "?";
	int		 i;

	for (i = 0; conf_downgrade_names[i] != NULL; i++)
		if (bit == (1U << i))
			name = conf_downgrade_names[i];
	if (allowed & bit) {
		sbx_downgraded |= bit;
		return 0;
	}
	snprintf(err, errlen, "%s: %s; factoryd.conf sandbox.downgrade "
	    "[%s] runs without it", name, why, name);
	return -1;
}

/* Landlock and its network and scope rights, each downgradable. */
static int
sbx_probe_landlock(uint32_t allowed, int *abip, char *err, size_t errlen)
{
	int	 abi = landlock_abi();

	if (sbx_faked_missing("landlock"))
		abi = 0;
	*abip = abi;
	if (abi == 0)
		/* Without Landlock its rights are gone too: one downgrade. */
		return sbx_lacks(allowed, CONF_DG_LANDLOCK, "Landlock is not "
		    "supported by this kernel (or not enabled in lsm=)", err,
		    errlen);
	if (abi < 4 || sbx_faked_missing("landlock-net"))
		if (sbx_lacks(allowed, CONF_DG_LANDLOCK_NET, "Landlock has no "
		    "TCP bind/connect rules (ABI 4): TCP relies on the network "
		    "namespace alone", err, errlen) == -1)
			return -1;
	if (abi < 6 || sbx_faked_missing("landlock-scopes"))
		if (sbx_lacks(allowed, CONF_DG_LANDLOCK_SCOPES, "Landlock has "
		    "no abstract unix socket or signal scopes (ABI 6)", err,
		    errlen) == -1)
			return -1;
	return 0;
}

static int
sbx_probe_seccomp(char *err, size_t errlen)
{
	char	 avail[256];
	int	 fd;
	ssize_t	 n;

	if (prctl(PR_GET_SECCOMP) == -1 && errno == EINVAL) {
		snprintf(err, errlen, "seccomp: not supported by this kernel");
		return -1;
	}
	if ((fd = open("/proc/sys/kernel/seccomp/actions_avail",
	    O_RDONLY | O_CLOEXEC)) == -1 || (n = read(fd, avail,
	    sizeof(avail) - 1)) <= 0) {
		snprintf(err, errlen, "seccomp: no filter mode");
		if (fd != -1)
			close(fd);
		return -1;
	}
	close(fd);
	avail[n] = '\0';
	if (strstr(avail, "kill_process") == NULL) {
		snprintf(err, errlen, "seccomp: no kill_process action");
		return -1;
	}
	return sbx_seccomp_build(err, errlen);
}

int
sandbox_probe_downgrade(uint32_t allowed, char *err, size_t errlen)
{
	char	 cg[512];
	int	 abi, nokill;

	sbx_downgraded = 0;
	if (sbx_probe_ns(err, errlen) == -1 ||
	    sbx_probe_landlock(allowed, &abi, err, errlen) == -1 ||
	    sbx_probe_seccomp(err, errlen) == -1)
		return -1;
	if (cgroup_probe(cg, sizeof(cg), &nokill) == -1) {
		strlcpy(err, cg, errlen);
		return -1;
	}
	if ((nokill || sbx_faked_missing("cgroup-kill")) &&
	    sbx_lacks(allowed, CONF_DG_CGROUP_KILL, "no cgroup2 cgroup.kill "
	    "(kernel 5.14): a cancel kills pid 1 and sweeps cgroup.procs",
	    err, errlen) == -1)
		return -1;
	snprintf(err, errlen, "namespaces mnt pid net ipc uts cgroup "
	    "(net+ipc pool %d); landlock abi %d; seccomp denylist %u insns; "
	    "%s; downgraded: %s", sandbox_pool_fill(SANDBOX_POOL), abi,
	    sbx_prog.len, cg, sandbox_downgrade_text());
	return 0;
}

int
sandbox_probe(char *err, size_t errlen)
{
	return sandbox_probe_downgrade(0, err, errlen);
}

uint32_t
sandbox_downgraded(void)
{
	return sbx_downgraded;
}

const char *
sandbox_downgrade_text(void)
{
	static char	 buf[128];
	int		 i;

	buf[0] = '\0';
	for (i = 0; conf_downgrade_names[i] != NULL; i++)
		if (sbx_downgraded & (1U << i)) {
			if (buf[0] != '\0')
				strlcat(buf, " ", sizeof(buf));
			strlcat(buf, conf_downgrade_names[i], sizeof(buf));
		}
	return buf[0] != '\0' ? buf : "none";
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
struct sbx_nsfds {
	int	 net;
	int	 ipc;
};

static struct sbx_nsfds	 sbx_pool[SANDBOX_POOLMAX];
static int		 sbx_npool;

static int
sbx_pool_child(void *arg)
{
	struct sbx_nsfds	*ns = arg;

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
sbx_pool_make(struct sbx_nsfds *ns)
{
	char	 stack[16384] __attribute__((aligned(16)));
	pid_t	 pid;
	int	 st;

	ns->net = ns->ipc = -1;
	pid = clone(sbx_pool_child, stack + sizeof(stack), CLONE_VM |
	    CLONE_VFORK | CLONE_FILES | SBX_POOLNS, ns);
	if (pid == -1)
		return -1;
	while (waitpid(pid, &st, __WCLONE) == -1 && errno == EINTR)
		;
	if (ns->net != -1 && ns->ipc != -1)
		return 0;
	if (ns->net != -1)
		close(ns->net);
	if (ns->ipc != -1)
		close(ns->ipc);
	return -1;
}

int
sandbox_pool_fill(int want)
{
	if (want > SANDBOX_POOLMAX)
		want = SANDBOX_POOLMAX;
	while (sbx_npool < want && sbx_pool_make(&sbx_pool[sbx_npool]) == 0)
		sbx_npool++;
	return sbx_npool;
}

static int
sbx_pool_take(struct sbx_nsfds *ns)
{
	if (sbx_npool == 0)
		return 0;
	*ns = sbx_pool[--sbx_npool];
	return 1;
}

/* mkdir -p of rel below the directory base, inside a fresh tmpfs. */
static int
sbx_mkdirs(const char *base, const char *rel)
{
	char	 path[PATH_MAX], *p;
	size_t	 blen = strlen(base);

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", base, rel) >=
	    sizeof(path))
		return -1;
	for (p = path + blen + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(path, 0755) == -1 && errno != EEXIST)
				return -1;
			*p = c;
		}
		if (*p == '\0')
			break;
	}
	return 0;
}

/* If tree lies below dir, the part of it below dir; else NULL. */
static const char *
sbx_below(const char *tree, const char *dir)
{
	size_t	 n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return tree + 1;
	if (strncmp(tree, dir, n) == 0 && tree[n] == '/')
		return tree + n + 1;
	return NULL;
}

/*
 * A tmpfs over dir that keeps the way to the tree open: the tree is
 * bound back last, over a directory made here before it goes read-only.
 */
static void
sbx_cover(struct sbx_plan *pl, const char *dir, unsigned long flags,
    const char *opts, int ro)
{
	const char	*rel;

	if (mount("tmpfs", dir, "tmpfs", flags, opts) == -1)
		sbx_fail(pl->errfd, "mount tmpfs on %s:", dir);
	if ((rel = sbx_below(pl->tree, dir)) != NULL &&
	    sbx_mkdirs(dir, rel) == -1)
		sbx_fail(pl->errfd, "mkdir %s below %s:", rel, dir);
	if (ro && mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    flags, NULL) == -1)
		sbx_fail(pl->errfd, "remount %s read-only:", dir);
}

/*
 * The host's device numbers and modes, read before /dev is covered.
 * Pid 1 is root in the first user namespace: it makes the nodes
 * itself (mknod), which is far cheaper than a bind mount for each and
 * leaves fewer mounts to tear down.
 */
static void
sbx_dev_stat(struct sbx_plan *pl, struct stat *st)
{
	char	 path[64];
	int	 i;

	for (i = 0; sbx_devices[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/dev/%s", sbx_devices[i]);
		if (stat(path, &st[i]) == -1) {
			if (errno != ENOENT)
				sbx_fail(pl->errfd, "stat %s:", path);
			st[i].st_mode = 0;	/* the host has none */
		} else if (!S_ISCHR(st[i].st_mode))
			sbx_fail(pl->errfd, "%s: not a character device",
			    path);
	}
}

static void
sbx_dev(struct sbx_plan *pl, const struct stat *st)
{
	char	 path[64];
	mode_t	 um;
	int	 i;

	sbx_cover(pl, "/dev", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755", 0);
	um = umask(0);		/* the host's modes, exactly */
	for (i = 0; sbx_devices[i] != NULL; i++) {
		if (st[i].st_mode == 0)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", sbx_devices[i]);
		if (mknod(path, S_IFCHR | (st[i].st_mode & 0777),
		    st[i].st_rdev) == -1)
			sbx_fail(pl->errfd, "mknod %s:", path);
	}
	umask(um);
	if (symlink("/proc/self/fd", "/dev/fd") == -1 ||
	    symlink("/proc/self/fd/0", "/dev/stdin") == -1 ||
	    symlink("/proc/self/fd/1", "/dev/stdout") == -1 ||
	    symlink("/proc/self/fd/2", "/dev/stderr") == -1 ||
	    mkdir("/dev/shm", 01777) == -1)
		sbx_fail(pl->errfd, "populate /dev:");
	if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, SBX_TMPSIZE ",mode=1777") == -1)
		sbx_fail(pl->errfd, "mount /dev/shm:");
	if (mount(NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NOEXEC, NULL) == -1)
		sbx_fail(pl->errfd, "remount /dev read-only:");
}

/* A file or socket covered, read-only, by the null device. */
static void
sbx_null_over(struct sbx_plan *pl, const char *path)
{
	if (mount("/dev/null", path, NULL, MS_BIND, NULL) == -1 ||
	    mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NOEXEC, NULL) == -1)
		sbx_fail(pl->errfd, "mask %s:", path);
}

/* The masks below the tree (intree) or elsewhere (!intree). */
static void
sbx_hide(struct sbx_plan *pl, int intree)
{
	struct stat	 st;
	int		 i;

	for (i = 0; i < pl->nhide; i++) {
		if ((sbx_below(pl->hide[i], pl->tree) != NULL) != intree)
			continue;
		/* Under /tmp or an earlier mask it may be gone already. */
		if (stat(pl->hide[i], &st) == -1)
			continue;
		if (S_ISDIR(st.st_mode)) {
			sbx_cover(pl, pl->hide[i], MS_NOSUID | MS_NODEV |
			    MS_NOEXEC, "size=16k,mode=755", 1);
			continue;
		}
		/*
		 * A socket or a key file: the null device answers (so
		 * not nodev: reading it gives nothing, not EACCES).
		 */
		sbx_null_over(pl, pl->hide[i]);
	}
}

/*
 * With egress, the names the manifest allows resolve through a hosts
 * file of their own and nothing else does: written into the fresh /run
 * before it goes read-only, bound over /etc/hosts after.
 */
static void
sbx_hosts_write(struct sbx_plan *pl)
{
	size_t	 len = strlen(pl->spec->hosts);
	int	 fd;

	if ((fd = open(SBX_HOSTS, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
	    0644)) == -1 || write(fd, pl->spec->hosts, len) != (ssize_t)len)
		sbx_fail(pl->errfd, "write %s:", SBX_HOSTS);
	close(fd);
}

static void
sbx_hosts_bind(struct sbx_plan *pl)
{
	struct stat	 st;

	if (stat(SBX_HOSTS, &st) == -1)
		sbx_fail(pl->errfd, "egress needs /run for %s:", SBX_HOSTS);
	if (mount(SBX_HOSTS, "/etc/hosts", NULL, MS_BIND, NULL) == -1 ||
	    mount(NULL, "/etc/hosts", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1)
		sbx_fail(pl->errfd, "bind %s on /etc/hosts:", SBX_HOSTS);
}

/*
 * /run holds the host's services' sockets (dbus, postgres, docker) and
 * pid files, whatever the configured socket path: an empty read-only
 * tmpfs with only the /run/shm link.  Connecting to a pathname socket
 * is no Landlock right at ABI 7, so hiding is the only refusal.
 */
static void
sbx_run(struct sbx_plan *pl)
{
	struct stat	 st;

	if (stat("/run", &st) == -1 || !S_ISDIR(st.st_mode))
		return;
	sbx_cover(pl, "/run", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "size=16k,mode=755", 0);
	if (symlink("/dev/shm", "/run/shm") == -1 && errno != EEXIST)
		sbx_fail(pl->errfd, "symlink /run/shm:");
	if (pl->spec->hosts != NULL)
		sbx_hosts_write(pl);
	if (mount(NULL, "/run", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1)
		sbx_fail(pl->errfd, "remount /run read-only:");
}

/*
 * Unix sockets the host had bound outside /run and /tmp (a database in
 * /var/lib, say): the null device goes over each that is still visible,
 * so connect(2) is refused.  One made after the spawn is not covered.
 */
static void
sbx_socks(struct sbx_plan *pl)
{
	struct stat	 st;
	int		 i;

	for (i = 0; i < pl->nsocks; i++) {
		if (lstat(pl->socks[i], &st) == -1 || !S_ISSOCK(st.st_mode))
			continue;
		sbx_null_over(pl, pl->socks[i]);
	}
}

/*
 * Memfds of this pid namespace (and those below it) are created
 * without execute permission and sealed so (vm.memfd_noexec=2, per pid
 * namespace since Linux 6.3): bytes written to one never run through
 * /proc/self/fd, where Landlock, which sees paths, does not look.
 * Only root may change it, and a namespace may not lower it.
 */
static void
sbx_memfd_noexec(struct sbx_plan *pl)
{
	int	 fd;

	if ((fd = open(SBX_MEMFD_NOEXEC, O_WRONLY | O_CLOEXEC)) == -1 ||
	    write(fd, "2\n", 2) != 2)
		sbx_fail(pl->errfd, "%s:", SBX_MEMFD_NOEXEC);
	close(fd);
}

/*
 * The mount view.  The tree is cloned first, while its path is still
 * the host's; then the whole inherited tree goes read-only, nosuid,
 * nodev in one recursive mount_setattr; then /tmp, /dev, /proc and the
 * masks are laid over it; the tree is attached last, on top of
 * whatever now covers its path.
 */
static void
sbx_mounts(struct sbx_plan *pl)
{
	struct mount_attr	 ro = { .attr_set = MOUNT_ATTR_RDONLY |
				     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	struct mount_attr	 rw = { .attr_set = MOUNT_ATTR_NOSUID |
				     MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				     .attr_clr = MOUNT_ATTR_RDONLY };
	struct stat		 devst[sizeof(sbx_devices) /
				     sizeof(sbx_devices[0])];
	int			 treefd;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		sbx_fail(pl->errfd, "make / private:");
	treefd = (int)syscall(SYS_open_tree, AT_FDCWD, pl->tree,
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (treefd == -1)
		sbx_fail(pl->errfd, "open_tree %s:", pl->tree);
	if (syscall(SYS_mount_setattr, treefd, "", AT_EMPTY_PATH |
	    AT_RECURSIVE, &rw, sizeof(rw)) == -1)
		sbx_fail(pl->errfd, "mount_setattr %s:", pl->tree);
	sbx_dev_stat(pl, devst);
	if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro,
	    sizeof(ro)) == -1)
		sbx_fail(pl->errfd, "mount_setattr / read-only:");

	sbx_cover(pl, "/tmp", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    SBX_TMPSIZE ",mode=1777", 0);
	sbx_run(pl);
	if (pl->spec->hosts != NULL)
		sbx_hosts_bind(pl);
	sbx_dev(pl, devst);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "hidepid=invisible") == -1)
		sbx_fail(pl->errfd, "mount /proc:");
	sbx_memfd_noexec(pl);
	sbx_hide(pl, 0);
	sbx_socks(pl);
	if (syscall(SYS_move_mount, treefd, "", AT_FDCWD, pl->tree,
	    MOVE_MOUNT_F_EMPTY_PATH) == -1)
		sbx_fail(pl->errfd, "attach %s:", pl->tree);
	close(treefd);
	/* Masks inside the tree (.git/hooks, say) go over the tree. */
	sbx_hide(pl, 1);
}

static void
sbx_rlimit(int fd, int res, const char *name, uint64_t soft, uint64_t hard)
{
	struct rlimit	 rl;

	rl.rlim_cur = soft;
	rl.rlim_max = hard;
	if (setrlimit(res, &rl) == -1)
		sbx_fail(fd, "setrlimit %s:", name);
}

static void
sbx_rlimits(const struct sandbox_spec *spec, int fd)
{
	uint64_t	 s;

	if (spec->cpu_ms != 0) {
		/* SIGXCPU at the soft limit, SIGKILL a second later. */
		s = (spec->cpu_ms + 999) / 1000;
		sbx_rlimit(fd, RLIMIT_CPU, "cpu", s, s + 1);
	}
	if (spec->fsize != 0)
		sbx_rlimit(fd, RLIMIT_FSIZE, "fsize", spec->fsize,
		    spec->fsize);
	if (spec->nofile != 0)
		sbx_rlimit(fd, RLIMIT_NOFILE, "nofile", spec->nofile,
		    spec->nofile);
	sbx_rlimit(fd, RLIMIT_CORE, "core", 0, 0);
}

/*
 * The agent's Landlock ruleset, prepared while still root.  TCP
 * connect is allowed to the egress ports only: inside the namespace
 * only the parent's listeners are there to reach.
 */
static struct landlock *
sbx_landlock(const struct sandbox_spec *spec, const char *tree,
    const uint16_t *ports, int nports, int fd)
{
	const uint64_t	 rw = LL_FS_READ | LL_FS_WRITE | LL_FS_CREATE |
			     LANDLOCK_ACCESS_FS_MAKE_FIFO |
			     LANDLOCK_ACCESS_FS_MAKE_SOCK;
	const uint64_t	 dev = LANDLOCK_ACCESS_FS_READ_FILE |
			     LANDLOCK_ACCESS_FS_WRITE_FILE |
			     LANDLOCK_ACCESS_FS_IOCTL_DEV;
	const char *const *ex;
	struct landlock	*ll;
	char		 path[64];
	int		 i;

	ll = landlock_new(LL_FS_ALL, LANDLOCK_ACCESS_NET_BIND_TCP |
	    LANDLOCK_ACCESS_NET_CONNECT_TCP,
	    LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL);
	if (ll == NULL)
		sbx_fail(fd, "landlock ruleset:");
	if (landlock_allow_path(ll, "/", LL_FS_READ) == -1 ||
	    landlock_allow_path(ll, tree, rw) == -1 ||
	    landlock_allow_path(ll, "/tmp", rw) == -1 ||
	    landlock_allow_path(ll, "/dev/shm", rw) == -1)
		sbx_fail(fd, "landlock rule:");
	for (i = 0; sbx_devices[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/dev/%s", sbx_devices[i]);
		if (landlock_allow_path(ll, path, dev) == -1 &&
		    errno != ENOENT)
			sbx_fail(fd, "landlock rule %s:", path);
	}
	ex = spec->exec_allow != NULL ?
	    (const char *const *)spec->exec_allow : sbx_exec_dirs[0] != NULL ?
	    sbx_exec_dirs : sbx_exec_default;
	for (i = 0; ex[i] != NULL; i++)
		if (landlock_allow_path(ll, ex[i], LL_FS_READ | LL_FS_EXEC) ==
		    -1 && errno != ENOENT)
			sbx_fail(fd, "landlock rule %s:", ex[i]);
	for (i = 0; i < nports; i++)
		if (landlock_allow_port(ll, ports[i],
		    LANDLOCK_ACCESS_NET_CONNECT_TCP) == -1)
			sbx_fail(fd, "landlock rule port %u:",
			    (unsigned)ports[i]);
	return ll;
}

/*
 * Capabilities: the bounding set needs CAP_SETPCAP to shrink, which
 * setresuid() takes away, so it is emptied just before the uid change;
 * effective and permitted go with the uid change itself, and are
 * cleared and checked again after it.
 */
static void
sbx_dropbounding(int fd)
{
	int	 cap;

	for (cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (errno == EINVAL)
				break;
			sbx_fail(fd, "drop capability %d:", cap);
		}
}

static void
sbx_dropcaps(int fd)
{
	struct __user_cap_header_struct	 h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct	 d[2];

	memset(d, 0, sizeof(d));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 ||
	    syscall(SYS_capset, &h, d) == -1 ||
	    syscall(SYS_capget, &h, d) == -1)
		sbx_fail(fd, "drop capabilities:");
	if (d[0].effective | d[0].permitted | d[0].inheritable |
	    d[1].effective | d[1].permitted | d[1].inheritable)
		sbx_fail(fd, "capabilities remain after setresuid");
	if (prctl(PR_CAPBSET_READ, 0, 0, 0, 0) != 0)
		sbx_fail(fd, "bounding set not empty");
}

static void
sbx_stdio(const struct sandbox_spec *spec, int fd)
{
	int	 lfd, nfd;

	/* Move the log out of the way first: it may be 0, 1 or 2. */
	if ((lfd = fcntl(spec->logfd, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    (nfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    dup2(nfd, 0) == -1 || dup2(lfd, 1) == -1 || dup2(lfd, 2) == -1)
		sbx_fail(fd, "stdio:");
	close(lfd);
	if (nfd > 2)
		close(nfd);
}

/*
 * Everything between a root process in the sandbox's namespaces and
 * the execve of an agent or an operator's shell, in the fixed order:
 * rlimits, Landlock ruleset, chdir, bounding set, groups, gid, uid,
 * capabilities, no_new_privs, Landlock, fds, seccomp.  Errors go to fd.
 */
static void
sbx_confine(const struct sandbox_spec *spec, const char *tree,
    const uint16_t *ports, int nports, int fd)
{
	struct landlock	*ll;
	uid_t		 ru, eu, su;

	sbx_rlimits(spec, fd);
	ll = sbx_landlock(spec, tree, ports, nports, fd);
	if (chdir(tree) == -1)
		sbx_fail(fd, "chdir %s:", tree);
	sbx_dropbounding(fd);
	if (setgroups(0, NULL) == -1)
		sbx_fail(fd, "setgroups:");
	if (setresgid(spec->gid, spec->gid, spec->gid) == -1)
		sbx_fail(fd, "setresgid %u:", (unsigned)spec->gid);
	if (setresuid(spec->uid, spec->uid, spec->uid) == -1)
		sbx_fail(fd, "setresuid %u:", (unsigned)spec->uid);
	if (getresuid(&ru, &eu, &su) == -1 || ru != spec->uid ||
	    eu != spec->uid || su != spec->uid)
		sbx_fail(fd, "uid did not change");
	sbx_dropcaps(fd);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		sbx_fail(fd, "no_new_privs:");
	if (landlock_restrict(ll) == -1)
		sbx_fail(fd, "landlock restrict:");
	landlock_free(ll);
	/* Close-on-exec, not close: fd must carry an execve failure. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		sbx_fail(fd, "close_range:");
	/*
	 * FLAG_LOG: every denial, EPERM ones included, is an audit record
	 * (type 1326, with the attempt's uid and the syscall number) in
	 * the kernel log; the parent does not collect them (yet).
	 */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0,
	    &sbx_persona) == -1 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_LOG, &sbx_family) == -1 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_LOG, &sbx_prog) == -1)
		sbx_fail(fd, "seccomp:");
}

/* The egress ports of spec, for the Landlock connect rules. */
static int
sbx_ports(const struct sandbox_spec *spec, uint16_t *ports)
{
	const struct sockaddr_storage	*ss;
	int				 i, n = 0;

	for (i = 0; i < spec->nlisten && i < SANDBOX_MAXLISTEN; i++) {
		ss = &spec->listen[i].addr;
		ports[n++] = ntohs(ss->ss_family == AF_INET6 ?
		    ((const struct sockaddr_in6 *)ss)->sin6_port :
		    ((const struct sockaddr_in *)ss)->sin_port);
	}
	return n;
}

/* The agent: pid 2 of the namespace.  Never returns. */
static __dead void
sbx_agent(struct sbx_plan *pl, int fd)
{
	const struct sandbox_spec *spec = pl->spec;
	uint16_t	 ports[SANDBOX_MAXLISTEN];
	int		 nports;

	/* The stdio dup2s below must not land on the error pipe. */
	if (fd <= 2 && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1)
		_exit(127);
	if (setsid() == -1)
		sbx_fail(fd, "setsid:");
	sbx_stdio(spec, fd);
	nports = sbx_ports(spec, ports);
	sbx_confine(spec, pl->tree, ports, nports, fd);
	execve(spec->argv[0], spec->argv, spec->env);
	sbx_fail(fd, "exec %s:", spec->argv[0]);
}

static void
sbx_send(int sock, int tag, const void *data, size_t len)
{
	char	 buf[16];

	if (len > sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	buf[0] = (char)tag;
	memcpy(buf + 1, data, len);
	(void)send(sock, buf, len + 1, MSG_NOSIGNAL);
}

/* pid 1: reap everything, report the agent, exit with it. */
static __dead void
sbx_reap(int sock, pid_t agent)
{
	pid_t	 pid;
	int	 st;

	for (;;) {
		pid = waitpid(-1, &st, 0);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid == -1)
			_exit(127);
		if (pid != agent)
			continue;
		sbx_send(sock, 'S', &st, sizeof(st));
		if (WIFEXITED(st))
			_exit(WEXITSTATUS(st));
		_exit(128 + WTERMSIG(st));
	}
}

/* A fresh network namespace's loopback is down: egress needs it up. */
static void
sbx_lo_up(struct sbx_plan *pl)
{
	struct ifreq	 ifr;
	int		 s;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		sbx_fail(pl->errfd, "socket:");
	memset(&ifr, 0, sizeof(ifr));
	strlcpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name));
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1)
		sbx_fail(pl->errfd, "lo flags:");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1)
		sbx_fail(pl->errfd, "lo up:");
	close(s);
}

static void
sbx_rta(struct nlmsghdr *nh, int type, const void *data, size_t len)
{
	struct rtattr	*rta;

	rta = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/*
 * An allowed literal address that is not loopback is put on lo, so the
 * agent connects to the address it was given, and reaches the parent.
 */
static void
sbx_lo_addr(struct sbx_plan *pl, const struct sockaddr_storage *ss)
{
	struct {
		struct nlmsghdr		 nh;
		struct ifaddrmsg	 ifa;
		char			 attrs[2 * RTA_SPACE(16)];
	} req;
	struct {
		struct nlmsghdr		 nh;
		struct nlmsgerr		 e;
	} ack;
	const void	*a;
	size_t		 alen;
	int		 s;

	if (ss->ss_family == AF_INET6) {
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		alen = 16;
	} else {
		a = &((const struct sockaddr_in *)ss)->sin_addr;
		alen = 4;
	}
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifa));
	req.nh.nlmsg_type = RTM_NEWADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE;
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = ss->ss_family;
	req.ifa.ifa_prefixlen = alen * 8;
	req.ifa.ifa_flags = IFA_F_NODAD | IFA_F_PERMANENT;
	req.ifa.ifa_index = if_nametoindex("lo");
	sbx_rta(&req.nh, IFA_LOCAL, a, alen);
	sbx_rta(&req.nh, IFA_ADDRESS, a, alen);
	if ((s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
	    NETLINK_ROUTE)) == -1 ||
	    send(s, &req, req.nh.nlmsg_len, 0) == -1 ||
	    recv(s, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack))
		sbx_fail(pl->errfd, "rtnetlink:");
	close(s);
	if (ack.nh.nlmsg_type != NLMSG_ERROR)
		sbx_fail(pl->errfd, "rtnetlink: unexpected answer %u",
		    (unsigned)ack.nh.nlmsg_type);
	if (ack.e.error != 0 && ack.e.error != -EEXIST) {
		errno = -ack.e.error;
		sbx_fail(pl->errfd, "add an egress address to lo:");
	}
}

/*
 * One message between the parent and pid 1: a tag byte, and n fds
 * (at most SANDBOX_MAXLISTEN) attached.  -1 with errno if not sent.
 */
static int
sbx_sendtag(int sock, char tag, const int *fds, int n)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * SANDBOX_MAXLISTEN)];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = &tag;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (n > 0) {
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == -1 ? -1 : 0;
}

/*
 * The next message on sock: its tag in *tag and the fds attached (at
 * most max; close-on-exec) in fds.  Returns how many fds came, or -1
 * if no message did (EOF, an error, or nothing there with
 * MSG_DONTWAIT) or it was cut short; fds that came are closed then.
 */
static int
sbx_recvtag(int sock, int flags, char *tag, int *fds, int max)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * SANDBOX_MAXLISTEN)];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;
	ssize_t		 r;
	int		 got = 0, n, i;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = tag;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	while ((r = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC)) == -1 &&
	    errno == EINTR)
		;
	for (c = r > 0 ? CMSG_FIRSTHDR(&msg) : NULL; c != NULL;
	    c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int	 fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (got < max)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	if (r != 1 || (msg.msg_flags & MSG_CTRUNC)) {
		while (got > 0)
			close(fds[--got]);
		return -1;
	}
	return got;
}

/*
 * Egress endpoints: lo up, the literal addresses on it, one listening
 * socket per allowed destination, all handed to the parent.  Pid 1
 * keeps none of them: it accepts nothing and forwards nothing.
 */
static void
sbx_net(struct sbx_plan *pl)
{
	const struct sandbox_spec *spec = pl->spec;
	int	 fds[SANDBOX_MAXLISTEN], i, one = 1;

	sbx_lo_up(pl);
	for (i = 0; i < spec->nlisten; i++)
		if (spec->listen[i].addlo)
			sbx_lo_addr(pl, &spec->listen[i].addr);
	for (i = 0; i < spec->nlisten; i++) {
		if ((fds[i] = socket(spec->listen[i].addr.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			sbx_fail(pl->errfd, "egress socket:");
		if (spec->listen[i].addr.ss_family == AF_INET6 &&
		    setsockopt(fds[i], IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one)) == -1)
			sbx_fail(pl->errfd, "egress socket v6only:");
		if (bind(fds[i], (const struct sockaddr *)&spec->listen[i].addr,
		    spec->listen[i].addrlen) == -1)
			sbx_fail(pl->errfd, "bind egress endpoint %d:", i);
		if (listen(fds[i], 64) == -1)
			sbx_fail(pl->errfd, "listen egress endpoint %d:", i);
	}
	/* In one message, tagged 'L'. */
	if (sbx_sendtag(pl->sock, 'L', fds, spec->nlisten) == -1)
		sbx_fail(pl->errfd, "send egress listeners:");
	for (i = 0; i < spec->nlisten; i++)
		close(fds[i]);
}

/*
 * The parent creates the attempt's cgroups while pid 1 builds its view
 * and sends "G" with their cgroup.procs files open for writing: pid 1
 * joins every one before anything of the agent exists.  Anything else
 * (EOF) means the parent gave up on this sandbox.
 */
static void
sbx_await_cgroups(struct sbx_plan *pl)
{
	int	 fds[SANDBOX_MAXCG], n, i;
	char	 tag = 0;

	if ((n = sbx_recvtag(pl->sock, 0, &tag, fds, SANDBOX_MAXCG)) == -1 ||
	    tag != 'G')
		_exit(127);
	if (n != pl->ncgroups)
		sbx_fail(pl->errfd, "pid 1 got %d of %d cgroups", n,
		    pl->ncgroups);
	for (i = 0; i < n; i++) {
		if (write(fds[i], "0", 1) != 1)
			sbx_fail(pl->errfd, "join cgroup %d:", i);
		close(fds[i]);
	}
}

static __dead void
sbx_pid1(struct sbx_plan *pl)
{
	struct pollfd	 pfd = { pl->sock, POLLIN, 0 };
	pid_t		 agent;

	/* Die with the parent; if it died already, the socket says so. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		sbx_fail(pl->errfd, "pdeathsig:");
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)))
		_exit(127);
	if (pl->netfd != -1 && (setns(pl->netfd, CLONE_NEWNET) == -1 ||
	    setns(pl->ipcfd, CLONE_NEWIPC) == -1))
		sbx_fail(pl->errfd, "enter the pooled namespaces:");
	if (sethostname(pl->spec->id, strlen(pl->spec->id)) == -1)
		sbx_fail(pl->errfd, "sethostname:");
	if (pl->spec->nlisten > 0)
		sbx_net(pl);
	sbx_mounts(pl);
	sbx_await_cgroups(pl);
	/* Rooted at the attempt's cgroups: after the move, not before. */
	if (unshare(CLONE_NEWCGROUP) == -1)
		sbx_fail(pl->errfd, "cgroup namespace:");

	/*
	 * vfork: pid 1 has nothing to do until the agent's execve, and
	 * sharing the memory until then saves copying it.  The agent
	 * never returns from sbx_agent; it execs or _exits.
	 */
	if ((agent = vfork()) == -1)
		sbx_fail(pl->errfd, "fork agent:");
	if (agent == 0)
		sbx_agent(pl, pl->errfd);
	/*
	 * The parent reads the error pipe itself: EOF once the agent's
	 * execve closed the last write end.  Pid 1 keeps only the socket:
	 * it runs nothing and holds nothing.
	 */
	if (dup2(pl->sock, 0) == -1)
		_exit(127);
	syscall(SYS_close_range, 1, ~0U, 0);
	sbx_reap(0, agent);
}

/*
 * The pathname unix sockets bound in the host's network namespace, read
 * by the parent before the clone: each line of /proc/net/unix ends in
 * the path, if any.  Not an error if it cannot be read: /run and /tmp
 * are covered anyway.
 */
static void
sbx_plan_socks(struct sbx_plan *pl)
{
	struct stat	 st;
	FILE		*f;
	char		*line = NULL, *p, path[PATH_MAX];
	size_t		 sz = 0;
	int		 i;

	if ((f = fopen("/proc/net/unix", "re")) == NULL)
		return;
	while (getline(&line, &sz, f) != -1 && pl->nsocks < SBX_MAXSOCKS) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strrchr(line, ' ')) == NULL || p[1] != '/')
			continue;
		p++;
		if (strncmp(p, "/run/", 5) == 0 || strncmp(p, "/tmp/", 5) == 0 ||
		    sbx_below(p, pl->tree) != NULL)
			continue;	/* covered whole, or the agent's own */
		if (lstat(p, &st) == -1 || !S_ISSOCK(st.st_mode) ||
		    realpath(p, path) == NULL)
			continue;	/* another mount namespace's, or gone */
		for (i = 0; i < pl->nsocks; i++)
			if (strcmp(pl->socks[i], path) == 0)
				break;
		if (i < pl->nsocks)
			continue;
		if (pl->nsocks % 16 == 0) {
			void *n = reallocarray(pl->socks, pl->nsocks + 16,
			    sizeof(*pl->socks));

			if (n == NULL)
				break;
			pl->socks = n;
		}
		strlcpy(pl->socks[pl->nsocks++], path, PATH_MAX);
	}
	free(line);
	fclose(f);
}

/* Resolve the tree and the masks while errors can still be returned. */
static int
sbx_plan(struct sbx_plan *pl, const struct sandbox_spec *spec, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX];
	int	 n;

	memset(pl, 0, sizeof(*pl));
	pl->spec = spec;
	if (spec->tree == NULL || spec->tree[0] != '/' ||
	    realpath(spec->tree, pl->tree) == NULL) {
		snprintf(err, errlen, "tree %s: %s", spec->tree ? spec->tree :
		    "(null)", spec->tree && spec->tree[0] == '/' ?
		    strerror(errno) : "not an absolute path");
		return -1;
	}
	if (strcmp(pl->tree, "/") == 0) {
		snprintf(err, errlen, "tree may not be /");
		return -1;
	}
	if (spec->argv == NULL || spec->argv[0] == NULL ||
	    spec->argv[0][0] != '/' || spec->env == NULL) {
		snprintf(err, errlen, "argv[0] must be an absolute path");
		return -1;
	}
	if (spec->uid == 0 || spec->gid == 0) {
		snprintf(err, errlen, "the agent may not run as root");
		return -1;
	}
	if (spec->nlisten < 0 || spec->nlisten > SANDBOX_MAXLISTEN ||
	    (spec->nlisten > 0 && spec->listen == NULL)) {
		snprintf(err, errlen, "more than %d egress endpoints",
		    SANDBOX_MAXLISTEN);
		return -1;
	}
	for (n = 0; spec->hide != NULL && spec->hide[n] != NULL; n++)
		;
	if (n > 0 && (pl->hide = calloc(n, sizeof(*pl->hide))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return -1;
	}
	for (n = 0; spec->hide != NULL && spec->hide[n] != NULL; n++) {
		if (realpath(spec->hide[n], path) == NULL) {
			if (errno == ENOENT)
				continue;	/* nothing there to see */
			snprintf(err, errlen, "hide %s: %s", spec->hide[n],
			    strerror(errno));
			free(pl->hide);
			return -1;
		}
		if (strcmp(path, "/") == 0 || strcmp(path, pl->tree) == 0) {
			snprintf(err, errlen, "hide %s: would hide %s",
			    spec->hide[n], path);
			free(pl->hide);
			return -1;
		}
		strlcpy(pl->hide[pl->nhide++], path, PATH_MAX);
	}
	sbx_plan_socks(pl);
	return 0;
}

/*
 * Wait for the error pipe: EOF when the agent's execve succeeded (its
 * close-on-exec end was the last one), else the reason it failed.
 */
static int
sbx_await(int fd, char *err, size_t errlen)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	ssize_t		 n;
	int		 rc;

	while ((rc = poll(&pfd, 1, SBX_SETUP_MS)) == -1 && errno == EINTR)
		;
	if (rc == 0) {
		snprintf(err, errlen, "sandbox setup timed out");
		return -1;
	}
	while ((n = read(fd, err, errlen - 1)) == -1 && errno == EINTR)
		;
	if (n == 0)
		return 0;
	if (n < 0)
		snprintf(err, errlen, "read error pipe: %s", strerror(errno));
	else
		err[n] = '\0';
	return -1;
}

/*
 * Pid 1's listening sockets: queued before it forked the agent, so
 * here by the time the agent's execve is known.
 */
static int
sbx_recvfds(struct sandbox *sb, int n, char *err, size_t errlen)
{
	char	 tag = 0;
	int	 got;

	got = sbx_recvtag(sb->fd, MSG_DONTWAIT, &tag, sb->lfd,
	    SANDBOX_MAXLISTEN);
	if (got >= 0)
		sb->nlfd = got;
	if (got != n || tag != 'L') {
		snprintf(err, errlen, "egress: pid 1 sent %d of %d listening "
		    "sockets", got < 0 ? 0 : got, n);
		return -1;
	}
	return 0;
}

/*
 * The parent's half of the cgroups, done while pid 1 builds its view:
 * create them with the limits and hand pid 1 their cgroup.procs.  (A
 * process writing "0", itself, is much cheaper to move than one the
 * parent names by pid: that takes a lock every fork must wait for.)
 */
static int
sbx_cgroups(const struct sandbox_spec *spec, struct sandbox *sb, char *err,
    size_t errlen)
{
	int	 fds[SANDBOX_MAXCG], i, rc;

	if (cgroup_create(sb, spec, err, errlen) == -1 ||
	    cgroup_open_procs(sb, fds, err, errlen) == -1)
		return -1;
	if ((rc = sbx_sendtag(sb->fd, 'G', fds, sb->ncgroups)) == -1)
		snprintf(err, errlen, "send pid 1 its cgroups: %s",
		    strerror(errno));
	for (i = 0; i < sb->ncgroups; i++)
		close(fds[i]);
	return rc;
}

int
sandbox_spawn(const struct sandbox_spec *spec, struct sandbox *sb,
    char *err, size_t errlen)
{
	struct sbx_plan	 pl;
	struct sbx_nsfds ns;
	char		 derr[256];
	int		 sv[2], ep[2], st, rc, pooled;
	pid_t		 pid;

	if (sbx_seccomp_build(err, errlen) == -1)
		return -1;
	sbx_exec_resolve();
	if (sandbox_cgroup_paths(spec->id, sb) == -1) {
		snprintf(err, errlen, "attempt id %s: bad, or no cgroups",
		    spec->id ? spec->id : "(null)");
		return -1;
	}
	if (sbx_plan(&pl, spec, err, errlen) == -1)
		return -1;
	sb->uid = spec->uid;
	sb->gid = spec->gid;
	strlcpy(sb->tree, pl.tree, sizeof(sb->tree));
	sb->nports = sbx_ports(spec, sb->ports);
	pl.ncgroups = sb->ncgroups;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail_plan;
	}
	if (pipe2(ep, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto fail_plan;
	}
	pl.sock = sv[1];
	pl.errfd = ep[1];
	pooled = sbx_pool_take(&ns);
	pl.netfd = pooled ? ns.net : -1;
	pl.ipcfd = pooled ? ns.ipc : -1;
	/* Like fork(2), with the namespaces: the child runs on a copy. */
	pid = (pid_t)syscall(SYS_clone, SBX_NSFLAGS | (pooled ? 0 :
	    SBX_POOLNS) | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0) {
		close(sv[0]);
		close(ep[0]);
		sbx_pid1(&pl);
	}
	/* Pid 1 holds the pooled namespaces now, and nobody else. */
	if (pooled) {
		close(ns.net);
		close(ns.ipc);
	}
	close(sv[1]);
	close(ep[1]);
	if (pid == -1) {
		snprintf(err, errlen, "clone: %s", strerror(errno));
		close(sv[0]);
		close(ep[0]);
		goto fail_plan;
	}
	free(pl.hide);
	free(pl.socks);
	sb->pid = pid;
	sb->fd = sv[0];
	rc = sbx_cgroups(spec, sb, err, errlen);
	if (rc == 0)
		rc = sbx_await(ep[0], err, errlen);
	close(ep[0]);
	if (rc == 0 && (spec->nlisten == 0 ||
	    sbx_recvfds(sb, spec->nlisten, err, errlen) == 0))
		return 0;

	/* Leave nothing behind: the namespace dies with its pid 1. */
	cgroup_kill(sb);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	sb->pid = -1;
	if (sandbox_destroy(sb, derr, sizeof(derr)) == -1)
		snprintf(err + strlen(err), errlen - strlen(err), "; %s", derr);
	return -1;

 fail_plan:
	free(pl.hide);
	free(pl.socks);
	return -1;
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
		if (msg[0] == 'S' && n == 1 + (ssize_t)sizeof(st)) {
			memcpy(&st, msg + 1, sizeof(st));
			sb->agent_status = st;
		}
	}
	return sb->agent_status != -1 ? sb->agent_status : status;
}

int
sandbox_kill(struct sandbox *sb)
{
	return cgroup_kill(sb);
}

/*
 * For the operator's shell (shell.c): what a spawn prepares once per
 * parent, and the agent's confinement applied to the calling process.
 */
int
sandbox_prepare(char *err, size_t errlen)
{
	if (sbx_seccomp_build(err, errlen) == -1)
		return -1;
	sbx_exec_resolve();
	return 0;
}

void
sandbox_confine(const struct sandbox *sb, const struct sandbox_spec *spec,
    int fd)
{
	struct sandbox_spec	 as = *spec;

	as.uid = sb->uid;
	as.gid = sb->gid;
	sbx_confine(&as, sb->tree, sb->ports, sb->nports, fd);
}
