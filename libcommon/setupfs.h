/*
 * The setup store's file system walks (factory-manifest(5) setup:): a
 * setup's outputs copied by descriptor from its run's upper into an
 * entry, with their digest; an entry's seal; the removal of a refused
 * copy.  They run in factory-fswalk's setup jobs (fswalk/setup.c),
 * the seal also where an entry is checked (setup_verify's job), the
 * removal in setup.c's removers.  With them: the key's
 * length-prefixed fields, and the helpers' descriptors and confinement.
 */
#ifndef SETUPFS_H
#define SETUPFS_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#include "crypto.h"

#define SETUP_MAXFILES	16384	/* entries of one cache entry */
#define SETUP_MAXDEPTH	64
#define SETUP_DIGTAG	"factory setup outputs v1"

struct setup_walk {
	struct sha256_ctx	 ctx;
	int			 root;		/* the upper, for links */
	int			 floor;		/* components of the output */
	uint64_t		 files;
	uint64_t		 bytes;
	uint64_t		 maxbytes;
	char			 path[PATH_MAX];	/* relative, for errors */
	char			 epath[400];	/* path, escaped */
	char			*err;
	size_t			 errlen;
};

int	 setup_put(struct sha256_ctx *, const void *, size_t);
int	 setup_putstr(struct sha256_ctx *, const char *);
int	 setup_putv(struct sha256_ctx *, char * const *);
char	**setup_names(int, size_t, size_t *);
void	 setup_freenames(char **);
int	 setup_opendir(int, const char *);
int	 setup_only_outputs(int, const char *, char * const *, char *, size_t,
	    int);
int	 setup_walk_outputs(struct setup_walk *, int, int, char * const *,
	    char *, size_t);
int	 setup_seal(int, char [SHA256_HEX_LEN + 1]);
/*
 * Exactly size bytes of a file (the first descriptor) hashed, and
 * copied to the second unless it is -1: 0; 1 if it had fewer or more;
 * -1 and errno.
 */
int	 setup_copy_bounded(int, int, off_t, char [SHA256_HEX_LEN + 1]);
int	 setup_rm_own(int, int);
int	 setup_child_fds(int, int, int);
int	 setup_child_confine(const char *, const char *, uint32_t, pid_t,
	    char *, size_t);

#endif
