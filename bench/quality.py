"""Infilling quality on held-out public benchmarks, through the product path (``Engine.complete``).

Suites (evaluation data in ``../shared/data``; evaluation only, never training):

* **HumanEval-Infilling single-line** (1033 tasks), pass@1 by execution: the document is
  ``prompt + "\\n" + suffix`` with the cursor on the blank line (``len(prompt)``), like an editor; the
  first line of our suggestion is the completion, and the program
  ``prompt + completion + "\\n" + suffix + "\\n" + test + "\\n" + f"check({entry_point})"`` runs in a fresh
  subprocess (3 s timeout, 2 in parallel).
* **HumanEval-Infilling multi-line** (a spread sample, 200 by default): the same, with the whole suggestion.
* **SantaCoder-FIM** py/js/java exact match: document ``prompt + "\\n" + "\\n" + suffix`` with the cursor on
  the blank line; first-line rule: the stripped first generated line equals the stripped canonical line.

Methods, same run: ``ours`` (Engine.complete: planner + sampler + syntax checks), ``oracle`` (the same with
the plan's ``max_tokens``/``max_lines`` set to the true middle's token/line count: the length problem
removed), ``ar`` (greedy autoregressive decoding with the same weights, prefix only), with ``--invoked``
``invoked`` (the first item of an Invoked request: three items, the causal line among the candidates), and the baselines
``empty`` and ``copy_prev`` (repeat the last non-blank line before the cursor).  ``oracle_ratio`` =
ours ÷ oracle on the tasks both ran.  Per-token accuracy: position-wise token agreement of the first line
with the true line, over the true line's tokens.

Tasks are taken in a fixed shuffled order, so ``--limit`` and time budgets give unbiased samples; the number
of tasks behind every figure is reported.

    python -m bench.quality --model PATH [--limit N] [--baseline-limit N] [--budget-s S]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import data_dir, read_jsonl_gz, summary

LANG = {"py": ("python", "py"), "js": ("javascript", "js"), "java": ("java", "java")}
METHODS = ("ours", "invoked", "oracle", "ar", "empty", "copy_prev")


@dataclass
class Task:
    suite: str
    id: str
    language: str  # tree-sitter name
    ext: str
    document: str
    offset: int
    truth: str  # what should be inserted at the cursor (no trailing newline)
    single_line: bool
    program: tuple[str, str, str] | None = None  # (before completion, after completion) pieces for execution
    out: dict[str, str] = field(default_factory=dict)  # method -> inserted text
    ms: dict[str, float] = field(default_factory=dict)


def _shuffled(items: list[Any], seed: int = 0) -> list[Any]:
    items = list(items)
    random.Random(seed).shuffle(items)
    return items


def humaneval_tasks(data: Path, kind: str) -> list[Task]:
    fname = {"single": "HumanEval-SingleLineInfilling.jsonl.gz", "multi": "HumanEval-MultiLineInfilling.jsonl.gz"}[kind]
    out = []
    for t in read_jsonl_gz(data / "human-eval-infilling" / fname):
        prompt, suffix = t["prompt"], t["suffix"]
        doc = prompt + "\n" + suffix
        tail = suffix + "\n" + t["test"] + "\n" + f"check({t['entry_point']})\n"
        out.append(Task(f"humaneval_{kind}", t["task_id"], "python", "py", doc, len(prompt),
                        t["canonical_solution"].rstrip("\n"), kind == "single", (prompt, "\n", tail)))
    return _shuffled(out)


def santacoder_tasks(data: Path) -> dict[str, list[Task]]:
    out: dict[str, list[Task]] = {"py": [], "js": [], "java": []}
    for t in read_jsonl_gz(data / "santacoder-fim" / "santacoder-fim-task.jsonl.gz"):
        lang = t["language"]
        if lang not in out:
            continue
        doc = t["prompt"] + "\n" + "\n" + t["suffix"]
        name, ext = LANG[lang]
        out[lang].append(Task(f"santacoder_{lang}", t["name"], name, ext, doc, len(t["prompt"]) + 1,
                              t["canonical_solution"], True))
    return {k: _shuffled(v) for k, v in out.items()}


def copy_prev(doc: str, offset: int) -> str:
    for line in reversed(doc[:offset].split("\n")[:-1]):
        if line.strip():
            return line
    return ""


def first_line(s: str) -> str:
    return s.split("\n", 1)[0]


# ---- generation --------------------------------------------------------------------------------------------------
class Runner:
    """One engine in this process: the product path, an oracle-length variant and the AR baseline."""

    def __init__(self, model: Path, threads: int) -> None:
        from dgcomplete.engine import Engine
        from dgcomplete.model import load_model

        self.loaded = load_model(model)
        self.engine = Engine(self.loaded, threads=threads)
        # the suites score the top candidate of a one-item request with the gate open (an Invoked request
        # shows the same first item where the file gives drafts: bench/results/invoked_rows_ab.json); what the
        # show/hide gate lets through on its own is measured on held-out code by bench.context
        self.engine.settings.min_confidence = 0.0
        self.tok = self.loaded.tokenizer
        self.n = 0

    async def start(self) -> None:
        await self.engine.start()

    async def ours(self, t: Task) -> str:
        return await self._first_item(t, 1)

    async def invoked(self, t: Task) -> str:
        """The first item of an Invoked request (Alt+\\: three items, the causal line among the candidates)."""
        return await self._first_item(t, 3)

    async def _first_item(self, t: Task, n: int) -> str:
        uri = self._open(t)
        try:
            comp = await self.engine.complete(uri, t.offset, n=n, seed=0)
        finally:
            self.engine.close(uri)
        return comp.items[0].text if comp.items else ""

    async def oracle(self, t: Task) -> str:
        from dgcomplete import syntax
        from dgcomplete.types import InfillRequest, SpanKind, SpanPlan

        uri = self._open(t)
        try:
            s = self.engine.session(uri)
            st = self.engine.settings
            plan = syntax.plan_span(t.document, t.offset, s.lang, s.doc.tree,
                                    max_lines=st.max_lines, max_tokens=st.max_tokens)
            if plan.kind == SpanKind.NONE:
                plan = SpanPlan(SpanKind.LINE, 1, 32, reason="oracle fallback")
            plan.max_tokens = max(1, len(self.tok.encode(t.truth)))
            plan.max_lines = t.truth.count("\n") + 1
            req = InfillRequest(t.document[: t.offset], t.document[t.offset :], plan, s.lang, seed=0,
                                doc_key=uri, version=s.version)
            from dgcomplete.types import CancelToken

            # the oracle length: a raw infill at the true span size (the engine's own model path, no plan)
            res = await self.engine._run_infill(req, CancelToken(), s, t.document, t.offset)
            items = self.engine._postprocess(res.candidates, t.document, t.offset, plan, s.lang, s.doc.tree)
        finally:
            self.engine.close(uri)
        return items[0].text if items else ""

    async def ar(self, t: Task) -> str:
        from dgcomplete import syntax
        from dgcomplete.types import InfillRequest, SpanKind, SpanPlan

        st = self.engine.settings
        plan = syntax.plan_span(t.document, t.offset, t.language, max_lines=st.max_lines,
                                max_tokens=st.max_tokens)
        if plan.kind == SpanKind.NONE:
            plan = SpanPlan(SpanKind.LINE, 1, 32, reason="ar fallback")
        if t.single_line:
            plan.max_lines = 1
        req = InfillRequest(t.document[: t.offset], t.document[t.offset :], plan, t.language, seed=0)
        li = self.engine.local
        assert li is not None
        res = await self.engine.run_in_model_thread(lambda: li.autoregressive(req))
        return res.candidates[0].text if res.candidates else ""

    def _open(self, t: Task) -> str:
        self.n += 1
        uri = f"file:///bench/quality/{self.n}.{t.ext}"
        self.engine.open(uri, t.document, 0, t.language)
        return uri

    async def generate(self, t: Task, methods: tuple[str, ...]) -> None:
        for m in methods:
            t0 = time.perf_counter()
            try:
                if m == "empty":
                    text = ""
                elif m == "copy_prev":
                    text = copy_prev(t.document, t.offset)
                else:
                    text = await getattr(self, m)(t)
            except Exception as e:  # one failing task must not end the benchmark
                text = ""
                t.out[f"{m}_error"] = f"{type(e).__name__}: {e}"[:200]
            t.ms[m] = round((time.perf_counter() - t0) * 1e3, 2)
            t.out[m] = first_line(text) if t.single_line else text

    async def close(self) -> None:
        await self.engine.shutdown()


# ---- execution ---------------------------------------------------------------------------------------------------
def run_program(program: str, timeout: float = 3.0) -> bool:
    with tempfile.TemporaryDirectory(prefix="dgbench-exec-") as cwd:
        try:
            r = subprocess.run([sys.executable, "-I", "-"], input=program, capture_output=True, text=True,
                               timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            return False
    return r.returncode == 0


def execute(tasks: list[Task], workers: int = 2, timeout: float = 3.0) -> dict[tuple[str, str], bool]:
    """Run every (task, method) program once (identical programs share a run)."""
    jobs: dict[str, str] = {}
    keys: dict[tuple[str, str], str] = {}
    for t in tasks:
        assert t.program is not None
        head, sep, tail = t.program
        for m, text in t.out.items():
            if m.endswith("_error"):
                continue
            prog = head + text + sep + tail
            h = hashlib.sha1(prog.encode()).hexdigest()
            jobs[h] = prog
            keys[(t.id, m)] = h
    with ThreadPoolExecutor(workers) as pool:
        results = dict(zip(jobs, pool.map(lambda p: run_program(p, timeout), jobs.values()), strict=True))
    return {k: results[h] for k, h in keys.items()}


# ---- scoring -----------------------------------------------------------------------------------------------------
def token_accuracy(tok: Any, pred: str, truth: str) -> float:
    a, b = tok.encode(pred.strip()), tok.encode(truth.strip())
    if not b:
        return float(not a)
    return sum(1 for x, y in zip(a, b, strict=False) if x == y) / len(b)


def is_right(t: Task, method: str, passed: dict[tuple[str, str], bool] | None) -> bool:
    """The suite's rule for one task: its program passed (HumanEval), else the stripped first line is exact."""
    if passed is not None:
        return passed.get((t.id, method), False)
    return t.out[method].strip() == t.truth.strip()


