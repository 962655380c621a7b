#!/bin/sh
# make demo: the whole pipeline on an embedded default configuration,
# a sample repository made on the fly, a sample agent and a local
# remote, in a temp dir that is removed afterwards.  Run as root.
#
# Usage: O=build sh etc/demo.sh

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
[ "$(id -u)" = 0 ] || { echo "demo: run as root (factoryd is a root daemon)" >&2; exit 1; }

# Not under /tmp: the sandbox gives the agent a private /tmp, and the
# agent's git must see the repository's objects.
D=$(mktemp -d /var/tmp/factory-demo.XXXXXX)
chmod 755 "$D"
PID=""
cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID"
		wait "$PID" 2>/dev/null
	fi
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

say() { printf '\n== %s\n' "$*"; }

say "a sample repository, its published remote and pull records in $D"
git init -q -b main "$D/work"
mkdir -p "$D/work/src"
cat >"$D/work/README.md" <<'TXT'
# greeter
A tiny program that greets.
TXT
cat >"$D/work/src/greet.c" <<'TXT'
#include <stdio.h>

int
main(void)
{
	printf("hello\n");
	return 0;
}
TXT
git -C "$D/work" add -A
git -C "$D/work" -c user.name=demo -c user.email=demo@localhost commit -qm "greeter"
git clone -q --bare "$D/work" "$D/greeter.git"
git clone -q --bare "$D/work" "$D/greeter-published.git"
mkdir "$D/pulls"
chown -R 61504:61504 "$D/greeter-published.git" "$D/pulls"
echo "$D/greeter.git (main at $(git -C "$D/work" rev-parse --short HEAD))"

say "the configuration (factoryd.conf(5))"
cat >"$D/factoryd.conf" <<CONF
socket: $D/factoryd.sock
state-dir: $D/state
libexec: $O
attempt-uids: 70500-70599
max-attempts: 4
verifiers: 2
keys:
  receipts: $D/keys/receipt.key
  verifier: $D/keys/verifier.key
users:
  worker: 61501
  verifier: 61502
  reconciler: 61503
  publisher: 61504
  egress: 61505
  image: 61506
  gateway: 61507
repositories:
  greeter:
    path: $D/greeter.git
    publish:
      forge: local
      remote: $D/greeter-published.git
      pulls: $D/pulls
CONF
cat "$D/factoryd.conf"
"$O/factoryd" -n -f "$D/factoryd.conf" || exit 1

# Under systemd with pure cgroup v2 a login session's cgroup is not
# delegated, and factoryd refuses it: the demo's factoryd gets a scope
# of its own with Delegate=yes, as the package's unit gives it.
# (systemd-run --scope execs factoryd in place: $! is factoryd.)
run=""
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null &&
    [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
	run="systemd-run --scope --quiet --collect -p Delegate=yes --"
fi
start() {
	say "factoryd -dk -f $D/factoryd.conf${run:+ (in a delegated scope)}"
	$run "$O/factoryd" -dk -f "$D/factoryd.conf" 2>"$D/factoryd.log" &
	PID=$!
	i=0
	while [ ! -S "$D/factoryd.sock" ] && [ $i -lt 300 ]; do
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	[ -S "$D/factoryd.sock" ]
}
# A kernel older than the sandbox wants (Debian 12's 6.1 has Landlock
# ABI 2) stops factoryd at start, naming the feature and the
# downgrade key.  A production configuration decides that for itself;
# the demo says which weaker boundary it accepts and starts again.
downgrades=""
while ! start; do
	wait "$PID" 2>/dev/null
	PID=""
	key=$(sed -n 's/.*factoryd.conf sandbox.downgrade \[\([a-z-]*\)\].*/\1/p' \
	    "$D/factoryd.log" | head -n 1)
	case " $downgrades " in *" $key "*) key="" ;; esac
	if [ -z "$key" ]; then
		cat "$D/factoryd.log"
		exit 1
	fi
	grep 'sandbox' "$D/factoryd.log" | tail -n 1
	downgrades="$downgrades $key"
	echo "demo: this kernel lacks it; the demo accepts the weaker" \
	    "boundary: sandbox: {downgrade: [$(echo $downgrades | tr ' ' ,)]}"
	sed -i '/^sandbox:/d' "$D/factoryd.conf"
	echo "sandbox: {downgrade: [$(echo $downgrades | tr ' ' ,)]}" \
	    >>"$D/factoryd.conf"
