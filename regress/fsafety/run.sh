#!/bin/sh
# Root's handling of files that children and agents wrote, through the
# real daemon.  Trees an agent shaped (deeper than any fd limit, names
# of NAME_MAX bytes, locked modes, a FIFO, links to / and outside) are
# torn down to "terminated" with nothing left, and nothing outside is
# touched.  A hostile worker's FIFO, link, directory, socket or device
# where the bundle should be fails the attempt with a reason while the
# daemon keeps answering.  Needs root.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 61804
write_attempt_conf "$T" 61800 63200-63249
start_factoryd "$T/factoryd.conf" "$T/log"

mkdir "$T/outside"
echo keep >"$T/outside/keep"

# An agent's deep trees.  mk N NAME [LINK TARGET]: N nested directories
# entered one by one (a shell's cd would build a path past PATH_MAX),
# a file and maybe a symbolic link at the bottom.
DEEP='set -e
mk() { perl -e '"'"'my ($n, $d, $l, $t) = @ARGV;
    for (1 .. $n) { mkdir $d or die "mkdir: $!"; chdir $d or die "cd: $!" }
    open(my $f, ">", "leaf") or die "leaf: $!"; close($f);
    !defined($l) or symlink($t, $l) or die "symlink: $!";'"'"' "$@"; }
long=n; while [ ${#long} -lt 250 ]; do long=${long}n; done
mk 300 d300 root /
mk 5000 d out OUTSIDE
mk 40 "$long" keep OUTSIDE/keep
mkdir -p locked/sub; echo x >locked/f; chmod 0 locked/f locked/sub locked
touch odd; chmod 0777 odd
if chmod 4777 odd 2>/dev/null; then echo "a set-id mode was allowed"; fi
mkdir sticky; chmod 1777 sticky; mkfifo fifo
ln -s / root; ln -s OUTSIDE out
echo deep >>README.md'
DEEP=$(printf '%s' "$DEEP" | sed "s|OUTSIDE|$T/outside|g")
write_manifest "$T/deep.yaml" "$DEEP"
id=$(ctl submit "$T/deep.yaml")
check "deep trees: terminated" wait_terminated "$id" 120
check "deep trees: the attempt directory is gone" \
    [ ! -e "$T/state/attempts/$id" ]
check "deep trees: nothing left of it" \
    [ -z "$(find "$T/state/attempts" "$T/state/verify" -mindepth 1)" ]
check "deep trees: the agent made them all" \
    sh -c "! grep -q . '$T/state/logs/$id.log'"
check "deep trees: the symbolic links' target is untouched" \
    [ "$(cat "$T/outside/keep")" = keep ]
check "deep trees: no teardown retry logged" \
    sh -c "! grep -q 'teardown incomplete' '$T/log'"
check "deep trees: factoryd answers" ctl status
# Our own instance's cgroups only: another suite's daemon may run an
# attempt of the same id beside us.
INST=$(printf %s "$(realpath "$T/state")" | sha256sum | cut -c1-8)
check "deep trees: no cgroup of ours left" \
    sh -c "! ls -d /sys/fs/cgroup/*/factory/$INST/a-* 2>/dev/null | grep -q ."
stop_factoryd

# A hostile worker (prog_badworker) puts something else where the bundle
# should be: root must not block in open(2), follow a link, read a
# directory, a socket, a device or a file of someone else.  The daemon
# keeps answering within a second; the attempt fails with a reason.
W=$T/bw
mkdir -p "$W/badexec"
# Every child binary of the build (whatever their number), but the
# worker.
for b in "$O"/factory-*; do
	cp "$b" "$W/badexec/"
done
cp "$O/regress/fsafety/prog_badworker" "$W/badexec/factory-worker"
chmod 755 "$W" "$W/badexec"
SOCK=$W/factoryd.sock
sed -e "s|^socket: .*|socket: $SOCK|" \
    -e "s|^state-dir: .*|state-dir: $W/state|" \
    -e "s|^libexec: .*|libexec: $W/badexec|" \
    "$T/factoryd.conf" >"$W/factoryd.conf"
OID=$(git --git-dir="$T/demo.git" rev-parse main)
# The baseline's files, for the pristine checkout the bad worker must
# still make right: the verifier checks it before any attempt uses it.
mkdir -p "$W/badexec/base"
git --git-dir="$T/demo.git" archive main | tar -x -C "$W/badexec/base"
chmod -R a+rX "$W/badexec/base"
git --git-dir="$T/demo.git" ls-tree -r --name-only main |
    while read -r f; do echo "file $f $W/badexec/base/$f"; done >"$W/files"
# Victims: a root file anyone may write (so a hard link to it is
# allowed), a device node the worker owns, /etc/shadow.
echo root >"$W/rootfile"
chmod 666 "$W/rootfile"
mknod "$W/devnode" c 1 3 && chown 61801 "$W/devnode" && DEV=1 || DEV=""
SHADOW=$(sha256sum /etc/shadow)
start_factoryd "$W/factoryd.conf" "$W/log"
write_manifest "$W/m.yaml" true

# Bounded: a parent blocked in open(2) must fail the test, not hang it.
tctl() { timeout 5 "$O/factoryctl" -s "$SOCK" "$@"; }
twait() {	# id seconds
	i=0
	while [ $i -lt $(($2 * 4)) ]; do
		t=$(tctl -j show "$1") || return 1
		[ "$(echo "$t" | jq -r .terminated)" = true ] && return 0
		sleep 0.25
		i=$((i + 1))
	done
	return 1
}

# badbundle NAME MODE [TARGET]
badbundle() {
	{ printf 'oid %s\nmode %s\ntarget %s\n' "$OID" "$2" "${3:-}"
	  cat "$W/files"; } >"$W/badexec/factory-worker.conf"
	bid=$(tctl submit "$W/m.yaml")
	# The bundle is opened when the result comes: ask while it does.
	slow=0
	i=0
	while [ $i -lt 40 ]; do
		timeout 1 "$O/factoryctl" -s "$SOCK" status >/dev/null 2>&1 ||
		    slow=$((slow + 1))
		[ $slow -gt 2 ] && break
		[ "$(tctl -j show "$bid" 2>/dev/null | jq -r .terminated)" = \
		    true ] && break
		sleep 0.25
		i=$((i + 1))
	done
	check "bundle $1: factoryd answered status within a second" \
	    [ "$slow" = 0 ]
	shown=$(tctl -j show "$bid")
	echo "# bundle $1: $(echo "$shown" | jq -r '.state + ": " + (.reason // "")')"
	check "bundle $1: the attempt failed" \
	    [ "$(echo "$shown" | jq -r .state)" = failed ]
	check "bundle $1: with a reason naming the bundle and what it is" \
	    sh -c "echo '$shown' | jq -e '.reason | test(\"/bundle: (not a \" +
	    \"regular file: |owned by uid [0-9]+, not |[0-9]+ links${4:-})\")'"
	check "bundle $1: torn down" twait "$bid" 20
	check "bundle $1: the daemon still serves" tctl status
}
badbundle "a symbolic link to /etc/shadow" symlink /etc/shadow
badbundle "a directory" dir
badbundle "a socket" socket
# The attempt's directory is a tmpfs of its own (its disk): no link to
# a file outside can be made there (EXDEV), so the bundle is missing.
badbundle "a hard link to a root file" link "$W/rootfile" "|No such file"
check "a hard link into the attempt's disk cannot be made" \
    grep -q "bw: link .*Invalid cross-device link" "$W/log"
if [ -n "$DEV" ]; then
	badbundle "a device node" link "$W/devnode" "|No such file"
fi
# The control: a regular file of the worker's goes on to the verifier
# (which refuses an empty bundle).
{ printf 'oid %s\nmode good\n' "$OID"; cat "$W/files"; } \
    >"$W/badexec/factory-worker.conf"
gid=$(tctl submit "$W/m.yaml")
check "bundle the worker's own file: torn down" twait "$gid" 30
check "bundle the worker's own file: handed to the verifier" \
    grep -q "$gid: verifying, verifier pid" "$W/log"
badbundle "a FIFO" fifo
# An open(2) that blocked on the FIFO is let go, so the test can end.
for f in "$W"/state/attempts/*/bundle; do
	[ -p "$f" ] && timeout 2 sh -c ": >'$f'"
done
INST=$(printf %s "$(realpath "$W/state")" | sha256sum | cut -c1-8)
check "bundles: no cgroup of ours left" \
    sh -c "! ls -d /sys/fs/cgroup/*/factory/$INST/a-* 2>/dev/null | grep -q ."
check "bundles: /etc/shadow untouched" \
    [ "$(sha256sum /etc/shadow)" = "$SHADOW" ]
check "bundles: the root file untouched" \
    sh -c "[ \"\$(cat '$W/rootfile')\" = root ] &&
    [ \$(stat -c %u '$W/rootfile') = 0 ]"

regress_done
