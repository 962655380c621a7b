/*
 * Applies one child's policy from the process table, exactly as the
 * daemon does, then tries one thing.  Exit 0: it worked.  Exit 3 with
 * "denied: ERRNO": it was refused with an errno.  Killed by SIGSYS:
 * seccomp refused it.  Exit 1: it ran but did not do its job.  Exit
 * 2: the test itself is wrong.
 *
 * prog_policytest [-V name=value ...] [-P promises] PROC ACT [ARG]
 * prog_policytest -l NAME	listen on the abstract unix socket NAME
 *
 * PROC "none" applies no policy (the control case); -P replaces the
 * table's promises and keeps its unveils.  /dev/null and a TCP socket
 * are opened before the policy, as descriptors a child inherits.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/wait.h>

#include <linux/io_uring.h>
#include <linux/keyctl.h>

#include <errno.h>
#include <event.h>
#include <git2.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "log.h"
#include "pledge.h"

#define HIGHBIT		(1UL << 32)

static int	 devfd = -1;	/* opened before the policy, as inherited */
static int	 tcpfd = -1;	/* likewise: a TCP socket to connect later */
static int	 got_message;

static __dead void
usage(void)
{
	fprintf(stderr, "usage: prog_policytest [-V name=value ...] "
	    "[-P promises] proc act [arg]\n"
	    "       prog_policytest -l name\n");
	exit(2);
}

/*
 * Without atexit(3) handlers: a sanitizer's leak check at exit needs
 * syscalls (ptrace, clone) that no policy grants.
 */
static __dead void
leave(int code)
{
	fflush(stdout);
	_exit(code);
}

static __dead void
denied(void)
{
	const char	*name = strerrorname_np(errno);

	printf("denied: %s\n", name != NULL ? name : "unknown");
	leave(3);
}

static int
unix_connect(const char *path, int abstract)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) + 1 >= sizeof(sun.sun_path))
		usage();
	memcpy(sun.sun_path + abstract, path, strlen(path));
	len = offsetof(struct sockaddr_un, sun_path) + abstract + strlen(path);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return (-1);
	if (connect(s, (struct sockaddr *)&sun, len) == -1)
		return (-1);
	close(s);
	return (0);
}

/*
 * connect(2) of a TCP socket made before the policy: Landlock's TCP
 * rules, not seccomp, must refuse it when inet is not promised.
 */
static int
tcp_connect(const char *port)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)strtoul(port, NULL, 10));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return (connect(tcpfd, (struct sockaddr *)&sin, sizeof(sin)));
}

/* The harness's abstract listener: accepts until killed. */
static __dead void
listen_abstract(const char *name)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 s, c;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(name) + 1 >= sizeof(sun.sun_path))
		usage();
	memcpy(sun.sun_path + 1, name, strlen(name));
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sun, len) == -1 || listen(s, 8) == -1)
		fatal("listen @%s", name);
	printf("listening\n");
	fflush(stdout);
	for (;;)
		if ((c = accept(s, NULL, NULL)) != -1)
			close(c);
}

static void
ev_read(int fd, short what, void *arg)
{
	char	 buf[16];
	ssize_t	 n;

	n = read(fd, buf, sizeof(buf));
	if (n == 5 && memcmp(buf, "hello", 5) == 0)
		got_message = 1;
	event_base_loopbreak(arg);
}

/* What every child's main loop does: libevent on a socketpair. */
static int
act_libevent(void)
{
	struct event_base	*base;
	struct event		*ev;
	struct timeval		 tv = { 5, 0 };
	int			 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == -1)
		return (-1);
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	if ((ev = event_new(base, sv[0], EV_READ, ev_read, base)) == NULL ||
	    event_add(ev, &tv) == -1)
		fatalx("event_new");
	if (write(sv[1], "hello", 5) != 5)
		return (-1);
	if (event_base_dispatch(base) == -1)
		fatalx("event_base_dispatch");
	printf("libevent %s: %s\n", event_base_get_method(base),
	    got_message ? "message received" : "no message");
	fflush(stdout);
	event_free(ev);
	event_base_free(base);
	return (got_message ? 0 : 1);
}

/*
 * What the worker and verifier do with libgit2, after their policy as
 * they do it: init with host config ignored, make a repository, write
 * a blob, a tree and a commit.
 */
