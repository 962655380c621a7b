/*
 * The setup phase and its content-addressed cache (factory-manifest(5)
 * setup:).  A manifest's setup runs before the agent, in a sandbox of
 * its own, and what it leaves at its outputs is kept under a key over
 * everything it could depend on: the image digest, its argv and env,
 * each input path with the sha256 of its content in the pristine
 * checkout, and the baseline's tree (or, with reuse: inputs, the
 * submitter instead).  The key is the whole invalidation rule: the
 * same key finds the same outputs, which are then an extra read-only
 * lower layer of the agent's (and the validation run's) tree, and
 * setup does not run.  Collect walks the upper dir only, so the
 * outputs are never taken for the agent's changes.
 *
 * Layout, all root's, under STATE/setup (0700):
 *
 *	KEY/		the outputs at their tree paths, read-only
 *	KEY.meta	{"digest", "seal", "tree", "files", "bytes",
 *			"created"}, tree the one it was built from; its
 *			modification time is the entry's last use
 *	.tmp.KEY.ID	an entry being written; renamed to KEY when whole
 *	run/ID/		the setup run's disk (a tmpfs): upper, work, tree
 *
 * An entry is there only once both KEY and KEY.meta are: the meta is
 * renamed first, then the directory, and start removes whatever a
 * crash left of either, every temporary and every run.
 *
 * The setup run's upper is hostile: it is walked only after its
 * sandbox is gone, by descriptor, never following a link, and copied
 * (not moved) into the store.  Anything outside the outputs, a device
 * node or whiteout, a setuid or setgid bit, a link leaving its output,
 * or more files or bytes than the bounds, refuses the whole entry.
 *
 * The paths, an entry's meta, the removers and the operator's view of
 * the entries (list, rm, gc, the bound's eviction) are setupcache.c's.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <linux/capability.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "beneath.h"
#include "factoryd.h"
#include "fsjob.h"
#include "image.h"
#include "log.h"
#include "setupfs.h"

/* A manifest's outputs fit a job of factory-fswalk's. */
_Static_assert(SETUP_PATHS <= FSWALK_OUTPUTS_MAX &&
    SETUP_PATHMAX - 1 <= FSWALK_OUTPUT_MAX, "setup outputs in a job");

#define SETUP_KEYTAG	"factory setup key v3"

struct setup_job;

static void	setup_job_kill(struct setup_job *);
static void	setup_stored(struct setup_job *, int, const char *);
static void	setup_hit(struct attempt *);
static int	setup_lookup(struct attempt *, char *, size_t);
static int	setup_check_start(struct setup_job *, char *, size_t);
static int	setup_check_end(struct setup_job *, int, char *, size_t);

/*
 * At start: the store's directories, and what a crash left.  Nothing
 * runs yet, so every temporary entry and every run is a leftover.
 */
int
setup_init(char *err, size_t errlen)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX], other[PATH_MAX], key[SHA256_HEX_LEN + 1];
	size_t		 n;

	snprintf(path, sizeof(path), "%s/setup", env->conf->statedir);
	if ((mkdir(path, 0700) == -1 && errno != EEXIST) ||
	    lstat(path, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != 0) {
		snprintf(err, errlen, "%s: not a directory of root's", path);
		return (-1);
	}
	(void)chmod(path, 0700);
	snprintf(path, sizeof(path), "%s/setup/run", env->conf->statedir);
	if (mkdir(path, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.' &&
			    strlen(de->d_name) < ATTEMPT_ID_MAX)
				(void)setup_run_remove(de->d_name);
		closedir(d);
	}
	snprintf(path, sizeof(path), "%s/setup", env->conf->statedir);
	if ((d = opendir(path)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, ".tmp.", 5) == 0) {
			snprintf(other, sizeof(other), "%s/%s", path,
			    de->d_name);
			log_info("setup: removing %s, left by a crash", other);
			if (fs_remove_tree(other) == -1)
				(void)unlink(other);
			continue;
		}
		/* KEY without KEY.meta, or KEY.meta without KEY: half. */
		n = strlen(de->d_name);
		if (n == SHA256_HEX_LEN + 5 &&
		    strcmp(de->d_name + SHA256_HEX_LEN, ".meta") == 0)
			strlcpy(key, de->d_name, sizeof(key));
		else if (n == SHA256_HEX_LEN)
			strlcpy(key, de->d_name, sizeof(key));
		else
			continue;
		if (!hex_valid(key, SHA256_HEX_LEN))
			continue;
		snprintf(other, sizeof(other), "%s/%s%s", path, key,
		    n == SHA256_HEX_LEN ? ".meta" : "");
		if (lstat(other, &st) == 0) {
			/* Both: whole, unless its meta has no seal or tree. */
			if (n != SHA256_HEX_LEN ||
			    setup_meta(key, NULL, NULL, NULL, NULL, NULL,
			    NULL) == 0)
				continue;
			log_info("setup: removing %s, an entry without a "
			    "seal or tree", other);
			(void)unlink(other);
		}
		snprintf(other, sizeof(other), "%s/%s", path, de->d_name);
		log_info("setup: removing %s, half an entry", other);
		if (n == SHA256_HEX_LEN)
			(void)fs_remove_tree(other);
		else
			(void)unlink(other);
	}
	closedir(d);
	return (0);
}

