#!/usr/bin/env python3
# ghctl.py CA URL [BODY]: the tests' client of fakegh.py's hooks, so
# that they need no curl.  GET, or POST of BODY; the answer's body on
# stdout; exit 1 on any error or a status other than 2xx.  It models
# nothing of GitHub: it talks to fakegh.py's CTL port only, whose
# /_control members (and the docs.github.com pages each behaviour
# comes from) are listed at the top of fakegh.py.
import ssl
import sys
import urllib.request


def main():
    if len(sys.argv) not in (3, 4):
        sys.stderr.write("usage: ghctl.py CA URL [BODY]\n")
        return 2
    ctx = ssl.create_default_context(cafile=sys.argv[1])
    data = sys.argv[3].encode() if len(sys.argv) == 4 else None
    try:
        with urllib.request.urlopen(sys.argv[2], data=data, context=ctx,
                                    timeout=30) as r:
            sys.stdout.write(r.read().decode())
    except (OSError, ValueError) as e:
        sys.stderr.write("ghctl.py: %s: %s\n" % (sys.argv[2], e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
