/*
 * The parent's own policy.  It is root and must mount, unshare, setns
 * and change uids for the sandboxes it starts, so pledge(2) as the
 * children have it does not fit.  What it can do without, it drops: a
 * seccomp denylist that every process it forks inherits too (the
 * agents' own filters stack on top of it).  Refused calls fail with
 * EPERM rather than killing: the same answer the agent's filter gives
 * for them, and stacked filters keep the strictest action.
 *
 * No process of factory makes a set-user-id or set-group-id file: the
 * image, setup and collect strip or refuse those bits.  So a mode with
 * one, in any call whose mode a filter can read (the chmod family and
 * the calls that create), is refused with EPERM for the parent, every
 * child and every sandbox: what systemd's RestrictSUIDSGID= gives a
 * unit, without its price, openat2(2) refused whole (beneath.h).  An
 * openat2 with O_CREAT carries its mode behind a pointer and is not
 * covered; only the parent's own code and the children's pledges,
 * which answer it with ENOSYS, could make one: no agent could keep such
 * a file anyway, as its tree and /tmp are mounted nosuid.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "factoryd.h"
#include "log.h"

static const char *const parent_denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev",	/* other processes' memory */
	"kexec_load", "kexec_file_load", "reboot",		/* the host itself */
	"init_module", "finit_module", "delete_module",		/* the kernel */
	"perf_event_open", "userfaultfd",			/* kernel attack surface */
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",			/* kernel keyrings */
	"swapon", "swapoff", "acct", "quotactl",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"iopl", "ioperm", "open_by_handle_at", "lookup_dcookie",
	"vhangup", "syslog",
};
#define NDENIED	(sizeof(parent_denied) / sizeof(parent_denied[0]))

/*
 * bpf(2): refused but for loading a program and attaching it, which the
 * sandboxes' bind rule needs (bindrule.c): no maps, no reading of
 * programs, no BTF, no links, no other program's detaching.
 */
#define PARENT_BPF_LOAD		5	/* BPF_PROG_LOAD */
#define PARENT_BPF_ATTACH	8	/* BPF_PROG_ATTACH */

static int
parent_bpf_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	int	 nr, rc;

	if ((nr = seccomp_syscall_resolve_name("bpf")) == __NR_SCMP_ERROR)
		return (0);	/* not on this architecture */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
	    SCMP_A0(SCMP_CMP_LT, PARENT_BPF_LOAD))) < 0 ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
	    SCMP_A0(SCMP_CMP_EQ, PARENT_BPF_LOAD + 1))) < 0 ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
	    SCMP_A0(SCMP_CMP_EQ, PARENT_BPF_LOAD + 2))) < 0 ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
	    SCMP_A0(SCMP_CMP_GT, PARENT_BPF_ATTACH))) < 0) {
		snprintf(err, errlen, "seccomp rule bpf: %s", strerror(-rc));
		return (-1);
	}
	return (0);
}

/* Calls with a mode, and the argument that holds it. */
static const struct {
	const char	*name;
	int		 nr;		/* x86_64's, where libseccomp lacks it */
	unsigned int	 arg;
} parent_modes[] = {
	{ "chmod", -1, 1 }, { "fchmod", -1, 1 }, { "fchmodat", -1, 2 },
	{ "fchmodat2", 452, 2 }, { "mkdir", -1, 1 }, { "mkdirat", -1, 2 },
	{ "mknod", -1, 1 }, { "mknodat", -1, 2 }, { "creat", -1, 1 },
};
#define NMODES	(sizeof(parent_modes) / sizeof(parent_modes[0]))

/* O_TMPFILE without O_DIRECTORY: the bit that makes it a creation. */
#define PARENT_TMPFILE	(O_TMPFILE & ~O_DIRECTORY)

static char	 parent_policy_text[256];

static int
parent_sysnr(const char *name, int nr)
{
	int	 n;

	if ((n = seccomp_syscall_resolve_name(name)) != __NR_SCMP_ERROR)
		return (n);
#ifdef __x86_64__
	return (nr);
#else
	return (-1);
#endif
}

/* open(2) and openat(2) making a file (O_CREAT or O_TMPFILE) with bit. */
static int
parent_setid_open(scmp_filter_ctx ctx, unsigned long bit)
{
	static const unsigned long makes[] = { O_CREAT, PARENT_TMPFILE };
	size_t	 i;
	int	 rc;

	for (i = 0; i < 2; i++) {
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(open), 2, SCMP_A1(SCMP_CMP_MASKED_EQ, makes[i],
		    makes[i]), SCMP_A2(SCMP_CMP_MASKED_EQ, bit, bit))) < 0 ||
		    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(openat), 2, SCMP_A2(SCMP_CMP_MASKED_EQ, makes[i],
		    makes[i]), SCMP_A3(SCMP_CMP_MASKED_EQ, bit, bit))) < 0)
			return (rc);
	}
	return (0);
}

/* A set-user-id or set-group-id bit in a mode: EPERM. */
static int
parent_setid_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	static const unsigned long bits[] = { S_ISUID, S_ISGID };
	size_t	 b, i;
	int	 nr, rc;

	for (b = 0; b < 2; b++) {
		for (i = 0; i < NMODES; i++) {
			if ((nr = parent_sysnr(parent_modes[i].name,
			    parent_modes[i].nr)) < 0)
				continue;	/* not on this architecture */
			if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
			    nr, 1, SCMP_CMP64(parent_modes[i].arg,
			    SCMP_CMP_MASKED_EQ, bits[b], bits[b]))) < 0) {
				snprintf(err, errlen, "seccomp rule %s: %s",
				    parent_modes[i].name, strerror(-rc));
				return (-1);
			}
		}
		if ((rc = parent_setid_open(ctx, bits[b])) < 0) {
			snprintf(err, errlen, "seccomp rule open: %s",
			    strerror(-rc));
			return (-1);
		}
	}
	return (0);
}

int
parent_policy_apply(char *err, size_t errlen)
{
	scmp_filter_ctx	 ctx;
	size_t		 i, n = 0;
	int		 nr, rc;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		snprintf(err, errlen, "seccomp_init failed");
		return (-1);
	}
	for (i = 0; i < NDENIED; i++) {
		if ((nr = seccomp_syscall_resolve_name(parent_denied[i])) ==
		    __NR_SCMP_ERROR)
			continue;	/* not on this architecture */
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr,
		    0)) < 0) {
			snprintf(err, errlen, "seccomp rule %s: %s",
			    parent_denied[i], strerror(-rc));
			seccomp_release(ctx);
			return (-1);
		}
		n++;
	}
	if (parent_bpf_rules(ctx, err, errlen) == -1 ||
	    parent_setid_rules(ctx, err, errlen) == -1) {
		seccomp_release(ctx);
		return (-1);
	}
	/* Other architectures' calls never reach a parent built for one. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0 || (rc = seccomp_load(ctx)) < 0) {
		snprintf(err, errlen, "seccomp load: %s", strerror(-rc));
		seccomp_release(ctx);
		return (-1);
	}
	seccomp_release(ctx);
	snprintf(parent_policy_text, sizeof(parent_policy_text),
	    "no pledge (root: mounts, namespaces, uids for the sandboxes)\n"
	    "seccomp: denylist, %zu syscalls refused with EPERM, bpf but "
	    "for loading and attaching a program, and set-id modes, "
	    "inherited by every child and sandbox", n);
	return (0);
}

const char *
parent_policy_describe(void)
{
	return (parent_policy_text[0] != '\0' ? parent_policy_text :
	    "no pledge: root supervisor");
}
