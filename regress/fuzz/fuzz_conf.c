/*
 * factoryd.conf(5): conf_parse() on any bytes, as the parent reads its
 * configuration (also on a reload, from a file an operator may have
 * half written).  A config that parses prints, and the print parses
 * again to the same config and the same print (the promise
 * regress/conf checks on its golden files).
 */
#include <limits.h>

#include "conf.h"
#include "fuzz.h"

static int	 fd1 = -1, fd2 = -1;
static char	 path1[64], path2[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd1 = fuzz_memfd("conf");
	fd2 = fuzz_memfd("conf-print");
	fuzz_fdpath(fd1, path1, sizeof(path1));
	fuzz_fdpath(fd2, path2, sizeof(path2));
	return (0);
}

/*
 * The print says what the config says: it parses to the same values.
 * Compared as bytes, but for the file name and the list links (both
 * configs are calloc'd and filled the same way, so their padding and
 * what follows a string's NUL agree too).
 */
static void
check_same(const struct factoryd_conf *a, const struct factoryd_conf *b)
{
	static struct factoryd_conf	 ca, cb;
	const struct conf_repo		*ra, *rb;
	struct conf_repo		 xa, xb;

	ca = *a;
	cb = *b;
	memset(ca.file, 0, sizeof(ca.file));
	memset(cb.file, 0, sizeof(cb.file));
	memset(&ca.repos, 0, sizeof(ca.repos));
	memset(&cb.repos, 0, sizeof(cb.repos));
	FUZZ_ASSERT(memcmp(&ca, &cb, sizeof(ca)) == 0,
	    "the print parses to another config");
	rb = TAILQ_FIRST(&b->repos);
	TAILQ_FOREACH(ra, &a->repos, entry) {
		FUZZ_ASSERT(rb != NULL, "a repository less");
		xa = *ra;
		xb = *rb;
		memset(&xa.entry, 0, sizeof(xa.entry));
		memset(&xb.entry, 0, sizeof(xb.entry));
		FUZZ_ASSERT(memcmp(&xa, &xb, sizeof(xa)) == 0,
		    "repository %s differs", ra->name);
		rb = TAILQ_NEXT(rb, entry);
	}
	FUZZ_ASSERT(rb == NULL, "a repository more");
}

/* The print of c, malloc'd; *len its size. */
static char *
print(const struct factoryd_conf *c, size_t *len)
{
	FILE	*fp;
	char	*buf = NULL;

	FUZZ_ASSERT((fp = open_memstream(&buf, len)) != NULL, "memstream");
	conf_print(fp, c);
	FUZZ_ASSERT(fclose(fp) == 0, "fclose");
	return (buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct factoryd_conf	*c, *c2;
	char			 err[CONF_ERRLEN], *p1, *p2;
	size_t			 l1, l2;

	fuzz_memfd_set(fd1, data, size);
	err[0] = '\0';
	if (conf_parse(path1, &c, err, sizeof(err)) == -1) {
		FUZZ_ASSERT(c == NULL, "failed, but a config came back");
		/* One line, naming the file. */
		FUZZ_ASSERT(strncmp(err, path1, strlen(path1)) == 0 &&
		    strchr(err, '\n') == NULL, "bad error line: %s", err);
		return (0);
	}
	p1 = print(c, &l1);
	fuzz_memfd_set(fd2, p1, l1);
	FUZZ_ASSERT(conf_parse(path2, &c2, err, sizeof(err)) == 0,
	    "the print does not parse: %s\n%s", err, p1);
	check_same(c, c2);
	p2 = print(c2, &l2);
	FUZZ_ASSERT(l1 == l2 && memcmp(p1, p2, l1) == 0,
	    "the print prints differently:\n%s\n---\n%s", p1, p2);
	free(p1);
	free(p2);
	conf_free(c);
	conf_free(c2);
	return (0);
}
