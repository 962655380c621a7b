/*
 * factory-fleet: the host's one link to the fleet's PostgreSQL.
 *
 * The parent says HELLO (the database, this host, its slots and the
 * repositories it serves); we connect, apply the schema's migrations
 * under its lock row, register the host at a new epoch and answer
 * READY.  Then each request (a tenant, a submission, a claim, a lease
 * renewed, an outcome, a cancel, a heartbeat) is one statement, and
 * gets one answer with the request's id.  Root never speaks SQL; this
 * process holds no key, writes no file and runs no program.
 *
 * Started only by factoryd, with its channel on fd 3.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "factory.h"
#include "fleet.h"
#include "imsgev.h"
#include "log.h"

static struct fleet_hello	 hello;
static int			 said_hello;
static int			 ready;

static int	fleet_imsg(struct imsg *);

int
main(int argc, char *argv[])
{
	int	 fd;

	/* Policy first (procs.c): unveil, pledge; before any byte is read. */
	fd = proc_child_init(PROC_FLEET, argc, argv);
	child_start(fleet_channel(), fd, fleet_imsg);
	event_dispatch();
	return (0);
}

static void
fleet_registered(uint64_t epoch, int state)
{
	struct fleet_ready	 r;

	memset(&r, 0, sizeof(r));
	r.epoch = epoch;
	r.schema = schema_version();
	r.state = state;
	ready = 1;
	fleet_send(IMSG_FLEET_READY, 0, fleet_ready_compose(&r));
}

static void
fleet_migrated(uint32_t version)
{
	sql_hello(&hello, fleet_registered);
}

/* The link is up: the first time (or until READY), start over. */
static void
fleet_up(void)
{
	if (!ready)
		schema_apply(fleet_migrated);
}

static int
fleet_imsg(struct imsg *imsg)
{
	struct fleet_tenant	 t;
	struct fleet_submit	*s;
	struct fleet_write	 w;
	struct fleet_setstate	 st;
	struct fleet_cancel	 k;
	struct fleet_scope	 sc;
	struct fleet_serves	 v;
	uint32_t		 type = imsg_get_type(imsg);
	uint32_t		 reqid = imsg_get_id(imsg);
	char			 err[256];

	if (type == IMSG_FLEET_HELLO) {
		if (said_hello)
			fatalx("a second FLEET_HELLO");
		if (fleet_hello_decode(imsg, &hello, err, sizeof(err)) == -1)
			fatalx("%s", err);
		said_hello = 1;
		db_start(hello.conninfo, hello.deadline_ms, fleet_up);
		/* The conninfo may hold a password: not kept in the clear. */
		explicit_bzero(hello.conninfo, sizeof(hello.conninfo));
		return (0);
	}
	if (type <= IMSG_FLEET_BASE || type >= IMSG_FLEET_READY)
		return (-1);
	if (!ready)
		fatalx("request %u before READY", type);
	switch (type) {
	case IMSG_FLEET_TENANT:
		if (fleet_tenant_decode(imsg, &t, err, sizeof(err)) == -1)
			fatalx("%s", err);
		sql_tenant(reqid, &t);
		break;
	case IMSG_FLEET_SUBMIT:
		if ((s = malloc(sizeof(*s))) == NULL)
			fatal(NULL);
		if (fleet_submit_decode(imsg, s, err, sizeof(err)) == -1)
			fatalx("%s", err);
		sql_submit(reqid, s);
		break;
	case IMSG_FLEET_CLAIM:
		if (fleet_empty_decode(imsg, "FLEET_CLAIM", err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		sql_claim(reqid);
		break;
	case IMSG_FLEET_HEARTBEAT:
		if (fleet_empty_decode(imsg, "FLEET_HEARTBEAT", err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		sql_heartbeat(reqid);
		break;
	case IMSG_FLEET_SETSTATE:
		if (fleet_setstate_decode(imsg, &st, err, sizeof(err)) == -1)
			fatalx("%s", err);
		sql_setstate(reqid, &st);
		break;
	case IMSG_FLEET_QUEUE:
	case IMSG_FLEET_TENANTS:
	case IMSG_FLEET_USAGE:
		if (fleet_scope_decode(imsg, type == IMSG_FLEET_QUEUE ?
		    "FLEET_QUEUE" : type == IMSG_FLEET_TENANTS ?
		    "FLEET_TENANTS" : "FLEET_USAGE", &sc, err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		if (type == IMSG_FLEET_QUEUE)
			sql_queue(reqid, &sc);
		else if (type == IMSG_FLEET_TENANTS)
			sql_tenants(reqid, &sc);
		else
			sql_usage(reqid, &sc);
		break;
	case IMSG_FLEET_RESCUE:
		if (fleet_empty_decode(imsg, "FLEET_RESCUE", err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		sql_rescue(reqid);
		break;
	case IMSG_FLEET_ADOPT:
		if (fleet_empty_decode(imsg, "FLEET_ADOPT", err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		sql_adopt(reqid);
		break;
	case IMSG_FLEET_GAUGES:
		if (fleet_empty_decode(imsg, "FLEET_GAUGES", err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		sql_gauges(reqid);
		break;
	case IMSG_FLEET_HOSTS:
		if (fleet_empty_decode(imsg, "FLEET_HOSTS", err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		sql_hosts(reqid);
		break;
	case IMSG_FLEET_CANCEL:
		if (fleet_cancel_decode(imsg, &k, err, sizeof(err)) == -1)
			fatalx("%s", err);
		sql_cancel(reqid, &k);
		break;
	case IMSG_FLEET_SERVES:
		if (fleet_serves_decode(imsg, &v, err, sizeof(err)) == -1)
			fatalx("%s", err);
		sql_serves(reqid, &v);
		break;
	case IMSG_FLEET_RENEW:
	case IMSG_FLEET_OUTCOME:
		if (fleet_write_decode(imsg, &w, err, sizeof(err)) == -1)
			fatalx("%s", err);
		if (type == IMSG_FLEET_OUTCOME &&
		    !fleet_transition_ok(w.from, w.to))
			fatalx("FLEET_OUTCOME %s: %s -> %s is no outcome",
			    w.id, fleet_state_name(w.from),
			    fleet_state_name(w.to));
		sql_write(type, reqid, &w);
		fleet_write_free(&w);
		break;
	default:
		return (-1);
	}
	return (0);
}
