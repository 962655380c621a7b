/*
 * imsg channels on libevent.
 */
#include <errno.h>
#include <stdlib.h>
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

/*
 * JSON payloads: one NUL-terminated JSON object per message.  The
 * object is stolen.  Used where a message carries many or variable
 * fields (paths, lists); fixed-size ones use plain structs.
 */
int
imsgev_compose_json(struct imsgev *iev, uint32_t type, int fd, json_t *o)
{
	char	*s;
	int	 ret;

	if ((s = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		return (-1);
	}
	json_decref(o);
	ret = imsgev_compose(iev, type, 0, 0, fd, s, strlen(s) + 1);
	free(s);
	return (ret);
}

/* The payload as a JSON object, or NULL if it is anything else. */
json_t *
imsg_get_json(struct imsg *imsg)
{
	json_t		*o;
	json_error_t	 jerr;
	size_t		 len = imsg_get_len(imsg);
	char		*buf;

	if (len == 0 || (buf = malloc(len)) == NULL)
		return (NULL);
	if (imsg_get_strbuf(imsg, buf, len) == -1) {
		free(buf);
		return (NULL);
	}
	o = json_loads(buf, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (o != NULL && !json_is_object(o)) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

/* A string member, or "" (never NULL) so callers can test its length. */
const char *
json_str(json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return (s != NULL ? s : "");
}
