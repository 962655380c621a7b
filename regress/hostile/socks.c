/*
 * Host unix sockets the old mask missed (it parsed /proc/net/unix):
 * N sockets DIR/s.0 ... DIR/s.N-1, one whose name has a space
 * (DIR/a b.sock), all mode 0666, listening.  Run under unshare -n it
 * binds in another network namespace, which that file never lists.
 * Prints "ready" once all listen, then "accepted" for each connection,
 * flushed, until SIGTERM.  The test asserts no line but "ready".
 *
 *	socks DIR N
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SOCKS_MAX	4096

static volatile sig_atomic_t	 quit;

static void
on_term(int sig)
{
	quit = 1;
}

static int
listener(const char *path)
{
	struct sockaddr_un	 sun;
	int			 s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		errx(1, "%s: name too long", path);
	unlink(path);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		err(1, "socket");
	if (bind(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "bind %s", path);
	if (chmod(path, 0666) == -1)
		err(1, "chmod %s", path);
	if (listen(s, 4) == -1)
		err(1, "listen");
	return (s);
}

int
main(int argc, char *argv[])
{
	static struct pollfd	 pfd[SOCKS_MAX + 1];
	char			 path[256];
	int			 n, i, c;

	if (argc != 3 || (n = atoi(argv[2])) < 0 || n > SOCKS_MAX) {
		fprintf(stderr, "usage: socks dir n\n");
		return (2);
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/s.%d", argv[1], i);
		pfd[i].fd = listener(path);
		pfd[i].events = POLLIN;
	}
	snprintf(path, sizeof(path), "%s/a b.sock", argv[1]);
	pfd[n].fd = listener(path);
	pfd[n].events = POLLIN;
	printf("ready\n");
	fflush(stdout);
	while (!quit) {
		if (poll(pfd, n + 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		for (i = 0; i <= n; i++)
			if ((pfd[i].revents & POLLIN) &&
			    (c = accept(pfd[i].fd, NULL, NULL)) != -1) {
				printf("accepted %d\n", i);
				fflush(stdout);
				close(c);
			}
	}
	return (0);
}
