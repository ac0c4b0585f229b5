"""Document-sync and small protocol faults (issue 18), each against the real daemon over stdio: open/close order
during the model load, a didChange with one invalid change, the size cap before parsing, numbers of
the wrong JSON type, and LSP's exit code."""

from __future__ import annotations

import pytest

from .lsp_client import RawDaemon
from .test_daemon import _inline


def _open(d: RawDaemon, uri: str, text: str, version=1) -> None:
    d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                       "text": text}})


def _lines(d: RawDaemon, uri: str) -> str:
    """The engine's view of a document, read through the error for a position far past its end."""
    r = d.request("textDocument/inlineCompletion", _inline(10_000, 0, uri), 60)
    assert r is not None and r["error"]["code"] == -32602, r
    return r["error"]["message"]


@pytest.fixture(scope="module")
def stdio(tiny_model, tmp_path_factory):
    log = tmp_path_factory.mktemp("logs") / "daemon.log"
    d = RawDaemon("--model", str(tiny_model), "--threads", "1", stderr_path=log)
    d.init_result = d.initialize()
    d.wait_ready()
    d.log = log
    yield d
    assert d.close() == 0


def test_open_then_close_during_the_load_leaves_it_closed_and_exit_without_shutdown_is_1(tiny_model, tmp_path):
    d = RawDaemon("--model", str(tiny_model), "--threads", "1", stderr_path=tmp_path / "daemon.log")
    try:
        d.initialize()  # `initialized` starts the load; these arrive while it runs
        _open(d, "file:///gone.py", "x = 1\n")
        d.notify("textDocument/didClose", {"textDocument": {"uri": "file:///gone.py"}})
        _open(d, "file:///kept.py", "x = 1\n")
        d.notify("textDocument/didChange", {"textDocument": {"uri": "file:///kept.py", "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "y = 2\n"}]})
        d.wait_ready()
        assert "unknown document file:///gone.py" in _lines(d, "file:///gone.py")
        assert "(3 lines)" in _lines(d, "file:///kept.py")  # opened, with the edit typed during the load
        d.notify("exit")
        assert d.proc.wait(30) == 1  # LSP: exit without shutdown is an error exit
    finally:
        d.kill()
        d.close()


def test_one_invalid_change_does_not_drop_the_valid_ones(stdio):
    uri = "file:///changes.py"
    _open(stdio, uri, "a = 1\n")
    good = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "b = 2\n"}
    bad = {"range": {"start": {"line": "one", "character": 0}, "end": {"line": 1, "character": 0}}, "text": "zzz"}
    stdio.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                            "contentChanges": [good, bad, good]})
    assert "(4 lines)" in _lines(stdio, uri)  # both valid changes applied
    assert "change 2 of 3 is invalid and was not applied" in stdio.log.read_text()


@pytest.mark.parametrize("version", [7.9, "7", True])
def test_versions_of_the_wrong_type_are_refused(stdio, version):
    uri = f"file:///version-{type(version).__name__}.py"
    _open(stdio, uri, "a = 1\n", version=version)  # refused: never opened as version 7
    assert "unknown document" in _lines(stdio, uri)
    _open(stdio, uri, "a = 1\n")
    stdio.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
        {"text": "a = 1\nb = 2\nc = 3\n"}]})
    assert "(2 lines)" in _lines(stdio, uri)  # the change with the bad version was not applied
    r = stdio.request("workspace/executeCommand", {"command": "dgcomplete.rewriteSelection", "arguments": [
        {"uri": uri, "version": version, "range": {"start": {"line": 0, "character": 0},
                                                   "end": {"line": 0, "character": 5}}}]}, 60)
    assert r["error"]["code"] == -32602 and "version" in r["error"]["message"], r


def test_a_huge_seed_is_invalid_params(stdio):
    uri = "file:///seed.py"
    _open(stdio, uri, "def f(a):\n    return a\n")
    for seed in (2**70, -1, 1.5):
        r = stdio.request("workspace/executeCommand", {"command": "dgcomplete.rewriteSelection", "arguments": [
            {"uri": uri, "version": 1, "seed": seed, "range": {"start": {"line": 1, "character": 4},
                                                               "end": {"line": 1, "character": 12}}}]}, 60)
        assert r is not None and r["error"]["code"] == -32602 and "seed" in r["error"]["message"], r
    assert stdio.alive()