static int
act_git(const char *dir)
{
	static const int levels[] = {
		GIT_CONFIG_LEVEL_PROGRAMDATA, GIT_CONFIG_LEVEL_SYSTEM,
		GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL
	};
	git_repository		*repo;
	git_treebuilder		*tb;
	git_signature		*sig;
	git_tree		*tree;
	git_oid			 blob, treeid, commit;
	size_t			 i;

	if (git_libgit2_init() < 0)
		goto fail;
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i],
		    "") < 0)
			goto fail;
	if (git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0 ||
	    git_repository_init(&repo, dir, 1) < 0 ||
	    git_blob_create_from_buffer(&blob, repo, "hello\n", 6) < 0 ||
	    git_treebuilder_new(&tb, repo, NULL) < 0 ||
	    git_treebuilder_insert(NULL, tb, "hello", &blob,
	    GIT_FILEMODE_BLOB) < 0 ||
	    git_treebuilder_write(&treeid, tb) < 0 ||
	    git_tree_lookup(&tree, repo, &treeid) < 0 ||
	    git_signature_new(&sig, "factory", "factory@localhost", 0, 0) < 0 ||
	    git_commit_create_v(&commit, repo, "HEAD", sig, sig, NULL, "test",
	    tree, 0) < 0)
		goto fail;
	printf("commit %s\n", git_oid_tostr_s(&commit));
	return (0);
 fail:
	printf("libgit2: %s\n", git_error_last() != NULL ?
	    git_error_last()->message : "no message");
	return (1);
}

/* The reconciler's and the worker's reading: open, resolve HEAD. */
static int
act_git_read(const char *dir)
{
	git_repository	*repo;
	git_reference	*head;
	git_commit	*commit;

	if (git_libgit2_init() < 0 ||
	    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0) < 0 ||
	    git_repository_open_bare(&repo, dir) < 0 ||
	    git_repository_head(&head, repo) < 0 ||
	    git_commit_lookup(&commit, repo, git_reference_target(head)) < 0) {
		printf("libgit2: %s\n", git_error_last() != NULL ?
		    git_error_last()->message : "no message");
		return (1);
	}
	printf("head %s\n", git_oid_tostr_s(git_commit_id(commit)));
	return (0);
}

static int	 thread_ran;

static void *
thread_main(void *arg)
{
	thread_ran = 1;
	return (arg);
}

static int
act_thread(void)
{
	pthread_t	 t;
	int		 rc;

	if ((rc = pthread_create(&t, NULL, thread_main, NULL)) != 0) {
		errno = rc;
		return (-1);
	}
	if ((rc = pthread_join(t, NULL)) != 0) {
		errno = rc;
		return (-1);
	}
	return (thread_ran ? 0 : 1);
}

static int
act_ioctl(unsigned long req)
{
	char	 c = 'x';
	int	 n;

	if (req == FIONREAD || req == (FIONREAD | HIGHBIT))
		return (ioctl(devfd, req, &n) == -1 ? -1 : 0);
	return (ioctl(devfd, req, &c) == -1 ? -1 : 0);
}

static int
act_fork(void)
{
	pid_t	 pid;
	int	 status;

	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) == -1)
		return (-1);
	return (WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1);
}

static int
act_open(const char *path, int flags)
{
	char	 c;
	int	 fd;

	if ((fd = open(path, flags, 0600)) == -1)
		return (-1);
	if ((flags & O_ACCMODE) == O_RDONLY) {
		if (read(fd, &c, 1) == -1)
			return (-1);
	} else if (write(fd, "x", 1) != 1)
		return (-1);
	close(fd);
	return (0);
}

