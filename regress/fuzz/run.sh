#!/bin/sh
# regress/fuzz: one libFuzzer harness per parser of untrusted input
# (fuzz_NAME.c), its seed corpus (corpus/NAME/) and, for fuzzing, a
# libFuzzer dictionary of its tokens (NAME.dict).
#
# Without arguments (make check): every corpus replayed once through
# its harness, deterministic and quick.  An input that once broke a
# parser is added to the corpus, so it stays tested.
#
# With -f SECONDS (make fuzz): each target fuzzed for that long, one
# after the other, one process (the machine is shared).  New inputs go
# to $FUZZ_O/corpus/NAME (kept between runs), crashes to
# regress/fuzz/crashes/ (gitignored); per target, libFuzzer's final
# statistics and one summary line with executions and coverage.
# -t NAME,... limits either mode to some targets.  A run's finds join
# the committed corpus, minimised, with
#	$FUZZ_O/regress/fuzz/fuzz_NAME -merge=1 corpus/NAME $FUZZ_O/corpus/NAME
#
# The harnesses are the instrumented build of `make fuzz-build`, in
# $FUZZ_O (default: $O/../fuzz, beside the test build).

set -u
D=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$D/../.." && pwd)
O=${O:-$TOP/build/test}
FUZZ_O=${FUZZ_O:-$O/../fuzz}
case $FUZZ_O in /*) ;; *) FUZZ_O=$TOP/$FUZZ_O ;; esac
BIN=$FUZZ_O/regress/fuzz

secs=""
only=""
while getopts f:t: c; do
	case $c in
	f)	secs=$OPTARG ;;
	t)	only=$(echo "$OPTARG" | tr , ' ') ;;
	*)	echo "usage: run.sh [-f seconds] [-t target,...]" >&2
		exit 2 ;;
	esac
done

nfail=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1: $2"; nfail=$((nfail + 1)); }

targets=""
for s in "$D"/fuzz_*.c; do
	n=$(basename "$s" .c)
	n=${n#fuzz_}
	if [ -n "$only" ]; then
		case " $only " in *" $n "*) ;; *) continue ;; esac
	fi
	targets="$targets $n"
done
# A corpus without its harness is a test that silently vanished.
for c in "$D"/corpus/*/; do
	n=$(basename "$c")
	[ -f "$D/fuzz_$n.c" ] || fail "corpus/$n" "no fuzz_$n.c"
done

# The sanitizers stop at the first error; leaks count.  A harness's
# exit status is the verdict; its output explains it.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
command -v llvm-symbolizer-14 >/dev/null 2>&1 &&
    export ASAN_SYMBOLIZER_PATH="$(command -v llvm-symbolizer-14)"
LOG=$(mktemp -d /tmp/factory-regress.fuzzlog.XXXXXX) || exit 1
trap 'rm -rf "$LOG"' EXIT
trap 'exit 1' INT TERM HUP

# Replay: the files as arguments, each run once.
replay() {	# NAME
	n=$1 b=$BIN/fuzz_$1 c=$D/corpus/$1
	if [ ! -x "$b" ]; then
		fail "replay $n" "$b not built (make fuzz-build)"
		return
	fi
	set -- "$c"/*
	if [ ! -f "$1" ]; then
		fail "replay $n" "corpus/$n is empty"
		return
	fi
	if "$b" -timeout=10 -rss_limit_mb=2048 "$@" >"$LOG/$n" 2>&1; then
		pass "replay $n ($# inputs)"
	else
		fail "replay $n" "exit $?"
		grep -aE '^(==[0-9]+==ERROR|SUMMARY|fuzz:|Running:)' "$LOG/$n" |
		    tail -n 6 | sed 's/^/#  /'
	fi
}

# One fuzzing run; the summary is parsed from libFuzzer's output.
fuzz() {	# NAME SECONDS
	n=$1 b=$BIN/fuzz_$1
	if [ ! -x "$b" ]; then
		fail "fuzz $n" "$b not built (make fuzz-build)"
		return
	fi
	mkdir -p "$FUZZ_O/corpus/$n" "$D/crashes"
	dict=""
	[ -f "$D/$n.dict" ] && dict=-dict=$D/$n.dict
	echo "# fuzz $n: $2 s"
	"$b" -max_total_time="$2" -print_final_stats=1 -timeout=10 \
	    -rss_limit_mb=2048 $dict \
	    -artifact_prefix="$D/crashes/$n-" \
	    "$FUZZ_O/corpus/$n" "$D/corpus/$n" >"$LOG/$n" 2>&1
	st=$?
	grep -aE '^stat::|^(==[0-9]+==ERROR|SUMMARY|fuzz:)|^artifact_prefix|Test unit written' \
	    "$LOG/$n" | sed 's/^/#  /'
	cov=$(grep -aE '^#[0-9]+' "$LOG/$n" | tail -n 1 |
	    sed -E 's/^#([0-9]+)[^c]*cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+).*/\1 execs, cov \2, ft \3, corpus \4/')
	execs=$(sed -n 's/^stat::number_of_executed_units: //p' "$LOG/$n")
	if [ "$st" = 0 ]; then
		pass "fuzz $n: ${execs:-?} executions; last: $cov"
	else
		fail "fuzz $n" "exit $st after ${execs:-?} executions; last: $cov"
	fi
}

for n in $targets; do
	if [ -n "$secs" ]; then
		fuzz "$n" "$secs"
	else
		replay "$n"
	fi
done

[ "$nfail" = 0 ]
