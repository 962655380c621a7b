/*
 * The parent <-> factory-preview messages and the preview's tokens
 * and cookies (previewmsg.h).  Every message is decoded field by field
 * and checked against what its sender can have meant; the child's
 * messages are hostile to the parent like any child's.
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "crypto.h"
#include "egressmsg.h"
#include "previewmsg.h"
#include "wire.h"

/* The syntax of an attempt id is egress's to say: one home. */
int
preview_valid_id(const char *id)
{
	return (egress_valid_id(id));
}

int
preview_valid_domain(const char *d)
{
	size_t	 i, n = strlen(d), label = 0;

	if (n == 0 || n >= PREVIEW_DOMAINMAX || d[0] == '.' || d[n - 1] == '.')
		return (0);
	for (i = 0; i < n; i++) {
		if (d[i] == '.') {
			if (label == 0)
				return (0);
			label = 0;
			continue;
		}
		if (!((d[i] >= 'a' && d[i] <= 'z') ||
		    (d[i] >= '0' && d[i] <= '9') || d[i] == '-') ||
		    ++label > 63)
			return (0);
	}
	return (1);
}

int
preview_valid_path(const char *p)
{
	size_t	 i, n = strlen(p);

	if (n == 0 || n >= PREVIEW_PATHMAX || p[0] != '/')
		return (0);
	for (i = 0; i < n; i++)
		if (p[i] <= 0x20 || p[i] >= 0x7f || p[i] == '?' ||
		    p[i] == '#')
			return (0);
	return (1);
}

static struct ibuf *
compose_open(size_t len)
{
	return (ibuf_dynamic(len, MAX_IMSGSIZE));
}

