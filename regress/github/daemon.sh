#!/bin/sh
# regress/github, through the real daemon: factoryd publishes verified
# attempts of a repository whose forge is github to fakegh.py.  Called
# by run.sh (O: the absolute build directory); prints ok / not ok lines
# and exits non-zero if a case failed.  Needs root.
#
# Everything lives under /var/tmp (as regress/hostile does): $T/srv is
# the forge (CA, servers' files, the tokens it issued), $T/keys the
# daemon's keys and the App key (the publisher's, 0400), $T/state the
# daemon's state dir, $T/log its stderr (-d -vv).  No token the forge
# issued may appear in the log, the journal, the receipts, or any file
# under $T/state.

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/ca.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
UIDBASE=61600			# worker +1 ... publisher +4, egress +5; attempts 62600-62649
PUBUID=$((UIDBASE + 4))
OWNER=acme
REPO=widget
REPO_ID=424242
APP_ID=4321
INST=8765
SRVPID=
OLDPUB=

gh_cleanup() {
	[ -n "$SRVPID" ] && kill "$SRVPID" 2>/dev/null &&
	    wait "$SRVPID" 2>/dev/null
	regress_cleanup		# stops factoryd
	# The publisher of the killed factoryd, if still in its request.
	[ -n "$OLDPUB" ] && kill -KILL "$OLDPUB" 2>/dev/null
	case ${T:-} in
	/var/tmp/factory-github.*)
		if [ -n "${KEEP:-}" ]; then echo "# kept $T" >&2
		else rm -rf "$T"; fi
		;;
	esac
}
trap gh_cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "not ok - github daemon: needs root"
	exit 1
fi

T=$(mktemp -d /var/tmp/factory-github.XXXXXX) || exit 1
chmod 755 "$T"
SOCK=$T/run/factoryd.sock
CONF=$T/factoryd.conf
LOG=$T/log

# factoryd in the foreground, logging everything it and its children
# say, into $LOG.
start_daemon() {
	rm -f "$SOCK" "$SOCK.ro"	# a killed factoryd leaves them
	"$O/factoryd" -dkvv -f "$CONF" 2>>"$LOG" &
	FACTORYD_PID=$!
	wait_while '[ ! -S "$SOCK" ] && kill -0 "$FACTORYD_PID" 2>/dev/null'
	[ -S "$SOCK" ] || { tail -20 "$LOG" >&2; fail "factoryd did not start"; }
}

# The forge: a CA, a server certificate, the App key, fakegh.
setup_forge() {
	mkdir -p "$T/srv/git/$OWNER" "$T/keys" "$T/run" || return 1
	cd "$T/srv" || return 1
	make_test_ca || return 1
	chmod 644 ca.pem
	# The App key as an operator installs it: the publisher's, 0400.
	openssl genrsa -traditional -out "$T/keys/app.pem" 2048 \
	    2>/dev/null || return 1
	openssl rsa -in "$T/keys/app.pem" -pubout -out app-pub.pem \
	    2>/dev/null || return 1
	chown "$PUBUID:$PUBUID" "$T/keys/app.pem" &&
	    chmod 400 "$T/keys/app.pem" || return 1
	# The forge's repository holds the same main as ours.
	BARE=$T/srv/git/$OWNER/$REPO.git
	git clone -q --bare "$T/src" "$BARE" &&
	    git -C "$BARE" config http.receivepack true || return 1
	python3 "$HERE/fakegh.py" --dir "$T/srv" --cert "$T/srv/srv.pem" \
	    --key "$T/srv/srv.key" --app-pub "$T/srv/app-pub.pem" \
	    --app-id $APP_ID --owner $OWNER --repo $REPO \
	    --git-root "$T/srv/git" --ports "$T/srv/ports" \
	    --installation $INST --repo-id $REPO_ID \
	    --tokens "$T/srv/tokens" 2>"$T/srv/server.err" &
	SRVPID=$!
	wait_while '[ ! -s "$T/srv/ports" ] && kill -0 "$SRVPID" 2>/dev/null'
	[ -s "$T/srv/ports" ] || return 1
	read -r APIPORT GITPORT CTLPORT < "$T/srv/ports"
	API=https://127.0.0.1:$APIPORT
}

write_conf() {
	cat >"$CONF" <<CONF
socket: $SOCK
state-dir: $T/state
libexec: $O
verifiers: 2
max-attempts: 4
attempt-uids: 62600-62649
keys:
  receipts: $T/keys/receipt.key
  verifier: $T/keys/verifier.key
users:
  worker: $((UIDBASE + 1))
  verifier: $((UIDBASE + 2))
  reconciler: $((UIDBASE + 3))
  publisher: $PUBUID
  egress: $((UIDBASE + 5))
  image: $((UIDBASE + 6))
  gateway: $((UIDBASE + 7))
repositories:
  demo:
    path: $T/demo.git
    publish:
      forge: github
      api: $API
      owner: $OWNER
      repo: $REPO
      repository-id: $REPO_ID
      app-id: $APP_ID
      installation-id: $INST
      key: $T/keys/app.pem
      ca: $T/srv/ca.pem
  named:
    path: $T/demo.git
    publish:
      forge: github
      api: https://localhost:$APIPORT
      owner: $OWNER
      repo: $REPO
      repository-id: $REPO_ID
      app-id: $APP_ID
      installation-id: $INST
      key: $T/keys/app.pem
      ca: $T/srv/ca.pem
  ghes:
    path: $T/demo.git
    publish:
      forge: github
      api: $API/api/v3
      owner: $OWNER
      repo: $REPO
      repository-id: $REPO_ID
      app-id: $APP_ID
      installation-id: $INST
      key: $T/keys/app.pem
      ca: $T/srv/ca.pem
CONF
}

