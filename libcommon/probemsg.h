/*
 * The kernel probe's answer.  factoryd (root) runs no kernel probe of
 * the sandbox's itself: at start it execs the launcher as
 * "factory-sandbox probe MASK" (sandbox/probe.c), which tries the
 * namespaces, clone3, Landlock, memfd_noexec, PIDFD_GET_INFO, openat2
 * and seccomp, decides the downgrades MASK (CONF_DG_*) allows, and
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

struct probe_answer {
	int		 ok;		/* 0: err names the missing feature */
	char		 err[PROBE_ERRLEN];
	uint32_t	 abi;		/* Landlock's, 0: none */
	uint32_t	 downgraded;	/* CONF_DG_* run without */
	int		 memfd_noexec;	/* vm.memfd_noexec (Linux 6.3) */
	int		 pidinfo;	/* PIDFD_GET_INFO (Linux 6.13) */
	char		 feats[PROBE_FEATSLEN];	/* "name (how), ..." */
	char		 repl[PROBE_REPLLEN];	/* replaced: "name ..." */
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
 * then _exit.  The launcher's probe mode; the regress helpers and the
 * bench, which run pid 1 in a fork, link it to probe in a fork too
 * (supervisord-factory/probe.c has a weak stand-in that fails).
 */
__attribute__((__noreturn__)) void sbx_probe_write(int, uint32_t);

#endif /* FACTORY_PROBEMSG_H */
