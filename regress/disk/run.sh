#!/bin/sh
# Disk: an agent that fills its disk gets ENOSPC and ends with a
# reason while the daemon keeps working; the journal keeps space in
# reserve; a full state file system wedges nothing, before or across a
# restart, and attempts go on when space returns.  Needs root (tmpfs
# mounts) and a test build (fault points) for the no-reserve cases.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
RANGE_LO=62600
RANGE_HI=62649
make_repos "$T" 61504
write_attempt_conf "$T" 61500 $RANGE_LO-$RANGE_HI
cat >>"$T/factoryd.conf" <<CONF
attempt-disk: {default: 64M, max: 256M}
reconcile-interval: 2s
CONF
start_factoryd "$T/factoryd.conf" "$T/log"

# The attempt's mount, as /proc/self/mountinfo lists it (empty: none).
attempt_mount() {	# state-dir id
	awk -v d="$1/attempts/$2" '$5 == d {print}' /proc/self/mountinfo
}

# Ended, torn down, nothing of it left, and the daemon takes new work.
assert_ended() {	# name id state
	check "$1: $2 ended $3 ($(field $2 state): $(field $2 reason))" \
	    [ "$(field $2 state)" = "$3" ]
	check "$1: torn down, terminated journaled" \
	    sh -c "[ \"\$('$O/factoryctl' -s '$SOCK' -j show $2 | jq -r .terminated)\" = true ] &&
	    '$O/factoryctl' -s '$SOCK' receipts $2 | grep -q '\"kind\":\"terminated\"'"
	check "$1: nothing of it left for the reconciler" \
	    sh -c "! '$O/factoryctl' -s '$SOCK' receipts $2 | grep -q '\"kind\":\"reaped\"'"
	check "$1: no mount left" [ -z "$(attempt_mount "$STATE" $2)" ]
	check "$1: no attempt dir left" [ ! -e "$STATE/attempts/$2" ]
	check "$1: the daemon serves status" ctl -j status
}

STATE=$T/state

# 1. 1 MiB files until ENOSPC on a 4M disk.
write_manifest "$T/fill.yaml" '
i=0
sleep 1
while dd if=/dev/zero of=f$i bs=1M count=1 2>/dev/null; do i=$((i + 1)); done
echo "wrote $i files before ENOSPC"; echo x >> README.md' 'true'
sed -i 's/^limits: {/limits: {disk: 4M, /' "$T/fill.yaml"
id=$(ctl submit "$T/fill.yaml") || fail "disk: 4M refused: $(ctl submit "$T/fill.yaml" 2>&1)"
wait_state "$id" running 20
m=$(attempt_mount "$STATE" "$id")
check "disk 4M: its own tmpfs at attempts/$id while it runs ($m)" \
    sh -c "echo '$m' | grep -q ' - tmpfs .*size=4096k'"
wait_terminated "$id" 60
assert_ended "disk 4M" "$id" failed
check "disk 4M: the reason says the disk limit was reached" \
    sh -c "[ \"\$('$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason)\" = 'agent filled its disk limit of 4M' ]"
check "disk 4M: the exited receipt carries the disk usage" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $id | grep '\"kind\":\"exited\"' | grep -q '\"disk\":{\"full\":true'"
check "disk 4M: the agent saw ENOSPC after at most 4 files" \
    sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl logs $id | grep -Eq 'wrote [0-4] files before ENOSPC'"
write_manifest "$T/ok.yaml" 'echo ok >> README.md' 'grep -q ok README.md'
id=$(submit_wait "$T/ok.yaml")
check "after a full disk: the next attempt publishes" [ "$(field $id state)" = published ]

# 2. Many small files: the inodes run out first.
write_manifest "$T/inodes.yaml" '
i=0
while true > n$i 2>/dev/null; do i=$((i + 1)); [ $i -ge 100000 ] && break; done
echo "made $i files"' 'true'
sed -i 's/^limits: {/limits: {disk: 4M, /' "$T/inodes.yaml"
id=$(submit_wait "$T/inodes.yaml" 90)
assert_ended "inodes" "$id" failed
check "inodes: stopped well before 100000 files" \
    sh -c "'$O/factoryctl' -s '$SOCK' logs $id | grep -Eq 'made [0-9]{1,4} files'"
check "inodes: the reason says the disk limit was reached" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j show $id | jq -r .reason | grep -q 'disk limit'"

# 3. One sparse huge file, then fallocate past the limit: bounded, the
# daemon goes on.
write_manifest "$T/sparse.yaml" '
truncate -s 1T sparse 2>/dev/null || echo "truncate refused"
fallocate -l 64M fa 2>/dev/null || echo "fallocate refused"
rm -f sparse fa; echo s >> README.md' 'grep -q s README.md'
sed -i 's/^limits: {/limits: {disk: 4M, /' "$T/sparse.yaml"
id=$(submit_wait "$T/sparse.yaml")
assert_ended "sparse, fallocate" "$id" published
check "fallocate past the limit refused" \
    sh -c "'$O/factoryctl' -s '$SOCK' logs $id | grep -q 'fallocate refused'"
