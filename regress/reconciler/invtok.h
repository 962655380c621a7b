/*
 * Tests' spelling of wire.h messages, one token a line, so a test can
 * write a well-formed message or any malformed one:
 *
 *	n8 N, n32 N, n64 N	a number in network byte order
 *	s TEXT			a string: n32 length, then TEXT, where
 *				\xHH is one byte and \\ a backslash
 *	x HEX			bytes as they are
 *
 * Shared by prog_badrec and regress/unit/test_inventory.c.
 */
#ifndef INVTOK_H
#define INVTOK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imsg.h"

static int
invtok_hex(const char *p, unsigned char *c)
{
	char	 h[3] = { p[0], p[0] ? p[1] : 0, 0 }, *end;

	if (h[0] == '\0' || h[1] == '\0')
		return (-1);
	*c = (unsigned char)strtoul(h, &end, 16);
	return (*end == '\0' ? 0 : -1);
}

/* The bytes of one "s" or "x" token's text into out; their count. */
static long
invtok_bytes(const char *p, size_t n, int raw, unsigned char *out)
{
	size_t	 i = 0, o = 0;

	while (i < n) {
		if (raw || (p[i] == '\\' && i + 1 < n && p[i + 1] == 'x')) {
			if (!raw)
				i += 2;
			if (i + 1 >= n || invtok_hex(p + i, &out[o++]) == -1)
				return (-1);
			i += 2;
		} else if (p[i] == '\\' && i + 1 < n && p[i + 1] == '\\') {
			out[o++] = '\\';
			i += 2;
		} else
			out[o++] = p[i++];
	}
	return ((long)o);
}

/* Append the message spelled by text to b; -1 on a bad token. */
static int
invtok(struct ibuf *b, const char *text)
{
	const char		*p = text, *sp;
	unsigned char		*buf;
	unsigned long long	 v;
	size_t			 n, k;
	long			 len;
	int			 rc = 0;

	while (rc == 0 && *p != '\0') {
		n = strcspn(p, "\n");
		if ((sp = memchr(p, ' ', n)) == NULL)
			return (-1);
		k = sp - p;
		v = strtoull(sp + 1, NULL, 0);
		if (k == 2 && strncmp(p, "n8", 2) == 0)
			rc = ibuf_add_n8(b, v);
		else if (k == 3 && strncmp(p, "n32", 3) == 0)
			rc = ibuf_add_n32(b, v);
		else if (k == 3 && strncmp(p, "n64", 3) == 0)
			rc = ibuf_add_n64(b, v);
		else if (k == 1 && (p[0] == 's' || p[0] == 'x')) {
			if ((buf = malloc(n + 1)) == NULL)
				return (-1);
			len = invtok_bytes(p + 2, n - 2, p[0] == 'x', buf);
			if (len == -1 || (p[0] == 's' &&
			    ibuf_add_n32(b, len) == -1) ||
			    ibuf_add(b, buf, len) == -1)
				rc = -1;
			free(buf);
		} else
			return (-1);
		p += n;
		if (*p == '\n')
			p++;
	}
	return (rc);
}

#endif /* INVTOK_H */
