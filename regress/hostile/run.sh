#!/bin/bash
# The isolation model of DESIGN.md, row by row, through the real daemon:
# hostile agents submitted with manifests like any other.  Each case
# asserts that the act was refused (the agent's own report in its log),
# that the attempt ended in the expected state with a reason, and that
# nothing outside the attempt changed.  Needs root.  O: the build dir.

[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hlib.sh"
trap hostile_cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "not ok - hostile: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "hostile: needs jq"

P=$O/regress/hostile
PROBE=$P/probe
h_setup

# Host services the agents must not reach, and a token and an fd the
# daemon holds that they must not find.
TOKEN=hostile-token-$$-$RANDOM
H_RUNSOCK=/run/factory-hostile.$$.sock
ABSTRACT=factory-hostile.$$
bg "$P/listen" "$ABSTRACT" "$H_RUNSOCK" >>"$T/listen.out"
i=0
while ! grep -q '^ready' "$T/listen.out" && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
PORT=$(awk '/^ready/ {print $2}' "$T/listen.out")
[ -n "$PORT" ] || fail "host listener did not start"
# Host sockets a /proc/net/unix parser misses: a name with a space,
# more than 512 of them, one bound in another network namespace.
NSOCKS=600
mkdir -p "$T/socks" "$T/nssocks"
bg "$P/socks" "$T/socks" $NSOCKS >>"$T/socks.out"
bg unshare -n "$P/socks" "$T/nssocks" 1 >>"$T/nssocks.out"
i=0
while ! { grep -q '^ready' "$T/socks.out" && grep -q '^ready' "$T/nssocks.out"; } &&
    [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
grep -q '^ready' "$T/socks.out" && grep -q '^ready' "$T/nssocks.out" ||
    fail "host socket listeners did not start"
echo "fd-secret-$TOKEN" >"$T/fdsecret"
chmod 600 "$T/fdsecret"
exec 7<"$T/fdsecret"
FACTORY_TOKEN=$TOKEN GITHUB_TOKEN=$TOKEN start_factoryd "$T/factoryd.conf" \
    "$T/log"
exec 7<&-
SNAP=$(snapshot 2>&1)

# --- credentials: the fds and environment the agent starts with -------

# The agent is the prober itself: what it sees is what execve gave it.
manifest fds "[\"$PROBE\", \"fds\"]" "" 'env: {LANG: C}'
id=$(submit fds) && wait_done "$id" || notok "fds: attempt did not end"
check "fds open at exec time are exactly 0 1 2" \
    grep -qx 'fds: 0 1 2' "$(logf "$id")"
check "environment is exactly the manifest's plus HOME and PATH" \
    grep -qx 'env: LANG HOME PATH' "$(logf "$id")"
state "$id" rejected "^tree: no change$" "an agent that changes nothing"
outside "fds" "$id"

# The control case: a good change publishes, and the validation run
# starts as bare as the agent.
manifest good "$(shjson 'echo more >>README.md')" "[\"$PROBE\", \"fds\"]"
id=$(submit good) && wait_done "$id" || notok "good: attempt did not end"
state "$id" published "" "a good change"
check "validation run: fds exactly 0 1 2" \
    grep -qx 'fds: 0 1 2' "$(logf "$id" validate)"
check "validation run: environment exactly HOME and PATH" \
    grep -qx 'env: HOME PATH' "$(logf "$id" validate)"
check "the good change is on the remote as factory/$id" \
    rgit rev-parse -q --verify "refs/heads/factory/$id"
check "one pull record for it" [ -f "$T/pulls/$id.json" ]
check "the remote has main and that branch, nothing else" [ "$(rgit \
    for-each-ref --format='%(refname)' | sort | tr '\n' ' ')" \
    = "refs/heads/factory/$id refs/heads/main " ]
check "no token of the daemon's environment or fd in any log" \
    sh -c "! grep -rq '$TOKEN' '$T/state/logs'"
SNAP=$(snapshot 2>&1)	# what publishing changed was expected
outside "good" "$id"

# --- one attempt, every refusal: filesystem, network, syscalls, tools ---

h_hostfile /home HOMEF && h_hostfile /srv SRVF && h_hostfile /opt OPTF ||
    fail "host files"

bg setpriv --reuid $H_UIDLO --regid $H_UIDLO --clear-groups sleep 300
HOSTSLEEP=$BGPID
sleep 0.1
script="
P=$PROBE
\$P read /etc/shadow $T/state/journal $T/keys/verifier.key \
    $T/keys/receipt.key $T/fdsecret $T/remote.git/config
\$P read $T/other.git/HEAD $T/other.git/config $T/other.git/packed-refs \
    ${OTHEROBJ:-$T/other.git/objects/none} ${OTHERPACK:-$T/other.git/none.pack} \
    $HOMEF $SRVF $OPTF $T/world-readable $T/factoryd.conf /var/lib/dpkg/status \
    /sys/kernel/notes
\$P write /etc/factory-hostile $T/repo.git/objects/factory-hostile \
    $T/repo.git/hooks/pre-receive $T/repo.git/config \
    $T/remote.git/hooks/post-receive $T/pulls/factory-hostile.json \
    $T/factory-hostile /var/tmp/factory-hostile
\$P link /etc/passwd src/passwd
\$P tcp 127.0.0.1 $PORT
\$P udp 127.0.0.1 $PORT
\$P resolve factory-hostile.example.org
\$P abstract $ABSTRACT
\$P unix $H_RUNSOCK
\$P unix $SOCK
\$P unix '$T/socks/a b.sock'
\$P unix $T/nssocks/s.0
\$P unixmany $T/socks $NSOCKS
\$P kill $FACTORYD_PID $HOSTSLEEP
\$P syscalls
\$P families
\$P written
\$P escape $T/state/journal
for a in tiocsti tioclinux; do
	for h in '' high; do
		\$P ioctl \$a \$h
		echo \"ioctl \$a\${h:+ \$h} exit: \$?\"
	done
done
/usr/sbin/nologin; echo \"exec /usr/sbin/nologin: \$?\"
cp /bin/true ./t && ./t; echo \"exec tree copy: \$?\"
cp /bin/true /tmp/t && /tmp/t; echo \"exec /tmp copy: \$?\"
cp /bin/true /dev/shm/t && /dev/shm/t; echo \"exec /dev/shm copy: \$?\"
exit 3"
manifest refusals "$(shjson "$script")"
id=$(submit refusals) && wait_done "$id" || notok "refusals: attempt did not end"
refused "$id" "read /etc/shadow" EACCES
refused "$id" "read $T/state/journal" ENOENT
refused "$id" "read $T/keys/verifier.key" ENOENT
refused "$id" "read $T/keys/receipt.key" ENOENT
refused "$id" "read $T/fdsecret" ENOENT
refused "$id" "read $T/remote.git/config" ENOENT
# The root is an allowlist: other repositories, the config, /home,
# /srv, /opt, /var, /sys are not in the agent's view at all.
for f in $T/other.git/HEAD $T/other.git/config $T/other.git/packed-refs \
    ${OTHEROBJ:-$T/other.git/objects/none} ${OTHERPACK:-$T/other.git/none.pack} \
    $HOMEF $SRVF $OPTF $T/world-readable $T/factoryd.conf /var/lib/dpkg/status \
    /sys/kernel/notes; do
	refused "$id" "read $f" ENOENT
done
refused "$id" "write /etc/factory-hostile" EROFS
refused "$id" "write $T/repo.git/objects/factory-hostile" EROFS
refused "$id" "write $T/repo.git/hooks/pre-receive" ENOENT
refused "$id" "write $T/repo.git/config" 'E(ROFS|ACCES)'
refused "$id" "write $T/remote.git/hooks/post-receive" ENOENT
refused "$id" "write $T/pulls/factory-hostile.json" 'E(ROFS|NOENT)'
refused "$id" "write $T/factory-hostile" EROFS
refused "$id" "write /var/tmp/factory-hostile" EROFS
refused "$id" "link /etc/passwd" 'E(XDEV|PERM|ACCES)'
refused "$id" "tcp 127.0.0.1:$PORT" 'E(NETUNREACH|ACCES)'
refused "$id" "udp 127.0.0.1:$PORT" 'E(NETUNREACH|ACCES)'
refused "$id" "resolve factory-hostile.example.org" 'EAI_[A-Z]+'
refused "$id" "abstract @$ABSTRACT" 'E(CONNREFUSED|PERM)'
refused "$id" "unix $H_RUNSOCK" 'E(NOENT|ACCES|CONNREFUSED)'
# The control socket is covered by /dev/null (or hidden with its dir).
refused "$id" "unix $SOCK" 'E(NOENT|CONNREFUSED)'
for f in "$T/socks/a b.sock" "$T/nssocks/s.0"; do
	refused "$id" "unix $f" ENOENT
done
refused "$id" "unix $T/socks/s.*" ENOENT
# The controls: from the host, each of them answers.
answers() {	# the probe exits 1 when what it tried went through
	! "$P/probe" "$@"
}
check "host side: the socket with a space answers" \
    answers unix "$T/socks/a b.sock"
check "host side: the socket of another netns answers" \
    answers unix "$T/nssocks/s.0"
check "host side: all $NSOCKS sockets answer" \
    answers unixmany "$T/socks" $NSOCKS
refused "$id" "kill $FACTORYD_PID" ESRCH
refused "$id" "kill $HOSTSLEEP" ESRCH
for s in "ptrace attach" "ptrace traceme" process_vm_readv bpf keyctl \
    add_key mount umount2 "unshare user" "unshare net" "clone newuser" \
    setns io_uring_setup perf_event_open userfaultfd name_to_handle_at \
    "personality addr_no_randomize" chroot; do
	refused "$id" "$s" EPERM
done
refused "$id" clone3 ENOSYS
# Socket families: an allowlist of unix, inet, inet6 and netlink route.
while read -r f; do
	case $f in
	netlink*)	refused "$id" "socket $f" EPROTONOSUPPORT ;;
	*)		refused "$id" "socket $f" EAFNOSUPPORT ;;
	esac
