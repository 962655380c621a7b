/*
 * ibuf: byte buffers used to build imsg payloads and to decode them.
 *
 * A buffer holds bytes [rpos, wpos) of an allocation of size bytes.
 * Writers append at wpos; readers consume from rpos.  A buffer made by
 * ibuf_open() never grows (max is 0); one made by ibuf_dynamic() grows
 * up to max.  ibuf_from_buffer() makes a read cursor over memory the
 * caller owns: it is full, so nothing can be appended, and it must not
 * be passed to ibuf_free().
 *
 * Every length that comes from a peer is checked against what is left
 * before it is used: a short buffer is an EBADMSG error, never a read
 * past the end.
 */
#include <sys/types.h>

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

static int	ibuf_grow(struct ibuf *, size_t);

struct ibuf *
ibuf_open(size_t len)
{
	struct ibuf	*buf;

	if ((buf = calloc(1, sizeof(*buf))) == NULL)
		return (NULL);
	if (len > 0 && (buf->buf = calloc(len, 1)) == NULL) {
		free(buf);
		return (NULL);
	}
	buf->size = len;
	buf->max = 0;
	buf->fd = -1;
	return (buf);
}

struct ibuf *
ibuf_dynamic(size_t len, size_t max)
{
	struct ibuf	*buf;

	if (max == 0 || max < len) {
		errno = EINVAL;
		return (NULL);
	}
	if ((buf = ibuf_open(len)) == NULL)
		return (NULL);
	buf->max = max;
	return (buf);
}

/* Make room for need bytes in total; new memory is zeroed. */
static int
ibuf_grow(struct ibuf *buf, size_t need)
{
	unsigned char	*p;
	size_t		 nsize;

	if (need <= buf->size)
		return (0);
	if (buf->max == 0 || need > buf->max) {
		errno = ERANGE;
		return (-1);
	}
	/* Double to keep appends amortised, but never beyond max. */
	nsize = buf->size < buf->max / 2 ? buf->size * 2 : buf->max;
	if (nsize < need)
		nsize = need;
	if ((p = realloc(buf->buf, nsize)) == NULL)
		return (-1);
	memset(p + buf->size, 0, nsize - buf->size);
	buf->buf = p;
	buf->size = nsize;
	return (0);
}

void *
ibuf_reserve(struct ibuf *buf, size_t len)
{
	void	*p;

	if (len > SIZE_MAX - buf->wpos) {
		errno = ERANGE;
		return (NULL);
	}
	if (ibuf_grow(buf, buf->wpos + len) == -1)
		return (NULL);
	if (buf->buf == NULL) {
		/* Nothing reserved in nothing: no pointer to give. */
		errno = EINVAL;
		return (NULL);
	}
	p = buf->buf + buf->wpos;
	buf->wpos += len;
	return (p);
}

int
ibuf_add(struct ibuf *buf, const void *data, size_t len)
{
	void	*p;

	if (len == 0)
		return (0);
	if ((p = ibuf_reserve(buf, len)) == NULL)
		return (-1);
	memcpy(p, data, len);
	return (0);
}

int
ibuf_add_ibuf(struct ibuf *buf, const struct ibuf *from)
{
	return (ibuf_add(buf, ibuf_data(from), ibuf_size(from)));
}

int
ibuf_add_zero(struct ibuf *buf, size_t len)
{
	void	*p;

	if (len == 0)
		return (0);
	if ((p = ibuf_reserve(buf, len)) == NULL)
		return (-1);
	memset(p, 0, len);
	return (0);
}

int
ibuf_add_n8(struct ibuf *buf, uint64_t v)
{
	uint8_t	 x;

	if (v > UINT8_MAX) {
		errno = ERANGE;
		return (-1);
	}
	x = v;
	return (ibuf_add(buf, &x, sizeof(x)));
}

int
ibuf_add_n16(struct ibuf *buf, uint64_t v)
{
	uint16_t x;

	if (v > UINT16_MAX) {
		errno = ERANGE;
		return (-1);
	}
	x = htobe16(v);
	return (ibuf_add(buf, &x, sizeof(x)));
}

int
ibuf_add_n32(struct ibuf *buf, uint64_t v)
{
	uint32_t x;

	if (v > UINT32_MAX) {
		errno = ERANGE;
		return (-1);
	}
	x = htobe32(v);
	return (ibuf_add(buf, &x, sizeof(x)));
}

int
ibuf_add_n64(struct ibuf *buf, uint64_t v)
{
	uint64_t x;

	x = htobe64(v);
	return (ibuf_add(buf, &x, sizeof(x)));
}

/*
 * A fixed-size string field of len bytes, NUL-padded.  The string and
 * its NUL must fit: a silently truncated name is worse than an error.
 */
int
ibuf_add_strbuf(struct ibuf *buf, const char *str, size_t len)
{
	char	*p;
	size_t	 slen;

	slen = strnlen(str, len);
	if (slen >= len) {
		errno = ERANGE;
		return (-1);
	}
	if ((p = ibuf_reserve(buf, len)) == NULL)
		return (-1);
	memcpy(p, str, slen);
	memset(p + slen, 0, len - slen);
	return (0);
}

/* Pointer to len bytes at offset pos of the unread data. */
void *
ibuf_seek(struct ibuf *buf, size_t pos, size_t len)
{
	size_t	 size = ibuf_size(buf);

	if (buf->buf == NULL || pos > size || len > size - pos) {
		errno = ERANGE;
		return (NULL);
	}
	return (buf->buf + buf->rpos + pos);
}

