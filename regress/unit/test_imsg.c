/*
 * Unit tests of libcommon/imsg.c and imsg-buffer.c over real
 * socketpairs, with a hostile peer played by raw write(2)/sendmsg(2).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"

/* A connected pair: a[0] with imsgbuf ib[0], a[1] with ib[1]. */
struct pair {
	int		 fd[2];
	struct imsgbuf	 ib[2];
};

static void
pair_open(struct pair *p)
{
	ck_assert_int_eq(socketpair(AF_UNIX,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p->fd), 0);
	ck_assert_int_eq(imsgbuf_init(&p->ib[0], p->fd[0]), 0);
	ck_assert_int_eq(imsgbuf_init(&p->ib[1], p->fd[1]), 0);
}

static void
pair_close(struct pair *p)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		imsgbuf_clear(&p->ib[i]);
		if (p->fd[i] != -1)
			close(p->fd[i]);
		p->fd[i] = -1;
	}
}

/* Read until a message is complete; fails the test after 2 s. */
static int
get_one(struct imsgbuf *ib, struct imsg *imsg)
{
	struct pollfd	 pfd;
	int		 n, tries;

	for (tries = 0; tries < 200; tries++) {
		if ((n = imsgbuf_get(ib, imsg)) != 0)
			return (n);
		pfd.fd = ib->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 10) == 0)
			continue;
		if ((n = imsgbuf_read(ib)) != 1)
			return (n == 0 ? -2 : -1);
	}
	ck_abort_msg("no message within 2 s");
	return (-1);
}

/* Raw header as a hostile peer would write it. */
static void
raw_hdr(int fd, uint32_t type, uint32_t len)
{
	struct imsg_hdr	 hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = len;
	ck_assert_int_eq(write(fd, &hdr, sizeof(hdr)), sizeof(hdr));
}

/* Raw sendmsg(2) of len bytes with one descriptor attached. */
static void
raw_sendfd(int sock, const void *data, size_t len, int fd)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cbuf;
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct iovec	 iov;

	iov.iov_base = (void *)data;
	iov.iov_len = len;
	memset(&msg, 0, sizeof(msg));
	memset(&cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = sizeof(cbuf.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	ck_assert_int_eq(sendmsg(sock, &msg, 0), (ssize_t)len);
}

/* 0 if every write end of the pipe whose read end is rfd is closed. */
static int
pipe_is_eof(int rfd)
{
	char	 c;
	ssize_t	 n;

	ck_assert_int_eq(fcntl(rfd, F_SETFL, O_NONBLOCK), 0);
	n = read(rfd, &c, 1);
	if (n == 0)
		return (0);
	ck_assert_msg(n == -1 && errno == EAGAIN, "pipe read %zd", n);
	return (-1);
}

START_TEST(test_round_trip)
{
	struct pair	 p;
	struct imsg	 imsg;
	struct iovec	 iov[3];
	struct ibuf	*buf;
	char		 out[64];
	uint32_t	 v32;

	pair_open(&p);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 1, 11, 0, -1, "hello", 6), 1);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 2, 22, 4242, -1, NULL, 0), 1);
	iov[0].iov_base = "ab";
	iov[0].iov_len = 2;
	iov[1].iov_base = "";
	iov[1].iov_len = 0;
	iov[2].iov_base = "cde";
	iov[2].iov_len = 4;
	ck_assert_int_eq(imsg_composev(&p.ib[0], 3, 33, 0, -1, iov, 3), 1);
	ck_assert_ptr_nonnull(buf = imsg_create(&p.ib[0], 4, 44, 0, 4));
	ck_assert_int_eq(imsg_add(buf, "wx", 2), 2);
	ck_assert_int_eq(imsg_add(buf, "yz", 2), 2);
	imsg_close(&p.ib[0], buf);
	ck_assert_ptr_nonnull(buf = ibuf_dynamic(0, 64));
	ck_assert_int_eq(ibuf_add_n32(buf, 0xdeadbeef), 0);
	ck_assert_int_eq(imsg_compose_ibuf(&p.ib[0], 5, 55, 0, buf), 1);
	ck_assert_uint_eq(imsgbuf_queuelen(&p.ib[0]), 5);
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);
	ck_assert_uint_eq(imsgbuf_queuelen(&p.ib[0]), 0);

	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), 1);
	ck_assert_uint_eq(imsg_get_id(&imsg), 11);
	ck_assert_int_eq(imsg_get_pid(&imsg), getpid());
	ck_assert_uint_eq(imsg_get_len(&imsg), 6);
	ck_assert_uint_eq(imsg.hdr.len, IMSG_HEADER_SIZE + 6);
	ck_assert_str_eq(imsg.data, "hello");
	ck_assert_int_eq(imsg_get_fd(&imsg), -1);
	imsg_free(&imsg);

	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), 2);
	ck_assert_int_eq(imsg_get_pid(&imsg), 4242);
	ck_assert_uint_eq(imsg_get_len(&imsg), 0);
	ck_assert_ptr_null(imsg.data);
	ck_assert_int_eq(imsg_get_data(&imsg, NULL, 0), 0);
	imsg_free(&imsg);

	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), 3);
	ck_assert_int_eq(imsg_get_data(&imsg, out, 6), 0);
	ck_assert_mem_eq(out, "abcde", 6);
	imsg_free(&imsg);

	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_id(&imsg), 44);
	ck_assert_int_eq(imsg_get_data(&imsg, out, 4), 0);
	ck_assert_mem_eq(out, "wxyz", 4);
	imsg_free(&imsg);

	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), 5);
	ck_assert_mem_eq(imsg.data, "\xde\xad\xbe\xef", 4);
	{
		struct ibuf	 cur;

		ck_assert_int_eq(imsg_get_ibuf(&imsg, &cur), 0);
		ck_assert_int_eq(ibuf_get_n32(&cur, &v32), 0);
		ck_assert_uint_eq(v32, 0xdeadbeef);
		ck_assert_uint_eq(ibuf_size(&cur), 0);
		/* The message keeps its payload for a second cursor. */
		ck_assert_uint_eq(imsg_get_len(&imsg), 4);
	}
	imsg_free(&imsg);

	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 0);
	pair_close(&p);
}
END_TEST

