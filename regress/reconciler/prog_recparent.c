/*
 * A stand-in for factoryd's side of the reconciler's channel, so the
 * real factory-reconciler can be driven under its real policy.
 *
 *	prog_recparent [-b] uid binary [arg ...]
 *
 * Starts binary as uid (no groups) with its end of a socketpair on fd
 * 3, waits for its HELLO, sends one IMSG_INVENTORY_REQ "{}" (with -b:
 * an IMSG_HEARTBEAT, which it must refuse) and prints the answer on one
 * line: an inventory decoded as the parent decodes it (invmsg.h) and
 * shown as JSON with its field names, anything else as a string.
 * Then closes the channel and prints the child's end: "exit N" or
 * "signal N".
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <err.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "factory.h"
#include "imsg.h"
#include "invmsg.h"

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

/* The inventory, decoded strictly, as one line of JSON. */
static void
print_inventory(struct imsg *imsg)
{
	struct invmsg	 m;
	struct ibuf	 ib;
	json_t		*o, *l[8];
	char		 e[512], *text;
	size_t		 i;

	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    invmsg_decode(ibuf_data(&ib), ibuf_size(&ib), 0, UINT32_MAX - 1,
	    &m, e, sizeof(e)) == -1)
		errx(1, "inventory refused: %s", e);
	for (i = 0; i < 8; i++)
		l[i] = json_array();
	for (i = 0; i < m.ndirs; i++)
		json_array_append_new(l[0], json_string(m.dirs[i].id));
	for (i = 0; i < m.nvdirs; i++)
		json_array_append_new(l[1], json_string(m.vdirs[i].id));
	for (i = 0; i < m.ncgroups; i++)
		json_array_append_new(l[2], json_pack("{s:s, s:i}", "id",
		    m.cgroups[i].id, "kind", m.cgroups[i].kind));
	for (i = 0; i < m.nprocs; i++)
		json_array_append_new(l[3], json_pack("{s:I, s:I, s:s}", "pid",
		    (json_int_t)m.procs[i].pid, "uid",
		    (json_int_t)m.procs[i].uid, "comm", m.procs[i].comm));
	for (i = 0; i < m.nmounts; i++)
		json_array_append_new(l[4], json_pack("{s:s, s:b}", "id",
		    m.mounts[i].id, "verify", m.mounts[i].verify));
	for (i = 0; i < m.nbranches; i++)
		json_array_append_new(l[5], json_pack("{s:s, s:s, s:s}", "repo",
		    m.branches[i].repo, "id", m.branches[i].id, "commit",
		    m.branches[i].commit));
	for (i = 0; i < m.npulls; i++)
		json_array_append_new(l[6], json_pack("{s:s, s:s, s:i}", "dir",
		    m.pulls[i].dir, "id", m.pulls[i].id, "number",
		    m.pulls[i].number));
	for (i = 0; i < m.nerrors; i++)
		json_array_append_new(l[7], json_string(m.errors[i]));
	o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:b}",
	    "attempt_dirs", l[0], "verify_dirs", l[1], "cgroups", l[2],
	    "processes", l[3], "mounts", l[4], "branches", l[5], "pulls", l[6],
	    "skipped", (json_int_t)m.skipped, "errors", l[7], "truncated",
	    m.truncated);
	if (o == NULL || (text = json_dumps(o, JSON_COMPACT)) == NULL)
		errx(1, "out of memory");
	printf("%s\n", text);
	free(text);
	json_decref(o);
	invmsg_free(&m);
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
		if (imsg_get_type(&imsg) != IMSG_INVENTORY) {
			printf("type %u\n", imsg_get_type(&imsg));
			print_payload(&imsg);
		} else
			print_inventory(&imsg);
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
