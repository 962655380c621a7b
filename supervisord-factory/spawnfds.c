/*
 * What a spawn trades with its launcher over their socket, in the
 * parent: waiting for its word (bounded by SBX_SETUP_MS), the
 * descriptors it passes back (its pidfd, its mount namespace), and
 * the cgroups made for it and passed to it.  sandbox.c drives these.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>

#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>	/* clone3: struct clone_args */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "conf.h"
#include "esc.h"
#include "landlock.h"
#include "plan.h"
#include "sandbox.h"

/*
 * Wait for the error pipe: EOF when the agent's execve succeeded (its
 * close-on-exec end was the last one), else the reason it failed.
 */
int
spawn_await(int fd, char *err, size_t errlen)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	char		 raw[256];
	ssize_t		 n;
	int		 rc;

	while ((rc = poll(&pfd, 1, SBX_SETUP_MS)) == -1 && errno == EINTR)
		;
	if (rc == 0) {
		snprintf(err, errlen, "sandbox setup timed out");
		return (-1);
	}
	while ((n = read(fd, raw, sizeof(raw))) == -1 && errno == EINTR)
		;
	if (n == 0)
		return (0);
	if (n < 0)
		snprintf(err, errlen, "read error pipe: %s", strerror(errno));
	else	/* the launcher's bytes: they may carry argv[0], paths */
		esc_show(raw, n, err, errlen);
	return (-1);
}

/*
 * Pid 1's listening sockets: queued before it forked the agent, so
 * here by the time the agent's execve is known.
 */
int
spawn_recvfds(struct sandbox *sb, int n, char *err, size_t errlen)
{
	char	 tag = 0;
	int	 got;

	got = plan_recvtag(sb->fd, MSG_DONTWAIT, &tag, sb->lfd,
	    SANDBOX_MAXLISTEN);
	if (got >= 0)
		sb->nlfd = got;
	if (got != n || tag != 'L') {
		snprintf(err, errlen, "egress: pid 1 sent %d of %d listening "
		    "sockets", got < 0 ? 0 : got, n);
		return (-1);
	}
	return (0);
}

/*
 * Pid 1's mount namespace ("M", sbx_send_mntns), queued before it
 * forked the agent: held in sb->mntns until sandbox_destroy (unless
 * pid 1 is gone already, nsid zero).  It must be one descriptor of a
 * mount namespace, pid 1's own (nsid), not the parent's, and come
 * once: after it only pid 1's "S" may be queued.
 */
int
spawn_recv_mntns(struct sandbox *sb, const struct stat *nsid, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		 tag = 0;
	int		 fds[2], fd, n;

	if ((n = plan_recvtag(sb->fd, MSG_DONTWAIT, &tag, fds, 2)) == -1 ||
	    tag != 'M') {
		while (n > 0)
			close(fds[--n]);
		snprintf(err, errlen, "pid 1 sent no mount namespace (tag "
		    "%d)", tag);
		return (-1);
	}
	if (n != 1) {
		snprintf(err, errlen, "pid 1's 'M' came with %d descriptors, "
		    "not 1", n);
		while (n > 0)
			close(fds[--n]);
		return (-1);
	}
	fd = fds[0];
	if (!plan_mntns_ok(fd)) {
		close(fd);
		snprintf(err, errlen, "pid 1's 'M' is not a mount namespace "
		    "other than the parent's");
		return (-1);
	}
	if (nsid->st_ino == 0) {
		/* Pid 1 is gone: its namespace with it, nothing to hold. */
		close(fd);
		fd = -1;
	} else if (fstat(fd, &st) == -1 || st.st_ino != nsid->st_ino ||
	    st.st_dev != nsid->st_dev) {
		close(fd);
		snprintf(err, errlen, "pid 1's 'M' is not pid 1's own mount "
		    "namespace");
		return (-1);
	}
	tag = 0;
	if (recv(sb->fd, &tag, 1, MSG_DONTWAIT | MSG_PEEK) == 1 &&
	    tag != 'S') {
		if (fd != -1)
			close(fd);
		snprintf(err, errlen, "pid 1 sent '%c' after its mount "
		    "namespace%s", tag >= 0x21 && tag < 0x7f ? tag : '?',
		    tag == 'M' ? " (twice)" : "");
		return (-1);
	}
	sb->mntns = fd;
	return (0);
}

/*
 * The parent's half of the cgroups, done while pid 1 starts:
 * create them with the limits and open the files pid 1 joins them
 * through (cgroup_open_procs()), all but the one it was born in (born);
 * fds gets their number, *nfd.  (A thread writing "0", itself, to a
 * v1 "tasks" file is much cheaper to move than a process named by pid
 * or moved through cgroup.procs: that takes a lock every fork must
 * wait for, and an RCU grace period.)
 */
int
spawn_cgroups_make(const struct sandbox_spec *spec, struct sandbox *sb,
    int first, int born, int *fds, int *nfd, char *err, size_t errlen)
{
	int	 i, n;

	if (cgroup_create(sb, spec, first, err, errlen) == -1)
		return (-1);
	/* Not the one it was cloned into. */
	if (cgroup_open_procs(sb, born, fds, err, errlen) == -1)
		return (-1);
	for (i = 0, n = 0; i < sb->ncgroups; i++)
		if (i != born)
			fds[n++] = fds[i];
	*nfd = n;
	return (0);
}

/* "G" and the files of spawn_cgroups_make, which are closed. */
int
spawn_cgroups_send(struct sandbox *sb, int *fds, int n, char *err,
    size_t errlen)
{
	int	 i, rc;

	if ((rc = plan_sendtag(sb->fd, 0, 'G', fds, n)) == -1)
		snprintf(err, errlen, "send pid 1 its cgroups: %s",
		    strerror(errno));
	for (i = 0; i < n; i++)
		close(fds[i]);
	return (rc);
}
