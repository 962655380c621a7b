/*
 * The sandbox from the inside: what runs as pid 1 of the new
 * namespaces and as the agent before its execve.  factoryd does not
 * link it: a sandbox's pid 1 is the factory-sandbox launcher, a fresh
 * binary holding the plan and its fds and nothing of the parent's
 * memory (sandbox/launcher.c).  The bench and a regress helper link it
 * to run pid 1 in a fork of themselves instead (sbx_pid1_forked).
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "beneath.h"
#include "landlock.h"
#include "sbx.h"

struct sock_fprog	 sbx_prog;	/* the compiled denylist */

#define SBX_NROOTDIRS	PLAN_NROOTDIRS
#define SBX_STAGE	"/tmp"	/* where the new root is built, then / */

const char *const sbx_exec_default[] = {
	"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/libexec",
	"/usr/local/bin", "/usr/lib", "/lib", "/lib64", NULL
};

/*
 * The same, resolved and without duplicates once per parent (with a
 * merged /usr, /bin and /usr/bin are one directory): one Landlock rule
 * each.  NULL until then, or if it could not be done.
 */
const char	*sbx_exec_dirs[sizeof(sbx_exec_default) /
			    sizeof(sbx_exec_default[0])];
static int		 sbx_exec_done;

/* Device nodes the agent gets: the host's numbers and modes. */
static const char *const sbx_devices[] = {
	"null", "zero", "full", "random", "urandom", "tty", NULL
};

void
sbx_exec_resolve(void)
{
	char	 path[PATH_MAX];
	int	 i, j, n = 0;

	if (sbx_exec_done)
		return;
	sbx_exec_done = 1;
	for (i = 0; sbx_exec_default[i] != NULL; i++) {
		if (realpath(sbx_exec_default[i], path) == NULL)
			continue;	/* not on this host */
		for (j = 0; j < n; j++)
			if (strcmp(sbx_exec_dirs[j], path) == 0)
				break;
		if (j < n)
			continue;
		if ((sbx_exec_dirs[n] = strdup(path)) == NULL) {
			while (n > 0)
				free((char *)sbx_exec_dirs[--n]);
			sbx_exec_dirs[0] = NULL;	/* the list as given */
			return;
		}
		n++;
	}
}

/* mkdir -p of rel below the directory base, inside a fresh tmpfs. */
int
sbx_mkdirs(const char *base, const char *rel)
{
	char	 path[PATH_MAX], *p;
	size_t	 blen = strlen(base);

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", base, rel) >=
	    sizeof(path))
		return (-1);
	for (p = path + blen + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(path, 0755) == -1 && errno != EEXIST)
				return (-1);
			*p = c;
		}
		if (*p == '\0')
			break;
	}
	return (0);
}

static const char *sbx_data_path(struct plan *, int, char *);
static void	 sbx_reserve(struct plan *);

/*
 * The mount points of a service's data below dir, a fresh tmpfs: a
 * directory, or an empty file for a file.
 */
static void
sbx_cover_data(struct plan *pl, const char *dir)
{
	const struct sandbox_spec *spec = pl->spec;
	struct stat	 st;
	char		 path[PATH_MAX], *slash;
	const char	*rel;
	int		 i, fd;

	for (i = 0; spec != NULL && spec->data_root != NULL &&
	    spec->data[i] != NULL; i++) {
		if ((rel = plan_below(sbx_data_path(pl, i, path), dir)) ==
		    NULL)
			continue;
		if (fstat(pl->datafd[i], &st) == -1)
			plan_fail(pl->errfd, "fstat data %s:", spec->data[i]);
		if (S_ISDIR(st.st_mode)) {
			if (sbx_mkdirs(dir, rel) == -1)
				plan_fail(pl->errfd, "mkdir %s below %s:", rel,
				    dir);
			continue;
		}
		slash = strrchr(path, '/');
		*slash = '\0';
		if (strcmp(path, dir) != 0 &&
		    sbx_mkdirs(dir, plan_below(path, dir)) == -1)
			plan_fail(pl->errfd, "mkdir %s below %s:", path, dir);
		*slash = '/';
		if ((fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW |
		    O_CLOEXEC, 0444)) == -1)
			plan_fail(pl->errfd, "create %s:", path);
		close(fd);
	}
}

/*
 * A tmpfs over dir that keeps the way to the tree (and a service's
 * data) open: they are bound back last, over mount points made here
 * before it goes read-only.
 */
static void
sbx_cover(struct plan *pl, const char *dir, unsigned long flags,
    const char *opts, int ro)
{
	const char	*rel;

	if (mount("tmpfs", dir, "tmpfs", flags, opts) == -1)
		plan_fail(pl->errfd, "mount tmpfs on %s:", dir);
	if ((rel = plan_below(pl->tree, dir)) != NULL &&
	    sbx_mkdirs(dir, rel) == -1)
		plan_fail(pl->errfd, "mkdir %s below %s:", rel, dir);
	sbx_cover_data(pl, dir);
	if (ro && mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    flags, NULL) == -1)
		plan_fail(pl->errfd, "remount %s read-only:", dir);
}

/*
 * The host's device numbers and modes, read before /dev is covered.
 * Pid 1 is root in the first user namespace: it makes the nodes
 * itself (mknod), which is far cheaper than a bind mount for each and
 * leaves fewer mounts to tear down.
 */
static void
sbx_dev_stat(struct plan *pl, struct stat *st)
{
	char	 path[64];
	int	 i;

	for (i = 0; sbx_devices[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/dev/%s", sbx_devices[i]);
		if (stat(path, &st[i]) == -1) {
			if (errno != ENOENT)
				plan_fail(pl->errfd, "stat %s:", path);
			st[i].st_mode = 0;	/* the host has none */
		} else if (!S_ISCHR(st[i].st_mode))
			plan_fail(pl->errfd, "%s: not a character device",
			    path);
	}
}

static void
sbx_dev(struct plan *pl, const struct stat *st)
{
	char	 path[64];
	mode_t	 um;
	int	 i;

	sbx_cover(pl, "/dev", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755", 0);
	um = umask(0);		/* the host's modes, exactly */
	for (i = 0; sbx_devices[i] != NULL; i++) {
		if (st[i].st_mode == 0)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", sbx_devices[i]);
		if (mknod(path, S_IFCHR | (st[i].st_mode & 0777),
		    st[i].st_rdev) == -1)
			plan_fail(pl->errfd, "mknod %s:", path);
	}
	umask(um);
	if (symlink("/proc/self/fd", "/dev/fd") == -1 ||
	    symlink("/proc/self/fd/0", "/dev/stdin") == -1 ||
	    symlink("/proc/self/fd/1", "/dev/stdout") == -1 ||
	    symlink("/proc/self/fd/2", "/dev/stderr") == -1 ||
	    mkdir("/dev/shm", 01777) == -1)
		plan_fail(pl->errfd, "populate /dev:");
	if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, SBX_TMPSIZE ",mode=1777") == -1)
		plan_fail(pl->errfd, "mount /dev/shm:");
	if (mount(NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NOEXEC, NULL) == -1)
		plan_fail(pl->errfd, "remount /dev read-only:");
}

/* A file or socket covered, read-only, by the null device. */
static void
sbx_null_over(struct plan *pl, const char *path)
{
	if (mount("/dev/null", path, NULL, MS_BIND, NULL) == -1 ||
	    mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NOEXEC, NULL) == -1)
		plan_fail(pl->errfd, "mask %s:", path);
}

/* The masks below the tree (intree) or elsewhere (!intree). */
static void
sbx_hide(struct plan *pl, int intree)
{
	struct stat	 st;
	int		 i;

	for (i = 0; i < pl->nhide; i++) {
		if ((plan_below(pl->hide[i], pl->tree) != NULL) != intree)
			continue;
		/* Under /tmp or an earlier mask it may be gone already. */
		if (stat(pl->hide[i], &st) == -1)
			continue;
		if (S_ISDIR(st.st_mode)) {
			sbx_cover(pl, pl->hide[i], MS_NOSUID | MS_NODEV |
			    MS_NOEXEC, "size=16k,mode=755", 1);
			continue;
		}
		/*
		 * A socket or a key file: the null device answers (so
		 * not nodev: reading it gives nothing, not EACCES).
		 */
		sbx_null_over(pl, pl->hide[i]);
	}
}

/*
 * With egress, the names the manifest allows resolve through a hosts
 * file of their own and nothing else does: written into the fresh /run
 * before it goes read-only, bound over /etc/hosts after.
 */
