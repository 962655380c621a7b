/*
 * The life every child shares after its policy is applied: one channel,
 * to the parent, driven by libevent.  The parent is trusted by its
 * children but still decoded strictly: a malformed or unexpected
 * message is a broken invariant, so the child exits and the parent
 * starts a fresh one.  EOF means the parent is gone: exit too.
 */
#include <sys/types.h>

#include <event.h>
#include <signal.h>
#include <stdlib.h>

#include "factory.h"
#include "imsgev.h"
#include "log.h"
#include "msg.h"
#include "pledge.h"

static int	(*child_handler)(struct imsg *);

static void
child_dispatch(int fd, short event, void *arg)
{
	struct imsgev	*iev = arg;
	struct imsg	 imsg;
	int		 n, v;

	if (!imsgev_io(iev, event)) {
		log_debug("parent closed the channel, exiting");
		exit(0);
	}
	for (;;) {
		if ((n = imsgbuf_get(&iev->ibuf, &imsg)) == -1)
			fatalx("malformed imsg from the parent");
		if (n == 0)
			return;
		if (imsg_get_type(&imsg) == IMSG_CTL_LOG_VERBOSE) {
			if (imsg_get_data(&imsg, &v, sizeof(v)) == -1)
				fatalx("bad IMSG_CTL_LOG_VERBOSE");
			log_setverbose(v);
		} else if (child_handler(&imsg) == -1)
			fatalx("unexpected imsg %u from the parent",
			    imsg_get_type(&imsg));
		imsg_free(&imsg);
	}
}

/*
 * Set up the channel on fd (from proc_child_init()) and say HELLO with
 * the policy applied.  The caller adds its own events, then runs
 * event_dispatch().  handler returns -1 for a message it does not take.
 */
void
child_start(struct imsgev *iev, int fd, int (*handler)(struct imsg *))
{
	char	*hello;

	child_handler = handler;
	/*
	 * No child dies of what a peer does: a closed socket or pipe is
	 * EPIPE, handled where it happens (the publisher's forge, the
	 * parent's channel).
	 */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("signal SIGPIPE");
	event_init();
	if (imsgev_init(iev, fd, child_dispatch, iev, FACTORY_MAXIMSG) == -1)
		fatal("imsgev_init");
	imsgbuf_allow_fdpass(&iev->ibuf);
	/* Paths of the policy are the operator's bytes: escaped. */
	if ((hello = msg_hello_make(pledge_describe())) == NULL)
		fatal("hello");
	imsgev_compose_str(iev, IMSG_HELLO, 0, hello);
	free(hello);
}
