"""The sampler's rules against the reference implementation's own functions, on the same logits."""

from __future__ import annotations

import pytest
import torch

from dgcomplete.canvas import Spelling
from dgcomplete.sampler import (
    SamplerConfig,
    StableConfident,
    denoise,
    entropy_and_probs,
    entropy_bound_accept,
    gumbel_sample,
    spell_slots,
    temperature,
)

gen = pytest.importorskip("transformers.models.diffusion_gemma.generation_diffusion_gemma")


def test_temperature_schedule_matches_reference():
    proc = gen.LinearTemperatureScheduleLogitsProcessor(t_min=0.4, t_max=0.8, max_denoising_steps=48)
    logits = torch.randn(2, 8, 50)
    for step in (48, 30, 1):
        want = proc(None, logits, cur_step=torch.tensor(step))
        got = logits / temperature(step, 48, 0.4, 0.8)
        assert torch.allclose(got, want)


@pytest.mark.parametrize("bound", [0.1, 0.5, 2.0])
def test_entropy_bound_acceptance_and_renoise_match_reference(bound):
    torch.manual_seed(0)
    b, c, v = 3, 16, 40
    # a mix of confident and uncertain positions
    logits = torch.randn(b, c, v) * torch.linspace(0.5, 12, c)[None, :, None]
    current = torch.randint(0, v, (b, c))
    sampled = torch.randint(0, v, (b, c))
    ref = gen.EntropyBoundSampler(gen.EntropyBoundSamplerConfig(entropy_bound=bound), c, v, 48)
    want_accepted = ref.accept_canvas(current, sampled, logits, 10)
    h, _ = entropy_and_probs(logits)
    assert torch.allclose(h, torch.distributions.Categorical(logits=logits).entropy(), atol=1e-5)
    accept = entropy_bound_accept(h, bound)
    assert torch.equal(accept, ref.accepted_token_mask)
    assert torch.equal(torch.where(accept, sampled, current), want_accepted)
    # renoise: accepted keep the sample, every other position gets a fresh random id
    renoised = ref.renoise_canvas(want_accepted, 10)
    assert torch.equal(renoised[accept], sampled[accept])
    assert accept.any(-1).all()  # the lowest-entropy position is always accepted


def test_acceptance_ignores_clamped_positions():
    h = torch.tensor([[0.0, 0.01, 5.0, 0.3]])  # sums minus max over eligible: 0, 0.01, 0.31
    eligible = torch.tensor([[False, True, True, True]])
    acc = entropy_bound_accept(h, 0.1, eligible)
    assert acc.tolist() == [[False, True, False, True]]


def test_stopping_rule_matches_reference_over_a_sequence():
    torch.manual_seed(1)
    ref = gen.StableAndConfidentStoppingCriteria(stability_threshold=2, confidence_threshold=0.3)
    ours = StableConfident(2, 0.3)
    v = 20
    canvases = [torch.randint(0, v, (2, 6)) for _ in range(2)]
    seq = [canvases[0], canvases[1], canvases[1], canvases[1], canvases[0]]
    for i, argmax in enumerate(seq):
        scale = 1.0 if i < 2 else 30.0  # becomes confident later
        logits = torch.randn(2, 6, v) * scale
        h, _ = entropy_and_probs(logits)
        assert torch.equal(ours(argmax, h), ref(argmax, logits)), f"step {i}"


def test_gumbel_sampling_follows_the_distribution():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]])).expand(20000, 3)
    g = torch.Generator().manual_seed(0)
    counts = torch.bincount(gumbel_sample(logits, g), minlength=3).float() / 20000
    assert torch.allclose(counts, torch.tensor([0.7, 0.2, 0.1]), atol=0.02)


def _peaked_step(target: torch.Tensor, v: int, sharp: float = 20.0):
    """A step function whose logits point at ``target`` (a perfect denoiser)."""

    def step(canvas, sc):
        return torch.nn.functional.one_hot(target, v).float() * sharp

    return step


