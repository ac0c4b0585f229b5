"""The lent-GPU training path, proven on CPU at tiny size: the fast step's math, the length objective, Muon,
shards arriving while training, and gpu/run.sh's device-call sequence end to end (start, feed, finish)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dgcomplete.model import DiffusionGemma, ListCache, ModelConfig, load_model
from dgcomplete.models import default_model_path
from dgcomplete.train import bundle, train
from dgcomplete.train.data import ShardFolder, StepBatch
from dgcomplete.train.fast import encode_train, noise, step_losses
from dgcomplete.train.muon import Muon, build_optimizer, newton_schulz
from dgcomplete.train.tokenizer import train_tokenizer

from .test_corpus import _py_file

REPO = Path(__file__).resolve().parents[1]


def _corpus(path: Path, n: int = 160) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "python.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"text": _py_file(i, 3), "lang": "python", "path": f"m{i}.py"}) + "\n")
    return path


def _tiny(vocab: int = 300, window: int = 16) -> DiffusionGemma:
    cfg = train.small_config(vocab, d=32, layers=3, heads=2, ff=64, mode="mask", window=window)
    model = DiffusionGemma(cfg)
    model.init_weights(seed=3)
    return model


def test_fast_encoder_and_decoder_match_the_network():
    """encode_train (is_causal / banded attention, no cache) is the network's own encode; the decoder reads
    its keys/values exactly as it reads a cache."""
    torch.manual_seed(0)
    model = _tiny(window=16)  # 40 tokens > window: the sliding layers' band is exercised
    ids = torch.randint(6, 300, (3, 40))
    cache = ListCache(model.cfg.num_hidden_layers)
    ref = model.encode(ids, cache, logits="all")
    hidden, ks, vs = encode_train(model, ids)
    assert torch.allclose(model.head(model.norm(hidden)), ref, atol=1e-4)
    for i in range(model.cfg.num_hidden_layers):
        assert torch.allclose(ks[i], cache.k[i], atol=1e-5) and torch.allclose(vs[i], cache.v[i], atol=1e-5)
    canvas = torch.randint(6, 300, (3, 12))
    mine = ListCache(model.cfg.num_hidden_layers)
    mine.k, mine.v, mine.length = ks, vs, 40
    assert torch.allclose(model.decode(canvas, mine).logits, model.decode(canvas, cache).logits, atol=1e-4)


def test_noise_end_objective_and_rate_floor():
    fill, mask = 3, 4
    n = 12
    lengths = [1, 5, 11, 12]
    free = torch.full((len(lengths), n), fill)
    for r, m in enumerate(lengths):
        free[r, :m] = torch.arange(10, 10 + m)
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        noisy, w, real_hit = noise(free, mode="mask", fill_id=fill, mask_id=mask, vocab=300, t_min=0.1,
                                   length_target="end", fill_weight=0.1, after_end_weight=0.25, generator=g)
        for r, m in enumerate(lengths):
            hit = noisy[r] == mask
            assert (w[r] > 0).eq(hit).all()  # scored exactly where masked
            assert (w[r, : m + 1][hit[: m + 1]] == 1).all()  # real tokens and the end: full weight
            if m < n:
                after = hit[m + 1 :]
                assert after.eq(hit[m]).all()  # the tail follows the end: all masked or all clean <fill>
                assert (w[r, m + 1 :][after] == 0.25).all()
                assert (noisy[r, m + 1 :][~after] == fill).all()
            assert hit[: m + 1].any()  # something scored in every row
        assert torch.equal(real_hit, (noisy == mask) & (free != fill))
    # the masking-rate floor: t = 1 masks every slot
    noisy, _, _ = noise(free, mode="mask", fill_id=fill, mask_id=mask, vocab=300, t_min=1.0, length_target="end",
                        fill_weight=0.1, after_end_weight=0.1, generator=g)
    assert (noisy == mask).all()
    # the older objective: every <fill> a target at the fill weight
    noisy, w, _ = noise(free, mode="mask", fill_id=fill, mask_id=mask, vocab=300, t_min=1.0, length_target="fill",
                        fill_weight=0.1, after_end_weight=0.1, generator=g)
    assert torch.allclose(w, torch.where(free == fill, 0.1, 1.0))


def test_muon_orthogonalises_and_hybrid_state_round_trips(tmp_path):
    g = torch.randn(4, 48, 16)
    s = torch.linalg.svdvals(newton_schulz(g))
    assert s.min() > 0.5 and s.max() < 1.3  # Newton-Schulz lands singular values near 1, not exactly
    model = _tiny()
    opt = build_optimizer(model, "muon", lr=1e-3, muon_lr=0.02)
    muon = [o for o in opt.optimizers if isinstance(o, Muon)][0]
    in_muon = {id(p) for grp in muon.param_groups for p in grp["params"]}
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(names[i].endswith("proj.weight") for i in in_muon)
    assert id(model.embed_tokens.weight) not in in_muon
    ids = torch.randint(6, 300, (2, 20))
    before = model.layers[0].mlp.up_proj.weight.detach().clone()
    for _ in range(2):
        opt.zero_grad()
        logits = model.encode(ids, ListCache(model.cfg.num_hidden_layers), logits="all")
        torch.nn.functional.cross_entropy(logits.reshape(-1, 300), ids.reshape(-1)).backward()
        opt.step()
    assert not torch.equal(before, model.layers[0].mlp.up_proj.weight)
    train.save_state(tmp_path, model, opt, {"step": 2})
    model2 = _tiny()
    opt2 = build_optimizer(model2, "muon", lr=1e-3, muon_lr=0.02)
    train.load_state(tmp_path, model2, opt2)
    p1, p2 = model.layers[0].mlp.up_proj.weight, model2.layers[0].mlp.up_proj.weight
    assert torch.equal(p1, p2)
    assert torch.equal(opt.state[p1]["momentum_buffer"], opt2.state[p2]["momentum_buffer"])
    e1, e2 = model.embed_tokens.weight, model2.embed_tokens.weight
    assert torch.equal(opt.state[e1]["exp_avg_sq"], opt2.state[e2]["exp_avg_sq"])


def test_shard_folder_takes_new_shards_and_keeps_dev_apart(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 300)
    lines = bundle.corpus_lines(corpus, set())
    index = bundle.write_shards(lines, tmp_path / "all", limit=12_000, log=lambda s: None)
    assert len(index) >= 3 and all(s["xz_bytes"] <= 12_000 for s in index)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / index[0]["name"]).write_bytes((tmp_path / "all" / index[0]["name"]).read_bytes())
    (inbox / f".{index[1]['name']}.tmp").write_bytes(b"partial")  # a copy still on its way: ignored
    folder = ShardFolder(inbox)
    first = folder.poll()
    assert len(first) == index[0]["records"] - len(range(0, index[0]["records"], 100))
    assert folder.poll() == []
    (inbox / index[1]["name"]).write_bytes((tmp_path / "all" / index[1]["name"]).read_bytes())
    second = folder.poll()
    assert second and not {t for t, _ in second} & {t for t, _ in first}
    dev = {t for t, _ in folder.dev()}
    assert dev and not dev & {t for t, _ in first + second}
    halves = [ShardFolder(inbox, part=(i, 2)).poll() for i in range(2)]
    assert sorted(t for h in halves for t, _ in h) == sorted(t for t, _ in first + second)


def test_shards_are_even_and_as_few_as_the_limit_allows(tmp_path):
    """Every shard a device call: no last shard holding a remainder of a few files (the greedy cut left 0.8 MiB
    of 218 MiB in a 7th shard); each still under the limit."""
    rng = random.Random(0)
    for n in (400, 550, 650):
        lines = [(rng.randbytes(120).hex() + "\n").encode() for _ in range(n)]
        index = bundle.write_shards(lines, tmp_path / str(n), limit=20_000, log=lambda s: None)
        sizes, packed = [s["raw_bytes"] for s in index], [s["xz_bytes"] for s in index]
        assert max(packed) <= 20_000 and min(sizes) > 0.9 * max(sizes), (n, sizes)
        assert (sum(packed) / len(packed)) > 0.8 * 20_000, (n, packed)  # none of the calls half empty


def test_fresh_corpus_leaves_out_the_base_corpus_and_the_large_dev_split(tmp_path):
    """python -m dgcomplete.train.fresh: a continuation's data holds no file of the base corpus (whose dev
    split is its dev set) and none of the large corpus's own dev split (what tier-3 dev benchmarks read)."""
    from dgcomplete.train import fresh
    from dgcomplete.train.data import load_corpus, split_dev

    base = _corpus(tmp_path / "base", 120)
    large = tmp_path / "large"
    large.mkdir()
    texts = [json.loads(ln)["text"] for ln in (base / "python.jsonl").read_text().splitlines()]
    texts += [_py_file(1000 + i, 3) for i in range(280)]  # the base corpus plus new files, one order
    (large / "python.jsonl").write_text("".join(json.dumps({"text": t, "lang": "python"}) + "\n" for t in texts))
    kept = fresh.build(large, base, tmp_path / "fresh")
    out = {t for t, _ in load_corpus(tmp_path / "fresh")}
    large_dev = {t for t, _ in split_dev(load_corpus(large))[1]}
    assert kept == {"python": len(out)} and len(out) == 280 - len(large_dev - set(texts[:120]))
    assert not out & set(texts[:120]) and not out & large_dev