# The forge's test hooks.
# Wait while the condition (a shell command, evaluated) holds: events
# the test polls for, bounded by the clock (10 minutes), never by a
# count of tries that a loaded machine runs through sooner.
wait_while() {
	_until=$(($(date +%s) + 600))
	while eval "$1"; do
		[ "$(date +%s)" -lt "$_until" ] || return 1
		sleep 0.1
	done
}
fctl() {
	python3 "$HERE/ghctl.py" "$T/srv/ca.pem" "https://localhost:$CTLPORT/_control" "$1" >/dev/null
}
fstate() {
	python3 "$HERE/ghctl.py" "$T/srv/ca.pem" "https://localhost:$CTLPORT/_state"
}
npulls() { fstate | jq "[.pulls[] | select(.head.ref == \"factory/$1\")] |
    length"; }
pull_of() { fstate | jq -c ".pulls[] | select(.head.ref == \"factory/$1\")"; }
forge_branch() {
	git --git-dir "$BARE" rev-parse -q --verify "refs/heads/factory/$1"
}
nlive() { fstate | jq '[.tokens[] | select(.revoked == false)] | length'; }
ntok() { wc -l < "$T/srv/tokens"; }
# How many of the tokens issued after the first $1 are live.
nlive_since() {
	tail -n +$(($1 + 1)) "$T/srv/tokens" | jq -R . | jq -s . >"$T/srv/since"
	fstate | jq --slurpfile s "$T/srv/since" \
	    '[.tokens | to_entries[] | select(.key as $k | $s[0] |
	    index($k)) | select(.value.revoked == false)] | length'
}
# Successful pushes (receive-pack POSTs) the git server answered.
npushes() { fstate | jq '[.requests[] | select(.server == "git" and
    .method == "POST" and (.path | endswith("/git-receive-pack")) and
    .status == 200)] | length'; }

make_repos "$T" "$PUBUID"
if ! setup_forge; then
	echo "not ok - github daemon setup: see below"
	cat "$T/srv/server.err" 2>/dev/null
	exit 1
fi
write_conf

# The configuration is accepted as factoryd.conf(5) documents it.
check "factoryd -n accepts the github repository" \
    "$O/factoryd" -n -f "$CONF"
start_daemon

# 1. Happy path: published, one pull request at our commit, the token
# revoked.
write_manifest "$T/m1.yaml" "if [ -e '$T/keys/app.pem' ]; then
    echo 'app key: visible'; else echo 'app key: hidden'; fi
    echo one >> README.md" 'grep -q one README.md'
OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/m1.yaml")
RC=$?
ID1=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
PR=$(pull_of "$ID1")
if [ $RC -ne 0 ] || [ "$(field "$ID1" state)" != published ]; then
	notok "daemon-happy-path: exit $RC, state $(field "$ID1" state):" \
	    "$(field "$ID1" reason)"
elif [ "$(npulls "$ID1")" != 1 ]; then
	notok "daemon-happy-path: $(npulls "$ID1") pull requests"
elif [ "$(field "$ID1" pull)" != "$(printf '%s' "$PR" | jq .number)" ] ||
    [ "$(field "$ID1" record)" != \
    "$(printf '%s' "$PR" | jq -r .html_url)" ]; then
	notok "daemon-happy-path: show has pull $(field "$ID1" pull)," \
	    "record $(field "$ID1" record); the forge has $PR"
elif [ "$(forge_branch "$ID1")" != "$(field "$ID1" commit)" ] ||
    [ "$(printf '%s' "$PR" | jq -r .head.sha)" != "$(field "$ID1" commit)" ]
then
	notok "daemon-happy-path: factory/$ID1 on the forge is not" \
	    "$(field "$ID1" commit)"
elif [ "$(wc -l < "$T/srv/tokens")" != 1 ] || [ "$(nlive)" != 0 ]; then
	notok "daemon-happy-path: $(wc -l < "$T/srv/tokens") tokens," \
	    "$(nlive) live"
else
	ok "daemon-happy-path"
fi

# The agent does not even see the App key (its directory is masked).
check "daemon-app-key-hidden-from-agent" sh -c \
    "'$O/factoryctl' -s '$SOCK' logs '$ID1' | grep -qx 'app key: hidden'"

