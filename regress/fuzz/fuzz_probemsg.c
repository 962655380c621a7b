/*
 * The launcher's kernel probe answer (libcommon/probemsg.c), which
 * factoryd reads once at start from "factory-sandbox probe".
 * Promises checked: what decodes has every field in its range (a
 * Landlock ABI, only Landlock's downgrades, a known overlay answer and
 * cgroup layout, the cgroup paths absolute and canonical, the base
 * relative, every text NUL-terminated and printable), and encoding it
 * again gives the input's bytes exactly: the encoding has one form,
 * so nothing is dropped or tolerated on the way.
 */
#include "conf.h"
#include "fuzz.h"
#include "probemsg.h"

/* Absolute (or relative) names joined by single '/', no "." or "..". */
static int
canonical(const char *s, int abs)
{
	if (s[0] == '\0')
		return (1);
	if ((s[0] == '/') != abs || s[strlen(s) - 1] == '/' ||
	    strstr(s, "//") != NULL || strstr(s, "/./") != NULL ||
	    strstr(s, "/../") != NULL || strncmp(s, "./", 2) == 0 ||
	    strncmp(s, "../", 3) == 0)
		return (0);
	return (strcspn(s, " \\\t\n") == strlen(s));
}

static int
text(const char *s, size_t size)
{
	const unsigned char	*p;

	if (memchr(s, '\0', size) == NULL)
		return (0);
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			return (0);
	return (1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_answer	 pa;
	const struct probe_cgroup *pc = &pa.cg;
	char			 err[256];
	void			*b;
	size_t			 len;

	if (probe_answer_decode(data, size, &pa, err, sizeof(err)) == -1) {
		FUZZ_ASSERT(err[0] != '\0', "no reason");
		return (0);
	}
	FUZZ_ASSERT(text(pa.err, sizeof(pa.err)) && text(pa.feats,
	    sizeof(pa.feats)) && text(pa.repl, sizeof(pa.repl)) &&
	    text(pa.diskerr, sizeof(pa.diskerr)), "a text out of range");
	FUZZ_ASSERT(pa.abi <= PROBE_ABI_MAX && (pa.downgraded &
	    ~(CONF_DG_LANDLOCK | CONF_DG_LANDLOCK_NET |
	    CONF_DG_LANDLOCK_SCOPES)) == 0 && pa.overlay >= 0 &&
	    pa.overlay <= PROBE_OVL_MAX && pc->mode >= 0 &&
	    pc->mode <= PROBE_CG_MAX, "a number out of range");
	if (pc->mode == PROBE_CG_HYBRID || pc->mode == PROBE_CG_V2)
		FUZZ_ASSERT(canonical(pc->memory, 1) && pc->memory[0] != '\0' &&
		    canonical(pc->pids, 1) && pc->pids[0] != '\0' &&
		    canonical(pc->cpu, 1) && canonical(pc->cpuacct, 1) &&
		    canonical(pc->unified, 1) && canonical(pc->base, 0) &&
		    text(pc->line, sizeof(pc->line)) && pc->line[0] != '\0' &&
		    (pc->unified[0] != '\0' || pc->nokill),
		    "a cgroup path or the line out of range");
	FUZZ_ASSERT((b = probe_answer_encode(&pa, &len)) != NULL,
	    "a decoded answer does not encode");
	FUZZ_ASSERT(len == size && memcmp(b, data, size) == 0,
	    "encoded again, not the same bytes");
	free(b);
	return (0);
}
