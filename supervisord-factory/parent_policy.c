/*
 * The parent's own policy.  It is root and must mount, unshare, setns
 * and change uids for the sandboxes it starts, so pledge(2) as the
 * children have it does not fit.  What it can do without, it drops: a
 * seccomp denylist that every process it forks inherits too (the
 * agents' own filters stack on top of it).  Refused calls fail with
 * EPERM rather than killing: the same answer the agent's filter gives
 * for them, and stacked filters keep the strictest action.
 */
#include <sys/types.h>
#include <sys/prctl.h>

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "factoryd.h"
#include "log.h"

static const char *const parent_denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev",	/* other processes' memory */
	"kexec_load", "kexec_file_load", "reboot",		/* the host itself */
	"init_module", "finit_module", "delete_module",		/* the kernel */
	"bpf", "perf_event_open", "userfaultfd",		/* kernel attack surface */
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",			/* kernel keyrings */
	"swapon", "swapoff", "acct", "quotactl",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"iopl", "ioperm", "open_by_handle_at", "lookup_dcookie",
	"vhangup", "syslog",
};
#define NDENIED	(sizeof(parent_denied) / sizeof(parent_denied[0]))

static char	 parent_policy_text[256];

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
	    "seccomp: denylist, %zu syscalls refused with EPERM, inherited "
	    "by every child and sandbox", n);
	return (0);
}

const char *
parent_policy_describe(void)
{
	return (parent_policy_text[0] != '\0' ? parent_policy_text :
	    "no pledge: root supervisor");
}
