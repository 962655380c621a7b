/*
 * What an attempt holds while it runs, and gives back: its uid, its
 * trees (the pristine baseline, the setup's lower layer, the overlay
 * mounts of an agent's or a verifier's checkout), its sandboxes'
 * cgroups, and the children busy with it.  Asked and done by the
 * attempts' core (attempt.c); nothing here moves an attempt's state.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "esc.h"
#include "factoryd.h"
#include "image.h"
#include "invmsg.h"
#include "journal.h"
#include "log.h"
#include "receipt.h"
#include "toolchain.h"

static int
uid_in_use(uid_t uid)
{
	struct attempt	*a;

	TAILQ_FOREACH(a, &env->attempts, entry) {
		if (a->torn_down)
			continue;
		if (a->state != AS_QUEUED && attempt_has_uid(a, uid))
			return (1);
		if (a->vuid == uid)
			return (1);
	}
	return (0);
}

/* uid is a's: its agent's, its validation's or a service's. */
int
attempt_has_uid(const struct attempt *a, uid_t uid)
{
	int	 i;

	if (uid == 0)
		return (0);
	if (a->uid == uid || a->vuid == uid)
		return (1);
	for (i = 0; i < 2 * a->m->nservices && i < 2 * MANIFEST_SERVICES; i++)
		if (a->suid[i] == uid)
			return (1);
	return (0);
}

uid_t
uid_allocate(void)
{
	uid_t	 u;

	if (uid_allocate_n(&u, 1) == -1)
		return (0);
	return (u);
}

/* n free uids, all different, into out: 0, or -1 if there are not. */
int
uid_allocate_n(uid_t *out, int n)
{
	uid_t	 u;
	int	 k = 0, j;

	for (u = env->conf->attempt_uid_lo; u <= env->conf->attempt_uid_hi &&
	    k < n; u++) {
		if (uid_in_use(u))
			continue;
		for (j = 0; j < k && out[j] != u; j++)
			;
		if (j == k)
			out[k++] = u;
	}
	return (k == n ? 0 : -1);
}

int
attempt_active(const struct attempt *a)
{
	return (a->state >= AS_PROVISIONING && a->state <= AS_VERIFYING);
}

/*
 * Before each sandbox of an attempt with an image: the image is still
 * in the store and its toolchain still gives the digest frozen at
 * submission.  The store is root's, so a change is an operator's doing
 * (or worse): the run would not be the one the receipts describe.
 */
int
attempt_env_check(struct attempt *a, char *err, size_t errlen)
{
	char	 root[PATH_MAX], hex[SHA256_HEX_LEN + 1], why[512];
	int	 fd;

	if (a->image[0] == '\0')
		return (0);
	if (image_rootfs(a->image + 7, root, sizeof(root)) == -1) {
		snprintf(err, errlen, "image %s: no longer in the store",
		    a->image);
		return (-1);
	}
	if (a->m->toolchain == NULL)
		return (0);
	if ((fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "image %s: %s", a->image,
		    strerror(errno));
		return (-1);
	}
	if (toolchain_digest(fd, a->m->toolchain, hex, why,
	    sizeof(why)) == -1) {
		close(fd);
		snprintf(err, errlen, "image %s: %s", a->image, why);
		return (-1);
	}
	close(fd);
	if (strcmp(hex, a->toolchain + 7) != 0) {
		snprintf(err, errlen, "image %s: toolchain digest sha256:%s, "
		    "not the sha256:%s frozen at submission", a->image, hex,
		    a->toolchain + 7);
		return (-1);
	}
	return (0);
}

/*
 * ready: the tree becomes an overlay of the pristine checkout and the
 * upper layer the worker made; both handed to the attempt's uid.  Done
 * again after a restart: a tree already mounted is left as it is.
 * 1 while the cold checkout is sealed: cont (pristine_commit) after.
 */
