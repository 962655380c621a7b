#!/bin/sh
# One factoryd per state directory.  A second daemon started on the
# state directory of a running one stops before it touches anything,
# with one line naming the directory and the pid that holds it: the
# running daemon keeps its spare cgroups (the same directories), its
# control sockets (the same inodes), what its state directory holds,
# and runs attempts to their end.  The variants: the same config, with
# -k, without -d, another config reaching the state directory through
# a symlink, and factoryd -n, which needs no lock and makes nothing.
# A daemon of another state directory on the same control socket is
# refused there and replaces nothing.  SIGKILL frees the lock; a
# detached daemon's lock file names its own pid; a symlink or a FIFO
# in the lock file's place is refused.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 70004
write_attempt_conf "$T" 70000 70010-70039
write_manifest "$T/m.yaml" 'echo lock >> README.md' 'grep -q lock README.md'
tag=$(mkdir -p "$T/state" && printf %s "$(realpath "$T/state")" |
    sha256sum | cut -c1-8)

# The spare cgroups (hybrid hosts) with their inodes: a spare removed
# and made again has the same path but not the same inode.
spares() {
	for d in /sys/fs/cgroup/*/factory/$tag/.spare-*; do
		[ -d "$d" ] && echo "$d $(stat -c %i "$d")"
	done
}
# What a second daemon must leave alone: the state directory's tree
# (names, inodes, sizes), the sockets, the spares.
snapshot() {
	(cd "$T/state" && find . -path ./attempts -prune -o \
	    -path ./verify -prune -o -printf '%p %i %s\n' | sort)
	stat -c '%n %i' "$SOCK" "$SOCK.ro"
	spares
}
# A second daemon, expected to stop: its exit status and stderr.
# (check() sets $name.)  Bounded: a second daemon that does start is
# stopped after 20 s.
second() {	# what state-dir args...
	what=$1
	sd=$2
	shift 2
	[ -d "$T/state/setup/.tmp.running" ] || mkdir "$T/state/setup/.tmp.running"
	snapshot >"$T/before"
	timeout 20 "$O/factoryd" "$@" >"$T/out2" 2>&1
	st=$?
	sed 's/^/# /' "$T/out2"
	check "$what: exits 1 (exit $st)" [ "$st" = 1 ]
	check "$what: one line" [ "$(wc -l <"$T/out2")" = 1 ]
	check "$what: it names the state directory and the pid" \
	    grep -qx ".*state-dir $sd: in use by another factoryd (pid $FACTORYD_PID)" "$T/out2"
	snapshot >"$T/after"
	check "$what: nothing of the running daemon changed" \
	    cmp -s "$T/before" "$T/after"
	diff "$T/before" "$T/after" | sed 's/^/# /'
}

start_factoryd "$T/factoryd.conf" "$T/log"
spares >"$T/spares"
if [ -s "$T/spares" ]; then
	ok "the running daemon has its spares ($(wc -l <"$T/spares"))"
else
	echo "ok - # no spare cgroups on this host (cgroup v2 alone)"
fi
# What a start clears (a crash's leftover of a setup run) is the
# running daemon's own work in progress while it runs.

second "same config" "$T/state" -d -f "$T/factoryd.conf"
second "same config, -k" "$T/state" -dk -f "$T/factoryd.conf"
second "same config, detaching" "$T/state" -f "$T/factoryd.conf"
ln -s "$T/state" "$T/alias"
sed -e "s|^state-dir: .*|state-dir: $T/alias/|" \
    -e "s|^socket: .*|socket: $T/other.sock|" \
    "$T/factoryd.conf" >"$T/alias.conf"
second "through a symlink" "$T/alias/" -dk -f "$T/alias.conf"
check "through a symlink: no socket of its own" [ ! -e "$T/other.sock" ]

# -n checks the configuration only: no lock, nothing made.
snapshot >"$T/before"
"$O/factoryd" -n -f "$T/factoryd.conf" >"$T/out2" 2>&1
st=$?
check "-n while it runs: configuration OK (exit $st)" \
    sh -c "[ $st = 0 ] && grep -qx 'configuration OK' '$T/out2'"
snapshot >"$T/after"
check "-n while it runs: nothing changed" cmp -s "$T/before" "$T/after"
sed -e "s|^state-dir: .*|state-dir: $T/nostate|" "$T/factoryd.conf" \
    >"$T/nostate.conf"
"$O/factoryd" -n -f "$T/nostate.conf" >/dev/null 2>&1
check "-n: no state directory made" [ ! -e "$T/nostate" ]

# Another state directory, the same control socket: refused there.
mkdir "$T/keys2"
sed -e "s|^state-dir: .*|state-dir: $T/state2|" \
    -e "s|$T/keys/|$T/keys2/|" "$T/factoryd.conf" >"$T/sock.conf"
snapshot >"$T/before"
timeout 20 "$O/factoryd" -dk -f "$T/sock.conf" >"$T/out2" 2>&1
st=$?
tail -n 1 "$T/out2" | sed 's/^/# /'
check "the same socket: exits 1 (exit $st)" [ "$st" = 1 ]
check "the same socket: it says so" \
    grep -q "control socket $SOCK: in use by another factoryd" "$T/out2"
snapshot >"$T/after"
check "the same socket: nothing of the running daemon changed" \
    cmp -s "$T/before" "$T/after"
diff "$T/before" "$T/after" | sed 's/^/# /'
tag2=$(printf %s "$(realpath "$T/state2")" | sha256sum | cut -c1-8)
check "the same socket: the refused instance's cgroups are gone" \
    sh -c "! ls -d /sys/fs/cgroup/*/factory/$tag2 2>/dev/null | grep -q ."

check "the running daemon still answers" ctl status
rmdir "$T/state/setup/.tmp.running" 2>/dev/null
id=$(submit_wait "$T/m.yaml")
check "an attempt still runs to its end ($(field $id state))" \
    [ "$(field $id state)" = published ]
check "it still has as many spares" \
    [ "$(spares | wc -l)" = "$(wc -l <"$T/spares")" ]

# A daemon killed leaves the lock to the next.
kill -KILL "$FACTORYD_PID"
wait "$FACTORYD_PID" 2>/dev/null
FACTORYD_PID=""
sleep 0.5
start_factoryd "$T/factoryd.conf" "$T/log"
check "after SIGKILL: the next daemon starts (its stale sockets replaced)" ctl status
check "  ... and its lock file says its pid" \
    [ "$(cat "$T/state/lock")" = "$FACTORYD_PID" ]
stop_factoryd

# Detached: the pid in the lock file is the daemon's, not its parent's.
"$O/factoryd" -k -f "$T/factoryd.conf" 2>>"$T/log"
st=$?
check "detached: started (exit $st)" [ "$st" = 0 ]
wait_children "$SOCK"
pid=$(cat "$T/state/lock")
wpid=$(ctl -j status | jq -r '.processes[] | select(.name=="worker") | .pid')
ppid=$(awk '/^PPid:/ {print $2}' "/proc/$wpid/status")
check "detached: the lock file names the daemon ($pid, the worker's parent $ppid)" \
    [ -n "$pid" ] && [ "$pid" = "$ppid" ]
FACTORYD_PID=$ppid
timeout 20 "$O/factoryd" -d -f "$T/factoryd.conf" >"$T/out2" 2>&1
check "detached: a second one names it" grep -q "(pid $ppid)" "$T/out2"
stop_factoryd
check "detached: stopped" sh -c "! kill -0 $ppid 2>/dev/null"
check "no spare cgroup left" \
    sh -c "! ls -d /sys/fs/cgroup/*/factory/$tag/.spare-* 2>/dev/null | grep -q ."

# The lock file is the daemon's own: a symlink or a FIFO in its place
# is refused, before anything is made, and nothing is followed.
for kind in symlink fifo; do
	S=$T/state-$kind
	mkdir "$S"
	case $kind in
	symlink) ln -s "$T/target" "$S/lock" ;;
	fifo) mkfifo "$S/lock" ;;
	esac
	sed -e "s|^state-dir: .*|state-dir: $S|" \
	    -e "s|^socket: .*|socket: $T/$kind.sock|" \
	    "$T/factoryd.conf" >"$T/$kind.conf"
	timeout 20 "$O/factoryd" -dk -f "$T/$kind.conf" >"$T/out2" 2>&1
	st=$?
	sed 's/^/# /' "$T/out2"
	check "a $kind for the lock file: refused (exit $st)" \
	    sh -c "[ $st = 1 ] && [ \$(wc -l <'$T/out2') = 1 ] && grep -q 'state-dir $S/lock: ' '$T/out2'"
	check "  ... nothing made" sh -c "[ ! -e '$T/target' ] && \
	    [ \$(ls -A '$S' | wc -l) = 1 ] && [ ! -e '$T/$kind.sock' ]"
done

regress_done
