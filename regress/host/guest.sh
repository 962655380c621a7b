#!/bin/sh
# regress/host's test, inside the guest: run as root by
# factory-host-test.service once the guest reached multi-user, from the
# read-only disk mounted on /mnt/host (the package, this script, two
# bare repositories).  The package is installed and run as a sysadmin
# would, under systemd and its unit.  Each check prints a TAP line on
# the console (the serial port), prefixed "FACTORY-HOST: "; a failure
# adds the daemon's journal tail.  Every wait is bounded and ends early
# on the event it waits for; attempts that depend on a running daemon
# fail at once without one.  "done" last: the host counts a guest that
# never said it as a failure.

P="FACTORY-HOST: "
H=/mnt/host
W=/root/t
CG=/sys/fs/cgroup/system.slice/factoryd.service
n=0
mkdir -p "$W"
cd "$W" || exit 1

say() { echo "$P$*"; }
diag() { sed "s/^/$P# /"; }
jtail() { journalctl -u factoryd -n "${1:-20}" --no-pager -o cat 2>&1 | diag; }
ok() { n=$((n + 1)); say "ok $n - $*"; }
notok() { n=$((n + 1)); say "not ok $n - $*"; }
check() {	# name, command...
	name=$1; shift
	if "$@" >"$W/out" 2>&1; then ok "$name"; else
		notok "$name"; tail -n 15 "$W/out" | diag; jtail 15; fi
}
fc() { timeout 600 factoryctl "$@"; }
# Polls "$@" every half second for at most $1 seconds of wall time
# (each try may itself take seconds under emulation).
waitfor() {
	end=$(($(date +%s) + $1)); shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$(date +%s)" -lt $end ] || return 1
		sleep 0.5
	done
}
daemon_up() { systemctl is-active -q factoryd && timeout 60 factoryctl status; }
nrestarts() { systemctl show -p NRestarts --value factoryd; }
# Waits for the daemon to answer; gives up early once systemd had to
# restart it or the unit failed (it exited: waiting longer shows
# nothing more).
daemon_wait() {	# seconds
	end=$(($(date +%s) + $1)); r0=$(nrestarts)
	while :; do
		daemon_up >/dev/null 2>&1 && return 0
		[ "$(date +%s)" -lt $end ] && [ "$(nrestarts)" = "$r0" ] &&
		    ! systemctl is-failed -q factoryd || return 1
		sleep 0.5
	done
}
field() {	# id, field of `factoryctl show`
	fc show "$1" 2>/dev/null | sed -n "s/^$2: //p" | head -n 1
}
ended() {	# id: its outcome is known and it is torn down
	fc -j show "$1" 2>/dev/null | grep -q '"terminated": true'
}
manifest() {	# file, agent (a YAML flow sequence), limits
	cat >"$1" <<EOF
repository: greeter
baseline: main
scope: ["greeting"]
agent: $2
validate: ["/bin/grep", "-q", "world", "greeting"]
limits: $3
network: none
title: "check-host"
approval: auto
EOF
}
# Submits and waits; prints the id; the show output is left in $W/$2.
attempt() {	# manifest, name
	fc submit -w "$1" >"$W/$2" 2>&1
	head -n 1 "$W/$2"
}
# The pids of processes whose command line is exactly "$*".
pids_of() {
	want="$* "
	for p in /proc/[0-9]*; do
		[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "$want" ] &&
		    echo "${p#/proc/}"
	done
}
factory_procs() {
	for p in /proc/[0-9]*; do
		case $(readlink "$p/exe" 2>/dev/null) in
		/usr/sbin/factoryd|/usr/libexec/factory/*)
			echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline")" ;;
		esac
	done
}
# The journal of factoryd since the epoch second $1, what systemd says
# when it has to kill what the daemon left.
leftovers() {
	journalctl -u factoryd --since "@$1" --no-pager -o cat 2>/dev/null |
	    grep -E 'Killing process|left-over process|Found left-over'
}
# The tightest value of limit file $2 from cgroup $1 up to the unit's.
limit() {
	d=$1 best=max
	while :; do
		if [ -f "$d/$2" ]; then
			v=$(cat "$d/$2")
			if [ "$v" != max ] &&
			    { [ "$best" = max ] || [ "$v" -lt "$best" ]; }; then
				best=$v
			fi
		fi
		[ "$d" = "$CG" ] || [ "$d" = /sys/fs/cgroup ] && break
		d=${d%/*}
	done
	echo "$best"
}

say "# up $(cut -d' ' -f1 /proc/uptime) kernel $(uname -r)"
say "# cgroup2: $(stat -fc %T /sys/fs/cgroup), systemd $(systemctl --version | head -n 1)"

# --- the package, as a sysadmin installs it (offline: the image has
# its dependencies).
cp "$H/factory.deb" /root/factory.deb
check "apt install factory.deb" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends /root/factory.deb
check "systemd-analyze verify factoryd.service" \
    systemd-analyze verify --man=no /lib/systemd/system/factoryd.service
check "systemctl enable --now factoryd" systemctl enable --now factoryd
# The kernel's Landlock decides what the shipped configuration needs
# (README.md, "Supported hosts"): before 6.7 no TCP rules, before 6.12
# no scopes.  Without them factoryd must refuse to start, naming the
# key, and the unit must end failed; the sysadmin then adds each key
# the journal named, as the one line says.
kv=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
set -- $kv
want=""
[ "$1" -lt 6 ] || { [ "$1" -eq 6 ] && [ "$2" -lt 7 ]; } &&
    want="$want landlock-net"
[ "$1" -lt 6 ] || { [ "$1" -eq 6 ] && [ "$2" -lt 12 ]; } &&
    want="$want landlock-scopes"
got=""
while ! daemon_wait 120; do
	key=$(journalctl -u factoryd -o cat --no-pager 2>/dev/null | sed -n \
	    's/.*factoryd.conf sandbox.downgrade \[\([a-z-]*\)\].*/\1/p' |
	    tail -n 1)
	[ -n "$key" ] && ! echo " $got " | grep -q " $key " || break
	say "# $(journalctl -u factoryd -o cat --no-pager | grep -F "[$key]" |
	    tail -n 1)"
	check "without $key: the unit ends failed, not restarting" \
	    sh -c "systemctl is-failed -q factoryd || { sleep 5;
	    systemctl is-failed -q factoryd; }"
	got="$got $key"
	sed -i '/^sandbox:/d' /etc/factoryd.conf
	echo "sandbox: {downgrade: [$(echo $got | tr ' ' ,)]}" \
	    >>/etc/factoryd.conf
	systemctl reset-failed factoryd >/dev/null 2>&1
	systemctl restart factoryd
