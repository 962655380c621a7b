/*
 * Unit tests of libcommon/gwmsg.c: the parent <-> factory-gateway
 * messages round-trip, and every malformed one (a wrong size, a string
 * without its NUL or with bytes after it, an enum or a count out of
 * range, a URL that is not https, a header where the kind decides, a
 * token of another shape, a reason not escaped) is refused with a
 * reason naming the field.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gwmsg.h"

#define TOKEN	"fgw-0123456789abcdef0123456789abcdef" \
		"0123456789abcdef0123456789abcdef"

/* One message of len payload bytes, read back through a socketpair. */
static void
mk(const void *p, size_t len, struct imsg *imsg)
{
	struct imsgbuf	 ib[2];
	int		 fd[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
	ck_assert_int_eq(imsgbuf_init(&ib[0], fd[0]), 0);
	ck_assert_int_eq(imsgbuf_init(&ib[1], fd[1]), 0);
	ck_assert_int_eq(imsgbuf_set_maxsize(&ib[1], FACTORY_MAXIMSG), 0);
	ck_assert_int_eq(imsg_compose(&ib[0], IMSG_GW_PROVIDER, 0, 0, -1, p,
	    len), 1);
	ck_assert_int_eq(imsgbuf_flush(&ib[0]), 0);
	while (imsgbuf_get(&ib[1], imsg) == 0)
		ck_assert_int_eq(imsgbuf_read(&ib[1]), 1);
	imsgbuf_clear(&ib[0]);
	imsgbuf_clear(&ib[1]);
	close(fd[0]);
	close(fd[1]);
}

static void
provider(struct gw_provider *p, uint8_t kind)
{
	memset(p, 0, sizeof(*p));
	strlcpy(p->name, kind == GW_UPSTREAM ? "npm" : "oa", sizeof(p->name));
	p->kind = kind;
	strlcpy(p->url, "https://api.example.com:8443/base", sizeof(p->url));
	strlcpy(p->keyfile, "/etc/factory/keys/oa.key", sizeof(p->keyfile));
	strlcpy(p->cafile, "/etc/ssl/ca.pem", sizeof(p->cafile));
	if (kind == GW_UPSTREAM) {
		strlcpy(p->header, "Authorization: Bearer", sizeof(p->header));
		p->methods = GW_M_GET | GW_M_HEAD;
	} else {
		p->nprices = 2;
		strlcpy(p->prices[0].model, "gpt-4o", sizeof(p->prices[0].model));
		p->prices[0].in_uusd_per_mtok = 2500000;
		strlcpy(p->prices[1].model, "*", sizeof(p->prices[1].model));
	}
}

static void
grant(struct gw_grant *g)
{
	memset(g, 0, sizeof(*g));
	strlcpy(g->id, "a-20261202-0001", sizeof(g->id));
	strlcpy(g->provider, "oa", sizeof(g->provider));
	g->nmodels = 1;
	strlcpy(g->models[0], "gpt-4o", sizeof(g->models[0]));
	g->budget_tokens = 1000000;
}

/* Decode a provider struct as sent; the decoder's result. */
static int
dec_provider(const struct gw_provider *p, char *err, size_t errlen)
{
	struct gw_provider	 out;
	struct imsg		 imsg;
	int			 rc;

	mk(p, sizeof(*p), &imsg);
	rc = gw_provider_decode(&imsg, &out, err, errlen);
	imsg_free(&imsg);
	return (rc);
}

static int
dec_grant(const void *g, size_t len, char *err, size_t errlen)
{
	struct gw_grant	 out;
	struct imsg	 imsg;
	int		 rc;

	mk(g, len, &imsg);
	rc = gw_grant_decode(&imsg, &out, err, errlen);
	imsg_free(&imsg);
	return (rc);
}

START_TEST(test_round_trip)
{
	struct gw_provider	 p, q;
	struct gw_grant		 g, h;
	struct ibuf		*b;
	struct imsg		 imsg;
	char			 err[160];

	provider(&p, GW_OPENAI);
	ck_assert_ptr_nonnull(b = gw_provider_compose(&p));
	mk(ibuf_data(b), ibuf_size(b), &imsg);
	ck_assert_int_eq(gw_provider_decode(&imsg, &q, err, sizeof(err)), 0);
	ck_assert_mem_eq(&p, &q, sizeof(p));
	imsg_free(&imsg);
	ibuf_free(b);

	provider(&p, GW_UPSTREAM);
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), 0);

	grant(&g);
	ck_assert_ptr_nonnull(b = gw_grant_compose(&g));
	mk(ibuf_data(b), ibuf_size(b), &imsg);
	ck_assert_int_eq(gw_grant_decode(&imsg, &h, err, sizeof(err)), 0);
	ck_assert_mem_eq(&g, &h, sizeof(g));
	imsg_free(&imsg);
	ibuf_free(b);
}
END_TEST

