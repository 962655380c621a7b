# Helpers of the hostile-agent suite (bash, sourced after ../lib.sh):
# a daemon with a demo repository and a local forge, manifests, and the
# three assertions every case makes: the act was refused (a line in the
# attempt's log), the attempt ended in the expected state with a reason
# (factoryctl show -j), and nothing outside the attempt changed.

H_BGPIDS=""		# host helpers we started: killed by pid at exit
H_RUNSOCK=""		# a pathname socket we made under /run
H_UIDLO=64000
H_UIDHI=64099

hostile_cleanup() {
	local p id d
	for p in $H_BGPIDS; do
		kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	regress_cleanup		# stops the daemon first
	case ${T:-} in
	/var/tmp/factory-hostile.*)
		if [ -n "${HOSTILE_KEEP:-}" ]; then
			echo "# kept $T" >&2
		else
			rm -rf "$T"
		fi
		;;
	esac
	[ -n "$H_RUNSOCK" ] && rm -f "$H_RUNSOCK"
	for p in $H_HOSTFILES; do
		case $p in
		/home/factory-hostile.*|/srv/factory-hostile.*|/opt/factory-hostile.*)
			rm -f "$p" ;;
		esac
	done
}

# World-readable files in host directories an agent has no business in.
H_HOSTFILES=""
h_hostfile() {	# dir variable: sets variable to the file made in dir
	local f
	f=$(mktemp "$1/factory-hostile.XXXXXX") || return 1
	H_HOSTFILES="$H_HOSTFILES $f"
	echo "host-secret" >"$f"
	chmod 644 "$f"
	printf -v "$2" %s "$f"
}

# A started background helper, remembered by pid.
bg() {
	"$@" &
	H_BGPIDS="$H_BGPIDS $!"
	BGPID=$!
}

# The daemon's world, in a temp dir outside /tmp (the sandbox covers the
# host's /tmp, which would hide everything for free): the repository is
# visible read-only to agents, as /srv/git would be; the state dir, the
# keys, the socket dir, the remote and the pulls dir must be masked.
h_setup() {
	T=$(mktemp -d /var/tmp/factory-hostile.XXXXXX) || exit 1
	chmod 755 "$T"
	mkdir -p "$T/run" "$T/keys" "$T/src/src" "$T/m" "$T/pub"
	SOCK=$T/run/factoryd.sock
	echo hello >"$T/src/README.md"
	printf 'int a;\n' >"$T/src/src/a.c"
	(cd "$T/src" && git init -q -b main && git add . &&
	    git -c user.name=t -c user.email=t@example.org commit -qm init) ||
	    fail "git init of the demo repository"
	git clone -q --bare "$T/src" "$T/repo.git" &&
	    git clone -q --bare "$T/repo.git" "$T/remote.git" ||
	    fail "git clone"
	chown -R 61104:61104 "$T/remote.git"
	mkdir "$T/pulls" && chown 61104:61104 "$T/pulls"
	# Another configured repository, which no agent of demo may read.
	(cd "$T/src" && echo other-secret >other-secret &&
	    git add other-secret &&
	    git -c user.name=t -c user.email=t@example.org commit -qm other &&
	    git clone -q --bare "$T/src" "$T/other.git" &&
	    git reset -q --hard HEAD~1) || fail "git: the other repository"
	OTHEROBJ=$(find "$T/other.git/objects" -type f | head -n 1)
	[ -n "$OTHEROBJ" ] || (cd "$T/other.git" && git repack -qa)
	OTHERPACK=$(find "$T/other.git/objects" -name '*.pack' | head -n 1)
	chmod -R a+rX "$T/other.git"
	cat >"$T/factoryd.conf" <<CONF
socket: $SOCK
state-dir: $T/state
libexec: $O
verifiers: 2
max-attempts: 4
attempt-uids: $H_UIDLO-$H_UIDHI
keys:
  receipts: $T/keys/receipt.key
  verifier: $T/keys/verifier.key
users:
  worker: 61101
  verifier: 61102
  reconciler: 61103
  publisher: 61104
  egress: 61105
  image: 61106
  gateway: 61107
repositories:
  demo:
    path: $T/repo.git
    publish: {forge: local, remote: $T/remote.git, pulls: $T/pulls}
  other:
    path: $T/other.git
CONF
	chmod 644 "$T/factoryd.conf"
	echo world >"$T/world-readable"
	chmod 644 "$T/world-readable"
	# The probers, where agents can see them whatever the build dir
	# is: a build under /tmp is hidden from them like the rest of /tmp.
	mkdir "$T/bin"
	cp "$P/probe" "$P/listen" "$P/socks" "$P/memscan" "$T/bin/" ||
	    fail "copy the probers"
	chmod 755 "$T/bin" "$T/bin/probe" "$T/bin/listen" "$T/bin/socks"
	P=$T/bin
	PROBE=$P/probe
}

