#!/bin/sh
# Services beside the agent (issue 28), through the real daemon, with
# Debian's real PostgreSQL: a repository whose validation needs a
# database passes only with services:; a service that never gets ready
# fails the attempt in its ready-timeout, named; one that dies while
# the agent runs fails it; the validation run's services are fresh,
# not the agent's; another attempt cannot reach a service; a service
# binds only its own ports; its log is kept apart; one may be
# restarted; services take their memory from the attempt's; a service
# is shown the paths of the run's tree its data: names, read-only, and
# no link out of that tree; autobind never takes a port of the set.
#
# Uids: roles 73001-73007, attempts 73010-73049.

. "$(dirname "$0")/../lib.sh"

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$PGBIN/postgres" ] && [ -x "$PGBIN/initdb" ] &&
    [ -x "$PGBIN/psql" ] && [ -x "$PGBIN/pg_isready" ] ||
    fail "services: PostgreSQL is needed (make deps installs it)"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 73004
write_attempt_conf "$T" 73000 73010-73049
start_factoryd "$T/factoryd.conf" "$T/log"

# A database as a service: initdb into its own directory, then the
# server on 127.0.0.1:PORT alone, its socket in its private /tmp.
db_service() {	# name port [ready-timeout]
	cat <<SVC
  $1:
    run: ["/bin/sh", "-c", "$PGBIN/initdb -D data -A trust -U app >/dev/null && exec $PGBIN/postgres -D data -k /tmp -h 127.0.0.1 -p $2 -c fsync=off"]
    ready: ["$PGBIN/pg_isready", "-q", "-h", "127.0.0.1", "-p", "$2"]
    ready-timeout: ${3:-60s}
    ports: [$2]
SVC
}

# The real binaries: /usr/bin has Debian's wrappers, in Perl.
PSQL="$PGBIN/psql -X -q -h 127.0.0.1 -p 5432 -U app -d postgres -v ON_ERROR_STOP=1"
# The agent leaves a row in its database and a file in the tree; the
# validation passes only if a database answers, and an empty one.
AGENT="$PSQL -c 'create table t (n int); insert into t values (42)' &&
    $PSQL -tAc 'select n from t' >src/answer.txt"
VALIDATE="test \"\$($PSQL -tAc \"select count(*) from pg_tables where tablename = 't'\")\" = 0"

# A: no services: the agent cannot reach a database, and fails.
write_manifest "$T/none.yaml" "$AGENT" "$VALIDATE"
id=$(submit_wait "$T/none.yaml" 120) || fail "A: no end"
check "A: without services: the agent finds no database, failed" \
    test "$(field "$id" state)" = failed

# B: with the database: the agent writes to it, the validation finds
# a fresh one (no table t: else it fails), and the attempt publishes.
write_manifest "$T/db.yaml" "$AGENT" "$VALIDATE" "services:
$(db_service db 5432)"
id=$(submit_wait "$T/db.yaml" 240) || fail "B: no end"
check "B: with services: published" test "$(field "$id" state)" = published
check "B: the agent read its row from the service" \
    test "$(git --git-dir="$T/remote.git" show "factory/$id:src/answer.txt" 2>/dev/null)" = 42
# The facts of the attempt's first receipt of a kind.
facts() {	# id kind
	ctl receipts "$1" | grep "\"kind\":\"$2\"" | head -n 1 | jq -c .facts
}
# How many processes run as a uid from lo to hi.
range_procs() {	# lo hi
	cat /proc/[0-9]*/status 2>/dev/null | awk -v lo="$1" -v hi="$2" \
	    '/^Uid:/ && $2 >= lo && $2 <= hi {n++} END {print n + 0}'
}
logs_have() {	# text logs-args...
	t=$1
	shift
	ctl logs "$@" | grep -q "$t"
}
reason_has() {	# id regex
	ctl -j show "$1" | jq -e --arg r "$2" '.reason | test($r)'
}
refused_with() {	# manifest text
	ctl submit "$1" 2>&1 | grep -q "$2"
}
not() { ! "$@"; }

