#!/usr/bin/env python3
# fakegh.py: a test double of GitHub for regress/github, never shipped.
# Standard library only.  Three HTTPS listeners (ports chosen by the
# kernel, written to --ports as "API GIT CTL"), each on every address
# of --listen: "auto" (the default: every address "localhost" resolves
# to, as clients will find it), or a comma list such as "127.0.0.1" or
# "::1,127.0.0.1"; each port is the same on all of them.  --silent ADDR
# also holds each port on ADDR with a full accept queue, so that
# connecting there neither succeeds nor fails (SYNs dropped):
#
#  API: POST /app/installations/ID/access_tokens (JWT RS256 checked
#       against the App's public key with openssl(1), and its claims;
#       422 "The permissions requested are not granted to this
#       installation." for any permission beyond the installation's),
#       GET /app/installations/ID (the JWT again: the installation and
#       its granted "permissions", set with --granted or /_control
#       {"granted": {...}}; docs.github.com/en/rest/apps/apps, "Get an
#       installation for the authenticated app" and "Create an
#       installation access token for an app"),
#       GET /repos/O/R, GET/POST /repos/O/R/pulls (head=OWNER:BRANCH
#       and base=BRANCH filters, 422 on a duplicate),
#       DELETE /installation/token (204; the token is refused from
#       then on), POST /repos/O/R/check-runs
#       (the token must hold checks: write; recorded in check_runs),
#       GET /repos/O/R/commits/SHA/check-runs?check_name=N,
#       PATCH /repos/O/R/pulls/N {"state": "open"|"closed"} (reopening
#       needs the head branch at the pull request's sha),
#       GET /repos/O/R/git/ref/heads/B, DELETE /repos/O/R/git/refs/heads/B
#       (204; 422 "Reference does not exist").
#       Test hooks: POST /_control
#       sets failure modes, GET /_state dumps tokens, pulls, requests.
#  git: git http-backend behind a small CGI host, for any request with
#       Basic x-access-token:<valid, unrevoked token>; 401 otherwise.
#  CTL: the API again, for the tests' hooks: no fault applies to it.
# --tokens FILE: every token issued is appended to FILE, a line each,
# before it is handed out, so that a test can grep for all of them.
#
# Bad days (POST /_control {"modes":{"faults":[F, ...]}}), each F
# {"server": "api"|"git", "method": M, "prefix": P, "count": N,
# "query": Q (the API: a part of the query string), "do": WHAT, ...}
# consumed by the first N requests that match:
#  move-ref       (the API) point branch "ref" at "sha", then do the
#                 work: a push racing the request
#  drop-request   close (RST) right after the request's headers
#  drop-body      read part of the request body (a push), then RST
#  drop-response  do the work, send half the answer, then RST
#  status         answer "status" (500, 502, 503...) without doing the
#                 work, with Retry-After "retry_after" if given
#  stall          read the request, never answer (until the client
#                 goes away)
#  stall-body     do the work, send the headers and half the body, stall
#  stall-accept   (no method/prefix) accept, never do the TLS handshake
#  garbage        answer 200 with "body" (raw bytes) instead of the work
#  chunked        do the work, answer with a chunked body
#  badchunk       do the work, answer chunked with a bad chunk size
#                 line "bad" (default "zz")
#  close-notify   do the work, answer with a body that the close
#                 delimits (no Content-Length, not chunked), end TLS
#                 with close_notify: a whole answer
#  close-cut      the same, half the body, then a FIN without
#                 close_notify: a truncation an attacker can make
#  close-bare     the same, all the body, then a FIN without
#                 close_notify: nothing tells it from close-cut
# /_state counts tokens minted, delivered (the whole answer written)
# and revoked.
import argparse
import base64
import json
import os
import secrets
import select
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"tokens": {}, "pulls": [], "requests": [], "modes": {},
         "hung": [], "check_runs": [], "granted": {}}
ARGS = None
PORTS = {}


def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def note(kind, method, path, status, extra=None):
    with LOCK:
        r = {"t": time.time(), "server": kind, "method": method,
             "path": path, "status": status}
        if extra:
            r.update(extra)
        STATE["requests"].append(r)


