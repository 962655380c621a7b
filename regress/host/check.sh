#!/bin/sh
# make check-host: the Debian package on real Debian hosts, booted under
# qemu (software emulation: no KVM here) with systemd as pid 1 and pure
# cgroup v2, one boot per kernel of the matrix:
#
#	6.1	bookworm's linux-image-amd64 (Debian 12's stock kernel)
#	6.12	bookworm-backports' (Debian 13's generation too)
#	newest	trixie-backports'
#
# Each boot runs the whole of guest.sh (apt install, enable --now,
# reload, an attempt that publishes, the cgroup and limits of a running
# agent, cancel, memory bombs, a fork bomb, restart, stop, a broken
# configuration, systemd-analyze security) on every kernel: the three
# differ exactly in what the attempts meet (memfd_noexec, overlay on
# detached mounts), so no kernel gets a subset.  Measured here on a
# loaded 2-core machine (load 12-17): debootstrap 7-9 min, the kernels
# 1 min, their modules and initrds 1 min, the image 40 s; a boot to
# multi-user 40-75 s, apt install 80 s, one boot to its result 8-10 min
# while the daemon fails (bounded waits), less once attempts run.
# FACTORY_HOST_BOOT="6.1 6.12" boots those kernels only.
#
# The root (debootstrap minbase of bookworm, systemd, udev, dbus, the
# package's Depends, the three kernels' modules) is made once as an ext4
# image in $FACTORY_HOST_CACHE (/var/cache/factory-host), keyed by a
# hash of what went into it (RECIPE below, the package list, the kernel
# suites, the mirror, the unit baked in), and rebuilt when that changes.
# Each kernel's vmlinuz and its initrd (made here: busybox, virtio and
# ext4; mkinitramfs took a minute a kernel) sit beside it.  Each boot
# writes to a qcow2 overlay of its own in a temp dir; the package, guest.sh and the
# test repositories come on a second, read-only disk made per run.
# Results come back on the serial console, lines prefixed
# "FACTORY-HOST: ".
#
# Prints one TAP line per check prefixed with the kernel, each kernel's
# boot-to-result time, and "N passed, N failed"; exits non-zero on any
# failure.  A boot without a result after FACTORY_HOST_TIMEOUT seconds
# (900), or not powered off two minutes after it, is killed by pid.  Everything else it made (temp dir,
# mounts in a namespace of its own) goes on exit.
#
# FACTORY_HOST_LOGS=dir keeps each boot's serial log there.
#
# Usage: DEB=path/factory_V_ARCH.deb sh regress/host/check.sh

set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${DEB:?DEB=path of the package}"
case $DEB in /*) ;; *) DEB=$PWD/$DEB ;; esac
[ "$(id -u)" = 0 ] || { echo "check-host: run as root" >&2; exit 1; }

# Bump when the way the image is made changes.
RECIPE=2
CACHE=${FACTORY_HOST_CACHE:-/var/cache/factory-host}
KERNELS="bookworm bookworm-backports trixie-backports"
BOOT=${FACTORY_HOST_BOOT:-all}
TIMEOUT=${FACTORY_HOST_TIMEOUT:-900}
PREFIX="FACTORY-HOST: "

T=$(mktemp -d /var/tmp/factory-host.XXXXXX)
QEMU=""
cleanup() {
	if [ -n "$QEMU" ] && kill -0 "$QEMU" 2>/dev/null; then
		kill -KILL "$QEMU" 2>/dev/null
		wait "$QEMU" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

n=0
passed=0
failed=0
ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
finish() {
	echo "1..$n"
	echo "$passed passed, $failed failed"
	[ $failed -eq 0 ] && [ $n -gt 0 ]
	exit $?
}
now() { date +%s; }
t_start=$(now)

# What this script runs, installed if missing: a fresh CI machine has
# none of qemu.
need=""
command -v qemu-system-x86_64 >/dev/null || need="$need qemu-system-x86"
command -v qemu-img >/dev/null || need="$need qemu-utils"
command -v debootstrap >/dev/null || need="$need debootstrap"
command -v mkfs.ext4 >/dev/null || need="$need e2fsprogs"
command -v git >/dev/null || need="$need git"
command -v xz >/dev/null || need="$need xz-utils"
command -v zstd >/dev/null || need="$need zstd"
[ -x /bin/busybox ] || need="$need busybox-static"
if [ -n "$need" ]; then
	echo "# installing:$need"
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $need; } \
	    >"$T/apt.log" 2>&1; then
		notok "install$need"; tail -n 20 "$T/apt.log" | sed 's/^/# /'
		finish
	fi
fi

# The mirror apt uses here (deb822 or one-line sources), as check-deb.
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n 's/^URIs: *\([^ ]*\).*/\1/p' | grep -v security | head -n 1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' \
    /etc/apt/sources.list 2>/dev/null | grep -v security | head -n 1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