done
if [ "$got" = "$want" ]; then
	ok "the downgrades this kernel needs are named at start:${want:- none}"
else
	notok "the downgrades this kernel needs are named at start:" \
	    "want${want:- none}, got${got:- none}"
fi
# Later waits for the daemon are short once it never came up.
upwait=30
if daemon_wait 120; then
	ok "factoryd is active and answers factoryctl status"
	upwait=120
else
	notok "factoryd is active and answers factoryctl status"
	systemctl status --no-pager factoryd 2>&1 | head -n 5 | diag
	jtail 15
	# The kernel's own word on a refused mount (overlayfs, idmap).
	dmesg 2>&1 | tail -n 15 | diag
fi
check "the unit's cgroup is delegated: a supervisor leaf, memory and pids for its subtree" \
    sh -c "test -d $CG/supervisor && grep -qw memory $CG/cgroup.subtree_control &&
	grep -qw pids $CG/cgroup.subtree_control"

# --- a repository and a local forge, as README.md says, then reload.
cp -a "$H/git" /srv/git
mkdir -p /srv/git/pulls
chown -R _factoryp:_factoryp /srv/git/greeter-published.git /srv/git/pulls
cp /etc/factoryd.conf /etc/factoryd.conf.dist
awk '/^repositories: *\{\}/ {
	print "repositories:"
	print "  greeter:"
	print "    path: /srv/git/greeter.git"
	print "    publish:"
	print "      forge: local"
	print "      remote: /srv/git/greeter-published.git"
	print "      pulls: /srv/git/pulls"
	next } { print }' /etc/factoryd.conf.dist >/etc/factoryd.conf
check "factoryd -n accepts the repository" factoryd -n
if systemctl reload factoryd >"$W/out" 2>&1; then
	ok "systemctl reload factoryd"
	check "factoryd is active after the reload" daemon_up
else
	notok "systemctl reload factoryd"; diag <"$W/out"; jtail 6
	# The checks below test other things: a restart reads the file.
	say "# the reload failed: restarting to read the configuration"
	systemctl restart factoryd
	daemon_wait $upwait
fi

# --- an attempt that publishes.
manifest pub.yaml '["/bin/sh", "-c", "echo hello, world > greeting"]' \
    '{wall: 10m, cpu: 5m, memory: 256M, pids: 64}'
