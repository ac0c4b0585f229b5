"""What a longer context and a bigger shape cost per keystroke on this CPU, and whether int8 weights help
(issue #20, items 3 and 5).

    python -m bench.shape_budget [--quick] [--out bench/results/shape_budget.json]

Shapes: the shipped model (loaded as the daemon loads it) and candidate shapes with random weights built by the
training code's own config (``dgcomplete.train.train.small_config``, the layer mix every run trains), fp32: by
default d320 x 6 (4 heads, ff 960, 10.8M parameters) and d384 x 8 (6 heads, ff 1536, 22.0M: the GPU run's
``run.sh probe`` shape); bench/results/shape_sweep.json is the wider sweep that chose the GPU run's shape. A
shape is ``shipped``, ``dDxL`` (heads D/64 rounded down to even, so d320 has 4 heads of 80; ff 4D) or
``dDxLhHfF``.

For each shape, cached prefix length (384, 1024, 2048 tokens) and thread count (1, 2), the median of N reps
after warm-up of:

* ``encode_cold``: the whole prefix into a fresh cache, in the 256-token chunks ``LocalInfiller.encode_prefix``
  uses, next-token logits on the last (what opening a file or a moved context window costs);
* ``encode_append``: ``--append`` (8) tokens after a cached prefix, with the next-token logits (a keystroke when
  the prefix cache hits);
* ``step``: one decoder pass over the cache, ``<mask>`` free slots + a 16-token suffix head, logits on the free
  slots, no self-conditioning (as the shipped generation config; the GPU run trains with it off too);
* ``score``: the scorer's batched pass (2 rows per candidate: even/odd slots masked) plus its log-softmax
  (``LocalInfiller.score``);

each for two request cases: ``canvas64`` (the issue's: canvas 64 = 48 free + 16 head, scorer 8 rows of canvas
64, i.e. 4 candidates) and ``typical`` (the median request of the LSP latency bench, bench/results/details.json:
34 free slots, 1 candidate scored, 2 rows of 16 + 16). The engine's own medians from that file are copied into
``product_reference`` to set the estimates against.

The sampler's own work for ``--steps`` steps (softmax, entropy, acceptance over free slots x vocab; the same for every
shape of this vocabulary) is timed once per thread count and case with the model replaced by fixed logits.
Per-keystroke model cost = encode_append + steps x step + sampler + score, per case; it fits when that plus
``--overhead-ms`` of engine/protocol time (bench/results/summary.md, single-line spans: 24.7 ms engine other
+ 2.4 ms protocol) stays within ``--budget-ms`` (the p50 goal, 100 ms).

That sum over-counts (the shipped shape's sum exceeds what the daemon measures for the same requests), so the
decision uses a second estimate, calibrated on the daemon: ``--daemon`` names a ``bench.run`` result
(``latest.json``) of the shipped model measured through LSP on the same kind of machine, and each shape's
single-line p50 / p95 there is scaled by its ``typical`` model cost over the shipped shape's (same prefix and
thread count). Scaling the whole request, not only its model part, errs on the slow side: the engine's own
work does not grow with the shape. A shape fits when the scaled p50 and p95 stay within ``--budget-ms`` and
``--budget-p95-ms``.

int8: torchao's ``quantize_`` (int8 weight-only, int8 dynamic activation + int8 weight) on the shipped model
and on d384 x 8: decoder-step time against fp32 (interleaved reps), how many weights were replaced and how
many ``F.linear`` calls of one step took the int8 path, and the change of the logits on a fixed canvas of
real code (max abs difference, argmax agreement). Eager is the product's path; torchao's CPU int8 kernels
are meant for Inductor, so the same step is also timed under ``torch.compile`` (fp32 and int8 weight-only,
fixed shapes; ``--compile no`` skips it). torchao is not a dependency: when it does not import or does not run,
what failed is recorded.

The machine may be busy: the load average at start and end is recorded. ``--quick``: few reps (tests).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from dgcomplete.model import ConfigError, DiffusionGemma, LoadedModel, ModelConfig, load_model
from dgcomplete.model.config import SLIDING
from dgcomplete.sampler import SamplerConfig, denoise

from . import FIXTURES, RESULTS, display_path, emit, loadavg, machine_info, resolve_model

CANVAS = 64
HEAD = 16  # suffix-head tokens of a canvas (local.SUFFIX_HEAD, a quarter of canvas 64 at most)
FREE = CANVAS - HEAD
CHUNK = 256  # LocalInfiller.encode_prefix's encoder chunk
DEFAULT_SHAPES = ("shipped", "d320x6h4f960", "d384x8")
GPU_PREFIX = 1024  # the prefix length the GPU run trains with (gpu/run.sh PREFIX)
SHAPE_RE = re.compile(r"^d(\d+)x(\d+)(?:h(\d+))?(?:f(\d+))?$")


@dataclass(frozen=True)
class Case:
    """One request's canvas sizes: denoised free slots, and the scorer's rows and free slots (+ the suffix head)."""

    free: int
    score_rows: int
    score_free: int


# "canvas64": the case, a full canvas (48 free + 16 head) and the scorer's largest batch (4 candidates x
# even/odd, 48 slots). "typical": the median LSP request of the latency bench (bench/results/details.json:
# 34 free slots, 1 candidate scored, i.e. 2 rows; a single-line candidate under 16 tokens scores 16 slots).
CASES = {"canvas64": Case(FREE, 8, FREE), "typical": Case(34, 2, 16)}


# ---- shapes ---------------------------------------------------------------------------------------------------
def shape_config(spec: str, vocab: int, context: int = GPU_PREFIX) -> ModelConfig:
    """The config of a ``dDxL[hH][fF]`` shape, as the training code builds it (mask mode, window 256; ``context``
    is only the trained prefix length it records)."""
    from dgcomplete.train.train import small_config

    m = SHAPE_RE.match(spec)
    if m is None:
        raise SystemExit(f"bench.shape_budget: shape {spec!r} is not 'shipped' or dDxL[hH][fF] (e.g. d384x8h6f1536)")
    d, layers = int(m[1]), int(m[2])
    heads = int(m[3]) if m[3] else max(2, d // 64 // 2 * 2)  # even: sliding layers have 2 KV heads
    ff = int(m[4]) if m[4] else 4 * d
    if d % heads:
        raise SystemExit(f"bench.shape_budget: shape {spec!r}: hidden {d} is not divisible by {heads} heads")
    cfg = small_config(vocab, d=d, layers=layers, heads=heads, ff=ff, mode="mask", context=context)
    try:  # the checkpoint parser's own checks (KV heads dividing heads, bounds)
        ModelConfig.from_dict(cfg.to_hf_dict(), source=spec)
    except ConfigError as e:
        raise SystemExit(f"bench.shape_budget: {e}") from e
    return cfg


def build(spec: str, shipped: LoadedModel) -> tuple[DiffusionGemma, dict[str, Any]]:
    if spec == "shipped":
        model, cfg = shipped.model, shipped.config
        info: dict[str, Any] = {"name": shipped.name, "weights": "trained", "path": display_path(shipped.path)}
    else:
        cfg = shape_config(spec, shipped.config.vocab_size)
        model = DiffusionGemma(cfg)
        model.init_weights(seed=0)
        model.eval()
        info = {"name": spec, "weights": "random (init_weights, seed 0)"}
    info.update({
        "hidden": cfg.hidden_size, "layers": cfg.num_hidden_layers, "heads": cfg.num_attention_heads,
        "head_dim": sorted(set(cfg.layer_head_dim)), "kv_heads": cfg.layer_kv_heads, "ff": cfg.intermediate_size,
        "layer_types": ["sliding" if t == SLIDING else "full" for t in cfg.layer_types],
        "sliding_window": cfg.sliding_window, "vocab": cfg.vocab_size, "mode": cfg.diffusion.mode,
        "max_context_tokens": cfg.diffusion.max_context_tokens,  # trained prefix (random: the GPU run's)
        "params": int(model.num_parameters(False)), "params_non_embedding": int(model.num_parameters(True)),
        "params_from_config": int(cfg.num_parameters()),
        "weights_mb_fp32": round(sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20, 1),
    })
    return model, info


# ---- timing ---------------------------------------------------------------------------------------------------
def timed(fn: Callable[[], Any], reps: int, warmup: int) -> dict[str, Any]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return {"median_ms": round(statistics.median(times), 3), "min_ms": round(min(times), 3), "n": len(times)}


def interleaved(fns: dict[str, Callable[[], Any]], reps: int, warmup: int) -> dict[str, dict[str, Any]]:
    """Like :func:`timed` for several functions, alternating them rep by rep (a busy machine hits all alike)."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append((time.perf_counter() - t0) * 1e3)
    return {k: {"median_ms": round(statistics.median(v), 3), "min_ms": round(min(v), 3), "n": len(v)}
            for k, v in times.items()}


