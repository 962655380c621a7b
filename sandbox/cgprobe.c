/*
 * The launcher's cgroup probe, part of "factory-sandbox probe MASK
 * STATEDIR TAG" (probe.c): which cgroup layout this host has, found
 * once at factoryd's start by reading /proc/self/mountinfo and
 * /proc/self/cgroup, in this process rather than root's, and the
 * start-up writes that need nothing of root's memory.  Two layouts
 * are supported:
 *
 * hybrid	v1 controllers, each mounted on its own (or joined, as in
 *		cpu,cpuacct), plus a cgroup2 hierarchy without controllers.
 * v2		one cgroup2 tree (no v1 hierarchy mounted) with memory,
 *		pids and cpu.  When factoryd's own cgroup is not the root and
 *		is ours to write (systemd's Delegate=yes), that is the
 *		subtree: factoryd (this process's parent) and this process
 *		move into <own>/supervisor (a cgroup that enables controllers
 *		for its children may hold no process), and the attempts go
 *		to <own>/factory/...; nothing outside <own> is written.
 *		Started again inside <own>/supervisor, <own> is the subtree
 *		still, so the paths of a previous run's attempts are the
 *		same.
 *
 * The answer (probemsg.h) is the layout as typed fields and the line
 * factoryd logs; factoryd checks every path against the kernel's
 * mounts and computes each attempt's cgroups from them
 * (supervisord-factory/cgroup.c).
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgfile.h"
#include "probemsg.h"

#define CG_TOP		"factory"	/* our subtree in every hierarchy */
#define CG_LEAF		"supervisor"	/* factoryd itself, when delegated */

struct cgmounts {
	int	 mode;			/* PROBE_CG_* */
	char	 memory[PROBE_CGPATHLEN];
	char	 pids[PROBE_CGPATHLEN];
	char	 cpu[PROBE_CGPATHLEN];
	char	 cpuacct[PROBE_CGPATHLEN];
	char	 unified[PROBE_CGPATHLEN];
	int	 nv1;			/* v1 hierarchies mounted */
	char	 why[128];		/* why PROBE_CG_FAIL */
};

static struct cgmounts	 cgm;
static char		 cg_base[PROBE_CGBASELEN];
static char		 cg_parent[PROBE_CGBASELEN + 64] = CG_TOP;

/*
 * Find the hierarchies.  mountinfo field 5 is the mount point; after
 * " - " come the type, the source and the super options, which name
 * the v1 controllers.
 */
static void
cgprobe_scan_file(FILE *f, struct cgmounts *m)
{
	char	 line[4096], *mnt, *sep, *type, *opts, *p;
	int	 i;

	while (fgets(line, sizeof(line), f) != NULL) {
		if ((sep = strstr(line, " - ")) == NULL)
			continue;
		*sep = '\0';
		mnt = line;
		for (i = 0; i < 4 && mnt != NULL; i++)
			if ((mnt = strchr(mnt, ' ')) != NULL)
				mnt++;
		if (mnt == NULL || (p = strchr(mnt, ' ')) == NULL)
			continue;
		*p = '\0';
		type = sep + 3;
		if ((p = strchr(type, ' ')) == NULL)
			continue;
		*p = '\0';
		if ((opts = strchr(p + 1, ' ')) == NULL)
			continue;
		opts++;
		opts[strcspn(opts, "\n")] = '\0';
		/* Escaped or overlong: not a mount point we would use. */
		if (strchr(mnt, '\\') != NULL || strlen(mnt) >= PROBE_CGPATHLEN)
			continue;
		if (strcmp(type, "cgroup2") == 0) {
			if (m->unified[0] == '\0')
				strlcpy(m->unified, mnt, sizeof(m->unified));
			continue;
		}
		if (strcmp(type, "cgroup") != 0)
			continue;
		m->nv1++;
		if (cgfile_hasword(opts, "memory") && m->memory[0] == '\0')
			strlcpy(m->memory, mnt, sizeof(m->memory));
		if (cgfile_hasword(opts, "pids") && m->pids[0] == '\0')
			strlcpy(m->pids, mnt, sizeof(m->pids));
		if (cgfile_hasword(opts, "cpu") && m->cpu[0] == '\0')
			strlcpy(m->cpu, mnt, sizeof(m->cpu));
		if (cgfile_hasword(opts, "cpuacct") && m->cpuacct[0] == '\0')
			strlcpy(m->cpuacct, mnt, sizeof(m->cpuacct));
	}
}