done
ctl() { "$O/factoryctl" -s "$D/factoryd.sock" "$@"; }
i=0
while [ "$(ctl -j status | jq '[.processes[] | select(.state=="running")] | length')" != 7 ] &&
    [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done

say "the agent's environment: an image made from busybox-static, pinned by digest"
# Nothing of the host's file system is in the agent's view: its root
# is this image, read-only, plus its tree, /tmp, /dev and /proc.
mkdir -p "$D/image/bin" "$D/image/etc"
cp /bin/busybox "$D/image/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] || ln -s busybox "$D/image/bin/$a"
done
ctl -j image import demo "$D/image" >"$D/import.json" || exit 1
digest=$(jq -r .digest "$D/import.json")
ctl image list

say "the agent: an untrusted script, run in the sandbox"
cat >"$D/agent.sh" <<'TXT'
#!/bin/sh
# Make the greeting friendlier and say what we did.
sed -i 's/hello/hello, world/' src/greet.c
printf '\nIt now says "hello, world".\n' >> README.md
echo "agent: changed src/greet.c and README.md as uid $(id -u)"
echo "agent: its / holds: $(ls / | tr '\n' ' ')"
TXT
chmod 755 "$D/agent.sh"
cat >"$D/greet.yaml" <<MAN
repository: greeter
baseline: main
scope: ["src/**", "README.md"]
agent: ["/bin/sh", "-c", $(jq -Rs . <"$D/agent.sh")]
validate: ["/bin/sh", "-c", "grep -q 'hello, world' src/greet.c && grep -q world README.md"]
env: {LANG: C.UTF-8}
environment: {image: "demo@$digest", toolchain: [/bin/busybox]}
limits: {wall: 60s, cpu: 30s, memory: 512M, pids: 128, tree: 200M, log: 1M}
network: none
title: "Greet the world"
approval: auto
MAN
cat "$D/greet.yaml"


say "factoryctl status"
ctl status
say "factoryctl policy"
ctl policy

say "factoryctl submit -w greet.yaml"
ctl submit -w "$D/greet.yaml" >"$D/submit.out"
st=$?
cat "$D/submit.out"
id=$(head -1 "$D/submit.out")

say "factoryctl logs $id"
ctl logs "$id"

say "the verdict (signed by the verifier)"
ctl receipts "$id" >"$D/receipts.txt"
grep '"kind":"verdict"' "$D/receipts.txt" | jq '{signer, key, facts}'

say "the published branch"
git --git-dir="$D/greeter-published.git" -c safe.directory='*' log --format='%h %s%n%b' -1 "factory/$id"
git --git-dir="$D/greeter-published.git" -c safe.directory='*' diff --stat main "factory/$id"

say "the pull request record"
cat "$D/pulls/$id.json"; echo

say "factoryctl verify receipts.txt (offline)"
"$O/factoryctl" verify "$D/receipts.txt"
vst=$?

say "stopping factoryd"
kill -TERM "$PID"
wait "$PID" 2>/dev/null
PID=""
tail -n 3 "$D/factoryd.log"

if [ $st -eq 0 ] && [ $vst -eq 0 ]; then
	say "demo: $id published and its evidence verifies"
	exit 0
fi
say "demo: failed (submit exit $st, verify exit $vst; see above)"
cat "$D/factoryd.log"
exit 1
