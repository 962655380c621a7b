#!/bin/sh
# Environments through the real daemon (issue 11): an agent in an image
# sees the image and nothing of the host; the config's environment
# policy refuses floating names and the host root; the image and
# toolchain digests are frozen at submission and in the receipts, show
# and the verdict; a changed toolchain is refused.  Images are laid out
# by hand as supervisord-factory/image.h describes the store, from the
# static busybox.
#
# Uids: roles 66401-66405, attempts 66420-66449.

. "$(dirname "$0")/../lib.sh"

BB=/bin/busybox
[ -x "$BB" ] && ! ldd "$BB" >/dev/null 2>&1 ||
    fail "env: a static $BB is needed (busybox-static)"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 66404
git clone -q --bare "$T/src" "$T/strict.git" ||
    fail "cannot make the strict repository"
git clone -q --bare "$T/src" "$T/other.git" ||
    fail "cannot make the other repository"
write_attempt_conf "$T" 66400 66420-66449
cat >>"$T/factoryd.conf" <<CONF
  strict:
    path: $T/strict.git
    environment: {require-digest: yes, host-root: deny}
  other:
    path: $T/other.git
CONF
start_factoryd "$T/factoryd.conf" "$T/log"
STATE=$T/state

# mkimage NAME [FUNCTION]: a rootfs of busybox and its applets, changed
# by FUNCTION DIR if given, imported as NAME as an operator would: its
# digest's hex on stdout.  The store's own check (an entry list that
# hashes to the name) holds; tests change a stored tree behind the
# store's back only where they say so.
mkimage() {
	r=$T/img-$1
	mkdir -p "$r/bin" "$r/usr/bin" || return 1
	cp "$BB" "$r/bin/busybox" || return 1
	for a in sh cat ls echo test grep sleep touch id stat mkdir true \
	    false head printf rm wc sha256sum readlink mount; do
		ln -s busybox "$r/bin/$a" || return 1
	done
	ln -s ../../bin/busybox "$r/usr/bin/env" || return 1
	printf 'int main(void) { return 0; }\n' >"$r/usr/bin/cc"
	chmod 755 "$r/usr/bin/cc"
	[ -z "${2:-}" ] || "$2" "$r" || return 1
	"$O/factoryctl" -s "$SOCK" -j image import "$1" "$r" >"$T/mkimage.out" ||
	    return 1
	jq -r .digest "$T/mkimage.out" | sed 's/^sha256://'
}
# bb2 differs from bb in one toolchain file only.
bb2_cc() { echo 'int main(void) { return 1; }' >"$1/usr/bin/cc"; }
hex() { printf '%064d' "$1"; }	# a digest of the store, any 64 hex
H9=$(hex 9)
H1=$(mkimage bb) && [ -n "$H1" ] || fail "cannot import image bb"
H2=$(mkimage bb2 bb2_cc) && [ -n "$H2" ] || fail "cannot import image bb2"

# write_env FILE REPO IMAGE AGENT [VALIDATE [TOOLCHAIN]]
write_env() {
	write_manifest "$1" "$4" "${5:-true}" "environment:
  image: \"$3\"${6:+
  toolchain: $6}"
	sed -i "s/^repository: demo/repository: $2/" "$1"
}

# The agent's view, reported line by line in its log: CHECK name ok|FAIL.
VIEW='c() { n=$1; shift; if "$@"; then echo "CHECK $n ok"; else echo "CHECK $n FAIL"; fi; }
c no-etc-passwd test ! -e /etc/passwd
c no-host-usr-lib test ! -e /usr/lib
c no-host-git test ! -e /usr/bin/git
c no-state-journal test ! -e '"$STATE"'/journal
c no-other-repo test ! -e '"$T"'/other.git
c no-repo-config test ! -e '"$T"'/demo.git/config
c no-host-conf test ! -e '"$T"'/factoryd.conf
c image-busybox test -x /bin/busybox
c cannot-write-bin sh -c "! touch /bin/x 2>/dev/null"
c cannot-mkdir-root sh -c "! mkdir /new 2>/dev/null"
c tmp-writable sh -c "echo x > /tmp/x && test -s /tmp/x"
c proc-mounted test -e /proc/self/status
c dev-null test -c /dev/null
c tree-writable sh -c "echo view >> README.md"
c setuid-no-root sh -c "test \"\$(/usr/libexec/id -u)\" = \"\$(id -u)\""'
# Behind the store's back (an import clears setuid): a setuid binary
# in the image gains nothing in the sandbox.
r=$STATE/images/sha256/$H1/rootfs
mkdir -p "$r/usr/libexec" && cp "$BB" "$r/usr/libexec/id" && chmod 4755 "$r/usr/libexec/id"

