/*
 * The cgroups of an attempt.  Two layouts are supported, found once by
 * reading /proc/self/mountinfo:
 *
 * hybrid	v1 controllers, each mounted on its own (or joined, as in
 *		cpu,cpuacct), plus a cgroup2 hierarchy without controllers.
 *		The limits live in <memory,pids,cpu,cpuacct>/factory/<id>;
 *		<unified>/factory/<id> gives cgroup.kill and cgroup.events.
 * v2		one cgroup2 tree (no v1 hierarchy mounted) with memory,
 *		pids and cpu; one directory factory/<instance>/<id> holds
 *		everything.  When factoryd's own cgroup is not the root and
 *		is ours to write (systemd's Delegate=yes), that is the
 *		subtree: factoryd moves itself into <own>/supervisor (a
 *		cgroup that enables controllers for its children may hold
 *		no process) and the attempts go to <own>/factory/...;
 *		nothing outside <own> is written.  Started again inside
 *		<own>/supervisor, <own> is the subtree still, so the paths
 *		of a previous run's attempts are the same.
 *
 * Nothing here is found by pattern: every directory is computed from
 * the attempt id alone (sandbox_cgroup_paths), so the parent can
 * journal the paths before creating them and remove exactly those.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/xattr.h>

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

#include "log.h"
#include "sandbox.h"

#define CG_TOP		"factory"	/* our subtree in every hierarchy */
#define CG_LEAF		"supervisor"	/* factoryd itself, when delegated */
#define CG_MNTMAX	512		/* a cgroup mount point; longer: unused */
#define CG_BASEMAX	256		/* a delegated cgroup's path */

/*
 * One daemon's cgroups: [<base>/]factory/<instance>/<id>.  Attempt ids
 * are unique per journal only, so a second factoryd on the host (or a
 * regress run beside a real one) must never meet ours by name.  base
 * is "" but on a pure v2 host whose own cgroup was delegated to us.
 */
static char	 cg_tag[32];
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

struct cgmounts {
	int			 done;
	enum sandbox_cgmode	 mode;
	char			 memory[CG_MNTMAX];
	char			 pids[CG_MNTMAX];
	char			 cpu[CG_MNTMAX];
	char			 cpuacct[CG_MNTMAX];
	char			 unified[CG_MNTMAX];
	int			 nv1;		/* v1 hierarchies mounted */
	char			 why[128];	/* why CGMODE_NONE */
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

static int	cg_readfile(const char *, const char *, char *, size_t);
static int	cg_writefile(const char *, const char *, const char *,
		    char *, size_t);
static int	cg_hasword(const char *, const char *);
static int	cg_keyval(const char *, const char *, const char *,
		    uint64_t *);
static int	cg_populated(struct sandbox *, int, char *, size_t);
static void	cg_scan_mounts(void);
static void	cg_scan_file(FILE *, struct cgmounts *);

/* Does the space- or comma-separated list s contain word w? */
static int
cg_hasword(const char *s, const char *w)
{
	size_t	 n = strlen(w);
	const char *p = s;

	while ((p = strstr(p, w)) != NULL) {
		if ((p == s || p[-1] == ' ' || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == ',' ||
		    p[n] == '\n'))
			return (1);
		p += n;
	}
	return (0);
}

static int
cg_readfile(const char *dir, const char *file, char *buf, size_t len)
{
	char	 path[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n == -1)
		return (-1);
	buf[n] = '\0';
	return (0);
}

static int
cg_writefile(const char *dir, const char *file, const char *val,
    char *err, size_t errlen)
{
	char	 path[PATH_MAX];
	size_t	 len = strlen(val);
	int	 fd, saved;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		snprintf(err, errlen, "%s/%s: path too long", dir, file);
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		saved = errno;
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		errno = saved;
		return (-1);
	}
	if (write(fd, val, len) != (ssize_t)len) {
		saved = errno;
		snprintf(err, errlen, "write %s to %s: %s", val, path,
		    strerror(errno));
		close(fd);
		errno = saved;
		return (-1);
	}
	close(fd);
	return (0);
}

