#!/bin/sh
# regress/github: the publisher's github forge (publisher/github.c,
# http.c) against loopback test doubles: fakegh.py serves the GitHub
# API and git smart HTTP (git http-backend) over TLS with a CA made
# here.  prog_ghpub runs one publication through the publisher's code;
# daemon.sh, run last, publishes through the real factoryd.
#
# Layout: $T/srv (the servers' files, CA, requests), $T/keys (App key,
# verifier key), $T/work (the git checkout making bundles), $T/state
# (everything the publisher writes: scratch caches, its logs and
# output): no token may appear under $T/state.
set -u

: "${O:?O must be the absolute build directory}"
PROG=$O/regress/github/prog_ghpub
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/ca.sh"
FAIL=0
SRVPID=
# For a sanitizer build of prog_ghpub: libgit2's own leaks are known.
: "${LSAN_OPTIONS:=suppressions=$HERE/lsan.supp}"
export LSAN_OPTIONS

T=$(mktemp -d /tmp/regress-github.XXXXXX)
SRVPIDS=
cleanup() {
	for p in $SRVPID $SRVPIDS; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	if [ -n "${KEEP:-}" ]; then echo "# kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; FAIL=1; }

OWNER=acme
REPO=widget
REPO_ID=123456
APP_ID=1234
INST=5678
MDIGEST=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

setup() {
	mkdir -p "$T/srv/git/$OWNER" "$T/keys" "$T/work" "$T/state/publish" \
	    "$T/state/logs" "$T/state/out" || return 1
	cd "$T/srv" || return 1
	make_test_ca || return 1
	# Another CA, which signed nothing the servers present.
	openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key \
	    -out other.pem -days 1 -subj /CN=other-ca 2>/dev/null || return 1
	# The App key as GitHub hands it out (PKCS#1 PEM), and the
	# verifier's Ed25519 key.
	openssl genrsa -traditional -out "$T/keys/app.pem" 2048 \
	    2>/dev/null || return 1
	chmod 600 "$T/keys/app.pem"
	openssl rsa -in "$T/keys/app.pem" -pubout -out app-pub.pem \
	    2>/dev/null || return 1
	openssl genpkey -algorithm ed25519 -out "$T/keys/verifier.pem" \
	    2>/dev/null || return 1
	# The forge's repository, with main.
	BARE=$T/srv/git/$OWNER/$REPO.git
	git init -q --bare -b main "$BARE" || return 1
	git -C "$BARE" config http.receivepack true
	cd "$T/work" || return 1
	git init -q -b main . && git config user.email t@example.org &&
	    git config user.name test || return 1
	echo base > README && git add README &&
	    git commit -q -m base && git push -q "$BARE" main || return 1
	fakegh auto "$T/srv/ports" || return 1
	SRVPID=$FAKEPID
	read -r APIPORT GITPORT CTLPORT < "$T/srv/ports"
	API=https://localhost:$APIPORT
}

# fakegh LISTEN PORTSFILE [WRAPPER...]: a forge on the addresses LISTEN
# (fakegh.py --listen), started through WRAPPER (e.g. a private
# /etc/hosts); FAKEPID its pid, once PORTSFILE is written.
fakegh() {
	fg_listen=$1 fg_ports=$2
	shift 2
	"$@" python3 "$HERE/fakegh.py" --dir "$T/srv" --cert "$T/srv/srv.pem" \
	    --key "$T/srv/srv.key" --app-pub "$T/srv/app-pub.pem" \
	    --app-id $APP_ID --owner $OWNER --repo $REPO \
	    --git-root "$T/srv/git" --ports "$fg_ports" \
	    --installation $INST --repo-id $REPO_ID --listen "$fg_listen" \
	    ${FG_SILENT:+--silent "$FG_SILENT"} 2>>"$T/srv/server.err" &
	FAKEPID=$!
	i=0
	while [ ! -s "$fg_ports" ] && [ $i -lt 100 ]; do
		kill -0 $FAKEPID 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	[ -s "$fg_ports" ]
}

# The servers' test hooks, over TLS with the test CA.
CTLHOST=localhost
ctl() {
	python3 "$HERE/ghctl.py" "$T/srv/ca.pem" \
	    "https://$CTLHOST:$CTLPORT/_control" "$1" >/dev/null
}
state() {
	python3 "$HERE/ghctl.py" "$T/srv/ca.pem" \
	    "https://$CTLHOST:$CTLPORT/_state"
}

# mkbundle ID: a commit on factory/ID over main, bundled; sets COMMIT.
mkbundle() {
	cd "$T/work" || return 1
	git checkout -q -b "factory/$1" main &&
	    echo "$1" > "$1.txt" && git add "$1.txt" &&
	    git commit -q -m "work of $1" || return 1
	COMMIT=$(git rev-parse HEAD)
	git bundle create -q "$T/$1.bundle" "factory/$1" ^main 2>/dev/null ||
	    return 1
	git checkout -q main
}

# message ID [CA] [extra JSON members]: the parent's IMSG_PUBLISH.
message() {
	cat > "$T/$1.json" <<EOF
{"id":"$1","forge":"github","repository":"$REPO","remote":"","pulls":"",
 "title":"work of $1","base":"main","commit":"$COMMIT",
 "manifest_digest":"sha256:$MDIGEST",
 "github":{"api":"$API","owner":"$OWNER","repo":"$REPO",
  "repository_id":$REPO_ID,"app_id":"$APP_ID","installation_id":$INST,
  "key":"$T/keys/app.pem","ca":"${2:-$T/srv/ca.pem}"},
 "begin_by":0,"_scratch":"$T/state/publish"${3:-}}
EOF
}

# publish ID [log suffix]: runs prog_ghpub; OUT holds its stdout.
publish() {
	"$PROG" "$T/keys/verifier.pem" "$T/$1.json" "$T/$1.bundle" \
	    > "$T/state/out/$1${2:-}" 2>> "$T/state/logs/$1${2:-}.log"
	RC=$?
	OUT=$(cat "$T/state/out/$1${2:-}")
}

jget() { printf '%s' "$1" | jq -r "$2"; }
npulls() { state | jq "[.pulls[] | select(.head.ref == \"factory/$1\")] |
    length"; }
forge_branch() {
	git --git-dir "$BARE" rev-parse -q --verify "refs/heads/factory/$1"
}
# Tokens issued so far, and how many are still live.
ntokens() { state | jq '.tokens | length'; }
nlive() { state | jq '[.tokens[] | select(.revoked == false)] | length'; }

if ! setup; then
	echo "not ok - setup: see $T/srv/server.err"
	cat "$T/srv/server.err" 2>/dev/null
	exit 1
fi

# GH_ONLY=NAME runs NAME.sh's cases alone (a developer's shortcut).
if [ -n "${GH_ONLY:-}" ]; then
	. "$HERE/$GH_ONLY.sh"
	exit $FAIL
fi

# 1. Happy path: one branch, one pull request, token revoked, and a
# push with that token is refused afterwards.
ID=a-20261129-0001
mkbundle $ID && message $ID && publish $ID
if [ $RC -ne 0 ]; then
	nok happy-path "exit $RC: $OUT"
elif [ "$(jget "$OUT" .reused)" != false ] ||
    [ "$(jget "$OUT" .branch)" != "factory/$ID" ] ||
    [ "$(jget "$OUT" .record)" != \
    "https://github.test/$OWNER/$REPO/pull/$(jget "$OUT" .number)" ]; then
	nok happy-path "unexpected result $OUT"
elif [ "$(forge_branch $ID)" != "$COMMIT" ]; then
	nok happy-path "forge branch is not $COMMIT"
elif [ "$(npulls $ID)" != 1 ]; then
	nok happy-path "$(npulls $ID) pull requests"
elif [ "$(ntokens)" != 1 ] || [ "$(nlive)" != 0 ]; then
	nok happy-path "tokens: $(ntokens) issued, $(nlive) live"
else
	ok happy-path
fi
TOK=$(state | jq -r '.tokens | keys[0]')
cd "$T/work" && git branch -q stolen main
if git -c http.sslCAInfo="$T/srv/ca.pem" -c credential.helper= \
    push -q "https://x-access-token:$TOK@localhost:$GITPORT/$OWNER/$REPO.git" \
    stolen:refs/heads/stolen >/dev/null 2>&1; then
	nok revoked-token-push "a push with the revoked token succeeded"
elif git --git-dir "$BARE" rev-parse -q --verify refs/heads/stolen \
    >/dev/null; then
	nok revoked-token-push "branch stolen exists"
elif ! state | jq -e '[.requests[] | select(.server == "git" and
    .status == 401)] | length > 0' >/dev/null; then
	nok revoked-token-push "the git server did not answer 401"
