/*
 * factoryctl shell: run a command (by default /bin/sh) inside a running
 * attempt's sandbox, on a terminal factoryd allocated.  No descriptor
 * of ours goes in: once the command runs, factoryd hands us the pty's
 * master (ctlshell.h), and we copy our stdin to it and what the
 * session writes to our stdout, and pass on our window size.  On a
 * terminal, ours is put in raw mode for the session and restored on
 * every way out (exit, error, signal).  Exits with the command's exit
 * status (128 + signal if it was killed).  Our connection closing, or
 * the master, ends the session.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "ctlshell.h"
#include "factoryctl.h"
#include "imsg.h"

static struct termios		 sh_saved;
static int			 sh_raw;	/* sh_saved must be restored */
static volatile sig_atomic_t	 sh_signal;	/* the one that ends us */
static volatile sig_atomic_t	 sh_winch;

static void
shell_restore(void)
{
	if (sh_raw) {
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &sh_saved);
		sh_raw = 0;
	}
}

static void
shell_sig(int sig)
{
	if (sig == SIGWINCH)
		sh_winch = 1;
	else
		sh_signal = sig;
}

static void
shell_signals(void)
{
	const int		 sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM,
				     SIGPIPE, SIGWINCH };
	struct sigaction	 sa;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = shell_sig;	/* no SA_RESTART: poll returns */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) == -1)
			err(CTL_EXIT_USAGE, "sigaction");
	/* A stopped client would hold the operator's terminal raw. */
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
}

static void
shell_rawmode(void)
{
	struct termios	 t;

	if (tcgetattr(STDIN_FILENO, &sh_saved) == -1)
		err(CTL_EXIT_USAGE, "tcgetattr");
	t = sh_saved;
	cfmakeraw(&t);
	sh_raw = 1;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == -1)
		err(CTL_EXIT_USAGE, "tcsetattr");
}

/* A pty's master: a terminal whose slave has a number. */
static int
shell_master_ok(int fd)
{
	struct stat	 st;
	unsigned int	 n;

	return (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && isatty(fd) &&
	    ioctl(fd, TIOCGPTN, &n) == 0 &&
	    fcntl(fd, F_SETFD, FD_CLOEXEC) != -1 &&
	    fcntl(fd, F_SETFL, O_NONBLOCK) != -1);
}

/*
 * One answer: OK (0), a JSON document in *out (0), the pty's master in
 * *master (0), or FAIL (1); the master only where the caller expects
 * it.  With nowait, -2 if no message of it is already read.
 */
static int
shell_answer(struct imsgbuf *ibuf, json_t **out, int *master, int nowait,
    char *reason, size_t reasonlen)
{
	struct imsg	 imsg;
	json_error_t	 jerr;
	char		*doc = NULL;
	size_t		 doclen = 0, n;
	int		 r, ret = -1;

	while (ret == -1) {
		if ((r = imsgbuf_get(ibuf, &imsg)) == -1)
			errx(CTL_EXIT_USAGE, "malformed answer");
		if (r == 0) {
			if (nowait && doc == NULL)
				return (-2);
			if ((r = imsgbuf_read(ibuf)) == -1) {
				if (errno == EINTR || errno == EAGAIN)
					continue;
				err(CTL_EXIT_USAGE, "read");
			}
			if (r == 0)
				errx(CTL_EXIT_USAGE, "factoryd closed the "
				    "connection");
			continue;
		}
		n = imsg_get_len(&imsg);
		if (imsg_get_type(&imsg) == IMSG_CTL_SHELL_FD &&
		    master != NULL) {
			if ((*master = imsg_get_fd(&imsg)) == -1 || n != 0 ||
			    !shell_master_ok(*master))
				errx(CTL_EXIT_USAGE, "malformed terminal "
				    "from factoryd");
			imsg_free(&imsg);
			ret = 0;
			continue;
		}
		if (imsg_get_fd(&imsg) != -1)
			errx(CTL_EXIT_USAGE, "unexpected descriptor from "
			    "factoryd");
		switch (imsg_get_type(&imsg)) {
		case IMSG_CTL_OK:
			ret = 0;
			break;
		case IMSG_CTL_DATA:
			if (n > FACTORY_MAXIMSG ||
			    (doc = realloc(doc, doclen + n + 1)) == NULL)
				err(CTL_EXIT_USAGE, NULL);
			memcpy(doc + doclen, imsg.data, n);
			doclen += n;
			doc[doclen] = '\0';
			break;
		case IMSG_CTL_END:
			if (out != NULL && (*out = json_loads(doc != NULL ?
			    doc : "{}", 0, &jerr)) == NULL)
				errx(CTL_EXIT_USAGE, "bad JSON from factoryd: "
				    "%s", ctl_vis(jerr.text));
			ret = 0;
			break;
		case IMSG_CTL_FAIL:
			if (n == 0 || n > reasonlen || imsg_get_strbuf(&imsg,
			    reason, reasonlen) == -1)
				strlcpy(reason, "refused", reasonlen);
			ret = 1;
			break;
		default:
			errx(CTL_EXIT_USAGE, "unexpected answer %u",
			    imsg_get_type(&imsg));
		}
		imsg_free(&imsg);
	}
	free(doc);
	return (ret);
}

