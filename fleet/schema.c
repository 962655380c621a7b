/*
 * The fleet's schema: versioned migrations, compiled in, applied at
 * start.  The lock is a row, not an advisory lock: fleet_schema holds
 * one row, its version, and a starting child takes it FOR UPDATE in
 * the transaction that applies what is missing, so two hosts starting
 * together apply each migration once.  A database newer than this
 * program is refused: an old child does not write into a shape it
 * does not know.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "log.h"

#define SCHEMA_BOOT_TRIES	20

/* Migration i + 1 brings the schema from version i to i + 1. */
static const char *const migrations[] = {
	/* 1: tenants, hosts, attempts, publications. */
	"CREATE TABLE fleet_tenants ("
	" name text PRIMARY KEY,"
	" weight integer NOT NULL CHECK (weight BETWEEN 1 AND 1000),"
	" max_running integer NOT NULL CHECK (max_running >= 0),"
	" max_queued integer NOT NULL CHECK (max_queued >= 0),"
	" paused boolean NOT NULL DEFAULT false,"
	/* The locked counter of the cap: claimed, running, publishing. */
	" running integer NOT NULL DEFAULT 0 CHECK (running >= 0),"
	/* Stride scheduling: + 1000000 / weight per claim. */
	" pass bigint NOT NULL DEFAULT 0,"
	" claims bigint NOT NULL DEFAULT 0);"
	"CREATE TABLE fleet_hosts ("
	" host text PRIMARY KEY,"
	" epoch bigint NOT NULL CHECK (epoch > 0),"
	" state text NOT NULL CHECK (state IN"
	"  ('active', 'cordoned', 'draining', 'gone')),"
	" slots integer NOT NULL CHECK (slots > 0),"
	" repos text[] NOT NULL,"
	" heartbeat timestamptz NOT NULL,"
	" lease_until timestamptz NOT NULL);"
	"CREATE SEQUENCE fleet_attempt_seq;"
	"CREATE TABLE fleet_attempts ("
	" id text PRIMARY KEY,"
	" seq bigint NOT NULL,"
	" tenant text NOT NULL REFERENCES fleet_tenants (name),"
	" class smallint NOT NULL CHECK (class BETWEEN 0 AND 2),"
	" repo text NOT NULL,"
	" digest text NOT NULL,"
	" manifest text NOT NULL,"
	" idem_key text,"
	" state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued',"
	"  'claimed', 'running', 'publishing', 'done', 'failed',"
	"  'cancelled', 'dead')),"
	" epoch bigint NOT NULL DEFAULT 0,"
	" owner_host text,"
	" owner_epoch bigint,"
	" claims integer NOT NULL DEFAULT 0,"
	" max_claims integer NOT NULL CHECK (max_claims > 0),"
	" cancel_requested boolean NOT NULL DEFAULT false,"
	" run_after timestamptz NOT NULL DEFAULT now(),"
	" lease_until timestamptz,"
	" reason text,"
	" created timestamptz NOT NULL DEFAULT now(),"
	" UNIQUE (tenant, idem_key));"
	"CREATE INDEX fleet_attempts_queued ON fleet_attempts"
	" (tenant, class, seq) WHERE state = 'queued';"
	"CREATE INDEX fleet_attempts_owned ON fleet_attempts (owner_host)"
	" WHERE state IN ('claimed', 'running', 'publishing');"
	"CREATE TABLE fleet_publications ("
	" attempt text PRIMARY KEY REFERENCES fleet_attempts (id),"
	" repo text NOT NULL,"
	" branch text NOT NULL UNIQUE,"
	" pinned_commit text CHECK (pinned_commit ~ '^[0-9a-f]{40}$'),"
	" pinned timestamptz);"
	/* A pinned commit never changes. */
	"CREATE FUNCTION fleet_pin_stays() RETURNS trigger"
	" LANGUAGE plpgsql AS $$ BEGIN"
	" IF OLD.pinned_commit IS NOT NULL AND"
	"  NEW.pinned_commit IS DISTINCT FROM OLD.pinned_commit THEN"
	"  RAISE EXCEPTION 'publication % is pinned', OLD.attempt;"
	" END IF; RETURN NEW; END $$;"
	"CREATE TRIGGER fleet_pin_stays BEFORE UPDATE ON fleet_publications"
	" FOR EACH ROW EXECUTE FUNCTION fleet_pin_stays();",
	/*
	 * 2: an operator's pause of a tenant, apart from the config's
	 * (which each host's start writes again), with a note; the end of
	 * a host's drain; what each attempt used, when it ended and where
	 * it ran (the usage accounting); the hosts that claimed it.
	 */
	"ALTER TABLE fleet_tenants ADD COLUMN held boolean NOT NULL"
	" DEFAULT false;"
	"ALTER TABLE fleet_tenants ADD COLUMN held_note text;"
	"ALTER TABLE fleet_hosts ADD COLUMN drain_until timestamptz;"
	"ALTER TABLE fleet_attempts ADD COLUMN ended timestamptz,"
	" ADD COLUMN ran_on text, ADD COLUMN cpu_ms bigint,"
	" ADD COLUMN mem_peak bigint, ADD COLUMN wall_ms bigint,"
	" ADD COLUMN tokens bigint, ADD COLUMN cost_uusd bigint,"
	" ADD COLUMN tried text[] NOT NULL DEFAULT '{}';"
	"CREATE INDEX fleet_attempts_ended ON fleet_attempts (ended)"
	" WHERE ended IS NOT NULL",
	/*
	 * 3: adoption, and the time of each claim.  An attempt lost
	 * while publishing is "adoptable" if its pin holds its publish
	 * request (base64 of the parent's MSG_PUBLISH, without the bundle
	 * and this host's forge settings), the host that pinned it and
	 * its forge's key; a live host that publishes to that forge
	 * finishes it from the forge's side.
	 */
	"ALTER TABLE fleet_attempts DROP CONSTRAINT fleet_attempts_state_check,"
	" ADD CONSTRAINT fleet_attempts_state_check CHECK (state IN"
	" ('queued', 'claimed', 'running', 'publishing', 'done', 'failed',"
	" 'cancelled', 'dead', 'adoptable'));"
	"ALTER TABLE fleet_publications ADD COLUMN request text,"
	" ADD COLUMN host text, ADD COLUMN forge text;"
	/* Where each host's repositories publish (fleetmsg.h's keys). */
	"ALTER TABLE fleet_hosts ADD COLUMN forges text[] NOT NULL"
	" DEFAULT '{}';"
	/* When it was last claimed: the fair order, as it happened. */
	"ALTER TABLE fleet_attempts ADD COLUMN claimed timestamptz;"
	"CREATE INDEX fleet_attempts_adoptable ON fleet_attempts (seq)"
	" WHERE state = 'adoptable'",
};
#define SCHEMA_VERSION	(sizeof(migrations) / sizeof(migrations[0]))

