"""Hypothesis-generated fuzz cases against the real daemon over raw stdio frames (tests/test_fuzz.py, and the
10,000-case run of ``python -m bench.reliability``).

Cases mix malformed / truncated JSON, wrong types, unknown methods, positions past the end, negative or
mid-surrogate positions, CRLF / lone CR / NUL / binary text, huge documents and lines, unknown language ids,
changes to unopened documents, batches and requests after shutdown. Every request (a message with an id) must get
a result or a JSON-RPC error, and the daemon must stay up.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .lsp_client import RawDaemon, expect, id_key

# robustness, not quality: keep each completion cheap, and show every candidate (the gate would hide a test
# model's guesses, leaving the item paths unexercised)
FUZZ_INIT = {"steps": 4, "maxTokens": 16, "minConfidence": 0}
URIS = ("file:///fz/a.py", "file:///fz/b.js", "file:///fz/c.txt", "file:///fz/d.rs", "file:///fz/e.unknownext",
        "untitled:Untitled-1", "file:///fz/%E6%BC%A2%20x.go", "file:///fz/never-opened.py", "file:///fz/f.rb",
        "file:///fz/g.php", "file:///fz/h.kt")
LANGS = ("python", "javascript", "typescript", "typescriptreact", "go", "rust", "java", "c", "cpp", "lua",
         "shellscript", "bash", "json", "ruby", "php", "kotlin", "plaintext", "", "klingon", "PYTHON", "python\x00")
CHUNKS = ("def f(x):\n", "    return ", "x", "(", ")", "{", "}", "[", "]", ":", ".", ",", " ", "  ", "\t", "\n",
          "\r\n", "\r", "\x00", "\x1b", "\x7f", "\x0c", "é", "漢字", "😀", "\U0010ffff", "\ufeff", "\u2028",
          "\ud800", "\udc00", "\ud83d", '"', "'", "\\", "#", "//", "/*", "*/", "if x:", "import os\n",
          "function g() {", "fn main() {", "func main() {", "let y = ", "0" * 40, "é" * 30 + "\n", "<?php\n",
          "$x = ", "do |x|\n", "end\n", "#{", "<<~EOS\n")
# repeated entries weigh more
REQUEST_METHODS = ("textDocument/inlineCompletion",) * 5 + ("textDocument/completion",) * 2 + (
    "textDocument/codeAction", "codeAction/resolve", "workspace/executeCommand", "workspace/executeCommand",
    "textDocument/hover", "dgcomplete/nope", "$/unknownRequest", "workspace/symbol")
NOTIFY_METHODS = ("textDocument/didOpen",) * 4 + ("textDocument/didChange",) * 4 + (
    "textDocument/didClose", "textDocument/didSave", "workspace/didChangeConfiguration", "$/cancelRequest",
    "$/cancelRequest", "$/setTrace", "dgcomplete/nope", "initialized", "workspace/didChangeWorkspaceFolders",
    "workspace/didChangeWatchedFiles")
# workspace folders that do not exist or are no local folder (a fuzz run must not read a real tree)
FOLDER_URIS = ("file:///fz", "file:///fz/sub", "file:///fz/a.py", "untitled:x", "file://host/share", "", "file:///")
COMMANDS = ("dgcomplete.stats", "dgcomplete.accept", "dgcomplete.rewriteSelection", "dgcomplete.repairSyntax",
            "dgcomplete.fillHoles", "dgcomplete.nope", "")
SETTINGS_KEYS = ("maxLines", "maxTokens", "enabledLanguages", "completionItems", "debounceMs", "syntaxRenoise",
                 "fallbackToLocal", "rewriteFraction", "rewriteVariants", "repairRounds", "holeTokens", "nope")


class _Id:
    """Placeholder for a fresh request id (assigned when the frame is sent); PREV: the previous request's id."""

    def __init__(self, prev: bool = False) -> None:
        self.prev = prev

    def __repr__(self) -> str:
        return "PREV_ID" if self.prev else "ID"


