/*
 * Scope globs (factory-manifest(5), libcommon/glob.c): the input is a
 * pattern, a NUL, and a path (any bytes: a file name an agent chose).
 * glob_valid() must hold a reason for every refusal, and glob_match()
 * must agree with a reference matcher written here from the rules of
 * the manual: a slow, memoised search over every way to match, where
 * glob.c backtracks only to the most recent star.
 */
#include <limits.h>

#include "conf.h"
#include "fuzz.h"

#define REF_MAX		256	/* bytes of pattern and path compared */
#define COMP_MAX	(REF_MAX / 2 + 1)

/* Elements of one pattern component. */
enum { E_STAR, E_ANY, E_CLASS, E_LIT };
struct elem {
	int		 kind;
	unsigned char	 c;		/* E_LIT */
	const char	*cls, *clsend;	/* E_CLASS: after '[' to the ']' */
};

/* The length of the character at s: a UTF-8 sequence, else one byte. */
static size_t
ref_u8(const unsigned char *s, size_t avail, uint32_t *cp)
{
	size_t	 n, i;

	if (s[0] < 0x80)
		n = 1;
	else if (s[0] >= 0xc0 && s[0] < 0xe0)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] < 0xf0)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] < 0xf8)
		n = 4;
	else
		n = 0;
	if (n == 0 || n > avail)
		goto raw;
	*cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if (s[i] < 0x80 || s[i] >= 0xc0)
			goto raw;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return (n);
 raw:
	*cp = s[0];
	return (1);
}

/*
 * A class: items are characters or ranges a-b; a ']' first (after an
 * optional ! or ^) is literal; '-' before ']' is literal.
 */
static int
ref_inclass(const char *p, const char *end, uint32_t c)
{
	uint32_t	 lo, hi;
	size_t		 n;
	int		 neg = 0, in = 0;

	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	while (p < end) {
		n = ref_u8((const unsigned char *)p, end - p, &lo);
		p += n;
		hi = lo;
		if (end - p >= 2 && *p == '-') {
			n = ref_u8((const unsigned char *)p + 1, end - p - 1,
			    &hi);
			p += 1 + n;
		}
		if (c >= lo && c <= hi)
			in = 1;
	}
	return (in != neg);
}

/* Split a valid component into elements; returns their number. */
static size_t
ref_elems(const char *p, const char *pe, struct elem *e)
{
	size_t		 n = 0;
	const char	*q;

	while (p < pe) {
		switch (*p) {
		case '*':
			e[n++].kind = E_STAR;
			p++;
			break;
		case '?':
			e[n++].kind = E_ANY;
			p++;
			break;
		case '[':
			q = p + 1;
			if (q < pe && (*q == '!' || *q == '^'))
				q++;
			q++;	/* a first ']' is a member */
			while (*q != ']')
				q++;
			e[n].kind = E_CLASS;
			e[n].cls = p + 1;
			e[n++].clsend = q;
			p = q + 1;
			break;
		case '\\':
			p++;
			/* FALLTHROUGH */
		default:
			e[n].kind = E_LIT;
			e[n++].c = *p++;
			break;
		}
	}
	return (n);
}

struct cstate {
	const struct elem	*e;
	size_t			 ne;
	const unsigned char	*t;
	size_t			 tlen;
	signed char		 memo[REF_MAX + 1][REF_MAX + 1];
};

static int
ref_cm(struct cstate *s, size_t pi, size_t ti)
{
	uint32_t	 c;
	size_t		 n;
	int		 r = 0;

	if (s->memo[pi][ti] != -1)
		return (s->memo[pi][ti]);
	if (pi == s->ne)
		r = ti == s->tlen;
	else if (s->e[pi].kind == E_STAR)
		r = ref_cm(s, pi + 1, ti) || (ti < s->tlen &&
		    ref_cm(s, pi, ti + ref_u8(s->t + ti, s->tlen - ti, &c)));
	else if (ti < s->tlen) {
		n = ref_u8(s->t + ti, s->tlen - ti, &c);
		switch (s->e[pi].kind) {
		case E_ANY:
			r = ref_cm(s, pi + 1, ti + n);
			break;
		case E_CLASS:
			r = ref_inclass(s->e[pi].cls, s->e[pi].clsend, c) &&
			    ref_cm(s, pi + 1, ti + n);
			break;
		default:
			r = s->t[ti] == s->e[pi].c && ref_cm(s, pi + 1, ti + 1);
			break;
		}
	}
	s->memo[pi][ti] = r;
	return (r);
}

