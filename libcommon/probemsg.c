/*
 * The kernel probe's answer (probemsg.h), as bytes: integers in network
 * order, strings as wire.h lays them out, decoded field by field.  The
 * cgroup paths are checked here as text (absolute, canonical, plain
 * bytes, the layout's own rules); the parent checks them against the
 * kernel's mounts (supervisord-factory/cgroup.c).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "imsg.h"
#include "probemsg.h"
#include "wire.h"

#define PROBE_DG_MASK	(CONF_DG_LANDLOCK | CONF_DG_LANDLOCK_NET | \
			 CONF_DG_LANDLOCK_SCOPES)

static int
probe_cg_encode(struct ibuf *b, const struct probe_cgroup *pc)
{
	if (ibuf_add_n8(b, pc->mode) == -1)
		return (-1);
	if (pc->mode == PROBE_CG_FAIL)
		return (m_add_str(b, pc->err));
	if (pc->mode == PROBE_CG_NONE)
		return (0);
	return ((m_add_str(b, pc->memory) == -1 ||
	    m_add_str(b, pc->pids) == -1 || m_add_str(b, pc->cpu) == -1 ||
	    m_add_str(b, pc->cpuacct) == -1 ||
	    m_add_str(b, pc->unified) == -1 || m_add_str(b, pc->base) == -1 ||
	    ibuf_add_n8(b, pc->nokill ? 1 : 0) == -1 ||
	    m_add_str(b, pc->line) == -1) ? -1 : 0);
}

void *
probe_answer_encode(const struct probe_answer *pa, size_t *lenp)
{
	struct ibuf	*b;
	void		*data;
	int		 rc;

	if ((b = ibuf_dynamic(256, PROBE_ANSWER_MAX)) == NULL)
		return (NULL);
	rc = ibuf_add_n8(b, pa->ok ? 1 : 0);
	if (!pa->ok && rc == 0)
		rc = m_add_str(b, pa->err);
	else if (rc == 0)
		rc = (ibuf_add_n32(b, pa->abi) == -1 ||
		    ibuf_add_n32(b, pa->downgraded) == -1 ||
		    ibuf_add_n8(b, pa->memfd_noexec ? 1 : 0) == -1 ||
		    ibuf_add_n8(b, pa->pidinfo ? 1 : 0) == -1 ||
		    m_add_str(b, pa->feats) == -1 ||
		    m_add_str(b, pa->repl) == -1 ||
		    ibuf_add_n8(b, pa->overlay) == -1 ||
		    (pa->overlay == PROBE_OVL_FAIL &&
		    m_add_str(b, pa->diskerr) == -1)) ? -1 : 0;
	if (rc == 0 && pa->ok)
		rc = probe_cg_encode(b, &pa->cg);
	if (rc == -1 || (data = malloc(ibuf_size(b))) == NULL) {
		ibuf_free(b);
		errno = rc == -1 ? E2BIG : ENOMEM;
		return (NULL);
	}
	*lenp = ibuf_size(b);
	memcpy(data, ibuf_data(b), *lenp);
	ibuf_free(b);
	return (data);
}

/* Printed on the parent's log and in receipts: no control bytes. */
static int
probe_text(struct mread *m, const char *field, char *s, size_t size,
    int empty)
{
	const unsigned char	*p;

	if (m_get_str(m, field, s, size) == -1)
		return (-1);
	if (!empty && s[0] == '\0')
		return (m_fail(m, "field %s: empty", field));
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			return (m_fail(m, "field %s: byte %#x", field, *p));
	return (0);
}

/*
 * Names joined by single '/', none "." or "..", plain printable bytes
 * without a backslash (mountinfo's escapes): what the layout's paths
 * are made of.  abs: a mount point ("/a/b"; empty if empty); else a
 * base below one ("a/b", or "").
 */