def score(tasks: list[Task], tok: Any, passed: dict[tuple[str, str], bool] | None) -> dict[str, Any]:
    res: dict[str, Any] = {"n": {}, "ms": {}}
    metric = "pass1" if passed is not None else "exact_match"
    res[metric] = {}
    if tasks and tasks[0].single_line:
        res["token_accuracy"] = {}
    for m in METHODS:
        ts = [t for t in tasks if m in t.out]
        if not ts:
            continue
        res["n"][m] = len(ts)
        res[metric][m] = round(sum(is_right(t, m, passed) for t in ts) / len(ts), 4)
        if "token_accuracy" in res:
            res["token_accuracy"][m] = round(sum(token_accuracy(tok, t.out[m], t.truth) for t in ts) / len(ts), 4)
        if m in ("ours", "invoked", "oracle", "ar"):
            res["ms"][m] = summary([t.ms[m] for t in ts])
    both = [t for t in tasks if "ours" in t.out and "oracle" in t.out]
    if both:
        o = sum(is_right(t, "ours", passed) for t in both)
        q = sum(is_right(t, "oracle", passed) for t in both)
        res["oracle_subset"] = {"n": len(both), "ours": round(o / len(both), 4), "oracle": round(q / len(both), 4)}
        res["oracle_ratio"] = round(o / q, 3) if q else None
    res["errors"] = sum(1 for t in tasks for k in t.out if k.endswith("_error"))
    return res


