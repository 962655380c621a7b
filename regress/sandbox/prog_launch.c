/*
 * prog_launch: drives the factory-sandbox launcher by hand, the way
 * bubblewrap's tests drive bwrap: clones a new pid and mount namespace,
 * hands the launcher its descriptors as factoryd does (sbx.h) and a
 * plan, good or spoiled, then prints what came back.
 *
 *	prog_launch LAUNCHER MODE [ARG] [ROOT REL] TREE UID -- argv...
 *
 * MODE good runs argv (no cgroups: an empty "G") and prints "exit N";
 * the others print "error: TEXT" from the error pipe, or "no error":
 * cut N (the plan's first N bytes), trailing (a byte more), magic,
 * withfd (an fd attached to the plan), title (started for another
 * attempt), noplan (the socket closed at once), badid; pinned runs as
 * good with the tree pinned to its own device and inode, pinwrong
 * pins it to another inode and must be refused when the tree is taken;
 * data runs as good with REL below ROOT as a service's data (ROOT
 * pinned to itself, the plan unchecked by the parent's spawn_plan),
 * datawrong with ROOT pinned to another inode.
 *
 * The ready modes start it as a launcher of the pool ("factory-sandbox
 * ready", no namespace of its own, one stray fd besides its two): it
 * must say "R" ("ready", or "not ready"), then it prints its nice
 * value ("launcher nice: N"), the fds the
 * waiting launcher holds ("fds: ...", and "fd N: anon_inode:WHAT" for
 * each anonymous one) and which of its namespaces are
 * not ours ("fresh: ..."), and sends the plan: ready (with the log fd:
 * its pid 1 must say "P" with a pidfd of itself, a child of ours,
 * "pid1: child, not the launcher", which namespaces it has fresh and
 * its nice value, "pid1 nice: N"; it runs argv, prints its title once the agent exec'd), readycg (as
 * ready, with a cgroup2 directory made for it: "cgroup: LINE", the
 * cgroup2 line of pid 1 before it was sent "G", and "tree before G:
 * mounted" or "not mounted" 200 ms later), readylate (as ready,
 * the tree a tmpfs mounted at TREE-late after "R", as a tree made for
 * the attempt is), readynofd (no fd), readytwofd (a second fd that is
 * no cgroup2 directory; readycgv1: a cgroup v1 one), readythreefd
 * (three), readyroom (started
 * without the room for its title: it must refuse before "R").
 *
 * The zygote modes start it as the pool's zygote ("factory-sandbox
 * zygote", two stray fds besides its two: "zygote fds: ...") and ask
 * it for a launcher: zygote ("F" with a socket and a pipe: it must
 * answer "Z" with a pidfd of a child of ours other than itself,
 * "launcher: child, not the zygote", which then goes on as ready does;
 * the zygote exits at EOF: "zygote exit 0"); zygotebad1, zygotebad3
 * (one fd, three), zygotetag (another tag), zygotepipes (two pipes),
 * zygotesocks (two sockets): it must name the fault on its error pipe
 * ("zygote error: TEXT") and exit, answering nothing.  The zygotedrop
 * modes send a "D" first (drop_mntns).  Pid 1's "M" (its mount
 * namespace) is checked as the parent checks it: "mntns: its own".
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../supervisord-factory/sandbox.h"
#include "../../sandbox/sbx.h"
#include "mntns.h"

static char	*envp[] = { "HOME=/tmp", "PATH=/usr/bin:/bin", NULL };

static void
send_plan(int sock, const unsigned char *w, size_t len, int withfd,
    int cgfd)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * 3)];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;
	int		 fd[3] = { 1, 1, 1 };

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = (void *)w;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (withfd > 0) {
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * withfd);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * withfd);
		if (cgfd != -1)
			fd[1] = cgfd;
		memcpy(CMSG_DATA(c), fd, sizeof(int) * withfd);
	}
	if (sendmsg(sock, &msg, 0) == -1)
		err(1, "send the plan");
}

/* The fds pid holds, in order. */
/*
 * What pid 1 queued after its plan: "M", its mount namespace ("mntns:
 * its own", or what was wrong with it), then "S" and the agent's wait
 * status, into *st.
 */
