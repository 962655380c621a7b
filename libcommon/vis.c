/*
 * The display form of untrusted bytes; see vis.h.  One decoder of
 * UTF-8 (RFC 3629: shortest form only, no surrogates, at most
 * U+10FFFF) decides what passes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vis.h"

struct vis_out {
	char	*dst;
	size_t	 size;
	size_t	 len;		/* of the whole form */
	int	 full;		/* a unit did not fit: write no more */
};

/* One unit (a character or an escape), whole or not at all. */
static void
vis_put(struct vis_out *o, const char *s, size_t n)
{
	if (!o->full && o->size > 0 && o->len + n < o->size) {
		memcpy(o->dst + o->len, s, n);
		o->dst[o->len + n] = '\0';
	} else
		o->full = 1;
	o->len += n;
}

/*
 * The length of the valid UTF-8 character at s (1-4) and its code
 * point, or 0 if s[0] does not begin one within n bytes.
 */
static size_t
vis_utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char	 lo = 0x80, hi = 0xbf;
	size_t		 len, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return (1);
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		*cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		*cp = s[0] & 0x0f;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* shorter forms are overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* U+D800-U+DFFF: surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		*cp = s[0] & 0x07;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else
		return (0);
	if (n < len)
		return (0);
	for (i = 1; i < len; i++) {
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return (0);
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return (len);
}

/*
 * Code points that are not seen but acted on, by a terminal, by the
 * bidi algorithm, or by a reader who cannot tell "a" from "a" with a
 * zero width space behind it: the C1 controls, the separators, and
 * Unicode's format characters (category Cf, as of Unicode 15), the
 * whole tags block with them.  Sorted, first and last of each range.
 */
static const struct {
	uint32_t	 lo, hi;
} vis_invisible[] = {
	{ 0x0080, 0x009f },	/* C1 controls */
	{ 0x00ad, 0x00ad },	/* soft hyphen */
	{ 0x0600, 0x0605 },	/* Arabic number signs */
	{ 0x061c, 0x061c },	/* Arabic letter mark */
	{ 0x06dd, 0x06dd },	/* Arabic end of ayah */
	{ 0x070f, 0x070f },	/* Syriac abbreviation mark */
	{ 0x0890, 0x0891 },	/* Arabic pound and piastre marks above */
	{ 0x08e2, 0x08e2 },	/* Arabic disputed end of ayah */
	{ 0x180e, 0x180e },	/* Mongolian vowel separator */
	{ 0x200b, 0x200f },	/* zero width space, joiners, LRM, RLM */
	{ 0x2028, 0x202e },	/* line, paragraph separators; embeddings */
	{ 0x2060, 0x206f },	/* word joiner, invisible operators,
				   isolates, deprecated format controls */
	{ 0xfeff, 0xfeff },	/* zero width no-break space (BOM) */
	{ 0xfff9, 0xfffb },	/* interlinear annotation */
	{ 0x110bd, 0x110bd },	/* Kaithi number sign */
	{ 0x110cd, 0x110cd },	/* Kaithi number sign above */
	{ 0x13430, 0x1343f },	/* Egyptian hieroglyph format controls */
	{ 0x1bca0, 0x1bca3 },	/* shorthand format controls */
	{ 0x1d173, 0x1d17a },	/* musical symbol format controls */
	{ 0xe0000, 0xe007f },	/* tags */
};

static int
vis_active(uint32_t cp)
{
	size_t	 lo = 0, hi = sizeof(vis_invisible) / sizeof(vis_invisible[0]);
	size_t	 mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (cp < vis_invisible[mid].lo)
			hi = mid;
		else if (cp > vis_invisible[mid].hi)
			lo = mid + 1;
		else
			return (1);
	}
	return (0);
}

size_t
vis_buf(char *dst, size_t dstsize, const void *src, size_t srclen,
    int flags)
{
	const unsigned char	*s = src;
	struct vis_out		 o;
	char			 esc[16];
	uint32_t		 cp;
	size_t			 i, n;

	o.dst = dst;
	o.size = dstsize;
	o.len = 0;
	o.full = 0;
	if (dstsize > 0)
		dst[0] = '\0';
	for (i = 0; i < srclen; i += n) {
		if ((n = vis_utf8(s + i, srclen - i, &cp)) == 0) {
			snprintf(esc, sizeof(esc), "\\x%02x", s[i]);
			vis_put(&o, esc, 4);
			n = 1;
		} else if (cp == '\\' && !(flags & VIS_NOSLASH))
			vis_put(&o, "\\\\", 2);
		else if ((cp == '\n' && (flags & VIS_NL)) ||
		    (cp == '\t' && (flags & VIS_TAB)))
			vis_put(&o, (const char *)s + i, 1);
		else if (cp < 0x20 || cp == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)cp);
			vis_put(&o, esc, 4);
		} else if (vis_active(cp))
			vis_put(&o, esc, (size_t)snprintf(esc, sizeof(esc),
			    "\\u{%04X}", (unsigned)cp));
		else
			vis_put(&o, (const char *)s + i, n);
	}
	return (o.len);
}

char *
vis_alloc(const void *src, size_t len, int flags)
{
	char	*dst;
	size_t	 n;

	n = vis_buf(NULL, 0, src, len, flags);
	if ((dst = malloc(n + 1)) == NULL)
		return (NULL);
	(void)vis_buf(dst, n + 1, src, len, flags);
	return (dst);
}

size_t
vis_tail(const void *src, size_t len)
{
	const unsigned char	*s = src;
	unsigned char		 pad[4];
	uint32_t		 cp;
	size_t			 k, need;

	/* A lead byte within the last three, its sequence cut short. */
	for (k = 1; k <= 3 && k <= len; k++) {
		if ((s[len - k] & 0xc0) == 0x80)
			continue;
		need = s[len - k] >= 0xf0 ? 4 : s[len - k] >= 0xe0 ? 3 :
		    s[len - k] >= 0xc0 ? 2 : 1;
		if (need <= k)
			return (0);
		/* Would it be valid once complete?  Try the smallest end. */
		memcpy(pad, s + len - k, k);
		memset(pad + k, 0x80, need - k);
		if (vis_utf8(pad, need, &cp) == need)
			return (k);
		/* 0xe0/0xf0 need more than 0x80 next: try the lowest valid. */
		if (k == 1 && (s[len - 1] == 0xe0 || s[len - 1] == 0xf0)) {
			pad[1] = s[len - 1] == 0xe0 ? 0xa0 : 0x90;
			if (vis_utf8(pad, need, &cp) == need)
				return (k);
		}
		return (0);
	}
	return (0);
}
