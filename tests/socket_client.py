"""Raw LSP clients of a shared daemon: :class:`bench.reliability.RawDaemon`'s reader and requests over a socket,
and helpers to start ``dgcomplete daemon`` / ``serve --shared`` processes in a test's private runtime dir."""

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

