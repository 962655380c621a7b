# regress/github: the forge's bad days (defect 8 of issue 9), sourced by
# run.sh (its helpers, $T, $PROG).  Each case sets faults in fakegh.py,
# runs one publication through prog_ghpub, and checks that it either
# succeeded on retry with exactly one branch and one pull request, or
# failed with a clear reason; in every case that the process was not
# killed (a signal, or the watchdog), that every fault was hit, and
# that every token minted was revoked.

faults() { ctl "{\"modes\":{\"faults\":$1}}"; }
counts() { state | jq -r '.counts | "\(.minted) \(.delivered) \(.revoked)"'; }

# mkbigbundle ID: as mkbundle, with 8 MiB that do not compress, so that
# the push is still being written when a forge drops it.
mkbigbundle() {
	cd "$T/work" || return 1
	git checkout -q -b "factory/$1" main &&
	    head -c 8388608 /dev/urandom > "$1.bin" && git add "$1.bin" &&
	    git commit -q -m "big work of $1" || return 1
	COMMIT=$(git rev-parse HEAD)
	git bundle create -q "$T/$1.bundle" "factory/$1" ^main 2>/dev/null ||
	    return 1
	git checkout -q main
}

# badday NAME FAULTS EXPECT [MAXS [MSG [BIG]]]: EXPECT is "ok" or an
# extended regex the error must match; MAXS bounds the run's seconds;
# MSG adds members to the message (e.g. a short "_timeout"); BIG
# pushes 8 MiB.
BDN=100
badday() {
	bd_name=$1 bd_faults=$2 bd_expect=$3 bd_max=${4:-60} bd_msg=${5:-}
	BDN=$((BDN + 1))
	bd_id=a-20261201-0$BDN
	if [ -n "${6:-}" ]; then mkbigbundle $bd_id; else mkbundle $bd_id; fi
	message $bd_id "" "$bd_msg"
	read -r m0 d0 r0 <<-EOC
	$(counts)
	EOC
	faults "$bd_faults"
	bd_start=$(date +%s)
	timeout -s KILL 120 "$PROG" "$T/keys/verifier.pem" "$T/$bd_id.json" \
	    "$T/$bd_id.bundle" > "$T/state/out/$bd_id" \
	    2>> "$T/state/logs/$bd_id.log"
	RC=$?
	bd_end=$(date +%s)
	OUT=$(cat "$T/state/out/$bd_id")
	bd_unhit=$(state | jq '[.modes.faults[] | select((.hits // 0) == 0)] |
	    length')
	faults '[]'
	read -r m1 d1 r1 <<-EOC
	$(counts)
	EOC
	bd_secs=$((bd_end - bd_start))
	if [ $RC -gt 1 ]; then
		nok "$bd_name" "exit $RC (killed?) after $bd_secs s: $OUT: $(tail -3 \
		    "$T/state/logs/$bd_id.log")"
	elif [ "$bd_unhit" != 0 ]; then
		nok "$bd_name" "$bd_unhit faults never hit"
	elif [ "$bd_expect" = ok ] && [ $RC -ne 0 ]; then
		nok "$bd_name" "exit $RC: $OUT"
	elif [ "$bd_expect" = ok ] && { [ "$(forge_branch $bd_id)" != "$COMMIT" ] ||
	    [ "$(npulls $bd_id)" != 1 ]; }; then
		nok "$bd_name" "branch $(forge_branch $bd_id), $(npulls $bd_id) pulls"
	elif [ "$bd_expect" != ok ] && { [ $RC -ne 1 ] ||
	    ! printf '%s' "$OUT" | grep -Eq "$bd_expect"; }; then
		nok "$bd_name" "exit $RC, wanted an error like /$bd_expect/: $OUT"
	elif [ "$bd_expect" != ok ] && [ "$(npulls $bd_id)" != 0 ]; then
		nok "$bd_name" "failed, yet $(npulls $bd_id) pull requests"
	elif [ $((d1 - d0)) != $((r1 - r0)) ] ||
	    [ $((m1 - m0)) != $((r1 - r0 + ${BD_UNDELIVERED:-0})) ]; then
		nok "$bd_name" "tokens: $((m1 - m0)) minted, $((d1 - d0)) delivered, $((r1 - r0)) revoked"
	elif [ $bd_secs -gt "$bd_max" ]; then
		nok "$bd_name" "took $bd_secs s, more than $bd_max"
	else
		ok "$bd_name"
	fi
}

TK=/app/installations/$INST/access_tokens
RP=/repos/$OWNER/$REPO
RCV=/$OWNER/$REPO.git/git-receive-pack
REFS=/$OWNER/$REPO.git/info/refs
F() {	# server method prefix do [more JSON members]
	printf '{"server":"%s","method":"%s","prefix":"%s","do":"%s","count":1%s}' \
	    "$1" "$2" "$3" "$4" "${5:-}"
}
SHORT=',"_timeout":2'

# The API.
badday api-drop-request "[$(F api POST $TK drop-request)]" ok
badday api-drop-response "[$(F api GET $RP drop-response)]" ok
badday api-drop-response-pull-create \
    "[$(F api POST $RP/pulls drop-response)]" ok
# The token was minted, and its answer never arrived: nobody can revoke
# it (it expires within the hour).  Every token delivered is revoked.
BD_UNDELIVERED=1
badday api-drop-response-token "[$(F api POST $TK drop-response)]" ok
BD_UNDELIVERED=0
badday api-500-twice "[$(F api GET $RP/pulls status ',"status":500,"count":2')]" ok
badday api-502 "[$(F api POST $RP/pulls status ',"status":502')]" ok
badday api-503-retry-after \
    "[$(F api GET $RP status ',"status":503,"retry_after":1')]" ok
badday api-503-always "[$(F api GET $RP status ',"status":503,"count":100')]" \
    "GET $RP: 503 .*tries" 40
badday api-stall "[$(F api GET $RP stall)]" ok 30 "$SHORT"
badday api-stall-accept '[{"server":"api","do":"stall-accept","count":1}]' \
    ok 30 "$SHORT"
badday api-stall-body "[$(F api GET $RP/pulls stall-body)]" ok 30 "$SHORT"
badday api-stall-always "[$(F api GET $RP stall ',"count":100')]" \
    "timed out|budget" 14 ',"_timeout":1,"_budget":8'
badday api-chunked "[$(F api "" / chunked ',"count":100' | sed 's/"method":"",//')]" ok
badday api-badchunk "[$(F api GET $RP badchunk)]" ok
badday api-badchunk-overflow \
    "[$(F api GET $RP badchunk ',"count":100,"bad":"fffffffffffffffffffff"')]" \
    "chunk" 40
badday api-badchunk-negative \
    "[$(F api GET $RP badchunk ',"count":100,"bad":"-5"')]" "chunk" 40
# A body delimited by the connection's end: whole only after a TLS
# close_notify; a bare close (a FIN anyone on the path can send) is
# refused, cut or not, and the request tried again.
badday api-close-notify "[$(F api GET $RP close-notify)]" ok
badday api-close-cut "[$(F api GET $RP close-cut)]" ok
badday api-close-bare "[$(F api GET $RP/pulls close-bare)]" ok
badday api-close-cut-always "[$(F api GET $RP close-cut ',"count":100')]" \
    "close_notify" 40
badday api-close-bare-always \
    "[$(F api GET $RP close-bare ',"count":100')]" "close_notify" 40
badday api-revoke-dropped "[$(F api DELETE /installation/token drop-request)]" ok
badday api-revoke-stalled "[$(F api DELETE /installation/token stall)]" ok 30 \
    "$SHORT"

# git smart HTTP.  The first: a push cut off while its pack is being
# written (the publisher used to die of SIGPIPE here).
badday git-drop-mid-push "[$(F git POST $RCV drop-body)]" ok 60 "" big
badday git-drop-request "[$(F git GET $REFS drop-request)]" ok
badday git-drop-response "[$(F git POST $RCV drop-response)]" ok
badday git-503 "[$(F git GET $REFS status ',"status":503')]" ok
badday git-500-always "[$(F git GET $REFS status ',"status":500,"count":100')]" \
    "push.*500" 40
badday git-stall "[$(F git POST $RCV stall)]" ok 30 "$SHORT"
badday git-stall-accept '[{"server":"git","do":"stall-accept","count":1}]' \
    ok 30 "$SHORT"
badday git-stall-always "[$(F git GET $REFS stall ',"count":100')]" \
    "timed out|budget" 14 ',"_timeout":1,"_budget":8'
badday git-chunked "[$(F git "" / chunked ',"count":100' | sed 's/"method":"",//')]" ok
badday git-badchunk "[$(F git GET $REFS badchunk)]" ok
