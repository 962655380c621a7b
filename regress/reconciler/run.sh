#!/bin/sh
# The real factory-reconciler under its real policy (uid, Landlock,
# seccomp), driven by a stand-in parent: it lists a temp state tree, a
# repository, a pull record, a process under an attempt uid and a
# cgroup on the host, and refuses an unexpected message.  Then the
# real factoryd starts it and reports it running.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
REGRESS_TMP=$T		# set in the subshell above only
RUID=61993			# the reconciler's uid here
AUID=61990			# an attempt uid
ID=a-19700101-$(printf %06d $$)	# a cgroup id no factoryd would make
CGMADE=""
SLEEPPID=""

cleanup() {
	[ -n "$SLEEPPID" ] && kill -KILL "$SLEEPPID" 2>/dev/null
	for d in $CGMADE; do
		rmdir "$d" 2>/dev/null
	done
	regress_cleanup
}
trap cleanup EXIT

# The state tree: two attempts, a bad name, a symlink named like one.
mkdir -p "$T/state/attempts/a-20261129-0001" \
    "$T/state/attempts/a-20261129-0002" "$T/state/attempts/bad name" \
    "$T/state/verify/a-20261129-0001" "$T/pulls"
ln -s / "$T/state/attempts/a-20261129-0003"

# A repository with a factory branch and a branch that is not ours.
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@localhost \
    GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@localhost
git init -q --bare "$T/demo.git"
tree=$(git -C "$T/demo.git" mktree </dev/null)
commit=$(git -C "$T/demo.git" commit-tree -m base "$tree")
git -C "$T/demo.git" update-ref refs/heads/factory/a-20261129-0001 "$commit"
git -C "$T/demo.git" update-ref refs/heads/main "$commit"
git -C "$T/demo.git" update-ref refs/heads/factory/not-an-id "$commit"
echo '{"number": 3, "attempt": "a-20261129-0001"}' \
    >"$T/pulls/a-20261129-0001.json"
echo junk >"$T/pulls/junk.txt"

# A process under an attempt uid, killed by pid at the end.
setpriv --reuid $AUID --regid $AUID --clear-groups sleep 60 &
SLEEPPID=$!

# A cgroup in one hierarchy of the host, removed by exact path.
CGP=regress$$
for h in unified memory; do
	if [ -d /sys/fs/cgroup/$h ]; then
		if [ ! -d /sys/fs/cgroup/$h/factory ]; then
			mkdir /sys/fs/cgroup/$h/factory &&
			    CGMADE="/sys/fs/cgroup/$h/factory"
		fi
		# Our own daemon subtree, as factoryd makes factory/<tag>.
		mkdir /sys/fs/cgroup/$h/factory/$CGP &&
		    CGMADE="/sys/fs/cgroup/$h/factory/$CGP $CGMADE"
		mkdir /sys/fs/cgroup/$h/factory/$CGP/$ID &&
		    CGMADE="/sys/fs/cgroup/$h/factory/$CGP/$ID $CGMADE"
		CG=/sys/fs/cgroup/$h/factory/$CGP/$ID
		break
	fi
done

chmod -R go+rX "$T"
run_rec() {	# [-b]
	"$O/regress/reconciler/prog_recparent" "$@" $RUID \
	    "$O/factory-reconciler" -d -V "state=$T/state" \
	    -V "repos=$T/demo.git" -V "remotes=$T/demo.git" \
	    -V "pulls=$T/pulls" -V "attempt_uids=$AUID-$((AUID + 1))" \
	    -V "cgroup_parent=factory/$CGP" \
	    2>"$T/rec.log"
}
run_rec >"$T/out"
sed -n 1p "$T/out" >"$T/inv.json"
q() { jq -e "$@" "$T/inv.json" >/dev/null; }	# [jq args] filter

check "the reconciler answers and exits 0 on EOF" \
    sh -c "[ \"\$(sed -n 2p '$T/out')\" = 'exit 0' ]"
check "attempt_dirs exactly the two attempts" \
    q '.attempt_dirs == ["a-20261129-0001", "a-20261129-0002"]'
check "verify_dirs" q '.verify_dirs == ["a-20261129-0001"]'
check "branches: only factory/<id>, once for repo and remote" \
    q --arg r "$T/demo.git" --arg c "$commit" \
    '[.branches[] | [.repo, .id, .commit]] ==
    [[$r, "a-20261129-0001", $c]]'
check "pulls" q --arg d "$T/pulls" \
    '[.pulls[] | [.dir, .id, .number]] == [[$d, "a-20261129-0001", 3]]'
check "the attempt uid's process" \
    q --argjson p "$SLEEPPID" --argjson u "$AUID" \
    '[.processes[] | select(.pid == $p and .uid == $u and
    .comm == "sleep")] | length == 1'
if [ -n "${CG:-}" ]; then
	check "the host cgroup $CG, by id" q --arg i "$ID" \
	    'any(.cgroups[]; . == {"id": $i, "kind": 0})'
fi
check "skipped: bad name, symlink, foreign branch, junk" q '.skipped == 4'
check "no errors under the policy" q '.errors == []'
check "not truncated" q '.truncated == false'
check "nothing logged as fatal" sh -c "! grep -q fatal '$T/rec.log'"

run_rec -b >"$T/out"
check "an unexpected imsg ends the reconciler (exit 1, no answer)" \
    sh -c "[ \"\$(cat '$T/out')\" = \"\$(printf '(eof)\nexit 1')\" ]"

# The real factoryd starts it: its uid, its policy, running.
SOCK=$T/factoryd.sock
cat >"$T/factoryd.conf" <<CONF
socket: $SOCK
state-dir: $T/dstate
libexec: $O
verifiers: 1
attempt-uids: $AUID-$((AUID + 1))
keys:
  receipts: $T/keys/receipt.key
  verifier: $T/keys/verifier.key
users:
  worker: 61001
  verifier: 61002
  reconciler: $RUID
  publisher: 61004
  egress: 61005
  image: 61006
  gateway: 61007
repositories:
  demo:
    path: $T/demo.git
    publish:
      forge: local
      remote: $T/demo.git
      pulls: $T/pulls
CONF
start_factoryd "$T/factoryd.conf" "$T/log"
i=0
pid=""
while [ $i -lt 100 ]; do
	pid=$("$O/factoryctl" -s "$SOCK" -j status 2>/dev/null |
	    jq -r '.processes[] | select(.name == "reconciler" and
	    .state == "running") | .pid')
	[ -n "$pid" ] && [ "$pid" != 0 ] && break
	sleep 0.1
	i=$((i + 1))
done
check "factoryd reports the reconciler running" [ -n "$pid" ]
check "it runs as its uid" \
    awk -v u=$RUID '/^Uid:/ {exit !($2 == u && $3 == u)}' /proc/$pid/status
check "it is under seccomp" grep -q '^Seccomp:[[:space:]]*2' /proc/$pid/status
"$O/factoryctl" -s "$SOCK" policy >"$T/policy"
check "policy shows its promises and unveils" \
    sh -c "grep -q 'promises: stdio rpath\$' '$T/policy' &&
    grep -q 'unveil: $T/pulls r' '$T/policy'"
sleep 0.5
check "still running after start-up" kill -0 "$pid"
stop_factoryd
check "gone after factoryd stops" sh -c "! kill -0 $pid 2>/dev/null"

. "$(dirname "$0")/hostile.sh"

regress_done
