/*
 * Landlock, at the highest ABI the running kernel offers.  Debian 12's
 * uapi header stops at ABI 2; the later constants are defined here.
 */
#ifndef FACTORY_LANDLOCK_H
#define FACTORY_LANDLOCK_H

#include <stdint.h>
#include <linux/landlock.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP		(1ULL << 1)	/* ABI 4 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)	/* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL			(1ULL << 1)	/* ABI 6 */
#endif

/* Groups of file rights, as unveil(2) permissions map onto them. */
#define LL_FS_READ	(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_FS_WRITE	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define LL_FS_CREATE	(LANDLOCK_ACCESS_FS_REMOVE_DIR | \
			 LANDLOCK_ACCESS_FS_REMOVE_FILE | \
			 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
			 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)
#define LL_FS_EXEC	LANDLOCK_ACCESS_FS_EXECUTE
#define LL_FS_ALL	((1ULL << 16) - 1)

struct landlock;

int		 landlock_abi(void);	/* 0: no Landlock */
/*
 * A ruleset handling the given rights; rights the kernel's ABI does
 * not know are dropped from the masks (and from later rules).
 */
struct landlock	*landlock_new(uint64_t fs, uint64_t net, uint64_t scoped);
int		 landlock_allow_path(struct landlock *, const char *, uint64_t);
int		 landlock_allow_fd(struct landlock *, int, uint64_t);
int		 landlock_allow_port(struct landlock *, uint16_t, uint64_t);
/* Sets no_new_privs and restricts the calling thread; -1 on failure. */
int		 landlock_restrict(struct landlock *);
void		 landlock_free(struct landlock *);
/* The ruleset's descriptor, to keep it open; -1 if there is none. */
int		 landlock_fd(const struct landlock *);

#endif /* FACTORY_LANDLOCK_H */
