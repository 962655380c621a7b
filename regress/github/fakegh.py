#!/usr/bin/env python3
# fakegh.py: a test double of GitHub for regress/github, never shipped.
# Standard library only.  What it answers is what GitHub's documentation
# says GitHub answers: each behaviour cites, beside its code, the page it
# comes from (docs.github.com), never our publisher's code.  The faults
# that are the network's (a dropped line, a stall) are marked as such.
#
# Three HTTPS listeners (ports chosen by the kernel, written to --ports
# as "API GIT CTL"), each on every address of --listen: "auto" (the
# default: every address "localhost" resolves to, as clients will find
# it), or a comma list such as "127.0.0.1" or "::1,127.0.0.1"; each port
# is the same on all of them.  --silent ADDR also holds each port on
# ADDR with a full accept queue, so that connecting there neither
# succeeds nor fails (SYNs dropped):
#
#  API: POST /app/installations/ID/access_tokens and GET
#       /app/installations/ID (the App's JWT, checked with openssl(1)
#       against --app-pub; the installation's granted permissions, set
#       with --granted or /_control {"granted": {...}}; 422 for more),
#       GET /repos/O/R, GET/POST /repos/O/R/pulls, PATCH .../pulls/N,
#       GET .../git/ref/heads/B, DELETE .../git/refs/heads/B,
#       POST .../check-runs, GET .../commits/SHA/check-runs,
#       DELETE /installation/token; every answer with x-ratelimit-*;
#       lists paginated with link headers; --api-prefix /api/v3 (or
#       /_control {"api_prefix": ...}): GitHub Enterprise Server's base.
#  git: git http-backend behind a small CGI host, for any request with
#       Basic x-access-token:<valid, unrevoked token>; 401 otherwise; a
#       pre-receive hook enforces branch protection and rulesets.
#  CTL: the API again, for the tests' hooks: POST /_control, GET
#       /_state (tokens minted, delivered, revoked; pulls; check runs;
#       every request with its host).  No fault applies to it.
# --tokens FILE: every token issued is appended to FILE, a line each,
# before it is handed out, so that a test can grep for all of them.
#
# /_control members (each kept until set again):
#  granted {perm: level}     the installation's permissions
#  pull {title, head, base, state}  a pull request made by hand
#  set_pull {head, state, merged, recreated}  a person's hand on pulls
#  api_prefix "/api/v3"      GHES: the API there only
#  per_page_max N            GitHub's cap of per_page (100), lowered
#  link "loop"|"foreign"     a link header whose next page is the same
#                            page, or on another host
#  renamed NAME              the repository renamed: the old name 301s
#  redirect_host H           ... to a location on host H
#  rules [{ref, kind}]       refs starting with ref refused on push:
#                            kind "protected" (GH006) or "ruleset"
#                            (GH013)
#  withheld [perm]           tokens whose grant names perm are refused
#                            at its endpoints (403 Resource not
#                            accessible by integration)
#  modes {...}               wider, race422, hang_pulls, retry, faults
#
# Faults (POST /_control {"modes":{"faults":[F, ...]}}), each F
# {"server": "api"|"git", "method": M, "prefix": P, "count": N,
# "query": Q (the API: a part of the query string), "do": WHAT, ...}
# consumed by the first N requests that match.  GitHub's documented
# answers:
#  primary-limit  403 (or "status") with x-ratelimit-remaining 0 and
#                 x-ratelimit-reset now + "reset_in" s
#  secondary-limit  403 (or "status") saying a secondary rate limit,
#                 retry-after "retry_after" if given
#  status         answer "status" (500, 502, 503...) without doing the
#                 work, with Retry-After "retry_after" if given
#  status-after   do the work, then answer "status" (502, 504): the
#                 answer lost behind GitHub's front end
#  move-ref       (the API) point branch "ref" at "sha" ("": delete
#                 it), then do the work: a person's hand racing us
# The network's, not GitHub's:
#  drop-request   close (RST) right after the request's headers
#  drop-body      read part of the request body (a push), then RST
#  drop-response  do the work, send half the answer, then RST
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
         "hung": [], "check_runs": [], "granted": {},
         # GHES: the API under a path (--api-prefix, /_control).
         "api_prefix": "",
         # GitHub caps per_page at 100; a test may lower the cap.
         "per_page_max": 100,
         # "loop" (next names the same page) or "foreign" (next on
         # another host): a forge's Link header the client must bound.
         "link": None,
         # The repository's new name: the old one answers 301.
         "renamed": None, "redirect_host": None,
         # Branch protection and rulesets: [{"ref": PREFIX, "kind":
         # "protected"|"ruleset"}], enforced by a pre-receive hook.
         "rules": [],
         # Permissions the tokens' grant names but the endpoints do
         # not honour (the installation's changed since).
         "withheld": []}
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
    """None if the JWT is the App's and current, else why not.
    "Generating a JSON Web Token (JWT) for a GitHub App" (docs.github.com/
    en/apps/creating-github-apps/authenticating-with-a-github-app/
    generating-a-json-web-token-jwt-for-a-github-app): RS256, iss the
    App's id (or client id), iat and exp at most 10 minutes apart."""
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
    """The installation token of a request, if live: "Authenticating to
    the REST API" (docs.github.com/en/rest/authentication/authenticating-
    to-the-rest-api) takes "token T" and "Bearer T" alike."""
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
            # sha "": the branch deleted (someone's hand, meanwhile).
            cmd = ["refs/heads/" + f["ref"], f["sha"]] if f["sha"] else \
                ["-d", "refs/heads/" + f["ref"]]
            subprocess.run(["git", "--git-dir", ARGS.bare, "update-ref"] +
                           cmd, check=True)
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
        elif what == "primary-limit":
            # "Rate limits for the REST API", Exceeding the rate limit
            # (docs.github.com/en/rest/using-the-rest-api/rate-limits-
            # for-the-rest-api): 403 or 429, x-ratelimit-remaining 0,
            # no retry before x-ratelimit-reset (UTC epoch seconds).
            self.body()
            self.fault = None
            self.reply(f.get("status", 403),
                       {"message": "API rate limit exceeded for "
                        "installation ID %d." % ARGS.installation},
                       {"x-ratelimit-remaining": "0",
                        "x-ratelimit-reset": str(int(time.time()) +
                                                 f.get("reset_in", 60))})
        elif what == "secondary-limit":
            # The same page, secondary limits: 403 or 429 and a message
            # saying so; retry-after when GitHub gives one, else "wait
            # for at least one minute".
            self.body()
            self.fault = None
            h = {}
            if f.get("retry_after") is not None:
                h["retry-after"] = str(f["retry_after"])
            self.reply(f.get("status", 403),
                       {"message": "You have exceeded a secondary rate "
                        "limit. Please wait a few minutes before you try "
                        "again."}, h)
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
        if what == "status-after":
            # The work done, the answer lost: a slow push or call whose
            # front end gave up ("Troubleshooting the REST API",
            # Timeouts: GitHub ends a request after 10 s with a server
            # error; 502 and 504 come from its proxies).
            status = self.fault["status"]
            hdrs = {"Content-Type": "application/json"}
            data = json.dumps({"message": "Server Error"}).encode()
            what = None
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
        """A failure mode for this request, consumed, or None: the
        older spelling of fault "secondary-limit" with retry-after
        ("Rate limits for the REST API")."""
        with LOCK:
            m = STATE["modes"].get("retry")
            if m and m["count"] > 0 and method == m["method"] and \
                    path.startswith(m["prefix"]):
                m["count"] -= 1
                return m
        return None

    def reply(self, status, obj=None, headers=None, raw=None):
        """Every API answer says where the primary rate limit stands
        ("Rate limits for the REST API", Checking the status of your
        rate limit): a fault may have set its own values."""
        h = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999",
             "x-ratelimit-used": "1", "x-ratelimit-resource": "core",
             "x-ratelimit-reset": str(int(time.time()) + 3600)}
        h.update(headers or {})
        return super().reply(status, obj, h, raw)

    def route(self, method):
        u = urllib.parse.urlsplit(self.path)
        path, q = u.path, urllib.parse.parse_qs(u.query)
        self.query = u.query
        if self.server.kind != "ctl":
            # GitHub Enterprise Server serves the REST API under
            # https://HOST/api/v3 ("Getting started with the REST API",
            # docs.github.com/en/enterprise-server@latest/rest/using-
            # the-rest-api/getting-started-with-the-rest-api): nothing
            # outside it is the API.
            pre = STATE["api_prefix"]
            if pre and not path.startswith(pre + "/"):
                self.body()
                self.reply(404, {"message": "Not Found"})
                note("api", method, path, 404)
                return
            path = path[len(pre):]
            if self.fault_before("api", method, path, u.query):
                return
        body = self.body()
        status = self.dispatch(method, path, q, body)
        extra = {"host": self.headers.get("Host", "")}
        if u.query:
            extra["query"] = u.query
        note("api", method, path, status, extra)

    def url(self, path, query=""):
        """An absolute URL of this API, as GitHub writes them in
        location and link headers."""
        return "https://%s:%d%s%s%s" % (self.host(), PORTS["api"],
                                        STATE["api_prefix"], path,
                                        "?" + query if query else "")

    def page(self, items, q, path):
        """One page of a list, and its link header ("Using pagination
        in the REST API", docs.github.com/en/rest/using-the-rest-api/
        using-pagination-in-the-rest-api): per_page (30 unless asked,
        at most 100 on GitHub; a test may lower the cap), page from 1;
        next, last, prev and first where they exist, no link header
        when everything fits on one page."""
        try:
            per = int(q.get("per_page", ["30"])[0])
            pg = int(q.get("page", ["1"])[0])
        except ValueError:
            per, pg = 30, 1
        per = max(1, min(per, STATE["per_page_max"]))
        pg = max(1, pg)
        last = max(1, (len(items) + per - 1) // per)
        out = items[(pg - 1) * per:pg * per]

        def link(n, rel):
            qq = {k: v[0] for k, v in q.items()}
            qq["page"] = str(n)
            u = self.url(path, urllib.parse.urlencode(qq, safe=":/"))
            if rel == "next" and STATE["link"] == "foreign":
                u = u.replace(self.host(), "elsewhere.test", 1)
            return '<%s>; rel="%s"' % (u, rel)
        links = []
        if STATE["link"] in ("loop", "foreign"):
            links.append(link(pg if STATE["link"] == "loop" else pg + 1,
                              "next"))
        elif pg < last:
            links += [link(pg + 1, "next"), link(last, "last")]
        if pg > 1:
            links += [link(pg - 1, "prev"), link(1, "first")]
        return out, ({"link": ", ".join(links)} if links else {})

    def dispatch(self, method, path, q, body):
        if path == "/_control" and method == "POST":
            c = json.loads(body)
            with LOCK:
                if "modes" in c:
                    STATE["modes"] = c["modes"]
                if "granted" in c:
                    STATE["granted"] = c["granted"]
                for k in ("api_prefix", "per_page_max", "link", "renamed",
                          "redirect_host", "withheld"):
                    if k in c:
                        STATE[k] = c[k]
                if "rules" in c:
                    STATE["rules"] = c["rules"]
                    rules_write()
                if "pull" in c:
                    make_pull(c["pull"]["title"], c["pull"]["head"],
                              c["pull"]["base"])["state"] = \
                        c["pull"].get("state", "open")
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
        # "Revoke an installation access token" (docs.github.com/en/rest/
        # apps/installations#revoke-an-installation-access-token): 204,
        # and the token is refused from then on.
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
        path = self.moved(path)
        if path is None:
            return 301
        name = STATE["renamed"] or ARGS.repo
        repo = "/repos/%s/%s" % (ARGS.owner, name)
        # "Get a repository" (docs.github.com/en/rest/repos/repos#get-a-
        # repository): its id, full_name and clone_url.
        if path == repo and method == "GET":
            self.reply(200, {"id": ARGS.repo_id, "name": name,
                             "full_name": ARGS.owner + "/" + name,
                             "owner": {"login": ARGS.owner},
                             "clone_url": "https://%s:%d/%s/%s.git"
                             % (self.host(), PORTS["git"], ARGS.owner,
                                name)})
            return 200
        if path == repo + "/pulls" and method == "GET":
            return self.pulls_list(q, path)
        if path.startswith(repo + "/pulls") and method in ("POST",
                                                          "PATCH") and \
                self.withheld("pull_requests"):
            return 403
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
            return self.check_list(path[len(pre):-len("/check-runs")], q,
                                   path)
        self.reply(404, {"message": "Not Found"})
        return 404

    def moved(self, path):
        """A renamed repository: its old name answers 301 with the new
        location (/repositories/ID/...), which serves it; None once
        the 301 is answered.  "Best practices for using the REST API",
        Follow redirects (docs.github.com/en/rest/using-the-rest-api/
        best-practices-for-using-the-rest-api): any request may be
        redirected, a 301 is repeated at the location header's URL;
        "Renaming a repository" (docs.github.com/en/repositories/
        creating-and-managing-repositories/renaming-a-repository):
        the old name keeps redirecting, git included."""
        old = "/repos/%s/%s" % (ARGS.owner, ARGS.repo)
        byid = "/repositories/%d" % ARGS.repo_id
        if STATE["renamed"] and (path == old or
                                 path.startswith(old + "/")):
            loc = self.url(byid + path[len(old):], self.query)
            if STATE["redirect_host"]:
                loc = loc.replace(self.host(), STATE["redirect_host"], 1)
            self.reply(301, {"message": "Moved Permanently", "url": loc},
                       {"location": loc})
            return None
        if path == byid or path.startswith(byid + "/"):
            return "/repos/%s/%s%s" % (ARGS.owner, STATE["renamed"] or
                                       ARGS.repo, path[len(byid):])
        return path

    def withheld(self, perm):
        """403 answered (True) when the token does not cover perm:
        "Troubleshooting the REST API", Resource not accessible
        (docs.github.com/en/rest/using-the-rest-api/troubleshooting-
        the-rest-api): an installation token with too few permissions
        gets "Resource not accessible by integration", and
        X-Accepted-GitHub-Permissions names what the endpoint needs."""
        t = token_of(self.headers)
        with LOCK:
            perms = STATE["tokens"][t]["permissions"]
            off = perm in STATE["withheld"]
        if perms.get(perm) == "write" and not off:
            return False
        self.reply(403, {"message": "Resource not accessible by "
                         "integration"},
                   {"X-Accepted-GitHub-Permissions": perm + "=write"})
        return True

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
        """"Get an installation for the authenticated app" (docs.github.
        com/en/rest/apps/apps#get-an-installation-for-the-authenticated-
        app), with the App's JWT: what the installation was granted."""
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
        """"Create an installation access token for an app" (docs.github.
        com/en/rest/apps/apps#create-an-installation-access-token-for-an-
        app), with the App's JWT: 201 and a token for the repositories
        and permissions asked; 422 "The permissions requested are not
        granted to this installation." for more than it holds."""
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

    def pulls_list(self, q, path):
        """"List pull requests" (docs.github.com/en/rest/pulls/pulls#
        list-pull-requests): state open unless asked, head as
        OWNER:BRANCH (without OWNER: the filter does nothing), base;
        sorted by creation, newest first; paginated."""
        head = q.get("head", [None])[0]
        base = q.get("base", [None])[0]
        state = q.get("state", ["open"])[0]
        with LOCK:
            out = [p for p in STATE["pulls"]
                   if state == "all" or p["state"] == state]
            if head is not None and ":" in head:
                out = [p for p in out if p["head"]["label"] == head]
            if base is not None:
                out = [p for p in out if p["base"]["ref"] == base]
            out, h = self.page(out[::-1], q, path)
            self.reply(200, out, h)
        return 200

    def invalid(self, errors):
        """422 "Validation Failed" with its errors ("Troubleshooting
        the REST API", Validation Failed: resource, field and code,
        or code custom and a message)."""
        self.reply(422, {"message": "Validation Failed", "errors": errors,
                         "documentation_url": "https://docs.github.com/"
                         "rest/pulls/pulls#create-a-pull-request"})
        return 422

    def pulls_create(self, req):
        """"Create a pull request" (docs.github.com/en/rest/pulls/
        pulls#create-a-pull-request): 201, or 422 for a head or base
        that is not a branch, a head that already has an open pull
        request, or a head with nothing the base lacks."""
        head, base = req.get("head", ""), req.get("base", "")
        for field, b in (("head", head), ("base", base)):
            if branch_sha(b) is None:
                return self.invalid([{"resource": "PullRequest",
                                      "field": field, "code": "invalid"}])
        if not STATE["modes"].get("race422") and \
                not STATE["modes"].get("hang_pulls") and \
                not [p for p in STATE["pulls"] if p["state"] == "open"
                     and p["head"]["ref"] == head] and \
                subprocess.run(["git", "--git-dir", ARGS.bare,
                                "merge-base", "--is-ancestor",
                                "refs/heads/" + head,
                                "refs/heads/" + base]).returncode == 0:
            return self.invalid([{"resource": "PullRequest",
                                  "code": "custom",
                                  "message": "No commits between %s and "
                                  "%s" % (base, head)}])
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
                    return self.invalid([{"resource": "PullRequest",
                                          "code": "custom",
                                          "message": "A pull request "
                                          "already exists for %s:%s." %
                                          (ARGS.owner, head)}])
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
        """"Update a pull request" (docs.github.com/en/rest/pulls/pulls#
        update-a-pull-request): state open or closed.  A closed one
        whose head branch moved since is not reopened: the page says
        only 422, GitHub's web pages say why."""
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
        """"Get a reference" (docs.github.com/en/rest/git/refs#get-a-
        reference): 404 for a branch that is not there."""
        sha = branch_sha(branch)
        if sha is None:
            self.reply(404, {"message": "Not Found"})
            return 404
        self.reply(200, {"ref": "refs/heads/" + branch,
                         "object": {"sha": sha, "type": "commit"}})
        return 200

    def ref_delete(self, branch):
        """"Delete a reference" (docs.github.com/en/rest/git/refs#delete-
        a-reference): 204, 422 "Reference does not exist".  "Deleting and
        restoring branches in a pull request" (docs.github.com/en/
        repositories/configuring-branches-and-merges-in-your-repository/
        managing-branches-in-your-repository/deleting-and-restoring-
        branches-in-a-pull-request): an open pull request whose branch
        goes is closed."""
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
        """"Create a check run" (docs.github.com/en/rest/checks/runs#
        create-a-check-run): the token needs checks: write."""
        if self.withheld("checks"):
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

    def check_list(self, sha, q, path):
        """"List check runs for a Git reference" (docs.github.com/en/
        rest/checks/runs#list-check-runs-for-a-git-reference): an
        object, total_count and one page of check_runs."""
        name = q.get("check_name", [None])[0]
        with LOCK:
            out = [r for r in STATE["check_runs"] if r["head_sha"] == sha
                   and (name is None or r["name"] == name)]
        runs, h = self.page(out, q, path)
        self.reply(200, {"total_count": len(out), "check_runs": runs}, h)
        return 200


class Git(Handler):
    def do_GET(self):
        self.cgi("GET")

    def do_POST(self):
        self.cgi("POST")

    def cgi(self, method):
        """git smart HTTP with the installation token as the password of
        x-access-token ("Authenticating as a GitHub App installation",
        docs.github.com/en/apps/creating-github-apps/authenticating-with-
        a-github-app/authenticating-as-a-github-app-installation)."""
        u = urllib.parse.urlsplit(self.path)
        if self.fault_before("git", method, u.path):
            return
        gitpath = u.path
        if STATE["renamed"]:
            # git to the new name is the repository ("Renaming a
            # repository": the old name works too).
            new = "/%s/%s.git/" % (ARGS.owner, STATE["renamed"])
            if gitpath.startswith(new):
                gitpath = "/%s/%s.git/%s" % (ARGS.owner, ARGS.repo,
                                             gitpath[len(new):])
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
               "PATH_INFO": gitpath, "QUERY_STRING": u.query,
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
        if gitpath.endswith("/git-receive-pack") and STATE["rules"]:
            out = declined_as_github(out)
        self.send_answer(status, hdrs, out)
        note("git", method, u.path, status, {"query": u.query})


# Branch protection and rulesets, as a push meets them.  GitHub runs
# its checks as a pre-receive hook: git prints the hook's lines as
# "remote: error: ..." and the ref as "[remote rejected] (REASON)".
# "About protected branches" (docs.github.com/en/repositories/
# configuring-branches-and-merges-in-your-repository/managing-protected-
# branches/about-protected-branches): "GH006: Protected branch update
# failed for REF.", reason "protected branch hook declined".
# "Working with push protection from the command line" (docs.github.com/
# en/code-security/secret-scanning/working-with-secret-scanning-and-push-
# protection/working-with-push-protection-from-the-command-line) and
# "Available rules for rulesets" (docs.github.com/en/repositories/
# configuring-branches-and-merges-in-your-repository/managing-rulesets/
# available-rules-for-rulesets), "Restrict creations": "GH013:
# Repository rule violations found for REF.", reason "push declined
# due to repository rule violations".
HOOK = """#!/usr/bin/env python3
import json, sys
try:
    rules = json.load(open(%r))
except OSError:
    sys.exit(0)
bad = 0
for line in sys.stdin:
    ref = line.split()[2]
    for r in rules:
        if not ref.startswith(r["ref"]):
            continue
        bad = 1
        if r["kind"] == "protected":
            sys.stderr.write("error: GH006: Protected branch update "
                             "failed for %%s.\\n" %% ref)
            sys.stderr.write("error: Changes must be made through a "
                             "pull request.\\n")
        else:
            sys.stderr.write("error: GH013: Repository rule violations "
                             "found for %%s.\\n\\n" %% ref)
            sys.stderr.write("- Cannot create ref due to creations being "
                             "restricted.\\n")
sys.exit(bad)
"""
REASONS = {b"GH006": b"protected branch hook declined",
           b"GH013": b"push declined due to repository rule violations"}


def rules_write():
    """Caller holds LOCK."""
    tmp = ARGS.rules + ".tmp"
    with open(tmp, "w") as f:
        json.dump(STATE["rules"], f)
    os.rename(tmp, ARGS.rules)


def pkts(data):
    """pkt-lines (git's protocol-common(5)): payloads, None a flush."""
    i = 0
    while i + 4 <= len(data):
        n = int(data[i:i + 4], 16)
        if n == 0:
            yield None
            i += 4
            continue
        yield data[i + 4:i + n]
        i += n


def pkt(b):
    return b"%04x" % (len(b) + 4) + b if b is not None else b"0000"


def declined_as_github(out):
    """git's "pre-receive hook declined" in receive-pack's report, as
    GitHub words it for the rule the hook named."""
    code = b"GH006" if b"GH006" in out else b"GH013" if b"GH013" in out \
        else None
    if code is None:
        return out
    def reframed(report):
        lines = [x.replace(b"pre-receive hook declined", REASONS[code])
                 if x else x for x in pkts(report)]
        return pkt(b"\x01" + b"".join(pkt(x) for x in lines))
    new, report = b"", b""
    for p in pkts(out):
        if p is not None and p[:1] == b"\x01":
            report += p[1:]
            continue
        if p is None and report:
            new += reframed(report)
            report = b""
        new += pkt(p)
    return new + (reframed(report) if report else b"")


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
    ap.add_argument("--api-prefix", default="")
    # What the installation was granted: the man page's set-up plus
    # Checks, unless a test says otherwise.
    ap.add_argument("--granted", default="contents:write,"
                    "pull_requests:write,checks:write,metadata:read")
    ARGS = ap.parse_args()
    STATE["granted"] = dict(kv.split(":", 1)
                            for kv in ARGS.granted.split(",") if kv)
    ARGS.bare = os.path.join(ARGS.git_root, ARGS.owner, ARGS.repo + ".git")
    STATE["api_prefix"] = ARGS.api_prefix
    ARGS.rules = os.path.join(ARGS.dir, "rules.json")
    hook = os.path.join(ARGS.bare, "hooks", "pre-receive")
    os.makedirs(os.path.dirname(hook), exist_ok=True)
    with open(hook, "w") as f:
        f.write(HOOK % ARGS.rules)
    os.chmod(hook, 0o755)
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
