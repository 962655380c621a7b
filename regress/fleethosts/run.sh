#!/bin/sh
# Two real factoryd hosts of one fleet on this box, each with its own
# state dir, sockets, users and attempt uids, sharing a PostgreSQL of
# the suite's own (regress/fleet/pg.sh).  Each starts factory-fleet
# as a child under its own user, registers its host, hands its tenants
# over and renews its lease.  One queue: a dozen attempts of two
# tenants submitted through either host's factoryctl each run exactly
# once, on exactly one host, and end, none lost; an idempotency key
# used twice makes one attempt; a user who acts for no tenant, and a
# repository not the tenant's, are refused.  A daemon without fleet:
# starts no child and logs nothing of a fleet.  Everything is ended by
# pid, also on failure.

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fleet/pg.sh"

command -v setpriv >/dev/null || fail "fleethosts: needs setpriv"
T=$(regress_tmpdir)
PIDA=""
PIDB=""

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
    idle:
      paused: yes
      users: [73604]
      repositories: [demo]
CONF
	# The same repository under a second name, no tenant's.
	sed -i "s|^repositories:|&\n  extra:\n    path: $H/demo.git|" \
	    "$H/factoryd.conf"
	write_manifest "$H/m.yaml" 'echo fleet >> README.md' \
	    'grep -q fleet README.md'
	sed 's/^repository: demo/repository: extra/' "$H/m.yaml" >"$H/extra.yaml"
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
    [ "$(q "SELECT count(*) FROM fleet_tenants")" = 3 ] || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
check "both hosts are registered, active" \
    [ "$(q "SELECT string_agg(host, ',' ORDER BY host) FROM fleet_hosts WHERE state = 'active'")" = alpha,beta ]
check "the tenants are in the database with their weights and caps" \
    [ "$(q "SELECT string_agg(name || ':' || weight || ':' || max_running || ':' || paused, ',' ORDER BY name) FROM fleet_tenants")" = "idle:1:4:true,ops:1:4:false,web:2:4:false" ]
check "alpha logged its host and epoch" \
    grep -q "fleet: host alpha at epoch 1, schema 3, active" "$T/alpha/log"
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

# The operators: web's uid 73601; ops by its group 73602; 73609 acts
# for none.  The sockets' group lets them in (no _factoryctl here).
chgrp 73610 "$T/alpha/factoryd.sock" "$T/beta/factoryd.sock"
as() {	# uid groups host args...
	_u=$1 _g=$2 _h=$3
	shift 3
	setpriv --reuid "$_u" --regid "$_u" --groups "$_g" \
	    "$O/factoryctl" -s "$T/$_h/factoryd.sock" "$@"
}
# refused UID GROUPS HOST VERB ARGS...: refused by the tenant check,
# the reason naming the attempt's tenant (web).
refused() {
	_v=$4
	as "$@" </dev/null 2>&1 | tee -a "$T/tenant.out" |
	    grep -q "$_v: refused: uid $1 does not act for tenant web$"
}
# not_refused UID GROUPS HOST VERB ARGS...: not refused by it (it may
# fail for another reason: the attempt has ended).
not_refused() {
	! as "$@" </dev/null 2>&1 | tee -a "$T/tenant.out" |
	    grep -q "refused: uid $1 does not act for tenant"
}
check "a user who acts for no tenant is refused, with the reason" \
    sh -c "setpriv --reuid 73609 --regid 73609 --groups 73610 \
    '$O/factoryctl' -s '$T/alpha/factoryd.sock' submit '$T/alpha/m.yaml' \
    2>&1 | grep -q 'acts for no tenant'"
check "a repository not the tenant's is refused" \
    sh -c "setpriv --reuid 73601 --regid 73601 --groups 73610 \
    '$O/factoryctl' -s '$T/alpha/factoryd.sock' submit '$T/alpha/extra.yaml' \
    2>&1 | grep -q 'repository extra is not tenant web'"
check "a tenant the user does not act for is refused" \
    sh -c "setpriv --reuid 73601 --regid 73601 --groups 73610 \
    '$O/factoryctl' -s '$T/alpha/factoryd.sock' submit --tenant ops \
    '$T/alpha/m.yaml' 2>&1 | grep -q 'does not act for tenant ops'"