write_env "$T/view.yaml" demo "bb@sha256:$H1" "$VIEW" \
    'test -x /bin/busybox && test ! -e /etc/passwd' '[/usr/bin/cc, /bin/busybox]'
id=$(submit_wait "$T/view.yaml") || notok "image view: did not finish"
ctl logs "$id" >"$T/view.log" 2>&1
for n in no-etc-passwd no-host-usr-lib no-host-git no-state-journal \
    no-other-repo no-repo-config no-host-conf image-busybox \
    cannot-write-bin cannot-mkdir-root tmp-writable proc-mounted dev-null \
    tree-writable setuid-no-root; do
	check "image view: $n" grep -q "^CHECK $n ok" "$T/view.log"
done
check "image view: the attempt published (validation ran in the image)" \
    [ "$(field $id state)" = published ]
# submit -w prints the whole attempt, environment and every change, and
# still exits 0 for a published one (its state was read from a display
# buffer that the printing reused: a published attempt exited 1).
write_env "$T/many.yaml" demo "bb@sha256:$H1" \
    'mkdir -p src && for i in 1 2 3 4 5 6 7 8 9 10; do echo $i >src/m$i; done'
check "image: submit -w of a published attempt of ten changes exits 0" \
    "$O/factoryctl" -s "$SOCK" submit -w "$T/many.yaml"
check "image view: the image is unchanged" \
    [ ! -e "$r/bin/x" -a ! -e "$r/new" -a ! -e "$r/tmp" ]

# The digests: frozen at submission, in the receipts and show.
tc() {	# ROOT PATH...: the toolchain digest as factory-manifest(5) says
	root=$1; shift
	for p in "$@"; do
		printf '%s\0%s\n' "$p" "$(sha256sum <"$root$p" | cut -d' ' -f1)"
	done | sha256sum | cut -d' ' -f1
}
want=sha256:$(tc "$r" /usr/bin/cc /bin/busybox)
ctl receipts "$id" >"$T/view.r"
rfact() {	# FILE KIND: the environment facts of that receipt
	grep "\"kind\":\"$2\"" "$1" | head -n 1 | jq -c '.facts.environment'
}
for k in submitted running validated; do
	check "digests: $k receipt names the image" \
	    [ "$(rfact "$T/view.r" $k | jq -r .image)" = "sha256:$H1" ]
	check "digests: $k receipt has the toolchain digest" \
	    [ "$(rfact "$T/view.r" $k | jq -r .toolchain)" = "$want" ]
done
check "digests: the verdict has them" \
    sh -c "grep '\"kind\":\"verdict\"' '$T/view.r' | grep -q . && grep '\"kind\":\"verdict\"' '$T/view.r' | jq -e '.facts.environment.image == \"sha256:$H1\" and .facts.environment.toolchain == \"$want\"'"
check "digests: show -j" sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -e '.environment.image == \"sha256:$H1\" and .environment.toolchain == \"$want\" and .environment.ref == \"bb@sha256:$H1\"'"
check "digests: show" sh -c "'$O/factoryctl' -s '$SOCK' show $id | grep -q '^toolchain: $want'"
check "digests: the receipts verify offline" \
    sh -c "'$O/factoryctl' verify '$T/view.r' | grep -q '^OK'"

# Replayed from the journal: the same frozen environment, not the name
# resolved again.
field "$id" environment >"$T/env.before"
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
field "$id" environment >"$T/env.after"
check "restart: the frozen environment is replayed as it was" \
    sh -c "cmp -s '$T/env.before' '$T/env.after' && grep -q 'sha256:$H1' '$T/env.after'"

# The same toolchain paths in a second image with one file changed.
write_env "$T/bb2.yaml" demo bb 'echo two >> README.md' true '[/usr/bin/cc, /bin/busybox]'
sed -i "s/image: \"bb\"/image: \"bb2\"/" "$T/bb2.yaml"
id2=$(submit_wait "$T/bb2.yaml") || notok "second image: did not finish"
want2=sha256:$(tc "$STATE/images/sha256/$H2/rootfs" /usr/bin/cc /bin/busybox)
check "second image: a name resolved to its digest" \
    [ "$(field $id2 environment.image)" = "sha256:$H2" ]