done <<EOF
$(sed -n 's/^\t{ "\([^"]*\)", .*/\1/p' "$(dirname "$0")/probe.c")
EOF
for f in vsock inet netlink "vsock high"; do
	refused "$id" "socketpair $f" EAFNOSUPPORT
done
for f in unix inet inet6 "netlink route"; do
	check "socket $f works (the allowlist)" \
	    grep -qx "socket $f: works" "$(logf "$id")"
done
check "socketpair unix works" grep -qx "socketpair unix: works" "$(logf "$id")"
# Bytes the agent wrote never run: not from a memfd, not from the tree,
# /tmp or /dev/shm, by path, by fd, through /proc/self/fd or ld.so.
refused "$id" "memfd_create MFD_EXEC" 'E(PERM|ACCES|INVAL)'
refused "$id" "exec memfd" EACCES
refused "$id" "fexecve memfd" EPERM
refused "$id" "execveat memfd" EPERM
refused "$id" "memfd fchmod 0755" EPERM
for w in tree /tmp /dev/shm; do
	refused "$id" "exec $w copy" EACCES
	refused "$id" "ld.so $w copy" "exit 127"
	refused "$id" "exec /proc/self/fd of $w copy" EACCES
	refused "$id" "fexecve $w copy" EPERM
	refused "$id" "execveat $w copy" EPERM
