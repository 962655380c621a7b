/*
 * The cgroups of an attempt.  Two layouts are supported, found once at
 * start by the launcher's probe (sandbox/cgprobe.c), which also makes
 * our directories and, on a delegated v2 subtree, moves factoryd into
 * its leaf; this keeps what the answer says, checked against the
 * kernel's mounts (cgroup_probe):
 *
 * hybrid	v1 controllers, each mounted on its own (or joined, as in
 *		cpu,cpuacct), plus a cgroup2 hierarchy without controllers.
 *		The limits live in <memory,pids,cpu,cpuacct>/factory/<id>;
 *		<unified>/factory/<id> gives cgroup.kill and cgroup.events.
 * v2		one cgroup2 tree with memory, pids and cpu; one directory
 *		[<base>/]factory/<instance>/<id> holds everything, base
 *		being factoryd's own cgroup where it was delegated to us
 *		(systemd's Delegate=yes; factoryd then runs in
 *		<base>/supervisor).
 *
 * Nothing here is found by pattern: every directory is computed from
 * the attempt id alone (sandbox_cgroup_paths), so the parent can
 * journal the paths before creating them and remove exactly those.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event.h>

#include "cgfile.h"
#include "log.h"
#include "probemsg.h"
#include "sandbox.h"

#define CG_TOP		"factory"	/* our subtree in every hierarchy */
#define CG_MNTMAX	PROBE_CGPATHLEN	/* a cgroup mount point */
#define CG_BASEMAX	PROBE_CGBASELEN	/* a delegated cgroup's path */

/*
 * One daemon's cgroups: [<base>/]factory/<instance>/<id>.  Attempt ids
 * are unique per journal only, so a second factoryd on the host (or a
 * regress run beside a real one) must never meet ours by name.  base
 * is "" but on a pure v2 host whose own cgroup was delegated to us.
 */
static char	 cg_tag[PROBE_CGTAGLEN];
static char	 cg_base[CG_BASEMAX];
static char	 cg_parent[CG_BASEMAX + 64] = CG_TOP;

static void
cg_set_parent(void)
{
	if (cg_tag[0] == '\0')
		return;
	snprintf(cg_parent, sizeof(cg_parent), "%s%s%s/%s", cg_base,
	    cg_base[0] != '\0' ? "/" : "", CG_TOP, cg_tag);
}

void
sandbox_set_instance(const char *tag)
{
	strlcpy(cg_tag, tag, sizeof(cg_tag));
	cg_set_parent();
}

const char *
sandbox_cgroup_parent(void)
{
	return (cg_parent);
}

const char *
sandbox_cgroup_tag(void)
{
	return (cg_tag);
}

struct cgmounts {
	enum sandbox_cgmode	 mode;		/* NONE until cgroup_probe */
	char			 memory[CG_MNTMAX];
	char			 pids[CG_MNTMAX];
	char			 cpu[CG_MNTMAX];
	char			 cpuacct[CG_MNTMAX];
	char			 unified[CG_MNTMAX];
	int			 memsw;		/* 0 unknown, 1 yes, -1 no */
};

static struct cgmounts	cgm;

/* The cgroup2 (else memory) directory our attempts' cgroups are in. */
const char *
sandbox_cgroup_root(int *delegated)
{
	static char	 root[PATH_MAX];

	*delegated = cg_base[0] != '\0';
	snprintf(root, sizeof(root), "%s/%s", cgm.unified[0] != '\0' ?
	    cgm.unified : cgm.memory, cg_parent);
	return (root);
}

static int	cg_keyval(const char *, const char *, const char *,
		    uint64_t *);
static int	cg_populated(struct sandbox *, int, char *, size_t);

