/*
 * Root's side of factory-fswalk (fswalk/): trees that an agent, a
 * setup or an image wrote are walked, hashed and sealed in a process
 * exec'd for that one job, not in root's memory nor its loop.
 *
 * The binary is opened at start like the children's.  A job is
 * written whole into a pipe before the fork (grown to hold it, and
 * checked that it does); the process gets that pipe's reading end on fd 3, an
 * answer pipe on fd 4 and the job's descriptors from fd 5, no other.
 * Its answer is read as it comes, at most FSWALK_ANSWER_MAX bytes
 * (more kills it); done() runs once the pipe ended and the process was
 * reaped.  A deadline kills it.  Nothing here waits.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factoryd.h"
#include "fsjob.h"
#include "log.h"

static struct fsjob	*fsjobs[FSJOBS_MAX];
static pid_t		 fsjob_orphans[FSJOBS_MAX];	/* cancelled */
static int		 fsjob_bin = -1;	/* factory-fswalk, opened */

/* The binary, opened at start or at a reload; running jobs have theirs. */
void
fsjob_set_binary(int fd)
{
	if (fsjob_bin != -1)
		close(fsjob_bin);
	fsjob_bin = fd;
}

/*
 * In the child, until the exec: its descriptors in place, signals
 * back to default, death with the parent.  Above 10 first, so no
 * dup2 overwrites one still to be moved.
 */
static __dead void
fsjob_exec(int jobfd, int ansfd, const int *fds, int nfds, pid_t parent)
{
	char		*argv[] = { "factory-fswalk", NULL, NULL, NULL };
	char		*envp[] = { NULL, NULL };
	int		 mv[2 + FSWALK_NARGS + 1], i, n = 0, sig;
	sigset_t	 set;
#ifdef FACTORY_TESTBUILD
	static char	 crash[128];
	const char	*want = getenv(FACTORY_CRASH_ENV);

	if (want != NULL) {
		snprintf(crash, sizeof(crash), "%s=%s", FACTORY_CRASH_ENV,
		    want);
		envp[0] = crash;
	}
#endif
	for (sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigemptyset(&set);
	if (sigprocmask(SIG_SETMASK, &set, NULL) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent)
		_exit(127);
	mv[n++] = jobfd;
	mv[n++] = ansfd;
	for (i = 0; i < nfds; i++)
		mv[n++] = fds[i];
	mv[n++] = fsjob_bin;
	for (i = 0; i < n; i++)
		if (mv[i] != -1 && (mv[i] = fcntl(mv[i], F_DUPFD, 10)) == -1)
			_exit(127);
	for (i = 0; i < n; i++)
		if (mv[i] == -1)
			(void)close(FSWALK_FD_JOB + i);
		else if (dup2(mv[i], FSWALK_FD_JOB + i) == -1)
			_exit(127);
	/* The binary's own descriptor goes at the exec. */
	if (fcntl(FSWALK_FD_JOB + n - 1, F_SETFD, FD_CLOEXEC) == -1)
		_exit(127);
	closefrom(FSWALK_FD_JOB + n);
	i = 1;
	if (env->debug)
		argv[i++] = "-d";
	if (env->verbose)
		argv[i++] = "-v";
	syscall(SYS_execveat, FSWALK_FD_JOB + n - 1, "", argv, envp,
	    AT_EMPTY_PATH);
	dprintf(2, "factory-fswalk: exec: %s\n", strerror(errno));
	_exit(127);
}

static void
fsjob_end(struct fsjob *j)
{
	int	 i;

	for (i = 0; i < FSJOBS_MAX; i++)
		if (fsjobs[i] == j)
			fsjobs[i] = NULL;
	evtimer_del(&j->timer);
	j->done(j);
}

static void
fsjob_read(int fd, short event, void *arg)
{
	struct fsjob	*j = arg;
	char		 extra;
	ssize_t		 n;

	if (j->got < sizeof(j->ans))
		n = read(fd, j->ans + j->got, sizeof(j->ans) - j->got);
	else if ((n = read(fd, &extra, 1)) > 0)
		j->bad = 1;
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && !j->bad) {
		j->got += n;
		return;
	}
	/* The end, an error, or too much: no more is read. */
	event_del(&j->ev);
	close(j->fd);
	j->fd = -1;
	j->eof = 1;
	if (j->bad && !j->reaped)
		(void)kill(j->pid, SIGKILL);
	if (j->reaped)
		fsjob_end(j);
}

/* 1 if a job started now would find no room. */
int
fsjob_busy(void)
{
	int	 i;

	for (i = 0; i < FSJOBS_MAX; i++)
		if (fsjobs[i] == NULL)
			return (0);
	return (1);
}

/*
 * j's process killed, j forgotten (its memory is the caller's again):
 * done() never runs, the pid is reaped when it comes.
 */
void
fsjob_cancel(struct fsjob *j)
{
	int	 i;

	for (i = 0; i < FSJOBS_MAX; i++)
		if (fsjobs[i] == j)
			fsjobs[i] = NULL;
	evtimer_del(&j->timer);
	if (j->fd != -1) {
		event_del(&j->ev);
		close(j->fd);
		j->fd = -1;
	}
	if (j->reaped)
		return;
	(void)kill(j->pid, SIGKILL);
	for (i = 0; i < FSJOBS_MAX; i++)
		if (fsjob_orphans[i] == 0) {
			fsjob_orphans[i] = j->pid;
			return;
		}
	log_warnx("%s (pid %d): killed, reaped by no one", j->what,
	    (int)j->pid);
}

