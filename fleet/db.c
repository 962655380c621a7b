/*
 * The connection to PostgreSQL, asynchronous on the child's libevent
 * loop: PQconnectStart/PQconnectPoll, then one query at a time with
 * PQsendQueryParams (PQsendQuery for the migrations' several
 * statements), input taken with PQconsumeInput when the socket is
 * readable.  Every query runs against a deadline; a query past it, or
 * a lost link, fails every query queued (the parent hears "error":
 * the outcome is unknown, a claim then times out in the database), the
 * connection is dropped and made again after a backoff.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/time.h>

#include <errno.h>
#include <event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "log.h"

#define DB_BACKOFF_MIN_MS	100
#define DB_BACKOFF_MAX_MS	5000
#define DB_MAXPREPARED		16

enum db_state { DB_DOWN, DB_CONNECTING, DB_UP };

static struct {
	enum db_state	 state;
	PGconn		*conn;
	char		*conninfo;
	uint32_t	 deadline_ms;
	uint32_t	 backoff_ms;
	void		(*up)(void);
	struct event	 ev;		/* the socket */
	int		 ev_set;
	struct event	 timer;		/* the deadline, or the backoff */
	struct fq	*busy;		/* in flight */
	int		 preparing;	/* busy's statement, before it */
	const char	*prepared[DB_MAXPREPARED];	/* on this link */
	int		 nprepared;
	PGresult	*res;		/* its result so far */
	char		 err[FLEET_TEXT_MAX];
	TAILQ_HEAD(, fq) queue;
} db = { .queue = TAILQ_HEAD_INITIALIZER(db.queue) };

static void	db_connect(void);
static void	db_io(int, short, void *);
static void	db_timeout(int, short, void *);
static void	db_next(void);

static void
db_timer(uint32_t ms)
{
	struct timeval	 tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_del(&db.timer);
	evtimer_add(&db.timer, &tv);
}

/* Watch the socket for what is asked (EV_READ, EV_WRITE). */
static void
db_watch(short what)
{
	if (db.ev_set)
		event_del(&db.ev);
	db.ev_set = 0;
	if (db.conn == NULL || PQsocket(db.conn) == -1)
		return;
	event_set(&db.ev, PQsocket(db.conn), what, db_io, NULL);
	event_add(&db.ev, NULL);
	db.ev_set = 1;
}

void
db_text(char *dst, size_t size, const char *src)
{
	size_t	 i, n = 0;

	if (size > FLEET_TEXT_MAX)
		size = FLEET_TEXT_MAX;
	for (i = 0; src != NULL && src[i] != '\0' && n + 1 < size; i++) {
		if (src[i] == '\n' && src[i + 1] == '\0')
			break;
		dst[n++] = (src[i] >= 0x20 && src[i] <= 0x7e) ? src[i] : '?';
	}
	dst[n] = '\0';
}

const char *
db_sqlstate(PGresult *res)
{
	const char	*s;

	if (res == NULL ||
	    (s = PQresultErrorField(res, PG_DIAG_SQLSTATE)) == NULL ||
	    strlen(s) != 5)
		return ("");
	return (s);
}

int
db_up(void)
{
	return (db.state == DB_UP);
}

struct fq *
fq_new(uint32_t reqid, const char *sql, fq_done done)
{
	struct fq	*q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		fatal(NULL);
	q->reqid = reqid;
	q->sql = sql;
	q->done = done;
	return (q);
}

int
fq_param(struct fq *q, const char *fmt, ...)
{
	va_list	 ap;
	int	 rc;

	if (q->nparams >= FQ_MAXPARAMS)
		fatalx("fq_param: too many parameters");
	va_start(ap, fmt);
	rc = vasprintf(&q->params[q->nparams], fmt, ap);
	va_end(ap);
	if (rc == -1)
		fatal(NULL);
	q->nparams++;
	return (0);
}

void
fq_free(struct fq *q)
{
	int	 i;

	for (i = 0; i < q->nparams; i++)
		free(q->params[i]);
	free(q);
}

/* Answer q (its done frees what it holds), then q itself goes. */
static void
fq_finish(struct fq *q, PGresult *res, const char *err)
{
	q->done(q, res, err);
	fq_free(q);
}