static struct cstate	 cs;

static int
ref_comp(const char *p, const char *pe, const char *t, const char *te)
{
	static struct elem	 e[REF_MAX];

	cs.ne = ref_elems(p, pe, e);
	cs.e = e;
	cs.t = (const unsigned char *)t;
	cs.tlen = te - t;
	memset(cs.memo, -1, (cs.ne + 1) * sizeof(cs.memo[0]));
	return (ref_cm(&cs, 0, 0));
}

struct pstate {
	const char	*pc[COMP_MAX], *pce[COMP_MAX];
	const char	*tc[COMP_MAX], *tce[COMP_MAX];
	size_t		 np, nt;
	signed char	 memo[COMP_MAX + 1][COMP_MAX + 1];
};

static int
ref_isglobstar(const struct pstate *s, size_t i)
{
	return (s->pce[i] - s->pc[i] == 2 && s->pc[i][0] == '*' &&
	    s->pc[i][1] == '*');
}

/* "**": zero or more components, one or more as the last one. */
static int
ref_pm(struct pstate *s, size_t i, size_t j)
{
	int	 r;

	if (s->memo[i][j] != -1)
		return (s->memo[i][j]);
	if (i == s->np)
		r = j == s->nt;
	else if (ref_isglobstar(s, i) && i + 1 == s->np)
		r = s->nt - j >= 1;
	else if (ref_isglobstar(s, i))
		r = ref_pm(s, i + 1, j) || (j < s->nt && ref_pm(s, i, j + 1));
	else
		r = j < s->nt && ref_comp(s->pc[i], s->pce[i], s->tc[j],
		    s->tce[j]) && ref_pm(s, i + 1, j + 1);
	s->memo[i][j] = r;
	return (r);
}

static size_t
ref_split(const char *s, const char **c, const char **ce)
{
	size_t	 n = 0;

	for (;;) {
		c[n] = s;
		while (*s != '\0' && *s != '/')
			s++;
		ce[n++] = s;
		if (*s == '\0')
			return (n);
		s++;
	}
}

static struct pstate	 ps;

static int
ref_match(const char *pattern, const char *path)
{
	size_t	 n = strlen(path);

	/* Only clean relative paths match anything. */
	if (n == 0 || path[0] == '/' || path[n - 1] == '/' ||
	    strstr(path, "//") != NULL)
		return (0);
	ps.np = ref_split(pattern, ps.pc, ps.pce);
	ps.nt = ref_split(path, ps.tc, ps.tce);
	memset(ps.memo, -1, sizeof(ps.memo));
	return (ref_pm(&ps, 0, 0));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*buf, *pattern, *path, why[256], *globs[2];
	int	 m;

	if ((buf = malloc(size + 2)) == NULL)
		return (0);
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = '\0';
	pattern = buf;
	path = buf + strlen(buf) + 1;
	if (path > buf + size)
		path = buf + size;	/* no NUL: the empty path */

	why[0] = '\0';
	if (glob_valid(pattern, why, sizeof(why)) == -1) {
		FUZZ_ASSERT(why[0] != '\0', "refused without a reason");
		FUZZ_ASSERT(glob_match(pattern, path) == 0,
		    "an invalid pattern matched");
		free(buf);
		return (0);
	}
	FUZZ_ASSERT(glob_valid(pattern, NULL, 0) == 0, "valid only once");
	m = glob_match(pattern, path);
	FUZZ_ASSERT(m == 0 || m == 1, "glob_match returned %d", m);
	globs[0] = pattern;
	globs[1] = NULL;
	FUZZ_ASSERT(scope_match(globs, path) == m, "scope_match differs");
	if (strlen(pattern) <= REF_MAX && strlen(path) <= REF_MAX)
		FUZZ_ASSERT(ref_match(pattern, path) == m,
		    "glob_match(\"%s\", \"%s\") is %d, the rules say %d",
		    pattern, path, m, !m);
	free(buf);
	return (0);
}
