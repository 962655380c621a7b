#!/bin/sh
# Attestations through the real daemon: an attempt's in-toto envelopes
# exported, verified offline by factoryctl and by an independent
# implementation (python3-cryptography), refused with the envelope and
# field named for one changed byte of any field, refused for a wrong
# pinned key; kept in the state directory across a restart; written
# beside the local forge's pull record, and not when that record is
# not.

. "$(dirname "$0")/../lib.sh"

D=$(cd "$(dirname "$0")" && pwd)
T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 67304
write_attempt_conf "$T" 67300 67310-67339
start_factoryd "$T/factoryd.conf" "$T/log"
rfp=$(grep -o 'receipt key SHA256:[^ ]*' "$T/log" | head -1 | cut -d' ' -f3)
vfp=$(grep -o 'verifier key SHA256:[^ ]*' "$T/log" | head -1 | cut -d' ' -f3)

write_manifest "$T/ok.yaml" 'echo hi >> README.md' 'grep -q hi README.md'
id=$(submit_wait "$T/ok.yaml") || fail "attempt did not finish"
check "published" [ "$(field $id state)" = published ]
commit=$(field $id commit)
ctl attest $id >"$T/a.jsonl"
check "attest exports three envelopes" [ "$(wc -l <"$T/a.jsonl")" = 3 ]
check "verify -a: OK" sh -c "'$O/factoryctl' verify -a '$T/a.jsonl' | grep -q '^OK: 3 envelopes, provenance by $rfp, verification PASSED by $vfp, commit $commit'"
check "verify -a with both keys pinned" "$O/factoryctl" verify -a -K "$rfp,$vfp" "$T/a.jsonl"
check "verify -a with -K given twice" "$O/factoryctl" verify -a -K "$rfp" -K "$vfp" "$T/a.jsonl"
"$O/factoryctl" verify -a -K "$rfp" "$T/a.jsonl" >"$T/out" 2>&1
check "verify -a without the verifier key pinned fails (exit 1)" [ $? = 1 ]
check "  ... naming envelope 2 and its keyid" grep -q "envelope 2: keyid: $vfp is not a pinned verifier key" "$T/out"
"$O/factoryctl" verify -a -K SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA "$T/a.jsonl" >"$T/out" 2>&1
check "verify -a with a wrong pinned key fails (exit 1)" [ $? = 1 ]
check "  ... naming envelope 1" grep -q "envelope 1: keyid: $rfp is not a pinned builder key" "$T/out"

# Pins name the role (issue 13): the provenance is the builder's, the
# summary and the test result the verifier's.
"$O/factoryctl" verify -a -K "builder=$rfp" -K "verifier=$vfp" "$T/a.jsonl" >"$T/out" 2>"$T/err"
check "verify -a -K builder= -K verifier=: OK (exit $?)" grep -q '^OK: 3 envelopes' "$T/out"
check "  ... no warning" [ ! -s "$T/err" ]
check "verify -a -K builder=,verifier=" "$O/factoryctl" verify -a -K "builder=$rfp,verifier=$vfp" "$T/a.jsonl"
"$O/factoryctl" verify -a -K "builder=$vfp" -K "verifier=$rfp" "$T/a.jsonl" >"$T/out" 2>&1
check "verify -a with the roles pinned the wrong way round fails (exit $?)" [ $? = 1 ]
check "  ... naming envelope 1, not a builder key" grep -q "envelope 1: keyid: $rfp is not a pinned builder key" "$T/out"
"$O/factoryctl" verify -a -K "verifier=$rfp" -K "verifier=$vfp" "$T/a.jsonl" >"$T/out" 2>&1
check "verify -a with the parent's key pinned as a verifier fails (exit $?)" [ $? = 1 ]
"$O/factoryctl" verify -a -K "$rfp,$vfp" "$T/a.jsonl" >/dev/null 2>"$T/err"
check "a pin without a role: either role, OK (exit $?)" [ $? = 0 ]
check "  ... said on stderr" grep -q "2 keys pinned without a role: may sign as builder or verifier" "$T/err"
for bad in "signer=$rfp" "builder=" "builder=${rfp%?}" "Builder=$rfp" "builder=verifier=$rfp" "sha256:${rfp#SHA256:}"; do
	"$O/factoryctl" verify -a -K "$bad" "$T/a.jsonl" >/dev/null 2>"$T/err"
	st=$?
	check "verify -a -K '$bad': a usage error (exit $st)" [ $st = 2 ]
	check "  ... said" grep -q "not \[builder=|verifier=\]SHA256:<fingerprint>" "$T/err"
