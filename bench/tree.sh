#!/bin/sh
# make bench, trees: an attempt's tree as an overlay on a warm pristine
# checkout (bench/tree.c) against git worktree add, git clone --shared
# and the libgit2 checkout every attempt had before; the cold pristine
# checkout against git worktree add; and collect of a one-file change.
# On a generated repository of 5,000 files and 60 MB, or BENCH_REPO=path
# (read only: git worktree add works in a shared clone of it).
# TREE_ROUNDS rounds (default 5), medians.  The cold checkout, git
# worktree add and git clone --shared take turns round by round, in
# alternating order, so that load and the state of the file system
# weigh on each alike.  BENCH_SUMMARY: a file the targets are added to
# (bench/run.sh prints it).  Root.
: "${O:?O must name the build directory}"
R=${TREE_ROUNDS:-5}
W=$(mktemp -d /tmp/factory-bench-tree.XXXXXX) || exit 1
trap 'awk -v d="$W/" "index(\$2, d) == 1 {print \$2}" /proc/mounts |
    sort -r | while read -r m; do umount "$m"; done; rm -rf "$W"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME=$W
G="-c user.name=bench -c user.email=bench@localhost"

if [ -n "${BENCH_REPO:-}" ]; then
	REPO=$BENCH_REPO
	git --git-dir="$REPO" rev-parse -q --verify HEAD^{commit} >/dev/null ||
	    { echo "tree bench: $REPO: no HEAD commit" >&2; exit 1; }
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
# worktree add writes under its repository: a clone sharing the objects.
git clone -q --bare --shared "$REPO" "$W/wt.git" ||
    { echo "tree bench: cannot clone $REPO" >&2; exit 1; }
files=$(git --git-dir="$REPO" ls-tree -r HEAD | wc -l)
bytes=$(git --git-dir="$REPO" ls-tree -r -l HEAD | awk '{s += $4} END {print s}')

# us NAME COMMAND...: one run into a fresh target ($N), in microseconds
# appended to $W/NAME.t; the command may print "cold MS" instead.
us() {
	name=$1
	shift
	N=$W/$name.$b_r
	s=$(date +%s%N)
	b_out=$(eval "$*" 2>&1) || { echo "tree bench: $name failed: $b_out" >&2; exit 1; }
	e=$(date +%s%N)
	case $b_out in
	"cold "*) echo "$b_out" | awk '{printf "%d\n", $2 * 1000}' ;;
	*) echo $(( (e - s) / 1000 )) ;;
	esac >>"$W/$name.t"
}
med() {
	sort -n "$W/$1.t" | awk -v n="$R" 'NR == int(n / 2) + 1 {printf "%.2f\n", $1 / 1000}'
}
wt() { us worktree 'git --git-dir="$W/wt.git" worktree add -q --detach "$N" HEAD'; }
cs() { us clone 'git clone -q --shared "$REPO" "$N"'; }
cold() { us cold 'mkdir "$N" && "$O/bench/tree" -c -r "$REPO" -w "$N"'; }
b_r=0
while [ $b_r -lt "$R" ]; do
	if [ $((b_r % 2)) -eq 0 ]; then wt; cs; cold; else cold; cs; wt; fi
	rm -rf "$W/worktree.$b_r" "$W/clone.$b_r" "$W/cold.$b_r"
	b_r=$((b_r + 1))
done
git --git-dir="$W/wt.git" worktree prune
wt=$(med worktree)
cs=$(med clone)
cold=$(med cold)
out=$("$O/bench/tree" -r "$REPO" -w "$W" -n "$R") ||
    { echo "tree bench: bench/tree failed" >&2; exit 1; }
get() { echo "$out" | awk -v k="$1" '$1 == k {print $2}'; }
warm=$(get warm)
collect=$(get collect)
ratio() { echo "$1 $2" | awk '{printf "%.2f", $1 / $2}'; }
echo
echo "trees: $files files, $bytes bytes${BENCH_REPO:+ ($BENCH_REPO)}, $R rounds, medians in ms"
printf '%-34s %10s %8s %10s\n' "" "ms" "x warm" "x worktree"
row() {
	printf '%-34s %10s %8s %10s\n' "$1" "$2" \
	    "$(echo "$2 $warm" | awk '{printf "%.0f", $1 / $2}')" "$(ratio "$2" "$wt")"
}
row "warm overlay tree" "$warm"
printf '%-34s %10s\n' "  of which .git and its index" "$(get upper)"
row "git worktree add --detach" "$wt"
row "git clone --shared" "$cs"
row "libgit2 checkout (before)" "$(get libgit2)"
row "pristine checkout (cold)" "$cold"
printf '%-34s %10s\n' "collect of a one-file change" "$collect"

# target NAME VALUE TEST: one line of the summary, met when TEST (awk,
# on v) holds.
target() {
	echo "$2" | awk -v n="$1" "{v = \$1; printf \"%-44s %10s  %s\\n\", n, v, ($3) ? \"met\" : \"missed\"}"
}
{
	target "warm tree, ms (<= 10)" "$warm" 'v <= 10'
	target "worktree add / warm tree (>= 100)" "$(ratio "$wt" "$warm")" 'v >= 100'
	target "cold checkout / worktree add (<= 1)" "$(ratio "$cold" "$wt")" 'v <= 1'
	target "collect of one file, ms (<= 10)" "$collect" 'v <= 10'
} >>"${BENCH_SUMMARY:-/dev/stdout}"
