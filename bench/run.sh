#!/bin/sh
# make bench: the spawn benchmark (bench/spawn.c).  Needs root.
# O: the build directory.  ROUNDS: launches of each kind (default 50).
: "${O:?O must name the build directory}"
exec "$O/bench/spawn" -n "${ROUNDS:-50}"
