"""``dgcomplete daemon``: one process, one model, one engine, many LSP sessions.

gopls' shared-daemon model (``gopls -remote=auto``): editors connect over a Unix socket in ``$XDG_RUNTIME_DIR``
(mode 0600), directly or through ``dgcomplete serve --shared``, or over TCP (loopback unless told). Each
connection is its own LSP session (its own server object: documents, settings, initialize, shutdown) over a view
of the one engine (:meth:`Engine.view`); the model thread takes the sessions' jobs in turn (:mod:`fair`). A
session ending — shutdown and exit, EOF or a reset — ends only that session. With ``--idle-exit`` the daemon
exits after that many minutes without sessions. ``dgcomplete/status`` (a request any connection may send, before
``initialize`` too) lists sessions, model, memory and queue: ``dgcomplete status`` prints it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fair import LANE

log = logging.getLogger("dgcomplete.daemon")


def rss_mb(pid: int | str = "self") -> dict[str, float]:
    """Resident and peak resident memory (MB) from /proc; empty where there is none."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out["rss_mb" if line.startswith("VmRSS") else "peak_rss_mb"] = round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return out


@dataclass
class SharedModel:
    """The daemon's model and engine, loaded once; every session serves a view of ``engine``."""

    model_path: str | None = None
    threads: int | None = None
    steps: int | None = None
    remote: Any = None
    engine: Any = None
    load_error: str | None = None
    load_s: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    ready_line: str = ""

    async def load(self) -> None:
        from .engine import Engine
        from .model import CheckpointError, load_model
        from .models import default_model_path
        from .server import describe_threads

        path = self.model_path or str(default_model_path())
        t0 = time.perf_counter()
        try:
            loaded = await asyncio.get_running_loop().run_in_executor(None, lambda: load_model(path))
            self.engine = Engine(loaded, threads=self.threads, max_steps=self.steps, remote=self.remote)
            self.info = await self.engine.start()
            self.load_s = time.perf_counter() - t0
            params = loaded.model.num_parameters(False) / 1e6
            self.ready_line = (f"model {loaded.name} ({params:.3g}M params) on {describe_threads(self.info)}, "
                               f"loaded in {self.load_s:.1f} s")
        except (CheckpointError, OSError, RuntimeError) as e:
            self.load_s = time.perf_counter() - t0
            self.load_error = f"dgcomplete cannot load the model at {path}: {e}"
            log.error(self.load_error)
            self.ready_line = f"NO MODEL ({self.load_error})"
            if self.remote is not None:  # the remote backend can still serve
                self.engine = Engine(None, remote=self.remote, fallback_to_local=False)
        finally:
            self.ready.set()

    def describe(self) -> dict[str, Any]:
        e = self.engine
        loaded = e.loaded if e is not None else None
        return {"name": loaded.name if loaded else None, "path": str(loaded.path) if loaded else self.model_path,
                "params_m": round(loaded.model.num_parameters(False) / 1e6, 2) if loaded else None,
                "threads": e.threads if e is not None else None, "load_s": round(self.load_s, 2),
                "ready": self.ready.is_set(), "error": self.load_error,
                "remote": bool(self.remote)}


