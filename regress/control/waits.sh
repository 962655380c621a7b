# regress/control: requests answered later (a submission waits for the
# worker to resolve its baseline) and clients that vanish meanwhile.
# Sourced by run.sh (its helpers, $T, $SOCK, $F).  The worker is held
# with SIGSTOP so that submissions wait as long as the test needs.

wpid() { ctl -j status | jq -r '.processes[] | select(.name == "worker") | .pid'; }
nwaits() { ctl -j status | jq -r '.control.waits // "none"'; }
nattempts() { ctl -j list | jq '.attempts | length'; }
# until_waits N SECS: until status says N waits.
until_waits() {
	i=0
	while [ "$(nwaits)" != "$1" ] && [ $i -lt $(($2 * 10)) ]; do
		sleep 0.1; i=$((i + 1))
	done
	[ "$(nwaits)" = "$1" ]
}
titled() {	# FILE TITLE
	write_manifest "$1" "true"
	sed -i "s/^title: \"regress\"$/title: \"$2\"/" "$1"
}

wait_children "$SOCK" || fail "control: children not back"
W=$(wpid)
a0=$(nattempts)
kill -STOP "$W"
WPIDS=""
for i in 1 2 3 4 5 6 7 8; do
	titled "$T/w$i.yaml" "wait $i"
	"$O/factoryctl" -s "$SOCK" submit "$T/w$i.yaml" >"$T/w$i.out" 2>"$T/w$i.err" &
	eval "WP$i=$!"
	BGPIDS="$BGPIDS $!"
done
check "8 submissions wait for the held worker (status: $(nwaits) waits)" \
    until_waits 8 10
for i in 1 2 3 4; do
	eval "p=\$WP$i"
	{ kill -KILL "$p"; wait "$p"; } 2>/dev/null
done
check "4 clients killed: their waits are dropped at once ($(nwaits) left)" \
    until_waits 4 2
# New connections take the vanished ones' descriptors in the daemon.
for i in 9 10 11 12; do
	titled "$T/w$i.yaml" "wait $i"
	"$O/factoryctl" -s "$SOCK" submit "$T/w$i.yaml" >"$T/w$i.out" 2>"$T/w$i.err" &
	eval "WP$i=$!"
	BGPIDS="$BGPIDS $!"
done
check "4 new clients wait in their place ($(nwaits) waits)" until_waits 8 10
check "the daemon answers status meanwhile" ctl status
kill -CONT "$W"
for i in 5 6 7 8 9 10 11 12; do
	eval "wait \$WP$i"
done
crossed=0
for i in 5 6 7 8 9 10 11 12; do
	id=$(cat "$T/w$i.out")
	t=$(ctl -j show "$id" 2>/dev/null | jq -r .title)
	[ "$t" = "wait $i" ] || { crossed=1; echo "# client $i: '$id' is '$t'"; }
done
check "each waiting client got the answer to its own submission" \
    [ $crossed = 0 ]
check "no attempt for the vanished clients: 8 new attempts, not 12 ($(( $(nattempts) - a0 )))" \
    [ $(( $(nattempts) - a0 )) = 8 ]
check "the daemon logged the dropped submissions" \
    grep -q "control: uid 0 left: its submission .*dropped" "$T/log"
check "no wait left ($(nwaits))" until_waits 0 2
for i in 5 6 7 8 9 10 11 12; do
	id=$(cat "$T/w$i.out"); [ -n "$id" ] && wait_terminated "$id" 60
done

# The worker dies with submissions waiting: they are asked again of the
# restarted worker and answered, at once, not at the idle timeout.
W=$(wpid)
kill -STOP "$W"
for i in 1 2; do
	"$O/factoryctl" -s "$SOCK" submit "$T/w$i.yaml" >"$T/wl$i.out" 2>"$T/wl$i.err" &
	eval "WP$i=$!"
	BGPIDS="$BGPIDS $!"
done
until_waits 2 10 || notok "control: 2 submissions never waited"
t0=$(date +%s%N)
kill -KILL "$W"
wait "$WP1" "$WP2"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "the worker died: both waiting clients are answered within 5s ($ms ms)" \
    [ "$ms" -lt 5000 ]
check "the worker died: the restarted worker resolved both ($(cat "$T/wl1.err" "$T/wl2.err"))" \
    sh -c "grep -q '^a-' '$T/wl1.out' && grep -q '^a-' '$T/wl2.out'"
check "the worker died: no wait left ($(nwaits))" until_waits 0 2
wait_children "$SOCK" || fail "control: the worker did not come back"

# Clients that send a submission and close at once, or a few ms later,
# at random points of its way: whatever was journaled runs to its end
# (a closed connection cancels nothing); the rest leaves nothing.
a0=$(nattempts)
write_manifest "$T/gone.yaml" "true"
"$F" submitgone "$SOCK" "$T/gone.yaml" 30 >"$T/gone.out"
check "30 submissions sent and abandoned ($(cat "$T/gone.out"))" \
    grep -q '^sent 30$' "$T/gone.out"
check "no wait left after the abandoned submissions ($(nwaits))" \
    until_waits 0 5
n=$(( $(nattempts) - a0 ))
check "at most 30 attempts from 30 abandoned submissions ($n)" [ "$n" -le 30 ]
bad=0
for id in $(ctl -j list | jq -r ".attempts[$a0:][] | .id"); do
	wait_terminated "$id" 60 || { bad=1; continue; }
	# The agent changes nothing: rejected is its end.
	[ "$(field "$id" state)" = rejected ] || { bad=1; \
	    echo "# $id: $(field "$id" state)"; }
done
check "every journaled one of them ran to its end, none cancelled" \
    [ $bad = 0 ]

# A reconcile waits for the reconciler the same way: its client leaves,
# the wait goes; the next client's reconcile is taken, and answered.
R=$(ctl -j status | jq -r '.processes[] | select(.name == "reconciler") | .pid')
kill -STOP "$R"
"$O/factoryctl" -s "$SOCK" reconcile >/dev/null 2>&1 &
RP=$!
BGPIDS="$BGPIDS $RP"
check "a reconcile waits for the held reconciler ($(nwaits) waits)" \
    until_waits 1 10
{ kill -KILL "$RP"; wait "$RP"; } 2>/dev/null
check "its client killed: the wait is dropped at once ($(nwaits))" \
    until_waits 0 2
"$O/factoryctl" -s "$SOCK" reconcile >"$T/rc2.out" 2>&1 &
RP=$!
BGPIDS="$BGPIDS $RP"
until_waits 1 10
kill -CONT "$R"
wait "$RP"
check "the next client's reconcile is answered ($(head -n 1 "$T/rc2.out"))" \
    sh -c "! grep -q 'already running\|closed the connection' '$T/rc2.out'"
check "no wait left after the reconciles ($(nwaits))" until_waits 0 2
