/*
 * libgit2 set up the same way in every process that links it (worker,
 * verifier, reconciler, publisher).  Only those link libgit2: this
 * file's object is never pulled into factoryd or factoryctl.
 */
#ifndef FACTORY_GITCOMMON_H
#define FACTORY_GITCOMMON_H

#include <stddef.h>

#define GITC_OWNER_CHECK	0x01	/* refuse repositories of other uids */
#define GITC_STRICT		0x02	/* validate objects we create */
#define GITC_FSYNC		0x04	/* fsync objects and refs we write */

/* A change below it would run on the forge: refused by both checks. */
#define GITC_WORKFLOWS		".github/workflows/"

/* gitcommon.c */
int	gitc_init(int, char *, size_t);
/* A reason, then libgit2's last error if there is one; returns -1. */
int	gitc_err(char *, size_t, const char *, ...)
	    __attribute__((__format__ (printf, 3, 4)));
/* One path component (len bytes) that a checkout would take as .git. */
int	gitc_is_dotgit(const char *, size_t);

#endif /* FACTORY_GITCOMMON_H */
