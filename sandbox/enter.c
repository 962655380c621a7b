/*
 * factory-sandbox enter: the waiter of an operator's factoryctl shell
 * session.  factoryd execs it from the binary it opened at start with
 * the descriptors of sbx.h (SBX_EFD_*) and one enter plan, so the only
 * process of the session that is root in the sandbox's namespaces
 * holds nothing of the parent's memory.  It joins pid 1's namespaces,
 * makes HOME's mount point, forks the command and waits for it; then
 * kills the session cgroup whole, waits for it to empty, removes it and
 * HOME's mount point, and exits with the command's status.
 *
 * The command joins the session cgroup first (nothing it starts may
 * escape the kill), then a private mount namespace with a fresh tmpfs
 * on HOME, the pty as controlling terminal, and the agent's
 * confinement (sbx_confine), and execs.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx.h"

#define ENTER_HOMEOPTS	"size=16m,nr_inodes=4096,mode=0700"
#define ENTER_EMPTY_MS	5000	/* the waiter waits for the kill this long */

/* HOME=, as made: the plan's env names the template. */
static void
enter_home_env(struct plan_enter *en)
{
	char	**env = (char **)en->spec->env, *s;
	int	  i;

	if (asprintf(&s, "HOME=%s", en->home) == -1)
		plan_fail(SBX_EFD_ERR, "HOME: out of memory");
	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], "HOME=", 5) == 0)
			env[i] = s;
}

static __dead void
enter_command(struct plan_enter *en)
{
	const struct sandbox_spec *spec = en->spec;
	char	 opts[128];
	int	 i;

	/*
	 * Dies with its waiter from the fork on, not only once it runs:
	 * a waiter killed before the execve (the parent's start deadline)
	 * must not leave it behind in the sandbox, outside any session
	 * cgroup.  The waiter is outside the sandbox's pid namespace, so
	 * its pid reads 0 here; anything else means it is gone already.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 || getppid() != 0)
		_exit(127);
	/* The session cgroup first: nothing of it may escape the kill. */
	for (i = 0; i < en->nprocs; i++)
		if (write(SBX_EFD_PROCS + i, "0", 1) != 1)
			plan_fail(SBX_EFD_ERR, "join cgroup %d:", i);
	if (setns(SBX_EFD_PIDFD, CLONE_NEWCGROUP) == -1)
		plan_fail(SBX_EFD_ERR, "setns cgroup:");
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		plan_fail(SBX_EFD_ERR, "mount namespace:");
	snprintf(opts, sizeof(opts), "%s,uid=%u,gid=%u", ENTER_HOMEOPTS,
	    (unsigned)spec->uid, (unsigned)spec->gid);
	if (mount("tmpfs", en->home, "tmpfs", MS_NOSUID | MS_NODEV,
	    opts) == -1)
		plan_fail(SBX_EFD_ERR, "mount HOME %s:", en->home);
	syscall(SYS_close_range, SBX_EFD_SOCK, ~0U, 0);
	if (setsid() == -1 || ioctl(SBX_EFD_SLAVE, TIOCSCTTY, 0) == -1)
		plan_fail(SBX_EFD_ERR, "controlling terminal:");
	sbx_confine(spec, en->tree, sbx_confine_prepare(spec, en->tree,
	    en->ports, en->nports, SBX_EFD_ERR), SBX_EFD_ERR);
	/* After the uid change, which clears it: dies with its waiter. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		plan_fail(SBX_EFD_ERR, "pdeathsig:");
	execve(spec->argv[0], spec->argv, spec->env);
	plan_fail(SBX_EFD_ERR, "exec %s:", spec->argv[0]);
}

/* Until the session cgroup holds no process, or the bound. */
static void
enter_wait_empty(int evfd)
{
	struct pollfd	 pfd;
	char		 buf[256];
	ssize_t		 n;
	int		 waited;

	for (waited = 0; waited < ENTER_EMPTY_MS; waited += 50) {
		if ((n = pread(evfd, buf, sizeof(buf) - 1, 0)) <= 0)
			return;
		buf[n] = '\0';
		if (strstr(buf, "populated 0") != NULL)
			return;
		pfd.fd = evfd;
		pfd.events = POLLPRI;
		(void)poll(&pfd, 1, 50);
	}
}

__dead void
sbx_enter(struct plan_enter *en)
{
	pid_t	 cmd;
	int	 i, st, evfd = SBX_EFD_PROCS + en->nprocs, dirfd = evfd + 1;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		plan_fail(SBX_EFD_ERR, "pdeathsig:");
	if (setns(SBX_EFD_PIDFD, CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
	    CLONE_NEWIPC | CLONE_NEWUTS) == -1)
		plan_fail(SBX_EFD_ERR, "setns into the sandbox:");
	/* Root-owned in the sticky /tmp: the agent can neither move it nor
	 * write into it; the tmpfs on it is seen by the session alone. */
	if (mkdtemp(en->home) == NULL)
		plan_fail(SBX_EFD_ERR, "mkdtemp %s:", en->home);
	enter_home_env(en);
	if ((cmd = fork()) == -1)
		plan_fail(SBX_EFD_ERR, "fork:");
	if (cmd == 0)
		enter_command(en);
	for (i = 0; i < evfd; i++)
		if (i != SBX_EFD_KILL)
			close(i);
	while (waitpid(cmd, &st, 0) == -1)
		if (errno != EINTR)
			break;
	/* Before anything else: every process the session started. */
	if (write(SBX_EFD_KILL, "1", 1) == -1) {
		/* The parent's teardown kills the cgroup all the same. */
	}
	enter_wait_empty(evfd);
	(void)unlinkat(dirfd, en->cgname, AT_REMOVEDIR);
	(void)rmdir(en->home);
	if (WIFSIGNALED(st))
		_exit(128 + WTERMSIG(st));
	_exit(WEXITSTATUS(st));
}