def canvas_rows(cfg: ModelConfig, rows: int, head: torch.Tensor, free: int = FREE) -> torch.Tensor:
    """``rows`` canvases of ``free`` <mask> slots followed by the suffix head."""
    mask = cfg.diffusion.mask_token_id if cfg.diffusion.mask_token_id is not None else 0
    out = torch.full((rows, free + len(head)), mask, dtype=torch.long)
    out[:, free:] = head
    return out


def encode_chunks(model: DiffusionGemma, ids: torch.Tensor, capacity: int):
    cache = model.new_cache(capacity)
    n = ids.shape[1]
    for i in range(0, n, CHUNK):
        model.encode(ids[:, i : i + CHUNK], cache, logits="last" if i + CHUNK >= n else "none")
    return cache


def measure(model: DiffusionGemma, prefix: int, append: int, reps: int, cold_reps: int, warmup: int) -> dict[str, Any]:
    """One shape, one prefix length, the current thread count."""
    cfg = model.cfg
    g = torch.Generator().manual_seed(prefix)
    ids = torch.randint(6, cfg.vocab_size, (1, prefix), generator=g)
    extra = torch.randint(6, cfg.vocab_size, (1, append), generator=g)
    head = torch.randint(6, cfg.vocab_size, (HEAD,), generator=g)
    capacity = max(256, prefix + 128)
    out: dict[str, Any] = {}
    with torch.inference_mode():
        out["encode_cold"] = timed(lambda: encode_chunks(model, ids, capacity), cold_reps, min(warmup, 1))
        cache = encode_chunks(model, ids, capacity)

        def add() -> None:
            cache.truncate(prefix)
            model.encode(extra, cache, logits="last")

        out["encode_append"] = timed(add, reps, warmup)
        cache.truncate(prefix)
        for name, case in CASES.items():
            one = canvas_rows(cfg, 1, head, case.free)
            rows = canvas_rows(cfg, case.score_rows, head, case.score_free)

            def step(one: torch.Tensor = one, f: int = case.free) -> None:
                model.decode(one, cache, logits_slice=slice(0, f))

            def score(rows: torch.Tensor = rows, f: int = case.score_free) -> None:
                torch.log_softmax(model.decode(rows, cache, logits_slice=slice(0, f)).logits.float(), -1)

            out[name] = {"step": timed(step, reps, warmup), "score": timed(score, reps, warmup)}
        out["kv_cache_mb"] = round(sum(t[:, :, :prefix].numel() * t.element_size() for t in cache.k + cache.v) / 2**20, 2)
    return out


