#!/bin/sh
# What the seal takes from the worker's cold checkout (issue 23, review
# findings F1 and F2).  Run by run.sh; needs a test build: the
# compromised worker is its fault points.
#
# F2: no index from a worker reaches another attempt.  Before, the
# worker wrote COMMIT.index with the checkout and every later attempt's
# .git/index was a copy of it: README.md's entry naming src/a.c's blob
# made an honest attempt's "git checkout -- README.md" publish a.c.
#
# F1: a sparse file in the checkout, or one whose files together hold
# more bytes than pristine-cache, is refused by stat alone, before root
# copies a byte of it.  Before, a worker that ftruncate()d a file
# to 4 GiB had factoryd copy 4 GiB in its event loop, factoryctl status
# waiting on it.

. "$(dirname "$0")/../lib.sh"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 61504
write_attempt_conf "$T" 61500 62400-62429
base=$(git -C "$T/src" rev-parse HEAD)
P=$T/state/pristine/demo/$base

write_manifest "$T/m1.yaml" 'echo more >> README.md' 'true'
write_manifest "$T/m2.yaml" 'echo edit >> README.md; git checkout -- README.md; echo more >> README.md' 'true'

has() {	# text pattern
	printf '%s\n' "$1" | grep -q "$2"
}

published() {	# id
	git --git-dir="$T/remote.git" -c safe.directory='*' \
	    show "factory/$1:README.md" 2>&1
}

# F2, 1. The worker leaves a poisoned index as the checkout's .git.
FACTORY_CRASH=worker:poison-index start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/m1.yaml") || fail "attempt did not end"
echo "# poisoned index, attempt $id: $(field $id state): $(field $id reason)"
check "  ... the worker left it" grep -q "poison-index: README.md is a.c" "$T/log"
check "  ... the cache keeps no index" [ ! -e "$P.index" ]
stop_factoryd

# F2, 2. An honest attempt after it: its index is made for it.
start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/m2.yaml") || fail "attempt did not end"
pub=$(published $id)
echo "# honest attempt $id: $(field $id state); README.md: $(echo $pub)"
check "an honest attempt's result holds no byte the worker chose" \
    [ "$pub" = "$(printf 'hello\nmore')" ]

# F2, 3. A COMMIT.index an older version left (poisoned) is never read.
[ -d "$P" ] || fail "no pristine tree at $P"
GIT_INDEX_FILE=$T/poison.index git -C "$T/src" read-tree HEAD &&
    GIT_INDEX_FILE=$T/poison.index git -C "$T/src" update-index \
    --cacheinfo "100644,$(git -C "$T/src" rev-parse HEAD:src/a.c),README.md" ||
    fail "cannot make a poisoned index"
cp "$T/poison.index" "$P.index"
id=$(submit_wait "$T/m2.yaml") || fail "attempt did not end"
pub=$(published $id)
echo "# leftover COMMIT.index, attempt $id: $(field $id state); README.md: $(echo $pub)"
check "a leftover COMMIT.index is never read" \
    [ "$pub" = "$(printf 'hello\nmore')" ]
check "  ... and is removed" [ ! -e "$P.index" ]
stop_factoryd

# F1. A sparse file of 4 GiB: refused before anything is copied, and
# factoryctl status answers meanwhile.  The bound is generous (2 s):
# the copy it stood for took tens of seconds.
rm -rf "$P" "$P.size" "$P.checked"
FACTORY_CRASH=worker:sparse-pristine start_factoryd "$T/factoryd.conf" "$T/log"
id=$(ctl submit "$T/m1.yaml") || fail "cannot submit"
max=0
n=0
while :; do
	s=$(date +%s%N)
	timeout 300 "$O/factoryctl" -s "$SOCK" status >/dev/null 2>&1
	e=$(( ($(date +%s%N) - s) / 1000000 ))
	[ $e -gt $max ] && max=$e
	n=$((n + 1))
	case $(field $id state) in
	failed|rejected|published|verified|terminated|cancelled) break;;
	esac
	[ $n -gt 600 ] && break
	sleep 0.1
done
wait_terminated $id 120 || fail "$id did not end"
st=$(field $id state)
reason=$(field $id reason)
echo "# sparse file, attempt $id: $st: $reason"
echo "# factoryctl status: $n polls, slowest $max ms"
check "factoryctl status never took 2 s or more (slowest $max ms)" \
    [ $max -lt 2000 ]
check "  ... the attempt failed ($st)" [ "$st" = failed ]
check "  ... saying the file is sparse" \
    has "$reason" "zz-sparse: a sparse file (4294967296 bytes"
grep "$id: pristine demo/$base: " "$T/log" | sed 's/^/# log: /'
check "  ... root copied none of it: no pristine tree sealed" \
    sh -c "! grep -q '$id: pristine demo/$base: ' '$T/log'"
check "  ... no pristine tree made" [ ! -e "$P" ]
stop_factoryd

# F3. A directory of the worker's made in one of its directories just
# after the seal gave that one to root (a fault point of the seal plants
# it, as a worker holding a descriptor of it could while its mode still
# let it write there): no entry of the cached tree is the worker's.
# Before, the seal gave the whole tree to root, then set modes in a
# second pass that checked no owner: the planted directory stayed the
# worker's, in the cache.
rm -rf "$P" "$P.index" "$P.size"
FACTORY_CRASH=pristine:plant-dir start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/m1.yaml") || fail "attempt did not end"
echo "# planted directory, attempt $id: $(field $id state): $(field $id reason)"
check "planted directory: the seal planted one" \
    grep -q "plant-dir: a directory of uid 61501 planted" "$T/log"
i=0
while ! grep -q "plant-dir: after the seal" "$T/log" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep "plant-dir: after the seal" "$T/log" | sed 's/^/# log: /'
check "  ... the seal gave it to root like every other entry" \
    grep -q "plant-dir: after the seal, uid 0's" "$T/log"
stop_factoryd

# F1, bound. A tree whose files hold more bytes than pristine-cache (36
# here, over 16) is refused by the same first look: nothing copied.
sed -i '/^state-dir:/a pristine-cache: 16' "$T/factoryd.conf"
start_factoryd "$T/factoryd.conf" "$T/log"
id=$(submit_wait "$T/m1.yaml") || fail "attempt did not end"
st=$(field $id state)
reason=$(field $id reason)
echo "# tree over pristine-cache, attempt $id: $st: $reason"
check "a tree over pristine-cache is refused ($st)" [ "$st" = failed ]
check "  ... saying so" has "$reason" "larger than pristine-cache (16 bytes)"
check "  ... root copied none of it" \
    sh -c "! grep -q '$id: pristine demo/$base: ' '$T/log'"
stop_factoryd

regress_done
