/*
 * The kernel probe's answer.  factoryd (root) runs no kernel probe of
 * the sandbox's itself: at start it execs the launcher as
 * "factory-sandbox probe MASK" (sandbox/probe.c), which tries the
 * namespaces, clone3, Landlock, memfd_noexec, PIDFD_GET_INFO, openat2
 * and seccomp, decides the downgrades MASK (CONF_DG_*) allows, makes
 * a real overlay of the attempts' kind below STATEDIR, finds the
 * cgroup layout and makes the instance's cgroups TAG names ("factory-
 * sandbox probe MASK STATEDIR TAG", "-" for either: not asked), and
 * writes one answer on its descriptor 3.  The parent (supervisord-
 * factory/probe.c) decodes it strictly and keeps only this.  Both
 * sides link this file; neither links the other's.
 */
#ifndef FACTORY_PROBEMSG_H
#define FACTORY_PROBEMSG_H

#include <sys/ioctl.h>

#include <stddef.h>
#include <stdint.h>

#define PROBE_FD		3	/* the answer, in probe mode */
#define PROBE_ANSWER_MAX	4096	/* bytes of an encoded answer */
#define PROBE_ERRLEN		512
#define PROBE_FEATSLEN		1024
#define PROBE_REPLLEN		512
#define PROBE_ABI_MAX		64	/* a Landlock ABI beyond is a lie */

/* How overlayfs takes the tree's idmapped layers (disk.c). */
#define PROBE_OVL_NONE		0	/* not probed: no state directory */
#define PROBE_OVL_DETACHED	1	/* detached, as they are (6.15) */
#define PROBE_OVL_ATTACHED	2	/* attached first, in a helper */
#define PROBE_OVL_FAIL		3	/* neither: diskerr says why */
#define PROBE_OVL_MAX		PROBE_OVL_FAIL

/*
 * The cgroup layout (sandbox/cgprobe.c finds it; supervisord-factory/
 * cgroup.c computes every attempt's paths from it).  Paths absolute
 * and canonical, base relative to unified; "" where there is none.
 */
#define PROBE_CG_NONE		0	/* not probed */
#define PROBE_CG_HYBRID		1	/* v1 controllers + a cgroup2 */
#define PROBE_CG_V2		2	/* one unified tree */
#define PROBE_CG_FAIL		3	/* unusable: err is the line */
#define PROBE_CG_MAX		PROBE_CG_FAIL
#define PROBE_CGPATHLEN		512	/* a mount point; longer: unused */
#define PROBE_CGBASELEN		256	/* a delegated cgroup's path */
#define PROBE_CGTAGLEN		32	/* the instance */

struct probe_cgroup {
	int		 mode;		/* PROBE_CG_* */
	char		 err[PROBE_ERRLEN];	/* PROBE_CG_FAIL: the line */
	char		 memory[PROBE_CGPATHLEN];
	char		 pids[PROBE_CGPATHLEN];
	char		 cpu[PROBE_CGPATHLEN];
	char		 cpuacct[PROBE_CGPATHLEN];
	char		 unified[PROBE_CGPATHLEN];
	char		 base[PROBE_CGBASELEN];	/* "" or "a/b": delegated */
	int		 nokill;	/* no cgroup.kill to write */
	char		 line[PROBE_ERRLEN];	/* as the start-up line says */
};

struct probe_answer {
	int		 ok;		/* 0: err names the missing feature */
	char		 err[PROBE_ERRLEN];
	uint32_t	 abi;		/* Landlock's, 0: none */
	uint32_t	 downgraded;	/* CONF_DG_* run without */
	int		 memfd_noexec;	/* vm.memfd_noexec (Linux 6.3) */
	int		 pidinfo;	/* PIDFD_GET_INFO (Linux 6.13) */
	char		 feats[PROBE_FEATSLEN];	/* "name (how), ..." */
	char		 repl[PROBE_REPLLEN];	/* replaced: "name ..." */
	int		 overlay;	/* PROBE_OVL_* */
	char		 diskerr[PROBE_ERRLEN];	/* PROBE_OVL_FAIL: the line */
	struct probe_cgroup cg;
};