write_manifest "$T/falfill.yaml" '
fallocate -l 3M fa && dd if=/dev/zero of=fb bs=4k 2>/dev/null
echo "after fallocate: $(($(stat -c %s fb) / 1024))K more"' 'true'
sed -i 's/^limits: {/limits: {disk: 4M, /' "$T/falfill.yaml"
id=$(submit_wait "$T/falfill.yaml")
assert_ended "fallocate to the brim" "$id" failed
check "fallocate to the brim: the allocated space counted" \
    sh -c "'$O/factoryctl' -s '$SOCK' logs $id | awk '/after fallocate/ {exit !(\$3+0 < 1024)}'"

# Nearly full, not quite: the collection then runs short of space; the
# attempt ends either way, with nothing left.
write_manifest "$T/nearly.yaml" '
dd if=/dev/zero of=big bs=4k 2>/dev/null; rm -f small
dd if=/dev/zero of=small bs=4k count=1 2>/dev/null
truncate -s -128k big; echo n >> README.md' 'true'
sed -i 's/^limits: {/limits: {disk: 4M, /; s/^scope: \[/scope: ["big", "small", /' "$T/nearly.yaml"
id=$(submit_wait "$T/nearly.yaml")
st=$(field $id state)
check "nearly full: ended ($st: $(field $id reason))" \
    sh -c "[ '$st' = published ] || [ '$st' = failed ] || [ '$st' = rejected ]"
assert_ended "nearly full" "$id" "$st"

# The validation run has a disk of the same size: filling it fails the
# validation, not the daemon.
write_manifest "$T/vfill.yaml" 'echo v >> README.md' 'sleep 2
i=0
while dd if=/dev/zero of=v$i bs=1M count=1 2>/dev/null; do i=$((i + 1)); done
echo "validation wrote $i files"; exit 1'
sed -i 's/^limits: {/limits: {disk: 4M, /' "$T/vfill.yaml"
id=$(ctl submit "$T/vfill.yaml")
wait_state "$id" verifying 30
i=0
while [ $i -lt 100 ] && [ -z "$(awk -v d="$STATE/verify/$id" '$5 == d' /proc/self/mountinfo)" ]; do
	sleep 0.1; i=$((i + 1))
done
check "validation: its own tmpfs at verify/$id" \
    sh -c "awk -v d='$STATE/verify/$id' '\$5 == d' /proc/self/mountinfo | grep -q ' - tmpfs .*size=4096k'"
wait_terminated "$id" 60
assert_ended "validation fills its disk" "$id" rejected
check "validation: no verify dir or mount left" \
    sh -c "[ ! -e '$STATE/verify/$id' ] && ! awk -v d='$STATE/verify/$id' '\$5 == d' /proc/self/mountinfo | grep -q ."

# 4. /tmp and /dev/shm in the sandbox are bounded too.
write_manifest "$T/tmp.yaml" '
for d in /tmp /dev/shm; do
	n=0
	while dd if=/dev/zero of=$d/b$n bs=1M count=16 2>/dev/null; do
		n=$((n + 1)); [ $n -ge 32 ] && break
	done
	echo "$d big $(($(cat $d/b* | wc -c) / 1048576))M"; rm -f $d/b*
	i=0
	while true > $d/n$i 2>/dev/null; do i=$((i + 1)); [ $i -ge 100000 ] && break; done
	echo "$d files $i"; rm -f $d/n*
done
echo t >> README.md' 'grep -q t README.md'
id=$(submit_wait "$T/tmp.yaml" 120)
assert_ended "/tmp and /dev/shm" "$id" published
ctl logs "$id" >"$T/tmp.log" 2>&1
for d in /tmp /dev/shm; do
	check "$d: 512M in 16M files stops at the bound ($(grep "^$d big" "$T/tmp.log"))" \
	    sh -c "grep '^$d big' '$T/tmp.log' | awk '{exit !(\$3+0 <= 64)}'"
	check "$d: inodes are bounded ($(grep "^$d files" "$T/tmp.log"))" \
	    sh -c "grep '^$d files' '$T/tmp.log' | awk '{exit !(\$3 < 100000)}'"
done

# 5. The limit is the operator's: above attempt-disk max is refused.
write_manifest "$T/huge.yaml" 'true'
sed -i 's/^limits: {/limits: {disk: 1G, /' "$T/huge.yaml"
ctl submit "$T/huge.yaml" >"$T/out" 2>&1
check "disk above the maximum: refused" \
    grep -q 'limits: disk: 1G is more than the 256M attempt-disk max' "$T/out"

