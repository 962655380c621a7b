/*
 * factory-manifest(5): manifest_parse() on any bytes, as the parent
 * receives them from any member of _factoryctl.  A manifest that
 * parses prints, and the print parses again to the same manifest and
 * the same print.
 */
#include "conf.h"
#include "fuzz.h"

#define NAME		"m.yaml"
#define MANIFEST_MAX	(64 * 1024)	/* manifest.c's bound */

static int
strv_eq(char * const *a, char * const *b)
{
	size_t	 i;

	if (a == NULL || b == NULL)
		return (a == b);
	for (i = 0; a[i] != NULL && b[i] != NULL; i++)
		if (strcmp(a[i], b[i]) != 0)
			return (0);
	return (a[i] == b[i]);
}

/* The print says what the manifest says: it parses to the same. */
static void
check_same(const struct manifest *a, const struct manifest *b)
{
	int	 i;

	FUZZ_ASSERT(strcmp(a->repository, b->repository) == 0 &&
	    strcmp(a->baseline, b->baseline) == 0 &&
	    strcmp(a->title, b->title) == 0, "repository, baseline, title");
	FUZZ_ASSERT(strv_eq(a->scope, b->scope), "scope");
	FUZZ_ASSERT(strv_eq(a->agent, b->agent), "agent");
	FUZZ_ASSERT(strv_eq(a->validate, b->validate), "validate");
	FUZZ_ASSERT(strv_eq(a->env, b->env), "env");
	FUZZ_ASSERT(strv_eq(a->exec, b->exec), "exec");
	FUZZ_ASSERT(strv_eq(a->allow, b->allow), "network.allow");
	FUZZ_ASSERT(memcmp(&a->limits, &b->limits, sizeof(a->limits)) == 0,
	    "limits");
	FUZZ_ASSERT(a->approval == b->approval, "approval");
	FUZZ_ASSERT(a->cohort_size == b->cohort_size &&
	    a->cohort_nvariants == b->cohort_nvariants, "cohort");
	for (i = 0; i < a->cohort_nvariants; i++)
		FUZZ_ASSERT(strv_eq(a->cohort_env[i], b->cohort_env[i]),
		    "cohort.variants[%d].env", i);
}

static char *
print(const struct manifest *m, size_t *len)
{
	FILE	*fp;
	char	*buf = NULL;

	FUZZ_ASSERT((fp = open_memstream(&buf, len)) != NULL, "memstream");
	manifest_print(fp, m);
	FUZZ_ASSERT(fclose(fp) == 0, "fclose");
	return (buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest	*m, *m2;
	char		 err[1024], *p1, *p2;
	size_t		 l1, l2, i;

	err[0] = '\0';
	if (manifest_parse(NAME, data, size, &m, err, sizeof(err)) == -1) {
		FUZZ_ASSERT(m == NULL, "failed, but a manifest came back");
		FUZZ_ASSERT(strncmp(err, NAME ":", strlen(NAME ":")) == 0 &&
		    strchr(err, '\n') == NULL, "bad error line: %s", err);
		return (0);
	}
	/* What the rest of the suite relies on. */
	FUZZ_ASSERT(m->agent != NULL && m->agent[0] != NULL &&
	    m->agent[0][0] == '/', "agent");
	FUZZ_ASSERT(m->validate != NULL && m->validate[0] != NULL &&
	    m->validate[0][0] == '/', "validate");
	FUZZ_ASSERT(m->scope != NULL && m->scope[0] != NULL, "scope");
	for (i = 0; m->scope[i] != NULL; i++)
		FUZZ_ASSERT(glob_valid(m->scope[i], err, sizeof(err)) == 0,
		    "scope[%zu] is not a valid glob: %s", i, err);
	for (i = 0; m->env != NULL && m->env[i] != NULL; i++)
		FUZZ_ASSERT(strchr(m->env[i], '=') != NULL &&
		    m->env[i][0] != '=', "env[%zu]", i);
	p1 = print(m, &l1);
	/* Quoting may make the print longer than a manifest may be. */
	if (l1 <= MANIFEST_MAX) {
		FUZZ_ASSERT(manifest_parse(NAME, p1, l1, &m2, err,
		    sizeof(err)) == 0, "the print does not parse: %s\n%s",
		    err, p1);
		check_same(m, m2);
		p2 = print(m2, &l2);
		FUZZ_ASSERT(l1 == l2 && memcmp(p1, p2, l1) == 0,
		    "the print prints differently:\n%s\n---\n%s", p1, p2);
		free(p2);
		manifest_free(m2);
	}
	free(p1);
	manifest_free(m);
	return (0);
}