static void
sbx_hosts_write(struct plan *pl)
{
	size_t	 len = strlen(pl->spec->hosts);
	int	 fd;

	if ((fd = open(SBX_HOSTS, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
	    0644)) == -1 || write(fd, pl->spec->hosts, len) != (ssize_t)len)
		plan_fail(pl->errfd, "write %s:", SBX_HOSTS);
	close(fd);
}

static void
sbx_hosts_bind(struct plan *pl)
{
	struct stat	 st;

	if (stat(SBX_HOSTS, &st) == -1)
		plan_fail(pl->errfd, "egress needs /run for %s:", SBX_HOSTS);
	if (mount(SBX_HOSTS, "/etc/hosts", NULL, MS_BIND, NULL) == -1 ||
	    mount(NULL, "/etc/hosts", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1)
		plan_fail(pl->errfd, "bind %s on /etc/hosts:", SBX_HOSTS);
}

/*
 * /etc/passwd and /etc/group as the view has them, with a line naming
 * the sandbox's uid (gid) if none does, written below /run and bound
 * over them (sbx_idfiles_bind).  A view without the file gets none; a
 * file too large for /run is left as it is.
 */
#define SBX_PASSWD	"/run/factory.passwd"
#define SBX_GROUP	"/run/factory.group"
#define SBX_IDFILEMAX	(24 * 1024)

/* Does a line of buf (len bytes) have id as its third field? */
static int
sbx_idfile_has(const char *buf, size_t len, unsigned int id)
{
	const char	*p = buf, *end = buf + len, *nl, *f;
	char		 want[16];
	size_t		 n;
	int		 i;

	n = (size_t)snprintf(want, sizeof(want), "%u:", id);
	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		for (f = p, i = 0; i < 2 && f < nl; i++)
			if ((f = memchr(f, ':', nl - f)) != NULL)
				f++;
			else
				f = nl;
		if (f + n <= nl && memcmp(f, want, n) == 0)
			return (1);
	}
	return (0);
}

