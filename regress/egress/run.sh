#!/bin/bash
# network.allow through the real daemon: an agent reaches exactly the
# listed host:port destinations, by address and by name, and nothing
# else: not another port of the same host, not the host's other
# loopback services, not an unlisted address, no DNS, no UDP out.  A
# control case without network.allow reaches nothing.  The forwarding
# is factory-egress's, under its own uid and policy: factoryd holds no
# TCP connection; a killed factory-egress is restarted and gets the
# running sandboxes' endpoints again; out of descriptors it backs off
# instead of spinning.  Needs root.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../hostile/hlib.sh"
trap hostile_cleanup EXIT
H_UIDLO=64300		# apart from the hostile suite's uids
H_UIDHI=64399

if [ "$(id -u)" != 0 ]; then
	echo "not ok - egress: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "egress: needs jq"
command -v python3 >/dev/null || fail "egress: needs python3"

P=$O/regress/hostile
PROBE=$P/probe
h_setup

# The host: an echo server (A) and a recorder (B) that must stay
# silent, and the hostile suite's listener, a host service on loopback.
bg python3 "$(dirname "$0")/echo.py" >"$T/echo.out"
bg "$P/listen" "factory-egress.$$" "$T/run/egress.sock" >"$T/listen.out"
i=0
while { ! grep -q '^ready' "$T/echo.out" ||
    ! grep -q '^ready' "$T/listen.out"; } && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
read -r _ A B <<<"$(grep '^ready' "$T/echo.out")"
HPORT=$(awk '/^ready/ {print $2}' "$T/listen.out")
[ -n "$A" ] && [ -n "$B" ] && [ -n "$HPORT" ] ||
    fail "egress: host listeners did not start"

# A second name the host resolves to 127.0.0.1 (/etc/hosts), if any:
# allowed, it must work; the others listed there must not resolve.
ALIAS=$(awk '$1 == "127.0.0.1" { for (i = 2; i <= NF; i++)
    if ($i != "localhost" && $i ~ /^[a-z][a-z0-9.-]*$/) { print $i; exit } }' \
    /etc/hosts)
UNLISTED=$(awk -v a="$ALIAS" '$1 ~ /^127\./ { for (i = 2; i <= NF; i++)
    if ($i != "localhost" && $i != a && $i ~ /^[a-z][a-z0-9.-]*$/) {
    print $i; exit } }' /etc/hosts)

start_factoryd "$T/factoryd.conf" "$T/log"
SNAP=$(snapshot 2>&1)

# The agent: each line "ACT: RESULT".
AGENT='t() {
	if exec 3<>"/dev/tcp/$2/$3"; then
		echo "ping-$1" >&3
		if read -r -t 10 l <&3; then echo "$1: $l"
		else echo "$1: no answer"; fi
		exec 3>&-
	else
		echo "$1: refused"
	fi
}
t addr 127.0.0.1 '$A'
t name localhost '$A'
[ -n "'$ALIAS'" ] && t alias "'$ALIAS'" '$A'
t port-b 127.0.0.1 '$B'
t other-addr 127.0.0.9 '$A'
t host-service 127.0.0.1 '$HPORT'
'$PROBE' tcp 127.0.0.1 '$B'
'$PROBE' tcp 127.0.0.1 '$HPORT'
'$PROBE' resolve example.org
[ -n "'$UNLISTED'" ] && '$PROBE' resolve "'$UNLISTED'"
echo udp >/dev/udp/127.0.0.1/'$HPORT'
echo "hosts: $(getent hosts localhost)"
echo done'
ALLOW="\"127.0.0.1:$A\", \"localhost:$A\""
[ -n "$ALIAS" ] && ALLOW="$ALLOW, \"$ALIAS:$A\""

# --- allowed: exactly the listed destinations ------------------------

manifest egress "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "network: {allow: [$ALLOW]}"
id=$(submit egress) && wait_done "$id" 60 || notok "egress: attempt did not end"
L=$(logf "$id")
check "allowed address 127.0.0.1:$A answers" grep -qx "addr: ping-addr" "$L"
check "allowed name localhost:$A answers" grep -qx "name: ping-name" "$L"
if [ -n "$ALIAS" ]; then
	check "allowed name $ALIAS:$A answers (via 127.0.0.2)" \
	    grep -qx "alias: ping-alias" "$L"
