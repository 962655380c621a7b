#!/bin/sh
# File names and contents of any bytes, through the real daemon: each
# attempt is either published exactly (every byte of every name in the
# remote, every name shown, escaped, by factoryctl -j show and in the
# receipts) or refused with a reason naming the file, escaped; nothing
# is silently dropped from a finding, a change list or a receipt.  The
# first case is the one that got a secret published: a token in a file
# whose name is not UTF-8.

. "$(dirname "$0")/../lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || fail "bytes: needs python3"
command -v jq >/dev/null || fail "bytes: needs jq"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 64814
write_attempt_conf "$T" 64810 64800-64809
start_factoryd "$T/factoryd.conf" "$T/log"

# The token is put together at run time: never in the agent's output,
# so only the file can be what the verifier finds.
TOKEN='t=ghp_; u=abcdefghijklmnopqrstuvwxyz0123456789'
reason() { ctl -j show "$1" | jq -r .reason; }
# refused NAME ID TEXT: rejected, with TEXT (fixed string) in the reason.
refused() {
	st=$(field "$2" state)
	check "$1: rejected (is $st)" [ "$st" = rejected ]
	r=$(reason "$2")
	check "$1: the reason names it: $r" sh -c 'printf "%s\n" "$1" | grep -qF -- "$2"' sh "$r" "$3"
	check "$1: nothing pushed" [ "$(remote_branches)" = "$n" ]
	check "$1: no pull record" [ ! -e "$T/pulls/$2.json" ]
}

# submit_case MANIFEST [SECONDS]: sets id, and n to the branches pushed before.
submit_case() {
	n=$(remote_branches)
	id=$(submit_wait "$@")
}

# 1. The secret in a file named src/\377.txt: rejected, like the same
# secret in src/ok.txt.
write_manifest "$T/ff.yaml" "$TOKEN"'; f=$(printf "src/\377.txtx"); echo "token=$t$u" >"${f%x}"'
submit_case "$T/ff.yaml" || fail "secret in src/0xff.txt did not finish"
refused "secret in src/0xff.txt" "$id" 'src/\xff.txt: GitHub token'
ctl -j show "$id" >"$T/show.json"
ctl receipts "$id" >"$T/r.txt"
check "secret in src/0xff.txt: the finding is in show -j" \
    jq -e --arg f 'src/\xff.txt: GitHub token on line 1' \
    '.findings | any(.[]; . == $f)' "$T/show.json"
check "secret in src/0xff.txt: the verdict receipt lists it" \
    sh -c "grep '\"kind\":\"verdict\"' '$T/r.txt' | grep -F '\"accepted\":false' | grep -qF 'src/\\\\xff.txt: GitHub token'"
write_manifest "$T/ok.yaml" "$TOKEN"'; echo "token=$t$u" >src/ok.txt'
submit_case "$T/ok.yaml" || fail "secret in src/ok.txt did not finish"
refused "secret in src/ok.txt" "$id" 'src/ok.txt: GitHub token'

# 2. Names of every byte class, in scope: published exactly.
python3 "$HERE/names.py" agent >"$T/names.sh"
write_manifest "$T/names.yaml" "$(cat "$T/names.sh")"
submit_case "$T/names.yaml" 120 || fail "names did not finish"
st=$(field $id state)
check "every byte class: published (is $st: $(reason $id))" [ "$st" = published ]
git --git-dir="$T/remote.git" -c safe.directory='*' ls-tree -r -z --name-only \
    "refs/heads/factory/$id" >"$T/tree.z" 2>/dev/null
ctl -j show "$id" >"$T/show.json"
check "every byte class: the remote holds every name exactly, show lists each, escaped" \
    python3 "$HERE/names.py" check "$T/tree.z" "$T/show.json"
python3 "$HERE/names.py" check "$T/tree.z" "$T/show.json" | sed 's/^/# /'
want=$(python3 "$HERE/names.py" count)
check "every byte class: show counts $want changes" \
    [ "$(jq '.changes | length' "$T/show.json")" = "$want" ]
check "every byte class: show's JSON is printable ASCII" \
    sh -c "! LC_ALL=C grep -q '[^ -~]' '$T/show.json'"
ctl receipts "$id" >"$T/r.txt"
check "every byte class: the result-ready receipt lists src/n_0xffx escaped" \
    sh -c "grep '\"kind\":\"result-ready\"' '$T/r.txt' | grep -qF 'src/n_\\\\xffx'"
check "every byte class: the receipts verify" "$O/factoryctl" verify "$T/r.txt"

# 3. Out of the scope, with such names: rejected, the name escaped.
write_manifest "$T/scope.yaml" 'f=$(printf "\377\001.txtx"); echo x >"${f%x}"; echo y >>README.md'
submit_case "$T/scope.yaml" || fail "scope case did not finish"
refused "out of scope 0xff 0x01 .txt" "$id" '\xff\x01.txt: outside the scope'
write_manifest "$T/scope2.yaml" 'f=$(printf "a\nb\\\\x41x"); echo x >"${f%x}"; echo y >>README.md'
submit_case "$T/scope2.yaml" || fail "scope case 2 did not finish"
refused "out of scope a, newline, b, backslash, x41" "$id" 'a\x0ab\\x41: outside the scope'

# 4. .github/workflows/ with such a name, the scope allowing it.
write_manifest "$T/wf.yaml" 'mkdir -p .github/workflows; f=$(printf ".github/workflows/\377\033[2K.ymlx"); echo x >"${f%x}"' true \
    'scope: ["**"]'
