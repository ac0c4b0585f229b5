"""The LSP adapter: thin pygls handlers that fetch the document, call the engine and shape LSP items.

Nothing here touches tensors. Every failure becomes an LSP error with a clear message, an empty result with a
logged reason, or one ``window/showMessage`` — the daemon never dies on a request.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from . import __version__
from .context import word_before
from .engine import Completion, Engine, EngineError, Session
from .folders import WATCHED_EXTENSIONS, uri_to_path
from .notebooks import Cell, View, layouts
from .protocol import BoundedInput, OpenDocuments, Protocol, strict_converter
from .settings import RESTART, Settings
from .syntax.document import changed_span
from .syntax.languages import key_extension
from .types import CancelToken, Candidate

log = logging.getLogger("dgcomplete.server")

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


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: a valid request the server could not serve (the message says why)."""

    CODE = -32803


class NotACodeCell(EngineError):
    """A notebook cell the engine holds no layout for (Markdown, or a language it does not complete)."""


class DgServer(LanguageServer):
    """One LSP session: its own documents, settings, initialize and shutdown. On stdio it owns its model; in a
    daemon (``shared`` set) it serves a view of the daemon's one engine."""

    def __init__(self, model_path: str | None = None, *, threads: int | None = None, remote: Any = None,
                 shared: Any = None) -> None:
        super().__init__("dgcomplete", __version__, protocol_cls=Protocol, converter_factory=strict_converter,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                             notebook_selector=[lsp.NotebookDocumentFilterWithNotebook(notebook="*")]))
        self.shared = shared  # daemon.SharedModel, or None
        self.exit_code = 0
        self.end_connection: Callable[[], None] | None = None  # set by the daemon for each connection
        self.status_provider: Callable[[DgServer], Any] | None = None
        self.probe = False
        self.client_name = ""
        self._opening: set[asyncio.Future] = set()
        self._watched: set[str] = set()  # the extensions the client was asked to watch on disk
        self.settings = Settings(model=model_path, threads=threads)
        self.engine: Engine | None = None
        self.remote = remote
        self.stats = Stats()
        self.ready: asyncio.Event | None = None  # created on the server's loop in `initialized`
        self.load_error: str | None = None
        self.inline_client = False
        # what the client's completion items take (initialize): Markdown documentation, insertTextMode asIs
        self.item_markdown = self.item_as_is = False
        self.fatal_shown = False
        # notebooks: each code cell (URI as pygls keys it) -> (its layout's engine key, first line, line count);
        # each notebook -> the engine keys of its layouts (notebooks.py)
        self.cells: dict[str, tuple[str, int, int]] = {}
        self.notebook_keys: dict[str, set[str]] = {}

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
            self._engine_created()
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
            self._engine_created()

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
                self._engine_created()
            self.show_fatal(self.load_error)
        finally:
            if progress:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(
                    message="failed" if self.load_error else "ready"))
            assert self.ready is not None
            self.ready.set()

    def _engine_created(self) -> None:
        """A new engine takes the session's settings and workspace folders."""
        self._apply_settings()
        self.folders_to_engine()

    def folders_to_engine(self) -> None:
        """The workspace folders (their local paths) to the engine, whose retrieval reads their files."""
        if self.engine is None:
            return
        ws = self.workspace
        uris = [f.uri for f in ws.folders.values()] or ([ws.root_uri] if ws.root_uri else [])
        self.engine.set_folders([p for p in map(uri_to_path, uris) if p])

    async def watch_files(self, extensions: AbstractSet[str] = frozenset(WATCHED_EXTENSIONS)) -> None:
        """Ask the client to report changes to source files of these extensions on disk, where it can (a branch
        switch changes the files retrieval reads): the grammars' at start-up, a language without a grammar's once
        one of its documents opens; a client that cannot or refuses leaves the index as read."""
        caps = self.client_capabilities.workspace if self.client_capabilities else None
        watched = caps.did_change_watched_files if caps else None
        extensions = set(extensions) - self._watched
        if not (watched and watched.dynamic_registration and extensions):
            return
        self._watched |= extensions
        glob = "**/*.{" + ",".join(sorted(e.lstrip(".") for e in extensions)) + "}"
        reg = lsp.Registration(id=str(uuid.uuid4()), method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                               register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                                   watchers=[lsp.FileSystemWatcher(glob_pattern=glob)]))
        try:
            await asyncio.wait_for(self.client_register_capability_async(lsp.RegistrationParams([reg])), 10.0)
        except Exception as e:  # noqa: BLE001 - the client's answer must not matter beyond this
            log.info("file watching not registered: %s", e)

    def open_from_workspace(self, uri: str) -> Session | None:
        """Give the engine pygls' copy of a document (it holds the edits typed while the model loaded, or before
        a change the engine never saw the opening of); a copy that is gone was closed meanwhile, and stays
        closed (None)."""
        doc = self.workspace.get_text_document(uri)
        if self.engine is None or doc is None or doc.source is None:
            return None
        s = self.engine.open(uri, doc.source, doc.version or 0, doc.language_id)
        ext = key_extension(s.retrieval_lang or "")
        if ext:  # its folder's files are read too: watch them like the grammars' (once: watch_files keeps count)
            asyncio.ensure_future(self.watch_files({ext}))
        return s

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

    # ---- documents and notebook cells ----------------------------------------------------------------------
    def view(self, uri: str) -> View:
        """The client's document ``uri`` in the engine: its own session, or a code cell's place in its notebook's
        layout. A document opened while the model loaded is opened from pygls' copy. EngineError if unknown."""
        engine = self.engine
        assert engine is not None
        key = unquote(uri)
        cell = self.cells.get(key)
        if cell is not None:
            doc = self.workspace.get_text_document(uri)
            return View(uri, (doc.version if doc is not None else None) or 0, engine.session(cell[0]), cell[1], cell[2])
        if self.workspace.get_notebook_document(cell_uri=uri) is not None:
            raise NotACodeCell(f"{uri} is not a code cell of a language dgcomplete completes")
        s = engine.sessions.get(uri) or self.open_from_workspace(uri) or engine.session(uri)  # (raises: unknown)
        return View(uri, s.version, s)

    def sync_notebook(self, uri: str) -> None:
        """Bring the engine's layouts of notebook ``uri`` (one document per language of its code cells) to
        pygls' copy of its cells: a layout that changed gets the one change that makes it new, so the parse,
        the retrieval index and the encoded prefix are updated as for a keystroke in a file."""
        engine = self.engine
        nb = self.workspace.get_notebook_document(notebook_uri=uri)
        if engine is None or nb is None:
            return
        cells = []
        for c in nb.cells:
            doc = self.workspace.get_text_document(c.document)
            if doc is not None and doc.source is not None:
                cells.append(Cell(unquote(c.document), doc.language_id, doc.source, c.kind == lsp.NotebookCellKind.Code))
        lays = layouts(unquote(uri), cells)
        keys = {lay.key for lay in lays.values()}
        self.close_notebook(uri, keep=keys)
        for lay in lays.values():
            s = engine.sessions.get(lay.key)
            if s is None:
                engine.open(lay.key, lay.text, 1, lay.language_id)
            else:
                a, b, new = changed_span(s.doc.text, lay.text)
                if b > a or new:
                    engine.change(lay.key, s.version + 1, [((*s.doc.position_at(a), *s.doc.position_at(b)), new)])
            self.cells.update({c: (lay.key, line, n) for c, (line, n) in lay.cells.items()})
        self.notebook_keys[unquote(uri)] = keys

    def close_notebook(self, uri: str, keep: AbstractSet[str] = frozenset()) -> None:
        """Forget notebook ``uri``'s cells, and close its layouts but those in ``keep``."""
        keys = self.notebook_keys.pop(unquote(uri), set())
        for c in [c for c, (k, _, _) in self.cells.items() if k in keys]:
            del self.cells[c]
        if self.engine is not None:
            for k in keys - keep:
                if k in self.engine.sessions:
                    self.engine.close(k)


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
        ci = caps.completion.completion_item if caps and caps.completion else None
        ls.item_markdown = bool(ci and ci.documentation_format and lsp.MarkupKind.Markdown in ci.documentation_format)
        ls.item_as_is = bool(ci and ci.insert_text_mode_support
                             and lsp.InsertTextMode.AsIs in ci.insert_text_mode_support.value_set)
        ls.workspace.__class__ = OpenDocuments  # created by pygls just before this handler
        ls.workspace.engine_has = lambda uri: ls.engine is not None and uri in ls.engine.sessions

    @ls.feature(lsp.INITIALIZED)
    async def initialized(ls: DgServer, params: lsp.InitializedParams) -> None:
        if ls.ready is not None:  # a second `initialized` must not load a second model
            return
        ls.ready = asyncio.Event()
        asyncio.ensure_future(ls.load_model())
        asyncio.ensure_future(ls.watch_files())

    @ls.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: DgServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        ls.folders_to_engine()  # pygls has updated ls.workspace.folders

    @ls.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: DgServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if ls.engine is not None:
            events = [(uri_to_path(c.uri), c.type == lsp.FileChangeType.Deleted) for c in params.changes]
            ls.engine.files_changed([(p, deleted) for p, deleted in events if p])

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
            ls.open_from_workspace(d.uri)  # changes for a document we never saw: pygls' copy holds them
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

    # notebooks: pygls keeps the cells (its handler runs first); the engine gets one document per language
    @ls.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: DgServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if ls.engine is not None:
            ls.sync_notebook(uri)
        elif ls.ready is not None and not ls.ready.is_set():
            fut = asyncio.ensure_future(_sync_when_ready(ls, uri))
            ls._opening.add(fut)
            fut.add_done_callback(ls._opening.discard)

    @ls.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: DgServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        ls.sync_notebook(params.notebook_document.uri)

    @ls.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: DgServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        ls.close_notebook(params.notebook_document.uri)

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
            # what the engine applies (not the whole settings: ``remote`` may hold an API key)
            st = e.settings
            out["workspace"] = e.folder_stats()
            out["engine"] = {"max_lines": st.max_lines, "max_tokens": st.max_tokens,
                             "enabled_languages": st.enabled_languages, "min_confidence": st.min_confidence,
                             "context_sources": st.context_sources, "workspace_index_lines": st.workspace_index_lines,
                             "steps": st.steps, "syntax_renoise": e.syntax_renoise, "fallback_to_local": e.fallback_to_local,
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


async def _sync_when_ready(ls: DgServer, uri: str) -> None:
    assert ls.ready is not None
    await ls.ready.wait()
    if unquote(uri) not in ls.notebook_keys:  # a didChange may have synced it already
        ls.sync_notebook(uri)


async def _open_when_ready(ls: DgServer, uri: str) -> None:
    assert ls.ready is not None
    await ls.ready.wait()
    if ls.engine is not None and uri not in ls.engine.sessions:  # a didChange may have opened it already
        ls.open_from_workspace(uri)


def _position(v: View, offset: int) -> lsp.Position:
    line, col = v.position(offset)
    return lsp.Position(line=line, character=col)


def _items_range(v: View, comp: Completion, cand: Candidate) -> tuple[lsp.Range, str]:
    """A same-line range from the typed word's start to the cursor, and over the closers the item writes itself
    (``Candidate.replaces``: those the editor auto-inserted right of the cursor)."""
    text = v.session.doc.text
    start, offset = comp.start, comp.offset
    end = offset + cand.replaces
    return lsp.Range(start=_position(v, start), end=_position(v, end)), text[start:offset] + cand.text


def over_selection(text: str, edit: tuple[int, int, str], selected: tuple[int, int, str]) -> str | None:
    """``edit`` (``[start, end)`` of ``text`` made its text) as the one edit of the suggest widget's range
    (``selected``: ``[start, end)`` and the item's text) that VS Code shows while the widget is open: what the
    range becomes, which must extend the item's text; None where no such edit does the same (it starts outside
    the range, or writes over text past it, the editor's closers, that it does not end with)."""
    start, end, insert = edit
    s0, s1, item = selected
    if not s0 <= start <= s1:
        return None
    if end <= s1:
        out = text[s0:start] + insert + text[end:s1]
    else:  # it writes over closers past the range: the same edit if it ends with them and they stay
        over = text[s1:end]
        if "\n" in insert or not insert.endswith(over):
            return None
        out = text[s0:start] + insert[: len(insert) - len(over)]
    return out if out.startswith(item) else None


async def _complete(ls: DgServer, uri: str, pos: lsp.Position, *,
                    n: int) -> tuple[Completion | None, str, View | None]:
    engine, reason = await ls.engine_or_reason()
    if engine is None:
        return None, reason, None
    try:
        v = ls.view(uri)
    except NotACodeCell as e:  # a Markdown cell: nothing to complete, and nothing wrong with asking
        return None, str(e), None
    if pos.line < 0 or pos.character < 0:
        raise EngineError(f"invalid position {pos.line}:{pos.character}")
    if pos.line >= v.line_count:
        raise EngineError(f"position {pos.line}:{pos.character} is past the end of {uri} ({v.line_count} lines)")
    offset = v.offset(pos.line, pos.character)
    token = CancelToken()
    try:
        comp = await engine.complete(v.session.uri, offset, n=n, cancel=token, max_lines=ls.settings.max_lines)
    except asyncio.CancelledError:
        token.cancel("cancelled")
        ls.stats.cancelled += 1
        raise
    except EngineError as e:  # the request was fine; the backend failed (remote down, no model)
        raise RequestFailed(str(e)) from e
    if comp.items and v.session.version != comp.version:
        ls.stats.stale += 1
        return None, "stale", v
    return comp, comp.reason, v


def _selection(v: View, sel: lsp.SelectedCompletionInfo | None) -> tuple[int, int, str] | None:
    """The suggest widget's selected item as document offsets and text (None without one, or where its range is
    not in the document)."""
    if sel is None:
        return None
    a, b = sel.range.start, sel.range.end
    if min(a.line, a.character, b.line, b.character) < 0 or max(a.line, b.line) >= v.line_count:
        return None
    return v.offset(a.line, a.character), v.offset(b.line, b.character), sel.text


async def ls_inline(ls: DgServer, params: lsp.InlineCompletionParams) -> lsp.InlineCompletionList | None:
    t0 = time.perf_counter()
    ls.stats.requests += 1
    uri = params.text_document.uri
    invoked = params.context.trigger_kind == lsp.InlineCompletionTriggerKind.Invoked
    try:
        comp, reason, v = await _complete(ls, uri, params.position, n=3 if invoked else 1)
    except EngineError as e:
        raise JsonRpcInvalidParams(str(e)) from e
    elapsed = (time.perf_counter() - t0) * 1e3
    ls.stats.latency_ms.append(elapsed)
    if comp is None or not comp.items:
        ls.stats.empty += 1
        ls.stats.last = {"reason": reason, "ms": round(elapsed, 1), **(comp.stats if comp else {})}
        log.info("no inline completion for %s: %s", uri, reason)
        return lsp.InlineCompletionList(items=[])
    assert v is not None
    text = v.session.doc.text
    sel = params.context.selected_completion_info
    selected = _selection(v, sel)
    items = []
    for cand in comp.items[: 3 if invoked else 1]:
        rng, insert = _items_range(v, comp, cand)
        if sel is not None:  # with the suggest widget open, VS Code shows an item that extends its selected one
            edit = (comp.start, comp.offset + cand.replaces, insert)
            over = over_selection(text, edit, selected) if selected is not None else None
            if over is None:
                continue
            rng, insert = sel.range, over
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
        comp, _, v = await _complete(ls, uri, params.position, n=1)
    except EngineError as e:
        raise JsonRpcInvalidParams(str(e)) from e
    if comp is None or not comp.items or v is None:
        return lsp.CompletionList(is_incomplete=True, items=[])
    rng, insert = _items_range(v, comp, comp.items[0])
    word = word_before(v.session.doc.text, comp.start)
    if word is not None:  # the item begins where the typed word begins (see completion_item)
        rng = lsp.Range(start=_position(v, word.start()), end=rng.end)
        insert = word.group(0) + insert
    item = completion_item(insert, rng, ls.item_markdown, ls.item_as_is)
    return lsp.CompletionList(is_incomplete=True, items=[item])


def completion_item(insert: str, rng: lsp.Range, markdown: bool = True, as_is: bool = True) -> lsp.CompletionItem:
    """The one menu item for clients without inline completion: ``insert`` replaces ``rng``, which begins where
    the word before the cursor begins.

    A menu filters its items by that word, and Emacs's completion-at-point (eglot, lsp-mode, without a frontend)
    by the label, which it inserts as it is: the item's textEdit replaces it only when a frontend such as company
    finishes the completion. So the label is the suggestion's first line, whole, and the mark and the
    line count go in the detail (``editors/emacs/test``). ``markdown``, ``as_is``: what the client declares it
    takes (documentation in Markdown, insertTextMode asIs)."""
    lines = insert.rstrip().split("\n")
    label = lines[0].rstrip() or insert.strip().split("\n", 1)[0]
    more = f", {len(lines)} lines" if len(lines) > 1 else ""
    return lsp.CompletionItem(
        label=label, kind=lsp.CompletionItemKind.Snippet, detail=f"✦ dgcomplete (diffusion{more})",
        documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, f"```\n{insert}\n```") if markdown
        else lsp.MarkupContent(lsp.MarkupKind.PlainText, insert),
        text_edit=lsp.TextEdit(range=rng, new_text=insert), filter_text=insert, sort_text="0000",
        insert_text_format=lsp.InsertTextFormat.PlainText,
        # the lines after the first carry their own indentation: a client must not indent them again (lsp-mode
        # re-indents each line of an item without this)
        insert_text_mode=lsp.InsertTextMode.AsIs if as_is else None,
        command=lsp.Command(title="dgcomplete: accepted", command=ACCEPT_COMMAND),
    )


def serve(model_path: str | None, *, threads: int | None = None, remote: Any = None) -> int:
    """One session on stdio; the exit code follows LSP (1 for an ``exit`` without ``shutdown``). TCP and Unix
    sockets are served by :mod:`daemon` (one server object per connection)."""
    ls = make_server(model_path, threads=threads, remote=remote)
    ls.start_io(BoundedInput(sys.stdin.buffer))
    return ls.exit_code
