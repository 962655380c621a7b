# Sourced by run.sh: a hostile reconciler (prog_badrec) under the real
# factoryd.  Each case starts a fresh daemon whose reconciler answers
# with one crafted inventory.  The parent must act only on what it
# derives itself from a well-formed attempt id or a pid it re-checked:
# paths, "..", absolute names, pid 1, a root process, another user's
# process, an uid outside attempt-uids touch nothing; a malformed
# inventory (missing, extra or mistyped member, trailing bytes, a NUL)
# gets the reconciler killed, and the log says why.

H=$T/hostile
HSOCK=$H/factoryd.sock
mkdir -p "$H/badexec"
: >"$H/log"
# Every child binary of the build (whatever their number), but the
# reconciler.
for b in "$O"/factory-*; do
	cp "$b" "$H/badexec/"
done
cp "$O/regress/reconciler/prog_badrec" "$H/badexec/factory-reconciler"
chmod 755 "$H" "$H/badexec"
sed -e "s|^socket: .*|socket: $HSOCK|" \
    -e "s|^state-dir: .*|state-dir: $H/state|" \
    -e "s|^libexec: .*|libexec: $H/badexec|" \
    "$T/factoryd.conf" >"$H/factoryd.conf"

# Victims: a root process, another user's process, a canary tree.
sleep 300 &
ROOTPID=$!
setpriv --reuid 65534 --regid 65534 --clear-groups sleep 300 &
NOBODYPID=$!
CGPID=""
CGD=""
hcleanup() {
	kill -KILL "$ROOTPID" "$NOBODYPID" $CGPID 2>/dev/null
	[ -n "$CGD" ] && rmdir "$CGD" 2>/dev/null
	cleanup
}
trap hcleanup EXIT

canary() {
	rm -rf "$H/canary"
	mkdir -p "$H/canary/a-20990101-0002"
	echo keep >"$H/canary/file"
}
canary_intact() {
	[ "$(cat "$H/canary/file" 2>/dev/null)" = keep ] &&
	    [ -z "$(ls -A "$H/canary/a-20990101-0002")" ]
}

EMPTY='{"attempt_dirs":[],"verify_dirs":[],"cgroups":[],"processes":[],"mounts":[],"branches":[],"pulls":[],"skipped":0,"errors":[],"truncated":false}'

hctl() { "$O/factoryctl" -s "$HSOCK" "$@"; }

# hstart JSON: a fresh daemon whose reconciler will answer JSON.
hstart() {
	printf '%s' "$1" >"$H/badexec/factory-reconciler.json"
	HMARK=$(($(wc -l <"$H/log" 2>/dev/null || echo 0) + 1))
	"$O/factoryd" -dk -f "$H/factoryd.conf" 2>>"$H/log" &
	FACTORYD_PID=$!
	i=0
	while [ ! -S "$HSOCK" ] && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
}
hlog() { tail -n +"$HMARK" "$H/log"; }
killed() {	# the reconciler was killed since hstart
	i=0
	while [ $i -lt 50 ]; do
		hlog | grep -q 'reconciler (pid [0-9]*): .*killing it' &&
		    return 0
		sleep 0.1; i=$((i + 1))
	done
	return 1
}
hstop() {
	stop_factoryd
	rm -f "$HSOCK" "$HSOCK.ro"
}

# malformed NAME JSON [REAP-ID] [LOG-WORD]: killed, nothing touched.
malformed() {
	canary
	hstart "$2"
	check "hostile reconciler ($1): killed" killed
	if [ -n "${4:-}" ]; then
		check "hostile reconciler ($1): the log names $4" \
		    sh -c "tail -n +$HMARK '$H/log' | grep 'reconciler' |
		    grep -q -- '$4'"
	fi
	if [ -n "${3:-}" ]; then
		hctl reap "$3" >/dev/null 2>&1
		check "hostile reconciler ($1): reap $3 refused" [ $? != 0 ]
	fi
	check "hostile reconciler ($1): nothing outside touched" canary_intact
	check "hostile reconciler ($1): victims alive" \
	    kill -0 "$ROOTPID" "$NOBODYPID"
	check "hostile reconciler ($1): factoryd answers" hctl status
	hstop
}

