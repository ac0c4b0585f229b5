"""Train a small DiffusionGemma-architecture infiller on CPU, resumably, and export an HF-layout checkpoint.

    python -m dgcomplete.train.train --corpus data/corpus --tokenizer data/tokenizer.json --run runs/base \
        --minutes 90 --mode uniform

Objective: diffusion loss on the free canvas slots (uniform renoising as in the reference, or absorbing mask),
self-conditioning on a detached first pass half of the time, plus a causal next-token loss on the encoder
side so every prefix token is a target and the same weights can decode autoregressively (our baseline).
The schedule is warmup-stable-decay on a wall-clock budget, so a run can be resumed and still end decayed.
State (weights + AdamW moments) is saved as safetensors + JSON: no pickle.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

from ..model import DiffusionGemma, ListCache, ModelConfig, Tokenizer, save_checkpoint
from ..model.config import FULL, SLIDING, DiffusionOptions, RopeSpec
from .data import Batch, ExampleSampler, load_corpus, split_dev

FILL_WEIGHT = 0.1  # loss weight of <fill> slots: real middle tokens carry the signal


def small_config(vocab: int, *, d: int = 192, layers: int = 6, heads: int = 4, ff: int = 512, moe: bool = False,
                 mode: str = "uniform", window: int = 256) -> ModelConfig:
    """Our embedded model's shape: the DiffusionGemma layer mix (sliding + full with value = raw key)."""
    types = [FULL if (i + 1) % 3 == 0 else SLIDING for i in range(layers)]
    types[-1] = FULL
    hd = d // heads
    return ModelConfig(
        vocab_size=vocab, hidden_size=d, intermediate_size=ff, num_hidden_layers=layers, num_attention_heads=heads,
        layer_types=types, layer_head_dim=[hd] * layers,
        layer_kv_heads=[2 if t == SLIDING else 1 for t in types],
        rope={SLIDING: RopeSpec(10_000.0), FULL: RopeSpec(1_000_000.0, 0.25, "proportional")},
        sliding_window=window, num_experts=4 if moe else 0, top_k_experts=2 if moe else 0,
        moe_intermediate_size=ff // 4 if moe else 0, max_position_embeddings=4096, canvas_length=64,
        diffusion=DiffusionOptions(mode=mode, fill_token_id=3, mask_token_id=4, sep_token_id=5, max_context_tokens=512,
                                   fill_loss_weight=FILL_WEIGHT),
    )


def generation_defaults(cfg: ModelConfig, steps: int = 4) -> dict:
    """generation_config.json of our exports: the step budget, and self-conditioning off in mask mode (on the
    corpus dev split it gave no better exact match there, and costs a vocabulary-wide matmul per step)."""
    return {"max_denoising_steps": steps, "self_conditioning": cfg.diffusion.mode != "mask"}


def corrupt(free: torch.Tensor, mode: str, vocab: int, mask_id: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    b, n = free.shape
    t = torch.rand(b, 1, generator=g).clamp_min(0.02)
    hit = torch.rand(b, n, generator=g) < t
    if mode == "uniform":
        noisy = torch.where(hit, torch.randint(0, vocab, (b, n), generator=g), free)
    else:
        hit[:, 0] |= ~hit.any(1)  # at least one masked slot per example
        noisy = torch.where(hit, torch.full_like(free, mask_id), free)
    return noisy, hit


def losses(model: DiffusionGemma, batch: Batch, mode: str, g: torch.Generator, *, fill_weight: float = FILL_WEIGHT,
           self_cond: bool = True) -> dict[str, torch.Tensor]:
    cfg = model.cfg
    n = batch.free
    batch = batch.to(model.embed_tokens.weight.device)
    cache = ListCache(cfg.num_hidden_layers)
    enc_logits = model.encode(batch.prefix, cache, logits="all")
    target = batch.prefix[:, 1:]
    lm_mask = batch.prefix_loss_mask[:, :-1] & (target != cfg.pad_token_id)
    lm = F.cross_entropy(enc_logits[:, :-1].reshape(-1, cfg.vocab_size), target.reshape(-1), reduction="none")
    lm_loss = (lm * lm_mask.reshape(-1)).sum() / lm_mask.sum().clamp_min(1)

    free = batch.canvas[:, :n]
    noisy, hit = corrupt(free.cpu(), mode, cfg.vocab_size, cfg.diffusion.mask_token_id or 4, g)
    noisy, hit = noisy.to(free.device), hit.to(free.device)
    canvas_in = torch.cat([noisy, batch.canvas[:, n:]], 1)
    sc = None
    if self_cond and torch.rand((), generator=g).item() < 0.5:
        with torch.no_grad():
            first = model.decode(canvas_in, cache, logits_slice=slice(0, n)).logits
            sc = first.softmax(-1)  # free slots; the clamped suffix head counts as one-hot (see decoder_input)
    logits = model.decode(canvas_in, cache, sc_probs=sc, logits_slice=slice(0, n)).logits
    ce = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), free.reshape(-1), reduction="none").view_as(free)
    weight = torch.where(batch.fill_mask, fill_weight, 1.0)
    if mode == "mask":
        weight = weight * hit
    dec_loss = (ce * weight).sum() / weight.sum().clamp_min(1)
    with torch.no_grad():
        real = ~batch.fill_mask & hit
        acc = ((logits.argmax(-1) == free) & real).sum() / real.sum().clamp_min(1)
    return {"dec": dec_loss, "lm": lm_loss, "acc_real": acc}


