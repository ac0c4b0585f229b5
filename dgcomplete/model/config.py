"""DiffusionGemma text configuration, parsed from a checkpoint's ``config.json``.

Real checkpoints nest the text network under ``text_config`` and describe the full-attention layers through
``per_layer_config`` overrides (head_dim, KV heads). We resolve all of that into flat per-layer lists once,
so the network code never has to interpret the JSON.

Parsing is also the checkpoint's first line of defence: every value we read is type- and range-checked here
(a wrong one is a :class:`ConfigError` naming file, key, value and bound), so a corrupt or hostile file fails in
milliseconds instead of allocating, looping or loading a model that silently returns nothing.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SLIDING = "sliding_attention"
FULL = "full_attention"


class ConfigError(ValueError):
    """A config the network cannot honour. The message names the file and the offending key."""


@dataclass
class RopeSpec:
    theta: float
    partial: float = 1.0  # share of head_dim/2 frequencies that rotate ("proportional" rope)
    kind: str = "default"  # "default" or "proportional"


@dataclass
class DiffusionOptions:
    """What our own checkpoints add under ``dgcomplete`` in config.json (absent in Google's)."""

    mode: str = "uniform"  # "uniform" (renoising, the reference) or "mask" (absorbing <mask>)
    fill_token_id: int | None = None  # filler for unused free slots of a variable-length middle
    mask_token_id: int | None = None
    sep_token_id: int | None = None  # separates context chunks from the prefix in the encoder input
    max_context_tokens: int = 1024  # prefix tokens the model was trained to use
    fill_loss_weight: float | None = None  # training weight of filler slots (inference corrects for it)
    # "fill": <fill> scored in every unused slot (the shipped model); "end": only the slot after the middle
    # is the span's end (train --length-target end), decoded with the frontier-stop rule
    length_target: str = "fill"


@dataclass
class ModelConfig:
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    layer_types: list[str]
    layer_head_dim: list[int]
    layer_kv_heads: list[int]
    rope: dict[str, RopeSpec]
    sliding_window: int = 512
    rms_norm_eps: float = 1e-6
    final_logit_softcapping: float | None = 30.0
    hidden_activation: str = "gelu_pytorch_tanh"
    num_experts: int = 0  # 0: dense MLP only (our small models may drop the MoE half; measured in bench/)
    top_k_experts: int = 0
    moe_intermediate_size: int = 0
    tie_word_embeddings: bool = True
    max_position_embeddings: int = 131072
    canvas_length: int = 256
    pad_token_id: int = 0
    eos_token_ids: list[int] = field(default_factory=lambda: [1])
    bos_token_id: int | None = 2
    diffusion: DiffusionOptions = field(default_factory=DiffusionOptions)

    @property
    def moe(self) -> bool:
        return self.num_experts > 0

    def is_sliding(self, layer: int) -> bool:
        return self.layer_types[layer] == SLIDING

    # ---- parsing -------------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "config.json") -> ModelConfig:
        """Parse and validate: every value we use is type- and range-checked (see :data:`LIMITS`)."""
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: expected a JSON object")
        top = _Fields(raw, source, "")
        text_raw = raw.get("text_config", raw)
        if not isinstance(text_raw, dict):
            raise ConfigError(f"{source}: 'text_config' must be an object, got {_show(text_raw)}")
        t = _Fields(text_raw, source, "text_config." if "text_config" in raw else "")

        n_layers = t.int("num_hidden_layers")
        layer_types_raw = t.get("layer_types")
        if layer_types_raw is None:  # the reference's default pattern: 5 sliding, 1 full
            layer_types = [SLIDING if (i + 1) % 6 else FULL for i in range(n_layers)]
        else:
            if not isinstance(layer_types_raw, list):
                raise t.error("layer_types", layer_types_raw, f"a list of {n_layers} layer types")
            layer_types = list(layer_types_raw)
        if len(layer_types) != n_layers:
            raise ConfigError(f"{source}: layer_types has {len(layer_types)} entries for {n_layers} layers")
        bad = [lt for lt in layer_types if lt not in (SLIDING, FULL)]
        if bad:
            raise ConfigError(f"{source}: unsupported layer type {_show(bad[0])}")
        if layer_types[-1] != FULL:  # the reference forces this too
            layer_types[-1] = FULL

        n_heads = t.int("num_attention_heads")
        head_dim = t.int("head_dim")
        kv_heads = t.int("num_key_value_heads")
        layer_head_dim, layer_kv = _per_layer(t, layer_types, head_dim, kv_heads)
        for i, (hd, kv) in enumerate(zip(layer_head_dim, layer_kv, strict=True)):
            if hd % 2:
                raise ConfigError(f"{source}: layer {i}: head_dim {hd} must be even (rotary embedding)")
            if kv > n_heads or n_heads % kv:
                raise ConfigError(f"{source}: layer {i}: {n_heads} heads not divisible by {kv} KV heads")

        rope = _rope(t, layer_types, layer_head_dim)
        act = t.choice("hidden_activation", ("gelu_pytorch_tanh", "gelu_tanh"), "gelu_pytorch_tanh")
        vocab = t.int("vocab_size")
        ids = _TokenIds(vocab)
        eos = t.get("eos_token_id", top.get("eos_token_id", 1))
        eos_ids = ids.many(t if "eos_token_id" in text_raw else top, "eos_token_id", eos)
        pad = t.get("pad_token_id")
        pad_id = 0 if pad is None else ids.one(t, "pad_token_id", pad)
        bos = t.get("bos_token_id")
        bos_id = None if bos is None else ids.one(t, "bos_token_id", bos)
        diffusion = _diffusion_options(raw.get("dgcomplete"), source, ids)

        n_exp = t.int("num_experts", 0)
        top_k = t.int("top_k_experts", 0)
        moe_inter = t.int("moe_intermediate_size", 0)
        if n_exp and (top_k <= 0 or moe_inter <= 0):
            raise ConfigError(f"{source}: num_experts set but top_k_experts/moe_intermediate_size missing")
        if top_k > n_exp > 0:
            raise t.error("top_k_experts", top_k, f"at most num_experts ({n_exp})")
        max_pos = t.int("max_position_embeddings", 131072)
        softcap = t.get("final_logit_softcapping", 30.0)
        if softcap is not None:
            softcap = t.float("final_logit_softcapping", 30.0, low_open=True)
        tie = top.get("tie_word_embeddings")
        tie = (top if tie is not None else t).bool("tie_word_embeddings", True)
        return cls(
            vocab_size=vocab,
            hidden_size=t.int("hidden_size"),
            intermediate_size=t.int("intermediate_size"),
            num_hidden_layers=n_layers,
            num_attention_heads=n_heads,
            layer_types=layer_types,
            layer_head_dim=layer_head_dim,
            layer_kv_heads=layer_kv,
            rope=rope,
            sliding_window=t.int("sliding_window", 512),
            rms_norm_eps=t.float("rms_norm_eps", 1e-6, low_open=True),
            final_logit_softcapping=softcap,
            hidden_activation=act,
            num_experts=n_exp,
            top_k_experts=top_k,
            moe_intermediate_size=moe_inter,
            tie_word_embeddings=tie,
            max_position_embeddings=max_pos,
            canvas_length=top.int("canvas_length", 256),
            pad_token_id=pad_id,
            eos_token_ids=eos_ids,
            bos_token_id=bos_id,
            diffusion=diffusion,
        )

    def num_parameters(self) -> int:
        """Parameters the network will allocate, from the config alone (checked before anything is allocated)."""
        d, inter = self.hidden_size, self.intermediate_size
        n = self.vocab_size * d * (1 if self.tie_word_embeddings else 2)
        n += d + d + 3 * d * inter  # final norm; self-conditioning pre-norm and MLP
        for hd, kv, lt in zip(self.layer_head_dim, self.layer_kv_heads, self.layer_types, strict=True):
            q = self.num_attention_heads * hd
            n += 2 * d * q + d * kv * hd * (2 if lt == SLIDING else 1) + 2 * hd  # q, o, k (+ v); q/k norms
            n += 3 * d * inter + 4 * d
            if self.moe:
                e, mi = self.num_experts, self.moe_intermediate_size
                n += d * e + d + e + 3 * e * mi * d + 3 * d  # router, experts, 3 more norms
        return n

    def largest_tensor(self) -> int:
        """Elements of the largest single tensor (the loader holds one extra copy of it while converting)."""
        d = self.hidden_size
        sizes = [self.vocab_size * d, d * self.intermediate_size]
        sizes += [d * self.num_attention_heads * hd for hd in self.layer_head_dim]
        if self.moe:
            sizes.append(2 * self.num_experts * self.moe_intermediate_size * d)
        return max(sizes)

    @classmethod
    def from_file(cls, path: str | Path) -> ModelConfig:
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise ConfigError(f"{path}: not found") from e
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path}: unreadable JSON ({e})") from e
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a JSON object")
        return cls.from_dict(raw, source=str(path.name))

    def to_hf_dict(self) -> dict[str, Any]:
        """The config.json of a DiffusionGemma checkpoint (what `transformers` writes), plus our section."""
        default_head, default_kv = self.layer_head_dim[0], self.layer_kv_heads[0]
        for i, t in enumerate(self.layer_types):
            if t == SLIDING:
                default_head, default_kv = self.layer_head_dim[i], self.layer_kv_heads[i]
                break
        per_layer = {
            str(i): {"head_dim": h, "num_key_value_heads": k}
            for i, (h, k) in enumerate(zip(self.layer_head_dim, self.layer_kv_heads, strict=True))
            if (h, k) != (default_head, default_kv)
        }
        rope = {
            lt: {"rope_type": r.kind, "rope_theta": r.theta}
            | ({"partial_rotary_factor": r.partial} if r.kind == "proportional" else {})
            for lt, r in self.rope.items()
        }
        text = {
            "model_type": "diffusion_gemma_text",
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": default_kv,
            "head_dim": default_head,
            "per_layer_config": per_layer,
            "layer_types": self.layer_types,
            "rope_parameters": rope,
            "sliding_window": self.sliding_window,
            "rms_norm_eps": self.rms_norm_eps,
            "final_logit_softcapping": self.final_logit_softcapping,
            "hidden_activation": self.hidden_activation,
            "num_experts": self.num_experts or None,
            "top_k_experts": self.top_k_experts or None,
            "moe_intermediate_size": self.moe_intermediate_size or None,
            "max_position_embeddings": self.max_position_embeddings,
            "pad_token_id": self.pad_token_id,
            "eos_token_id": self.eos_token_ids if len(self.eos_token_ids) > 1 else self.eos_token_ids[0],
            "bos_token_id": self.bos_token_id,
            "tie_word_embeddings": self.tie_word_embeddings,
            "attention_bias": False,
        }
        return {
            "architectures": ["DiffusionGemmaForBlockDiffusion"],
            "model_type": "diffusion_gemma",
            "canvas_length": self.canvas_length,
            "tie_word_embeddings": self.tie_word_embeddings,
            "text_config": text,
            "dgcomplete": asdict(self.diffusion),
        }