/*
 * Whose entries a's setup may have, as fields of the key.  Setup reads
 * the whole tree, not only its inputs, so by default an entry is one
 * built from the same baseline tree (the one a verifier found the
 * pristine checkout to be): no other commit's outputs reach a's trees.
 * reuse: inputs drops the tree for the submitter's uid instead: across
 * trees at the submitter's own word, never across submitters.  The
 * tree is also a's setup_tree, what the entry is built from on a miss.
 */
static int
setup_putreuse(struct sha256_ctx *c, struct attempt *a, char *err,
    size_t errlen)
{
	char	 tree[41], uid[32];

	switch (pristine_checked(a->repo, a->baseline, tree)) {
	case 1:
		break;
	case 0:
		snprintf(err, errlen, "setup key: pristine tree of %s: not "
		    "checked by a verifier", a->baseline);
		return (-1);
	default:
		snprintf(err, errlen, "setup key: pristine tree of %s: check "
		    "mark: %s", a->baseline, strerror(errno));
		return (-1);
	}
	strlcpy(a->setup_tree, tree, sizeof(a->setup_tree));
	if (a->m->setup->reuse == SETUP_REUSE_INPUTS) {
		snprintf(uid, sizeof(uid), "%u", (unsigned)a->submitter);
		if (setup_putstr(c, "reuse inputs") == -1 ||
		    setup_putstr(c, uid) == -1)
			goto hash;
		return (0);
	}
	if (setup_putstr(c, "reuse tree") == -1 ||
	    setup_putstr(c, tree) == -1)
		goto hash;
	return (0);
 hash:
	snprintf(err, errlen, "setup key: sha256 failed");
	return (-1);
}

/*
 * The key of a's setup: sha256 over the length-prefixed fields (tag,
 * repository, image, network, argv, env, outputs, inputs, the baseline
 * tree or the submitter), begun in c here; then each input and its
 * content (setup_key_end), once factory-fswalk hashed them.
 */
static int
setup_key_begin(struct attempt *a, struct sha256_ctx *c, char *err,
    size_t errlen)
{
	const struct manifest_setup	*s = a->m->setup;

	if (sha256_init(c) == -1) {
		snprintf(err, errlen, "setup key: sha256 failed");
		return (-1);
	}
	/*
	 * The repository too: setup may read more of the tree than its
	 * inputs say, and one repository's outputs are never another's.
	 * Its network grant too: what it could fetch shaped the outputs.
	 */
	if (setup_putstr(c, SETUP_KEYTAG) == -1 ||
	    setup_putstr(c, a->repo) == -1 ||
	    setup_putstr(c, a->image[0] != '\0' ? a->image : "host") == -1 ||
	    setup_putstr(c, s->allow == NULL ? "network none" :
	    "network allow") == -1 || setup_putv(c, s->allow) == -1 ||
	    setup_putv(c, s->run) == -1 || setup_putv(c, s->env) == -1 ||
	    setup_putv(c, s->outputs) == -1 ||
	    setup_putv(c, s->inputs) == -1) {
		snprintf(err, errlen, "setup key: sha256 failed");
		sha256_abort(c);
		return (-1);
	}
	if (setup_putreuse(c, a, err, errlen) == -1) {
		sha256_abort(c);
		return (-1);
	}
	return (0);
}

/*
 * Each input as the key sees it, from the helper's answer r (in the
 * inputs' order, checked in form): its path, then "missing" or "file"
 * and the sha256 of its content in the pristine tree.  c is finished
 * or freed.
 */
static int
setup_key_end(struct attempt *a, struct sha256_ctx *c,
    const struct fswalk_answer *r, char key[SHA256_HEX_LEN + 1], char *err,
    size_t errlen)
{
	char * const	*in = a->m->setup->inputs;
	uint8_t		 md[SHA256_LEN];
	size_t		 i, n = 0;

	while (in[n] != NULL)
		n++;
	if (r->u.inputs.n != n) {
		snprintf(err, errlen, "setup key: %u inputs hashed, not %zu",
		    r->u.inputs.n, n);
		sha256_abort(c);
		return (-1);
	}
	for (i = 0; in[i] != NULL; i++)
		if (setup_putstr(c, in[i]) == -1 || (r->u.inputs.in[i].file ?
		    setup_putstr(c, "file") == -1 ||
		    setup_putstr(c, r->u.inputs.in[i].hex) == -1 :
		    setup_putstr(c, "missing") == -1))
			goto hash;
	if (sha256_final(c, md) == -1)
		goto hash;
	hex_encode(md, sizeof(md), key);
	return (0);
 hash:
	sha256_abort(c);
	snprintf(err, errlen, "setup key: sha256 failed");
	return (-1);
}

/* The run's directory, STATE/setup/run/ID. */
static int
setup_rundir(struct attempt *a, char *buf, size_t len)
{
	return (setup_path(buf, len, "run/%s%s", a->id, ""));
}

/*
 * The helpers.  Copying a setup's outputs, fsyncing them file by file
 * and hashing them took the event loop for minutes (16,000 files: 72 s
 * without a lease, deadline, cancel or control request served), so
 * that work is factory-fswalk's (fswalk/setup.c, fsjob.c): exec'd for
 * one entry, it copies the outputs from the run's upper into
 * .tmp.KEY.ID and answers with its digest, read by the loop as an
 * event and decoded field by field.  A second job, the sealer, takes
 * the entry's seal (one fstatat(2) per entry) the same way.  What is
 * left for the loop is bounded by the outputs: the opaque markers (an
 * xattr the helpers' seccomp filter does not allow), the meta and the
 * two renames.  The inputs the key hashes (files a worker wrote) and
 * the seal of an entry found under a key are taken by such jobs too.
 * A helper is killed by its pid when its attempt ends, and at its
 * deadline; it dies with the daemon.
 */