/* The number after "key " in a flat keyed file such as memory.events. */
static int
cg_keyval(const char *dir, const char *file, const char *key,
    uint64_t *val)
{
	char	 buf[4096], *p;
	size_t	 n = strlen(key);

	if (cg_readfile(dir, file, buf, sizeof(buf)) == -1)
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
 * Find the hierarchies.  mountinfo field 5 is the mount point; after
 * " - " come the type, the source and the super options, which name
 * the v1 controllers.
 */
static void
cg_scan_file(FILE *f, struct cgmounts *m)
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
		if (strchr(mnt, '\\') != NULL || strlen(mnt) >= CG_MNTMAX)
			continue;
		if (strcmp(type, "cgroup2") == 0) {
			if (m->unified[0] == '\0')
				strlcpy(m->unified, mnt, sizeof(m->unified));
			continue;
		}
		if (strcmp(type, "cgroup") != 0)
			continue;
		m->nv1++;
		if (cg_hasword(opts, "memory") && m->memory[0] == '\0')
			strlcpy(m->memory, mnt, sizeof(m->memory));
		if (cg_hasword(opts, "pids") && m->pids[0] == '\0')
			strlcpy(m->pids, mnt, sizeof(m->pids));
		if (cg_hasword(opts, "cpu") && m->cpu[0] == '\0')
			strlcpy(m->cpu, mnt, sizeof(m->cpu));
		if (cg_hasword(opts, "cpuacct") && m->cpuacct[0] == '\0')
			strlcpy(m->cpuacct, mnt, sizeof(m->cpuacct));
	}
}

/*
 * The layout from mountinfo's text and the cgroup2 root's
 * cgroup.controllers (ctl; NULL: unreadable).  No v1 hierarchy at all
 * is pure v2 whatever the root offers: the controllers that count are
 * those of the cgroup we are given (cgroup_probe checks them).
 */
