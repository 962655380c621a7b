/*
 * The agent sandbox: what the parent (factoryd, root) uses to start one
 * attempt's argv in fresh namespaces, under a fresh uid, in its own
 * cgroups, with Landlock and a seccomp denylist, and to kill, measure
 * and remove it afterwards by exact path.
 *
 * Life of a sandbox, as the caller drives it:
 *
 *	sandbox_cgroup_paths(id, &sb)	what will be created; journal it
 *	sandbox_spawn(&spec, &sb, ...)	creates, starts, returns once the
 *					agent's execve(2) succeeded
 *	waitpid(sb.pid, &st, ...)	the caller's SIGCHLD handling
 *	sandbox_exitstatus(&sb, st)	the agent's own wait status
 *	sandbox_kill(&sb)		at the deadline or on cancel
 *	sandbox_usage(&sb, &u)		what the cgroups measured
 *	sandbox_destroy(&sb, ...)	checks empty, removes by exact path
 *
 * sb.pid is pid 1 of the attempt's pid namespace, the factory-sandbox
 * launcher (a small reaper that stays root inside the namespaces, holds
 * only its plan and runs nothing else); the agent
 * is its only child.  When the agent exits, pid 1 reports the agent's
 * wait status on sb.fd and exits too, which takes every other process
 * of the namespace with it; pid 1 also dies with the parent
 * (PR_SET_PDEATHSIG).
 */
#ifndef FACTORY_SANDBOX_H
#define FACTORY_SANDBOX_H

#include <sys/types.h>
#include <sys/socket.h>
#include <limits.h>
#include <stdint.h>

#include "plan.h"

#define SANDBOX_POOLMAX		8	/* namespaces made ahead, at most */
#define SANDBOX_POOL		2	/* what the daemon keeps ready */

enum sandbox_cgmode {
	CGMODE_NONE,
	CGMODE_HYBRID,		/* v1 controllers + controller-less cgroup2 */
	CGMODE_V2		/* one unified tree with the controllers */
};

/* What was (or will be) created, so it can be killed and removed. */
struct sandbox {
	pid_t		 pid;		/* pid 1 of the namespace: waitpid it */
	int		 fd;		/* pid 1 reports the agent's status here */
	int		 agent_status;	/* -1 until read from fd */
	int		 watchdog_fired; /* pid 1 said "W": its lease lapsed */
	uint64_t	 watchdog_ms;	/* what pid 1 was last told */
	int		 mntns;		/* pid 1's mount namespace, or -1 */
	enum sandbox_cgmode mode;
	int		 ncgroups;
	char		 cgroups[SANDBOX_MAXCG][PATH_MAX];
	int		 cg_memory;	/* index into cgroups, -1: none */
	int		 cg_pids;
	int		 cg_cpu;
	int		 cg_cpuacct;
	int		 cg_kill;	/* the cgroup2 dir: kill, events */
	/* For sandbox_enter(): who the agent is and where. */
	uid_t		 uid;
	gid_t		 gid;
	char		 tree[PATH_MAX];
	uint16_t	 ports[SANDBOX_MAXPORTS];	/* Landlock connect */
	int		 nports;
	/* Listening sockets inside the namespace, as spec->listen. */
	int		 lfd[SANDBOX_MAXLISTEN];
	int		 nlfd;
};

struct sandbox_usage {
	uint64_t	 cpu_ms;	/* user + system of every process */
	uint64_t	 mem_peak;	/* bytes */
	uint64_t	 pids_peak;	/* 0 if the kernel does not keep it */
	uint64_t	 pids_denied;	/* forks refused by pids.max */
	uint64_t	 oom_kills;
};

/* sandbox.c */
/*
 * Every kernel feature the sandbox needs.  0 and a one-line summary in
 * err (log it), or -1 and the first missing feature named in err.
 * Also builds the seccomp program once (sandbox_spawn does it itself
 * if the caller did not) and fills the namespace pool to SANDBOX_POOL.
 */
/* spawnfds.c: what a spawn trades with its launcher. */
struct stat;
#define SBX_SETUP_MS	30000	/* a spawn that takes longer is broken */
int	spawn_await(int, char *, size_t);
int	spawn_recvfds(struct sandbox *, int, char *, size_t);
int	spawn_recv_mntns(struct sandbox *, const struct stat *, char *,
	    size_t);
int	spawn_cgroups_make(const struct sandbox_spec *, struct sandbox *,
	    int, int, int *, int *, char *, size_t);
int	spawn_cgroups_send(struct sandbox *, int *, int, char *, size_t);
/* spawnplan.c: the plan of spec, checked; -1 and err if it can't be. */
struct plan;
int	spawn_plan(struct plan *, const struct sandbox_spec *, char *, size_t);
int	sandbox_probe(char *, size_t);
/*
 * The same, but a missing feature whose CONF_DG_* bit is in the first
 * argument (factoryd.conf sandbox.downgrade) is logged in err and
 * allowed; the features run without are then in sandbox_downgraded().
 */
