#!/bin/sh
# Real history round-trips through the real daemon (issue 24): a
# repository made the way years of work make one (hundreds of commits
# packed by gc --aggressive into long delta chains, a second pack, a
# third from loose objects and loose objects besides, packed-refs, a
# commit-graph, a multi-pack-index, a baseline blob stored as a delta
# against a blob its tree does not reach, a gitlink at the top); a
# repository whose baseline is the empty tree and one an agent empties;
# and this project's own repository.  Each agent makes one change: the
# bundle must pass git bundle verify and a git fetch (index-pack and
# its connectivity check), the verifier must accept it, and the
# published commit's tree must be the one git itself makes of the
# same change.  Needs root.

. "$(dirname "$0")/../lib.sh"
LC_ALL=C
export LC_ALL

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
# The git CLI of the test reads no config of the host.
export GIT_CONFIG_NOSYSTEM=1 HOME=$T
G="-c user.name=test -c user.email=test@localhost"

# One commit of loose objects (a blob, a tree, the commit) on main of $H.
loose() {
	b=$(printf 'loose %s\n' "$1" | git -C "$H" hash-object -w --stdin) &&
	t=$( (git -C "$H" ls-tree main | grep -v '	loose.txt$'
	    printf '100644 blob %s\tloose.txt\n' "$b") | git -C "$H" mktree) &&
	c=$(git -C "$H" $G commit-tree "$t" -p main -m "loose $1") &&
	git -C "$H" update-ref refs/heads/main "$c"
}

start=$(date +%s%N)
H=$T/hist.git
git init -q --bare -b main "$H" &&
python3 "$HERE/gen.py" 0 300 1 | git -C "$H" fast-import --quiet &&
git -C "$H" tag v1 main~200 &&
git -C "$H" branch old main~100 &&
git -C "$H" -c pack.threads=1 gc -q --aggressive --prune=now &&
python3 "$HERE/gen.py" 300 40 2 | git -C "$H" fast-import --quiet &&
loose 1 && loose 2 && loose 3 &&
git -C "$H" repack -d -q &&
loose 4 && loose 5 &&
git -C "$H" commit-graph write --reachable &&
git -C "$H" multi-pack-index write ||
    fail "cannot generate the history repository"

# What it must hold, or the cases below test less than they say.
L=$(git -C "$H" rev-parse next:delta/base.txt)
B=$(git -C "$H" rev-parse main:delta/base.txt)
check "history: three packs" [ "$(ls "$H"/objects/pack/*.pack | wc -l)" -ge 3 ]
check "history: and loose objects" \
    [ "$(git -C "$H" count-objects | cut -d' ' -f1)" -ge 6 ]
check "history: packed-refs, commit-graph, multi-pack-index" \
    test -s "$H/packed-refs" -a -s "$H/objects/info/commit-graph" \
    -a -s "$H/objects/pack/multi-pack-index"
check "history: delta chains 40 deep" sh -c \
    "cd '$H' && git verify-pack -s objects/pack/*.idx | grep -q 'chain length = 40:'"
check "history: the baseline's delta/base.txt is a delta against next's" \
    [ "$(echo "$B" | git -C "$H" cat-file --batch-check='%(deltabase)')" = "$L" ]
check "history: which the baseline does not reach" sh -c \
    "! git -C '$H' rev-list --objects main | grep -q '^$L'"
check "history: a gitlink at the top, its commit absent" sh -c \
    "git -C '$H' ls-tree main sub | grep -q '^160000 commit 1111111111111111111111111111111111111111' && ! git -C '$H' cat-file -e 1111111111111111111111111111111111111111"

# The empty tree as a baseline; a small repository an agent empties.
git init -q -b main "$T/e" && git -C "$T/e" $G commit -q --allow-empty \
    -m empty && git clone -q --bare "$T/e" "$T/empty.git" &&
git init -q -b main "$T/f" && echo one >"$T/f/one" && mkdir "$T/f/d" &&
echo two >"$T/f/d/two" && git -C "$T/f" add -A &&
git -C "$T/f" $G commit -q -m few && git clone -q --bare "$T/f" "$T/few.git" ||
    fail "cannot make the small repositories"

# This project's own repository, its packs as they are.
if ! git -C "$TOP" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	SELF=""
	echo "# $TOP is not a git checkout: no attempt on this project"
else
	SELF=$(git -C "$TOP" rev-parse HEAD)
	[ "$(git -C "$TOP" rev-parse --is-shallow-repository)" = true ] &&
	    echo "# $TOP is a shallow clone: the attempt on it sees the history it has"
	git clone -q --bare --no-hardlinks "$TOP" "$T/self.git" ||
	    git clone -q --bare --no-local "$TOP" "$T/self.git" ||
	    fail "cannot clone $TOP"
	echo "# this project: $(git -C "$T/self.git" count-objects -v | tr '\n' ' ')"