def test_step_batch_split_keeps_groups(tmp_path):
    sb = StepBatch(torch.arange(8 * 5).view(8, 5), [torch.zeros(3, 4), torch.ones(3, 6), torch.full((2, 9), 2.0)],
                   (2, 4, 7))
    parts = sb.split(2)
    assert [p.prefix.shape[0] for p in parts] == [3, 5]
    assert torch.equal(torch.cat([parts[0].prefix, parts[1].prefix]).sort(0).values, sb.prefix)
    assert sum(p.tokens for p in parts) == sb.tokens


def test_compile_failure_falls_back_to_eager(tmp_path, monkeypatch, capsys):
    corpus = _corpus(tmp_path / "corpus", 120)
    tok = tmp_path / "tok.json"
    train_tokenizer(corpus, 300, tok, verbose=False)

    def broken(fn, **kw):
        def run(*a, **k):
            raise RuntimeError("inductor exploded")
        return run

    monkeypatch.setattr(torch, "compile", broken)
    train.main(["--corpus", str(corpus), "--tokenizer", str(tok), "--run", str(tmp_path / "run"), "--mode", "mask",
                "--d", "32", "--layers", "2", "--heads", "2", "--ff", "64", "--batch", "8", "--prefix", "32",
                "--max-steps", "2", "--minutes", "0", "--compile", "--optimizer", "muon", "--length-target", "end"])
    out = capsys.readouterr().out
    assert "torch.compile failed (RuntimeError: inductor exploded); training eager" in out
    assert json.loads((tmp_path / "run" / "state.json").read_text())["step"] == 2


