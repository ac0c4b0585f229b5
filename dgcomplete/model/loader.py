"""Load a DiffusionGemma checkpoint directory (Google's or ours) into :class:`DiffusionGemma`.

A directory holds ``config.json``, ``model.safetensors`` or a sharded ``model.safetensors.index.json``,
``tokenizer.json`` and optionally ``generation_config.json``. Tensors keep their Hugging Face names; the
vision tower is skipped. Any problem becomes one :class:`CheckpointError` naming the file and tensor —
never a silent random init, never pickle.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from .config import ConfigError, ModelConfig
from .network import DiffusionGemma
from .tokenizer import Tokenizer, TokenizerError

log = logging.getLogger(__name__)

DECODER = "model.decoder."
ENCODER_SCALAR = "model.encoder.language_model.layers.{}.layer_scalar"
SKIPPED_PREFIXES = ("model.encoder.vision_tower.", "model.encoder.embed_vision.", "model.encoder.embed_audio.")


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded; the message is meant for the user as is."""


# The `steps` setting is capped at this too (settings.SPEC): a checkpoint may not ask for more.
MAX_DENOISING_STEPS = 256


@dataclass
class SamplerDefaults:
    """Diffusion settings from ``generation_config.json`` (reference defaults when absent or null)."""

    max_denoising_steps: int = 48
    entropy_bound: float = 0.1
    t_min: float = 0.4
    t_max: float = 0.8
    stability_threshold: int = 1
    confidence_threshold: float = 0.005
    eos_token_ids: list[int] = field(default_factory=list)
    # ours, not the reference's: feed the last step's beliefs back (the reference always does); a model may
    # turn it off where it measured no gain (mask mode: the committed tokens already carry the information)
    self_conditioning: bool = True
    # ours: a span ends only at its leftmost open slot (models trained with ``--length-target end``)
    frontier_stop: bool = False

    @classmethod
    def from_file(cls, path: Path, eos_fallback: list[int], vocab_size: int | None = None) -> SamplerDefaults:
        """Read and bound every value; ``max_denoising_steps`` above the cap is lowered to it with a warning."""
        d = cls(eos_token_ids=list(eos_fallback))
        if not path.exists():
            return d
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise CheckpointError(f"{path.name}: unreadable JSON ({e})") from e
        if not isinstance(raw, dict):
            raise CheckpointError(f"{path.name}: expected a JSON object")
        sampler = raw.get("sampler_config")
        if sampler is not None and not isinstance(sampler, dict):
            raise CheckpointError(f"{path.name}: sampler_config = {sampler!r:.60}, expected an object")
        steps = _gen_value(path, raw, "max_denoising_steps", int, 1, None)
        if steps is not None:
            if steps > MAX_DENOISING_STEPS:
                log.warning("%s: max_denoising_steps %d capped at %d", path.name, steps, MAX_DENOISING_STEPS)
                steps = MAX_DENOISING_STEPS
            d.max_denoising_steps = steps
        # temperatures as the reference bounds them (t_max > t_min >= 0), plus finite and < 100
        for key, kind, lo, hi in (("t_min", float, 0.0, 100.0), ("t_max", float, 0.0, 100.0),
                                  ("stability_threshold", int, 0, MAX_DENOISING_STEPS),
                                  ("confidence_threshold", float, 0.0, 100.0)):
            value = _gen_value(path, raw, key, kind, lo, hi)
            if value is not None:
                setattr(d, key, value)
        if d.t_max <= d.t_min:
            raise CheckpointError(f"{path.name}: t_max = {d.t_max} must be greater than t_min = {d.t_min}")
        bound = _gen_value(path, sampler or {}, "entropy_bound", float, 0.0, 1e4, "sampler_config.")
        if bound is not None:
            d.entropy_bound = bound
        if raw.get("self_conditioning") is not None:
            if not isinstance(raw["self_conditioning"], bool):
                raise CheckpointError(f"{path.name}: self_conditioning = {raw['self_conditioning']!r:.60}, "
                                      "expected true or false")
            d.self_conditioning = raw["self_conditioning"]
        if raw.get("frontier_stop") is not None:
            if not isinstance(raw["frontier_stop"], bool):
                raise CheckpointError(f"{path.name}: frontier_stop = {raw['frontier_stop']!r:.60}, expected true or false")
            d.frontier_stop = raw["frontier_stop"]
        eos = raw.get("eos_token_id")
        if eos is not None:
            ids = eos if isinstance(eos, list) else [eos]
            hi = (vocab_size or 1 << 31) - 1
            if len(ids) > 64 or not all(_is_id(e, hi) for e in ids):
                raise CheckpointError(f"{path.name}: eos_token_id = {eos!r:.60}, expected up to 64 token ids "
                                      f"in [0, {hi}]")
            d.eos_token_ids = list(ids)
        return d