static void
recv_status(int sock, int *st)
{
	union {
		struct cmsghdr	 h;
		char		 buf[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct msghdr	 msg;
	struct cmsghdr	*c;
	struct iovec	 iov;
	char		 buf[16];
	ssize_t		 r;
	int		 fds[4], n, i;

	for (;;) {
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = buf;
		iov.iov_len = sizeof(buf);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cm.buf;
		msg.msg_controllen = sizeof(cm.buf);
		if ((r = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) <=
		    0)
			return;
		n = 0;
		if ((c = CMSG_FIRSTHDR(&msg)) != NULL &&
		    c->cmsg_type == SCM_RIGHTS) {
			n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), sizeof(int) * n);
		}
		if (r == 1 && buf[0] == 'M')
			printf("mntns: %s\n", n != 1 ? "not one fd" :
			    plan_mntns_ok(fds[0]) ? "its own" : "not a mount "
			    "namespace of its own");
		for (i = 0; i < n; i++)
			close(fds[i]);
		if (r == 1 + (ssize_t)sizeof(i) && buf[0] == 'S') {
			memcpy(&i, buf + 1, sizeof(i));
			*st = i;
			return;
		}
	}
}

static void
print_fds(pid_t pid)
{
	char		 path[64], link[64];
	struct dirent	*de;
	DIR		*d;
	ssize_t		 r;
	int		 fds[64], n = 0, i, j, t;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		err(2, "%s", path);
	while ((de = readdir(d)) != NULL && n < 64)
		if (de->d_name[0] != '.')
			fds[n++] = atoi(de->d_name);
	closedir(d);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (fds[j] < fds[i]) {
				t = fds[i];
				fds[i] = fds[j];
				fds[j] = t;
			}
	printf("fds:");
	for (i = 0; i < n; i++)
		printf(" %d", fds[i]);
	printf("\n");
	/* What an anonymous one is: "fd N: anon_inode:WHAT". */
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid,
		    fds[i]);
		if ((r = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[r] = '\0';
		if (strncmp(link, "anon_inode:", 11) == 0)
			printf("fd %d: %s\n", fds[i], link);
	}
}

/* The namespaces of pid that are not the caller's. */
static void
print_fresh(pid_t pid)
{
	const char *const ns[] = { "mnt", "uts", "net", "ipc", "pid", NULL };
	struct stat	 a, b;
	char		 path[64];
	int		 i;

	printf("fresh:");
	for (i = 0; ns[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns[i]);
		if (stat(path, &a) == -1)
			err(2, "%s", path);
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
		if (stat(path, &b) == -1)
			err(2, "%s", path);
		if (a.st_ino != b.st_ino)
			printf(" %s", ns[i]);
	}
	printf("\n");
}

/* Its nice value, as "what nice: N". */
static void
print_nice(const char *what, pid_t pid)
{
	int	 prio;

	errno = 0;
	prio = getpriority(PRIO_PROCESS, pid);
	if (errno != 0)
		err(2, "getpriority %d", (int)pid);
	printf("%s nice: %d\n", what, prio);
}

/* Its command line, NULs shown as spaces. */
static void
print_title(pid_t pid)
{
	char	 path[64], buf[256];
	ssize_t	 n, i;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    (n = read(fd, buf, sizeof(buf) - 1)) < 0)
		err(2, "%s", path);
	close(fd);
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	printf("title: %s|\n", buf);
}

/*
 * Pid 1 of a ready launcher: "P" and a pidfd of it, which must be of a
 * child of ours (CLONE_PARENT) other than the launcher.  -1 if none
 * came (the launcher refused its plan).
 */
