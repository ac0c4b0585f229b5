"""The DiffusionGemma text network in plain torch, used two ways with one set of weights.

* ``encode``: causal over new prompt tokens; appends their keys/values to a :class:`KVCache`.
* ``decode``: bidirectional over a fixed canvas placed right after the cache; reads the cache, never writes it;
  its input carries the self-conditioning signal of the previous denoising step.

Layer math follows the reference implementation (see shared docs): sandwich RMSNorms, scaling 1.0 attention with
q/k/v norms, full-attention layers reuse the raw key projection as value, proportional partial rope on full
layers, dense MLP + top-k MoE whose router reads the raw residual, a per-half ``layer_scalar`` multiplying the
whole residual stream, tied output head with a tanh softcap. Parameter names match the Hugging Face
checkpoint (minus the ``model.decoder.`` prefix) so loading is a rename, not a conversion.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .config import FULL, SLIDING, ModelConfig, RopeSpec


class RMSNorm(nn.Module):
    """RMSNorm in fp32, ``x * rsqrt(mean(x^2) + eps) * weight`` (no ``1 + weight`` offset)."""

    def __init__(self, dim: int, eps: float, with_scale: bool = True) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim)) if with_scale else None

    def forward(self, x: Tensor) -> Tensor:
        x32 = x.float()
        out = x32 * torch.pow(x32.pow(2).mean(-1, keepdim=True) + self.eps, -0.5)
        if self.weight is not None:
            out = out * self.weight.float()
        return out.type_as(x)


def rope_inv_freq(head_dim: int, spec: RopeSpec) -> Tensor:
    """Inverse frequencies, ``head_dim // 2`` of them; proportional rope leaves the tail at zero (unrotated)."""
    if spec.kind == "proportional":
        n_rot = int(spec.partial * head_dim // 2)
        steps = torch.arange(0, 2 * n_rot, 2, dtype=torch.float32, device="cpu")
        inv = 1.0 / (spec.theta ** (steps / head_dim))
        return torch.cat([inv, torch.zeros(head_dim // 2 - n_rot, device="cpu")])
    dim = int(head_dim * spec.partial)
    return 1.0 / (spec.theta ** (torch.arange(0, dim, 2, dtype=torch.float32, device="cpu") / dim))


def rope_cos_sin(inv_freq: Tensor, positions: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    freqs = positions.float()[:, None] * inv_freq[None, :].to(positions.device)
    emb = torch.cat([freqs, freqs], dim=-1)  # rotate-half layout
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """x: [B, T, H, D]; cos/sin: [T, D]."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos[:, None, :] + rotated * sin[:, None, :]


def gelu_mlp(x: Tensor, gate: Tensor, up: Tensor, down: Tensor) -> Tensor:
    return F.linear(F.gelu(F.linear(x, gate), approximate="tanh") * F.linear(x, up), down)


class Linear(nn.Linear):
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__(n_in, n_out, bias=False)


class MLP(nn.Module):
    def __init__(self, d: int, inner: int) -> None:
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = Linear(d, inner), Linear(d, inner), Linear(inner, d)

    def forward(self, x: Tensor) -> Tensor:
        return gelu_mlp(x, self.gate_proj.weight, self.up_proj.weight, self.down_proj.weight)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int) -> None:
        super().__init__()
        d, h = cfg.hidden_size, cfg.num_attention_heads
        self.head_dim, self.n_kv = cfg.layer_head_dim[layer], cfg.layer_kv_heads[layer]
        self.n_heads = h
        self.q_proj = Linear(d, h * self.head_dim)
        self.k_proj = Linear(d, self.n_kv * self.head_dim)
        # Full-attention layers have no value projection: the raw key projection doubles as the value.
        self.v_proj = Linear(d, self.n_kv * self.head_dim) if cfg.is_sliding(layer) else None
        self.o_proj = Linear(h * self.head_dim, d)
        self.q_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps)
        self.v_norm = RMSNorm(self.head_dim, cfg.rms_norm_eps, with_scale=False)

    def project(self, x: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Queries [B, H, T, D] and keys/values [B, KV, T, D] for x [B, T, d]."""
        b, t, _ = x.shape
        q = apply_rope(self.q_norm(self.q_proj(x).view(b, t, self.n_heads, self.head_dim)), cos, sin)
        k_raw = self.k_proj(x).view(b, t, self.n_kv, self.head_dim)
        v = self.v_proj(x).view(b, t, self.n_kv, self.head_dim) if self.v_proj is not None else k_raw
        k = apply_rope(self.k_norm(k_raw), cos, sin)
        v = self.v_norm(v)
        return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> Tensor:
        if k.shape[0] != q.shape[0]:  # one cached prompt shared by several canvases
            k, v = k.expand(q.shape[0], -1, -1, -1), v.expand(q.shape[0], -1, -1, -1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0, enable_gqa=self.n_kv != self.n_heads)
        b, _, t, _ = out.shape
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim))


class Router(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.hidden_size
        self.norm = RMSNorm(d, cfg.rms_norm_eps, with_scale=False)
        self.proj = Linear(d, cfg.num_experts)
        self.scale = nn.Parameter(torch.ones(d))
        self.per_expert_scale = nn.Parameter(torch.ones(cfg.num_experts))
        self.top_k, self.root = cfg.top_k_experts, d**-0.5

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        probs = F.softmax(self.proj(self.norm(x) * self.scale * self.root), dim=-1, dtype=torch.float32)
        weights, index = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        return weights * self.per_expert_scale[index], index


class Experts(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        e, d, i = cfg.num_experts, cfg.hidden_size, cfg.moe_intermediate_size
        self.gate_up_proj = nn.Parameter(torch.empty(e, 2 * i, d))  # first i rows: gate
        self.down_proj = nn.Parameter(torch.empty(e, d, i))

    # "auto" (inference): token-expert pairs sorted by expert, then on CUDA one grouped matmul per projection (no
    # host sync, no Python loop over experts); elsewhere one matmul pair per hit expert on contiguous slices (a
    # single host sync per layer). Same sums in the same order as "loop": one matmul pair per hit expert found
    # by torch.where (1 + E host syncs per layer), kept for training (gradients on).
    dispatch = "auto"  # or "loop", "sorted", "grouped" (benchmarks)

    def forward(self, x: Tensor, weights: Tensor, index: Tensor) -> Tensor:
        if self.dispatch == "loop" or torch.is_grad_enabled():
            return self._forward_loop(x, weights, index)
        grouped = self._grouped_ok(x) if self.dispatch == "auto" else self.dispatch == "grouped"
        return self._forward_sorted(x, weights, index, grouped=grouped)

    def _grouped_ok(self, x: Tensor) -> bool:
        """F.grouped_mm wants CUDA bf16 on sm80+ with 16-byte-aligned rows (its CPU fallback is slower than
        the slice loop: it runs a matmul for every expert, hit or not)."""
        if not hasattr(F, "grouped_mm") or x.device.type != "cuda" or x.dtype != torch.bfloat16:
            return False
        if x.dtype != self.down_proj.dtype or torch.cuda.get_device_capability(x.device) < (8, 0):
            return False
        return all(n * x.element_size() % 16 == 0 for n in (x.shape[-1], self.down_proj.shape[-1]))

    def _forward_sorted(self, x: Tensor, weights: Tensor, index: Tensor, grouped: bool) -> Tensor:
        t, k = index.shape
        flat = index.reshape(-1)
        order = torch.argsort(flat, stable=True)  # pairs grouped by expert, tokens ascending within each
        counts = torch.bincount(flat, minlength=self.down_proj.shape[0])
        token = order // k
        xs = x[token]
        if grouped:
            offs = torch.cumsum(counts, 0).to(torch.int32)
            gate, up = F.grouped_mm(xs, self.gate_up_proj.transpose(1, 2), offs=offs).chunk(2, dim=-1)
            hs = F.grouped_mm(F.gelu(gate, approximate="tanh") * up, self.down_proj.transpose(1, 2), offs=offs)
        else:
            hs = torch.empty_like(xs)
            start = 0
            for e, n in enumerate(counts.tolist()):
                if n:
                    gate, up = F.linear(xs[start : start + n], self.gate_up_proj[e]).chunk(2, dim=-1)
                    hs[start : start + n] = F.linear(F.gelu(gate, approximate="tanh") * up, self.down_proj[e])
                    start += n
        contrib = (hs * weights.reshape(-1)[order, None]).to(x.dtype)
        if x.device.type == "cpu" and x.dtype == torch.float32:
            # CPU fp32 index_add_ runs in index order: per token, ascending expert, as the loop's calls add
            return torch.zeros_like(x).index_add_(0, token, contrib)
        # elsewhere (CUDA atomics; CPU bf16 accumulating wider) add each token's k terms in expert order ourselves
        per_slot = torch.empty_like(contrib)
        per_slot[order] = contrib
        ranked = per_slot.view(t, k, -1).gather(1, index.argsort(dim=-1)[..., None].expand(-1, -1, x.shape[-1]))
        out = ranked[:, 0].clone()
        for j in range(1, k):
            out += ranked[:, j]
        return out

    def _forward_loop(self, x: Tensor, weights: Tensor, index: Tensor) -> Tensor:
        out = torch.zeros_like(x)
        for e in index.unique().tolist():
            token, slot = torch.where(index == e)
            gate, up = F.linear(x[token], self.gate_up_proj[e]).chunk(2, dim=-1)
            h = F.linear(F.gelu(gate, approximate="tanh") * up, self.down_proj[e])
            out.index_add_(0, token, (h * weights[token, slot, None]).to(out.dtype))
        return out


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int) -> None:
        super().__init__()
        d, eps = cfg.hidden_size, cfg.rms_norm_eps
        self.self_attn = Attention(cfg, layer)
        self.mlp = MLP(d, cfg.intermediate_size)
        self.input_layernorm = RMSNorm(d, eps)
        self.post_attention_layernorm = RMSNorm(d, eps)
        self.pre_feedforward_layernorm = RMSNorm(d, eps)
        self.post_feedforward_layernorm = RMSNorm(d, eps)
        if cfg.moe:
            self.router = Router(cfg)
            self.experts = Experts(cfg)
            self.post_feedforward_layernorm_1 = RMSNorm(d, eps)
            self.post_feedforward_layernorm_2 = RMSNorm(d, eps)
            self.pre_feedforward_layernorm_2 = RMSNorm(d, eps)
        # Each half scales the residual stream by its own scalar; the decoder's is `layer_scalar` in checkpoints.
        self.register_buffer("layer_scalar", torch.ones(1))
        self.register_buffer("encoder_layer_scalar", torch.ones(1))

    def feed_forward(self, h: Tensor) -> Tensor:
        m = self.mlp(self.pre_feedforward_layernorm(h))
        if hasattr(self, "experts"):
            flat = h.reshape(-1, h.shape[-1])
            weights, index = self.router(flat)  # the router reads the raw residual
            m2 = self.experts(self.pre_feedforward_layernorm_2(flat), weights, index).reshape(h.shape)
            m = self.post_feedforward_layernorm_1(m) + self.post_feedforward_layernorm_2(m2)
        return self.post_feedforward_layernorm(m)


class KVCache:
    """Keys/values of all committed tokens, full length on every layer (sliding layers included).

    Keeping full length (instead of the reference's rolling window) is what allows ``truncate``: the engine
    reuses the longest common token prefix across keystrokes and encodes only the rest. Storage grows by
    doubling; ``append`` writes in place, so a keystroke costs O(new tokens), not O(file).
    """

    def __init__(self, cfg: ModelConfig, dtype: torch.dtype, device: torch.device | str = "cpu", capacity: int = 256):
        self.cfg, self.dtype, self.device = cfg, dtype, torch.device(device)
        self.length = 0
        self.k: list[Tensor] = []
        self.v: list[Tensor] = []
        self._alloc(capacity)

    def _alloc(self, capacity: int) -> None:
        new_k, new_v = [], []
        for i in range(self.cfg.num_hidden_layers):
            shape = (1, self.cfg.layer_kv_heads[i], capacity, self.cfg.layer_head_dim[i])
            k = torch.empty(shape, dtype=self.dtype, device=self.device)
            v = torch.empty(shape, dtype=self.dtype, device=self.device)
            if self.k:
                k[:, :, : self.length] = self.k[i][:, :, : self.length]
                v[:, :, : self.length] = self.v[i][:, :, : self.length]
            new_k.append(k)
            new_v.append(v)
        self.k, self.v, self.capacity = new_k, new_v, capacity

    def reserve(self, extra: int) -> None:
        if self.length + extra > self.capacity:
            cap = self.capacity
            while cap < self.length + extra:
                cap *= 2
            self._alloc(cap)

    def truncate(self, n: int) -> None:
        self.length = max(0, min(n, self.length))

    def write(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store new keys/values after the committed ones; return committed + new (views)."""
        t = k.shape[2]
        self.k[layer][:, :, self.length : self.length + t] = k
        self.v[layer][:, :, self.length : self.length + t] = v
        return self.k[layer][:, :, : self.length + t], self.v[layer][:, :, : self.length + t]

    def read(self, layer: int, start: int = 0) -> tuple[Tensor, Tensor]:
        return self.k[layer][:, :, start : self.length], self.v[layer][:, :, start : self.length]

    def nbytes(self) -> int:
        return sum(t.element_size() * t.nelement() for t in self.k + self.v)


class ListCache:
    """A differentiable stand-in for :class:`KVCache` used in training (batch > 1, no in-place writes)."""

    def __init__(self, n_layers: int) -> None:
        self.k: list[Tensor | None] = [None] * n_layers
        self.v: list[Tensor | None] = [None] * n_layers
        self.length = 0

    def reserve(self, extra: int) -> None:
        pass

    def write(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k[layer] is not None:
            k, v = torch.cat([self.k[layer], k], 2), torch.cat([self.v[layer], v], 2)
        self.k[layer], self.v[layer] = k, v
        return k, v

    def read(self, layer: int, start: int = 0) -> tuple[Tensor, Tensor]:
        k, v = self.k[layer], self.v[layer]
        assert k is not None and v is not None
        return k[:, :, start:], v[:, :, start:]


@dataclass
class DecodeOutput:
    logits: Tensor  # [B, C', V] fp32, softcapped
    hidden: Tensor  # [B, C, d] after the final norm


class DiffusionGemma(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.hidden_size
        self.embed_tokens = nn.Embedding(cfg.vocab_size, d)
        self.layers = nn.ModuleList([Block(cfg, i) for i in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(d, cfg.rms_norm_eps)
        self.self_conditioning = nn.Module()
        self.self_conditioning.pre_norm = RMSNorm(d, cfg.rms_norm_eps)
        self.self_conditioning.gate_proj = Linear(d, cfg.intermediate_size)
        self.self_conditioning.up_proj = Linear(d, cfg.intermediate_size)
        self.self_conditioning.down_proj = Linear(cfg.intermediate_size, d)
        self.sc_post_norm = RMSNorm(d, cfg.rms_norm_eps, with_scale=False)
        self.lm_head = None if cfg.tie_word_embeddings else Linear(d, cfg.vocab_size)
        self.inv_freq = {
            lt: rope_inv_freq(self._head_dim_of(lt), cfg.rope[lt]) for lt in set(cfg.layer_types)
        }

    def _head_dim_of(self, layer_type: str) -> int:
        return self.cfg.layer_head_dim[self.cfg.layer_types.index(layer_type)]

    # ---- pieces ---------------------------------------------------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self.embed_tokens.weight.dtype

    @property
    def device(self) -> torch.device:
        return self.embed_tokens.weight.device

    def embed(self, ids: Tensor) -> Tensor:
        w = self.embed_tokens.weight
        return F.embedding(ids, w) * torch.tensor(self.cfg.hidden_size**0.5, dtype=w.dtype)

    def head(self, hidden: Tensor) -> Tensor:
        """Tied output head with the tanh softcap, in fp32."""
        w = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        logits = F.linear(hidden, w).float()
        cap = self.cfg.final_logit_softcapping
        # tanh(x) = 2*sigmoid(2x) - 1: same values (to ~1e-7), but sigmoid is vectorised on CPU and tanh is not
        # (1.1 vs 0.16 ms for a 34 x 8192 canvas here, i.e. ~7 % of a denoising step)
        return (2 * torch.sigmoid(logits * (2 / cap)) - 1) * cap if cap else logits

    def rope_tables(self, positions: Tensor) -> dict[str, tuple[Tensor, Tensor]]:
        return {lt: rope_cos_sin(inv, positions, self.dtype) for lt, inv in self.inv_freq.items()}

    def soft_embedding(self, probs: Tensor) -> Tensor:
        """Expected embedding under a distribution over the vocabulary (the self-conditioning signal)."""
        w = self.embed_tokens.weight
        return torch.matmul(probs.to(w.dtype), w) * torch.tensor(self.cfg.hidden_size**0.5, dtype=w.dtype)

    def decoder_input(self, canvas: Tensor, sc_probs: Tensor | None) -> Tensor:
        """Token embeddings plus the self-conditioning signal, RMS-normalised.

        ``sc_probs`` may cover only the first F canvas positions: the rest are taken as one-hot on their
        (clamped) tokens, which is the same vector as their embedding, without a vocabulary-sized matmul.
        """
        x = self.embed(canvas)
        sc = self.self_conditioning
        if sc_probs is None:
            # no signal: the bias-free MLP of an all-zero input is exactly zero, so its three matmuls (a tenth
            # of a denoising pass; every pass when the sampler runs without self-conditioning) are skipped
            return self.sc_post_norm(x)
        if sc_probs.shape[1] < canvas.shape[1]:
            soft = torch.cat([self.soft_embedding(sc_probs), x[:, sc_probs.shape[1] :]], dim=1)
        else:
            soft = self.soft_embedding(sc_probs)
        normed = sc.pre_norm(soft)
        signal = gelu_mlp(normed, sc.gate_proj.weight, sc.up_proj.weight, sc.down_proj.weight)
        return self.sc_post_norm(x + signal)

    # ---- the two entry points -------------------------------------------------------------------------------
    def encode(self, ids: Tensor, cache: KVCache | ListCache, *, logits: str = "none") -> Tensor | None:
        """Causal pass over ``ids`` [B, T] placed after the cache; appends their keys/values to it.

        ``logits``: "none", "last" (next-token logits of the last position, [B, V]) or "all" ([B, T, V]) —
        the autoregressive head used as our speed baseline and for the causal training loss.
        """
        b, t = ids.shape
        start = cache.length
        cache.reserve(t)
        positions = torch.arange(start, start + t, device=ids.device)
        tables = self.rope_tables(positions)
        x = self.embed(ids)
        window = self.cfg.sliding_window
        masks: dict[str, Tensor | None] = {}
        key_pos = torch.arange(start + t, device=ids.device)
        causal = key_pos[None, :] <= positions[:, None]
        masks[FULL] = causal if t > 1 else None
        k_lo = max(0, start - window + 1)
        masks[SLIDING] = (causal & (key_pos[None, :] > positions[:, None] - window))[:, k_lo:]
        for i, block in enumerate(self.layers):
            lt = self.cfg.layer_types[i]
            cos, sin = tables[lt]
            h = block.input_layernorm(x)
            q, k, v = block.self_attn.project(h, cos, sin)
            k_all, v_all = cache.write(i, k, v)
            if lt == SLIDING:
                k_all, v_all = k_all[:, :, k_lo:], v_all[:, :, k_lo:]
            a = block.self_attn.attend(q, k_all, v_all, masks[lt])
            x = x + block.post_attention_layernorm(a)
            x = (x + block.feed_forward(x)) * block.encoder_layer_scalar
        cache.length = start + t
        if logits == "none":
            return None
        hidden = self.norm(x[:, -1] if logits == "last" else x)
        return self.head(hidden)

    def decode(
        self,
        canvas: Tensor,
        cache: KVCache | ListCache,
        *,
        sc_probs: Tensor | None = None,
        sc_logits: Tensor | None = None,
        logits_slice: slice | None = None,
    ) -> DecodeOutput:
        """One bidirectional denoising pass over ``canvas`` [B, C] at positions right after the cache.

        Self-conditioning: pass the previous step's temperature-scaled logits (``sc_logits``) or their softmax
        (``sc_probs``, cheaper when the sampler already has it); neither on the first step.
        ``logits_slice`` limits the output head to some canvas positions (e.g. skip clamped suffix tokens),
        since on CPU the vocabulary projection dominates the cost of a small model.
        """
        if sc_probs is None and sc_logits is not None:
            sc_probs = F.softmax(sc_logits.float(), dim=-1)
        b, c = canvas.shape
        start = cache.length
        positions = torch.arange(start, start + c, device=canvas.device)
        tables = self.rope_tables(positions)
        x = self.decoder_input(canvas, sc_probs)
        k_lo = max(0, start - self.cfg.sliding_window + 1)
        for i, block in enumerate(self.layers):
            lt = self.cfg.layer_types[i]
            cos, sin = tables[lt]
            h = block.input_layernorm(x)
            q, k, v = block.self_attn.project(h, cos, sin)
            k_ctx, v_ctx = cache.read(i, k_lo if lt == SLIDING else 0)
            if k_ctx.shape[0] != b:
                k_ctx, v_ctx = k_ctx.expand(b, -1, -1, -1), v_ctx.expand(b, -1, -1, -1)
            a = block.self_attn.attend(q, torch.cat([k_ctx, k], 2), torch.cat([v_ctx, v], 2), None)
            x = x + block.post_attention_layernorm(a)
            x = (x + block.feed_forward(x)) * block.layer_scalar
        hidden = self.norm(x)
        out = hidden if logits_slice is None else hidden[:, logits_slice]
        return DecodeOutput(logits=self.head(out), hidden=hidden)

    def new_cache(self, capacity: int = 256) -> KVCache:
        return KVCache(self.cfg, self.dtype, self.device, capacity)

    # ---- initialisation (training from scratch) -------------------------------------------------------------
    @torch.no_grad()
    def init_weights(self, std: float = 0.02, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        for name, p in self.named_parameters():
            if name.endswith("norm.weight") or name.endswith("router.scale") or name.endswith("per_expert_scale"):
                p.fill_(1.0)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * std)
        for block in self.layers:
            block.layer_scalar.fill_(1.0)
            block.encoder_layer_scalar.fill_(1.0)

    def num_parameters(self, non_embedding: bool = True) -> int:
        n = sum(p.numel() for p in self.parameters())
        return n - self.embed_tokens.weight.numel() if non_embedding else n