# The evidence travels with the pull request: exactly one check run
# on the pushed commit, success, its text the envelopes, which verify
# offline against the daemon's pinned keys; the token asked for
# checks: write and nothing wider; the body says what was verified.
nchecks() { fstate | jq "[.check_runs[] | select(.external_id == \"$1\")] |
    length"; }
check_of() { fstate | jq -c ".check_runs[] | select(.external_id == \"$1\")"; }
RFP=$(grep -o 'receipt key SHA256:[^ ]*' "$LOG" | head -1 | cut -d' ' -f3)
VFP=$(grep -o 'verifier key SHA256:[^ ]*' "$LOG" | head -1 | cut -d' ' -f3)
CR=$(check_of "$ID1")
printf '%s' "$CR" | jq -r .output.text | grep '^{' >"$T/cr.jsonl"
if [ "$(nchecks "$ID1")" != 1 ]; then
	notok "daemon-check-run: $(nchecks "$ID1") check runs"
elif ! printf '%s' "$CR" | jq -e ".name == \"factory\" and
    .head_sha == \"$(field "$ID1" commit)\" and .status == \"completed\" and
    .conclusion == \"success\" and (.output.summary |
    test(\"receipts: [0-9]+\")) and (.output.summary |
    test(\"isolation rows enforced: identity\"))" >/dev/null; then
	notok "daemon-check-run: $CR"
elif ! "$O/factoryctl" verify -a -K "$RFP,$VFP" "$T/cr.jsonl" >/dev/null; then
	notok "daemon-check-run: its envelopes do not verify"
elif ! "$O/factoryctl" -s "$SOCK" attest "$ID1" | cmp -s - "$T/cr.jsonl"; then
	notok "daemon-check-run: not the envelopes factoryctl attest gives"
else
	ok "daemon-check-run"
fi
check "daemon-check-run-grant: checks write, nothing wider" sh -c \
    "python3 '$HERE/ghctl.py' '$T/srv/ca.pem' 'https://localhost:$CTLPORT/_state' |
    jq -e '[.tokens[].permissions] | all(. == {\"contents\":\"write\",
    \"pull_requests\":\"write\",\"checks\":\"write\",\"metadata\":\"read\"})'"
check "daemon-pull-body-verification" sh -c \
    "python3 '$HERE/ghctl.py' '$T/srv/ca.pem' 'https://localhost:$CTLPORT/_state' |
    jq -r '.pulls[] | select(.head.ref == \"factory/$ID1\") | .body' |
    grep -q 'Verification: PASSED, verifier key $VFP'"

# 1b. An App set up as factoryd.conf(5) says: Contents and Pull
# requests, read and write, nothing else.  GitHub refuses a token asked
# with checks: write (422); the publisher asks only for what the
# installation was granted, publishes, and says in the log and the
# pull request's body that no check run carries the attestations.
fctl '{"granted":{"contents":"write","pull_requests":"write","metadata":"read"}}'
NT=$(ntok)
OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/m1.yaml")
IDM=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
if [ "$(field "$IDM" state)" != published ]; then
	notok "daemon-manpage-app-publishes: state $(field "$IDM" state):" \
	    "$(field "$IDM" reason)"
elif [ "$(nchecks "$IDM")" != 0 ]; then
	notok "daemon-manpage-app-publishes: $(nchecks "$IDM") check runs"
elif ! tail -n +$((NT + 1)) "$T/srv/tokens" | jq -R . | jq -s . \
    >"$T/srv/since" || ! fstate | jq -e --slurpfile s "$T/srv/since" \
    '[.tokens | to_entries[] | select(.key as $k | $s[0] | index($k)) |
    .value.permissions] | length == 1 and all(. == {"contents":"write",
    "pull_requests":"write","metadata":"read"})' >/dev/null; then
	notok "daemon-manpage-app-publishes: tokens since: $(cat "$T/srv/since")"
elif ! pull_of "$IDM" | jq -r .body | grep -q \
    "No check run carries the attestations: the App was not granted Checks"
then
	notok "daemon-manpage-app-publishes: body $(pull_of "$IDM" | jq .body)"
elif ! grep -q "$IDM: installation .* has no checks: write" "$LOG"; then
	notok "daemon-manpage-app-publishes: not in the log"
else
	ok "daemon-manpage-app-publishes"
fi
# An installation without Pull requests: refused before any token,
# naming what is missing.
fctl '{"granted":{"contents":"write","metadata":"read"}}'
NT=$(ntok)
OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/m1.yaml")
IDN=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
if [ "$(field "$IDN" state)" = published ]; then
	notok "daemon-app-without-pulls-refused: published"
elif [ "$(ntok)" != "$NT" ]; then
	notok "daemon-app-without-pulls-refused: a token was minted"
elif ! grep -q "was not granted pull_requests: write" "$LOG"; then
	notok "daemon-app-without-pulls-refused: $(field "$IDN" reason)"
else
	ok "daemon-app-without-pulls-refused"
fi
fctl '{"granted":{"contents":"write","pull_requests":"write","checks":"write","metadata":"read"}}'

# 2. factoryd killed after the push, while the pull request is being
# created: restarted, it publishes the attempt again, which ends with
# exactly one pull request and no second push.  The killed factoryd's
# publisher is left to notice on its own (its request times out).
fctl '{"modes":{"hang_pulls":true}}'
IDK=$(ctl submit "$T/m1.yaml")
wait_while '! fstate | jq -e ".hung | index(\"factory/$IDK\")"  >/dev/null'
COMMITK=$(field "$IDK" commit)
STATEK=$(field "$IDK" state)
OLDPUB=$(ctl -j status | jq -r '.processes[] | select(.name=="publisher") |
    .pid')
PUSHES=$(npushes)
N=$(ntok)
# While it holds a token: not in its argv, nor its environment.
if [ -z "$OLDPUB" ] || ! tr '\0' ' ' < "/proc/$OLDPUB/cmdline" |
    grep -q factory-publisher; then
	notok "daemon-token-not-in-argv: no publisher found (${OLDPUB:-none})"
elif [ ! -s "$T/srv/tokens" ]; then
	notok "daemon-token-not-in-argv: no token issued"
elif tr '\0' '\n' < "/proc/$OLDPUB/cmdline" | grep -qF -f "$T/srv/tokens" ||
    tr '\0' '\n' < "/proc/$OLDPUB/environ" | grep -qF -f "$T/srv/tokens"
then
	notok "daemon-token-not-in-argv: in the publisher's argv or environment"
else
	ok "daemon-token-not-in-argv"
fi
kill -KILL "$FACTORYD_PID"
wait "$FACTORYD_PID" 2>/dev/null
FACTORYD_PID=
fctl '{"modes":{}}'
start_daemon
wait_terminated "$IDK" 90
if [ "$STATEK" != publishing ] || [ -z "$COMMITK" ] ||
    [ "$(forge_branch "$IDK")" != "$COMMITK" ]; then
	notok "daemon-crash-resume: before the kill: state $STATEK," \
	    "branch $(forge_branch "$IDK"), commit $COMMITK"
elif [ "$(field "$IDK" state)" != published ]; then
	notok "daemon-crash-resume: state $(field "$IDK" state):" \
	    "$(field "$IDK" reason)"
elif [ "$(npulls "$IDK")" != 1 ] ||
    [ "$(field "$IDK" pull)" != "$(pull_of "$IDK" | jq .number)" ]; then
	notok "daemon-crash-resume: $(npulls "$IDK") pull requests, show" \
	    "says $(field "$IDK" pull)"
elif [ "$(npushes)" != "$PUSHES" ]; then
	notok "daemon-crash-resume: pushed again ($PUSHES -> $(npushes))"
elif [ "$(ntok)" != $((N + 1)) ] || [ "$(nlive_since $N)" != 0 ]; then
	notok "daemon-crash-resume: the resumed run's token is live"
else
	ok "daemon-crash-resume"
fi
check "daemon-crash-resume-one-check-run" [ "$(nchecks "$IDK")" = 1 ]

# 2b. The publisher alone killed in the same place: factoryd restarts
# it and sends the publication again, which ends the same way.  The
# killed publisher could not revoke its token: it stays live (GitHub
# would expire it within the hour).
fctl '{"modes":{"hang_pulls":true}}'
N=$(ntok)
IDP=$(ctl submit "$T/m1.yaml")
wait_while '! fstate | jq -e ".hung | index(\"factory/$IDP\")"  >/dev/null'
PUB=$(ctl -j status | jq -r '.processes[] | select(.name=="publisher") |
    .pid')
PUSHES=$(npushes)
[ -n "$PUB" ] && [ "$PUB" != 0 ] && kill -KILL "$PUB"
fctl '{"modes":{}}'
wait_terminated "$IDP" 90
if [ -z "$PUB" ] || [ "$PUB" = 0 ] ||
    [ "$(forge_branch "$IDP")" != "$(field "$IDP" commit)" ]; then
	notok "daemon-publisher-killed-resume: publisher ${PUB:-none}," \
	    "branch $(forge_branch "$IDP")"
elif [ "$(field "$IDP" state)" != published ]; then
	notok "daemon-publisher-killed-resume: state $(field "$IDP" state):" \
	    "$(field "$IDP" reason)"
elif [ "$(npulls "$IDP")" != 1 ] || [ "$(npushes)" != "$PUSHES" ] ||
    [ "$(field "$IDP" pull)" != "$(pull_of "$IDP" | jq .number)" ]; then
	notok "daemon-publisher-killed-resume: $(npulls "$IDP") pulls," \
	    "pushes $PUSHES -> $(npushes)"
elif [ "$(ntok)" != $((N + 2)) ] || [ "$(nlive_since $N)" != 1 ]; then
	notok "daemon-publisher-killed-resume: of $(($(ntok) - N)) tokens" \
	    "$(nlive_since $N) live, wanted the killed run's only"
else
	ok "daemon-publisher-killed-resume"
fi

# 3. A second attempt gets its own branch and pull request.
write_manifest "$T/m2.yaml" 'echo two >> README.md'
N=$(ntok)
OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/m2.yaml")
RC=$?
ID2=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
if [ $RC -ne 0 ] || [ "$(field "$ID2" state)" != published ]; then
	notok "daemon-second-attempt: exit $RC, state $(field "$ID2" state):" \
	    "$(field "$ID2" reason)"
elif [ "$(npulls "$ID2")" != 1 ] || [ "$(npulls "$ID1")" != 1 ]; then
	notok "daemon-second-attempt: pulls $(fstate | jq -c \
	    '[.pulls[] | .head.ref]')"
elif [ "$(field "$ID2" pull)" = "$(field "$ID1" pull)" ] ||
    [ "$(field "$ID2" pull)" != "$(pull_of "$ID2" | jq .number)" ]; then
	notok "daemon-second-attempt: pull $(field "$ID2" pull)"
elif [ "$(forge_branch "$ID2")" != "$(field "$ID2" commit)" ] ||
    [ "$(ntok)" != $((N + 1)) ] || [ "$(nlive_since $N)" != 0 ]; then
	notok "daemon-second-attempt: branch, or of $(($(ntok) - N))" \
	    "tokens $(nlive_since $N) live"
else
	ok "daemon-second-attempt"
fi

# 3b. The forge drops the connection in the middle of the push (8 MiB
# that do not compress, so the pack is still being written): the
# publisher is not killed (SIGPIPE), retries, publishes one branch and
# one pull request, and revokes the one token it minted.
write_manifest "$T/m3b.yaml" 'mkdir -p src &&
    head -c 8388608 /dev/urandom > src/big.bin'
N=$(ntok)
PUB=$(ctl -j status | jq -r '.processes[] | select(.name=="publisher") |
    .pid')
fctl '{"modes":{"faults":[{"server":"git","method":"POST",
    "prefix":"/acme/widget.git/git-receive-pack","do":"drop-body",
    "count":1}]}}'
OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/m3b.yaml")
RC=$?
HITS=$(fstate | jq '.modes.faults[0].hits // 0')
fctl '{"modes":{}}'
ID3B=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
PUB2=$(ctl -j status | jq -r '.processes[] | select(.name=="publisher") |
    .pid')
if [ "$HITS" != 1 ]; then
	notok "daemon-drop-mid-push: the forge dropped $HITS pushes, not 1"
elif [ $RC -ne 0 ] || [ "$(field "$ID3B" state)" != published ]; then
	notok "daemon-drop-mid-push: exit $RC, state $(field "$ID3B" state):" \
	    "$(field "$ID3B" reason)"
elif [ -z "$PUB" ] || [ "$PUB" != "$PUB2" ] ||
    grep -Eq "publisher \(pid $PUB\) (killed|exited)" "$LOG"; then
	notok "daemon-drop-mid-push: publisher $PUB is now $PUB2:" \
	    "$(grep -E 'publisher \(pid' "$LOG" | tail -1)"
elif [ "$(npulls "$ID3B")" != 1 ] ||
    [ "$(forge_branch "$ID3B")" != "$(field "$ID3B" commit)" ]; then
	notok "daemon-drop-mid-push: $(npulls "$ID3B") pulls, branch" \
	    "$(forge_branch "$ID3B")"
elif [ "$(ntok)" != $((N + 1)) ] || [ "$(nlive_since $N)" != 0 ]; then
	notok "daemon-drop-mid-push: of $(($(ntok) - N)) tokens" \
	    "$(nlive_since $N) live"
else
	ok "daemon-drop-mid-push"
fi

# 3c. A cohort's selection whose pull request the forge keeps failing
# (502 four times: the publisher gives up) after the push: the member
# is selectable again, the other never touched; selected again, it
# publishes one branch (the one pushed, reused) and one pull request,
# and only then is the other cancelled, with no branch of its own.
# A cohort of two (KC: CA, CB; RC the submission's exit) whose first
# member is selected while the forge fails POSTs under $1 $2 times
# (502): until it is selectable again.
cohort_fail_first() {	# path-prefix count
	cohort_fail_first_faults '[{"server":"api","method":"POST",
	    "prefix":"'"$1"'","do":"status","status":502,
	    "retry_after":1,"count":'"$2"'}]'
}
# The same, with the forge's faults (fakegh.py) given whole.
cohort_fail_first_faults() {	# faults
	write_manifest "$T/mc.yaml" 'echo "$MODE" >> README.md' true 'cohort:
  size: 2
  variants:
    - env: {MODE: left}
    - env: {MODE: right}'
	OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/mc.yaml")
	RC=$?
	KC=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
	CA=$(printf '%s' "$OUT" | jq -r '.members[0].id' 2>/dev/null)
	CB=$(printf '%s' "$OUT" | jq -r '.members[1].id' 2>/dev/null)
	fctl '{"modes":{"faults":'"$1"'}}'
	ctl select "$CA" >/dev/null 2>&1
	wait_while '[ "$(field "$CA" state)" != selectable ]'
}
N=$(ntok)
cohort_fail_first /repos/acme/widget/pulls 4
HITS=$(fstate | jq '.modes.faults[0].hits // 0')
fctl '{"modes":{}}'
WHY=$(ctl -j cohort "$KC" | jq -r '.failed_selections[0].reason')
if [ $RC -ne 0 ] || [ -z "$CA" ] || [ "$HITS" != 4 ]; then
	notok "daemon-cohort-reselect: exit $RC, $HITS pulls refused:" \
	    "$(printf '%s' "$OUT" | head -c 300)"
