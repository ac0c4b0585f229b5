"""The training step for a lent accelerator (and the CPU alike): token ids in, losses out, all on the device.

The host only cuts examples (:meth:`ExampleSampler.step_batch`): token ids of the prefixes and of the clean
canvases. Everything random happens here, on the model's device: masking rates, masks, noise. One step has
fixed shapes (``data.GROUPS``), so ``torch.compile`` compiles it once.

* Encoder: ``[<bos>]`` + prefix, causal, next-token loss on every real prefix token. Full-attention layers run
  ``is_causal`` attention (the flash kernel on a GPU), sliding layers a banded mask; the same math as
  :meth:`DiffusionGemma.encode` on an empty cache (tests check it).
* Decoder: per canvas group, :meth:`DiffusionGemma.decode` (the inference code itself) over the free slots +
  the clean suffix head, reading the encoder's keys/values of that group's rows.
* Masking rate t ~ U(t_min, 1) per row (a floor: near-clean canvases teach little; the Parameter Golf
  masked-diffusion entry found a floor of 0.1 its largest single gain).
* ``length_target``:

  - ``"fill"`` (the shipped model's objective): every ``<fill>`` slot is a target, weighted ``fill_weight``;
    each slot is masked independently. The model learns the marginal P(span shorter than slot i), and
    inference adds log(1/fill_weight) to the ``<fill>`` logit.
  - ``"end"``: the span's length is scored where it is decided. The first slot after the middle (the true
    end) has target ``<fill>`` at full weight, like a real token; the slots after it are masked exactly when
    the end is masked and are otherwise clean ``<fill>`` (the state the sampler's frontier-stop rule produces:
    a span ends only at its leftmost open slot, and everything after it becomes filler at once), and they are
    scored only lightly (``after_end_weight``) so that the model calls them filler rather than inventing
    tokens there. No logit correction is needed at inference (the end's weight is 1).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from ..model import DiffusionGemma, ListCache
from ..model.config import SLIDING
from .data import StepBatch


def _attention(block, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool) -> Tensor:
    attn = block.self_attn
    if attn.n_kv != attn.n_heads:  # plain heads: every SDPA backend (flash included) takes them
        rep = attn.n_heads // attn.n_kv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal and mask is None, scale=1.0)
    b, _, t, _ = out.shape
    return attn.o_proj(out.transpose(1, 2).reshape(b, t, attn.n_heads * attn.head_dim))


def encode_train(model: DiffusionGemma, ids: Tensor) -> tuple[Tensor, list[Tensor], list[Tensor]]:
    """Causal pass over ``ids`` [B, T] from position 0: final hidden states (before the norm) and every
    layer's keys/values."""
    cfg = model.cfg
    t = ids.shape[1]
    pos = torch.arange(t, device=ids.device)
    tables = model.rope_tables(pos)
    window = cfg.sliding_window
    band = (pos[None, :] <= pos[:, None]) & (pos[None, :] > pos[:, None] - window) if t > window else None
    x = model.embed(ids)
    ks, vs = [], []
    for i, block in enumerate(model.layers):
        lt = cfg.layer_types[i]
        cos, sin = tables[lt]
        q, k, v = block.self_attn.project(block.input_layernorm(x), cos, sin)
        a = _attention(block, q, k, v, band if lt == SLIDING else None, causal=True)
        x = x + block.post_attention_layernorm(a)
        x = (x + block.feed_forward(x)) * block.encoder_layer_scalar
        ks.append(k)
        vs.append(v)
    return x, ks, vs


def noise(free: Tensor, *, mode: str, fill_id: int, mask_id: int, vocab: int, t_min: float, length_target: str,
          fill_weight: float, after_end_weight: float, generator: torch.Generator | None = None
          ) -> tuple[Tensor, Tensor, Tensor]:
    """(noisy free slots, loss weight per slot, real-token targets) for clean free slots [B, N]."""
    b, n = free.shape
    dev = free.device
    t = t_min + (1 - t_min) * torch.rand(b, 1, device=dev, generator=generator)
    u = torch.rand(b, n, device=dev, generator=generator)
    hit = u < t
    is_fill = free == fill_id
    if mode == "uniform":
        rnd = torch.randint(0, vocab, (b, n), device=dev, generator=generator)
        noisy = torch.where(hit, rnd, free)
        weight = torch.where(is_fill, fill_weight, 1.0)
        return noisy, weight, ~is_fill & hit
    slot = torch.arange(n, device=dev)[None, :]
    if length_target == "end":
        end = (~is_fill).sum(1, keepdim=True)  # the middle fills the first slots; the end slot is the first fill
        at_end, after = slot == end, slot > end
        end_hit = (hit & at_end).any(1, keepdim=True)
        hit = torch.where(after, end_hit, hit)
        scored = hit & ~after
        none = ~scored.any(1, keepdim=True)  # at least one scored slot per row
        hit = hit | (none & (slot == 0))
        weight = torch.where(after, after_end_weight, 1.0) * hit
    else:
        hit = hit | (~hit.any(1, keepdim=True) & (slot == 0))
        weight = torch.where(is_fill, fill_weight, 1.0) * hit
    noisy = torch.where(hit, torch.full_like(free, mask_id), free)
    return noisy, weight, ~is_fill & hit


