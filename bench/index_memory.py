"""What the retrieval index costs at its bound: memory at MAX_TOTAL_LINES, and the time of one ``drafts`` call.

Python files of the training corpus (``data/corpus/python.jsonl``, ``make corpus``) are opened until the index
holds ``context.MAX_TOTAL_LINES`` lines; tracemalloc counts the Python objects the index keeps, and again with the
``predecessor`` pairs (``_Maps.pred``) dropped, so their share is measured, not estimated. A ``drafts`` call is then
timed at random line starts of the first document, as you type and with the Invoked-only sources.

    python -m bench.index_memory [--corpus data/corpus/python.jsonl] [--out bench/results/index_memory.json]
"""

from __future__ import annotations

import argparse
import json
import random
import time
import tracemalloc
from pathlib import Path

from dgcomplete import context

from . import emit, machine_info


def opened(texts: list[str]) -> context.ContextIndex:
    idx = context.ContextIndex()
    for i, t in enumerate(texts):
        idx.open(f"file:///{i}.py", "python", t)
    return idx


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="data/corpus/python.jsonl")
    ap.add_argument("--cursors", type=int, default=200)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    texts, lines = [], 0
    with Path(args.corpus).open(encoding="utf-8") as f:
        for row in f:
            texts.append(json.loads(row)["text"])
            lines += texts[-1].count("\n")
            if lines > context.MAX_TOTAL_LINES:
                break
    tracemalloc.start()
    t0 = time.perf_counter()
    idx = opened(texts)
    open_s = time.perf_counter() - t0
    full = tracemalloc.get_traced_memory()[0]
    for d in idx.docs.values():
        d.maps.pred.clear()
    without_pred = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    idx = opened(texts)  # timed without tracemalloc, which slows every allocation
    timing = {}
    doc = next(iter(reversed(idx.docs)))
    text = "\n".join(idx.docs[doc].lines)
    starts = [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]
    rnd = random.Random(0)
    cursors = [rnd.choice(starts) for _ in range(args.cursors)]
    for name, kw in (("as_you_type", {}), ("invoked", {"match": True, "before": True})):
        t0 = time.perf_counter()
        for off in cursors:
            idx.drafts(doc, "python", text, off, **kw)
        timing[name] = round((time.perf_counter() - t0) / len(cursors) * 1e3, 3)
    emit({"benchmark": "the retrieval index at its line bound: Python objects it keeps (tracemalloc), and one drafts call",
          "command": "python -m bench.index_memory",
          "documents": len(idx.docs), "lines": idx.total, "open_all_s": round(open_s, 2),
          "index_mb": round(full / 1e6, 1), "predecessor_pairs_mb": round((full - without_pred) / 1e6, 1),
          "drafts_ms": timing, "cursors": args.cursors, "machine": machine_info()}, args.out)


if __name__ == "__main__":
    main()
