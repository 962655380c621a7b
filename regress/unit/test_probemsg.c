/*
 * Unit tests of libcommon/probemsg.c: the launcher's kernel probe
 * answer round-trips, and every malformed one (truncated anywhere,
 * trailing bytes, a flag that is not 0 or 1, an ABI, a downgrade or
 * an overlay answer out of range, a text with control bytes, empty or
 * too long, a cgroup path that is relative, not canonical or has odd
 * bytes, a layout against its own rules) is refused with a reason
 * naming the field.
 */
#include <sys/types.h>

#include <arpa/inet.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "probemsg.h"

static void
fill(struct probe_answer *pa)
{
	memset(pa, 0, sizeof(*pa));
	pa->ok = 1;
	pa->abi = 4;
	pa->downgraded = CONF_DG_LANDLOCK_SCOPES;
	pa->memfd_noexec = 1;
	pa->pidinfo = 0;
	strlcpy(pa->feats, "mount_setattr, clone3, landlock-scopes "
	    "(downgraded)", sizeof(pa->feats));
	strlcpy(pa->repl, "landlock-ioctl-dev", sizeof(pa->repl));
	pa->overlay = PROBE_OVL_ATTACHED;
}

/* The bytes of pa, malloc'd. */
static unsigned char *
enc(const struct probe_answer *pa, size_t *lenp)
{
	unsigned char	*b;

	b = probe_answer_encode(pa, lenp);
	ck_assert_ptr_nonnull(b);
	return (b);
}

/* A hybrid host's layout, as this machine's. */
static void
fillcg(struct probe_answer *pa)
{
	struct probe_cgroup	*pc = &pa->cg;

	fill(pa);
	pc->mode = PROBE_CG_HYBRID;
	strlcpy(pc->memory, "/sys/fs/cgroup/memory", sizeof(pc->memory));
	strlcpy(pc->pids, "/sys/fs/cgroup/pids", sizeof(pc->pids));
	strlcpy(pc->cpuacct, "/sys/fs/cgroup/cpu,cpuacct",
	    sizeof(pc->cpuacct));
	strlcpy(pc->unified, "/sys/fs/cgroup/unified", sizeof(pc->unified));
	strlcpy(pc->line, "cgroup hybrid: memory /sys/fs/cgroup/memory, ...",
	    sizeof(pc->line));
}

static void
refused(const void *b, size_t len, const char *field)
{
	struct probe_answer	 pa;
	char			 err[256];

	ck_assert_int_eq(probe_answer_decode(b, len, &pa, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "probe answer: ") == err, "%s", err);
	if (field != NULL)
		ck_assert_msg(strstr(err, field) != NULL, "%s lacks %s", err,
		    field);
}

START_TEST(test_round_trip)
{
	struct probe_answer	 in, out;
	unsigned char		*b;
	char			 err[256];
	size_t			 len;

	fill(&in);
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_int_eq(out.ok, 1);
	ck_assert_uint_eq(out.abi, 4);
	ck_assert_uint_eq(out.downgraded, CONF_DG_LANDLOCK_SCOPES);
	ck_assert_int_eq(out.memfd_noexec, 1);
	ck_assert_int_eq(out.pidinfo, 0);
	ck_assert_str_eq(out.feats, in.feats);
	ck_assert_str_eq(out.repl, in.repl);
	ck_assert_int_eq(out.overlay, PROBE_OVL_ATTACHED);
	ck_assert_str_eq(out.diskerr, "");
	free(b);
	/* The disk probe's failure carries its line. */
	fill(&in);
	in.overlay = PROBE_OVL_FAIL;
	strlcpy(in.diskerr, "overlay: No such device (no overlay file "
	    "system)", sizeof(in.diskerr));
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_int_eq(out.overlay, PROBE_OVL_FAIL);
	ck_assert_str_eq(out.diskerr, in.diskerr);
	free(b);
	/* A refusal carries its line only. */
	memset(&in, 0, sizeof(in));
	strlcpy(in.err, "clone3: ENOSYS (Linux 5.3 has it; no downgrade)",
	    sizeof(in.err));
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_int_eq(out.ok, 0);
	ck_assert_str_eq(out.err, in.err);
	free(b);
}
END_TEST