static void
sbx_idfile_write(struct plan *pl, const char *from, const char *to,
    const char *line, unsigned int id)
{
	char	 buf[SBX_IDFILEMAX];
	ssize_t	 n;
	size_t	 len = 0, ll = strlen(line);
	int	 fd;

	if ((fd = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return;
	while (len < sizeof(buf) && (n = read(fd, buf + len,
	    sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len + ll + 1 >= sizeof(buf) || sbx_idfile_has(buf, len, id))
		return;
	if (len > 0 && buf[len - 1] != '\n')
		buf[len++] = '\n';
	memcpy(buf + len, line, ll);
	len += ll;
	if ((fd = open(to, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
	    0644)) == -1 || write(fd, buf, len) != (ssize_t)len)
		plan_fail(pl->errfd, "write %s:", to);
	close(fd);
}

static void
sbx_idfiles_write(struct plan *pl)
{
	const struct sandbox_spec *spec = pl->spec;
	char	 line[128];

	snprintf(line, sizeof(line), "factory:x:%u:%u:factory sandbox:/tmp:"
	    "/bin/sh\n", (unsigned)spec->uid, (unsigned)spec->gid);
	sbx_idfile_write(pl, "/etc/passwd", SBX_PASSWD, line, spec->uid);
	snprintf(line, sizeof(line), "factory:x:%u:\n", (unsigned)spec->gid);
	sbx_idfile_write(pl, "/etc/group", SBX_GROUP, line, spec->gid);
}

static void
sbx_idfile_bind(struct plan *pl, const char *from, const char *to)
{
	struct stat	 st;

	if (stat(from, &st) == -1)
		return;
	if (mount(from, to, NULL, MS_BIND, NULL) == -1 ||
	    mount(NULL, to, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1)
		plan_fail(pl->errfd, "bind %s on %s:", from, to);
}

/*
 * A private /run: an empty read-only tmpfs with only the /run/shm link
 * (and the hosts file).  Host sockets are not enumerated and masked:
 * connecting to a pathname socket is no Landlock right at ABI 7, so
 * the root holds none of the host's, by construction (sbx_mounts).
 */
static void
sbx_run(struct plan *pl)
{
	struct stat	 st;

	if (stat("/run", &st) == -1 || !S_ISDIR(st.st_mode))
		return;
	sbx_cover(pl, "/run", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "size=64k,mode=755", 0);
	if (symlink("/dev/shm", "/run/shm") == -1 && errno != EEXIST)
		plan_fail(pl->errfd, "symlink /run/shm:");
}

/* The hosts file, if any, and /run read-only (after sbx_run). */
static void
sbx_run_seal(struct plan *pl)
{
	struct stat	 st;

	if (stat("/run", &st) == -1 || !S_ISDIR(st.st_mode))
		return;
	if (pl->spec->hosts != NULL)
		sbx_hosts_write(pl);
	if (pl->spec->passwd)
		sbx_idfiles_write(pl);
	if (mount(NULL, "/run", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1)
		plan_fail(pl->errfd, "remount /run read-only:");
}

/*
 * Memfds of this pid namespace (and those below it) are created
 * without execute permission and sealed so (vm.memfd_noexec=2, per pid
 * namespace since Linux 6.3): bytes written to one never run through
 * /proc/self/fd.  Only root may change it, and a namespace may not
 * lower it.  A kernel without it (the parent's probe said so): the
 * agent's filter refuses memfd_create itself.
 */
static void
sbx_memfd_noexec(struct plan *pl)
{
	int	 fd;

	if (!pl->memfd_noexec)
		return;
	if ((fd = open(SBX_MEMFD_NOEXEC, O_WRONLY | O_CLOEXEC)) == -1 ||
	    write(fd, "2\n", 2) != 2)
		plan_fail(pl->errfd, "%s:", SBX_MEMFD_NOEXEC);
	close(fd);
}

/*
 * A detached copy of the host's mounts at path, with attr set.  A
 * child-writable path (the tree: its parent directory is the worker's
 * or the verifier's) is taken only as the directory it is, never
 * through a symbolic link put there after the parent looked.
 */
static int
sbx_clone(struct plan *pl, const char *path, uint64_t attr, int untrusted)
{
	struct mount_attr	 ma = { .attr_set = attr };
	struct stat		 st;
	int			 fd;

	if (!(attr & MOUNT_ATTR_RDONLY))
		ma.attr_clr = MOUNT_ATTR_RDONLY;
	fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_RECURSIVE |
	    (untrusted ? AT_SYMLINK_NOFOLLOW : 0));
	if (fd == -1)
		plan_fail(pl->errfd, "open_tree %s:", path);
	if (untrusted && (fstat(fd, &st) == -1 || !S_ISDIR(st.st_mode))) {
		errno = ENOTDIR;
		plan_fail(pl->errfd, "tree %s:", path);
	}
	/* Pinned: the directory the parent made, not one put in its way. */
	if (untrusted && pl->spec->tree_ino != 0 &&
	    ((uint64_t)st.st_dev != pl->spec->tree_dev ||
	    (uint64_t)st.st_ino != pl->spec->tree_ino))
		plan_fail(pl->errfd, "tree %s: not the directory made for it",
		    path);
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE,
	    &ma, sizeof(ma)) == -1)
		plan_fail(pl->errfd, "mount_setattr %s:", path);
	return (fd);
}

/*
 * Attach the detached mount fd at path in the new root, making the
 * directories (or, for a file, the empty file) it is mounted on.
 */
static void
sbx_attach(struct plan *pl, int fd, const char *path)
{
	struct stat	 st;
	char		 parent[PATH_MAX], *p;
	int		 f;

	if (lstat(path, &st) == -1) {
		if (fstat(fd, &st) == -1)
			plan_fail(pl->errfd, "fstat %s:", path);
		strlcpy(parent, path, sizeof(parent));
		if (!S_ISDIR(st.st_mode) && (p = strrchr(parent, '/')) != NULL)
			*p = '\0';
		if (parent[0] != '\0' && sbx_mkdirs("", parent + 1) == -1)
			plan_fail(pl->errfd, "mkdir %s:", parent);
		if (!S_ISDIR(st.st_mode)) {
			if ((f = open(path, O_CREAT | O_EXCL | O_WRONLY |
			    O_CLOEXEC, 0444)) == -1)
				plan_fail(pl->errfd, "create %s:", path);
			close(f);
		}
	}
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, path,
	    MOVE_MOUNT_F_EMPTY_PATH) == -1)
		plan_fail(pl->errfd, "attach %s:", path);
	close(fd);
}

/*
 * Everything the new root takes from the host, taken while the host's
 * tree is still there: the allowlisted system directories (or their
 * symlinks), the binds, the tree.
 */
static void
sbx_take_root(struct plan *pl, int *rootfd, char (*link)[PATH_MAX])
{
	const uint64_t	 ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			     MOUNT_ATTR_NODEV;
	struct stat	 st;
	ssize_t		 n;
	int		 i;

	for (i = 0; plan_rootdirs[i] != NULL; i++) {
		rootfd[i] = -1;
		link[i][0] = '\0';
		/* With an image, nothing of the host's system. */
		if (pl->image[0] != '\0' || lstat(plan_rootdirs[i], &st) == -1)
			continue;	/* not on this host */
		if (S_ISLNK(st.st_mode)) {
			n = readlink(plan_rootdirs[i], link[i], PATH_MAX - 1);
			if (n <= 0)
				plan_fail(pl->errfd, "readlink %s:",
				    plan_rootdirs[i]);
			link[i][n] = '\0';
		} else if (S_ISDIR(st.st_mode))
			rootfd[i] = sbx_clone(pl, plan_rootdirs[i], ro, 0);
	}
}

/*
 * One path of a service's data, below rootfd: the tree of the run it
 * serves, whose content that run's agent wrote.  A link in it may
 * lead anywhere below the tree, never out of it (RESOLVE_BENEATH; no
 * /proc magic link); where openat2(2) is refused, no link at all is
 * followed (open_beneath's walk).  A directory or a regular file only.
 */
static int
sbx_data_open(struct plan *pl, int rootfd, const char *rel)
{
	struct open_how	 how;
	struct stat	 st;
	int		 fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	if (fd == -1 && errno == ENOSYS)
		fd = open_beneath(rootfd, rel, O_PATH);
	if (fd == -1 && errno == EXDEV)
		plan_fail(pl->errfd, "data %s: leaves the tree", rel);
	if (fd == -1)
		plan_fail(pl->errfd, "data %s:", rel);
	if (fstat(fd, &st) == -1)
		plan_fail(pl->errfd, "data %s:", rel);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		plan_fail(pl->errfd, "data %s: not a directory or a regular "
		    "file", rel);
	return (fd);
}

/*
 * A service's data (spec->data), each a detached copy of what its path
 * names below the tree of the run it serves, read-only, nosuid, nodev
 * and noexec.  That tree is taken as the directory the parent pinned,
 * never through a link put in its place.
 */
static void
sbx_take_data(struct plan *pl)
{
	const struct sandbox_spec *spec = pl->spec;
	struct mount_attr	 ma = { .attr_set = MOUNT_ATTR_RDONLY |
				     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				     MOUNT_ATTR_NOEXEC };
	struct stat		 st;
	int			 rootfd, fd, i;

	if (spec->data_root == NULL)
		return;
	if ((rootfd = open(spec->data_root, O_PATH | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		plan_fail(pl->errfd, "data %s:", spec->data_root);
	if (fstat(rootfd, &st) == -1 ||
	    (uint64_t)st.st_dev != spec->data_dev ||
	    (uint64_t)st.st_ino != spec->data_ino)
		plan_fail(pl->errfd, "data %s: not the tree of the run it "
		    "serves", spec->data_root);
	for (i = 0; spec->data[i] != NULL; i++) {
		fd = sbx_data_open(pl, rootfd, spec->data[i]);
		pl->datafd[i] = (int)syscall(SYS_open_tree, fd, "",
		    AT_EMPTY_PATH | OPEN_TREE_CLONE | AT_RECURSIVE |
		    OPEN_TREE_CLOEXEC);
		if (pl->datafd[i] == -1)
			plan_fail(pl->errfd, "open_tree data %s:",
			    spec->data[i]);
		close(fd);
		if (syscall(SYS_mount_setattr, pl->datafd[i], "",
		    AT_EMPTY_PATH | AT_RECURSIVE, &ma, sizeof(ma)) == -1)
			plan_fail(pl->errfd, "mount_setattr data %s:",
			    spec->data[i]);
	}
	close(rootfd);
}

/* data_root/PATH of the service's data path i, in buf of PATH_MAX. */
static const char *
sbx_data_path(struct plan *pl, int i, char *buf)
{
	if ((size_t)snprintf(buf, PATH_MAX, "%s/%s", pl->spec->data_root,
	    pl->spec->data[i]) >= PATH_MAX)
		plan_fail(pl->errfd, "data %s: path too long",
		    pl->spec->data[i]);
	return (buf);
}

/*
 * The attempt's own: the binds, the tree, and a service's data (into
 * pl->datafd).
 */
void
sbx_take_plan(struct plan *pl, int *bindfd, int *treefd)
{
	const uint64_t	 ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			     MOUNT_ATTR_NODEV;
	int		 i;

	for (i = 0; i < pl->nbinds; i++)
		bindfd[i] = sbx_clone(pl, pl->binds[i], ro |
		    (pl->bexec[i] ? 0 : MOUNT_ATTR_NOEXEC), 0);
	*treefd = sbx_clone(pl, pl->tree, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 1);
	sbx_take_data(pl);
}

/*
 * An empty tmpfs becomes the root: built at SBX_STAGE, then
 * pivot_root(".", ".") and the host's tree, now on top, detached.
 * Nothing of the host is reachable after this but the fds taken.
 */
static void
sbx_newroot(struct plan *pl)
{
	if (mount("tmpfs", SBX_STAGE, "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, "size=1m,mode=755") == -1)
		plan_fail(pl->errfd, "mount the new root:");
	if (chdir(SBX_STAGE) == -1 ||
	    syscall(SYS_pivot_root, ".", ".") == -1 ||
	    umount2(".", MNT_DETACH) == -1 || chdir("/") == -1)
		plan_fail(pl->errfd, "pivot_root:");
}

/*
 * With an image, the root is an overlay: the image, read-only, below a
 * small tmpfs that only takes the mount points the view needs (an
 * image need not have /proc, and cannot be written: it is shared and
 * content-addressed).  Once they exist the whole root goes read-only;
 * the image itself is never written.  Redirects in the image are not
 * followed: what a path names is what the image's tree says.
 */
static void
sbx_imageroot(struct plan *pl, int imagefd)
{
	char	 opts[PATH_MAX + 128];

	if (mount("tmpfs", SBX_STAGE, "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, "size=4m,mode=755") == -1)
		plan_fail(pl->errfd, "mount the image's upper layer:");
	if (mkdir(SBX_STAGE "/u", 0755) == -1 ||
	    mkdir(SBX_STAGE "/w", 0755) == -1 ||
	    mkdir(SBX_STAGE "/r", 0755) == -1)
		plan_fail(pl->errfd, "mkdir in %s:", SBX_STAGE);
	/* By the fd taken before the stage covered the host's /tmp. */
	if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=/proc/self/fd/%d,"
	    "upperdir=" SBX_STAGE "/u,workdir=" SBX_STAGE "/w,"
	    "redirect_dir=nofollow,volatile", imagefd) >= sizeof(opts))
		plan_fail(pl->errfd, "image %s: options too long", pl->image);
	if (mount("overlay", SBX_STAGE "/r", "overlay", MS_NOSUID | MS_NODEV,
	    opts) == -1)
		plan_fail(pl->errfd, "mount image %s:", pl->image);
	if (chdir(SBX_STAGE "/r") == -1 ||
	    syscall(SYS_pivot_root, ".", ".") == -1 ||
	    umount2(".", MNT_DETACH) == -1 || chdir("/") == -1)
		plan_fail(pl->errfd, "pivot_root into the image:");
	close(imagefd);
}

/*
 * A mount point of the view in the image's root: a real directory
 * (dir) or an empty regular file.  Whatever the image has there, a
 * symbolic link (/tmp -> /), a file where a directory goes, goes
 * first: a mount never follows anything the image put in its way.
 */
static void
sbx_mkpoint(struct plan *pl, const char *path, int dir)
{
	struct stat	 st;
	char		 parent[PATH_MAX], *p;
	int		 fd;

	if (lstat(path, &st) == 0) {
		if (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))
			return;
		if ((S_ISDIR(st.st_mode) ? rmdir(path) : unlink(path)) == -1)
			plan_fail(pl->errfd, "image: remove %s to mount on it:",
			    path);
	}
	strlcpy(parent, path, sizeof(parent));
	if ((p = strrchr(parent, '/')) != NULL && p != parent) {
		*p = '\0';
		sbx_mkpoint(pl, parent, 1);
	}
	if (dir) {
		if (mkdir(path, 0755) == -1)
			plan_fail(pl->errfd, "image: mkdir %s:", path);
		return;
	}
	if ((fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC |
	    O_NOFOLLOW, 0444)) == -1)
		plan_fail(pl->errfd, "image: create %s:", path);
	close(fd);
}

/*
 * The part of the view that is the same for every attempt on the
 * host's root: the empty root with the system directories, a private
 * /tmp, /run (still writable) and /dev.  In the current mount
 * namespace, which is made private first.
 */
static void
sbx_view_base(struct plan *pl)
{
	struct stat	 devst[sizeof(sbx_devices) / sizeof(sbx_devices[0])];
	char		 link[SBX_NROOTDIRS][PATH_MAX];
	int		 rootfd[SBX_NROOTDIRS], i;

	sbx_take_root(pl, rootfd, link);
	sbx_dev_stat(pl, devst);
	sbx_newroot(pl);
	for (i = 0; plan_rootdirs[i] != NULL; i++) {
		if (link[i][0] != '\0' && symlink(link[i],
		    plan_rootdirs[i]) == -1)
			plan_fail(pl->errfd, "symlink %s:", plan_rootdirs[i]);
		if (rootfd[i] != -1)
			sbx_attach(pl, rootfd[i], plan_rootdirs[i]);
	}
	if (mkdir("/tmp", 0755) == -1 || mkdir("/run", 0755) == -1 ||
	    mkdir("/dev", 0755) == -1 || mkdir("/proc", 0555) == -1)
		plan_fail(pl->errfd, "mkdir in the new root:");
	sbx_cover(pl, "/tmp", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    SBX_TMPSIZE ",mode=1777", 0);
	sbx_run(pl);
	sbx_dev(pl, devst);
}

/* One directory of a home file's name: made, or taken if pid 1 made it. */
static int
sbx_home_dir(struct plan *pl, int dirfd, const char *name)
{
	const struct sandbox_spec *spec = pl->spec;
	int	 fd;

	if (mkdirat(dirfd, name, 0700) == 0) {
		if (fchownat(dirfd, name, spec->uid, spec->gid,
		    AT_SYMLINK_NOFOLLOW) == -1)
			plan_fail(pl->errfd, "chown HOME's %s:", name);
	} else if (errno != EEXIST)
		plan_fail(pl->errfd, "mkdir HOME's %s:", name);
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		plan_fail(pl->errfd, "open HOME's %s:", name);
	return (fd);
}

/*
 * The files a client reads to find its endpoint (spec->home), written
 * into the fresh /tmp, the agent's HOME, as the agent's own: nothing
 * of the agent runs yet, and each name is plain (plan.c), opened
 * without following links, each file created new.
 */
static void
sbx_home_write(struct plan *pl)
{
	const struct sandbox_spec *spec = pl->spec;
	char		 name[SBX_HOMENAME + 1], *p, *slash;
	size_t		 len;
	int		 i, dirfd, fd;

	for (i = 0; spec->home != NULL && spec->home[i] != NULL; i += 2) {
		strlcpy(name, spec->home[i], sizeof(name));
		if ((dirfd = open("/tmp", O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1)
			plan_fail(pl->errfd, "open /tmp:");
		for (p = name; (slash = strchr(p, '/')) != NULL;
		    p = slash + 1) {
			*slash = '\0';
			fd = sbx_home_dir(pl, dirfd, p);
			close(dirfd);
			dirfd = fd;
		}
		len = strlen(spec->home[i + 1]);
		if ((fd = openat(dirfd, p, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1 ||
		    write(fd, spec->home[i + 1], len) != (ssize_t)len ||
		    fchown(fd, spec->uid, spec->gid) == -1)
			plan_fail(pl->errfd, "write HOME's %s:", spec->home[i]);
		close(fd);
		close(dirfd);
	}
}

/*
 * The part of the view that is the attempt's: the hosts file and /run
 * read-only, /proc of its pid namespace, the manifest's exec paths,
 * the masks; the tree and the repository's objects last, on top of
 * whatever covers their paths; the root itself read-only.  bindfd and
 * treefd were taken from the host's mounts (sbx_take_plan).
 */
static void
sbx_view_finish(struct plan *pl, int *bindfd, int treefd)
{
	const char	*rel;
	char		 path[PATH_MAX];
	int		 i;

	/* The way to a tree below /run, made before it is read-only. */
	if ((rel = plan_below(pl->tree, "/run")) != NULL &&
	    sbx_mkdirs("/run", rel) == -1)
		plan_fail(pl->errfd, "mkdir %s below /run:", rel);
	sbx_run_seal(pl);
	if (pl->spec->hosts != NULL)
		sbx_hosts_bind(pl);
	if (pl->spec->passwd) {
		sbx_idfile_bind(pl, SBX_PASSWD, "/etc/passwd");
		sbx_idfile_bind(pl, SBX_GROUP, "/etc/group");
	}
	sbx_home_write(pl);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "hidepid=invisible") == -1)
		plan_fail(pl->errfd, "mount /proc:");
	sbx_memfd_noexec(pl);
	sbx_reserve(pl);
	for (i = 0; i < pl->nbinds; i++)
		if (pl->bexec[i])
			sbx_attach(pl, bindfd[i], pl->binds[i]);
	sbx_hide(pl, 0);
	sbx_attach(pl, treefd, pl->tree);
	/* A service's data, at its paths in the tree of the run it serves. */
	for (i = 0; pl->spec->data_root != NULL && pl->spec->data[i] != NULL;
	    i++)
		sbx_attach(pl, pl->datafd[i], sbx_data_path(pl, i, path));
	for (i = 0; i < pl->nbinds; i++)
		if (!pl->bexec[i])
			sbx_attach(pl, bindfd[i], pl->binds[i]);
	/* The image's programs run; the host's empty tmpfs root runs none. */
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | (pl->image[0] != '\0' ? 0 : MS_NOEXEC),
	    NULL) == -1)
		plan_fail(pl->errfd, "remount / read-only:");
	/* Masks inside the tree (.git/hooks, say) go over the tree. */
	sbx_hide(pl, 1);
}

/*
 * The host-root part of the view built ahead, by a launcher of the
 * pool before its plan (launcher.c), in the mount namespace it has
 * just made: no attempt's path is in it yet.
 */
void
sbx_view_prepare(int errfd)
{
	struct plan	 pl;

	memset(&pl, 0, sizeof(pl));	/* no tree, no image */
	pl.errfd = errfd;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		plan_fail(errfd, "make / private:");
	sbx_view_base(&pl);
}

/*
 * The mount view, whole.  What the root takes from the host is cloned
 * first; then an empty root replaces the host's, the system
 * directories go in, a private /tmp, /run, /dev and /proc, and the
 * attempt's part (sbx_view_finish).  With pl->prepared, the first part
 * is there already and the binds and the tree were taken.
 */
static void
sbx_mounts(struct plan *pl)
{
	int		 bindfd[SANDBOX_MAXBINDS], treefd, imagefd = -1;

	if (pl->prepared) {
		sbx_view_finish(pl, pl->bindfd, pl->treefd);
		return;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		plan_fail(pl->errfd, "make / private:");
	if (pl->image[0] == '\0') {
		sbx_take_plan(pl, bindfd, &treefd);
		sbx_view_base(pl);
		sbx_view_finish(pl, bindfd, treefd);
		return;
	}
	/* The image's directory, as it is now, wherever it lives. */
	if ((imagefd = open(pl->image, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		plan_fail(pl->errfd, "image %s:", pl->image);
	sbx_take_plan(pl, bindfd, &treefd);
	{
		struct stat	 devst[sizeof(sbx_devices) /
				     sizeof(sbx_devices[0])], st;
		char		 path[PATH_MAX];
		int		 i;

		sbx_dev_stat(pl, devst);
		sbx_imageroot(pl, imagefd);
		sbx_mkpoint(pl, "/tmp", 1);
		sbx_mkpoint(pl, "/run", 1);
		sbx_mkpoint(pl, "/dev", 1);
		sbx_mkpoint(pl, "/proc", 1);
		if (pl->spec->hosts != NULL)
			sbx_mkpoint(pl, "/etc/hosts", 0);
		/* The tree's own path, made before / goes read-only. */
		sbx_mkpoint(pl, pl->tree, 1);
		for (i = 0; pl->spec->data_root != NULL &&
		    pl->spec->data[i] != NULL; i++) {
			if (fstat(pl->datafd[i], &st) == -1)
				plan_fail(pl->errfd, "fstat data %s:",
				    pl->spec->data[i]);
			sbx_mkpoint(pl, sbx_data_path(pl, i, path),
			    S_ISDIR(st.st_mode));
		}
		sbx_cover(pl, "/tmp", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		    SBX_TMPSIZE ",mode=1777", 0);
		sbx_run(pl);
		sbx_dev(pl, devst);
	}
	sbx_view_finish(pl, bindfd, treefd);
}

static void
sbx_rlimit(int fd, int res, const char *name, uint64_t soft, uint64_t hard)
{
	struct rlimit	 rl;

	rl.rlim_cur = soft;
	rl.rlim_max = hard;
	if (setrlimit(res, &rl) == -1)
		plan_fail(fd, "setrlimit %s:", name);
}

static void
sbx_rlimits(const struct sandbox_spec *spec, int fd)
{
	uint64_t	 s;

	if (spec->cpu_ms != 0) {
		/* SIGXCPU at the soft limit, SIGKILL a second later. */
		s = (spec->cpu_ms + 999) / 1000;
		sbx_rlimit(fd, RLIMIT_CPU, "cpu", s, s + 1);
	}
	if (spec->fsize != 0)
		sbx_rlimit(fd, RLIMIT_FSIZE, "fsize", spec->fsize,
		    spec->fsize);
	if (spec->nofile != 0)
		sbx_rlimit(fd, RLIMIT_NOFILE, "nofile", spec->nofile,
		    spec->nofile);
	sbx_rlimit(fd, RLIMIT_CORE, "core", 0, 0);
	/* A launcher of the pool may have come with room (launcher.c). */
	sbx_rlimit(fd, RLIMIT_NICE, "nice", 0, 0);
}

/* What the agent may do in its tree, /tmp and /dev/shm. */
#define SBX_LL_RW	(LL_FS_READ | LL_FS_WRITE | LL_FS_CREATE | \
			 LANDLOCK_ACCESS_FS_MAKE_FIFO | \
			 LANDLOCK_ACCESS_FS_MAKE_SOCK)

/*
 * The exec rules of spec: its manifest's paths, else the system's
 * binary directories (resolved once, sbx_exec_resolve, where the
 * host's root or the view built ahead shows them; an image's own
 * links are not the host's).
 */
static const char *const *
sbx_exec_list(const struct sandbox_spec *spec)
{
	if (spec != NULL && spec->exec_allow != NULL)
		return ((const char *const *)spec->exec_allow);
	return ((spec == NULL || spec->image == NULL) &&
	    sbx_exec_dirs[0] != NULL ? sbx_exec_dirs : sbx_exec_default);
}

/*
 * The agent's Landlock ruleset, prepared while still root, with the
 * rules of the view (sbx_landlock_attempt adds the attempt's): the
 * root read, /tmp and /dev/shm written, the devices, and execution
 * from ex only.
 */
static struct landlock *
sbx_landlock_view(const char *const *ex, int fd)
{
	const uint64_t	 dev = LANDLOCK_ACCESS_FS_READ_FILE |
			     LANDLOCK_ACCESS_FS_WRITE_FILE |
			     LANDLOCK_ACCESS_FS_IOCTL_DEV;
	struct landlock	*ll;
	char		 path[64];
	int		 i;

	ll = landlock_new(LL_FS_ALL, LANDLOCK_ACCESS_NET_BIND_TCP |
	    LANDLOCK_ACCESS_NET_CONNECT_TCP,
	    LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL);
	if (ll == NULL)
		plan_fail(fd, "landlock ruleset:");
	if (landlock_allow_path(ll, "/", LL_FS_READ) == -1 ||
	    landlock_allow_path(ll, "/tmp", SBX_LL_RW) == -1 ||
	    landlock_allow_path(ll, "/dev/shm", SBX_LL_RW) == -1)
		plan_fail(fd, "landlock rule:");
	for (i = 0; sbx_devices[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/dev/%s", sbx_devices[i]);
		if (landlock_allow_path(ll, path, dev) == -1 &&
		    errno != ENOENT)
			plan_fail(fd, "landlock rule %s:", path);
	}
	for (i = 0; ex[i] != NULL; i++)
		if (landlock_allow_path(ll, ex[i], LL_FS_READ | LL_FS_EXEC) ==
		    -1 && errno != ENOENT)
			plan_fail(fd, "landlock rule %s:", ex[i]);
	return (ll);
}

/*
 * The attempt's rules: its tree written, and TCP connect to the egress
 * ports only (inside the namespace only the parent's listeners are
 * there to reach).
 */
static void
sbx_landlock_attempt(struct landlock *ll, const char *tree,
    const uint16_t *ports, int nports, int fd)
{
	int		 i;

	if (landlock_allow_path(ll, tree, SBX_LL_RW) == -1)
		plan_fail(fd, "landlock rule %s:", tree);
	for (i = 0; i < nports; i++)
		if (landlock_allow_port(ll, ports[i],
		    LANDLOCK_ACCESS_NET_CONNECT_TCP) == -1)
			plan_fail(fd, "landlock rule port %u:",
			    (unsigned)ports[i]);
}

/*
 * Capabilities: the bounding set needs CAP_SETPCAP to shrink, which
 * setresuid() takes away, so it is emptied before the uid change
 * (sbx_confine_prepare, or ahead, sbx_confine_ahead); effective and
 * permitted go with the uid change itself, and are cleared and checked
 * again after it.
 */
static void
sbx_dropbounding(int fd)
{
	int	 cap;

	for (cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (errno == EINVAL)
				break;
			plan_fail(fd, "drop capability %d:", cap);
		}
}

static void
sbx_dropcaps(int fd)
{
	struct __user_cap_header_struct	 h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct	 d[2];

	memset(d, 0, sizeof(d));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 ||
	    syscall(SYS_capset, &h, d) == -1 ||
	    syscall(SYS_capget, &h, d) == -1)
		plan_fail(fd, "drop capabilities:");
	if (d[0].effective | d[0].permitted | d[0].inheritable |
	    d[1].effective | d[1].permitted | d[1].inheritable)
		plan_fail(fd, "capabilities remain after setresuid");
	if (prctl(PR_CAPBSET_READ, 0, 0, 0, 0) != 0)
		plan_fail(fd, "bounding set not empty");
}

static void
sbx_stdio(const struct sandbox_spec *spec, int fd)
{
	int	 lfd, nfd;

	/* Move the log out of the way first: it may be 0, 1 or 2. */
	if ((lfd = fcntl(spec->logfd, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    (nfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    dup2(nfd, 0) == -1 || dup2(lfd, 1) == -1 || dup2(lfd, 2) == -1)
		plan_fail(fd, "stdio:");
	close(lfd);
	if (nfd > 2)
		close(nfd);
}

/*
 * What of the confinement does not depend on the process that takes
 * it: the Landlock ruleset (of the view as it is now) and the bounding
 * set emptied (it needs CAP_SETPCAP to shrink, which setresuid()
 * takes away, and nothing runs with it that could exec).  Pid 1 does
 * this once its view is final, before anything of the agent exists;
 * an operator's shell does it right before sbx_confine.  A launcher of
 * the pool has done most of it already (sbx_confine_ahead).  Errors go
 * to fd.
 */
static struct landlock	*sbx_ll_ahead;	/* the view's rules, made ahead */
static int		 sbx_bounded;	/* the bounding set is empty */

struct landlock *
sbx_confine_prepare(const struct sandbox_spec *spec, const char *tree,
    const uint16_t *ports, int nports, int fd)
{
	struct landlock	*ll;
	int		 i;

	/* Rules made ahead are of the host's root and its binaries. */
	if (sbx_ll_ahead != NULL && spec->exec_allow == NULL &&
	    spec->image == NULL)
		ll = sbx_ll_ahead;
	else {
		landlock_free(sbx_ll_ahead);
		ll = sbx_landlock_view(sbx_exec_list(spec), fd);
	}
	sbx_ll_ahead = NULL;
	sbx_landlock_attempt(ll, tree, ports, nports, fd);
	/* A service listens on its own ports; nothing else binds any. */
	for (i = 0; i < spec->nbind; i++)
		if (landlock_allow_port(ll, spec->bind[i],
		    LANDLOCK_ACCESS_NET_BIND_TCP) == -1)
			plan_fail(fd, "landlock rule bind port %u:",
			    (unsigned)spec->bind[i]);
	if (!sbx_bounded)
		sbx_dropbounding(fd);
	sbx_bounded = 1;
	return (ll);
}

/*
 * The part of sbx_confine_prepare a launcher of the pool does before
 * its plan, in the view it built ahead (sbx_view_prepare), which its
 * pid 1 goes on in: the view's rules, for an attempt on the host's
 * root with the system's binaries, and the bounding set.  Neither is
 * of any use to the launcher or its pid 1, which exec nothing; a plan
 * with other exec paths or an image gets its rules made afresh.
 */
void
sbx_confine_ahead(int fd)
{
	sbx_ll_ahead = sbx_landlock_view(sbx_exec_list(NULL), fd);
	sbx_dropbounding(fd);
	sbx_bounded = 1;
}

/*
 * Everything else between a root process in the sandbox's namespaces
 * and the execve of an agent or an operator's shell, in the fixed
 * order: rlimits, chdir, groups, gid, uid, capabilities, no_new_privs,
 * Landlock (ll, of sbx_confine_prepare: freed), fds, seccomp.  Errors
 * go to fd.
 */
void
sbx_confine(const struct sandbox_spec *spec, const char *tree,
    struct landlock *ll, int fd)
{
	uid_t		 ru, eu, su;

	sbx_rlimits(spec, fd);
	if (chdir(tree) == -1)
		plan_fail(fd, "chdir %s:", tree);
	if (setgroups(0, NULL) == -1)
		plan_fail(fd, "setgroups:");
	if (setresgid(spec->gid, spec->gid, spec->gid) == -1)
		plan_fail(fd, "setresgid %u:", (unsigned)spec->gid);
	if (setresuid(spec->uid, spec->uid, spec->uid) == -1)
		plan_fail(fd, "setresuid %u:", (unsigned)spec->uid);
	if (getresuid(&ru, &eu, &su) == -1 || ru != spec->uid ||
	    eu != spec->uid || su != spec->uid)
		plan_fail(fd, "uid did not change");
	sbx_dropcaps(fd);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		plan_fail(fd, "no_new_privs:");
	if (landlock_restrict(ll) == -1)
		plan_fail(fd, "landlock restrict:");
	landlock_free(ll);
	/* Close-on-exec, not close: fd must carry an execve failure. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		plan_fail(fd, "close_range:");
	/*
	 * One filter: the argument checks and the denylist (sandbox.c).
	 * FLAG_LOG: every denial, EPERM ones included, is an audit record
	 * (type 1326, with the attempt's uid and the syscall number) in
	 * the kernel log, which the parent collects (audit.c).
	 */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_LOG, &sbx_prog) == -1)
		plan_fail(fd, "seccomp:");
}

/* The agent: pid 2 of the namespace, ll its ruleset.  Never returns. */
static __dead void
sbx_agent(struct plan *pl, struct landlock *ll, int fd)
{
	const struct sandbox_spec *spec = pl->spec;

	/* The stdio dup2s below must not land on the error pipe. */
	if (fd <= 2 && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1)
		_exit(127);
	if (setsid() == -1)
		plan_fail(fd, "setsid:");
	sbx_stdio(spec, fd);
	sbx_confine(spec, pl->tree, ll, fd);
	execve(spec->argv[0], spec->argv, spec->env);
	plan_fail(fd, "exec %s:", spec->argv[0]);
}

static void
sbx_send(int sock, int tag, const void *data, size_t len)
{
	char	 buf[16];

	if (len > sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	buf[0] = (char)tag;
	memcpy(buf + 1, data, len);
	(void)send(sock, buf, len + 1, MSG_NOSIGNAL);
}

/*
 * The watchdog's instant, CLOCK_BOOTTIME: armed, or disarmed for 0.
 * The parent moves it with "W" and eight bytes (ms, network order).
 */
static uint64_t	 sbx_watchdog_at;	/* the instant armed, 0: none */

static void	 sbx_watchdog_read(int, int);

static void
sbx_watchdog_arm(int tfd, uint64_t ms)
{
	struct itimerspec	 it;

	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)(ms / 1000);
	it.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &it, NULL) == -1)
		_exit(127);
	sbx_watchdog_at = ms;
}

/*
 * The timer fired: spent only if no newer instant came meanwhile (a
 * pid 1 frozen between the socket and the timer, then thawed after a
 * renewal moved it on, finds the "W" first) and the clock is past it.
 */
static int
sbx_watchdog_spent(int sock, int tfd)
{
	struct timespec	 ts;
	uint64_t	 now;

	sbx_watchdog_read(sock, tfd);
	if (sbx_watchdog_at == 0 || clock_gettime(CLOCK_BOOTTIME, &ts) == -1)
		return (sbx_watchdog_at != 0);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return (now >= sbx_watchdog_at);
}

/* A message of the parent: a new instant, or EOF (the parent died). */
static void
sbx_watchdog_read(int sock, int tfd)
{
	unsigned char	 m[16];
	uint64_t	 ms;
	ssize_t		 n;
	int		 i;

	for (;;) {
		n = recv(sock, m, sizeof(m), MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0)
			_exit(127);
		/* Anything else from the parent is a broken parent. */
		if (n != 9 || m[0] != 'W')
			_exit(127);
		for (ms = 0, i = 1; i < 9; i++)
			ms = ms << 8 | m[i];
		sbx_watchdog_arm(tfd, ms);
	}
}

/*
 * A service's ready command (spec->ready), which pid 1 runs until it
 * exits 0: forked, confined exactly as the service (its own Landlock
 * ruleset, made with the service's), its output in the service's
 * log.  Each failure is "N" and its wait status to the parent, and
 * the next try waits twice as long, up to SBX_READY_MAXMS; one that
 * runs longer than SBX_READY_RUNMS is killed, and fails.  Success is
 * "Y", once; the parent keeps the time (ready-timeout).
 */
#define SBX_READY_FIRSTMS	100
#define SBX_READY_MAXMS		2000
#define SBX_READY_RUNMS		10000

struct sbx_ready {
	struct plan	*pl;
	struct landlock	*ll;		/* NULL once it is ready */
	int		 tfd;
	pid_t		 pid;		/* the try that runs, or -1 */
	uint64_t	 wait_ms;	/* before the next try */
};

static void
sbx_timer_in(int tfd, uint64_t ms)
{
	struct itimerspec	 it;

	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)(ms / 1000);
	it.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
	if (timerfd_settime(tfd, 0, &it, NULL) == -1)
		_exit(127);
}

static __dead void
sbx_ready_exec(struct sbx_ready *rd, int sock)
{
	const struct sandbox_spec *spec = rd->pl->spec;
	sigset_t	 none;
	int		 fd = spec->logfd;

	close(sock);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) == -1 || setsid() == -1)
		plan_fail(fd, "ready: setsid:");
	sbx_stdio(spec, fd);
	sbx_confine(spec, rd->pl->tree, rd->ll, fd);
	execve(spec->ready[0], spec->ready, spec->env);
	/* A line of the service's log, which its stderr is. */
	dprintf(2, "factory: ready: exec %s: %s\n", spec->ready[0],
	    strerror(errno));
	_exit(127);
}

static void
sbx_ready_try(struct sbx_ready *rd, int sock)
{
	pid_t	 pid;

	if ((pid = fork()) == -1) {
		sbx_timer_in(rd->tfd, rd->wait_ms);
		return;
	}
	if (pid == 0)
		sbx_ready_exec(rd, sock);
	rd->pid = pid;
	sbx_timer_in(rd->tfd, SBX_READY_RUNMS);
}

/* The try that ran ended with st. */
static void
sbx_ready_ended(struct sbx_ready *rd, int sock, int st)
{
	rd->pid = -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		sbx_send(sock, 'Y', "", 0);
		sbx_timer_in(rd->tfd, 0);	/* disarmed */
		landlock_free(rd->ll);
		rd->ll = NULL;
		return;
	}
	sbx_send(sock, 'N', &st, sizeof(st));
	sbx_timer_in(rd->tfd, rd->wait_ms);
	if ((rd->wait_ms *= 2) > SBX_READY_MAXMS)
		rd->wait_ms = SBX_READY_MAXMS;
}

/* Its timer: the next try, or the end of one that ran too long. */
static void
sbx_ready_timer(struct sbx_ready *rd, int sock)
{
	uint64_t	 n;

	if (read(rd->tfd, &n, sizeof(n)) != (ssize_t)sizeof(n) ||
	    rd->ll == NULL)
		return;
	if (rd->pid != -1)
		(void)kill(rd->pid, SIGKILL);
	else
		sbx_ready_try(rd, sock);
}

/*
 * pid 1: reap everything, report the agent, exit with it.  A fleet
 * claim's sandbox also has a watchdog (spec->watchdog_ms): if the
 * parent has not moved it on by then, pid 1 says "W" and exits, and
 * the kernel kills everything in the namespace.  The parent moves it
 * before it thaws a frozen sandbox, so a thaw never finds it spent.
 */
static __dead void
sbx_reap(int sock, pid_t agent, uint64_t watchdog, struct sbx_ready *rd)
{
	struct pollfd	 pfd[4];
	sigset_t	 mask;
	uint64_t	 n;
	pid_t		 pid;
	int		 st, sfd, tfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) == -1 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) == -1 ||
	    (tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC |
	    TFD_NONBLOCK)) == -1)
		_exit(127);
	sbx_watchdog_arm(tfd, watchdog);
	pfd[0].fd = sfd;
	pfd[1].fd = sock;
	pfd[2].fd = tfd;
	pfd[3].fd = -1;
	if (rd != NULL) {
		if ((rd->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC |
		    TFD_NONBLOCK)) == -1)
			_exit(127);
		pfd[3].fd = rd->tfd;
		rd->pid = -1;
		rd->wait_ms = SBX_READY_FIRSTMS;
		sbx_timer_in(rd->tfd, SBX_READY_FIRSTMS);
	}
	for (;;) {
		/* Every child that ended, before waiting again. */
		while ((pid = waitpid(-1, &st, WNOHANG)) != 0) {
			if (pid == -1 && errno == EINTR)
				continue;
			if (pid == -1)
				_exit(127);
			if (rd != NULL && pid == rd->pid)
				sbx_ready_ended(rd, sock, st);
			if (pid != agent)
				continue;
			sbx_send(sock, 'S', &st, sizeof(st));
			if (WIFEXITED(st))
				_exit(WEXITSTATUS(st));
			_exit(128 + WTERMSIG(st));
		}
		pfd[0].events = pfd[1].events = pfd[2].events = POLLIN;
		pfd[3].events = POLLIN;
		pfd[3].revents = 0;
		if (poll(pfd, rd != NULL ? 4 : 3, -1) == -1) {
			if (errno == EINTR)
				continue;
			_exit(127);
		}
		if (pfd[0].revents != 0) {
			struct signalfd_siginfo	 si;

			while (read(sfd, &si, sizeof(si)) > 0)
				;
		}
		/* A new instant first: it may be the one a thaw brought. */
		if (pfd[1].revents != 0)
			sbx_watchdog_read(sock, tfd);
		if (read(tfd, &n, sizeof(n)) == (ssize_t)sizeof(n) &&
		    sbx_watchdog_spent(sock, tfd)) {
			sbx_send(sock, 'W', "", 0);
			_exit(125);
		}
		if (pfd[3].revents != 0)
			sbx_ready_timer(rd, sock);
	}
}

