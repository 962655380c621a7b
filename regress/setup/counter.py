#!/usr/bin/env python3
# The side effect a setup run leaves outside its sandbox: one line per
# TCP connection, in a file only this process writes.  A hit that ran
# setup anyway adds a line; setup cannot remove one.  Prints
# "ready PORT", then serves until killed.
import socket
import sys

out = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print("ready", s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        data = c.recv(256)
    except OSError:
        data = b""
    c.close()
    with open(out, "a") as f:
        f.write("conn %r\n" % data.strip()[:64])
