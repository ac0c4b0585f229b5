"""How often real code names a parameter twice in a one-line function header: the base rate behind
``duplicate_parameters`` (:func:`dgcomplete.syntax.strict.duplicate_parameters`), which drops such suggestions.

Over the training corpus's first ``--files`` of Python, JavaScript and TypeScript (``make corpus``), every line
the rule reads as a function header is run through it, as if it were the suggestion being shown.

    python -m bench.duplicate_parameters [--files 1500] [--out FILE]
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dgcomplete.syntax.strict import _PARAM_LISTS, duplicate_parameters

from . import corpus_parser, corpus_texts, emit, tally

LANGS = ("python", "javascript", "typescript")
MAX_LINE = 300


def count(text: str, lang: str, hits: Counter[str] | None = None) -> list[int]:
    """[header lines, those naming a parameter twice] of one file."""
    n = fired = 0
    for line in text.split("\n"):
        s = line.strip()
        if not s or len(s) > MAX_LINE or _PARAM_LISTS[lang].fullmatch(s) is None:
            continue
        n += 1
        if duplicate_parameters("\n", 1, s, lang):
            fired += 1
            if hits is not None:
                hits[s[:80]] += 1
    return [n, fired]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = corpus_parser(__doc__, 1500, "duplicate_parameters.json")
    a = ap.parse_args(argv)
    by_lang: dict[str, Any] = {}
    for lang in LANGS:
        hits: Counter[str] = Counter()
        total = tally(count(text, lang, hits) for text in corpus_texts(a.corpus, lang, a.files))
        by_lang[lang] = {"headers": total[0], "naming_a_parameter_twice": total[1], "examples": hits.most_common(8)}
    res = {"benchmark": "duplicate_parameters", "files_per_language": a.files, "by_language": by_lang,
           "typing_dev": "typing the dev split on the engine before the rule, one such suggestion was read, wrong: "
                         "`function skipSeparationSpace(state, allowComments, state) {` (the model's sample)"}
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
