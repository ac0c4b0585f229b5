"""LSP side of in-line rewrites: code actions (resolved lazily) and key-bindable commands.

Thin, like the handlers in :mod:`server`: validate the target ``{uri, range, version}``, run one of
:mod:`edit`'s algorithms with a :class:`~dgcomplete.edit.ModelFiller` on the engine's model thread, check the
document version before and after, and answer a versioned ``WorkspaceEdit`` confined to the range — as the
resolved action's edit, or applied with ``workspace/applyEdit`` by the commands.

    dgcomplete.rewriteSelection / dgcomplete.repairSyntax / dgcomplete.fillHoles
        argument: {uri, range, version} (+ optional seed, fraction)
        result:   {applied, newText, reason, stats}
    a stale version answers ContentModified (-32801) and applies nothing.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified, JsonRpcInvalidParams

from . import edit
from .engine import MAX_DOCUMENT_CHARS, EngineError, Session
from .types import Cancelled, CancelToken

log = logging.getLogger("dgcomplete.rewrite")

REWRITE_COMMAND = "dgcomplete.rewriteSelection"
REPAIR_COMMAND = "dgcomplete.repairSyntax"
FILL_COMMAND = "dgcomplete.fillHoles"
COMMANDS = {"rewrite": REWRITE_COMMAND, "repair": REPAIR_COMMAND, "fill": FILL_COMMAND}
TITLES = {"rewrite": "Rewrite selection", "repair": "Repair syntax", "fill": "Fill holes"}
KINDS = {"rewrite": lsp.CodeActionKind.RefactorRewrite, "repair": lsp.CodeActionKind.QuickFix,
         "fill": lsp.CodeActionKind.RefactorRewrite}


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
    except (KeyError, TypeError, ValueError) as e:
        raise JsonRpcInvalidParams(f"invalid rewrite target: {e}") from e


# ---- progress and cancellation ---------------------------------------------------------------------------
class _Progress:
    """Server-created work done progress (when the client supports it), cancellable from the client UI."""

    def __init__(self, ls: Any, title: str, cancel: CancelToken) -> None:
        caps = ls.client_capabilities
        self.ls = ls
        self.enabled = bool(caps and caps.window and caps.window.work_done_progress)
        self.token = f"dgcomplete-rewrite-{uuid.uuid4()}"
        self.title = title
        self.cancel = cancel
        self.loop = asyncio.get_running_loop()
        self.last = 0.0
        self.passes = 0
        self.lock = threading.Lock()

    async def begin(self) -> None:
        if not self.enabled:
            return
        try:
            await self.ls.work_done_progress.create_async(self.token)
        except Exception:  # the client refused the token: carry on without progress
            self.enabled = False
            return
        fut = self.ls.work_done_progress.tokens.get(self.token)
        if fut is not None:  # window/workDoneProgress/cancel from the client's UI
            fut.add_done_callback(lambda f: f.cancelled() and self.cancel.cancel("cancelled"))
        self.ls.work_done_progress.begin(self.token, lsp.WorkDoneProgressBegin(
            title=f"dgcomplete: {self.title}", cancellable=True, message="denoising"))

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
        self.loop.call_soon_threadsafe(self.ls.work_done_progress.report, self.token,
                                       lsp.WorkDoneProgressReport(message=msg))

    def end(self, message: str) -> None:
        if self.enabled:
            self.ls.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))
            self.ls.work_done_progress.tokens.pop(self.token, None)


def _watch_request(ls: Any, token: CancelToken) -> None:
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
def _session(ls: Any, uri: str) -> Session:
    engine = ls.engine
    try:
        return engine.session(uri)
    except EngineError:
        doc = ls.workspace.get_text_document(uri)
        if doc is None or doc.source is None:
            raise JsonRpcInvalidParams(f"unknown document {uri}") from None
        return engine.open(uri, doc.source, doc.version or 0, doc.language_id)


def _stale(s: Session, version: int) -> JsonRpcContentModified:
    return JsonRpcContentModified(f"{s.uri} changed (version {s.version}, the request was for {version})")


def _offsets(s: Session, target: Target) -> tuple[int, int]:
    r = target.range
    start = s.doc.offset_at(r.start.line, r.start.character)
    end = s.doc.offset_at(r.end.line, r.end.character)
    if start == end and target.kind != "rewrite":  # a cursor: its line
        text = s.doc.text
        start = text.rfind("\n", 0, start) + 1
        nl = text.find("\n", end)
        end = len(text) if nl < 0 else nl
    return start, end


async def compute(ls: Any, target: Target, cancel: CancelToken) -> tuple[edit.Outcome, Session, int, int, int]:
    """Run the target's algorithm on the model thread: (outcome, session, version, start, end)."""
    engine, reason = await ls.engine_or_reason()
    if engine is None:
        return edit.Outcome(reason=reason), None, 0, 0, 0  # type: ignore[return-value]
    s = _session(ls, target.uri)
    version = s.version if target.version is None else target.version
    if s.version != version:
        raise _stale(s, version)
    start, end = _offsets(s, target)
    if engine.local is None:
        return edit.Outcome(reason="rewrites need the local model"), s, version, start, end
    if len(s.doc.text) > MAX_DOCUMENT_CHARS:
        return edit.Outcome(reason="document too large"), s, version, start, end
    text, lang, rs = s.doc.text, s.lang, ls.settings
    progress = _Progress(ls, TITLES[target.kind], cancel)
    await progress.begin()

    def on_step(step: int, total: int) -> None:  # model thread
        if s.version != version or engine.sessions.get(s.uri) is not s:
            cancel.cancel("stale")
        progress.step(step, total)

    filler = edit.ModelFiller(engine.local, s.uri, cancel=cancel, on_step=on_step)

    def run() -> edit.Outcome:
        if target.kind == "rewrite":
            frac = rs.rewrite_fraction if target.fraction is None else target.fraction
            return edit.rewrite(text, start, end, lang, filler, fraction=frac, seed=target.seed)
        if target.kind == "repair":
            return edit.repair(text, start, end, lang, filler, rounds=rs.repair_rounds, seed=target.seed)
        return edit.fill_holes(text, start, end, lang, filler, max_tokens=rs.hole_tokens, seed=target.seed)

    t0 = time.perf_counter()
    end_msg = "done"
    try:
        outcome = await engine.run_in_model_thread(run)
    except asyncio.CancelledError:
        cancel.cancel("cancelled")  # the worker stops at its next denoising step
        end_msg = "cancelled"
        raise
    except Cancelled as e:
        end_msg = "cancelled"
        if cancel.reason == "stale":
            raise _stale(s, version) from e
        return edit.Outcome(reason=str(e) or "cancelled"), s, version, start, end
    finally:
        progress.end(end_msg)
    if s.version != version or engine.sessions.get(s.uri) is not s:
        raise _stale(s, version)
    outcome.stats.update(ms=round((time.perf_counter() - t0) * 1e3, 1), denoise_calls=filler.calls,
                         steps=filler.steps)
    if outcome.ok and not edit.edits_inside(outcome.edits, start, end):  # never: edit.py confines them
        log.error("rewrite produced edits outside the range; dropped")
        return edit.Outcome(reason="internal error: edit outside the range"), s, version, start, end
    return outcome, s, version, start, end


