# Adoption (factory-fleet(8)): a publication whose host was lost after
# its push is finished by another host's publisher, from the same
# request and without a bundle (prog_ghpub's "_adopt").  The branch
# must be on the forge at the request's commit already, as GitHub's
# "Get a reference" says it
# (docs.github.com/en/rest/git/refs#get-a-reference); nothing is
# pushed; the check run and the pull request are made as in any.
npushes() {
	state | jq '[.requests[] | select(.server == "git" and
	    (.path | endswith("git-receive-pack")))] | length'
}
adopt() {	# ID: publish it as an adoption
	"$PROG" "$T/keys/verifier.pem" "$T/$1.json" - \
	    > "$T/state/out/$1.adopt" 2>> "$T/state/logs/$1.adopt.log"
	RC=$?
	OUT=$(cat "$T/state/out/$1.adopt")
}

# The lost host's push is there: one pull request, nothing pushed.
ID=a-20261206-0a01
mkbundle $ID && message $ID "" ',"_adopt":true'
git -C "$T/work" push -q "$BARE" "factory/$ID:refs/heads/factory/$ID"
PUSHES=$(npushes)
LIVE=$(nlive)
adopt $ID
if [ $RC -ne 0 ]; then
	nok adopt-pushed "exit $RC: $OUT"
elif [ "$(jget "$OUT" .branch)" != "factory/$ID" ] ||
    [ "$(jget "$OUT" .reused)" != false ]; then
	nok adopt-pushed "unexpected result $OUT"
elif [ "$(npulls $ID)" != 1 ] || [ "$(forge_branch $ID)" != "$COMMIT" ]; then
	nok adopt-pushed "$(npulls $ID) pull requests, branch at $(forge_branch $ID)"
elif [ "$(npushes)" != "$PUSHES" ] || [ "$(nlive)" != "$LIVE" ]; then
	nok adopt-pushed "pushed ($(npushes) after $PUSHES) or a live token"
else
	ok adopt-pushed
fi
# Adopted again (the first adopter lost in turn): the same pull request.
NUM=$(jget "$OUT" .number)
adopt $ID
if [ $RC -ne 0 ] || [ "$(jget "$OUT" .reused)" != true ] ||
    [ "$(jget "$OUT" .number)" != "$NUM" ] || [ "$(npulls $ID)" != 1 ]; then
	nok adopt-again "exit $RC: $OUT, $(npulls $ID) pull requests"
else
	ok adopt-again
fi

# Lost before its push: refused, nothing made.
ID=a-20261206-0a02
mkbundle $ID && message $ID "" ',"_adopt":true'
LIVE=$(nlive)
adopt $ID
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q \
    "branch factory/$ID is not on the forge"; then
	nok adopt-never-pushed "exit $RC: $OUT"
elif [ "$(npulls $ID)" != 0 ] || forge_branch $ID >/dev/null ||
    [ "$(nlive)" != "$LIVE" ]; then
	nok adopt-never-pushed "a pull request, a branch or a live token"
else
	ok adopt-never-pushed
fi

# The branch holds another commit: refused, never moved.
ID=a-20261206-0a03
mkbundle $ID && message $ID "" ',"_adopt":true'
git -C "$T/work" push -q "$BARE" "main:refs/heads/factory/$ID"
MAIN=$(git -C "$T/work" rev-parse main)
adopt $ID
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q \
    "branch factory/$ID on the forge holds $MAIN"; then
	nok adopt-other-commit "exit $RC: $OUT"
elif [ "$(forge_branch $ID)" != "$MAIN" ] || [ "$(npulls $ID)" != 0 ]; then
	nok adopt-other-commit "the branch moved or a pull request"
else
	ok adopt-other-commit
fi

# A pin whose request names another manifest than the verdict's (a
# database that rewrote its base or title): refused before the forge
# is asked anything, though the branch is there (the requests counted
# are the two state queries').
ID=a-20261206-0a04
mkbundle $ID && message $ID "" ',"_adopt":true,"_verdict_digest":"sha256:'"$(printf '%064d' 0)"'"'
git -C "$T/work" push -q "$BARE" "factory/$ID:refs/heads/factory/$ID"
REQS=$(state | jq '.requests | length')
adopt $ID
if [ $RC -ne 1 ] || ! printf '%s' "$OUT" | grep -q \
    "verdict: of manifest sha256:0\{64\}, not of the request's sha256:$MDIGEST"; then
	nok adopt-other-manifest "exit $RC: $OUT"
elif [ "$(npulls $ID)" != 0 ] ||
    [ "$(state | jq '.requests | length')" != $((REQS + 2)) ]; then
	nok adopt-other-manifest "a pull request, or the forge was asked"
else
	ok adopt-other-manifest
fi
