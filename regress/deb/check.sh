#!/bin/sh
# make check-deb: the Debian package, installed into a fresh Debian 12
# root made here by debootstrap from this machine's mirror.  Checks the
# users, modes and conffile, the unit (systemd-analyze verify), starts
# the installed factoryd as the installed unit would (unitns.sh below):
# its capability bounding set, no_new_privs, its seccomp settings as
# systemd 252 installs them (prog_unitenv.c, unitenv.sh) and its file
# system settings in a mount namespace of the daemon's own, runs one
# attempt with the installed factoryctl, then purges and checks what
# must go and what must stay.
#
# Not a regress/*/run.sh: it needs the mirror and a few minutes, so
# .ci/run calls it after make check.  Everything it mounts lives in a
# mount and pid namespace of its own (gone with it); its directory is
# removed on exit; the cgroups of its factoryd are removed by exact
# path.  TAP lines like the suites'.
#
# Usage: DEB=path/factory_V_ARCH.deb sh regress/deb/check.sh

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${DEB:?DEB=path of the package}"
case $DEB in /*) ;; *) DEB=$PWD/$DEB ;; esac
[ "$(id -u)" = 0 ] || { echo "check-deb: run as root" >&2; exit 1; }

T=$(mktemp -d /var/tmp/factory-deb.XXXXXX)
R=$T/root
INNER=""
cleanup() {
	if [ -n "$INNER" ] && kill -0 "$INNER" 2>/dev/null; then
		kill -KILL "$INNER" 2>/dev/null
		wait "$INNER" 2>/dev/null
	fi
	# The installed factoryd's cgroups, by its instance tag.
	if [ -f "$T/instance" ]; then
		inst=$(cat "$T/instance")
		for h in /sys/fs/cgroup/*/factory/"$inst" \
		    /sys/fs/cgroup/factory/"$inst"; do
			[ -d "$h" ] || continue
			find "$h" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() {	# name, command...
	name=$1; shift
	if "$@" >"$T/out" 2>&1; then ok "$name"; else
		notok "$name"; sed 's/^/# /' "$T/out" | tail -n 20; fi
}

# The mirror apt uses here (deb822 or one-line sources).
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n 's/^URIs: *\([^ ]*\).*/\1/p' | grep -v security | head -n 1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' \
    /etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

echo "# debootstrap bookworm from $mirror into $R"
cache=/var/cache/factory-debootstrap
mkdir -p "$cache"
if ! debootstrap --variant=minbase --cache-dir="$cache" bookworm "$R" \
    "$mirror" >"$T/debootstrap.log" 2>&1; then
	notok "debootstrap"; tail -n 20 "$T/debootstrap.log" | sed 's/^/# /'
	echo "1..$n"; exit 1
fi
ok "debootstrap: a fresh Debian 12 root"
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp "$DEB" "$R/tmp/factory.deb"

# A repository, its published remote and pull records, made with the
# host's git: the installed root needs no git for factory to work.
mkdir -p "$R/srv/git"
git init -q -b main "$T/work"
printf 'hello\n' >"$T/work/greeting"
git -C "$T/work" add -A
git -C "$T/work" -c user.name=t -c user.email=t@localhost commit -qm one
git clone -q --bare "$T/work" "$R/srv/git/greeter.git"
git clone -q --bare "$T/work" "$R/srv/git/greeter-published.git"
mkdir "$R/srv/git/pulls"

# Its own state dir: its cgroups (factory/<instance>, named by the
# state dir's path) never meet those of a factoryd installed here.
cat >"$R/root/test.conf" <<'CONF'
state-dir: /var/lib/factory/regress
attempt-uids: 63900-63949
repositories:
  greeter:
    path: /srv/git/greeter.git
    publish:
      forge: local
      remote: /srv/git/greeter-published.git
      pulls: /srv/git/pulls
CONF
cat >"$R/root/m.yaml" <<'MAN'
repository: greeter
baseline: main
scope: ["greeting"]
agent: ["/bin/sh", "-c", "echo 'hello, world' > greeting"]
validate: ["/bin/grep", "-q", "world", "greeting"]
limits: {wall: 60s, cpu: 30s, memory: 256M, pids: 64}
network: none
title: "Greet the world"
approval: auto
MAN

# The unit's seccomp settings: a static emulation, so the root needs
# no libseccomp of the build's, and the settings read from the unit.
if cc -O2 -static -D_GNU_SOURCE -o "$T/prog_unitenv" \
    "$top/regress/deb/prog_unitenv.c" -lseccomp >"$T/cc.log" 2>&1; then
	ok "prog_unitenv: the unit's seccomp settings, emulated"
else
	notok "prog_unitenv"; sed 's/^/# /' "$T/cc.log"
