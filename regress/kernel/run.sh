#!/bin/sh
# The kernel features an older kernel lacks, through the real daemon: a
# test build fakes their absence (FACTORY_TEST_NOFEATURE) and factoryd
# must start with what replaces each, say so in its start-up line, and
# run attempts that publish.  Overlayfs takes a detached layer only
# from Linux 6.15: before, the layers are attached in a helper's
# private mount namespace, nothing of which may be left or be seen on
# the host.  Needs root and a test build.

. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "not ok - kernel: needs root"
	exit 1
fi
command -v jq >/dev/null || fail "kernel: needs jq"
if ! grep -q FACTORY_TEST_NOFEATURE "$O/factoryd"; then
	ok "# SKIP kernel: factoryd not built with TESTBUILD=1"
	regress_done
fi

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
STATE=$T/state
make_repos "$T" 71004
write_attempt_conf "$T" 71000 71010-71039

# A feature with no equivalent stops factoryd at start, in one line
# naming it and the kernel that has it.
FACTORY_TEST_NOFEATURE=clone3 timeout 60 "$O/factoryd" -dk \
    -f "$T/factoryd.conf" 2>"$T/log.clone3"
rc=$?
check "no clone3: factoryd stops at start (rc $rc), naming it" \
    sh -c "[ $rc != 0 ] && [ $rc != 124 ] && grep -q 'sandbox: clone3: ENOSYS (Linux 5.3 has it; .*no downgrade)' '$T/log.clone3'"

# The kernel is probed by the launcher (factory-sandbox probe), whose
# answer is a child's: a bad one, or none, stops factoryd at start with
# EX_CONFIG, naming the launcher and the fault; it never crashes it.
mkdir -p "$T/badlib"
cp "$O"/factory-* "$T/badlib/"
cp "$O/regress/kernel/prog_badprobe" "$T/badlib/factory-sandbox"
sed "s|^libexec: .*|libexec: $T/badlib|" "$T/factoryd.conf" >"$T/bad.conf"
for m in "none:field ok: truncated" "trailing:1 bytes left over" \
    "control:field feats: byte 0xa" "downgrade:downgrades 0x2, not allowed" \
    "exit:exited 3" "big:an answer of more than 4096 bytes" \
    "lowabi:Landlock ABI 3 without its downgrades" \
    "ovlunknown:field overlay: 7, unknown" "ovlnone:overlay 0, not probed" \
    "ovlctl:field diskerr: byte 0xa" \
    "cgrel:field cgunified: sys/fs/cgroup/unified, not absolute" \
    "cgdotdot:field cgunified: /sys/fs/cgroup/../cgroup/unified, not canonical" \
    "cgbase:field cgbase: x/../y, not canonical" \
    "cgnotmount:cgroup path /tmp: not the root of a cgroup2 mount" \
    "cgmode:field cgmode: 7, unknown"; do
	mode=${m%%:*}
	FACTORY_TEST_NOFEATURE=$mode timeout 60 "$O/factoryd" -dk \
	    -f "$T/bad.conf" 2>"$T/log.bad.$mode"
	rc=$?
	check "bad probe answer ($mode): factoryd stops at start (rc $rc), naming it" \
	    sh -c "[ $rc = 78 ] && grep -q 'sandbox: factory-sandbox probe: .*${m#*:}' '$T/log.bad.$mode' && ! grep -q forged '$T/log.bad.$mode'"
done

# A host without a cgroup2 mount has no cgroup.kill and nothing to
# attach the bind program to: the one downgrade is not the other.
if [ -n "$(awk '$3 == "cgroup" { print; exit }' /proc/self/mounts)" ]; then
	printf 'sandbox: {downgrade: [cgroup-kill]}\n' >>"$T/bad.conf"
	FACTORY_TEST_NOFEATURE=cgnounified timeout 60 "$O/factoryd" -dk \
	    -f "$T/bad.conf" 2>"$T/log.bad.nounified"
	rc=$?
	check "no cgroup2 mount, cgroup-kill allowed: factoryd stops at start (rc $rc), naming bind-rule" \
	    sh -c "[ $rc != 0 ] && [ $rc != 124 ] && grep -q 'no cgroup2 hierarchy to attach the cgroup bind program to.*bind-rule' '$T/log.bad.nounified'"
	sed -i '$d' "$T/bad.conf"
else
	ok "# SKIP no cgroup v1 controllers here: no host of v1 alone to fake"
fi

# The launcher's overlay probe failing: its line, as factoryd's own.
FACTORY_TEST_NOFEATURE=ovlfail timeout 60 "$O/factoryd" -dk \
    -f "$T/bad.conf" 2>"$T/log.bad.ovlfail"
rc=$?
check "the launcher's overlay probe fails: factoryd stops at start (rc $rc) with its line" \
    sh -c "[ $rc != 0 ] && [ $rc != 124 ] && grep -q 'disk: overlay: faked\$' '$T/log.bad.ovlfail'"

# Mounts on the host below the state directory, one "target fstype" each.
state_mounts() {
	awk -v d="$STATE" 'index($5, d) == 1 {
	    for (i = 7; $i != "-"; i++) ; print $5, $(i + 1) }' \
	    /proc/self/mountinfo
}

