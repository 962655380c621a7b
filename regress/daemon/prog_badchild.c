/*
 * A hostile stand-in for a child process, or a hostile control
 * client.  As a child (installed in a test libexec under a child's
 * name), it reads its misbehaviour from "badchild.mode" beside its
 * binary: "type" sends a valid HELLO then an unknown imsg type,
 * "huge" a header whose length is beyond any maximum, "hello2" two
 * HELLOs.  As "prog_badchild ctl SOCKET" it connects to a control
 * socket and sends a truncated-then-invalid request.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"

static void
send_msg(int fd, uint32_t type, uint32_t len, const void *data, size_t dlen)
{
	struct imsg_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = len;
	hdr.pid = getpid();
	if (write(fd, &hdr, sizeof(hdr)) != sizeof(hdr))
		err(1, "write");
	if (dlen > 0 && write(fd, data, dlen) != (ssize_t)dlen)
		err(1, "write");
}

static void
hello(int fd)
{
	const char	*t = "promises: (hostile test child)";

	send_msg(fd, IMSG_HELLO, sizeof(struct imsg_hdr) + strlen(t) + 1, t,
	    strlen(t) + 1);
}

static int
ctl(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;
	char			 junk[64];

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(2, "%s", path);
	send_msg(s, IMSG_CTL_STATUS, 0x7ffffff0, NULL, 0);
	/* The daemon must close us: read returns 0. */
	if (read(s, junk, sizeof(junk)) != 0)
		errx(1, "control socket still open after garbage");
	printf("closed\n");
	return (0);
}

int
main(int argc, char *argv[])
{
	char	 self[PATH_MAX], mode[32] = "";
	FILE	*f;
	ssize_t	 n;
	char	 buf[256];

	if (argc == 3 && strcmp(argv[1], "ctl") == 0)
		return (ctl(argv[2]));

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		err(1, "readlink");
	self[n] = '\0';
	strlcat(self, ".mode", sizeof(self));
	if ((f = fopen(self, "r")) == NULL)
		err(1, "%s", self);
	if (fgets(mode, sizeof(mode), f) == NULL)
		errx(1, "%s: empty", self);
	fclose(f);
	mode[strcspn(mode, "\n")] = '\0';

	if (strcmp(mode, "type") == 0) {
		hello(PROC_PARENT_FD);
		send_msg(PROC_PARENT_FD, 9999, sizeof(struct imsg_hdr), NULL, 0);
	} else if (strcmp(mode, "huge") == 0) {
		send_msg(PROC_PARENT_FD, IMSG_HELLO, 0x7ffffff0, NULL, 0);
	} else if (strcmp(mode, "hello2") == 0) {
		hello(PROC_PARENT_FD);
		hello(PROC_PARENT_FD);
	} else
		errx(1, "unknown mode %s", mode);
	/* Wait to be killed. */
	while (read(PROC_PARENT_FD, buf, sizeof(buf)) > 0)
		;
	return (0);
}