if daemon_up >/dev/null 2>&1; then
	id=$(attempt pub.yaml pub.out)
	if grep -q '^state: published' pub.out; then
		ok "an attempt published ($id)"
	else
		notok "an attempt published"; diag <pub.out; jtail 25
	fi
	check "its pull record is there" test -f "/srv/git/pulls/$id.json"
	check "the published remote has its branch" sh -c \
	    "find /srv/git/greeter-published.git/refs/heads | grep -q '$id' ||
	     grep -q '$id' /srv/git/greeter-published.git/packed-refs"
else
	notok "an attempt published (factoryd is not running)"
fi

# Diagnosis only, when that attempt failed under the unit: the same
# attempt with the unit's seccomp-based settings switched off by a
# drop-in, one and then both, names which of them it fails for (and
# what fails next).  No TAP lines: a passing run never comes here.
probe() {	# drop-in lines...
	mkdir -p /etc/systemd/system/factoryd.service.d
	printf '[Service]\n' >/etc/systemd/system/factoryd.service.d/probe.conf
	for l; do echo "$l" >>/etc/systemd/system/factoryd.service.d/probe.conf; done
	systemctl daemon-reload
	systemctl restart factoryd
	daemon_wait $upwait || { say "# with $*: factoryd is not running"; return; }
	pr=$(attempt pub.yaml probe.out)
	say "# with $*: $pr $(sed -n 's/^state: //p' probe.out | tail -n 1)" \
	    "$(sed -n 's/^reason: //p' probe.out | tail -n 1)"
}
if daemon_up >/dev/null 2>&1 && ! grep -q '^state: published' pub.out; then
	probe RestrictSUIDSGID=no
	probe RestrictSUIDSGID=no ProtectHostname=no
	rm -f /etc/systemd/system/factoryd.service.d/probe.conf
	systemctl daemon-reload
	systemctl restart factoryd
	daemon_wait $upwait
fi

# --- a running agent: its cgroup and limits, then cancel.
manifest sleep.yaml '["/bin/sleep", "3001"]' \
    '{wall: 10m, cpu: 5m, memory: 256M, pids: 64}'
pid=""
if daemon_up >/dev/null 2>&1; then
	id=$(fc submit sleep.yaml 2>&1 | head -n 1)
	end=$(($(date +%s) + 180))
	while [ "$(date +%s)" -lt $end ]; do
		pid=$(pids_of /bin/sleep 3001 | head -n 1)
		[ -n "$pid" ] && break
		ended "$id" && break
		sleep 0.5
	done
fi
if [ -n "$pid" ]; then
	cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	say "# agent $pid of $id in $cg"
	case $cg in
	/system.slice/factoryd.service/*) ok "a running agent's cgroup is below the unit's" ;;
	*) notok "a running agent's cgroup is below the unit's ($cg)" ;;
	esac
	mem=$(limit "/sys/fs/cgroup$cg" memory.max)
	pmax=$(limit "/sys/fs/cgroup$cg" pids.max)
	swap=$(limit "/sys/fs/cgroup$cg" memory.swap.max)
	say "# memory.max $mem pids.max $pmax memory.swap.max $swap"
	check "its memory.max is the manifest's 256M" [ "$mem" = 268435456 ]
	check "its pids.max is the manifest's 64" [ "$pmax" = 64 ]
	check "factoryctl cancel" fc cancel "$id"
	if waitfor 120 ended "$id" && [ "$(field "$id" state)" = cancelled ]; then
		ok "the cancelled attempt ends cancelled"
	else
		notok "the cancelled attempt ends cancelled"
		fc show "$id" 2>&1 | diag; jtail 15
	fi
	check "the cancelled agent is gone, its cgroup removed" sh -c \
	    "! kill -0 $pid && ! test -d /sys/fs/cgroup$cg"
else
	notok "a running agent's cgroup is below the unit's (no agent ran)"
	[ -n "${id:-}" ] && fc show "$id" 2>&1 | diag
	jtail 15
fi

# --- limits that fire: each ends the attempt, named as the limit.
bomb='x=0123456789; while :; do x=$x$x; done'
manifest mem.yaml "[\"/bin/sh\", \"-c\", \"$bomb\"]" \
    '{wall: 5m, cpu: 5m, memory: 64M, pids: 64}'
manifest memchild.yaml "[\"/bin/sh\", \"-c\", \"/bin/sh -c '$bomb'; exit 3\"]" \
    '{wall: 5m, cpu: 5m, memory: 64M, pids: 64}'
manifest fork.yaml '["/bin/sh", "-c", "i=0; while [ $i -lt 500 ]; do /bin/sleep 1000 & i=$((i + 1)); done; wait"]' \
    '{wall: 3m, cpu: 2m, memory: 256M, pids: 32}'
for t in "mem:a memory bomb" "memchild:a memory bomb in the agent's child" \
    "fork:a fork bomb"; do
	f=${t%%:*} name=${t#*:}
	if ! daemon_up >/dev/null 2>&1; then
		notok "$name: reported as its limit (factoryd is not running)"
		continue
	fi
	id=$(attempt "$f.yaml" "$f.out")
	st=$(sed -n 's/^state: //p' "$f.out" | tail -n 1)
	reason=$(sed -n 's/^reason: //p' "$f.out" | tail -n 1)
	usage=$(sed -n 's/^usage: //p' "$f.out" | tail -n 1)
	say "# $name: $id $st: $reason; $usage"
	case $f in
	mem*) want="memory limit" ;;
	fork) want="pids\|process" ;;
	esac
	if [ "$st" = failed ] && echo "$reason" | grep -q "$want"; then
		ok "$name: ends failed, reported as its limit"
	else
		notok "$name: ends failed, reported as its limit"
		jtail 10
	fi
	if [ $f = fork ]; then
		peak=$(echo "$usage" | sed -n 's/.*pids \([0-9]*\).*/\1/p')
		# Its agent ran (show has its wait status) and never went
		# past the bound (a peak of 0 where the kernel keeps none).
		if [ "$st" = failed ] && grep -q '^exit: ' "$f.out" &&
		    ! echo "$reason" | grep -q "wall time" &&
		    [ "${peak:-0}" -le 32 ]; then
			ok "$name: stopped at pids.max (peak ${peak:-?} of 32)"
		else
			notok "$name: stopped at pids.max (peak ${peak:-?} of 32)"
		fi
	fi
	check "the unit survives $name" daemon_up