static void	(*schema_done)(uint32_t);
static uint32_t	 schema_at;
static char	*schema_sql;

static void	schema_locked(struct fq *, PGresult *, const char *);
static void	schema_applied(struct fq *, PGresult *, const char *);

uint32_t
schema_version(void)
{
	return (schema_at);
}

/* The lock row's table, made by whoever comes first. */
static void
schema_booted(struct fq *q, PGresult *res, const char *err)
{
	struct fq	*n;

	if (err != NULL && res == NULL)
		return;		/* the link: tried again when it is back */
	if (err != NULL) {
		/* Two first starts race on CREATE; the loser retries. */
		if (q->tries + 1 >= SCHEMA_BOOT_TRIES)
			fatalx("schema: %s", err);
		log_debug("schema: %s; again", err);
		n = fq_new(0, q->sql, schema_booted);
		n->simple = 1;
		n->tries = q->tries + 1;
		db_query(n);
		return;
	}
	n = fq_new(0, "BEGIN; SELECT version FROM fleet_schema WHERE id = 1"
	    " FOR UPDATE", schema_locked);
	n->simple = 1;
	db_query(n);
}

void
schema_apply(void (*done)(uint32_t))
{
	struct fq	*q;

	schema_done = done;
	q = fq_new(0, "CREATE TABLE IF NOT EXISTS fleet_schema ("
	    " id integer PRIMARY KEY CHECK (id = 1),"
	    " version integer NOT NULL CHECK (version >= 0));"
	    "INSERT INTO fleet_schema VALUES (1, 0)"
	    " ON CONFLICT (id) DO NOTHING", schema_booted);
	q->simple = 1;
	db_query(q);
}

static void
schema_locked(struct fq *q, PGresult *res, const char *err)
{
	struct fq	*n;
	int64_t		 v;
	size_t		 i, len;

	if (err != NULL && res == NULL)
		return;
	if (err != NULL)
		fatalx("schema: %s", err);
	if (PQntuples(res) != 1 || PQnfields(res) != 1 ||
	    res_num(res, 0, 0, 0, INT32_MAX, &v) == -1)
		fatalx("schema: the lock row does not read as a version");
	if ((uint64_t)v > SCHEMA_VERSION)
		fatalx("schema: the database is at version %lld, this "
		    "program knows %zu", (long long)v, SCHEMA_VERSION);
	schema_at = v;
	free(schema_sql);
	len = 64;
	for (i = v; i < SCHEMA_VERSION; i++)
		len += strlen(migrations[i]) + 1;
	if ((schema_sql = malloc(len)) == NULL)
		fatal(NULL);
	schema_sql[0] = '\0';
	for (i = v; i < SCHEMA_VERSION; i++) {
		strlcat(schema_sql, migrations[i], len);
		strlcat(schema_sql, ";", len);
		log_info("schema: applying migration %zu", i + 1);
	}
	snprintf(schema_sql + strlen(schema_sql), len - strlen(schema_sql),
	    "UPDATE fleet_schema SET version = %zu; COMMIT", SCHEMA_VERSION);
	n = fq_new(0, schema_sql, schema_applied);
	n->simple = 1;
	db_query(n);
}

static void
schema_applied(struct fq *q, PGresult *res, const char *err)
{
	if (err != NULL && res == NULL)
		return;
	if (err != NULL)
		fatalx("schema: migration to %zu: %s", SCHEMA_VERSION, err);
	schema_at = SCHEMA_VERSION;
	schema_done(schema_at);
}