def _is_id(value: Any, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= hi


def _gen_value(path: Path, raw: dict[str, Any], key: str, kind: type, lo: float, hi: float | None,
               prefix: str = "") -> Any:
    """One bounded number from generation_config.json (null: keep the default)."""
    value = raw.get(key)
    if value is None:
        return None
    is_num = isinstance(value, int) if kind is int else isinstance(value, (int, float))
    top = "" if hi is None else f", {hi:g}"
    want = f"an integer in [{lo:g}{top or ', ...'}]" if kind is int else f"a finite number in [{lo:g}{top}]"
    if isinstance(value, bool) or not is_num or (isinstance(value, float) and not math.isfinite(value)) or value < lo or (
            hi is not None and value > hi):
        raise CheckpointError(f"{path.name}: {prefix}{key} = {value!r:.60}, expected {want}")
    return kind(value)


def available_memory(device: torch.device) -> tuple[int, str] | None:
    """Bytes free for new tensors on ``device`` and where the figure comes from; None when unknown."""
    if device.type == "cuda":
        try:
            free, _ = torch.cuda.mem_get_info(device)
        except (RuntimeError, AssertionError):
            return None
        return int(free), f"free memory on {device}"
    if device.type != "cpu":
        return None
    found: list[tuple[int, str]] = []
    try:
        import psutil  # optional (the bench extra); /proc/meminfo says the same on Linux

        found.append((int(psutil.virtual_memory().available), "available RAM"))
    except ImportError:
        try:
            for line in Path("/proc/meminfo").read_text().splitlines():
                if line.startswith("MemAvailable:"):
                    found.append((int(line.split()[1]) * 1024, "MemAvailable in /proc/meminfo"))
        except (OSError, ValueError, IndexError):
            pass
    try:  # a container's own limit (cgroup v2) can be far below the machine's free RAM
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
            found.append((max(0, int(limit) - used), "the container's memory limit (cgroup memory.max)"))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def memory_estimate(cfg: ModelConfig, dtype: torch.dtype) -> int:
    """Bytes loading needs: all weights in ``dtype``, one tensor converted on the way, one canvas's logits."""
    item = torch.empty((), dtype=dtype).element_size()
    work = 4 * 4 * cfg.canvas_length * cfg.vocab_size  # fp32 logits, probabilities and their soft embedding
    return (cfg.num_parameters() + cfg.largest_tensor()) * item + work


def check_memory(cfg: ModelConfig, device: torch.device, dtype: torch.dtype,
                 available: tuple[int, str] | None = None) -> None:
    """Refuse, before allocating, a network whose weights cannot fit; say the numbers."""
    need = memory_estimate(cfg, dtype)
    have = available if available is not None else available_memory(device)
    if have is None:
        log.debug("cannot tell free memory on %s; skipping the size check (%.2f GB needed)", device, need / 1e9)
        return
    if need > have[0]:
        raise CheckpointError(
            f"config.json implies {cfg.num_parameters() / 1e9:.3g} B parameters, about {need / 1e9:.3g} GB in "
            f"{str(dtype).removeprefix('torch.')} on {device}, but only {have[0] / 1e9:.3g} GB is free "
            f"({have[1]}); refusing to load (use a machine with more memory or a smaller dtype)"
        )


@dataclass
class LoadedModel:
    model: DiffusionGemma
    config: ModelConfig
    tokenizer: Tokenizer
    sampler_defaults: SamplerDefaults
    path: Path
    skipped: int = 0  # tensors skipped (vision tower)

    @property
    def name(self) -> str:
        return self.path.name


def default_dtype(device: torch.device) -> torch.dtype:
    """fp32 on CPU (bf16 is 5-28x slower on AVX2-only CPUs), bf16 on accelerators."""
    return torch.float32 if device.type == "cpu" else torch.bfloat16


def weight_files(root: Path) -> list[Path]:
    """A checkpoint's weight files: model.safetensors, or the shards its index names (all present)."""
    single = root / "model.safetensors"
    index = root / "model.safetensors.index.json"
    if single.exists():
        return [single]
    if index.exists():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError) as e:
            raise CheckpointError(f"{index.name}: not a valid safetensors index ({e})") from e
        files = sorted({root / f for f in weight_map.values()})
        missing = [f.name for f in files if not f.exists()]
        if missing:
            raise CheckpointError(f"{index.name}: shard {missing[0]} is missing")
        return files
    raise CheckpointError(f"{root}: no model.safetensors or model.safetensors.index.json")


