/*
 * factoryctl shell: an operator enters a running attempt's sandbox to
 * debug it.  The command runs as a second agent would: the attempt's
 * namespaces, uid and gid, no capabilities, no_new_privs, the same
 * Landlock, seccomp and rlimits, cwd the tree.  Nothing of the
 * operator's goes in: its terminal is a pty this process allocated,
 * whose slave is the command's stdin, stdout and stderr.  Once the
 * command runs, the master goes to factoryctl over the control socket
 * (ctlshell.h) and is closed here: factoryctl relays the operator's
 * terminal to it and sets its size; no byte of the session passes
 * through this process.
 *
 * The agent can write the tree, /tmp and /dev/shm, and may have
 * planted startup files there, so HOME is a tmpfs of the session's
 * own, in a mount namespace of its own, and the environment is ours
 * (no ENV, BASH_ENV or INPUTRC).  The session's processes live in a
 * cgroup of their own below the attempt's cgroup2 directory,
 * shell-<slot>; when the command exits, or the operator's connection
 * goes, that cgroup is killed whole (setsid, double forks and ignored
 * SIGHUPs included) before anything else happens.  factoryctl's end
 * of the pty goes with it too: its master closing hangs the session
 * up.
 *
 * Processes, for one session:
 *	parent	admission, the pty until it is handed over, the session
 *		cgroup, the journal notes, the exit status
 *	waiter	factory-sandbox in its enter mode (sandbox_enter),
 *		exec'd at once, so it holds nothing of the parent's
 *		memory: a root child of the parent in the sandbox's
 *		namespaces but in none of its cgroups; forks the command,
 *		waits for it, kills the session cgroup, waits for it to
 *		empty, removes it and HOME's mount point, exits with the
 *		status
 *	command	joins the session cgroup, gets a private mount namespace
 *		with the fresh HOME, the pty as controlling terminal,
 *		the agent's confinement (sbx_confine), execve
 *
 * The exchange, on one control connection:
 *	ctl -> parent	SHELL (attempt id, argv)	checked, answered OK
 *	ctl -> parent	SHELL_FD (struct ctl_shell_tty)
 *	parent		starts the waiter; an event on its setup pipe
 *			(EOF: the command's execve succeeded), bounded
 *			by SHELL_SETUP_MS
 *	parent -> ctl	SHELL_FD (the pty's master), or FAIL and why
 *	parent -> ctl	{"id", "status"} when the waiter was reaped
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ctlshell.h"
#include "esc.h"
#include "factoryd.h"
#include "image.h"
#include "log.h"

#define SHELL_MAX	8	/* running at once, all attempts */
#define SHELL_MAXARGS	64
#define SHELL_NOFILE	1024
#define SHELL_SETUP_MS	10000	/* a start that takes longer is broken */
#define SHELL_HOME	"/tmp/.factory-home-XXXXXX"

struct shell {
	TAILQ_ENTRY(shell)	 entry;
	uint32_t		 connid;	/* 0 once the client left */
	uid_t			 uid;		/* the operator */
	int			 slot;		/* shell-<slot>, -1: none */
	char			 id[ATTEMPT_ID_MAX];
	char			*args;		/* argv strings, NUL-separated */
	char			*argv[SHELL_MAXARGS + 1];
	struct ctl_shell_tty	 tty;
	int			 master;	/* the pty, until handed over */
	int			 killfd;	/* the session's cgroup.kill */
	char			 cgdir[PATH_MAX];	/* the session cgroup */
	pid_t			 pid;		/* the waiter; 0: not started,
						   -1: reaped */
	int			 setupfd;	/* its setup pipe, while starting */
	struct event		 ev_setup;
	int			 refused;	/* the client was told why */
	int			 status;	/* the command's, once reaped */
};

static TAILQ_HEAD(, shell)	 shells = TAILQ_HEAD_INITIALIZER(shells);
static int			 nshells;
static unsigned			 slots;		/* in use, a bit each */

static void	shell_setup(int, short, void *);

static void
shell_close_master(struct shell *sh)
{
	/* Closing the master hangs up any slave a leaked fd still holds. */
	if (sh->master != -1)
		close(sh->master);
	sh->master = -1;
}

