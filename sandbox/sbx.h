/*
 * What the parent's side of the sandbox (supervisord-factory/sandbox.c),
 * the side that runs as pid 1 and the agent (child.c), the plan's wire
 * format (plan.c), the launcher (launcher.c) and its enter mode, the
 * waiter of an operator's shell (enter.c), share.  Not for other
 * callers: they use sandbox.h.
 */
#ifndef FACTORY_SBX_H
#define FACTORY_SBX_H

#include <sys/types.h>
#include <linux/filter.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "../supervisord-factory/sandbox.h"

#define SBX_TMPSIZE	"size=64m,nr_inodes=16384"
#define SBX_HOSTS	"/run/factory-hosts"	/* then bound on /etc/hosts */
#define SBX_MFD_EXEC	0x0010U		/* MFD_EXEC, Linux 6.3 */
#define SBX_MEMFD_NOEXEC "/proc/sys/vm/memfd_noexec"
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif

/* The launcher's descriptors, as the parent hands them over. */
#define SBX_FD_SOCK	3	/* the plan, then "G", "L", "M", "S" messages */
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
 * The agent's one seccomp filter (sandbox.c, sbx_seccomp_build): this
 * many instructions of argument checks (personality, socket families),
 * then libseccomp's denylist.
 */
#define SBX_ARGS_INSNS	22

/* What pid 1 needs, computed by the parent before the clone. */
struct sbx_plan {
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
	 * part of the view ahead (sbx_view_prepare) and took the binds
	 * and the tree from the host's mounts (sbx_take_plan).
	 */
	int		  prepared;
	int		 *bindfd;		/* nbinds detached mounts */
	int		  treefd;
};

/* What the waiter of factoryctl shell needs. */
struct sbx_enter {
	const struct sandbox_spec *spec;	/* argv, env, uid, limits */
	char		 tree[PATH_MAX];
	uint16_t	 ports[SANDBOX_MAXLISTEN];	/* Landlock connect */
	int		 nports;
	int		 nprocs;		/* cgroup.procs fds */
	char		 home[PATH_MAX];	/* a mkdtemp(3) template */
	char		 cgname[32];		/* shell-<slot> */
};

/* child.c */
struct landlock;
extern const char *const sbx_rootdirs[];
extern const char *const sbx_exec_default[];
extern const char	*sbx_exec_dirs[];
extern struct sock_fprog sbx_prog;	/* the agent's filter, compiled */
__dead void	sbx_fail(int, const char *, ...)
		    __attribute__((__format__(printf, 2, 3)));
void		sbx_exec_resolve(void);
int		sbx_mkdirs(const char *, const char *);
const char	*sbx_below(const char *, const char *);
struct landlock	*sbx_confine_prepare(const struct sandbox_spec *,
		    const char *, const uint16_t *, int, int);
void		sbx_confine_ahead(int);
void		sbx_confine(const struct sandbox_spec *, const char *,
		    struct landlock *, int);
int		sbx_ports(const struct sandbox_spec *, uint16_t *);
int		sbx_sendtag(int, char, const int *, int);
int		sbx_recvtag(int, int, char *, int *, int);
int		sbx_mntns_ok(int);
__dead void	sbx_pid1(struct sbx_plan *);
void		sbx_view_prepare(int);
void		sbx_take_plan(struct sbx_plan *, int *, int *);

/* plan.c */
/* The plan and the denylist as bytes; NULL and errno ENOMEM or E2BIG. */
void	*sbx_plan_encode(const struct sbx_plan *, const struct sock_fprog *,
	    size_t *);
/*
 * The bytes back, strictly: every count and length bounded, strings
 * without NUL, paths absolute, no byte left over.  A plan whose spec
 * and arrays live in one allocation (sbx_plan_free), or NULL and the
 * offending field named in err.
 */
struct sbx_plan *sbx_plan_decode(const void *, size_t, struct sock_fprog *,
	    char *, size_t);
void	sbx_plan_free(struct sbx_plan *);
int	sbx_home_name(const char *);
/* The same for an enter plan, strictly decoded as the plan is. */
void	*sbx_enter_encode(const struct sbx_enter *, const struct sock_fprog *,
	    size_t *);
struct sbx_enter *sbx_enter_decode(const void *, size_t, struct sock_fprog *,
	    char *, size_t);
void	sbx_enter_free(struct sbx_enter *);

/* enter.c */
__dead void	sbx_enter(struct sbx_enter *);

#endif /* FACTORY_SBX_H */
