#!/bin/bash
# The model gateway through the real daemon (factoryd.conf providers:
# and upstreams:, a manifest's model:, upstreams:, tenant:).  At load:
# a key file anyone but the gateway's user may read is refused.  At
# submission: a provider or upstream the repository does not allow, a
# budget above its ceilings.  In the sandbox: the agent has the base
# URLs and an opaque token, never the key, and cannot read the key's
# file; the validation run has neither.  With the loopback model
# double (regress/gateway/modelsrv.py): a request goes through and the
# double saw the real key; the key is nowhere under the state dir, in
# the log, the journal or the receipts, nor is the token; each request
# is a model receipt and the totals are in exited and show.  Needs
# root.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../hostile/hlib.sh"
trap model_cleanup EXIT
H_UIDLO=64760		# apart from the other suites' uids
H_UIDHI=64779
GWUID=61107		# users.gateway of hlib.sh's config
TOP=$(cd "$(dirname "$0")/../.." && pwd)
MODELSRV=$TOP/regress/gateway/modelsrv.py

# The daemon first, then what an attempt cut short left mounted.
model_cleanup() {
	local m
	[ -n "$FACTORYD_PID" ] && stop_factoryd
	case ${T:-} in
	/var/tmp/factory-hostile.*)
		awk -v d="$T/" 'index($2, d) == 1 {print $2}' /proc/mounts |
		    sort -r | while read -r m; do umount -l "$m"; done ;;
	esac
	hostile_cleanup
}

if [ "$(id -u)" != 0 ]; then
	echo "not ok - model: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "model: needs jq"
command -v python3 >/dev/null || fail "model: needs python3"

P=$O/regress/hostile
h_setup