# ---- the benchmark -----------------------------------------------------------------------------------------------
@dataclass
class QualityConfig:
    limit: int | None = None  # tasks per suite (None: all; HumanEval multi-line defaults to 200)
    multi_limit: int = 200
    baseline_limit: int | None = 150  # tasks per suite that also get oracle and AR (None: all)
    budget_s: float | None = None  # wall-clock budget for generation over all suites (None: no budget)
    threads: int = 1
    workers: int = 2
    timeout_s: float = 3.0
    invoked: bool = False  # also the first item of an Invoked request, on every task
    per_task: bool = False  # keep each task's result for the product path (for paired comparisons: --paired)
    suites: tuple[str, ...] = ("humaneval_single", "humaneval_multi", "santacoder_py", "santacoder_js",
                               "santacoder_java")


# share of the time budget per suite (the single-line pass@1 is the headline number)
BUDGET_SHARE = {"humaneval_single": 0.55, "humaneval_multi": 0.09, "santacoder_py": 0.12, "santacoder_js": 0.12,
                "santacoder_java": 0.12}


async def run_quality(model: Path, cfg: QualityConfig, data_override: str | None = None,
                      log: Any = print) -> dict[str, Any]:
    data = data_dir(data_override)
    if data is None:
        return {"skipped": "evaluation data not found (../shared/data or DGCOMPLETE_EVAL_DATA)"}
    suites: dict[str, list[Task]] = {}
    if "humaneval_single" in cfg.suites:
        suites["humaneval_single"] = humaneval_tasks(data, "single")
    if "humaneval_multi" in cfg.suites:
        suites["humaneval_multi"] = humaneval_tasks(data, "multi")
    sc = santacoder_tasks(data) if any(s.startswith("santacoder") for s in cfg.suites) else {}
    for lang, ts in sc.items():
        if f"santacoder_{lang}" in cfg.suites:
            suites[f"santacoder_{lang}"] = ts
    runner = Runner(model, cfg.threads)
    await runner.start()
    t_all = time.perf_counter()
    out: dict[str, Any] = {}
    try:
        shares = {k: BUDGET_SHARE.get(k, 0.1) for k in suites}
        total_share = sum(shares.values())
        carry = 0.0
        for name, tasks in suites.items():
            limit = cfg.limit if cfg.limit is not None else (cfg.multi_limit if name == "humaneval_multi" else None)
            todo = tasks if limit is None else tasks[:limit]
            budget = None if cfg.budget_s is None else cfg.budget_s * shares[name] / total_share + carry
            t0 = time.perf_counter()
            done: list[Task] = []
            for i, t in enumerate(todo):
                if budget is not None and time.perf_counter() - t0 > budget:
                    break
                with_baselines = cfg.baseline_limit is None or i < cfg.baseline_limit
                methods = METHODS if with_baselines else ("ours", "invoked", "empty", "copy_prev")
                if not cfg.invoked:
                    methods = tuple(m for m in methods if m != "invoked")
                await runner.generate(t, methods)
                done.append(t)
            gen_s = time.perf_counter() - t0
            if budget is not None:
                carry = max(0.0, budget - gen_s)
            t1 = time.perf_counter()
            passed = execute(done, cfg.workers, cfg.timeout_s) if name.startswith("humaneval") else None
            r = score(done, runner.tok, passed)
            r.update({"total_tasks": len(tasks), "evaluated": len(done), "complete": len(done) == len(tasks),
                      "generate_s": round(gen_s, 1), "execute_s": round(time.perf_counter() - t1, 1)})
            if cfg.per_task:
                r["per_task"] = {t.id: int(is_right(t, "ours", passed)) for t in done if "ours" in t.out}
            out[name] = r
            head = r.get("pass1") or r.get("exact_match") or {}
            log(f"  {name}: {len(done)}/{len(tasks)} tasks, ours {head.get('ours')}, oracle {head.get('oracle')}, "
                f"ar {head.get('ar')}, copy_prev {head.get('copy_prev')} ({gen_s:.0f}+{r['execute_s']:.0f} s)")
    finally:
        await runner.close()
    out["wall_s"] = round(time.perf_counter() - t_all, 1)
    out["settings"] = {"limit": cfg.limit, "multi_limit": cfg.multi_limit, "baseline_limit": cfg.baseline_limit,
                       "budget_s": cfg.budget_s, "threads": cfg.threads, "timeout_s": cfg.timeout_s,
                       "first_line_rule": "stripped first generated line == stripped canonical line",
                       "cursor": "on the blank line between prompt and suffix (column 0)",
                       "gate": "open (minConfidence 0): the top candidate of a one-item request",
                       **({"invoked": "the first of an Invoked request's three items"} if cfg.invoked else {})}
    return out