check "second image: its toolchain digest differs" \
    sh -c "[ '$(field $id2 environment.toolchain)' = '$want2' ] && [ '$want2' != '$want' ]"

# Without an image, where allowed: the host root, floating, said so.
write_manifest "$T/host.yaml" 'echo host >> README.md'
id3=$(submit_wait "$T/host.yaml") || notok "host root: did not finish"
ctl receipts "$id3" >"$T/host.r"
check "host root: published" [ "$(field $id3 state)" = published ]
check "host root: running receipt says host (floating)" \
    [ "$(rfact "$T/host.r" running)" = '"host (floating)"' ]
check "host root: show says it" sh -c "'$O/factoryctl' -s '$SOCK' show $id3 | grep -q '^environment: host (floating)'"

# Refusals at submission, each naming the field.
refused() {	# name manifest expected-text
	"$O/factoryctl" -s "$SOCK" submit "$2" >"$T/out" 2>&1
	st=$?
	check "refused: $1 (exit $st)" sh -c "[ $st = 1 ] && grep -q -- '$3' '$T/out'"
}
write_env "$T/float.yaml" strict bb 'echo x >> README.md'
refused "a floating name by require-digest" "$T/float.yaml" \
    "environment.image: bb: no digest, refused by require-digest: yes"
write_manifest "$T/nohost.yaml" 'echo x >> README.md'
sed -i 's/^repository: demo/repository: strict/' "$T/nohost.yaml"
refused "the host root by host-root: deny" "$T/nohost.yaml" \
    "environment: missing: an image is required for repository strict"
write_env "$T/absent.yaml" demo "sha256:$H9" 'echo x >> README.md'
refused "a pinned digest not in the store" "$T/absent.yaml" \
    "environment.image: image sha256:$H9: not in the store"
write_env "$T/absent2.yaml" demo "bb@sha256:$H9" 'echo x >> README.md'
refused "a name with a digest not in the store" "$T/absent2.yaml" \
    "not in the store"
write_env "$T/noname.yaml" demo nosuch 'echo x >> README.md'
refused "a name not in the store" "$T/noname.yaml" "image nosuch: no such image"
write_env "$T/missing.yaml" demo "sha256:$H1" 'echo x >> README.md' true '[/usr/bin/gcc]'
refused "a toolchain path missing in the image" "$T/missing.yaml" \
    "environment.toolchain: /usr/bin/gcc: No such file or directory in the image"
write_env "$T/tdir.yaml" demo "sha256:$H1" 'echo x >> README.md' true '[/usr/bin]'
refused "a toolchain path that is a directory" "$T/tdir.yaml" \
    "/usr/bin: not a regular file"
write_env "$T/strictok.yaml" strict "bb@sha256:$H1" 'echo strict >> README.md'
id4=$(submit_wait "$T/strictok.yaml") || notok "strict: pinned did not finish"
check "strict: a pinned image is accepted and runs" \
    [ "$(field $id4 state)" = verified ]

# exec names paths inside the image: /bin runs, the image's
# /usr/libexec does not, and nothing of the host's is added.
write_env "$T/exec.yaml" demo "sha256:$H1" \
    'if /usr/libexec/id -u >/dev/null 2>&1; then echo "CHECK libexec ran"; else echo "CHECK libexec refused"; fi
test ! -e /usr/lib/git-core && echo "CHECK no-host ok"; echo e >> README.md'
echo 'exec: ["/bin"]' >>"$T/exec.yaml"
id8=$(submit_wait "$T/exec.yaml") || notok "exec: did not finish"
ctl logs "$id8" >"$T/exec.log" 2>&1
check "exec in an image: a path outside exec is refused" \
    grep -q '^CHECK libexec refused' "$T/exec.log"
check "exec in an image: no host path is bound for it" \
    grep -q '^CHECK no-host ok' "$T/exec.log"
check "exec in an image: published" [ "$(field $id8 state)" = published ]

# With egress, the hosts file is bound over /etc/hosts, which an image
# need not have (bb has no /etc at all).
write_env "$T/hosts.yaml" demo "sha256:$H1" \
    'grep -q localhost /etc/hosts && echo "CHECK hosts ok"; echo h >> README.md'