# The real keys: random, so that a grep finds only a leak.
mkdir "$T/gwkeys"
chmod 755 "$T/gwkeys"
REALKEY="sk-real-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
UPSECRET="up-real-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$REALKEY" >"$T/gwkeys/openai.key"
printf '%s\n' "$UPSECRET" >"$T/gwkeys/npm.token"
printf '%s\n' "$REALKEY-anthropic" >"$T/gwkeys/anthropic.key"
chown "$GWUID:$GWUID" "$T/gwkeys"/*
chmod 400 "$T/gwkeys"/*

# The double, when h-gw's is there; its port in the URLs, else port 1.
DPORT=1
CA=/etc/ssl/certs/ca-certificates.crt
if [ -f "$MODELSRV" ]; then
	HAVE_DOUBLE=1
else
	HAVE_DOUBLE=0
fi

# model.conf: the hostile config plus providers, upstreams, a grant.
model_conf() {	# file port ca
	sed -e "/^    path: .*\/repo.git$/a\\
    model: {providers: [openai, anthropic], max-tokens: 5000, max-usd: 2}\\
    upstreams: [npm]" "$T/factoryd.conf.orig" >"$1"
	cat >>"$1" <<CONF
providers:
  openai:
    kind: openai
    url: https://localhost:$2
    key: $T/gwkeys/openai.key
    ca: $3
    prices:
      m-small: {input: 1, output: 2}
      m-large: {input: 10, output: 30}
  anthropic:
    kind: anthropic
    url: https://localhost:$2
    key: $T/gwkeys/anthropic.key
    ca: $3
  elsewhere:
    kind: openai
    url: https://localhost:$2
    key: $T/gwkeys/openai.key
    ca: $3
upstreams:
  npm:
    url: https://localhost:$2
    header: "Authorization: Bearer"
    secret: $T/gwkeys/npm.token
    ca: $3
    methods: [GET, HEAD]
  pypi:
    url: https://localhost:$2
    header: X-Api-Key
    secret: $T/gwkeys/npm.token
    ca: $3
CONF
	chmod 644 "$1"
}
cp "$T/factoryd.conf" "$T/factoryd.conf.orig"
model_conf "$T/factoryd.conf" "$DPORT" "$CA"

# --- key files at load: the gateway's alone ---------------------------

conf_n() {	# name want-regex: factoryd -n on a copy with a key's mode
	local out
	out=$("$O/factoryd" -n -f "$T/k.conf" 2>&1)
	if echo "$out" | grep -qE -- "$2"; then
		ok "$1 ($(echo "$out" | head -n 1 | sed "s|^$T/||"))"
	else
		notok "$1: got '$out'"
	fi
}
model_conf "$T/k.conf" "$DPORT" "$CA"
conf_n "key 0400, owner the gateway: accepted" "^configuration OK$"
chmod 444 "$T/gwkeys/openai.key"
conf_n "key readable by others: refused" \
    "providers\.openai\.key: $T/gwkeys/openai\.key: mode 0444: a key must not be accessible to others"
chmod 420 "$T/gwkeys/openai.key"
conf_n "key writable by its group: refused" "mode 0420: a key must not"
chmod 440 "$T/gwkeys/openai.key"
chown 0:0 "$T/gwkeys/openai.key"
conf_n "key of root:root 0440: refused (not the gateway's)" \
    "owned by 0:0 mode 0440: must be readable by users.gateway only"
chown "0:$GWUID" "$T/gwkeys/openai.key"
conf_n "key of root and the gateway's group, 0440: accepted" \
    "^configuration OK$"
chown "61101:61101" "$T/gwkeys/openai.key"
chmod 400 "$T/gwkeys/openai.key"
conf_n "key of another role's user: refused" "owned by 61101:61101"
chown "$GWUID:$GWUID" "$T/gwkeys/openai.key"
chmod 440 "$T/gwkeys/openai.key"
conf_n "key 0440 of the gateway's user but group-readable: refused" \
    "owned by $GWUID:$GWUID mode 0440"
chmod 400 "$T/gwkeys/openai.key"
ln -s "$T/gwkeys/npm.token" "$T/gwkeys/npm.link"
sed -i "s|secret: $T/gwkeys/npm.token|secret: $T/gwkeys/nosuch|" "$T/k.conf"
conf_n "a secret file that is not there: refused" \
    "upstreams\.npm\.secret: $T/gwkeys/nosuch: No such file"
# A model's output ceiling: a count of tokens, 1 to 16777216.
model_conf "$T/k.conf" "$DPORT" "$CA"
sed -i 's|m-large: {input: 10, output: 30}|m-large: {input: 10, output: 30, max-output: 8192}|' \
    "$T/k.conf"
conf_n "a price with max-output: accepted" "^configuration OK$"
sed -i 's|max-output: 8192|max-output: 0|' "$T/k.conf"
conf_n "max-output 0: refused" \
    "providers\.openai\.prices\.m-large\.max-output: 0 is out of range 1-16777216"
sed -i 's|max-output: 0|max-output: 16777217|' "$T/k.conf"
conf_n "max-output above 16777216: refused" "16777217 is out of range"
sed -i 's|max-output: 16777217|max-output: many|' "$T/k.conf"
conf_n "max-output not a number: refused" "expected a number"
# A Gemini provider, a provider's idle timeout, cache and long-context
# rates (kind gemini was "expected openai or anthropic" before).
model_conf "$T/k.conf" "$DPORT" "$CA"
sed -i '/^  elsewhere:/,/^    ca:/s|kind: openai|kind: gemini|' "$T/k.conf"
conf_n "a provider of kind gemini: accepted" "^configuration OK$"
sed -i 's|^    ca: \(.*\)$|    ca: \1\n    idle-timeout: 600|' "$T/k.conf"
conf_n "idle-timeout 600 on each provider and upstream: accepted" \
    "^configuration OK$"
"$O/factoryd" -nv -f "$T/k.conf" >"$T/k.out" 2>&1
check "factoryd -nv prints kind: gemini and idle-timeout" \
    eval "grep -q 'kind: gemini' '$T/k.out' &&
    grep -q 'idle-timeout: 600' '$T/k.out'"
sed -i 's|idle-timeout: 600|idle-timeout: 0|' "$T/k.conf"
conf_n "idle-timeout 0: refused" "idle-timeout: 0 is out of range 1-86400"
model_conf "$T/k.conf" "$DPORT" "$CA"
sed -i 's|m-large: {input: 10, output: 30}|m-large: {input: 10, output: 30, cache-read: 1, cache-write: 12.5, cache-write-1h: 20, long-context: {above: 200000, input: 20, output: 45}}|' \
    "$T/k.conf"
conf_n "cache rates and a long-context tier: accepted" "^configuration OK$"
"$O/factoryd" -nv -f "$T/k.conf" >"$T/k.out" 2>&1
check "factoryd -nv prints the cache rates and the tier" \
    eval "grep -q 'cache-write-1h: \"20\"' '$T/k.out' &&
    grep -q 'above: 200000' '$T/k.out'"
sed -i 's|above: 200000, ||' "$T/k.conf"
conf_n "a long-context tier without above: refused" \
    "long-context\.above: missing"

start_factoryd "$T/factoryd.conf" "$T/log"
SNAP=$(snapshot 2>&1)

# --- submission: the repository's grant and ceilings ------------------

refused_submit() {	# name manifest-extra want-regex
	local out
	manifest sub "$(shjson "true")" "" "$2"
	if out=$(ctl submit "$T/m/sub.yaml" 2>&1); then
		notok "$1: accepted ($out)"
	elif echo "$out" | grep -qE -- "$3"; then
		ok "$1 ($(echo "$out" | sed "s|$T/m/||"))"
	else
		notok "$1: got '$out'"
	fi
}
refused_submit "a provider the repository does not allow" \
    "model: {provider: elsewhere, models: [m-small]}" \
    "model\.provider: elsewhere is not allowed for repository demo"
refused_submit "a provider factoryd does not have" \
    "model: {provider: nosuch, models: [m-small]}" \
    "model\.provider: nosuch is not a provider of this factoryd"
refused_submit "an upstream named as the provider" \
    "model: {provider: npm, models: [m-small]}" \
    "model\.provider: npm is not a provider of this factoryd"
refused_submit "tokens above the ceiling" \
    "model: {provider: openai, models: [m-small], budget: {tokens: 5001}}" \
    "model\.budget\.tokens: 5001 is above the ceiling of repository demo, 5000 \(max-tokens\)"
refused_submit "dollars above the ceiling" \
    "model: {provider: openai, models: [m-small], budget: {usd: 2.000001}}" \
    "model\.budget\.usd: 2\.000001 is above the ceiling of repository demo, 2 \(max-usd\)"
refused_submit "an upstream the repository does not allow" \
    "upstreams: [pypi]" "upstreams: pypi is not allowed for repository demo"
refused_submit "a provider named as an upstream" \
    "upstreams: [openai]" "upstreams: openai is not an upstream of this factoryd"
# The other repository has no model: at all.
manifest sub "$(shjson "true")" "" \
    "model: {provider: openai, models: [m-small]}"
sed -i 's/^repository: demo$/repository: other/' "$T/m/sub.yaml"
out=$(ctl submit "$T/m/sub.yaml" 2>&1)
check "a repository without model: grants no provider" \
    grep -q "model.provider: openai is not allowed for repository other" \
    <<<"$out"

# --- the agent's environment: URLs and a token, never the key ----------

ENVAGENT='env | grep -E "^(OPENAI|ANTHROPIC|FACTORY_UPSTREAM)_" | sort
tr "\0" "\n" </proc/self/environ | grep -c . | sed "s/^/environ lines: /"
if cat "'$T'/gwkeys/openai.key" 2>/dev/null; then echo "key: ALLOWED"
else echo "key: refused"; fi
ls "'$T'/gwkeys" 2>&1 | head -n 3 | sed "s/^/keydir: /"
grep -rl "sk-real-" "'$T'" /etc /tmp /run /dev/shm . 2>/dev/null |
    head -n 3 | sed "s/^/found: /"
echo change >src/model-env
echo done'
VALIDATE='env | grep -qE "^(OPENAI|ANTHROPIC|FACTORY_UPSTREAM)_|fgw-" && exit 1
exit 0'
manifest envm "$(jq -cn --arg s "$ENVAGENT" '["/bin/bash", "-c", $s]')" \
    "$(shjson "$VALIDATE")" "model: {provider: openai, models: [m-small]}
upstreams: [npm]
tenant: team-a"
id=$(submit envm) && wait_done "$id" 60 || notok "envm: attempt did not end"
L=$(logf "$id")
check "OPENAI_BASE_URL is the endpoint inside the sandbox" \
    grep -qxE "OPENAI_BASE_URL=http://127\.0\.0\.1:[0-9]+/v1" "$L"
check "OPENAI_API_KEY is an fgw- token" \
    grep -qxE "OPENAI_API_KEY=fgw-[0-9a-f]{64}" "$L"
check "FACTORY_UPSTREAM_NPM_URL is an endpoint inside the sandbox" \
    grep -qxE "FACTORY_UPSTREAM_NPM_URL=http://127\.0\.0\.1:[0-9]+/" "$L"
check "no ANTHROPIC_ variable for an openai grant" \
    sh -c "! grep -q '^ANTHROPIC_' '$L'"
TOKEN=$(sed -n 's/^OPENAI_API_KEY=//p' "$L")
UPTOKEN=$(sed -n 's/^FACTORY_UPSTREAM_NPM_TOKEN=//p' "$L")
check "the provider's and the upstream's tokens differ" \
    [ -n "$TOKEN" -a -n "$UPTOKEN" -a "$TOKEN" != "$UPTOKEN" ]
refused "$id" key refused
check "the key's directory is masked (empty)" \
    sh -c "! grep -q '^keydir: .*\.key' '$L'"
check "no file in the sandbox holds a real key" \
    sh -c "! grep -q '^found: ' '$L'"
check "the agent ran to its end" grep -qx done "$L"
check "factoryd handed both grants to factory-gateway" sh -c \
    "grep -q '$id: grant openai on port [0-9]* handed to factory-gateway' \
    '$T/log' && grep -q '$id: grant npm on port' '$T/log'"
# Published: the validation run, which fails with any such variable,
# passed.
state "$id" published "" "validation run without token or endpoint"
check "tenant in show -j" [ "$(show "$id" | jq -r .tenant)" = team-a ]
check "model totals in show -j (no request: zero)" \
    [ "$(show "$id" | jq -c .model)" = \
    '{"requests":0,"refused":0,"estimated":0,"tokens_in":0,"tokens_out":0,"cost_uusd":0}' ]
ctl receipts "$id" >"$T/r-envm.txt"
check "the exited receipt has the model totals" sh -c \
    "grep '\"kind\":\"exited\"' '$T/r-envm.txt' | grep -q '\"requests\":0'"
check "show prints the model line" grep -qx \
    'model: 0 requests (0 refused, 0 estimated), tokens 0 in, 0 out, cost 0.000000 USD' \
    <(ctl show "$id")

# Nowhere: the real keys, and the tokens outside the agent's own log.
leak() {	# name string
	local hits
	hits=$(grep -rlF -- "$2" "$T/state" "$T/log" "$T"/r-*.txt \
	    2>/dev/null | grep -vxF "$L")
	if [ -n "$hits" ]; then
		notok "$1: found in $(echo "$hits" | sed "s|$T/||" | head -n 3 |
		    tr '\n' ' ')"
	else
		ok "$1"
	fi
}
leak "the real provider key is nowhere under state, log, receipts" \
    "$REALKEY"
leak "the upstream secret is nowhere under state, log, receipts" \
    "$UPSECRET"
[ -n "$TOKEN" ] && leak "the token is in no journal, receipt or log line" \
    "$TOKEN"
[ -n "$UPTOKEN" ] && leak "the upstream token is nowhere either" "$UPTOKEN"
check "the key is not in the agent's log either" \
    sh -c "! grep -qF -- '$REALKEY' '$L'"
check "envm: no attempt process left" [ -z "$(attempt_procs)" ]

# --- the parent dies while a model attempt runs: it fails closed -------

# No token is journaled, so none can be restored: the attempt whose
# agent ran is failed on replay, and no grant of it is handed to the
# new gateway.
stop_factoryd
manifest crash "$(shjson "sleep 30")" "" \
    "model: {provider: openai, models: [m-small]}"
FACTORY_CRASH=parent:after-running "$O/factoryd" -dk -f "$T/factoryd.conf" \
    2>>"$T/log" &
FACTORYD_PID=$!
wait_serving "$SOCK" "$FACTORYD_PID"
ctl submit "$T/m/crash.yaml" >/dev/null 2>&1
i=0
while kill -0 "$FACTORYD_PID" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1))
done
wait "$FACTORYD_PID"
st=$?
FACTORYD_PID=""
check "factoryd died after the model attempt's running receipt ($st)" \
    [ "$st" = 86 ]
sleep 0.5
LOGAT=$(wc -l <"$T/log")
start_factoryd "$T/factoryd.conf" "$T/log"
id=$(ctl -j list | jq -r '.attempts[-1].id')
wait_done "$id" 60 || notok "crash: attempt did not end"
state "$id" failed "agent interrupted" "after a parent crash, the model attempt"
check "before the crash its grant was handed over" \
    sh -c "head -n $LOGAT '$T/log' | grep -q '$id: grant openai on port'"
check "after it, no grant was handed to the new gateway for it" \
    sh -c "! tail -n +$((LOGAT + 1)) '$T/log' | grep -q '$id: grant '"

# --- a lying gateway is killed, its lies recorded nowhere ---------------

# prog_fakegw as factory-gateway, the real binaries beside it.
mkdir "$T/fakelib"
for b in "$O"/factory-*; do
	case $b in *.mode) continue ;; esac
	ln -s "$b" "$T/fakelib/${b##*/}"
