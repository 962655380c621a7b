/*
 * The sandbox's plan: what the parent (factoryd, supervisord-factory/
 * sandbox.c) computes and the launcher (factory-sandbox, sandbox/)
 * carries out, and everything the two sides of their socket share:
 * the spec, the plan as bytes (encoded field by field with ibuf_add_n*,
 * decoded with bounded getters, leftovers refused), the descriptor
 * numbers, the tag-and-fds messages and the error pipe.  Both sides
 * link this file; neither links the other's.
 */
#ifndef FACTORY_PLAN_H
#define FACTORY_PLAN_H

#include <sys/types.h>
#include <sys/socket.h>
#include <linux/filter.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"	/* __dead */

#define SANDBOX_MAXCG		6	/* memory pids cpu cpuacct unified */
#define SANDBOX_MAXLISTEN	32	/* egress endpoints of one sandbox */
#define SANDBOX_MAXBINDS	32	/* exec and expose paths, at most */
#define SANDBOX_SVCPORTS	16	/* services' ports, to bind or reach */
#define SANDBOX_MAXPORTS	(SANDBOX_MAXLISTEN + SANDBOX_SVCPORTS)
#define SANDBOX_MAXDATA		8	/* a service's data paths */

/*
 * One TCP endpoint inside the sandbox's network namespace, where the
 * agent reaches an allowed destination.  Pid 1 binds and listens on it
 * and hands the listening socket to the parent, which accepts and
 * forwards (egress.c); nothing else listens in the namespace.
 */
struct sandbox_listen {
	struct sockaddr_storage	 addr;		/* address and port inside */
	socklen_t		 addrlen;
	int			 addlo;		/* add the address to lo */
};

struct sandbox_spec {
	const char	 *id;		/* attempt id: names cgroups, hostname */
	uid_t		  uid;		/* fresh per attempt, from the range */
	gid_t		  gid;
	const char	 *tree;		/* writable dir; cwd; at the same path */
	char *const	 *argv;		/* argv[0] absolute */
	char *const	 *env;		/* the whole environment */
	char *const	 *hide;		/* masked with an empty read-only tmpfs */
	char *const	 *exec_allow;	/* NULL: the system binary dirs */
	/* Shown read-only and noexec: the repository's objects. */
	char *const	 *expose;
	int		  logfd;	/* the agent's stdout and stderr */
	uint64_t	  memory;	/* bytes; 0: no limit for that one */
	uint64_t	  pids;
	uint64_t	  cpu_ms;	/* RLIMIT_CPU per process, rounded up */
	uint64_t	  fsize;	/* bytes, RLIMIT_FSIZE */
	uint64_t	  nofile;	/* RLIMIT_NOFILE */
	/* Egress: NULL/0 keeps the namespace empty, lo down. */
	const struct sandbox_listen *listen;
	int		  nlisten;
	const char	 *hosts;	/* /etc/hosts in the sandbox, or NULL */
	/*
	 * Files pid 1 writes below HOME (the private /tmp), the agent's,
	 * before it runs: pairs of a relative name and its content,
	 * NULL-terminated; NULL: none.
	 */
	char *const	 *home;
	/*
	 * An image's rootfs: the agent's root, read-only, and nothing of
	 * the host's; exec_allow then names paths inside it.  NULL: the
	 * host's system directories.
	 */
	const char	 *image;
	/*
	 * A fleet claim's watchdog: pid 1 ends the sandbox at this
	 * CLOCK_BOOTTIME instant (ms) unless the parent moves it on
	 * ("W" on the socket) first; a parent that stalls cannot leave
	 * it running past its lease.  0: none.
	 */
	uint64_t	  watchdog_ms;
	/*
	 * Services (factory-manifest(5) SERVICES).  lo: loopback up even
	 * with no egress endpoint.  connect: the services' ports, which
	 * Landlock lets the sandbox reach besides its endpoints' (ABI 4);
	 * bind: the ports it may listen on (none otherwise).  ready: a
	 * service's ready command, which pid 1 runs, confined as the
	 * service, with backoff until it exits 0, then says "Y"; NULL:
	 * none.  passwd: /etc/passwd and /etc/group, where the view has
	 * them, name the sandbox's uid and gid (as "factory") if they do
	 * not: a database's initdb will not run as a uid without a name.
	 */
	int		  lo;
	int		  passwd;	/* its uid named in /etc/passwd, group */
	const uint16_t	 *connect;
	int		  nconnect;
	const uint16_t	 *bind;
	int		  nbind;
	/*
	 * Ports other members of its network namespace bind that this
	 * one's plan does not name (its services get the agent's preview
	 * port).  Pid 1 keeps them, its own bind, connect and endpoint
	 * ports too, from autobind (net.ipv4.ip_local_reserved_ports),
	 * which neither Landlock nor the bind rule sees: listen(2) of an
	 * unbound socket never lands on one.
	 */
	const uint16_t	 *reserve;
	int		  nreserve;
	char *const	 *ready;
	/*
	 * The tree pinned: the device and inode of the directory the
	 * parent made, for a tree below a directory a child owns (a
	 * service's, below the worker's or the verifier's): the parent
	 * refuses a path that resolves elsewhere, and the launcher a tree
	 * that is not it when it takes it.  Inode 0: not pinned.
	 */
	uint64_t	  tree_dev;
	uint64_t	  tree_ino;
	/*
	 * A service's data (factory-manifest(5) SERVICES): data_root is
	 * the tree of the run it serves (absolute, resolved), pinned by
	 * its device and inode as the tree is; data its paths, relative,
	 * NULL-terminated, at most SANDBOX_MAXDATA.  The launcher opens
	 * each beneath that tree (a link leaving it is refused) and shows
	 * it read-only, nosuid, nodev and noexec at data_root/PATH.  NULL
	 * data_root: none.
	 */
	const char	 *data_root;
	uint64_t	  data_dev;
	uint64_t	  data_ino;
	char *const	 *data;
	/*
	 * Not on the wire: the network namespace to join (an fd the
	 * caller keeps; the services of one run share it), or NULL for
	 * a fresh one.
	 */
	const int	 *netns;
};