START_TEST(test_provider_fields)
{
	struct gw_provider	 p;
	char			 err[160];

	provider(&p, GW_OPENAI);
	strlcpy(p.url, "http://api.example.com", sizeof(p.url));
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad url");
	ck_assert_ptr_null(gw_provider_compose(&p));

	provider(&p, GW_OPENAI);
	strlcpy(p.url, "https://a b", sizeof(p.url));
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);

	provider(&p, GW_OPENAI);
	p.kind = GW_GEMINI + 1;
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad kind");
	provider(&p, GW_OPENAI);
	p.kind = GW_GEMINI;
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), 0);

	/* The provider's idle timeout: a day at most. */
	provider(&p, GW_OPENAI);
	p.idle_timeout_s = GW_IDLE_MAX;
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), 0);
	p.idle_timeout_s = GW_IDLE_MAX + 1;
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad idle_timeout_s");

	provider(&p, GW_OPENAI);
	strlcpy(p.header, "Authorization: Bearer", sizeof(p.header));
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad header");

	provider(&p, GW_UPSTREAM);
	p.header[0] = '\0';
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);

	provider(&p, GW_UPSTREAM);
	strlcpy(p.header, "Bad Name: x", sizeof(p.header));
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);

	provider(&p, GW_UPSTREAM);
	p.methods = 0x40;
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad methods");

	provider(&p, GW_OPENAI);
	p.nprices = GW_MAXPRICES + 1;
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad nprices");

	/* A price beyond the count: not silently ignored. */
	provider(&p, GW_OPENAI);
	p.nprices = 1;
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad prices");

	provider(&p, GW_OPENAI);
	strlcpy(p.keyfile, "relative.key", sizeof(p.keyfile));
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad keyfile");

	/* Bytes after the NUL, and no NUL at all. */
	provider(&p, GW_OPENAI);
	p.name[sizeof(p.name) - 1] = 'x';
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_PROVIDER: bad name");
	provider(&p, GW_OPENAI);
	memset(p.name, 'a', sizeof(p.name));
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
	provider(&p, GW_OPENAI);
	strlcpy(p.name, "Upper", sizeof(p.name));
	ck_assert_int_eq(dec_provider(&p, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_grant_fields)
{
	struct gw_grant	 g;
	char		 err[160], big[sizeof(g) + 1];

	grant(&g);
	ck_assert_int_eq(dec_grant(&g, sizeof(g) - 1, err, sizeof(err)), -1);
	memset(big, 0, sizeof(big));
	memcpy(big, &g, sizeof(g));
	ck_assert_int_eq(dec_grant(big, sizeof(big), err, sizeof(err)), -1);

	grant(&g);
	g.nmodels = GW_MAXMODELS + 1;
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_GRANT: bad nmodels");

	grant(&g);
	g.nmodels = 2;		/* the second is empty */
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_GRANT: bad models");

	grant(&g);
	strlcpy(g.models[0], "gpt\"4", sizeof(g.models[0]));
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), -1);

	grant(&g);
	strlcpy(g.id, "../etc", sizeof(g.id));
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_GRANT: bad id");

	grant(&g);
	strlcpy(g.token, "fgw-123", sizeof(g.token));
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_GRANT: bad token");
	strlcpy(g.token, TOKEN, sizeof(g.token));
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), 0);
	g.token[10] = 'A';	/* upper case is another token */
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), -1);

	grant(&g);
	strlcpy(g.tenant, "team a", sizeof(g.tenant));
	ck_assert_int_eq(dec_grant(&g, sizeof(g), err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_GRANT: bad tenant");
}
END_TEST

START_TEST(test_from_gateway)
{
	struct gw_usage	 u, v;
	struct gw_token	 t, w;
	struct imsg	 imsg;
	struct ibuf	*b;
	char		 err[160], r[GW_ERRMAX], longr[2000];

	memset(&u, 0, sizeof(u));
	strlcpy(u.id, "a-1", sizeof(u.id));
	strlcpy(u.provider, "oa", sizeof(u.provider));
	u.seq = 1;
	u.status = 200;
	strlcpy(u.model, "gpt\\x01", sizeof(u.model));	/* escaped */
	ck_assert_ptr_nonnull(b = gw_usage_compose(&u));
	mk(ibuf_data(b), ibuf_size(b), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), 0);
	imsg_free(&imsg);
	ibuf_free(b);

	v = u;
	v.model[3] = '\x01';	/* a raw control byte */
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_USAGE: bad model");
	imsg_free(&imsg);
	v = u;
	v.outcome = GW_OUTCOME_MAX;
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_USAGE: bad outcome");
	imsg_free(&imsg);
	v = u;
	v.estimated = 2;	/* a flag: 0 or 1 */
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_USAGE: bad estimated");
	imsg_free(&imsg);
	v = u;
	v.status = 600;
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	imsg_free(&imsg);
	v = u;
	v.seq = 0;
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	imsg_free(&imsg);
	/* The request: a method, an escaped path, an escaped reason. */
	v = u;
	strlcpy(v.method, "POST", sizeof(v.method));
	strlcpy(v.path, "/v1/\\xff", sizeof(v.path));
	strlcpy(v.reason, "not an endpoint", sizeof(v.reason));
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), 0);
	imsg_free(&imsg);
	v = u;
	strlcpy(v.method, "post", sizeof(v.method));
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_USAGE: bad method");
	imsg_free(&imsg);
	v = u;
	strlcpy(v.path, "/v1/\xff", sizeof(v.path));	/* a raw byte */
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_USAGE: bad path");
	imsg_free(&imsg);
	v = u;
	strlcpy(v.path, "v1", sizeof(v.path));		/* not a path */
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	imsg_free(&imsg);
	v = u;
	strlcpy(v.reason, "a\nb", sizeof(v.reason));	/* a raw newline */
	mk(&v, sizeof(v), &imsg);
	ck_assert_int_eq(gw_usage_decode(&imsg, &v, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "GW_USAGE: bad reason");
	imsg_free(&imsg);

	memset(&t, 0, sizeof(t));
	strlcpy(t.id, "a-1", sizeof(t.id));
	strlcpy(t.provider, "oa", sizeof(t.provider));
	ck_assert_ptr_null(gw_token_compose(&t));	/* no token */
	strlcpy(t.token, TOKEN, sizeof(t.token));
	ck_assert_ptr_nonnull(b = gw_token_compose(&t));
	mk(ibuf_data(b), ibuf_size(b), &imsg);
	ck_assert_int_eq(gw_token_decode(&imsg, &w, err, sizeof(err)), 0);
	ck_assert_str_eq(w.token, TOKEN);
	imsg_free(&imsg);
	ibuf_free(b);

	/* A reason is escaped, cut to one message, refused raw. */
	ck_assert_ptr_nonnull(b = gw_error_compose("key file \n\x1b[2J"));
	mk(ibuf_data(b), ibuf_size(b), &imsg);
	ck_assert_int_eq(gw_error_decode(&imsg, r, sizeof(r), err,
	    sizeof(err)), 0);
	ck_assert_str_eq(r, "key file \\x0a\\x1b[2J");
	imsg_free(&imsg);
	ibuf_free(b);
	memset(longr, '\x01', sizeof(longr) - 1);
	longr[sizeof(longr) - 1] = '\0';
	ck_assert_ptr_nonnull(b = gw_error_compose(longr));
	ck_assert_uint_le(ibuf_size(b), GW_ERRMAX);
	ibuf_free(b);
	mk("raw\n", 5, &imsg);
	ck_assert_int_eq(gw_error_decode(&imsg, r, sizeof(r), err,
	    sizeof(err)), -1);
	imsg_free(&imsg);

	ck_assert_ptr_null(gw_revoke_compose("bad id"));
	ck_assert_ptr_nonnull(b = gw_revoke_compose("a-20261202-0001"));
	mk(ibuf_data(b), ibuf_size(b), &imsg);
	ck_assert_int_eq(gw_revoke_decode(&imsg, r, sizeof(r), err,
	    sizeof(err)), 0);
	ck_assert_str_eq(r, "a-20261202-0001");
	imsg_free(&imsg);
	ibuf_free(b);
}
END_TEST

static Suite *
gwmsg_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("gwmsg");
	tc = tcase_create("core");
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_provider_fields);
	tcase_add_test(tc, test_grant_fields);
	tcase_add_test(tc, test_from_gateway);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(gwmsg_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