# The guest's packages: systemd and what the package depends on, first
# alternative of each, so apt installs it offline in the guest.
deps=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed -e 's/|.*//' \
    -e 's/(.*)//' -e 's/[[:space:]]//g' | grep -v '^$' | sort -u |
    tr '\n' ',')
PKGS="systemd-sysv,udev,dbus,kmod,${deps%,}"
key=$( { echo "$RECIPE $PKGS $KERNELS $mirror"; cat "$here/factory-host-test.service"; } |
    sha256sum | cut -c1-16)
IMG=$CACHE/$key

# apt for the kernels: a state of its own per suite, the host's
# /etc/apt untouched.
kernel_fetch() {	# suite, dir: downloads its linux-image .deb there
	a=$CACHE/apt/$1
	mkdir -p "$a/lists/partial" "$a/archives/partial" "$a/parts" "$a/prefs"
	: >"$a/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $1 main" \
	    >"$a/sources.list"
	set -- "$1" "$2" -o Dir::Etc::SourceList="$a/sources.list" \
	    -o Dir::Etc::SourceParts="$a/parts" \
	    -o Dir::Etc::Preferences="$a/prefs/none" \
	    -o Dir::Etc::PreferencesParts="$a/prefs" \
	    -o Dir::State="$a" -o Dir::State::Lists="$a/lists" \
	    -o Dir::State::Status="$a/status" -o Dir::Cache="$a" \
	    -o Dir::Cache::Archives="$a/archives" -o Debug::NoLocking=1
	suite=$1 dir=$2; shift 2
	apt-get "$@" update -qq || return 1
	pkg=$(apt-cache "$@" depends linux-image-amd64 |
	    sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1)
	[ -n "$pkg" ] || { echo "no linux-image-amd64 in $suite"; return 1; }
	# Newer kernels are split: linux-binary-V has vmlinuz,
	# linux-modules-V the modules, linux-base-V their config and lists.
	more=$(apt-cache "$@" depends "$pkg" |
	    sed -n 's/^ *Depends: \(linux-\(binary\|modules\|base\)-[0-9][^ ]*\).*/\1/p')
	(cd "$dir" && apt-get "$@" download "$pkg" $more) || return 1
}

# Inside a mount namespace of its own: the kernels and their modules
# into the root.  $1 the root, $2 the dir of the kernels' .debs, $3
# where the kernels go.
cat >"$T/prep.sh" <<'PREP'
set -eu
R=$1 K=$2 OUT=$3
# Unpacked aside: dpkg-deb -x would replace the root's /lib symlink by
# a directory.
rm -rf "$K/x"
mkdir -p "$K/x"
for deb in "$K"/*.deb; do
	dpkg-deb -x "$deb" "$K/x"
done
mkdir -p "$R/usr/lib/modules"
for m in "$K"/x/lib/modules/* "$K"/x/usr/lib/modules/*; do
	[ -d "$m" ] || continue
	rm -rf "$R/usr/lib/modules/${m##*/}"
	mv "$m" "$R/usr/lib/modules/"
