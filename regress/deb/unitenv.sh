# Sourced by regress/deb/check.sh and regress/unitenv/run.sh: a program
# run under the seccomp settings the unit lists, as systemd 252 would
# install them (prog_unitenv.c), and its CapabilityBoundingSet= and
# NoNewPrivileges= (setpriv(1)), read from the unit file itself so a
# setting added there is run here.  A seccomp-implemented setting the
# emulation does not know stops the caller: a test must not pass by
# leaving a setting out.
#
# (unitenv UNIT PROG_UNITENV program [arg ...]): it execs, so call it
# in a subshell; in the background, $! is then the program's pid.

unitenv_yes() {	# unit key: 0 if the unit says yes
	case $(sed -n "s/^$2=//p" "$1" | tail -n 1) in
	yes|true|on|1) return 0 ;;
	esac
	return 1
}

unitenv() {
	_u=$1 _p=$2
	shift 2
	for _k in MemoryDenyWriteExecute RestrictNamespaces ProtectClock \
	    ProtectKernelLogs SystemCallLog RestrictFileSystems \
	    SystemCallFilter:2; do
		case $_k in
		*:2)	# one line only: systemd would merge several
			[ "$(grep -c "^${_k%:2}=" "$_u")" -le 1 ] && continue
			echo "unitenv: more than one ${_k%:2}= in $_u" >&2
			return 2 ;;
		esac
		grep -q "^$_k=" "$_u" || continue
		echo "unitenv: $_k= in $_u is not emulated (prog_unitenv.c)" >&2
		return 2
	done
	_f=$(sed -n 's/^SystemCallFilter=//p' "$_u")
	unitenv_yes "$_u" ProtectKernelModules && _f="${_f:-~} @module"
	_e=$(sed -n 's/^SystemCallErrorNumber=//p' "$_u")
	_a=$(sed -n 's/^RestrictAddressFamilies=//p' "$_u")
	_c=$(sed -n 's/^CapabilityBoundingSet=//p' "$_u" | tr 'A-Z' 'a-z' |
	    sed -e 's/cap_//g' -e 's/ /,+/g')
	_o=""
	unitenv_yes "$_u" RestrictSUIDSGID && _o="${_o}S"
	unitenv_yes "$_u" ProtectHostname && _o="${_o}H"
	unitenv_yes "$_u" LockPersonality && _o="${_o}l"
	unitenv_yes "$_u" RestrictRealtime && _o="${_o}r"
	if [ -z "$_c" ]; then
		echo "unitenv: no CapabilityBoundingSet= in $_u" >&2
		return 2
	fi
	if ! unitenv_yes "$_u" NoNewPrivileges; then
		echo "unitenv: no NoNewPrivileges=yes in $_u: prog_unitenv" \
		    "sets it" >&2
		return 2
	fi
	exec setpriv --bounding-set="-all,+$_c" "$_p" ${_o:+-$_o} \
	    ${_f:+-f "$_f"} ${_e:+-e "$_e"} ${_a:+-a "$_a"} -- "$@"
}
