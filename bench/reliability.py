"""Reliability under bad input, load and faults (``python -m bench.reliability``, ``make reliability``).

Writes ``bench/results/reliability.md`` and ``reliability.json``. Three parts, each against the real daemon
process (``python -m dgcomplete serve``) driven over stdio by :class:`RawDaemon`, a small client that writes raw
``Content-Length`` frames (so it can send malformed bytes) and reads every frame the daemon writes:

* fuzzing: hypothesis-generated cases (malformed / truncated JSON, wrong types, unknown methods, positions past
  the end, negative or mid-surrogate positions, CRLF / lone CR / NUL / binary text, huge documents and lines,
  unknown language ids, changes to unopened documents, batches, requests after shutdown). Every request (a
  message with an id) must get a result or a JSON-RPC error, and the daemon must stay up;
* a typing storm: several documents edited and completed at 50 requests/s with cancellations; no result may
  be stale (the client replays every edit and checks each result against the version current when it was
  answered), memory after warm-up must not grow by 5 % or more, latency must recover afterwards;
* faults: missing / corrupt checkpoints, a remote backend that dies mid-request, oversized inputs.

The tests (tests/test_fuzz.py, tests/test_reliability.py) run shortened versions of the same code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# ---- a raw LSP client over stdio ----------------------------------------------------------------------------------
def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def raw_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def id_key(msg_id: Any) -> str:
    return json.dumps(msg_id, sort_keys=True)


class RawDaemon:
    """``dgcomplete serve`` on stdio with a reader thread: responses by id, notifications, server requests.

    Server-to-client requests are answered at once (``workspace/applyEdit`` with ``applied: false``, anything
    else with ``null``) so that no handler waits on the client.
    """

    def __init__(self, *args: str, env: dict[str, str] | None = None, stderr_path: Path | None = None,
                 cwd: Path | None = None) -> None:
        self.args = list(args)
        self._stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "dgcomplete", "serve", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, cwd=cwd or ROOT,
                                     env={**os.environ, **(env or {})})
        self.pid = self.proc.pid
        self._cv = threading.Condition()
        self.responses: dict[str, deque[dict[str, Any]]] = {}  # a repeated id may be answered more than once
        self.null_id: list[dict[str, Any]] = []  # responses with "id": null (parse errors and the like)
        self.notifications: deque[dict[str, Any]] = deque(maxlen=2000)
        self.server_requests: deque[dict[str, Any]] = deque(maxlen=2000)
        self.bad_frames: list[str] = []  # frames from the daemon we could not parse (must stay empty)
        self.answered: dict[str, int] = {}  # id -> how many responses it got (a request answers once)
        self.eof = False
        self.seq = 0
        self._wlock = threading.Lock()
        self._next = 0
        self._reader = threading.Thread(target=self._read, name="rawlsp-reader", daemon=True)
        self._reader.start()

    # -- transport ------------------------------------------------------------------------------------------------
    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    self.bad_frames.append("frame without Content-Length")
                    continue
                body = out.read(length)
                try:
                    msg = json.loads(body)
                except ValueError as e:
                    self.bad_frames.append(f"unparsable frame: {e}: {body[:200]!r}")
                    continue
                self._dispatch(msg)
        finally:
            with self._cv:
                self.eof = True
                self._cv.notify_all()

    def _dispatch(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            self.bad_frames.append(f"non-object frame: {str(msg)[:200]}")
            return
        if "method" in msg:
            if "id" in msg:
                self.server_requests.append(msg)
                result: Any = None
                if msg["method"] == "workspace/applyEdit":
                    result = {"applied": False, "failureReason": "raw test client"}
                self.write(frame({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
            else:
                self.notifications.append(msg)
            return
        with self._cv:
            if msg.get("id") is None:
                self.null_id.append(msg)
            else:
                k = id_key(msg["id"])
                self.seq += 1
                msg["_seq"] = self.seq  # arrival order (for the storm's stale-result check)
                msg["_t"] = time.perf_counter()
                self.responses.setdefault(k, deque()).append(msg)
                self.answered[k] = self.answered.get(k, 0) + 1
            self._cv.notify_all()

    def write(self, data: bytes) -> None:
        with self._wlock:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # the daemon is gone: alive() says so

    def send(self, obj: Any) -> None:
        self.write(frame(obj))

    # -- requests -------------------------------------------------------------------------------------------------
    def new_id(self, prefix: str = "r") -> str:
        self._next += 1
        return f"{prefix}{self._next}"

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request_nowait(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        msg_id = self.new_id() if msg_id is None else msg_id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return msg_id

    def wait(self, msg_id: Any, timeout: float = 30.0) -> dict[str, Any] | None:
        """The response to ``msg_id`` (popped), or None after ``timeout`` or when the daemon's stdout closed."""
        k = id_key(msg_id)
        deadline = time.monotonic() + timeout
        with self._cv:
            while not self.responses.get(k):
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    return None
                self._cv.wait(min(left, 0.5))
            got = self.responses[k]
            msg = got.popleft()
            if not got:
                del self.responses[k]
            return msg

    def request(self, method: str, params: Any = None, timeout: float = 30.0) -> dict[str, Any] | None:
        return self.wait(self.request_nowait(method, params), timeout)

    def wait_null_id(self, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._cv:
            while len(self.null_id) < n and time.monotonic() < deadline and not self.eof:
                self._cv.wait(0.2)
            return list(self.null_id)

    def initialize(self, init_options: dict[str, Any] | None = None, capabilities: dict[str, Any] | None = None,
                   timeout: float = 60.0) -> dict[str, Any]:
        caps = capabilities if capabilities is not None else {
            "textDocument": {"inlineCompletion": {}, "synchronization": {}},
            "general": {"positionEncodings": ["utf-16"]},
        }
        res = self.request("initialize", {"processId": None, "capabilities": caps,
                                          "initializationOptions": init_options or {}}, timeout)
        if res is None or "result" not in res:
            raise RuntimeError(f"initialize failed: {res}")
        self.notify("initialized", {})
        return res["result"]

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Block until the model finished loading (a completion request waits for it)."""
        uri = "file:///__ready__.py"
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": "x = 1\n"}})
        res = self.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": 1, "character": 0},
            "context": {"triggerKind": 2}}, timeout)
        self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        if res is None:
            raise RuntimeError("the daemon did not answer its first completion request")

    def ping(self, timeout: float = 30.0) -> dict[str, Any] | None:
        """A cheap valid request (the stats command): None when unanswered."""
        return self.request("workspace/executeCommand", {"command": "dgcomplete.stats", "arguments": []}, timeout)

    # -- process --------------------------------------------------------------------------------------------------
    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kb(self) -> int:
        """Resident set size of the daemon (kB, /proc), 0 when unavailable."""
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def close(self, timeout: float = 10.0) -> int | None:
        """shutdown + exit; kill after ``timeout``. Returns the exit code."""
        if self.alive():
            self.request("shutdown", None, timeout=timeout)
            self.notify("exit")
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                if f:
                    f.close()
            except OSError:
                pass
        if hasattr(self._stderr, "close"):
            self._stderr.close()  # type: ignore[union-attr]
        return self.proc.returncode

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
            self.proc.wait(timeout=10)


# ---- fuzzing ------------------------------------------------------------------------------------------------------
# robustness, not quality: keep each completion cheap, and show every candidate (the gate would hide a test
# model's guesses, leaving the item paths unexercised)
FUZZ_INIT = {"steps": 4, "maxTokens": 16, "minConfidence": 0}
URIS = ("file:///fz/a.py", "file:///fz/b.js", "file:///fz/c.txt", "file:///fz/d.rs", "file:///fz/e.unknownext",
        "untitled:Untitled-1", "file:///fz/%E6%BC%A2%20x.go", "file:///fz/never-opened.py")
LANGS = ("python", "javascript", "typescript", "typescriptreact", "go", "rust", "java", "c", "cpp", "lua",
         "shellscript", "bash", "json", "plaintext", "", "klingon", "PYTHON", "python\x00")
CHUNKS = ("def f(x):\n", "    return ", "x", "(", ")", "{", "}", "[", "]", ":", ".", ",", " ", "  ", "\t", "\n",
          "\r\n", "\r", "\x00", "\x1b", "\x7f", "\x0c", "é", "漢字", "😀", "\U0010ffff", "\ufeff", "\u2028",
          "\ud800", "\udc00", "\ud83d", '"', "'", "\\", "#", "//", "/*", "*/", "if x:", "import os\n",
          "function g() {", "fn main() {", "func main() {", "let y = ", "0" * 40, "é" * 30 + "\n")
# repeated entries weigh more
REQUEST_METHODS = ("textDocument/inlineCompletion",) * 5 + ("textDocument/completion",) * 2 + (
    "textDocument/codeAction", "codeAction/resolve", "workspace/executeCommand", "workspace/executeCommand",
    "textDocument/hover", "dgcomplete/nope", "$/unknownRequest", "workspace/symbol")
NOTIFY_METHODS = ("textDocument/didOpen",) * 4 + ("textDocument/didChange",) * 4 + (
    "textDocument/didClose", "textDocument/didSave", "workspace/didChangeConfiguration", "$/cancelRequest",
    "$/cancelRequest", "$/setTrace", "dgcomplete/nope", "initialized")
COMMANDS = ("dgcomplete.stats", "dgcomplete.accept", "dgcomplete.rewriteSelection", "dgcomplete.repairSyntax",
            "dgcomplete.fillHoles", "dgcomplete.nope", "")
SETTINGS_KEYS = ("maxLines", "maxTokens", "enabledLanguages", "completionItems", "debounceMs", "syntaxRenoise",
                 "fallbackToLocal", "rewriteFraction", "rewriteVariants", "repairRounds", "holeTokens", "nope")


class _Id:
    """Placeholder for a fresh request id (assigned when the frame is sent); PREV: the previous request's id."""

    def __init__(self, prev: bool = False) -> None:
        self.prev = prev

    def __repr__(self) -> str:
        return "PREV_ID" if self.prev else "ID"


NEW_ID, PREV_ID = _Id(), _Id(prev=True)


def valid_id(x: Any) -> bool:
    return isinstance(x, (int, str)) and not isinstance(x, bool)


def expect(body: bytes) -> tuple[list[Any], int]:
    """What the daemon must answer for one frame body: (ids answered exactly once, id-null responses)."""
    try:
        msg = json.loads(body)
    except (ValueError, RecursionError):
        return [], 1  # -32700
    if isinstance(msg, list):
        ids = [m["id"] for m in msg if isinstance(m, dict) and "id" in m and "method" in m]
        good = [i for i in ids if valid_id(i)]
        return good, (len(ids) - len(good)) if ids else 1
    if not isinstance(msg, dict):
        return [], 1
    if "jsonrpc" not in msg:
        return ([msg["id"]], 0) if "method" in msg and valid_id(msg.get("id")) else ([], 1)
    if "id" not in msg:  # a notification is never answered, unless it cannot be one
        return [], 1 if "method" not in msg or not isinstance(msg["method"], str) else 0
    i = msg["id"]
    if i is not None and not valid_id(i):
        return [], 1
    if "method" not in msg and ("result" in msg or "error" in msg):
        return [], 0  # a response (to nothing the server asked)
    return ([], 1) if i is None else ([i], 0)


def case_strategy():
    """A hypothesis strategy of fuzz cases: lists of 1-4 frames ``(message, byte transform)``."""
    from hypothesis import strategies as st

    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64), st.floats(allow_nan=False),
                     st.text(max_size=12), st.sampled_from(["", "file:///fz/a.py", "2.0", "python"]))
    jval = st.recursive(leaf, lambda c: st.one_of(st.lists(c, max_size=3),
                                                  st.dictionaries(st.text(max_size=6), c, max_size=3)),
                        max_leaves=8)
    text = st.lists(st.one_of(st.sampled_from(CHUNKS), st.characters()), max_size=60).map("".join)
    small = st.integers(0, 12)

    def shapes(ok: bool) -> dict[str, Any]:
        """Param strategies per method; ``ok``: well-typed, in-range values (the daemon's normal path)."""
        if ok:
            line = st.one_of(st.integers(0, 3), small, st.sampled_from([10**6, 2**31 - 1]))
            col = st.one_of(st.integers(0, 30), st.sampled_from([10**6, 2**31 - 1]))
        else:
            line = col = st.one_of(small, st.sampled_from([2**31 - 1, 2**32, 2**63]), st.integers(-3, -1))
        pos = st.fixed_dictionaries({"line": line, "character": col})
        rng = st.fixed_dictionaries({"start": pos, "end": pos})
        uri = st.sampled_from(URIS) if ok else st.one_of(st.sampled_from(URIS), st.text(max_size=20))
        version = st.integers(0, 2**31 - 1) if ok else st.one_of(st.integers(-(2**31), 2**31 - 1), st.none())
        doc = st.fixed_dictionaries({"uri": uri})
        target = st.fixed_dictionaries({"uri": uri, "range": rng}, optional={
            "version": st.one_of(version, st.none()), "seed": st.integers(-5, 5), "fraction": st.floats(-1, 2),
            "kind": st.sampled_from(["rewrite", "repair", "fill", "nope"])})
        change = st.one_of(st.fixed_dictionaries({"range": rng, "text": text}, optional={"rangeLength": small}),
                           st.fixed_dictionaries({"text": text}))
        kinds = [1, 2] if ok else [1, 2, 0, 3, -1]
        context = st.fixed_dictionaries({"triggerKind": st.sampled_from(kinds)}, optional={
            "selectedCompletionInfo": st.fixed_dictionaries({"range": rng, "text": text})})
        setting = st.one_of(st.integers(-5, 100), st.booleans(), st.lists(st.sampled_from(LANGS), max_size=3),
                            st.sampled_from(["auto", "always", "never"])) if ok else jval
        return {
            "textDocument/inlineCompletion": st.fixed_dictionaries(
                {"textDocument": doc, "position": pos, "context": context}),
            "textDocument/completion": st.fixed_dictionaries({"textDocument": doc, "position": pos}),
            "textDocument/codeAction": st.fixed_dictionaries({"textDocument": doc, "range": rng, "context":
                st.fixed_dictionaries({"diagnostics": st.just([])}, optional={
                    "only": st.lists(st.sampled_from(["quickfix", "refactor", "refactor.rewrite", "x"]), max_size=2)})}),
            "codeAction/resolve": st.fixed_dictionaries({"title": st.text(max_size=8)}, optional={
                "data": target if ok else st.one_of(target, jval)}),
            "workspace/executeCommand": st.fixed_dictionaries({"command": st.sampled_from(COMMANDS)}, optional={
                "arguments": st.lists(target, max_size=2) if ok else st.lists(jval, max_size=2)}),
            "textDocument/didOpen": st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({
                "uri": uri, "languageId": st.sampled_from(LANGS) if ok else st.text(max_size=8),
                "version": version, "text": text})}),
            "textDocument/didChange": st.fixed_dictionaries({
                "textDocument": st.fixed_dictionaries({"uri": uri, "version": version}),
                "contentChanges": st.lists(change, max_size=3)}),
            "textDocument/didClose": st.fixed_dictionaries({"textDocument": doc}),
            "workspace/didChangeConfiguration": st.fixed_dictionaries({"settings": st.fixed_dictionaries(
                {"dgcomplete": st.dictionaries(st.sampled_from(SETTINGS_KEYS), setting, max_size=3)})} if ok
                else {"settings": jval}),
            "$/cancelRequest": st.fixed_dictionaries({"id": st.just(PREV_ID) if ok else jval}),
        }

    good, bad = shapes(True), shapes(False)
    default_params = st.one_of(st.none(), jval)

    transforms = st.one_of(
        st.tuples(st.just("truncate"), st.floats(0, 1)),
        st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 255)),
        st.tuples(st.just("raw"), st.binary(max_size=48)),
        st.tuples(st.just("batch"), st.integers(0, 2)),
        st.tuples(st.just("utf8"), st.booleans()),  # real UTF-8 (lone surrogates become invalid bytes)
        st.tuples(st.just("headers"), st.booleans()),  # an extra Content-Type header, before or after
        st.tuples(st.just("deep"), st.integers(1, 200_000)),
        st.tuples(st.just("json"), jval),  # any JSON value as the whole body
    )
    @st.composite
    def message(draw):
        if draw(st.booleans()):
            method = draw(st.sampled_from(REQUEST_METHODS))
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": NEW_ID, "method": method}
        else:
            method = draw(st.sampled_from(NOTIFY_METHODS))
            msg = {"jsonrpc": "2.0", "method": method}
        # 3 in 4 messages are well-formed (the daemon's normal paths, with edge-case values); the others get
        # ill-typed params, structural mutations (dropped keys, values of any JSON type) and byte-level damage
        ok = draw(st.sampled_from([True, True, True, False]))
        p = draw((good if ok else bad).get(method, default_params))
        if p is not None:
            msg["params"] = p
        if ok:
            return msg, None
        for _ in range(draw(st.integers(0, 2))):
            where = draw(st.sampled_from(["top", "params", "deep"]))
            obj: Any = msg if where == "top" or not isinstance(msg.get("params"), dict) else msg["params"]
            if where == "deep" and isinstance(obj, dict):
                inner = [v for v in obj.values() if isinstance(v, dict)]
                obj = draw(st.sampled_from(inner)) if inner else obj
            if not isinstance(obj, dict) or not obj:
                continue
            key = draw(st.sampled_from(sorted(obj, key=str)))
            op = draw(st.sampled_from(["drop", "replace", "replace"]))
            if op == "drop":
                del obj[key]
            else:
                obj[key] = draw(jval)
        odd = draw(st.sampled_from(["2.0"] * 5 + ["1.0", "", None, 2, "drop"]))
        if odd == "drop":
            msg.pop("jsonrpc", None)
        elif odd != "2.0":
            msg["jsonrpc"] = odd
        if msg.get("method") in ("exit", "shutdown", "initialize"):  # legitimately end or restart the session
            msg["method"] = "dgcomplete/nope"
        return msg, draw(st.one_of(st.none(), transforms))

    return st.lists(message(), min_size=1, max_size=4)


