#!/bin/sh
# Image imports an untrusted user or a lying child could bend (the
# outside reviews' findings): a directory owned by someone else is read
# with that owner's rights, a walk that fails part-way never stores a
# truncated image, mount points are refused, the parent re-checks every
# bound of images: itself, image verify is a read-write request, and a
# stored image whose entry list no longer hashes to its name is not
# used.  Needs root.

. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "not ok - imgsafe: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "imgsafe: needs jq"
command -v python3 >/dev/null || fail "imgsafe: needs python3"

D=$(cd "$(dirname "$0")" && pwd)
T=$(regress_tmpdir)
UIDBASE=66700
OWNER=66790		# the untrusted user who owns an imported directory
SOCK=$T/factoryd.sock
write_attempt_conf "$T" $UIDBASE 66710-66719
cat >>"$T/factoryd.conf" <<CONF
images:
  max-files: 200
  max-depth: 32
CONF
mkdir -p "$T/keys"
make_repos "$T" $((UIDBASE + 4))
start_factoryd "$T/factoryd.conf" "$T/log"

ctl() { "$O/factoryctl" -s "$SOCK" "$@"; }
STORE=$T/state/images

# refused NAME PATH PATTERN: the import fails with a reason matching it,
# no name is bound, nothing stays in staging or tmp.
refused() {
	name=$1 path=$2 pat=$3
	if ctl image import "$name" "$path" >"$T/out" 2>"$T/err"; then
		notok "$name: imported, should be refused"
	elif grep -q -- "$pat" "$T/err"; then
		ok "$name: refused ($(head -c 200 "$T/err" | tr '\n' ' '))"
	else
		notok "$name: refused, but not for \"$pat\": $(cat "$T/err")"
	fi
	[ ! -e "$STORE/names/$name" ] || notok "$name: a name was bound"
	wait_children "$SOCK"
	n=$(find "$STORE/tmp" "$STORE/staging" -mindepth 1 | wc -l)
	check "$name: nothing left in staging or tmp ($n)" [ "$n" = 0 ]
}

# A directory an untrusted user owns, with a hard link (made by root
# here; on a host without protected_hardlinks the user can make it) to a
# file that user cannot read.
U=$T/user
mkdir -p "$U/etc"
echo ok >"$U/etc/hostname"
echo "the root-only secret $$" >"$T/secret"
chmod 600 "$T/secret"
ln "$T/secret" "$U/etc/stolen"
chown -R $OWNER:$OWNER "$U"
chown root:root "$T/secret"
refused hardlink-unreadable "$U" 'etc/stolen: Permission denied'
check "hardlink-unreadable: the secret is nowhere in the store" sh -c \
    "! grep -rqs 'the root-only secret $$' '$STORE'"
rm "$U/etc/stolen"
# A file of the user's own that the user made unreadable: a read error
# part-way, so no image at all.
echo mine >"$U/etc/mine"
chown $OWNER:$OWNER "$U/etc/mine"
chmod 000 "$U/etc/mine"
refused unreadable-own "$U" 'etc/mine: Permission denied'
rm "$U/etc/mine"
d=$(ctl -j image import user "$U" 2>"$T/err" | jq -r .digest)
check "a user's directory without tricks: imported ($(cat "$T/err"))" \
    sh -c "echo '$d' | grep -Eq '^sha256:[0-9a-f]{64}$'"

# A walk that stops part-way (a name longer than PATH_MAX below the
# root): entries up to there made a valid tar once; now the stream
# never ends properly and no name is bound.
L=$T/long
mkdir -p "$L"
echo early >"$L/a-early"
python3 - "$L" <<'PY' || notok "stopped-walk: cannot make a path longer than PATH_MAX"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(18):
    n = "%0250d" % i
    os.mkdir(n, dir_fd=fd)
    fd = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
