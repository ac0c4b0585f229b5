"""config.json / generation_config.json are validated and bounded before the network is allocated (issue #18).

Each attack edits the config of a real tiny checkpoint on disk and loads it with the real loader. The loader's
network constructor is replaced by one that fails the test: a bad value must be refused *before* anything is
built (old code built a 20000-layer network for 87 s, or a head_dim of 2^28 for ~2 GB, before any error).
"""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

from dgcomplete.model import CheckpointError, ModelConfig, load_model
from dgcomplete.model import loader as loader_mod
from dgcomplete.model.network import DiffusionGemma

from .helpers import make_tiny_checkpoint

# google/diffusiongemma-26B-A4B-it's text config (shared docs: diffusiongemma.md), as config.json spells it
REAL_TEXT_CONFIG: dict[str, Any] = {
    "model_type": "diffusion_gemma_text", "vocab_size": 262144, "hidden_size": 2816, "intermediate_size": 2112,
    "num_hidden_layers": 30, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
    "global_head_dim": 512, "num_global_key_value_heads": 2, "sliding_window": 1024, "num_experts": 128,
    "top_k_experts": 8, "moe_intermediate_size": 704, "final_logit_softcapping": 30.0, "rms_norm_eps": 1e-6,
    "max_position_embeddings": 131072, "pad_token_id": 0, "eos_token_id": [1, 106, 50], "bos_token_id": 2,
    "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True, "attention_bias": False,
}
REAL_FULL_LAYERS = [5, 11, 17, 23, 29]


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("validation") / "tiny")


@pytest.fixture
def ckpt(tiny_ckpt, tmp_path) -> Path:
    return Path(shutil.copytree(tiny_ckpt, tmp_path / "ckpt"))


@pytest.fixture
def no_build(monkeypatch):
    """Any attempt to build the network fails the test: validation has to come first."""

    def refuse(*_a: Any, **_k: Any) -> None:
        raise AssertionError("the network was built before the config was validated")

    monkeypatch.setattr(loader_mod, "DiffusionGemma", refuse)


def edit(ckpt: Path, text: dict[str, Any] | None = None, drop: tuple[str, ...] = (), top: dict[str, Any] | None = None,
         file: str = "config.json") -> None:
    path = ckpt / file
    raw = json.loads(path.read_text())
    section = raw.get("text_config", raw) if file == "config.json" else raw
    for key in drop:
        section.pop(key, None)
    section.update(text or {})
    raw.update(top or {})
    path.write_text(json.dumps(raw))  # allow_nan: NaN is what a hostile file can hold


def test_the_unedited_copy_loads(ckpt):
    assert load_model(ckpt).config.num_hidden_layers == 2


# ---- config.json --------------------------------------------------------------------------------------------
def test_wrong_type_is_a_checkpoint_error_naming_key_value_and_bound(ckpt, no_build):
    # old code: int("four") raised a bare ValueError, which the server does not catch (the load died silently)
    edit(ckpt, {"num_attention_heads": "four"})
    with pytest.raises(CheckpointError, match=r"config\.json: text_config\.num_attention_heads = 'four', "
                                              r"expected an integer in \[1, 1024\]"):
        load_model(ckpt)


@pytest.mark.parametrize("key, value", [("hidden_size", 32.5), ("layer_types", "full_attention"),
                                        ("rope_parameters", [1, 2]), ("per_layer_config", [16])])
def test_other_wrong_types_are_refused(ckpt, no_build, key, value):
    edit(ckpt, {key: value})
    with pytest.raises(CheckpointError, match=rf"text_config\.{key} = .*expected"):
        load_model(ckpt)


def test_top_level_values_are_checked_too(ckpt, no_build):
    edit(ckpt, top={"tie_word_embeddings": "yes"})
    with pytest.raises(CheckpointError, match=r"config\.json: tie_word_embeddings = 'yes', expected true or false"):
        load_model(ckpt)


def test_huge_head_dim_is_refused_before_allocating(ckpt, no_build):
    # old code: an empty per_layer_config applies head_dim to every layer; ~2 GB allocated before the error
    edit(ckpt, {"head_dim": 2**28, "per_layer_config": {}})
    with pytest.raises(CheckpointError, match=r"text_config\.head_dim = 268435456, expected an integer in \[2, 4096\]"):
        load_model(ckpt)


def test_huge_layer_count_is_refused_before_building(ckpt, no_build):
    # old code: 20000 layers (default layer pattern) took 87 s to build and could not be cancelled
    edit(ckpt, {"num_hidden_layers": 20000}, drop=("layer_types", "per_layer_config"))
    with pytest.raises(CheckpointError, match=r"num_hidden_layers = 20000, expected an integer in \[1, 512\]"):
        load_model(ckpt)


