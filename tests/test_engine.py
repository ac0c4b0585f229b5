"""Engine behaviour on real (tiny) checkpoints: cancellation, stale drop, cache reuse, warm start, CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest
import torch

from dgcomplete.canvas import heal, prefix_window
from dgcomplete.engine import Engine
from dgcomplete.local import LocalInfiller, WarmStart
from dgcomplete.model import load_model
from dgcomplete.types import CancelToken, InfillRequest, SpanKind, SpanPlan

CODE = "def add(a, b):\n    total = a + b\n    return total\n\n\ndef mul(a, b):\n    return \n"
CURSOR = CODE.index("    return \n") + len("    return ")


@pytest.fixture
async def engine(tiny_model):
    e = Engine(load_model(tiny_model), threads=1, max_steps=400)
    e.local.sampler.max_steps = 2
    await e.start()  # first-call costs are paid at start-up, as in the daemon
    e.local.sampler.max_steps = 400
    e.local.sampler.confidence_threshold = -1.0  # never "confident": runs every step unless cancelled
    yield e
    await e.shutdown()


async def test_cancel_stops_within_a_step(engine):
    engine.open("file:///a.py", CODE, 1, "python")
    token = CancelToken()
    task = asyncio.ensure_future(engine.complete("file:///a.py", CURSOR, cancel=token, seed=0))
    await asyncio.sleep(0.15)
    t0 = time.perf_counter()
    token.cancel("user cancelled")
    comp = await task
    assert comp.items == [] and "cancel" in comp.reason
    assert time.perf_counter() - t0 < 0.1  # one decoder step of the tiny model is ~1 ms


async def test_newer_request_cancels_the_older_one(engine):
    engine.open("file:///a.py", CODE, 1, "python")
    first = asyncio.ensure_future(engine.complete("file:///a.py", CURSOR, seed=0))
    await asyncio.sleep(0.05)
    engine.local.sampler.max_steps = 2
    second = await engine.complete("file:///a.py", CURSOR, seed=1)
    old = await first
    assert old.reason == "superseded"
    assert second.reason != "superseded"


async def test_result_for_a_moved_version_is_dropped(engine):
    engine.open("file:///a.py", CODE, 1, "python")
    task = asyncio.ensure_future(engine.complete("file:///a.py", CURSOR, seed=0))
    await asyncio.sleep(0.05)
    engine.change("file:///a.py", 2, [((0, 0, 0, 0), "# edited\n")])
    comp = await task
    assert comp.items == [] and ("stale" in comp.reason)


def test_prefix_cache_reuse_encodes_only_the_new_tokens(tiny_model):
    loaded = load_model(tiny_model)
    li = LocalInfiller(loaded, max_steps=2)
    plan = SpanPlan(SpanKind.LINE, 1, 8)
    long_prefix = "x = 1\n" * 300 + "def f(a):\n    return "
    r1 = li.infill(InfillRequest(long_prefix, "\n", plan, doc_key="d", seed=0))
    r2 = li.infill(InfillRequest(long_prefix + "a", "\n", plan, doc_key="d", seed=0))
    assert r1.stats["cache_hit_tokens"] == 0
    assert r2.stats["cache_hit_tokens"] >= r2.stats["prefix_tokens"] - 3
    # the reused cache gives exactly what a fresh encode gives
    fresh = LocalInfiller(loaded, max_steps=2).infill(InfillRequest(long_prefix + "a", "\n", plan, doc_key="e", seed=0))
    assert [c.text for c in fresh.candidates] == [c.text for c in r2.candidates]


def test_cache_keys_match_a_fresh_encode_after_an_edit_in_the_middle(tiny_model):
    loaded = load_model(tiny_model)
    li = LocalInfiller(loaded, max_steps=2)
    plan = SpanPlan(SpanKind.LINE, 1, 8)
    li.infill(InfillRequest("import os\n" * 40, "\n", plan, doc_key="d", seed=0))
    edited = "import os\n" * 20 + "import sys\n" + "import os\n" * 19
    r = li.infill(InfillRequest(edited, "\n", plan, doc_key="d", seed=0))
    assert 0 < r.stats["cache_hit_tokens"] < r.stats["prefix_tokens"]
    st = li.states["d"]
    fresh = loaded.model.new_cache()
    with torch.inference_mode():
        loaded.model.encode(torch.tensor([st.ids]), fresh)
    for layer in range(loaded.config.num_hidden_layers):
        assert torch.allclose(st.cache.read(layer)[0], fresh.read(layer)[0], atol=1e-5)


def test_warm_start_seeds_the_canvas_with_the_rest_of_the_last_suggestion(tiny_model):
    li = LocalInfiller(load_model(tiny_model), max_steps=16)
    plan = SpanPlan(SpanKind.REST_OF_LINE, 1, 16)
    prefix = "def f(a):\n    return "
    # the user typed "a +" of a suggestion "a + 1": the canvas starts from " 1" (+ fillers)
    warm = WarmStart(prefix, "a + 1")
    r_warm = li.infill(InfillRequest(prefix + "a +", "\n", plan, seed=0), warm=warm)
    r_cold = li.infill(InfillRequest(prefix + "a +", "\n", plan, seed=0))
    assert r_warm.stats["warm_start"] == 1 and r_cold.stats["warm_start"] == 0
    # a suggestion that does not match what was typed is not used
    r_miss = li.infill(InfillRequest(prefix + "b", "\n", plan, seed=0), warm=warm)
    assert r_miss.stats["warm_start"] == 0


def test_warm_start_stops_early_when_the_model_agrees(tiny_model):
    """Mask mode: a warm canvas that the model keeps needs a single step instead of the full schedule."""
    from dgcomplete.sampler import SamplerConfig

    li = LocalInfiller(load_model(tiny_model), max_steps=16)
    li.sampler = SamplerConfig(**{**li.sampler.__dict__, "mode": "mask", "mask_id": li.tok.mask_id})
    li.mode = "mask"
    plan = SpanPlan(SpanKind.REST_OF_LINE, 1, 8)
    cold = li.infill(InfillRequest("x = ", "\n", plan, seed=0))
    warm = li.infill(InfillRequest("x = ", "\n", plan, seed=0), warm=WarmStart("x = ", "a + 1"))
    assert warm.stats["steps"] < cold.stats["steps"]


def test_a_requested_span_is_never_empty(tiny_model):
    """Even a model that wants to stop at once fills one token (two on a blank line, past the indentation)."""
    li = LocalInfiller(load_model(tiny_model), max_steps=4)
    li.fill_logit_bias = 1e4  # the filler wins every slot unless it is ruled out
    blank = InfillRequest("def f():\n", "\n    return 1\n", SpanPlan(SpanKind.LINE, 1, 12), seed=0)
    mid = InfillRequest("def f():\n    return ", "\n", SpanPlan(SpanKind.REST_OF_LINE, 1, 12), seed=0)
    assert li.infill(blank).stats["committed_tokens"] == 2
    assert li.infill(mid).stats["committed_tokens"] == 1
    li.min_content = False
    assert li.infill(blank).stats["committed_tokens"] == 0


def test_deterministic_given_a_seed(tiny_model):
    li = LocalInfiller(load_model(tiny_model), max_steps=6)
    req = InfillRequest("def f():\n    ", "\n", SpanPlan(SpanKind.LINE, 1, 12), seed=42)
    assert li.infill(req).candidates[0].text == li.infill(req).candidates[0].text


def test_token_healing_and_prefix_window():
    h = heal("    retu")
    assert h.prefix == "    " and h.typed == "retu"
    assert heal("x = (").typed == ""
    # at the start of a new line nothing is being typed: the last line's word is not healed, the newline kept
    for prefix in ("total = count\n", "n = 0\n", "x = foo\r\n"):
        assert (heal(prefix).prefix, heal(prefix).typed) == (prefix, ""), prefix
    text = "a\n" * 10_000
    start = prefix_window(text, 3000)
    assert start > 0 and text[start - 1] == "\n"
    # typing more moves the window start only every few thousand characters
    assert prefix_window(text + "b", 3000) == start


def test_healed_word_is_continued_not_repeated(tiny_model):
    li = LocalInfiller(load_model(tiny_model), max_steps=4)
    r = li.infill(InfillRequest("def f(x):\n    retu", "\n", SpanPlan(SpanKind.REST_OF_LINE, 1, 8), seed=0))
    assert r.stats["healed"] == "retu"
    for c in r.candidates:  # the returned text starts at the cursor: it never repeats the typed part
        assert not c.text.startswith("retu")


def test_a_healed_word_is_spelled_out_before_the_sample_goes_on(tiny_mask_model):
    """Inside a word of several pieces the sample writes the whole typed word first, so it is never lost to the
    check that it completes what was typed (only its first slot was held to the word before: with this model's
    one-character pieces, ``r`` + anything). A row the model would not have spelled so is set aside with the
    dropped (its word may still serve), not scored as a line."""
    li = LocalInfiller(load_model(tiny_mask_model), max_steps=3)
    lost = aside = 0
    for seed in range(6):
        for prefix in ("def f(x):\n    retu", "value = overridableK"):
            r = li.infill(InfillRequest(prefix, "\n", SpanPlan(SpanKind.REST_OF_LINE, 1, 8), seed=seed))
            assert r.stats["healed"] == prefix.split()[-1]
            lost += not (r.candidates or r.dropped)
            aside += len(r.dropped)
            assert all(not c.text.startswith(r.stats["healed"]) for c in [*r.candidates, *r.dropped])
    assert lost == 0 and aside > 0  # a random model spells nothing of its own accord


def test_pieces_a_word_may_start_with():
    """The sorted-pieces lookup gives exactly the vocabulary scan's tokens (those extending the text or a prefix
    of it), on the shipped model's BPE vocabulary, without scanning it per word."""
    from dgcomplete.model.config import ModelConfig
    from dgcomplete.model.tokenizer import Tokenizer
    from dgcomplete.models import default_model_path

    root = default_model_path()
    tok = Tokenizer.from_dir(root, ModelConfig.from_file(root / "config.json"))
    for text in ("r", "retu", "overridableK", "__versio", "_x9", "Keys", "\u00e9", "zzq", " "):
        scan = [i for i, p in enumerate(tok.pieces) if i not in tok.special_ids and p
                and (p.startswith(text) or text.startswith(p))]
        assert tok.ids_starting_with(text) == scan, text
    assert len(tok.ids_starting_with("overridableK")) > 3  # o, over, ... : a real choice


