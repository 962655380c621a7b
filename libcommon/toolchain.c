/*
 * The toolchain digest (toolchain.h).  Paths are resolved inside the
 * image's root as openat2(2)'s RESOLVE_IN_ROOT would (open_inroot,
 * beneath.h: by hand, since the verifier's seccomp filter answers
 * openat2 with ENOSYS).  Only a regular file is read, opened without
 * blocking, so a FIFO cannot hold the walk.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "toolchain.h"

/*
 * Bytes hashed for one digest, all files together: the parent hashes
 * at submission, in its event loop (about 0.8 s at this bound).
 */
#define TC_MAXBYTES	(1024LL * 1024 * 1024)

/*
 * The file at path in rootfd, open for reading, regular: looked at
 * (O_PATH) before it is opened, so no device node is ever opened (the
 * host's root may be the image), then checked to be the same file.
 */
static int
tc_open(int rootfd, const char *path)
{
	struct stat	 st, st2;
	int		 pfd, fd;

	if ((pfd = open_inroot(rootfd, path, O_PATH)) == -1)
		return (-1);
	if (fstat(pfd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(pfd);
		return (errno = EINVAL, -1);
	}
	close(pfd);
	if ((fd = open_inroot(rootfd, path, O_RDONLY | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		return (-1);
	if (fstat(fd, &st2) == -1 || st2.st_dev != st.st_dev ||
	    st2.st_ino != st.st_ino) {
		close(fd);
		return (errno = EINVAL, -1);
	}
	return (fd);
}

int
toolchain_digest(int rootfd, char *const *paths,
    char out[SHA256_HEX_LEN + 1], char *err, size_t errlen)
{
	struct sha256_ctx	 ctx;
	struct stat		 st;
	uint8_t			 md[SHA256_LEN];
	char			 hex[SHA256_HEX_LEN + 1];
	long long		 total = 0;
	size_t			 i;
	int			 fd;

	if (sha256_init(&ctx) == -1) {
		snprintf(err, errlen, "toolchain: sha256");
		return (-1);
	}
	for (i = 0; paths != NULL && paths[i] != NULL; i++) {
		if ((fd = tc_open(rootfd, paths[i])) == -1) {
			snprintf(err, errlen, "toolchain: %s: %s in the image",
			    paths[i], errno == EINVAL || errno == EISDIR ?
			    "not a regular file" : strerror(errno));
			sha256_abort(&ctx);
			return (-1);
		}
		if (fstat(fd, &st) == -1 || (total += st.st_size) >
		    TC_MAXBYTES) {
			snprintf(err, errlen, "toolchain: %s: more than %lld "
			    "bytes in all", paths[i], TC_MAXBYTES);
			close(fd);
			sha256_abort(&ctx);
			return (-1);
		}
		if (sha256_fd(fd, hex, NULL) == -1) {
			snprintf(err, errlen, "toolchain: %s: read: %s",
			    paths[i], strerror(errno));
			close(fd);
			sha256_abort(&ctx);
			return (-1);
		}
		close(fd);
		sha256_update(&ctx, paths[i], strlen(paths[i]) + 1);
		sha256_update(&ctx, hex, SHA256_HEX_LEN);
		sha256_update(&ctx, "\n", 1);
	}
	if (sha256_final(&ctx, md) == -1) {
		snprintf(err, errlen, "toolchain: sha256");
		return (-1);
	}
	hex_encode(md, sizeof(md), out);
	return (0);
}
