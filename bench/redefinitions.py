"""How often real code defines a name its scope already has: the base rate behind ``redefines``.

The engine never shows a suggestion that makes the cursor's line a definition of a name that a sibling line (same
indentation, same block) already defines (:func:`dgcomplete.syntax.strict.redefines`), nor the rest of a word that
names one.  That is only safe if real code rarely does so itself; this runs the rule on every definition line of
the training corpus's files (``make corpus``: the first ``--files`` of each language), as if that line were the
suggestion being shown with the rest of the file in place, and counts those it would have hidden.  Ruby and PHP,
which the corpus does not hold, are counted over the files of the held-out ``dev_ruby_php`` split (``--heldout``).

    python -m bench.redefinitions [--files 1500] [--heldout dev_ruby_php] [--out FILE]
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dgcomplete.syntax import get_parser
from dgcomplete.syntax.strict import defined_name, redefines

from . import corpus_parser, corpus_texts, emit, tally
from .heldout import load

LANGS = ("python", "javascript", "typescript", "go", "rust", "c")
MAX_CHARS = 200_000


def count(text: str, lang: str, hidden: Counter[str] | None = None) -> list[int]:
    """[definition lines, those the rule would hide] of one file; ``hidden`` tallies the hidden lines."""
    lines = text.split("\n")
    n = fired = 0
    pos, tree_of = 0, None
    for line in lines:
        start, pos = pos, pos + len(line) + 1
        s = line.strip()
        if not s or defined_name(s, lang) is None:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        doc = text[:start] + indent + text[start + len(line):]  # the line being typed: only its indentation there
        n += 1
        if redefines(doc, start + len(indent), s, lang):  # the tree (strings left out) only where it matters
            tree_of = get_parser(lang).parse(doc.encode("utf-8"))
            if redefines(doc, start + len(indent), s, lang, tree_of):
                fired += 1
                if hidden is not None:
                    hidden[s[:60]] += 1
    return [n, fired]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = corpus_parser(__doc__, 1500, "redefinitions.json")
    ap.add_argument("--heldout", default="dev_ruby_php",
                    help="a held-out split whose Ruby and PHP files are counted too")
    a = ap.parse_args(argv)
    by_lang: dict[str, Any] = {}
    if a.heldout:
        files = list(load(a.heldout)["files"].values())
        for lang in sorted({f["lang"] for f in files} & {"ruby", "php"}):
            hidden_of: Counter[str] = Counter()
            n, fired = tally(count(f["text"], lang, hidden_of) for f in files if f["lang"] == lang)
            by_lang[lang] = {"definitions": n, "hidden": fired, "hidden_pct": round(100 * fired / max(1, n), 3),
                             "most_hidden": hidden_of.most_common(8), "files": f"the {a.heldout} split's"}
    for lang in LANGS:
        hidden: Counter[str] = Counter()
        total = tally(count(text, lang, hidden) for text in corpus_texts(a.corpus, lang, a.files)
                      if len(text) <= MAX_CHARS)
        by_lang[lang] = {"definitions": total[0], "hidden": total[1],
                         "hidden_pct": round(100 * total[1] / max(1, total[0]), 3),
                         "most_hidden": hidden.most_common(8)}
    res = {"benchmark": "redefinitions", "files_per_language": a.files, "max_chars": MAX_CHARS,
           "heldout": a.heldout, "by_language": by_lang}
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
