#!/bin/bash
# The control sockets against a hostile local user: a uid that floods
# requests without reading the answers, opens every connection it can,
# holds idle ones, dribbles a header, lies in a length field or passes
# descriptors.  Meanwhile root's status and cancel on the read-write
# socket are served, factoryd's memory stays bounded, and idle
# connections are closed after control-idle-timeout.  Then (sourced):
# submissions whose clients vanish while they wait (waits.sh), readers
# that take an answer a little at a time (slow.sh), and one user's many
# uids from user namespaces of its own (userns.sh).  Needs root.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"

. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "not ok - control: needs root"
	exit 1
fi
command -v setpriv >/dev/null || fail "control: needs setpriv"
command -v jq >/dev/null || fail "control: needs jq"

F=$O/regress/control/prog_ctlflood
BGPIDS=""
ctl_cleanup() {
	for p in $BGPIDS; do
		kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	regress_cleanup
}
trap ctl_cleanup EXIT

# bg UID CMD...: a helper as another uid, remembered by pid.
bg() {
	u=$1
	shift
	setpriv --reuid "$u" --regid "$u" --clear-groups "$@" &
	BGPIDS="$BGPIDS $!"
}
as() {
	u=$1
	shift
	setpriv --reuid "$u" --regid "$u" --clear-groups "$@"
}
stop_bg() {
	for p in $BGPIDS; do
		kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	BGPIDS=""
}

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
RO=$SOCK.ro
IDLE=4
make_repos "$T" 61704
write_attempt_conf "$T" 61700 64700-64719
echo "control-idle-timeout: ${IDLE}s" >>"$T/factoryd.conf"
# Started with a low descriptor limit, factoryd raises it to what its
# configured bounds need.
hard=$(ulimit -Hn)
ulimit -Sn 128
start_factoryd "$T/factoryd.conf" "$T/log"
ulimit -Sn "$hard"
P=$FACTORYD_PID
soft=$(awk '/^Max open files/ {print $4}' /proc/$P/limits)
check "factoryd raised RLIMIT_NOFILE from 128 at start (to $soft)" \
    [ "$soft" -ge 1024 ]

rss() { awk '/^VmRSS:/ {print $2}' /proc/$P/status; }
nfds() { ls /proc/$P/fd | wc -l; }

# An ended attempt, for RECEIPTS, and a running one, to cancel.
write_manifest "$T/done.yaml" 'echo changed >>README.md'
DONE=$(submit_wait "$T/done.yaml" 60) || fail "control: first attempt"
n=$(ctl receipts "$DONE" | wc -c)
check "the ended attempt has receipts to flood with ($n bytes)" [ "$n" -gt 2000 ]
write_manifest "$T/long.yaml" 'sleep 60'
LONG=$(ctl submit "$T/long.yaml") || fail "control: submit"
wait_state "$LONG" running 120 || fail "control: $LONG never ran"

# --- flood without reading: memory stays bounded ----------------------

before=$(rss)
for i in 1 2 3; do
	bg 65534 "$F" flood "$RO" receipts "$DONE" 5000 30 >"$T/flood.$i"
	bg 65534 "$F" flood "$RO" status - 5000 30 >"$T/sflood.$i"
done
# Until every flooder has sent all it could, watching the peak RSS.
peak=$before
i=0
while [ $i -lt 200 ]; do
	r=$(rss)
	[ "$r" -gt "$peak" ] && peak=$r
	[ "$(cat "$T"/flood.* "$T"/sflood.* | wc -l)" = 6 ] && [ $i -ge 10 ] && break
	sleep 0.1
	i=$((i + 1))
done
sent=$(cat "$T"/flood.* "$T"/sflood.* | awk '{s += $2} END {print s}')
check "factoryd's RSS under a RECEIPTS/STATUS flood grows < 12 MiB ($before KiB -> $peak KiB, $sent requests taken)" \
    [ "$((peak - before))" -lt $((12 * 1024)) ]
check "flooding clients are not read past their unread answers ($sent of 30000)" \
    [ "${sent:-30000}" -lt 15000 ]