else
	ok "# SKIP no second loopback name in /etc/hosts"
fi
check "the echo server saw exactly the allowed pings" [ "$(grep '^A ' \
    "$T/echo.out" | sort | tr '\n' ' ')" = "$( { echo "A ping-addr";
    echo "A ping-name"; [ -n "$ALIAS" ] && echo "A ping-alias"; } | sort |
    tr '\n' ' ')" ]
check "same host, unlisted port: refused" grep -qx "port-b: refused" "$L"
refused "$id" "tcp 127.0.0.1:$B" "EACCES"
check "unlisted address, allowed port: refused" \
    grep -qx "other-addr: refused" "$L"
check "the host's loopback service: refused" \
    grep -qx "host-service: refused" "$L"
refused "$id" "tcp 127.0.0.1:$HPORT" "EACCES"
refused "$id" "resolve example.org" "(EAI_NONAME|EAI_AGAIN|EAI_FAIL)"
if [ -n "$UNLISTED" ]; then
	refused "$id" "resolve $UNLISTED" "(EAI_NONAME|EAI_AGAIN|EAI_FAIL)"
else
	ok "# SKIP no unlisted loopback name in /etc/hosts"
fi
check "the sandbox's hosts file maps localhost to 127.0.0.1" \
    grep -qE "^hosts: 127\.0\.0\.1 +localhost$" "$L"
check "the agent ran to its end" grep -qx done "$L"
check "recorder B: no connection" sh -c "! grep -q '^B' '$T/echo.out'"
check "host service: no connection, no datagram" \
    [ "$(grep -vc '^ready' "$T/listen.out")" = 0 ]
check "factoryd logged the allowed destinations" \
    grep -q "$id: egress allowed to 127.0.0.1:$A (127.0.0.1 port $A)" "$T/log"
state "$id" rejected "^tree: no change$" "egress agent"
outside "egress" "$id"

# --- the same agent without network.allow reaches nothing ------------

manifest none "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')"
id=$(submit none) && wait_done "$id" 60 || notok "none: attempt did not end"
L=$(logf "$id")
check "no allow list: 127.0.0.1:$A refused" grep -qx "addr: refused" "$L"
check "no allow list: localhost:$A refused" grep -qx "name: refused" "$L"
refused "$id" "tcp 127.0.0.1:$B" "(EACCES|ENETUNREACH)"
check "no allow list: the echo server saw nothing more" \
    [ "$(grep -c '^A ' "$T/echo.out")" = "$( [ -n "$ALIAS" ] && echo 3 ||
    echo 2)" ]
state "$id" rejected "^tree: no change$" "no-network agent"
outside "none" "$id"

# --- the forwarder is factory-egress, not factoryd ------------------

EGPID=$(ctl -j status | jq -r '.processes[] | select(.name == "egress") | .pid')
EGUID=61105
check "factory-egress runs (pid $EGPID)" [ "${EGPID:-0}" != 0 ]
check "factory-egress runs as its own uid $EGUID" \
    [ "$(awk '/^Uid:/ {print $2 $3 $4 $5}' /proc/$EGPID/status)" = \
    "$EGUID$EGUID$EGUID$EGUID" ]
check "factory-egress: Seccomp 2, NoNewPrivs 1" sh -c \
    "grep -q '^Seccomp:[[:space:]]*2' /proc/$EGPID/status &&
    grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$EGPID/status"
ctl -j policy >"$T/policy.json"
check "factoryctl policy: egress promises stdio inet dns recvfd" \
    [ "$(jq -r '.processes[] | select(.name == "egress") | .promises' \
    "$T/policy.json")" = "stdio inet dns recvfd" ]
check "factoryctl policy: egress applied its policy (landlock, seccomp)" \
    sh -c "jq -r '.processes[] | select(.name == \"egress\") | .applied' \
    '$T/policy.json' | grep -q 'seccomp: default kill-process'"
HOLD='exec 3<>/dev/tcp/127.0.0.1/'$A'
echo ping-held >&3
read -r -t 10 l <&3 && echo "held: $l"
sleep 6
exec 3>&-
echo done'
manifest held "$(jq -cn --arg s "$HOLD" '["/bin/bash", "-c", $s]')" "" \
    "network: {allow: [\"127.0.0.1:$A\"]}"
