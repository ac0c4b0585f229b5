"""Parity of our network with the reference implementation (transformers 5.23, a test-only dependency).

Tiny random DiffusionGemma checkpoints are written by the reference's own `save_pretrained`, loaded with our
loader, and compared: encoder keys/values and decoder logits with and without self-conditioning, for a
prompt longer than the sliding window.
"""

from __future__ import annotations

import json
import logging

import pytest
import torch
from safetensors.torch import load_file

from dgcomplete.model import CheckpointError, load_model

transformers = pytest.importorskip("transformers")
from transformers import DiffusionGemmaConfig, DiffusionGemmaForBlockDiffusion  # noqa: E402
from transformers.cache_utils import DynamicCache  # noqa: E402

from .helpers import write_char_tokenizer  # noqa: E402

VOCAB = 96
WINDOW = 8

TEXT_CONFIGS = {
    # sliding + full layers with different head_dim and KV heads, partial rope, MoE top-2 of 4
    "mixed": dict(
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        num_hidden_layers=4, head_dim=16, global_head_dim=32, num_key_value_heads=2, num_global_key_value_heads=1,
    ),
    # the reference's default 5:1 pattern, all layers with the same KV heads, 8 experts top-3
    "default_pattern": dict(
        layer_types=None, num_hidden_layers=6, head_dim=8, global_head_dim=16, num_key_value_heads=4,
        num_global_key_value_heads=2, num_experts=8, top_k_experts=3,
    ),
}


def make_reference(tmp_path, name: str, seed: int = 0):
    tc = dict(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=48, num_attention_heads=4, sliding_window=WINDOW,
        num_experts=4, top_k_experts=2, moe_intermediate_size=24, max_position_embeddings=512,
    )
    tc.update({k: v for k, v in TEXT_CONFIGS[name].items() if v is not None})
    if tc.get("layer_types") is None:
        tc.pop("layer_types", None)
    vision = dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                  num_key_value_heads=2, head_dim=8)
    cfg = DiffusionGemmaConfig(text_config=tc, vision_config=vision, canvas_length=12)
    torch.manual_seed(seed)
    ref = DiffusionGemmaForBlockDiffusion(cfg).eval()
    with torch.no_grad():  # non-trivial norms, router scales, per-expert scales and layer scalars
        for n, p in ref.named_parameters():
            if "norm" in n or "scale" in n:
                p.copy_(1 + 0.3 * torch.randn_like(p))
        for n, b in ref.named_buffers():
            if n.endswith("layer_scalar"):
                b.copy_(0.5 + torch.rand_like(b))
    out = tmp_path / name
    ref.save_pretrained(out)
    write_char_tokenizer(out / "tokenizer.json", VOCAB)
    return ref, out


def ref_encode(ref, ids):
    cache = DynamicCache(config=ref.config.get_text_config(decoder=True))
    with torch.no_grad():
        ref.model.encoder(input_ids=ids, past_key_values=cache)
    return cache


@pytest.mark.parametrize("name", list(TEXT_CONFIGS))
def test_encoder_kv_and_decoder_logits_match_reference(tmp_path, name):
    ref, ckpt = make_reference(tmp_path, name)
    loaded = load_model(ckpt)
    ours, cfg = loaded.model, loaded.config
    g = torch.Generator().manual_seed(3)
    prompt = torch.randint(3, VOCAB, (1, 21), generator=g)  # longer than the sliding window
    canvas = torch.randint(0, VOCAB, (1, 12), generator=g)

    ref_cache = ref_encode(ref, prompt)
    cache = ours.new_cache(8)  # small capacity: exercises growth
    with torch.no_grad():
        ours.encode(prompt[:, :13], cache)  # two chunks: appends at given positions
        ours.encode(prompt[:, 13:], cache)
    assert cache.length == 21
    for i in range(cfg.num_hidden_layers):
        rk, rv = ref_cache.layers[i].keys, ref_cache.layers[i].values
        k, v = cache.read(i)
        n = rk.shape[2]  # sliding layers of the reference keep only the last window-1 entries
        if cfg.is_sliding(i):
            assert n == WINDOW - 1
        assert (k[:, :, -n:] - rk).abs().max() <= 1e-4, f"layer {i} keys"
        assert (v[:, :, -n:] - rv).abs().max() <= 1e-4, f"layer {i} values"

    sc_logits = torch.randn(1, 12, VOCAB, generator=g) * 3
    for sc in (None, sc_logits):
        with torch.no_grad():
            want = ref(past_key_values=ref_cache, decoder_input_ids=canvas, self_conditioning_logits=sc).logits
            got = ours.decode(canvas, cache, sc_logits=sc).logits
            got_probs = ours.decode(canvas, cache, sc_probs=None if sc is None else sc.softmax(-1)).logits
        assert (got - want).abs().max() <= 1e-4
        assert (got_probs - want).abs().max() <= 1e-4
    # the decoder read the cache without writing it
    assert cache.length == 21