# One of a paused tenant waits, and says why.
idle=$(as 73604 73610 beta submit "$T/beta/m.yaml" 2>&1)
echo "# paused tenant's attempt: $idle"

# Twelve attempts, six per tenant, alternately through each host.
: >"$T/ids"
i=0
while [ $i -lt 12 ]; do
	h=alpha
	[ $((i % 2)) = 1 ] && h=beta
	if [ $((i % 4)) -lt 2 ]; then
		as 73601 73610 $h submit "$T/$h/m.yaml" >>"$T/ids" 2>>"$T/submit.err"
	else
		as 73603 73610,73602 $h submit --priority batch \
		    "$T/$h/m.yaml" >>"$T/ids" 2>>"$T/submit.err"
	fi
	i=$((i + 1))
done
sed 's/^/# /' "$T/submit.err"
check "twelve submissions answered with twelve distinct ids" \
    [ "$(sort -u "$T/ids" | grep -c '^a-')" = 12 ]
k1=$(as 73601 73610 alpha -j submit --idempotency-key once-1 \
    "$T/alpha/m.yaml" 2>&1)
k2=$(as 73601 73610 beta -j submit --idempotency-key once-1 \
    "$T/beta/m.yaml" 2>&1)
echo "# $(echo "$k1" | jq -c .) / $(echo "$k2" | jq -c .)"
check "an idempotency key used twice, through two hosts, is one attempt" \
    [ "$(echo "$k1" | jq -r .id)" = "$(echo "$k2" | jq -r .id)" -a \
    "$(echo "$k2" | jq -r .created)" = false ]
echo "$k1" | jq -r .id >>"$T/ids"

# Until every one has ended in the database (at most 150 s).
i=0
until [ "$(q "SELECT count(*) FROM fleet_attempts WHERE state IN
    ('done', 'failed', 'cancelled', 'dead')")" -ge 13 ] || [ $i -ge 1500 ]; do
	sleep 0.1; i=$((i + 1))
done
q "SELECT id, tenant, state, owner_host, claims, coalesce(reason, '')
    FROM fleet_attempts ORDER BY seq" | sed 's/^/# /'
check "thirteen attempts in the queue, each ended done, none lost" \
    [ "$(q "SELECT count(*) FROM fleet_attempts WHERE state = 'done'")" = 13 ]
check "each was claimed exactly once" \
    [ "$(q "SELECT count(*) FROM fleet_attempts WHERE tenant <> 'idle'
    AND claims <> 1")" = 0 ]
check "both tenants' attempts ran" \
    [ "$(q "SELECT count(DISTINCT tenant) FROM fleet_attempts
    WHERE state = 'done'")" = 2 ]
# Each ran on exactly one host: the one the database says owned it.
twice=0
lost=0
for id in $(sort -u "$T/ids"); do
	n=0
	for h in alpha beta; do
		if [ "$("$O/factoryctl" -s "$T/$h/factoryd.sock" -j show \
		    "$id" 2>/dev/null | jq -r .terminated)" = true ]; then
			n=$((n + 1))
			[ "$(q "SELECT owner_host FROM fleet_attempts
			    WHERE id = '$id'")" = $h ] || twice=$((twice + 1))
		fi
	done
	[ $n = 1 ] || { echo "# $id ran on $n hosts"; lost=$((lost + 1)); }
done
check "each attempt ran, and ended, on exactly one host" [ $lost = 0 ]
check "the host it ran on is its owner in the database" [ $twice = 0 ]
check "the work was shared: both hosts ran some" \
    [ "$(q "SELECT count(DISTINCT owner_host) FROM fleet_attempts")" = 2 ]
check "the tenants' running counters are back to 0" \
    [ "$(q "SELECT sum(running) FROM fleet_tenants")" = 0 ]