NEW_ID, PREV_ID = _Id(), _Id(prev=True)


def case_strategy():
    """A hypothesis strategy of fuzz cases: lists of 1-4 frames ``(message, byte transform)``."""
    from hypothesis import strategies as st

    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64), st.floats(allow_nan=False),
                     st.text(max_size=12), st.sampled_from(["", "file:///fz/a.py", "2.0", "python"]))
    jval = st.recursive(leaf, lambda c: st.one_of(st.lists(c, max_size=3),
                                                  st.dictionaries(st.text(max_size=6), c, max_size=3)),
                        max_leaves=8)
    text = st.lists(st.one_of(st.sampled_from(CHUNKS), st.characters()), max_size=60).map("".join)
    small = st.integers(0, 12)

    def shapes(ok: bool) -> dict[str, Any]:
        """Param strategies per method; ``ok``: well-typed, in-range values (the daemon's normal path)."""
        if ok:
            line = st.one_of(st.integers(0, 3), small, st.sampled_from([10**6, 2**31 - 1]))
            col = st.one_of(st.integers(0, 30), st.sampled_from([10**6, 2**31 - 1]))
        else:
            line = col = st.one_of(small, st.sampled_from([2**31 - 1, 2**32, 2**63]), st.integers(-3, -1))
        pos = st.fixed_dictionaries({"line": line, "character": col})
        rng = st.fixed_dictionaries({"start": pos, "end": pos})
        uri = st.sampled_from(URIS) if ok else st.one_of(st.sampled_from(URIS), st.text(max_size=20))
        version = st.integers(0, 2**31 - 1) if ok else st.one_of(st.integers(-(2**31), 2**31 - 1), st.none())
        doc = st.fixed_dictionaries({"uri": uri})
        target = st.fixed_dictionaries({"uri": uri, "range": rng}, optional={
            "version": st.one_of(version, st.none()), "seed": st.integers(-5, 5), "fraction": st.floats(-1, 2),
            "kind": st.sampled_from(["rewrite", "repair", "fill", "nope"])})
        change = st.one_of(st.fixed_dictionaries({"range": rng, "text": text}, optional={"rangeLength": small}),
                           st.fixed_dictionaries({"text": text}))
        kinds = [1, 2] if ok else [1, 2, 0, 3, -1]
        context = st.fixed_dictionaries({"triggerKind": st.sampled_from(kinds)}, optional={
            "selectedCompletionInfo": st.fixed_dictionaries({"range": rng, "text": text})})
        setting = st.one_of(st.integers(-5, 100), st.booleans(), st.lists(st.sampled_from(LANGS), max_size=3),
                            st.sampled_from(["auto", "always", "never"])) if ok else jval
        return {
            "textDocument/inlineCompletion": st.fixed_dictionaries(
                {"textDocument": doc, "position": pos, "context": context}),
            "textDocument/completion": st.fixed_dictionaries({"textDocument": doc, "position": pos}),
            "textDocument/codeAction": st.fixed_dictionaries({"textDocument": doc, "range": rng, "context":
                st.fixed_dictionaries({"diagnostics": st.just([])}, optional={
                    "only": st.lists(st.sampled_from(["quickfix", "refactor", "refactor.rewrite", "x"]), max_size=2)})}),
            "codeAction/resolve": st.fixed_dictionaries({"title": st.text(max_size=8)}, optional={
                "data": target if ok else st.one_of(target, jval)}),
            "workspace/executeCommand": st.fixed_dictionaries({"command": st.sampled_from(COMMANDS)}, optional={
                "arguments": st.lists(target, max_size=2) if ok else st.lists(jval, max_size=2)}),
            "textDocument/didOpen": st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({
                "uri": uri, "languageId": st.sampled_from(LANGS) if ok else st.text(max_size=8),
                "version": version, "text": text})}),
            "textDocument/didChange": st.fixed_dictionaries({
                "textDocument": st.fixed_dictionaries({"uri": uri, "version": version}),
                "contentChanges": st.lists(change, max_size=3)}),
            "textDocument/didClose": st.fixed_dictionaries({"textDocument": doc}),
            "workspace/didChangeConfiguration": st.fixed_dictionaries({"settings": st.fixed_dictionaries(
                {"dgcomplete": st.dictionaries(st.sampled_from(SETTINGS_KEYS), setting, max_size=3)})} if ok
                else {"settings": jval}),
            "$/cancelRequest": st.fixed_dictionaries({"id": st.just(PREV_ID) if ok else jval}),
            "workspace/didChangeWorkspaceFolders": st.fixed_dictionaries({"event": st.fixed_dictionaries({
                side: st.lists(st.fixed_dictionaries({"uri": st.sampled_from(FOLDER_URIS), "name": st.text(max_size=4)}),
                               max_size=2) for side in ("added", "removed")})}) if ok else jval,
            "workspace/didChangeWatchedFiles": st.fixed_dictionaries({"changes": st.lists(st.fixed_dictionaries({
                "uri": uri, "type": st.sampled_from([1, 2, 3])}), max_size=3)}) if ok else jval,
        }

    good, bad = shapes(True), shapes(False)
    default_params = st.one_of(st.none(), jval)

    transforms = st.one_of(
        st.tuples(st.just("truncate"), st.floats(0, 1)),
        st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 255)),
        st.tuples(st.just("raw"), st.binary(max_size=48)),
        st.tuples(st.just("batch"), st.integers(0, 2)),
        st.tuples(st.just("utf8"), st.booleans()),  # real UTF-8 (lone surrogates become invalid bytes)
        st.tuples(st.just("headers"), st.booleans()),  # an extra Content-Type header, before or after
        st.tuples(st.just("deep"), st.integers(1, 200_000)),
        st.tuples(st.just("json"), jval),  # any JSON value as the whole body
    )
    @st.composite
    def message(draw):
        if draw(st.booleans()):
            method = draw(st.sampled_from(REQUEST_METHODS))
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": NEW_ID, "method": method}
        else:
            method = draw(st.sampled_from(NOTIFY_METHODS))
            msg = {"jsonrpc": "2.0", "method": method}
        # 3 in 4 messages are well-formed (the daemon's normal paths, with edge-case values); the others get
        # ill-typed params, structural mutations (dropped keys, values of any JSON type) and byte-level damage
        ok = draw(st.sampled_from([True, True, True, False]))
        p = draw((good if ok else bad).get(method, default_params))
        if p is not None:
            msg["params"] = p
        if ok:
            return msg, None
        for _ in range(draw(st.integers(0, 2))):
            where = draw(st.sampled_from(["top", "params", "deep"]))
            obj: Any = msg if where == "top" or not isinstance(msg.get("params"), dict) else msg["params"]
            if where == "deep" and isinstance(obj, dict):
                inner = [v for v in obj.values() if isinstance(v, dict)]
                obj = draw(st.sampled_from(inner)) if inner else obj
            if not isinstance(obj, dict) or not obj:
                continue
            key = draw(st.sampled_from(sorted(obj, key=str)))
            op = draw(st.sampled_from(["drop", "replace", "replace"]))
            if op == "drop":
                del obj[key]
            else:
                obj[key] = draw(jval)
        odd = draw(st.sampled_from(["2.0"] * 5 + ["1.0", "", None, 2, "drop"]))
        if odd == "drop":
            msg.pop("jsonrpc", None)
        elif odd != "2.0":
            msg["jsonrpc"] = odd
        if msg.get("method") in ("exit", "shutdown", "initialize"):  # legitimately end or restart the session
            msg["method"] = "dgcomplete/nope"
        return msg, draw(st.one_of(st.none(), transforms))

    return st.lists(message(), min_size=1, max_size=4)


