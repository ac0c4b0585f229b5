"""LSP side of in-line rewrites: code actions (resolved lazily) and key-bindable commands.

Thin, like the handlers in :mod:`server`: turn the target ``{uri, range, version}`` into engine types, call
:meth:`Engine.edit <dgcomplete.engine.Engine.edit>` (which queues the work on the model thread, bounds it,
checks staleness and decides soundness through :mod:`edit`), and turn its outcome into a versioned
``WorkspaceEdit`` confined to the range — as the resolved action's edit, or applied with
``workspace/applyEdit`` by the commands.

    dgcomplete.rewriteSelection / dgcomplete.repairSyntax / dgcomplete.fillHoles
        argument: {uri, range, version} (+ optional seed, fraction)
        result:   {applied, newText, reason, stats}     (reason: one line, why nothing was applied)
    a stale version answers ContentModified (-32801) and applies nothing; a server without a model (neither the
    local one nor a remote backend) answers RequestFailed (-32803), as does a remote backend that fails without
    ``fallbackToLocal``.

Every request to the client (``window/workDoneProgress/create``, ``workspace/applyEdit``) is bounded by
``CLIENT_TIMEOUT_S`` (environment ``DGCOMPLETE_CLIENT_TIMEOUT_S``) and reads the reply untyped, so a client
that answers garbage or never costs at most that long and never leaves a command unanswered. Progress is
optional (created without holding up the work) and, once begun, always ends.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.progress import Progress
from pygls.protocol import LanguageServerProtocol

from . import edit
from .engine import EditOptions, Engine, EngineError, StaleEdit
from .notebooks import View
from .types import CancelToken

log = logging.getLogger("dgcomplete.rewrite")

REWRITE_COMMAND = "dgcomplete.rewriteSelection"
REPAIR_COMMAND = "dgcomplete.repairSyntax"
FILL_COMMAND = "dgcomplete.fillHoles"
COMMANDS = {"rewrite": REWRITE_COMMAND, "repair": REPAIR_COMMAND, "fill": FILL_COMMAND}
TITLES = edit.TITLES
KINDS = {"rewrite": lsp.CodeActionKind.RefactorRewrite, "repair": lsp.CodeActionKind.QuickFix,
         "fill": lsp.CodeActionKind.RefactorRewrite}
CLIENT_TIMEOUT_S = float(os.environ.get("DGCOMPLETE_CLIENT_TIMEOUT_S") or 30.0)  # applyEdit (the user may be asked)
PROGRESS_TIMEOUT_S = min(5.0, CLIENT_TIMEOUT_S)  # window/workDoneProgress/create


class RewriteSettings(Protocol):
    rewrite_fraction: float
    rewrite_variants: int
    repair_rounds: int
    hole_tokens: int


class RewriteServer(Protocol):
    """What the rewrites need of the language server (``server.DgServer``)."""

    settings: RewriteSettings
    client_capabilities: lsp.ClientCapabilities
    work_done_progress: Progress

    def view(self, uri: str) -> View: ...

    @property
    def protocol(self) -> LanguageServerProtocol: ...

    async def engine_or_reason(self) -> tuple[Engine | None, str]: ...

    def window_show_message(self, params: lsp.ShowMessageParams) -> None: ...


@dataclass
class Target:
    uri: str
    range: lsp.Range
    version: int | None
    kind: str
    seed: int = 0
    fraction: float | None = None

    def data(self) -> dict[str, Any]:
        r = self.range
        return {"uri": self.uri, "version": self.version, "kind": self.kind, "seed": self.seed,
                "range": {"start": {"line": r.start.line, "character": r.start.character},
                          "end": {"line": r.end.line, "character": r.end.character}}}


def _int(v: Any, name: str, lo: int = 0, hi: int = 2**31 - 1) -> int:
    """A JSON integer in [lo, hi]: 7.9 and "7" are not versions, 2**70 is not a seed (it overflowed the RNG)."""
    if type(v) is not int or not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], not {v!r}"[:160])
    return v


def parse_target(raw: Any, kind: str | None = None) -> Target:
    """``{uri, range, version}`` (a command argument or an action's data), or InvalidParams."""
    try:
        if not isinstance(raw, dict):
            raise TypeError("expected an object {uri, range, version}")
        uri = raw["uri"]
        if not isinstance(uri, str):
            raise TypeError("uri must be a string")
        rng = raw["range"]

        def pos(p: Any) -> lsp.Position:
            line, ch = _int(p["line"], "line", -(2**31)), _int(p["character"], "character", -(2**31))
            if line < 0 or ch < 0:
                raise ValueError(f"invalid position {line}:{ch}")
            return lsp.Position(line=line, character=ch)

        start, end = pos(rng["start"]), pos(rng["end"])
        if (end.line, end.character) < (start.line, start.character):
            start, end = end, start
        version = raw.get("version")
        kind = kind or raw.get("kind")
        if kind not in COMMANDS:
            raise ValueError(f"unknown rewrite kind {kind!r}")
        fraction = raw.get("fraction")
        return Target(uri, lsp.Range(start=start, end=end), None if version is None else _int(version, "version",
                      -(2**31)), kind, _int(raw.get("seed") or 0, "seed", 0, 2**63 - 1),
                      None if fraction is None else float(fraction))
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise JsonRpcInvalidParams(f"invalid rewrite target: {e}") from e


# ---- requests to the client -------------------------------------------------------------------------------
@dataclass
class Reply:
    result: Any = None  # the raw JSON result (not structured: a malformed one is judged by the caller)
    error: str = ""  # "timeout", the client's error message, or empty


def _plain(x: Any) -> Any:
    """pygls hands an untyped result over as namedtuples: back to JSON values."""
    if isinstance(x, tuple) and hasattr(x, "_asdict"):
        return {k: _plain(v) for k, v in x._asdict().items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


async def ask_client(ls: RewriteServer, method: str, params: Any, timeout: float) -> Reply:
    """Send a request to the client and wait at most ``timeout`` seconds for its answer, read untyped.

    pygls structures a reply by the method's result type and, when that fails, never resolves the request's
    future; reading it as a plain JSON value instead means garbage comes back as garbage (for the caller to
    refuse) rather than as a wait that never ends.
    """
    proto = ls.protocol
    msg_id = f"dgcomplete-{uuid.uuid4()}"
    fut = proto.send_request(method, params, msg_id=msg_id)
    getattr(proto, "_result_types", {}).pop(msg_id, None)  # no reply can have come yet: we hold the loop
    try:
        return Reply(_plain(await asyncio.wait_for(asyncio.wrap_future(fut), timeout)))
    except asyncio.TimeoutError:
        log.warning("%s: no answer from the client in %.0f s", method, timeout)
        return Reply(error=f"the client did not answer {method} in {timeout:.0f} s")
    except asyncio.CancelledError:
        raise
    except Exception as e:  # an error response
        return Reply(error=f"{method} failed: {getattr(e, 'message', None) or e}")
    finally:
        getattr(proto, "_request_futures", {}).pop(msg_id, None)


class _Progress:
    """Server-created work done progress (when the client supports it), cancellable from the client UI.

    ``window/workDoneProgress/create`` is sent without holding up the work; the progress begins when the
    client accepts the token, and :meth:`end` (always called) ends a begun one or forgets a pending one.
    """

    def __init__(self, ls: RewriteServer, title: str, cancel: CancelToken) -> None:
        caps = ls.client_capabilities
        self.ls = ls
        self.enabled = bool(caps and caps.window and caps.window.work_done_progress)
        self.token = f"dgcomplete-rewrite-{uuid.uuid4()}"
        self.title = title
        self.cancel = cancel
        self.loop = asyncio.get_running_loop()
        self.begun = False
        self.ended = False
        self.last = 0.0
        self.passes = 0
        self.lock = threading.Lock()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.enabled:
            self.task = asyncio.ensure_future(self._create())

    async def _create(self) -> None:
        reply = await ask_client(self.ls, lsp.WINDOW_WORK_DONE_PROGRESS_CREATE,
                                 lsp.WorkDoneProgressCreateParams(token=self.token), PROGRESS_TIMEOUT_S)
        if reply.error or reply.result is not None or self.ended:  # refused, silent, malformed, or too late
            return
        wdp = self.ls.work_done_progress
        wdp.begin(self.token, lsp.WorkDoneProgressBegin(
            title=f"dgcomplete: {self.title}", cancellable=True, message="denoising"))
        self.begun = True
        fut = wdp.tokens.get(self.token)
        if fut is not None:  # window/workDoneProgress/cancel from the client's UI
            fut.add_done_callback(lambda f: f.cancelled() and self.cancel.cancel("cancelled"))

    def step(self, step: int, total: int) -> None:
        """From the model thread: report at most every 100 ms."""
        if not self.enabled:
            return
        with self.lock:
            if step == 0:
                self.passes += 1
            now = time.monotonic()
            if now - self.last < 0.1 and step:
                return
            self.last = now
            msg = f"pass {self.passes}, step {step + 1}/{total}"
        self.loop.call_soon_threadsafe(self._report, msg)

    def _report(self, msg: str) -> None:
        if self.begun and not self.ended:
            self.ls.work_done_progress.report(self.token, lsp.WorkDoneProgressReport(message=msg))

    def end(self, message: str) -> None:
        if self.ended:
            return
        self.ended = True
        if self.task is not None and not self.task.done():
            self.task.cancel()
        if self.begun:
            self.ls.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))
            self.ls.work_done_progress.tokens.pop(self.token, None)


