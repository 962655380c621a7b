/*
 * spawn: how long starting an agent takes, factory's sandbox against
 * bubblewrap, unshare(1) and a plain fork+exec, all running /bin/true.
 * Each launcher runs its rounds in one block (see main for why).
 * factory's sandbox runs three ways: with pid 1 a fork of the caller,
 * as it was before the launcher binary (with the namespace pool); with
 * pid 1 a fresh factory-sandbox, cloned and exec'd for the spawn (the
 * launcher pool off: what a spawn costs when the pool is empty); and
 * with pid 1 a factory-sandbox of the launcher pool, started ahead,
 * as factoryd runs it now.  The launcher with only the namespace pool
 * (between the two) no longer exists in the code.
 *
 *	spawn [-n rounds] [-p pool] [-g gap] [-u uid] [-L factory-sandbox]
 *	    [-o only] [-b block]
 *
 * -b runs the launchers in turns, block rounds of each at a time (20
 * ms between blocks), instead of all the rounds of one and then the
 * next: on a machine whose load changes from one second to the next,
 * every launcher then sees the same load and the ratios compare like
 * with like.  The cpu column is left out ("-"): the pool's processes
 * live across the turns.
 *
 * -o runs only the launchers whose numbers (in the table's order,
 * from 1) it lists, as in -o 3,4: to trace one of them alone.
 *
 * -g pauses gap milliseconds between rounds, outside the figures: as
 * in factoryd, where attempts do not start back to back.  Some kernel
 * costs only show then: moving a process into a cgroup2 directory
 * waits for an RCU grace period that a burst of moves shares.
 *
 * Two figures per launcher:
 *
 * launch	from the call until the program's execve(2) succeeded
 *		(sandbox_spawn returning; for fork+exec, EOF on a
 *		close-on-exec pipe).  bwrap and unshare(1) do not say
 *		when their child execs: "-".
 * cycle	the whole life, as the daemon lives it: from the spawn
 *		request to the reaped exit.  For factory:
 *		sandbox_spawn (cgroups created with limits, namespaces,
 *		mounts, Landlock, seccomp, uid change, fd and environment
 *		scrubbing, execve), then the refill of the pool that
 *		factoryd does right after a spawn (while the agent
 *		runs: for the launcher pool, asking the zygote for the
 *		next launcher; on a hybrid host, the spare v1 cgroups
 *		the next spawn renames), wait, usage read, destroy
 *		(cgroups checked empty and removed).  For the others:
 *		fork, exec, wait.
 *
 * Nothing a round causes is left out of its cycle: what a launch takes
 * from a pool is made again inside the same cycle (the parent's part
 * of it: a launcher of the pool goes on making its namespaces in its
 * own process while the agent runs, as in factoryd; if it is not ready
 * by the next spawn, that spawn waits for it).  -p 0 runs without the
 * pools (every clone makes its own).  The ratios compare cycles, the
 * only figure every launcher has.  cpu is the processor time the
 * rounds took in this process and every process it (or a sandbox's
 * pid 1) reaped, per round: work that the pools only move, not save,
 * shows there (kernel threads, such as the one freeing network
 * namespaces, are not counted).
 *
 * The view's teardown: pid 1's mount namespace is held by the parent
 * from the spawn on and, at sandbox_destroy, handed to the launcher
 * zygote, which drops it; so the unmounting of every mount of the view
 * and the expedited RCU grace period it waits for (about 1.2 ms of
 * the cycle here, in pid 1's exit, before) run in the zygote, which
 * factoryd does not wait for, and no longer in the exit the cycle
 * reaps.  The zygote's cpu, that teardown's included, is counted: cpu
 * is read after the zygote and the launchers left in the pool are
 * killed and reaped (which also bills their start-up to the rounds).
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event.h>

#include "../supervisord-factory/sandbox.h"
#include "../sandbox/sbx.h"
#include "../regress/sandbox/sbxwait.h"

enum { L_FORKED, L_FRESH, L_FACTORY, L_BWRAP, L_UNSHARE, L_PLAIN, L_MAX };

static const char *const lname[L_MAX] = {
	"factory, pid 1 forked", "factory-sandbox fresh", "factory-sandbox pool",
	"bwrap --unshare-all", "unshare(1) user+all", "fork+exec"
};

/*
 * The order they run in: the fresh launcher before anything fills the
 * namespace pool (it must make its own), the forked pid 1 after.
 */
