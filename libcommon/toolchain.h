/*
 * The toolchain digest of factory-manifest(5): each listed path
 * resolved beneath an image's root (no symbolic link leads outside
 * it), hashed, and the lines "PATH\0HEX\n" hashed in the listed order.
 */
#ifndef FACTORY_TOOLCHAIN_H
#define FACTORY_TOOLCHAIN_H

#include <stddef.h>

#include "crypto.h"

/*
 * rootfd: the image's rootfs directory.  0 and the digest in hex, or
 * -1 and a one-line reason naming the path.
 */
int	toolchain_digest(int, char *const *, char [SHA256_HEX_LEN + 1],
	    char *, size_t);

#endif /* FACTORY_TOOLCHAIN_H */
