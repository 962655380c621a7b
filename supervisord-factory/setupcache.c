/*
 * The setup cache on disk (setup.c has the phase that fills it): the
 * paths under STATE/setup, an entry's meta, the removers of what a
 * store or a run left, and the entries as the operator sees them
 * (factoryctl cache list, rm and gc) and the bound evicts them.
 * Nothing here calls up into setup.c.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
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
#include "setupfs.h"

#define SETUP_MAXSCAN	4096	/* entries looked at per eviction */

struct setup_ent {
	char		 key[SHA256_HEX_LEN + 1];
	uint64_t	 bytes;
	uint64_t	 files;
	struct timespec	 used;
};

/* STATE/setup/NAME; -1 too long. */
int
setup_path(char *buf, size_t len, const char *fmt, const char *a,
    const char *b)
{
	char	 name[PATH_MAX];

	if ((size_t)snprintf(name, sizeof(name), fmt, a, b) >= sizeof(name) ||
	    (size_t)snprintf(buf, len, "%s/setup/%s", env->conf->statedir,
	    name) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

int
setup_entry_path(const char *key, char *buf, size_t len)
{
	return (setup_path(buf, len, "%s%s", key, ""));
}

/* Unmount the run's tree and disk, then remove it: by its exact path. */
int
setup_run_remove(const char *id)
{
	char	 dir[PATH_MAX];

	if (setup_path(dir, sizeof(dir), "run/%s%s", id, "") == -1)
		return (-1);
	if (disk_overlay_unmount(dir, "tree") == -1 ||
	    disk_unmount(dir) == -1)
		return (-1);
	if (fs_remove_tree(dir) == -1 && errno != ENOENT) {
		log_warn("setup: %s", dir);
		return (-1);
	}
	return (0);
}

/*
 * The entry's meta, read; -1 if it is not a whole entry (an entry of
 * an older store, without a seal or the tree it was built from, is
 * none).
 */
int
setup_meta(const char *key, char digest[SHA256_HEX_LEN + 1],
    char seal[SHA256_HEX_LEN + 1], uint64_t *bytes, uint64_t *files,
    struct timespec *used, char tree[41])
{
	struct stat	 st;
	json_error_t	 je;
	json_t		*o;
	const char	*d, *sl, *t;
	char		 path[PATH_MAX];

	if (setup_entry_path(key, path, sizeof(path)) == -1 ||
	    lstat(path, &st) == -1 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return (-1);
	if (setup_path(path, sizeof(path), "%s%s", key, ".meta") == -1 ||
	    lstat(path, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (o = json_load_file(path, 0, &je)) == NULL)
		return (-1);
	d = json_string_value(json_object_get(o, "digest"));
	sl = json_string_value(json_object_get(o, "seal"));
	t = json_string_value(json_object_get(o, "tree"));
	if (d == NULL || strncmp(d, "sha256:", 7) != 0 ||
	    !hex_valid(d + 7, 64) || sl == NULL ||
	    strncmp(sl, "sha256:", 7) != 0 || !hex_valid(sl + 7, 64) ||
	    t == NULL || !hex_valid(t, 40)) {
		json_decref(o);
		return (-1);
	}
	if (digest != NULL)
		strlcpy(digest, d + 7, SHA256_HEX_LEN + 1);
	if (seal != NULL)
		strlcpy(seal, sl + 7, SHA256_HEX_LEN + 1);
	if (bytes != NULL)
		*bytes = json_integer_value(json_object_get(o, "bytes"));
	if (files != NULL)
		*files = json_integer_value(json_object_get(o, "files"));
	if (used != NULL)
		*used = st.st_mtim;
	if (tree != NULL)
		strlcpy(tree, t, 41);
	json_decref(o);
	return (0);
}

void
setup_touch(const char *key)
{
	char	 path[PATH_MAX];

	if (setup_path(path, sizeof(path), "%s%s", key, ".meta") == 0)
		(void)utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);
}

/* A non-terminal attempt whose tree (or validation) has the entry. */
int
setup_in_use(const char *key)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry)
		if (!attempt_terminal(a) && !a->torn_down &&
		    strcmp(a->setup_key, key) == 0)
			return (1);
	return (0);
}

/*
 * Removers: what a store left (a cancelled copy, one that lost the
 * race for its key) can be as large as an entry, so it is emptied by
 * factory-fswalk (FSWALK_SETUP_REMOVE), confined as the store is but
 * with no capability and only that directory.  The loop removes the
 * emptied directory itself, by its exact path, once the job ended.  A
 * run's disk is unmounted and removed by a child of root's instead
 * (setup_run_remove_start): an unmount is not the helper's to do.
 */
struct setup_rm {
	TAILQ_ENTRY(setup_rm)	 entry;
	pid_t			 pid;		/* a run's remover */
	struct fsjob		 job;		/* or a path's */
	char			 path[PATH_MAX];
	char			 run[ATTEMPT_ID_MAX];	/* a run's, by id */
};

static TAILQ_HEAD(, setup_rm)	setup_rms = TAILQ_HEAD_INITIALIZER(setup_rms);

/* A path's remover ended: the emptied directory goes. */
static void
setup_rm_end(struct fsjob *fj)
{
	struct setup_rm		*r = fj->arg;
	struct fswalk_answer	 ans;
	char			 err[256];

	TAILQ_REMOVE(&setup_rms, r, entry);
	memset(&ans, 0, sizeof(ans));
	if (fsjob_answer(fj, FSWALK_SETUP_REMOVE, &ans, err,
	    sizeof(err)) == 0)
		strlcpy(err, ans.failed ? ans.err : "", sizeof(err));
	if (rmdir(r->path) == -1 && errno != ENOENT) {
		log_warnx("setup: %s: its remover (pid %d) left it (%s); "
		    "removing it here", r->path, (int)fj->pid, err[0] != '\0' ?
		    err : strerror(errno));
		(void)fs_remove_tree(r->path);
	}
	free(r);
}

void
setup_rm_start(const char *path)
{
	struct fswalk_setup_job	 sj;
	struct setup_rm		*r;
	struct ibuf		*b = NULL;
	int			 fd = -1;

	if (rmdir(path) == 0 || errno == ENOENT)
		return;
	if ((errno != ENOTEMPTY && errno != EEXIST) ||
	    (r = calloc(1, sizeof(*r))) == NULL) {
		(void)fs_remove_tree(path);
		return;
	}
	memset(&sj, 0, sizeof(sj));
	strlcpy(r->path, path, sizeof(r->path));
	strlcpy(sj.tmp, path, sizeof(sj.tmp));
	r->job.what = "setup remover";
	r->job.done = setup_rm_end;
	r->job.arg = r;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (b = fswalk_setup_job_compose(
	    FSWALK_SETUP_REMOVE, &sj)) == NULL || fsjob_start(&r->job, b, &fd,
	    1, setup_job_deadline()) == -1) {
		log_warn("setup: remove %s", path);
		if (fd != -1)
			close(fd);
		ibuf_free(b);
		(void)fs_remove_tree(path);
		free(r);
		return;
	}
	close(fd);
	ibuf_free(b);
	TAILQ_INSERT_TAIL(&setup_rms, r, entry);
	log_info("setup: removing %s in pid %d", path, (int)r->job.pid);
}