def workspace_edit(ls: Any, s: Session, version: int, edits: list[edit.Edit]) -> lsp.WorkspaceEdit:
    """A versioned TextDocumentEdit (plain ``changes`` only for clients that declare no documentChanges)."""
    def pos(offset: int) -> lsp.Position:
        line, col = s.doc.position_at(offset)
        return lsp.Position(line=line, character=col)

    text_edits = [lsp.TextEdit(range=lsp.Range(start=pos(e.start), end=pos(e.end)), new_text=e.text) for e in edits]
    caps = ls.client_capabilities
    we = caps.workspace.workspace_edit if caps and caps.workspace else None
    if we is not None and we.document_changes is False:
        return lsp.WorkspaceEdit(changes={s.uri: list(text_edits)})
    return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=s.uri, version=version),
        edits=list(text_edits))])


# ---- handlers --------------------------------------------------------------------------------------------
def _wants(only: list[str] | None, kind: str) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


def _resolve_supported(ls: Any) -> bool:
    caps = ls.client_capabilities
    ca = caps.text_document.code_action if caps and caps.text_document else None
    return bool(ca and ca.resolve_support and "edit" in (ca.resolve_support.properties or []))


async def code_actions(ls: Any, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    """Cheap listing (no model work): Rewrite (variants), Repair (errors in range), Fill holes (holes)."""
    engine, _ = await ls.engine_or_reason()
    if engine is None or engine.local is None:
        return None
    try:
        s = _session(ls, params.text_document.uri)
    except JsonRpcInvalidParams:
        return None
    only = [str(k) for k in params.context.only] if params.context.only else None
    rs = ls.settings
    base = Target(s.uri, params.range, s.version, "rewrite")
    start, end = _offsets(s, base)
    text = s.doc.text
    lazy = _resolve_supported(ls)
    actions: list[lsp.CodeAction] = []

    def add(kind: str, title: str, seed: int = 0, diagnostics: list[lsp.Diagnostic] | None = None) -> None:
        t = Target(s.uri, params.range, s.version, kind, seed)
        data = t.data()
        actions.append(lsp.CodeAction(
            title=f"dgcomplete: {title}", kind=KINDS[kind], data=data, diagnostics=diagnostics,
            command=None if lazy else lsp.Command(title=title, command=COMMANDS[kind], arguments=[data])))

    if _wants(only, KINDS["rewrite"]) and end > start and text[start:end].strip():
        n = max(1, min(3, rs.rewrite_variants))
        for v in range(n):
            add("rewrite", TITLES["rewrite"] + (f" (variant {v + 1})" if n > 1 else ""), seed=v)
    lo, hi = _offsets(s, Target(s.uri, params.range, s.version, "repair"))
    if _wants(only, KINDS["repair"]) and edit.errors_in_range(edit.error_nodes(text, s.lang, s.doc.tree, s.doc.index()), lo, hi):
        add("repair", TITLES["repair"], diagnostics=list(params.context.diagnostics) or None)
    if _wants(only, KINDS["fill"]) and edit.find_holes(text, lo, hi):
        add("fill", TITLES["fill"])
    return actions


async def resolve_action(ls: Any, action: lsp.CodeAction) -> lsp.CodeAction:
    """Compute the action's edit (confined to its range, for the version it was listed for)."""
    if not isinstance(action.data, dict) or action.data.get("kind") not in COMMANDS:
        return action
    target = parse_target(action.data)
    cancel = CancelToken()
    outcome, s, version, _, _ = await compute(ls, target, cancel)
    if outcome.ok:
        action.edit = workspace_edit(ls, s, version, outcome.edits)
    else:
        log.info("%s: no edit (%s)", TITLES[target.kind], outcome.reason)
        ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Info,
                                                     f"dgcomplete: {TITLES[target.kind]}: {outcome.reason}"))
    return action


