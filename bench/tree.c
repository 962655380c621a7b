/*
 * tree: how long an attempt's tree takes, as factoryd and the worker
 * make it, and how long collecting a one-file change takes.
 *
 *	tree -r repository -w workdir [-c] [-n rounds]
 *
 * cold		the worker's pristine checkout of HEAD (once per commit);
 *		with -c only that, once, into workdir/cold: bench/tree.sh
 *		runs it in turn with git worktree add, round by round, so
 *		that both see the same load and the same file system.
 * warm		an attempt's tree on a warm commit: its tmpfs, the
 *		worker's upper layer (.git and an index of the baseline),
 *		the overlay of the idmapped pristine checkout mounted.
 * upper	of which the worker's upper layer.
 * libgit2	the checkout the worker made for every attempt before:
 *		git_checkout_tree of the baseline with an index.
 * collect	one file changed through the tree, collected into a
 *		commit and a bundle (the walk of the upper dir).
 *
 * Medians of the rounds, in ms, one line each: "NAME MS".  bench/tree.sh
 * puts them beside git worktree add and git clone --shared.  Root.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "../supervisord-factory/factoryd.h"
#include "../worker/worker.h"

/*
 * disk.c is the parent's: of its configuration it reads the state
 * directory, which the attempt directories must be below (workdir).
 */
struct factoryd	*env;
static struct factoryd		 benv;
static struct factoryd_conf	 bconf;

static double	 now(void);
static int	 dcmp(const void *, const void *);
static double	 median(double *, int);
static void	 rmtree(const char *);
static void	 head_of(const char *, char *);

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
}

static int
dcmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(*v), dcmp);
	return (v[n / 2]);
}

static void
rmtree(const char *path)
{
	char	 cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "/bin/rm -rf '%s'", path);
	if (system(cmd) != 0)
		errx(1, "%s failed", cmd);
}

static void
head_of(const char *repo, char *hex)
{
	char	 msg[512];

	if (resolve(repo, "HEAD", hex, msg, sizeof(msg)) == -1)
		errx(1, "%s", msg);
}

int
main(int argc, char *argv[])
{
	struct collect_req	 req;
	struct collect_result	 res;
	const char		*repo = NULL, *wd = NULL;
	char			 base[GITW_HEXSZ + 1], msg[1024];
	char			 pristine[PATH_MAX], dir[PATH_MAX];
	char			 path[PATH_MAX + 64], bundle[PATH_MAX + 64];
	char			*scope[] = { "**", NULL };
	double			*warm, *lg2, *col, *up, t, t2, cold;
	int			 ch, i, n = 5, cold_only = 0;
	FILE			*fp;

	while ((ch = getopt(argc, argv, "cn:r:w:")) != -1) {
		switch (ch) {
		case 'c':
			cold_only = 1;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'r':
			repo = optarg;
			break;
		case 'w':
			wd = optarg;
			break;
		default:
			errx(2, "usage: tree -r repository -w workdir [-c] "
			    "[-n rounds]");
		}
	}
	if (repo == NULL || wd == NULL || n < 1 || n > 1000)
		errx(2, "usage: tree -r repository -w workdir [-c] "
		    "[-n rounds]");
	if (realpath(wd, bconf.statedir) == NULL)
		err(1, "%s", wd);
	wd = bconf.statedir;
	benv.conf = &bconf;
	env = &benv;
	if (gitw_init(msg, sizeof(msg)) == -1)
		errx(1, "%s", msg);
	if ((warm = calloc(n, sizeof(*warm))) == NULL ||
	    (lg2 = calloc(n, sizeof(*lg2))) == NULL ||
	    (col = calloc(n, sizeof(*col))) == NULL ||
	    (up = calloc(n, sizeof(*up))) == NULL)
		err(1, NULL);
	head_of(repo, base);

	snprintf(pristine, sizeof(pristine), "%s/%s", wd, cold_only ?
	    "cold" : "pristine");
	if (mkdir(pristine, 0755) == -1)
		err(1, "%s", pristine);
	t = now();
	if (pristine_checkout(repo, base, pristine, msg, sizeof(msg)) == -1)
		errx(1, "%s", msg);
	cold = now() - t;
	if (cold_only) {
		printf("cold %.2f\n", cold);
		return (0);
	}
	for (i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/a%d", wd, i);
		t = now();
		if (mkdir(dir, 0700) == -1 ||
		    disk_mount(dir, 1ULL << 30, 0, 0, msg, sizeof(msg)) == -1)
			errx(1, "%s: %s", dir, msg);
		t2 = now();
		if (provision_upper(repo, base, dir, msg,
		    sizeof(msg)) == -1)
			errx(1, "%s", msg);
		up[i] = now() - t2;
		snprintf(path, sizeof(path), "%s/work", dir);
		if (mkdir(path, 0700) == -1)
			err(1, "%s", path);
		/* No setup outputs: the pristine checkout is the lower. */
		if (disk_overlay(pristine, NULL, dir, "tree", 0, 0, msg,
		    sizeof(msg)) == -1)
			errx(1, "%s", msg);
		warm[i] = now() - t;

		/* One file changed through the tree, then collected. */
		snprintf(path, sizeof(path), "%s/tree/bench-%d.txt", dir, i);
		if ((fp = fopen(path, "w")) == NULL)
			err(1, "%s", path);
		fprintf(fp, "round %d\n", i);
		fclose(fp);
		snprintf(bundle, sizeof(bundle), "%s/bundle", dir);
		snprintf(path, sizeof(path), "%s/upper", dir);
		memset(&req, 0, sizeof(req));
		req.repo_path = repo;
		req.baseline_hex = base;
		req.attempt_dir = dir;
		req.scope = scope;
		req.title = "bench";
		req.attempt_id = "a-bench";
		req.manifest_digest = "sha256:0";
		req.bundle_path = bundle;
		req.upper = path;
		t = now();
		if (collect(&req, &res, msg, sizeof(msg)) == -1)
			errx(1, "collect: %s", msg);
		col[i] = now() - t;
		if (res.nrejects != 0 || res.nchanges != 1)
			errx(1, "collect: %zu changes, %zu rejects", res.nchanges,
			    res.nrejects);
		collect_result_free(&res);
		if (disk_unmount(dir) == -1)
			errx(1, "umount %s", dir);
		rmtree(dir);

		/* A whole checkout through libgit2, as every attempt had. */
		snprintf(dir, sizeof(dir), "%s/c%d", wd, i);
		if (mkdir(dir, 0700) == -1)
			err(1, "%s", dir);
		t = now();
		if (pristine_checkout(repo, base, dir, msg, sizeof(msg)) == -1)
			errx(1, "%s", msg);
		lg2[i] = now() - t;
		rmtree(dir);
	}
	printf("cold %.2f\n", cold);
	printf("warm %.2f\n", median(warm, n));
	printf("upper %.2f\n", median(up, n));
	printf("libgit2 %.2f\n", median(lg2, n));
	printf("collect %.2f\n", median(col, n));
	return (0);
}
