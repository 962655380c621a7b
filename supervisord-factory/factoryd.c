/*
 * factoryd: the root parent of the factory suite.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "factoryd.h"
#include "fsjob.h"
#include "image.h"
#include "log.h"

#define FACTORY_SANDBOX_BIN	"factory-sandbox"	/* pid 1 of a sandbox */
#define FACTORY_FSWALK_BIN	"factory-fswalk"	/* walks, fsjob.c */

__dead static void	usage(void);
__dead static void	factoryd_fatal_start(const char *, ...)
			    __attribute__((__format__ (printf, 1, 2)));
static void		factoryd_sig(int, short, void *);
static void		factoryd_shutdown(void);
static void		factoryd_instance(const char *);
static void		factoryd_lock(const char *);
static void		factoryd_lock_pid(void);
static void		factoryd_nofile(const struct factoryd_conf *);
static int		factoryd_open_binaries(const char *, int, int, int *, int *,
			    char *, size_t);

/* What the parts below report, and who acts on it (report.c). */
static const struct reports reports = {
	attempt_note,		attempt_schedule,	attempt_run_done,
	attempt_setup_stored,	cohort_published,	cohort_member_verified,
	cohort_publish_fill,	attempt_services_ready,	attempt_services_failed,
	attempt_services_gone,
};

/*
 * A start-up error that starting again cannot mend: the configuration,
 * a child binary, the keys, the journal, or a kernel feature the
 * sandbox needs.  EX_CONFIG, which the unit's RestartPreventExitStatus=
 * names, so systemd stops and says "failed" instead of starting us
 * every 5 s forever; fatalx(3)'s 1 is left to what may pass.  The
 * sandbox pool, filled by the sandbox probe before the later probes
 * run, is ended first: a launcher left behind is one more process for
 * systemd to SIGKILL on its way to "failed".
 */
__dead static void
factoryd_fatal_start(const char *fmt, ...)
{
	char	 buf[1024];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_warnx("%s", buf);
	sandbox_pool_end();
	/* What the probe made of this instance's cgroups: empty, unused. */
	sandbox_instance_remove();
	exit(EX_CONFIG);
}

__dead static void
usage(void)
{
	extern char	*__progname;

	fprintf(stderr, "usage: %s [-dknv] [-f file]\n", __progname);
	exit(1);
}

