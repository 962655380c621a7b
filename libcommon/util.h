/*
 * Small shared utilities (util.c).
 */
#ifndef FACTORY_UTIL_H
#define FACTORY_UTIL_H

#include <stdint.h>

#include <stddef.h>

int	errfmt(char *, size_t, const char *, ...)
	    __attribute__((__format__ (printf, 3, 4)));
int	fsync_dir_of(const char *);
int	strv_addf(char ***, size_t *, const char *, ...)
	    __attribute__((__format__ (printf, 3, 4)));

/* The wall clock, ms since the epoch. */
uint64_t now_ms(void);
/* The monotonic clock, ms: for intervals and deadlines. */
uint64_t mono_ms(void);
/* CLOCK_BOOTTIME, ms: the fleet's leases, across a suspend. */
uint64_t boot_ms(void);
/* [A-Za-z0-9._-], 1 to max bytes, not starting with '.' or '-'. */
int	name_valid(const char *, size_t);
int	write_all(int, const void *, size_t);
/* A relative path inside a tree, as manifests name them; 0 and why if not. */
int	tree_relpath(const char *, size_t, const char **);

#endif /* FACTORY_UTIL_H */
