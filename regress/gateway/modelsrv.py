#!/usr/bin/env python3
# A loopback HTTPS double of the model providers (python3 stdlib only):
# enough of OpenAI Chat Completions and Responses, of Anthropic
# Messages and of Gemini's generateContent, as JSON and as SSE streams with their usage fields, plus
# the failures a gateway must survive: 4xx/5xx answers, a connection
# dropped mid-stream, a stall, a chunked answer.  Any other path
# answers as an upstream would (a small JSON echo).  Every request
# (method, path, headers, body) is appended to the record file as one
# JSON line.
#
#	modelsrv.py -c cert.pem -k key.pem -r record.jsonl [-p port]
#
# prints "ready PORT".  The request body steers the double (fields the
# gateway forwards untouched): "mode" (ok, error4xx, error5xx, drop,
# stall: "stall_s" seconds after the first event, 60 by default,
# chunked), "usage_in", "usage_out", "deltas" (stream events
# with 6 characters of text each), "text" (characters of text in each
# chat delta instead), "delay" (seconds between them), "wait" (seconds
# before answering), "hold" (a path: no answer while it exists, 120 s
# at most), "honor" (true: usage_out is at most the request's
# max_tokens, max_completion_tokens or max_output_tokens).  An upstream
# GET of a path ending in /big/N answers N bytes (Content-Length).