/* The link is gone: every query fails, a new one comes after a wait. */
static void
db_lost(const char *why)
{
	struct fq	*q;
	char		 text[FLEET_TEXT_MAX];

	db_text(text, sizeof(text), why);
	if (db.state != DB_DOWN)
		log_warnx("database: %s", text);
	if (db.ev_set)
		event_del(&db.ev);
	db.ev_set = 0;
	if (db.res != NULL)
		PQclear(db.res);
	db.res = NULL;
	if (db.conn != NULL)
		PQfinish(db.conn);
	db.conn = NULL;
	db.state = DB_DOWN;
	db.preparing = 0;
	db.nprepared = 0;
	if ((q = db.busy) != NULL) {
		db.busy = NULL;
		fq_finish(q, NULL, text);
	}
	while ((q = TAILQ_FIRST(&db.queue)) != NULL) {
		TAILQ_REMOVE(&db.queue, q, entry);
		fq_finish(q, NULL, text);
	}
	db_timer(db.backoff_ms);
	db.backoff_ms = db.backoff_ms * 2 > DB_BACKOFF_MAX_MS ?
	    DB_BACKOFF_MAX_MS : db.backoff_ms * 2;
}

void
db_start(const char *conninfo, uint32_t deadline_ms, void (*up)(void))
{
	if ((db.conninfo = strdup(conninfo)) == NULL)
		fatal(NULL);
	db.deadline_ms = deadline_ms;
	db.backoff_ms = DB_BACKOFF_MIN_MS;
	db.up = up;
	evtimer_set(&db.timer, db_timeout, NULL);
	db_connect();
}

/*
 * The server's notices are its bytes: logged escaped, at debug level,
 * never written raw to stderr as libpq's own processor does.
 */
static void
db_notice(void *arg, const char *msg)
{
	char	 text[FLEET_TEXT_MAX];

	db_text(text, sizeof(text), msg);
	log_debug("database: %s", text);
}

static void
db_connect(void)
{
	db.state = DB_CONNECTING;
	if ((db.conn = PQconnectStart(db.conninfo)) == NULL)
		fatal("PQconnectStart");
	PQsetNoticeProcessor(db.conn, db_notice, NULL);
	if (PQstatus(db.conn) == CONNECTION_BAD) {
		db_lost(PQerrorMessage(db.conn));
		return;
	}
	db_timer(db.deadline_ms);
	db_watch(EV_WRITE);
}

static void
db_connecting(void)
{
	switch (PQconnectPoll(db.conn)) {
	case PGRES_POLLING_READING:
		db_watch(EV_READ);
		return;
	case PGRES_POLLING_WRITING:
		db_watch(EV_WRITE);
		return;
	case PGRES_POLLING_OK:
		break;
	default:
		db_lost(PQerrorMessage(db.conn));
		return;
	}
	evtimer_del(&db.timer);
	if (PQsetnonblocking(db.conn, 1) == -1) {
		db_lost("cannot make the connection non-blocking");
		return;
	}
	db.state = DB_UP;
	db.backoff_ms = DB_BACKOFF_MIN_MS;
	log_info("database: connected");
	db_watch(EV_READ);
	db.up();
	db_next();
}

/* Push what libpq holds; watch for writing while it holds some. */
static int
db_flush(void)
{
	switch (PQflush(db.conn)) {
	case 0:
		db_watch(EV_READ);
		return (0);
	case 1:
		db_watch(EV_READ | EV_WRITE);
		return (0);
	}
	db_lost(PQerrorMessage(db.conn));
	return (-1);
}

static int
db_isprepared(const char *name)
{
	int	 i;

	for (i = 0; i < db.nprepared; i++)
		if (strcmp(db.prepared[i], name) == 0)
			return (1);
	return (0);
}

static void
db_next(void)
{
	struct fq	*q;
	int		 ok;

	if (db.state != DB_UP || db.busy != NULL ||
	    (q = TAILQ_FIRST(&db.queue)) == NULL)
		return;
	TAILQ_REMOVE(&db.queue, q, entry);
	db.busy = q;
	db.err[0] = '\0';
	if (q->name != NULL && !db_isprepared(q->name)) {
		/* Planned once a link: the claim's plan costs more than it. */
		db.preparing = 1;
		ok = PQsendPrepare(db.conn, q->name, q->sql, q->nparams, NULL);
	} else if (q->name != NULL)
		ok = PQsendQueryPrepared(db.conn, q->name, q->nparams,
		    (const char *const *)q->params, NULL, NULL, 0);
	else if (q->simple)
		ok = PQsendQuery(db.conn, q->sql);
	else
		ok = PQsendQueryParams(db.conn, q->sql, q->nparams, NULL,
		    (const char *const *)q->params, NULL, NULL, 0);
	if (!ok) {
		db_lost(PQerrorMessage(db.conn));
		return;
	}
	db_timer(db.deadline_ms);
	db_flush();
}

