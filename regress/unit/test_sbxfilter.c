/*
 * The agent's seccomp filter is one program (sandbox.c): the argument
 * checks (personality, socket families) first, libseccomp's denylist
 * after them.  It used to be three filters loaded one after the other.
 * Run here by a small classic BPF interpreter:
 *
 *	every call the merged filter is asked about (every syscall
 *	number, x86_64, x32 and i386, with arguments that hit each
 *	rule) gets the verdict the three filters gave together, by the
 *	kernel's rule (the most severe action wins; of equal ones, the
 *	filter loaded last);
 *	the refusals the sandbox promises, one by one: vsock, packet,
 *	netlink other than route, socketpair other than unix,
 *	personality other than PER_LINUX and the query, executable
 *	memfds, execveat of an fd, namespace flags of clone, clone3,
 *	TIOCSTI and TIOCLINUX (also with high bits), module and kexec
 *	calls, x32 numbers and other architectures.
 *
 * The first two filters are kept below as they were loaded (child.c,
 * before the merge): the reference.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../supervisord-factory/sandbox.h"
#include "../../sandbox/sbx.h"

#define A0LO	(offsetof(struct seccomp_data, args[0]))
#define A2LO	(offsetof(struct seccomp_data, args[2]))
#define EAFNO	(SECCOMP_RET_ERRNO | EAFNOSUPPORT)
#define EPROTO_	(SECCOMP_RET_ERRNO | EPROTONOSUPPORT)
#define ALLOW	SECCOMP_RET_ALLOW
#define KILL	SECCOMP_RET_KILL_PROCESS
#define ERR(e)	(SECCOMP_RET_ERRNO | (e))
#define X32	0x40000000U

/* The persona filter, loaded first, without FLAG_LOG. */
static struct sock_filter old_persona[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data,
	    arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 5),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, A0LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffU, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};

/* The family filter, loaded second. */
static struct sock_filter old_family[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data,
	    arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 12),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 0, 9),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, A0LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 7, 8),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, A0LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, A2LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NETLINK_ROUTE, 0, 2),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, EAFNO),
	BPF_STMT(BPF_RET | BPF_K, EPROTO_),
};

/*
 * Classic BPF as seccomp runs it: A, X, 16 words of scratch, loads
 * from struct seccomp_data.  Anything else fails the test (the
 * kernel's verifier would refuse what this does not know).
 */
static uint32_t
run(const struct sock_filter *f, size_t n, const struct seccomp_data *d)
{
	uint32_t	 a = 0, x = 0, mem[BPF_MEMWORDS], w;
	size_t		 pc;
	int		 jump;

	memset(mem, 0, sizeof(mem));
	for (pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t src = BPF_SRC(i->code) == BPF_X ? x : i->k;

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (i->code == (BPF_LD | BPF_W | BPF_ABS)) {
				ck_assert_msg(i->k % 4 == 0 && i->k + 4 <=
				    sizeof(*d), "insn %zu: load at %u", pc,
				    i->k);
				memcpy(&w, (const char *)d + i->k, 4);
				a = w;
			} else if (i->code == (BPF_LD | BPF_IMM))
				a = i->k;
			else if (i->code == (BPF_LD | BPF_MEM) &&
			    i->k < BPF_MEMWORDS)
				a = mem[i->k];
			else
				ck_abort_msg("insn %zu: ld %#x", pc, i->code);
			break;
		case BPF_LDX:
			if (i->code == (BPF_LDX | BPF_IMM))
				x = i->k;
			else if (i->code == (BPF_LDX | BPF_MEM) &&
			    i->k < BPF_MEMWORDS)
				x = mem[i->k];
			else
				ck_abort_msg("insn %zu: ldx %#x", pc, i->code);
			break;
		case BPF_ST:
			ck_assert(i->k < BPF_MEMWORDS);
			mem[i->k] = a;
			break;
		case BPF_STX:
			ck_assert(i->k < BPF_MEMWORDS);
			mem[i->k] = x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_LSH: a <<= (src & 31); break;
			case BPF_RSH: a >>= (src & 31); break;
			case BPF_NEG: a = -a; break;
			default:
				ck_abort_msg("insn %zu: alu %#x", pc, i->code);
			}
			break;
		case BPF_JMP:
			if (BPF_OP(i->code) == BPF_JA) {
				pc += i->k;
				break;
			}
			switch (BPF_OP(i->code)) {
			case BPF_JEQ: jump = a == src; break;
			case BPF_JGT: jump = a > src; break;
			case BPF_JGE: jump = a >= src; break;
			case BPF_JSET: jump = (a & src) != 0; break;
			default:
				ck_abort_msg("insn %zu: jmp %#x", pc, i->code);
			}
			pc += jump ? i->jt : i->jf;
			break;
		case BPF_RET:
			return (BPF_RVAL(i->code) == BPF_A ? a : i->k);
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		}
	}
	ck_abort_msg("ran off the end of the program");
	return (0);
}

