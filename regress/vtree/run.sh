#!/bin/sh
# The validation tree is the object store's, never the worker's (issue
# 23, items 1 and 8).  A compromised worker that rewrites check.sh of
# its pristine checkout (or keeps it open to rewrite it later) must not
# get a result published whose validation failed on the real tree; the
# poisoned cache entry goes, and the tree made again is the baseline's.
# The cache is readable by root and the verifier's group only.
# Needs a test build: the compromised worker is its fault points.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 61504
write_attempt_conf "$T" 61500 62400-62429

if ! grep -q 'crash point' "$O/factoryd" 2>/dev/null; then
	echo "ok - # SKIP not a test build: no fault points in $O/factoryd"
	regress_done
fi

# The baseline has a check that fails: no honest validation passes.
printf 'exit 1\n' >"$T/src/check.sh"
git -C "$T/src" add check.sh
git -C "$T/src" -c user.name=test -c user.email=test@localhost \
    commit -qm "a failing check"
chown -R 0:0 "$T/remote.git"
git -C "$T/src" push -q "$T/demo.git" main &&
    git -C "$T/src" push -q "$T/remote.git" main ||
    fail "cannot push the baseline"
chown -R 61504:61504 "$T/remote.git"
base=$(git -C "$T/src" rev-parse HEAD)
btree=$(git -C "$T/src" rev-parse 'HEAD^{tree}')
P=$T/state/pristine/demo/$base

write_manifest "$T/check.yaml" 'echo more >> README.md' 'sh check.sh'
write_manifest "$T/true.yaml" 'echo more >> README.md' 'true'

has() {	# text pattern
	printf '%s\n' "$1" | grep -q "$2"
}

verdict() {	# id jq-filter
	ctl receipts "$1" | jq -r "select(.kind == \"verdict\") | .facts | $2"
}

# 1. The worker rewrites check.sh to "exit 0" after its checkout: the
# tree is checked before the agent takes it as its baseline.
FACTORY_CRASH=worker:poison-pristine start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/check.yaml") || fail "attempt did not end"
st=$(field $id state)
reason=$(field $id reason)
check "poisoned pristine: not published ($st: $reason)" [ "$st" = failed ]
check "  ... no branch pushed" [ "$(remote_branches)" = 0 ]
check "  ... the agent never ran on it" \
    sh -c "! '$O/factoryctl' -s '$SOCK' receipts $id | grep -q '\"kind\":\"running\"'"
check "  ... the reason names check.sh and both blobs" has "$reason" \
    "^baseline: pristine tree of $base is not its tree $btree: check.sh: blob [0-9a-f]*, the baseline's is $(git -C "$T/src" rev-parse HEAD:check.sh) (evicted)"
check "  ... the eviction is logged, naming check.sh" \
    grep -q "$id: pristine demo/$base is not the baseline's tree, evicted: check.sh: blob" "$T/log"
check "  ... the poisoned entry is gone" [ ! -e "$P" ]
stop_factoryd

# 1b. The cached tree changes after that check (as a worker that kept a
# way in would change it): the verifier's own check before validation
# finds it.  The agent goes on only once it sees the change.
start_factoryd "$T/factoryd.conf" "$T/log"
write_manifest "$T/wait.yaml" \
    'until grep -q "exit 0" check.sh; do sleep 0.1; done; echo more >> README.md' \
    'sh check.sh'
id=$(ctl submit "$T/wait.yaml") || fail "cannot submit"
wait_state $id running 60 || fail "$id never ran"
printf 'exit 0\n' >"$P/check.sh"
wait_terminated $id 60 || fail "$id did not end"
st=$(field $id state)
check "tampered pristine: not published ($st: $(field $id reason))" \
    [ "$st" = rejected ]
check "  ... no branch pushed" [ "$(remote_branches)" = 0 ]
reason=$(verdict $id .reason)
check "  ... the verdict names check.sh ($reason)" has "$reason" \
    "^baseline: pristine tree of $base is not its tree $btree: check.sh: blob"
check "  ... and says the pristine tree differs" \
    [ "$(verdict $id .baseline_tree.pristine)" = differs ]
check "  ... the validation never ran" [ "$(verdict $id .validation)" = null ]
check "  ... the eviction is logged, naming check.sh" \
    grep -q "$id: pristine demo/$base is not the baseline's tree, evicted: .*check.sh" "$T/log"
check "  ... the poisoned entry is gone" [ ! -e "$P" ]
stop_factoryd

# 2. An honest worker: the tree is made again, and is the baseline's.
start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/check.yaml") || fail "attempt did not end"
check "rebuilt pristine: the real check.sh fails validation ($(field $id state))" \
    [ "$(field $id state)" = rejected ]