/* Every descriptor from 1 on but those of keep (ascending, -1 ignored). */
static void
sbx_close_but(const int *keep, int n)
{
	unsigned int	 from = 1;
	int		 i;

	for (i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/* A fresh network namespace's loopback is down: egress needs it up. */
static void
sbx_lo_up(struct plan *pl)
{
	struct ifreq	 ifr;
	int		 s;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		plan_fail(pl->errfd, "socket:");
	memset(&ifr, 0, sizeof(ifr));
	strlcpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name));
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1)
		plan_fail(pl->errfd, "lo flags:");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1)
		plan_fail(pl->errfd, "lo up:");
	close(s);
}

static void
sbx_rta(struct nlmsghdr *nh, int type, const void *data, size_t len)
{
	struct rtattr	*rta;

	rta = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/*
 * An allowed literal address that is not loopback is put on lo, so the
 * agent connects to the address it was given, and reaches the parent.
 */
static void
sbx_lo_addr(struct plan *pl, const struct sockaddr_storage *ss)
{
	struct {
		struct nlmsghdr		 nh;
		struct ifaddrmsg	 ifa;
		char			 attrs[2 * RTA_SPACE(16)];
	} req;
	struct {
		struct nlmsghdr		 nh;
		struct nlmsgerr		 e;
	} ack;
	const void	*a;
	size_t		 alen;
	int		 s;

	if (ss->ss_family == AF_INET6) {
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		alen = 16;
	} else {
		a = &((const struct sockaddr_in *)ss)->sin_addr;
		alen = 4;
	}
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifa));
	req.nh.nlmsg_type = RTM_NEWADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE;
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = ss->ss_family;
	req.ifa.ifa_prefixlen = alen * 8;
	req.ifa.ifa_flags = IFA_F_NODAD | IFA_F_PERMANENT;
	req.ifa.ifa_index = if_nametoindex("lo");
	sbx_rta(&req.nh, IFA_LOCAL, a, alen);
	sbx_rta(&req.nh, IFA_ADDRESS, a, alen);
	if ((s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
	    NETLINK_ROUTE)) == -1 ||
	    send(s, &req, req.nh.nlmsg_len, 0) == -1 ||
	    recv(s, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack))
		plan_fail(pl->errfd, "rtnetlink:");
	close(s);
	if (ack.nh.nlmsg_type != NLMSG_ERROR)
		plan_fail(pl->errfd, "rtnetlink: unexpected answer %u",
		    (unsigned)ack.nh.nlmsg_type);
	if (ack.e.error != 0 && ack.e.error != -EEXIST) {
		errno = -ack.e.error;
		plan_fail(pl->errfd, "add an egress address to lo:");
	}
}