def jwt_check(jwt):
    """None if the JWT is the App's and current, else why not."""
    parts = jwt.split(".")
    if len(parts) != 3:
        return "not a JWT"
    try:
        hdr = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        sig = b64url_decode(parts[2])
    except ValueError:
        return "undecodable JWT"
    if hdr.get("alg") != "RS256":
        return "alg is not RS256"
    with tempfile.NamedTemporaryFile(dir=ARGS.dir) as f:
        f.write(sig)
        f.flush()
        p = subprocess.run(["openssl", "dgst", "-sha256", "-verify",
                            ARGS.app_pub, "-signature", f.name],
                           input=(parts[0] + "." + parts[1]).encode(),
                           capture_output=True)
    if p.returncode != 0:
        return "bad JWT signature"
    now = int(time.time())
    iat, exp, iss = claims.get("iat"), claims.get("exp"), claims.get("iss")
    if str(iss) != ARGS.app_id:
        return "iss is not the App"
    if not isinstance(iat, int) or not isinstance(exp, int):
        return "iat/exp missing"
    if iat > now + 5 or exp <= now or exp - iat > 600:
        return "JWT not current or longer than 10 minutes"
    return None


def token_of(headers):
    a = headers.get("Authorization", "")
    for p in ("token ", "Bearer "):
        if a.startswith(p):
            t = a[len(p):]
            with LOCK:
                r = STATE["tokens"].get(t)
                if r is not None and not r["revoked"]:
                    return t
    return None