def _watch_request(ls: RewriteServer, token: CancelToken) -> None:
    """Cancel ``token`` when the client cancels the request being handled ($/cancelRequest).

    pygls runs ``workspace/executeCommand`` handlers inside its own future: cancelling that one answers the
    client but leaves the handler running, so the token is tied to it (the model stops at its next step).
    """
    proto = ls.protocol
    msg_id = getattr(proto, "msg_id", None)
    fut = getattr(proto, "_request_futures", {}).get(msg_id) if msg_id is not None else None
    if fut is not None and not isinstance(fut, asyncio.Task):
        fut.add_done_callback(lambda f: f.cancelled() and token.cancel("cancelled"))


# ---- computing an edit -----------------------------------------------------------------------------------
def _view(ls: RewriteServer, uri: str) -> View:
    """The document (or notebook cell) in the engine; InvalidParams if the client never opened it."""
    try:
        return ls.view(uri)
    except EngineError as e:
        raise JsonRpcInvalidParams(str(e)) from None


def _offsets(v: View, r: lsp.Range) -> tuple[int, int]:
    return v.offset(r.start.line, r.start.character), v.offset(r.end.line, r.end.character)


def _span(v: View, kind: str, r: lsp.Range) -> tuple[int, int]:
    return edit.target_span(v.session.doc.text, *_offsets(v, r), kind)


