/*
 * imsg framing (libcommon/imsg.c, imsg-buffer.c) against a hostile
 * peer: the input is what the peer writes on a unix stream socket, cut
 * into sendmsg(2) calls, some carrying a descriptor; the reader reads
 * and gets messages as a dispatcher does, taking every payload apart
 * with the ibuf getters.  Promises checked: a message is never longer
 * than the channel's maximum, exact-size getters are exact, a broken
 * channel stays broken, every message forwarded reads back the same,
 * and no descriptor is leaked, whatever the peer sent.
 *
 * Input: byte 0 sets up the channel (bit 0: fd passing allowed; bits
 * 1-2: maximum size 16 KiB, 64 KiB, 40 bytes, 1 MiB).  Then chunks:
 * one control byte (bits 0-5: length - 1; bit 6: a descriptor rides on
 * this chunk; bit 7: the reader runs after it), then the chunk's bytes.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>

#include "imsg.h"
#include "fuzz.h"

#define FD_PROBE	64	/* descriptors above the first free checked */

static const uint32_t maxsizes[] = { MAX_IMSGSIZE, 65536, 40, 1 << 20 };

struct chan {
	struct imsgbuf	 rb;		/* the reader's end */
	struct imsgbuf	 fw;		/* forwards what rb gets */
	struct imsgbuf	 fr;		/* reads the forwarded */
	int		 broken;	/* rb said -1 once */
	int		 eof;
	int		 fdpass;
};

static int
first_free_fd(void)
{
	int	 fd;

	FUZZ_ASSERT((fd = dup(0)) != -1, "dup");
	close(fd);
	return (fd);
}

/* Takes the payload apart with each getter, as decoders do. */
static void
take_apart(struct imsg *imsg)
{
	struct ibuf	 ib;
	unsigned char	 b[64];
	char		 s[64];
	uint64_t	 v64;
	uint32_t	 v32;
	uint16_t	 v16;
	uint8_t		 v8;
	size_t		 len = imsg_get_len(imsg), left;
	int		 which = 0;

	FUZZ_ASSERT(imsg_get_data(imsg, b, len + 1) == -1, "data len + 1");
	if (len > 0)
		FUZZ_ASSERT(imsg_get_data(imsg, b, len - 1) == -1,
		    "data len - 1");
	if (len <= sizeof(b))
		FUZZ_ASSERT(imsg_get_data(imsg, b, len) == 0, "exact data");
	if (imsg_get_strbuf(imsg, s, sizeof(s)) == 0)
		FUZZ_ASSERT(strlen(s) + 1 == len, "strbuf");
	FUZZ_ASSERT(imsg_get_ibuf(imsg, &ib) == 0, "ibuf");
	FUZZ_ASSERT(ibuf_size(&ib) == len, "ibuf size");
	/* Read it to the end in pieces the payload itself chooses. */
	while ((left = ibuf_size(&ib)) > 0) {
		switch (which++ % 7) {
		case 0:
			if (ibuf_get_n8(&ib, &v8) == -1)
				goto bad;
			break;
		case 1:
			if (ibuf_get_n16(&ib, &v16) == -1)
				FUZZ_ASSERT(left < 2, "n16 with %zu left", left);
			break;
		case 2:
			if (ibuf_get_n32(&ib, &v32) == -1)
				FUZZ_ASSERT(left < 4, "n32 with %zu left", left);
			break;
		case 3:
			if (ibuf_get_n64(&ib, &v64) == -1)
				FUZZ_ASSERT(left < 8, "n64 with %zu left", left);
			break;
		case 4:
			if (ibuf_get_string(&ib, s, sizeof(s)) == 0)
				FUZZ_ASSERT(ibuf_size(&ib) < left &&
				    strlen(s) < sizeof(s), "string");
			break;
		case 5:
			if (ibuf_get_strbuf(&ib, s, 8) == 0)
				FUZZ_ASSERT(ibuf_size(&ib) == left - 8 &&
				    memchr(s, '\0', 8) != NULL, "strbuf");
			break;
		default:
			FUZZ_ASSERT(ibuf_skip(&ib, 3) == (left >= 3 ? 0 : -1),
			    "skip");
			break;
		}
		if (ibuf_size(&ib) > left)
			goto bad;
	}
	FUZZ_ASSERT(ibuf_get_n8(&ib, &v8) == -1, "read past the end");
	return;
 bad:
	FUZZ_ASSERT(0, "the cursor moved wrong at %zu left", left);
}

/* What fr reads back must be what rb got. */
static void
check_forward(struct chan *c, const struct imsg *orig,
    const unsigned char *data, size_t len)
{
	struct imsg	 back;
	int		 n;

	FUZZ_ASSERT(imsg_forward(&c->fw, (struct imsg *)orig) == 1,
	    "forward: %s", strerror(errno));
	/* Write and read in turns: a large message fills the socket. */
	for (;;) {
		FUZZ_ASSERT(imsgbuf_write(&c->fw) == 0, "write: %s",
		    strerror(errno));
		if ((n = imsgbuf_get(&c->fr, &back)) != 0)
			break;
		FUZZ_ASSERT(imsgbuf_read(&c->fr) == 1, "forwarded read");
	}
	FUZZ_ASSERT(n == 1, "forwarded get: %s", strerror(errno));
	FUZZ_ASSERT(back.hdr.type == orig->hdr.type &&
	    back.hdr.peerid == orig->hdr.peerid &&
	    back.hdr.pid == orig->hdr.pid &&
	    imsg_get_len(&back) == len &&
	    (len == 0 || memcmp(back.data, data, len) == 0),
	    "forwarded differs");
	FUZZ_ASSERT(imsg_get_fd(&back) == -1, "forward passed an fd");
	imsg_free(&back);
}

