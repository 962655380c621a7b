/*
 * imsg: framed messages over a unix stream socket, each optionally
 * carrying one file descriptor.
 *
 * Wire format: a struct imsg_hdr in host byte order followed by the
 * payload.  hdr.len counts the header too; its top bit (IMSG_FD_MARK)
 * says that a descriptor travels with the message.  The sender attaches
 * that descriptor to the sendmsg(2) that carries the first byte of the
 * message, so by the time the receiver holds the header it holds the
 * descriptor as well.
 *
 * The peer may be hostile: every header is checked before its length
 * is trusted, and a bad one is an error return that tells the caller
 * to close the channel.  No global state.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

#define IMSG_MAXSIZE_LIMIT	(16U * 1024 * 1024)
#define IMSG_MAXFDS_RECV	1	/* one fd per message */

/* Messages waiting to be sent, each a complete header + payload. */
struct msgbuf {
	TAILQ_HEAD(, ibuf)	 bufs;
	uint32_t		 queued;
};

/* Bytes received but not yet returned by imsgbuf_get(). */
struct imsgbuf_rbuf {
	unsigned char		*buf;
	size_t			 size;
	size_t			 rpos;
	size_t			 wpos;
	int			*fds;	/* received, not yet handed out */
	size_t			 nfds;
	size_t			 fdcap;
	int			 error;	/* sticky: the channel is broken */
};

static void	 msgbuf_clear(struct msgbuf *);
static int	 msgbuf_write(int, struct msgbuf *, int *);
static void	 msgbuf_consume(struct msgbuf *, size_t);
static int	 rbuf_prepare(struct imsgbuf_rbuf *, uint32_t);
static int	 rbuf_push_fd(struct imsgbuf_rbuf *, int);
static int	 rbuf_pop_fd(struct imsgbuf_rbuf *);
static int	 rbuf_cmsgs(struct imsgbuf *, struct msghdr *);
static size_t	 rbuf_fd_starts(struct imsgbuf_rbuf *);
static void	 rbuf_check_fds(struct imsgbuf_rbuf *);
static int	 imsg_check_hdr(struct imsgbuf *, const struct imsg_hdr *);
static void	 imsg_set_hdr(struct imsgbuf *, struct ibuf *, uint32_t,
		    uint32_t, pid_t);

int
imsgbuf_init(struct imsgbuf *imsgbuf, int fd)
{
	memset(imsgbuf, 0, sizeof(*imsgbuf));
	if ((imsgbuf->w = calloc(1, sizeof(*imsgbuf->w))) == NULL)
		return (-1);
	TAILQ_INIT(&imsgbuf->w->bufs);
	if ((imsgbuf->r = calloc(1, sizeof(*imsgbuf->r))) == NULL)
		goto fail;
	if ((imsgbuf->r->buf = malloc(IBUF_READ_SIZE)) == NULL)
		goto fail;
	imsgbuf->r->size = IBUF_READ_SIZE;
	imsgbuf->pid = getpid();
	imsgbuf->maxsize = MAX_IMSGSIZE;
	imsgbuf->fd = fd;
	imsgbuf->flags = 0;
	return (0);
 fail:
	free(imsgbuf->r);
	free(imsgbuf->w);
	imsgbuf->r = NULL;
	imsgbuf->w = NULL;
	return (-1);
}

void
imsgbuf_allow_fdpass(struct imsgbuf *imsgbuf)
{
	imsgbuf->flags |= IMSGF_HASFD;
}

int
imsgbuf_set_maxsize(struct imsgbuf *imsgbuf, uint32_t max)
{
	if (max < IMSG_HEADER_SIZE || max > IMSG_MAXSIZE_LIMIT) {
		errno = ERANGE;
		return (-1);
	}
	imsgbuf->maxsize = max;
	return (0);
}

/* Frees both queues and closes every descriptor they still hold. */
void
imsgbuf_clear(struct imsgbuf *imsgbuf)
{
	struct imsgbuf_rbuf	*r = imsgbuf->r;
	int			 saved_errno = errno;
	size_t			 i;

	if (imsgbuf->w != NULL) {
		msgbuf_clear(imsgbuf->w);
		free(imsgbuf->w);
		imsgbuf->w = NULL;
	}
	if (r != NULL) {
		for (i = 0; i < r->nfds; i++)
			close(r->fds[i]);
		free(r->fds);
		free(r->buf);
		free(r);
		imsgbuf->r = NULL;
	}
	errno = saved_errno;
}