j() { printf '%s' "$EMPTY" | jq -c "$@"; }

malformed "dir ../../canary" "$(j '.attempt_dirs = ["../../canary"]')" \
    ../../canary attempt_dirs
malformed "absolute verify dir" "$(j --arg p "$H/canary" \
    '.verify_dirs = [$p]')" "$H/canary" verify_dirs
malformed "dir with .. inside" \
    "$(j '.attempt_dirs = ["a-20990101-0001/../../../canary"]')" \
    a-20990101-0001/../../../canary attempt_dirs
malformed "cgroup as a path" "$(j --arg p "$H/canary/a-20990101-0002" \
    '.cgroups = [$p]')" a-20990101-0002 cgroups
malformed "cgroup id with .." \
    "$(j '.cgroups = [{"id": "../../../canary", "validation": false}]')" \
    ../../../canary cgroups
malformed "pid 1" "$(j --argjson u "$AUID" \
    '.processes = [{"pid": 1, "uid": $u, "comm": "init"}]')" "" processes
malformed "uid outside attempt-uids" "$(j --argjson p "$ROOTPID" \
    '.processes = [{"pid": $p, "uid": 0, "comm": "sleep"}]')" \
    "pid:$ROOTPID" processes
malformed "missing member" "$(j 'del(.pulls)')" "" pulls
malformed "extra member" "$(j '.extra = 1')" "" extra
malformed "mistyped member" "$(j '.skipped = "0"')" "" skipped
malformed "extra member of a process" "$(j --argjson p "$NOBODYPID" \
    --argjson u "$AUID" '.processes = [{"pid": $p, "uid": $u,
    "comm": "x", "path": "/etc"}]')" "pid:$NOBODYPID" processes
malformed "trailing bytes" "$EMPTY {}" ""
malformed "NUL in an id" \
    "$(j '.attempt_dirs = ["a-20990101-0001\u0000/../../canary"]')"

# A reconciler that dies instead of answering: factoryctl reconcile is
# told so, it does not wait forever.
canary
hstart "$EMPTY"
sleep 0.5
rm -f "$H/badexec/factory-reconciler.json"	# it exits on the next request
timeout 20 "$O/factoryctl" -s "$HSOCK" reconcile >"$H/rec.out" 2>&1
st=$?
check "dying reconciler: factoryctl reconcile ends (exit $st, not 124)" \
    sh -c "[ $st != 124 ] && [ $st != 0 ]"
check "dying reconciler: factoryd answers" hctl status
hstop

# The reconciler's ERROR: {"error": a string} and nothing else, its
# text logged escaped (esc.h), never raw: no terminal escape, no line
# of its own.  Anything else gets the reconciler killed.
malformed "ERROR not an object" '!error ["x"]' "" ERROR
malformed "ERROR not a string" '!error {"error":7}' "" ERROR
malformed "ERROR extra member" '!error {"error":"x","at":1}' "" ERROR
malformed "ERROR too long" "!error {\"error\":\"$(printf '%02000d' 0)\"}" \
    "" ERROR
canary
hstart '!error {"error":"evil\u001b[2J\nfake: line \u00ff"}'
errlogged() {
	i=0
	while [ $i -lt 50 ]; do
		hlog | grep -qF 'reconciler: evil\x1b[2J\x0afake: line \xc3\xbf' &&
		    return 0
		sleep 0.1; i=$((i + 1))
	done
	return 1
}
check "reconciler ERROR: logged escaped" errlogged
check "reconciler ERROR: no line of its own" \
    sh -c "! tail -n +$HMARK '$H/log' | grep -q '^fake'"
check "reconciler ERROR: no raw escape byte" \
    sh -c "! tail -n +$HMARK '$H/log' | grep -q \"\$(printf '\\033')\""
check "reconciler ERROR: not killed" sh -c "! tail -n +$HMARK '$H/log' |
    grep -q 'reconciler (pid [0-9]*): .*killing it'"
check "reconciler ERROR: factoryd answers" hctl status
hstop

