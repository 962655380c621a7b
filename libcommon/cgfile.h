#ifndef FACTORY_CGFILE_H
#define FACTORY_CGFILE_H

#include <stddef.h>

/* Does the space- or comma-separated list s contain word w? */
int	 cgfile_hasword(const char *, const char *);
/* DIR/FILE's first len - 1 bytes, NUL-terminated; -1 and errno. */
int	 cgfile_read(const char *, const char *, char *, size_t);
/* val written to DIR/FILE in one write; -1, errno and why in err. */
int	 cgfile_write(const char *, const char *, const char *, char *,
	    size_t);

#endif /* FACTORY_CGFILE_H */
