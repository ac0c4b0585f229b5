"""Decoding choices measured on held-out *corpus* files, never on the evaluation sets.

Sampler settings (steps, acceptance, biases) are tuned here so that ``bench.quality`` stays a clean test:
single-line tasks cut from the corpus's dev split (every 100th file, which training never sees), shaped like
the evaluation tasks (the line is removed, the cursor is at column 0 of the blank line, first-line rule).
Methods: ``ours`` (the product path: Engine.complete with the given step budget), ``ar`` (same weights,
token by token), ``copy_prev`` and ``empty``.

    python -m bench.dev_decoding --model PATH --variants default,steps8,... [--n 150] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
import zlib
from pathlib import Path
from typing import Any

from .quality import Runner, Task, copy_prev, first_line

EXT = {"python": "py", "javascript": "js", "java": "java", "typescript": "ts", "go": "go", "rust": "rs", "c": "c"}


def file_half(text: str) -> int:
    """Which half of the dev files a file is in (0 or 1, by content hash): something fitted on one half can
    be compared on the other (bench/results/gate_corpus_dev_ab.json fitted the gate on half 0)."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass")) % 2


# definitions a "function" task is cut from (tree-sitter node types), per language
FUNCTION_NODES = {
    "python": ("function_definition",),
    "javascript": ("function_declaration", "method_definition", "generator_function_declaration"),
    "typescript": ("function_declaration", "method_definition", "generator_function_declaration"),
    "java": ("method_declaration", "constructor_declaration"),
    "go": ("function_declaration", "method_declaration"),
    "rust": ("function_item",),
    "c": ("function_definition",),
}


def functions(text: str, lang: str, lo: int = 6, hi: int = 60) -> list[tuple[int, int]]:
    """(first, last) line of every definition of ``lo``..``hi`` lines in ``text`` (tree-sitter)."""
    from dgcomplete.syntax.document import parse

    tree = parse(text, lang)
    if tree is None:
        return []
    types, out, stack = FUNCTION_NODES.get(lang, ()), [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in types and lo <= node.end_point[0] - node.start_point[0] + 1 <= hi:
            out.append((node.start_point[0], node.end_point[0]))
        stack.extend(node.children)
    return sorted(out)


def dev_tasks(corpus: Path, langs: tuple[str, ...], n: int, seed: int = 0, per_file: int = 4,
              half: int | None = None, kind: str = "whole_line") -> list[Task]:
    """``n`` single-line tasks per language from the corpus's dev split (same split as training); with
    ``half``, only from that half of its files (:func:`file_half`).

    ``whole_line``: the line is removed and the cursor is at column 0 of the blank line left. ``mid_line``: the
    rest of the line from a cut inside it is removed, the cursor at the cut, as the held-out split's mid-line
    cases (:func:`bench.heldout.cut_points`: a token boundary, or inside an identifier 30 % of the time).
    ``function``: a whole line inside one definition of 6-60 lines, the document that definition alone (its
    whole lines): a short file with no other code to retrieve from, the shape of function-level suites."""
    from dgcomplete.train.data import load_corpus, split_dev

    from .heldout import MID_IDENT_SHARE, cut_points

    rng = random.Random(seed)
    out: list[Task] = []
    for lang in langs:
        _, dev = split_dev(load_corpus(corpus, (lang,)))
        if half is not None:
            dev = [d for d in dev if file_half(d[0]) == half]
        tasks: list[Task] = []
        for text, _lang in rng.sample(dev, len(dev)):
            lines = text.split("\n")
            if kind == "function":
                defs = functions(text, lang)
                for first, last in rng.sample(defs, min(per_file, len(defs))):
                    body = [j for j in range(first + 1, last) if 0 < len(lines[j].strip()) <= 80]
                    if not body:
                        continue
                    i = rng.choice(body)
                    prefix = "\n".join(lines[first:i]) + "\n"
                    doc = prefix + "\n" + "\n".join(lines[i + 1 : last + 1]) + "\n"
                    tasks.append(Task(f"dev_{lang}", f"{lang}/{len(tasks)}", lang, EXT[lang], doc, len(prefix),
                                      lines[i], True))
                if len(tasks) >= n:
                    break
                continue
            cands = [i for i, ln in enumerate(lines) if 10 < i < len(lines) - 2 and 0 < len(ln.strip()) <= 80]
            if not cands:
                continue
            for i in rng.sample(cands, min(per_file, len(cands))):  # a few lines per file: the dev split is small
                prefix = "\n".join(lines[:i]) + "\n"
                suffix = "\n".join(lines[i + 1 :])
                if kind == "mid_line":
                    body = lines[i].rstrip()
                    bounds, mids = cut_points(body)
                    pool = mids if mids and (rng.random() < MID_IDENT_SHARE or not bounds) else bounds
                    if not pool:
                        continue
                    cut = rng.choice(pool)
                    doc = prefix + body[:cut] + "\n" + suffix
                    tasks.append(Task(f"dev_{lang}", f"{lang}/{len(tasks)}", lang, EXT[lang], doc,
                                      len(prefix) + cut, body[cut:], True))
                    continue
                doc = prefix + "\n" + suffix
                tasks.append(Task(f"dev_{lang}", f"{lang}/{len(tasks)}", lang, EXT[lang], doc, len(prefix),
                                  lines[i], True))
            if len(tasks) >= n:
                break
        out += tasks[:n]
    return out


# decoding variants: name -> changes to the LocalInfiller (the model's own settings are "default")
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "steps8": {"max_steps": 8},
    "steps2": {"max_steps": 2},
    "steps3": {"max_steps": 3},
    "steps4": {"max_steps": 4},
    "steps16": {"max_steps": 16},
    "frontier_stop": {"frontier_stop": True},
    "no_min_content": {"min_content": False},
    "self_conditioning": {"self_condition": True},
    "no_self_conditioning": {"self_condition": False},
    "uncalibrated_fill": {"fill_logit_bias": 0.0},
    "no_twin_without_drafts": {"twin_without_drafts": False},
    # the model's own samples only (no retrieved drafts): what its decoding alone writes, length included
    "samples_only": {"settings": {"context_sources": ["diffusion"]}},
}


