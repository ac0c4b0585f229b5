"""The LSP adapter: thin pygls handlers that fetch the document, call the engine and shape LSP items.

Nothing here touches tensors. Every failure becomes an LSP error with a clear message, an empty result with a
logged reason, or one ``window/showMessage`` — the daemon never dies on a request.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.language_server import lsp_method
from pygls.workspace import Workspace

from . import __version__
from .engine import Completion, Engine, EngineError
from .settings import RESTART, Settings
from .types import CancelToken

log = logging.getLogger("dgcomplete.server")

CLOSERS = ")]}\"'`>;,"
ACCEPT_COMMAND = "dgcomplete.accept"
STATS_COMMAND = "dgcomplete.stats"


class Stats:
    """Local-only usage counters for ``dgcomplete.stats`` (nothing leaves the machine)."""

    def __init__(self) -> None:
        self.requests = self.shown = self.accepted = self.empty = self.cancelled = self.stale = 0
        self.latency_ms: deque[float] = deque(maxlen=1000)
        self.last: dict[str, Any] = {}

    def percentiles(self) -> dict[str, float]:
        xs = sorted(self.latency_ms)
        if not xs:
            return {}
        pick = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
        return {"p50": round(pick(0.5), 1), "p95": round(pick(0.95), 1), "p99": round(pick(0.99), 1)}

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests, "shown": self.shown, "accepted": self.accepted,
            "dismissed": max(0, self.shown - self.accepted), "empty": self.empty, "cancelled": self.cancelled,
            "stale": self.stale, "latency_ms": self.percentiles(), "last": self.last,
        }


def _strict_int(value: Any, _type: Any) -> int:
    """LSP integers are JSON integers within int32: 7.9, "7", true and 2**70 are refused, not read as 7."""
    if type(value) is not int:
        raise TypeError(f"expected an integer, got {value!r}"[:120])
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"integer out of range: {value}"[:120])
    if isinstance(_type, type) and issubclass(_type, enum.Enum):  # IntEnum fields dispatch here too
        return _type(value)
    return value


_CONVERTER = None


def strict_converter():
    """pygls' converter with strict integers; one instance, shared by every session of a daemon."""
    global _CONVERTER
    if _CONVERTER is None:
        _CONVERTER = default_converter()
        _CONVERTER.register_structure_hook(int, _strict_int)
        _CONVERTER.register_structure_hook(bool, lambda v, _: bool(v))  # bool is an int subclass: as before
    return _CONVERTER