# ---- resumable state -----------------------------------------------------------------------------------------
def save_state(run: Path, model: DiffusionGemma, opt: torch.optim.Optimizer, meta: dict) -> None:
    run.mkdir(parents=True, exist_ok=True)
    names = {id(p): n for n, p in model.named_parameters()}
    tensors = {f"model.{k}": v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p)
            if st:
                tensors[f"opt.exp_avg.{names[id(p)]}"] = st["exp_avg"].cpu().contiguous()
                tensors[f"opt.exp_avg_sq.{names[id(p)]}"] = st["exp_avg_sq"].cpu().contiguous()
                meta.setdefault("opt_step", {})[names[id(p)]] = float(st["step"])
    tmp = run / "state.safetensors.tmp"
    save_file(tensors, str(tmp))
    tmp.replace(run / "state.safetensors")
    (run / "state.json").write_text(json.dumps(meta, indent=1))


def load_state(run: Path, model: DiffusionGemma, opt: torch.optim.Optimizer) -> dict:
    meta = json.loads((run / "state.json").read_text())
    tensors = load_file(str(run / "state.safetensors"))
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    params = dict(model.named_parameters())
    for name, step in meta.get("opt_step", {}).items():
        p = params[name]
        opt.state[p] = {
            "step": torch.tensor(step),
            "exp_avg": tensors[f"opt.exp_avg.{name}"].to(p.device),
            "exp_avg_sq": tensors[f"opt.exp_avg_sq.{name}"].to(p.device),
        }
    return meta


def init_weights_from(model: DiffusionGemma, checkpoint: Path) -> None:
    """Continue from an exported checkpoint (fp16 or fp32): every tensor must match this run's shape."""
    from ..model import load_model

    src = load_model(checkpoint, dtype=torch.float32).model.state_dict()
    dst = model.state_dict()
    bad = sorted(k for k in dst if k not in src or src[k].shape != dst[k].shape)
    if bad:
        raise SystemExit(f"{checkpoint}: not this run's shape ({len(bad)} tensors differ, e.g. {bad[0]})")
    model.load_state_dict({k: src[k].to(dst[k].device) for k in dst})


def lr_at(step: int, elapsed: float, budget: float, peak: float, warmup: int, decay_frac: float) -> float:
    """Warmup-stable-decay on wall-clock time: linear warmup, flat, linear decay to 10% in the last part."""
    if step < warmup:
        return peak * (step + 1) / warmup
    start = budget * (1 - decay_frac)
    if elapsed <= start:
        return peak
    frac = min(1.0, (elapsed - start) / max(1e-9, budget - start))
    return peak * (1 - 0.9 * frac)


@torch.no_grad()
def evaluate(model: DiffusionGemma, batches: list[Batch], mode: str) -> dict[str, float]:
    model.eval()
    g = torch.Generator().manual_seed(1234)
    out = {"dec": 0.0, "lm": 0.0, "acc_real": 0.0}
    for b in batches:
        r = losses(model, b, mode, g, self_cond=False)
        for k in out:
            out[k] += float(r[k]) / len(batches)
    model.train()
    return out