elif [ "$(field "$CA" state)" != selectable ] ||
    [ "$(field "$CB" state)" != selectable ]; then
	notok "daemon-cohort-reselect: after the failure $CA is" \
	    "$(field "$CA" state) ($(field "$CA" reason)), $CB" \
	    "$(field "$CB" state)"
elif ! printf '%s' "$WHY" | grep -q "publication failed: .*502.*gave up"; then
	notok "daemon-cohort-reselect: the failed selection says '$WHY'"
elif [ "$(npulls "$CA")" != 0 ]; then
	notok "daemon-cohort-reselect: $(npulls "$CA") pulls after the failure"
else
	ok "daemon-cohort-reselect: the failure leaves the cohort selectable"
fi
ctl select "$CA" >/dev/null 2>&1
wait_while '[ "$(field "$CB" terminated)" != true ]'
if [ "$(field "$CA" state)" != published ]; then
	notok "daemon-cohort-reselect: selected again, $CA is" \
	    "$(field "$CA" state): $(field "$CA" reason)"
elif [ "$(npulls "$CA")" != 1 ] ||
    [ "$(forge_branch "$CA")" != "$(field "$CA" commit)" ]; then
	notok "daemon-cohort-reselect: $(npulls "$CA") pulls, branch" \
	    "$(forge_branch "$CA")"