def test_truncate_then_append_equals_fresh_encode(tmp_path):
    _, ckpt = make_reference(tmp_path, "mixed")
    ours = load_model(ckpt).model
    g = torch.Generator().manual_seed(5)
    a = torch.randint(3, VOCAB, (1, 30), generator=g)
    b = torch.randint(3, VOCAB, (1, 6), generator=g)
    canvas = torch.randint(0, VOCAB, (1, 12), generator=g)
    with torch.no_grad():
        c1 = ours.new_cache()
        ours.encode(a, c1)
        c1.truncate(24)  # the user edited after token 24
        ours.encode(b, c1)
        c2 = ours.new_cache()
        ours.encode(torch.cat([a[:, :24], b], 1), c2)
        l1 = ours.decode(canvas, c1).logits
        l2 = ours.decode(canvas, c2).logits
    assert (l1 - l2).abs().max() <= 1e-5


def test_autoregressive_head_matches_reference_causal_logits(tmp_path):
    """Our encoder's next-token head (AR baseline) is the reference encoder + final norm + tied softcapped head."""
    ref, ckpt = make_reference(tmp_path, "mixed")
    ours = load_model(ckpt).model
    prompt = torch.randint(3, VOCAB, (1, 15), generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        cache = DynamicCache(config=ref.config.get_text_config(decoder=True))
        hidden = ref.model.encoder(input_ids=prompt, past_key_values=cache).last_hidden_state
        want = torch.tanh(ref.lm_head(hidden).float() / 30.0) * 30.0
        got = ours.encode(prompt, ours.new_cache(), logits="all")
    assert (got - want).abs().max() <= 1e-4


def test_bf16_load_runs(tmp_path):
    _, ckpt = make_reference(tmp_path, "mixed")
    loaded = load_model(ckpt, dtype=torch.bfloat16)
    m = loaded.model
    assert m.dtype == torch.bfloat16
    with torch.no_grad():
        cache = m.new_cache()
        m.encode(torch.randint(3, VOCAB, (1, 10)), cache)
        out = m.decode(torch.randint(0, VOCAB, (1, 12)), cache).logits
    assert out.dtype == torch.float32 and torch.isfinite(out).all()


def test_reference_checkpoint_loads_with_only_the_vision_message(tmp_path, caplog):
    _, ckpt = make_reference(tmp_path, "mixed")
    with caplog.at_level(logging.INFO, logger="dgcomplete"):
        loaded = load_model(ckpt)
    assert loaded.skipped > 0
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == []
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(infos) == 1 and "vision" in infos[0]


def test_reference_loads_our_exported_checkpoint(tmp_path):
    """The other direction: what we save is a DiffusionGemma checkpoint the reference reads."""
    from dgcomplete.model import save_checkpoint

    _, ckpt = make_reference(tmp_path, "mixed")
    ours = load_model(ckpt).model
    out = save_checkpoint(ours, tmp_path / "export", tokenizer_json=ckpt / "tokenizer.json")
    cfg = json.loads((out / "config.json").read_text())
    cfg["vision_config"] = None
    ref2 = DiffusionGemmaForBlockDiffusion.from_pretrained(out, dtype=torch.float32).eval()
    prompt = torch.randint(3, VOCAB, (1, 11))
    canvas = torch.randint(0, VOCAB, (1, 12))
    with torch.no_grad():
        cache = ref_encode(ref2, prompt)
        want = ref2(past_key_values=cache, decoder_input_ids=canvas).logits
        c = ours.new_cache()
        ours.encode(prompt, c)
        got = ours.decode(canvas, c).logits
    assert (got - want).abs().max() <= 1e-4


def test_sharded_export_loads_in_both_implementations(tmp_path):
    """Weights split to fit a per-file limit (HF sharded layout) load in ours and in the reference alike."""
    from dgcomplete.model import save_checkpoint

    _, ckpt = make_reference(tmp_path, "mixed")
    ours = load_model(ckpt).model
    out = save_checkpoint(ours, tmp_path / "sharded", tokenizer_json=ckpt / "tokenizer.json", max_shard_bytes=20_000)
    shards = sorted(out.glob("model-*-of-*.safetensors"))
    assert len(shards) > 2 and not (out / "model.safetensors").exists()
    assert all(f.stat().st_size < 20_000 + 4096 or len(load_file(f)) == 1 for f in shards)
    again = load_model(out).model
    ref2 = DiffusionGemmaForBlockDiffusion.from_pretrained(out, dtype=torch.float32).eval()
    prompt, canvas = torch.randint(3, VOCAB, (1, 9)), torch.randint(0, VOCAB, (1, 8))
    with torch.no_grad():
        want = ref2(past_key_values=ref_encode(ref2, prompt), decoder_input_ids=canvas).logits
        for m in (ours, again):
            c = m.new_cache()
            m.encode(prompt, c)
            assert (m.decode(canvas, c).logits - want).abs().max() <= 1e-4


@pytest.mark.parametrize(
    "damage, message",
    [
        ("no_config", "config.json: not found"),
        ("bad_json", "config.json: unreadable JSON"),
        ("truncated", "corrupt or truncated"),
        ("missing_tensor", "is missing from the checkpoint"),
        ("wrong_shape", "has shape"),
        ("no_tokenizer", "tokenizer.json is missing"),
        ("unsupported", "rope_type 'yarn' is not supported"),
    ],
)
def test_broken_checkpoints_give_one_clear_error(tmp_path, damage, message):
    from safetensors.torch import load_file, save_file

    _, ckpt = make_reference(tmp_path, "mixed")
    weights = ckpt / "model.safetensors"
    if damage == "no_config":
        (ckpt / "config.json").unlink()
    elif damage == "bad_json":
        (ckpt / "config.json").write_text("{not json")
    elif damage == "truncated":
        data = weights.read_bytes()
        weights.write_bytes(data[: len(data) // 2])
    elif damage in ("missing_tensor", "wrong_shape"):
        t = load_file(str(weights))
        if damage == "missing_tensor":
            del t["model.decoder.layers.1.self_attn.q_proj.weight"]
        else:
            t["model.decoder.norm.weight"] = torch.ones(63)
        save_file(t, str(weights))
    elif damage == "no_tokenizer":
        (ckpt / "tokenizer.json").unlink()
    elif damage == "unsupported":
        c = json.loads((ckpt / "config.json").read_text())
        c["text_config"]["rope_parameters"]["sliding_attention"]["rope_type"] = "yarn"
        (ckpt / "config.json").write_text(json.dumps(c))
    with pytest.raises(CheckpointError, match=message):
        load_model(ckpt)


def test_partial_self_conditioning_equals_one_hot_on_the_rest(tmp_path):
    """Self-conditioning probabilities for the first F positions + one-hot (implicit) for the clamped rest."""
    _, ckpt = make_reference(tmp_path, "mixed")
    m = load_model(ckpt).model
    g = torch.Generator().manual_seed(2)
    canvas = torch.randint(0, VOCAB, (2, 12), generator=g)
    probs = torch.randn(2, 8, VOCAB, generator=g).softmax(-1)
    full = torch.cat([probs, torch.nn.functional.one_hot(canvas[:, 8:], VOCAB).float()], 1)
    with torch.no_grad():
        c = m.new_cache()
        m.encode(torch.randint(3, VOCAB, (1, 9), generator=g), c)
        a = m.decode(canvas, c, sc_probs=probs).logits
        b = m.decode(canvas, c, sc_probs=full).logits
    assert (a - b).abs().max() <= 1e-5
