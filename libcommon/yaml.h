/*
 * A small layer over libyaml for factoryd.conf(5) and
 * factory-manifest(5): a document becomes a tree of nodes that keep
 * their line, column and dotted key path, and typed getters turn a
 * node into a C value or into one error line,
 * "FILE:LINE:COLUMN: KEY: reason".  Only the first error is kept.
 *
 * Internal to libcommon (conf.c, manifest.c).
 */
#ifndef FACTORY_YAML_H
#define FACTORY_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * With -Ilibcommon this file shadows libyaml's <yaml.h>, so it brings
 * libyaml's header in itself.  That works when this file was found on
 * the include path, i.e. included as <yaml.h>; included as "yaml.h"
 * from libcommon/ the #include_next finds this file again and libyaml
 * stays out, which suits the users of this layer.
 */
#include_next <yaml.h>

enum ynode_kind {
	YN_SCALAR,
	YN_SEQ,
	YN_MAP
};

struct ynode {
	enum ynode_kind	  kind;
	int		  line;		/* 1-based */
	int		  col;		/* 1-based */
	char		 *path;		/* "users.worker", "scope[0]" */
	char		 *str;		/* scalar: value, NUL-terminated */
	size_t		  len;		/* scalar: may hold a NUL */
	int		  plain;	/* scalar: written without quotes */
	struct ynode	**keys;		/* map: key scalars */
	struct ynode	**kids;		/* seq: items; map: values */
	size_t		  nkids;
};

struct yerr {
	const char	*file;		/* FILE of the error line */
	char		*buf;
	size_t		 len;
	int		 failed;
};

#define YAML_MAXDEPTH	16		/* deeper nesting is refused */

void		 y_errinit(struct yerr *, const char *, char *, size_t);
/* The root mapping of the single document in buf, or NULL and an error. */
struct ynode	*y_load(struct yerr *, const void *, size_t);
void		 y_free(struct ynode *);

/* Both return -1 after setting the error (if none is set yet). */
int		 y_fail(struct yerr *, const struct ynode *,
		    const char *, ...)
		    __attribute__((__format__ (printf, 3, 4)));
int		 y_failat(struct yerr *, int, int, const char *,
		    const char *, ...)
		    __attribute__((__format__ (printf, 5, 6)));
const char	*y_what(const struct ynode *);	/* "a sequence", ... */
int		 y_isnull(const struct ynode *);	/* "key:" alone */
int		 y_hasctl(const char *);	/* a control character */

/*
 * Getters: 0, or -1 with the error set, naming the node.  "what" says
 * what was expected, as in "expected WHAT, not a sequence".
 */

/* Mappings: y_keys refuses keys not in a NULL-terminated list. */
int		 y_map(struct yerr *, const struct ynode *, const char *);
int		 y_keys(struct yerr *, const struct ynode *,
		    const char * const *);
/* A key's value or NULL; y_need reports a missing key. */
struct ynode	*y_get(const struct ynode *, const char *);
struct ynode	*y_need(struct yerr *, const struct ynode *, const char *);

/*
 * y_str: a non-empty string without NUL of at most max bytes (0: no
 * limit but dstlen - 1), copied to dst unless it is NULL.
 */
int		 y_str(struct yerr *, const struct ynode *, const char *,
		    size_t, char *, size_t);
int		 y_path(struct yerr *, const struct ynode *, char *, size_t);
int		 y_uint(struct yerr *, const struct ynode *, uint64_t,
		    uint64_t, uint64_t *);			/* lo, hi */
int		 y_duration(struct yerr *, const struct ynode *, uint64_t *);
int		 y_size(struct yerr *, const struct ynode *, uint64_t *);

/* A non-empty sequence of strings ("" allowed), NULL-terminated. */
int		 y_strv(struct yerr *, const struct ynode *, const char *,
		    char ***);
void		 y_strvfree(char **);

/* Without a node: 0; -1 and a reason (y_parse_uint: -1 junk, -2 overflow). */
int		 y_parse_uint(const char *, uint64_t *);
int		 y_parse_duration(const char *, uint64_t *, const char **);
int		 y_parse_size(const char *, uint64_t *, const char **);

/* Printing: a scalar as plain when it reads back the same, else quoted. */
void		 y_printstr(FILE *, const char *);
void		 y_printduration(FILE *, uint64_t);
void		 y_printsize(FILE *, uint64_t);

#endif /* FACTORY_YAML_H */