static void
shell_winsize(struct ctl_shell_tty *t)
{
	struct winsize	 ws;

	t->rows = 24;
	t->cols = 80;
	if ((ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 ||
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) && ws.ws_row > 0 &&
	    ws.ws_col > 0 && ws.ws_row <= CTL_SHELL_DIMMAX &&
	    ws.ws_col <= CTL_SHELL_DIMMAX) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	}
}

/* TERM as the daemon accepts it, or "dumb". */
static void
shell_term(struct ctl_shell_tty *t)
{
	const char	*s = getenv("TERM");
	size_t		 n;

	strlcpy(t->term, "dumb", sizeof(t->term));
	if (!t->interactive || s == NULL || (n = strlen(s)) == 0 ||
	    n >= sizeof(t->term) || strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != n)
		return;
	strlcpy(t->term, s, sizeof(t->term));
}

static void
shell_write_all(int fd, const unsigned char *p, size_t n)
{
	ssize_t	 w;

	/* A signal that ends us ends a slow terminal's wait too. */
	while (n > 0 && sh_signal == 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return;		/* our stdout is gone: drop it */
		}
		p += w;
		n -= w;
	}
}

struct shell_io {
	int		 master;	/* the session's terminal; -1: ended */
	unsigned char	 pend[CTL_SHELL_CHUNK];	/* input for it */
	size_t		 npend, off;
	int		 ineof;
	int		 lastnl;	/* the last input byte was '\n' */
	int		 interactive;
};

/*
 * What the session wrote, to our stdout: 1 if some was, -1 if none is
 * there now, 0 once it has all been read (every slave closed).
 */
static int
shell_output(struct shell_io *io)
{
	unsigned char	 buf[CTL_SHELL_CHUNK];
	ssize_t		 n;

	while ((n = read(io->master, buf, sizeof(buf))) == -1 &&
	    errno == EINTR && sh_signal == 0)
		;
	if (n == -1 && errno == EAGAIN)
		return (-1);
	if (n <= 0)
		return (0);
	shell_write_all(STDOUT_FILENO, buf, n);
	return (1);
}

/* Write what is pending to the terminal, as much as it takes. */
static void
shell_flush(struct shell_io *io)
{
	ssize_t	 n;

	if (io->npend == 0)
		return;
	if ((n = write(io->master, io->pend + io->off, io->npend - io->off)) ==
	    -1) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		io->npend = io->off = 0;	/* the session is over */
		io->ineof = 1;
		return;
	}
	if ((io->off += n) == io->npend)
		io->npend = io->off = 0;
}

static void
shell_stdin(struct shell_io *io)
{
	ssize_t	 n;

	n = read(STDIN_FILENO, io->pend, sizeof(io->pend));
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		/*
		 * Without a terminal, our input ended; with one, it hung
		 * up.  A partial line needs one ^D to end it, then one for
		 * the end of file.
		 */
		io->ineof = 1;
		memset(io->pend, '\004', 2);
		io->npend = io->lastnl ? 1 : 2;
		io->lastnl = 1;
		return;
	}
	io->npend = n;
	io->lastnl = io->pend[n - 1] == '\n';
}

/* Our window's size, now, is the session's (SIGWINCH follows there). */
static void
shell_resize(struct shell_io *io)
{
	struct ctl_shell_tty	 t;
	struct winsize		 ws;

	sh_winch = 0;
	shell_winsize(&t);
	memset(&ws, 0, sizeof(ws));
	ws.ws_row = t.rows;
	ws.ws_col = t.cols;
	(void)ioctl(io->master, TIOCSWINSZ, &ws);
}

/*
 * The session: the terminal from factoryd once the command runs (or a
 * refusal), then relay until factoryd's answer on the control socket
 * (the status), then what is left on the terminal, bounded: the
 * session's processes are all gone by then, but not every holder of
 * its slave need be.
 */
