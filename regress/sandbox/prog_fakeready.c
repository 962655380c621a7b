/*
 * prog_fakeready: a misbehaving launcher of the pool, for the regress
 * tests.  Started by the parent as "factory-sandbox ready" would be
 * (fds 3 and 4, no environment), it says "R", takes the plan and then
 * lies about its pid 1, as its own name (a copy of this binary) says:
 *
 *	fakeready-init	"P" with a pidfd of the host's init
 *	fakeready-self	"P" with a pidfd of itself (a child, but the
 *			launcher, not a pid 1 it cloned)
 *	fakeready-sib	"P" with a pidfd of a child of its own (a
 *			grandchild of the parent)
 *	fakeready-null	"P" with /dev/null
 *	fakeready-none	"X" and no descriptor
 *	fakeready-incg	a child of its own born in the attempt's cgroup2
 *			directory, left running, and "P" with its pidfd
 *	fakeready-thread "P" with a pidfd of a thread of its own
 *			(PIDFD_THREAD: of our child's, but no process)
 *	fakeready-fail	no "P": it fails as a launcher that could not
 *			take the tree would, saying why on its error pipe
 *			("fake: cannot take the tree") before it exits
 *
 * The parent must fail the spawn, naming the pooled launcher, and
 * leave nothing behind.  Or it clones a pid 1 as the launcher does
 * (fake_pid1), which says "P" truly, and then lies about its mount
 * namespace ("M"), closes the error pipe as the agent's execve would,
 * and waits to be killed:
 *
 *	fakeready-mnone		no "M" at all
 *	fakeready-mnofd		"M" without a descriptor
 *	fakeready-mpipe		"M" with a pipe
 *	fakeready-mnet		"M" with its network namespace
 *	fakeready-mhost		"M" with the host's mount namespace (the
 *				parent's)
 *	fakeready-mother	"M" with a mount namespace of another
 *				process (the launcher's own, unshared)
 *	fakeready-mtwice	"M" with its own mount namespace, twice
 *	fakeready-mtwo		"M" with its own and another descriptor
 *	fakeready-mgone		"M" with its own, and gone (as if its
 *				agent had exited at once) before the
 *				launcher says "P" for it: the spawn goes
 *				on, the namespace is not held
 *	fakeready-mzombie	as mgone, but its "pid 1" is no pid 1: a
 *				child of the parent in the launcher's own
 *				pid namespace, gone; the spawn must fail
 *
 * The parent must fail the spawn naming what was wrong with "M",
 * kill that pid 1 and remove the cgroups by exact path.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/sched.h>

#include <fcntl.h>
#include <libgen.h>
#include <sched.h>
#include <stdint.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void
sendtags(char tag, int fd, int fd2)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * 2)];
	} cm;
	int	 fds[2] = { fd, fd2 }, n = fd2 != -1 ? 2 : 1;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = &tag;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd != -1) {
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	(void)sendmsg(3, &msg, MSG_NOSIGNAL);
}

static void
sendtag(char tag, int fd)
{
	sendtags(tag, fd, -1);
}

/* The one descriptor of a message on sock, or -1. */
static int
recvfd(int sock)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;
	char		 tag;
	int		 fd;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &tag;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	if (recvmsg(sock, &msg, 0) <= 0 || (c = CMSG_FIRSTHDR(&msg)) == NULL ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return (-1);
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return (fd);
}

/*
 * A pid 1 cloned as the launcher clones it (our parent's child, a new
 * pid and mount namespace, born in the cgroup2 directory), which says
 * "P" with a pidfd of itself and "M" as how says; other is a mount
 * namespace that is not its own.  The launcher returns.
 */