def sampler_cost(cfg: ModelConfig, n_free: int, steps: int, reps: int, warmup: int) -> dict[str, Any]:
    """The sampler's bookkeeping for ``steps`` steps of one canvas, the model replaced by fixed logits."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(1, n_free, cfg.vocab_size, generator=g) * 4
    mask = cfg.diffusion.mask_token_id if cfg.diffusion.mask_token_id is not None else 0
    scfg = SamplerConfig(mode=cfg.diffusion.mode, max_steps=steps, mask_id=mask, fill_id=cfg.diffusion.fill_token_id)
    canvas = canvas_rows(cfg, 1, torch.randint(6, cfg.vocab_size, (HEAD,), generator=g), n_free)
    free = torch.ones(1, n_free, dtype=torch.bool)
    bias = torch.zeros(n_free, cfg.vocab_size)  # the engine always passes one (filler correction, no empty span)
    ran = []

    def run() -> None:
        res = denoise(lambda c, sc: logits, canvas, free, scfg, cfg.vocab_size, generator=g, logit_bias=bias)
        ran.append(res.steps)

    with torch.inference_mode():
        r = timed(run, reps, warmup)
    return {**r, "steps": max(ran)}


# ---- int8 -----------------------------------------------------------------------------------------------------
def real_inputs(loaded: LoadedModel, prefix: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A prefix of real code (the latency fixtures, repeated to length) and the 16 tokens after it."""
    text = "\n\n".join((FIXTURES / n).read_text(encoding="utf-8") for n in ("inventory.py", "eventbus.js", "lru.go"))
    ids = loaded.tokenizer.encode(text)
    while len(ids) < prefix + HEAD + 1:
        ids = ids + ids
    pre = ([loaded.tokenizer.bos_id] if loaded.tokenizer.bos_id is not None else []) + ids[: prefix - 1]
    return torch.tensor([pre[:prefix]]), torch.tensor(ids[prefix - 1 : prefix - 1 + HEAD])