import argparse
import json
import os
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "modelsrv"

    def log_message(self, *a):
        pass

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

    def record(self, body):
        rec = {"method": self.command, "path": self.path,
               "headers": [[k, v] for k, v in self.headers.items()],
               "body": body.decode("utf-8", "replace")}
        with LOCK:
            with open(self.server.record, "a") as f:
                f.write(json.dumps(rec) + "\n")

    def send_json(self, code, obj, chunked=False):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(data), 7):
                part = data[i:i + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        self.wfile.flush()

    def sse_start(self):
        if getattr(self, "sse_started", False):
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def sse_bytes(self, event, obj):
        text = ""
        if event:
            text += "event: %s\n" % event
        text += "data: %s\n\n" % (obj if isinstance(obj, str)
                                  else json.dumps(obj))
        data = text.encode()
        return b"%x\r\n%s\r\n" % (len(data), data)

    def write_chunk(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    def sse(self, event, obj):
        self.write_chunk(self.sse_bytes(event, obj))

    def big(self, n):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(n))
        self.end_headers()
        block = b"x" * (1 << 20)
        while n > 0:
            self.wfile.write(block[:min(n, len(block))])
            n -= min(n, len(block))
        self.wfile.flush()

    def sse_end(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def failure(self, req, mode):
        if mode == "error4xx":
            self.send_json(400, {"error": {"message": "bad model input",
                                           "type": "invalid_request"}})
            return True
        if mode == "error5xx":
            self.send_json(500, {"error": {"message": "overloaded",
                                           "type": "server_error"}})
            return True
        return False

    def deltas(self, req, each):
        """Yield between stream events; drop or stall as asked."""
        n = int(req.get("deltas", 3))
        delay = float(req.get("delay", 0))
        for i in range(n):
            each(i)
            if req.get("mode") == "drop" and i == 1:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                raise ConnectionError("dropped")
            if req.get("mode") == "stall" and i == 0:
                time.sleep(float(req.get("stall_s", 60)))
            if delay:
                time.sleep(delay)

    def big_json(self, n, uin, uout):
        """A chat completion with n characters of text, written as it
        is made: its first bytes go at once, however large (a string
        made whole first took seconds, which the gateway's timeout
        raced on a slow machine)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        head = (b'{"id":"chatcmpl-1","object":"chat.completion","choices":'
                b'[{"index":0,"message":{"role":"assistant","content":"')
        tail = (b'"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,'
                b'"completion_tokens":%d}}' % (uin, uout))
        self.write_chunk(b"%x\r\n%s\r\n" % (len(head), head))
        block = b"x" * (1 << 20)
        while n > 0:
            part = block[:min(n, len(block))]
            self.write_chunk(b"%x\r\n%s\r\n" % (len(part), part))
            n -= len(part)
        self.write_chunk(b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail))

    def chat(self, req):
        uin, uout = int(req.get("usage_in", 10)), int(req.get("usage_out", 20))
        if not req.get("stream") and int(req.get("text", 0)) > (1 << 20):
            self.big_json(int(req["text"]), uin, uout)
            return
        if not req.get("stream"):
            self.send_json(200, {
                "id": "chatcmpl-1", "object": "chat.completion",
                "model": req.get("model"),
                "choices": [{"index": 0, "message": {
                    "role": "assistant", "content": "hello" if "text"
                    not in req else "x" * int(req["text"])},
                    "finish_reason": "stop"}],
                "usage": {"prompt_tokens": uin, "completion_tokens": uout,
                          "total_tokens": uin + uout}},
                chunked=req.get("mode") == "chunked")
            return
        self.sse_start()
        text = "hello " if "text" not in req else "x" * int(req["text"])
        ev = self.sse_bytes(None, {
            "id": "chatcmpl-1", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": text}}],
            "usage": None})
        self.deltas(req, lambda i: self.write_chunk(ev))
        if (req.get("stream_options") or {}).get("include_usage"):
            self.sse(None, {"id": "chatcmpl-1",
                            "object": "chat.completion.chunk",
                            "choices": [],
                            "usage": {"prompt_tokens": uin,
                                      "completion_tokens": uout}})
        self.sse(None, "[DONE]")
        self.sse_end()

    def api_responses(self, req):
        uin, uout = int(req.get("usage_in", 10)), int(req.get("usage_out", 20))
        usage = {"input_tokens": uin, "output_tokens": uout,
                 "total_tokens": uin + uout}
        if not req.get("stream"):
            self.send_json(200, {"id": "resp_1", "object": "response",
                                 "status": "completed", "usage": usage})
            return
        self.sse_start()
        self.sse("response.created", {"type": "response.created",
                                      "response": {"id": "resp_1"}})
        self.deltas(req, lambda i: self.sse(
            "response.output_text.delta",
            {"type": "response.output_text.delta", "delta": "hello "}))
        self.sse("response.completed", {
            "type": "response.completed",
            "response": {"id": "resp_1", "status": "completed",
                         "usage": usage}})
        self.sse_end()

    def messages(self, req):
        uin, uout = int(req.get("usage_in", 10)), int(req.get("usage_out", 20))
        usage = {"input_tokens": uin}
        # Prompt caching: "cache_5m", "cache_1h" (written), "cache_read".
        w5, w1h = int(req.get("cache_5m", 0)), int(req.get("cache_1h", 0))
        if w5 or w1h or req.get("cache_read"):
            usage["cache_creation_input_tokens"] = w5 + w1h
            usage["cache_read_input_tokens"] = int(req.get("cache_read", 0))
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": w5,
                                       "ephemeral_1h_input_tokens": w1h}
        if not req.get("stream"):
            self.send_json(200, {
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": "hello"}],
                "usage": dict(usage, output_tokens=uout)})
            return
        self.sse_start()
        self.sse("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message",
            "usage": dict(usage, output_tokens=1)}})
        self.sse("content_block_start", {"type": "content_block_start",
                                         "index": 0})
        self.deltas(req, lambda i: self.sse("content_block_delta", {
            "type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "hello "}}))
        self.sse("content_block_stop", {"type": "content_block_stop",
                                        "index": 0})
        self.sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": "end_turn"},
                                   "usage": {"output_tokens": uout}})
        self.sse("message_stop", {"type": "message_stop"})
        self.sse_end()

    def gemini(self, req, stream):
        """Gemini's generateContent and streamGenerateContent (SSE,
        ?alt=sse): its steering fields in "labels", the one free map
        of its request (a budgeted grant refuses other fields)."""
        lab = req.get("labels") or {}
        uin, uout = int(lab.get("usage_in", 10)), int(lab.get("usage_out", 20))
        think, cached = int(lab.get("thoughts", 0)), int(lab.get("cached", 0))
        gc = req.get("generationConfig") or {}
        if lab.get("honor") and isinstance(gc.get("maxOutputTokens"), int):
            uout = min(uout, gc["maxOutputTokens"])
        usage = {"promptTokenCount": uin, "candidatesTokenCount": uout,
                 "totalTokenCount": uin + uout + think}
        if think:
            usage["thoughtsTokenCount"] = think
        if cached:
            usage["cachedContentTokenCount"] = cached

        def chunk(text, u):
            return {"candidates": [{"content": {"role": "model", "parts":
                    [{"text": text}]}, "index": 0}], "usageMetadata": u,
                    "modelVersion": "gemini-test"}
        if not stream:
            self.send_json(200, chunk("hello", usage))
            return
        self.sse_start()
        for k in ("deltas", "delay"):
            if k in lab:
                req[k] = lab[k]
        self.deltas(req, lambda i: self.sse(None, chunk(
            "hello ", {"promptTokenCount": uin, "totalTokenCount": uin})))
        last = chunk("", usage)
        last["candidates"][0]["finishReason"] = "STOP"
        self.sse(None, last)
        self.sse_end()

    def handle_any(self):
        body = self.body()
        self.record(body)
        path = self.path.split("?")[0]
        try:
            req = json.loads(body) if body else {}
        except ValueError:
            req = {}
        if not isinstance(req, dict):
            req = {}
        if req.get("wait"):
            time.sleep(float(req["wait"]))
        self.sse_started = False
        if isinstance(req.get("hold"), str):
            # A stream says it is alive while it holds: the gateway's
            # timeout is for silence, not for the hold.
            end = time.time() + 120
            while os.path.exists(req["hold"]) and time.time() < end:
                if req.get("stream"):
                    if not self.sse_started:
                        self.sse_start()
                        self.sse_started = True
                    self.write_chunk(b"8\r\n: hold\n\n\r\n")
                time.sleep(0.5)
        if req.get("honor"):
            cap = [req[k] for k in ("max_tokens", "max_completion_tokens",
                                    "max_output_tokens")
                   if isinstance(req.get(k), int)]
            if cap:
                req["usage_out"] = min([int(req.get("usage_out", 20))] + cap)
        try:
            if self.failure(req, req.get("mode")):
                return
            if self.command == "POST" and path.endswith("/chat/completions"):
                self.chat(req)
            elif self.command == "POST" and path.endswith("/responses"):
                self.api_responses(req)
            elif self.command == "POST" and path.endswith("/messages"):
                self.messages(req)
            elif self.command == "POST" and path.endswith(
                    ":streamGenerateContent"):
                self.gemini(req, True)
            elif self.command == "POST" and path.endswith(
                    ":generateContent"):
                self.gemini(req, False)
            elif self.command == "GET" and "/big/" in path:
                self.big(int(path.rsplit("/", 1)[1]))
            elif self.command == "GET" and path.endswith("/models"):
                self.send_json(200, {"object": "list", "data": [
                    {"id": "gpt-test", "object": "model"}]})
            elif self.command == "HEAD":
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self.send_json(200, {"upstream": True,
                                     "method": self.command,
                                     "path": self.path})
        except (ConnectionError, BrokenPipeError, ssl.SSLError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-c", required=True)
    ap.add_argument("-k", required=True)
    ap.add_argument("-r", required=True)
    ap.add_argument("-p", type=int, default=0)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.p), Handler)
    srv.daemon_threads = True
    srv.record = a.r
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.c, a.k)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