START_TEST(test_fd_pass)
{
	struct pair	 p;
	struct imsg	 imsg;
	int		 pfd[2], fd;
	char		 got[8];

	pair_open(&p);
	imsgbuf_allow_fdpass(&p.ib[1]);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 7, 0, 0, pfd[1], "x", 1), 1);
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);

	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), 7);
	ck_assert_uint_eq(imsg.hdr.len, IMSG_HEADER_SIZE + 1);
	fd = imsg_get_fd(&imsg);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(imsg_get_fd(&imsg), -1);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	imsg_free(&imsg);
	ck_assert_int_eq(write(fd, "ping", 4), 4);
	ck_assert_int_eq(close(fd), 0);
	ck_assert_int_eq(read(pfd[0], got, sizeof(got)), 4);
	ck_assert_mem_eq(got, "ping", 4);
	/* The sender closed its copy once it was sent. */
	ck_assert_int_eq(pipe_is_eof(pfd[0]), 0);
	close(pfd[0]);
	pair_close(&p);
}
END_TEST

/* Several fds interleaved with plain messages each reach their own. */
START_TEST(test_fd_order)
{
	struct pair	 p;
	struct imsg	 imsg;
	int		 pipes[3][2], i, fd;
	uint32_t	 id;
	char		 c;

	pair_open(&p);
	imsgbuf_allow_fdpass(&p.ib[1]);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pipe(pipes[i]), 0);
		ck_assert_int_eq(imsg_compose(&p.ib[0], 1, i, 0, -1,
		    NULL, 0), 1);
		ck_assert_int_eq(imsg_compose(&p.ib[0], 2, i, 0,
		    pipes[i][1], NULL, 0), 1);
	}
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);
	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
		id = imsg_get_id(&imsg);
		fd = imsg_get_fd(&imsg);
		if (imsg_get_type(&imsg) == 1)
			ck_assert_int_eq(fd, -1);
		else {
			ck_assert_int_ge(fd, 0);
			c = '0' + id;
			ck_assert_int_eq(write(fd, &c, 1), 1);
			close(fd);
		}
		imsg_free(&imsg);
	}
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(read(pipes[i][0], &c, 1), 1);
		ck_assert_int_eq(c, '0' + i);
		close(pipes[i][0]);
	}
	pair_close(&p);
}
END_TEST

START_TEST(test_fd_refused)
{
	struct pair	 p;
	struct imsg	 imsg;
	int		 pfd[2];

	pair_open(&p);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 7, 0, 0, pfd[1], "x", 1), 1);
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	/* Closed on arrival: no write end is left open anywhere. */
	ck_assert_int_eq(pipe_is_eof(pfd[0]), 0);
	errno = 0;
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), -1);
	ck_assert_int_eq(errno, EBADMSG);
	errno = 0;
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), -1);
	ck_assert_int_eq(errno, EBADMSG);
	close(pfd[0]);
	pair_close(&p);
}
END_TEST

START_TEST(test_fd_mark_without_fd)
{
	struct pair	 p;
	struct imsg	 imsg;
	int		 allow;

	for (allow = 0; allow < 2; allow++) {
		pair_open(&p);
		if (allow)
			imsgbuf_allow_fdpass(&p.ib[1]);
		raw_hdr(p.fd[0], 1, IMSG_HEADER_SIZE | IMSG_FD_MARK);
		ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
		errno = 0;
		ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), -1);
		ck_assert_int_eq(errno, EBADMSG);
		pair_close(&p);
	}
}
END_TEST