int
main(int argc, char *argv[])
{
	struct event	 ev_sigint, ev_sigterm, ev_sighup, ev_sigchld;
	struct factoryd_conf *conf;
	struct event_base *evbase;
	char		 errbuf[CONF_ERRLEN], diskbuf[512], *abs;
	const char	*conffile = FACTORYD_CONF;
	int		 ch, debug = 0, noaction = 0, verbose = 0, mkkeys = 0;
	int		 attach, fswalk;

	log_init(1, LOG_DAEMON);
	while ((ch = getopt(argc, argv, "df:knv")) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'f':
			conffile = optarg;
			break;
		case 'k':
			mkkeys = 1;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	if (argc != 0)
		usage();

	if (conf_parse(conffile, &conf, errbuf, sizeof(errbuf)) == -1) {
		fprintf(stderr, "%s\n", errbuf);
		exit(noaction ? 1 : EX_CONFIG);
	}
	if (noaction) {
		if (verbose)
			conf_print(stdout, conf);
		if (conf->warning[0] != '\0')
			fprintf(stderr, "%s\n", conf->warning);
		fprintf(stderr, "configuration OK\n");
		conf_free(conf);
		exit(0);
	}
	if (geteuid() != 0)
		errx(1, "need root privileges");
	/* What even the root parent never needs, before anything else. */
	if (parent_policy_apply(errbuf, sizeof(errbuf)) == -1)
		factoryd_fatal_start("policy: %s", errbuf);
	/* Reloads re-read it after daemon(3) changed directory. */
	if ((abs = realpath(conffile, NULL)) == NULL)
		err(1, "%s", conffile);
	conffile = abs;

	if ((env = calloc(1, sizeof(*env))) == NULL)
		err(1, NULL);
	/* Before anything is started: a binary we would not run stops us. */
	if (factoryd_open_binaries(conf->libexec, conf->fleet.enabled,
	    conf->preview.enabled, env->binfd, &env->sandboxfd, errbuf,
	    sizeof(errbuf)) == -1)
		factoryd_fatal_start("child binary %s", errbuf);
	sandbox_set_launcher(env->sandboxfd);
	if ((fswalk = factoryd_open_binary(conf->libexec, FACTORY_FSWALK_BIN,
	    errbuf, sizeof(errbuf))) == -1)
		factoryd_fatal_start("child binary %s", errbuf);
	fsjob_set_binary(fswalk);
	env->conf = conf;
	env->conffile = conffile;
	env->debug = debug;
	env->verbose = verbose;
	env->started = time(NULL);
	TAILQ_INIT(&env->ctl_conns);

	/* On stderr until we detach: start-up failures reach the terminal. */
	log_setverbose(verbose);
	log_procinit("parent");
	setproctitle("parent");
	if (conf->warning[0] != '\0')
		log_warnx("%s", conf->warning);

	/* Children get a known umask; files we make say their mode. */
	umask(022);

	evbase = event_init();
	signal_set(&ev_sigint, SIGINT, factoryd_sig, NULL);
	signal_set(&ev_sigterm, SIGTERM, factoryd_sig, NULL);
	signal_set(&ev_sighup, SIGHUP, factoryd_sig, NULL);
	signal_set(&ev_sigchld, SIGCHLD, factoryd_sig, NULL);
	signal_add(&ev_sigint, NULL);
	signal_add(&ev_sigterm, NULL);
	signal_add(&ev_sighup, NULL);
	signal_add(&ev_sigchld, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);	/* a full journal is an error, not death */

	if (mkdir(conf->statedir, 0755) == -1 && errno != EEXIST)
		fatal("state-dir %s", conf->statedir);
	/* Before anything of a running daemon's could be touched. */
	factoryd_lock(conf->statedir);
	factoryd_instance(conf->statedir);
	/* Fail closed: no sandbox, no factoryd, but for explicit downgrades. */
	probe_set_statedir(conf->statedir);
	if (sandbox_probe_downgrade(conf->sandbox_downgrade, errbuf,
	    sizeof(errbuf)) == -1)
		factoryd_fatal_start("sandbox: %s", errbuf);
	/* Overlayfs takes detached layers from 6.15: else attached first. */
	if ((attach = probe_overlay(diskbuf, sizeof(diskbuf))) == -1)
		factoryd_fatal_start("disk: %s", diskbuf);
	disk_set_attach(attach);
	log_info("sandbox: %s; kernel: %s", errbuf, sandbox_features_text());
	if (mkkeys && keys_create(conf) == -1)
		factoryd_fatal_start("keys: cannot create the missing keys");
	if (keys_load() == -1)
		factoryd_fatal_start("keys: cannot start without the signing "
		    "keys");
	report_init(&reports);
	if (attempt_init(errbuf, sizeof(errbuf)) == -1)
		factoryd_fatal_start("journal: %s", errbuf);
	factoryd_nofile(conf);
	if (preview_init(errbuf, sizeof(errbuf)) == -1)
		factoryd_fatal_start("%s", errbuf);
	if (control_init(conf->socket, factoryd_reload) == -1) {
		/* Another daemon's, maybe: 1, to be tried again; ours undone. */
		sandbox_pool_end();
		sandbox_instance_remove();
		fatalx("control socket %s: cannot listen", conf->socket);
	}
	/* Detach only now: a failure above reached the terminal. */
	if (!debug && (daemon(0, 0) == -1 || event_reinit(evbase) == -1))
		fatal("daemon");
	log_init(debug, LOG_DAEMON);
	factoryd_lock_pid();

	proc_handlers(child_handlers, nchild_handlers);
	fleet_init(attempt_claimed);
	proc_reaper(fsjob_reap);
	proc_reaper(shell_reap);
	proc_reaper(setup_reap);
	proc_reaper(run_reap);
	proc_init_children();
	metrics_init();
	image_init();
	proc_start_all();
	proc_watchdog_init();
	audit_init();
	/* After detaching: sandboxes it starts die with their parent. */
	attempt_recover();
	log_info("startup, version %s, config %s", FACTORY_VERSION, conffile);

	event_dispatch();
	factoryd_shutdown();
	return (0);
}

/*
 * Open a binary the parent starts, once.  Children are exec'd from
 * the fd (execveat(2) with AT_EMPTY_PATH), so neither a path the
 * child's uid cannot traverse (a build under /root) nor a file put in
 * its place later changes what runs.  Only a regular file that no one
 * but root can have written is taken; the error names the file.
 */
int
factoryd_open_binary(const char *dir, const char *name, char *err,
    size_t errlen)
{
	struct stat	 sb;
	char		 path[PATH_MAX];
	int		 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		return (-1);
	}
	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) == -1) {
		snprintf(err, errlen, "%s: fstat: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if (sb.st_uid != 0) {
		snprintf(err, errlen, "%s: not owned by root (uid %u)", path,
		    (unsigned)sb.st_uid);
		goto fail;
	}
	if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s: group or other writable (mode "
		    "%04o)", path, (unsigned)(sb.st_mode & 07777));
		goto fail;
	}
	/* The children run under their own uids, in no group of root's. */
	if ((sb.st_mode & S_IXOTH) == 0) {
		snprintf(err, errlen, "%s: not executable by others (mode "
		    "%04o)", path, (unsigned)(sb.st_mode & 07777));
		goto fail;
	}
	return (fd);
 fail:
	close(fd);
	return (-1);
}

