"""Train a small DiffusionGemma-architecture infiller (CPU or a lent GPU), resumably; export HF-layout checkpoints.

    python -m dgcomplete.train.train --corpus data/corpus --tokenizer data/tokenizer.json --run runs/base \
        --minutes 90 --mode mask

Objective: diffusion loss on the free canvas slots (uniform renoising as in the reference, or absorbing mask),
optionally self-conditioning on a detached first pass for a share of the rows, plus a causal next-token loss
on the encoder side so every prefix token is a target and the same weights can decode autoregressively (our
baseline). Each step is :func:`dgcomplete.train.fast.step_losses`: the host (worker processes) ships token
ids only; masking rates (t ~ U(--t-min, 1)), masks and the length objective (``--length-target``) are drawn on
the training device; every step has the same shapes (``data.GROUPS``) so ``--compile`` compiles once (and falls
back to eager if compiling fails). Optimizer: AdamW, or Muon on the hidden matrices + AdamW on the rest
(``--optimizer muon``, :mod:`dgcomplete.train.muon`). The schedule is warmup-stable-decay on a wall-clock
budget, so a run can be resumed and still end decayed. ``--corpus`` may be a folder of ``shard-*.jsonl.xz``
shards; with ``--watch`` shards that arrive there while training are picked up (``data.ShardFolder``).
``--snapshots DIR --export-every MIN`` writes fp16 checkpoints as it goes (``DIR/latest`` names the newest), so
a run cut short still has weights; ``--metrics FILE`` appends tokens/s, step time and device memory (JSON lines).
State (weights + optimizer moments) is saved as safetensors + JSON: no pickle.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

from ..model import DiffusionGemma, ListCache, ModelConfig, Tokenizer, save_checkpoint
from ..model.config import FULL, SLIDING, DiffusionOptions, RopeSpec
from .data import Batch, ExampleSampler, ShardFolder, StepBatch, is_shard_dir, load_corpus, split_dev
from .fast import step_losses
from .muon import Hybrid, build_optimizer

FILL_WEIGHT = 0.1  # loss weight of <fill> slots: real middle tokens carry the signal


def small_config(vocab: int, *, d: int = 192, layers: int = 6, heads: int = 4, ff: int = 512, moe: bool = False,
                 mode: str = "uniform", window: int = 256, context: int = 512,
                 fill_weight: float = FILL_WEIGHT) -> ModelConfig:
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
        diffusion=DiffusionOptions(mode=mode, fill_token_id=3, mask_token_id=4, sep_token_id=5,
                                   max_context_tokens=max(512, context), fill_loss_weight=fill_weight),
    )


def generation_defaults(cfg: ModelConfig, steps: int = 4, length_target: str = "fill") -> dict:
    """generation_config.json of our exports: the step budget, and self-conditioning off in mask mode (on the
    corpus dev split it gave no better exact match there, and costs a vocabulary-wide matmul per step).
    A model trained with ``--length-target end`` is meant for the sampler's frontier-stop rule."""
    gen = {"max_denoising_steps": steps, "self_conditioning": cfg.diffusion.mode != "mask"}
    if length_target == "end":
        gen["frontier_stop"] = True
    return gen


def run_config(vocab: int, a: dict) -> ModelConfig:
    """The model config of a run from its recorded arguments (older runs lack the newer keys)."""
    end = a.get("length_target", "fill") == "end"
    return small_config(vocab, d=a["d"], layers=a["layers"], heads=a["heads"], ff=a["ff"], moe=a.get("moe", False),
                        mode=a["mode"], context=a.get("prefix", 512), fill_weight=1.0 if end else FILL_WEIGHT)


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
def save_state(run: Path, model: DiffusionGemma, opt: torch.optim.Optimizer | Hybrid, meta: dict) -> None:
    """Weights and every optimizer moment (AdamW exp_avg/exp_avg_sq, Muon momentum_buffer) by parameter name."""
    run.mkdir(parents=True, exist_ok=True)
    names = {id(p): n for n, p in model.named_parameters()}
    tensors = {f"model.{k}": v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()}
    meta["opt_step"] = {}
    for p, st in opt.state.items():
        for key, val in st.items():
            if key == "step":
                meta["opt_step"][names[id(p)]] = float(val)
            elif torch.is_tensor(val):
                tensors[f"opt.{key}.{names[id(p)]}"] = val.detach().cpu().contiguous()
    tmp = run / "state.safetensors.tmp"
    save_file(tensors, str(tmp))
    tmp.replace(run / "state.safetensors")
    (run / "state.json").write_text(json.dumps(meta, indent=1))