else
	ok revoked-token-push
fi
unset TOK

# 2. Publishing twice: one pull request, nothing pushed again.
NUM=$(jget "$OUT" .number)
publish $ID .2
if [ $RC -ne 0 ]; then
	nok publish-twice "exit $RC: $OUT"
elif [ "$(jget "$OUT" .reused)" != true ] ||
    [ "$(jget "$OUT" .number)" != "$NUM" ]; then
	nok publish-twice "unexpected result $OUT"
elif [ "$(npulls $ID)" != 1 ] || [ "$(nlive)" != 0 ]; then
	nok publish-twice "$(npulls $ID) pull requests, $(nlive) live tokens"
else
	ok publish-twice
fi

# 3. An existing pull request (the branch pushed and the pull request
# opened by an earlier run nobody recorded) is reused.
ID=a-20261129-0003
mkbundle $ID && message $ID
git -C "$T/work" push -q "$BARE" "factory/$ID"
ctl "{\"pull\":{\"title\":\"earlier\",\"head\":\"factory/$ID\",
    \"base\":\"main\"}}"
PRE=$(state | jq ".pulls[] | select(.head.ref == \"factory/$ID\") |
    .number")
publish $ID
if [ $RC -ne 0 ]; then
	nok existing-pull-reused "exit $RC: $OUT"
elif [ "$(jget "$OUT" .number)" != "$PRE" ] ||
    [ "$(jget "$OUT" .reused)" != true ]; then
	nok existing-pull-reused "got $OUT, wanted number $PRE reused"
elif [ "$(npulls $ID)" != 1 ]; then
	nok existing-pull-reused "$(npulls $ID) pull requests"
else
	ok existing-pull-reused
fi

# 4. The 422 race: another publisher opens it between our look-up and
# our create; we look again and take theirs.
ID=a-20261129-0004
mkbundle $ID && message $ID
ctl '{"modes":{"race422":true}}'
publish $ID
ctl '{"modes":{}}'
RACED=$(state | jq ".pulls[] | select(.head.ref == \"factory/$ID\") |
    select(.title == \"made by a racing publisher\") | .number")
if [ $RC -ne 0 ]; then
	nok race-422 "exit $RC: $OUT"
elif [ -z "$RACED" ] || [ "$(jget "$OUT" .number)" != "$RACED" ]; then
	nok race-422 "got $OUT, the racing pull request is ${RACED:-none}"
elif [ "$(npulls $ID)" != 1 ] || ! state | jq -e '[.requests[] |
    select(.method == "POST" and (.path | endswith("/pulls")) and
    .status == 422)] | length == 1' >/dev/null; then
	nok race-422 "$(npulls $ID) pull requests or no 422 answered"
else
	ok race-422
fi

# 5. A wider grant than asked for is refused and revoked, before any
# push.
ID=a-20261129-0005
mkbundle $ID && message $ID
BEFORE=$(ntokens)
ctl '{"modes":{"wider":true}}'
publish $ID
ctl '{"modes":{}}'
if [ $RC -ne 1 ]; then
	nok wider-grant-refused "exit $RC: $OUT"
elif ! printf '%s' "$OUT" | grep -q \
    'refused and revoked: permission administration granted'; then
	nok wider-grant-refused "error was: $OUT"
elif [ "$(ntokens)" != $((BEFORE + 1)) ] || [ "$(nlive)" != 0 ]; then
	nok wider-grant-refused "tokens: $(ntokens) issued, $(nlive) live"
elif forge_branch $ID >/dev/null || [ "$(npulls $ID)" != 0 ]; then
	nok wider-grant-refused "something was published"
else
	ok wider-grant-refused
fi

# 6. A 403 with retry-after is honoured: the create is retried after
# the delay asked for.  A delay beyond the budget fails at once.
ID=a-20261129-0006
mkbundle $ID && message $ID
ctl '{"modes":{"retry":{"method":"POST","prefix":"/repos/acme/widget/pulls",
    "count":1,"after":2}}}'