/* A path being removed by a helper: 1 if so. */
static int
setup_rm_busy(const char *path)
{
	struct setup_rm	*r;

	TAILQ_FOREACH(r, &setup_rms, entry)
		if (r->run[0] == '\0' && strcmp(r->path, path) == 0)
			return (1);
	return (0);
}

/* A run's disk being removed by a child: 1 if so. */
int
setup_run_removing(const char *id)
{
	struct setup_rm	*r;

	TAILQ_FOREACH(r, &setup_rms, entry)
		if (strcmp(r->run, id) == 0)
			return (1);
	return (0);
}

/*
 * A run's disk and tree removed by a child: unmounting the tmpfs frees
 * every page the setup wrote (16,000 files: tens of milliseconds in
 * umount(2)), which is not the loop's to wait for.  The child shares
 * root's mounts and unmounts only that run's exact paths.
 */
void
setup_run_remove_start(const char *id)
{
	struct setup_rm	*r;
	sigset_t	 set;
	int		 sig;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    strlcpy(r->run, id, sizeof(r->run)) >= sizeof(r->run) ||
	    (r->pid = fork()) == -1) {
		free(r);
		if (setup_run_remove(id) == -1)
			log_warnx("%s: setup run not removed yet", id);
		return;
	}
	if (r->pid == 0) {
		setproctitle("setup run remove %s", id);
		EVP_PKEY_free(env->receipt_key);
		env->receipt_key = NULL;
		gateway_forget();
		for (sig = 1; sig < NSIG; sig++)
			(void)signal(sig, SIG_DFL);
		sigemptyset(&set);
		(void)sigprocmask(SIG_SETMASK, &set, NULL);
		closefrom(3);
		_exit(setup_run_remove(id) == -1);
	}
	TAILQ_INSERT_TAIL(&setup_rms, r, entry);
	log_debug("%s: setup run removing in pid %d", id, (int)r->pid);
}

