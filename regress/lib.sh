# Shared by the regress run.sh scripts: temp dirs, a daemon under test,
# assertions.  Everything made is removed on exit, also on failure.

: "${O:?O must name the build directory}"
REGRESS_FAILED=0
REGRESS_TMP=""
FACTORYD_PID=""

regress_cleanup() {
	if [ -n "$FACTORYD_PID" ] && kill -0 "$FACTORYD_PID" 2>/dev/null; then
		kill -TERM "$FACTORYD_PID" 2>/dev/null
		i=0
		while kill -0 "$FACTORYD_PID" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1; i=$((i + 1))
		done
		kill -KILL "$FACTORYD_PID" 2>/dev/null
	fi
	[ -n "$REGRESS_TMP" ] && rm -rf "$REGRESS_TMP"
}
trap regress_cleanup EXIT
trap 'exit 1' INT TERM

regress_tmpdir() {
	REGRESS_TMP=$(mktemp -d /tmp/factory-regress.XXXXXX)
	chmod 755 "$REGRESS_TMP"
	echo "$REGRESS_TMP"
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

# Start factoryd -d in the background and wait for its socket.
start_factoryd() {	# conf log
	"$O/factoryd" -dk -f "$1" 2>>"$2" &
	FACTORYD_PID=$!
	sock=$(awk '/^socket:/ {print $2}' "$1")
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do
		kill -0 "$FACTORYD_PID" 2>/dev/null || break
		sleep 0.05; i=$((i + 1))
	done
	if [ ! -S "$sock" ]; then
		cat "$2" >&2
		fail "factoryd did not start"
	fi
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