START_TEST(test_truncated_trailing)
{
	struct probe_answer	 in;
	unsigned char		*b, *c;
	size_t			 len, i;

	fill(&in);
	b = enc(&in, &len);
	for (i = 0; i < len; i++)
		refused(b, i, "truncated");
	ck_assert_ptr_nonnull(c = malloc(len + 1));
	memcpy(c, b, len);
	c[len] = 0;
	refused(c, len + 1, "1 bytes left over");
	free(c);
	free(b);
}
END_TEST

START_TEST(test_fields)
{
	struct probe_answer	 in;
	unsigned char		*b;
	size_t			 len;
	uint32_t		 v;

	fill(&in);
	b = enc(&in, &len);
	b[0] = 2;
	refused(b, len, "field ok");
	b[0] = 1;
	v = htonl(PROBE_ABI_MAX + 1);
	memcpy(b + 1, &v, 4);
	refused(b, len, "field abi");
	v = htonl(4);
	memcpy(b + 1, &v, 4);
	v = htonl(CONF_DG_CGROUP_KILL);
	memcpy(b + 5, &v, 4);
	refused(b, len, "field downgraded");
	v = htonl(CONF_DG_LANDLOCK_SCOPES);
	memcpy(b + 5, &v, 4);
	b[9] = 7;
	refused(b, len, "field memfd_noexec");
	b[9] = 1;
	b[10] = 2;
	refused(b, len, "field pidinfo");
	b[10] = 0;
	b[15] = '\n';		/* in the features' text */
	refused(b, len, "field feats");
	b[15] = 'm';
	b[16] = '\0';
	refused(b, len, "NUL");
	free(b);
	/* Empty features; a text over its buffer. */
	fill(&in);
	in.feats[0] = '\0';
	b = enc(&in, &len);
	refused(b, len, "field feats: empty");
	free(b);
	/* An overlay answer no PROBE_OVL_* names; a failure without why. */
	fill(&in);
	b = enc(&in, &len);
	b[len - 2] = PROBE_OVL_MAX + 1;	/* the last: the cgroups' mode */
	refused(b, len, "field overlay: 4, unknown");
	free(b);
	in.overlay = PROBE_OVL_FAIL;
	b = enc(&in, &len);
	refused(b, len, "field diskerr: empty");
	free(b);
	strlcpy(in.diskerr, "overlay: \x1b[2J", sizeof(in.diskerr));
	b = enc(&in, &len);
	refused(b, len, "field diskerr: byte 0x1b");
	free(b);
	/* A refusal longer than its buffer. */
	ck_assert_ptr_nonnull(b = calloc(1, 5 + PROBE_ERRLEN));
	v = htonl(PROBE_ERRLEN);
	memcpy(b + 1, &v, 4);
	memset(b + 5, 'x', PROBE_ERRLEN);
	refused(b, 5 + PROBE_ERRLEN, "field error: longer than");
	free(b);
}
END_TEST

/* Encoded as given, refused naming want. */
static void
cgrefused(const struct probe_answer *in, const char *want)
{
	unsigned char	*b;
	size_t		 len;

	b = enc(in, &len);
	refused(b, len, want);
	free(b);
}

