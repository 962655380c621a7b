/*
 * The kernel probe's answer (probemsg.h), as bytes: integers in network
 * order, strings as wire.h lays them out, decoded field by field.
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
		    m_add_str(b, pa->repl) == -1) ? -1 : 0;
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

int
probe_answer_decode(const void *data, size_t len, struct probe_answer *pa,
    char *err, size_t errlen)
{
	struct mread	 m;

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