START_TEST(test_fd_closed_by_free)
{
	struct pair	 p;
	struct imsg	 imsg;
	int		 pfd[2];

	pair_open(&p);
	imsgbuf_allow_fdpass(&p.ib[1]);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 7, 0, 0, pfd[1], NULL, 0), 1);
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);
	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_int_eq(pipe_is_eof(pfd[0]), -1);
	imsg_free(&imsg);
	ck_assert_int_eq(pipe_is_eof(pfd[0]), 0);
	close(pfd[0]);
	pair_close(&p);
}
END_TEST

/* Too many fds in one control message: MSG_CTRUNC breaks the channel. */
START_TEST(test_fd_ctrunc)
{
	struct pair	 p;
	struct imsg_hdr	 hdr;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(3 * sizeof(int))];
	}		 cbuf;
	struct msghdr	 msg;
	struct cmsghdr	*cmsg;
	struct iovec	 iov;
	int		 pfd[2], fds[3];

	pair_open(&p);
	imsgbuf_allow_fdpass(&p.ib[1]);
	ck_assert_int_eq(pipe(pfd), 0);
	fds[0] = fds[1] = fds[2] = pfd[1];
	memset(&hdr, 0, sizeof(hdr));
	hdr.len = IMSG_HEADER_SIZE | IMSG_FD_MARK;
	iov.iov_base = &hdr;
	iov.iov_len = sizeof(hdr);
	memset(&msg, 0, sizeof(msg));
	memset(&cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = sizeof(cbuf.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_len = CMSG_LEN(sizeof(fds));
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cmsg), fds, sizeof(fds));
	ck_assert_int_eq(sendmsg(p.fd[0], &msg, 0), sizeof(hdr));
	close(pfd[1]);
	errno = 0;
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), -1);
	ck_assert_int_eq(errno, EBADMSG);
	/* The fd that did arrive is not leaked once the channel is gone. */
	pair_close(&p);
	ck_assert_int_eq(pipe_is_eof(pfd[0]), 0);
	close(pfd[0]);
}
END_TEST

START_TEST(test_partial_read)
{
	struct pair	 p;
	struct imsg	 imsg;
	struct ibuf	*buf;
	unsigned char	*wire;
	size_t		 len, i;

	pair_open(&p);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 9, 99, 0, -1, "partial", 8),
	    1);
	/* Take the encoded message off the queue's socket. */
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);
	len = IMSG_HEADER_SIZE + 8;
	ck_assert_ptr_nonnull(buf = ibuf_open(len));
	ck_assert_ptr_nonnull(wire = ibuf_reserve(buf, len));
	ck_assert_int_eq(read(p.fd[1], wire, len), (ssize_t)len);

	for (i = 0; i < len; i++) {
		ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 0);
		ck_assert_int_eq(write(p.fd[0], wire + i, 1), 1);
		ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	}
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), 9);
	ck_assert_uint_eq(imsg_get_id(&imsg), 99);
	ck_assert_str_eq(imsg.data, "partial");
	imsg_free(&imsg);
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 0);
	/* Nothing to read on a non-blocking socket is not an error. */
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	ibuf_free(buf);
	pair_close(&p);
}
END_TEST

/* The fd rides on the first byte; the header trickles in after it. */
START_TEST(test_partial_read_fd)
{
	struct pair	 p;
	struct imsg	 imsg;
	struct imsg_hdr	 hdr;
	unsigned char	 wire[IMSG_HEADER_SIZE + 2];
	size_t		 i;
	int		 pfd[2], fd;

	pair_open(&p);
	imsgbuf_allow_fdpass(&p.ib[1]);
	ck_assert_int_eq(pipe(pfd), 0);
	memset(&hdr, 0, sizeof(hdr));
	hdr.type = 4;
	hdr.len = sizeof(wire) | IMSG_FD_MARK;
	memcpy(wire, &hdr, sizeof(hdr));
	memcpy(wire + sizeof(hdr), "z", 2);
	raw_sendfd(p.fd[0], wire, 1, pfd[1]);
	close(pfd[1]);
	for (i = 1; i < sizeof(wire); i++) {
		ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
		ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 0);
		ck_assert_int_eq(write(p.fd[0], wire + i, 1), 1);
	}
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 1);
	ck_assert_str_eq(imsg.data, "z");
	ck_assert_int_ge(fd = imsg_get_fd(&imsg), 0);
	close(fd);
	imsg_free(&imsg);
	ck_assert_int_eq(pipe_is_eof(pfd[0]), 0);
	close(pfd[0]);
	pair_close(&p);
}
END_TEST

/* An fd on a message without the mark is claimed by nobody. */
START_TEST(test_fd_stray)
{
	struct pair	 p;
	struct imsg	 imsg;
	struct imsg_hdr	 hdr;
	int		 pfd[2];

	pair_open(&p);
	imsgbuf_allow_fdpass(&p.ib[1]);
	ck_assert_int_eq(pipe(pfd), 0);
	memset(&hdr, 0, sizeof(hdr));
	hdr.len = sizeof(hdr);
	raw_sendfd(p.fd[0], &hdr, sizeof(hdr), pfd[1]);
	close(pfd[1]);
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	ck_assert_int_eq(pipe_is_eof(pfd[0]), 0);
	errno = 0;
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), -1);
	ck_assert_int_eq(errno, EBADMSG);
	close(pfd[0]);
	pair_close(&p);
}
END_TEST

