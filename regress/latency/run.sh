#!/bin/sh
# Nothing slow in the parent's event loop (issue 26): "factoryctl -j
# status", asked every 50 ms, is answered within a second each time
# throughout a setup that stores 16,000 files and an image import of
# about 300 MB (both made here, real bytes).  A loop held by a copy,
# an fsync, a hash or a sleep shows as one slow answer.  LATENCY_OUT:
# a file the p50/p99 line is appended to (make bench).  Needs root.
#
# Uids: roles 72001-72007, attempts 72010-72019.

. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "not ok - latency: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "latency: needs jq"
command -v python3 >/dev/null || fail "latency: needs python3"
BB=/bin/busybox
[ -x "$BB" ] && ! ldd "$BB" >/dev/null 2>&1 ||
    fail "latency: a static $BB is needed (busybox-static)"

D=$(cd "$(dirname "$0")" && pwd)
T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 72004
write_attempt_conf "$T" 72000 72010-72019
start_factoryd "$T/factoryd.conf" "$T/log"
BOUND=1000	# ms, each answer

# probe WHAT CMD...: CMD run while status is asked every 50 ms, from
# the probe's first answer on; then every answer within BOUND.
probe() {
	what=$1
	shift
	f=$T/lat.$(echo "$what" | tr -c 'a-z0-9\n' _)
	rm -f "$T/stop" "$f"
	python3 "$D/probe.py" "$O/factoryctl" "$SOCK" "$T/stop" "$f" &
	pp=$!
	i=0
	while [ ! -s "$f" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	t0=$(date +%s%N)
	"$@"
	st=$?
	t1=$(date +%s%N)
	touch "$T/stop"
	wait $pp
	s=$(sh "$D/stats.sh" "$f")
	n=$(awk '$1 >= 0' "$f" | wc -l)
	slow=$(awk -v b=$BOUND '$1 < 0 || $1 > b' "$f" | wc -l)
	check "$what: done in $(((t1 - t0) / 1000000)) ms" [ $st = 0 ]
	check "$what: status answered within $BOUND ms each time ($s)" \
	    [ "$n" -ge 2 -a "$slow" = 0 ]
	[ -z "$LATENCY_OUT" ] || echo "$what: $s" >>"$LATENCY_OUT"
}

# A busybox root file system for the setup run.
R=$T/img
mkdir -p "$R/bin"
cp "$BB" "$R/bin/busybox"
for a in sh mkdir echo test cat true; do ln -s busybox "$R/bin/$a"; done
H=$(ctl -j image import bb "$R" | jq -r .digest) ||
    fail "latency: cannot import the busybox image"
rm -rf "$R"

# (a) a setup that stores 16,000 files.
SETUP='mkdir -p deps && cd deps && i=0; while [ $i -lt 16000 ]; do echo $i >f$i; i=$((i + 1)); done'
cat >"$T/m.yaml" <<MAN
repository: demo
baseline: main
scope: ["src/**", "README.md"]
agent: ["/bin/sh", "-c", "test -f deps/f15999 && echo x >>src/a.c"]
validate: ["/bin/true"]
limits: {wall: 60s, cpu: 30s, memory: 256M, pids: 64, tree: 200M, log: 1M}
title: "latency"
environment: {image: "$H"}
setup:
  run: ["/bin/sh", "-c", $(printf '%s' "$SETUP" | jq -Rs .)]
  inputs: [README.md]
  outputs: [deps]
MAN
setup_store() {
	id=$(submit_wait "$T/m.yaml" 80) || return 1
	[ "$(field "$id" state)" = published ] || {
		echo "# $id: $(field "$id" state): $(field "$id" reason)"
		return 1
	}
	grep -q "$id: setup storing" "$T/log"
}
probe "a setup storing 16,000 files" setup_store

# (b) an image import of about 300 MB.
B=$T/big
mkdir -p "$B/data"
i=0
while [ $i -lt 30 ]; do
	head -c 10000000 /dev/urandom >"$B/data/blob$i" || fail "latency: no room"
	i=$((i + 1))
done
import_big() {
	ctl -j image import big "$B" >"$T/big.out" &&
	    [ "$(jq -r .bytes "$T/big.out")" -ge 300000000 ]
}
probe "an image import of 300 MB" import_big
rm -rf "$B"

stop_factoryd
regress_done