done
check "verify -a -j" sh -c "'$O/factoryctl' -j verify -a '$T/a.jsonl' | jq -e '.ok and .result == \"PASSED\" and .commit == \"$commit\"'"
check "verify refuses -K without -a" sh -c "! '$O/factoryctl' verify -K '$rfp' '$T/a.jsonl' 2>/dev/null"

# The independent implementation agrees, key by key.
python3 "$D/xcheck.py" "$T/a.jsonl" "$rfp" "$vfp" "$commit" >"$T/x" 2>&1
check "python3-cryptography verifies PAE and signatures" [ $? = 0 ]
check "  ... the provenance by the receipt key" grep -q "envelope 1: https://slsa.dev/provenance/v1 by $rfp: ok" "$T/x"
check "  ... the summary by the verifier key" grep -q "envelope 2: https://slsa.dev/verification_summary/v1 by $vfp: ok" "$T/x"
check "  ... the test result by the verifier key" grep -q "envelope 3: https://in-toto.io/attestation/test-result/v0.1 by $vfp: ok" "$T/x"
check "  ... PASSED" grep -q "result PASSED" "$T/x"
# Swapped keys: the independent check refuses them too (it has teeth).
check "python3 check refuses swapped pins" sh -c "! python3 '$D/xcheck.py' '$T/a.jsonl' '$vfp' '$rfp' '$commit' >/dev/null"

# The statements say what the brief says they say.
payload() { sed -n "${1}p" "$T/a.jsonl" | jq -r .payload | base64 -d; }
payload 1 >"$T/prov.json"
payload 2 >"$T/vsa.json"
payload 3 >"$T/tr.json"
tree=$(git --git-dir="$T/remote.git" -c safe.directory='*' rev-parse "$commit^{tree}")
bsha=$(ctl receipts $id | grep '"kind":"result-ready"' | jq -r .facts.bundle_sha256)
check "subject: commit, tree, bundle" jq -e ".subject == [{\"name\":\"commit\",\"digest\":{\"gitCommit\":\"$commit\"}},{\"name\":\"tree\",\"digest\":{\"gitTree\":\"$tree\"}},{\"name\":\"bundle\",\"digest\":{\"sha256\":\"$bsha\"}}]" "$T/prov.json"
mdig=$(field $id manifest_digest)
check "provenance: externalParameters" jq -e ".predicate.buildDefinition.externalParameters == {\"manifest\":\"$mdig\",\"repository\":\"demo\",\"baseline\":\"$(field $id baseline)\"}" "$T/prov.json"
check "provenance: buildType, invocationId" jq -e ".predicate.buildDefinition.buildType == \"urn:factory:build-type:attempt:v1\" and .predicate.runDetails.metadata.invocationId == \"$id\"" "$T/prov.json"
check "provenance: isolation policy digest, egress grant" jq -e '.predicate.buildDefinition.internalParameters | (.isolationPolicy | test("^sha256:[0-9a-f]{64}$")) and .egress == []' "$T/prov.json"
check "provenance: byproducts name a receipt of the chain" sh -c "h=\$(jq -r '.predicate.runDetails.byproducts[0].digest.sha256' '$T/prov.json'); ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }; ctl receipts $id | grep -q \"\\\"prev\\\":\\\"\$h\\\"\""
check "provenance: builder id and version" jq -e '.predicate.runDetails.builder.id | startswith("urn:factory:factoryd:")' "$T/prov.json"
check "summary: PASSED, the manifest policy, the verifier's key" jq -e ".predicate.verificationResult == \"PASSED\" and .predicate.policy.digest.sha256 == \"${mdig#sha256:}\" and .predicate.verifier.id == \"urn:factory:verifier:$vfp\"" "$T/vsa.json"
check "summary: isolation policy digest as provenance's" sh -c "[ \"\$(jq -r .predicate.policy.annotations.isolationPolicy '$T/vsa.json')\" = \"\$(jq -r .predicate.buildDefinition.internalParameters.isolationPolicy '$T/prov.json')\" ]"
check "test result: PASSED, validate passed" jq -e '.predicate.result == "PASSED" and .predicate.passedTests == ["validate"] and .predicate.failedTests == []' "$T/tr.json"

