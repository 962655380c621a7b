#!/bin/sh
# Stage times through the real daemon: show -j names every stage and
# part, each a number or null; the stages add up to the total; the
# overhead is the total minus the agent's run and the validation run;
# the terminated receipt says the same as show, and so does a
# restarted daemon that rebuilt them from its journal.  For a
# published attempt, a rejected one and a failed one.

. "$(dirname "$0")/../lib.sh"

command -v jq >/dev/null || fail "stages: needs jq"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 63504
write_attempt_conf "$T" 63500 63510-63529
start_factoryd "$T/factoryd.conf" "$T/log"

STAGES='["queue","allocation","checkout","sandbox","run","collect","verify","publish","teardown"]'
PARTS='["image","cache","services","validation"]'

# Every key there, and nothing but numbers >= 0 or null.
keys_ok() {	# id
	ctl -j show "$1" | jq -e --argjson s "$STAGES" --argjson p "$PARTS" '
	    .stages as $t | ($s + $p + ["total", "overhead"]) |
	    all(. as $k | $t | has($k) and (.[$k] == null or
	    (.[$k] | type == "number" and . >= 0)))' >/dev/null
}

# The stages and the parts add up to the total; overhead = total - run
# - validation; the sum of the stages but run and validation is it too.
sums_ok() {	# id
	ctl -j show "$1" | jq -e --argjson s "$STAGES" --argjson p "$PARTS" '
	    .stages as $t | ($t.total | type == "number") and
	    ([($s + $p)[] as $k | $t[$k] // 0] | add) == $t.total and
	    $t.overhead == $t.total - ($t.run // 0) - ($t.validation // 0)
	    ' >/dev/null
}

# The terminated receipt's stages are show's.
receipt_ok() {	# id
	ctl -j show "$1" | jq -c .stages >"$T/show.json"
	ctl receipts "$1" | grep '"kind":"terminated"' |
	    jq -c '.facts.stages' >"$T/receipt.json"
	[ -s "$T/receipt.json" ] && jq -e -n --slurpfile a "$T/show.json" \
	    --slurpfile b "$T/receipt.json" '$a[0] == $b[0]' >/dev/null
}

# A published attempt: every stage a number but the unused parts.
write_manifest "$T/ok.yaml" 'echo hi >> README.md; sleep 0.3' 'sleep 0.2'
ok=$(submit_wait "$T/ok.yaml") || fail "published attempt did not finish"
check "published: show -j has every stage and part" keys_ok "$ok"
check "published: the stages add up, overhead = total - run - validation" \
    sums_ok "$ok"
check "published: every stage is a number" sh -c "'$O/factoryctl' -s '$SOCK' \
    -j show $ok | jq -e --argjson s '$STAGES' '.stages as \$t |
    \$s | all(. as \$k | \$t[\$k] | type == \"number\")' >/dev/null"
check "published: image and cache unused: null" sh -c "'$O/factoryctl' \
    -s '$SOCK' -j show $ok | jq -e '.stages.image == null and
    .stages.cache == null' >/dev/null"
# The agent slept 0.3 s and the validation 0.2 s: each is in its own
# part, not in the overhead.
check "published: the run holds the agent's sleep" sh -c "'$O/factoryctl' \
    -s '$SOCK' -j show $ok | jq -e '.stages.run >= 300' >/dev/null || { '$O/factoryctl' -s '$SOCK' -j show $ok | jq -c .stages >&2; false; }"
check "published: the validation holds the validation's sleep" sh -c \
    "'$O/factoryctl' -s '$SOCK' -j show $ok |
    jq -e '.stages.validation >= 200' >/dev/null"
check "published: the overhead holds neither" sh -c "'$O/factoryctl' \
    -s '$SOCK' -j show $ok | jq -e '.stages.overhead < .stages.total - 500'
    >/dev/null"
check "published: the terminated receipt says what show says" \
    receipt_ok "$ok"
ctl show "$ok" >"$T/show.txt"
check "published: show prints every stage, unused ones as -" \
    grep -q '^stages: queue [0-9]*ms .* image - cache - services - run [0-9]*ms .* validation [0-9]*ms publish [0-9]*ms teardown [0-9]*ms$' "$T/show.txt"
check "published: show prints the overhead" \
    grep -q '^overhead: [0-9]*ms of [0-9]*ms' "$T/show.txt"

# Rejected by the worker (out of scope): no verify, no publish.
write_manifest "$T/scope.yaml" 'echo x > Makefile'
rej=$(submit_wait "$T/scope.yaml") || fail "rejected attempt did not finish"
check "rejected: ended rejected" [ "$(field "$rej" state)" = rejected ]
check "rejected: every key, numbers or null" keys_ok "$rej"
check "rejected: the stages add up" sums_ok "$rej"
check "rejected: verify, validation, publish null" sh -c "'$O/factoryctl' \
    -s '$SOCK' -j show $rej | jq -e '.stages.verify == null and
    .stages.validation == null and .stages.publish == null' >/dev/null"
check "rejected: the terminated receipt says what show says" \
    receipt_ok "$rej"

# Rejected by the verifier (its validation fails): verify and the
# validation counted, nothing published.
write_manifest "$T/vfail.yaml" 'echo v >> README.md' 'exit 3'
vrej=$(submit_wait "$T/vfail.yaml") || fail "verifier-rejected attempt did not finish"
check "verifier-rejected: ended rejected" [ "$(field "$vrej" state)" = rejected ]
check "verifier-rejected: every key, numbers or null" keys_ok "$vrej"
check "verifier-rejected: the stages add up" sums_ok "$vrej"
check "verifier-rejected: validation a number, publish null" sh -c \
    "'$O/factoryctl' -s '$SOCK' -j show $vrej | jq -e '(.stages.validation |
    type == \"number\") and .stages.publish == null' >/dev/null"

# A failing agent: no collect, no verify.
write_manifest "$T/fail.yaml" 'exit 7'
bad=$(submit_wait "$T/fail.yaml") || fail "failed attempt did not finish"
check "failed: ended failed" [ "$(field "$bad" state)" = failed ]
check "failed: every key, numbers or null" keys_ok "$bad"
check "failed: the stages add up" sums_ok "$bad"
check "failed: collect and verify null" sh -c "'$O/factoryctl' -s '$SOCK' \
    -j show $bad | jq -e '.stages.collect == null and .stages.verify == null'
    >/dev/null"
check "failed: the terminated receipt says what show says" receipt_ok "$bad"

# A running attempt: the stage under way counts, total and overhead
# wait for the end.
write_manifest "$T/slow.yaml" 'sleep 2; echo s >> README.md'
slow=$(ctl submit "$T/slow.yaml") || fail "slow submit"
wait_state "$slow" running 20 || fail "slow attempt never ran"
sleep 0.5
check "running: every key, numbers or null" keys_ok "$slow"
check "running: the run counts up, no total yet" sh -c "'$O/factoryctl' \
    -s '$SOCK' -j show $slow | jq -e '.stages.run >= 300 and
    .stages.total == null and .stages.overhead == null and
    .stages.collect == null' >/dev/null"
# pid 1 is born in its cgroup2 directory and joins the v1 ones itself
# (the fast ways): the whole sandbox, pid 1 and the agent, is in every
# one of the attempt's cgroups, the same processes in each.
# This daemon's own: another's (a run killed earlier) may hold the
# same attempt id under its instance.
cgroot=$(ctl -j status | jq -r '.cgroup.root') || fail "status: no cgroup root"
cgdirs=$(find /sys/fs/cgroup -maxdepth 5 -type d -name "$slow" \
    -path "*/factory/${cgroot##*/}/$slow")
check "running: the attempt has cgroups" [ -n "$cgdirs" ]
: >"$T/cgsets"
for d in $cgdirs; do
	sort -n "$d/cgroup.procs" | tr '\n' ' ' >>"$T/cgsets"
	echo >>"$T/cgsets"
done
check "running: every cgroup holds the same processes" \
    [ "$(sort -u "$T/cgsets" | wc -l)" = 1 ]
check "running: pid 1 and the agent, at least" \
    [ "$(head -n 1 "$T/cgsets" | wc -w)" -ge 2 ]
p1=$(ctl receipts "$slow" | grep '"kind":"running"' | jq -r .facts.pid)
check "running: the running receipt's pid 1 is among them" \
    grep -qw "$p1" "$T/cgsets"
wait_terminated "$slow" 60 || fail "slow attempt did not finish"

# Rebuilt from the journal, exactly.
for id in $ok $rej $vrej $bad $slow; do
	ctl -j show "$id" | jq -c .stages
done >"$T/before.json"
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
for id in $ok $rej $vrej $bad $slow; do
	ctl -j show "$id" | jq -c .stages
done >"$T/after.json"
check "restarted: every attempt's stages as before" cmp -s "$T/before.json" \
    "$T/after.json"

stop_factoryd
regress_done
