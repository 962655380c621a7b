/*
 * factory-sandbox: pid 1 of every sandbox.  factoryd clones it into
 * the new namespaces and execs it at once from the binary it opened at
 * start, so it holds nothing of the parent's memory: only the plan,
 * read from its socket, and the descriptors it was handed (sbx.h).
 * Then it builds the mount view, joins the cgroups the parent made,
 * starts the agent and reaps (child.c).  Started any other way, it
 * refuses.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx.h"

/* The descriptors must be what factoryd hands over. */
static void
check_fds(void)
{
	struct stat	 st;
	int		 type;
	socklen_t	 len = sizeof(type);

	if (fstat(SBX_FD_SOCK, &st) == -1 || !S_ISSOCK(st.st_mode) ||
	    getsockopt(SBX_FD_SOCK, SOL_SOCKET, SO_TYPE, &type, &len) == -1 ||
	    type != SOCK_SEQPACKET)
		errx(1, "fd %d is not a seqpacket socket: not started by "
		    "factoryd", SBX_FD_SOCK);
	if (fstat(SBX_FD_ERR, &st) == -1 || !S_ISFIFO(st.st_mode))
		errx(1, "fd %d is not a pipe: not started by factoryd",
		    SBX_FD_ERR);
}

/* The plan: one message, no descriptors, at most SBX_PLAN_MAX bytes. */
static struct sbx_plan *
read_plan(void)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct sbx_plan	*pl;
	struct msghdr	 msg;
	struct iovec	 iov;
	char		 err[512];
	ssize_t		 n;
	void		*buf;

	if ((buf = malloc(SBX_PLAN_MAX)) == NULL)
		sbx_fail(SBX_FD_ERR, "plan: out of memory");
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = buf;
	iov.iov_len = SBX_PLAN_MAX;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	while ((n = recvmsg(SBX_FD_SOCK, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC)) ==
	    -1 && errno == EINTR)
		;
	if (n == -1)
		sbx_fail(SBX_FD_ERR, "plan: recvmsg:");
	if (n == 0)	/* EOF, or an empty message */
		sbx_fail(SBX_FD_ERR, "plan: none came");
	if (msg.msg_controllen != 0 || (msg.msg_flags & MSG_CTRUNC))
		sbx_fail(SBX_FD_ERR, "plan: came with descriptors");
	if ((size_t)n > SBX_PLAN_MAX || (msg.msg_flags & MSG_TRUNC))
		sbx_fail(SBX_FD_ERR, "plan: %zd bytes, more than %d", n,
		    SBX_PLAN_MAX);
	if ((pl = sbx_plan_decode(buf, (size_t)n, &sbx_prog, err,
	    sizeof(err))) == NULL)
		sbx_fail(SBX_FD_ERR, "%s", err);
	free(buf);
	return (pl);
}

int
main(int argc, char *argv[])
{
	struct sbx_plan		*pl;
	struct sandbox_spec	*spec;
	int			 fd;

	/* The command line is the title: "factory-sandbox attempt ID". */
	if (argc != 3 || strcmp(argv[1], "attempt") != 0)
		errx(1, "usage: factory-sandbox attempt id (started by "
		    "factoryd only)");
	if (getpid() != 1)
		errx(1, "not pid 1 of a new pid namespace: started by "
		    "factoryd only");
	check_fds();
	/* The error pipe reports execve of the agent by closing. */
	for (fd = SBX_FD_SOCK; fd < SBX_FD_MAX; fd++)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	pl = read_plan();
	spec = (struct sandbox_spec *)pl->spec;
	if (strcmp(argv[2], spec->id) != 0)
		sbx_fail(SBX_FD_ERR, "plan: id %s, started as attempt %s",
		    spec->id, argv[2]);
	pl->sock = SBX_FD_SOCK;
	pl->errfd = SBX_FD_ERR;
	spec->logfd = SBX_FD_LOG;
	if (pl->netfd != -1) {
		pl->netfd = SBX_FD_NET;
		pl->ipcfd = SBX_FD_IPC;
	}
	if (fcntl(SBX_FD_LOG, F_GETFD) == -1 || (pl->netfd != -1 &&
	    (fcntl(SBX_FD_NET, F_GETFD) == -1 ||
	    fcntl(SBX_FD_IPC, F_GETFD) == -1)))
		sbx_fail(SBX_FD_ERR, "the log or a namespace fd is missing");
	sbx_exec_resolve();
	sbx_pid1(pl);
}
