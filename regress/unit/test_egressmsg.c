/*
 * Unit tests of libcommon/egressmsg.c: the parent's messages to
 * factory-egress round-trip, and every malformed one (a truncated
 * field, trailing bytes, a field out of range, a host not of its kind,
 * a missing NUL) is refused with a reason naming the field.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egressmsg.h"

/* One message of len payload bytes, read back through a socketpair. */
static void
mk(uint32_t type, const void *p, size_t len, struct imsg *imsg)
{
	struct imsgbuf	 ib[2];
	int		 fd[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	ck_assert_int_eq(imsgbuf_init(&ib[0], fd[0]), 0);
	ck_assert_int_eq(imsgbuf_init(&ib[1], fd[1]), 0);
	ck_assert_int_eq(imsg_compose(&ib[0], type, 0, 0, -1, p, len), 1);
	ck_assert_int_eq(imsgbuf_flush(&ib[0]), 0);
	ck_assert_int_eq(imsgbuf_read(&ib[1]), 1);
	ck_assert_int_eq(imsgbuf_get(&ib[1], imsg), 1);
	imsgbuf_clear(&ib[0]);
	imsgbuf_clear(&ib[1]);
	close(fd[0]);
	close(fd[1]);
}

static void
fill(struct egress_listen *l, uint8_t kind, const char *host)
{
	memset(l, 0, sizeof(*l));
	strlcpy(l->id, "a-20261201-0007", sizeof(l->id));
	l->ep = 3;
	l->port = 8443;
	l->kind = kind;
	strlcpy(l->host, host, sizeof(l->host));
}

/* Decode bytes as IMSG_EGRESS_LISTEN; returns the decoder's result. */
static int
decode(const void *p, size_t len, struct egress_listen *out, char *err,
    size_t errlen)
{
	struct imsg	 imsg;
	int		 r;

	mk(IMSG_EGRESS_LISTEN, p, len, &imsg);
	r = egress_listen_decode(&imsg, out, err, errlen);
	imsg_free(&imsg);
	return (r);
}

/* The wire form of l, into buf; its length. */
static size_t
wire(const struct egress_listen *l, unsigned char *buf, size_t max)
{
	struct ibuf	*b;
	size_t		 n;

	ck_assert_ptr_nonnull(b = egress_listen_compose(l));
	n = ibuf_size(b);
	ck_assert_uint_le(n, max);
	memcpy(buf, ibuf_data(b), n);
	ibuf_free(b);
	return (n);
}

START_TEST(test_round_trip)
{
	static const struct { uint8_t kind; const char *host; } c[] = {
		{ EGRESS_ADDR4, "127.0.0.1" },
		{ EGRESS_ADDR6, "::1" },
		{ EGRESS_NAME, "api.example.org" },
		{ EGRESS_NAME, "localhost" },
	};
	struct egress_listen	 l, out;
	unsigned char		 buf[512];
	char			 err[128];
	size_t			 i, n;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		fill(&l, c[i].kind, c[i].host);
		n = wire(&l, buf, sizeof(buf));
		ck_assert_int_eq(decode(buf, n, &out, err, sizeof(err)), 0);
		ck_assert_str_eq(out.id, l.id);
		ck_assert_uint_eq(out.ep, 3);
		ck_assert_uint_eq(out.port, 8443);
		ck_assert_uint_eq(out.kind, c[i].kind);
		ck_assert_str_eq(out.host, c[i].host);
	}
}
END_TEST

START_TEST(test_compose_refuses)
{
	struct egress_listen	 l;

	fill(&l, EGRESS_NAME, "ok.example");
	strlcpy(l.id, "../etc", sizeof(l.id));
	ck_assert_ptr_null(egress_listen_compose(&l));
	fill(&l, EGRESS_NAME, "ok.example");
	l.ep = EGRESS_MAXEP;
	ck_assert_ptr_null(egress_listen_compose(&l));
	fill(&l, EGRESS_NAME, "ok.example");
	l.port = 0;
	ck_assert_ptr_null(egress_listen_compose(&l));
	fill(&l, EGRESS_ADDR4, "example.org");
	ck_assert_ptr_null(egress_listen_compose(&l));
	fill(&l, EGRESS_ADDR6, "127.0.0.1");
	ck_assert_ptr_null(egress_listen_compose(&l));
	fill(&l, 9, "127.0.0.1");
	ck_assert_ptr_null(egress_listen_compose(&l));
	ck_assert_ptr_null(egress_close_compose("a b"));
}
END_TEST

