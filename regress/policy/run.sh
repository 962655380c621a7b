#!/bin/sh
# The pledge/unveil policy of every child of the process table, applied
# by proc_apply_policy() as the daemon applies it: what each child needs
# works, and every forbidden thing is refused in the exact way expected
# (EACCES from Landlock, EPERM from a Landlock scope, or death by
# SIGSYS from seccomp).  Runs as any uid; as root it shows that the
# policies do not lean on the uid.

set -u
: "${O:?set O to the absolute build directory}"
PT="$O/regress/policy/prog_policytest"
[ -x "$PT" ] || { echo "not ok - policy: $PT not built"; exit 1; }

T=$(mktemp -d /tmp/factory-policy.XXXXXX) || exit 1
LPID=
nfail=0
npass=0
got_usr1=0
ABSTRACT="factory-policy-$$"

cleanup() {
	if [ -n "$LPID" ]; then
		kill "$LPID" 2>/dev/null
		wait "$LPID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# kill-parent sends SIGUSR1 to this shell: count what arrives.
trap 'got_usr1=$((got_usr1 + 1))' USR1

# The daemon's directories, and things no child may see.
mkdir -p "$T/state/attempts/a-1/tree" "$T/state/verify" "$T/state/publish" "$T/state/pristine" "$T/repos/r.git" \
    "$T/remotes/r.git" "$T/pulls" "$T/forge_keys" "$T/keys" "$T/outside"
echo tree >"$T/state/attempts/a-1/tree/file"
echo journal >"$T/state/journal"
echo repo >"$T/repos/r.git/HEAD"
echo remote >"$T/remotes/r.git/HEAD"
echo pull >"$T/pulls/p-1"
echo forge >"$T/forge_keys/app.pem"
echo verifier >"$T/keys/verifier.key"
echo secret >"$T/outside/secret"

VARS="-V state=$T/state -V repos=$T/repos -V remotes=$T/remotes \
    -V pulls=$T/pulls -V verifier_key=$T/keys/verifier.key \
    -V forge_keys=$T/forge_keys"

pass() {
	echo "ok - $1"
	npass=$((npass + 1))
}

fail() {
	echo "not ok - $1: $2"
	nfail=$((nfail + 1))
}

# expect NAME WANT PROC ACT [ARG]: WANT is ok, SIGSYS or an errno name.
# The program's parent must be this shell (kill-parent), so it is not
# run in a command substitution.
expect() {
	name=$1 want=$2
	shift 2
	{ "$PT" $VARS "$@" >"$T/out" 2>&1; rc=$?; } 2>/dev/null
	got="exit $rc"
	if [ "$rc" -eq 0 ]; then
		got=ok
	elif [ "$rc" -gt 128 ]; then
		got="SIG$(kill -l $((rc - 128)))"
	elif [ "$rc" -eq 3 ]; then
		got=$(sed -n 's/^denied: //p' "$T/out")
	fi
	case $want in
	ok)	what="works" ;;
	SIGSYS)	what="refused (SIGSYS)" ;;
	*)	what="refused ($want)" ;;
	esac
	if [ "$got" = "$want" ]; then
		pass "$name $what"
	else
		fail "$name $what" "got $got: $(tr '\n' ' ' <"$T/out")"
	fi
}

# The abstract unix socket a child must not reach.
"$PT" -l "$ABSTRACT" >"$T/listen.out" 2>&1 &
LPID=$!
i=0
while ! grep -q listening "$T/listen.out" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 100 ]; then
		echo "not ok - policy: abstract listener did not start"
		exit 1
	fi
	sleep 0.05
done

echo "# uid $(id -u), $(uname -r)"

# A real repository, made without a policy.
if ! "$PT" none git "$T/repos/real.git" >"$T/out" 2>&1; then
	echo "not ok - policy: setup: $(cat "$T/out")"
	exit 1
fi

# Controls: without a policy every act below works, so each refusal
# that follows is the policy's doing.
expect "control: read outside" ok none read "$T/outside/secret"
expect "control: exec" ok none exec /bin/true
expect "control: abstract-connect" ok none abstract-connect "$ABSTRACT"
expect "control: tiocsti|1<<32" ENOTTY none tiocsti-high
expect "control: tcp connect" ECONNREFUSED none tcp-connect 1
got_usr1=0
expect "control: kill-parent" ok none kill-parent
[ "$got_usr1" -eq 1 ] && pass "control: signal arrived" ||
    fail "control: signal arrived" "got $got_usr1 SIGUSR1"