def mcnemar_p(gained: int, lost: int) -> float:
    """Two-sided exact McNemar test: how likely a split this uneven of the tasks that changed, if neither engine
    were better (each changed task a fair coin)."""
    n, k = gained + lost, min(gained, lost)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def paired(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Two --per-task runs task by task, on the tasks both evaluated: right before/after, gained, lost, p."""
    out: dict[str, Any] = {}
    for suite in sorted(set(old) & set(new)):
        a = old[suite].get("per_task") if isinstance(old[suite], dict) else None
        b = new[suite].get("per_task") if isinstance(new[suite], dict) else None
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        ids = sorted(set(a) & set(b))
        gained = sum(b[i] and not a[i] for i in ids)
        lost = sum(a[i] and not b[i] for i in ids)
        out[suite] = {"tasks": len(ids), "old": sum(a[i] for i in ids), "new": sum(b[i] for i in ids),
                      "gained": gained, "lost": lost, "mcnemar_exact_p": round(mcnemar_p(gained, lost), 4)}
    return out


def main(argv: list[str] | None = None) -> None:
    from . import emit, machine_info, resolve_model

    ap = argparse.ArgumentParser(description="infilling quality (HumanEval-Infilling, SantaCoder-FIM)")
    ap.add_argument("--model")
    ap.add_argument("--limit", type=int, help="tasks per suite (default: all; multi-line: 200)")
    ap.add_argument("--baseline-limit", type=int, default=150,
                    help="tasks per suite that also run oracle and AR (-1: all)")
    ap.add_argument("--budget-s", type=float, help="stop generating when this many seconds are spent")
    ap.add_argument("--suites", help="comma-separated subset of " + ",".join(QualityConfig.suites))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", help="evaluation data directory (default: ../shared/data)")
    ap.add_argument("--invoked", action="store_true", help="also the first item of an Invoked request")
    ap.add_argument("--out", help="write the JSON here")
    ap.add_argument("--per-task", action="store_true", help="keep each task's result (ours) in the JSON")
    ap.add_argument("--paired", nargs=2, metavar=("OLD", "NEW"),
                    help="compare two --per-task outputs task by task (run both on one kind of CPU: near-ties of "
                         "a small model fall differently under other floating-point kernels)")
    args = ap.parse_args(argv)
    if args.paired:
        old, new = (json.loads(Path(p).read_text()) for p in args.paired)
        emit(paired(old, new), args.out)
        return
    cfg = QualityConfig(limit=args.limit, baseline_limit=None if args.baseline_limit == -1 else args.baseline_limit,
                        budget_s=args.budget_s, threads=args.threads, invoked=args.invoked, per_task=args.per_task)
    if args.suites:
        cfg.suites = tuple(s.strip() for s in args.suites.split(",") if s.strip())
    res = asyncio.run(run_quality(resolve_model(args.model), cfg, args.data))
    if "skipped" not in res:
        res["machine"] = machine_info()
    emit(res, args.out)


if __name__ == "__main__":
    main()
