/*
 * The field-by-field wire format (wire.h): bounded getters over an
 * ibuf, a reason naming the message and the field on the first
 * failure, leftovers refused at the end.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

void
m_open(struct mread *m, const char *name, const void *data, size_t len,
    char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	ibuf_from_buffer(&m->ib, (void *)data, len);
	m->name = name;
	m->err = err;
	m->errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
}

/* The first reason stays; "NAME: reason". */
int
m_fail(struct mread *m, const char *fmt, ...)
{
	va_list	 ap;
	char	 why[256];

	if (m->bad)
		return (-1);
	m->bad = 1;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (m->errlen > 0)
		snprintf(m->err, m->errlen, "%s: %s", m->name, why);
	return (-1);
}

int
m_get_n8(struct mread *m, const char *field, uint8_t *v)
{
	if (m->bad)
		return (-1);
	if (ibuf_get_n8(&m->ib, v) == -1)
		return (m_fail(m, "field %s: truncated", field));
	return (0);
}

int
m_get_n32(struct mread *m, const char *field, uint32_t *v)
{
	if (m->bad)
		return (-1);
	if (ibuf_get_n32(&m->ib, v) == -1)
		return (m_fail(m, "field %s: truncated", field));
	return (0);
}

int
m_get_n64(struct mread *m, const char *field, uint64_t *v)
{
	if (m->bad)
		return (-1);
	if (ibuf_get_n64(&m->ib, v) == -1)
		return (m_fail(m, "field %s: truncated", field));
	return (0);
}

int
m_get_bool(struct mread *m, const char *field, int *v)
{
	uint8_t	 b;

	if (m_get_n8(m, field, &b) == -1)
		return (-1);
	if (b > 1)
		return (m_fail(m, "field %s: not a boolean", field));
	*v = b;
	return (0);
}

/* The bytes of a string of at most max bytes, checked, not copied. */
static const char *
m_get_bytes(struct mread *m, const char *field, size_t max, size_t *lenp)
{
	const char	*p;
	uint32_t	 len;

	if (m_get_n32(m, field, &len) == -1)
		return (NULL);
	if (len > max) {
		m_fail(m, "field %s: longer than %zu bytes", field, max);
		return (NULL);
	}
	if (ibuf_size(&m->ib) < len) {
		m_fail(m, "field %s: truncated", field);
		return (NULL);
	}
	p = ibuf_data(&m->ib);
	if (len > 0 && memchr(p, '\0', len) != NULL) {
		m_fail(m, "field %s: NUL in the string", field);
		return (NULL);
	}
	ibuf_skip(&m->ib, len);
	*lenp = len;
	return (p != NULL ? p : "");
}

int
m_get_str(struct mread *m, const char *field, char *s, size_t size)
{
	const char	*p;
	size_t		 len;

	if (size == 0)
		return (m_fail(m, "field %s: no room", field));
	if ((p = m_get_bytes(m, field, size - 1, &len)) == NULL)
		return (-1);
	memcpy(s, p, len);
	s[len] = '\0';
	return (0);
}

int
m_get_strdup(struct mread *m, const char *field, size_t max, char **sp)
{
	const char	*p;
	size_t		 len;

	*sp = NULL;
	if ((p = m_get_bytes(m, field, max, &len)) == NULL)
		return (-1);
	if ((*sp = malloc(len + 1)) == NULL)
		return (m_fail(m, "field %s: out of memory", field));
	memcpy(*sp, p, len);
	(*sp)[len] = '\0';
	return (0);
}

int
m_end(struct mread *m)
{
	if (m->bad)
		return (-1);
	if (ibuf_size(&m->ib) != 0)
		return (m_fail(m, "%zu bytes left over", ibuf_size(&m->ib)));
	return (0);
}

int
m_add_str(struct ibuf *b, const char *s)
{
	size_t	 len = strlen(s);

	if (len > UINT32_MAX || ibuf_add_n32(b, len) == -1 ||
	    ibuf_add(b, s, len) == -1)
		return (-1);
	return (0);
}
