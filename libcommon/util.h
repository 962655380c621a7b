/*
 * Small shared utilities (util.c).
 */
#ifndef FACTORY_UTIL_H
#define FACTORY_UTIL_H

#include <stdint.h>

#include <stddef.h>

void	errfmt(char *, size_t, const char *, ...)
	    __attribute__((__format__ (printf, 3, 4)));
int	fsync_dir_of(const char *);
int	strv_addf(char ***, size_t *, const char *, ...)
	    __attribute__((__format__ (printf, 3, 4)));

/* The wall clock, ms since the epoch. */
uint64_t now_ms(void);

#endif /* FACTORY_UTIL_H */