/*
 * PIDFD_GET_INFO (Linux 6.13), as <linux/pidfd.h> has it there: the
 * first 64 bytes, which every kernel that knows the call fills.
 */
struct spawn_pidfd_info {
	uint64_t	 mask;
	uint64_t	 cgroupid;
	uint32_t	 pid, tgid, ppid;
	uint32_t	 ids[8];	/* ruid ... fsgid */
	uint32_t	 spare;
};
#define SBX_PIDFD_GET_INFO	_IOWR(0xFF, 11, struct spawn_pidfd_info)
#define SBX_PIDFD_INFO_PID	1ULL

/* probemsg.c */
/* The answer as bytes; NULL and errno ENOMEM or E2BIG. */
void	*probe_answer_encode(const struct probe_answer *, size_t *);
/*
 * The bytes back: every field bounded, the texts printable, only the
 * Landlock downgrades, nothing left over; 0, or -1 and err.
 */
int	 probe_answer_decode(const void *, size_t, struct probe_answer *,
	    char *, size_t);
/*
 * A missing feature the configuration does not downgrade, in err:
 * "NAME: WHY; factoryd.conf sandbox.downgrade [NAME] runs without it".
 */
void	 probe_refuse(char *, size_t, const char *, const char *);
/*
 * Test builds can pretend a feature is missing, to prove that factoryd
 * refuses to start without it and runs with an explicit downgrade, or
 * with what replaces it: FACTORY_TEST_NOFEATURE is a comma-separated
 * list of downgrade or feature names (memfd-noexec, overlay-detached,
 * landlock-truncate, landlock-ioctl-dev, pidfd-info, clone3).  Always
 * 0 in a release build.
 */
int	 probe_faked(const char *);

/*
 * sandbox/probe.c: every probe, the answer written on the descriptor,
 * then _exit; the overlay's only with a state directory (else
 * PROBE_OVL_NONE), the cgroups' only with an instance, "" for none
 * (else PROBE_CG_NONE).  The launcher's probe mode; the regress helpers and
 * the bench, which run pid 1 in a fork, link it to probe in a fork too
 * (supervisord-factory/probe.c has a weak stand-in that fails).
 */
__attribute__((__noreturn__)) void sbx_probe_write(int, uint32_t,
	    const char *, const char *);
/*
 * sandbox/diskprobe.c: can this kernel make the attempts' overlays
 * below the state directory, and do they take detached layers
 * (nodetached: a test build's pretence that they do not)?
 * PROBE_OVL_DETACHED or _ATTACHED, or PROBE_OVL_FAIL and the line.
 */
int	 sbx_disk_probe(const char *, int, char *, size_t);
/*
 * sandbox/cgprobe.c: the cgroup layout, and the start-up writes, for
 * the instance given ("": none, the shared factory/), with factoryd
 * the caller's parent; in the second argument.
 */
void	 sbx_cgroup_probe(const char *, struct probe_cgroup *);
/*
 * Its parts, which the unit tests take one by one: the layout from
 * the texts of a mountinfo and of the cgroup2 root's cgroup.controllers
 * (NULL: none read), PROBE_CG_FAIL and why if unusable; the "0::" path
 * of a /proc/PID/cgroup text; the subtree of a process in cgroup2 path
 * own ("" for the root, else own less its '/' and a last "supervisor",
 * our leaf; -1: odd names); whether dir's cgroup.subtree_control and
 * cgroup.procs may be written; whether dir is delegated to us (under
 * systemd, second argument: with its trusted.delegate mark); whether
 * every cgroup between a mount and a base below it is root's.
 */
int	 cgprobe_layout(const char *, const char *, char *, size_t);
int	 cgprobe_self_path(const char *, char *, size_t);
int	 cgprobe_base_of(const char *, char *, size_t);
int	 cgprobe_writable(const char *);
int	 cgprobe_delegated(const char *, int);
int	 cgprobe_ancestors_owned(const char *, const char *);

#endif /* FACTORY_PROBEMSG_H */