/*
 * The layout from mountinfo's text and the cgroup2 root's
 * cgroup.controllers (ctl; NULL: unreadable).  No v1 hierarchy at all
 * is pure v2 whatever the root offers: the controllers that count are
 * those of the cgroup we are given (cgprobe_v2_controllers).
 */
int
cgprobe_layout(const char *mountinfo, const char *ctl, char *why,
    size_t whylen)
{
	FILE	*f;

	memset(&cgm, 0, sizeof(cgm));
	cgm.mode = PROBE_CG_FAIL;
	if ((f = fmemopen((void *)mountinfo, strlen(mountinfo), "r")) ==
	    NULL) {
		snprintf(cgm.why, sizeof(cgm.why), "mountinfo: %s",
		    strerror(errno));
		goto done;
	}
	cgprobe_scan_file(f, &cgm);
	fclose(f);
	if (cgm.unified[0] != '\0' && (cgm.nv1 == 0 || (ctl != NULL &&
	    cgfile_hasword(ctl, "memory") && cgfile_hasword(ctl, "pids")))) {
		cgm.mode = PROBE_CG_V2;
		strlcpy(cgm.memory, cgm.unified, sizeof(cgm.memory));
		strlcpy(cgm.pids, cgm.unified, sizeof(cgm.pids));
		/* cpu: decided by the probe from our cgroup's list. */
		if (ctl != NULL && cgfile_hasword(ctl, "cpu")) {
			strlcpy(cgm.cpu, cgm.unified, sizeof(cgm.cpu));
			strlcpy(cgm.cpuacct, cgm.unified,
			    sizeof(cgm.cpuacct));
		} else
			cgm.cpu[0] = cgm.cpuacct[0] = '\0';
		goto done;
	}
	if (cgm.memory[0] == '\0') {
		snprintf(cgm.why, sizeof(cgm.why), "no memory controller");
		goto done;
	}
	if (cgm.pids[0] == '\0') {
		snprintf(cgm.why, sizeof(cgm.why), "no pids controller");
		goto done;
	}
	cgm.mode = PROBE_CG_HYBRID;
 done:
	if (why != NULL)
		strlcpy(why, cgm.why, whylen);
	return (cgm.mode);
}