int	sandbox_probe_downgrade(uint32_t, char *, size_t);
uint32_t sandbox_downgraded(void);
/* "none", or the names of the features running without, for policy. */
const char *sandbox_downgrade_text(void);
/*
 * The kernel features the probe found: each used, replaced by an
 * equivalent (named in receipts and the isolation policy:
 * sandbox_replaced_text), or downgraded.  disk.c's probe adds its own.
 */
void	sandbox_feature(const char *, const char *);
void	sandbox_replaced(const char *, const char *);
const char *sandbox_features_text(void);
const char *sandbox_replaced_text(void);
/* A test build: is the feature named in FACTORY_TEST_NOFEATURE? */
int	sandbox_faked_missing(const char *);
/*
 * Make fresh network and IPC namespaces ahead of the spawns that will
 * use them, until want (at most SANDBOX_POOLMAX) are ready; returns how
 * many are.  Each is handed to one sandbox only, and a spawn with the
 * pool empty makes its own, so calling this is never required: call it
 * where the time is not waited for (the probe fills SANDBOX_POOL).
 */
int	sandbox_pool_fill(int);
/* At shutdown: the pool's launchers and the zygote, killed and reaped. */
void	sandbox_pool_end(void);
/*
 * The factory-sandbox launcher, opened by the caller (factoryd: at
 * start, from libexec): pid 1 of every sandbox is then that binary,
 * exec'd right after the clone, holding only its plan and fds.
 * Without it (-1, the default) pid 1 runs in a fork of the caller,
 * which keeps a copy of the caller's memory: for the bench only.
 */
void	sandbox_set_launcher(int);
/*
 * For the bench and regress helpers only, which link the launcher's
 * pid 1 (sandbox/child.o; factoryd does not): without a launcher, pid
 * 1 runs this in a fork of the caller, with the plan and the filter.
 * Without either, sandbox_spawn fails.
 */
void	sandbox_set_forked(void (*)(struct plan *, const struct sock_fprog *));
/* The agent's seccomp program, once sandbox_probe built it. */
extern struct sock_fprog sandbox_prog;
/*
 * Start spec->argv in a new sandbox.  sb receives the cgroup paths
 * before they are created.  0 once the agent runs; -1 and a reason
 * ("exec /bin/foo: No such file or directory") if anything failed, in
 * which case the child was reaped and the cgroups were removed.
 */
int	sandbox_spawn(const struct sandbox_spec *, struct sandbox *,
	    char *, size_t);
/*
 * Given pid 1's wait status, the agent's own wait status as pid 1
 * reported it, or pid 1's status if it reported none (it was killed).
 */
int	sandbox_exitstatus(struct sandbox *, int);
/*
 * A fleet claim's sandbox: pid 1 ends it at ms (CLOCK_BOOTTIME) unless
 * told again (spec.watchdog_ms was the first).  0, or -1 and errno.
 */
int	sandbox_watchdog(struct sandbox *, uint64_t);
/* SIGKILL every process of the attempt, now.  0 or -1 with errno. */
int	sandbox_kill(struct sandbox *);
/*
 * Let go of pid 1's mount namespace (sb.mntns), which the parent holds
 * from the spawn on so that pid 1's exit does not tear the view down:
 * handed to the launcher zygote, which drops it (the teardown runs
 * there, off the reaped exit), or closed here if there is none.  Called
 * by sandbox_destroy; no process of the sandbox is left by then.
 */
void	sandbox_release_mntns(struct sandbox *);
/*
 * Closes sb->fd, lets go of the mount namespace and the egress
 * listeners, then removes the cgroups as cgroup_remove does (cgroup.c,
 * their one owner): 0, or -1 and errno EBUSY while one still holds a
 * process.
 */
int	sandbox_destroy(struct sandbox *, char *, size_t);
/*
 * What sandbox_enter() needs once per parent (the seccomp program):
 * call it before the first session.
 */
int	sandbox_prepare(char *, size_t);

/*
 * An operator's shell in a running sandbox (factoryctl shell): what
 * the waiter, factory-sandbox in its enter mode, is handed.
 */
struct sandbox_enter {
	const struct sandbox_spec *spec;  /* argv, env (HOME=home), limits */
	const char	*home;		/* mkdtemp(3) template, in /tmp */
	const char	*cgname;	/* session cgroup, below cg_kill's */
	int		 tty;		/* pty slave: stdin, stdout, stderr */
	int		 errfd;		/* setup errors; EOF at the execve */
	int		 pidfd;		/* pid 1 of the sandbox */
	int		 killfd;	/* the session's cgroup.kill */
	/* cgroup.procs x (ncgfds - 2), cgroup.events, the cgroup2 dir. */
	const int	*cgfds;
	int		 ncgfds;
};
/*
 * Start the waiter of an operator's shell in sb: it enters pid 1's
 * namespaces, makes HOME, forks the command into the session cgroup
 * with exactly the agent's confinement (sbx_confine) and waits for
 * it; when it exits, the session cgroup is killed whole and removed.  The
 * waiter's pid, whose exit status is the command's, or -1 and err.
 * Needs the launcher (sandbox_set_launcher).
 */
pid_t	sandbox_enter(const struct sandbox *, const struct sandbox_enter *,
	    char *, size_t);

