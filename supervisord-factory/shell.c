/*
 * factoryctl shell: an operator enters a running attempt's sandbox to
 * debug it.  The command runs as a second agent would: the attempt's
 * namespaces, uid and gid, no capabilities, no_new_privs, the same
 * Landlock, seccomp and rlimits, cwd the tree.  Nothing of the
 * operator's goes in: its terminal is a pty this process allocated,
 * whose slave is the command's stdin, stdout and stderr, and whose
 * master the parent relays to factoryctl over a socket factoryctl
 * passed and the parent alone reads and writes (ctlshell.h).
 *
 * The agent can write the tree, /tmp and /dev/shm, and may have
 * planted startup files there, so HOME is a tmpfs of the session's
 * own, in a mount namespace of its own, and the environment is ours
 * (no ENV, BASH_ENV or INPUTRC).  The session's processes live in a
 * cgroup of their own below the attempt's cgroup2 directory,
 * shell-<slot>; when the command exits, or the operator's connection
 * or relay goes, that cgroup is killed whole (setsid, double forks
 * and ignored SIGHUPs included) before anything else happens.
 *
 * Processes, for one session:
 *	parent	the pty, the session cgroup, the relay, the journal note
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
 *	ctl -> parent	SHELL_FD (struct ctl_shell_tty, the relay)
 *	parent		starts the command; relays
 *	parent -> ctl	{"id", "status"} when the session ended and its
 *			last output went out on the relay
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#define SHELL_BUFMAX	(64 * 1024)	/* queued each way, then reading stops */
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
	int			 relay;		/* the operator's socket */
	int			 master;	/* the pty */
	int			 killfd;	/* the session's cgroup.kill */
	char			 cgdir[PATH_MAX];	/* the session cgroup */
	pid_t			 pid;		/* the waiter; 0: not started */
	int			 ended;		/* no more input goes in */
	int			 status;	/* the command's, once reaped */
	int			 lastnl;	/* last input byte was '\n' */
	struct evbuffer		*in;		/* to the pty */
	struct evbuffer		*out;		/* to the relay */
	struct event		 ev_rr, ev_rw, ev_mr, ev_mw;
	unsigned		 on;		/* which of the four are added */
};

#define ON_RR	0x1
#define ON_RW	0x2
#define ON_MR	0x4
#define ON_MW	0x8

static TAILQ_HEAD(, shell)	 shells = TAILQ_HEAD_INITIALIZER(shells);
static int			 nshells;
static unsigned			 slots;		/* in use, a bit each */

static void	shell_relay_read(int, short, void *);
static void	shell_relay_write(int, short, void *);
static void	shell_master_read(int, short, void *);
static void	shell_master_write(int, short, void *);

/* One of the four relay events on or off. */
static void
shell_ev(struct shell *sh, unsigned which, int on)
{
	struct event	*ev;

	switch (which) {
	case ON_RR:
		ev = &sh->ev_rr;
		break;
	case ON_RW:
		ev = &sh->ev_rw;
		break;
	case ON_MR:
		ev = &sh->ev_mr;
		break;
	default:
		ev = &sh->ev_mw;
		break;
	}
	if (on && !(sh->on & which)) {
		event_add(ev, NULL);
		sh->on |= which;
	} else if (!on && (sh->on & which)) {
		event_del(ev);
		sh->on &= ~which;
	}
}

static void
shell_close_relay(struct shell *sh)
{
	shell_ev(sh, ON_RR, 0);
	shell_ev(sh, ON_RW, 0);
	if (sh->relay != -1)
		close(sh->relay);
	sh->relay = -1;
}

static void
shell_close_master(struct shell *sh)
{
	shell_ev(sh, ON_MR, 0);
	shell_ev(sh, ON_MW, 0);
	/* Closing the master hangs up any slave a leaked fd still holds. */
	if (sh->master != -1)
		close(sh->master);
	sh->master = -1;
}