#define SBX_MFD_EXEC	0x0010U		/* MFD_EXEC, Linux 6.3 */
#define SBX_MEMFD_NOEXEC "/proc/sys/vm/memfd_noexec"

/* The launcher's descriptors, as the parent hands them over. */
#define SBX_FD_SOCK	3	/* the plan, then "G", "L", "M", "S", "W" */
#define SBX_FD_ERR	4	/* setup errors; EOF at the agent's execve */
#define SBX_FD_LOG	5	/* the agent's stdout and stderr */
#define SBX_FD_NET	6	/* pooled network namespace, if any */
#define SBX_FD_IPC	7	/* pooled IPC namespace, if any */
#define SBX_FD_MAX	8	/* the first fd the launcher does not keep */

/*
 * A launcher of the pool ("factory-sandbox ready", started ahead) has
 * SBX_FD_SOCK and SBX_FD_ERR only; the log comes with its plan, and it
 * makes its network and IPC namespaces itself.  Its third argument is
 * this many spaces: the room its title is written into.
 */
#define SBX_TITLE_ROOM	80

/*
 * The enter mode's (factoryctl shell's waiter's), from the parent:
 * the plan on a socket, the rest at fixed numbers.
 */
#define SBX_EFD_SLAVE	0	/* 0, 1, 2: the session's pty slave */
#define SBX_EFD_ERR	3	/* setup errors; EOF at the command's execve */
#define SBX_EFD_SOCK	4	/* the enter plan, one message */
#define SBX_EFD_PIDFD	5	/* pid 1 of the sandbox: setns(2) */
#define SBX_EFD_KILL	6	/* the session cgroup's cgroup.kill */
#define SBX_EFD_PROCS	7	/* cgroup.procs x nprocs, the session's
				 * cgroup.events, the cgroup2 directory */
#define SBX_EFD_MAX	(SBX_EFD_PROCS + SANDBOX_MAXCG + 2)

#define SBX_PLAN_MAX	(256 * 1024)	/* bytes of an encoded plan */
#define SBX_HOMEFILES	8		/* files written below HOME */
#define SBX_HOMEFILE	16384		/* bytes of one */
#define SBX_HOMENAME	128		/* bytes of its name */
#define SBX_HOMEDEPTH	4		/* components of its name */
#define SBX_BPF_MAX	4096		/* BPF_MAXINSNS */
/*
 * The agent's one seccomp filter (sandbox.c, spawn_seccomp_build): this
 * many instructions of argument checks (personality, socket families),
 * then libseccomp's denylist.
 */
