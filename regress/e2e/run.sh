#!/bin/sh
# One attempt end to end through the real daemon: submit, sandboxed
# run, collect, independent verification, publication to a local
# remote, receipts; and each way it must refuse.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 61204
write_attempt_conf "$T" 61200 62100-62199
start_factoryd "$T/factoryd.conf" "$T/log"

# Published happy path.
write_manifest "$T/ok.yaml" 'echo hi >> README.md; echo "agent ran"' \
    'grep -q hi README.md'
id=$(submit_wait "$T/ok.yaml") || fail "happy path did not finish"
check "happy path: published" [ "$(field $id state)" = published ]
check "happy path: branch factory/$id in the remote" \
    git --git-dir="$T/remote.git" -c safe.directory='*' rev-parse --verify -q "refs/heads/factory/$id"
commit=$(field $id commit)
check "happy path: the remote branch holds the verified commit" \
    [ "$(git --git-dir="$T/remote.git" -c safe.directory='*' rev-parse "refs/heads/factory/$id")" = "$commit" ]
check "happy path: pull record #1 names the commit" \
    sh -c "jq -e '.number == 1 and .commit == \"$commit\" and .head == \"factory/$id\"' '$T/pulls/$id.json'"
check "happy path: commit carries the trailers" \
    sh -c "git --git-dir='$T/remote.git' -c safe.directory='*' log -1 --format=%B $commit | grep -q '^Attempt-Id: $id\$'"
check "happy path: stages are timed" \
    sh -c "[ \$('$O/factoryctl' -s '$SOCK' -j show $id | jq '.stages | keys | length') -ge 7 ]"
check "happy path: the agent's log" sh -c "'$O/factoryctl' -s '$SOCK' logs $id | grep -q 'agent ran'"
check "happy path: attempt dir removed" [ ! -e "$T/state/attempts/$id" ]
check "happy path: no process of its uid" [ -z "$(uid_procs $(field $id uid))" ]
ctl receipts $id >"$T/r.txt"
check "receipts verify offline" sh -c "'$O/factoryctl' verify '$T/r.txt' | grep -q '^OK: .* last: terminated'"
# One flipped byte, one dropped receipt, two swapped: each named.
sed '3s/"kind":"allocating"/"kind":"allocatinG"/' "$T/r.txt" >"$T/r-flip.txt"
"$O/factoryctl" verify "$T/r-flip.txt" >"$T/out" 2>&1
check "a tampered receipt fails verify (exit 1)" [ $? = 1 ]
check "verify names the bad receipt" grep -q 'receipt 1' "$T/out"
sed '4d' "$T/r.txt" >"$T/r-drop.txt"
check "a dropped receipt fails verify" sh -c "! '$O/factoryctl' verify '$T/r-drop.txt' >/dev/null"
awk 'NR==4 {h=$0; next} NR==5 {print; print h; next} {print}' "$T/r.txt" >"$T/r-swap.txt"
check "two swapped receipts fail verify" sh -c "! '$O/factoryctl' verify '$T/r-swap.txt' >/dev/null"
fp=$(ctl -j status >/dev/null; grep -o 'verifier key SHA256:[^ ]*' "$T/log" | head -1 | cut -d' ' -f3)
check "verify with the pinned verifier key" "$O/factoryctl" verify -V "$fp" "$T/r.txt"
check "verify with a wrong pinned key fails" sh -c "! '$O/factoryctl' verify -V SHA256:AAAA '$T/r.txt'"

# A refused syscall is evidence: the kernel's seccomp record of it
# reaches the attempt's receipts.
# The kernel rate-limits its log (10 records per 5 s): three tries,
# 3 s apart, so one gets through even after another suite's flood.
# A thread (glibc's pthread_create tries clone3 first, the filter says
# ENOSYS by design, glibc falls back to clone) is recorded as such: by
# design, with its fallback, apart from the denial that matters.
write_manifest "$T/deny.yaml" 'for i in 1 2 3; do unshare --user true 2>/dev/null || echo refused; python3 -c "import threading; t = threading.Thread(target=print); t.start(); t.join()"; sleep 3; done; echo d >> README.md'
id=$(submit_wait "$T/deny.yaml") || fail "denial case did not finish"
check "seccomp denial: the attempt went on" [ "$(field $id state)" = published ]
check "seccomp denial: shown by show -j" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -e '.seccomp_denials[] | select(.syscall == \"unshare\" and .action == \"errno\")'"
check "seccomp denial: a denial that matters is not by design" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -e '.seccomp_denials[] | select(.syscall == \"unshare\") | .by_design == false'"
check "seccomp denial: clone3 is by design, clone its fallback" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -e '.seccomp_denials[] | select(.syscall == \"clone3\") | .by_design == true and .fallback == \"clone\"'"
check "seccomp denial: in the exited receipt" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $id | grep '\"kind\":\"exited\"' | grep -q '\"syscall\":\"unshare\"'"

# Out of scope: rejected, nothing pushed, no pull record.
n=$(remote_branches)
write_manifest "$T/scope.yaml" 'echo x > Makefile; echo y >> README.md'
id=$(submit_wait "$T/scope.yaml") || fail "scope case did not finish"
check "out of scope: rejected" [ "$(field $id state)" = rejected ]
check "out of scope: reason names the path" sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'Makefile: outside the scope'"
check "out of scope: nothing pushed" [ "$(remote_branches)" = "$n" ]
check "out of scope: no pull record" [ ! -e "$T/pulls/$id.json" ]