def int8_bench(models: dict[str, tuple[DiffusionGemma, dict[str, Any]]], shipped: LoadedModel, prefix: int,
               threads: list[int], reps: int, warmup: int, compile_: bool) -> dict[str, Any]:
    res: dict[str, Any] = {"prefix_tokens": prefix, "canvas": CANVAS, "free_slots": FREE}
    try:
        import torchao
        from torchao.quantization import (
            Int8DynamicActivationInt8WeightConfig,
            Int8WeightOnlyConfig,
            quantize_,
        )
    except Exception as e:  # noqa: BLE001 - what failed is the result
        return {**res, "available": False, "error": f"{type(e).__name__}: {e}"}
    res.update(available=True, torchao=torchao.__version__)
    configs = {"int8_weight_only": Int8WeightOnlyConfig, "int8_dynamic_act_int8_weight": Int8DynamicActivationInt8WeightConfig}
    res["shapes"] = {}
    for spec, (model, info) in models.items():
        name = info["name"]
        entry: dict[str, Any] = {"variants": {}}
        if spec == "shipped":
            ids, head = real_inputs(shipped, prefix)
            entry["inputs"] = "real code (bench/fixtures), trained weights"
        else:
            g = torch.Generator().manual_seed(1)
            ids = torch.randint(6, model.cfg.vocab_size, (1, prefix), generator=g)
            head = torch.randint(6, model.cfg.vocab_size, (HEAD,), generator=g)
            entry["inputs"] = "random ids, random weights (speed only; output change is numerical drift)"
        one = canvas_rows(model.cfg, 1, head)
        variants: dict[str, DiffusionGemma] = {"fp32": model}
        for vname, make in configs.items():
            q = copy.deepcopy(model)
            try:
                quantize_(q, make())
            except Exception as e:  # noqa: BLE001
                entry["variants"][vname] = {"error": f"quantize_: {type(e).__name__}: {e}"}
                continue
            variants[vname] = q
        caches, refs = {}, {}
        with torch.inference_mode():
            for vname, m in variants.items():
                try:
                    caches[vname] = encode_chunks(m, ids, prefix + 128)  # each variant's own (quantized) encoder
                    counter = _LinearCounter()
                    with counter:
                        refs[vname] = m.decode(one, caches[vname], logits_slice=slice(0, FREE)).logits[0].float()
                except Exception as e:  # noqa: BLE001
                    entry["variants"][vname] = {"error": f"forward: {type(e).__name__}: {e}"}
                    continue
                replaced = sorted(n for n, p in m.named_parameters() if type(p) is not torch.nn.Parameter
                                  and type(p) is not torch.Tensor)
                v = entry["variants"].setdefault(vname, {})
                v["weights_replaced"] = len(replaced)
                v["weight_types"] = sorted({type(p).__name__ for p in m.parameters()})
                v["linear_calls_per_step"] = counter.calls
                v["linear_calls_on_quantized_weights"] = counter.quantized
                if vname != "fp32":
                    ref, got = refs["fp32"], refs[vname]
                    v["max_abs_logit_diff"] = round(float((got - ref).abs().max()), 5)
                    v["mean_abs_logit_diff"] = round(float((got - ref).abs().mean()), 6)
                    v["argmax_agreement"] = round(float((got.argmax(-1) == ref.argmax(-1)).float().mean()), 4)
                    v["compute_changed"] = bool(v["max_abs_logit_diff"] > 0 and counter.quantized > 0)
            entry["timings"] = {}
            ok = {k: m for k, m in variants.items() if k in refs}
            for t in threads:
                torch.set_num_threads(t)
                fns = {k: (lambda m=m, c=caches[k], x=one: m.decode(x, c, logits_slice=slice(0, FREE))) for k, m in ok.items()}
                r = interleaved(fns, reps, warmup)
                for k in r:
                    if k != "fp32":
                        r[k]["speedup_vs_fp32"] = round(r["fp32"]["median_ms"] / r[k]["median_ms"], 3)
                entry["timings"][str(t)] = r
            if compile_ and "fp32" in ok:
                entry["compiled"] = compiled_bench(ok, caches, one, refs["fp32"], threads, reps, warmup)
        res["shapes"][name] = entry
    return res


