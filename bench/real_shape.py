"""Our network at the real checkpoint's shape (google/diffusiongemma-26B-A4B-it), timed against the reference.

    python -m bench.real_shape --device cuda                 # the real shape, bf16, on a GPU (issue #19)
    python -m bench.real_shape --scale cpu                   # a reduced shape that runs on a laptop CPU

The weights cannot be downloaded here, but the shape is what costs: the config is built from the real values
(30 layers, hidden 2816, 16 heads, sliding head_dim 256 x 8 KV heads / full head_dim 512 x 2, 128 experts top-8,
vocab 262144, canvas 256) and filled with random weights directly on the device. Measured: prefill of a 2k
prompt, one decoder step (canvas 256, with self-conditioning) over 2k and 8k cached tokens, one autoregressive
step, a fixed-step denoise of one canvas; ms per step (CUDA events on GPU), peak memory, and tokens/s *if* N
tokens commit per step (random weights cannot say how many do; DiffusionGemma's report says ~20). The
reference (transformers' DiffusionGemma) is timed on the same device sharing the very same weight tensors
(no second copy), and its logits are compared with ours.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from dgcomplete.model import DiffusionGemma, ModelConfig
from dgcomplete.model.loader import hf_state_dict
from dgcomplete.model.network import Experts


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    full_head_dim: int
    full_kv_heads: int
    window: int
    intermediate: int
    experts: int
    top_k: int
    moe_intermediate: int
    vocab: int
    canvas: int
    prompt: int
    contexts: tuple[int, ...]
    denoise_steps: int


SHAPES: dict[str, Shape] = {
    # google/diffusiongemma-26B-A4B-it (shared docs: diffusiongemma.md; tests/test_checkpoint_validation.py)
    "full": Shape(30, 2816, 16, 8, 256, 512, 2, 1024, 2112, 128, 8, 704, 262144, 256, 2048, (2048, 8192), 48),
    # same proportions and code paths (5:1 sliding/full, MoE top-8, window < context), CPU-sized
    "cpu": Shape(6, 512, 4, 2, 128, 256, 1, 256, 384, 32, 8, 128, 16384, 64, 512, (512, 1024), 4),
    # for the test: seconds on one core
    "tiny": Shape(2, 64, 4, 2, 16, 32, 1, 16, 96, 8, 2, 32, 512, 16, 40, (40, 80), 2),
}
COMMITTED_PER_STEP = (1, 8, 20)
VISION = dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
              num_key_value_heads=2, head_dim=8)  # the reference insists on a vision tower; text use ignores it


def config_json(s: Shape) -> dict[str, Any]:
    """config.json as the real checkpoint spells it (older global_* keys), so the loader's parser is exercised."""
    text = {
        "model_type": "diffusion_gemma_text", "vocab_size": s.vocab, "hidden_size": s.hidden,
        "intermediate_size": s.intermediate, "num_hidden_layers": s.layers, "num_attention_heads": s.heads,
        "num_key_value_heads": s.kv_heads, "head_dim": s.head_dim, "global_head_dim": s.full_head_dim,
        "num_global_key_value_heads": s.full_kv_heads, "sliding_window": s.window, "num_experts": s.experts,
        "top_k_experts": s.top_k, "moe_intermediate_size": s.moe_intermediate, "final_logit_softcapping": 30.0,
        "rms_norm_eps": 1e-6, "max_position_embeddings": 131072, "pad_token_id": 0, "eos_token_id": [1],
        "bos_token_id": 2, "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True,
    }
    return {"model_type": "diffusion_gemma", "canvas_length": s.canvas, "tie_word_embeddings": True,
            "text_config": text}


# ---- building -----------------------------------------------------------------------------------------------
@torch.no_grad()
def build_ours(cfg: ModelConfig, device: torch.device, dtype: torch.dtype, seed: int = 0) -> DiffusionGemma:
    """Random weights allocated once, on the device (a CPU-side init of 25 B parameters would take minutes)."""
    with torch.device("meta"):
        model = DiffusionGemma(cfg)
    model = model.to(dtype).to_empty(device=device)  # cast on meta first: no fp32 copy (101 GB at full size)
    torch.manual_seed(seed)
    for name, p in model.named_parameters():
        if name.endswith("norm.weight") or name.endswith("router.scale") or name.endswith("per_expert_scale"):
            p.fill_(1.0)
        else:
            p.normal_(0.0, 0.02)
    with torch.no_grad():
        model.embed_tokens.weight.mul_(5)  # sharper logits, so entropies and acceptance are not all alike
    for block in model.layers:
        block.layer_scalar.fill_(1.0)
        block.encoder_layer_scalar.fill_(1.0)
    return model.eval()


