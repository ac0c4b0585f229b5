"""Requests on documents with one very long line: what each costs as the line grows tenfold.

Work that grows faster than the text (a pattern that backtracks, a scan from each position) shows first on one
long line: a minified file, a pasted blob, a separator of ``~``, a generated table. Session 50 found such patterns
(a Markdown fence's, a ``<script`` tag's, Python's block head, JavaScript's import line: ``regexploit`` and by
hand); this looks for the rest through the daemon as an editor drives it. For each shape (a unit repeated to make
the line, in one language) and each length, the real daemon over stdio (the shipped model) gets a document of a few
ordinary lines around the long one and is asked, timed at the client:

* an invoked inline completion at the long line's end, in its middle, and on the ordinary line after it;
* the code actions of a range on the long line (repair is offered where the line's syntax is broken);
* a rewrite of a few characters of it (``dgcomplete.rewriteSelection``, answered even when nothing applies).

(``inline_after`` is on the ordinary line after the long one, or above it where the long line ends the document.)

The deep shapes nest the same way across lines instead (calls, blocks, tags, ``#if``, generics, 300 and 3,000
deep; a tree ``d`` deep made each climb from a node to the root cost ``d`` squared) and are asked the same at their
middle line. A request whose time grows about tenfold with the size is linear; a hundredfold, quadratic. The
result lists each shape's times and growth, and the worst.

    python -m bench.long_lines [--lengths 4000 40000] [--shapes python-colon-hash,md-tilde] [--depths 300 3000]
                               [--deep deep-python-calls] [--out FILE]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.lsp_client import RawDaemon

from . import emit, machine_info

# name: (languageId, extension, unit, text after the line's units); a name ending in "-last": the line ends the
# document, no line break after it (as while it is typed at the end of a file)
SHAPES: dict[str, tuple[str, str, str, str]] = {
    "python-colon-hash": ("python", "py", ":#", "'"),
    "python-args": ("python", "py", "a, ", ")"),
    "python-open-parens": ("python", "py", "(", ""),
    "python-statements": ("python", "py", "x = 1; ", ""),
    "python-string-concat": ("python", "py", "'a' + ", "'b'"),
    "python-spaces": ("python", "py", " ", "x"),
    "python-astral": ("python", "py", "\U0001f600", ""),
    "python-backslashes": ("python", "py", "\\", ""),
    "js-import-from": ("javascript", "js", " from 'x", ""),
    "js-and": ("javascript", "js", "a && ", "b;"),
    "js-brackets": ("javascript", "js", "[", ""),
    "js-template": ("javascript", "js", "`${", ""),
    "js-comment-open": ("javascript", "js", "/*", ""),
    "ts-arrows": ("typescript", "ts", "x => ", "x;"),
    "tsx-tags": ("typescriptreact", "tsx", "<div>", ""),
    "go-braces": ("go", "go", "{", ""),
    "rust-lifetimes": ("rust", "rs", "'a ", ""),
    "c-macro-continuation": ("c", "c", "x \\", ""),
    "json-members": ("json", "json", "\"a\": 1, ", ""),
    "ruby-interpolation": ("ruby", "rb", "#{", ""),
    "bash-subshell": ("shellscript", "sh", "$(", ""),
    "md-tilde": ("markdown", "md", "~", ""),
    "md-tilde-last": ("markdown", "md", "~", ""),
    "md-backticks-last": ("markdown", "md", "`", ""),
    "html-script-open": ("html", "html", "<script", ""),
    "html-script-open-last": ("html", "html", "<script", ""),
    "html-quotes": ("html", "html", "<script a=\"", ""),
    "plaintext-words": ("plaintext", "txt", "word ", ""),
}

# name: (languageId, extension, the document nested n deep); the requests go to its middle line
DEEP: dict[str, tuple[str, str, Callable[[int], str]]] = {
    "deep-python-calls": ("python", "py", lambda n: "x = " + "f(\n" * n + ")\n" * n),
    "deep-python-lists-open": ("python", "py", lambda n: "x = " + "[\n" * n),
    "deep-js-functions": ("javascript", "js", lambda n: "function f() {\n" * n + "}\n" * n),
    "deep-js-arrays": ("javascript", "js", lambda n: "let a = " + "[\n" * n + "]\n" * n),
    "deep-ts-generics": ("typescript", "ts", lambda n: "type A = " + "B<\n" * n + ">\n" * n),
    "deep-tsx-elements": ("typescriptreact", "tsx", lambda n: "const a = " + "<div>\n" * n + "</div>\n" * n),
    "deep-json": ("json", "json", lambda n: '{"a":\n' * n + "1\n" + "}\n" * n),
    "deep-c-ifdef": ("c", "c", lambda n: "#if X\n" * n + "#endif\n" * n),
    "deep-c-blocks": ("c", "c", lambda n: "void f() {\n" + "{\n" * n + "}\n" * n + "}\n"),
    "deep-rust-blocks": ("rust", "rs", lambda n: "fn f() {\n" + "{\n" * n + "}\n" * n + "}\n"),
    "deep-go-closures": ("go", "go", lambda n: "package main\nfunc f() {\n" + "func() {\n" * n + "}()\n" * n + "}\n"),
    "deep-ruby-do": ("ruby", "rb", lambda n: "a do\n" * n + "end\n" * n),
    "deep-html-divs": ("html", "html", lambda n: "<div>\n" * n + "<script>\nlet a = 1\n</script>\n" + "</div>\n" * n),
    "deep-md-fences": ("markdown", "md", lambda n: "```python\nx\n" * n),
    "many-short-lines": ("python", "py", lambda n: "x = 1\n" * (20 * n)),
}

_ABOVE = {"python": "import os\n\n\ndef f(a, b):\n    return a + b\n\n\n",
          "markdown": "# Notes\n\n```python\nx = 1\n```\n\n",
          "html": "<p>hi</p>\n<script>\nlet a = 1\n</script>\n"}
_BELOW = {"python": "\n\ndef g(x):\n    y = x\n    \n", "markdown": "\n\nSome text.\n", "html": "\n<p>bye</p>\n"}


def document(lang_id: str, unit: str, tail: str, length: int, last: bool = False) -> tuple[str, int, int]:
    """The text, the long line's number and its length in UTF-16 units."""
    above = _ABOVE.get(lang_id, "// top\nlet a = 1;\n\n" if lang_id in ("javascript", "typescript",
                                                                          "typescriptreact") else "a\n\n")
    below = "" if last else _BELOW.get(lang_id, "\n\nb\n")
    line = unit * max(1, length // len(unit)) + tail
    return above + line + below, above.count("\n"), len(line.encode("utf-16-le")) // 2


def _timed(d: RawDaemon, method: str, params: dict[str, Any], timeout: float) -> tuple[float, bool]:
    t0 = time.perf_counter()
    r = d.request(method, params, timeout)
    return round(time.perf_counter() - t0, 3), r is not None and "result" in r


def deep_document(name: str, n: int) -> tuple[str, int, int]:
    """A :data:`DEEP` shape's text, its middle line's number and that line's length in UTF-16 units."""
    text = DEEP[name][2](n)
    row = text.count("\n") // 2
    line = text.split("\n")[row]
    return text, row, len(line.encode("utf-16-le")) // 2


def measure_shape(d: RawDaemon, name: str, lengths: list[int], timeout: float) -> dict[str, Any]:
    lang_id, ext = (SHAPES[name] if name in SHAPES else DEEP[name])[:2]
    rows: dict[str, Any] = {}
    for n in lengths:
        uri = f"file:///long/{name}-{n}.{ext}"
        if name in DEEP:
            text, row, cols = deep_document(name, n)
        else:
            unit, tail = SHAPES[name][2:]
            text, row, cols = document(lang_id, unit, tail, n, last=name.endswith("-last"))
        d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": lang_id, "version": 1,
                                                           "text": text}})

        def at(line: int, col: int, uri: str = uri) -> dict[str, Any]:
            return {"textDocument": {"uri": uri}, "position": {"line": line, "character": col},
                    "context": {"triggerKind": 1}}

        rng = {"start": {"line": row, "character": cols // 2}, "end": {"line": row, "character": cols // 2 + 6}}
        got: dict[str, Any] = {}
        answered = True
        for key, method, params in (
                ("inline_end", "textDocument/inlineCompletion", at(row, cols)),
                ("inline_middle", "textDocument/inlineCompletion", at(row, cols // 2)),
                ("inline_after", "textDocument/inlineCompletion", at(row + 3, 4) if text.count("\n") > row + 2
                 else at(row - 1, 0)),
                ("code_actions", "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": rng,
                                                             "context": {"diagnostics": []}}),
                ("rewrite", "workspace/executeCommand", {"command": "dgcomplete.rewriteSelection", "arguments": [
                    {"uri": uri, "version": 1, "range": rng}]})):
            s, ok = _timed(d, method, params, timeout)
            got[key] = s
            answered = answered and ok
        got["answered"] = answered
        d.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        rows[str(n)] = got
    if len(lengths) > 1:
        a, b = rows[str(lengths[0])], rows[str(lengths[-1])]
        rows["growth"] = {k: round(b[k] / max(a[k], 0.02), 1) for k in a if k != "answered"}
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[4000, 40000])
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--depths", type=int, nargs="+", default=[300, 3000], help="the nesting of the deep shapes")
    ap.add_argument("--deep", default=",".join(DEEP), help="deep shapes (nested across lines); '' for none")
    ap.add_argument("--model", help="a checkpoint directory (default: the shipped model)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a request may take before it counts as "
                                                                  "unanswered")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    args = ["--threads", "1"] + (["--model", a.model] if a.model else [])
    d = RawDaemon(*args)
    t0 = time.perf_counter()
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "dgcomplete"], capture_output=True, text=True,
                           cwd=Path(__file__).resolve().parent).stdout.strip()
    res: dict[str, Any] = {"bench": "long_lines", "engine": rev + (" (with changes)" if dirty else ""),
                           "lengths": a.lengths, "machine": machine_info(),
                           "depths": a.depths, "model": a.model or "shipped (dg-code-tiny)", "shapes": {},
                           "deep": {}}
    try:
        d.initialize({"minConfidence": 0})
        d.wait_ready(300)
        for name in (x for x in a.shapes.split(",") if x):
            res["shapes"][name] = row = measure_shape(d, name, a.lengths, a.timeout)
            print(name, row.get("growth"), row[str(a.lengths[-1])], flush=True)
        for name in (x for x in a.deep.split(",") if x):
            res["deep"][name] = row = measure_shape(d, name, a.depths, a.timeout)
            print(name, row.get("growth"), row[str(a.depths[-1])], flush=True)
        res["alive"] = d.alive()
    finally:
        d.close()
    slow = [(v[str(sizes[-1])][k], n, k) for group, sizes in (("shapes", a.lengths), ("deep", a.depths))
            for n, v in res[group].items() for k in v[str(sizes[-1])] if k != "answered"]
    res["slowest_at_longest"] = [{"s": s, "shape": n, "request": k} for s, n, k in sorted(slow, reverse=True)[:8]]
    res["unanswered"] = [n for group, sizes in (("shapes", a.lengths), ("deep", a.depths))
                         for n, v in res[group].items() if not all(v[str(x)]["answered"] for x in sizes)]
    res["most_growth"] = sorted(([max(v["growth"].values()), n] for group in ("shapes", "deep")
                                 for n, v in res[group].items() if "growth" in v), reverse=True)[:5]
    res["wall_s"] = round(time.perf_counter() - t0, 1)
    emit(res, a.out)


if __name__ == "__main__":
    main()
