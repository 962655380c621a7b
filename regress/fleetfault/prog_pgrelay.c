/*
 * A relay between one factoryd host and its PostgreSQL, for a test to
 * cut and heal: a network partition on a unix socket.
 *
 *	prog_pgrelay LISTENDIR TARGETDIR
 *
 * It listens on LISTENDIR/.s.PGSQL.5432 (mode 0777: the clients run as
 * an unprivileged uid), so that conninfo host=LISTENDIR reaches it, and
 * relays every connection byte for byte, both ways, to a connection of
 * its own to TARGETDIR/.s.PGSQL.5432.  Once listening it prints its pid
 * and then "ready", one a line.
 *
 * SIGUSR1 cuts: from then on nothing is relayed on the pairs there
 * are, which stay open with whatever was sent sitting unread, as
 * packets are dropped on a partitioned network; a connection accepted
 * meanwhile is held open and never answered nor carried on (closed
 * only when its client goes, which nothing across a partition would
 * see).  SIGUSR2 heals: every pair and held connection of the cut is
 * closed, as a partition that outlived the sessions across it, and new
 * connections are relayed again.  It prints "cut" or "healed" when it
 * has acted on the signal, which a test waits for.  SIGTERM or SIGINT,
 * or its parent's death, ends it: everything closed, the socket
 * unlinked.
 *
 * One poll(2) loop, every socket nonblocking, each direction of a pair
 * a bounded buffer: a side is not read while its buffer toward the
 * other is full.  At most MAXPAIRS connections: with all in use, one
 * more is closed as soon as accepted or, while cut, left waiting in
 * the backlog.  An error on a pair closes that pair; an error on the
 * listener ends the relay.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SOCKNAME	".s.PGSQL.5432"
#define MAXPAIRS	128
#define BUFSIZE		(64 * 1024)

struct dir {
	char		*data;
	size_t		 off, len;	/* bytes at data + off not yet sent */
	int		 eof;		/* the reading side said no more */
};

/*
 * Side 0 is the client, side 1 the server; dir[i] holds what side i
 * sent and the other side has not yet been given.
 */
struct pair {
	int		 used;
	int		 fd[2];
	struct dir	 dir[2];
	int		 hup[2];	/* side i's peer is gone */
	int		 connecting;	/* fd[1] not yet connected */
	int		 frozen;	/* existed during a cut */
	int		 held;		/* accepted during a cut: fd[1] -1 */
};

static struct pair		 pairs[MAXPAIRS];
static struct sockaddr_un	 listen_sun, target_sun;
static int			 sigpipe[2] = { -1, -1 };
static int			 cut;
static int			 listening;

/* The listener's end, or stdout's: the socket goes with the relay. */
static void
fatal(const char *what)
{
	warn("%s: %s", listen_sun.sun_path, what);
	if (listening)
		unlink(listen_sun.sun_path);
	exit(1);
}

static void
say(const char *s)
{
	if (printf("%s\n", s) < 0 || fflush(stdout) == EOF)
		fatal("stdout");
}

static void
onsignal(int sig)
{
	int		 save = errno;
	unsigned char	 c = sig;

	/* A full pipe drops the byte: SIGTERM is then already there. */
	if (write(sigpipe[1], &c, 1) == -1) {
		/* nothing to be done in a handler */
	}
	errno = save;
}

static void
sockpath(struct sockaddr_un *sun, const char *dir)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if ((size_t)snprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s",
	    dir, SOCKNAME) >= sizeof(sun->sun_path))
		errx(1, "%s/%s: path too long for a socket", dir, SOCKNAME);
}

static int
listener(void)
{
	struct stat	 st;
	int		 fd;

	if (lstat(listen_sun.sun_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			errx(1, "%s: exists and is no socket",
			    listen_sun.sun_path);
		if (unlink(listen_sun.sun_path) == -1)
			err(1, "unlink %s", listen_sun.sun_path);
	} else if (errno != ENOENT)
		err(1, "%s", listen_sun.sun_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		err(1, "socket");
	if (bind(fd, (struct sockaddr *)&listen_sun, sizeof(listen_sun)) == -1)
		err(1, "bind %s", listen_sun.sun_path);
	listening = 1;
	if (chmod(listen_sun.sun_path, 0777) == -1)
		fatal("chmod");
	if (listen(fd, MAXPAIRS) == -1)
		fatal("listen");
	return (fd);
}

static void
pair_close(struct pair *p)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		if (p->fd[i] != -1)
			close(p->fd[i]);
		free(p->dir[i].data);
	}
	memset(p, 0, sizeof(*p));
	p->fd[0] = p->fd[1] = -1;
}

static struct pair *
pair_free(void)
{
	int	 i;

	for (i = 0; i < MAXPAIRS; i++)
		if (!pairs[i].used)
			return (&pairs[i]);
	return (NULL);
}