static void
shell_free(struct shell *sh)
{
	shell_close_relay(sh);
	shell_close_master(sh);
	if (sh->killfd != -1)
		close(sh->killfd);
	if (sh->in != NULL)
		evbuffer_free(sh->in);
	if (sh->out != NULL)
		evbuffer_free(sh->out);
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

/* Only the agent of a running attempt, never its validation run. */
static struct attempt *
shell_attempt(struct ctl_conn *c, const char *id)
{
	struct attempt	*a;

	if ((a = attempt_find(id)) == NULL) {
		reply_fail(c, "%s: no such attempt", id);
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
	sh->relay = sh->master = sh->killfd = -1;
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
	    t->rows > 4096 || t->cols > 4096)
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

/* The relay must be a unix seqpacket socket: packets keep their tags. */
static int
shell_relay_ok(int fd)
{
	struct stat	 st;
	socklen_t	 len;
	int		 v;

	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
		return (0);
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_SEQPACKET)
		return (0);
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    v != AF_UNIX)
		return (0);
	return (fcntl(fd, F_SETFL, O_NONBLOCK) != -1 &&
	    fcntl(fd, F_SETFD, FD_CLOEXEC) != -1);
}

/*
 * The pty: master kept by the parent, slave (root-owned, 0600) for the
 * command.  Without an operator's terminal, the line discipline only
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
	if (tcsetattr(*slave, TCSANOW, &t) == -1 ||
	    fcntl(sh->master, F_SETFL, O_NONBLOCK) == -1) {
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
 * Until the pipe's EOF (exec done) or a reason: 0, or -1 with the
 * reason in err, or -2 if nothing came within SHELL_SETUP_MS.
 */
static int
shell_await(int fd, char *err, size_t errlen)
{
	struct pollfd	 pfd;
	ssize_t		 n;

	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		n = poll(&pfd, 1, SHELL_SETUP_MS);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "no answer from the sandbox");
			return (-2);
		}
		n = read(fd, err, errlen - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0)
			return (0);
		if (n < 0)
			n = snprintf(err, errlen, "read: %s", strerror(errno));
		err[n] = '\0';
		return (-1);
	}
}

/*
 * Start the waiter, factory-sandbox enter, with its fds; 0 once the
 * command's execve succeeded.
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
	if (pipe2(ep, O_CLOEXEC) == -1) {
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
	rc = shell_await(ep[0], err, errlen);
	close(ep[0]);
	ep[0] = -1;
	if (rc == 0)
		goto done;
	/*
	 * A waiter that reported goes on its own, removing HOME's mount
	 * point and the session cgroup (killing it would leave them); one
	 * that said nothing in time is killed.
	 */
	shell_kill(sh);
	if (rc == -2)
		kill(sh->pid, SIGKILL);
	while (waitpid(sh->pid, NULL, 0) == -1 && errno == EINTR)
		;
	sh->pid = 0;
 fail:
	rc = -1;
	if (sh->pid == 0)
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
	if (slave != -1)
		close(slave);
	return (rc);
}

static void
shell_start(struct ctl_conn *c, struct shell *sh)
{
	struct sandbox_spec	 spec;
	struct attempt		*a;
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
	if (shell_spawn(sh, a, &spec, home + 5, err, sizeof(err)) == -1)
		goto refused;
	if ((sh->in = evbuffer_new()) == NULL ||
	    (sh->out = evbuffer_new()) == NULL)
		fatal(NULL);
	event_set(&sh->ev_rr, sh->relay, EV_READ | EV_PERSIST,
	    shell_relay_read, sh);
	event_set(&sh->ev_rw, sh->relay, EV_WRITE | EV_PERSIST,
	    shell_relay_write, sh);
	event_set(&sh->ev_mr, sh->master, EV_READ | EV_PERSIST,
	    shell_master_read, sh);
	event_set(&sh->ev_mw, sh->master, EV_WRITE | EV_PERSIST,
	    shell_master_write, sh);
	shell_ev(sh, ON_RR, 1);
	shell_ev(sh, ON_MR, 1);
	sh->lastnl = 1;
	log_info("%s: shell entered by uid %u, pid %d: %s", a->id,
	    (unsigned)sh->uid, (int)sh->pid, json_string_value(argv0));
	json_decref(argv0);
	return;
 refused:
	json_decref(argv0);
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
	int		 fd = imsg_get_fd(imsg);

	if (sh == NULL || sh->pid != 0 || sh->relay != -1 || fd == -1 ||
	    imsg_get_data(imsg, &sh->tty, sizeof(sh->tty)) == -1 ||
	    !shell_tty_ok(&sh->tty) || !shell_relay_ok(fd)) {
		if (fd != -1)
			close(fd);
		reply_fail(c, "bad shell terminal: a struct ctl_shell_tty "
		    "and a unix seqpacket socket");
		if (sh != NULL && sh->pid == 0) {
			c->shell = NULL;
			shell_free(sh);
		}
		return;
	}
	sh->relay = fd;
	shell_start(c, sh);
}

