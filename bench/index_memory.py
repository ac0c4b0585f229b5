"""What the retrieval index costs at its bound: memory at MAX_TOTAL_LINES, and the time of one ``drafts`` call;
and what one workspace folder's files cost at the default ``workspaceIndexLines``.

Python files of the training corpus (``data/corpus/python.jsonl``, ``make corpus``) are opened until the index
holds ``context.MAX_TOTAL_LINES`` lines; tracemalloc counts the Python objects the index keeps, and again with the
``predecessor`` pairs (``_Maps.pred``) dropped, so their share is measured, not estimated. A ``drafts`` call is then
timed at random line starts of the first document, as you type and with the Invoked-only sources. For the
folder, files of the same corpus fill a :class:`dgcomplete.context.Folder` up to the settings' default line budget
(built in one go, as the engine's file thread builds it), and a ``drafts`` call is timed with one open document
beside it.

    python -m bench.index_memory [--corpus data/corpus/python.jsonl] [--out bench/results/index_memory.json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
import tracemalloc
from pathlib import Path

from dgcomplete import context
from dgcomplete.settings import Settings

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
          "drafts_ms": timing, "cursors": args.cursors, "folder": folder_cost(texts, cursors, text),
          "machine": machine_info()}, args.out)


def folder_cost(texts: list[str], cursors: list[int], text: str) -> dict[str, object]:
    """One workspace folder at the default line budget: its memory, build time and a drafts call beside it. The
    folder holds the open document's file too (as saved): drafts subtract what it counts, as an editor's would."""
    budget = Settings().workspace_index_lines
    files, lines = [("/ws/open.py", text, 0.0)], text.count("\n") + 1
    for i, t in enumerate(texts[1:]):  # the other files
        if lines >= budget:
            break
        files.append((f"/ws/f{i}.py", t, 0.0))
        lines += t.count("\n") + 1
    tracemalloc.start()
    t0 = time.perf_counter()
    folder = context.Folder(files)
    build_s = time.perf_counter() - t0
    mb = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    t0 = time.perf_counter()
    context.Folder(files)  # timed again without tracemalloc
    build_s = time.perf_counter() - t0
    idx = context.ContextIndex()
    idx.set_roots(["/ws"])
    idx.add_folder("/ws", "python", folder, budget)
    uri = "file:///ws/open.py"
    idx.open(uri, "python", text)
    timing = {}
    # at line starts (the cursors above), and 1-3 characters into a line's first word: the prefix source then
    # scans the heads starting with what is typed
    words = [m.start(1) + 1 + i % 3 for i, m in enumerate(re.finditer(r"(?m)^[ \t]*([A-Za-z_]\w{3,})", text))]
    words = words[: len(cursors)]
    plain = context.ContextIndex()  # the same document, no folder
    plain.open(uri, "python", text)
    for name, ix, offs in (("line_start", idx, cursors), ("mid_word", idx, words),
                           ("mid_word_without_the_folder", plain, words)):
        t0 = time.perf_counter()
        for off in offs:
            ix.drafts(uri, "python", text, off)
        timing[name] = round((time.perf_counter() - t0) / max(1, len(offs)) * 1e3, 3)
    return {"workspace_index_lines": budget, "files": len(files), "lines": folder.total, "mb": round(mb, 1),
            "build_s": round(build_s, 2), "drafts_ms_as_you_type": timing}


if __name__ == "__main__":
    main()