def test_big_incremental_insert_is_capped_before_it_is_parsed(monkeypatch):
    """A 30 MB paste into a Python document blocked the loop for 27 s: the tree was parsed before the cap."""
    from dgcomplete import engine as eng
    from dgcomplete.syntax import document

    parsed: list[int] = []
    real = document.get_parser

    def spy(lang):
        parser = real(lang)

        class Spy:
            def parse(self, data, *a):
                parsed.append(len(data))
                return parser.parse(data, *a)

        return Spy()

    monkeypatch.setattr(document, "get_parser", spy)
    e = eng.Engine(None)
    e.open("file:///paste.py", "def f():\n    pass\n", 1, "python")
    e.change("file:///paste.py", 2, [((1, 4, 1, 4), "x" * (eng.MAX_DOCUMENT_CHARS + 10))])
    s = e.session("file:///paste.py")
    assert s.doc.tree is None and s.big_lang == "python" and s.version == 2
    assert len(s.doc.text) > eng.MAX_DOCUMENT_CHARS and s.doc.text.startswith("def f():\n    xxx")
    assert all(n <= eng.MAX_DOCUMENT_CHARS for n in parsed), parsed  # never parsed at the big size


def test_status_is_refused_nowhere_but_a_daemon(stdio):
    """On stdio there is no daemon: dgcomplete/status is an unknown method, answered (not silence)."""
    r = stdio.request("dgcomplete/status", None, 30)
    assert r is not None and r["error"]["code"] == -32601, r


def test_a_document_its_grammar_would_hang_on_is_answered_and_the_daemon_goes_on(stdio):
    """tree-sitter-typescript's TSX grammar never returns on some texts (its memory past 2 GB): the daemon's parse
    gives up within its budget, each request on the document is answered with nothing suggested or changed, and the
    document parses again once edited."""
    from .test_syntax import TSX_HANG

    uri = "file:///hang.tsx"
    stdio.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "typescriptreact",
                                                           "version": 1, "text": TSX_HANG}})
    end = len(TSX_HANG.encode("utf-16-le")) // 2
    r = stdio.request("textDocument/inlineCompletion", _inline(0, end, uri), 60)
    assert r is not None and "result" in r and not (r["result"] or {}).get("items"), r
    assert "hang.tsx (version 1): tree-sitter's tsx grammar gave up on this document" in stdio.log.read_text()
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 14}}
    r = stdio.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": rng,
                                                  "context": {"diagnostics": []}}, 60)
    assert r is not None and "result" in r and not any("Repair" in a["title"] for a in r["result"] or []), r
    r = stdio.request("workspace/executeCommand", {"command": "dgcomplete.rewriteSelection", "arguments": [
        {"uri": uri, "version": 1, "range": rng}]}, 60)
    assert r is not None and r["result"]["applied"] is False and "gave up" in r["result"]["reason"], r
    stdio.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
        {"text": "function g() {\n  return <div className=\"a\">{x}</div>;\n}\n"}]})
    r = stdio.request("textDocument/inlineCompletion", _inline(1, 2, uri), 60)
    assert r is not None and "result" in r, r
    r = stdio.request("workspace/executeCommand", {"command": "dgcomplete.rewriteSelection", "arguments": [
        {"uri": uri, "version": 2, "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 8}}}]},
        120)
    assert r is not None and "result" in r and "gave up" not in r["result"]["reason"], r
    assert stdio.alive()


def test_an_action_to_resolve_whose_kind_is_no_string_comes_back_as_it_was(stdio):
    """The reliability fuzz sent ``codeAction/resolve`` with ``data.kind`` a list: an internal error (a list is no
    dictionary key) where an action that is not ours comes back unchanged."""
    for kind in ([None], [], {"a": 1}, 3):
        action = {"title": "x", "data": {"uri": "file:///none.py", "kind": kind, "version": None,
                                         "range": {"start": {"line": 0, "character": 0},
                                                   "end": {"line": 0, "character": 0}}}}
        r = stdio.request("codeAction/resolve", action, 60)
        assert r is not None and r.get("result") == action, r
    assert stdio.alive()
