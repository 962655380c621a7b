# The live cases of regress/model (sourced by run.sh, bash): requests
# through factory-gateway to the loopback double, regress/gateway's
# modelsrv.py, over TLS with the suite's own CA.

# The double: a certificate for localhost, its own CA.
mkdir "$T/gwca"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
    -keyout "$T/gwca/key.pem" -out "$T/gwca/cert.pem" >/dev/null 2>&1 ||
    fail "model: openssl req"
chmod 755 "$T/gwca"
chmod 644 "$T/gwca/cert.pem"
: >"$T/record.jsonl"
bg python3 "$MODELSRV" -c "$T/gwca/cert.pem" -k "$T/gwca/key.pem" \
    -r "$T/record.jsonl" >"$T/modelsrv.out" 2>&1
i=0
while ! grep -q '^ready' "$T/modelsrv.out" && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
DPORT=$(awk '/^ready/ {print $2}' "$T/modelsrv.out")
[ -n "$DPORT" ] || fail "model: the double did not start"

stop_factoryd
model_conf "$T/factoryd.conf" "$DPORT" "$T/gwca/cert.pem"
start_factoryd "$T/factoryd.conf" "$T/log"

# The agents' HTTP client, bash alone: req NAME METHOD PATH HEADER BODY
# [PORT] prints "NAME: status N" and the answer's last lines.
cat >"$T/bin/http.sh" <<'EOF'
port_of() { local p=${1#http://127.0.0.1:}; echo "${p%%/*}"; }
OPORT=$(port_of "${OPENAI_BASE_URL:-}")
UPORT=$(port_of "${FACTORY_UPSTREAM_NPM_URL:-}")
req() {
	local n=$1 m=$2 p=$3 h=$4 b=$5 port=${6:-$OPORT} st l
	if ! exec 3<>"/dev/tcp/127.0.0.1/$port"; then
		echo "$n: refused"
		return
	fi
	printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
	    "$m" "$p" "$h" "${#b}" "$b" >&3
	if read -r -t 8 _ st _ <&3; then
		echo "$n: status $st"
		while read -r -t 15 l <&3; do
			l=${l%$'\r'}
			[ -n "$l" ] && echo "$n: body $l"
		done
		echo "$n: end"
	else
		echo "$n: no answer"
	fi
	exec 3>&-
}
chat() {	# NAME MODEL EXTRA-JSON [TOKEN]
	req "$1" POST /v1/chat/completions \
	    "Authorization: Bearer ${4:-$OPENAI_API_KEY}" \
	    '{"model":"'"$2"'","messages":[{"role":"user","content":"hi"}]'"$3"'}'
}
EOF
chmod 644 "$T/bin/http.sh"
HTTP=". $T/bin/http.sh"
receipts_of() { ctl receipts "$1" | grep '"kind":"model"'; }
outcomes() {	# ID: the model receipts' outcomes, in order
	receipts_of "$1" | sed -n 's/.*"outcome":"\([a-z-]*\)".*/\1/p' |
	    tr '\n' ' '
}

# --- one request goes through; what is refused is refused -------------

AGENT="$HTTP"'
echo "token: $OPENAI_API_KEY"
chat ok m-small ",\"usage_in\":10,\"usage_out\":20"
chat model m-large ""
chat notoken m-small "" "fgw-$(printf "%064d" 0)"
req direct POST /v1/chat/completions "Authorization: Bearer x" "{}" '"$DPORT"'
req up-get GET /pkg/left-pad "Authorization: Bearer $FACTORY_UPSTREAM_NPM_TOKEN" "" "$UPORT"
req up-post POST /pkg/left-pad "Authorization: Bearer $FACTORY_UPSTREAM_NPM_TOKEN" "{}" "$UPORT"
echo change >src/model-live
echo done'
manifest live "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small], budget: {tokens: 1000}}
upstreams: [npm]
tenant: team-live"
id=$(submit live) && wait_done "$id" 90 || notok "live: attempt did not end"
L=$(logf "$id")
LIVE=$id
TOKEN1=$(sed -n 's/^token: //p' "$L")
check "a request through the gateway: 200" grep -qx "ok: status 200" "$L"
check "the answer reached the agent" grep -q '^ok: body .*"hello"' "$L"
saw() {	# PATH VALUE: a request to PATH had Authorization: VALUE
	jq -se --arg p "$1" --arg k "$2" '[.[] | select(.path == $p) |
	    .headers[] | select((.[0] | ascii_downcase) == "authorization" and
	    .[1] == $k)] | length > 0' "$T/record.jsonl" >/dev/null
}
check "the double saw the real key" saw /v1/chat/completions "Bearer $REALKEY"
check "the double never saw a token" sh -c "! grep -q 'fgw-' '$T/record.jsonl'"
# The statuses as factory-gateway reported them (the agent's side of
# each refusal is regress/gateway's): in the receipts, below.
check "a model outside the grant: not answered 200" \
    sh -c "! grep -qx 'model: status 200' '$L'"
check "a token not of this endpoint: not answered 200" \
    sh -c "! grep -qx 'notoken: status 200' '$L'"
check "the provider directly, without egress: refused" \
    grep -qx "direct: refused" "$L"
check "the upstream, GET: 200" grep -qx "up-get: status 200" "$L"
check "the double saw the upstream secret in the configured header" \
    saw /pkg/left-pad "Bearer $UPSECRET"
check "the upstream, POST (outside its methods): not answered 200" \
    sh -c "! grep -qx 'up-post: status 200' '$L'"
check "the POST never reached the upstream" \
    sh -c "! jq -e 'select(.method == \"POST\" and .path == \"/pkg/left-pad\")' \
    '$T/record.jsonl' >/dev/null"
o=$(outcomes "$id")
check "model receipts: ok, refused-model, refused-token, ok, refused-method ($o)" \
    [ "$o" = "ok refused-model refused-token ok refused-method " ]
st=$(receipts_of "$id" | sed -n 's/.*"status":\([0-9]*\).*/\1/p' | tr '\n' ' ')
check "their statuses: 200 403 401 200 405 ($st)" [ "$st" = "200 403 401 200 405 " ]
first=$(receipts_of "$id" | head -n 1)
check "the ok request's receipt: 10 in, 20 out, 50 micro-dollars, tenant" \
    sh -c 'printf "%s" "$1" | grep "\"tokens_in\":10" | grep "\"tokens_out\":20" |
    grep "\"cost_uusd\":50" | grep -q "\"tenant\":\"team-live\""' sh "$first"
check "the ok request's receipt: its usage the provider's, not estimated" \
    sh -c 'printf "%s" "$1" | grep -q "\"estimated\":false"' sh "$first"
j=$(show "$id")
check "show -j: tokens and cost of the attempt, none estimated" \
    [ "$(echo "$j" | jq -c '.model | [.requests, .refused, .estimated,
    .tokens_in, .tokens_out, .cost_uusd]')" = "[5,3,0,10,20,50]" ]
check "show -j: tenant" [ "$(echo "$j" | jq -r .tenant)" = team-live ]
check "show: the model line" grep -qx \
    'model: 5 requests (3 refused, 0 estimated), tokens 10 in, 20 out, cost 0.000050 USD' \
    <(ctl show "$id")
ctl receipts "$id" >"$T/r-live.txt"
check "the exited receipt has the totals" sh -c "grep '\"kind\":\"exited\"' \
    '$T/r-live.txt' | grep -q '\"tokens_in\":10,\"tokens_out\":20'"
check "the receipts verify" sh -c "'$O/factoryctl' verify '$T/r-live.txt'"
check "no receipt holds a prompt" sh -c "! grep -q '\"hi\"' '$T/r-live.txt'"
leak "live: the real key is nowhere under state, log, receipts" "$REALKEY"
leak "live: the upstream secret nowhere either" "$UPSECRET"
[ -n "$TOKEN1" ] && leak "live: the token in no journal, receipt or log line" \
    "$TOKEN1"

# --- with network.allow too: egress endpoints and the gateway's ---------

AGENT="$HTTP"'
chat both m-small ""
if exec 4<>/dev/tcp/127.0.0.1/'"$DPORT"'; then echo "egress: connected"
else echo "egress: refused"; fi
echo done'
manifest both "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small]}
network: {allow: [\"127.0.0.1:$DPORT\"]}"
id=$(submit both) && wait_done "$id" 60 || notok "both: attempt did not end"
L=$(logf "$id")
check "with egress as well, the gateway answers" grep -qx "both: status 200" "$L"
check "and the allowed destination is reached through egress" \
    grep -qx "egress: connected" "$L"

# --- requests evhttp refuses before the gateway's handler: recorded ----

AGENT="$HTTP"'
raw() {	# NAME BYTES: sent as they are; prints the status line
	local st
	exec 3<>"/dev/tcp/127.0.0.1/$OPORT" || { echo "$1: refused"; return; }
	printf "$2" >&3
	if read -r -t 8 _ st _ <&3; then echo "$1: status $st"
	else echo "$1: no answer"; fi
	exec 3>&-
}
raw chunk "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n"
raw line "NOT HTTP AT ALL\r\n\r\n"
chat ok m-small ""
echo done'
manifest unparsed "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small]}"
id=$(submit unparsed) && wait_done "$id" 60 || notok "unparsed: attempt did not end"
L=$(logf "$id")
check "bad chunking and a bad request line: refused by the gateway" \
    sh -c "grep -qE '^chunk: status (400|413)$' '$L' && grep -qx 'line: status 400' '$L'"
o=$(outcomes "$id")
check "model receipts: bad-request twice, then ok ($o)" \
    [ "$o" = "bad-request bad-request ok " ]
m=$(receipts_of "$id" | head -n 2 | grep '"model":"-"' |
    grep '"tokens_in":0' | grep -c '"tokens_out":0')
check "their model is -, their tokens 0 ($m of 2)" [ "$m" = 2 ]
j=$(show "$id")
check "show -j counts them: 3 requests, 2 refused" \
    [ "$(echo "$j" | jq -c '.model | [.requests, .refused]')" = "[3,2]" ]

# MODEL_STOP=live: only the cases above (while debugging the gateway).
[ "${MODEL_STOP:-}" = live ] && regress_done

# --- the budget runs out mid-stream ------------------------------------

AGENT="$HTTP"'
chat stream m-small ",\"stream\":true,\"deltas\":400,\"delay\":0.005,\"usage_in\":5,\"usage_out\":2000,\"stream_options\":{\"include_usage\":true}"
chat after m-small ""
echo cutdone
sleep 8
echo done'
manifest budget "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small], budget: {tokens: 100}}"
id=$(submit budget)
# While it runs: its spend in top is marked as partly estimated (the
# cut stream's usage never came), the count in status -j's overview.
if [ -n "$id" ] && wait_log "$id" '^cutdone$' 60; then
	ctl top -1 >"$T/top-budget.txt" 2>&1
	ov=$(ctl -j status | jq -c --arg i "$id" \
	    '.overview.running[] | select(.id == $i) | .estimated')
	check "running: status -j's overview counts its estimated request ($ov)" \
	    [ "$ov" = 1 ]
	check "running: top marks its spend estimated ($(grep "^$id" \
	    "$T/top-budget.txt"))" \
	    grep -qE "^$id .* ~[\$][0-9]" "$T/top-budget.txt"
else
	notok "budget: the agent did not get past its requests"
fi
wait_done "$id" 90 || notok "budget: attempt did not end"
L=$(logf "$id")
check "the stream started" grep -qx "stream: status 200" "$L"
check "the stream was cut: no [DONE]" sh -c "! grep -q 'DONE' '$L'"
check "the stream was cut before its 400 deltas" \
    [ "$(grep -c '^stream: body data: .*hello' "$L")" -lt 400 ]
check "the cut stream ended with an error event" \
    grep -qx "stream: body event: error" "$L"
check "after it: not answered 200" sh -c "! grep -qx 'after: status 200' '$L'"
o=$(outcomes "$id")
check "model receipts: cut-budget, refused-budget ($o)" \
    [ "$o" = "cut-budget refused-budget " ]
st=$(receipts_of "$id" | sed -n 's/.*"status":\([0-9]*\).*/\1/p' | tr '\n' ' ')
check "their statuses: 200, then 403 ($st)" [ "$st" = "200 403 " ]
receipts_of "$id" | grep refused-budget >"$T/refusal.json"
check "the refusal's receipt names its method, path and why ($(cut -c1-300 "$T/refusal.json"))" \
    eval "grep -q '\"method\":\"POST\"' '$T/refusal.json' &&
    grep -q '\"path\":\"/v1/chat/completions\"' '$T/refusal.json' &&
    grep -q '\"reason\":\"budget exhausted' '$T/refusal.json'"
spent=$(show "$id" | jq '.model.tokens_in + .model.tokens_out')
check "the attempt's spend is what was metered until the cut ($spent)" \
    [ "$spent" -gt 0 ]
# The cut stream's usage never came: its row is charged its reservation
# and the totals say how many rows are (before: they did not).
est=$(receipts_of "$id" | sed -n 's/.*"estimated":\(true\|false\).*/\1/p' |
    tr '\n' ' ')
check "the cut stream's receipt estimated, the refused one not ($est)" \
    [ "$est" = "true false " ]
check "show -j: the totals count the estimated request" \
    [ "$(show "$id" | jq .model.estimated)" = 1 ]
check "show: the model line counts it" grep -q \
    '^model: 2 requests (2 refused, 1 estimated), ' <(ctl show "$id")
ctl receipts "$id" >"$T/r-budget.txt"
check "the exited receipt's totals count it" sh -c "grep '\"kind\":\"exited\"' \
    '$T/r-budget.txt' | grep -q '\"estimated\":1,\"refused\":2,'"
ctl metrics >"$T/metrics-budget" 2>&1
check "metrics: factory_model_estimated_total counts it" \
    grep -q '^factory_model_estimated_total [1-9]' "$T/metrics-budget"

# --- tokens of other attempts: one ended, one running -------------------

AGENT='echo "token: $OPENAI_API_KEY"; sleep 15; echo done'
manifest holder "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small]}"
hid=$(submit holder)
wait_log "$hid" '^token: fgw-' 30 || notok "holder: no token"
HTOKEN=$(sed -n 's/^token: //p' "$(logf "$hid")")
AGENT="$HTTP"'
chat replay m-small "" "'"$TOKEN1"'"
chat running m-small "" "'"$HTOKEN"'"
chat own m-small ""
echo done'
manifest other "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small]}"
id=$(submit other) && wait_done "$id" 90 || notok "other: attempt did not end"
L=$(logf "$id")
check "a token replayed after its attempt ended: not answered 200" \
    sh -c "! grep -qx 'replay: status 200' '$L'"
check "a running attempt's token on another's endpoint: not answered 200" \
    sh -c "! grep -qx 'running: status 200' '$L'"
check "its own token works" grep -qx "own: status 200" "$L"
o=$(outcomes "$id")
check "model receipts: refused-token twice, then ok ($o)" \
    [ "$o" = "refused-token refused-token ok " ]
st=$(receipts_of "$id" | sed -n 's/.*"status":\([0-9]*\).*/\1/p' | tr '\n' ' ')
check "their statuses: 401 401 200 ($st)" [ "$st" = "401 401 200 " ]
check "the replay is logged" grep -q "refused-token" "$T/log"
wait_done "$hid" 60 || notok "holder: attempt did not end"

# --- a flood of refused requests: counted, not a receipt each ---------

# 3003 wrong-token requests pipelined on three connections, then 70
# billable ones.  Each used to be a signed, fdatasync'd receipt (30 s
# of them made 15,000 and held factoryctl status for seconds): now the
# first few of each kind are receipts of their own, the rest counts,
# and the totals are exact all the same.
AGENT="$HTTP"'
burst() {
	local i
	exec 5<>"/dev/tcp/127.0.0.1/$OPORT" || { echo "burst: refused"; return; }
	for i in $(seq 1 "$1"); do
		printf "GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fgw-%064d\r\n\r\n" 0
	done >&5
	printf "GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fgw-%064d\r\nConnection: close\r\n\r\n" 0 >&5
	echo "burst: $(grep -o "HTTP/1.1 401" <&5 | wc -l)"
	exec 5>&-
}
echo start
burst 1000 & burst 1000 & burst 1000 & wait
for i in $(seq 1 70); do
	chat ok$i m-small ",\"usage_in\":10,\"usage_out\":20"
done | grep -c "status 200" | sed "s/^/ok: /"
echo done'
manifest flood "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small]}"
id=$(submit flood)
if [ -n "$id" ] && wait_log "$id" '^start$' 60; then
	for i in $(seq 1 10); do
		t0=$(date +%s%N)
		ctl status >/dev/null 2>&1
		echo $(( ($(date +%s%N) - t0) / 1000000 ))
	done >"$T/flood-ms"
else
	notok "flood: the agent did not start"
fi
wait_done "$id" 180 || notok "flood: attempt did not end"
L=$(logf "$id")
n401=$(sed -n 's/^burst: //p' "$L" | awk '{s += $1} END {print s + 0}')
check "flood: 3003 wrong-token requests answered 401 ($n401)" [ "$n401" = 3003 ]
check "flood: 70 requests served" grep -qx "ok: 70" "$L"
ctl receipts "$id" >"$T/r-flood.txt"
nrec=$(grep -c '"kind":"model"' "$T/r-flood.txt")
sum=$(grep '"kind":"model"' "$T/r-flood.txt" | awk '{
	if (match($0, /"requests":[0-9]+/)) s += substr($0, RSTART + 11,
	    RLENGTH - 11); else s++ } END {print s + 0}')
check "flood: $nrec model receipts for 3073 requests (at most 100)" \
    [ "$nrec" -le 100 ]
check "flood: the receipts count 3073 requests ($sum)" [ "$sum" = 3073 ]
j=$(show "$id")
check "flood: show -j totals exact ($(echo "$j" | jq -c .model))" \
    [ "$(echo "$j" | jq -c '.model | [.requests, .refused, .tokens_in,
    .tokens_out, .cost_uusd]')" = "[3073,3003,700,1400,3500]" ]
check "flood: the exited receipt has the same totals" sh -c \
    "grep '\"kind\":\"exited\"' '$T/r-flood.txt' |
    grep -q '\"refused\":3003,\"requests\":3073,\"tokens_in\":700,\"tokens_out\":1400'"
check "flood: the receipts verify" sh -c "'$O/factoryctl' verify '$T/r-flood.txt'"
if [ -s "$T/flood-ms" ]; then
	echo "# flood: factoryctl status while it ran: median" \
	    "$(sort -n "$T/flood-ms" | sed -n 5p) ms, max" \
	    "$(sort -n "$T/flood-ms" | tail -n 1) ms (10 runs)"
fi

# --- factory-gateway killed mid-stream: restarted, the token works -----

AGENT="$HTTP"'
chat s1 m-small ",\"stream\":true,\"deltas\":100,\"delay\":0.1"
sleep 4
chat s2 m-small ""
echo done'
manifest gwkill "$(jq -cn --arg s "$AGENT" '["/bin/bash", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-small]}"
id=$(submit gwkill)
if [ -n "$id" ] && wait_log "$id" '^s1: status 200$' 30; then
	GWPID=$(ctl -j status | jq -r '.processes[] |
	    select(.name == "gateway") | .pid')
	kill -KILL "$GWPID"
	wait_done "$id" 90 || notok "gwkill: attempt did not end"
	L=$(logf "$id")
	check "the stream ended with the gateway" grep -qx "s1: end" "$L"
	check "the stream did not finish" sh -c "! grep -q DONE '$L'"
	check "after the restart the same token works: 200" \
	    grep -qx "s2: status 200" "$L"
	check "factoryd logged the lost gateway" \
	    grep -q "gateway (pid $GWPID) killed by signal 9" "$T/log"
	check "the grant was handed to the new gateway" \
	    [ "$(grep -c "$id: grant openai on port" "$T/log")" -ge 2 ]
else
	notok "gwkill: the stream did not start"
fi
check "no attempt process left" [ -z "$(attempt_procs)" ]
