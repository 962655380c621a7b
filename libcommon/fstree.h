/*
 * Walks over trees that a child or an agent wrote (fstree.c), shared
 * by root and factory-fswalk: every step relative to an open directory
 * fd, no symbolic link ever followed.
 */
#ifndef FACTORY_FSTREE_H
#define FACTORY_FSTREE_H

#include <sys/types.h>
#include <sys/stat.h>
#include <stddef.h>

#define FS_MAXDEPTH	256

/*
 * Give the tree below and at the directory dfd (closed here), which
 * from made, to uid:gid, refusing anything from did not make and any
 * hard link; why says what stopped it.
 */
int	 fs_chown_fd(int, uid_t, uid_t, gid_t, char *, size_t);
/*
 * The same with flags: FS_CHOWN_FROM_ONLY refuses an entry already
 * uid's too; FS_CHOWN_WHITEOUTS leaves an overlay's whiteouts (0/0
 * character devices), whoever's, as they are.
 */
#define FS_CHOWN_FROM_ONLY	0x1
#define FS_CHOWN_WHITEOUTS	0x2
int	 fs_chown_fd_flags(int, uid_t, uid_t, gid_t, int, char *, size_t);
/*
 * What such a walk may meet (sb, named name): made by from or already
 * uid's, and no second name unless a directory.  -1, why and errno if
 * not.
 */
int	 fs_chown_ok(const struct stat *, uid_t, uid_t, const char *, char *,
	    size_t);
/* The entry name of dfd, not a directory, checked and given as above. */
int	 fs_chown_one(int, const char *, uid_t, uid_t, gid_t, char *, size_t);
/*
 * rm -rf of a path, or the emptying of the directory fd (closed
 * here), without following a link or entering another mount, at any
 * depth; ENOENT is success.  -1 with errno: EBUSY for a mount below.
 */
int	 fs_remove_tree(const char *);
int	 fs_remove_fd(int);
#ifdef FACTORY_TESTBUILD
extern void	(*fs_chown_race)(int, const char *);
#endif

#endif /* FACTORY_FSTREE_H */