def build_reference(ours: DiffusionGemma, device: torch.device) -> nn.Module:
    """transformers' DiffusionGemma on the same device, its parameters *being* our tensors (no second copy)."""
    from transformers import DiffusionGemmaConfig, DiffusionGemmaForBlockDiffusion

    hf = ours.cfg.to_hf_dict()
    rcfg = DiffusionGemmaConfig(text_config=hf["text_config"], vision_config=VISION, canvas_length=ours.cfg.canvas_length)
    with torch.device("meta"):
        ref = DiffusionGemmaForBlockDiffusion(rcfg)
    src = hf_state_dict(ours)
    embed = src["model.decoder.embed_tokens.weight"]
    rotary: list[tuple[nn.Module, str, nn.Module]] = []
    for mname, mod in ref.named_modules():
        for leaf, child in mod.named_children():
            if type(child).__name__.endswith("RotaryEmbedding") and "vision" not in f"{mname}.{leaf}":
                rotary.append((mod, leaf, child))
        for store in (mod._parameters, mod._buffers):
            for leaf, t in list(store.items()):
                if t is None or not t.is_meta:
                    continue
                full = f"{mname}.{leaf}" if mname else leaf
                tensor = src.get(full)
                if tensor is None and full.startswith("model.encoder.language_model."):
                    tensor = src.get("model.decoder." + full.removeprefix("model.encoder.language_model."))
                if tensor is None and full == "lm_head.weight":
                    tensor = embed
                if tensor is None and leaf == "embed_scale":
                    tensor = torch.tensor(ours.cfg.hidden_size**0.5, device=device)
                if tensor is None:  # vision tower (unused), rotary tables (rebuilt below)
                    tensor = torch.zeros(t.shape, dtype=embed.dtype if t.is_floating_point() else t.dtype,
                                         device=device)
                store[leaf] = nn.Parameter(tensor, requires_grad=False) if store is mod._parameters else tensor
    for parent, leaf, child in rotary:
        setattr(parent, leaf, type(child)(child.config, device=device))
    left = [n for n, t in list(ref.named_parameters()) + list(ref.named_buffers()) if t.is_meta]
    assert not left, f"reference tensors left on meta: {left[:3]}"
    return ref.eval()


# ---- timing -------------------------------------------------------------------------------------------------
def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], Any], device: torch.device, reps: int, warmup: int = 1) -> dict[str, float]:
    """Median/min ms of ``fn``; CUDA events on a GPU (the host returns before the kernels finish)."""
    for _ in range(warmup):
        fn()
    sync(device)
    times = []
    for _ in range(reps):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return {"median_ms": round(statistics.median(times), 3), "min_ms": round(min(times), 3), "reps": reps}


def throughput(step_ms: float) -> dict[str, float]:
    return {str(n): round(n * 1000.0 / step_ms, 1) for n in COMMITTED_PER_STEP}


def peak_memory_gb(device: torch.device) -> float:
    if device.type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / 2**30, 3)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3)  # max RSS (KiB on Linux)


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def fixed_denoise(model: DiffusionGemma, cache: Any, canvas_len: int, steps: int, g: torch.Generator,
                  entropy_bound: float = 0.1) -> torch.Tensor:
    """The reference sampler's per-step work (temperature, sample, entropy-bound acceptance, renoise), no early stop."""
    v, dev = model.cfg.vocab_size, model.device
    canvas = torch.randint(0, v, (1, canvas_len), generator=g, device=dev)
    probs = None
    for cur in range(steps, 0, -1):
        logits = model.decode(canvas, cache, sc_probs=probs).logits
        temp = 0.4 + (0.8 - 0.4) * cur / steps
        logp = torch.log_softmax(logits / temp, dim=-1)
        probs = logp.exp()
        entropy = -(probs * logp).sum(-1)  # [1, C]
        gumbel = -torch.log(-torch.log(torch.rand(logp.shape, generator=g, device=dev).clamp_min(1e-20)))
        sample = (logp + gumbel).argmax(-1)
        ent_sorted, order = entropy.sort(dim=-1)
        budget = ent_sorted.cumsum(-1) - ent_sorted  # sum(H_1..H_k) - max(H_1..H_k), sorted ascending
        accept_sorted = budget <= entropy_bound
        accept = torch.zeros_like(accept_sorted).scatter(1, order, accept_sorted)
        noise = torch.randint(0, v, canvas.shape, generator=g, device=dev)
        canvas = torch.where(accept, sample, noise)
    return logits.argmax(-1)


