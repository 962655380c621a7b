/*
 * Landlock through its raw system calls.  Debian 12 ships neither
 * wrappers nor the uapi of ABI 4 and later, so the attribute layouts
 * the kernel expects from those ABIs are spelled out here.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "landlock.h"
#include "probemsg.h"

#ifndef LANDLOCK_RULE_NET_PORT
#define LANDLOCK_RULE_NET_PORT	2
#endif

/*
 * The ruleset attribute as of ABI 6.  Older kernels take a prefix of
 * it: we pass the size the running ABI knows.
 */
struct ll_ruleset_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;	/* ABI 4 */
	uint64_t	scoped;			/* ABI 6 */
};

struct ll_net_port_attr {
	uint64_t	allowed_access;
	uint64_t	port;
};

struct landlock {
	int		fd;	/* -1: the ABI handles none of the rights */
	uint64_t	fs;
	uint64_t	net;
	uint64_t	scoped;
};

/* Rights that make sense on something that is not a directory. */
#define LL_FS_FILE	(LANDLOCK_ACCESS_FS_EXECUTE | \
			 LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | \
			 LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)

int
landlock_abi(void)
{
	static int	 abi = -1;
	long		 rc;

	if (abi == -1) {
		rc = syscall(SYS_landlock_create_ruleset, NULL, 0,
		    LANDLOCK_CREATE_RULESET_VERSION);
		abi = rc < 0 ? 0 : (int)rc;
	}
	return (abi);
}

/* The file rights each ABI added; MAKE_SYM (bit 12) ends ABI 1. */
static uint64_t
ll_fs_known(int abi)
{
	uint64_t	 known = 0;

	if (abi >= 1)
		known = (1ULL << 13) - 1;
	if (abi >= 2)
		known |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		known |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		known |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return (known);
}

struct landlock *
landlock_new(uint64_t fs, uint64_t net, uint64_t scoped)
{
	struct ll_ruleset_attr	 attr = { 0 };
	struct landlock		*ll;
	size_t			 size;
	int			 abi, saved;

	if ((abi = landlock_abi()) == 0) {
		errno = ENOSYS;
		return (NULL);
	}
	if ((ll = calloc(1, sizeof(*ll))) == NULL)
		return (NULL);
	ll->fd = -1;
	ll->fs = fs & ll_fs_known(abi);
	/* A test build may pretend the kernel has no TCP rules. */
	ll->net = abi >= 4 && !probe_faked("landlock-net") ? net &
	    (LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP) :
	    0;
	ll->scoped = abi >= 6 ? scoped & (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
	    LANDLOCK_SCOPE_SIGNAL) : 0;
	if (ll->fs == 0 && ll->net == 0 && ll->scoped == 0)
		return (ll);	/* the kernel refuses an empty ruleset */

	attr.handled_access_fs = ll->fs;
	attr.handled_access_net = ll->net;
	attr.scoped = ll->scoped;
	if (abi >= 6)
		size = sizeof(attr);
	else if (abi >= 4)
		size = offsetof(struct ll_ruleset_attr, scoped);
	else
		size = offsetof(struct ll_ruleset_attr, handled_access_net);
	ll->fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ll->fd == -1) {
		saved = errno;
		free(ll);
		errno = saved;
		return (NULL);
	}
	return (ll);
}

/*
 * Rights are cut to what the ruleset handles and, for anything but a
 * directory, to the file rights, so callers may pass a directory's set
 * for a file.  A rule left with no right is not an error: it adds
 * nothing, as the kernel would.
 */
int
landlock_allow_fd(struct landlock *ll, int fd, uint64_t rights)
{
	struct landlock_path_beneath_attr pb;
	struct stat			 sb;

	if (fstat(fd, &sb) == -1)
		return (-1);
	rights &= ll->fs;
	if (!S_ISDIR(sb.st_mode))
		rights &= LL_FS_FILE;
	if (rights == 0 || ll->fd == -1)
		return (0);
	pb.allowed_access = rights;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ll->fd, LANDLOCK_RULE_PATH_BENEATH,
	    &pb, 0) == -1)
		return (-1);
	return (0);
}

int
landlock_allow_path(struct landlock *ll, const char *path, uint64_t rights)
{
	int	 fd, rc, saved;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return (-1);
	rc = landlock_allow_fd(ll, fd, rights);
	saved = errno;
	close(fd);
	errno = saved;
	return (rc);
}

int
landlock_allow_port(struct landlock *ll, uint16_t port, uint64_t rights)
{
	struct ll_net_port_attr	 np;

	rights &= ll->net;
	if (rights == 0 || ll->fd == -1)
		return (0);
	np.allowed_access = rights;
	np.port = port;
	if (syscall(SYS_landlock_add_rule, ll->fd, LANDLOCK_RULE_NET_PORT,
	    &np, 0) == -1)
		return (-1);
	return (0);
}

int
landlock_restrict(struct landlock *ll)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return (-1);
	if (ll->fd == -1)
		return (0);	/* nothing this kernel could enforce */
	if (syscall(SYS_landlock_restrict_self, ll->fd, 0) == -1)
		return (-1);
	return (0);
}

int
landlock_fd(const struct landlock *ll)
{
	return (ll == NULL ? -1 : ll->fd);
}

void
landlock_free(struct landlock *ll)
{
	int	 saved = errno;

	if (ll == NULL)
		return;
	if (ll->fd != -1)
		close(ll->fd);
	free(ll);
	errno = saved;
}