def load_state(run: Path, model: DiffusionGemma, opt: torch.optim.Optimizer | Hybrid) -> dict:
    meta = json.loads((run / "state.json").read_text())
    tensors = load_file(str(run / "state.safetensors"))
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    params = dict(model.named_parameters())
    optimizers = opt.optimizers if isinstance(opt, Hybrid) else [opt]
    owner = {id(p): o for o in optimizers for g in o.param_groups for p in g["params"]}
    for name, p in params.items():
        o = owner.get(id(p))
        if o is None:
            continue
        if isinstance(o, torch.optim.AdamW):
            if f"opt.exp_avg.{name}" in tensors and name in meta.get("opt_step", {}):
                o.state[p] = {"step": torch.tensor(meta["opt_step"][name]),
                              "exp_avg": tensors[f"opt.exp_avg.{name}"].to(p.device),
                              "exp_avg_sq": tensors[f"opt.exp_avg_sq.{name}"].to(p.device)}
        elif f"opt.momentum_buffer.{name}" in tensors:
            o.state[p] = {"momentum_buffer": tensors[f"opt.momentum_buffer.{name}"].to(p.device)}
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


class Deadline:
    """``--deadline-file``: a Unix time written while the run goes (``run.sh feed|finish END_IN=...``), read when
    the file changes. The run's wall-clock budget becomes the time from its start to the deadline when that is
    shorter; an unreadable or later deadline changes nothing."""

    def __init__(self, path: str | None) -> None:
        self.path, self.seen = (Path(path) if path else None), None

    def budget(self, budget: float, t0: float) -> float:
        if self.path is None:
            return budget
        try:
            st = self.path.stat()
            key = (st.st_mtime_ns, st.st_size)
            if key == self.seen:
                return budget
            self.seen = key
            at = float(self.path.read_text().strip())
        except (OSError, ValueError):
            return budget
        new = min(budget, max(0.0, at - t0))
        if new < budget:
            print(f"deadline: the run now ends {new / 60:.2f} min after its start (was {budget / 60:.2f})", flush=True)
        return new


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
def evaluate(model: DiffusionGemma, batches: list[StepBatch], objective: dict) -> dict[str, float]:
    """Dev losses on fixed batches with fixed noise (eager, no self-conditioning), averaged over batches."""
    model.eval()
    g = torch.Generator(device=model.device).manual_seed(1234)
    out = {"dec": 0.0, "lm": 0.0, "acc_real": 0.0}
    for b in batches:
        r = step_losses(model, b.to(model.device), **{**objective, "self_cond": 0.0}, generator=g)
        for k in out:
            out[k] += float(r[k]) / len(batches)
    model.train()
    return out


def parse_lang_weights(spec: str) -> dict[str, float]:
    """``python=1.5,java=4`` -> per-file sampling weights (finite, >= 0), or a clear error."""
    out: dict[str, float] = {}
    for item in filter(None, (x.strip() for x in spec.split(","))):
        lang, sep, w = item.partition("=")
        try:
            v = float(w)
        except ValueError:
            v = float("nan")
        if not sep or not lang.strip() or not 0 <= v < float("inf"):
            raise SystemExit(f"--lang-weight: expected LANG=WEIGHT (a number >= 0), got {item!r}")
        out[lang.strip()] = v
    return out


