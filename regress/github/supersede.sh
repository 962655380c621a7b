# regress/github: a cohort's member published after another member's
# selection failed (publisher/github.c, gh_supersede), sourced by
# run.sh (its helpers, $T, $PROG, and baddays.sh's faults, F, counts).
# The earlier member left what a failed publication can leave: its
# branch pushed and its pull request opened by the forge, whose answer
# was lost.  The new member's PUBLISH names it in "supersede": its open
# pull request is closed and its branch deleted before the new one's
# are made, so the forge ends with one open pull request, the
# selected member's; a failure there fails the publication, saying
# why, with nothing of the new member made.

KOH=c-20261203-0001
SPN=200
# The crashed run of crash-resume could not revoke its token.
LIVE0=$(nlive)
# leftover ID: a member whose failed publication left a branch at its
# commit and an open pull request; sets LEFT (its commit) and LEFTPR.
leftover() {
	mkbundle "$1" || return 1
	LEFT=$COMMIT
	git -C "$T/work" push -q "$BARE" "factory/$1" || return 1
	ctl "{\"pull\":{\"title\":\"work of $1\",\"head\":\"factory/$1\",
	    \"base\":\"main\"}}"
	LEFTPR=$(state | jq ".pulls[] | select(.head.ref == \"factory/$1\") |
	    .number")
}
# supersede_msg ID EARLIER COMMIT [more JSON]: ID's message, a cohort
# member's that supersedes EARLIER at COMMIT.
supersede_msg() {
	message "$1" "" ",\"cohort\":\"$KOH\",\"supersede\":[{\"id\":\"$2\",
	    \"commit\":\"$3\"}]${4:-}"
}
pull_state() { state | jq -r "[.pulls[] | select(.head.ref ==
    \"factory/$1\")] | map(.state) | join(\",\")"; }
nopen() { state | jq "[.pulls[] | select(.state == \"open\" and
    (.head.ref == \"factory/$1\" or .head.ref == \"factory/$2\"))] |
    length"; }
npatch() { state | jq "[.requests[] | select(.method == \"PATCH\" and
    .path == \"/repos/$OWNER/$REPO/pulls/$1\" and .status == 200)] |
    length"; }
# A pair of members: EA the earlier (its leftovers), EB the new one.
pair() {
	SPN=$((SPN + 1)); EA=a-20261203-0$SPN
	SPN=$((SPN + 1)); EB=a-20261203-0$SPN
	leftover $EA && mkbundle $EB && supersede_msg $EB $EA "$LEFT"
}
# The new member failed, saying WHY, and left everything as it was.
untouched() {	# name why-regex
	if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -Eq "$2"; then
		nok "$1" "exit $RC, wanted /$2/: $OUT"
	elif [ "$(pull_state $EA)" != open ] ||
	    [ "$(forge_branch $EA)" != "$LEFT" ]; then
		nok "$1" "$EA's pull is $(pull_state $EA), branch" \
		    "$(forge_branch $EA)"
	elif [ "$(npulls $EB)" != 0 ] || forge_branch $EB >/dev/null; then
		nok "$1" "$EB has a pull request or a branch after failing"
	elif [ "$(nlive)" != "$LIVE0" ]; then
		nok "$1" "$(($(nlive) - LIVE0)) live tokens"
	else
		ok "$1"
	fi
}

# 1. The earlier member's pull request closed, its branch deleted, the
# new one's opened: one open pull request in the cohort (before the
# fix: two, and the earlier branch left).
pair
publish $EB
if [ $RC -ne 0 ]; then
	nok supersede-closes-and-deletes "exit $RC: $OUT"
elif [ "$(pull_state $EA)" != closed ] || [ "$(pull_state $EB)" != open ] ||
    [ "$(nopen $EA $EB)" != 1 ]; then
	nok supersede-closes-and-deletes "pulls: $EA $(pull_state $EA)," \
	    "$EB $(pull_state $EB)"
elif forge_branch $EA >/dev/null; then
	nok supersede-closes-and-deletes "branch factory/$EA left on the forge"
elif [ "$(forge_branch $EB)" != "$COMMIT" ] || [ "$(nlive)" != "$LIVE0" ]; then
	nok supersede-closes-and-deletes "branch of $EB, or $(nlive) live tokens"
else
	ok supersede-closes-and-deletes
fi
# 1b. The earlier member selected again: the new one (whose selection
# is taken to have failed too) superseded in turn, the earlier one's
# branch pushed again and its own pull request reopened, never a
# second one.
S1A=$EA S1B=$EB S1APR=$LEFTPR S1B_COMMIT=$COMMIT
COMMIT=$LEFT
supersede_msg $S1A $S1B "$S1B_COMMIT"
publish $S1A .again
if [ $RC -ne 0 ]; then
	nok supersede-reselect-reopens "exit $RC: $OUT"
elif [ "$(jget "$OUT" .number)" != "$S1APR" ] ||
    [ "$(pull_state $S1A)" != open ] || [ "$(pull_state $S1B)" != closed ]
then
	nok supersede-reselect-reopens "got $OUT; pulls: $S1A" \
	    "$(pull_state $S1A), $S1B $(pull_state $S1B)"
elif [ "$(forge_branch $S1A)" != "$LEFT" ] || forge_branch $S1B >/dev/null
then
	nok supersede-reselect-reopens "branches: $S1A $(forge_branch $S1A)," \
	    "$S1B $(forge_branch $S1B)"
else
	ok supersede-reselect-reopens
fi
# 1c. The same member selected again reuses its own pull request: it
# is never in its own list (the decoder refuses that), and nothing of
# it is closed.
message $S1A "" ",\"cohort\":\"$KOH\""
publish $S1A .third
if [ $RC -ne 0 ] || [ "$(jget "$OUT" .number)" != "$S1APR" ] ||
    [ "$(jget "$OUT" .reused)" != true ] || [ "$(pull_state $S1A)" != open ]
then
	nok supersede-same-member-reuses "exit $RC: $OUT, $(pull_state $S1A)"
else
	ok supersede-same-member-reuses
fi

# 2. The close answered 502 until the publisher gives up: the
# publication fails saying so, nothing of the new member is made, the
# earlier one is as it was; once the forge mends, the same PUBLISH
# succeeds.
pair
faults "[$(F api PATCH "$RP/pulls/$LEFTPR" status \
    ',"status":502,"retry_after":1,"count":100')]"
publish $EB
faults '[]'
untouched supersede-close-5xx \
    "PATCH $RP/pulls/$LEFTPR: 502 .*gave up.*pull request #$LEFTPR of $EA not closed"
publish $EB .mended
if [ $RC -ne 0 ] || [ "$(pull_state $EA)" != closed ] ||
    [ "$(pull_state $EB)" != open ] || forge_branch $EA >/dev/null; then
	nok supersede-close-5xx-mended "exit $RC: $OUT; $EA $(pull_state $EA)"
else
	ok supersede-close-5xx-mended
fi

# 3. The close's connection dropped after the forge closed it: tried
# again (closing a closed one is answered 200 closed).  Dropped before
# every try: fails, nothing made.
pair
faults "[$(F api PATCH "$RP/pulls/$LEFTPR" drop-response)]"
publish $EB
faults '[]'
if [ $RC -ne 0 ] || [ "$(pull_state $EA)" != closed ] ||
    [ "$(pull_state $EB)" != open ] || forge_branch $EA >/dev/null; then
	nok supersede-close-dropped "exit $RC: $OUT; $EA $(pull_state $EA)"
else
	ok supersede-close-dropped
fi
pair
faults "[$(F api PATCH "$RP/pulls/$LEFTPR" drop-request ',"count":100')]"
publish $EB
faults '[]'
untouched supersede-close-dropped-always \
    "gave up after 4 tries.*#$LEFTPR of $EA not closed"

# 4. The earlier pull request already closed by a person: nothing to
# close (no PATCH sent), the branch still goes.
pair
ctl "{\"set_pull\":{\"head\":\"factory/$EA\",\"state\":\"closed\"}}"
publish $EB
if [ $RC -ne 0 ] || [ "$(pull_state $EA)" != closed ] ||
    [ "$(pull_state $EB)" != open ] || forge_branch $EA >/dev/null; then
	nok supersede-already-closed "exit $RC: $OUT; $EA $(pull_state $EA)"
elif [ "$(npatch $LEFTPR)" != 0 ]; then
	nok supersede-already-closed "a closed pull request was closed again"
else
	ok supersede-already-closed
fi

# 5. The list of pull requests answering garbage: refused, not taken
# for "none".  Each: a name, the body, what the error says.
OURS='"head":{"ref":"factory/@EA@","repo":{"id":'$REPO_ID'}}'
while IFS='|' read -r name body why; do
	pair
	body=$(printf '%s' "$body" | sed "s/@EA@/$EA/g")
	why=$(printf '%s' "$why" | sed "s/@EA@/$EA/g")
	faults "[$(F api GET "$RP/pulls" garbage \
	    ",\"body\":$(printf '%s' "$body" | jq -Rs .)")]"
	publish $EB
	faults '[]'
	untouched "supersede-list-garbage-$name" \
	    "100: $why.*pull requests of $EA not checked"
done <<GARBAGE
object|{"message":"not a list"}|not a list
not-json|[{"number":1,|bad JSON
entries|[{"number":1},"x"]|entry 0 is not a pull request
number|[{"number":"7","state":"open","html_url":"https://x/7",$OURS}]|pull request of factory/@EA@ without a number
state|[{"number":7,"state":"draft","html_url":"https://x/7",$OURS}]|pull request of factory/@EA@ without a number
merged-at|[{"number":7,"state":"closed","merged_at":5,"html_url":"https://x/7",$OURS}]|pull request of factory/@EA@ without a number
GARBAGE

# 6. A merged pull request of the earlier member: refused (its work is
# in main), nothing closed, deleted or made.
pair
ctl "{\"set_pull\":{\"head\":\"factory/$EA\",\"merged\":true}}"
publish $EB
untouched supersede-merged-refused "#$LEFTPR of $EA, whose selection failed, was merged"

# 7. The earlier branch holding another commit (someone pushed there):
# neither deleted nor its pull request closed.
pair
git -C "$T/work" push -q -f "$BARE" "main:refs/heads/factory/$EA"
LEFT=$(git -C "$T/work" rev-parse main)
publish $EB
untouched supersede-branch-moved \
    "branch factory/$EA on the forge holds $LEFT, not .*: not deleted"

# 8. The earlier member's branch deletion answered 500 until the
# publisher gives up: fails; its pull request was closed (that is
# harmless: selecting it again reopens it), nothing of the new one made.
pair
faults "[$(F api DELETE "$RP/git/refs/heads/factory/$EA" status \
    ',"status":500,"retry_after":1,"count":100')]"
publish $EB
faults '[]'
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q \
    "500 .*gave up.*branch factory/$EA of $EA not deleted"; then
	nok supersede-delete-5xx "exit $RC: $OUT"
elif [ "$(forge_branch $EA)" != "$LEFT" ] || [ "$(npulls $EB)" != 0 ] ||
    forge_branch $EB >/dev/null; then
	nok supersede-delete-5xx "a branch went, or $EB has a pull request"
else
	ok supersede-delete-5xx
fi

# 8b (rev-20). The deletion answered 422 for another reason than
# "Reference does not exist" (a rule that forbids deleting it, which
# GitHub answers 422 too): the branch is still there, so the publication
# must not go on saying it was deleted (before: any 422 taken for "gone").
pair
faults "[$(F api DELETE "$RP/git/refs/heads/factory/$EA" status \
    ',"status":422,"count":100')]"
publish $EB
faults '[]'
if [ $RC -eq 0 ] && [ "$(forge_branch $EA)" = "$LEFT" ]; then
	nok supersede-delete-422 "published, $EA's branch left at $LEFT: $(printf '%s' "$OUT" | grep -i 'superseded' | head -2)"
else
	ok supersede-delete-422
fi

# 8c (rev-20). A person's pull request into the earlier member's branch
# (a reviewer's fix-up proposed against it): deleting that branch closes
# the person's pull request, which is not ours; it must be left open (or
# the publication refused saying why).
pair
git -C "$T/work" push -q "$BARE" "factory/$EA:refs/heads/human-fixup"
ctl "{\"pull\":{\"title\":\"a reviewer's fix-up\",\"head\":\"human-fixup\",
    \"base\":\"factory/$EA\"}}"
publish $EB
hs=$(state | jq -r '[.pulls[] | select(.head.ref == "human-fixup")] |
    map(.state) | join(",")')
if [ "$hs" != open ]; then
	nok supersede-base-of-human "exit $RC; the person's pull request into factory/$EA is $hs"
else
	ok supersede-base-of-human
fi

# 8c'. The same: the branch kept, the publication goes on, the earlier
# member's own pull request closed and the log naming what keeps it.
if [ $RC -ne 0 ] || [ "$(forge_branch $EA)" != "$LEFT" ] ||
    [ "$(pull_state $EA)" != closed ] || [ "$(pull_state $EB)" != open ]
then
	nok supersede-base-keeps-branch "exit $RC: $OUT; $EA $(pull_state $EA)"
elif ! grep -q "branch factory/$EA of $EA kept: the base of open pull request #" \
    "$T/state/logs/$EB.log"; then
	nok supersede-base-keeps-branch "the log does not say what keeps it"
else
	ok supersede-base-keeps-branch
fi

# 8d. The list of pull requests into the earlier branch: garbage, a
# full page, an entry that is not a pull request.  Refused, the branch
# left, nothing of the new member made.  An entry of another base (the
# filter ignored) is passed over: the branch goes.
while IFS='|' read -r name body why; do
	pair
	faults "[$(F api GET "$RP/pulls" garbage \
	    ",\"query\":\"base=\",\"body\":$(printf '%s' "$body" | jq -Rs .)")]"
	publish $EB
	faults '[]'
	if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -Eq \
	    "$why.*pull requests into factory/$EA not checked"; then
		nok "supersede-base-list-$name" "exit $RC: $OUT"
	elif [ "$(forge_branch $EA)" != "$LEFT" ] || [ "$(npulls $EB)" != 0 ]
	then
		nok "supersede-base-list-$name" "$EA's branch went, or $EB has a pull request"
	else
		ok "supersede-base-list-$name"
	fi
done <<GARBAGE
object|{"message":"not a list"}|not a list
not-json|[{"number":1,|bad JSON
entry|[{"number":1,"state":"open"}]|entry 0 is not a pull request
full-page|$(jq -nc '[range(100) | {number: (. + 1), state: "open", base: {ref: "x"}}]')|100 pull requests or more
GARBAGE
pair
faults "[$(F api GET "$RP/pulls" garbage \
    ',"query":"base=","body":"[{\"number\":9,\"state\":\"open\",\"base\":{\"ref\":\"main\"}}]"')]"
publish $EB
faults '[]'
if [ $RC -ne 0 ] || forge_branch $EA >/dev/null; then
	nok supersede-base-list-other-base "exit $RC, $EA's branch $(forge_branch $EA): $OUT"
else
	ok supersede-base-list-other-base
fi

# 8e (F6). Someone pushes to the earlier branch while the publisher
# closes its pull request (after the branch was checked): the branch
# is looked up again right before the DELETE, and not deleted.
pair
MAIN=$(git -C "$T/work" rev-parse main)
faults "[$(F api PATCH "$RP/pulls/$LEFTPR" move-ref \
    ",\"ref\":\"factory/$EA\",\"sha\":\"$MAIN\"")]"
publish $EB
faults '[]'
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q \
    "branch factory/$EA on the forge holds $MAIN, not $LEFT: not deleted"; then
	nok supersede-branch-moved-late "exit $RC: $OUT"
elif [ "$(forge_branch $EA)" != "$MAIN" ] || [ "$(npulls $EB)" != 0 ]; then
	nok supersede-branch-moved-late "factory/$EA is $(forge_branch $EA), or $EB has a pull request"
else
	ok supersede-branch-moved-late
fi

# 8f (F7). The earlier member selected again after a person
# force-pushed its branch: GitHub refuses to reopen its pull request
# (422); a new one is opened, as a first publication would.
pair
EAPR=$LEFTPR; EACOMMIT=$LEFT
publish $EB
ctl "{\"set_pull\":{\"head\":\"factory/$EA\",\"recreated\":true}}"
EBCOMMIT=$COMMIT
COMMIT=$EACOMMIT
supersede_msg $EA $EB "$EBCOMMIT"
publish $EA .again
NEWPR=$(jget "$OUT" .number)
if [ $RC -ne 0 ] || [ -z "$NEWPR" ] || [ "$NEWPR" = "$EAPR" ] ||
    [ "$NEWPR" = null ]; then
	nok supersede-reopen-refused "exit $RC: $OUT"
elif [ "$(pull_state $EA)" != "closed,open" ] ||
    [ "$(pull_state $EB)" != closed ] ||
    [ "$(forge_branch $EA)" != "$EACOMMIT" ]; then
	nok supersede-reopen-refused "pulls $EA $(pull_state $EA), $EB $(pull_state $EB)"
else
	ok supersede-reopen-refused
fi

# 9. The parent's message judged by the daemon's decoder: a member in
# its own list, a list without a cohort, a commit not of its kind, a
# name twice.  Each refused (exit 3) before any request.
SPN=$((SPN + 1)); EB=a-20261203-0$SPN
mkbundle $EB
NREQ=$(state | jq '.requests | length')
for bad in "itself:,\"cohort\":\"$KOH\",\"supersede\":[{\"id\":\"$EB\",\"commit\":\"$COMMIT\"}]" \
    "without a cohort:,\"supersede\":[{\"id\":\"a-1\",\"commit\":\"$COMMIT\"}]" \
    "field commit:,\"cohort\":\"$KOH\",\"supersede\":[{\"id\":\"a-1\",\"commit\":\"main\"}]" \
    "twice:,\"cohort\":\"$KOH\",\"supersede\":[{\"id\":\"a-1\",\"commit\":\"$COMMIT\"},{\"id\":\"a-1\",\"commit\":\"$COMMIT\"}]" \
    "field id:,\"cohort\":\"$KOH\",\"supersede\":[{\"id\":\"../x\",\"commit\":\"$COMMIT\"}]"
do
	message $EB "" "${bad#*:}"
	publish $EB ".bad"
	if [ $RC -ne 3 ] || ! printf '%s' "$OUT" | grep -q "${bad%%:*}"; then
		nok "supersede-malformed ${bad%%:*}" "exit $RC: $OUT"
	else
		ok "supersede-malformed ${bad%%:*}"
	fi
done
if [ "$(state | jq '.requests | length')" != $((NREQ + 1)) ]; then
	nok supersede-malformed "the publisher talked to the forge"
fi