@pytest.mark.parametrize("key, value, bound", [
    ("sliding_window", 0, r"an integer in \[1, "),  # old code: ready, every completion empty (all-masked rows)
    ("rms_norm_eps", math.nan, r"a finite number in \(0, 0\.1\]"),  # old code: ready, NaN logits
    ("rms_norm_eps", -1e-6, r"a finite number in \(0, 0\.1\]"),
    ("final_logit_softcapping", math.inf, r"a finite number in \(0, 10000\]"),
    ("final_logit_softcapping", -30.0, r"a finite number in \(0, 10000\]"),
    ("max_position_embeddings", -5, r"an integer in \[1, "),
    ("num_experts", 10**9, r"an integer in \[0, 4096\]"),
])
def test_degenerate_values_are_refused(ckpt, no_build, key, value, bound):
    edit(ckpt, {key: value})
    with pytest.raises(CheckpointError, match=rf"config\.json: text_config\.{key} = .*expected {bound}"):
        load_model(ckpt)


def test_nested_values_are_checked_too(ckpt, no_build):
    raw = json.loads((ckpt / "config.json").read_text())
    rope = raw["text_config"]["rope_parameters"]
    rope["full_attention"]["rope_theta"] = math.nan
    edit(ckpt, {"rope_parameters": rope})
    with pytest.raises(CheckpointError, match=r"rope_parameters\.full_attention\.rope_theta = nan"):
        load_model(ckpt)


@pytest.mark.parametrize("text, top, pattern", [
    ({"eos_token_id": 10**6}, None, r"eos_token_id = 1000000, expected a token id in \[0, \d+\]"),
    ({"pad_token_id": -1}, None, r"pad_token_id = -1, expected a token id"),
    (None, {"dgcomplete": {"mode": "mask", "mask_token_id": 5000}}, r"dgcomplete\.mask_token_id = 5000"),
])
def test_token_ids_must_lie_in_the_vocabulary(ckpt, no_build, text, top, pattern):
    edit(ckpt, text, top=top)
    with pytest.raises(CheckpointError, match=pattern):
        load_model(ckpt)


@pytest.mark.parametrize("per_layer, pattern", [
    ({"99": {"head_dim": 16}}, r"per_layer_config key '99' is not a layer index in \[0, 1\]"),  # old: ignored
    ({"1": {"head_dim": 16, "sliding_window": 4}}, r"per_layer_config\.1\.sliding_window is not supported"),
    ({"1": {"num_key_value_heads": "one"}}, r"per_layer_config\.1\.num_key_value_heads = 'one'"),
])
def test_per_layer_overrides_must_name_real_layers_and_known_keys(ckpt, no_build, per_layer, pattern):
    edit(ckpt, {"per_layer_config": per_layer})
    with pytest.raises(CheckpointError, match=pattern):
        load_model(ckpt)


def test_a_network_too_big_for_memory_is_refused_with_the_numbers(ckpt, no_build, monkeypatch):
    # every value within its own bound, but the product is ~0.5 T parameters; old code built it on the meta
    # device and only failed (if at all) on the first tensor shape
    edit(ckpt, {"hidden_size": 8192, "intermediate_size": 1 << 18, "num_hidden_layers": 80, "num_attention_heads": 2},
         drop=("layer_types", "per_layer_config"))
    monkeypatch.setattr(loader_mod, "available_memory", lambda device: (64 * 10**9, "test RAM"))
    with pytest.raises(CheckpointError, match=r"config\.json implies \d+(\.\d+)? B parameters, about [\d.e+]+ GB "
                                              r"in float32 on cpu, but only 64 GB is free \(test RAM\)"):
        load_model(ckpt)


def test_memory_check_uses_this_machine_when_not_told(ckpt, no_build):
    edit(ckpt, {"hidden_size": 65536, "intermediate_size": 1 << 18, "num_hidden_layers": 512, "num_attention_heads": 2},
         drop=("layer_types", "per_layer_config"))
    with pytest.raises(CheckpointError, match=r"B parameters, .* GB is free"):  # 26 T parameters fit nowhere
        load_model(ckpt)


