#!/usr/bin/env python3
# Which of one directory's object files call each other in a circle.
# An arrow A -> B: A's symbol table names as undefined ("U") a global
# function or variable that B defines, as the linker resolves it.  A
# circle is a strongly connected set of two or more files.  Prints
# "largest N" and, for each circle, its files; exit 0.
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True,
                         text=True, check=True).stdout
    defined, wanted = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] == "U":
            wanted.add(f[0])
        elif f[1] in "TDBRCGSV":
            defined.add(f[0])
    return defined, wanted


def circles(objs):
    defs, wants = {}, {}
    for o in objs:
        defs[o], wants[o] = symbols(o)
    owner = {}
    for o in objs:
        for s in defs[o]:
            owner.setdefault(s, o)
    edges = {o: sorted({owner[s] for s in wants[o] if s in owner} - {o})
             for o in objs}
    # Tarjan's strongly connected components, iteratively.
    index, low, on, stack, out = {}, {}, set(), [], []
    n = 0
    for root in objs:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = n
                n += 1
                stack.append(v)
                on.add(v)
            recurse = False
            for j in range(i, len(edges[v])):
                w = edges[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    return sorted(out, key=len, reverse=True)


def main():
    cs = circles(sys.argv[1:])
    print("largest %d" % (len(cs[0]) if cs else 0))
    for c in cs:
        print("circle: " + " ".join(p.rsplit("/", 1)[-1] for p in c))


main()
