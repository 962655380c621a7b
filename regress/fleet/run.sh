#!/bin/sh
# The fleet's codec (prog_fleetcodec.c) against a lying peer's bytes,
# then factory-fleet against a real PostgreSQL of the suite's own (pg.sh),
# driven by a stand-in parent (prog_fleetdrv.c) under its real policy:
# the schema applied once by two children starting together, weighted
# fair shares between three tenants, strict priority, a tenant's cap
# and pause, every kind of stale write refused as superseded, one
# attempt per idempotency key, no attempt claimed twice by eight
# claimers at once, a claim the database lies about refused, a query
# past its deadline, and a malformed message killing the child.

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pg.sh"

command -v setpriv >/dev/null || fail "fleet: needs setpriv"
T=$(regress_tmpdir)
FUID=61994			# the fleet child's uid here
LOCKPID=""

cleanup() {
	[ -n "$LOCKPID" ] && kill -KILL "$LOCKPID" 2>/dev/null
	[ -s "$T/lockpid" ] && kill -KILL "$(cat "$T/lockpid")" 2>/dev/null
	pg_stop
	regress_cleanup
}
trap cleanup EXIT

# The codec first, alone: what a lying peer sends is refused.
"$O/regress/fleet/prog_fleetcodec" >"$T/codec.out" 2>&1 || REGRESS_FAILED=1
sed 's/^\(not \)\{0,1\}ok - /&codec: /' "$T/codec.out"

pg_start "$T" || fail "fleet: cannot start a PostgreSQL cluster"
ok "a cluster of the suite's own on $T/pgsock"

# drv NAME: the commands on stdin, the answers in $T/NAME.out.
drv() {
	"$O/regress/fleet/prog_fleetdrv" $FUID "$O/factory-fleet" \
	    >"$T/$1.out" 2>>"$T/fleet.log"
}

# The line of NAME.out that starts with the words given.
line() {	# name words...
	n=$1
	shift
	grep -m 1 "^$*" "$T/$n.out"
}

q() { $PSQL -c "$1"; }

# Two first starts at once: the migrations once, under the lock row.
printf 'start 0 boot-a\n' | drv boota &
a=$!
printf 'start 0 boot-b\n' | drv bootb &
b=$!
wait $a; wait $b
check "two children start together: both ready at schema 3" \
    sh -c "grep -q '^ready 0 1 3 active' $T/boota.out &&
    grep -q '^ready 0 1 3 active' $T/bootb.out"
check "the schema's lock row says version 3" \
    [ "$(q 'SELECT version FROM fleet_schema')" = 3 ]
check "migration 1 was applied once" \
    [ "$(grep -c 'applying migration 1' "$T/fleet.log")" = 1 ]
check "migration 2 was applied once" \
    [ "$(grep -c 'applying migration 2' "$T/fleet.log")" = 1 ]

# A host started again gets the next epoch; one given a higher one
# (its journal's) goes past it.
printf 'start 0 boot-a\nstart 1 boot-b 41\n' | drv reboot
check "a host started again is at epoch 2" line reboot "ready 0 2 3"
check "a host that knew epoch 41 is at 42" line reboot "ready 1 42 3"

# Shares: three tenants weighted 1:2:1, 100 claims.
{
	echo "start 0 fair-1 0 fair"
	echo "tenant 0 fa 1 1000 1000"
	echo "tenant 0 fb 2 1000 1000"
	echo "tenant 0 fc 1 1000 1000"
	i=0
	while [ $i -lt 60 ]; do
		echo "submit 0 fa 1 fair"
		echo "submit 0 fb 1 fair"
		echo "submit 0 fc 1 fair"
		i=$((i + 1))
	done
	i=0
	while [ $i -lt 100 ]; do
		echo "claim 0"
		i=$((i + 1))
	done
	echo "submit 0 fc 2 fair"
	echo "submit 0 fa 0 fair"
	echo "claim 0"
} | drv fair
shares=$(awk '$1 == "claimed" && n < 100 {n++; c[$3]++} END {
	if (n < 100) { print "only " n; exit }
	printf "%d %d %d", c["fa"], c["fb"], c["fc"] }' "$T/fair.out")
echo "# shares of 100 claims fa fb fc (weights 1:2:1): $shares"
check "100 claims, weights 1:2:1, each share within 5 points" \
    sh -c "echo $shares | awk '{exit !(\$1 >= 20 && \$1 <= 30 &&
    \$2 >= 45 && \$2 <= 55 && \$3 >= 20 && \$3 <= 30)}'"
urgent=$(sed -n 's/^submitted \([^ ]*\) new$/\1/p' "$T/fair.out" | tail -n 1)
check "an urgent attempt is the next claimed, before older normal ones" \
    sh -c "grep '^claimed' $T/fair.out | tail -n 1 | grep -q '^claimed $urgent fa 0 '"
check "the tenants' counters hold what was claimed" \
    [ "$(q "SELECT sum(running) FROM fleet_tenants WHERE name IN ('fa', 'fb', 'fc')")" = 101 ]

