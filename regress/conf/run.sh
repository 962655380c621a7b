#!/bin/sh
# factoryd.conf(5) and factory-manifest(5) regress, bgpd style: every
# conf-pass-NAME.yaml is checked with `factoryd -nv` and its print must
# equal conf-pass-NAME.out and parse again to the same print; every
# conf-fail-NAME.yaml must fail with exactly the line in
# conf-fail-NAME.err (FILE standing for the file's path).  Manifests
# the same way through prog_confcheck, which calls manifest_parse on the
# bytes as the parent does.  Also: the sample etc/factoryd.conf parses.
#
# Configs go through the real daemon, $O/factoryd; if it is not built,
# through prog_confcheck (which calls the same conf_parse/conf_print),
# with a note.

set -u
: "${O:?set O to the absolute build directory}"
D=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$D/../.." && pwd)
CHK="$O/regress/conf/prog_confcheck"
FD="$O/factoryd"

[ -x "$CHK" ] || { echo "not ok - conf: $CHK not built"; exit 1; }

T=$(mktemp -d /tmp/factory-conf.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

nfail=0
WRAP=
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1: $2"; nfail=$((nfail + 1)); }

if [ -x "$FD" ]; then
	USE_FD=1
else
	USE_FD=0
	echo "# $FD not built: configs checked with prog_confcheck"
fi

# check KIND FILE: stdout to $T/out, stderr to $T/err, status to $rc.
# NAME.env beside NAME.yaml: VAR=VALUE words for the test build's
# hooks (FACTORY_TEST_PASSWD, ...), @D@ standing for this directory.
check() {
	ev=
	[ -f "${2%.yaml}.env" ] && ev=$(sed "s|@D@|$D|g" "${2%.yaml}.env")
	if [ "$1" = conf ] && [ "$USE_FD" = 1 ]; then
		$WRAP env $ev "$FD" -nv -f "$2" >"$T/out" 2>"$T/err"
	else
		$WRAP env $ev "$CHK" "$1" "$2" >"$T/out" 2>"$T/err"
	fi
	rc=$?
}

# What a success prints on stderr.
ok_stderr() {
	if [ "$1" = conf ] && [ "$USE_FD" = 1 ]; then
		echo "configuration OK"
	fi
}

run_pass() {	# KIND NAME
	kind=$1 name=$2
	y="$D/$name.yaml" golden="$D/$name.out"
	[ -f "$golden" ] || { fail "$name" "no $name.out"; return; }
	check "$kind" "$y"
	if [ "$rc" != 0 ]; then
		fail "$name" "exit $rc: $(head -n 1 "$T/err")"
		return
	fi
	if [ "$(cat "$T/err")" != "$(ok_stderr "$kind")" ]; then
		fail "$name" "stderr: $(head -n 1 "$T/err")"
		return
	fi
	if ! cmp -s "$T/out" "$golden"; then
		fail "$name" "print differs from $name.out:
$(diff -u "$golden" "$T/out" | sed 's/^/#  /')"
		return
	fi
	# The print is itself a valid file that prints the same.
	cp "$T/out" "$T/reparse.yaml"
	check "$kind" "$T/reparse.yaml"
	if [ "$rc" != 0 ]; then
		fail "$name" "print does not parse: $(head -n 1 "$T/err")"
		return
	fi
	if ! cmp -s "$T/out" "$golden"; then
		fail "$name" "print of the print differs"
		return
	fi
	# factoryd -n alone says only that it is fine.
	if [ "$kind" = conf ] && [ "$USE_FD" = 1 ]; then
		"$FD" -n -f "$y" >"$T/out" 2>"$T/err"
		rc=$?
		if [ "$rc" != 0 ] || [ -s "$T/out" ] ||
		    [ "$(cat "$T/err")" != "configuration OK" ]; then
			fail "$name" "factoryd -n: exit $rc, $(head -n 1 "$T/err")"
			return
		fi
	fi
	pass "$name"
}

run_fail() {	# KIND NAME
	kind=$1 name=$2
	y="$D/$name.yaml" experr="$D/$name.err"
	[ -f "$experr" ] || { fail "$name" "no $name.err"; return; }
	check "$kind" "$y"
	if [ "$rc" != 1 ]; then
		fail "$name" "exit $rc, want 1"
		return
	fi
	if [ -s "$T/out" ]; then
		fail "$name" "printed something on stdout"
		return
	fi
	if [ "$(wc -l <"$T/err")" != 1 ]; then
		fail "$name" "want one line on stderr, got $(wc -l <"$T/err")"
		return
	fi
	got=$(cat "$T/err")
	case "$got" in
	"$y:"*)	got="FILE${got#"$y"}" ;;
	*)	fail "$name" "error does not start with the file: $got"
		return ;;
	esac
	want=$(sed "s|@D@|$D|g" "$experr")
	if [ "$got" != "$want" ]; then
		fail "$name" "got \"$got\", want \"$want\""
		return
	fi
	pass "$name"
}