START_TEST(test_partial_write)
{
	struct pair	 p;
	struct imsg	 imsg;
	uint32_t	 payload[256], got[256];
	int		 sz = 4096, i, n, sent_all = 0, rounds = 0;
	uint32_t	 next = 0, j;
	const int	 count = 200;

	pair_open(&p);
	ck_assert_int_eq(setsockopt(p.fd[0], SOL_SOCKET, SO_SNDBUF, &sz,
	    sizeof(sz)), 0);
	ck_assert_int_eq(setsockopt(p.fd[1], SOL_SOCKET, SO_RCVBUF, &sz,
	    sizeof(sz)), 0);
	for (i = 0; i < count; i++) {
		for (j = 0; j < 256; j++)
			payload[j] = i * 1000 + j;
		/* Varying sizes so messages straddle send boundaries. */
		ck_assert_int_eq(imsg_compose(&p.ib[0], 1, i, 0, -1, payload,
		    sizeof(uint32_t) * (1 + i % 256)), 1);
	}
	ck_assert_int_eq(imsgbuf_write(&p.ib[0]), 0);
	ck_assert_int_eq(imsgbuf_write(&p.ib[0]), 0);
	/* The socket is full: the queue could not drain in one go. */
	ck_assert_uint_gt(imsgbuf_queuelen(&p.ib[0]), 0);
	ck_assert_uint_lt(imsgbuf_queuelen(&p.ib[0]), count);

	while (next < (uint32_t)count) {
		ck_assert_int_lt(rounds++, 100000);
		if (!sent_all) {
			ck_assert_int_eq(imsgbuf_write(&p.ib[0]), 0);
			sent_all = imsgbuf_queuelen(&p.ib[0]) == 0;
		}
		ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
		while ((n = imsgbuf_get(&p.ib[1], &imsg)) == 1) {
			ck_assert_uint_eq(imsg_get_id(&imsg), next);
			ck_assert_uint_eq(imsg_get_len(&imsg),
			    sizeof(uint32_t) * (1 + next % 256));
			ck_assert_int_eq(imsg_get_data(&imsg, got,
			    imsg_get_len(&imsg)), 0);
			for (j = 0; j < 1 + next % 256; j++)
				ck_assert_uint_eq(got[j], next * 1000 + j);
			imsg_free(&imsg);
			next++;
		}
		ck_assert_int_eq(n, 0);
	}
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 0);
	pair_close(&p);
}
END_TEST

START_TEST(test_max_size)
{
	struct pair	 p;
	struct imsg	 imsg;
	struct iovec	 iov[2];
	struct ibuf	*buf;
	char		*data;
	size_t		 max = MAX_IMSGSIZE - IMSG_HEADER_SIZE;

	pair_open(&p);
	ck_assert_ptr_nonnull(data = calloc(1, max + 1));
	memset(data, 'm', max + 1);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 1, 0, 0, -1, data, max), 1);
	errno = 0;
	ck_assert_int_eq(imsg_compose(&p.ib[0], 1, 0, 0, -1, data, max + 1),
	    -1);
	ck_assert_int_eq(errno, ERANGE);
	iov[0].iov_base = data;
	iov[0].iov_len = max;
	iov[1].iov_base = data;
	iov[1].iov_len = 1;
	errno = 0;
	ck_assert_int_eq(imsg_composev(&p.ib[0], 1, 0, 0, -1, iov, 2), -1);
	ck_assert_int_eq(errno, ERANGE);
	errno = 0;
	ck_assert_ptr_null(imsg_create(&p.ib[0], 1, 0, 0, max + 1));
	ck_assert_int_eq(errno, ERANGE);
	/* imsg_add beyond the maximum fails and frees the message. */
	ck_assert_ptr_nonnull(buf = imsg_create(&p.ib[0], 1, 0, 0, 0));
	ck_assert_int_eq(imsg_add(buf, data, max), (int)max);
	errno = 0;
	ck_assert_int_eq(imsg_add(buf, data, 1), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_uint_eq(imsgbuf_queuelen(&p.ib[0]), 1);

	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);
	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg.hdr.len, MAX_IMSGSIZE);
	ck_assert_int_eq(imsg_get_data(&imsg, data, max), 0);
	imsg_free(&imsg);
	free(data);
	pair_close(&p);
}
END_TEST