class Fuzzer:
    """Runs fuzz cases against a daemon it restarts when it dies (each death counts as a crash)."""

    def __init__(self, model: Path, *, threads: int = 1, timeout: float = 30.0, log_dir: Path | None = None) -> None:
        self.model, self.threads, self.timeout, self.log_dir = model, threads, timeout, log_dir
        self.daemon: RawDaemon | None = None
        self.cases = self.frames = self.requests = self.crashes = self.hangs = self.null_responses = 0
        self.codes: dict[str, int] = {}
        self.problems: list[str] = []
        self.starts = 0
        self._ids = 0
        self._prev: Any = 0
        self.method_of: dict[str, str] = {}
        self.by_method: dict[str, dict[str, int]] = {}
        self.sent: dict[str, int] = {}  # a mutated frame may repeat an id: it may be answered as often as sent
        self.ensure()

    def ensure(self) -> RawDaemon:
        if self.daemon is not None and self.daemon.alive():
            return self.daemon
        if self.daemon is not None:
            self.crashes += 1
            self.daemon.kill()
            self.daemon.close()
        self.starts += 1
        err = self.log_dir / f"fuzz-daemon-{self.starts}.log" if self.log_dir else None
        self.daemon = RawDaemon("--model", str(self.model), "--threads", str(self.threads), stderr_path=err)
        self.daemon.initialize(FUZZ_INIT)
        self.daemon.wait_ready()
        return self.daemon

    def _fill_ids(self, obj: Any) -> Any:
        if isinstance(obj, _Id):
            if obj.prev:
                return self._prev
            self._ids += 1
            self._prev = self._ids if self._ids % 2 else f"fz-{self._ids}"
            return self._prev
        if isinstance(obj, dict):
            return {k: self._fill_ids(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._fill_ids(v) for v in obj]
        return obj

    def encode(self, msg: dict[str, Any], transform: Any) -> tuple[bytes, bytes]:
        """(header, body) of one frame."""
        obj = self._fill_ids(msg)
        kind = transform[0] if transform else None
        if kind == "batch":
            obj = [obj] * transform[1]  # 0: the empty batch
        if kind == "utf8":
            body = json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")
        else:
            body = json.dumps(obj).encode()
        if kind == "truncate":
            body = body[: int(len(body) * transform[1])]
        elif kind == "flip" and body:
            i = min(len(body) - 1, int(len(body) * transform[1]))
            body = body[:i] + bytes([transform[2]]) + body[i + 1 :]
        elif kind == "raw":
            body = transform[1]
        elif kind == "deep":
            body = b"[" * transform[1] + b"]" * transform[1]
        elif kind == "json":
            body = json.dumps(transform[1]).encode()
        if not body:
            body = b" "  # pygls reads a zero Content-Length as "no length yet": not a frame an editor sends
        head = b"Content-Length: %d\r\n" % len(body)
        if kind == "headers":
            ct = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
            head = ct + head if transform[1] else head + ct
        return head + b"\r\n", body

    def run_case(self, case: list[tuple[dict[str, Any], Any]]) -> list[str]:
        """Send one case, check every answer; problems found (empty: fine)."""
        d = self.ensure()
        self.cases += 1
        want: list[Any] = []
        nulls = 0
        null_before = len(d.null_id)
        for msg, transform in case:
            head, body = self.encode(msg, transform)
            ids, n = expect(body)
            for i in ids:
                self.method_of[id_key(i)] = str(msg.get("method"))[:40]
            want += ids
            for i in ids:
                self.sent[id_key(i)] = self.sent.get(id_key(i), 0) + 1
            nulls += n
            d.write(head + body)
            self.frames += 1
        self.requests += len(want)
        problems = []
        for i in want:
            r = d.wait(i, self.timeout)
            if r is None:
                if not d.alive():
                    problems.append(f"daemon died (exit {d.proc.poll()}) before answering {i!r}")
                    break
                self.hangs += 1
                problems.append(f"no answer to id {i!r} within {self.timeout:.0f} s")
                continue
            problems += self._check_response(r)
            m = self.by_method.setdefault(self.method_of.pop(id_key(i), "?"), {})
            code = "result" if "result" in r else str(r.get("error", {}).get("code"))
            m[code] = m.get(code, 0) + 1
            if d.answered.get(id_key(i), 0) > self.sent[id_key(i)]:
                problems.append(f"id {i!r} answered {d.answered[id_key(i)]} times, sent {self.sent[id_key(i)]}")
        if not problems:
            ping = d.ping(self.timeout)
            if ping is None or "result" not in ping:
                problems.append("daemon down" if not d.alive() else f"valid request failed after the case: {ping}")
        got = d.wait_null_id(null_before + nulls, timeout=5.0 if nulls else 0.0)
        new_nulls = got[null_before:]
        self.null_responses += len(new_nulls)
        for r in new_nulls:
            problems += self._check_response(r)
        if len(new_nulls) != nulls and not problems:
            problems.append(f"{len(new_nulls)} id-null responses, {nulls} expected")
        if d.bad_frames:
            problems.append(f"unparsable output from the daemon: {d.bad_frames[:2]}")
            d.bad_frames.clear()
        if problems:
            self.problems.append(f"{problems} in case {case!r}"[:2000])
        return problems

    def _check_response(self, r: dict[str, Any]) -> list[str]:
        if r.get("jsonrpc") != "2.0":
            return [f"response without jsonrpc 2.0: {str(r)[:300]}"]
        if "error" in r:
            e = r["error"]
            if not isinstance(e, dict) or not isinstance(e.get("code"), int) or not isinstance(e.get("message"), str):
                return [f"malformed error response: {str(r)[:300]}"]
            code = e["code"]
            self.codes[str(code)] = self.codes.get(str(code), 0) + 1
            if code == -32603:
                return [f"internal error: {e['message'][:300]}"]
            return []
        if "result" not in r:
            return [f"response with neither result nor error: {str(r)[:300]}"]
        self.codes["result"] = self.codes.get("result", 0) + 1
        return []

    def close(self) -> dict[str, Any]:
        """Final check (a valid completion on a fresh document, process alive) and the counters."""
        d = self.ensure()
        uri = "file:///fz/final.py"
        d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": "def add(a, b):\n    return \n"}})
        r = d.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri}, "position":
                      {"line": 1, "character": 11}, "context": {"triggerKind": 1}}, self.timeout)
        final_ok = bool(r and "result" in r) and d.alive()
        rss = d.rss_kb()
        code = d.close()
        return {"cases": self.cases, "frames": self.frames, "requests": self.requests, "crashes": self.crashes,
                "hangs": self.hangs, "null_id_responses": self.null_responses, "answers": dict(sorted(self.codes.items())),
                "problems": self.problems[:20], "problem_count": len(self.problems), "final_request_ok": final_ok,
                "daemon_starts": self.starts, "by_method": self.by_method, "rss_mb_end": round(rss / 1024, 1), "exit_code": code}