# Caps and pause: a tenant at its cap is passed over, then gets its
# slot back when an attempt ends; a paused tenant is not claimed.
{
	echo "start 0 cap-1 0 capped"
	echo "tenant 0 tcap 1 2 100"
	echo "tenant 0 tpause 1 100 100 paused"
	echo "submit 0 tpause 1 capped"
	echo "submit 0 tcap 1 capped"
	echo "submit 0 tcap 1 capped"
	echo "submit 0 tcap 1 capped"
	echo "claim 0"
	echo "claim 0"
	echo "claim 0"
	echo "outcome 0 @id @epoch claimed done"
	echo "claim 0"
	echo "claim 0"
} | drv cap
check "a tenant under its cap of 2 is claimed twice" \
    [ "$(sed -n 8,9p "$T/cap.out" | grep -c '^claimed .* tcap ')" = 2 ]
check "then not: a tenant at its cap, and a paused one: none" \
    [ "$(sed -n 10p "$T/cap.out")" = "result none" ]
check "an attempt done gives its slot back: claimed once more" \
    sh -c "sed -n 11,12p $T/cap.out | tr '\n' ' ' |
    grep -q '^result ok done claimed .* tcap '"
check "and then none again" [ "$(sed -n 13p "$T/cap.out")" = "result none" ]
check "the tenant's counter is at its cap" \
    [ "$(q "SELECT running FROM fleet_tenants WHERE name = 'tcap'")" = 2 ]
check "the paused tenant's attempt is still queued" \
    [ "$(q "SELECT state FROM fleet_attempts WHERE tenant = 'tpause'")" = queued ]

# A tenant's queue bound, and a cordoned host that claims nothing.
{
	echo "start 0 full-1 0 fullrepo"
	echo "tenant 0 tq 1 100 2"
	echo "submit 0 tq 1 fullrepo k1"
	echo "submit 0 tq 1 fullrepo k2"
	echo "submit 0 tq 1 fullrepo k3"
	echo "submit 0 tq 1 fullrepo k1"
} | drv full
check "a tenant with max_queued 2 queued takes no third" \
    [ "$(sed -n 5p "$T/full.out")" = "result refused the tenant's queue is full" ]
check "but its key still answers the attempt it made" \
    sh -c "sed -n 6p $T/full.out | grep -q '^submitted a-.* existing'"
q "UPDATE fleet_hosts SET state = 'cordoned' WHERE host = 'full-1'" >/dev/null
printf 'start 0 full-1 0 fullrepo\nclaim 0\nheartbeat 0\n' | drv cordon
check "a cordoned host stays cordoned when started again" \
    line cordon "ready 0 [0-9]* 3 cordoned"
check "a cordoned host claims nothing" line cordon "result none"
check "its heartbeat says cordoned" line cordon "result ok cordoned"

# Fencing: each stale write is answered superseded, and changes nothing.
{
	echo "start 0 fence-1 0 fenced"
	echo "start 1 fence-2 0 fenced"
	echo "tenant 0 tf 1 100 100"
	echo "submit 0 tf 1 fenced"
	echo "claim 0"
	echo "outcome 0 @id @epoch+1 claimed running"
	echo "outcome 0 @id @epoch-1 claimed running"
	echo "outcome 1 @id @epoch claimed running"
	echo "renew 1 @id @epoch"
	echo "outcome 0 @id @epoch running done"
	echo "outcome 0 @id @epoch claimed running"
	echo "renew 0 @id @epoch"
	# The same host started again: a new host epoch fences the old.
	echo "start 2 fence-1 0 fenced"
	echo "renew 0 @id @epoch"
	echo "outcome 0 @id @epoch running done"
	echo "heartbeat 0"
	echo "renew 2 @id @epoch"
	echo "heartbeat 2"
} | drv fence
n=0
for want in "result superseded" "result superseded" "result superseded" \
    "result superseded" "result superseded" "result ok running" \
    "result ok running" "ready 2 2 3 active" "result superseded" \
    "result superseded" "result superseded" "result ok running" \
    "result ok active"; do
	n=$((n + 1))
	got=$(grep -v '^ready [01] \|^result ok$\|^submitted\|^claimed' \
	    "$T/fence.out" | sed -n "${n}p")
	case $n in
	1) what="an epoch ahead" ;; 2) what="an epoch behind" ;;
	3) what="another host" ;; 4) what="another host's renew" ;;
	5) what="from a state it is not in" ;; 6) what="the owner's write" ;;
	7) what="the owner's renew" ;; 8) what="the host started again" ;;
	9) what="the old host epoch's renew" ;;
	10) what="the old host epoch's outcome" ;;
	11) what="the old host epoch's heartbeat" ;;
	12) what="the new host epoch adopts the old one's claim" ;;
	13) what="the new host epoch's heartbeat" ;;
	esac
	check "fencing: $what: $want" [ "$got" = "$want" ]
done
check "fencing: the attempt stayed running at its epoch" \
    [ "$(q "SELECT state FROM fleet_attempts WHERE tenant = 'tf'")" = running ]
check "fencing: adopted, it is owned at the host's new epoch" \
    [ "$(q "SELECT a.owner_epoch = h.epoch FROM fleet_attempts a
    JOIN fleet_hosts h ON h.host = a.owner_host WHERE a.tenant = 'tf'")" = t ]