/* The kernel's choice among filters: the most severe; ties, the last. */
static uint32_t
verdict3(const struct seccomp_data *d)
{
	const struct sock_filter *f[3];
	size_t	 n[3];
	uint32_t ret = SECCOMP_RET_ALLOW, cur;
	int	 i;

	f[0] = old_persona;
	n[0] = sizeof(old_persona) / sizeof(old_persona[0]);
	f[1] = old_family;
	n[1] = sizeof(old_family) / sizeof(old_family[0]);
	f[2] = sandbox_prog.filter + SBX_ARGS_INSNS;	/* the denylist */
	n[2] = sandbox_prog.len - SBX_ARGS_INSNS;
	for (i = 2; i >= 0; i--) {
		cur = run(f[i], n[i], d);
		if ((int32_t)(cur & SECCOMP_RET_ACTION_FULL) <
		    (int32_t)(ret & SECCOMP_RET_ACTION_FULL))
			ret = cur;
	}
	return (ret);
}

static uint32_t
verdict1(const struct seccomp_data *d)
{
	return (run(sandbox_prog.filter, sandbox_prog.len, d));
}

static void
setup(void)
{
	char	 err[256];

	ck_assert_msg(sandbox_prepare(err, sizeof(err)) == 0, "%s", err);
	ck_assert(sandbox_prog.len > SBX_ARGS_INSNS &&
	    sandbox_prog.len <= SBX_BPF_MAX);
}

static void
data(struct seccomp_data *d, uint32_t arch, int nr, uint64_t a0, uint64_t a1,
    uint64_t a2, uint64_t a4)
{
	memset(d, 0, sizeof(*d));
	d->arch = arch;
	d->nr = nr;
	d->args[0] = a0;
	d->args[1] = a1;
	d->args[2] = a2;
	d->args[4] = a4;
}

