/*
 * Pristine checkouts: one per (repository, commit), made once by the
 * worker and shared, read-only, by every attempt on that commit as the
 * lower layer of its tree's overlay (disk.c).
 *
 * Layout: STATE/pristine/REPO/COMMIT, and beside it COMMIT.size (its
 * bytes, whose modification time is its last use) and COMMIT.index
 * (the index of the baseline each attempt's .git gets a copy of).  A
 * cold checkout is made by the worker into COMMIT.ID, a directory of
 * the worker's that this attempt alone uses, its index as COMMIT.ID/.git
 * (no tree can hold that name); when the worker says READY, the parent
 * moves the index out, makes every entry root's (refusing any the
 * worker did not make, or with a second name) and renames it to COMMIT.  Root's, and reached by
 * the attempts only through a read-only idmapped clone, it cannot be
 * written by the agent, the verifier or the worker.  Two attempts that
 * check out the same commit at once both make one; the first renamed
 * wins and the other is removed: no attempt ever waits for another.
 *
 * The total is bounded by pristine-cache; the least recently used go
 * first, never one an attempt still uses.  Everything is found by its
 * exact path, derived from the configured repository names and the
 * 40-hex commits of the attempts: nothing is matched by pattern.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "factoryd.h"
#include "log.h"

#define PRISTINE_MAX	4096	/* entries looked at per eviction */

struct pristine_ent {
	char		 repo[REPO_NAME_MAX];
	char		 commit[41];
	uint64_t	 bytes;
	struct timespec	 used;
};

static uint64_t	 pristine_walked;	/* nftw has no closure */

static int	 pristine_hex40(const char *);
static int	 pristine_sum(const char *, const struct stat *, int,
		    struct FTW *);
static int	 pristine_scan(struct pristine_ent **, size_t *);
static int	 pristine_entcmp(const void *, const void *);

static int
pristine_hex40(const char *s)
{
	return (strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40);
}

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
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0) {
		pristine_touch(a->repo, a->baseline);
		return (1);
	}
	if (pristine_path(a->repo, a->baseline, ".", tmp, tmplen) == -1 ||
	    strlcat(tmp, a->id, tmplen) >= tmplen) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	/* Whatever a lost worker left of our own checkout goes. */
	if (fs_remove_tree(tmp) == -1 || fs_mkdir_owned(tmp, 0755,
	    env->conf->users[PROC_WORKER].uid,
	    env->conf->users[PROC_WORKER].gid) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
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

static int
pristine_sum(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	pristine_walked += (uint64_t)st->st_blocks * 512;
	return (0);
}

/*
 * The worker is done with a's cold checkout in tmp: it becomes the
 * commit's pristine tree, root's, and the cache is brought back under
 * its bound.  An existing one (another attempt won) is kept, ours goes.
 */
int
pristine_commit(struct attempt *a, const char *tmp, char *err, size_t errlen)
{
	struct stat	 st;
	char		 path[PATH_MAX], size[PATH_MAX], buf[32];
	char		 index[PATH_MAX], tindex[PATH_MAX + 8];
	int		 fd, n;

	if (pristine_path(a->repo, a->baseline, "", path, sizeof(path)) ==
	    -1 || pristine_path(a->repo, a->baseline, ".size", size,
	    sizeof(size)) == -1) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	if (lstat(path, &st) == 0) {
		pristine_drop_tmp(a);
		pristine_touch(a->repo, a->baseline);
		return (0);
	}
	/*
	 * The index the worker left in it, as .git (no tree holds that
	 * name): moved out, root's.  Anything else there fails it.
	 */
	if (pristine_path(a->repo, a->baseline, ".index", index,
	    sizeof(index)) == -1 || (size_t)snprintf(tindex, sizeof(tindex),
	    "%s/.git", tmp) >= sizeof(tindex)) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	if ((fd = open(tindex, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1 && errno != ENOENT) {
		snprintf(err, errlen, "%s: %s", tindex, strerror(errno));
		return (-1);
	}
	if (fd != -1) {
		if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
		    st.st_uid != env->conf->users[PROC_WORKER].uid ||
		    st.st_nlink != 1 || fchown(fd, 0, 0) == -1 ||
		    fchmod(fd, 0644) == -1 || rename(tindex, index) == -1) {
			close(fd);
			snprintf(err, errlen, "%s: not the worker's index, or "
			    "cannot be made root's", tindex);
			return (-1);
		}
		close(fd);
	}
	if (fs_chown_tree(tmp, env->conf->users[PROC_WORKER].uid, 0, 0, err,
	    errlen) == -1)
		return (-1);
	pristine_walked = 0;
	if (nftw(tmp, pristine_sum, 16, FTW_PHYS | FTW_MOUNT) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return (-1);
	}
	n = snprintf(buf, sizeof(buf), "%llu\n",
	    (unsigned long long)pristine_walked);
	if ((fd = open(size, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1 || write(fd, buf, n) != n) {
		snprintf(err, errlen, "%s: %s", size, strerror(errno));
		if (fd != -1)
			close(fd);
		return (-1);
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		snprintf(err, errlen, "rename %s: %s", tmp, strerror(errno));
		return (-1);
	}
	log_info("%s: pristine %s/%s: %llu bytes", a->id, a->repo,
	    a->baseline, (unsigned long long)pristine_walked);
	pristine_evict();
	return (0);
}

/* a's own cold checkout, if one is left (a failed or lost attempt). */
void
pristine_drop_tmp(struct attempt *a)
{
	char	 tmp[PATH_MAX];

	if (a->repo[0] == '\0' || !pristine_hex40(a->baseline) ||
	    pristine_path(a->repo, a->baseline, ".", tmp, sizeof(tmp)) == -1 ||
	    strlcat(tmp, a->id, sizeof(tmp)) >= sizeof(tmp))
		return;
	if (fs_remove_tree(tmp) == -1)
		log_warn("%s: %s", a->id, tmp);
	if (strlcat(tmp, ".index", sizeof(tmp)) < sizeof(tmp) &&
	    unlink(tmp) == -1 && errno != ENOENT)
		log_warn("%s: %s", a->id, tmp);
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
			if (!pristine_hex40(de->d_name))
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

	if (!pristine_hex40(commit) || conf_repo(env->conf, repo) == NULL) {
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
