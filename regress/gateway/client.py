#!/usr/bin/env python3
# The agent's side of regress/gateway, over plain sockets so a test
# controls every byte (python3 stdlib only).
#
#	client.py req PORT METHOD PATH [-H "Name: value"]... [-d BODY]
#	    [-f FILE] [-i 1]
#		one HTTP/1.1 request (its body BODY or FILE's bytes);
#		prints "status N", then (with -i) each answer header as
#		"header Name: value", then the body
#	client.py raw PORT [-s SECONDS]
#		sends stdin's bytes as they are (with -s: one byte every
#		SECONDS), prints every answer's status line as
#		"status N", then "closed" when the gateway closed the
#		connection or "open" if it was still open after 8 s
#	client.py slow PORT METHOD PATH [-H ...] [-d BODY] [-p PAUSE]
#	    [-r BYTES_PER_S]
#		one request, then nothing read for PAUSE seconds, then
#		read at most BYTES_PER_S until the gateway closes;
#		prints "status N", "bytes N" (all it read) and
#		"complete" (the answer's end arrived) or "truncated"
#	client.py gone PORT METHOD PATH [-H ...] [-d BODY] [-t SECONDS]
#	    [-c BYTES]
#		sends the request (with -c: its first BYTES only, or
#		all but the last -BYTES), reads
#		nothing, closes the connection after SECONDS; prints
#		nothing
import socket
import sys
import time


def statuses(data):
    for line in data.split(b"\r\n"):
        if line.startswith(b"HTTP/1."):
            parts = line.split(b" ")
            if len(parts) > 1:
                print("status %s" % parts[1].decode())


def read_until_closed(s, limit):
    data = b""
    end = time.time() + limit
    s.settimeout(0.5)
    while time.time() < end:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def dechunk(body):
    out = b""
    while body:
        line, _, rest = body.partition(b"\r\n")
        try:
            n = int(line.split(b";")[0], 16)
        except ValueError:
            return out + body
        if n == 0:
            return out
        out += rest[:n]
        body = rest[n + 2:]
    return out


def request(argv):
    port, method, path = int(argv[0]), argv[1], argv[2]
    headers, body, opts, i = [], None, {}, 3
    while i < len(argv):
        if argv[i] == "-H":
            headers.append(argv[i + 1])
        elif argv[i] == "-d":
            body = argv[i + 1].encode()
        elif argv[i] == "-f":
            with open(argv[i + 1], "rb") as f:
                body = f.read()
        else:
            opts[argv[i]] = float(argv[i + 1])
        i += 2
    msg = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n" % (
        method, path, port)
    for h in headers:
        msg += h + "\r\n"
    if body is not None:
        msg += "Content-Length: %d\r\n" % len(body)
    msg = msg.encode() + b"\r\n" + (body or b"")
    if "-c" in opts:
        msg = msg[:int(opts["-c"])]
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(msg)
    return s, opts


def slow(argv):
    s, opts = request(argv)
    time.sleep(opts.get("-p", 0))
    rate = opts.get("-r", 0)
    start, got, head, tail = time.time(), 0, b"", b""
    s.settimeout(30)
    while True:
        try:
            chunk = s.recv(65536)
        except (socket.timeout, ConnectionResetError):
            break
        if not chunk:
            break
        if len(head) < 4096:
            head += chunk[:4096]
        got += len(chunk)
        tail = (tail + chunk)[-8:]
        if rate:
            ahead = got / rate - (time.time() - start)
            if ahead > 0:
                time.sleep(ahead)
    first = head.split(b"\r\n", 1)[0].split(b" ")
    print("status %s" % (first[1].decode() if len(first) > 1 else "none"))
    print("bytes %d" % got)
    hl = head.lower()
    if b"transfer-encoding: chunked" in hl:
        done = tail.endswith(b"\r\n0\r\n\r\n")
    else:
        n = [l for l in hl.split(b"\r\n") if l.startswith(b"content-length:")]
        hlen = head.find(b"\r\n\r\n") + 4
        done = bool(n) and got - hlen == int(n[0].split(b":")[1])
    print("complete" if done else "truncated")


def gone(argv):
    s, opts = request(argv)
    time.sleep(opts.get("-t", 0))
    s.close()


def req(argv):
    s, opts = request(argv)
    data, _ = read_until_closed(s, 20)
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not lines or not lines[0].startswith(b"HTTP/1."):
        print("status none")
        return
    print("status %s" % lines[0].split(b" ")[1].decode())
    if "-i" in opts:
        for h in lines[1:]:
            print("header %s" % h.decode("ascii", "replace"))
    if b"transfer-encoding: chunked" in head.lower():
        rest = dechunk(rest)
    sys.stdout.write(rest.decode("utf-8", "replace"))
    print()


def raw(argv):
    port, slow = int(argv[0]), None
    if len(argv) > 2 and argv[1] == "-s":
        slow = float(argv[2])
    data = sys.stdin.buffer.read()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    closed = False
    got = b""
    if slow is None:
        s.sendall(data)
    else:
        for i in range(len(data)):
            try:
                s.sendall(data[i:i + 1])
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(slow)
    if not closed:
        got, closed = read_until_closed(s, 8)
    statuses(got)
    print("closed" if closed else "open")


if __name__ == "__main__":
    {"req": req, "raw": raw, "slow": slow, "gone": gone}[sys.argv[1]](sys.argv[2:])
