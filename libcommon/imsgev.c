/*
 * imsg channels on libevent.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "imsgev.h"
#include "log.h"

int
imsgev_init(struct imsgev *iev, int fd, void (*handler)(int, short, void *),
    void *data, uint32_t maxsize)
{
	memset(iev, 0, sizeof(*iev));
	if (imsgbuf_init(&iev->ibuf, fd) == -1)
		return (-1);
	if (maxsize != 0 && imsgbuf_set_maxsize(&iev->ibuf, maxsize) == -1) {
		imsgbuf_clear(&iev->ibuf);
		return (-1);
	}
	iev->handler = handler;
	iev->data = data;
	iev->events = EV_READ;
	event_set(&iev->ev, fd, iev->events, handler, data);
	event_add(&iev->ev, NULL);
	return (0);
}

void
imsgev_add(struct imsgev *iev)
{
	iev->events = EV_READ;
	if (imsgbuf_queuelen(&iev->ibuf) > 0)
		iev->events |= EV_WRITE;
	event_del(&iev->ev);
	event_set(&iev->ev, iev->ibuf.fd, iev->events, iev->handler,
	    iev->data);
	event_add(&iev->ev, NULL);
}

void
imsgev_clear(struct imsgev *iev)
{
	if (iev->ibuf.fd == -1)
		return;
	event_del(&iev->ev);
	close(iev->ibuf.fd);
	imsgbuf_clear(&iev->ibuf);
	iev->ibuf.fd = -1;
}

int
imsgev_compose(struct imsgev *iev, uint32_t type, uint32_t peerid, pid_t pid,
    int fd, const void *data, size_t len)
{
	int	 ret;

	if ((ret = imsg_compose(&iev->ibuf, type, peerid, pid, fd, data,
	    len)) != -1)
		imsgev_add(iev);
	return (ret);
}

int
imsgev_compose_str(struct imsgev *iev, uint32_t type, uint32_t peerid,
    const char *s)
{
	return (imsgev_compose(iev, type, peerid, 0, -1, s, strlen(s) + 1));
}

int
imsgev_io(struct imsgev *iev, short event)
{
	if (event & EV_READ) {
		switch (imsgbuf_read(&iev->ibuf)) {
		case -1:
			log_warn("imsgbuf_read");
			return (0);
		case 0:
			return (0);	/* EOF */
		}
	}
	if (event & EV_WRITE) {
		if (imsgbuf_write(&iev->ibuf) == -1) {
			if (errno != EPIPE)
				log_warn("imsgbuf_write");
			return (0);
		}
	}
	imsgev_add(iev);
	return (1);
}
