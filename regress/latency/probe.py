#!/usr/bin/env python3
# probe.py FACTORYCTL SOCK STOPFILE OUT: asks "factoryctl -s SOCK -j
# status" every 50 ms until STOPFILE exists, and writes each answer's
# latency in ms, one a line, to OUT, the first before STOPFILE is
# looked at (the caller waits for it: the probe is running).  An answer
# that is not a JSON object, or none within 10 s, is written as -1.
import json
import os
import subprocess
import sys
import time

ctl, sock, stop, out = sys.argv[1:5]
with open(out, "w", buffering=1) as f:
	while True:
		t0 = time.monotonic()
		try:
			p = subprocess.run([ctl, "-s", sock, "-j", "status"],
			    capture_output=True, timeout=10)
			ok = p.returncode == 0 and \
			    isinstance(json.loads(p.stdout), dict)
		except (subprocess.TimeoutExpired, ValueError):
			ok = False
		ms = (time.monotonic() - t0) * 1000
		f.write("%.1f\n" % (ms if ok else -1))
		if os.path.exists(stop):
			break
		time.sleep(0.05)
