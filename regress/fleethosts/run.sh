#!/bin/sh
# Two real factoryd hosts of one fleet on this box, each with its own
# state dir, sockets, users and attempt uids, sharing a PostgreSQL of
# the suite's own (regress/fleet/pg.sh).  Each starts factory-fleet
# as a child under its own user, registers its host, hands its tenants
# over and renews its lease; a daemon without fleet: starts no child
# and logs nothing of a fleet.  Everything is ended by pid, also on
# failure.

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fleet/pg.sh"

command -v setpriv >/dev/null || fail "fleethosts: needs setpriv"
T=$(regress_tmpdir)
PIDA=""
PIDB=""

stop_pid() {	# pid
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cleanup() {
	stop_pid "$PIDA"
	stop_pid "$PIDB"
	pg_stop
	regress_cleanup
}
trap cleanup EXIT

pg_start "$T" || fail "fleethosts: cannot start a PostgreSQL cluster"
q() { $PSQL -c "$1"; }

# host NAME UIDBASE: its directory $T/NAME with repositories and a
# config of one fleet: tenants web (uid 73601) and ops (gid 73602).
host() {
	H=$T/$1
	mkdir -p "$H"
	make_repos "$H" $(($2 + 4))
	write_attempt_conf "$H" "$2" "$(($2 + 10))-$(($2 + 39))"
	sed -i "s|^  gateway: .*|&\n  fleet: $(($2 + 8))|" "$H/factoryd.conf"
	cat >>"$H/factoryd.conf" <<CONF
fleet:
  conninfo: "$FLEET_DB"
  host: $1
  slots: 2
  lease: 6s
  tenants:
    web:
      weight: 2
      max-running: 4
      users: [73601]
      repositories: [demo]
    ops:
      groups: [73602]
      repositories: [demo]
CONF
}
host alpha 73400
host beta 73500

check "factoryd -n accepts a fleet: block" \
    "$O/factoryd" -n -f "$T/alpha/factoryd.conf"

start_factoryd "$T/alpha/factoryd.conf" "$T/alpha/log"
PIDA=$FACTORYD_PID
start_factoryd "$T/beta/factoryd.conf" "$T/beta/log"
PIDB=$FACTORYD_PID
FACTORYD_PID=""

# runs_fleet SOCKET: its fleet child is running.
runs_fleet() {
	"$O/factoryctl" -s "$1" -j status | jq -e '[.processes[] |
	    select(.name == "fleet" and .state == "running")] | length == 1'
}
check "alpha runs factory-fleet" runs_fleet "$T/alpha/factoryd.sock"
check "beta runs factory-fleet" runs_fleet "$T/beta/factoryd.sock"
# child_of PPID COMM: the pid of that child.
child_of() {
	for p in /proc/[0-9]*; do
		[ "$(awk '/^PPid:/ {print $2}' "$p/status" 2>/dev/null)" = "$1" ] &&
		    [ "$(cat "$p/comm" 2>/dev/null)" = "$2" ] && echo "${p#/proc/}"
	done | head -n 1
}
fpid=$(child_of "$PIDA" factory-fleet)
check "alpha's factory-fleet runs as users.fleet (73408)" \
    sh -c "awk '/^Uid:/ {exit !(\$2 == 73408)}' /proc/$fpid/status"

# The hosts and tenants reach the database (the child is asynchronous).
i=0
until [ "$(q "SELECT count(*) FROM fleet_hosts WHERE state = 'active'")" = 2 ] &&
    [ "$(q "SELECT count(*) FROM fleet_tenants")" = 2 ] || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
check "both hosts are registered, active" \
    [ "$(q "SELECT string_agg(host, ',' ORDER BY host) FROM fleet_hosts WHERE state = 'active'")" = alpha,beta ]
check "the tenants are in the database with their weights and caps" \
    [ "$(q "SELECT string_agg(name || ':' || weight || ':' || max_running, ',' ORDER BY name) FROM fleet_tenants")" = "ops:1:4,web:2:4" ]
check "alpha logged its host and epoch" \
    grep -q "fleet: host alpha at epoch 1, schema 1, active" "$T/alpha/log"
hb1=$(q "SELECT extract(epoch FROM heartbeat) FROM fleet_hosts WHERE host = 'alpha'")
sleep 2.5
hb2=$(q "SELECT extract(epoch FROM heartbeat) FROM fleet_hosts WHERE host = 'alpha'")
check "alpha renews its lease on a timer (lease 6s: every 2s)" \
    awk -v a="$hb1" -v b="$hb2" 'BEGIN {exit !(b > a)}'

# A lying fleet child is killed and started again at a new epoch: a
# SIGKILL stands for one here (the lie itself is regress/fleet's).
kill -KILL "$fpid"
i=0
until grep -q "fleet: host alpha at epoch 2" "$T/alpha/log" || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
check "a lost fleet child is restarted and the host takes a new epoch" \
    grep -q "fleet: host alpha at epoch 2" "$T/alpha/log"

# A daemon without fleet: starts no fleet child, logs no fleet line.
stop_pid "$PIDB"
PIDB=""
sed -i -e '/^fleet:/,$d' -e '/^  fleet: /d' "$T/beta/factoryd.conf"
start_factoryd "$T/beta/factoryd.conf" "$T/beta/log2"
PIDB=$FACTORYD_PID
FACTORYD_PID=""
check "without fleet:, no fleet child" \
    sh -c "! \"$O/factoryctl\" -s $T/beta/factoryd.sock -j status |
    jq -e '.processes[] | select(.name == \"fleet\")'"
check "without fleet:, beta has no factory-fleet child" \
    [ -z "$(child_of "$PIDB" factory-fleet)" ]
check "without fleet:, no fleet line in the log" \
    sh -c "! grep -qi fleet $T/beta/log2"

regress_done