elif [ "$(field "$CB" state)" != cancelled ] ||
    ! field "$CB" reason | grep -q "^not selected: $KC selected $CA"; then
	notok "daemon-cohort-reselect: $CB is $(field "$CB" state):" \
	    "$(field "$CB" reason)"
elif [ "$(npulls "$CB")" != 0 ] || [ -n "$(forge_branch "$CB")" ]; then
	notok "daemon-cohort-reselect: the other has a pull or a branch"
elif [ "$(nlive_since $N)" != 0 ]; then
	notok "daemon-cohort-reselect: $(nlive_since $N) tokens live"
else
	ok "daemon-cohort-reselect: selected again, one branch and one pull"
fi

# 3d. The forge fails the check run (502 until the publisher gives up):
# the pull request comes after the check run, so the failed selection
# leaves none; another member selected, the cohort has exactly one pull
# request, the other member's (before: one for each, both open).
cohort_fail_first /repos/acme/widget/check-runs 40
fctl '{"modes":{}}'
NA=$(npulls "$CA")
ctl select "$CB" >/dev/null 2>&1
wait_while '[ "$(field "$CA" terminated)" != true ]'
if [ $RC -ne 0 ] || [ -z "$CA" ] || [ -z "$CB" ]; then
	notok "daemon-cohort-checkrun-fails: exit $RC:" \
	    "$(printf '%s' "$OUT" | head -c 300)"
