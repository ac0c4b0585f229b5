"""bench.shape_budget at a reduced size: every row timed, parameter counts right, the keystroke sum consistent.

No wall-clock assertions (the machine may be busy): structure and consistency only.
"""

from __future__ import annotations

import json

import pytest


def test_quick_run_reports_every_shape_prefix_and_thread(tmp_path, capsys):
    import torch

    from bench import ROOT, shape_budget
    from dgcomplete.model import DiffusionGemma, ModelConfig
    from dgcomplete.models import default_model_path

    out = tmp_path / "shape_budget.json"
    daemon = tmp_path / "latest.json"  # a bench.run result: the shipped model's LSP latency to calibrate on
    daemon.write_text(json.dumps({"latency_single_line_ms": {"n": 9, "p50": 90.0, "p95": 150.0},
                                  "machine": {"cpu": "test cpu"}, "model": {"name": "dg-code-tiny"}}))
    shape_budget.main(["--quick", "--shapes", "shipped,d128x2", "--prefixes", "16,40", "--threads", "1",
                       "--int8-shapes", "d128x2", "--int8-prefix", "24", "--daemon", str(daemon), "--out", str(out)])
    printed = capsys.readouterr().out
    text = out.read_text()
    r = json.loads(text)
    assert str(ROOT) not in text and "| shape | params | prefix |" in printed
    assert r["bench"] == "shape_budget" and r["settings"]["quick"] and r["settings"]["steps"] == 3
    assert r["settings"]["int8_compiled"] is False  # --quick: no torch.compile
    assert r["machine"]["loadavg_start"] is not None and "loadavg_end" in r["machine"]

    path = default_model_path()
    shipped = ModelConfig.from_file(path / "config.json")
    with torch.device("meta"):  # the shipped network's parameter count, without loading it a second time
        shipped_params = DiffusionGemma(shipped).num_parameters(False)
    names = [s["name"] for s in r["shapes"]]
    assert names == [path.name, "d128x2"]
    ship, small = r["shapes"]
    assert ship["params"] == shipped_params == ship["params_from_config"]
    assert ship["weights"] == "trained" and ship["hidden"] == shipped.hidden_size
    cfg = shape_budget.shape_config("d128x2", shipped.vocab_size, 40)
    assert (cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads, cfg.intermediate_size) == (128, 2, 2, 512)
    assert small["params"] == DiffusionGemma(cfg).num_parameters(False) == cfg.num_parameters() == small["params_from_config"]
    assert small["params_non_embedding"] == small["params"] - cfg.vocab_size * 128

    assert sorted((x["shape"], x["prefix_tokens"], x["threads"]) for x in r["rows"]) == sorted(
        (n, p, 1) for n in names for p in (16, 40))
    reps = r["settings"]["reps"]
    cases = r["settings"]["cases"]
    assert set(cases) == {"canvas64", "typical"} and cases["canvas64"] == {"free": 48, "score_rows": 8, "score_free": 48}
    for case in cases:
        sampler = r["sampler"]["1"][case]
        assert sampler["steps"] == 3 and sampler["median_ms"] > 0
    for row in r["rows"]:
        parts = [row["encode_cold"], row["encode_append"]] + [row[c][p] for c in cases for p in ("step", "score")]
        assert all(0 < x["min_ms"] <= x["median_ms"] for x in parts)
        assert all(x["n"] == reps for x in parts[1:]) and row["kv_cache_mb"] > 0
        for case in cases:
            k, c = row["keystroke"][case], row[case]
            want = (row["encode_append"]["median_ms"] + 3 * c["step"]["median_ms"]
                    + r["sampler"]["1"][case]["median_ms"] + c["score"]["median_ms"])
            assert k["model_ms"] == pytest.approx(want, abs=0.02)
            assert k["with_overhead_ms"] == pytest.approx(k["model_ms"] + r["settings"]["overhead_ms"], abs=0.02)
            assert k["fits"] == (k["with_overhead_ms"] <= r["settings"]["budget_ms"])
            assert 0 < k["model_ms_from_min"] <= k["model_ms"] + 1e-6
    # the LSP estimate: the shipped model's measured p50/p95 scaled by each shape's typical cost over the shipped's
    assert r["daemon_reference"]["p50"] == 90.0 and r["daemon_reference"]["cpu"] == "test cpu"
    typical = {(x["shape"], x["prefix_tokens"]): x["keystroke"]["typical"]["model_ms"] for x in r["rows"]}
    for row in r["rows"]:
        e = row["daemon_estimate"]
        ratio = typical[(row["shape"], row["prefix_tokens"])] / typical[(path.name, row["prefix_tokens"])]
        assert e["ratio_to_shipped"] == pytest.approx(ratio, abs=1e-3)
        assert e["p50_ms"] == pytest.approx(90.0 * ratio, abs=0.06) and e["p95_ms"] == pytest.approx(150.0 * ratio, abs=0.06)
        assert e["fits"] == (90.0 * ratio <= 100.0 and 150.0 * ratio <= 200.0)
        if row["shape"] == path.name:
            assert e["ratio_to_shipped"] == 1.0 and e["p50_ms"] == 90.0
    assert "LSP p50 est." in printed
    longer = {x["shape"]: x["kv_cache_mb"] for x in r["rows"] if x["prefix_tokens"] == 40}
    assert all(longer[x["shape"]] > x["kv_cache_mb"] for x in r["rows"] if x["prefix_tokens"] == 16)
    assert [x["shape"] for x in r["recommendation"]] == names
    for x in r["recommendation"]:
        for case in cases:
            assert set(x[case]) == {"16", "40", "longest_fitting_prefix"} and x[case]["16"]["threads"] == 1
        assert x["typical"]["40"]["daemon_estimate"]["p50_ms"] > 0

    q = r["int8"]
    assert q["prefix_tokens"] == 24
    if not q["available"]:  # torchao is optional: what failed is recorded
        assert q["error"]
        return
    e = q["shapes"]["d128x2"]
    assert "compiled" not in e
    fp32 = e["variants"]["fp32"]
    assert fp32["weights_replaced"] == 0 and fp32["linear_calls_on_quantized_weights"] == 0
    for name, v in e["variants"].items():
        if name == "fp32" or "error" in v:
            continue
        # every nn.Linear (2 layers x 7, minus the full layer's missing v_proj, + 3 self-conditioning) is replaced;
        # the tied output head (the embedding table) is not
        assert v["weights_replaced"] == 16 and v["linear_calls_on_quantized_weights"] == v["linear_calls_per_step"] - 1
        assert 0 <= v["argmax_agreement"] <= 1 and v["max_abs_logit_diff"] >= 0
        assert e["timings"]["1"][name]["median_ms"] > 0 and e["timings"]["1"][name]["speedup_vs_fp32"] > 0