fi
cp "$top/regress/deb/unitenv.sh" "$T/unitenv.sh"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$top/debian/factory.factoryd.service")
echo "# bounding set: $caps"
printf %s /var/lib/factory/regress | sha256sum | cut -c1-8 >"$T/instance"

# The unit's file system settings, in the daemon's own mount namespace
# (unshare --mount runs this), then the unit's others: unit, program.
# A setting of these kinds the emulation does not know stops it.
cat >"$T/unitns.sh" <<'NS'
set -eu
U=$1
shift
. /mnt/t/unitenv.sh
ro() { [ ! -d "$1" ] || { mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"; }; }
for k in ProtectProc ProcSubset PrivateDevices PrivateNetwork \
    ProtectKernelTunables ProtectControlGroups ReadOnlyPaths \
    InaccessiblePaths TemporaryFileSystem BindPaths; do
	! grep -q "^$k=" "$U" || { echo "unitns: $k= not emulated" >&2; exit 2; }
done
case $(sed -n 's/^ProtectSystem=//p' "$U") in
full)	for d in /usr /boot /efi /etc; do ro "$d"; done ;;
yes)	for d in /usr /boot /efi; do ro "$d"; done ;;
"")	;;
*)	echo "unitns: ProtectSystem= not emulated" >&2; exit 2 ;;
esac
case $(sed -n 's/^ProtectHome=//p' "$U") in
read-only) for d in /home /root /run/user; do ro "$d"; done ;;
"")	;;
*)	echo "unitns: ProtectHome= not emulated" >&2; exit 2 ;;
esac
# Writable again below what was made read-only: a bind of its own,
# which starts with its source's read-only flag.
for p in $(sed -n 's/^ReadWritePaths=//p' "$U"); do
	mount --bind "$p" "$p"
	mount -o remount,bind,rw "$p"
done
if unitenv_yes "$U" PrivateTmp; then
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mount -t tmpfs -o mode=1777 tmpfs /var/tmp
fi
unitenv "$U" /mnt/t/prog_unitenv "$@"
NS

# Inside: its own mount and pid namespaces, so every mount and process
# below ends with it.  The new root is pivoted to, not chroot(2)ed
# into: a chrooted process may not make a user namespace, and every
# sandbox does.  This directory is seen there as /mnt/t.
cat >"$T/inner.sh" <<'INNER'
set -eu
R=$1 T=$2
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=755 tmpfs "$R/run"
mkdir -p "$R/mnt/t" "$R/.oldroot"
mount --bind "$T" "$R/mnt/t"
cd "$R"
pivot_root . .oldroot
exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C /bin/sh /mnt/t/stage2.sh
INNER

