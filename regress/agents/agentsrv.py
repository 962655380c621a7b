#!/usr/bin/env python3
# A scripted provider double for the real agent clients (python3
# stdlib only): Anthropic Messages, OpenAI Responses and Chat
# Completions, Gemini generateContent and streamGenerateContent, as
# SSE streams with each API's own usage fields.  A conversation's
# first turn is answered with a tool call that edits a file
# (src/agent-edit.txt, through the shell tool the client's request
# offers, by its name), any later turn (the request carries
# a tool result) with a final text.  Requests that are not a model
# turn (token counting, warm-ups, model lists) get a small answer.
#
#	agentsrv.py [-c cert.pem -k key.pem] -r record.jsonl [-s shapes.jsonl]
#	    [-b bodies] [-t times.jsonl] [-p port]
#
# prints "ready PORT".  record.jsonl gets one line per request:
# method, path, headers, api, turn, model (the body's, or Gemini's
# path's: each client of regress/agents asks for its own, so their
# requests are told apart when they run at once).  With -s,
# shapes.jsonl gets the request's shape: method, path, turn (0: not a
# model turn), model, the header names (lower case, sorted) and the
# body's JSON key structure (objects as sorted keys, arrays as the
# union of their elements' shapes, scalars as their type), so a
# client whose requests change shows up as a diff.  With
# -b, bodies gets every request's body, one a line (for debugging).
# With -t (bench/agents.sh), times.jsonl gets CLOCK_REALTIME stamps in
# microseconds: {"ev": "req"} when a request's head has been read,
# {"ev": "first"} when its answer's head has been sent, {"ev": "sse"}
# per streamed event sent (n counts from 0), each with the request's
# path, api and model; and the answers are sent without Nagle's delay.

import argparse
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
EDIT = "printf 'edited by the agent\\n' > src/agent-edit.txt"
USAGE_IN, USAGE_OUT = 1200, 40

# Shell tools by name, and the arguments each takes.
SHELLS = [
    ("Bash", lambda: {"command": EDIT, "description": "edit a file"}),
    ("exec_command", lambda: {"cmd": EDIT}),
    ("shell", lambda: {"command": ["bash", "-c", EDIT]}),
    ("shell_command", lambda: {"command": EDIT}),
    ("run_shell_command", lambda: {"command": EDIT,
                                   "description": "edit a file"}),
    ("bash", lambda: {"command": EDIT}),
]