# .git/config edited, or an escaping symlink: rejected.
write_manifest "$T/gitcfg.yaml" 'printf "[core]\n\thooksPath = /tmp\n" >> .git/config; echo y >> README.md'
id=$(submit_wait "$T/gitcfg.yaml") || fail ".git/config case did not finish"
check ".git/config edited: rejected" [ "$(field $id state)" = rejected ]
check ".git/config edited: reason" sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q '.git/config'"
write_manifest "$T/link.yaml" 'ln -s ../../../../../etc/shadow src/shadow'
id=$(submit_wait "$T/link.yaml") || fail "symlink case did not finish"
check "escaping symlink: rejected" [ "$(field $id state)" = rejected ]
check "escaping symlink: reason" sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'src/shadow: symlink'"
check "escaping symlink: nothing pushed" [ "$(remote_branches)" = "$n" ]

# A failing validation: rejected by the verifier.
write_manifest "$T/val.yaml" 'echo y >> README.md' 'grep -q never-there README.md'
id=$(submit_wait "$T/val.yaml") || fail "validation case did not finish"
check "failing validation: rejected" [ "$(field $id state)" = rejected ]
check "failing validation: reason" sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'validation'"
check "failing validation: nothing pushed" [ "$(remote_branches)" = "$n" ]

# Wall time: failed, every process gone.
write_manifest "$T/wall.yaml" 'sleep 1000 & sleep 1000' true
sed -i 's/wall: 20s/wall: 2s/' "$T/wall.yaml"
id=$(submit_wait "$T/wall.yaml") || fail "wall case did not finish"
check "wall time: failed" [ "$(field $id state)" = failed ]
check "wall time: reason" sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'wall time'"
check "wall time: no process of its uid" [ -z "$(uid_procs $(field $id uid))" ]

# Cancel while running.
write_manifest "$T/cancel.yaml" 'trap "" TERM; (setsid sleep 1000 &); sleep 1000'
id=$(ctl submit "$T/cancel.yaml")
wait_state "$id" running 20 || notok "cancel: never running"
uid=$(field $id uid)
sleep 0.5
check "cancel accepted" ctl cancel "$id"
wait_terminated "$id" 20
check "cancel: cancelled" [ "$(field $id state)" = cancelled ]
check "cancel: reason names the uid" sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'cancelled by uid 0'"
check "cancel: every process gone" [ -z "$(uid_procs $uid)" ]
check "cancel twice refused" sh -c "! '$O/factoryctl' -s '$SOCK' cancel $id"

# Manual approval.
write_manifest "$T/manual.yaml" 'echo manual >> README.md' true 'approval: manual'
id=$(ctl submit "$T/manual.yaml")
wait_state "$id" verified 60 || notok "manual: never verified"
check "manual: waits in verified" [ "$(field $id state)" = verified ]
check "manual: nothing published before approval" [ ! -e "$T/pulls/$id.json" ]

# A restarted factoryd shows the same attempts in the same states.
ctl -j list | jq -c '.attempts[] | [.id, .state]' >"$T/before"
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
ctl -j list | jq -c '.attempts[] | [.id, .state]' >"$T/after"
check "restart: same attempts in the same states" cmp -s "$T/before" "$T/after"
check "restart: the receipts still verify" sh -c "'$O/factoryctl' -s '$SOCK' receipts $id | '$O/factoryctl' verify - >/dev/null"

check "manual: approve" ctl approve "$id"
wait_terminated "$id" 30
check "manual: published after approval" [ "$(field $id state)" = published ]
check "manual: approve twice refused" sh -c "! '$O/factoryctl' -s '$SOCK' approve $id"

# Bad manifests are refused at submit with a line that says why.
refused() {	# name manifest-text expected-text
	printf '%s\n' "$2" >"$T/bad.yaml"
	"$O/factoryctl" -s "$SOCK" submit "$T/bad.yaml" >"$T/out" 2>&1
	st=$?
	check "refused at submit: $1 (exit $st)" sh -c "[ $st = 1 ] && grep -q -- '$3' '$T/out'"
}
good='baseline: main
scope: ["src/**"]
agent: ["/bin/true"]
validate: ["/bin/true"]
title: t'
refused "unknown repository" "repository: nope
$good" 'repository: "nope" is not a repository'
refused "unknown key" "repository: demo
colour: red
$good" 'colour: unknown key'
refused "bad glob" "repository: demo
baseline: main
scope: [\"src/[a\"]
agent: [\"/bin/true\"]
validate: [\"/bin/true\"]
title: t" 'scope'
refused "empty agent" "repository: demo
baseline: main
scope: [\"src/**\"]
agent: []
validate: [\"/bin/true\"]
title: t" 'agent'
refused "unknown baseline" "repository: demo
baseline: no-such-branch
scope: [\"src/**\"]
agent: [\"/bin/true\"]
validate: [\"/bin/true\"]
title: t" 'baseline'

stop_factoryd
regress_done