done
mkdir -p "$R/boot"
# mkinitramfs reads the kernel's config in /boot; split kernels keep it
# and vmlinuz beside their modules.
if [ -d "$K/x/boot" ]; then mv "$K"/x/boot/* "$R/boot/"; fi
for m in "$R"/usr/lib/modules/*; do
	v=${m##*/}
	for f in vmlinuz config System.map; do
		if [ -f "$m/$f" ] && [ ! -f "$R/boot/$f-$v" ]; then
			cp "$m/$f" "$R/boot/$f-$v"
		fi
	done
done
# Drivers for hardware the guest has not: a third of the image, and of
# the time mkfs.ext4 takes to copy it.
for v in $(ls "$R/usr/lib/modules"); do
	k=$R/usr/lib/modules/$v/kernel
	rm -rf "$k/drivers/gpu" "$k/drivers/media" "$k/drivers/net/wireless" \
	    "$k/drivers/net/ethernet" "$k/drivers/infiniband" \
	    "$k/drivers/staging" "$k/drivers/scsi" "$k/drivers/usb" \
	    "$k/drivers/bluetooth" "$k/drivers/iio" "$k/drivers/isdn" \
	    "$k/drivers/mtd" "$k/drivers/comedi" "$k/drivers/hwmon" \
	    "$k/drivers/input" "$k/drivers/hid" "$k/sound" \
	    "$k/net/wireless" "$k/net/mac80211" "$k/net/bluetooth"
	chroot "$R" depmod -a "$v"
	cp "$R/boot/vmlinuz-$v" "$OUT/"
done
PREP

# An initrd of its own, a second per kernel where mkinitramfs takes a
# minute: busybox, the modules that mount the root (from modules.dep,
# dependencies first; none where built in), an init that loads them,
# mounts /dev/vda and switches to it.
initrd() {	# root, version, output file
	md=$1/usr/lib/modules/$2 i=$T/initrd.$2
	rm -rf "$i"
	mkdir -p "$i/bin" "$i/dev" "$i/root" "$i/m"
	cp /bin/busybox "$i/bin/"
	: >"$i/order"
	for want in virtio_pci virtio_blk crc32c_generic crc32c-intel ext4; do
		line=$(grep -E "/$want\.ko(\.xz|\.zst)?:" "$md/modules.dep") ||
		    continue
		for f in $(echo "$line" | tr -d : |
		    awk '{ for (j = NF; j > 1; j--) print $j; print $1 }'); do
			b=${f##*/}; b=${b%.xz}; b=${b%.zst}
			grep -qx "$b" "$i/order" && continue
			case $f in
			*.xz) xz -dc "$md/$f" ;;
			*.zst) zstd -qdc "$md/$f" ;;
			*) cat "$md/$f" ;;
			esac >"$i/m/$b" || return 1
			echo "$b" >>"$i/order"
		done
	done
	cat >"$i/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t devtmpfs dev /dev
# Dependencies first; a second round for any that came too early.
for r in 1 2; do
	for m in $(/bin/busybox cat /order); do
		/bin/busybox insmod "/m/$m" 2>/dev/null
	done
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 600 ]; do
	/bin/busybox sleep 0.1; i=$((i + 1))
done
if ! /bin/busybox mount -t ext4 -o rw /dev/vda /root; then
	echo "initrd: cannot mount /dev/vda"; /bin/busybox poweroff -f
fi
/bin/busybox mount --move /dev /root/dev
exec /bin/busybox switch_root /root /sbin/init
INIT
	chmod 755 "$i/init"
	(cd "$i" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) \
	    >"$3" || return 1
	rm -rf "$i"
}

