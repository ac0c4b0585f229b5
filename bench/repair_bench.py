"""Repair syntax on real functions with injected syntax errors.

Functions (4-25 lines) come from the running interpreter's standard library ``test/`` package, which the
training corpus excludes (``STDLIB_EXCLUDE_DIRS`` in ``dgcomplete/train/corpus.py``); with ``--source all``
the rest of the standard library is used too (in the training corpus: optimistic numbers). Each case
breaks one function by deleting one token or swapping two adjacent tokens (fixed seed), keeping only
corruptions that tree-sitter flags, then runs :func:`dgcomplete.edit.repair` over the whole function with
the resident model, as the ``dgcomplete.repairSyntax`` command does.

Reported per corruption kind: the share restored to a parsing state, the share restored to exactly the
original text, the share with fewer errors (what Repair requires to offer an edit), and timings.
Writes ``bench/results/repair.json`` and prints a markdown table.

    python -m bench.repair_bench [--model PATH] [--cases 100] [--seed 0] [--rounds 6] [--steps N]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sysconfig
import textwrap
import time
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dgcomplete import edit, syntax

from . import RESULTS, display_path, machine_info, model_info, resolve_model, summary

SKIP_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER, tokenize.ENCODING, tokenize.STRING}


@dataclass
class Case:
    id: str  # file:line (relative to the standard library)
    kind: str  # "delete" or "swap"
    original: str
    broken: str
    detail: str  # the token(s) touched


# ---- cases -------------------------------------------------------------------------------------------------
def stdlib_files(source: str) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted((root / "test").glob("test_*.py")) if source == "test" else sorted(root.rglob("*.py"))
    return [f for f in files if "site-packages" not in f.parts]


def functions(path: Path, root: Path, min_lines: int = 4, max_lines: int = 25) -> list[tuple[str, str]]:
    """(id, dedented source) of the function definitions of a file that parse on their own."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    tree = syntax.parse(text, "python")
    if tree is None:
        return []
    data = text.encode("utf-8")
    out = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            lines = node.end_point[0] - node.start_point[0] + 1
            if min_lines <= lines <= max_lines:
                line_start = data.rfind(b"\n", 0, node.start_byte) + 1
                src = data[line_start : node.end_byte].decode("utf-8", errors="replace")
                src = textwrap.dedent(src) + "\n"
                if len(src) <= 1500 and syntax.error_count(syntax.parse(src, "python")) == 0:
                    out.append((f"{path.relative_to(root)}:{node.start_point[0] + 1}", src))
        stack.extend(reversed(node.children))
    return out


