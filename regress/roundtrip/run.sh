#!/bin/sh
# Real repositories round-trip through the real daemon, over trees
# that are overlays on a shared pristine checkout.  A generated
# repository holds a submodule (a gitlink), relative and absolute
# symbolic links, an executable, .gitattributes (eol conversion, a
# filter= without a driver, export-ignore), an LFS pointer file, a
# non-UTF-8 name and two names that differ only in case; another holds
# a 100 MB file and 50,000 files.  Each agent changes something and the
# published commit must change exactly that; one that touches the
# gitlink is refused.  Needs root.

. "$(dirname "$0")/../lib.sh"
LC_ALL=C
export LC_ALL

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
G="-c user.name=test -c user.email=test@localhost"

# The odd repository.
R=$T/odd
git init -q -b main "$R" || fail "git init"
(
	cd "$R" || exit 1
	mkdir -p src docs vendor big
	printf 'int a;\n' >src/a.c
	printf 'int b;\n' >src/b.c
	printf '#!/bin/sh\necho run\n' >src/run.sh
	chmod 755 src/run.sh
	ln -s a.c src/rel
	ln -s /etc/hostname src/abs
	printf 'line one\nline two\n' >docs/crlf.txt
	printf 'raw\001bytes\n' >docs/data.bin
	printf 'not exported\n' >docs/export.txt
	printf '*.txt eol=crlf\n*.bin filter=nodriver\nexport.txt export-ignore\n*.lfs filter=lfs diff=lfs merge=lfs -text\n' \
	    >.gitattributes
	printf 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n' \
	    >docs/model.lfs
	printf 'latin1\n' >"$(printf 'docs/caf\351.txt')"
	printf 'upper\n' >docs/Case.txt
	printf 'lower\n' >docs/case.txt
	printf '[submodule "vendor/lib"]\n\tpath = vendor/lib\n\turl = https://example.invalid/lib.git\n' \
	    >.gitmodules
	git add -A &&
	git update-index --add --cacheinfo \
	    160000,1234567890123456789012345678901234567890,vendor/lib &&
	git $G commit -qm "odd things"
) || fail "cannot make the odd repository"
git clone -q --bare "$R" "$T/odd.git" &&
git clone -q --bare "$R" "$T/odd-remote.git" &&
mkdir -p "$T/odd-pulls" &&
chown -R 65104:65104 "$T/odd-remote.git" "$T/odd-pulls" ||
    fail "cannot make the odd remote"
BASE=$(git -C "$R" rev-parse HEAD)

# The big repository: 50,000 small files and one of 100 MB.
B=$T/big
start=$(date +%s)
git init -q -b main "$B" || fail "git init big"
python3 - "$B" <<'PY' || fail "cannot generate the big repository"
import os, sys
root = sys.argv[1]
for d in range(100):
    p = os.path.join(root, "d%02d" % d)
    os.mkdir(p)
    for f in range(500):
        with open(os.path.join(p, "f%03d.txt" % f), "w") as fp:
            fp.write("file %d/%d\n" % (d, f))
with open(os.path.join(root, "huge.bin"), "wb") as fp:
    block = bytes(range(256)) * 4096
    for i in range(100):
        fp.write(block)
PY
(cd "$B" && git add -A && git $G commit -qm big) ||
    fail "cannot commit the big repository"
git clone -q --bare "$B" "$T/big.git" || fail "cannot clone big"
rm -rf "$B"
echo "# big repository generated in $(($(date +%s) - start)) s"

cat >"$T/factoryd.conf" <<CONF
socket: $SOCK
state-dir: $T/state
libexec: $O
verifiers: 2
max-attempts: 4
attempt-uids: 65200-65219
attempt-disk: {default: 512M, max: 1G}
pristine-cache: 200M
keys:
  receipts: $T/keys/receipt.key
  verifier: $T/keys/verifier.key
users:
  worker: 65101
  verifier: 65102
  reconciler: 65103
  publisher: 65104
  egress: 65105
  image: 65106
  gateway: 65107
repositories:
  odd:
    path: $T/odd.git
    publish: {forge: local, remote: $T/odd-remote.git, pulls: $T/odd-pulls}
  big:
    path: $T/big.git
CONF
start_factoryd "$T/factoryd.conf" "$T/log"

# odd NAME AGENT-SCRIPT [VALIDATE-SCRIPT]: a manifest for the odd
# repository, scope all.  The validation runs on the verifier's tree:
# the pristine checkout with the commit's changes written through.
odd() {
	cat >"$T/$1.yaml" <<MAN
repository: odd
baseline: main
scope: ["**"]
agent: ["/bin/sh", "-c", $(printf '%s' "$2" | jq -Rs .)]
validate: ["/bin/sh", "-c", $(printf '%s' "${3:-true}" | jq -Rs .)]
limits: {wall: 30s, cpu: 20s, memory: 256M, pids: 64, tree: 50M, log: 1M}
title: "roundtrip $1"
MAN
}
# What the published commit of $1 changed against the baseline.
diffof() {
	git --git-dir="$T/odd-remote.git" -c safe.directory='*' \
	    -c core.quotepath=false diff-tree -r --no-renames --name-status \
	    "$BASE" "$(field "$1" commit)"
}
published() { [ "$(field "$1" state)" = published ]; }

