#!/bin/sh
# Runs the whole regress suite: the unit tests (plain and sanitized
# builds), then every regress/*/run.sh.  Prints one closing line,
# "N passed, N failed", and exits non-zero if anything failed.
#
# Usage: O=build sh regress/run-all.sh [dir ...]

top=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
export O

passed=0
failed=0
failures=""
times=""

count() {	# name, output file, status
	p=$(grep -c '^ok ' "$2")
	f=$(grep -c '^not ok ' "$2")
	if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $1: exited $3"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -gt 0 ] && failures="$failures $1"
}

unit() {	# test binary
	name=$1
	out=$(mktemp)
	CK_FORK=yes "$name" >"$out" 2>&1
	st=$?
	cat "$out"
	# check prints "100%: Checks: N, Failures: F, Errors: E"
	line=$(grep -E 'Checks: [0-9]+' "$out" | tail -n 1)
	n=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
	f=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2/' | awk '{print $1+$2}')
	[ -n "$n" ] || { n=0; f=1; }
	[ "$st" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	passed=$((passed + n - f))
	failed=$((failed + f))
	[ "$f" -gt 0 ] && failures="$failures $(basename "$name")"
	rm -f "$out"
}

dirs="$*"
if [ -z "$dirs" ]; then
	for t in "$O"/regress/unit/test_*; do
		case $t in *.o) continue ;; esac
		[ -x "$t" ] || continue
		echo "== unit $(basename "$t")"
		unit "$t"
	done
	for t in "${ASAN_O:-$O/asan}"/regress/unit/test_*; do
		case $t in *.o) continue ;; esac
		[ -x "$t" ] || continue
		echo "== unit (asan) $(basename "$t")"
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		LSAN_OPTIONS=suppressions=$top/regress/lsan.supp \
		    unit "$t"
	done
	dirs=$(ls -d "$top"/regress/*/ | sed 's|/$||')
fi
# A suite still running after SUITE_MAX seconds (25 minutes; the
# slowest takes about 11 on a loaded 2-core machine) has hung: it is
# ended and counted as failed, with what it printed, rather than eating
# the whole run's time unseen.  timeout(1) runs it in a process group
# of its own: TERM to the group (the suite's cleanup ends by pid what
# it started), KILL a minute later; a TERM or INT to this script ends
# the running suite's group the same way.  Output streams as it comes,
# so a run cut short from outside shows where it was, and the line the
# TERM prints gives the times so far.
SUITE_MAX=${SUITE_MAX:-1500}
start=$(date +%s)
name=""
spid=""
tpid=""
trap '[ -n "$spid" ] && kill -TERM -$spid 2>/dev/null
    [ -n "$tpid" ] && kill -TERM $tpid 2>/dev/null
    echo; echo "== terminated in ${name:-the unit tests} after $(($(date +%s) - start))s; suite times:$times"
    exit 143' TERM INT HUP
for d in $dirs; do
	[ -f "$d/run.sh" ] || continue
	name=$(basename "$d")
	echo "== regress $name"
	out=$(mktemp)
	# Each script runs under the shell its first line names.
	interp=$(sed -n '1s/^#! *//p' "$d/run.sh")
	# One copy of a suite at a time on this machine: suites use fixed
	# uid ranges and ports.
	t0=$(date +%s)
	timeout -k 60 "$SUITE_MAX" flock "/tmp/factory-suite.$name.lock" \
	    ${interp:-sh} "$d/run.sh" </dev/null >"$out" 2>&1 &
	spid=$!
	tail -s 0.2 -n +1 -f --pid=$spid "$out" &
	tpid=$!
	wait $spid
	st=$?
	wait $tpid
	spid="" tpid=""
	secs=$(($(date +%s) - t0))
	case $st in
	124|137) echo "not ok - $name: still running after ${SUITE_MAX}s," \
	    "ended (timeout exit $st)" | tee -a "$out" ;;
	esac
	count "$name" "$out" "$st"
	rm -f "$out"
	echo "== regress $name: ${secs}s ($(($(date +%s) - start))s so far)"
	times="$times $name:${secs}s"
done

echo
[ -n "$times" ] && echo "suite times:$times"
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