/* A remover reaped: 1 if pid was one. */
int
setup_rm_reap(pid_t pid, int status)
{
	struct setup_rm	*r;

	TAILQ_FOREACH(r, &setup_rms, entry)
		if (r->run[0] != '\0' && r->pid == pid)
			break;
	if (r == NULL)
		return (0);
	TAILQ_REMOVE(&setup_rms, r, entry);
	if ((!WIFEXITED(status) || WEXITSTATUS(status) != 0) &&
	    setup_run_remove(r->run) == -1)
		log_warnx("%s: setup run not removed yet", r->run);
	free(r);
	return (1);
}

/* At shutdown: a path's remover is killed; a run's finishes its unmounts. */
void
setup_rm_shutdown(void)
{
	struct setup_rm	*r;
	int		 st;

	while ((r = TAILQ_FIRST(&setup_rms)) != NULL) {
		TAILQ_REMOVE(&setup_rms, r, entry);
		if (r->run[0] == '\0')
			fsjob_cancel(&r->job);
		else
			while (waitpid(r->pid, &st, 0) == -1 && errno == EINTR)
				;
		free(r);
	}
}

/*
 * Seconds a store or a seal may take before it is killed and its
 * attempt fails by that name: enough to copy and fsync the largest
 * entry setup-cache allows, at SETUP_JOB_RATE bytes and
 * SETUP_JOB_FILES files a second (a slow disk).  Test builds take
 * FACTORY_TEST_SETUP_JOB_S instead.
 */
#define SETUP_JOB_MIN_S	60
#define SETUP_JOB_RATE	(8ULL * 1024 * 1024)
#define SETUP_JOB_FILES	50

long long
setup_job_deadline(void)
{
	return (fsjob_deadline("FACTORY_TEST_SETUP_JOB_S", SETUP_JOB_MIN_S +
	    (long long)(env->conf->setup_max / SETUP_JOB_RATE) +
	    SETUP_MAXFILES / SETUP_JOB_FILES));
}

static int
setup_entcmp(const void *pa, const void *pb)
{
	const struct setup_ent	*a = pa, *b = pb;

	if (a->used.tv_sec != b->used.tv_sec)
		return (a->used.tv_sec < b->used.tv_sec ? -1 : 1);
	if (a->used.tv_nsec != b->used.tv_nsec)
		return (a->used.tv_nsec < b->used.tv_nsec ? -1 : 1);
	return (strcmp(a->key, b->key));
}

/* The whole entries, least recently used first. */
static int
setup_scan(struct setup_ent **out, size_t *nout)
{
	struct setup_ent	*v = NULL, *nv;
	struct dirent		*de;
	DIR			*d;
	char			 path[PATH_MAX];
	size_t			 n = 0;

	*out = NULL;
	*nout = 0;
	snprintf(path, sizeof(path), "%s/setup", env->conf->statedir);
	if ((d = opendir(path)) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL && n < SETUP_MAXSCAN) {
		if (!hex_valid(de->d_name, SHA256_HEX_LEN))
			continue;
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL) {
			free(v);
			closedir(d);
			return (-1);
		}
		v = nv;
		memset(&v[n], 0, sizeof(v[n]));
		strlcpy(v[n].key, de->d_name, sizeof(v[n].key));
		if (setup_meta(v[n].key, NULL, NULL, &v[n].bytes, &v[n].files,
		    &v[n].used, NULL) == 0)
			n++;
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof(*v), setup_entcmp);
	*out = v;
	*nout = n;
	return (0);
}