def step_losses(model: DiffusionGemma, sb: StepBatch, *, mode: str = "mask", t_min: float = 0.1,
                length_target: str = "end", fill_weight: float = 0.1, after_end_weight: float = 0.1,
                self_cond: float = 0.0, draws: int = 1, generator: torch.Generator | None = None
                ) -> dict[str, Tensor]:
    """Losses of one step: ``dec`` (diffusion, weighted mean over scored slots of every group), ``lm``
    (causal, mean over real prefix tokens), ``acc_real`` (argmax accuracy on masked real middle tokens).

    ``draws`` > 1 noises each canvas that many times over the same encoded prefix: the prefix pass is most of a
    step's cost (384-1024 tokens against a canvas of 32-80), so more masking draws per prefix are cheap."""
    cfg = model.cfg
    d = cfg.diffusion
    fill_id, mask_id = d.fill_token_id or 3, d.mask_token_id or 4
    prefix = sb.prefix.long()
    hidden, ks, vs = encode_train(model, prefix)
    enc_logits = model.head(model.norm(hidden))
    target = prefix[:, 1:]
    lm_mask = (prefix[:, :-1] != cfg.pad_token_id) & (target != cfg.pad_token_id)
    lm = F.cross_entropy(enc_logits[:, :-1].reshape(-1, cfg.vocab_size), target.reshape(-1), reduction="none")
    lm_loss = (lm * lm_mask.reshape(-1)).sum() / lm_mask.sum().clamp_min(1)

    p = prefix.shape[1]
    dec_sum = prefix.new_zeros((), dtype=torch.float32)
    w_sum = prefix.new_zeros((), dtype=torch.float32)
    hits = prefix.new_zeros((), dtype=torch.float32)
    right = prefix.new_zeros((), dtype=torch.float32)
    row = 0
    for canvas, n in zip(sb.canvases, sb.frees, strict=True):
        group = canvas.shape[0]
        gk = [k[row : row + group] for k in ks]
        gv = [v[row : row + group] for v in vs]
        canvas = canvas.long()
        if draws > 1:  # the same rows again, noised independently below, reading the same prefix
            canvas = canvas.repeat(draws, 1)
            gk = [k.repeat(draws, 1, 1, 1) for k in gk]
            gv = [v.repeat(draws, 1, 1, 1) for v in gv]
        rows = canvas.shape[0]
        free = canvas[:, :n]
        noisy, weight, real_hit = noise(free, mode=mode, fill_id=fill_id, mask_id=mask_id, vocab=cfg.vocab_size,
                                        t_min=t_min, length_target=length_target, fill_weight=fill_weight,
                                        after_end_weight=after_end_weight, generator=generator)
        canvas_in = torch.cat([noisy, canvas[:, n:]], 1)
        n_sc = int(round(self_cond * rows))
        parts = [(0, n_sc, True), (n_sc, rows, False)] if 0 < n_sc < rows else [(0, rows, n_sc == rows)]
        for lo, hi, use_sc in parts:
            cache = ListCache(cfg.num_hidden_layers)
            cache.k = [k[lo:hi] for k in gk]
            cache.v = [v[lo:hi] for v in gv]
            cache.length = p
            sc = None
            if use_sc:
                with torch.no_grad():
                    sc = model.decode(canvas_in[lo:hi], cache, logits_slice=slice(0, n)).logits.softmax(-1)
            logits = model.decode(canvas_in[lo:hi], cache, sc_probs=sc, logits_slice=slice(0, n)).logits
            ce = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), free[lo:hi].reshape(-1), reduction="none")
            w = weight[lo:hi].reshape(-1)
            dec_sum = dec_sum + (ce * w).sum()
            w_sum = w_sum + w.sum()
            with torch.no_grad():
                rh = real_hit[lo:hi]
                right = right + ((logits.argmax(-1) == free[lo:hi]) & rh).sum()
                hits = hits + rh.sum()
        row += group
    return {"dec": dec_sum / w_sum.clamp_min(1e-6), "lm": lm_loss, "acc_real": right / hits.clamp_min(1)}