/*
 * Results of the query in flight: the last one counts, an error
 * anywhere wins.  Done when libpq has no more.
 */
static void
db_results(void)
{
	PGresult	*r;
	struct fq	*q;
	ExecStatusType	 st;

	while (db.busy != NULL && !PQisBusy(db.conn)) {
		if ((r = PQgetResult(db.conn)) != NULL) {
			st = PQresultStatus(r);
			if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
			    db.err[0] == '\0') {
				db_text(db.err, sizeof(db.err),
				    PQresultErrorMessage(r));
				if (db.err[0] == '\0')
					strlcpy(db.err, "query failed",
					    sizeof(db.err));
				if (db.res != NULL)
					PQclear(db.res);
				db.res = r;
			} else if (db.err[0] != '\0')
				PQclear(r);
			else {
				if (db.res != NULL)
					PQclear(db.res);
				db.res = r;
			}
			continue;
		}
		evtimer_del(&db.timer);
		q = db.busy;
		db.busy = NULL;
		r = db.res;
		db.res = NULL;
		if (db.preparing && db.err[0] == '\0') {
			/* Prepared: now the query itself, first in line. */
			db.preparing = 0;
			if (db.nprepared < DB_MAXPREPARED)
				db.prepared[db.nprepared++] = q->name;
			else
				q->name = NULL;
			if (r != NULL)
				PQclear(r);
			TAILQ_INSERT_HEAD(&db.queue, q, entry);
			db_next();
			continue;
		}
		db.preparing = 0;
		if (db.err[0] != '\0')
			q->done(q, r, db.err);
		else if (r == NULL)
			q->done(q, NULL, "no result");
		else
			q->done(q, r, NULL);
		fq_free(q);
		if (r != NULL)
			PQclear(r);
		db_next();
	}
}

static void
db_io(int fd, short what, void *arg)
{
	PGnotify	*n;

	db.ev_set = 0;
	if (db.state == DB_CONNECTING) {
		db_connecting();
		return;
	}
	if (db.state != DB_UP)
		return;
	if ((what & EV_WRITE) && db_flush() == -1)
		return;
	if (what & EV_READ) {
		if (!PQconsumeInput(db.conn)) {
			db_lost(PQerrorMessage(db.conn));
			return;
		}
		while ((n = PQnotifies(db.conn)) != NULL)
			PQfreemem(n);
		db_results();
		if (db.state != DB_UP)
			return;
	}
	if (!db.ev_set)
		db_flush();
}

static void
db_timeout(int fd, short what, void *arg)
{
	char	 why[FLEET_TEXT_MAX];

	switch (db.state) {
	case DB_DOWN:
		db_connect();
		return;
	case DB_CONNECTING:
		snprintf(why, sizeof(why), "no connection within %u ms",
		    db.deadline_ms);
		break;
	case DB_UP:
		snprintf(why, sizeof(why), "no answer within %u ms",
		    db.deadline_ms);
		break;
	}
	db_lost(why);
}

void
db_query(struct fq *q)
{
	if (db.state != DB_UP) {
		fq_finish(q, NULL, "the database is not connected");
		return;
	}
	TAILQ_INSERT_TAIL(&db.queue, q, entry);
	db_next();
}

int
res_num(PGresult *res, int row, int col, int64_t min, int64_t max,
    int64_t *v)
{
	const char	*s;
	char		*end;
	long long	 n;

	if (PQgetisnull(res, row, col) ||
	    (s = PQgetvalue(res, row, col)) == NULL || s[0] == '\0' ||
	    strlen(s) > 20) {
		log_warnx("database: column %d is not a number", col);
		return (-1);
	}
	errno = 0;
	n = strtoll(s, &end, 10);
	if (*end != '\0' || errno != 0 || n < min || n > max) {
		log_warnx("database: column %d out of range", col);
		return (-1);
	}
	*v = n;
	return (0);
}

int
res_str(PGresult *res, int row, int col, char *buf, size_t size,
    int (*valid)(const char *))
{
	const char	*s;

	if (PQgetisnull(res, row, col) ||
	    (s = PQgetvalue(res, row, col)) == NULL ||
	    (size_t)PQgetlength(res, row, col) >= size ||
	    strlen(s) != (size_t)PQgetlength(res, row, col)) {
		log_warnx("database: column %d is not a string that fits",
		    col);
		return (-1);
	}
	memcpy(buf, s, strlen(s) + 1);
	if (valid != NULL && !valid(buf)) {
		log_warnx("database: column %d has a bad value", col);
		return (-1);
	}
	return (0);
}
