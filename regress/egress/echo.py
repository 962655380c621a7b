#!/usr/bin/env python3
# The host side of the egress regress: an echo server (A) and a
# recorder (B) on 127.0.0.1, each on a free port.  Prints "ready A B",
# then one line per event, flushed: "A <line>" for each line echoed back,
# "B connection" for any connection made to B.  Ends on SIGTERM, or by
# itself after five minutes.
import selectors
import signal
import socket
import sys
import time


def listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    s.setblocking(False)
    return s


def main():
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    sel = selectors.DefaultSelector()
    a, b = listener(), listener()
    sel.register(a, selectors.EVENT_READ, "A")
    sel.register(b, selectors.EVENT_READ, "B")
    print("ready %d %d" % (a.getsockname()[1], b.getsockname()[1]),
          flush=True)
    bufs = {}
    end = time.monotonic() + 300
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=1):
            if key.data == "B":
                c, _ = b.accept()
                print("B connection", flush=True)
                c.close()
            elif key.data == "A":
                c, _ = a.accept()
                c.setblocking(False)
                bufs[c] = b""
                sel.register(c, selectors.EVENT_READ, "conn")
            else:
                c = key.fileobj
                try:
                    data = c.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(c)
                    del bufs[c]
                    c.close()
                    continue
                bufs[c] += data
                while b"\n" in bufs[c]:
                    line, bufs[c] = bufs[c].split(b"\n", 1)
                    print("A " + line.decode(errors="replace"), flush=True)
                    c.setblocking(True)
                    c.sendall(line + b"\n")
                    c.setblocking(False)


main()
