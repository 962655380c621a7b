# Shared by the regress run.sh scripts: temp dirs, a daemon under test,
# assertions.  Everything made is removed on exit, also on failure.

: "${O:?O must name the build directory}"
REGRESS_FAILED=0
FACTORYD_PID=""

regress_cleanup() {
	stop_pid "$FACTORYD_PID"
	while read -r d; do
		if [ -n "${REGRESS_KEEP:-}" ]; then
			echo "# kept $d" >&2
			continue
		fi
		case $d in /tmp/factory-regress.*) ;; *) continue ;; esac
		# A test that failed half way may leave a mount behind.
		awk -v d="$d/" 'index($2, d) == 1 {print $2}' /proc/mounts |
		    sort -r | while read -r m; do umount -l "$m"; done
		rm -rf "$d"
	done <"$REGRESS_TMPLIST"
	rm -f "$REGRESS_TMPLIST"
}
trap regress_cleanup EXIT
trap 'exit 1' INT TERM

# Prints a new temp dir; it is removed on exit even though the caller
# runs this in a subshell: its name goes through a file.
REGRESS_TMPLIST=$(mktemp /tmp/factory-regress-list.XXXXXX)
regress_tmpdir() {
	d=$(mktemp -d /tmp/factory-regress.XXXXXX) || exit 1
	chmod 755 "$d"
	echo "$d" >>"$REGRESS_TMPLIST"
	echo "$d"
}

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; REGRESS_FAILED=1; }
fail() { notok "$*"; exit 1; }

# check "name" command args...: ok if the command succeeds.
check() {
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$name"; else notok "$name"; fi
}

# stop_pid PID: TERM, five seconds for it to go, then KILL; reaped if
# it is this shell's child.  Safe with an empty pid.
stop_pid() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null
	_sp=0
	while kill -0 "$1" 2>/dev/null && [ $_sp -lt 100 ]; do
		sleep 0.05; _sp=$((_sp + 1))
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Start factoryd -d in the background; back when it serves.
start_factoryd() {	# conf log
	"$O/factoryd" -dk -f "$1" 2>>"$2" &
	FACTORYD_PID=$!
	sock=$(awk '/^socket:/ {print $2}' "$1")
	if ! wait_serving "$sock" "$FACTORYD_PID"; then
		cat "$2" >&2
		fail "factoryd did not start"
	fi
}

# Until the factoryd of that pid answers on its socket, then until its
# children said hello (as before, not required: some tests keep one
# down); false once it died or after five minutes without an answer.
# A socket file alone proves nothing: one that died at a crash point
# leaves its own behind, refusing connections until the next binds.
wait_serving() {	# socket pid
	_until=$(($(date +%s) + 300))
	until "$O/factoryctl" -s "$1" -j status 2>/dev/null |
	    jq -e -n 'input | .processes' >/dev/null 2>&1; do
		kill -0 "$2" 2>/dev/null || return 1
		[ "$(date +%s)" -lt "$_until" ] || return 1
		sleep 0.05
	done
	wait_children "$1" 10
	return 0
}

# Until every child has said hello (the daemon already serves), at
# most seconds (five minutes unless told).  A child still not running
# then is named, with its restarts, and the wait fails: a child that
# dies at every start is a defect of the test's config or the daemon,
# never a slow machine.
wait_children() {	# socket [seconds]
	_until=$(($(date +%s) + ${2:-300}))
	until "$O/factoryctl" -s "$1" -j status 2>/dev/null | jq -e -n 'input |
	    [.processes[] | select(.state != "running")] | length == 0' \
	    >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$_until" ]; then
			echo "# wait_children: not running after ${2:-300} s:" \
			    "$("$O/factoryctl" -s "$1" -j status 2>&1 | jq -r -n \
			    '[input | .processes[] | select(.state != "running") |
			    "\(.name) \(.state), \(.restarts) restarts"] |
			    join("; ")' 2>&1)"
			return 1
		fi
		sleep 0.05
	done
}