fi
for r in hist empty few ${SELF:+self}; do
	git clone -q --bare --no-hardlinks "$T/$r.git" "$T/$r-remote.git" &&
	mkdir -p "$T/$r-pulls" &&
	chown -R 67704:67704 "$T/$r-remote.git" "$T/$r-pulls" ||
	    fail "cannot make the remote of $r"
done
echo "# repositories made in $(( ($(date +%s%N) - start) / 1000000 )) ms"

cat >"$T/factoryd.conf" <<CONF
socket: $SOCK
state-dir: $T/state
libexec: $O
verifiers: 2
max-attempts: 4
attempt-uids: 67720-67739
attempt-disk: {default: 512M, max: 1G}
keys:
  receipts: $T/keys/receipt.key
  verifier: $T/keys/verifier.key
users:
  worker: 67701
  verifier: 67702
  reconciler: 67703
  publisher: 67704
  egress: 67705
  image: 67706
  gateway: 67707
repositories:
CONF
for r in hist empty few ${SELF:+self}; do
	cat >>"$T/factoryd.conf" <<CONF
  $r:
    path: $T/$r.git
    publish: {forge: local, remote: $T/$r-remote.git, pulls: $T/$r-pulls}
CONF
done
start_factoryd "$T/factoryd.conf" "$T/log"

# Until the attempt waits for approval (0) or has ended otherwise (1).
wait_verified() {	# id seconds
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		case $(ctl -j show "$1" | jq -r '"\(.phase) \(.terminated)"') in
		"verified "*) return 0 ;;
		*" true") return 1 ;;
		esac
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# attempt REPO NAME AGENT [BASELINE]: an attempt whose agent runs the
# shell script AGENT in its tree, approved by hand so that its bundle
# is checked before it is published.
attempt() {
	# (check() sets $name: not a name for ours.)
	r=$1 n=$2 agent=$3 baseline=${4:-main}
	cat >"$T/$n.yaml" <<MAN
repository: $r
baseline: $baseline
scope: ["**"]
agent: ["/bin/sh", "-c", $(printf '%s' "$agent" | jq -Rs .)]
validate: ["/bin/sh", "-c", "true"]
limits: {wall: 60s, cpu: 30s, memory: 512M, pids: 64, tree: 200M, log: 1M}
title: "history $n"
approval: manual
MAN
	# The tree git itself makes of the same change.
	w=$T/w-$n
	want=$(git clone -q "$T/$r.git" "$w" &&
	    cd "$w" && git checkout -q "$baseline" && sh -c "$agent" &&
	    git add -A && git write-tree) ||
	    { notok "$n: git cannot make the change"; return; }
	rm -rf "$w"
	t0=$(date +%s%N)
	id=$(ctl submit "$T/$n.yaml") ||
	    { notok "$n: submit refused"; return; }
	if ! wait_verified "$id" 180; then
		wait_terminated "$id" 60
		notok "$n: verified (is $(field "$id" state): $(field "$id" reason))"
		return
	fi
	ok "$n: verified"
	bundle=$T/$n.bundle
	cp "$T/state/attempts/$id/bundle" "$bundle" ||
	    { notok "$n: no bundle to check"; return; }
	check "$n: git bundle verify accepts the bundle" \
	    git -C "$T/$r.git" bundle verify -q "$bundle"
	git clone -q --bare --shared "$T/$r.git" "$T/fetch-$n.git"
	check "$n: git fetch from the bundle (index-pack, connectivity)" \
	    git -C "$T/fetch-$n.git" fetch -q "$bundle" \
	    "refs/heads/factory/$id:refs/heads/got"
	check "$n: the bundle's tree is git's" [ "$(git -C \
	    "$T/fetch-$n.git" rev-parse got^{tree})" = "$want" ]
	ctl approve "$id" >/dev/null
	wait_terminated "$id" 60
	check "$n: published" [ "$(field "$id" state)" = published ]
	check "$n: the published commit's tree is git's" [ "$(git \
	    --git-dir="$T/$r-remote.git" -c safe.directory='*' rev-parse \
	    "$(field "$id" commit)^{tree}")" = "$want" ]
	# (Its publish stage holds the checks above, made before approval.)
	echo "# $n: $(( ($(date +%s%N) - t0) / 1000000 )) ms, stages (ms): $(ctl -j show "$id" | jq -c '.stages | with_entries(select(.value != null))')"
}

attempt hist readme 'echo "one more line" >> README.md'
attempt hist deep 'echo "int deep;" >> src/f07.c'
attempt hist rename 'mv src/old_name.c src/new_name.c'
attempt hist move 'mv mv/a/moved.txt mv/b/moved.txt'
attempt hist mode 'chmod 755 tools/plain.sh'
attempt hist deltabase 'echo "one more line" >> delta/base.txt'
attempt hist deltamove 'mkdir elsewhere && mv delta/base.txt elsewhere/'
attempt empty fromempty 'echo hello > hello && mkdir d && echo x > d/x'
attempt few toempty 'rm -rf one d'
[ -n "$SELF" ] && attempt self self 'echo "one more line" >> README.md' "$SELF"

stop_factoryd
regress_done
