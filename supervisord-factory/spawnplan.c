/*
 * A sandbox's plan, built from its spec in the parent (sandbox.c
 * sends it): the binds of the tree, the image's root, the limits,
 * the filter, each checked and bounded before the launcher gets it
 * (libcommon/plan.c encodes it).  Nothing here spawns or waits.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>	/* clone3: struct clone_args */

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
#include <termios.h>
#include <unistd.h>

#include "conf.h"
#include "landlock.h"
#include "plan.h"
#include "sandbox.h"

/* Whether path is one of the root's system directories or below one. */
static int
spawn_in_root(const char *path)
{
	char	 real[PATH_MAX];
	int	 i;

	for (i = 0; plan_rootdirs[i] != NULL; i++) {
		if (realpath(plan_rootdirs[i], real) == NULL)
			continue;
		if (strcmp(path, real) == 0 || plan_below(path, real) != NULL)
			return (1);
	}
	return (0);
}

static int
spawn_plan_bind(struct plan *pl, const char *what, const char *path,
    int exec, char *err, size_t errlen)
{
	char	 real[PATH_MAX];

	if (path[0] != '/') {
		snprintf(err, errlen, "%s %s: not an absolute path", what,
		    path);
		return (-1);
	}
	if (realpath(path, real) == NULL) {
		if (errno == ENOENT)
			return (0);	/* nothing to show */
		snprintf(err, errlen, "%s %s: %s", what, path,
		    strerror(errno));
		return (-1);
	}
	if (strcmp(real, "/") == 0) {
		snprintf(err, errlen, "%s %s: would show the host's root",
		    what, path);
		return (-1);
	}
	if ((pl->image[0] == '\0' && spawn_in_root(real)) ||
	    strcmp(real, pl->tree) == 0 ||
	    plan_below(real, pl->tree) != NULL)
		return (0);	/* there already */
	if (pl->nbinds == SANDBOX_MAXBINDS) {
		snprintf(err, errlen, "more than %d exec and expose paths",
		    SANDBOX_MAXBINDS);
		return (-1);
	}
	strlcpy(pl->binds[pl->nbinds], real, PATH_MAX);
	pl->bexec[pl->nbinds++] = exec;
	return (0);
}

/*
 * What the root shows beyond its system directories: the manifest's
 * exec paths (executable) and spec->expose (not), read-only.
 */
