#ifndef FACTORY_OVL_H
#define FACTORY_OVL_H

#include <sys/types.h>
#include <stddef.h>

/* Every overlay of an attempt's tree, and the probe's. */
#define OVL_OPTS \
	"volatile,userxattr,redirect_dir=nofollow,metacopy=off,index=off," \
	"xino=off"

/* Each: -1 and why in err on failure. */
int	 ovl_userns(uid_t, gid_t, char *, size_t);	/* its fd */
int	 ovl_idmapped(const char *, int, char *, size_t);	/* a tree fd */
int	 ovl_mount(const char *, int, int, int, char *, size_t);

#endif /* FACTORY_OVL_H */
