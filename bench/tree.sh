#!/bin/sh
# make bench, trees: an attempt's tree as an overlay on a warm pristine
# checkout (bench/tree.c) against git worktree add, git clone --shared
# and the libgit2 checkout every attempt had before; and collect of a
# one-file change.  On a generated repository of 5,000 files and 60 MB,
# or BENCH_REPO=path.  TREE_ROUNDS rounds (default 5), medians.  Root.
: "${O:?O must name the build directory}"
R=${TREE_ROUNDS:-5}
W=$(mktemp -d /tmp/factory-bench-tree.XXXXXX) || exit 1
trap 'awk -v d="$W/" "index(\$2, d) == 1 {print \$2}" /proc/mounts |
    sort -r | while read -r m; do umount "$m"; done; rm -rf "$W"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME=$W
G="-c user.name=bench -c user.email=bench@localhost"

if [ -n "${BENCH_REPO:-}" ]; then
	REPO=$BENCH_REPO
else
	REPO=$W/repo.git
	git init -q "$W/gen" &&
	python3 - "$W/gen" <<'PY' &&
import os, random, sys
r = random.Random(11)
root = sys.argv[1]
for d in range(50):
    os.mkdir(os.path.join(root, "d%02d" % d))
    for f in range(100):
        with open(os.path.join(root, "d%02d" % d, "f%03d" % f), "wb") as fp:
            fp.write(r.randbytes(12000))
PY
	git -C "$W/gen" add -A && git -C "$W/gen" $G commit -qm gen &&
	git clone -q --bare "$W/gen" "$REPO" && rm -rf "$W/gen" ||
	    { echo "tree bench: cannot generate the repository" >&2; exit 1; }
fi
files=$(git --git-dir="$REPO" ls-tree -r HEAD | wc -l)
bytes=$(git --git-dir="$REPO" ls-tree -r -l HEAD | awk '{s += $4} END {print s}')

# ms NAME COMMAND...: the median of R runs, a fresh target each ($N).
ms() {
	name=$1
	shift
	i=0
	: >"$W/t"
	while [ $i -lt "$R" ]; do
		N=$W/$name.$i
		s=$(date +%s%N)
		eval "$*" >/dev/null 2>&1 || { echo "tree bench: $name failed" >&2; exit 1; }
		echo $(( ($(date +%s%N) - s) / 1000 )) >>"$W/t"
		i=$((i + 1))
	done
	sort -n "$W/t" | awk -v n="$R" 'NR == int(n / 2) + 1 {printf "%.2f\n", $1 / 1000}'
}
wt=$(ms worktree 'git --git-dir="$REPO" worktree add -q --detach "$N" HEAD')
git --git-dir="$REPO" worktree prune
cs=$(ms clone 'git clone -q --shared "$REPO" "$N"')
out=$("$O/bench/tree" -r "$REPO" -w "$W" -n "$R") ||
    { echo "tree bench: bench/tree failed" >&2; exit 1; }
get() { echo "$out" | awk -v k="$1" '$1 == k {print $2}'; }
warm=$(get warm)
echo
echo "trees: $files files, $bytes bytes, $R rounds, medians in ms"
printf '%-34s %10s %8s\n' "" "ms" "x warm"
row() { printf '%-34s %10s %8s\n' "$1" "$2" "$(echo "$2 $warm" | awk '{printf "%.0f", $1 / $2}')"; }
row "warm overlay tree" "$warm"
row "  of which .git and its index" "$(get upper)"
row "git worktree add --detach" "$wt"
row "git clone --shared" "$cs"
row "libgit2 checkout (before)" "$(get libgit2)"
row "pristine checkout (cold, once)" "$(get cold)"
printf '%-34s %10s\n' "collect of a one-file change" "$(get collect)"
echo "targets: warm <= 10 ms and >= 100x faster than worktree add; collect <= 10 ms"