/*
 * Every binary of the process table into fds[PROC_MAX], and the
 * sandbox launcher into *sbx; all or none.
 */
static int
factoryd_open_binaries(const char *dir, int fleet, int preview, int *fds,
    int *sbx,
    char *err, size_t errlen)
{
	int	 i;

	for (i = 0; i < PROC_MAX; i++)
		fds[i] = -1;
	for (i = 0; i < PROC_MAX; i++) {
		if (i == PROC_PARENT || i == PROC_CONTROL ||
		    (i == PROC_FLEET && !fleet) ||
		    (i == PROC_PREVIEW && !preview))
			continue;	/* not children */
		if ((fds[i] = factoryd_open_binary(dir,
		    factory_procs[i].binary, err, errlen)) == -1)
			goto fail;
	}
	if ((*sbx = factoryd_open_binary(dir, FACTORY_SANDBOX_BIN, err,
	    errlen)) != -1)
		return (0);
 fail:
	for (i = 0; i < PROC_MAX; i++)
		if (fds[i] != -1) {
			close(fds[i]);
			fds[i] = -1;
		}
	return (-1);
}

/*
 * This daemon's name among others on the host: the first 8 hex digits
 * of the SHA-256 of its state dir's real path.  It names our cgroup
 * subtree, so two daemons never meet there.
 */
static void
factoryd_instance(const char *statedir)
{
	char	 real[PATH_MAX], hex[SHA256_HEX_LEN + 1];

	if (realpath(statedir, real) == NULL)
		fatal("state-dir %s", statedir);
	sha256_hex(real, strlen(real), hex);
	hex[8] = '\0';
	strlcpy(env->instance, hex, sizeof(env->instance));
	sandbox_set_instance(env->instance);
}

/*
 * One daemon per state directory.  Everything a start does after this
 * would be a running daemon's to do: the sandbox probe's spare cgroups
 * (the same instance, so the same paths), the setup runs a start
 * clears, the keys, the journal, the control sockets.  So the lock is
 * the first thing taken, before any of them, and a second daemon stops
 * there with one line.  flock(2): held by the open file, which the
 * daemon(3) child keeps, and let go however the process ends.  The
 * file is never removed (a daemon that removed it could race another
 * one locking the old inode); it holds the pid of its last holder.
 */