/* probe.c */
/*
 * Exec the launcher given (-1: none, the probe runs in a fork, see
 * sbx_probe_write) as "factory-sandbox probe" and take its answer:
 * the features found, the downgrades of the second argument in force,
 * the cgroup layout for the instance of the third (NULL: not asked);
 * -1 and, in err, the first missing feature or what was wrong with
 * the launcher's answer.
 */
int	probe_run(int, uint32_t, const char *, char *, size_t);
/* What the last probe said of the cgroups (probemsg.h). */
struct probe_cgroup;
const struct probe_cgroup *probe_cgroup(void);
/*
 * The state directory (factoryd's) below which the launcher's probe
 * makes a real overlay; unset, none is made.
 */
void	probe_set_statedir(const char *);
/*
 * After the probe: 1 if the tree's layers must be attached first, 0
 * if detached ones work, -1 and the line to log if no overlay can be
 * made; names idmapped-mounts and overlay-detached among the features.
 */
int	probe_overlay(char *, size_t);
/*
 * The agent's program into sandbox_prog, once; a caller that did not
 * probe probes in a fork first (sbx_probe_write).  -1 and err.
 */
int	probe_seccomp_build(char *, size_t);
int	probe_memfd_noexec(void);
int	probe_pidinfo(void);
int	probe_abi(void);
/*
 * A feature whose CONF_DG_* bit is missing: 0 if the first argument
 * allows its downgrade (then in sandbox_downgraded), else -1 and err.
 */
int	probe_lacks(uint32_t, uint32_t, const char *, char *, size_t);

/* cgroup.c */
/* Our subtree is factory/<tag>: call once, before anything else. */
void	sandbox_set_instance(const char *);
/* At shutdown: remove factory/<instance> where it is empty. */
void	sandbox_instance_remove(void);
/* The instance given, "" for none: what the probe makes cgroups for. */
const char *sandbox_cgroup_tag(void);
/* The directory the attempts' cgroups are made in; delegated or not. */
const char *sandbox_cgroup_root(int *);
/*
 * [<base>/]factory/<instance>, below each hierarchy's mount: what the
 * reconciler lists.  Final once cgroup_probe ran.
 */
const char *sandbox_cgroup_parent(void);
/*
 * The cgroup directories of attempt id, computed without creating
 * anything; -1 if the id is not a plain name or the host has no layout.
 */
int	sandbox_cgroup_paths(const char *, struct sandbox *);
/*
 * Create sb's cgroups with spec's limits, all but skip (-1: none), which
 * cgroup_create_one made alone, without limits, first; undoes what it
 * made on failure.
 */
int	cgroup_create_one(struct sandbox *, int, char *, size_t);
/*
 * Make empty v1 cgroups ahead (hybrid hosts), until want sets are
 * ready, which cgroup_create renames to an attempt's exact paths
 * instead of making them; returns how many are.  Called by
 * sandbox_pool_fill; the spares go at exit and at
 * sandbox_instance_remove.
 */
int	cgroup_spare_fill(int);
int	cgroup_create(struct sandbox *, const struct sandbox_spec *, int,
	    char *, size_t);
/*
 * Open, for writing, the file through which a single-threaded process
 * joins each cgroup by writing "0" (v1 "tasks", else cgroup.procs);
 * fds[] gets ncgroups, -1 for cgroup skip (the one it was born in, or
 * -1 for none).
 */
int	cgroup_open_procs(struct sandbox *, int, int *, char *, size_t);
int	cgroup_kill(struct sandbox *);
int	cgroup_freeze(struct sandbox *, int);
int	sandbox_usage(struct sandbox *, struct sandbox_usage *);
/*
 * Removes sb's cgroups if they are empty, at once; -1 and what remains
 * in err otherwise (they are left in place; errno EBUSY while one still
 * holds a process).  sandbox_destroy_later tries again on a timer for
 * up to the given ms, then calls done(arg, rc, err);
 * sandbox_destroy_forget lets it go on without its owner.
 */
int	cgroup_remove(struct sandbox *, char *, size_t);
struct cg_wait;
struct cg_wait	*sandbox_destroy_later(const struct sandbox *, int,
	    void (*)(void *, int, const char *), void *);
void	sandbox_destroy_forget(struct cg_wait *);
/*
 * Take the layout the launcher's probe found (probe_cgroup), each path
 * checked against the kernel's mounts: 0 and its line in err, or -1
 * and what lacks, or what was wrong with the answer.  A missing
 * cgroup.kill is not an error here: *nokill says so, and the caller
 * decides.
 */
int	cgroup_probe(const struct probe_cgroup *, char *, size_t, int *);

/*
 * bindrule.c: the TCP bind rule of a sandbox, on its cgroup2 directory
 * (its binds and endpoints alone): 0, or -1 and why.  bindrule_probe:
 * does the kernel load it?  bindrule_off: it does not and the
 * configuration says run without it (sandbox_probe_downgrade).
 */
int	bindrule_attach(const char *, const struct sandbox_spec *, char *,
	    size_t);
int	bindrule_probe(char *, size_t);
extern int bindrule_off;

#endif /* FACTORY_SANDBOX_H */
