/*
 * The header of an attempt's git bundle (v2 format, as the worker
 * writes it and git-bundle(1) reads it), parsed strictly, in one place
 * for its two readers, the verifier and the publisher:
 *
 *	# v2 git bundle
 *	-<40 hex>[ <comment>]			exactly one prerequisite
 *	<40 hex> refs/heads/factory/<id>	exactly one ref
 *	<empty line>
 *	PACK...
 *
 * Ids are lower-case hex (git writes them so: one spelling per id).
 * The header, its empty line included, is at most BUNDLE_HDR_MAX bytes
 * and holds no NUL.  Nothing the header says is believed beyond its
 * syntax: the readers check the objects against it.
 */
#ifndef FACTORY_BUNDLEHDR_H
#define FACTORY_BUNDLEHDR_H

#include <stddef.h>

#include "factory.h"

#define BUNDLE_HDR_MAX		(64 * 1024)
#define BUNDLE_HEXSZ		40
#define BUNDLE_SIGNATURE	"# v2 git bundle\n"
#define BUNDLE_REF_PREFIX	"refs/heads/factory/"
#define BUNDLE_PACK_MAGIC	"PACK"

struct bundle_hdr {
	char	 prereq[BUNDLE_HEXSZ + 1];
	char	 commit[BUNDLE_HEXSZ + 1];	/* the ref's */
	char	 attempt[ATTEMPT_ID_MAX + 1];	/* the ref's name after the prefix */
	size_t	 pack_offset;			/* of "PACK" */
};

/* bundlehdr.c */
/*
 * Parse the first len bytes of a bundle (at least the header and the
 * pack's magic, or the whole file if shorter).  0, or -1 with a
 * "bundle: ..." line in err.  buf is not changed and need not be
 * NUL-terminated.
 */
int	bundle_hdr_parse(const void *, size_t, struct bundle_hdr *, char *,
	    size_t);
/* The same from a regular file's start, read with pread(2). */
int	bundle_hdr_read(int, struct bundle_hdr *, char *, size_t);
/*
 * An attempt id as a ref component and a file name: [A-Za-z0-9._-],
 * an alphanumeric first, no "..", no ".lock" end, 1..ATTEMPT_ID_MAX
 * bytes (len of them at s, no NUL needed).
 */
int	bundle_attempt_valid(const char *, size_t);
/* Exactly BUNDLE_HEXSZ lower-case hex digits at s (len available). */
int	bundle_hex40(const char *, size_t);

#endif /* FACTORY_BUNDLEHDR_H */