static void
fake_pid1(const char *how, int cgfd, int other)
{
	struct clone_args	 ca;
	struct pollfd		 pfd = { -1, 0, 0 };
	long			 rc;
	int			 self, fd = -1, p[2], gone;

	gone = strcmp(how, "mgone") == 0 || strcmp(how, "mzombie") == 0;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_PARENT | CLONE_NEWNS |
	    (strcmp(how, "mzombie") != 0 ? CLONE_NEWPID : 0) |
	    (cgfd != -1 ? CLONE_INTO_CGROUP : 0);
	ca.cgroup = cgfd != -1 ? (unsigned long long)cgfd : 0;
	if (gone) {
		ca.flags |= CLONE_PIDFD;
		ca.pidfd = (unsigned long long)(uintptr_t)&pfd.fd;
	}
	if (gone && socketpair(AF_UNIX, SOCK_SEQPACKET, 0, p) == -1)
		return;
	if ((rc = syscall(SYS_clone3, &ca, sizeof(ca))) > 0 && gone &&
	    fork() == 0) {
		/*
		 * Its "P" and then its "M" (handed over on p) once it is
		 * gone, as if it had raced the parent, from a child of the
		 * launcher, which the parent does not kill after "P".
		 */
		pfd.events = POLLIN;
		while (poll(&pfd, 1, -1) == -1)
			;
		sendtag('P', pfd.fd);
		sendtag('M', recvfd(p[0]));
		_exit(0);
	}
	if (rc != 0)
		return;
	if (gone) {
		/*
		 * "G" read, as pid 1 reads it (unread, it would make the
		 * parent's end say ECONNRESET at the close), its own mount
		 * namespace to the launcher, and gone.
		 */
		(void)recvfd(3);
		if (dup2(p[1], 3) == -1)
			_exit(1);
		sendtag('M', open("/proc/self/ns/mnt", O_RDONLY));
		close(4);
		_exit(0);
	}
	self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	sendtag('P', self);
	if (strcmp(how, "mnofd") == 0)
		sendtag('M', -1);
	else if (strcmp(how, "mpipe") == 0 && pipe(p) == 0)
		sendtag('M', p[0]);
	else if (strcmp(how, "mnet") == 0)
		sendtag('M', open("/proc/self/ns/net", O_RDONLY));
	else if (strcmp(how, "mhost") == 0 || strcmp(how, "mother") == 0)
		sendtag('M', other);
	else if (strcmp(how, "mtwice") == 0 || strcmp(how, "mtwo") == 0) {
		fd = open("/proc/self/ns/mnt", O_RDONLY);
		if (strcmp(how, "mtwo") == 0)
			sendtags('M', fd, other);
		else {
			sendtag('M', fd);
			sendtag('M', fd);
		}
	}
	/* EOF on the error pipe: as the agent's execve. */
	close(4);
	sleep(30);
	_exit(0);
}

/* The plan, and the cgroup2 directory if one came with it (else -1). */
static int
recvplan(void)
{
	static char	 plan[300 * 1024];
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * 2)];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;
	int		 fds[2];

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = plan;
	iov.iov_len = sizeof(plan);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	if (recvmsg(3, &msg, 0) <= 0)
		_exit(1);
	if ((c = CMSG_FIRSTHDR(&msg)) == NULL ||
	    c->cmsg_len != CMSG_LEN(sizeof(int) * 2))
		return (-1);
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	return (fds[1]);
}

static void *
sleeper(void *arg)
{
	*(volatile pid_t *)arg = gettid();
	sleep(30);
	return (NULL);
}

/* A pidfd of a thread of ours (not the main one), or -1. */
static int
thread_pidfd(void)
{
	static volatile pid_t	 tid;
	pthread_t		 t;
	int			 i;

	if (pthread_create(&t, NULL, sleeper, (void *)&tid) != 0)
		return (-1);
	for (i = 0; tid == 0 && i < 1000; i++)
		usleep(1000);
	return (tid == 0 ? -1 : (int)syscall(SYS_pidfd_open, tid, O_EXCL));
}

/* A child in the cgroup2 directory cgfd, that waits to be killed. */
static pid_t
incg(int cgfd)
{
	struct clone_args	 ca;
	pid_t			 pid;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (unsigned long long)cgfd;
	if ((pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca))) == 0) {
		sleep(30);
		_exit(0);
	}
	return (pid);
}

int
main(void)
{
	char		 exe[PATH_MAX], *name;
	ssize_t		 n;
	pid_t		 pid;
	int		 fd = -1, cgfd;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return (1);
	exe[n] = '\0';
	name = basename(exe);
	sendtag('R', -1);
	cgfd = recvplan();
	if (strncmp(name, "fakeready-m", 11) == 0) {
		/* The host's mount namespace, or another of its own. */
		if (strcmp(name, "fakeready-mother") == 0 &&
		    unshare(CLONE_NEWNS) == -1)
			return (1);
		fd = open("/proc/self/ns/mnt", O_RDONLY);
		fake_pid1(name + 10, cgfd, fd);
		return (0);
	}
	if (strcmp(name, "fakeready-incg") == 0) {
		if (cgfd != -1 && (pid = incg(cgfd)) > 0)
			fd = (int)syscall(SYS_pidfd_open, pid, 0);
	} else if (strcmp(name, "fakeready-init") == 0)
		fd = (int)syscall(SYS_pidfd_open, 1, 0);
	else if (strcmp(name, "fakeready-self") == 0)
		fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	else if (strcmp(name, "fakeready-sib") == 0) {
		if ((pid = fork()) == 0)
			_exit(0);
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
	} else if (strcmp(name, "fakeready-null") == 0)
		fd = open("/dev/null", O_RDONLY);
	else if (strcmp(name, "fakeready-thread") == 0)
		fd = thread_pidfd();
	else if (strcmp(name, "fakeready-fail") == 0) {
		(void)write(4, "fake: cannot take the tree\n", 27);
		_exit(127);
	}
	sendtag(fd == -1 ? 'X' : 'P', fd);
	/* As a launcher that cloned would: gone, or killed meanwhile. */
	sleep(1);
	return (0);
}
