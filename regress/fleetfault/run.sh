#!/bin/sh
# A fleet's bad days, on three real factoryd hosts sharing a PostgreSQL
# of the suite's own, each reaching it through a relay of its own that
# the test cuts and heals (prog_pgrelay: a partition drops bytes, it
# does not close sockets).  The lease is 4 s: a host counts it from
# each renewal's send time less a second, and is fenced past it.
#
#   A  a host cut off longer than its lease while it runs an attempt:
#      it fences itself and freezes the sandbox, another host sweeps the
#      lapsed claim and runs it, the cut host's writes are superseded
#      when it comes back; one publication.
#   B  a cut shorter than the lease: no rescue of a live host.
#   C  a host SIGKILLed mid-attempt: its sandbox dies with it, another
#      host runs the attempt, and the host started again finds it
#      superseded and sends no outcome.
#   D  a crash just after a claim committed, before the host journaled
#      it: never renewed, swept, run once.
#   E  `pg_ctl restart -m immediate` while attempts run: none lost.
#   P  publications lost with their host, finished by another from the
#      forge's side (adoption), never run again: a host killed just
#      after its push (P1: the adopter opens the pull request at the
#      pinned commit) and one that dies after the pin, before the push
#      (P2: the adopter finds no branch and fails it, said why).  The
#      three hosts publish "shared" to one local forge.
#   S  a host's factoryd stopped (SIGSTOP, its children left running)
#      past its lease: it can freeze nothing, so its sandbox's own
#      watchdog ends the run before the database lets the claim go;
#      another host runs it; the host continued ends its copy.
#
# Throughout, a sampler reads every attempt cgroup of the three hosts
# four times a second: never two live (populated, not frozen) sandboxes
# of one attempt.  At the end, no orphan anywhere and the tenants'
# counters back at 0.  Everything is ended by pid, also on failure.

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fleet/pg.sh"

T=$(regress_tmpdir)
RELAY=$O/regress/fleetfault/prog_pgrelay
PIDS=""			# factoryd of h1 h2 h3, by position
RPIDS=""		# their relays
SAMPLER=""
LEASE=4

cleanup() {
	stop_pid "$SAMPLER"
	for p in $PIDS $RPIDS; do
		[ "$p" = - ] && continue
		kill -CONT "$p" 2>/dev/null	# S stops one
		stop_pid "$p"
	done
	pg_stop
	regress_cleanup
}
trap cleanup EXIT

pg_start "$T" || fail "fleetfault: cannot start a PostgreSQL cluster"
q() { $PSQL -c "$1"; }
DB_SOCK=$T/pgsock

# nth N WORDS...: the Nth word.
nth() {
	_n=$1
	shift
	eval "echo \${$_n}"
}
# setnth N VALUE WORDS...: the words with the Nth replaced.
setnth() {
	_n=$1 _v=$2 _i=1 _out=""
	shift 2
	for _w; do
		[ $_i = "$_n" ] && _w=$_v
		_out="$_out $_w"
		_i=$((_i + 1))
	done
	echo $_out
}

# shared: one repository and one local forge that every host publishes
# to (each host's publisher is its own uid).
make_repos "$T/shared" 0
mkdir -p "$T/shared/remote.git/refs/heads/factory"
: >"$T/shared/pulls/.lock"
chmod -R a+rwX "$T/shared/remote.git" "$T/shared/pulls"
# twin: one path in every host's config, not said shared, as on hosts
# with one config and their own disks (P3).  Here it is one directory.
make_repos "$T/twin" 0
mkdir -p "$T/twin/remote.git/refs/heads/factory"
: >"$T/twin/pulls/.lock"
chmod -R a+rwX "$T/twin/remote.git" "$T/twin/pulls"