def variant_changes(name: str) -> dict[str, Any]:
    """A variant's changes; ``a+b`` combines variants (e.g. ``samples_only+steps8``)."""
    out: dict[str, Any] = {}
    for part in name.split("+"):
        if part not in VARIANTS:
            raise SystemExit(f"bench.dev_decoding: unknown variant {part!r} (known: {', '.join(VARIANTS)})")
        out.update(VARIANTS[part])
    return out


def _apply(engine: Any, changes: dict[str, Any]) -> None:
    local = engine.local
    for k, v in changes.items():
        if k == "settings":
            _, errors = engine.settings.update(v)
            if errors:
                raise SystemExit("bench.dev_decoding: " + "; ".join(errors))
        elif k == "max_steps":
            local.sampler.max_steps = v
        else:
            setattr(local, k, v)


def length_ratios(tok: Any, tasks: list[Task]) -> dict[str, float | None]:
    """Median of (tokens written / tokens expected) on the first line: over the tasks that wrote something
    (``shown``), and over all tasks with an empty answer as 0 (``all``)."""
    ratios = []
    for t in tasks:
        want = max(1, len(tok.encode(t.truth.strip())))
        ratios.append(len(tok.encode(t.out["ours"].strip())) / want)
    written = [r for r in ratios if r > 0]
    return {"shown": round(statistics.median(written), 3) if written else None,
            "all": round(statistics.median(ratios), 3) if ratios else None}


async def run(model: Path, corpus: Path, variants: list[str], langs: tuple[str, ...], n: int,
              methods: tuple[str, ...], half: int | None = None, kind: str = "whole_line") -> dict[str, Any]:
    tasks = dev_tasks(corpus, langs, n, half=half, kind=kind)
    from dgcomplete.model import load_model

    from . import machine_info, model_info

    res: dict[str, Any] = {"bench": "dev_decoding", "model": model_info(load_model(model)), "machine": machine_info(),
                           "split": "corpus dev files (every 100th, never trained on)", "n_per_lang": n,
                           "langs": list(langs), "metric": "first-line exact match", "half": half, "kind": kind,
                           "variants": {}}
    for name in variants:
        runner = Runner(model, 1)
        assert runner.engine.local is not None
        changes = variant_changes(name)
        _apply(runner.engine, changes)
        await runner.start()
        t0 = time.perf_counter()
        for t in tasks:
            t.out, t.ms = {}, {}
            for m in methods:
                if m == "empty":
                    t.out[m] = ""
                elif m == "copy_prev":
                    t.out[m] = first_line(copy_prev(t.document, t.offset))
                else:
                    text = await getattr(runner, m)(t)
                    t.out[m] = first_line(text)
        await runner.close()
        row: dict[str, Any] = {"changes": changes, "s": round(time.perf_counter() - t0, 1),
                               "n": {lang: sum(t.language == lang for t in tasks) for lang in langs}}
        for lang in langs:
            ts = [t for t in tasks if t.language == lang]
            if not ts:  # the corpus has no dev files of it (tier 2 built without Debian's Java sources)
                row[lang] = None
                continue
            row[lang] = {m: round(sum(t.out[m].strip() == t.truth.strip() for t in ts) / len(ts), 3)
                         for m in methods}
            row[lang]["ours_empty"] = round(sum(not t.out["ours"].strip() for t in ts) / len(ts), 3) \
                if "ours" in methods else None
            if "ours" in methods:
                row[lang]["ours_length"] = length_ratios(runner.tok, ts)
        res["variants"][name] = row
        print(json.dumps({name: row}), flush=True)
        methods = tuple(m for m in methods if m in ("ours",))  # baselines do not depend on decoding
    return res


def main(argv: list[str] | None = None) -> None:
    from . import emit, resolve_model

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model")
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--variants", default="default", help="comma-separated, a+b combines: " + ",".join(VARIANTS))
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--langs", default="python,javascript,java")
    ap.add_argument("--methods", default="ours,ar,copy_prev,empty")
    ap.add_argument("--half", type=int, choices=[0, 1], default=None,
                    help="only tasks from this half of the dev files (the gate may be fitted on the other)")
    ap.add_argument("--kind", choices=["whole_line", "mid_line", "function"], default="whole_line",
                    help="remove the whole line, the rest of it from a cut inside it, or a line of a definition "
                         "given alone")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    res = asyncio.run(run(resolve_model(args.model), Path(args.corpus), args.variants.split(","),
                          tuple(args.langs.split(",")), args.n, tuple(args.methods.split(",")), args.half,
                          args.kind))
    emit(res, args.out)


if __name__ == "__main__":
    main()
