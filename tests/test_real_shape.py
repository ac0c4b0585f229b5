"""bench.real_shape runs on CPU at a tiny shape: the JSON it writes and ours == reference at that shape.

The GPU run (issue #19) is the same code at the real shape; this proves it end to end before a GPU comes.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from dgcomplete.model.network import Experts


def test_tiny_run_writes_every_field_and_matches_the_reference(tmp_path):
    pytest.importorskip("transformers")
    from bench import real_shape

    out = tmp_path / "real_shape.json"
    real_shape.main(["--scale", "tiny", "--device", "cpu", "--threads", "1", "--reps", "1", "--out", str(out)])
    r = json.loads(out.read_text())
    assert r["device"]["type"] == "cpu" and r["versions"]["torch"] == torch.__version__
    assert r["versions"]["transformers"] and r["settings"]["dtype"] == "float32"
    assert r["settings"]["committed_per_step"] == [1, 8, 20]
    shape = real_shape.SHAPES["tiny"]
    assert r["shape"]["layers"] == shape.layers and r["shape"]["parameters"] > r["shape"]["active_parameters_per_token"]
    for who in ("ours", "reference"):
        steps = r[who]["decoder_step"]
        assert [s["context"] for s in steps] == list(shape.contexts)
        assert all(s["median_ms"] > 0 and set(s["tokens_per_s_at_committed_per_step"]) == {"1", "8", "20"}
                   for s in steps)
        assert r[who]["ar_step"]["median_ms"] > 0 and r[who]["peak_memory_gb"] > 0
    dn = r["ours"]["denoise"]
    assert dn["steps"] == shape.denoise_steps and dn["ms_per_step"] > 0
    assert all(s["logits_max_abs_diff_vs_auto"] == 0.0 for s in r["ours"]["decoder_step_moe_loop_dispatch"])
    # the reference runs on our very tensors: same logits (decoder step with self-conditioning, AR head)
    assert r["parity"]["decoder_logits_max_abs_diff"] <= 1e-4
    assert r["parity"]["ar_logits_max_abs_diff"] <= 1e-4
    assert set(r["ours_over_reference_decoder_step"]) == {str(c) for c in shape.contexts}


def test_real_shape_config_is_the_documented_checkpoint():
    from bench import real_shape
    from dgcomplete.model import ModelConfig

    cfg = ModelConfig.from_dict(real_shape.config_json(real_shape.SHAPES["full"]))
    assert round(cfg.num_parameters() / 1e9, 2) == 25.25
    assert [i for i in range(30) if not cfg.is_sliding(i)] == [5, 11, 17, 23, 29]
    assert cfg.layer_head_dim[5] == 512 and cfg.layer_kv_heads[5] == 2 and cfg.layer_kv_heads[0] == 8


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("experts, tokens, top_k", [(4, 7, 2), (32, 64, 8), (8, 1, 3), (16, 3, 8)])
def test_sorted_moe_dispatch_equals_the_expert_loop_bit_for_bit(dtype, experts, tokens, top_k):
    """The inference dispatch (sort by expert, one host sync) adds the same terms in the same order."""
    ex = Experts(SimpleNamespace(num_experts=experts, hidden_size=64, moe_intermediate_size=32))
    g = torch.Generator().manual_seed(experts * tokens)
    with torch.no_grad():
        ex.gate_up_proj.copy_(torch.randn(ex.gate_up_proj.shape, generator=g))
        ex.down_proj.copy_(torch.randn(ex.down_proj.shape, generator=g))
        ex.to(dtype)
        x = torch.randn(tokens, 64, generator=g).to(dtype)
        w, idx = torch.topk(torch.randn(tokens, experts, generator=g).softmax(-1), top_k)
        w = w / w.sum(-1, keepdim=True)
        want = ex._forward_loop(x, w, idx)
        for grouped in (False, True):  # grouped: F.grouped_mm (the CUDA path; its CPU fallback here)
            assert torch.equal(ex._forward_sorted(x, w, idx, grouped=grouped), want)
        assert torch.equal(ex(x, w, idx), want)  # "auto" under no_grad
    trained = ex(x, w, idx)  # gradients on (training): the loop, differentiable
    assert trained.requires_grad and torch.equal(trained.detach(), want)
