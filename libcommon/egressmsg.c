/*
 * The parent -> factory-egress messages (egressmsg.h), field by field:
 * a NUL-terminated attempt id, n32 endpoint, n16 port, n8 kind, a
 * NUL-terminated host; nothing after.  Every field is checked against
 * what the parent can have meant: a literal must parse as its family,
 * a name must be a DNS name, the endpoint index must be in range.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "egressmsg.h"

/* "a-YYYYMMDD-NNNN" and the like: lower case, digits, '-'. */
int
egress_valid_id(const char *id)
{
	size_t	 i, n = strlen(id);

	if (n < 3 || n >= ATTEMPT_ID_MAX || id[0] != 'a' || id[1] != '-')
		return (0);
	for (i = 2; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		    (id[i] >= '0' && id[i] <= '9') || id[i] == '-'))
			return (0);
	return (1);
}

/* Letters, digits, '-' and '.', no empty label, at most 253 bytes. */
static int
egress_valid_name(const char *h)
{
	size_t	 i, n = strlen(h), label = 0;

	if (n == 0 || n > 253 || h[0] == '.' || h[0] == '-')
		return (0);
	for (i = 0; i < n; i++) {
		if (h[i] == '.') {
			if (label == 0)
				return (0);
			label = 0;
			continue;
		}
		if (!((h[i] >= 'a' && h[i] <= 'z') ||
		    (h[i] >= 'A' && h[i] <= 'Z') ||
		    (h[i] >= '0' && h[i] <= '9') || h[i] == '-') ||
		    ++label > 63)
			return (0);
	}
	return (1);
}

static int
egress_valid_host(uint8_t kind, const char *host)
{
	struct in_addr	 a4;
	struct in6_addr	 a6;

	switch (kind) {
	case EGRESS_ADDR4:
		return (inet_pton(AF_INET, host, &a4) == 1);
	case EGRESS_ADDR6:
		return (inet_pton(AF_INET6, host, &a6) == 1);
	case EGRESS_NAME:
		return (egress_valid_name(host));
	}
	return (0);
}

struct ibuf *
egress_listen_compose(const struct egress_listen *l)
{
	struct ibuf	*b;

	if (!egress_valid_id(l->id) || l->ep >= EGRESS_MAXEP ||
	    l->port == 0 || memchr(l->host, '\0', sizeof(l->host)) == NULL ||
	    !egress_valid_host(l->kind, l->host))
		return (NULL);
	if ((b = ibuf_dynamic(64, MAX_IMSGSIZE)) == NULL)
		return (NULL);
	if (ibuf_add(b, l->id, strlen(l->id) + 1) == -1 ||
	    ibuf_add_n32(b, l->ep) == -1 || ibuf_add_n16(b, l->port) == -1 ||
	    ibuf_add_n8(b, l->kind) == -1 ||
	    ibuf_add(b, l->host, strlen(l->host) + 1) == -1) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

struct ibuf *
egress_close_compose(const char *id)
{
	struct ibuf	*b;

	if (!egress_valid_id(id) || (b = ibuf_dynamic(32, 64)) == NULL)
		return (NULL);
	if (ibuf_add(b, id, strlen(id) + 1) == -1) {
		ibuf_free(b);
		return (NULL);
	}
	return (b);
}

int
egress_listen_decode(struct imsg *imsg, struct egress_listen *l, char *err,
    size_t errlen)
{
	struct ibuf	 ib;
	uint32_t	 ep;
	uint16_t	 port;
	uint8_t		 kind;

	memset(l, 0, sizeof(*l));
	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, l->id, sizeof(l->id)) == -1 ||
	    !egress_valid_id(l->id)) {
		snprintf(err, errlen, "EGRESS_LISTEN: bad attempt id");
		return (-1);
	}
	if (ibuf_get_n32(&ib, &ep) == -1 || ep >= EGRESS_MAXEP) {
		snprintf(err, errlen, "EGRESS_LISTEN %s: bad endpoint", l->id);
		return (-1);
	}
	if (ibuf_get_n16(&ib, &port) == -1 || port == 0) {
		snprintf(err, errlen, "EGRESS_LISTEN %s: bad port", l->id);
		return (-1);
	}
	if (ibuf_get_n8(&ib, &kind) == -1 || (kind != EGRESS_ADDR4 &&
	    kind != EGRESS_ADDR6 && kind != EGRESS_NAME)) {
		snprintf(err, errlen, "EGRESS_LISTEN %s: bad kind", l->id);
		return (-1);
	}
	if (ibuf_get_string(&ib, l->host, sizeof(l->host)) == -1 ||
	    !egress_valid_host(kind, l->host)) {
		snprintf(err, errlen, "EGRESS_LISTEN %s: bad host", l->id);
		return (-1);
	}
	if (ibuf_size(&ib) != 0) {
		snprintf(err, errlen, "EGRESS_LISTEN %s: %zu trailing bytes",
		    l->id, ibuf_size(&ib));
		return (-1);
	}
	l->ep = ep;
	l->port = port;
	l->kind = kind;
	return (0);
}

int
egress_close_decode(struct imsg *imsg, char *id, size_t idlen, char *err,
    size_t errlen)
{
	struct ibuf	 ib;

	if (imsg_get_ibuf(imsg, &ib) == -1 ||
	    ibuf_get_string(&ib, id, idlen) == -1 || !egress_valid_id(id) ||
	    ibuf_size(&ib) != 0) {
		snprintf(err, errlen, "EGRESS_CLOSE: bad attempt id");
		return (-1);
	}
	return (0);
}