/* A raised maximum beyond the read buffer: the buffer grows. */
START_TEST(test_large_message)
{
	struct pair	 p;
	struct imsg	 imsg;
	size_t		 len = 1024 * 1024, i;
	unsigned char	*data;
	const unsigned char *got;

	pair_open(&p);
	ck_assert_int_eq(imsgbuf_set_maxsize(&p.ib[0], len + 64), 0);
	ck_assert_int_eq(imsgbuf_set_maxsize(&p.ib[1], len + 64), 0);
	ck_assert_ptr_nonnull(data = malloc(len));
	for (i = 0; i < len; i++)
		data[i] = i * 7;
	ck_assert_int_eq(imsg_compose(&p.ib[0], 1, 0, 0, -1, data, len), 1);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 2, 0, 0, -1, "tail", 5), 1);
	while (imsgbuf_queuelen(&p.ib[0]) > 0) {
		ck_assert_int_eq(imsgbuf_write(&p.ib[0]), 0);
		ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	}
	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_len(&imsg), len);
	got = imsg.data;
	for (i = 0; i < len; i++)
		if (got[i] != (unsigned char)(i * 7))
			ck_abort_msg("byte %zu differs", i);
	imsg_free(&imsg);
	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_str_eq(imsg.data, "tail");
	imsg_free(&imsg);
	free(data);
	pair_close(&p);
}
END_TEST

START_TEST(test_set_maxsize)
{
	struct imsgbuf	 ib;

	ck_assert_int_eq(imsgbuf_init(&ib, -1), 0);
	ck_assert_uint_eq(ib.maxsize, MAX_IMSGSIZE);
	errno = 0;
	ck_assert_int_eq(imsgbuf_set_maxsize(&ib, IMSG_HEADER_SIZE - 1), -1);
	ck_assert_int_eq(errno, ERANGE);
	errno = 0;
	ck_assert_int_eq(imsgbuf_set_maxsize(&ib, 16 * 1024 * 1024 + 1), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_int_eq(imsgbuf_set_maxsize(&ib, IMSG_HEADER_SIZE), 0);
	/* Only an empty message fits now. */
	ck_assert_int_eq(imsg_compose(&ib, 1, 0, 0, -1, NULL, 0), 1);
	ck_assert_int_eq(imsg_compose(&ib, 1, 0, 0, -1, "x", 1), -1);
	ck_assert_int_eq(imsgbuf_set_maxsize(&ib, 16 * 1024 * 1024), 0);
	ck_assert_uint_eq(ib.maxsize, 16 * 1024 * 1024);
	imsgbuf_clear(&ib);
}
END_TEST

START_TEST(test_hdr_too_long)
{
	struct pair	 p;
	struct imsg	 imsg;

	pair_open(&p);
	raw_hdr(p.fd[0], 1, MAX_IMSGSIZE + 1);
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	errno = 0;
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), -1);
	ck_assert_int_eq(errno, ERANGE);
	/* It stays broken; the caller is to close it. */
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), -1);
	pair_close(&p);

	/* A huge length does not make the reader allocate it. */
	pair_open(&p);
	raw_hdr(p.fd[0], 1, 0x7fffffff);
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	errno = 0;
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), -1);
	ck_assert_int_eq(errno, ERANGE);
	pair_close(&p);
}
END_TEST

START_TEST(test_hdr_too_short)
{
	struct pair	 p;
	struct imsg	 imsg;
	uint32_t	 len;

	for (len = 0; len < IMSG_HEADER_SIZE; len += 5) {
		pair_open(&p);
		raw_hdr(p.fd[0], 1, len);
		ck_assert_int_eq(write(p.fd[0], "padding padding ", 16), 16);
		ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
		errno = 0;
		ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), -1);
		ck_assert_int_eq(errno, ERANGE);
		pair_close(&p);
	}
}
END_TEST

START_TEST(test_truncated_eof)
{
	struct pair	 p;
	struct imsg	 imsg;

	pair_open(&p);
	raw_hdr(p.fd[0], 1, IMSG_HEADER_SIZE + 10);
	ck_assert_int_eq(write(p.fd[0], "abc", 3), 3);
	close(p.fd[0]);
	p.fd[0] = -1;
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 1);
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 0);
	ck_assert_int_eq(imsgbuf_read(&p.ib[1]), 0);
	ck_assert_int_eq(imsgbuf_get(&p.ib[1], &imsg), 0);
	pair_close(&p);
}
END_TEST

START_TEST(test_write_epipe)
{
	struct pair	 p;

	pair_open(&p);
	close(p.fd[1]);
	p.fd[1] = -1;
	ck_assert_int_eq(imsg_compose(&p.ib[0], 1, 0, 0, -1, "x", 1), 1);
	errno = 0;
	ck_assert_int_eq(imsgbuf_write(&p.ib[0]), -1);
	ck_assert_int_eq(errno, EPIPE);
	errno = 0;
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), -1);
	ck_assert_int_eq(errno, EPIPE);
	pair_close(&p);
}
END_TEST

/*
 * Random streams from a hostile peer: whatever arrives, read and get
 * return, never crash (the ASan build checks the memory side).
 */