uint32_t
imsgbuf_queuelen(struct imsgbuf *imsgbuf)
{
	if (imsgbuf->w == NULL)
		return (0);
	return (imsgbuf->w->queued);
}

/*
 * Write side.
 */

static void
msgbuf_clear(struct msgbuf *w)
{
	struct ibuf	*buf;

	while ((buf = TAILQ_FIRST(&w->bufs)) != NULL) {
		TAILQ_REMOVE(&w->bufs, buf, entry);
		ibuf_free(buf);
	}
	w->queued = 0;
}

/* Drop n sent bytes from the head of the queue. */
static void
msgbuf_consume(struct msgbuf *w, size_t n)
{
	struct ibuf	*buf;
	size_t		 left;

	while (n > 0 && (buf = TAILQ_FIRST(&w->bufs)) != NULL) {
		left = ibuf_size(buf);
		if (n < left) {
			buf->rpos += n;
			return;
		}
		n -= left;
		TAILQ_REMOVE(&w->bufs, buf, entry);
		ibuf_free(buf);
		w->queued--;
	}
}

/*
 * One sendmsg(2) of as much of the queue as fits.  A message with a
 * descriptor starts a new sendmsg so the descriptor rides with its
 * first byte.  *again is set when the socket would block.
 */
static int
msgbuf_write(int fd, struct msgbuf *w, int *again)
{
	struct iovec	 iov[IOV_MAX];
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct ibuf	*buf, *first;
	ssize_t		 n;
	int		 i = 0;

	*again = 0;
	if ((first = TAILQ_FIRST(&w->bufs)) == NULL)
		return (0);
	memset(&msg, 0, sizeof(msg));
	TAILQ_FOREACH(buf, &w->bufs, entry) {
		if (i == IOV_MAX || (buf != first && buf->fd != -1))
			break;
		iov[i].iov_base = ibuf_data(buf);
		iov[i].iov_len = ibuf_size(buf);
		i++;
	}
	msg.msg_iov = iov;
	msg.msg_iovlen = i;
	if (first->fd != -1) {
		memset(&cmsgbuf, 0, sizeof(cmsgbuf));
		msg.msg_control = cmsgbuf.buf;
		msg.msg_controllen = sizeof(cmsgbuf.buf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		memcpy(CMSG_DATA(cmsg), &first->fd, sizeof(int));
	}

	while ((n = sendmsg(fd, &msg, MSG_NOSIGNAL)) == -1) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == ENOBUFS) {
			*again = 1;
			return (0);
		}
		return (-1);
	}

	/* The peer holds its own copy now; ours is no longer needed. */
	if (first->fd != -1 && n > 0) {
		close(first->fd);
		first->fd = -1;
	}
	msgbuf_consume(w, n);
	return (0);
}

/* Sends until the queue is empty or the socket would block. */
int
imsgbuf_write(struct imsgbuf *imsgbuf)
{
	int	 again = 0;

	if (imsgbuf->w == NULL) {
		errno = EINVAL;
		return (-1);
	}
	while (imsgbuf->w->queued > 0 && !again)
		if (msgbuf_write(imsgbuf->fd, imsgbuf->w, &again) == -1)
			return (-1);
	return (0);
}

int
imsgbuf_flush(struct imsgbuf *imsgbuf)
{
	struct pollfd	 pfd;
	int		 again;

	if (imsgbuf->w == NULL) {
		errno = EINVAL;
		return (-1);
	}
	while (imsgbuf->w->queued > 0) {
		if (msgbuf_write(imsgbuf->fd, imsgbuf->w, &again) == -1)
			return (-1);
		if (!again)
			continue;
		pfd.fd = imsgbuf->fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			return (-1);
		if (pfd.revents & POLLNVAL) {
			errno = EBADF;
			return (-1);
		}
		/* POLLHUP/POLLERR: the next sendmsg reports the error. */
	}
	return (0);
}

/*
 * Read side.
 */

