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

/*
 * The policy.  Not in libcommon/procs.c's table yet: the parent does
 * not start this child until the fleet is wired into it, and the table
 * is what the parent starts.
 */
static const struct factory_proc fleet_proc = {
	PROC_MAX, "fleet", "factory-fleet",
	/*
	 * stdio: imsg and libpq's socket.  unix: the database's local
	 * socket.  inet dns: a database over TCP.  getpw: libpq looks
	 * up the user it runs as for the default role.  No rpath: no
	 * file but those below, read-only; no exec, no writing.
	 */
	"stdio unix inet dns getpw",
	"the only process with libpq: claims, leases and outcomes in the "
	"fleet's database, each write fenced by the epochs",
	{
		{ "/etc/passwd", "?r" },	/* getpw */
		{ "/etc/group", "?r" },
		{ "/etc/nsswitch.conf", "?r" },
		{ "/etc/resolv.conf", "?r" },	/* dns */
		{ "/etc/hosts", "?r" },
		{ "/etc/host.conf", "?r" },
		{ "/etc/gai.conf", "?r" },
		{ "/etc/ssl", "?r" },		/* sslmode */
		{ NULL, NULL }
	}
};

static struct fleet_hello	 hello;
static int			 said_hello;
static int			 ready;

static int	fleet_imsg(struct imsg *);

/*
 * As every child checks (proc_child_init): the channel on fd 3 is a
 * stream socket whose peer is our parent, running as root.
 */
static void
fleet_check_parent(void)
{
	struct stat	 sb;
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);
	int		 type;
	socklen_t	 tlen = sizeof(type);

	if (fstat(PROC_PARENT_FD, &sb) == -1 || !S_ISSOCK(sb.st_mode))
		fatalx("no socket on fd %d: not started by factoryd",
		    PROC_PARENT_FD);
	if (getsockopt(PROC_PARENT_FD, SOL_SOCKET, SO_TYPE, &type,
	    &tlen) == -1 || type != SOCK_STREAM)
		fatalx("fd %d is not a stream socket", PROC_PARENT_FD);
	if (getsockopt(PROC_PARENT_FD, SOL_SOCKET, SO_PEERCRED, &cred,
	    &len) == -1)
		fatal("SO_PEERCRED");
	if (cred.pid != getppid() || cred.uid != 0)
		fatalx("fd %d peer is pid %d uid %u, not the root parent",
		    PROC_PARENT_FD, (int)cred.pid, (unsigned)cred.uid);
}

int
main(int argc, char *argv[])
{
	int	 ch, debug = 0, verbose = 0;

	log_init(1, LOG_DAEMON);
	while ((ch = getopt(argc, argv, "dv")) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			fatalx("usage: factory-fleet [-dv]");
		}
	}
	if (optind != argc)
		fatalx("usage: factory-fleet [-dv]");
	fleet_check_parent();
	log_init(debug, LOG_DAEMON);
	log_setverbose(verbose);
	log_procinit(fleet_proc.name);
	closefrom(PROC_PARENT_FD + 1);
	setproctitle("%s", fleet_proc.name);
	/* Policy first: unveil, pledge; before any byte is read. */
	proc_apply_policy(&fleet_proc, NULL, 0);

	child_start(fleet_channel(), PROC_PARENT_FD, fleet_imsg);
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
	case IMSG_FLEET_RENEW:
	case IMSG_FLEET_OUTCOME:
	case IMSG_FLEET_CANCEL:
		if (fleet_write_decode(imsg, &w, err, sizeof(err)) == -1)
			fatalx("%s", err);
		if (type == IMSG_FLEET_OUTCOME &&
		    !fleet_transition_ok(w.from, w.to))
			fatalx("FLEET_OUTCOME %s: %s -> %s is no outcome",
			    w.id, fleet_state_name(w.from),
			    fleet_state_name(w.to));
		sql_write(type, reqid, &w);
		break;
	default:
		return (-1);
	}
	return (0);
}