def shape(v):
    if isinstance(v, dict):
        return {k: shape(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        out = None
        for e in v:
            out = merge(out, shape(e))
        return [out] if out is not None else []
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if v is None:
        return "null"
    return "string"


def merge(a, b):
    if a is None:
        return b
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(out.get(k), v)
        return {k: out[k] for k in sorted(out)}
    if isinstance(a, list) and isinstance(b, list):
        if not a or not b:
            return a or b
        return [merge(a[0], b[0])]
    if a == b:
        return a
    alts = set(a.split("|") if isinstance(a, str) else [json.dumps(a)])
    alts |= set(b.split("|") if isinstance(b, str) else [json.dumps(b)])
    return "|".join(sorted(alts))


def tool_names(api, req):
    names = []
    for t in req.get("tools") or []:
        if api == "gemini":
            for d in t.get("functionDeclarations") or []:
                names.append(d.get("name"))
        elif api == "chat":
            names.append((t.get("function") or {}).get("name"))
        elif t.get("type") == "namespace":
            names += [x.get("name") for x in t.get("tools") or []]
        else:
            names.append(t.get("name"))
    return names


def pick_tool(api, req):
    names = tool_names(api, req)
    for n, args in SHELLS:
        if n in names:
            return n, args()
    return None, None


def later_turn(api, req):
    """True when the request carries a tool's result."""
    if api == "anthropic":
        for m in req.get("messages") or []:
            c = m.get("content")
            if isinstance(c, list) and any(
                    isinstance(b, dict) and b.get("type") == "tool_result"
                    for b in c):
                return True
    elif api == "responses":
        return any(isinstance(i, dict) and
                   i.get("type") == "function_call_output"
                   for i in req.get("input") or [])
    elif api == "chat":
        return any(m.get("role") == "tool" for m in req.get("messages") or [])
    elif api == "gemini":
        for c in req.get("contents") or []:
            for p in c.get("parts") or []:
                if "functionResponse" in p:
                    return True
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "agentsrv"

    def log_message(self, *a):
        pass

    def setup(self):
        # A provider sends each event at once; Nagle's delay (40 ms,
        # against the client's delayed ack) would be the bench's figure.
        if self.server.times:
            self.disable_nagle_algorithm = True
        super().setup()

    def stamp(self, ev, **kw):
        """A realtime stamp in times.jsonl (-t), for bench/agents.sh."""
        if not self.server.times:
            return
        t = time.clock_gettime_ns(time.CLOCK_REALTIME) // 1000
        rec = dict(ev=ev, t=t, path=self.path, **kw)
        rec.update(getattr(self, "tinfo", {}))
        with LOCK:
            with open(self.server.times, "a") as f:
                f.write(json.dumps(rec) + "\n")

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(n) if n else b""

    def model(self, req):
        """The model asked for: the body's, or Gemini's path's."""
        path = self.path.split("?")[0]
        if "/models/" in path:
            return path.split("/models/")[1].split(":")[0]
        return (req or {}).get("model") if isinstance(req, dict) else None

    def record(self, api, turn, req):
        rec = {"method": self.command, "path": self.path, "api": api,
               "turn": turn, "model": self.model(req),
               "tools": len(tool_names(api, req or {})),
               "stream": bool((req or {}).get("stream")),
               "headers": [[k, v] for k, v in self.headers.items()]}
        with LOCK:
            with open(self.server.record, "a") as f:
                f.write(json.dumps(rec) + "\n")
            if self.server.shapes:
                s = {"method": self.command, "path": self.path,
                     "turn": turn, "model": self.model(req),
                     "headers": sorted(set(k.lower()
                                           for k in self.headers.keys())),
                     "body": shape(req)}
                with open(self.server.shapes, "a") as f:
                    f.write(json.dumps(s, sort_keys=True) + "\n")

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.stamp("first")
        self.wfile.write(data)
        self.wfile.flush()

    def sse_start(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.stamp("first")
        self.nsse = 0

    def sse(self, event, obj):
        text = ("event: %s\n" % event) if event else ""
        text += "data: %s\n\n" % (obj if isinstance(obj, str)
                                  else json.dumps(obj))
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
        self.stamp("sse", n=self.nsse)
        self.nsse += 1

    def sse_end(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_HEAD(self):
        self.tinfo = {"api": "probe", "model": None}
        self.stamp("req")
        self.record("probe", 0, None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.tinfo = {"api": "other", "model": None}
        self.stamp("req")
        self.body()
        self.record("other", 0, None)
        self.send_json(200, {"data": [], "models": []})

    def do_POST(self):
        t = time.clock_gettime_ns(time.CLOCK_REALTIME) // 1000
        raw = self.body()
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        api = ("anthropic" if path.endswith("/messages") else
               "responses" if path.endswith("/responses") else
               "chat" if path.endswith("/chat/completions") else
               "gemini" if ":streamGenerateContent" in path or
               ":generateContent" in path else "other")
        turn = 2 if later_turn(api, req) else 1
        self.record(api, turn, req)
        self.tinfo = {"api": api, "turn": turn, "model": self.model(req)}
        if self.server.times:
            # Stamped when the head was read, written once the body
            # told the model.
            with LOCK:
                with open(self.server.times, "a") as f:
                    f.write(json.dumps(dict(ev="req", t=t, path=self.path,
                                            **self.tinfo)) + "\n")
        if self.server.bodies:
            with LOCK:
                with open(self.server.bodies, "ab") as f:
                    f.write(raw + b"\n")
        if api == "other":
            self.send_json(200, {"totalTokens": 10, "input_tokens": 10})
            return
        name, args = pick_tool(api, req) if turn == 1 else (None, None)
        stream = req.get("stream", api == "gemini" and
                         ":streamGenerateContent" in path)
        getattr(self, "api_" + api)(req, name, args, stream)

    # --- Anthropic Messages ---------------------------------------------

    def api_anthropic(self, req, name, args, stream):
        model = req.get("model", "m")
        usage = {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT,
                 "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if name:
            block = {"type": "tool_use", "id": "toolu_01", "name": name,
                     "input": args}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": "done"}
            stop = "end_turn"
        if not stream:
            self.send_json(200, {"id": "msg_01", "type": "message",
                                 "role": "assistant", "model": model,
                                 "content": [block], "stop_reason": stop,
                                 "stop_sequence": None, "usage": usage})
            return
        self.sse_start()
        self.sse("message_start", {"type": "message_start", "message": {
            "id": "msg_01", "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": None,
            "stop_sequence": None,
            "usage": dict(usage, output_tokens=1)}})
        if name:
            self.sse("content_block_start", {
                "type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_01",
                                  "name": name, "input": {}}})
            self.sse("content_block_delta", {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta",
                          "partial_json": json.dumps(args)}})
        else:
            self.sse("content_block_start", {
                "type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})
            self.sse("content_block_delta", {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "done"}})
        self.sse("content_block_stop", {"type": "content_block_stop",
                                        "index": 0})
        self.sse("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": USAGE_OUT}})
        self.sse("message_stop", {"type": "message_stop"})
        self.sse_end()

    # --- OpenAI Responses -----------------------------------------------

    def api_responses(self, req, name, args, stream):
        model = req.get("model", "m")
        if name:
            item = {"type": "function_call", "id": "fc_01",
                    "call_id": "call_01", "name": name,
                    "arguments": json.dumps(args), "status": "completed"}
        else:
            item = {"type": "message", "id": "msg_01", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "done",
                                 "annotations": []}]}
        usage = {"input_tokens": USAGE_IN,
                 "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": USAGE_OUT,
                 "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": USAGE_IN + USAGE_OUT}
        resp = {"id": "resp_01", "object": "response", "model": model,
                "status": "completed", "output": [item], "usage": usage}
        if not stream:
            self.send_json(200, resp)
            return
        self.sse_start()
        self.sse("response.created", {
            "type": "response.created", "sequence_number": 0,
            "response": dict(resp, status="in_progress", output=[],
                             usage=None)})
        self.sse("response.output_item.added", {
            "type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": dict(item, status="in_progress")})
        if not name:
            self.sse("response.output_text.delta", {
                "type": "response.output_text.delta", "sequence_number": 2,
                "item_id": "msg_01", "output_index": 0,
                "content_index": 0, "delta": "done"})
        self.sse("response.output_item.done", {
            "type": "response.output_item.done", "sequence_number": 3,
            "output_index": 0, "item": item})
        self.sse("response.completed", {
            "type": "response.completed", "sequence_number": 4,
            "response": resp})
        self.sse_end()

    # --- OpenAI Chat Completions ----------------------------------------

    def api_chat(self, req, name, args, stream):
        model = req.get("model", "m")
        usage = {"prompt_tokens": USAGE_IN, "completion_tokens": USAGE_OUT,
                 "total_tokens": USAGE_IN + USAGE_OUT}
        if name:
            msg = {"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": "call_01", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}]}
            fin = "tool_calls"
        else:
            msg = {"role": "assistant", "content": "done"}
            fin = "stop"
        if not stream:
            self.send_json(200, {"id": "chatcmpl-1",
                                 "object": "chat.completion", "model": model,
                                 "choices": [{"index": 0, "message": msg,
                                              "finish_reason": fin}],
                                 "usage": usage})
            return
        self.sse_start()
        self.sse(None, {"id": "chatcmpl-1", "object": "chat.completion.chunk",
                        "model": model, "choices": [{
                            "index": 0, "delta": msg, "finish_reason": None}]})
        self.sse(None, {"id": "chatcmpl-1", "object": "chat.completion.chunk",
                        "model": model, "choices": [{
                            "index": 0, "delta": {}, "finish_reason": fin}]})
        self.sse(None, {"id": "chatcmpl-1", "object": "chat.completion.chunk",
                        "model": model, "choices": [], "usage": usage})
        self.sse(None, "[DONE]")
        self.sse_end()

    # --- Gemini ------------------------------------------------------------

    def api_gemini(self, req, name, args, stream):
        if name:
            part = {"functionCall": {"name": name, "args": args}}
        else:
            part = {"text": "done"}
        obj = {"candidates": [{"content": {"role": "model",
                                           "parts": [part]},
                               "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": USAGE_IN,
                                 "candidatesTokenCount": USAGE_OUT,
                                 "totalTokenCount": USAGE_IN + USAGE_OUT},
               "modelVersion": "m", "responseId": "r1"}
        if not stream:
            self.send_json(200, obj)
            return
        self.sse_start()
        self.sse(None, obj)
        self.sse_end()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-c")
    ap.add_argument("-k")
    ap.add_argument("-r", required=True)
    ap.add_argument("-s")
    ap.add_argument("-b")
    ap.add_argument("-t")
    ap.add_argument("-p", type=int, default=0)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.p), Handler)
    srv.daemon_threads = True
    srv.record = a.r
    srv.shapes = a.s
    srv.bodies = a.b
    srv.times = a.t
    if a.c:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.c, a.k)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
