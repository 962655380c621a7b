/*
 * The one way an answer reaches a control client, from whichever part
 * of the parent has it: control.c reads requests and hands them down;
 * the answer comes back here, by connection or by the id of a wait
 * (vmd's compose to PROC_CONTROL by peer id), never by calling up into
 * control.c.  The table of waits lives here too: a request answered
 * later (a submission waits for the worker, a reconcile for the
 * reconciler) is a row keyed by its connection; the module that
 * answers keeps only the row's id.
 */
#include <sys/types.h>

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "factoryd.h"
#include "log.h"

struct ctl_wait {
	TAILQ_ENTRY(ctl_wait)	 entry;
	struct ctl_conn		*conn;
	uint32_t		 id;
	enum ctl_wait_kind	 kind;
	void			*arg;
	void			(*drop)(void *);
	time_t			 since;
};

static TAILQ_HEAD(, ctl_wait)	 waits = TAILQ_HEAD_INITIALIZER(waits);
static uint32_t			 wait_next = 1;
static int			 wait_wrapped;
/* control.c's reader of a connection, set once by reply_init(). */
static void			(*conn_dispatch)(int, short, void *);

static struct ctl_conn	*reply_wait_remove(struct ctl_wait *, void **);

/* What a connection that closes leaves behind, per kind of wait. */
static const char *const wait_gone[CTL_WAIT_MAX] = {
	"its submission (not journaled yet: no attempt) is dropped",
	"its reconcile goes on, unanswered",
	"its diff is dropped when it comes",
	"its submission goes on in the fleet's queue, unanswered",
};
/* Who answers each kind. */
static const char *const wait_whom[CTL_WAIT_MAX] = {
	"the worker", "the reconciler", "the worker", "factory-fleet",
};

void
reply_init(void (*dispatch)(int, short, void *))
{
	conn_dispatch = dispatch;
}

/* A connection closes: its rows go at once, each said in the log. */
void
reply_wait_drop(struct ctl_conn *c)
{
	struct ctl_wait	*w, *tw;

	TAILQ_FOREACH_SAFE(w, &waits, entry, tw) {
		if (w->conn != c)
			continue;
		log_info("control: uid %u left: %s", (unsigned)c->uid,
		    wait_gone[w->kind]);
		TAILQ_REMOVE(&waits, w, entry);
		if (w->drop != NULL)
			w->drop(w->arg);
		free(w);
	}
}

/* Another control-idle-timeout from now. */
void
reply_touch(struct ctl_conn *c)
{
	struct timeval	 tv;

	tv.tv_sec = env->conf->control_idle;
	tv.tv_usec = 0;
	evtimer_add(&c->idle, &tv);
}

/*
 * A connection that waits is not idle: we owe it.  The child that
 * answers is watched (heartbeats, lease-ttl), so a wait older than
 * lease-ttl and the idle timeout together means an answer that will
 * not come: the client hears so, and what it waited for is dropped.
 * 1 if c still waits within bounds.
 */
int
reply_wait_bounded(struct ctl_conn *c)
{
	struct ctl_wait	*w, *tw;
	enum ctl_wait_kind kind;
	time_t		 now = time(NULL);
	int		 bound, waiting = 0;

	bound = env->conf->lease_ttl + env->conf->control_idle;
	TAILQ_FOREACH_SAFE(w, &waits, entry, tw) {
		if (w->conn != c)
			continue;
		if (now - w->since < bound) {
			waiting = 1;
			continue;
		}
		kind = w->kind;
		log_warnx("control: uid %u: no answer from %s within %ds: "
		    "%s", (unsigned)c->uid, wait_whom[kind], bound,
		    wait_gone[kind]);
		if (w->drop != NULL)
			w->drop(w->arg);
		reply_wait_remove(w, NULL);
		reply_fail(c, "no answer from %s within %ds, try again",
		    wait_whom[kind], bound);
	}
	return (waiting);
}

/*
 * Busy: an answer is still queued, or one is owed.  A busy connection
 * is not read: the next request waits in the socket, where it costs
 * the sender's buffer, not ours.
 */
int
reply_busy(struct ctl_conn *c)
{
	return (c->awaiting || imsgbuf_queuelen(&c->iev.ibuf) > 0);
}

/* Read when idle, write when something is queued, never both blind. */
void
reply_events(struct ctl_conn *c)
{
	short	 ev = 0;

	if (!reply_busy(c))
		ev |= EV_READ;
	else if (!c->halfclosed)
		ev |= EV_CLOSED;	/* a client that leaves while it waits */
	if (imsgbuf_queuelen(&c->iev.ibuf) > 0)
		ev |= EV_WRITE;
	/*
	 * The answer's deadline runs from when it is queued, whatever
	 * the client takes of it meanwhile; idle time from when it is
	 * all taken.
	 */
	if ((ev & EV_WRITE) && !c->sending) {
		c->sending = 1;
		reply_touch(c);
	} else if (!(ev & EV_WRITE) && c->sending) {
		c->sending = 0;
		reply_touch(c);
	}
	event_del(&c->iev.ev);
	c->iev.events = ev;
	event_set(&c->iev.ev, c->iev.ibuf.fd, ev, conn_dispatch, c);
	if (ev != 0)
		event_add(&c->iev.ev, NULL);
}

