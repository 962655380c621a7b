/*
 * factory-fswalk's answers and jobs (libcommon/fswalkmsg.c): root
 * decodes the answer of a helper that read a tree an agent, a setup or
 * a worker wrote, and the helper its job.  The input's first byte
 * picks the side and the kind; the rest is the message.  Promises:
 * an answer that decodes has the kind asked for, rc 0 or 1, an escaped
 * NUL-terminated reason (empty exactly when rc is 0) and, for a setup
 * kind that did not fail, digests of 64 lower-case hex digits; the
 * inputs' answer holds at most FSWALK_OUTPUTS_MAX of them, each a
 * digest or, when missing, empty; a job that decodes has absolute
 * paths and at most FSWALK_OUTPUTS_MAX outputs of bounded length;
 * what does not decode says why.  Nothing leaks either way.
 */
#include <limits.h>

#include "crypto.h"
#include "esc.h"
#include "fswalkmsg.h"
#include "fuzz.h"

static void
answer(const uint8_t *data, size_t size, uint32_t kind)
{
	struct fswalk_answer	 a;
	char			 err[256];
	uint32_t		 i;

	if (fswalk_answer_parse(data, size, kind, &a, err,
	    sizeof(err)) == -1) {
		FUZZ_ASSERT(strncmp(err, "fswalk answer", 13) == 0,
		    "refused without a reason naming the message: %s", err);
		return;
	}
	FUZZ_ASSERT(a.kind == kind, "kind %u, not %u", a.kind, kind);
	FUZZ_ASSERT(a.failed == 0 || a.failed == 1, "rc %d", a.failed);
	FUZZ_ASSERT(strnlen(a.err, sizeof(a.err)) < sizeof(a.err) &&
	    esc_valid(a.err), "err: not an escaped string");
	FUZZ_ASSERT((a.err[0] == '\0') == !a.failed, "err and rc disagree");
	switch (kind) {
	case FSWALK_SETUP_STORE:
	case FSWALK_SETUP_SEAL:
		FUZZ_ASSERT(a.failed || hex_valid(a.u.setup.hex, 64),
		    "setup: not a digest");
		break;
	case FSWALK_SETUP_INPUTS:
		FUZZ_ASSERT(a.u.inputs.n <= FSWALK_OUTPUTS_MAX,
		    "%u inputs", a.u.inputs.n);
		FUZZ_ASSERT(!a.failed || a.u.inputs.n == 0,
		    "inputs of a failed answer");
		for (i = 0; i < a.u.inputs.n; i++)
			FUZZ_ASSERT(a.u.inputs.in[i].file ?
			    hex_valid(a.u.inputs.in[i].hex, 64) :
			    a.u.inputs.in[i].hex[0] == '\0',
			    "input %u: not a digest", i);
		break;
	}
}

static void
job(const uint8_t *data, size_t size)
{
	struct fswalk_image_job		 ij;
	struct fswalk_pristine_job	 pj;
	struct fswalk_setup_job		 sj;
	struct mread			 m;
	char				 err[256];
	uint32_t			 kind;
	size_t				 i;

	if (fswalk_job_kind(&m, data, size, &kind, err, sizeof(err)) == -1)
		return;
	FUZZ_ASSERT(kind > 0 && kind < FSWALK_KIND_MAX, "kind %u", kind);
	switch (kind) {
	case FSWALK_IMAGE:
		if (fswalk_image_job_parse(&m, &ij) == 0)
			FUZZ_ASSERT(!(ij.out && ij.canon), "out and canon");
		break;
	case FSWALK_PRISTINE:
		if (fswalk_pristine_job_parse(&m, &pj) == 0)
			FUZZ_ASSERT(pj.path[0] == '/' && pj.from != 0,
			    "pristine: path or uid");
		break;
	default:
		if (fswalk_setup_job_parse(&m, &sj) == -1)
			break;
		FUZZ_ASSERT(sj.tmp[0] == '/', "setup: tmp not absolute");
		for (i = 0; sj.outputs[i] != NULL; i++)
			FUZZ_ASSERT(strlen(sj.outputs[i]) <=
			    FSWALK_OUTPUT_MAX, "output %zu too long", i);
		FUZZ_ASSERT(i <= FSWALK_OUTPUTS_MAX, "%zu outputs", i);
		fswalk_setup_job_free(&sj);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t	 kind;

	if (size < 1)
		return (0);
	kind = data[0] % FSWALK_KIND_MAX;
	if (kind == 0)
		job(data + 1, size - 1);
	else
		answer(data + 1, size - 1, kind);
	return (0);
}
