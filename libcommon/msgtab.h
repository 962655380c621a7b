/*
 * msg.c's tables, for a reader that walks them as the codec does: the
 * regress helpers that spell a payload field by field from a JSON
 * description of it (regress/daemon/msgjson.c).  Nothing in the
 * daemons needs them.
 */
#ifndef FACTORY_MSGTAB_H
#define FACTORY_MSGTAB_H

#include <stddef.h>

#include "msg.h"

enum ftype {
	F_STR,		/* char[size], NUL-terminated */
	F_PSTR,		/* char *, at most size bytes */
	F_U32,		/* uint32_t */
	F_U64,		/* uint64_t */
	F_I64,		/* int64_t */
	F_BOOL,		/* int, 0 or 1 */
	F_STRV,		/* char **, count at cnt, at most size entries */
	F_OBJV,		/* an array of structs of table sub (esize bytes
			   each), count at cnt, at most size entries */
	F_GITHUB	/* struct msg_github, presence flag (int) at cnt */
};

enum fclass {
	C_TEXT,		/* the parent's own: any UTF-8 without NUL */
	C_ABS,		/* an absolute path */
	C_ID,		/* an attempt id */
	C_HEX40,	/* 40 lower-case hex digits */
	C_HEX40E,	/* the same, or empty */
	C_HEX64,
	C_HEX64E,
	C_DIGEST,	/* "sha256:" and 64 hex digits */
	C_ESC,		/* the suite's encoding, esc.h */
	C_PRINT,	/* printable ASCII */
	C_B64,		/* base64 */
	C_STATUS,	/* one of A M D T */
	C_FORGE		/* "local" or "github" */
};

struct field {
	const char	*key;
	enum ftype	 type;
	enum fclass	 cls;		/* strings, and list entries */
	size_t		 off;
	size_t		 size;		/* see enum ftype */
	size_t		 cnt;		/* lists and F_GITHUB */
	long long	 min, max;	/* numbers */
	int		 optional;	/* may be absent (encoded if set) */
	const struct field *sub;	/* F_OBJV: an entry's table */
	size_t		 nsub;
	size_t		 esize;		/* F_OBJV: sizeof an entry */
};

/* msg.c */
const struct field	*msg_fields(enum msg_kind, size_t *);
const struct field	*msg_github_fields(size_t *);

#endif /* FACTORY_MSGTAB_H */