/* The number after "key " in a flat keyed file such as memory.events. */
static int
cg_keyval(const char *dir, const char *file, const char *key,
    uint64_t *val)
{
	char	 buf[4096], *p;
	size_t	 n = strlen(key);

	if (cgfile_read(dir, file, buf, sizeof(buf)) == -1)
		return (-1);
	for (p = buf; p != NULL && *p != '\0'; ) {
		if (strncmp(p, key, n) == 0 && p[n] == ' ') {
			*val = strtoull(p + n + 1, NULL, 10);
			return (0);
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	errno = ENOENT;
	return (-1);
}

/*
 * The layout, taken once.  factoryd takes it at start (cgroup_probe,
 * from sandbox_probe_downgrade); a process that did not probe (the
 * regress helpers, the bench, which link the launcher's probe) has it
 * run in a fork on first use, as its start would have.
 */
static void
cg_layout(void)
{
	static int	 tried;
	char		 err[PROBE_ERRLEN];
	int		 nokill;

	if (cgm.mode != CGMODE_NONE || tried)
		return;
	tried = 1;
	if (probe_run(-1, ~0U, cg_tag, err, sizeof(err)) == 0)
		(void)cgroup_probe(probe_cgroup(), err, sizeof(err), &nokill);
}

/* Attempt ids name directories: a plain name, nothing else. */
static int
cg_goodid(const char *id)
{
	const char	*p;

	if (id == NULL || *id == '\0' || *id == '.' || strlen(id) > 64)
		return (0);
	for (p = id; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
		    *p != '.')
			return (0);
	return (1);
}

/* Index of the cgroup under mount mnt, adding it if new. */
static int
cg_slot(struct sandbox *sb, const char *mnt, const char *id)
{
	char	 path[PATH_MAX];
	int	 i;

	if (mnt[0] == '\0')
		return (-1);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", mnt, cg_parent,
	    id) >= sizeof(path))
		return (-2);
	for (i = 0; i < sb->ncgroups; i++)
		if (strcmp(sb->cgroups[i], path) == 0)
			return (i);
	if (sb->ncgroups == SANDBOX_MAXCG)
		return (-2);
	strlcpy(sb->cgroups[sb->ncgroups], path, PATH_MAX);
	return (sb->ncgroups++);
}

/*
 * The cgroups named id (an attempt's, checked by the caller, or a
 * spare's); with good 0, none, and -1.
 */
static int
cg_paths(const char *id, int good, struct sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->pid = -1;
	sb->fd = -1;
	sb->mntns = -1;
	sb->agent_status = -1;
	cg_layout();
	if (!good || cgm.mode == CGMODE_NONE)
		return (-1);
	sb->mode = cgm.mode;
	sb->cg_memory = cg_slot(sb, cgm.memory, id);
	sb->cg_pids = cg_slot(sb, cgm.pids, id);
	/*
	 * No cpu cgroup on hybrid hosts: the spec has no rate limit, the
	 * time budget is RLIMIT_CPU and the usage comes from cpuacct, so
	 * it would cost a mkdir and an rmdir per attempt for nothing.
	 */
	sb->cg_cpu = sb->mode == CGMODE_V2 ? cg_slot(sb, cgm.cpu, id) : -1;
	/*
	 * Nor a cpuacct one when there is a cgroup2 tree: even without
	 * controllers its cpu.stat counts every process's CPU time.
	 */
	sb->cg_cpuacct = sb->mode == CGMODE_V2 || cgm.unified[0] == '\0' ?
	    cg_slot(sb, cgm.cpuacct, id) : -1;
	sb->cg_kill = cg_slot(sb, cgm.unified, id);
	if (sb->cg_memory < 0 || sb->cg_pids < 0 || sb->cg_cpu == -2 ||
	    sb->cg_cpuacct == -2 || sb->cg_kill == -2)
		return (-1);
	return (0);
}

int
sandbox_cgroup_paths(const char *id, struct sandbox *sb)
{
	return (cg_paths(id, cg_goodid(id), sb));
}

/* "<unified>[/<base>]", the top of what we may write in cgroup2. */
static void
cg_top(char *path, size_t len)
{
	snprintf(path, len, "%s%s%s", cgm.unified, cg_base[0] != '\0' ?
	    "/" : "", cg_base);
}

/*
 * The v2 controllers must be enabled on the way down to factory/<id>,
 * from our top: the root's, or the delegated cgroup's (never above).
 * The probe enabled them at start; they are enabled again here when
 * factory/<instance> was made anew (cg_mkparents).  A controller the
 * top lacks is named with the file that lacks it.
 */
