/*
 * factory-fswalk's setup jobs (supervisord-factory/setup.c says why
 * they are not the loop's): FSWALK_SETUP_STORE copies a setup's
 * outputs from its run's upper (fd 5) into the entry being made
 * (fd 6) and hashes them; FSWALK_SETUP_SEAL takes that entry's seal
 * (fd 5) or checks a stored one's; FSWALK_SETUP_INPUTS hashes a
 * setup's inputs in the pristine tree (fd 5) for its key.  The walks
 * are libcommon/setupfs.c's; the confinement is
 * setup_child_confine's: CAP_DAC_READ_SEARCH alone (the upper's files
 * are the setup uid's, of any mode), the upper read-only and the entry
 * read-write by Landlock, pledge.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <linux/capability.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
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

/*
 * One input in the tree on fd 5, as the key sees it (supervisord-
 * factory/setup.c, setup_key): missing, or a regular file and the
 * sha256 of its content, read no further than its size.  A link
 * anywhere on the way refuses it: the key must describe bytes.  0, or
 * -1 with err.
 */
static int
fswalk_setup_input(const char *path, int *file, char hex[SHA256_HEX_LEN + 1],
    char *err, size_t errlen)
{
	struct stat	 st;
	int		 fd, rc;

	*file = 0;
	fd = open_beneath_how(UP, path, O_RDONLY | O_NOCTTY | O_NONBLOCK |
	    O_CLOEXEC, BENEATH_XDEV);
	if (fd == -1 && (errno == ENOENT || errno == ENOTDIR))
		return (0);
	if (fd == -1) {
		snprintf(err, errlen, "setup.inputs: %s: %s", path,
		    errno == ELOOP ? "a symbolic link, refused" :
		    strerror(errno));
		return (-1);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "setup.inputs: %s: not a regular file",
		    path);
		close(fd);
		return (-1);
	}
	if ((rc = setup_copy_bounded(fd, -1, st.st_size, hex)) != 0) {
		snprintf(err, errlen, "setup.inputs: %s: %s", path, rc == 1 ?
		    "changed while it was read" : strerror(errno));
		close(fd);
		return (-1);
	}
	close(fd);
	*file = 1;
	return (0);
}

void
fswalk_setup_inputs(struct mread *m, struct fswalk_answer *a)
{
	struct fswalk_setup_job	 j;
	char			 err[FSWALK_ERRMAX];
	uint32_t		 i;

	if (fswalk_setup_job_parse(m, &j) == -1)
		fatalx("%s", m->err);
	setproctitle("setup inputs");
	closefrom(UP + 1);
	a->failed = 1;
	err[0] = '\0';
	if (setup_child_confine(j.tmp, NULL, 1U << CAP_DAC_READ_SEARCH,
	    getppid(), err, sizeof(err)) == -1)
		goto fail;
	for (i = 0; j.outputs[i] != NULL; i++)
		if (fswalk_setup_input(j.outputs[i],
		    &a->u.inputs.in[i].file, a->u.inputs.in[i].hex, err,
		    sizeof(err)) == -1)
			goto fail;
	a->u.inputs.n = i;
	a->failed = 0;
	fswalk_setup_job_free(&j);
	return;
 fail:
	memset(&a->u.inputs, 0, sizeof(a->u.inputs));
	fswalk_answer_why(a, err);
	fswalk_setup_job_free(&j);
}

/*
 * What a store left (a cancelled copy, one that lost the race for its
 * key), on fd 5, emptied: confined as the store is but with no
 * capability and that directory alone, read-write.  Its directories
 * are the helper's own and read-only by then: each is made 0700 first.
 * Root removes the emptied directory.
 */
void
fswalk_setup_remove(struct mread *m, struct fswalk_answer *a)
{
	struct fswalk_setup_job	 j;
	char			 err[FSWALK_ERRMAX];

	if (fswalk_setup_job_parse(m, &j) == -1)
		fatalx("%s", m->err);
	setproctitle("setup remove");
	closefrom(UP + 1);
	a->failed = 1;
	err[0] = '\0';
	if (setup_child_confine(NULL, j.tmp, 0, getppid(), err,
	    sizeof(err)) == -1)
		goto fail;
	if (fchmod(UP, 0700) == -1 || setup_rm_own(UP, 0) == -1) {
		snprintf(err, sizeof(err), "setup: %s: not emptied: %s", j.tmp,
		    strerror(errno));
		goto fail;
	}
	a->failed = 0;
	fswalk_setup_job_free(&j);
	return;
 fail:
	fswalk_answer_why(a, err);
	fswalk_setup_job_free(&j);
}