static int
act(const char *name, const char *arg)
{
	struct io_uring_params	 iop;
	long			 rc;

	if (strcmp(name, "read") == 0 && arg != NULL)
		return (act_open(arg, O_RDONLY));
	if (strcmp(name, "write") == 0 && arg != NULL)
		return (act_open(arg, O_WRONLY | O_APPEND));
	if (strcmp(name, "create") == 0 && arg != NULL)
		return (act_open(arg, O_WRONLY | O_CREAT | O_EXCL));
	if (strcmp(name, "exec") == 0 && arg != NULL) {
		execl(arg, arg, (char *)NULL);
		return (-1);
	}
	if (strcmp(name, "inet") == 0)
		return (socket(AF_INET, SOCK_STREAM, 0) == -1 ? -1 : 0);
	if (strcmp(name, "tcp-connect") == 0 && arg != NULL)
		return (tcp_connect(arg));
	if (strcmp(name, "unix-connect") == 0 && arg != NULL)
		return (unix_connect(arg, 0));
	if (strcmp(name, "abstract-connect") == 0 && arg != NULL)
		return (unix_connect(arg, 1));
	if (strcmp(name, "ptrace") == 0)
		return (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == -1 ? -1 : 0);
	if (strcmp(name, "mount") == 0)
		/* Harmless when allowed: the target does not exist. */
		return (mount("none", "/nonexistent-factory-policy", "tmpfs",
		    0, NULL));
	if (strcmp(name, "bpf") == 0)
		return (syscall(SYS_bpf, -1, NULL, 0) == -1 ? -1 : 0);
	if (strcmp(name, "keyctl") == 0)
		return (syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID,
		    KEY_SPEC_SESSION_KEYRING, 0) == -1 ? -1 : 0);
	if (strcmp(name, "unshare") == 0)
		return (unshare(CLONE_NEWUSER));
	if (strcmp(name, "io_uring") == 0) {
		memset(&iop, 0, sizeof(iop));
		rc = syscall(SYS_io_uring_setup, 1, &iop);
		return (rc == -1 ? -1 : 0);
	}
	if (strcmp(name, "tiocsti") == 0)
		return (act_ioctl(TIOCSTI));
	if (strcmp(name, "tiocsti-high") == 0)
		return (act_ioctl(TIOCSTI | HIGHBIT));
	if (strcmp(name, "tioclinux-high") == 0)
		return (act_ioctl(TIOCLINUX | HIGHBIT));
	if (strcmp(name, "fionread") == 0)
		return (act_ioctl(FIONREAD));
	if (strcmp(name, "fionread-high") == 0)
		return (act_ioctl(FIONREAD | HIGHBIT));
	if (strcmp(name, "fork") == 0)
		return (act_fork());
	if (strcmp(name, "kill-parent") == 0)
		return (kill(getppid(), SIGUSR1));
	if (strcmp(name, "stdio") == 0)
		return (printf("stdio works\n") < 0 || fflush(stdout) != 0 ?
		    -1 : 0);
	if (strcmp(name, "libevent") == 0)
		return (act_libevent());
	if (strcmp(name, "git-read") == 0 && arg != NULL)
		return (act_git_read(arg));
	if (strcmp(name, "git") == 0 && arg != NULL)
		return (act_git(arg));
	if (strcmp(name, "thread") == 0)
		return (act_thread());
	if (strcmp(name, "describe") == 0)
		return (printf("%s", pledge_describe()) < 0 ? -1 : 0);
	usage();
}

int
main(int argc, char *argv[])
{
	struct factory_proc	 p;
	const struct factory_proc *tp;
	char			**vars = NULL;
	const char		*promises = NULL;
	size_t			 nvars = 0;
	int			 ch;

	log_init(1, LOG_DAEMON);
	while ((ch = getopt(argc, argv, "l:P:V:")) != -1) {
		switch (ch) {
		case 'l':
			listen_abstract(optarg);
		case 'P':
			promises = optarg;
			break;
		case 'V':
			if (strchr(optarg, '=') == NULL)
				usage();
			vars = reallocarray(vars, nvars + 1, sizeof(*vars));
			if (vars == NULL)
				fatal(NULL);
			vars[nvars++] = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || argc > 3)
		usage();

	/* As a descriptor the parent handed down before the policy. */
	if ((devfd = open("/dev/null", O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1)
		fatal("/dev/null");
	if ((tcpfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");

	if (strcmp(argv[0], "none") != 0) {
		if ((tp = proc_byname(argv[0])) == NULL)
			fatalx("%s: no such process in the table", argv[0]);
		p = *tp;
		if (promises != NULL)
			p.promises = promises;
		if (p.promises == NULL)
			fatalx("%s: no policy in the table", p.name);
		proc_apply_policy(&p, vars, nvars);
	}
	free(vars);

	switch (act(argv[1], argc == 3 ? argv[2] : NULL)) {
	case -1:
		denied();
	case 0:
		leave(0);
	default:
		printf("failed without an errno\n");
		leave(1);
	}
}
