/*
 * The preview's tokens and cookies (previewmsg.c): one of an attempt
 * is no other attempt's, no other key's, no cookie; every byte of one
 * counts.  The parent <-> child messages round-trip and refuse what
 * their senders cannot mean.  And the cgroup names of an attempt's
 * services (invmsg.c), both ways.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "imsg.h"
#include "invmsg.h"
#include "previewmsg.h"

#define ID	"a-20261207-0001"
#define OTHER	"a-20261207-0002"
#define NONCE	"0123456789abcdef0123456789abcdef"

static uint8_t	 key[PREVIEW_KEYLEN], key2[PREVIEW_KEYLEN];

static void
setup(void)
{
	memset(key, 7, sizeof(key));
	memset(key2, 8, sizeof(key2));
}

START_TEST(t_token)
{
	char		 tok[PREVIEW_TOKENMAX], bad[PREVIEW_TOKENMAX];
	char		 nonce[PREVIEW_NONCEHEX + 1];
	uint64_t	 e = 0;
	size_t		 i;

	ck_assert_int_eq(preview_token(key, ID, 1800000000, NONCE, tok,
	    sizeof(tok)), 0);
	ck_assert_int_eq(preview_token_check(key, ID, tok, &e, nonce), 0);
	ck_assert_uint_eq(e, 1800000000);
	ck_assert_str_eq(nonce, NONCE);
	/* Another attempt's, another key's. */
	ck_assert_int_eq(preview_token_check(key, OTHER, tok, &e, nonce), -1);
	ck_assert_int_eq(preview_token_check(key2, ID, tok, &e, nonce), -1);
	/* Every byte counts. */
	for (i = 0; i < strlen(tok); i++) {
		strlcpy(bad, tok, sizeof(bad));
		bad[i] = bad[i] == '1' ? '2' : '1';
		ck_assert_msg(preview_token_check(key, ID, bad, &e, nonce) ==
		    -1, "byte %zu changed, accepted", i);
	}
	/* Cut, or with more. */
	strlcpy(bad, tok, sizeof(bad));
	bad[strlen(bad) - 1] = '\0';
	ck_assert_int_eq(preview_token_check(key, ID, bad, &e, nonce), -1);
	snprintf(bad, sizeof(bad), "%s0", tok);
	ck_assert_int_eq(preview_token_check(key, ID, bad, &e, nonce), -1);
	/* A token is not a cookie. */
	ck_assert_int_eq(preview_cookie_check(key, ID, tok + strlen(ID) + 1,
	    &e, nonce), -1);
	/* No junk in the end: a sign, a leading zero, too many digits. */
	ck_assert_int_eq(preview_token_check(key, ID, ID ".+1.x.y", &e,
	    nonce), -1);
	ck_assert_int_eq(preview_token_check(key, ID,
	    ID ".018000000000." NONCE ".00", &e, nonce), -1);
	ck_assert_int_eq(preview_token_check(key, ID,
	    ID ".99999999999999999999." NONCE ".00", &e, nonce), -1);
	/* An id the parent would not make. */
	ck_assert_int_eq(preview_token(key, "../x", 1, NONCE, tok,
	    sizeof(tok)), -1);
	ck_assert_int_eq(preview_token(key, ID, 1, "xyz", tok, sizeof(tok)),
	    -1);
}
END_TEST

START_TEST(t_cookie)
{
	char		 c[PREVIEW_TOKENMAX], nonce[PREVIEW_NONCEHEX + 1];
	uint64_t	 e = 0;

	ck_assert_int_eq(preview_cookie(key, ID, 1800000000, NONCE, c,
	    sizeof(c)), 0);
	ck_assert_int_eq(preview_cookie_check(key, ID, c, &e, nonce), 0);
	ck_assert_uint_eq(e, 1800000000);
	ck_assert_int_eq(preview_cookie_check(key, OTHER, c, &e, nonce), -1);
	ck_assert_int_eq(preview_cookie_check(key2, ID, c, &e, nonce), -1);
	/* Another end, the same MAC: refused. */
	c[0] = c[0] == '1' ? '2' : '1';
	ck_assert_int_eq(preview_cookie_check(key, ID, c, &e, nonce), -1);
	ck_assert_int_eq(preview_cookie_check(key, ID, "", &e, nonce), -1);
}
END_TEST

/* A message as the receiving side gets it, read from rd. */
static struct ibuf	 rd;