class _Lock:
    """The daemon's lifetime lock next to its socket: one daemon per socket path, and a stale socket file
    (its daemon killed) can be replaced safely."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            other = os.pread(self.fd, 32, 0).decode(errors="replace").strip()
            os.close(self.fd)
            raise RuntimeError(f"another dgcomplete daemon (pid {other or '?'}) serves {path.with_suffix('')}") from e
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
            os.close(self.fd)


class Daemon:
    def __init__(self, shared: SharedModel, *, unix: Path | None = None, tcp: tuple[str, int] | None = None,
                 idle_exit_min: float | None = None) -> None:
        self.shared = shared
        self.unix, self.tcp = unix, tcp
        self.idle_s = idle_exit_min * 60 if idle_exit_min else None
        self.conns: dict[str, Any] = {}  # session id -> DgServer
        self.addresses: list[str] = []
        self.started = time.time()
        self._seq = 0
        self._last_active = time.monotonic()
        self._stop: asyncio.Event | None = None
        self._lock: _Lock | None = None
        self._servers: list[asyncio.base_events.Server] = []

    # ---- listening ----------------------------------------------------------------------------------------
    async def _listen(self) -> None:
        if self.unix is not None:
            path = self.unix
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._lock = _Lock(Path(f"{path}.lock"))
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # we hold the lock: a socket file here is a dead daemon's
            old = os.umask(0o177)
            try:
                srv = await asyncio.start_unix_server(lambda r, w: self._connection(r, w, "unix"), path=str(path))
            finally:
                os.umask(old)
            os.chmod(path, 0o600)
            self._servers.append(srv)
            self.addresses.append(f"unix:{path}")
        if self.tcp is not None:
            host, port = self.tcp
            srv = await asyncio.start_server(lambda r, w: self._connection(r, w, "tcp"), host, port)
            self._servers.append(srv)
            bound = srv.sockets[0].getsockname()
            self.addresses.append(f"tcp:{bound[0]}:{bound[1]}")

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stop.set)
        try:
            await self._listen()
        except (OSError, RuntimeError) as e:
            msg = f"dgcomplete daemon: cannot listen: {e}"
            log.error(msg)
            print(msg, flush=True)
            return 1
        log.info("listening on %s; loading the model", ", ".join(self.addresses))
        load = asyncio.ensure_future(self.shared.load())
        watch = asyncio.ensure_future(self._idle_watch()) if self.idle_s else None
        await asyncio.wait([load, asyncio.ensure_future(self._stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        if load.done():
            self._last_active = time.monotonic()  # the idle clock starts once the model is there
            line = f"dgcomplete ready on {', '.join(self.addresses)}: {self.shared.ready_line}"
            log.info(line)
            print(line + " (Ctrl-C stops it)", flush=True)
        await self._stop.wait()
        if watch is not None:
            watch.cancel()
        await self._close()
        return 0

    async def _close(self) -> None:
        for srv in self._servers:
            srv.close()
        for ls in list(self.conns.values()):
            if ls.end_connection is not None:
                ls.end_connection()
        await asyncio.sleep(0)
        if self.unix is not None and self._lock is not None:
            with contextlib.suppress(OSError):
                self.unix.unlink()
            self._lock.release()
        if self.shared.engine is not None:
            await self.shared.engine.shutdown()
        log.info("stopped")

    async def _idle_watch(self) -> None:
        assert self.idle_s is not None and self._stop is not None
        while True:
            await asyncio.sleep(max(0.2, min(10.0, self.idle_s / 4)))
            idle = time.monotonic() - self._last_active
            if self.shared.ready.is_set() and not self.active() and idle >= self.idle_s:
                log.info("no sessions for %.1f minutes: exiting (--idle-exit)", idle / 60)
                self._stop.set()
                return

    def active(self) -> list[Any]:
        return [ls for ls in self.conns.values() if not ls.probe]

    # ---- one connection = one LSP session -----------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, transport: str) -> None:
        from pygls.io_ import run_async

        from .protocol import BoundedStream
        from .server import make_server

        self._seq += 1
        sid = f"s{self._seq}"
        LANE.set(sid)  # the model thread takes this session's jobs in turn with the others' (fair.py)
        ls = make_server(shared=self.shared)
        ls.session_id, ls.transport_name, ls.started = sid, transport, time.time()
        ls.status_provider = self.status
        stop = threading.Event()

        def end() -> None:
            stop.set()
            writer.close()

        ls.end_connection = end
        ls.protocol.set_writer(writer)
        self.conns[sid] = ls
        log.info("session %s connected over %s", sid, transport)
        why = "EOF"
        try:
            await run_async(stop_event=stop, reader=BoundedStream(reader), protocol=ls.protocol, logger=log,
                            error_handler=ls._report_server_error)
            if stop.is_set():
                why = "exit"
        except (ConnectionError, OSError) as e:
            why = f"connection lost ({type(e).__name__})"
        finally:
            self.conns.pop(sid, None)
            await ls.end_session()
            writer.close()
            if not ls.probe:
                self._last_active = time.monotonic()
                log.info("session %s (%s) ended: %s; %d left", sid, ls.client_name or "client", why,
                         len(self.active()))

    # ---- status -------------------------------------------------------------------------------------------
    def status(self, asking: Any = None) -> dict[str, Any]:
        now = time.time()
        sessions = []
        for sid, ls in self.conns.items():
            if ls.probe or ls is asking:
                continue
            futs = ls.protocol._request_futures.values()
            sessions.append({
                "id": sid, "client": ls.client_name, "client_pid": ls.process_id, "transport": ls.transport_name,
                "documents": len(ls.engine.sessions) if ls.engine is not None else 0,
                "workspace_lines": sum(f.total for f in ls.engine.context.folders.values()) if ls.engine else 0,
                "requests": ls.stats.requests, "in_flight": sum(1 for f in futs if not f.done()),
                "age_s": round(now - ls.started, 1), "shut_down": bool(ls.protocol._shutdown),
            })
        pool = self.shared.engine._pool if self.shared.engine is not None else None
        views = [ls.engine for ls in self.conns.values() if ls.engine is not None]
        return {
            "pid": os.getpid(), "addresses": self.addresses, "uptime_s": round(now - self.started, 1),
            "idle_exit_min": self.idle_s / 60 if self.idle_s else None,
            "model": self.shared.describe(), "memory": rss_mb(), "sessions": sessions,
            "workspace_indexes": self.shared.engine.folder_indexes(views) if self.shared.engine is not None else [],
            "queue": {"running": pool.running if pool else None, "waiting": pool.queued() if pool else {},
                      "jobs_done": pool.done if pool else 0},
        }


def run_daemon(model: str | None, *, unix: Path | None, tcp: tuple[str, int] | None, threads: int | None = None,
               steps: int | None = None, remote: Any = None, idle_exit_min: float | None = None) -> int:
    async def main() -> int:
        shared = SharedModel(model, threads=threads, steps=steps, remote=remote)
        return await Daemon(shared, unix=unix, tcp=tcp, idle_exit_min=idle_exit_min).run()

    return asyncio.run(main())
