# Sourced by run.sh: a hostile reconciler (prog_badrec) under the real
# factoryd.  Each case starts a fresh daemon whose reconciler answers
# with one crafted inventory.  The parent must act only on what it
# derives itself from a well-formed attempt id or a pid it re-checked:
# paths, "..", absolute names, pid 1, a root process, another user's
# process, an uid outside attempt-uids touch nothing; a malformed
# inventory (cut short, a count larger than the message, a boolean
# not 0 or 1, trailing bytes, a NUL) gets the reconciler killed, and
# the log says why.  Messages are spelled as prog_badrec reads them
# (invtok.h: one token a line).

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

# inv: an inventory, each list empty unless I_DIRS, I_VDIRS, I_CG,
# I_PROCS or I_MOUNTS spell it (count and elements); I_SKIPPED and
# I_TRUNC are the last numbers' tokens.
inv() {
	printf '%s\n' "${I_DIRS:-n32 0}" "${I_VDIRS:-n32 0}" "${I_CG:-n32 0}" \
	    "${I_PROCS:-n32 0}" "${I_MOUNTS:-n32 0}" "n32 0" "n32 0" \
	    "${I_SKIPPED:-n64 0}" "n32 0" "${I_TRUNC:-n8 0}"
}
EMPTY=$(inv)

hctl() { "$O/factoryctl" -s "$HSOCK" "$@"; }

# hstart MSG: a fresh daemon whose reconciler will answer MSG.
hstart() {
	printf '%s\n' "$1" >"$H/badexec/factory-reconciler.msg"
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

# malformed NAME MSG [REAP-ID] [LOG-WORD]: killed, nothing touched.
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

malformed "dir ../../canary" "$(I_DIRS='n32 1
s ../../canary' inv)" ../../canary attempt_dirs
malformed "absolute verify dir" "$(I_VDIRS="n32 1
s $H/canary" inv)" "$H/canary" verify_dirs
malformed "dir with .. inside" "$(I_DIRS='n32 1
s a-20990101-0001/../../../canary' inv)" \
    a-20990101-0001/../../../canary attempt_dirs
malformed "cgroup as a path" "$(I_CG="n32 1
s $H/canary/a-20990101-0002
n8 0" inv)" a-20990101-0002 cgroups
malformed "cgroup id with .." "$(I_CG='n32 1
s ../../../canary
n8 0' inv)" ../../../canary cgroups
malformed "pid 1" "$(I_PROCS="n32 1
n32 1
n32 $AUID
s init" inv)" "" processes
malformed "uid outside attempt-uids" "$(I_PROCS="n32 1
n32 $ROOTPID
n32 0
s sleep" inv)" "pid:$ROOTPID" processes
# Binary has no member names: a member missing or extra is a message
# cut short or with bytes left over, a mistyped one a value out of its
# range.
malformed "cut short" "$(inv | sed '$d')" "" truncated
malformed "count larger than the message" "$(I_CG='n32 1000000' inv)" "" \
    cgroups
malformed "boolean not 0 or 1" "$(I_TRUNC='n8 2' inv)" "" truncated
malformed "skipped not a count" "$(I_SKIPPED='n64 0xffffffffffffffff' inv)" \
    "" skipped
malformed "a process in a message with bytes left over" "$(I_PROCS="n32 1
n32 $NOBODYPID
n32 $AUID
s x" inv)
s /etc" "pid:$NOBODYPID" "left over"
malformed "trailing bytes" "$EMPTY
x 00" "" "left over"
malformed "NUL in an id" "$(I_DIRS='n32 1
s a-20990101-0001\x00/../../canary' inv)" "" NUL

# A reconciler that dies instead of answering: factoryctl reconcile is
# told so, it does not wait forever.
canary
hstart "$EMPTY"
sleep 0.5
rm -f "$H/badexec/factory-reconciler.msg"	# it exits on the next request
timeout 20 "$O/factoryctl" -s "$HSOCK" reconcile >"$H/rec.out" 2>&1
st=$?
check "dying reconciler: factoryctl reconcile ends (exit $st, not 124)" \
    sh -c "[ $st != 124 ] && [ $st != 0 ]"
check "dying reconciler: factoryd answers" hctl status
hstop

# The reconciler's ERROR: one string and nothing else, its text logged
# escaped (esc.h), never raw: no terminal escape, no line of its own.
# Anything else gets the reconciler killed.
malformed "ERROR cut short" 'error
n32 5
x 6162' "" ERROR
malformed "ERROR with a NUL" 'error
s x\x00y' "" ERROR
malformed "ERROR bytes left over" 'error
s x
n32 1' "" ERROR
malformed "ERROR too long" "error
s $(printf '%02000d' 0)" "" ERROR
canary
hstart 'error
s evil\x1b[2J\x0afake: line \xc3\xbf'
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
	hstart "$(I_PROCS="n32 1
n32 $2
n32 $AUID
s sleep" inv)"
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
hstart "$(I_DIRS='n32 1
s a-20990101-0001' inv)"
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
	hstart "$(I_CG='n32 1
s a-20990101-0003
n8 0' inv)"
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
