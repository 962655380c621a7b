/*
 * Unit tests of libcommon/fswalkmsg.c: factory-fswalk's job and answer
 * round-trip, and an answer root would act on is refused when any
 * field is out of form: truncated, trailing bytes, another kind, an
 * rc not 0 or 1, an error not escaped, a digest not 64 lower-case hex
 * digits, more files than entries.
 */
#include <sys/types.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fswalkmsg.h"

#define HEX64	"0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"

static void
answer(struct fswalk_answer *a)
{
	memset(a, 0, sizeof(*a));
	a->kind = FSWALK_IMAGE;
	strlcpy(a->u.image.hex, HEX64, sizeof(a->u.image.hex));
	a->u.image.entries = 10;
	a->u.image.files = 7;
	a->u.image.bytes = 12345;
}

static int
parse(const struct fswalk_answer *in, size_t cut, int extra,
    struct fswalk_answer *out)
{
	struct ibuf	*b;
	char		 buf[FSWALK_ANSWER_MAX + 8], err[256];
	size_t		 len;
	int		 rc;

	ck_assert_ptr_nonnull(b = fswalk_answer_compose(in));
	len = ibuf_size(b) - cut;
	memcpy(buf, ibuf_data(b), len);
	if (extra)
		buf[len++] = 0;
	ibuf_free(b);
	rc = fswalk_answer_parse(buf, len, FSWALK_IMAGE, out, err,
	    sizeof(err));
	if (rc == -1)
		ck_assert(strncmp(err, "fswalk answer: ", 15) == 0);
	return (rc);
}

START_TEST(test_job_round_trip)
{
	struct fswalk_image_job	 j, k;
	struct mread		 m;
	struct ibuf		*b;
	uint32_t		 kind;
	char			 err[256];

	memset(&j, 0, sizeof(j));
	j.owner = 61006;
	j.chown = 1;
	j.bounded = 1;
	j.lim.max_entries = 100;
	j.lim.max_bytes = 1ULL << 40;
	j.lim.max_depth = 64;
	j.lim.max_path = 4095;
	j.out = 1;
	ck_assert_ptr_nonnull(b = fswalk_image_job_compose(&j));
	ck_assert_int_eq(fswalk_job_kind(&m, ibuf_data(b), ibuf_size(b),
	    &kind, err, sizeof(err)), 0);
	ck_assert_uint_eq(kind, FSWALK_IMAGE);
	ck_assert_int_eq(fswalk_image_job_parse(&m, &k), 0);
	ck_assert(memcmp(&j, &k, sizeof(j)) == 0);
	/* One byte short: refused. */
	ck_assert_int_eq(fswalk_job_kind(&m, ibuf_data(b), ibuf_size(b) - 1,
	    &kind, err, sizeof(err)), 0);
	ck_assert_int_eq(fswalk_image_job_parse(&m, &k), -1);
	ibuf_free(b);
	/* Both lists at once: refused. */
	j.canon = 1;
	ck_assert_ptr_nonnull(b = fswalk_image_job_compose(&j));
	ck_assert_int_eq(fswalk_job_kind(&m, ibuf_data(b), ibuf_size(b),
	    &kind, err, sizeof(err)), 0);
	ck_assert_int_eq(fswalk_image_job_parse(&m, &k), -1);
	ibuf_free(b);
}
END_TEST