sed -i '/^scope: \["src/d' "$T/wf.yaml"
submit_case "$T/wf.yaml" || fail "workflow case did not finish"
refused "a workflow named 0xff ESC [2K .yml" "$id" '.github/workflows/\xff\x1b[2K.yml: change under .github/workflows/'

# 5. An escaping symlink and a nested .git with such names.
write_manifest "$T/link.yaml" 'f=$(printf "src/\377\300\257x"); ln -s ../../../../etc/passwd "${f%x}"'
submit_case "$T/link.yaml" || fail "symlink case did not finish"
refused "an escaping symlink src/0xff 0xc0 0xaf" "$id" 'src/\xff\xc0\xaf: symlink'
write_manifest "$T/gitlink.yaml" 'f=$(printf "src/\355\240\200x"); mkdir -p "${f%x}/.git"; echo ref: x >"${f%x}/.git/HEAD"'
submit_case "$T/gitlink.yaml" || fail "nested .git case did not finish"
refused "a nested .git under a surrogate src/0xed 0xa0 0x80" "$id" "src/\\xed\\xa0\\x80/.git: '.git' path component"

# 6. The secret in content with invalid UTF-8 around it.
write_manifest "$T/content.yaml" "$TOKEN"'; printf "\377\376token=%s%s\300\n" $t $u >src/bin.txt'
submit_case "$T/content.yaml" || fail "content case did not finish"
refused "a secret between invalid UTF-8 bytes" "$id" 'src/bin.txt'

# 7. More than one message lists: counted, never dropped unsaid.
write_manifest "$T/many.yaml" 'i=0; while [ $i -lt 300 ]; do f=$(printf "src/m\377${i}x"); echo $i >"${f%x}"; i=$((i + 1)); done' true
submit_case "$T/many.yaml" 120 || fail "many changes did not finish"
st=$(field $id state)
check "300 changes: published (is $st)" [ "$st" = published ]
ctl -j show "$id" >"$T/show.json"
check "300 changes: show counts them all, lists some" \
    jq -e '.changes_total == 300 and (.changes | length) > 0 and (.changes | length) < 300' "$T/show.json"
check "300 changes: the remote holds all 300" \
    [ "$(git --git-dir="$T/remote.git" -c safe.directory='*' ls-tree --name-only "refs/heads/factory/$id" src/ | grep -c '^"src/m')" = 300 ]
write_manifest "$T/manyout.yaml" 'i=0; while [ $i -lt 300 ]; do f=$(printf "o\377${i}x"); echo $i >"${f%x}"; i=$((i + 1)); done' true
submit_case "$T/manyout.yaml" 120 || fail "many rejects did not finish"
refused "300 out of scope" "$id" 'more'
check "300 out of scope: the receipt counts 300 rejects" \
    sh -c "'$O/factoryctl' -s '$SOCK' receipts $id | grep '\"kind\":\"rejected\"' | grep -q '\"rejects_total\":300'"

# A verifier that signs, with the real verifier key, a verdict that
# contradicts itself: "accepted" over a finding it counted but did not
# list (the headline defect, played by the verifier), over one it
# listed, without a passed validation, without a count.  The parent
# refuses each and kills the verifier; the attempt never publishes.
liar() {	# mode expected-text
	d=$T/liar-$1
	mkdir -p "$d"
	# Every child binary of the build, the verifier replaced.
	for b in "$O"/factory-*; do
		ln -s "$b" "$d/"
	done
	rm "$d/factory-verifier"
	cp "$O/regress/daemon/prog_badchild" "$d/factory-verifier"
	echo "$1" >"$d/factory-verifier.mode"
	chmod 755 "$d"
	sed -i "s|^libexec: .*|libexec: $d|" "$T/factoryd.conf"
	ctl reload >/dev/null
	wait_children "$SOCK"
	before=$(($(wc -l <"$T/log") + 1))
	write_manifest "$T/liar.yaml" 'echo liar >>README.md'
	submit_case "$T/liar.yaml" 90 || notok "liar $1: did not finish"
	st=$(field "$id" state)
	check "a verifier signing $1: not published (is $st)" \
	    sh -c "[ '$st' != published ] && [ '$(remote_branches)' = '$n' ] && [ ! -e '$T/pulls/$id.json' ]"
	check "a verifier signing $1: the verdict is refused, the verifier killed" \
	    sh -c "tail -n +$before '$T/log' | grep -F '$id: verdict refused: $2' >/dev/null &&
	    tail -n +$before '$T/log' | grep -q 'verifier (pid [0-9]*): malformed message .*VERDICT refused.*killing it'"
	sed -i "s|^libexec: .*|libexec: $O|" "$T/factoryd.conf"
	ctl reload >/dev/null
	wait_children "$SOCK"
}
liar verdict-hidden-finding 'accepted with 1 findings or no passed validation'
liar verdict-listed-finding 'accepted with 1 findings or no passed validation'
liar verdict-unvalidated 'accepted with 0 findings or no passed validation'
liar verdict-no-count 'accepted, findings or nfindings missing or mistyped'
# It signs one verdict and types another (the parent reads only the
# typed fields): the line the fields make is not the signed line.
liar verdict-typed-differ 'not the line its typed facts make'

# The daemon's log carries no raw byte of any name.
check "the daemon log has no byte of a name unescaped" \
    sh -c "! LC_ALL=C grep -q \"\$(printf '[\\200-\\377\\001-\\010\\013-\\037]')\" '$T/log'"

stop_factoryd
regress_done