# One check-host at a time makes or uses the cache.
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock 9
if [ ! -f "$IMG/done" ]; then
	echo "# making the root $IMG (debootstrap bookworm from $mirror)"
	mkdir -p "$CACHE"
	# Earlier keys' images go: one set at a time.
	for d in "$CACHE"/*/; do
		case $d in "$CACHE/tmp.$key/") continue ;; esac
		[ -f "$d/done" ] || [ -f "$d/debootstrapped" ] ||
		    [ -d "$d/root" ] || continue
		rm -rf "$d"
	done
	# A root debootstrap finished is kept for the next try if a later
	# step fails.
	B=$CACHE/tmp.$key
	R=$B/root
	t0=$(now)
	if [ ! -f "$B/debootstrapped" ]; then
		rm -rf "$B"
		mkdir -p "$B" "$CACHE/debootstrap"
		if ! unshare --mount --propagation private debootstrap \
		    --variant=minbase --include="$PKGS" \
		    --cache-dir="$CACHE/debootstrap" bookworm "$R" "$mirror" \
		    >"$T/debootstrap.log" 2>&1; then
			notok "debootstrap"
			tail -n 20 "$T/debootstrap.log" | sed 's/^/# /'
			rm -rf "$B"; finish
		fi
		: >"$B/debootstrapped"
	fi
	rm -rf "$B/debs"
	mkdir -p "$B/kernels" "$B/debs"
	t1=$(now)
	echo "# debootstrap: $((t1 - t0))s"
	for s in $KERNELS; do
		if ! kernel_fetch "$s" "$B/debs" >"$T/kernel.log" 2>&1; then
			notok "download the kernel of $s"
			tail -n 20 "$T/kernel.log" | sed 's/^/# /'
			finish
		fi
	done
	t2=$(now)
	echo "# kernels downloaded: $((t2 - t1))s ($(ls "$B/debs" | tr '\n' ' '))"
	if ! unshare --mount --propagation private sh "$T/prep.sh" "$R" \
	    "$B/debs" "$B/kernels" >"$T/prep.log" 2>&1; then
		notok "kernels and initrds"; tail -n 20 "$T/prep.log" | sed 's/^/# /'
		finish
	fi
	for k in "$B"/kernels/vmlinuz-*; do
		v=${k##*/vmlinuz-}
		if ! initrd "$R" "$v" "$B/kernels/initrd.img-$v"; then
			notok "the initrd of $v"; finish
		fi
	done
	t3=$(now)
	echo "# kernels' modules and initrds: $((t3 - t2))s"
	# The guest as a test host: no getty on the console, no timers,
	# no first-boot prompts; the test unit enabled.
	echo factory-host >"$R/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 factory-host\n' >"$R/etc/hosts"
	printf '/dev/vda / ext4 rw,noatime 0 0\n' >"$R/etc/fstab"
	tr -d - </proc/sys/kernel/random/uuid >"$R/etc/machine-id"
	for u in serial-getty@ttyS0.service getty@tty1.service \
	    apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	    fstrim.timer e2scrub_reap.service systemd-firstboot.service; do
		ln -sf /dev/null "$R/etc/systemd/system/$u"
	done
	cp "$here/factory-host-test.service" "$R/etc/systemd/system/"
	mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
	ln -sf ../factory-host-test.service \
	    "$R/etc/systemd/system/multi-user.target.wants/factory-host-test.service"
	rm -rf "$R/var/cache/apt/archives/"*.deb "$R/boot/"*
	size=$(du -sm "$R" | cut -f1)
	if ! mkfs.ext4 -q -F -L factory-host -d "$R" "$B/root.img" \
	    "$((size + size / 4 + 3072))M" >"$T/mkfs.log" 2>&1; then
		notok "mkfs.ext4 -d of the root"; sed 's/^/# /' "$T/mkfs.log"
		finish
	fi
	rm -rf "$R" "$B/debs"
	t4=$(now)
	echo "# image: $((t4 - t3))s (${size} MB used)"
	echo "$PKGS" >"$B/packages"
	date -u >"$B/done"
	mv "$B" "$IMG"
	echo "# root, kernels and image: $((t4 - t0))s"
fi

# The second disk: the package, the test, the repositories (made with
# the host's git: the guest needs none).
D=$T/disk
mkdir -p "$D/git"
cp "$DEB" "$D/factory.deb"
cp "$here/guest.sh" "$D/guest.sh"
# A client of the control socket's (regress/control), libbsd its one
# library, as the package's: where the tests were built.
[ -x "${O:-build}/regress/control/prog_ctlflood" ] &&
    cp "${O:-build}/regress/control/prog_ctlflood" "$D/"
