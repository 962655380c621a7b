/*
 * factory-fswalk's setup jobs (supervisord-factory/setup.c says why
 * they are not the loop's): FSWALK_SETUP_STORE copies a setup's
 * outputs from its run's upper (fd 5) into the entry being made
 * (fd 6) and hashes them; FSWALK_SETUP_SEAL takes that entry's seal
 * (fd 5).  The walks are libcommon/setupfs.c's; the confinement is
 * setup_child_confine's: CAP_DAC_READ_SEARCH alone (the upper's files
 * are the setup uid's, of any mode), the upper read-only and the entry
 * read-write by Landlock, pledge.
 */
#include <sys/types.h>
#include <linux/capability.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "esc.h"
#include "factory.h"
#include "fswalk.h"
#include "log.h"
#include "setupfs.h"

#define UP	FSWALK_FD_ARG
#define DST	(FSWALK_FD_ARG + 1)

void
fswalk_setup_store(struct mread *m, struct fswalk_answer *a)
{
	struct fswalk_setup_job	 j;
	struct setup_walk	*w;
	uint8_t			 md[SHA256_LEN];
	char			 why[512], err[FSWALK_ERRMAX];

	if (fswalk_setup_job_parse(m, &j) == -1)
		fatalx("%s", m->err);
	setproctitle("setup store");
	closefrom(DST + 1);
	a->failed = 1;
	err[0] = why[0] = '\0';
	if (setup_child_confine(j.upper, j.tmp, 1U << CAP_DAC_READ_SEARCH,
	    getppid(), err, sizeof(err)) == -1)
		goto fail;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, sizeof(err), "setup store: no memory");
		goto fail;
	}
	w->err = why;
	w->errlen = sizeof(why);
	w->root = UP;
	/* An entry larger than the whole cache could never be kept. */
	w->maxbytes = j.max;
	if (setup_only_outputs(UP, "", j.outputs, err, sizeof(err), 0) ==
	    -1 || setup_walk_outputs(w, UP, DST, j.outputs, err,
	    sizeof(err)) == -1 || sha256_final(&w->ctx, md) == -1) {
		if (err[0] == '\0')
			snprintf(err, sizeof(err), "setup: sha256 failed");
		(void)setup_rm_own(DST, 0);
		goto fail;
	}
	hex_encode(md, sizeof(md), a->u.setup.hex);
	a->u.setup.files = w->files;
	a->u.setup.bytes = w->bytes;
	a->failed = 0;
	/* Test builds: a store that holds until it is killed. */
	while (faultpoint("setup:store-hold"))
		(void)poll(NULL, 0, -1);
	fswalk_setup_job_free(&j);
	return;
 fail:
	fswalk_answer_why(a, err);
	fswalk_setup_job_free(&j);
}

void
fswalk_setup_seal(struct mread *m, struct fswalk_answer *a)
{
	struct fswalk_setup_job	 j;
	char			 err[FSWALK_ERRMAX];

	if (fswalk_setup_job_parse(m, &j) == -1)
		fatalx("%s", m->err);
	setproctitle("setup seal");
	closefrom(UP + 1);
	a->failed = 1;
	err[0] = '\0';
	if (setup_child_confine(j.tmp, NULL, 1U << CAP_DAC_READ_SEARCH,
	    getppid(), err, sizeof(err)) == -1)
		goto fail;
	if (setup_seal(UP, a->u.setup.hex) == -1) {
		snprintf(err, sizeof(err), "setup: %s: cannot be sealed",
		    j.tmp);
		goto fail;
	}
	a->failed = 0;
	fswalk_setup_job_free(&j);
	return;
 fail:
	fswalk_answer_why(a, err);
	fswalk_setup_job_free(&j);
}