# Back to the queue, claimed again: the first claim's epoch is stale.
{
	echo "start 0 fence-3 0 fenced2"
	echo "tenant 0 tg 1 100 100"
	echo "submit 0 tg 1 fenced2"
	echo "claim 0"
	echo "outcome 0 @id @epoch claimed queued handed-back"
} | drv requeue
id=$(awk '$1 == "claimed" {print $2}' "$T/requeue.out")
q "UPDATE fleet_attempts SET run_after = now() WHERE id = '$id'" >/dev/null
{
	echo "start 0 fence-3 0 fenced2"
	echo "claim 0"
	echo "outcome 0 @id @epoch-1 claimed running"
	echo "outcome 0 @id @epoch claimed running"
} | drv requeue2
check "handed back to the queue" line requeue "result ok queued"
check "claimed again at the next claim epoch" \
    sh -c "grep -q '^claimed $id tg 1 2 2' $T/requeue2.out"
check "the first claim's epoch is superseded, the second's writes" \
    sh -c "sed -n 3,4p $T/requeue2.out | tr '\n' ' ' |
    grep -q '^result superseded result ok running'"

# Idempotency: one attempt per (tenant, key), from any host, also when
# two submit at the same instant.
{
	echo "start 0 idem-1 0 idem"
	echo "start 1 idem-2 0 idem"
	echo "tenant 0 ti 1 100 100"
	echo "submit 0 ti 1 idem key-1"
	echo "submit 0 ti 1 idem key-1"
	echo "submit 1 ti 1 idem key-1"
	echo "submit 0 nosuch 1 idem key-1"
	echo "submit 1 ti 1 idem key-1 other"
} | drv idem
check "a key's first submission makes an attempt" \
    sh -c "sed -n 4p $T/idem.out | grep -q '^submitted a-.* new'"
check "the same key twice, from two hosts: the same attempt" \
    [ "$(sed -n 4,6p "$T/idem.out" | awk '{print $2}' | sort -u | wc -l)" = 1 ]
check "an unknown tenant is refused" line idem "result refused no such tenant"
check "the key again with another manifest is refused" \
    line idem "result refused the key names another manifest"
for i in 1 2 3 4; do
	printf 'start 0 idem-r%s 0 idem\nsubmit 0 ti 1 idem key-race\n' $i |
	    drv "idemr$i" &
	eval "p$i=\$!"
done
wait $p1; wait $p2; wait $p3; wait $p4
check "four submissions of one key at once: one attempt" \
    [ "$(q "SELECT count(*) FROM fleet_attempts WHERE idem_key = 'key-race'")" = 1 ]
check "and all four answered its id" \
    [ "$(cat "$T"/idemr?.out | awk '$1 == "submitted" {print $2}' |
    sort -u | wc -l)" = 1 ]

# Cancel: a queued attempt ends at once, a claimed one is asked.
{
	echo "start 0 cancel-1 0 cancels"
	echo "tenant 0 tx 1 100 100"
	echo "submit 0 tx 1 cancels"
	echo "cancel 0 @sub othertenant"
	echo "cancel 0 @sub"
	echo "cancel 0 @sub"
	echo "submit 0 tx 1 cancels"
	echo "claim 0"
	echo "cancel 0 @id"
	echo "renew 0 @id @epoch"
} | drv cancel
check "one who acts for another tenant may not cancel it" \
    [ "$(sed -n 4p "$T/cancel.out")" = "result refused no such attempt of your tenants waiting or running" ]
check "a queued attempt is cancelled at once" \
    [ "$(sed -n 5p "$T/cancel.out")" = "result ok cancelled" ]
check "an ended attempt cannot be cancelled again" \
    sh -c "sed -n 6p $T/cancel.out | grep -q '^result refused'"
check "a claimed attempt is asked; the owner's renew hears cancel" \
    sh -c "sed -n 9,10p $T/cancel.out | tr '\n' ' ' |
    grep -q '^result ok claimed result ok cancel'"

# Dead letters: handed back as often as its cap of claims allows.
{
	echo "start 0 dead-1 0 deadrepo"
	echo "tenant 0 td 1 100 100"
	echo "submit 0 td 1 deadrepo"
} | drv dead
for i in 1 2 3; do
	q "UPDATE fleet_attempts SET run_after = now() WHERE tenant = 'td'" >/dev/null
	printf 'start 0 dead-1 0 deadrepo\nclaim 0\noutcome 0 @id @epoch claimed queued lost\n' |
	    drv "dead$i"
done
check "an attempt handed back after its third claim is dead" \
    [ "$(q "SELECT state || ' ' || claims FROM fleet_attempts WHERE tenant = 'td'")" = "dead 3" ]
check "a dead attempt's slot is given back" \
    [ "$(q "SELECT running FROM fleet_tenants WHERE name = 'td'")" = 0 ]

# The sweep, by any host (no leader): a claim whose lease ran out goes
# back to the queue after a backoff, and its owner's writes are then
# superseded; a live claim is never taken; one lost while publishing
# is never run again; one at its cap of claims is dead.
{
	echo "start 0 lapse-1 0 lapsed"
	echo "start 1 lapse-2 0 lapsed"
	echo "tenant 0 tr 1 100 100"
	echo "submit 0 tr 1 lapsed"
	echo "submit 0 tr 1 lapsed"
	echo "claim 0"
	echo "claim 0"
	echo "rescue 1"
} | drv lapse
check "live claims are not swept" line lapse "rescued 0 0 0"
l1=$(awk '$1 == "claimed" {print $2 " " $5}' "$T/lapse.out" | sed -n 1p)
l2=$(awk '$1 == "claimed" {print $2}' "$T/lapse.out" | sed -n 2p)
q "UPDATE fleet_attempts SET lease_until = now() - interval '1 second'
    WHERE id = '${l1% *}'" >/dev/null