git init -q -b main "$T/work"
printf 'hello\n' >"$T/work/greeting"
git -C "$T/work" add -A
git -C "$T/work" -c user.name=t -c user.email=t@localhost commit -qm one
git clone -q --bare "$T/work" "$D/git/greeter.git"
git clone -q --bare "$T/work" "$D/git/greeter-published.git"
mkfs.ext4 -q -F -L factory-test -d "$D" "$T/disk.img" 256M >/dev/null 2>&1 ||
    { notok "mkfs.ext4 of the test disk"; finish; }

for v in $(ls "$IMG/kernels" | sed -n 's/^vmlinuz-//p' | sort -V); do
	label=$(echo "$v" | sed 's/^\([0-9]*\.[0-9]*\).*/\1/')
	case " $BOOT " in *" all "*|*" $label "*) ;; *) continue ;; esac
	qemu-img create -q -f qcow2 -F raw -b "$IMG/root.img" \
	    "$T/over.qcow2" >/dev/null || { notok "$label: qemu-img"; continue; }
	log=$T/serial.$v
	b0=$(now)
	qemu-system-x86_64 -accel tcg -cpu max -m 4G -smp 2 -nic none \
	    -display none -monitor none -serial "file:$log" -no-reboot \
	    -kernel "$IMG/kernels/vmlinuz-$v" \
	    -initrd "$IMG/kernels/initrd.img-$v" \
	    -append "root=/dev/vda rw console=ttyS0 quiet loglevel=3 panic=1 systemd.show_status=0 systemd.firstboot=off" \
	    -drive "file=$T/over.qcow2,if=virtio,format=qcow2" \
	    -drive "file=$T/disk.img,if=virtio,format=raw,readonly=on" \
	    >"$T/qemu.out" 2>&1 &
	QEMU=$!
	# The result is in once the guest said "done"; it then has two
	# minutes to power off.
	end=$((b0 + TIMEOUT)) b1=""
	while kill -0 "$QEMU" 2>/dev/null && [ "$(now)" -lt $end ]; do
		if [ -z "$b1" ] && grep -aq "${PREFIX}done" "$log" 2>/dev/null; then
			b1=$(now); end=$((b1 + 120))
		fi
		sleep 1
	done
	if kill -0 "$QEMU" 2>/dev/null; then
		kill -KILL "$QEMU"
		if [ -n "$b1" ]; then
			echo "# $label: no power-off $((end - b1))s after the result: killed"
		else
			echo "# $label: killed after ${TIMEOUT}s"
		fi
	fi
	wait "$QEMU" 2>/dev/null
	QEMU=""
	[ -n "$b1" ] || b1=$(now)
	# systemd forwards the test's lines to the console after a
	# timestamp and the unit's name: the prefix marks where they start.
	tr -d '\r' <"$log" | sed -n "s/.*$PREFIX//p" >"$log.txt"
	if [ -n "${FACTORY_HOST_LOGS:-}" ]; then
		mkdir -p "$FACTORY_HOST_LOGS"
		cp "$log" "$FACTORY_HOST_LOGS/serial.$v"
	fi
	up=$(sed -n 's/^# up \([0-9.]*\).*/\1/p' "$log.txt" | head -n 1)
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$label: $(echo "${line#ok }" | sed 's/^[0-9]* - //')" ;;
		"not ok "*) notok "$label: $(echo "${line#not ok }" |
		    sed 's/^[0-9]* - //')" ;;
		"#"*) echo "# $label:${line#\#}" ;;
		esac
	done <"$log.txt"
	if grep -q "^done" "$log.txt"; then
		ok "$label: the guest ran its test to the end"
	else
		notok "$label: the guest ran its test to the end"
		tr -d '\r' <"$log" | tail -n 40 | sed 's/^/# /'
	fi
	echo "# $label ($v): boot to result $((b1 - b0))s (multi-user at ${up:-?}s)"
	rm -f "$T/over.qcow2"
done
echo "# check-host: $(( $(now) - t_start ))s in all"
finish
