/*
 * Pristine checkouts: one per (repository, commit), made once by the
 * worker and shared, read-only, by every attempt on that commit as the
 * lower layer of its tree's overlay (disk.c).
 *
 * Layout: STATE/pristine/REPO/COMMIT, and beside it COMMIT.size (its
 * bytes, whose modification time is its last use).  A cold checkout is
 * made by the worker into COMMIT.ID, a directory of the worker's that
 * this attempt alone uses; when the worker says READY, the parent
 * makes its top root's and finds no handle of the worker's left on it
 * (pristine_seal), then factory-fswalk (fswalk/pristine.c), out of the
 * parent's loop, bounds it (no sparse file, no more bytes than the
 * cache may hold, looked at before any byte is copied) and seals it
 * (every entry root's, git's modes); the parent renames it to COMMIT
 * when that answer came (pristine_sealed).  No index is kept:
 * each attempt's is made from the object store for it alone (worker
 * provision_upper), as a cached one would be bytes of an earlier
 * worker nobody checks; a COMMIT.index an older version left is
 * removed, never read.  Root's, and reached by the attempts only
 * through a read-only idmapped clone, it cannot be written by the
 * agent, the verifier or the worker.
 *
 * The worker is assumed compromisable, so its checkout is never taken
 * on its word: the verifier compares every entry of the tree with the
 * baseline's tree before a validation runs on it (verifier/vtree.c),
 * and a tree it finds poisoned is evicted (pristine_poisoned).
 *
 * The cache is no more readable than the repositories it comes from:
 * COMMIT is root's, 0750, its group root's too, and one ACL entry lets
 * the verifier's group in (the one role that reads it as itself; the
 * attempts see it through their idmapped view, which maps root's ids
 * alone: a group of another id there would leave root no override).
 * COMMIT.size is 0600.  Two attempts that check out the same commit
 * at once both make one; the first renamed wins and the other is
 * removed: no attempt ever waits for another.
 *
 * The total is bounded by pristine-cache; the least recently used go
 * first, never one an attempt still uses.  Everything is found by its
 * exact path, derived from the configured repository names and the
 * 40-hex commits of the attempts: nothing is matched by pattern.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryd.h"
#include "fsjob.h"
#include "log.h"

#define PRISTINE_MAX	4096	/* entries looked at per eviction */
/* A seal's deadline: this, and a second for every PRISTINE_SEAL_RATE
 * bytes pristine-cache may hold (each is read and written once). */
#define PRISTINE_SEAL_MIN_S	60
#define PRISTINE_SEAL_RATE	(8ULL * 1024 * 1024)

struct pristine_ent {
	char		 repo[REPO_NAME_MAX];
	char		 commit[41];
	uint64_t	 bytes;
	struct timespec	 used;
};

/* A seal under way: factory-fswalk's job, a's to go on with after. */
struct pristine_seal {
	struct fsjob		 job;
	char			 id[ATTEMPT_ID_MAX];
	char			 tmp[PATH_MAX];
	int			 fd;		/* the top, root's */
	int			 waiting;	/* for a free helper */
	void			(*cont)(struct attempt *, const char *);
	struct event		 retry;
	LIST_ENTRY(pristine_seal) entry;
};

static LIST_HEAD(, pristine_seal) pristine_seals =
    LIST_HEAD_INITIALIZER(pristine_seals);

static int	 pristine_stale_index(const char *, const char *, char *,
		    size_t);
static int	 pristine_scan(struct pristine_ent **, size_t *);
static int	 pristine_entcmp(const void *, const void *);
static int	 pristine_held(pid_t, const char *, const char *, char *,
		    size_t);
static int	 pristine_tasks_hold(pid_t, const char *, char *, size_t);
static int	 pristine_unheld(const char *, char *, size_t);
static int	 pristine_seal(struct attempt *, const char *,
		    void (*)(struct attempt *, const char *), char *, size_t);
static int	 pristine_acl(int, gid_t);

/* STATE/pristine/REPO/COMMIT (or with suffix appended); -1 too long. */
int
pristine_path(const char *repo, const char *commit, const char *suffix,
    char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/pristine/%s/%s%s",
	    env->conf->statedir, repo, commit, suffix) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

/*
 * Before the worker provisions a: 1 when the commit's pristine tree is
 * there (its use recorded), 0 when the worker must check it out into
 * tmp (made empty, the worker's), -1 with err.
 */