static void
factoryd_lock(const char *statedir)
{
	char		 path[PATH_MAX], buf[16];
	const char	*errstr;
	struct stat	 sb;
	ssize_t		 n;
	long long	 pid;
	int		 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", statedir,
	    FACTORYD_LOCKFILE) >= sizeof(path))
		fatalx("state-dir %s: path too long", statedir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0644)) == -1)
		fatal("state-dir %s", path);
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_uid != 0)
		fatalx("state-dir %s: not a regular file of root's", path);
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK)
			fatal("state-dir %s: flock", path);
		/* Its holder's pid, if the file says one. */
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		pid = strtonum(buf, 1, INT_MAX, &errstr);
		if (errstr == NULL)
			fatalx("state-dir %s: in use by another factoryd "
			    "(pid %lld)", statedir, pid);
		fatalx("state-dir %s: in use by another factoryd", statedir);
	}
	env->lockfd = fd;
	factoryd_lock_pid();
}

/* The lock file says our pid: again after daemon(3) changed it. */
static void
factoryd_lock_pid(void)
{
	char	 buf[16];
	int	 len;

	len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(env->lockfd, 0) == -1 ||
	    pwrite(env->lockfd, buf, len, 0) != len)
		log_warn("state-dir %s/%s: writing the pid",
		    env->conf->statedir, FACTORYD_LOCKFILE);
}

/*
 * Enough descriptors for every bound the configuration allows at once
 * (control connections, each attempt's egress, its sandbox's pipes and
 * logs, the children's channels), so that running out is a test of a
 * bound, not the ordinary state of a busy host.  Raised, never
 * lowered; a hard limit below the need is raised too (we are root),
 * and where even root may not, the soft limit goes up to the hard one.
 */
#define NOFILE_BASE	256	/* journal, children, listeners, slack */
#define NOFILE_ATTEMPT	64	/* a sandbox's pipes, logs, cgroup files */

static void
factoryd_nofile(const struct factoryd_conf *conf)
{
	struct rlimit	 rl;
	rlim_t		 need;

	need = NOFILE_BASE + control_nofile() + (rlim_t)conf->max_attempts *
	    (NOFILE_ATTEMPT + egress_nofile() + gateway_nofile());
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit RLIMIT_NOFILE");
	if (rl.rlim_cur >= need)
		return;
	rl.rlim_cur = need;
	if (rl.rlim_max < need)
		rl.rlim_max = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
		log_info("RLIMIT_NOFILE raised to %llu",
		    (unsigned long long)need);
		return;
	}
	log_warn("setrlimit RLIMIT_NOFILE %llu", (unsigned long long)need);
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit RLIMIT_NOFILE");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("setrlimit RLIMIT_NOFILE %llu",
		    (unsigned long long)rl.rlim_max);
	log_warnx("RLIMIT_NOFILE only %llu, %llu wanted",
	    (unsigned long long)rl.rlim_max, (unsigned long long)need);
}

static void
factoryd_sig(int sig, short event, void *arg)
{
	char	 errbuf[CONF_ERRLEN];

	switch (sig) {
	case SIGINT:
	case SIGTERM:
		factoryd_shutdown();
		break;
	case SIGHUP:
		log_info("SIGHUP: reloading %s", env->conffile);
		(void)factoryd_reload(errbuf, sizeof(errbuf));
		break;
	case SIGCHLD:
		proc_reap();
		break;
	}
}

/*
 * A failed reload keeps the configuration in force and says why.
 */
