"""A raw JSON-RPC client of the daemon for tests and benchmarks.

:class:`RawDaemon` runs ``dgcomplete serve`` on stdio and writes raw ``Content-Length`` frames (so it can send
malformed bytes) and reads every frame the daemon writes; :class:`SocketClient` is the same over a daemon's
socket, :class:`DaemonProcess` ``dgcomplete daemon`` as a subprocess. ``bench.reliability`` and ``bench.shared``
drive the daemon through them too.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# ---- frames and the JSON-RPC rules --------------------------------------------------------------------------------
def raw_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def frame(obj: Any) -> bytes:
    return raw_frame(json.dumps(obj).encode("utf-8"))


def id_key(msg_id: Any) -> str:
    return json.dumps(msg_id, sort_keys=True)


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


def inline_params(uri: str, line: int, col: int, invoked: bool = False) -> dict[str, Any]:
    """textDocument/inlineCompletion params (automatic trigger unless ``invoked``)."""
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": col},
            "context": {"triggerKind": 1 if invoked else 2}}


def proc_rss_kb(pid: int) -> int:
    """Resident set size of a process (kB, /proc), 0 when unavailable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


# ---- a raw LSP client over stdio ----------------------------------------------------------------------------------
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
        self._start_reader("rawlsp-reader")

    def _start_reader(self, name: str) -> None:
        """The client's state, and the thread reading ``self.proc.stdout`` into it."""
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
        self._reader = threading.Thread(target=self._read, name=name, daemon=True)
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
                   timeout: float = 60.0, folders: list[str] | None = None) -> dict[str, Any]:
        """``folders``: workspace folder URIs named in initialize."""
        caps = capabilities if capabilities is not None else {
            "textDocument": {"inlineCompletion": {}, "synchronization": {}},
            "general": {"positionEncodings": ["utf-16"]},
        }
        params: dict[str, Any] = {"processId": None, "capabilities": caps, "initializationOptions": init_options or {}}
        if folders:
            params["workspaceFolders"] = [{"uri": u, "name": u.rsplit("/", 1)[-1]} for u in folders]
        res = self.request("initialize", params, timeout)
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
        return proc_rss_kb(self.pid)

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


# ---- the shared daemon: a client over its socket, the daemon as a subprocess ------------------------------------
class _SocketProc:
    """What RawDaemon needs of a process (stdin, stdout, poll, wait, kill), for a socket."""

    def __init__(self, sock: socket.socket, client: SocketClient) -> None:
        self.sock, self.client = sock, client
        self.stdin = sock.makefile("wb")
        self.stdout = sock.makefile("rb")
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return 0 if self.client.eof else None

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (timeout or 60)
        with self.client._cv:
            while not self.client.eof:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired("socket", timeout or 60)
                self.client._cv.wait(min(left, 0.5))
        self.returncode = 0
        return 0

    def kill(self) -> None:
        """Drop the connection at once (the reader thread sees EOF)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.returncode = -9


class SocketClient(RawDaemon):
    """One LSP session over a daemon's Unix socket (a path) or TCP ((host, port))."""

    def __init__(self, address: Path | tuple[str, int], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if isinstance(address, tuple):
                    sock = socket.create_connection(address, timeout=10)
                else:
                    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    sock.settimeout(10)
                    sock.connect(str(address))
                sock.settimeout(None)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.args = []
        self._stderr = subprocess.DEVNULL
        self.proc = _SocketProc(sock, self)  # type: ignore[assignment]
        self.pid = os.getpid()
        self._start_reader("rawlsp-socket-reader")

    def close(self, timeout: float = 10.0) -> int | None:
        """shutdown + exit (RawDaemon's), then the socket."""
        code = super().close(timeout)
        self.proc.sock.close()
        return code

    def eof_close(self) -> None:
        """End the session with EOF (no shutdown, no exit), as an editor that just closes its end does."""
        self.proc.sock.shutdown(socket.SHUT_WR)
        self.proc.wait(30)
        self.proc.sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaemonProcess:
    """``dgcomplete daemon`` as a subprocess, with its ready line read from stdout."""

    def __init__(self, *args: str, env: dict[str, str], log: Path) -> None:
        self._log = open(log, "wb")  # noqa: SIM115
        self.log_path = log
        self.proc = subprocess.Popen([sys.executable, "-m", "dgcomplete", "daemon", *args], cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=self._log, env=env, text=True)
        self.ready_line = ""

    def wait_ready(self, timeout: float = 120) -> str:
        box: list[str] = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)  # type: ignore
        t.start()
        t.join(timeout)
        self.ready_line = box[0] if box else ""
        assert self.ready_line.startswith("dgcomplete ready"), (self.ready_line, self.log_path.read_text()[-2000:])
        return self.ready_line

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        return self.proc.returncode