int
fsjob_reap(pid_t pid, int status)
{
	struct fsjob	*j;
	int		 i;

	for (i = 0; i < FSJOBS_MAX; i++)
		if (fsjob_orphans[i] == pid) {
			fsjob_orphans[i] = 0;
			return (1);
		}

	for (i = 0; i < FSJOBS_MAX; i++) {
		if ((j = fsjobs[i]) == NULL || j->pid != pid || j->reaped)
			continue;
		j->reaped = 1;
		j->status = status;
		if (j->eof)
			fsjob_end(j);
		return (1);
	}
	return (0);
}

/* The deadline passed: killed, and ended when reaped, by that name. */
static void
fsjob_late(int fd, short event, void *arg)
{
	struct fsjob	*j = arg;

	if (j->reaped)
		return;		/* it ended in time; its pid may be reused */
	log_warnx("%s (pid %d): past its deadline of %lld s, killed",
	    j->what, (int)j->pid, j->secs);
	j->late = 1;
	(void)kill(j->pid, SIGKILL);
}

/*
 * Killed, its answer still awaited (the done callback comes): by its
 * pid only while not reaped, when that pid may be another process's.
 */
void
fsjob_kill(struct fsjob *j)
{
	if (!j->reaped)
		(void)kill(j->pid, SIGKILL);
}

int
fsjob_start(struct fsjob *j, struct ibuf *job, const int *fds, int nfds,
    long long secs)
{
	struct timeval	 tv;
	pid_t		 parent = getpid();
	sigset_t	 all, old;
	int		 jp[2], ap[2], i;

	if (fsjob_bin == -1 || nfds > FSWALK_NARGS ||
	    ibuf_size(job) > FSWALK_JOB_MAX) {
		errno = EINVAL;
		return (-1);
	}
	for (i = 0; i < FSJOBS_MAX; i++)
		if (fsjobs[i] == NULL)
			break;
	if (i == FSJOBS_MAX) {
		errno = EBUSY;
		return (-1);
	}
	if (pipe2(jp, O_CLOEXEC) == -1)
		return (-1);
	if (pipe2(ap, O_CLOEXEC | O_NONBLOCK) == -1) {
		close(jp[0]);
		close(jp[1]);
		return (-1);
	}
	/* The whole job, before the fork: the pipe made to hold it. */
	/*
	 * Grown, and checked: a pipe made over pipe-user-pages-soft has
	 * two pages, and a write past them would block root's loop.
	 */
	if ((ibuf_size(job) > 4096 && fcntl(jp[1], F_SETPIPE_SZ,
	    FSWALK_JOB_MAX) < (int)ibuf_size(job)) ||
	    write(jp[1], ibuf_data(job), ibuf_size(job)) !=
	    (ssize_t)ibuf_size(job))
		goto fail;
	close(jp[1]);
	jp[1] = -1;
	/*
	 * No signal may reach root's handlers in the child before it sets
	 * them back to default: they write to the socket root shares.
	 */
	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, &old) == -1)
		goto fail;
	if ((j->pid = fork()) == -1) {
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		goto fail;
	}
	if (j->pid == 0)
		fsjob_exec(jp[0], ap[1], fds, nfds, parent);
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	close(jp[0]);
	close(ap[1]);
	j->fd = ap[0];
	j->got = j->bad = j->eof = j->reaped = j->late = 0;
	fsjobs[i] = j;
	event_set(&j->ev, j->fd, EV_READ | EV_PERSIST, fsjob_read, j);
	event_add(&j->ev, NULL);
	j->secs = secs;
	tv.tv_sec = secs;
	tv.tv_usec = 0;
	evtimer_set(&j->timer, fsjob_late, j);
	if (secs > 0) {
		evtimer_add(&j->timer, &tv);
		log_info("%s: pid %d, deadline %lld s", j->what, (int)j->pid,
		    secs);
	} else
		log_debug("%s: pid %d", j->what, (int)j->pid);
	return (0);
 fail:
	i = errno;
	close(jp[0]);
	if (jp[1] != -1)
		close(jp[1]);
	close(ap[0]);
	close(ap[1]);
	errno = i;
	return (-1);
}

int
fsjob_answer(struct fsjob *j, uint32_t kind, struct fswalk_answer *a,
    char *err, size_t errlen)
{
	char	 why[256];

	if (j->late) {
		snprintf(err, errlen, "walk process (pid %d) killed at its "
		    "deadline of %lld s", (int)j->pid, j->secs);
		return (-1);
	}
	if (j->bad || !WIFEXITED(j->status) || WEXITSTATUS(j->status) != 0 ||
	    fswalk_answer_parse(j->ans, j->got, kind, a, why,
	    sizeof(why)) == -1) {
		if (!j->bad && j->got > 0 && WIFEXITED(j->status) &&
		    WEXITSTATUS(j->status) == 0)
			log_warnx("%s (pid %d): %s", j->what, (int)j->pid,
			    why);
		snprintf(err, errlen, "walk process (pid %d) %s, %s %d",
		    (int)j->pid, j->got == 0 ? "ended without an answer" :
		    "answered out of form", WIFSIGNALED(j->status) ?
		    "killed by signal" : "exit status",
		    WIFSIGNALED(j->status) ? WTERMSIG(j->status) :
		    WEXITSTATUS(j->status));
		return (-1);
	}
	return (0);
}

long long
fsjob_deadline(const char *var, long long secs)
{
#ifdef FACTORY_TESTBUILD
	const char	*s = getenv(var);
	const char	*errstr;
	long long	 n;

	if (s != NULL) {
		n = strtonum(s, 1, 86400, &errstr);
		if (errstr == NULL)
			return (n);
	}
#else
	(void)var;
#endif
	return (secs);
}
