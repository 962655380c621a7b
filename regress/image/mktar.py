# Hostile archives for regress/image, one file each in the directory
# given: what a tar can say that an image importer must refuse, strip
# or store exactly.
import gzip
import io
import os
import sys
import tarfile

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def tar(name, entries, fmt=tarfile.PAX_FORMAT, mode="w"):
    with tarfile.open(os.path.join(out, name), mode, format=fmt) as t:
        for info, data in entries:
            t.addfile(info, io.BytesIO(data) if data is not None else None)


def f(name, data=b"x", mode=0o644):
    i = tarfile.TarInfo(name)
    i.size = len(data)
    i.mode = mode
    return (i, data)


def d(name, mode=0o755):
    i = tarfile.TarInfo(name)
    i.type = tarfile.DIRTYPE
    i.mode = mode
    return (i, None)


def special(name, type_, link=""):
    i = tarfile.TarInfo(name)
    i.type = type_
    i.linkname = link
    i.mode = 0o777 if type_ == tarfile.SYMTYPE else 0o644
    i.devmajor, i.devminor = 1, 3
    return (i, None)


victim = "/tmp/factory-image-victim.%d" % os.getppid()
tar("dotdot.tar", [f("ok"), f("../../../../" + victim[1:])])
tar("absolute.tar", [f(victim)])
tar("through-link.tar", [special("x", tarfile.SYMTYPE, "/tmp"),
                         f("x/factory-image-victim.%d" % os.getppid())])
tar("hardlink-out.tar", [special("h", tarfile.LNKTYPE, "../../etc/passwd")])
tar("hardlink-missing.tar", [special("h", tarfile.LNKTYPE, "nothere")])
tar("many.tar", [f("f%d" % n, b"") for n in range(2001)])
tar("longpath.tar", [f("/".join(["d" * 100] * 50))])
tar("deep.tar", [f("/".join(["d"] * 70) + "/f")])
tar("specials.tar", [f("ok"), f("su", b"#!", 0o4755), f("sg", b"#!", 0o2755),
                     special("null", tarfile.CHRTYPE),
                     special("blk", tarfile.BLKTYPE),
                     special("fifo", tarfile.FIFOTYPE)])
tar("nonutf8.tar", [f(b"caf\xe9-\xff".decode("utf-8", "surrogateescape"))],
    fmt=tarfile.GNU_FORMAT)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as t:
    for n in range(50):
        i, data = f("f%d" % n, os.urandom(4096))
        t.addfile(i, io.BytesIO(data))
gz = gzip.compress(buf.getvalue())
with open(os.path.join(out, "truncated.tar.gz"), "wb") as o:
    o.write(gz[:len(gz) // 2])
with open(os.path.join(out, "garbage.bin"), "wb") as o:
    o.write(os.urandom(10000))

# A header that says a terabyte, and no data: refused before reading.
tar("huge.tar", [f("huge", b"x" * 512)], fmt=tarfile.USTAR_FORMAT)
with open(os.path.join(out, "huge.tar"), "r+b") as o:
    o.seek(124)
    o.write(b"\x80" + (10 ** 12).to_bytes(11, "big"))  # base-256
    o.seek(0)
    hdr = bytearray(o.read(512))
    hdr[148:156] = b" " * 8
    o.seek(148)
    o.write(b"%06o\0 " % sum(hdr))