@pytest.mark.parametrize("mode", ["uniform", "mask"])
def test_denoise_recovers_the_target_and_keeps_clamped_tokens(mode):
    v, f = 30, 10
    target = torch.randint(5, v, (2, f + 4), generator=torch.Generator().manual_seed(3))
    canvas = target.clone()
    free = torch.zeros(2, f, dtype=torch.bool)
    free[:, :8] = True
    canvas[:, :8] = 4 if mode == "mask" else torch.randint(5, v, (2, 8))
    cfg = SamplerConfig(mode=mode, max_steps=12, mask_id=4, confidence_threshold=0.01)
    res = denoise(_peaked_step(target[:, :f], v), canvas, free, cfg, v, generator=torch.Generator().manual_seed(0))
    assert torch.equal(res.tokens, target)
    assert res.steps < 12  # adaptive stop (uniform) / everything unmasked (mask)


def test_denoise_uniform_parallelism_with_a_confident_model():
    v, f = 50, 32
    target = torch.randint(5, v, (1, f))
    cfg = SamplerConfig(mode="uniform", max_steps=48, entropy_bound=0.1)
    res = denoise(_peaked_step(target, v, sharp=40.0), torch.randint(5, v, (1, f)), torch.ones(1, f, dtype=torch.bool),
                  cfg, v, generator=torch.Generator().manual_seed(0))
    assert torch.equal(res.tokens, target)
    assert res.steps <= 3  # all 32 tokens accepted at once, then stable + confident


def test_cancellation_point_is_called_every_step():
    v, f = 20, 6
    calls = []

    def on_step(i):
        calls.append(i)
        if i == 3:
            raise RuntimeError("cancel")

    step = _peaked_step(torch.zeros(1, f, dtype=torch.long), v, sharp=0.0)  # never confident
    with pytest.raises(RuntimeError):
        denoise(step, torch.randint(0, v, (1, f)), torch.ones(1, f, dtype=torch.bool),
                SamplerConfig(max_steps=48), v, on_step=on_step)
    assert calls == [0, 1, 2, 3]


def test_renoise_hook_forces_flagged_positions_to_be_redrawn():
    v, f = 40, 8
    target = torch.full((1, f), 7)
    seen = []

    def hook(argmax, step):
        seen.append(step)
        flags = torch.zeros(1, f, dtype=torch.bool)
        flags[0, 2] = True
        return flags

    cfg = SamplerConfig(mode="uniform", max_steps=6, hook_every=2, confidence_threshold=-1.0)  # never stops early
    res = denoise(_peaked_step(target, v), torch.randint(8, v, (1, f)), torch.ones(1, f, dtype=torch.bool), cfg, v,
                  generator=torch.Generator().manual_seed(0), renoise_hook=hook)
    assert seen == [2, 4]
    assert res.renoised_by_hook == 2
    assert torch.equal(res.tokens, target)  # the argmax is still committed at the end


def test_logit_bias_constrains_the_first_position():
    v, f = 20, 4
    target = torch.full((1, f), 9)
    bias = torch.zeros(f, v)
    bias[0] = float("-inf")
    bias[0, 11] = 0.0
    res = denoise(_peaked_step(target, v), torch.randint(0, v, (1, f)), torch.ones(1, f, dtype=torch.bool),
                  SamplerConfig(max_steps=8), v, logit_bias=bias, generator=torch.Generator().manual_seed(0))
    assert res.tokens[0, 0] == 11 and (res.tokens[0, 1:] == 9).all()


def test_a_slot_whose_tokens_a_bias_rules_out_has_the_entropy_of_the_rest():
    """-inf in the logits (healing, no filler in a span's first slot) is a token of probability 0: it adds 0 to the
    entropy, not NaN."""
    logits = torch.tensor([[2.0, 1.0, float("-inf"), 0.5]])
    h, p = entropy_and_probs(logits)
    want = torch.distributions.Categorical(logits=logits[:, [0, 1, 3]]).entropy()
    assert torch.isfinite(h).all() and torch.allclose(h, want) and p[0, 2] == 0


def test_mask_mode_commits_a_sure_slot_with_a_bias_first():
    """A slot with a -inf bias and a sure token is accepted by entropy at the first step (with NaN entropy it
    sorted after every other slot and stayed masked until the last step, then took the argmax beside its
    neighbours)."""
    v, f, mask, word = 12, 4, 4, 7
    seen = []

    def step(canvas, sc):
        seen.append(canvas[0, :f].tolist())
        logits = torch.zeros(canvas.shape[0], f, v)
        logits[:, 0, word] = 9.0  # slot 0 is sure; the rest are not
        return logits

    bias = torch.zeros(f, v)
    bias[0, 3] = float("-inf")  # e.g. no filler in the first slot
    cfg = SamplerConfig(mode="mask", max_steps=4, mask_id=mask)
    res = denoise(step, torch.full((1, f), mask), torch.ones(1, f, dtype=torch.bool), cfg, v, logit_bias=bias)
    assert seen[1][0] == word and res.tokens[0, 0] == word