static struct ibuf *
compose_done(struct ibuf *b, int failed)
{
	if (failed) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

struct ibuf *
preview_conf_compose(const struct preview_conf *c)
{
	struct ibuf	*b;
	char		 hex[2 * PREVIEW_KEYLEN + 1];
	int		 bad;

	if (!preview_valid_domain(c->domain) || (b = compose_open(256)) ==
	    NULL)
		return (NULL);
	hex_encode(c->key, sizeof(c->key), hex);
	bad = m_add_str(b, hex) == -1 || m_add_str(b, c->domain) == -1 ||
	    ibuf_add_n8(b, c->secure != 0) == -1;
	explicit_bzero(hex, sizeof(hex));
	return (compose_done(b, bad));
}

int
preview_conf_decode(struct imsg *imsg, struct preview_conf *c, char *err,
    size_t errlen)
{
	struct mread	 m;
	struct ibuf	 ib;
	char		 hex[2 * PREVIEW_KEYLEN + 1];

	memset(c, 0, sizeof(*c));
	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(&m, "PREVIEW_CONF", ibuf_data(&ib), ibuf_size(&ib), err,
	    errlen);
	m_get_str(&m, "key", hex, sizeof(hex));
	m_get_str(&m, "domain", c->domain, sizeof(c->domain));
	m_get_bool(&m, "secure", &c->secure);
	if (m_end(&m) == -1)
		return (-1);
	if (strlen(hex) != sizeof(hex) - 1 || hex_decode(hex, c->key,
	    sizeof(c->key)) == -1) {
		explicit_bzero(hex, sizeof(hex));
		snprintf(err, errlen, "PREVIEW_CONF: field key: not %d hex "
		    "digits", 2 * PREVIEW_KEYLEN);
		return (-1);
	}
	explicit_bzero(hex, sizeof(hex));
	if (!preview_valid_domain(c->domain)) {
		snprintf(err, errlen, "PREVIEW_CONF: field domain: not a "
		    "domain");
		return (-1);
	}
	return (0);
}

struct ibuf *
preview_open_compose(const struct preview_open *o)
{
	struct ibuf	*b;

	if (!preview_valid_id(o->id) || o->port == 0 || o->port > 65535 ||
	    (o->health[0] != '\0' && !preview_valid_path(o->health)) ||
	    (b = compose_open(128)) == NULL)
		return (NULL);
	return (compose_done(b, m_add_str(b, o->id) == -1 ||
	    ibuf_add_n32(b, o->port) == -1 ||
	    ibuf_add_n64(b, o->expires) == -1 ||
	    m_add_str(b, o->health) == -1));
}

int
preview_open_decode(struct imsg *imsg, struct preview_open *o, char *err,
    size_t errlen)
{
	struct mread	 m;
	struct ibuf	 ib;

	memset(o, 0, sizeof(*o));
	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(&m, "PREVIEW_OPEN", ibuf_data(&ib), ibuf_size(&ib), err,
	    errlen);
	m_get_str(&m, "id", o->id, sizeof(o->id));
	m_get_n32(&m, "port", &o->port);
	m_get_n64(&m, "expires", &o->expires);
	m_get_str(&m, "health", o->health, sizeof(o->health));
	if (m_end(&m) == -1)
		return (-1);
	if (!preview_valid_id(o->id) || o->port == 0 || o->port > 65535 ||
	    (o->health[0] != '\0' && !preview_valid_path(o->health))) {
		snprintf(err, errlen, "PREVIEW_OPEN: a field out of range");
		return (-1);
	}
	return (0);
}

struct ibuf *
preview_id_compose(const char *id)
{
	struct ibuf	*b;

	if (!preview_valid_id(id) || (b = compose_open(64)) == NULL)
		return (NULL);
	return (compose_done(b, m_add_str(b, id) == -1));
}

int
preview_id_decode(struct imsg *imsg, const char *name, char *id,
    size_t idlen, char *err, size_t errlen)
{
	struct mread	 m;
	struct ibuf	 ib;

	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(&m, name, ibuf_data(&ib), ibuf_size(&ib), err, errlen);
	m_get_str(&m, "id", id, idlen);
	if (m_end(&m) == -1)
		return (-1);
	if (!preview_valid_id(id)) {
		snprintf(err, errlen, "%s: field id: not an attempt id", name);
		return (-1);
	}
	return (0);
}

struct ibuf *
preview_connect_compose(uint32_t req, const char *id)
{
	struct ibuf	*b;

	if (!preview_valid_id(id) || (b = compose_open(64)) == NULL)
		return (NULL);
	return (compose_done(b, ibuf_add_n32(b, req) == -1 ||
	    m_add_str(b, id) == -1));
}

int
preview_connect_decode(struct imsg *imsg, uint32_t *req, char *id,
    size_t idlen, char *err, size_t errlen)
{
	struct mread	 m;
	struct ibuf	 ib;

	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(&m, "PREVIEW_CONNECT", ibuf_data(&ib), ibuf_size(&ib), err,
	    errlen);
	m_get_n32(&m, "request", req);
	m_get_str(&m, "id", id, idlen);
	if (m_end(&m) == -1)
		return (-1);
	if (!preview_valid_id(id)) {
		snprintf(err, errlen, "PREVIEW_CONNECT: field id: not an "
		    "attempt id");
		return (-1);
	}
	return (0);
}

struct ibuf *
preview_connected_compose(const struct preview_connected *c)
{
	struct ibuf	*b;

	if ((b = compose_open(64)) == NULL)
		return (NULL);
	return (compose_done(b, ibuf_add_n32(b, c->req) == -1 ||
	    ibuf_add_n8(b, c->ok != 0) == -1 || m_add_str(b, c->why) == -1));
}

int
preview_connected_decode(struct imsg *imsg, struct preview_connected *c,
    char *err, size_t errlen)
{
	struct mread	 m;
	struct ibuf	 ib;

	memset(c, 0, sizeof(*c));
	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(&m, "PREVIEW_CONNECTED", ibuf_data(&ib), ibuf_size(&ib), err,
	    errlen);
	m_get_n32(&m, "request", &c->req);
	m_get_bool(&m, "ok", &c->ok);
	m_get_str(&m, "why", c->why, sizeof(c->why));
	return (m_end(&m));
}

struct ibuf *
preview_opened_compose(const char *id, const char *nonce)
{
	struct ibuf	*b;

	if (!preview_valid_id(id) || !hex_valid(nonce, PREVIEW_NONCEHEX) ||
	    (b = compose_open(96)) == NULL)
		return (NULL);
	return (compose_done(b, m_add_str(b, id) == -1 ||
	    m_add_str(b, nonce) == -1));
}

int
preview_opened_decode(struct imsg *imsg, char *id, size_t idlen,
    char *nonce, size_t noncelen, char *err, size_t errlen)
{
	struct mread	 m;
	struct ibuf	 ib;

	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(&m, "PREVIEW_OPENED", ibuf_data(&ib), ibuf_size(&ib), err,
	    errlen);
	m_get_str(&m, "id", id, idlen);
	m_get_str(&m, "nonce", nonce, noncelen);
	if (m_end(&m) == -1)
		return (-1);
	if (!preview_valid_id(id) || !hex_valid(nonce, PREVIEW_NONCEHEX)) {
		snprintf(err, errlen, "PREVIEW_OPENED: a field out of range");
		return (-1);
	}
	return (0);
}

struct ibuf *
preview_health_compose(const struct preview_health *h)
{
	struct ibuf	*b;

	if (!preview_valid_id(h->id) || h->status > 999 ||
	    (b = compose_open(PREVIEW_WHATMAX + 64)) == NULL)
		return (NULL);
	return (compose_done(b, m_add_str(b, h->id) == -1 ||
	    ibuf_add_n32(b, h->status) == -1 || m_add_str(b, h->what) == -1));
}

int
preview_health_decode(struct imsg *imsg, struct preview_health *h,
    char *err, size_t errlen)
{
	struct mread	 m;
	struct ibuf	 ib;

	memset(h, 0, sizeof(*h));
	if (imsg_get_ibuf(imsg, &ib) == -1)
		ibuf_from_buffer(&ib, NULL, 0);
	m_open(&m, "PREVIEW_HEALTH", ibuf_data(&ib), ibuf_size(&ib), err,
	    errlen);
	m_get_str(&m, "id", h->id, sizeof(h->id));
	m_get_n32(&m, "status", &h->status);
	m_get_str(&m, "what", h->what, sizeof(h->what));
	if (m_end(&m) == -1)
		return (-1);
	if (!preview_valid_id(h->id) || h->status > 999) {
		snprintf(err, errlen, "PREVIEW_HEALTH: a field out of range");
		return (-1);
	}
	return (0);
}

void
preview_mac(const uint8_t *key, const char *kind, const char *id,
    uint64_t expires, const char *nonce, char *hex)
{
	unsigned char	 mac[EVP_MAX_MD_SIZE];
	unsigned int	 maclen = 0;
	char		*msg;
	int		 n;

	n = asprintf(&msg, "%s\n%s\n%" PRIu64 "\n%s\n", kind, id, expires,
	    nonce);
	if (n == -1 || HMAC(EVP_sha256(), key, PREVIEW_KEYLEN,
	    (unsigned char *)msg, (size_t)n, mac, &maclen) == NULL ||
	    maclen != 32) {
		/* Nothing can match an all-zero MAC's complement. */
		memset(hex, 'x', PREVIEW_MACHEX);
		hex[PREVIEW_MACHEX] = '\0';
	} else
		hex_encode(mac, 32, hex);
	if (n != -1)
		free(msg);
}

int
preview_token(const uint8_t *key, const char *id, uint64_t expires,
    const char *nonce, char *buf, size_t len)
{
	char	 mac[PREVIEW_MACHEX + 1];
	int	 n;

	if (!preview_valid_id(id) || !hex_valid(nonce, PREVIEW_NONCEHEX))
		return (-1);
	preview_mac(key, "token", id, expires, nonce, mac);
	n = snprintf(buf, len, "%s.%" PRIu64 ".%s.%s", id, expires, nonce,
	    mac);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

int
preview_cookie(const uint8_t *key, const char *id, uint64_t expires,
    const char *nonce, char *buf, size_t len)
{
	char	 mac[PREVIEW_MACHEX + 1];
	int	 n;

	if (!preview_valid_id(id) || !hex_valid(nonce, PREVIEW_NONCEHEX))
		return (-1);
	preview_mac(key, "cookie", id, expires, nonce, mac);
	n = snprintf(buf, len, "%" PRIu64 ".%s.%s", expires, nonce, mac);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

/* "EXPIRES.NONCE.MAC" of kind for id: its end and nonce, or -1. */
static int
preview_check(const uint8_t *key, const char *kind, const char *id,
    const char *s, uint64_t *expires, char *nonce)
{
	char		 mac[PREVIEW_MACHEX + 1];
	const char	*p = s, *dot;
	uint64_t	 e = 0;
	size_t		 n;

	/* The end: decimal, no sign, no leading zero, fits 64 bits. */
	for (n = 0; p[n] >= '0' && p[n] <= '9'; n++) {
		if (n >= 19 || (n == 1 && p[0] == '0'))
			return (-1);
		e = e * 10 + (uint64_t)(p[n] - '0');
	}
	if (n == 0 || p[n] != '.')
		return (-1);
	p += n + 1;
	if ((dot = strchr(p, '.')) == NULL || dot - p != PREVIEW_NONCEHEX ||
	    !hex_lower(p, PREVIEW_NONCEHEX))
		return (-1);
	memcpy(nonce, p, PREVIEW_NONCEHEX);
	nonce[PREVIEW_NONCEHEX] = '\0';
	p = dot + 1;
	if (strlen(p) != PREVIEW_MACHEX)
		return (-1);
	preview_mac(key, kind, id, e, nonce, mac);
	if (CRYPTO_memcmp(mac, p, PREVIEW_MACHEX) != 0)
		return (-1);
	*expires = e;
	return (0);
}

int
preview_token_check(const uint8_t *key, const char *id, const char *token,
    uint64_t *expires, char *nonce)
{
	size_t	 n = strlen(id);

	if (!preview_valid_id(id) || strncmp(token, id, n) != 0 ||
	    token[n] != '.')
		return (-1);
	return (preview_check(key, "token", id, token + n + 1, expires,
	    nonce));
}

int
preview_cookie_check(const uint8_t *key, const char *id, const char *value,
    uint64_t *expires, char *nonce)
{
	if (!preview_valid_id(id))
		return (-1);
	return (preview_check(key, "cookie", id, value, expires, nonce));
}
