/*
 * A path below a directory the caller trusts, opened with no symbolic
 * link followed in any component (not only the last, as O_NOFOLLOW
 * alone would) and no ".." or absolute path leaving it: openat2(2)
 * with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS.
 */
#ifndef FACTORY_BENEATH_H
#define FACTORY_BENEATH_H

/*
 * path below rootfd, with the open(2) flags given (O_NOFOLLOW and
 * O_CLOEXEC always added); the descriptor, or -1 and errno: ELOOP for
 * a link in any component, EXDEV for a path that would leave rootfd.
 */
int	open_beneath(int, const char *, int);

#endif /* FACTORY_BENEATH_H */