def _run_sh_setting(script: str, name: str, env_value: str | None = None) -> str:
    """What run.sh's ``NAME=${NAME:-default}`` line gives, with ``name`` unset in the environment or set to
    ``env_value``."""
    line = "\n".join(ln for ln in script.splitlines() if ln.startswith(f"{name}="))
    env = {k: v for k, v in os.environ.items() if k != name}
    if env_value is not None:
        env[name] = env_value
    return subprocess.run(["bash", "-c", f'{line}\necho "${name}"'], env=env, capture_output=True,
                          text=True).stdout.strip()


def test_prepared_command_rehearsal(tmp_path):
    """bundle -> gpu/run.sh start (shard 1) -> feed (shard 2 arrives while training) -> feed -> finish: the
    device calls, on CPU; the returned files unpack to a loadable checkpoint."""
    corpus = _corpus(tmp_path / "corpus", 200)
    tok = tmp_path / "tok.json"
    train_tokenizer(corpus, 300, tok, verbose=False)
    gpu = tmp_path / "gpu"
    bundle.main(["--corpus", str(corpus), "--tokenizer", str(tok), "--out", str(gpu), "--shard-mib", "0.006"])
    index = json.loads((gpu / "shards" / "index.json").read_text())
    assert len(index) >= 3
    # --scripts-only rewrites run.sh and the README for the shards already packed (a changed template, no repack)
    readme_before = (gpu / "README").read_text()
    (gpu / "run.sh").write_text("stale")
    bundle.main(["--out", str(gpu), "--scripts-only"])
    assert (gpu / "run.sh").read_text() == bundle.RUN_SH and (gpu / "README").read_text() == readme_before
    assert "bench.real_shape" not in readme_before
    (gpu / "whl").mkdir()  # make gpu-reference's wheel: the README gains issue #19's optional call, carrying it
    (gpu / "whl" / "transformers-0-py3-none-any.whl").write_bytes(b"")
    bundle.main(["--out", str(gpu), "--scripts-only"])
    with_wheel = (gpu / "README").read_text()
    assert "bench.real_shape --device cuda" in with_wheel and 'carry=["gpu/whl"]' in with_wheel
    assert "transformers-0-py3-none-any.whl" in with_wheel
    (gpu / "whl" / "transformers-0-py3-none-any.whl").unlink()
    (gpu / "whl").rmdir()
    run_sh = gpu / "run.sh"
    assert subprocess.run(["bash", "-n", str(run_sh)]).returncode == 0
    # every trainer flag run.sh passes exists
    script = run_sh.read_text()
    body = script[script.index("train() {") : script.index("\n}\n", script.index("train() {"))]
    passed = set(re.findall(r"(?<=\s)--[a-z][a-z0-9-]*", body)) | {"--compile"}
    known = {o for a in train.build_parser()._actions for o in a.option_strings}
    assert passed <= known, passed - known
    readme = (gpu / "README").read_text()
    assert all(s["name"] in readme for s in index) and "run.sh finish" in readme
    # LENGTH_TARGET picks the trainer's --length-target (fill unless set)
    for env_value, want in ((None, "fill"), ("end", "end")):
        assert _run_sh_setting(script, "LENGTH_TARGET", env_value) == want
    assert '--length-target "$LENGTH_TARGET"' in body
    # the default SHAPE is the shipped model's, so what the run returns can ship (the keystroke budget's choice)
    flags = _run_sh_setting(script, "SHAPE").split()
    shape = dict(zip(flags[::2], map(int, flags[1::2]), strict=True))
    shipped = ModelConfig.from_file(default_model_path() / "config.json")
    gpu_cfg = train.small_config(shipped.vocab_size, d=shape["--d"], layers=shape["--layers"], heads=shape["--heads"],
                                 ff=shape["--ff"], mode="mask")
    assert gpu_cfg.num_parameters() == shipped.num_parameters()
    assert (gpu_cfg.layer_types, gpu_cfg.layer_kv_heads, gpu_cfg.layer_head_dim) == (
        shipped.layer_types, shipped.layer_kv_heads, shipped.layer_head_dim)

    # the device's view: the repository root holds gpu/ with only the shards carried so far
    held = tmp_path / "held"
    held.mkdir()
    for s in index[1:]:
        (gpu / "shards" / s["name"]).rename(held / s["name"])
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    env = {**os.environ, "PY": sys.executable, "PYTHONPATH": str(REPO), "DEV": "cpu", "COMPILE": "", "WORKERS": "2",
           "MINUTES": "0.3", "SHAPE": "--d 32 --layers 2 --heads 2 --ff 64", "PREFIX": "48", "BATCH": "8",
           "ACCUM": "1", "EXPORT_EVERY": "0.03", "DG_WORK": str(work), "OUT": str(out),
           "EXTRA": "--threads 1 --dev-rows 8 --log-every 5 --eval-every 50"}

    def call(cmd: str, wait: str = "40") -> str:
        for f in out.iterdir():  # $OUT starts empty on every call
            f.unlink()
        r = subprocess.run(["bash", str(run_sh), cmd], cwd=tmp_path, env={**env, "WAIT": wait}, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    call("start")
    assert (work / "inbox" / index[0]["name"]).exists() and not (work / "inbox" / index[1]["name"]).exists()
    for s in index[1:]:
        (held / s["name"]).rename(gpu / "shards" / s["name"])  # this call's carry
        call("feed")
        assert not (work / "done").exists(), "the trainer should still be running when a shard arrives"
    log = (work / "train.log").read_text()
    for s in index:
        assert f"shard {s['name']}:" in log  # taken by a worker
    env["END_IN"] = "0.2"  # the lease's remaining minutes: the trainer ends by then at the latest
    got = call("finish", wait="90")
    del env["END_IN"]
    assert "deadline: training ends within 0.2 min" in got and float((work / "deadline").read_text()) > 0
    assert (work / "done").read_text().strip() == "0", got
    names = sorted(f.name for f in out.iterdir())
    assert {"train.log", "metrics.jsonl", "meta.tar"} <= set(names) and len(names) <= 8
    assert any(n.startswith("A-model") and n.endswith(".safetensors") for n in names)
    assert "snapshot at step" in (out / "train.log").read_text()  # written as it went, not only at the end
    rec = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert rec[-1].get("done") and all(k in rec[0] for k in ("tok_s", "real_tok_s", "step_ms", "data_wait_ms"))
    # run.sh's default 4 masking draws reach the trainer: each canvas computed 4 times, each example counted once
    assert rec[0]["draws"] == 4 and rec[0]["noised_tok_s"] > rec[0]["tok_s"]

    bundle.main(["--unpack", str(out), "--into", str(tmp_path / "back"), "--tokenizer", str(gpu / "tokenizer.json")])
    loaded = load_model(tmp_path / "back" / "A")
    # the default length objective is the shipped model's (fill: the end objective lost its A/B)
    assert loaded.config.hidden_size == 32 and loaded.config.diffusion.fill_loss_weight == 0.1
    conf = json.loads((tmp_path / "back" / "A" / "config.json").read_text())
    assert conf["dgcomplete"]["length_target"] == "fill" and conf["dgcomplete"]["max_context_tokens"] >= 48
    gen = json.loads((tmp_path / "back" / "A" / "generation_config.json").read_text())
    assert not gen.get("frontier_stop")
    info = json.loads((tmp_path / "back" / "A" / "training.json").read_text())
    assert info["args"]["optimizer"] == "muon" and info["tokens"] > 0

    # back here, the returned checkpoint as a ship candidate: its weights, the shipped decoding settings, no gate
    from dgcomplete.train import ship

    shipped_gen = json.loads((default_model_path() / "generation_config.json").read_text())
    cand = tmp_path / "back" / "A-cand"
    cand.mkdir()
    (cand / "gate.json").write_text("{}")  # an earlier candidate's gate must not survive into this one
    ship.main(["--candidate", str(tmp_path / "back" / "A"), "--out", str(cand)])
    cand_gen = json.loads((cand / "generation_config.json").read_text())
    assert gen["max_denoising_steps"] != shipped_gen["max_denoising_steps"]  # the trainer's export says otherwise
    assert cand_gen == shipped_gen and not (cand / "gate.json").exists()
    got_w, want_w = load_model(cand).model.state_dict(), loaded.model.state_dict()
    assert all(torch.equal(got_w[k], want_w[k]) for k in want_w)
    with pytest.raises(SystemExit):  # never straight over the shipped model
        ship.main(["--candidate", str(tmp_path / "back" / "A")])

    # the optional last call: another shape timed on the shards already there, its metrics back, no weights
    env["PROBE_SHAPE"], env["PROBE_MINUTES"] = "--d 48 --layers 2 --heads 2 --ff 96", "0.15"
    probed = call("probe")
    assert "probe exit 0" in probed, probed
    assert sorted(f.name for f in out.iterdir()) == ["probe-metrics.jsonl", "probe-train.log"]
    prec = [json.loads(x) for x in (out / "probe-metrics.jsonl").read_text().splitlines()]
    assert prec and prec[0]["tok_s"] > 0
    assert json.loads((work / "probe" / "run" / "state.json").read_text())["args"]["d"] == 48
    assert json.loads((work / "run" / "state.json").read_text())["args"]["d"] == 32  # the run itself untouched


@pytest.mark.parametrize("target", ["fill", "end"])
def test_step_losses_train_down(target):
    """A few steps on one batch lower the loss under either objective (the step is differentiable end to end)."""
    torch.manual_seed(0)
    model = _tiny()
    sb = StepBatch(torch.randint(6, 300, (6, 24)),
                   [torch.cat([torch.randint(6, 300, (3, 3)), torch.full((3, 5), 3), torch.randint(6, 300, (3, 4))], 1),
                    torch.cat([torch.randint(6, 300, (3, 6)), torch.full((3, 2), 3), torch.randint(6, 300, (3, 4))], 1)],
                   (8, 8))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for _ in range(15):
        torch.manual_seed(1)
        r = step_losses(model, sb, length_target=target, self_cond=0.5)
        loss = r["dec"] + r["lm"]
        first = float(loss.detach()) if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss.detach()) < first


