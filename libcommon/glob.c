/*
 * Scope globs of factory-manifest(5), matched against the
 * slash-separated relative paths of a repository's files.
 *
 *	*	any characters within one component, even none
 *	?	one character (UTF-8), never '/'
 *	[...]	one character of a class: a-z ranges, ! or ^ negates,
 *		a ']' right after the '[' (or '[!') is literal
 *	\c	the character c itself
 *	**	as a whole component: zero or more components; as the
 *		last component, one or more (src followed by a "**"
 *		component is what is inside src, not src itself)
 *
 * A pattern is matched against the whole path, component by
 * component, so a pattern without '/' matches only at the top
 * ("*.c" matches "x.c", not "src/x.c"; that is "**" "/" "*.c").  A
 * leading dot is not special.  Patterns are UTF-8; paths may hold
 * any bytes.
 *
 * Both levels (characters within a component, components within a
 * path) backtrack only to the most recent star, which is enough for
 * stars that match any sequence and keeps the work at most
 * proportional to the product of the lengths: "*a*a*a*a*b" cannot
 * explode.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"

/* One character of UTF-8 at s (< end); invalid bytes count alone. */
static size_t
u8_next(const char *s, const char *end, uint32_t *cp)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 n, i, avail = (size_t)(end - s);
	uint32_t		 c;

	if (u[0] < 0x80) {
		*cp = u[0];
		return (1);
	}
	if ((u[0] & 0xe0) == 0xc0) {
		n = 2;
		c = u[0] & 0x1f;
	} else if ((u[0] & 0xf0) == 0xe0) {
		n = 3;
		c = u[0] & 0x0f;
	} else if ((u[0] & 0xf8) == 0xf0) {
		n = 4;
		c = u[0] & 0x07;
	} else
		goto raw;
	if (n > avail)
		goto raw;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			goto raw;
		c = (c << 6) | (u[i] & 0x3f);
	}
	*cp = c;
	return (n);
 raw:
	*cp = u[0];
	return (1);
}

/*
 * The class starting at p ('['), ending before end.  Sets *next past
 * the ']'; returns 1 if c is in it, 0 if not, -1 if it never closes.
 */
static int
class_match(const char *p, const char *end, uint32_t c, const char **next)
{
	uint32_t	 lo, hi;
	int		 neg = 0, in = 0, first = 1;

	p++;
	if (p < end && (*p == '!' || *p == '^')) {
		neg = 1;
		p++;
	}
	for (;;) {
		if (p >= end)
			return (-1);
		if (*p == ']' && !first)
			break;
		first = 0;
		p += u8_next(p, end, &lo);
		hi = lo;
		if (p + 1 < end && *p == '-' && p[1] != ']') {
			p++;
			p += u8_next(p, end, &hi);
		}
		if (c >= lo && c <= hi)
			in = 1;
	}
	*next = p + 1;
	return (in != neg);
}

/* Does one pattern element at *pp match the character at *tp? */
static int
elem_match(const char **pp, const char *pe, const char **tp, const char *te)
{
	const char	*p = *pp, *next;
	uint32_t	 c;
	size_t		 tn;
	int		 r;

	tn = u8_next(*tp, te, &c);
	switch (*p) {
	case '?':
		*pp = p + 1;
		*tp += tn;
		return (1);
	case '[':
		if ((r = class_match(p, pe, c, &next)) != 1)
			return (0);
		*pp = next;
		*tp += tn;
		return (1);
	case '\\':
		if (p + 1 < pe)
			p++;
		/* FALLTHROUGH */
	default:
		if (*p != **tp)
			return (0);
		*pp = p + 1;
		*tp += 1;
		return (1);
	}
}

/* One component against one component, '*' within it. */
static int
comp_match(const char *p, const char *pe, const char *t, const char *te)
{
	const char	*star_p = NULL, *star_t = NULL;
	uint32_t	 c;

	while (t < te) {
		if (p < pe && *p == '*') {
			star_p = ++p;
			star_t = t;
			continue;
		}
		if (p < pe && elem_match(&p, pe, &t, te))
			continue;
		if (star_p == NULL)
			return (0);
		/* Let the last star take one more character. */
		star_t += u8_next(star_t, te, &c);
		t = star_t;
		p = star_p;
	}
	while (p < pe && *p == '*')
		p++;
	return (p == pe);
}

static const char *
comp_end(const char *s)
{
	const char	*e = strchr(s, '/');

	return (e == NULL ? s + strlen(s) : e);
}