/*
 * A whole entry, refused while an attempt uses it (EBUSY): its meta
 * goes, its directory is renamed to a temporary of ours and emptied
 * by a remover (setup_rm_start), out of the loop; start removes a
 * temporary a crash left.
 */
int
setup_remove(const char *key)
{
	static unsigned	 n;
	char		 path[PATH_MAX], aside[PATH_MAX], id[32];

	if (!hex_valid(key, SHA256_HEX_LEN)) {
		errno = EINVAL;
		return (-1);
	}
	if (setup_meta(key, NULL, NULL, NULL, NULL, NULL, NULL) == -1) {
		errno = ENOENT;
		return (-1);
	}
	if (setup_in_use(key)) {
		errno = EBUSY;
		return (-1);
	}
	/* The meta first: without it the directory is no entry. */
	if (setup_path(path, sizeof(path), "%s%s", key, ".meta") == -1 ||
	    unlink(path) == -1)
		return (-1);
	snprintf(id, sizeof(id), "rm%d.%u", (int)getpid(), n++);
	if (setup_entry_path(key, path, sizeof(path)) == -1 ||
	    setup_path(aside, sizeof(aside), ".tmp.%s.%s", key, id) == -1)
		return (-1);
	if (renameat2(AT_FDCWD, path, AT_FDCWD, aside,
	    RENAME_NOREPLACE) == -1)
		return (fs_remove_tree(path));
	setup_rm_start(aside);
	return (0);
}

/*
 * The cache back under setup-cache: least recently used first, never
 * one in use.  The number of entries removed.
 */
int
setup_evict(void)
{
	struct setup_ent	*v;
	uint64_t		 total = 0;
	size_t			 n, i;
	int			 removed = 0;

	if (setup_scan(&v, &n) == -1)
		return (0);
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	for (i = 0; i < n && total > env->conf->setup_max; i++) {
		if (setup_in_use(v[i].key))
			continue;
		if (setup_remove(v[i].key) == -1) {
			log_warn("setup: evict %s", v[i].key);
			continue;
		}
		log_info("setup: evicted %s (%llu bytes)", v[i].key,
		    (unsigned long long)v[i].bytes);
		total -= v[i].bytes;
		removed++;
	}
	free(v);
	return (removed);
}

/* A temporary entry no live attempt is writing: a crash's leftover. */
static int
setup_tmp_stale(const char *name)
{
	struct attempt	*a;
	const char	*id;

	/* .tmp.KEY.ID[.meta] */
	if (strlen(name) < 5 + SHA256_HEX_LEN + 2)
		return (1);
	id = name + 5 + SHA256_HEX_LEN + 1;
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (!attempt_terminal(a) && strncmp(id, a->id,
		    strlen(a->id)) == 0 && (id[strlen(a->id)] == '\0' ||
		    strcmp(id + strlen(a->id), ".meta") == 0))
			return (0);
	return (1);
}

/* cache gc: evict to the bound now, and drop stale temporaries. */
json_t *
setup_gc(void)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX], dir[PATH_MAX];
	int		 tmps = 0, evicted;

	snprintf(dir, sizeof(dir), "%s/setup", env->conf->statedir);
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, ".tmp.", 5) != 0 ||
			    !setup_tmp_stale(de->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (setup_rm_busy(path))
				continue;	/* its remover's */
			if (fs_remove_tree(path) == -1)
				(void)unlink(path);
			tmps++;
		}
		closedir(d);
	}
	evicted = setup_evict();
	return (json_pack("{s:i, s:i}", "evicted", evicted, "temporaries",
	    tmps));
}

/* cache list's setup rows. */
json_t *
setup_list(void)
{
	struct setup_ent	*v;
	json_t			*list;
	size_t			 n, i;

	if ((list = json_array()) == NULL)
		fatal(NULL);
	if (setup_scan(&v, &n) == -1)
		return (list);
	for (i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:I, "
		    "s:I, s:b}", "kind", "setup", "key", v[i].key, "bytes",
		    (json_int_t)v[i].bytes, "files", (json_int_t)v[i].files,
		    "used", (json_int_t)v[i].used.tv_sec, "in_use",
		    setup_in_use(v[i].key)));
	free(v);
	return (list);
}
