# A PostgreSQL cluster of a test's own: initdb and pg_ctl in a temp
# dir, listening on a unix socket there only, run as the postgres user
# (the server refuses root), never the system's service.  pg_stop ends
# it by its pid and is safe to call twice; callers call it from their
# EXIT trap, before the temp dir goes.  Sourced by regress/fleet/run.sh
# and bench/fleet.sh.  fsync is off (the machine does not crash under
# a test), synchronous_commit stays on: a commit answered survives the
# server's own crash, which regress/fleet makes.

PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V |
    tail -n 1)}
PG_DIR=""

pg_as() {
	setpriv --reuid postgres --regid postgres --clear-groups "$@"
}

# pg_start DIR: FLEET_DB is then its conninfo, PSQL a psql on it.
pg_start() {
	[ -x "$PGBIN/initdb" ] || { echo "# no initdb (postgresql-15)"; return 1; }
	id postgres >/dev/null 2>&1 || { echo "# no postgres user"; return 1; }
	mkdir -p "$1/pgdata" "$1/pgsock" || return 1
	chown postgres:postgres "$1/pgdata" "$1/pgsock" || return 1
	chmod 700 "$1/pgdata"
	chmod 755 "$1/pgsock"
	pg_as "$PGBIN/initdb" -D "$1/pgdata" -U fleet --auth=trust -E UTF8 \
	    --no-sync >"$1/initdb.log" 2>&1 ||
	    { sed 's/^/# /' "$1/initdb.log"; return 1; }
	PG_DIR=$1
	touch "$1/pg.log" && chown postgres "$1/pg.log"
	pg_as "$PGBIN/pg_ctl" -D "$1/pgdata" -l "$1/pg.log" -w -t 120 \
	    -o "-k $1/pgsock -c listen_addresses= -c fsync=off \
	    -c max_connections=64" start \
	    >/dev/null 2>&1 || { sed 's/^/# /' "$1/pg.log"; return 1; }
	FLEET_DB="host=$1/pgsock dbname=postgres user=fleet"
	PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1 -h $1/pgsock -U fleet postgres"
	export FLEET_DB
}

pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	pg_as "$PGBIN/pg_ctl" -D "$PG_DIR/pgdata" -m immediate -w -t 60 stop \
	    >/dev/null 2>&1
	# Whatever pg_ctl left: the postmaster by the pid in its file.
	if [ -f "$PG_DIR/pgdata/postmaster.pid" ]; then
		pid=$(head -n 1 "$PG_DIR/pgdata/postmaster.pid")
		case $pid in *[!0-9]*|"") ;; *) kill -KILL "$pid" 2>/dev/null ;; esac
	fi
	PG_DIR=""
}