static void
cgprobe_scan_mounts(void)
{
	char	 buf[1024], *text, *t;
	size_t	 len = 0, cap = 65536;
	ssize_t	 n;
	int	 fd, ok;

	if ((fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) ==
	    -1 || (text = malloc(cap)) == NULL) {
		memset(&cgm, 0, sizeof(cgm));
		cgm.mode = PROBE_CG_FAIL;
		snprintf(cgm.why, sizeof(cgm.why), "/proc/self/mountinfo: %s",
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	/* A mount table longer than 1 MiB is cut: ours come early. */
	while ((n = read(fd, text + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			if (cap >= 1024 * 1024 ||
			    (t = realloc(text, cap * 2)) == NULL)
				break;
			text = t;
			cap *= 2;
		}
	}
	close(fd);
	text[len] = '\0';
	/* The root's controllers, once the mount point is known. */
	(void)cgprobe_layout(text, NULL, NULL, 0);
	ok = cgm.unified[0] != '\0' && cgfile_read(cgm.unified,
	    "cgroup.controllers", buf, sizeof(buf)) == 0;
	(void)cgprobe_layout(text, ok ? buf : NULL, NULL, 0);
	free(text);
}

/*
 * The cgroup2 path of this process from /proc/self/cgroup's text: the
 * "0::" line's path, which must be absolute.  0, or -1.
 */
int
cgprobe_self_path(const char *text, char *own, size_t len)
{
	const char	*p, *e;
	size_t		 n;

	for (p = text; p != NULL && *p != '\0'; p = e != NULL ? e + 1 : NULL) {
		e = strchr(p, '\n');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n < 4 || strncmp(p, "0::/", 4) != 0)
			continue;
		if (n - 3 >= len)
			return (-1);
		memcpy(own, p + 3, n - 3);
		own[n - 3] = '\0';
		return (0);
	}
	return (-1);
}

/*
 * The subtree of a process whose cgroup2 path is own: "" for the root,
 * else own without its leading '/' and without a last CG_LEAF (ours,
 * from a previous start).  Every component a plain printable ASCII
 * name (it goes into status -j and the journal), no "." or "..": -1
 * otherwise.
 */
int
cgprobe_base_of(const char *own, char *base, size_t len)
{
	const char	*p, *c;
	size_t		 n;

	if (own[0] != '/')
		return (-1);
	for (p = own + 1; *p != '\0'; p = *c == '/' ? c + 1 : c) {
		c = p + strcspn(p, "/");
		n = (size_t)(c - p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return (-1);
		for (; p < c; p++)
			if ((unsigned char)*p <= 0x20 ||
			    (unsigned char)*p >= 0x7f || *p == '\\')
				return (-1);
		if (*c == '/' && c[1] == '\0')
			return (-1);
	}
	if (strlcpy(base, own + 1, len) >= len)
		return (-1);
	n = strlen(base);
	if (strcmp(base, CG_LEAF) == 0)
		base[0] = '\0';
	else if (n > sizeof(CG_LEAF) && strcmp(base + n - strlen(CG_LEAF),
	    CG_LEAF) == 0 && base[n - strlen(CG_LEAF) - 1] == '/')
		base[n - strlen(CG_LEAF) - 1] = '\0';
	return (0);
}

/*
 * Root owns the cgroup dir and the two files that hand it over; else
 * why says which does not.
 */
static int
cgprobe_root_owned(const char *dir, char *why, size_t len)
{
	const char *const files[] = { "", "cgroup.procs",
	    "cgroup.subtree_control" };	/* the dir itself first */
	char		 path[PATH_MAX];
	struct stat	 st;
	size_t		 i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s%s%s", dir,
		    files[i][0] != '\0' ? "/" : "", files[i]);
		if (lstat(path, &st) == -1) {
			snprintf(why, len, "%s: %s", path, strerror(errno));
			return (0);
		}
		if (st.st_uid != 0) {
			snprintf(why, len, "%s is uid %u's, not root's", path,
			    (unsigned)st.st_uid);
			return (0);
		}
	}
	return (1);
}

/* Its subtree_control and its procs ours to write; else why not. */
static int
cgprobe_writable_why(const char *dir, char *why, size_t len)
{
	const char *const files[] = { "cgroup.subtree_control",
	    "cgroup.procs" };
	char	 path[PATH_MAX];
	size_t	 i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (access(path, W_OK) == -1) {
			snprintf(why, len, "%s not writable: %s", path,
			    strerror(errno));
			return (0);
		}
	}
	return (1);
}

/*
 * Ours only if root owns the cgroup and the two files that hand it
 * over (a cgroup delegated to a user is hers: she could move our
 * processes out of it, or kill them), and, under systemd, only if
 * the unit says Delegate=yes, which the system manager marks with
 * trusted.delegate.  user.delegate is a user manager's mark, and
 * the cgroup's owner may set it herself.  Without systemd, writable
 * and root's is ours.  Else why says what is missing.
 */
