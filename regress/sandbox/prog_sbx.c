/*
 * prog_sbx: a small launcher over the sandbox API, for the regress
 * tests.  Spawns, waits (a wall deadline enforced with sandbox_kill),
 * prints what happened and what the cgroups measured, destroys.
 *
 *	prog_sbx [-CDFKPS] [-L launcher] [-i id] [-I image] -u uid -t tree
 *	    [-b port]... [-o port]... [-r port]... [-T pinned-dir]
 *	    [-H hide]...
 *	    [-m mem] [-p pids]
 *	    [-c cpu_ms] [-f fsize] [-n nofile] [-w wall_s] [-l logfile]
 *	    [-x exec_allow]... [-R expose]... [-e VAR=value]...
 *	    [-d data_root [-a data]...] -- argv...
 *
 * Exits 0 if the destroy succeeded, 1 if it did not, 2 if the spawn
 * failed, 3 on a usage error.  -P prints sandbox_probe's line, the
 * kernel features it found and those replaced, only.
 * -L names the factory-sandbox binary to start as pid 1, as factoryd
 * does: one of the launcher pool, started ahead and given the plan
 * (-F: a fresh one, as when the pool is empty; -K: the pool holds two
 * and the oldest is killed before the spawn, which must take the
 * other); without it pid 1 is a fork of prog_sbx.  -I ignores SIGPIPE
 * and SIGXFSZ first, as factoryd does.  After the destroy: "mntns
 * released" once no process is in pid 1's mount namespace or holds an
 * fd of it (the zygote drops it; waited for up to 2 s), else "mntns
 * held by N".  -C says, after the spawn, where each of the attempt's
 * cgroups came from ("cgroup N spare": renamed from one of the spares
 * the pool made, "cgroup N made", "cgroup N cgroup2"; and "spares of
 * PID" first); -D removes the spares before the spawn, as someone else
 * might.  -W FIRST[,MOVED] gives pid 1 a watchdog FIRST ms from now
 * (CLOCK_BOOTTIME), as a fleet claim's sandbox has, and once the spawn
 * returned moves it to MOVED ms from then; "watchdog" after the exit
 * if pid 1 said its watchdog ended the sandbox.  -d shows the agent
 * the -a paths below data_root, as a service's data (pinned to what
 * data_root is now).
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event.h>

#include "../../supervisord-factory/sandbox.h"
#include "../../sandbox/sbx.h"
#include "sbxwait.h"
#include "mntns.h"

#define MAXLIST	32

static volatile sig_atomic_t	 expired;

static uint64_t
boot_ms(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) == -1)
		err(3, "clock_gettime");
	return ((uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
onalarm(int sig)
{
	expired = 1;
}

/*
 * Ignore glibc's own real-time signals (32, 33) too, as a process that
 * starts factoryd may have: sigaction(3) cannot, the syscall can.
 */
static void
ignore_rt(void)
{
	unsigned long	 ksa[4];
	int		 sig;

	memset(ksa, 0, sizeof(ksa));
	ksa[0] = (unsigned long)SIG_IGN;
	for (sig = 32; sig <= 33; sig++)
		if (syscall(SYS_rt_sigaction, sig, ksa, NULL, (size_t)8) == -1)
			err(1, "rt_sigaction %d", sig);
}

static __dead void
usage(void)
{
	fprintf(stderr, "usage: prog_sbx [-CDFKPS] [-L launcher] [-i id] "
	    "[-I image] -u uid "
	    "-t tree "
	    "[-H hide] [-m mem] [-p pids] [-c cpu_ms] [-f fsize] "
	    "[-n nofile] [-b port] [-o port] [-r port] [-w wall_s] "
	    "[-l logfile] [-x exec_allow] "
	    "[-R expose] [-e VAR=value] -- argv...\n");
	exit(3);
}

static void
add(char **list, int *n, char *s)
{
	if (*n == MAXLIST - 1)
		errx(3, "too many");
	list[(*n)++] = s;
	list[*n] = NULL;
}

static uint64_t
num(const char *s)
{
	char	*ep;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &ep, 10);
	if (errno != 0 || ep == s || *ep != '\0')
		errx(3, "bad number %s", s);
	return v;
}

