/*
 * The YAML layer of factoryd.conf(5) and factory-manifest(5): libyaml's
 * event stream becomes a node tree with positions and key paths; typed
 * getters produce values or one error line.
 *
 * Configurations and manifests are audited by people reading them, so
 * the YAML they may use is deliberately small: one document, no
 * anchors, no aliases, no tags, string keys only, no duplicate keys.
 * An alias makes a key's meaning depend on text elsewhere in the file
 * (and aliases of aliases can blow up in size); a second document
 * would be silently ignored by a reader expecting one.  Both are
 * refused rather than interpreted.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Angle brackets: this layer's header, which includes libyaml's. */
#include <yaml.h>

struct ybuild {
	struct yerr	*err;
	struct ynode	*root;
	/* The open collections and, for mappings, a key seen. */
	struct ynode	*stack[YAML_MAXDEPTH + 1];
	struct ynode	*pendkey[YAML_MAXDEPTH + 1];
	int		 depth;
	int		 ndocs;
};

void
y_errinit(struct yerr *e, const char *file, char *buf, size_t len)
{
	e->file = file;
	e->buf = buf;
	e->len = len;
	e->failed = 0;
	if (buf != NULL && len > 0)
		buf[0] = '\0';
}

static int
y_vfailat(struct yerr *e, int line, int col, const char *path,
    const char *fmt, va_list ap)
{
	char	 msg[512];
	char	*p;

	if (e->failed)
		return (-1);
	e->failed = 1;
	if (e->buf == NULL || e->len == 0)
		return (-1);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (path != NULL && path[0] != '\0')
		snprintf(e->buf, e->len, "%s:%d:%d: %s: %s", e->file, line, col,
		    path, msg);
	else
		snprintf(e->buf, e->len, "%s:%d:%d: %s", e->file, line, col,
		    msg);
	/* One line, whatever a key or value in the file contained. */
	for (p = e->buf; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return (-1);
}

int
y_failat(struct yerr *e, int line, int col, const char *path,
    const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	y_vfailat(e, line, col, path, fmt, ap);
	va_end(ap);
	return (-1);
}

int
y_fail(struct yerr *e, const struct ynode *n, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	y_vfailat(e, n->line, n->col, n->path, fmt, ap);
	va_end(ap);
	return (-1);
}

int
y_isnull(const struct ynode *n)
{
	return (n->kind == YN_SCALAR && n->plain && n->len == 0);
}

int
y_hasctl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return (1);
	return (0);
}

const char *
y_what(const struct ynode *n)
{
	switch (n->kind) {
	case YN_SEQ:
		return ("a sequence");
	case YN_MAP:
		return ("a mapping");
	case YN_SCALAR:
		break;
	}
	if (y_isnull(n))
		return ("an empty value");
	return ("a string");
}

void
y_free(struct ynode *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++) {
		if (n->keys != NULL)
			y_free(n->keys[i]);
		y_free(n->kids[i]);
	}
	free(n->keys);
	free(n->kids);
	free(n->path);
	free(n->str);
	free(n);
}

/*
 * Tree building.  Every node is attached to its parent when it starts,
 * so that on any error freeing the root frees everything.
 */

static char *
y_joinpath(const struct ynode *parent, const char *key, size_t idx)
{
	char	*p;
	int	 r;

	if (parent == NULL)
		r = asprintf(&p, "%s", "");
	else if (key == NULL)
		r = asprintf(&p, "%s[%zu]", parent->path, idx);
	else if (parent->path[0] == '\0')
		r = asprintf(&p, "%s", key);
	else
		r = asprintf(&p, "%s.%s", parent->path, key);
	return (r == -1 ? NULL : p);
}

static int
y_append(struct ybuild *b, struct ynode *parent, struct ynode *key,
    struct ynode *kid)
{
	struct ynode	**nk, **nv;
	size_t		  cap;