static int
cgprobe_delegated_why(const char *dir, int systemd, char *why, size_t len)
{
	char	 v[8];
	ssize_t	 n;

	if (!cgprobe_writable_why(dir, why, len) ||
	    !cgprobe_root_owned(dir, why, len))
		return (0);
	if (!systemd)
		return (1);
	if ((n = lgetxattr(dir, "trusted.delegate", v, sizeof(v) - 1)) >
	    0) {
		v[n] = '\0';
		if (strcmp(v, "1") == 0)
			return (1);
	}
	snprintf(why, len, "under systemd, and %s has no trusted.delegate "
	    "mark", dir);
	return (0);
}

int
cgprobe_delegated(const char *dir, int systemd)
{
	char	 why[PATH_MAX + 64];

	return (cgprobe_delegated_why(dir, systemd, why, sizeof(why)));
}

/*
 * Every cgroup between root (the hierarchy's mount) and base (below
 * it, "a/b/c") root's too: a user who owns an ancestor's cgroup.procs
 * may move our processes out through it (cgroup2 checks the common
 * ancestor), into a cgroup she makes there.
 */
static int
cgprobe_ancestors_why(const char *root, const char *base, char *why,
    size_t len)
{
	char		 path[PATH_MAX];
	const char	*p;

	for (p = base; (p = strchr(p, '/')) != NULL; p++) {
		snprintf(path, sizeof(path), "%s/%.*s", root,
		    (int)(p - base), base);
		if (!cgprobe_root_owned(path, why, len))
			return (0);
	}
	return (1);
}

int
cgprobe_ancestors_owned(const char *root, const char *base)
{
	char	 why[PATH_MAX + 64];

	return (cgprobe_ancestors_why(root, base, why, sizeof(why)));
}

int
cgprobe_writable(const char *dir)
{
	char	 why[PATH_MAX + 64];

	return (cgprobe_writable_why(dir, why, sizeof(why)));
}

/* "<unified>[/<base>]", the top of what we may write in cgroup2. */
static void
cgprobe_top(char *path, size_t len)
{
	snprintf(path, len, "%s%s%s", cgm.unified, cg_base[0] != '\0' ?
	    "/" : "", cg_base);
}

/*
 * Our own cgroup moved into dir: factoryd (our parent) and this
 * process, the only ones in it at start.
 */
static int
cgprobe_move(const char *dir, char *err, size_t errlen)
{
	char	 pid[32], why[PATH_MAX + 64];

	snprintf(pid, sizeof(pid), "%d", (int)getppid());
	if (cgfile_write(dir, "cgroup.procs", pid, why,
	    sizeof(why)) == -1 || cgfile_write(dir, "cgroup.procs", "0",
	    why, sizeof(why)) == -1) {
		snprintf(err, errlen, "cgroup: %s", why);
		return (-1);
	}
	return (0);
}

/*
 * Pure v2: our own cgroup must be a delegated subtree: then move into
 * its CG_LEAF and make it the base of every path.  The root is ours
 * as on every other host.  Any other cgroup is the manager's, and its
 * root is not ours either (systemd owns it, and may have made it
 * read-only): refused, with what is missing and the fix.
 */
