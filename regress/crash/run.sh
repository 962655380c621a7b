#!/bin/sh
# Crash safety: abort every process at every crash point, restart,
# reconcile, and check that nothing is lost, nothing is left and
# nothing is published twice; SIGKILL each child mid-attempt; a stale
# RESULT; a torn journal tail; a full disk; 50 attempts at once.
# Needs a test build (make check builds one): crash points are
# compiled in only there.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
RANGE_LO=62300
RANGE_HI=62399
make_repos "$T" 61304
write_attempt_conf "$T" 61300 $RANGE_LO-$RANGE_HI
cat >>"$T/factoryd.conf" <<CONF
lease-ttl: 3s
reconcile-interval: 2s
CONF
write_manifest "$T/m.yaml" 'echo crash >> README.md' 'grep -q crash README.md'

if ! grep -q 'crash point' "$O/factoryd" 2>/dev/null; then
	echo "ok - # SKIP not a test build: no crash points in $O/factoryd"
	regress_done
fi

range_procs() {
	u=$RANGE_LO
	while [ $u -le $RANGE_HI ]; do
		uid_procs $u
		u=$((u + 1))
	done
}

# Everything an attempt may leave behind is gone.
assert_clean() {	# name id
	check "$1: no process of an attempt uid" [ -z "$(range_procs)" ]
	# This daemon's own cgroups (factory/<instance>): another daemon on
	# the machine may have an attempt of the same id.
	tag=$(printf %s "$(realpath "$T/state")" | sha256sum | cut -c1-8)
	check "$1: no cgroup of the attempt" \
	    sh -c "! ls -d /sys/fs/cgroup/*/factory/$tag/$2 /sys/fs/cgroup/*/factory/$tag/$2-v 2>/dev/null | grep -q ."
	check "$1: no overlay or disk of the attempt mounted" \
	    sh -c "! grep -q ' $T/state/[a-z]*/$2[ /]' /proc/mounts"
	check "$1: no attempt or verify dir" \
	    sh -c "[ ! -e '$T/state/attempts/$2' ] && [ ! -e '$T/state/verify/$2' ]"
	b=$(git --git-dir="$T/remote.git" -c safe.directory='*' for-each-ref "refs/heads/factory/$2" | wc -l)
	check "$1: at most one branch" [ "$b" -le 1 ]
	p=$(grep -l "\"attempt\": \"$2\"" "$T"/pulls/*.json 2>/dev/null | wc -l)
	check "$1: at most one pull record" [ "$p" -le 1 ]
	if [ "$(field $2 state)" = published ]; then
		check "$1: published: one branch, one pull record" \
		    [ "$p" = 1 ] && [ "$b" = 1 ]
	else
		check "$1: not published: no pull record" [ "$p" = 0 ]
	fi
	check "$1: the receipts verify" \
	    sh -c "'$O/factoryctl' -s '$SOCK' receipts $2 | '$O/factoryctl' verify - >/dev/null"
}

crash_at() {	# point
	point=$1
	FACTORY_CRASH=$point "$O/factoryd" -dk -f "$T/factoryd.conf" 2>>"$T/log" &
	FACTORYD_PID=$!
	wait_serving "$SOCK" "$FACTORYD_PID"
	# The answer may be lost with a parent that dies before it is
	# sent: the attempt is then the newest in the list.
	ctl submit "$T/m.yaml" >/dev/null 2>&1
	case $point in
	parent:*)
		i=0
		while kill -0 "$FACTORYD_PID" 2>/dev/null && [ $i -lt 300 ]; do
			sleep 0.1; i=$((i + 1))
		done
		wait "$FACTORYD_PID"
		st=$?
		check "$point: factoryd died there (exit $st)" [ "$st" = 86 ]
		FACTORYD_PID=""
		# Its children follow it (EOF on fd 3); its sandboxes die
		# with their pid 1 (parent-death signal).
		sleep 0.5
		start_factoryd "$T/factoryd.conf" "$T/log"
		;;
	esac
	id=$(ctl -j list | jq -r '.attempts[-1].id')
	wait_terminated "$id" 60
	check "$point: $id ended and was torn down ($(field $id state): $(field $id reason))" \
	    [ "$(field $id terminated)" = true ]
	case $point in
	parent:after-running)
		check "$point: failed, the agent cannot be resumed" \
		    [ "$(field $id state)" = failed ] ;;
	*)
		check "$point: published all the same" \
		    [ "$(field $id state)" = published ] ;;
	esac
	ctl reconcile >/dev/null
	assert_clean "$point" "$id"
	stop_factoryd
	# The spare cgroups (hybrid hosts): a killed daemon's went at the
	# restart, the last one's when it stopped.
	check "$point: no spare cgroup left" \
	    sh -c "! ls -d /sys/fs/cgroup/*/factory/$tag/.spare-* 2>/dev/null | grep -q ."
}

for point in parent:after-allocating parent:after-dir worker:before-ready \
    parent:after-tree parent:after-running worker:before-result parent:after-result-ready \
    verifier:before-verdict parent:after-verdict publisher:after-push \
    reconciler:before-inventory; do
	crash_at $point
done
check "crash points logged" grep -q 'crash point publisher:after-push: dying now' "$T/log"
check "a lost worker got a new lease" grep -q 'worker lost: new lease, epoch 2' "$T/log"

# A stale RESULT (the old epoch) is refused and changes nothing.
FACTORY_CRASH=worker:stale-result "$O/factoryd" -dk -f "$T/factoryd.conf" 2>>"$T/log" &
FACTORYD_PID=$!
wait_serving "$SOCK" "$FACTORYD_PID"
id=$(submit_wait "$T/m.yaml")
check "stale RESULT: refused and logged" grep -q "$id: stale epoch 0 (current 1), refused" "$T/log"
check "stale RESULT: the attempt went on with the current one" [ "$(field $id state)" = published ]
check "stale RESULT: one result-ready receipt" \
    sh -c "[ \$('$O/factoryctl' -s '$SOCK' receipts $id | grep -c '\"kind\":\"result-ready\"') = 1 ]"

# SIGKILL of each child while an attempt runs: the attempt goes on.
write_manifest "$T/slow.yaml" 'sleep 2; echo slow >> README.md' 'grep -q slow README.md'
id=$(ctl submit "$T/slow.yaml")
wait_state "$id" running 20
for n in worker reconciler publisher verifier; do
	p=$(ctl -j status | jq -r ".processes[] | select(.name==\"$n\") | .pid" | head -1)
	kill -KILL "$p"
done
wait_terminated "$id" 60
check "SIGKILL of every child mid-attempt: still published" [ "$(field $id state)" = published ]
assert_clean "SIGKILL children" "$id"
check "the parent survived" kill -0 "$FACTORYD_PID"

# 50 at once with max-attempts 4: all finish, none lost.
write_manifest "$T/many.yaml" 'echo many >> README.md' 'grep -q many README.md'
ids=""
i=0
while [ $i -lt 50 ]; do
	ids="$ids $(ctl submit "$T/many.yaml")"
	i=$((i + 1))
done
n=$(echo $ids | wc -w)
check "50 submitted" [ "$n" = 50 ]
max=0
for id in $ids; do
	a=$(ctl -j list | jq '[.attempts[] | select(.state=="provisioning" or .state=="ready" or .state=="running" or .state=="result-ready" or .state=="verifying")] | length')
	[ "$a" -gt "$max" ] && max=$a
	wait_terminated "$id" 120 || notok "$id never finished"
done
check "never more than 4 at once (saw $max)" [ "$max" -le 4 ]
pub=0
for id in $ids; do
	[ "$(field $id state)" = published ] && pub=$((pub + 1))
done
check "all 50 published ($pub)" [ "$pub" = 50 ]
check "50 pull records, numbered without a gap" \
    sh -c "[ \$(cat '$T'/pulls/*.json | jq -s '[.[] | select(.title == \"regress\")] | length') -ge 50 ]"
stop_factoryd

# A torn journal tail is cut off at start, with a log line.
ctl_list() { ctl -j list | jq -c '[.attempts[] | [.id, .state]]'; }
start_factoryd "$T/factoryd.conf" "$T/log"
ctl_list >"$T/before"
stop_factoryd
printf 'FJR1\100\000\000\000garbage' >>"$T/state/journal"
start_factoryd "$T/factoryd.conf" "$T/log"
check "torn tail: cut with a log line" grep -q 'journal: cut torn tail' "$T/log"
ctl_list >"$T/after"
check "torn tail: the same attempts in the same states" cmp -s "$T/before" "$T/after"
stop_factoryd

# A full disk refuses new attempts with a clear error and loses none.
S=$T/small
mkdir -p "$S/state"
make_repos "$S" 61304
write_attempt_conf "$S" 61300 $RANGE_LO-$RANGE_HI
if mount -t tmpfs -o size=4m tmpfs "$S/state"; then
	SOCK=$S/factoryd.sock
	start_factoryd "$S/factoryd.conf" "$S/log"
	id=$(submit_wait "$T/m.yaml")
	check "small disk: an attempt before it fills" [ "$(field $id state)" = published ]
	dd if=/dev/zero of="$S/state/fill" bs=64k 2>/dev/null
	"$O/factoryctl" -s "$SOCK" submit "$T/m.yaml" >"$T/out" 2>&1
	st=$?
	check "full disk: submission refused (exit $st)" [ "$st" = 1 ]
	check "full disk: the error says why" grep -q 'KiB free, less than the' "$T/out"
	check "full disk: the earlier attempt is still there" [ "$(field $id state)" = published ]
	rm -f "$S/state/fill"
	id2=$(submit_wait "$T/m.yaml")
	check "space again: attempts go on" [ "$(field $id2 state)" = published ]
	stop_factoryd
	start_factoryd "$S/factoryd.conf" "$S/log"
	check "full disk: nothing lost across a restart" \
	    sh -c "[ \$('$O/factoryctl' -s '$SOCK' -j list | jq '.attempts | length') = 2 ]"
	stop_factoryd
	umount "$S/state"
else
	notok "full disk: cannot mount a tmpfs"
fi

regress_done
