/*
 * A walk of a stored or staged tree (imgtree.c) runs in a process of
 * its own: hashing an image of hundreds of megabytes must not hold the
 * event loop, and root has no threads.  It is forked, not an exec'd
 * helper: it needs root's own power over the tree (the store's files
 * are given to 0:0 as they are passed), and what it is given are the
 * descriptors root opened already (the tree, the entry lists), which
 * it keeps on 3 to 5, closing every other.  Its one answer is a fixed
 * struct image_walk_reply on a pipe, checked here field by field
 * before done() sees it; the loop goes on when the pipe has ended and
 * the process was reaped.  What it reads was written by an agent or an
 * image, so it is confined (image_walk_confine) and has a deadline:
 * past it, it is killed and its import or verify fails by that name.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factoryd.h"
#include "image.h"
#include "imagewalk.h"
#include "imagemsg.h"
#include "imgtree.h"
#include "journal.h"
#include "log.h"
#include "pledge.h"

static struct image_walk	*image_walks[IMAGE_WALKS_MAX];

/*
 * The walk's confinement, after its descriptors are in place: of
 * root's capabilities only CAP_DAC_READ_SEARCH (the importer's files,
 * of any mode, and the store's) and, for an import, CAP_CHOWN (each
 * entry given to 0:0); its uid stays 0.  Landlock: the tree on 3
 * (through /proc, so no path is named again), read-only, nothing else;
 * then no_new_privs and pledge(2)'s seccomp filter: no socket, no exec.
 */
static int
image_walk_confine(int chown)
{
	int	 failed;

	if (caps_keep(1U << CAP_DAC_READ_SEARCH |
	    (chown ? 1U << CAP_CHOWN : 0), &failed) == -1)
		return (-1);
	/* rpath: the tree; chown: its entries, given to root. */
	if (unveil("/proc/self/fd/3", "r") == -1 ||
	    pledge(chown ? "stdio rpath chown" : "stdio rpath", NULL) == -1)
		return (-1);
	return (0);
}

/*
 * Test builds, regress/imgsafe: a walk that tries what it may not, and
 * says so in the log, or one that holds until it is killed.
 */
static void
image_walk_faults(void)
{
	int	 fd;

	if (faultpoint("image:walk-escape")) {
		fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
		log_warnx("image walk escape: open /etc/passwd: %s",
		    fd == -1 ? strerror(errno) : "opened");
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		log_warnx("image walk escape: socket: %s",
		    fd == -1 ? strerror(errno) : "made");
	}
	while (faultpoint("image:walk-hold"))
		(void)poll(NULL, 0, -1);
}

