#!/bin/sh
# What a fleet adds to one attempt (issue 27): the same real factoryd,
# the same trivial attempt (bench/attempts.sh's), N of them one after
# another, first as a single host (no fleet: block), then as a fleet
# of that one host on a PostgreSQL of the bench's own (the submission
# queued in the database, claimed, journaled, its outcome sent back).
# Per attempt: from the submission to "terminated" on the host, read
# by factoryctl show every 5 ms.  The target: a fleet attempt within
# 10 ms of a single-host one at the p50; a ratio, not an assert.
# O: the build directory.  ATTEMPTS (default 15), WARM (3).
# BENCH_SUMMARY: a file the targets are added to.  Needs root.
: "${O:?O must name the build directory}"
top=$(cd "$(dirname "$0")/.." && pwd)
case $O in /*) ;; *) O=$top/$O ;; esac
. "$top/regress/lib.sh"
. "$top/regress/fleet/pg.sh"

N=${ATTEMPTS:-15}
WARM=${WARM:-3}
T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
PID=""
trap 'stop; pg_stop; regress_cleanup' EXIT
stop() {
	[ -n "$PID" ] || return 0
	kill -TERM "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
	PID=""
}
pg_start "$T" || { echo "fleet attempt bench: no PostgreSQL"; exit 1; }
make_repos "$T" 63904
write_attempt_conf "$T" 63900 63910-63939
cp "$T/factoryd.conf" "$T/single.conf"
sed -i "s|^  gateway: .*|&\n  fleet: 63908|" "$T/factoryd.conf"
cat >>"$T/factoryd.conf" <<CONF
fleet:
  conninfo: "$FLEET_DB"
  host: bench-1
  slots: 1
  lease: 30s
  tenants:
    tb:
      users: [63941]
      repositories: [demo]
CONF
write_manifest "$T/m.yaml" 'echo x >> README.md' true

now() { date +%s%3N; }
pct() {
	sort -n | awk -v p="$1" '{v[NR] = $1}
	    END {if (NR == 0) {print "-"; exit}
	    r = int((p * NR + 99) / 100); if (r < 1) r = 1; print v[r]}'
}
done_() {	# id: until terminated, at most 60 s
	b_n=12000
	while [ "$b_n" -gt 0 ]; do
		case $(ctl -j show "$1" 2>/dev/null) in
		*'"terminated": true'*) return 0 ;;
		esac
		sleep 0.005
		b_n=$((b_n - 1))
	done
	return 1
}
# run CONF OUT SUBMIT...: WARM then N attempts; ms each into OUT.
run() {
	conf=$1 out=$2
	shift 2
	"$O/factoryd" -dk -f "$conf" 2>>"$T/log" &
	PID=$!
	wait_serving "$SOCK" "$PID" || { echo "bench: factoryd did not start"; exit 1; }
	chgrp 63940 "$SOCK"
	: >"$out"
	b_i=0
	while [ $b_i -lt $((N + WARM)) ]; do
		t0=$(now)
		b_id=$("$@" "$T/m.yaml" </dev/null) || { echo "bench: submit"; exit 1; }
		done_ "$b_id" || { echo "bench: $b_id did not end"; exit 1; }
		t1=$(now)
		[ $b_i -ge "$WARM" ] && echo $((t1 - t0)) >>"$out"
		b_i=$((b_i + 1))
	done
	stop
}
run "$T/single.conf" "$T/single" "$O/factoryctl" -s "$SOCK" submit
run "$T/factoryd.conf" "$T/fleet" setpriv --reuid 63941 --regid 63941 \
    --groups 63940 "$O/factoryctl" -s "$SOCK" submit
s50=$(pct 50 <"$T/single")
f50=$(pct 50 <"$T/fleet")
echo "== an attempt, single host and fleet of one (ms, submission to terminated)"
printf '%-10s %8s %8s\n' "" p50 p90
printf '%-10s %8s %8s\n' single "$s50" "$(pct 90 <"$T/single")"
printf '%-10s %8s %8s\n' fleet "$f50" "$(pct 90 <"$T/fleet")"
printf '%-44s %10s  %s\n' "fleet attempt p50 over single host, ms (<= 10)" \
    "$((f50 - s50))" "$([ $((f50 - s50)) -le 10 ] && echo met || echo missed)" \
    >>"${BENCH_SUMMARY:-/dev/stdout}"