/*
 * The operator is gone (connection or relay): the session goes, whole.
 * The waiter sees its command die and is reaped as usual.
 */
static void
shell_hangup(struct shell *sh)
{
	sh->ended = 1;
	shell_close_relay(sh);
	shell_ev(sh, ON_MW, 0);
	shell_kill(sh);
}

static void
shell_relay_read(int fd, short event, void *arg)
{
	struct shell	*sh = arg;
	unsigned char	 pkt[1 + CTL_SHELL_CHUNK];
	struct winsize	 ws;
	uint16_t	 rc[2];
	ssize_t		 n;

	if ((n = recv(fd, pkt, sizeof(pkt), MSG_DONTWAIT | MSG_TRUNC)) ==
	    -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		shell_hangup(sh);
		return;
	}
	if (n == 0) {
		shell_hangup(sh);
		return;
	}
	if (n > (ssize_t)sizeof(pkt) || (pkt[0] == CTL_SHELL_IN && n < 2) ||
	    (pkt[0] == CTL_SHELL_WINSZ && n != 1 + (ssize_t)sizeof(rc)) ||
	    (pkt[0] == CTL_SHELL_EOF && n != 1) || (pkt[0] != CTL_SHELL_IN &&
	    pkt[0] != CTL_SHELL_WINSZ && pkt[0] != CTL_SHELL_EOF)) {
		log_warnx("%s: shell of uid %u: malformed relay packet, "
		    "ending the session", sh->id, (unsigned)sh->uid);
		shell_hangup(sh);
		return;
	}
	if (sh->ended)
		return;		/* after the command: never into the pty */
	switch (pkt[0]) {
	case CTL_SHELL_IN:
		evbuffer_add(sh->in, pkt + 1, n - 1);
		sh->lastnl = pkt[n - 1] == '\n';
		break;
	case CTL_SHELL_EOF:
		/* A partial line needs one ^D to end it, then one for EOF. */
		evbuffer_add(sh->in, "\004\004", sh->lastnl ? 1 : 2);
		sh->lastnl = 1;
		break;
	default:
		memcpy(rc, pkt + 1, sizeof(rc));
		memset(&ws, 0, sizeof(ws));
		ws.ws_row = rc[0];
		ws.ws_col = rc[1];
		if (rc[0] > 0 && rc[1] > 0 && rc[0] <= 4096 && rc[1] <= 4096)
			(void)ioctl(sh->master, TIOCSWINSZ, &ws);
		return;
	}
	shell_ev(sh, ON_MW, 1);
	if (evbuffer_get_length(sh->in) >= SHELL_BUFMAX)
		shell_ev(sh, ON_RR, 0);
}

static void
shell_master_write(int fd, short event, void *arg)
{
	struct shell	*sh = arg;

	if (sh->ended) {
		shell_ev(sh, ON_MW, 0);
		return;
	}
	if (evbuffer_write(sh->in, fd) == -1 && errno != EAGAIN &&
	    errno != EINTR) {
		shell_ev(sh, ON_MW, 0);
		return;
	}
	if (evbuffer_get_length(sh->in) == 0)
		shell_ev(sh, ON_MW, 0);
	if (evbuffer_get_length(sh->in) < SHELL_BUFMAX && sh->relay != -1)
		shell_ev(sh, ON_RR, 1);
}