def next_batch(sampler: ExampleSampler, rng: random.Random, size: int) -> Batch:
    """One batch of the older per-batch mix: 80 % short spans (16 or 32 free slots), 20 % block bodies (64
    slots, half the rows). The trainer now cuts :class:`StepBatch` es (every canvas size in every step)."""
    long = rng.random() < 0.2
    n_free = 64 if long else rng.choice([16, 32])
    return sampler.batch(size // 2 if long else size, n_free, long=long)


class StepStream:
    """Step batches cut in this process; with a shard folder, new shards are taken every ``poll_every`` steps."""

    def __init__(self, texts: list, tok: Tokenizer, prefix: int, rows: int, seed: int,
                 shards: ShardFolder | None = None, poll_every: int = 20,
                 lang_weight: dict[str, float] | None = None) -> None:
        self.sampler = ExampleSampler(texts, tok, prefix_tokens=prefix, seed=seed, lang_weight=lang_weight)
        self.rows, self.shards, self.poll_every, self.n = rows, shards, poll_every, 0

    def __iter__(self):
        return self

    def __next__(self) -> StepBatch:
        if self.shards is not None and (self.n % self.poll_every == 0 or not self.sampler.texts):
            while True:
                new = self.shards.poll()
                if new:
                    self.sampler.add(new)
                if self.sampler.texts:
                    break
                time.sleep(1)  # this slice of the corpus is still empty: wait for a shard
        self.n += 1
        return self.sampler.step_batch(self.rows)


class _StepExamples(torch.utils.data.IterableDataset):
    """What each example-cutting worker runs: its slice of the corpus (of every shard in a shard folder, polled
    for new ones), its own seed."""

    def __init__(self, texts: list | None, folder: str | None, tok: Tokenizer, prefix: int, rows: int, seed: int,
                 watch: bool, poll_every: int = 20, lang_weight: dict[str, float] | None = None) -> None:
        self.texts, self.folder, self.tok, self.prefix, self.rows = texts, folder, tok, prefix, rows
        self.seed, self.watch, self.poll_every, self.lang_weight = seed, watch, poll_every, lang_weight

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        wid, n = (info.id, info.num_workers) if info else (0, 1)
        torch.set_num_threads(1)
        seed = self.seed * 1009 + wid
        shards = None
        if self.folder is not None:
            shards = ShardFolder(self.folder, part=(wid, n), log=True)
            texts = shards.poll()
        else:
            texts = self.texts[wid::n]
        stream = StepStream(texts, self.tok, self.prefix, self.rows, seed, shards if self.watch else None,
                            self.poll_every, self.lang_weight)
        stream.n = 1  # polled above
        yield from stream


def step_stream(texts: list | None, tok: Tokenizer, args: argparse.Namespace, step: int,
                lang_weight: dict[str, float] | None = None):
    """Step batches cut by ``args.workers`` processes (each its own slice and seed), ready before the model asks."""
    folder = args.corpus if texts is None else None
    ds = _StepExamples(texts, folder, tok, args.prefix, args.batch, args.seed * 1000 + step, args.watch,
                       lang_weight=lang_weight)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=args.workers, prefetch_factor=4,
                                         persistent_workers=True, pin_memory=args.device.startswith("cuda"))
    return iter(loader)


def gpu_memory(device: torch.device) -> dict[str, float]:
    if device.type != "cuda":
        return {}
    return {"mem_alloc_gib": round(torch.cuda.max_memory_allocated(device) / 2**30, 2),
            "mem_reserved_gib": round(torch.cuda.max_memory_reserved(device) / 2**30, 2)}


