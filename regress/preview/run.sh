#!/bin/sh
# Previews (issue 28), through the real daemon and factory-preview:
# the preview answers with a token's cookie and refuses without one,
# refuses another attempt's token and cookie, takes a token once, is
# gone when the agent's run ends and after its ttl, checks a WebSocket
# upgrade's cookie and Origin, shows the application a local Host and
# no factory cookie, records its health, and never logs a token.  A
# browser's screenshot is attached to the attempt's evidence
# (factoryctl attach), and what is no file, too large, badly named or
# named twice is refused; an upload whose connection goes leaves
# nothing, and those in progress together keep the state directory's
# reserve free.
#
# The application is a small Python server the agent runs, with a path
# that says what it was sent and one that ends the agent.
#
# Uids: roles 73101-73108, attempts 73110-73139.

. "$(dirname "$0")/../lib.sh"

[ -x /bin/busybox ] && [ -x /usr/bin/python3 ] ||
    fail "preview: busybox and python3 are needed"
command -v curl >/dev/null && command -v chromium >/dev/null ||
    fail "preview: curl and chromium are needed (make deps-check)"
not() { ! "$@"; }

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
# prog_attach's pid while it holds uploads: killed on any exit.
HOLD=""
pv_cleanup() {
	[ -z "$HOLD" ] || kill -KILL "$HOLD" 2>/dev/null
	regress_cleanup
}
trap pv_cleanup EXIT
# While this file is there, the state directory's file system is as
# large and as free as it says (a test build's, evidence.c).
export FACTORY_TEST_EVIDENCE_DF="$T/evidence.df"
make_repos "$T" 73104
write_attempt_conf "$T" 73100 73110-73139
PORT=$((20000 + $$ % 20000))
DOM=preview.test
sed -i "s/^  gateway: 73107$/  gateway: 73107\n  preview: 73108/" "$T/factoryd.conf"
cat >>"$T/factoryd.conf" <<CONF
preview:
  listen: 127.0.0.1:$PORT
  domain: $DOM
  ttl: 10m
CONF
start_factoryd "$T/factoryd.conf" "$T/log"

# The agent: a small application (Python's http.server, the host's):
# a page, a health path, one that says what it was sent, one that
# ends the agent; the agent waits for that.
cat >"$T/app.py" <<'PY'
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        h = self.headers
        body = {"/": "hello-preview\n", "/healthz": "healthy\n",
                "/stop": "stopping\n", "/ws": "no websocket here\n"}.get(
                self.path, "")
        if self.path in ("/env", "/ws"):
            # What came after this request's head, within a second.
            self.connection.settimeout(1)
            try:
                extra = self.rfile.read1(65536)
            except OSError:
                extra = b""
            body = "host=%s cookie=%s fwd=%s extra=%d%s\n" % (
                h.get("Host"), h.get("Cookie"), h.get("X-Forwarded-Host"),
                len(extra), " factory_preview" if b"factory_preview" in
                extra else "")
        if self.path == "/stop":
            open("/tmp/stop", "w").close()
        b = body.encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
http.server.HTTPServer(("127.0.0.1", 3000), H).serve_forever()
PY
APP="/usr/bin/python3 -c '$(sed "s/'/'\\\\''/g" "$T/app.py")' &
while [ ! -e /tmp/stop ]; do sleep 0.2; done; echo done >src/done"
write_manifest "$T/app.yaml" "$APP" true "preview: {port: 3000, health: /healthz}"
sed -i 's/^limits: {wall: 20s,/limits: {wall: 120s,/' "$T/app.yaml"

# get URL [curl args...]: the status code; the body in $T/body.
get() {
	u=$1
	shift
	h=$(echo "$u" | sed -E 's|^https?://([^/:]+).*|\1|')
	curl -s -o "$T/body" -w '%{http_code}' --max-time 20 \
	    --resolve "$h:$PORT:127.0.0.1" "$@" "$u"
}
site() { echo "http://$1.$DOM:$PORT$2"; }	# id path

A=$(ctl submit "$T/app.yaml") || fail "submit A"
B=$(ctl submit "$T/app.yaml") || fail "submit B"
wait_state "$A" running 120 || fail "A never ran"
wait_state "$B" running 120 || fail "B never ran"

