/*
 * A pack received from someone else (a bundle's, in the verifier and
 * the publisher), checked for connectivity once it is indexed.
 *
 * Not by git_indexer's own check (git_indexer_options.verify): that of
 * libgit2 1.5 expects every id a tree names to be an object, a
 * gitlink's commit too, which is an object of another repository.  A
 * pack holding any tree with a submodule in it (git/git's top
 * directory holds sha1collisiondetection) was refused with "packfile
 * is missing 1 objects".  Index with verify off, then call this.
 */
#ifndef FACTORY_GITPACK_H
#define FACTORY_GITPACK_H

#include <stddef.h>

#include <git2.h>

/*
 * gitpack_links(idx_path, all, err, errlen): every object of the pack
 * whose index is idx_path parses, and every id it names (a commit's
 * tree and parents, a tree's entries but gitlinks, a tag's target) is
 * an object of all, of the type it is named as.  all is the object
 * store the pack went into: the pack and the repository's objects,
 * which are taken as complete, as git takes them.  0, or -1 with why.
 */
int	gitpack_links(const char *, git_odb *, char *, size_t);

#endif /* FACTORY_GITPACK_H */