done
refused "$id" "fexecve /bin/true" EPERM
refused "$id" "execveat /bin/true" EPERM
refused "$id" "write /proc/self/exe" 'E(TXTBSY|ACCES|ROFS)'
refused "$id" "write /proc/1/exe" 'E(NOENT|ACCES)'
refused "$id" "readlink /proc/1/root" 'E(NOENT|ACCES)'
refused "$id" "read /proc/1/root$T/state/journal" 'E(NOENT|ACCES)'
refused "$id" "open /proc/1/cwd" 'E(NOENT|ACCES)'
refused "$id" "read /proc/self/root$T/state/journal" ENOENT
refused "$id" "open /proc/self/fd/3" ENOENT
check "no leaked directory fd leads out" \
    grep -qx 'leaked dir fds: none' "$(logf "$id")"
for a in tiocsti "tiocsti high" tioclinux "tioclinux high"; do
	# 159: 128 + SIGSYS, the filter's kill.
	check "ioctl $a kills the prober (exit 159)" \
	    sh -c "grep -qx 'ioctl $a exit: 159' '$(logf "$id")' &&
	    ! grep -qx 'ioctl $a: survived' '$(logf "$id")'"
done
check "exec of a binary outside exec: refused (126)" \
    grep -qx 'exec /usr/sbin/nologin: 126' "$(logf "$id")"
check "exec of a copy in the tree refused (126)" \
    grep -qx 'exec tree copy: 126' "$(logf "$id")"
check "exec of a copy in /tmp refused (126)" \
    grep -qx 'exec /tmp copy: 126' "$(logf "$id")"
check "exec of a copy in /dev/shm refused (126)" \
    grep -qx 'exec /dev/shm copy: 126' "$(logf "$id")"
