#!/bin/sh
# The operator's view through the real daemon: a reload that restarts
# every child while submissions arrive loses none of them; factoryctl
# top (one snapshot) and metrics; the metrics file.

. "$(dirname "$0")/../lib.sh"

command -v jq >/dev/null || fail "ops: needs jq"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 63304
write_attempt_conf "$T" 63300 63310-63339
cp "$T/factoryd.conf" "$T/base.conf"
start_factoryd "$T/factoryd.conf" "$T/log"

# A second repository in the file changes every child's command line
# (their unveiled paths): a reload restarts them all.
git clone -q --bare "$T/src" "$T/other.git"
reload_toggle() {
	if grep -q other.git "$T/factoryd.conf"; then
		cp "$T/base.conf" "$T/factoryd.conf"
	else
		cp "$T/base.conf" "$T/factoryd.conf.new"
		printf '  other:\n    path: %s/other.git\n' "$T" \
		    >>"$T/factoryd.conf.new"
		mv "$T/factoryd.conf.new" "$T/factoryd.conf"
	fi
	ctl reload >/dev/null
}

write_manifest "$T/m.yaml" 'echo hi >> README.md'
: >"$T/ids"
: >"$T/fails"
pids=""
i=0
while [ $i -lt 16 ]; do
	( if id=$(ctl submit "$T/m.yaml" 2>"$T/err.$i"); then
		echo "$id" >>"$T/ids"
	  else
		cat "$T/err.$i" >>"$T/fails"
	  fi ) &
	pids="$pids $!"
	[ $((i % 4)) = 0 ] && reload_toggle
	sleep 0.05
	i=$((i + 1))
done
wait $pids
check "reload: restarts logged" grep -q "configuration changed, restarting" "$T/log"
# A child at work when the reload came finishes it first; none is
# killed for an answer it gave while being restarted (before: "verifier
# (pid N): malformed message (imsg type 70)", attempts failed with
# "verifier died, three times" or a push's ref lock left behind).
check "reload: no child killed for a message" \
    sh -c "! grep -q 'malformed message' '$T/log'"
grep 'malformed message' "$T/log" | sed 's/^/# /'
check "reload: no submission refused during four reloads" \
    sh -c "[ ! -s '$T/fails' ]"
[ -s "$T/fails" ] && sed 's/^/# /' "$T/fails"
check "reload: all 16 submissions accepted" \
    sh -c "[ \$(sort -u '$T/ids' | wc -l) = 16 ]"
for id in $(cat "$T/ids"); do
	wait_terminated "$id" 90 || { notok "reload: $id did not end"; continue; }