def _options(ls: RewriteServer, target: Target) -> EditOptions:
    rs = ls.settings
    return EditOptions(seed=target.seed, fraction=rs.rewrite_fraction if target.fraction is None else target.fraction,
                       rounds=rs.repair_rounds, hole_tokens=rs.hole_tokens)


async def compute(ls: RewriteServer, target: Target, cancel: CancelToken) -> tuple[edit.Outcome, View | None, int]:
    """The target's edit from the engine: (outcome, view, version). Progress begins and always ends here."""
    engine, reason = await ls.engine_or_reason()
    if engine is None:
        return edit.Outcome(reason=reason), None, 0
    v = _view(ls, target.uri)
    version = v.version if target.version is None else target.version
    if v.version != version:
        raise JsonRpcContentModified(f"{v.uri} changed (version {v.version}, the request was for {version})")
    start, end = _offsets(v, target.range)
    progress = _Progress(ls, TITLES[target.kind], cancel)
    progress.start()
    end_msg = "done"
    try:
        res = await engine.edit(target.kind, v.session.uri, start, end, v.at, cancel, progress.step,
                                _options(ls, target))
        end_msg = "done" if res.outcome.ok else "cancelled" if cancel.cancelled else res.outcome.reason or "no edit"
    except asyncio.CancelledError:
        end_msg = "cancelled"
        raise
    except StaleEdit as e:
        end_msg = "cancelled"
        raise JsonRpcContentModified(str(e)) from e
    except EngineError as e:
        end_msg = "failed"
        from .server import RequestFailed  # -32803 (server imports this module)

        raise RequestFailed(str(e)) from e
    except BaseException:
        end_msg = "failed"
        raise
    finally:
        progress.end(end_msg)
    return res.outcome, v, version