# ---- validation ------------------------------------------------------------------------------------------------
# Bounds on every integer we read. They sit far above any real checkpoint (Google's 26B-A4B: 30 layers, hidden
# 2816, head_dim <= 512, vocab 262144) and low enough that a corrupt or hostile config.json cannot make the loader
# build for minutes or allocate gigabytes before it fails: the product of sizes is bounded separately, against
# the memory actually available (loader.check_memory).
LIMITS: dict[str, tuple[int, int]] = {
    "vocab_size": (1, 1 << 20),
    "hidden_size": (1, 1 << 16),
    "intermediate_size": (1, 1 << 18),
    "num_hidden_layers": (1, 512),
    "num_attention_heads": (1, 1024),
    "num_key_value_heads": (1, 1024),
    "num_global_key_value_heads": (1, 1024),
    "head_dim": (2, 4096),
    "global_head_dim": (2, 4096),
    "sliding_window": (1, 1 << 24),
    "num_experts": (0, 4096),
    "top_k_experts": (0, 4096),
    "moe_intermediate_size": (0, 1 << 18),
    "max_position_embeddings": (1, 1 << 24),
    "canvas_length": (1, 4096),
    "max_context_tokens": (1, 1 << 24),
}
# (low, high) for floats; the low end is exclusive where ``low_open`` is passed (eps, softcap: 0 breaks the math).
FLOAT_LIMITS: dict[str, tuple[float, float]] = {
    "rms_norm_eps": (0.0, 0.1),
    "final_logit_softcapping": (0.0, 1e4),
    "rope_theta": (1.0, 1e12),
    "partial_rotary_factor": (0.0, 1.0),
    "fill_loss_weight": (0.0, 1e6),
}
MAX_EOS_IDS = 64
_MISSING: Any = object()


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Fields:
    """Typed, bounded reads from one JSON object; every error names the file, the key, the value and the bound."""

    def __init__(self, data: dict[str, Any], source: str, prefix: str) -> None:
        self.data, self.source, self.prefix = data, source, prefix

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def error(self, key: str, value: Any, want: str) -> ConfigError:
        return ConfigError(f"{self.source}: {self.prefix}{key} = {_show(value)}, expected {want}")

    def _present(self, key: str, default: Any) -> Any:
        value = self.data.get(key)
        if value is None and default is _MISSING:
            raise ConfigError(f"{self.source}: missing required key {self.prefix}{key}")
        return value

    def int(self, key: str, default: Any = _MISSING) -> int:
        value = self._present(key, default)
        if value is None:
            return default
        lo, hi = LIMITS[key]
        if not _is_int(value) or not lo <= value <= hi:
            raise self.error(key, value, f"an integer in [{lo}, {hi}]")
        return value

    def float(self, key: str, default: Any = _MISSING, *, low_open: bool = False) -> float:
        value = self._present(key, default)
        if value is None:
            return default
        lo, hi = FLOAT_LIMITS[key]
        bound = f"a finite number in {'(' if low_open else '['}{lo:g}, {hi:g}]"
        if not _is_int(value) and not (isinstance(value, float) and math.isfinite(value)):  # ints: no overflow
            raise self.error(key, value, bound)
        if not (lo < value if low_open else lo <= value) or value > hi:
            raise self.error(key, value, bound)
        return float(value)

    def bool(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, value, "true or false")
        return value

    def choice(self, key: str, allowed: tuple[str, ...], default: str) -> str:
        value = self.data.get(key)
        if value is None:
            return default
        if value not in allowed:
            raise ConfigError(f"{self.source}: {self.prefix}{key} {_show(value)} is not supported "
                              f"(expected one of {', '.join(allowed)})")
        return value