/*
 * Make room before a read: move unread bytes to the front, and grow
 * the buffer if the message whose header is already here is larger
 * than the buffer.  Headers that would be refused do not grow it.
 */
static int
rbuf_prepare(struct imsgbuf_rbuf *r, uint32_t maxsize)
{
	struct imsg_hdr	 hdr;
	unsigned char	*p;
	size_t		 avail, len;

	avail = r->wpos - r->rpos;
	if (r->rpos > 0) {
		memmove(r->buf, r->buf + r->rpos, avail);
		r->rpos = 0;
		r->wpos = avail;
	}
	if (avail == 0 && r->size > IBUF_READ_SIZE) {
		/* A large message is gone; give its memory back. */
		if ((p = realloc(r->buf, IBUF_READ_SIZE)) != NULL) {
			r->buf = p;
			r->size = IBUF_READ_SIZE;
		}
	}
	if (avail < IMSG_HEADER_SIZE)
		return (0);
	memcpy(&hdr, r->buf, sizeof(hdr));
	len = hdr.len & ~IMSG_FD_MARK;
	if (len < IMSG_HEADER_SIZE || len > maxsize || len <= r->size)
		return (0);
	if ((p = realloc(r->buf, len)) == NULL)
		return (-1);
	r->buf = p;
	r->size = len;
	return (0);
}

static int
rbuf_push_fd(struct imsgbuf_rbuf *r, int fd)
{
	int	*p;
	size_t	 ncap;

	if (r->nfds == r->fdcap) {
		ncap = r->fdcap == 0 ? 4 : r->fdcap * 2;
		if ((p = reallocarray(r->fds, ncap, sizeof(int))) == NULL)
			return (-1);
		r->fds = p;
		r->fdcap = ncap;
	}
	r->fds[r->nfds++] = fd;
	return (0);
}

static int
rbuf_pop_fd(struct imsgbuf_rbuf *r)
{
	int	 fd;

	if (r->nfds == 0)
		return (-1);
	fd = r->fds[0];
	r->nfds--;
	memmove(r->fds, r->fds + 1, r->nfds * sizeof(int));
	return (fd);
}

/*
 * Queue the descriptors of one recvmsg(2).  A descriptor the channel
 * did not ask for is closed at once and breaks the channel; so does a
 * truncated control message (descriptors were lost).
 */
static int
rbuf_cmsgs(struct imsgbuf *imsgbuf, struct msghdr *msg)
{
	struct imsgbuf_rbuf	*r = imsgbuf->r;
	struct cmsghdr		*cmsg;
	unsigned char		*data;
	size_t			 i, nfds;
	int			 fd;

	if (msg->msg_flags & MSG_CTRUNC)
		imsgbuf->flags |= IMSGF_SAWFD;
	for (cmsg = CMSG_FIRSTHDR(msg); cmsg != NULL;
	    cmsg = CMSG_NXTHDR(msg, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		imsgbuf->flags |= IMSGF_SAWFD;
		data = CMSG_DATA(cmsg);
		nfds = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfds; i++) {
			memcpy(&fd, data + i * sizeof(int), sizeof(int));
			if (r->error != 0 ||
			    (imsgbuf->flags & IMSGF_HASFD) == 0) {
				close(fd);
				r->error = EBADMSG;
			} else if (rbuf_push_fd(r, fd) == -1) {
				close(fd);
				r->error = ENOMEM;
			}
		}
	}
	if (msg->msg_flags & MSG_CTRUNC)
		r->error = EBADMSG;
	return (r->error != 0 ? -1 : 0);
}

/*
 * How many buffered messages may own a queued descriptor: those whose
 * header carries the mark, plus a last one whose header is not all
 * here yet.  A descriptor arrives with the first byte of its message,
 * so a legitimate peer never has more descriptors queued than that.
 */
static size_t
rbuf_fd_starts(struct imsgbuf_rbuf *r)
{
	struct imsg_hdr	 hdr;
	size_t		 pos, len, n = 0;

	for (pos = r->rpos; pos < r->wpos; pos += len) {
		if (r->wpos - pos < IMSG_HEADER_SIZE)
			return (n + 1);
		memcpy(&hdr, r->buf + pos, sizeof(hdr));
		len = hdr.len & ~IMSG_FD_MARK;
		if (len < IMSG_HEADER_SIZE)
			break;	/* imsgbuf_get() will refuse it */
		if (hdr.len & IMSG_FD_MARK)
			n++;
		if (len > r->wpos - pos)
			break;
	}
	return (n);
}

