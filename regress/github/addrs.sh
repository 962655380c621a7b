# regress/github: a forge name with several addresses (defect 9 of issue
# 9), sourced by run.sh.  "localhost" is made to resolve to ::1 and
# 127.0.0.1 in a private /etc/hosts (and, for IPv4 first, a private
# /etc/gai.conf), bind-mounted in a mount namespace of the test's own:
# the host's files are never changed.  A forge listens on one of the
# addresses only; the publication must get through whichever comes
# first.  Last, a forge started in that namespace listens where the
# name points, on both.

# nshosts HOSTS GAI CMD...: CMD with HOSTS as /etc/hosts and, unless
# GAI is "", GAI as /etc/gai.conf.  NSHOSTS is the same as words, for
# a background command whose pid must be the command's.
NSSCRIPT='mount --bind "$0" /etc/hosts || exit 125
if [ -n "$1" ]; then mount --bind "$1" /etc/gai.conf || exit 125; fi
shift; exec "$@"'
nshosts() {
	unshare -m --propagation private sh -c "$NSSCRIPT" "$@"
}

# refused ADDR PORT: nothing listens there.
refused() {
	! python3 -c 'import socket, sys
socket.create_connection((sys.argv[1], int(sys.argv[2])), 3).close()' \
	    "$1" "$2" 2>/dev/null
}
listening() { ! refused "$@"; }
# swallowed ADDR PORT: connecting there neither succeeds nor fails.
swallowed() {
	python3 -c 'import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), 2).close()
except socket.timeout:
    sys.exit(0)
except OSError:
    pass
sys.exit(1)' "$1" "$2"
}

# addrcase NAME LISTEN GAI DEAD [WRAP]: a forge on LISTEN only (started
# through WRAP, if given, in the namespace), a publication through
# "localhost" in the namespace; DEAD is the address that must come
# first and refuse.
ADN=200
addrcase() {
	ac_name=$1 ac_listen=$2 ac_gai=$3 ac_dead=$4
	shift 4
	ADN=$((ADN + 1))
	ac_id=a-20261201-0$ADN
	if ! fakegh "$ac_listen" "$T/srv/ports.$ac_name" "$@"; then
		nok "$ac_name" "the forge on $ac_listen did not start"
		return
	fi
	ac_pid=$FAKEPID
	SRVPIDS="$SRVPIDS $ac_pid"
	read -r ac_api ac_git ac_ctl < "$T/srv/ports.$ac_name"
	ac_saved="$API $CTLPORT $CTLHOST"
	API=https://localhost:$ac_api CTLPORT=$ac_ctl
	case $ac_listen in ::1*) CTLHOST='[::1]' ;; *) CTLHOST=127.0.0.1 ;; esac
	ac_first=$(nshosts "$T/etc/hosts" "$ac_gai" getent ahosts localhost |
	    awk 'NR == 1 { print $1 }')
	mkbundle $ac_id && message $ac_id "" "${AC_MSG:-}"
	ac_start=$(date +%s)
	nshosts "$T/etc/hosts" "$ac_gai" "$PROG" "$T/keys/verifier.pem" \
	    "$T/$ac_id.json" "$T/$ac_id.bundle" > "$T/state/out/$ac_id" \
	    2>> "$T/state/logs/$ac_id.log"
	RC=$?
	ac_secs=$(($(date +%s) - ac_start))
	OUT=$(cat "$T/state/out/$ac_id")
	if [ "$ac_dead" != - ] && [ "$ac_first" != "$ac_dead" ]; then
		nok "$ac_name" "localhost resolves to $ac_first first, not $ac_dead"
	elif [ "$ac_dead" != - ] && [ -z "${FG_SILENT:-}" ] &&
	    { listening "$ac_dead" $ac_api || listening "$ac_dead" $ac_git; }
	then
		nok "$ac_name" "something listens on $ac_dead"
	elif [ -n "${FG_SILENT:-}" ] && { ! swallowed "$FG_SILENT" $ac_api ||
	    ! swallowed "$FG_SILENT" $ac_git; }; then
		nok "$ac_name" "$FG_SILENT:$ac_api or :$ac_git is not silent"
	elif [ $RC -ne 0 ]; then
		nok "$ac_name" "exit $RC: $OUT"
	elif [ "$(forge_branch $ac_id)" != "$COMMIT" ] ||
	    [ "$(npulls $ac_id)" != 1 ]; then
		nok "$ac_name" "branch $(forge_branch $ac_id), $(npulls $ac_id) pulls"
	elif [ "$(state | jq '.counts.minted == .counts.revoked and
	    .counts.minted == 1')" != true ]; then
		nok "$ac_name" "tokens: $(state | jq -c .counts)"
	elif [ -n "${AC_BOTH:-}" ] && { refused ::1 $ac_api ||
	    refused 127.0.0.1 $ac_api || refused ::1 $ac_git ||
	    refused 127.0.0.1 $ac_git; }; then
		nok "$ac_name" "the forge does not listen on both addresses"
	elif [ $ac_secs -gt "${AC_MAX:-60}" ]; then
		nok "$ac_name" "took $ac_secs s, more than ${AC_MAX:-60}"
	else
		ok "$ac_name"
	fi
	state | jq -r '.tokens | keys[]' >> "$T/srv/tokens.extra"
	kill $ac_pid 2>/dev/null && wait $ac_pid 2>/dev/null
	set -- $ac_saved
	API=$1 CTLPORT=$2 CTLHOST=$3
}

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null ||
    [ ! -e /etc/gai.conf ]; then
	for n in addr-dead-v6-first addr-v6-only addr-dead-v4-first \
	    addr-silent-v6-first addr-forge-where-the-name-points; do
		echo "ok - $n # SKIP needs root, unshare(1) and /etc/gai.conf"
	done
else
	mkdir -p "$T/etc"
	printf '::1 localhost\n127.0.0.1 localhost\n' > "$T/etc/hosts"
	printf 'precedence ::ffff:0:0/96 100\n' > "$T/etc/gai.v4first"
	# A fresh Debian 12: ::1 first; the forge on IPv4 only.
	addrcase addr-dead-v6-first 127.0.0.1 "" ::1
	# ::1 first and the forge there only.
	addrcase addr-v6-only ::1 "" -
	# IPv4 first (gai.conf), dead; the forge on ::1 only.
	addrcase addr-dead-v4-first ::1 "$T/etc/gai.v4first" 127.0.0.1
	# ::1 first swallows the SYNs (nothing refuses): each connect gives
	# it half of the 4 s a request may take, then tries 127.0.0.1.
	FG_SILENT=::1 AC_MSG=',"_timeout":4' AC_MAX=45
	addrcase addr-silent-v6-first 127.0.0.1 "" ::1
	FG_SILENT= AC_MSG= AC_MAX=
	# A forge started where the name points listens on both.
	AC_BOTH=1
	addrcase addr-forge-where-the-name-points auto "" - \
	    unshare -m --propagation private sh -c "$NSSCRIPT" "$T/etc/hosts" ""
	AC_BOTH=
fi