os.close(os.open("late", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
PY
refused stopped-walk "$L" 'archive'

# The daemon side: a tar whose end-of-archive blocks are missing is
# not a whole archive, whoever wrote it.
python3 - "$T/noeoa.tar" "$T/eoa.tar" <<'PY'
import io, sys, tarfile
for path, cut in ((sys.argv[1], True), (sys.argv[2], False)):
    with open(path, "wb") as f:
        t = tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT)
        for n in ("a", "b"):
            i = tarfile.TarInfo(n)
            i.size = 3
            t.addfile(i, io.BytesIO(b"xyz"))
        end = t.offset
        t.close()
        if cut:
            f.truncate(end)
PY
refused no-end-of-archive "$T/noeoa.tar" 'end-of-archive'
d=$(ctl -j image import eoa "$T/eoa.tar" 2>"$T/err" | jq -r .digest)
check "the same tar with its end: imported ($(cat "$T/err"))" \
    sh -c "echo '$d' | grep -Eq '^sha256:[0-9a-f]{64}$'"
# A stream cut in the middle of a block.
head -c 1500 "$T/eoa.tar" >"$T/cut.tar"
refused cut-mid-block "$T/cut.tar" 'archive'

# Mount points below the root of the import are refused.
M=$T/mnt
mkdir -p "$M/etc" "$M/sub"
echo m >"$M/etc/x"
if mount -t tmpfs -o size=1m tmpfs "$M/sub" 2>/dev/null; then
	echo "on another file system" >"$M/sub/other"
	refused mount-point "$M" 'sub: another file system'
	umount "$M/sub"
else
	notok "mount-point: cannot mount a tmpfs"
fi

# The parent checks images: again on what factory-image left: a
# factory-image that ignores max-files (test builds: image:no-bounds)
# is caught by the parent's own walk.
python3 - "$T/many.tar" "$T/deep.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    for n in range(300):
        i = tarfile.TarInfo("f%04d" % n)
        t.addfile(i, io.BytesIO(b""))
with tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as t:
    i = tarfile.TarInfo("/".join(["d"] * 40) + "/f")
    t.addfile(i, io.BytesIO(b""))
PY
refused child-bounds-ok "$T/many.tar" 'more than 200 entries'
stop_factoryd
FACTORY_CRASH=image:no-bounds start_factoryd "$T/factoryd.conf" "$T/log"
refused child-ignores-max-files "$T/many.tar" 'the staged tree: .*more than 200 entries'
# A child's fault point holds for its first life only: once more.
stop_factoryd
FACTORY_CRASH=image:no-bounds start_factoryd "$T/factoryd.conf" "$T/log"
refused child-ignores-max-depth "$T/deep.tar" 'the staged tree: .*deeper than 32'
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"

# image verify re-hashes a whole tree: not for the read-only socket.
check "image verify as root: OK" sh -c \
    "'$O/factoryctl' -s '$SOCK' image verify eoa | grep -q '^OK'"
check "image verify as nobody (read-only socket): refused" sh -c \
    "! setpriv --reuid 65534 --regid 65534 --clear-groups '$O/factoryctl' -s '$SOCK' image verify eoa >/dev/null 2>&1"
if "$O/factoryctl" -s "$SOCK.ro" image verify eoa >"$T/out" 2>"$T/err"; then
	notok "image verify on the .ro socket: answered"
else
	check "image verify on the .ro socket: refused by factoryd" \
	    grep -q 'read-only' "$T/err"
fi
check "image list as nobody: still answered" sh -c \
    "setpriv --reuid 65534 --regid 65534 --clear-groups '$O/factoryctl' -s '$SOCK' -j image list | jq -e '.images | length >= 1'"

# A stored image whose entry list no longer hashes to its name is not
# used after a restart, and stays marked until image verify passes; a
# verify that fails marks it too.
BB=/bin/busybox
I=$T/img
mkdir -p "$I/bin"
cp "$BB" "$I/bin/busybox" && ln -s busybox "$I/bin/sh" && ln -s busybox "$I/bin/true"
dig=$(ctl -j image import img "$I" 2>"$T/err" | jq -r .digest)
ih=${dig#sha256:}
check "img: imported ($(cat "$T/err"))" [ -f "$STORE/sha256/$ih/canon" ]
write_manifest "$T/m.yaml" 'true' true "environment: {image: \"$dig\"}"
# submitted MANIFEST: the attempt's id, or nothing and the reason in $T/err
submitted() { ctl submit "$1" 2>"$T/err"; }
id=$(submitted "$T/m.yaml")
check "img: an attempt may use it ($(cat "$T/err"))" [ -n "$id" ]
[ -n "$id" ] && wait_terminated "$id" 60
cp "$STORE/sha256/$ih/canon" "$T/canon.good"
printf 'x' >>"$STORE/sha256/$ih/canon"
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
if id=$(submitted "$T/m.yaml"); then
	notok "canon changed, after a restart: an attempt was given the image ($id)"
	wait_terminated "$id" 60
else
	check "canon changed, after a restart: refused, saying why" \
	    grep -q "its entry list hashes to sha256:[0-9a-f]*, not to its name" "$T/err"
fi
check "canon changed: the image is marked unusable" [ -f "$STORE/sha256/$ih/unusable" ]
cp "$T/canon.good" "$STORE/sha256/$ih/canon"
if id=$(submitted "$T/m.yaml"); then
	notok "canon restored: used again without a verify ($id)"
	wait_terminated "$id" 60
else
	check "canon restored: still refused until a verify" \
	    grep -q "marked unusable" "$T/err"
fi
check "image verify of it: OK" sh -c \
    "'$O/factoryctl' -s '$SOCK' image verify '$dig' | grep -q '^OK'"
id=$(submitted "$T/m.yaml")
check "after a verify that passed: usable ($(cat "$T/err"))" [ -n "$id" ]
[ -n "$id" ] && wait_terminated "$id" 60
chmod 700 "$STORE/sha256/$ih/rootfs/bin"
check "a mode changed behind the store: image verify fails" sh -c \
    "! '$O/factoryctl' -s '$SOCK' image verify '$dig' >/dev/null 2>&1"
if id=$(submitted "$T/m.yaml"); then
	notok "a verify that failed: the image was still given ($id)"
	wait_terminated "$id" 60
else
	check "a verify that failed: refused, naming the difference" \
	    grep -q "marked unusable (image verify: first difference: bin: stored" "$T/err"
fi
chmod 755 "$STORE/sha256/$ih/rootfs/bin"

# The walk over an import's tree (bytes an untrusted user wrote) runs
# in a child of root confined to that tree: CAP_CHOWN and
# CAP_DAC_READ_SEARCH alone, no_new_privs, a seccomp filter, Landlock.
# One that hangs is killed at its deadline, its import and verify fail
# naming it, and the daemon answers throughout.  Test builds:
# image:walk-hold holds every walk until it is killed,
# image:walk-escape tries a file outside the tree, then a socket.
W=$T/walked
mkdir -p "$W/etc"
echo walked >"$W/etc/hostname"
# walk_pid FROM-LINE: the pid of the first walk logged after that line
walk_pid() {
	_i=0
	while [ $_i -lt 600 ]; do
		_p=$(tail -n +"$1" "$T/log" |
		    sed -n 's/.*image walk: pid \([0-9]*\), deadline.*/\1/p' |
		    head -n 1)
		[ -n "$_p" ] && { echo "$_p"; return 0; }
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
# ended PID SECONDS: true once that process is gone, false after
ended() {
	_i=0
	while kill -0 "$1" 2>/dev/null; do
		[ $_i -lt $(($2 * 10)) ] || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}
stop_factoryd
FACTORY_CRASH=image:walk-hold FACTORY_TEST_IMAGE_WALK_S=20 \
    start_factoryd "$T/factoryd.conf" "$T/log"
from=$(($(wc -l <"$T/log") + 1))
ctl image import held "$W" >"$T/held.out" 2>"$T/held.err" &
held=$!
if wpid=$(walk_pid "$from"); then
	st=/proc/$wpid/status
	check "walk confined: CapEff, CapPrm and CapBnd are CAP_CHOWN and CAP_DAC_READ_SEARCH alone" \
	    awk '/^Cap(Eff|Prm|Bnd):/ && $2 != "0000000000000005" {bad = 1}
		/^CapEff:/ {seen = 1} END {exit bad || !seen}' "$st"
	check "walk confined: no CapInh, no CapAmb" \
	    awk '/^Cap(Inh|Amb):/ && $2 != "0000000000000000" {bad = 1}
		END {exit bad}' "$st"
	# The parent has a filter of its own: the walk's adds pledge's.
	pf=$(awk '/^Seccomp_filters:/ {print $2}' "/proc/$FACTORYD_PID/status")
	wf=$(awk '/^Seccomp_filters:/ {print $2}' "$st")
	check "walk confined: NoNewPrivs 1, Seccomp 2" sh -c \
	    "grep -q '^Seccomp:[[:space:]]*2' $st && grep -q '^NoNewPrivs:[[:space:]]*1' $st"
	check "walk confined: a seccomp filter beyond the parent's ($wf > $pf)" \
	    [ "${wf:-0}" -gt "${pf:-0}" ]
	check "walk confined: still uid 0 (its writes are root's)" \
	    awk '/^Uid:/ {exit !($2 == 0)}' "$st"
	check "a held walk: status answered meanwhile" ctl status
	verify_from=$(($(wc -l <"$T/log") + 1))
	ctl image verify "$dig" >"$T/hv.out" 2>"$T/hv.err" &
	hv=$!
	vpid=$(walk_pid "$verify_from") || vpid=""
	check "a held walk: a verify walks beside it" [ -n "$vpid" ]
	check "a held walk: killed at its deadline (20 s; 120 allowed)" \
	    ended "$wpid" 120
	check "a held verify: killed at its deadline" ended "${vpid:-0}" 120
else
	notok "a held walk: no walk logged"
fi
if ended "$held" 120; then
	ok "a held walk: the import ended"
else
	notok "a held walk: the import did not end"
	kill "$held" 2>/dev/null
fi
wait "$held" && notok "a held walk: the import succeeded"
check "a held walk: the import failed, naming the deadline" \
    grep -q "the staged tree: walk process (pid [0-9]*) killed at its deadline of 20 s" "$T/held.err"
ended "$hv" 60 || kill "$hv" 2>/dev/null
wait "$hv" && notok "a held verify: it succeeded"
check "a held verify: failed, naming the deadline" \
    grep -q "killed at its deadline of 20 s" "$T/hv.err"
check "a held walk: logged as past its deadline" \
    grep -q "image walk (pid $wpid): past its deadline of 20 s, killed" "$T/log"
check "a held walk: no name bound" [ ! -e "$STORE/names/held" ]
n=$(find "$STORE/tmp" "$STORE/staging" -mindepth 1 | wc -l)
check "a held walk: nothing left in staging or tmp ($n)" [ "$n" = 0 ]
check "after a walk was killed: status still answered" ctl status
check "after a walk was killed: the children are all back" \
    wait_children "$SOCK" 60
stop_factoryd
FACTORY_CRASH=image:walk-escape start_factoryd "$T/factoryd.conf" "$T/log"
from=$(($(wc -l <"$T/log") + 1))
if ctl image import escape "$W" >"$T/out" 2>"$T/err"; then
	notok "a walk that tries to escape: imported"
else
	check "a walk that opens a socket: killed by seccomp (SIGSYS)" \
	    grep -q "walk process (pid [0-9]*) ended without an answer, killed by signal 31" "$T/err"
fi
check "a walk: /etc/passwd, outside its tree, not opened" \
    sh -c "tail -n +$from '$T/log' | grep -q 'image walk escape: open /etc/passwd: Permission denied'"
check "a walk: no socket made" \
    sh -c "! tail -n +$from '$T/log' | grep -q 'image walk escape: socket: made'"
check "after a walk that tried to escape: status still answered" ctl status
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
check "a confined walk, let be: the tree imports" \
    sh -c "'$O/factoryctl' -s '$SOCK' image import walked '$W' >/dev/null"

regress_done
