/*
 * Image trees: the checks every archive entry's path passes before
 * factory-image writes it, and the canonical form of a stored tree,
 * whose SHA-256 is the image's digest (factoryctl(8), IMAGES).
 *
 * The canonical form is a pre-order walk below the root (the root
 * itself is not listed), each directory's names sorted by their bytes
 * (unsigned, as strcmp(3)).  Every entry is one record:
 *
 *	PATH NUL TYPE SP MODE SP UID SP GID SP SIZE SP HASH LF
 *
 * PATH the entry's path below the root, components joined by '/';
 * TYPE 'd' (directory), 'f' (regular file) or 'l' (symbolic link);
 * MODE the permission bits (mode & 07777) in four octal digits; UID,
 * GID and SIZE in decimal (SIZE 0 for a directory, the target's length
 * for a link); HASH the lower-case hex SHA-256 of the contents (f) or
 * of the link target's bytes (l), "-" for a directory.  A path holds
 * no NUL and the rest of a record no LF, so a stream of records reads
 * back unambiguously.  Hard links are regular files like any other.
 */
#ifndef FACTORY_IMGTREE_H
#define FACTORY_IMGTREE_H

#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>

#define IMG_PATHMAX	4095	/* the bound of max-path */
#define IMG_DEPTHMAX	1024	/* the bound of max-depth */

/*
 * An archive entry's path made canonical into out (outlen >= maxpath +
 * 1): leading "./" and "/"-runs dropped inside, "." components and a
 * trailing '/' removed.  1 if it names the root itself, 0 for a path
 * below it, -1 with a reason: absolute, "..", a component longer than
 * NAME_MAX, longer than maxpath bytes, deeper than maxdepth, empty.
 */
int	 imgpath_clean(const char *, char *, size_t, size_t, int, char *,
	    size_t);

struct imgwalk_result {
	char		 hex[65];	/* the digest */
	uint64_t	 entries;	/* records */
	uint64_t	 files;		/* regular files */
	uint64_t	 bytes;		/* their sizes */
};

/*
 * Walk the tree at rootfd and compute its digest.  Nothing is ever
 * followed: every entry is opened beneath rootfd with no symbolic link
 * resolved (open_beneath, beneath.h), without one descriptor per level, so any depth
 * works.  Entries must be directories, regular files or links owned by
 * owner; a regular file with more names than the tree holds is refused
 * (a hard link to outside).  With chown, each entry is given to 0:0 as
 * it is passed and its record says 0:0; otherwise the record says what
 * the entry has.  Records go to out if it is not NULL.  With canon not
 * NULL, each record is compared with the next of canon (a stored
 * form) and the first difference ends the walk: -1, and diff says it.
 * -1 and err for any other failure.
 */
int	 imgwalk(int, uid_t, int, FILE *, FILE *, struct imgwalk_result *,
	    char *, size_t);

/* The bounds of images: in factoryd.conf(5), as the walker counts them. */
struct imgwalk_limits {
	uint64_t	 max_entries;	/* records */
	uint64_t	 max_bytes;	/* of regular files, a hard link once */
	uint32_t	 max_depth;	/* components of a path */
	uint32_t	 max_path;	/* bytes of a path */
};

/*
 * imgwalk, refusing a tree past any of lim (NULL: none) with the
 * bound's name: the parent's own check of what factory-image wrote,
 * whatever factory-image says it enforced.
 */
int	 imgwalk_bounded(int, uid_t, int, FILE *, FILE *,
	    const struct imgwalk_limits *, struct imgwalk_result *, char *,
	    size_t);

#endif /* FACTORY_IMGTREE_H */