START_TEST(test_job_kind)
{
	struct mread	 m;
	uint32_t	 kind;
	char		 err[256];
	uint8_t		 zero[4] = { 0, 0, 0, 0 }, big[4] = { 0, 0, 1, 0 };

	ck_assert_int_eq(fswalk_job_kind(&m, zero, 4, &kind, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(fswalk_job_kind(&m, big, 4, &kind, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(fswalk_job_kind(&m, big, 3, &kind, err,
	    sizeof(err)), -1);
}
END_TEST

START_TEST(test_answer_round_trip)
{
	struct fswalk_answer	 a, b;

	answer(&a);
	ck_assert_int_eq(parse(&a, 0, 0, &b), 0);
	ck_assert_int_eq(b.failed, 0);
	ck_assert_str_eq(b.u.image.hex, HEX64);
	ck_assert_uint_eq(b.u.image.files, 7);
	ck_assert_uint_eq(b.u.image.bytes, 12345);
	a.failed = 1;
	strlcpy(a.err, "etc/passwd: owned by uid 5", sizeof(a.err));
	a.u.image.hex[0] = '\0';
	ck_assert_int_eq(parse(&a, 0, 0, &b), 0);
	ck_assert_int_eq(b.failed, 1);
	ck_assert_str_eq(b.err, a.err);
}
END_TEST

START_TEST(test_answer_refused)
{
	struct fswalk_answer	 a, b;

	answer(&a);
	ck_assert_int_eq(parse(&a, 1, 0, &b), -1);	/* truncated */
	ck_assert_int_eq(parse(&a, 0, 1, &b), -1);	/* trailing */
	a.u.image.hex[5] = 'A';				/* upper case */
	ck_assert_int_eq(parse(&a, 0, 0, &b), -1);
	answer(&a);
	a.u.image.hex[63] = '\0';			/* 63 digits */
	ck_assert_int_eq(parse(&a, 0, 0, &b), -1);
	answer(&a);
	a.u.image.files = 11;				/* > entries */
	ck_assert_int_eq(parse(&a, 0, 0, &b), -1);
	answer(&a);
	a.failed = 1;					/* no reason */
	ck_assert_int_eq(parse(&a, 0, 0, &b), -1);
	strlcpy(a.err, "a\nb", sizeof(a.err));		/* not escaped */
	ck_assert_int_eq(parse(&a, 0, 0, &b), -1);
	answer(&a);
	strlcpy(a.err, "why", sizeof(a.err));		/* ok, with a why */
	ck_assert_int_eq(parse(&a, 0, 0, &b), -1);
	answer(&a);
	a.kind = FSWALK_KIND_MAX;			/* another kind */
	ck_assert_int_eq(parse(&a, 0, 0, &b), -1);
}
END_TEST

START_TEST(test_answer_rc)
{
	struct fswalk_answer	 a, b;
	struct ibuf		*ib;
	uint8_t			*p;
	char			 err[256];

	answer(&a);
	ck_assert_ptr_nonnull(ib = fswalk_answer_compose(&a));
	p = ibuf_data(ib);
	p[7] = 2;					/* rc 2 */
	ck_assert_int_eq(fswalk_answer_parse(p, ibuf_size(ib), FSWALK_IMAGE,
	    &b, err, sizeof(err)), -1);
	ibuf_free(ib);
}
END_TEST

START_TEST(test_setup_job)
{
	struct fswalk_setup_job	 j, k;
	struct fswalk_answer	 a, b;
	struct mread		 m;
	struct ibuf		*ib;
	char			*outs[] = { "node_modules", "build/out", NULL };
	char			 err[256];
	uint32_t		 kind;

	memset(&j, 0, sizeof(j));
	j.max = 1ULL << 30;
	strlcpy(j.upper, "/var/lib/factory/setup/run/a-1/upper",
	    sizeof(j.upper));
	strlcpy(j.tmp, "/var/lib/factory/setup/.tmp.k.a-1", sizeof(j.tmp));
	j.outputs = outs;
	ck_assert_ptr_nonnull(ib = fswalk_setup_job_compose(FSWALK_SETUP_STORE,
	    &j));
	ck_assert_int_eq(fswalk_job_kind(&m, ibuf_data(ib), ibuf_size(ib),
	    &kind, err, sizeof(err)), 0);
	ck_assert_uint_eq(kind, FSWALK_SETUP_STORE);
	ck_assert_int_eq(fswalk_setup_job_parse(&m, &k), 0);
	ck_assert_str_eq(k.outputs[1], "build/out");
	ck_assert_ptr_null(k.outputs[2]);
	ck_assert_str_eq(k.tmp, j.tmp);
	fswalk_setup_job_free(&k);
	ibuf_free(ib);
	/* A relative entry: refused. */
	strlcpy(j.tmp, "setup/.tmp", sizeof(j.tmp));
	ck_assert_ptr_nonnull(ib = fswalk_setup_job_compose(FSWALK_SETUP_SEAL,
	    &j));
	ck_assert_int_eq(fswalk_job_kind(&m, ibuf_data(ib), ibuf_size(ib),
	    &kind, err, sizeof(err)), 0);
	ck_assert_int_eq(fswalk_setup_job_parse(&m, &k), -1);
	ibuf_free(ib);
	/* An answer without a digest: refused. */
	memset(&a, 0, sizeof(a));
	a.kind = FSWALK_SETUP_SEAL;
	ck_assert_ptr_nonnull(ib = fswalk_answer_compose(&a));
	ck_assert_int_eq(fswalk_answer_parse(ibuf_data(ib), ibuf_size(ib),
	    FSWALK_SETUP_SEAL, &b, err, sizeof(err)), -1);
	ibuf_free(ib);
	strlcpy(a.u.setup.hex, HEX64, sizeof(a.u.setup.hex));
	ck_assert_ptr_nonnull(ib = fswalk_answer_compose(&a));
	ck_assert_int_eq(fswalk_answer_parse(ibuf_data(ib), ibuf_size(ib),
	    FSWALK_SETUP_SEAL, &b, err, sizeof(err)), 0);
	ck_assert_str_eq(b.u.setup.hex, HEX64);
	ibuf_free(ib);
}
END_TEST

/* The inputs' answer: one digest per input, in order, or missing. */
START_TEST(test_inputs_answer)
{
	struct fswalk_answer	 a, b;
	struct ibuf		*ib;
	char			 err[256];
	uint32_t		 i;

	memset(&a, 0, sizeof(a));
	a.kind = FSWALK_SETUP_INPUTS;
	a.u.inputs.n = FSWALK_OUTPUTS_MAX;
	for (i = 0; i < a.u.inputs.n; i++) {
		a.u.inputs.in[i].file = i % 2;
		if (i % 2)
			strlcpy(a.u.inputs.in[i].hex, HEX64,
			    sizeof(a.u.inputs.in[i].hex));
	}
	/* As many inputs as a manifest may name fit an answer. */
	ck_assert_ptr_nonnull(ib = fswalk_answer_compose(&a));
	ck_assert_uint_le(ibuf_size(ib), FSWALK_ANSWER_MAX);
	ck_assert_int_eq(fswalk_answer_parse(ibuf_data(ib), ibuf_size(ib),
	    FSWALK_SETUP_INPUTS, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.u.inputs.n, FSWALK_OUTPUTS_MAX);
	ck_assert_int_eq(b.u.inputs.in[0].file, 0);
	ck_assert_str_eq(b.u.inputs.in[1].hex, HEX64);
	ibuf_free(ib);
	/* A file without a digest, or a missing one with one: refused. */
	a.u.inputs.in[1].hex[0] = '\0';
	ck_assert_ptr_nonnull(ib = fswalk_answer_compose(&a));
	ck_assert_int_eq(fswalk_answer_parse(ibuf_data(ib), ibuf_size(ib),
	    FSWALK_SETUP_INPUTS, &b, err, sizeof(err)), -1);
	ibuf_free(ib);
	strlcpy(a.u.inputs.in[1].hex, HEX64, sizeof(a.u.inputs.in[1].hex));
	ck_assert_ptr_nonnull(ib = fswalk_answer_compose(&a));
	memset(ibuf_data(ib) + ibuf_size(ib) - 1, 'G', 1);
	ck_assert_int_eq(fswalk_answer_parse(ibuf_data(ib), ibuf_size(ib),
	    FSWALK_SETUP_INPUTS, &b, err, sizeof(err)), -1);
	ibuf_free(ib);
	/* More inputs than a manifest may name: refused. */
	a.u.inputs.n = FSWALK_OUTPUTS_MAX + 1;
	ck_assert_ptr_null(fswalk_answer_compose(&a));
}
END_TEST

static Suite *
fswalkmsg_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("fswalkmsg");
	tc = tcase_create("core");
	tcase_add_test(tc, test_job_round_trip);
	tcase_add_test(tc, test_job_kind);
	tcase_add_test(tc, test_answer_round_trip);
	tcase_add_test(tc, test_answer_refused);
	tcase_add_test(tc, test_answer_rc);
	tcase_add_test(tc, test_setup_job);
	tcase_add_test(tc, test_inputs_answer);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(fswalkmsg_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