class _Pieces:
    """A toy vocabulary for canvas.Spelling: its pieces and the healing lookup (Tokenizer.ids_starting_with)."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces

    def ids_starting_with(self, text: str) -> list[int]:
        return [i for i, p in enumerate(self.pieces) if p and (p.startswith(text) or text.startswith(p))]


def _spelling(pieces: list[str], word: str) -> Spelling:
    return Spelling(_Pieces(pieces), word)  # type: ignore[arg-type]


def test_spelling_writes_the_typed_word_with_the_models_own_pieces():
    pieces = ["", "re", "try", "retry", "_", "_s", "state", "x", "r"]
    f, v = 6, len(pieces)
    scaled = torch.zeros(2, f, v)
    scaled[0, 0, 1], scaled[0, 1, 2], scaled[0, 2, 4], scaled[0, 3, 6] = 5.0, 5.0, 5.0, 5.0  # re|try|_|state
    scaled[1, 0, 7], scaled[1, 0, 3] = 9.0, 4.0  # wants "x" first; of the word's pieces prefers "retry"
    scaled[1, 1, 5] = 3.0
    masked = torch.ones(2, f, dtype=torch.bool)
    ids, spelled, forced = spell_slots(scaled, masked, _spelling(pieces, "retry_s"))
    assert [pieces[i] for i in ids[0, :4].tolist()] == ["re", "try", "_", "state"]
    assert spelled[0].tolist() == [True] * 4 + [False] * 2 and not forced[0]
    assert [pieces[i] for i in ids[1, :2].tolist()] == ["retry", "_s"] and spelled[1].sum() == 2 and forced[1]
    # a slot already decided (warm start) is never spelled over
    masked[0, 0] = False
    assert not spell_slots(scaled, masked, _spelling(pieces, "retry_s"))[1][0].any()


def test_denoise_keeps_the_spelled_word_and_says_which_rows_were_made_to():
    pieces = ["<m>", "re", "try", "x", "y"]
    v, f, mask = len(pieces), 4, 0

    def step(canvas, sc):
        logits = torch.zeros(canvas.shape[0], f, v)
        logits[:, :, 3] = 4.0  # the model wants "x" everywhere
        return logits

    def hook(argmax, step_no):  # a syntax hook that flags every slot
        return torch.ones_like(argmax, dtype=torch.bool)

    cfg = SamplerConfig(mode="mask", max_steps=3, mask_id=mask, hook_every=1)
    res = denoise(step, torch.full((1, f), mask), torch.ones(1, f, dtype=torch.bool), cfg, v,
                  renoise_hook=hook, spell=_spelling(pieces, "retry"))
    assert [pieces[i] for i in res.tokens[0, :2].tolist()] == ["re", "try"] and bool(res.forced[0])


def test_denoise_is_deterministic_given_a_seed():
    v, f = 30, 12
    logits = torch.randn(1, f, v)

    def step(canvas, sc):
        return logits

    runs = [denoise(step, torch.zeros(1, f, dtype=torch.long), torch.ones(1, f, dtype=torch.bool),
                    SamplerConfig(max_steps=6), v, generator=torch.Generator().manual_seed(5)).tokens for _ in range(2)]
    assert torch.equal(runs[0], runs[1])


@pytest.mark.parametrize("frontier", [False, True])
def test_mask_mode_filler_commit_rule(frontier):
    """A confident filler in the middle of the span truncates it, unless fillers commit only at the frontier."""
    v, f, fill, mask, word = 12, 4, 3, 4, 7

    seen = []

    def step(canvas, sc):
        seen.append(canvas[0, :f].tolist())
        logits = torch.zeros(canvas.shape[0], f, v)
        logits[:, :, word] = 3.0  # content, moderately sure everywhere
        logits[:, 2, fill] = 9.0  # slot 2 is very sure it is filler
        return logits

    cfg = SamplerConfig(mode="mask", max_steps=4, mask_id=mask, fill_id=fill,
                        stop_ids=(fill,) if frontier else ())
    res = denoise(step, torch.full((1, f), mask), torch.ones(1, f, dtype=torch.bool), cfg, v)
    if frontier:  # content first; the filler ends the span once it is the leftmost open slot
        assert res.tokens[0].tolist() == [word, word, fill, fill]
        assert seen[1][2] == mask  # not committed in the first step
    else:  # the filler commits first (lowest entropy): whatever the later slots get is cut off by it
        assert res.tokens[0, 2] == fill and res.accepted_per_step[0] >= 1
        assert seen[1][2] == fill  # committed in the first step, before any content


@pytest.mark.parametrize("leftmost", [False, True])
def test_mask_mode_unmasks_the_leftmost_slot_every_step_when_asked(leftmost):
    """The span's start is decided left to right: the leftmost masked slot commits at every step even when it is
    the least sure one (by entropy alone it would wait for the last step)."""
    v, f, mask, word = 12, 4, 4, 7

    seen = []

    def step(canvas, sc):
        seen.append(canvas[0, :f].tolist())
        logits = torch.zeros(canvas.shape[0], f, v)
        logits[:, 1:, word] = 5.0  # slots 1.. are fairly sure; slot 0 is uniform (highest entropy)
        return logits

    cfg = SamplerConfig(mode="mask", max_steps=4, mask_id=mask, leftmost=leftmost)
    res = denoise(step, torch.full((1, f), mask), torch.ones(1, f, dtype=torch.bool), cfg, v)
    assert (seen[1][0] != mask) is leftmost
    assert mask not in res.tokens[0].tolist()


def test_mask_mode_leftmost_and_argmax_per_row():
    """One flag per row: row 0 decides its start left to right, row 1 in entropy order; with ``greedy_rows=2``
    both commit the argmax (no Gumbel draw), so they differ only in the order of their commits."""
    v, f, mask, word = 12, 4, 4, 7

    seen = []

    def step(canvas, sc):
        seen.append(canvas[:, :f].tolist())
        logits = torch.zeros(canvas.shape[0], f, v)
        logits[:, 1:, word] = 5.0
        logits[:, 0, 2] = 0.5  # slot 0: unsure, but 2 is its argmax
        return logits

    cfg = SamplerConfig(mode="mask", max_steps=4, mask_id=mask, leftmost=(True, False), greedy_rows=2)
    res = denoise(step, torch.full((2, f), mask), torch.ones(2, f, dtype=torch.bool), cfg, v,
                  generator=torch.Generator().manual_seed(0))
    assert seen[1][0][0] == 2 and seen[1][1][0] == mask  # row 0 committed slot 0 in the first step, row 1 did not
    assert res.tokens[:, :f].tolist() == [[2, word, word, word]] * 2  # both argmax
    with pytest.raises(AssertionError):
        denoise(step, torch.full((3, f), mask), torch.ones(3, f, dtype=torch.bool), cfg, v)


def test_identical_rows_share_their_first_decoder_pass(monkeypatch):
    """Rows that start the same (every multi-row canvas of a completion) are computed once until they diverge;
    what each row then commits is what a pass over all rows gives."""
    v, f, mask = 12, 4, 4
    shapes: list[int] = []

    def step(canvas, sc):
        shapes.append(canvas.shape[0])
        logits = torch.zeros(canvas.shape[0], f, v)
        logits[:, :, 7] = 2.0 + canvas[:, :f].eq(mask).float()  # depends on the row's own canvas
        logits[:, 0, 2] = 2.5
        return logits

    cfg = SamplerConfig(mode="mask", max_steps=3, mask_id=mask, leftmost=(True, False), greedy_rows=2)
    shared = denoise(step, torch.full((2, f), mask), torch.ones(2, f, dtype=torch.bool), cfg, v)
    assert shapes[0] == 1 and shapes[1:] == [2] * (len(shapes) - 1)
    from dgcomplete import sampler as sampler_mod

    monkeypatch.setattr(sampler_mod, "_step_once", lambda fn, canvas, sc: fn(canvas, sc))  # every row, every pass
    apart = denoise(step, torch.full((2, f), mask), torch.ones(2, f, dtype=torch.bool), cfg, v)
    assert torch.equal(shared.tokens, apart.tokens)