def _at_least_one(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--tokenizer", default="data/tokenizer.json")
    ap.add_argument("--run", default="runs/base")
    ap.add_argument("--mode", choices=["uniform", "mask"], default="uniform")
    ap.add_argument("--minutes", type=float, default=60.0,
                    help="total wall-clock budget (across resumes); 0 with --max-steps: a schedule on steps")
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
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the step (one graph: fixed shapes); falls back to eager if compiling fails")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (a lent GPU machine: see dgcomplete.train.bundle)")
    ap.add_argument("--workers", type=int, default=0, help="processes cutting examples (a GPU outruns one)")
    ap.add_argument("--init-from", default=None,
                    help="start from this checkpoint's weights (e.g. the shipped model; same shape), fresh optimizer")
    # the third-generation recipe (issue #20)
    ap.add_argument("--optimizer", choices=["adamw", "muon"], default="adamw",
                    help="muon: Muon on hidden matrices, AdamW (--lr) on embedding, norms, scalars")
    ap.add_argument("--muon-lr", type=float, default=0.02)
    ap.add_argument("--accum", type=int, default=1, help="batches (of --batch rows) per optimizer step")
    ap.add_argument("--t-min", type=float, default=0.1, help="masking-rate floor: t ~ U(t_min, 1) per row")
    ap.add_argument("--length-target", choices=["fill", "end"], default="fill",
                    help="fill: every <fill> slot a target (weight 0.1); end: <fill> scored at the true end, "
                         "slots after it follow the end's mask (for the frontier-stop sampler); see train.fast")
    ap.add_argument("--after-end-weight", type=float, default=0.1, help="--length-target end: weight after the end")
    ap.add_argument("--draws", type=_at_least_one, default=1,
                    help="masking draws per example: each canvas noised this many times over one prefix pass")
    ap.add_argument("--self-cond", type=float, default=0.5,
                    help="share of rows trained with self-conditioning from a detached first pass")
    ap.add_argument("--deadline-file", default=None,
                    help="a file that may come to hold a Unix time: the run then ends by it (the budget only "
                         "shrinks; the decay is rescheduled), so a lent GPU's time plan can follow its lease")
    ap.add_argument("--watch", action="store_true",
                    help="--corpus is a shard folder: pick up shard-*.jsonl.xz files that arrive while training")
    ap.add_argument("--snapshots", default=None, help="write fp16 checkpoints here as training goes (DIR/latest)")
    ap.add_argument("--export-every", type=float, default=0.0, help="minutes between snapshots (0: at the end only)")
    ap.add_argument("--metrics", default=None, help="append one JSON line per log interval here")
    ap.add_argument("--log-every", type=int, default=20, help="steps between log lines")
    ap.add_argument("--dev-corpus", default=None,
                    help="take the dev split from this corpus instead (one that --corpus leaves out entirely)")
    ap.add_argument("--lang-weight", default=None, metavar="LANG=W,...",
                    help="per-file sampling weight of languages in the training mix (default: data.LANG_WEIGHT)")
    ap.add_argument("--dev-rows", type=int, default=32, help="rows per dev batch (4 batches)")
    return ap


def objective_of(args: argparse.Namespace) -> dict:
    return {"mode": args.mode, "t_min": args.t_min, "length_target": args.length_target,
            "fill_weight": FILL_WEIGHT, "after_end_weight": args.after_end_weight}


def make_step_fn(model: DiffusionGemma, args: argparse.Namespace):
    """The training step's loss function, compiled when asked (fixed shapes: one graph)."""
    obj = {**objective_of(args), "self_cond": args.self_cond, "draws": args.draws}

    def fn(sb: StepBatch) -> dict[str, torch.Tensor]:
        return step_losses(model, sb, **obj)

    if args.compile:
        return torch.compile(fn, dynamic=False), fn
    return fn, fn