static int
cgprobe_v2_base(const char *tag, char *err, size_t errlen)
{
	char	 text[4096], own[PROBE_CGBASELEN + 1], base[PROBE_CGBASELEN];
	char	 dir[PATH_MAX], why[PATH_MAX + 64];

	if (cgfile_read("/proc/self", "cgroup", text,
	    sizeof(text)) == -1) {
		snprintf(err, errlen, "cgroup: /proc/self/cgroup: %s",
		    strerror(errno));
		return (-1);
	}
	if (cgprobe_self_path(text, own, sizeof(own)) == -1 ||
	    cgprobe_base_of(own, base, sizeof(base)) == -1) {
		snprintf(err, errlen, "cgroup: /proc/self/cgroup: no usable "
		    "cgroup2 path (\"0::/...\", plain names)");
		return (-1);
	}
	snprintf(dir, sizeof(dir), "%s%s%s", cgm.unified, base[0] != '\0' ?
	    "/" : "", base);
	if (base[0] == '\0')
		return (0);
	/* systemd is the manager where it made this directory. */
	if (!cgprobe_delegated_why(dir, access("/run/systemd/system",
	    F_OK) == 0, why, sizeof(why)) ||
	    !cgprobe_ancestors_why(cgm.unified, base, why, sizeof(why))) {
		snprintf(err, errlen, "cgroup: our own cgroup %s is not "
		    "delegated to us (%s): start factoryd from a unit with "
		    "Delegate=yes", dir, why);
		return (-1);
	}
	strlcpy(cg_base, base, sizeof(cg_base));
	if (tag[0] != '\0')
		snprintf(cg_parent, sizeof(cg_parent), "%s/%s/%s", cg_base,
		    CG_TOP, tag);
	/* No process in a cgroup whose children get controllers. */
	if (strlen(dir) + sizeof(CG_LEAF) + 1 >= sizeof(dir)) {
		snprintf(err, errlen, "cgroup: %s: path too long", dir);
		return (-1);
	}
	strlcat(dir, "/" CG_LEAF, sizeof(dir));
	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "cgroup: mkdir %s: %s", dir,
		    strerror(errno));
		return (-1);
	}
	return (cgprobe_move(dir, err, errlen));
}

/*
 * Pure v2: what our top offers decides, before anything is made there:
 * memory and pids are needed (the limits), cpu is used if there.
 */
static int
cgprobe_v2_controllers(char *err, size_t errlen)
{
	char	 top[PATH_MAX], buf[1024];
	const char *need[] = { "memory", "pids" };
	size_t	 i;

	cgprobe_top(top, sizeof(top));
	if (cgfile_read(top, "cgroup.controllers", buf,
	    sizeof(buf)) == -1) {
		snprintf(err, errlen, "cgroup: %s/cgroup.controllers: %s", top,
		    strerror(errno));
		return (-1);
	}
	buf[strcspn(buf, "\n")] = '\0';
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!cgfile_hasword(buf, need[i])) {
			snprintf(err, errlen, "cgroup: v2 root %s/%s%s: "
			    "controller %s not available: "
			    "%s/cgroup.controllers has \"%.100s\"", cgm.unified,
			    cg_parent, cg_base[0] != '\0' ? " (delegated; "
			    "factoryd moved into " CG_LEAF ")" : "", need[i],
			    top, buf);
			return (-1);
		}
	if (cgfile_hasword(buf, "cpu")) {
		strlcpy(cgm.cpu, cgm.unified, sizeof(cgm.cpu));
		strlcpy(cgm.cpuacct, cgm.unified, sizeof(cgm.cpuacct));
	} else
		cgm.cpu[0] = cgm.cpuacct[0] = '\0';
	return (0);
}

/*
 * The v2 controllers enabled on the way down to factory/<instance>,
 * from our top: the root's, or the delegated cgroup's (never above).
 * A controller the top lacks is named with the file that lacks it.
 * The parent does the same before each attempt's cgroups (cgroup.c),
 * should factory/<instance> have gone meanwhile.
 */
