#!/bin/sh
# make bench: the spawn benchmark (bench/spawn.c).  Needs root.
# O: the build directory.  ROUNDS: launches of each kind (default 50).
# POOL: namespaces kept ready, as factoryd keeps them (default 2; 0: no
# pool, every clone makes its own).  factory's sandbox runs twice: pid 1
# forked from the caller (before) and the factory-sandbox binary (now).
: "${O:?O must name the build directory}"
sh "$(dirname "$0")/tree.sh" || exit 1	# trees and collect
exec "$O/bench/spawn" -n "${ROUNDS:-50}" -p "${POOL:-2}" \
    -L "$O/factory-sandbox"