	/* Grow at 0, 4, 8, 16, ...: capacity is implied by nkids. */
	if (parent->nkids == 0 || (parent->nkids >= 4 &&
	    (parent->nkids & (parent->nkids - 1)) == 0)) {
		cap = parent->nkids == 0 ? 4 : parent->nkids * 2;
		if ((nv = reallocarray(parent->kids, cap, sizeof(*nv))) == NULL)
			goto nomem;
		parent->kids = nv;
		if (parent->kind == YN_MAP) {
			nk = reallocarray(parent->keys, cap, sizeof(*nk));
			if (nk == NULL)
				goto nomem;
			parent->keys = nk;
		}
	}
	if (parent->kind == YN_MAP)
		parent->keys[parent->nkids] = key;
	parent->kids[parent->nkids++] = kid;
	return (0);
 nomem:
	return (y_fail(b->err, kid, "out of memory"));
}

static void
y_mark(struct ynode *n, const yaml_mark_t *m)
{
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
}

/* A mapping key: a non-empty string, seen once. */
static int
y_addkey(struct ybuild *b, struct ynode *map, struct ynode *key)
{
	size_t	 i;

	if (key->kind != YN_SCALAR) {
		y_fail(b->err, key, "a key must be a string, not %s",
		    y_what(key));
		goto bad;
	}
	if (key->len == 0 || strlen(key->str) != key->len) {
		y_fail(b->err, key, "a key must be a non-empty string");
		goto bad;
	}
	for (i = 0; i < map->nkids; i++)
		if (strcmp(map->keys[i]->str, key->str) == 0) {
			y_fail(b->err, key, "duplicate key (first on line %d)",
			    map->keys[i]->line);
			goto bad;
		}
	b->pendkey[b->depth - 1] = key;
	return (0);
 bad:
	y_free(key);
	return (-1);
}

/*
 * The path of the next node: the root's, a sequence item's, a key's
 * (its own text, so a scalar's value must be known) or the value's of
 * the pending key.
 */
static char *
y_nextpath(const struct ybuild *b, const char *scalar)
{
	struct ynode	*parent, *key;

	if (b->depth == 0)
		return (y_joinpath(NULL, NULL, 0));
	parent = b->stack[b->depth - 1];
	if (parent->kind == YN_SEQ)
		return (y_joinpath(parent, NULL, parent->nkids));
	if ((key = b->pendkey[b->depth - 1]) != NULL)
		return (strdup(key->path));
	return (y_joinpath(parent, scalar != NULL ? scalar : "?", 0));
}

/* Place a new node, whose path is set, in the tree or as a key. */
static int
y_place(struct ybuild *b, struct ynode *n)
{
	struct ynode	*parent, *key;

	if (b->depth == 0) {
		b->root = n;
		return (0);
	}
	parent = b->stack[b->depth - 1];
	if (parent->kind == YN_SEQ) {
		if (y_append(b, parent, NULL, n) == -1)
			goto bad;
		return (0);
	}
	if ((key = b->pendkey[b->depth - 1]) == NULL)
		return (y_addkey(b, parent, n));
	b->pendkey[b->depth - 1] = NULL;
	if (y_append(b, parent, key, n) == -1) {
		y_free(key);
		goto bad;
	}
	return (0);
 bad:
	y_free(n);
	return (-1);
}

/* Anchors and tags, refused with the path of the node they are on. */
static int
y_refuse_extras(struct ybuild *b, const yaml_event_t *ev, const char *scalar,
    const yaml_char_t *anchor, const yaml_char_t *tag)
{
	int	 line = (int)ev->start_mark.line + 1;
	int	 col = (int)ev->start_mark.column + 1;
	char	*path;

	if (anchor == NULL && tag == NULL)
		return (0);
	path = y_nextpath(b, scalar);
	if (anchor != NULL)
		y_failat(b->err, line, col, path, "anchor &%s refused: "
		    "write every value out in full", anchor);
	else
		y_failat(b->err, line, col, path, "tag %s refused: values "
		    "are typed by their key", tag);
	free(path);
	return (-1);
}