int
pristine_prepare(struct attempt *a, char *tmp, size_t tmplen, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		 path[PATH_MAX];

	tmp[0] = '\0';
	snprintf(path, sizeof(path), "%s/pristine/%s", env->conf->statedir,
	    a->repo);
	if (mkdir(path, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	if (pristine_stale_index(a->repo, a->baseline, err, errlen) == -1)
		return (-1);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0) {
		pristine_touch(a->repo, a->baseline);
		return (1);
	}
	if (pristine_path(a->repo, a->baseline, ".", tmp, tmplen) == -1 ||
	    strlcat(tmp, a->id, tmplen) >= tmplen) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	/*
	 * Whatever a lost worker left of our own checkout goes.  The new
	 * one is the worker's alone while it writes it (item: no other
	 * local user reads a restricted repository through it).
	 */
	if (fs_remove_tree(tmp) == -1 || fs_mkdir_owned(tmp, 0700,
	    env->conf->users[PROC_WORKER].uid,
	    env->conf->users[PROC_WORKER].gid) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * COMMIT.index, which versions before this one kept for every attempt
 * to copy (the bytes of the worker that made the tree, never checked):
 * removed wherever it is left, so that nothing can ever read it again.
 */
static int
pristine_stale_index(const char *repo, const char *commit, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX];

	if (pristine_path(repo, commit, ".index", path, sizeof(path)) == -1 ||
	    (unlink(path) == -1 && errno != ENOENT)) {
		snprintf(err, errlen, "%s.index: %s", commit, strerror(errno));
		return (-1);
	}
	return (0);
}

/* Its last use is now. */
void
pristine_touch(const char *repo, const char *commit)
{
	char	 path[PATH_MAX];
	int	 fd;

	if (pristine_path(repo, commit, ".size", path, sizeof(path)) == -1)
		return;
	if ((fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return;
	(void)futimens(fd, NULL);
	close(fd);
}

static struct pristine_seal *
pristine_sealing(const char *id)
{
	struct pristine_seal	*ps;

	LIST_FOREACH(ps, &pristine_seals, entry)
		if (strcmp(ps->id, id) == 0)
			return (ps);
	return (NULL);
}

/*
 * The worker is done with a's cold checkout in tmp: it becomes the
 * commit's pristine tree, root's, and the cache is brought back under
 * its bound.  An existing one (another attempt won) is kept, ours goes.
 * 0 done, -1 and err, or 1: it is sealed out of the loop, and cont
 * gets a (if it did not end meanwhile) with NULL or why it failed.
 */
int
pristine_commit(struct attempt *a, const char *tmp,
    void (*cont)(struct attempt *, const char *), char *err, size_t errlen)
{
	struct stat	 st;
	char		 path[PATH_MAX];

	if (pristine_sealing(a->id) != NULL && cont != NULL)
		return (1);
	if (pristine_sealing(a->id) != NULL) {
		snprintf(err, errlen, "still being sealed");
		return (-1);
	}
	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	if (lstat(path, &st) == 0) {
		pristine_drop_tmp(a);
		pristine_touch(a->repo, a->baseline);
		return (0);
	}
	if (cont == NULL) {
		snprintf(err, errlen, "not sealed yet");
		return (-1);
	}
	if (pristine_seal(a, tmp, cont, err, errlen) == -1)
		return (-1);
	return (1);
}

/* The sealed tree, of bytes, in the cache under its commit. */
static int
pristine_store(struct attempt *a, const char *tmp, uint64_t bytes,
    char *err, size_t errlen)
{
	struct stat	 st;
	char		 path[PATH_MAX], size[PATH_MAX], buf[32];
	char		 mark[PATH_MAX];
	int		 fd, n;

	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1 || pristine_path(a->repo, a->baseline, ".size", size,
	    sizeof(size)) == -1) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	if (lstat(path, &st) == 0) {	/* another attempt's, meanwhile */
		pristine_drop_tmp(a);
		pristine_touch(a->repo, a->baseline);
		return (0);
	}
	n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)bytes);
	if ((fd = open(size, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || write(fd, buf, n) != n) {
		snprintf(err, errlen, "%s: %s", size, strerror(errno));
		if (fd != -1)
			close(fd);
		return (-1);
	}
	close(fd);
	/* A mark left of an earlier tree never vouches for this one. */
	if (pristine_path(a->repo, a->baseline, ".checked", mark,
	    sizeof(mark)) == -1 || (unlink(mark) == -1 && errno != ENOENT) ||
	    rename(tmp, path) == -1) {
		snprintf(err, errlen, "rename %s: %s", tmp, strerror(errno));
		return (-1);
	}
	log_info("%s: pristine %s/%s: %llu bytes", a->id, a->repo,
	    a->baseline, (unsigned long long)bytes);
	pristine_evict();
	return (0);
}

/*
 * factory-fswalk answered: the top readable by root and the verifier's
 * group alone, the tree stored, and a goes on; or a fails, naming why.
 * An attempt that ended meanwhile goes no further.
 */
static void
pristine_sealed(struct fsjob *j)
{
	struct pristine_seal	*ps = j->arg;
	struct fswalk_answer	 ans;
	struct attempt		*a;
	char			 err[FSWALK_ERRMAX], msg[PATH_MAX + 600];
	int			 rc = -1;

	LIST_REMOVE(ps, entry);
	a = attempt_find(ps->id);
	if (fsjob_answer(j, FSWALK_PRISTINE, &ans, err, sizeof(err)) == -1)
		;
	else if (ans.failed)
		strlcpy(err, ans.err, sizeof(err));
	else if (fchmod(ps->fd, 0750) == -1)
		snprintf(err, sizeof(err), "%s: %s", ps->tmp, strerror(errno));
	else if (pristine_acl(ps->fd, env->conf->users[PROC_VERIFIER].gid) ==
	    -1)
		snprintf(err, sizeof(err), "%s: an ACL for the verifier's "
		    "group: %s (the state directory's file system must have "
		    "POSIX ACLs)", ps->tmp, strerror(errno));
	else if (a != NULL && !attempt_terminal(a) && !a->torn_down)
		rc = pristine_store(a, ps->tmp, ans.u.bytes, err, sizeof(err));
	close(ps->fd);
	if (a != NULL && !attempt_terminal(a) && !a->torn_down &&
	    a->state != AS_TEARDOWN) {
		/* Whole: a cut could split the escaped reason's escape. */
		snprintf(msg, sizeof(msg), "pristine %s: %s", ps->tmp, err);
		ps->cont(a, rc == -1 ? msg : NULL);
	}
	free(ps);
}

/* A seal that waited for a free helper: a goes on, if it still may. */
static void
pristine_retry_cb(int fd, short event, void *arg)
{
	struct pristine_seal	*ps = arg;
	struct attempt		*a = attempt_find(ps->id);

	LIST_REMOVE(ps, entry);
	if (a != NULL && !attempt_terminal(a) && !a->torn_down &&
	    a->state != AS_TEARDOWN)
		ps->cont(a, NULL);
	free(ps);
}

/* Every helper busy: a's seal is tried again in a second. */
static void
pristine_wait(struct attempt *a, void (*cont)(struct attempt *, const char *))
{
	struct pristine_seal	*ps;
	struct timeval		 tv = { 1, 0 };

	if ((ps = calloc(1, sizeof(*ps))) == NULL)
		fatal(NULL);
	strlcpy(ps->id, a->id, sizeof(ps->id));
	ps->fd = -1;
	ps->waiting = 1;
	ps->cont = cont;
	evtimer_set(&ps->retry, pristine_retry_cb, ps);
	evtimer_add(&ps->retry, &tv);
	LIST_INSERT_HEAD(&pristine_seals, ps, entry);
}

/*
 * Does process pid hold, in the /proc/pid/what directory of links (fd,
 * map_files), anything at or below tmp?  1 with why, 0, -1 with why.
 */
static int
pristine_held(pid_t pid, const char *what, const char *tmp, char *why,
    size_t whylen)
{
	struct dirent	*de;
	DIR		*d;
	char		 dir[64], link[PATH_MAX];
	size_t		 tlen = strlen(tmp);
	ssize_t		 n;
	int		 held = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/%s", (int)pid, what);
	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT || errno == ESRCH)
			return (0);	/* gone: it holds nothing */
		snprintf(why, whylen, "%s: %s", dir, strerror(errno));
		return (-1);
	}
	while (!held && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if ((n = readlinkat(dirfd(d), de->d_name, link,
		    sizeof(link) - 1)) == -1)
			continue;	/* closed meanwhile */
		link[n] = '\0';
		if (strncmp(link, tmp, tlen) == 0 && (link[tlen] == '\0' ||
		    link[tlen] == '/')) {
			snprintf(why, whylen, "the worker still holds %s "
			    "(%s/%s)", link, what, de->d_name);
			held = 1;
		}
	}
	closedir(d);
	return (held);
}

/*
 * Does a thread of pid hold anything of tmp: a descriptor, or its
 * working directory?  A thread need not share its process's table of
 * descriptors or its working directory (clone without CLONE_FILES or
 * CLONE_FS), so each is looked at.  1 with why, 0, -1 with why.
 */
static int
pristine_tasks_hold(pid_t pid, const char *tmp, char *why, size_t whylen)
{
	struct dirent	*de;
	DIR		*d;
	char		 dir[64], what[64], link[PATH_MAX];
	size_t		 tlen = strlen(tmp);
	ssize_t		 n;
	int		 rc = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	if ((d = opendir(dir)) == NULL) {
		if (errno == ENOENT || errno == ESRCH)
			return (0);	/* gone: it holds nothing */
		snprintf(why, whylen, "%s: %s", dir, strerror(errno));
		return (-1);
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(what, sizeof(what), "task/%.20s/fd", de->d_name);
		if ((rc = pristine_held(pid, what, tmp, why, whylen)) != 0)
			break;
		snprintf(what, sizeof(what), "%s/%.20s/cwd", dir, de->d_name);
		if ((n = readlink(what, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, tmp, tlen) == 0 && (link[tlen] == '\0' ||
		    link[tlen] == '/')) {
			snprintf(why, whylen, "a worker thread's working "
			    "directory is %s", link);
			rc = 1;
		}
	}
	closedir(d);
	return (rc);
}

/*
 * The worker is done with tmp, whose top is already out of its reach
 * (root's, 0700): it must hold nothing of it either, no descriptor (of
 * any thread), no mapping, no working directory, or it could write the
 * tree after it was checked.  (It may not fork, nor use io_uring, whose
 * registered files /proc would not show: its seccomp filter.)  It is stopped while it is looked at, so that it cannot
 * move a descriptor past the look; a worker that cannot be stopped or
 * looked at fails the tree.
 */
static int
pristine_unheld(const char *tmp, char *why, size_t whylen)
{
	struct child	*c;
	siginfo_t	 si;
	int		 rc;

	if ((c = proc_find(PROC_WORKER, 0)) == NULL || c->pid <= 0)
		return (0);
	if (kill(c->pid, SIGSTOP) == -1)
		return (errno == ESRCH ? 0 : -1);
	memset(&si, 0, sizeof(si));
	/* It stopped, or died (left for proc.c to reap): it holds still. */
	while (waitid(P_PID, c->pid, &si, WSTOPPED | WEXITED | WNOWAIT) ==
	    -1 && errno == EINTR)
		;
	if ((rc = pristine_tasks_hold(c->pid, tmp, why, whylen)) == 0)
		rc = pristine_held(c->pid, "map_files", tmp, why, whylen);
	(void)kill(c->pid, SIGCONT);
	if (rc == 1)
		errno = EBUSY;
	return (rc == 0 ? 0 : -1);
}

/*
 * rwxr-x--- and r-x for group gid, as the kernel's POSIX ACL xattr
 * (little-endian: a version, then entries sorted by tag).  A file
 * system without ACLs fails the tree: fail closed, said by the caller.
 */
static int
pristine_acl(int fd, gid_t gid)
{
	static const struct { uint16_t tag, perm; } e[] = {
		{ 0x01, 7 },	/* ACL_USER_OBJ */
		{ 0x04, 5 },	/* ACL_GROUP_OBJ */
		{ 0x08, 5 },	/* ACL_GROUP, gid */
		{ 0x10, 5 },	/* ACL_MASK */
		{ 0x20, 0 },	/* ACL_OTHER */
	};
	uint8_t		 buf[4 + 5 * 8], *p = buf + 4;
	uint32_t	 v;
	uint16_t	 h;
	size_t		 i;

	v = htole32(2);		/* POSIX_ACL_XATTR_VERSION */
	memcpy(buf, &v, 4);
	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++, p += 8) {
		h = htole16(e[i].tag);
		memcpy(p, &h, 2);
		h = htole16(e[i].perm);
		memcpy(p + 2, &h, 2);
		v = htole32(e[i].tag == 0x08 ? (uint32_t)gid : UINT32_MAX);
		memcpy(p + 4, &v, 4);
	}
	return (fsetxattr(fd, "system.posix_acl_access", buf, sizeof(buf),
	    0));
}

/*
 * The worker's cold checkout in tmp becomes root's: first its top, so
 * that the worker reaches nothing of it by path; then nothing of it may
 * still be held by the worker; then factory-fswalk bounds it, gives
 * every entry to root (only what the worker made, no second names)
 * with git's modes and counts its blocks, out of root's loop
 * (pristine_sealed goes on).
 */
static int
pristine_seal(struct attempt *a, const char *tmp,
    void (*cont)(struct attempt *, const char *), char *err, size_t errlen)
{
	struct fswalk_pristine_job	 job;
	struct pristine_seal		*ps;
	struct stat			 st;
	struct ibuf			*b;
	char				 why[PATH_MAX + 64];
	int				 fd;

	why[0] = '\0';
	if (fsjob_busy()) {
		pristine_wait(a, cont);
		return (0);
	}
	if ((fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1 ||
	    st.st_uid != env->conf->users[PROC_WORKER].uid ||
	    fchown(fd, 0, 0) == -1 || fchmod(fd, 0700) == -1) {
		snprintf(err, errlen, "%s: not the worker's, or cannot be "
		    "made root's", tmp);
		if (fd != -1)
			close(fd);
		return (-1);
	}
	if (pristine_unheld(tmp, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s", why[0] != '\0' ? why :
		    strerror(errno));
		close(fd);
		return (-1);
	}
	memset(&job, 0, sizeof(job));
	job.from = env->conf->users[PROC_WORKER].uid;
	job.max = env->conf->pristine_max;
	if ((ps = calloc(1, sizeof(*ps))) == NULL ||
	    strlcpy(job.path, tmp, sizeof(job.path)) >= sizeof(job.path) ||
	    (b = fswalk_pristine_job_compose(&job)) == NULL)
		fatal("pristine seal");
	strlcpy(ps->id, a->id, sizeof(ps->id));
	strlcpy(ps->tmp, tmp, sizeof(ps->tmp));
	ps->fd = fd;
	ps->cont = cont;
	ps->job.what = "pristine seal";
	ps->job.done = pristine_sealed;
	ps->job.arg = ps;
	if (fsjob_start(&ps->job, b, &fd, 1,
	    PRISTINE_SEAL_MIN_S + (long long)(job.max / PRISTINE_SEAL_RATE)) == -1) {
		snprintf(err, errlen, "%s: factory-fswalk: %s", tmp,
		    strerror(errno));
		ibuf_free(b);
		free(ps);
		close(fd);
		return (-1);
	}
	ibuf_free(b);
	LIST_INSERT_HEAD(&pristine_seals, ps, entry);
	return (0);
}

/*
 * The verifier found the pristine tree a validated on not to be the
 * baseline's tree (why names the path): it goes out of the cache at
 * once, under a's own cold checkout's name, so that it is removed with
 * a's teardown and no other attempt takes it as its baseline.
 */
void
pristine_poisoned(struct attempt *a, const char *why)
{
	char	 path[PATH_MAX], aside[PATH_MAX];

	log_warnx("%s: pristine %s/%s is not the baseline's tree, evicted: "
	    "%s", a->id, a->repo, a->baseline, why != NULL ? why : "");
	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1 || pristine_path(a->repo, a->baseline, ".", aside,
	    sizeof(aside)) == -1 || strlcat(aside, a->id, sizeof(aside)) >=
	    sizeof(aside))
		return;
	if (fs_remove_tree(aside) == -1 || (rename(path, aside) == -1 &&
	    errno != ENOENT))
		log_warn("%s: pristine %s", a->id, path);
	if (pristine_path(a->repo, a->baseline, ".size", path,
	    sizeof(path)) == 0 && unlink(path) == -1 && errno != ENOENT)
		log_warn("%s: %s", a->id, path);
	if (pristine_path(a->repo, a->baseline, ".index", path,
	    sizeof(path)) == 0 && unlink(path) == -1 && errno != ENOENT)
		log_warn("%s: %s", a->id, path);
	if (pristine_path(a->repo, a->baseline, ".checked", path,
	    sizeof(path)) == 0 && unlink(path) == -1 && errno != ENOENT)
		log_warn("%s: %s", a->id, path);
}

/*
 * The mark a verifier's check leaves: COMMIT.checked, root's, 0600,
 * the 40-hex tree the pristine tree was found to be.  1 with tree when
 * it is there and well formed, 0 when not (a malformed one goes, and
 * the tree is checked again), -1 with errno.
 */
int
pristine_checked(const char *repo, const char *commit, char tree[41])
{
	struct stat	 st;
	char		 path[PATH_MAX], buf[42];
	ssize_t		 n;
	int		 fd;

	if (pristine_path(repo, commit, ".checked", path, sizeof(path)) == -1)
		return (-1);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return (errno == ENOENT ? 0 : -1);
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
	    st.st_nlink == 1 ? read(fd, buf, sizeof(buf)) : -1;
	close(fd);
	if (n != 41 || buf[40] != '\n' || (buf[40] = '\0',
	    !hex_valid(buf, 40))) {
		log_warnx("%s: malformed, removed", path);
		return (unlink(path) == -1 && errno != ENOENT ? -1 : 0);
	}
	strlcpy(tree, buf, 41);
	return (1);
}

/* A verifier found the pristine tree to be tree: marked so. */
int
pristine_mark_checked(const char *repo, const char *commit, const char *tree)
{
	char	 path[PATH_MAX], tmp[PATH_MAX + 8], buf[42];
	int	 fd, n;

	if (!hex_valid(tree, 40) || pristine_path(repo, commit, ".checked",
	    path, sizeof(path)) == -1 || (size_t)snprintf(tmp, sizeof(tmp),
	    "%s.new", path) >= sizeof(tmp)) {
		errno = EINVAL;
		return (-1);
	}
	n = snprintf(buf, sizeof(buf), "%s\n", tree);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return (-1);
	if (write(fd, buf, n) != n || close(fd) == -1 ||
	    rename(tmp, path) == -1) {
		(void)unlink(tmp);
		return (-1);
	}
	return (0);
}

/*
 * a's own cold checkout, if one is left (a failed or lost attempt).
 * -1 while a seal of it runs: killed now, removed by a later teardown.
 */
int
pristine_drop_tmp(struct attempt *a)
{
	struct pristine_seal	*ps;
	char			 tmp[PATH_MAX];

	if ((ps = pristine_sealing(a->id)) != NULL && ps->waiting) {
		evtimer_del(&ps->retry);
		LIST_REMOVE(ps, entry);
		free(ps);
	} else if (ps != NULL) {
		fsjob_kill(&ps->job);
		return (-1);
	}
	if (a->repo[0] == '\0' || !hex_valid(a->baseline, 40) ||
	    pristine_path(a->repo, a->baseline, ".", tmp, sizeof(tmp)) == -1 ||
	    strlcat(tmp, a->id, sizeof(tmp)) >= sizeof(tmp))
		return (0);
	if (fs_remove_tree(tmp) == -1)
		log_warn("%s: %s", a->id, tmp);
	if (strlcat(tmp, ".index", sizeof(tmp)) < sizeof(tmp) &&
	    unlink(tmp) == -1 && errno != ENOENT)
		log_warn("%s: %s", a->id, tmp);
	return (0);
}

/* Is an attempt that is not torn down on this commit? */
int
pristine_in_use(const char *repo, const char *commit)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (!a->torn_down && a->state != AS_QUEUED &&
		    strcmp(a->repo, repo) == 0 &&
		    strcmp(a->baseline, commit) == 0)
			return (1);
	return (0);
}