async def run_command(ls: Any, kind: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """Compute the edit and apply it with workspace/applyEdit (versioned)."""
    if len(args) != 1:
        raise JsonRpcInvalidParams(f"{COMMANDS[kind]} takes one argument {{uri, range, version}}")
    target = parse_target(args[0], kind)
    cancel = CancelToken()
    _watch_request(ls, cancel)
    outcome, s, version, _, _ = await compute(ls, target, cancel)
    if not outcome.ok:
        return {"applied": False, "newText": "", "reason": outcome.reason, "stats": outcome.stats}
    if cancel.cancelled:
        return {"applied": False, "newText": "", "reason": cancel.reason or "cancelled", "stats": outcome.stats}
    if s.version != version:
        raise _stale(s, version)
    resp = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(
        edit=workspace_edit(ls, s, version, outcome.edits), label=f"dgcomplete: {TITLES[kind]}"))
    applied = bool(resp and resp.applied)
    reason = "" if applied else ((resp.failure_reason if resp else None) or "the client did not apply the edit")
    return {"applied": applied, "newText": outcome.new_text if applied else "", "reason": reason,
            "stats": outcome.stats}


def register(ls: Any) -> None:
    """Add the code actions and the three commands to a server made by ``server.make_server``."""
    @ls.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.RefactorRewrite, lsp.CodeActionKind.QuickFix], resolve_provider=True))
    async def code_action(ls: Any, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        return await code_actions(ls, params)

    @ls.feature(lsp.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: Any, params: lsp.CodeAction) -> lsp.CodeAction:
        return await resolve_action(ls, params)

    @ls.command(REWRITE_COMMAND)
    async def rewrite_selection(ls: Any, *args: Any) -> dict[str, Any]:
        return await run_command(ls, "rewrite", args)

    @ls.command(REPAIR_COMMAND)
    async def repair_syntax(ls: Any, *args: Any) -> dict[str, Any]:
        return await run_command(ls, "repair", args)

    @ls.command(FILL_COMMAND)
    async def fill_holes(ls: Any, *args: Any) -> dict[str, Any]:
        return await run_command(ls, "fill", args)