publish $ID
ctl '{"modes":{}}'
GAP=$(state | jq '[.requests[] | select(.method == "POST" and
    (.path | endswith("/pulls")))] | .[-2:] | .[1].t - .[0].t')
if [ $RC -ne 0 ]; then
	nok retry-after-honoured "exit $RC: $OUT"
elif ! jq -n -e "$GAP >= 2" >/dev/null; then
	nok retry-after-honoured "retried after $GAP s, not 2"
elif [ "$(npulls $ID)" != 1 ] || [ "$(nlive)" != 0 ]; then
	nok retry-after-honoured "$(npulls $ID) pulls, $(nlive) live tokens"
else
	ok retry-after-honoured
fi
ID=a-20261129-0007
mkbundle $ID && message $ID "" ',"_wait_max":5'
ctl '{"modes":{"retry":{"method":"POST","prefix":"/repos/acme/widget/pulls",
    "count":1,"after":3600}}}'
START=$(date +%s)
publish $ID
END=$(date +%s)
ctl '{"modes":{}}'
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q 'retry after 3600 s'
then
	nok retry-after-bounded "exit $RC: $OUT"
elif [ $((END - START)) -gt 4 ] || [ "$(nlive)" != 0 ]; then
	nok retry-after-bounded "took $((END - START)) s, $(nlive) live tokens"
