#!/usr/bin/env python3
# The tables of bench/agents.sh, from the double's stamps (agentsrv.py
# -t) and the runs file the bench writes, one run a line:
#	client NAME MODE T0 MODEL	a client's run (T0: the submit, or
#					the process's start; microseconds)
#	probe MODE T0 MODEL FILE	agentprobe.js's run and its output
# MODE is factory or direct; a client or probe run more than once (in
# rounds) is taken at the median of its runs, and the probe's events
# of all its runs are pooled.  Nothing here judges: the figures are
# printed beside each other, with the targets of issue 25.
#
#	agentstat.py times.jsonl runs

import json
import sys


def pct(v, p):
    """The p-th percentile (nearest rank) of v."""
    if not v:
        return None
    v = sorted(v)
    r = max(1, -(-p * len(v) // 100))
    return v[r - 1]


def ms(us):
    return "-" if us is None else "%.1f" % (us / 1000.0)


def first_request(times, model, t0):
    for r in times:
        if (r["ev"] == "req" and r.get("model") == model and
                r.get("api") not in ("probe", "other") and r["t"] >= t0):
            return r["t"]
    return None


def first_byte(times, model, t0):
    """The double's first answer byte sent to model's first request."""
    t = first_request(times, model, t0)
    for r in times:
        if (t is not None and r["ev"] == "first" and
                r.get("model") == model and r["t"] >= t):
            return r["t"]
    return None


def sent(times, model, t0):
    """The double's stamps of answers to model: {(i, "first"|n): t}."""
    out, i = {}, -1
    for r in times:
        if r.get("model") != model or r["t"] < t0:
            continue
        if r["ev"] == "req":
            i += 1
        elif r["ev"] == "first":
            out[(i, "first")] = r["t"]
        elif r["ev"] == "sse":
            out[(i, r["n"])] = r["t"]
    return out


def probe(times, mode, t0, model, path):
    got = [json.loads(x) for x in open(path) if x.startswith("{")]
    tx = sent(times, model, t0)
    ev, head = [], []
    start = next((g["t"] for g in got if g["ev"] == "start"), None)
    for g in got:
        if g["ev"] == "sse" and (g["i"], g["n"]) in tx:
            ev.append(g["t"] - tx[(g["i"], g["n"])])
        elif g["ev"] == "head" and (g["i"], "first") in tx:
            head.append(g["t"] - tx[(g["i"], "first")])
    errs = [g for g in got if g["ev"] == "error"]
    return {"mode": mode, "t0": t0, "model": model, "start": start, "ev": ev, "head": head,
            "first": first_request(times, model, t0), "errors": errs}


def table(rows, k):
    print("%-10s %10s %10s %10s %8s" % ("client", "factory", "direct",
                                        "added", "ratio"))
    for c, m in rows:
        f = pct([r[k] - r[0] for r in m.get("factory", []) if r[k]], 50)
        d = pct([r[k] - r[0] for r in m.get("direct", []) if r[k]], 50)
        add = f - d if f is not None and d is not None else None
        ratio = "%.2f" % (f / d) if add is not None and d > 0 else "-"
        print("%-10s %10s %10s %10s %8s" % (c, ms(f), ms(d), ms(add), ratio))


def main():
    times = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
    clients, probes = {}, {}
    for line in open(sys.argv[2]):
        f = line.split()
        if f[0] == "client":
            t0 = int(f[3])
            clients.setdefault(f[1], {}).setdefault(f[2], []).append((
                t0, first_request(times, f[4], t0),
                first_byte(times, f[4], t0)))
        elif f[0] == "probe":
            probes.setdefault(f[1], []).append(
                probe(times, f[1], int(f[2]), f[3], f[4]))

    print("first model request: factory from submit, direct from the"
          " process's start (ms)")
    rows = list(clients.items())
    if "factory" in probes and "direct" in probes:
        rows.append(("probe", {m: [(p["t0"], p["first"],
                                    first_byte(times, p["model"], p["t0"]))
                                   for p in ps]
                               for m, ps in probes.items()}))
    table(rows, 1)
    print("  target: factory adds at most 50 ms to the first request")
    print()
    print("the double's first answer byte sent: factory from submit, direct"
          " from the process's start (ms)")
    table(rows, 2)
    if not probes:
        return
    print()
    print("the provider's answer reaching the probe, from the double's send"
          " (ms)")
    print("%-22s %8s %8s %8s %6s" % ("", "factory", "direct", "added", "n"))
    for what, key in (("first byte, median", "head"),
                      ("first byte, p99", "head"),
                      ("per event, median", "ev"),
                      ("per event, p99", "ev")):
        p = 99 if "p99" in what else 50
        fl = [x for r in probes.get("factory", []) for x in r[key]]
        dl = [x for r in probes.get("direct", []) for x in r[key]]
        fv, dv = pct(fl, p), pct(dl, p)
        add = fv - dv if fv is not None and dv is not None else None
        print("%-22s %8s %8s %8s %6d" % (what, ms(fv), ms(dv), ms(add),
                                          len(fl)))
    print("  target: factory adds at most 1 ms per streamed event")
    for m, ps in probes.items():
        for e in (e for p in ps for e in p["errors"]):
            print("  probe %s: %s" % (m, e["error"]))


if __name__ == "__main__":
    sys.exit(main())