START_TEST(test_garbage)
{
	struct pair	 p;
	struct imsg	 imsg;
	struct imsg_hdr	 hdr;
	unsigned char	 junk[256];
	unsigned int	 seed = 1, round, i, n;
	size_t		 hlen;
	int		 r, done;

	for (round = 0; round < 300; round++) {
		pair_open(&p);
		if (round % 2)
			imsgbuf_allow_fdpass(&p.ib[1]);
		for (i = 0; i < 8; i++) {
			/* Mostly plausible headers, some wild ones. */
			hdr.type = rand_r(&seed);
			hdr.len = rand_r(&seed) % 4 == 0 ? (uint32_t)rand_r(&seed) :
			    IMSG_HEADER_SIZE + rand_r(&seed) % 64;
			if (rand_r(&seed) % 8 == 0)
				hdr.len |= IMSG_FD_MARK;
			hdr.peerid = hdr.pid = rand_r(&seed);
			hlen = rand_r(&seed) % 5 ? sizeof(hdr) :
			    rand_r(&seed) % sizeof(hdr);
			ck_assert_int_eq(write(p.fd[0], &hdr, hlen),
			    (ssize_t)hlen);
			n = rand_r(&seed) % sizeof(junk);
			for (r = 0; r < (int)n; r++)
				junk[r] = rand_r(&seed);
			ck_assert_int_eq(write(p.fd[0], junk, n), (ssize_t)n);
		}
		close(p.fd[0]);
		p.fd[0] = -1;
		for (done = 0, i = 0; !done && i < 1000; i++) {
			if ((r = imsgbuf_read(&p.ib[1])) != 1)
				done = 1;
			while ((r = imsgbuf_get(&p.ib[1], &imsg)) == 1) {
				(void)imsg_get_strbuf(&imsg, (char *)junk,
				    sizeof(junk));
				imsg_free(&imsg);
			}
			if (r == -1)
				done = 1;
		}
		ck_assert_int_eq(done, 1);
		pair_close(&p);
	}
}
END_TEST

/* Send one message with payload data[len] and receive it. */
static void
loop_one(struct pair *p, const void *data, size_t len, struct imsg *imsg)
{
	ck_assert_int_eq(imsg_compose(&p->ib[0], 1, 0, 0, -1, data, len), 1);
	ck_assert_int_eq(imsgbuf_flush(&p->ib[0]), 0);
	ck_assert_int_eq(get_one(&p->ib[1], imsg), 1);
}