static const int lorder[L_MAX] = {
	L_FRESH, L_FACTORY, L_FORKED, L_BWRAP, L_UNSHARE, L_PLAIN
};

static char *const bwrap_argv[] = {
	"/usr/bin/bwrap", "--unshare-all", "--die-with-parent",
	"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
	"--tmpfs", "/tmp", "/bin/true", NULL
};
static char *const unshare_argv[] = {
	"/usr/bin/unshare", "--user", "--map-root-user", "--mount", "--pid",
	"--net", "--ipc", "--uts", "--fork", "/bin/true", NULL
};
static char *const true_argv[] = { "/bin/true", NULL };
static char *const env[] = { "HOME=/tmp", "PATH=/usr/bin:/bin", NULL };
static char *const hide[] = { "/root", "/home", "/etc/factory", NULL };

static int	 pool = SANDBOX_POOL;
static char	 benchtree[] = "/var/tmp/factory-bench.XXXXXX";
static int	 havetree;
static double	 refill;		/* of the last factory round */

static double
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* fork, exec, wait; the launch ends at EOF of a close-on-exec pipe. */
static double
run_exec(char *const argv[], double start)
{
	double	 launch;
	pid_t	 pid;
	char	 c;
	int	 st, p[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		err(1, "pipe");
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 0)
		errx(1, "%s: exec failed", argv[0]);
	launch = now_ms() - start;
	close(p[0]);
	if (waitpid(pid, &st, 0) == -1)
		err(1, "waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		errx(1, "%s failed (status %#x)", argv[0], st);
	return launch;
}

static double
run_factory(const char *tree, uid_t uid, int round, int logfd, int fill,
    double start)
{
	struct sandbox_spec	 spec;
	struct sandbox		 sb;
	struct sandbox_usage	 u;
	char			 id[64], msg[512];
	double			 launch;
	int			 st;

	memset(&spec, 0, sizeof(spec));
	snprintf(id, sizeof(id), "bench-%ld-%d", (long)getpid(), round);
	spec.id = id;
	spec.uid = uid;
	spec.gid = uid;
	spec.tree = tree;
	spec.argv = true_argv;
	spec.env = env;
	spec.hide = hide;
	spec.logfd = logfd;
	spec.memory = 256 << 20;
	spec.pids = 64;
	spec.cpu_ms = 10000;
	spec.fsize = 1 << 30;
	spec.nofile = 1024;
	if (sandbox_spawn(&spec, &sb, msg, sizeof(msg)) == -1)
		errx(1, "sandbox_spawn: %s", msg);
	launch = now_ms() - start;
	/* What factoryd does next, while the agent runs. */
	refill = now_ms();
	if (fill && sandbox_pool_fill(pool) != pool)
		errx(1, "the pool could not be refilled");
	refill = now_ms() - refill;
	if (waitpid(sb.pid, &st, 0) == -1)
		err(1, "waitpid");
	st = sandbox_exitstatus(&sb, st);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		errx(1, "sandboxed /bin/true failed (status %#x)", st);
	(void)sandbox_usage(&sb, &u);
	if (sbx_destroy_wait(&sb, msg, sizeof(msg)) == -1)
		errx(1, "sandbox_destroy: %s", msg);
	return launch;
}

/*
 * One round of launcher l (round i, -1 for the warm-up) from s: its
 * launch time in *l1 (-1 if it has none).
 */
static void
one_round(int l, int i, int launcher, int logfd, uid_t uid, double s,
    double *l1)
{
	switch (l) {
	case L_FORKED:
	case L_FRESH:
	case L_FACTORY:
		sandbox_set_launcher(l == L_FORKED ? -1 : launcher);
		*l1 = run_factory(benchtree, uid, i + 1, logfd,
		    pool > 0 && l != L_FRESH, s);
		break;
	case L_BWRAP:
		(void)run_exec(bwrap_argv, s);
		*l1 = -1;
		break;
	case L_UNSHARE:
		(void)run_exec(unshare_argv, s);
		*l1 = -1;
		break;
	default:
		*l1 = run_exec(true_argv, s);
		break;
	}
}

/* The tree goes, also when a round fails (errx). */
static void
rmtree(void)
{
	if (havetree)
		(void)rmdir(benchtree);
}

/* User and system time of this process and its reaped children, ms. */
static double
cpu_ms(void)
{
	struct rusage	 s, c;

	if (getrusage(RUSAGE_SELF, &s) == -1 ||
	    getrusage(RUSAGE_CHILDREN, &c) == -1)
		err(1, "getrusage");
	return (s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec +
	    c.ru_stime.tv_sec) * 1e3 + (s.ru_utime.tv_usec + s.ru_stime.tv_usec +
	    c.ru_utime.tv_usec + c.ru_stime.tv_usec) / 1e3;
}

/* Is num one of the comma-separated list? */
static int
onlyhas(const char *list, const char *num)
{
	size_t	 n = strlen(num);
	const char *p;

	for (p = list; (p = strstr(p, num)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == '\0' ||
		    p[n] == ','))
			return 1;
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(double *v, int n, int p)
{
	int	 i = (n * p + 99) / 100 - 1;

	return v[i < 0 ? 0 : i];
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp);
	return pct(v, n, 50);
}

int
main(int argc, char *argv[])
{
	double	*t[L_MAX], *la[L_MAX], *rf, med[L_MAX], cpu[L_MAX], lmed, s, l1;
	char	 msg[1024];
	const char *only = NULL;
	int	 n = 50, ch, i, l, logfd, have[L_MAX], launcher = -1, gap = 0;
	int	 block = 0, idx;
	int	 asked[L_MAX];
	uid_t	 uid = 63990;

	event_init();
	/* Without -L, pid 1 runs in a fork of this program. */
	sbx_exec_resolve();
	sandbox_set_forked(sbx_pid1_forked);

	while ((ch = getopt(argc, argv, "L:b:g:n:o:p:u:")) != -1) {
		switch (ch) {
		case 'b':
			block = atoi(optarg);
			break;
		case 'L':
			if ((launcher = open(optarg, O_PATH | O_CLOEXEC)) == -1)
				err(1, "%s", optarg);
			break;
		case 'g':
			gap = atoi(optarg);
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'o':
			only = optarg;
			break;
		case 'p':
			pool = atoi(optarg);
			break;
		case 'u':
			uid = (uid_t)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: spawn [-n rounds] [-p pool] "
			    "[-g gap] [-u uid] [-L factory-sandbox] [-o only] "
			    "[-b block]\n");
			return 1;
		}
	}
	if (n < 1 || pool < 0 || pool > SANDBOX_POOLMAX || gap < 0 ||
	    gap > 10000 || block < 0)
		errx(1, "bad -n, -p, -g or -b");
	if (sandbox_probe(msg, sizeof(msg)) == -1)
		errx(1, "sandbox_probe: %s", msg);
	printf("probe: %s\n", msg);
	/* The probe filled the namespace pool: empty it. */
	while (sandbox_pool_fill(0) > 0) {
		struct sandbox_spec	 spec;
		struct sandbox		 sb;
		char			*argv0[] = { "/nonexistent", NULL };

		/* Drain it through failed spawns, the only way out. */
		memset(&spec, 0, sizeof(spec));
		spec.id = "bench-drain";
		spec.uid = spec.gid = uid;
		spec.tree = "/var/tmp";
		spec.argv = argv0;
		spec.env = env;
		spec.logfd = 2;
		if (sandbox_spawn(&spec, &sb, msg, sizeof(msg)) == 0)
			errx(1, "draining the pool: a spawn succeeded");
	}
	if (mkdtemp(benchtree) == NULL)
		err(1, "%s", benchtree);
	havetree = 1;
	atexit(rmtree);
	if (chown(benchtree, uid, uid) == -1)
		err(1, "%s", benchtree);
	if ((logfd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		err(1, "/dev/null");
	for (l = 0; l < L_MAX; l++)
		asked[l] = 1;		/* 0: left out by -o */
	have[L_FORKED] = have[L_PLAIN] = 1;
	have[L_FRESH] = have[L_FACTORY] = launcher != -1;
	have[L_BWRAP] = access(bwrap_argv[0], X_OK) == 0;
	have[L_UNSHARE] = access(unshare_argv[0], X_OK) == 0;
	for (l = 0; only != NULL && l < L_MAX; l++) {
		char	 num[8];

		snprintf(num, sizeof(num), "%d", l + 1);
		if (!onlyhas(only, num))
			have[l] = asked[l] = 0;
	}
	for (l = 0; l < L_MAX; l++)
		if ((t[l] = calloc(n, sizeof(double))) == NULL ||
		    (la[l] = calloc(n, sizeof(double))) == NULL)
			err(1, NULL);
	if ((rf = calloc(n, sizeof(double))) == NULL)
		err(1, NULL);

	/*
	 * One launcher at a time, a warm-up run first and a pause after:
	 * tearing down network and mount namespaces finishes in kernel
	 * workers after the wait returns, and interleaving the launchers
	 * would bill one launcher's teardown to the next one.
	 */
	for (ch = 0; block > 0 && ch < L_MAX; ch++) {
		l = lorder[ch];
		if (have[l])
			one_round(l, -1, launcher, logfd, uid, now_ms(), &l1);
		cpu[l] = -1;
	}
	for (i = 0, idx = 0; block > 0 && i < n; i = idx) {
		for (ch = 0; ch < L_MAX; ch++) {
			l = lorder[ch];
			if (!have[l])
				continue;
			for (idx = i; idx < n && idx < i + block; idx++) {
				if (gap > 0)
					usleep(gap * 1000);
				s = now_ms();
				one_round(l, idx, launcher, logfd, uid, s, &l1);
				t[l][idx] = now_ms() - s;
				la[l][idx] = l1;
				if (l == L_FACTORY || (l == L_FORKED &&
				    !have[L_FACTORY]))
					rf[idx] = refill;
			}
			usleep(20 * 1000);
		}
	}
	if (block > 0)
		sandbox_set_launcher(-1);
	for (ch = 0; block == 0 && ch < L_MAX; ch++) {
		l = lorder[ch];
		if (!have[l])
			continue;
		for (i = -1; i < n; i++) {
			if (gap > 0)
				usleep(gap * 1000);
			if (i == 0)
				cpu[l] = cpu_ms();
			s = now_ms();
			one_round(l, i, launcher, logfd, uid, s, &l1);
			if (i >= 0) {
				t[l][i] = now_ms() - s;
				la[l][i] = l1;
				if (l == L_FACTORY || (l == L_FORKED &&
				    !have[L_FACTORY]))
					rf[i] = refill;
			}
		}
		/*
		 * The launchers left in the pool and the zygote are killed
		 * and reaped first: the zygote's cpu (the views it tore
		 * down, see above) counts only once it is reaped.
		 */
		sandbox_set_launcher(-1);
		cpu[l] = (cpu_ms() - cpu[l]) / n;
		usleep(300 * 1000);
	}

	if (gap > 0)
		printf("a pause of %d ms before each round (not counted)\n",
		    gap);
	printf("%d runs each of /bin/true; pool %d%s\n", n, pool,
	    pool == 0 ? " (off)" : ", refilled inside each factory cycle "
	    "(launchers; namespaces for the forked pid 1)");
	printf("%-22s %9s %9s %9s %9s %9s %9s %9s\n", "launcher", "launch",
	    "cycle", "p90", "max", "cpu", "/bwrap", "/fork+ex");
	for (l = 0; l < L_MAX; l++) {
		if (!have[l])
			continue;
		med[l] = median(t[l], n);
	}
	for (l = 0; l < L_MAX; l++) {
		if (!have[l]) {
			printf("%-22s (%s)\n", lname[l], asked[l] ?
			    "not installed" : "not run");
			continue;
		}
		lmed = median(la[l], n);
		printf("%-22s ", lname[l]);
		if (lmed >= 0)
			printf("%7.2fms ", lmed);
		else
			printf("%9s ", "-");
		printf("%7.2fms %7.2fms %7.2fms ", med[l], pct(t[l], n, 90),
		    t[l][n - 1]);
		if (cpu[l] >= 0)
			printf("%7.2fms ", cpu[l]);
		else
			printf("%9s ", "-");
		if (have[L_BWRAP])
			printf("%8.2fx ", med[l] / med[L_BWRAP]);
		else
			printf("%9s ", "-");
		if (have[L_PLAIN])
			printf("%8.2fx\n", med[l] / med[L_PLAIN]);
		else
			printf("%9s\n", "-");
	}
	printf("medians; the ratios are of the cycles.  The pool's cycle "
	    "includes its refill: %.2fms\n", pool > 0 ? median(rf, n) :
	    0.0);
	printf("cycle: factory, from sandbox_spawn to its pid 1 reaped, the "
	    "usage read and the\ncgroups removed, the pool's refill "
	    "(the parent's part) inside; the others,\nfrom fork to the "
	    "reaped exit.  launch: factory, until the agent's execve.\n");
	return 0;
}