elif [ "$NA" != 0 ]; then
	notok "daemon-cohort-checkrun-fails: the failed selection left" \
	    "$NA pull requests of $CA"
elif [ "$(field "$CB" state)" != published ] ||
    [ "$(field "$CA" state)" != cancelled ]; then
	notok "daemon-cohort-checkrun-fails: $CA $(field "$CA" state)," \
	    "$CB $(field "$CB" state): $(field "$CB" reason)"
elif [ "$(npulls "$CA")" != 0 ] || [ "$(npulls "$CB")" != 1 ]; then
	notok "daemon-cohort-checkrun-fails: pulls $(npulls "$CA") of $CA," \
	    "$(npulls "$CB") of $CB"
else
	ok "daemon-cohort-checkrun-fails: one pull request for the cohort"
fi

# 3e. The forge creates the first member's pull request but its answer
# is lost (the connection dropped), then answers 502 until the
# publisher gives up: publish-failed, with that pull request open and
# the branch pushed.  The other member selected: its publication closes
# the first one's pull request and deletes its branch before opening
# its own, so the forge ends with exactly the selected member's branch
# and one open pull request (before: two open pull requests, and the
# first member's branch left).
pull_states() { fstate | jq -r "[.pulls[] | select(.head.ref ==
    \"factory/$1\") | .state] | join(\",\")"; }
cohort_fail_first_faults '[{"server":"api","method":"POST",
    "prefix":"/repos/acme/widget/pulls","do":"drop-response","count":1},
    {"server":"api","method":"POST","prefix":"/repos/acme/widget/pulls",
    "do":"status","status":502,"retry_after":1,"count":3}]'
