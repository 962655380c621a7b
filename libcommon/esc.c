/*
 * The suite's encoding of untrusted byte strings; see esc.h.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "log.h"

static const char	 hexdig[] = "0123456789abcdef";

static int
esc_plain(unsigned char c)
{
	return (c >= 0x20 && c <= 0x7e && c != '\\');
}

size_t
esc_len(const void *buf, size_t len)
{
	const unsigned char	*p = buf;
	size_t			 i, n = 0;

	for (i = 0; i < len; i++)
		n += esc_plain(p[i]) ? 1 : p[i] == '\\' ? 2 : 4;
	return (n);
}

int
esc_encode(const void *buf, size_t len, char *dst, size_t dstsize)
{
	const unsigned char	*p = buf;
	size_t			 i, o = 0, need;

	/* Checked first: a length that does not fit is refused whole. */
	if (len > (SIZE_MAX - 1) / ESC_MAXEXPAND ||
	    (need = esc_len(buf, len)) >= dstsize || need > INT_MAX)
		return (-1);
	for (i = 0; i < len; i++) {
		if (esc_plain(p[i]))
			dst[o++] = p[i];
		else if (p[i] == '\\') {
			dst[o++] = '\\';
			dst[o++] = '\\';
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hexdig[p[i] >> 4];
			dst[o++] = hexdig[p[i] & 0xf];
		}
	}
	dst[o] = '\0';
	return ((int)o);
}

void
esc_show(const void *buf, size_t len, char *dst, size_t dstsize)
{
	if (dstsize == 0)
		return;
	dst[0] = '\0';
	while (len > 0 && esc_encode(buf, len, dst, dstsize) == -1)
		len--;
}

char *
esc_strdup(const void *buf, size_t len)
{
	char	*s;
	size_t	 n;

	if (len > (SIZE_MAX - 1) / ESC_MAXEXPAND)
		return (NULL);
	n = esc_len(buf, len) + 1;
	if (n - 1 > INT_MAX || (s = malloc(n)) == NULL)
		return (NULL);
	if (esc_encode(buf, len, s, n) == -1) {
		free(s);
		return (NULL);
	}
	return (s);
}

static int
hexval(char c)
{
	const char	*p;

	if (c == '\0' || (p = strchr(hexdig, c)) == NULL)
		return (-1);
	return ((int)(p - hexdig));
}

int
esc_decode(const char *s, size_t slen, void *dst, size_t dstsize)
{
	unsigned char	*d = dst;
	size_t		 i = 0, o = 0;
	int		 hi, lo;

	if (slen > INT_MAX)
		return (-1);
	while (i < slen) {
		if (o >= dstsize)
			return (-1);
		if ((unsigned char)s[i] != '\\') {
			if (!esc_plain((unsigned char)s[i]))
				return (-1);
			d[o++] = s[i++];
			continue;
		}
		if (i + 1 < slen && s[i + 1] == '\\') {
			d[o++] = '\\';
			i += 2;
			continue;
		}
		if (i + 3 >= slen || s[i + 1] != 'x' ||
		    (hi = hexval(s[i + 2])) == -1 ||
		    (lo = hexval(s[i + 3])) == -1)
			return (-1);
		/* One spelling per byte: a plain byte is never escaped. */
		if (esc_plain((unsigned char)(hi << 4 | lo)) ||
		    (hi << 4 | lo) == '\\')
			return (-1);
		d[o++] = (unsigned char)(hi << 4 | lo);
		i += 4;
	}
	return ((int)o);
}

int
esc_valid(const char *s)
{
	size_t	 i, len = strlen(s);
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (esc_plain((unsigned char)s[i]))
			continue;
		if (s[i] != '\\')
			return (0);
		if (s[i + 1] == '\\') {
			i++;
			continue;
		}
		if (s[i + 1] != 'x' || (hi = hexval(s[i + 2])) == -1 ||
		    (lo = hexval(s[i + 3])) == -1 ||
		    esc_plain((unsigned char)(hi << 4 | lo)) ||
		    (hi << 4 | lo) == '\\')
			return (0);
		i += 3;
	}
	return (1);
}

json_t *
esc_json(const void *buf, size_t len)
{
	json_t	*o;
	char	*s;

	if ((s = esc_strdup(buf, len)) == NULL)
		fatal("esc_json");
	/* Printable ASCII: json_string cannot refuse it. */
	if ((o = json_string(s)) == NULL)
		fatal("esc_json");
	free(s);
	return (o);
}

json_t *
esc_json_str(const char *s)
{
	return (esc_json(s, strlen(s)));
}
