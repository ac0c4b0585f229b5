"""Run every benchmark and write ``latest.json``, ``summary.md`` and plots (``make bench``).

    python -m bench.run [--model PATH] [--quick] [--out DIR] [--threads N] [--skip quality,...]

Parts, in order: keystroke latency through LSP (real-time typing sessions as Neovim and VS Code, file-size
and thread comparisons, memory after 1,000 requests), parallelism and diffusion vs autoregressive (in
process), infilling quality (HumanEval-Infilling, SantaCoder-FIM, with baselines), suggestions on held-out
real code through the daemon (bench.context, test split; bench.typing_replay, its lines typed with a Tab-only
typist and with one who also accepts word by word; bench.notebooks, notebook cells), and the syntax-layer /
repair benchmarks of their owners when present.  The full run takes about 27 minutes on 2 cores (the
quality part has a time budget and reports how many tasks it covered); ``--quick`` takes about 2 minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import RESULTS, Timer, display_path, loadavg, machine_info, model_info, resolve_model

PARTS = ("latency", "parallel", "quality", "context", "syntax")

GOALS = [
    # key in the flat result, comparison, target, label
    ("latency_single_line_ms.p50", "<=", 100.0, "single-line keystroke latency p50 (ms)"),
    ("latency_single_line_ms.p95", "<=", 200.0, "single-line keystroke latency p95 (ms)"),
    ("context.exact", ">=", 0.10, "held-out test split: exact first line over all requests"),
    ("context.precision", ">=", 0.50, "held-out test split: precision of shown suggestions"),
    ("context.parse_rate", ">=", 0.98, "held-out test split: shown suggestions that keep the file parsing"),
    ("tokens_per_forward", ">=", 8.0, "tokens committed per forward, 16-64-token spans"),
    ("ar_speedup", ">=", 4.0, "speed-up over autoregressive decoding, same network"),
    ("file_scale_ratio", "<=", 1.2, "latency 5,000-line / 50-line file (p50)"),
]


def _get(d: dict[str, Any], dotted: str) -> Any:
    for k in dotted.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(k)  # type: ignore[assignment]
    return d


CONTEXT_KEYS = ("n", "exact", "shown", "precision", "parse_rate", "length_ratio", "words_shown", "words_right")
TYPING_KEYS = ("lines", "saved", "lines_completed", "lines_helped", "wrong_per_line", "wrong_lines", "accepted_share",
               "accepted", "accepted_by_source", "wrong", "wrong_by_source")


def _pick(d: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    return {k: (d or {}).get(k) for k in keys}


# ---- parts --------------------------------------------------------------------------------------------------------
def part_latency(model: Path, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    from .latency import LatencyConfig, quick_latency_config, run_latency

    cfg = quick_latency_config(args.threads) if args.quick else LatencyConfig(threads=args.threads)
    if args.seconds is not None:
        cfg.seconds = args.seconds
    if args.requests is not None:
        cfg.total_requests = args.requests
    if args.pace_scale is not None:
        cfg.pace_scale = args.pace_scale
    if args.scale_keys is not None:
        cfg.scale_keys = args.scale_keys
    if args.thread_keys is not None:
        cfg.thread_keystrokes = args.thread_keys
    if args.sessions is not None:
        cfg.max_sessions = args.sessions
    cfg.seed = args.seed
    res = asyncio.run(run_latency(model, cfg, log))
    res["config"] = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}
    return res


def part_parallel(model: Path, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    from .ar_vs_diffusion import run

    spans, positions = (12, 5) if args.quick else (60, 20)
    if args.spans is not None:
        spans = args.spans
    if args.positions is not None:
        positions = args.positions
    return run(model, spans=spans, positions=positions, threads=args.threads or 1, seed=args.seed,
               data_override=args.data, log=log)


def part_quality(model: Path, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    from .quality import QualityConfig, run_quality

    if args.quick:
        cfg = QualityConfig(limit=10, baseline_limit=10, budget_s=40, threads=args.threads or 1)
    else:
        cfg = QualityConfig(limit=None, baseline_limit=100, budget_s=420, threads=args.threads or 1)
    if args.quality_limit is not None:
        cfg.limit = args.quality_limit
        cfg.baseline_limit = min(cfg.baseline_limit or args.quality_limit, args.quality_limit)
    if args.quality_budget_s is not None:
        cfg.budget_s = args.quality_budget_s if args.quality_budget_s > 0 else None
    return asyncio.run(run_quality(model, cfg, args.data, log))


def part_context(model: Path, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """Suggestions on real code from packages outside the corpus, through the daemon (bench.context, default
    settings): the test split (Python, JS/TS), kept as ``context_test.json``, and the test_langs split (Go, Rust,
    C, Java), kept as ``context_test_langs.json``, with two other files of the package open; then both again as a
    user with one file open and the package as the workspace folder (``context_{split}_workspace.json``)."""
    from .context import main as context_main

    res_dir = Path(args.out) if args.out else RESULTS
    out: dict[str, Any] = {}
    ws = ["--workspace", "--no-others"]
    for split, key, extra in (("test", "", []), ("test_langs", "langs", []), ("test", "workspace", ws),
                              ("test_langs", "workspace_langs", ws)):
        if extra and args.quick:  # the packages' archives would be fetched (bench.workspace); tested on its own
            continue
        name = f"context_{split}{'_workspace' if extra else ''}.json"
        argv = ["--split", split, "--out", str(res_dir / name), "--model", str(model), *extra]
        if args.quick:
            argv += ["--n", "8"]
        if args.threads:
            argv += ["--threads", str(args.threads)]
        res = context_main(argv)
        a = res["all"]
        log(f"  context ({split}{', workspace folder' if extra else ''}): exact {a['exact']} shown {a['shown']} "
            f"precision {a['precision']}")
        part = {"all": a, "n": res["n"], "split": res["split"]}
        if key:
            fams = (res["variants"].get("default") or {}).get("by_family") or {}
            out[key] = {**part, "by_family": {f: {k: v.get(k) for k in ("n", "exact", "shown", "precision")}
                                              for f, v in fams.items()}}
        else:
            out.update(part)
    # the test split's lines typed character by character, a request after each (bench.typing_replay)
    from .typing_replay import main as typing_main

    argv = ["--split", "test", "--out", str(res_dir / "typing_test.json"), "--model", str(model)]
    if args.quick:
        argv += ["--n", "3"]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    ty = typing_main(argv)
    out["typing"] = {"all": ty["all"], "n": ty["n"], "split": ty["split"],
                     "by_family": {f: {k: v.get(k) for k in TYPING_KEYS} for f, v in ty["by_family"].items()}}
    t = ty["all"]
    log(f"  typing (test): saved {t['saved']} lines completed {t['lines_completed']} wrong/line {t['wrong_per_line']} "
        f"accepted share {t['accepted_share']}")
    if not args.quick:  # the same lines, a typist who also takes the right leading words of a wrong suggestion
        argv = ["--split", "test", "--words", "--out", str(res_dir / "typing_test_words.json"), "--model", str(model)]
        if args.threads:
            argv += ["--threads", str(args.threads)]
        tw = typing_main(argv)
        out["typing_words"] = {"all": tw["all"], "n": tw["n"], "split": tw["split"]}
        t = tw["all"]
        log(f"  typing (test, accepting words too): saved {t['saved']} wrong/line {t['wrong_per_line']} "
            f"accepted share {t['accepted_share']}")
    if not args.quick:  # notebook cells, the notebook in view against the cell alone (bench.notebooks)
        from .notebooks import main as notebooks_main

        argv = ["--out", str(res_dir / "notebooks.json"), "--model", str(model)]
        if args.threads:
            argv += ["--threads", str(args.threads)]
        nb = notebooks_main(argv)
        out["notebooks"] = {v: nb["variants"][v]["all"] for v in nb["variants"]} | {"paired": nb["paired"]}
        m = nb["variants"]["notebook"]["all"]
        log(f"  notebooks: exact {m['exact']} shown {m['shown']} precision {m['precision']} (cell alone: "
            f"{nb['variants']['cells']['all']['exact']})")
    return out


def part_syntax(model: Path, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """The syntax-layer and repair benchmarks of their owners, when present (bounded in time; output kept)."""
    import subprocess
    import sys

    out: dict[str, Any] = {}
    here = Path(__file__).resolve().parent
    res_dir = Path(args.out) if args.out else RESULTS
    jobs = [
        ("syntax_bench", ["--repeat", "20" if args.quick else "100"], 60 if args.quick else 120, None),
        ("repair_bench", ["--model", str(model), "--cases", "5" if args.quick else "30",
                          "--threads", str(args.threads or 1), "--out", str(res_dir / "repair.json")],
         90 if args.quick else 180, res_dir / "repair.json"),
    ]
    for name, extra, timeout, json_out in jobs:
        if not (here / f"{name}.py").exists():
            continue
        t = Timer()
        try:
            r = subprocess.run([sys.executable, "-m", f"bench.{name}", *extra], capture_output=True, text=True,
                               timeout=timeout, cwd=here.parent)
            out[name] = {"rc": r.returncode, "seconds": round(t.s, 1), "output": r.stdout[-4000:],
                         "stderr": r.stderr[-1000:] if r.returncode else ""}
            if json_out is not None and json_out.exists() and r.returncode == 0:
                try:
                    out[name]["result"] = json.loads(json_out.read_text())
                except ValueError:
                    pass
        except subprocess.TimeoutExpired:
            out[name] = {"rc": None, "seconds": round(t.s, 1), "output": f"timed out after {timeout} s"}
        log(f"  {name}: rc {out[name]['rc']} in {out[name]['seconds']} s")
    return out


# ---- the report ---------------------------------------------------------------------------------------------------
def flatten(results: dict[str, Any], args: argparse.Namespace, model: dict[str, Any], machine: dict[str, Any],
            wall_s: float) -> dict[str, Any]:
    lat = results.get("latency") or {}
    fs = lat.get("file_scale") or {}
    par = results.get("parallel") or {}
    q = results.get("quality") or {}
    avd = par.get("ar_vs_diffusion") or {}
    pp = par.get("parallelism") or {}
    he1, hem = q.get("humaneval_single") or {}, q.get("humaneval_multi") or {}
    ctx = results.get("context") or {}

    def lat_block(b: dict[str, Any] | None) -> dict[str, Any]:
        b = b or {}
        return {**_pick(b, "n", "p50", "p95", "p99", "mean"), "parts_ms_p50": {k: v.get("p50") for k, v in
                                                                              (b.get("parts_ms") or {}).items()}}

    requests = lat.get("requests_total")
    flat: dict[str, Any] = {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": bool(args.quick),
        "wall_s": round(wall_s, 1),
        "latency_ms": lat_block(lat.get("all")),
        "latency_single_line_ms": lat_block(lat.get("single_line")),
        "latency_by_client_ms": {k: {"all": lat_block(v.get("latency_ms")),
                                     "single_line": lat_block(v.get("single_line_latency_ms")),
                                     **_pick(v, "requests", "with_items", "empty", "cancelled", "disturbed",
                                             "errors", "empty_reasons"),
                                     "cancel_ack_ms_p50": (v.get("cancel_ack_ms") or {}).get("p50")}
                                 for k, v in (lat.get("by_client") or {}).items()},
        "tokens_per_forward": (pp.get("tokens_per_forward") or {}).get("mean"),
        "tokens_per_forward_by_max_tokens": {k: {"mean": v["tokens_per_forward"]["mean"],
                                                 "p50": v["tokens_per_forward"]["p50"],
                                                 "steps_mean": v["steps"]["mean"], "n": v["n"],
                                                 "free_slots": v["free_slots"],
                                                 "committed_mean": v["committed_tokens"]["mean"],
                                                 "slots_per_forward_mean": (v.get("slots_per_forward") or {}).get("mean")}
                                             for k, v in (pp.get("by_max_tokens") or {}).items()},
        "tokens_per_forward_by_plan_lsp": {k: {"mean": v["tokens_per_forward"]["mean"],
                                               "steps_mean": v["steps"]["mean"], "n": v["steps"]["n"]}
                                           for k, v in (lat.get("by_plan") or {}).items()},
        "ar_speedup": avd.get("ar_speedup"),
        "ar_vs_diffusion": {k: avd.get(k) for k in ("spans", "ar_speedup_median_per_span",
                                                     "ar_speedup_generation_only", "exact_match", "by_source",
                                                     "errors")}
        | {"diffusion_ms_p50": (avd.get("diffusion_ms") or {}).get("p50"),
           "ar_ms_p50": (avd.get("ar_ms") or {}).get("p50")},
        "file_scale_ratio": fs.get("ratio_p50"),
        "file_scale": {k: fs.get(k) for k in ("small_lines", "big_lines")}
        | {n: {**lat_block(fs.get(n)),
               **_pick(fs.get(n), "prefix_tokens_p50", "cache_hit_tokens_p50", "scored_mean", "drafts_mean"),
               "first_request_ms": ((fs.get(n) or {}).get("first_request_ms") or {}).get("p50")}
           for n in ("small", "big")},
        "threads": {"daemon_auto_or_given": lat.get("daemon_threads"),
                    **{k: _pick(v, "n", "p50", "p95") if isinstance(v, dict) else v
                       for k, v in (lat.get("threads") or {}).items()}},
        "rss_mb": {"after_load": lat.get("rss_after_load_mb"), "after_requests": lat.get("rss_after_requests_mb"),
                   "requests": requests,
                   "after_1000": lat.get("rss_after_requests_mb") if (requests or 0) >= 1000 else None,
                   "peak": lat.get("rss_peak_mb")},
        "daemon_startup_s": lat.get("startup_s"),
        "context": _pick(ctx.get("all") or {}, *CONTEXT_KEYS, "latency_ms"),
        "context_langs": {**_pick((ctx.get("langs") or {}).get("all") or {}, *CONTEXT_KEYS),
                          "by_family": (ctx.get("langs") or {}).get("by_family")},
        **{f"context_{key}": _pick((ctx.get(key) or {}).get("all") or {}, *CONTEXT_KEYS)
           for key in ("workspace", "workspace_langs")},
        "typing": {**_pick((ctx.get("typing") or {}).get("all") or {}, *TYPING_KEYS, "latency_ms"),
                   "by_family": (ctx.get("typing") or {}).get("by_family")},
        "typing_words": _pick((ctx.get("typing_words") or {}).get("all") or {}, *TYPING_KEYS),
        "context_notebooks": {v: _pick(m, *CONTEXT_KEYS) for v, m in (ctx.get("notebooks") or {}).items()
                              if v != "paired"} | ({"paired": ctx["notebooks"]["paired"]} if ctx.get("notebooks") else {}),
        "humaneval_single_line_pass1": (he1.get("pass1") or {}).get("ours"),
        "humaneval_multi_line_pass1": (hem.get("pass1") or {}).get("ours"),
        "santacoder_py_em": ((q.get("santacoder_py") or {}).get("exact_match") or {}).get("ours"),
        "santacoder_js_em": ((q.get("santacoder_js") or {}).get("exact_match") or {}).get("ours"),
        "santacoder_java_em": ((q.get("santacoder_java") or {}).get("exact_match") or {}).get("ours"),
        "oracle_ratio": he1.get("oracle_ratio"),
        "oracle_ratio_by_suite": {k: v.get("oracle_ratio") for k, v in q.items() if isinstance(v, dict) and "n" in v},
        "baselines": {},
        "quality_tasks": {k: {"evaluated": v.get("evaluated"), "total": v.get("total_tasks"), "n": v.get("n")}
                          for k, v in q.items() if isinstance(v, dict) and "n" in v},
        "token_accuracy": {k: v.get("token_accuracy") for k, v in q.items()
                           if isinstance(v, dict) and v.get("token_accuracy")},
        "machine": {**machine, "loadavg_end": loadavg(), "bench_threads": args.threads or 1},
        "model": model,
        "settings": {k: (display_path(v) if k in ("out", "data") and v else v) for k, v in vars(args).items()
                     if k != "model"}
        | {"latency": lat.get("config"), "quality": q.get("settings")},
    }
    for suite, metric in (("humaneval_single", "pass1"), ("humaneval_multi", "pass1"), ("santacoder_py", "exact_match"),
                          ("santacoder_js", "exact_match"), ("santacoder_java", "exact_match")):
        s = q.get(suite) or {}
        if s.get(metric):
            flat["baselines"][suite] = {k: v for k, v in s[metric].items()}
    if q.get("skipped"):
        flat["quality_skipped"] = q["skipped"]
    flat["goals"] = []
    for key, op, target, label in GOALS:
        v = _get(flat, key)
        met = None if v is None else (v <= target if op == "<=" else v >= target)
        flat["goals"].append({"key": key, "label": label, "target": f"{op} {target:g}", "value": v, "met": met})
    return flat


def _fmt(v: Any, nd: int = 3) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.{nd}g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def summary_md(flat: dict[str, Any], results: dict[str, Any]) -> str:
    m, mach = flat["model"], flat["machine"]
    L = [f"# dgcomplete benchmarks{' (quick)' if flat['quick'] else ''}", "",
         f"{flat['timestamp']} · model **{m.get('name')}** ({_fmt(m.get('params', 0) / 1e6)}M params, "
         f"{m.get('mode')} mode, canvas {m.get('canvas_length')}, ≤{m.get('max_denoising_steps')} steps) · "
         f"{mach.get('cores')} cores {mach.get('cpu')} · torch {mach.get('torch')} · "
         f"load average {mach.get('loadavg_start')} → {mach.get('loadavg_end')} · run took {flat['wall_s']:.0f} s", "",
         "## Goals", "", "| goal | target | measured | met |", "|---|---|---|---|"]
    for g in flat["goals"]:
        met = "—" if g["met"] is None else ("yes" if g["met"] else "**no**")
        L.append(f"| {g['label']} | {g['target']} | {_fmt(g['value'])} | {met} |")
    L += ["", "## Keystroke latency through LSP (ms, client-measured, undisturbed requests that ran the model)", "",
          "| requests | n | p50 | p95 | p99 | encode | denoise | syntax | engine other | protocol |",
          "|---|---|---|---|---|---|---|---|---|---|"]

    def row(name: str, b: dict[str, Any]) -> str:
        p = b.get("parts_ms_p50") or {}
        return (f"| {name} | {_fmt(b.get('n'))} | {_fmt(b.get('p50'))} | {_fmt(b.get('p95'))} | {_fmt(b.get('p99'))} | "
                f"{_fmt(p.get('encode'))} | {_fmt(p.get('denoise'))} | {_fmt(p.get('syntax'))} | "
                f"{_fmt(p.get('engine_other'))} | {_fmt(p.get('protocol'))} |")

    L.append(row("all", flat["latency_ms"]))
    L.append(row("single-line spans", flat["latency_single_line_ms"]))
    for k, v in flat["latency_by_client_ms"].items():
        L.append(row(f"{k}: all", v["all"]))
        L.append(row(f"{k}: single-line", v["single_line"]))
    L += ["", "Parts are medians of each part (they need not add up to the total's median).", ""]
    for k, v in flat["latency_by_client_ms"].items():
        L.append(f"- **{k}**: {v.get('requests')} requests, {v.get('with_items')} with a suggestion, "
                 f"{v.get('empty')} empty, {v.get('cancelled')} cancelled by the client "
                 f"(cancel acknowledged in {_fmt(v.get('cancel_ack_ms_p50'))} ms p50), {v.get('disturbed')} overtaken "
                 f"by typing; empty because: {v.get('empty_reasons') or '—'}")
    c = flat.get("context") or {}
    if c.get("n"):
        lat_c = c.get("latency_ms") or {}
        L += ["", "## Suggestions on held-out real code (bench.context, test split, daemon defaults)", "",
              f"- {c['n']} requests: exact first line **{_fmt(c.get('exact'))}** over all requests, shown "
              f"{_fmt(c.get('shown'))}, precision of shown {_fmt(c.get('precision'))}, shown that keep the file "
              f"parsing {_fmt(c.get('parse_rate'))}, shown/expected tokens (median) {_fmt(c.get('length_ratio'))}, "
              f"latency p50 {_fmt(lat_c.get('p50'))} / p95 {_fmt(lat_c.get('p95'))} ms; besides, the rest of the typed "
              f"word where the gate hid the line: {_fmt(c.get('words_shown'))} shown, {_fmt(c.get('words_right'))} "
              f"of them right (context_test.json)"]
    cl = flat.get("context_langs") or {}
    if cl.get("n"):
        fams = ", ".join(f"{f} {_fmt(v.get('exact'))} / {_fmt(v.get('precision'))}"
                         for f, v in sorted((cl.get("by_family") or {}).items()))
        L += [f"- Go, Rust, C and Java (test_langs split), {cl['n']} requests: exact **{_fmt(cl.get('exact'))}**, "
              f"shown {_fmt(cl.get('shown'))}, precision {_fmt(cl.get('precision'))}, parse "
              f"{_fmt(cl.get('parse_rate'))}, length {_fmt(cl.get('length_ratio'))}; exact / precision by language: "
              f"{fams} (context_test_langs.json)"]
    for key, what, name in (("context_workspace", "Python and JS/TS", "context_test_workspace.json"),
                            ("context_workspace_langs", "Go, Rust, C and Java", "context_test_langs_workspace.json")):
        cw = flat.get(key) or {}
        if cw.get("n"):
            L += [f"- {what}, one file open and its package as the workspace folder, {cw['n']} requests: exact "
                  f"**{_fmt(cw.get('exact'))}**, shown {_fmt(cw.get('shown'))}, precision {_fmt(cw.get('precision'))}, "
                  f"parse {_fmt(cw.get('parse_rate'))} ({name})"]
    ty = flat.get("typing") or {}
    if ty.get("lines"):
        L += [f"- Typing the test split's {ty['lines']} whole lines character by character, a request after each "
              f"(a typist who accepts every suggestion that is right): **{_fmt(ty.get('saved'))}** of the characters "
              f"saved, {_fmt(ty.get('lines_completed'))} of the lines completed by a suggestion, "
              f"{_fmt(ty.get('wrong_per_line'))} wrong suggestions read per line, "
              f"{_fmt(ty.get('accepted_share'))} of the suggestions read accepted, "
              f"{_fmt((ty.get('accepted_by_source') or {}).get('word', 0))} of the {_fmt(ty.get('accepted'))} accepted "
              f"the rest of a word (typing_test.json)"]
    tw = flat.get("typing_words") or {}
    if tw.get("lines"):
        L += [f"- The same lines, a typist who also takes the right first words of a wrong suggestion (accept next "
              f"word, one keystroke a word): **{_fmt(tw.get('saved'))}** of the characters saved, "
              f"{_fmt(tw.get('wrong_per_line'))} wrong suggestions read per line, {_fmt(tw.get('accepted_share'))} of "
              f"the suggestions read accepted (typing_test_words.json)"]
    nb = flat.get("context_notebooks") or {}
    if (nb.get("notebook") or {}).get("n"):
        a, b, f = nb["notebook"], nb.get("cells") or {}, nb.get("notebook_folder") or {}
        L += [f"- Jupyter notebook cells (Python, example notebooks of 4 packages outside the corpus), {a['n']} "
              f"requests: with the notebook in view exact **{_fmt(a.get('exact'))}**, shown {_fmt(a.get('shown'))}, "
              f"precision {_fmt(a.get('precision'))}; each cell a document of its own: exact {_fmt(b.get('exact'))}, "
              f"shown {_fmt(b.get('shown'))}, precision {_fmt(b.get('precision'))}; the notebook in view and the "
              f"package's other notebooks as the workspace folder: exact {_fmt(f.get('exact'))}, shown "
              f"{_fmt(f.get('shown'))}, precision {_fmt(f.get('precision'))} (notebooks.json)"]
    fs, th, rss = flat["file_scale"], flat["threads"], flat["rss_mb"]
    L += ["", "## Scale, threads, memory", "",
          f"- File size: p50 {_fmt((fs.get('small') or {}).get('p50'))} ms on {fs.get('small_lines')} lines vs "
          f"{_fmt((fs.get('big') or {}).get('p50'))} ms on {fs.get('big_lines')} lines → ratio "
          f"**{_fmt(flat['file_scale_ratio'])}** (prefix tokens seen: {_fmt((fs.get('small') or {}).get('prefix_tokens_p50'))} vs "
          f"{_fmt((fs.get('big') or {}).get('prefix_tokens_p50'))}; first request after opening: "
          f"{_fmt((fs.get('small') or {}).get('first_request_ms'))} vs {_fmt((fs.get('big') or {}).get('first_request_ms'))} ms)",
          f"- Threads: p50 {_fmt((th.get('threads_1') or {}).get('p50'))} ms with 1 vs "
          f"{_fmt((th.get('threads_2') or {}).get('p50'))} ms with 2 (speed-up {_fmt(th.get('speedup_2_over_1'))}); "
          f"the daemon picked {th.get('daemon_auto_or_given')}",
          f"- Daemon RSS: {_fmt(rss.get('after_load'))} MB after loading, {_fmt(rss.get('after_requests'))} MB after "
          f"{rss.get('requests')} requests (peak {_fmt(rss.get('peak'))} MB); start-up {_fmt(flat['daemon_startup_s'])} s",
          "", "## Parallelism and diffusion vs autoregressive (same network, same spans)", "",
          "| max tokens | free slots | n | tokens/forward mean | p50 | steps mean | committed tokens mean | slots/forward |",
          "|---|---|---|---|---|---|---|---|"]
    for k, v in flat["tokens_per_forward_by_max_tokens"].items():
        L.append(f"| {k} | {_fmt(v['free_slots'])} | {v['n']} | {_fmt(v['mean'])} | {_fmt(v['p50'])} | "
                 f"{_fmt(v['steps_mean'])} | {_fmt(v.get('committed_mean'))} | {_fmt(v.get('slots_per_forward_mean'))} |")
    L += ["", "Tokens/forward = committed middle tokens (up to the first filler/EOS) ÷ denoising steps; "
          "slots/forward = free canvas slots ÷ steps (the sampler's parallelism wherever the middle ends)."]
    a = flat["ar_vs_diffusion"]
    L += ["", f"Diffusion vs AR over {a.get('spans')} held-out single-line spans: AR time / diffusion time = "
          f"**{_fmt(flat['ar_speedup'])}** (median per span {_fmt(a.get('ar_speedup_median_per_span'))}, generation only "
          f"{_fmt(a.get('ar_speedup_generation_only'))}); p50 {_fmt(a.get('diffusion_ms_p50'))} ms vs "
          f"{_fmt(a.get('ar_ms_p50'))} ms; first-line exact match diffusion {_fmt((a.get('exact_match') or {}).get('diffusion'))} "
          f"vs AR {_fmt((a.get('exact_match') or {}).get('ar'))}.", ""]
    if flat["tokens_per_forward_by_plan_lsp"]:
        L.append("From the LSP sessions, by plan: " + "; ".join(
            f"{k}: {_fmt(v['mean'])} tokens/forward, {_fmt(v['steps_mean'])} steps (n={v['n']})"
            for k, v in flat["tokens_per_forward_by_plan_lsp"].items()))
    L += ["", "## Quality (held-out; same run)", ""]
    if flat.get("quality_skipped"):
        L.append(f"Skipped: {flat['quality_skipped']}")
    else:
        L += ["| suite | metric | tasks | ours | oracle length | AR same weights | copy previous line | empty | ours ÷ oracle |",
              "|---|---|---|---|---|---|---|---|---|"]
        q = results.get("quality") or {}
        for suite, b in flat["baselines"].items():
            s = q.get(suite) or {}
            n = s.get("n") or {}
            metric = "pass@1" if suite.startswith("humaneval") else "exact match"
            tasks = f"{s.get('evaluated')}/{s.get('total_tasks')} (oracle/AR on {n.get('oracle', 0)})"
            L.append(f"| {suite} | {metric} | {tasks} | {_fmt(b.get('ours'))} | {_fmt(b.get('oracle'))} | {_fmt(b.get('ar'))} | "
                     f"{_fmt(b.get('copy_prev'))} | {_fmt(b.get('empty'))} | {_fmt(s.get('oracle_ratio'))} |")
        L += ["", "Cursor on the blank line between prompt and suffix; first-line rule for single-line suites "
              "(stripped first generated line vs stripped canonical line). Token accuracy (first line, "
              "position-wise): " + "; ".join(f"{k}: {_fmt((v or {}).get('ours'))} ours / {_fmt((v or {}).get('oracle'))} oracle"
                                               for k, v in flat["token_accuracy"].items())]
    L += ["", "## Settings", "", "```", json.dumps(flat["settings"], indent=1, default=str)[:3000], "```", ""]
    return "\n".join(L)


def plots(results: dict[str, Any], out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    lat = results.get("latency") or {}
    recs = [r for r in lat.get("records") or [] if r.get("model_ran")]
    if recs:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        groups = {f"{c}: all": [r["ms"] for r in recs if r["client"] == c] for c in sorted({r["client"] for r in recs})}
        groups["single-line (both)"] = [r["ms"] for r in recs if r.get("plan") in ("rest_of_line", "line", "args")]
        for name, xs in groups.items():
            if xs:
                xs = sorted(xs)
                ax1.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], label=f"{name} (n={len(xs)})")
        for x in (60, 150):
            ax1.axvline(x, color="grey", ls="--", lw=0.8)
        ax1.set_xscale("log")
        ax1.set_xlabel("request → response (ms, log)")
        ax1.set_ylabel("fraction of requests")
        ax1.set_title("Keystroke latency CDF (undisturbed, model ran)")
        ax1.legend(fontsize=8)
        ax2.hist([r["ms"] for r in recs], bins=40, color="tab:blue", alpha=0.8)
        ax2.axvline(60, color="grey", ls="--", lw=0.8)
        ax2.axvline(150, color="grey", ls="--", lw=0.8)
        ax2.set_xlabel("ms")
        ax2.set_title("Latency histogram")
        fig.tight_layout()
        fig.savefig(out / "latency.png", dpi=110)
        plt.close(fig)
        made.append("latency.png")
    pp = (results.get("parallel") or {}).get("parallelism") or {}
    dist = pp.get("distribution") or {}
    if any(dist.values()):
        fig, ax = plt.subplots(figsize=(6.5, 4))
        ax.hist([v for v in dist.values()], bins=20, label=[f"max {k} tokens" for k in dist], stacked=False)
        ax.axvline(8, color="grey", ls="--", lw=0.8, label="goal 8")
        ax.set_xlabel("tokens committed per forward")
        ax.set_ylabel("spans")
        ax.set_title("Parallelism per span")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "tokens_per_forward.png", dpi=110)
        plt.close(fig)
        made.append("tokens_per_forward.png")
    rows = [r for r in ((results.get("parallel") or {}).get("ar_vs_diffusion") or {}).get("rows") or []
            if r.get("diffusion_ms") and r.get("ar_ms")]
    if rows:
        fig, ax = plt.subplots(figsize=(5.5, 5))
        xs, ys = [r["diffusion_ms"] for r in rows], [r["ar_ms"] for r in rows]
        ax.scatter(xs, ys, s=14, alpha=0.7)
        hi = max(xs + ys) * 1.1
        ax.plot([0, hi], [0, hi], color="grey", lw=0.8, label="equal")
        ax.plot([0, hi / 4], [0, hi], color="grey", ls="--", lw=0.8, label="AR 4× slower (goal)")
        ax.set_xlabel("diffusion (ms)")
        ax.set_ylabel("autoregressive (ms)")
        ax.set_title("Same network, same spans")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "ar_vs_diffusion.png", dpi=110)
        plt.close(fig)
        made.append("ar_vs_diffusion.png")
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="checkpoint directory (default: the embedded model)")
    ap.add_argument("--quick", action="store_true", help="a ~2 minute run")
    ap.add_argument("--out", help="results directory (default: bench/results)")
    ap.add_argument("--threads", type=int, help="daemon and in-process torch threads (default: daemon measures; 1 in process)")
    ap.add_argument("--skip", default="", help=f"comma-separated parts to skip: {','.join(PARTS)}")
    ap.add_argument("--data", help="evaluation data directory (default: ../shared/data)")
    ap.add_argument("--seed", type=int, default=0)
    g = ap.add_argument_group("sizes (override the full/quick defaults)")
    g.add_argument("--seconds", type=float, help="typing time per client mode")
    g.add_argument("--requests", type=int, help="inline requests before the memory reading")
    g.add_argument("--pace-scale", type=float, help="typing delay multiplier (<1: faster typing, smoke tests)")
    g.add_argument("--sessions", type=int, help="typing sessions (source files) to replay")
    g.add_argument("--scale-keys", type=int)
    g.add_argument("--thread-keys", type=int)
    g.add_argument("--spans", type=int, help="diffusion-vs-AR spans")
    g.add_argument("--positions", type=int, help="positions per span size for parallelism")
    g.add_argument("--quality-limit", type=int, help="tasks per quality suite")
    g.add_argument("--quality-budget-s", type=float, help="generation time budget for quality (0: none)")
    args = ap.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = skip - set(PARTS)
    if unknown:
        ap.error(f"unknown parts to skip: {', '.join(sorted(unknown))}")
    out = Path(args.out) if args.out else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    model_path = resolve_model(args.model)
    args.model_display = display_path(model_path)
    t = Timer()

    def log(msg: str) -> None:
        print(f"[{t.s:6.1f}s] {msg.strip()}", flush=True)

    from dgcomplete.model import load_model

    machine = machine_info()
    model = model_info(load_model(model_path))
    log(f"model {model['name']} ({model['params'] / 1e6:.1f}M params), {machine['cores']} cores, load {machine['loadavg_start']}")
    results: dict[str, Any] = {}
    timings: dict[str, float] = {}
    for name, fn in (("latency", part_latency), ("parallel", part_parallel), ("quality", part_quality),
                     ("context", part_context), ("syntax", part_syntax)):
        if name in skip:
            continue
        log(f"{name} ...")
        t0 = t.s
        try:
            results[name] = fn(model_path, args, log)
        except Exception as e:  # report the failure in the results and keep going
            import traceback

            traceback.print_exc()
            results[name] = {"error": f"{type(e).__name__}: {e}"}
        timings[name] = round(t.s - t0, 1)
        log(f"{name} done in {timings[name]} s")
    flat = flatten(results, args, model, machine, t.s)
    flat["part_seconds"] = timings
    flat["errors"] = {k: v["error"] for k, v in results.items() if isinstance(v, dict) and "error" in v}
    (out / "latest.json").write_text(json.dumps(flat, indent=1, default=str) + "\n")
    details = {k: v for k, v in results.items()}
    (out / "details.json").write_text(json.dumps(details, indent=1, default=str) + "\n")
    made = plots(results, out)
    (out / "summary.md").write_text(summary_md(flat, results) + "\n" + "".join(f"![{p}]({p})\n" for p in made))
    log(f"wrote {display_path(out / 'latest.json')}, summary.md, details.json and {len(made)} plots "
        f"in {t.s:.0f} s")
    for g_ in flat["goals"]:
        log(f"  {g_['label']}: {_fmt(g_['value'])} (target {g_['target']}) {'' if g_['met'] is None else ('met' if g_['met'] else 'NOT met')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
