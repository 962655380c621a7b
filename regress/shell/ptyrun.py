#!/usr/bin/env python3
# A terminal for factoryctl shell: runs argv on a fresh pty (as an
# operator's terminal would be) and plays a script read from stdin,
# one step a line:
#	send TEXT		bytes (Python escapes: \n \x1b ...) to the terminal
#	expect REGEX [SECS]	until the output so far matches (default 10 s)
#	sleep SECS
#	resize ROWS COLS	the terminal's size (SIGWINCH follows)
#	mode			prints "mode: raw" or "mode: cooked" now
#	signal NAME		to the program (SIGTERM, SIGHUP, ...)
#	wait [SECS]		until the program exits (default 20 s)
#	after TEXT		typed into the terminal after the program exited
#	waitfile PATH [SECS]	until PATH exists (default 20 s)
# Prints "status N" (128 + signal if killed, "status timeout"),
# "restored yes|no" (the terminal's modes at the end against the start),
# "operator-pty NAME"; the output goes raw to OUTFILE.
# Usage: ptyrun.py OUTFILE ROWS COLS argv... < script
import fcntl
import os
import re
import signal
import struct
import sys
import termios
import threading
import time


def main():
    out, rows, cols, argv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        sys.argv[4:]
    master, slave = os.openpty()
    name = os.ttyname(slave)
    fcntl.ioctl(master, termios.TIOCSWINSZ,
                struct.pack("HHHH", rows, cols, 0, 0))
    start = termios.tcgetattr(slave)
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        if slave > 2:
            os.close(slave)
        os.execv(argv[0], argv)
    buf = bytearray()
    lock = threading.Lock()

    def reader():
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:
                return
            if not b:
                return
            with lock:
                buf.extend(b)

    threading.Thread(target=reader, daemon=True).start()
    status = None

    def reap(block, secs):
        nonlocal status
        end = time.time() + secs
        while status is None:
            p, st = os.waitpid(pid, 0 if block else os.WNOHANG)
            if p == pid:
                status = os.waitstatus_to_exitcode(st)
                if status < 0:
                    status = 128 - status
                break
            if not block and time.time() > end:
                break
            if not block:
                time.sleep(0.05)
            else:
                break

    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        op, _, arg = line.partition(" ")
        if op == "send" or op == "after":
            if op == "after":
                reap(False, 20)
            os.write(master, arg.encode().decode("unicode_escape").encode(
                "latin-1"))
        elif op == "expect":
            parts = arg.rsplit(" ", 1)
            secs = 10.0
            if len(parts) == 2 and re.fullmatch(r"[0-9.]+", parts[1]):
                arg, secs = parts[0], float(parts[1])
            end = time.time() + secs
            rx = re.compile(arg.encode())
            while time.time() < end:
                with lock:
                    if rx.search(bytes(buf)):
                        break
                time.sleep(0.05)
            else:
                print("expect timeout: " + arg)
        elif op == "sleep":
            time.sleep(float(arg))
        elif op == "resize":
            r, c = arg.split()
            fcntl.ioctl(master, termios.TIOCSWINSZ,
                        struct.pack("HHHH", int(r), int(c), 0, 0))
        elif op == "mode":
            a = termios.tcgetattr(slave)
            raw = not (a[3] & (termios.ICANON | termios.ECHO | termios.ISIG))
            print("mode: " + ("raw" if raw else "cooked"))
        elif op == "signal":
            os.kill(pid, getattr(signal, arg))
        elif op == "waitfile":
            parts = arg.split()
            end = time.time() + (float(parts[1]) if len(parts) > 1 else 20)
            while not os.path.exists(parts[0]) and time.time() < end:
                time.sleep(0.05)
        elif op == "wait":
            reap(False, float(arg) if arg else 20)
    reap(False, 20)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        reap(True, 0)
        print("status timeout")
    else:
        print("status %d" % status)
    time.sleep(0.2)
    print("restored " + ("yes" if termios.tcgetattr(slave) == start
                         else "no"))
    print("operator-pty " + name)
    with lock, open(out, "wb") as f:
        f.write(bytes(buf))


main()