echo 'network: {allow: ["localhost:60999"]}' >>"$T/hosts.yaml"
id7=$(submit_wait "$T/hosts.yaml") || notok "hosts: did not finish"
check "egress in an image: its own /etc/hosts" \
    sh -c "'$O/factoryctl' -s '$SOCK' logs $id7 | grep -q '^CHECK hosts ok'"
check "egress in an image: published" [ "$(field $id7 state)" = published ]
check "egress in an image: the image has no /etc still" \
    [ ! -e "$STATE/images/sha256/$H1/rootfs/etc" ]

# Symbolic links of an image never lead outside it.
esc_links() {
	e=$1
	mkdir -p "$e/etc" && echo "the image's passwd" >"$e/etc/passwd"
	ln -s ../../../../../../../../../etc/passwd "$e/usr/bin/rel"
	ln -s /etc/passwd "$e/usr/bin/abs"
	ln -s /etc/shadow "$e/usr/bin/gone"
	# The view: /tmp a link to /, /proc a file, /dev a link to /, /run
	# a file, an /etc/hosts link to the host's.
	ln -s / "$e/tmp"
	echo not-proc >"$e/proc"
	ln -s / "$e/dev"
	echo not-run >"$e/run"
}
H3=$(mkimage esc esc_links) && [ -n "$H3" ] || fail "cannot import image esc"
e=$STATE/images/sha256/$H3/rootfs
write_env "$T/rel.yaml" demo "sha256:$H3" \
    'c() { n=$1; shift; if "$@"; then echo "CHECK $n ok"; else echo "CHECK $n FAIL"; fi; }
c tmp-is-a-dir sh -c "test -d /tmp && test ! -L /tmp && test ! -e /tmp/bin"
c tmp-writable sh -c "echo x > /tmp/y && test -s /tmp/y"
c proc-is-proc test -e /proc/self/status
c dev-is-dev sh -c "test -c /dev/null && test ! -e /dev/bin"
c passwd-is-the-images grep -q "the image" /etc/passwd
echo esc >> README.md' true '[/usr/bin/rel, /usr/bin/abs]'
id5=$(submit_wait "$T/rel.yaml") || notok "links: did not finish"
ctl logs "$id5" >"$T/rel.log" 2>&1
for n in tmp-is-a-dir tmp-writable proc-is-proc dev-is-dev passwd-is-the-images; do
	check "hostile image: $n" grep -q "^CHECK $n ok" "$T/rel.log"
done
check "hostile image: published" [ "$(field $id5 state)" = published ]
check "hostile image: the image's /tmp is still its link" [ -L "$e/tmp" ]
# The digest, with the image's /etc/passwd for both links.
p=$(sha256sum <"$e/etc/passwd" | cut -d' ' -f1)
wantesc=sha256:$(printf '%s\0%s\n%s\0%s\n' /usr/bin/rel "$p" /usr/bin/abs "$p" |
    sha256sum | cut -d' ' -f1)
check "links: relative and absolute links resolve inside the image" \
    [ "$(field $id5 environment.toolchain)" = "$wantesc" ]
write_env "$T/gone.yaml" demo "sha256:$H3" 'echo x >> README.md' true '[/usr/bin/gone]'
refused "a link to a host file the image lacks" "$T/gone.yaml" \
    "/usr/bin/gone: No such file or directory in the image"

# A verifier that signs, with the real key, a verdict consistent in
# itself but silent on the environment, or naming another one: the
# parent refuses it, as regress/bytes does the other lies.
n=$(remote_branches)
liar() {	# mode
	d=$T/liar-$1
	mkdir -p "$d"
	for b in "$O"/factory-*; do
		ln -s "$b" "$d/"
	done
	rm "$d/factory-verifier"
	cp "$O/regress/daemon/prog_badchild" "$d/factory-verifier"
	echo "$1" >"$d/factory-verifier.mode"
	chmod 755 "$d"
	sed -i "s|^libexec: .*|libexec: $d|" "$T/factoryd.conf"
	ctl reload >/dev/null
	wait_children "$SOCK"
	before=$(($(wc -l <"$T/log") + 1))
	write_env "$T/liar.yaml" demo "sha256:$H1" 'echo liar >> README.md' \
	    true '[/usr/bin/cc]'
	lid=$(submit_wait "$T/liar.yaml" 90) || notok "liar $1: did not finish"
	st=$(field "$lid" state)
	check "a verifier signing $1: not published (is $st)" \
	    sh -c "[ '$st' != published ] && [ '$(remote_branches)' = '$n' ]"
	check "a verifier signing $1: the verdict is refused" \
	    sh -c "tail -n +$before '$T/log' | grep -F '$lid: verdict refused: accepted on an environment that is not the attempt' >/dev/null"
	sed -i "s|^libexec: .*|libexec: $O|" "$T/factoryd.conf"
	ctl reload >/dev/null
	wait_children "$SOCK"
}
liar verdict-no-environment
liar verdict-other-environment