HITS=$(fstate | jq '[.modes.faults[].hits // 0] | add')
fctl '{"modes":{}}'
LOST=$(pull_states "$CA")
LOSTB=$(forge_branch "$CA")
ctl select "$CB" >/dev/null 2>&1
wait_while '[ "$(field "$CA" terminated)" != true ]'
if [ $RC -ne 0 ] || [ -z "$CA" ] || [ "$HITS" != 4 ]; then
	notok "daemon-cohort-lost-pull: exit $RC, $HITS faults hit"
elif [ "$LOST" != open ] || [ "$LOSTB" != "$(field "$CA" commit)" ]; then
	notok "daemon-cohort-lost-pull: the failed selection left pulls" \
	    "'$LOST', branch '$LOSTB' (the case needs one open, pushed)"
elif [ "$(field "$CB" state)" != published ] ||
    [ "$(field "$CA" state)" != cancelled ]; then
	notok "daemon-cohort-lost-pull: $CA $(field "$CA" state)," \
	    "$CB $(field "$CB" state): $(field "$CB" reason)"
elif [ "$(pull_states "$CA")" != closed ] ||
    [ "$(pull_states "$CB")" != open ]; then
	notok "daemon-cohort-lost-pull: pulls of $CA '$(pull_states "$CA")'," \
	    "of $CB '$(pull_states "$CB")': wanted one open, $CB's"
elif [ -n "$(forge_branch "$CA")" ] ||
    [ "$(forge_branch "$CB")" != "$(field "$CB" commit)" ]; then
	notok "daemon-cohort-lost-pull: branches: $CA '$(forge_branch "$CA")'," \
	    "$CB '$(forge_branch "$CB")'"
elif [ "$(field "$CB" pull)" != "$(pull_of "$CB" | jq .number)" ]; then
	notok "daemon-cohort-lost-pull: $CB says pull $(field "$CB" pull)"
elif ! grep -q "$CB: closed pull request #[0-9]* of $CA, superseded" "$LOG"
then
	notok "daemon-cohort-lost-pull: the publisher did not say it closed it"
else
	ok "daemon-cohort-lost-pull: one open pull request, one branch"
fi

# 3f. The same, and the forge refuses to close the first member's pull
# request (502 until the publisher gives up): the other's publication
# fails saying so, with nothing of its own made, and the cohort stays
# selectable; selected again once the forge mends, it publishes, and
# the forge ends as in 3e.
cohort_fail_first_faults '[{"server":"api","method":"POST",
    "prefix":"/repos/acme/widget/pulls","do":"drop-response","count":1},
    {"server":"api","method":"POST","prefix":"/repos/acme/widget/pulls",
    "do":"status","status":502,"retry_after":1,"count":3}]'
fctl '{"modes":{"faults":[{"server":"api","method":"PATCH",
    "prefix":"/repos/acme/widget/pulls/","do":"status","status":502,
    "retry_after":1,"count":100}]}}'
LOST=$(pull_states "$CA")
ctl select "$CB" >/dev/null 2>&1
wait_while '[ "$(field "$CB" state)" != selectable ]'
fctl '{"modes":{}}'
WHY=$(ctl -j cohort "$KC" | jq -r '[.failed_selections[] |
    select(.member == "'"$CB"'")][0].reason')
if [ $RC -ne 0 ] || [ "$LOST" != open ]; then
	notok "daemon-cohort-close-fails: exit $RC, $CA's pulls '$LOST'"
elif [ "$(field "$CB" state)" != selectable ] ||
    [ "$(field "$CA" state)" != selectable ]; then
	notok "daemon-cohort-close-fails: $CA $(field "$CA" state)," \
	    "$CB $(field "$CB" state): $(field "$CB" reason)"
elif ! printf '%s' "$WHY" | grep -q \
    "publication failed: PATCH .*502.*gave up.*of $CA not closed"; then
	notok "daemon-cohort-close-fails: the failed selection says '$WHY'"
elif [ "$(pull_states "$CA")" != open ] || [ "$(npulls "$CB")" != 0 ] ||
    [ -n "$(forge_branch "$CB")" ]; then
	notok "daemon-cohort-close-fails: $CA's pulls '$(pull_states "$CA")'," \
	    "$CB has $(npulls "$CB") pulls, branch '$(forge_branch "$CB")'"
else
	ok "daemon-cohort-close-fails: the cohort stays selectable"
fi
ctl select "$CB" >/dev/null 2>&1
wait_while '[ "$(field "$CA" terminated)" != true ]'
if [ "$(field "$CB" state)" != published ] ||
    [ "$(pull_states "$CA")" != closed ] ||
    [ "$(pull_states "$CB")" != open ] || [ -n "$(forge_branch "$CA")" ]
then
	notok "daemon-cohort-close-fails: selected again, $CB is" \
	    "$(field "$CB" state); pulls $CA '$(pull_states "$CA")', $CB" \
	    "'$(pull_states "$CB")', branch of $CA '$(forge_branch "$CA")'"