class _TokenIds:
    def __init__(self, vocab: int) -> None:
        self.vocab = vocab

    def one(self, f: _Fields, key: str, value: Any) -> int:
        if not _is_int(value) or not 0 <= value < self.vocab:
            raise f.error(key, value, f"a token id in [0, {self.vocab - 1}] (vocab_size {self.vocab})")
        return value

    def many(self, f: _Fields, key: str, value: Any) -> list[int]:
        if value is None:
            return []
        values = value if isinstance(value, list) else [value]
        if len(values) > MAX_EOS_IDS:
            raise f.error(key, value, f"at most {MAX_EOS_IDS} token ids")
        return [self.one(f, key, v) for v in values if v is not None]


def _layer_index(key: Any, n_layers: int) -> int | None:
    """``per_layer_config`` keys: "5", or "05" as `transformers` writes them for 10+ layers."""
    if _is_int(key):
        idx = key
    elif isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 6:
        idx = int(key)
    else:
        return None
    return idx if 0 <= idx < n_layers else None


def _per_layer(t: _Fields, layer_types: list[str], head_dim: int, kv_heads: int) -> tuple[list[int], list[int]]:
    """Resolve per-layer head_dim / KV heads: ``per_layer_config`` or the older global_* keys on full layers."""
    n = len(layer_types)
    per_layer = t.get("per_layer_config")
    overrides: dict[int, dict[str, Any]] = {}
    if per_layer is None:
        over: dict[str, Any] = {"head_dim": t.int("global_head_dim", 512)}
        if t.get("num_global_key_value_heads") is not None:
            over["num_key_value_heads"] = t.int("num_global_key_value_heads")
        overrides = {i: over for i, lt in enumerate(layer_types) if lt == FULL}
    else:
        if not isinstance(per_layer, dict):
            raise t.error("per_layer_config", per_layer, "an object mapping layer indices to overrides")
        for key, over in per_layer.items():
            idx = _layer_index(key, n)
            if idx is None:
                raise ConfigError(f"{t.source}: {t.prefix}per_layer_config key {_show(key)} is not a layer index "
                                  f"in [0, {n - 1}]")
            if idx in overrides:
                raise ConfigError(f"{t.source}: {t.prefix}per_layer_config names layer {idx} twice")
            over = over or {}
            if not isinstance(over, dict):
                raise t.error(f"per_layer_config.{key}", over, "an object")
            unknown = sorted(set(over) - {"head_dim", "num_key_value_heads"})
            if unknown:
                raise ConfigError(f"{t.source}: {t.prefix}per_layer_config.{key}.{unknown[0]} is not supported "
                                  "(only head_dim and num_key_value_heads)")
            overrides[idx] = over
    heads, kvs = [], []
    for i in range(n):
        f = _Fields(overrides.get(i, {}), t.source, f"{t.prefix}per_layer_config.{i}.")
        heads.append(f.int("head_dim", head_dim))
        kvs.append(f.int("num_key_value_heads", kv_heads))
    return heads, kvs