# A toolchain that changes after submission: the result is not signed.
write_env "$T/late.yaml" demo "sha256:$H2" 'sleep 2; echo late >> README.md' \
    true '[/usr/bin/cc]'
id6=$(ctl submit "$T/late.yaml")
wait_state "$id6" running 30 || notok "changed toolchain: never running"
echo 'int main(void) { return 2; }' >"$STATE/images/sha256/$H2/rootfs/usr/bin/cc"
wait_terminated "$id6" 60 || notok "changed toolchain: did not end"
# The verifier finds it before any validation run: rejected, not failed.
check "changed toolchain: rejected by the verifier" \
    [ "$(field $id6 state)" = rejected ]
check "changed toolchain: the reason names the toolchain digest" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j show $id6 | jq -r .reason | grep -q '^environment: image sha256:$H2: toolchain digest sha256:[0-9a-f]*, not the sha256:[0-9a-f]* frozen at submission'"
check "changed toolchain: the verdict says it" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $id6 | grep '\"kind\":\"verdict\"' | jq -e '.facts.accepted == false'"
check "changed toolchain: nothing pushed" \
    sh -c "! git --git-dir='$T/remote.git' -c safe.directory='*' rev-parse -q --verify refs/heads/factory/$id6"

# The launcher alone, as regress/sandbox drives it: an image that is not
# root's alone, or whose path the overlay's options cannot carry, is
# refused before anything is created; a good one is the whole root.
SBX=$O/regress/sandbox/prog_sbx
SU=66455
ST=$T/sbxtree
mkdir -p "$ST" && chown "$SU:$SU" "$ST"
sbxrun() {	# image argv...: the output in $T/sbx.out
	img=$1; shift
	"$SBX" -L "$O/factory-sandbox" -i "envsbx-$$-$SU" -u "$SU" -t "$ST" \
	    -w 20 -I "$img" -- "$@" >"$T/sbx.out" 2>&1
}
sbxrun "$STATE/images/sha256/$H1/rootfs" /bin/sh -c 'test ! -e /etc/passwd && test ! -e /usr/lib && echo in-image'
check "launcher: an image is the root" \
    sh -c "grep -q '^in-image' '$T/sbx.out' && grep -q '^exit 0' '$T/sbx.out'"
mkdir -p "$T/notroot/bin" && cp "$BB" "$T/notroot/bin/sh" &&
    chown -R "$SU:$SU" "$T/notroot"
sbxrun "$T/notroot" /bin/sh -c true
check "launcher: an image not root's is refused" grep -qF \
    "spawn: image $T/notroot: not a root-owned directory only root writes" \
    "$T/sbx.out"
mkdir -p "$T/gw/bin" && cp "$BB" "$T/gw/bin/sh" && chmod 775 "$T/gw"
sbxrun "$T/gw" /bin/sh -c true
check "launcher: a group-writable image is refused" grep -qF \
    "spawn: image $T/gw: not a root-owned directory only root writes" \
    "$T/sbx.out"
mkdir -p "$T/a,upperdir=x/bin" && cp "$BB" "$T/a,upperdir=x/bin/sh" &&
    chmod 755 "$T/a,upperdir=x"
sbxrun "$T/a,upperdir=x" /bin/sh -c true
check "launcher: an image path with a comma is refused" grep -qF \
    "spawn: image $T/a,upperdir=x: may not be / or contain ','" "$T/sbx.out"
sbxrun / /bin/sh -c true
check "launcher: / as an image is refused" grep -qF \
    "spawn: image /: may not be /" "$T/sbx.out"
check "launcher: no process of its uid left" [ -z "$(uid_procs $SU)" ]

stop_factoryd
regress_done
