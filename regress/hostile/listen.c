/*
 * Host services for the hostile agents to reach: a TCP listener and a
 * UDP socket on 127.0.0.1 (one port), an abstract unix socket and a
 * pathname unix socket (mode 0666, as a world-usable host service
 * would have it).  Prints "ready PORT" once all listen, then one line
 * per connection or datagram it receives, flushed, until SIGTERM.
 * The test asserts that no such line ever appears.
 *
 *	listen NAME PATH
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t	 quit;

static void
on_term(int sig)
{
	quit = 1;
}

static int
unix_listener(const char *name, int abstract)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(name) + 2 > sizeof(sun.sun_path))
		errx(1, "%s: name too long", name);
	if (abstract) {
		memcpy(sun.sun_path + 1, name, strlen(name));
		len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
	} else {
		strlcpy(sun.sun_path, name, sizeof(sun.sun_path));
		len = sizeof(sun);
		unlink(name);
	}
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (bind(s, (struct sockaddr *)&sun, len) == -1)
		err(1, "bind %s%s", abstract ? "@" : "", name);
	if (!abstract && chmod(name, 0666) == -1)
		err(1, "chmod %s", name);
	if (listen(s, 16) == -1)
		err(1, "listen");
	return (s);
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in	 sin;
	struct pollfd		 pfd[4];
	const char		*what[4] = { "tcp", "udp", "abstract", "unix" };
	socklen_t		 len = sizeof(sin);
	char			 buf[256];
	int			 i, c, one = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: listen name path\n");
		return (2);
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((pfd[0].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
	    -1 || setsockopt(pfd[0].fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) == -1 || bind(pfd[0].fd, (struct sockaddr *)&sin,
	    sizeof(sin)) == -1 || listen(pfd[0].fd, 16) == -1 ||
	    getsockname(pfd[0].fd, (struct sockaddr *)&sin, &len) == -1)
		err(1, "tcp listener");
	if ((pfd[1].fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) ==
	    -1 || bind(pfd[1].fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "udp socket");
	pfd[2].fd = unix_listener(argv[1], 1);
	pfd[3].fd = unix_listener(argv[2], 0);
	for (i = 0; i < 4; i++)
		pfd[i].events = POLLIN;
	printf("ready %u\n", ntohs(sin.sin_port));
	fflush(stdout);

	while (!quit) {
		if (poll(pfd, 4, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		for (i = 0; i < 4; i++) {
			if ((pfd[i].revents & POLLIN) == 0)
				continue;
			if (i == 1) {
				if (recv(pfd[i].fd, buf, sizeof(buf), 0) >= 0)
					printf("received udp\n");
			} else if ((c = accept(pfd[i].fd, NULL, NULL)) != -1) {
				printf("accepted %s\n", what[i]);
				close(c);
			}
			fflush(stdout);
		}
	}
	unlink(argv[2]);
	return (0);
}
