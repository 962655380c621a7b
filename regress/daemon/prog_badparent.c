/*
 * A broken parent for one real child: prog_badparent BINARY MODE
 * [-V name=value ...] starts BINARY on a socket pair at descriptor 3,
 * as factoryd would, waits for its HELLO, sends it the malformed
 * request MODE names and prints how the child ended ("exit N" or
 * "signal N").  A child must exit 1 on a malformed message from its
 * parent, saying why on standard error.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <err.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "msg.h"
#include "msgjson.h"

#define HEX40	"0123456789abcdef0123456789abcdef01234567"
#define HEX64	HEX40 "0123456789abcdef01234567"

#define RAW	MSG_KIND_MAX

/*
 * A message of msg.h spelled as JSON and laid out on the wire by
 * msgjson.c, len bytes of junk after it; or RAW bytes, len of them
 * (0: strlen + 1).
 */
static const struct {
	const char	*mode;
	uint32_t	 type;
	enum msg_kind	 kind;
	const char	*payload;
	size_t		 len;
} modes[] = {
	{ "resolve-missing", IMSG_RESOLVE, MSG_RESOLVE,
	    "{\"req\":1,\"repo\":\"/r\"}", 0 },
	{ "resolve-trailing", IMSG_RESOLVE, MSG_RESOLVE,
	    "{\"req\":1,\"repo\":\"/r\",\"ref\":\"main\"}", 2 },
	/* A PROVISION laid out with READY's kind byte (see main). */
	{ "provision-kind", IMSG_PROVISION, MSG_PROVISION, "{\"id\":\"a-1\","
	    "\"epoch\":1,\"repo\":\"/r\",\"baseline\":\"" HEX40 "\","
	    "\"dir\":\"/d\",\"lower\":\"/l\"}", 0 },
	{ "collect-extra", IMSG_COLLECT, MSG_COLLECT, "{\"id\":\"a-1\","
	    "\"epoch\":1,\"repo\":\"/r\",\"baseline\":\"" HEX40 "\","
	    "\"dir\":\"/d\",\"scope\":[],\"title\":\"t\",\"digest\":"
	    "\"sha256:" HEX64 "\",\"tree_limit\":0,\"bundle\":\"/d/b\","
	    "\"x\":1}", 0 },
	{ "validate-done-early", IMSG_VALIDATE_DONE, MSG_VALIDATE_DONE,
	    "{\"id\":\"a-1\",\"status\":0,\"timedout\":false,"
	    "\"passed\":true,\"seq\":1,\"prev\":\"" HEX64 "\",\"epoch\":1}",
	    0 },
	{ "verify-nul", IMSG_VERIFY, MSG_VERIFY, "{\"id\":\"a\\u0000\"}", 0 },
	{ "verify-overlong", IMSG_VERIFY, MSG_VERIFY, NULL, 0 },
	{ "publish-github", IMSG_PUBLISH, MSG_PUBLISH, "{\"id\":\"a-1\","
	    "\"forge\":\"github\",\"repository\":\"r\",\"remote\":\"\","
	    "\"pulls\":\"\",\"title\":\"t\","
	    "\"base\":\"main\",\"commit\":\"" HEX40 "\",\"verdict\":\"{}\","
	    "\"verifier_pub\":\"AAAA\","
	    "\"manifest_digest\":\"sha256:" HEX64 "\",\"begin_by\":0}", 0 },
	/* factory-egress: id NUL, n32 endpoint, n16 port, n8 kind, host NUL */
	{ "listen-nofd", IMSG_EGRESS_LISTEN, RAW,
	    "a-1\0" "\0\0\0\0" "\0P" "\x04" "127.0.0.1", 21 },
	{ "listen-trailing", IMSG_EGRESS_LISTEN, RAW,
	    "a-1\0" "\0\0\0\0" "\0P" "\x04" "127.0.0.1\0" "x", 22 },
	{ "listen-kind", IMSG_EGRESS_LISTEN, RAW,
	    "a-1\0" "\0\0\0\0" "\0P" "\x09" "127.0.0.1", 21 },
	{ "listen-name", IMSG_EGRESS_LISTEN, RAW,
	    "a-1\0" "\0\0\0\0" "\0P" "\x01" "../etc", 18 },
	{ "close-id", IMSG_EGRESS_CLOSE, RAW, "../x", 0 },
	{ "egress-resolve", IMSG_RESOLVE, RAW, "{}", 0 },
};

static void
send_msg(int fd, uint32_t type, const void *data, size_t len)
{
	struct imsg_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = sizeof(hdr) + len;
	hdr.pid = getpid();
	if (write(fd, &hdr, sizeof(hdr)) != sizeof(hdr) ||
	    write(fd, data, len) != (ssize_t)len)
		err(1, "write");
}

/* Read until the child's HELLO has come (any bytes will do). */
static void
wait_hello(int fd)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	char		 buf[8192];

	if (poll(&pfd, 1, 10000) != 1 || read(fd, buf, sizeof(buf)) <= 0)
		errx(1, "no HELLO from the child");
}

/* The payload of a mode of msg.h, damaged as it says. */
static char *
wire(size_t m, size_t *len)
{
	char	*p;
	size_t	 n;

	if (strcmp(modes[m].mode, "verify-overlong") == 0) {
		/* The kind, then an id "of" 2^31 bytes, four there. */
		if ((p = malloc(9)) == NULL)
			err(1, NULL);
		memcpy(p, "\x07\x80\0\0\0a-1x", 9);
		p[0] = MSG_VERIFY;
		*len = 9;
		return (p);
	}
	if ((p = msgjson_encode_text(modes[m].kind, modes[m].payload,
	    &n)) == NULL || (p = realloc(p, n + modes[m].len)) == NULL)
		errx(1, "%s: cannot lay it out", modes[m].mode);
	memset(p + n, 'x', modes[m].len);
	*len = n + modes[m].len;
	if (strcmp(modes[m].mode, "provision-kind") == 0)
		p[0] = MSG_READY;
	return (p);
}

int
main(int argc, char *argv[])
{
	char	*cargv[32], *p;
	int	 sv[2], status, i, n = 0;
	size_t	 m, len;
	pid_t	 pid;

	if (argc < 3 || argc > 20)
		errx(2, "usage: prog_badparent binary mode [-V var ...]");
	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
		if (strcmp(modes[m].mode, argv[2]) == 0)
			break;
	if (m == sizeof(modes) / sizeof(modes[0]))
		errx(2, "unknown mode %s", argv[2]);
	cargv[n++] = argv[1];
	cargv[n++] = "-d";
	for (i = 3; i < argc; i++)
		cargv[n++] = argv[i];
	cargv[n] = NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		err(1, "socketpair");
	switch (pid = fork()) {
	case -1:
		err(1, "fork");
	case 0:
		if (dup2(sv[1], PROC_PARENT_FD) == -1)
			_exit(127);
		closefrom(PROC_PARENT_FD + 1);
		execv(cargv[0], cargv);
		_exit(127);
	}
	close(sv[1]);
	wait_hello(sv[0]);
	if (modes[m].kind == RAW) {
		len = modes[m].len != 0 ? modes[m].len :
		    strlen(modes[m].payload) + 1;
		send_msg(sv[0], modes[m].type, modes[m].payload, len);
	} else {
		p = wire(m, &len);
		send_msg(sv[0], modes[m].type, p, len);
		free(p);
	}
	if (waitpid(pid, &status, 0) == -1)
		err(1, "waitpid");
	if (WIFEXITED(status))
		printf("exit %d\n", WEXITSTATUS(status));
	else
		printf("signal %d\n", WTERMSIG(status));
	return (0);
}
