/*
 * A walk of a stored or staged tree (imgtree.c) runs in factory-fswalk
 * (fsjob.c): hashing an image of hundreds of megabytes must not hold
 * the event loop, and what it reads was written by an agent or an
 * image, so none of root's memory is where it runs.  It is given the
 * descriptors root opened already (the tree, the entry list) and
 * confines itself to them.  Its answer is checked here, in form and
 * against an import's bounds, before done() sees it; past its
 * deadline it is killed and its import or verify fails by that name.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factoryd.h"
#include "image.h"
#include "imagewalk.h"
#include "log.h"

static int	 image_walks;		/* running */

/* The answer, believed only in form and within an import's bounds. */
static void
image_walk_done(struct fsjob *j)
{
	struct image_walk	*w = j->arg;
	struct fswalk_answer	 a;

	image_walks--;
	if (fsjob_answer(j, FSWALK_IMAGE, &a, w->err, sizeof(w->err)) == -1)
		w->rc = -1;
	else if (!a.failed && w->bounded &&
	    (a.u.image.entries > w->lim.max_entries ||
	    a.u.image.bytes > w->lim.max_bytes)) {
		w->rc = -1;
		snprintf(w->err, sizeof(w->err), "walk process (pid %d) "
		    "answered out of form, exit status 0", (int)j->pid);
	} else {
		w->rc = a.failed ? -1 : 0;
		w->res = a.u.image;
		strlcpy(w->err, a.err, sizeof(w->err));
	}
	w->done(w);
}

/*
 * Seconds a walk may take: enough for the largest tree an import may
 * leave, hashed at IMAGE_WALK_RATE (a slow disk).  Test builds take
 * FACTORY_TEST_IMAGE_WALK_S instead.
 */
static long long
image_walk_deadline(void)
{
	return (fsjob_deadline("FACTORY_TEST_IMAGE_WALK_S", IMAGE_WALK_MIN_S +
	    (long long)(env->conf->image_max_size / IMAGE_WALK_RATE)));
}

/* 0 and done() later, or -1 (nothing started, w is the caller's). */
int
image_walk_start(struct image_walk *w)
{
	struct fswalk_image_job	 job;
	struct ibuf		*b;
	int			 fds[2], rc;

	if (image_walks == IMAGE_WALKS_MAX) {
		errno = EBUSY;
		return (-1);
	}
	memset(&job, 0, sizeof(job));
	job.owner = w->owner;
	job.chown = w->chown;
	job.bounded = w->bounded;
	job.lim = w->lim;
	job.out = w->out != NULL;
	job.canon = w->canon != NULL;
	if ((b = fswalk_image_job_compose(&job)) == NULL)
		return (-1);
	/* Nothing buffered may be written twice, by both processes. */
	if (w->out != NULL)
		(void)fflush(w->out);
	fds[0] = w->rootfd;
	fds[1] = w->out != NULL ? fileno(w->out) : w->canon != NULL ?
	    fileno(w->canon) : -1;
	w->job.what = "image walk";
	w->job.done = image_walk_done;
	w->job.arg = w;
	rc = fsjob_start(&w->job, b, fds, fds[1] == -1 ? 1 : 2,
	    image_walk_deadline());
	ibuf_free(b);
	if (rc == 0)
		image_walks++;
	return (rc);
}
