#!/bin/sh
# stats.sh FILE: "N answers, p50 X ms, p99 Y ms, max Z ms, F failed"
# of the latencies probe.py wrote.
sort -n "$1" | awk '
	$1 < 0 { bad++; next }
	{ v[n++] = $1 }
	END {
		if (n == 0) { printf "0 answers, %d failed\n", bad; exit }
		p50 = v[int((n - 1) * 0.50)]
		p99 = v[int((n - 1) * 0.99)]
		printf "%d answers, p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d failed\n",
		    n, p50, p99, v[n - 1], bad
	}'
