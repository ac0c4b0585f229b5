"""pygls patched: what the protocol layer of pygls 2.1 gets wrong for a daemon that must never die or hang.

Kept apart from the handlers (:mod:`server`) so each repair is one readable piece with its own test
(``tests/test_protocol.py``): strict JSON-RPC integers, an answer for every malformed request, salvaging the
valid changes of a ``didChange``, LSP's exit code, notifications that leak no futures, frames over 64 MiB
skipped without being read (stdio and sockets alike), and a workspace that neither reads unopened files from
disk nor keeps a second copy of the engine's documents.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.language_server import lsp_method
from pygls.workspace import Workspace

log = logging.getLogger("dgcomplete.server")


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