def workspace_edit(ls: RewriteServer, v: View, version: int, edits: list[edit.Edit]) -> lsp.WorkspaceEdit:
    """A versioned TextDocumentEdit (plain ``changes`` only for clients that declare no documentChanges)."""
    def pos(offset: int) -> lsp.Position:
        line, col = v.position(offset)
        return lsp.Position(line=line, character=col)

    text_edits = [lsp.TextEdit(range=lsp.Range(start=pos(e.start), end=pos(e.end)), new_text=e.text) for e in edits]
    caps = ls.client_capabilities
    we = caps.workspace.workspace_edit if caps and caps.workspace else None
    if we is not None and we.document_changes is False:
        return lsp.WorkspaceEdit(changes={v.uri: list(text_edits)})
    return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=v.uri, version=version),
        edits=list(text_edits))])


# ---- handlers --------------------------------------------------------------------------------------------
def _wants(only: list[str] | None, kind: str) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


def _resolve_supported(ls: RewriteServer) -> bool:
    caps = ls.client_capabilities
    ca = caps.text_document.code_action if caps and caps.text_document else None
    return bool(ca and ca.resolve_support and "edit" in (ca.resolve_support.properties or []))


async def code_actions(ls: RewriteServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    """Cheap listing (no model work): Rewrite (variants), Repair (errors in range, or a Python line the compiler
    refuses for its indentation), Fill holes (holes)."""
    engine, _ = await ls.engine_or_reason()
    if engine is None or (engine.local is None and engine.remote is None):
        return None
    try:
        v = _view(ls, params.text_document.uri)
    except JsonRpcInvalidParams:
        return None
    s = v.session
    only = [str(k) for k in params.context.only] if params.context.only else None
    # read as the commands will work: on the document's view (engine.Session.read_at: "\n" breaks, indentation in
    # spaces, a page's script alone)
    offsets = _offsets(v, params.range)
    r = s.read_at(*offsets)
    view, lang = r.view, r.lang
    text = view.text
    at = [r.to_view(o) for o in offsets]
    start, end = edit.target_span(text, *at, "rewrite")
    lazy = _resolve_supported(ls)
    actions: list[lsp.CodeAction] = []

    def add(kind: str, title: str, seed: int = 0, diagnostics: list[lsp.Diagnostic] | None = None) -> None:
        data = Target(v.uri, params.range, v.version, kind, seed).data()
        actions.append(lsp.CodeAction(
            title=f"dgcomplete: {title}", kind=KINDS[kind], data=data, diagnostics=diagnostics,
            command=None if lazy else lsp.Command(title=title, command=COMMANDS[kind], arguments=[data])))

    if _wants(only, KINDS["rewrite"]) and end > start and text[start:end].strip():
        n = max(1, min(3, ls.settings.rewrite_variants))
        for k in range(n):
            add("rewrite", TITLES["rewrite"] + (f" (variant {k + 1})" if n > 1 else ""), seed=k)
    lo, hi = edit.target_span(text, *at, "repair")
    if _wants(only, KINDS["repair"]) and not view.gave_up and edit.repairable(text, lo, hi, lang,
                                                         edit.error_nodes(text, lang, view.tree, view.index())):
        add("repair", TITLES["repair"], diagnostics=list(params.context.diagnostics) or None)
    if _wants(only, KINDS["fill"]) and edit.find_holes(text, lo, hi):
        add("fill", TITLES["fill"])
    return actions


async def resolve_action(ls: RewriteServer, action: lsp.CodeAction) -> lsp.CodeAction:
    """Compute the action's edit (confined to its range, for the version it was listed for)."""
    kind = action.data.get("kind") if isinstance(action.data, dict) else None
    if not isinstance(kind, str) or kind not in COMMANDS:  # not ours (a list is no key: it raised TypeError)
        return action
    target = parse_target(action.data)
    outcome, v, version = await compute(ls, target, CancelToken())
    if outcome.ok and v is not None:
        action.edit = workspace_edit(ls, v, version, outcome.edits)
    else:
        log.info("%s: no edit (%s)", TITLES[target.kind], outcome.reason)
        ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Info,
                                                     f"dgcomplete: {TITLES[target.kind]}: {outcome.reason}"))
    return action