/* Arguments that hit a rule, and a few that miss each. */
static const uint64_t a0s[] = {
	0, 1, 0xffffffffU, 0xffffffffffffffffULL, AF_UNIX, AF_INET, AF_INET6,
	AF_NETLINK, 40 /* AF_VSOCK */, AF_PACKET, 38 /* AF_ALG */,
	0x100000000ULL | 40, 0x100000000ULL | AF_UNIX, ADDR_NO_RANDOMIZE,
	READ_IMPLIES_EXEC, 0x100000000ULL, CLONE_NEWNS, CLONE_NEWUSER,
	CLONE_NEWNET | CLONE_VM, CLONE_NEWCGROUP, CLONE_VM | CLONE_FS | SIGCHLD,
};
static const uint64_t a1s[] = {
	0, 1, TIOCSTI, TIOCLINUX, 0xffffffff00000000ULL | TIOCSTI,
	SBX_MFD_EXEC, SBX_MFD_EXEC | 1, 0x0008 /* MFD_NOEXEC_SEAL */,
};
static const uint64_t a2s[] = {
	0, NETLINK_ROUTE, 9 /* NETLINK_AUDIT */, 0x100000000ULL, 6,
};
static const uint64_t a4s[] = { 0, AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW };

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* Every number, and the argument sets above for the ones with rules. */
START_TEST(test_same_as_three)
{
	const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386,
	    AUDIT_ARCH_AARCH64 };
	struct seccomp_data d;
	size_t	 ar, i0, i1, i2, i4;
	uint32_t v1, v3;
	long	 n = 0;
	int	 nr, base;

	for (ar = 0; ar < NELEM(arches); ar++)
		for (base = 0; base <= 1; base++)
			for (nr = 0; nr < 1024; nr++) {
				int	 x = base ? (int)(X32 | nr) : nr;

				for (i0 = 0; i0 < NELEM(a0s); i0++)
				for (i1 = 0; i1 < NELEM(a1s); i1++)
				for (i2 = 0; i2 < NELEM(a2s); i2++)
				for (i4 = 0; i4 < NELEM(a4s); i4++) {
					data(&d, arches[ar], x, a0s[i0],
					    a1s[i1], a2s[i2], a4s[i4]);
					v1 = verdict1(&d);
					v3 = verdict3(&d);
					ck_assert_msg(v1 == v3, "arch %#x nr %#x "
					    "args %#llx %#llx %#llx %#llx: one "
					    "filter %#x, three %#x", arches[ar],
					    (unsigned)x, (unsigned long long)
					    a0s[i0], (unsigned long long)a1s[i1],
					    (unsigned long long)a2s[i2],
					    (unsigned long long)a4s[i4], v1, v3);
					n++;
					/* Rule-less numbers: one set will do. */
					if (nr != SYS_clone && nr != SYS_ioctl &&
					    nr != SYS_socket && nr !=
					    SYS_socketpair && nr !=
					    SYS_personality && nr !=
					    SYS_memfd_create && nr !=
					    SYS_execveat)
						goto next;
				}
 next:
				;
			}
	ck_assert(n > 100000);
}
END_TEST

struct want {
	const char	*what;
	uint32_t	 arch;
	int		 nr;
	uint64_t	 a0, a1, a2, a4;
	uint32_t	 ret;
};