q "UPDATE fleet_attempts SET state = 'publishing',
    lease_until = now() - interval '1 second' WHERE id = '$l2'" >/dev/null
{
	echo "start 0 lapse-1 0 lapsed"
	echo "start 1 lapse-2 0 lapsed"
	echo "rescue 1"
	echo "rescue 0"
	echo "renew 0 $l1"
	echo "outcome 0 $l1 claimed done"
} | drv lapse2
check "another host sweeps both lapsed claims" \
    [ "$(sed -n 3p "$T/lapse2.out")" = "rescued 1 0 1" ]
check "a second sweep finds nothing" \
    [ "$(sed -n 4p "$T/lapse2.out")" = "rescued 0 0 0" ]
check "the former owner's renew is superseded" \
    [ "$(sed -n 5p "$T/lapse2.out")" = "result superseded" ]
check "and its outcome" [ "$(sed -n 6p "$T/lapse2.out")" = "result superseded" ]
check "the lapsed claim is queued again, after a backoff, owned by none" \
    [ "$(q "SELECT state || ' ' || (owner_host IS NULL) || ' ' ||
    (run_after > now()) FROM fleet_attempts WHERE id = '${l1% *}'")" = "queued true true" ]
check "with the reason" \
    [ "$(q "SELECT reason FROM fleet_attempts WHERE id = '${l1% *}'")" = \
    "rescued: the lease of lapse-1 at epoch 1 ran out" ]
check "the one lost while publishing is never run again" \
    [ "$(q "SELECT state || ': ' || reason FROM fleet_attempts WHERE id = '$l2'")" = \
    "dead: lost while publishing on lapse-1: no publish request pinned, never run again" ]
check "the tenant's slots are given back" \
    [ "$(q "SELECT running FROM fleet_tenants WHERE name = 'tr'")" = 0 ]
q "UPDATE fleet_attempts SET run_after = now(), claims = max_claims - 1
    WHERE id = '${l1% *}'" >/dev/null
printf 'start 1 lapse-2 0 lapsed\nclaim 1\n' | drv lapse3
q "UPDATE fleet_attempts SET lease_until = now() - interval '1 second'
    WHERE id = '${l1% *}'" >/dev/null
printf 'start 0 lapse-1 0 lapsed\nrescue 0\n' | drv lapse4
check "a lapsed claim at its cap of claims is dead" \
    [ "$(sed -n 2p "$T/lapse4.out")" = "rescued 0 1 0" -a \
    "$(q "SELECT state FROM fleet_attempts WHERE id = '${l1% *}'")" = dead ]

# A host does not claim again what it claimed before while another
# live host serves the repository; alone, it may.  A cancel asked of an
# owned claim is kept when it is swept or handed back.  A claim marked
# publishing is never handed back, only ended.
{
	echo "start 0 again-1 0 againrepo"
	echo "start 1 again-2 0 againrepo"
	echo "tenant 0 tq 1 100 100"
	echo "submit 0 tq 1 againrepo"
	echo "claim 0"
	echo "outcome 0 @id @epoch claimed queued handed-back"
} | drv again
aid=$(awk '$1 == "claimed" {print $2}' "$T/again.out")
q "UPDATE fleet_attempts SET run_after = now() WHERE id = '$aid'" >/dev/null
printf 'start 0 again-1 0 againrepo\nstart 1 again-2 0 againrepo\nclaim 0\nclaim 1\n' |
    drv again2
check "the host that had it does not claim it again" \
    [ "$(sed -n 3p "$T/again2.out")" = "result none" ]
check "the other host does" \
    sh -c "sed -n 4p $T/again2.out | grep -q '^claimed $aid tq 1 2 2'"
{
	echo "start 0 again-2 0 againrepo"
	echo "cancel 0 $aid"
	echo "outcome 0 $aid 2 claimed queued handed-back"
} | drv again3
check "a cancel asked, then the claim lost: cancelled, not queued" \
    [ "$(q "SELECT state FROM fleet_attempts WHERE id = '$aid'")" = cancelled ]
{
	echo "start 0 pub-1 0 pubrepo"
	echo "tenant 0 tp 1 100 100"
	echo "submit 0 tp 1 pubrepo"
	echo "claim 0"
	echo "outcome 0 @id @epoch claimed publishing"
	echo "outcome 0 @id @epoch claimed queued handed-back"
	echo "outcome 0 @id @epoch claimed done"
} | drv pub
check "a claim marked publishing" [ "$(sed -n 5p "$T/pub.out")" = "result ok publishing" ]
check "is never handed back" [ "$(sed -n 6p "$T/pub.out")" = "result superseded" ]
check "but ends done" [ "$(sed -n 7p "$T/pub.out")" = "result ok done" ]

# An operator's word: a host cordoned claims nothing, made active again
# it claims; a drain at its deadline says so to the draining host; a
# tenant paused with a note waits and says why, resumed it is claimed;
# an unknown host or tenant is refused.
{
	echo "start 0 op-1 0 oprepo"
	echo "tenant 0 to 1 100 100"
	echo "submit 0 to 1 oprepo"
	echo "sethost 0 op-1 cordoned 0"
	echo "claim 0"
	echo "sethost 0 op-1 active 0"
	echo "pause 0 to 1 maintenance-window"
	echo "claim 0"
	echo "pause 0 to 0"
	echo "claim 0"
	echo "sethost 0 op-1 draining 0"
	echo "heartbeat 0"
	echo "sethost 0 no-such-host cordoned 0"
	echo "pause 0 no-such-tenant 1"
} | drv ops
check "cordon: the host says cordoned" \
    [ "$(sed -n 4p "$T/ops.out")" = "result ok cordoned" ]