int
ibuf_set(struct ibuf *buf, size_t pos, const void *data, size_t len)
{
	void	*p;

	if (len == 0 && pos <= ibuf_size(buf))
		return (0);
	if ((p = ibuf_seek(buf, pos, len)) == NULL)
		return (-1);
	memcpy(p, data, len);
	return (0);
}

void *
ibuf_data(const struct ibuf *buf)
{
	if (buf->buf == NULL)
		return (NULL);
	return (buf->buf + buf->rpos);
}

/* Bytes not yet read. */
size_t
ibuf_size(const struct ibuf *buf)
{
	return (buf->wpos - buf->rpos);
}

/* Bytes that can still be appended. */
size_t
ibuf_left(const struct ibuf *buf)
{
	if (buf->max == 0)
		return (buf->size - buf->wpos);
	return (buf->max - buf->wpos);
}

/* Keep len unread bytes, or pad with zeros up to len. */
int
ibuf_truncate(struct ibuf *buf, size_t len)
{
	size_t	 size = ibuf_size(buf);

	if (len <= size) {
		buf->wpos = buf->rpos + len;
		return (0);
	}
	return (ibuf_add_zero(buf, len - size));
}

void
ibuf_rewind(struct ibuf *buf)
{
	buf->rpos = 0;
}

void
ibuf_from_buffer(struct ibuf *buf, void *data, size_t len)
{
	memset(buf, 0, sizeof(*buf));
	buf->buf = data;
	buf->size = buf->wpos = len;
	buf->fd = -1;
}

void
ibuf_from_ibuf(struct ibuf *buf, const struct ibuf *from)
{
	ibuf_from_buffer(buf, ibuf_data(from), ibuf_size(from));
}

int
ibuf_get(struct ibuf *buf, void *data, size_t len)
{
	if (ibuf_size(buf) < len) {
		errno = EBADMSG;
		return (-1);
	}
	if (len > 0)
		memcpy(data, ibuf_data(buf), len);
	buf->rpos += len;
	return (0);
}

int
ibuf_get_ibuf(struct ibuf *buf, size_t len, struct ibuf *new)
{
	if (ibuf_size(buf) < len) {
		errno = EBADMSG;
		return (-1);
	}
	ibuf_from_buffer(new, ibuf_data(buf), len);
	buf->rpos += len;
	return (0);
}

int
ibuf_get_n8(struct ibuf *buf, uint8_t *v)
{
	return (ibuf_get(buf, v, sizeof(*v)));
}

int
ibuf_get_n16(struct ibuf *buf, uint16_t *v)
{
	uint16_t x;

	if (ibuf_get(buf, &x, sizeof(x)) == -1)
		return (-1);
	*v = be16toh(x);
	return (0);
}

int
ibuf_get_n32(struct ibuf *buf, uint32_t *v)
{
	uint32_t x;

	if (ibuf_get(buf, &x, sizeof(x)) == -1)
		return (-1);
	*v = be32toh(x);
	return (0);
}

int
ibuf_get_n64(struct ibuf *buf, uint64_t *v)
{
	uint64_t x;

	if (ibuf_get(buf, &x, sizeof(x)) == -1)
		return (-1);
	*v = be64toh(x);
	return (0);
}

/*
 * A NUL-terminated string of variable length: consumes the string and
 * its NUL.  Fails, consuming nothing, if there is no NUL or the string
 * does not fit in len bytes.
 */
int
ibuf_get_string(struct ibuf *buf, char *str, size_t len)
{
	const char	*p, *nul;
	size_t		 slen;

	p = ibuf_data(buf);
	if (p == NULL || (nul = memchr(p, '\0', ibuf_size(buf))) == NULL) {
		errno = EBADMSG;
		return (-1);
	}
	slen = nul - p;
	if (slen >= len) {
		errno = EBADMSG;
		return (-1);
	}
	memcpy(str, p, slen + 1);
	buf->rpos += slen + 1;
	return (0);
}

/*
 * A fixed-size field of len bytes that must hold a NUL somewhere;
 * consumes len bytes.
 */
int
ibuf_get_strbuf(struct ibuf *buf, char *str, size_t len)
{
	const char	*p;

	if (len == 0) {
		errno = EINVAL;
		return (-1);
	}
	if (ibuf_size(buf) < len) {
		errno = EBADMSG;
		return (-1);
	}
	p = ibuf_data(buf);
	if (memchr(p, '\0', len) == NULL) {
		errno = EBADMSG;
		return (-1);
	}
	memcpy(str, p, len);
	buf->rpos += len;
	return (0);
}

int
ibuf_skip(struct ibuf *buf, size_t len)
{
	if (ibuf_size(buf) < len) {
		errno = EBADMSG;
		return (-1);
	}
	buf->rpos += len;
	return (0);
}

/* Frees the buffer and closes a descriptor still attached to it. */
void
ibuf_free(struct ibuf *buf)
{
	int	 saved_errno;

	if (buf == NULL)
		return;
	saved_errno = errno;
	if (buf->fd != -1)
		close(buf->fd);
	free(buf->buf);
	free(buf);
	errno = saved_errno;
}

int
ibuf_fd_avail(struct ibuf *buf)
{
	return (buf->fd != -1);
}

/* Hands the descriptor to the caller; a second call returns -1. */
int
ibuf_fd_get(struct ibuf *buf)
{
	int	 fd;

	fd = buf->fd;
	buf->fd = -1;
	return (fd);
}

void
ibuf_fd_set(struct ibuf *buf, int fd)
{
	if (buf->fd != -1 && buf->fd != fd)
		close(buf->fd);
	buf->fd = fd;
}