def _our_name(hf_name: str, n_layers: int) -> str | None:
    """Map a Hugging Face tensor name to ours; None for tensors text-only use does not need."""
    if hf_name.startswith(DECODER):
        return hf_name[len(DECODER) :]
    if hf_name.startswith("model.encoder.language_model.layers.") and hf_name.endswith(".layer_scalar"):
        return f"layers.{hf_name.split('.')[4]}.encoder_layer_scalar"
    if hf_name == "lm_head.weight":
        return "lm_head.weight"
    return None


def load_model(
    path: str | Path, *, device: str | torch.device = "cpu", dtype: torch.dtype | None = None
) -> LoadedModel:
    root = Path(path)
    if not root.is_dir():
        raise CheckpointError(f"{root}: model directory not found")
    try:
        cfg = ModelConfig.from_file(root / "config.json")
    except ConfigError as e:
        raise CheckpointError(str(e)) from e
    except (TypeError, ValueError, KeyError, AttributeError) as e:  # a shape validation did not foresee
        raise CheckpointError(f"config.json: invalid value ({type(e).__name__}: {e})") from e
    device = torch.device(device)
    dtype = dtype or default_dtype(device)
    # Before anything is built: bad generation settings and a network too big for this machine fail in
    # milliseconds with the numbers, not after minutes of loading (or an out-of-memory kill).
    defaults = SamplerDefaults.from_file(root / "generation_config.json", cfg.eos_token_ids, cfg.vocab_size)
    check_memory(cfg, device, dtype)
    with torch.device("meta"):
        model = DiffusionGemma(cfg)
    expected = dict(model.state_dict())
    # Self-conditioning post-norm has no weight; checkpoints name the MLP under self_conditioning.*
    state: dict[str, torch.Tensor] = {}
    skipped = 0
    for file in weight_files(root):
        try:
            with safe_open(str(file), framework="pt", device="cpu") as f:
                for hf_name in f.keys():  # noqa: SIM118 - safe_open is not a dict
                    ours = _our_name(hf_name, cfg.num_hidden_layers)
                    if ours is None:
                        if hf_name.startswith(SKIPPED_PREFIXES):
                            skipped += 1
                        else:
                            log.warning("%s: ignoring unexpected tensor %s", file.name, hf_name)
                        continue
                    if ours == "lm_head.weight" and cfg.tie_word_embeddings:
                        continue
                    if ours not in expected:
                        raise CheckpointError(f"{file.name}: tensor {hf_name} does not fit this config")
                    t = f.get_tensor(hf_name)
                    want = tuple(expected[ours].shape)
                    if tuple(t.shape) != want:
                        raise CheckpointError(
                            f"{file.name}: tensor {hf_name} has shape {tuple(t.shape)}, config.json implies {want}"
                        )
                    state[ours] = t.to(device=device, dtype=dtype if t.is_floating_point() else t.dtype)
        except SafetensorError as e:
            raise CheckpointError(f"{file.name}: corrupt or truncated safetensors file ({e})") from e
        except OSError as e:
            raise CheckpointError(f"{file.name}: cannot read ({e})") from e
    if skipped:
        log.info("skipped %d vision-tower tensors (text-only use)", skipped)
    missing = sorted(set(expected) - set(state))
    # Checkpoints from before the encoder/decoder split may lack the encoder's scalars: that is not an error
    # only when the decoder has them too (identical halves); anything else missing is.
    for name in list(missing):
        if name.endswith("encoder_layer_scalar"):
            state[name] = state.get(name.replace("encoder_layer_scalar", "layer_scalar"), torch.ones(1)).clone()
            missing.remove(name)
    if missing:
        hf = DECODER + missing[0] if "encoder_layer_scalar" not in missing[0] else missing[0]
        raise CheckpointError(f"{root.name}: tensor {hf} is missing from the checkpoint ({len(missing)} missing)")
    model.load_state_dict(state, assign=True, strict=True)
    model.eval()
    try:
        tokenizer = Tokenizer.from_dir(root, cfg)
    except TokenizerError as e:
        raise CheckpointError(str(e)) from e
    if tokenizer.vocab_size > cfg.vocab_size:
        raise CheckpointError(
            f"tokenizer.json has {tokenizer.vocab_size} tokens but config.json vocab_size is {cfg.vocab_size}"
        )
    return LoadedModel(model, cfg, tokenizer, defaults, root, skipped)


