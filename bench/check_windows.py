"""How often the syntax check refuses the line that was really there, and what confirming costs.

A document over 16 KB is checked in a window (a slice around the edit parsed on its own), and a slice can
break where the document does not: the ``}`` closing a block opened above it, a decorator or ``/**`` at its
end. Since the window's errors are confirmed on the whole document (``check._check``), this benchmark puts
the removed line back at its cursor (corpus dev files: tier-3 dev split, whole-line and mid-line tasks as
``bench.dev_decoding`` cuts them) and counts how often the check refuses it with the window alone and with
the confirmation, plus the time of each confirmation (one per candidate the window refused).

    python -m bench.check_windows [--corpus data/corpus_large] [--n 300] [--out FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from . import emit, machine_info

LANGS = ("python", "javascript", "typescript", "java")


def run(corpus: Path, n: int, langs: tuple[str, ...] = LANGS) -> dict[str, Any]:
    from dgcomplete.syntax import check
    from dgcomplete.syntax.document import parse

    from .dev_decoding import dev_tasks

    res: dict[str, Any] = {"bench": "check_windows", "machine": machine_info(), "corpus": corpus.name,
                           "split": "corpus dev files (every 100th per language, never trained on)",
                           "confirm_doc_bytes": check._CONFIRM_DOC, "rows": {}}
    for kind in ("whole_line", "mid_line"):
        for lang in langs:
            tasks = dev_tasks(corpus, (lang,), n, kind=kind)
            windowed = window_refused = refused = 0
            confirm_ms: list[float] = []
            for t in tasks:
                tree = parse(t.document, lang)
                base = check.shared_base(t.document, lang, tree)
                win = check._check_in(base, t.offset, t.offset, t.truth, False)
                if win.splice.window is not base.whole():
                    windowed += 1
                if win.added:
                    window_refused += 1
                    t0 = time.perf_counter()
                    ok = not check._check(base, t.offset, t.offset, t.truth).added
                    confirm_ms.append((time.perf_counter() - t0) * 1e3)
                    refused += not ok
            confirm_ms.sort()
            row = {"tasks": len(tasks), "checked_in_a_window": windowed,
                   "right_line_refused_window_only": window_refused, "right_line_refused_now": refused,
                   "confirm_ms_p50": round(confirm_ms[len(confirm_ms) // 2], 2) if confirm_ms else None,
                   "confirm_ms_max": round(confirm_ms[-1], 2) if confirm_ms else None}
            res["rows"][f"{kind}/{lang}"] = row
            print(kind, lang, row, flush=True)
    return res


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="data/corpus_large")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    emit(run(Path(a.corpus), a.n), a.out)


if __name__ == "__main__":
    main()