class Fuzzer:
    """Runs fuzz cases against a daemon it restarts when it dies (each death counts as a crash)."""

    def __init__(self, model: Path, *, threads: int = 1, timeout: float = 30.0, log_dir: Path | None = None) -> None:
        self.model, self.threads, self.timeout, self.log_dir = model, threads, timeout, log_dir
        self.daemon: RawDaemon | None = None
        self.cases = self.frames = self.requests = self.crashes = self.hangs = self.null_responses = 0
        self.codes: dict[str, int] = {}
        self.problems: list[str] = []
        self.starts = 0
        self._ids = 0
        self._prev: Any = 0
        self.method_of: dict[str, str] = {}
        self.by_method: dict[str, dict[str, int]] = {}
        self.sent: dict[str, int] = {}  # a mutated frame may repeat an id: it may be answered as often as sent
        self.ensure()

    def ensure(self) -> RawDaemon:
        if self.daemon is not None and self.daemon.alive():
            return self.daemon
        if self.daemon is not None:
            self.crashes += 1
            self.daemon.kill()
            self.daemon.close()
        self.starts += 1
        err = self.log_dir / f"fuzz-daemon-{self.starts}.log" if self.log_dir else None
        self.daemon = RawDaemon("--model", str(self.model), "--threads", str(self.threads), stderr_path=err)
        self.daemon.initialize(FUZZ_INIT)
        self.daemon.wait_ready()
        return self.daemon

    def _fill_ids(self, obj: Any) -> Any:
        if isinstance(obj, _Id):
            if obj.prev:
                return self._prev
            self._ids += 1
            self._prev = self._ids if self._ids % 2 else f"fz-{self._ids}"
            return self._prev
        if isinstance(obj, dict):
            return {k: self._fill_ids(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._fill_ids(v) for v in obj]
        return obj

    def encode(self, msg: dict[str, Any], transform: Any) -> tuple[bytes, bytes]:
        """(header, body) of one frame."""
        obj = self._fill_ids(msg)
        kind = transform[0] if transform else None
        if kind == "batch":
            obj = [obj] * transform[1]  # 0: the empty batch
        if kind == "utf8":
            body = json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")
        else:
            body = json.dumps(obj).encode()
        if kind == "truncate":
            body = body[: int(len(body) * transform[1])]
        elif kind == "flip" and body:
            i = min(len(body) - 1, int(len(body) * transform[1]))
            body = body[:i] + bytes([transform[2]]) + body[i + 1 :]
        elif kind == "raw":
            body = transform[1]
        elif kind == "deep":
            body = b"[" * transform[1] + b"]" * transform[1]
        elif kind == "json":
            body = json.dumps(transform[1]).encode()
        if not body:
            body = b" "  # pygls reads a zero Content-Length as "no length yet": not a frame an editor sends
        head = b"Content-Length: %d\r\n" % len(body)
        if kind == "headers":
            ct = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
            head = ct + head if transform[1] else head + ct
        return head + b"\r\n", body

    def run_case(self, case: list[tuple[dict[str, Any], Any]]) -> list[str]:
        """Send one case, check every answer; problems found (empty: fine)."""
        d = self.ensure()
        self.cases += 1
        want: list[Any] = []
        nulls = 0
        null_before = len(d.null_id)
        for msg, transform in case:
            head, body = self.encode(msg, transform)
            ids, n = expect(body)
            for i in ids:
                self.method_of[id_key(i)] = str(msg.get("method"))[:40]
            want += ids
            for i in ids:
                self.sent[id_key(i)] = self.sent.get(id_key(i), 0) + 1
            nulls += n
            d.write(head + body)
            self.frames += 1
        self.requests += len(want)
        problems = []
        for i in want:
            r = d.wait(i, self.timeout)
            if r is None:
                if not d.alive():
                    problems.append(f"daemon died (exit {d.proc.poll()}) before answering {i!r}")
                    break
                self.hangs += 1
                problems.append(f"no answer to id {i!r} within {self.timeout:.0f} s")
                continue
            problems += self._check_response(r)
            m = self.by_method.setdefault(self.method_of.pop(id_key(i), "?"), {})
            code = "result" if "result" in r else str(r.get("error", {}).get("code"))
            m[code] = m.get(code, 0) + 1
            if d.answered.get(id_key(i), 0) > self.sent[id_key(i)]:
                problems.append(f"id {i!r} answered {d.answered[id_key(i)]} times, sent {self.sent[id_key(i)]}")
        if not problems:
            ping = d.ping(self.timeout)
            if ping is None or "result" not in ping:
                problems.append("daemon down" if not d.alive() else f"valid request failed after the case: {ping}")
        got = d.wait_null_id(null_before + nulls, timeout=5.0 if nulls else 0.0)
        new_nulls = got[null_before:]
        self.null_responses += len(new_nulls)
        for r in new_nulls:
            problems += self._check_response(r)
        if len(new_nulls) != nulls and not problems:
            problems.append(f"{len(new_nulls)} id-null responses, {nulls} expected")
        if d.bad_frames:
            problems.append(f"unparsable output from the daemon: {d.bad_frames[:2]}")
            d.bad_frames.clear()
        if problems:
            self.problems.append(f"{problems} in case {case!r}"[:2000])
        return problems

    def _check_response(self, r: dict[str, Any]) -> list[str]:
        if r.get("jsonrpc") != "2.0":
            return [f"response without jsonrpc 2.0: {str(r)[:300]}"]
        if "error" in r:
            e = r["error"]
            if not isinstance(e, dict) or not isinstance(e.get("code"), int) or not isinstance(e.get("message"), str):
                return [f"malformed error response: {str(r)[:300]}"]
            code = e["code"]
            self.codes[str(code)] = self.codes.get(str(code), 0) + 1
            if code == -32603:
                return [f"internal error: {e['message'][:300]}"]
            return []
        if "result" not in r:
            return [f"response with neither result nor error: {str(r)[:300]}"]
        self.codes["result"] = self.codes.get("result", 0) + 1
        return []

    def close(self) -> dict[str, Any]:
        """Final check (a valid completion on a fresh document, process alive) and the counters."""
        d = self.ensure()
        uri = "file:///fz/final.py"
        d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": "def add(a, b):\n    return \n"}})
        r = d.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri}, "position":
                      {"line": 1, "character": 11}, "context": {"triggerKind": 1}}, self.timeout)
        final_ok = bool(r and "result" in r) and d.alive()
        rss = d.rss_kb()
        code = d.close()
        return {"cases": self.cases, "frames": self.frames, "requests": self.requests, "crashes": self.crashes,
                "hangs": self.hangs, "null_id_responses": self.null_responses, "answers": dict(sorted(self.codes.items())),
                "problems": self.problems[:20], "problem_count": len(self.problems), "final_request_ok": final_ok,
                "daemon_starts": self.starts, "by_method": self.by_method, "rss_mb_end": round(rss / 1024, 1), "exit_code": code}


def fuzz(model: Path, cases: int, *, seed: int | None = 0, log_dir: Path | None = None,
         stop_on_failure: bool = False) -> dict[str, Any]:
    """Run ``cases`` hypothesis-generated cases; returns the counters (see :meth:`Fuzzer.close`)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    fz = Fuzzer(model, log_dir=log_dir)
    t0 = time.perf_counter()

    extra = {} if stop_on_failure else {"phases": [Phase.generate]}  # shrink only what fails a test

    @settings(max_examples=cases, deadline=None, database=None, derandomize=seed is not None,
              suppress_health_check=list(HealthCheck), **extra)
    @given(case_strategy())
    def run(case):
        problems = fz.run_case(case)
        if stop_on_failure:
            assert not problems, problems

    if seed is not None:
        run = hseed(seed)(run)
    failure = None
    try:
        run()
    except Exception as e:  # noqa: BLE001 - the failing case (shrunk), hypothesis' Flaky, ...
        failure = f"{type(e).__name__}: {e}"[:4000]
    out = fz.close()
    out.update(seconds=round(time.perf_counter() - t0, 1), failure=failure)
    return out