int
factoryd_reload(char *errbuf, size_t errlen)
{
	struct factoryd_conf	*conf;
	int			 fds[PROC_MAX], sbx, fsw, i;
	char			 why[256];

	if (conf_parse(env->conffile, &conf, errbuf, errlen) == -1) {
		log_warnx("reload failed, keeping the old configuration: %s",
		    errbuf);
		return (-1);
	}
	/*
	 * The fleet block stays the running one's (below): the new
	 * repositories are held to its adopt-after, not the file's.
	 */
	if (conf_fleet_adopt_check(conf, &env->conf->fleet, why,
	    sizeof(why)) == -1) {
		snprintf(errbuf, errlen, "fleet.adopt-after, %llu s as the "
		    "daemon started, %s (fleet changes take effect on "
		    "restart)", (unsigned long long)
		    env->conf->fleet.adopt_after_ms / 1000, why);
		log_warnx("reload failed, keeping the old configuration: %s",
		    errbuf);
		conf_free(conf);
		return (-1);
	}
	/* Another libexec: its binaries are opened, and checked, now. */
	if (strcmp(conf->libexec, env->conf->libexec) != 0) {
		if (factoryd_open_binaries(conf->libexec,
		    env->conf->fleet.enabled, env->conf->preview.enabled, fds,
		    &sbx, errbuf, errlen) == -1) {
			log_warnx("reload failed, keeping the old "
			    "configuration: %s", errbuf);
			conf_free(conf);
			return (-1);
		}
		if ((fsw = factoryd_open_binary(conf->libexec,
		    FACTORY_FSWALK_BIN, errbuf, errlen)) == -1) {
			log_warnx("reload failed, keeping the old "
			    "configuration: %s", errbuf);
			for (i = 0; i < PROC_MAX; i++)
				if (fds[i] != -1)
					close(fds[i]);
			close(sbx);
			conf_free(conf);
			return (-1);
		}
		for (i = 0; i < PROC_MAX; i++) {
			if (env->binfd[i] != -1)
				close(env->binfd[i]);
			env->binfd[i] = fds[i];
		}
		close(env->sandboxfd);
		env->sandboxfd = sbx;
		sandbox_set_launcher(sbx);
		fsjob_set_binary(fsw);
	}
	if (strcmp(conf->socket, env->conf->socket) != 0)
		log_warnx("reload: socket changes take effect on restart");
	if (strcmp(conf->statedir, env->conf->statedir) != 0)
		log_warnx("reload: state-dir changes take effect on restart");
	if (strcmp(conf->receipt_key, env->conf->receipt_key) != 0 ||
	    strcmp(conf->verifier_key, env->conf->verifier_key) != 0)
		log_warnx("reload: key changes take effect on restart");
	if (conf->verifiers != env->conf->verifiers)
		log_warnx("reload: verifiers changes take effect on restart");
	if (memcmp(&conf->fleet, &env->conf->fleet, sizeof(conf->fleet)))
		log_warnx("reload: fleet changes take effect on restart");
	if (memcmp(&conf->preview, &env->conf->preview,
	    sizeof(conf->preview)))
		log_warnx("reload: preview changes take effect on restart");
	/* What the running daemon pinned or bound stays as it is. */
	strlcpy(conf->socket, env->conf->socket, sizeof(conf->socket));
	strlcpy(conf->statedir, env->conf->statedir, sizeof(conf->statedir));
	strlcpy(conf->receipt_key, env->conf->receipt_key,
	    sizeof(conf->receipt_key));
	strlcpy(conf->verifier_key, env->conf->verifier_key,
	    sizeof(conf->verifier_key));
	conf->verifiers = env->conf->verifiers;
	conf->fleet = env->conf->fleet;
	conf->users[PROC_FLEET] = env->conf->users[PROC_FLEET];
	conf->preview = env->conf->preview;
	conf->users[PROC_PREVIEW] = env->conf->users[PROC_PREVIEW];
	if (conf->warning[0] != '\0')
		log_warnx("reload: %s", conf->warning);
	conf_free(env->conf);
	env->conf = conf;
	proc_reconfigure();
	metrics_reconfigure();
	fleet_reconfigure();

	/* A gateway that was not restarted gets the providers again. */
	gateway_configure();
	log_info("configuration reloaded");
	return (0);
}