static pid_t
await_pid1(int sock, pid_t launcher)
{
	siginfo_t	 si;
	char		 path[64], buf[1024], *p, tag = 0;
	pid_t		 pid = -1;
	ssize_t		 n;
	int		 fd, f;

	if (plan_recvtag(sock, 0, &tag, &fd, 1) != 1 || tag != 'P')
		return (-1);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    (n = read(f, buf, sizeof(buf) - 1)) <= 0)
		err(2, "%s", path);
	close(f);
	buf[n] = '\0';
	if ((p = strstr(buf, "\nPid:\t")) != NULL)
		pid = (pid_t)atoi(p + 6);
	memset(&si, 0, sizeof(si));
	if (pid > 0 && pid != launcher && waitid(P_PIDFD, fd, &si,
	    WEXITED | WNOHANG | WNOWAIT) == 0)
		printf("pid1: child, not the launcher\n");
	else
		printf("pid1: %d, not a child other than the launcher\n",
		    (int)pid);
	close(fd);
	return (pid);
}

/* Its cgroup2 line ("0::..."). */
static void
print_cgroup(pid_t pid)
{
	char	 path[64], line[512];
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		err(2, "%s", path);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "0::", 3) == 0)
			printf("cgroup: %s", line);
	fclose(f);
}

/*
 * Whether pid 1 has its tree mounted yet (a mount point at tree in its
 * mountinfo): it must not while it waits for "G", given time to.
 */
static void
print_view(pid_t pid, const char *tree)
{
	struct timespec	 ts = { 0, 200 * 1000 * 1000 };
	char		 path[64], line[4096], mp[PATH_MAX];
	int		 found = 0;
	FILE		*f;

	nanosleep(&ts, NULL);
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		err(2, "%s", path);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 &&
		    strcmp(mp, tree) == 0)
			found = 1;
	fclose(f);
	printf("tree before G: %s\n", found ? "mounted" : "not mounted");
}

/* The zygote, started as factoryd starts it, strays at 8 and 9. */
static pid_t
zygote_start(int bin, int *sockp, int *errp)
{
	char	 room[SBX_TITLE_ROOM + 1], *largv[4];
	int	 sv[2], ep[2];
	pid_t	 pid;

	memset(room, ' ', SBX_TITLE_ROOM);
	room[SBX_TITLE_ROOM] = '\0';
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe2(ep, O_CLOEXEC) == -1)
		err(2, "socketpair");
	if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0) {
		if ((sv[1] = fcntl(sv[1], F_DUPFD, 64)) == -1 ||
		    (ep[1] = fcntl(ep[1], F_DUPFD, 64)) == -1 ||
		    (bin = fcntl(bin, F_DUPFD, 64)) == -1 ||
		    dup2(sv[1], 3) == -1 || dup2(ep[1], 4) == -1 ||
		    dup2(bin, 8) == -1 || dup2(1, 9) == -1)
			_exit(126);
		syscall(SYS_close_range, 10, ~0U, 0);
		largv[0] = "factory-sandbox";
		largv[1] = "zygote";
		largv[2] = room;
		largv[3] = NULL;
		syscall(SYS_execveat, 8, "", largv, envp, AT_EMPTY_PATH);
		_exit(126);
	}
	close(sv[1]);
	close(ep[1]);
	*sockp = sv[0];
	*errp = ep[0];
	return (pid);
}

/*
 * Before the "F": a "D" for the zygote to drop, as mode says:
 * zygotedrop a mount namespace no process is in (it must let go of
 * it: "dropped: yes" once it answered the "F"), zygotedrop0 none,
 * zygotedrop2 two, zygotedroppipe a pipe, zygotedropown the
 * zygote's own mount namespace (the host's).
 */
static uint64_t		 dropped_ino;