def hf_state_dict(model: DiffusionGemma) -> dict[str, torch.Tensor]:
    """Our parameters under Hugging Face names (what `save_pretrained` writes for the text network)."""
    out: dict[str, torch.Tensor] = {}
    for name, t in model.state_dict().items():
        if name.endswith("encoder_layer_scalar"):
            out[ENCODER_SCALAR.format(name.split(".")[1])] = t
        elif name.startswith("lm_head."):
            out[name] = t
        else:
            out[DECODER + name] = t
    return out


def save_checkpoint(
    model: DiffusionGemma,
    out_dir: str | Path,
    *,
    tokenizer_json: str | Path | None = None,
    generation: dict[str, Any] | None = None,
    dtype: torch.dtype = torch.float32,
    max_shard_bytes: int | None = None,
) -> Path:
    """Write an HF-layout directory that :func:`load_model` (and `transformers`, for MoE configs) can read.

    With ``max_shard_bytes`` the weights are split into ``model-0000i-of-0000n.safetensors`` files plus
    ``model.safetensors.index.json`` (the Hugging Face sharded layout), e.g. to fit a per-file size limit.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to("cpu", dtype if v.is_floating_point() else v.dtype).contiguous()
               for k, v in hf_state_dict(model).items()}
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    if max_shard_bytes is None or total <= max_shard_bytes:
        save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    else:
        shards: list[dict[str, torch.Tensor]] = [{}]
        size = 0
        for name, t in tensors.items():
            nbytes = t.numel() * t.element_size()
            if shards[-1] and size + nbytes > max_shard_bytes:
                shards.append({})
                size = 0
            shards[-1][name] = t
            size += nbytes
        weight_map = {}
        for i, shard in enumerate(shards, 1):
            fname = f"model-{i:05d}-of-{len(shards):05d}.safetensors"
            save_file(shard, str(out / fname), metadata={"format": "pt"})
            weight_map.update({name: fname for name in shard})
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    (out / "config.json").write_text(json.dumps(model.cfg.to_hf_dict(), indent=2) + "\n")
    gen = {
        "max_denoising_steps": 48, "t_min": 0.4, "t_max": 0.8, "stability_threshold": 1,
        "confidence_threshold": 0.005, "sampler_config": {"entropy_bound": 0.1, "_cls_name": "EntropyBoundSamplerConfig"},
        "eos_token_id": model.cfg.eos_token_ids, "pad_token_id": model.cfg.pad_token_id,
    }
    gen.update(generation or {})
    (out / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
    if tokenizer_json is not None:
        src = Path(tokenizer_json)
        if src.resolve() != (out / "tokenizer.json").resolve():
            (out / "tokenizer.json").write_bytes(src.read_bytes())
    return out
