/*
 * The sandbox's TCP bind rule, held by its cgroup2 directory: a
 * program of the kernel's cgroup hooks for bind(2) (BPF_CGROUP_INET4_BIND
 * and _INET6_BIND, Linux 4.17) lets a TCP socket of the sandbox bind
 * only the ports its plan names: a service's own, the agent's preview
 * port, and the endpoints pid 1 listens on for it.  Any other TCP bind,
 * port 0 too, fails with EPERM; other sockets are not its business.
 *
 * Landlock's TCP rules (ABI 4, Linux 6.7) say the same for the agent
 * and each service, and are checked first; this is the rule where the
 * kernel has none (Debian 12's 6.1), and one rule more where it has.
 * It is attached before pid 1 is let go ("G"), so nothing of the
 * sandbox binds before it, pid 1's own endpoints included, and it goes
 * with the directory.
 *
 * Neither rule sees a port the kernel picks itself (autobind: listen(2)
 * or connect(2) of an unbound socket): pid 1 keeps the same ports, and
 * its services', from that in its network namespace instead
 * (ip_local_reserved_ports, sandbox/child.c sbx_reserve).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <netinet/in.h>

#include <linux/bpf.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"

/* struct bpf_sock_addr's fields the program reads, as the uapi lays it. */
#define SA_USER_PORT	offsetof(struct bpf_sock_addr, user_port)
#define SA_TYPE		offsetof(struct bpf_sock_addr, type)

/* Ports the rule lets through: at most the plan's binds and endpoints. */
#define BR_PORTS	(SANDBOX_SVCPORTS + SANDBOX_MAXLISTEN)
#define BR_INSNS	(BR_PORTS + 8)

int	bindrule_off;

static int
br_bpf(int cmd, union bpf_attr *attr)
{
	return ((int)syscall(SYS_bpf, cmd, attr, sizeof(*attr)));
}

/*
 * The ports of spec a TCP socket of its sandbox may bind: its binds,
 * and the endpoints pid 1 binds for it.  How many.
 */
static int
br_ports(const struct sandbox_spec *spec, uint16_t *ports)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;
	int				 i, n = 0;

	for (i = 0; i < spec->nbind && n < BR_PORTS; i++)
		ports[n++] = spec->bind[i];
	for (i = 0; i < spec->nlisten && n < BR_PORTS; i++) {
		sin = (const struct sockaddr_in *)&spec->listen[i].addr;
		sin6 = (const struct sockaddr_in6 *)&spec->listen[i].addr;
		if (sin->sin_family == AF_INET)
			ports[n++] = ntohs(sin->sin_port);
		else if (sin6->sin6_family == AF_INET6)
			ports[n++] = ntohs(sin6->sin6_port);
	}
	return (n);
}

/*
 * The program: a socket other than a stream one passes (1); a stream
 * one passes only to one of ports (the context's port is in network
 * order in the low 16 bits of a u32), else bind(2) gets EPERM (0).
 */
static int
br_program(const uint16_t *ports, int n, struct bpf_insn *insn)
{
	int	 k = 0, allow, i;

	/* r2 = ctx->type; if r2 != SOCK_STREAM goto allow */
	insn[k++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W,
	    .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1, .off = SA_TYPE };
	insn[k++] = (struct bpf_insn){ .code = BPF_JMP | BPF_JNE | BPF_K,
	    .dst_reg = BPF_REG_2, .imm = SOCK_STREAM };
	/* r2 = ctx->user_port; if r2 == port goto allow, for each */
	insn[k++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W,
	    .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1, .off = SA_USER_PORT };
	for (i = 0; i < n; i++)
		insn[k++] = (struct bpf_insn){ .code = BPF_JMP | BPF_JEQ |
		    BPF_K, .dst_reg = BPF_REG_2, .imm = htons(ports[i]) };
	/* r0 = 0; exit */
	insn[k++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
	    .dst_reg = BPF_REG_0, .imm = 0 };
	insn[k++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	/* allow: r0 = 1; exit */
	allow = k;
	insn[k++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
	    .dst_reg = BPF_REG_0, .imm = 1 };
	insn[k++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	/* The jumps, now that allow's place is known. */
	insn[1].off = (int16_t)(allow - 1 - 1);
	for (i = 0; i < n; i++)
		insn[3 + i].off = (int16_t)(allow - (3 + i) - 1);
	return (k);
}

/*
 * The program for one family's hook, loaded: its fd, or -1 and errno.
 * The verifier gives up with EAGAIN when a signal is pending, as one
 * of factoryd's often is (SIGCHLD): that is tried again, a few times.
 * Seen on Debian 12's 6.1 under systemd (make check-host).
 */
#define BR_LOAD_TRIES	8

static int
br_load(const struct bpf_insn *insn, int n, enum bpf_attach_type type)
{
	union bpf_attr	 attr;
	int		 fd, tries = 0;

	do {
		memset(&attr, 0, sizeof(attr));
		attr.prog_type = BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
		attr.expected_attach_type = type;
		attr.insns = (uint64_t)(uintptr_t)insn;
		attr.insn_cnt = (uint32_t)n;
		attr.license = (uint64_t)(uintptr_t)"BSD";
		fd = br_bpf(BPF_PROG_LOAD, &attr);
	} while (fd == -1 && (errno == EAGAIN || errno == EINTR) &&
	    ++tries < BR_LOAD_TRIES);
	return (fd);
}

/*
 * The rule of spec on the cgroup2 directory dir, for both families:
 * 0, or -1 and why in err.
 */
int
bindrule_attach(const char *dir, const struct sandbox_spec *spec, char *err,
    size_t errlen)
{
	static const enum bpf_attach_type types[] = {
		BPF_CGROUP_INET4_BIND, BPF_CGROUP_INET6_BIND
	};
	struct bpf_insn	 insn[BR_INSNS];
	union bpf_attr	 attr;
	uint16_t	 ports[BR_PORTS];
	size_t		 t;
	int		 n, cg, prog, rc = 0;

	if (bindrule_off)
		return (0);
	n = br_program(ports, br_ports(spec, ports), insn);
	if ((cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "bind rule: %s: %s", dir,
		    strerror(errno));
		return (-1);
	}
	for (t = 0; t < sizeof(types) / sizeof(types[0]) && rc == 0; t++) {
		if ((prog = br_load(insn, n, types[t])) == -1) {
			snprintf(err, errlen, "bind rule: load: %s",
			    strerror(errno));
			rc = -1;
			break;
		}
		memset(&attr, 0, sizeof(attr));
		attr.target_fd = (uint32_t)cg;
		attr.attach_bpf_fd = (uint32_t)prog;
		attr.attach_type = types[t];
		if (br_bpf(BPF_PROG_ATTACH, &attr) == -1) {
			snprintf(err, errlen, "bind rule: attach to %s: %s",
			    dir, strerror(errno));
			rc = -1;
		}
		close(prog);	/* the directory holds it now */
	}
	close(cg);
	return (rc);
}

/*
 * Does this kernel load the rule (CONFIG_CGROUP_BPF)?  0, or -1 and why.
 */
int
bindrule_probe(char *err, size_t errlen)
{
	struct bpf_insn	 insn[BR_INSNS];
	int		 n, prog;

	n = br_program(NULL, 0, insn);
	if ((prog = br_load(insn, n, BPF_CGROUP_INET4_BIND)) == -1) {
		snprintf(err, errlen, "cgroup bind programs (Linux 4.17, "
		    "CONFIG_CGROUP_BPF): %s", strerror(errno));
		return (-1);
	}
	close(prog);
	return (0);
}