def tokens(src: str) -> list[tuple[int, int, str]]:
    """(start, end, text) character spans of the code tokens (no strings, comments or layout)."""
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(src).readline):
            if t.type in SKIP_TOKENS or not t.string.strip():
                continue
            a = starts[t.start[0] - 1] + t.start[1]
            b = starts[t.end[0] - 1] + t.end[1]
            out.append((a, b, t.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return out


def corrupt(src: str, kind: str, rng: random.Random, tries: int = 20) -> tuple[str, str] | None:
    """Delete one token or swap two adjacent ones on a line, until tree-sitter reports an error."""
    toks = tokens(src)
    if len(toks) < 4:
        return None
    for _ in range(tries):
        i = rng.randrange(len(toks) - 1)
        a, b, s = toks[i]
        if kind == "delete":
            broken = src[:a] + src[b:]
            detail = s
        else:
            c, d, s2 = toks[i + 1]
            if s == s2 or src[b:c].count("\n"):
                continue
            broken = src[:a] + s2 + src[b:c] + s + src[d:]
            detail = f"{s} <-> {s2}"
        if syntax.error_count(syntax.parse(broken, "python")) > 0:
            return broken, detail
    return None


def make_cases(n: int, seed: int, source: str) -> list[Case]:
    root = Path(sysconfig.get_paths()["stdlib"])
    rng = random.Random(seed)
    files = stdlib_files(source)
    rng.shuffle(files)
    cases: list[Case] = []
    for f in files:
        funcs = functions(f, root)
        if not funcs:
            continue
        fid, src = funcs[rng.randrange(len(funcs))]  # one function per file: a spread sample
        kind = "delete" if len(cases) % 2 == 0 else "swap"
        got = corrupt(src, kind, rng)
        if got is None:
            continue
        cases.append(Case(fid, kind, src, got[0], got[1]))
        if len(cases) >= n:
            break
    return cases


# ---- run ---------------------------------------------------------------------------------------------------
def run(model: Path, cases: list[Case], *, rounds: int, steps: int | None, threads: int) -> dict[str, Any]:
    import torch

    from dgcomplete.local import LocalInfiller
    from dgcomplete.model import load_model

    torch.set_num_threads(threads)
    loaded = load_model(model)
    inf = LocalInfiller(loaded, max_steps=steps)
    rows = []
    for i, c in enumerate(cases):
        filler = edit.ModelFiller(inf, f"case-{i}")
        t0 = time.perf_counter()
        out = edit.repair(c.broken, 0, len(c.broken), "python", filler, rounds=rounds, seed=i)
        ms = (time.perf_counter() - t0) * 1e3
        result = edit.apply_edits(c.broken, out.edits)
        before = syntax.error_count(syntax.parse(c.broken, "python"))
        after = syntax.error_count(syntax.parse(result, "python"))
        rows.append({
            "id": c.id, "kind": c.kind, "detail": c.detail, "offered": out.ok, "parses": after == 0,
            "exact": result == c.original, "errors_before": before, "errors_after": after,
            "fewer_errors": after < before, "rounds": out.stats.get("rounds", 0), "denoise_calls": filler.calls,
            "steps": filler.steps, "ms": round(ms, 1), "reason": out.reason,
            "repaired": result if out.ok else None,
        })
        inf.forget(f"case-{i}")
    return {"model": model_info(loaded), "rows": rows}


def table(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    groups = {"delete": [r for r in rows if r["kind"] == "delete"], "swap": [r for r in rows if r["kind"] == "swap"],
              "all": rows}
    out = []
    md = ["| corruption | cases | parses | exact original | fewer errors | ms p50 | ms p95 |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    for name, rs in groups.items():
        n = len(rs)
        share = lambda k: round(100 * sum(r[k] for r in rs) / n, 1) if n else None  # noqa: E731, B023
        ms = summary([r["ms"] for r in rs], 0)
        g = {"corruption": name, "cases": n, "parses_pct": share("parses"), "exact_pct": share("exact"),
             "fewer_errors_pct": share("fewer_errors"), "ms": ms}
        out.append(g)
        md.append(f"| {name} | {n} | {g['parses_pct']}% | {g['exact_pct']}% | {g['fewer_errors_pct']}% "
                  f"| {ms['p50']} | {ms['p95']} |")
    return out, "\n".join(md)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Repair syntax on functions with injected syntax errors")
    ap.add_argument("--model", help="checkpoint directory (default: the embedded model)")
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=6, help="denoising rounds Repair may spend per case")
    ap.add_argument("--steps", type=int, default=None, help="denoising steps per round (default: the model's)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--source", choices=("test", "all"), default="test",
                    help="stdlib test/ package (held out of training) or the whole standard library")
    ap.add_argument("--out", default=str(RESULTS / "repair.json"))
    args = ap.parse_args(argv)

    model = resolve_model(args.model)
    t0 = time.perf_counter()
    cases = make_cases(args.cases, args.seed, args.source)
    res = run(model, cases, rounds=args.rounds, steps=args.steps, threads=args.threads)
    groups, md = table(res["rows"])
    report = {
        "bench": "repair", "model": res["model"], "machine": machine_info(),
        "settings": {"cases": args.cases, "seed": args.seed, "rounds": args.rounds, "steps": args.steps,
                     "source": "stdlib test/ (held out of training)" if args.source == "test" else "whole stdlib"},
        "summary": groups, "wall_s": round(time.perf_counter() - t0, 1),
        "cases": [{**asdict(c), **r} for c, r in zip(cases, res["rows"], strict=True)],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"Repair syntax — {res['model']['name']}, {len(cases)} cases ({report['settings']['source']}), "
          f"{args.rounds} rounds\n")
    print(md)
    print(f"\nwrote {display_path(out)}")


if __name__ == "__main__":
    main()
