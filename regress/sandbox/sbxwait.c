/*
 * The sandbox's teardown for the programs that drive it without
 * factoryd (regress/sandbox/prog_sbx, bench/spawn): sandbox_destroy()
 * finished as factoryd's event loop finishes it, while a cgroup still
 * holds an exiting task tried again on a timer (cgroup.c) for half a
 * second.  Blocking, so never linked into factoryd.
 */

#include <sys/types.h>

#include <errno.h>
#include <event.h>
#include <string.h>

#include "../../supervisord-factory/sandbox.h"
#include "sbxwait.h"

struct destroy_res {
	int	 rc;
	char	*msg;
	size_t	 len;
};

static void
destroy_done(void *arg, int rc, const char *err)
{
	struct destroy_res	*d = arg;

	d->rc = rc;
	if (rc == -1)
		strlcpy(d->msg, err, d->len);
}

int
sbx_destroy_wait(struct sandbox *sb, char *msg, size_t len)
{
	struct destroy_res	 d = { 0, msg, len };

	if (sandbox_destroy(sb, msg, len) == 0)
		return (0);
	if (errno != EBUSY)
		return (-1);
	(void)sandbox_destroy_later(sb, 500, destroy_done, &d);
	event_dispatch();
	return (d.rc);
}