# The agent sees the baseline as git has it: links, modes, exact bytes
# (no eol conversion, no filter), the submodule an empty directory.
# (Modes by stat: the sandbox mounts the tree noexec, so test -x says
# no to everything there.)
odd one 'set -e
test -L src/rel && [ "$(readlink src/rel)" = a.c ]
[ "$(readlink src/abs)" = /etc/hostname ]
[ "$(stat -c %a src/run.sh)" = 755 ] && [ "$(stat -c %a src/a.c)" = 644 ]
! grep -q "$(printf "\r")" docs/crlf.txt
grep -q "^version https://git-lfs" docs/model.lfs
[ -d vendor/lib ] && [ -z "$(ls -A vendor/lib)" ]
[ "$(cat docs/Case.txt)" = upper ] && [ "$(cat docs/case.txt)" = lower ]
test -f "$(printf "docs/caf\351.txt")"
git status --porcelain >/tmp/st; ! grep -q . /tmp/st
echo "int a = 1;" > src/a.c' 'grep -q "int a = 1;" src/a.c && test -L src/rel && [ "$(stat -c %a src/run.sh)" = 755 ] && [ -d vendor/lib ]'
id=$(submit_wait "$T/one.yaml" 90) || fail "one-file case did not finish"
check "one file: published" published "$id"
check "one file: the commit changes exactly src/a.c" \
    [ "$(diffof "$id")" = "$(printf 'M\tsrc/a.c')" ]
check "one file: the gitlink is kept, same commit" sh -c \
    "'$O/factoryctl' -s '$SOCK' -j show $id >/dev/null; git --git-dir='$T/odd-remote.git' -c safe.directory='*' ls-tree $(field "$id" commit) vendor/lib | grep -q '^160000 commit 1234567890123456789012345678901234567890'"
check "one file: links and modes kept" sh -c \
    "git --git-dir='$T/odd-remote.git' -c safe.directory='*' ls-tree -r $(field "$id" commit) src | grep -q '^120000 blob .*src/abs' && git --git-dir='$T/odd-remote.git' -c safe.directory='*' ls-tree -r $(field "$id" commit) src | grep -q '^100755 blob .*src/run.sh'"
check "one file: the cold checkout is in the cache list" sh -c \
    "'$O/factoryctl' -s '$SOCK' -j cache list | jq -e '.caches[] | select(.repo == \"odd\" and .commit == \"$BASE\" and .bytes > 0)'"

odd del 'rm docs/data.bin' '! test -e docs/data.bin && test -f docs/crlf.txt'
id=$(submit_wait "$T/del.yaml" 60) || fail "delete case did not finish"
check "delete: published" published "$id"
check "delete: exactly docs/data.bin deleted" \
    [ "$(diffof "$id")" = "$(printf 'D\tdocs/data.bin')" ]

# A directory renamed (an absolute link moved along would be a new
# absolute link, refused: docs/ has none).
odd mvdir 'mv docs papers' '! test -e docs && test -f papers/Case.txt && test -f papers/case.txt'
id=$(submit_wait "$T/mvdir.yaml" 60) || fail "rename case did not finish"
check "rename a directory: published" published "$id"
check "rename a directory: its 7 files deleted" \
    [ "$(diffof "$id" | grep -c "^D	docs/")" = 7 ]
check "rename a directory: and added under the new name" \
    [ "$(diffof "$id" | grep -c "^A	papers/")" = 7 ]
check "rename a directory: nothing else" [ "$(diffof "$id" | wc -l)" = 14 ]

odd dirfile 'rm -rf docs && echo now a file > docs' '[ "$(cat docs)" = "now a file" ]'
id=$(submit_wait "$T/dirfile.yaml" 60) || fail "dir-to-file case did not finish"
check "a directory replaced by a file: published" published "$id"
check "a directory replaced by a file: its files deleted, the file added" \
    [ "$(diffof "$id" | sort | tr '\t\n' ' |')" = "$(printf 'A docs|D docs/Case.txt|D docs/caf\351.txt|D docs/case.txt|D docs/crlf.txt|D docs/data.bin|D docs/export.txt|D docs/model.lfs|')" ]

odd chmod 'chmod 755 src/b.c' '[ "$(stat -c %a src/b.c)" = 755 ]'
id=$(submit_wait "$T/chmod.yaml" 60) || fail "chmod case did not finish"
check "chmod: published" published "$id"
check "chmod: exactly src/b.c changed" \
    [ "$(diffof "$id")" = "$(printf 'M\tsrc/b.c')" ]