id=$(submit held)
if [ -n "$id" ] && wait_log "$id" '^held: ping-held$' 30; then
	ss -tnpH state established "( dport = :$A )" >"$T/ss.out"
	check "the held connection to $A is factory-egress's" \
	    grep -q "pid=$EGPID," "$T/ss.out"
	check "factoryd has no TCP connection to the destination" \
	    sh -c "! grep -q 'pid=$FACTORYD_PID,' '$T/ss.out'"
	check "factoryd has no TCP connection at all" \
	    sh -c "! ss -tnpH | grep -q 'pid=$FACTORYD_PID,'"
	wait_done "$id" 60 || notok "held: attempt did not end"
else
	notok "held: the agent's connection was not forwarded"
fi

# --- a restarted factory-egress gets the running sandboxes again -----

RESTART='t() {
	if exec 3<>"/dev/tcp/$2/$3"; then
		echo "ping-$1" >&3
		if read -r -t 10 l <&3; then echo "$1: $l"
		else echo "$1: no answer"; fi
		exec 3>&-
	else
		echo "$1: refused"
	fi
}
t before 127.0.0.1 '$A'
sleep 6
t after 127.0.0.1 '$A'
echo done'
manifest restart "$(jq -cn --arg s "$RESTART" '["/bin/bash", "-c", $s]')" "" \
    "network: {allow: [\"127.0.0.1:$A\"]}"
id=$(submit restart)
if [ -n "$id" ] && wait_log "$id" '^before: ' 30; then
	kill -KILL "$EGPID"
	wait_done "$id" 60 || notok "restart: attempt did not end"
	L=$(logf "$id")
	check "before factory-egress is killed: forwarded" \
	    grep -qx "before: ping-before" "$L"
	check "after its restart: forwarded again" grep -qx "after: ping-after" "$L"
	check "factoryd logged the lost factory-egress" \
	    grep -q "egress (pid $EGPID) killed by signal 9" "$T/log"
else
	notok "restart: the agent did not start"
fi

# --- the forwarder out of descriptors: no busy loop, then service -----

# A test build's factory-egress with 20 descriptors (the egress:nofile
# fault point): a few forwarded connections use them up.
stop_factoryd
FACTORY_CRASH=egress:nofile start_factoryd "$T/factoryd.conf" "$T/log"
EGPID=$(ctl -j status | jq -r '.processes[] | select(.name == "egress") | .pid')
check "factory-egress started with 20 descriptors" \
    [ "$(awk '/^Max open files/ {print $4}' /proc/$EGPID/limits)" = 20 ]
FLOOD='echo start
sleep 3
for i in $(seq 1 40); do exec {fd}<>/dev/tcp/127.0.0.1/'$A' || break; done
echo opened
sleep 5
for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done 2>/dev/null
sleep 2
t() {
	if exec 3<>"/dev/tcp/$2/$3"; then
		echo "ping-$1" >&3
		if read -r -t 10 l <&3; then echo "$1: $l"
		else echo "$1: no answer"; fi
		exec 3>&-
	else
		echo "$1: refused"
	fi
}
t after 127.0.0.1 '$A'
echo done'
manifest emfile "$(jq -cn --arg s "$FLOOD" '["/bin/bash", "-c", $s]')" "" \
    "network: {allow: [\"127.0.0.1:$A\"]}"
id=$(submit emfile)
if [ -n "$id" ] && wait_log "$id" '^start$' 30; then
	ticks() { awk '{print $14 + $15}' /proc/$EGPID/stat; }
	lines0=$(wc -l <"$T/log")
	t0=$(ticks)
	sleep 5
	t1=$(ticks)
	lines=$(( $(wc -l <"$T/log") - lines0 ))
	check "egress at its descriptor limit: < 0.5s CPU in 5s ($((t1 - t0)) ticks)" \
	    [ $((t1 - t0)) -lt 50 ]
	check "egress at its descriptor limit: a few log lines ($lines)" \
	    [ "$lines" -lt 30 ]
	check "egress logged running out of descriptors, once" \
	    [ "$(grep -c "$id: egress to .*: accept: .*Too many open files" \
	    "$T/log")" = 1 ]
	wait_done "$id" 60 || notok "emfile: attempt did not end"
	L=$(logf "$id")
	check "egress serves the agent again once descriptors are back" \
	    grep -qx "after: ping-after" "$L"
else
	notok "emfile: the agent did not start"
fi

regress_done