check "cordon: a cordoned host claims nothing" \
    [ "$(sed -n 5p "$T/ops.out")" = "result none" ]
check "uncordon: active again" [ "$(sed -n 6p "$T/ops.out")" = "result ok active" ]
check "pause: one tenant paused" [ "$(sed -n 7p "$T/ops.out")" = "result ok 1" ]
check "pause: its attempt is not claimed" \
    [ "$(sed -n 8p "$T/ops.out")" = "result none" ]
check "resume: its attempt is claimed" \
    sh -c "sed -n 10p $T/ops.out | grep -q '^claimed a-.* to 1'"
check "drain: past its deadline the heartbeat says drain-due" \
    [ "$(sed -n 12p "$T/ops.out")" = "result ok drain-due" ]
check "an unknown host is refused" \
    [ "$(sed -n 13p "$T/ops.out")" = "result refused no such host" ]
check "an unknown tenant is refused" \
    [ "$(sed -n 14p "$T/ops.out")" = "result refused no such tenant" ]
printf 'start 0 op-2 0 oprepo\nsubmit 0 to 1 oprepo\npause 0 to 1 maintenance-window\n' |
    drv ops2
check "a paused tenant's attempt says why it waits, with the note" \
    [ "$(q "SELECT count(*) FROM fleet_tenants WHERE name = 'to' AND held
    AND held_note = 'maintenance-window'")" = 1 ]
printf 'start 0 op-2 0 oprepo\npause 0 - 0\n' | drv ops3
check "resume --fleet: every tenant" \
    [ "$(q "SELECT count(*) FROM fleet_tenants WHERE held")" = 0 ]

# Adoption: an attempt lost with its host while publishing, pinned, is
# adoptable at the sweep, a waiting one in the gauges and the queue.
# It is cancelled at once, by its own tenant's asker only; it is not
# adopted while its tenant is paused, held or at its cap, nor before
# adopt-after, and the queue says which; then it is adopted, counting
# a claim.  Lost again, it is adoptable again, until three claims past
# its cap: then dead.  Inside a session "sh" runs SQL between two
# requests: sqlrun changes rows, show prints "WORD VALUE", mark prints
# "== WORD" before a request whose answer after reads.
FA=$(printf '%064d' 1)
FB=$(printf '%064d' 2)
PINC=$(printf '%040d' 7)
oneline() { echo "$1" | tr '\n\t' '  '; }
sqlrun() { echo "sh $PSQL -c \"$(oneline "$1")\" >/dev/null"; }
show() { echo "sh $PSQL -c \"SELECT '$1 ' || ($(oneline "$2"))\""; }
mark() { echo "sh echo '== $1'"; }
after() {	# name word: the answer after "== word" and its "sh 0"
	awk -v m="== $2" 'f == 2 {print; exit} f == 1 {f = 2; next}
	    $0 == m {f = 1}' "$T/$1.out"
}
lapse="UPDATE fleet_attempts SET lease_until = now() - interval '1 second'"
lost="lost while publishing on adopt"
again=": adoptable, finished from the forge by a live host, never run again"
holder="FROM pg_stat_activity WHERE application_name = 'adopt-lock'"
holders() {	# N [COMMAND]: until N hold the lock (ten seconds), then it
	echo "sh i=0; until [ \"\$($PSQL -c \"SELECT count(*) $holder\")\"" \
	    "= $1 ]; do i=\$((i + 1)); [ \$i -lt 500 ] || exit 1;" \
	    "sleep 0.02; done; ${2:-:}"
}
adoptable() {	# tenant: an attempt of it claimed, pinned, lost
	echo "submit 0 $1 1 adrepo"
	echo "claim 0"
	echo "publish 0 @id @epoch $PINC $FA cGlu"
	sqlrun "$lapse WHERE tenant = '$1' AND state = 'publishing'"
	echo "rescue 1"
}
{
	echo "start 0 adopt-1 0 adrepo=$FA"
	echo "start 1 adopt-2 0 adrepo=$FA"
	echo "tenant 0 tad 1 100 100"
	echo "submit 0 tad 1 adrepo"
	echo "claim 0"
	mark publish
	echo "publish 0 @id @epoch $PINC $FA cGlu"
	sqlrun "$lapse WHERE tenant = 'tad'"
	echo "rescue 1"
	show swept "SELECT state || ': ' || reason FROM fleet_attempts
	    WHERE tenant = 'tad'"
	echo "gauges 1"
	mark queue
	echo "queue 1 tad"
	sqlrun "UPDATE fleet_attempts SET run_after = now() + interval '1 hour'
	    WHERE tenant = 'tad'"
	mark queue-later
	echo "queue 1 tad"
	mark adopt-later
	echo "adopt 1"
	mark cancel-other
	echo "cancel 1 @id othertenant"
	mark cancel
	echo "cancel 1 @id tad"
	show cancelled "SELECT state || ' ' || (ended IS NOT NULL) || ' ' ||
	    reason FROM fleet_attempts WHERE tenant = 'tad'"

	# Each pause on a tenant of its own: one adopted in spite of it
	# does not hide the next.
	echo "tenant 0 tpp 1 100 100"
	adoptable tpp
	echo "tenant 0 tpp 1 100 100 paused"
	mark paused
	echo "adopt 1"
	mark queue-paused
	echo "queue 1 tpp"
	echo "tenant 0 tpp 1 100 100"
	mark unpaused
	echo "adopt 1"
	echo "outcome 1 @id @epoch claimed done"

	echo "tenant 0 tph 1 100 100"
	adoptable tph
	echo "pause 0 tph 1 window"
	mark held
	echo "adopt 1"
	echo "pause 0 tph 0"
	mark unheld
	echo "adopt 1"
	echo "outcome 1 @id @epoch claimed done"

	echo "tenant 0 tpc 1 1 100"
	adoptable tpc
	echo "submit 0 tpc 1 adrepo"
	echo "claim 0"
	mark capped
	echo "adopt 1"
	mark queue-capped
	echo "queue 1 tpc"
	echo "outcome 0 @id @epoch claimed done"
	mark uncapped
	echo "adopt 1"
	echo "outcome 1 @id @epoch claimed done"

	# Its tenant's row locked by another (a claim, an adoption): it
	# is passed over at once, not waited for.  The holder's pid is in
	# lockpid until it is gone (cleanup's, if the test stops first).
	echo "tenant 0 tpa 1 100 100"
	adoptable tpa
	sqlrun "UPDATE fleet_attempts SET claimed = '2000-01-01'
	    WHERE tenant = 'tpa'"
	echo "sh PGAPPNAME=adopt-lock $PSQL -c \"BEGIN; SELECT 1 FROM" \
	    "fleet_tenants WHERE name = 'tpa' FOR UPDATE;" \
	    "SELECT pg_sleep(59)\" >/dev/null 2>&1 & echo \$! >$T/lockpid"
	holders 1
	mark locked
	echo "adopt 1"
	sqlrun "SELECT pg_terminate_backend(pid) $holder"
	holders 0 "rm -f $T/lockpid"
	mark unlocked
	echo "adopt 1"
	show counted "SELECT a.claims || ' ' || (a.claimed > now() -
	    interval '1 minute') || ' ' || t.running FROM fleet_attempts a
	    JOIN fleet_tenants t ON t.name = a.tenant
	    WHERE a.tenant = 'tpa' AND a.state = 'publishing'"
	for n in 2 3 4 5 6; do
		sqlrun "$lapse WHERE tenant = 'tpa' AND state = 'publishing'"
		echo "rescue 0"
		show "lost$n" "SELECT a.state || ' ' || a.claims || ' ' ||
		    t.running || ': ' || a.reason FROM fleet_attempts a
		    JOIN fleet_tenants t ON t.name = a.tenant
		    WHERE a.tenant = 'tpa'"
		mark "again$n"
		echo "adopt 1"
	done
} | drv adopt
is() { [ "$(after "$1" "$2")" = "$3" ]; }	# name word answer
has() { after "$1" "$2" | grep -q -- "$3"; }	# name word pattern
check "adoption: a pinned publishing mark" \
    is adopt publish "result ok publishing"
