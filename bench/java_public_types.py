"""How often a Java file's top-level public type is named otherwise than the file: the base rate behind
``misnamed_public_type`` (:func:`dgcomplete.syntax.strict.misnamed_public_type`), which never shows a suggestion
that makes the line a ``public class`` (interface, enum, record) its file is not named for.

Over the training corpus's first ``--files`` Java files (``make corpus``, each with its path), every top-level
public type header is run through the rule as if it were the suggestion being shown, with the file's name.

    python -m bench.java_public_types [--files 1500] [--out FILE]
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from dgcomplete.syntax.strict import _JAVA_PUBLIC_TYPE, misnamed_public_type

from . import corpus_parser, corpus_rows, emit, tally


def count(text: str, path: str, hits: Counter[str] | None = None) -> list[int]:
    """[top-level public type headers, those the rule would hide] of one file."""
    n = fired = 0
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        if line[:1].isspace() or _JAVA_PUBLIC_TYPE.match(line.strip()) is None:
            continue
        n += 1
        doc = text[:start] + text[start + len(line):]  # the line being typed, from its start
        if misnamed_public_type(doc, start, line.strip(), "java", path):
            fired += 1
            if hits is not None:
                hits[f"{Path(path).name}: {line.strip()[:60]}"] += 1
    return [n, fired]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = corpus_parser(__doc__, 1500, "java_public_types.json")
    a = ap.parse_args(argv)
    hits: Counter[str] = Counter()
    total = tally(count(r["text"], r["path"], hits) for r in corpus_rows(a.corpus, "java", a.files)
                  if r.get("path", "").endswith(".java"))
    res = {"benchmark": "java_public_types", "files": a.files, "headers": total[0], "hidden": total[1],
           "examples": hits.most_common(10),
           "typing_dev_langs": "typing the dev_langs split, `public class InputStreamPumper implements Runnable {` "
                               "was read twice, wrong, at the top of DefaultProcessingEnvironment.java (retrieval)"}
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