def fuzz(model: Path, cases: int, *, seed: int | None = 0, log_dir: Path | None = None,
         stop_on_failure: bool = False) -> dict[str, Any]:
    """Run ``cases`` hypothesis-generated cases; returns the counters (see :meth:`Fuzzer.close`)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    fz = Fuzzer(model, log_dir=log_dir)
    t0 = time.perf_counter()

    extra = {} if stop_on_failure else {"phases": [Phase.generate]}  # shrink only what fails a test

    @settings(max_examples=cases, deadline=None, database=None, derandomize=seed is not None,
              suppress_health_check=list(HealthCheck), **extra)
    @given(case_strategy())
    def run(case):
        problems = fz.run_case(case)
        if stop_on_failure:
            assert not problems, problems

    if seed is not None:
        run = hseed(seed)(run)
    failure = None
    try:
        run()
    except Exception as e:  # noqa: BLE001 - the failing case (shrunk), hypothesis' Flaky, ...
        failure = f"{type(e).__name__}: {e}"[:4000]
    out = fz.close()
    out.update(seconds=round(time.perf_counter() - t0, 1), failure=failure)
    return out


# ---- typing storm -------------------------------------------------------------------------------------------------
UNICODE_SOURCE = '''import unicodedata


def greet(name):
    message = "héllo " + name + " 😀"
    print(message)
    return message


def label(key):
    names = {"ja": "漢字", "emoji": "🎉🎉", "math": "∑ x²"}
    value = names.get(key, "?")
    return f"{key}: {value} ✓"


class Box:
    def __init__(self, items):
        self.items = list(items)
        self.tag = "📦"

    def describe(self):
        parts = [str(i) for i in self.items]
        return self.tag + " " + ", ".join(parts)
'''


PROSE = """Release notes

    The daemon keeps one model resident and answers completion requests
    while you type. Each request is computed for one version of the file
    and dropped when the file changes before the answer is ready.

    Settings are read from the dgcomplete section of the client settings:
    maxLines limits a suggestion, maxTokens bounds the canvas, steps bounds
    the denoising, and enabledLanguages restricts completion to some files.

    Large files are tracked without a syntax tree and are not completed.
    Messages larger than the frame limit are skipped without being read.