stop_factoryd() {
	kill -TERM "$FACTORYD_PID"
	i=0
	while kill -0 "$FACTORYD_PID" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
	wait "$FACTORYD_PID" 2>/dev/null
	FACTORYD_PID=""
}

# Pids of processes whose real uid is $1.
uid_procs() {
	for s in /proc/[0-9]*/status; do
		awk -v u="$1" '/^Uid:/ && $2==u {found=1} END {exit !found}' "$s" 2>/dev/null &&
		    echo "${s%/status}" | sed 's|/proc/||'
	done
}

regress_done() {
	exit $REGRESS_FAILED
}

# A sample repository, its local remote and pull records dir, under $T:
# $T/demo.git (main: README.md, src/a.c), $T/remote.git, $T/pulls.
make_repos() {	# T publisher-uid
	git init -q -b main "$1/src" &&
	mkdir -p "$1/src/src" &&
	echo "hello" >"$1/src/README.md" &&
	printf 'int\nmain(void)\n{\n\treturn 0;\n}\n' >"$1/src/src/a.c" &&
	git -C "$1/src" add -A &&
	git -C "$1/src" -c user.name=test -c user.email=test@localhost \
	    commit -qm "initial" &&
	git clone -q --bare "$1/src" "$1/demo.git" &&
	git clone -q --bare "$1/src" "$1/remote.git" &&
	mkdir -p "$1/pulls" &&
	chown -R "$2:$2" "$1/remote.git" "$1/pulls" ||
	    fail "cannot make the sample repositories"
}

# A config for attempts: write_attempt_conf T uid-base attempt-uids
write_attempt_conf() {
	cat >"$1/factoryd.conf" <<CONF
socket: $1/factoryd.sock
state-dir: $1/state
libexec: $O
verifiers: 2
max-attempts: 4
attempt-uids: $3
keys:
  receipts: $1/keys/receipt.key
  verifier: $1/keys/verifier.key
users:
  worker: $(($2 + 1))
  verifier: $(($2 + 2))
  reconciler: $(($2 + 3))
  publisher: $(($2 + 4))
  egress: $(($2 + 5))
  image: $(($2 + 6))
  gateway: $(($2 + 7))
repositories:
  demo:
    path: $1/demo.git
    publish: {forge: local, remote: $1/remote.git, pulls: $1/pulls}
CONF
}

# A manifest: write_manifest FILE AGENT-SCRIPT [VALIDATE-SCRIPT [EXTRA]]
write_manifest() {
	cat >"$1" <<MAN
repository: demo
baseline: main
scope: ["src/**", "README.md"]
agent: ["/bin/sh", "-c", $(printf '%s' "$2" | jq -Rs .)]
validate: ["/bin/sh", "-c", $(printf '%s' "${3:-true}" | jq -Rs .)]
limits: {wall: 20s, cpu: 10s, memory: 256M, pids: 64, tree: 50M, log: 1M}
title: "regress"
${4:-}
MAN
}

ctl() { "$O/factoryctl" -s "$SOCK" "$@"; }

# Submit and wait for the attempt to end and be torn down; prints the id.
submit_wait() {	# manifest [seconds]
	id=$(ctl submit "$1") || return 1
	wait_terminated "$id" "${2:-60}"
	echo "$id"
}

wait_terminated() {	# id seconds
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		[ "$(ctl -j show "$1" | jq -r .terminated)" = true ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Until show -j's field of the attempt is the value.
wait_field() {	# id field value seconds
	i=0
	while [ $i -lt $(($4 * 10)) ]; do
		[ "$(ctl -j show "$1" | jq -r ".$2")" = "$3" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

wait_state() { wait_field "$1" phase "$2" "$3"; }	# id state seconds

field() { ctl -j show "$1" | jq -r ".$2"; }
remote_branches() { git --git-dir="$T/remote.git" -c safe.directory='*' for-each-ref --format='%(refname:short)' refs/heads/factory/ | wc -l; }
