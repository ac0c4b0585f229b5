"""Syntax layer measurements (issue 9): validity of returned completions, and syntax-guided renoising on/off.

    python -m bench.syntax_quality [--model DIR] [--per-lang 60] [--out bench/results/syntax_quality.json]

Tasks: one masked line per problem, from HumanEval-Infilling single-line (Python) and from HumanEval-X
solutions in JavaScript, Go, Rust, Java and C++ (line chosen with a fixed seed; evaluation data only).
For each task the daemon's engine completes the blank line twice, with and without syntax-guided renoising,
and we record: exact match of the stripped line, whether the *raw* model output (cut to the plan, before the
validity filter) adds a new ERROR/MISSING node, whether the *returned* completion does, and the parse time
spent inside the renoise hook.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import random
import time
from pathlib import Path

from dgcomplete import syntax
from dgcomplete.engine import Engine
from dgcomplete.model import load_model
from dgcomplete.models import default_model_path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
X_LANGS = {"js": "javascript", "go": "go", "rust": "rust", "java": "java", "cpp": "cpp"}


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def tasks(per_lang: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    out = []
    he = _read(DATA / "human-eval-infilling" / "HumanEval-SingleLineInfilling.jsonl.gz")
    for t in rng.sample(he, min(per_lang, len(he))):
        mid = t["canonical_solution"].rstrip("\n")
        out.append({"lang": "python", "prefix": t["prompt"], "suffix": "\n" + t["suffix"], "middle": mid})
    for short, lang in X_LANGS.items():
        rows = _read(DATA / "humaneval-x" / f"humaneval_{short}.jsonl.gz")
        for t in rng.sample(rows, min(per_lang, len(rows))):
            code = t["declaration"] + t["canonical_solution"]
            start = len(t["declaration"])
            lines = code[start:].split("\n")
            cands = [i for i, ln in enumerate(lines) if ln.strip() and len(ln.strip()) > 2]
            if not cands:
                continue
            i = rng.choice(cands)
            before = start + sum(len(ln) + 1 for ln in lines[:i])
            line = lines[i]
            out.append({"lang": lang, "prefix": code[:before], "suffix": "\n" + code[before + len(line) :],
                        "middle": line})
    return out


async def run(model: str, per_lang: int, steps: int | None) -> dict:
    loaded = load_model(model)
    results: dict[str, dict] = {}
    hook_ms = {"on": 0.0}
    real = syntax.error_char_spans

    def timed(*a, **k):
        t0 = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            hook_ms["on"] += (time.perf_counter() - t0) * 1e3

    syntax.error_char_spans = timed  # the engine's hook calls it through the module
    try:
        ts = tasks(per_lang)
        for renoise in (True, False):
            engine = Engine(loaded, threads=1, max_steps=steps, syntax_renoise=renoise)
            await engine.start()
            hook_ms["on"] = 0.0
            per: dict[str, dict[str, float]] = {}
            total_steps = 0
            for i, t in enumerate(ts):
                uri = f"file:///task{i}"
                text = t["prefix"] + t["suffix"]
                engine.open(uri, text, 0, t["lang"])
                comp = await engine.complete(uri, len(t["prefix"]), seed=0, single_line=True)
                got = comp.items[0].text if comp.items else ""
                st = per.setdefault(t["lang"], {"n": 0, "em": 0, "returned": 0, "returned_valid": 0, "raw": 0,
                                                "raw_syntax_error": 0})
                st["raw"] += int(comp.stats.get("candidates", 0))
                st["raw_syntax_error"] += int(comp.stats.get("dropped_syntax", 0))
                st["n"] += 1
                st["em"] += int(got.strip() == t["middle"].strip() and bool(got.strip()))
                if comp.items:
                    st["returned"] += 1
                    st["returned_valid"] += int(syntax.new_errors(text, len(t["prefix"]), len(t["prefix"]), got,
                                                                  t["lang"]) == 0)
                total_steps += int(comp.stats.get("steps", 0))
                engine.close(uri)
            await engine.shutdown()
            results["renoise_on" if renoise else "renoise_off"] = {
                "per_lang": per, "hook_parse_ms_total": round(hook_ms["on"], 1),
                "hook_parse_ms_per_step": round(hook_ms["on"] / max(1, total_steps), 3),
                "steps": total_steps,
            }
    finally:
        syntax.error_char_spans = real
    for r in results.values():
        n = sum(p["n"] for p in r["per_lang"].values())
        ret = sum(p["returned"] for p in r["per_lang"].values())
        r["exact_match"] = round(sum(p["em"] for p in r["per_lang"].values()) / max(1, n), 4)
        r["returned_share"] = round(ret / max(1, n), 4)
        raw = sum(p["raw"] for p in r["per_lang"].values())
        r["raw_no_new_error_share"] = round(1 - sum(p["raw_syntax_error"] for p in r["per_lang"].values()) / max(1, raw), 4)
        r["returned_no_new_error_share"] = round(
            sum(p["returned_valid"] for p in r["per_lang"].values()) / max(1, ret), 4)
    return {"model": loaded.name, "tasks": len(tasks(per_lang)), "per_lang_tasks": per_lang, **results}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(default_model_path()))
    ap.add_argument("--per-lang", type=int, default=60)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--out", default="bench/results/syntax_quality.json")
    args = ap.parse_args(argv)
    res = asyncio.run(run(args.model, args.per_lang, args.steps))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    print("| setting | exact match | returned | raw output with no new syntax error | returned with none | hook parse ms/step |")
    print("|---|---|---|---|---|---|")
    for k in ("renoise_on", "renoise_off"):
        r = res[k]
        print(f"| {k} | {r['exact_match']:.3f} | {r['returned_share']:.3f} | {r['raw_no_new_error_share']:.3f} | "
              f"{r['returned_no_new_error_share']:.3f} | {r['hook_parse_ms_per_step']} |")


if __name__ == "__main__":
    main()
