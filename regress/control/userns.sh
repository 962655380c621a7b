# regress/control: a user with subordinate uids presents many of them
# from a user namespace of its own; they share that user's connections
# on the .ro socket.  Sourced by run.sh ($T, $RO, $F).

OWN=65531
until_file() {	# FILE: until it holds a line, 10 s at most
	i=0
	while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
"$F" userns "$RO" $OWN 300000 64 0 6 >"$T/uns" &
U=$!
BGPIDS="$BGPIDS $U"
until_file "$T/uns"
kept=$(awk '$2 == 64 {print $4}' "$T/uns")
check "uid $OWN's user namespace: 64 uids keep at most 8 connections ($(cat "$T/uns"))" \
    [ "${kept:-999}" -le 8 ]
check "another uid is served on the .ro socket meanwhile" \
    as 65530 "$O/factoryctl" -s "$SOCK" status
check "the refusal names the user ($OWN)" \
    grep -q "connection of uid 3000[0-9][0-9] (user $OWN) refused" "$T/log"
wait "$U"

# Its own connections and those of a namespace inside its namespace
# share the one cap.
as $OWN "$F" conns "$RO" 4 8 >"$T/own" &
U1=$!
BGPIDS="$BGPIDS $U1"
until_file "$T/own"
"$F" userns "$RO" $OWN 300000 64 1 6 >"$T/uns2" &
U2=$!
BGPIDS="$BGPIDS $U2"
until_file "$T/uns2"
own=$(awk '{print $4}' "$T/own")
kept=$(awk '$2 == 64 {print $4}' "$T/uns2")
check "uid $OWN itself keeps its 4 connections ($(cat "$T/own"))" [ "${own:-0}" = 4 ]
check "a nested namespace of uid $OWN gets the other 4 at most ($(cat "$T/uns2"))" \
    [ "${kept:-999}" -le 4 ]
wait "$U1" "$U2"
# A peer that is gone before it is accepted: its namespace cannot be
# told, so it is refused (its pid may be anyone's by then).
kill -STOP "$P"
as 65529 "$F" connectexit "$RO" >"$T/cexit"
kill -CONT "$P"
i=0
while ! grep -q "connection of uid 65529 refused: its user namespace cannot be told" "$T/log" &&
    [ $i -lt 30 ]; do
	sleep 0.1; i=$((i + 1))
done
check "a peer gone before it was accepted is refused, and logged" \
    grep -q "connection of uid 65529 refused: its user namespace cannot be told" "$T/log"
check "root: status after the namespaces" ctl status