# What no child may do, whatever its table entry says.
forbidden() {
	p=$1
	expect "$p: read outside its unveils" EACCES $p read "$T/outside/secret"
	expect "$p: exec" SIGSYS $p exec /bin/true
	expect "$p: ptrace" SIGSYS $p ptrace
	expect "$p: mount" SIGSYS $p mount
	expect "$p: bpf" SIGSYS $p bpf
	expect "$p: keyctl" SIGSYS $p keyctl
	expect "$p: unshare" SIGSYS $p unshare
	expect "$p: io_uring" SIGSYS $p io_uring
	expect "$p: fork" SIGSYS $p fork
	expect "$p: TIOCSTI" SIGSYS $p tiocsti
	expect "$p: TIOCSTI|1<<32" SIGSYS $p tiocsti-high
	expect "$p: TIOCLINUX|1<<32" SIGSYS $p tioclinux-high
	expect "$p: FIONREAD|1<<32" SIGSYS $p fionread-high
	# Under dns, a unix socket is refused (EACCES) rather than fatal:
	# getaddrinfo(3) probes nscd that way.
	case $p in
	publisher|egress) ab=EACCES ;;
	*) ab=SIGSYS ;;
	esac
	expect "$p: abstract-connect" $ab $p abstract-connect "$ABSTRACT"
	got_usr1=0
	expect "$p: kill-parent" SIGSYS $p kill-parent
	[ "$got_usr1" -eq 0 ] && pass "$p: no signal reached the shell" ||
	    fail "$p: no signal reached the shell" "got $got_usr1 SIGUSR1"
}

# What every child needs: its event loop on the parent's socket.
needed() {
	p=$1
	expect "$p: stdio" ok $p stdio
	expect "$p: libevent loop on a socketpair" ok $p libevent
	expect "$p: thread (clone3 ENOSYS, clone fallback)" ok $p thread
	expect "$p: FIONREAD" ENOTTY $p fionread
}

for p in worker verifier reconciler publisher egress; do
	needed $p
	forbidden $p
done

# worker: libgit2 in attempt trees, baselines read-only.
expect "worker: read a repository" ok worker read "$T/repos/r.git/HEAD"
expect "worker: write in an attempt tree" ok worker write \
    "$T/state/attempts/a-1/tree/file"
expect "worker: create in an attempt tree" ok worker create \
    "$T/state/attempts/a-1/tree/new"
expect "worker: write a repository" EACCES worker write "$T/repos/r.git/HEAD"
expect "worker: create in a repository" EACCES worker create \
    "$T/repos/r.git/new"
expect "worker: read the journal" EACCES worker read "$T/state/journal"
expect "worker: read the verifier key" EACCES worker read \
    "$T/keys/verifier.key"
expect "worker: read a forge key" EACCES worker read \
    "$T/forge_keys/app.pem"
expect "worker: inet socket" SIGSYS worker inet
expect "worker: tcp connect" SIGSYS worker tcp-connect 1

expect "worker: libgit2 reads a repository" ok worker git-read \
    "$T/repos/real.git"
expect "worker: libgit2 commits in an attempt dir" ok worker git \
    "$T/state/attempts/a-1/repo.git"

# verifier: its scratch dir, repositories and key read-only.
expect "verifier: read a repository" ok verifier read "$T/repos/r.git/HEAD"
expect "verifier: read its key" ok verifier read "$T/keys/verifier.key"
expect "verifier: create in its scratch dir" ok verifier create \
    "$T/state/verify/new"
expect "verifier: write in its scratch dir" ok verifier write \
    "$T/state/verify/new"
expect "verifier: write its key" EACCES verifier write "$T/keys/verifier.key"
expect "verifier: write a repository" EACCES verifier write \
    "$T/repos/r.git/HEAD"
expect "verifier: read an attempt tree" EACCES verifier read \
    "$T/state/attempts/a-1/tree/file"
expect "verifier: read a forge key" EACCES verifier read \
    "$T/forge_keys/app.pem"
expect "verifier: inet socket" SIGSYS verifier inet
expect "verifier: libgit2 reads a repository" ok verifier git-read \
    "$T/repos/real.git"