state "$id" failed "^agent exited with status 3$" "refusals"
check "factoryd survived the agent" kill -0 "$FACTORYD_PID"
# The agent's kill was refused (above); teardown then clears the
# attempt's uid of every process, host ones included, by design.
kill "$HOSTSLEEP" 2>/dev/null
wait "$HOSTSLEEP" 2>/dev/null
outside "refusals" "$id"

# --- identity: another attempt's tree and processes; the kill switch ---

manifest victim "$(shjson "echo victim-secret >src/secret.c; exec $PROBE hang")"
victim=$(submit victim)
wait_log "$victim" '^hang: double-forked' || notok "victim: never started"
vuid=$(show "$victim" | jq .uid)
vpids=$(attempt_procs | tr ' ' '\n' | sed -n "s/:$vuid\$//p" | tr '\n' ' ')
vtree=$T/state/attempts/$victim/tree
check "victim runs 2 processes (uid $vuid: $vpids)" \
    [ "$(echo $vpids | wc -w)" = 2 ]
check "victim's file is in its tree on the host" [ -f "$vtree/src/secret.c" ]
# Its pid 1: the launcher binary, titled by the attempt, holding nothing
# of the parent's memory (the receipt signing key, say).
vpid1=""
for p in $(cat /sys/fs/cgroup/*/factory/*/"$victim"/cgroup.procs 2>/dev/null |
    sort -u); do
	grep -q '^NSpid:.*[[:space:]]1$' /proc/$p/status 2>/dev/null && vpid1=$p
done
check "victim's pid 1 found ($vpid1)" [ -n "$vpid1" ]
check "pid 1 runs factory-sandbox" \
    [ "$(readlink /proc/$vpid1/exe)" = "$(readlink -f "$O/factory-sandbox")" ]
check "pid 1's title names its attempt" \
    [ "$(tr '\0' ' ' </proc/$vpid1/cmdline)" = "factory-sandbox attempt $victim " ]
keyhex=$(openssl pkey -in "$T/keys/receipt.key" -outform DER 2>/dev/null |
    tail -c 32 | od -An -tx1 | tr -d ' \n')
check "the control: the parent's memory holds the receipt key" \
    [ "$("$P/memscan" "$FACTORYD_PID" "$keyhex")" = found ]
check "pid 1's memory does not hold the receipt key" \
    [ "$("$P/memscan" "$vpid1" "$keyhex")" = absent ]
script="
P=$PROBE
\$P read $vtree/src/secret.c
echo attempts visible: \$(ls $T/state/attempts)
\$P write $vtree/src/evil.c
\$P kill $vpids
echo visible uids: \$(stat -c %u /proc/[0-9]* | sort -u | tr '\\n' ' ')
exit 3"
manifest thief "$(shjson "$script")"
thief=$(submit thief) && wait_done "$thief" || notok "thief: did not end"
tuid=$(show "$thief" | jq .uid)
refused "$thief" "read $vtree/src/secret.c" ENOENT
check "thief sees no attempt dir but its own" \
    grep -qx "attempts visible: $thief" "$(logf "$thief")"
refused "$thief" "write $vtree/src/evil.c" ENOENT
for p in $vpids; do
	refused "$thief" "kill $p" ESRCH
done
check "thief sees only its own uid's processes" \
    grep -qx "visible uids: $tuid" "$(logf "$thief")"
state "$thief" failed "^agent exited with status 3$" "thief"
check "victim's processes survived the thief" kill -0 $vpids
check "victim's tree untouched" sh -c "[ ! -e '$vtree/src/evil.c' ] &&
    grep -qx victim-secret '$vtree/src/secret.c'"
ctl cancel "$victim" >/dev/null
wait_done "$victim" || notok "victim: not torn down after cancel"
state "$victim" cancelled "^cancelled by uid 0$" \
    "SIGTERM-ignoring double-forked setsid agent, cancelled"
left=""
for p in $vpids; do
	kill -0 "$p" 2>/dev/null && left="$left $p"
done
check "every process of the cancelled attempt is gone ($vpids)" [ -z "$left" ]
outside "identity and cancel" "$victim"

# --- time: sleep forever, and double-fork, past the wall deadline ------

manifest wall "[\"$PROBE\", \"hang\"]" "" 'limits: {wall: 2s}'
id=$(submit wall) && wait_done "$id" 20 || notok "wall: did not end"
check "wall: the agent was running and double-forked" \
    grep -qx 'hang: double-forked, sleeping' "$(logf "$id")"
state "$id" failed "^agent killed: wall time of 2000ms exceeded$" \
    "sleep forever past limits.wall"