check "adoption: lapsed, the sweep makes it adoptable" \
    [ "$(line adopt swept)" = "swept adoptable: $lost-1$again" ]
check "adoption: the gauges count it as waiting" line adopt "gauge tad 1 1\$"
check "adoption: the queue says a host of its forge is to finish it" \
    has adopt queue ": lost while publishing: to be finished from the forge \
by a host that publishes to it\$"
check "adoption: the queue says adopt-after has not passed" \
    has adopt queue-later ": lost while publishing: adopt-after has not \
passed\$"
check "adoption: nor is it adopted before" is adopt adopt-later "result none"
check "adoption: another tenant's asker may not cancel it" \
    is adopt cancel-other \
    "result refused no such attempt of your tenants waiting or running"
check "adoption: its own tenant's cancels it at once" \
    is adopt cancel "result ok cancelled"
check "adoption: cancelled, ended, with the reason" \
    [ "$(line adopt cancelled)" = "cancelled cancelled true cancelled while \
adoptable: its branch may be on the forge, with no pull request" ]
cid() { awk -v t="$1" '$1 == "claimed" && $3 == t {print $2; exit}' \
    "$T/adopt.out"; }	# tenant: its first claim's id
check "adoption: not while its tenant is paused" is adopt paused "result none"
check "adoption: the queue says its tenant is paused" \
    has adopt queue-paused ": lost while publishing: its tenant is paused\$"
check "adoption: adopted once its tenant is not paused" \
    has adopt unpaused "^adopted $(cid tpp) [0-9]* adopt-1 $PINC\$"
check "adoption: not while its tenant is held by an operator" \
    is adopt held "result none"
check "adoption: adopted once its tenant is resumed" \
    has adopt unheld "^adopted $(cid tph) "
check "adoption: not while its tenant is at its cap" \
    is adopt capped "result none"
check "adoption: the queue says its tenant is at its cap" \
    has adopt queue-capped ": lost while publishing: its tenant is at its cap\$"
check "adoption: adopted once its tenant has a free slot" \
    has adopt uncapped "^adopted $(cid tpc) "
check "adoption: not while its tenant's row is locked by another" \
    is adopt locked "result none"