def _leaf_errors(e: BaseException) -> str:
    """The first few messages inside a cattrs validation error group (what was wrong, not only where)."""
    out: list[str] = []

    def walk(x: BaseException) -> None:
        subs = getattr(x, "exceptions", None)
        if subs:
            for sub in subs:
                walk(sub)
        elif len(out) < 3:
            out.append(str(x) or type(x).__name__)

    walk(e)
    return "; ".join(out) or type(e).__name__


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: a valid request the server could not serve (the message says why)."""

    CODE = -32803


class Protocol(LanguageServerProtocol):
    """JSON-RPC error paths pygls 2.1 leaves silent: every request gets a result or an error.

    -32602 for params that fail to deserialize, -32601 for an unknown method sent without params, -32600 for
    invalid requests (bad id or method types, an id without a method, not JSON-RPC 2.0, batches, requests
    after shutdown, oversized frames) and -32700 (id null) for bodies that are not JSON (see
    ``DgServer.report_server_error``). Messages are structured here, at the top level only: pygls calls
    ``structure_message`` as json's object_hook, for nested objects too.
    """

    _initialize_seen = False

    def reply_error(self, msg_id: Any, code: int, message: str) -> None:
        ok = isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool)
        self._send_data({"jsonrpc": "2.0", "id": msg_id if ok else None, "error": {"code": code, "message": message}})

    def structure_message(self, data: dict[str, Any]):
        return data  # see handle_message

    def _structure(self, data: dict[str, Any]) -> Any:
        """The message object, or None when the message was answered with an error (or is to be ignored)."""
        msg_id, method = data.get("id"), data.get("method")
        problem = ""
        if msg_id is not None and (not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool)):
            problem = "id must be an integer or a string"
        elif "method" in data and not isinstance(method, str):
            problem = "method must be a string"
        elif "id" in data and "method" not in data and "result" not in data and "error" not in data:
            problem = "a request needs a method"
        elif "id" not in data and "method" not in data:
            problem = "a message needs a method or an id"
        elif "id" in data and "method" in data and data.get("jsonrpc") != "2.0":
            problem = 'jsonrpc must be "2.0"'
        if problem:
            self.reply_error(msg_id, -32600, f"invalid request: {problem}")
            return None
        if isinstance(method, str) and "id" in data and "params" not in data and self.get_message_type(method) is None:
            data = {**data, "params": None}  # an unknown method: pygls answers MethodNotFound
        try:
            return super().structure_message(data)
        except Exception as e:
            why = _leaf_errors(e.__cause__) if e.__cause__ is not None else type(e).__name__
            if "id" in data and "method" in data:
                code = -32602 if isinstance(e, JsonRpcInvalidParams) else -32603
                self._send_response(data["id"], error=lsp.ResponseError(
                    code=code, message=f"invalid params for {data.get('method')}: {why}"))
                return None
            if method == lsp.TEXT_DOCUMENT_DID_CHANGE:
                return self._salvage_changes(data, why)
            log.warning("ignored %s: invalid params (%s)", method, why)
            return None

    def _salvage_changes(self, data: dict[str, Any], why: str) -> Any:
        """A didChange with invalid content changes: the valid ones are applied, the invalid ones logged
        (dropping the whole notification lost the valid edits too, silently)."""
        params = data.get("params")
        changes = params.get("contentChanges") if isinstance(params, dict) else None
        if not isinstance(changes, list):
            log.warning("ignored textDocument/didChange: invalid params (%s)", why)
            return None
        valid = []
        for i, c in enumerate(changes):
            try:
                self._converter.structure({"textDocument": {"uri": "", "version": 0}, "contentChanges": [c]},
                                          lsp.DidChangeTextDocumentParams)
                valid.append(c)
            except Exception as e:  # noqa: BLE001 - reported, the others still apply
                log.warning("textDocument/didChange: change %d of %d is invalid and was not applied (%s)",
                            i + 1, len(changes), _leaf_errors(e))
        try:
            return super().structure_message({**data, "params": {**params, "contentChanges": valid}})
        except Exception as e:
            log.warning("ignored textDocument/didChange: invalid params (%s)",
                        _leaf_errors(e.__cause__) if e.__cause__ is not None else why)
            return None

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any):
        """LSP: exit code 1 unless shutdown came first; in a daemon only this session's connection ends."""
        self._server.exit_code = 0 if self._shutdown else 1
        end = getattr(self._server, "end_connection", None)
        if end is None:
            yield from super().lsp_exit(*args)
            return
        end()

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        if callback == self._check_handler_result:  # a notification: pygls 2.1 never drops its future (a leak
            def done(future, _id=msg_id):  # per keystroke, and a failed one holds its params via the traceback)
                self._request_futures.pop(_id, None)
                callback(future)

            return super()._execute_handler(msg_id, handler, done, args, kwargs)
        return super()._execute_handler(msg_id, handler, callback, args, kwargs)

    def handle_message(self, message):
        if isinstance(message, list):  # a JSON-RPC batch: LSP has none
            ids = [m.get("id") for m in message if isinstance(m, dict) and "id" in m and "method" in m]
            for msg_id in ids or [None]:
                self.reply_error(msg_id, -32600, "invalid request: batches are not supported")
            return
        if not isinstance(message, dict) or "jsonrpc" not in message:
            log.warning("ignoring a message that is not JSON-RPC")
            too_big = isinstance(message, dict) and _OVERSIZED in message
            msg_id = message.get("id") if isinstance(message, dict) and "method" in message else None
            self.reply_error(msg_id, -32600, "message too large" if too_big else "invalid request: not JSON-RPC 2.0")
            return
        method = message.get("method")
        if isinstance(method, str) and method.startswith("notebookDocument/"):
            self._refuse_notebook(message)
            return
        if method == STATUS_METHOD and "id" in message and self._server.status_provider is not None:
            self._server.probe = not self._initialize_seen  # a `dgcomplete status` connection, not a session
            self._send_response(message["id"], result=self._server.status_provider(self._server))
            return
        message = self._structure(message)
        if message is None:
            return
        if self._shutdown and hasattr(message, "id") and getattr(message, "method", "exit") != "exit":
            self.reply_error(message.id, -32600, "invalid request: the server is shutting down")
            return
        if getattr(message, "method", None) == lsp.INITIALIZE and hasattr(message, "id"):
            if self._initialize_seen:  # LSP: initialize is sent once; a second would reset the client's state
                self.reply_error(message.id, -32600, "invalid request: the server is already initialized")
                return
            self._initialize_seen = True
        super().handle_message(message)

    def _refuse_notebook(self, message: dict[str, Any]) -> None:
        """Notebooks are not advertised (no notebookDocumentSync): their cells were accepted but never updated."""
        if "id" in message:
            self.reply_error(message.get("id"), -32601, f"{message['method']}: notebooks are not supported")
        elif not getattr(self, "_notebook_warned", False):
            self._notebook_warned = True
            log.warning("ignoring %s: notebooks are not supported (their cells get no completions)",
                        message["method"])