outside "wall" "$id"

manifest busy "$(shjson 'while :; do :; done')" "" 'limits: {cpu: 1s, wall: 30s}'
id=$(submit busy) && wait_done "$id" 20 || notok "busy: did not end"
state "$id" failed "^agent killed: cpu limit of 1000ms$" \
    "busy loop past limits.cpu"
outside "busy loop" "$id"

# --- budgets: fork bomb, memory bomb, disk filler, log flood -----------

manifest forkbomb "[\"$PROBE\", \"forkbomb\"]" "" 'limits: {pids: 32}'
id=$(submit forkbomb) && wait_done "$id" || notok "forkbomb: did not end"
n=$(sed -n 's/^forkbomb: EAGAIN after \([0-9]*\)$/\1/p' "$(logf "$id")")
check "fork bomb refused by pids: 32 (EAGAIN after ${n:-?} forks)" \
    [ -n "$n" ] && [ "$n" -lt 32 ]
check "fork bomb: peak pids within the limit" \
    [ "$(show "$id" | jq .usage.pids)" -le 32 ]
state "$id" failed "^pids limit of 32: [0-9]+ forks? refused in the attempt; agent exited with status 3$" \
    "fork bomb"
outside "fork bomb" "$id"

manifest membomb "[\"$PROBE\", \"membomb\", \"2048\"]" "" 'limits: {memory: 64M}'
id=$(submit membomb) && wait_done "$id" || notok "membomb: did not end"
check "memory bomb stopped below 64 MB" sh -c "! grep -q 'membomb: ALLOWED' \
    '$(logf "$id")' && ! grep -qE 'membomb: (6[4-9]|[7-9][0-9]|[0-9]{3,}) MB' \
    '$(logf "$id")'"
state "$id" failed "^agent killed: memory limit of 67108864 bytes$" \
    "memory bomb"
outside "memory bomb" "$id"

# A child breaks the limit, the agent lives on and ends as it likes: the
# attempt ends by the limit that fired, whoever's process it was.
limit_said() {	# id limit: in show -j and in the exited receipt
	[ "$(show "$1" | jq -r .limit)" = "$2" ] && [ "$(ctl receipts "$1" |
	    jq -r 'select(.kind == "exited") | .facts.limit')" = "$2" ]
}
manifest childmem "[\"$PROBE\", \"childmem\", \"2048\"]" "" \
    'limits: {memory: 64M}'
id=$(submit childmem) && wait_done "$id" || notok "childmem: did not end"
check "memory bomb in a child: the child was killed" \
    grep -qx 'childmem: child killed by signal 9' "$(logf "$id")"
# (cgroup v2's memory.oom.group ends the agent too)
state "$id" failed "^(memory limit of 67108864 bytes: [0-9]+ OOM kills? in the attempt; agent exited with status 3|agent killed: memory limit of 67108864 bytes)$" \
    "memory bomb in a child, the agent exits 3"
check "memory bomb in a child: show and the exited receipt say memory" \
    limit_said "$id" memory
outside "memory bomb in a child" "$id"

manifest childfork "[\"$PROBE\", \"childfork\"]" "" 'limits: {pids: 32}'
id=$(submit childfork) && wait_done "$id" || notok "childfork: did not end"
check "fork bomb in a child: refused, and the agent lived on" \
    grep -qx 'childfork: child exited with status 3' "$(logf "$id")"
state "$id" failed "^pids limit of 32: [0-9]+ forks? refused in the attempt; agent exited with status 0$" \
    "fork bomb in a child, the agent exits 0"
check "fork bomb in a child: show and the exited receipt say pids" \
    limit_said "$id" pids
outside "fork bomb in a child" "$id"

script="
$PROBE fill src/big.c
$PROBE fill /tmp/big
$PROBE fill /dev/shm/big
for f in 1 2 3; do head -c 3M /dev/zero >src/f\$f.c; done
exit 0"
manifest disk "$(shjson "$script")" "" 'limits: {tree: 4M}'
id=$(submit disk) && wait_done "$id" || notok "disk: did not end"
for f in src/big.c /tmp/big /dev/shm/big; do
	check "disk filler: $f stops with EFBIG at 4M" \
	    grep -qx "fill $f: EFBIG at 4194304" "$(logf "$id")"
done
state "$id" rejected "tree exceeds the size limit of 4194304" \
    "files each under the limit, together over it"
outside "disk filler" "$id"