struct ctl_conn *
reply_conn(uint32_t id)
{
	struct ctl_conn	*c;

	TAILQ_FOREACH(c, &env->ctl_conns, entry)
		if (c->id == id)
			return (c);
	return (NULL);
}

/*
 * A row for a request answered later.  Ids are never 0 and never two
 * alive at once, also after the counter wraps.
 */
uint32_t
reply_wait(struct ctl_conn *c, enum ctl_wait_kind kind, void *arg,
    void (*drop)(void *))
{
	struct ctl_wait	*w, *o;
	uint32_t	 id;

	do {
		if ((id = wait_next++) == 0) {
			wait_wrapped = 1;
			id = wait_next++;
		}
		TAILQ_FOREACH(o, &waits, entry)
			if (o->id == id)
				break;
	} while (o != NULL);
	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal(NULL);
	w->conn = c;
	w->id = id;
	w->kind = kind;
	w->arg = arg;
	w->drop = drop;
	w->since = time(NULL);
	TAILQ_INSERT_TAIL(&waits, w, entry);
	c->nwaits++;
	c->awaiting = 1;
	return (id);
}

static struct ctl_conn *
reply_wait_remove(struct ctl_wait *w, void **argp)
{
	struct ctl_conn	*c = w->conn;

	TAILQ_REMOVE(&waits, w, entry);
	c->nwaits--;
	if (argp != NULL)
		*argp = w->arg;
	free(w);
	return (c);
}

struct ctl_conn *
reply_wait_take(uint32_t id, enum ctl_wait_kind kind, void **argp)
{
	struct ctl_wait	*w;

	TAILQ_FOREACH(w, &waits, entry)
		if (w->id == id && w->kind == kind)
			return (reply_wait_remove(w, argp));
	return (NULL);
}

void
reply_wait_fail(enum ctl_wait_kind kind, const char *why)
{
	struct ctl_wait	*w, *tw;
	struct ctl_conn	*c;
	void		*arg;

	TAILQ_FOREACH_SAFE(w, &waits, entry, tw) {
		if (w->kind != kind)
			continue;
		if (w->drop != NULL)
			w->drop(w->arg);
		c = reply_wait_remove(w, &arg);
		reply_fail(c, "%s", why);
	}
}

/* The waits of a kind; CTL_WAIT_MAX: of every kind. */
size_t
reply_wait_count(enum ctl_wait_kind kind)
{
	struct ctl_wait	*w;
	size_t		 n = 0;

	TAILQ_FOREACH(w, &waits, entry)
		if (kind == CTL_WAIT_MAX || w->kind == kind)
			n++;
	return (n);
}

int
reply_wait_issued(uint32_t id)
{
	return (id != 0 && (wait_wrapped || id < wait_next));
}

/*
 * A JSON document goes out in pieces that fit an imsg, then END.
 */
void
reply_json(struct ctl_conn *c, const char *json)
{
	size_t	 len = strlen(json), chunk = FACTORY_MAXIMSG - 64, off;

	for (off = 0; off < len; off += chunk)
		imsgev_compose(&c->iev, IMSG_CTL_DATA, 0, 0, -1, json + off,
		    len - off < chunk ? len - off : chunk);
	imsgev_compose(&c->iev, IMSG_CTL_END, 0, 0, -1, NULL, 0);
	c->awaiting = 0;
	reply_events(c);
}

/*
 * An answer that cannot be made (a json_pack of a string that is not
 * UTF-8 gives NULL) is refused, said, and the daemon goes on serving.
 */
void
reply_obj(struct ctl_conn *c, json_t *obj)
{
	char	*s;

	if (obj == NULL || (s = json_dumps(obj, JSON_COMPACT)) == NULL) {
		log_warnx("control: uid %u: an answer could not be encoded "
		    "as JSON", (unsigned)c->uid);
		reply_fail(c, "the answer could not be encoded as JSON "
		    "(see factoryd's log)");
		json_decref(obj);
		return;
	}
	reply_json(c, s);
	free(s);
	json_decref(obj);
}

void
reply_fail(struct ctl_conn *c, const char *fmt, ...)
{
	va_list	 ap;
	char	 buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	imsgev_compose_str(&c->iev, IMSG_CTL_FAIL, 0, buf);
	c->awaiting = 0;
	reply_events(c);
}

/*
 * Requests naming an attempt carry its id as a NUL-terminated string:
 * the attempt, or NULL with the client told why.
 */
struct attempt *
reply_attempt(struct ctl_conn *c, struct imsg *imsg)
{
	struct attempt	*a;
	char		 id[ATTEMPT_ID_MAX];

	if (imsg_get_strbuf(imsg, id, sizeof(id)) == -1) {
		reply_fail(c, "bad attempt id");
		return (NULL);
	}
	if ((a = attempt_find(id)) == NULL)
		reply_fail(c, "%s: no such attempt", id);
	return (a);
}