STATUS_METHOD = "dgcomplete/status"  # answered by a daemon on any connection, before initialize too
_OVERSIZED = "dgcomplete: oversized message"
MAX_MESSAGE_BYTES = 64 << 20  # a bigger frame is skipped (and answered -32600), never read into memory


class BoundedInput:
    """stdin for pygls' reader: header lines and bodies are read within bounds (no allocation a header asks)."""

    def __init__(self, raw: Any, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.raw, self.limit = raw, limit

    def readline(self) -> bytes:
        return self.raw.readline(65536)

    def read(self, n: int) -> bytes:
        if n <= self.limit:
            return self.raw.read(n)
        left = n
        while left > 0:  # skip the frame
            chunk = self.raw.read(min(left, 1 << 20))
            if not chunk:
                return b""
            left -= len(chunk)
        return _skipped(n, self.limit)


def _skipped(n: int, limit: int) -> bytes:
    log.error("skipped a message of %d bytes (limit %d)", n, limit)
    return json.dumps({_OVERSIZED: n}).encode()


class BoundedStream:
    """The same bounds as :class:`BoundedInput` for a socket (asyncio StreamReader): every transport skips
    frames over MAX_MESSAGE_BYTES and reads header lines in pieces of at most the reader's limit."""

    def __init__(self, reader: asyncio.StreamReader, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.reader, self.limit = reader, limit

    async def readline(self) -> bytes:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as e:  # EOF: b"" or the last partial line
            return e.partial
        except asyncio.LimitOverrunError as e:  # a line longer than the buffer: a piece of it, as stdio does
            return await self.reader.read(max(1, e.consumed))

    async def readexactly(self, n: int) -> bytes:
        try:
            if n <= self.limit:
                return await self.reader.readexactly(n)
            left = n
            while left > 0:  # skip the frame
                chunk = await self.reader.read(min(left, 1 << 20))
                if not chunk:
                    return b""
                left -= len(chunk)
        except asyncio.IncompleteReadError:
            return b""
        return _skipped(n, self.limit)


class OpenDocuments(Workspace):
    """pygls' workspace, minus reading unopened URIs from disk (get_text_document is None for those), and
    minus keeping a second copy of the documents the engine holds.

    pygls applies every change to its own copy (splitting the whole text into lines each time: ~8 ms a
    keystroke on a 5,000-line file, and with other line-break rules than LSP's). Its copy is only needed
    until the engine has the document (edits typed while the model loads), so from then on it is dropped.
    """

    engine_has: Callable[[str], bool] = staticmethod(lambda uri: False)  # set once the engine exists

    def update_text_document(self, text_doc: lsp.VersionedTextDocumentIdentifier,  # type: ignore[override]
                             change: lsp.TextDocumentContentChangeEvent) -> None:
        from urllib.parse import unquote

        uri = unquote(text_doc.uri)
        if self.engine_has(text_doc.uri):
            self._text_documents.pop(uri, None)  # the engine's copy is the one kept up to date
            return
        if uri in self._text_documents:
            super().update_text_document(text_doc, change)

    def get_text_document(self, doc_uri: str):  # type: ignore[override]
        from urllib.parse import unquote

        return self.text_documents.get(unquote(doc_uri))


class DgServer(LanguageServer):
    """One LSP session: its own documents, settings, initialize and shutdown. On stdio it owns its model; in a
    daemon (``shared`` set) it serves a view of the daemon's one engine."""

    def __init__(self, model_path: str | None = None, *, threads: int | None = None, remote: Any = None,
                 shared: Any = None) -> None:
        super().__init__("dgcomplete", __version__, protocol_cls=Protocol, converter_factory=strict_converter,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.shared = shared  # daemon.SharedModel, or None
        self.exit_code = 0
        self.end_connection: Callable[[], None] | None = None  # set by the daemon for each connection
        self.status_provider: Callable[[DgServer], Any] | None = None
        self.probe = False
        self.client_name = ""
        self._opening: set[asyncio.Future] = set()
        self.settings = Settings(model=model_path, threads=threads)
        self.engine: Engine | None = None
        self.remote = remote
        self.stats = Stats()
        self.ready: asyncio.Event | None = None  # created on the server's loop in `initialized`
        self.load_error: str | None = None
        self.inline_client = False
        self.fatal_shown = False
        self.inflight: dict[str, CancelToken] = {}

    def report_server_error(self, error: Exception, source: Any) -> None:
        # out-of-band errors (malformed messages) are logged, not shown: a fuzzing client must not spam the UI
        log.error("%s: %s", getattr(source, "__name__", source), error)
        if source is JsonRpcException and isinstance(error, (ValueError, RecursionError)):  # the body is not JSON
            self.protocol.reply_error(None, -32700, f"parse error: {type(error).__name__}")

    # ---- model -------------------------------------------------------------------------------------------
    async def _attach_shared(self) -> None:
        """A daemon session: wait for the daemon's model, then serve a view of its engine."""
        shared = self.shared
        await shared.ready.wait()
        owned = {"model": shared.model_path, "threads": shared.threads, "steps": shared.steps}
        ignored = [k for k, v in owned.items() if getattr(self.settings, k) not in (None, v)]
        if ignored:
            log.warning("shared daemon: the session's %s setting(s) are the daemon's; ignored", ignored)
        if shared.engine is not None:
            self.engine = shared.engine.view()
        elif self.remote is not None:
            self.engine = Engine(None, remote=self.remote, fallback_to_local=False)
        if self.engine is not None:
            if self.remote is not None:
                self.engine.remote, self.engine.fallback_to_local = self.remote, self.settings.fallback_to_local
            self._apply_settings()
        if shared.load_error:
            self.load_error = shared.load_error
            self.show_fatal(self.load_error)
        else:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Info,
                                                         f"dgcomplete: shared daemon ready ({shared.ready_line})"))

    async def end_session(self) -> None:
        """The connection ended (exit, EOF or reset): cancel its requests and drop its documents."""
        for fut in list(self.protocol._request_futures.values()) + list(self._opening):
            if not fut.done():
                fut.cancel()
        if self.engine is not None:
            await self.engine.shutdown()

    async def load_model(self) -> None:
        from .model import CheckpointError, load_model
        from .models import default_model_path

        token = str(uuid.uuid4())
        progress = self.client_capabilities and self.client_capabilities.window and \
            self.client_capabilities.window.work_done_progress
        if progress:
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title="dgcomplete: loading model"))
            except Exception:  # the client refused a progress token: carry on without
                progress = False
        if self.remote is None and self.settings.backend == "openai":  # remote backend chosen in settings
            from .backends.remote import RemoteBackend, RemoteConfig

            try:
                self.remote = RemoteBackend(RemoteConfig.from_options(self.settings.remote))
            except ValueError as e:
                self.show_fatal(f"dgcomplete: remote backend settings: {e}")
        path = self.settings.model or str(default_model_path())
        loop = asyncio.get_running_loop()
        try:
            if self.shared is not None:
                await self._attach_shared()
                return
            loaded = await loop.run_in_executor(None, lambda: load_model(path))
            self.engine = Engine(loaded, threads=self.settings.threads, max_steps=self.settings.steps,
                                 syntax_renoise=self.settings.syntax_renoise, remote=self.remote,
                                 fallback_to_local=self.settings.fallback_to_local)
            self._apply_settings()

            def report(msg: str) -> None:
                if progress:
                    loop.call_soon_threadsafe(self.work_done_progress.report, token,
                                              lsp.WorkDoneProgressReport(message=msg))

            info = await self.engine.start(report)
            line = f"model {loaded.name} ready on {describe_threads(info)}"  # " ready ": what clients look for
            log.info(line)
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Info, f"dgcomplete: {line}"))
        except (CheckpointError, OSError, RuntimeError) as e:
            self.load_error = f"dgcomplete cannot load the model at {path}: {e}"
            log.error(self.load_error)
            if self.remote is not None:  # the remote backend can still serve
                self.engine = Engine(None, remote=self.remote, fallback_to_local=False)
                self._apply_settings()
            self.show_fatal(self.load_error)
        finally:
            if progress:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(
                    message="failed" if self.load_error else "ready"))
            assert self.ready is not None
            self.ready.set()

    def open_from_workspace(self, uri: str) -> None:
        """Give the engine pygls' copy of a document (it holds the edits typed while the model loaded); a copy
        that is gone was closed meanwhile, and stays closed."""
        doc = self.workspace.get_text_document(uri)
        if self.engine is not None and doc is not None and doc.source is not None:
            self.engine.open(uri, doc.source, doc.version or 0, doc.language_id)

    def show_fatal(self, message: str) -> None:
        if not self.fatal_shown:
            self.fatal_shown = True
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, message))

    def _apply_settings(self, changed: list[str] | None = None) -> None:
        """Hand the session's settings to the engine; say (log + one message) what could not change live."""
        refused = [f"{k} (needs a restart)" for k in (changed or []) if k in RESTART]
        if self.engine is not None:
            refused += self.engine.configure(self.settings)
        if refused:
            msg = "dgcomplete: settings not applied now: " + "; ".join(refused)
            log.warning(msg)
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, msg))

    def settings_errors(self, errors: list[str]) -> None:
        """Refused keys/values: in the log, and once per update in the editor (a typo must not go unnoticed)."""
        if errors:
            msg = "dgcomplete: " + "; ".join(errors[:3]) + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else "")
            log.warning(msg)
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Warning, msg))

    async def switch_backend(self) -> None:
        """``backend``/``remote`` changed while running: use the new remote backend (or none) from now on."""
        from .backends.remote import RemoteBackend, RemoteConfig

        old = self.remote
        new = None
        if self.settings.backend == "openai":
            try:
                new = RemoteBackend(RemoteConfig.from_options(self.settings.remote))
            except ValueError as e:
                self.settings_errors([f"remote backend settings: {e} (kept the previous backend)"])
                return
        self.remote = new
        if self.engine is not None:
            self.engine.remote = new
        if old is not None and old is not new:
            await old.aclose()
        log.info("backend now %s", self.settings.backend)

    async def engine_or_reason(self) -> tuple[Engine | None, str]:
        if self.ready is not None and not self.ready.is_set():
            try:
                await asyncio.wait_for(self.ready.wait(), timeout=30)
            except asyncio.TimeoutError:
                return None, "model still loading"
        if self.engine is None:
            return None, self.load_error or "model not loaded"
        return self.engine, ""

    # ---- positions ---------------------------------------------------------------------------------------
    def offset(self, uri: str, pos: lsp.Position) -> int:
        assert self.engine is not None
        return self.engine.session(uri).doc.offset_at(pos.line, pos.character)

    def position(self, uri: str, offset: int) -> lsp.Position:
        assert self.engine is not None
        line, col = self.engine.session(uri).doc.position_at(offset)
        return lsp.Position(line=line, character=col)