static int
cg_v2_delegate(char *err, size_t errlen)
{
	char	 path[PATH_MAX], top[PATH_MAX], mid[PATH_MAX], buf[1024];
	const char *ctl[] = { "+memory", "+pids", "+cpu" };
	size_t	 i;

	cg_top(top, sizeof(top));
	snprintf(mid, sizeof(mid), "%s/%s", top, CG_TOP);
	snprintf(path, sizeof(path), "%s/%s", cgm.unified, cg_parent);
	if (cgfile_read(path, "cgroup.subtree_control", buf,
	    sizeof(buf)) == 0 && cgfile_hasword(buf, "memory") &&
	    cgfile_hasword(buf, "pids"))
		return (0);
	if (cgfile_read(top, "cgroup.controllers", buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "cgroup: %s/cgroup.controllers: %s", top,
		    strerror(errno));
		return (-1);
	}
	for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		if (cgm.cpu[0] == '\0' && strcmp(ctl[i], "+cpu") == 0)
			continue;
		if (!cgfile_hasword(buf, ctl[i] + 1)) {
			buf[strcspn(buf, "\n")] = '\0';
			snprintf(err, errlen, "cgroup: controller %s not "
			    "available: %s/cgroup.controllers has \"%.100s\"%s",
			    ctl[i] + 1, top, buf, cg_base[0] != '\0' ?
			    " (delegate it: Delegate=yes)" : "");
			errno = ENOENT;
			return (-1);
		}
		if (cgfile_write(top, "cgroup.subtree_control",
		    ctl[i], err, errlen) == -1 && errno != EBUSY)
			return (-1);
		if (cgfile_write(mid, "cgroup.subtree_control", ctl[i],
		    err, errlen) == -1 && errno != EBUSY)
			return (-1);
		if (cgfile_write(path, "cgroup.subtree_control", ctl[i],
		    err, errlen) == -1)
			return (-1);
	}
	return (0);
}

static int
cg_limit(const char *dir, const char *file, uint64_t v, char *err,
    size_t errlen)
{
	char	 buf[32];

	if (v == 0)
		return (0);
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return (cgfile_write(dir, file, buf, err, errlen));
}

/*
 * The TCP bind rule (bindrule.c) on the sandbox's cgroup2 directory,
 * with the limits: before pid 1 is let go.  Without cgroup2 there is
 * none to hold it, and the probe took the bind-rule downgrade for that
 * (sandbox_probe_downgrade), or factoryd did not start.
 */
static int
cg_bindrule(struct sandbox *sb, const struct sandbox_spec *spec, char *err,
    size_t errlen)
{
	if (sb->cg_kill < 0)
		return (0);
	return (bindrule_attach(sb->cgroups[sb->cg_kill], spec, err, errlen));
}

static int
cg_limits(struct sandbox *sb, const struct sandbox_spec *spec, char *err,
    size_t errlen)
{
	const char	*mem = sb->cgroups[sb->cg_memory];
	const char	*pids = sb->cgroups[sb->cg_pids];
	char		 path[PATH_MAX];

	if (sb->mode == CGMODE_V2) {
		if (cg_limit(mem, "memory.max", spec->memory, err,
		    errlen) == -1)
			return (-1);
		/* No swap: the limit is the limit. */
		if (spec->memory != 0 && cgfile_write(mem, "memory.swap.max",
		    "0", err, errlen) == -1 && errno != ENOENT)
			return (-1);
		/*
		 * An OOM kill of any process fails the attempt (run.c,
		 * run_limit), so the kernel ends all of it at once: nothing
		 * runs on, to its wall time, in a tree whose result is
		 * already refused.  cgroup v1 has no such switch: there
		 * the rest runs until pid 1 exits, and is reported alike.
		 */
		if (spec->memory != 0 && cgfile_write(mem, "memory.oom.group",
		    "1", err, errlen) == -1)
			return (-1);
		return (cg_limit(pids, "pids.max", spec->pids, err, errlen) ==
		    -1 ? -1 : cg_bindrule(sb, spec, err, errlen));
	}
	if (cg_limit(mem, "memory.limit_in_bytes", spec->memory, err,
	    errlen) == -1)
		return (-1);
	/* Without swap accounting there is no memsw file: looked up once. */
	if (cgm.memsw == 0) {
		snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes",
		    mem);
		cgm.memsw = access(path, F_OK) == 0 ? 1 : -1;
	}
	if (spec->memory != 0 && cgm.memsw == 1 &&
	    cg_limit(mem, "memory.memsw.limit_in_bytes", spec->memory, err,
	    errlen) == -1)
		return (-1);
	return (cg_limit(pids, "pids.max", spec->pids, err, errlen) == -1 ?
	    -1 : cg_bindrule(sb, spec, err, errlen));
}

/*
 * factory/ and factory/<instance>/ above a new cgroup: made once, and
 * again only when a mkdir of an attempt's cgroup says they are gone.
 */