static int
y_scalar(struct ybuild *b, const yaml_event_t *ev)
{
	struct ynode	*n;

	const char	*value = (const char *)ev->data.scalar.value;

	if (y_refuse_extras(b, ev, value, ev->data.scalar.anchor,
	    ev->data.scalar.tag) == -1)
		return (-1);
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return (y_failat(b->err, 1, 1, NULL, "out of memory"));
	n->kind = YN_SCALAR;
	y_mark(n, &ev->start_mark);
	n->len = ev->data.scalar.length;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if ((n->str = malloc(n->len + 1)) == NULL ||
	    (n->path = y_nextpath(b, value)) == NULL) {
		y_free(n);
		return (y_failat(b->err, 1, 1, NULL, "out of memory"));
	}
	memcpy(n->str, value, n->len);
	n->str[n->len] = '\0';
	return (y_place(b, n));
}

static int
y_open(struct ybuild *b, const yaml_event_t *ev, enum ynode_kind kind)
{
	struct ynode		*n;
	const yaml_char_t	*anchor, *tag;

	if (kind == YN_MAP) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	} else {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	}
	if (y_refuse_extras(b, ev, NULL, anchor, tag) == -1)
		return (-1);
	if (b->depth >= YAML_MAXDEPTH)
		return (y_failat(b->err, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, NULL,
		    "nested more than %d levels deep", YAML_MAXDEPTH));
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return (y_failat(b->err, 1, 1, NULL, "out of memory"));
	n->kind = kind;
	y_mark(n, &ev->start_mark);
	if ((n->path = y_nextpath(b, NULL)) == NULL) {
		free(n);
		return (y_failat(b->err, 1, 1, NULL, "out of memory"));
	}
	if (y_place(b, n) == -1)
		return (-1);
	b->pendkey[b->depth] = NULL;
	b->stack[b->depth++] = n;
	return (0);
}

static void
y_syntax(struct yerr *e, const yaml_parser_t *p, const unsigned char *buf,
    size_t len)
{
	size_t	 i, off;
	int	 line = 1, col = 1;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		y_failat(e, 1, 1, NULL, "out of memory");
		return;
	case YAML_READER_ERROR:
		/* The reader knows only a byte offset. */
		off = p->problem_offset < len ? p->problem_offset : len;
		for (i = 0; i < off; i++) {
			if (buf[i] == '\n') {
				line++;
				col = 1;
			} else
				col++;
		}
		y_failat(e, line, col, NULL, "syntax error: %s",
		    p->problem != NULL ? p->problem : "unreadable input");
		return;
	default:
		break;
	}
	if (p->context != NULL)
		y_failat(e, (int)p->problem_mark.line + 1,
		    (int)p->problem_mark.column + 1, NULL,
		    "syntax error: %s (%s at line %d, column %d)",
		    p->problem != NULL ? p->problem : "?", p->context,
		    (int)p->context_mark.line + 1,
		    (int)p->context_mark.column + 1);
	else
		y_failat(e, (int)p->problem_mark.line + 1,
		    (int)p->problem_mark.column + 1, NULL, "syntax error: %s",
		    p->problem != NULL ? p->problem : "?");
}

/* One event; 1 at the end of the stream, 0 to go on, -1 on error. */
static int
y_event(struct ybuild *b, const yaml_event_t *ev)
{
	char	*path;

	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_NO_EVENT:
		return (0);
	case YAML_STREAM_END_EVENT:
		return (1);
	case YAML_DOCUMENT_START_EVENT:
		if (++b->ndocs > 1)
			return (y_failat(b->err, (int)ev->start_mark.line + 1,
			    (int)ev->start_mark.column + 1, NULL,
			    "a second document is refused: one file holds "
			    "one document"));
		return (0);
	case YAML_ALIAS_EVENT:
		path = y_nextpath(b, NULL);
		y_failat(b->err, (int)ev->start_mark.line + 1,
		    (int)ev->start_mark.column + 1, path,
		    "alias *%s refused: write every value out in full",
		    ev->data.alias.anchor);
		free(path);
		return (-1);
	case YAML_SCALAR_EVENT:
		return (y_scalar(b, ev));
	case YAML_SEQUENCE_START_EVENT:
		return (y_open(b, ev, YN_SEQ));
	case YAML_MAPPING_START_EVENT:
		return (y_open(b, ev, YN_MAP));
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0)
			b->depth--;
		return (0);
	}
	return (0);
}

