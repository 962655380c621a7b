#!/bin/bash
# factoryctl shell through the real daemon: an operator's command in a
# running attempt's sandbox runs as the agent would (its uid, seccomp,
# no_new_privs, no capabilities, its pid namespace and tree, Landlock),
# with factoryctl's stdio and exit status; it is refused on the .ro
# socket and for an attempt that is not running; it dies with the
# attempt and with its factoryctl.  Needs root.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../hostile/hlib.sh"
trap hostile_cleanup EXIT
H_UIDLO=64400		# apart from the other suites' uids
H_UIDHI=64499

if [ "$(id -u)" != 0 ]; then
	echo "not ok - shell: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "shell: needs jq"

P=$O/regress/hostile
h_setup
: >"$T/listen.out"	# snapshot() reads it
start_factoryd "$T/factoryd.conf" "$T/log"
SNAP=$(snapshot 2>&1)

# wait_state ID STATE [SECONDS]
wait_state() {
	local i=0 max=$(( ${3:-30} * 10 ))
	while [ $i -lt $max ]; do
		[ "$(show "$1" | jq -r .state)" = "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

manifest sleeper '["/bin/sleep", "120"]'
id=$(submit sleeper) && wait_state "$id" running ||
    fail "shell: the sleeping attempt did not start"
AUID=$(show "$id" | jq -r .uid)

# --- what the operator's command is --------------------------------------

OUT=$(ctl shell "$id" -- /bin/sh -c 'id -u; id -g; id -G; pwd
grep -E "^(Seccomp|NoNewPrivs|CapEff|CapPrm|CapBnd):" /proc/self/status
echo "pid: $$"
[ -e /proc/1 ] && echo "pid 1: visible" || echo "pid 1: hidden"
echo "procs: $(cat /proc/[0-9]*/comm | grep -c sleep) sleep"
echo "hostname: $(hostname)"
echo x 2>/dev/null >/etc/factory-shell-test && echo "etc: written" ||
    echo "etc: refused"
echo x >"$PWD/shell-was-here" && echo "tree: written"' 2>"$T/shell.err")
RC=$?
check "shell exits 0 like its command" [ "$RC" = 0 ]
check "runs as the attempt's uid $AUID" \
    [ "$(echo "$OUT" | sed -n 1p)" = "$AUID" ]
check "with its gid and no other group" [ "$(echo "$OUT" | sed -n 2,3p |
    tr '\n' ' ')" = "$AUID $AUID " ]
check "cwd is the attempt's tree" \
    sh -c "echo '$OUT' | sed -n 4p | grep -q '/attempts/$id/'"
check "Seccomp 2 (filter)" sh -c "echo '$OUT' | grep -qxE 'Seccomp:[[:space:]]+2'"
check "NoNewPrivs 1" sh -c "echo '$OUT' | grep -qxE 'NoNewPrivs:[[:space:]]+1'"
check "CapEff 0" sh -c "echo '$OUT' | grep -qxE 'CapEff:[[:space:]]+0+'"
check "CapPrm 0" sh -c "echo '$OUT' | grep -qxE 'CapPrm:[[:space:]]+0+'"
check "CapBnd 0" sh -c "echo '$OUT' | grep -qxE 'CapBnd:[[:space:]]+0+'"
# Its own pid namespace; and Landlock hides from /proc what is not in
# its domain or below: the agent's processes and pid 1 (root).
check "in the attempt's pid namespace (a small pid)" \
    [ "$(echo "$OUT" | sed -n 's/^pid: //p')" -lt 100 ]
check "pid 1 of the sandbox is hidden" \
    sh -c "echo '$OUT' | grep -qx 'pid 1: hidden'"
check "the agent's processes are hidden (another Landlock domain)" \
    sh -c "echo '$OUT' | grep -qx 'procs: 0 sleep'"
check "the sandbox's hostname" [ "$(echo "$OUT" | grep '^hostname:')" = \
    "hostname: $id" ]
check "Landlock: /etc not writable" sh -c "echo '$OUT' | grep -qx 'etc: refused'"
check "the tree is writable" sh -c "echo '$OUT' | grep -qx 'tree: written'"
check "nothing on stderr" [ ! -s "$T/shell.err" ]

OUT=$(echo "through stdin" | ctl shell "$id" -- /bin/cat)
check "stdin and stdout are factoryctl's" [ "$OUT" = "through stdin" ]
ctl shell "$id" -- /bin/sh -c 'echo to-stderr >&2; exit 7' \
    >/dev/null 2>"$T/shell.err"
RC=$?
check "the command's exit status is factoryctl's" [ "$RC" = 7 ]
check "stderr is factoryctl's" grep -qx to-stderr "$T/shell.err"
ctl shell "$id" -- /bin/sh -c 'kill -9 $$'
RC=$?
check "a command killed by signal 9 gives 137" [ "$RC" = 137 ]
ctl shell "$id" -- /nonexistent/tool 2>"$T/shell.err"
RC=$?
check "exec failure refused with the reason" [ "$RC" = 1 ] && check \
    "reason names the program" grep -q "exec /nonexistent/tool: No such file" \
    "$T/shell.err"
check "entry logged with the operator's uid" \
    grep -q "$id: shell entered by uid 0, pid [0-9]*: /bin/sh" "$T/log"
check "exit logged with the operator's uid" \
    grep -q "$id: shell of uid 0 ended, status 7" "$T/log"

# --- refusals -----------------------------------------------------------

"$O/factoryctl" -s "$SOCK.ro" shell "$id" -- /bin/true 2>"$T/shell.err"
RC=$?
check "refused on the .ro socket" [ "$RC" = 1 ]
check "with the reason" grep -q "read-only socket: request refused" \
    "$T/shell.err"
ctl shell a-19700101-9999 -- /bin/true 2>"$T/shell.err"
check "refused for an unknown attempt" grep -q "no such attempt" "$T/shell.err"
ctl shell "$id" -- sh 2>"$T/shell.err"
check "refused: a relative argv[0]" grep -q "absolute argv" "$T/shell.err"

# --- it ends with its factoryctl, and with the attempt --------------------

"$O/factoryctl" -s "$SOCK" shell "$id" -- /bin/sleep 301 &
CPID=$!
i=0
while ! pgrep -u "$AUID" -f "sleep 301" >/dev/null && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "a long shell command runs" pgrep -u "$AUID" -f "sleep 301"
kill -KILL $CPID
wait $CPID 2>/dev/null
i=0
while pgrep -u "$AUID" -f "sleep 301" >/dev/null && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "killing factoryctl kills the command" \
    sh -c "! pgrep -u $AUID -f 'sleep 301'"

# A fresh attempt: its shell, then its cancel.
wait_done "$id" 1 || ctl cancel "$id" >/dev/null
wait_done "$id" || notok "sleeper: not torn down"
id=$(submit sleeper) && wait_state "$id" running ||
    fail "shell: the second sleeping attempt did not start"
AUID=$(show "$id" | jq -r .uid)
ctl shell "$id" -- /bin/sleep 302 >/dev/null 2>&1 &
CPID=$!
i=0
while ! pgrep -u "$AUID" -f "sleep 302" >/dev/null && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
ctl cancel "$id" >/dev/null
wait $CPID
RC=$?
check "a shell open at cancel ends with the attempt (137)" [ "$RC" = 137 ]
wait_done "$id" || notok "sleeper: not torn down"
state "$id" cancelled "" "the entered attempt"
ctl shell "$id" -- /bin/true 2>"$T/shell.err"
RC=$?
check "refused for a cancelled attempt" [ "$RC" = 1 ]
check "naming its state" grep -q "is cancelled: only a running attempt" \
    "$T/shell.err"
outside "shell" "$id"

regress_done