static struct imsg *
as_imsg(struct ibuf *b, struct imsg *m)
{
	ck_assert_ptr_nonnull(b);
	memset(m, 0, sizeof(*m));
	ibuf_from_buffer(&rd, ibuf_data(b), ibuf_size(b));
	m->buf = &rd;
	m->hdr.len = IMSG_HEADER_SIZE + ibuf_size(b);
	return (m);
}

START_TEST(t_messages)
{
	struct preview_conf	 pc, pc2;
	struct preview_open	 po, po2;
	struct preview_health	 ph, ph2;
	struct imsg		 m;
	struct ibuf		*b;
	char			 id[ATTEMPT_ID_MAX], nonce[PREVIEW_NONCEHEX + 1];
	char			 err[256];
	uint32_t		 req;

	memset(&pc, 0, sizeof(pc));
	memcpy(pc.key, key, sizeof(key));
	strlcpy(pc.domain, "preview.example.org", sizeof(pc.domain));
	pc.secure = 1;
	b = preview_conf_compose(&pc);
	ck_assert_int_eq(preview_conf_decode(as_imsg(b, &m), &pc2, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(memcmp(pc.key, pc2.key, sizeof(key)), 0);
	ck_assert_str_eq(pc2.domain, pc.domain);
	ck_assert_int_eq(pc2.secure, 1);
	ibuf_free(b);
	strlcpy(pc.domain, "Preview.example.org", sizeof(pc.domain));
	ck_assert_ptr_null(preview_conf_compose(&pc));

	memset(&po, 0, sizeof(po));
	strlcpy(po.id, ID, sizeof(po.id));
	po.port = 3000;
	po.expires = 42;
	strlcpy(po.health, "/healthz", sizeof(po.health));
	b = preview_open_compose(&po);
	ck_assert_int_eq(preview_open_decode(as_imsg(b, &m), &po2, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(po2.id, ID);
	ck_assert_uint_eq(po2.port, 3000);
	ck_assert_str_eq(po2.health, "/healthz");
	/* One byte left over: refused, named. */
	ibuf_add_n8(b, 0);
	ck_assert_int_eq(preview_open_decode(as_imsg(b, &m), &po2, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "left over"));
	ibuf_free(b);
	strlcpy(po.health, "/x?y", sizeof(po.health));
	ck_assert_ptr_null(preview_open_compose(&po));

	b = preview_connect_compose(9, ID);
	ck_assert_int_eq(preview_connect_decode(as_imsg(b, &m), &req, id,
	    sizeof(id), err, sizeof(err)), 0);
	ck_assert_uint_eq(req, 9);
	ck_assert_str_eq(id, ID);
	ibuf_free(b);

	b = preview_opened_compose(ID, NONCE);
	ck_assert_int_eq(preview_opened_decode(as_imsg(b, &m), id,
	    sizeof(id), nonce, sizeof(nonce), err, sizeof(err)), 0);
	ck_assert_str_eq(nonce, NONCE);
	ibuf_free(b);

	memset(&ph, 0, sizeof(ph));
	strlcpy(ph.id, ID, sizeof(ph.id));
	ph.status = 200;
	strlcpy(ph.what, "HTTP/1.1 200 OK", sizeof(ph.what));
	b = preview_health_compose(&ph);
	ck_assert_int_eq(preview_health_decode(as_imsg(b, &m), &ph2, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(ph2.status, 200);
	ibuf_free(b);
	ph.status = 1000;
	ck_assert_ptr_null(preview_health_compose(&ph));
}
END_TEST

START_TEST(t_cgnames)
{
	char	 name[ATTEMPT_ID_MAX + 8];
	size_t	 n;
	int	 k;

	for (k = 0; k < CG_KINDS; k++) {
		ck_assert_int_eq(cg_name(ID, k, name, sizeof(name)), 0);
		ck_assert_int_eq(cg_kind(name, &n), k);
		ck_assert_uint_eq(n, strlen(ID));
	}
	ck_assert_int_eq(cg_name(ID, CG_KINDS, name, sizeof(name)), -1);
	cg_name(ID, CG_KIND_SERVICE + 1, name, sizeof(name));
	ck_assert_str_eq(name, ID "-vs0");
	/* A fifth service, or none, is no suffix of ours. */
	ck_assert_int_eq(cg_kind(ID "-s4", &n), CG_KIND_AGENT);
	ck_assert_int_eq(cg_kind(ID "-s", &n), CG_KIND_AGENT);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("previewmsg");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, t_token);
	tcase_add_test(tc, t_cookie);
	tcase_add_test(tc, t_messages);
	tcase_add_test(tc, t_cgnames);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
