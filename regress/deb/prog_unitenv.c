/*
 * prog_unitenv: run a program under the seccomp filters systemd 252
 * installs for the unit's sandboxing settings, then exec it.  No
 * systemd here is PID 1, so regress/deb and regress/unitenv start
 * factoryd through this instead: what a setting refuses under systemd,
 * it refuses here, so a daemon that cannot live with a setting fails
 * here first.
 *
 * usage: prog_unitenv [-HlrS] [-a families] [-e errno] [-f filter]
 *	      -- program [arg ...]
 *	-S		RestrictSUIDSGID=yes
 *	-H		ProtectHostname=yes
 *	-l		LockPersonality=yes
 *	-r		RestrictRealtime=yes
 *	-f "~@a @b x"	SystemCallFilter= (a deny list: "~" first)
 *	-e EPERM	SystemCallErrorNumber=
 *	-a "AF_UNIX ..." RestrictAddressFamilies= (an allow list)
 *
 * The groups are systemd 252's, as `systemd-analyze syscall-filter`
 * lists them on Debian 12 (names this libseccomp does not know on
 * this architecture are skipped, as systemd skips them).  A group not
 * in the table is an error: the unit named something this emulation
 * does not know, and a test must not pass by ignoring it.  Every filter
 * kills a call of another architecture (libseccomp's default), as
 * SystemCallArchitectures=native does; no_new_privs is always set.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE	6
#endif

static const struct {
	const char	*name;
	const char	*calls;
} groups[] = {
	{ "@clock", "adjtimex clock_adjtime clock_adjtime64 clock_settime "
	    "clock_settime64 settimeofday" },
	{ "@cpu-emulation", "modify_ldt subpage_prot switch_endian vm86 "
	    "vm86old" },
	{ "@debug", "lookup_dcookie perf_event_open pidfd_getfd ptrace "
	    "rtas s390_runtime_instr sys_debug_setcontext" },
	{ "@module", "delete_module finit_module init_module" },
	{ "@obsolete", "_sysctl afs_syscall bdflush break create_module "
	    "ftime get_kernel_syms getpmsg gtty idle lock mpx prof profil "
	    "putpmsg query_module security sgetmask ssetmask stime stty "
	    "sysfs tuxcall ulimit uselib ustat vserver" },
	{ "@raw-io", "ioperm iopl pciconfig_iobase pciconfig_read "
	    "pciconfig_write s390_pci_mmio_read s390_pci_mmio_write" },
	{ "@reboot", "kexec_file_load kexec_load reboot" },
	{ "@swap", "swapoff swapon" },
};

static const struct {
	const char	*name;
	int		 value;
} families[] = {
	{ "AF_UNIX", AF_UNIX }, { "AF_INET", AF_INET },
	{ "AF_INET6", AF_INET6 }, { "AF_NETLINK", AF_NETLINK },
	{ "AF_PACKET", AF_PACKET },
};

static void __attribute__((__noreturn__))
die(const char *what, int rc)
{
	fprintf(stderr, "prog_unitenv: %s: %s\n", what, strerror(rc));
	exit(2);
}

static void
add(scmp_filter_ctx ctx, uint32_t act, const char *name, unsigned int n,
    const struct scmp_arg_cmp *cmp)
{
	int	 nr, rc;

	if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR)
		return;		/* not on this architecture */
	if ((rc = seccomp_rule_add_array(ctx, act, nr, n, cmp)) < 0 &&
	    rc != -EDOM)
		die(name, -rc);
}

static scmp_filter_ctx
ctx_new(void)
{
	scmp_filter_ctx	 ctx;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		die("seccomp_init", ENOMEM);
	return (ctx);
}

static void
ctx_load(scmp_filter_ctx ctx)
{
	int	 rc;

	if ((rc = seccomp_load(ctx)) < 0)
		die("seccomp_load", -rc);
	seccomp_release(ctx);
}