def write_snapshot(model: DiffusionGemma, tok_path: Path, root: Path, meta: dict, args: argparse.Namespace) -> Path:
    """An fp16 (or fp32) checkpoint of the current weights under root/step-N, then root/latest names it;
    older snapshots are removed. The live model is not touched (a CPU copy is exported)."""
    name = f"step-{meta['step']:07d}"
    tmp = root / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    cpu = DiffusionGemma(model.cfg)
    cpu.load_state_dict({k: v.detach().float().cpu() for k, v in model.state_dict().items()})
    export(cpu, tok_path, tmp, meta, dtype=torch.float16 if args.export_fp16 else torch.float32,
           shard_mb=args.shard_mb, length_target=args.length_target, quiet=True)
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    (root / ".latest.tmp").write_text(name + "\n")
    (root / ".latest.tmp").replace(root / "latest")
    for old in root.glob("step-*"):
        if old.name != name:
            shutil.rmtree(old, ignore_errors=True)
    return final


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    lang_weights = parse_lang_weights(args.lang_weight) if args.lang_weight else {}  # a bad spec fails first

    torch.set_num_threads(args.threads)
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    tok_path = Path(args.tokenizer)
    from tokenizers import Tokenizer as HFTok

    vocab = HFTok.from_file(str(tok_path)).get_vocab_size()
    cfg = run_config(vocab, vars(args))
    tok = Tokenizer.from_file(tok_path, cfg)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    model = DiffusionGemma(cfg)
    model.init_weights(seed=args.seed)
    model.to(device)
    model.train()
    opt = build_optimizer(model, args.optimizer, lr=args.lr, muon_lr=args.muon_lr)
    meta = {"step": 0, "elapsed": 0.0, "tokens": 0, "args": vars(args), "history": []}
    if args.init_from and not (run / "state.json").exists():
        init_weights_from(model, Path(args.init_from))
        print(f"weights from {args.init_from}", flush=True)
    if (run / "state.json").exists():
        meta = load_state(run, model, opt)
        meta["args"] = vars(args)
        print(f"resumed at step {meta['step']} ({meta['elapsed'] / 60:.1f} min)", flush=True)

    shards = ShardFolder(args.corpus, log=True) if (args.watch or is_shard_dir(args.corpus)) else None
    if shards is not None:
        deadline = time.time() + 600
        while not shards.pending() and time.time() < deadline:  # the first shard may still be on its way
            time.sleep(1)
        dev_texts = shards.dev()
        train_texts = shards.poll() if not args.workers else None
    else:
        train_texts, dev_texts = split_dev(load_corpus(args.corpus))
    if args.dev_corpus:  # e.g. a continuation on fresh data, measured on the dev batches its model was made on
        dev_texts = split_dev(load_corpus(args.dev_corpus))[1]
    n_train = "shards" if train_texts is None else f"{len(train_texts)} train files"
    print(f"corpus: {n_train}, {len(dev_texts)} dev files; parameters {model.num_parameters(False) / 1e6:.2f}M "
          f"({model.num_parameters() / 1e6:.2f}M non-embedding); optimizer {args.optimizer}", flush=True)
    dev_sampler = ExampleSampler(dev_texts, tok, prefix_tokens=args.prefix, seed=777)
    dev = [dev_sampler.step_batch(args.dev_rows) for _ in range(4)]
    objective = objective_of(args)
    # the language weights shape the training mix only: the dev batches above keep the default weights
    if args.workers:
        batches = step_stream(train_texts, tok, args, meta["step"], lang_weights)
    else:
        batches = StepStream(train_texts or [], tok, args.prefix, args.batch, args.seed * 1000 + meta["step"],
                             shards if args.watch else None, lang_weight=lang_weights)
    torch.manual_seed(args.seed * 7919 + meta["step"])
    if meta["step"] == 0 and args.init_from:  # the starting point on the same dev batches: what the run gains
        ev = evaluate(model, dev, objective)
        meta.setdefault("dev", []).append({"step": 0, "min": 0.0, **ev})
        print(f"DEV step 0: dec={ev['dec']:.3f} lm={ev['lm']:.3f} acc_real={ev['acc_real']:.3f}", flush=True)
    budget = args.minutes * 60
    by_steps = args.max_steps > 0 and args.minutes <= 0  # equal-token comparisons: the schedule runs on steps
    last_save = last_snap = time.time()
    t0 = time.time() - meta["elapsed"]
    step_fn, eager_fn = make_step_fn(model, args)
    compiled = args.compile
    split = 1  # each batch is run in this many pieces (doubled when a step runs out of device memory)
    # bf16 autocast on an accelerator (fp32 master weights and optimizer); CPUs here are faster in fp32
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()
    metrics = open(args.metrics, "a") if args.metrics else None  # noqa: SIM115 - appended to all run long

    def new_window() -> dict:
        """Counters of one logging window: tok_s counts each example once, noised_tok_s every masking draw."""
        return {"tokens": 0, "real": 0, "noised": 0, "t": time.time(), "wait": 0.0, "steps": 0}

    win = new_window()
    first_step_s = None
    pad = cfg.pad_token_id

    def run_step(pieces: list[StepBatch]) -> dict[str, torch.Tensor]:
        opt.zero_grad(set_to_none=True)
        total = None
        for sb in pieces:
            with amp:
                r = step_fn(sb)
                loss = (r["dec"] + args.lm_weight * r["lm"]) / len(pieces)
            loss.backward()
            total = {k: v.detach() / len(pieces) + (total[k] if total else 0) for k, v in r.items()}
        return total

    deadline = Deadline(args.deadline_file)
    while True:
        budget = deadline.budget(budget, t0)
        elapsed = time.time() - t0
        if (elapsed >= budget and not by_steps) or (args.max_steps and meta["step"] >= args.max_steps):
            break
        t_wait = time.time()
        host = [next(batches) for _ in range(args.accum)]
        win["wait"] += time.time() - t_wait
        t_step = time.time()
        if by_steps:
            lr_factor = lr_at(meta["step"], meta["step"], args.max_steps, 1.0, args.warmup, args.decay_frac)
        else:
            lr_factor = lr_at(meta["step"], elapsed, budget, 1.0, args.warmup, args.decay_frac)
        for group in opt.param_groups:
            group["lr"] = group.get("peak", args.lr) * lr_factor
        pieces = [p.to(device) for sb in host for p in sb.split(split)]
        while True:
            try:
                r = run_step(pieces)
                break
            except torch.OutOfMemoryError:
                if split >= 8:
                    raise
                split *= 2
                opt.zero_grad(set_to_none=True)
                torch.cuda.empty_cache()
                print(f"out of device memory: each batch now runs in {split} pieces", flush=True)
                pieces = [p.to(device) for sb in host for p in sb.split(split)]
            except Exception as e:  # noqa: BLE001 - any compiler failure: train on, uncompiled
                if not compiled:
                    raise
                print(f"torch.compile failed ({type(e).__name__}: {str(e)[:300]}); training eager", flush=True)
                compiled, step_fn = False, eager_fn
                torch.compiler.reset()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        meta["step"] += 1
        ntok = sum(sb.tokens for sb in host)
        meta["tokens"] += ntok
        meta["real_tokens"] = meta.get("real_tokens", 0) + sum(sb.real_tokens(pad) for sb in host)
        win["tokens"] += ntok
        win["real"] += sum(sb.real_tokens(pad) for sb in host)
        win["noised"] += sum(sb.noised_tokens(args.draws) for sb in host)
        win["steps"] += 1
        if first_step_s is None:
            if device.type == "cuda":
                torch.cuda.synchronize()
            first_step_s = time.time() - t_step
            meta["first_step_s"] = round(first_step_s, 1)
            print(f"first step {first_step_s:.1f}s (compile {'on' if compiled else 'off'})", flush=True)
            win = new_window()
        if win["steps"] and meta["step"] % args.log_every == 0:
            if device.type == "cuda":
                torch.cuda.synchronize()
            dt = time.time() - win["t"]
            rec = {"step": meta["step"], "min": round(elapsed / 60, 3), "lr_factor": round(lr_factor, 4),
                   "dec": round(float(r["dec"]), 4), "lm": round(float(r["lm"]), 4),
                   "acc": round(float(r["acc_real"]), 4), "gn": round(float(gn), 3),
                   "tok_s": round(win["tokens"] / dt), "real_tok_s": round(win["real"] / dt),
                   "noised_tok_s": round(win["noised"] / dt), "draws": args.draws,
                   "step_ms": round(1e3 * dt / win["steps"], 1), "data_wait_ms": round(1e3 * win["wait"] / win["steps"], 1),
                   "tokens": meta["tokens"], "compiled": compiled, "split": split, **gpu_memory(device)}
            print(f"step {rec['step']} t={elapsed / 60:.1f}m lr={lr_factor:.3f}x dec={rec['dec']:.3f} "
                  f"lm={rec['lm']:.3f} acc={rec['acc']:.3f} gn={rec['gn']:.2f} tok/s={rec['tok_s']} "
                  f"step={rec['step_ms']}ms wait={rec['data_wait_ms']}ms", flush=True)
            meta["history"].append(rec)
            if metrics:
                metrics.write(json.dumps(rec) + "\n")
                metrics.flush()
            win = new_window()
        if meta["step"] % args.eval_every == 0:
            ev = evaluate(model, dev, objective)
            meta.setdefault("dev", []).append({"step": meta["step"], "min": elapsed / 60, **ev})
            print(f"DEV step {meta['step']}: dec={ev['dec']:.3f} lm={ev['lm']:.3f} acc_real={ev['acc_real']:.3f}",
                  flush=True)
        if args.snapshots and args.export_every and time.time() - last_snap > args.export_every * 60:
            meta["elapsed"] = time.time() - t0
            write_snapshot(model, tok_path, Path(args.snapshots), meta, args)
            print(f"snapshot at step {meta['step']}", flush=True)
            last_snap = time.time()
        if time.time() - last_save > args.save_every * 60:
            meta["elapsed"] = time.time() - t0
            save_state(run, model, opt, meta)
            last_save = time.time()
    meta["elapsed"] = time.time() - t0
    save_state(run, model, opt, meta)
    ev = evaluate(model, dev, objective)
    meta.setdefault("dev", []).append({"step": meta["step"], "min": meta["elapsed"] / 60, **ev})
    (run / "state.json").write_text(json.dumps(meta, indent=1))
    print(f"done: step {meta['step']}, {meta['tokens'] / 1e6:.2f}M tokens, dev {ev}", flush=True)
    if metrics:
        metrics.write(json.dumps({"done": True, "step": meta["step"], "tokens": meta["tokens"], "dev": ev}) + "\n")
        metrics.close()
    if args.snapshots:
        write_snapshot(model, tok_path, Path(args.snapshots), meta, args)
    if args.export:
        export(model, tok_path, Path(args.export), meta, dtype=torch.float16 if args.export_fp16 else torch.float32,
               shard_mb=args.shard_mb, length_target=args.length_target)