static int
pristine_entcmp(const void *pa, const void *pb)
{
	const struct pristine_ent	*a = pa, *b = pb;

	if (a->used.tv_sec != b->used.tv_sec)
		return (a->used.tv_sec < b->used.tv_sec ? -1 : 1);
	if (a->used.tv_nsec != b->used.tv_nsec)
		return (a->used.tv_nsec < b->used.tv_nsec ? -1 : 1);
	return (strcmp(a->commit, b->commit));
}

/* The pristine trees of the configured repositories, oldest use first. */
static int
pristine_scan(struct pristine_ent **out, size_t *nout)
{
	struct conf_repo	*r;
	struct pristine_ent	*v = NULL, *nv;
	struct dirent		*de;
	struct stat		 st;
	DIR			*d;
	char			 path[PATH_MAX], buf[32];
	size_t			 n = 0;
	ssize_t			 got;
	int			 fd;

	TAILQ_FOREACH(r, &env->conf->repos, entry) {
		snprintf(path, sizeof(path), "%s/pristine/%s",
		    env->conf->statedir, r->name);
		if ((d = opendir(path)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL && n < PRISTINE_MAX) {
			if (!hex_valid(de->d_name, 40))
				continue;
			if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL) {
				closedir(d);
				free(v);
				return (-1);
			}
			v = nv;
			memset(&v[n], 0, sizeof(v[n]));
			strlcpy(v[n].repo, r->name, sizeof(v[n].repo));
			strlcpy(v[n].commit, de->d_name, sizeof(v[n].commit));
			if (pristine_path(r->name, de->d_name, ".size", path,
			    sizeof(path)) == 0 && (fd = open(path, O_RDONLY |
			    O_NOFOLLOW | O_CLOEXEC)) != -1) {
				if (fstat(fd, &st) == 0)
					v[n].used = st.st_mtim;
				got = read(fd, buf, sizeof(buf) - 1);
				buf[got > 0 ? got : 0] = '\0';
				v[n].bytes = strtoull(buf, NULL, 10);
				close(fd);
			}
			n++;
		}
		closedir(d);
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), pristine_entcmp);
	*out = v;
	*nout = n;
	return (0);
}