/*
 * RestrictSUIDSGID=yes: a set-user-id or set-group-id bit in the mode
 * of any call that takes one refuses the call (EPERM); openat2(2), whose
 * mode a filter cannot read, is refused whole (ENOSYS).
 */
static void
restrict_sxid(void)
{
	static const struct { const char *name; unsigned int arg; } m[] = {
		{ "chmod", 1 }, { "fchmod", 1 }, { "fchmodat", 2 },
		{ "fchmodat2", 2 }, { "mkdir", 1 }, { "mkdirat", 2 },
		{ "mknod", 1 }, { "mknodat", 2 }, { "creat", 1 },
	};
	static const unsigned long bits[] = { S_ISUID, S_ISGID };
	scmp_filter_ctx		 ctx = ctx_new();
	struct scmp_arg_cmp	 c[2];
	size_t			 i, b;

	for (b = 0; b < 2; b++) {
		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
			c[0] = SCMP_CMP64(m[i].arg, SCMP_CMP_MASKED_EQ,
			    bits[b], bits[b]);
			add(ctx, SCMP_ACT_ERRNO(EPERM), m[i].name, 1, c);
		}
		c[0] = SCMP_CMP64(1, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT);
		c[1] = SCMP_CMP64(2, SCMP_CMP_MASKED_EQ, bits[b], bits[b]);
		add(ctx, SCMP_ACT_ERRNO(EPERM), "open", 2, c);
		c[0] = SCMP_CMP64(2, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT);
		c[1] = SCMP_CMP64(3, SCMP_CMP_MASKED_EQ, bits[b], bits[b]);
		add(ctx, SCMP_ACT_ERRNO(EPERM), "openat", 2, c);
	}
	add(ctx, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL);
	ctx_load(ctx);
}

/* ProtectHostname=yes: a UTS namespace of its own, never renamed. */
static void
protect_hostname(void)
{
	scmp_filter_ctx	 ctx;

	if (unshare(CLONE_NEWUTS) == -1)
		die("unshare(CLONE_NEWUTS)", errno);
	ctx = ctx_new();
	add(ctx, SCMP_ACT_ERRNO(EPERM), "sethostname", 0, NULL);
	add(ctx, SCMP_ACT_ERRNO(EPERM), "setdomainname", 0, NULL);
	ctx_load(ctx);
}

/*
 * LockPersonality=yes: personality(2) only to keep the one it has
 * (PER_LINUX), as systemd 252's single rule has it.
 */
static void
lock_personality(void)
{
	scmp_filter_ctx		 ctx = ctx_new();
	struct scmp_arg_cmp	 c;

	c = SCMP_CMP64(0, SCMP_CMP_NE, 0);
	add(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, &c);
	ctx_load(ctx);
}

/* RestrictRealtime=yes: no real-time scheduling class. */
static void
restrict_realtime(void)
{
	static const unsigned long rt[] = { SCHED_FIFO, SCHED_RR,
	    SCHED_DEADLINE };
	scmp_filter_ctx		 ctx = ctx_new();
	struct scmp_arg_cmp	 c;
	size_t			 i;

	for (i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
		c = SCMP_CMP64(1, SCMP_CMP_MASKED_EQ, 0xff, rt[i]);
		add(ctx, SCMP_ACT_ERRNO(EPERM), "sched_setscheduler", 1, &c);
	}
	ctx_load(ctx);
}

