#!/usr/bin/env python3
# Writes an attestation file an attacker could put together from real
# envelopes, re-signed with the daemon's own keys where the attack
# needs a good signature: the verifier must refuse it for what it
# says, not for a bad signature.
#
# Usage: forge.py PASSED-FILE FAILED-FILE RECEIPT-KEY VERIFIER-KEY MODE OUT
#   PASSED-FILE, FAILED-FILE: factoryctl attest of a passing and of a
#   failing attempt (three envelopes each); the keys: PKCS#8 PEM.
import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey)
from cryptography.hazmat.primitives.serialization import (
    Encoding, PublicFormat, load_pem_private_key)

PTYPE = "application/vnd.in-toto+json"


def pae(ptype, body):
    t = ptype.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def raw_pub(key):
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def fingerprint(raw):
    d = base64.b64encode(hashlib.sha256(raw).digest()).decode()
    return "SHA256:" + d.rstrip("=")


def b64(b):
    return base64.b64encode(b).decode()


def envelope(body, key, ptype=PTYPE, shown=None, keyid=None):
    """One line: body signed by key, showing shown's key under keyid."""
    pub = raw_pub(shown if shown is not None else key)
    e = {"payload": b64(body), "payloadType": ptype,
         "signatures": [{"keyid": keyid or fingerprint(pub),
                         "publicKey": b64(pub),
                         "sig": b64(key.sign(pae(ptype, body)))}]}
    return json.dumps(e, separators=(",", ":"), sort_keys=True)


def body_of(line):
    return base64.b64decode(json.loads(line)["payload"], validate=True)


def statement(line):
    return json.loads(body_of(line))


def dumps(st):
    return json.dumps(st, separators=(",", ":"), sort_keys=True).encode()


def digest(body):
    return hashlib.sha256(body).hexdigest()


def main():
    pfile, ffile, rpath, vpath, mode, out = sys.argv[1:7]
    with open(pfile) as f:
        a = f.read().split("\n")[:-1]
    with open(ffile) as f:
        b = f.read().split("\n")[:-1]
    with open(rpath, "rb") as f:
        rk = load_pem_private_key(f.read(), None)
    with open(vpath, "rb") as f:
        vk = load_pem_private_key(f.read(), None)
    ap, av, at = body_of(a[0]), body_of(a[1]), body_of(a[2])

    def vsa_of(line, result=None, prov=None):
        st = statement(line)
        if result is not None:
            st["predicate"]["verificationResult"] = result
        if prov is not None:
            st["predicate"]["inputAttestations"][0]["digest"][
                "sha256"] = digest(prov)
        return dumps(st)

    if mode == "swap":		# the roles swapped, every signature good
        lines = [envelope(ap, vk), envelope(av, rk), envelope(at, rk)]
    elif mode == "verifier-provenance":	# the verifier's key signs all
        lines = [envelope(ap, vk), envelope(av, vk), envelope(at, vk)]
    elif mode == "parent-summary":	# the parent's key signs all
        lines = [envelope(ap, rk), envelope(av, rk), envelope(at, rk)]
    elif mode == "parent-test-result":
        lines = [a[0], a[1], envelope(at, rk)]
    elif mode == "failed-passed":	# a FAILED summary, a PASSED result
        lines = [a[0], envelope(vsa_of(a[1], "FAILED"), vk), a[2]]
    elif mode == "passed-failed":	# the failing attempt made PASSED
        lines = [b[0], envelope(vsa_of(b[1], "PASSED"), vk), b[2]]
    elif mode == "passed-no-test-result":
        lines = [a[0], a[1]]
    elif mode == "mixed":		# the other attempt's test result
        lines = [a[0], a[1], b[2]]
    elif mode == "mixed-named":	# its summary made to name ours
        lines = [a[0], envelope(vsa_of(b[1], "PASSED", ap), vk),
                 b[2]]
    elif mode == "no-provenance":
        lines = [a[1], a[2]]
    elif mode == "two-summaries":
        lines = [a[0], a[1], envelope(vsa_of(a[1], "FAILED"), vk), a[2]]
    elif mode == "duplicate":
        lines = [a[0], a[1], a[2], a[2]]
    elif mode == "duplicate-provenance":
        lines = [a[0], a[1], a[0], a[2]]
    elif mode == "payload-type":	# signed, over another payloadType
        lines = [envelope(ap, rk, ptype="application/json"), a[1], a[2]]
    elif mode == "unknown-key":	# its own key under our keyid
        xk = Ed25519PrivateKey.generate()
        lines = [envelope(ap, xk, keyid=fingerprint(raw_pub(rk))),
                 a[1], a[2]]
    elif mode == "unknown-signer":	# our key shown, another signing
        xk = Ed25519PrivateKey.generate()
        lines = [envelope(ap, xk, shown=rk), a[1], a[2]]
    elif mode == "subject":		# the commit alone, signed by both
        sts = [statement(x) for x in a]
        for st in sts:
            st["subject"] = st["subject"][:1]
        p = dumps(sts[0])
        sts[1]["predicate"]["inputAttestations"][0]["digest"][
            "sha256"] = digest(p)
        lines = [envelope(p, rk), envelope(dumps(sts[1]), vk),
                 envelope(dumps(sts[2]), vk)]
    elif mode.startswith("unpadded-"):	# base64 without its padding
        field = mode[len("unpadded-"):]
        lines = list(a)
        for i, x in enumerate(lines):
            e = json.loads(x)
            obj = e if field == "payload" else e["signatures"][0]
            if obj[field].endswith("="):
                obj[field] = obj[field].rstrip("=")
                lines[i] = json.dumps(e, separators=(",", ":"),
                                      sort_keys=True)
                break
        else:
            sys.exit("forge.py: no padded %s in the file" % field)
    elif mode.startswith("space-"):	# a whitespace in the base64
        field = mode[len("space-"):]
        e = json.loads(a[0])
        obj = e if field == "payload" else e["signatures"][0]
        v = obj[field]
        obj[field] = v[:8] + "\r\n" + v[8:]
        lines = [json.dumps(e, separators=(",", ":"), sort_keys=True),
                 a[1], a[2]]
    elif mode == "resigned":	# the helper has teeth: a good file
        lines = [envelope(ap, rk), envelope(av, vk), envelope(at, vk)]
    else:
        sys.exit("forge.py: unknown mode " + mode)
    with open(out, "w") as f:
        f.write("".join(x + "\n" for x in lines))


main()
