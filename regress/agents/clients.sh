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

INSTALLING=""

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
	gemini) jq -cn --arg b "$GEMINI" --arg p "$PROMPT" \
	    '["/usr/bin/node", $b, "-m", "m-gemini", "--yolo", "-p", $p]' ;;
	pi*) jq -cn --arg b "$PI" --arg p "$PROMPT" --arg m "m-$1" \
	    '["/usr/bin/node", $b, "--provider", "factory", "--model", $m,
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