/* Every proper prefix of a good message is refused. */
START_TEST(test_truncated)
{
	struct egress_listen	 l, out;
	unsigned char		 buf[512];
	char			 err[128];
	size_t			 n, k;

	fill(&l, EGRESS_NAME, "api.example.org");
	n = wire(&l, buf, sizeof(buf));
	for (k = 0; k < n; k++)
		ck_assert_int_eq(decode(buf, k, &out, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_trailing)
{
	struct egress_listen	 l, out;
	unsigned char		 buf[512];
	char			 err[128];
	size_t			 n;

	fill(&l, EGRESS_ADDR4, "10.1.2.3");
	n = wire(&l, buf, sizeof(buf));
	buf[n] = 'x';
	ck_assert_int_eq(decode(buf, n + 1, &out, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "trailing"));
	buf[n] = '\0';
	ck_assert_int_eq(decode(buf, n + 1, &out, err, sizeof(err)), -1);
}
END_TEST

/* Raw fields: id NUL n32 ep n16 port n8 kind host NUL. */
static size_t
raw(unsigned char *b, const char *id, uint32_t ep, uint16_t port,
    uint8_t kind, const char *host, size_t hostlen)
{
	size_t	 n = strlen(id) + 1;

	memcpy(b, id, n);
	b[n++] = ep >> 24;
	b[n++] = ep >> 16;
	b[n++] = ep >> 8;
	b[n++] = ep;
	b[n++] = port >> 8;
	b[n++] = port;
	b[n++] = kind;
	memcpy(b + n, host, hostlen);
	return (n + hostlen);
}

START_TEST(test_fields)
{
	static const char *badnames[] = {
		"a b", "../x", "-x", "a..b", ".a", "x_y", "x\377", "x\n",
		"",
	};
	struct egress_listen	 out;
	unsigned char		 b[1024];
	char			 err[128], long_host[300];
	size_t			 n, i;
	const char		*id = "a-20261201-0007";

	n = raw(b, id, 0, 80, EGRESS_NAME, "ok", 3);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), 0);
	n = raw(b, id, EGRESS_MAXEP, 80, EGRESS_NAME, "ok", 3);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "endpoint"));
	n = raw(b, id, 0, 0, EGRESS_NAME, "ok", 3);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "port"));
	n = raw(b, id, 0, 80, 0, "ok", 3);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "kind"));
	n = raw(b, id, 0, 80, EGRESS_ADDR4, "ok", 3);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "host"));
	n = raw(b, id, 0, 80, EGRESS_ADDR6, "10.0.0.1", 9);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	/* The host without its NUL. */
	n = raw(b, id, 0, 80, EGRESS_NAME, "ok", 2);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	for (i = 0; i < sizeof(badnames) / sizeof(badnames[0]); i++) {
		n = raw(b, id, 0, 80, EGRESS_NAME, badnames[i],
		    strlen(badnames[i]) + 1);
		ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	}
	memset(long_host, 'a', sizeof(long_host) - 1);
	long_host[sizeof(long_host) - 1] = '\0';
	n = raw(b, id, 0, 80, EGRESS_NAME, long_host, sizeof(long_host));
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	n = raw(b, "b-1", 0, 80, EGRESS_NAME, "ok", 3);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "attempt id"));
	n = raw(b, "a-0123456789012345678901234567890123", 0, 80, EGRESS_NAME,
	    "ok", 3);
	ck_assert_int_eq(decode(b, n, &out, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_close)
{
	struct imsg	 imsg;
	struct ibuf	*b;
	char		 id[ATTEMPT_ID_MAX], err[128];

	ck_assert_ptr_nonnull(b = egress_close_compose("a-20261201-0007"));
	mk(IMSG_EGRESS_CLOSE, ibuf_data(b), ibuf_size(b), &imsg);
	ibuf_free(b);
	ck_assert_int_eq(egress_close_decode(&imsg, id, sizeof(id), err,
	    sizeof(err)), 0);
	ck_assert_str_eq(id, "a-20261201-0007");
	imsg_free(&imsg);
	mk(IMSG_EGRESS_CLOSE, "a-1\0x", 5, &imsg);
	ck_assert_int_eq(egress_close_decode(&imsg, id, sizeof(id), err,
	    sizeof(err)), -1);
	imsg_free(&imsg);
	mk(IMSG_EGRESS_CLOSE, "a-1", 3, &imsg);
	ck_assert_int_eq(egress_close_decode(&imsg, id, sizeof(id), err,
	    sizeof(err)), -1);
	imsg_free(&imsg);
	mk(IMSG_EGRESS_CLOSE, "A-1", 4, &imsg);
	ck_assert_int_eq(egress_close_decode(&imsg, id, sizeof(id), err,
	    sizeof(err)), -1);
	imsg_free(&imsg);
}
END_TEST

static Suite *
egressmsg_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("egressmsg");
	tc = tcase_create("core");
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_compose_refuses);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_trailing);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_close);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(egressmsg_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