/* A new client, relayed onward, or held while cut. */
static void
pair_open(struct pair *p, int cfd)
{
	int	 sfd;

	memset(p, 0, sizeof(*p));
	p->used = 1;
	p->fd[0] = cfd;
	p->fd[1] = -1;
	if (cut) {
		p->held = p->frozen = 1;
		return;
	}
	if ((p->dir[0].data = malloc(BUFSIZE)) == NULL ||
	    (p->dir[1].data = malloc(BUFSIZE)) == NULL) {
		warn("malloc");
		pair_close(p);
		return;
	}
	if ((sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		warn("socket");
		pair_close(p);
		return;
	}
	p->fd[1] = sfd;
	if (connect(sfd, (struct sockaddr *)&target_sun,
	    sizeof(target_sun)) == -1) {
		if (errno != EINPROGRESS) {
			warn("connect %s", target_sun.sun_path);
			pair_close(p);
			return;
		}
		p->connecting = 1;
	}
}

static void
accept_one(int lfd)
{
	struct pair	*p;
	int		 fd;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC))
	    == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED)
			return;
		fatal("accept");
	}
	if ((p = pair_free()) == NULL) {
		/* Refused: more pairs than a test has any use for. */
		close(fd);
		return;
	}
	pair_open(p, fd);
}

/* What side i wants of poll: -1 for nothing at all. */
static short
pair_events(struct pair *p, int i)
{
	short	 ev = 0;

	if (p->fd[i] == -1 || p->frozen)
		return (-1);
	if (i == 1 && p->connecting)
		return (POLLOUT);
	if (!p->dir[i].eof && p->dir[i].len < BUFSIZE)
		ev |= POLLIN;
	if (p->dir[!i].len > 0 && !(i == 1 && p->connecting))
		ev |= POLLOUT;
	/* A side whose peer is gone and that has nothing to say: leave it. */
	if (ev == 0 && p->hup[i])
		return (-1);
	return (ev);
}

/* Side i into dir[i]: -1 closes the pair. */
static int
pair_read(struct pair *p, int i)
{
	struct dir	*d = &p->dir[i];
	ssize_t		 n;

	if (d->eof)
		return (0);
	if (d->off > 0 && d->off + d->len == BUFSIZE) {
		memmove(d->data, d->data + d->off, d->len);
		d->off = 0;
	}
	if (d->off + d->len == BUFSIZE)
		return (0);
	n = read(p->fd[i], d->data + d->off + d->len,
	    BUFSIZE - d->off - d->len);
	if (n == -1)
		return (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR ? 0 : -1);
	if (n == 0)
		d->eof = 1;
	d->len += n;
	return (0);
}

/* dir[!i] to side i: -1 closes the pair. */
static int
pair_write(struct pair *p, int i)
{
	struct dir	*d = &p->dir[!i];
	ssize_t		 n;

	if (d->len == 0 || (i == 1 && p->connecting))
		return (0);
	n = send(p->fd[i], d->data + d->off, d->len, MSG_NOSIGNAL);
	if (n == -1)
		return (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR ? 0 : -1);
	d->off += n;
	d->len -= n;
	if (d->len == 0)
		d->off = 0;
	return (0);
}

static void
pair_run(struct pair *p, const short revents[2])
{
	socklen_t	 sl;
	int		 i, e;

	if (p->connecting && revents[1] != 0) {
		sl = sizeof(e);
		if (getsockopt(p->fd[1], SOL_SOCKET, SO_ERROR, &e, &sl) == -1 ||
		    e != 0) {
			pair_close(p);
			return;
		}
		p->connecting = 0;
	}
	for (i = 0; i < 2; i++) {
		if (revents[i] & POLLERR) {
			pair_close(p);
			return;
		}
		if (revents[i] & POLLHUP)
			p->hup[i] = 1;
		if ((revents[i] & (POLLIN | POLLHUP)) && pair_read(p, i) == -1) {
			pair_close(p);
			return;
		}
	}
	/* Write what there is now, not one poll later. */
	for (i = 0; i < 2; i++)
		if (pair_write(p, i) == -1) {
			pair_close(p);
			return;
		}
	/* A side that said no more, and all it said delivered: done. */
	for (i = 0; i < 2; i++)
		if (p->dir[i].eof && p->dir[i].len == 0) {
			pair_close(p);
			return;
		}
}

/* A held connection only waits for its client to go away. */
static void
held_run(struct pair *p, short revents)
{
	if (revents & (POLLRDHUP | POLLHUP | POLLERR))
		pair_close(p);
}

/* Every pair there is goes silent; none is closed. */
static void
do_cut(void)
{
	int	 i;

	cut = 1;
	for (i = 0; i < MAXPAIRS; i++)
		if (pairs[i].used)
			pairs[i].frozen = 1;
	say("cut");
}