# One byte of any field of any envelope: refused, the envelope and the
# field named.
flip() {	# envelope field mode expected-text
	python3 "$D/flip.py" "$T/a.jsonl" "$T/f.jsonl" "$1" "$2" "$3"
	"$O/factoryctl" verify -a "$T/f.jsonl" >"$T/out" 2>&1
	st=$?
	check "flip envelope $1 $2 ($3): refused (exit $st)" [ $st = 1 ]
	check "  ... named: envelope $1: $4" grep -Eq "envelope $1: ($4)" "$T/out"
	check "  ... python3 refuses it too" sh -c "! python3 '$D/xcheck.py' '$T/f.jsonl' '$rfp' '$vfp' '$commit' >/dev/null 2>&1"
}
for n in 1 2 3; do
	flip $n payload alpha "sig: bad signature"
	# A bit flip may give another base64 character, or none.
	flip $n payload bit "payload: not base64|sig: bad signature"
	flip $n payloadType alpha "payloadType"
	flip $n payloadType bit "payloadType"
	flip $n sig alpha "sig: bad signature"
	flip $n sig bit "sig: not a base64|sig: bad signature"
	flip $n keyid alpha "keyid"
	flip $n keyid bit "keyid"
	flip $n publicKey alpha "keyid"
done
head -1 "$T/a.jsonl" >"$T/f.jsonl"
check "the provenance alone is refused" sh -c "! '$O/factoryctl' verify -a '$T/f.jsonl' >/dev/null"
sed -n '2,3p' "$T/a.jsonl" >"$T/f.jsonl"
check "the verifier's envelopes alone are refused" sh -c "! '$O/factoryctl' verify -a '$T/f.jsonl' >/dev/null"

# Kept by the parent, root's, beside nothing the attempt could write.
check "kept in the state directory" [ -f "$T/state/attest/$id.intoto.jsonl" ]
check "  ... root's" [ "$(stat -c %u "$T/state/attest/$id.intoto.jsonl")" = 0 ]
check "  ... no temporary left" [ -z "$(ls "$T/state/attest" | grep '\.new$')" ]
check "local forge: the envelopes beside the pull record" cmp -s "$T/a.jsonl" "$T/pulls/$id.intoto.jsonl"

# A failing validation: the summary says FAILED, the file verifies.
write_manifest "$T/val.yaml" 'echo y >> README.md' 'grep -q never-there README.md'
id2=$(submit_wait "$T/val.yaml") || fail "failing attempt did not finish"
check "failing validation: rejected" [ "$(field $id2 state)" = rejected ]
ctl attest $id2 >"$T/b.jsonl"
"$O/factoryctl" verify -a -K "builder=$rfp" -K "verifier=$vfp" "$T/b.jsonl" >"$T/out" 2>&1
st=$?
check "failing validation: verify -a exits 3 for the FAILED summary (exit $st)" [ $st = 3 ]
check "  ... the signatures hold, the summary says FAILED" grep -q "^FAILED: 3 envelopes, provenance by $rfp, verification FAILED by $vfp" "$T/out"
"$O/factoryctl" -j verify -a -K "$rfp,$vfp" "$T/b.jsonl" >"$T/out" 2>/dev/null
st=$?
check "failing validation: verify -a -j (bare pins) exits 3 too (exit $st)" [ $st = 3 ]
check "  ... ok false, result FAILED" jq -e '.ok == false and .result == "FAILED"' "$T/out"
check "failing validation: the test result says FAILED" sh -c "sed -n 3p '$T/b.jsonl' | jq -r .payload | base64 -d | jq -e '.predicate.result == \"FAILED\" and .predicate.failedTests == [\"validate\"]'"
check "failing validation: no pull record, no envelope beside it" [ ! -e "$T/pulls/$id2.intoto.jsonl" ]