def test_lang_weights_parse_and_shift_the_mix():
    """--lang-weight: bad specs are refused with the flag's name; a heavier language is drawn more often."""
    for bad in ("python", "java=x", "=2", "js=-1", "js=inf"):
        with pytest.raises(SystemExit, match="--lang-weight"):
            train.parse_lang_weights(bad)
    assert train.parse_lang_weights("python=1.5, java=4,") == {"python": 1.5, "java": 4.0}
    from dgcomplete.train.data import LANG_WEIGHT, ExampleSampler

    texts = [("x" * 1000, "python"), ("y" * 1000, "java")]
    tok = type("T", (), {})()
    default = dict(LANG_WEIGHT)

    def java_share(weights: dict[str, float] | None = None) -> float:
        s = ExampleSampler(texts, tok, seed=1, lang_weight=weights)
        picks = [s.rng.choices(s.texts, cum_weights=s.cum_weights, k=1)[0] for _ in range(2000)]
        return sum(p[0] == "y" for p in picks) / len(picks)

    before = java_share()
    after = java_share(train.parse_lang_weights("python=1,java=4"))
    assert before < 0.4 and after > 0.7, (before, after)
    assert LANG_WEIGHT == default  # the default mix is not changed for other samplers (e.g. the dev batches)


def test_deadline_file_shortens_a_running_budget(tmp_path, capsys):
    """--deadline-file: a Unix time in the file ends the run by then (run.sh END_IN writes it while training);
    a later, unreadable or absent deadline changes nothing, and a written one is read once per change."""
    import time

    d = train.Deadline(str(tmp_path / "deadline"))
    assert d.budget(600.0, time.time()) == 600.0  # no file yet
    (tmp_path / "deadline").write_text("not a time")
    assert d.budget(600.0, time.time()) == 600.0
    t0 = time.time()
    (tmp_path / "deadline").write_text(f"{t0 + 5000}")
    assert d.budget(600.0, t0) == 600.0  # later than the run's own end: never lengthens it
    (tmp_path / "deadline").write_text(f"{t0 + 120}\n")
    assert d.budget(600.0, t0) == pytest.approx(120.0)
    assert train.Deadline(None).budget(600.0, t0) == 600.0

    corpus = _corpus(tmp_path / "corpus", 40)
    tok = tmp_path / "tok.json"
    train_tokenizer(corpus, 300, tok, verbose=False)
    (tmp_path / "deadline").write_text(f"{time.time() + 4}")  # a 10-minute run told to end within 4 s
    train.main(["--corpus", str(corpus), "--tokenizer", str(tok), "--run", str(tmp_path / "run"), "--mode", "mask",
                "--d", "32", "--layers", "2", "--heads", "2", "--ff", "64", "--batch", "2", "--prefix", "32",
                "--minutes", "10", "--eval-every", "1000", "--threads", "1",
                "--deadline-file", str(tmp_path / "deadline")])
    assert "deadline: the run now ends" in capsys.readouterr().out
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["step"] >= 1 and state["elapsed"] < 300  # ended by the deadline, not by its 10 minutes