else
	ok retry-after-bounded
fi

# 7. A crash between the push and the pull request: publishing again
# pushes nothing and opens exactly one pull request.
ID=a-20261129-0008
mkbundle $ID && message $ID
ctl '{"modes":{"hang_pulls":true}}'
"$PROG" "$T/keys/verifier.pem" "$T/$ID.json" "$T/$ID.bundle" \
    > "$T/state/out/$ID.crash" 2>> "$T/state/logs/$ID.crash.log" &
PUBPID=$!
# The push lands first; then give it a moment to reach the create.
i=0
while [ $i -lt 200 ] && [ "$(forge_branch $ID)" != "$COMMIT" ]; do
	sleep 0.1; i=$((i + 1))
done
sleep 1
kill -9 $PUBPID 2>/dev/null
wait $PUBPID 2>/dev/null
ctl '{"modes":{}}'
PUSHES=$(state | jq '[.requests[] | select(.server == "git" and
    .method == "POST" and .status == 200)] | length')
publish $ID
PUSHES2=$(state | jq '[.requests[] | select(.server == "git" and
    .method == "POST" and .status == 200)] | length')
if [ "$(forge_branch $ID)" != "$COMMIT" ]; then
	nok crash-resume "the crashed run had not pushed"
elif [ $RC -ne 0 ]; then
	nok crash-resume "exit $RC: $OUT"
elif [ "$(npulls $ID)" != 1 ] || [ "$PUSHES2" != "$PUSHES" ]; then
	nok crash-resume "$(npulls $ID) pull requests, pushes $PUSHES -> $PUSHES2"
elif [ "$(nlive)" != 1 ]; then
	# The killed run could not revoke its token: it expires in an hour.
	nok crash-resume "$(nlive) live tokens, wanted the crashed run's one"
else
	ok crash-resume
fi

# 8. The server's certificate must chain to the configured CA: another
# CA gets no token asked for at all.
ID=a-20261129-0009
mkbundle $ID && message $ID "$T/srv/other.pem"
BEFORE=$(ntokens)
publish $ID
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q 'certificate'; then
	nok wrong-ca-refused "exit $RC: $OUT"
elif [ "$(ntokens)" != "$BEFORE" ]; then
	nok wrong-ca-refused "a token was issued"
else
	ok wrong-ca-refused
fi

# 9. A verdict that did not accept is refused before any request.
ID=a-20261129-0010
mkbundle $ID && message $ID "" ',"_accepted":false'
NREQ=$(state | jq '.requests | length')
publish $ID
if [ $RC -ne 1 ] || [ "$OUT" != "error: verdict: not accepted" ]; then
	nok unaccepted-verdict "exit $RC: $OUT"
elif [ "$(state | jq '.requests | length')" != $((NREQ + 1)) ]; then
	nok unaccepted-verdict "the publisher talked to the forge"
else
	ok unaccepted-verdict
fi

# 11. The forge's branch holding another commit is never moved.
ID=a-20261129-0011
mkbundle $ID && message $ID
git -C "$T/work" push -q "$BARE" "main:refs/heads/factory/$ID"
MAIN=$(git -C "$T/work" rev-parse main)
LIVE=$(nlive)
publish $ID
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q \
    "branch factory/$ID on the forge holds $MAIN"; then
	nok foreign-branch-refused "exit $RC: $OUT"
