"""The shared daemon from outside (``python -m bench.shared``): memory of one vs five sessions, relay memory.

Also the clients tests/test_daemon.py uses: :class:`bench.reliability.RawDaemon`'s reader and requests over a
socket (:class:`SocketClient`), and ``dgcomplete daemon`` as a subprocess (:class:`DaemonProcess`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from bench.reliability import ROOT, RawDaemon


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
        self._cv = threading.Condition()
        self.proc = _SocketProc(sock, self)  # type: ignore[assignment]
        self.pid = os.getpid()
        self.responses: dict[str, deque[dict[str, Any]]] = {}
        self.null_id: list[dict[str, Any]] = []
        self.notifications: deque[dict[str, Any]] = deque(maxlen=2000)
        self.server_requests: deque[dict[str, Any]] = deque(maxlen=2000)
        self.bad_frames: list[str] = []
        self.answered: dict[str, int] = {}
        self.eof = False
        self.seq = 0
        self._wlock = threading.Lock()
        self._next = 0
        self._reader = threading.Thread(target=self._read, name="rawlsp-socket-reader", daemon=True)
        self._reader.start()

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


def proc_rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


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



def measure(model: str | None, sessions: int = 5, docs: int = 3) -> dict[str, Any]:
    """Daemon RSS with one session, then with ``sessions``, each with ``docs`` documents and a completion in
    each; the RSS of ``serve --shared`` relays, one per session."""
    import json
    import shutil
    import tempfile

    rt = Path(tempfile.mkdtemp(prefix="dgrt-"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(rt), "PYTHONPATH": str(ROOT)}
    model_args = ["--model", model] if model else []
    d = DaemonProcess(*model_args, "--socket", str(rt / "m.sock"), env=env, log=rt / "daemon.log")
    relays: list[RawDaemon] = []
    text = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return "
    try:
        ready = d.wait_ready(300)
        rss = []
        for i in range(sessions):
            r = RawDaemon("--shared", "--socket", str(rt / "m.sock"), env=env)
            relays.append(r)
            r.initialize()
            for k in range(docs):
                uri = f"file:///measure/{i}/{k}.py"
                r.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                   "version": 1, "text": text}})
                got = r.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri}, "position": {
                    "line": 5, "character": 11}, "context": {"triggerKind": 1}}, 120)
                assert got is not None and "result" in got, got
            rss.append(proc_rss_kb(d.proc.pid))
        out = {"ready": ready.strip(), "daemon_rss_mb": [round(x / 1024, 1) for x in rss],
               "five_over_one": round(rss[-1] / rss[0], 3),
               "relay_rss_mb": [round(proc_rss_kb(r.pid) / 1024, 1) for r in relays]}
        print(json.dumps(out, indent=1))
        return out
    finally:
        for r in relays:
            r.close()
        d.stop()
        shutil.rmtree(rt, ignore_errors=True)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=measure.__doc__)
    ap.add_argument("--model", help="checkpoint (default: the embedded model)")
    ap.add_argument("--sessions", type=int, default=5)
    a = ap.parse_args()
    measure(a.model, a.sessions)