START_TEST(test_get_data)
{
	struct pair	 p;
	struct imsg	 imsg;
	uint32_t	 v = 0x01020304, got;
	uint8_t		 big[8];

	pair_open(&p);
	loop_one(&p, "\x01\x02\x03\x04\x05", 5, &imsg);
	errno = 0;
	ck_assert_int_eq(imsg_get_data(&imsg, &got, sizeof(got)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	imsg_free(&imsg);

	loop_one(&p, "\x01\x02\x03", 3, &imsg);
	errno = 0;
	ck_assert_int_eq(imsg_get_data(&imsg, &got, sizeof(got)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	errno = 0;
	ck_assert_int_eq(imsg_get_data(&imsg, big, 0), -1);
	ck_assert_int_eq(errno, EBADMSG);
	imsg_free(&imsg);

	loop_one(&p, &v, sizeof(v), &imsg);
	ck_assert_int_eq(imsg_get_data(&imsg, &got, sizeof(got)), 0);
	ck_assert_uint_eq(got, v);
	imsg_free(&imsg);
	pair_close(&p);
}
END_TEST

START_TEST(test_get_strbuf)
{
	struct pair	 p;
	struct imsg	 imsg;
	char		 s[8];

	pair_open(&p);
	loop_one(&p, "repo", 5, &imsg);
	ck_assert_int_eq(imsg_get_strbuf(&imsg, s, sizeof(s)), 0);
	ck_assert_str_eq(s, "repo");
	/* Exactly fits. */
	ck_assert_int_eq(imsg_get_strbuf(&imsg, s, 5), 0);
	errno = 0;
	ck_assert_int_eq(imsg_get_strbuf(&imsg, s, 4), -1);
	ck_assert_int_eq(errno, EBADMSG);
	imsg_free(&imsg);

	loop_one(&p, "repo", 4, &imsg);		/* no NUL */
	errno = 0;
	ck_assert_int_eq(imsg_get_strbuf(&imsg, s, sizeof(s)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	imsg_free(&imsg);

	loop_one(&p, "re\0po", 6, &imsg);	/* embedded NUL */
	errno = 0;
	ck_assert_int_eq(imsg_get_strbuf(&imsg, s, sizeof(s)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	imsg_free(&imsg);

	loop_one(&p, "much too long", 14, &imsg);
	errno = 0;
	ck_assert_int_eq(imsg_get_strbuf(&imsg, s, sizeof(s)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	imsg_free(&imsg);

	loop_one(&p, NULL, 0, &imsg);		/* empty */
	errno = 0;
	ck_assert_int_eq(imsg_get_strbuf(&imsg, s, sizeof(s)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	imsg_free(&imsg);
	pair_close(&p);
}
END_TEST

START_TEST(test_forward)
{
	struct pair	 p, q;
	struct imsg	 imsg;

	pair_open(&p);
	pair_open(&q);
	ck_assert_int_eq(imsg_compose(&p.ib[0], 3, 5, 77, -1, "fw", 3), 1);
	ck_assert_int_eq(imsgbuf_flush(&p.ib[0]), 0);
	ck_assert_int_eq(get_one(&p.ib[1], &imsg), 1);
	ck_assert_int_eq(imsg_forward(&q.ib[0], &imsg), 1);
	imsg_free(&imsg);
	ck_assert_int_eq(imsgbuf_flush(&q.ib[0]), 0);
	ck_assert_int_eq(get_one(&q.ib[1], &imsg), 1);
	ck_assert_uint_eq(imsg_get_type(&imsg), 3);
	ck_assert_uint_eq(imsg_get_id(&imsg), 5);
	ck_assert_int_eq(imsg_get_pid(&imsg), 77);
	ck_assert_str_eq(imsg.data, "fw");
	imsg_free(&imsg);
	pair_close(&p);
	pair_close(&q);
}
END_TEST

START_TEST(test_ibuf_get_underflow)
{
	unsigned char	 raw[] = { 0x01, 0x02, 0x03 };
	struct ibuf	 b, sub;
	uint8_t		 v8;
	uint16_t	 v16;
	uint32_t	 v32;
	uint64_t	 v64;
	char		 out[4];

	ibuf_from_buffer(&b, raw, sizeof(raw));
	errno = 0;
	ck_assert_int_eq(ibuf_get_n32(&b, &v32), -1);
	ck_assert_int_eq(errno, EBADMSG);
	errno = 0;
	ck_assert_int_eq(ibuf_get_n64(&b, &v64), -1);
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_int_eq(ibuf_get(&b, out, 4), -1);
	ck_assert_int_eq(ibuf_get_ibuf(&b, 4, &sub), -1);
	ck_assert_int_eq(ibuf_skip(&b, 4), -1);
	/* Failures consumed nothing. */
	ck_assert_uint_eq(ibuf_size(&b), 3);
	ck_assert_int_eq(ibuf_get_n16(&b, &v16), 0);
	ck_assert_uint_eq(v16, 0x0102);
	errno = 0;
	ck_assert_int_eq(ibuf_get_n16(&b, &v16), -1);
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_int_eq(ibuf_get_n8(&b, &v8), 0);
	ck_assert_uint_eq(v8, 3);
	ck_assert_int_eq(ibuf_get_n8(&b, &v8), -1);
	ck_assert_uint_eq(ibuf_size(&b), 0);
	/* A read cursor cannot be written to. */
	ck_assert_int_eq(ibuf_add(&b, "x", 1), -1);
}
END_TEST

START_TEST(test_ibuf_strings)
{
	struct ibuf	*w, r;
	char		 s[8];

	ck_assert_ptr_nonnull(w = ibuf_dynamic(0, 64));
	ck_assert_int_eq(ibuf_add(w, "abc", 4), 0);
	ck_assert_int_eq(ibuf_add_strbuf(w, "xy", 4), 0);
	ck_assert_int_eq(ibuf_add_strbuf(w, "wxyz", 4), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_int_eq(ibuf_add(w, "toolongstring", 14), 0);
	ck_assert_int_eq(ibuf_add(w, "nonul", 5), 0);

	ibuf_from_ibuf(&r, w);
	ck_assert_int_eq(ibuf_get_string(&r, s, sizeof(s)), 0);
	ck_assert_str_eq(s, "abc");
	ck_assert_int_eq(ibuf_get_strbuf(&r, s, 4), 0);
	ck_assert_str_eq(s, "xy");
	errno = 0;
	ck_assert_int_eq(ibuf_get_string(&r, s, sizeof(s)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_int_eq(ibuf_skip(&r, 14), 0);
	errno = 0;
	ck_assert_int_eq(ibuf_get_string(&r, s, sizeof(s)), -1);
	ck_assert_int_eq(errno, EBADMSG);
	errno = 0;
	ck_assert_int_eq(ibuf_get_strbuf(&r, s, 5), -1);
	ck_assert_int_eq(errno, EBADMSG);
	errno = 0;
	ck_assert_int_eq(ibuf_get_strbuf(&r, s, 6), -1);
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_uint_eq(ibuf_size(&r), 5);
	ibuf_free(w);
}
END_TEST

START_TEST(test_ibuf_numbers)
{
	struct ibuf	*b;
	const unsigned char want[] = { 0x7f, 0x12, 0x34, 0xde, 0xad, 0xbe,
	    0xef, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	uint64_t	 v64;
	uint32_t	 v32;

	ck_assert_ptr_nonnull(b = ibuf_open(sizeof(want)));
	errno = 0;
	ck_assert_int_eq(ibuf_add_n8(b, 256), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_int_eq(ibuf_add_n16(b, 0x10000), -1);
	ck_assert_int_eq(ibuf_add_n32(b, 0x100000000ULL), -1);
	ck_assert_uint_eq(ibuf_size(b), 0);
	ck_assert_int_eq(ibuf_add_n8(b, 0x7f), 0);
	ck_assert_int_eq(ibuf_add_n16(b, 0x1234), 0);
	ck_assert_int_eq(ibuf_add_n32(b, 0xdeadbeef), 0);
	ck_assert_int_eq(ibuf_add_n64(b, 0x0102030405060708ULL), 0);
	ck_assert_uint_eq(ibuf_size(b), sizeof(want));
	ck_assert_mem_eq(ibuf_data(b), want, sizeof(want));
	/* Fixed size: full. */
	ck_assert_uint_eq(ibuf_left(b), 0);
	errno = 0;
	ck_assert_int_eq(ibuf_add_n8(b, 1), -1);
	ck_assert_int_eq(errno, ERANGE);

	ck_assert_int_eq(ibuf_skip(b, 3), 0);
	ck_assert_int_eq(ibuf_get_n32(b, &v32), 0);
	ck_assert_uint_eq(v32, 0xdeadbeef);
	ck_assert_int_eq(ibuf_get_n64(b, &v64), 0);
	ck_assert_uint_eq(v64, 0x0102030405060708ULL);
	ibuf_rewind(b);
	ck_assert_uint_eq(ibuf_size(b), sizeof(want));
	ibuf_free(b);
}
END_TEST

START_TEST(test_ibuf_dynamic)
{
	struct ibuf	*b;
	uint32_t	*p;
	int		 i;

	ck_assert_ptr_null(ibuf_dynamic(10, 5));
	ck_assert_ptr_nonnull(b = ibuf_dynamic(4, 100));
	for (i = 0; i < 25; i++)
		ck_assert_int_eq(ibuf_add_n32(b, i), 0);
	ck_assert_uint_eq(ibuf_size(b), 100);
	errno = 0;
	ck_assert_int_eq(ibuf_add_zero(b, 1), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_ptr_null(ibuf_reserve(b, 1));
	ck_assert_ptr_nonnull(p = ibuf_seek(b, 96, 4));
	ck_assert_ptr_null(ibuf_seek(b, 97, 4));
	ck_assert_int_eq(ibuf_set(b, 0, "\0\0\0\x2a", 4), 0);
	ck_assert_int_eq(ibuf_set(b, 98, "abc", 3), -1);
	ck_assert_int_eq(ibuf_truncate(b, 8), 0);
	ck_assert_uint_eq(ibuf_size(b), 8);
	ck_assert_int_eq(ibuf_truncate(b, 12), 0);
	ck_assert_mem_eq((char *)ibuf_data(b) + 8, "\0\0\0\0", 4);
	ck_assert_mem_eq(ibuf_data(b), "\0\0\0\x2a\0\0\0\x01", 8);
	ck_assert_uint_eq(ibuf_left(b), 88);
	ck_assert_int_eq(ibuf_fd_avail(b), 0);
	ibuf_fd_set(b, dup(0));
	ck_assert_int_eq(ibuf_fd_avail(b), 1);
	ibuf_free(b);		/* closes the fd: LeakSanitizer won't see it */
	ibuf_free(NULL);
}
END_TEST

static Suite *
imsg_suite(void)
{
	Suite	*s;
	TCase	*tc;

	s = suite_create("imsg");
	tc = tcase_create("core");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_fd_pass);
	tcase_add_test(tc, test_fd_order);
	tcase_add_test(tc, test_fd_refused);
	tcase_add_test(tc, test_fd_mark_without_fd);
	tcase_add_test(tc, test_fd_closed_by_free);
	tcase_add_test(tc, test_fd_ctrunc);
	tcase_add_test(tc, test_partial_read);
	tcase_add_test(tc, test_partial_read_fd);
	tcase_add_test(tc, test_fd_stray);
	tcase_add_test(tc, test_partial_write);
	tcase_add_test(tc, test_max_size);
	tcase_add_test(tc, test_large_message);
	tcase_add_test(tc, test_set_maxsize);
	tcase_add_test(tc, test_hdr_too_long);
	tcase_add_test(tc, test_hdr_too_short);
	tcase_add_test(tc, test_truncated_eof);
	tcase_add_test(tc, test_write_epipe);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_get_data);
	tcase_add_test(tc, test_get_strbuf);
	tcase_add_test(tc, test_forward);
	tcase_add_test(tc, test_ibuf_get_underflow);
	tcase_add_test(tc, test_ibuf_strings);
	tcase_add_test(tc, test_ibuf_numbers);
	tcase_add_test(tc, test_ibuf_dynamic);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed;

	sr = srunner_create(imsg_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
