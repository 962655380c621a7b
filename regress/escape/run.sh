#!/bin/sh
# Bytes a terminal acts on never reach the operator raw, through the
# real daemon: an agent makes files whose names move the cursor, erase
# lines, retitle the terminal or reverse the text, and writes the same
# bytes to its log; factoryctl's human output (show, list, logs, the
# daemon's refusals, verify) and the daemon's log lines hold no byte
# below 0x20 but the newlines and tabs that separate fields, no DEL and
# no ESC, and -j keeps the exact values.

. "$(dirname "$0")/../lib.sh"

command -v python3 >/dev/null || fail "escape: needs python3"
command -v jq >/dev/null || fail "escape: needs jq"

T=$(regress_tmpdir)
SOCK=$T/factoryd.sock
make_repos "$T" 64924
write_attempt_conf "$T" 64920 64900-64909
start_factoryd "$T/factoryd.conf" "$T/log"

# inert FILE [SEPARATORS]: no byte < 0x20 (but \n, and \t if asked),
# no 0x7f, no C1 control as UTF-8 (U+0080-U+009F), no bidi override.
inert() {
	python3 - "$1" "${2:-}" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
ok = set(b"\n") | (set(b"\t") if sys.argv[2] == "tab" else set())
bad = [c for c in b if (c < 0x20 and c not in ok) or c == 0x7f]
t = b.decode("utf-8", "replace")
bad += [ord(c) for c in t if 0x80 <= ord(c) <= 0x9f or
        0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
if bad:
    print("raw:", " ".join("%02x" % c for c in sorted(set(bad))))
    sys.exit(1)
PY
}

# unseen FILE: no format character (Unicode's Cf: zero width space and
# joiners, bidi controls, soft hyphen, BOM, tags) raw in FILE.
unseen() {
	python3 - "$1" <<'PY'
import sys, unicodedata
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
bad = sorted(set("U+%04X" % ord(c) for c in t
    if unicodedata.category(c) == "Cf" or 0xe0000 <= ord(c) <= 0xe007f))
if bad:
    print("raw:", " ".join(bad))
    sys.exit(1)
PY
}

# The file name of the issue, one that retitles the terminal, one that
# reverses the text that follows, one with a C1 CSI, one with DEL; and
# a log of the same bytes.
AGENT='
n1=$(printf "src/zz\r\033[1A\033[2K\tM README.md")
n2=$(printf "src/\033]0;retitled\007.c")
n3=$(printf "src/bidi\342\200\256txt.exe")
n4=$(printf "src/c1\302\23331m.c")
n5=$(printf "src/del\177.c")
n6=$(printf "src/zw\342\200\213sp\342\200\215j\357\273\277bom\302\255shy\363\240\200\201tag.c")
for n in "$n1" "$n2" "$n3" "$n4" "$n5" "$n6"; do echo x >"$n"; done
printf "unseen: a\342\200\213b \342\201\246iso\342\201\251 \330\234 \341\240\216 \363\240\201\277 end\n"
printf "agent: \033[2J\033]0;retitled\007 \r\033[1Aover\010\177 \302\233 31m \342\200\256 reversed\n"
printf "tab\there\n"'
write_manifest "$T/hostile.yaml" "$AGENT"
id=$(submit_wait "$T/hostile.yaml" 60) || fail "the hostile attempt did not finish"

ctl show "$id" >"$T/show.txt" 2>&1
check "show: the attempt has its changes" grep -q 'README.md' "$T/show.txt"
check "show: no raw control byte (tabs separate its fields)" \
    inert "$T/show.txt" tab
check "show: the issue's name, escaped" \
    grep -qF 'src/zz\x0d\x1b[1A\x1b[2K\x09M README.md' "$T/show.txt"
check "show: the retitling name, escaped" \
    grep -qF 'src/\x1b]0;retitled\x07.c' "$T/show.txt"
# A title of the submitter's with a C1 CSI and a bidi override: valid
# UTF-8 the manifest takes, that a terminal would act on.
write_manifest "$T/title.yaml" "true" "true" 'title: "c1 \u009B31m red, bidi \u202Etxt.exe"'
sed -i '/^title: "regress"$/d' "$T/title.yaml"
tid=$(submit_wait "$T/title.yaml" 60) || fail "the titled attempt did not finish"
ctl show "$tid" >"$T/title.txt" 2>&1
check "show: the title is there" grep -q 'red, bidi' "$T/title.txt"
check "show: no C1 or bidi control in the title" inert "$T/title.txt" tab
check "show -j: the exact title" sh -c "ctl() { '$O/factoryctl' -s '$SOCK' \"\$@\"; }
    ctl -j show '$tid' | jq -r .title | grep -q \"\$(printf 'c1 \302\23331m')\""
# The receipts: exact into a file (verify needs every byte), in display
# form on a terminal; the same text while it holds nothing to escape.
ctl receipts "$id" >"$T/hr.txt"
echo "wait" | python3 "$(dirname "$0")/../shell/ptyrun.py" "$T/hrtty.raw" 24 80 \
    "$O/factoryctl" -s "$SOCK" receipts "$id" >/dev/null 2>&1
tr -d '\r' <"$T/hrtty.raw" >"$T/hrtty.txt"
check "receipts on a terminal: no raw control byte" inert "$T/hrtty.txt"
check "receipts on a terminal: the export, as text" cmp -s "$T/hr.txt" \
    "$T/hrtty.txt"
ctl list >"$T/list.txt" 2>&1
check "list: no raw control byte" inert "$T/list.txt"
ctl logs "$id" >"$T/logs.txt" 2>&1
check "logs: the agent's line is there" grep -q 'reversed' "$T/logs.txt"
check "logs: no raw control byte" inert "$T/logs.txt" tab
check "show: no format character raw (zero width, BOM, tags)" \
    unseen "$T/show.txt"
# A path is in the suite's encoding from the worker on: byte by byte.
check "show: the zero width name, escaped" grep -qF \
    'src/zw\xe2\x80\x8bsp\xe2\x80\x8dj\xef\xbb\xbfbom\xc2\xadshy\xf3\xa0\x80\x81tag.c' \
    "$T/show.txt"
check "logs: no format character raw" unseen "$T/logs.txt"
check "logs: the invisibles shown" grep -qF \
    'unseen: a\u{200B}b \u{2066}iso\u{2069} \u{061C} \u{180E} \u{E007F} end' \
    "$T/logs.txt"
check "logs: the tab that is text stays a tab" grep -q "$(printf 'tab\there')" \
    "$T/logs.txt"

# -j: the exact values, in JSON escapes (the suite's encoding of bytes,
# libcommon/esc.h, within them).
ctl -j show "$id" >"$T/show.json"
check "show -j: the issue's name round-trips" jq -e --arg p \
    'src/zz\x0d\x1b[1A\x1b[2K\x09M README.md' \
    '.changes | any(.[]; .path == $p)' "$T/show.json"
check "show -j: no raw control byte in the JSON either" inert "$T/show.json"
ctl -j logs "$id" >"$T/logs.json"
check "logs -j: JSON" jq -e .data "$T/logs.json"
check "logs -j: the data as the daemon sent it" sh -c "jq -r .data \
    '$T/logs.json' | grep -q reversed"
# Exact: the agent's bytes, every one (none turned into '?'), in the
# suite's encoding; decoded, they are the log's own bytes.
check "logs -j: the agent's bytes exact, escaped" sh -c "jq -r .data \
    '$T/logs.json' | grep -qF 'agent: \\x1b[2J\\x1b]0;retitled\\x07 \\x0d\\x1b[1Aover\\x08\\x7f \\xc2\\x9b 31m \\xe2\\x80\\xae reversed\\x0a'"
check "logs: a C1 CSI shown, not dropped" grep -qF 'u{009B}' "$T/logs.txt"

# The daemon's refusals carry what the client sent, and its log lines
# what children and agents wrote.
ctl show "$(printf 'a-\033[2J\033]0;x\007')" >"$T/err.txt" 2>&1
check "an error of the daemon's: no raw control byte" inert "$T/err.txt"
check "an error of the daemon's: escaped" grep -qF '\x1b[2J' "$T/err.txt"
ctl cancel "$(printf 'a-\r\033[1A')" >>"$T/err.txt" 2>&1
check "another: no raw control byte" inert "$T/err.txt"

# A baseline that names nothing, with a C1 CSI and a bidi override
# (the manifest refuses C0 controls there): the refusal names it, in
# show and in the daemon's log.
write_manifest "$T/base.yaml" "true"
sed -i 's/^baseline: main$/baseline: "no\\u009B2J\\u202Esuch"/' "$T/base.yaml"
bid=$(ctl submit "$T/base.yaml" 2>"$T/base.err")
[ -n "$bid" ] && wait_terminated "$bid" 30
ctl show "$bid" >>"$T/base.err" 2>&1
check "a bad baseline: refused naming it" grep -q 'such' "$T/base.err"
check "a bad baseline: no raw control byte" inert "$T/base.err" tab

# An operator's shell command of any bytes: refused, in factoryctl's
# message and the daemon's log.
write_manifest "$T/sleep.yaml" "exec /bin/sleep 60"
sid=$(ctl submit "$T/sleep.yaml")
i=0
while [ "$(field "$sid" state)" != running ] && [ $i -lt 200 ]; do
	sleep 0.1; i=$((i + 1))
done
ctl shell "$sid" -- "$(printf '/bin/\033[2J\033]0;x\007nope')" </dev/null \
    >"$T/shell.txt" 2>&1
check "shell: refused naming the command" grep -q 'nope' "$T/shell.txt"
check "shell: no raw control byte in the refusal" inert "$T/shell.txt"
ctl cancel "$sid" >/dev/null 2>&1
wait_terminated "$sid" 30

# verify: messages about a file of any bytes.
ctl receipts "$id" >"$T/r.txt"
check "receipts to a file: verifiable as they are" \
    sh -c "'$O/factoryctl' verify '$T/r.txt' | grep -q '^OK'"
printf '{"kind":"\033[2J\033]0;x\007", "seq": 1}\n' >"$T/bad.txt"
"$O/factoryctl" verify "$T/bad.txt" >"$T/verify.txt" 2>&1
"$O/factoryctl" verify "$(printf '%s/\033]0;x\007' "$T")" >>"$T/verify.txt" 2>&1
check "verify: no raw control byte in its messages" inert "$T/verify.txt"

# Every line of the daemon's log, the bytes above included.
stop_factoryd
check "the daemon's log: no raw control byte" inert "$T/log"
regress_done
