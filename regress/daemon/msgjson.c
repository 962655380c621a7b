/*
 * A JSON description of a child message, laid out on the wire by
 * msg.c's tables without a check (msgjson.h).
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"
#include "msgtab.h"
#include "msgjson.h"
#include "wire.h"

#define BAD32	0xffffffffU

static int	put_obj(struct ibuf *, const struct field *, size_t,
		    json_t *);

static void
put_str(struct ibuf *b, json_t *v)
{
	if (!json_is_string(v)) {
		ibuf_add_n32(b, BAD32);
		return;
	}
	ibuf_add_n32(b, json_string_length(v));
	ibuf_add(b, json_string_value(v), json_string_length(v));
}

/* Not an integer: the payload stops (every value of 32 bits may be). */
static int
put_num(struct ibuf *b, const struct field *f, json_t *v)
{
	json_int_t	 n;

	if (!json_is_integer(v))
		return (-1);
	n = json_integer_value(v);
	if (f->type == F_U32)
		ibuf_add_n32(b, (uint64_t)n);
	else
		ibuf_add_n64(b, (uint64_t)n);
	return (0);
}

/* 0, or -1: stop here (a required field missing inside). */
static int
put_list(struct ibuf *b, const struct field *f, json_t *v)
{
	json_t	*e;
	size_t	 i;

	if (!json_is_array(v)) {
		ibuf_add_n32(b, BAD32);
		return (0);
	}
	ibuf_add_n32(b, json_array_size(v));
	json_array_foreach(v, i, e) {
		if (f->type == F_STRV)
			put_str(b, e);
		else if (!json_is_object(e)) {
			/* Not an object: its fields missing. */
			return (-1);
		} else if (put_obj(b, f->sub, f->nsub, e) == -1)
			return (-1);
	}
	return (0);
}

static int
put_field(struct ibuf *b, const struct field *f, json_t *v)
{
	const struct field	*g;
	size_t			 ng;

	if (v == NULL) {
		if (!f->optional)
			return (-1);
		if (f->type == F_PSTR || f->type == F_GITHUB)
			ibuf_add_n8(b, 0);
		else if (f->type == F_STRV || f->type == F_OBJV)
			ibuf_add_n32(b, 0);
		else
			ibuf_add_n32(b, 0);	/* "" */
		return (0);
	}
	switch (f->type) {
	case F_PSTR:
		if (f->optional)
			ibuf_add_n8(b, 1);
		/* FALLTHROUGH */
	case F_STR:
		put_str(b, v);
		return (0);
	case F_U32:
	case F_U64:
	case F_I64:
		return (put_num(b, f, v));
	case F_BOOL:
		ibuf_add_n8(b, json_is_boolean(v) ? json_is_true(v) : 2);
		return (0);
	case F_STRV:
	case F_OBJV:
		return (put_list(b, f, v));
	case F_GITHUB:
		if (!json_is_object(v)) {
			ibuf_add_n8(b, 2);
			return (0);
		}
		ibuf_add_n8(b, 1);
		g = msg_github_fields(&ng);
		return (put_obj(b, g, ng, v));
	}
	return (-1);
}

static int
put_obj(struct ibuf *b, const struct field *f, size_t nf, json_t *o)
{
	const char	*key;
	json_t		*v;
	size_t		 i;

	for (i = 0; i < nf; i++)
		if (put_field(b, &f[i], json_object_get(o, f[i].key)) == -1)
			return (-1);
	/* What the table does not know: left over. */
	json_object_foreach(o, key, v) {
		for (i = 0; i < nf; i++)
			if (strcmp(key, f[i].key) == 0)
				break;
		if (i == nf)
			ibuf_add(b, key, strlen(key));
	}
	return (0);
}

char *
msgjson_encode(enum msg_kind k, json_t *o, size_t *len)
{
	const struct field	*f;
	struct ibuf		*b;
	size_t			 nf;
	char			*s;

	if ((b = ibuf_dynamic(256, 64 * 1024 * 1024)) == NULL)
		return (NULL);
	f = msg_fields(k, &nf);
	ibuf_add_n8(b, k);
	if (json_is_object(o))
		put_obj(b, f, nf, o);
	*len = ibuf_size(b);
	if ((s = malloc(*len + 1)) != NULL)
		memcpy(s, ibuf_data(b), *len);
	ibuf_free(b);
	return (s);
}

char *
msgjson_encode_text(enum msg_kind k, const char *text, size_t *len)
{
	json_t	*o;
	char	*s;

	if ((o = json_loads(text, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
	    NULL)) == NULL)
		return (NULL);
	s = msgjson_encode(k, o, len);
	json_decref(o);
	return (s);
}

static json_t	*obj_json(const struct field *, size_t, const char *);

static json_t *
field_json(const struct field *f, const char *base)
{
	const struct field	*g;
	const void	*p = base + f->off;
	const char	*c;
	char * const	*sv;
	json_t		*a;
	size_t		 i, n, ng;

	switch (f->type) {
	case F_STR:
		return (json_string(p));
	case F_PSTR:
		return (json_string(*(char * const *)p));
	case F_U32:
		return (json_integer(*(const uint32_t *)p));
	case F_U64:
		return (json_integer((json_int_t)*(const uint64_t *)p));
	case F_I64:
		return (json_integer(*(const int64_t *)p));
	case F_BOOL:
		return (json_boolean(*(const int *)p));
	case F_STRV:
	case F_OBJV:
		n = *(const size_t *)(base + f->cnt);
		a = json_array();
		for (i = 0; i < n; i++) {
			if (f->type == F_STRV) {
				sv = *(char * const * const *)p;
				json_array_append_new(a, json_string(sv[i]));
			} else {
				c = *(const char * const *)p;
				json_array_append_new(a, obj_json(f->sub,
				    f->nsub, c + i * f->esize));
			}
		}
		return (a);
	case F_GITHUB:
		g = msg_github_fields(&ng);
		return (obj_json(g, ng, p));
	}
	return (NULL);
}

/* The fields of a struct; the optional ones only if they are set. */
static json_t *
obj_json(const struct field *f, size_t nf, const char *base)
{
	json_t	*o = json_object();
	size_t	 i;

	for (i = 0; i < nf; i++) {
		if (f[i].optional && ((f[i].type == F_STR &&
		    base[f[i].off] == '\0') || (f[i].type == F_PSTR &&
		    *(char * const *)(base + f[i].off) == NULL) ||
		    ((f[i].type == F_STRV || f[i].type == F_OBJV) &&
		    *(const size_t *)(base + f[i].cnt) == 0) ||
		    (f[i].type == F_GITHUB &&
		    *(const int *)(base + f[i].cnt) == 0)))
			continue;
		json_object_set_new(o, f[i].key, field_json(&f[i], base));
	}
	return (o);
}

json_t *
msgjson_from_struct(enum msg_kind k, const void *st)
{
	const struct field	*f;
	size_t			 nf;

	f = msg_fields(k, &nf);
	return (obj_json(f, nf, st));
}