static void
shell_close_setup(struct shell *sh)
{
	if (sh->setupfd == -1)
		return;
	event_del(&sh->ev_setup);
	close(sh->setupfd);
	sh->setupfd = -1;
}

static void
shell_free(struct shell *sh)
{
	shell_close_setup(sh);
	shell_close_master(sh);
	if (sh->killfd != -1)
		close(sh->killfd);
	if (sh->slot != -1)
		slots &= ~(1U << sh->slot);
	TAILQ_REMOVE(&shells, sh, entry);
	nshells--;
	free(sh->args);
	free(sh);
}

/* Every process the session started, now: the cgroup's kill switch. */
static void
shell_kill(struct shell *sh)
{
	if (sh->killfd != -1 && write(sh->killfd, "1", 1) != 1 &&
	    errno != ENODEV && errno != ENOENT)
		log_warn("%s: kill session cgroup %s", sh->id, sh->cgdir);
}

/* The client still connected for sh, or NULL. */
static struct ctl_conn *
shell_conn(struct shell *sh)
{
	struct ctl_conn	*c;

	if (sh->connid == 0 || (c = reply_conn(sh->connid)) == NULL ||
	    c->shell != sh)
		return (NULL);
	return (c);
}

/* Only the agent of a running attempt, never its validation run. */
static struct attempt *
shell_attempt(struct ctl_conn *c, const char *id)
{
	struct attempt	*a;
	char		 err[256];

	if ((a = attempt_find(id)) == NULL) {
		reply_fail(c, "%s: no such attempt", id);
		return (NULL);
	}
	if (tenant_may_act(c, "shell", a, err, sizeof(err)) == -1) {
		reply_fail(c, "%s", err);
		return (NULL);
	}
	if (a->state != AS_RUNNING || a->run == NULL || !a->run->active ||
	    a->run->validation) {
		reply_fail(c, "%s is %s: only a running attempt's sandbox "
		    "can be entered", a->id, attempt_state_name(
		    a->outcome != AS_MAX ? a->outcome : a->state));
		return (NULL);
	}
	return (a);
}

/* "id\0arg0\0arg1\0...": every string NUL-terminated, argv optional. */
static int
shell_parse(struct shell *sh, struct imsg *imsg)
{
	size_t	 len = imsg_get_len(imsg), off, n;
	int	 argc = 0;

	if (len < 2 || len > FACTORY_MAXIMSG ||
	    (sh->args = malloc(len)) == NULL ||
	    imsg_get_data(imsg, sh->args, len) == -1 ||
	    sh->args[len - 1] != '\0')
		return (-1);
	if ((n = strlen(sh->args)) == 0 || n >= sizeof(sh->id))
		return (-1);
	strlcpy(sh->id, sh->args, sizeof(sh->id));
	for (off = n + 1; off < len; off += strlen(sh->args + off) + 1) {
		if (argc == SHELL_MAXARGS)
			return (-1);
		sh->argv[argc++] = sh->args + off;
	}
	if (argc == 0)
		sh->argv[argc++] = "/bin/sh";
	sh->argv[argc] = NULL;
	return (sh->argv[0][0] == '/' ? 0 : -1);
}

void
shell_request(struct ctl_conn *c, struct imsg *imsg)
{
	struct shell	*sh;

	if (c->shell != NULL) {
		reply_fail(c, "a shell is already open on this connection");
		return;
	}
	if (nshells >= SHELL_MAX) {
		reply_fail(c, "too many shells open (%d)", SHELL_MAX);
		return;
	}
	if ((sh = calloc(1, sizeof(*sh))) == NULL)
		fatal(NULL);
	sh->slot = -1;
	sh->master = sh->killfd = sh->setupfd = -1;
	TAILQ_INSERT_TAIL(&shells, sh, entry);
	nshells++;
	if (shell_parse(sh, imsg) == -1) {
		reply_fail(c, "bad shell request: an attempt id, then an "
		    "absolute argv");
		shell_free(sh);
		return;
	}
	if (shell_attempt(c, sh->id) == NULL) {
		shell_free(sh);
		return;
	}
	sh->connid = c->id;
	sh->uid = c->uid;
	c->shell = sh;
	imsgev_compose(&c->iev, IMSG_CTL_OK, 0, 0, -1, NULL, 0);
}

