/*
 * factory-reconciler: lists what exists, read-only, for the parent to
 * compare with its journal.
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
#include "reconciler.h"

static int	reconciler_imsg(struct imsg *);

static struct imsgev	 iev_parent;
static struct inv_config conf;

int
main(int argc, char *argv[])
{
	const char	*uids;
	int		 fd;

	/*
	 * Only a list of every -V value: proc_child_init() checks the
	 * command line and keeps the first value of each name.
	 */
	recon_vars(argc, argv, &conf);

	/* Policy first: fd 3 check, closefrom, unveil, pledge. */
	fd = proc_child_init(PROC_RECONCILER, argc, argv);

	if ((uids = proc_getvar("attempt_uids")) != NULL) {
		if (inv_parse_uids(uids, &conf.uid_lo, &conf.uid_hi) == -1)
			fatalx("attempt_uids %s: expected LO-HI", uids);
		conf.have_uids = 1;
	}
	conf.cgroot = "/sys/fs/cgroup";
	if (proc_getvar("cgroup_parent") != NULL)
		inv_set_cgparent(proc_getvar("cgroup_parent"));
	conf.procroot = "/proc";
	conf.mountinfo = "/proc/self/mountinfo";
	if (inv_git_init() == -1)
		fatalx("libgit2 initialisation failed");

	child_start(&iev_parent, fd, reconciler_imsg);

	event_dispatch();
	return (0);
}

/* Requests from the parent; -1 for anything else. */
static int
reconciler_imsg(struct imsg *imsg)
{
	return (recon_imsg(&iev_parent, imsg, &conf));
}
