#!/usr/bin/env python3
# Writes a copy of an attestation file with one byte of one field of
# one envelope changed, in place, the rest byte for byte the same.
#
# Usage: flip.py IN OUT ENVELOPE FIELD MODE
#   FIELD: payload, payloadType, sig, keyid, publicKey
#   MODE: alpha (another character of the same alphabet: the decoders
#   accept it, the signature must not) or bit (the low bit flipped)
import sys

src, dst, n, field, mode = sys.argv[1:6]
n = int(n)
with open(src, "rb") as f:
    lines = f.read().split(b"\n")
line = lines[n - 1]
key = b'"' + field.encode() + b'":"'
start = line.index(key) + len(key)
end = line.index(b'"', start)
# The middle of the value: away from padding and from "SHA256:".
pos = start + (end - start) // 2
c = line[pos]
if mode == "alpha":
    new = b"B"[0] if c != b"B"[0] else b"C"[0]
else:
    new = c ^ 0x01
line = line[:pos] + bytes([new]) + line[pos + 1:]
lines[n - 1] = line
with open(dst, "wb") as f:
    f.write(b"\n".join(lines))
