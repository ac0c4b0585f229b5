"""How often real code puts a line right next to its twin: the base rate behind ``repeats_neighbour``.

The engine never shows a suggestion that makes the cursor's line the twin of the line right above or below it when
that line has two names or more (:func:`dgcomplete.syntax.strict.twin_of_neighbour`).  That is only safe if real
code rarely does so itself; this counts, over the training corpus's files (``make corpus``: the first ``--files``
of each language), the lines that are such twins, and apart the lines of one name or none (``}``, ``#endif``,
``try:``), which the rule leaves alone. Beside it, the lines of two names or more whose only twin in the file stands
2-10 lines away (:func:`count_one_twin_nearby`): the wider rule measured and left in
``bench/results/twin_nearby_ab.json`` would have hidden those.

    python -m bench.neighbour_twins [--files 3000] [--out FILE]
"""

from __future__ import annotations

from typing import Any

from dgcomplete.syntax.strict import _NAMES, twin_of_neighbour

from . import corpus_parser, corpus_texts, emit, tally, tally_by_kind

LANGS = ("python", "javascript", "typescript", "go", "java", "c", "rust")


def count(text: str) -> dict[str, list[int]]:
    """[lines, twins] of a file, for lines of two names or more and for the others (blank lines not counted)."""
    lines = text.split("\n")
    out = {"names_2_or_more": [0, 0], "names_0_or_1": [0, 0]}
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        above = lines[i - 1] if i else ""
        below = lines[i + 1] if i + 1 < len(lines) else ""
        if len(_NAMES.findall(s)) >= 2:
            tally = out["names_2_or_more"]
            tally[1] += twin_of_neighbour(s, above, below)
        else:
            tally = out["names_0_or_1"]
            tally[1] += s in (above.strip(), below.strip())
        tally[0] += 1
    return out


def count_one_twin_nearby(text: str, near: int = 10) -> list[int]:
    """[lines of two names or more, those whose one twin in the file (stripped) stands 2 to ``near`` lines away]."""
    where: dict[str, list[int]] = {}
    for i, line in enumerate(text.split("\n")):
        s = line.strip()
        if s and len(_NAMES.findall(s)) >= 2:
            where.setdefault(s, []).append(i)
    fired = sum(2 for rows in where.values() if len(rows) == 2 and 2 <= rows[1] - rows[0] <= near)
    return [sum(len(rows) for rows in where.values()), fired]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = corpus_parser(__doc__, 3000, "neighbour_twins.json")
    a = ap.parse_args(argv)
    by_lang: dict[str, Any] = {}
    for lang in LANGS:
        texts = list(corpus_texts(a.corpus, lang, a.files))
        total = tally_by_kind(count(text) for text in texts)
        total["names_2_or_more_one_twin_2_to_10_lines_away"] = tally(count_one_twin_nearby(text) for text in texts)
        by_lang[lang] = {k: {"lines": n, "twins": t, "share_pct": round(100 * t / max(1, n), 3)}
                         for k, (n, t) in total.items()}
    res = {"benchmark": "neighbour_twins", "command": "python -m bench.neighbour_twins", "files_per_language": a.files,
           "corpus": "data/corpus (make corpus), each language's first files", "by_language": by_lang}
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