def describe_threads(info: dict[str, Any]) -> str:
    """``1 thread (warm-up 3.1 ms with 1, 5.2 ms with 2)``: the start-up measurement, for people."""
    n = info.get("threads")
    if n is None:
        return "no local model"
    timings = ", ".join(f"{v} ms with {k}" for k, v in (info.get("timings_ms") or {}).items())
    return f"{n} thread{'s' if n != 1 else ''}" + (f" (warm-up {timings})" if timings else "")


server = None  # created by make_server(); module-level for pygls decorators in tests


def make_server(model_path: str | None = None, *, threads: int | None = None, remote: Any = None,
                shared: Any = None) -> DgServer:
    ls = DgServer(model_path, threads=threads, remote=remote, shared=shared)

    @ls.feature(lsp.INITIALIZE)
    def initialize(ls: DgServer, params: lsp.InitializeParams) -> None:
        _, errors = ls.settings.update(params.initialization_options or {})
        ls.settings_errors(errors)
        info = params.client_info
        ls.client_name = f"{info.name} {info.version or ''}".strip() if info else ""
        caps = params.capabilities.text_document
        ls.inline_client = bool(caps and caps.inline_completion is not None)
        ls.workspace.__class__ = OpenDocuments  # created by pygls just before this handler
        ls.workspace.engine_has = lambda uri: ls.engine is not None and uri in ls.engine.sessions

    @ls.feature(lsp.INITIALIZED)
    async def initialized(ls: DgServer, params: lsp.InitializedParams) -> None:
        if ls.ready is not None:  # a second `initialized` must not load a second model
            return
        ls.ready = asyncio.Event()
        asyncio.ensure_future(ls.load_model())

    @ls.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: DgServer, params: lsp.DidChangeConfigurationParams) -> None:
        changed, errors = ls.settings.update(params.settings)
        ls.settings_errors(errors)
        if {"backend", "remote"} & set(changed) and ls.ready is not None and ls.ready.is_set():
            await ls.switch_backend()
        ls._apply_settings(changed)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DgServer, params: lsp.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.engine is not None:  # in order, now: a later didClose must find it open
            ls.open_from_workspace(uri)
        elif ls.ready is not None and not ls.ready.is_set():  # the model loads: open pygls' copy once it is there
            fut = asyncio.ensure_future(_open_when_ready(ls, uri))
            ls._opening.add(fut)
            fut.add_done_callback(ls._opening.discard)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DgServer, params: lsp.DidChangeTextDocumentParams) -> None:
        engine = ls.engine
        d = params.text_document
        if engine is None or d.uri not in engine.sessions:
            if engine is not None:  # changes for a document we never saw: take it from pygls' copy
                doc = ls.workspace.get_text_document(d.uri)
                if doc is not None and doc.source is not None:
                    engine.open(d.uri, doc.source, d.version or 0, doc.language_id)
            return
        changes = []
        for c in params.content_changes:
            if isinstance(c, lsp.TextDocumentContentChangePartial):
                r = c.range
                changes.append(((r.start.line, r.start.character, r.end.line, r.end.character), c.text))
            else:
                changes.append((None, c.text))
        engine.change(d.uri, d.version, changes)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DgServer, params: lsp.DidCloseTextDocumentParams) -> None:
        if ls.engine is not None:
            ls.engine.close(params.text_document.uri)

    @ls.feature(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, lsp.InlineCompletionOptions())
    async def inline_completion(ls: DgServer, params: lsp.InlineCompletionParams) -> lsp.InlineCompletionList | None:
        return await ls_inline(ls, params)

    @ls.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[".", "(", " "]))
    async def completion(ls: DgServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        if ls.settings.completion_items == "never" or (ls.inline_client and ls.settings.completion_items == "auto"):
            return None
        return await ls_completion(ls, params)

    @ls.command(STATS_COMMAND)
    def stats_command(ls: DgServer, *args: Any) -> dict[str, Any]:
        out = ls.stats.as_dict()
        if ls.engine is not None:
            out["threads"] = ls.engine.threads
            out["model"] = ls.engine.loaded.name if ls.engine.loaded else None
            e = ls.engine
            out["engine"] = {**e.settings, "syntax_renoise": e.syntax_renoise, "fallback_to_local": e.fallback_to_local,
                             "backend": "openai" if e.remote is not None else "local",
                             "gate": e.gate.fitted_on}
        return out

    @ls.command(ACCEPT_COMMAND)
    def accept_command(ls: DgServer, *args: Any) -> None:
        ls.stats.accepted += 1

    @ls.feature(lsp.SHUTDOWN)
    async def shutdown(ls: DgServer, *args: Any) -> None:
        if ls.engine is not None:  # a daemon session's view drops its documents only; the model stays
            await ls.engine.shutdown()

    from .rewrite import register as register_rewrite
    register_rewrite(ls)

    global server
    server = ls
    return ls


async def _open_when_ready(ls: DgServer, uri: str) -> None:
    assert ls.ready is not None
    await ls.ready.wait()
    if ls.engine is not None and uri not in ls.engine.sessions:  # a didChange may have opened it already
        ls.open_from_workspace(uri)


def _items_range(ls: DgServer, uri: str, text: str, comp: Completion, cand: str) -> tuple[lsp.Range, str]:
    """A same-line range from the typed word's start to the cursor, extended over auto-inserted closers."""
    start, offset = comp.start, comp.offset
    line_end = text.find("\n", offset)
    rest = text[offset : len(text) if line_end == -1 else line_end]
    end = offset
    typed = text[start:offset]
    insert = typed + cand
    first_line = insert.split("\n", 1)[0]
    closers = rest.strip()
    if closers and all(ch in CLOSERS for ch in closers) and "\n" not in cand:
        # the editor auto-inserted these: replace them when the suggestion ends with them
        if first_line.rstrip().endswith(closers):
            end = offset + len(rest.rstrip())
    return lsp.Range(start=ls.position(uri, start), end=ls.position(uri, end)), insert


async def _complete(ls: DgServer, uri: str, pos: lsp.Position, *, n: int, single_line: bool = False,
                    selected: lsp.SelectedCompletionInfo | None = None) -> tuple[Completion | None, str]:
    engine, reason = await ls.engine_or_reason()
    if engine is None:
        return None, reason
    try:
        session = engine.session(uri)
    except EngineError:
        doc = ls.workspace.get_text_document(uri)
        if doc is None or doc.source is None:
            raise
        session = engine.open(uri, doc.source, doc.version or 0, doc.language_id)
    if pos.line < 0 or pos.character < 0:
        raise EngineError(f"invalid position {pos.line}:{pos.character}")
    if pos.line >= session.doc.line_count:
        raise EngineError(f"position {pos.line}:{pos.character} is past the end of {uri} "
                          f"({session.doc.line_count} lines)")
    offset = ls.offset(uri, pos)
    token = CancelToken()
    ls.inflight[uri] = token
    try:
        comp = await engine.complete(uri, offset, n=n, cancel=token, single_line=single_line,
                                     max_lines=ls.settings.max_lines)
    except asyncio.CancelledError:
        token.cancel("cancelled")
        ls.stats.cancelled += 1
        raise
    except EngineError as e:  # the request was fine; the backend failed (remote down, no model)
        raise RequestFailed(str(e)) from e
    if comp.items and session.version != comp.version:
        ls.stats.stale += 1
        return None, "stale"
    return comp, comp.reason


async def ls_inline(ls: DgServer, params: lsp.InlineCompletionParams) -> lsp.InlineCompletionList | None:
    t0 = time.perf_counter()
    ls.stats.requests += 1
    uri = params.text_document.uri
    invoked = params.context.trigger_kind == lsp.InlineCompletionTriggerKind.Invoked
    try:
        comp, reason = await _complete(ls, uri, params.position, n=3 if invoked else 1)
    except EngineError as e:
        raise JsonRpcInvalidParams(str(e)) from e
    elapsed = (time.perf_counter() - t0) * 1e3
    ls.stats.latency_ms.append(elapsed)
    if comp is None or not comp.items:
        ls.stats.empty += 1
        ls.stats.last = {"reason": reason, "ms": round(elapsed, 1), **(comp.stats if comp else {})}
        log.info("no inline completion for %s: %s", uri, reason)
        return lsp.InlineCompletionList(items=[])
    text = ls.engine.session(uri).doc.text  # type: ignore[union-attr]
    sel = params.context.selected_completion_info
    items = []
    for cand in comp.items[: 3 if invoked else 1]:
        rng, insert = _items_range(ls, uri, text, comp, cand.text)
        if sel is not None:
            # the item must extend the selected completion and use its range
            typed = text[ls.offset(uri, sel.range.start) : comp.offset]
            if not (typed + cand.text).startswith(sel.text):
                continue
            rng, insert = sel.range, typed + cand.text
        items.append(lsp.InlineCompletionItem(
            insert_text=insert, filter_text=insert, range=rng,
            command=lsp.Command(title="dgcomplete: accepted", command=ACCEPT_COMMAND, arguments=[comp.stats]),
        ))
    ls.stats.shown += 1 if items else 0
    ls.stats.last = {"ms": round(elapsed, 1), **comp.stats}
    return lsp.InlineCompletionList(items=items)


async def ls_completion(ls: DgServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    uri = params.text_document.uri
    try:
        comp, _ = await _complete(ls, uri, params.position, n=1)
    except EngineError as e:
        raise JsonRpcInvalidParams(str(e)) from e
    if comp is None or not comp.items:
        return lsp.CompletionList(is_incomplete=True, items=[])
    text = ls.engine.session(uri).doc.text  # type: ignore[union-attr]
    cand = comp.items[0]
    rng, insert = _items_range(ls, uri, text, comp, cand.text)
    first = insert.split("\n", 1)[0].strip()
    label = f"✦ {first[:60]}" + (" …" if "\n" in insert.strip() else "")
    return lsp.CompletionList(is_incomplete=True, items=[lsp.CompletionItem(
        label=label, kind=lsp.CompletionItemKind.Snippet, detail="dgcomplete (diffusion)",
        documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, f"```\n{insert}\n```"),
        text_edit=lsp.TextEdit(range=rng, new_text=insert), filter_text=insert, sort_text="0000",
        insert_text_format=lsp.InsertTextFormat.PlainText,
        command=lsp.Command(title="dgcomplete: accepted", command=ACCEPT_COMMAND),
    )])


def serve(model_path: str | None, *, threads: int | None = None, remote: Any = None) -> int:
    """One session on stdio; the exit code follows LSP (1 for an ``exit`` without ``shutdown``). TCP and Unix
    sockets are served by :mod:`daemon` (one server object per connection)."""
    ls = make_server(model_path, threads=threads, remote=remote)
    ls.start_io(BoundedInput(sys.stdin.buffer))
    return ls.exit_code
