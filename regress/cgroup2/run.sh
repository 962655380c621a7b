#!/bin/sh
# A pure cgroup v2 host, as a view of this hybrid one: in a private
# mount namespace the v1 hierarchies are unmounted and the (controller-
# less) cgroup2 hierarchy is mounted at /sys/fs/cgroup.  A directory
# of it stands for the unit's cgroup that systemd's Delegate=yes hands
# factoryd.  Checked: the probe takes that cgroup as its subtree,
# moves itself into its "supervisor" leaf, makes nothing outside it,
# and refuses, naming the controller and the file, because no
# controller is there to limit memory and pids; started again inside
# the leaf it picks the same subtree; from the root cgroup, the root's
# paths, refused too; a cgroup that is not delegated (read-only, a
# user's, or under systemd without its Delegate=yes mark) is refused
# at start with one line saying what is missing and naming the fix,
# never taken for the hierarchy's root; the real factoryd stops at
# start with the same one lines.
#
# Every cgroup made here is under $CG (the host's path of the test's
# own directory) and is removed by exact path.

. "$(dirname "$0")/../lib.sh"

PROBE=$O/regress/cgroup2/prog_cgprobe
[ -x "$PROBE" ] || fail "cgroup2: $PROBE not built"
command -v unshare >/dev/null || fail "cgroup2: needs unshare"
UNI=/sys/fs/cgroup/unified
if ! grep -q " $UNI .* - cgroup2 " /proc/self/mountinfo; then
	echo "ok - cgroup2 # skip: no cgroup2 at $UNI to make a view of"
	exit 0
fi

T=$(regress_tmpdir)
NAME=factory-regress-cgroup2.$$
CG=$UNI/$NAME			# the same directory as /sys/fs/cgroup/$NAME
cg_cleanup() {
	for d in "$CG/sub/supervisor" "$CG/sub" "$CG/supervisor" \
	    "$CG/factory/test" "$CG/factory" "$CG"; do
		[ -d "$d" ] && rmdir "$d"
	done
	[ ! -d "$CG" ] || echo "# cgroup2: $CG left behind"
}
trap 'cg_cleanup; regress_cleanup' EXIT
mkdir "$CG" || fail "cgroup2: mkdir $CG"

make_repos "$T" 68504
write_attempt_conf "$T" 68500 68510-68529

# view CMD: CMD in the pure v2 view, by sh -c, from cgroup $2 ("" the
# root); $3 "ro" mounts the view read-only.
view() {
	unshare -m --propagation private sh -c '
		umount -R /sys/fs/cgroup 2>/dev/null || exit 91
		mount -t cgroup2 ${3:+-o ro} cgroup2 /sys/fs/cgroup || exit 92
		if [ "$3" = ro ]; then
			mount -o remount,rw /sys/fs/cgroup || exit 93
		fi
		echo $$ >"/sys/fs/cgroup/$2/cgroup.procs" || exit 94
		eval "$1"' view "$1" "$2" "${3:-}"
}

# 1. Delegated: the test's directory is our own cgroup.  The probe is
# the launcher's (in a fork of prog_cgprobe, as the regress helpers run
# it): it moves its parent and itself into the leaf.
out=$(view "exec $PROBE" "$NAME" 2>&1; echo "rc=$?")
echo "$out" | sed 's/^/# /'
want="refused: cgroup: v2 root /sys/fs/cgroup/$NAME/factory/test (delegated; factoryd moved into supervisor): controller memory not available: /sys/fs/cgroup/$NAME/cgroup.controllers has \"\""
[ "$(echo "$out" | sed -n 1p)" = "$want" ] &&
    ok "delegated: the subtree chosen, memory named as missing" ||
    notok "delegated: got \"$(echo "$out" | sed -n 1p)\", want \"$want\""
echo "$out" | grep -qx "0::/$NAME/supervisor" &&
    ok "delegated: moved itself into $NAME/supervisor" ||
    notok "delegated: not in its leaf"
# The launcher found the subtree (its line names it); the parent takes
# nothing of a refused answer, so the reconciler is told no base.
echo "$out" | grep -qx "parent factory/test" &&
    ok "delegated: nothing of the refused layout taken by the parent" ||
    notok "delegated: reconciler's cgroup_parent"
echo "$out" | grep -qx "rc=1" && ok "delegated: refused (exit 1)" ||
    notok "delegated: not refused"
# (Other suites' daemons may have $UNI/factory; instance "test" is ours.)
[ ! -d "$UNI/factory/test" ] && [ ! -d "$CG/factory" ] &&
    ok "delegated: nothing made outside $NAME, nor below it before the check" ||
    notok "delegated: made $(ls -d "$UNI/factory/test" "$CG/factory" 2>/dev/null)"

# 2. Started again inside the leaf: the same subtree, the same paths.
out=$(view "exec $PROBE" "$NAME/supervisor" 2>&1; echo "rc=$?")
[ "$(echo "$out" | sed -n 1p)" = "$want" ] &&
    echo "$out" | grep -qx "0::/$NAME/supervisor" &&
    ok "restart in the leaf: the same subtree $NAME" ||
    notok "restart in the leaf: $(echo "$out" | tr '\n' ' ')"