def _rope(t: _Fields, layer_types: list[str], head_dims: list[int]) -> dict[str, RopeSpec]:
    rope_raw = t.get("rope_parameters")
    if rope_raw is None:
        rope_raw = {
            SLIDING: {"rope_type": "default", "rope_theta": 10_000.0},
            FULL: {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1_000_000.0},
        }
    if not isinstance(rope_raw, dict):
        raise t.error("rope_parameters", rope_raw, "an object keyed by layer type")
    rope: dict[str, RopeSpec] = {}
    for lt in sorted(set(layer_types)):
        spec = rope_raw.get(lt)
        if spec is None:
            raise ConfigError(f"{t.source}: rope_parameters has no entry for {lt}")
        if not isinstance(spec, dict):
            raise t.error(f"rope_parameters.{lt}", spec, "an object")
        f = _Fields(spec, t.source, f"{t.prefix}rope_parameters.{lt}.")
        kind = f.choice("rope_type", ("default", "proportional"), "default")
        partial = f.float("partial_rotary_factor", 1.0, low_open=True)
        if kind == "default" and partial != 1.0:  # the network rotates all dims with default rope
            raise ConfigError(f"{t.source}: {f.prefix}partial_rotary_factor {partial} with rope_type 'default' "
                              "is not supported")
        rope[lt] = RopeSpec(f.float("rope_theta"), partial, kind)
    return rope


def _diffusion_options(extra: Any, source: str, ids: _TokenIds) -> DiffusionOptions:
    """Our own ``dgcomplete`` section; unknown keys are ignored (older/newer versions of ours)."""
    if extra is None:
        return DiffusionOptions()
    if not isinstance(extra, dict):
        raise ConfigError(f"{source}: dgcomplete = {_show(extra)}, expected an object")
    f = _Fields(extra, source, "dgcomplete.")
    opts = DiffusionOptions(mode=f.choice("mode", ("uniform", "mask"), "uniform"),
                            max_context_tokens=f.int("max_context_tokens", 1024))
    for key in ("fill_token_id", "mask_token_id", "sep_token_id"):
        if extra.get(key) is not None:
            setattr(opts, key, ids.one(f, key, extra[key]))
    if extra.get("fill_loss_weight") is not None:
        opts.fill_loss_weight = f.float("fill_loss_weight")
    opts.length_target = f.choice("length_target", ("fill", "end"), "fill")
    if opts.mode == "mask" and opts.mask_token_id is None:
        raise ConfigError(f"{source}: dgcomplete.mode 'mask' needs dgcomplete.mask_token_id")
    return opts