URL=$(ctl preview "$A") || fail "no preview URL for A"
TOKEN=${URL#*token=}
check "a URL of the attempt's own host name with a token" \
    test "$URL" != "${URL#http://$A.$DOM:$PORT/_factory/preview?token=$A.}"

# Not served yet: the app may take a moment to listen.
i=0
while [ $i -lt 100 ] && [ "$(get "$(site "$A" /)")" != 401 ]; do
	sleep 0.2
	i=$((i + 1))
done
check "without a cookie: 401" test "$(get "$(site "$A" /)")" = 401
check "a host name of no preview: 404" \
    test "$(get "$(site a-20991231-0001 /)")" = 404
check "the control plane is not served: a bare domain is 404" \
    test "$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $DOM" \
    "http://127.0.0.1:$PORT/")" = 404
check "A's token at B's host name: 403" \
    test "$(get "$(site "$B" "/_factory/preview?token=$TOKEN")")" = 403
check "the token, at A: 303 and a cookie" \
    test "$(get "$URL" -c "$T/jar")" = 303
check "the cookie is HttpOnly, SameSite, for A's host alone" \
    sh -c "grep -q '^#HttpOnly_$A.$DOM' '$T/jar'"
check "the same token again: 403 (taken once)" \
    test "$(get "$URL" -c "$T/jar2")" = 403
check "with the cookie: the application's page" \
    sh -c "[ \"\$(curl -s --resolve $A.$DOM:$PORT:127.0.0.1 -b '$T/jar' \
    '$(site "$A" /)')\" = hello-preview ]"
get "$(site "$A" /env)" -b "$T/jar" >/dev/null
check "the application sees Host 127.0.0.1:3000, the name forwarded" \
    grep -q "host=127.0.0.1:3000 .*fwd=$A.$DOM" "$T/body"
check "the application gets no factory cookie" \
    sh -c "! grep -q factory_preview '$T/body'"
# A's cookie sent to B's host name (a browser would not; a client may).
sed "s/^#HttpOnly_$A\\.$DOM/#HttpOnly_$B.$DOM/" "$T/jar" >"$T/jarB"
check "A's cookie at B's host name: 401" \
    test "$(get "$(site "$B" /)" -b "$T/jarB")" = 401

# WebSocket: the cookie and an Origin of the preview's own name.
WS="-H Connection:Upgrade -H Upgrade:websocket -H Sec-WebSocket-Version:13 -H Sec-WebSocket-Key:dGhlIHNhbXBsZSBub25jZQ=="
check "a WebSocket upgrade without the cookie: 401" \
    test "$(get "$(site "$A" /ws)" $WS -H "Origin: http://$A.$DOM:$PORT")" = 401
check "a WebSocket upgrade from another origin: 403" \
    test "$(get "$(site "$A" /ws)" -b "$T/jar" $WS -H "Origin: http://evil.example")" = 403
check "a WebSocket upgrade of the preview's origin reaches the app" \
    sh -c "c=\$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 \
    --resolve $A.$DOM:$PORT:127.0.0.1 -b '$T/jar' $WS \
    -H 'Origin: http://$A.$DOM:$PORT' '$(site "$A" /ws)'); \
    [ \"\$c\" != 401 ] && [ \"\$c\" != 403 ] && [ \"\$c\" != 502 ]"

# Hostile heads: refused before anything is proxied.
check "two Host headers: 400" \
    sh -c "raw() { printf \"\$1\" | timeout 20 /bin/busybox nc 127.0.0.1 $PORT | head -n 1; }; \
    raw 'GET / HTTP/1.1\r\nHost: $A.$DOM\r\nHost: $B.$DOM\r\n\r\n' | grep -q ' 400 '"
check "Content-Length with Transfer-Encoding: 400" \
    sh -c "raw() { printf \"\$1\" | timeout 20 /bin/busybox nc 127.0.0.1 $PORT | head -n 1; }; \
    raw 'POST / HTTP/1.1\r\nHost: $A.$DOM\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n' | grep -q ' 400 '"

