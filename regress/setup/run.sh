#!/bin/sh
# The setup phase and its cache through the real daemon (issue 11):
# a miss runs setup and stores its outputs; the same key hits and setup
# does not run (a connection counter on the host, which setup reaches
# only through its own network grant, proves it); a changed input,
# image, argv or env misses; setup cannot keep a write outside its
# outputs, an escaping link, a setuid bit, too many files or bytes; a
# failed setup fails the attempt and stores nothing; an agent that
# changes a cached output changes only its own upper; cache rm of an
# entry in use is refused; gc and the bound evict the least recently
# used; the key has the baseline's tree unless the manifest asks for
# reuse by inputs, and then the submitter (an outside review's repro:
# another commit's outputs were what main's validation ran on).  Needs
# root.
#
# Uids: roles 66601-66607, attempts 66620-66649, a second submitter
# 66660.

. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "not ok - setup: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "setup: needs jq"
command -v python3 >/dev/null || fail "setup: needs python3"
command -v setpriv >/dev/null || fail "setup: needs setpriv"
BB=/bin/busybox
[ -x "$BB" ] && ! ldd "$BB" >/dev/null 2>&1 ||
    fail "setup: a static $BB is needed (busybox-static)"

D=$(cd "$(dirname "$0")" && pwd)
T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
STATE=$T/state
make_repos "$T" 66604
write_attempt_conf "$T" 66600 66620-66649
# Small, so that the bound is reached by a test's few entries.
echo "setup-cache: 4M" >>"$T/factoryd.conf"
# A second repository with the very same files: its setup never gets
# demo's outputs (nor demo its), though the key's inputs are the same.
git clone -q --bare "$T/demo.git" "$T/other.git" ||
    fail "setup: cannot make the second repository"
sed -i "s|^repositories:\$|repositories:\\n  other:\\n    path: $T/other.git|" \
    "$T/factoryd.conf"
grep -q '^  other:' "$T/factoryd.conf" || fail "setup: no second repository"

: >"$T/counter.out"
python3 "$D/counter.py" "$T/count" >"$T/counter.out" 2>&1 &
CPID=$!
trap 'kill $CPID 2>/dev/null; regress_cleanup' EXIT
i=0
while ! grep -q '^ready' "$T/counter.out" && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
PORT=$(awk '/^ready/ {print $2}' "$T/counter.out")
[ -n "$PORT" ] || fail "setup: the counter did not start"
: >"$T/count"
count() { wc -l <"$T/count" | tr -d ' '; }

start_factoryd "$T/factoryd.conf" "$T/log"

# mkimage NAME [EXTRA]: a rootfs of busybox and its applets (EXTRA a
# file that makes two images differ), imported as an operator would:
# the digest's hex on stdout.  The store checks that an image's entry
# list hashes to its name before an attempt uses it.
mkimage() {
	r=$T/img-$1
	mkdir -p "$r/bin" || return 1
	cp "$BB" "$r/bin/busybox" || return 1
	for a in sh cat ls echo test mkdir true false head printf rm wc \
	    sha256sum ln chmod touch nc seq dd sleep cp mkfifo; do
		ln -s busybox "$r/bin/$a" || return 1
	done
	[ -z "${2:-}" ] || echo "$2" >"$r/$2" || return 1
	"$O/factoryctl" -s "$SOCK" -j image import "$1" "$r" >"$T/mkimage.out" ||
	    return 1
	jq -r .digest "$T/mkimage.out" | sed 's/^sha256://'
}
H1=$(mkimage one) && H2=$(mkimage two second) && [ -n "$H1" ] &&
    [ -n "$H2" ] || fail "setup: cannot import the images"