static int
spawn_plan_binds(struct plan *pl, const struct sandbox_spec *spec,
    char *err, size_t errlen)
{
	int	 i;

	if ((pl->binds = calloc(SANDBOX_MAXBINDS, sizeof(*pl->binds))) ==
	    NULL || (pl->bexec = calloc(SANDBOX_MAXBINDS,
	    sizeof(*pl->bexec))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		goto fail;
	}
	/* With an image, exec paths are its own: nothing of the host's. */
	for (i = 0; pl->image[0] == '\0' && spec->exec_allow != NULL &&
	    spec->exec_allow[i] != NULL; i++)
		if (spawn_plan_bind(pl, "exec", spec->exec_allow[i], 1, err,
		    errlen) == -1)
			goto fail;
	for (i = 0; spec->expose != NULL && spec->expose[i] != NULL; i++)
		if (spawn_plan_bind(pl, "expose", spec->expose[i], 0, err,
		    errlen) == -1)
			goto fail;
	return (0);
 fail:
	free(pl->binds);
	free(pl->bexec);
	pl->binds = NULL;
	pl->bexec = NULL;
	return (-1);
}

/*
 * The image's rootfs: a root-owned directory that is not / and that
 * the overlay's option string can carry as it is.
 */
static int
spawn_plan_image(struct plan *pl, const char *image, char *err,
    size_t errlen)
{
	struct stat	 st;

	if (image[0] != '/' || realpath(image, pl->image) == NULL) {
		snprintf(err, errlen, "image %s: %s", image, image[0] == '/' ?
		    strerror(errno) : "not an absolute path");
		return (-1);
	}
	if (stat(pl->image, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != 0 || (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "image %s: not a root-owned directory "
		    "only root writes", pl->image);
		return (-1);
	}
	if (strcmp(pl->image, "/") == 0 || strpbrk(pl->image, ",:\\") !=
	    NULL) {
		snprintf(err, errlen, "image %s: may not be / or contain "
		    "',', ':' or '\\'", pl->image);
		return (-1);
	}
	return (0);
}

/*
 * A pinned tree (spec->tree_dev, tree_ino) is the directory made for
 * it, whatever its path now resolves through: a child that owns a
 * directory on the way may have put a link or another directory there.
 */
static int
spawn_plan_pinned(struct plan *pl, char *err, size_t errlen)
{
	const struct sandbox_spec	*spec = pl->spec;
	struct stat			 st;

	if (spec->tree_ino == 0)
		return (0);
	if (lstat(pl->tree, &st) == -1) {
		snprintf(err, errlen, "tree %s: %s", pl->tree, strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(st.st_mode) || (uint64_t)st.st_dev != spec->tree_dev ||
	    (uint64_t)st.st_ino != spec->tree_ino) {
		snprintf(err, errlen, "tree %s: not the directory made for it",
		    spec->tree);
		return (-1);
	}
	return (0);
}

/*
 * A service's data: its tree resolved (its path is the one the service
 * sees), pinned, still the directory pinned; at most SANDBOX_MAXDATA
 * paths, which the launcher resolves below it.
 */
static int
spawn_plan_data(const struct sandbox_spec *spec, char *err, size_t errlen)
{
	struct stat	 st;
	char		 real[PATH_MAX];
	int		 n;

	if (spec->data_root == NULL)
		return (0);
	for (n = 0; spec->data != NULL && spec->data[n] != NULL; n++)
		;
	if (n == 0 || n > SANDBOX_MAXDATA) {
		snprintf(err, errlen, "data: %d paths, not 1 to %d", n,
		    SANDBOX_MAXDATA);
		return (-1);
	}
	if (spec->data_root[0] != '/' || realpath(spec->data_root, real) ==
	    NULL || strcmp(real, spec->data_root) != 0 ||
	    strcmp(real, "/") == 0) {
		snprintf(err, errlen, "data %s: not a resolved absolute path "
		    "other than /", spec->data_root);
		return (-1);
	}
	if (spec->data_ino == 0 || lstat(real, &st) == -1 ||
	    !S_ISDIR(st.st_mode) || (uint64_t)st.st_dev != spec->data_dev ||
	    (uint64_t)st.st_ino != spec->data_ino) {
		snprintf(err, errlen, "data %s: not the tree of the run it "
		    "serves", spec->data_root);
		return (-1);
	}
	return (0);
}

/* Resolve the tree and the masks while errors can still be returned. */
int
spawn_plan(struct plan *pl, const struct sandbox_spec *spec, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX];
	int	 n;

	memset(pl, 0, sizeof(*pl));
	pl->spec = spec;
	pl->memfd_noexec = probe_memfd_noexec();
	if (spec->tree == NULL || spec->tree[0] != '/' ||
	    realpath(spec->tree, pl->tree) == NULL) {
		snprintf(err, errlen, "tree %s: %s", spec->tree ? spec->tree :
		    "(null)", spec->tree && spec->tree[0] == '/' ?
		    strerror(errno) : "not an absolute path");
		return (-1);
	}
	if (strcmp(pl->tree, "/") == 0) {
		snprintf(err, errlen, "tree may not be /");
		return (-1);
	}
	if (spawn_plan_pinned(pl, err, errlen) == -1 ||
	    spawn_plan_data(spec, err, errlen) == -1)
		return (-1);
	if (spec->image != NULL && spawn_plan_image(pl, spec->image, err,
	    errlen) == -1)
		return (-1);
	if (spec->argv == NULL || spec->argv[0] == NULL ||
	    spec->argv[0][0] != '/' || spec->env == NULL) {
		snprintf(err, errlen, "argv[0] must be an absolute path");
		return (-1);
	}
	if (spec->uid == 0 || spec->gid == 0) {
		snprintf(err, errlen, "the agent may not run as root");
		return (-1);
	}
	if (spec->nlisten < 0 || spec->nlisten > SANDBOX_MAXLISTEN ||
	    (spec->nlisten > 0 && spec->listen == NULL)) {
		snprintf(err, errlen, "more than %d egress endpoints",
		    SANDBOX_MAXLISTEN);
		return (-1);
	}
	if (spec->nconnect < 0 || spec->nconnect > SANDBOX_SVCPORTS ||
	    spec->nbind < 0 || spec->nbind > SANDBOX_SVCPORTS ||
	    spec->nreserve < 0 || spec->nreserve > SANDBOX_SVCPORTS) {
		snprintf(err, errlen, "more than %d service ports",
		    SANDBOX_SVCPORTS);
		return (-1);
	}
	for (n = 0; spec->hide != NULL && spec->hide[n] != NULL; n++)
		;
	if (n > 0 && (pl->hide = calloc(n, sizeof(*pl->hide))) == NULL) {
		snprintf(err, errlen, "calloc: %s", strerror(errno));
		return (-1);
	}
	for (n = 0; spec->hide != NULL && spec->hide[n] != NULL; n++) {
		if (realpath(spec->hide[n], path) == NULL) {
			if (errno == ENOENT)
				continue;	/* nothing there to see */
			snprintf(err, errlen, "hide %s: %s", spec->hide[n],
			    strerror(errno));
			free(pl->hide);
			return (-1);
		}
		if (strcmp(path, "/") == 0 || strcmp(path, pl->tree) == 0) {
			snprintf(err, errlen, "hide %s: would hide %s",
			    spec->hide[n], path);
			free(pl->hide);
			return (-1);
		}
		strlcpy(pl->hide[pl->nhide++], path, PATH_MAX);
	}
	if (spawn_plan_binds(pl, spec, err, errlen) == -1) {
		free(pl->hide);
		return (-1);
	}
	return (0);
}