struct ynode *
y_load(struct yerr *e, const void *buf, size_t len)
{
	struct ybuild	 b;
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	int		 r;

	memset(&b, 0, sizeof(b));
	b.err = e;
	if (!yaml_parser_initialize(&parser)) {
		y_failat(e, 1, 1, NULL, "out of memory");
		return (NULL);
	}
	yaml_parser_set_input_string(&parser, buf, len);
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			y_syntax(e, &parser, buf, len);
			goto bad;
		}
		r = y_event(&b, &ev);
		yaml_event_delete(&ev);
		if (r == -1)
			goto bad;
		if (r == 1)
			break;
	}
	yaml_parser_delete(&parser);
	if (b.root == NULL || y_isnull(b.root)) {
		y_failat(e, 1, 1, NULL, "empty document");
		y_free(b.root);
		return (NULL);
	}
	if (b.root->kind != YN_MAP) {
		y_fail(e, b.root, "expected a mapping at the top level, not %s",
		    y_what(b.root));
		y_free(b.root);
		return (NULL);
	}
	return (b.root);
 bad:
	yaml_parser_delete(&parser);
	/* Keys still waiting for their value are not in the tree yet. */
	for (r = 0; r <= b.depth && r <= YAML_MAXDEPTH; r++)
		y_free(b.pendkey[r]);
	y_free(b.root);
	return (NULL);
}

/*
 * Mappings.
 */

int
y_map(struct yerr *e, const struct ynode *n, const char *what)
{
	if (n->kind == YN_MAP)
		return (0);
	return (y_fail(e, n, "expected %s, not %s", what, y_what(n)));
}

/* Every key must be one of allowed (NULL-terminated). */
int
y_keys(struct yerr *e, const struct ynode *map, const char * const *allowed)
{
	size_t	 i, j;

	for (i = 0; i < map->nkids; i++) {
		for (j = 0; allowed[j] != NULL; j++)
			if (strcmp(map->keys[i]->str, allowed[j]) == 0)
				break;
		if (allowed[j] == NULL)
			return (y_fail(e, map->keys[i], "unknown key"));
	}
	return (0);
}

struct ynode *
y_get(const struct ynode *map, const char *key)
{
	size_t	 i;

	if (map == NULL || map->kind != YN_MAP)
		return (NULL);
	for (i = 0; i < map->nkids; i++)
		if (strcmp(map->keys[i]->str, key) == 0)
			return (map->kids[i]);
	return (NULL);
}

/*
 * A required key.  Missing from the top level, the error points at the
 * file (1:1); missing from a nested mapping, at that mapping.
 */
struct ynode *
y_need(struct yerr *e, const struct ynode *map, const char *key)
{
	struct ynode	*n;
	char		*path;

	if ((n = y_get(map, key)) != NULL)
		return (n);
	if (map->path[0] == '\0') {
		y_failat(e, 1, 1, key, "missing");
		return (NULL);
	}
	if (asprintf(&path, "%s.%s", map->path, key) == -1) {
		y_failat(e, map->line, map->col, map->path, "out of memory");
		return (NULL);
	}
	y_failat(e, map->line, map->col, path, "missing");
	free(path);
	return (NULL);
}

/*
 * Scalars.
 */

/* A non-empty string of at most max bytes, copied to dst if not NULL. */
int
y_str(struct yerr *e, const struct ynode *n, const char *what, size_t max,
    char *dst, size_t dstlen)
{
	if (n->kind != YN_SCALAR || y_isnull(n))
		return (y_fail(e, n, "expected %s, not %s", what, y_what(n)));
	if (strlen(n->str) != n->len)
		return (y_fail(e, n, "contains a NUL character"));
	if (n->len == 0)
		return (y_fail(e, n, "expected %s, not an empty string", what));
	/* dstlen bounds the length even when nothing is copied. */
	if (dstlen > 0 && (max == 0 || max > dstlen - 1))
		max = dstlen - 1;
	if (max != 0 && n->len > max)
		return (y_fail(e, n, "longer than %zu bytes", max));
	if (dst != NULL)
		memcpy(dst, n->str, n->len + 1);
	return (0);
}

