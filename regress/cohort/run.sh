#!/bin/sh
# Best-of-N cohorts through the real daemon: a cohort of 3 whose
# variants differ in env, one of which fails validation; the selection
# of a passing member publishes one branch and one pull request and
# ends the others without publication; every refused selection; the
# crash points between select and publication resume into exactly one
# publication; cancel of a cohort; submit -n; cohort: in the manifest.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 66504
write_attempt_conf "$T" 66500 66520-66549
echo "max-cohort: 4" >>"$T/factoryd.conf"

# A member's agent does what its variant's MODE says; "bad" breaks the
# file the validation checks.
AGENT='if [ "$MODE" = bad ]; then echo broken > README.md; else echo "$MODE" >> README.md; fi'
VALIDATE='grep -q hello README.md'
write_manifest "$T/c3.yaml" "$AGENT" "$VALIDATE" 'env: {MODE: base}
cohort:
  size: 3
  variants:
    - env: {MODE: one}
    - env: {MODE: bad}
    - env: {MODE: "three\e[2J\u202e"}'

mstate() { ctl -j cohort "$1" | jq -r ".members[$2].state"; }
mid() { ctl -j cohort "$1" | jq -r ".members[$2].id"; }
pulls_of() { grep -l "\"attempt\": \"$1\"" "$T"/pulls/*.json 2>/dev/null | wc -l; }
branch_of() { git --git-dir="$T/remote.git" -c safe.directory='*' for-each-ref "refs/heads/factory/$1" | wc -l; }

# Until no member of the cohort is under way.
wait_settled() {	# cohort seconds
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		ctl -j cohort "$1" 2>/dev/null | jq -e -n 'input | [.members[] |
		    select(.state | IN("selectable", "published", "failed",
		    "rejected", "cancelled") | not)] | length == 0' \
		    >/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Until every member is torn down.
wait_cohort_terminated() {	# cohort seconds
	for m in $(ctl -j cohort "$1" | jq -r '.members[].id'); do
		wait_terminated "$m" "$2" || return 1
	done
}

# A refusal: exit 1 and the reason.
refused() {	# name expected-reason command...
	name=$1; want=$2; shift 2
	"$@" >"$T/out" 2>&1
	st=$?
	check "$name: refused (exit $st)" [ "$st" = 1 ]
	check "$name: says why" grep -q "$want" "$T/out"
}

start_factoryd "$T/factoryd.conf" "$T/log"

# --- the cohort of 3 ---------------------------------------------------
ctl -j submit "$T/c3.yaml" >"$T/sub.json" || fail "cohort submit refused"
C=$(jq -r .cohort "$T/sub.json")
check "submit: a cohort id c-YYYYMMDD-NNNN" sh -c "echo '$C' | grep -Eq '^c-[0-9]{8}-[0-9]{4}\$'"
check "submit: three members" [ "$(jq '.members | length' "$T/sub.json")" = 3 ]
check "the cohort is journaled before its first member" \
    sh -c "grep -n '$C: cohort of 3' '$T/log' | head -1 | cut -d: -f1 >'$T/l1'; grep -n 'submitted by uid 0: .*cohort $C' '$T/log' | head -1 | cut -d: -f1 >'$T/l2'; [ \$(cat '$T/l1') -lt \$(cat '$T/l2') ]"
wait_settled "$C" 90 || fail "cohort $C did not settle: $(ctl cohort $C)"
M0=$(mid "$C" 0); M1=$(mid "$C" 1); M2=$(mid "$C" 2)
check "member 0 (MODE one) verified, waits: selectable" [ "$(mstate $C 0)" = selectable ]
check "member 1 (MODE bad) fails validation: rejected" [ "$(mstate $C 1)" = rejected ]
check "member 2 (MODE three) selectable" [ "$(mstate $C 2)" = selectable ]
check "validation result shown: member 1 failed" \
    sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl -j cohort $C | jq -e '.members[1].validation.passed == false and .members[0].validation.passed == true'"
for m in $M0 $M1 $M2; do
	check "$m: its submitted receipt names cohort $C" \
	    sh -c "'$O/factoryctl' -s '$SOCK' receipts $m | grep '\"kind\":\"submitted\"' | grep -q '\"cohort\":\"$C\"'"
done
check "show names the member's cohort and variant" \
    sh -c "'$O/factoryctl' -s '$SOCK' show $M2 | grep -q '^cohort: $C, variant 2\$'"
check "variants: each member ran its own env" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j show $M0 | jq -e '.variant == 0 and .cohort == \"$C\"'"
check "no member published on its own" [ "$(ls "$T/pulls" | wc -l)" = 0 ]
ctl reconcile >/dev/null 2>&1
check "a reconcile finds no orphan of the waiting members" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j orphans | jq -e '.orphans | length == 0'"
check "the waiting members keep their results" \
    [ -e "$T/state/attempts/$M0/bundle" -a -e "$T/state/attempts/$M2/bundle" ]
check "nothing pushed before the selection" [ "$(remote_branches)" = 0 ]
check "list names the cohort of each member" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j list | jq -e '[.attempts[] | select(.cohort == \"$C\")] | length == 3'"
check "list shows the cohort" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j list | jq -e '.cohorts[] | select(.id == \"$C\" and .size == 3)'"
check "list (text) shows the cohort" sh -c "'$O/factoryctl' -s '$SOCK' list | grep -q '^$C  *3 -\$'"
check "status (text) shows the cohort" sh -c "'$O/factoryctl' -s '$SOCK' status | grep -q '^$C '"
check "status shows the cohort" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j status | jq -e '.cohorts[] | select(.id == \"$C\")'"
COLUMNS=100 ctl cohort "$C" >"$T/table" 2>&1
check "cohort: members side by side" sh -c "grep -q '^member .*$M0.*$M1' '$T/table' && grep -q '^validation .*passed.*failed' '$T/table'"
check "cohort: no spend without a model grant" grep -q '^spend  *-  *-  *-' "$T/table"
check "cohort: nothing raw for the terminal" sh -c "! grep -q \"\$(printf '\\033')\" '$T/table'"
COLUMNS=40 ctl cohort "$C" >"$T/narrow" 2>&1
check "cohort: a narrow terminal gets one member a band" \
    [ "$(grep -c '^member' "$T/narrow")" = 3 ]
check "cohort -j parses" sh -c "'$O/factoryctl' -s '$SOCK' cohort -j $C | jq -e '.members | length == 3'"
check "cohort of a bad id refused" sh -c "! '$O/factoryctl' -s '$SOCK' cohort c-1"
check "cohort of an unknown id refused" sh -c "! '$O/factoryctl' -s '$SOCK' cohort c-19990101-0001"

# --- diff ----------------------------------------------------------------
ctl diff "$M0" >"$T/diff0" 2>&1
check "diff: the member's patch" sh -c "grep -q '^--- a/README.md' '$T/diff0' && grep -q '^+one\$' '$T/diff0'"
ctl diff "$M2" >"$T/diff2" 2>&1
check "diff: the agent's escape bytes are shown, not sent" \
    sh -c "grep -q '^+three' '$T/diff2' && ! grep -q \"\$(printf '\\033')\" '$T/diff2'"
check "diff: no bidirectional override reaches the terminal" \
    sh -c "! grep -q \"\$(printf '\\342\\200\\256')\" '$T/diff2'"
ctl -j diff "$M2" >"$T/diff2.json" 2>&1
check "diff -j: exact bytes in the escaped form, nothing raw" \
    sh -c "jq -e '.patch | test(\"three\\\\\\\\x1b\")' '$T/diff2.json' >/dev/null && ! grep -q \"\$(printf '\\033')\" '$T/diff2.json'"
refused "diff of a member that failed validation (torn down)" "$M1 is torn down" ctl diff "$M1"
refused "diff of an unknown attempt" "no such attempt" ctl diff a-19990101-0001

# --- refusals ------------------------------------------------------------
refused "approve of a member" "member of cohort $C" ctl approve "$M0"
refused "select of a member that failed validation" "$M1 is rejected, not verified" ctl select "$M1"
refused "select of an unknown attempt" "no such attempt" ctl select a-19990101-0001
write_manifest "$T/plain.yaml" 'echo plain >> README.md' "$VALIDATE" 'approval: manual'
P=$(ctl submit "$T/plain.yaml")
wait_state "$P" verified 60
refused "select of an attempt of no cohort" "$P is not a member of a cohort" ctl select "$P"
ctl cancel "$P" >/dev/null
check "the read-only socket cannot select" \
    sh -c "! '$O/factoryctl' -s '$SOCK.ro' select $M0"

# A misbehaving client: every malformed cohort request is refused, and
# the daemon goes on serving.
"$O/regress/cohort/prog_cohortraw" "$SOCK" >"$T/raw" 2>&1
st=$?
sed 's/^/# /' "$T/raw"
check "malformed cohort requests: each refused (exit $st)" [ "$st" = 0 ]
check "malformed cohort requests: fourteen answers" [ "$(grep -c ': refused: ' "$T/raw")" = 14 ]
check "malformed cohort requests: the daemon still serves" ctl status

# --- the selection -------------------------------------------------------
ctl select "$M0" >"$T/out" 2>&1
check "select $M0: accepted" grep -q "$M0: selected" "$T/out"
refused "a second select" "$M0 is already selected\\|selection in progress: $M0 publishing" ctl select "$M2"
wait_cohort_terminated "$C" 60 || fail "cohort $C not torn down"
check "the selected member published" [ "$(field $M0 state)" = published ]
check "one pull record for the cohort" [ "$(ls "$T/pulls" | grep -c '\.json$')" = 1 ]
check "the pull record is the selected member's" [ "$(pulls_of $M0)" = 1 ]
check "one branch in the remote" [ "$(remote_branches)" = 1 ]
check "the branch is the selected member's" [ "$(branch_of $M0)" = 1 ]
check "the other passing member: cancelled, not published" [ "$(field $M2 state)" = cancelled ]
refused "cancel of a cohort whose selection published" \
    "no member left to cancel" ctl cancel "$C"
refused "diff on the read-only socket" "read-only socket: request refused" \
    "$O/factoryctl" -s "$SOCK.ro" diff "$M0"
check "  with the reason" sh -c "'$O/factoryctl' -s '$SOCK' -j show $M2 | jq -e '.reason | test(\"not selected: $C selected $M0\")'"
check "the failed member stays rejected" [ "$(field $M1 state)" = rejected ]
check "the selected receipt carries the operator's uid" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $M0 | grep '\"kind\":\"selected\"' | grep -q '\"uid\":0'"
check "the receipts verify" sh -c "'$O/factoryctl' -s '$SOCK' receipts $M0 | '$O/factoryctl' verify - >/dev/null"
check "cohort shows the selection" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $C | jq -e '.selected == \"$M0\"'"
refused "select after the end" "already selected" ctl select "$M2"
for m in $M0 $M1 $M2; do
	check "$m: attempt dir removed" [ ! -e "$T/state/attempts/$m" ]
done

# --- submit -n, bounds, manifests ---------------------------------------
ctl -j submit -n 2 "$T/plain.yaml" >"$T/n2.json"
C2=$(jq -r .cohort "$T/n2.json")
check "submit -n 2: a cohort of two" [ "$(jq '.members | length' "$T/n2.json")" = 2 ]
ctl submit -w -n 2 "$T/plain.yaml" >"$T/w.out" 2>&1
st=$?
check "submit -w -n 2: waits until both are selectable (exit $st)" [ "$st" = 0 ]
check "submit -w -n 2: shows the cohort" grep -q '^state  *selectable  *selectable' "$T/w.out"
CW=$(head -1 "$T/w.out")
ctl cancel "$CW" >/dev/null 2>&1
wait_cohort_terminated "$CW" 60
refused "submit -n 5 over max-cohort 4" "max-cohort" ctl submit -n 5 "$T/plain.yaml"
ctl submit -n 1 "$T/plain.yaml" >"$T/out" 2>&1
check "submit -n 1: a usage error (exit $?)" grep -q -- "-n 1: too small" "$T/out"
refused "submit -n 2 of a cohort of 3" "size 3, but -n 2" ctl submit -n 2 "$T/c3.yaml"
write_manifest "$T/bad-n.yaml" true true 'cohort: {size: 3, variants: [{env: {A: "1"}}]}'
refused "variants fewer than the size" "1 variants for a cohort of size 3" ctl submit "$T/bad-n.yaml"
write_manifest "$T/bad-key.yaml" true true 'cohort: {size: 2, variants: [{env: {A: "1"}}, {agent: ["/bin/true"]}]}'
refused "a variant changes the agent" "unknown key" ctl submit "$T/bad-key.yaml"
write_manifest "$T/bad-env.yaml" true true 'cohort: {size: 2, variants: [{env: {A: "1"}}, {env: {PATH: "/x"}}]}'
refused "a variant sets PATH" "refused: factory sets PATH" ctl submit "$T/bad-env.yaml"
# A variant's model grant is admitted as the manifest's own would be:
# a provider the repository does not have refuses the cohort.
write_manifest "$T/bad-model.yaml" true true 'cohort: {size: 2, variants: [{env: {A: "1"}}, {model: {provider: nope, models: [m1]}}]}'
refused "a variant's model grant outside the policy" "model.provider: nope is not a provider of this factoryd" ctl submit "$T/bad-model.yaml"
write_manifest "$T/bad-size.yaml" true true 'cohort: {size: 9}'
refused "cohort: size over max-cohort" "max-cohort" ctl submit "$T/bad-size.yaml"
write_manifest "$T/bad-one.yaml" true true 'cohort: {size: 1}'
refused "cohort: size 1" "out of range" ctl submit "$T/bad-one.yaml"

# --- cancel of a cohort --------------------------------------------------
write_manifest "$T/slow.yaml" 'sleep 30; echo slow >> README.md' "$VALIDATE"
C3=$(ctl -j submit -n 3 "$T/slow.yaml" | jq -r .cohort)
S0=$(mid "$C3" 0)
wait_state "$S0" running 30
refused "select of a running member" "$S0 is running, not verified" ctl select "$S0"
ctl cancel "$C3" >"$T/out" 2>&1
check "cancel $C3: accepted" grep -q "$C3: cancelled" "$T/out"
wait_cohort_terminated "$C3" 60 || fail "cancelled cohort $C3 not torn down"
check "cancel of a cohort: every member cancelled" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $C3 | jq -e '[.members[] | select(.state == \"cancelled\")] | length == 3'"
refused "cancel of an unknown cohort" "no such cohort" ctl cancel c-19990101-0001
ctl cancel "$C2" >/dev/null 2>&1
wait_cohort_terminated "$C2" 60

# --- a selection whose publication fails --------------------------------
# The others are torn down only once the one selected has published:
# while it publishes they wait (selectable, their bundles kept) and a
# second select is refused; when its publication fails the cohort is
# selectable again, the failure shown.  The forge is made to hold the
# publication (its pulls lock held), then to fail it (pulls not
# writable: the branch is pushed, the pull record cannot be made), or
# to refuse the push (objects/pack not writable: nothing is pushed).
write_manifest "$T/c3ok.yaml" "$AGENT" "$VALIDATE" 'cohort:
  size: 3
  variants:
    - env: {MODE: x}
    - env: {MODE: y}
    - env: {MODE: z}'
LOCKPID=
lock_pulls() {
	rm -f "$T/locked"
	[ -e "$T/pulls/.lock" ] || { touch "$T/pulls/.lock" &&
	    chown 66504:66504 "$T/pulls/.lock"; }
	( flock -x 9 && touch "$T/locked" && exec sleep 600 ) \
	    9<"$T/pulls/.lock" &
	LOCKPID=$!
	i=0
	while [ ! -e "$T/locked" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
unlock_pulls() {
	[ -n "$LOCKPID" ] && kill "$LOCKPID" 2>/dev/null && wait "$LOCKPID" 2>/dev/null
	LOCKPID=
}
# Until the member's state (ended or not) is $2.
wait_st() { wait_field "$1" state "$2" "$3"; }	# id state seconds
trap 'unlock_pulls; chmod 755 "$T/pulls" "$T/remote.git/objects/pack" 2>/dev/null; regress_cleanup' EXIT

K1=$(ctl -j submit "$T/c3ok.yaml" | jq -r .cohort)
wait_settled "$K1" 90 || fail "cohort $K1 did not settle: $(ctl cohort $K1)"
A=$(mid "$K1" 0); B=$(mid "$K1" 1); C1=$(mid "$K1" 2)
check "reselect: three members selectable" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K1 | jq -e '[.members[] | select(.state == \"selectable\")] | length == 3'"
npulls=$(ls "$T/pulls" | grep -c '\.json$')
lock_pulls
check "reselect: the forge's pulls lock is held" [ -e "$T/locked" ]
ctl select "$A" >"$T/out" 2>&1
check "reselect: select $A accepted" grep -q "$A: selected" "$T/out"
wait_state "$A" publishing 30 || notok "reselect: $A not publishing: $(field $A phase)"
sleep 1
check "while $A publishes: the others are still selectable" \
    [ "$(field $B state)" = selectable -a "$(field $C1 state)" = selectable ]
check "while $A publishes: their bundles are kept" \
    [ -e "$T/state/attempts/$B/bundle" -a -e "$T/state/attempts/$C1/bundle" ]
refused "while $A publishes: a select of another" \
    "selection in progress: $A publishing" ctl select "$B"
refused "while $A publishes: a select of the same" \
    "selection in progress: $A publishing" ctl select "$A"
refused "while $A publishes: its cancel" \
    "a publication under way is not cancelled" ctl cancel "$A"
check "while $A publishes: cohort names it selected" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K1 | jq -e '.selected == \"$A\"'"
# A crash while it publishes: the same state after the restart.
kill -KILL "$FACTORYD_PID"; wait "$FACTORYD_PID" 2>/dev/null; FACTORYD_PID=""
sleep 0.5
start_factoryd "$T/factoryd.conf" "$T/log"
check "restarted while $A publishes: it still publishes" \
    [ "$(field $A phase)" = publishing ]
check "restarted while $A publishes: the others still selectable" \
    [ "$(field $B state)" = selectable -a "$(field $C1 state)" = selectable ]
refused "restarted while $A publishes: a select of another" \
    "selection in progress: $A publishing" ctl select "$B"
# The forge fails the publication.
chmod 555 "$T/pulls"
unlock_pulls
wait_st "$A" selectable 30 ||
    notok "reselect: $A not selectable again: $(field $A state): $(field $A reason)"
chmod 755 "$T/pulls"
check "the publication failed: $A selectable again" [ "$(field $A state)" = selectable ]
check "the publication failed: the others still selectable" \
    [ "$(field $B state)" = selectable -a "$(field $C1 state)" = selectable ]
check "the publication failed: no selection now" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K1 | jq -e '.selected == null'"
check "the publication failed: cohort -j shows the failed selection and why" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K1 | jq -e '.failed_selections | length == 1 and .[0].member == \"$A\" and .[0].uid == 0 and (.[0].reason | test(\"publication failed: .*Permission denied\"))'"
ctl cohort "$K1" >"$T/table" 2>&1
check "the publication failed: cohort shows it" \
    grep -q "^selection failed: $A (uid 0): publication failed" "$T/table"
check "the publication failed: one publish-failed receipt" \
    [ "$(ctl receipts $A | grep -c '"kind":"publish-failed"')" = 1 ]
check "the publication failed: the receipts verify" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $A | '$O/factoryctl' verify - >/dev/null"
check "the publication failed: no pull record" [ "$(pulls_of $A)" = 0 ]
# The same member again: the branch it pushed is reused.
ctl select "$A" >"$T/out" 2>&1
check "a second select of $A after the failure: accepted" grep -q "$A: selected" "$T/out"
wait_cohort_terminated "$K1" 60 || notok "cohort $K1 not torn down"
check "reselect of the same: published" [ "$(field $A state)" = published ]
check "reselect of the same: one pull record more" \
    [ "$(ls "$T/pulls" | grep -c '\.json$')" = $((npulls + 1)) ]
check "reselect of the same: its pull record, once" [ "$(pulls_of $A)" = 1 ]
check "reselect of the same: its branch, once" [ "$(branch_of $A)" = 1 ]
for m in $B $C1; do
	check "reselect of the same: $m cancelled, not selected" \
	    sh -c "'$O/factoryctl' -s '$SOCK' -j show $m | jq -e '.state == \"cancelled\" and (.reason | test(\"^not selected: $K1 selected $A\"))'"
	check "reselect of the same: $m has no branch" [ "$(branch_of $m)" = 0 ]
done
check "reselect of the same: two selected receipts" \
    [ "$(ctl receipts $A | grep -c '"kind":"selected"')" = 2 ]

# The forge refuses the push; another member is selected.
K2=$(ctl -j submit "$T/c3ok.yaml" | jq -r .cohort)
wait_settled "$K2" 90 || fail "cohort $K2 did not settle: $(ctl cohort $K2)"
A=$(mid "$K2" 0); B=$(mid "$K2" 1); C1=$(mid "$K2" 2)
npulls=$(ls "$T/pulls" | grep -c '\.json$')
chmod 555 "$T/remote.git/objects/pack"
ctl select "$A" >/dev/null 2>&1
wait_st "$A" selectable 30 ||
    notok "push refused: $A not selectable again: $(field $A state): $(field $A reason)"
chmod 755 "$T/remote.git/objects/pack"
check "push refused: no branch of $A" [ "$(branch_of $A)" = 0 ]
check "push refused: the others still selectable" \
    [ "$(field $B state)" = selectable -a "$(field $C1 state)" = selectable ]
check "push refused: cohort -j shows why" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K2 | jq -e '.failed_selections[0].member == \"$A\" and (.failed_selections[0].reason | test(\"publication failed\"))'"
ctl select "$B" >"$T/out" 2>&1
check "push refused: select of another ($B) accepted" grep -q "$B: selected" "$T/out"
wait_cohort_terminated "$K2" 60 || notok "cohort $K2 not torn down"
check "push refused, another selected: it published" [ "$(field $B state)" = published ]
check "push refused, another selected: one pull record more, its own" \
    [ "$(ls "$T/pulls" | grep -c '\.json$')" = $((npulls + 1)) -a "$(pulls_of $B)" = 1 ]
check "push refused, another selected: one branch, its own" \
    [ "$(branch_of $B)" = 1 -a "$(branch_of $A)" = 0 -a "$(branch_of $C1)" = 0 ]
for m in $A $C1; do
	check "push refused, another selected: $m cancelled" \
	    sh -c "'$O/factoryctl' -s '$SOCK' -j show $m | jq -e '.state == \"cancelled\" and (.reason | test(\"^not selected: $K2 selected $B\"))'"
done
check "push refused, another selected: the failed selection is still shown" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K2 | jq -e '.selected == \"$B\" and (.failed_selections | length) == 1'"
refused "select after the publication" "$B is already selected" ctl select "$A"

# The forge fails the publication after the push (pulls not writable:
# the branch is made, the record is not), and another member is
# selected: its publication deletes the first one's branch before it
# makes its own, so the remote ends with the selected member's branch
# alone (before: the failed member's branch stayed).
K2B=$(ctl -j submit "$T/c3ok.yaml" | jq -r .cohort)
wait_settled "$K2B" 90 || fail "cohort $K2B did not settle: $(ctl cohort $K2B)"
A4=$(mid "$K2B" 0); B4=$(mid "$K2B" 1); C4=$(mid "$K2B" 2)
chmod 555 "$T/pulls"
ctl select "$A4" >/dev/null 2>&1
wait_st "$A4" selectable 30 ||
    notok "failed after the push: $A4 not selectable again: $(field $A4 state): $(field $A4 reason)"
chmod 755 "$T/pulls"
check "failed after the push: $A4's branch was made" [ "$(branch_of $A4)" = 1 ]
ctl select "$B4" >/dev/null 2>&1
wait_cohort_terminated "$K2B" 60 || notok "cohort $K2B not torn down"
check "failed after the push, another selected: it published" \
    [ "$(field $B4 state)" = published ]
check "failed after the push, another selected: one branch, its own" \
    [ "$(branch_of $B4)" = 1 -a "$(branch_of $A4)" = 0 -a "$(branch_of $C4)" = 0 ]
check "failed after the push, another selected: one pull record, its own" \
    [ "$(pulls_of $B4)" = 1 -a "$(pulls_of $A4)" = 0 ]
check "failed after the push, another selected: the publisher says so" \
    grep -q "$B4: branch factory/$A4 deleted, superseded in cohort $K2B" "$T/log"

# A selected member that cannot publish at all (its bundle is gone)
# ends failed, and its selection with it: the cohort is selectable.
K3=$(ctl -j submit "$T/c3ok.yaml" | jq -r .cohort)
wait_settled "$K3" 90 || fail "cohort $K3 did not settle: $(ctl cohort $K3)"
A3=$(mid "$K3" 0); B3=$(mid "$K3" 1); C3=$(mid "$K3" 2)
rm -f "$T/state/attempts/$A3/bundle"
ctl select "$A3" >/dev/null 2>&1
wait_st "$A3" failed 30 || notok "bundle gone: $A3 is $(field $A3 state)"
check "bundle gone: the others still selectable" \
    [ "$(field $B3 state)" = selectable -a "$(field $C3 state)" = selectable ]
check "bundle gone: cohort has no selection, shows why" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K3 | jq -e '.selected == null and .failed_selections[0].member == \"$A3\" and (.failed_selections[0].reason | test(\"bundle\"))'"
refused "bundle gone: the failed member cannot be selected again" \
    "$A3 is failed, not verified" ctl select "$A3"
ctl select "$B3" >/dev/null 2>&1
wait_cohort_terminated "$K3" 60 || notok "cohort $K3 not torn down"
check "bundle gone: another selected published" [ "$(field $B3 state)" = published ]
check "bundle gone: one pull record of the cohort" \
    [ "$(pulls_of $B3)" = 1 -a "$(pulls_of $A3)" = 0 -a "$(pulls_of $C3)" = 0 ]
check "bundle gone: the third cancelled" [ "$(field $C3 state)" = cancelled ]

# --- restart: the cohorts are rebuilt from the journal ------------------
npulls=$(ls "$T/pulls" | grep -c '\.json$')
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
check "after a restart: the cohort and its selection" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $C | jq -e '.selected == \"$M0\" and (.members | length) == 3'"
check "after a restart: still one pull record of the cohort" [ "$(pulls_of $M0)" = 1 ]
check "after a restart: no pull record more" [ "$(ls "$T/pulls" | grep -c '\.json$')" = "$npulls" ]
check "after a restart: the failed selection is still shown" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K2 | jq -e '.selected == \"$B\" and .failed_selections[0].member == \"$A\"'"
stop_factoryd

# --- crash points between select and publication ------------------------
if ! grep -q 'crash point' "$O/factoryd" 2>/dev/null; then
	echo "ok - # SKIP not a test build: no crash points"
	regress_done
fi
write_manifest "$T/c2.yaml" "$AGENT" "$VALIDATE" 'cohort:
  size: 2
  variants:
    - env: {MODE: left}
    - env: {MODE: right}'
# factoryd that dies at the crash point, its children up.
crash_start() {	# point
	FACTORY_CRASH=$1 "$O/factoryd" -dk -f "$T/factoryd.conf" 2>>"$T/log" &
	FACTORYD_PID=$!
	wait_serving "$SOCK" "$FACTORYD_PID"
}
# Until it died, its exit status in st (86: at the crash point); one
# that did not die there is killed (st 137), never left running.
crash_wait() {	# seconds
	i=0
	while kill -0 "$FACTORYD_PID" 2>/dev/null && [ $i -lt $(($1 * 10)) ]; do
		sleep 0.1; i=$((i + 1))
	done
	kill -KILL "$FACTORYD_PID" 2>/dev/null
	wait "$FACTORYD_PID"
	st=$?
	FACTORYD_PID=""
}
crash_restart() {
	sleep 0.5
	start_factoryd "$T/factoryd.conf" "$T/log"
}
for point in parent:cohort-selected parent:cohort-torn-down \
    parent:cohort-publish-sent parent:cohort-published; do
	npulls=$(ls "$T/pulls" | grep -c '\.json$')
	nbranches=$(remote_branches)
	crash_start "$point"
	K=$(ctl -j submit "$T/c2.yaml" | jq -r .cohort)
	wait_settled "$K" 90 || fail "$point: cohort $K did not settle"
	A=$(mid "$K" 0); B=$(mid "$K" 1)
	ctl select "$A" >/dev/null 2>&1
	crash_wait 30
	check "$point: factoryd died there (exit $st)" [ "$st" = 86 ]
	crash_restart
	wait_cohort_terminated "$K" 60 || notok "$point: cohort $K not torn down"
	check "$point: the selected member published ($(field $A state): $(field $A reason))" \
	    [ "$(field $A state)" = published ]
	check "$point: the other cancelled ($(field $B state))" [ "$(field $B state)" = cancelled ]
	check "$point: one pull record more" [ "$(ls "$T/pulls" | grep -c '\.json$')" = $((npulls + 1)) ]
	check "$point: the selected member's pull record, once" [ "$(pulls_of $A)" = 1 ]
	check "$point: none for the other" [ "$(pulls_of $B)" = 0 ]
	check "$point: one branch more" [ "$(remote_branches)" = $((nbranches + 1)) ]
	check "$point: the branch is the selected member's" [ "$(branch_of $A)" = 1 ]
	check "$point: one selected receipt" \
	    [ "$(ctl receipts $A | grep -c '"kind":"selected"')" = 1 ]
	check "$point: the receipts verify" \
	    sh -c "'$O/factoryctl' -s '$SOCK' receipts $A | '$O/factoryctl' verify - >/dev/null"
	stop_factoryd
done
# A member's verdict journaled, the crash before it is selectable: at
# start it is made selectable, and never published on its own.
crash_start parent:after-verdict
npulls=$(ls "$T/pulls" | grep -c '\.json$')
K=$(ctl -j submit "$T/c2.yaml" | jq -r .cohort)
crash_wait 60
check "after-verdict, a member: factoryd died there (exit $st)" [ "$st" = 86 ]
crash_restart
wait_settled "$K" 180
# The one whose verdict was journaled is selectable; the other is too,
# unless its agent was still running at the crash (a member behind,
# on a loaded machine): then it failed, saying so, and is not lost.
ctl -j cohort "$K" >"$T/out" 2>&1
check "after-verdict, a member: selectable after the restart ($(jq -c '[.members[].state]' "$T/out"))" \
    jq -e '([.members[] | select(.state == "selectable")] | length) >= 1 and
    all(.members[]; .state == "selectable" or (.state == "failed" and
    ((.reason // "") | test("^agent interrupted"))))' "$T/out"
check "after-verdict, a member: nothing published" [ "$(ls "$T/pulls" | grep -c '\.json$')" = "$npulls" ]
ctl cancel "$K" >/dev/null 2>&1
wait_cohort_terminated "$K" 60
stop_factoryd
# A publication that fails, the crash right after its failure is
# journaled: at start the cohort is selectable again, nothing is
# published, and another member's selection publishes it.
crash_start parent:cohort-publish-failed
npulls=$(ls "$T/pulls" | grep -c '\.json$')
K=$(ctl -j submit "$T/c2.yaml" | jq -r .cohort)
wait_settled "$K" 90 || fail "publish-failed: cohort $K did not settle"
A=$(mid "$K" 0); B=$(mid "$K" 1)
chmod 555 "$T/remote.git/objects/pack"
ctl select "$A" >/dev/null 2>&1
crash_wait 30
chmod 755 "$T/remote.git/objects/pack"
check "publish-failed: factoryd died there (exit $st)" [ "$st" = 86 ]
crash_restart
sleep 1
check "publish-failed: after the restart both selectable ($(field $A state), $(field $B state))" \
    [ "$(field $A state)" = selectable -a "$(field $B state)" = selectable ]
check "publish-failed: after the restart the failure is shown" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j cohort $K | jq -e '.selected == null and .failed_selections[0].member == \"$A\"'"
check "publish-failed: nothing published" [ "$(ls "$T/pulls" | grep -c '\.json$')" = "$npulls" ]
ctl select "$B" >/dev/null 2>&1
wait_cohort_terminated "$K" 60 || notok "publish-failed: cohort $K not torn down"
check "publish-failed: the other selected published" [ "$(field $B state)" = published ]
check "publish-failed: the first cancelled" [ "$(field $A state)" = cancelled ]
check "publish-failed: one pull record more, the other's" \
    [ "$(ls "$T/pulls" | grep -c '\.json$')" = $((npulls + 1)) -a "$(pulls_of $B)" = 1 ]
stop_factoryd
check "the crash points were reached" grep -q 'crash point parent:cohort-published: dying now' "$T/log"

regress_done