static void
drop_mntns(const char *mode, int zsock, int pipefd)
{
	char	 path[64];
	int	 fds[2], n = 1, up[2], down[2];
	pid_t	 pid;
	char	 c;

	if (pipe2(up, O_CLOEXEC) == -1 || pipe2(down, O_CLOEXEC) == -1)
		err(2, "pipe");
	if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0) {
		/* A mount namespace of its own, then gone. */
		close(up[0]);
		close(down[1]);
		if (unshare(CLONE_NEWNS) == -1)
			_exit(1);
		(void)write(up[1], "x", 1);
		(void)read(down[0], &c, 1);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &c, 1) != 1)
		errx(2, "no mount namespace made");
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if ((fds[0] = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		err(2, "%s", path);
	if ((dropped_ino = mnt_id(path)) == 0)
		err(2, "%s: no mount namespace id", path);
	close(down[1]);
	close(up[0]);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	fds[1] = pipefd;
	if (strcmp(mode, "zygotedrop0") == 0)
		n = 0;
	else if (strcmp(mode, "zygotedrop2") == 0)
		n = 2;
	else if (strcmp(mode, "zygotedroppipe") == 0)
		fds[0] = pipefd;
	else if (strcmp(mode, "zygotedropown") == 0) {
		close(fds[0]);
		if ((fds[0] = open("/proc/self/ns/mnt", O_RDONLY |
		    O_CLOEXEC)) == -1)
			err(2, "/proc/self/ns/mnt");
		dropped_ino = 0;
	}
	if (plan_sendtag(zsock, 0, 'D', fds, n) == -1)
		err(2, "send D to the zygote");
	if (fds[0] != pipefd)
		close(fds[0]);
}

/*
 * Ask the zygote for a launcher with the ends sv1 and ep1, spoiled as
 * mode says; its pid, or -1 if the zygote refused (and is reaped).
 */
static pid_t
zygote_launcher(const char *mode, pid_t zpid, int zsock, int zerr, int sv1,
    int ep1)
{
	siginfo_t	 si;
	char		 path[64], buf[1024], *p, tag = 'F';
	int		 fds[3], n = 2, xp[2], xs[2], fd = -1, f, st;
	ssize_t		 r;
	pid_t		 pid = -1;

	fds[0] = sv1;
	fds[1] = ep1;
	if (pipe2(xp, O_CLOEXEC) == -1 || socketpair(AF_UNIX,
	    SOCK_SEQPACKET | SOCK_CLOEXEC, 0, xs) == -1)
		err(2, "pipe");
	fds[2] = xp[0];
	if (strcmp(mode, "zygotebad1") == 0)
		n = 1;
	else if (strcmp(mode, "zygotebad3") == 0)
		n = 3;
	else if (strcmp(mode, "zygotetag") == 0)
		tag = 'X';
	else if (strcmp(mode, "zygotepipes") == 0)
		fds[0] = xp[1];
	else if (strcmp(mode, "zygotesocks") == 0)
		fds[1] = xs[0];
	if (strncmp(mode, "zygotedrop", 10) == 0)
		drop_mntns(mode, zsock, xp[0]);
	/* A zygote that refused a "D" may be gone already. */
	if (plan_sendtag(zsock, 0, tag, fds, n) == -1 &&
	    strncmp(mode, "zygotedrop", 10) != 0)
		err(2, "send to the zygote");
	close(xp[0]);
	close(xp[1]);
	close(xs[0]);
	close(xs[1]);
	if (plan_recvtag(zsock, 0, &tag, &fd, 1) != 1 || tag != 'Z') {
		r = read(zerr, buf, sizeof(buf) - 1);
		buf[r > 0 ? r : 0] = '\0';
		printf("zygote error: %s\n", buf);
		while (waitpid(zpid, &st, 0) == -1 && errno == EINTR)
			;
		printf("zygote exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) :
		    128);
		return (-1);
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    (r = read(f, buf, sizeof(buf) - 1)) <= 0)
		err(2, "%s", path);
	close(f);
	buf[r] = '\0';
	if ((p = strstr(buf, "\nPid:\t")) != NULL)
		pid = (pid_t)atoi(p + 6);
	memset(&si, 0, sizeof(si));
	if (pid > 0 && pid != zpid && waitid(P_PIDFD, fd, &si,
	    WEXITED | WNOHANG | WNOWAIT) == 0)
		printf("launcher: child, not the zygote\n");
	else
		printf("launcher: %d, not a child other than the zygote\n",
		    (int)pid);
	if (dropped_ino != 0)
		printf("dropped: %s\n", mnt_holders(dropped_ino) == 0 ? "yes" :
		    "no");
	close(fd);
	return (pid);
}

/*
 * The ready modes: the launcher as factoryd's pool starts it, then the
 * plan w (len bytes) with nfd fds.
 */
static int
ready(int bin, const char *mode, struct plan *pl, unsigned char *w,
    size_t len)
{
	char	 late[PATH_MAX], cgdir[PATH_MAX];
	char	 room[SBX_TITLE_ROOM + 1], buf[1024], tag = 0, *largv[4];
	int	 sv[2], ep[2], st, zst, nfd = 1, cgfd = -1, zsock = -1;
	int	 zerr = -1;
	ssize_t	 r;
	pid_t	 pid, pid1, zpid = -1;

	if (strcmp(mode, "readynofd") == 0)
		nfd = 0;
	else if (strcmp(mode, "readytwofd") == 0)
		nfd = 2;
	else if (strcmp(mode, "readythreefd") == 0)
		nfd = 3;
	else if (strcmp(mode, "readycg") == 0) {
		nfd = 2;
		snprintf(cgdir, sizeof(cgdir), "/sys/fs/cgroup/unified/"
		    "factory-regress-launch-%d", (int)getpid());
		if (mkdir(cgdir, 0755) == -1 || (cgfd = open(cgdir,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
			err(2, "%s", cgdir);
	} else if (strcmp(mode, "readycgv1") == 0) {
		/* A directory, of a cgroup v1 hierarchy: not the one. */
		nfd = 2;
		cgdir[0] = '\0';
		if ((cgfd = open("/sys/fs/cgroup/pids", O_RDONLY |
		    O_DIRECTORY | O_CLOEXEC)) == -1)
			err(2, "/sys/fs/cgroup/pids");
	}
	memset(room, ' ', sizeof(room) - 1);
	room[strcmp(mode, "readyroom") == 0 ? 10 : SBX_TITLE_ROOM] = '\0';
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe2(ep, O_CLOEXEC) == -1)
		err(2, "socketpair");
	if (strncmp(mode, "zygote", 6) == 0)
		zpid = zygote_start(bin, &zsock, &zerr);
	if (zpid != -1) {
		pid = zygote_launcher(mode, zpid, zsock, zerr, sv[1], ep[1]);
		if (pid == -1)
			return (0);
	} else if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0) {
		if ((sv[1] = fcntl(sv[1], F_DUPFD, 64)) == -1 ||
		    (ep[1] = fcntl(ep[1], F_DUPFD, 64)) == -1 ||
		    (bin = fcntl(bin, F_DUPFD, 64)) == -1 ||
		    dup2(sv[1], 3) == -1 || dup2(ep[1], 4) == -1 ||
		    dup2(bin, 8) == -1 || dup2(1, 9) == -1)
			_exit(126);
		syscall(SYS_close_range, 10, ~0U, 0);
		largv[0] = "factory-sandbox";
		largv[1] = "ready";
		largv[2] = room;
		largv[3] = NULL;
		syscall(SYS_execveat, 8, "", largv, envp, AT_EMPTY_PATH);
		_exit(126);
	}
	close(sv[1]);
	close(ep[1]);
	if (plan_recvtag(sv[0], 0, &tag, NULL, 0) != 0 || tag != 'R') {
		printf("not ready\n");
		fflush(stdout);
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		printf("exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128);
		return (0);
	}
	printf("ready\n");
	print_nice("launcher", pid);
	print_fds(pid);
	print_fresh(pid);
	print_title(pid);
	fflush(stdout);
	late[0] = '\0';
	if (strcmp(mode, "readylate") == 0) {
		/* Made after the launcher was: it must see it all the same. */
		snprintf(late, sizeof(late), "%s-late", pl->tree);
		if (mkdir(late, 0755) == -1 || mount("tmpfs", late, "tmpfs", 0,
		    "size=1m") == -1 || chown(late, pl->spec->uid,
		    pl->spec->gid) == -1)
			err(2, "%s", late);
		strlcpy(pl->tree, late, sizeof(pl->tree));
		free(w);
		if ((w = plan_encode(pl, &sandbox_prog, &len)) == NULL)
			err(2, "encode");
	}
	send_plan(sv[0], w, len, nfd, cgfd);
	pid1 = await_pid1(sv[0], pid);
	if (pid1 > 0 && cgfd != -1) {
		print_cgroup(pid1);
		print_view(pid1, pl->tree);
	}
	if (pid1 > 0) {
		print_fresh(pid1);
		print_nice("pid1", pid1);
		fflush(stdout);
	}
	/* A launcher that refused its plan may be gone already. */
	(void)plan_sendtag(sv[0], 0, 'G', NULL, 0);
	r = read(ep[0], buf, sizeof(buf) - 1);
	if (r > 0) {
		buf[r] = '\0';
		printf("error: %s\n", buf);
	} else {
		printf("no error\n");
		print_title(pid1);
	}
	fflush(stdout);
	if (pid1 > 0) {
		/* The launcher that waited exited once it had cloned. */
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			printf("launcher status %#x\n", st);
		pid = pid1;
	}
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	if (zpid != -1) {
		/* Waiting for the next "F": its two fds, and no other. */
		printf("zygote ");
		print_fds(zpid);
		close(zsock);
		while (waitpid(zpid, &zst, 0) == -1 && errno == EINTR)
			;
		printf("zygote exit %d\n", WIFEXITED(zst) ?
		    WEXITSTATUS(zst) : 128);
	}
	if (cgfd != -1) {
		close(cgfd);
		if (cgdir[0] != '\0' && rmdir(cgdir) == -1)
			printf("rmdir %s: %s\n", cgdir, strerror(errno));
	}
	recv_status(sv[0], &st);
	if (WIFEXITED(st))
		printf("exit %d\n", WEXITSTATUS(st));
	else
		printf("signal %d\n", WTERMSIG(st));
	if (late[0] != '\0') {
		snprintf(buf, sizeof(buf), "%s/file", late);
		printf("host sees the file: %s\n", access(buf, F_OK) == 0 ?
		    "yes" : "no");
		if (umount2(late, MNT_DETACH) == -1 || rmdir(late) == -1)
			err(2, "%s", late);
	}
	free(w);
	return (0);
}

int
main(int argc, char *argv[])
{
	struct sandbox_spec	 spec;
	struct plan		 pl;
	struct stat		 tst;
	const char		*mode, *droot = NULL;
	char			*data[2] = { NULL, NULL };
	unsigned char		*w, *c;
	size_t			 len, n = 0;
	char			 buf[1024], *largv[4], probe[1024];
	ssize_t			 r;
	int			 sv[2], ep[2], bin, st, a = 2;
	pid_t			 pid;

	if (argc < 6)
		errx(2, "usage: prog_launch launcher mode [arg] tree uid -- "
		    "argv");
	if ((bin = open(argv[1], O_PATH | O_CLOEXEC)) == -1)
		err(2, "%s", argv[1]);
	mode = argv[a++];
	if (strcmp(mode, "cut") == 0)
		n = strtoul(argv[a++], NULL, 10);
	if (strcmp(mode, "data") == 0 || strcmp(mode, "datawrong") == 0) {
		droot = argv[a++];
		data[0] = argv[a++];
	}
	memset(&spec, 0, sizeof(spec));
	memset(&pl, 0, sizeof(pl));
	spec.id = strcmp(mode, "badid") == 0 ? "a/b" : "launch-1";
	strlcpy(pl.tree, argv[a++], sizeof(pl.tree));
	spec.uid = spec.gid = (uid_t)strtoul(argv[a++], NULL, 10);
	if (strcmp(argv[a++], "--") != 0)
		errx(2, "-- expected");
	spec.argv = argv + a;
	spec.env = envp;
	spec.nofile = 64;
	pl.spec = &spec;
	pl.netfd = pl.ipcfd = -1;
	/* The tree pinned, as a service's is: to itself, or one off. */
	if (strcmp(mode, "pinned") == 0 || strcmp(mode, "pinwrong") == 0) {
		if (stat(pl.tree, &tst) == -1)
			err(2, "%s", pl.tree);
		spec.tree_dev = (uint64_t)tst.st_dev;
		spec.tree_ino = (uint64_t)tst.st_ino +
		    (strcmp(mode, "pinwrong") == 0);
		mode = strcmp(mode, "pinned") == 0 ? "good" : "pinwrong";
	}
	/* A service's data, below a root pinned to itself, or one off. */
	if (droot != NULL) {
		if (stat(droot, &tst) == -1)
			err(2, "%s", droot);
		spec.data_root = droot;
		spec.data_dev = (uint64_t)tst.st_dev;
		spec.data_ino = (uint64_t)tst.st_ino +
		    (strcmp(mode, "datawrong") == 0);
		spec.data = data;
		mode = strcmp(mode, "data") == 0 ? "good" : "pinwrong";
	}
	if (sandbox_probe(probe, sizeof(probe)) == -1)
		errx(2, "probe: %s", probe);
	if ((w = plan_encode(&pl, &sandbox_prog, &len)) == NULL)
		err(2, "encode");
	if (strcmp(mode, "cut") == 0 && n < len)
		len = n;
	if (strcmp(mode, "trailing") == 0) {
		if ((c = realloc(w, len + 1)) == NULL)
			err(2, NULL);
		w = c;
		w[len++] = 0;
	}
	if (strcmp(mode, "magic") == 0)
		w[0] ^= 0xff;
	if (strncmp(mode, "ready", 5) == 0 || strncmp(mode, "zygote", 6) == 0)
		return (ready(bin, mode, &pl, w, len));

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe2(ep, O_CLOEXEC) == -1)
		err(2, "socketpair");
	if (strcmp(mode, "noplan") != 0)
		send_plan(sv[0], w, len, strcmp(mode, "withfd") == 0, -1);
	else
		shutdown(sv[0], SHUT_WR);
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS |
	    CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
	if (pid == -1)
		err(2, "clone");
	if (pid == 0) {
		/* Up out of the way first: bin may sit on 3, say. */
		if ((sv[1] = fcntl(sv[1], F_DUPFD, 64)) == -1 ||
		    (ep[1] = fcntl(ep[1], F_DUPFD, 64)) == -1 ||
		    (bin = fcntl(bin, F_DUPFD, 64)) == -1 ||
		    dup2(sv[1], 3) == -1 || dup2(ep[1], 4) == -1 ||
		    dup2(1, 5) == -1 || dup2(bin, 8) == -1)
			_exit(126);
		syscall(SYS_close_range, 9, ~0U, 0);
		largv[0] = "factory-sandbox";
		largv[1] = "attempt";
		largv[2] = strcmp(mode, "title") == 0 ? "launch-2" :
		    (char *)spec.id;
		largv[3] = NULL;
		syscall(SYS_execveat, 8, "", largv, envp, AT_EMPTY_PATH);
		_exit(126);
	}
	close(sv[1]);
	close(ep[1]);
	if (strcmp(mode, "good") == 0 || strcmp(mode, "pinwrong") == 0) {
		/* No cgroups here: pid 1 joins none. */
		if (plan_sendtag(sv[0], 0, 'G', NULL, 0) == -1)
			err(2, "send G");
	}
	r = read(ep[0], buf, sizeof(buf) - 1);
	if (r > 0) {
		buf[r] = '\0';
		printf("error: %s\n", buf);
	} else
		printf("no error\n");
	fflush(stdout);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	if (strcmp(mode, "good") == 0) {
		recv_status(sv[0], &st);
	}
	if (WIFEXITED(st))
		printf("exit %d\n", WEXITSTATUS(st));
	else
		printf("signal %d\n", WTERMSIG(st));
	free(w);
	return (0);
}