enum sandbox_cgmode
cgroup_layout(const char *mountinfo, const char *ctl, char *why,
    size_t whylen)
{
	FILE	*f;

	memset(&cgm, 0, sizeof(cgm));
	cgm.done = 1;
	cgm.mode = CGMODE_NONE;
	if ((f = fmemopen((void *)mountinfo, strlen(mountinfo), "r")) ==
	    NULL) {
		snprintf(cgm.why, sizeof(cgm.why), "mountinfo: %s",
		    strerror(errno));
		goto done;
	}
	cg_scan_file(f, &cgm);
	fclose(f);
	if (cgm.unified[0] != '\0' && (cgm.nv1 == 0 || (ctl != NULL &&
	    cg_hasword(ctl, "memory") && cg_hasword(ctl, "pids")))) {
		cgm.mode = CGMODE_V2;
		strlcpy(cgm.memory, cgm.unified, sizeof(cgm.memory));
		strlcpy(cgm.pids, cgm.unified, sizeof(cgm.pids));
		/* cpu: decided by cgroup_probe from our cgroup's list. */
		if (ctl != NULL && cg_hasword(ctl, "cpu")) {
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
	cgm.mode = CGMODE_HYBRID;
 done:
	if (why != NULL)
		strlcpy(why, cgm.why, whylen);
	return (cgm.mode);
}

static void
cg_scan_mounts(void)
{
	char	 buf[1024], *text;
	size_t	 len = 0, cap = 65536;
	ssize_t	 n;
	int	 fd, ok;

	if (cgm.done)
		return;
	if ((fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) ==
	    -1 || (text = malloc(cap)) == NULL) {
		cgm.done = 1;
		cgm.mode = CGMODE_NONE;
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
			char	*t;

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
	(void)cgroup_layout(text, NULL, NULL, 0);
	ok = cgm.unified[0] != '\0' && cg_readfile(cgm.unified,
	    "cgroup.controllers", buf, sizeof(buf)) == 0;
	(void)cgroup_layout(text, ok ? buf : NULL, NULL, 0);
	free(text);
}

enum sandbox_cgmode
cgroup_mode(char *err, size_t errlen)
{
	cg_scan_mounts();
	if (cgm.mode == CGMODE_NONE && err != NULL)
		snprintf(err, errlen, "cgroup: %s", cgm.why);
	return (cgm.mode);
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
	cg_scan_mounts();
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

/*
 * The cgroup2 path of this process from /proc/self/cgroup's text: the
 * "0::" line's path, which must be absolute.  0, or -1.
 */
int
cgroup_self_path(const char *text, char *own, size_t len)
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
cgroup_base_of(const char *own, char *base, size_t len)
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
cg_root_owned(const char *dir, char *why, size_t len)
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
cg_writable(const char *dir, char *why, size_t len)
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
cg_delegated(const char *dir, int systemd, char *why, size_t len)
{
	char	 v[8];
	ssize_t	 n;

	if (!cg_writable(dir, why, len) || !cg_root_owned(dir, why, len))
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
cgroup_delegated(const char *dir, int systemd)
{
	char	 why[PATH_MAX + 64];

	return (cg_delegated(dir, systemd, why, sizeof(why)));
}

/*
 * Every cgroup between root (the hierarchy's mount) and base (below
 * it, "a/b/c") root's too: a user who owns an ancestor's cgroup.procs
 * may move our processes out through it (cgroup2 checks the common
 * ancestor), into a cgroup she makes there.
 */
static int
cg_ancestors_owned(const char *root, const char *base, char *why,
    size_t len)
{
	char		 path[PATH_MAX];
	const char	*p;

	for (p = base; (p = strchr(p, '/')) != NULL; p++) {
		snprintf(path, sizeof(path), "%s/%.*s", root,
		    (int)(p - base), base);
		if (!cg_root_owned(path, why, len))
			return (0);
	}
	return (1);
}

int
cgroup_ancestors_owned(const char *root, const char *base)
{
	char	 why[PATH_MAX + 64];

	return (cg_ancestors_owned(root, base, why, sizeof(why)));
}

int
cgroup_writable(const char *dir)
{
	char	 why[PATH_MAX + 64];

	return (cg_writable(dir, why, sizeof(why)));
}

/* "<unified>[/<base>]", the top of what we may write in cgroup2. */
static void
cg_top(char *path, size_t len)
{
	snprintf(path, len, "%s%s%s", cgm.unified, cg_base[0] != '\0' ?
	    "/" : "", cg_base);
}

/*
 * Pure v2: our own cgroup must be a delegated subtree: then move into
 * its CG_LEAF and make it the base of every path.  The root is ours
 * as on every other host.  Any other cgroup is the manager's, and its
 * root is not ours either (systemd owns it, and may have made it
 * read-only): refused, with what is missing and the fix.
 */
static int
cg_v2_base(char *err, size_t errlen)
{
	char	 text[4096], own[CG_BASEMAX + 1], base[CG_BASEMAX], dir[PATH_MAX];
	char	 pid[32], why[PATH_MAX + 64];

	if (cg_readfile("/proc/self", "cgroup", text, sizeof(text)) == -1) {
		snprintf(err, errlen, "cgroup: /proc/self/cgroup: %s",
		    strerror(errno));
		return (-1);
	}
	if (cgroup_self_path(text, own, sizeof(own)) == -1 ||
	    cgroup_base_of(own, base, sizeof(base)) == -1) {
		snprintf(err, errlen, "cgroup: /proc/self/cgroup: no usable "
		    "cgroup2 path (\"0::/...\", plain names)");
		return (-1);
	}
	snprintf(dir, sizeof(dir), "%s%s%s", cgm.unified, base[0] != '\0' ?
	    "/" : "", base);
	if (base[0] == '\0')
		return (0);
	/* systemd is the manager where it made this directory. */
	if (!cg_delegated(dir, access("/run/systemd/system", F_OK) == 0, why,
	    sizeof(why)) || !cg_ancestors_owned(cgm.unified, base, why,
	    sizeof(why))) {
		snprintf(err, errlen, "cgroup: our own cgroup %s is not "
		    "delegated to us (%s): start factoryd from a unit with "
		    "Delegate=yes", dir, why);
		return (-1);
	}
	strlcpy(cg_base, base, sizeof(cg_base));
	cg_set_parent();
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
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (cg_writefile(dir, "cgroup.procs", pid, text, sizeof(text)) ==
	    -1) {
		snprintf(err, errlen, "cgroup: %s", text);
		return (-1);
	}
	return (0);
}

/*
 * Pure v2: what our top offers decides, before anything is made there:
 * memory and pids are needed (the limits), cpu is used if there.
 */
static int
cg_v2_controllers(char *err, size_t errlen)
{
	char	 top[PATH_MAX], buf[1024];
	const char *need[] = { "memory", "pids" };
	size_t	 i;

	cg_top(top, sizeof(top));
	if (cg_readfile(top, "cgroup.controllers", buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "cgroup: %s/cgroup.controllers: %s", top,
		    strerror(errno));
		return (-1);
	}
	buf[strcspn(buf, "\n")] = '\0';
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!cg_hasword(buf, need[i])) {
			snprintf(err, errlen, "cgroup: v2 root %s/%s%s: "
			    "controller %s not available: "
			    "%s/cgroup.controllers has \"%.100s\"", cgm.unified,
			    cg_parent, cg_base[0] != '\0' ? " (delegated; "
			    "factoryd moved into " CG_LEAF ")" : "", need[i],
			    top, buf);
			return (-1);
		}
	if (cg_hasword(buf, "cpu")) {
		strlcpy(cgm.cpu, cgm.unified, sizeof(cgm.cpu));
		strlcpy(cgm.cpuacct, cgm.unified, sizeof(cgm.cpuacct));
	} else
		cgm.cpu[0] = cgm.cpuacct[0] = '\0';
	return (0);
}

/*
 * The v2 controllers must be enabled on the way down to factory/<id>,
 * from our top: the root's, or the delegated cgroup's (never above).
 * A controller the top lacks is named with the file that lacks it.
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
	if (cg_readfile(path, "cgroup.subtree_control", buf,
	    sizeof(buf)) == 0 && cg_hasword(buf, "memory") &&
	    cg_hasword(buf, "pids"))
		return (0);
	if (cg_readfile(top, "cgroup.controllers", buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "cgroup: %s/cgroup.controllers: %s", top,
		    strerror(errno));
		return (-1);
	}
	for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		if (cgm.cpu[0] == '\0' && strcmp(ctl[i], "+cpu") == 0)
			continue;
		if (!cg_hasword(buf, ctl[i] + 1)) {
			buf[strcspn(buf, "\n")] = '\0';
			snprintf(err, errlen, "cgroup: controller %s not "
			    "available: %s/cgroup.controllers has \"%.100s\"%s",
			    ctl[i] + 1, top, buf, cg_base[0] != '\0' ?
			    " (delegate it: Delegate=yes)" : "");
			errno = ENOENT;
			return (-1);
		}
		if (cg_writefile(top, "cgroup.subtree_control",
		    ctl[i], err, errlen) == -1 && errno != EBUSY)
			return (-1);
		if (cg_writefile(mid, "cgroup.subtree_control", ctl[i],
		    err, errlen) == -1 && errno != EBUSY)
			return (-1);
		if (cg_writefile(path, "cgroup.subtree_control", ctl[i],
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
	return (cg_writefile(dir, file, buf, err, errlen));
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
		if (spec->memory != 0 && cg_writefile(mem, "memory.swap.max",
		    "0", err, errlen) == -1 && errno != ENOENT)
			return (-1);
		/*
		 * An OOM kill of any process fails the attempt (run.c,
		 * run_limit), so the kernel ends all of it at once: nothing
		 * runs on, to its wall time, in a tree whose result is
		 * already refused.  cgroup v1 has no such switch: there
		 * the rest runs until pid 1 exits, and is reported alike.
		 */
		if (spec->memory != 0 && cg_writefile(mem, "memory.oom.group",
		    "1", err, errlen) == -1)
			return (-1);
		return (cg_limit(pids, "pids.max", spec->pids, err, errlen));
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
	return (cg_limit(pids, "pids.max", spec->pids, err, errlen));
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
	if (cgroup_mode(NULL, 0) != CGMODE_HYBRID)
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

	if (sb->cg_kill >= 0 && cg_writefile(sb->cgroups[sb->cg_kill],
	    "cgroup.kill", "1", err, sizeof(err)) == 0)
		return (0);
	if (sb->pid > 0)
		kill(sb->pid, SIGKILL);
	for (pass = 0; pass < 100; pass++) {
		if (cg_readfile(sb->cgroups[sb->cg_pids], "cgroup.procs", buf,
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
		if (cg_readfile(d, "memory.peak", buf, sizeof(buf)) == 0)
			u->mem_peak = strtoull(buf, NULL, 10);
		if (cg_keyval(d, "memory.events", "oom_kill",
		    &u->oom_kills) == -1)
			ret = -1;
	} else {
		if (sb->cg_cpuacct >= 0 && cg_readfile(
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
		if (cg_readfile(sb->cgroups[sb->cg_memory],
		    "memory.max_usage_in_bytes", buf, sizeof(buf)) == 0)
			u->mem_peak = strtoull(buf, NULL, 10);
		else
			ret = -1;
		if (cg_keyval(sb->cgroups[sb->cg_memory], "memory.oom_control",
		    "oom_kill", &u->oom_kills) == -1)
			ret = -1;
	}
	/* pids.peak is newer (Linux 6.1): none is not an error. */
	if (cg_readfile(sb->cgroups[sb->cg_pids], "pids.peak", buf,
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
		if (cg_readfile(sb->cgroups[i], "cgroup.events", buf,
		    sizeof(buf)) == -1)
			return (errno == ENOENT ? 0 : -1);
		snprintf(what, len, "populated");
		return (strstr(buf, "populated 1") != NULL);
	}
	if (cg_readfile(sb->cgroups[i], "cgroup.procs", buf, sizeof(buf)) ==
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

int
cgroup_probe(char *err, size_t errlen, int *nokill)
{
	char	 path[PATH_MAX], top[PATH_MAX];

	*nokill = 0;
	if (cgroup_mode(err, errlen) == CGMODE_NONE)
		return (-1);
	if (cgm.mode == CGMODE_HYBRID && cgm.cpuacct[0] == '\0' &&
	    cgm.unified[0] == '\0') {
		snprintf(err, errlen, "cgroup: no cpuacct controller and no "
		    "cgroup2 cpu.stat");
		return (-1);
	}
	if (cgm.unified[0] == '\0') {
		/* Emptiness then comes from the v1 cgroup.procs files. */
		*nokill = 1;
	} else {
		if (cgm.mode == CGMODE_V2 && cgm.nv1 == 0 &&
		    (cg_v2_base(err, errlen) == -1 ||
		    cg_v2_controllers(err, errlen) == -1))
			return (-1);
		cg_top(top, sizeof(top));
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
		snprintf(path, sizeof(path), "%s/%s/cgroup.kill",
		    cgm.unified, cg_parent);
		if (access(path, W_OK) == -1)
			*nokill = 1;
	}
	if (cgm.mode == CGMODE_V2 && cg_v2_delegate(err, errlen) == -1)
		return (-1);
	if (cgm.mode == CGMODE_V2 && cgm.nv1 == 0) {
		cg_top(top, sizeof(top));
		snprintf(err, errlen, "cgroup v2, root %s/%s (%s), kill %s",
		    cgm.unified, cg_parent, cg_base[0] != '\0' ?
		    "delegated; factoryd in " CG_LEAF " below it" :
		    "the hierarchy's root",
		    !*nokill ? "yes" : "-");
		return (0);
	}
	snprintf(err, errlen, "cgroup %s: memory %s, pids %s, cpu time %s, "
	    "kill %s", cgm.mode == CGMODE_V2 ? "v2" : "hybrid", cgm.memory,
	    cgm.pids, cgm.mode == CGMODE_V2 || cgm.unified[0] == '\0' ?
	    cgm.cpuacct : cgm.unified,
	    cgm.unified[0] != '\0' && !*nokill ? cgm.unified : "-");
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