int
y_path(struct yerr *e, const struct ynode *n, char *dst, size_t dstlen)
{
	if (y_str(e, n, "an absolute path", 0, NULL, 0) == -1)
		return (-1);
	if (n->str[0] != '/')
		return (y_fail(e, n, "not an absolute path: %s", n->str));
	if (y_hasctl(n->str))
		return (y_fail(e, n, "contains a control character"));
	return (y_str(e, n, "an absolute path", 0, dst, dstlen));
}

/* Decimal digits only: no sign, no hex, no spaces. */
int
y_parse_uint(const char *s, uint64_t *out)
{
	uint64_t	 v = 0;

	if (*s == '\0')
		return (-1);
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return (-1);
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return (-2);
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return (0);
}

int
y_uint(struct yerr *e, const struct ynode *n, uint64_t lo, uint64_t hi,
    uint64_t *out)
{
	uint64_t	 v = 0;
	int		 r;

	if (y_str(e, n, "a number", 64, NULL, 0) == -1)
		return (-1);
	if ((r = y_parse_uint(n->str, &v)) == -1)
		return (y_fail(e, n, "expected a number, not \"%s\"", n->str));
	if (r == -2 || v < lo || v > hi)
		return (y_fail(e, n, "%s is out of range %llu-%llu", n->str,
		    (unsigned long long)lo, (unsigned long long)hi));
	*out = v;
	return (0);
}

/* Split "123unit" into a number and its unit. */
static int
y_number_unit(const char *s, uint64_t *v, const char **unit)
{
	char		 digits[32];
	size_t		 n;

	n = strspn(s, "0123456789");
	if (n == 0 || n >= sizeof(digits))
		return (n == 0 ? -1 : -2);
	memcpy(digits, s, n);
	digits[n] = '\0';
	*unit = s + n;
	return (y_parse_uint(digits, v));
}

struct y_unit {
	const char	*name;
	uint64_t	 mult;
};

static const struct y_unit duration_units[] = {
	{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 },
	{ "h", 60 * 60 * 1000 }, { NULL, 0 }
};
static const struct y_unit size_units[] = {
	{ "", 1 }, { "K", 1024 }, { "M", 1024 * 1024 },
	{ "G", 1024 * 1024 * 1024 }, { NULL, 0 }
};

/* A number with one of the units, scaled, without overflow. */
static int
y_parse_units(const char *s, const struct y_unit *units, uint64_t *out,
    const char *syntax, const char *unknown, const char **why)
{
	uint64_t	 v = 0;
	const char	*unit;
	int		 r;

	if ((r = y_number_unit(s, &v, &unit)) == -1) {
		*why = syntax;
		return (-1);
	}
	if (r == -2) {
		*why = "too large";
		return (-1);
	}
	for (; units->name != NULL; units++)
		if (strcmp(unit, units->name) == 0)
			break;
	if (units->name == NULL) {
		*why = unknown;
		return (-1);
	}
	if (v > UINT64_MAX / units->mult) {
		*why = "too large";
		return (-1);
	}
	*out = v * units->mult;
	return (0);
}

/* A duration in milliseconds: 10ms, 30s, 5m, 1h, or bare seconds. */
int
y_parse_duration(const char *s, uint64_t *ms, const char **why)
{
	return (y_parse_units(s, duration_units, ms,
	    "expected a duration such as 30s, 5m or 1h",
	    "unknown unit: expected ms, s, m or h", why));
}

/* A size in bytes: 512, 64K, 512M, 1G (powers of 1024). */
int
y_parse_size(const char *s, uint64_t *bytes, const char **why)
{
	return (y_parse_units(s, size_units, bytes,
	    "expected a size such as 4096, 64K, 512M or 1G",
	    "unknown unit: expected K, M or G", why));
}

int
y_duration(struct yerr *e, const struct ynode *n, uint64_t *ms)
{
	const char	*why;

	if (y_str(e, n, "a duration", 64, NULL, 0) == -1)
		return (-1);
	if (y_parse_duration(n->str, ms, &why) == -1)
		return (y_fail(e, n, "%s: \"%s\"", why, n->str));
	return (0);
}

int
y_size(struct yerr *e, const struct ynode *n, uint64_t *bytes)
{
	const char	*why;

	if (y_str(e, n, "a size", 64, NULL, 0) == -1)
		return (-1);
	if (y_parse_size(n->str, bytes, &why) == -1)
		return (y_fail(e, n, "%s: \"%s\"", why, n->str));
	return (0);
}

