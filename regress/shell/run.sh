#!/bin/bash
# factoryctl shell through the real daemon: an operator's command in a
# running attempt's sandbox runs as the agent would (its uid, seccomp,
# no_new_privs, no capabilities, its pid namespace and tree, Landlock),
# on a terminal factoryd allocated and whose master it hands to
# factoryctl, keeping none (no fd of the operator's goes in), with a
# fresh HOME, no startup file the agent could have written, and every
# process it started killed when it ends; it is
# refused on the .ro socket and for an attempt that is not running; it
# dies with the attempt and with its factoryctl.  Its waiter is the
# factory-sandbox binary, holding nothing of factoryd's memory.  Needs
# root.

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
command -v python3 >/dev/null || fail "shell: needs python3"
HERE=$(cd "$(dirname "$0")" && pwd)

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

# The agent plants every startup file a shell or readline could read
# from a place it can write (HOME was /tmp), each of which would leave
# a mark and start a reader of the terminal; and text with escape
# sequences for the operator to look at.
PLANT='for f in .bashrc .profile .shrc .kshrc .bash_profile .bash_login \
    .envrc .zshrc .mkshrc; do
	printf "echo ran >/tmp/ran%s\n(trap \"\" HUP; setsid sh -c \"exec cat >>/tmp/keys\" <&0 >/dev/null 2>&1 &)\n" "$f" >/tmp/$f
	cp /tmp/$f "$PWD/$f"
done
printf "set editing-mode vi\n" >/tmp/.inputrc
cp /tmp/.inputrc "$PWD/.inputrc"
printf "agent-says \033]0;retitled\007\033[2J done\n" >/tmp/evil
exec /bin/sleep 600'
manifest sleeper "$(shjson "$PLANT")"
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
check "nothing on factoryctl's stderr" [ ! -s "$T/shell.err" ]

OUT=$(echo "through stdin" | ctl shell "$id" -- /bin/cat)
check "stdin and stdout are relayed" [ "$OUT" = "through stdin" ]
ctl shell "$id" -- /bin/sh -c 'echo to-stderr >&2; exit 7' \
    >"$T/shell.out" 2>"$T/shell.err"
RC=$?
check "the command's exit status is factoryctl's" [ "$RC" = 7 ]
check "its stderr comes through the terminal, on stdout" \
    grep -qx to-stderr "$T/shell.out"