# manifest NAME AGENT-ARGV-JSON [VALIDATE-ARGV-JSON [YAML LINES]]
manifest() {
	cat >"$T/m/$1.yaml" <<EOF
repository: demo
baseline: main
title: "hostile $1"
scope: ["src/**", "README.md"]
agent: $2
validate: ${3:-["/bin/true"]}
exec: ["$P", "/usr/bin", "/usr/lib", "/lib", "/lib64", "/bin"]
${4:-}
EOF
}

# A shell agent: sh -c SCRIPT as a JSON argv.
shjson() {
	jq -cn --arg s "$1" '["/bin/sh", "-c", $s]'
}

# git in the remote, owned by the publisher's uid.
rgit() {
	git -c safe.directory='*' -C "$T/remote.git" "$@"
}

ctl() {
	"$O/factoryctl" -s "$SOCK" "$@"
}

# submit NAME: prints the attempt id.
submit() {
	local id
	id=$(ctl submit "$T/m/$1.yaml") || { echo "submit $1 failed" >&2; return 1; }
	echo "$id"
}

show() {
	ctl -j show "$1"
}

# wait_done ID [SECONDS]: until the attempt is torn down.
wait_done() {
	local i=0 max=$(( ${2:-30} * 10 ))
	while [ $i -lt $max ]; do
		[ "$(show "$1" | jq -r .terminated)" = true ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# wait_log ID REGEX [SECONDS]: until the agent's log has a matching line.
wait_log() {
	local i=0 max=$(( ${3:-20} * 10 ))
	while [ $i -lt $max ]; do
		grep -qE "$2" "$(logf "$1")" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

logf() {
	echo "$T/state/logs/$1${2:+.$2}.log"
}

# refused ID ACT EXPECTED [LOG]: the log has "ACT: EXPECTED" (a regex
# for the result) and no line saying the act went through.
refused() {
	local f
	f=$(logf "$1" "${4:-}")
	if grep -qF -- "$2: ALLOWED" "$f"; then
		notok "$2 refused: it went through"
	elif grep -qxE -- "$(re "$2"): $3" "$f"; then
		ok "$2 refused ($(grep -xE -- "$(re "$2"): $3" "$f" | head -n 1 |
		    sed 's/.*: //'))"
	else
		notok "$2 refused: expected '$3', log has '$(grep -F -- "$2:" "$f" |
		    head -n 1)'"
	fi
}

# A fixed string as an extended regex.
re() {
	printf '%s' "$1" | sed 's/[][\.*^$(){}?+|/]/\\&/g'
}

# state ID STATE REASON-REGEX NAME
state() {
	local j st rs
	j=$(show "$1")
	st=$(echo "$j" | jq -r .state)
	rs=$(echo "$j" | jq -r '.reason // ""')
	if [ "$st" = "$2" ] && echo "$rs" | grep -qE -- "$3"; then
		ok "$4: $st ($rs)"
	else
		notok "$4: expected $2 /$3/, got $st ($rs)"
	fi
}

# Processes of any attempt uid, as "pid:uid".
attempt_procs() {
	awk -v lo=$H_UIDLO -v hi=$H_UIDHI '/^Uid:/ && $2 >= lo && $2 <= hi {
	    f = FILENAME; sub("/proc/", "", f); sub("/status", "", f);
	    print f ":" $2 }' /proc/[0-9]*/status 2>/dev/null | tr '\n' ' '
}

# What must not change: the repository, the forge, /etc, the host
# services' logs, the daemon's key files.
snapshot() {
	(cd "$T/repo.git" && find . -type f -print0 | sort -z |
	    xargs -0 sha256sum)
	rgit for-each-ref
	# Not "..": that is $T, which the suite itself writes.
	ls -la "$T/pulls" | sed 1d | grep -v ' \.\.$'
	ls -la --time-style=+ /etc | md5sum
	sha256sum "$T/keys"/* /etc/passwd /etc/shadow
	cat "$T/listen.out"
	# Not the temp dirs of hostile suites (another clone's may come
	# and go meanwhile): what an agent would leave has no such suffix.
	ls /dev/shm /var/tmp | grep -i hostile |
	    grep -Ev '^factory-hostile\.[A-Za-z0-9]{6}$'
}

# outside NAME ID: nothing outside the attempt changed since the last
# call and no process of an attempt uid is left.  Its cgroups are not
# looked up by name: ids are unique per state dir only, and another
# factoryd on this host (another suite) may hold the same name.
outside() {
	local now left
	now=$(snapshot 2>&1)
	left=$(attempt_procs)
	if [ "$now" != "$SNAP" ]; then
		notok "$1: nothing outside changed: $(diff <(echo "$SNAP") \
		    <(echo "$now") | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
	elif [ -n "$left" ]; then
		notok "$1: no attempt process left: $left"
	else
		ok "$1: nothing outside changed, no attempt process left"
	fi
	SNAP=$now
}