check "  ... validation ran and failed" \
    [ "$(verdict $id .validation.passed)" = false ]
check "  ... on the checked baseline tree $btree" \
    [ "$(verdict $id .baseline_tree.tree)" = "$btree" ] && \
    [ "$(verdict $id .baseline_tree.pristine)" = same ]
id=$(submit_wait "$T/true.yaml") || fail "attempt did not end"
check "an honest result is published ($(field $id state))" \
    [ "$(field $id state)" = published ]
check "  ... its verdict names the baseline tree" \
    [ "$(verdict $id .baseline_tree.tree)" = "$btree" ]
ctl attest $id >"$T/a.jsonl"
check "  ... and so does its verification summary" \
    sh -c "sed -n 2p '$T/a.jsonl' | jq -r .payload | base64 -d | jq -e '.predicate.policy.annotations.baselineTree == \"$btree\" and .predicate.policy.annotations.baselineCommit == \"$base\"'"
check "  ... which verifies" "$O/factoryctl" verify -a "$T/a.jsonl"
pub=$(git --git-dir="$T/remote.git" -c safe.directory='*' show "factory/$id:check.sh")
check "  ... the published check.sh is the real one" [ "$pub" = "exit 1" ]

# 3. Item 8: the cache is no more readable than the repository.
check "pristine tree: 0750, root's" \
    [ "$(stat -c '%a %u' "$P")" = "750 0" ]
check "  ... and no index beside it (each attempt makes its own)" \
    [ ! -e "$P.index" ]
check "nobody cannot read the cached README.md" \
    sh -c "! setpriv --reuid=65534 --regid=65534 --clear-groups cat '$P/README.md'"
check "nobody cannot list the cached tree" \
    sh -c "! setpriv --reuid=65534 --regid=65534 --clear-groups ls '$P'"
check "modes inside are git's: no group or other write" \
    sh -c "[ -z \"\$(find '$P' ! -type l -perm /022)\" ]"
stop_factoryd

# 4. The worker keeps check.sh open and rewrites it after the parent
# made the tree root's: the tree is refused before any attempt uses it.
rm -rf "$P" "$P.index" "$P.size"
FACTORY_CRASH=worker:hold-pristine start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/check.yaml") || fail "attempt did not end"
st=$(field $id state)
check "held pristine: not published ($st: $(field $id reason))" \
    [ "$st" = failed ] || [ "$st" = rejected ]
check "  ... no branch for it" \
    sh -c "! git --git-dir='$T/remote.git' -c safe.directory='*' rev-parse -q --verify factory/$id"
check "  ... refused, naming the worker's descriptor" \
    grep -q "the worker still holds $T/state/pristine/demo/$base.$id/check.sh" "$T/log"
check "  ... no pristine tree left behind" [ ! -e "$P" ]
stop_factoryd

# 5. The worker parks a descriptor of check.sh, open for writing, in a
# unix socket's queue (SCM_RIGHTS to itself), where no /proc table
# shows it while the parent looks, takes it back after its collect and
# writes through it.  The parent's seal replaced every file by root's
# copy: the write lands in an inode nobody uses, the cached tree stays
# the baseline's, and the attempt ends as an honest one does (the real
# check.sh fails validation).  Before: the cache was poisoned, found by
# the verifier's check and evicted.
rm -rf "$P" "$P.index" "$P.size"
FACTORY_CRASH=worker:park-pristine start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/check.yaml") || fail "attempt did not end"
check "parked descriptor: the worker wrote through it" \
    grep -q "park-pristine: check.sh rewritten" "$T/log"
check "  ... the cached check.sh is still the commit's" \
    sh -c "[ -e '$P/check.sh' ] && [ \"\$(git hash-object '$P/check.sh')\" = \
    \"\$(git -C '$T/src' rev-parse HEAD:check.sh)\" ]"
check "  ... the attempt ends as an honest one ($(field $id state): $(field $id reason))" \
    [ "$(field $id state)" = rejected ]
check "  ... its verifier found the baseline's tree" \
    [ "$(verdict $id .baseline_tree.pristine)" = same ]
check "  ... and the real check.sh failed validation" \
    [ "$(verdict $id .validation.passed)" = false ]
check "  ... nothing evicted" \
    sh -c "! grep -q '$id: pristine demo/$base is not the baseline' '$T/log'"
stop_factoryd

# 6. What the seal takes from the worker's checkout: no index, no
# sparse file (F2, F1 of the review).
sh "$(dirname "$0")/seal.sh" || REGRESS_FAILED=1

regress_done