# 6. A disk no journal record accounts for is an orphan, and reap
# unmounts it by its exact path before its directory goes.
oid=a-20261201-9999
mkdir "$STATE/attempts/$oid"
mount -t tmpfs -o size=1m tmpfs "$STATE/attempts/$oid" || fail "cannot mount a tmpfs"
echo leftover >"$STATE/attempts/$oid/f"
ctl reconcile >/dev/null
check "orphan disk: listed as a mount" \
    sh -c "'$O/factoryctl' -s '$SOCK' -j orphans | jq -e '.orphans[] | select(.kind == \"mount\" and .id == \"$oid\" and .what == \"$STATE/attempts/$oid\")'"
ctl reap "$oid" >"$T/out" 2>&1
check "orphan disk: reaped ($(head -1 "$T/out"))" [ -z "$(attempt_mount "$STATE" $oid)" ]
check "orphan disk: its directory removed after it" [ ! -e "$STATE/attempts/$oid" ]
umount "$STATE/attempts/$oid" 2>/dev/null
stop_factoryd

# 7. A state dir on a small tmpfs, filled from outside while an
# attempt runs.  With the journal's reserve the attempt goes on; the
# fault point journal:no-reserve takes the reserve away, and appends
# fail until the test frees space: the attempt must then go on too.
S=$T/small
mkdir -p "$S/state"
make_repos "$S" 61504
write_attempt_conf "$S" 61500 $RANGE_LO-$RANGE_HI
cat >>"$S/factoryd.conf" <<CONF
attempt-disk: {default: 4M, max: 8M}
CONF
# One at a time: the second attempt waits in the queue.
sed -i 's/^max-attempts: .*/max-attempts: 1/' "$S/factoryd.conf"
mount -t tmpfs -o size=8m tmpfs "$S/state" || fail "cannot mount a tmpfs"
SOCK=$S/factoryd.sock
STATE=$S/state
write_manifest "$T/slow.yaml" 'sleep 3; echo slow >> README.md' 'grep -q slow README.md'
fill() { dd if=/dev/zero of="$S/state/fill" bs=4k 2>/dev/null; sync; }

for mode in reserve no-reserve; do
	if [ $mode = no-reserve ]; then
		FACTORY_CRASH=journal:no-reserve "$O/factoryd" -dk -f "$S/factoryd.conf" 2>>"$S/log" &
		FACTORYD_PID=$!
		wait_serving "$SOCK" "$FACTORYD_PID"
	else
		start_factoryd "$S/factoryd.conf" "$S/log"
	fi
	id=$(ctl submit "$T/slow.yaml")
	wait_state "$id" running 20
	queued=$(ctl submit "$T/slow.yaml")
	fill
	sleep 6
	check "full state fs ($mode): the daemon serves status" ctl -j status
	check "full state fs ($mode): show answers" ctl -j show "$id"
	"$O/factoryctl" -s "$SOCK" submit "$T/slow.yaml" >"$T/out" 2>&1
	check "full state fs ($mode): a new submission is refused ($(cat "$T/out"))" \
	    grep -q 'not accepted' "$T/out"
	if [ $mode = reserve ]; then
		check "full state fs: the queued attempt waits for space ($(field $queued phase))" \
		    [ "$(field $queued phase)" = queued ]
	fi
	rm -f "$S/state/fill"
	if [ $mode = reserve ]; then
		i=0
		while [ "$(field $queued phase)" = queued ] && [ $i -lt 50 ]; do
			sleep 0.1; i=$((i + 1))
		done
		check "full state fs: the queued attempt starts within 5s of space returning" \
		    [ "$(field $queued phase)" != queued ]
	fi
	wait_terminated "$id" 60
	wait_terminated "$queued" 60
	st=$(field "$queued" state)
	check "full state fs ($mode): the queued $queued ended ($st: $(field $queued reason))" \
	    sh -c "[ '$st' = published ] || { [ '$st' = failed ] && [ -n \"\$('$O/factoryctl' -s '$SOCK' -j show $queued | jq -r '.reason // empty')\" ]; }"
	assert_ended "full state fs ($mode), queued" "$queued" "$st"
	st=$(field "$id" state)
	check "full state fs ($mode): $id completed or failed with a reason ($st: $(field $id reason))" \
	    sh -c "[ '$st' = published ] || { [ '$st' = failed ] && [ -n \"\$('$O/factoryctl' -s '$SOCK' -j show $id | jq -r '.reason // empty')\" ]; }"
	assert_ended "full state fs ($mode)" "$id" "$st"
	id2=$(submit_wait "$T/slow.yaml")
	check "full state fs ($mode): space again, attempts go on" \
	    [ "$(field $id2 state)" = published ]
	stop_factoryd
