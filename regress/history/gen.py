# A fast-import stream of history as real repositories have it: n
# commits from number `first` on, each changing a few of 56 files (a
# line replaced, a line added), so that git packs them as long delta
# chains.  The first stream (first == 0) also lays out what the
# attempts of run.sh need: a gitlink at the top, an executable, a file
# to rename, one to move, one to chmod, and delta/base.txt, which a
# branch "next" changes further: git stores an older version as a delta
# against the newer, so main's delta/base.txt becomes a delta against a
# blob only next reaches, as master's blobs are against seen's in
# git/git.
# Usage: gen.py FIRST N SEED
import random
import sys

rnd = random.Random(int(sys.argv[3]))
first, n = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa "
         "lambda mu nu xi omicron pi rho sigma tau").split()
PATHS = (["src/f%02d.c" % i for i in range(40)] +
         ["docs/d%02d.md" % i for i in range(15)] + ["README.md"])


def line():
    return " ".join(rnd.choice(WORDS) for _ in range(8)) + "\n"


def blob(path, data, mode="100644"):
    data = data.encode()
    out.write(b"M %s inline %s\ndata %d\n%s\n" %
              (mode.encode(), path.encode(), len(data), data))


files = {p: [line() for _ in range(30)] for p in PATHS}
big = "".join("old line %d: %s" % (i, line()) for i in range(400))
for c in range(first, first + n):
    msg = b"commit %d\n" % c
    out.write(b"commit refs/heads/main\n")
    out.write(b"committer test <test@localhost> %d +0000\n" %
              (1700000000 + c * 3600))
    out.write(b"data %d\n%s" % (len(msg), msg))
    if c == first and first > 0:
        out.write(b"from refs/heads/main^0\n")
    for p in (rnd.sample(PATHS, 4) if c > 0 else PATHS):
        f = files[p]
        f[rnd.randrange(len(f))] = line()
        f.append(line())
        blob(p, "".join(f))
    if c == 0:
        out.write(b"M 160000 1111111111111111111111111111111111111111 "
                  b"sub\n")
        blob("tools/run.sh", "#!/bin/sh\necho run\n", "100755")
        blob("tools/plain.sh", "#!/bin/sh\necho plain\n")
        blob("src/old_name.c", "int renamed;\n" + line())
        blob("mv/a/moved.txt", "moved between directories\n" + line())
        blob("mv/b/stays.txt", "b stays\n")
    elif c == 20:
        blob("delta/base.txt", big)
    out.write(b"\n")
if first == 0:
    msg = b"next\n"
    out.write(b"commit refs/heads/next\n")
    out.write(b"committer test <test@localhost> %d +0000\n" %
              (1700000000 + (first + n) * 3600))
    out.write(b"data %d\n%sfrom refs/heads/main\n" % (len(msg), msg))
    blob("delta/base.txt", big + "".join(line() for _ in range(50)))
    out.write(b"\n")
