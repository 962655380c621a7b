/*
 * An imsgbuf driven by a libevent event, as every process uses it.
 */
#ifndef FACTORY_IMSGEV_H
#define FACTORY_IMSGEV_H

#include <event.h>
#include <jansson.h>

#include "imsg.h"

struct imsgev {
	struct imsgbuf	 ibuf;
	struct event	 ev;
	void		(*handler)(int, short, void *);
	void		*data;
	short		 events;
};

/* imsgev.c */
int	imsgev_init(struct imsgev *, int, void (*)(int, short, void *),
	    void *, uint32_t);
void	imsgev_add(struct imsgev *);
void	imsgev_clear(struct imsgev *);
int	imsgev_compose(struct imsgev *, uint32_t, uint32_t, pid_t, int,
	    const void *, size_t);
int	imsgev_compose_str(struct imsgev *, uint32_t, uint32_t,
	    const char *);
/*
 * The read/write half of an event handler: 1 if the caller should go
 * on reading messages, 0 on EOF or error (the caller closes).
 */
int	imsgev_io(struct imsgev *, short);
int	imsgev_compose_json(struct imsgev *, uint32_t, int, json_t *);
json_t	*imsg_get_json(struct imsg *);
const char *json_str(json_t *, const char *);

/* child.c */
void	child_start(struct imsgev *, int, int (*)(struct imsg *));

#endif /* FACTORY_IMSGEV_H */
