#!/usr/bin/env python3
# An independent check of an attestation file (factoryctl attest): the
# DSSE pre-authentication encoding written out again from the spec,
# each Ed25519 signature verified with python3-cryptography, each keyid
# recomputed from its key, the statements read as in-toto says.
#
# Usage: xcheck.py FILE RECEIPT-FP VERIFIER-FP COMMIT
# Prints one line per envelope; exits 1 on the first disagreement.
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PTYPE = "application/vnd.in-toto+json"


def pae(ptype, body):
    t = ptype.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def fingerprint(raw):
    d = base64.b64encode(hashlib.sha256(raw).digest()).decode()
    return "SHA256:" + d.rstrip("=")


def die(msg):
    print("xcheck: " + msg)
    sys.exit(1)


def main():
    path, rfp, vfp, commit = sys.argv[1:5]
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines[-1] != b"":
        die("no final newline")
    envs = [json.loads(x) for x in lines[:-1]]
    stmts = []
    for i, e in enumerate(envs, 1):
        if e["payloadType"] != PTYPE:
            die("envelope %d: payloadType" % i)
        if len(e["signatures"]) != 1:
            die("envelope %d: signatures" % i)
        s = e["signatures"][0]
        raw = base64.b64decode(s["publicKey"], validate=True)
        if fingerprint(raw) != s["keyid"]:
            die("envelope %d: keyid" % i)
        want = rfp if i == 1 else vfp
        if s["keyid"] != want:
            die("envelope %d: signed by %s, not %s" % (i, s["keyid"], want))
        body = base64.b64decode(e["payload"], validate=True)
        try:
            Ed25519PublicKey.from_public_bytes(raw).verify(
                base64.b64decode(s["sig"], validate=True), pae(PTYPE, body))
        except InvalidSignature:
            die("envelope %d: signature" % i)
        st = json.loads(body)
        if st["_type"] != "https://in-toto.io/Statement/v1":
            die("envelope %d: _type" % i)
        got = [x["digest"].get("gitCommit") for x in st["subject"]]
        if commit not in got:
            die("envelope %d: subject lacks commit %s" % (i, commit))
        stmts.append((st, hashlib.sha256(body).hexdigest()))
        print("envelope %d: %s by %s: ok" % (i, st["predicateType"],
                                             s["keyid"]))
    prov, pdigest = stmts[0]
    if prov["predicateType"] != "https://slsa.dev/provenance/v1":
        die("envelope 1 is not the provenance")
    vsa = stmts[1][0]
    if vsa["predicateType"] != "https://slsa.dev/verification_summary/v1":
        die("envelope 2 is not the verification summary")
    ins = vsa["predicate"]["inputAttestations"]
    if ins[0]["digest"]["sha256"] != pdigest:
        die("the summary names another provenance")
    if prov["predicate"]["runDetails"]["metadata"]["invocationId"] == "":
        die("no invocationId")
    print("result %s" % vsa["predicate"]["verificationResult"])


main()