RUNNING=$(facts "$id" running)
SUID=$(echo "$RUNNING" | jq '.services.services[0].uid')
check "B: running's receipt names the service and its time to ready" \
    jq -en --argjson f "$RUNNING" '$f.services.services[0].name == "db" and
    $f.services.ready_ms > 0 and $f.services.services[0].ready_ms > 0'
check "B: the service ran as an attempt uid of its own" \
    jq -en --argjson f "$RUNNING" --argjson s "$SUID" \
    '$s >= 73010 and $s <= 73049 and $s != $f.uid'
check "B: allocating journaled the service's uids before they were used" \
    jq -en --argjson f "$(facts "$id" allocating)" --argjson s "$SUID" \
    '$f.service_uids[0] == $s and ($f.service_uids | length) == 2 and
    $f.service_uids[1] != $s and $f.service_uids[1] != $f.uid'
check "B: show has the services part of the sandbox stage" \
    jq -en --argjson o "$(ctl -j show "$id")" '$o.stages.services > 0'
check "B: its log is kept apart: factoryctl logs -s db" \
    logs_have 'database system is ready' -s db "$id"
check "B: the validation's service has its own log" \
    logs_have 'database system is ready' -v -s db "$id"
check "B: the agent's log is not the service's" \
    not logs_have 'database system' "$id"
check "B: logs of a service it does not have is refused" \
    not ctl logs -s nosuch "$id"
check "B: no process of the attempt uids is left" \
    test "$(range_procs 73010 73049)" -eq 0