enum setup_phase {
	SETUP_INPUTS,		/* the inputs hashed, for the key */
	SETUP_CHECK,		/* a hit's entry checked against its seal */
	SETUP_STORE,		/* the outputs copied and hashed */
	SETUP_SEAL,		/* the copy sealed */
	SETUP_RECHECK,		/* another's entry under the key, checked */
	SETUP_VCHECK		/* the entry, before a verification */
};

static const char *const setup_phase_names[] = {
	"inputs hasher", "entry check", "store helper", "sealer",
	"entry check", "entry check"
};
static const char *const setup_phase_whats[] = {
	"setup inputs hasher", "setup entry check", "setup store helper",
	"setup sealer", "setup entry check", "setup entry check"
};
static const uint32_t setup_phase_kinds[] = {
	FSWALK_SETUP_INPUTS, FSWALK_SETUP_SEAL, FSWALK_SETUP_STORE,
	FSWALK_SETUP_SEAL, FSWALK_SETUP_SEAL, FSWALK_SETUP_SEAL
};

struct setup_job {
	TAILQ_ENTRY(setup_job)	 entry;
	struct attempt		*a;
	struct fsjob		 job;
	struct fswalk_answer	 ans;
	enum setup_phase	 phase;
	int			 waiting;	/* for a free helper */
	struct event		 retry;
	struct sha256_ctx	 key;		/* INPUTS: the key so far */
	char			 seal[SHA256_HEX_LEN + 1];	/* recorded */
	uint64_t		 t0;
	char			 src[PATH_MAX];	/* the tree walked */
	char			 tmp[PATH_MAX];	/* .tmp.KEY.ID, or none */
};

static TAILQ_HEAD(, setup_job)	setup_jobs =
    TAILQ_HEAD_INITIALIZER(setup_jobs);

static struct setup_job *
setup_job_find(struct attempt *a)
{
	struct setup_job	*j;

	TAILQ_FOREACH(j, &setup_jobs, entry)
		if (j->a == a)
			return (j);
	return (NULL);
}

static void	setup_job_end(struct fsjob *);
static void	setup_job_next(struct setup_job *, int, char *, size_t);
static int	setup_job_fork(struct setup_job *, char *, size_t);

/* Every helper was busy a second ago: j's is tried again. */
static void
setup_job_retry(int fd, short event, void *arg)
{
	struct setup_job	*j = arg;
	char			 err[1024];

	TAILQ_REMOVE(&setup_jobs, j, entry);
	j->waiting = 0;
	err[0] = '\0';
	if (setup_job_fork(j, err, sizeof(err)) == -1)
		setup_job_next(j, -1, err, sizeof(err));
}

/*
 * j's helper started on its tree (j->src) and, for a store, the entry
 * being made (j->tmp), both opened here by their exact paths; its
 * answer comes to setup_job_end().  With every helper busy it is tried
 * again in a second.  -1 with err if it could not be started.
 */
