"""How often the engine's syntax checks refuse the line a file really has: the false alarms of
:func:`dgcomplete.syntax.is_valid` (``splice``: the suggestion adds a tree-sitter error to the document as typed)
and of :func:`dgcomplete.syntax.finishes_line` (``line``, asked when the splice check passed: what is typed of the
line with the suggestion, written where the line is blank, adds one; ``return (`` + ``...args)``) and
:func:`dgcomplete.syntax.mends_below` (``mends``, asked when both passed: the lines below, a body broken without
the line, stay broken with it).

Over the training corpus's first ``--files`` files of each checked language (``make corpus``), ``--lines`` written
lines of each (a fixed sample) are typed from their indentation with 1 and 2 characters and half the line written
(to a token's end), the rest of the line being the suggestion checked (with the typed document's tree, as the engine
does) and the rest of the file in place. Every refusal is a right suggestion the engine would hide. Code is also
written top down: each sampled line that opens a block (ends with ``{``, or ``:`` in Python) is checked once more,
typed as far, with what follows it in its paragraph (the lines at its indentation or deeper up to a blank line,
which ``bench.typing_replay --block`` takes out) not written yet (``head_before_body``; a paragraph may end inside a
docstring or comment with a blank line, which leaves the rest of the file unparsed: such refusals are the bench's).
In brace languages a head whose body stands below it without a brace of its own (``for (auto e : node)`` above a
deeper line, or above a ``{`` on a line of its own) is checked with `` {`` suggested at its end (``brace_over_body
splice``): there a refusal is right, as the file has no ``}`` for that brace.
And :func:`dgcomplete.syntax.strict.misplaced_closer` (``closer strict``, brace languages): every line of the files
that starts with ``}``, taken out but for its indentation, nothing typed, the line the suggestion (a refusal hides
the block's real ``}``, ``} else {`` or ``});``); and :func:`dgcomplete.syntax.strict.self_comparison`
(``self_comparison strict``): every written line of the files, nothing typed, the line the suggestion.

    python -m bench.syntax_refusals [--files 300] [--lines 10] [--out FILE]
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from typing import Any

from dgcomplete.syntax import finishes_line, get_parser, is_valid, mends_below
from dgcomplete.syntax.strict import BRACE_LANGS, misplaced_closer, self_comparison

from . import corpus_parser, corpus_texts, emit, summary, tally_by_kind
from .typing_replay import block_of

LANGS = ("python", "javascript", "typescript", "go", "java", "c", "rust")
MAX_CHARS = 100_000
_TOKEN_END = re.compile(r"[\w$]+|[^\w\s$]")
_HEAD = re.compile(r"(?:\}\s*)?(?:if|for|while|else)\b")  # heads whose body may go without braces


def typed_lengths(body: str) -> list[int]:
    """1 and 2 characters and about half the line, at a token's end, as written before the suggestion."""
    half = next((m.end() for m in _TOKEN_END.finditer(body) if m.end() >= len(body) // 2), len(body))
    return sorted({n for n in (1, 2, half) if 0 < n < len(body)})


def count(text: str, lang: str, rng: random.Random, lines: int,
          hits: Counter[str] | None = None, mends_ms: list[float] | None = None) -> dict[str, list[int]]:
    """{"<kind> <check>": [lines checked, refused]} for one file's sampled lines: kind ``line`` or
    ``head_before_body``, check ``splice``, ``line`` (asked where the splice check passed) or ``mends`` (where both
    did); ``self_comparison strict`` for each of its written lines and ``closer strict`` for each that starts with
    ``}``. ``mends_ms`` receives the time of each ``mends`` check (after the other two, as in the engine, which
    shares their parse of the line's window)."""
    rows = text.split("\n")
    starts, pos = [], 0
    for row in rows:
        starts.append(pos)
        pos += len(row) + 1
    out = {f"{kind} {check}": [0, 0] for kind in ("line", "head_before_body") for check in ("splice", "line", "mends")}
    parser = get_parser(lang)
    if lang in BRACE_LANGS:
        out["closer strict"] = [0, 0]
        out["brace_over_body splice"] = [0, 0]
    out["self_comparison strict"] = [0, 0]

    def tally(key: str, fired: bool, example: str) -> bool:
        out[key][0] += 1
        if fired:
            out[key][1] += 1
            if hits is not None:
                hits[f"{key}: {example}"[:90]] += 1
        return fired

    for k, row in enumerate(rows):
        body = row.strip()
        at = starts[k] + len(row) - len(row.lstrip())
        if body:  # the line as it is: all of it written by the "suggestion"
            tally("self_comparison strict", self_comparison(text, at, ""), f"|{body}")
        if lang in BRACE_LANGS and body.startswith("}"):
            doc = text[:at] + text[starts[k] + len(row.rstrip()):]
            tally("closer strict", misplaced_closer(doc, at, body, lang, parser.parse(doc.encode("utf-8"))),
                  f"|{body}")

    if lang in BRACE_LANGS:
        tree = parser.parse(text.encode("utf-8"))
        for k, row in enumerate(rows[:-1]):
            body = row.rstrip()
            nxt = next((r for r in rows[k + 1 : k + 4] if r.strip()), "")
            width = len(row) - len(row.lstrip())
            if (_HEAD.match(body.lstrip()) and body.endswith((")", "else"))
                    and nxt and (nxt.lstrip().startswith("{") or len(nxt) - len(nxt.lstrip()) > width)):
                at = starts[k] + len(body)
                tally("brace_over_body splice", not is_valid(text, at, at, " {", lang, tree), f"{body.strip()}| {{")

    def refused(doc: str, at: int, cand: str, kind: str, line: str) -> None:
        tree = parser.parse(doc.encode("utf-8"))

        def mends() -> bool:
            t0 = time.perf_counter()
            ok = mends_below(doc, at, cand, lang, tree)
            if mends_ms is not None:
                mends_ms.append(1000 * (time.perf_counter() - t0))
            return ok

        for check, ok in (("splice", lambda: is_valid(doc, at, at, cand, lang, tree)),
                          ("line", lambda: finishes_line(doc, at, cand, lang, tree)), ("mends", mends)):
            if tally(f"{kind} {check}", not ok(), f"{doc[at - len(line) + len(cand):at]}|{cand}"):
                return

    written = [i for i, r in enumerate(rows) if r.strip()]
    for k in sorted(rng.sample(written, min(lines, len(written)))):
        row = rows[k].rstrip("\r")
        body = row.strip()
        indent = row[: len(row) - len(row.lstrip())]
        at0 = starts[k] + len(indent)
        end = starts[k] + len(rows[k])
        head = len(body) > 2 and body.endswith(":" if lang == "python" else "{")
        # the head's paragraph, as bench.typing_replay --block takes it out
        stop = k + len(block_of(text, at0, len(rows))) if head else k + 1
        gone = starts[stop] if stop < len(rows) else len(text)
        for n in typed_lengths(body):
            refused(text[:at0] + body[:n] + text[end:], at0 + n, body[n:], "line", body)
            if head:
                refused(text[:at0] + body[:n] + "\n" + text[gone:], at0 + n, body[n:], "head_before_body", body)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = corpus_parser(__doc__, 300, "syntax_refusals.json")
    ap.add_argument("--lines", type=int, default=10)
    a = ap.parse_args(argv)
    by_lang: dict[str, Any] = {}
    for lang in LANGS:
        rng = random.Random(0)
        hits: Counter[str] = Counter()
        ms: list[float] = []
        total = tally_by_kind(count(t, lang, rng, a.lines, hits, ms) for t in corpus_texts(a.corpus, lang, a.files)
                              if len(t) <= MAX_CHARS)
        by_lang[lang] = {kind: {"checked": n, "refused": r, "refused_pct": round(100 * r / max(1, n), 3)}
                         for kind, (n, r) in total.items()} | {"mends_ms": summary(ms, 3),
                                                               "examples": hits.most_common(12)}
    res = {"benchmark": "syntax_refusals", "files_per_language": a.files, "lines_per_file": a.lines,
           "max_chars": MAX_CHARS, "by_language": by_lang}
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