def training_info(meta: dict) -> dict:
    """What an exported model's training.json records: totals, the settings, dev evaluations and the curve
    (every 5th logged point), which bench.training_curve plots."""
    a = meta["args"]
    keep = ("mode", "d", "layers", "heads", "ff", "moe", "batch", "accum", "prefix", "lr", "lm_weight", "minutes",
            "threads", "device", "workers", "optimizer", "muon_lr", "t_min", "length_target", "after_end_weight",
            "self_cond", "compile")
    return {"step": meta.get("step"), "tokens": meta.get("tokens"), "real_tokens": meta.get("real_tokens"),
            "elapsed": meta.get("elapsed"), "first_step_s": meta.get("first_step_s"),
            "args": {k: a[k] for k in keep if k in a}, "dev": meta.get("dev", []),
            "curve": meta.get("history", [])[::5]}


def export(model: DiffusionGemma, tok_path: Path, out: Path, meta: dict, *, dtype: torch.dtype = torch.float32,
           shard_mb: float | None = None, length_target: str = "fill", steps: int = 4, quiet: bool = False) -> None:
    """An HF-layout checkpoint of ``model`` (what the loader reads); the objective's length target is recorded
    in config.json, since the sampler and the scorer read it (frontier stop, the end-scored canvas)."""
    model = model.float().cpu()
    model.eval()
    save_checkpoint(model, out, tokenizer_json=tok_path, generation=generation_defaults(model.cfg, steps, length_target),
                    dtype=dtype, max_shard_bytes=int(shard_mb * 2**20) if shard_mb else None)
    if length_target != "fill":  # the loader ignores keys it does not know; the inference side reads this one
        conf = json.loads((out / "config.json").read_text())
        conf["dgcomplete"]["length_target"] = length_target
        (out / "config.json").write_text(json.dumps(conf, indent=2) + "\n")
    (out / "training.json").write_text(json.dumps(training_info(meta), indent=1) + "\n")
    if not quiet:
        print(f"exported to {out}", flush=True)


if __name__ == "__main__":
    main()