# git_repository_init(3) chmods its config: fattr, which the table
# does not grant the verifier yet.
expect "verifier (+fattr): libgit2 commits in its scratch dir" ok \
    -P "stdio rpath wpath cpath fattr flock recvfd" verifier git \
    "$T/state/verify/scratch.git"

# reconciler: reads everything it inventories, writes nothing.
expect "reconciler: read the state dir" ok reconciler read "$T/state/journal"
expect "reconciler: read /proc" ok reconciler read /proc/self/status
expect "reconciler: read a remote" ok reconciler read "$T/remotes/r.git/HEAD"
expect "reconciler: write the state dir" SIGSYS reconciler write \
    "$T/state/journal"
expect "reconciler: create in the state dir" SIGSYS reconciler create \
    "$T/state/new"
expect "reconciler: read a forge key" EACCES reconciler read \
    "$T/forge_keys/app.pem"
expect "reconciler: inet socket" SIGSYS reconciler inet
expect "reconciler: libgit2 reads a repository" ok reconciler git-read \
    "$T/repos/real.git"

# publisher: remotes and pulls, its keys read-only, network.
expect "publisher: read a forge key" ok publisher read "$T/forge_keys/app.pem"
expect "publisher: write a remote" ok publisher write "$T/remotes/r.git/HEAD"
expect "publisher: create a pull record" ok publisher create "$T/pulls/p-2"
expect "publisher: inet socket" ok publisher inet
expect "publisher: tcp connect (nothing listens)" ECONNREFUSED publisher \
    tcp-connect 1
expect "publisher: write a forge key" EACCES publisher write \
    "$T/forge_keys/app.pem"
expect "publisher: read an attempt tree" EACCES publisher read \
    "$T/state/attempts/a-1/tree/file"
expect "publisher: read a repository" EACCES publisher read \
    "$T/repos/r.git/HEAD"
expect "publisher: read the verifier key" EACCES publisher read \
    "$T/keys/verifier.key"

# egress: sockets and the resolver's files, nothing else on disk.
expect "egress: inet socket" ok egress inet
expect "egress: tcp connect (nothing listens)" ECONNREFUSED egress \
    tcp-connect 1
expect "egress: read /etc/hosts (the resolver)" ok egress read /etc/hosts
expect "egress: read the state dir" EACCES egress read "$T/state/journal"
expect "egress: read a forge key" EACCES egress read "$T/forge_keys/app.pem"
expect "egress: write a file" SIGSYS egress write "$T/pulls/p-1"
expect "egress: create a file" SIGSYS egress create "$T/pulls/p-3"

# The Landlock layers on their own, behind promises that let the
# syscall through seccomp (the worker's unveils, other promises).
expect "landlock scope: abstract-connect under 'stdio unix'" EPERM \
    -P "stdio unix" worker abstract-connect "$ABSTRACT"
got_usr1=0
expect "landlock scope: kill-parent under 'stdio proc'" EPERM \
    -P "stdio proc" worker kill-parent
[ "$got_usr1" -eq 0 ] && pass "landlock scope: no signal reached the shell" ||
    fail "landlock scope: no signal reached the shell" "got $got_usr1"
expect "landlock scope: fork under 'stdio proc'" ok -P "stdio proc" worker fork
expect "landlock tcp: connect without inet under 'stdio unix'" EACCES \
    -P "stdio unix" worker tcp-connect 1
expect "landlock tcp: connect under 'stdio inet'" ECONNREFUSED \
    -P "stdio inet" worker tcp-connect 1

# What factoryctl policy shows for the worker.
{ "$PT" $VARS worker describe >"$T/out" 2>&1; } 2>/dev/null
for line in "promises: stdio rpath wpath cpath fattr flock recvfd" \
    "unveil: $T/state/attempts rwc" "unveil: $T/repos r" \
    "landlock: abi [0-9]*, fs handled, tcp bind+connect denied, scoped: abstract-unix signal" \
    "seccomp: default kill-process, [0-9]* syscalls allowed"; do
	if grep -qx "$line" "$T/out"; then
		pass "worker: describe shows '$line'"
	else
		fail "worker: describe shows '$line'" "$(tr '\n' '|' <"$T/out")"
	fi
done

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