/*
 * Egress endpoints: lo up, the literal addresses on it, one listening
 * socket per allowed destination, all handed to the parent.  Pid 1
 * keeps none of them: it accepts nothing and forwards nothing.
 */
static void
sbx_net(struct plan *pl)
{
	const struct sandbox_spec *spec = pl->spec;
	int	 fds[SANDBOX_MAXLISTEN], i, one = 1;

	sbx_lo_up(pl);
	for (i = 0; i < spec->nlisten; i++)
		if (spec->listen[i].addlo)
			sbx_lo_addr(pl, &spec->listen[i].addr);
	for (i = 0; i < spec->nlisten; i++) {
		if ((fds[i] = socket(spec->listen[i].addr.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			plan_fail(pl->errfd, "egress socket:");
		if (spec->listen[i].addr.ss_family == AF_INET6 &&
		    setsockopt(fds[i], IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one)) == -1)
			plan_fail(pl->errfd, "egress socket v6only:");
		if (bind(fds[i], (const struct sockaddr *)&spec->listen[i].addr,
		    spec->listen[i].addrlen) == -1)
			plan_fail(pl->errfd, "bind egress endpoint %d:", i);
		if (listen(fds[i], 64) == -1)
			plan_fail(pl->errfd, "listen egress endpoint %d:", i);
	}
	/* In one message, tagged 'L'. */
	if (plan_sendtag(pl->sock, 0, 'L', fds, spec->nlisten) == -1)
		plan_fail(pl->errfd, "send egress listeners:");
	for (i = 0; i < spec->nlisten; i++)
		close(fds[i]);
}

/*
 * The ports of the plan kept from autobind in its network namespace:
 * its binds, its endpoints, the ports it connects to (the services')
 * and those it is told other members bind (reserve), added to
 * net.ipv4.ip_local_reserved_ports, which governs IPv6 too.  Landlock's
 * TCP rules and the cgroup's bind rule see bind(2) alone: a listen(2)
 * or connect(2) of an unbound socket picks its port itself, and where
 * the caller says (IP_LOCAL_PORT_RANGE, Linux 6.3), a service's port
 * while that service restarts, say.  A reserved port no autobind
 * takes; an explicit bind still may, as those rules allow.
 *
 * Added to, not replaced: a service started again must not take the
 * agent's ports away.  What is there is the set's own: a namespace is
 * never handed to another sandbox or set (the pool gives each once),
 * and the parent starts one sandbox at a time, so no two pid 1s write
 * at once.  Through the sandbox's own /proc, just mounted (a sysctl of
 * the opener's network namespace, which pid 1, root, administers).
 * Nothing to add: nothing is written.  Any failure is the spawn's.
 */
#define SBX_RESERVED	"/proc/sys/net/ipv4/ip_local_reserved_ports"

/* The kernel's list ("1024,40000-40003\n", or "\n") into set. */
static int
sbx_reserved_parse(const char *s, uint8_t *set)
{
	unsigned long	 lo, hi;
	char		*end;

	while (*s != '\n') {
		lo = hi = strtoul(s, &end, 10);
		if (end == s || lo > 65535)
			return (-1);
		s = end;
		if (*s == '-') {
			hi = strtoul(++s, &end, 10);
			if (end == s || hi > 65535 || hi < lo)
				return (-1);
			s = end;
		}
		for (; lo <= hi; lo++)
			set[lo / 8] |= 1 << (lo % 8);
		if (*s == ',')
			s++;
		else if (*s != '\n')
			return (-1);
	}
	return (s[1] == '\0' ? 0 : -1);
}

/* set as the kernel takes it, in runs; -1 if buf is too small. */
static int
sbx_reserved_format(const uint8_t *set, char *buf, size_t len)
{
	size_t		 off = 0;
	unsigned int	 p, q;
	int		 n;

	for (p = 1; p < 65536; p = q + 1) {
		if (!(set[p / 8] & (1 << (p % 8)))) {
			q = p;
			continue;
		}
		for (q = p; q + 1 < 65536 && (set[(q + 1) / 8] &
		    (1 << ((q + 1) % 8))); q++)
			;
		n = q == p ? snprintf(buf + off, len - off, "%s%u",
		    off > 0 ? "," : "", p) : snprintf(buf + off, len - off,
		    "%s%u-%u", off > 0 ? "," : "", p, q);
		if (n < 0 || (size_t)n >= len - off)
			return (-1);
		off += (size_t)n;
	}
	if (off + 2 > len)
		return (-1);
	memcpy(buf + off, "\n", 2);
	return ((int)off + 1);
}

static void
sbx_reserve(struct plan *pl)
{
	const struct sandbox_spec *spec = pl->spec;
	static uint8_t	 set[65536 / 8];
	uint16_t	 ports[SANDBOX_MAXPORTS];
	char		 buf[4096];
	ssize_t		 got;
	int		 fd, i, n, len;

	n = plan_ports(spec, ports);
	if (n + spec->nbind + spec->nreserve == 0)
		return;
	if ((fd = open(SBX_RESERVED, O_RDWR | O_CLOEXEC)) == -1 ||
	    (got = read(fd, buf, sizeof(buf) - 1)) == -1)
		plan_fail(pl->errfd, "reserve the plan's ports: %s:",
		    SBX_RESERVED);
	buf[got] = '\0';
	memset(set, 0, sizeof(set));
	if (sbx_reserved_parse(buf, set) == -1)
		plan_fail(pl->errfd, "reserve the plan's ports: %s: not a "
		    "port list", SBX_RESERVED);
	for (i = 0; i < n; i++)
		set[ports[i] / 8] |= 1 << (ports[i] % 8);
	for (i = 0; i < spec->nbind; i++)
		set[spec->bind[i] / 8] |= 1 << (spec->bind[i] % 8);
	for (i = 0; i < spec->nreserve; i++)
		set[spec->reserve[i] / 8] |= 1 << (spec->reserve[i] % 8);
	if ((len = sbx_reserved_format(set, buf, sizeof(buf))) == -1)
		plan_fail(pl->errfd, "reserve the plan's ports: too many");
	if (pwrite(fd, buf, (size_t)len, 0) != len)
		plan_fail(pl->errfd, "reserve the plan's ports: %s:",
		    SBX_RESERVED);
	close(fd);
}

/*
 * The parent creates the attempt's cgroups (ahead, or while the
 * launcher of the pool clones pid 1) and sends "G" with their "tasks"
 * (v1) or cgroup.procs (v2) files open for writing: pid 1,
 * single-threaded, joins every one by writing "0" first thing, before
 * its view and anything of the agent exist.  Anything else (EOF) means
 * the parent gave up on this sandbox.
 */
static void
sbx_await_cgroups(struct plan *pl)
{
	int	 fds[SANDBOX_MAXCG], n, i;
	char	 tag = 0;

	if ((n = plan_recvtag(pl->sock, 0, &tag, fds, SANDBOX_MAXCG)) == -1 ||
	    tag != 'G')
		_exit(127);
	if (n != pl->ncgroups)
		plan_fail(pl->errfd, "pid 1 got %d of %d cgroups", n,
		    pl->ncgroups);
	for (i = 0; i < n; i++) {
		if (write(fds[i], "0", 1) != 1)
			plan_fail(pl->errfd, "join cgroup %d:", i);
		close(fds[i]);
	}
}

/*
 * The view's mount namespace, to the parent ("M" and an fd of it), once
 * it is built and before anything of the agent exists.  The parent
 * holds it until it destroys the sandbox: then pid 1's exit is not the
 * last reference, and the namespace's teardown (every mount of the
 * view unmounted, and an expedited RCU grace period the unmounting
 * waits for) is not done in the exit the parent reaps.  The parent
 * hands it to the zygote, which drops it (sandbox_destroy).
 */
static void
sbx_send_mntns(struct plan *pl)
{
	int	 fd;

	if ((fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC)) == -1)
		plan_fail(pl->errfd, "its mount namespace:");
	if (plan_sendtag(pl->sock, 0, 'M', &fd, 1) == -1)
		plan_fail(pl->errfd, "send its mount namespace:");
	close(fd);
}

__dead void
sbx_pid1(struct plan *pl)
{
	struct pollfd	 pfd = { pl->sock, POLLIN, 0 };
	struct landlock	*ll;
	struct sbx_ready rd;
	uint16_t	 ports[SANDBOX_MAXPORTS];
	int		 keep[2];
	pid_t		 agent;

	/* Die with the parent; if it died already, the socket says so. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		plan_fail(pl->errfd, "pdeathsig:");
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)))
		_exit(127);
	/*
	 * In the attempt's cgroups before anything else: the parent has
	 * made them by now, or is about to (a launcher of the pool), and
	 * what the view costs is the attempt's.
	 */
	sbx_await_cgroups(pl);
	if (pl->netfd != -1 && (setns(pl->netfd, CLONE_NEWNET) == -1 ||
	    setns(pl->ipcfd, CLONE_NEWIPC) == -1))
		plan_fail(pl->errfd, "enter the pooled namespaces:");
	/*
	 * The attempt's id as its host name, in its own UTS namespace.
	 * Cosmetic: nothing reads it back.  A manager's filter that
	 * refuses sethostname(2) to every process it runs (systemd's
	 * ProtectHostname=) costs only the name; the namespace stays the
	 * sandbox's own, so the agent can rename nothing outside it.
	 */
	if (sethostname(pl->spec->id, strlen(pl->spec->id)) == -1 &&
	    errno != EPERM)
		plan_fail(pl->errfd, "sethostname:");
	if (pl->spec->nlisten > 0)
		sbx_net(pl);
	else if (pl->spec->lo)
		sbx_lo_up(pl);
	sbx_mounts(pl);
	sbx_send_mntns(pl);
	/* Of the view as it is final, before anything of the agent. */
	ll = sbx_confine_prepare(pl->spec, pl->tree, ports,
	    plan_ports(pl->spec, ports), pl->errfd);
	/* A service's ready command gets a ruleset of its own, the same. */
	memset(&rd, 0, sizeof(rd));
	rd.pl = pl;
	if (pl->spec->ready != NULL)
		rd.ll = sbx_confine_prepare(pl->spec, pl->tree, ports,
		    plan_ports(pl->spec, ports), pl->errfd);
	/* Rooted at the attempt's cgroups: after the move, not before. */
	if (unshare(CLONE_NEWCGROUP) == -1)
		plan_fail(pl->errfd, "cgroup namespace:");

	/*
	 * vfork: pid 1 has nothing to do until the agent's execve, and
	 * sharing the memory until then saves copying it.  The agent
	 * never returns from sbx_agent; it execs or _exits.
	 */
	if ((agent = vfork()) == -1)
		plan_fail(pl->errfd, "fork agent:");
	if (agent == 0)
		sbx_agent(pl, ll, pl->errfd);
	/*
	 * The parent reads the error pipe itself: EOF once the agent's
	 * execve closed the last write end.  Pid 1 keeps only the socket:
	 * it runs nothing and holds nothing.
	 */
	if (dup2(pl->sock, 0) == -1)
		_exit(127);
	if (pl->spec->ready == NULL) {
		syscall(SYS_close_range, 1, ~0U, 0);
		sbx_reap(0, agent, pl->spec->watchdog_ms, NULL);
	}
	/* A service's pid 1 also keeps its log and the ready ruleset. */
	keep[0] = pl->spec->logfd;
	keep[1] = landlock_fd(rd.ll);
	if (keep[1] != -1 && keep[1] < keep[0]) {
		keep[1] = keep[0];
		keep[0] = landlock_fd(rd.ll);
	}
	sbx_close_but(keep, 2);
	sbx_reap(0, agent, pl->spec->watchdog_ms, &rd);
}

/*
 * Pid 1 in a fork of the bench or a regress helper (sandbox_set_forked):
 * the filter the parent compiled, as a launcher would have decoded it.
 */
__dead void
sbx_pid1_forked(struct plan *pl, const struct sock_fprog *prog)
{
	sbx_prog = *prog;
	sbx_pid1(pl);
}