static int
probe(void)
{
	char	 msg[1024];

	if (sandbox_probe(msg, sizeof(msg)) == -1) {
		printf("probe failed: %s\n", msg);
		return 1;
	}
	printf("probe ok: %s\n", msg);
	printf("kernel: %s\n", sandbox_features_text());
	printf("replaced: %s\n", sandbox_replaced_text());
	return 0;
}

/* The lowest pid of our children titled "factory-sandbox ready", or 0. */
static long
oldest_ready(void)
{
	char		 path[64], buf[512];
	struct dirent	*de;
	DIR		*d;
	FILE		*f;
	long		 pid, ppid, low = 0;
	size_t		 n;

	if ((d = opendir("/proc")) == NULL)
		err(2, "/proc");
	while ((de = readdir(d)) != NULL) {
		if ((pid = atol(de->d_name)) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (strrchr(buf, ')') == NULL || sscanf(strrchr(buf, ')') + 2,
		    "%*c %ld", &ppid) != 1 || ppid != (long)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (n > 16 && strcmp(buf + 16, "ready") == 0 &&
		    (low == 0 || pid < low))
			low = pid;
	}
	closedir(d);
	return (low);
}

/*
 * The spares of ours in the directories the attempt's cgroups go in
 * (".spare-<pid>-<n>"): their inode numbers, or removed (rm).
 */
static int
spares(const struct sandbox *sb, ino_t *inos, int max, int rm)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	char		 dir[PATH_MAX], pre[64], path[PATH_MAX + 256], *p;
	int		 i, n = 0;

	snprintf(pre, sizeof(pre), ".spare-%ld-", (long)getpid());
	for (i = 0; i < sb->ncgroups; i++) {
		strlcpy(dir, sb->cgroups[i], sizeof(dir));
		if ((p = strrchr(dir, '/')) != NULL)
			*p = '\0';
		if ((d = opendir(dir)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, pre, strlen(pre)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (rm && rmdir(path) == -1)
				err(2, "rmdir %s", path);
			if (!rm && stat(path, &st) == 0 && n < max)
				inos[n++] = st.st_ino;
		}
		closedir(d);
	}
	return (n);
}

static void
cgroup_origin(const struct sandbox *sb, const ino_t *inos, int n)
{
	struct stat	 st;
	int		 i, j;

	for (i = 0; i < sb->ncgroups; i++) {
		if (i == sb->cg_kill) {
			printf("cgroup %d cgroup2\n", i);
			continue;
		}
		if (stat(sb->cgroups[i], &st) == -1)
			err(2, "%s", sb->cgroups[i]);
		for (j = 0; j < n && inos[j] != st.st_ino; j++)
			;
		printf("cgroup %d %s\n", i, j < n ? "spare" : "made");
	}
	fflush(stdout);
}

/*
 * The oldest launcher of the pool (the lowest pid among our children
 * titled "factory-sandbox ready") dies before it is taken.
 */
static void
kill_oldest(void)
{
	siginfo_t	 si;
	long		 low;
	int		 tries;

	/* The zygote clones them a moment after they were asked for. */
	for (tries = 0; (low = oldest_ready()) == 0 && tries < 200; tries++)
		usleep(10 * 1000);
	if (low == 0)
		errx(2, "no ready launcher to kill");
	if (kill((pid_t)low, SIGKILL) == -1)
		err(2, "kill %ld", low);
	/* Dead, not reaped: the pool must find it so and reap it. */
	while (waitid(P_PID, (id_t)low, &si, WEXITED | WNOWAIT) == -1)
		if (errno != EINTR)
			err(2, "waitid %ld", low);
	printf("killed %ld\n", low);
	fflush(stdout);
}

int
main(int argc, char *argv[])
{
	struct sandbox_spec	 spec;
	struct sandbox		 sb;
	struct sandbox_usage	 u;
	struct sigaction	 sa;
	struct stat		 pst;
	uint16_t		 bindp[4], connp[4], resp[4];
	int			 nbindp = 0, nconnp = 0, nresp = 0;
	char			*hide[MAXLIST], *xa[MAXLIST], *env[MAXLIST];
	char			*ex[MAXLIST], *data[MAXLIST];
	char			 idbuf[64], msg[1024];
	int			 nhide = 0, nxa = 0, nenv = 0, nex = 0, ch, st;
	int			 ndata = 0;
	int			 fresh = 0, launcher = 0, killone = 0;
	int			 origin = 0, rmspares = 0, nino = 0;
	ino_t			 inos[64];
	int			 rc, tries, held = 0;
	uint64_t		 mntns;
	unsigned int		 wall = 0;
	uint64_t		 wd_first = 0, wd_moved = 0;
	char			*comma;
	pid_t			 pid;

	event_init();
	/* Without -L, pid 1 runs in a fork of this program. */
	sbx_exec_resolve();
	sandbox_set_forked(sbx_pid1_forked);
	memset(&spec, 0, sizeof(spec));
	hide[0] = xa[0] = env[0] = ex[0] = data[0] = NULL;
	spec.logfd = STDOUT_FILENO;
	snprintf(idbuf, sizeof(idbuf), "sbx-%ld", (long)getpid());
	spec.id = idbuf;
	while ((ch = getopt(argc, argv,
	    "a:b:Cc:Dd:e:Ff:H:I:i:KL:l:m:n:o:p:PR:r:ST:t:u:W:w:x:")) != -1) {
		switch (ch) {
		case 'a':
			add(data, &ndata, optarg);
			break;
		case 'C':
			origin = 1;
			break;
		case 'D':
			rmspares = 1;
			break;
		case 'd':
			/* A service's data: below this tree, pinned now. */
			if (stat(optarg, &pst) == -1)
				err(3, "%s", optarg);
			spec.data_root = optarg;
			spec.data_dev = (uint64_t)pst.st_dev;
			spec.data_ino = (uint64_t)pst.st_ino;
			break;
		case 'c':
			spec.cpu_ms = num(optarg);
			break;
		case 'e':
			add(env, &nenv, optarg);
			break;
		case 'F':
			fresh = 1;
			break;
		case 'S':
			signal(SIGPIPE, SIG_IGN);
			signal(SIGXFSZ, SIG_IGN);
			ignore_rt();
			break;
		case 'K':
			killone = 1;
			break;
		case 'f':
			spec.fsize = num(optarg);
			break;
		case 'H':
			add(hide, &nhide, optarg);
			break;
		case 'I':
			spec.image = optarg;	/* a rootfs: the agent's root */
			break;
		case 'i':
			spec.id = optarg;
			break;
		case 'L':
			if ((ch = open(optarg, O_PATH | O_CLOEXEC)) == -1)
				err(3, "%s", optarg);
			sandbox_set_launcher(ch);
			launcher = 1;
			break;
		case 'l':
			spec.logfd = open(optarg, O_WRONLY | O_CREAT | O_TRUNC |
			    O_CLOEXEC, 0644);
			if (spec.logfd == -1)
				err(3, "%s", optarg);
			break;
		case 'm':
			spec.memory = num(optarg);
			break;
		case 'n':
			spec.nofile = num(optarg);
			break;
		case 'o':
			/* A port it may connect to, as the services'. */
			if (nconnp < (int)(sizeof(connp) / sizeof(connp[0])))
				connp[nconnp++] = (uint16_t)num(optarg);
			spec.connect = connp;
			spec.nconnect = nconnp;
			break;
		case 'p':
			spec.pids = num(optarg);
			break;
		case 'P':
			return probe();
		case 'R':
			add(ex, &nex, optarg);
			break;
		case 'r':
			/* Another's port, as the agent's preview a service's. */
			if (nresp < (int)(sizeof(resp) / sizeof(resp[0])))
				resp[nresp++] = (uint16_t)num(optarg);
			spec.reserve = resp;
			spec.nreserve = nresp;
			break;
		case 't':
			spec.tree = optarg;
			break;
		case 'b':
			/* A port the sandbox may bind, as a service's. */
			if (nbindp < (int)(sizeof(bindp) / sizeof(bindp[0])))
				bindp[nbindp++] = (uint16_t)num(optarg);
			spec.bind = bindp;
			spec.nbind = nbindp;
			break;
		case 'T':
			/* Pinned to what this path is now, as a service's. */
			if (stat(optarg, &pst) == -1)
				err(3, "%s", optarg);
			spec.tree_dev = (uint64_t)pst.st_dev;
			spec.tree_ino = (uint64_t)pst.st_ino;
			break;
		case 'u':
			spec.uid = spec.gid = (uid_t)num(optarg);
			break;
		case 'w':
			wall = (unsigned int)num(optarg);
			break;
		case 'W':
			if ((comma = strchr(optarg, ',')) != NULL) {
				*comma = '\0';
				wd_moved = num(comma + 1);
			}
			wd_first = num(optarg);
			break;
		case 'x':
			add(xa, &nxa, optarg);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0 || spec.tree == NULL || spec.uid == 0)
		usage();
	if (nenv == 0) {
		add(env, &nenv, "HOME=/tmp");
		add(env, &nenv, "PATH=/usr/bin:/bin");
	}
	spec.argv = argv;
	spec.env = env;
	spec.hide = nhide > 0 ? hide : NULL;
	spec.exec_allow = nxa > 0 ? xa : NULL;
	spec.expose = nex > 0 ? ex : NULL;
	spec.data = data;

	/* As factoryd: the launcher started ahead, then handed the plan. */
	if (launcher && !fresh && sandbox_pool_fill(killone ? 2 : 1) !=
	    (killone ? 2 : 1))
		errx(2, "the launcher pool could not be filled");
	if (killone)
		kill_oldest();
	if ((origin || rmspares) && sandbox_cgroup_paths(spec.id, &sb) == 0) {
		printf("spares of %ld\n", (long)getpid());
		if (rmspares)
			(void)spares(&sb, NULL, 0, 1);
		nino = spares(&sb, inos, 64, 0);
	}
	if (wd_first != 0)
		spec.watchdog_ms = boot_ms() + wd_first;
	if (sandbox_spawn(&spec, &sb, msg, sizeof(msg)) == -1) {
		printf("spawn: %s\n", msg);
		fflush(stdout);
		/* What the failure left is removed on a timer, as factoryd's. */
		event_dispatch();
		return 2;
	}
	printf("pid %ld\n", (long)sb.pid);
	fflush(stdout);
	if (wd_moved != 0 && sandbox_watchdog(&sb, boot_ms() + wd_moved) == -1)
		err(1, "sandbox_watchdog");
	if (origin)
		cgroup_origin(&sb, inos, nino);
	if ((mntns = mnt_id_fd(sb.mntns)) == 0)
		printf("mntns: none held\n");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = onalarm;	/* no SA_RESTART: waitpid returns */
	sigaction(SIGALRM, &sa, NULL);
	alarm(wall);
	while ((pid = waitpid(sb.pid, &st, 0)) == -1 && errno == EINTR) {
		if (expired) {
			if (sandbox_kill(&sb) == -1)
				warn("sandbox_kill");
			expired = 0;
			printf("timeout\n");
		}
	}
	alarm(0);
	if (pid == -1)
		err(1, "waitpid");
	st = sandbox_exitstatus(&sb, st);
	if (sb.watchdog_fired)
		printf("watchdog\n");
	if (WIFEXITED(st))
		printf("exit %d\n", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("signal %d\n", WTERMSIG(st));
	if (sandbox_usage(&sb, &u) == -1)
		printf("usage: incomplete\n");
	printf("usage cpu_ms %" PRIu64 " mem_peak %" PRIu64 " pids_peak %"
	    PRIu64 " pids_denied %" PRIu64 " oom_kills %" PRIu64 "\n",
	    u.cpu_ms, u.mem_peak, u.pids_peak, u.pids_denied, u.oom_kills);
	rc = 0;
	if (sbx_destroy_wait(&sb, msg, sizeof(msg)) == -1) {
		printf("destroy: %s\n", msg);
		rc = 1;
	} else
		printf("destroyed\n");
	for (tries = 0; mntns != 0 && (held = mnt_holders(mntns)) > 0 &&
	    tries < 200; tries++)
		usleep(10 * 1000);
	if (mntns != 0 && held > 0)
		printf("mntns held by %d\n", held);
	else if (mntns != 0)
		printf("mntns released\n");
	return rc;
}
