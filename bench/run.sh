#!/bin/sh
# make bench: the spawn benchmark (bench/spawn.c), then the daemon's
# overhead per attempt and attempts per second (bench/attempts.sh).
# Needs root.
# O: the build directory.  ROUNDS: launches of each kind (default 50).
# POOL: launchers (and, for the forked pid 1, network and IPC
# namespaces) kept ready, as factoryd keeps them (default 2; 0: no
# pool, every clone makes its own).  factory's sandbox runs three ways:
# pid 1 forked from the caller (before the launcher binary), a fresh
# factory-sandbox per spawn (the pool empty), and one from the pool of
# launchers started ahead (now, as factoryd runs it).  The spawn table
# is printed twice: back to back, and with GAP ms (default 50) between
# rounds, as attempts come to factoryd (a write to cgroup.procs is cheap
# only right after another one).  BEFORE: the build directory of
# another tree (the commit before a change): the pool of both is then
# run in turns against bwrap (bench/spawncmp.sh, RUNS times).  Then
# the real agent clients through factory beside the same clients on
# the host (bench/agents.sh; AGENTS=0 leaves them out).  Last, the
# p50/p99 of "factoryctl status" while the parent stores a setup of
# 16,000 files and imports an image of 300 MB (bench/latency.sh).
# Then the fleet: its claims (bench/fleet.sh), and what it adds to one
# attempt against a single host (bench/fleetattempt.sh).
: "${O:?O must name the build directory}"
# Each part adds its targets here; printed together at the end.
BENCH_SUMMARY=$(mktemp /tmp/factory-bench-summary.XXXXXX) || exit 1
export BENCH_SUMMARY
trap 'rm -f "$BENCH_SUMMARY"' EXIT
sh "$(dirname "$0")/tree.sh" || exit 1	# trees and collect
for gap in 0 "${GAP:-50}"; do
	echo "== spawn, ${gap} ms between rounds"
	"$O/bench/spawn" -n "${ROUNDS:-50}" -p "${POOL:-2}" -g "$gap" \
	    -L "$O/factory-sandbox" || exit 1
done
if [ -n "$BEFORE" ]; then
	sh "$(dirname "$0")/spawncmp.sh" || exit 1
fi
sh "$(dirname "$0")/attempts.sh" || exit 1
if [ "${AGENTS:-1}" != 0 ]; then
	bash "$(dirname "$0")/agents.sh" || exit 1
fi
sh "$(dirname "$0")/latency.sh" || exit 1
sh "$(dirname "$0")/fleet.sh" || exit 1
sh "$(dirname "$0")/fleetattempt.sh" || exit 1
echo
echo "targets (issues 11, 25, 26 and 27), measured in this run"
cat "$BENCH_SUMMARY"
