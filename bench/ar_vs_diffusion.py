"""Parallelism of the sampler, and diffusion vs autoregressive decoding with the same network.

* **Parallelism**: :meth:`LocalInfiller.infill` on real code positions with plans of 16/32/64 tokens whose
  true middle has at least that many tokens; tokens committed per forward (= committed / steps) and steps.
* **Diffusion vs AR**: the same spans (same prefix, suffix and plan), timed with our sampler
  (:meth:`LocalInfiller.infill`) and with greedy token-by-token decoding through the encoder's causal head
  (:meth:`LocalInfiller.autoregressive`), both from a cold prefix cache, in the same process and run;
  ``ar_speedup`` = total AR time / total diffusion time.  Quality of both: exact match of the stripped
  first line against the true middle, on held-out spans (HumanEval-Infilling single-line tasks and the
  bench fixtures; never the stdlib, which is in the training corpus).

The raw sampler is measured (no syntax hook, no post-processing): that is what "same network" compares.

    python -m bench.ar_vs_diffusion --model PATH [--spans 60] [--positions 30]
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import data_dir, fixture_sources, read_jsonl_gz, spread, summary


@dataclass
class Span:
    source: str
    language: str
    prefix: str
    suffix: str
    middle: str  # the true middle (what should be inserted at the cursor)


def _lang_key(lang: str) -> str:
    return {"py": "python", "js": "javascript"}.get(lang, lang)


def fixture_line_spans(n: int, seed: int = 0) -> list[Span]:
    """One line cut from a fixture; the cursor after its indentation (where an editor's auto-indent leaves it)."""
    rng = random.Random(seed)
    out: list[Span] = []
    for name, lang, text in fixture_sources():
        lines = text.split("\n")
        starts = [0]
        for ln in lines[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        for i, ln in enumerate(lines):
            body = ln.strip()
            if len(body) < 6 or body.startswith(("#", "//", '"""', "import", "package")) or i == 0:
                continue
            ind = ln[: len(ln) - len(ln.lstrip())]
            cur = starts[i] + len(ind)
            out.append(Span(name, lang, text[:cur], text[starts[i] + len(ln):], body))
    rng.shuffle(out)
    return out[:n]


def humaneval_line_spans(n: int, data: Path | None) -> list[Span]:
    """HumanEval-Infilling single-line tasks; the cursor on a blank line between prompt and suffix."""
    if data is None:
        return []
    tasks = read_jsonl_gz(data / "human-eval-infilling" / "HumanEval-SingleLineInfilling.jsonl.gz")
    return [Span(t["task_id"], "python", t["prompt"], "\n" + t["suffix"], t["canonical_solution"].rstrip("\n"))
            for t in spread(tasks, n)]


def first_line(s: str) -> str:
    return s.split("\n", 1)[0].strip()


def _plan_for(span: Span, max_tokens: int | None = None, max_lines: int | None = None):
    from dgcomplete import syntax
    from dgcomplete.types import SpanKind, SpanPlan

    text = span.prefix + span.suffix
    plan = syntax.plan_span(text, len(span.prefix), _lang_key(span.language), max_lines=8, max_tokens=48)
    if plan.kind == SpanKind.NONE:
        plan = SpanPlan(SpanKind.LINE, 1, 32, reason="bench fallback")
    if max_tokens is not None:
        plan.max_tokens = max_tokens
    if max_lines is not None:
        plan.max_lines = max_lines
    return plan


def ar_vs_diffusion(li: Any, spans: list[Span], *, seed: int = 0, log: Any = print) -> dict[str, Any]:
    from dgcomplete.types import InfillRequest

    rows = []
    for i, sp in enumerate(spans):
        plan = _plan_for(sp)
        req = InfillRequest(sp.prefix, sp.suffix, plan, _lang_key(sp.language), seed=seed, doc_key=f"avd-{i}")
        t0 = time.perf_counter()
        try:
            d = li.infill(req)
            d_ms = (time.perf_counter() - t0) * 1e3
            d_text = d.candidates[0].text if d.candidates else ""
            d_stats = d.stats
        except Exception as e:  # record and go on: a benchmark must not die on one span
            d_ms, d_text, d_stats = None, "", {"error": f"{type(e).__name__}: {e}"[:200]}
        li.forget(f"avd-{i}")
        t0 = time.perf_counter()
        try:
            a = li.autoregressive(req)
            a_ms = (time.perf_counter() - t0) * 1e3
            a_text = a.candidates[0].text if a.candidates else ""
            a_stats = a.stats
        except Exception as e:
            a_ms, a_text, a_stats = None, "", {"error": f"{type(e).__name__}: {e}"[:200]}
        truth = first_line(sp.middle)
        rows.append({
            "source": sp.source, "language": sp.language, "plan": plan.kind.value, "max_tokens": plan.max_tokens,
            "diffusion_ms": None if d_ms is None else round(d_ms, 2),
            "ar_ms": None if a_ms is None else round(a_ms, 2),
            "diffusion_encode_ms": d_stats.get("encode_ms"), "diffusion_denoise_ms": d_stats.get("denoise_ms"),
            "ar_encode_ms": a_stats.get("encode_ms"), "ar_decode_ms": a_stats.get("denoise_ms"),
            "diffusion_steps": d_stats.get("steps"), "ar_steps": a_stats.get("steps"),
            "diffusion_tokens": d_stats.get("committed_tokens"), "ar_tokens": a_stats.get("committed_tokens"),
            "diffusion_em": int(first_line(d_text) == truth), "ar_em": int(first_line(a_text) == truth),
            "diffusion_error": d_stats.get("error"), "ar_error": a_stats.get("error"),
        })
    ok = [r for r in rows if r["diffusion_ms"] is not None and r["ar_ms"] is not None]
    d_tot = sum(r["diffusion_ms"] for r in ok)
    a_tot = sum(r["ar_ms"] for r in ok)
    d_gen = sum(r["diffusion_denoise_ms"] or 0 for r in ok)
    a_gen = sum(r["ar_decode_ms"] or 0 for r in ok)
    ratios = [r["ar_ms"] / r["diffusion_ms"] for r in ok if r["diffusion_ms"]]
    res = {
        "spans": len(rows),
        "timed": len(ok),
        "errors": {"diffusion": sum(r["diffusion_error"] is not None for r in rows),
                   "ar": sum(r["ar_error"] is not None for r in rows)},
        "ar_speedup": round(a_tot / d_tot, 3) if d_tot else None,
        "ar_speedup_median_per_span": summary(ratios, 3)["p50"],
        "ar_speedup_generation_only": round(a_gen / d_gen, 3) if d_gen else None,
        "diffusion_ms": summary([r["diffusion_ms"] for r in ok]),
        "ar_ms": summary([r["ar_ms"] for r in ok]),
        "diffusion_steps": summary([float(r["diffusion_steps"] or 0) for r in ok]),
        "ar_steps": summary([float(r["ar_steps"] or 0) for r in ok]),
        "exact_match": {
            "diffusion": round(sum(r["diffusion_em"] for r in rows) / max(1, len(rows)), 4),
            "ar": round(sum(r["ar_em"] for r in rows) / max(1, len(rows)), 4),
        },
        "by_source": {},
        "rows": rows,
    }
    for src in ("humaneval", "fixtures"):
        rs = [r for r in rows if (r["source"].startswith("fixtures/") == (src == "fixtures"))]
        if rs:
            res["by_source"][src] = {
                "n": len(rs),
                "diffusion_em": round(sum(r["diffusion_em"] for r in rs) / len(rs), 4),
                "ar_em": round(sum(r["ar_em"] for r in rs) / len(rs), 4),
            }
    return res


def multi_line_spans(tokenizer: Any, want_tokens: int, n: int, data: Path | None, seed: int = 0) -> list[Span]:
    """Spans whose true middle has at least ``want_tokens`` tokens: whole lines cut from held-out code."""
    rng = random.Random(seed * 1000 + want_tokens)
    texts = [(name, lang, text) for name, lang, text in fixture_sources()]
    if data is not None:
        for t in spread(read_jsonl_gz(data / "human-eval-infilling" / "HumanEval-SingleLineInfilling.jsonl.gz"), 40):
            texts.append((t["task_id"], "python", t["prompt"] + t["canonical_solution"] + t["suffix"]))
    cands: list[Span] = []
    for name, lang, text in texts:
        lines = text.split("\n")
        starts = [0]
        for ln in lines[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        for i in range(1, len(lines) - 1):
            if not lines[i].strip() or not lines[i - 1].strip():
                continue
            ind = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            cur = starts[i] + len(ind)
            j, mid = i, ""
            while j < len(lines):
                mid = text[cur : starts[j] + len(lines[j])]
                if len(tokenizer.encode(mid)) >= want_tokens:
                    break
                j += 1
            if j >= len(lines) or j - i > 8:
                continue
            cands.append(Span(name, lang, text[:cur], text[starts[j] + len(lines[j]):], mid))
    rng.shuffle(cands)
    return cands[:n]


def parallelism(li: Any, sizes: tuple[int, ...], positions: int, data: Path | None, *, seed: int = 0) -> dict[str, Any]:
    from dgcomplete.types import InfillRequest

    out: dict[str, Any] = {"by_max_tokens": {}}
    all_tpf: list[float] = []
    dist: dict[str, list[float]] = {}
    for m in sizes:
        spans = multi_line_spans(li.tok, m, positions, data, seed)
        tpf, steps, committed, free, spf = [], [], [], [], []
        for i, sp in enumerate(spans):
            plan = _plan_for(sp, max_tokens=m, max_lines=8)
            req = InfillRequest(sp.prefix, sp.suffix, plan, _lang_key(sp.language), seed=seed, doc_key=f"par-{m}-{i}")
            try:
                r = li.infill(req)
            except Exception:
                continue
            finally:
                li.forget(f"par-{m}-{i}")
            s = r.stats
            tpf.append(float(s["tokens_per_forward"]))
            steps.append(float(s["steps"]))
            committed.append(float(s["committed_tokens"]))
            free.append(float(s["free_slots"]))
            spf.append(float(s["free_slots"]) / max(1, int(s["steps"])))
        all_tpf += tpf
        dist[str(m)] = tpf
        out["by_max_tokens"][str(m)] = {
            "n": len(tpf), "free_slots": summary(free)["p50"],
            "tokens_per_forward": summary(tpf, 2), "steps": summary(steps), "committed_tokens": summary(committed),
            # canvas slots settled per forward, wherever the model put the end of the middle
            "slots_per_forward": summary(spf, 2),
        }
    out["tokens_per_forward"] = summary(all_tpf, 2)
    out["distribution"] = dist
    return out


def run(model: Path, *, spans: int = 60, positions: int = 30, sizes: tuple[int, ...] = (16, 32, 64),
        threads: int = 1, seed: int = 0, data_override: str | None = None, log: Any = print) -> dict[str, Any]:
    import torch

    from dgcomplete.local import LocalInfiller
    from dgcomplete.model import load_model

    torch.set_num_threads(threads)
    loaded = load_model(model)
    li = LocalInfiller(loaded)
    data = data_dir(data_override)
    # warm-up (first-call costs) on a throwaway span
    from dgcomplete.types import InfillRequest, SpanKind, SpanPlan

    warm = InfillRequest("def f(x):\n    return ", "\n", SpanPlan(SpanKind.REST_OF_LINE, 1, 16), "python", seed=0, doc_key="w")
    li.infill(warm)
    li.autoregressive(warm)
    li.forget("w")
    t0 = time.perf_counter()
    n_he = spans * 2 // 3 if data is not None else 0
    sp = humaneval_line_spans(n_he, data) + fixture_line_spans(spans - n_he, seed)
    avd = ar_vs_diffusion(li, sp, seed=seed, log=log)
    avd["wall_s"] = round(time.perf_counter() - t0, 1)
    log(f"  ar vs diffusion: {avd['spans']} spans, speedup {avd['ar_speedup']} in {avd['wall_s']} s")
    t0 = time.perf_counter()
    par = parallelism(li, sizes, positions, data, seed=seed)
    par["wall_s"] = round(time.perf_counter() - t0, 1)
    log(f"  parallelism: {par['tokens_per_forward']['mean']} tokens/forward in {par['wall_s']} s")
    return {"ar_vs_diffusion": avd, "parallelism": par, "threads": threads, "data": data is not None}


def main(argv: list[str] | None = None) -> None:
    from . import emit, resolve_model

    ap = argparse.ArgumentParser(description="parallelism and diffusion vs autoregressive")
    ap.add_argument("--model")
    ap.add_argument("--spans", type=int, default=60)
    ap.add_argument("--positions", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", help="evaluation data directory (default: ../shared/data)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    res = run(resolve_model(args.model), spans=args.spans, positions=args.positions, threads=args.threads,
              data_override=args.data)
    res["ar_vs_diffusion"].pop("rows", None)
    emit(res, args.out)


if __name__ == "__main__":
    main()