/* Descriptors no message claims would pile up: break the channel. */
static void
rbuf_check_fds(struct imsgbuf_rbuf *r)
{
	size_t	 i;

	if (r->nfds == 0 || r->nfds <= rbuf_fd_starts(r))
		return;
	for (i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	r->nfds = 0;
	r->error = EBADMSG;
}

int
imsgbuf_read(struct imsgbuf *imsgbuf)
{
	struct imsgbuf_rbuf	*r = imsgbuf->r;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) *
				    IMSG_MAXFDS_RECV)];
	}			 cmsgbuf;
	struct msghdr		 msg;
	struct iovec		 iov;
	ssize_t			 n;

	if (r == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (r->error != 0) {
		errno = r->error;
		return (-1);
	}
	if (rbuf_prepare(r, imsgbuf->maxsize) == -1)
		return (-1);
	if (r->wpos == r->size)
		return (1);	/* full of complete messages: get them first */

	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = r->buf + r->wpos;
	iov.iov_len = r->size - r->wpos;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	/*
	 * A channel that takes no descriptors gives the kernel no room for
	 * them: a peer's are then never installed here, only let go of
	 * (MSG_CTRUNC, which breaks the channel).  Installed, a close of
	 * ours would be a flush of the peer's file (FUSE's waits for the
	 * peer's own server, for ever).
	 */
	if (imsgbuf->flags & IMSGF_HASFD) {
		msg.msg_control = cmsgbuf.buf;
		msg.msg_controllen = sizeof(cmsgbuf.buf);
	}

	if ((n = recvmsg(imsgbuf->fd, &msg, MSG_CMSG_CLOEXEC)) == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return (1);
		return (-1);
	}
	r->wpos += n;
	/*
	 * A refused descriptor fails the next read or get, not this one:
	 * the bytes did arrive.  So does one a channel without descriptors
	 * gave no room (MSG_CTRUNC there); a lost one, on a channel that
	 * takes them, fails now.
	 */
	if (rbuf_cmsgs(imsgbuf, &msg) == -1 && (msg.msg_flags & MSG_CTRUNC) &&
	    (imsgbuf->flags & IMSGF_HASFD)) {
		errno = r->error;
		return (-1);
	}
	rbuf_check_fds(r);
	if (n == 0)
		return (0);
	return (1);
}

/* 0 if the header may be trusted, else -1 with errno set. */
static int
imsg_check_hdr(struct imsgbuf *imsgbuf, const struct imsg_hdr *hdr)
{
	uint32_t	 len = hdr->len & ~IMSG_FD_MARK;

	if (len < IMSG_HEADER_SIZE || len > imsgbuf->maxsize) {
		errno = ERANGE;
		return (-1);
	}
	if (hdr->len & IMSG_FD_MARK) {
		if ((imsgbuf->flags & IMSGF_HASFD) == 0 ||
		    imsgbuf->r->nfds == 0) {
			errno = EBADMSG;
			return (-1);
		}
	}
	return (0);
}

