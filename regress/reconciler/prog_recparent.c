/*
 * A stand-in for factoryd's side of the reconciler's channel, so the
 * real factory-reconciler can be driven under its real policy.
 *
 *	prog_recparent [-b] uid binary [arg ...]
 *
 * Starts binary as uid (no groups) with its end of a socketpair on fd
 * 3, waits for its HELLO, sends one IMSG_INVENTORY_REQ "{}" (with -b:
 * an IMSG_HEARTBEAT, which it must refuse) and prints the answer's
 * JSON on one line.  Then closes the channel and prints the child's
 * end: "exit N" or "signal N".
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <err.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "imsg.h"

/* The next message, or 0 at EOF. */
static int
next(struct imsgbuf *ib, struct imsg *imsg)
{
	int	 n;

	while ((n = imsgbuf_get(ib, imsg)) == 0)
		if (imsgbuf_read(ib) != 1)
			return (0);
	if (n == -1)
		errx(1, "malformed imsg from the child");
	return (1);
}

static void
print_payload(struct imsg *imsg)
{
	size_t	 len = imsg_get_len(imsg);
	char	*buf;

	if (len == 0) {
		printf("(empty)\n");
		return;
	}
	if ((buf = malloc(len)) == NULL)
		err(1, NULL);
	if (imsg_get_strbuf(imsg, buf, len) == -1)
		errx(1, "payload is not a string");
	printf("%s\n", buf);
	free(buf);
}

int
main(int argc, char *argv[])
{
	struct imsgbuf	 ib;
	struct imsg	 imsg;
	uid_t		 uid;
	extern char	**environ;
	pid_t		 pid;
	int		 sv[2], status, bad = 0, bin;

	if (argc > 1 && strcmp(argv[1], "-b") == 0) {
		bad = 1;
		argc--;
		argv++;
	}
	if (argc < 3)
		errx(2, "usage: prog_recparent [-b] uid binary [arg ...]");
	uid = strtoul(argv[1], NULL, 10);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		err(1, "socketpair");
	switch (pid = fork()) {
	case -1:
		err(1, "fork");
	case 0:
		if (dup2(sv[1], PROC_PARENT_FD) == -1)
			err(1, "dup2");
		/*
		 * Opened as root, run as uid: as factoryd does, so that a
		 * build in a directory uid cannot traverse (/root) runs.
		 */
		if ((bin = open(argv[2], O_PATH | O_CLOEXEC)) == -1)
			err(1, "%s", argv[2]);
		if (setgroups(0, NULL) == -1 ||
		    setresgid(uid, uid, uid) == -1 ||
		    setresuid(uid, uid, uid) == -1)
			err(1, "drop to uid %u", (unsigned)uid);
		fexecve(bin, argv + 2, environ);
		err(1, "%s", argv[2]);
	}
	close(sv[1]);
	if (imsgbuf_init(&ib, sv[0]) == -1 ||
	    imsgbuf_set_maxsize(&ib, FACTORY_MAXIMSG) == -1)
		err(1, "imsgbuf_init");

	if (!next(&ib, &imsg) || imsg_get_type(&imsg) != IMSG_HELLO)
		errx(1, "no HELLO from the child");
	imsg_free(&imsg);
	if (bad) {
		if (imsg_compose(&ib, IMSG_HEARTBEAT, 0, 0, -1, NULL, 0) == -1)
			err(1, "imsg_compose");
	} else if (imsg_compose(&ib, IMSG_INVENTORY_REQ, 0, 0, -1, "{}", 3) ==
	    -1)
		err(1, "imsg_compose");
	if (imsgbuf_flush(&ib) == -1)
		err(1, "imsgbuf_flush");
	if (next(&ib, &imsg)) {
		if (imsg_get_type(&imsg) != IMSG_INVENTORY)
			printf("type %u\n", imsg_get_type(&imsg));
		print_payload(&imsg);
		imsg_free(&imsg);
	} else
		printf("(eof)\n");

	imsgbuf_clear(&ib);
	close(sv[0]);
	if (waitpid(pid, &status, 0) == -1)
		err(1, "waitpid");
	if (WIFSIGNALED(status))
		printf("signal %d\n", WTERMSIG(status));
	else
		printf("exit %d\n", WEXITSTATUS(status));
	return (0);
}
