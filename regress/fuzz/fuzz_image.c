/*
 * The path check of every image archive entry (libcommon/imgtree.c,
 * imgpath_clean): whatever the bytes, a path it accepts is relative,
 * has no "", "." or ".." component, keeps its bounds, is its own clean
 * form, and names the same components in the same order as the input;
 * an input with a ".." component or a leading '/' is never accepted.
 */
#include <limits.h>

#include "fuzz.h"
#include "imgtree.h"

#define FZ_MAXPATH	200
#define FZ_MAXDEPTH	8

/* The input's components that name something, joined by '/'. */
static void
expect(const char *in, char *out, size_t len, int *dotdot)
{
	const char	*p = in, *e;
	size_t		 n, o = 0;

	*dotdot = 0;
	out[0] = '\0';
	while (*p != '\0') {
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			*dotdot = 1;
		if (n > 0 && !(n == 1 && p[0] == '.') && o + n + 2 < len) {
			if (o > 0)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
			out[o] = '\0';
		}
		p = *e == '/' ? e + 1 : e;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*in, out[FZ_MAXPATH + 1], again[FZ_MAXPATH + 1], err[128];
	char	*want, *p;
	int	 rc, rc2, dotdot, depth;

	FUZZ_ASSERT((in = malloc(size + 1)) != NULL, "malloc");
	memcpy(in, data, size);
	in[size] = '\0';	/* a name ends at its first NUL */
	rc = imgpath_clean(in, out, sizeof(out), FZ_MAXPATH, FZ_MAXDEPTH, err,
	    sizeof(err));
	FUZZ_ASSERT(rc >= -1 && rc <= 1, "rc %d", rc);
	FUZZ_ASSERT((want = malloc(size + 3)) != NULL, "malloc");
	expect(in, want, size + 3, &dotdot);
	if (in[0] == '/' || dotdot)
		FUZZ_ASSERT(rc == -1, "accepted \"%s\"", in);
	if (rc == 1)
		FUZZ_ASSERT(want[0] == '\0', "the root, but names %s", want);
	if (rc == 0) {
		FUZZ_ASSERT(strcmp(out, want) == 0, "\"%s\" is not \"%s\"",
		    out, want);
		FUZZ_ASSERT(out[0] != '/' && strlen(out) <= FZ_MAXPATH,
		    "bounds");
		depth = 1;
		for (p = out; *p != '\0'; p++)
			depth += *p == '/';
		FUZZ_ASSERT(depth <= FZ_MAXDEPTH, "depth %d", depth);
		FUZZ_ASSERT(strstr(out, "//") == NULL &&
		    strncmp(out, "./", 2) != 0 && strstr(out, "/./") == NULL &&
		    strcmp(out, ".") != 0, "a component left: %s", out);
		rc2 = imgpath_clean(out, again, sizeof(again), FZ_MAXPATH,
		    FZ_MAXDEPTH, err, sizeof(err));
		FUZZ_ASSERT(rc2 == 0 && strcmp(again, out) == 0,
		    "not its own clean form");
	}
	free(want);
	free(in);
	return (0);
}