# Files an attacker puts together from real envelopes, re-signed with
# the daemon's own keys where the attack needs a good signature
# (issue 13): refused for what they say, the envelope named.
# Without pins given, both with role pins and with bare ones.
forge() {	# mode exit expected-text [pins...]
	m=$1 want=$2 text=$3
	shift 3
	python3 "$D/forge.py" "$T/a.jsonl" "$T/b.jsonl" "$T/keys/receipt.key" \
	    "$T/keys/verifier.key" "$m" "$T/g.jsonl" ||
	    notok "forge.py $m did not write its file"
	if [ $# -gt 0 ]; then
		forged "$m" "$want" "$text" "$@"
	else
		forged "$m" "$want" "$text" -K "builder=$rfp" -K "verifier=$vfp"
		forged "$m" "$want" "$text" -K "$rfp,$vfp"
	fi
}
forged() {	# mode exit expected-text pins...
	m=$1 want=$2 text=$3
	shift 3
	"$O/factoryctl" verify -a "$@" "$T/g.jsonl" >"$T/out" 2>&1
	st=$?
	check "forged ($m, $*): exit $want (exit $st)" [ $st = "$want" ]
	check "  ... $text" grep -Fq "$text" "$T/out"
}
forge resigned 0 "OK: 3 envelopes, provenance by $rfp"
forge swap 1 "envelope 1: keyid: $vfp is not a pinned builder key" -K "builder=$rfp" -K "verifier=$vfp"
forge swap 0 "OK: 3 envelopes, provenance by $vfp, verification PASSED by $rfp" -K "$rfp,$vfp"
forge swap 1 "envelope 2: keyid: $rfp is not a pinned verifier key" -K "builder=$rfp,$vfp"
forge verifier-provenance 1 "envelope 1: keyid: $vfp is not a pinned builder key" -K "builder=$rfp" -K "verifier=$vfp"
forge verifier-provenance 1 "envelope 2: keyid: $vfp signs for the verifier" -K "$rfp,$vfp"
forge parent-summary 1 "envelope 2: keyid: $rfp is not a pinned verifier key" -K "builder=$rfp" -K "verifier=$vfp"
forge parent-test-result 1 "envelope 3: keyid: $rfp is not a pinned verifier key" -K "builder=$rfp" -K "verifier=$vfp"
forge parent-test-result 1 "envelope 3: keyid: $rfp signs for the verifier" -K "$rfp,$vfp"
forge failed-passed 1 "envelope 3: result: PASSED, the verification summary says FAILED"
forge passed-failed 1 "envelope 3: result: FAILED, the verification summary says PASSED"
forge passed-no-test-result 1 "no test result: the verification summary says PASSED"
forge mixed 1 "envelope 3: subject: not the first envelope's"
forge mixed-named 1 "envelope 2: subject: not the first envelope's"
forge no-provenance 1 "no provenance"
forge two-summaries 1 "envelope 3: a second https://slsa.dev/verification_summary/v1"
forge duplicate 1 "envelope 4: a second https://in-toto.io/attestation/test-result/v0.1"
forge duplicate-provenance 1 "envelope 3: a second https://slsa.dev/provenance/v1"
forge payload-type 1 "envelope 1: payloadType: application/json, not application/vnd.in-toto+json"
forge unknown-key 1 "envelope 1: keyid: $rfp is not the publicKey's fingerprint"
forge unknown-signer 1 "envelope 1: sig: bad signature by $rfp"
forge subject 1 "envelope 1: subject: not a commit (gitCommit), a tree (gitTree) and a bundle (sha256)"
# Strict base64 (RFC 4648 section 4): padding required, no whitespace.
forge unpadded-sig 1 "sig: not a base64 Ed25519 signature"
forge unpadded-publicKey 1 "publicKey: not a base64 Ed25519 key"
forge unpadded-payload 1 "payload: not base64 of at most"
forge space-sig 1 "envelope 1: sig: not a base64 Ed25519 signature"
forge space-publicKey 1 "envelope 1: publicKey: not a base64 Ed25519 key"
forge space-payload 1 "envelope 1: payload: not base64 of at most"

# Out of scope: rejected by the worker, never verified, no attestation.
write_manifest "$T/scope.yaml" 'echo x > Makefile'
id3=$(submit_wait "$T/scope.yaml") || fail "scope attempt did not finish"
check "never verified: attest refused" sh -c "! '$O/factoryctl' -s '$SOCK' attest $id3 >/dev/null 2>&1"
check "attest of no attempt refused" sh -c "! '$O/factoryctl' -s '$SOCK' attest a-19700101-0001 >/dev/null 2>&1"

# A verifier that lies with its envelopes, its verdict otherwise one
# the parent takes: refused, nothing published, nothing kept.  It
# needs the result's tree: the agent's change made here too.
git clone -q "$T/src" "$T/tc" && echo liar >>"$T/tc/README.md" &&
    git -C "$T/tc" add README.md || fail "cannot make the liar's tree"
LTREE=$(git -C "$T/tc" write-tree)
write_manifest "$T/liar.yaml" 'echo liar >> README.md'
n=$(remote_branches)
liar() {	# mode expected-text
	d=$T/liar-$1
	mkdir -p "$d"
	for b in "$O"/factory-*; do
		ln -s "$b" "$d/"
	done
	rm "$d/factory-verifier"
	cp "$O/regress/attest/prog_vliar" "$d/factory-verifier"
	echo "$1" >"$d/factory-verifier.mode"
	echo "$LTREE" >"$d/factory-verifier.tree"
	chmod 755 "$d"
	sed -i "s|^libexec: .*|libexec: $d|" "$T/factoryd.conf"
	ctl reload >/dev/null
	wait_children "$SOCK"
	before=$(($(wc -l <"$T/log") + 1))
	lid=$(submit_wait "$T/liar.yaml" 90) || notok "liar $1: did not finish"
	st=$(field "$lid" state)
	check "a verifier lying ($1): not published (is $st)" \
	    sh -c "[ '$st' != published ] && [ '$(remote_branches)' = '$n' ]"
	check "a verifier lying ($1): the verdict is refused: $2" \
	    sh -c "tail -n +$before '$T/log' | grep -F '$lid: verdict refused: $2' >/dev/null"
	check "a verifier lying ($1): no attestations kept" \
	    [ ! -e "$T/state/attest/$lid.intoto.jsonl" ]
	sed -i "s|^libexec: .*|libexec: $O|" "$T/factoryd.conf"
	ctl reload >/dev/null
	wait_children "$SOCK"
}
liar no-attest "accepted without a verification summary and a test result"
liar failed "vsa: verificationResult FAILED, the verdict says accepted"
liar failed-passed "envelope 3: result: PASSED, the verification summary says FAILED"
liar other-prov "envelope 2: inputAttestations: not the provenance"
liar other-key "vsa: keyid: SHA256:"
liar other-subject "envelope 2: subject: not the first envelope"
# Issue 23: an accepted verdict names the baseline tree its verifier
# found the validation's tree to be, in its facts and its summary.
liar no-baseline "accepted without its baseline tree checked"
liar unchecked "accepted without its baseline tree checked"
liar no-vsa-baseline "envelope 2: policy.annotations.baselineTree: a PASSED summary names the baseline tree it checked"

# A local publication that fails after its attestations were checked,
# at its pull number (the lock file holds none): neither they nor a
# record are left beside the pulls, and the next publication has both.
cp "$T/pulls/.lock" "$T/lock.saved"
printf 'x1\n' >"$T/pulls/.lock"
fid=$(submit_wait "$T/ok.yaml") || notok "publication fails: did not finish"
check "publication fails: failed ($(field $fid state): $(field $fid reason))" \
    [ "$(field $fid state)" = failed ]
check "  ... no envelope beside no pull record" \
    sh -c "[ ! -e '$T/pulls/$fid.intoto.jsonl' ] && [ ! -e '$T/pulls/$fid.json' ]"
check "  ... no temporary left" [ -z "$(ls -a "$T/pulls" | grep '\.new$\|\.tmp$')" ]
cat "$T/lock.saved" >"$T/pulls/.lock"
fid=$(submit_wait "$T/ok.yaml") || notok "publication again: did not finish"
check "publication again: published, the envelopes beside the record" \
    sh -c "[ '$(field $fid state)' = published ] && [ -s '$T/pulls/$fid.intoto.jsonl' ] && [ -e '$T/pulls/$fid.json' ]"

# After a restart: the same bytes.
stop_factoryd
start_factoryd "$T/factoryd.conf" "$T/log"
check "restart: the same envelopes" sh -c "'$O/factoryctl' -s '$SOCK' attest $id | cmp -s - '$T/a.jsonl'"

stop_factoryd
regress_done