/* What the cut saw is closed; a heal without a cut closes nothing. */
static void
do_heal(void)
{
	int	 i;

	for (i = 0; i < MAXPAIRS; i++)
		if (pairs[i].used && pairs[i].frozen)
			pair_close(&pairs[i]);
	cut = 0;
	say("healed");
}

static void
shutdown_all(int lfd)
{
	int	 i;

	for (i = 0; i < MAXPAIRS; i++)
		if (pairs[i].used)
			pair_close(&pairs[i]);
	close(lfd);
	if (unlink(listen_sun.sun_path) == -1)
		warn("unlink %s", listen_sun.sun_path);
	exit(0);
}

/* Signals, in the order they came; 1 if the relay is to end. */
static int
signals(void)
{
	unsigned char	 buf[64];
	ssize_t		 n, k;

	if ((n = read(sigpipe[0], buf, sizeof(buf))) == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return (0);
		fatal("signal pipe");
	}
	for (k = 0; k < n; k++) {
		switch (buf[k]) {
		case SIGUSR1:
			do_cut();
			break;
		case SIGUSR2:
			do_heal();
			break;
		case SIGTERM:
		case SIGINT:
			return (1);
		}
	}
	return (0);
}

int
main(int argc, char *argv[])
{
	struct pollfd		 pfd[2 + 2 * MAXPAIRS];
	struct sigaction	 sa;
	struct pair		*p;
	short			 rev[2], ev;
	pid_t			 ppid;
	int			 lfd, i, j, full, n;
	int			 sigs[] = { SIGUSR1, SIGUSR2, SIGTERM, SIGINT };

	if (argc != 3) {
		fprintf(stderr, "usage: prog_pgrelay LISTENDIR TARGETDIR\n");
		return (1);
	}
	sockpath(&listen_sun, argv[1]);
	sockpath(&target_sun, argv[2]);
	for (i = 0; i < MAXPAIRS; i++)
		pairs[i].fd[0] = pairs[i].fd[1] = -1;

	if (pipe2(sigpipe, O_NONBLOCK | O_CLOEXEC) == -1)
		err(1, "pipe2");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = onsignal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
		if (sigaction(sigs[i], &sa, NULL) == -1)
			err(1, "sigaction");
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) == -1)
		err(1, "sigaction");

	/* The parent gone before the prctl took: end as if told to. */
	ppid = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1)
		err(1, "prctl");
	if (getppid() != ppid)
		return (0);

	lfd = listener();
	if (printf("%ld\nready\n", (long)getpid()) < 0 ||
	    fflush(stdout) == EOF)
		fatal("stdout");

	for (;;) {
		full = pair_free() == NULL;
		pfd[0].fd = sigpipe[0];
		pfd[0].events = POLLIN;
		/*
		 * Full and cut, the next ones wait in the backlog, silent;
		 * full and relaying, they are accepted and closed at once.
		 */
		pfd[1].fd = full && cut ? -1 : lfd;
		pfd[1].events = POLLIN;
		for (i = 0; i < MAXPAIRS; i++) {
			p = &pairs[i];
			for (j = 0; j < 2; j++) {
				pfd[2 + 2 * i + j].fd = -1;
				pfd[2 + 2 * i + j].events = 0;
				pfd[2 + 2 * i + j].revents = 0;
			}
			if (!p->used)
				continue;
			if (p->held) {
				pfd[2 + 2 * i].fd = p->fd[0];
				pfd[2 + 2 * i].events = POLLRDHUP;
				continue;
			}
			for (j = 0; j < 2; j++) {
				if ((ev = pair_events(p, j)) == -1)
					continue;
				pfd[2 + 2 * i + j].fd = p->fd[j];
				pfd[2 + 2 * i + j].events = ev;
			}
		}
		if ((n = poll(pfd, 2 + 2 * MAXPAIRS, -1)) == -1) {
			if (errno == EINTR)
				continue;
			fatal("poll");
		}
		if (pfd[0].revents != 0 && signals())
			shutdown_all(lfd);
		if (pfd[1].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			errno = EIO;
			fatal("listener");
		}
		for (i = 0; i < MAXPAIRS; i++) {
			p = &pairs[i];
			if (!p->used)
				continue;
			rev[0] = pfd[2 + 2 * i].revents;
			rev[1] = pfd[2 + 2 * i + 1].revents;
			/* Signals just now may have cut or closed it. */
			if (p->held)
				held_run(p, rev[0]);
			else if (!p->frozen && (rev[0] != 0 || rev[1] != 0))
				pair_run(p, rev);
		}
		if (pfd[1].revents & POLLIN)
			accept_one(lfd);
	}
}