done
check "reload: every accepted attempt published" sh -c "
	for id in \$(cat '$T/ids'); do
		[ \"\$('$O/factoryctl' -s '$SOCK' -j show \$id | jq -r .state)\" = published ] || exit 1
	done"

# top: one plain snapshot, every part there; escapes never.
ctl top -1 >"$T/top" 2>&1
check "top -1: the header, states, processes, attempts, errors" sh -c "
	grep -q '^factoryd ' '$T/top' && grep -q '^attempts: queue 0' '$T/top' &&
	grep -q '^PROCESS' '$T/top' && grep -q '^worker ' '$T/top' &&
	grep -q '^ATTEMPT' '$T/top' && grep -q '^LAST ERRORS' '$T/top'"
check "top -1: published attempts counted" grep -q "published 16" "$T/top"
check "top -1: plain text, no escape sequences" sh -c \
    "! LC_ALL=C grep -q \"\$(printf '\\033')\" '$T/top'"
ctl top -n 2 -d 1 >"$T/top2" 2>&1
check "top -n 2 not on a terminal: two snapshots" sh -c \
    "[ \$(grep -c '^factoryd ' '$T/top2') = 2 ]"
check "top: usage on a bad option" sh -c \
    "'$O/factoryctl' -s '$SOCK' top -x 2>&1 | grep -q 'usage: factoryctl .* top \\[-1\\]'"
check "status -j: the overview" sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }
	ctl -j status | jq -e '.overview | has(\"attempts\") and has(\"queue\") and
	    has(\"running\") and has(\"busy\") and has(\"orphans\") and
	    has(\"errors\")' >/dev/null"
# The cgroup root in use: here (hybrid, no delegation) the cgroup2 one
# at the root, named by this daemon's instance (its state dir's hash).
inst=$(printf '%s' "$(realpath "$T/state")" | sha256sum | cut -c1-8)
cgj=$(ctl -j status | jq -c .cgroup)
cg2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' /proc/self/mountinfo | head -n 1)
cgwant="{\"root\":\"$cg2/factory/$inst\",\"delegated\":false}"
[ "$cgj" = "$cgwant" ] && ok "status -j: the cgroup root in use" ||
    notok "status -j: cgroup $cgj, want $cgwant"

# metrics: OpenMetrics text on the read-only socket.
"$O/factoryctl" -s "$SOCK.ro" metrics >"$T/metrics" 2>&1
check "metrics: on the read-only socket, ends with # EOF" sh -c \
    "[ \"\$(tail -n 1 '$T/metrics')\" = '# EOF' ]"
check "metrics: attempts by state" grep -q '^factory_attempts{state="published"} 16$' "$T/metrics"
check "metrics: 16 attempts ended since start" grep -q '^factory_attempts_ended_total 16$' "$T/metrics"
check "metrics: stage histograms, +Inf bucket = count" sh -c "
	inf=\$(sed -n 's/^factory_stage_duration_seconds_bucket{stage=\"run\",le=\"+Inf\"} //p' '$T/metrics')
	cnt=\$(sed -n 's/^factory_stage_duration_seconds_count{stage=\"run\"} //p' '$T/metrics')
	[ \"\$inf\" = 16 ] && [ \"\$cnt\" = 16 ]"
check "metrics: buckets never decrease" sh -c "
	awk -F'[{}]' '/^factory_stage_duration_seconds_bucket/ {
	    split(\$2, l, \",\"); s = l[1]; v = \$3 + 0
	    if (s == last && v < prev) bad = 1; last = s; prev = v }
	    END { exit bad }' '$T/metrics'"
check "metrics: spawn, fsync, teardown failures, orphans, restarts" sh -c "
	grep -q '^factory_spawn_seconds_count 16' '$T/metrics' &&
	grep -q '^factory_journal_fsync_seconds_count [1-9]' '$T/metrics' &&
	grep -q '^factory_teardown_failures_total 0' '$T/metrics' &&
	grep -q '^factory_orphans 0' '$T/metrics' &&
	grep -q '^factory_model_tokens_total{direction=\"input\"} 0' '$T/metrics' &&
	grep -q '^factory_child_restarts_total{process=\"worker\",slot=\"0\"} [0-9]' '$T/metrics'"
check "metrics: every sample's family has a TYPE line" sh -c "
	awk '/^# TYPE/ { t[\$3] = \$4; next } /^#/ { next }
	    { n = \$1; sub(/\{.*/, \"\", n); f = n
	      sub(/_(bucket|sum|count|total)\$/, \"\", f)
	      if (!(f in t) && !(n in t)) { print n; bad = 1 } }
	    END { exit bad }' '$T/metrics'"

# metrics: file: written whole, replaced atomically, after a reload.
cp "$T/factoryd.conf" "$T/factoryd.conf.new"
printf 'metrics: {file: %s/node/factory.prom, interval: 1s}\n' "$T" \
    >>"$T/factoryd.conf.new"
mkdir "$T/node"
mv "$T/factoryd.conf.new" "$T/factoryd.conf"
ctl reload >/dev/null
i=0
while [ ! -f "$T/node/factory.prom" ] && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "metrics file: written after a reload" test -f "$T/node/factory.prom"
check "metrics file: the same families as factoryctl metrics" sh -c "
	[ \"\$(grep '^# TYPE' '$T/node/factory.prom')\" = \"\$(grep '^# TYPE' '$T/metrics')\" ]"
check "metrics file: mode 0644, no temp file left" sh -c "
	[ \$(stat -c %a '$T/node/factory.prom') = 644 ] &&
	sleep 1.2 && [ \$(ls '$T/node' | wc -l) = 1 ]"
# (Refused keys of metrics: regress/conf, conf-fail-metrics-*.)

stop_factoryd
regress_done
