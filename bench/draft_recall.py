"""Retrieval alone on the held-out cases: are the expected line, or the line below the cursor, among the drafts?

No model and no daemon: each case's document and its other open files go into a fresh
:class:`dgcomplete.context.ContextIndex` and ``drafts(limit=3)`` is read as the engine reads it (mode ``invoked``: with
the ``match`` and ``predecessor`` sources, as on Alt+\\). The line below the cursor as a draft is wasted: the soundness
check drops it as a repeat of the next line. Mode ``own_pairs_counted`` counts the cursor's own line pairs as the index
did before they were taken out (``bench/results/predecessor_ab.json``), for the before/after figure.

    python -m bench.draft_recall [--splits dev,dev_langs] [--modes own_pairs_counted,as_you_type,invoked] [--out F]
"""

from __future__ import annotations

import argparse
from typing import Any

from dgcomplete import context

from . import emit, heldout


def recall(split: str, *, invoked: bool = False) -> dict[str, Any]:
    data = heldout.load(split)
    files, cases = data["files"], data["cases"]
    n = with_drafts = among = first = below_among = below_first = 0
    for case in cases:
        doc, off = heldout.case_document(files, case)
        lang = files[case["file"]]["lang"]
        idx = context.ContextIndex()
        for other in case["others"]:
            idx.open(f"file:///{other}", files[other]["lang"], heldout.other_text(files, other))
        idx.open("file:///cursor", lang, doc)
        drafts = idx.drafts("file:///cursor", lang, doc, off, match=invoked, before=invoked)
        line_start = doc.rfind("\n", 0, off) + 1
        typed = doc[line_start:off].lstrip()
        below = next((k for x in doc[off:].split("\n")[1:3] if (k := context._key(x))), "")
        whole = [(typed + d.text).strip() for d in drafts]
        want = (typed + case["expected"]).strip() if case["kind"] == "mid_line" else case["expected"].strip()
        n += 1
        with_drafts += bool(drafts)
        among += want in whole
        first += whole[:1] == [want]
        below_among += bool(below) and below in whole
        below_first += bool(below) and whole[:1] == [below]
    return {"n": n, "with_drafts": with_drafts, "expected_among": among, "expected_first": first,
            "line_below_among": below_among, "line_below_first": below_first}


MODES = {"own_pairs_counted": (True, False), "as_you_type": (False, False), "invoked": (False, True)}


def run(split: str, mode: str) -> dict[str, Any]:
    """One split in one mode: ``own_pairs_counted`` is the index as it counted before the cursor's own line pairs
    were taken out (``context._minus`` then took nothing out)."""
    count_own, invoked = MODES[mode]
    minus = context._minus
    if count_own:
        context._minus = lambda counts, *_a, **_k: counts
    try:
        return recall(split, invoked=invoked)
    finally:
        context._minus = minus


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--splits", default="dev,dev_langs", help="comma-separated, of " + ", ".join(heldout.SPLITS))
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, of " + ", ".join(MODES))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    res = {s: {m: run(s, m) for m in args.modes.split(",")} for s in args.splits.split(",")}
    emit({"benchmark": "draft recall of the retrieval index alone: drafts(limit=3) for each held-out case, its "
                       "document and other open files indexed; the line below the cursor as a draft is dropped later "
                       "as a repeat of the next line",
          "command": "python -m bench.draft_recall --splits " + args.splits + " --modes " + args.modes,
          "modes": {"own_pairs_counted": "as you type, the cursor's own line pairs counted (before 32a1102)",
                    "as_you_type": "as you type (successor, shape, prefix)",
                    "invoked": "Alt+\\: also match and predecessor"},
          "results": res}, args.out)


if __name__ == "__main__":
    main()
