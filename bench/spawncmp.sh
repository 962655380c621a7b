#!/bin/sh
# Spawn before and after, in one run: the launcher pool of this build
# ($O) and of another ($BEFORE, the build directory of another tree,
# such as the commit before a change, made with make O=... tests),
# each against bwrap --unshare-all, RUNS times (default 7) in turns, so
# that both see the same machine.  Each run is bench/spawn -o 3,4 (the
# pool, as factoryd runs it, and bwrap; ROUNDS rounds, GAP ms between):
# one line per run, then per build the median of the runs' cycles and
# ratios and the ratios' spread (lowest to highest).  BLOCK: the pool
# and bwrap in turns of that many rounds inside each run (spawn -b; the
# build of BEFORE must know -b), so that both see the same load.
# Needs root.
: "${O:?O must name the build directory}"
: "${BEFORE:?BEFORE must name the build directory to compare with}"
RUNS=${RUNS:-7}
OUT=$(mktemp /tmp/factory-spawncmp.XXXXXX) || exit 1
trap 'rm -f "$OUT"' EXIT

one() {	# label, build dir
	"$2/bench/spawn" -n "${ROUNDS:-50}" -p "${POOL:-2}" -g "${GAP:-0}" \
	    ${BLOCK:+-b "$BLOCK"} -L "$2/factory-sandbox" -o 3,4 \
	    >"$OUT.run" 2>&1 || {
		cat "$OUT.run"
		return 1
	}
	awk -v l="$1" '
	    /^factory-sandbox pool/ { f = $4 + 0 }
	    /^bwrap --unshare-all/ { b = $4 + 0 }
	    END { if (f == 0 || b == 0) exit 1
		printf "%s %.2f %.2f %.3f\n", l, f, b, f / b }' "$OUT.run"
}

i=0
while [ "$i" -lt "$RUNS" ]; do
	one before "$BEFORE" >>"$OUT" || exit 1
	one after "$O" >>"$OUT" || exit 1
	i=$((i + 1))
done
rm -f "$OUT.run"
echo "== spawn before ($BEFORE) and after ($O), $RUNS runs each in turns, ${GAP:-0} ms gap"
printf '%-7s %9s %9s %7s\n' run cycle bwrap ratio
awk '{ printf "%-7s %7.2fms %7.2fms %6.3fx\n", $1, $2, $3, $4 }' "$OUT"
for l in before after; do
	awk -v l="$l" 'BEGIN { n = 0 }
	    $1 == l { c[n] = $2; b[n] = $3; r[n++] = $4 }
	    function med(a, n,   i, j, t) {
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2
	    }
	    END { printf "%-7s median cycle %.2fms, bwrap %.2fms, ratio %.3fx (runs %.3f to %.3f)\n",
		l, med(c, n), med(b, n), med(r, n), r[0], r[n - 1] }' "$OUT"
done