async def run_command(ls: RewriteServer, kind: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """Compute the edit and apply it with workspace/applyEdit (versioned)."""
    if len(args) != 1:
        raise JsonRpcInvalidParams(f"{COMMANDS[kind]} takes one argument {{uri, range, version}}")
    target = parse_target(args[0], kind)
    cancel = CancelToken()
    _watch_request(ls, cancel)
    outcome, v, version = await compute(ls, target, cancel)

    def nothing(reason: str) -> dict[str, Any]:
        return {"applied": False, "newText": "", "reason": reason, "stats": outcome.stats}

    if not outcome.ok or v is None:
        return nothing(outcome.reason)
    if cancel.cancelled:
        return nothing(cancel.reason or "cancelled")
    if v.stale:
        raise JsonRpcContentModified(f"{v.uri} changed while the edit was computed (the request was for version "
                                     f"{version})")
    reply = await ask_client(ls, lsp.WORKSPACE_APPLY_EDIT, lsp.ApplyWorkspaceEditParams(
        edit=workspace_edit(ls, v, version, outcome.edits), label=f"dgcomplete: {TITLES[kind]}"), CLIENT_TIMEOUT_S)
    res = reply.result
    if reply.error:
        return nothing(reply.error)
    if not isinstance(res, dict) or not isinstance(res.get("applied"), bool):
        log.warning("workspace/applyEdit: malformed reply %.200r", res)
        return nothing("the client's answer to workspace/applyEdit was malformed")
    if not res["applied"]:
        why = res.get("failureReason")
        return nothing(why if isinstance(why, str) and why else "the client did not apply the edit")
    return {"applied": True, "newText": outcome.new_text, "reason": "", "stats": outcome.stats}


def register(ls: LanguageServer) -> None:
    """Add the code actions and the three commands to a server made by ``server.make_server``."""
    @ls.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.RefactorRewrite, lsp.CodeActionKind.QuickFix], resolve_provider=True))
    async def code_action(ls: RewriteServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        return await code_actions(ls, params)

    @ls.feature(lsp.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: RewriteServer, params: lsp.CodeAction) -> lsp.CodeAction:
        return await resolve_action(ls, params)

    @ls.command(REWRITE_COMMAND)
    async def rewrite_selection(ls: RewriteServer, *args: Any) -> dict[str, Any]:
        return await run_command(ls, "rewrite", args)

    @ls.command(REPAIR_COMMAND)
    async def repair_syntax(ls: RewriteServer, *args: Any) -> dict[str, Any]:
        return await run_command(ls, "repair", args)

    @ls.command(FILL_COMMAND)
    async def fill_holes(ls: RewriteServer, *args: Any) -> dict[str, Any]:
        return await run_command(ls, "fill", args)