/*
 * Sequences of strings.
 */

void
y_strvfree(char **v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

int
y_strv(struct yerr *e, const struct ynode *n, const char *what, char ***out)
{
	char	**v;
	size_t	  i;

	*out = NULL;
	if (n->kind != YN_SEQ)
		return (y_fail(e, n, "expected a list of %s, not %s", what,
		    y_what(n)));
	if (n->nkids == 0)
		return (y_fail(e, n, "an empty list"));
	if ((v = calloc(n->nkids + 1, sizeof(*v))) == NULL)
		return (y_fail(e, n, "out of memory"));
	for (i = 0; i < n->nkids; i++) {
		/* "" is a fine argument; callers refuse it where it is not. */
		if ((n->kids[i]->kind != YN_SCALAR || n->kids[i]->len > 0 ||
		    n->kids[i]->plain) &&
		    y_str(e, n->kids[i], what, 0, NULL, 0) == -1)
			goto bad;
		if ((v[i] = strdup(n->kids[i]->str)) == NULL) {
			y_fail(e, n->kids[i], "out of memory");
			goto bad;
		}
	}
	*out = v;
	return (0);
 bad:
	y_strvfree(v);
	return (-1);
}

/*
 * Printing.
 */

/* Plain only where any YAML reader takes it back as the same string. */
static int
y_plainok(const char *s)
{
	const char	*p;

	if (!isalnum((unsigned char)s[0]) && s[0] != '/' && s[0] != '_')
		return (0);
	for (p = s; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) &&
		    strchr("/_.+=@,:-", *p) == NULL)
			return (0);
	if (p[-1] == ':')
		return (0);
	/* Words a YAML 1.1 reader would turn into a boolean or null. */
	if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0 ||
	    strcasecmp(s, "yes") == 0 || strcasecmp(s, "no") == 0 ||
	    strcasecmp(s, "on") == 0 || strcasecmp(s, "off") == 0 ||
	    strcasecmp(s, "null") == 0 || strcmp(s, "y") == 0 ||
	    strcmp(s, "n") == 0)
		return (0);
	return (1);
}

void
y_printstr(FILE *fp, const char *s)
{
	const unsigned char	*p;

	if (y_plainok(s)) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", fp);
		else if (*p == '\t')
			fputs("\\t", fp);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(fp, "\\x%02x", *p);
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			/* C1 controls may not appear raw in YAML. */
			fprintf(fp, "\\x%02x", p[1]);
			p++;
		} else if (p[0] == 0xe2 && p[1] == 0x80 &&
		    (p[2] == 0xa8 || p[2] == 0xa9)) {
			/* Line and paragraph separators fold as breaks. */
			fputs(p[2] == 0xa8 ? "\\L" : "\\P", fp);
			p += 2;
		} else if (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) {
			fputs("\\uFEFF", fp);
			p += 2;
		} else
			fputc(*p, fp);
	}
	fputc('"', fp);
}

void
y_printduration(FILE *fp, uint64_t ms)
{
	unsigned long long	 v = ms;

	if (v != 0 && v % (60 * 60 * 1000) == 0)
		fprintf(fp, "%lluh", v / (60 * 60 * 1000));
	else if (v != 0 && v % (60 * 1000) == 0)
		fprintf(fp, "%llum", v / (60 * 1000));
	else if (v % 1000 == 0)
		fprintf(fp, "%llus", v / 1000);
	else
		fprintf(fp, "%llums", v);
}

void
y_printsize(FILE *fp, uint64_t bytes)
{
	unsigned long long	 v = bytes;

	if (v != 0 && v % (1024ULL * 1024 * 1024) == 0)
		fprintf(fp, "%lluG", v / (1024ULL * 1024 * 1024));
	else if (v != 0 && v % (1024 * 1024) == 0)
		fprintf(fp, "%lluM", v / (1024 * 1024));
	else if (v != 0 && v % 1024 == 0)
		fprintf(fp, "%lluK", v / 1024);
	else
		fprintf(fp, "%llu", v);
}