done

# --- listening is granted, not ambient: an agent's TCP bind to a port
# its plan does not name is refused, by Landlock's TCP rule (EACCES,
# 6.7 and later) or, where the kernel has none (6.1), by the sandbox
# cgroup's bind program (EPERM).  The agent publishes only if refused.
bindprog='socket(S, PF_INET, SOCK_STREAM, 0) or exit 5; exit 3 if bind(S, pack_sockaddr_in(7001, INADDR_LOOPBACK)); exit((($!+0) == 1 || ($!+0) == 13) ? 0 : 4)'
manifest bind.yaml "[\"/bin/sh\", \"-c\", \"/usr/bin/perl -MSocket -e '$bindprog' && echo world >greeting\"]" \
    '{wall: 3m, cpu: 2m, memory: 256M, pids: 32}'
if daemon_up >/dev/null 2>&1; then
	id=$(attempt bind.yaml bind.out)
	st=$(sed -n 's/^state: //p' bind.out | tail -n 1)
	if [ "$st" = published ]; then
		ok "an agent's TCP bind to a port not its plan's is refused"
	else
		notok "an agent's TCP bind to a port not its plan's is refused ($id $st)"
		diag <bind.out; jtail 10
	fi
else
	notok "an agent's TCP bind to a port not its plan's is refused (factoryd is not running)"
fi

# --- nor by autobind: an agent that listens without binding never gets
# its service's port (40001, idle as while it restarts), which the
# sandbox's namespace reserves.  Asked for it alone (IP_LOCAL_PORT_RANGE,
# 6.3 and later) listen fails or lands elsewhere; where the option is
# missing (ENOPROTOOPT, 6.1), 30000 listen(2)s, each on a port autobind
# picks (each odd port of the range about twice, were it not reserved).
squatprog='my $p = 40001; socket(S, PF_INET, SOCK_STREAM, 0) or exit 5; if (setsockopt(S, IPPROTO_IP, 51, pack(q(L), $p << 16 | $p))) { listen(S, 1) or exit($!{EADDRINUSE} ? 0 : 4); exit((unpack_sockaddr_in(getsockname(S)))[0] == $p ? 3 : 0) } $!{ENOPROTOOPT} or exit 4; for (1 .. 30000) { socket(T, PF_INET, SOCK_STREAM, 0) and listen(T, 1) or exit 4; exit 3 if (unpack_sockaddr_in(getsockname(T)))[0] == $p; close(T) } exit 0'
manifest squat.yaml "[\"/bin/sh\", \"-c\", \"/usr/bin/perl -MSocket -e '$squatprog' && echo world >greeting\"]" \
    '{wall: 3m, cpu: 2m, memory: 256M, pids: 32}'