static int
shell_session(struct imsgbuf *ibuf, struct shell_io *io, json_t **o,
    char *reason, size_t reasonlen)
{
	struct pollfd	 pfd[3];
	size_t		 drained;
	int		 r, started = 0;

	for (;;) {
		if (sh_signal != 0)
			return (-1);
		/* The status may have come with the terminal, read at once. */
		if (started && (r = shell_answer(ibuf, o, NULL, 1, reason,
		    reasonlen)) != -2)
			goto end;
		if (sh_winch && io->interactive && io->master != -1)
			shell_resize(io);
		pfd[0].fd = io->npend == 0 && !io->ineof && io->master != -1 ?
		    STDIN_FILENO : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = io->master;
		pfd[1].events = POLLIN | (io->npend > 0 ? POLLOUT : 0);
		pfd[2].fd = ibuf->fd;
		pfd[2].events = POLLIN;
		if (poll(pfd, 3, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(CTL_EXIT_USAGE, "poll");
		}
		if ((pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    shell_output(io) == 0) {
			/* The command ended: nothing more goes in. */
			close(io->master);
			io->master = -1;
			io->npend = io->off = 0;
		}
		if (io->master != -1 && (pfd[1].revents & POLLOUT))
			shell_flush(io);
		if (io->master != -1 &&
		    (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			shell_stdin(io);
			shell_flush(io);
		}
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !started) {
			r = shell_answer(ibuf, o, &io->master, 0, reason,
			    reasonlen);
			if (io->master == -1)
				return (r);
			started = 1;
			sh_winch = 1;	/* a change while it started */
		} else if (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = shell_answer(ibuf, o, NULL, 0, reason, reasonlen);
			goto end;
		}
	}
 end:
	/*
	 * The last output, before the status: at most CTL_SHELL_DRAIN
	 * bytes, as a slave the session handed out (to the agent, say)
	 * can write for ever after the session's end.
	 */
	for (drained = 0; io->master != -1 && drained < CTL_SHELL_DRAIN &&
	    sh_signal == 0 && shell_output(io) == 1;
	    drained += CTL_SHELL_CHUNK)
		;
	return (r);
}

int
cmd_shell(int argc, char *argv[])
{
	struct imsgbuf		 ibuf;
	struct ctl_shell_tty	 tty;
	struct shell_io		 io;
	json_t			*o = NULL;
	char			*req, reason[1024];
	size_t			 len, off;
	int			 i, s, first, status, r;

	if (argc < 2 || (argc > 2 && strcmp(argv[2], "--") != 0) ||
	    argc == 3)
		ctl_usage("shell");
	first = argc > 3 ? 3 : argc;
	len = strlen(argv[1]) + 1;
	for (i = first; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > FACTORY_MAXIMSG - 64)
		errx(CTL_EXIT_USAGE, "command too long");
	if ((req = malloc(len)) == NULL)
		err(CTL_EXIT_USAGE, NULL);
	off = strlcpy(req, argv[1], len) + 1;
	for (i = first; i < argc; i++)
		off += strlcpy(req + off, argv[i], len - off) + 1;

	s = ctl_connect(0);
	if (imsgbuf_init(&ibuf, s) == -1 ||
	    imsgbuf_set_maxsize(&ibuf, FACTORY_MAXIMSG) == -1)
		err(CTL_EXIT_USAGE, "imsgbuf_init");
	imsgbuf_allow_fdpass(&ibuf);	/* the terminal, and only that */
	if (imsg_compose(&ibuf, IMSG_CTL_SHELL, 0, 0, -1, req, len) == -1 ||
	    imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send request");
	free(req);
	if (shell_answer(&ibuf, NULL, NULL, 0, reason, sizeof(reason)) != 0)
		goto refused;

	memset(&tty, 0, sizeof(tty));
	memset(&io, 0, sizeof(io));
	io.master = -1;
	io.lastnl = 1;
	tty.interactive = io.interactive = isatty(STDIN_FILENO);
	shell_winsize(&tty);
	shell_term(&tty);
	if (imsg_compose(&ibuf, IMSG_CTL_SHELL_FD, 0, 0, -1, &tty,
	    sizeof(tty)) == -1 || imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send the terminal's description");
	shell_signals();
	if (io.interactive) {
		atexit(shell_restore);
		shell_rawmode();
	}
	r = shell_session(&ibuf, &io, &o, reason, sizeof(reason));
	shell_restore();
	if (r == -1) {
		/* Our connection closing ends the session, whole. */
		imsgbuf_clear(&ibuf);
		close(s);
		signal(sh_signal, SIG_DFL);
		raise(sh_signal);
		return (128 + sh_signal);
	}
	if (r != 0)
		goto refused;
	status = (int)json_integer_value(json_object_get(o, "status"));
	json_decref(o);
	imsgbuf_clear(&ibuf);
	close(s);
	return (status);
 refused:
	shell_restore();
	fprintf(stderr, "factoryctl: %s\n", ctl_vis(reason));
	imsgbuf_clear(&ibuf);
	close(s);
	return (CTL_EXIT_REFUSED);
}