COMPILED = ("fp32", "int8_weight_only")  # dynamic int8 runs float matmuls under compile on CPU (torchao's intmm)


def compiled_bench(variants: dict[str, DiffusionGemma], caches: dict[str, Any], canvas: torch.Tensor,
                   ref: torch.Tensor, threads: list[int], reps: int, warmup: int) -> dict[str, Any]:
    """torchao's CPU int8 path is meant for Inductor: the same decoder step under ``torch.compile`` (fixed
    shapes: this canvas over this cache), fp32 and int8 weight-only, against eager fp32. Not the product path
    (the daemon runs eager: a cache that grows every keystroke would recompile or need dynamic shapes)."""
    out: dict[str, Any] = {"variants": {}, "timings": {}}
    fns: dict[str, Callable[[], Any]] = {}
    with torch.inference_mode():
        for vname in COMPILED:
            if vname not in variants:
                continue
            m, c = variants[vname], caches[vname]
            try:
                fn = torch.compile(lambda x, m=m, c=c: m.decode(x, c, logits_slice=slice(0, FREE)).logits, dynamic=False)
                t0 = time.perf_counter()
                got = fn(canvas)[0].float()
                v = {"compile_s": round(time.perf_counter() - t0, 1),
                     "max_abs_logit_diff_vs_eager_fp32": round(float((got - ref).abs().max()), 5),
                     "argmax_agreement_vs_eager_fp32": round(float((got.argmax(-1) == ref.argmax(-1)).float().mean()), 4)}
            except Exception as e:  # noqa: BLE001 - what failed is the result
                out["variants"][vname] = {"error": f"torch.compile: {type(e).__name__}: {str(e)[:300]}"}
                continue
            out["variants"][vname] = v
            fns[f"{vname}_compiled"] = lambda fn=fn: fn(canvas)
        if not fns:
            return out
        m, c = variants["fp32"], caches["fp32"]
        fns = {"fp32_eager": lambda: m.decode(canvas, c, logits_slice=slice(0, FREE)), **fns}
        for t in threads:
            torch.set_num_threads(t)
            r = interleaved(fns, reps, warmup)
            for k in r:
                if k != "fp32_eager":
                    r[k]["speedup_vs_fp32_eager"] = round(r["fp32_eager"]["median_ms"] / r[k]["median_ms"], 3)
            out["timings"][str(t)] = r
    return out


class _LinearCounter(torch.overrides.TorchFunctionMode):
    """Counts F.linear calls, and those whose weight is not a plain tensor (a quantized subclass)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = self.quantized = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        if func is F.linear:
            self.calls += 1
            w = args[1] if len(args) > 1 else (kwargs or {}).get("weight")
            if w is not None and type(w) not in (torch.Tensor, torch.nn.Parameter):
                self.quantized += 1
        return func(*args, **(kwargs or {}))


# ---- report ---------------------------------------------------------------------------------------------------
def product_reference(path: Path) -> dict[str, Any] | None:
    """The shipped engine's own per-request parts (medians) from the latency bench's records, to set the
    estimates against: what the model side of a real request measured (quiet machine, default settings)."""
    try:
        records = json.loads(path.read_text(encoding="utf-8"))["latency"]["records"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    stats = [r["stats"] for r in records if isinstance(r, dict) and isinstance(r.get("stats"), dict)
             and "score_ms" in r["stats"]]
    if not stats:
        return None
    keys = ("encode_ms", "denoise_ms", "score_ms", "scored", "free_slots", "steps", "prefix_tokens")
    med = {k: statistics.median(x[k] for x in stats if isinstance(x.get(k), (int, float))) for k in keys}
    return {"source": display_path(path), "requests": len(stats), "medians": med,
            "note": "denoise_ms is the whole sampling part of LocalInfiller.infill (canvas and bias building, "
                    "steps, commit), not only the decoder passes"}


def keystroke(row: dict[str, Any], case: str, sampler: dict[str, Any], steps: int, overhead: float,
              budget: float) -> dict[str, Any]:
    def cost(stat: str, sampler: float) -> float:
        c = row[case]
        return row["encode_append"][stat] + steps * c["step"][stat] + sampler + c["score"][stat]

    model_ms = cost("median_ms", sampler["median_ms"])
    total = model_ms + overhead
    # from the fastest reps: on a busy machine closer to what a quiet one would give
    return {"model_ms": round(model_ms, 2), "with_overhead_ms": round(total, 2), "headroom_ms": round(budget - total, 2),
            "fits": total <= budget, "model_ms_from_min": round(cost("min_ms", sampler["min_ms"]), 2)}


def daemon_reference(path: Path) -> dict[str, Any] | None:
    """The shipped model's single-line keystroke latency through LSP from a ``bench.run`` result."""
    try:
        res = json.loads(path.read_text(encoding="utf-8"))
        lat = res["latency_single_line_ms"]
        ref = {"p50": float(lat["p50"]), "p95": float(lat["p95"]), "n": lat.get("n")}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {"source": display_path(path), "cpu": res.get("machine", {}).get("cpu"),
            "timestamp": res.get("timestamp"), "model": res.get("model", {}).get("name"), **ref}