static int
setup_job_fork(struct setup_job *j, char *err, size_t errlen)
{
	struct fswalk_setup_job	 sj;
	struct ibuf		*b;
	struct timeval		 tv = { 1, 0 };
	int			 fds[2] = { -1, -1 }, rc;

	if (fsjob_busy()) {
		j->waiting = 1;
		evtimer_set(&j->retry, setup_job_retry, j);
		evtimer_add(&j->retry, &tv);
		TAILQ_INSERT_TAIL(&setup_jobs, j, entry);
		return (0);
	}
	memset(&sj, 0, sizeof(sj));
	sj.max = env->conf->setup_max;
	if (j->phase == SETUP_STORE) {
		strlcpy(sj.upper, j->src, sizeof(sj.upper));
		strlcpy(sj.tmp, j->tmp, sizeof(sj.tmp));
		sj.outputs = (char **)j->a->m->setup->outputs;
	} else {
		strlcpy(sj.tmp, j->src, sizeof(sj.tmp));
		if (j->phase == SETUP_INPUTS)
			sj.outputs = (char **)j->a->m->setup->inputs;
	}
	if ((fds[0] = open(j->src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (j->phase == SETUP_STORE &&
	    (fds[1] = open(j->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)) {
		if (j->phase == SETUP_INPUTS)
			snprintf(err, errlen, "setup key: pristine tree of %s: "
			    "%s", j->a->baseline, strerror(errno));
		else if (j->phase == SETUP_CHECK || j->phase == SETUP_RECHECK)
			snprintf(err, errlen, "setup entry %s: %s",
			    j->a->setup_key, strerror(errno));
		else
			snprintf(err, errlen, "setup: %s: %s", fds[0] == -1 ?
			    j->src : j->tmp, strerror(errno));
		goto fail;
	}
	if ((b = fswalk_setup_job_compose(setup_phase_kinds[j->phase],
	    &sj)) == NULL) {
		snprintf(err, errlen, "setup: helper: its job is too large");
		goto fail;
	}
	memset(&j->ans, 0, sizeof(j->ans));
	j->job.what = setup_phase_whats[j->phase];
	j->job.done = setup_job_end;
	j->job.arg = j;
	j->t0 = now_ms();
	rc = fsjob_start(&j->job, b, fds, j->phase == SETUP_STORE ? 2 : 1,
	    setup_job_deadline());
	ibuf_free(b);
	if (rc == -1) {
		snprintf(err, errlen, "setup: helper: %s", strerror(errno));
		goto fail;
	}
	close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	TAILQ_INSERT_TAIL(&setup_jobs, j, entry);
	if (j->phase == SETUP_STORE)
		log_info("%s: setup storing %s: helper pid %d", j->a->id,
		    j->a->setup_key, (int)j->job.pid);
	else
		log_debug("%s: %s for %s: pid %d", j->a->id, j->job.what,
		    j->a->setup_key[0] != '\0' ? j->a->setup_key : "its key",
		    (int)j->job.pid);
	return (0);
 fail:
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	return (-1);
}

/* The store helper for a's outputs, started.  -1 with err if not. */
static int
setup_store_start(struct attempt *a, char *err, size_t errlen)
{
	struct setup_job	*j;

	if ((j = calloc(1, sizeof(*j))) == NULL) {
		snprintf(err, errlen, "setup: %s", strerror(errno));
		return (-1);
	}
	j->a = a;
	j->phase = SETUP_STORE;
	if (setup_rundir(a, j->src, sizeof(j->src)) == -1 ||
	    strlcat(j->src, "/upper", sizeof(j->src)) >= sizeof(j->src) ||
	    setup_path(j->tmp, sizeof(j->tmp), ".tmp.%s.%s", a->setup_key,
	    a->id) == -1) {
		snprintf(err, errlen, "setup: path too long");
		j->tmp[0] = '\0';
		goto fail;
	}
	(void)fs_remove_tree(j->tmp);
	if (mkdir(j->tmp, 0755) == -1) {
		snprintf(err, errlen, "setup: %s: %s", j->tmp, strerror(errno));
		goto fail;
	}
	if (setup_job_fork(j, err, errlen) == -1)
		goto fail;
	return (0);
 fail:
	if (j->tmp[0] != '\0')
		(void)fs_remove_tree(j->tmp);
	free(j);
	return (-1);
}

/*
 * The helper's answer, decoded (fswalk_answer_parse) from a helper
 * that exited 0; a store's counts within the cache's bounds.  -1 with
 * err otherwise.
 */
static int
setup_reply_check(struct setup_job *j, char *err, size_t errlen)
{
	struct fswalk_answer	*r = &j->ans;
	struct fsjob		*f = &j->job;
	char			 why[256];

	if (f->late) {
		snprintf(err, errlen, "setup: %s (pid %d) killed at its "
		    "deadline of %lld s", setup_phase_names[j->phase],
		    (int)f->pid, f->secs);
		return (-1);
	}
	if (f->bad || !WIFEXITED(f->status) || WEXITSTATUS(f->status) != 0 ||
	    fswalk_answer_parse(f->ans, f->got, setup_phase_kinds[j->phase],
	    r, why, sizeof(why)) == -1 || (!r->failed &&
	    j->phase == SETUP_STORE && (r->u.setup.files > SETUP_MAXFILES ||
	    r->u.setup.bytes > env->conf->setup_max))) {
		snprintf(err, errlen, "setup: %s (pid %d) %s, %s %d",
		    setup_phase_names[j->phase], (int)f->pid,
		    f->got == 0 ? "ended without an "
		    "answer" : "answered out of form", WIFSIGNALED(f->status) ?
		    "killed by signal" : "exit status",
		    WIFSIGNALED(f->status) ? WTERMSIG(f->status) :
		    WEXITSTATUS(f->status));
		return (-1);
	}
	if (r->failed) {
		snprintf(err, errlen, "%s", r->err);
		return (-1);
	}
	return (0);
}

/*
 * The helper's copy, readied for its seal: each output directory
 * opaque (it replaces what the pristine tree has there; an xattr the
 * helper's filter does not allow), the entry read-only and synced.
 * Bounded by the outputs.  The entry's descriptor, or -1 with err.
 */
static int
setup_commit_prep(struct attempt *a, const char *tmp, char *err,
    size_t errlen)
{
	char * const	*outs = a->m->setup->outputs;
	size_t		 i;
	int		 dst, fd;

	if ((dst = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "setup: %s: %s", tmp, strerror(errno));
		return (-1);
	}
	for (i = 0; outs[i] != NULL; i++) {
		if ((fd = setup_opendir(dst, outs[i])) == -1) {
			if (errno == ENOENT || errno == ENOTDIR ||
			    errno == ELOOP)
				continue;	/* not made, or no directory */
			snprintf(err, errlen, "setup: store %s: %s", outs[i],
			    strerror(errno));
			goto fail;
		}
		if (fsetxattr(fd, "user.overlay.opaque", "y", 1, 0) == -1) {
			snprintf(err, errlen, "setup: store %s: opaque: %s",
			    outs[i], strerror(errno));
			close(fd);
			goto fail;
		}
		close(fd);
	}
	if (fchmod(dst, 0555) == -1 || fsync(dst) == -1) {
		snprintf(err, errlen, "setup: %s: %s", tmp, strerror(errno));
		goto fail;
	}
	return (dst);
 fail:
	close(dst);
	return (-1);
}

/*
 * The store helper answered: the entry readied, and its seal taken by
 * a second helper (one fstatat(2) per entry, up to SETUP_MAXFILES of
 * them: not the loop's).  -1 with err if it could not be started.
 */
static int
setup_seal_start(struct setup_job *j, char *err, size_t errlen)
{
	int	 dst;

	if ((dst = setup_commit_prep(j->a, j->tmp, err, errlen)) == -1)
		return (-1);
	close(dst);
	j->phase = SETUP_SEAL;
	strlcpy(j->src, j->tmp, sizeof(j->src));
	return (setup_job_fork(j, err, errlen));
}

/*
 * The sealed copy, made an entry: KEY.meta, then KEY, by rename.  1
 * when another attempt stored the key first: its entry is then checked
 * by a job (setup_check_start) before a uses it.
 */
static int
setup_commit(struct attempt *a, const char *tmp, const char *seal,
    char *err, size_t errlen)
{
	json_t		*meta;
	char		 tmeta[PATH_MAX], path[PATH_MAX];
	int		 ret = -1;

	if (setup_path(tmeta, sizeof(tmeta), ".tmp.%s.%s.meta",
	    a->setup_key, a->id) == -1) {
		snprintf(err, errlen, "setup: %s: %s", tmp, strerror(errno));
		return (-1);
	}
	crashpoint("setup:before-meta");
	if ((meta = json_pack("{s:s+, s:s+, s:s, s:I, s:I, s:I}", "digest",
	    "sha256:", a->setup_digest, "seal", "sha256:", seal, "tree",
	    a->setup_tree, "files", (json_int_t)a->setup_files, "bytes",
	    (json_int_t)a->setup_bytes, "created", (json_int_t)time(NULL))) ==
	    NULL ||
	    json_dump_file(meta, tmeta, JSON_COMPACT) == -1) {
		json_decref(meta);
		snprintf(err, errlen, "setup: %s: cannot write", tmeta);
		goto done;
	}
	json_decref(meta);
	/* Never over an entry: the first stored under a key stays. */
	if (setup_path(path, sizeof(path), "%s%s", a->setup_key, ".meta") ==
	    -1 || renameat2(AT_FDCWD, tmeta, AT_FDCWD, path,
	    RENAME_NOREPLACE) == -1) {
		if (errno == EEXIST && setup_meta(a->setup_key,
		    a->setup_digest, NULL, &a->setup_bytes, &a->setup_files,
		    NULL, a->setup_tree) == 0) {
			/* Another attempt stored the same key first. */
			ret = 1;
			goto done;
		}
		snprintf(err, errlen, "setup: %s: %s", path, strerror(errno));
		goto done;
	}
	crashpoint("setup:after-meta");
	if (setup_entry_path(a->setup_key, path, sizeof(path)) == -1 ||
	    renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == -1) {
		snprintf(err, errlen, "setup: %s: %s", path, strerror(errno));
		(void)setup_path(path, sizeof(path), "%s%s", a->setup_key,
		    ".meta");
		(void)unlink(path);
		goto done;
	}
	ret = 0;
 done:
	(void)unlink(tmeta);
	return (ret);
}

/*
 * After the setup run or its store: the run's disk goes, the stage's
 * time is kept, and the entry is a's (rc 0) or the key is dropped.
 */
static int
setup_done(struct attempt *a, int rc)
{
	setup_run_remove_start(a->id);
	a->setup_ms = now_ms() - a->setup_t0;
	attempt_part_time(a, PART_CACHE, a->setup_ms);
	if (rc == -1) {
		a->setup_key[0] = '\0';
		return (-1);
	}
	a->setup_ready = 1;
	setup_touch(a->setup_key);
	log_info("%s: setup stored %s: %llu files, %llu bytes", a->id,
	    a->setup_key, (unsigned long long)a->setup_files,
	    (unsigned long long)a->setup_bytes);
	(void)setup_evict();
	return (0);
}

/* Answered and reaped (or not started): a's setup goes on. */
static void
setup_job_end(struct fsjob *fj)
{
	struct setup_job *j = fj->arg;
	char		 err[1024];
	int		 rc;

	TAILQ_REMOVE(&setup_jobs, j, entry);
	err[0] = '\0';
	rc = setup_reply_check(j, err, sizeof(err));
	setup_job_next(j, rc, err, sizeof(err));
}

/*
 * The next step of a's setup after j's helper answered (rc 0) or not
 * (rc -1, err why): the key made and its entry looked up, a hit
 * checked, a store sealed, a seal made an entry.  j is freed or
 * started again.  A step that fails, or the last, reports to the
 * attempt (attempt_setup_stored).
 */
static void
setup_job_next(struct setup_job *j, int rc, char *err, size_t errlen)
{
	struct attempt	*a = j->a;

	switch (j->phase) {
	case SETUP_INPUTS:
		if (rc == 0)
			rc = setup_key_end(a, &j->key, &j->ans, a->setup_key,
			    err, errlen);
		sha256_abort(&j->key);
		free(j);
		if (rc == 0 && (rc = setup_lookup(a, err, errlen)) == 0)
			return;		/* a check, or the setup run */
		a->setup_key[0] = '\0';
		break;
	case SETUP_CHECK:
		rc = setup_check_end(j, rc, err, errlen);
		free(j);
		if (rc == 0)
			setup_hit(a);
		else
			a->setup_key[0] = '\0';
		break;
	case SETUP_STORE:
		if (rc == 0) {
			strlcpy(a->setup_digest, j->ans.u.setup.hex,
			    sizeof(a->setup_digest));
			a->setup_files = j->ans.u.setup.files;
			a->setup_bytes = j->ans.u.setup.bytes;
			if ((rc = setup_seal_start(j, err, errlen)) == 0)
				return;		/* the sealer answers */
		}
		setup_stored(j, rc, err);
		return;
	case SETUP_SEAL:
		if (rc == 0 && (rc = setup_commit(a, j->tmp,
		    j->ans.u.setup.hex, err, errlen)) == 1) {
			j->phase = SETUP_RECHECK;
			if ((rc = setup_check_start(j, err, errlen)) == 0)
				return;		/* the check answers */
		}
		setup_stored(j, rc, err);
		return;
	case SETUP_RECHECK:
		setup_stored(j, setup_check_end(j, rc, err, errlen), err);
		return;
	case SETUP_VCHECK:
		/* Failed: the loop's check says why, as before. */
		a->setup_vchecked = setup_check_end(j, rc, err, errlen) == 0 ?
		    1 : -1;
		if (a->setup_vchecked == -1)
			log_info("%s: %s", a->id, err);
		free(j);
		report_schedule();
		return;
	}
	report_setup_stored(a, rc, err);
	report_schedule();
}

/*
 * A store ended: its copy (renamed to KEY, or emptied by the helper:
 * nothing, or little) goes, and the entry is a's (rc 0) or not.
 */
static void
setup_stored(struct setup_job *j, int rc, const char *err)
{
	struct attempt	*a = j->a;

	setup_rm_start(j->tmp);
	free(j);
	rc = setup_done(a, rc);
	report_setup_stored(a, rc, err);
	report_schedule();
}

/* SIGCHLD for a remover: 1 if pid was one (fsjob.c reaps helpers). */
int
setup_reap(pid_t pid, int status)
{
	return (setup_rm_reap(pid, status));
}

/*
 * A helper whose attempt ended, or at shutdown: killed by its pid (not
 * reaped yet, so still ours; fsjob.c reaps it), then forgotten.
 */
static void
setup_job_kill(struct setup_job *j)
{
	TAILQ_REMOVE(&setup_jobs, j, entry);
	if (j->phase == SETUP_INPUTS)
		sha256_abort(&j->key);
	if (j->waiting) {
		evtimer_del(&j->retry);
		return;
	}
	if (!j->job.reaped)
		log_info("%s: %s (pid %d) killed", j->a->id, j->job.what,
		    (int)j->job.pid);
	fsjob_cancel(&j->job);
}

/* At shutdown: no helper outlives the daemon (start removes .tmp). */
void
setup_shutdown(void)
{
	struct setup_job	*j;

	while ((j = TAILQ_FIRST(&setup_jobs)) != NULL) {
		setup_job_kill(j);
		free(j);
	}
	setup_rm_shutdown();
}

/*
 * The entry under a's key is the one whose digest a's receipts carry:
 * its meta says that digest, and its seal is the one taken when those
 * bytes were hashed.  Before the agent's tree on a hit and before the
 * validation run's.
 */
static int
setup_verify_meta(struct attempt *a, char seal[SHA256_HEX_LEN + 1],
    char *err, size_t errlen)
{
	char	 digest[SHA256_HEX_LEN + 1];

	if (setup_meta(a->setup_key, digest, seal, NULL, NULL, NULL,
	    NULL) == -1) {
		snprintf(err, errlen, "setup entry %s: not in the store",
		    a->setup_key);
		return (-1);
	}
	if (strcmp(digest, a->setup_digest) != 0) {
		snprintf(err, errlen, "setup entry %s: digest sha256:%s, not "
		    "the sha256:%s of its receipts", a->setup_key, digest,
		    a->setup_digest);
		return (-1);
	}
	return (0);
}

/*
 * The same check by a job, for an entry found under a's key (j->phase
 * SETUP_CHECK) or stored first by another attempt (SETUP_RECHECK): the
 * meta here, the seal by factory-fswalk (setup_check_end).
 */
static int
setup_check_start(struct setup_job *j, char *err, size_t errlen)
{
	if (setup_verify_meta(j->a, j->seal, err, errlen) == -1)
		return (-1);
	if (setup_entry_path(j->a->setup_key, j->src, sizeof(j->src)) == -1) {
		snprintf(err, errlen, "setup entry %s: %s", j->a->setup_key,
		    strerror(errno));
		return (-1);
	}
	return (setup_job_fork(j, err, errlen));
}

/* The seal the job took (rc 0), compared with the one recorded. */
static int
setup_check_end(struct setup_job *j, int rc, char *err, size_t errlen)
{
	struct attempt	*a = j->a;

	if (rc == -1 && !j->ans.failed)
		return (-1);	/* the helper's own failure, in err */
	if (rc == -1 || strcmp(j->ans.u.setup.hex, j->seal) != 0) {
		snprintf(err, errlen, "setup entry %s: changed since it was "
		    "stored (seal %s, recorded sha256:%s): not the sha256:%s "
		    "of its receipts", a->setup_key, rc == -1 ? "unreadable" :
		    j->ans.u.setup.hex, j->seal, a->setup_digest);
		return (-1);
	}
	log_debug("%s: setup entry %s: seal checked in %llu ms", a->id,
	    a->setup_key, (unsigned long long)(now_ms() - j->t0));
	return (0);
}

/*
 * Before a verification of a (attempt_verify) and its validation run
 * (attempt_validate): 1 to go on, its entry checked by a job
 * (a->setup_vchecked 1, used once by attempt_mount_checkout) or to be checked in the loop (-1: the job
 * could not be started or failed, and the loop's check says why); 0
 * while the job runs (its answer schedules a again).
 */
int
setup_verify_start(struct attempt *a)
{
	struct setup_job	*j;
	char			 err[1024];

	if (a->setup_vchecked != 0)
		return (1);
	if (setup_job_find(a) != NULL)
		return (0);
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		a->setup_vchecked = -1;
		return (1);
	}
	j->a = a;
	j->phase = SETUP_VCHECK;
	if (setup_check_start(j, err, sizeof(err)) == -1) {
		free(j);
		a->setup_vchecked = -1;
		return (1);
	}
	return (0);
}

/*
 * The same check in the loop (holds.c), only where the job could not
 * say (it did not start, or it refused the entry): then this says why.
 */
int
setup_verify(struct attempt *a, char *err, size_t errlen)
{
	char		 path[PATH_MAX];
	char		 seal[SHA256_HEX_LEN + 1], hex[SHA256_HEX_LEN + 1];
	uint64_t	 t0 = now_ms();
	int		 fd, rc;

	if (setup_verify_meta(a, seal, err, errlen) == -1)
		return (-1);
	if (setup_entry_path(a->setup_key, path, sizeof(path)) == -1 ||
	    (fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "setup entry %s: %s", a->setup_key,
		    strerror(errno));
		return (-1);
	}
	rc = setup_seal(fd, hex);
	close(fd);
	if (rc == -1 || strcmp(hex, seal) != 0) {
		snprintf(err, errlen, "setup entry %s: changed since it was "
		    "stored (seal %s, recorded sha256:%s): not the sha256:%s "
		    "of its receipts", a->setup_key, rc == -1 ? "unreadable" :
		    hex, seal, a->setup_digest);
		return (-1);
	}
	log_debug("%s: setup entry %s: seal checked in %llu ms", a->id,
	    a->setup_key, (unsigned long long)(now_ms() - t0));
	return (0);
}

/*
 * The setup run's disk and tree: a tmpfs of the attempt's disk size,
 * root's, at STATE/setup/run/ID, and on it an overlay of the pristine
 * checkout with an upper of the attempt's uid.
 */
static int
setup_mount_run(struct attempt *a, char *err, size_t errlen)
{
	char	 dir[PATH_MAX], path[PATH_MAX], lower[PATH_MAX];

	if (setup_rundir(a, dir, sizeof(dir)) == -1 ||
	    pristine_path(a->repo, a->baseline, "", lower, sizeof(lower)) ==
	    -1) {
		snprintf(err, errlen, "setup: path too long");
		return (-1);
	}
	if (setup_run_removing(a->id) || setup_run_remove(a->id) == -1) {
		snprintf(err, errlen, "setup: %s: left over, cannot be "
		    "removed", dir);
		return (-1);
	}
	if (mkdir(dir, 0700) == -1 ||
	    disk_mount(dir, a->disk != 0 ? a->disk : disk_limit(a->m), 0, 0,
	    err, errlen) == -1)
		goto fail;
	snprintf(path, sizeof(path), "%s/upper", dir);
	if (fs_mkdir_owned(path, 0755, a->uid, a->uid) == -1)
		goto fail;
	snprintf(path, sizeof(path), "%s/work", dir);
	if (fs_mkdir_owned(path, 0700, 0, 0) == -1)
		goto fail;
	snprintf(path, sizeof(path), "%s/tree", dir);
	if (fs_mkdir_owned(path, 0755, 0, 0) == -1)
		goto fail;
	return (disk_overlay(lower, NULL, dir, "tree", a->uid, a->uid, err,
	    errlen));
 fail:
	if (err[0] == '\0')
		snprintf(err, errlen, "setup: %s: %s", dir, strerror(errno));
	return (-1);
}

/* The entry under a's key was checked: a's tree gets it. */
static void
setup_hit(struct attempt *a)
{
	a->setup_hit = 1;
	a->setup_ready = 1;
	a->setup_ms = now_ms() - a->setup_t0;
	setup_touch(a->setup_key);
	attempt_part_time(a, PART_CACHE, a->setup_ms);
	log_info("%s: setup cache hit %s", a->id, a->setup_key);
}

/*
 * a's key is made: its entry is checked (a hit), or the setup runs (a
 * miss).  0 when either was started, -1 with err.
 */
static int
setup_lookup(struct attempt *a, char *err, size_t errlen)
{
	struct setup_job	*j;
	char			 tree[PATH_MAX];

	if (setup_meta(a->setup_key, a->setup_digest, NULL, &a->setup_bytes,
	    &a->setup_files, NULL, a->setup_tree) == 0) {
		/* The entry is what was hashed, before a tree gets it. */
		if ((j = calloc(1, sizeof(*j))) == NULL) {
			snprintf(err, errlen, "setup: %s", strerror(errno));
			return (-1);
		}
		j->a = a;
		j->phase = SETUP_CHECK;
		if (setup_check_start(j, err, errlen) == -1) {
			free(j);
			return (-1);
		}
		return (0);
	}
	a->setup_hit = 0;
	if (setup_mount_run(a, err, errlen) == -1) {
		(void)setup_run_remove(a->id);
		return (-1);
	}
	if (setup_rundir(a, tree, sizeof(tree)) == -1 ||
	    strlcat(tree, "/tree", sizeof(tree)) >= sizeof(tree)) {
		snprintf(err, errlen, "setup: path too long");
		(void)setup_run_remove(a->id);
		return (-1);
	}
	if ((a->run = run_start(a, RUN_SETUP, tree, err, errlen)) == NULL) {
		(void)setup_run_remove(a->id);
		return (-1);
	}
	log_info("%s: setup cache miss %s: setup running as uid %u", a->id,
	    a->setup_key, (unsigned)a->uid);
	return (0);
}

/*
 * Before the agent of an attempt with a setup: 1 when its outputs are
 * there (a hit checked, or a miss stored), 0 when its key's inputs are
 * being hashed (factory-fswalk; a check of the entry or the setup run
 * follows, then attempt_setup_stored() or attempt_setup_done()), -1
 * with err.
 */
int
setup_begin(struct attempt *a, char *err, size_t errlen)
{
	struct setup_job	*j;

	err[0] = '\0';
	if (a->setup_ready)
		return (1);
	if (setup_job_find(a) != NULL)
		return (0);		/* its helper runs */
	a->setup_t0 = now_ms();
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		snprintf(err, errlen, "setup: %s", strerror(errno));
		return (-1);
	}
	j->a = a;
	j->phase = SETUP_INPUTS;
	if (pristine_path(a->repo, a->baseline, "", j->src,
	    sizeof(j->src)) == -1) {
		snprintf(err, errlen, "setup key: pristine tree of %s: %s",
		    a->baseline, strerror(ENAMETOOLONG));
		free(j);
		return (-1);
	}
	if (setup_key_begin(a, &j->key, err, errlen) == -1) {
		free(j);
		a->setup_key[0] = '\0';
		return (-1);
	}
	if (setup_job_fork(j, err, errlen) == -1) {
		sha256_abort(&j->key);
		free(j);
		a->setup_key[0] = '\0';
		return (-1);
	}
	return (0);
}

/*
 * The setup run of a was reaped (r, freed here): 1 when its store
 * helper was started (attempt_setup_stored() follows), else 0 or -1
 * with why not (its exit, a refused output).  Its disk is removed once
 * nothing reads it.
 */
int
setup_finish(struct attempt *a, struct run *r, char *err, size_t errlen)
{
	int	 st = r->status, rc = -1;

	a->setup_status = st;
	err[0] = '\0';
	if (r->sb.watchdog_fired)
		snprintf(err, errlen, "fenced: setup ended by its sandbox's "
		    "watchdog, its lease lapsed");
	else if (r->cancelled)
		snprintf(err, errlen, "setup cancelled");
	else if (r->timedout)
		snprintf(err, errlen, "setup killed: wall time of %llums "
		    "exceeded", (unsigned long long)a->m->limits.wall_ms);
	else if (run_limit("setup", a->m, 0, &r->usage, st, err,
	    errlen) != NULL)
		;	/* the limit that fired, whoever's process it was */
	else if (WIFSIGNALED(st))
		snprintf(err, errlen, "setup killed by signal %d",
		    WTERMSIG(st));
	else if (WEXITSTATUS(st) != 0)
		snprintf(err, errlen, "setup exited with status %d",
		    WEXITSTATUS(st));
	else if (setup_store_start(a, err, errlen) == 0)
		rc = 1;
	run_free(r);
	if (rc == 1)
		return (1);
	return (setup_done(a, rc));
}

/*
 * At teardown: a store helper still running is killed and reaped by
 * its pid, then its temporary and the setup run's disk go.
 */
int
setup_teardown(struct attempt *a)
{
	struct setup_job	*j;

	if ((j = setup_job_find(a)) != NULL) {
		setup_job_kill(j);
		if (j->tmp[0] != '\0')
			setup_rm_start(j->tmp);
		free(j);
	}
	if (setup_run_removing(a->id))
		return (0);	/* its remover's */
	return (setup_run_remove(a->id));
}

/* What the running receipt says of the setup: NULL without one. */
json_t *
setup_facts(struct attempt *a)
{
	json_t	*o;

	if (a->m->setup == NULL || !a->setup_ready)
		return (NULL);
	if ((o = json_pack("{s:s, s:b, s:s+, s:I, s:I, s:I}", "key",
	    a->setup_key, "hit", a->setup_hit, "digest", "sha256:",
	    a->setup_digest, "files", (json_int_t)a->setup_files, "bytes",
	    (json_int_t)a->setup_bytes, "ms", (json_int_t)a->setup_ms)) ==
	    NULL)
		fatal(NULL);
	if (!a->setup_hit)
		json_object_set_new(o, "status", json_integer(a->setup_status));
	/* Whose entry: by tree, or the submitter's by inputs alone. */
	json_object_set_new(o, "reuse", json_string(a->m->setup->reuse ==
	    SETUP_REUSE_INPUTS ? "inputs" : "tree"));
	if (a->m->setup->reuse == SETUP_REUSE_INPUTS)
		json_object_set_new(o, "submitter",
		    json_integer(a->submitter));
	/* Live only: a replayed attempt's is in its running receipt. */
	if (a->setup_tree[0] != '\0')
		json_object_set_new(o, "tree", json_string(a->setup_tree));
	return (o);
}