"""


def utf16_position(text: str, offset: int) -> tuple[int, int]:
    """LSP (line, UTF-16 column) of a code-point offset; lines end at \\n (the daemon's documents are \\n-only)."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    head = text[start:offset]
    return line, len(head.encode("utf-16-le")) // 2


def offset_of(text: str, line: int, col16: int) -> int | None:
    """Code-point offset of an LSP position, None when it is not inside the text (or splits a surrogate pair)."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    if line >= len(starts):
        return None
    end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
    units = 0
    for i in range(starts[line], end + 1):
        if units == col16:
            return i
        if i == end or units > col16:
            return None
        units += 2 if ord(text[i]) > 0xFFFF else 1
    return None


class StormDoc:
    """One document of the storm: the client's copy, replayed edits, per-version snapshots and fences."""

    def __init__(self, uri: str, language: str, session: Any) -> None:
        self.uri, self.language, self.session = uri, language, session
        self.text = session.initial
        self.version = 1
        self.i = 0  # next key
        self.snapshots: dict[int, str] = {1: self.text}
        self.fences: list[tuple[int, Any]] = []  # (version, id of the stats request sent right after it)
        self.cursor = session.keys[0].start if session.keys else 0
        self.pending: Any = None  # the last completion request not yet known to be answered

    def next_edit(self) -> tuple[dict[str, Any], int]:
        """The next keystroke as an LSP content change (positions in the text before it), and the cursor."""
        if self.i >= len(self.session.keys):  # replay from the start: one full-text change
            self.i = 0
            self.text = self.session.initial
            self.version += 1
            self.snapshots[self.version] = self.text
            return {"text": self.text}, self.session.keys[0].start
        k = self.session.keys[self.i]
        self.i += 1
        a, b = utf16_position(self.text, k.start), utf16_position(self.text, k.end)
        self.text = self.text[: k.start] + k.text + self.text[k.end :]
        self.version += 1
        self.snapshots[self.version] = self.text
        return {"range": {"start": {"line": a[0], "character": a[1]}, "end": {"line": b[0], "character": b[1]}},
                "text": k.text}, k.cursor


def _inline(uri: str, line: int, col: int, invoked: bool = False) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": col},
            "context": {"triggerKind": 1 if invoked else 2}}


