# regress/control: a reader that takes its answer a little at a time
# keeps neither its slot nor the answer past control-idle-timeout from
# when the answer was queued.  Sourced by run.sh ($T, $RO, $F, $IDLE).

# An attempt whose show is large: many long paths changed.
write_manifest "$T/big.yaml" 'd=src; for i in 1 2 3 4; do d=$d/$(printf "%0250d" $i); done
mkdir -p "$d"; for i in $(seq 1 60); do : >"$d/$(printf "f%0240d" $i)"; done'
BIG=$(submit_wait "$T/big.yaml" 60) || fail "control: the large attempt"
sz=$(ctl -j receipts "$BIG" | wc -c)
check "the large attempt's receipts are large ($sz bytes)" [ "$sz" -gt 20000 ]
as 65534 "$F" slowread "$RO" receipts "$BIG" 65536 10 10 >"$T/fast"
check "a reader that reads takes the whole answer ($(cat "$T/fast"))" \
    grep -q '^complete' "$T/fast"

# A byte every 0.5 s, as the outside review tried it; 2 KiB every
# 0.5 s, which lets the daemon write some more every two seconds and
# would take the whole answer in about 6.
as 65534 "$F" slowread "$RO" show "$BIG" 1 500 $((IDLE * 4)) >"$T/slow1" &
S1=$!
BGPIDS="$BGPIDS $S1"
as 65533 "$F" slowread "$RO" receipts "$BIG" 2048 500 $((IDLE * 5)) \
    >"$T/slow2" &
S2=$!
BGPIDS="$BGPIDS $S2"
sleep 1
check "another uid is served while two read slowly" \
    as 65532 "$O/factoryctl" -s "$SOCK" status
wait "$S1" "$S2"
# cut MS: within the deadline and 3 s of it.
cut() { [ "$1" -ge $(( (IDLE - 1) * 1000 )) ] && [ "$1" -le $(( (IDLE + 3) * 1000 )) ]; }
ms1=$(awk '/^closed after/ {print $3}' "$T/slow1")
ms2=$(awk '/^closed after/ {print $3}' "$T/slow2")
check "a byte every 0.5 s: cut after the ${IDLE}s deadline ($(cat "$T/slow1"))" \
    cut "${ms1:-0}"
check "2 KiB every 0.5 s: cut after the ${IDLE}s deadline ($(cat "$T/slow2"))" \
    cut "${ms2:-0}"
check "the daemon logged the cut" \
    grep -q "control: uid 6553[34] did not take all of an answer within ${IDLE}s" "$T/log"
check "root: status after the slow readers" ctl status