def daemon_estimates(rows: list[dict[str, Any]], shipped_name: str, ref: dict[str, Any], budget: float,
                     budget_p95: float) -> None:
    """Add ``daemon_estimate`` to each row: the shipped model's LSP p50/p95 scaled by the row's ``typical``
    model cost over the shipped shape's at the same prefix and threads (an upper bound: see the docstring)."""
    base = {(r["prefix_tokens"], r["threads"]): r["keystroke"]["typical"]["model_ms"] for r in rows
            if r["shape"] == shipped_name}
    for r in rows:
        b = base.get((r["prefix_tokens"], r["threads"]))
        if not b:
            continue
        ratio = r["keystroke"]["typical"]["model_ms"] / b
        p50, p95 = ref["p50"] * ratio, ref["p95"] * ratio
        r["daemon_estimate"] = {"ratio_to_shipped": round(ratio, 3), "p50_ms": round(p50, 1), "p95_ms": round(p95, 1),
                                "fits": p50 <= budget and p95 <= budget_p95}


def recommend(rows: list[dict[str, Any]], shapes: list[dict[str, Any]], prefixes: list[int]) -> list[dict[str, Any]]:
    """Per shape and case: the better thread count at each prefix length, and the longest prefix that fits."""
    out = []
    for s in shapes:
        entry: dict[str, Any] = {"shape": s["name"], "params": s["params"]}
        for case in CASES:
            best: dict[str, Any] = {}
            for p in prefixes:
                mine = [r for r in rows if r["shape"] == s["name"] and r["prefix_tokens"] == p]
                if mine:
                    r = min(mine, key=lambda r: r["keystroke"][case]["model_ms"])
                    k = r["keystroke"][case]
                    best[str(p)] = {"threads": r["threads"], "model_ms": k["model_ms"], "fits": k["fits"]}
                    if "daemon_estimate" in r and case == "typical":
                        best[str(p)]["daemon_estimate"] = r["daemon_estimate"]
            fitting = [p for p in prefixes if best.get(str(p), {}).get("fits")]
            best["longest_fitting_prefix"] = max(fitting) if fitting else None
            entry[case] = best
        out.append(entry)
    return out


