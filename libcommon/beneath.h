/*
 * A path below a directory the caller trusts, opened with no symbolic
 * link followed in any component (not only the last, as O_NOFOLLOW
 * alone would) and no ".." or absolute path leaving it: openat2(2)
 * with RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS.
 *
 * Where openat2 answers ENOSYS (a kernel before 5.6, our own pledge
 * filters, or systemd's RestrictSUIDSGID=, whose filter cannot read
 * openat2's flags and refuses the call whole), the first call finds it
 * out and every later one walks the path by hand instead: one openat(2)
 * of each component with O_PATH | O_NOFOLLOW, refusing a link, "..",
 * an absolute path and (BENEATH_XDEV) another mount, which gives the
 * same guarantee.  A ".." component is refused on both ways (EXDEV),
 * even one that would stay below: no caller needs one, and the two
 * ways then answer alike.
 */
#ifndef FACTORY_BENEATH_H
#define FACTORY_BENEATH_H

#define BENEATH_XDEV	0x1	/* no mount crossed: RESOLVE_NO_XDEV */

/*
 * path below rootfd, with the open(2) flags given (O_NOFOLLOW and
 * O_CLOEXEC always added); the descriptor, or -1 and errno: ELOOP for
 * a link in any component but a last one opened with O_PATH (which
 * opens the link itself), EXDEV for a path that would leave rootfd,
 * ENOENT for an empty path; "." is rootfd itself.
 */
int	open_beneath(int, const char *, int);

/* The same with BENEATH_ flags. */
int	open_beneath_how(int, const char *, int, int);

/*
 * path inside rootfd as if rootfd were "/" (RESOLVE_IN_ROOT): ".."
 * stops at it, an absolute link starts again from it, at most 40 links
 * are followed, and a magic link of /proc is read as its text, never
 * jumped through.  Always by hand: it must work where openat2 is
 * refused (the verifier's filter), and the last component is checked
 * to be no link before it is opened.
 */
int	open_inroot(int, const char *, int);

/* 1 if open_beneath walks by hand (openat2 answered ENOSYS), else 0. */
int	beneath_walks(void);

/*
 * Walk from now on, quietly: pledge(2)'s own filter answers openat2
 * with ENOSYS.  Where something else refuses it (a manager's filter),
 * the first open_beneath logs that it walks.
 */
void	beneath_walk(void);

#endif /* FACTORY_BENEATH_H */
