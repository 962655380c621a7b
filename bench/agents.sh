#!/bin/bash
# Speed of the real clients through factory (issue 25): per client
# (Claude Code, Codex CLI, Gemini CLI, pi; regress/agents/clients.sh
# installs them, once, into its cache), the time from factoryctl
# submit to its first model request at the double
# (regress/agents/agentsrv.py, over TLS, stamping every request and
# every event it sends), beside the same client run directly on the
# host against the same double in the same run, from its process's
# start.  Then bench/agentprobe.js, a tiny streaming client, both
# ways: its first request the same way, and each answer's first byte
# and each streamed event from the double's send to the probe's
# receipt, through the gateway and directly.  The real clients cannot
# be stamped inside, so the per-event figures are the probe's.  The
# runs go one after another, so that they do not load each other.
#
# O: the build directory.  AGENTS_ONLY: the clients (claude codex
# gemini pi).  AGENTS_ROUNDS: runs of each, both ways in turn (default
# 3; the medians are printed).  PROBE_REQUESTS: the probe's requests
# per run (default 20).
# BENCH_SUMMARY: a file the targets are added to.  Needs root,
# python3, jq, openssl; Node.js 20 and the clients from their cache or
# the npm registry (clients.sh).

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
: "${O:?O must name the build directory}"
top=$(cd "$(dirname "$0")/.." && pwd)
case $O in /*) ;; *) O=$top/$O ;; esac
. "$top/regress/lib.sh"
HERE=$top/regress/agents
. "$HERE/clients.sh"

B_PIDS=""
agents_bench_cleanup() {
	local p
	for p in $B_PIDS; do
		kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	[ -n "$INSTALLING" ] && rm -rf "$INSTALLING"
	regress_cleanup
}
trap agents_bench_cleanup EXIT

BASE=65300		# users 65301-65307; no regress suite uses these
DUID=65320		# the direct runs' uid: Claude Code refuses root
CLIENTS=${AGENTS_ONLY:-claude codex gemini pi}
ROUNDS=${AGENTS_ROUNDS:-3}
for c in jq python3 openssl setpriv; do
	command -v $c >/dev/null || fail "bench agents: needs $c"
done
agents_node >/dev/null
agents_install >/dev/null

now() { date +%s%6N; }		# CLOCK_REALTIME, microseconds

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" $((BASE + 4))
write_attempt_conf "$T" $BASE $((BASE + 10))-$((BASE + 19))
mkdir "$T/gwkeys" "$T/gwca" "$T/m"
chmod 755 "$T/gwkeys" "$T/gwca"
for k in anthropic openai gemini; do
	echo "sk-bench-$k" >"$T/gwkeys/$k.key"
done
chown $((BASE + 7)):$((BASE + 7)) "$T/gwkeys"/*
chmod 400 "$T/gwkeys"/*
# A CA and the double's certificate signed by it: Codex CLI (rustls)
# refuses a self-signed CA certificate as a server's.
EC="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' \
    >"$T/gwca/ext"
{ openssl req -x509 $EC -days 2 -subj /CN=bench-ca \
    -keyout "$T/gwca/ca.key" -out "$T/gwca/ca.pem" &&
    openssl req $EC -subj /CN=localhost -keyout "$T/gwca/key.pem" \
    -out "$T/gwca/leaf.csr" &&
    openssl x509 -req -in "$T/gwca/leaf.csr" -CA "$T/gwca/ca.pem" \
    -CAkey "$T/gwca/ca.key" -CAcreateserial -days 2 \
    -extfile "$T/gwca/ext" -out "$T/gwca/cert.pem"; } >/dev/null 2>&1 ||
    fail "bench agents: openssl: the double's certificate"
chmod 644 "$T/gwca/ca.pem" "$T/gwca/cert.pem"
: >"$T/times.jsonl"
python3 "$HERE/agentsrv.py" -c "$T/gwca/cert.pem" -k "$T/gwca/key.pem" \
    -r "$T/record.jsonl" -t "$T/times.jsonl" >"$T/agentsrv.out" 2>&1 &
B_PIDS=$!
i=0
while ! grep -q '^ready' "$T/agentsrv.out" && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
DPORT=$(awk '/^ready/ {print $2}' "$T/agentsrv.out")
[ -n "$DPORT" ] || fail "bench agents: the double did not start"
DURL=https://localhost:$DPORT

sed -e "/^    path: .*\/demo.git$/a\\
    model: {providers: [anthropic, openai, gemini]}" "$T/factoryd.conf" \
    >"$T/factoryd.conf.new"
mv "$T/factoryd.conf.new" "$T/factoryd.conf"
{
	echo "providers:"
	for k in anthropic openai gemini; do
		cat <<CONF
  $k:
    kind: $k
    url: $DURL
    key: $T/gwkeys/$k.key
    ca: $T/gwca/ca.pem
CONF
	done
} >>"$T/factoryd.conf"
chmod 644 "$T/factoryd.conf"
start_factoryd "$T/factoryd.conf" "$T/log"

# One attempt at a time, waited for with a slow poll: waiting must not
# load the machine it measures.
through_factory() {	# name agent-json provider model env-yaml
	local id
	cat >"$T/m/$1.yaml" <<MAN
repository: demo
baseline: main
title: "bench agents $1"
scope: ["src/**"]
agent: $2
validate: ["/bin/true"]
exec: $EXEC
env: $5
limits: {wall: 2m, memory: 2G, pids: 512}
model: {provider: $3, models: [$4]}
MAN
	B_T0=$(now)
	id=$(ctl submit "$T/m/$1.yaml") || { notok "bench agents: submit $1"; return 1; }
	i=0
	while [ "$(ctl -j show "$id" | jq -r .terminated)" != true ] &&
	    [ $i -lt 300 ]; do
		sleep 0.5; i=$((i + 1))
	done
	B_ID=$id
	echo "# $1 through factory: $(ctl -j show "$id" | jq -r '.state')" >&2
}

# The same client on the host, as an unprivileged uid, with what
# factory would write into its HOME, pointed at the double over TLS.
direct() {	# name client argv...
	local name=$1 c=$2 h=$T/dhome-$1 w=$T/dwork-$1
	shift 2
	mkdir -p "$h/.codex" "$h/.gemini" "$h/.pi/agent"
	git clone -q "$T/src" "$w"
	printf '%s\n' 'model_provider = "factory"' \
	    'web_search = "disabled"' '' '[model_providers.factory]' \
	    'name = "factory"' "base_url = \"$DURL/v1\"" \
	    'env_key = "OPENAI_API_KEY"' 'wire_api = "responses"' \
	    >"$h/.codex/config.toml"
	echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}}' \
	    >"$h/.gemini/settings.json"
	jq -n --arg u "$DURL" --arg m "m-$c" '{providers: {factory: {
	    baseUrl: $u, api: "anthropic-messages",
	    apiKey: "ANTHROPIC_API_KEY", models: [{id: $m}]}}}' \
	    >"$h/.pi/agent/models.json"
	chown -R $DUID:$DUID "$h" "$w"
	B_T0=$(now)
	(cd "$w" && exec timeout -k 5 120 setpriv --reuid=$DUID --regid=$DUID \
	    --clear-groups env -i PATH=/usr/bin:/bin HOME="$h" \
	    ANTHROPIC_BASE_URL="$DURL" ANTHROPIC_API_KEY=sk-bench-anthropic \
	    OPENAI_BASE_URL="$DURL/v1" OPENAI_API_KEY=sk-bench-openai \
	    GOOGLE_GEMINI_BASE_URL="$DURL" GEMINI_API_KEY=sk-bench-gemini \
	    NODE_EXTRA_CA_CERTS="$T/gwca/ca.pem" \
	    CODEX_CA_CERTIFICATE="$T/gwca/ca.pem" \
	    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	    GEMINI_CLI_TRUST_WORKSPACE=true \
	    PROBE_MODEL="${PROBE_MODEL:-}" \
	    PROBE_REQUESTS="${PROBE_REQUESTS:-20}" \
	    "$@") >"$T/direct-$name.out" 2>&1 </dev/null
	echo "# $name directly: exit $?" >&2
}

# Rounds of each client both ways in turn: a client's own start varies
# by seconds on a loaded host, so one run of each says little.  The
# probe changes nothing in the tree: its attempt ends rejected (nothing
# to publish), after its requests.
RUNS=$T/runs
PROBE=$(cat "$top/bench/agentprobe.js")
for r in $(seq "$ROUNDS"); do
	for c in $CLIENTS; do
		through_factory "$c-$r" "$(agent_of "$c")" \
		    "$(provider_of "$c")" "m-$c" "$(env_of "$c")"
		echo "client $c factory $B_T0 m-$c" >>"$RUNS"
		mapfile -t argv < <(agent_of "$c" | jq -r '.[]')
		direct "$c-$r" "$c" "${argv[@]}"
		echo "client $c direct $B_T0 m-$c" >>"$RUNS"
	done
	through_factory "probe-$r" "$(jq -cn --arg n "$NODE" --arg s "$PROBE" \
	    '[$n, "-e", $s]')" anthropic m-probe \
	    "{PROBE_REQUESTS: \"${PROBE_REQUESTS:-20}\"}"
	echo "probe factory $B_T0 m-probe $T/state/logs/$B_ID.log" >>"$RUNS"
	PROBE_MODEL=m-probe-direct direct "probe-$r" probe "$NODE" \
	    -e "$PROBE"
	echo "probe direct $B_T0 m-probe-direct $T/direct-probe-$r.out" \
	    >>"$RUNS"
done

echo "== agents: factory beside the same client on the host, one double" \
    "(load $(cut -d' ' -f1-3 /proc/loadavg))"
python3 "$top/bench/agentstat.py" "$T/times.jsonl" "$RUNS" >"$T/table" ||
    fail "bench agents: agentstat.py"
cat "$T/table"
# The targets: what factory adds, as attempts.sh and tree.sh print them.
awk '/^first model request/ {t = 1} /^$/ {t = 0}
    t && NF == 5 && $1 != "client" && $4 != "-" {
	printf "%-44s %10s  %s\n", "agents: " $1 " 1st request added, ms (<= 50)",
	    $4, ($4 <= 50 ? "met" : "missed") }
    /^per event, (median|p99)/ && $6 != "-" {
	printf "%-44s %10s  %s\n", "agents: per event added " $3 ", ms (<= 1)",
	    $6, ($6 <= 1 ? "met" : "missed") }' "$T/table" \
    >>"${BENCH_SUMMARY:-/dev/stdout}"
stop_factoryd
regress_done
