#!/bin/sh
# make bench: how long "factoryctl -j status" takes to answer while the
# parent has heavy work in hand: regress/latency's load (a setup that
# stores 16,000 files, an image import of about 300 MB), status asked
# every 50 ms throughout; p50 and p99 of each, and the p99 against
# issue 26's target (50 ms or less).  O: the build directory (a test
# build or not).  BENCH_SUMMARY: a file the targets are added to.
# Needs root.
: "${O:?O must name the build directory}"
top=$(cd "$(dirname "$0")/.." && pwd)
LATENCY_OUT=$(mktemp /tmp/factory-bench-latency.XXXXXX) || exit 1
export LATENCY_OUT O
trap 'rm -f "$LATENCY_OUT"' EXIT
echo "== status latency under load (regress/latency)"
sh "$top/regress/latency/run.sh" || exit 1
cat "$LATENCY_OUT"
awk -F': ' '{
	split($2, f, ", ")
	p99 = f[3]; sub(/^p99 /, "", p99); sub(/ ms$/, "", p99)
	what = $1 ~ /setup/ ? "a setup store" : "an image import"
	printf "%-44s %10s  %s\n", "status p99 during " what ", ms (<= 50)",
	    p99, (p99 + 0 <= 50 ? "met" : "missed")
}' "$LATENCY_OUT" >>"${BENCH_SUMMARY:-/dev/stdout}"
