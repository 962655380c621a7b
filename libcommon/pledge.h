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

#endif /* FACTORY_PLEDGE_H */
