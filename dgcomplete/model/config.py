"""DiffusionGemma text configuration, parsed from a checkpoint's ``config.json``.

Real checkpoints nest the text network under ``text_config`` and describe the full-attention layers through
``per_layer_config`` overrides (head_dim, KV heads). We resolve all of that into flat per-layer lists once,
so the network code never has to interpret the JSON.
"""

from __future__ import annotations

import json
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
        top = raw
        text = raw.get("text_config", raw)
        if not isinstance(text, dict):
            raise ConfigError(f"{source}: 'text_config' must be an object")

        def need(key: str) -> Any:
            if text.get(key) is None:
                raise ConfigError(f"{source}: missing required key text_config.{key}")
            return text[key]

        n_layers = int(need("num_hidden_layers"))
        layer_types = list(text.get("layer_types") or [])
        if not layer_types:  # the reference's default pattern: 5 sliding, 1 full
            layer_types = [SLIDING if (i + 1) % 6 else FULL for i in range(n_layers)]
        if len(layer_types) != n_layers:
            raise ConfigError(f"{source}: layer_types has {len(layer_types)} entries for {n_layers} layers")
        bad = [t for t in layer_types if t not in (SLIDING, FULL)]
        if bad:
            raise ConfigError(f"{source}: unsupported layer type {bad[0]!r}")
        if layer_types[-1] != FULL:  # the reference forces this too
            layer_types[-1] = FULL

        head_dim = int(need("head_dim"))
        kv_heads = int(need("num_key_value_heads"))
        n_heads = int(need("num_attention_heads"))
        per_layer = text.get("per_layer_config")
        if per_layer is None:  # older configs: global_head_dim / num_global_key_value_heads on full layers
            full_override: dict[str, Any] = {"head_dim": text.get("global_head_dim", 512)}
            if text.get("num_global_key_value_heads") is not None:
                full_override["num_key_value_heads"] = text["num_global_key_value_heads"]
            per_layer = {str(i): full_override for i, t in enumerate(layer_types) if t == FULL}
        layer_head_dim, layer_kv = [], []
        for i in range(n_layers):
            over = per_layer.get(str(i), per_layer.get(i, {})) or {}
            layer_head_dim.append(int(over.get("head_dim", head_dim)))
            layer_kv.append(int(over.get("num_key_value_heads", kv_heads)))
            if n_heads % layer_kv[-1]:
                raise ConfigError(f"{source}: layer {i}: {n_heads} heads not divisible by {layer_kv[-1]} KV heads")

        rope_raw = text.get("rope_parameters") or {
            SLIDING: {"rope_type": "default", "rope_theta": 10_000.0},
            FULL: {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1_000_000.0},
        }
        rope: dict[str, RopeSpec] = {}
        for lt in set(layer_types):
            spec = rope_raw.get(lt)
            if spec is None:
                raise ConfigError(f"{source}: rope_parameters has no entry for {lt}")
            kind = spec.get("rope_type", "default")
            if kind not in ("default", "proportional"):
                raise ConfigError(f"{source}: rope_type {kind!r} is not supported")
            rope[lt] = RopeSpec(float(spec["rope_theta"]), float(spec.get("partial_rotary_factor", 1.0)), kind)

        act = text.get("hidden_activation", "gelu_pytorch_tanh")
        if act not in ("gelu_pytorch_tanh", "gelu_tanh"):
            raise ConfigError(f"{source}: hidden_activation {act!r} is not supported")
        eos = text.get("eos_token_id", top.get("eos_token_id", 1))
        eos_ids = [int(e) for e in (eos if isinstance(eos, list) else [eos]) if e is not None]
        extra = top.get("dgcomplete") or {}
        diffusion = DiffusionOptions(**{k: v for k, v in extra.items() if k in DiffusionOptions.__dataclass_fields__})
        if diffusion.mode not in ("uniform", "mask"):
            raise ConfigError(f"{source}: dgcomplete.mode must be 'uniform' or 'mask'")
        if diffusion.mode == "mask" and diffusion.mask_token_id is None:
            raise ConfigError(f"{source}: dgcomplete.mode 'mask' needs dgcomplete.mask_token_id")
        n_exp = int(text.get("num_experts") or 0)
        cfg = cls(
            vocab_size=int(need("vocab_size")),
            hidden_size=int(need("hidden_size")),
            intermediate_size=int(need("intermediate_size")),
            num_hidden_layers=n_layers,
            num_attention_heads=n_heads,
            layer_types=layer_types,
            layer_head_dim=layer_head_dim,
            layer_kv_heads=layer_kv,
            rope=rope,
            sliding_window=int(text.get("sliding_window", 512)),
            rms_norm_eps=float(text.get("rms_norm_eps", 1e-6)),
            final_logit_softcapping=text.get("final_logit_softcapping", 30.0),
            hidden_activation=act,
            num_experts=n_exp,
            top_k_experts=int(text.get("top_k_experts") or 0),
            moe_intermediate_size=int(text.get("moe_intermediate_size") or 0),
            tie_word_embeddings=bool(top.get("tie_word_embeddings", text.get("tie_word_embeddings", True))),
            max_position_embeddings=int(text.get("max_position_embeddings", 131072)),
            canvas_length=int(top.get("canvas_length") or 256),
            pad_token_id=int(text.get("pad_token_id") if text.get("pad_token_id") is not None else 0),
            eos_token_ids=eos_ids,
            bos_token_id=text.get("bos_token_id"),
            diffusion=diffusion,
        )
        if cfg.moe and (cfg.top_k_experts <= 0 or cfg.moe_intermediate_size <= 0):
            raise ConfigError(f"{source}: num_experts set but top_k_experts/moe_intermediate_size missing")
        return cfg

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