# ---- generation_config.json ---------------------------------------------------------------------------------
def test_max_denoising_steps_is_capped_with_a_warning(ckpt, caplog):
    # old code: 10^9 steps per canvas, every completion ran forever (the `steps` setting is capped, this was not)
    edit(ckpt, {"max_denoising_steps": 10**9}, file="generation_config.json")
    with caplog.at_level(logging.WARNING, logger="dgcomplete"):
        loaded = load_model(ckpt)
    assert loaded.sampler_defaults.max_denoising_steps == loader_mod.MAX_DENOISING_STEPS == 256
    assert any("max_denoising_steps 1000000000 capped at 256" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("gen, pattern", [
    ({"t_min": math.nan}, r"generation_config\.json: t_min = nan, expected a finite number"),
    ({"t_max": "hot"}, r"t_max = 'hot', expected a finite number"),
    ({"t_max": 10**400}, r"t_max = 1000+, expected a finite number"),  # an int too big for a float
    ({"max_denoising_steps": 0}, r"max_denoising_steps = 0, expected an integer in \[1, \.\.\.\]"),
    ({"max_denoising_steps": 12.5}, r"max_denoising_steps = 12\.5, expected an integer"),
    ({"stability_threshold": -1}, r"stability_threshold = -1"),
    ({"confidence_threshold": math.inf}, r"confidence_threshold = inf"),
    ({"sampler_config": {"entropy_bound": -0.1}}, r"sampler_config\.entropy_bound = -0\.1"),
    ({"t_min": 0.9, "t_max": 0.5}, r"t_max = 0\.5 must be greater than t_min = 0\.9"),
    ({"eos_token_id": [1, 10**7]}, r"eos_token_id = \[1, 10000000\], expected up to 64 token ids in \[0, \d+\]"),
    ({"self_conditioning": "no"}, r"self_conditioning = 'no', expected true or false"),
])
def test_generation_values_are_bounded(ckpt, no_build, gen, pattern):
    edit(ckpt, gen, file="generation_config.json")
    with pytest.raises(CheckpointError, match=pattern):
        load_model(ckpt)


# ---- the real checkpoint's config still loads ----------------------------------------------------------------
def real_config_json() -> dict[str, Any]:
    return {"architectures": ["DiffusionGemmaForBlockDiffusion"], "model_type": "diffusion_gemma",
            "canvas_length": 256, "tie_word_embeddings": True, "text_config": dict(REAL_TEXT_CONFIG),
            "vision_config": {"model_type": "gemma4_vision", "hidden_size": 768}}


def check_real(cfg: ModelConfig) -> None:
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.vocab_size, cfg.num_experts, cfg.top_k_experts) == (
        30, 2816, 262144, 128, 8)
    assert [i for i in range(30) if not cfg.is_sliding(i)] == REAL_FULL_LAYERS
    assert [cfg.layer_head_dim[i] for i in (0, 5)] == [256, 512] and [cfg.layer_kv_heads[i] for i in (0, 5)] == [8, 2]
    assert cfg.sliding_window == 1024 and cfg.canvas_length == 256 and cfg.eos_token_ids == [1, 106, 50]
    assert round(cfg.num_parameters() / 1e9, 2) == 25.25  # the documented text-parameter count


def test_real_google_config_parses_unchanged_and_its_size_is_exact():
    cfg = ModelConfig.from_dict(real_config_json())
    check_real(cfg)
    with torch.device("meta"):  # the estimate used before allocating is the network's exact count
        assert sum(p.numel() for p in DiffusionGemma(cfg).parameters()) == cfg.num_parameters()


def test_real_config_as_transformers_writes_it():
    """transformers writes per_layer_config keys zero-padded ("05") for 10+ layers; old code missed them."""
    transformers = pytest.importorskip("transformers")
    text = {k: v for k, v in REAL_TEXT_CONFIG.items() if k not in ("model_type", "attention_bias")}
    raw = json.loads(transformers.DiffusionGemmaConfig(text_config=text).to_json_string())
    assert "05" in raw["text_config"]["per_layer_config"]
    check_real(ModelConfig.from_dict(raw))


def test_real_config_memory_check_refuses_only_when_it_does_not_fit():
    cfg = ModelConfig.from_dict(real_config_json())
    gpu = torch.device("cuda")
    loader_mod.check_memory(cfg, gpu, torch.bfloat16, available=(139 * 2**30, "an H200"))  # ~52 GB: fits
    loader_mod.check_memory(cfg, torch.device("cpu"), torch.float32, available=(120 * 10**9, "a big machine"))
    with pytest.raises(CheckpointError, match=r"25\.3 B parameters, about 5\d\.\d GB in bfloat16 on cuda, "
                                              r"but only 24 GB is free \(a 24 GB card\)"):
        loader_mod.check_memory(cfg, gpu, torch.bfloat16, available=(24 * 10**9, "a 24 GB card"))