# An attempt that changes, adds and removes (whiteouts, copy-up of a
# file of the idmapped pristine tree) and publishes.
write_manifest "$T/edit.yaml" 'echo more >>README.md && rm src/a.c &&
mkdir -p src/new && echo new >src/new/b.c && cat /proc/sys/vm/memfd_noexec' \
    'grep -q more README.md && [ ! -e src/a.c ] && [ -f src/new/b.c ]'
# One that waits, cancelled: its tree is looked at while it runs.
write_manifest "$T/wait.yaml" 'echo x >>README.md; while :; do sleep 1; done'

for mode in native fallback; do
	rm -f "$T/log.$mode"
	if [ $mode = fallback ]; then
		export FACTORY_TEST_NOFEATURE=overlay-detached,memfd-noexec
	fi
	start_factoryd "$T/factoryd.conf" "$T/log.$mode"
	unset FACTORY_TEST_NOFEATURE
	line=$(grep "sandbox: .*; kernel: " "$T/log.$mode")
	if [ $mode = native ]; then
		check "$mode: the start-up line names every feature, all used" \
		    sh -c "echo '$line' | grep -q 'kernel: .*mount_setattr, clone3, clone-into-cgroup, landlock, .*memfd-noexec, .*openat2.*, cgroup.kill, bind-rule, idmapped-mounts, overlay-detached\$' &&
		    ! echo '$line' | grep -q 'replaced by'"
	else
		check "$mode: the start-up line names both replacements" \
		    sh -c "echo '$line' | grep -q 'memfd-noexec (replaced by memfd_create refused with ENOSYS (Linux 6.3 has it))' &&
		    echo '$line' | grep -q 'overlay-detached (replaced by layers attached in a private mount namespace (Linux 6.15 has it))\$'"
	fi
	before=$(state_mounts)

	id=$(ctl submit "$T/wait.yaml") || fail "$mode: submit refused"
	wait_state "$id" running 300 || notok "$mode: $id not running in 300 s"
	m=$(state_mounts)
	check "$mode: the tree is an overlay on the attempt's disk while it runs" \
	    sh -c "echo '$m' | grep -qx '$STATE/attempts/$id/tree overlay'"
	check "$mode: no other mount appeared below the state directory" \
	    [ "$(echo "$m" | grep -v "^$STATE/attempts/$id" | sort)" = \
	    "$(echo "$before" | sort)" ]
	check "$mode: no scratch tmpfs over the state directory on the host" \
	    sh -c "! echo '$m' | grep -qx '$STATE tmpfs'"
	ctl cancel "$id" >/dev/null
	# Generous: a loaded machine tears down slowly, never wrongly.
	wait_terminated "$id" 300 || notok "$mode: $id not torn down in 300 s"
	st=$(field "$id" state)
	left=$(awk '{print $5}' /proc/self/mountinfo | grep "^$STATE/attempts/$id")
	check "$mode: cancelled ($st), torn down, nothing of it mounted ($left)" \
	    sh -c "[ '$st' = cancelled ] && [ -z '$left' ]"

	id=$(submit_wait "$T/edit.yaml" 300)
	check "$mode: an attempt that edits, adds and removes publishes ($(field "$id" state): $(field "$id" reason))" \
	    [ "$(field "$id" state)" = published ]
	check "$mode: the published tree has the edit, the new file, not the removed one" \
	    sh -c "git --git-dir='$T/remote.git' -c safe.directory='*' show factory/$id:README.md | grep -q more &&
	    git --git-dir='$T/remote.git' -c safe.directory='*' show factory/$id:src/new/b.c | grep -q new &&
	    ! git --git-dir='$T/remote.git' -c safe.directory='*' show factory/$id:src/a.c >/dev/null 2>&1"
	# Recorded, never silent: the running receipt, the policy, the
	# attestation's isolation policy (its digest differs by it alone).
	repl=none
	[ $mode = fallback ] && repl="memfd-noexec overlay-detached"
	check "$mode: the running receipt records the replacements ($repl)" \
	    sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl receipts $id |
	    grep '\"kind\":\"running\"' | jq -e '.facts.sandbox ==
	    {\"downgraded\": \"none\", \"replaced\": \"$repl\"}'"
	check "$mode: factoryctl policy shows them" \
	    sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl -j policy |
	    jq -e '.processes[] | select(.name == \"parent\") |
	    .sandbox_replaced == \"$repl\"'"
	ctl attest "$id" | sed -n 1p | jq -r .payload | base64 -d |
	    jq -r .predicate.buildDefinition.internalParameters.isolationPolicy \
	    >"$T/iso.$mode"
	check "$mode: the attestation carries an isolation policy digest" \
	    grep -q '^sha256:[0-9a-f]\{64\}$' "$T/iso.$mode"
	want=2
	[ $mode = fallback ] && want=$(cat /proc/sys/vm/memfd_noexec)
	check "$mode: vm.memfd_noexec in the sandbox is $want" \
	    sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl logs $id | grep -qx '$want'"
	check "$mode: nothing of the attempts is mounted after" \
	    [ "$(state_mounts | sort)" = "$(echo "$before" | sort)" ]
	stop_factoryd
	check "$mode: the daemon stopped cleanly" \
	    sh -c "! grep -q 'fatal\|overlay helper' '$T/log.$mode'"
done
check "the isolation policy digest differs by the replacements alone" \
    [ "$(cat "$T/iso.native")" != "$(cat "$T/iso.fallback")" ]

regress_done
