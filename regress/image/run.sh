#!/bin/sh
# The image store through the real daemon and factoryctl: imports from
# a directory, a tar, a tar.gz, a tar.zst, an OCI layout made by umoci
# (directory and oci-archive tar), the same digest by different routes,
# hostile archives refused or stripped, whiteouts, rm while in use,
# verify after a byte changed behind the store's back, a full disk, and
# factory-image's own uid and policy.  Needs root.

. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "not ok - image: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "image: needs jq"
command -v python3 >/dev/null || fail "image: needs python3"

D=$(cd "$(dirname "$0")" && pwd)
T=$(regress_tmpdir)
UIDBASE=65100
SOCK=$T/factoryd.sock
# The repositories the config names: without them the worker, the
# verifiers, the reconciler and the publisher die at start, again and
# again, and no wait for the children ever ends.
make_repos "$T" $((UIDBASE + 4))
write_attempt_conf "$T" $UIDBASE 65110-65119
cat >>"$T/factoryd.conf" <<CONF
images:
  max-files: 2000
  max-depth: 64
CONF
mkdir -p "$T/keys"
start_factoryd "$T/factoryd.conf" "$T/log"

ctl() { "$O/factoryctl" -s "$SOCK" "$@"; }
STORE=$T/state/images

# import NAME PATH: the digest on stdout, or nothing (the reason in $T/err)
import() {
	ctl -j image import "$1" "$2" >"$T/out" 2>"$T/err" &&
	    jq -r .digest "$T/out"
}
# refused NAME PATH PATTERN: the import fails with a reason matching it,
# and nothing of it stays in staging or the store's tmp.
refused() {
	name=$1 path=$2 pat=$3
	if ctl image import "$name" "$path" >"$T/out" 2>"$T/err"; then
		notok "$name: imported, should be refused"
		return
	fi
	if grep -q -- "$pat" "$T/err"; then
		ok "$name: refused ($(head -c 160 "$T/err" | tr '\n' ' '))"
	else
		notok "$name: refused, but not for \"$pat\": $(cat "$T/err")"
	fi
	[ ! -e "$STORE/names/$name" ] || notok "$name: a name was stored"
	wait_children "$SOCK" || notok "$name: the children are not all back"
	n=$(find "$STORE/tmp" "$STORE/staging" -mindepth 1 | wc -l)
	check "$name: nothing left in staging or tmp ($n)" [ "$n" = 0 ]
}

# A small root file system, as a directory.
R=$T/rootfs
mkdir -p "$R/bin" "$R/etc" "$R/empty" "$R/usr/lib"
printf 'box\n' >"$R/etc/hostname"
printf '#!/bin/sh\necho hi\n' >"$R/bin/hello"
chmod 755 "$R/bin/hello"
chmod 750 "$R/usr/lib"
ln -s ../etc/hostname "$R/bin/link"
ln -s /etc/passwd "$R/bin/abs"
ln "$R/bin/hello" "$R/bin/hello2"
head -c 300000 /dev/urandom >"$R/usr/lib/blob"
chmod 1777 "$R/empty"

