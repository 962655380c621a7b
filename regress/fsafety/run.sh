#!/bin/sh
# Root's handling of files that children and agents wrote, through the
# real daemon.  Trees an agent shaped (deeper than any fd limit, names
# of NAME_MAX bytes, locked modes, a FIFO, links to / and outside) are
# torn down to "terminated" with nothing left, and nothing outside is
# touched.  Needs root.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 61804
write_attempt_conf "$T" 61800 63200-63249
start_factoryd "$T/factoryd.conf" "$T/log"

mkdir "$T/outside"
echo keep >"$T/outside/keep"

# An agent's deep trees.  mk N NAME [LINK TARGET]: N nested directories
# entered one by one (a shell's cd would build a path past PATH_MAX),
# a file and maybe a symbolic link at the bottom.
DEEP='set -e
mk() { perl -e '"'"'my ($n, $d, $l, $t) = @ARGV;
    for (1 .. $n) { mkdir $d or die "mkdir: $!"; chdir $d or die "cd: $!" }
    open(my $f, ">", "leaf") or die "leaf: $!"; close($f);
    !defined($l) or symlink($t, $l) or die "symlink: $!";'"'"' "$@"; }
long=n; while [ ${#long} -lt 250 ]; do long=${long}n; done
mk 300 d300 root /
mk 5000 d out OUTSIDE
mk 40 "$long" keep OUTSIDE/keep
mkdir -p locked/sub; echo x >locked/f; chmod 0 locked/f locked/sub locked
touch odd; chmod 4777 odd; mkdir sticky; chmod 1777 sticky; mkfifo fifo
ln -s / root; ln -s OUTSIDE out
echo deep >>README.md'
DEEP=$(printf '%s' "$DEEP" | sed "s|OUTSIDE|$T/outside|g")
write_manifest "$T/deep.yaml" "$DEEP"
id=$(ctl submit "$T/deep.yaml")
check "deep trees: terminated" wait_terminated "$id" 120
check "deep trees: the attempt directory is gone" \
    [ ! -e "$T/state/attempts/$id" ]
check "deep trees: nothing left of it" \
    [ -z "$(find "$T/state/attempts" "$T/state/verify" -mindepth 1)" ]
check "deep trees: the agent made them all" \
    sh -c "! grep -q . '$T/state/logs/$id.log'"
check "deep trees: the symbolic links' target is untouched" \
    [ "$(cat "$T/outside/keep")" = keep ]
check "deep trees: no teardown retry logged" \
    sh -c "! grep -q 'teardown incomplete' '$T/log'"
check "deep trees: factoryd answers" ctl status

regress_done