/* Removes one pristine tree; refused (-1, EBUSY) while it is in use. */
int
pristine_remove(const char *repo, const char *commit)
{
	char	 path[PATH_MAX], size[PATH_MAX];

	if (!hex_valid(commit, 40) || conf_repo(env->conf, repo) == NULL) {
		errno = ENOENT;
		return (-1);
	}
	if (pristine_in_use(repo, commit)) {
		errno = EBUSY;
		return (-1);
	}
	if (pristine_path(repo, commit, "", path, sizeof(path)) == -1 ||
	    pristine_path(repo, commit, ".size", size, sizeof(size)) == -1)
		return (-1);
	if (access(path, F_OK) == -1)
		return (-1);
	/* The mark first: it never outlives the tree it vouches for. */
	if (pristine_path(repo, commit, ".checked", size, sizeof(size)) ==
	    -1 || (unlink(size) == -1 && errno != ENOENT))
		return (-1);
	if (fs_remove_tree(path) == -1)
		return (-1);
	if (unlink(size) == -1 && errno != ENOENT)
		return (-1);
	if (pristine_path(repo, commit, ".index", size, sizeof(size)) == 0 &&
	    unlink(size) == -1 && errno != ENOENT)
		return (-1);
	return (0);
}

/* Least recently used first, until the total is within the bound. */
void
pristine_evict(void)
{
	struct pristine_ent	*v;
	uint64_t		 total = 0;
	size_t			 i, n;

	if (pristine_scan(&v, &n) == -1) {
		log_warnx("pristine: out of memory");
		return;
	}
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	for (i = 0; i < n && total > env->conf->pristine_max; i++) {
		if (pristine_in_use(v[i].repo, v[i].commit))
			continue;
		if (pristine_remove(v[i].repo, v[i].commit) == -1) {
			log_warn("pristine %s/%s", v[i].repo, v[i].commit);
			continue;
		}
		log_info("pristine %s/%s: evicted (%llu bytes)", v[i].repo,
		    v[i].commit, (unsigned long long)v[i].bytes);
		total -= v[i].bytes;
	}
	free(v);
}

/* [{repo, commit, bytes, used, in_use}], oldest use first. */
json_t *
pristine_list(void)
{
	struct pristine_ent	*v;
	json_t			*arr;
	size_t			 i, n;

	if ((arr = json_array()) == NULL || pristine_scan(&v, &n) == -1)
		return (arr);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:I, "
		    "s:I, s:b}", "kind", "pristine", "repo", v[i].repo,
		    "commit", v[i].commit, "bytes", (json_int_t)v[i].bytes,
		    "used", (json_int_t)v[i].used.tv_sec, "in_use",
		    pristine_in_use(v[i].repo, v[i].commit)));
	free(v);
	return (arr);
}