static int
probe_cgpath(struct mread *m, const char *field, char *s, size_t size,
    int abs, int empty)
{
	const char	*p, *c;
	size_t		 n;

	if (m_get_str(m, field, s, size) == -1)
		return (-1);
	if (s[0] == '\0')
		return (empty ? 0 : m_fail(m, "field %s: empty", field));
	if (abs != (s[0] == '/'))
		return (m_fail(m, "field %s: %s, not %s", field, s, abs ?
		    "absolute" : "relative"));
	for (p = s + abs; ; p = c + 1) {
		c = p + strcspn(p, "/");
		n = (size_t)(c - p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return (m_fail(m, "field %s: %s, not canonical",
			    field, s));
		for (; p < c; p++)
			if ((unsigned char)*p <= 0x20 ||
			    (unsigned char)*p >= 0x7f || *p == '\\')
				return (m_fail(m, "field %s: byte %#x", field,
				    (unsigned char)*p));
		if (*c == '\0')
			return (0);
	}
}

/* The layout's own rules, which the parent's paths rely on. */
static int
probe_cg_check(struct mread *m, const struct probe_cgroup *pc)
{
	const char	*u = pc->unified;

	if (pc->mode == PROBE_CG_HYBRID && (pc->memory[0] == '\0' ||
	    pc->pids[0] == '\0' || pc->base[0] != '\0' ||
	    (pc->cpuacct[0] == '\0' && u[0] == '\0')))
		return (m_fail(m, "field cgmode: hybrid, without memory, "
		    "pids or cpu time, or with a base"));
	if (pc->mode == PROBE_CG_V2 && (u[0] == '\0' ||
	    strcmp(pc->memory, u) != 0 || strcmp(pc->pids, u) != 0 ||
	    strcmp(pc->cpu, pc->cpuacct) != 0 ||
	    (pc->cpu[0] != '\0' && strcmp(pc->cpu, u) != 0)))
		return (m_fail(m, "field cgmode: v2, its controllers not all "
		    "in the unified tree"));
	if (u[0] == '\0' && !pc->nokill)
		return (m_fail(m, "field cgnokill: a cgroup.kill without "
		    "cgroup2"));
	return (0);
}

static int
probe_cg_decode(struct mread *m, struct probe_cgroup *pc)
{
	uint8_t	 mode;

	if (m_get_n8(m, "cgmode", &mode) == -1)
		return (-1);
	if (mode > PROBE_CG_MAX)
		return (m_fail(m, "field cgmode: %u, unknown", mode));
	pc->mode = mode;
	if (mode == PROBE_CG_FAIL)
		return (probe_text(m, "cgerr", pc->err, sizeof(pc->err), 0));
	if (mode == PROBE_CG_NONE)
		return (0);
	probe_cgpath(m, "cgmemory", pc->memory, sizeof(pc->memory), 1, 0);
	probe_cgpath(m, "cgpids", pc->pids, sizeof(pc->pids), 1, 0);
	probe_cgpath(m, "cgcpu", pc->cpu, sizeof(pc->cpu), 1, 1);
	probe_cgpath(m, "cgcpuacct", pc->cpuacct, sizeof(pc->cpuacct), 1, 1);
	probe_cgpath(m, "cgunified", pc->unified, sizeof(pc->unified), 1, 1);
	probe_cgpath(m, "cgbase", pc->base, sizeof(pc->base), 0, 1);
	m_get_bool(m, "cgnokill", &pc->nokill);
	if (probe_text(m, "cgline", pc->line, sizeof(pc->line), 0) == -1)
		return (-1);
	return (probe_cg_check(m, pc));
}

int
probe_answer_decode(const void *data, size_t len, struct probe_answer *pa,
    char *err, size_t errlen)
{
	struct mread	 m;
	uint8_t		 ovl = PROBE_OVL_NONE;

	memset(pa, 0, sizeof(*pa));
	m_open(&m, "probe answer", data, len, err, errlen);
	if (m_get_bool(&m, "ok", &pa->ok) == -1)
		return (-1);
	if (!pa->ok) {
		(void)probe_text(&m, "error", pa->err, sizeof(pa->err), 0);
		return (m_end(&m));
	}
	if (m_get_n32(&m, "abi", &pa->abi) == 0 && pa->abi > PROBE_ABI_MAX)
		m_fail(&m, "field abi: %u, more than %d", pa->abi,
		    PROBE_ABI_MAX);
	if (m_get_n32(&m, "downgraded", &pa->downgraded) == 0 &&
	    (pa->downgraded & ~PROBE_DG_MASK) != 0)
		m_fail(&m, "field downgraded: %#x, not Landlock's",
		    pa->downgraded);
	m_get_bool(&m, "memfd_noexec", &pa->memfd_noexec);
	m_get_bool(&m, "pidinfo", &pa->pidinfo);
	probe_text(&m, "feats", pa->feats, sizeof(pa->feats), 0);
	probe_text(&m, "repl", pa->repl, sizeof(pa->repl), 1);
	if (m_get_n8(&m, "overlay", &ovl) == 0 && ovl > PROBE_OVL_MAX)
		m_fail(&m, "field overlay: %u, unknown", ovl);
	pa->overlay = ovl;
	if (pa->overlay == PROBE_OVL_FAIL)
		probe_text(&m, "diskerr", pa->diskerr, sizeof(pa->diskerr), 0);
	(void)probe_cg_decode(&m, &pa->cg);
	return (m_end(&m));
}

void
probe_refuse(char *err, size_t errlen, const char *name, const char *why)
{
	snprintf(err, errlen, "%s: %s; factoryd.conf sandbox.downgrade "
	    "[%s] runs without it", name, why, name);
}

int
probe_faked(const char *name)
{
#ifdef FACTORY_TESTBUILD
	const char	*s = getenv("FACTORY_TEST_NOFEATURE"), *p;
	size_t		 n = strlen(name);

	for (p = s; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return (1);
#endif
	return (0);
}
