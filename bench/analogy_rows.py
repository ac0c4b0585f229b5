"""How often a nearby row, with the typed words put in, is the rest of the line: the raw ``analogy`` drafts.

The engine's ``analogy`` source (:func:`dgcomplete.context.analogies`) asks for ANALOGY_SAME equal tokens between
what is typed and the row it copies.  This is where that number comes from: each whole-line case of the held-out
splits is typed a character at a time offline (the document as :mod:`bench.typing_replay` opens it), and at each
keystroke the nearest row that matches with any number of equal tokens gives its rest; the rests are counted by
their equal tokens, right (exactly the rest of the line; the line stops there) or wrong (each distinct wrong line
once a line).  No model and no gate: what the source would hand the scorer.

    python -m bench.analogy_rows [--splits dev dev_langs] [--out FILE]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from dgcomplete.context import analogies, analogy_rows, lines_above, lines_below

from . import display_path, emit
from .heldout import OUT as HELDOUT
from .heldout import case_document, load
from .typing_replay import MAX_LINE_CHARS

TOP_BIN = 6  # equal tokens from here on are counted together


def typed_line(doc: str, cursor: int, line: str) -> tuple[int | None, list[tuple[int, bool]]]:
    """``line`` typed at ``cursor`` of ``doc`` a character at a time: the keystroke at which the nearest row's rest
    was the rest of the line (None if never), and (equal tokens, right) of each distinct rest it offered."""
    ls = doc.rfind("\n", 0, cursor) + 1
    le = doc.find("\n", cursor)
    le = len(doc) if le < 0 else le
    seen: set[str] = set()
    offered: list[tuple[int, bool]] = []
    for k in range(len(line)):
        text = doc[:cursor] + line[:k] + doc[cursor:]
        rows = analogy_rows(lines_above(text, ls), lines_below(text, cursor + k))
        found = analogies(line[:k].lstrip(), rows, text[cursor + k : le + k], limit=1, min_same=0)
        if not found:
            continue
        rest, same = found[0][2], found[0][3]
        if rest == line[k:].rstrip():
            offered.append((same, True))
            return k, offered
        if line[:k] + rest not in seen:
            seen.add(line[:k] + rest)
            offered.append((same, False))
    return None, offered


def run(splits: list[str], data: Path = HELDOUT) -> dict[str, Any]:
    right: Counter[int] = Counter()
    wrong: Counter[int] = Counter()
    lines = completed = 0
    for split in splits:
        d = load(split, data)
        for case in d["cases"]:
            line = case["expected"].rstrip()
            if case["kind"] != "whole_line" or not 0 < len(line) <= MAX_LINE_CHARS:
                continue
            doc, cursor = case_document(d["files"], case)
            at, offered = typed_line(doc, cursor, line)
            lines += 1
            completed += at is not None
            for same, ok in offered:
                (right if ok else wrong)[min(same, TOP_BIN)] += 1
    bins = {f"{k}+" if k == TOP_BIN else str(k): {"right": right[k], "wrong": wrong[k],
                                                  "precision": round(right[k] / max(1, right[k] + wrong[k]), 3)}
            for k in range(TOP_BIN + 1)}
    return {"benchmark": "analogy_rows", "splits": splits, "data": display_path(data), "lines": lines,
            "lines_with_a_right_row": completed, "by_equal_tokens": bins,
            "note": "the nearest matching row at each keystroke (at most two words replaced, blanks exact), no gate"}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", nargs="+", default=["dev", "dev_langs"])
    ap.add_argument("--data", default=str(HELDOUT), help="folder of the built set (bench.heldout)")
    ap.add_argument("--out", help="write the JSON report here")
    a = ap.parse_args(argv)
    res = run(a.splits, Path(a.data))
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
