/*
 * The parent <-> factory-preview messages, field by field (wire.h),
 * and the preview's tokens and cookies, which the parent mints and
 * the child checks with one key the parent made at start.
 *
 *	CONF	 parent: str key (64 hex), str domain, n8 secure; the
 *		 listening socket as the fd
 *	OPEN	 parent: str id, n32 port, n64 expires (unix seconds),
 *		 str health path ("" none)
 *	CLOSE	 parent: str id
 *	CONNECT	 preview: n32 request, str id
 *	CONNECTED parent: n32 request, n8 ok, str why; the socket, connected
 *		 to the attempt's port inside its network namespace, if ok
 *	OPENED	 preview: str id, str nonce
 *	HEALTH	 preview: str id, n32 HTTP status (0: no answer), str what
 *		 (the first bytes of the answer, the application's: escaped
 *		 by the parent before it records them)
 *
 * A token, given once to an operator (factoryctl preview), names its
 * attempt, its end and a nonce: ID.EXPIRES.NONCE.MAC, where MAC is the
 * hex HMAC-SHA256, under the key, of "token", the id, the end and the
 * nonce, each ended by a newline.  The child takes it once, at
 * /_factory/preview?token=TOKEN on the attempt's own host name, and
 * answers with a cookie of the same end and nonce, EXPIRES.NONCE.MAC
 * with "cookie" in place of "token", which it checks on every request
 * of that host name, and which no other host name's check accepts.
 */
#ifndef FACTORY_PREVIEWMSG_H
#define FACTORY_PREVIEWMSG_H

#include <stdint.h>
#include <time.h>

#include "factory.h"
#include "imsg.h"

#define PREVIEW_KEYLEN		32
#define PREVIEW_DOMAINMAX	200	/* with its NUL */
#define PREVIEW_PATHMAX		256	/* the health path, with its NUL */
#define PREVIEW_NONCEHEX	32	/* 16 random bytes */
#define PREVIEW_MACHEX		64
#define PREVIEW_WHATMAX		1024	/* of a health answer */
/* ID.EXPIRES.NONCE.MAC, with its NUL */
#define PREVIEW_TOKENMAX	(ATTEMPT_ID_MAX + 21 + PREVIEW_NONCEHEX + \
				    PREVIEW_MACHEX + 4)
#define PREVIEW_COOKIE		"factory_preview"
#define PREVIEW_LOGIN		"/_factory/preview"

struct preview_conf {
	uint8_t		 key[PREVIEW_KEYLEN];
	char		 domain[PREVIEW_DOMAINMAX];
	int		 secure;	/* cookies are Secure (TLS in front) */
};

struct preview_open {
	char		 id[ATTEMPT_ID_MAX];
	uint32_t	 port;
	uint64_t	 expires;	/* unix seconds */
	char		 health[PREVIEW_PATHMAX];
};

struct preview_connected {
	uint32_t	 req;
	int		 ok;
	char		 why[256];
};

struct preview_health {
	char		 id[ATTEMPT_ID_MAX];
	uint32_t	 status;
	char		 what[PREVIEW_WHATMAX];
};

/* previewmsg.c: compose (NULL if it does not fit), decode (-1, err). */
struct ibuf	*preview_conf_compose(const struct preview_conf *);
int		 preview_conf_decode(struct imsg *, struct preview_conf *,
		    char *, size_t);
struct ibuf	*preview_open_compose(const struct preview_open *);
int		 preview_open_decode(struct imsg *, struct preview_open *,
		    char *, size_t);
/* CLOSE: an id alone. */
struct ibuf	*preview_id_compose(const char *);
int		 preview_id_decode(struct imsg *, const char *, char *, size_t,
		    char *, size_t);
struct ibuf	*preview_connect_compose(uint32_t, const char *);
int		 preview_connect_decode(struct imsg *, uint32_t *, char *,
		    size_t, char *, size_t);
struct ibuf	*preview_connected_compose(const struct preview_connected *);
int		 preview_connected_decode(struct imsg *,
		    struct preview_connected *, char *, size_t);
struct ibuf	*preview_opened_compose(const char *, const char *);
int		 preview_opened_decode(struct imsg *, char *, size_t, char *,
		    size_t, char *, size_t);
struct ibuf	*preview_health_compose(const struct preview_health *);
int		 preview_health_decode(struct imsg *, struct preview_health *,
		    char *, size_t);

/* An attempt id as the parent makes them. */
int		 preview_valid_id(const char *);
/* A host name of letters, digits, '-' and '.', no empty label. */
int		 preview_valid_domain(const char *);
/* A path of printable ASCII starting with '/', no '?', '#' or space. */
int		 preview_valid_path(const char *);

/*
 * The MAC of a token ("token") or cookie ("cookie"), in hex (65 bytes
 * with its NUL).  A token into buf (PREVIEW_TOKENMAX): 0, or -1.
 */
void		 preview_mac(const uint8_t *, const char *, const char *,
		    uint64_t, const char *, char *);
int		 preview_token(const uint8_t *, const char *, uint64_t,
		    const char *, char *, size_t);
/*
 * A token's parts, checked against id and the key: 0 and its end and
 * nonce (PREVIEW_NONCEHEX + 1), or -1 if it is not one of id's.
 * The expiry is the caller's to compare.
 */
int		 preview_token_check(const uint8_t *, const char *,
		    const char *, uint64_t *, char *);
/* The cookie of id for that end and nonce, into buf: 0, or -1. */
int		 preview_cookie(const uint8_t *, const char *, uint64_t,
		    const char *, char *, size_t);
/* A cookie's value checked for id: 0 and its end and nonce, or -1. */
int		 preview_cookie_check(const uint8_t *, const char *,
		    const char *, uint64_t *, char *);

#endif /* FACTORY_PREVIEWMSG_H */