int
imsgbuf_get(struct imsgbuf *imsgbuf, struct imsg *imsg)
{
	struct imsgbuf_rbuf	*r = imsgbuf->r;
	struct imsg_hdr		 hdr;
	struct ibuf		*buf;
	size_t			 avail, len, datalen;

	if (r == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (r->error != 0) {
		errno = r->error;
		return (-1);
	}
	avail = r->wpos - r->rpos;
	if (avail < IMSG_HEADER_SIZE)
		return (0);
	memcpy(&hdr, r->buf + r->rpos, sizeof(hdr));
	if (imsg_check_hdr(imsgbuf, &hdr) == -1) {
		/* The stream cannot be resynchronised. */
		r->error = errno;
		return (-1);
	}
	len = hdr.len & ~IMSG_FD_MARK;
	if (avail < len)
		return (0);

	datalen = len - IMSG_HEADER_SIZE;
	if ((buf = ibuf_open(datalen)) == NULL)
		return (-1);
	if (ibuf_add(buf, r->buf + r->rpos + IMSG_HEADER_SIZE,
	    datalen) == -1) {
		ibuf_free(buf);
		return (-1);
	}
	if (hdr.len & IMSG_FD_MARK)
		buf->fd = rbuf_pop_fd(r);
	r->rpos += len;
	if (r->rpos == r->wpos)
		r->rpos = r->wpos = 0;

	memset(imsg, 0, sizeof(*imsg));
	imsg->hdr = hdr;
	imsg->hdr.len = len;
	imsg->buf = buf;
	imsg->data = datalen > 0 ? ibuf_data(buf) : NULL;
	return (1);
}

/*
 * One message.
 */

/* A read cursor over the payload; the message keeps its own. */
int
imsg_get_ibuf(struct imsg *imsg, struct ibuf *ibuf)
{
	if (imsg->buf == NULL) {
		errno = EBADMSG;
		return (-1);
	}
	ibuf_from_ibuf(ibuf, imsg->buf);
	return (0);
}

int
imsg_get_data(struct imsg *imsg, void *data, size_t len)
{
	if (imsg->buf == NULL || ibuf_size(imsg->buf) != len) {
		errno = EBADMSG;
		return (-1);
	}
	if (len > 0)
		memcpy(data, ibuf_data(imsg->buf), len);
	return (0);
}

/* The whole payload is one string: exactly one NUL, at its end. */
int
imsg_get_strbuf(struct imsg *imsg, char *str, size_t len)
{
	const char	*p;
	size_t		 size;

	if (imsg->buf == NULL || (size = ibuf_size(imsg->buf)) == 0 ||
	    size > len) {
		errno = EBADMSG;
		return (-1);
	}
	p = ibuf_data(imsg->buf);
	if (p[size - 1] != '\0' || memchr(p, '\0', size - 1) != NULL) {
		errno = EBADMSG;
		return (-1);
	}
	memcpy(str, p, size);
	return (0);
}

int
imsg_get_fd(struct imsg *imsg)
{
	if (imsg->buf == NULL)
		return (-1);
	return (ibuf_fd_get(imsg->buf));
}

uint32_t
imsg_get_id(struct imsg *imsg)
{
	return (imsg->hdr.peerid);
}

size_t
imsg_get_len(struct imsg *imsg)
{
	if (imsg->buf == NULL)
		return (0);
	return (ibuf_size(imsg->buf));
}

pid_t
imsg_get_pid(struct imsg *imsg)
{
	return (imsg->hdr.pid);
}

uint32_t
imsg_get_type(struct imsg *imsg)
{
	return (imsg->hdr.type);
}

/* Releases the payload and closes a descriptor nobody took. */
void
imsg_free(struct imsg *imsg)
{
	ibuf_free(imsg->buf);
	imsg->buf = NULL;
	imsg->data = NULL;
}

/*
 * Composing.  A message is built in one dynamic ibuf: header first,
 * then the payload; imsg_close() fills in the final length.
 */

static void
imsg_set_hdr(struct imsgbuf *imsgbuf, struct ibuf *buf, uint32_t type,
    uint32_t id, pid_t pid)
{
	struct imsg_hdr	 hdr;

	hdr.type = type;
	hdr.len = 0;	/* set by imsg_close() */
	hdr.peerid = id;
	hdr.pid = pid == 0 ? (uint32_t)imsgbuf->pid : (uint32_t)pid;
	memcpy(buf->buf, &hdr, sizeof(hdr));
	buf->wpos = sizeof(hdr);
}

struct ibuf *
imsg_create(struct imsgbuf *imsgbuf, uint32_t type, uint32_t id, pid_t pid,
    size_t datalen)
{
	struct ibuf	*buf;

	if (imsgbuf->w == NULL) {
		errno = EINVAL;
		return (NULL);
	}
	if (datalen > imsgbuf->maxsize - IMSG_HEADER_SIZE) {
		errno = ERANGE;
		return (NULL);
	}
	if ((buf = ibuf_dynamic(IMSG_HEADER_SIZE + datalen,
	    imsgbuf->maxsize)) == NULL)
		return (NULL);
	imsg_set_hdr(imsgbuf, buf, type, id, pid);
	return (buf);
}

/* On failure the message is freed, so callers need not track it. */
int
imsg_add(struct ibuf *msg, const void *data, size_t datalen)
{
	if (msg == NULL)
		return (-1);
	if (datalen > INT_MAX || ibuf_add(msg, data, datalen) == -1) {
		if (datalen > INT_MAX)
			errno = ERANGE;
		ibuf_free(msg);
		return (-1);
	}
	return ((int)datalen);
}

void
imsg_close(struct imsgbuf *imsgbuf, struct ibuf *msg)
{
	uint32_t	 len;

	if (msg == NULL)
		return;
	/* Only imsg_create() makes these, and it checked maxsize. */
	len = ibuf_size(msg);
	if (msg->fd != -1)
		len |= IMSG_FD_MARK;
	memcpy(msg->buf + offsetof(struct imsg_hdr, len), &len, sizeof(len));
	TAILQ_INSERT_TAIL(&imsgbuf->w->bufs, msg, entry);
	imsgbuf->w->queued++;
}

/*
 * On failure the descriptor is left to the caller, as no message
 * took it.
 */
int
imsg_compose(struct imsgbuf *imsgbuf, uint32_t type, uint32_t id, pid_t pid,
    int fd, const void *data, size_t datalen)
{
	struct ibuf	*buf;

	if ((buf = imsg_create(imsgbuf, type, id, pid, datalen)) == NULL)
		return (-1);
	if (imsg_add(buf, data, datalen) == -1)
		return (-1);
	buf->fd = fd;
	imsg_close(imsgbuf, buf);
	return (1);
}

int
imsg_composev(struct imsgbuf *imsgbuf, uint32_t type, uint32_t id, pid_t pid,
    int fd, const struct iovec *iov, int iovcnt)
{
	struct ibuf	*buf;
	size_t		 datalen = 0;
	int		 i;

	if (iovcnt < 0) {
		errno = EINVAL;
		return (-1);
	}
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > SIZE_MAX - datalen) {
			errno = ERANGE;
			return (-1);
		}
		datalen += iov[i].iov_len;
	}
	if ((buf = imsg_create(imsgbuf, type, id, pid, datalen)) == NULL)
		return (-1);
	for (i = 0; i < iovcnt; i++)
		if (imsg_add(buf, iov[i].iov_base, iov[i].iov_len) == -1)
			return (-1);
	buf->fd = fd;
	imsg_close(imsgbuf, buf);
	return (1);
}

