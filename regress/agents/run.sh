#!/bin/bash
# The real agent clients through the real daemon: Claude Code, Codex
# CLI, Gemini CLI and pi, from the npm registry at the versions of
# package-lock.json (integrity hashes checked by npm ci), installed
# once into a cache outside the clone keyed by the lockfile's digest.
# Each runs as the agent of an attempt with a model: grant and the
# command line of factory-agents(7), nothing else (pi once per
# provider kind), all at once against one daemon and agentsrv.py, a
# scripted double of the providers over TLS: the first turn is a tool
# call that edits src/agent-edit.txt, the next a final text, with
# usage.  Per client: the attempt publishes with the edit on its
# branch; the double saw the real key and never a token; the usage is
# metered exactly in the receipts; a small budget stops the client
# within 10 s of the refusal with "budget exhausted" in its log; the
# shapes of its first turn's requests are those of shapes/CLIENT.json
# (AGENTS_RECORD=1 writes them instead, after a client upgrade).  A
# shell agent sees the files a grant writes below HOME.  The registry
# out of reach is a failure, never a skip.  Needs root.
#
#	FACTORY_AGENTS_CACHE	the cache's root (/var/cache/factory-agents)
#	AGENTS_ONLY		the clients to run (claude codex gemini pi
#				pi-openai pi-gemini)

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../hostile/hlib.sh"
trap agents_cleanup EXIT
H_UIDLO=64800		# apart from the other suites' uids
H_UIDHI=64819
GWUID=61107		# users.gateway of hlib.sh's config
HERE=$(cd "$(dirname "$0")" && pwd)
# pi once per provider kind: each is a row of agents.c of its own.
CLIENTS=${AGENTS_ONLY:-claude codex gemini pi pi-openai pi-gemini}

agents_cleanup() {
	local m
	[ -n "$FACTORYD_PID" ] && stop_factoryd
	case ${T:-} in
	/var/tmp/factory-hostile.*)
		awk -v d="$T/" 'index($2, d) == 1 {print $2}' /proc/mounts |
		    sort -r | while read -r m; do umount -l "$m"; done ;;
	esac
	[ -n "${INSTALLING:-}" ] && rm -rf "$INSTALLING"
	hostile_cleanup
}

if [ "$(id -u)" != 0 ]; then
	echo "not ok - agents: needs root"
	exit 1
fi
for c in jq python3 openssl; do
	command -v $c >/dev/null || fail "agents: needs $c"
done

# --- Node.js and the clients, from the registry once --------------------

. "$HERE/clients.sh"
agents_node
agents_install

# --- the daemon and the double ----------------------------------------

P=$O/regress/hostile
h_setup
mkdir "$T/gwkeys" "$T/gwca"
chmod 755 "$T/gwkeys" "$T/gwca"
REALKEY="sk-real-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
for k in anthropic openai gemini; do
	printf '%s-%s\n' "$REALKEY" "$k" >"$T/gwkeys/$k.key"
