#!/bin/sh
# The real factoryd, in the foreground, from a temp config: six
# processes under their own uids and policies; restarts; a hostile
# child and a hostile control client; reloads; a clean SIGTERM.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
UIDS="61001 61002 61003 61004"
write_conf() {	# libexec
	cat >"$T/factoryd.conf" <<CONF
socket: $SOCK
state-dir: $T/state
libexec: $1
verifiers: 1
keys:
  receipts: $T/keys/receipt.key
  verifier: $T/keys/verifier.key
users:
  worker: 61001
  verifier: 61002
  reconciler: 61003
  publisher: 61004
  egress: 61005
  image: 61006
  gateway: 61007
CONF
}
write_conf "$O"
start_factoryd "$T/factoryd.conf" "$T/log"

status() { "$O/factoryctl" -s "$SOCK" -j status; }
child_pid() { status | jq -r ".processes[] | select(.name==\"$1\") | .pid"; }
wait_running() {	# name [not-pid]
	i=0
	while [ $i -lt 100 ]; do
		p=$(status | jq -r ".processes[] | select(.name==\"$1\" and .state==\"running\") | .pid")
		if [ -n "$p" ] && [ "$p" != 0 ] && [ "$p" != "${2:-}" ]; then
			echo "$p"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

for n in worker verifier reconciler publisher egress image gateway; do
	wait_running $n >/dev/null || fail "$n never became running"
done

n=$(status | jq '[.processes[] | select(.state=="running")] | length')
check "eight processes run" [ "$n" = 8 ]

uids=""
for n in worker verifier reconciler publisher egress image gateway; do
	p=$(child_pid $n)
	u=$(awk '/^Uid:/ {print $2" "$3" "$4" "$5}' /proc/$p/status)
	g=$(awk '/^Groups:/ {print $2}' /proc/$p/status)
	set -- $u
	check "$n runs as its own non-root uid ($1)" \
	    [ "$1" != 0 ] && [ "$1" = "$2" ] && [ "$1" = "$3" ] && [ "$1" = "$4" ]
	check "$n has no supplementary groups" [ -z "$g" ]
	uids="$uids $1"
	check "$n: Seccomp 2" grep -q '^Seccomp:[[:space:]]*2' /proc/$p/status
	check "$n: NoNewPrivs 1" grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$p/status
	check "$n: title" grep -q "$n" /proc/$p/cmdline
	fds=$(ls /proc/$p/fd | sort -n | tr '\n' ' ')
	check "$n: only fds 0-3 and its own event fds" \
	    sh -c "ls -l /proc/$p/fd | grep -q 'socket:' && [ \$(ls -l /proc/$p/fd | grep -c 'socket:') = 1 ]"
done
check "parent: Seccomp 2 (its denylist)" \
    grep -q '^Seccomp:[[:space:]]*2' /proc/$FACTORYD_PID/status
distinct=$(echo $uids | tr ' ' '\n' | sort -u | wc -l)
check "seven distinct child uids" [ "$distinct" = 7 ]

# Star topology: each child's only socket is its channel to the parent.
ppid=$FACTORYD_PID
for n in worker verifier reconciler publisher egress image gateway; do
	p=$(child_pid $n)
	ino=$(ls -l /proc/$p/fd | sed -n 's/.*socket:\[\([0-9]*\)\].*/\1/p')
	check "$n's channel peers with the parent only" \
	    sh -c "ss -xpH | grep -w $ino | grep -q 'pid=$ppid,'"
done

"$O/factoryctl" -s "$SOCK" policy >"$T/policy"
check "policy shows the worker's applied promises" \
    grep -q 'promises: stdio rpath wpath cpath fattr flock recvfd' "$T/policy"
check "policy shows unveils" grep -q "unveil: $T/state/attempts rwc" "$T/policy"
check "policy shows the parent's denylist" \
    grep -q 'seccomp: denylist, [0-9]* syscalls refused with EPERM' "$T/policy"
check "policy shows landlock and seccomp" \
    sh -c "grep -q 'landlock: abi' '$T/policy' && grep -q 'seccomp: default kill-process' '$T/policy'"
check "status by prefix" "$O/factoryctl" -s "$SOCK" stat

# A child started by hand refuses to run.
"$O/factory-worker" >"$T/byhand" 2>&1 </dev/null
st=$?
check "worker started by hand refuses (exit $st)" \
    sh -c "[ $st -ne 0 ] && grep -q 'not started by factoryd' '$T/byhand'"

# Kill the worker: it comes back with a new pid.
old=$(child_pid worker)
kill -KILL "$old"
new=$(wait_running worker "$old")
check "worker restarted after SIGKILL ($old -> $new)" [ -n "$new" ]
r=$(status | jq '.processes[] | select(.name=="worker") | .restarts')
check "worker restart counted" [ "$r" -ge 1 ]

# A malformed control request closes that client only.
out=$("$O/regress/daemon/prog_badchild" ctl "$SOCK")
check "garbage on the control socket closes the client" [ "$out" = closed ]
check "parent still answers after garbage" status

# Read-only socket: reads yes, writes refused.
"$O/factoryctl" -s "$SOCK.ro" reload >/dev/null 2>&1
check "reload on the .ro socket refused (exit 1)" [ $? = 1 ]
check "status on the .ro socket" "$O/factoryctl" -s "$SOCK.ro" status
check "sockets have modes 0660 and 0666" \
    sh -c "[ \$(stat -c %a '$SOCK') = 660 ] && [ \$(stat -c %a '$SOCK.ro') = 666 ]"
if command -v setpriv >/dev/null; then
	check "a non-root user reads status through the .ro socket" \
	    setpriv --reuid 65534 --regid 65534 --clear-groups "$O/factoryctl" -s "$SOCK" status
	setpriv --reuid 65534 --regid 65534 --clear-groups "$O/factoryctl" -s "$SOCK" reload >/dev/null 2>&1
	check "a non-root user cannot reload (exit 2)" [ $? = 2 ]
fi

# Hostile children: each is killed and restarted, the parent lives on.
# PROC:MODE:TEXT: the child PROC (prog_badchild in MODE) sends one
# malformed message; the log must say it killed PROC and why, TEXT.
cat >"$T/badmodes" <<'MODES'
worker:type:unexpected imsg type 9999
worker:huge:malformed imsg
worker:hello2:a second HELLO
worker:hello-raw:HELLO: a line is not escaped
worker:resolve-both:RESOLVE (answer): not exactly one of oid and error
worker:resolve-missing:RESOLVE (answer): field req: truncated
worker:ready-missing:READY: field epoch: truncated
worker:ready-extra:READY: 1 bytes left over
worker:ready-kind:READY: kind 5 on the wire
worker:ready-trailing:READY: 5 bytes left over
worker:ready-nul:READY: field id: NUL in the string
worker:ready-overlong:READY: field id: longer than
worker:result-raw-path:RESULT: field rejects: not of its kind
worker:result-hidden-reject:RESULT: rejects counted, none listed
worker:result-utf8:RESULT: field rejects: not of its kind
worker:error-missing:ERROR: field id: truncated
worker:error-unescaped:ERROR: field error: not of its kind
worker:heartbeat-payload:HEARTBEAT: 3 bytes of payload
verifier:error-missing:ERROR: field id: truncated
publisher:error-unescaped:ERROR: field error: not of its kind
verifier:validate-missing:VALIDATE_REQ: field id: truncated
verifier:verdict-type:VERDICT: field receipt: longer than
publisher:published-missing:PUBLISHED: field record: truncated
publisher:published-escape:PUBLISHED: field branch: not of its kind
publisher:published-bool:PUBLISHED: field reused: not a boolean
MODES
# The real binary of a child is back and running.
wait_real() {	# name
	i=0
	while [ $i -lt 100 ]; do
		p=$(status | jq -r ".processes[] | select(.name==\"$1\" and .state==\"running\") | .pid")
		[ -n "$p" ] && [ "$p" != 0 ] &&
		    [ "$(readlink /proc/$p/exe 2>/dev/null)" = "$O/factory-$1" ] &&
		    return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
n=0
while IFS=: read -r proc mode text; do
	n=$((n + 1))
	d=$T/badexec$n
	mkdir -p "$d"
	for b in factory-worker factory-verifier factory-reconciler factory-publisher factory-sandbox factory-egress factory-image factory-gateway factory-fswalk; do
		ln -s "$O/$b" "$d/$b"
	done
	rm "$d/factory-$proc"
	cp "$O/regress/daemon/prog_badchild" "$d/factory-$proc"
	echo "$mode" >"$d/factory-$proc.mode"
	chmod 755 "$T" "$d"
	before=$(($(wc -l <"$T/log") + 1))
	write_conf "$d"
	"$O/factoryctl" -s "$SOCK" reload >/dev/null
	i=0
	while [ $i -lt 100 ] && ! tail -n +$before "$T/log" |
	    grep -q "^.*$proc (pid [0-9]*): .*killing it"; do
		sleep 0.1; i=$((i + 1))
	done
	line=$(tail -n +$before "$T/log" | grep "$proc (pid [0-9]*): .*killing it" | head -1)
	check "hostile $proc ($mode) is killed: $line" \
	    sh -c 'printf "%s\n" "$1" | grep -qF -- "$2"' sh "$line" "$text"
	i=0
	while [ $i -lt 50 ] && ! tail -n +$before "$T/log" |
	    grep -q "$proc: restarting in"; do
		sleep 0.1; i=$((i + 1))
	done
	check "hostile $proc ($mode) is restarted" \
	    sh -c "tail -n +$before '$T/log' | grep -q '$proc: restarting in'"
	check "parent survives a hostile $proc ($mode)" status
	write_conf "$O"
	"$O/factoryctl" -s "$SOCK" reload >/dev/null
	wait_real "$proc" || notok "$proc did not come back after $mode"
done <"$T/badmodes"
# A broken parent: each real child exits 1 on a malformed request,
# saying what was wrong (prog_badparent plays the parent).
while IFS=: read -r bin mode text; do
	out=$("$O/regress/daemon/prog_badparent" "$O/factory-$bin" "$mode" \
	    -V state="$T/state" -V verifier_key="$T/keys/verifier.key" 2>&1)
	check "$bin exits 1 on a malformed $mode from its parent" \
	    sh -c 'printf "%s\n" "$1" | grep -qx "exit 1" &&
	    printf "%s\n" "$1" | grep -qF -- "$2"' sh "$out" "$text"
done <<'MODES'
worker:resolve-missing:from the parent: RESOLVE: field ref: truncated
worker:resolve-trailing:from the parent: RESOLVE: 2 bytes left over
worker:provision-kind:from the parent: PROVISION: kind 3 on the wire
worker:collect-extra:from the parent: COLLECT: 1 bytes left over
verifier:verify-nul:from the parent: VERIFY: field id: NUL in the string
verifier:verify-overlong:from the parent: VERIFY: field id: longer than
verifier:validate-done-early:validation result for nothing we asked
publisher:publish-github:from the parent: PUBLISH: github settings for forge github
egress:listen-nofd:EGRESS_LISTEN a-1: no descriptor
egress:listen-trailing:EGRESS_LISTEN a-1: 1 trailing bytes
egress:listen-kind:EGRESS_LISTEN a-1: bad kind
egress:listen-name:EGRESS_LISTEN a-1: bad host
egress:close-id:EGRESS_CLOSE: bad attempt id
egress:egress-resolve:unexpected imsg
MODES

# A broken config on reload keeps the old one.
echo "sokcet: [" >"$T/factoryd.conf"
out=$("$O/factoryctl" -s "$SOCK" reload 2>&1)
st=$?
check "broken reload refused (exit $st)" sh -c "[ $st = 1 ] && echo '$out' | grep -q 'old configuration kept'"
check "broken reload logged" grep -q 'reload failed, keeping the old configuration' "$T/log"
check "still eight processes running" \
    sh -c "[ \$('$O/factoryctl' -s '$SOCK' -j status | jq '[.processes[] | select(.state==\"running\")] | length') = 8 ]"
kill -HUP "$FACTORYD_PID"
sleep 0.2
check "SIGHUP with a broken config keeps running" status

# SIGTERM: nothing left behind.
pids=$(status | jq -r '.processes[].pid')
stop_factoryd
for p in $pids; do
	check "pid $p gone after SIGTERM" sh -c "! kill -0 $p 2>/dev/null"
done
check "no socket left" sh -c "[ ! -e '$SOCK' ] && [ ! -e '$SOCK.ro' ]"
tag=$(printf %s "$(realpath "$T/state")" | sha256sum | cut -c1-8)
check "no cgroup directory of this daemon left (factory/$tag)" \
    sh -c "! ls -d /sys/fs/cgroup/*/factory/$tag 2>/dev/null | grep -q ."
left=""
for u in $UIDS; do
	left="$left$(uid_procs $u)"
done
check "no process of a child uid left" [ -z "$left" ]

# The children are started from binaries the parent opened at start:
# a build inside a 0700 directory (a clone under /root) still runs,
# although the children cannot traverse the path to their binaries.
PRIV=$T/priv
mkdir -p "$PRIV/build" "$T/p-keys"
for b in factoryd factory-worker factory-verifier factory-reconciler \
    factory-publisher factory-sandbox factory-egress factory-image factory-gateway factory-fswalk \
    factoryctl; do
	cp "$O/$b" "$PRIV/build/$b" || fail "copy $b"
done
chmod 700 "$PRIV"
SOCK=$T/p.sock
cat >"$T/p.conf" <<CONF
socket: $SOCK
state-dir: $T/p-state
libexec: $PRIV/build
verifiers: 1
keys:
  receipts: $T/p-keys/receipt.key
  verifier: $T/p-keys/verifier.key
users:
  worker: 61001
  verifier: 61002
  reconciler: 61003
  publisher: 61004
  egress: 61005
  image: 61006
  gateway: 61007
CONF
OUT_O=$O
O=$PRIV/build start_factoryd "$T/p.conf" "$T/p.log"
O=$OUT_O
check "a build in a 0700 directory: every child runs" wait_children "$SOCK"
n=$(status | jq '[.processes[] | select(.state=="running")] | length')
check "a build in a 0700 directory: eight processes run ($n)" [ "$n" = 8 ]
check "a build in a 0700 directory: no exec failure logged" \
    sh -c "! grep -q 'exec .*Permission denied' '$T/p.log'"
# A reload naming a libexec whose worker is group writable is refused.
mkdir "$PRIV/gw"
for x in factory-worker factory-verifier factory-reconciler factory-publisher factory-sandbox factory-egress factory-image factory-gateway factory-fswalk; do
	cp "$O/$x" "$PRIV/gw/$x"
done
chmod 775 "$PRIV/gw/factory-worker"
cp "$T/p.conf" "$T/p.conf.good"
sed -i "s|^libexec: .*|libexec: $PRIV/gw|" "$T/p.conf"
out=$("$O/factoryctl" -s "$SOCK" reload 2>&1)
check "a reload to a group-writable worker is refused" \
    grep -q "reload failed.*$PRIV/gw/factory-worker: group or other writable" "$T/p.log"
n=$(status | jq '[.processes[] | select(.state=="running")] | length')
check "after the refused reload, eight processes still run ($n)" [ "$n" = 8 ]
cp "$T/p.conf.good" "$T/p.conf"
stop_factoryd

# A child binary that someone other than root could change is refused
# at start, naming the file; nothing is started.
badbin() {	# name setup-command...
	local name=$1 b=$PRIV/bad/${BADBIN:-factory-worker}
	shift
	rm -rf "$PRIV/bad"
	mkdir "$PRIV/bad"
	for x in factory-worker factory-verifier factory-reconciler \
	    factory-publisher factory-sandbox factory-egress factory-image factory-gateway factory-fswalk; do
		cp "$O/$x" "$PRIV/bad/$x"
	done
	"$@" "$b"
	sed "s|^libexec: .*|libexec: $PRIV/bad|" "$T/p.conf" >"$T/bad.conf"
	: >"$T/bad.log"
	timeout 10 "$O/factoryd" -d -f "$T/bad.conf" 2>"$T/bad.log"
	st=$?
	if [ "$st" != 0 ] && [ "$st" != 124 ] && grep -qF "$b" "$T/bad.log" &&
	    grep -q "$BADMSG" "$T/bad.log"; then
		ok "a $name child binary stops factoryd ($(tail -n 1 "$T/bad.log"))"
	else
		notok "a $name child binary stops factoryd: exit $st: $(tail -n 2 "$T/bad.log" | tr '\n' ' ')"
	fi
	check "a $name child binary: no socket left" [ ! -e "$SOCK" ]
}
BADMSG="group or other writable" badbin group-writable chmod 775
BADMSG="group or other writable" badbin other-writable chmod 757
BADMSG="not owned by root" badbin non-root-owned chown 61001:0
BADMSG="not a regular file" badbin directory sh -c 'rm "$1"; mkdir "$1"' sh
BADMSG="No such file" badbin missing rm
BADMSG="not owned by root" badbin symlinked-non-root sh -c \
    'cp "$1" "$1.real"; chown 61001 "$1.real"; rm "$1"; ln -s "$1.real" "$1"' sh
# The sandbox launcher, pid 1 of every sandbox, likewise.
BADBIN=factory-sandbox BADMSG="group or other writable" \
    badbin "group-writable launcher" chmod 775
BADBIN=factory-sandbox BADMSG="not owned by root" \
    badbin "non-root-owned launcher" chown 61001:0
BADBIN=factory-sandbox BADMSG="No such file" badbin "missing launcher" rm
left=""
for u in $UIDS; do
	left="$left$(uid_procs $u)"
done
check "no process of a child uid left after the refusals" [ -z "$left" ]

# SIGTERM ends and reaps every child by pid before factoryd exits: the
# roles, the zygote and the launchers of the pool.  factoryd runs below
# a child subreaper standing for init (or for systemd, which SIGKILLs
# what the unit's main process left): anything factoryd leaves, dead
# and not reaped or still running, becomes the subreaper's child.
# Children are found by parent pid and start time, never by name.
children_of() {	# pid: "pid:starttime" of each of its children
	local s l
	for s in /proc/[0-9]*/stat; do
		l=$(cat "$s" 2>/dev/null) || continue
		echo "${s#/proc/} ${l##*) }"
	done | awk -v p="$1" '$3 == p { sub("/stat", "", $1); print $1 ":" $21 }'
}
starttime() {	# pid
	local l
	l=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	echo "${l##*) }" | awk '{ print $20 }'
}
write_conf "$O"
"$O/regress/daemon/prog_subreap" "$T/sr.out" "$O/factoryd" -d -f \
    "$T/factoryd.conf" 2>>"$T/sr.log" &
SRPID=$!
wait_serving "$SOCK" $SRPID || notok "subreaped factoryd: children not up"
FPID=$(sed -n 's/^pid //p' "$T/sr.out")
kids=$(children_of "$FPID")
roles=$(status | jq '.processes | length')
check "factoryd (pid $FPID) has its pool too: $(echo $kids | wc -w) children, $roles roles" \
    [ "$(echo $kids | wc -w)" -gt "$roles" ]
kill -TERM "$FPID"
wait $SRPID
sed 's/^/# /' "$T/sr.out"
check "SIGTERM: factoryd exited 0" grep -qx "exit 0" "$T/sr.out"
check "SIGTERM: it left no process, running or unreaped, to init" \
    sh -c "! grep -q '^left' '$T/sr.out'"
for k in $kids; do
	p=${k%%:*}
	check "SIGTERM: child $p was ended and reaped by factoryd" \
	    sh -c "! grep -q '^left $p ' '$T/sr.out' &&
	    [ '$(starttime "$p")' != '${k#*:}' ]"
done

# A start-up error found after the sandbox probe filled the pool (the
# signing keys missing, checked after the kernel probes): factoryd
# exits EX_CONFIG (78) having ended its pool, leaving nothing for the
# service manager to kill.  Before the fix, its launchers and zygote
# were left to init.
sed "s|$T/keys/|$T/nokeys/|" "$T/factoryd.conf" >"$T/nokeys.conf"
"$O/regress/daemon/prog_subreap" "$T/sr-nokeys.out" "$O/factoryd" -d -f \
    "$T/nokeys.conf" 2>>"$T/sr-nokeys.log" &
wait $!
sed 's/^/# /' "$T/sr-nokeys.out"
check "keys missing: factoryd exits 78" grep -qx "exit $((78 << 8))" "$T/sr-nokeys.out"
check "keys missing: it says so" grep -q "keys: cannot start" "$T/sr-nokeys.log"
check "keys missing: the probe had filled the pool" \
    grep -q "pool [1-9]" "$T/sr-nokeys.log"
check "keys missing: it left no process, running or unreaped, to init" \
    sh -c "! grep -q '^left' '$T/sr-nokeys.out'"

# The same with an agent running: its sandbox's pid 1, a child of
# factoryd, is ended and reaped too, and no process of its uid is left.
R=$T/run
mkdir -p "$R"
make_repos "$R" 61004
write_attempt_conf "$R" 61000 61010-61013
SOCK=$R/factoryd.sock
"$O/regress/daemon/prog_subreap" "$R/sr.out" "$O/factoryd" -dk -f \
    "$R/factoryd.conf" 2>>"$R/log" &
SRPID=$!
wait_serving "$SOCK" $SRPID || notok "subreaped factoryd: children not up"
FPID=$(sed -n 's/^pid //p' "$R/sr.out")
write_manifest "$R/m.yaml" "sleep 300"
id=$(ctl submit "$R/m.yaml") && wait_state "$id" running 60 ||
    notok "an attempt running under the subreaped factoryd"
sb=$(field "$id" uid)
kids=$(children_of "$FPID")
kill -TERM "$FPID"
wait $SRPID
sed 's/^/# /' "$R/sr.out"
check "SIGTERM, an agent running: factoryd exited 0" grep -qx "exit 0" "$R/sr.out"
check "SIGTERM, an agent running: nothing left to init" \
    sh -c "! grep -q '^left' '$R/sr.out'"
for k in $kids; do
	p=${k%%:*}
	check "SIGTERM, an agent running: child $p ended and reaped" \
	    sh -c "! grep -q '^left $p ' '$R/sr.out' &&
	    [ '$(starttime "$p")' != '${k#*:}' ]"
done
check "SIGTERM, an agent running: no process of its uid $sb left" \
    [ -z "$(uid_procs "$sb")" ]
# Started again, it recovers the attempt and removes what it left.
start_factoryd "$R/factoryd.conf" "$R/log"
check "started again: the attempt ended and torn down" \
    wait_terminated "$id" 60
stop_factoryd
tag=$(printf %s "$(realpath "$R/state")" | sha256sum | cut -c1-8)
check "started again: no cgroup of that daemon left (factory/$tag)" \
    sh -c "! ls -d /sys/fs/cgroup/*/factory/$tag 2>/dev/null | grep -q ."

regress_done