static int
cg_mkparents(const char *path, char *err, size_t errlen)
{
	char	 parent[PATH_MAX], *p;

	strlcpy(parent, path, sizeof(parent));
	if ((p = strrchr(parent, '/')) != NULL)
		*p = '\0';
	/* factory/ first, then factory/<instance>/. */
	if ((p = strrchr(parent, '/')) != NULL) {
		*p = '\0';
		if (mkdir(parent, 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "mkdir %s: %s", parent,
			    strerror(errno));
			return (-1);
		}
		*p = '/';
	}
	if (mkdir(parent, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", parent, strerror(errno));
		return (-1);
	}
	return (0);
}

/* mkdir of cgroup i, and of factory/<instance>/ above it if gone. */
static int
cg_mkdir(struct sandbox *sb, int i, char *err, size_t errlen)
{
	int	 rc;

	/* An existing one is not ours to reuse: ids are unique. */
	if ((rc = mkdir(sb->cgroups[i], 0755)) == -1 && errno == ENOENT) {
		if (cg_mkparents(sb->cgroups[i], err, errlen) == -1)
			return (-1);
		rc = mkdir(sb->cgroups[i], 0755);
	}
	if (rc == -1) {
		snprintf(err, errlen, "mkdir %s: %s", sb->cgroups[i],
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * Spare cgroups, made ahead.  A v1 mkdir is the dear part of an
 * attempt's cgroups (the memory controller's most: ~140 us here, pids
 * ~80 us), and a v1 cgroup may be renamed within its parent (~25 us;
 * cgroup2 refuses rename).  So sandbox_pool_fill, which runs while an
 * agent runs, makes empty ones in every v1 hierarchy an attempt uses,
 * and cgroup_create renames one of each to the attempt's exact path
 * instead of making it.  No attempt id starts with a '.'.  They are
 * named by slot: ".spare-<slot>" in a daemon's own factory/<instance>
 * (one daemon per instance: what a killed one left, it removes at its
 * next start, by the same exact paths), ".spare-<pid>-<slot>" in the
 * factory/ a process without an instance shares (the bench, the
 * regress helpers).  They never held a process: what the attempt gets
 * is as fresh as a mkdir's, its counters at zero.  Nothing is
 * recycled: teardown removes the attempt's cgroups by exact path as
 * before.  rename(2) in cgroupfs (kernfs) never replaces an existing
 * directory (EEXIST), so an attempt's existing cgroup is refused as a
 * mkdir refuses it.  A spare that cannot be renamed (gone meanwhile) is
 * removed and the cgroup made; the spares left are removed at exit and
 * by sandbox_instance_remove.  After a fork (daemon(3)) the process
 * that goes on using them owns them.
 */
#define CG_SPAREMAX	SANDBOX_POOLMAX

static int	 cg_spare[CG_SPAREMAX];	/* their slots, oldest first */
static int	 cg_nspare;
static pid_t	 cg_spare_pid;		/* whose they are */
static int	 cg_spare_swept;	/* a killed daemon's, removed */

static int
cg_spare_paths(int slot, struct sandbox *sb)
{
	char	 name[64];

	if (cg_tag[0] != '\0')
		snprintf(name, sizeof(name), ".spare-%d", slot);
	else
		snprintf(name, sizeof(name), ".spare-%ld-%d",
		    (long)cg_spare_pid, slot);
	return (cg_paths(name, 1, sb));
}

/* Whether cgroup i of sb is one a spare stands in for: v1's. */
static int
cg_spare_kind(const struct sandbox *sb, int i)
{
	return (sb->mode == CGMODE_HYBRID && i != sb->cg_kill);
}

/* Remove what is left of the spare in slot, by exact path. */
static void
cg_spare_rm(int slot)
{
	struct sandbox	 sp;
	int		 i;

	if (cg_spare_paths(slot, &sp) == -1)
		return;
	for (i = 0; i < sp.ncgroups; i++)
		if (cg_spare_kind(&sp, i))
			(void)rmdir(sp.cgroups[i]);
}

static void
cg_spare_rmall(void)
{
	while (cg_nspare > 0)
		cg_spare_rm(cg_spare[--cg_nspare]);
}

static void
cg_spare_atexit(void)
{
	if (getpid() == cg_spare_pid)
		cg_spare_rmall();	/* not a fork's exit */
}

/*
 * This process uses the spares: after a fork, a daemon's are its own;
 * a pid-named one's are the other process's, which removes them.
 */
static void
cg_spare_own(void)
{
	if (cg_spare_pid == getpid())
		return;
	if (cg_spare_pid == 0)
		atexit(cg_spare_atexit);
	if (cg_tag[0] == '\0')
		cg_nspare = 0;
	cg_spare_pid = getpid();
}

static int
cg_spare_listed(int slot)
{
	int	 i;

	for (i = 0; i < cg_nspare; i++)
		if (cg_spare[i] == slot)
			return (1);
	return (0);
}

int
cgroup_spare_fill(int want)
{
	struct sandbox	 sp;
	char		 err[256];
	int		 i, slot;

	if (want > CG_SPAREMAX)
		want = CG_SPAREMAX;
	cg_layout();
	if (cgm.mode != CGMODE_HYBRID)
		return (0);	/* cgroup2: nothing can be renamed */
	cg_spare_own();
	for (slot = 0; !cg_spare_swept && slot < CG_SPAREMAX; slot++)
		if (cg_tag[0] != '\0' && !cg_spare_listed(slot))
			cg_spare_rm(slot);
	cg_spare_swept = 1;
	while (cg_nspare < want) {
		for (slot = 0; cg_spare_listed(slot); slot++)
			;
		if (cg_spare_paths(slot, &sp) == -1)
			break;
		for (i = 0; i < sp.ncgroups; i++)
			if (cg_spare_kind(&sp, i) &&
			    cg_mkdir(&sp, i, err, sizeof(err)) == -1)
				break;
		if (i < sp.ncgroups) {
			cg_spare_rm(slot);
			break;
		}
		cg_spare[cg_nspare++] = slot;
	}
	return (cg_nspare);
}

/*
 * Cgroup i of sb from spare sp: renamed to its exact path.  0, or -1
 * with errno (the spare's directory is then removed).
 */
static int
cg_spare_take(struct sandbox *sb, int i, const struct sandbox *sp)
{
	if (rename(sp->cgroups[i], sb->cgroups[i]) == 0)
		return (0);
	(void)rmdir(sp->cgroups[i]);
	return (-1);
}

/* Whatever of spare sp was not taken (in taken, a bit each) goes. */
static void
cg_spare_left(int spare, const struct sandbox *sp, unsigned taken)
{
	int	 i;

	for (i = 0; spare && i < sp->ncgroups; i++)
		if (cg_spare_kind(sp, i) && !(taken & (1U << i)))
			(void)rmdir(sp->cgroups[i]);
}

int
cgroup_create_one(struct sandbox *sb, int i, char *err, size_t errlen)
{
	if (i < 0 || i >= sb->ncgroups) {
		snprintf(err, errlen, "cgroup %d of %d", i, sb->ncgroups);
		return (-1);
	}
	return (cg_mkdir(sb, i, err, errlen));
}

int
cgroup_create(struct sandbox *sb, const struct sandbox_spec *spec, int skip,
    char *err, size_t errlen)
{
	struct sandbox	 sp;
	unsigned	 taken = 0;
	int		 i, made, slot, spare = 0;

	/* The oldest spare, if any (cgroup_spare_fill): taken, or gone. */
	cg_spare_own();
	if (cg_nspare > 0) {
		slot = cg_spare[0];
		memmove(&cg_spare[0], &cg_spare[1], --cg_nspare *
		    sizeof(cg_spare[0]));
		if (cg_spare_paths(slot, &sp) == 0 && sp.ncgroups ==
		    sb->ncgroups)
			spare = 1;
		else
			cg_spare_rm(slot);
	}
	for (made = 0; made < sb->ncgroups; made++) {
		if (made == skip)
			continue;
		if (spare && cg_spare_kind(sb, made)) {
			/* Renamed, or (failed) removed: not left either way. */
			taken |= 1U << made;
			if (cg_spare_take(sb, made, &sp) == 0)
				continue;
			if (errno == EEXIST) {
				snprintf(err, errlen, "mkdir %s: %s",
				    sb->cgroups[made], strerror(errno));
				goto fail;
			}
		}
		if (cg_mkdir(sb, made, err, errlen) == -1)
			goto fail;
	}
	cg_spare_left(spare, &sp, taken);
	if (sb->mode == CGMODE_V2 && cg_v2_delegate(err, errlen) == -1)
		goto fail;
	if (cg_limits(sb, spec, err, errlen) == -1)
		goto fail;
	return (0);
 fail:
	cg_spare_left(spare, &sp, taken);
	/* Not skip: its maker removes it. */
	for (i = made - 1; i >= 0; i--)
		if (i != skip)
			rmdir(sb->cgroups[i]);
	return (-1);
}

int
cgroup_open_procs(struct sandbox *sb, int skip, int *fds, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX];
	int	 i;

	for (i = 0; i < sb->ncgroups; i++) {
		fds[i] = -1;
		if (i == skip)
			continue;
		/*
		 * A v1 hierarchy's "tasks": pid 1 writes "0" there, which
		 * moves the thread that writes, without the global lock a
		 * write to cgroup.procs takes (and waits an RCU grace
		 * period for, ~10 ms here).  Pid 1 is single-threaded, so
		 * that moves all of it.  cgroup2 has no "tasks".
		 */
		snprintf(path, sizeof(path), "%s/%s", sb->cgroups[i],
		    sb->mode == CGMODE_V2 || i == sb->cg_kill ?
		    "cgroup.procs" : "tasks");
		if ((fds[i] = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
			snprintf(err, errlen, "open %s: %s", path,
			    strerror(errno));
			while (--i >= 0)
				if (fds[i] != -1)
					close(fds[i]);
			return (-1);
		}
	}
	return (0);
}

/*
 * SIGKILL everything.  cgroup.kill is atomic against forks; without it
 * killing pid 1 makes the kernel kill the rest of the pid namespace,
 * and a sweep of cgroup.procs catches anything that was in between.
 */
int
cgroup_kill(struct sandbox *sb)
{
	char	 buf[8192], err[256], *p, *ep;
	long	 pid;
	int	 pass, found;

	if (sb->cg_kill >= 0 && cgfile_write(sb->cgroups[sb->cg_kill],
	    "cgroup.kill", "1", err, sizeof(err)) == 0)
		return (0);
	if (sb->pid > 0)
		kill(sb->pid, SIGKILL);
	for (pass = 0; pass < 100; pass++) {
		if (cgfile_read(sb->cgroups[sb->cg_pids], "cgroup.procs", buf,
		    sizeof(buf)) == -1)
			return (errno == ENOENT ? 0 : -1);
		found = 0;
		for (p = buf; *p != '\0'; p = ep) {
			pid = strtol(p, &ep, 10);
			if (ep == p)
				break;
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				found = 1;
		}
		if (!found)
			return (0);
	}
	errno = EAGAIN;
	return (-1);
}

/*
 * Freeze (on 1) or thaw everything in the run's cgroup2 directory: a
 * host that lost its fleet lease stops its attempts at once, and only
 * a renewed lease lets them go on.  SIGKILL still reaches a frozen
 * task.  -1 without a cgroup2 directory: the caller kills instead.
 */
int
cgroup_freeze(struct sandbox *sb, int on)
{
	char	 err[256];

	if (sb->cg_kill < 0) {
		errno = EOPNOTSUPP;
		return (-1);
	}
	return (cgfile_write(sb->cgroups[sb->cg_kill], "cgroup.freeze",
	    on ? "1" : "0", err, sizeof(err)));
}

int
sandbox_usage(struct sandbox *sb, struct sandbox_usage *u)
{
	char	 buf[64];
	uint64_t v;
	int	 ret = 0;

	memset(u, 0, sizeof(*u));
	if (sb->mode == CGMODE_V2) {
		const char *d = sb->cgroups[sb->cg_memory];

		if (cg_keyval(d, "cpu.stat", "usage_usec", &v) == 0)
			u->cpu_ms = (v + 999) / 1000;
		else
			ret = -1;
		if (cgfile_read(d, "memory.peak", buf, sizeof(buf)) == 0)
			u->mem_peak = strtoull(buf, NULL, 10);
		if (cg_keyval(d, "memory.events", "oom_kill",
		    &u->oom_kills) == -1)
			ret = -1;
	} else {
		if (sb->cg_cpuacct >= 0 && cgfile_read(
		    sb->cgroups[sb->cg_cpuacct], "cpuacct.usage", buf,
		    sizeof(buf)) == 0)
			u->cpu_ms = (strtoull(buf, NULL, 10) + 999999) /
			    1000000;
		else if (sb->cg_cpuacct < 0 && sb->cg_kill >= 0 &&
		    cg_keyval(sb->cgroups[sb->cg_kill], "cpu.stat",
		    "usage_usec", &v) == 0)
			u->cpu_ms = (v + 999) / 1000;
		else
			ret = -1;
		if (cgfile_read(sb->cgroups[sb->cg_memory],
		    "memory.max_usage_in_bytes", buf, sizeof(buf)) == 0)
			u->mem_peak = strtoull(buf, NULL, 10);
		else
			ret = -1;
		if (cg_keyval(sb->cgroups[sb->cg_memory], "memory.oom_control",
		    "oom_kill", &u->oom_kills) == -1)
			ret = -1;
	}
	/* pids.peak is newer (Linux 6.1): none is not an error. */
	if (cgfile_read(sb->cgroups[sb->cg_pids], "pids.peak", buf,
	    sizeof(buf)) == 0)
		u->pids_peak = strtoull(buf, NULL, 10);
	if (cg_keyval(sb->cgroups[sb->cg_pids], "pids.events", "max",
	    &u->pids_denied) == -1)
		ret = -1;
	return (ret);
}

/* Is cgroup i (still) holding a process?  1 yes, 0 no, -1 error. */
static int
cg_populated(struct sandbox *sb, int i, char *what, size_t len)
{
	char	 buf[256];

	if (i == sb->cg_kill || sb->mode == CGMODE_V2) {
		if (cgfile_read(sb->cgroups[i], "cgroup.events", buf,
		    sizeof(buf)) == -1)
			return (errno == ENOENT ? 0 : -1);
		snprintf(what, len, "populated");
		return (strstr(buf, "populated 1") != NULL);
	}
	if (cgfile_read(sb->cgroups[i], "cgroup.procs", buf, sizeof(buf)) ==
	    -1)
		return (errno == ENOENT ? 0 : -1);
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(what, len, "pid %.100s", buf);
	return (buf[0] != '\0');
}

/*
 * One try at removing sb's cgroups, innermost first: 0 once none is
 * left.  Exiting tasks leave their cgroups a moment after the parent
 * reaped pid 1, so a cgroup still holding one is -1 with errno EBUSY,
 * for the caller to try again later (sandbox_destroy_later), never by
 * waiting here; anything else is -1 with another errno.  err says the
 * first failure.
 */
int
cgroup_remove(struct sandbox *sb, char *err, size_t errlen)
{
	char		 what[128];
	int		 i, pop, busy = 0, failed = 0, saved = 0;

	for (i = sb->ncgroups - 1; i >= 0; i--) {
		/*
		 * rmdir(2) itself refuses a cgroup that holds a process
		 * (EBUSY): the emptiness check and the removal are one
		 * step.  Only a refusal is looked into.
		 */
		if (rmdir(sb->cgroups[i]) == 0 || errno == ENOENT)
			continue;
		pop = 0;
		if (errno == EBUSY) {
			pop = cg_populated(sb, i, what, sizeof(what));
			if (pop == 0 && (rmdir(sb->cgroups[i]) == 0 ||
			    errno == ENOENT))
				continue;
			if (pop == 1 || (pop == 0 && errno == EBUSY)) {
				if (!busy && !failed)
					snprintf(err, errlen, "cgroup %s not "
					    "empty (%s)", sb->cgroups[i], what);
				busy = 1;
				continue;
			}
		}
		if (!failed) {
			saved = errno;
			snprintf(err, errlen, "%s%s: %s", pop == -1 ? "" :
			    "rmdir ", sb->cgroups[i], strerror(errno));
		}
		failed = 1;
	}
	if (failed) {
		errno = saved == EBUSY ? EIO : saved;
		return (-1);
	}
	if (busy) {
		errno = EBUSY;
		return (-1);
	}
	return (0);
}

/*
 * The removal tried again on a timer, every CG_WAIT_MS, until it is
 * done or tries run out; then done(arg, 0 or -1, err).  A wait whose
 * owner went on (done NULL) logs what stayed.
 */
#define CG_WAIT_MS	2

struct cg_wait {
	struct event	 ev;
	struct sandbox	 sb;
	int		 tries;
	void		(*done)(void *, int, const char *);
	void		*arg;
	char		 err[512];
};

static void
cg_wait_cb(int fd, short event, void *arg)
{
	struct cg_wait	*w = arg;
	struct timeval	 tv = { 0, CG_WAIT_MS * 1000 };
	int		 rc;

	if ((rc = cgroup_remove(&w->sb, w->err, sizeof(w->err))) == -1 &&
	    --w->tries > 0) {
		evtimer_add(&w->ev, &tv);
		return;
	}
	if (w->done != NULL)
		w->done(w->arg, rc, w->err);
	else if (rc == -1)
		log_warnx("sandbox teardown: %s", w->err);
	free(w);
}

/*
 * After sandbox_destroy() failed: tried again for up to ms.  sb is
 * copied, its descriptors already closed; the caller's may go.
 */
struct cg_wait *
sandbox_destroy_later(const struct sandbox *sb, int ms,
    void (*done)(void *, int, const char *), void *arg)
{
	struct cg_wait	*w;
	struct timeval	 tv = { 0, CG_WAIT_MS * 1000 };

	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal(NULL);
	w->sb = *sb;
	w->sb.fd = -1;
	w->sb.mntns = -1;
	w->sb.nlfd = 0;
	w->tries = ms / CG_WAIT_MS;
	w->done = done;
	w->arg = arg;
	evtimer_set(&w->ev, cg_wait_cb, w);
	evtimer_add(&w->ev, &tv);
	return (w);
}

/* Its owner goes: the wait goes on alone. */
void
sandbox_destroy_forget(struct cg_wait *w)
{
	w->done = NULL;
	w->arg = NULL;
}

/*
 * path, the root of a cgroup mount of the kind magic says, as the
 * kernel shows it now: no link on the way, its own mount.
 */
static int
cg_mountroot(const char *path, long magic, char *err, size_t errlen)
{
	struct statfs	 sf;
	struct statx	 sx;
	char		 real[PATH_MAX];

	if (realpath(path, real) == NULL || strcmp(real, path) != 0 ||
	    statfs(path, &sf) == -1 || sf.f_type != magic ||
	    statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &sx) ==
	    -1 || !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
		snprintf(err, errlen, "factory-sandbox probe: cgroup path %s: "
		    "not the root of a %s mount", path,
		    magic == CGROUP2_SUPER_MAGIC ? "cgroup2" : "cgroup v1");
		return (-1);
	}
	return (0);
}

int
cgroup_probe(const struct probe_cgroup *pc, char *err, size_t errlen,
    int *nokill)
{
	const char	*v1[] = { pc->memory, pc->pids, pc->cpu, pc->cpuacct };
	char		 path[PATH_MAX];
	struct statfs	 sf;
	size_t		 i;

	*nokill = 1;
	if (pc->mode == PROBE_CG_FAIL) {
		strlcpy(err, pc->err, errlen);
		return (-1);
	}
	if (pc->mode != PROBE_CG_HYBRID && pc->mode != PROBE_CG_V2) {
		snprintf(err, errlen, "factory-sandbox probe: no cgroup "
		    "layout");
		return (-1);
	}
	if (pc->unified[0] != '\0' && cg_mountroot(pc->unified,
	    CGROUP2_SUPER_MAGIC, err, errlen) == -1)
		return (-1);
	for (i = 0; pc->mode == PROBE_CG_HYBRID && i < sizeof(v1) / sizeof(v1[0]); i++)
		if (v1[i][0] != '\0' && cg_mountroot(v1[i],
		    CGROUP_SUPER_MAGIC, err, errlen) == -1)
			return (-1);
	if (pc->base[0] != '\0' && ((size_t)snprintf(path, sizeof(path),
	    "%s/%s", pc->unified, pc->base) >= sizeof(path) ||
	    statfs(path, &sf) == -1 || sf.f_type != CGROUP2_SUPER_MAGIC)) {
		snprintf(err, errlen, "factory-sandbox probe: cgroup base %s: "
		    "not a cgroup2 directory", pc->base);
		return (-1);
	}
	memset(&cgm, 0, sizeof(cgm));
	cgm.mode = pc->mode == PROBE_CG_V2 ? CGMODE_V2 : CGMODE_HYBRID;
	strlcpy(cgm.memory, pc->memory, sizeof(cgm.memory));
	strlcpy(cgm.pids, pc->pids, sizeof(cgm.pids));
	strlcpy(cgm.cpu, pc->cpu, sizeof(cgm.cpu));
	strlcpy(cgm.cpuacct, pc->cpuacct, sizeof(cgm.cpuacct));
	strlcpy(cgm.unified, pc->unified, sizeof(cgm.unified));
	strlcpy(cg_base, pc->base, sizeof(cg_base));
	cg_set_parent();
	*nokill = pc->nokill;
	strlcpy(err, pc->line, errlen);
	return (0);
}

/*
 * At shutdown: our factory/<instance> directories, if they are empty
 * (rmdir(2) refuses a cgroup with children, so nothing of an attempt
 * can go this way: those are removed by teardown, by exact path).
 */
void
sandbox_instance_remove(void)
{
	const char	*mnt[] = { cgm.memory, cgm.pids, cgm.cpu, cgm.cpuacct,
			    cgm.unified };
	char		 path[PATH_MAX];
	size_t		 i;

	cg_spare_own();
	cg_spare_rmall();
	if (strcmp(cg_parent, CG_TOP) == 0)
		return;		/* no instance of ours */
	for (i = 0; i < sizeof(mnt) / sizeof(mnt[0]); i++) {
		if (mnt[i][0] == '\0')
			continue;
		snprintf(path, sizeof(path), "%s/%s", mnt[i], cg_parent);
		(void)rmdir(path);
	}
}
