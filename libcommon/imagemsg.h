/*
 * The messages between the parent and factory-image (image/), all of
 * fixed size or one NUL-terminated, escaped (esc.h) string, decoded
 * with exact sizes by both sides.
 */
#ifndef FACTORY_IMAGEMSG_H
#define FACTORY_IMAGEMSG_H

#include <stdint.h>

#define IMAGE_IDMAX		16	/* "i-4294967295" */
#define IMAGE_REASONMAX		1024	/* an escaped reason, with its NUL */
#define IMAGE_STRIPMAX		100	/* stripped entries listed, at most */

/* parent -> image, with the archive as an fd */
struct image_import {
	char		 id[IMAGE_IDMAX];	/* the staging directory */
	uint64_t	 max_bytes;
	uint64_t	 max_entries;
	uint32_t	 max_depth;
	uint32_t	 max_path;
};

/* image -> parent, at most a few a second */
struct image_progress {
	uint64_t	 bytes;
	uint64_t	 entries;
};

/* What was done to an entry instead of writing it as it came. */
enum image_strip {
	IMAGE_STRIP_SETID = 1,		/* setuid/setgid cleared */
	IMAGE_STRIP_CHR,		/* a character device, skipped */
	IMAGE_STRIP_BLK,		/* a block device, skipped */
	IMAGE_STRIP_FIFO,		/* a FIFO, skipped */
	IMAGE_STRIP_SOCK,		/* a socket, skipped */
	IMAGE_STRIP_MAX
};

/*
 * image -> parent: IMAGE_STRIPPED is a uint32 kind, then the entry's
 * escaped path, NUL-terminated (at most IMAGE_STRIPMAX of them);
 * IMAGE_DONE is struct image_done; IMAGE_FAILED an escaped reason.
 */
struct image_done {
	uint64_t	 entries;	/* archive entries read */
	uint64_t	 bytes;		/* of file contents written */
	uint64_t	 stripped;	/* entries stripped, also those unlisted */
	uint32_t	 oci;		/* it was an OCI image layout */
	uint32_t	 layers;
};

#endif /* FACTORY_IMAGEMSG_H */
