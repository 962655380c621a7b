/*
 * The image walk (imagewalk.c): a walk of a stored or staged tree by
 * factory-fswalk, for image.c's import and verify.
 */
#ifndef IMAGEWALK_H
#define IMAGEWALK_H

#include <stdio.h>

#include "fsjob.h"
#include "imgtree.h"

#define IMAGE_WALKS_MAX	4	/* walks at once: imports and verifies */
/* The deadline: this, and a second for every IMAGE_WALK_RATE bytes. */
#define IMAGE_WALK_MIN_S 60
#define IMAGE_WALK_RATE	(8ULL * 1024 * 1024)	/* of images: max-size */

struct image_walk {
	struct fsjob		 job;
	int			 rootfd;
	uid_t			 owner;
	int			 chown;
	FILE			*out;
	FILE			*canon;
	struct imgwalk_result	 res;
	struct imgwalk_limits	 lim;
	int			 bounded;	/* an import: lim applies */
	char			 err[512];
	int			 rc;
	void			(*done)(struct image_walk *);
	uint32_t		 conn;		/* verify: its connection */
	char			 ref[IMAGE_REF_MAX + 2];
	char			 hex[IMAGE_HEXLEN + 1];
};

/* Starts the walk of w; done() runs once its answer is checked. */
int	 image_walk_start(struct image_walk *);

#endif /* IMAGEWALK_H */