static const struct want wants[] = {
	{ "socket vsock", AUDIT_ARCH_X86_64, SYS_socket, 40, 1, 0, 0, EAFNO },
	{ "socket vsock high", AUDIT_ARCH_X86_64, SYS_socket,
	    0x100000000ULL | 40, 1, 0, 0, EAFNO },
	{ "socket packet", AUDIT_ARCH_X86_64, SYS_socket, AF_PACKET, 3, 0, 0,
	    EAFNO },
	{ "socket alg", AUDIT_ARCH_X86_64, SYS_socket, 38, 5, 0, 0, EAFNO },
	{ "socket netlink audit", AUDIT_ARCH_X86_64, SYS_socket, AF_NETLINK,
	    3, 9, 0, EPROTO_ },
	{ "socket netlink route", AUDIT_ARCH_X86_64, SYS_socket, AF_NETLINK,
	    3, NETLINK_ROUTE, 0, ALLOW },
	{ "socket inet", AUDIT_ARCH_X86_64, SYS_socket, AF_INET, 1, 0, 0,
	    ALLOW },
	{ "socket inet6", AUDIT_ARCH_X86_64, SYS_socket, AF_INET6, 1, 0, 0,
	    ALLOW },
	{ "socket unix", AUDIT_ARCH_X86_64, SYS_socket, AF_UNIX, 1, 0, 0,
	    ALLOW },
	{ "socketpair inet", AUDIT_ARCH_X86_64, SYS_socketpair, AF_INET, 1,
	    0, 0, EAFNO },
	{ "socketpair vsock", AUDIT_ARCH_X86_64, SYS_socketpair, 40, 1, 0, 0,
	    EAFNO },
	{ "socketpair unix", AUDIT_ARCH_X86_64, SYS_socketpair, AF_UNIX, 1,
	    0, 0, ALLOW },
	{ "personality addr_no_randomize", AUDIT_ARCH_X86_64, SYS_personality,
	    ADDR_NO_RANDOMIZE, 0, 0, 0, ERR(EPERM) },
	{ "personality read_implies_exec", AUDIT_ARCH_X86_64,
	    SYS_personality, READ_IMPLIES_EXEC, 0, 0, 0, ERR(EPERM) },
	{ "personality high word", AUDIT_ARCH_X86_64, SYS_personality,
	    0x100000000ULL | ADDR_NO_RANDOMIZE, 0, 0, 0, ERR(EPERM) },
	{ "personality query", AUDIT_ARCH_X86_64, SYS_personality,
	    0xffffffffU, 0, 0, 0, ALLOW },
	{ "personality linux", AUDIT_ARCH_X86_64, SYS_personality, 0, 0, 0, 0,
	    ALLOW },
	{ "memfd_create exec", AUDIT_ARCH_X86_64, SYS_memfd_create, 0,
	    SBX_MFD_EXEC, 0, 0, ERR(EPERM) },
	{ "memfd_create noexec", AUDIT_ARCH_X86_64, SYS_memfd_create, 0,
	    0x0008, 0, 0, ALLOW },
	{ "execveat of an fd", AUDIT_ARCH_X86_64, SYS_execveat, 3, 0, 0,
	    AT_EMPTY_PATH, ERR(EPERM) },
	{ "clone newuser", AUDIT_ARCH_X86_64, SYS_clone, CLONE_NEWUSER, 0, 0,
	    0, ERR(EPERM) },
	{ "clone newnet", AUDIT_ARCH_X86_64, SYS_clone, CLONE_NEWNET, 0, 0,
	    0, ERR(EPERM) },
	{ "clone thread", AUDIT_ARCH_X86_64, SYS_clone, CLONE_VM | CLONE_FS |
	    CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD, 0, 0, 0, ALLOW },
	{ "clone3", AUDIT_ARCH_X86_64, SYS_clone3, 0, 0, 0, 0, ERR(ENOSYS) },
	{ "unshare", AUDIT_ARCH_X86_64, SYS_unshare, CLONE_NEWNS, 0, 0, 0,
	    ERR(EPERM) },
	{ "mount", AUDIT_ARCH_X86_64, SYS_mount, 0, 0, 0, 0, ERR(EPERM) },
	{ "ptrace", AUDIT_ARCH_X86_64, SYS_ptrace, 0, 0, 0, 0, ERR(EPERM) },
	{ "io_uring_setup", AUDIT_ARCH_X86_64, 425, 0, 0, 0, 0, ERR(EPERM) },
	{ "ioctl tiocsti", AUDIT_ARCH_X86_64, SYS_ioctl, 0, TIOCSTI, 0, 0,
	    KILL },
	{ "ioctl tiocsti high", AUDIT_ARCH_X86_64, SYS_ioctl, 0,
	    0xffffffff00000000ULL | TIOCSTI, 0, 0, KILL },
	{ "ioctl tioclinux", AUDIT_ARCH_X86_64, SYS_ioctl, 0, TIOCLINUX, 0, 0,
	    KILL },
	{ "kexec_load", AUDIT_ARCH_X86_64, SYS_kexec_load, 0, 0, 0, 0, KILL },
	{ "init_module", AUDIT_ARCH_X86_64, SYS_init_module, 0, 0, 0, 0,
	    KILL },
	{ "x32 socket", AUDIT_ARCH_X86_64, (int)(X32 | SYS_socket), 40, 1, 0,
	    0, KILL },
	{ "x32 getpid", AUDIT_ARCH_X86_64, (int)(X32 | SYS_getpid), 0, 0, 0,
	    0, KILL },
	{ "i386 getpid", AUDIT_ARCH_I386, 20, 0, 0, 0, 0, KILL },
	{ "getpid", AUDIT_ARCH_X86_64, SYS_getpid, 0, 0, 0, 0, ALLOW },
	{ "execve", AUDIT_ARCH_X86_64, SYS_execve, 0, 0, 0, 0, ALLOW },
};

/* What the sandbox promises, asked of the one filter alone. */
START_TEST(test_refusals)
{
	struct seccomp_data d;
	const struct want *w;
	uint32_t v;
	size_t	 i;

	for (i = 0; i < NELEM(wants); i++) {
		w = &wants[i];
		data(&d, w->arch, w->nr, w->a0, w->a1, w->a2, w->a4);
		v = verdict1(&d);
		ck_assert_msg(v == w->ret, "%s: %#x, not %#x", w->what, v,
		    w->ret);
	}
}
END_TEST

static Suite *
filter_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("sbxfilter");
	tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_same_as_three);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 nf;

	sr = srunner_create(filter_suite());
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
