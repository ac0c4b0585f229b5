"""How often real code writes ``return``, ``break`` or ``continue`` where the engine would not complete it: the base
rate behind ``misplaced_statement_word`` (:func:`dgcomplete.syntax.strict.misplaced_statement_word`), which hides
the rest of a word that would make it a statement's first word where no statement can begin (``return re`` +
``turn``).

Over the training corpus's first ``--files`` of each checked language (``make corpus``; PHP from the held-out
``--heldout`` split's files, which the corpus does not hold), every such word outside strings and comments (the
file's tree) is run through the rule as if its first character had been typed and the rest were the word head
being shown, with the rest of the file in place.

    python -m bench.statement_words [--files 1500] [--heldout dev_ruby_php] [--out FILE]
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from dgcomplete.syntax import get_parser
from dgcomplete.syntax.strict import _STATEMENT_WORDS, _literal_at, misplaced_statement_word

from . import corpus_parser, corpus_texts, emit, tally
from .heldout import load

LANGS = ("python", "javascript", "typescript", "go", "java", "c")
MAX_CHARS = 200_000


def count(text: str, lang: str, hits: Counter[str] | None = None) -> list[int]:
    """[statement words written outside strings and comments, those the rule would hide] of one file."""
    words = re.compile(r"(?<![\w$])(?:" + "|".join(sorted(_STATEMENT_WORDS[lang])) + r")(?![\w$])")
    tree = None
    n = fired = 0
    for m in words.finditer(text):
        tree = tree or get_parser(lang).parse(text.encode("utf-8"))
        if _literal_at(text, m.start() + 1, lang, tree) is not None:  # the engine's own test (byte offsets indexed)
            continue
        n += 1
        if misplaced_statement_word(text, m.start() + 1, m.group(0)[1:], lang, tree):
            fired += 1
            if hits is not None:
                ls = text.rfind("\n", 0, m.start()) + 1
                hits[text[ls : m.end()].strip()[-70:]] += 1
    return [n, fired]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = corpus_parser(__doc__, 1500, "statement_words.json")
    ap.add_argument("--heldout", default="dev_ruby_php", help="a held-out split whose PHP files are counted too")
    a = ap.parse_args(argv)
    by_lang: dict[str, Any] = {}
    sources = [(lang, corpus_texts(a.corpus, lang, a.files), f"the corpus's first {a.files}") for lang in LANGS]
    if a.heldout:
        php = (f["text"] for f in load(a.heldout)["files"].values() if f["lang"] == "php")
        sources.append(("php", php, f"the {a.heldout} split's"))
    for lang, texts, which in sources:
        hits: Counter[str] = Counter()
        total = tally(count(text, lang, hits) for text in texts if len(text) <= MAX_CHARS)
        by_lang[lang] = {"files": which, "words": total[0], "hidden": total[1],
                         "hidden_pct": round(100 * total[1] / max(1, total[0]), 3), "examples": hits.most_common(10)}
    res = {"benchmark": "statement_words", "files_per_language": a.files, "max_chars": MAX_CHARS,
           "words": {lang: sorted(w) for lang, w in _STATEMENT_WORDS.items() if lang in by_lang},
           "by_language": by_lang}
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