def fill_cache(model: DiffusionGemma, cache: Any, ids: torch.Tensor, chunk: int) -> None:
    for i in range(0, ids.shape[1], chunk):
        model.encode(ids[:, i : i + chunk], cache)


def run_ours(model: DiffusionGemma, s: Shape, device: torch.device, reps: int, ids: torch.Tensor,
             canvas: torch.Tensor, sc_logits: torch.Tensor, loop_dispatch: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cache = model.new_cache(max(s.contexts) + s.canvas + 2 * reps + 16)  # no doubling copy inside a timing
    reset_peak(device)
    t0 = time.perf_counter()
    fill_cache(model, cache, ids[:, : s.prompt], s.prompt)
    sync(device)
    out["prefill_first_call_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    prompt_ms = timed(lambda: (cache.truncate(0), model.encode(ids[:, : s.prompt], cache)), device, max(1, reps // 3))
    out["prefill_ms"] = prompt_ms
    steps, loop_steps = [], []
    for ctx in s.contexts:
        cache.truncate(0)
        fill_cache(model, cache, ids[:, :ctx], s.prompt)
        r = timed(lambda: model.decode(canvas, cache, sc_logits=sc_logits), device, reps)
        r_first = timed(lambda: model.decode(canvas, cache), device, max(1, reps // 3))
        steps.append({"context": ctx, **r, "first_step_no_self_conditioning_ms": r_first["median_ms"],
                      "tokens_per_s_at_committed_per_step": throughput(r["median_ms"])})
        if loop_dispatch:  # the old MoE dispatch (Python loop over experts, host syncs), for before/after
            Experts.dispatch = "loop"
            try:
                lr = timed(lambda: model.decode(canvas, cache, sc_logits=sc_logits), device, max(1, reps // 2))
            finally:
                Experts.dispatch = "auto"
            with torch.inference_mode():
                auto = model.decode(canvas, cache, sc_logits=sc_logits).logits
                Experts.dispatch = "loop"
                try:
                    loop = model.decode(canvas, cache, sc_logits=sc_logits).logits
                finally:
                    Experts.dispatch = "auto"
            loop_steps.append({"context": ctx, **lr, "logits_max_abs_diff_vs_auto": float((auto - loop).abs().max())})
    out["decoder_step"] = steps
    if loop_steps:
        out["decoder_step_moe_loop_dispatch"] = loop_steps
    cache.truncate(0)
    fill_cache(model, cache, ids[:, : s.prompt], s.prompt)
    nxt = ids[:, s.prompt : s.prompt + 1]
    ar = timed(lambda: (model.encode(nxt, cache, logits="last"), cache.truncate(s.prompt)), device, reps)
    out["ar_step"] = {"context": s.prompt, **ar, "tokens_per_s": round(1000.0 / ar["median_ms"], 1)}
    g = torch.Generator(device=device).manual_seed(1)
    dn = timed(lambda: fixed_denoise(model, cache, s.canvas, s.denoise_steps, g), device, max(1, reps // 5))
    out["denoise"] = {"context": s.prompt, "steps": s.denoise_steps, "canvas": s.canvas, **dn,
                      "ms_per_step": round(dn["median_ms"] / s.denoise_steps, 3),
                      "tokens_per_s_at_committed_per_step": throughput(dn["median_ms"] / s.denoise_steps)}
    out["peak_memory_gb"] = peak_memory_gb(device)
    return out


def run_reference(ref: nn.Module, s: Shape, device: torch.device, reps: int, ids: torch.Tensor,
                  canvas: torch.Tensor, sc_logits: torch.Tensor) -> dict[str, Any]:
    from transformers.cache_utils import DynamicCache

    def new_cache(ctx: int) -> Any:
        c = DynamicCache(config=ref.config.get_text_config(decoder=True))
        for i in range(0, ctx, s.prompt):
            ref.model.encoder(input_ids=ids[:, i : min(ctx, i + s.prompt)], past_key_values=c)
        return c

    out: dict[str, Any] = {}
    reset_peak(device)
    out["prefill_ms"] = timed(lambda: new_cache(s.prompt), device, max(1, reps // 3))
    steps = []
    for ctx in s.contexts:
        cache = new_cache(ctx)
        r = timed(lambda c=cache: ref(past_key_values=c, decoder_input_ids=canvas, self_conditioning_logits=sc_logits),
                  device, reps)
        steps.append({"context": ctx, **r, "tokens_per_s_at_committed_per_step": throughput(r["median_ms"])})
        del cache
    out["decoder_step"] = steps
    cache = new_cache(s.prompt)
    nxt = ids[:, s.prompt : s.prompt + 1]

    def ar_step() -> torch.Tensor:  # the cache grows by one token per call (reps tokens in all)
        h = ref.model.encoder(input_ids=nxt, past_key_values=cache).last_hidden_state
        return torch.tanh(ref.lm_head(h[:, -1]).float() / 30.0) * 30.0

    ar = timed(ar_step, device, reps)
    out["ar_step"] = {"context": s.prompt, **ar, "tokens_per_s": round(1000.0 / ar["median_ms"], 1)}
    out["peak_memory_gb"] = peak_memory_gb(device)
    return out


@torch.inference_mode()
def parity(ours: DiffusionGemma, ref: nn.Module, s: Shape, ids: torch.Tensor, canvas: torch.Tensor,
           sc_logits: torch.Tensor) -> dict[str, float]:
    """Max |ours - reference| on the decoder step (with self-conditioning) and the AR head, at the prompt."""
    from transformers.cache_utils import DynamicCache

    prompt = ids[:, : s.prompt]
    rc = DynamicCache(config=ref.config.get_text_config(decoder=True))
    ref.model.encoder(input_ids=prompt, past_key_values=rc)
    want = ref(past_key_values=rc, decoder_input_ids=canvas, self_conditioning_logits=sc_logits).logits
    cache = ours.new_cache(s.prompt + 8)
    ar_got = ours.encode(prompt, cache, logits="all")
    got = ours.decode(canvas, cache, sc_logits=sc_logits).logits
    h = ref.model.encoder(input_ids=prompt, past_key_values=DynamicCache(
        config=ref.config.get_text_config(decoder=True))).last_hidden_state
    ar_want = torch.tanh(ref.lm_head(h).float() / 30.0) * 30.0
    return {"decoder_logits_max_abs_diff": float((got - want).abs().max()),
            "ar_logits_max_abs_diff": float((ar_got - ar_want).abs().max()),
            "logit_scale_max_abs": float(want.abs().max())}


# ---- report -------------------------------------------------------------------------------------------------
def device_info(device: torch.device) -> dict[str, Any]:
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        return {"type": "cuda", "name": p.name, "capability": f"{p.major}.{p.minor}",
                "memory_gb": round(p.total_memory / 2**30, 1), "cuda": torch.version.cuda}
    cpu = platform.processor()
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                   if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"type": "cpu", "name": cpu, "threads": torch.get_num_threads()}


def versions() -> dict[str, str | None]:
    try:
        import transformers

        tf: str | None = transformers.__version__
    except ImportError:
        tf = None
    try:
        commit: str | None = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                            cwd=Path(__file__).parent, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"torch": torch.__version__, "transformers": tf, "python": platform.python_version(),
            "dgcomplete_commit": commit, "grouped_mm": str(hasattr(F, "grouped_mm"))}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--scale", choices=sorted(SHAPES), default=None, help="default: full on GPU, cpu on CPU")
    ap.add_argument("--dtype", choices=("bfloat16", "float32"), default=None, help="default: bf16 on GPU, fp32 on CPU")
    ap.add_argument("--layers", type=int, help="override the preset's layer count")
    ap.add_argument("--experts", type=int, help="override the preset's expert count")
    ap.add_argument("--prompt", type=int, help="override the preset's prompt length")
    ap.add_argument("--denoise-steps", type=int)
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions per measurement (default 10 GPU, 3 CPU)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--no-reference", action="store_true", help="skip transformers' implementation")
    ap.add_argument("--no-loop-dispatch", action="store_true", help="skip timing the old MoE loop dispatch")
    ap.add_argument("--out", default=None,
                    help="default: bench/results/real_shape.json on GPU, bench/results/real_shape_cpu.json on CPU")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    s = SHAPES[args.scale or ("full" if device.type == "cuda" else "cpu")]
    if args.layers:
        s = replace(s, layers=args.layers)
    if args.experts:
        s = replace(s, experts=args.experts, top_k=min(s.top_k, args.experts))
    if args.prompt:
        s = replace(s, prompt=args.prompt, contexts=(args.prompt, 4 * args.prompt))
    if args.denoise_steps:
        s = replace(s, denoise_steps=args.denoise_steps)
    dtype = getattr(torch, args.dtype) if args.dtype else (torch.bfloat16 if device.type == "cuda" else torch.float32)
    reps = args.reps or (10 if device.type == "cuda" else 3)
    out_path = Path(args.out or ("bench/results/real_shape.json" if device.type == "cuda"
                                 else "bench/results/real_shape_cpu.json"))
    cfg = ModelConfig.from_dict(config_json(s))

    t0 = time.perf_counter()
    model = build_ours(cfg, device, dtype)
    sync(device)
    build_s = time.perf_counter() - t0
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(6, s.vocab, (1, max(s.contexts) + 1), generator=g).to(device)
    canvas = torch.randint(0, s.vocab, (1, s.canvas), generator=g).to(device)
    sc_logits = (torch.randn(1, s.canvas, s.vocab, generator=g) * 3).to(device)
    active = cfg.num_parameters() - cfg.num_hidden_layers * 3 * cfg.moe_intermediate_size * cfg.hidden_size * (
        cfg.num_experts - cfg.top_k_experts)
    report: dict[str, Any] = {
        "device": device_info(device), "versions": versions(),
        "settings": {"scale": args.scale or ("full" if device.type == "cuda" else "cpu"), "dtype": str(dtype)[6:],
                     "reps": reps, "canvas": s.canvas, "prompt_tokens": s.prompt, "contexts": list(s.contexts),
                     "denoise_steps": s.denoise_steps, "committed_per_step": list(COMMITTED_PER_STEP),
                     "moe_dispatch": "sorted+grouped_mm" if model.layers[0].experts._grouped_ok(
                         torch.empty(1, cfg.hidden_size, dtype=dtype, device=device)) else "sorted+slice loop"},
        "shape": {**{k: v for k, v in s.__dict__.items() if k not in ("contexts", "prompt", "denoise_steps")},
                  "parameters": cfg.num_parameters(), "active_parameters_per_token": active,
                  "weights_gb": round(cfg.num_parameters() * torch.empty((), dtype=dtype).element_size() / 2**30, 2)},
        "ours": {"build_s": round(build_s, 2)},
    }
    with torch.inference_mode():
        report["ours"].update(run_ours(model, s, device, reps, ids, canvas, sc_logits, not args.no_loop_dispatch))
    if args.no_reference:
        report["reference"] = {"skipped": "--no-reference"}
    else:
        try:
            ref = build_reference(model, device)
        except ImportError as e:
            report["reference"] = {"skipped": f"transformers not importable ({e})"}
        else:
            with torch.inference_mode():
                report["reference"] = run_reference(ref, s, device, reps, ids, canvas, sc_logits)
            report["parity"] = parity(model, ref, s, ids, canvas, sc_logits)
            report["ours_over_reference_decoder_step"] = {
                str(a["context"]): round(a["median_ms"] / b["median_ms"], 3)
                for a, b in zip(report["ours"]["decoder_step"], report["reference"]["decoder_step"], strict=True)}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, indent=1) + "\n")
    print_summary(report, out_path)
    return report


def print_summary(r: dict[str, Any], path: Path) -> None:
    sh, ours = r["shape"], r["ours"]
    print(f"{r['device']['name']} · {r['settings']['dtype']} · {sh['parameters'] / 1e9:.2f} B params "
          f"({sh['weights_gb']} GiB) · MoE dispatch {r['settings']['moe_dispatch']} · wrote {path}")
    ref = r.get("reference", {})
    print("| measurement | ours ms | reference ms | ours tok/s at 1 / 8 / 20 per step |")
    print("|---|---|---|---|")
    for i, st in enumerate(ours["decoder_step"]):
        rs = ref.get("decoder_step", [{}] * (i + 1))[i].get("median_ms", "-")
        tps = " / ".join(str(v) for v in st["tokens_per_s_at_committed_per_step"].values())
        print(f"| decoder step, canvas {sh['canvas']}, {st['context']} cached | {st['median_ms']} | {rs} | {tps} |")
    for st in ours.get("decoder_step_moe_loop_dispatch", []):
        print(f"| same, old MoE loop dispatch, {st['context']} cached | {st['median_ms']} | | |")
    print(f"| AR step, {ours['ar_step']['context']} cached | {ours['ar_step']['median_ms']} | "
          f"{ref.get('ar_step', {}).get('median_ms', '-')} | {ours['ar_step']['tokens_per_s']} (1/step) |")
    dn = ours["denoise"]
    print(f"| denoise {dn['steps']} steps (per step) | {dn['ms_per_step']} | | "
          f"{' / '.join(str(v) for v in dn['tokens_per_s_at_committed_per_step'].values())} |")
    print(f"| prefill {r['settings']['prompt_tokens']} tokens | {ours['prefill_ms']['median_ms']} | "
          f"{ref.get('prefill_ms', {}).get('median_ms', '-')} | |")
    print(f"peak memory: ours {ours['peak_memory_gb']} GiB, reference {ref.get('peak_memory_gb', '-')} GiB"
          + (f" · parity {r['parity']}" if "parity" in r else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
    sys.exit(0)