check "root: status on the rw socket during the flood" ctl status
check "uid 65534: status on the .ro socket during the flood" \
    as 65534 "$O/factoryctl" -s "$SOCK" status
stop_bg

# --- as many connections as one uid can open ------------------------

bg 65534 "$F" conns "$RO" 1000 15 >"$T/conns"
i=0
while [ ! -s "$T/conns" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kept=$(awk '{print $4}' "$T/conns")
check "one uid keeps at most 8 connections on the .ro socket (kept $kept)" \
    [ "${kept:-999}" -le 8 ]
check "root: status on the rw socket while one uid holds connections" \
    ctl status
check "another uid: status on the .ro socket meanwhile" \
    as 65533 "$O/factoryctl" -s "$SOCK" status

# Many uids fill the .ro socket; the rw one still serves root.
for u in $(seq 65000 65019); do
	bg "$u" "$F" conns "$RO" 20 15 >"$T/many.$u"
done
i=0
while [ "$(cat "$T"/many.* 2>/dev/null | wc -l)" -lt 20 ] && [ $i -lt 150 ]; do
	sleep 0.1; i=$((i + 1))
done
held=$(cat "$T"/many.* "$T/conns" | awk '{s += $4} END {print s}')
check "the .ro socket holds at most 64 connections ($held)" [ "$held" -le 64 ]
if ctl cancel "$LONG" >"$T/cancel.out" 2>&1; then
	ok "root: cancel on the rw socket while 21 uids fill the .ro one"
else
	notok "root: cancel on the rw socket while 21 uids fill the .ro one: $(cat "$T/cancel.out")"
fi
wait_terminated "$LONG" 30
check "the cancelled attempt ended cancelled" [ "$(field "$LONG" state)" = cancelled ]

# A member of the rw socket's group (a stand-in for _factoryctl) that
# floods it with connections leaves root room.
chgrp 64790 "$SOCK"
setpriv --reuid 64791 --regid 64790 --clear-groups "$F" conns "$SOCK" 500 10 \
    >"$T/member" &
BGPIDS="$BGPIDS $!"
i=0
while [ ! -s "$T/member" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kept=$(awk '{print $4}' "$T/member")
check "a group member keeps at most 16 rw connections (kept $kept)" \
    [ "${kept:-999}" -le 16 ]
check "root: status on the rw socket while a member floods it" ctl status
fds=$(nfds)
check "factoryd holds a bounded number of descriptors ($fds)" [ "$fds" -lt 200 ]
stop_bg

# --- idle connections are closed ------------------------------------

as 65534 "$F" idle "$RO" 8 $((IDLE + 6)) >"$T/idle"
check "idle connections are closed after ${IDLE}s ($(cat "$T/idle"))" \
    [ "$(awk '{print $4}' "$T/idle")" = 8 ]
check "an idle rw connection of root is closed too" \
    sh -c "'$F' idle '$SOCK' 1 $((IDLE + 6)) | grep -qx 'idle 1 closed 1'"
as 65534 "$F" slowloris "$RO" $((IDLE + 6)) >"$T/slow"
check "a header dribbled a byte a second is closed ($(cat "$T/slow"))" \
    grep -q '^closed after' "$T/slow"

# --- lies in the framing ---------------------------------------------

check "a 2 GiB length field closes the client" \
    sh -c "setpriv --reuid 65534 --regid 65534 --clear-groups '$F' hugelen '$RO' | grep -qx closed"
# Where the kernel has SO_PASSRIGHTS (6.16), the .ro socket refuses a
# descriptor to its sender: root never holds it, so never closes it.
if [ "$(uname -r | awk -F. '{print ($1 * 1000 + $2 >= 6016)}')" = 1 ]; then
	check "a descriptor on the .ro socket is refused to its sender (SO_PASSRIGHTS)" \
	    sh -c "setpriv --reuid 65534 --regid 65534 --clear-groups '$F' fdpass '$RO' | grep -qx refused"
else
	check "a descriptor on the .ro socket closes the client" \
	    sh -c "setpriv --reuid 65534 --regid 65534 --clear-groups '$F' fdpass '$RO' | grep -qx closed"
fi
check "a descriptor with STATUS on the rw socket closes the client" \
    sh -c "'$F' fdpass '$SOCK' | grep -qx closed"
check "64 descriptors in one message close the client" \
    sh -c "'$F' manyfds '$SOCK' | grep -qx closed"

# A descriptor whose release waits: the last reference of a TCP socket
# set to linger a minute, with data its peer never reads.  Reading or
# closing the client that sent it is where the daemon lets it go; that
# is bounded, and the sender's user is refused for a while (root never
# is).  Before Linux 6.16 any user may send one to the .ro socket.
sent() { i=0; while ! grep -qx sent "$1" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1)); done; grep -qx sent "$1"; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# linger WHAT OUT CMD...: CMD sends its descriptor (prints "sent"), and
# root's status is answered within 10 s all the same (a minute without
# the guard).
linger() {
	_what=$1 _out=$2
	shift 2
	"$@" >"$_out" &
	BGPIDS="$BGPIDS $!"
	sent "$_out" || notok "linger: $_what: the descriptor was not sent"
	_t0=$(date +%s%N)
	ctl status >/dev/null
	_ms=$(ms $_t0)
	check "$_what: root is answered in $_ms ms, not a minute" \
	    [ "$_ms" -lt 10000 ]
}
linger "root's lingering descriptor" "$T/linger.root" "$F" linger "$SOCK" 60
linger "a member's lingering descriptor" "$T/linger.member" \
    setpriv --reuid 64791 --regid 64790 --clear-groups "$F" linger "$SOCK" 60
held() { grep -q 'control: uid 64791 (user 64791) sent a descriptor whose release held the daemon' "$T/log"; }
i=0
while ! held && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "the daemon says whose descriptor held it" held
check "that member is refused for a while after" \
    sh -c "! setpriv --reuid 64791 --regid 64790 --clear-groups \
    '$O/factoryctl' -s '$SOCK' status"
check "another member is served meanwhile" \
    setpriv --reuid 64792 --regid 64790 --clear-groups \
    "$O/factoryctl" -s "$SOCK" status
# The same descriptor riding a whole request, the connection kept: the
# daemon drops it as the request's, under the same bound.
linger "a lingering descriptor with a whole request" "$T/linger.req" \
    "$F" lingerreq "$SOCK" 60
stop_bg
fds=$(nfds)
check "no descriptor leaked to factoryd ($fds)" [ "$fds" -lt 60 ]
check "root: status after the attacks" ctl status
check "uid 65534: status after the attacks" as 65534 "$O/factoryctl" -s "$SOCK" status
check "factoryd logged the refusals" grep -q "control: .*uid 65534" "$T/log"

# --- out of descriptors: no busy loop, service comes back -------------

ticks() { awk '{print $14 + $15}' /proc/$P/stat; }
lim=$(( $(nfds) + 4 ))
prlimit --pid "$P" --nofile=$lim: || fail "control: prlimit"
lines0=$(wc -l <"$T/log")
for u in $(seq 65000 65009); do
	bg "$u" "$F" conns "$RO" 8 8 >"$T/emfile.$u"
done
bg 0 "$F" conns "$SOCK" 16 8 >"$T/emfile.root"
sleep 1
t0=$(ticks)
sleep 3
t1=$(ticks)
lines=$(( $(wc -l <"$T/log") - lines0 ))
check "at the descriptor limit ($lim), factoryd uses < 0.3s CPU in 3s ($((t1 - t0)) ticks)" \
    [ $((t1 - t0)) -lt 30 ]
check "at the descriptor limit, the log grows by a few lines ($lines)" \
    [ "$lines" -lt 20 ]
check "factoryd logged running out of descriptors" \
    grep -q "control: .*accept.*: Too many open files" "$T/log"
stop_bg
i=0
while ! ctl status >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "the flood over, root is served again (limit still $lim)" ctl status
check "the flood over, uid 65534 is served again" \
    as 65534 "$O/factoryctl" -s "$SOCK" status
prlimit --pid "$P" --nofile=1024:

. "$(dirname "$0")/waits.sh"
. "$(dirname "$0")/slow.sh"
. "$(dirname "$0")/userns.sh"

regress_done
