/*
 * factoryctl shell: run a command (by default /bin/sh) inside a running
 * attempt's sandbox, on a terminal factoryd allocated.  No descriptor
 * of ours goes in: we pass factoryd one end of a socketpair, the relay
 * (ctlshell.h), and copy our stdin to it and what comes back to our
 * stdout.  On a terminal, ours is put in raw mode for the session and
 * restored on every way out (exit, error, signal).  Exits with the
 * command's exit status (128 + signal if it was killed).
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

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

/* One answer: OK (0), a JSON document in *out (0), or FAIL (1). */
static int
shell_answer(struct imsgbuf *ibuf, json_t **out, char *reason,
    size_t reasonlen)
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
	    ws.ws_col > 0 && ws.ws_row <= 4096 && ws.ws_col <= 4096) {
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

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return;		/* our stdout is gone: drop it */
		}
		p += w;
		n -= w;
	}
}

/* One packet from the relay: 1 data, 0 its end. */
static int
shell_relay_in(int rs, int flags)
{
	unsigned char	 pkt[1 + CTL_SHELL_CHUNK];
	ssize_t		 n;

	if ((n = recv(rs, pkt, sizeof(pkt), flags | MSG_TRUNC)) == -1) {
		if (errno == EINTR || errno == EAGAIN)
			return (1);
		return (0);
	}
	if (n == 0)
		return (0);
	if (n > (ssize_t)sizeof(pkt) || n < 2 || pkt[0] != CTL_SHELL_OUT)
		errx(CTL_EXIT_USAGE, "malformed relay packet from factoryd");
	shell_write_all(STDOUT_FILENO, pkt + 1, n - 1);
	return (1);
}

struct shell_io {
	int		 rs;		/* the relay */
	unsigned char	 pend[1 + CTL_SHELL_CHUNK];	/* a packet to send */
	size_t		 npend;
	int		 ineof;
	int		 interactive;
};

/* Send the pending packet if the relay takes it; -1 if it is gone. */
static int
shell_flush(struct shell_io *io)
{
	if (io->npend == 0)
		return (0);
	if (send(io->rs, io->pend, io->npend, MSG_DONTWAIT | MSG_NOSIGNAL) ==
	    -1)
		return (errno == EAGAIN || errno == EINTR ? 0 : -1);
	io->npend = 0;
	return (0);
}

static void
shell_stdin(struct shell_io *io)
{
	ssize_t	 n;

	n = read(STDIN_FILENO, io->pend + 1, CTL_SHELL_CHUNK);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		/* Without a terminal, our input ended; with one, it hung up. */
		io->ineof = 1;
		io->pend[0] = CTL_SHELL_EOF;
		io->npend = 1;
		return;
	}
	io->pend[0] = CTL_SHELL_IN;
	io->npend = n + 1;
}

static void
shell_send_winsize(struct shell_io *io)
{
	struct ctl_shell_tty	 t;
	unsigned char		 pkt[1 + 2 * sizeof(uint16_t)];

	sh_winch = 0;
	shell_winsize(&t);
	pkt[0] = CTL_SHELL_WINSZ;
	memcpy(pkt + 1, &t.rows, sizeof(t.rows));
	memcpy(pkt + 1 + sizeof(t.rows), &t.cols, sizeof(t.cols));
	(void)send(io->rs, pkt, sizeof(pkt), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * The session: relay until factoryd's answer on the control socket
 * (the status, or a refusal), then the relay's last packets.
 */
static int
shell_session(struct imsgbuf *ibuf, struct shell_io *io, json_t **o,
    char *reason, size_t reasonlen)
{
	struct pollfd	 pfd[3];
	int		 r, relay = 1;

	for (;;) {
		if (sh_signal != 0)
			return (-1);
		if (sh_winch && io->interactive)
			shell_send_winsize(io);
		pfd[0].fd = io->npend == 0 && !io->ineof ? STDIN_FILENO : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = relay ? io->rs : -1;
		pfd[1].events = POLLIN | (io->npend > 0 ? POLLOUT : 0);
		pfd[2].fd = ibuf->fd;
		pfd[2].events = POLLIN;
		if (poll(pfd, 3, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(CTL_EXIT_USAGE, "poll");
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))
			relay = shell_relay_in(io->rs, MSG_DONTWAIT);
		if (relay && (pfd[1].revents & POLLOUT) && shell_flush(io) ==
		    -1)
			relay = 0;
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			shell_stdin(io);
			if (shell_flush(io) == -1)
				relay = 0;
		}
		if (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = shell_answer(ibuf, o, reason, reasonlen);
			/* The last output went out before the status. */
			while (relay && shell_relay_in(io->rs, 0))
				;
			return (r);
		}
	}
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
	int			 i, s, sv[2], first, status, r;

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
	if (imsg_compose(&ibuf, IMSG_CTL_SHELL, 0, 0, -1, req, len) == -1 ||
	    imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send request");
	free(req);
	if (shell_answer(&ibuf, NULL, reason, sizeof(reason)) != 0)
		goto refused;

	memset(&tty, 0, sizeof(tty));
	memset(&io, 0, sizeof(io));
	tty.interactive = io.interactive = isatty(STDIN_FILENO);
	shell_winsize(&tty);
	shell_term(&tty);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		err(CTL_EXIT_USAGE, "socketpair");
	io.rs = sv[0];
	/* The imsg layer closes sv[1] once it is sent. */
	if (imsg_compose(&ibuf, IMSG_CTL_SHELL_FD, 0, 0, sv[1], &tty,
	    sizeof(tty)) == -1 || imsgbuf_flush(&ibuf) == -1)
		err(CTL_EXIT_USAGE, "send the relay");
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