# well NAME PID: a well-formed lie about a process; not signalled.
lie() {
	canary
	hstart "$(j --argjson p "$2" --argjson u "$AUID" \
	    '.processes = [{"pid": $p, "uid": $u, "comm": "sleep"}]')"
	hctl reconcile >/dev/null 2>&1
	check "process lie ($1): listed as an orphan" \
	    sh -c "'$O/factoryctl' -s '$HSOCK' -j orphans |
	    jq -e '.orphans | any(.id == \"pid:$2\")'"
	hctl reap "pid:$2" >"$H/reap.out" 2>&1
	check "process lie ($1): the victim is alive" kill -0 "$2"
	check "process lie ($1): reap says it was not signalled" \
	    sh -c "grep -q 'NOT removed' '$H/reap.out' ||
	    grep -q 'not signalled' '$H/reap.out'"
	check "process lie ($1): the log says why" \
	    sh -c "tail -n +$HMARK '$H/log' | grep -q 'pid $2.*not signalled'"
	check "process lie ($1): the reconciler was not killed" \
	    sh -c "! tail -n +$HMARK '$H/log' | grep -q 'reconciler (pid'"
	hstop
}
lie "a root process" "$ROOTPID"
lie "another user's process" "$NOBODYPID"

# A well-formed id of no attempt: its own directory, and only that.
canary
mkdir -p "$H/state/attempts/a-20990101-0001/sub"
echo x >"$H/state/attempts/a-20990101-0001/sub/f"
hstart "$(j '.attempt_dirs = ["a-20990101-0001"]')"
hctl reconcile >/dev/null 2>&1
check "unknown id: an orphan dir at the parent's own path" \
    sh -c "'$O/factoryctl' -s '$HSOCK' -j orphans | jq -e --arg p \
    '$H/state/attempts/a-20990101-0001' '.orphans |
    any(.id == \"a-20990101-0001\" and .kind == \"dir\" and .what == \$p)'"
hctl reap a-20990101-0001 >/dev/null 2>&1
check "unknown id: reap removes that directory" \
    [ ! -e "$H/state/attempts/a-20990101-0001" ]
check "unknown id: nothing else touched" canary_intact
check "unknown id: the reconciler was not killed" \
    sh -c "! tail -n +$HMARK '$H/log' | grep -q 'reconciler (pid'"
hstop

# A well-formed id of no attempt in cgroups: the parent's own cgroup of
# that name, and only that, is killed and removed (by a timer, not a
# sleep: reap answers at once, the removal follows).
if [ -d /sys/fs/cgroup/unified ]; then
	canary
	hstart "$(j '.cgroups = [{"id": "a-20990101-0003",
	    "validation": false}]')"
	INST=$(printf %s "$(realpath "$H/state")" | sha256sum | cut -c1-8)
	CGD=/sys/fs/cgroup/unified/factory/$INST/a-20990101-0003
	mkdir "$CGD"
	sh -c "echo \$\$ >'$CGD/cgroup.procs' && exec sleep 300" &
	CGPID=$!
	sleep 0.2
	hctl reconcile >/dev/null 2>&1
	check "unknown cgroup: an orphan at the parent's own path" \
	    sh -c "'$O/factoryctl' -s '$HSOCK' -j orphans | jq -e --arg p \
	    '/factory/$INST/a-20990101-0003' '.orphans | any(.id ==
	    \"a-20990101-0003\" and .kind == \"cgroup\" and
	    (.what | endswith(\$p)))'"
	hctl reap a-20990101-0003 >/dev/null 2>&1
	i=0
	while { [ -d "$CGD" ] || kill -0 "$CGPID" 2>/dev/null; } &&
	    [ $i -lt 30 ]; do
		sleep 0.1; i=$((i + 1))
	done
	check "unknown cgroup: its process killed" \
	    sh -c "! kill -0 $CGPID 2>/dev/null"
	check "unknown cgroup: removed" [ ! -d "$CGD" ]
	check "unknown cgroup: the removal logged" \
	    sh -c "tail -n +$HMARK '$H/log' |
	    grep -q 'reap a-20990101-0003: cgroup .* removed'"
	check "unknown cgroup: the victims alive" \
	    kill -0 "$ROOTPID" "$NOBODYPID"
	hstop
fi