done
chown "$GWUID:$GWUID" "$T/gwkeys"/*
chmod 400 "$T/gwkeys"/*
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
    -keyout "$T/gwca/key.pem" -out "$T/gwca/cert.pem" >/dev/null 2>&1 ||
    fail "agents: openssl req"
chmod 644 "$T/gwca/cert.pem"
: >"$T/record.jsonl"
: >"$T/shapes.jsonl"
bg python3 "$HERE/agentsrv.py" -c "$T/gwca/cert.pem" -k "$T/gwca/key.pem" \
    -r "$T/record.jsonl" -s "$T/shapes.jsonl" >"$T/agentsrv.out" 2>&1
i=0
while ! grep -q '^ready' "$T/agentsrv.out" && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
DPORT=$(awk '/^ready/ {print $2}' "$T/agentsrv.out")
[ -n "$DPORT" ] || fail "agents: the double did not start"

sed -e "/^    path: .*\/repo.git$/a\\
    model: {providers: [anthropic, openai, gemini]}" "$T/factoryd.conf" \
    >"$T/factoryd.conf.new"
mv "$T/factoryd.conf.new" "$T/factoryd.conf"
{
	echo "providers:"
	for k in anthropic openai gemini; do
		cat <<CONF
  $k:
    kind: $k
    url: https://localhost:$DPORT
    key: $T/gwkeys/$k.key
    ca: $T/gwca/cert.pem
CONF
	done
} >>"$T/factoryd.conf"
chmod 644 "$T/factoryd.conf"
start_factoryd "$T/factoryd.conf" "$T/log"

# --- the clients' manifests: factory-agents(7)'s -----------------------
# (agent_of, provider_of, env_of: clients.sh)
client_manifest() {	# client name wall [budget-yaml]
	cat >"$T/m/$2.yaml" <<EOF
repository: demo
baseline: main
title: "agents $1"
scope: ["src/**"]
agent: $(agent_of "$1")
validate: ["/bin/sh", "-c", "grep -qx 'edited by the agent' src/agent-edit.txt"]
exec: $EXEC
env: $(env_of "$1")
limits: {wall: $3, memory: 2G, pids: 512}
model: {provider: $(provider_of "$1"), models: [m-$1]${4:+, $4}}
EOF
}

# The double's records of one client's requests: those of its model.
mine() {	# client file
	jq -c --arg m "m-$1" 'select(.model == $m)' "$2"
}
turns() {	# client: its model requests
	mine "$1" "$T/record.jsonl" | jq -s \
	    '[.[] | select(.api != "probe" and .api != "other")]'
}

# Every model request of the client carried the real key, once.
sawkey() {	# client
	local h v
	case $(provider_of "$1") in
	anthropic) h=x-api-key v="$REALKEY-anthropic" ;;
	openai) h=authorization v="Bearer $REALKEY-openai" ;;
	gemini) h=x-goog-api-key v="$REALKEY-gemini" ;;
	esac
	turns "$1" | jq -e --arg h "$h" --arg v "$v" 'length > 0 and
	    all(.[]; [.headers[] | select((.[0] | ascii_downcase) == $h and
	    .[1] == $v)] | length == 1)' >/dev/null
}

# The first turn's request shapes, sorted and without repeats.
shapes_of() {	# client
	mine "$1" "$T/shapes.jsonl" | jq -sS '[.[] | select(.turn == 1) |
	    del(.turn)] | unique'
}

client_checks() {	# client id
	local c=$1 id=$2 L n tin tout j want failed=$REGRESS_FAILED
	REGRESS_FAILED=0
	L=$(logf "$id")
	state "$id" published "" "$c: the attempt with the client's edit"
	check "$c: its branch has the edit" sh -c "git -c safe.directory='*' \
	    -C '$T/remote.git' show 'refs/heads/factory/$id:src/agent-edit.txt' |
	    grep -qx 'edited by the agent'"
	n=$(turns "$c" | jq length)
	check "$c: the double answered its tool call, then its last turn ($n)" \
	    [ "$(turns "$c" | jq '[.[] | select(.turn == 2)] | length')" -ge 1 ]
	check "$c: the double saw the real key on every request" sawkey "$c"
	j=$(show "$id")
	tin=$(echo "$j" | jq .model.tokens_in)
	tout=$(echo "$j" | jq .model.tokens_out)
	check "$c: usage metered: $n requests, $tin in, $tout out, none estimated" \
	    [ "$tin" = $((n * 1200)) -a "$tout" = $((n * 40)) -a \
	    "$(echo "$j" | jq .model.estimated)" = 0 ]
	ctl receipts "$id" >"$T/r-$c.txt"
	check "$c: the exited receipt has the totals" sh -c "grep \
	    '\"kind\":\"exited\"' '$T/r-$c.txt' |
	    grep -q '\"tokens_in\":$tin,\"tokens_out\":$tout'"
	# The request shapes: a client upgrade shows up here.
	want=$HERE/shapes/$c.json
	shapes_of "$c" >"$T/shapes-$c.json"
	if [ -n "${AGENTS_RECORD:-}" ]; then
		cp "$T/shapes-$c.json" "$want"
		ok "$c: request shapes recorded in shapes/$c.json"
	elif diff -u "$want" "$T/shapes-$c.json" >"$T/shapes-$c.diff"; then
		ok "$c: its first turn's requests have the recorded shapes"
	else
		notok "$c: its requests changed shape (shapes/$c.json):"
		sed 's/^/#   /' "$T/shapes-$c.diff" | head -n 40
	fi
	[ "$REGRESS_FAILED" = 0 ] || { echo "# $c's log:"; tail -n 20 "$L" |
	    sed 's/^/#   /'; }
	[ "$failed" = 0 ] || REGRESS_FAILED=1
}

# What a grant writes below HOME, seen by a shell agent: the agent's
# own files, 0600 in 0700 directories, naming the token's variable and
# never holding the token.
HOMEAGENT='cd /tmp || exit 1
echo "uid: $(id -u)"
stat -c "file: %u %a %n" .codex/config.toml .pi/agent/models.json
stat -c "dir: %u %a %n" .codex .pi .pi/agent
grep -l "$OPENAI_API_KEY" .codex/config.toml .pi/agent/models.json &&
    echo "token: IN A FILE"
echo "url: $OPENAI_BASE_URL"
grep -E "^(base_url|env_key) = " .codex/config.toml
echo change >src/home-files'
home_checks() {	# id
	local L uid url
	L=$(logf "$1")
	uid=$(sed -n 's/^uid: //p' "$L")
	check "HOME files: the agent's own, 0600" [ "$(grep -c \
	    "^file: $uid 600 " "$L")" = 2 ]
	check "HOME files: in directories of its own, 0700" [ "$(grep -c \
	    "^dir: $uid 700 " "$L")" = 3 ]
	check "HOME files: no token in them" sh -c "! grep -q '^token:' '$L'"
	url=$(sed -n 's/^url: //p' "$L")
	check "codex's config.toml: OPENAI_BASE_URL's endpoint ($url)" \
	    grep -qxF "base_url = \"$url\"" "$L"
	check "codex's config.toml: the key from OPENAI_API_KEY" \
	    grep -qx 'env_key = "OPENAI_API_KEY"' "$L"
}

# A small budget: the gateway refuses, the client gives up at once.
# Counted from the refusal (the first model receipt), not from the
# start: a client's own start takes seconds on a loaded machine.
budget_checks() {	# client id
	local c=$1 id=$2 L t0 t1 ms
	L=$(logf "$id")
	ctl receipts "$id" >"$T/rb-$c.txt"
	t0=$(jq -r 'select(.kind == "model") | .time' "$T/rb-$c.txt" |
	    head -n 1)
	t1=$(jq -r 'select(.kind == "exited") | .time' "$T/rb-$c.txt")
	if [ -z "$t0" ] || [ -z "$t1" ]; then
		notok "$c budget: no model request, or no exit, in its receipts"
		return
	fi
	ms=$(( $(date -d "$t1" +%s%3N) - $(date -d "$t0" +%s%3N) ))
	check "$c budget: the client stopped $ms ms after the refusal (< 10 s)" \
	    [ "$ms" -lt 10000 ]
	check "$c budget: its log says budget exhausted" \
	    grep -q "budget exhausted" "$L"
	[ "$ms" -lt 10000 ] && grep -q "budget exhausted" "$L" ||
	    { echo "# $c budget log:"; tail -n 8 "$L" | sed 's/^/#   /'; }
}

# All at once (max-attempts is 4): their requests are told apart by
# their models, m-CLIENT.
declare -A ID BID
RUN=$CLIENTS
t0=$(date +%s)
for c in $RUN; do
	client_manifest "$c" "$c" 2m
	ID[$c]=$(submit "$c") || notok "$c: submit refused"
done
manifest home "$(jq -cn --arg s "$HOMEAGENT" '["/bin/sh", "-c", $s]')" "" \
    "model: {provider: openai, models: [m-home]}"
HOMEID=$(submit home)
for c in $RUN; do
	wait_done "${ID[$c]}" 150 || notok "$c: the attempt did not end in 150 s"
done
wait_done "$HOMEID" 60 || notok "home: the attempt did not end"
home_checks "$HOMEID"
ok "the clients' attempts ended in $(($(date +%s) - t0)) s"
for c in $RUN; do
	client_checks "$c" "${ID[$c]}"
done
check "the double never saw a gateway token" \
    [ "$(grep -c 'fgw-' "$T/record.jsonl")" = 0 ]
check "the real key is in no log, journal or receipt" sh -c \
    "! grep -rqF -- '$REALKEY' '$T/state' '$T/log' '$T'/r-*.txt"

# The budget is spent by the first request, whatever the client: a
# client that retries is cut at 30 s, and its check fails.  1000, not
# 500: pi retries any error whose message holds "500".
for c in $RUN; do
	case $c in pi-*) continue ;; esac
	client_manifest "$c" "$c-budget" 30s "budget: {tokens: 1000}"
	BID[$c]=$(submit "$c-budget") || notok "$c budget: submit refused"
done
for c in $RUN; do
	case $c in pi-*) continue ;; esac
	wait_done "${BID[$c]}" 60 || notok "$c budget: the attempt did not end"
	budget_checks "$c" "${BID[$c]}"
done
LEFT=$(attempt_procs)
check "no attempt process left" [ -z "$LEFT" ]
for p in $LEFT; do
	ps -o pid=,uid=,etime=,args= -p "${p%%:*}" | sed 's/^/# left: /'
done

regress_done