def _latencies(d: RawDaemon, uri: str, text: str, n: int, timeout: float = 60.0) -> list[float]:
    """``n`` sequential completion requests at the end of ``text`` (ms each)."""
    line, col = utf16_position(text, len(text))
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = d.request("textDocument/inlineCompletion", _inline(uri, line, col, invoked=True), timeout)
        if r is None:
            raise RuntimeError("the daemon did not answer a latency probe")
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def storm(d: RawDaemon, seconds: float = 60.0, *, rate: float = 50.0, warmup_s: float | None = None,
          cancel_prob: float = 0.5, request_prob: float = 0.6, seed: int = 0, probes: int = 15,
          extra_sources: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    """A typing storm on several documents at ``rate`` completion requests/s (plus their edits), then checks.

    Every keystroke is a didChange (incremental, UTF-16 ranges) and a fence (the stats command, answered
    synchronously: every response read after it was written after the change was applied); ``request_prob`` of
    them also send a completion request at the cursor (keystrokes come at ``rate / request_prob`` per second,
    so a request often sees its document change without being superseded), and about ``cancel_prob`` of the
    previous requests get a $/cancelRequest (VS Code cancels on each keystroke, Neovim does not). A result with items is *stale* when it arrived after the
    fence of a newer version of its document; every item must also fit the text of the version it was
    requested for (same line, range around the cursor, insert text extending the typed word).
    """
    import random

    from bench import fixture_sources
    from bench.typing_sessions import build_sessions

    rng = random.Random(seed)
    warmup_s = min(10.0, seconds / 4) if warmup_s is None else warmup_s
    sources = fixture_sources() + [("unicode.py", "python", UNICODE_SOURCE)] + list(extra_sources or [])
    sessions = build_sessions(sources, max(240.0, seconds * 8), seed=seed)
    docs = [StormDoc(f"file:///storm/{i}-{s.name.replace('/', '_')}", s.language, s) for i, s in enumerate(sessions)]
    probe_uri = "file:///storm/probe.py"
    probe_text = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return "
    d.notify("textDocument/didOpen", {"textDocument": {"uri": probe_uri, "languageId": "python", "version": 1,
                                                       "text": probe_text}})
    before = _latencies(d, probe_uri, probe_text, probes)
    for doc in docs:
        d.notify("textDocument/didOpen", {"textDocument": {"uri": doc.uri, "languageId": doc.language,
                                                           "version": doc.version, "text": doc.text}})
    requests: dict[str, dict[str, Any]] = {}
    rss: list[tuple[float, int]] = []
    cancels = 0
    t0 = time.perf_counter()
    tick = request_prob / rate
    n = keys = 0
    next_rss = 0.0
    while (now := time.perf_counter() - t0) < seconds:
        if now >= next_rss:
            rss.append((round(now, 2), d.rss_kb()))
            next_rss += 1.0
        doc = docs[keys % len(docs)]
        keys += 1
        change, cursor = doc.next_edit()
        d.notify("textDocument/didChange", {"textDocument": {"uri": doc.uri, "version": doc.version},
                                            "contentChanges": [change]})
        doc.fences.append((doc.version, d.request_nowait("workspace/executeCommand",
                                                         {"command": "dgcomplete.stats"}, d.new_id("fence"))))
        if rng.random() >= request_prob:
            _pace(t0 + keys * tick)
            continue
        if doc.pending is not None and rng.random() < cancel_prob:
            d.notify("$/cancelRequest", {"id": doc.pending})
            cancels += 1
        line, col = utf16_position(doc.text, cursor)
        rid = d.request_nowait("textDocument/inlineCompletion", _inline(doc.uri, line, col), d.new_id("storm"))
        requests[id_key(rid)] = {"id": rid, "doc": doc, "version": doc.version, "cursor": cursor,
                                 "t": time.perf_counter()}
        doc.pending = rid
        n += 1
        if not d.alive():
            break
        _pace(t0 + keys * tick)
    storm_s = time.perf_counter() - t0
    rss.append((round(storm_s, 2), d.rss_kb()))
    # collect every answer (fences included: they prove order)
    answers: dict[str, dict[str, Any]] = {}
    unanswered = 0
    for k, req in requests.items():
        r = d.wait(req["id"], 60.0)
        if r is None:
            unanswered += 1
        else:
            answers[k] = r
    fence_seq: dict[str, list[tuple[int, int]]] = {}
    for doc in docs:
        seqs = []
        for version, fid in doc.fences:
            r = d.wait(fid, 60.0)
            if r is None:
                unanswered += 1
            else:
                seqs.append((version, r["_seq"]))
        fence_seq[doc.uri] = seqs
    drained_s = time.perf_counter() - t0
    # latency after the storm: how long until a request is fast again, then the same probe as before
    base = sorted(before)[len(before) // 2]
    t_rec = time.perf_counter()
    recovered_after = None
    for _ in range(50):
        lat = _latencies(d, probe_uri, probe_text, 1)[0]
        if lat <= max(2 * base, base + 50):
            recovered_after = round((time.perf_counter() - t_rec) * 1e3, 1)
            break
    after = _latencies(d, probe_uri, probe_text, probes)
    rss.append((round(time.perf_counter() - t0, 2), d.rss_kb()))
    # checks
    stale, inconsistent, with_items, empty, codes = 0, 0, 0, 0, {}
    examples: list[str] = []
    latency = []
    for k, req in requests.items():
        r = answers.get(k)
        if r is None:
            continue
        if "error" in r:
            c = str(r["error"].get("code"))
            codes[c] = codes.get(c, 0) + 1
            continue
        latency.append((r["_t"] - req["t"]) * 1e3)
        items = (r.get("result") or {}).get("items") or []
        if not items:
            empty += 1
            continue
        with_items += 1
        doc, v = req["doc"], req["version"]
        later = [seq for version, seq in fence_seq[doc.uri] if version > v]
        if later and min(later) < r["_seq"]:
            stale += 1
            examples.append(f"stale: {doc.uri} v{v} answered after the fence of v{v + 1}")
        text = doc.snapshots[v]
        problem = _item_problem(text, req["cursor"], items)
        if problem:
            inconsistent += 1
            examples.append(f"{doc.uri} v{v}: {problem}")
    warm = [kb for t, kb in rss if t >= warmup_s] or [rss[-1][1]]
    growth = (rss[-2][1] - warm[0]) / warm[0] * 100 if warm[0] else None
    return {
        "seconds": round(storm_s, 1), "rate_target": rate, "rate_sent": round(n / storm_s, 1),
        "documents": len(docs), "keystrokes": keys, "requests": n, "cancel_requests_sent": cancels, "answered": len(answers),
        "unanswered": unanswered, "with_items": with_items, "empty": empty, "errors": codes, "stale": stale,
        "inconsistent": inconsistent, "examples": examples[:10],
        "drain_s": round(drained_s - storm_s, 2), "alive": d.alive(),
        "latency_storm_ms": _summ(latency),
        "latency_before_ms": _summ(before), "latency_after_ms": _summ(after),
        "recovered_after_ms": recovered_after,
        "rss_mb": {"warm": round(warm[0] / 1024, 1), "end_of_storm": round(rss[-2][1] / 1024, 1),
                   "after": round(rss[-1][1] / 1024, 1), "peak": round(max(kb for _, kb in rss) / 1024, 1)},
        "rss_growth_pct": None if growth is None else round(growth, 2), "warmup_s": warmup_s,
        "rss_samples": [(t, round(kb / 1024, 1)) for t, kb in rss],
    }


def _pace(until: float) -> None:
    left = until - time.perf_counter()
    if left > 0:
        time.sleep(left)


def _summ(xs: list[float]) -> dict[str, float | int | None]:
    if not xs:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    s = sorted(xs)
    pick = lambda q: round(s[min(len(s) - 1, int(q * len(s)))], 1)  # noqa: E731
    return {"n": len(s), "p50": pick(0.5), "p95": pick(0.95), "max": round(s[-1], 1)}


def _item_problem(text: str, cursor: int, items: list[dict[str, Any]]) -> str:
    """Why an inline item does not fit ``text`` with the cursor at ``cursor`` ('' when it does)."""
    line, col = utf16_position(text, cursor)
    for it in items:
        rng, insert = it.get("range"), it.get("insertText")
        if not isinstance(insert, str):
            return f"insertText is not a string: {it}"
        if rng is None:
            continue
        s, e = rng["start"], rng["end"]
        if not (s["line"] == e["line"] == line):
            return f"range {rng} is not on the cursor's line {line}"
        a, b = offset_of(text, s["line"], s["character"]), offset_of(text, e["line"], e["character"])
        if a is None or b is None:
            return f"range {rng} is not inside the document (or splits a surrogate pair)"
        if not a <= cursor <= b:
            return f"range {rng} does not contain the cursor {line}:{col}"
        typed = text[a:cursor]
        if not insert.startswith(typed):
            return f"insertText {insert!r} does not extend the typed {typed!r}"
        if any(c not in ")]}\"'`>;, \t" for c in text[cursor:b]):
            return f"range {rng} replaces text that is not closers: {text[cursor:b]!r}"
    return ""


# ---- faults -------------------------------------------------------------------------------------------------------
CHECKPOINT_DAMAGES = ("truncated", "garbage-weights", "no-weights", "no-tokenizer", "bad-tokenizer", "bad-config",
                      "wrong-config", "empty-dir")


def damage_checkpoint(src: Path, dst: Path, damage: str) -> Path:
    """A copy of the checkpoint at ``src`` broken one way (see CHECKPOINT_DAMAGES)."""
    import re
    import shutil

    shutil.copytree(src, dst)
    w = dst / "model.safetensors"
    if damage == "truncated":
        data = w.read_bytes()
        w.write_bytes(data[: len(data) // 3])
    elif damage == "garbage-weights":
        w.write_bytes(b"\x00\xff" * 5000)
    elif damage == "no-weights":
        w.unlink()
    elif damage == "no-tokenizer":
        (dst / "tokenizer.json").unlink()
    elif damage == "bad-tokenizer":
        (dst / "tokenizer.json").write_text("{]")
    elif damage == "bad-config":
        (dst / "config.json").write_text("{not json")
    elif damage == "wrong-config":  # parses, but the tensors do not fit
        text = (dst / "config.json").read_text()
        (dst / "config.json").write_text(re.sub(r'"hidden_size": \d+', '"hidden_size": 48', text))
    elif damage == "empty-dir":
        shutil.rmtree(dst)
        dst.mkdir()
    else:
        raise ValueError(damage)
    return dst


def _outcome(name: str, ok: bool, detail: str, **extra: Any) -> dict[str, Any]:
    return {"fault": name, "ok": bool(ok), "detail": detail[:300], **extra}


def _crash_detail(d: RawDaemon, log: Path | None) -> str:
    tail = log.read_text(errors="replace").splitlines()[-60:] if log and log.exists() else []
    where = [ln.strip().replace(str(ROOT) + "/", "") for ln in tail
             if "Fatal Python error" in ln or (ln.strip().startswith("File ") and "dgcomplete/" in ln)][:4]
    return f"daemon died (exit {d.proc.poll()}): " + " | ".join(where)


def faults(tiny: Path, work: Path) -> list[dict[str, Any]]:
    """Every fault scenario; each outcome says what the daemon did and whether that is the wanted behaviour."""
    from dgcomplete.model import CheckpointError, load_model

    out: list[dict[str, Any]] = []
    work.mkdir(parents=True, exist_ok=True)
    for damage in CHECKPOINT_DAMAGES:
        bad = damage_checkpoint(tiny, work / f"ckpt-{damage}", damage)
        try:
            load_model(bad)
            out.append(_outcome(f"checkpoint: {damage}", False, "loaded without an error"))
        except CheckpointError as e:
            out.append(_outcome(f"checkpoint: {damage}", True, f"CheckpointError: {e}".replace(str(work), "…")))
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            out.append(_outcome(f"checkpoint: {damage}", False, f"{type(e).__name__}: {e}"))
    # the daemon on a truncated checkpoint: one message, empty results, still up
    log = work / "daemon-truncated.log"
    d = RawDaemon("--model", str(work / "ckpt-truncated"), stderr_path=log)
    try:
        d.initialize()
        d.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///b.py", "languageId": "python",
                                                           "version": 1, "text": "x = "}})
        rs = [d.request("textDocument/inlineCompletion", _inline("file:///b.py", 0, 4), 60) for _ in range(3)]
        shown = [n["params"]["message"] for n in d.notifications if n["method"] == "window/showMessage"]
        ok = all(r and r.get("result") == {"items": []} for r in rs) and len(shown) == 1 and d.alive()
        out.append(_outcome("daemon on a truncated checkpoint", ok,
                            f"{len(shown)} error message(s), empty results, alive={d.alive()}: "
                            + (shown[0].replace(str(work), "…") if shown else "")))
    finally:
        d.close()
    out += _remote_faults(tiny, work)
    out += _input_faults(tiny, work)
    return out


def _remote_faults(tiny: Path, work: Path) -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_openai_server import FakeOpenAIServer, Reply  # noqa: E402 - a test helper, on purpose

    out = []
    uri = "file:///r.py"
    req = _inline(uri, 1, 11, invoked=True)

    def ask(d: RawDaemon) -> tuple[dict[str, Any] | None, float]:
        t0 = time.perf_counter()
        r = d.request("textDocument/inlineCompletion", req, 60)
        return r, time.perf_counter() - t0

    def describe(r: dict[str, Any] | None, s: float) -> str:
        if r is None:
            return f"no answer after {s:.1f} s"
        if "error" in r:
            return f"error {r['error']['code']} after {s:.1f} s: {r['error']['message']}"
        return f"{len(r['result']['items'])} item(s) after {s:.1f} s"

    with FakeOpenAIServer(default_text="a + b") as fake:
        port = fake.port
        d = RawDaemon("--local-model", str(work / "no-local-model"), "--backend", "openai", "--url", fake.url,
                      "--remote-model", fake.model, stderr_path=work / "daemon-remote.log")
        d.initialize()
        d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": "def add(a, b):\n    return "}})
        r, s = ask(d)
        out.append(_outcome("remote: healthy", bool(r and r.get("result", {}).get("items")), describe(r, s)))
        fake.script(*[Reply(text="a + b" * 20, chunk_chars=2, close_after_chunks=1)] * 5)
        r, s = ask(d)
        out.append(_outcome("remote: connection dropped mid-stream (every retry)",
                            bool(r and r.get("error", {}).get("code") == -32803), describe(r, s)))
        fake.script(Reply(text="a + b", stall_after_chunks=1, stall_s=30))
        r, s = ask(d)
        out.append(_outcome("remote: stream stalls mid-request", bool(r and "error" in r and s < 20),
                            describe(r, s)))
    r, s = ask(d)
    out.append(_outcome("remote: server gone", bool(r and r.get("error", {}).get("code") == -32803 and s < 15),
                        describe(r, s)))
    with FakeOpenAIServer(port=port, default_text="a + b"):
        r, s = ask(d)
        out.append(_outcome("remote: server back on the same port", bool(r and r.get("result", {}).get("items")),
                            describe(r, s)))
    out.append(_outcome("remote: daemon exit", d.close() == 0 and not d.bad_frames, f"exit {d.proc.returncode}"))
    with FakeOpenAIServer(default_text="a + b") as fake:
        d = RawDaemon("--local-model", str(tiny), "--threads", "1", "--backend", "openai", "--url", fake.url,
                      "--remote-model", fake.model, stderr_path=work / "daemon-fallback.log")
        d.initialize(FUZZ_INIT)
        d.wait_ready()
    d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                       "text": "def add(a, b):\n    return "}})
    r, s = ask(d)
    out.append(_outcome("remote gone, local model present: fallback", bool(r and "result" in r), describe(r, s)))
    d.close()
    return out


