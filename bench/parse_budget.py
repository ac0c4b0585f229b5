"""How much of its parse budget each grammar spends on real code, edited code and scanner-troubling text.

The daemon's parsers give up past a budget of tree-sitter progress checks (one per 100 parse operations) that grows
with the text (:data:`~dgcomplete.syntax.languages.BUDGET_BASE`, :data:`~dgcomplete.syntax.languages.BUDGET_PER_KB`):
tree-sitter-typescript's TSX grammar never returns on some short texts (``grammar_fuzz_tsx_hang.json``), and a
request of the daemon must not hang on one. The budget must be far above what any text the daemon should read
costs, and low enough that a text it gives up on costs a fraction of a second. This measures, per language:

* ``files``: the held-out split's whole files (the grammar fuzz's seeds: :func:`bench.grammar_fuzz.seeds`), parsed
  from scratch: checks per KiB, and the share of the budget the costliest file spent;
* ``edited``: windows of those files (3,000 characters) with a few random edits (the grammar fuzz's), parsed afresh
  and again incrementally after the edit, as a document is: a half-typed file costs more than a clean one;
* ``tokens``: short runs of the tokens that trouble scanners (the grammar fuzz's), where a grammar gives up if
  any text makes it: the texts given up on, and the share of the budget spent by the costliest of the rest;
* the seconds one check took on the worst text given up on, and the seconds the TSX parser takes to give up on
  ``grammar_fuzz_tsx_hang.json``'s text alone and after 100 kB and 1 MB of code (what giving up costs).

A text is parsed with a counting callback that stops at ``--cap`` times its budget, so a text that would hang shows
as spending more than the cap.

    python -m bench.parse_budget [--langs tsx,python] [--edits 600] [--tokens 5000] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from . import emit, machine_info
from .grammar_fuzz import _WORDS, LANGS, TOKENS, _mutate, _point, _tokens, seeds


def measure(lang: str, edits: int, tokens: int, cap_times: float, seed: int = 1) -> dict[str, Any]:
    import tree_sitter

    from dgcomplete.syntax.languages import (
        _ASTRAL,
        _MASKED,
        BUDGET_BASE,
        budget_for,
        get_language,
        parse_counted,
    )

    parser = tree_sitter.Parser(get_language(lang))

    def budget(data: bytes) -> int:
        return budget_for(len(data))

    def checks(data: bytes, old: Any = None) -> tuple[int, Any]:
        """The progress checks of parsing ``data`` (``old``: incrementally), stopped at ``cap_times`` its budget."""
        tree, n = parse_counted(parser, data, int(cap_times * budget(data)), old)
        return n, tree

    def enc(text: str) -> bytes:
        data = text.encode("utf-8", "replace")
        return _ASTRAL.sub(b"____", data) if lang in _MASKED else data

    try:
        texts = [t for t in seeds(lang) if t]
    except (FileNotFoundError, OSError) as e:
        return {"skipped": f"no seed files: {e}"}
    rng = random.Random(seed)
    out: dict[str, Any] = {"files": len(texts)}
    per_kb, share, worst = [], 0.0, None
    for t in texts:
        data = enc(t)
        n, _ = checks(data)
        per_kb.append(n / max(1.0, len(data) / 1024))
        if n / budget(data) > share:
            share, worst = n / budget(data), {"bytes": len(data), "checks": n}
    per_kb.sort()
    out["file_bytes"] = sum(len(enc(t)) for t in texts)
    out["file_checks_per_kib"] = {"median": round(per_kb[len(per_kb) // 2], 2), "max": round(per_kb[-1], 2)}
    out["file_worst_share"] = round(share, 4)
    out["file_worst"] = worst
    ed_share, ed_over, ed_worst = 0.0, 0, None
    for _ in range(edits):
        base = rng.choice(texts)
        start = rng.randrange(max(1, len(base) - 3000))
        old_t = base[start:start + 3000]
        old, new = enc(old_t), enc(_mutate(old_t, rng))
        n0, tree = checks(old)
        n1, _ = checks(new)
        n2 = 0
        if tree is not None:  # the edit as a document applies it, then an incremental reparse
            a = 0
            while a < min(len(old), len(new)) and old[a] == new[a]:
                a += 1
            bo, bn = len(old), len(new)
            while bo > a and bn > a and old[bo - 1] == new[bn - 1]:
                bo, bn = bo - 1, bn - 1
            tree.edit(a, bo, bn, _point(old, a), _point(old, bo), _point(new, bn))
            n2, _ = checks(new, tree)
        for n, data in ((n0, old), (n1, new), (n2, new)):
            s = n / budget(data)
            ed_over += s > 1
            if s > ed_share:
                ed_share, ed_worst = s, {"bytes": len(data), "checks": n}
    out["edited_texts"] = edits
    out["edited_worst_share"] = round(ed_share, 4)
    out["edited_worst"] = ed_worst
    out["edited_over_budget"] = ed_over
    pool = list(TOKENS) + sorted({w for t in texts[:20] for w in _WORDS.findall(t)})[:400]
    tok_share, gave_up, check_s = 0.0, [], 0.0
    for _ in range(tokens):
        text = _tokens(rng, pool)
        data = enc(text)
        t0 = time.perf_counter()
        n, _ = checks(data)
        dt = time.perf_counter() - t0
        s = n / budget(data)
        if s > 1:
            gave_up.append(text)
            check_s = max(check_s, dt / n)
        else:
            tok_share = max(tok_share, s)
    out["token_texts"] = tokens
    out["token_worst_share_within"] = round(tok_share, 4)
    out["token_over_budget"] = len(gave_up)
    out["token_over_budget_first"] = gave_up[:2]
    if gave_up:
        out["s_per_check_given_up"] = round(check_s, 6)
        out["s_to_give_up_at_base"] = round(check_s * BUDGET_BASE, 3)
    return out


def give_up_cost(repeats: int = 3) -> dict[str, Any]:
    """Seconds the daemon's TSX parser takes to give up on ``grammar_fuzz_tsx_hang.json``'s text, alone and after
    100 kB and 1 MB of the held-out split's TypeScript (the budget grows with the text), the best of ``repeats``;
    and the same text before that code (the grammar returns: the code after it ends the bad state)."""
    import json
    from pathlib import Path

    from dgcomplete.syntax.languages import ParseGaveUp, get_parser

    hang = json.loads(Path(__file__).with_name("results").joinpath("grammar_fuzz_tsx_hang.json").read_text())
    bad = hang["text"].encode("utf-8")
    code = "\n".join(t for t in seeds("typescript")).encode("utf-8")
    out: dict[str, Any] = {}
    for name, data in (("alone", bad), ("after_100kB", (code * 8)[:100_000] + b"\n" + bad),
                       ("after_1MB", (code * 80)[:1_000_000] + b"\n" + bad),
                       ("before_1MB", bad + b"\n" + (code * 80)[:1_000_000])):
        best, result = float("inf"), ""
        for _ in range(repeats):
            t0 = time.perf_counter()
            try:
                get_parser("tsx").parse(data)
                result = "tree"
            except ParseGaveUp:
                result = "gave up"
            best = min(best, time.perf_counter() - t0)
        out[name] = {"bytes": len(data), "result": result, "s": round(best, 3)}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--edits", type=int, default=600, help="edited file windows per language")
    ap.add_argument("--tokens", type=int, default=5000, help="token texts per language")
    ap.add_argument("--cap", type=float, default=2.0, help="stop a parse at this many times its budget")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    from dgcomplete.syntax.languages import BUDGET_BASE, BUDGET_PER_KB

    t0 = time.perf_counter()
    res: dict[str, Any] = {"bench": "parse_budget", "budget": {"base": BUDGET_BASE, "per_kib": BUDGET_PER_KB},
                           "edits": a.edits, "tokens": a.tokens, "cap": a.cap, "machine": machine_info(),
                           "languages": {}}
    for lang in (x for x in a.langs.split(",") if x):
        res["languages"][lang] = row = measure(lang, a.edits, a.tokens, a.cap)
        print(lang, {k: v for k, v in row.items() if k != "token_over_budget_first"}, flush=True)
    res["tsx_give_up_cost"] = give_up_cost()
    print("tsx_give_up_cost", res["tsx_give_up_cost"], flush=True)
    rows = [r for r in res["languages"].values() if "skipped" not in r]
    res["worst_share_real_and_edited"] = max((max(r["file_worst_share"], r["edited_worst_share"]) for r in rows),
                                             default=None)
    res["wall_s"] = round(time.perf_counter() - t0, 1)
    emit(res, a.out)


if __name__ == "__main__":
    main()
