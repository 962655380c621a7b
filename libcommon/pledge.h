/*
 * pledge(2) and unveil(2) for Linux: promises become a seccomp-bpf
 * allowlist (libseccomp), unveiled paths a Landlock ruleset.  A
 * violation kills the process (SIGSYS) or, for a path, fails with
 * EACCES as on OpenBSD.  Both fail closed: if the kernel lacks seccomp
 * filters or Landlock, they return -1 with errno ENOSYS.
 *
 * Promises understood: stdio rpath wpath cpath fattr chown flock unix
 * inet dns recvfd sendfd proc exec id getpw tty.
 */
#ifndef FACTORY_PLEDGE_H
#define FACTORY_PLEDGE_H

int		 unveil(const char *, const char *);	/* (NULL, NULL) locks */
int		 pledge(const char *, const char *);	/* execpromises must be NULL */
/*
 * What this process applied: "promises: ...\nunveil: PATH PERMS\n..."
 * plus the seccomp and Landlock ABI in force.  Static storage.
 */
const char	*pledge_describe(void);
/*
 * Keep only the capabilities in mask (1 << CAP_*, the first 32) in
 * the bounding, effective and permitted sets; none inheritable or
 * ambient.  -1 with errno, the capability in *failed if one would not
 * drop.
 */
int		 caps_keep(uint32_t, int *);

#endif /* FACTORY_PLEDGE_H */
