"""A small OpenAI-compatible HTTP server that answers the way vLLM and SGLang do, for tests.

It serves ``GET /v1/models``, ``POST /v1/completions`` and ``POST /v1/chat/completions`` (plain JSON or
SSE streaming: ``data: {json}`` events of a few tokens each, then ``data: [DONE]``), with error bodies in
the current vLLM/OpenAI shape ``{"error": {"message", "type", "param", "code"}}`` or the older
vLLM/SGLang shape ``{"object": "error", "message", "type", "param", "code"}``.

Each completion request takes the next scripted :class:`Reply` (or a default one), which can delay the
first byte, stall mid-stream, drop the connection, fail with a status (and ``Retry-After``), send an error
event mid-stream, or ignore ``n``.  Every request is recorded (headers and JSON body) and a client that
goes away mid-reply is noticed and recorded.

In-process (tests)::

    with FakeOpenAIServer(model="m") as fake:
        fake.script(Reply(status=500), Reply(text="x + 1"))
        ...  # talk to fake.url ("http://127.0.0.1:PORT/v1")
        fake.requests, fake.wait_disconnect(1.0)

Standalone (for other test suites, e.g. the LSP daemon's)::

    python tests/fake_openai_server.py --port 0 --model m --text "x + 1" [--api-key KEY]

prints ``fake-openai listening on http://127.0.0.1:PORT/v1`` and serves until killed.  Other processes
script it through control endpoints: ``POST /_fake/script`` (a JSON list of Reply fields),
``POST /_fake/reset``, ``GET /_fake/requests``, ``GET /_fake/disconnects``.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import select
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("fake_openai_server")

COMPLETION_PATHS = ("/v1/completions", "/v1/chat/completions")


@dataclass
class Reply:
    """How the server answers one completion request."""

    text: str | list[str] | None = None  # the completion; a list gives choice i text[i % len]; None: default
    status: int = 200  # >= 400: answer with an error body
    error_message: str = "fake server error"
    error_format: str = "openai"  # "openai" ({"error": {...}}), "legacy" ({"object": "error", ...}), "plain"
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers (e.g. Retry-After)
    delay_s: float = 0.0  # wait before the status line (time to first byte)
    chunk_chars: int = 6  # characters per streamed event (a few tokens; vLLM's dLLM sends a canvas at once)
    chunk_interval_s: float = 0.0  # pause between streamed content events
    stall_after_chunks: int | None = None  # after this many content events, stop sending (up to stall_s)
    stall_s: float = 30.0
    close_after_chunks: int | None = None  # after this many content events, drop the TCP connection
    error_after_chunks: int | None = None  # after this many content events, send an error event and [DONE]
    error_code: int = 500  # code of the mid-stream error event
    ignore_n: bool = False  # answer one choice whatever "n" asks (servers without n support)
    ignore_stop: bool = False  # do not cut the text at the request's stop strings
    finish_reason: str = "stop"  # e.g. "length": the reply stopped at max_tokens

    def text_for(self, index: int, default: str) -> str:
        if self.text is None:
            return default
        if isinstance(self.text, list):
            return self.text[index % len(self.text)] if self.text else ""
        return self.text


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any
    at: float  # time.monotonic() when received
    # "pending", "complete", "disconnected" (the client went away), "closed" (we dropped it), "error"
    outcome: str = "pending"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client resetting an idle keep-alive connection (after it dropped a stream) is routine.
        if isinstance(sys.exc_info()[1], OSError):
            log.debug("connection from %s ended: %s", client_address, sys.exc_info()[1])
            return
        super().handle_error(request, client_address)


class FakeOpenAIServer:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "fake-diffusiongemma",
        default_text: str = "return 42",
        api_key: str | None = None,
        extra_models: tuple[str, ...] = (),
        max_model_len: int = 8192,
    ) -> None:
        self.host = host
        self.model = model
        self.default_text = default_text
        self.api_key = api_key
        self.extra_models = tuple(extra_models)
        self.max_model_len = max_model_len
        self._lock = threading.Lock()
        self._script: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._disconnects: list[str] = []
        self._disconnect_event = threading.Event()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and inspection ------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next completion requests (then the default reply again)."""
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self._requests.clear()
            self._disconnects.clear()
            self._disconnect_event.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def completion_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path in COMPLETION_PATHS]

    @property
    def disconnects(self) -> list[str]:
        with self._lock:
            return list(self._disconnects)

    def wait_disconnect(self, timeout: float) -> bool:
        """True once a client has gone away in the middle of a reply."""
        return self._disconnect_event.wait(timeout)

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else Reply()

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _note_disconnect(self, req: RecordedRequest) -> None:
        req.outcome = "disconnected"
        with self._lock:
            self._disconnects.append(req.path)
        self._disconnect_event.set()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/0.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        log.debug("%s " + format, self.address_string(), *args)

    @property
    def fake(self) -> FakeOpenAIServer:
        return self.server.fake

    # -- low-level helpers -------------------------------------------------------------------------

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if readable:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
        return False

    def _wait(self, seconds: float) -> bool:
        """Sleep, watching the socket; False as soon as the client has disconnected (or we stop)."""
        end = time.monotonic() + seconds
        while True:
            if self._client_gone() or self.fake._stopping.is_set():
                return False
            left = end - time.monotonic()
            if left <= 0:
                return True
            time.sleep(min(0.005, left))

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error_body(
        self, status: int, message: str, fmt: str = "openai", headers: dict[str, str] | None = None
    ):
        kind = {
            400: "BadRequestError",
            401: "AuthenticationError",
            404: "NotFoundError",
            429: "RateLimitError",
        }
        etype = kind.get(status, "InternalServerError" if status >= 500 else "BadRequestError")
        if fmt == "legacy":
            body: Any = {"object": "error", "message": message, "type": etype, "param": None, "code": status}
        elif fmt == "plain":
            data = message.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            return
        else:
            body = {"error": {"message": message, "type": etype, "param": None, "code": status}}
        self._send_json(status, body, headers)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _event(self, obj: Any) -> None:
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        self._write_chunk(f"data: {payload}\n\n".encode())

    def _abort(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- routes ----------------------------------------------------------------------------------------

    def _recorded(self, body: Any) -> RecordedRequest:
        req = RecordedRequest(
            method=self.command,
            path=urlsplit(self.path).path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            at=time.monotonic(),
        )
        self.fake._record(req)
        return req

    def _authorized(self) -> bool:
        key = self.fake.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._send_json(401, {"error": "Unauthorized"})  # what vLLM's --api-key middleware answers
        return False

    def do_GET(self) -> None:  # noqa: N802 (stdlib name)
        path = urlsplit(self.path).path
        try:
            if path == "/_fake/requests":
                self._send_json(200, [r.to_json() for r in self.fake.requests])
            elif path == "/_fake/disconnects":
                self._send_json(200, self.fake.disconnects)
            elif path == "/health":
                self._send_json(200, {})
            elif path == "/v1/models":
                req = self._recorded(None)
                if self._authorized():
                    now = int(time.time())
                    data = [
                        {
                            "id": name,
                            "object": "model",
                            "created": now,
                            "owned_by": "vllm",
                            "root": name,
                            "parent": None,
                            "max_model_len": self.fake.max_model_len,
                        }
                        for name in (self.fake.model, *self.fake.extra_models)
                    ]
                    self._send_json(200, {"object": "list", "data": data})
                req.outcome = "complete"
            else:
                self._send_error_body(404, f"no route {path}")
        except OSError:
            self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802 (stdlib name)
        path = urlsplit(self.path).path
        try:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
                if path in COMPLETION_PATHS:
                    self._recorded(raw.decode(errors="replace"))
                self._send_error_body(400, "request body is not valid JSON")
                return
            if path == "/_fake/script":
                names = {f.name for f in fields(Reply)}
                self.fake.script(*[Reply(**{k: v for k, v in d.items() if k in names}) for d in body or []])
                self._send_json(200, {"ok": True})
            elif path == "/_fake/reset":
                self.fake.reset()
                self._send_json(200, {"ok": True})
            elif path in COMPLETION_PATHS:
                req = self._recorded(body)
                if self._authorized():
                    self._completion(req, path == "/v1/chat/completions", body)
                elif req.outcome == "pending":
                    req.outcome = "complete"
            else:
                self._send_error_body(404, f"no route {path}")
        except OSError:
            self.close_connection = True

    def _completion(self, req: RecordedRequest, chat: bool, body: Any) -> None:
        fake = self.fake
        reply = fake._next_reply()
        if reply.delay_s > 0 and not self._wait(reply.delay_s):
            fake._note_disconnect(req)
            self.close_connection = True
            return
        if reply.status >= 400:
            self._send_error_body(reply.status, reply.error_message, reply.error_format, reply.headers)
            req.outcome = "error"
            return
        if not isinstance(body, dict):
            self._send_error_body(400, "expected a JSON object", reply.error_format)
            req.outcome = "error"
            return
        if body.get("model") not in (fake.model, *fake.extra_models):
            msg = f"The model `{body.get('model')}` does not exist."
            self._send_error_body(404, msg, reply.error_format)
            req.outcome = "error"
            return
        if chat and not isinstance(body.get("messages"), list):
            self._send_error_body(400, "messages: field required", reply.error_format)
            req.outcome = "error"
            return
        if not chat and not isinstance(body.get("prompt"), (str, list)):
            self._send_error_body(400, "prompt: field required", reply.error_format)
            req.outcome = "error"
            return
        n = 1 if reply.ignore_n else max(1, int(body.get("n") or 1))
        stops = body.get("stop") or []
        if isinstance(stops, str):
            stops = [stops]
        texts, finish = [], []
        for i in range(n):
            text = reply.text_for(i, fake.default_text)
            reason = reply.finish_reason
            if not reply.ignore_stop:
                cuts = [text.find(s) for s in stops if s and s in text]
                if cuts:
                    text = text[: min(cuts)]
            texts.append(text)
            finish.append(reason)
        if body.get("stream"):
            self._stream(req, chat, reply, texts, finish)
        else:
            self._full(req, chat, texts, finish)

    def _full(self, req: RecordedRequest, chat: bool, texts: list[str], finish: list[str]) -> None:
        created = int(time.time())
        if chat:
            choices = [
                {
                    "index": i,
                    "message": {
                        "role": "assistant",
                        "content": t,
                        "reasoning_content": None,
                        "tool_calls": [],
                    },
                    "logprobs": None,
                    "finish_reason": finish[i],
                    "stop_reason": None,
                }
                for i, t in enumerate(texts)
            ]
            obj = {"id": f"chatcmpl-fake-{id(req)}", "object": "chat.completion", "created": created}
        else:
            choices = [
                {"index": i, "text": t, "logprobs": None, "finish_reason": finish[i], "stop_reason": None}
                for i, t in enumerate(texts)
            ]
            obj = {"id": f"cmpl-fake-{id(req)}", "object": "text_completion", "created": created}
        out = sum(max(1, len(t) // 4) for t in texts)
        obj.update(
            {
                "model": self.fake.model,
                "choices": choices,
                "usage": {"prompt_tokens": 10, "completion_tokens": out, "total_tokens": 10 + out},
            }
        )
        self._send_json(200, obj)
        req.outcome = "complete"

    def _stream(
        self, req: RecordedRequest, chat: bool, reply: Reply, texts: list[str], finish: list[str]
    ) -> None:
        fake = self.fake
        created = int(time.time())
        rid = f"{'chatcmpl' if chat else 'cmpl'}-fake-{id(req)}"
        obj_name = "chat.completion.chunk" if chat else "text_completion"

        def frame(index: int, piece: str | None, reason: str | None, role: bool = False) -> dict[str, Any]:
            if chat:
                delta: dict[str, Any] = {}
                if role:
                    delta = {"role": "assistant", "content": ""}
                elif piece is not None:
                    delta = {"content": piece}
                choice: dict[str, Any] = {
                    "index": index,
                    "delta": delta,
                    "logprobs": None,
                    "finish_reason": reason,
                }
            else:
                choice = {"index": index, "text": piece or "", "logprobs": None, "finish_reason": reason}
                choice["stop_reason"] = None
            return {
                "id": rid,
                "object": obj_name,
                "created": created,
                "model": fake.model,
                "choices": [choice],
            }

        size = max(1, reply.chunk_chars)
        pieces = [[t[j : j + size] for j in range(0, len(t), size)] for t in texts]
        content: list[dict[str, Any]] = []
        for j in range(max((len(p) for p in pieces), default=0)):
            for i, p in enumerate(pieces):
                if j < len(p):
                    content.append(frame(i, p[j], None))

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if chat:
                for i in range(len(texts)):
                    self._event(frame(i, None, None, role=True))
            for sent, ev in enumerate(content):
                if reply.close_after_chunks is not None and sent == reply.close_after_chunks:
                    req.outcome = "closed"
                    self._abort()
                    return
                if reply.error_after_chunks is not None and sent == reply.error_after_chunks:
                    self._event(
                        {
                            "error": {
                                "message": reply.error_message,
                                "type": "InternalServerError",
                                "param": None,
                                "code": reply.error_code,
                            }
                        }
                    )
                    self._event("[DONE]")
                    self.wfile.write(b"0\r\n\r\n")
                    req.outcome = "error"
                    return
                if reply.stall_after_chunks is not None and sent == reply.stall_after_chunks:
                    if not self._wait(reply.stall_s):
                        fake._note_disconnect(req)
                        self.close_connection = True
                        return
                elif sent and reply.chunk_interval_s > 0 and not self._wait(reply.chunk_interval_s):
                    fake._note_disconnect(req)
                    self.close_connection = True
                    return
                if self._client_gone():
                    fake._note_disconnect(req)
                    self.close_connection = True
                    return
                self._event(ev)
            for i in range(len(texts)):
                self._event(frame(i, None if chat else "", finish[i]))
            self._event("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            req.outcome = "complete"
        except OSError:
            fake._note_disconnect(req)
            self.close_connection = True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="OpenAI-compatible fake of a vLLM/SGLang server, for tests.")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    ap.add_argument("--model", default="fake-diffusiongemma")
    ap.add_argument("--text", default="return 42", help="default completion text")
    ap.add_argument("--api-key", default=None, help="require this Bearer key")
    args = ap.parse_args(argv)
    server = FakeOpenAIServer(args.host, args.port, args.model, args.text, args.api_key)
    server.start()
    print(f"fake-openai listening on {server.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
