/*
 * imsg: framed messages, optionally carrying one file descriptor, over
 * a unix socket.  Written for factory; API-compatible with current
 * OpenBSD imsg (16-byte header in host byte order, 32-bit length whose
 * top bit marks an attached fd, fd passing opt-in per imsgbuf).
 */
#ifndef FACTORY_IMSG_H
#define FACTORY_IMSG_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#define IBUF_READ_SIZE		65535
#define IMSG_HEADER_SIZE	sizeof(struct imsg_hdr)
#define MAX_IMSGSIZE		16384
#define IMSG_FD_MARK		0x80000000U

struct ibuf {
	TAILQ_ENTRY(ibuf)	 entry;
	unsigned char		*buf;
	size_t			 size;	/* allocated */
	size_t			 max;	/* growth limit, 0: fixed */
	size_t			 wpos;
	size_t			 rpos;
	int			 fd;
};

struct msgbuf;			/* opaque write queue */
struct imsgbuf_rbuf;		/* opaque read state */

struct imsgbuf {
	struct msgbuf		*w;
	struct imsgbuf_rbuf	*r;
	pid_t			 pid;
	uint32_t		 maxsize;
	int			 fd;
	int			 flags;
};

#define IMSGF_HASFD		0x01	/* fd passing allowed */
#define IMSGF_SAWFD		0x02	/* the peer sent descriptors */

struct imsg_hdr {
	uint32_t	 type;
	uint32_t	 len;
	uint32_t	 peerid;
	uint32_t	 pid;
};

struct imsg {
	struct imsg_hdr	 hdr;
	void		*data;
	struct ibuf	*buf;
};

struct iovec;

/* ibuf: growable byte buffers with a read cursor */
struct ibuf	*ibuf_open(size_t);
struct ibuf	*ibuf_dynamic(size_t, size_t);
int		 ibuf_add(struct ibuf *, const void *, size_t);
int		 ibuf_add_ibuf(struct ibuf *, const struct ibuf *);
int		 ibuf_add_zero(struct ibuf *, size_t);
int		 ibuf_add_n8(struct ibuf *, uint64_t);
int		 ibuf_add_n16(struct ibuf *, uint64_t);
int		 ibuf_add_n32(struct ibuf *, uint64_t);
int		 ibuf_add_n64(struct ibuf *, uint64_t);
int		 ibuf_add_strbuf(struct ibuf *, const char *, size_t);
void		*ibuf_reserve(struct ibuf *, size_t);
void		*ibuf_seek(struct ibuf *, size_t, size_t);
int		 ibuf_set(struct ibuf *, size_t, const void *, size_t);
void		*ibuf_data(const struct ibuf *);
size_t		 ibuf_size(const struct ibuf *);
size_t		 ibuf_left(const struct ibuf *);
int		 ibuf_truncate(struct ibuf *, size_t);
void		 ibuf_rewind(struct ibuf *);
void		 ibuf_from_buffer(struct ibuf *, void *, size_t);
void		 ibuf_from_ibuf(struct ibuf *, const struct ibuf *);
int		 ibuf_get(struct ibuf *, void *, size_t);
int		 ibuf_get_ibuf(struct ibuf *, size_t, struct ibuf *);
int		 ibuf_get_n8(struct ibuf *, uint8_t *);
int		 ibuf_get_n16(struct ibuf *, uint16_t *);
int		 ibuf_get_n32(struct ibuf *, uint32_t *);
int		 ibuf_get_n64(struct ibuf *, uint64_t *);
int		 ibuf_get_string(struct ibuf *, char *, size_t);	/* NUL-terminated in buffer */
int		 ibuf_get_strbuf(struct ibuf *, char *, size_t);	/* fixed-size field, must hold a NUL */
int		 ibuf_skip(struct ibuf *, size_t);
void		 ibuf_free(struct ibuf *);
int		 ibuf_fd_avail(struct ibuf *);
int		 ibuf_fd_get(struct ibuf *);
void		 ibuf_fd_set(struct ibuf *, int);

/* imsgbuf: a channel */
int		 imsgbuf_init(struct imsgbuf *, int);
void		 imsgbuf_allow_fdpass(struct imsgbuf *);
int		 imsgbuf_set_maxsize(struct imsgbuf *, uint32_t);
int		 imsgbuf_read(struct imsgbuf *);	/* 1 read, 0 EOF, -1 error */
int		 imsgbuf_write(struct imsgbuf *);	/* 0 ok (or EAGAIN), -1 error */
int		 imsgbuf_flush(struct imsgbuf *);	/* blocking write of all */
void		 imsgbuf_clear(struct imsgbuf *);
uint32_t	 imsgbuf_queuelen(struct imsgbuf *);
int		 imsgbuf_get(struct imsgbuf *, struct imsg *);	/* 1 got, 0 none, -1 bad */

/* imsg: one message */
int		 imsg_get_ibuf(struct imsg *, struct ibuf *);
int		 imsg_get_data(struct imsg *, void *, size_t);	/* exact size only */
int		 imsg_get_strbuf(struct imsg *, char *, size_t);	/* whole payload, NUL-terminated */
int		 imsg_get_fd(struct imsg *);
uint32_t	 imsg_get_id(struct imsg *);
size_t		 imsg_get_len(struct imsg *);
pid_t		 imsg_get_pid(struct imsg *);
uint32_t	 imsg_get_type(struct imsg *);

int		 imsg_compose(struct imsgbuf *, uint32_t, uint32_t, pid_t, int,
		    const void *, size_t);
int		 imsg_composev(struct imsgbuf *, uint32_t, uint32_t, pid_t, int,
		    const struct iovec *, int);
int		 imsg_compose_ibuf(struct imsgbuf *, uint32_t, uint32_t, pid_t,
		    struct ibuf *);
struct ibuf	*imsg_create(struct imsgbuf *, uint32_t, uint32_t, pid_t, size_t);
int		 imsg_add(struct ibuf *, const void *, size_t);
void		 imsg_close(struct imsgbuf *, struct ibuf *);
int		 imsg_forward(struct imsgbuf *, struct imsg *);
void		 imsg_free(struct imsg *);

#endif /* FACTORY_IMSG_H */