manifest flood "$(shjson "$PROBE flood 1048576; exit 3")" "" 'limits: {log: 64K}'
id=$(submit flood) && wait_done "$id" || notok "flood: did not end"
check "log flood: the log stops at 65536 bytes" \
    [ "$(stat -c %s "$(logf "$id")")" = 65536 ]
check "log flood: the daemon says so" \
    grep -q "$id: log reached its limit of 65536 bytes" "$T/log"
state "$id" failed "^agent exited with status 3$" "log flood"
outside "log flood" "$id"

# --- frozen scope: links to host files, the tree's .git -----------------

script="
ln -s /etc/shadow src/shadow.c
ln -s ../../../../../../../../etc/passwd src/up.c
ln src/a.c src/hard.c
$PROBE link /etc/shadow src/shadow2.c
mkdir -p .git/hooks
printf '#!/bin/sh\\ncat /etc/shadow\\n' >.git/hooks/post-checkout
printf '[core]\\n\\tfsmonitor = /bin/sh\\n' >>.git/config
exit 0"
manifest links "$(shjson "$script")"
id=$(submit links) && wait_done "$id" || notok "links: did not end"
refused "$id" "link /etc/shadow" 'E(XDEV|PERM|ACCES)'
r=$(show "$id" | jq -r '.reason // ""')
for w in "src/shadow.c: absolute symlink" \
    "src/up.c: symlink escapes the tree" "src/hard.c: hardlinked file" \
    ".git/hooks/post-checkout: hook installed" \
    ".git/config: differs from the provisioned config"; do
	check "collect rejects $w" sh -c "echo '$r' | grep -qF '$w'"
done
state "$id" rejected "" "planted links and .git changes"
outside "links" "$id"

# --- the verifier's side: a hostile validation command -----------------

script="
$PROBE read $T/keys/verifier.key $T/keys/receipt.key $T/state/journal
$PROBE write $T/state/verify/x $T/repo.git/objects/x
$PROBE tcp 127.0.0.1 $PORT
$PROBE unix $H_RUNSOCK
$PROBE syscalls
exit 1"
manifest vhostile "$(shjson 'echo more >>README.md')" "$(shjson "$script")"
id=$(submit vhostile) && wait_done "$id" || notok "vhostile: did not end"
refused "$id" "read $T/keys/verifier.key" ENOENT validate
refused "$id" "read $T/keys/receipt.key" ENOENT validate
refused "$id" "read $T/state/journal" ENOENT validate
refused "$id" "write $T/state/verify/x" 'E(ROFS|NOENT)' validate
refused "$id" "write $T/repo.git/objects/x" EROFS validate
refused "$id" "tcp 127.0.0.1:$PORT" 'E(NETUNREACH|ACCES)' validate
refused "$id" "unix $H_RUNSOCK" 'E(NOENT|ACCES|CONNREFUSED)' validate
refused "$id" "ptrace attach" EPERM validate
refused "$id" "bpf" EPERM validate
state "$id" rejected "" "a failing validation"
outside "hostile validation" "$id"

# A validation whose child's forks pids.max refused, exiting 0 itself:
# not a pass.
manifest vfork "$(shjson 'echo more >>README.md')" \
    "[\"$PROBE\", \"childfork\"]" 'limits: {pids: 32}'
id=$(submit vfork) && wait_done "$id" || notok "vfork: did not end"
check "validation's fork bomb in a child: refused, the command lived on" \
    grep -qx 'childfork: child exited with status 3' "$(logf "$id" validate)"
state "$id" rejected "validation: validate failed" \
    "a validation whose child hit pids.max, exiting 0"
check "validation's fork bomb in a child: the validated receipt says pids" \
    [ "$(ctl receipts "$id" | jq -r 'select(.kind == "validated") |
    .facts.limit')" = pids ]
outside "validation's fork bomb in a child" "$id"

check "factoryd still runs" kill -0 "$FACTORYD_PID"
check "every sandbox was torn down (cgroups empty and removed)" \
    sh -c "! grep -q 'sandbox teardown' '$T/log'"
stop_factoryd
check "the host listener saw nothing" sh -c "! grep -v '^ready' '$T/listen.out'"
check "the host sockets saw only the host's controls" \
    [ "$(grep -c '^accepted' "$T/socks.out")" = $((NSOCKS + 1)) ]
check "the other netns socket saw only the host's control" \
    [ "$(grep -c '^accepted' "$T/nssocks.out")" = 1 ]
regress_done