cat >>squat.yaml <<EOF
services:
  idle:
    run: ["/bin/sleep", "600"]
    ready: ["/bin/true"]
    ports: [40001]
EOF
if daemon_up >/dev/null 2>&1; then
	id=$(attempt squat.yaml squat.out)
	st=$(sed -n 's/^state: //p' squat.out | tail -n 1)
	if [ "$st" = published ]; then
		ok "an agent's unbound listen never takes its service's port"
	else
		notok "an agent's unbound listen never takes its service's port ($id $st)"
		diag <squat.out; jtail 10
	fi
else
	notok "an agent's unbound listen never takes its service's port (factoryd is not running)"
fi

# --- a descriptor whose release waits, sent to the .ro socket by any
# user: before 6.16 the kernel cannot refuse it (SO_PASSRIGHTS), and
# the daemon lets it go.  A TCP socket set to linger a minute, with
# data its peer never reads, holds the daemon a moment, not a minute.
if [ -x "$H/prog_ctlflood" ] && daemon_up >/dev/null 2>&1; then
	setpriv --reuid 65534 --regid 65534 --clear-groups \
	    "$H/prog_ctlflood" linger /run/factoryd.sock.ro 60 \
	    >"$W/linger" 2>&1 &
	lp=$!
	i=0
	while ! grep -qE '^(sent|refused)$' "$W/linger" && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	t0=$(date +%s%N)
	timeout 120 factoryctl status >/dev/null 2>&1
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	check "a user's lingering descriptor on the .ro socket holds the daemon a moment ($ms ms; $(tr '\n' ' ' <"$W/linger"))" \
	    [ "$ms" -lt 10000 ]
	journalctl -u factoryd --no-pager -o cat 2>&1 |
	    grep 'sent a descriptor whose release' | tail -n 1 | diag
	kill "$lp" 2>/dev/null
	wait "$lp" 2>/dev/null
fi

# --- restart and stop: the daemon ends what it started, systemd
# finds nothing left to kill.
s=$(date +%s); sleep 1; s=$((s + 1))
check "systemctl restart factoryd" systemctl restart factoryd
check "factoryd is active after the restart" daemon_wait $upwait
k=$(leftovers "$s")
if [ -z "$k" ]; then ok "restart: systemd killed nothing left over"; else
	notok "restart: systemd killed nothing left over"; echo "$k" | diag; fi
s=$(date +%s); sleep 1; s=$((s + 1))
check "systemctl stop factoryd" systemctl stop factoryd
k=$(leftovers "$s")
if [ -z "$k" ]; then ok "stop: systemd killed nothing left over"; else
	notok "stop: systemd killed nothing left over"; echo "$k" | diag; fi
left=$(factory_procs)
if [ -z "$left" ]; then ok "stop: no factory process left"; else
	notok "stop: no factory process left"; echo "$left" | diag; fi
check "stop: the unit's cgroup is gone" sh -c "! test -d $CG"

# --- a broken configuration: the unit must end failed, not restart
# for ever.
echo "no-such-key: 1" >>/etc/factoryd.conf
r0=$(nrestarts)
systemctl start factoryd >/dev/null 2>&1
# A unit restarted six times more has shown it restarts for ever.
end=$(($(date +%s) + 90))
while [ "$(systemctl is-failed factoryd)" != failed ] &&
    [ "$(nrestarts)" -lt $((r0 + 6)) ] && [ "$(date +%s)" -lt $end ]; do
	sleep 0.5
done
if [ "$(systemctl is-failed factoryd)" = failed ]; then
	ok "a broken configuration leaves the unit failed"
else
	notok "a broken configuration leaves the unit failed, not restarting for ever"
fi
systemctl show -p ActiveState -p SubState -p NRestarts -p Result factoryd |
    tr '\n' ' ' | diag
jtail 3
systemctl stop factoryd >/dev/null 2>&1
systemctl reset-failed factoryd >/dev/null 2>&1
cp /etc/factoryd.conf.dist /etc/factoryd.conf

# --- recorded, not judged.
systemd-analyze security --no-pager factoryd >"$W/sec" 2>&1
grep -i 'overall exposure' "$W/sec" | diag
check "systemd-analyze security factoryd recorded" grep -qi 'overall exposure' "$W/sec"

say "# result at $(cut -d' ' -f1 /proc/uptime)s"
say "done $n"
# Off at once: the boot's disk is a throw-away overlay, and a clean
# shutdown (the unit's SuccessAction) took minutes under emulation.
sync
echo o >/proc/sysrq-trigger
exit 0
