/*
 * spawn: how long starting an agent takes, factory's sandbox against
 * bubblewrap, unshare(1) and a plain fork+exec, all running /bin/true.
 * Each launcher runs its rounds in one block (see main for why).
 *
 *	spawn [-n rounds] [-u uid]
 *
 * factory's figure is the whole life of a sandbox: cgroups created
 * with limits, namespaces, mounts, Landlock, seccomp, uid change,
 * fd and environment scrubbing, execve, wait, usage read, destroy.
 */
#include <sys/types.h>
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

#include "../supervisord-factory/sandbox.h"

enum { L_FACTORY, L_BWRAP, L_UNSHARE, L_PLAIN, L_MAX };

static const char *const lname[L_MAX] = {
	"factory sandbox", "bwrap --unshare-all", "unshare(1) user+all",
	"fork+exec"
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

static double
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
run_exec(char *const argv[])
{
	pid_t	 pid;
	int	 st;

	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1)
		err(1, "waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		errx(1, "%s failed (status %#x)", argv[0], st);
}

static void
run_factory(const char *tree, uid_t uid, int round, int logfd)
{
	struct sandbox_spec	 spec;
	struct sandbox		 sb;
	struct sandbox_usage	 u;
	char			 id[64], msg[512];
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
	if (waitpid(sb.pid, &st, 0) == -1)
		err(1, "waitpid");
	st = sandbox_exitstatus(&sb, st);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		errx(1, "sandboxed /bin/true failed (status %#x)", st);
	(void)sandbox_usage(&sb, &u);
	if (sandbox_destroy(&sb, msg, sizeof(msg)) == -1)
		errx(1, "sandbox_destroy: %s", msg);
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

int
main(int argc, char *argv[])
{
	double	*t[L_MAX], med[L_MAX], s;
	char	 tree[] = "/var/tmp/factory-bench.XXXXXX", msg[1024];
	int	 n = 50, ch, i, l, logfd, have[L_MAX];
	uid_t	 uid = 63990;

	while ((ch = getopt(argc, argv, "n:u:")) != -1) {
		switch (ch) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'u':
			uid = (uid_t)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: spawn [-n rounds] [-u uid]\n");
			return 1;
		}
	}
	if (n < 1)
		errx(1, "bad -n");
	if (sandbox_probe(msg, sizeof(msg)) == -1)
		errx(1, "sandbox_probe: %s", msg);
	printf("probe: %s\n", msg);
	if (mkdtemp(tree) == NULL || chown(tree, uid, uid) == -1)
		err(1, "%s", tree);
	if ((logfd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		err(1, "/dev/null");
	have[L_FACTORY] = have[L_PLAIN] = 1;
	have[L_BWRAP] = access(bwrap_argv[0], X_OK) == 0;
	have[L_UNSHARE] = access(unshare_argv[0], X_OK) == 0;
	for (l = 0; l < L_MAX; l++)
		if ((t[l] = calloc(n, sizeof(double))) == NULL)
			err(1, NULL);

	/*
	 * One launcher at a time, a warm-up run first and a pause after:
	 * tearing down network and mount namespaces finishes in kernel
	 * workers after the wait returns, and interleaving the launchers
	 * would bill one launcher's teardown to the next one.
	 */
	for (l = 0; l < L_MAX; l++) {
		if (!have[l])
			continue;
		for (i = -1; i < n; i++) {
			s = now_ms();
			switch (l) {
			case L_FACTORY:
				run_factory(tree, uid, i + 1, logfd);
				break;
			case L_BWRAP:
				run_exec(bwrap_argv);
				break;
			case L_UNSHARE:
				run_exec(unshare_argv);
				break;
			default:
				run_exec(true_argv);
				break;
			}
			if (i >= 0)
				t[l][i] = now_ms() - s;
		}
		usleep(300 * 1000);
	}
	rmdir(tree);

	printf("%d runs each of /bin/true\n", n);
	printf("%-22s %9s %9s %9s %11s %11s\n", "launcher", "median", "p90",
	    "max", "/bwrap", "/fork+exec");
	for (l = 0; l < L_MAX; l++) {
		if (!have[l])
			continue;
		qsort(t[l], n, sizeof(double), cmp);
		med[l] = pct(t[l], n, 50);
	}
	for (l = 0; l < L_MAX; l++) {
		if (!have[l]) {
			printf("%-22s (not installed)\n", lname[l]);
			continue;
		}
		printf("%-22s %7.2fms %7.2fms %7.2fms ", lname[l], med[l],
		    pct(t[l], n, 90), t[l][n - 1]);
		if (have[L_BWRAP])
			printf("%10.2fx ", med[l] / med[L_BWRAP]);
		else
			printf("%11s ", "-");
		printf("%10.2fx\n", med[l] / med[L_PLAIN]);
	}
	return 0;
}
