#!/bin/sh
# factoryd as debian/factory.factoryd.service runs it, as far as its
# settings are seccomp filters (regress/deb/prog_unitenv.c emulates
# systemd 252's): the emulation itself refuses what systemd refuses,
# then an attempt runs to publication under it.  The real unit under
# real systemd is proven in a VM (make check-host); this catches the
# same failures in make check.

. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../deb/unitenv.sh"

top=$(cd "$(dirname "$0")/../.." && pwd)
UNIT=$top/debian/factory.factoryd.service
PU=$O/regress/deb/prog_unitenv
T=$(regress_tmpdir)
SOCK=$T/factoryd.sock

# The emulation has teeth: each setting it claims, it enforces.
: >"$T/f"
check "emulation: RestrictSUIDSGID refuses chmod u+s" \
    sh -c "! '$PU' -S -- chmod u+s '$T/f' && [ ! -u '$T/f' ]"
check "emulation: RestrictSUIDSGID refuses chmod g+s" \
    sh -c "! '$PU' -S -- chmod g+s '$T/f' && [ ! -g '$T/f' ]"
check "emulation: RestrictSUIDSGID lets chmod 0644 through" \
    "$PU" -S -- chmod 0644 "$T/f"
check "emulation: ProtectHostname refuses sethostname (EPERM)" \
    sh -c "'$PU' -H -- hostname factory-unitenv 2>&1 | grep -q 'must be root\|not permitted'"
check "emulation: the host's name is untouched" \
    sh -c "[ \"\$(hostname)\" != factory-unitenv ]"
check "emulation: SystemCallFilter=~@swap refuses swapoff (EPERM)" \
    sh -c "'$PU' -e EPERM -f '~@swap' -- swapoff /nonexistent 2>&1 | grep -q 'Not superuser\|not permitted'"
check "emulation: an unknown group is an error, not a pass" \
    sh -c "! '$PU' -e EPERM -f '~@nosuchgroup' -- true 2>/dev/null"
check "emulation: the unit's settings are all emulated" \
    sh -c ". '$top/regress/deb/unitenv.sh'; unitenv '$UNIT' '$PU' true"
# A start-up error starting again cannot mend exits 78, which the unit
# names in RestartPreventExitStatus=: systemd stops there ("failed").
check "the unit: RestartPreventExitStatus=78" \
    grep -qx 'RestartPreventExitStatus=78' "$UNIT"
check "the unit: a start limit that five restarts 5 s apart trip" \
    sh -c "grep -qx 'StartLimitBurst=5' '$UNIT' && grep -qx 'RestartSec=5s' '$UNIT' &&
    [ \$(sed -n 's/^StartLimitIntervalSec=\\([0-9]*\\)s\$/\\1/p' '$UNIT') -gt 25 ]"
check "the unit: TasksMax=infinity" grep -qx 'TasksMax=infinity' "$UNIT"
printf 'socket: [\n' >"$T/bad.conf"
"$O/factoryd" -d -f "$T/bad.conf" >/dev/null 2>&1
st=$?
check "a configuration error: factoryd exits 78 (got $st)" [ "$st" = 78 ]
"$O/factoryd" -n -f "$T/bad.conf" >/dev/null 2>&1
st=$?
check "factoryd -n still answers 1 (got $st)" [ "$st" = 1 ]
mkdir "$T/nokeys"
cat >"$T/nokeys/factoryd.conf" <<CONF
socket: $T/nokeys/sock
state-dir: $T/nokeys/state
libexec: $O
keys:
  receipts: $T/nokeys/receipt.key
  verifier: $T/nokeys/verifier.key
users: {worker: 71201, verifier: 71202, reconciler: 71203, publisher: 71204, egress: 71205, image: 71206, gateway: 71207}
CONF
"$O/factoryd" -d -f "$T/nokeys/factoryd.conf" >"$T/nokeys/log" 2>&1
st=$?
check "no signing keys (no -k): factoryd exits 78 (got $st)" \
    sh -c "[ $st = 78 ] && grep -q 'keys: cannot start without' '$T/nokeys/log'"

make_repos "$T" 71204
write_attempt_conf "$T" 71200 71210-71229

# One daemon under unit u (start_factoryd, through the emulation), one
# attempt to publication; the agent tries a set-user-id chmod.
run_unit() {	# unit label
	(unitenv "$1" "$PU" "$O/factoryd" -dk -f "$T/factoryd.conf") \
	    2>>"$T/log" &
	FACTORYD_PID=$!
	if ! wait_serving "$SOCK" "$FACTORYD_PID"; then
		sed 's/^/# /' "$T/log"
		fail "$2: factoryd did not start, or its children never said hello"
	fi
	check "$2: factoryd runs under the filters (Seccomp 2)" \
	    grep -q '^Seccomp:[[:space:]]*2' /proc/$FACTORYD_PID/status
	# The kernel's seccomp records reach receipts through /dev/kmsg,
	# which dmesg_restrict=1 (Debian's default) keeps to CAP_SYSLOG.
	check "$2: the audit log reads /dev/kmsg" \
	    sh -c "! grep 'audit: /dev/kmsg' '$T/log'"
	write_manifest "$T/ok.yaml" 'echo hi >> README.md; : >/tmp/s;
	    chmod u+s /tmp/s 2>/dev/null || echo setuid refused
	    chmod g+s /tmp/s 2>/dev/null || echo setgid refused
	    echo "name $(hostname)"' 'grep -q hi README.md'
	id=$(submit_wait "$T/ok.yaml" 120) ||
	    { tail -n 20 "$T/log" | sed 's/^/# /'; fail "$2: no end"; }
	st=$(field "$id" state)
	check "$2: an attempt publishes ($st)" [ "$st" = published ]
	[ "$st" = published ] ||
	    grep "$id" "$T/log" | tail -n 5 | sed 's/^/# /'
	ctl logs "$id" >"$T/agent.log" 2>&1
	check "$2: factoryd's own filter refuses the agent chmod u+s" \
	    grep -qx 'setuid refused' "$T/agent.log"
	check "$2: and chmod g+s" grep -qx 'setgid refused' "$T/agent.log"
	stop_factoryd
	rm -f "$SOCK"
}

run_unit "$UNIT" "the shipped unit"
check "the sandbox is named for its attempt" \
    grep -qx "name $id" "$T/agent.log"
check "the parent opened paths with openat2" \
    sh -c "! grep -q '^parent: openat2: ' '$T/log'"
: >"$T/log"

# An operator's drop-in may add what the unit leaves out: the daemon
# lives with both, the sandbox then under the unit's host name.
cp "$UNIT" "$T/dropin.service"
printf 'RestrictSUIDSGID=yes\nProtectHostname=yes\n' >>"$T/dropin.service"
run_unit "$T/dropin.service" "with RestrictSUIDSGID=yes ProtectHostname=yes"
check "with ProtectHostname=yes: the host's name, not the attempt's" \
    grep -qx "name $(hostname)" "$T/agent.log"
check "with RestrictSUIDSGID=yes: the parent walks paths (openat2 refused)" \
    grep -q '^parent: openat2: Function not implemented; paths' "$T/log"

regress_done