def branch_sha(branch):
    p = subprocess.run(["git", "--git-dir", ARGS.bare, "rev-parse",
                        "--verify", "-q", "refs/heads/" + branch],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def make_pull(title, head, base, body=""):
    """Caller holds LOCK."""
    n = len(STATE["pulls"]) + 1
    pr = {"number": n, "state": "open", "title": title, "body": body,
          "merged_at": None,
          "html_url": "https://github.test/%s/%s/pull/%d" %
          (ARGS.owner, ARGS.repo, n),
          "head": {"ref": head, "label": ARGS.owner + ":" + head,
                   "sha": branch_sha(head),
                   "repo": {"id": ARGS.repo_id}},
          "base": {"ref": base, "repo": {"id": ARGS.repo_id}}}
    STATE["pulls"].append(pr)
    return pr


def fault_take(server, method, path, accept=False, query=""):
    """The first pending fault for this request (or connection)."""
    with LOCK:
        for f in STATE["modes"].get("faults", []):
            if f.get("count", 1) <= 0 or f.get("server", "api") != server:
                continue
            if accept != (f["do"] == "stall-accept"):
                continue
            if not accept and (f.get("method", method) != method or
                               not path.startswith(f.get("prefix", "")) or
                               f.get("query", "") not in query):
                continue
            f["count"] = f.get("count", 1) - 1
            f["hits"] = f.get("hits", 0) + 1
            return dict(f)
    return None


def rst(sock):
    """Close without TLS close_notify, with a RST: a dropped line."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        os.close(sock.detach())
    except OSError:
        pass


def wait_gone(sock, limit=300):
    """Hold the connection until the client closes it (or limit s)."""
    end = time.time() + limit
    try:
        raw = socket.socket(fileno=os.dup(sock.fileno()))
    except OSError:
        return
    try:
        while time.time() < end:
            r, _, _ = select.select([raw], [], [], 1)
            if r and not raw.recv(4096, socket.MSG_PEEK):
                break
            if r:
                raw.recv(4096)
    except OSError:
        pass
    finally:
        raw.close()


class Handler(BaseHTTPRequestHandler):
    server_version = "fakegh"
    fault = None
    aborted = False

    def log_message(self, fmt, *a):
        pass

    def finish(self):
        if self.aborted:
            return
        try:
            super().finish()
        except (OSError, ValueError):
            pass

    def abort(self):
        self.aborted = True
        self.close_connection = True
        try:
            self.wfile.flush()
        except (OSError, ValueError):
            pass
        rst(self.connection)

    def fin(self):
        """Close with a FIN, without TLS close_notify."""
        self.aborted = True
        self.close_connection = True
        try:
            self.wfile.flush()
        except (OSError, ValueError):
            pass
        try:
            os.close(self.connection.detach())
        except OSError:
            pass

    def close_tls(self):
        """End TLS with close_notify (the client need not answer)."""
        try:
            self.wfile.flush()
            self.connection.unwrap()
        except (ssl.SSLError, OSError, ValueError):
            pass

    def fault_before(self, server, method, path, query=""):
        """Faults that act before the work; True if the request ends."""
        f = self.fault = fault_take(server, method, path, query=query)
        if f is None:
            return False
        what = f["do"]
        if what == "move-ref":
            subprocess.run(["git", "--git-dir", ARGS.bare, "update-ref",
                            "refs/heads/" + f["ref"], f["sha"]], check=True)
            note(server, method, path, "fault:" + what)
            self.fault = None
            return False
        if what == "drop-request":
            self.abort()
        elif what == "drop-body":
            n = int(self.headers.get("Content-Length", "0") or 0)
            self.rfile.read1(min(n, 512) if n else 512)
            self.abort()
        elif what == "status":
            self.body()
            h = {}
            if f.get("retry_after") is not None:
                h["Retry-After"] = str(f["retry_after"])
            self.fault = None
            self.reply(f["status"], {"message": "a bad day: %d" %
                                     f["status"]}, h)
        elif what == "stall":
            self.body()
            wait_gone(self.connection)
            self.abort()
        elif what == "garbage":
            self.body()
            self.fault = None
            self.reply(200, raw=f["body"].encode())
        else:
            return False
        note(server, method, path, "fault:" + what)
        return True

    def send_answer(self, status, hdrs, data):
        """The answer, as the fault of this request has it; True if
        all of it was written."""
        what = self.fault["do"] if self.fault else None
        self.send_response(status)
        for k, v in hdrs.items():
            self.send_header(k, v)
        closed = what in ("close-notify", "close-cut", "close-bare")
        if what in ("chunked", "badchunk"):
            self.send_header("Transfer-Encoding", "chunked")
        elif not closed:
            self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            if what == "chunked":
                for i in range(0, len(data), 7):
                    c = data[i:i + 7]
                    self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(c), c))
                self.wfile.write(b"0\r\n\r\n")
            elif what == "badchunk":
                bad = self.fault.get("bad", "zz").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (3, data[:3]))
                self.wfile.write(bad + b"\r\n" + data[3:] + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            elif closed:
                cut = len(data) // 2 if what == "close-cut" else len(data)
                self.wfile.write(data[:cut])
                if what == "close-notify":
                    self.close_tls()
                    return True
                self.fin()
                return False
            elif what == "drop-response":
                self.wfile.write(data[:len(data) // 2])
                self.abort()
                return False
            elif what == "stall-body":
                self.wfile.write(data[:len(data) // 2])
                self.wfile.flush()
                wait_gone(self.connection)
                self.abort()
                return False
            else:
                self.wfile.write(data)
            self.wfile.flush()
        except (OSError, ValueError):
            return False
        return what != "badchunk"

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0], 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n) if n > 0 else b""

    def reply(self, status, obj=None, headers=None, raw=None):
        data = raw if raw is not None else \
            (json.dumps(obj).encode() if obj is not None else b"")
        h = dict(headers or {})
        if raw is None:
            h["Content-Type"] = "application/json"
        return self.send_answer(status, h, data)


class API(Handler):
    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")

    def do_PATCH(self):
        self.route("PATCH")

    def mode_hit(self, method, path):
        """A failure mode for this request, consumed, or None."""
        with LOCK:
            m = STATE["modes"].get("retry")
            if m and m["count"] > 0 and method == m["method"] and \
                    path.startswith(m["prefix"]):
                m["count"] -= 1
                return m
        return None

    def route(self, method):
        u = urllib.parse.urlsplit(self.path)
        path, q = u.path, urllib.parse.parse_qs(u.query)
        if self.server.kind != "ctl" and \
                self.fault_before("api", method, path, u.query):
            return
        body = self.body()
        status = self.dispatch(method, path, q, body)
        note("api", method, path, status,
             {"query": u.query} if u.query else None)

    def dispatch(self, method, path, q, body):
        if path == "/_control" and method == "POST":
            c = json.loads(body)
            with LOCK:
                if "modes" in c:
                    STATE["modes"] = c["modes"]
                if "granted" in c:
                    STATE["granted"] = c["granted"]
                if "pull" in c:
                    make_pull(c["pull"]["title"], c["pull"]["head"],
                              c["pull"]["base"])
                # A person's hand: {"set_pull": {"head": B, "state":
                # "closed", "merged": true, "recreated": true}} on
                # every pull of head B.
                if "set_pull" in c:
                    sp = c["set_pull"]
                    for p in STATE["pulls"]:
                        if p["head"]["ref"] == sp["head"]:
                            p["state"] = sp.get("state", p["state"])
                            if sp.get("merged"):
                                p["merged_at"] = "2026-12-01T00:00:00Z"
                            # The head branch force-pushed since:
                            # GitHub refuses to reopen it (422).
                            if sp.get("recreated"):
                                p["head"]["sha"] = "0" * 40
            self.reply(200, {})
            return 200
        if path == "/_state" and method == "GET":
            with LOCK:
                toks = STATE["tokens"].values()
                STATE["counts"] = {
                    "minted": len(toks),
                    "delivered": len([t for t in toks if t["delivered"]]),
                    "revoked": len([t for t in toks if t["revoked"]])}
                data = json.dumps(STATE).encode()
            self.fault = None
            self.reply(200, raw=data)
            return 200
        m = self.mode_hit(method, path)
        if m is not None:
            self.reply(403, {"message": "You have exceeded a secondary "
                             "rate limit."},
                       {"Retry-After": str(m["after"])})
            return 403
        inst = "/app/installations/%d" % ARGS.installation
        if path == inst + "/access_tokens" and method == "POST":
            return self.access_token(body)
        if path == inst and method == "GET":
            return self.installation()
        repo = "/repos/%s/%s" % (ARGS.owner, ARGS.repo)
        if path == "/installation/token" and method == "DELETE":
            t = token_of(self.headers)
            if t is None:
                self.reply(401, {"message": "Bad credentials"})
                return 401
            with LOCK:
                STATE["tokens"][t]["revoked"] = True
            self.reply(204)
            return 204
        if token_of(self.headers) is None:
            self.reply(401, {"message": "Bad credentials"})
            return 401
        if path == repo and method == "GET":
            self.reply(200, {"id": ARGS.repo_id, "name": ARGS.repo,
                             "full_name": ARGS.owner + "/" + ARGS.repo,
                             "clone_url": "https://%s:%d/%s/%s.git"
                             % (self.host(), PORTS["git"], ARGS.owner,
                                ARGS.repo)})
            return 200
        if path == repo + "/pulls" and method == "GET":
            return self.pulls_list(q)
        if path == repo + "/pulls" and method == "POST":
            return self.pulls_create(json.loads(body))
        pp = repo + "/pulls/"
        if path.startswith(pp) and method == "PATCH":
            return self.pulls_patch(path[len(pp):], json.loads(body))
        if path.startswith(repo + "/git/ref/heads/") and method == "GET":
            return self.ref_get(path[len(repo + "/git/ref/heads/"):])
        if path.startswith(repo + "/git/refs/heads/") and \
                method == "DELETE":
            return self.ref_delete(path[len(repo + "/git/refs/heads/"):])
        if path == repo + "/check-runs" and method == "POST":
            return self.check_create(json.loads(body))
        pre = repo + "/commits/"
        if path.startswith(pre) and path.endswith("/check-runs") and \
                method == "GET":
            return self.check_list(path[len(pre):-len("/check-runs")], q)
        self.reply(404, {"message": "Not Found"})
        return 404

    def host(self):
        """The host the client asked for: git goes to the same name."""
        h = self.headers.get("Host", "localhost")
        return h.rsplit(":", 1)[0] if not h.endswith("]") else h

    def jwt_refused(self):
        """401 answered (True) unless the request carries the App's JWT."""
        a = self.headers.get("Authorization", "")
        why = jwt_check(a[7:]) if a.startswith("Bearer ") else "no JWT"
        if why is not None:
            self.reply(401, {"message": why})
            return True
        return False

    def installation(self):
        if self.jwt_refused():
            return 401
        with LOCK:
            perms = dict(STATE["granted"])
        self.reply(200, {"id": ARGS.installation, "app_id": int(ARGS.app_id),
                         "target_type": "Organization",
                         "repository_selection": "selected",
                         "permissions": perms, "events": [],
                         "suspended_at": None})
        return 200

    def access_token(self, body):
        if self.jwt_refused():
            return 401
        req = json.loads(body)
        with LOCK:
            granted = dict(STATE["granted"])
        # GitHub refuses the whole request for any permission the
        # installation lacks, or wider than it holds.
        level = {"read": 1, "write": 2}
        for k, v in (req.get("permissions") or {}).items():
            if level.get(v, 3) > level.get(granted.get(k), 0):
                self.reply(422, {"message": "The permissions requested "
                                 "are not granted to this installation."})
                return 422
        want = {"contents": "write", "pull_requests": "write"}
        checks = dict(want, checks="write")
        if req.get("repository_ids") != [ARGS.repo_id] or \
                req.get("permissions") not in (want, checks):
            self.reply(422, {"message": "asked for the wrong grant"})
            return 422
        perms = dict(req["permissions"], metadata="read")
        with LOCK:
            if STATE["modes"].get("wider"):
                perms["administration"] = "write"
            # New-format tokens are long: treat them as opaque.
            t = "ghs_" + secrets.token_urlsafe(220)
            STATE["tokens"][t] = {"revoked": False, "permissions": perms,
                                  "delivered": False}
            if ARGS.tokens:
                with open(ARGS.tokens, "a") as f:
                    f.write(t + "\n")
        if self.reply(201, {"token": t,
                            "expires_at": "2099-01-01T00:00:00Z",
                            "permissions": perms,
                            "repository_selection": "selected",
                            "repositories": [{"id": ARGS.repo_id,
                                              "name": ARGS.repo}]}):
            with LOCK:
                STATE["tokens"][t]["delivered"] = True
        return 201

    def pulls_list(self, q):
        head = q.get("head", [None])[0]
        base = q.get("base", [None])[0]
        state = q.get("state", ["open"])[0]
        with LOCK:
            out = [p for p in STATE["pulls"]
                   if state == "all" or p["state"] == state]
            # As GitHub: without OWNER: the filter is ignored.
            if head is not None and ":" in head:
                out = [p for p in out if p["head"]["label"] == head]
            if base is not None:
                out = [p for p in out if p["base"]["ref"] == base]
            self.reply(200, out)
        return 200

    def pulls_create(self, req):
        head, base = req.get("head", ""), req.get("base", "")
        if branch_sha(head) is None or branch_sha(base) is None:
            self.reply(422, {"message": "Validation Failed",
                             "errors": [{"field": "head",
                                         "code": "invalid"}]})
            return 422
        with LOCK:
            modes = STATE["modes"]
            if modes.get("hang_pulls"):
                pass
            elif modes.get("race422"):
                modes["race422"] = False
                make_pull("made by a racing publisher", head, base)
            if not modes.get("hang_pulls"):
                dup = [p for p in STATE["pulls"] if p["state"] == "open"
                       and p["head"]["ref"] == head]
                if dup:
                    self.reply(422, {"message": "Validation Failed",
                                     "errors": [{"message": "A pull "
                                                 "request already exists"
                                                 " for %s:%s." %
                                                 (ARGS.owner, head)}]})
                    return 422
                pr = make_pull(req.get("title", ""), head, base,
                               req.get("body", ""))
        if modes.get("hang_pulls"):
            with LOCK:
                STATE["hung"].append(head)
            time.sleep(60)
            self.reply(500, {"message": "hung"})
            return 500
        self.reply(201, pr)
        return 201

    def pulls_patch(self, num, req):
        with LOCK:
            prs = [p for p in STATE["pulls"] if str(p["number"]) == num]
            if not prs:
                self.reply(404, {"message": "Not Found"})
                return 404
            pr = prs[0]
            want = req.get("state")
            if want not in ("open", "closed"):
                self.reply(422, {"message": "Validation Failed"})
                return 422
            if want == "open" and pr["state"] == "closed":
                if pr["merged_at"] is not None or \
                        branch_sha(pr["head"]["ref"]) != pr["head"]["sha"]:
                    self.reply(422, {"message": "Validation Failed: "
                                     "cannot reopen"})
                    return 422
            pr["state"] = want
            self.reply(200, pr)
        return 200

    def ref_get(self, branch):
        sha = branch_sha(branch)
        if sha is None:
            self.reply(404, {"message": "Not Found"})
            return 404
        self.reply(200, {"ref": "refs/heads/" + branch,
                         "object": {"sha": sha, "type": "commit"}})
        return 200

    def ref_delete(self, branch):
        if branch_sha(branch) is None:
            self.reply(422, {"message": "Reference does not exist"})
            return 422
        subprocess.run(["git", "--git-dir", ARGS.bare, "update-ref", "-d",
                        "refs/heads/" + branch], check=True)
        with LOCK:
            # As GitHub: deleting the head of an open pull closes it,
            # and so does deleting its base (rev-20).
            for p in STATE["pulls"]:
                if (p["head"]["ref"] == branch or
                        p["base"]["ref"] == branch) and \
                        p["state"] == "open":
                    p["state"] = "closed"
        self.reply(204)
        return 204

    def check_create(self, req):
        t = token_of(self.headers)
        with LOCK:
            perms = STATE["tokens"][t]["permissions"]
        if perms.get("checks") != "write":
            self.reply(403, {"message": "Resource not accessible by "
                             "integration"})
            return 403
        out = req.get("output", {})
        sha = req.get("head_sha", "")
        if not isinstance(req.get("name"), str) or len(sha) != 40 or \
                req.get("status") != "completed" or \
                req.get("conclusion") not in ("success", "failure",
                                              "neutral") or \
                not isinstance(out.get("title"), str) or \
                not isinstance(out.get("summary"), str) or \
                len(out["summary"]) > 65535 or \
                len(out.get("text", "")) > 65535:
            self.reply(422, {"message": "Validation Failed"})
            return 422
        with LOCK:
            run = dict(req, id=len(STATE["check_runs"]) + 1,
                       html_url="https://github.example/%s/%s/runs/%d" %
                       (ARGS.owner, ARGS.repo,
                        len(STATE["check_runs"]) + 1))
            STATE["check_runs"].append(run)
        self.reply(201, run)
        return 201

    def check_list(self, sha, q):
        name = q.get("check_name", [None])[0]
        with LOCK:
            out = [r for r in STATE["check_runs"] if r["head_sha"] == sha
                   and (name is None or r["name"] == name)]
        self.reply(200, {"total_count": len(out), "check_runs": out})
        return 200


class Git(Handler):
    def do_GET(self):
        self.cgi("GET")

    def do_POST(self):
        self.cgi("POST")

    def cgi(self, method):
        u = urllib.parse.urlsplit(self.path)
        if self.fault_before("git", method, u.path):
            return
        body = self.body()
        a = self.headers.get("Authorization", "")
        ok = False
        if a.startswith("Basic "):
            user, _, pw = base64.b64decode(a[6:]).decode().partition(":")
            with LOCK:
                r = STATE["tokens"].get(pw)
                ok = user == "x-access-token" and r is not None and \
                    not r["revoked"]
        if not ok:
            self.reply(401, {"message": "Bad credentials"},
                       {"WWW-Authenticate": 'Basic realm="fakegh"'})
            note("git", method, u.path, 401)
            return
        env = {"GIT_PROJECT_ROOT": ARGS.git_root, "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": u.path, "QUERY_STRING": u.query,
               "REQUEST_METHOD": method, "REMOTE_USER": "x-access-token",
               "REMOTE_ADDR": "127.0.0.1", "CONTENT_LENGTH": str(len(body)),
               "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "HOME": ARGS.dir, "GIT_CONFIG_NOSYSTEM": "1"}
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        p = subprocess.run(["git", "http-backend"], input=body, env=env,
                           capture_output=True)
        head, _, out = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = p.stdout.partition(b"\n\n")
        status, hdrs = 200, {}
        for line in head.decode(errors="replace").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                hdrs[k] = v.strip()
        hdrs.pop("Content-Length", None)
        self.send_answer(status, hdrs, out)
        note("git", method, u.path, status, {"query": u.query})


class TLSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, kind, handler, ctx, addr, port):
        self.address_family = socket.AF_INET6 if ":" in addr else \
            socket.AF_INET
        super().__init__((addr, port), handler, bind_and_activate=False)
        if self.address_family == socket.AF_INET6:
            # ::1 only: the IPv4 side is a listener of its own, or none.
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY,
                                   1)
        try:
            self.server_bind()
            self.server_activate()
        except OSError:
            self.server_close()
            raise
        self.kind = kind
        self.ctx = ctx

    def handle_error(self, request, client_address):
        pass

    def get_request(self):
        sock, addr = self.socket.accept()
        # The handshake runs in the handler's thread, not here.
        return self.ctx.wrap_socket(sock, server_side=True,
                                    do_handshake_on_connect=False), addr

    def finish_request(self, request, client_address):
        if fault_take(self.kind, None, None, accept=True) is not None:
            note(self.kind, "-", "-", "fault:stall-accept")
            wait_gone(request)
            rst(request)
            return
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError):
            request.close()
            return
        super().finish_request(request, client_address)