done
rm "$T/fakelib/factory-gateway"
cp "$O/regress/model/prog_fakegw" "$T/fakelib/factory-gateway"
chmod 755 "$T/fakelib" "$T/fakelib/factory-gateway"
sed "s|^libexec: .*|libexec: $T/fakelib|" "$T/factoryd.conf" >"$T/fake.conf"
chmod 644 "$T/fake.conf"
stop_factoryd
while IFS=: read -r mode text; do
	echo "$mode" >"$T/fakelib/factory-gateway.mode"
	start_factoryd "$T/fake.conf" "$T/log"
	before=$(($(wc -l <"$T/log") + 1))
	manifest fake "$(shjson "sleep 3")" "" \
	    "model: {provider: openai, models: [m-small]}"
	fid=$(submit fake)
	i=0
	while [ $i -lt 100 ] && ! tail -n +$before "$T/log" |
	    grep -q "gateway (pid [0-9]*): .*killing it"; do
		sleep 0.1; i=$((i + 1))
	done
	line=$(tail -n +$before "$T/log" | grep "gateway (pid [0-9]*): .*killing it" |
	    head -n 1)
	check "a gateway sending $mode is killed: ${line#*: }" \
	    sh -c 'printf "%s\n" "$1" | grep -qF -- "$2"' sh "$line" "$text"
	wait_done "$fid" 60 || notok "fake $mode: attempt did not end"
	check "$mode: no model receipt, no spend" sh -c \
	    "! '$O/factoryctl' -s '$SOCK' receipts '$fid' | grep -q '\"kind\":\"model\"'"
	check "$mode: show -j has no request" \
	    [ "$(show "$fid" | jq .model.requests)" = 0 ]
	stop_factoryd
done <<'MODES'
usage-ungranted:GW_USAGE: a-
usage-huge:GW_USAGE: a-
usage-unknown:GW_USAGE: a-20991231-9999: no such attempt
token-other:IMSG_GW_TOKEN: a-
MODES
start_factoryd "$T/factoryd.conf" "$T/log"

if [ "$HAVE_DOUBLE" = 0 ]; then
	# The live cases need h-gw's double and gateway (regress/gateway).
	ok "# SKIP the live cases: $MODELSRV is not in this tree yet"
	regress_done
fi

. "$(dirname "$0")/live.sh"

regress_done