# man FILE [IMAGE] [SETUP-SCRIPT] [AGENT] [SETUP-EXTRA]: a manifest
# whose setup runs SETUP-SCRIPT with the counter reachable.
PING="echo s | nc 127.0.0.1 $PORT;"
BUILD='mkdir -p deps && cat README.md > deps/readme && echo built > deps/out'
USE='test "$(cat deps/out)" = built && echo more >> src/a.c'
man() {
	write_manifest "$1" "${4:-$USE}" 'test "$(cat deps/out)" = built' \
	    "environment: {image: \"sha256:${2:-$H1}\"}
setup:
  run: [\"/bin/sh\", \"-c\", $(printf '%s' "$PING ${3:-$BUILD}" | jq -Rs .)]
  inputs: [${INPUTS:-README.md, missing.lock}]
  outputs: [${OUTPUTS:-deps}]
  network: {allow: [\"127.0.0.1:$PORT\"]}
${5:-  env: {MODE: one\}}"
}
entries() { ctl -j cache list | jq '[.caches[] | select(.kind == "setup")] | length'; }
rfact() {	# ID: the running receipt's setup facts
	ctl receipts "$1" | grep '"kind":"running"' | head -n 1 |
	    jq -c .facts.setup
}
tmps() { find "$STATE/setup" -maxdepth 1 -name '.tmp.*' | wc -l | tr -d ' '; }

# --- a miss runs setup and stores -------------------------------------
man "$T/m1.yaml"
id=$(submit_wait "$T/m1.yaml") || notok "miss: did not finish"
check "miss: published ($(field "$id" state): $(field "$id" reason))" \
    [ "$(field "$id" state)" = published ]
check "miss: setup ran once (counter $(count))" [ "$(count)" = 1 ]
check "miss: the running receipt says miss" \
    [ "$(rfact "$id" | jq -r .hit)" = false ]
KEY=$(rfact "$id" | jq -r .key)
DIG=$(rfact "$id" | jq -r .digest)
check "miss: one setup entry, listed by its key" \
    sh -c "[ \"\$('$O/factoryctl' -s '$SOCK' -j cache list | jq -r '.caches[] | select(.kind == \"setup\") | .key')\" = '$KEY' ]"
E=$STATE/setup/$KEY
check "miss: the entry holds the outputs, root's, read-only" \
    sh -c "[ \"\$(cat '$E/deps/out')\" = built ] && [ -z \"\$(find '$E' ! -uid 0 | head -1)\" ] && [ -z \"\$(find '$E' -perm /222 ! -type l | head -1)\" ]"
check "miss: the commit has the agent's change only, not the outputs" \
    sh -c "git --git-dir='$T/remote.git' -c safe.directory='*' show --stat --format= $(field "$id" commit) | grep -q 'src/a.c' && ! git --git-dir='$T/remote.git' -c safe.directory='*' show --stat --format= $(field "$id" commit) | grep -q deps"
check "miss: show has the cache stage" \
    [ "$(ctl -j show "$id" | jq -r '.stages.cache')" != null ]

# --- the same key hits; setup does not run ----------------------------
id=$(submit_wait "$T/m1.yaml") || notok "hit: did not finish"
check "hit: published ($(field "$id" state): $(field "$id" reason))" \
    [ "$(field "$id" state)" = published ]
check "hit: setup did not run (counter $(count))" [ "$(count)" = 1 ]
check "hit: show says hit, with the key" \
    [ "$(ctl -j show "$id" | jq -r '.setup.hit, .setup.key' | tr '\n' ' ')" = "true $KEY " ]
check "hit: the running receipt says hit, same key and digest" \
    sh -c "[ '$(rfact "$id" | jq -r '.hit, .key, .digest' | tr '\n' ' ')' = 'true $KEY $DIG ' ]"

# --- an agent that changes a cached output changes its upper only -----
before=$(sha256sum <"$E/deps/out")
man "$T/evil.yaml" "" "" 'echo evil > deps/out; rm -f deps/readme; echo x >> src/a.c'
id=$(submit_wait "$T/evil.yaml") || notok "agent write: did not finish"
check "agent write: the entry's file unchanged" \
    [ "$(sha256sum <"$E/deps/out")" = "$before" ]
check "agent write: the entry's other file still there" [ -f "$E/deps/readme" ]
check "agent write: setup did not run (counter $(count))" [ "$(count)" = 1 ]
man "$T/m1b.yaml"
id=$(submit_wait "$T/m1b.yaml") || notok "after agent write: did not finish"
check "after agent write: the next hit sees the stored outputs" \
    [ "$(field "$id" state)" = published ]

# --- each input of the key misses when it changes ---------------------
n=$(count)
man "$T/img.yaml" "$H2"
id=$(submit_wait "$T/img.yaml") || notok "image: did not finish"
check "a changed image misses (counter $(count))" [ "$(count)" = $((n + 1)) ]
check "a changed image: another key" [ "$(rfact "$id" | jq -r .key)" != "$KEY" ]
man "$T/argv.yaml" "" "$BUILD; true"
id=$(submit_wait "$T/argv.yaml") || notok "argv: did not finish"
check "a changed argv misses (counter $(count))" [ "$(count)" = $((n + 2)) ]
man "$T/env.yaml" "" "" "" "  env: {MODE: two}"
id=$(submit_wait "$T/env.yaml") || notok "env: did not finish"
check "a changed env misses (counter $(count))" [ "$(count)" = $((n + 3)) ]
# The input's content, in a new baseline commit of the same tree (an
# empty one): the key has the tree, not the commit.
git -C "$T/src" -c user.name=t -c user.email=t@localhost commit -q \
    --allow-empty -m empty && git -C "$T/src" push -q "$T/demo.git" main ||
    fail "cannot push"
id=$(submit_wait "$T/m1.yaml") || notok "same input: did not finish"
check "a new commit of the same tree hits (counter $(count))" \
    [ "$(count)" = $((n + 3)) ]
echo changed >"$T/src/README.md"
git -C "$T/src" -c user.name=t -c user.email=t@localhost commit -qam readme &&
    git -C "$T/src" push -q "$T/demo.git" main || fail "cannot push"
id=$(submit_wait "$T/m1.yaml") || notok "input: did not finish"
id1=$id
check "a changed input misses (counter $(count))" [ "$(count)" = $((n + 4)) ]
check "a changed input: its outputs are the new ones" \
    [ "$(cat "$STATE/setup/$(rfact "$id" | jq -r .key)/deps/readme")" = changed ]

# --- another repository, the same setup and inputs: a miss ------------
git -C "$T/src" push -q "$T/other.git" main || fail "cannot push"
n=$(count)
man "$T/other.yaml"
sed -i 's/^repository: demo$/repository: other/' "$T/other.yaml"
id=$(submit_wait "$T/other.yaml") || notok "other repository: did not finish"
check "another repository misses, though its inputs are the same (counter $(count))" \
    [ "$(count)" = $((n + 1)) ]
check "another repository: another key" \
    [ "$(rfact "$id" | jq -r .key)" != "$(rfact "$id1" | jq -r .key)" ]

# --- the baseline's tree is in the key --------------------------------
# setup reads setup.out, which is not one of its inputs: main's says
# fail, a commit of another branch says built.  The key was the same
# for both (the same inputs), so main's next attempt hit the outputs
# that commit's attempt stored, and was validated on them.  By default
# the key has the baseline's checked tree: each tree its own entry.
echo fail >"$T/src/setup.out"
git -C "$T/src" add setup.out &&
    git -C "$T/src" -c user.name=t -c user.email=t@localhost commit -qm setup &&
    git -C "$T/src" checkout -qb alice &&
    echo built >"$T/src/setup.out" &&
    git -C "$T/src" -c user.name=t -c user.email=t@localhost commit -qam alice &&
    git -C "$T/src" checkout -q main &&
    git -C "$T/src" push -q "$T/demo.git" main alice || fail "cannot push"
ALICE=$(git -C "$T/src" rev-parse alice)
MAINTREE=$(git -C "$T/src" rev-parse 'main^{tree}')
READ='mkdir -p deps && cat setup.out > deps/out'
# The agent does not look at the outputs: the validation run decides.
AGENT='echo more >> src/a.c'
passed() {	# ID true|false: its verdict passed, or did not
	ctl receipts "$1" | grep '"kind":"verdict"' | grep -q "\"passed\":$2"
}
onalice() { sed "s/^baseline: main\$/baseline: $ALICE/" "$1" >"$2"; }
n=$(count)
man "$T/tree.yaml" "" "$READ" "$AGENT" "  env: {CASE: tree}"
onalice "$T/tree.yaml" "$T/tree-alice.yaml"
id=$(submit_wait "$T/tree.yaml") || notok "tree key: main: did not finish"
check "tree key: main's setup ran (counter $(count))" [ "$(count)" = $((n + 1)) ]
check "tree key: main's validation failed on main's outputs" passed "$id" false
BK=$(rfact "$id" | jq -r .key)
check "tree key: the running receipt names the tree ($(rfact "$id" | jq -c '{reuse, tree}'))" \
    [ "$(rfact "$id" | jq -r '.reuse, .tree' | tr '\n' ' ')" = "tree $MAINTREE " ]
ctl cache rm "$BK" >/dev/null || notok "tree key: cache rm"
id=$(submit_wait "$T/tree-alice.yaml") || notok "tree key: alice: did not finish"
AK=$(rfact "$id" | jq -r .key)
check "tree key: the other commit ran its setup (counter $(count))" \
    [ "$(count)" = $((n + 2)) ]
check "tree key: the other commit validated on its outputs" passed "$id" true
id=$(submit_wait "$T/tree.yaml") || notok "tree key: main again: did not finish"
check "tree key: main never validates on the other commit's outputs ($(field "$id" state): $(field "$id" reason))" \
    passed "$id" false
check "tree key: main missed, under a key of its own (counter $(count))" \
    [ "$(count)" = $((n + 3)) -a "$(rfact "$id" | jq -r .key)" = "$BK" -a \
    "$BK" != "$AK" ]

# --- reuse: inputs: across commits, never across submitters -----------
# The opt-in keeps the key of the inputs alone, for one submitter: root
# hits its own entry from another tree; another uid (a member of the
# socket's group) misses, and root's next attempt has root's outputs.
n=$(count)
man "$T/inp.yaml" "" "$READ" "$AGENT" "  env: {CASE: inputs}
  reuse: inputs"
onalice "$T/inp.yaml" "$T/inp-alice.yaml"
id=$(submit_wait "$T/inp.yaml") || notok "reuse inputs: main: did not finish"
RK=$(rfact "$id" | jq -r .key)
check "reuse inputs: a miss, the receipt says inputs ($(rfact "$id" | jq -c '{reuse, submitter}'))" \
    [ "$(count)" = $((n + 1)) -a "$(rfact "$id" | jq -r '.reuse, .submitter' | tr '\n' ' ')" = "inputs 0 " ]
id=$(submit_wait "$T/inp-alice.yaml") || notok "reuse inputs: alice: did not finish"
check "reuse inputs: another tree, the same submitter: hits (counter $(count))" \
    [ "$(count)" = $((n + 1)) -a "$(rfact "$id" | jq -r .key)" = "$RK" ]
check "reuse inputs: the receipt names the tree the entry was built from" \
    [ "$(rfact "$id" | jq -r .tree)" = "$MAINTREE" ]
chgrp 66660 "$SOCK"
id=$(setpriv --reuid 66660 --regid 66660 --clear-groups "$O/factoryctl" \
    -s "$SOCK" submit "$T/inp-alice.yaml") || notok "reuse inputs: uid 66660: not submitted"
wait_terminated "$id" 60 || notok "reuse inputs: uid 66660: did not finish"
UK=$(rfact "$id" | jq -r .key)
check "reuse inputs: another submitter misses, its own key (counter $(count))" \
    [ "$(count)" = $((n + 2)) -a "$UK" != "$RK" -a -n "$UK" ]
check "reuse inputs: another submitter: validated on its own outputs" \
    passed "$id" true
id=$(submit_wait "$T/inp.yaml") || notok "reuse inputs: main again: did not finish"
check "reuse inputs: root's next attempt hits root's entry (counter $(count))" \
    [ "$(count)" = $((n + 2)) -a "$(rfact "$id" | jq -r .key)" = "$RK" ]
check "reuse inputs: root's next attempt never validates on the other's" \
    passed "$id" false

# --- refused outputs: the attempt fails, nothing is stored ------------
refused() {	# NAME SCRIPT PATTERN
	before=$(entries)
	man "$T/$1.yaml" "" "$2" "" "  env: {CASE: $1}"
	id=$(submit_wait "$T/$1.yaml" 90) || notok "$1: did not finish"
	reason=$(field "$id" reason)
	check "$1: failed ($reason)" sh -c \
	    "[ '$(field "$id" state)' = failed ] && echo \"\$1\" | grep -q -- '$3'" _ "$reason"
	check "$1: no entry stored, no temporary left" \
	    [ "$(entries)" = "$before" -a "$(tmps)" = 0 ]
}
refused outside 'mkdir -p deps; echo x > deps/ok; echo y > src/evil' \
    'setup wrote src, outside its outputs'
refused outside-top 'mkdir -p deps; echo y > evil' \
    'setup wrote evil, outside its outputs'
refused delete 'mkdir -p deps; rm README.md' \
    'setup wrote README.md, outside its outputs'
refused escape-output 'ln -s src deps' 'leaves its output'
refused escape 'mkdir -p deps/a; ln -s ../../src deps/a/up' \
    'leaves its output'
refused absolute 'mkdir -p deps; ln -s /etc/passwd deps/pw' \
    'leaves its output'
# factoryd's own filter refuses the set-id bit to chmod (EPERM), before
# the output's check would refuse it: the script says so by its status.
refused setuid 'mkdir -p deps; echo x > deps/f; chmod 4755 deps/f || exit 7' \
    'setup exited with status 7'
refused files 'mkdir -p deps; for i in $(seq 0 16384); do : > deps/f$i; done' \
    'more than 16384 files'
refused bytes 'mkdir -p deps; dd if=/dev/zero of=deps/big bs=1M count=5 2>/dev/null' \
    'more than 4194304 bytes'
refused status 'mkdir -p deps; echo x > deps/f; exit 3' \
    'setup exited with status 3'
refused fifo 'mkdir -p deps; mkfifo deps/p' 'a FIFO, refused'
refused hidden-dir 'mkdir -p deps/a/b/c; chmod 4755 deps/a/b/c || exit 7' \
    'setup exited with status 7'
# A name that is not UTF-8 is named escaped (esc.h): the reason is kept.
refused badname 'mkdir -p deps; echo y > "$(printf "ev\377il")"' \
    'setup wrote ev\\xffil, outside its outputs'
refused badlink 'mkdir -p deps; ln -s "$(printf "/\377")" "deps/$(printf "l\001")"' \
    'deps/l\\x01: a symbolic link to "/\\xff" leaves its output'

# --- a link that leaves its output through another link (issue 23) ----
# Counting ".." in the text is not enough: a component that is itself a
# link of the output is no directory.  Each is refused, naming the link.
refused link-self 'mkdir -p deps; ln -s . deps/self; ln -s self/.. deps/up; ln -s up/.. deps/up2' \
    'deps/up: a symbolic link to "self/\.\." leaves its output (through deps/self)'
refused link-chain 'mkdir -p deps; ln -s b deps/a; ln -s c deps/b; ln -s . deps/c; ln -s a/.. deps/x' \
    'deps/x: a symbolic link to "a/\.\." leaves its output (through deps/a)'
refused link-deep 'mkdir -p deps/s/t; ln -s . deps/self; ln -s ../../self/.. deps/s/t/x' \
    'deps/s/t/x: a symbolic link to "\.\./\.\./self/\.\." leaves its output (through deps/self)'
refused link-dotdot 'mkdir -p deps/a; ln -s a/../.. deps/x' \
    'deps/x: a symbolic link to "a/\.\./\.\." leaves its output'
refused link-linkdir 'mkdir -p deps/s/t; ln -s s/t deps/a; ln -s a/../.. deps/x' \
    'deps/x: a symbolic link to "a/\.\./\.\." leaves its output (through deps/a)'
refused link-abs-chain 'mkdir -p deps; ln -s /tmp deps/a; ln -s a/x deps/b' \
    'deps/a: a symbolic link to "/tmp" leaves its output'
# Links that stay inside are kept, chains and ".." through directories.
before=$(entries)
man "$T/links-ok.yaml" "" 'mkdir -p deps/sub/d && echo f > deps/sub/file && ln -s sub/file deps/l1 && ln -s l1 deps/l2 && ln -s sub/../sub/file deps/l3 && ln -s ../file deps/sub/d/up && ln -s ../../l2 deps/sub/d/l4 && ln -s . deps/self && echo built > deps/out' \
    "" "  env: {CASE: links-ok}"
id=$(submit_wait "$T/links-ok.yaml" 90) || notok "links inside: did not finish"
# (Publication fails from here on: the baseline's new commits are not in
# the remote; the verdict is what is looked at.)
check "links inside: kept, and validated ($(field "$id" state): $(field "$id" reason))" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $id | grep '\"kind\":\"verdict\"' | grep -q '\"passed\":true'"
LK=$(rfact "$id" | jq -r .key)
check "links inside: stored as written" \
    [ "$(readlink "$STATE/setup/$LK/deps/sub/d/l4")" = ../../l2 -a \
    "$(cat "$STATE/setup/$LK/deps/sub/d/l4")" = f ]

# --- an input that is a symbolic link is refused -----------------------
ln -s README.md "$T/src/link.lock"
git -C "$T/src" add link.lock &&
    git -C "$T/src" -c user.name=t -c user.email=t@localhost commit -qm link &&
    git -C "$T/src" push -q "$T/demo.git" main || fail "cannot push"
n=$(count)
INPUTS=link.lock man "$T/link.yaml"
id=$(submit_wait "$T/link.yaml") || notok "link input: did not finish"
check "a symbolic link input: failed ($(field "$id" reason))" sh -c \
    "[ '$(field "$id" state)' = failed ] && '$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'setup.inputs: link.lock: a symbolic link, refused'"
check "a symbolic link input: setup did not run" [ "$(count)" = "$n" ]
INPUTS="src/../README.md" man "$T/dotdot.yaml"
check "an input with ..: refused at submission" \
    sh -c "! '$O/factoryctl' -s '$SOCK' submit '$T/dotdot.yaml' 2>'$T/dd.err' && grep -q 'setup.inputs\[0\]: \"src/../README.md\": an empty' '$T/dd.err'"

# --- cache rm of an entry in use is refused; gc to the bound ----------
man "$T/hold.yaml" "" "" 'sleep 30'
id=$(ctl submit "$T/hold.yaml") || notok "hold: not submitted"
HOLD=$id
wait_state "$id" running 30 || notok "hold: not running"
KEY=$(rfact "$id" | jq -r .key)
E=$STATE/setup/$KEY
check "cache list: the held entry is in use" \
    [ "$(ctl -j cache list | jq -r ".caches[] | select(.key == \"$KEY\") | .in_use")" = true ]
check "cache rm of an entry in use: refused" \
    sh -c "! '$O/factoryctl' -s '$SOCK' cache rm $KEY 2>'$T/rm.err' && grep -q 'in use' '$T/rm.err'"
check "cache rm of an entry in use: the entry is still there" \
    [ -d "$E" -a -f "$E.meta" ]
# Three entries of 1.5 MB each: more than the 4M bound together.
for k in 1 2 3; do
	man "$T/big$k.yaml" "" 'mkdir -p deps && dd if=/dev/zero of=deps/b bs=512K count=3 2>/dev/null' \
	    'echo big >> src/a.c' "  env: {BIG: \"$k\"}"
	submit_wait "$T/big$k.yaml" 60 >/dev/null || notok "big$k: did not finish"
done
total=$(ctl -j cache list | jq '[.caches[] | select(.kind == "setup") | .bytes] | add')
check "the bound: setup entries within 4M ($total bytes)" [ "$total" -le 4194304 ]
check "the bound: the entry in use was kept" [ -d "$E" ]
check "the bound: the oldest entries not in use were evicted" \
    grep -q 'setup: evicted' "$T/log"
ctl cancel "$HOLD" >/dev/null
wait_terminated "$HOLD" 30 || notok "hold: not torn down"
check "cache rm of an entry no longer in use" ctl cache rm "$KEY"
check "cache rm: the entry is gone" [ ! -e "$E" -a ! -e "$E.meta" ]
mkdir "$STATE/setup/.tmp.$(printf '%064d' 7).a-19700101-0001"
check "cache gc: removes a stale temporary" \
    sh -c "'$O/factoryctl' -s '$SOCK' cache gc | grep -q '1 temporaries removed'"
check "cache gc: nothing stale left" [ "$(tmps)" = 0 ]

# --- cancelled during setup: no entry, no run left --------------------
man "$T/slow.yaml" "" 'mkdir -p deps; echo x > deps/f; sleep 30' "" "  env: {CASE: slow}"
before=$(entries)
id=$(ctl submit "$T/slow.yaml") || notok "slow: not submitted"
i=0
while ! grep -q "$id: setup cache miss" "$T/log" && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
sleep 0.5
ctl cancel "$id" >/dev/null
wait_terminated "$id" 30 || notok "cancel during setup: not torn down"
check "cancel during setup: cancelled ($(field "$id" reason))" \
    [ "$(field "$id" state)" = cancelled ]
check "cancel during setup: no entry, no temporary, no run left" \
    [ "$(entries)" = "$before" -a "$(tmps)" = 0 -a \
    -z "$(ls -A "$STATE/setup/run")" ]

# --- the validation run checks the entry's digest itself --------------
man "$T/tamper.yaml" "" "" 'sleep 3; echo t >> src/a.c' "  env: {CASE: tamper}"
id=$(ctl submit "$T/tamper.yaml") || notok "tamper: not submitted"
wait_state "$id" running 30 || notok "tamper: not running"
TK=$(rfact "$id" | jq -r .key)
f=$STATE/setup/$TK/deps/out
chmod u+w "$f" "$STATE/setup/$TK/deps" && echo forged >"$f" && chmod a-w "$f"
wait_terminated "$id" 60 || notok "tamper: not torn down"
reason=$(field "$id" reason)
check "tamper: the entry changed behind the store: failed ($reason)" \
    sh -c "[ '$(field "$id" state)' = failed ] && echo \"\$1\" | grep -q 'not the sha256:.* of its receipts'" _ "$reason"
check "tamper: the forged entry is removed by cache rm" ctl cache rm "$TK"

# --- a crash between the entry's two renames --------------------------
stop_factoryd
export FACTORY_CRASH=setup:after-meta
start_factoryd "$T/factoryd.conf" "$T/log"
unset FACTORY_CRASH
n=$(count)
man "$T/crash.yaml" "" "" "" "  env: {CASE: crash}"
id=$(ctl submit "$T/crash.yaml") || notok "crash: not submitted"
i=0
while kill -0 "$FACTORYD_PID" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1))
done
check "crash: factoryd died at the crash point" \
    grep -q 'crash point setup:after-meta' "$T/log"
wait "$FACTORYD_PID" 2>/dev/null
check "crash: a meta without its entry was left" \
    [ "$(ls "$STATE/setup" | grep -c '\.meta$')" -gt "$(ls "$STATE/setup" | grep -c '^[0-9a-f]*$')" ]
start_factoryd "$T/factoryd.conf" "$T/log"
wait_terminated "$id" 60 || notok "crash: not finished after the restart"
# (Its publication fails: the baseline's new commits are not in the
# remote; the result and verdict are what is looked at.)
check "crash: the attempt went on after the restart to a verdict" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $id | grep -q '\"kind\":\"verdict\"'"
check "crash: setup ran again, the half entry was not a hit" \
    [ "$(count)" = $((n + 2)) ]
CK=$(rfact "$id" | jq -r .key)
CRASHED=$id
check "crash: the entry is whole now" \
    [ -d "$STATE/setup/$CK" -a -f "$STATE/setup/$CK.meta" -a "$(tmps)" = 0 ]

# --- crash recovery: half entries are removed at start ----------------
HK=$(printf '%064d' 8)
mkdir "$STATE/setup/$HK" "$STATE/setup/.tmp.$HK.a-19700101-0002"
echo '{}' >"$STATE/setup/$(printf '%064d' 9).meta"
# An entry of an older store: a meta with a digest but no seal.
OK=$(printf '%064d' 10)
mkdir "$STATE/setup/$OK"
printf '{"digest":"sha256:%064d","files":0,"bytes":0,"created":0}\n' 0 \
    >"$STATE/setup/$OK.meta"
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
check "restart: a key without meta, a meta without key, a temporary: removed" \
    [ ! -e "$STATE/setup/$HK" -a ! -e "$STATE/setup/$(printf '%064d' 9).meta" -a "$(tmps)" = 0 ]
check "restart: an entry without a seal: removed, meta and all" \
    [ ! -e "$STATE/setup/$OK" -a ! -e "$STATE/setup/$OK.meta" ]
check "restart: whole entries kept" [ "$(entries)" -ge 1 ]
check "restart: show has the setup of a replayed attempt" \
    [ "$(ctl -j show "$CRASHED" | jq -r .setup.key)" = "$CK" ]

# --- the store runs beside the event loop (issue 23) ------------------
# A setup that writes 4,000 files of 64 kB: copying, fsyncing and
# hashing its 256 MB takes seconds here.  factoryctl status is answered
# all along, from the setup run to the verdict (the store, then the
# entry's checks before the agent's and the validation's trees); its
# slowest answer is printed with the window it was measured in.  When
# the event loop stored the outputs itself, and hashed them again twice
# before the validation run, status waited for each.
stop_factoryd
sed -i 's/^setup-cache: 4M$/setup-cache: 1G/' "$T/factoryd.conf"
start_factoryd "$T/factoryd.conf" "$T/log"
MANY='mkdir -p deps; i=0; while [ $i -lt 4000 ]; do printf "%65536s" x > deps/f$i; i=$((i + 1)); done; echo built > deps/out'
bigman() {	# FILE CASE [SETUP-SCRIPT]
	cat >"$1" <<MAN
repository: demo
baseline: main
scope: ["src/**", "README.md"]
agent: ["/bin/sh", "-c", "echo more >> src/a.c"]
validate: ["/bin/sh", "-c", "test \"\$(cat deps/out)\" = built && test -f deps/f3999"]
limits: {wall: 120s, cpu: 100s, memory: 1G, pids: 64, tree: 400M, log: 1M}
title: "regress"
environment: {image: "sha256:$H1"}
setup:
  run: ["/bin/sh", "-c", $(printf '%s' "${3:-$MANY}" | jq -Rs .)]
  inputs: [README.md]
  outputs: [deps]
  env: {CASE: $2}
MAN
}
waitlog() {	# PATTERN SECONDS
	i=0
	while ! grep -q "$1" "$T/log" && [ $i -lt $(($2 * 10)) ]; do
		sleep 0.1; i=$((i + 1))
	done
	grep -q "$1" "$T/log"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
bigman "$T/many.yaml" many
id=$(ctl submit "$T/many.yaml") || notok "many files: not submitted"
waitlog "$id: setup cache miss" 60 || notok "many files: setup did not start"
# From the setup run until the verdict (300 s at most).
max=0 n=0 t0=$(now_ms)
while ! grep -q "$id: verdict\|$id: failed" "$T/log" &&
    [ $(($(now_ms) - t0)) -lt 300000 ]; do
	a=$(now_ms)
	ctl status >/dev/null 2>&1
	b=$(now_ms)
	[ $((b - a)) -gt $max ] && max=$((b - a))
	n=$((n + 1))
done
win=$(($(now_ms) - t0))
check "many files: stored ($(grep "$id: setup stored\|$id: failed" "$T/log" | head -n 1 | sed 's/.*setup/setup/'))" \
    grep -q "$id: setup stored" "$T/log"
check "many files: status answered within 2 s from setup to verdict (slowest ${max} ms of $n in ${win} ms)" \
    [ "$max" -lt 2000 ]
wait_terminated "$id" 180 || notok "many files: not torn down"
check "many files: validated on the stored outputs ($(field "$id" state): $(field "$id" reason))" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $id | grep '\"kind\":\"verdict\"' | grep -q '\"passed\":true'"

# --- a store cancelled, or the daemon stopped: its helper is killed ----
# (Test builds: the helper holds after its copy until it is killed.)
helper() {	# ID: the store helper's pid, from the log
	waitlog "$1: setup storing .*: helper pid" 60 &&
	    sed -n "s/.*$1: setup storing .*: helper pid \([0-9]*\).*/\1/p" \
	    "$T/log" | tail -n 1
}
stop_factoryd
export FACTORY_CRASH=setup:store-hold
start_factoryd "$T/factoryd.conf" "$T/log"
unset FACTORY_CRASH
before=$(entries)
man "$T/hold1.yaml" "" "" "" "  env: {CASE: hold1}"
id=$(ctl submit "$T/hold1.yaml") || notok "store cancel: not submitted"
HP=$(helper "$id")
check "store cancel: the store helper runs as its own process (pid ${HP:-none})" \
    sh -c "[ -n '$HP' ] && [ '$HP' != '$FACTORYD_PID' ] && kill -0 '$HP'"
a=$(now_ms)
check "store cancel: status answered while the helper holds" ctl status
b=$(now_ms)
check "store cancel: the helper keeps only CAP_DAC_READ_SEARCH, no_new_privs, seccomp" \
    sh -c "grep -q '^CapEff:[[:space:]]*0000000000000004$' /proc/$HP/status && grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$HP/status && grep -q '^Seccomp:[[:space:]]*2$' /proc/$HP/status"
ctl cancel "$id" >/dev/null
wait_terminated "$id" 30 || notok "store cancel: not torn down"
check "store cancel: cancelled ($(field "$id" state): $(field "$id" reason))" \
    [ "$(field "$id" state)" = cancelled ]
check "store cancel: the helper was killed by its pid" \
    sh -c "grep -q '$id: setup store helper (pid $HP) killed' '$T/log' && ! kill -0 '$HP' 2>/dev/null"
# What the killed helper copied is removed by a child of its own.
i=0
while [ "$(tmps)" != 0 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "store cancel: no entry, no temporary, no run left" \
    [ "$(entries)" = "$before" -a "$(tmps)" = 0 -a \
    -z "$(ls -A "$STATE/setup/run")" ]
check "store cancel: its copy removed by a child, not the event loop" \
    grep -q "setup: removing .*/\.tmp\.[0-9a-f]*\.$id in pid [0-9]" "$T/log"
man "$T/hold2.yaml" "" "" "" "  env: {CASE: hold2}"
id=$(ctl submit "$T/hold2.yaml") || notok "store stop: not submitted"
HP=$(helper "$id")
stop_factoryd
check "store stop: the helper was killed and reaped before the daemon exited" \
    sh -c "[ -n '$HP' ] && grep -q '$id: setup store helper (pid $HP) killed' '$T/log' && ! kill -0 '$HP' 2>/dev/null"
start_factoryd "$T/factoryd.conf" "$T/log"
check "store stop: its temporary is removed at start" \
    grep -q "setup: removing .*/\.tmp\.[0-9a-f]*\.$id, left by a crash" "$T/log"
stop_factoryd
# A helper that never answers is killed at its deadline (a test build's
# FACTORY_TEST_SETUP_JOB_S; the real one follows setup-cache), and its
# attempt fails saying so.  Before, a store had no deadline: the
# attempt waited on it for as long as it held.
export FACTORY_CRASH=setup:store-hold FACTORY_TEST_SETUP_JOB_S=3
start_factoryd "$T/factoryd.conf" "$T/log"
unset FACTORY_CRASH FACTORY_TEST_SETUP_JOB_S
man "$T/hold3.yaml" "" "" "" "  env: {CASE: hold3}"
id=$(ctl submit "$T/hold3.yaml") || notok "store deadline: not submitted"
HP=$(helper "$id")
wait_terminated "$id" 60 || notok "store deadline: not torn down"
check "store deadline: failed at the helper's deadline ($(field "$id" state): $(field "$id" reason))" \
    sh -c '[ "$1" = failed ] && printf "%s" "$2" | grep -q "store helper (pid [0-9]*) killed at its deadline of 3 s"' \
    sh "$(field "$id" state)" "$(field "$id" reason)"
check "store deadline: the helper is gone" \
    sh -c "[ -n '$HP' ] && ! kill -0 '$HP' 2>/dev/null"
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"

# --- as many outputs as a manifest may name, each long ------------------
# 64 outputs of about 730 bytes: the store's job to factory-fswalk is
# about 46 KB (it once took 4 KB and failed every such setup).
LONG=$(printf '%0240d' 0 | tr 0 a)
OUTS=deps
i=0
while [ $i -lt 63 ]; do
	OUTS="$OUTS, o/$i/$LONG/$LONG/$LONG"
	i=$((i + 1))
done
MANY="i=0; while [ \$i -lt 63 ]; do mkdir -p o/\$i/$LONG/$LONG/$LONG && echo \$i >o/\$i/$LONG/$LONG/$LONG/n; i=\$((i + 1)); done; $BUILD"
OUTPUTS=$OUTS man "$T/many.yaml" "" "$MANY" "" "  env: {CASE: many}"
id=$(submit_wait "$T/many.yaml") || notok "many outputs: did not finish"
# Published or not is the remote's business by now (earlier cases
# moved it): the setup is what is checked, stored and run on.
MKEY=$(rfact "$id" | jq -r .key)
MWHY=$(field "$id" reason)
check "many outputs: stored, and the attempt went on ($(field "$id" state): $MWHY)" \
    sh -c '[ "$1" = false ] && [ -n "$2" ] && [ "$2" != null ] &&
    ! printf "%s" "$3" | grep -q setup' sh "$(rfact "$id" | jq -r .hit)" \
    "$MKEY" "$MWHY"
check "many outputs: all 64 stored" \
    sh -c "[ \"\$(cat '$STATE/setup/$MKEY/o/62/$LONG/$LONG/$LONG/n')\" = 62 ] && [ \"\$(cat '$STATE/setup/$MKEY/deps/out')\" = built ]"

# --- a verifier that asks for its validation run twice ----------------
# The entry is checked by a job before the run starts (not in the
# loop); a second request while that job runs is the verifier's lie.
L=$T/liar
mkdir -p "$L"
for b in "$O"/factory-*; do
	ln -s "$b" "$L/"
done
rm "$L/factory-verifier"
cp "$O/regress/daemon/prog_badchild" "$L/factory-verifier"
echo validate-twice >"$L/factory-verifier.mode"
chmod 755 "$L"
sed -i "s|^libexec: .*|libexec: $L|" "$T/factoryd.conf"
ctl reload >/dev/null
wait_children "$SOCK"
before=$(($(wc -l <"$T/log") + 1))
id=$(submit_wait "$T/m1.yaml") || notok "validate twice: did not finish"
check "validate twice: not published ($(field "$id" state))" \
    [ "$(field "$id" state)" != published ]
check "validate twice: the second request kills the verifier" \
    sh -c "tail -n +$before '$T/log' | grep -q 'verifier (pid [0-9]*): .*VALIDATE_REQ asked twice.*killing it'"
check "validate twice: it fails for its verifier ($(field "$id" reason))" \
    sh -c "printf '%s' \"\$1\" | grep -q 'verifier died'" sh "$(field "$id" reason)"
sed -i "s|^libexec: .*|libexec: $O|" "$T/factoryd.conf"
ctl reload >/dev/null
wait_children "$SOCK"

regress_done
