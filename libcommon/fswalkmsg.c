/*
 * factory-fswalk's job and answer (fswalkmsg.h), field by field.  Both
 * sides decode what the other wrote: root the answer (the helper read
 * trees an agent or an image wrote), the helper its job.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "esc.h"
#include "fswalkmsg.h"
#include "wire.h"

struct ibuf *
fswalk_image_job_compose(const struct fswalk_image_job *j)
{
	struct ibuf	*b;

	if ((b = ibuf_dynamic(64, FSWALK_JOB_MAX)) == NULL)
		return (NULL);
	if (ibuf_add_n32(b, FSWALK_IMAGE) == -1 ||
	    ibuf_add_n32(b, j->owner) == -1 ||
	    ibuf_add_n8(b, j->chown != 0) == -1 ||
	    ibuf_add_n8(b, j->bounded != 0) == -1 ||
	    ibuf_add_n64(b, j->lim.max_entries) == -1 ||
	    ibuf_add_n64(b, j->lim.max_bytes) == -1 ||
	    ibuf_add_n32(b, j->lim.max_depth) == -1 ||
	    ibuf_add_n32(b, j->lim.max_path) == -1 ||
	    ibuf_add_n8(b, j->out != 0) == -1 ||
	    ibuf_add_n8(b, j->canon != 0) == -1) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

struct ibuf *
fswalk_pristine_job_compose(const struct fswalk_pristine_job *j)
{
	struct ibuf	*b;

	if ((b = ibuf_dynamic(64, FSWALK_JOB_MAX)) == NULL)
		return (NULL);
	if (ibuf_add_n32(b, FSWALK_PRISTINE) == -1 ||
	    ibuf_add_n32(b, j->from) == -1 ||
	    ibuf_add_n64(b, j->max) == -1 ||
	    m_add_str(b, j->path) == -1) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

struct ibuf *
fswalk_setup_job_compose(uint32_t kind, const struct fswalk_setup_job *j)
{
	struct ibuf	*b;
	uint32_t	 n = 0;

	while (j->outputs != NULL && j->outputs[n] != NULL)
		n++;
	if (n > FSWALK_OUTPUTS_MAX ||
	    (b = ibuf_dynamic(64, FSWALK_JOB_MAX)) == NULL)
		return (NULL);
	if (ibuf_add_n32(b, kind) == -1 || ibuf_add_n64(b, j->max) == -1 ||
	    m_add_str(b, j->upper) == -1 || m_add_str(b, j->tmp) == -1 ||
	    ibuf_add_n32(b, n) == -1)
		goto fail;
	for (n = 0; j->outputs != NULL && j->outputs[n] != NULL; n++)
		if (m_add_str(b, j->outputs[n]) == -1)
			goto fail;
	return (b);
 fail:
	ibuf_free(b);
	return (NULL);
}

int
fswalk_job_kind(struct mread *m, const void *data, size_t len,
    uint32_t *kind, char *err, size_t errlen)
{
	m_open(m, "fswalk job", data, len, err, errlen);
	if (m_get_n32(m, "kind", kind) == -1)
		return (-1);
	if (*kind == 0 || *kind >= FSWALK_KIND_MAX)
		return (m_fail(m, "unknown kind %u", *kind));
	return (0);
}

int
fswalk_image_job_parse(struct mread *m, struct fswalk_image_job *j)
{
	uint32_t	 owner;

	memset(j, 0, sizeof(*j));
	m_get_n32(m, "owner", &owner);
	m_get_bool(m, "chown", &j->chown);
	m_get_bool(m, "bounded", &j->bounded);
	m_get_n64(m, "max_entries", &j->lim.max_entries);
	m_get_n64(m, "max_bytes", &j->lim.max_bytes);
	m_get_n32(m, "max_depth", &j->lim.max_depth);
	m_get_n32(m, "max_path", &j->lim.max_path);
	m_get_bool(m, "out", &j->out);
	m_get_bool(m, "canon", &j->canon);
	if (m_end(m) == -1)
		return (-1);
	if (owner == (uint32_t)-1)
		return (m_fail(m, "field owner: not a uid"));
	if (j->out && j->canon)
		return (m_fail(m, "an entry list both written and read"));
	j->owner = owner;
	return (0);
}

int
fswalk_pristine_job_parse(struct mread *m, struct fswalk_pristine_job *j)
{
	uint32_t	 from;

	memset(j, 0, sizeof(*j));
	m_get_n32(m, "from", &from);
	m_get_n64(m, "max", &j->max);
	m_get_str(m, "path", j->path, sizeof(j->path));
	if (m_end(m) == -1)
		return (-1);
	if (from == 0 || from == (uint32_t)-1)
		return (m_fail(m, "field from: not a worker's uid"));
	if (j->path[0] != '/')
		return (m_fail(m, "field path: not absolute"));
	j->from = from;
	return (0);
}

void
fswalk_setup_job_free(struct fswalk_setup_job *j)
{
	size_t	 i;

	for (i = 0; j->outputs != NULL && j->outputs[i] != NULL; i++)
		free(j->outputs[i]);
	free(j->outputs);
	j->outputs = NULL;
}

int
fswalk_setup_job_parse(struct mread *m, struct fswalk_setup_job *j)
{
	uint32_t	 n, i;

	memset(j, 0, sizeof(*j));
	m_get_n64(m, "max", &j->max);
	m_get_str(m, "upper", j->upper, sizeof(j->upper));
	m_get_str(m, "tmp", j->tmp, sizeof(j->tmp));
	if (m_get_n32(m, "count", &n) == -1)
		return (-1);
	if (n > FSWALK_OUTPUTS_MAX)
		return (m_fail(m, "field count: %u outputs", n));
	if ((j->outputs = calloc(n + 1, sizeof(*j->outputs))) == NULL)
		return (m_fail(m, "no memory"));
	for (i = 0; i < n; i++)
		if (m_get_strdup(m, "output", FSWALK_OUTPUT_MAX,
		    &j->outputs[i]) == -1)
			break;
	if (m_end(m) == -1 || j->tmp[0] != '/' ||
	    (j->upper[0] != '\0' && j->upper[0] != '/')) {
		fswalk_setup_job_free(j);
		return (m_fail(m, "field tmp or upper: not absolute"));
	}
	return (0);
}

void
fswalk_answer_why(struct fswalk_answer *a, const char *why)
{
	if (esc_encode(why, strlen(why), a->err, sizeof(a->err)) == -1)
		strlcpy(a->err, "(a reason too long to show)", sizeof(a->err));
}

static int
fswalk_inputs_compose(struct ibuf *b, const struct fswalk_answer *a)
{
	uint32_t	 i;

	if (a->u.inputs.n > FSWALK_OUTPUTS_MAX ||
	    ibuf_add_n32(b, a->u.inputs.n) == -1)
		return (-1);
	for (i = 0; i < a->u.inputs.n; i++)
		if (ibuf_add_n8(b, a->u.inputs.in[i].file != 0) == -1 ||
		    m_add_str(b, a->u.inputs.in[i].file ?
		    a->u.inputs.in[i].hex : "") == -1)
			return (-1);
	return (0);
}

struct ibuf *
fswalk_answer_compose(const struct fswalk_answer *a)
{
	struct ibuf	*b;
	int		 rc;

	if ((b = ibuf_dynamic(128, FSWALK_ANSWER_MAX)) == NULL)
		return (NULL);
	rc = ibuf_add_n32(b, a->kind) == -1 ||
	    ibuf_add_n32(b, a->failed != 0) == -1 ||
	    m_add_str(b, a->err) == -1;
	if (rc == 0 && a->kind == FSWALK_IMAGE)
		rc = m_add_str(b, a->u.image.hex) == -1 ||
		    ibuf_add_n64(b, a->u.image.entries) == -1 ||
		    ibuf_add_n64(b, a->u.image.files) == -1 ||
		    ibuf_add_n64(b, a->u.image.bytes) == -1;
	if (rc == 0 && a->kind == FSWALK_PRISTINE)
		rc = ibuf_add_n64(b, a->u.bytes) == -1;
	if (rc == 0 && (a->kind == FSWALK_SETUP_STORE ||
	    a->kind == FSWALK_SETUP_SEAL))
		rc = m_add_str(b, a->u.setup.hex) == -1 ||
		    ibuf_add_n64(b, a->u.setup.files) == -1 ||
		    ibuf_add_n64(b, a->u.setup.bytes) == -1;
	if (rc == 0 && a->kind == FSWALK_SETUP_INPUTS)
		rc = fswalk_inputs_compose(b, a);
	if (rc != 0) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

static int
fswalk_inputs_parse(struct mread *m, struct fswalk_answer *a)
{
	uint32_t	 i;

	if (m_get_n32(m, "count", &a->u.inputs.n) == -1)
		return (-1);
	if (a->u.inputs.n > FSWALK_OUTPUTS_MAX ||
	    (a->failed && a->u.inputs.n != 0))
		return (m_fail(m, "field count: %u inputs", a->u.inputs.n));
	for (i = 0; i < a->u.inputs.n; i++) {
		m_get_bool(m, "file", &a->u.inputs.in[i].file);
		if (m_get_str(m, "hex", a->u.inputs.in[i].hex,
		    sizeof(a->u.inputs.in[i].hex)) == -1)
			return (-1);
		if (a->u.inputs.in[i].file ? !hex_valid(a->u.inputs.in[i].hex,
		    sizeof(a->u.inputs.in[i].hex) - 1) :
		    a->u.inputs.in[i].hex[0] != '\0')
			return (m_fail(m, "input %u: not a digest", i));
	}
	return (m_end(m));
}

static int
fswalk_image_answer_parse(struct mread *m, struct fswalk_answer *a)
{
	struct imgwalk_result	*r = &a->u.image;

	m_get_str(m, "hex", r->hex, sizeof(r->hex));
	m_get_n64(m, "entries", &r->entries);
	m_get_n64(m, "files", &r->files);
	m_get_n64(m, "bytes", &r->bytes);
	if (m_end(m) == -1)
		return (-1);
	if (!a->failed && (!hex_valid(r->hex, sizeof(r->hex) - 1) ||
	    r->files > r->entries))
		return (m_fail(m, "not a walk's result"));
	return (0);
}

int
fswalk_answer_parse(const void *data, size_t len, uint32_t kind,
    struct fswalk_answer *a, char *err, size_t errlen)
{
	struct mread	 m;
	uint32_t	 failed;

	memset(a, 0, sizeof(*a));
	m_open(&m, "fswalk answer", data, len, err, errlen);
	m_get_n32(&m, "kind", &a->kind);
	m_get_n32(&m, "rc", &failed);
	m_get_str(&m, "err", a->err, sizeof(a->err));
	if (m.bad)
		return (-1);
	if (a->kind != kind)
		return (m_fail(&m, "kind %u, not %u", a->kind, kind));
	if (failed > 1)
		return (m_fail(&m, "field rc: %u", failed));
	a->failed = failed;
	if (!esc_valid(a->err) || (a->failed && a->err[0] == '\0') ||
	    (!a->failed && a->err[0] != '\0'))
		return (m_fail(&m, "field err: not an escaped reason"));
	switch (kind) {
	case FSWALK_IMAGE:
		return (fswalk_image_answer_parse(&m, a));
	case FSWALK_PRISTINE:
		m_get_n64(&m, "bytes", &a->u.bytes);
		return (m_end(&m));
	case FSWALK_SETUP_STORE:
	case FSWALK_SETUP_SEAL:
		m_get_str(&m, "hex", a->u.setup.hex, sizeof(a->u.setup.hex));
		m_get_n64(&m, "files", &a->u.setup.files);
		m_get_n64(&m, "bytes", &a->u.setup.bytes);
		if (m_end(&m) == -1)
			return (-1);
		if (!a->failed && !hex_valid(a->u.setup.hex,
		    sizeof(a->u.setup.hex) - 1))
			return (m_fail(&m, "field hex: not a digest"));
		return (0);
	case FSWALK_SETUP_INPUTS:
		return (fswalk_inputs_parse(&m, a));
	case FSWALK_SETUP_REMOVE:
		return (m_end(&m));
	}
	return (m_fail(&m, "unknown kind %u", kind));
}