int
attempt_pristine(struct attempt *a,
    void (*cont)(struct attempt *, const char *), char *err, size_t errlen)
{
	struct stat	 st;
	char		 tmp[PATH_MAX], why[256];
	int		 rc;

	if (pristine_path(a->repo, a->baseline, ".", tmp, sizeof(tmp)) ==
	    -1 || strlcat(tmp, a->id, sizeof(tmp)) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	/* A cold checkout of ours becomes the shared one. */
	if (lstat(tmp, &st) == 0 && (rc = pristine_commit(a, tmp, cont, why,
	    sizeof(why))) != 0) {
		snprintf(err, errlen, "pristine %s: %s", tmp, rc == 1 ?
		    "still being sealed" : why);
		return (rc);
	}
	return (0);
}

/* The setup entry's outputs for a's trees, or NULL without a setup. */
static const char *
attempt_setup_lower(struct attempt *a, char *buf, size_t len)
{
	if (a->m->setup == NULL || a->setup_key[0] == '\0')
		return (NULL);
	if (setup_entry_path(a->setup_key, buf, len) == -1)
		return (NULL);
	return (buf);
}

int
attempt_mount_tree(struct attempt *a, char *err, size_t errlen)
{
	char		 lower[PATH_MAX], path[PATH_MAX], extra[PATH_MAX];
	char		 why[256];
	uint64_t	 t0 = now_ms();

	if (attempt_pristine(a, NULL, err, errlen) == -1)
		return (-1);
	if (pristine_path(a->repo, a->baseline, "", lower, sizeof(lower)) ==
	    -1) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	if (disk_overlay_mounted(a->dir, "tree"))
		return (disk_overlay_dev(a->dir, "tree", &a->tree_dev, err,
		    errlen));
	/* The worker made it: everything in it must be the worker's. */
	snprintf(path, sizeof(path), "%s/upper", a->dir);
	if (fs_chown_tree(path, env->conf->users[PROC_WORKER].uid, a->uid,
	    a->uid, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: chown: %s", path, why);
		return (-1);
	}
	/* The overlay's scratch: root's, out of everyone else's reach. */
	snprintf(path, sizeof(path), "%s/work", a->dir);
	if (fs_remove_tree(path) == -1 || fs_mkdir_owned(path, 0700, 0, 0) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (a->m->setup != NULL && a->setup_key[0] == '\0') {
		snprintf(err, errlen, "setup: no cache entry");
		return (-1);
	}
	if (disk_overlay(lower, attempt_setup_lower(a, extra, sizeof(extra)),
	    a->dir, "tree", a->uid, a->uid, err, errlen) == -1 ||
	    disk_overlay_dev(a->dir, "tree", &a->tree_dev, err, errlen) == -1)
		return (-1);
	crashpoint("parent:after-tree");
	log_debug("%s: tree mounted in %d ms", a->id, (int)(now_ms() - t0));
	return (0);
}

/*
 * An image an attempt still needs (image rm refuses it): hex bare or
 * as "sha256:HEX".  An ended attempt's sandboxes are gone, and its
 * receipts keep the digest.
 */
int
attempt_uses_image(const char *hex)
{
	struct attempt	*a;

	/* Test builds: regress/image's "in use" without an attempt. */
	if (faultpoint("image:in-use"))
		return (1);
	if (strncmp(hex, "sha256:", 7) == 0)
		hex += 7;
	TAILQ_FOREACH(a, &env->attempts, entry)
		if (!attempt_terminal(a) && !a->torn_down &&
		    a->image[0] != '\0' && strcmp(a->image + 7, hex) == 0)
			return (1);
	return (0);
}

/*
 * The validation run's tree, verify/ID/checkout: an overlay of the
 * pristine checkout and verify/ID/upper, as an attempt's tree is.  For
 * the verifier first (uid, its own), which writes the commit's changes
 * through it; then, for the run, handed to the validation uid: the
 * overlay is mounted again over the same upper, which becomes that
 * uid's, with the pristine tree seen as that uid's.
 */
int
attempt_mount_checkout(struct attempt *a, uid_t uid, char *err, size_t errlen)
{
	uid_t	 vu = env->conf->users[PROC_VERIFIER].uid;
	gid_t	 vg = env->conf->users[PROC_VERIFIER].gid;
	char	 lower[PATH_MAX], path[PATH_MAX], extra[PATH_MAX];
	int	 checked = a->setup_vchecked == 1;

	a->setup_vchecked = 0;
	if (pristine_path(a->repo, a->baseline, "", lower, sizeof(lower)) ==
	    -1) {
		snprintf(err, errlen, "%s: pristine path too long", a->repo);
		return (-1);
	}
	/*
	 * The outputs the agent had, by key, checked against the
	 * receipts by a job just before (setup.c, setup_verify_start:
	 * for the verifier from attempt_verify, for the validation run
	 * from attempt_validate), or here if the job could not say.
	 */
	if (a->m->setup != NULL && (a->setup_key[0] == '\0' ||
	    (!checked && setup_verify(a, err, errlen) == -1))) {
		if (a->setup_key[0] == '\0')
			snprintf(err, errlen, "setup: no cache entry recorded");
		return (-1);
	}
	if (uid == vu) {
		snprintf(path, sizeof(path), "%s/upper", a->vdir);
		if (fs_mkdir_owned(path, 0755, vu, vg) == -1)
			goto fail;
		snprintf(path, sizeof(path), "%s/checkout", a->vdir);
		if (fs_mkdir_owned(path, 0755, 0, 0) == -1)
			goto fail;
	} else {
		snprintf(path, sizeof(path), "%s/checkout", a->vdir);
		if (disk_overlay_unmount(a->vdir, "checkout") == -1)
			goto fail;
		if (disk_chown_upper(a->vdir, vu, uid, err, errlen) == -1)
			return (-1);
	}
	/* A volatile overlay's work dir is not mounted twice: a new one. */
	snprintf(path, sizeof(path), "%s/work", a->vdir);
	if (fs_remove_tree(path) == -1 || fs_mkdir_owned(path, 0700, 0, 0) ==
	    -1)
		goto fail;
	if (disk_overlay(lower, attempt_setup_lower(a, extra,
	    sizeof(extra)), a->vdir, "checkout", uid, uid, err, errlen) == -1)
		return (-1);
	return (disk_overlay_dev(a->vdir, "checkout", &a->checkout_dev, err,
	    errlen));
 fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return (-1);
}

/*
 * The verifier asked for its validation run (VALIDATE_REQ): the setup
 * entry checked by a job (its answer schedules a again: 1 meanwhile),
 * then the checkout, its environment and the run (0).  -1 and why:
 * the caller fails a.  A verifier gone meanwhile takes the request
 * with it.
 */
int
attempt_validate(struct attempt *a, char *err, size_t errlen)
{
	struct run_with	 w;
	char		 path[PATH_MAX], why[512];

	if (a->state != AS_VERIFYING || a->verifier == NULL ||
	    a->run != NULL) {
		a->validate_req = 0;
		return (0);
	}
	if (a->m->setup != NULL && setup_verify_start(a) == 0)
		return (1);
	/* Its own services first: again once they are ready. */
	switch (service_ready(a, 1, why, sizeof(why))) {
	case -1:
		a->validate_req = 0;
		snprintf(err, errlen, "validation services: %s", why);
		return (-1);
	case 0:
		return (1);
	}
	a->validate_req = 0;
	/* Our own path, whatever the verifier says. */
	snprintf(path, sizeof(path), "%s/checkout", a->vdir);
	if (attempt_mount_checkout(a, a->vuid, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", path, why);
		return (-1);
	}
	if (attempt_env_check(a, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "validation environment: %s", why);
		return (-1);
	}
	memset(&w, 0, sizeof(w));
	w.kind = RUN_VALIDATION;
	service_with(a, &w);
	if ((a->run = run_start_with(a, &w, path, why, sizeof(why))) == NULL) {
		snprintf(err, errlen, "validation sandbox: %s", why);
		return (-1);
	}
	return (0);
}

size_t
strv_len(char * const *v)
{
	size_t	 n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return (n);
}

struct child *
verifier_free(void)
{
	struct child	*c;
	int		 i;

	for (i = 0; i < env->nchildren; i++) {
		c = &env->children[i];
		/* One that gave its verdict is on its way out. */
		if (c->id == PROC_VERIFIER && c->state == CHILD_RUNNING &&
		    env->busy[i] == NULL && !c->recycle && !c->reconfig)
			return (c);
	}
	return (NULL);
}

int
child_index(struct child *c)
{
	return ((int)(c - env->children));
}

/*
 * A cohort's PUBLISH written out, not only queued, so that a crash
 * here is one after the publisher had it (the crash point's point).
 */
void
attempt_publish_sent(void)
{
#ifdef FACTORY_TESTBUILD
	struct child	*c;

	if ((c = proc_find(PROC_PUBLISHER, 0)) != NULL)
		(void)imsgbuf_write(&c->iev.ibuf);
	crashpoint("parent:cohort-publish-sent");
#endif
}

/* What the worker is doing for an attempt: provisioning or collecting. */
int
attempt_held_by_worker(struct attempt *a)
{
	return (a->state == AS_PROVISIONING || (a->state == AS_RUNNING &&
	    a->run == NULL && a->exit_status != -1));
}

int
attempt_cleanup_sandboxes(struct attempt *a, int how)
{
	struct sandbox	 sb;
	char		 id[ATTEMPT_ID_MAX + 8], err[512];
	int		 v, ret = 0;

	/* The agent's, validation's, then each service's (both sets). */
	for (v = 0; v < CG_KIND_SERVICE + 2 * a->m->nservices; v++) {
		if (cg_name(a->id, v, id, sizeof(id)) == -1)
			continue;
		if (sandbox_cgroup_paths(id, &sb) == -1)
			continue;
		(void)sandbox_kill(&sb);
		shell_cgroups_remove(&sb);
		if (sandbox_destroy(&sb, err, sizeof(err)) == 0)
			continue;
		if (errno == EBUSY && how == CLEANUP_LATER) {
			(void)sandbox_destroy_later(&sb, TEARDOWN_CG_MS *
			    TEARDOWN_CG_TRIES, NULL, NULL);
			continue;
		}
		if (errno == EBUSY && how == CLEANUP_TRY) {
			if (ret == 0)
				ret = 1;
			continue;
		}
		log_warnx("%s: %s", a->id, err);
		ret = -1;
	}
	return (ret);
}

/* Every process of a's uids killed: how many there were. */
int
attempt_kill_uids(struct attempt *a)
{
	int	 n, i, k;

	n = uid_kill_all(a->uid, a->vuid);
	for (i = 0; i < 2 * a->m->nservices; i += 2) {
		k = uid_kill_all(a->suid[i], a->suid[i + 1]);
		if (k > 0)
			n = n > 0 ? n + k : k;
		else if (k == -1 && n == 0)
			n = -1;
	}
	return (n);
}
