/*
 * factory-worker: libgit2 work on repositories and attempt trees: provisioning, collecting, bundles.
 * Started only by factoryd, with its channel on fd 3.
 */
#include <sys/types.h>

#include <event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "pledge.h"

static void	worker_dispatch_parent(int, short, void *);

static struct imsgev	 iev_parent;

int
main(int argc, char *argv[])
{
	int	 fd;

	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_WORKER, argc, argv);

	event_init();
	if (imsgev_init(&iev_parent, fd, worker_dispatch_parent, NULL,
	    FACTORY_MAXIMSG) == -1)
		fatal("imsgev_init");
	imsgbuf_allow_fdpass(&iev_parent.ibuf);
	imsgev_compose_str(&iev_parent, IMSG_HELLO, 0, pledge_describe());

	event_dispatch();
	return (0);
}

/*
 * The parent is the only peer.  Anything malformed from it is a
 * broken invariant: exit and let it restart us.
 */
static void
worker_dispatch_parent(int fd, short event, void *arg)
{
	struct imsg	 imsg;
	int		 n, v;

	if (!imsgev_io(&iev_parent, event)) {
		log_debug("parent closed the channel, exiting");
		exit(0);
	}
	for (;;) {
		if ((n = imsgbuf_get(&iev_parent.ibuf, &imsg)) == -1)
			fatalx("malformed imsg from the parent");
		if (n == 0)
			return;
		switch (imsg_get_type(&imsg)) {
		case IMSG_CTL_LOG_VERBOSE:
			if (imsg_get_data(&imsg, &v, sizeof(v)) == -1)
				fatalx("bad IMSG_CTL_LOG_VERBOSE");
			log_setverbose(v);
			break;
		default:
			fatalx("unexpected imsg %u", imsg_get_type(&imsg));
		}
		imsg_free(&imsg);
	}
}