cat >"$T/stage2.sh" <<'INNER'
set -u
T=/mnt/t R=
umount -l /.oldroot
rmdir /.oldroot
inroot() { "$@"; }
n=0
ok() { n=$((n + 1)); echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() {
	name=$1; shift
	if "$@" >"$T/out" 2>&1; then ok "$name"; else
		notok "$name"; sed 's/^/# /' "$T/out" | tail -n 20; fi
}

check "apt-get install ./factory.deb" inroot sh -c \
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/factory.deb'
for u in _factoryw _factoryv _factoryr _factoryp _factorye _factoryi _factoryg \
    _factoryf; do
	check "user $u exists, no login" inroot sh -c \
	    "getent passwd $u | grep -q ':/usr/sbin/nologin\$'"
done
check "group _factoryctl exists" inroot getent group _factoryctl
check "/var/lib/factory is 0755 root" inroot sh -c \
    '[ "$(stat -c %a:%U /var/lib/factory)" = 755:root ]'
check "/etc/factory/keys is 0711 root" inroot sh -c \
    '[ "$(stat -c %a:%U /etc/factory/keys)" = 711:root ]'
check "/etc/factoryd.conf is a conffile" inroot sh -c \
    'dpkg-query -W -f="\${Conffiles}\n" factory | grep -q "^ /etc/factoryd.conf "'
check "the installed sample parses" inroot /usr/sbin/factoryd -n
check "binaries root-owned, not group or other writable" inroot sh -c \
    'for f in /usr/sbin/factoryd /usr/sbin/factoryctl /usr/libexec/factory/*; do
	[ "$(stat -c %U:%a "$f")" = root:755 ] || { echo "$f"; exit 1; }; done'
check "no keys shipped" inroot sh -c '[ -z "$(ls -A /etc/factory/keys)" ]'
if inroot sh -c 'command -v systemd-analyze' >/dev/null 2>&1; then
	check "systemd-analyze verify factoryd.service" inroot \
	    systemd-analyze verify --man=no /lib/systemd/system/factoryd.service
else
	ok "# SKIP systemd-analyze: not installed in the root"
fi

# The publication target belongs to the publisher (factoryd.conf(5)).
chown -R _factoryp:_factoryp /srv/git/greeter-published.git /srv/git/pulls

# The installed factoryd, as the installed unit starts it (-d -k).
U=/lib/systemd/system/factoryd.service
unshare --mount --propagation private sh /mnt/t/unitns.sh "$U" \
    /usr/sbin/factoryd -d -k -f /root/test.conf 2>"$T/factoryd.log" &
pid=$!
i=0
while ! inroot test -S /run/factoryd.sock && [ $i -lt 100 ]; do
	kill -0 $pid 2>/dev/null || break
	sleep 0.1; i=$((i + 1))
done
check "installed factoryd starts under the unit's settings" inroot \
    test -S /run/factoryd.sock
# A mount of the daemon's: its options, and its type.
mntopt() { awk -v m="$2" '$5 == m {o = $6} END {print o}' /proc/$1/mountinfo; }
mnttype() { awk -v m="$2" '$5 == m {sub(/.* - /, ""); t = $1} END {print t}' /proc/$1/mountinfo; }
check "it runs under the unit's filters and no_new_privs" sh -c \
    "grep -q '^Seccomp:[[:space:]]*2' /proc/$pid/status &&
     grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$pid/status"
check "its /usr is read-only (ProtectSystem=full)" sh -c \
    "echo $(mntopt $pid /usr) | grep -q '^ro'"
check "its /etc is read-only, its keys not (ReadWritePaths=)" sh -c \
    "echo $(mntopt $pid /etc) | grep -q '^ro' &&
     echo $(mntopt $pid /etc/factory/keys) | grep -q '^rw'"
check "its /root is read-only (ProtectHome=read-only)" sh -c \
    "echo $(mntopt $pid /root) | grep -q '^ro'"
check "its /tmp is its own (PrivateTmp=yes)" \
    [ "$(mnttype $pid /tmp)" = tmpfs ]
check "its audit log reads /dev/kmsg (CAP_SYSLOG)" \
    sh -c "! grep 'audit: /dev/kmsg' '$T/factoryd.log'"
check "factoryd -k made the keys, 0600 and 0400" inroot sh -c \
    '[ "$(stat -c %a /etc/factory/keys/receipt.key)" = 600 ] &&
     [ "$(stat -c %a /etc/factory/keys/verifier.key)" = 400 ]'
i=0
while [ $i -lt 50 ] && ! inroot factoryctl status 2>/dev/null | grep -q running; do
	sleep 0.1; i=$((i + 1))
done
inroot factoryctl submit -w /root/m.yaml >"$T/submit.out" 2>&1
st=$?
id=$(head -n 1 "$T/submit.out")
if [ $st -eq 0 ] && grep -q published "$T/submit.out"; then
	ok "installed factoryctl: an attempt published ($id)"
else
	notok "installed factoryctl: an attempt published"
	sed 's/^/# /' "$T/submit.out"; tail -n 30 "$T/factoryd.log" | sed 's/^/# /'
fi
check "the pull record is there" test -f "$R/srv/git/pulls/$id.json"
inroot factoryctl receipts "$id" >"$T/r.txt" 2>&1
check "the receipts verify with the installed factoryctl" \
    inroot factoryctl verify /dev/stdin <"$T/r.txt"
# An operator: not root, in _factoryctl (the rw socket), and a user
# outside it (the .ro socket only), both served by the bounded daemon.
inroot useradd -m -G _factoryctl op
inroot useradd -m other
check "an operator in _factoryctl is served on the rw socket" inroot \
    setpriv --reuid op --regid op --init-groups factoryctl status
check "another user is served on the read-only socket" inroot \
    setpriv --reuid other --regid other --init-groups \
    factoryctl -s /run/factoryd.sock.ro status
check "another user is refused the rw socket" inroot sh -c \
    '! setpriv --reuid other --regid other --init-groups factoryctl cancel a-00000000-0001'
kill -TERM $pid
wait $pid
check "factoryd stops on SIGTERM" sh -c "! kill -0 $pid 2>/dev/null"

check "apt-get purge factory" inroot sh -c \
    'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq factory'
check "purge: binaries gone" inroot sh -c \
    '[ ! -e /usr/sbin/factoryd ] && [ ! -e /usr/libexec/factory ]'
check "purge: conffile gone" inroot sh -c '[ ! -e /etc/factoryd.conf ]'
check "purge: state and keys gone" inroot sh -c \
    '[ ! -e /var/lib/factory ] && [ ! -e /etc/factory/keys ]'
check "purge: the users stay" inroot getent passwd _factoryw _factoryp
INNER

unshare --mount --pid --fork --propagation private \
    sh "$T/inner.sh" "$R" "$T" >"$T/inner.out" 2>&1 &
INNER=$!
wait "$INNER"
INNER=""
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) notok "${line#not ok - }" ;;
	*) echo "$line" ;;
	esac
done <"$T/inner.out"
echo "1..$n"
[ $failed -eq 0 ] && [ $n -gt 20 ]
