/*
 * The image store: pinned root file systems for agents, by digest.
 *
 * Under the state directory, all root-owned:
 *
 *	images/sha256/HEX/rootfs/	the tree, read-only to everyone
 *	images/sha256/HEX/meta.json	{"digest": "sha256:HEX", "files": N,
 *					 "bytes": N, "imported": T,
 *					 "stripped": [...]}
 *	images/names/NAME		one line, "sha256:HEX"
 *
 * HEX is the digest over the tree's canonical form (factoryctl(8),
 * IMAGES).  A name is a label the operator gave at import; a manifest
 * that names one is resolved to its digest at submission, and only the
 * digest is used after that.
 */
#ifndef FACTORY_IMAGE_H
#define FACTORY_IMAGE_H

#include <stddef.h>

#define IMAGE_HEXLEN	64
#define IMAGE_NAME_MAX	64	/* [A-Za-z0-9._-], not starting with . or - */
#define IMAGE_REF_MAX	(IMAGE_NAME_MAX + 8 + IMAGE_HEXLEN)

/*
 * A reference as a manifest writes it: NAME, NAME@sha256:HEX or
 * sha256:HEX.  On success hex holds the digest of an image in the store
 * and *pinned says whether the reference carried the digest itself.
 * -1 and a one-line reason in err otherwise.
 */
int	image_resolve(const char *, char [IMAGE_HEXLEN + 1], int *, char *,
	    size_t);
/* The image's rootfs directory; -1 if it is not in the store. */
int	image_rootfs(const char *, char *, size_t);
/* 1 if a non-terminal attempt's frozen manifest uses that digest (attempt.c). */
int	attempt_uses_image(const char *);
/* A syntactically valid image name. */

/*
 * Is the image in use by an attempt that is not over?  image rm refuses
 * then.  image.c has a weak default (no); attempt.c provides the real
 * one once manifests name images (m->environment.digest).
 */
int	attempt_uses_image(const char *);

struct ctl_conn;
struct child;
struct imsg;
/* The store's directories, before the children start. */
void	image_init(void);
/* factoryctl image: import (root, with the archive's fd), rm, verify, list. */
void	image_ctl_import(struct ctl_conn *, struct imsg *);
void	image_ctl_rm(struct ctl_conn *, struct imsg *);
void	image_ctl_verify(struct ctl_conn *, struct imsg *);
void	image_ctl_list(struct ctl_conn *, struct imsg *);
/* factory-image's row of the parent's table (factoryd.c). */
int	dispatch_image(struct child *, struct imsg *, char *, size_t);
void	image_ready(struct child *);
void	image_lost(struct child *);

#endif /* FACTORY_IMAGE_H */