/* SystemCallFilter=~...: each group's calls (or a call) answer errno. */
static void
syscall_filter(const char *spec, int err)
{
	scmp_filter_ctx	 ctx;
	char		*s, *w, *c, *calls, *save, *save2;
	size_t		 i;

	if (spec[0] != '~') {
		fprintf(stderr, "prog_unitenv: SystemCallFilter=%s: only a "
		    "deny list (~) is emulated\n", spec);
		exit(2);
	}
	ctx = ctx_new();
	if ((s = strdup(spec + 1)) == NULL)
		die("strdup", errno);
	for (w = strtok_r(s, " ", &save); w != NULL;
	    w = strtok_r(NULL, " ", &save)) {
		if (w[0] != '@') {
			add(ctx, SCMP_ACT_ERRNO(err), w, 0, NULL);
			continue;
		}
		for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
			if (strcmp(groups[i].name, w) == 0)
				break;
		if (i == sizeof(groups) / sizeof(groups[0])) {
			fprintf(stderr, "prog_unitenv: %s: a group this "
			    "emulation does not know\n", w);
			exit(2);
		}
		if ((calls = strdup(groups[i].calls)) == NULL)
			die("strdup", errno);
		for (c = strtok_r(calls, " ", &save2); c != NULL;
		    c = strtok_r(NULL, " ", &save2))
			add(ctx, SCMP_ACT_ERRNO(err), c, 0, NULL);
		free(calls);
	}
	free(s);
	ctx_load(ctx);
}

/*
 * RestrictAddressFamilies=: socket(2) of a family not listed fails with
 * EAFNOSUPPORT (one rule per family: a rule holds one test per
 * argument).
 */
static void
restrict_families(const char *spec)
{
	scmp_filter_ctx		 ctx = ctx_new();
	struct scmp_arg_cmp	 c;
	char			*s, *w, *save, allowed[AF_MAX];
	size_t			 i;
	int			 af;

	memset(allowed, 0, sizeof(allowed));
	if ((s = strdup(spec)) == NULL)
		die("strdup", errno);
	for (w = strtok_r(s, " ", &save); w != NULL;
	    w = strtok_r(NULL, " ", &save)) {
		for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
			if (strcmp(families[i].name, w) == 0)
				break;
		if (i == sizeof(families) / sizeof(families[0])) {
			fprintf(stderr, "prog_unitenv: %s: not emulated\n", w);
			exit(2);
		}
		allowed[families[i].value] = 1;
	}
	free(s);
	for (af = 0; af < AF_MAX; af++) {
		if (allowed[af])
			continue;
		c = SCMP_CMP64(0, SCMP_CMP_EQ, af);
		add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &c);
	}
	c = SCMP_CMP64(0, SCMP_CMP_GE, AF_MAX);
	add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &c);
	ctx_load(ctx);
}

static int
errno_value(const char *name)
{
	if (strcmp(name, "EPERM") == 0)
		return (EPERM);
	if (strcmp(name, "EACCES") == 0)
		return (EACCES);
	if (strcmp(name, "ENOSYS") == 0)
		return (ENOSYS);
	fprintf(stderr, "prog_unitenv: %s: not emulated\n", name);
	exit(2);
}

int
main(int argc, char *argv[])
{
	const char	*filter = NULL, *fams = NULL;
	int		 ch, err = -1, sxid = 0, host = 0, pers = 0, rt = 0;

	while ((ch = getopt(argc, argv, "a:e:f:HlrS")) != -1) {
		switch (ch) {
		case 'a':
			fams = optarg;
			break;
		case 'e':
			err = errno_value(optarg);
			break;
		case 'f':
			filter = optarg;
			break;
		case 'H':
			host = 1;
			break;
		case 'l':
			pers = 1;
			break;
		case 'r':
			rt = 1;
			break;
		case 'S':
			sxid = 1;
			break;
		default:
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		goto usage;
	/* Root may load filters without it; systemd's units do so too. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		die("no_new_privs", errno);
	if (host)
		protect_hostname();
	if (sxid)
		restrict_sxid();
	if (pers)
		lock_personality();
	if (rt)
		restrict_realtime();
	if (fams != NULL)
		restrict_families(fams);
	if (filter != NULL) {
		if (err == -1) {
			fprintf(stderr, "prog_unitenv: a filter without "
			    "-e kills; not emulated\n");
			exit(2);
		}
		syscall_filter(filter, err);
	}
	execvp(argv[0], argv);
	die(argv[0], errno);
 usage:
	fprintf(stderr, "usage: prog_unitenv [-HlrS] [-a families] "
	    "[-e errno] [-f filter] -- program [arg ...]\n");
	return (2);
}