# A request pipelined behind another is not passed on: its head was
# never checked, and would carry the factory's cookie to the app.
CK=$(awk -v h="$A.$DOM" '$1 == "#HttpOnly_" h && $6 == "factory_preview" {print $7}' "$T/jar")
pipelined() {
	printf 'GET /env HTTP/1.1\r\nHost: %s\r\nCookie: factory_preview=%s\r\n\r\nGET /env HTTP/1.1\r\nHost: %s\r\nCookie: factory_preview=%s\r\n\r\n' \
	    "$A.$DOM" "$CK" "$A.$DOM" "$CK" |
	    timeout 20 /bin/busybox nc 127.0.0.1 "$PORT" >"$T/pipelined"
	grep -q '^host=.* extra=0$' "$T/pipelined"
}
check "a pipelined second request is not passed to the application" \
    pipelined

# A WebSocket upgrade the application does not take (no 101) is no
# tunnel: what the browser sends after it is not passed on either.
wsnot() {
	printf 'GET /ws HTTP/1.1\r\nHost: %s\r\nCookie: factory_preview=%s\r\nOrigin: http://%s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /env HTTP/1.1\r\nHost: %s\r\nCookie: factory_preview=%s\r\n\r\n' \
	    "$A.$DOM" "$CK" "$A.$DOM" "$A.$DOM" "$CK" |
	    timeout 20 /bin/busybox nc 127.0.0.1 "$PORT" >"$T/wsnot"
	grep -q '^host=.* extra=0$' "$T/wsnot"
}
check "an upgrade the application refuses is no tunnel" wsnot

# A request that is not a read comes from the preview's own origin.
post() {	# extra curl args...: the status
	curl -s -o /dev/null -w '%{http_code}' --max-time 20 -X POST -d x \
	    --resolve "$A.$DOM:$PORT:127.0.0.1" -b "$T/jar" "$@" \
	    "$(site "$A" /env)"
}
check "a POST without an Origin: 403" test "$(post)" = 403
check "a POST from another preview's origin: 403" \
    test "$(post -H "Origin: http://$B.$DOM:$PORT")" = 403
check "a POST from its own origin reaches the application" \
    test "$(post -H "Origin: http://$A.$DOM:$PORT")" = 501

# A short token ends by itself.
SHORT=$(ctl preview -t 1s "$A") || fail "no short URL"
sleep 3
check "a token past its ttl: 403" test "$(get "$SHORT")" = 403