def _input_faults(tiny: Path, work: Path) -> list[dict[str, Any]]:
    from dgcomplete.protocol import MAX_MESSAGE_BYTES

    out = []
    log = work / "daemon-inputs.log"
    d = RawDaemon("--model", str(tiny), "--threads", "1", stderr_path=log, env={"PYTHONFAULTHANDLER": "1"})

    def restart() -> RawDaemon:
        nonlocal d
        d.kill()
        d.close()
        d = RawDaemon("--model", str(tiny), "--threads", "1", stderr_path=log, env={"PYTHONFAULTHANDLER": "1"})
        d.initialize(FUZZ_INIT)
        d.wait_ready()
        return d

    try:
        d.initialize(FUZZ_INIT)
        d.wait_ready()
        rss0 = d.rss_kb()
        n0 = len(d.null_id)
        d.write(raw_frame(b" " * (MAX_MESSAGE_BYTES + 1)))
        got = d.wait_null_id(n0 + 1, 60)[n0:]
        ok = bool(got) and got[0]["error"]["code"] == -32600 and d.ping() is not None
        out.append(_outcome(f"frame over {MAX_MESSAGE_BYTES >> 20} MiB", ok,
                            f"{got[0]['error'] if got else 'no answer'}; RSS {rss0 // 1024} -> {d.rss_kb() // 1024} MB"))
        # documents: 10 MB (tracked, not completed), a 900 KB line, typing at the end of a 36 KB file
        block = "def f_{i}(a, b):\n    total = a + b\n    return total * {i}\n\n"
        huge = "".join(block.format(i=i) for i in range(10_000_000 // len(block) + 1))
        body = "".join(f"def f_{i}(a, b):\n    return a + b * {i}\n\n\n" for i in range(1000))
        for name, text in [("10 MB document", huge), ("900 KB line", "x = [" + "1, " * 300_000 + "\n"),
                           ("cursor at the end of a 36 KB file", body)]:
            uri = f"file:///in/{len(text)}.py"
            t0 = time.perf_counter()
            rss0 = d.rss_kb()
            d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": text}})
            n = text.count("\n")
            r = d.request("textDocument/inlineCompletion", _inline(uri, n, 0), 120)
            s = time.perf_counter() - t0
            if r is None or not d.alive():
                out.append(_outcome(name, False, _crash_detail(d, log)))
                restart()
                continue
            stats = (d.ping() or {}).get("result", {})
            rss1 = d.rss_kb()
            d.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            out.append(_outcome(name, "result" in r, f"answered in {s:.1f} s ({stats.get('last', {}).get('reason')!r}); "
                                f"RSS +{(rss1 - rss0) // 1024} MB", seconds=round(s, 2)))
        # 100 documents with a request in flight each
        ids = []
        for i in range(100):
            uri = f"file:///many/{i}.py"
            d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": f"def g_{i}(x):\n    return "}})
            ids.append(d.request_nowait("textDocument/inlineCompletion", _inline(uri, 1, 11)))
        t0 = time.perf_counter()
        answers = [d.wait(i, 120) for i in ids]
        good = sum(1 for a in answers if a is not None and "result" in a)
        out.append(_outcome("100 documents, a request in flight on each", good == 100 and d.alive(),
                            f"{good}/100 answered in {time.perf_counter() - t0:.1f} s"))
        # requests after shutdown, then exit
        assert "result" in (d.request("shutdown") or {})
        r = d.request("textDocument/inlineCompletion", _inline("file:///many/0.py", 1, 11))
        d.notify("exit")
        code = d.proc.wait(timeout=30)
        out.append(_outcome("request after shutdown", bool(r and r.get("error", {}).get("code") == -32600) and code == 0,
                            f"{r.get('error') if r else 'no answer'}; exit code {code}"))
    finally:
        d.kill()
        d.close()
    # a header asking for 100 GB, then EOF
    log = work / "daemon-huge-header.log"
    d = RawDaemon("--model", str(tiny), "--threads", "1", stderr_path=log)
    try:
        d.initialize()
        d.write(b"Content-Length: 100000000000\r\n\r\n{}")
        time.sleep(1.0)
        alive = d.alive()
        assert d.proc.stdin is not None
        d.proc.stdin.close()
        code = d.proc.wait(timeout=60)
        text = log.read_text(errors="replace")
        out.append(_outcome("Content-Length: 100 GB, then EOF", alive and "MemoryError" not in text,
                            f"alive while waiting for the body: {alive}; exit {code} at EOF; "
                            f"MemoryError logged: {'MemoryError' in text}"))
    finally:
        d.kill()
        d.close()
    return out


# ---- safety -------------------------------------------------------------------------------------------------------
UNSAFE_PATTERNS = (
    (r"\btorch\.load\s*\(", "torch.load (unpickles)"),
    (r"^\s*(import|from)\s+(c?pickle|dill|joblib|marshal|shelve)\b", "pickle-like deserialization"),
    (r"(?<![.\w])eval\s*\(", "eval"),
    (r"(?<![.\w])exec\s*\(", "exec"),
    (r"\btrust_remote_code\s*=\s*True", "remote code from checkpoints"),
    (r"\byaml\.load\s*\(", "yaml.load"),
    (r"(?<![.\w])__import__\s*\(", "dynamic import"),
)


def unsafe_code() -> list[str]:
    """Lines of the package that could execute code from data (pickle, eval, ...): should be none."""
    import re

    found = []
    for f in sorted((ROOT / "dgcomplete").rglob("*.py")):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            for pattern, why in UNSAFE_PATTERNS:
                if re.search(pattern, line):
                    found.append(f"{f.relative_to(ROOT)}:{i}: {why}")
    return found


# ---- report -------------------------------------------------------------------------------------------------------
def _models(model: str | None, storm_model: str | None, log: Any) -> tuple[Path, str, list[tuple[Path, str]]]:
    """The fuzz/fault model and its description, and the storm models. Defaults: a tiny random checkpoint for
    fuzzing and faults (robustness does not depend on the weights); for the storm a tiny model trained in
    seconds to memorize a file (fast, and its completions have items whose staleness can be checked), then the
    embedded model when there is one (real memory and latency)."""
    sys.path.insert(0, str(ROOT))
    from dgcomplete.models import default_model_path
    from tests.helpers import make_tiny_checkpoint

    cache = ROOT / "bench" / "results" / "tmp" / "reliability-models"
    if model:
        fuzz_model, fuzz_desc = Path(model), display_path(model)
    else:
        fuzz_model = cache / "tiny-random"
        if not (fuzz_model / "config.json").exists():
            make_tiny_checkpoint(fuzz_model)
        fuzz_desc = "tiny random-weight checkpoint (tests/helpers.make_tiny_checkpoint)"
    if storm_model:
        return fuzz_model, fuzz_desc, [(Path(storm_model), display_path(storm_model))]
    memo = cache / "memorizer"
    if not (memo / "config.json").exists():
        log("training the memorizing tiny model for the storm...")
        train_storm_model(memo)
    storms = [(memo, "tiny model trained to memorize tests/helpers.MEMO_TEXT")]
    if (default_model_path() / "config.json").exists():
        storms.append((default_model_path(), f"embedded model {default_model_path().name}"))
    return fuzz_model, fuzz_desc, storms


def train_storm_model(out: Path, steps: int = 150) -> Path:
    """tests/helpers.train_memorizer on one torch thread (seconds; two threads on a busy box take minutes)."""
    import torch

    sys.path.insert(0, str(ROOT))
    from tests.helpers import train_memorizer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_memorizer(out, steps=steps)
    finally:
        torch.set_num_threads(threads)


def display_path(p: str | Path) -> str:
    from bench import display_path as dp

    return dp(p)


def _storm_rows(st: dict[str, Any]) -> list[str]:
    m = st["model"]
    return [
        f"| storm ({m}): completion requests | {st['requests']:,} in {st['seconds']} s ({st['rate_sent']}/s), "
        f"{st['keystrokes']:,} edits, {st['cancel_requests_sent']} cancels, {st['documents']} documents | 50/s, ≥ 60 s |",
        f"| storm ({m}): unanswered / stale / inconsistent with their version | {st['unanswered']} / {st['stale']} / "
        f"{st['inconsistent']} (of {st['with_items']} results with items) | 0 / 0 / 0 |",
        f"| storm ({m}): memory growth after {st['warmup_s']:.0f} s warm-up | {st['rss_growth_pct']} % "
        f"({st['rss_mb']['warm']} → {st['rss_mb']['end_of_storm']} MB, peak {st['rss_mb']['peak']} MB) | < 5 % |",
        f"| storm ({m}): latency p50 before → after | {st['latency_before_ms']['p50']} → "
        f"{st['latency_after_ms']['p50']} ms (fast again {st['recovered_after_ms']} ms after the drain) | recovers |",
    ]


def report_md(res: dict[str, Any]) -> str:
    fz, m = res["fuzz"], res["machine"]
    fault_ok = sum(f["ok"] for f in res["faults"])
    lines = [
        "<!-- generated by `python -m bench.reliability` (make reliability); do not edit -->",
        "# Reliability under bad input, load and faults",
        "",
        f"Run {res['date']} on {m['cores']} cores ({m['cpu']}), load average at start {m.get('loadavg_start')} "
        f"(a shared machine), Python {m['python']}, torch {m['torch']}; {res['seconds']:.0f} s in all. "
        f"Fuzzing and faults: {res['models']['fuzz']}.",
        "",
        "| check | result | goal |",
        "|---|---|---|",
        f"| fuzz cases (hypothesis, raw frames over stdio) | {fz['cases']:,} cases, {fz['frames']:,} frames, "
        f"{fz['requests']:,} requests | ≥ 10,000 cases |",
        f"| daemon crashes / hangs during fuzzing | {fz['crashes']} / {fz['hangs']} | 0 |",
        f"| fuzz problems (unanswered, answered twice, internal errors, bad frames) | {fz['problem_count']} | 0 |",
        f"| valid request after the last case | {'answered' if fz['final_request_ok'] else 'FAILED'} "
        f"(exit code {fz['exit_code']}) | answered, exit 0 |",
    ]
    for st in res["storms"]:
        lines += _storm_rows(st)
    lines += [
        f"| faults handled as intended | {fault_ok} / {len(res['faults'])} | all |",
        f"| unsafe code in the package (pickle, torch.load, eval, exec, ...) | {len(res['unsafe'])} | 0 |",
        "",
        "## Fuzzing",
        "",
        f"{fz['cases']:,} cases of 1-4 frames each (seed {res['settings']['seed']}, daemon options "
        f"`{json.dumps(res['settings']['fuzz_init_options'])}`): 3 in 4 messages well-formed with edge-case values "
        "(positions past the end of a line or document, mid-surrogate columns, CRLF, lone CR, NUL, binary and "
        "lone-surrogate text, unknown language ids, changes to unopened documents, odd settings), the others with "
        "ill-typed params, dropped keys, any-JSON values and byte-level damage (truncated or flipped bodies, random "
        "bytes, invalid UTF-8, batches, deep nesting, extra headers). Every request must be answered exactly once "
        "(a result or a JSON-RPC error; id null when the id cannot be known), never with an internal error, and a "
        "valid request after each case must be answered.",
        "",
        "Answers: " + ", ".join(f"`{k}` {v:,}" for k, v in fz["answers"].items())
        + f"; of the errors, {fz['null_id_responses']:,} with id null (parse errors, invalid requests). "
        f"{fz['seconds']:.0f} s; daemon RSS at the end {fz['rss_mb_end']} MB.",
        "",
    ]
    if fz["problems"]:
        lines += ["Problems:", ""] + [f"- `{p[:300]}`" for p in fz["problems"][:10]] + [""]
    if fz.get("failure"):
        lines += [f"Failure: `{fz['failure'][:500]}`", ""]
    lines += [
        "## Typing storm",
        "",
        "Each keystroke of re-typed regions (bench/fixtures, a Unicode-heavy file, tests/helpers.MEMO_TEXT) is an "
        "incremental didChange (UTF-16 ranges) followed by a fence request (answered synchronously); 60 % of "
        "keystrokes also request an inline completion at the cursor and half of the previous requests get a "
        "`$/cancelRequest`. A result with items is stale when it arrives after the fence of a newer version of its "
        "document; every item must fit the text of the version it was requested for (same line, range around "
        "the cursor, extending the typed word). (Checked against a build with the version checks removed: that "
        "one is caught returning stale results.) The memorizing model is fast enough for results to come back "
        "at this rate; the embedded model mostly is not (its requests are superseded or dropped as stale), so "
        "its storm measures memory and latency: it runs twice as long and counts memory growth over its second "
        "half, because its RSS climbs for about a minute (the allocator's high-water mark for per-request logits "
        "of varying shape) and is flat after that.",
        "",
    ]
    for st in res["storms"]:
        lines += [
            f"- {st['model']}: {st['with_items']} results with items, {st['empty']} empty, errors {st['errors']}; "
            f"latency during the storm p50 {st['latency_storm_ms']['p50']} ms, p95 {st['latency_storm_ms']['p95']} ms; "
            f"drained {st['drain_s']} s after the last request; RSS (MB) over time: "
            + ", ".join(f"{t:.0f}s {mb}" for t, mb in st["rss_samples"][::5]) + ".",
        ] + [f"  - {e}" for e in st["examples"]]
    lines += ["", "## Faults", "", "| fault | ok | what the daemon did |", "|---|---|---|"]
    lines += [f"| {f['fault']} | {'yes' if f['ok'] else '**NO**'} | {f['detail'].replace('|', '/')} |"
              for f in res["faults"]]
    lines += ["", "## Safe defaults", "",
              "- TCP listens on 127.0.0.1 unless `--allow-remote` (tests/test_server.py, tests/test_reliability.py).",
              "- Weights load through safetensors only; the package has "
              + (f"these risky lines: {res['unsafe']}" if res["unsafe"] else
                 "no pickle, `torch.load`, `eval`, `exec`, `trust_remote_code` or dynamic import") + ".",
              "- Frames over 64 MiB are skipped unread; documents over 4 M characters are tracked without a syntax "
              "tree and not completed; at most 64 model jobs wait at once; at most 16 documents keep an encoded "
              "prefix resident.", ""]
    return "\n".join(lines)


def render(out: Path) -> None:
    """Rewrite reliability.md from reliability.json (after a change to the report's layout)."""
    (out / "reliability.md").write_text(report_md(json.loads((out / "reliability.json").read_text())))


def main(argv: list[str] | None = None) -> int:
    import argparse
    from datetime import datetime, timezone

    from bench import RESULTS, machine_info

    ap = argparse.ArgumentParser(prog="python -m bench.reliability", description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10_000, help="fuzz cases (default 10,000)")
    ap.add_argument("--seconds", type=float, default=60.0, help="typing storm duration (default 60)")
    ap.add_argument("--rate", type=float, default=50.0, help="completion requests per second in the storm")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", help="checkpoint for fuzzing and faults (default: a tiny random one)")
    ap.add_argument("--storm-model", help="checkpoint for the storm (default: the embedded model, else a memorizer)")
    ap.add_argument("--out", help="output directory (default bench/results)")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    work = ROOT / "bench" / "results" / "tmp" / "reliability"
    if work.exists():
        import shutil

        shutil.rmtree(work)
    work.mkdir(parents=True)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.0f}s] {msg}", flush=True)

    machine = machine_info()
    fuzz_model, fuzz_desc, storm_models = _models(args.model, args.storm_model, log)
    log(f"fuzzing: {args.cases} cases")
    fz = fuzz(fuzz_model, args.cases, seed=args.seed, log_dir=work)
    log(f"fuzzing done: {fz['crashes']} crashes, {fz['problem_count']} problems in {fz['seconds']} s")
    sys.path.insert(0, str(ROOT))
    from tests.helpers import MEMO_TEXT

    storms = []
    for i, (path, desc) in enumerate(storm_models):
        # the embedded model's allocator takes about a minute of storm to reach its high-water mark (logits of
        # 64 x 8192 per row, shapes varying per request): twice as long a storm, half of it warm-up
        seconds = args.seconds if i == 0 else 2 * args.seconds
        warmup = None if i == 0 else seconds / 2
        log(f"typing storm ({desc}): {seconds:.0f} s at {args.rate}/s")
        d = RawDaemon("--model", str(path), stderr_path=work / f"daemon-storm-{path.name}.log")
        try:
            d.initialize()
            d.wait_ready()
            st = storm(d, seconds, rate=args.rate, seed=args.seed, warmup_s=warmup,
                       extra_sources=[("memo.py", "python", MEMO_TEXT)])
        finally:
            st["exit_code"] = d.close()
        st["model"] = desc
        storms.append(st)
        log(f"storm done: {st['stale']} stale, {st['inconsistent']} inconsistent of {st['with_items']} with items, "
            f"RSS {st['rss_growth_pct']} %")
    log("faults")
    fl = faults(fuzz_model, work / "faults")
    log(f"faults done: {sum(f['ok'] for f in fl)}/{len(fl)} as intended")
    res = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "seconds": round(time.perf_counter() - t0, 1),
        "machine": machine, "models": {"fuzz": fuzz_desc, "storm": [st["model"] for st in storms]},
        "settings": {"cases": args.cases, "storm_seconds": args.seconds, "rate": args.rate, "seed": args.seed,
                     "fuzz_init_options": FUZZ_INIT},
        "fuzz": fz, "storms": storms, "faults": fl, "unsafe": unsafe_code(),
    }
    home = str(Path.home())  # no machine paths in the reports
    scrub_paths = lambda t: t.replace(str(ROOT) + "/", "").replace(str(ROOT), ".").replace(home, "~")  # noqa: E731
    (out / "reliability.json").write_text(scrub_paths(json.dumps(res, indent=1, default=str)) + "\n")
    (out / "reliability.md").write_text(scrub_paths(report_md(res)))
    log(f"wrote {display_path(out / 'reliability.md')} and reliability.json")
    ok = (fz["crashes"] == 0 and fz["problem_count"] == 0 and all(f["ok"] for f in fl) and not res["unsafe"]
          and all(st["stale"] == 0 and st["inconsistent"] == 0 and st["unanswered"] == 0 for st in storms))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