elif [ "$(forge_branch $ID)" != "$MAIN" ] || [ "$(npulls $ID)" != 0 ] ||
    [ "$(nlive)" != "$LIVE" ]; then
	nok foreign-branch-refused "the branch moved, a pull request or a live token"
else
	ok foreign-branch-refused
fi

# 12. A JWT signed by another key is refused by the forge's check, at
# its first use: the installation's grant, before any token.
ID=a-20261129-0012
mkbundle $ID && message $ID
openssl genrsa -traditional -out "$T/keys/other-app.pem" 2048 2>/dev/null
sed -i "s|$T/keys/app.pem|$T/keys/other-app.pem|" "$T/$ID.json"
BEFORE=$(ntokens)
publish $ID
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q \
    'GET /app/installations/[0-9]*: 401 bad JWT signature'; then
	nok foreign-app-key-refused "exit $RC: $OUT"
elif [ "$(ntokens)" != "$BEFORE" ]; then
	nok foreign-app-key-refused "a token was issued"
else
	ok foreign-app-key-refused
fi

# 13. Under the publisher's own policy (pledge and unveil from the
# process table, with the -V variables the daemon passes): its cache
# under "$state/publish", the App key and the CA as forge keys, and the
# API's name resolved by glibc under "dns" (resolver files unveiled,
# unix sockets refused).  A fresh state dir: the cache is filled again.
ID=a-20261129-0013
mkbundle $ID && message $ID
mkdir -p "$T/state/policy/publish"
sed -i -e "s|\"_scratch\":\"$T/state/publish\"|\"_scratch\":\"$T/state/policy/publish\"|" \
    "$T/$ID.json"
if grep -q __asan_init "$PROG"; then
	# LeakSanitizer stops the world with ptrace at exit: seccomp kills.
	RC=skip
else
	"$PROG" -p -V "state=$T/state/policy" \
	    -V "forge_keys=$T/keys/app.pem" -V "forge_ca=$T/srv/ca.pem" \
	    "$T/keys/verifier.pem" "$T/$ID.json" "$T/$ID.bundle" \
	    > "$T/state/out/$ID" 2>> "$T/state/logs/$ID.log"
	RC=$?
	OUT=$(cat "$T/state/out/$ID")
fi
if [ $RC = skip ]; then
	echo "ok - under-policy # SKIP sanitizer build"
elif [ $RC -ne 0 ]; then
	nok under-policy "exit $RC: $OUT"
elif [ "$(forge_branch $ID)" != "$COMMIT" ] || [ "$(npulls $ID)" != 1 ]; then
	nok under-policy "not published: $OUT"
else
	ok under-policy
fi

# The forge's bad days: dropped connections, 5xx, stalls, chunked.
. "$HERE/baddays.sh"

# What GitHub's documentation says a client meets (docs.sh).
. "$HERE/docs.sh"

# A cohort's member superseding one whose selection failed.
. "$HERE/supersede.sh"

# A name with several addresses, the first one dead (addrs.sh).
. "$HERE/addrs.sh"

# A fleet's adoption: finishing a publication another host pushed.
. "$HERE/adopt.sh"

# 10. No token, live or revoked, in any file the publisher wrote (its
# logs, output, and caches, binary files included).
# Every 32-character slice of each: a token cut short is found too.
{ state | jq -r '.tokens | keys[]'; cat "$T/srv/tokens.extra" \
    2>/dev/null; } > "$T/srv/tokens"
N=$(wc -l < "$T/srv/tokens")
awk '{ for (i = 1; i + 31 <= length($0); i += 32) print substr($0, i, 32) }' \
    "$T/srv/tokens" > "$T/srv/slices"
LEAK=$(grep -rlF -f "$T/srv/slices" "$T/state" 2>/dev/null)
if [ "$N" -lt 8 ]; then
	nok token-not-leaked "only $N tokens issued"
elif [ -n "$LEAK" ]; then
	nok token-not-leaked "found in $LEAK"
elif ! grep -q 'installation token revoked' "$T/state/logs/"*.log; then
	nok token-not-leaked "the logs are not where the test looks"
else
	ok token-not-leaked
fi

# The same forge through the real daemon: factoryd, its publisher child
# under its policy, the journal, recovery after SIGKILL (daemon.sh).
sh "$HERE/daemon.sh" || FAIL=1

exit $FAIL
