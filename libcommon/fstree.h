/*
 * Walks over trees that a child or an agent wrote (fstree.c), shared
 * by root and factory-fswalk: every step relative to an open directory
 * fd, no symbolic link ever followed.
 */
#ifndef FACTORY_FSTREE_H
#define FACTORY_FSTREE_H

#include <sys/types.h>
#include <stddef.h>

#define FS_MAXDEPTH	256

/*
 * Give the tree below and at the directory dfd (closed here), which
 * from made, to uid:gid, refusing anything from did not make and any
 * hard link; why says what stopped it.
 */
int	 fs_chown_fd(int, uid_t, uid_t, gid_t, char *, size_t);

#endif /* FACTORY_FSTREE_H */
