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

/* gitcommon.c */
int	gitc_init(int, char *, size_t);
/* A reason, then libgit2's last error if there is one. */
void	gitc_err(char *, size_t, const char *, ...)
	    __attribute__((__format__ (printf, 3, 4)));

#endif /* FACTORY_GITCOMMON_H */