/* The terminal's description, from the operator: exact and bounded. */
static int
shell_tty_ok(const struct ctl_shell_tty *t)
{
	size_t	 i, n;

	if (t->interactive > 1 || t->rows == 0 || t->cols == 0 ||
	    t->rows > CTL_SHELL_DIMMAX || t->cols > CTL_SHELL_DIMMAX)
		return (0);
	if ((n = strnlen(t->term, sizeof(t->term))) == 0 ||
	    n == sizeof(t->term))
		return (0);
	for (i = 0; i < n; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789._+-", t->term[i]) == NULL)
			return (0);
	return (1);
}

/*
 * The pty: master for factoryctl once the command runs, slave
 * (root-owned, 0600) for the command.  Without an operator's terminal, the line discipline only
 * delimits lines and turns ^D into end of input: no echo, no signals,
 * no output processing, so bytes pass as they are.
 */
static int
shell_pty(struct shell *sh, int *slave, char *err, size_t errlen)
{
	struct winsize	 ws;
	struct termios	 t;
	char		 name[64];

	*slave = -1;
	if ((sh->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) ==
	    -1 || grantpt(sh->master) == -1 || unlockpt(sh->master) == -1 ||
	    ptsname_r(sh->master, name, sizeof(name)) != 0 ||
	    (*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
	    fchown(*slave, 0, 0) == -1 || fchmod(*slave, 0600) == -1) {
		snprintf(err, errlen, "pty: %s", strerror(errno));
		return (-1);
	}
	memset(&ws, 0, sizeof(ws));
	ws.ws_row = sh->tty.rows;
	ws.ws_col = sh->tty.cols;
	if (ioctl(sh->master, TIOCSWINSZ, &ws) == -1 ||
	    tcgetattr(*slave, &t) == -1) {
		snprintf(err, errlen, "pty: %s", strerror(errno));
		return (-1);
	}
	if (sh->tty.interactive)
		t.c_iflag |= IUTF8;
	else {
		t.c_iflag = 0;
		t.c_oflag = 0;
		t.c_lflag = ICANON;
		t.c_cc[VERASE] = t.c_cc[VKILL] = t.c_cc[VEOL] =
		    t.c_cc[VEOL2] = _POSIX_VDISABLE;
		t.c_cc[VEOF] = 4;
	}
	if (tcsetattr(*slave, TCSANOW, &t) == -1) {
		snprintf(err, errlen, "pty: %s", strerror(errno));
		return (-1);
	}
	return (0);
}

static int
shell_open_at(const char *dir, const char *file, int flags)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (open(path, flags | O_CLOEXEC | O_NOFOLLOW));
}

/*
 * The session cgroup, shell-<slot> below the attempt's cgroup2
 * directory, a path the parent derives from the attempt id alone.  Its
 * procs replace that directory's in the command's list; the v1
 * controllers' cgroups (limits) are the attempt's.  fds: the command's
 * cgroup.procs files, then the session's cgroup.events and the
 * attempt's cgroup2 directory (for the waiter's rmdir).
 */
static int
shell_cgroup(struct shell *sh, const struct sandbox *sb, int *fds, int *n,
    char *err, size_t errlen)
{
	int	 i, fd;

	*n = 0;
	/* A leftover of a lost daemon: empty by now, or it is refused. */
	(void)rmdir(sh->cgdir);
	if (mkdir(sh->cgdir, 0755) == -1) {
		snprintf(err, errlen, "mkdir %s: %s", sh->cgdir,
		    strerror(errno));
		return (-1);
	}
	if ((sh->killfd = shell_open_at(sh->cgdir, "cgroup.kill",
	    O_WRONLY)) == -1) {
		snprintf(err, errlen, "%s/cgroup.kill: %s", sh->cgdir,
		    strerror(errno));
		return (-1);
	}
	for (i = 0; i < sb->ncgroups; i++) {
		fd = shell_open_at(i == sb->cg_kill ? sh->cgdir :
		    sb->cgroups[i], "cgroup.procs", O_WRONLY);
		if (fd == -1)
			goto fail;
		fds[(*n)++] = fd;
	}
	if ((fd = shell_open_at(sh->cgdir, "cgroup.events", O_RDONLY)) == -1)
		goto fail;
	fds[(*n)++] = fd;
	if ((fd = open(sb->cgroups[sb->cg_kill], O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		goto fail;
	fds[(*n)++] = fd;
	return (0);
 fail:
	snprintf(err, errlen, "session cgroup %s: %s", sh->cgdir,
	    strerror(errno));
	return (-1);
}

/*
 * Start the waiter, factory-sandbox enter, with its fds.  0 once it
 * runs: its setup pipe, where it says why it failed or whose EOF is
 * the command's execve, is left in sh->setupfd.
 */
static int
shell_spawn(struct shell *sh, struct attempt *a, const struct sandbox_spec
    *spec, char *home, char *err, size_t errlen)
{
	struct sandbox		*sb = &a->run->sb;
	struct sandbox_enter	 se;
	char			 cgname[32];
	int			 cgfds[SANDBOX_MAXCG + 2], ep[2], slave, n, i, rc;

	memset(&se, 0, sizeof(se));
	se.errfd = se.pidfd = ep[0] = -1;
	n = 0;
	rc = -1;
	if (shell_pty(sh, &slave, err, errlen) == -1)
		goto fail;
	if (shell_cgroup(sh, sb, cgfds, &n, err, errlen) == -1)
		goto fail;
	/* A pidfd: pid 1 cannot be swapped for another process meanwhile. */
	if ((se.pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0)) == -1) {
		snprintf(err, errlen, "pidfd_open %d: %s", (int)sb->pid,
		    strerror(errno));
		goto fail;
	}
	if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		ep[0] = -1;
		goto fail;
	}
	snprintf(cgname, sizeof(cgname), "shell-%d", sh->slot);
	se.spec = spec;
	se.home = home;
	se.cgname = cgname;
	se.tty = slave;
	se.errfd = ep[1];
	se.killfd = sh->killfd;
	se.cgfds = cgfds;
	se.ncgfds = n;
	sh->pid = sandbox_enter(sb, &se, err, errlen);
	close(ep[1]);
	se.errfd = -1;
	if (sh->pid == -1) {
		sh->pid = 0;
		goto fail;
	}
	sh->setupfd = ep[0];
	ep[0] = -1;
	rc = 0;
	goto done;
 fail:
	(void)rmdir(sh->cgdir);
 done:
	if (ep[0] != -1)
		close(ep[0]);
	if (se.errfd != -1)
		close(se.errfd);
	if (se.pidfd != -1)
		close(se.pidfd);
	for (i = 0; i < n; i++)
		close(cgfds[i]);
	/* Ours closed, the master sees the end when the session's are. */
	if (slave != -1)
		close(slave);
	return (rc);
}

static void
shell_start(struct ctl_conn *c, struct shell *sh)
{
	struct sandbox_spec	 spec;
	struct attempt		*a;
	struct timeval		 tv;
	char			 err[512], ps1[ATTEMPT_ID_MAX + 16];
	char			 imgroot[PATH_MAX];
	char			 term[CTL_SHELL_TERMMAX + 8];
	char			 home[sizeof(SHELL_HOME) + 8];
	char			*envp[6];
	json_t			*argv0 = NULL;
	int			 i;

	if ((a = shell_attempt(c, sh->id)) == NULL)
		goto fail;
	for (i = 0; i < SHELL_MAX; i++)
		if (!(slots & (1U << i)))
			break;
	sh->slot = i;
	slots |= 1U << i;
	if (sandbox_prepare(err, sizeof(err)) == -1)
		goto refused;
	if (a->run->sb.cg_kill < 0) {
		snprintf(err, sizeof(err), "no cgroup2 directory: the session "
		    "could not be killed whole");
		goto refused;
	}
	snprintf(sh->cgdir, sizeof(sh->cgdir), "%s/shell-%d",
	    a->run->sb.cgroups[a->run->sb.cg_kill], sh->slot);
	/* A template: the waiter makes HOME (mkdtemp) and sets it here. */
	snprintf(home, sizeof(home), "HOME=%s", SHELL_HOME);
	snprintf(ps1, sizeof(ps1), "PS1=%s$ ", a->id);
	snprintf(term, sizeof(term), "TERM=%s", sh->tty.term);
	envp[0] = home;
	envp[1] = "PATH=/usr/local/bin:/usr/bin:/bin";
	envp[2] = term;
	envp[3] = ps1;
	envp[4] = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.id = a->id;
	spec.argv = sh->argv;
	spec.env = envp;
	spec.exec_allow = a->m->exec;
	/* In an image the exec defaults are the image's paths, as the agent's. */
	if (a->image[0] != '\0' && image_rootfs(a->image + 7, imgroot,
	    sizeof(imgroot)) == 0)
		spec.image = imgroot;
	spec.cpu_ms = a->m->limits.cpu_ms;
	spec.fsize = a->m->limits.tree;
	spec.nofile = SHELL_NOFILE;
	/* Into the evidence before it exists: who, with what (escaped), where. */
	argv0 = esc_json_str(sh->argv[0]);
	report_note(a, "shell", json_pack("{s:s, s:i, s:O, s:s}", "event",
	    "enter", "uid", (int)sh->uid, "argv0", argv0, "cgroup",
	    sh->cgdir));
	json_decref(argv0);
	if (shell_spawn(sh, a, &spec, home + 5, err, sizeof(err)) == -1)
		goto refused;
	/* The answer, the master or why not, comes from shell_setup. */
	event_set(&sh->ev_setup, sh->setupfd, EV_READ | EV_PERSIST,
	    shell_setup, sh);
	tv.tv_sec = SHELL_SETUP_MS / 1000;
	tv.tv_usec = (SHELL_SETUP_MS % 1000) * 1000;
	event_add(&sh->ev_setup, &tv);
	c->awaiting = 1;
	return;
 refused:
	log_warnx("%s: shell for uid %u refused: %s", a->id,
	    (unsigned)sh->uid, err);
	reply_fail(c, "%s: shell: %s", a->id, err);
 fail:
	c->shell = NULL;
	shell_free(sh);
}

void
shell_fd(struct ctl_conn *c, struct imsg *imsg)
{
	struct shell	*sh = c->shell;

	/* A descriptor with it closed the connection (control.c). */
	if (sh == NULL || sh->pid != 0 ||
	    imsg_get_data(imsg, &sh->tty, sizeof(sh->tty)) == -1 ||
	    !shell_tty_ok(&sh->tty)) {
		reply_fail(c, "bad shell terminal: a struct ctl_shell_tty "
		    "and no descriptor");
		if (sh != NULL && sh->pid == 0) {
			c->shell = NULL;
			shell_free(sh);
		}
		return;
	}
	shell_start(c, sh);
}

/*
 * The start failed (the waiter said why, or nothing in time): the
 * client is told, the waiter goes on its own, removing HOME's mount
 * point and the session cgroup (killing it would leave them), or, if
 * it said nothing, is killed; shell_reap frees sh.
 */
static void
shell_refuse(struct shell *sh, const char *err, int silent)
{
	struct ctl_conn	*c;

	shell_close_setup(sh);
	shell_close_master(sh);
	log_warnx("%s: shell for uid %u refused: %s", sh->id,
	    (unsigned)sh->uid, err);
	if ((c = shell_conn(sh)) != NULL) {
		c->shell = NULL;
		reply_fail(c, "%s: shell: %s", sh->id, err);
	}
	sh->connid = 0;
	sh->refused = 1;
	shell_kill(sh);
	if (silent && sh->pid > 0)
		kill(sh->pid, SIGKILL);
}

/*
 * The command runs: the master goes to the client and is closed here
 * once sent (the imsg layer owns it).  A client that left meanwhile
 * ends the session now, the command being in its cgroup by then.
 */
static void
shell_started(struct shell *sh)
{
	struct ctl_conn	*c;
	json_t		*argv0;

	shell_close_setup(sh);
	argv0 = esc_json_str(sh->argv[0]);
	log_info("%s: shell entered by uid %u, pid %d: %s", sh->id,
	    (unsigned)sh->uid, (int)sh->pid, json_string_value(argv0));
	json_decref(argv0);
	if ((c = shell_conn(sh)) == NULL) {
		shell_close_master(sh);
		shell_kill(sh);
		return;
	}
	if (imsgev_compose(&c->iev, IMSG_CTL_SHELL_FD, 0, 0, sh->master,
	    NULL, 0) == -1) {
		log_warn("%s: shell of uid %u: its terminal", sh->id,
		    (unsigned)sh->uid);
		shell_close_master(sh);
		shell_kill(sh);
	}
	sh->master = -1;
	c->awaiting = 0;
	reply_events(c);
}

/*
 * The setup pipe, at most once: EOF is the command's execve, bytes
 * are the reason it failed.  Only non-blocking reads; once the waiter
 * is reaped, nobody writes it any more.
 */
static void
shell_setup_read(struct shell *sh, int reaped)
{
	char	 raw[256], err[256 * ESC_MAXEXPAND + 1];
	ssize_t	 n;

	n = read(sh->setupfd, raw, sizeof(raw));
	if (n == -1 && (errno == EAGAIN || errno == EINTR) && !reaped)
		return;
	if (n == 0) {
		shell_started(sh);
		return;
	}
	/* The waiter's bytes, shown escaped: they may carry argv[0]. */
	if (n > 0)
		esc_show(raw, n, err, sizeof(err));
	else if (reaped)
		snprintf(err, sizeof(err), "no answer from the sandbox");
	else
		snprintf(err, sizeof(err), "read: %s", strerror(errno));
	shell_refuse(sh, err, 0);
}

static void
shell_setup(int fd, short event, void *arg)
{
	struct shell	*sh = arg;

	if (event & EV_TIMEOUT)
		shell_refuse(sh, "no answer from the sandbox", 1);
	else
		shell_setup_read(sh, 0);
}

/* The client left: its session goes too. */
void
shell_conn_closed(struct ctl_conn *c)
{
	struct shell	*sh = c->shell;

	if (sh == NULL)
		return;
	c->shell = NULL;
	sh->connid = 0;
	if (sh->pid > 0) {
		/*
		 * Killed now if its command runs, else once it joined its
		 * cgroup (shell_started); the waiter is reaped as usual,
		 * then sh is freed.
		 */
		if (sh->setupfd == -1)
			shell_kill(sh);
		return;
	}
	shell_free(sh);
}

/*
 * Teardown of an attempt, also one a lost daemon left: the session
 * cgroups below its cgroup2 directory, by their exact names, so the
 * directory itself can go.  What is still in them was killed with the
 * attempt; one still busy is left for the caller's retry.
 */
void
shell_cgroups_remove(const struct sandbox *sb)
{
	char	 path[PATH_MAX];
	int	 i;

	if (sb->cg_kill < 0)
		return;
	for (i = 0; i < SHELL_MAX; i++) {
		snprintf(path, sizeof(path), "%s/shell-%d",
		    sb->cgroups[sb->cg_kill], i);
		if (rmdir(path) == -1 && errno != ENOENT && errno != EBUSY)
			log_warn("%s", path);
	}
}

int
shell_reap(pid_t pid, int status)
{
	struct ctl_conn	*c;
	struct shell	*sh;
	struct attempt	*a;
	int		 code;

	TAILQ_FOREACH(sh, &shells, entry)
		if (sh->pid == pid && pid > 0)
			break;
	if (sh == NULL)
		return (0);
	/* Its setup's answer first, if its event has not come yet. */
	if (sh->setupfd != -1)
		shell_setup_read(sh, 1);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	sh->pid = -1;
	sh->status = code;
	/* The waiter killed and removed it; if it could not, we try. */
	shell_kill(sh);
	if (rmdir(sh->cgdir) == -1 && errno != ENOENT)
		log_warn("%s: session cgroup %s", sh->id, sh->cgdir);
	if (!sh->refused) {
		log_info("%s: shell of uid %u ended, status %d", sh->id,
		    (unsigned)sh->uid, code);
		if ((a = attempt_find(sh->id)) != NULL)
			report_note(a, "shell", json_pack("{s:s, s:i, s:i}",
			    "event", "exit", "uid", (int)sh->uid, "status",
			    code));
	}
	/* After the master, if it went: the client drains it, then exits. */
	if ((c = shell_conn(sh)) != NULL) {
		c->shell = NULL;
		reply_obj(c, json_pack("{s:s, s:i}", "id", sh->id,
		    "status", sh->status));
	}
	shell_free(sh);
	return (1);
}
