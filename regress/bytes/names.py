#!/usr/bin/env python3
# File names of every byte class, for regress/bytes/run.sh: the agent
# script that makes them, and the check of what was published and what
# factoryctl shows.  The decoder here is written apart from
# libcommon/esc.c on purpose: it is the reference the daemon is held
# to (printable ASCII but the backslash as itself, "\\" for the
# backslash, "\xNN" with lower-case hex for every other byte).
import json
import sys


def names():
    """Every name made, as bytes, relative to the tree."""
    out = []
    for b in list(range(0x01, 0x20)) + [0x7f] + list(range(0x80, 0x100)):
        if b == 0x2f:
            continue
        out.append(b"src/n_" + bytes([b]) + b"x")
    out += [
        b"src/overlong_\xc0\xafx",        # '/' as overlong UTF-8
        b"src/surrogate_\xed\xa0\x80x",   # a lone UTF-16 surrogate
        b"src/back\\slash",
        b"src/\\x41",                     # text that looks like an escape
        b"src/\\\\x41",
        b"src/quote\"d",
        b"src/single'q",
        b"src/new\nline",
        b"src/crlf\r\n\x1b[2Kz",
        b"src/utf8_caf\xc3\xa9",           # valid UTF-8 is escaped too
        b"src/" + b"n_" + b"\xff" * 252 + b"x",   # a 255-byte name
        b"src/\xff/" + b"\xfe" * 10,     # a directory of such a name
    ]
    return out


def octal(b):
    return "".join("\\%03o" % c for c in b)


def agent():
    lines = ["set -e"]
    for i, n in enumerate(names()):
        d = n.rsplit(b"/", 1)[0]
        if d != b"src":
            lines.append("d=$(printf '%sx'); mkdir -p \"${d%%x}\"" %
                         octal(d))
        lines.append("f=$(printf '%sx'); echo %d >\"${f%%x}\"" %
                     (octal(n), i))
    return "\n".join(lines) + "\n"


def esc_decode(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            if s[i + 1:i + 2] == "\\":
                out.append(0x5c)
                i += 2
                continue
            h = s[i + 2:i + 4]
            if s[i + 1:i + 2] != "x" or len(h) != 2 or \
                    h.lower() != h or any(x not in "0123456789abcdef"
                                          for x in h):
                raise ValueError("bad escape at %d in %r" % (i, s))
            v = int(h, 16)
            if 0x20 <= v <= 0x7e and v != 0x5c:
                raise ValueError("needless escape at %d in %r" % (i, s))
            out.append(v)
            i += 4
            continue
        if not (0x20 <= ord(c) <= 0x7e):
            raise ValueError("raw byte %r in %r" % (c, s))
        out.append(ord(c))
        i += 1
    return bytes(out)


def check(treefile, showfile):
    want = set(names())
    with open(treefile, "rb") as f:
        tree = set(p for p in f.read().split(b"\0") if p.startswith(b"src/"))
    tree.discard(b"src/a.c")
    bad = 0
    if tree != want:
        print("tree: missing %r, extra %r" % (sorted(want - tree)[:5],
                                              sorted(tree - want)[:5]))
        bad = 1
    with open(showfile) as f:
        o = json.load(f)
    got = set()
    for ch in o.get("changes", []):
        try:
            got.add(esc_decode(ch["path"]))
        except ValueError as e:
            print("show: %s" % e)
            bad = 1
    if got != want:
        print("show: missing %r, extra %r" % (sorted(want - got)[:5],
                                              sorted(got - want)[:5]))
        bad = 1
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "agent":
        sys.stdout.write(agent())
    elif sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    elif sys.argv[1] == "count":
        print(len(names()))
    elif sys.argv[1] == "decode":
        sys.stdout.buffer.write(esc_decode(sys.argv[2]))