def test_ship_keeps_the_length_objective(tmp_path):
    """A run trained with --length-target end ships as such: the sampler's frontier stop and the scorer's
    end-scored canvas both read it from the exported config, and the step budget is the one asked for."""
    from dgcomplete.train import ship

    corpus = _corpus(tmp_path / "corpus", 40)
    tok = tmp_path / "tok.json"
    train_tokenizer(corpus, 300, tok, verbose=False)
    train.main(["--corpus", str(corpus), "--tokenizer", str(tok), "--run", str(tmp_path / "run"), "--mode", "mask",
                "--d", "32", "--layers", "3", "--heads", "2", "--ff", "64", "--batch", "2", "--prefix", "32",
                "--max-steps", "1", "--minutes", "0", "--eval-every", "100", "--length-target", "end"])
    out = ship.export_run(tmp_path / "run", tok, tmp_path / "shipped", steps=3)
    conf = json.loads((out / "config.json").read_text())
    assert conf["dgcomplete"]["length_target"] == "end" and conf["dgcomplete"]["fill_loss_weight"] == 1.0
    gen = json.loads((out / "generation_config.json").read_text())
    assert gen["frontier_stop"] is True and gen["max_denoising_steps"] == 3
    loaded = load_model(out)
    assert loaded.config.diffusion.length_target == "end" and loaded.sampler_defaults.max_denoising_steps == 3
    assert json.loads((out / "training.json").read_text())["args"]["length_target"] == "end"