def listen_addrs(spec):
    """The addresses to listen on, in order, without repeats."""
    if spec != "auto":
        return spec.split(",")
    out = []
    for ai in socket.getaddrinfo("localhost", None, type=socket.SOCK_STREAM):
        if ai[4][0] in out:
            continue
        # A name may point where this host cannot listen (::1 with
        # IPv6 off): a client gets "refused" there and moves on.
        try:
            with socket.socket(ai[0], socket.SOCK_STREAM) as t:
                t.bind((ai[4][0], 0))
        except OSError:
            continue
        out.append(ai[4][0])
    return out


def listen_all(kind, handler, ctx, addrs):
    """One listener per address, all on one port (tries a few ports if
    the kernel's choice for the first is taken on another)."""
    for _ in range(20):
        group = [TLSServer(kind, handler, ctx, addrs[0], 0)]
        port = group[0].server_address[1]
        try:
            for a in addrs[1:]:
                group.append(TLSServer(kind, handler, ctx, a, port))
            return group
        except OSError:
            for g in group:
                g.server_close()
    raise SystemExit("fakegh: no port free on all of %s" % addrs)


def silent(addr, port):
    """addr:port accepts nothing and refuses nothing: its accept queue
    is full, so the kernel drops every SYN (a host that swallows
    packets).  The sockets are returned to be kept open."""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, port))
    s.listen(0)
    keep = [s]
    for _ in range(3):
        c = socket.socket(fam, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect((addr, port))
        except BlockingIOError:
            pass
        keep.append(c)
    time.sleep(0.2)
    return keep


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for a in ("dir", "cert", "key", "app-pub", "app-id", "owner", "repo",
              "git-root", "ports"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--installation", type=int, required=True)
    ap.add_argument("--repo-id", type=int, required=True)
    ap.add_argument("--tokens")
    ap.add_argument("--listen", default="auto")
    ap.add_argument("--silent")
    # What the installation was granted: the man page's set-up plus
    # Checks, unless a test says otherwise.
    ap.add_argument("--granted", default="contents:write,"
                    "pull_requests:write,checks:write,metadata:read")
    ARGS = ap.parse_args()
    STATE["granted"] = dict(kv.split(":", 1)
                            for kv in ARGS.granted.split(",") if kv)
    ARGS.bare = os.path.join(ARGS.git_root, ARGS.owner, ARGS.repo + ".git")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    addrs = listen_addrs(ARGS.listen)
    # The tests' hooks on a port of their own: no fault reaches them.
    servers = []
    for kind, handler in (("api", API), ("git", Git), ("ctl", API)):
        group = listen_all(kind, handler, ctx, addrs)
        PORTS[kind] = group[0].server_address[1]
        servers += group
    for srv in servers[1:]:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    api = servers[0]
    holes = [silent(ARGS.silent, p) for p in PORTS.values()] \
        if ARGS.silent else []
    tmp = ARGS.ports + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d %d %d\n" % (PORTS["api"], PORTS["git"], PORTS["ctl"]))
    os.rename(tmp, ARGS.ports)
    api.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