#define SBX_ARGS_INSNS	22

/* What pid 1 needs, computed by the parent before the clone. */
struct plan {
	const struct sandbox_spec *spec;
	char		 tree[PATH_MAX];	/* realpath */
	char		 image[PATH_MAX];	/* realpath, "": the host's */
	char		 (*hide)[PATH_MAX];	/* realpaths, existing ones */
	int		  nhide;
	char		 (*binds)[PATH_MAX];	/* shown read-only, realpaths */
	int		 *bexec;		/* 0: noexec (spec->expose) */
	int		  nbinds;
	int		  ncgroups;		/* pid 1 joins as many */
	int		  memfd_noexec;		/* set vm.memfd_noexec (6.3) */
	int		  netfd;		/* pooled namespaces, or -1 */
	int		  ipcfd;
	int		  sock;			/* pid 1's end: 'S' status */
	int		  errfd;		/* close-on-exec: setup errors */
	/*
	 * Not on the wire.  A launcher of the pool built the host-root
	 * part of the view ahead (sbx_view_prepare) and took the binds,
	 * the tree and the data from the host's mounts (sbx_take_plan).
	 */
	int		  prepared;
	int		 *bindfd;		/* nbinds detached mounts */
	int		  treefd;
	/* Not on the wire either: spec->data's, as detached mounts. */
	int		  datafd[SANDBOX_MAXDATA];
};

/* What the waiter of factoryctl shell needs. */
struct plan_enter {
	const struct sandbox_spec *spec;	/* argv, env, uid, limits */
	char		 tree[PATH_MAX];
	uint16_t	 ports[SANDBOX_MAXPORTS];	/* Landlock connect */
	int		 nports;
	int		 nprocs;		/* cgroup.procs fds */
	char		 home[PATH_MAX];	/* a mkdtemp(3) template */
	char		 cgname[32];		/* shell-<slot> */
};

/* The host directories the agent's root is built from, NULL-ended. */
#define PLAN_NROOTDIRS	8
extern const char *const plan_rootdirs[PLAN_NROOTDIRS + 1];

/* plan.c */
/* The plan and the denylist as bytes; NULL and errno ENOMEM or E2BIG. */
void	*plan_encode(const struct plan *, const struct sock_fprog *,
	    size_t *);
/*
 * The bytes back, strictly: every count and length bounded, strings
 * without NUL, paths absolute, no byte left over.  A plan whose spec
 * and arrays live in one allocation (plan_free), or NULL and the
 * offending field named in err.
 */
struct plan *plan_decode(const void *, size_t, struct sock_fprog *,
	    char *, size_t);
void	plan_free(struct plan *);
int	plan_home_name(const char *);
/* The same for an enter plan, strictly decoded as the plan is. */
void	*plan_enter_encode(const struct plan_enter *, const struct sock_fprog *,
	    size_t *);
struct plan_enter *plan_enter_decode(const void *, size_t, struct sock_fprog *,
	    char *, size_t);
void	plan_enter_free(struct plan_enter *);
/* If tree lies below dir, the part of it below dir; else NULL. */
const char *plan_below(const char *, const char *);
/* The egress ports of spec (Landlock connect rules); how many. */
int	plan_ports(const struct sandbox_spec *, uint16_t *);
/*
 * One message on the launcher's socket: a tag byte and up to
 * SANDBOX_MAXLISTEN fds.  plan_recvtag returns how many fds came.
 */
ssize_t	plan_sendfds(int, int, const void *, size_t, const int *, int);
int	plan_sendtag(int, int, char, const int *, int);
int	plan_recvtag(int, int, char *, int *, int);
/* Is fd a mount namespace other than the caller's own? */
int	plan_mntns_ok(int);
/*
 * Before the execve: the failure as one line on the error pipe fd (a
 * format ending in ':' gets errno's text), then _exit(127).
 */
__dead void plan_fail(int, const char *, ...)
	    __attribute__((__format__(printf, 2, 3)));

#endif /* FACTORY_PLAN_H */