/*
 * Sends buf as the payload, with buf's descriptor if it has one.  buf
 * is consumed on success and on failure.
 */
int
imsg_compose_ibuf(struct imsgbuf *imsgbuf, uint32_t type, uint32_t id,
    pid_t pid, struct ibuf *buf)
{
	struct ibuf	*msg;

	if (buf == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if ((msg = imsg_create(imsgbuf, type, id, pid,
	    ibuf_size(buf))) == NULL) {
		ibuf_free(buf);
		return (-1);
	}
	if (imsg_add(msg, ibuf_data(buf), ibuf_size(buf)) == -1) {
		ibuf_free(buf);
		return (-1);
	}
	msg->fd = ibuf_fd_get(buf);
	ibuf_free(buf);
	imsg_close(imsgbuf, msg);
	return (1);
}

/* Passes a received message on, keeping its header; not its fd. */
int
imsg_forward(struct imsgbuf *imsgbuf, struct imsg *imsg)
{
	struct ibuf	*msg;
	size_t		 len;

	len = imsg_get_len(imsg);
	if ((msg = imsg_create(imsgbuf, imsg->hdr.type, imsg->hdr.peerid,
	    0, len)) == NULL)
		return (-1);
	/* Keep the original sender's pid, even 0. */
	memcpy(msg->buf + offsetof(struct imsg_hdr, pid), &imsg->hdr.pid,
	    sizeof(imsg->hdr.pid));
	if (len > 0 && imsg_add(msg, ibuf_data(imsg->buf), len) == -1)
		return (-1);
	imsg_close(imsgbuf, msg);
	return (1);
}