done
check "no-reserve: a failed append is retried on a timer" \
    grep -q 'journal: .* retrying' "$S/log"

# 8. A restart on a full state fs starts, serves status, refuses new
# work with a reason, and recovers when space returns; an attempt cut
# off by the restart is failed and torn down once it can be journaled.
start_factoryd "$S/factoryd.conf" "$S/log"
id=$(ctl submit "$T/slow.yaml")
wait_state "$id" running 20
kill -KILL "$FACTORYD_PID"
wait "$FACTORYD_PID" 2>/dev/null
FACTORYD_PID=""
sleep 1
fill
FACTORY_CRASH=journal:no-reserve "$O/factoryd" -dk -f "$S/factoryd.conf" 2>>"$S/log" &
FACTORYD_PID=$!
# The killed daemon's socket is still there: wait for an answer.
i=0
while ! ctl -j status >/dev/null 2>&1 && [ $i -lt 200 ]; do
	kill -0 "$FACTORYD_PID" 2>/dev/null || break
	sleep 0.1; i=$((i + 1))
done
check "restart on a full state fs: factoryd starts" kill -0 "$FACTORYD_PID"
wait_children "$SOCK"
ctl -j status >"$T/status" 2>&1
check "restart on a full state fs: status answers ($(head -c 300 "$T/status"))" \
    jq -e .processes "$T/status"
check "restart on a full state fs: the cut-off attempt is listed" ctl -j show "$id"
"$O/factoryctl" -s "$SOCK" submit "$T/slow.yaml" >"$T/out" 2>&1
check "restart on a full state fs: a submission is refused with a reason" \
    grep -q 'not accepted' "$T/out"
rm -f "$S/state/fill"
wait_terminated "$id" 60
assert_ended "restart on a full state fs" "$id" failed
id2=$(submit_wait "$T/slow.yaml")
check "restart on a full state fs: space again, attempts go on" \
    [ "$(field $id2 state)" = published ]
stop_factoryd
umount "$S/state"

# 9. A cohort's selection publishes while the journal cannot be written
# (the test build's FACTORY_TEST_JOURNAL_FULL: appends fail as on a full
# fs while its file exists): "published" waits for space, and once it
# is journaled the other member goes, not selected (before: it stayed
# selectable, its sandbox and uid held, until a restart).  The forge's
# pulls lock holds the publication until the journal is "full".
C=$T/cohort
mkdir -p "$C"
make_repos "$C" 61504
write_attempt_conf "$C" 61500 $RANGE_LO-$RANGE_HI
SOCK=$C/factoryd.sock
STATE=$C/state
write_manifest "$T/pair.yaml" 'echo "$MODE" >> README.md' true 'cohort:
  size: 2
  variants:
    - env: {MODE: left}
    - env: {MODE: right}'
FULL=$STATE/test-journal-full
export FACTORY_TEST_JOURNAL_FULL="$FULL"
start_factoryd "$C/factoryd.conf" "$C/log"
unset FACTORY_TEST_JOURNAL_FULL
OUT=$(ctl -j submit -w "$T/pair.yaml")
A=$(printf '%s' "$OUT" | jq -r '.members[0].id')
B=$(printf '%s' "$OUT" | jq -r '.members[1].id')
check "cohort, journal full: both members selectable" \
    [ "$(field "$A" state)" = selectable -a "$(field "$B" state)" = selectable ]
touch "$C/pulls/.lock" && chown 61504:61504 "$C/pulls/.lock"
rm -f "$T/locked"
( flock -x 9 && touch "$T/locked" && exec sleep 120 ) 9<"$C/pulls/.lock" &
LOCKPID=$!
i=0
while [ ! -e "$T/locked" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ctl select "$A" >/dev/null
wait_state "$A" publishing 30
touch "$FULL"
kill "$LOCKPID"; wait "$LOCKPID" 2>/dev/null
i=0
while ! grep -q "journal: $A: published refused" "$C/log" && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
check "cohort, journal full: published refused while it is full" \
    grep -q "journal: $A: published refused" "$C/log"
check "cohort, journal full: $B still selectable meanwhile" \
    [ "$(field "$B" state)" = selectable ]
rm -f "$FULL"
wait_terminated "$B" 30
check "cohort, journal full: $A published once space returned ($(field "$A" state))" \
    [ "$(field "$A" state)" = published ]
check "cohort, journal full: then $B cancelled, not selected ($(field "$B" state): $(field "$B" reason))" \
    sh -c "[ '$(field "$B" state)' = cancelled ] && '$O/factoryctl' -s '$SOCK' -j show $B | jq -r .reason | grep -q '^not selected: '"
stop_factoryd

regress_done
