/*
 * open_beneath (beneath.h).
 */
#include <sys/types.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"

int
open_beneath(int rootfd, const char *path, int flags)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS;
	return ((int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how)));
}