dig_dir=$(import dir "$R") || notok "import from a directory: $(cat "$T/err")"
check "import from a directory: a digest" sh -c "echo '$dig_dir' | grep -Eq '^sha256:[0-9a-f]{64}$'"
hex=${dig_dir#sha256:}
check "the store: rootfs root-owned, every entry 0:0" sh -c \
    "[ -z \"\$(find '$STORE/sha256/$hex/rootfs' ! -uid 0 -o ! -gid 0 | head -1)\" ]"
check "the store: modes kept (1777, 0750, 0755)" sh -c \
    "[ \$(stat -c %a '$STORE/sha256/$hex/rootfs/empty') = 1777 ] &&
     [ \$(stat -c %a '$STORE/sha256/$hex/rootfs/usr/lib') = 750 ] &&
     [ \$(stat -c %a '$STORE/sha256/$hex/rootfs/bin/hello') = 755 ]"
check "the store: a symbolic link's target as it was" sh -c \
    "[ \"\$(readlink '$STORE/sha256/$hex/rootfs/bin/abs')\" = /etc/passwd ]"
check "the store: names/dir says the digest" sh -c \
    "[ \"\$(cat '$STORE/names/dir')\" = '$dig_dir' ]"
check "meta.json: digest, files, bytes, imported" sh -c \
    "jq -e '.digest == \"$dig_dir\" and .files == 4 and .bytes > 300000 and .imported > 0' '$STORE/sha256/$hex/meta.json'"

# The same content by other routes: the same digest, stored once.
tar -C "$R" -cf "$T/r.tar" .
tar -C "$R" -czf "$T/r.tar.gz" .
tar -C "$R" --zstd -cf "$T/r.tar.zst" .
(cd "$R" && tar -cf "$T/r-noprefix.tar" bin etc empty usr)
for f in r.tar r.tar.gz r.tar.zst r-noprefix.tar; do
	d=$(import "t-$f" "$T/$f") || notok "import $f: $(cat "$T/err")"
	check "import $f: the directory's digest" [ "$d" = "$dig_dir" ]
done
check "the same content is stored once" sh -c \
    "[ \$(ls '$STORE/sha256' | wc -l) = 1 ]"
check "a second import says it was already stored" sh -c \
    "jq -e '.existed == true' '$T/out'"

# Progress: with -v on stderr, a few lines a second at most; without
# it and not on a terminal, none.
ctl image import -v progress "$T/r.tar" >/dev/null 2>"$T/progress"
check "import -v: progress on stderr" grep -q '^import progress: [0-9]* entries, [0-9]* MiB$' "$T/progress"
ctl image import progress "$T/r.tar" >/dev/null 2>"$T/progress"
check "import without -v, not a terminal: no progress" [ ! -s "$T/progress" ]

# A change of one mode or one byte is another image.
chmod 700 "$R/bin/hello"
d=$(import mode "$R") || notok "import mode: $(cat "$T/err")"
check "one mode changed: another digest" [ "$d" != "$dig_dir" ]
chmod 755 "$R/bin/hello"

# list, -j and plain
check "image list -j: the names" sh -c \
    "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl -j image list |
     jq -e '[.images[].names[]] | any(. == \"dir\") and any(. == \"t-r.tar.zst\")'"
check "image list: a table" sh -c \
    "'$O/factoryctl' -s '$SOCK' image list | grep -q '^dir  *sha256:'"
check "image list on the read-only socket, as nobody" sh -c \
    "setpriv --reuid 65534 --regid 65534 --clear-groups '$O/factoryctl' -s '$SOCK' -j image list | jq -e '.images | length == 2'"
check "image import as nobody: refused" sh -c \
    "! setpriv --reuid 65534 --regid 65534 --clear-groups '$O/factoryctl' -s '$SOCK' image import x '$T/r.tar' 2>/dev/null"

# verify: OK, then a byte changed behind the store's back.
check "image verify dir: OK" sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl image verify dir | grep -q '^OK'"
printf 'bux\n' >"$STORE/sha256/$hex/rootfs/etc/hostname"
if ctl image verify dir >"$T/out" 2>"$T/err"; then
	notok "image verify after a byte changed: said OK"
else
	check "image verify after a byte changed: names the file" \
	    grep -q "first difference: etc/hostname: stored" "$T/err"
fi
printf 'box\n' >"$STORE/sha256/$hex/rootfs/etc/hostname"
chmod 777 "$STORE/sha256/$hex/rootfs/bin"
check "image verify after a mode changed: fails" sh -c \
    "! '$O/factoryctl' -s '$SOCK' image verify '$dig_dir' 2>&1 | grep -q OK"
chmod 755 "$STORE/sha256/$hex/rootfs/bin"
touch "$STORE/sha256/$hex/rootfs/etc/new"
check "image verify after a file was added: names it" sh -c \
    "'$O/factoryctl' -s '$SOCK' image verify dir 2>&1 | grep -q 'etc/new: in the tree, not in the stored image'"
rm "$STORE/sha256/$hex/rootfs/etc/new"
check "image verify: OK again" sh -c "'$O/factoryctl' -s '$SOCK' image verify dir | grep -q '^OK'"

# Hostile archives, written by python3's tarfile.
python3 "$D/mktar.py" "$T/h" || fail "mktar.py"
refused dotdot "$T/h/dotdot.tar" 'a \"..\" component'
refused absolute "$T/h/absolute.tar" 'an absolute path'
refused symlink-then-file "$T/h/through-link.tar" 'a path through a symbolic link'
refused hardlink-out "$T/h/hardlink-out.tar" 'hard link target'
refused hardlink-missing "$T/h/hardlink-missing.tar" 'not a regular file of the tree'
refused too-many "$T/h/many.tar" 'more than 2000 entries'
refused long-path "$T/h/longpath.tar" 'longer than 4095 bytes'
refused too-deep "$T/h/deep.tar" 'deeper than 64'
refused huge-entry "$T/h/huge.tar" 'images: max-size'
refused truncated-gzip "$T/h/truncated.tar.gz" 'archive'
refused not-an-archive "$T/h/garbage.bin" 'archive'
check "the victim outside was not written" [ ! -e /tmp/factory-image-victim.$$ ]

d=$(import specials "$T/h/specials.tar") || notok "specials: $(cat "$T/err")"
sh_=${d#sha256:}
check "setuid file: stored without setuid/setgid" sh -c \
    "[ \$(stat -c %a '$STORE/sha256/$sh_/rootfs/su') = 755 ] && [ \$(stat -c %a '$STORE/sha256/$sh_/rootfs/sg') = 755 ]"
check "device node and fifo: skipped" sh -c \
    "[ ! -e '$STORE/sha256/$sh_/rootfs/null' ] && [ ! -e '$STORE/sha256/$sh_/rootfs/fifo' ] && [ -f '$STORE/sha256/$sh_/rootfs/ok' ]"
check "the import says what it stripped" sh -c \
    "jq -e '[.stripped[].what] | sort == [\"FIFO skipped\", \"block device skipped\", \"character device skipped\", \"setuid/setgid cleared\", \"setuid/setgid cleared\"]' '$T/out'"
check "meta.json lists what was stripped" sh -c \
    "jq -e '(.stripped | length) == 5 and .stripped_total == 5' '$STORE/sha256/$sh_/meta.json'"
ctl image import specials2 "$T/h/specials.tar" >"$T/plain" 2>&1
check "plain output: one stripped line each" sh -c \
    "grep -c '^stripped: ' '$T/plain' | grep -qx 5 && grep -q '^stripped: null: character device skipped' '$T/plain'"

d=$(import nonutf8 "$T/h/nonutf8.tar") || notok "non-UTF-8 name: $(cat "$T/err")"
nh=${d#sha256:}
check "a non-UTF-8 name is stored as its bytes" sh -c \
    "ls '$STORE/sha256/$nh/rootfs' | od -c | grep -q '377'"
check "image verify of it: OK" sh -c "'$O/factoryctl' -s '$SOCK' image verify nonutf8 | grep -q '^OK'"

# OCI: umoci builds a layout (a file, then a layer removing it).
if command -v umoci >/dev/null; then
	L=$T/oci
	umoci init --layout "$L" >/dev/null 2>&1 &&
	umoci new --image "$L:t" >/dev/null 2>&1 &&
	umoci unpack --rootless --image "$L:t" "$T/bundle" >/dev/null 2>&1 ||
	    notok "umoci: cannot make a layout"
	cp -a "$R/." "$T/bundle/rootfs/"
	echo lower >"$T/bundle/rootfs/etc/lower"
	mkdir -p "$T/bundle/rootfs/opq"
	echo old >"$T/bundle/rootfs/opq/old"
	umoci repack --image "$L:t" "$T/bundle" >/dev/null 2>&1 || notok "umoci repack 1"
	rm -rf "$T/bundle"
	umoci unpack --rootless --image "$L:t" "$T/bundle" >/dev/null 2>&1 || notok "umoci unpack 2"
	rm "$T/bundle/rootfs/etc/lower"
	rm -rf "$T/bundle/rootfs/opq"
	mkdir "$T/bundle/rootfs/opq"
	echo new >"$T/bundle/rootfs/opq/new"
	umoci repack --image "$L:t" "$T/bundle" >/dev/null 2>&1 || notok "umoci repack 2"
	umoci gc --layout "$L" >/dev/null 2>&1
	# Drop tags but t: index.json must list one manifest.
	d=$(import oci-dir "$L") || notok "OCI layout directory: $(cat "$T/err")"
	oh=${d#sha256:}
	check "OCI layout: layers applied in order" sh -c \
	    "jq -e '.oci == true and .layers >= 2' '$T/out' && [ -f '$STORE/sha256/$oh/rootfs/etc/hostname' ]"
	check "OCI layout: a whiteout removed a lower file" \
	    [ ! -e "$STORE/sha256/$oh/rootfs/etc/lower" ]
	check "OCI layout: a replaced directory holds only the upper files" sh -c \
	    "[ -f '$STORE/sha256/$oh/rootfs/opq/new' ] && [ ! -e '$STORE/sha256/$oh/rootfs/opq/old' ]"
	tar -C "$L" -cf "$T/oci-archive.tar" .
	d2=$(import oci-archive "$T/oci-archive.tar") || notok "oci-archive: $(cat "$T/err")"
	check "oci-archive tar: the layout directory's digest" [ "$d2" = "$d" ]
	# A layout whose blob does not have its digest.
	cp -a "$L" "$T/badoci"
	b=$(ls "$T/badoci/blobs/sha256" | head -1)
	chmod u+w "$T/badoci/blobs/sha256/$b"
	printf x >>"$T/badoci/blobs/sha256/$b"
	refused bad-blob "$T/badoci" 'blobs/sha256'
else
	notok "umoci: not installed"
fi

# rm: refused while an attempt uses it, by name, by digest.
stop_factoryd
FACTORY_CRASH=image:in-use start_factoryd "$T/factoryd.conf" "$T/log"
check "image rm while in use: refused" sh -c \
    "'$O/factoryctl' -s '$SOCK' image rm dir 2>&1 | grep -q 'used by an attempt that is not over'"
check "image rm while in use: still there" [ -d "$STORE/sha256/$hex" ]
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
# The parent's walk of a tree runs beside its event loop: a walk made
# slow (test builds) holds the import, not the daemon.
stop_factoryd
FACTORY_CRASH=image:slow-walk start_factoryd "$T/factoryd.conf" "$T/log"
ctl image import slow "$T/r.tar" >"$T/slow.out" 2>&1 &
slow=$!
sleep 1
t0=$(date +%s%N)
ctl status >/dev/null 2>&1
t1=$(date +%s%N)
check "a slow walk: status answered at once ($(( (t1 - t0) / 1000000 )) ms)" \
    [ $(( (t1 - t0) / 1000000 )) -lt 1000 ]
check "a slow walk: the import was still running then" kill -0 $slow
check "a slow walk: the parent has one thread" \
    awk '/^Threads:/ {exit !($2 == 1)}' "/proc/$FACTORYD_PID/status"
# factory-fswalk: its job (3) read and closed, the answer on 4, the
# tree on 5, the entry list on 6, nothing else.
check "a slow walk: in factory-fswalk, a child of the parent's, descriptors 0-2 and 4-6" \
    sh -c "for p in \$(pgrep -P $FACTORYD_PID); do
	grep -q 'image walk' /proc/\$p/cmdline &&
	    [ \"\$(ls /proc/\$p/fd | sort -n | tr '\n' ' ')\" = '0 1 2 4 5 6 ' ] &&
	    exit 0
    done; exit 1"
check "image verify during the slow walk: answered, not refused" sh -c \
    "'$O/factoryctl' -s '$SOCK' image verify t-r.tar.gz | grep -q '^OK'"
wait $slow
check "a slow walk: the import then succeeds" grep -q "^$dig_dir slow:" "$T/slow.out"
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
check "after a restart (journal replayed): still listed" sh -c \
    "'$O/factoryctl' -s '$SOCK' -j image list | jq -e '[.images[].names[]] | any(. == \"dir\")'"
check "image rm as nobody: refused" sh -c \
    "! setpriv --reuid 65534 --regid 65534 --clear-groups '$O/factoryctl' -s '$SOCK' image rm dir 2>/dev/null"
ctl image rm dir >/dev/null 2>&1
check "image rm a name of several: the content stays" sh -c \
    "[ ! -e '$STORE/names/dir' ] && [ -d '$STORE/sha256/$hex' ]"
ctl image rm "$dig_dir" >/dev/null 2>&1
check "image rm by digest: content and every name gone" sh -c \
    "[ ! -e '$STORE/sha256/$hex' ] && [ ! -e '$STORE/names/t-r.tar' ]"
check "image verify of a removed image: refused" sh -c \
    "! '$O/factoryctl' -s '$SOCK' image verify '$dig_dir' 2>/dev/null"

# factory-image: its own uid, its policy, replaced after each import.
pid=$(ctl -j status | jq -r '.processes[] | select(.name == "image") | .pid')
check "factory-image runs as users.image" sh -c \
    "awk '/^Uid:/ {exit !(\$2 == $((UIDBASE + 6)))}' /proc/$pid/status"
check "factory-image: Seccomp 2, NoNewPrivs 1" sh -c \
    "grep -q '^Seccomp:[[:space:]]*2' /proc/$pid/status && grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$pid/status"
import again "$T/r.tar" >/dev/null
wait_children "$SOCK" || notok "after an import: the children are not all back"
pid2=$(ctl -j status | jq -r '.processes[] | select(.name == "image") | .pid')
check "factory-image is a fresh process after an import" [ "$pid" != "$pid2" ]

# A full disk: the state dir on a small file system.
F=$T/full
mkdir -p "$F"
if mount -t tmpfs -o size=24m tmpfs "$F" 2>/dev/null; then
	sed -e "s|^socket: .*|socket: $F/factoryd.sock|" \
	    -e "s|^state-dir: .*|state-dir: $F/state|" "$T/factoryd.conf" >"$T/full.conf"
	stop_factoryd
	start_factoryd "$T/full.conf" "$T/fulllog"
	mkdir -p "$T/big"
	head -c 40000000 /dev/zero >"$T/big/zeros"
	if "$O/factoryctl" -s "$F/factoryd.sock" image import big "$T/big" >"$T/out" 2>"$T/err"; then
		notok "a full disk: imported"
	else
		check "a full disk: the import fails cleanly" grep -q "full" "$T/err"
	fi
	wait_children "$F/factoryd.sock" ||
	    notok "a full disk: the children are not all back"
	n=$(find "$F/state/images/staging" "$F/state/images/tmp" -mindepth 1 | wc -l)
	check "a full disk: staging removed ($n left)" [ "$n" = 0 ]
	d=$("$O/factoryctl" -s "$F/factoryd.sock" -j image import small "$T/r.tar" 2>"$T/err" | jq -r .digest)
	check "a full disk: the daemon keeps serving (an import after)" [ "$d" = "$dig_dir" ]
	stop_factoryd
	umount "$F"
else
	notok "a full disk: cannot mount a tmpfs"
fi
regress_done
