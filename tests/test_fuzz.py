"""Hostile input against the real daemon over stdio: raw frames, malformed JSON-RPC, odd documents (issue 11).

`tests.lsp_client.RawDaemon` writes raw ``Content-Length`` frames to ``dgcomplete serve`` and reads every frame
it writes back, so these tests can send what no LSP library would: truncated JSON, invalid UTF-8, batches,
wrong types, ids of every kind. The rule checked everywhere: a request (a message with an id) gets exactly one
answer, a result or a JSON-RPC error (id null when the id cannot be known), and the daemon stays up.

``test_fuzz`` runs ~300 hypothesis cases (``DG_FUZZ_CASES`` to change); the ``slow`` one runs 10,000, like
``python -m bench.reliability``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from .fuzz import FUZZ_INIT, fuzz
from .lsp_client import RawDaemon, frame, raw_frame

FUZZ_CASES = int(os.environ.get("DG_FUZZ_CASES", "300"))


def _check_fuzz(out: dict) -> None:
    assert out["failure"] is None, out["failure"]
    assert out["crashes"] == 0 and out["hangs"] == 0, out["problems"]
    assert out["problem_count"] == 0, out["problems"]
    assert out["final_request_ok"] and out["exit_code"] == 0, out
    assert "-32603" not in out["answers"], out["answers"]  # no internal errors


def test_fuzz(tiny_model, tmp_path):
    t0 = time.perf_counter()
    out = fuzz(tiny_model, FUZZ_CASES, seed=0, log_dir=tmp_path, stop_on_failure=True)
    _check_fuzz(out)
    assert out["cases"] >= FUZZ_CASES and out["answers"].get("result", 0) > 0
    print(f"{out['cases']} cases, {out['requests']} requests in {time.perf_counter() - t0:.1f} s: {out['answers']}")


@pytest.mark.slow
def test_fuzz_10k(tiny_model, tmp_path):
    out = fuzz(tiny_model, 10_000, seed=None, log_dir=tmp_path, stop_on_failure=True)
    _check_fuzz(out)
    assert out["cases"] >= 10_000


# ---- one daemon for the explicit cases ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def raw(tiny_model, tmp_path_factory):
    d = RawDaemon("--model", str(tiny_model), "--threads", "1",
                  stderr_path=tmp_path_factory.mktemp("logs") / "daemon.log")
    d.initialize(FUZZ_INIT)
    d.wait_ready()
    yield d
    assert d.alive(), "the daemon died"
    assert d.close() == 0
    assert not d.bad_frames, d.bad_frames


def _error(r: dict | None) -> int:
    assert r is not None, "no answer"
    assert "error" in r, r
    assert isinstance(r["error"]["message"], str)
    return r["error"]["code"]


def _null_errors(d: RawDaemon, send: bytes, n: int = 1) -> list[int]:
    before = len(d.null_id)
    d.write(send)
    got = d.wait_null_id(before + n)[before:]
    assert d.ping() is not None
    time.sleep(0.05)
    assert len(d.null_id) == before + n, d.null_id[before:]
    return [r["error"]["code"] for r in got]


@pytest.mark.parametrize("body", [
    b'{"jsonrpc": "2.0", "id": 1, "method": "textDocument/compl',  # truncated
    b"\xff\xfe\x00garbage",  # not UTF-8
    b"[" * 100_000 + b"]" * 100_000,  # nested past the recursion limit
    b"",  # nothing (sent as one space: pygls reads Content-Length 0 as no header yet)
])
def test_parse_errors_are_answered_with_id_null(raw, body):
    assert _null_errors(raw, raw_frame(body or b" ")) == [-32700]


@pytest.mark.parametrize("msg", [1, None, "x", {}, [], {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "method": 5},
                                 {"jsonrpc": "2.0", "id": {"a": 1}, "method": "workspace/executeCommand"},
                                 {"jsonrpc": "2.0", "id": True, "method": "shutdown"},
                                 {"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}])
def test_invalid_requests_without_a_usable_id(raw, msg):
    assert _null_errors(raw, frame(msg)) == [-32600]


def test_invalid_requests_with_an_id_are_answered_with_that_id(raw):
    cases = [
        ({"jsonrpc": "2.0", "id": "no-method"}, -32600),
        ({"jsonrpc": "2.0", "id": "no-method-params", "params": {}}, -32600),
        ({"jsonrpc": "2.0", "id": "int-method", "method": 7}, -32600),
        ({"jsonrpc": "1.0", "id": "v1", "method": "workspace/executeCommand",
          "params": {"command": "dgcomplete.stats"}}, -32600),
        ({"id": "no-jsonrpc", "method": "workspace/executeCommand", "params": {"command": "dgcomplete.stats"}}, -32600),
        ({"jsonrpc": "2.0", "id": "unknown", "method": "dgcomplete/nope"}, -32601),
        ({"jsonrpc": "2.0", "id": "unknown-params", "method": "dgcomplete/nope", "params": [1, 2]}, -32601),
        ({"jsonrpc": "2.0", "id": "bad-params", "method": "textDocument/inlineCompletion",
          "params": {"textDocument": 5, "position": "x"}}, -32602),
        ({"jsonrpc": "2.0", "id": "no-params", "method": "textDocument/inlineCompletion"}, -32602),
        ({"jsonrpc": "2.0", "id": "negative", "method": "textDocument/inlineCompletion", "params": {
            "textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": 0},
            "context": {"triggerKind": 1}}}, -32602),
        ({"jsonrpc": "2.0", "id": "bad-command", "method": "workspace/executeCommand",
          "params": {"command": "dgcomplete.rewriteSelection", "arguments": [{"uri": 5}]}}, -32602),
        ({"jsonrpc": "2.0", "id": 2**70, "method": "dgcomplete/nope"}, -32601),
        ({"jsonrpc": "2.0", "id": "init-again", "method": "initialize", "params": {"capabilities": {}}}, -32600),
    ]
    for msg, code in cases:
        raw.send(msg)
        assert _error(raw.wait(msg["id"], 30)) == code, msg
    # a batch (LSP has none): each request in it is refused under its own id
    raw.send([{"jsonrpc": "2.0", "id": "b1", "method": "workspace/executeCommand",
               "params": {"command": "dgcomplete.stats"}}, {"jsonrpc": "2.0", "method": "initialized"},
              {"jsonrpc": "2.0", "id": "b2", "method": "shutdown"}])
    assert _error(raw.wait("b1")) == _error(raw.wait("b2")) == -32600
    assert raw.ping() is not None and raw.alive()


def test_notifications_never_answered_and_harmless(raw):
    before = sum(raw.answered.values())
    for msg in [
        {"jsonrpc": "2.0", "method": "dgcomplete/nope"},
        {"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": 5}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "never-sent"}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {  # a document never opened
            "textDocument": {"uri": "file:///never.py", "version": 3},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                                "text": "x"}]}},
        {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": "file:///never.py"}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 5}}},
        {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"dgcomplete": {
            "enabledLanguages": 5, "maxLines": None, "maxTokens": "x", "steps": 1e400, "completionItems": [1],
            "remote": 3, "model": 7}}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},  # again: must not load a second model
    ]:
        raw.send(msg)
    assert raw.ping() is not None
    assert sum(raw.answered.values()) == before + 1  # only the ping
    # the bad settings were refused: completions still work; huge bounds are clamped (the canvas is the model's)
    _open(raw, "file:///fz/settings.py", "def add(a, b):\n    return \n")
    r = raw.request("textDocument/inlineCompletion", _params("file:///fz/settings.py", 1, 11))
    assert r is not None and "result" in r, r
    rss = raw.rss_kb()
    raw.notify("workspace/didChangeConfiguration", {"settings": {"dgcomplete": {"maxTokens": 10**12,
                                                                              "maxLines": 10**12}}})
    r = raw.request("textDocument/inlineCompletion", _params("file:///fz/settings.py", 1, 11))
    assert r is not None and "result" in r, r
    assert raw.rss_kb() < rss + 200 * 1024
    raw.notify("workspace/didChangeConfiguration", {"settings": {"dgcomplete": {"maxTokens": 16, "maxLines": 8}}})
    ready = [n for n in raw.notifications if n["method"] == "window/logMessage" and "ready" in str(n["params"])]
    assert len(ready) == 1, ready


def _open(d: RawDaemon, uri: str, text: str, lang: str = "python", version: int = 1) -> None:
    d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": lang, "version": version,
                                                       "text": text}})


def _params(uri: str, line: int, col: int) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": col},
            "context": {"triggerKind": 1}}


def _complete(d: RawDaemon, uri: str, line: int, col: int, timeout: float = 60) -> dict:
    r = d.request("textDocument/inlineCompletion", _params(uri, line, col), timeout)
    assert r is not None, f"no answer for {uri} {line}:{col}"
    if "error" in r:
        assert r["error"]["code"] == -32602, r  # a clear error, never an internal one
    return r


def test_unopened_documents_are_never_read_from_disk(raw):
    me = Path(__file__).resolve().as_uri()  # exists on disk, never opened
    r = raw.request("textDocument/inlineCompletion", _params(me, 0, 0))
    assert _error(r) == -32602 and "unknown document" in r["error"]["message"], r
    r = raw.request("workspace/executeCommand", {"command": "dgcomplete.rewriteSelection", "arguments": [{
        "uri": me, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}}]})
    assert r is not None and ("result" in r or r["error"]["code"] == -32602), r


def test_positions_past_the_end_negative_and_mid_surrogate(raw):
    uri = "file:///fz/pos.py"
    text = 'label = "😀漢字"; x = \nsecond = 1\n'
    _open(raw, uri, text)
    for line, col in [(0, 0), (0, 10), (0, 9), (0, 10_000), (1, 2**31 - 1), (2, 0)]:
        assert "result" in _complete(raw, uri, line, col), (line, col)  # clamped to the line
    assert "past the end" in _complete(raw, uri, 3, 0)["error"]["message"]
    assert "past the end" in _complete(raw, uri, 2**31 - 1, 0)["error"]["message"]
    # edits with ranges past the end, reversed, or splitting a surrogate pair: applied (clamped), daemon fine
    for rng in [((0, 9), (0, 10)), ((5, 0), (9, 0)), ((1, 3), (0, 2)), ((0, 2**31 - 1), (2**31 - 1, 0))]:
        raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
            "range": {"start": {"line": rng[0][0], "character": rng[0][1]},
                      "end": {"line": rng[1][0], "character": rng[1][1]}}, "text": "Z😀\r\n"}]})
        assert "result" in _complete(raw, uri, 0, 3)


@pytest.mark.parametrize("name,text,lang", [
    ("crlf", "def f(x):\r\n    return x\r\n\r\ndef g(y):\r\n    return \r\n", "python"),
    ("lone-cr", "def f(x):\r    return x\r\rdef g(y):\r    return \r", "python"),
    ("nul", "x = '\x00\x00'\ny = \x00\n", "python"),
    ("binary", bytes(range(256)).decode("latin-1") * 400, "python"),
    ("lone-surrogates", "s = '\ud800'\nt = '\udc00x'\n", "python"),
    ("unknown-language", "fn main() { let x = 1; }\n", "klingon"),
    ("empty-language", "x = 1\n", ""),
    ("long-line", "x = [" + "1, " * 300_000, "python"),
    ("long-line-astral", "s = '" + "😀é" * 150_000, "python"),
])
def test_odd_documents(raw, name, text, lang):
    uri = f"file:///fz/odd-{name}.py"
    _open(raw, uri, text, lang)
    lines = text.split("\n")
    # the last: past the end of the last line (a client's column is clamped to the line), where a 300,000-character
    # line of data was checked as a line being written, 11-23 s a request
    for line, col in [(0, 3), (min(4, len(lines) - 1), 11), (0, 200_000), (len(lines) - 1, 0), (len(lines) - 1, 10**7)]:
        _complete(raw, uri, line, col)
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
        "range": {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 2}}, "text": "\x00\r\n😀"}]})
    _complete(raw, uri, 1, 1)
    raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert raw.alive()


def test_ten_megabyte_document(raw):
    uri = "file:///fz/huge.py"
    block = "def f_{i}(a, b):\n    total = a + b\n    return total * {i}\n\n"
    text = "".join(block.format(i=i) for i in range(10_000_000 // len(block) + 1))
    assert len(text) >= 10_000_000
    t0 = time.perf_counter()
    _open(raw, uri, text)
    n = text.count("\n")
    for line, col in [(n, 0), (n // 2, 4), (2, 11)]:
        r = _complete(raw, uri, line, col, timeout=120)
        assert r.get("result") == {"items": []}, r  # too large to complete, answered at once
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
        "range": {"start": {"line": n // 2, "character": 0}, "end": {"line": n // 2, "character": 0}}, "text": "x = 1\n"}]})
    stats = raw.ping(120)["result"]
    assert "too large" in stats["last"]["reason"], stats["last"]
    raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert raw.ping(120) is not None
    assert time.perf_counter() - t0 < 120


def test_cursor_after_the_last_statement_of_a_big_document(tiny_model, tmp_path):
    """Documents over 16 KB with the cursor past the last top-level node (typing at the end of a file) made the
    syntax check segfault: py-tree-sitter 0.26's ``Node.first_child_for_byte`` returns an invalid node instead of
    None there (dgcomplete/syntax/check.py). Own daemon: a crash here must not take the others down."""
    log = tmp_path / "daemon.log"
    d = RawDaemon("--model", str(tiny_model), "--threads", "1", stderr_path=log, env={"PYTHONFAULTHANDLER": "1"})
    try:
        d.initialize(FUZZ_INIT)
        d.wait_ready()
        body = "".join(f"def f_{i}(a, b):\n    return a + b * {i}\n\n\n" for i in range(1000))
        big = "".join(f"def f_{i}(a, b):\n    return a + b * {i}\n\n" for i in range(80_000)) + "def last(x):\n    return "
        assert 2_500_000 < len(big) < 4_000_000  # completed (under MAX_DOCUMENT_CHARS)
        for name, text in [("end-of-file", body), ("end-of-long-line", "x = [" + "1, " * 300_000 + "\n"),
                           ("three-megabytes", big)]:
            uri = f"file:///fz/{name}.py"
            _open(d, uri, text)
            n = text.count("\n")
            for line, col in [(n, 0), (n, 11), (n - 1, 0), (n - 1, 1000)]:
                r = d.request("textDocument/inlineCompletion", _params(uri, line, col), 120)
                assert r is not None and d.alive(), f"the daemon died on {name} {line}:{col}: " + "".join(
                    ln for ln in log.read_text(errors="replace").splitlines(True) if "File" in ln or "Fatal" in ln)
                assert "result" in r, r
    finally:
        d.kill()
        d.close()


def test_oversized_frame_is_skipped_not_read(raw):
    from dgcomplete.protocol import MAX_MESSAGE_BYTES

    body = b" " * (MAX_MESSAGE_BYTES + 1)
    assert _null_errors(raw, raw_frame(body)) == [-32600]
    assert "too large" in raw.null_id[-1]["error"]["message"]


def test_huge_content_length_does_not_allocate(tiny_model, tmp_path):
    """A header asking for 100 GB used to make pygls allocate it (MemoryError: the daemon died)."""
    log = tmp_path / "daemon.log"
    d = RawDaemon("--model", str(tiny_model), "--threads", "1", stderr_path=log)
    try:
        d.initialize()
        d.write(b"Content-Length: 100000000000\r\n\r\n" + b"{}" * 1000)
        time.sleep(1.0)
        assert d.alive()
        d.proc.stdin.close()  # EOF in the middle of the frame: a clean exit
        d.proc.wait(timeout=60)
    finally:
        d.kill()
        d.close()
    assert "MemoryError" not in log.read_text(errors="replace")


def test_requests_after_shutdown_are_invalid(tiny_model):
    d = RawDaemon("--model", str(tiny_model), "--threads", "1")
    try:
        d.initialize()
        assert "result" in d.request("shutdown")
        r = d.request("textDocument/inlineCompletion", _params("file:///x.py", 0, 0))
        assert _error(r) == -32600 and "shutting down" in r["error"]["message"]
        assert _error(d.request("shutdown")) == -32600
        d.notify("exit")
        assert d.proc.wait(timeout=30) == 0
    finally:
        d.kill()
        d.close()


def test_answers_are_valid_json_rpc(raw):
    """Every frame the daemon wrote in this module parsed, with a Content-Length header."""
    assert not raw.bad_frames
    assert all(r.get("jsonrpc") == "2.0" for r in raw.null_id)
    json.dumps(list(raw.notifications))  # all plain JSON
