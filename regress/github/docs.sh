# regress/github: what GitHub's documentation says a client meets
# (issue 24), sourced by run.sh (its helpers, $T, $PROG).  Each case
# sets fakegh.py's behaviour (its comments cite the pages), runs one
# publication through prog_ghpub, and checks that it either published
# (one branch at the commit, the pull requests wanted) or failed with
# GitHub's own words, within a time bound, and that every token minted
# was revoked.

RESET='{"modes":{},"api_prefix":"","per_page_max":100,"link":null,
 "renamed":null,"redirect_host":null,"rules":[],"withheld":[]}'
dcounts() { state | jq -r '.counts | "\(.minted) \(.revoked)"'; }
DF() {	# server method prefix do [more JSON members]: one fault
	printf '{"server":"%s","method":"%s","prefix":"%s","do":"%s","count":1%s}' \
	    "$1" "$2" "$3" "$4" "${5:-}"
}
DRP=/repos/$OWNER/$REPO

# doc NAME CONTROL EXPECT [MAXS [MSG]]: CONTROL is fakegh's /_control
# JSON for this publication (undone after it); EXPECT "ok" or an
# extended regex the error must match; MAXS bounds its seconds; MSG
# adds members to the message.  DOC_PRE runs after the bundle is made
# (DID, COMMIT set), DOC_CHECK after the publication: either prints
# what is wrong.  DOC_PULLS: pull requests of the head wanted (1 for
# "ok", 0 otherwise).
DOCN=300
doc() {
	dc_name=$1 dc_ctl=$2 dc_expect=$3 dc_max=${4:-30} dc_msg=${5:-}
	DOCN=$((DOCN + 1))
	DID=a-20261205-0$DOCN
	mkbundle $DID && message $DID "" "$dc_msg"
	dc_bad=
	if [ -n "${DOC_PRE:-}" ]; then dc_bad=$(eval "$DOC_PRE"); fi
	read -r m0 r0 <<-EOC
	$(dcounts)
	EOC
	[ -z "$dc_ctl" ] || ctl "$dc_ctl"
	dc_start=$(date +%s)
	timeout -s KILL 150 "$PROG" "$T/keys/verifier.pem" "$T/$DID.json" \
	    "$T/$DID.bundle" > "$T/state/out/$DID" \
	    2>> "$T/state/logs/$DID.log"
	RC=$?
	dc_secs=$(($(date +%s) - dc_start))
	OUT=$(cat "$T/state/out/$DID")
	ctl "$RESET"
	read -r m1 r1 <<-EOC
	$(dcounts)
	EOC
	[ "$dc_expect" = ok ] && dc_want=${DOC_PULLS:-1} ||
	    dc_want=${DOC_PULLS:-0}
	if [ -z "$dc_bad" ] && [ -n "${DOC_CHECK:-}" ]; then
		dc_bad=$(eval "$DOC_CHECK")
	fi
	if [ -n "$dc_bad" ]; then
		nok "$dc_name" "$dc_bad (exit $RC: $OUT)"
	elif [ $RC -gt 1 ]; then
		nok "$dc_name" "exit $RC (killed?) after $dc_secs s: $OUT"
	elif [ "$dc_expect" = ok ] && { [ $RC -ne 0 ] ||
	    [ "$(forge_branch $DID)" != "$COMMIT" ]; }; then
		nok "$dc_name" "exit $RC, branch $(forge_branch $DID): $OUT"
	elif [ "$dc_expect" != ok ] && { [ $RC -ne 1 ] ||
	    ! printf '%s' "$OUT" | grep -Eq "$dc_expect"; }; then
		nok "$dc_name" "exit $RC, wanted an error like /$dc_expect/: $OUT"
	elif [ "$(npulls $DID)" != "$dc_want" ]; then
		nok "$dc_name" "$(npulls $DID) pull requests, wanted $dc_want: $OUT"
	elif [ $((m1 - m0)) -lt 1 ] || [ $((m1 - m0)) != $((r1 - r0)) ]; then
		nok "$dc_name" "tokens: $((m1 - m0)) minted, $((r1 - r0)) revoked"
	elif [ $dc_secs -gt "$dc_max" ]; then
		nok "$dc_name" "took $dc_secs s, more than $dc_max"
	else
		ok "$dc_name"
	fi
	DOC_PRE= DOC_CHECK= DOC_PULLS=
}
# logsays ERE: the publication's log says it.
logsays() {
	grep -Eq "$1" "$T/state/logs/$DID.log" || echo "the log does not say /$1/"
}

# Rate limits ("Rate limits for the REST API").  The primary limit
# spent: no request before x-ratelimit-reset, and the log says so.
DOC_CHECK='logsays "waits [0-9]+ s .*x-ratelimit-reset"'
doc doc-primary-limit-waits \
    "{\"modes\":{\"faults\":[$(DF api GET $DRP primary-limit ',"reset_in":2')]}}" ok
# ... a reset beyond what a publication may wait: a clear failure.
doc doc-primary-limit-bounded \
    "{\"modes\":{\"faults\":[$(DF api GET $DRP primary-limit \
    ',"status":429,"reset_in":3600')]}}" \
    "429 API rate limit exceeded.*x-ratelimit-reset.*more than the 60 s" 10
# A secondary limit with retry-after: waited out, said why.
DOC_CHECK='logsays "waits 1 s .*retry-after"'
doc doc-secondary-limit-retry-after \
    "{\"modes\":{\"faults\":[$(DF api POST $DRP/pulls secondary-limit \
    ',"status":429,"retry_after":1')]}}" ok