/* Read what the pty has; 0 at its end (every slave closed). */
static int
shell_master_drain(struct shell *sh, int once)
{
	char	 buf[CTL_SHELL_CHUNK];
	ssize_t	 n;

	do {
		if (evbuffer_get_length(sh->out) >= SHELL_BUFMAX) {
			shell_ev(sh, ON_MR, 0);
			return (1);
		}
		n = read(sh->master, buf, sizeof(buf));
		if (n > 0 && sh->relay != -1)
			evbuffer_add(sh->out, buf, n);
	} while (n > 0 && !once);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return (1);
	return (n > 0);
}

static void
shell_finish(struct shell *sh)
{
	struct ctl_conn	*c;

	if (sh->connid != 0 && (c = reply_conn(sh->connid)) != NULL) {
		c->shell = NULL;
		reply_obj(c, json_pack("{s:s, s:i}", "id", sh->id,
		    "status", sh->status));
	}
	shell_free(sh);
}

static void
shell_master_read(int fd, short event, void *arg)
{
	struct shell	*sh = arg;

	if (!shell_master_drain(sh, 1))
		shell_ev(sh, ON_MR, 0);
	if (evbuffer_get_length(sh->out) > 0 && sh->relay != -1)
		shell_ev(sh, ON_RW, 1);
}

static void
shell_relay_write(int fd, short event, void *arg)
{
	struct shell	*sh = arg;
	unsigned char	 pkt[1 + CTL_SHELL_CHUNK];
	size_t		 n;
	ssize_t		 w;

	while ((n = evbuffer_get_length(sh->out)) > 0) {
		if (n > CTL_SHELL_CHUNK)
			n = CTL_SHELL_CHUNK;
		pkt[0] = CTL_SHELL_OUT;
		evbuffer_copyout(sh->out, pkt + 1, n);
		if ((w = send(fd, pkt, n + 1, MSG_DONTWAIT | MSG_NOSIGNAL)) ==
		    -1) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			shell_hangup(sh);
			if (sh->pid == -1)
				shell_finish(sh);
			return;
		}
		evbuffer_drain(sh->out, n);
	}
	shell_ev(sh, ON_RW, 0);
	if (sh->master != -1 && !(sh->on & ON_MR) && sh->pid != -1)
		shell_ev(sh, ON_MR, 1);
	if (sh->pid == -1)
		shell_finish(sh);	/* the last output went out */
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
		/* The waiter is reaped as usual, then sh is freed. */
		shell_hangup(sh);
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
	struct shell	*sh;
	struct attempt	*a;
	int		 code;

	TAILQ_FOREACH(sh, &shells, entry)
		if (sh->pid == pid && pid > 0)
			break;
	if (sh == NULL)
		return (0);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	sh->pid = -1;
	sh->ended = 1;
	sh->status = code;
	/* The waiter killed and removed it; if it could not, we try. */
	shell_kill(sh);
	if (rmdir(sh->cgdir) == -1 && errno != ENOENT)
		log_warn("%s: session cgroup %s", sh->id, sh->cgdir);
	log_info("%s: shell of uid %u ended, status %d", sh->id,
	    (unsigned)sh->uid, code);
	if ((a = attempt_find(sh->id)) != NULL)
		report_note(a, "shell", json_pack("{s:s, s:i, s:i}", "event",
		    "exit", "uid", (int)sh->uid, "status", code));
	/* Its last output, then the status. */
	shell_ev(sh, ON_MW, 0);
	if (sh->master != -1)
		(void)shell_master_drain(sh, 0);
	shell_close_master(sh);
	if (sh->relay != -1 && evbuffer_get_length(sh->out) > 0)
		shell_ev(sh, ON_RW, 1);
	else
		shell_finish(sh);
	return (1);
}