def table(res: dict[str, Any]) -> str:
    st = res["settings"]
    lines = [f"| shape | params | prefix | threads | cold encode | +{st['append_tokens']} tokens | "
             "canvas64: step | score 8x64 | model | (minima) | fits | typical: step | score 2x32 | model | (minima) | fits |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    params = {s["name"]: s["params"] for s in res["shapes"]}
    for r in res["rows"]:
        cells = [r["shape"], f"{params[r['shape']] / 1e6:.1f}M", r["prefix_tokens"], r["threads"],
                 f"{r['encode_cold']['median_ms']:.1f}", f"{r['encode_append']['median_ms']:.1f}"]
        for case in CASES:
            k = r["keystroke"][case]
            cells += [f"{r[case]['step']['median_ms']:.1f}", f"{r[case]['score']['median_ms']:.1f}",
                      f"{k['model_ms']:.1f}", f"{k['model_ms_from_min']:.1f}", "yes" if k["fits"] else "**no**"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    sampler = "; ".join(f"{t} thread(s): " + ", ".join(f"{c} {v['median_ms']:.1f}" for c, v in by.items())
                        for t, by in res["sampler"].items())
    est = [r for r in res["rows"] if "daemon_estimate" in r]
    if est:
        ref = res["daemon_reference"]
        lines += ["", f"| shape | params | prefix | threads | x shipped | LSP p50 est. | LSP p95 est. | fits "
                  f"(p50 <= {st['budget_ms']:g}, p95 <= {st['budget_p95_ms']:g}) |", "|---|---|---|---|---|---|---|---|"]
        for r in est:
            e = r["daemon_estimate"]
            lines.append(f"| {r['shape']} | {params[r['shape']] / 1e6:.1f}M | {r['prefix_tokens']} | {r['threads']} | "
                         f"{e['ratio_to_shipped']:.2f} | {e['p50_ms']:.1f} | {e['p95_ms']:.1f} | "
                         f"{'yes' if e['fits'] else '**no**'} |")
        lines.append(f"LSP estimates: the shipped model's single-line p50 {ref['p50']} / p95 {ref['p95']} ms "
                     f"({ref['source']}, {ref['cpu']}) times each shape's typical model cost over the shipped shape's.")
    lines.append("")
    lines.append(f"ms, medians. model = +{st['append_tokens']} tokens + {st['steps']} x step + sampler ({sampler}) + "
                 f"score; fits = model + {st['overhead_ms']} ms overhead within {st['budget_ms']} ms; (minima): the "
                 "same sum from the fastest reps. canvas64: 48 free + 16 head, scorer 8 rows of 64; typical: the median "
                 f"LSP request, {CASES['typical'].free} free + 16 head, scorer 2 rows of {CASES['typical'].score_free} + 16. "
                 f"Load average {res['machine']['loadavg_start']} -> {res['machine']['loadavg_end']}.")
    q = res.get("int8")
    if q and q.get("available"):
        lines += ["", f"| int8 (torchao {q['torchao']}) | variant | threads | step ms | vs fp32 | weights replaced | "
                  "int8 linear calls | max abs logit diff | argmax agreement |", "|---|---|---|---|---|---|---|---|---|"]
        for name, e in q["shapes"].items():
            for t, tv in e["timings"].items():
                for vname, tm in tv.items():
                    v = e["variants"].get(vname, {})
                    lines.append(_int8_row(name, vname, t, tm["median_ms"], tm.get("speedup_vs_fp32", 1.0),
                                           v.get("weights_replaced", ""),
                                           f"{v.get('linear_calls_on_quantized_weights', '')}/"
                                           f"{v.get('linear_calls_per_step', '')}",
                                           v.get("max_abs_logit_diff", "-"), v.get("argmax_agreement", "-")))
            for vname, v in e["variants"].items():
                if "error" in v:
                    lines.append(f"| {name} | {vname} | error: {v['error']} |")
            comp = e.get("compiled")
            if comp:
                for t, tv in comp["timings"].items():
                    for k, tm in tv.items():
                        v = comp["variants"].get(k.removesuffix("_compiled"), {}) if k.endswith("_compiled") else {}
                        lines.append(_int8_row(name, k, t, tm["median_ms"], tm.get("speedup_vs_fp32_eager", 1.0),
                                               f"compile {v.get('compile_s', '-')} s", "",
                                               v.get("max_abs_logit_diff_vs_eager_fp32", "-"),
                                               v.get("argmax_agreement_vs_eager_fp32", "-")))
                for k, v in comp["variants"].items():
                    if "error" in v:
                        lines.append(f"| {name} | {k}_compiled | error: {v['error']} |")
    elif q:
        lines += ["", f"int8: torchao unavailable ({q.get('error')})"]
    return "\n".join(lines)


def _int8_row(shape: str, variant: str, threads: Any, ms: float, speedup: float, replaced: Any, calls: Any,
              diff: Any, agree: Any) -> str:
    """One row of the int8 table (eager and compiled variants alike)."""
    return f"| {shape} | {variant} | {threads} | {ms:.1f} | {speedup:.2f}x | {replaced} | {calls} | {diff} | {agree} |"


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="the shipped model's directory (default: the embedded model)")
    ap.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), help="shipped, dDxL or dDxLhHfF, comma-separated")
    ap.add_argument("--prefixes", default="384,1024,2048", help="cached prefix lengths (tokens)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--append", type=int, default=8, help="tokens a keystroke appends to the cached prefix")
    ap.add_argument("--steps", type=int, default=3, help="denoising steps per request (the shipped engine: 3)")
    ap.add_argument("--overhead-ms", type=float, default=27.0, help="engine + protocol time outside the model")
    ap.add_argument("--budget-ms", type=float, default=100.0, help="the keystroke p50 goal")
    ap.add_argument("--budget-p95-ms", type=float, default=200.0, help="the keystroke p95 goal")
    ap.add_argument("--daemon", default=str(RESULTS / "latest.json"),
                    help="a bench.run result of the shipped model (LSP latency) to calibrate the estimates on; "
                         "'' to skip")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cold-reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--int8-shapes", default="shipped,d384x8", help="shapes for the int8 comparison ('' to skip)")
    ap.add_argument("--int8-prefix", type=int, default=384)
    ap.add_argument("--compile", choices=("yes", "no"), default=None,
                    help="also time the int8 comparison under torch.compile (default: yes, no with --quick)")
    ap.add_argument("--quick", action="store_true", help="few reps, no torch.compile (tests)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if a.quick:
        a.reps, a.cold_reps, a.warmup = 2, 1, 1
    compile_ = (a.compile or ("no" if a.quick else "yes")) == "yes"
    t_start = time.perf_counter()
    machine = machine_info()
    threads, prefixes = ints(a.threads), ints(a.prefixes)
    shipped = load_model(resolve_model(a.model))
    specs = [s.strip() for s in a.shapes.split(",") if s.strip()]
    int8_specs = [s.strip() for s in a.int8_shapes.split(",") if s.strip()]
    built = {s: build(s, shipped) for s in dict.fromkeys(specs + int8_specs)}
    torch_threads = torch.get_num_threads()
    rows: list[dict[str, Any]] = []
    sampler: dict[str, Any] = {}
    try:
        for t in threads:
            torch.set_num_threads(t)
            sampler[str(t)] = {c: sampler_cost(shipped.config, case.free, a.steps, a.reps, a.warmup)
                               for c, case in CASES.items()}
            for s in specs:
                model, info = built[s]
                for p in prefixes:
                    r = {"shape": info["name"], "prefix_tokens": p, "threads": t,
                         **measure(model, p, a.append, a.reps, a.cold_reps, a.warmup)}
                    r["keystroke"] = {c: keystroke(r, c, sampler[str(t)][c], a.steps, a.overhead_ms, a.budget_ms)
                                      for c in CASES}
                    rows.append(r)
                    print(f"shape_budget: {info['name']} prefix {p} threads {t}: keystroke model "
                          + ", ".join(f"{c} {k['model_ms']:.1f} ms" for c, k in r["keystroke"].items()), flush=True)
        int8 = None
        if int8_specs:
            int8 = int8_bench({s: built[s] for s in int8_specs}, shipped, a.int8_prefix, threads, a.reps, a.warmup,
                              compile_)
    finally:
        torch.set_num_threads(torch_threads)
    shapes = [built[s][1] for s in specs]
    ref = daemon_reference(Path(a.daemon)) if a.daemon else None
    if ref and "shipped" in specs:
        daemon_estimates(rows, built["shipped"][1]["name"], ref, a.budget_ms, a.budget_p95_ms)
    res: dict[str, Any] = {
        "bench": "shape_budget",
        "machine": {**machine, "loadavg_end": loadavg()},
        "settings": {
            "quick": a.quick, "reps": a.reps, "cold_reps": a.cold_reps, "warmup": a.warmup, "threads": threads,
            "prefixes": prefixes, "append_tokens": a.append, "steps": a.steps, "suffix_head": HEAD,
            "cases": {c: asdict(case) for c, case in CASES.items()}, "encode_chunk": CHUNK, "self_conditioning": False,
            "dtype": "float32", "int8_compiled": compile_, "overhead_ms": a.overhead_ms, "budget_ms": a.budget_ms,
            "budget_p95_ms": a.budget_p95_ms,
            "keystroke_formula": "encode_append + steps * step + sampler + score, per case (medians; "
                                 "model_ms_from_min: the same from minima)",
        },
        "shapes": shapes,
        "sampler": sampler,
        "rows": rows,
        "recommendation": recommend(rows, shapes, prefixes),
        "product_reference": product_reference(RESULTS / "details.json"),
        "daemon_reference": ref,
        "int8": int8,
        "wall_s": round(time.perf_counter() - t_start, 1),
    }
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    emit(res, a.out)
    print(table(res))
    return res


if __name__ == "__main__":
    main()