# 3. The root cgroup: today's paths at the root, refused the same way.
out=$(view "exec $PROBE" "" 2>&1; echo "rc=$?")
# The root's list is the host's (hugetlb here, with v1 holding the rest).
wantr="refused: cgroup: v2 root /sys/fs/cgroup/factory/test: controller memory not available: /sys/fs/cgroup/cgroup.controllers has \"$(cat $UNI/cgroup.controllers)\""
[ "$(echo "$out" | sed -n 1p)" = "$wantr" ] &&
    echo "$out" | grep -qx "0::/" &&
    ok "root cgroup: the root's paths, not moved" ||
    notok "root cgroup: $(echo "$out" | tr '\n' ' ')"

# 4. A cgroup we may not write (a read-only view): not delegated.
out=$(unshare -m --propagation private sh -c '
	echo $$ >"'"$CG"'/cgroup.procs" &&
	umount -R /sys/fs/cgroup && mount -t cgroup2 -o ro cgroup2 \
	    /sys/fs/cgroup && exec "$0"' "$PROBE" 2>&1; echo "rc=$?")
# notdeleg WHY: the one line that refuses our own cgroup $NAME.
notdeleg() {
	echo "refused: cgroup: our own cgroup /sys/fs/cgroup/$NAME is not delegated to us ($1): start factoryd from a unit with Delegate=yes"
}
wantn=$(notdeleg "/sys/fs/cgroup/$NAME/cgroup.subtree_control not writable: Read-only file system")
[ "$(echo "$out" | sed -n 1p)" = "$wantn" ] &&
    echo "$out" | grep -qx "0::/$NAME" && echo "$out" | grep -qx "rc=1" &&
    ok "not delegated (read-only): refused, saying why, not moved" ||
    notok "not delegated: $(echo "$out" | tr '\n' ' ')"

# 6. Under systemd (a /run/systemd/system in the view) writable is not
# enough: without systemd's delegate xattr the cgroup is systemd's.
sdview() {
	unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system &&
		umount -R /sys/fs/cgroup && mount -t cgroup2 cgroup2 \
		    /sys/fs/cgroup &&
		echo $$ >"/sys/fs/cgroup/$1/cgroup.procs" && exec "$0"' \
	    "$PROBE" "$NAME" 2>&1
	echo "rc=$?"
}
out=$(sdview)
wantn=$(notdeleg "under systemd, and /sys/fs/cgroup/$NAME has no trusted.delegate mark")
[ "$(echo "$out" | sed -n 1p)" = "$wantn" ] &&
    echo "$out" | grep -qx "0::/$NAME" &&
    ok "systemd, no delegate xattr: not delegated, not moved" ||
    notok "systemd, no xattr: $(echo "$out" | tr '\n' ' ')"

# 7. The same with trusted.delegate=1, as Delegate=yes sets it.
if python3 -c 'import os, sys; os.setxattr(sys.argv[1], "trusted.delegate", b"1")' "$CG" 2>/dev/null; then
	out=$(sdview)
	[ "$(echo "$out" | sed -n 1p)" = "$want" ] &&
	    echo "$out" | grep -qx "0::/$NAME/supervisor" &&
	    ok "systemd, trusted.delegate=1: delegated, moved into the leaf" ||
	    notok "systemd, xattr: $(echo "$out" | tr '\n' ' ')"
	python3 -c 'import os, sys; os.removexattr(sys.argv[1], "trusted.delegate")' "$CG"
else
	echo "ok - systemd, trusted.delegate=1 # skip: no trusted xattrs on cgroup2 here"
fi

# 8. A mark the cgroup's owner can set herself: user.delegate (a user
# manager's) is not taken, on a root-owned cgroup or on hers; nor is a
# cgroup a user owns, or whose procs or subtree_control she owns, with
# or without systemd: she could move our processes out, or kill them.
if python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.delegate", b"1")' "$CG" 2>/dev/null; then
	out=$(sdview)
	[ "$(echo "$out" | sed -n 1p)" = "$wantn" ] &&
	    echo "$out" | grep -qx "0::/$NAME" &&
	    ok "systemd, user.delegate=1: not delegated, not moved" ||
	    notok "systemd, user.delegate: $(echo "$out" | tr '\n' ' ')"
	chown 69401:69401 "$CG"
	out=$(sdview)
	[ "$(echo "$out" | sed -n 1p)" = "$(notdeleg "/sys/fs/cgroup/$NAME is uid 69401's, not root's")" ] &&
	    ok "systemd, user.delegate=1 on a user's cgroup: not delegated" ||
	    notok "systemd, user's cgroup: $(echo "$out" | tr '\n' ' ')"
	chown 0:0 "$CG"
	python3 -c 'import os, sys; os.removexattr(sys.argv[1], "user.delegate")' "$CG"
else
	echo "ok - systemd, user.delegate=1 # skip: no user xattrs on cgroup2 here"
fi
for f in . cgroup.procs cgroup.subtree_control; do
	chown 69401:69401 "$CG/$f"
	out=$(view "exec $PROBE" "$NAME" 2>&1; echo "rc=$?")
	chown 0:0 "$CG/$f"
	p=/sys/fs/cgroup/$NAME/$f; [ "$f" = . ] && p=/sys/fs/cgroup/$NAME
	[ "$(echo "$out" | sed -n 1p)" = "$(notdeleg "$p is uid 69401's, not root's")" ] &&
	    echo "$out" | grep -qx "0::/$NAME" &&
	    ok "a user owns $f: not delegated, not moved" ||
	    notok "a user owns $f: $(echo "$out" | tr '\n' ' ')"
done

# 9. Our cgroup is root's, but its parent (or the parent's procs or
# subtree_control) is a user's: she could move our processes out
# through it (cgroup2 checks the common ancestor).  Not delegated.
mkdir "$CG/sub"
for f in . cgroup.procs cgroup.subtree_control; do
	chown 69401:69401 "$CG/$f"
	out=$(view "exec $PROBE" "$NAME/sub" 2>&1; echo "rc=$?")
	chown 0:0 "$CG/$f"
	p=/sys/fs/cgroup/$NAME/$f; [ "$f" = . ] && p=/sys/fs/cgroup/$NAME
	[ "$(echo "$out" | sed -n 1p)" = "refused: cgroup: our own cgroup /sys/fs/cgroup/$NAME/sub is not delegated to us ($p is uid 69401's, not root's): start factoryd from a unit with Delegate=yes" ] &&
	    echo "$out" | grep -qx "0::/$NAME/sub" &&
	    ok "a user owns the parent's $f: not delegated, not moved" ||
	    notok "a user owns the parent's $f: $(echo "$out" | tr '\n' ' ')"
done
rmdir "$CG/sub"

# 5. The real factoryd, started in the delegated cgroup: one line.
view "exec $O/factoryd -d -f $T/factoryd.conf" "$NAME" >"$T/fd.out" 2>&1
rc=$?
sed 's/^/# /' "$T/fd.out"
[ "$rc" != 0 ] && grep -qF "sandbox: cgroup: v2 root /sys/fs/cgroup/$NAME/factory/" "$T/fd.out" &&
    grep -qF "controller memory not available: /sys/fs/cgroup/$NAME/cgroup.controllers" "$T/fd.out" &&
    ok "factoryd: refuses to start, naming the controller and the file" ||
    notok "factoryd: exit $rc"
inst=$(sed -n "s|.*/sys/fs/cgroup/$NAME/factory/\([0-9a-f]*\) .*|\1|p" "$T/fd.out")
[ -n "$inst" ] && [ ! -d "$UNI/factory/$inst" ] && [ ! -d "$CG/factory/$inst" ] &&
    ok "factoryd: nothing made outside $NAME (instance $inst)" ||
    notok "factoryd: instance '$inst' made"
for d in "$CG"/factory/*; do [ -d "$d" ] && rmdir "$d"; done

# 10. The real factoryd where systemd started it without Delegate=: in
# the view, /run/systemd/system and our cgroup without the mark (the
# unit's cgroup), and again with the hierarchy read-only (systemd's
# ProtectControlGroups=).  It stops at start with one line that says
# so and names the fix, and makes nothing at the hierarchy's root.
inst=$(printf %s "$(realpath "$T/state")" | sha256sum | cut -c1-8)
[ ! -d "$CG/supervisor" ] || rmdir "$CG/supervisor"	# cases 1, 2, 7
for how in "no mark" "read-only"; do
	ro=; [ "$how" = read-only ] && ro="-o ro"
	unshare -m --propagation private sh -c '
		echo $$ >"$1/cgroup.procs" &&
		mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system &&
		umount -R /sys/fs/cgroup && mount -t cgroup2 $3 cgroup2 \
		    /sys/fs/cgroup &&
		exec "$0" -d -f "$2"' "$O/factoryd" "$CG" "$T/factoryd.conf" \
	    "$ro" >"$T/fd.out" 2>&1
	rc=$?
	sed 's/^/# /' "$T/fd.out"
	if [ "$how" = read-only ]; then
		why="/sys/fs/cgroup/$NAME/cgroup.subtree_control not writable: Read-only file system"
	else
		why="under systemd, and /sys/fs/cgroup/$NAME has no trusted.delegate mark"
	fi
	line="sandbox: cgroup: our own cgroup /sys/fs/cgroup/$NAME is not delegated to us ($why): start factoryd from a unit with Delegate=yes"
	[ "$rc" != 0 ] && grep -qF "$line" "$T/fd.out" &&
	    ok "factoryd, systemd without Delegate= ($how): stops, saying so" ||
	    notok "factoryd, systemd without Delegate= ($how): exit $rc, want \"$line\""
	[ ! -d "$UNI/factory/$inst" ] && [ ! -d "$CG/factory/$inst" ] &&
	    [ ! -d "$CG/supervisor" ] &&
	    ok "factoryd, systemd without Delegate= ($how): nothing made" ||
	    notok "factoryd, systemd without Delegate= ($how): made $(ls -d "$UNI/factory/$inst" "$CG/factory/$inst" "$CG/supervisor" 2>/dev/null)"
done

regress_done