else
	ok "daemon-cohort-close-fails: selected again, one open pull request"
fi

# 4. The API by name: glibc resolves it in the publisher, under its
# "dns" promise and the resolver files it unveils.
write_manifest "$T/m2b.yaml" 'echo named >> README.md'
sed -i 's/^repository: demo$/repository: named/' "$T/m2b.yaml"
N=$(ntok)
OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/m2b.yaml")
RC=$?
ID2B=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
if [ $RC -ne 0 ] || [ "$(field "$ID2B" state)" != published ]; then
	notok "daemon-api-by-name: exit $RC, state $(field "$ID2B" state):" \
	    "$(field "$ID2B" reason)"
elif [ "$(npulls "$ID2B")" != 1 ] ||
    [ "$(forge_branch "$ID2B")" != "$(field "$ID2B" commit)" ] ||
    [ "$(ntok)" != $((N + 1)) ] || [ "$(nlive_since $N)" != 0 ]; then
	notok "daemon-api-by-name: $(npulls "$ID2B") pulls, of" \
	    "$(($(ntok) - N)) tokens $(nlive_since $N) live"
else
	ok "daemon-api-by-name"
fi

# The killed factoryd's publisher ends when its request does: it sees
# the closed channel, and revokes its token on the way out.
i=0
while [ -n "$OLDPUB" ] && kill -0 "$OLDPUB" 2>/dev/null && [ $i -lt 450 ]; do
	sleep 0.1; i=$((i + 1))
done
if kill -0 "$OLDPUB" 2>/dev/null; then
	notok "daemon-orphan-publisher-exits: pid $OLDPUB still runs"
elif [ "$(nlive)" != 1 ]; then
	# The one left is the publisher killed in 2b.
	notok "daemon-orphan-publisher-exits: $(nlive) live tokens, not 1"
else
	ok "daemon-orphan-publisher-exits"
	OLDPUB=
fi

# 4b. GitHub Enterprise Server: the API under https://HOST/api/v3 (the
# forge answers nothing at its root meanwhile), configured as
# factoryd.conf(5) says.  After the orphan's revocation, which goes to
# the root.
fctl '{"api_prefix":"/api/v3"}'
write_manifest "$T/m2c.yaml" 'echo ghes >> README.md'
sed -i 's/^repository: demo$/repository: ghes/' "$T/m2c.yaml"
N=$(ntok)
OUT=$(timeout 120 "$O/factoryctl" -s "$SOCK" -j submit -w "$T/m2c.yaml")
RC=$?
fctl '{"api_prefix":""}'
ID2C=$(printf '%s' "$OUT" | jq -r .id 2>/dev/null)
if [ $RC -ne 0 ] || [ "$(field "$ID2C" state)" != published ]; then
	notok "daemon-ghes-api-base: exit $RC, state $(field "$ID2C" state):" \
	    "$(field "$ID2C" reason)"
elif [ "$(npulls "$ID2C")" != 1 ] ||
    [ "$(forge_branch "$ID2C")" != "$(field "$ID2C" commit)" ] ||
    [ "$(ntok)" != $((N + 1)) ] || [ "$(nlive_since $N)" != 0 ]; then
	notok "daemon-ghes-api-base: $(npulls "$ID2C") pulls, of" \
	    "$(($(ntok) - N)) tokens $(nlive_since $N) live"
else
	ok "daemon-ghes-api-base"
fi

# 5. No token the forge issued anywhere the daemon wrote: its log, the
# journal, the receipts exported, any file under the state dir.
for id in $ID1 $ID2 $ID2B $ID2C $ID3B $IDK $IDP $CA $CB; do
	ctl receipts "$id" >"$T/receipts-$id.txt"
done
# Every 32-character slice of every token: a token cut short (a log line
# truncated, a buffer split) is still found.
NTOK=$(wc -l < "$T/srv/tokens")
awk '{ for (i = 1; i + 31 <= length($0); i += 32) print substr($0, i, 32) }' \
    "$T/srv/tokens" > "$T/srv/slices"
LEAK=$(grep -lF -f "$T/srv/slices" "$LOG" "$T/state/journal" \
    "$T"/receipts-*.txt 2>/dev/null; grep -rlF -f "$T/srv/slices" \
    "$T/state" 2>/dev/null)
if [ "$NTOK" -lt 7 ]; then
	notok "daemon-token-not-leaked: only $NTOK tokens issued"
elif [ -n "$LEAK" ]; then
	notok "daemon-token-not-leaked: found in $LEAK"
elif [ "$(grep -c 'installation token revoked' "$LOG")" -lt 6 ] ||
    [ ! -s "$T/state/journal" ] ||
    [ ! -s "$T/receipts-$ID1.txt" ] || [ ! -s "$T/receipts-$IDK.txt" ]; then
	notok "daemon-token-not-leaked: the log, journal or receipts are" \
	    "not where the test looks"
else
	ok "daemon-token-not-leaked"
fi

stop_factoryd
regress_done