def next_batch(sampler: ExampleSampler, rng: random.Random, size: int) -> Batch:
    """One training batch: 80 % short spans (16 or 32 free slots), 20 % block bodies (64 slots, half the rows).

    Few distinct shapes keep torch.compile from recompiling; the product asks for 16/32/64-slot canvases.
    """
    long = rng.random() < 0.2
    n_free = 64 if long else rng.choice([16, 32])
    return sampler.batch(size // 2 if long else size, n_free, long=long)


class _Examples(torch.utils.data.IterableDataset):
    def __init__(self, texts: list, tok: Tokenizer, prefix: int, batch: int, seed: int) -> None:
        self.texts, self.tok, self.prefix, self.batch, self.seed = texts, tok, prefix, batch, seed

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        seed = self.seed * 1009 + (info.id if info else 0)
        sampler = ExampleSampler(self.texts, self.tok, prefix_tokens=self.prefix, seed=seed)
        rng = random.Random(seed)
        while True:
            yield next_batch(sampler, rng, self.batch)


def batch_stream(texts: list, tok: Tokenizer, args: argparse.Namespace, step: int):
    """Batches cut by ``args.workers`` processes (each its own sampler seed), ready before the model asks."""
    ds = _Examples(texts, tok, args.prefix, args.batch, args.seed * 1000 + step)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=args.workers, prefetch_factor=8,
                                         persistent_workers=True)
    return iter(loader)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--tokenizer", default="data/tokenizer.json")
    ap.add_argument("--run", default="runs/base")
    ap.add_argument("--mode", choices=["uniform", "mask"], default="uniform")
    ap.add_argument("--minutes", type=float, default=60.0, help="total wall-clock budget (across resumes)")
    ap.add_argument("--decay-frac", type=float, default=0.2)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--prefix", type=int, default=192)
    ap.add_argument("--d", type=int, default=192)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=512)
    ap.add_argument("--moe", action="store_true")
    ap.add_argument("--lm-weight", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--save-every", type=float, default=5.0, help="minutes between state saves")
    ap.add_argument("--eval-every", type=int, default=200, help="steps between dev evaluations")
    ap.add_argument("--export", default=None, help="export an HF-layout checkpoint here at the end")
    ap.add_argument("--export-fp16", action="store_true", help="export fp16 weights (what the package ships)")
    ap.add_argument("--shard-mb", type=float, default=None, help="split the exported weights into files this big")
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compile", action="store_true", help="torch.compile the loss (about +30%% tokens/s on CPU)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (a lent GPU machine: see dgcomplete.train.bundle)")
    ap.add_argument("--workers", type=int, default=0, help="processes cutting examples (a GPU outruns one)")
    ap.add_argument("--init-from", default=None,
                    help="start from this checkpoint's weights (e.g. the shipped model; same shape), fresh optimizer")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)

    torch.set_num_threads(args.threads)
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    tok_path = Path(args.tokenizer)
    from tokenizers import Tokenizer as HFTok

    vocab = HFTok.from_file(str(tok_path)).get_vocab_size()
    cfg = small_config(vocab, d=args.d, layers=args.layers, heads=args.heads, ff=args.ff, moe=args.moe, mode=args.mode)
    tok = Tokenizer.from_file(tok_path, cfg)
    device = torch.device(args.device)
    model = DiffusionGemma(cfg)
    model.init_weights(seed=args.seed)
    model.to(device)
    model.train()
    decay, no_decay = [], []
    for n, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in n else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98), eps=1e-8)
    meta = {"step": 0, "elapsed": 0.0, "tokens": 0, "args": vars(args), "history": []}
    if args.init_from and not (run / "state.json").exists():
        init_weights_from(model, Path(args.init_from))
        print(f"weights from {args.init_from}", flush=True)
    if (run / "state.json").exists():
        meta = load_state(run, model, opt)
        meta["args"] = vars(args)
        print(f"resumed at step {meta['step']} ({meta['elapsed'] / 60:.1f} min)", flush=True)

    texts = load_corpus(args.corpus)
    train_texts, dev_texts = split_dev(texts)
    print(f"corpus: {len(train_texts)} train files, {len(dev_texts)} dev files; "
          f"non-embedding params {model.num_parameters() / 1e6:.2f}M", flush=True)
    sampler = ExampleSampler(train_texts, tok, prefix_tokens=args.prefix, seed=args.seed * 1000 + meta["step"])
    dev_sampler = ExampleSampler(dev_texts, tok, prefix_tokens=args.prefix, seed=777)
    dev = [dev_sampler.batch(16, 32) for _ in range(4)] + [dev_sampler.batch(8, 64, long=True)]
    g = torch.Generator().manual_seed(args.seed * 7919 + meta["step"])
    rng = random.Random(meta["step"])
    budget = args.minutes * 60
    last_save = time.time()
    t0 = time.time() - meta["elapsed"]
    window_tokens, window_t = 0, time.time()
    loss_fn = torch.compile(losses) if args.compile else losses
    batches = batch_stream(train_texts, tok, args, meta["step"]) if args.workers else None
    # bf16 autocast on an accelerator (fp32 master weights and optimizer); CPUs here are faster in fp32
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()
    while True:
        elapsed = time.time() - t0
        if elapsed >= budget or (args.max_steps and meta["step"] >= args.max_steps):
            break
        batch = next(batches) if batches is not None else next_batch(sampler, rng, args.batch)
        lr = lr_at(meta["step"], elapsed, budget, args.lr, args.warmup, args.decay_frac)
        for group in opt.param_groups:
            group["lr"] = lr
        with amp:
            r = loss_fn(model, batch, args.mode, g)
            loss = r["dec"] + args.lm_weight * r["lm"]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        meta["step"] += 1
        ntok = batch.prefix.numel() + batch.canvas.numel()
        meta["tokens"] += ntok
        window_tokens += ntok
        if meta["step"] % 20 == 0:
            tps = window_tokens / (time.time() - window_t)
            window_tokens, window_t = 0, time.time()
            print(f"step {meta['step']} t={elapsed / 60:.1f}m lr={lr:.2e} dec={r['dec']:.3f} lm={r['lm']:.3f} "
                  f"acc={r['acc_real']:.3f} gn={gn:.2f} tok/s={tps:.0f}", flush=True)
            meta["history"].append({"step": meta["step"], "min": elapsed / 60, "dec": float(r["dec"].detach()),
                                    "lm": float(r["lm"].detach()), "acc": float(r["acc_real"]), "tok_s": tps,
                                    "tokens": meta["tokens"]})
        if meta["step"] % args.eval_every == 0:
            ev = evaluate(model, dev, args.mode)
            meta.setdefault("dev", []).append({"step": meta["step"], "min": elapsed / 60, **ev})
            print(f"DEV step {meta['step']}: dec={ev['dec']:.3f} lm={ev['lm']:.3f} acc_real={ev['acc_real']:.3f}",
                  flush=True)
        if time.time() - last_save > args.save_every * 60:
            meta["elapsed"] = time.time() - t0
            save_state(run, model, opt, meta)
            last_save = time.time()
    meta["elapsed"] = time.time() - t0
    save_state(run, model, opt, meta)
    ev = evaluate(model, dev, args.mode)
    meta.setdefault("dev", []).append({"step": meta["step"], "min": meta["elapsed"] / 60, **ev})
    (run / "state.json").write_text(json.dumps(meta, indent=1))
    print(f"done: step {meta['step']}, {meta['tokens'] / 1e6:.2f}M tokens, dev {ev}", flush=True)
    if args.export:
        export(model, tok_path, Path(args.export), meta, dtype=torch.float16 if args.export_fp16 else torch.float32,
               shard_mb=args.shard_mb)


def training_info(meta: dict) -> dict:
    """What an exported model's training.json records: totals, the settings, dev evaluations and the curve
    (every 5th logged point), which bench.training_curve plots."""
    a = meta["args"]
    keep = ("mode", "d", "layers", "heads", "ff", "moe", "batch", "prefix", "lr", "lm_weight", "minutes", "threads",
            "device", "workers")
    return {"step": meta.get("step"), "tokens": meta.get("tokens"), "elapsed": meta.get("elapsed"),
            "args": {k: a[k] for k in keep if k in a}, "dev": meta.get("dev", []),
            "curve": meta.get("history", [])[::5]}


def export(model: DiffusionGemma, tok_path: Path, out: Path, meta: dict, *, dtype: torch.dtype = torch.float32,
           shard_mb: float | None = None) -> None:
    model = model.float().cpu()
    model.eval()
    save_checkpoint(model, out, tokenizer_json=tok_path, generation=generation_defaults(model.cfg), dtype=dtype,
                    max_shard_bytes=int(shard_mb * 2**20) if shard_mb else None)
    (out / "training.json").write_text(json.dumps(training_info(meta), indent=1) + "\n")
    print(f"exported to {out}", flush=True)


if __name__ == "__main__":
    main()