# The database answers before the record of its answer is written.
sent() {
	cat "$T/alpha/state/journal" "$T/beta/state/journal" 2>/dev/null |
	    grep -a -o '"kind\\":\\"fleet-sent' | wc -l
}
i=0
until [ "$(sent)" -ge 13 ] || [ $i -ge 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "every outcome was journaled as sent (the outbox is empty)" \
    [ "$(sent)" = 13 ]

# The fleet child dies while its host runs an attempt: the host's next
# epoch re-adopts what its journal holds, and the outcome is taken, not
# superseded (it was, and the row stayed claimed for good).
for h in alpha beta; do
	write_manifest "$T/$h/slow.yaml" 'sleep 6; echo slow >> README.md' \
	    'grep -q slow README.md'
done
slow=$(as 73601 73610 alpha submit "$T/alpha/slow.yaml" 2>/dev/null)
i=0
until [ -n "$(q "SELECT owner_host FROM fleet_attempts WHERE id = '$slow'
    AND state = 'claimed'")" ] || [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
sh_=$(q "SELECT owner_host FROM fleet_attempts WHERE id = '$slow'")
ep=$(q "SELECT epoch FROM fleet_hosts WHERE host = '$sh_'")
i=0
until grep -q "fleet: claimed $slow" "$T/$sh_/log" 2>/dev/null || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
if [ "$sh_" = alpha ]; then sp=$PIDA; else sp=$PIDB; fi
kill -KILL "$(child_of "$sp" factory-fleet)"
i=0
until [ "$(q "SELECT epoch FROM fleet_hosts WHERE host = '$sh_'")" -gt "$ep" ] ||
    [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
check "a fleet child killed mid-attempt: $sh_ takes a new epoch" \
    [ "$(q "SELECT epoch FROM fleet_hosts WHERE host = '$sh_'")" -gt "$ep" ]
# Its next renewal, by the claim epoch its journal holds, adopts it.
owns() {
	[ "$(q "SELECT a.owner_epoch = h.epoch FROM fleet_attempts a,
	    fleet_hosts h WHERE a.id = '$slow' AND h.host = a.owner_host")" = t ]
}
i=0
until owns || [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
check "and its renewal adopts $slow at it" owns
i=0
# (publishing on the way: its claim is marked so before it publishes)
until ! q "SELECT state FROM fleet_attempts WHERE id = '$slow'" |
    grep -q '^claimed$\|^publishing$' ||
    [ $i -ge 1200 ]; do
	sleep 0.1; i=$((i + 1))
done
check "its outcome is taken: done ($(q "SELECT state FROM fleet_attempts WHERE id = '$slow'"))" \
    [ "$(q "SELECT state FROM fleet_attempts WHERE id = '$slow'")" = done ]
check "no outcome of $slow was superseded" \
    sh -c "! grep -q '$slow: fleet: its outcome is superseded' '$T/$sh_/log'"

# The manifest's tenant: label is the submitter's word; the fleet's
# tenant is the one it was queued for.  A claim whose label differs is
# handed back failed, with the reason (it ran as ops, labelled so in
# its receipts, for a web user).
sed 's/^title: .*/&\ntenant: ops/' "$T/alpha/m.yaml" >"$T/alpha/spoof.yaml"
spoof=$(as 73601 73610 alpha submit "$T/alpha/spoof.yaml" 2>/dev/null)
i=0
until [ "$(q "SELECT state FROM fleet_attempts WHERE id = '$spoof'")" = failed ] ||
    [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
st=$(q "SELECT state || ': ' || coalesce(reason, '') FROM fleet_attempts
    WHERE id = '$spoof'")
check "a claim labelled for another tenant is handed back failed ($st)" \
    [ "$st" = "failed: $spoof: the manifest says tenant ops, the fleet queued it for web" ]

# The operator's view: hosts and the queue, through either host.
"$O/factoryctl" -s "$T/alpha/factoryd.sock" hosts | sed 's/^/# /'
"$O/factoryctl" -s "$T/beta/factoryd.sock" queue | sed 's/^/# /'
check "hosts: alpha and beta, active, live, nothing running" \
    sh -c "\"$O/factoryctl\" -s $T/alpha/factoryd.sock -j hosts | jq -e '
    [.hosts[] | select(.state == \"active\" and .expired == false and
    .running == 0) | .host] == [\"alpha\", \"beta\"]'"
check "queue: only the paused tenant's attempt waits, and says why" \
    sh -c "\"$O/factoryctl\" -s $T/beta/factoryd.sock -j queue | jq -e '
    [.queue[] | [.id, .tenant, .why]] ==
    [[\"$idle\", \"idle\", \"its tenant is paused\"]]'"
check "queue: a tenant's user sees its own, not another's" \
    sh -c "setpriv --reuid 73601 --regid 73601 --groups 73610 \
    '$O/factoryctl' -s $T/beta/factoryd.sock -j queue </dev/null |
    jq -e '.queue == []' &&
    setpriv --reuid 73604 --regid 73604 --groups 73610 \
    '$O/factoryctl' -s $T/beta/factoryd.sock -j queue </dev/null |
    jq -e '[.queue[].id] == [\"$idle\"]'"
# More of another tenant's waiting than a listing holds (256), all
# before idle's in the claims' order: idle's user still sees its own,
# because the database is asked for its tenant's rows only.
q "INSERT INTO fleet_attempts (id, seq, tenant, class, repo, digest,
    manifest, max_claims, run_after) SELECT 'a-20261206-z' || n,
    1000000 + n, 'ops', 0, 'demo', 'sha256:' || repeat('0', 64), 'x', 3,
    now() + interval '1 hour' FROM generate_series(1, 300) AS n" >/dev/null
check "queue: a tenant's own row, behind 300 of another tenant's" \
    sh -c "setpriv --reuid 73604 --regid 73604 --groups 73610 \
    '$O/factoryctl' -s $T/beta/factoryd.sock -j queue </dev/null |
    jq -e '[.queue[].id] == [\"$idle\"]'"
q "DELETE FROM fleet_attempts WHERE id LIKE 'a-20261206-z%'" >/dev/null
check "cancel: another tenant's user may not cancel a queued attempt" \
    sh -c "setpriv --reuid 73601 --regid 73601 --groups 73610 \
    '$O/factoryctl' -s $T/alpha/factoryd.sock cancel $idle </dev/null 2>&1 |
    grep -q 'no such attempt of your tenants'"
check "cancel: its tenant's user cancels it, through any host" \
    sh -c "setpriv --reuid 73604 --regid 73604 --groups 73610 \
    '$O/factoryctl' -s $T/alpha/factoryd.sock -j cancel $idle </dev/null |
    jq -e '.fleet == \"cancelled\"'"
check "cancel: it is cancelled in the database" \
    [ "$(q "SELECT state FROM fleet_attempts WHERE id = '$idle'")" = cancelled ]
check "tenants: a tenant's user sees only its own" \
    sh -c "setpriv --reuid 73601 --regid 73601 --groups 73610 \
    '$O/factoryctl' -s $T/alpha/factoryd.sock -j tenants </dev/null |
    jq -e '[.tenants[].tenant] == [\"web\"]'"

# Tenants own their attempts: who acts for none (73609) and an ops user
# (73603) may not approve, cancel, select, diff, attach evidence to or
# shell into web's, each told why; web's own user is not refused so;
# root may.  The tenant is the claim's, as journaled, so a restart
# keeps it.
wid=$(q "SELECT id FROM fleet_attempts WHERE tenant = 'web' AND
    owner_host = 'alpha' ORDER BY seq LIMIT 1")
echo "a reviewer's note" >"$T/note"
chmod 644 "$T/note"
echo "# web's attempt on alpha: $wid"
: >"$T/tenant.out"
for who in "73609 73610" "73603 73610,73602"; do
	set -- $who
	for verb in approve cancel select diff; do
		check "uid $1 is refused $verb of web's attempt" \
		    refused $1 $2 alpha $verb "$wid"
	done
	check "uid $1 is refused shell into web's attempt" \
	    refused $1 $2 alpha shell "$wid" -- /bin/true
	check "uid $1 is refused attaching evidence to web's attempt" \
	    refused $1 $2 alpha attach -n note-$1 "$wid" "$T/note"
done
check "no evidence of web's attempt was kept for them" \
    sh -c "'$O/factoryctl' -s '$T/alpha/factoryd.sock' -j show '$wid' |
    jq -e '(.evidence // []) | length == 0'"
for verb in approve cancel select diff; do
	check "web's user is not refused $verb by the tenant check" \
	    not_refused 73601 73610 alpha $verb "$wid"
done
check "web's user is not refused shell by the tenant check" \
    not_refused 73601 73610 alpha shell "$wid" -- /bin/true
check "web's user attaches evidence to web's attempt" \
    as 73601 73610 alpha attach -n note "$wid" "$T/note"
check "root is not refused by the tenant check" \
    sh -c "! '$O/factoryctl' -s '$T/alpha/factoryd.sock' approve '$wid' \
    2>&1 | grep -q 'does not act for tenant'"
sed 's/^/# /' "$T/tenant.out"
# A user in ops by its primary group alone (SO_PEERCRED's gid) submits.
pg=$(setpriv --reuid 73605 --regid 73602 --groups 73610 "$O/factoryctl" \
    -s "$T/alpha/factoryd.sock" -j submit "$T/alpha/m.yaml" 2>&1 </dev/null)
echo "# primary group only: $(echo "$pg" | jq -c . 2>/dev/null || echo "$pg")"
check "a user in ops by its primary group alone may submit" \
    [ "$(echo "$pg" | jq -r .id 2>/dev/null | cut -c1-2)" = a- ]
pg=$(echo "$pg" | jq -r .id 2>/dev/null)
i=0
until [ "$(q "SELECT state FROM fleet_attempts WHERE id = '$pg'")" = done ] ||
    [ $i -ge 600 ]; do
	sleep 0.1; i=$((i + 1))
done
check "its attempt ran and ended done" \
    [ "$(q "SELECT state FROM fleet_attempts WHERE id = '$pg'")" = done ]
# After a restart, the journal's claim still says whose it is.
stop_pid "$PIDA"
PIDA=""
start_factoryd "$T/alpha/factoryd.conf" "$T/alpha/log3"
PIDA=$FACTORYD_PID
FACTORYD_PID=""
chgrp 73610 "$T/alpha/factoryd.sock"
check "after a restart, uid 73609 is still refused approve of web's" \
    refused 73609 73610 alpha approve "$wid"
check "after a restart, web's user is still not refused" \
    not_refused 73601 73610 alpha approve "$wid"

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

# A lying fleet child: it claims one attempt twice, the second time
# while the host still starts the first.  The parent kills it, sends
# nothing back for the lie and journals the id once: before, it was
# journaled twice and the journal no longer replayed (an outside
# attack's finding); factoryd would not start again.
L=$T/liar
mkdir -p "$L"
for b in "$O"/factory-*; do
	ln -s "$b" "$L/"
done
rm "$L/factory-fleet"
cp "$O/regress/fleethosts/prog_fleetliar" "$L/factory-fleet"
cp "$T/alpha/m.yaml" "$L/factory-fleet.manifest"
LID=a-20991231-f901
echo "$LID demo web" >"$L/factory-fleet.claim"
chmod 755 "$L"
sed -i "s|^libexec: .*|libexec: $L|" "$T/alpha/factoryd.conf"
"$O/factoryctl" -s "$T/alpha/factoryd.sock" reload >/dev/null
i=0
until grep -q "fleet (pid [0-9]*): CLAIMED $LID.*killing it" "$T/alpha/log3" ||
    [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
check "a fleet child claiming one attempt twice is killed for it" \
    grep -q "fleet (pid [0-9]*): CLAIMED $LID.*killing it" "$T/alpha/log3"
i=0
until [ "$("$O/factoryctl" -s "$T/alpha/factoryd.sock" -j show "$LID" 2>/dev/null |
    jq -r .terminated)" = true ] || [ $i -ge 1200 ]; do
	sleep 0.1; i=$((i + 1))
done
check "the attempt it claimed first runs to its end, once" \
    [ "$("$O/factoryctl" -s "$T/alpha/factoryd.sock" -j show "$LID" |
    jq -r .terminated)" = true ]
stop_pid "$PIDA"
PIDA=""
sed -i "s|^libexec: .*|libexec: $O|" "$T/alpha/factoryd.conf"
start_factoryd "$T/alpha/factoryd.conf" "$T/alpha/log4"
PIDA=$FACTORYD_PID
FACTORYD_PID=""
check "its journal still replays: alpha starts and shows $LID" \
    sh -c "\"$O/factoryctl\" -s $T/alpha/factoryd.sock -j show $LID |
    jq -e '.terminated == true'"
check "no id was journaled twice" \
    sh -c "! grep -q 'replay stopped\|out of chain' '$T/alpha/log4'"

regress_done