static int
cgprobe_v2_delegate(char *err, size_t errlen)
{
	char	 path[PATH_MAX], top[PATH_MAX], mid[PATH_MAX], buf[1024];
	const char *ctl[] = { "+memory", "+pids", "+cpu" };
	size_t	 i;

	cgprobe_top(top, sizeof(top));
	snprintf(mid, sizeof(mid), "%s/%s", top, CG_TOP);
	snprintf(path, sizeof(path), "%s/%s", cgm.unified, cg_parent);
	if (cgfile_read(path, "cgroup.subtree_control", buf,
	    sizeof(buf)) == 0 && cgfile_hasword(buf, "memory") &&
	    cgfile_hasword(buf, "pids"))
		return (0);
	if (cgfile_read(top, "cgroup.controllers", buf,
	    sizeof(buf)) == -1) {
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

/* factory/ and factory/<instance>/ in cgroup2, made at start. */
static int
cgprobe_mkdirs(char *err, size_t errlen)
{
	char	 path[PATH_MAX], top[PATH_MAX];

	cgprobe_top(top, sizeof(top));
	snprintf(path, sizeof(path), "%s/%s", top, CG_TOP);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "cgroup: mkdir %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	snprintf(path, sizeof(path), "%s/%s", cgm.unified, cg_parent);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "cgroup: mkdir %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* The checks and the start-up writes, in the order factoryd had them. */
static int
cgprobe_check(const char *tag, int *nokill, char *err, size_t errlen)
{
	char	 path[PATH_MAX];

	*nokill = 0;
	if (tag[0] != '\0')
		snprintf(cg_parent, sizeof(cg_parent), "%s/%s", CG_TOP, tag);
	cgprobe_scan_mounts();
	if (cgm.mode == PROBE_CG_FAIL) {
		snprintf(err, errlen, "cgroup: %s", cgm.why);
		return (-1);
	}
	if (cgm.mode == PROBE_CG_HYBRID && cgm.cpuacct[0] == '\0' &&
	    cgm.unified[0] == '\0') {
		snprintf(err, errlen, "cgroup: no cpuacct controller and no "
		    "cgroup2 cpu.stat");
		return (-1);
	}
	if (cgm.unified[0] == '\0') {
		/* Emptiness then comes from the v1 cgroup.procs files. */
		*nokill = 1;
	} else {
		if (cgm.mode == PROBE_CG_V2 && cgm.nv1 == 0 &&
		    (cgprobe_v2_base(tag, err, errlen) == -1 ||
		    cgprobe_v2_controllers(err, errlen) == -1))
			return (-1);
		if (cgprobe_mkdirs(err, errlen) == -1)
			return (-1);
		snprintf(path, sizeof(path), "%s/%s/cgroup.kill",
		    cgm.unified, cg_parent);
		if (access(path, W_OK) == -1)
			*nokill = 1;
	}
	if (cgm.mode == PROBE_CG_V2 && cgprobe_v2_delegate(err, errlen) == -1)
		return (-1);
	return (0);
}

void
sbx_cgroup_probe(const char *tag, struct probe_cgroup *pc)
{
	memset(pc, 0, sizeof(*pc));
	if (cgprobe_check(tag, &pc->nokill, pc->err, sizeof(pc->err)) == -1) {
		pc->mode = PROBE_CG_FAIL;
		return;
	}
	pc->mode = cgm.mode;
	strlcpy(pc->memory, cgm.memory, sizeof(pc->memory));
	strlcpy(pc->pids, cgm.pids, sizeof(pc->pids));
	strlcpy(pc->cpu, cgm.cpu, sizeof(pc->cpu));
	strlcpy(pc->cpuacct, cgm.cpuacct, sizeof(pc->cpuacct));
	strlcpy(pc->unified, cgm.unified, sizeof(pc->unified));
	strlcpy(pc->base, cg_base, sizeof(pc->base));
	if (cgm.mode == PROBE_CG_V2 && cgm.nv1 == 0) {
		snprintf(pc->line, sizeof(pc->line), "cgroup v2, root %s/%s "
		    "(%s), kill %s", cgm.unified, cg_parent, cg_base[0] !=
		    '\0' ? "delegated; factoryd in " CG_LEAF " below it" :
		    "the hierarchy's root", !pc->nokill ? "yes" : "-");
		return;
	}
	snprintf(pc->line, sizeof(pc->line), "cgroup %s: memory %s, pids %s, "
	    "cpu time %s, kill %s", cgm.mode == PROBE_CG_V2 ? "v2" : "hybrid",
	    cgm.memory, cgm.pids, cgm.mode == PROBE_CG_V2 ||
	    cgm.unified[0] == '\0' ? cgm.cpuacct : cgm.unified,
	    cgm.unified[0] != '\0' && !pc->nokill ? cgm.unified : "-");
}
