"""``dgcomplete serve --shared``: the stdio process an editor spawns, relaying to this user's shared daemon.

Like ``gopls -remote=auto``: connect to the per-user daemon's Unix socket; when none answers, start one (under a
lock file, so two editors starting at once start one daemon) and wait until it listens. A daemon that cannot
start is reported to the editor as an LSP error (the reply to ``initialize``, and one ``window/showMessage``).
This module imports no torch and no pygls: a relay stays a few MB.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

MAX_HEADER_LINE = 65536
_CONTROL = re.compile(rb'"method"\s*:\s*"(shutdown|exit)"')


class DaemonError(RuntimeError):
    """The shared daemon is not reachable and could not be started; the message is for the user."""


# ---- where the daemon lives -----------------------------------------------------------------------------------
def _private_dir(path: Path) -> Path | None:
    """``path`` when it is a directory of ours that nobody else can enter, else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def runtime_dir() -> Path:
    """``$XDG_RUNTIME_DIR`` (per user, mode 0700), else a private ``dgcomplete-<uid>`` in the temp dir."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and _private_dir(Path(xdg)) is not None:
        return Path(xdg)
    d = Path(tempfile.gettempdir()) / f"dgcomplete-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        d.mkdir(mode=0o700)
    if _private_dir(d) is None:  # someone else's, a symlink, or open to others: never put a socket there
        raise DaemonError(f"{d} is not a private directory of this user (mode 0700); set XDG_RUNTIME_DIR")
    return d


def daemon_key(model: str | None, backend: dict[str, Any] | None = None) -> str:
    """One daemon per (checkpoint, backend): editors on another model get another daemon."""
    if not model and not backend:
        return "dgcomplete"
    ident = json.dumps([str(Path(model).resolve()) if model else None, backend or {}], sort_keys=True)
    return "dgcomplete-" + hashlib.sha1(ident.encode()).hexdigest()[:12]


def socket_path(model: str | None = None, backend: dict[str, Any] | None = None) -> Path:
    return runtime_dir() / f"{daemon_key(model, backend)}.sock"


def connect(path: Path, timeout: float = 5.0) -> socket.socket | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
    except OSError:
        s.close()
        return None
    s.settimeout(None)
    return s


def ensure_daemon(path: Path, daemon_args: list[str], *, timeout: float = 120.0,
                  idle_exit_min: float = 10.0) -> socket.socket:
    """A connection to the daemon at ``path``, starting it first when none answers (race-free)."""
    s = connect(path)
    if s is not None:
        return s
    with contextlib.suppress(FileExistsError):
        path.parent.mkdir(mode=0o700, parents=True)
    with open(f"{path}.start", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one relay starts the daemon; the others wait here, then connect
        s = connect(path)
        if s is not None:
            return s
        log_path = Path(f"{path}.log")
        with open(log_path, "ab") as log:
            log.write(f"--- started by dgcomplete serve --shared (pid {os.getpid()}) at {time.ctime()}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                [sys.executable, "-m", "dgcomplete", "daemon", "--socket", str(path), "--idle-exit",
                 str(idle_exit_min), *daemon_args],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
                close_fds=True)
        deadline = time.monotonic() + timeout
        while True:
            s = connect(path)
            if s is not None:
                threading.Thread(target=proc.wait, name="reap-daemon", daemon=True).start()
                return s
            if proc.poll() is not None:
                raise DaemonError(f"the shared daemon exited (code {proc.returncode}) before it listened on "
                                  f"{path}: {_tail(log_path)}")
            if time.monotonic() > deadline:
                raise DaemonError(f"the shared daemon did not listen on {path} within {timeout:.0f} s "
                                  f"(log: {log_path})")
            time.sleep(0.05)


def _tail(path: Path, n: int = 600) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("---")]
    return " | ".join(lines[-3:])[-n:] or "(empty log)"


# ---- frames -------------------------------------------------------------------------------------------------
def _frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frame(inp: BinaryIO) -> tuple[bytes, bytes | None] | None:
    """(raw header bytes, body) of the next frame; body None when larger than 1 MiB (not kept). None at EOF."""
    head = b""
    length = None
    while True:
        line = inp.readline(MAX_HEADER_LINE)
        if not line:
            return None
        head += line
        if line in (b"\r\n", b"\n"):
            if length is not None:
                break
            head = b""  # a blank line without a header: nothing to relay
            continue
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None
    if length > 1 << 20:
        left = length
        while left > 0:  # skipped, never held
            chunk = inp.read(min(left, 1 << 20))
            if not chunk:
                return None
            left -= len(chunk)
        return head, None
    return head, inp.read(length)


# ---- the relay ----------------------------------------------------------------------------------------------
class Relay:
    """Editor stdin -> daemon socket, daemon socket -> editor stdout; byte for byte.

    Frames from the editor are parsed (headers only, small bodies peeked) for ``shutdown`` and ``exit`` only:
    the relay's exit code follows LSP (1 when ``exit`` came without ``shutdown``).
    """

    def __init__(self, sock: socket.socket, inp: BinaryIO, out: BinaryIO) -> None:
        self.sock, self.inp, self.out = sock, inp, out
        self.shutdown_seen = self.exit_seen = self.editor_eof = False

    def _upstream(self) -> None:
        try:
            while True:
                head = b""
                length = None
                while True:  # headers, forwarded as they are
                    line = self.inp.readline(MAX_HEADER_LINE)
                    if not line:
                        self.editor_eof = True
                        return
                    head += line
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        with contextlib.suppress(ValueError):
                            length = int(value.strip())
                self.sock.sendall(head)
                if not length or length < 0:
                    continue
                left = length
                first = True
                while left > 0:  # the body, in pieces: a 200 MiB frame is never held here
                    chunk = self.inp.read(min(left, 1 << 20))
                    if not chunk:
                        self.editor_eof = True
                        return
                    if first and length <= 4096 and (m := _CONTROL.search(chunk)):
                        if m.group(1) == b"shutdown":
                            self.shutdown_seen = True
                        else:
                            self.exit_seen = True
                    first = False
                    self.sock.sendall(chunk)
                    left -= len(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_WR)  # EOF to the daemon: this session ends there

    def run(self) -> int:
        threading.Thread(target=self._upstream, name="relay-up", daemon=True).start()
        fd = self.out.fileno()
        try:
            while True:
                data = self.sock.recv(1 << 16)
                if not data:
                    break
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
        except OSError:
            pass
        if self.exit_seen:
            return 0 if self.shutdown_seen else 1
        if self.editor_eof:
            return 0
        print("dgcomplete: the shared daemon closed the connection", file=sys.stderr)
        return 1


def report_failure(message: str, inp: BinaryIO, out: BinaryIO) -> int:
    """No daemon: answer the editor as an LSP server that failed to initialize (its error is shown)."""
    print(f"dgcomplete: {message}", file=sys.stderr)
    shown = False
    shutdown = False
    while (got := read_frame(inp)) is not None:
        _, body = got
        try:
            msg = json.loads(body) if body else None
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method = msg.get("method")
        if not shown and method == "initialize":
            shown = True
            out.write(_frame({"jsonrpc": "2.0", "method": "window/showMessage",
                              "params": {"type": 1, "message": f"dgcomplete: {message}"}}))
        if method == "exit":
            return 0 if shutdown else 1
        if "id" in msg and method:
            if method == "shutdown":
                shutdown = True
                out.write(_frame({"jsonrpc": "2.0", "id": msg["id"], "result": None}))
            else:
                code = -32603 if method == "initialize" else -32002
                out.write(_frame({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": code, "message": f"dgcomplete: {message}", "data": {"retry": False}}}))
        out.flush()
    return 1


def serve_shared(daemon_args: list[str], *, model: str | None, backend: dict[str, Any] | None,
                 socket_override: str | None, idle_exit_min: float, start_timeout: float) -> int:
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        path = Path(socket_override) if socket_override else socket_path(model, backend)
        sock = ensure_daemon(path, daemon_args, timeout=start_timeout, idle_exit_min=idle_exit_min)
    except (DaemonError, OSError) as e:
        return report_failure(f"the shared daemon cannot start: {e}", inp, out)
    with sock:
        code = Relay(sock, inp, out).run()
    sys.stderr.flush()
    os._exit(code)  # the upstream thread may sit in a read of stdin: no interpreter shutdown around it


# ---- dgcomplete status --------------------------------------------------------------------------------------
def query_status(sock: socket.socket, timeout: float = 10.0) -> dict[str, Any]:
    """Ask a daemon for ``dgcomplete/status`` (no initialize: a status probe is not a session)."""
    sock.settimeout(timeout)
    sock.sendall(_frame({"jsonrpc": "2.0", "id": 1, "method": "dgcomplete/status"}))
    with sock.makefile("rb") as f:
        while (got := read_frame(f)) is not None:
            msg = json.loads(got[1] or b"null")
            if isinstance(msg, dict) and msg.get("id") == 1:
                if "result" not in msg:
                    raise DaemonError(f"the daemon answered {msg.get('error')}")
                return msg["result"]
    raise DaemonError("the daemon closed the connection without an answer")


def format_status(st: dict[str, Any]) -> str:
    m, mem, q = st["model"], st.get("memory", {}), st["queue"]
    model = f"{m['name']} ({m['params_m']}M params, {m['threads']} thread(s), loaded in {m['load_s']} s)" \
        if m.get("name") else f"none ({m.get('error') or 'loading'})"
    idle = f"after {st['idle_exit_min']:g} min without sessions" if st.get("idle_exit_min") else "never"
    lines = [f"daemon pid {st['pid']} on {', '.join(st['addresses'])}, up {st['uptime_s']:.0f} s, idle exit {idle}",
             f"model:  {model}",
             f"memory: {mem.get('rss_mb', '?')} MB resident (peak {mem.get('peak_rss_mb', '?')} MB)",
             f"queue:  {sum(q['waiting'].values())} waiting {q['waiting'] or ''}, running: {q['running'] or '-'}, "
             f"{q['jobs_done']} model jobs done",
             f"sessions: {len(st['sessions'])}"]
    for s in st["sessions"]:
        lines.append(f"  {s['id']:>4}  {s['client'] or '?':<24} pid {s['client_pid'] or '?':<8} {s['transport']:<4} "
                     f"{s['documents']} docs, {s.get('workspace_lines', 0):,} workspace lines, "
                     f"{s['requests']} requests, {s['in_flight']} in flight, "
                     f"up {s['age_s']:.0f} s" + ("  (shut down)" if s["shut_down"] else ""))
    indexes = st.get("workspace_indexes")
    if indexes is not None:  # (a daemon of an older version does not say)
        lines.append(f"workspace folder indexes: {len(indexes)}")
    for x in indexes or []:
        lines.append(f"  {x['folder']} ({x['language']}): {x['files']} files, {x['lines']:,} lines, "
                     f"held by {x['sessions']} session(s)")
    return "\n".join(lines)
