#!/bin/sh
# What a fleet adds to one attempt (issue 27): the same real factoryd,
# the same trivial attempt (bench/attempts.sh's), N of them through
# each of two hosts side by side, interleaved: one without a fleet:
# block, one a fleet of one host on a PostgreSQL of the bench's own
# (the submission queued in the database, claimed, journaled, marked
# and pinned before its publication, its outcome sent back).  Both
# submitted by the same user through setpriv.
# Per attempt: from the submission to "terminated" on the host, read
# by factoryctl show every 5 ms.  The target: a fleet attempt within
# 10 ms of a single-host one at the p50; a ratio, not an assert.
# O: the build directory.  ATTEMPTS (default 25), WARM (3).
# BENCH_SUMMARY: a file the targets are added to.  Needs root.
: "${O:?O must name the build directory}"
top=$(cd "$(dirname "$0")/.." && pwd)
case $O in /*) ;; *) O=$top/$O ;; esac
. "$top/regress/lib.sh"
. "$top/regress/fleet/pg.sh"

N=${ATTEMPTS:-25}
WARM=${WARM:-3}
T=$(regress_tmpdir)
PIDS=""
trap 'stop; pg_stop; regress_cleanup' EXIT
stop() {
	for p in $PIDS; do
		stop_pid "$p"
	done
	PIDS=""
}
pg_start "$T" || { echo "fleet attempt bench: no PostgreSQL"; exit 1; }
# Two hosts side by side, each with its own state, socket and uids:
# s without a fleet: block, f a fleet of one.
mkdir -p "$T/s" "$T/f"
make_repos "$T/s" 63904
write_attempt_conf "$T/s" 63900 63910-63939
make_repos "$T/f" 63954
write_attempt_conf "$T/f" 63950 63960-63989
sed -i "s|^  gateway: .*|&\n  fleet: 63958|" "$T/f/factoryd.conf"
cat >>"$T/f/factoryd.conf" <<CONF
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
done_() {	# socket id: until terminated, at most 60 s
	b_n=12000
	while [ "$b_n" -gt 0 ]; do
		case $("$O/factoryctl" -s "$1" -j show "$2" 2>/dev/null) in
		*'"terminated": true'*) return 0 ;;
		esac
		sleep 0.005
		b_n=$((b_n - 1))
	done
	return 1
}
for h in s f; do
	"$O/factoryd" -dk -f "$T/$h/factoryd.conf" 2>>"$T/$h/log" &
	PIDS="$PIDS $!"
	wait_serving "$T/$h/factoryd.sock" "$!" ||
	    { echo "bench: factoryd $h did not start"; exit 1; }
	chgrp 63940 "$T/$h/factoryd.sock"
done
# one HOST OUT: an attempt through it, by the tenant's user (the same
# submitter for both), ms into OUT after the warm-up.
one() {
	t0=$(now)
	b_id=$(setpriv --reuid 63941 --regid 63941 --groups 63940 \
	    "$O/factoryctl" -s "$T/$1/factoryd.sock" submit "$T/m.yaml" \
	    </dev/null) || { echo "bench: submit to $1"; exit 1; }
	done_ "$T/$1/factoryd.sock" "$b_id" ||
	    { echo "bench: $b_id did not end"; exit 1; }
	t1=$(now)
	[ $b_i -ge "$WARM" ] && echo $((t1 - t0)) >>"$2"
}
# Interleaved, each round's first alternating: the machine's drift
# falls on both alike.
: >"$T/single"
: >"$T/fleet"
b_i=0
while [ $b_i -lt $((N + WARM)) ]; do
	if [ $((b_i % 2)) = 0 ]; then
		one s "$T/single"; one f "$T/fleet"
	else
		one f "$T/fleet"; one s "$T/single"
	fi
	b_i=$((b_i + 1))
done
stop
s50=$(pct 50 <"$T/single")
f50=$(pct 50 <"$T/fleet")
echo "== an attempt, single host and fleet of one (ms, submission to terminated)"
printf '%-10s %8s %8s\n' "" p50 p90
printf '%-10s %8s %8s\n' single "$s50" "$(pct 90 <"$T/single")"
printf '%-10s %8s %8s\n' fleet "$f50" "$(pct 90 <"$T/fleet")"
printf '%-44s %10s  %s\n' "fleet attempt p50 over single host, ms (<= 10)" \
    "$((f50 - s50))" "$([ $((f50 - s50)) -le 10 ] && echo met || echo missed)" \
    >>"${BENCH_SUMMARY:-/dev/stdout}"