check "adoption: adopted once the lock is gone" \
    has adopt unlocked "^adopted $(cid tpa) "
check "adoption: it counts a claim, when, and takes its tenant's slot" \
    [ "$(line adopt counted)" = "counted 2 true 1" ]
for n in 2 3 4 5; do
	check "adoption: lost again at $n claims, adoptable again" \
	    [ "$(line adopt "lost$n")" = \
	    "lost$n adoptable $n 0: $lost-2$again" ]
	check "adoption: adopted again at $n claims" \
	    has adopt "again$n" "^adopted "
done
check "adoption: lost at 3 claims past its cap of 3: dead" \
    [ "$(line adopt lost6)" = "lost6 dead 6 0: $lost-2, 3 adoptions past its \
cap of claims: never adopted again" ]
check "adoption: and never adopted again" is adopt again6 "result none"

# Each adopter waits its own adopt-after since the sweep, not the
# sweeping host's: here ten minutes, where the sweeper's is 0.
export FLEET_ADOPT_AFTER_MS=600000
{
	echo "start 0 grace-1 0 grrepo=$FA"
	echo "start 1 grace-2 0 grrepo=$FA"
	echo "tenant 0 tgr 1 100 100"
	echo "submit 0 tgr 1 grrepo"
	echo "claim 0"
	echo "publish 0 @id @epoch $PINC $FA cGlu"
	sqlrun "$lapse WHERE tenant = 'tgr' AND state = 'publishing'"
	echo "rescue 0"
	mark early
	echo "adopt 1"
	sqlrun "UPDATE fleet_attempts SET run_after = now() - interval
	    '9 minutes' WHERE tenant = 'tgr'"
	mark nine
	echo "adopt 1"
	sqlrun "UPDATE fleet_attempts SET run_after = now() - interval
	    '11 minutes' WHERE tenant = 'tgr'"
	mark eleven
	echo "adopt 1"
} | drv grace
unset FLEET_ADOPT_AFTER_MS
check "grace: not adopted just after the sweep" is grace early "result none"
check "grace: nor nine minutes after it" is grace nine "result none"
gadopted() { after grace eleven | grep -q '^adopted '; }
check "grace: eleven minutes after it, adopted" gadopted

# A cancel asked while it published is kept when its host is lost:
# cancelled at the sweep, never adoptable (where no host would adopt
# it, since its cancel was asked, and it would wait for ever).
{
	echo "start 0 cpub-1 0 cprepo=$FA"
	echo "tenant 0 tcp 1 100 100"
	echo "submit 0 tcp 1 cprepo"
	echo "claim 0"
	echo "publish 0 @id @epoch $PINC $FA cGlu"
	mark cancel
	echo "cancel 0 @id tcp"
	sqlrun "$lapse WHERE tenant = 'tcp'"
	echo "rescue 0"
	show swept "SELECT state || ' ' || (ended IS NOT NULL) || ': ' ||
	    reason FROM fleet_attempts WHERE tenant = 'tcp'"
} | drv cpub
check "cancel while publishing: asked of its host" \
    is cpub cancel "result ok publishing"
check "cancel while publishing, then lost: cancelled, not adoptable" \
    [ "$(line cpub swept)" = "swept cancelled true: cancelled while \
publishing, then lost on cpub-1: its branch may be on the forge, with no \
pull request" ]

# What a host serves, again after a reload: its row's repositories and
# forges change, and it adopts by the new pair, not the old one; from a
# host's former epoch it is superseded.
{
	echo "start 0 serves-1 0 srvrepo"
	echo "start 1 serves-2 0 srvrepo=$FA"
	echo "tenant 0 tsv 1 100 100"
	echo "submit 0 tsv 1 srvrepo"
	echo "submit 0 tsv 1 srvrepo"
	echo "claim 0"
	echo "claim 0"
	echo "publish 0 @id1 @epoch1 $PINC $FA cGlu"
	echo "publish 0 @id @epoch $PINC $FB cGlu"
	sqlrun "$lapse WHERE tenant = 'tsv'"
	echo "rescue 1"
	mark serves
	echo "serves 1 srvrepo=$FB,other"
	show row "SELECT array_to_string(repos, ',') || ' ' ||
	    array_to_string(forges, ',') FROM fleet_hosts
	    WHERE host = 'serves-2'"
	mark new
	echo "adopt 1"
	mark old
	echo "adopt 1"
	echo "start 2 serves-2 0 srvrepo=$FA"
	mark stale
	echo "serves 1 srvrepo=$FB"
	show row2 "SELECT array_to_string(forges, ',') FROM fleet_hosts
	    WHERE host = 'serves-2'"
} | drv serves
newid=$(awk '$1 == "claimed" {print $2}' "$T/serves.out" | sed -n 2p)
check "serves: answered with the host's state" \
    is serves serves "result ok active"
check "serves: the host's row has its repositories and their forges" \
    [ "$(line serves "row ")" = "row srvrepo,other $FB," ]
check "serves: it adopts by the new pair" \
    has serves new "^adopted $newid "
check "serves: not by the old one" is serves old "result none"
check "serves: from the host's former epoch it is superseded" \
    is serves stale "result superseded"
check "serves: and the row keeps what the new epoch said" \
    [ "$(line serves row2)" = "row2 $FA" ]