/*
 * Each wait of the shutdown: the roles' exit after SIGTERM, then what
 * is left after SIGKILL.  Well under the unit's TimeoutStopSec.
 */
#define FACTORYD_STOP_MS	10000

/* A child reaped at shutdown: a role's slot forgets its pid. */
static void
factoryd_reaped(pid_t pid, int status)
{
	int	 i;

	for (i = 0; i < env->nchildren; i++)
		if (env->children[i].pid == pid) {
			env->children[i].pid = -1;
			log_debug("child pid %d reaped, status %d", (int)pid,
			    status);
			return;
		}
	log_debug("pid %d reaped, status %d", (int)pid, status);
}

/*
 * Reap children as they exit, waking on SIGCHLD (blocked by the
 * caller), until none is left (0) or ms have passed (-1).
 */
static int
factoryd_reap(const sigset_t *chld, int ms)
{
	struct timespec	 end, now, left;
	struct timespec	 span = { ms / 1000, (long)(ms % 1000) * 1000000 };
	pid_t		 pid;
	int		 status;

	clock_gettime(CLOCK_MONOTONIC, &now);
	timespecadd(&now, &span, &end);
	for (;;) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			factoryd_reaped(pid, status);
		if (pid == -1)
			return (errno == ECHILD ? 0 : -1);
		clock_gettime(CLOCK_MONOTONIC, &now);
		timespecsub(&end, &now, &left);
		if (left.tv_sec < 0)
			return (-1);
		(void)sigtimedwait(chld, NULL, &left);
	}
}

/*
 * Signal every child of ours, found by its parent pid in /proc; the
 * roles only if roles.  Safe by pid: a child is not reaped meanwhile,
 * so its pid cannot be another's.  The pids are logged if last.
 */
static void
factoryd_signal_children(int sig, int roles, int last)
{
	DIR		*d;
	struct dirent	*e;
	char		 path[64], buf[512], *p, *end;
	long		 pid, ppid;
	ssize_t		 n;
	int		 fd, i;

	if ((d = opendir("/proc")) == NULL) {
		log_warn("shutdown: /proc");
		return;
	}
	while ((e = readdir(d)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		/* The name may hold anything: the fields follow its ')'. */
		if ((p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %*c %ld", &ppid) != 1 || ppid != getpid())
			continue;
		for (i = 0; !roles && i < env->nchildren; i++)
			if (env->children[i].pid == (pid_t)pid)
				break;
		if (!roles && i < env->nchildren)
			continue;
		if (last)
			log_warnx("shutdown: pid %ld still there, killed",
			    pid);
		kill((pid_t)pid, sig);
	}
	closedir(d);
}

/*
 * Stop.  Every child is ended and reaped, by pid, before exiting:
 * nothing is left to init, nor to the service manager's SIGKILL of
 * what a unit's main process leaves.  Sandboxes are killed through
 * their cgroups, the launcher pool and the zygote through their pidfds,
 * any other child (a shell's sandbox) by SIGKILL; the roles get SIGTERM
 * and FACTORYD_STOP_MS to exit, then SIGKILL.  Each wait is woken by
 * SIGCHLD, never a sleep.
 */
static void
factoryd_shutdown(void)
{
	sigset_t	 chld;
	int		 i;

	env->shutting_down = 1;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	attempt_shutdown();
	for (i = 0; i < env->nchildren; i++)
		if (env->children[i].pid > 0)
			kill(env->children[i].pid, SIGTERM);
	sandbox_pool_end();
	factoryd_signal_children(SIGKILL, 0, 0);
	if (factoryd_reap(&chld, FACTORYD_STOP_MS) == -1) {
		factoryd_signal_children(SIGKILL, 1, 1);
		if (factoryd_reap(&chld, FACTORYD_STOP_MS) == -1)
			log_warnx("shutdown: children left unreaped");
	}
	sandbox_instance_remove();
	control_cleanup(env->conf->socket);
	log_info("terminating");
	exit(0);
}