check "chmod: now 100755" sh -c "git --git-dir='$T/odd-remote.git' -c safe.directory='*' ls-tree $(field "$id" commit) src/b.c | grep -q '^100755'"

odd tmpfile 'echo x > scratch && rm scratch && echo y >> README && rm README; echo b >> src/b.c'
id=$(submit_wait "$T/tmpfile.yaml" 60) || fail "create-delete case did not finish"
check "created and deleted: published" published "$id"
check "created and deleted: only src/b.c changed" \
    [ "$(diffof "$id")" = "$(printf 'M\tsrc/b.c')" ]

odd caseonly 'echo UPPER > docs/Case.txt'
id=$(submit_wait "$T/caseonly.yaml" 60) || fail "case-name case did not finish"
check "one of two case-colliding names: exactly it changed" \
    [ "$(diffof "$id")" = "$(printf 'M\tdocs/Case.txt')" ]

odd gitlink 'echo x > vendor/lib/file'
id=$(submit_wait "$T/gitlink.yaml" 60) || fail "gitlink case did not finish"
check "gitlink touched: rejected" [ "$(field "$id" state)" = rejected ]
check "gitlink touched: reason names it" sh -c \
    "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'vendor/lib: submodule (gitlink) changed'"
odd gitlinkrm 'rmdir vendor/lib; echo c >> src/a.c'
id=$(submit_wait "$T/gitlinkrm.yaml" 60) || fail "gitlink removal case did not finish"
check "gitlink removed: rejected" [ "$(field "$id" state)" = rejected ]

# Two attempts on the big repository: the first checks it out, the
# second's tree is the warm overlay.
cat >"$T/big.yaml" <<MAN
repository: big
baseline: main
scope: ["d42/**"]
agent: ["/bin/sh", "-c", "echo changed >> d42/f042.txt"]
validate: ["/bin/sh", "-c", "true"]
limits: {wall: 60s, cpu: 30s, memory: 512M, pids: 64, tree: 50M, log: 1M}
title: "roundtrip big"
MAN
for n in cold warm; do
	start=$(date +%s%N)
	id=$(submit_wait "$T/big.yaml" 120) || fail "big $n case did not finish"
	check "big, $n: verified" [ "$(field "$id" state)" = verified ]
	check "big, $n: exactly one change" sh -c \
	    "'$O/factoryctl' -s '$SOCK' -j show $id | jq -e '(.changes | length) == 1 and .changes[0].path == \"d42/f042.txt\" and .changes[0].status == \"M\"'"
	echo "# big, $n: $(( ($(date +%s%N) - start) / 1000000 )) ms in all, stages (ms): $(ctl -j show "$id" | jq -c .stages)"
done
check "the pristine trees are root's and not writable by others" sh -c \
    "[ -z \"\$(find '$T/state/pristine' -mindepth 1 \( ! -uid 0 -o -perm /022 \) ! -type l | head -1)\" ]"
check "no overlay or disk left mounted" sh -c \
    "! grep -q ' $T/state/attempts/' /proc/mounts"
# pristine-cache is 200M: the big tree (over it alone) came in while its
# attempt used it, and the odd one, least recently used, went for it.
BIG=$(git --git-dir="$T/big.git" rev-parse main)
check "eviction: the least recently used tree went" \
    [ ! -e "$T/state/pristine/odd/$BASE" ]
check "eviction: logged" grep -q "pristine odd/$BASE: evicted" "$T/log"
check "eviction: one in use is kept, even over the bound" \
    [ -d "$T/state/pristine/big/$BIG" ]
check "cache list shows the big one" sh -c \
    "'$O/factoryctl' -s '$SOCK' -j cache list | jq -e '[.caches[] | select(.repo == \"big\")] | length == 1'"
check "cache rm refuses an unknown key" sh -c "! '$O/factoryctl' -s '$SOCK' cache rm odd/0000000000000000000000000000000000000000"
check "cache rm refuses a bad key" sh -c "! '$O/factoryctl' -s '$SOCK' cache rm ../../etc"
check "cache rm removes the big tree" ctl cache rm "big/$BIG"
check "cache rm: gone, and its index" sh -c \
    "[ ! -e '$T/state/pristine/big/$BIG' ] && [ ! -e '$T/state/pristine/big/$BIG.index' ]"
odd again 'echo "int a = 2;" > src/a.c'
id=$(submit_wait "$T/again.yaml" 60) || fail "after-eviction case did not finish"
check "after eviction: checked out again, published" published "$id"
check "after eviction: exactly src/a.c" \
    [ "$(diffof "$id")" = "$(printf 'M\tsrc/a.c')" ]
stop_factoryd
regress_done