check "factoryctl's own stderr stays empty" [ ! -s "$T/shell.err" ]
OUT=$(ctl shell "$id" -- /bin/sh -c 'for f in 0 1 2; do
    readlink /proc/$$/fd/$f; done; [ -t 0 ] && [ -t 1 ] && echo terminal' \
    </dev/null 2>&1)
check "the command's stdio is a terminal, not factoryctl's pipes" \
    sh -c "echo '$OUT' | grep -qx terminal && ! echo '$OUT' |
    grep -qE 'pipe:|socket:|null'"
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

# --- hostile: the terminal is factoryd's, the session dies whole --------

# ptyrun OUT ROWS COLS ARGS... < script: factoryctl on a terminal of its own.
ptyrun() {
	local out=$1 r=$2 c=$3
	shift 3
	python3 "$HERE/ptyrun.py" "$out" "$r" "$c" "$O/factoryctl" -s "$SOCK" \
	    shell "$@"
}

# gone REGEX: no process of the attempt's uid matches, within 3 s.
gone() {
	local i=0
	while pgrep -u "$AUID" -f "$1" >/dev/null && [ $i -lt 30 ]; do
		sleep 0.1; i=$((i + 1))
	done
	! pgrep -u "$AUID" -f "$1" >/dev/null
}

# Session A: bash, interactive, on an operator's terminal of 37x101.
rm -f "$T/fds-checked"
ptyrun "$T/ptyA.out" 37 101 "$id" -- /bin/bash -i >"$T/ptyA.res" 2>&1 <<EOF &
expect \\\$ 15
mode
send echo "home=\$HOME n=\$(ls -A "\$HOME" | wc -l) owner=\$(stat -c %u "\$HOME") env=\${ENV-unset}"; bind -v | grep editing-mode; stty size\n
expect [0-9]+ [0-9]+\r\n
send echo x >"\$HOME/mine"; sleep 1001 & setsid sleep 1002 & (sh -c 'sleep 1003 &' &); echo "start""ed"\n
expect started
waitfile $T/fds-checked
resize 40 120
sleep 0.5
send stty size\n
expect 40 120
send cat /tmp/evil\n
expect done
send (trap '' HUP; setsid sh -c 'exec cat >>/tmp/keys' <&0 >/dev/null 2>&1 &); sleep 0.3; exit\n
wait 15
after SECRET-AFTER-EXIT\n
sleep 1
EOF
APID=$!
i=0
while ! pgrep -u "$AUID" -f "sleep 1003" >/dev/null && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
sleep 0.3
OPTY=""
NFD=0
BAD=""
for p in $(pgrep -u "$AUID" -f "sleep 100[123]|bash -i"); do
	for f in /proc/$p/fd/*; do
		[ -e "$f" ] || continue
		l=$(readlink "$f")
		NFD=$((NFD + 1))
		case $l in
		/dev/pts/*)
			[ -z "$OPTY" ] && OPTY=$l
			[ "$l" = "$OPTY" ] || BAD="$BAD $p:$l" ;;
		/dev/null) ;;	# sh -c gives a background job that
		*)	BAD="$BAD $p:$l" ;;
		esac
	done
done
# The session's master is factoryctl's alone: factoryd handed it over.
ROOTPTMX=$(find /proc/$FACTORYD_PID/fd -lname '*ptmx' 2>/dev/null | wc -l)
CTLPTMX=none
for p in $(pgrep -f "shell $id -- /bin/bash -i"); do
	[ "$(readlink /proc/$p/exe)" = "$(readlink -f "$O/factoryctl")" ] &&
	    CTLPTMX=$(find /proc/$p/fd -lname '*ptmx' 2>/dev/null | wc -l)
done
# What another process of the attempt (another session, as the agent
# would) sees of that HOME: an empty root-owned directory it cannot
# write.
OTHER=$(ctl shell "$id" -- /bin/sh -c 'for d in /tmp/.factory-home-*; do
	[ "$d" = "$HOME" ] && continue
	echo "seen $(stat -c %u "$d") $(ls -A "$d" 2>/dev/null | wc -l)"
	: 2>/dev/null >"$d/planted" && echo "planted"
done' </dev/null 2>&1)
touch "$T/fds-checked"
wait $APID
RES=$(cat "$T/ptyA.res")
echo "$RES" | sed 's/^/# /'
[ -z "$BAD" ] || echo "# not the session's terminal:$BAD"
check "the session's processes hold one terminal and nothing else ($NFD fds)" \
    [ -n "$OPTY" -a -z "$BAD" -a "$NFD" -ge 9 ]
check "that terminal is factoryd's pty, not the operator's" \
    [ "$OPTY" != "$(echo "$RES" | sed -n 's/^operator-pty //p')" ]
check "factoryd holds no pty master during the session" [ "$ROOTPTMX" = 0 ]
check "factoryctl holds the session's master ($CTLPTMX)" [ "$CTLPTMX" = 1 ]
check "factoryctl puts the operator's terminal in raw mode" \
    grep -qx 'mode: raw' "$T/ptyA.res"
check "HOME is a fresh empty directory of the attempt's uid, ENV unset" \
    grep -qa "home=/[^ ]* n=0 owner=$AUID env=unset" "$T/ptyA.out"
check "HOME is not /tmp" sh -c "! grep -qa 'home=/tmp ' '$T/ptyA.out'"
check "another process of the attempt sees that HOME empty, root's" \
    [ "$OTHER" = "seen 0 0" ]
check "HOME is gone after the session" sh -c "! '$O/factoryctl' -s '$SOCK' \
    shell '$id' -- /bin/sh -c 'ls -d /tmp/.factory-home-* | grep -vx \"\$HOME\"' \
    </dev/null"
check "no .inputrc of the agent's was read" \
    grep -qa "editing-mode emacs" "$T/ptyA.out"
check "the window size is passed (37 101)" grep -qa "^37 101" "$T/ptyA.out"
check "and a change of it (40 120)" grep -qa "40 120" "$T/ptyA.out"
check "the agent's escape sequences reach the operator through the relay" \
    grep -qaF "$(printf 'agent-says \033]0;retitled\007')" "$T/ptyA.out"
check "exit ends the session with status 0" grep -qx 'status 0' "$T/ptyA.res"
check "factoryctl restores the terminal on exit" \
    grep -qx 'restored yes' "$T/ptyA.res"
check "a background process dies at session end" gone "sleep 1001"
check "a setsid one too" gone "sleep 1002"
check "a double-forked one too" gone "sleep 1003"
check "the terminal's reader is gone too" gone "cat$"
OUT=$(ctl shell "$id" -- /bin/sh -c 'ls -A /tmp | grep "^ran" | tr "\n" " "
echo; cat /tmp/keys 2>/dev/null; echo keys-end' </dev/null 2>&1)
check "no startup file of the agent's ran" \
    [ "$(echo "$OUT" | sed -n 1p | tr -d ' ')" = "" ]
check "keystrokes after exit never reach the agent" \
    sh -c "echo '$OUT' | grep -q keys-end && ! echo '$OUT' | grep -q SECRET"

# Session B: sh, and the operator's connection goes (factoryctl killed).
ptyrun "$T/ptyB.out" 24 80 "$id" >"$T/ptyB.res" 2>&1 <<EOF
expect \\\$ 15
send setsid sleep 1011 & sleep 1012 & (trap '' HUP; setsid sleep 1013 &); echo "start""ed"\n
expect started
sleep 0.3
signal SIGKILL
wait 5
EOF
check "factoryctl killed: its setsid process dies" gone "sleep 1011"
check "its background process dies" gone "sleep 1012"
check "its HUP-ignoring double-forked one dies" gone "sleep 1013"
OUT=$(ctl shell "$id" -- /bin/sh -c 'ls -A /tmp | grep "^ran"' </dev/null 2>&1)
check "sh read no startup file either" [ -z "$OUT" ]

# Sessions C, D: factoryctl killed by a signal restores the terminal and
# the session dies with its connection.
for sig in TERM HUP; do
	ptyrun "$T/ptyC.out" 24 80 "$id" >"$T/ptyC.res" 2>&1 <<EOF
expect \\\$ 15
send setsid sleep 1021 & echo "start""ed"\n
expect started
signal SIG$sig
wait 5
EOF
	check "SIG$sig: factoryctl restores the terminal" \
	    grep -qx 'restored yes' "$T/ptyC.res"
	check "SIG$sig: and the session dies with it" gone "sleep 1021"
done
check "no session cgroup is left behind" sh -c "! ls -d \
    /sys/fs/cgroup/unified/factory/*/$id/shell-* \
    /sys/fs/cgroup/factory/*/$id/shell-* 2>/dev/null"

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

# --- no process of the session holds the parent's memory ----------------

# The waiter of a session (the parent of its command) is the
# factory-sandbox binary in its enter mode, not a fork of factoryd: it
# and the command hold no copy of the receipt signing key.
"$O/factoryctl" -s "$SOCK" shell "$id" -- /bin/sleep 304 >/dev/null 2>&1 &
CPID=$!
i=0
while ! SPID=$(pgrep -u "$AUID" -f "sleep 304") && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
WPID=$(awk '/^PPid:/ { print $2 }' /proc/$SPID/status 2>/dev/null)
check "the session's command and waiter found ($SPID, $WPID)" \
    [ -n "$SPID" -a -n "$WPID" ]
check "the waiter runs factory-sandbox" \
    [ "$(readlink /proc/$WPID/exe)" = "$(readlink -f "$O/factory-sandbox")" ]
check "the waiter's title names its attempt" \
    [ "$(tr '\0' ' ' </proc/$WPID/cmdline)" = "factory-sandbox enter $id " ]
keyhex=$(openssl pkey -in "$T/keys/receipt.key" -outform DER 2>/dev/null |
    tail -c 32 | od -An -tx1 | tr -d ' \n')
check "the control: the parent's memory holds the receipt key" \
    [ "$("$P/memscan" "$FACTORYD_PID" "$keyhex")" = found ]
check "the waiter's memory does not hold the receipt key" \
    [ "$("$P/memscan" "$WPID" "$keyhex")" = absent ]
check "the command's memory does not either" \
    [ "$("$P/memscan" "$SPID" "$keyhex")" = absent ]
kill -KILL $CPID
wait $CPID 2>/dev/null
check "and the session ends with its factoryctl" gone "sleep 304"
# Started any other way, the enter mode refuses before reading anything.
OUT=$("$O/factory-sandbox" enter "$id" </dev/null 2>&1 3>/dev/null 4>&-)
check "factory-sandbox enter, not from factoryd: refused" \
    [ "$OUT" = "factory-sandbox: fd 4 is not a seqpacket socket: not started by factoryd" ]
# enterraw NFDS BYTES: the launcher with the plan BYTES (python) and the
# error pipe, fds 5 to NFDS-1 on /dev/null; prints its error and status.
enterraw() {
	python3 -c '
import fcntl, os, socket, subprocess, sys
hi = lambda fd: fcntl.fcntl(fd, fcntl.F_DUPFD, 32)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
r, w = os.pipe()
a, b, r, w = hi(a.detach()), hi(b.detach()), hi(r), hi(w)
os.dup2(w, 3); os.dup2(b, 4)
fds = [3, 4]
for fd in range(5, int(sys.argv[3])):
	os.dup2(os.open("/dev/null", os.O_RDONLY), fd); fds.append(fd)
socket.socket(fileno=a).send(eval(sys.argv[4]))
p = subprocess.Popen([sys.argv[1], "enter", sys.argv[2]], pass_fds=fds)
for fd in fds + [w, b]: os.close(fd)
print(os.read(r, 512).decode(), p.wait())' "$O/factory-sandbox" "$id" "$@" 2>&1
}
OUT=$(enterraw 5 'b"SBXE"')
check "factory-sandbox enter without its fds: refused ($OUT)" \
    [ "$OUT" = "enter: fd 5 is missing 127" ]
OUT=$(enterraw 12 'b"SBXE" + b"\xff" * 64')
# (whatever the plan's version is now: plan.c's PLAN_VERSION)
check "an enter plan of garbage: refused naming the field ($OUT)" \
    sh -c "echo '$OUT' | grep -Eqx 'plan: version: not [0-9]+ 127'"
OUT=$(enterraw 12 'b"SBXP" + b"\x01\0\0\0"')
check "an agent's plan is not an enter plan ($OUT)" \
    [ "$OUT" = "plan: magic: not an enter plan 127" ]

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


# --- a slave handed out writes on after the session ----------------------
# A program the operator runs in the session hands its terminal (fd 0)
# to the agent, which writes into it for ever.  factoryctl reads at
# most CTL_SHELL_DRAIN bytes after the status and exits, even behind a
# slow terminal (here a reader of 80 KB/s): it must not relay the
# agent's writes, deaf to signals, long after the session ended.
SPAM='import socket, os, array, threading
def spam(fd):
    b = b"AGENT-AFTER-STATUS " * 200 + b"\n"
    while True:
        try: os.write(fd, b)
        except OSError: return
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("/tmp/fdsock"); os.chmod("/tmp/fdsock", 0o777); s.listen(8)
while True:
    c, _ = s.accept()
    m, anc, f, _ = c.recvmsg(16, socket.CMSG_SPACE(16))
    for l, t, d in anc:
        a = array.array("i"); a.frombytes(d[:4])
        threading.Thread(target=spam, args=(a[0],), daemon=True).start()'
SENDFD='import socket, array, time
for i in range(600):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("/tmp/fdsock"); break
    except OSError: s.close(); time.sleep(0.1)
s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
    array.array("i", [0]))])
time.sleep(1)'
SLOW='import sys, time
n = 0
while True:
    b = sys.stdin.buffer.read1(4096)
    if not b: break
    n += b.count(b"AGENT")
    time.sleep(0.05)
open(sys.argv[1], "w").write("%d\n" % n)'
manifest spammer "$(jq -cn --arg s "$SPAM" '["/usr/bin/python3", "-c", $s]')"
id=$(submit spammer) && wait_state "$id" running ||
    fail "shell: the spamming attempt did not start"
rm -f "$T/spam.pid"
( "$O/factoryctl" -s "$SOCK" shell "$id" -- /usr/bin/python3 \
    -c "$SENDFD" </dev/null 2>"$T/spam.err" & echo $! >"$T/spam.pid"
    wait $! ) |
    python3 -c "$SLOW" "$T/spam.count" &
SPIPE=$!
i=0
while [ ! -s "$T/spam.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
CPID=$(cat "$T/spam.pid")
i=0
while kill -0 "$CPID" 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1; i=$((i + 1))
done
check "factoryctl ends after the status though a handed-out slave writes on" \
    sh -c "! kill -0 $CPID 2>/dev/null"
kill -KILL "$CPID" 2>/dev/null
wait "$SPIPE" 2>/dev/null
check "the agent did write into the handed-out slave ($(cat "$T/spam.count" 2>/dev/null))" \
    [ "$(cat "$T/spam.count" 2>/dev/null || echo 0)" -gt 0 ]
ctl cancel "$id" >/dev/null
wait_done "$id" || notok "spammer: not torn down"

regress_done