/* One dispatcher pass: read once, then get all there is. */
static void
reader(struct chan *c)
{
	struct imsg	 imsg;
	int		 n, fd;

	if (c->broken || c->eof)
		return;
	if ((n = imsgbuf_read(&c->rb)) == -1) {
		c->broken = 1;
		FUZZ_ASSERT(imsgbuf_read(&c->rb) == -1, "unbroken read");
		return;
	}
	if (n == 0)
		c->eof = 1;
	while ((n = imsgbuf_get(&c->rb, &imsg)) == 1) {
		FUZZ_ASSERT(imsg.hdr.len >= IMSG_HEADER_SIZE &&
		    imsg.hdr.len <= c->rb.maxsize &&
		    imsg_get_len(&imsg) == imsg.hdr.len - IMSG_HEADER_SIZE,
		    "length %u", imsg.hdr.len);
		fd = imsg_get_fd(&imsg);
		FUZZ_ASSERT(fd == -1 || c->fdpass, "an fd on a channel "
		    "without fd passing");
		if (fd != -1)
			FUZZ_ASSERT(close(fd) == 0, "the fd is not open");
		take_apart(&imsg);
		check_forward(c, &imsg, imsg.data, imsg_get_len(&imsg));
		imsg_free(&imsg);
	}
	if (n == -1) {
		c->broken = 1;
		FUZZ_ASSERT(imsgbuf_get(&c->rb, &imsg) == -1, "unbroken get");
	}
}

/* Write one chunk, reading when the socket is full. */
static void
writer(struct chan *c, int wfd, const uint8_t *p, size_t len, int withfd)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*h;
	ssize_t		 n;
	int		 fd = -1;

	while (len > 0) {
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = (void *)p;
		iov.iov_len = len;
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		if (withfd) {
			FUZZ_ASSERT((fd = open("/dev/null", O_RDONLY |
			    O_CLOEXEC)) != -1, "/dev/null");
			memset(&cm, 0, sizeof(cm));
			msg.msg_control = cm.buf;
			msg.msg_controllen = sizeof(cm.buf);
			h = CMSG_FIRSTHDR(&msg);
			h->cmsg_len = CMSG_LEN(sizeof(int));
			h->cmsg_level = SOL_SOCKET;
			h->cmsg_type = SCM_RIGHTS;
			memcpy(CMSG_DATA(h), &fd, sizeof(int));
		}
		n = sendmsg(wfd, &msg, MSG_NOSIGNAL);
		if (fd != -1)
			close(fd);	/* the kernel holds its own */
		fd = -1;
		if (n == -1 && errno == EAGAIN) {
			if (c->broken || c->eof)
				return;	/* nobody reads any more */
			reader(c);
			continue;
		}
		if (n == -1)
			return;
		withfd = 0;
		p += n;
		len -= n;
	}
}

static void
pair(int sv[2])
{
	FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chan	 c;
	char		 was_open[FD_PROBE];
	int		 sv[2], fv[2], base, i;
	size_t		 off, len;

	if (size < 1)
		return (0);
	/* What the harness inherited stays open; nothing else may. */
	base = first_free_fd();
	for (i = base; i < base + FD_PROBE; i++)
		was_open[i - base] = fcntl(i, F_GETFD) != -1;
	memset(&c, 0, sizeof(c));
	pair(sv);
	pair(fv);
	FUZZ_ASSERT(imsgbuf_init(&c.rb, sv[0]) == 0 &&
	    imsgbuf_init(&c.fw, fv[0]) == 0 &&
	    imsgbuf_init(&c.fr, fv[1]) == 0, "imsgbuf_init");
	c.fdpass = data[0] & 1;
	if (c.fdpass)
		imsgbuf_allow_fdpass(&c.rb);
	FUZZ_ASSERT(imsgbuf_set_maxsize(&c.rb, maxsizes[(data[0] >> 1) & 3])
	    == 0, "maxsize");
	/* The forward must carry whatever rb accepted. */
	FUZZ_ASSERT(imsgbuf_set_maxsize(&c.fw, 1 << 20) == 0 &&
	    imsgbuf_set_maxsize(&c.fr, 1 << 20) == 0, "maxsize");

	for (off = 1; off < size; off += len) {
		len = (data[off] & 0x3f) + 1;
		i = data[off++];
		if (len > size - off)
			len = size - off;
		writer(&c, sv[1], data + off, len, (i & 0x40) != 0);
		if (i & 0x80)
			reader(&c);
	}
	close(sv[1]);
	while (!c.broken && !c.eof)
		reader(&c);

	imsgbuf_clear(&c.rb);
	imsgbuf_clear(&c.fw);
	imsgbuf_clear(&c.fr);
	close(sv[0]);
	close(fv[0]);
	close(fv[1]);
	/* Descriptors the reader refused or never handed out: closed. */
	for (i = base; i < base + FD_PROBE; i++)
		FUZZ_ASSERT(fcntl(i, F_GETFD) == -1 || was_open[i - base],
		    "fd %d leaked", i);
	return (0);
}