def test_autoregressive_baseline_runs(tiny_model):
    li = LocalInfiller(load_model(tiny_model))
    r = li.autoregressive(InfillRequest("def f():\n    ", "\n", SpanPlan(SpanKind.LINE, 1, 6)))
    assert r.stats["mode"] == "autoregressive" and r.stats["steps"] >= 1
    assert "\n" not in r.candidates[0].text


def test_infill_cli_prints_json(tiny_model, tmp_path):
    src = tmp_path / "x.py"
    src.write_text(CODE)
    out = subprocess.run(
        [sys.executable, "-m", "dgcomplete", "infill", str(src), "--line", "6", "--col", "11", "--model",
         str(tiny_model), "--json", "--steps", "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) >= {"middle", "reason", "stats", "ms"}
    assert data["stats"]["plan"] in {"line", "rest_of_line", "statement"}


def test_infill_cli_rejects_a_line_outside_the_file(tiny_model, tmp_path):
    src = tmp_path / "x.py"
    src.write_text(CODE)
    out = subprocess.run([sys.executable, "-m", "dgcomplete", "infill", str(src), "--line", "99", "--col", "0",
                          "--model", str(tiny_model)], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "outside" in out.stderr and "Traceback" not in out.stderr


def test_postprocess_keeps_a_closer_for_an_outer_block_and_drops_real_repeats():
    """``}`` before a less-indented ``}`` closes the inner block (nested code); the same line again is a repeat."""
    from dgcomplete.types import Candidate

    e = Engine(None)
    text = "class A {\n  void f(int a) {\n    if (a > 0) {\n      a = 1;\n\n  }\n}\n"
    off = text.index("\n\n") + 1
    plan = SpanPlan(SpanKind.LINE, 1, 16)
    keep = e._postprocess([Candidate("    }")], text, off, plan, "java", None)
    assert [c.text for c in keep] == ["    }"]
    drops: dict[str, int] = {}
    assert e._postprocess([Candidate("  }")], text, off, plan, "java", None, drops) == []
    assert drops == {"repeats_suffix": 1}
    drops = {}
    text2 = "def f(x):\n    y = x\n\n    return y\n"
    off2 = text2.index("\n\n") + 1
    assert e._postprocess([Candidate("    return y")], text2, off2, plan, "python", None, drops) == []
    assert drops == {"repeats_suffix": 1}
    # a line that opens a brace block is a sound single-line completion
    opened = e._postprocess([Candidate("      if (a > 1) {")], text, off, plan, "java", None)
    assert [c.text for c in opened] == ["      if (a > 1) {"]


def test_postprocess_drops_an_import_the_file_has_and_counts_it():
    """A retrieved import line the file already has is never shown (nor listed on Alt+\\); the reason is counted."""
    from dgcomplete.types import Candidate

    e = Engine(None)
    text = "import java.util.List;\nimport java.util.Map;\nimport java.util.\n\nclass A {}\n"
    off = text.index("java.util.\n") + len("java.util.")
    plan = SpanPlan(SpanKind.LINE, 1, 16)
    drops: dict[str, int] = {}
    keep = e._postprocess([Candidate("List;", source="prefix"), Candidate("Set;", source="diffusion")], text, off,
                          plan, "java", None, drops)
    assert [c.text for c in keep] == ["Set;"] and drops == {"duplicate_import": 1}


def test_postprocess_drops_a_line_it_would_leave_broken_and_counts_it():
    """What is typed, finished by the suggestion, must parse as a line: ``return (`` + ``...args)`` is dropped (the
    document as typed was broken there already, so the splice check alone let it through); ``a, b)`` is kept."""
    from dgcomplete.types import Candidate

    e = Engine(None)
    text = "function f(a, b) {\n  const x = a\n  return (\n}\n"
    off = text.index("(\n") + 1
    drops: dict[str, int] = {}
    keep = e._postprocess([Candidate("...args)", source="prefix"), Candidate("a, b)", source="diffusion")], text, off,
                          SpanPlan(SpanKind.LINE, 1, 16), "javascript", None, drops)
    assert [c.text for c in keep] == ["a, b)"] and drops == {"broken_line": 1}
    # a candidate the checks cut short is a fragment the user goes on from: not asked
    short = Candidate("...args)", source="diffusion", features={"cut": 1.0, "cut_short": 1.0})
    assert [c.text for c in e._postprocess([short], text, off, SpanPlan(SpanKind.LINE, 1, 16), "javascript",
                                           None)] == ["...args)"]


def test_postprocess_drops_a_line_that_leaves_the_body_below_without_its_head_and_counts_it():
    """Written again, the head of a block must mend the body under it: ``try:`` above ``def naturalsize``'s
    parameters parses alone, so the older checks let it through; it is ranked, then dropped (``leaves_body``), while
    a head that takes the parameters is kept. A line where nothing below is broken is not asked."""
    from dgcomplete.types import Candidate

    e = Engine(None)
    text = 'x = 1\n\n\n\n    value: float,\n    binary: bool = False,\n) -> str:\n    return "1"\n'
    off = text.index("\n\n\n") + 3
    drops: dict[str, int] = {}
    ranked: list[Candidate] = []
    keep = e._postprocess([Candidate("try:", source="successor"), Candidate("def naturalsize(", source="prefix")],
                          text, off, SpanPlan(SpanKind.LINE, 1, 16), "python", None, drops, ranked=ranked)
    assert [c.text for c in keep] == ["def naturalsize("] and drops == {"leaves_body": 1}
    assert {c.text for c in ranked} == {"try:", "def naturalsize("}  # still ranked: its first word may serve
    whole = "def f(a):\n    x = 1\n    \n    return x\n"
    at = whole.index("    \n") + 4
    assert [c.text for c in e._postprocess([Candidate("y = 2")], whole, at, SpanPlan(SpanKind.LINE, 1, 16),
                                           "python", None)] == ["y = 2"]


def test_postprocess_gives_the_checks_the_tree_a_return_is_held_to():
    """The vetter hands the document's tree to the soundness checks: a Go return with the wrong number of values
    for the function around the cursor is dropped and counted; the one that fits is kept."""
    from dgcomplete.syntax.document import parse
    from dgcomplete.types import Candidate

    e = Engine(None)
    text = "package x\n\nfunc f(a int) (bool, error) {\n\tif a > 0 {\n\t\t\n\t}\n\treturn true, nil\n}\n"
    off = text.index("\t\t\n") + 2
    drops: dict[str, int] = {}
    keep = e._postprocess([Candidate("return true", source="successor"), Candidate("return false, nil")], text, off,
                          SpanPlan(SpanKind.LINE, 1, 16), "go", parse(text, "go"), drops)
    assert [c.text for c in keep] == ["return false, nil"] and drops == {"return_mismatch": 1}


def _recording(decode, seen: list[bool]):
    def wrapped(*a, **k):
        seen.append(k.get("sc_probs") is not None)
        return decode(*a, **k)

    return wrapped


def test_generation_config_can_turn_self_conditioning_off(tiny_model, tmp_path):
    """A model whose generation_config says ``self_conditioning: false`` decodes without the feedback input."""
    import shutil

    ck = tmp_path / "ck"
    shutil.copytree(tiny_model, ck)
    gen = json.loads((ck / "generation_config.json").read_text())
    (ck / "generation_config.json").write_text(json.dumps({**gen, "self_conditioning": False}))
    seen: list[bool] = []
    for path, want in ((tiny_model, True), (ck, False)):
        li = LocalInfiller(load_model(path), max_steps=3)
        li.model.decode = _recording(li.model.decode, seen)
        li.sampler.confidence_threshold = -1.0
        li.infill(InfillRequest("x = ", "\n", SpanPlan(SpanKind.REST_OF_LINE, 1, 8), seed=0))
        assert li.self_condition is want and any(seen) is want, (path, seen)
        seen.clear()


def test_frontier_stop_switch_sets_the_span_ending_ids(tiny_model):
    """The opt-in sampler rule (off by default) ends spans on filler/EOS/pad, never on <mask>."""
    li = LocalInfiller(load_model(tiny_model), max_steps=2)
    assert li.frontier_stop is False and li.sampler.stop_ids == ()
    li.frontier_stop = True
    ids = set(li.sampler.stop_ids)
    assert li.tok.fill_id in ids and set(li.tok.eos_ids) <= ids and li.tok.mask_id not in ids
    assert li.sampler.fill_id == li.tok.fill_id
    plan = SpanPlan(SpanKind.LINE, 1, 8)
    assert li.infill(InfillRequest("def f(a):\n    return ", "\n", plan, seed=0)).candidates
    li.frontier_stop = False
    assert li.sampler.stop_ids == ()


def test_completions_decide_their_start_left_to_right_when_invoked_or_without_drafts(tiny_mask_model, monkeypatch):
    """The leftmost-slot rule is on for Invoked completion canvases; as-you-type ones without drafts decode two
    argmax rows, one left to right and one in entropy order; as-you-type ones beside drafts and edits of a range
    keep the entropy order."""
    from dgcomplete import edit
    from dgcomplete import local as local_mod
    from dgcomplete.types import Candidate

    seen: list[bool] = []
    real = local_mod.denoise

    def spy(step_fn, canvas, free, cfg, *a, **k):
        seen.append((cfg.leftmost, canvas.shape[0], cfg.greedy_rows))
        return real(step_fn, canvas, free, cfg, *a, **k)

    monkeypatch.setattr(local_mod, "denoise", spy)
    li = LocalInfiller(load_model(tiny_mask_model), max_steps=2)
    draft = [Candidate("a", source="prefix")]
    for invoked, drafts in ((True, draft), (True, []), (False, draft), (False, [])):
        li.infill(InfillRequest("def f():\n    return ", "\n", SpanPlan(SpanKind.LINE, 1, 8), seed=0, invoked=invoked,
                                drafts=drafts))
    edit.ModelFiller(li, "k")(edit.SpanJob("def f(x):\n", "    y = x + 1\n", "\n", [(8, 9)], clamp_rest=True))
    assert seen == [(True, 1, 1), (True, 1, 1), (False, 1, 1), ((True, False), 2, 2), (False, 1, 1)]
    assert li.sampler.leftmost is False and li.sampler.greedy_rows == 1  # shared settings are left alone
    li.twin_without_drafts = False
    li.infill(InfillRequest("def f():\n    return ", "\n", SpanPlan(SpanKind.LINE, 1, 8), seed=0))
    assert seen[-1] == (True, 1, 1)


def test_the_checks_run_once_per_keystroke_on_the_local_backend(tiny_model, monkeypatch):
    """The model thread's checks (before scoring) are not repeated by post-processing for the same text."""
    made: list[int] = []
    real = Engine._vetter

    def counting(*a, **k):
        made.append(1)
        return real(*a, **k)

    monkeypatch.setattr(Engine, "_vetter", staticmethod(counting))
    e = Engine(load_model(tiny_model), threads=1)
    e.open("file:///v.py", CODE, 1, "python")

    async def go():
        return await e.complete("file:///v.py", CURSOR, seed=0)

    comp = asyncio.run(go())
    assert made == [1], comp.reason


def test_a_one_character_suggestion_is_not_shown_as_you_type(tiny_model, monkeypatch):
    """Accepting ghost text is a keystroke, so one character saves none: as you type under the gate it is dropped
    and the next candidate may show; an Invoked request (the user asked) and minConfidence 0 still show it."""
    from dgcomplete.types import Candidate, InfillResult

    e = Engine(load_model(tiny_model), threads=1)
    offered: list[list[str]] = [[";", "total"], [";"], [";", "total"], [";"]]

    async def fixed(self, req, token, s, view, offset, lang):
        return InfillResult([Candidate(t, float(i)) for i, t in enumerate(offered.pop(0))])

    monkeypatch.setattr(Engine, "_run_infill", fixed)
    e.open("file:///o.py", CODE, 1, "python")

    async def go(n: int):
        return await e.complete("file:///o.py", CURSOR, n=n, seed=0)

    comp = asyncio.run(go(1))
    assert [c.text for c in comp.items] == ["total"] and comp.stats["dropped_one_char"] == 1
    comp = asyncio.run(go(1))
    assert comp.items == [] and "one-character" in comp.reason
    comp = asyncio.run(go(3))
    assert [c.text for c in comp.items] == [";", "total"]
    e.settings.update({"min_confidence": 0.0})
    comp = asyncio.run(go(1))
    assert [c.text for c in comp.items] == [";"] and "dropped_one_char" not in comp.stats


def test_doctor_shows_what_the_model_writes_and_the_gates_verdict():
    """`dgcomplete doctor` on the shipped model: the sample is what the model writes (the gate open), and whether
    it would be shown as you type is said beside it, with the reason when not."""
    out = subprocess.run([sys.executable, "-m", "dgcomplete", "doctor", "--threads", "1"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    sample = next(line for line in out.stdout.splitlines() if line.startswith("sample completion"))
    assert "(none" not in sample, sample
    verdict = out.stdout.split("shown as you type: ", 1)[1].splitlines()[0]
    assert verdict in ("yes", "no: below the gate", "no: one character saves no keystroke"), verdict


def test_under_the_gate_the_rest_of_a_known_word_shows(tiny_model, monkeypatch):
    """A suggestion the gate hides as you type still gives the rest of the word being typed, when the document has
    that word (source ``word``); elsewhere it stays hidden, and an Invoked list is untouched."""
    from dgcomplete.types import Candidate, InfillResult

    e = Engine(load_model(tiny_model), threads=1)
    e.settings.update({"min_confidence": 0.5})

    async def fixed(self, req, token, s, view, offset, lang):  # the prior gate reads mean_lp -3 as ~0.3 % sure
        return InfillResult([Candidate("otal * 2", 1.0, "diffusion", {"mean_lp": -3.0, "end_lp": -3.0})])

    monkeypatch.setattr(Engine, "_run_infill", fixed)
    code = "def add(a, b):\n    total = a + b\n    return t\n"
    e.open("file:///w.py", code, 1, "python")
    at = code.index("return t") + len("return t")

    async def go(uri: str, offset: int, n: int = 1):
        return await e.complete(uri, offset, n=n, seed=0)

    comp = asyncio.run(go("file:///w.py", at))
    assert [(c.text, c.source) for c in comp.items] == [("otal", "word")] and comp.stats["source"] == "word"
    assert comp.items[0].confidence is not None and comp.items[0].confidence < 0.5
    comp = asyncio.run(go("file:///w.py", at, n=3))  # Invoked: the list as scored
    assert [c.text for c in comp.items] == ["otal * 2"]
    other = code.replace("total", "sum_")  # no `total` in the file: nothing to go on
    e.open("file:///x.py", other, 1, "python")
    comp = asyncio.run(go("file:///x.py", other.index("return t") + len("return t")))
    assert comp.items == [] and comp.reason == "below the confidence gate"


def test_when_every_line_is_dropped_the_rest_of_a_known_word_still_shows(tiny_model, monkeypatch):
    """Candidates the checks drop as unsound can still hold the right word: as you type, the rest of the typed word
    from the first of them that gives one shows (source ``word``, confidence 0), where the document has the word;
    an Invoked request and minConfidence 0 show nothing of them."""
    from dgcomplete.types import Candidate, InfillResult

    e = Engine(load_model(tiny_model), threads=1)
    e.settings.update({"min_confidence": 0.5})

    async def dropped(self, req, token, s, view, offset, lang):  # the model thread's checks dropped both
        return InfillResult([], drops={"syntax": 2},
                            dropped=[Candidate("hing else", source="diffusion"), Candidate("otal * * 2", source="prefix")])

    monkeypatch.setattr(Engine, "_run_infill", dropped)
    code = "def add(a, b):\n    total = a + b\n    return t\n"
    e.open("file:///w.py", code, 1, "python")
    at = code.index("return t") + len("return t")

    async def go(n: int = 1):
        return await e.complete("file:///w.py", at, n=n, seed=0)

    comp = asyncio.run(go())  # `thing` is not in the file: the second candidate's `total` is
    assert [(c.text, c.source, c.confidence) for c in comp.items] == [("otal", "word", 0.0)]
    assert comp.stats["source"] == "word" and comp.stats["word_of"] == "dropped"
    assert asyncio.run(go(3)).items == []  # Invoked: what the checks dropped is not a suggestion
    e.settings.update({"min_confidence": 0.0})
    assert asyncio.run(go()).items == []


def _answering_engine(tiny_model, monkeypatch, uri: str, text: str, answer) -> tuple[Engine, list[InfillRequest]]:
    """An engine with the tiny model and ``text`` open at ``uri`` (Python), whose completion core answers each
    request with ``answer(req)``'s candidates; the list records the requests."""
    from dgcomplete.types import InfillResult

    e = Engine(load_model(tiny_model), threads=1)
    e.open(uri, text, 1, "python")
    seen: list[InfillRequest] = []

    def infill(req, cancel=None, **k):
        seen.append(req)
        return InfillResult(answer(req), drops={})

    monkeypatch.setattr(e.local, "infill", infill)
    return e, seen


def test_a_hole_in_a_tab_indented_document_is_asked_with_spaces_and_filled_with_tabs(tiny_model, monkeypatch):
    """The model is asked with the file's indentation as spaces (it learned Python so) and what it writes goes in
    with tabs, each line it starts, nothing else in the file moved."""
    from dgcomplete.edit import apply_edits
    from dgcomplete.types import Candidate

    text = "class A:\n\tdef g(self, y):\n\t\t...\n\n\tdef h(self):\n\t\treturn 1\n"
    e, seen = _answering_engine(tiny_model, monkeypatch, "file:///tabs.py", text, lambda req: [
        Candidate("z = y * 2\n        return z")])
    res = asyncio.run(e.edit("fill", "file:///tabs.py", 0, len(text), 1))
    assert seen and all("\t" not in r.prefix + r.suffix for r in seen)
    assert seen[0].prefix.endswith("class A:\n    def g(self, y):\n        ")
    assert res.outcome.ok, res.outcome
    assert apply_edits(text, res.outcome.edits) == text.replace("\t\t...", "\t\tz = y * 2\n\t\treturn z")


def test_a_page_script_is_completed_as_a_document_of_its_language(tiny_model, monkeypatch):
    """Inside a Vue component's ``<script lang="ts">`` the model is asked with that script alone, as TypeScript,
    and the items come back at the page's offsets; outside the scripts the page is read as text, as before. The
    script read is made again as it is typed into, in step with the page (CRLF breaks and tabs included)."""
    import random

    from dgcomplete import syntax
    from dgcomplete.types import Candidate, InfillResult

    head = "<template>\r\n\t<p>{{ n }}</p>\r\n</template>\r\n\r\n<script setup lang=\"ts\">"
    page = head + "\r\nfunction f(a: number) {\r\n\treturn a\r\n}\r\n</script>\r\n<style>\r\np { margin: 0 }\r\n</style>\r\n"
    e = Engine(load_model(tiny_model), threads=1)
    s = e.open("file:///w/App.vue", page, 1, "vue")
    asked: list[tuple[str, str | None, int]] = []

    async def answer(self, req, token, session, view, offset, lang):
        asked.append((view.text, lang, offset))
        return InfillResult([Candidate(" * 2;", 1.0)])

    monkeypatch.setattr(Engine, "_run_infill", answer)
    cursor = page.index("return a") + len("return a")
    r = s.read_at(cursor)
    assert r.view.lang == "typescript" and r.view.text == "\nfunction f(a: number) {\n    return a\n}\n"
    comp = asyncio.run(e.complete(s.uri, cursor, n=3, seed=0))
    assert asked[-1] == (r.view.text, "typescript", r.to_view(cursor))
    assert [c.text for c in comp.items] == [" * 2;"] and comp.start == cursor
    style = page.index("margin")
    asyncio.run(e.complete(s.uri, style, n=3, seed=0))
    assert asked[-1][1] is None and asked[-1][0] == page.replace("\r\n", "\n")  # the page as text
    rng = random.Random(5)
    for v in range(2, 60):  # typing in and around the script: every read maps both ways
        at = rng.randrange(len(s.doc.text) + 1)
        if s.doc.text[at - 1 : at + 1] == "\r\n":
            continue
        line, col = s.doc.position_at(at)
        e.change(s.uri, v, [((line, col, line, col), rng.choice(["x", "\t", "\r\n", " ", "é"]))])
        blocks = syntax.code_blocks(s.doc.text, "html")
        for a, b, lang in blocks:  # the script read, made or edited in step: its text, and a tree of that text
            r = s.read_at(a)
            assert r.view.text == syntax.view_text(s.doc.text[a:b], r.tab)
            assert str(r.view.tree.root_node) == str(syntax.parse(r.view.text, lang).root_node)
        for off in range(len(s.doc.text) + 1):
            if s.doc.text[off - 1 : off + 1] == "\r\n":
                continue
            r = s.read_at(off)
            assert r.lang == next((lang for a, b, lang in blocks if a <= off <= b), None)
            assert r.from_view(r.to_view(off)) == off, (v, off)


def test_a_markdown_fence_is_completed_as_its_language(tiny_model, monkeypatch):
    """In a Markdown file, inside a ```` ```python ```` block the model is asked with that block alone, as Python;
    in the prose, and in a fence of a language without a grammar, the file is read as text."""
    from dgcomplete.types import Candidate, InfillResult

    text = ("# Usage\n\nCall it so:\n\n```python\nimport shapes\n\nprint(shapes.area(2, 3))\n```\n\n"
            "```text\nplain\n```\n")
    e = Engine(load_model(tiny_model), threads=1)
    s = e.open("file:///w/README.md", text, 1, "markdown")
    asked: list[tuple[str, str | None]] = []

    async def answer(self, req, token, session, view, offset, lang):
        asked.append((view.text, lang))
        return InfillResult([Candidate("x", 1.0)])

    monkeypatch.setattr(Engine, "_run_infill", answer)
    for at in (text.index("area("), text.index("Call"), text.index("plain")):
        asyncio.run(e.complete(s.uri, at, n=3, seed=0))
    assert asked == [("import shapes\n\nprint(shapes.area(2, 3))\n", "python"), (text, None), (text, None)]


def test_fill_holes_asks_the_completion_pipeline_where_each_hole_stands(tiny_model, monkeypatch):
    """Each hole is an Invoked completion at its place, the placeholder taken out: the document's retrieved lines
    as drafts (never a placeholder), one line for a hole inside a line; what the pipeline ranks first and is sound
    is written."""
    from dgcomplete.engine import EditOptions
    from dgcomplete.types import Candidate

    text = ("def add(a, b):\n    total = a + b\n    return total\n\n\ndef sub(a, b):\n    total = ???\n"
            "    return total\n\n\ndef mul(a, b):\n    ...\n")
    e, seen = _answering_engine(tiny_model, monkeypatch, "file:///h.py", text, lambda req: [
        Candidate("???"), Candidate("(a"), Candidate("a - b" if req.plan.max_lines == 1 else "return a * b")])

    async def go():
        return await e.edit("fill", "file:///h.py", 0, len(text), 1, options=EditOptions(seed=3))

    res = asyncio.run(go())
    assert [(r.invoked, r.plan.max_lines == 1) for r in seen] == [(True, True), (True, False)]
    assert seen[0].prefix.endswith("def sub(a, b):\n    total = ") and seen[0].suffix.startswith("\n    return total")
    assert seen[1].prefix.endswith("def mul(a, b):\n    ") and "a - b" in seen[1].prefix  # the first hole is filled
    after = res.outcome.new_text
    assert "    total = a - b\n" in after and after.endswith("    return a * b\n")
    assert res.outcome.stats["filled"] == 2
    # the lines retrieved from the document where each hole stands (`total = ` goes on as above), never a hole
    assert [[d.text for d in r.drafts] for r in seen] == [["a + b"], ["total = a + b"]]


def test_fill_holes_writes_what_the_file_says_before_what_the_model_makes_up(tiny_model, monkeypatch):
    """Of a hole's sound proposals, a line retrieved from the file where the hole stands comes before the model's
    own, whatever the scorer's order (dev splits: 53 -> 58 of 583 holes restored)."""
    from dgcomplete.types import Candidate, InfillResult

    e = Engine(load_model(tiny_model), threads=1)
    text = "def add(a, b):\n    total = a + b\n    return total\n\n\ndef sub(a, b):\n    total = ???\n"
    e.open("file:///d.py", text, 1, "python")
    monkeypatch.setattr(e.local, "infill", lambda req, cancel=None, **k: InfillResult(
        [Candidate("a - b", -2.0), Candidate("a + b", -1.0, "successor")], drops={}))
    res = asyncio.run(e.edit("fill", "file:///d.py", 0, len(text), 1))
    assert res.outcome.new_text.endswith("    total = a + b\n"), res.outcome


def test_a_fill_the_document_moved_under_is_stale(tiny_model, monkeypatch):
    """A change while the holes are being filled (here during the first): the command answers StaleEdit and applies
    nothing; the second hole's completion stops at once (the staleness check between holes cancels the token)."""
    import threading

    from dgcomplete.engine import StaleEdit
    from dgcomplete.types import Candidate, InfillResult

    e = Engine(load_model(tiny_model), threads=1)
    text = "def f(a):\n    x = ???\n    y = ???\n    return x + y\n"
    e.open("file:///s.py", text, 1, "python")
    asked: list[str] = []

    async def go():
        loop = asyncio.get_running_loop()

        def infill(req, cancel=None, **k):
            if cancel is not None:
                cancel.raise_if_cancelled()  # as the real infill does at its first step
            asked.append(req.prefix[-4:])
            done = threading.Event()
            loop.call_soon_threadsafe(lambda: (e.change("file:///s.py", 2, [((0, 0, 0, 0), "#\n")]), done.set()))
            done.wait(5)
            return InfillResult([Candidate("a")], drops={})

        monkeypatch.setattr(e.local, "infill", infill)
        with pytest.raises(StaleEdit):
            await e.edit("fill", "file:///s.py", 0, len(text), 1)

    asyncio.run(go())
    assert asked == ["x = "] and e.session("file:///s.py").doc.text.startswith("#\ndef f(a):\n    x = ???")


def test_a_todo_hole_is_asked_below_its_words_then_without_them(tiny_model, monkeypatch):
    """`# TODO: add them` is an Invoked completion below `# add them` (the file's line after the same comment is a
    draft there), and when nothing sound comes of that, at the hole with the words taken out too."""
    from dgcomplete.types import Candidate

    text = ("def add(a, b):\n    # add them\n    total = a + b\n    return total\n\n\n"
            "def sub(a, b):\n    # TODO: add them\n    return total\n")
    # below the words the model goes on with the comment
    e, seen = _answering_engine(tiny_model, monkeypatch, "file:///t.py", text, lambda req: [
        Candidate("# and return it" if req.prefix.endswith("# add them\n    ") else "total = a - b")])
    res = asyncio.run(e.edit("fill", "file:///t.py", 0, len(text), 1))
    assert [r.prefix.endswith(("def sub(a, b):\n    # add them\n    ", "def sub(a, b):\n    ")) for r in seen] == [
        True, True] and seen[0].prefix != seen[1].prefix
    assert "total = a + b" in [d.text for d in seen[0].drafts]
    assert res.outcome.new_text.endswith("def sub(a, b):\n    total = a - b\n    return total\n"), res.outcome


def test_a_document_with_cr_breaks_is_read_through_an_lf_view_kept_in_step():
    """Random edits of a document whose lines break with "\\r\\n", "\\r" and "\\n" (the edits joining and splitting
    pairs as a client may): after each, the engine's view is the document with "\\n" breaks, same lines, a tree of
    its own text, and offsets map both ways through the same LSP positions; a document without "\\r" has none."""
    import random

    from dgcomplete import syntax

    e = Engine(None)
    s = e.open("file:///v.py", "def f(x):\r\n    return x\r\n", 1, "python")
    assert s.reading is not None and s.view.text == "def f(x):\n    return x\n"
    rng = random.Random(7)
    pieces = ["a", " ", "\r\n", "\r", "\n", "x = 1", "é😀"]
    for v in range(2, 400):
        lines = s.doc.line_count
        a = (rng.randrange(lines), rng.randrange(12))
        b = (rng.randrange(a[0], lines), rng.randrange(12)) if rng.random() < 0.5 else a
        b = max(a, b)
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(4)))
        e.change(s.uri, v, [((*a, *b), text)])
        assert s.view.text == syntax.lf_text(s.doc.text), v
        assert s.view.line_count == s.doc.line_count
        if "\r" in s.doc.text:
            assert s.reading is not None and s.reading.tree is not None and s.doc.tree is None  # one tree, the view's
            assert s.reading.tree.root_node.end_byte == len(s.reading.text.encode())
        else:
            assert s.reading is None and s.view is s.doc and s.doc.tree is not None
            assert s.doc.tree.root_node.end_byte == len(s.doc.text.encode())
        for off in {0, len(s.doc.text), rng.randrange(len(s.doc.text) + 1)}:
            if s.doc.text[off - 1 : off + 1] == "\r\n":
                continue  # inside a pair: no position names it
            pos = s.doc.position_at(off)
            assert s.view.position_at(s.read_at(0).to_view(off)) == pos
            assert s.read_at(0).from_view(s.read_at(0).to_view(off)) == s.doc.offset_at(*pos)
    e.change(s.uri, 400, [(None, "x = 1\r\ny = 2\r\n")])  # a full sync
    assert s.view.text == "x = 1\ny = 2\n"
    e.change(s.uri, 401, [(None, "x = 1\n")])
    assert s.reading is None


def test_a_tab_indented_document_is_read_with_spaces_through_a_view_kept_in_step():
    """Random edits of a Python document indented with tabs (some lines breaking with "\\r\\n", some aligned with
    spaces after the tabs): after each, the view is the document with each line's leading tabs as four spaces and
    "\\n" breaks, a tree of its own text; every document position maps into the view and back, past the
    indentation onto the same character. Go, which the model learned indented with tabs, keeps them; so does a
    file indented with spaces more than with tabs."""
    import random

    from dgcomplete import syntax

    e = Engine(None)
    s = e.open("file:///t.py", "def f(x):\n\tif x:\n\t\treturn x\n\t  # aligned\n", 1, "python")
    assert s.tab == 4 and s.view.text == "def f(x):\n    if x:\n        return x\n      # aligned\n"
    rng = random.Random(11)
    pieces = ["\t", "\t", " ", "a", "\n", "\n\t", "\r\n", "x = 1", "é😀"]
    for v in range(2, 400):
        lines = s.doc.line_count
        a = (rng.randrange(lines), rng.randrange(8))
        b = max(a, (rng.randrange(a[0], lines), rng.randrange(8)) if rng.random() < 0.5 else a)
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(4)))
        e.change(s.uri, v, [((*a, *b), text)])
        assert s.view.text == syntax.view_text(s.doc.text, s.tab), v
        assert s.tab in (0, 4) and (s.tab == 4) == s.indented_with_tabs()
        if s.reading is not None:
            assert s.reading.tree is not None and s.reading.tree.root_node.end_byte == len(s.reading.text.encode())
        for off in {0, len(s.doc.text), rng.randrange(len(s.doc.text) + 1)}:
            if s.doc.text[off - 1 : off + 1] == "\r\n":
                continue  # inside a pair: no position names it
            line = s.doc.position_at(off)[0]
            assert s.view.position_at(s.read_at(0).to_view(off))[0] == line
            assert s.read_at(0).from_view(s.read_at(0).to_view(off)) == off
            lead = len(s.doc.line_text(line)) - len(s.doc.line_text(line).lstrip(" \t"))
            if off - s.doc.offset_at(line, 0) >= lead:
                assert s.view.text[s.read_at(0).to_view(off) :].split("\n", 1)[0] == syntax.lf_text(
                    s.doc.text[off:]).split("\n", 1)[0]
    go = e.open("file:///t.go", "func f() {\n\treturn\n}\n", 1, "go")
    assert go.reading is None and go.view is go.doc
    spaced = e.open("file:///s.py", "def f():\n    a = 1\n    b = 2\n\tc = 3\n", 1, "python")
    assert spaced.reading is None


def test_text_written_in_the_view_comes_back_indented_with_tabs():
    """What the model writes in the view (indented with spaces) goes into a tab-indented document with tabs: each
    line it starts, an alignment past the last tab stop kept as spaces, and its first line's indentation where it
    goes on with the whitespace the cursor is in."""
    e = Engine(None)
    s = e.open("file:///t.py", "class A:\n\tdef f(self):\n\t\t\n", 1, "python")
    cursor = s.doc.offset_at(2, 2)
    assert s.read_at(0).to_view(cursor) == s.view.offset_at(2, 8)
    assert s.read_at(0).in_document("x = 1\n        return x\n      # note", cursor) == "x = 1\n\t\treturn x\n\t  # note"
    assert s.read_at(0).in_document("    y = 2", cursor) == "\ty = 2"  # one level deeper than the cursor's two tabs
    start = s.doc.offset_at(2, 0)
    assert s.read_at(0).in_document("        z = 3", start) == "\t\tz = 3"
    crlf = e.open("file:///c.py", "class A:\r\n\tdef f(self):\r\n\t\t\r\n", 1, "python")
    assert crlf.read_at(0).in_document("x = 1\n        return x", crlf.doc.offset_at(2, 2)) == "x = 1\r\n\t\treturn x"


async def test_a_line_with_the_editors_closers_is_completed_as_the_line_without_them(engine):
    """At every cut of lines with brackets and quotes, the closers an auto-closing editor leaves right of the cursor
    (``bench.heldout.editor_right``) change nothing the engine suggests: the items are those of the same line
    without them (same seed), and each writes over exactly the closers it writes itself. An edited copy is read,
    so the document's own text and tree stay as the editor has them."""
    from bench.heldout import editor_right
    from dgcomplete.syntax import closed_by, parse

    body = ('def area(w, h):\n    return w * h\n\n\ndef main(items):\n    print(area(items[0], "x (y)"))\n'
            '    {}\n    return 0\n')
    lines = ['total = area(items[1], sum(x for x in items))', 'print(f"{total!r}", end="")',
             "data = {'a': [1, (2, 3)], 'b': area(4, 5)}"]
    engine.local.sampler.max_steps = 4  # the fixture's 400 never-confident steps are for the cancellation tests
    n = 0
    for line in lines:
        for cut in range(4, len(line), 5):
            typed = line[:cut]
            right = editor_right(typed)
            plain, closed = body.replace("{}", typed), body.replace("{}", typed + right)
            at = plain.index(typed) + len(typed)
            got = []
            for uri, text in ((f"file:///p{n}.py", plain), (f"file:///c{n}.py", closed)):  # one open at a time
                engine.open(uri, text, 1, "python")
                got.append(await engine.complete(uri, at, n=3, seed=0))
                doc = engine.session(uri).doc
                assert doc.text == text and str(doc.tree.root_node) == str(parse(text.encode(), "python").root_node)
                engine.close(uri)
            a, b = got
            assert [c.text for c in b.items] == [c.text for c in a.items], (typed, right)
            assert all(c.replaces == 0 for c in a.items)
            assert [c.replaces for c in b.items] == [closed_by(typed, c.text, right, "python") for c in b.items]
            n += bool(right)
    assert n >= 15  # most cuts leave closers