def test_draws_noise_each_canvas_again_over_one_prefix_pass():
    """--draws 2 is the same step as a batch holding every row twice (same noise stream), with the prefix
    encoded once; gradients reach the encoder from every draw."""
    torch.manual_seed(0)
    model = _tiny()
    prefix = torch.randint(6, 300, (3, 24))
    canvas = torch.cat([torch.randint(6, 300, (3, 5)), torch.full((3, 3), 3), torch.randint(6, 300, (3, 4))], 1)
    once = step_losses(model, StepBatch(prefix, [canvas], (8,)), draws=2, self_cond=0.0,
                       generator=torch.Generator().manual_seed(5))
    twice = step_losses(model, StepBatch(prefix.repeat(2, 1), [canvas.repeat(2, 1)], (8,)), self_cond=0.0,
                        generator=torch.Generator().manual_seed(5))
    for k in ("dec", "lm", "acc_real"):
        assert torch.allclose(once[k], twice[k], atol=1e-5), k
    single = step_losses(model, StepBatch(prefix, [canvas], (8,)), self_cond=0.0,
                         generator=torch.Generator().manual_seed(5))
    assert not torch.allclose(single["dec"], once["dec"])  # the second draw is scored too
    once["dec"].backward()
    assert model.embed_tokens.weight.grad is not None and model.layers[0].self_attn.q_proj.weight.grad.abs().sum() > 0