# conf-warn-NAME: accepted, with exactly the warning line of
# conf-warn-NAME.err before "configuration OK", with -n as with -nv.
run_warn() {	# NAME
	name=$1
	y="$D/$name.yaml" experr="$D/$name.err"
	[ -f "$experr" ] || { fail "$name" "no $name.err"; return; }
	for flags in -nv -n; do
		ev=
		[ -f "$D/$name.env" ] && ev=$(sed "s|@D@|$D|g" "$D/$name.env")
		env $ev "$FD" $flags -f "$y" >"$T/out" 2>"$T/err"
		rc=$?
		if [ "$rc" != 0 ]; then
			fail "$name" "$flags: exit $rc: $(head -n 1 "$T/err")"
			return
		fi
		want="$(sed "s|^FILE|$y|" "$experr")
configuration OK"
		if [ "$(cat "$T/err")" != "$want" ]; then
			fail "$name" "$flags: stderr \"$(cat "$T/err")\", want \"$want\""
			return
		fi
	done
	pass "$name"
}

for kind in conf manifest; do
	for y in "$D/$kind"-pass-*.yaml; do
		[ -f "$y" ] || continue
		run_pass "$kind" "$(basename "$y" .yaml)"
	done
	for y in "$D/$kind"-fail-*.yaml; do
		[ -f "$y" ] || continue
		run_fail "$kind" "$(basename "$y" .yaml)"
	done
	for y in "$D/$kind"-warn-*.yaml; do
		[ -f "$y" ] || continue
		if [ "$USE_FD" = 1 ]; then
			run_warn "$(basename "$y" .yaml)"
		else
			echo "ok - $(basename "$y" .yaml) # skip: no factoryd"
		fi
	done
	# A golden file without its input is a test that silently vanished.
	for g in "$D/$kind"-*.out "$D/$kind"-*.err; do
		[ -f "$g" ] || continue
		[ -f "${g%.*}.yaml" ] || fail "$(basename "$g")" "no .yaml"
	done
done

# The sample config as installed, with users that exist here.
if [ -f "$TOP/etc/factoryd.conf" ]; then
	sed -e '/^users:/,/^[^ ]/{' \
	    -e 's/^\(  worker:\).*/\1 1001/' \
	    -e 's/^\(  verifier:\).*/\1 1002/' \
	    -e 's/^\(  reconciler:\).*/\1 1003/' \
	    -e 's/^\(  publisher:\).*/\1 1004/' \
	    -e 's/^\(  egress:\).*/\1 1005/' \
	    -e 's/^\(  image:\).*/\1 1006/' \
	    -e 's/^\(  gateway:\).*/\1 1007/' -e '}' \
	    "$TOP/etc/factoryd.conf" >"$T/sample.conf"
	if ! grep -q '^  worker: 1001$' "$T/sample.conf"; then
		fail sample-config "no users.worker line to substitute"
	else
		check conf "$T/sample.conf"
		if [ "$rc" = 0 ] && [ "$(cat "$T/err")" != "$(ok_stderr conf)" ]
		then
			fail sample-config "stderr: $(head -n 1 "$T/err")"
		elif [ "$rc" = 0 ]; then
			pass sample-config
		else
			fail sample-config "$(head -n 1 "$T/err")"
		fi
	fi
else
	fail sample-config "no etc/factoryd.conf"
fi

# The real user database, as a host has it: a range over the first
# user of /etc/passwd outside every refused range is refused by name.
# A machine with no such user (a fresh install) gets one: the check
# runs in a mount namespace of its own with a copy of /etc/passwd, one
# user added, bind-mounted over it, so the file the daemon reads is
# still /etc/passwd.
ent=$(awk -F: '$3 >= 1000 && $3 < 60000 && $1 ~ /^[a-z_][a-z0-9_-]*$/ \
    { print $1 ":" $3; exit }' /etc/passwd)
inpasswd() {	# argv, with $T/passwd over /etc/passwd
	unshare --mount --propagation private sh -c \
	    'mount --bind "$0" /etc/passwd && exec "$@"' "$T/passwd" "$@"
}
if [ -z "$ent" ]; then
	cp /etc/passwd "$T/passwd"
	echo "factory-conf:x:4242:4242::/nonexistent:/usr/sbin/nologin" \
	    >>"$T/passwd"
	ent=factory-conf:4242 WRAP=inpasswd
fi
if [ -n "$ent" ]; then
	u=${ent%%:*} n=${ent#*:}
	w=1001
	[ "$n" -ge 1001 ] && [ "$n" -le 1007 ] && w=2001
	printf 'users: {worker: %s, verifier: %s, reconciler: %s, publisher: %s, egress: %s, image: %s, gateway: %s}\nattempt-uids: %s-%s\n' \
	    $w $((w + 1)) $((w + 2)) $((w + 3)) $((w + 4)) $((w + 5)) \
	    $((w + 6)) "$n" "$n" >"$T/etcpw.conf"
	check conf "$T/etcpw.conf"
	want="$T/etcpw.conf:2:15: attempt-uids: $n-$n holds uid $n of user $u in /etc/passwd"
	if [ "$rc" = 1 ] && [ "$(cat "$T/err")" = "$want" ]; then
		pass conf-attempt-etc-passwd
	else
		fail conf-attempt-etc-passwd "exit $rc, \"$(cat "$T/err")\", want \"$want\""
	fi
	WRAP=
fi

# An unreadable file names itself.
check conf "$T/does-not-exist.conf"
if [ "$rc" = 1 ] && grep -q "^$T/does-not-exist.conf: No such file" \
    "$T/err"; then
	pass conf-missing-file
else
	fail conf-missing-file "exit $rc, $(head -n 1 "$T/err")"
fi

[ "$nfail" = 0 ]