# Without retry-after (nor remaining 0): "wait for at least one
# minute"; here more than the publication may wait.
doc doc-secondary-limit-a-minute \
    "{\"modes\":{\"faults\":[$(DF api POST $DRP/pulls secondary-limit)]}}" \
    "403 You have exceeded a secondary rate limit.*60 s.*more than the 5 s" \
    10 ',"_wait_max":5'

# Pagination ("Using pagination in the REST API"): one pull request a
# page; the open one of our head is on the second page, a newer closed
# one on the first.  The open one is ours, reused.
DOC_PRE='git -C "$T/work" push -q "$BARE" "factory/$DID" &&
    ctl "{\"pull\":{\"title\":\"open\",\"head\":\"factory/$DID\",\"base\":\"main\"}}" &&
    ctl "{\"pull\":{\"title\":\"closed\",\"head\":\"factory/$DID\",\"base\":\"main\",\"state\":\"closed\"}}"'
DOC_CHECK='[ "$(jget "$OUT" .number)" = "$(state | jq ".pulls[] |
    select(.head.ref == \"factory/$DID\" and .state == \"open\") | .number")" ] ||
    echo "not the open pull request"'
DOC_PULLS=2
doc doc-pagination-followed '{"per_page_max":1}' ok
# A link header that never ends: bounded, refused.
doc doc-pagination-bounded '{"link":"loop"}' "more than [0-9]+ pages"
# A next page on another host: never asked (the token would go there).
DOC_CHECK='[ "$(state | jq "[.requests[] | select(.host // \"\" | test(\"elsewhere\"))] | length")" = 0 ] ||
    echo "a request went to elsewhere.test"'
doc doc-pagination-foreign-host '{"link":"foreign"}' "another host"

# A renamed repository: its old name answers 301 ("Best practices for
# using the REST API", Follow redirects); followed on the same host,
# and the log says to update the configuration.
DOC_CHECK='logsays "moved.*factoryd.conf"'
doc doc-renamed-followed '{"renamed":"gadget"}' ok
# ... to another host: not followed, the token not sent there.
DOC_CHECK='[ "$(state | jq "[.requests[] | select(.host // \"\" | startswith(\"127.0.0.1\"))] | length")" = 0 ] ||
    echo "a request went to 127.0.0.1"'
doc doc-redirect-other-host '{"renamed":"gadget","redirect_host":"127.0.0.1"}' \
    "301 .*another host"

# "Create a pull request": the 422s, with GitHub's own words.  The base
# holds the commit already (someone merged it): no commits between.
DMAIN=$(git --git-dir "$BARE" rev-parse main)
DOC_PRE='git -C "$T/work" push -q "$BARE" "factory/$DID:refs/heads/main"'
DOC_CHECK='git --git-dir "$BARE" update-ref refs/heads/main "$DMAIN"'
doc doc-pr-no-commits '' \
    "422 Validation Failed: No commits between main and factory/a-"
# The head branch deleted between the push and the create.
doc doc-pr-head-missing \
    "{\"modes\":{\"faults\":[$(DF api POST $DRP/pulls move-ref \
    ',"ref":"factory/@ID@","sha":""' | sed "s/@ID@/a-20261205-0$((DOCN + 1))/")]}}" \
    "422 Validation Failed: PullRequest head invalid"

# A push refused by branch protection or a ruleset: git's words, and
# GitHub's lines the hook printed.
doc doc-push-protected-branch \
    '{"rules":[{"ref":"refs/heads/factory/","kind":"protected"}]}' \
    "protected branch hook declined.*GH006: Protected branch update failed for refs/heads/factory/a-[0-9-]+\\. error: Changes must be made through a pull request\\."
doc doc-push-ruleset \
    '{"rules":[{"ref":"refs/heads/factory/","kind":"ruleset"}]}' \
    "push declined due to repository rule violations.*GH013: Repository rule violations found for refs/heads/factory/a-.*creations being restricted"

# 502 and 504 ("Troubleshooting the REST API", Timeouts): before the
# work (tried again), and after it (the push, or the pull request,
# made; the answer lost: found in place).
doc doc-push-502 \
    "{\"modes\":{\"faults\":[$(DF git POST /$OWNER/$REPO.git/git-receive-pack status ',"status":502')]}}" ok
doc doc-push-504-after \
    "{\"modes\":{\"faults\":[$(DF git POST /$OWNER/$REPO.git/git-receive-pack status-after ',"status":504')]}}" ok
doc doc-api-504-after \
    "{\"modes\":{\"faults\":[$(DF api POST $DRP/pulls status-after ',"status":504')]}}" ok

# A token without a permission the endpoint needs ("Troubleshooting
# the REST API", Resource not accessible): GitHub's message, and what
# the endpoint asked for.
doc doc-not-accessible '{"withheld":["pull_requests"]}' \
    "403 Resource not accessible by integration.*pull_requests=write"

# GitHub Enterprise Server: the API under /api/v3, nothing at the root;
# then a renamed repository and one pull request a page there too.
DOC_PRE='sed -i "s|\"api\":\"$API\"|\"api\":\"$API/api/v3\"|" "$T/$DID.json"'
doc doc-ghes '{"api_prefix":"/api/v3"}' ok
DOC_PRE='sed -i "s|\"api\":\"$API\"|\"api\":\"$API/api/v3\"|" "$T/$DID.json"'
doc doc-ghes-renamed-paged \
    '{"api_prefix":"/api/v3","renamed":"gadget","per_page_max":1}' ok
