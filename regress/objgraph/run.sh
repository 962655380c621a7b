#!/bin/sh
# No circle among a directory's files: which file calls which is read
# from the objects' symbol tables (circles.py), and every binary's
# directory must stay free of circles (issue 26), so that its files
# read top-down.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
command -v nm >/dev/null || fail "objgraph: needs nm (binutils)"
command -v python3 >/dev/null || fail "objgraph: needs python3"
n=0
for d in "$O"/obj/*/; do
	dir=$(basename "$d")
	case $dir in regress|bench|fuzz) continue ;; esac
	set -- "$d"*.o
	[ -e "$1" ] || continue
	python3 "$(dirname "$0")/circles.py" "$@" >"$T/out" 2>&1 ||
	    { notok "$dir: circles.py failed"; sed 's/^/# /' "$T/out"; continue; }
	got=$(sed -n 's/^largest //p' "$T/out")
	check "$dir: no circle among its files (largest $got)" \
	    [ "$got" = 0 ]
	[ "$got" = 0 ] || sed -n 's/^circle: /# /p' "$T/out"
	n=$((n + 1))
done
check "objgraph: the directories of every binary were read ($n)" [ "$n" -ge 11 ]
regress_done