START_TEST(test_cgroup)
{
	struct probe_answer	 in, out;
	unsigned char		*b;
	char			 err[256];
	size_t			 len, i;

	fillcg(&in);
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_int_eq(memcmp(&out.cg, &in.cg, sizeof(in.cg)), 0);
	for (i = 0; i < len; i++)
		refused(b, i, "truncated");
	free(b);
	/* Pure v2, delegated. */
	fillcg(&in);
	in.cg.mode = PROBE_CG_V2;
	strlcpy(in.cg.unified, "/sys/fs/cgroup", sizeof(in.cg.unified));
	strlcpy(in.cg.memory, in.cg.unified, sizeof(in.cg.memory));
	strlcpy(in.cg.pids, in.cg.unified, sizeof(in.cg.pids));
	strlcpy(in.cg.cpu, in.cg.unified, sizeof(in.cg.cpu));
	strlcpy(in.cg.cpuacct, in.cg.unified, sizeof(in.cg.cpuacct));
	strlcpy(in.cg.base, "system.slice/factoryd.service",
	    sizeof(in.cg.base));
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_str_eq(out.cg.base, in.cg.base);
	free(b);
	/* Its refusal is a line. */
	fill(&in);
	in.cg.mode = PROBE_CG_FAIL;
	strlcpy(in.cg.err, "cgroup: no memory controller", sizeof(in.cg.err));
	b = enc(&in, &len);
	ck_assert_int_eq(probe_answer_decode(b, len, &out, err, sizeof(err)),
	    0);
	ck_assert_str_eq(out.cg.err, in.cg.err);
	free(b);
	in.cg.err[0] = '\0';
	cgrefused(&in, "field cgerr: empty");
	/* Paths: relative, "..", ".", "//", a trailing '/', odd bytes. */
	fillcg(&in);
	strlcpy(in.cg.unified, "sys/fs/cgroup/unified", sizeof(in.cg.unified));
	cgrefused(&in, "field cgunified: sys/fs/cgroup/unified, not absolute");
	fillcg(&in);
	strlcpy(in.cg.memory, "/sys/fs/cgroup/../memory",
	    sizeof(in.cg.memory));
	cgrefused(&in, "field cgmemory: /sys/fs/cgroup/../memory, not "
	    "canonical");
	fillcg(&in);
	strlcpy(in.cg.pids, "/sys/fs/./pids", sizeof(in.cg.pids));
	cgrefused(&in, "field cgpids: /sys/fs/./pids, not canonical");
	fillcg(&in);
	strlcpy(in.cg.pids, "/sys//pids", sizeof(in.cg.pids));
	cgrefused(&in, "not canonical");
	fillcg(&in);
	strlcpy(in.cg.pids, "/sys/pids/", sizeof(in.cg.pids));
	cgrefused(&in, "not canonical");
	fillcg(&in);
	strlcpy(in.cg.pids, "/", sizeof(in.cg.pids));
	cgrefused(&in, "field cgpids: /, not canonical");
	fillcg(&in);
	strlcpy(in.cg.cpuacct, "/sys/fs/cg\\040x", sizeof(in.cg.cpuacct));
	cgrefused(&in, "field cgcpuacct: byte 0x5c");
	fillcg(&in);
	strlcpy(in.cg.cpuacct, "/sys/fs/cg x", sizeof(in.cg.cpuacct));
	cgrefused(&in, "field cgcpuacct: byte 0x20");
	fillcg(&in);
	in.cg.memory[0] = '\0';
	cgrefused(&in, "field cgmemory: empty");
	/* The base: relative, canonical, only below a v2 tree. */
	fillcg(&in);
	strlcpy(in.cg.base, "/a", sizeof(in.cg.base));
	cgrefused(&in, "field cgbase: /a, not relative");
	fillcg(&in);
	strlcpy(in.cg.base, "a/..", sizeof(in.cg.base));
	cgrefused(&in, "field cgbase: a/.., not canonical");
	fillcg(&in);
	strlcpy(in.cg.base, "a", sizeof(in.cg.base));
	cgrefused(&in, "field cgmode: hybrid");
	/* The layout's own rules; an unknown mode; the line. */
	fillcg(&in);
	in.cg.mode = PROBE_CG_V2;
	cgrefused(&in, "field cgmode: v2");
	fillcg(&in);
	in.cg.unified[0] = '\0';
	cgrefused(&in, "field cgnokill");
	fillcg(&in);
	in.cg.mode = PROBE_CG_MAX + 1;
	cgrefused(&in, "field cgmode: 4, unknown");
	fillcg(&in);
	in.cg.line[0] = '\0';
	cgrefused(&in, "field cgline: empty");
	fillcg(&in);
	strlcpy(in.cg.line, "cgroup\nparent: forged", sizeof(in.cg.line));
	cgrefused(&in, "field cgline: byte 0xa");
}
END_TEST

START_TEST(test_refusal)
{
	struct probe_answer	 in;
	unsigned char		*b;
	size_t			 len;
	char			 err[256];

	memset(&in, 0, sizeof(in));
	b = enc(&in, &len);
	refused(b, len, "field error: empty");
	free(b);
	probe_refuse(err, sizeof(err), "landlock-net", "no TCP rules");
	ck_assert_str_eq(err, "landlock-net: no TCP rules; factoryd.conf "
	    "sandbox.downgrade [landlock-net] runs without it");
}
END_TEST

static Suite *
probemsg_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("probemsg");
	tc = tcase_create("core");
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_truncated_trailing);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_cgroup);
	tcase_add_test(tc, test_refusal);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(probemsg_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