# host N UIDBASE: h$N with its repositories, config and relay.
host() {
	H=$T/h$1
	mkdir -p "$H/relay"
	chmod 755 "$H/relay"
	make_repos "$H" $(($2 + 4))
	write_attempt_conf "$H" "$2" "$(($2 + 10))-$(($2 + 39))"
	sed -i "s|^  gateway: .*|&\n  fleet: $(($2 + 8))|" "$H/factoryd.conf"
	cat >>"$H/factoryd.conf" <<CONF
fleet:
  conninfo: "host=$H/relay dbname=postgres user=fleet"
  host: h$1
  slots: 2
  lease: ${LEASE}s
  query-deadline: 1s
  adopt-after: 1s
  tenants:
    t1:
      weight: 1
      max-running: 6
      users: [73711]
      repositories: [demo, solo]
    t2:
      weight: 2
      max-running: 6
      users: [73712]
      repositories: [demo, solo]
    t3:
      weight: 1
      max-running: 6
      users: [73713]
      repositories: [demo, solo]
CONF
	sed -i "s|^repositories:|&\n  shared:\n    path: $T/shared/demo.git\n    publish: {forge: local, remote: $T/shared/remote.git, pulls: $T/shared/pulls, shared: yes}|" \
	    "$H/factoryd.conf"
	sed -i "s|^repositories:|&\n  twin:\n    path: $T/twin/demo.git\n    publish: {forge: local, remote: $T/twin/remote.git, pulls: $T/twin/pulls}|" \
	    "$H/factoryd.conf"
	sed -i 's/repositories: \[demo, solo\]/repositories: [demo, solo, shared, twin]/' \
	    "$H/factoryd.conf"
	# solo: a repository only h1 serves (D).
	if [ "$1" = 1 ]; then
		sed -i "s|^repositories:|&\n  solo:\n    path: $H/demo.git\n    publish: {forge: local, remote: $H/remote.git, pulls: $H/pulls}|" \
		    "$H/factoryd.conf"
	fi
	"$RELAY" "$H/relay" "$DB_SOCK" >"$H/relay.out" 2>"$H/relay.err" &
	RPIDS="$RPIDS $!"
	i=0
	until grep -q '^ready' "$H/relay.out" || [ $i -ge 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	grep -q '^ready' "$H/relay.out" || fail "fleetfault: relay h$1 did not start"
}
host 1 73700
host 2 73800
host 3 73900
start() {	# N [env...]: h$N's factoryd, appending to its log
	_n=$1
	shift
	env "$@" "$O/factoryd" -dk -f "$T/h$_n/factoryd.conf" \
	    2>>"$T/h$_n/log" &
	_p=$!
	PIDS=$(setnth "$_n" "$_p" $PIDS)
	wait_serving "$T/h$_n/factoryd.sock" "$_p" ||
	    { tail -n 20 "$T/h$_n/log" | sed 's/^/# /'; fail "h$_n did not start"; }
	# The tenants' users reach it by the socket's group.
	chgrp 73710 "$T/h$_n/factoryd.sock"
}
PIDS="- - -"
start 1
# The fleet's hosts share one verifier key (an adopter checks a pin's
# verdict against its own): h1's, made at its start.
for n in 2 3; do
	mkdir -p "$T/h$n/keys"
	cp "$T/h1/keys/verifier.key" "$T/h$n/keys/verifier.key"
	chown "$((73602 + n * 100)):$((73602 + n * 100))" "$T/h$n/keys/verifier.key"
	chmod 400 "$T/h$n/keys/verifier.key"
done
start 2
start 3
PIDS=$(echo $PIDS)

# until SECONDS COMMAND...: true once the command is, false after.
until_true() {
	_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.1
	done
}
active3() {
	[ "$(q "SELECT count(*) FROM fleet_hosts WHERE state = 'active'
	    AND lease_until > now()")" = 3 ]
}
check "three hosts registered, each through its own relay" until_true 60 active3

# An attempt's cgroup2 directories (the agent's, the validation run's
# "-v"), of any host: factory/<instance>/<id> under the cgroup2 mount.
cgdirs() {	# glob of ids
	find /sys/fs/cgroup -maxdepth 6 -type d -name "$1" \
	    -path '*/factory/*' 2>/dev/null | while read -r d; do
		[ -f "$d/cgroup.events" ] && echo "$d"
	done
}
# The sampler: every live (populated, not frozen) sandbox of every
# fleet attempt; an id live twice at one instant is a double.  One
# sample reads the directories one after another, and under load that
# takes long enough for an agent's run to end and its validation run
# to begin between two reads: seen so, both were live, but not at
# once.  That is one host's agent and validation run, one after the
# other: sightings of an id on two hosts are a double as they are.
# On one host, a directory's sandbox is live once, from its spawn to
# its end, so a sighting that is still live when read again after the
# last sighting of that id was, was live at that one's instant: that
# is a double.  One host's sightings that were not are kept as "near",
# not counted.
live() {	# dir
	grep -q '^populated 1' "$1/cgroup.events" 2>/dev/null &&
	    ! grep -q '^frozen 1' "$1/cgroup.events" 2>/dev/null
}
sampler() {
	while :; do
		cgdirs 'a-2*' | while read -r d; do
			live "$d" || continue
			_i=${d##*/}
			echo "${_i%-v} $d"
		done >"$T/sample"
		awk '{ print "live " $1 }' "$T/sample"
		# Each id seen more than once, its sightings in the order
		# they were read.
		awk '{ s[$1] = ($1 in s) ? s[$1] " " $2 : $2; n[$1]++ }
		    END { for (i in n) if (n[i] > 1) print i, s[i] }' \
		    "$T/sample" | while read -r _i _paths; do
			set -- $_paths
			_hosts=$(for _p in "$@"; do dirname "$_p"; done |
			    sort -u | wc -l)
			if [ "$_hosts" -gt 1 ]; then
				echo "double $_i $_paths"
				continue
			fi
			_both=""
			while [ $# -gt 1 ]; do
				live "$1" && _both="$_both $1"
				shift
			done
			if [ -n "$_both" ]; then
				echo "double $_i$_both $1"
			else
				echo "near $_i $_paths"
			fi
		done
		echo "tick $(date +%T.%N)"
		sleep 0.25
	done >"$T/samples"
}
sampler &
SAMPLER=$!

sub() {		# N TENANT MANIFEST: an id, submitted through h$N by the
		# tenant's user (t1 is uid 73711, t2 73712, t3 73713)
	setpriv --reuid "7371${2#t}" --regid "7371${2#t}" --groups 73710 \
	    "$O/factoryctl" -s "$T/h$1/factoryd.sock" submit "$3" </dev/null
}
state() { q "SELECT state FROM fleet_attempts WHERE id = '$1'"; }
owner() { q "SELECT coalesce(owner_host, '') FROM fleet_attempts WHERE id = '$1'"; }
ended() { case $(state "$1") in done|failed|cancelled|dead) return 0 ;; esac; return 1; }
claimed_running() {	# id: claimed, and its sandbox runs
	_o=$(owner "$1")
	[ -n "$_o" ] && [ -n "$(cgdirs "$1")" ]
}
relay_of() { nth "${1#h}" $RPIDS; }
pid_of() { nth "${1#h}" $PIDS; }
cut() {		# host
	_n=$(grep -c '^cut' "$T/$1/relay.out")
	kill -USR1 "$(relay_of "$1")"
	until_true 10 sh -c "[ \$(grep -c '^cut' '$T/$1/relay.out') -gt $_n ]"
}
heal() {	# host
	_n=$(grep -c '^healed' "$T/$1/relay.out")
	kill -USR2 "$(relay_of "$1")"
	until_true 10 sh -c "[ \$(grep -c '^healed' '$T/$1/relay.out') -gt $_n ]"
}
branches() {	# id: how many hosts' remotes have its branch
	_c=0
	for h in h1 h2 h3; do
		git --git-dir="$T/$h/remote.git" -c safe.directory='*' \
		    rev-parse -q --verify "refs/heads/factory/$1" >/dev/null &&
		    _c=$((_c + 1))
	done
	echo $_c
}
for h in h1 h2 h3; do
	write_manifest "$T/$h/slow.yaml" 'sleep 12; echo slow >> README.md' \
	    'grep -q slow README.md'
	write_manifest "$T/$h/stall.yaml" 'sleep 16; echo stall >> README.md' \
	    'grep -q stall README.md'
	write_manifest "$T/$h/mid.yaml" 'sleep 6; echo mid >> README.md' \
	    'grep -q mid README.md'
	write_manifest "$T/$h/quick.yaml" 'echo quick >> README.md' \
	    'grep -q quick README.md'
done
sed 's/^repository: demo/repository: solo/' "$T/h1/quick.yaml" >"$T/h1/solo.yaml"
sed 's/^repository: demo/repository: shared/' "$T/h1/quick.yaml" >"$T/h1/shared.yaml"
sed 's/^repository: demo/repository: twin/' "$T/h1/quick.yaml" >"$T/h1/twin.yaml"

# A: cut longer than the lease.
A=$(sub 1 t1 "$T/h1/slow.yaml")
check "A: submitted ($A)" [ -n "$A" ]
check "A: claimed, its sandbox running" until_true 60 claimed_running "$A"
X=$(owner "$A")
echo "# A runs on $X"
cut "$X"
check "A: $X fences itself" until_true 20 grep -q "fleet: host $X fenced" "$T/$X/log"
check "A: and freezes A's sandbox" \
    until_true 20 grep -q "$A: fleet: its lease is not surely live: sandbox frozen" "$T/$X/log"
rescued_elsewhere() { o=$(owner "$A"); [ -n "$o" ] && [ "$o" != "$X" ]; }
check "A: another host sweeps the lapsed claim and claims it" \
    until_true 60 rescued_elsewhere
Y=$(owner "$A")
echo "# A rescued by $Y: $(q "SELECT reason FROM fleet_attempts WHERE id = '$A'")"
check "A: the sweep was logged" \
    sh -c "grep -q 'fleet: rescued the lapsed claims of lost hosts: 1 queued' $T/h1/log $T/h2/log $T/h3/log"
heal "$X"
check "A: $X's lease comes back" \
    until_true 30 grep -q "fleet: lease of host $X back: no longer fenced" "$T/$X/log"
xended() {
	[ "$("$O/factoryctl" -s "$T/$X/factoryd.sock" -j show "$A" |
	    jq -r .terminated)" = true ]
}
check "A: $X's copy ended, never published" until_true 60 xended
"$O/factoryctl" -s "$T/$X/factoryd.sock" -j show "$A" |
    jq -r '"# A on '"$X"': " + .state + ": " + (.reason // "")'
check "A: ended for its fence or as superseded" \
    sh -c "'$O/factoryctl' -s '$T/$X/factoryd.sock' -j show '$A' |
    jq -e '.state == \"failed\" and (.reason | test(\"^(fenced|superseded)\"))'"
check "A: ends done in the database, claimed twice" \
    until_true 90 sh -c "[ \"\$($PSQL -c \"SELECT state || ' ' || claims FROM fleet_attempts WHERE id = '$A'\")\" = 'done 2' ]"
check "A: one branch, on $Y's remote" \
    [ "$(branches "$A")" = 1 -a "$(git --git-dir="$T/$Y/remote.git" \
    -c safe.directory='*' rev-parse -q --verify "refs/heads/factory/$A" \
    >/dev/null && echo y)" = y ]
# sent_superseded HOST ID: the host journaled its outcome as refused.
sent_superseded() {
	grep -a "$2" "$T/$1/state/journal" 2>/dev/null | grep -a fleet-sent |
	    grep -aq superseded
}
sent_x() { sent_superseded "$X" "$A"; }
check "A: $X's stale outcome was refused (journaled superseded)" until_true 30 sent_x

# The metrics say so, before any host restarts: a sweep took A back,
# and the host cut off fenced itself.
metric() {	# host name: its value
	"$O/factoryctl" -s "$T/$1/factoryd.sock" metrics |
	    awk -v m="$2" '$1 == m {print $2}'
}
swept=0
for h in h1 h2 h3; do
	v=$(metric $h 'factory_fleet_swept_total{as="queued"}')
	swept=$((swept + ${v:-0}))
done
check "A: metrics: a sweep took back the claim ($swept)" [ "$swept" -ge 1 ]
check "A: metrics: $X fenced itself" \
    [ "$(metric "$X" factory_fleet_fences_total)" -ge 1 ]
check "A: metrics: $X is not fenced now" [ "$(metric "$X" factory_fleet_fenced)" = 0 ]

# B: a cut shorter than the lease.
B=$(sub 2 t2 "$T/h2/mid.yaml")
check "B: claimed, its sandbox running" until_true 60 claimed_running "$B"
XB=$(owner "$B")
cut "$XB"
sleep 0.5
heal "$XB"
check "B: ends done, claimed once: no rescue of a live host" \
    until_true 90 sh -c "[ \"\$($PSQL -c \"SELECT state || ' ' || claims FROM fleet_attempts WHERE id = '$B'\")\" = 'done 1' ]"
check "B: one branch" [ "$(branches "$B")" = 1 ]

# C: a host SIGKILLed mid-attempt.
C=$(sub 3 t3 "$T/h3/mid.yaml")
check "C: claimed, its sandbox running" until_true 60 claimed_running "$C"
XC=$(owner "$C")
N=${XC#h}
kill -KILL "$(pid_of "$XC")"
wait "$(pid_of "$XC")" 2>/dev/null
PIDS=$(setnth "$N" - $PIDS)
# sandbox_gone ID: no populated cgroup of the attempt on any host.
sandbox_gone() {
	for d in $(cgdirs "$1"); do
		grep -q '^populated 1' "$d/cgroup.events" && return 1
	done
	return 0
}
check "C: its sandbox died with $XC" until_true 30 sandbox_gone "$C"
c_elsewhere() { o=$(owner "$C"); [ -n "$o" ] && [ "$o" != "$XC" ]; }
check "C: another host runs it" until_true 60 c_elsewhere
cexpired() {
	for h in h1 h2 h3; do
		[ "$h" = "$XC" ] && continue
		[ "$(metric $h factory_fleet_hosts_expired)" = 1 ] && return 0
	done
	return 1
}
check "C: metrics: a live host counts one expired host" until_true 30 cexpired
start "$N"
check "C: ends done, claimed twice" \
    until_true 90 sh -c "[ \"\$($PSQL -c \"SELECT state || ' ' || claims FROM fleet_attempts WHERE id = '$C'\")\" = 'done 2' ]"
cended() {
	[ "$("$O/factoryctl" -s "$T/$XC/factoryd.sock" -j show "$C" |
	    jq -r .terminated)" = true ]
}
check "C: $XC started again ends its own copy" until_true 60 cended
check "C: and sends no outcome for it (superseded)" \
    until_true 30 sent_superseded "$XC" "$C"
check "C: one branch" [ "$(branches "$C")" = 1 ]

# S: a host's factoryd stopped, its sandbox running.
S=$(sub 2 t2 "$T/h2/stall.yaml")
check "S: claimed, its sandbox running" until_true 60 claimed_running "$S"
XS=$(owner "$S")
kill -STOP "$(pid_of "$XS")"
# The lease is 4 s: the watchdog fires 3.5 s after the last renewal
# was sent, the database lets go at 4 s; the agent sleeps 16 s.
check "S: with $XS stopped, its sandbox ends by itself" until_true 12 sandbox_gone "$S"
check "S: $XS is still stopped" \
    [ "$(awk '/^State:/ {print $2}' /proc/"$(pid_of "$XS")"/status)" = T ]
s_elsewhere() { o=$(owner "$S"); [ -n "$o" ] && [ "$o" != "$XS" ]; }
check "S: another host runs it" until_true 60 s_elsewhere
kill -CONT "$(pid_of "$XS")"
check "S: $XS says its sandbox's watchdog ended it" \
    until_true 30 grep -q "$S: fleet: its sandbox's watchdog ended it" "$T/$XS/log"
sended() {
	[ "$("$O/factoryctl" -s "$T/$XS/factoryd.sock" -j show "$S" |
	    jq -r .terminated)" = true ]
}
check "S: $XS ends its own copy, never published" until_true 60 sended
check "S: ends done in the database, claimed twice" \
    until_true 90 sh -c "[ \"\$($PSQL -c \"SELECT state || ' ' || claims FROM fleet_attempts WHERE id = '$S'\")\" = 'done 2' ]"
q "SELECT state, claims, coalesce(owner_host, ''), coalesce(reason, '')
    FROM fleet_attempts WHERE id = '$S'" | sed 's/^/# S: /'
for h in h1 h2 h3; do
	grep -a "$S" "$T/$h/log" | tail -4 | sed "s/^/# $h: /"
done
check "S: one branch" [ "$(branches "$S")" = 1 ]
check "S: never two live sandboxes of it" \
    sh -c "! grep -q '^double $S ' '$T/samples'"

# D: a crash after the claim committed, before h1 journaled it.
stop_pid "$(pid_of h1)"
PIDS=$(setnth 1 - $PIDS)
start 1 FACTORY_CRASH=parent:fleet-claimed
# Only h1 serves solo: it claims D and dies.
D=$(sub 1 t1 "$T/h1/solo.yaml")
h1dead() { ! kill -0 "$(pid_of h1)" 2>/dev/null; }
check "D: h1 claims D and dies at the crash point" until_true 60 h1dead
wait "$(pid_of h1)" 2>/dev/null
PIDS=$(setnth 1 - $PIDS)
check "D: the claim is committed to h1" \
    [ "$(q "SELECT state || ' ' || owner_host FROM fleet_attempts WHERE id = '$D'")" = "claimed h1" ]
start 1
check "D: never renewed, swept, claimed again and done" \
    until_true 90 sh -c "[ \"\$($PSQL -c \"SELECT state || ' ' || claims FROM fleet_attempts WHERE id = '$D'\")\" = 'done 2' ]"
check "D: h1 ran it once, journaled once" \
    sh -c "'$O/factoryctl' -s '$T/h1/factoryd.sock' -j show '$D' | jq -e '.terminated == true'"
check "D: one branch" [ "$(branches "$D")" = 1 ]

# P: publications lost with their host, adopted.
hctl() { _h=$1; shift; "$O/factoryctl" -s "$T/$_h/factoryd.sock" "$@"; }
col() { q "SELECT $2 FROM fleet_attempts WHERE id = '$1'"; }
pinned() { q "SELECT coalesce(pinned_commit, '') FROM fleet_publications WHERE attempt = '$1'"; }
forge_at() {	# id: the shared forge's branch of it, or nothing
	git --git-dir="$T/shared/remote.git" -c safe.directory='*' \
	    rev-parse -q --verify "refs/heads/factory/$1" 2>/dev/null
}
records() { ls "$T/shared/pulls" | grep -c "^$1\.json\$"; }
owned_by() { [ "$(owner "$1")" = "$2" ]; }
restart_h1() {	# [env...]: h1 stopped (by pid) and started again
	[ "$(pid_of h1)" != - ] && stop_pid "$(pid_of h1)"
	PIDS=$(setnth 1 - $PIDS)
	start 1 "$@"
}

# P1: h1 killed just after its push; its publisher waits at the fault
# point and dies with it.  h2 and h3 cordoned until h1 has it.
restart_h1 FACTORY_CRASH=publisher:stall-after-push
check "P1: cordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h3"
P1=$(sub 1 t1 "$T/h1/shared.yaml")
check "P1: submitted ($P1), claimed by h1" until_true 60 owned_by "$P1" h1
p1pushed() { [ -n "$(forge_at "$P1")" ]; }
check "P1: h1 pushed its branch to the shared forge" until_true 180 p1pushed
check "P1: marked publishing, pinned at the pushed commit" \
    [ "$(state "$P1") $(pinned "$P1")" = "publishing $(forge_at "$P1")" ]
check "P1: uncordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h3"
kill -KILL "$(pid_of h1)"
wait "$(pid_of h1)" 2>/dev/null
PIDS=$(setnth 1 - $PIDS)
p1done() { [ "$(state "$P1")" = done ]; }
check "P1: adopted by another host, and done" until_true 90 p1done
echo "# P1: $(col "$P1" "claims || ' ' || coalesce(ran_on, '') || ': ' || reason")"
# An adoption counts a claim: one to run it, one to finish it.
check "P1: never run again: claimed once, adopted once" \
    [ "$(col "$P1" claims)" = 2 ]
check "P1: no host claimed it to run again" \
    [ "$(cat "$T/h1/log" "$T/h2/log" "$T/h3/log" | grep -c "fleet: claimed $P1 ")" = 1 ]
check "P1: the reason says who lost it, and the pull request" \
    sh -c "$PSQL -c \"SELECT reason FROM fleet_attempts WHERE id = '$P1'\" |
    grep -q '^published, adopted after h1 was lost: factory/$P1, pull request [0-9]'"
check "P1: the adopter said so" \
    sh -c "grep -q 'fleet: adopted $P1 at epoch [0-9]*, lost while publishing on h1' $T/h2/log $T/h3/log"
check "P1: the branch is still at the pinned commit" \
    [ "$(forge_at "$P1")" = "$(pinned "$P1")" ]
check "P1: one pull record" [ "$(records "$P1")" = 1 ]
adopted() {	# as: the live hosts' adoptions ended so, summed
	_s=0
	for h in h2 h3; do
		_v=$(metric $h "factory_fleet_adopted_total{as=\"$1\"}")
		_s=$((_s + ${_v:-0}))
	done
	echo $_s
}
check "P1: metrics: one adoption done" [ "$(adopted done)" = 1 ]
check "P1: its pin never changes (the database refuses)" \
    sh -c "! $PSQL -c \"UPDATE fleet_publications SET pinned_commit =
    repeat('0', 40) WHERE attempt = '$P1'\" 2>/dev/null"
restart_h1
p1h1() {
	[ "$(hctl h1 -j show "$P1" | jq -r .terminated)" = true ]
}
check "P1: h1 started again ends its copy" until_true 60 p1h1
check "P1: and sends no outcome for it (superseded)" \
    until_true 30 sent_superseded h1 "$P1"
check "P1: still one pull record" [ "$(records "$P1")" = 1 ]

# P2: h1 dies just after the pin, before its publication was asked.
restart_h1 FACTORY_CRASH=parent:fleet-pinned
check "P2: cordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h3"
P2=$(sub 1 t1 "$T/h1/shared.yaml")
check "P2: submitted ($P2)" [ -n "$P2" ]
check "P2: h1 pins it and dies at the crash point" until_true 180 h1dead
wait "$(pid_of h1)" 2>/dev/null
PIDS=$(setnth 1 - $PIDS)
check "P2: pinned, nothing on the forge" \
    [ "$(state "$P2") $(test -n "$(pinned "$P2")" && echo pin) $(forge_at "$P2")" = "publishing pin " ]
check "P2: uncordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h3"
p2ended() { [ "$(state "$P2")" = failed ]; }
check "P2: adopted, and failed" until_true 90 p2ended
echo "# P2: $(col "$P2" "claims || ' ' || coalesce(ran_on, '') || ': ' || reason")"
check "P2: because the branch never reached the forge" \
    sh -c "$PSQL -c \"SELECT reason FROM fleet_attempts WHERE id = '$P2'\" |
    grep -q '^adoption after h1 was lost: branch factory/$P2 is not on the forge'"
# An adoption counts a claim: one to run it, one to finish it.
check "P2: never run again: claimed once, adopted once" \
    [ "$(col "$P2" claims)" = 2 ]
check "P2: no host claimed it to run again" \
    [ "$(cat "$T/h1/log" "$T/h2/log" "$T/h3/log" | grep -c "fleet: claimed $P2 ")" = 1 ]
check "P2: metrics: one adoption failed" [ "$(adopted failed)" = 1 ]
check "P2: no branch, no pull record" \
    [ "$(forge_at "$P2")$(records "$P2")" = 0 ]
restart_h1
p2h1() {
	[ "$(hctl h1 -j show "$P2" | jq -r .terminated)" = true ]
}
check "P2: h1 started again ends its copy, superseded" until_true 60 p2h1
check "P2: and sends no outcome for it" until_true 30 sent_superseded h1 "$P2"

# P3: a publication to h1's own forge lost the same way.  Every host's
# "twin" names one path, but not as shared: h1's own, as on hosts with
# their own disks.  h2 and h3 never adopt it; h1, started again, does,
# and finds nothing pushed.
restart_h1 FACTORY_CRASH=parent:fleet-pinned
check "P3: cordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h3"
P3=$(sub 1 t1 "$T/h1/twin.yaml")
check "P3: submitted ($P3); h1 pins it and dies" until_true 180 h1dead
wait "$(pid_of h1)" 2>/dev/null
PIDS=$(setnth 1 - $PIDS)
check "P3: uncordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h3"
p3adoptable() { [ "$(state "$P3")" = adoptable ]; }
check "P3: swept, adoptable" until_true 60 p3adoptable
sleep 4
check "P3: still adoptable: no host of another forge took it" \
    [ "$(state "$P3")" = adoptable ]
check "P3: the queue says it waits to be finished from the forge" \
    sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' -j queue | jq -e --arg id '$P3' \
    '.queue[] | select(.id == \$id and (.why | startswith(\"lost while publishing\")))'"
restart_h1
p3ended() { [ "$(state "$P3")" = failed ]; }
check "P3: h1 started again adopts it, and fails it: never pushed" \
    until_true 90 p3ended
check "P3: h1 it was" [ "$(col "$P3" "coalesce(ran_on, '')")" = h1 ]
check "P3: neither h2 nor h3 adopted it" \
    sh -c "! grep -q 'fleet: adopted $P3' $T/h2/log $T/h3/log"

# L: a publication that waited in a busy publisher past its lease's end
# is never begun.  h1's publisher sleeps 20 s after its first
# publication (the fault point) and the second waits behind it; h1 is
# stopped, the database lets both go, and h2 or h3 adopt them: the
# first is on the forge, done; the second is not, failed.  When h1's
# publisher comes to the second, its lease is long over: it must not
# publish it (it did before: a branch and a pull request of an attempt
# the fleet had failed).
restart_h1 FACTORY_CRASH=publisher:slow-after-publish
check "L: cordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' cordon h3"
L1=$(sub 1 t1 "$T/h1/shared.yaml")
L2=$(sub 1 t1 "$T/h1/shared.yaml")
check "L: submitted ($L1, $L2)" [ -n "$L1" -a -n "$L2" ]
lslow() { grep -q 'fault point publisher:slow-after-publish: 20 s' "$T/h1/log"; }
check "L: h1 published one, and its publisher sleeps" until_true 180 lslow
if [ -n "$(forge_at "$L1")" ]; then LF=$L1 LS=$L2; else LF=$L2 LS=$L1; fi
lsent() { [ "$(state "$LS")" = publishing ]; }
check "L: the other is publishing, its request with the publisher" \
    until_true 60 lsent
sleep 1
kill -STOP "$(pid_of h1)"
check "L: uncordon h2 and h3" sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h2 &&
    '$O/factoryctl' -s '$T/h2/factoryd.sock' uncordon h3"
lfdone() { [ "$(state "$LF")" = done ]; }
check "L: the one on the forge is adopted, done" until_true 90 lfdone
lsfailed() { [ "$(state "$LS")" = failed ]; }
check "L: the one never pushed is adopted, failed" until_true 90 lsfailed
lcame() { grep -Eq "$LS: (not begun|published branch)" "$T/h1/log"; }
check "L: h1's publisher came to it, with h1 stopped" until_true 90 lcame
check "L: and did not begin it: its lease's end had passed" \
    grep -q "$LS: not begun: its lease's end passed" "$T/h1/log"
check "L: no branch and no pull record of the failed one" \
    [ "$(forge_at "$LS")$(records "$LS")" = 0 ]
kill -CONT "$(pid_of h1)"
lends() {
	for _id in "$LF" "$LS"; do
		[ "$(hctl h1 -j show "$_id" | jq -r .terminated)" = true ] ||
		    return 1
	done
}
check "L: h1 ends its copies" until_true 90 lends
check "L: the done one: one branch, at its pin, one pull record" \
    [ "$(forge_at "$LF") $(records "$LF")" = "$(pinned "$LF") 1" ]
restart_h1

# V: a reload that changes where a repository publishes is what the
# database has of the host, as claims and adoptions match it.
forges_of() { q "SELECT array_to_string(forges, ',') FROM fleet_hosts WHERE host = '$1'"; }
V0=$(forges_of h3)
sed -i "s|pulls: $T/twin/pulls}|pulls: $T/twin/pulls, shared: yes}|" "$T/h3/factoryd.conf"
check "V: h3 reloads, twin said shared" "$O/factoryctl" -s "$T/h3/factoryd.sock" reload
vmoved() { [ "$(forges_of h3)" != "$V0" ]; }
check "V: its forges in the database move with it" until_true 30 vmoved
# sha256sum's hex (this script's cut(1) is its relay cut)
VK=$(printf 'local\n%s' "$T/twin/remote.git" | sha256sum | awk '{print $1}')
check "V: twin's is the key of a shared remote now, not before" \
    sh -c "echo '$(forges_of h3)' | tr ',' '\\n' | grep -qx '$VK' &&
    ! echo '$V0' | tr ',' '\\n' | grep -qx '$VK'"
# The fleet block stays the running one's over a reload: a repository
# that publishes to GitHub is refused beside its adopt-after of 1 s,
# though the file now says 330 s.
cp "$T/h3/factoryd.conf" "$T/h3/factoryd.conf.v"
sed -i 's/^  adopt-after: 1s$/  adopt-after: 330s/' "$T/h3/factoryd.conf"
sed -i "s|^repositories:|&\n  gh:\n    path: $T/twin/demo.git\n    publish: {forge: github, api: 'https://api.github.com', owner: o, repo: r, repository-id: 1, app-id: 1, installation-id: 1, key: /nonexistent/app.pem}|" \
    "$T/h3/factoryd.conf"
check "V: a reload that adds a GitHub repository is refused" \
    sh -c "'$O/factoryctl' -s '$T/h3/factoryd.sock' reload 2>&1 |
    grep -q 'adopt-after, 1 s as the daemon started, is less than a GitHub'"
mv "$T/h3/factoryd.conf.v" "$T/h3/factoryd.conf"

# E: the database restarted under running attempts.
: >"$T/e.ids"
for i in 1 2 3 4 5 6; do
	h=$(( (i % 3) + 1 ))
	sub $h t$(( (i % 3) + 1 )) "$T/h$h/mid.yaml" >>"$T/e.ids"
done
sleep 2
pg_as "$PGBIN/pg_ctl" -D "$T/pgdata" -m immediate -w -t 120 restart \
    >/dev/null 2>&1
check "E: the database restarted" pg_as "$PGBIN/pg_isready" -h "$DB_SOCK" -q
eall() {
	for id in $(cat "$T/e.ids"); do
		[ "$(state "$id")" = done ] || return 1
	done
}
check "E: six attempts, none lost: all done" until_true 180 eall
q "SELECT id, state, claims, coalesce(reason, '') FROM fleet_attempts
    ORDER BY seq" | sed 's/^/# /'
eone() {
	for id in $(cat "$T/e.ids"); do
		[ "$(branches "$id")" = 1 ] || return 1
	done
}
check "E: one branch each" eone

# F: an operator drains a host under a running attempt.  h1 and h3
# cordoned, F runs on h2; drained with a 2 s deadline, h2 hands it
# back; h1 uncordoned runs it.
ctl1() { "$O/factoryctl" -s "$T/h1/factoryd.sock" "$@"; }
check "F: cordon h1" ctl1 cordon h1
check "F: cordon h3" ctl1 cordon h3
F=$(sub 2 t2 "$T/h2/mid.yaml")
check "F: claimed by h2, running" until_true 60 claimed_running "$F"
check "F: h2 it is" [ "$(owner "$F")" = h2 ]
check "F: drain h2 with a 2 s deadline" ctl1 drain -t 2s h2
check "F: hosts says h2 draining" \
    sh -c "'$O/factoryctl' -s '$T/h1/factoryd.sock' -j hosts |
    jq -e '.hosts[] | select(.host == \"h2\" and .state == \"draining\")'"
fback() { [ "$(state "$F")" = queued ]; }
check "F: at the deadline h2 hands it back to the queue" until_true 60 fback
check "F: with the reason" \
    until_true 30 sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' -j show '$F' |
    jq -e '.terminated and (.reason | startswith(\"drained: handed back\"))'"
check "F: uncordon h1" ctl1 uncordon h1
check "F: h1 runs it to done (claimed twice)" \
    until_true 90 sh -c "[ \"\$($PSQL -c \"SELECT state || ' ' || claims || ' ' || owner_host FROM fleet_attempts WHERE id = '$F'\")\" = 'done 2 h1' ]"
check "F: one branch" [ "$(branches "$F")" = 1 ]
check "F: a user who is not root may not cordon, and is told why" \
    sh -c "setpriv --reuid 73709 --regid 73709 --groups 73710 \
    '$O/factoryctl' -s '$T/h1/factoryd.sock' cordon h1 2>&1 |
    grep -q 'cordon: refused: only root changes'"
ctl1 uncordon h2 >/dev/null
ctl1 uncordon h3 >/dev/null

# G: a tenant paused with a note waits, and says why; resumed, it runs.
check "G: pause t3 with a note" ctl1 pause --tenant t3 -m "maintenance window"
G=$(sub 3 t3 "$T/h3/quick.yaml")
gwhy() {
	"$O/factoryctl" -s "$T/h3/factoryd.sock" -j queue | jq -e --arg id "$G" \
	    '.queue[] | select(.id == $id and .why == "its tenant is paused: maintenance window")'
}
check "G: queue says it waits for the pause, with the note" until_true 20 gwhy
sleep 2
check "G: still queued two seconds later" [ "$(state "$G")" = queued ]
check "G: resume --fleet" ctl1 resume --fleet
check "G: then it runs to done" \
    until_true 60 sh -c "[ \"\$($PSQL -c \"SELECT state FROM fleet_attempts WHERE id = '$G'\")\" = done ]"

# R: ninety short attempts of three tenants weighted 1:2:1, through
# the three hosts.  Queued while the fleet is paused, then let go: none
# lost (each done, claimed once, its nonce on its branch), and until
# the first tenant's queue ran dry, claims in the weights' shares.
check "R: pause the fleet while ninety are submitted" \
    ctl1 pause --fleet -m "filling the queue"
: >"$T/r.ids"
i=0
while [ $i -lt 90 ]; do
	h=$(( (i / 3) % 3 + 1 ))
	write_manifest "$T/h$h/r$i.yaml" "echo nonce-$i >> README.md" \
	    "grep -q nonce-$i README.md"
	echo "$(sub $h "t$(( i % 3 + 1 ))" "$T/h$h/r$i.yaml") $i" >>"$T/r.ids"
	i=$((i + 1))
done
check "R: ninety queued" [ "$(awk 'NF == 2' "$T/r.ids" | wc -l)" = 90 ]
rgauge() {
	[ "$(metric h1 'factory_fleet_queued{tenant="t2",class="normal"}')" = 30 ] &&
	    metric h1 'factory_fleet_queue_age_seconds{tenant="t2",class="normal"}' |
	    awk '{exit !($1 > 0)}'
}
check "R: metrics: thirty of t2's wait, the oldest for a while" \
    until_true 30 rgauge
RIDS=$(awk '{printf "%s'"'"'%s'"'"'", (NR > 1 ? "," : ""), $1}' "$T/r.ids")
R0=$(date +%s)
check "R: resume the fleet" ctl1 resume --fleet
rall() {
	[ "$(q "SELECT count(*) FROM fleet_attempts WHERE id IN ($RIDS)
	    AND state IN ('done', 'failed', 'cancelled', 'dead')")" = 90 ]
}
check "R: all ninety ended" until_true 900 rall
echo "# R: ninety attempts through three hosts in $(( $(date +%s) - R0 )) s"
q "SELECT ran_on, count(*) FROM fleet_attempts WHERE id IN ($RIDS)
    GROUP BY ran_on ORDER BY ran_on" | sed 's/^/# R: ran on /'
check "R: every one done, claimed once" \
    [ "$(q "SELECT count(*) FROM fleet_attempts WHERE id IN ($RIDS)
    AND state = 'done' AND claims = 1")" = 90 ]
rnonces() {
	while read -r id n; do
		h=$(q "SELECT ran_on FROM fleet_attempts WHERE id = '$id'")
		git --git-dir="$T/$h/remote.git" -c safe.directory='*' show \
		    "refs/heads/factory/$id:README.md" 2>/dev/null |
		    grep -qx "nonce-$n" || { echo "# R: $id: no nonce-$n"; return 1; }
	done <"$T/r.ids"
}
check "R: each one's nonce on its own branch" rnonces
# The claims in order, until a tenant's last one: all three waited.
q "SELECT tenant FROM fleet_attempts WHERE id IN ($RIDS) ORDER BY claimed" \
    >"$T/r.order"
rshares=$(awk '{ n[$1]++; c++; if (n[$1] == 30) exit }
    END { printf "%d %d %d %d", c, 100 * n["t1"] / c, 100 * n["t2"] / c,
    100 * n["t3"] / c }' "$T/r.order")
echo "# R: claims while all waited, and shares t1 t2 t3: $rshares"
check "R: shares within 5 points of 25 50 25, over the first $(nth 1 $rshares) claims" \
    sh -c "echo $rshares | awk '{exit !(\$1 >= 50 && \$2 >= 20 && \$2 <= 30 &&
    \$3 >= 45 && \$3 <= 55 && \$4 >= 20 && \$4 <= 30)}'"

# The operator's view of tenants and usage.
check "tenants: three, with their weights, nothing running, none paused" \
    sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' -j tenants | jq -e '
    [.tenants[] | [.tenant, .weight, .running, .held]] ==
    [[\"t1\", 1, 0, false], [\"t2\", 2, 0, false], [\"t3\", 1, 0, false]]'"
"$O/factoryctl" -s "$T/h2/factoryd.sock" usage --since 1h | sed 's/^/# /'
ndone=$(q "SELECT count(*) FROM fleet_attempts WHERE state IN ('done',
    'failed', 'cancelled')")
check "usage: every attempt that ended is counted ($ndone)" \
    sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' -j usage --since 1h |
    jq -e '([.usage[].attempts] | add) == $ndone'"
check "usage: with the CPU and wall time they took" \
    sh -c "'$O/factoryctl' -s '$T/h2/factoryd.sock' -j usage --since 1h |
    jq -e '([.usage[].cpu_seconds] | add) > 0 and
    ([.usage[].wall_seconds] | add) > 10'"

check "top: a fleet line, live" \
    sh -c "'$O/factoryctl' -s '$T/h1/factoryd.sock' top -1 | grep -q '^fleet: host h1 epoch [0-9]*  live'"
check "metrics: no host is fenced now" \
    [ "$(metric h1 factory_fleet_fenced)$(metric h2 factory_fleet_fenced)$(metric h3 factory_fleet_fenced)" = 000 ]

# Throughout, and at the end.
stop_pid "$SAMPLER"
SAMPLER=""
check "the sampler ran ($(grep -c '^tick' "$T/samples") samples)" \
    [ "$(grep -c '^tick' "$T/samples")" -gt 100 ]
check "it saw live sandboxes ($(grep -c '^live' "$T/samples") sightings)" \
    [ "$(grep -c '^live' "$T/samples")" -gt 20 ]
check "never two live sandboxes of one attempt" \
    sh -c "! grep -q '^double' '$T/samples'"
# What a failure needs to be understood: each double, when, and what
# the hosts logged of that attempt.
awk '/^(double|near)/ { d = d $0 "\n" } /^tick/ && d != "" { printf "%s", d;
    print "  at " $2; d = "" }' "$T/samples" | head -20 | sed 's/^/# /'
for _i in $(awk '/^double/ { print $2 }' "$T/samples" | sort -u | head -3); do
	for h in h1 h2 h3; do
		grep -a "$_i" "$T/$h/log" | tail -12 | sed "s/^/# $h: /"
	done
done
# Every published attempt: one branch on all the forges together, at
# the commit its host pinned, and one pull request.
onepub() {
	q "SELECT a.id || ' ' || coalesce(p.pinned_commit, '-')
	    FROM fleet_attempts a LEFT JOIN fleet_publications p
	    ON p.attempt = a.id WHERE a.state = 'done'" |
	while read -r id pin; do
		_b=0 _r=0 _at=""
		for f in h1 h2 h3 shared twin; do
			_c=$(git --git-dir="$T/$f/remote.git" -c safe.directory='*' \
			    rev-parse -q --verify "refs/heads/factory/$id" 2>/dev/null) &&
			    { _b=$((_b + 1)); _at=$_c; }
			[ -f "$T/$f/pulls/$id.json" ] && _r=$((_r + 1))
		done
		[ "$_b $_r $_at" = "1 1 $pin" ] ||
		    { echo "# $id: $_b branches, $_r pull records, at $_at, pinned $pin"; return 1; }
	done
}
ndone=$(q "SELECT count(*) FROM fleet_attempts WHERE state = 'done'")
check "every one of the $ndone published: one branch at its pinned commit, one pull request" onepub
counters() { [ "$(q "SELECT sum(running) FROM fleet_tenants")" = 0 ]; }
check "the tenants' running counters are back at 0" until_true 30 counters
check "nothing owned, nothing running in the database" \
    [ "$(q "SELECT count(*) FROM fleet_attempts WHERE state IN ('claimed',
    'running', 'publishing')")" = 0 ]
orphans() {
	[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name 'a-2*' \
	    -path '*/factory/*' 2>/dev/null)" ]
}
check "no orphan cgroup on any host" until_true 30 orphans
alldown() {	# host: every attempt it has is torn down
	for id in $("$O/factoryctl" -s "$T/$1/factoryd.sock" -j list |
	    jq -r '.attempts[].id'); do
		[ "$("$O/factoryctl" -s "$T/$1/factoryd.sock" -j show "$id" |
		    jq -r .terminated)" = true ] || return 1
	done
}
for h in h1 h2 h3; do
	check "$h: every attempt ended and torn down" until_true 30 alldown $h
done
regress_done