/* In the walk's process: the walk, its answer, _exit. */
static __dead void
image_walk_child(struct image_walk *w, int pipefd, pid_t parent)
{
	struct image_walk_reply	 r;
	FILE			*out = NULL, *canon = NULL;
	sigset_t		 set;
	int			 fds[4], i, sig;

	for (sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigemptyset(&set);
	if (sigprocmask(SIG_SETMASK, &set, NULL) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent)
		_exit(1);
	setproctitle("image walk");
	/* The receipts' signing key and the gateway tokens are the
	 * parent's: not in this copy. */
	EVP_PKEY_free(env->receipt_key);
	env->receipt_key = NULL;
	gateway_forget();
	/* The tree on 3, the lists on 4 and 5, the pipe on 6; no other. */
	fds[0] = w->rootfd;
	fds[1] = w->out != NULL ? fileno(w->out) : -1;
	fds[2] = w->canon != NULL ? fileno(w->canon) : -1;
	fds[3] = pipefd;
	for (i = 0; i < 4; i++)
		if (fds[i] != -1 && (fds[i] = fcntl(fds[i], F_DUPFD, 10)) ==
		    -1)
			_exit(1);
	for (i = 0; i < 4; i++)
		if (fds[i] == -1)
			(void)close(3 + i);
		else if (dup2(fds[i], 3 + i) == -1)
			_exit(1);
	closefrom(7);
	if ((w->out != NULL && (out = fdopen(4, "w")) == NULL) ||
	    (w->canon != NULL && (canon = fdopen(5, "r")) == NULL))
		_exit(1);
	memset(&r, 0, sizeof(r));
	r.magic = IMAGE_WALK_MAGIC;
	if (image_walk_confine(w->chown) == -1) {
		snprintf(r.err, sizeof(r.err), "walk: confinement: %s",
		    strerror(errno));
		r.rc = -1;
		goto reply;
	}
	image_walk_faults();

	/* Test builds, regress/image: a walk slow enough to be seen. */
	if (faultpoint("image:slow-walk"))
		(void)poll(NULL, 0, 3000);
	r.rc = imgwalk_bounded(3, w->owner, w->chown, out, canon,
	    w->bounded ? &w->lim : NULL, &r.res, r.err, sizeof(r.err));
	if (r.rc == 0 && out != NULL && fflush(out) == EOF) {
		snprintf(r.err, sizeof(r.err), "entry list: %s",
		    strerror(errno));
		r.rc = -1;
	}
 reply:
	r.err[sizeof(r.err) - 1] = '\0';
	/* One write below PIPE_BUF: whole or not at all. */
	if (write(6, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(1);
	_exit(0);
}

/*
 * The walk's answer, believed only in form: exactly one reply from a
 * process that exited 0, its strings NUL-terminated, a digest of 64
 * lower-case hex digits, counts within an import's bounds.
 */
static void
image_walk_check(struct image_walk *w)
{
	struct image_walk_reply	*r = &w->rep;

	if (w->late) {
		w->rc = -1;
		snprintf(w->err, sizeof(w->err), "walk process (pid %d) "
		    "killed at its deadline of %lld s", (int)w->pid, w->secs);
		return;
	}
	if (w->bad || w->got != sizeof(*r) || r->magic != IMAGE_WALK_MAGIC ||
	    (r->rc != 0 && r->rc != -1) ||
	    memchr(r->err, '\0', sizeof(r->err)) == NULL || !esc_valid(r->err) ||
	    memchr(r->res.hex, '\0', sizeof(r->res.hex)) == NULL ||
	    (r->rc == 0 && (!hex_valid(r->res.hex, IMAGE_HEXLEN) ||
	    r->res.files > r->res.entries || (w->bounded &&
	    (r->res.entries > w->lim.max_entries ||
	    r->res.bytes > w->lim.max_bytes)))) ||
	    !WIFEXITED(w->status) || WEXITSTATUS(w->status) != 0) {
		w->rc = -1;
		snprintf(w->err, sizeof(w->err), "walk process (pid %d) %s, "
		    "%s %d", (int)w->pid, w->got == 0 ? "ended without an "
		    "answer" : "answered out of form", WIFSIGNALED(w->status) ?
		    "killed by signal" : "exit status",
		    WIFSIGNALED(w->status) ? WTERMSIG(w->status) :
		    WEXITSTATUS(w->status));
		return;
	}
	w->rc = r->rc;
	w->res = r->res;
	strlcpy(w->err, r->err, sizeof(w->err));
}

static void
image_walk_end(struct image_walk *w)
{
	int	 i;

	for (i = 0; i < IMAGE_WALKS_MAX; i++)
		if (image_walks[i] == w)
			image_walks[i] = NULL;
	evtimer_del(&w->timer);
	image_walk_check(w);
	w->done(w);
}

static void
image_walk_read(int fd, short event, void *arg)
{
	struct image_walk	*w = arg;
	char			 extra;
	ssize_t			 n;

	if (w->got < sizeof(w->rep))
		n = read(fd, (char *)&w->rep + w->got, sizeof(w->rep) -
		    w->got);
	else if ((n = read(fd, &extra, 1)) > 0)
		w->bad = 1;
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && !w->bad) {
		w->got += n;
		return;
	}
	/* The end, an error, or too much: no more is read. */
	event_del(&w->ev);
	close(w->fd);
	w->fd = -1;
	w->eof = 1;
	if (w->bad && !w->reaped)
		(void)kill(w->pid, SIGKILL);
	if (w->reaped)
		image_walk_end(w);
}

/* SIGCHLD for a pid: 1 if it was a walk's. */
int
image_walk_reap(pid_t pid, int status)
{
	struct image_walk	*w;
	int			 i;

	for (i = 0; i < IMAGE_WALKS_MAX; i++) {
		if ((w = image_walks[i]) == NULL || w->pid != pid ||
		    w->reaped)
			continue;
		w->reaped = 1;
		w->status = status;
		if (w->eof)
			image_walk_end(w);
		return (1);
	}
	return (0);
}

/* The deadline passed: killed, and ended when reaped, by that name. */
static void
image_walk_late(int fd, short event, void *arg)
{
	struct image_walk	*w = arg;

	if (w->reaped)
		return;		/* it ended in time; its pid may be reused */
	log_warnx("image walk (pid %d): past its deadline of %lld s, killed",
	    (int)w->pid, w->secs);
	w->late = 1;
	(void)kill(w->pid, SIGKILL);
}

/*
 * Seconds a walk may take: enough for the largest tree an import may
 * leave, hashed at IMAGE_WALK_RATE (a slow disk).  Test builds take
 * FACTORY_TEST_IMAGE_WALK_S instead.
 */
static long long
image_walk_deadline(void)
{
#ifdef FACTORY_TESTBUILD
	const char	*s = getenv("FACTORY_TEST_IMAGE_WALK_S");
	const char	*errstr;
	long long	 n;

	if (s != NULL) {
		n = strtonum(s, 1, 86400, &errstr);
		if (errstr == NULL)
			return (n);
	}
#endif
	return (IMAGE_WALK_MIN_S +
	    (long long)(env->conf->image_max_size / IMAGE_WALK_RATE));
}

/* 0 and done() later, or -1 (nothing started, w is the caller's). */
int
image_walk_start(struct image_walk *w)
{
	struct timeval	 tv;
	pid_t		 parent = getpid();
	sigset_t	 all, old;
	int		 p[2], i;

	for (i = 0; i < IMAGE_WALKS_MAX; i++)
		if (image_walks[i] == NULL)
			break;
	if (i == IMAGE_WALKS_MAX) {
		errno = EBUSY;
		return (-1);
	}
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1)
		return (-1);
	/* Nothing buffered may be written twice, by both processes. */
	if (w->out != NULL)
		(void)fflush(w->out);
	/*
	 * No signal may reach root's handlers in the child before it sets
	 * them back to default: they write to the socket root shares.
	 */
	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, &old) == -1) {
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if ((w->pid = fork()) == -1) {
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		close(p[0]);
		close(p[1]);
		return (-1);
	}
	if (w->pid == 0)
		image_walk_child(w, p[1], parent);
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
	w->fd = p[0];
	w->got = w->bad = w->eof = w->reaped = w->late = 0;
	image_walks[i] = w;
	event_set(&w->ev, w->fd, EV_READ | EV_PERSIST, image_walk_read, w);
	event_add(&w->ev, NULL);
	w->secs = image_walk_deadline();
	tv.tv_sec = w->secs;
	tv.tv_usec = 0;
	evtimer_set(&w->timer, image_walk_late, w);
	evtimer_add(&w->timer, &tv);
	log_info("image walk: pid %d, deadline %lld s", (int)w->pid,
	    w->secs);
	return (0);
}
