#!/bin/sh
# The daemon's own cost per attempt: a real factoryd on a temp config
# (the regress suites' helpers), a 3-file local repository, a trivial
# agent (one line appended) and validation (/bin/true), auto approval,
# a local forge.
#
#  - overhead: N attempts one after another, after WARM warm-up ones;
#    per attempt the daemon's own time, factoryctl show's "overhead"
#    (everything but the agent's run and the validation run), p50/p90;
#  - throughput: BURST attempts submitted at once with max-attempts: 4,
#    attempts per second from the first submission to the last one torn
#    down.
#
# The pull records directory holds PULLS records (default 2000) before
# the first attempt, as after that many publications: numbering a pull
# request must not cost with their number.
#
# O: the build directory.  ATTEMPTS (default 20), WARM (3), BURST (40).
# BENCH_SUMMARY: a file the targets are added to (bench/run.sh prints
# it).  Needs root.  Everything it makes is removed on exit.

: "${O:?O must name the build directory}"
top=$(cd "$(dirname "$0")/.." && pwd)
case $O in /*) ;; *) O=$top/$O ;; esac
. "$top/regress/lib.sh"

N=${ATTEMPTS:-20}
WARM=${WARM:-3}
BURST=${BURST:-40}

# Users and attempt uids of its own: no regress suite uses these.
T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 63604
PULLS=${PULLS:-2000}
# Records of earlier publications, as the publisher writes them.
awk -v n="$PULLS" -v d="$T/pulls" 'BEGIN {
	for (i = 1; i <= n; i++) {
		f = sprintf("%s/a-20000101-%05d.json", d, i)
		printf "{\n  \"number\": %d,\n  \"head\": \"factory/a-20000101-%05d\",\n  \"base\": \"main\",\n  \"title\": \"earlier\",\n  \"attempt\": \"a-20000101-%05d\",\n  \"commit\": \"%040d\",\n  \"verdict\": \"sha256:%064d\",\n  \"created\": \"2000-01-01T00:00:00Z\"\n}\n", i, i, i, 0, 0 >f
		close(f)
	}
}' && chown -R 63604:63604 "$T/pulls" || fail "bench: cannot write the pull records"
write_attempt_conf "$T" 63600 63610-63699
start_factoryd "$T/factoryd.conf" "$T/log"
write_manifest "$T/m.yaml" 'echo x >> README.md' true

# Milliseconds since the epoch.
now() { date +%s%3N; }

# p-th percentile (nearest rank) of the numbers on stdin.
pct() {
	sort -n | awk -v p="$1" '{v[NR] = $1}
	    END {if (NR == 0) {print "-"; exit}
	    r = int((p * NR + 99) / 100); if (r < 1) r = 1; print v[r]}'
}

# lib.sh's functions use i, id and s: the bench's own names are b_*.
# Waiting must not cost what it measures: lib.sh's wait_terminated
# runs jq ten times a second, which took a third of the CPU of the
# throughput run.  Here: factoryctl alone, every 20 ms, read by the
# shell.
b_done() {	# id seconds
	b_n=$(($2 * 50))
	while [ "$b_n" -gt 0 ]; do
		b_out=$(ctl -j show "$1") || return 1
		case $b_out in *'"terminated": true'*) break ;; esac
		sleep 0.02
		b_n=$((b_n - 1))
	done
	case $b_out in
	*'"terminated": true'*'"state": "published"'* | \
	    *'"state": "published"'*'"terminated": true'*) return 0 ;;
	esac
	return 1
}
wait_all() {	# seconds id...
	b_s=$1
	shift
	for b_id in "$@"; do
		b_done "$b_id" "$b_s" ||
		    fail "bench: $b_id did not end published: $(field "$b_id" state)"
	done
}

# CPU ms (user and system) of factoryd and each child that lives
# through the run, one line each: "PID NAME MS".  Verifiers and
# launchers are fresh per attempt and counted in none of these.
cpu() {
	b_hz=$(getconf CLK_TCK)
	for b_p in "$FACTORYD_PID" $(pgrep -P "$FACTORYD_PID"); do
		b_c=$(cat "/proc/$b_p/comm" 2>/dev/null) || continue
		sed 's/^.*) //' "/proc/$b_p/stat" 2>/dev/null | awk -v p="$b_p" \
		    -v n="$b_c" -v hz="$b_hz" '{print p, n, ($12 + $13) * 1000 / hz}'
	done | sort
}

b_i=0
while [ $b_i -lt "$WARM" ]; do
	b_id=$(ctl submit "$T/m.yaml") || fail "bench: warm-up attempt"
	wait_all 60 "$b_id"
	b_i=$((b_i + 1))
done

: >"$T/over"
: >"$T/stages"
cpu >"$T/cpu0"
b_i=0
while [ $b_i -lt "$N" ]; do
	b_id=$(ctl submit "$T/m.yaml") || fail "bench: attempt $b_i"
	wait_all 60 "$b_id"
	ctl -j show "$b_id" | jq -c .stages >>"$T/stages"
	jq -r '.overhead' <"$T/stages" | tail -n 1 >>"$T/over"
	b_i=$((b_i + 1))
done

cpu >"$T/cpu1"
b_ids=""
t0=$(now)
b_i=0
while [ $b_i -lt "$BURST" ]; do
	b_ids="$b_ids $(ctl submit "$T/m.yaml")" || fail "bench: burst submit"
	b_i=$((b_i + 1))
done
# shellcheck disable=SC2086
wait_all 120 $b_ids
t1=$(now)

echo
echo "attempts: $N sequential (after $WARM warm-up), 3-file repository, $PULLS pull records before"
printf '  overhead per attempt: p50 %s ms, p90 %s ms\n' \
    "$(pct 50 <"$T/over")" "$(pct 90 <"$T/over")"
for k in queue allocation image cache checkout sandbox run collect verify \
    validation publish teardown total; do
	printf '  %-11s p50 %s ms\n' "$k" "$(jq -r ".$k // empty" \
	    <"$T/stages" | pct 50)"
done
echo "  CPU per attempt, ms (of the long-lived processes):"
join "$T/cpu0" "$T/cpu1" | awk -v n="$N" '$2 == $4 {printf "    %-18s %6.1f\n",
    $2, ($5 - $3) / n}'
echo "throughput: $BURST attempts submitted at once, max-attempts: 4"
awk -v n="$BURST" -v ms=$((t1 - t0)) 'BEGIN {
	printf "  %d attempts in %d ms: %.1f attempts/s\n", n, ms,
	    n * 1000 / ms }'
{
	pct 50 <"$T/over" | awk '{printf "%-44s %10s  %s\n",
	    "daemon overhead per attempt p50, ms (<= 50)", $1,
	    ($1 <= 50 ? "met" : "missed")}'
	awk -v n="$BURST" -v ms=$((t1 - t0)) 'BEGIN {v = n * 1000 / ms;
	    printf "%-44s %10.1f  %s\n", "attempts/s, max-attempts: 4 (>= 10)",
	    v, (v >= 10 ? "met" : "missed")}'
} >>"${BENCH_SUMMARY:-/dev/stdout}"
stop_factoryd
regress_done