# C: a service that never gets ready fails the attempt in its
# ready-timeout, by name, and the agent never runs.
write_manifest "$T/never.yaml" "touch src/ran" true "services:
  slow:
    run: [\"/bin/sleep\", \"600\"]
    ready: [\"/bin/false\"]
    ready-timeout: 3s
    ports: [7000]"
t0=$(date +%s)
id=$(submit_wait "$T/never.yaml" 120) || fail "C: no end"
t1=$(date +%s)
check "C: not ready: failed" test "$(field "$id" state)" = failed
check "C: the reason names the service and its timeout" \
    reason_has "$id" "service slow: not ready in 3000ms"
check "C: the reason says how its ready command last ended" \
    reason_has "$id" "its ready command exited with status 1"
check "C: it ended in about its ready-timeout, not the wall time" \
    test $((t1 - t0)) -lt 60
check "C: the agent never ran (no running receipt)" \
    test -z "$(facts "$id" running)"
check "C: no process of the attempt uids is left" \
    test "$(range_procs 73010 73049)" -eq 0

# D: a service that dies while the agent runs fails the attempt, by
# name and status, and the agent is killed.
write_manifest "$T/dies.yaml" "sleep 60" true "services:
  brief:
    run: [\"/bin/sh\", \"-c\", \"touch ok; sleep 2; exit 3\"]
    ready: [\"/bin/test\", \"-e\", \"ok\"]
    ports: [7001]"
t0=$(date +%s)
id=$(submit_wait "$T/dies.yaml" 120) || fail "D: no end"
t1=$(date +%s)
check "D: a service died: failed" test "$(field "$id" state)" = failed
check "D: the reason names it, its status and when" \
    reason_has "$id" "service brief exited with status 3 while the agent ran"
check "D: the agent did not run to its end" test $((t1 - t0)) -lt 50

# E: a service binds only its own ports (Landlock's TCP rules, and the
# sandbox cgroup's bind rule): one listening elsewhere dies at its bind.
write_manifest "$T/bind.yaml" "sleep 5" true "services:
  web:
    run: [\"/bin/busybox\", \"nc\", \"-l\", \"-p\", \"7003\"]
    ready: [\"/bin/true\"]
    ready-timeout: 30s
    ports: [7002]"
id=$(submit_wait "$T/bind.yaml" 120) || fail "E: no end"
# Landlock's TCP rules refuse it where the kernel has them, the cgroup
# bind rule everywhere (neither is downgraded here).
check "E: a service listening on a port not its own dies ($(field "$id" state): $(field "$id" reason))" \
    reason_has "$id" "service web .*(before it was ready|while the agent ran)"
write_manifest "$T/bindok.yaml" "sleep 3; echo x >src/x" true "services:
  web:
    run: [\"/bin/busybox\", \"nc\", \"-l\", \"-p\", \"7002\"]
    ready: [\"/bin/true\"]
    ports: [7002]"
id=$(submit_wait "$T/bindok.yaml" 120) || fail "E: no end"
check "E: the same service on its own port runs" \
    test "$(field "$id" state)" = published

# F: another attempt's agent, in its own network namespace, does not
# reach a running attempt's service: the first's agent waits while
# the second probes the first's port.
write_manifest "$T/hold.yaml" "while [ ! -e /tmp/never ]; do sleep 1; done" \
    true "services:
$(db_service db 5432)"
sed -i 's/^limits: {wall: 20s,/limits: {wall: 120s,/' "$T/hold.yaml"
held=$(ctl submit "$T/hold.yaml") || fail "F: submit"
wait_state "$held" running 120 || fail "F: the first never ran"
check "F: show has the running service's part of the limits and its usage" \
    jq -en --argjson o "$(ctl -j show "$held")" '$o.services.services[0] |
    .name == "db" and .memory == 134217728 and .pids == 32 and
    .restarts == 0 and .usage.mem_peak > 0'
write_manifest "$T/probe.yaml" \
    "if $PGBIN/pg_isready -q -h 127.0.0.1 -p 5432; then echo reached >src/reached; fi; true"
id=$(submit_wait "$T/probe.yaml" 120) || fail "F: no end"
check "F: another attempt did not reach the service" \
    not git --git-dir="$T/remote.git" show "factory/$id:src/reached"
ctl cancel "$held" >/dev/null
wait_terminated "$held" 120 || fail "F: the first did not end"
check "F: cancelled while its service ran: no process of the uids left" \
    test "$(range_procs 73010 73049)" -eq 0

# G: a manifest's services are checked at submission, one line naming
# the field.
write_manifest "$T/bad.yaml" true true "services:
  Bad:
    run: [\"/bin/true\"]
    ready: [\"/bin/true\"]
    ports: [7004]"
check "G: a bad service name is refused at submission" \
    refused_with "$T/bad.yaml" 'not a service name'
write_manifest "$T/bad2.yaml" true true "services:
  a:
    run: [\"/bin/true\"]
    ready: [\"/bin/true\"]
    ports: [7005]
  b:
    run: [\"/bin/true\"]
    ready: [\"/bin/true\"]
    ports: [7005]"
check "G: one port for two services is refused" \
    refused_with "$T/bad2.yaml" "port 7005 is service a's"

# H: a service with restart: 1 that dies while the agent runs is
# started again, in its own directory as it was, and the attempt goes
# on; one that dies again fails it, saying so.
write_manifest "$T/restart.yaml" "sleep 8; echo x >src/x" true "services:
  flaky:
    run: [\"/bin/sh\", \"-c\", \"if [ -e once ]; then exec sleep 600; fi; touch once ok; sleep 1; exit 3\"]
    ready: [\"/bin/test\", \"-e\", \"ok\"]
    ports: [7006]
    restart: 1"
id=$(submit_wait "$T/restart.yaml" 120) || fail "H: no end"
check "H: a service restarted once: published" \
    test "$(field "$id" state)" = published
check "H: the restart is logged with its cause" \
    grep -q "$id: service flaky exited with status 3 while the agent ran: restart 1 of 1" "$T/log"
check "H: the restarted service was ready again" \
    grep -q "$id: service flaky ready again in" "$T/log"
write_manifest "$T/restart2.yaml" "sleep 30" true "services:
  flaky:
    run: [\"/bin/sh\", \"-c\", \"touch ok; sleep 1; exit 3\"]
    ready: [\"/bin/test\", \"-e\", \"ok\"]
    ports: [7006]
    restart: 1"
id=$(submit_wait "$T/restart2.yaml" 120) || fail "H: no end"
check "H: one that dies past its restarts fails the attempt, saying so" \
    reason_has "$id" "service flaky exited with status 3 while the agent ran, after 1 restart"

# I: services take their memory from the attempt's, not beside it: the
# agent beside a service of 200M has 56M of limits.memory 256M, and
# 100M is more than that; a service is held to its own part.
ALLOC="python3 -c 'b = bytes(range(256)) * 409600'"
write_manifest "$T/budget.yaml" "$ALLOC" true "services:
  big:
    run: [\"/bin/sleep\", \"600\"]
    ready: [\"/bin/true\"]
    ports: [7007]
    memory: 200M"
id=$(submit_wait "$T/budget.yaml" 120) || fail "I: no end"
check "I: the agent beside a 200M service has the rest, 56M" \
    reason_has "$id" "memory limit of 58720256 bytes"
write_manifest "$T/budget0.yaml" "$ALLOC; echo x >src/x" true
id=$(submit_wait "$T/budget0.yaml" 120) || fail "I: no end"
check "I: without the service the same agent has its 256M" \
    test "$(field "$id" state)" = published
write_manifest "$T/svcmem.yaml" true true "services:
  greedy:
    run: [\"/bin/sh\", \"-c\", \"$ALLOC && touch ok && exec sleep 600\"]
    ready: [\"/bin/test\", \"-e\", \"ok\"]
    ready-timeout: 60s
    ports: [7008]
    memory: 32M"
id=$(submit_wait "$T/svcmem.yaml" 120) || fail "I: no end"
check "I: a service past its own memory dies, saying so" \
    reason_has "$id" "service greedy .* at its memory limit before it was ready"
write_manifest "$T/over.yaml" true true "services:
  a:
    run: [\"/bin/true\"]
    ready: [\"/bin/true\"]
    ports: [7009]
    memory: 200M
  b:
    run: [\"/bin/true\"]
    ready: [\"/bin/true\"]
    ports: [7010]"
check "I: services that take all of limits.memory are refused" \
    refused_with "$T/over.yaml" "leaves the agent less than 4194304 of limits.memory"

# J: a service seeded with paths of the run's tree (data:), read-only,
# at their paths there ($FACTORY_TREE): the agent's sees the tree the
# agent starts from, the validation's the tree with the agent's change.
peek_service() {	# data
	cat <<'SVC'
  peek:
    run: ["/bin/sh", "-c", "echo root: ${FACTORY_TREE##*/}; echo seen: $(cat $FACTORY_TREE/README.md); echo ls: $(ls $FACTORY_TREE); echo x >$FACTORY_TREE/README.md; exec sleep 600"]
    ready: ["/bin/true"]
    ports: [7010]
SVC
	echo "    data: [$1]"
}
write_manifest "$T/seed.yaml" "sleep 1; echo agent >README.md" \
    'test "$(cat README.md)" = agent' "services:
$(peek_service "README.md, src")"
id=$(submit_wait "$T/seed.yaml" 120) || fail "J: no end"
check "J: seeded from the tree: published" \
    test "$(field "$id" state)" = published
check "J: the agent's service read the tree's file at its path" \
    logs_have 'seen: hello' -s peek "$id"
check "J: it is shown its data paths of the tree and nothing else" \
    logs_have 'ls: README.md src$' -s peek "$id"
check "J: a write to its data fails: read-only" \
    logs_have 'README.md: Read-only file system' -s peek "$id"
check "J: the validation's service reads the agent's change" \
    logs_have 'seen: agent' -v -s peek "$id"
check "H: FACTORY_TREE: the agent's tree, then the validation's" \
    eval "logs_have 'root: tree' -s peek $id &&
    logs_have 'root: checkout' -v -s peek $id"

# K: a data path that does not exist, or that is a link out of the
# tree (to the host's /etc, in the baseline), fails the attempt naming
# the service and the path; nothing of the host is shown.
write_manifest "$T/nodata.yaml" true true "services:
$(peek_service "nosuch.sql")"
id=$(submit_wait "$T/nodata.yaml" 120) || fail "K: no end"
check "K: a missing data path: failed" test "$(field "$id" state)" = failed
check "K: the reason names the service and the path" \
    reason_has "$id" "service peek: .*data nosuch.sql: No such file"
ln -s /etc "$T/src/hostetc" && git -C "$T/src" checkout -qb withlink &&
    git -C "$T/src" add hostetc && git -C "$T/src" -c user.name=test \
    -c user.email=test@localhost commit -qm "a link out" &&
    git -C "$T/src" push -q "$T/demo.git" withlink || fail "K: branch"
write_manifest "$T/escape.yaml" true true "services:
$(peek_service "hostetc")"
sed -i 's/^baseline: main$/baseline: withlink/' "$T/escape.yaml"
id=$(submit_wait "$T/escape.yaml" 120) || fail "K: no end"
check "K: a link out of the tree: failed" test "$(field "$id" state)" = failed
check "K: the reason says it leaves the tree, naming service and path" \
    reason_has "$id" "service peek: .*data hostetc: leaves the tree"
check "K: the service never ran: nothing of /etc in its log" \
    not logs_have 'seen:' -s peek "$id"
check "K: no process of the attempt uids is left" \
    test "$(range_procs 73010 73049)" -eq 0

# L: a service's port is kept from autobind in the set's namespace
# (ip_local_reserved_ports), which Landlock's TCP rules and the bind
# rule do not see: an agent that asks autobind for its service's port
# (IP_LOCAL_PORT_RANGE, lo = hi, then listen(2) without bind(2)) while
# the service does not listen on it (as while it restarts) is refused
# it, and listen(2) again and again over a range around it (eight
# ports: over an even number autobind tries each one in every call)
# takes every port of the range but that one.  A service, started before the agent,
# is refused the agent's preview port the same way.
SQUAT='
import errno, socket, struct, sys
def sock(lo, hi):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_IP, 51, struct.pack("I", hi << 16 | lo))
    return s
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))
p = int(sys.argv[1])
lo, hi = p - 1, p + 6
try:
    s = sock(p, p)
    s.listen(1)
    print("port", s.getsockname()[1])
except OSError as e:
    print(name(e))
held = []
try:
    while len(held) <= hi - lo:
        s = sock(lo, hi)
        s.listen(1)
        held.append(s)
    print("ok")
except OSError as e:
    print(name(e))
print("took", *sorted(s.getsockname()[1] for s in held), flush=True)
'
write_manifest "$T/squat.yaml" "python3 -c '$SQUAT' 40001 >src/squat.txt" \
    true "services:
  idle:
    run: [\"/bin/sleep\", \"600\"]
    ready: [\"/bin/true\"]
    ports: [40001]"
id=$(submit_wait "$T/squat.yaml" 120) || fail "L: no end"
check "L: the squatting agent ran to its end: published" \
    test "$(field "$id" state)" = published
git --git-dir="$T/remote.git" show "factory/$id:src/squat.txt" \
    >"$T/squat.txt" 2>&1
check "L: autobind asked for the service's port refuses it" \
    test "$(sed -n 1p "$T/squat.txt")" = EADDRINUSE
check "L: repeated listen takes every port around it but the service's" \
    test "$(sed -n 3p "$T/squat.txt")" = \
    "took 40000 40002 40003 40004 40005 40006 40007"
write_manifest "$T/squat2.yaml" "sleep 1; echo x >src/x" true "services:
  squat:
    run: [\"/bin/sh\", \"-c\", $(printf '%s' \
    "python3 -c '$SQUAT' 40003; exec sleep 600" | jq -Rs .)]
    ready: [\"/bin/true\"]
    ports: [40011]
preview: {port: 40003}"
id=$(submit_wait "$T/squat2.yaml" 120) || fail "L: no end"
check "L: a service beside the agent's preview: published" \
    test "$(field "$id" state)" = published
ctl logs -s squat "$id" >"$T/squat2.txt" 2>&1
check "L: autobind asked for the agent's preview port refuses the service" \
    test "$(sed -n 1p "$T/squat2.txt")" = EADDRINUSE
check "L: the service's repeated listen never lands on it" \
    test "$(sed -n 3p "$T/squat2.txt")" = \
    "took 40002 40004 40005 40006 40007 40008 40009"
# Nothing is left for the next attempt: its namespace is a fresh one.
write_manifest "$T/fresh.yaml" \
    "echo \"[\$(cat /proc/sys/net/ipv4/ip_local_reserved_ports)]\" >src/x" true
id=$(submit_wait "$T/fresh.yaml" 120) || fail "L: no end"
check "L: the next attempt's namespace reserves nothing of theirs" \
    test "$(git --git-dir="$T/remote.git" show "factory/$id:src/x")" = "[]"

stop_factoryd
regress_done
