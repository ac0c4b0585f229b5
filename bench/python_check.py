"""How often Python's own parser check refuses the line a file really has: the false alarms of
:func:`dgcomplete.syntax.strict.python_sound`, which drops a suggestion when the enclosing top-level definition
parsed with the cursor's line neutral but not with the suggestion in place.

Over the training corpus's first ``--files`` Python files (``make corpus``), ``--lines`` lines of each (a fixed
sample) are typed from their indentation with 0, 1 and 2 characters written, the rest of the line being the
suggestion checked (with the typed document's tree, as the engine does) and the rest of the file in place. Every
refusal is a right suggestion the engine would hide; lines inside a string (docstrings) are counted apart. Code is
also written top down: each sampled block head (a line ending with ``:``) is checked once more, typed from 2
characters with its body and the rest of its paragraph not written yet (``head_before_body``; the lines
``bench.typing_replay --block`` takes out).

    python -m bench.python_check [--files 400] [--lines 15] [--out FILE]
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from dgcomplete.syntax import get_parser
from dgcomplete.syntax.strict import _literal_at, python_sound

from . import corpus_parser, corpus_texts, emit, tally_by_kind
from .typing_replay import block_of

MAX_CHARS = 100_000


def count(text: str, rng: random.Random, lines: int, hits: Counter[str] | None = None) -> dict[str, list[int]]:
    """{"code"|"string": [lines checked, refused]} for one file's sampled lines (each at 0, 1 and 2 characters)."""
    rows = text.split("\n")
    starts, pos = [], 0
    for row in rows:
        starts.append(pos)
        pos += len(row) + 1
    tree = get_parser("python").parse(text.encode("utf-8"))
    out = {"code": [0, 0], "string": [0, 0], "head_before_body": [0, 0]}
    written = [i for i, r in enumerate(rows) if r.strip()]
    for k in rng.sample(written, min(lines, len(written))):
        row = rows[k]
        body = row.strip()
        indent = row[: len(row) - len(row.lstrip())]
        at0 = starts[k] + len(indent)
        kind = "string" if _literal_at(text, at0 + 1, "python", tree) == "string" else "code"
        for at in sorted({0, min(1, len(body)), min(2, len(body))}):
            doc = text[: starts[k]] + indent + body[:at] + text[starts[k] + len(row):]
            out[kind][0] += 1
            if not python_sound(doc, at0 + at, body[at:], get_parser("python").parse(doc.encode("utf-8"))):
                out[kind][1] += 1
                if hits is not None and kind == "code":
                    hits[body[:60]] += 1
        if kind == "code" and body.endswith(":") and not body.startswith("#"):
            # code written top down: the block's head typed before its body and what follows it in its paragraph
            # (the lines at its indentation or deeper up to a blank line, as bench.typing_replay --block takes out)
            end = k + len(block_of(text, at0, len(rows)))
            gone = starts[end] if end < len(rows) else len(text)
            doc = text[: starts[k]] + indent + body[:2] + "\n" + text[gone:]
            out["head_before_body"][0] += 1
            if not python_sound(doc, at0 + 2, body[2:], get_parser("python").parse(doc.encode("utf-8"))):
                out["head_before_body"][1] += 1
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = corpus_parser(__doc__, 400, "python_check.json")
    ap.add_argument("--lines", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    hits: Counter[str] = Counter()
    total = tally_by_kind(count(text, rng, a.lines, hits) for text in corpus_texts(a.corpus, "python", a.files)
                          if len(text) <= MAX_CHARS)
    res = {"benchmark": "python_check", "files": a.files, "lines_per_file": a.lines, "seed": a.seed,
           "typed_chars": [0, 1, 2], "max_chars": MAX_CHARS,
           **{kind: {"checked": n, "refused": r, "refused_pct": round(100 * r / max(1, n), 2)}
              for kind, (n, r) in total.items()},
           "code_refused_most": hits.most_common(12)}
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