static const char *
comp_next(const char *e)
{
	return (*e == '/' ? e + 1 : e);
}

static int
is_globstar(const char *p, const char *pe)
{
	return (pe - p == 2 && p[0] == '*' && p[1] == '*');
}

/* A clean relative path: no leading, trailing or double slash. */
static int
path_clean(const char *s)
{
	if (*s == '\0' || *s == '/' || s[strlen(s) - 1] == '/')
		return (0);
	return (strstr(s, "//") == NULL);
}

int
glob_match(const char *pattern, const char *path)
{
	const char	*p = pattern, *t = path, *pe, *te;
	const char	*star_p = NULL, *star_t = NULL;

	if (glob_valid(pattern, NULL, 0) == -1 || !path_clean(path))
		return (0);
	while (*t != '\0') {
		pe = comp_end(p);
		te = comp_end(t);
		if (*p != '\0' && is_globstar(p, pe)) {
			if (*pe == '\0')
				return (1);	/* one or more left */
			star_p = p = comp_next(pe);
			star_t = t;
			continue;
		}
		if (*p != '\0' && comp_match(p, pe, t, te)) {
			p = comp_next(pe);
			t = comp_next(te);
			continue;
		}
		if (star_p == NULL)
			return (0);
		/* Let the last "**" take one more component. */
		star_t = comp_next(comp_end(star_t));
		t = star_t;
		p = star_p;
	}
	/* The path is used up: inner "**" may match nothing, a last one not. */
	while (*p != '\0') {
		pe = comp_end(p);
		if (!is_globstar(p, pe) || *pe == '\0')
			break;
		p = comp_next(pe);
	}
	return (*p == '\0');
}

static int
glob_why(char *why, size_t len, const char *reason)
{
	if (why != NULL && len > 0)
		strlcpy(why, reason, len);
	return (-1);
}

/* One component of a pattern, p to pe (exclusive), not empty. */
static int
comp_valid(const char *p, const char *pe, char *why, size_t len)
{
	const char	*next;
	size_t		 n = (size_t)(pe - p);

	if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
		return (glob_why(why, len,
		    "'.' and '..' components are refused"));
	if (is_globstar(p, pe))
		return (0);
	for (; p < pe; p++) {
		if (p[0] == '*' && p + 1 < pe && p[1] == '*')
			return (glob_why(why, len,
			    "'**' must be a whole component"));
		if (*p == '\\') {
			if (++p >= pe)
				return (glob_why(why, len,
				    "'\\' at the end of a component"));
			continue;
		}
		if (*p != '[')
			continue;
		if (class_match(p, pe, 0, &next) == -1)
			return (glob_why(why, len, "unclosed '['"));
		p = next - 1;
	}
	return (0);
}

int
glob_valid(const char *pattern, char *why, size_t len)
{
	const char	*p, *pe, *end;
	uint32_t	 cp;
	size_t		 n;

	if (pattern == NULL || *pattern == '\0')
		return (glob_why(why, len, "empty pattern"));
	if (strlen(pattern) >= PATH_MAX)
		return (glob_why(why, len, "too long"));
	for (p = pattern; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return (glob_why(why, len,
			    "contains a control character"));
	/*
	 * '?' and '*' step over whole characters, a literal byte over one
	 * byte: a pattern byte outside a UTF-8 sequence would let the two
	 * cut a path in different places, and matching would depend on
	 * which one got there first.
	 */
	end = pattern + strlen(pattern);
	for (p = pattern; *p != '\0'; p += n)
		if ((n = u8_next(p, end, &cp)) == 1 &&
		    (unsigned char)*p >= 0x80)
			return (glob_why(why, len, "not UTF-8"));
	if (*pattern == '/')
		return (glob_why(why, len, "absolute: globs are relative to "
		    "the top of the repository"));
	if (pattern[strlen(pattern) - 1] == '/')
		return (glob_why(why, len, "ends with '/'"));
	for (p = pattern; *p != '\0'; p = comp_next(pe)) {
		pe = comp_end(p);
		if (pe == p)
			return (glob_why(why, len, "empty component"));
		if (comp_valid(p, pe, why, len) == -1)
			return (-1);
	}
	return (0);
}

int
scope_match(char * const *globs, const char *path)
{
	size_t	 i;

	if (globs == NULL)
		return (0);
	for (i = 0; globs[i] != NULL; i++)
		if (glob_match(globs[i], path))
			return (1);
	return (0);
}