# The receipts, the health, the log.
wait_health() {
	i=0
	while [ $i -lt 300 ]; do
		ctl receipts "$1" | grep -q '"kind":"preview-health"' && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
wait_health "$A" || notok "no preview-health receipt"
check "preview-health: 200, the answer's bytes" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $A | grep '\"kind\":\"preview-health\"' |
    jq -e '.facts.status == 200 and (.facts.answer | test(\"healthy\"))'"
check "a preview receipt names who asked and until when" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $A | grep '\"kind\":\"preview\"' |
    head -n 1 | jq -e '.facts.uid == 0 and .facts.expires > 0'"
check "preview-opened was recorded" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $A | grep -q '\"kind\":\"preview-opened\"'"
check "no token in the daemon's log" sh -c "! grep -qF '$TOKEN' '$T/log'"
check "no token in the receipts" \
    sh -c "! '$O/factoryctl' -s '$SOCK' receipts $A | grep -qF '${TOKEN##*.}'"

# factory-preview restarted (killed by its pid): every token and cookie
# it knew is void, and a new token works.
PVPID=$(ctl -j status | jq -r '.processes[] | select(.name == "preview") | .pid')
STALE=$(ctl preview "$A") || fail "no URL before the restart"
[ -n "$PVPID" ] && kill "$PVPID"
i=0
while [ $i -lt 300 ]; do
	n=$(ctl -j status | jq -r '.processes[] | select(.name == "preview") | .pid')
	[ -n "$n" ] && [ "$n" != null ] && [ "$n" != "$PVPID" ] &&
	    [ "$(get "$(site "$A" /)")" = 401 ] && break
	sleep 0.2
	i=$((i + 1))
done
check "after the proxy's restart: the old cookie is void (401)" \
    test "$(get "$(site "$A" /)" -b "$T/jar")" = 401
check "after the proxy's restart: a token minted before is void (403)" \
    test "$(get "$STALE")" = 403
FRESH=$(ctl preview "$A") || fail "no URL after the restart"
get "$FRESH" -c "$T/jar" >/dev/null
check "after the proxy's restart: a new token works" \
    test "$(get "$(site "$A" /)" -b "$T/jar")" = 200

# The agent ends: its preview is gone, cookie or not.
get "$(site "$A" /stop)" -b "$T/jar" >/dev/null
wait_terminated "$A" 120 || fail "A did not end"
check "after the run: the preview is gone (404)" \
    test "$(get "$(site "$A" /)" -b "$T/jar")" = 404
check "after the run: factoryctl preview refuses" \
    sh -c "! '$O/factoryctl' -s '$SOCK' preview $A 2>/dev/null"
check "preview-closed was recorded" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $A | grep -q '\"kind\":\"preview-closed\"'"
# A real browser, headless: the token URL, its redirect and cookie,
# the page; a screenshot of it; the same URL again shows no page.
URLB=$(ctl preview "$B") || fail "no preview URL for B"
chrome() {	# url dump-file [screenshot]
	timeout 120 chromium --headless=new --no-sandbox --disable-gpu \
	    --user-data-dir="$T/chrome.$$.$(date +%s%N)" \
	    --host-resolver-rules="MAP *.$DOM 127.0.0.1" \
	    ${3:+--screenshot="$3" --window-size=800,600} \
	    --dump-dom "$1" >"$2" 2>/dev/null
}
chrome "$URLB" "$T/dom1" "$T/preview.png"
check "chromium opens the preview through its token URL" \
    grep -q hello-preview "$T/dom1"
check "chromium's screenshot of it is kept" \
    sh -c "head -c 8 '$T/preview.png' | od -An -c | grep -q 'P   N   G'"

# The screenshot kept as B's evidence (factoryctl attach): stored byte
# for byte, named by its digest in a receipt and in show.
SHOT=$(sha256sum "$T/preview.png" | cut -d' ' -f1)
check "attach: the screenshot is attached to B" \
    ctl attach -n screenshot "$B" "$T/preview.png"
check "show lists it: sha256 as sha256sum's, type png, its size, when" \
    jq -en --argjson o "$(ctl -j show "$B")" --arg s "$SHOT" \
    --argjson n "$(stat -c %s "$T/preview.png")" \
    '[$o.evidence[] | select(.name == "screenshot")] | length == 1 and
    .[0].sha256 == $s and .[0].type == "png" and .[0].bytes == $n and
    .[0].at > 0'
check "an evidence receipt names it by digest, and who attached it" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $B | grep '\"kind\":\"evidence\"' |
    jq -e '.facts.name == \"screenshot\" and .facts.sha256 == \"$SHOT\" and
    .facts.type == \"png\" and .facts.uid == 0'"
check "its bytes are kept in the state directory, mode 0640" \
    sh -c "cmp '$T/preview.png' '$T/state/evidence/$B/screenshot' &&
    [ \"\$(stat -c %a '$T/state/evidence/$B/screenshot')\" = 640 ]"
# attach_refused WHAT ARGS...: refused within seconds, in one line
# that says WHAT.
attach_refused() {
	_w=$1
	shift
	timeout 10 "$O/factoryctl" -s "$SOCK" attach "$@" >"$T/attach.out" \
	    2>&1 </dev/null
	_rc=$?
	cat "$T/attach.out" >>"$T/attach.log"
	[ $_rc = 1 ] && [ "$(wc -l <"$T/attach.out")" = 1 ] &&
	    grep -q "$_w" "$T/attach.out"
}
mkfifo "$T/fifo"
check "attach: a FIFO is refused, without hanging" \
    attach_refused ": fifo: not a regular file$" "$B" "$T/fifo"
check "attach: a device is refused" \
    attach_refused ": zero: not a regular file$" "$B" /dev/zero
truncate -s 9M "$T/big"
check "attach: a file over 8 MiB is refused, naming the bound" \
    attach_refused ": big: more than 8388608 bytes (8 MiB)$" \
    "$B" "$T/big"
check "attach: a name with a slash is refused" \
    attach_refused "$B: \"a/b\": not a valid name of evidence" -n a/b "$B" \
    "$T/preview.png"
check "attach: a name with a leading dot is refused" \
    attach_refused "$B: \".shot\": not a valid name of evidence" -n .shot "$B" \
    "$T/preview.png"
check "attach: a name with a newline is refused, escaped, in one line" \
    attach_refused "$B: \"shot.*png\": not a valid name of evidence" \
    -n "$(printf 'shot\npng')" "$B" "$T/preview.png"
check "attach: the same name twice is refused" \
    attach_refused "$B: screenshot is attached already$" -n screenshot \
    "$B" "$T/preview.png"
check "attach: an unknown attempt is refused" \
    attach_refused "a-20991231-0001: no such attempt$" a-20991231-0001 \
    "$T/preview.png"
check "attach: a refused file is not stored" \
    test "$(ls -A "$T/state/evidence/$B")" = screenshot

# Uploads begun and never ended (prog_attach): N connections to B that
# each sent ATTACH and some DATA, held until killed.  hold NAME N BYTES
# is true once the daemon took all of them.
hold() {
	$HOLD_AS "$O/regress/preview/prog_attach" "$SOCK" "$B" "$1" "$2" \
	    "$3" >"$T/hold.out" 2>&1 &
	HOLD=$!
	i=0
	while [ $i -lt 300 ] && ! grep -qx "held $2" "$T/hold.out"; do
		kill -0 "$HOLD" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -qx "held $2" "$T/hold.out"
}
unhold() {
	kill "$HOLD" 2>/dev/null
	wait "$HOLD" 2>/dev/null
	HOLD=""
}
# The daemon's unnamed files in B's evidence directory (O_TMPFILE).
tmpfiles() {
	ls -l "/proc/$FACTORYD_PID/fd" 2>/dev/null |
	    grep -c -- "-> $T/state/evidence/$B/#.* (deleted)$"
}
# Until the daemon let go of every one, at most 30 seconds.
tmpfiles_gone() {
	i=0
	while [ $i -lt 300 ] && [ "$(tmpfiles)" != 0 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(tmpfiles)" = 0 ]
}
echo "kept after a dropped one" >"$T/later"

# A connection that goes mid-upload takes its upload along.
hold dropped 1 100000 || notok "attach: an upload begun and held"
check "attach: an upload in progress is an unnamed file of the daemon's" \
    test "$(tmpfiles)" = 1
unhold
check "attach: its connection gone, the upload's unnamed file is closed" \
    tmpfiles_gone
check "attach: its connection gone, no file of the upload is kept" \
    test "$(ls -A "$T/state/evidence/$B")" = screenshot
check "attach: its connection gone, no receipt names the upload" \
    sh -c "! '$O/factoryctl' -s '$SOCK' receipts $B |
    grep '\"kind\":\"evidence\"' | grep -q '\"name\":\"dropped\"'"
check "attach: its connection gone, the daemon serves" ctl status
check "attach: its connection gone, the same name is attached later" \
    sh -c "'$O/factoryctl' -s '$SOCK' attach -n dropped $B '$T/later' &&
    cmp '$T/later' '$T/state/evidence/$B/dropped'"

# Uploads in progress hold what they may still write (8 MiB less what
# they wrote) from the free space: a file system of 1 GiB (its reserve
# 256 MiB, more than 5%) with 28 MiB free beyond that has room for
# three, not four.  Each alone would pass.
M=8388608
echo "$((1 << 30)) $((268435456 + 3 * M + M / 2))" >"$T/evidence.df"
hold many 3 1000 || notok "attach: three uploads begun and held"
check "attach: three in progress, room for three: a fourth is refused" \
    attach_refused "$B: fourth: the state directory has 284M free, 23M of it held by 3 uploads in progress, and keeps 256M for the journal$" \
    -n fourth "$B" "$T/later"
unhold
# attach_soon NAME: B takes $T/later as NAME within 30 seconds (the
# daemon sees the held connections go meanwhile).
attach_soon() {
	i=0
	until ctl attach -n "$1" "$B" "$T/later" >/dev/null 2>&1; do
		[ $i -lt 300 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}
check "attach: the three gone, the fourth has their room" attach_soon fourth

# At most 8 uploads in progress at once, however free the disk.
echo "$((1 << 40)) $((1 << 40))" >"$T/evidence.df"
hold eight 8 0 || notok "attach: eight uploads begun and held"
check "attach: 8 uploads in progress: a ninth is refused" \
    attach_refused "$B: ninth: 8 uploads in progress, at most 8 at once$" \
    -n ninth "$B" "$T/later"
unhold
check "attach: the eight gone, the ninth is taken" attach_soon ninth

# One user holds at most two of them (root any): another user, let in
# by the read-write socket's group, cannot take all eight.
chgrp 73190 "$SOCK"
HOLD_AS="setpriv --reuid 73191 --regid 73190 --clear-groups"
hold mine 2 0 || notok "attach: a user's two uploads begun and held"
check "attach: a user's two in progress: its third is refused" \
    sh -c "setpriv --reuid 73191 --regid 73190 --clear-groups \
    '$O/factoryctl' -s '$SOCK' attach -n third '$B' /etc/passwd 2>&1 |
    grep -q ': third: user 73191 has 2 uploads in progress, at most 2 at once\$'"
check "attach: meanwhile root attaches" attach_soon rootwhile
unhold
HOLD_AS=""
rm -f "$T/evidence.df"
check "attach: no upload left an unnamed file open" tmpfiles_gone
check "attach: of the held uploads, no file is kept" \
    test "$(ls -A "$T/state/evidence/$B" | sort | tr '\n' ' ')" = \
    "dropped fourth ninth rootwhile screenshot "
# An ended attempt takes evidence too, at most 16 files of it; a text
# is text, other bytes data.
i=1
while [ $i -le 15 ]; do
	echo "note $i: ok" >"$T/note-$i"
	ctl attach "$A" "$T/note-$i" >/dev/null || notok "attach note-$i to A"
	i=$((i + 1))
done
printf '\001\377' >"$T/bin"
check "attach: a sixteenth file to the ended A" ctl attach "$A" "$T/bin"
check "show: A's notes are text, the other data, all 16 listed" \
    jq -en --argjson o "$(ctl -j show "$A")" '($o.evidence | length) == 16
    and ([$o.evidence[] | select(.name | startswith("note-")) | .type] |
    unique) == ["text"] and ($o.evidence[] | select(.name == "bin") |
    .type) == "data"'
check "attach: a seventeenth file is refused" \
    attach_refused "$A: 16 files attached already, at most 16$" -n more \
    "$A" "$T/bin"
sed 's/^/# /' "$T/attach.log"
chrome "$URLB" "$T/dom2"
check "chromium, the same token URL again: no page" \
    not grep -q hello-preview "$T/dom2"
get "$URLB" -c "$T/jarB2" >/dev/null
URLB=$(ctl preview "$B") || fail "no preview URL for B"
get "$URLB" -c "$T/jarB2" >/dev/null
get "$(site "$B" /stop)" -b "$T/jarB2" >/dev/null
wait_terminated "$B" 120 || fail "B did not end"
check "A published" test "$(field "$A" state)" = published

# A service's preview: the agent's services' namespace, its port.
write_manifest "$T/svc.yaml" "while [ ! -e /tmp/never ]; do sleep 1; done" true "services:
  web:
    run: [\"/bin/sh\", \"-c\", \"echo hello-preview >index.html && exec /usr/bin/python3 -m http.server 3000 --bind 127.0.0.1\"]
    ready: [\"/usr/bin/curl\", \"-sf\", \"http://127.0.0.1:3000/\"]
    ports: [3000]
preview: {port: 3000, service: web}"
sed -i 's/^limits: {wall: 20s,/limits: {wall: 120s,/' "$T/svc.yaml"
C=$(ctl submit "$T/svc.yaml") || fail "submit C"
wait_state "$C" running 120 || fail "C never ran"
URLC=$(ctl preview "$C") || fail "no preview URL for C"
get "$URLC" -c "$T/jarC" >/dev/null
check "a service's preview: its page through the cookie" \
    sh -c "[ \"\$(curl -s --resolve $C.$DOM:$PORT:127.0.0.1 -b '$T/jarC' \
    '$(site "$C" /)')\" = hello-preview ]"
check "show says the preview is the service's, and live" \
    jq -en --argjson o "$(ctl -j show "$C")" \
    '$o.preview.service == "web" and $o.preview.live'
ctl cancel "$C" >/dev/null
wait_terminated "$C" 120 || fail "C did not end"
check "cancelled: the service's preview is gone" \
    test "$(get "$(site "$C" /)" -b "$T/jarC")" = 404

# A service's preview outlives the agent: through verification and
# while the attempt waits for approval, and not after it published.
write_manifest "$T/keep.yaml" "echo x >src/x" true "services:
  web:
    run: [\"/bin/sh\", \"-c\", \"echo hello-preview >index.html && exec /usr/bin/python3 -m http.server 3000 --bind 127.0.0.1\"]
    ready: [\"/usr/bin/curl\", \"-sf\", \"http://127.0.0.1:3000/\"]
    ports: [3000]
preview: {port: 3000, service: web}
approval: manual"
K=$(ctl submit "$T/keep.yaml") || fail "submit K"
wait_state "$K" verified 120 || fail "K was not verified"
URLK=$(ctl preview "$K") || fail "no preview URL for K"
get "$URLK" -c "$T/jarK" >/dev/null
check "waiting for approval, the agent gone: the service's preview answers" \
    sh -c "[ \"\$(curl -s --resolve $K.$DOM:$PORT:127.0.0.1 -b '$T/jarK' \
    '$(site "$K" /)')\" = hello-preview ]"
check "show: the preview is live while it waits" \
    jq -en --argjson o "$(ctl -j show "$K")" '$o.preview.live'
ctl approve "$K" >/dev/null || fail "approve K"
wait_terminated "$K" 120 || fail "K did not end"
check "published: the preview is gone" \
    test "$(get "$(site "$K" /)" -b "$T/jarK")" = 404
check "K published" test "$(field "$K" state)" = published
check "no process of the attempt uids is left" \
    test "$(cat /proc/[0-9]*/status 2>/dev/null | awk '/^Uid:/ && $2 >= 73110 && $2 <= 73139' | wc -l)" -eq 0

# approve -k: the service's preview is kept for review past the
# approval and the publication, until its keep ends; then it goes, and
# the attempt's teardown with it.
KK=$(ctl submit "$T/keep.yaml") || fail "submit KK"
wait_state "$KK" verified 120 || fail "KK was not verified"
URLKK=$(ctl preview "$KK") || fail "no preview URL for KK"
get "$URLKK" -c "$T/jarKK" >/dev/null
OUTK=$(ctl approve -k 8s "$KK" 2>&1)
check "approve -k: approved, saying until when it is kept" \
    sh -c "echo '$OUTK' | grep -q 'approved, its preview kept until 20'"
wait_field "$KK" state published 120 || fail "KK did not publish"
check "published, kept: the service's preview still answers" \
    sh -c "[ \"\$(curl -s --resolve $KK.$DOM:$PORT:127.0.0.1 -b '$T/jarKK' \
    '$(site "$KK" /)')\" = hello-preview ]"
check "published, kept: show says until when, not torn down yet" \
    jq -en --argjson o "$(ctl -j show "$KK")" '$o.preview.live and
    $o.preview.kept_until > 0 and ($o.terminated | not)'
check "the receipts record who kept it until when" \
    sh -c "\"$O/factoryctl\" -s '$SOCK' receipts $KK | grep '\"kind\":\"preview-kept\"' | grep -q '\"until\"'"
wait_terminated "$KK" 120 || fail "KK was not torn down after its keep"
check "its keep over: the preview is gone" \
    test "$(get "$(site "$KK" /)" -b "$T/jarKK")" = 404
check "its keep over: no process of the attempt uids is left" \
    test "$(cat /proc/[0-9]*/status 2>/dev/null | awk '/^Uid:/ && $2 >= 73110 && $2 <= 73139' | wc -l)" -eq 0
check "approve -k of an attempt that is not verified is refused" \
    not ctl approve -k 1m "$KK"

# A keep is ended early by cancel: the publication stands, the preview
# and the services kept for it go, and the teardown that waited goes on.
KC=$(ctl submit "$T/keep.yaml") || fail "submit KC"
wait_state "$KC" verified 120 || fail "KC was not verified"
ctl approve -k 1h "$KC" >/dev/null || fail "approve -k KC"
wait_field "$KC" state published 120 || fail "KC did not publish"
check "kept for an hour: not torn down" \
    jq -en --argjson o "$(ctl -j show "$KC")" '$o.preview.live and
    ($o.terminated | not)'
URLKC=$(ctl preview "$KC") || fail "no preview URL for KC"
get "$URLKC" -c "$T/jarKC" >/dev/null
check "kept: the service's preview answers" \
    sh -c "[ \"\$(curl -s --resolve $KC.$DOM:$PORT:127.0.0.1 -b '$T/jarKC' \
    '$(site "$KC" /)')\" = hello-preview ]"
OUTC=$(ctl cancel "$KC" 2>&1)
check "cancel of a kept attempt ends its keep, says so ($OUTC)" \
    sh -c "echo '$OUTC' | grep -q ': its keep for review ended; published\$'"
check "its keep ended: torn down long before the hour" \
    wait_terminated "$KC" 120
check "its keep ended: still published" \
    test "$(field "$KC" state)" = published
check "its keep ended: the preview is gone" \
    test "$(get "$(site "$KC" /)" -b "$T/jarKC")" = 404
check "its keep ended: no process of the attempt uids is left" \
    test "$(cat /proc/[0-9]*/status 2>/dev/null | awk '/^Uid:/ && $2 >= 73110 && $2 <= 73139' | wc -l)" -eq 0
check "a second cancel is refused: it is published" \
    not ctl cancel "$KC"

# The evidence is in the receipts: a restart rebuilds what show lists.
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
check "after a restart: show lists B's screenshot by the same digest" \
    jq -en --argjson o "$(ctl -j show "$B")" --arg s "$SHOT" \
    '[$o.evidence[] | select(.name == "screenshot" and .sha256 == $s and
    .type == "png")] | length == 1'
check "after a restart: A's 16 files, and no seventeenth" \
    sh -c "[ \"\$('$O/factoryctl' -s '$SOCK' -j show $A | jq '.evidence | length')\" = 16 ] &&
    ! '$O/factoryctl' -s '$SOCK' attach -n more $A '$T/bin' 2>/dev/null"

# A lying factory-preview (prog_badchild in its place): an OPENED of a
# token the parent never minted, a HEALTH out of range.  Each gets it
# killed, by name and reason, and the parent goes on.
stop_factoryd
for mode in preview-opened:"OPENED a-20261207-0001: no such token minted" \
    preview-health:"PREVIEW_HEALTH: a field out of range"; do
	d=$T/bad.${mode%%:*}
	mkdir -p "$d"
	for b in "$O"/factory-*; do
		ln -sf "$b" "$d/$(basename "$b")"
	done
	rm -f "$d/factory-preview"
	cp "$O/regress/daemon/prog_badchild" "$d/factory-preview"
	echo "${mode%%:*}" >"$d/factory-preview.mode"
	chmod 755 "$d"
	sed -i "s|^libexec: .*|libexec: $d|" "$T/factoryd.conf"
	: >"$T/log"
	start_factoryd "$T/factoryd.conf" "$T/log"
	i=0
	while [ $i -lt 100 ] && ! grep -q 'preview (pid [0-9]*): .*killing it' "$T/log"; do
		sleep 0.1
		i=$((i + 1))
	done
	check "a lying preview (${mode%%:*}) is killed: ${mode#*:}" \
	    sh -c "grep 'preview (pid [0-9]*): .*killing it' '$T/log' | grep -qF '${mode#*:}'"
	check "the parent goes on after a lying preview (${mode%%:*})" \
	    ctl status
	stop_factoryd
done
regress_done