# Eight claimers at once, on eight hosts: 300 attempts, each claimed
# exactly once.
{
	i=0
	while [ $i -lt 8 ]; do
		echo "start $i race-$i 0 racing"
		i=$((i + 1))
	done
	echo "tenant 0 ra 1 10000 10000"
	echo "tenant 0 rb 2 10000 10000"
	echo "tenant 0 rc 1 10000 10000"
	i=0
	while [ $i -lt 100 ]; do
		echo "submit 0 ra 1 racing"
		echo "submit 0 rb 1 racing"
		echo "submit 0 rc 1 racing"
		i=$((i + 1))
	done
	echo "race 8 340"
} | drv race
r=$(line race "race")
echo "# $r"
check "eight claimers: 300 claimed, none twice, no error" \
    sh -c "echo '$r' | grep -q 'claimed=300 none=40 errors=0 dupes=0'"
check "the table agrees: 300 claimed by 8 hosts" \
    [ "$(q "SELECT count(*) || ' ' || count(DISTINCT owner_host) FROM fleet_attempts WHERE repo = 'racing' AND state = 'claimed' AND epoch = 1")" = "300 8" ]

# The database restarted at once (pg_ctl restart -m immediate) under a
# child holding a claim: the link is made again, and the claim, its
# epochs and its fence hold across the restart.
{
	echo "start 0 crash-1 0 crashrepo"
	echo "tenant 0 tz 1 100 100"
	echo "submit 0 tz 1 crashrepo"
	echo "claim 0"
	echo "sh setpriv --reuid postgres --regid postgres --clear-groups" \
	    "$PGBIN/pg_ctl -D $T/pgdata -m immediate -w -t 120 restart" \
	    ">/dev/null 2>&1"
	echo "await 0"
	echo "outcome 0 @id @epoch-1 claimed running"
	echo "outcome 0 @id @epoch claimed running"
} | drv crash
check "the database restarted under the child" line crash "sh 0"
check "the child's link is made again" line crash "awaited ok active"
check "after the restart, a stale epoch is superseded, the owner writes" \
    sh -c "tail -n 2 $T/crash.out | tr '\n' ' ' |
    grep -q '^result superseded result ok running'"
check "the child logged the lost link" grep -q 'database: connected' \
    "$T/fleet.log"

# A claim whose row the database lies about goes no further.
q "INSERT INTO fleet_tenants (name, weight, max_running, max_queued)
    VALUES ('tl', 1, 10, 10);
    INSERT INTO fleet_attempts (id, seq, tenant, class, repo, digest,
    manifest, max_claims) VALUES ('a-BAD ID', nextval('fleet_attempt_seq'),
    'tl', 1, 'lies', 'sha256:00', 'x', 3)" >/dev/null
printf 'start 0 lies-1 0 lies\nclaim 0\n' | drv lies
check "a claimed row that does not decode is an error, not a claim" \
    line lies "result error a claim that does not decode"

# A query past its deadline: the answer is an error, the link is made
# again, the next request is answered.
q "INSERT INTO fleet_hosts VALUES ('slow-1', 1, 'active', 1, '{}', now(),
    now())" >/dev/null
{
	echo "BEGIN; SELECT 1 FROM fleet_hosts WHERE host = 'slow-1' FOR UPDATE;"
	echo "SELECT pg_sleep(600);"
} | $PSQL >/dev/null 2>&1 &
LOCKPID=$!
i=0
until [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'")" = 1 ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the lock holder did not start"
	sleep 0.1
done
FLEET_DEADLINE_MS=1000
export FLEET_DEADLINE_MS
printf 'start 0 slow-1 0 slow\n' | drv slow &
slowpid=$!
# The hello waits on the locked row past its deadline: the link is cut
# and made again, and the hello is said again until the lock goes.
i=0
until grep -q 'no answer within 1000 ms' "$T/fleet.log"; do
	i=$((i + 1))
	[ $i -lt 600 ] || break
	sleep 0.1
done
check "a query past its deadline is cut" \
    grep -q 'no answer within 1000 ms' "$T/fleet.log"
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE query LIKE 'SELECT pg_sleep%'" >/dev/null
wait $LOCKPID 2>/dev/null
LOCKPID=""
wait $slowpid
unset FLEET_DEADLINE_MS
check "the link made again, the host registers" line slow "ready 0 [0-9]* 3 active"

# The policy in force: seccomp filtering, no new privileges, its uid.
# Its status is read while it runs, by the driver's sh command.
{
	echo "start 0 policy-1 0 pol"
	echo "pid 0"
	echo "sh cat /proc/\$(sed -n 's/^pid //p' $T/policy.out)/status >$T/status"
} | drv policy
check "the child runs under a seccomp filter" \
    grep -q '^Seccomp:[[:space:]]*2' "$T/status"
check "with no new privileges" grep -q '^NoNewPrivs:[[:space:]]*1' "$T/status"
check "as its own uid, no groups" sh -c "grep -q '^Uid:[[:space:]]*$FUID' $T/status &&
    grep -q '^Groups:[[:space:]]*\$' $T/status"

# A malformed message from the parent: the child dies of it.
printf 'start 0 bad-1 0 bad\nbad 0\n' | drv bad
check "a CLAIM with a byte too many kills the child" line bad "exit 1"
check "and says why" grep -q 'FLEET_CLAIM: 1 bytes left over' "$T/fleet.log"

check "every child ran under its policy: no SIGSYS" \
    sh -c "! grep -q '^signal' $T/*.out"
regress_done
