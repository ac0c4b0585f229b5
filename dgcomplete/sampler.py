"""How to denoise a canvas: DiffusionGemma's uniform-state renoising loop, and an absorbing-mask variant.

A pure function of tensors: it knows neither the syntax layer nor the document. The engine hands it
``step_fn(canvas, sc_probs) -> logits`` (one decoder pass) and optional hooks: ``on_step`` (cancellation
point, called between steps) and ``renoise_hook`` (the syntax layer's say on which argmax tokens broke the
parse). The rule functions (temperature, entropy, acceptance, stopping) are separate so tests can hold each
against the reference implementation on the same logits.

Canvas layout: the first F columns hold the positions the step function returns logits for; ``free`` [B, F]
marks which of them are free (denoised, accepted, returned). Every other position is clamped: restored after
each renoise, outside the entropy budget and the stopping rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor

from .canvas import Spelling, draw_noise

StepFn = Callable[[Tensor, Tensor | None], Tensor]  # (canvas [B, C], sc_probs [B, F, V] | None) -> logits [B, F, V]
RenoiseHook = Callable[[Tensor, int], Tensor | None]  # (argmax [B, F], step) -> bool [B, F] positions to renoise


@dataclass
class SamplerConfig:
    mode: str = "uniform"  # "uniform" (reference renoising) or "mask" (absorbing <mask>)
    max_steps: int = 48
    entropy_bound: float = 0.1
    t_min: float = 0.4
    t_max: float = 0.8
    stability_threshold: int = 1
    confidence_threshold: float = 0.005
    mask_id: int | None = None
    hook_every: int = 2  # steps between syntax-guided renoise checks
    min_steps: int = 1
    # mask mode, opt-in: ids that end a span (filler, EOS, ...) may be committed only at the leftmost
    # still-masked slot, and then every masked slot after it becomes ``fill_id`` (a middle is contiguous).
    # It stops early fillers from truncating a suggestion, but on the corpus dev split it gave no more exact
    # lines and more wrong ones (bench/results/dev_decoding.json, variant "frontier_stop"), so it is off.
    stop_ids: tuple[int, ...] = ()
    fill_id: int | None = None
    # mask mode: the leftmost still-masked slot is also unmasked every step, so a few-step span is decided left
    # to right at its start instead of all at once in the last step (LocalInfiller.infill: Invoked completions and
    # as-you-type ones without drafts)
    leftmost: bool | tuple[bool, ...] = False  # or one flag per row
    greedy_rows: int = 1  # mask mode: rows [0, greedy_rows) commit the argmax, later rows a Gumbel sample


@dataclass
class DenoiseResult:
    tokens: Tensor  # [B, C] argmax canvas of the last step (clamped positions as given)
    steps: int
    mean_entropy: Tensor  # [B] over free positions, last step
    token_entropy: Tensor  # [B, F] last step
    accepted_per_step: list[float] = field(default_factory=list)  # mean accepted free tokens per row
    renoised_by_hook: int = 0
    forced: Tensor | None = None  # [B] rows whose spelled word the model would not have written (spell_slots)


# ---- the rules ---------------------------------------------------------------------------------------------
def temperature(cur_step: int, max_steps: int, t_min: float, t_max: float) -> float:
    """Linear schedule; ``cur_step`` counts the steps *remaining* (S..1), as in the reference."""
    return t_min + (t_max - t_min) * (cur_step / max_steps)


def entropy_and_probs(logits: Tensor) -> tuple[Tensor, Tensor]:
    """Token entropy and probabilities from one softmax (computed once per step).

    A token a logit bias rules out (-inf: healing, no filler in a span's first slot) adds 0, not 0 * -inf: as
    ``-(p * log p)`` such a slot's entropy was NaN, which sorts after every other, so a slot with a bias was never
    accepted by entropy and took the last step's argmax beside its neighbours (``return`` + `` return``)."""
    p = F.softmax(logits.float(), dim=-1)
    return torch.special.entr(p).sum(-1), p


def entropy_bound_accept(token_entropy: Tensor, bound: float, eligible: Tensor | None = None) -> Tensor:
    """Accept the k lowest-entropy positions with ``sum(H_1..H_k) - max(H_1..H_k) <= bound``.

    The lowest one always passes (its sum minus max is 0). Ineligible positions (clamped) are sorted last
    with infinite entropy so they never consume the budget nor get accepted.
    """
    h = token_entropy if eligible is None else token_entropy.masked_fill(~eligible, float("inf"))
    sorted_h, order = torch.sort(h, dim=-1)
    finite = torch.isfinite(sorted_h)
    cum = torch.cumsum(torch.where(finite, sorted_h, torch.zeros_like(sorted_h)), dim=-1)
    selected = (cum - torch.where(finite, sorted_h, torch.zeros_like(sorted_h)) <= bound) & finite
    return torch.zeros_like(selected).scatter(-1, order, selected)


def gumbel_sample(logits: Tensor, generator: torch.Generator | None) -> Tensor:
    """Categorical sample by Gumbel-max: no softmax normalisation or CDF search needed."""
    u = torch.rand(logits.shape, generator=generator, device=logits.device).clamp_(1e-10, 1.0)
    return (logits - torch.log(-torch.log(u))).argmax(-1)


class StableConfident:
    """Stop when the argmax canvas is unchanged for ``threshold`` steps and the mean entropy is below a bar."""

    def __init__(self, stability_threshold: int, confidence_threshold: float) -> None:
        self.k, self.bar = stability_threshold, confidence_threshold
        self.history: list[Tensor] = []

    def seed(self, argmax: Tensor) -> None:
        """Warm start: treat a known continuation as the previous argmax, so it can stop after one step."""
        self.history = [argmax.clone()]

    def __call__(self, argmax: Tensor, token_entropy: Tensor, eligible: Tensor | None = None) -> Tensor:
        if self.k == 0:
            stable = torch.ones(argmax.shape[0], dtype=torch.bool, device=argmax.device)
        else:
            past = self.history[-self.k :]
            if len(past) < self.k:
                stable = torch.zeros(argmax.shape[0], dtype=torch.bool, device=argmax.device)
            else:
                stable = torch.stack([(p == argmax).all(-1) for p in past]).all(0)
            self.history = (self.history + [argmax.clone()])[-self.k :]
        if eligible is None:
            mean_h = token_entropy.mean(-1)
        else:
            mean_h = (token_entropy * eligible).sum(-1) / eligible.sum(-1).clamp_min(1)
        return stable & (mean_h < self.bar)


# ---- the loop ----------------------------------------------------------------------------------------------
def sc_probs_full(probs: Tensor, canvas: Tensor, free: Tensor) -> Tensor:
    """Self-conditioning input [B, F, V]: model beliefs on free slots, one-hot on clamped ones among them.

    Positions after the first F are clamped; the network treats them as one-hot without materialising it.
    """
    f = probs.shape[1]
    clamped = ~free
    if not bool(clamped.any()):
        return probs
    onehot = F.one_hot(canvas[:, :f], probs.shape[2]).to(probs.dtype)
    return torch.where(free[..., None], probs, onehot)


def _row_flags(flags: bool | tuple[bool, ...], b: int) -> Tensor | None:
    """A per-row switch (one flag for every row, or one per row) as a [B] mask; None when no row has it."""
    if isinstance(flags, tuple):
        assert len(flags) == b, "one flag per row"
        return torch.tensor(flags, dtype=torch.bool) if any(flags) else None
    return torch.ones(b, dtype=torch.bool) if flags else None


def spell_slots(scaled: Tensor, masked: Tensor, spell: Spelling,
                best: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Per row, the first masked slots' tokens that write the word ``spell`` holds, each slot's most likely piece
    among those that go on with it (greedy, from this step's logits): (ids [B, F], which slots they fill [B, F],
    ``forced`` [B]: a slot's piece was not its argmax over every token, so the model would not have written the word
    there of its own accord). ``best``: this step's argmax, where the caller has it.

    A row that cannot write it (no slots left) keeps what it got; its text then fails the engine's check of the
    typed word, as before."""
    b, f = masked.shape
    ids = torch.zeros(b, f, dtype=torch.long)
    spelled = torch.zeros(b, f, dtype=torch.bool)
    forced = torch.zeros(b, dtype=torch.bool)
    best = scaled.argmax(-1) if best is None else best
    for r in range(b):
        done, p = 0, 0
        while done < len(spell) and p < f and bool(masked[r, p]):
            allowed, reach = spell.allowed(done)
            if not len(allowed):
                break
            k = int(scaled[r, p, allowed].argmax())
            ids[r, p], spelled[r, p] = allowed[k], True
            forced[r] |= bool(best[r, p] != allowed[k])
            done, p = int(reach[k]), p + 1
    return ids, spelled, forced


def _step_once(step_fn: StepFn, canvas: Tensor, sc: Tensor | None) -> Tensor:
    """One decoder pass; rows that are all the same (every row's first step, before they diverge) are computed
    once: their logits are the same, and the rows then differ only by the sampler's per-row choices."""
    b = canvas.shape[0]
    if b > 1 and bool((canvas == canvas[:1]).all()) and (sc is None or bool((sc == sc[:1]).all())):
        one = step_fn(canvas[:1], None if sc is None else sc[:1])
        return one.expand(b, *one.shape[1:])
    return step_fn(canvas, sc)


def denoise(
    step_fn: StepFn,
    canvas: Tensor,
    free: Tensor,
    cfg: SamplerConfig,
    vocab_size: int,
    *,
    generator: torch.Generator | None = None,
    logit_bias: Tensor | None = None,
    warm: bool = False,
    on_step: Callable[[int], None] | None = None,
    renoise_hook: RenoiseHook | None = None,
    noise_ids: Tensor | None = None,
    spell: Spelling | None = None,
) -> DenoiseResult:
    """Denoise ``canvas`` [B, C]; ``free`` [B, F] marks free slots among the first F columns.

    ``canvas`` free slots hold the starting state: uniform noise (or a warm-start guess) in uniform mode,
    ``<mask>`` (or a warm-start guess) in mask mode. ``logit_bias`` [F, V] (0 / -inf) constrains positions,
    e.g. token healing of a partially typed word. ``noise_ids`` restricts renoising draws to a set of ids.
    ``spell`` (mask mode): a healed word the free slots begin with, written into the first masked slots at the
    first step (:func:`spell_slots`) and never renoised; the rest is denoised around it. ``forced`` in the result
    marks the rows where the model would not have written it.
    """
    b, c = canvas.shape
    f = free.shape[1]
    canvas = canvas.clone()
    clamped_vals = canvas[:, :f].clone()
    stopper = StableConfident(cfg.stability_threshold, cfg.confidence_threshold)
    if warm:
        stopper.seed(canvas[:, :f])
    sc = None
    result_argmax = canvas[:, :f].clone()
    token_h = torch.zeros(b, f)
    accepted_hist: list[float] = []
    hooked = 0
    steps = 0
    force = torch.zeros(b, f, dtype=torch.bool)
    masked = (canvas[:, :f] == cfg.mask_id) & free if cfg.mode == "mask" else None
    stop_ids = torch.tensor(cfg.stop_ids, dtype=torch.long) if cfg.stop_ids else None
    left_rows = _row_flags(cfg.leftmost, b)  # rows whose leftmost open slot commits every step (None: none)
    greedy = min(b, max(1, cfg.greedy_rows))
    fixed = torch.zeros(b, f, dtype=torch.bool)  # slots holding the spelled word
    forced = None

    for cur_step in range(cfg.max_steps, 0, -1):
        if on_step is not None:
            on_step(steps)
        logits = _step_once(step_fn, canvas, sc)[:, :f].float()
        steps += 1
        if logit_bias is not None:
            logits = logits + logit_bias[None, :f]
        t = temperature(cur_step, cfg.max_steps, cfg.t_min, cfg.t_max)
        scaled = logits / t
        token_h, probs = entropy_and_probs(scaled)
        argmax = scaled.argmax(-1)
        argmax = torch.where(free, argmax, clamped_vals)

        if spell is not None and steps == 1 and len(spell) and masked is not None:
            # the typed word first, in the model's own pieces; the syntax hook never renoises it
            ids, fixed, forced = spell_slots(scaled, masked, spell, argmax)
            canvas[:, :f] = torch.where(fixed, ids, canvas[:, :f])
            masked = masked & ~fixed
        if forced is not None:  # the syntax hook reads the spelled word, not what the model would have put there
            argmax = torch.where(fixed, canvas[:, :f], argmax)

        if renoise_hook is not None and steps % cfg.hook_every == 0 and steps < cfg.max_steps:
            flagged = renoise_hook(argmax, steps)
            if flagged is not None:
                force = flagged & free & ~fixed
                hooked += int(force.sum())

        if cfg.mode == "uniform":
            eligible = free & ~force
            accept = entropy_bound_accept(token_h, cfg.entropy_bound, eligible)
            # acceptance depends on entropies only: sample just the accepted positions (Gumbel-max)
            new_free = draw_noise((b, f), generator, vocab_size=vocab_size, noise_ids=noise_ids)
            rows, cols = accept.nonzero(as_tuple=True)
            if len(rows):
                new_free[rows, cols] = gumbel_sample(scaled[rows, cols], generator)
            canvas[:, :f] = torch.where(free, new_free, clamped_vals)
            accepted_hist.append(float(accept.sum(-1).float().mean()))
        else:
            assert masked is not None and cfg.mask_id is not None
            # the first ``greedy`` rows commit the argmax; further rows sample (Gumbel-max at the scheduled
            # temperature) so that several candidates for one request differ
            choice = argmax
            if b > greedy:
                choice = torch.cat([argmax[:greedy], gumbel_sample(scaled[greedy:], generator)], dim=0)
                choice = torch.where(free, choice, clamped_vals)
            # unmask the confident ones (entropy bound) among the still-masked, at least an even share
            eligible = masked & ~force
            ends = None
            if stop_ids is not None:
                frontier = torch.zeros_like(masked)
                has = masked.any(-1)
                frontier[has, masked[has].float().argmax(-1)] = True  # leftmost still-masked slot per row
                ends = torch.isin(choice, stop_ids) & frontier
                eligible &= ~torch.isin(choice, stop_ids) | frontier
            accept = entropy_bound_accept(token_h, cfg.entropy_bound, eligible)
            remaining = eligible.sum(-1)
            need = torch.ceil(remaining.float() / cur_step).long()
            order = torch.argsort(token_h.masked_fill(~eligible, float("inf")), dim=-1)
            rank = torch.empty_like(order).scatter_(-1, order, torch.arange(f).expand(b, f).contiguous())
            accept |= (rank < need[:, None]) & eligible
            if left_rows is not None:
                has = eligible.any(-1) & left_rows
                first = torch.zeros_like(eligible)
                first[has, eligible[has].float().argmax(-1)] = True
                accept |= first
            if force.any():  # syntax hook: re-mask what broke the parse
                canvas[:, :f] = torch.where(force, torch.full_like(argmax, cfg.mask_id), canvas[:, :f])
                masked = masked | force
            canvas[:, :f] = torch.where(accept, choice, canvas[:, :f])
            masked = masked & ~accept
            if ends is not None and cfg.fill_id is not None:
                # the span ended: every slot after the stop is filler, also one accepted beside it this step
                done = ((ends & accept).long().cumsum(-1) > 0) & free & ~(ends & accept)
                canvas[:, :f] = torch.where(done, torch.full_like(argmax, cfg.fill_id), canvas[:, :f])
                masked = masked & ~done
            accepted_hist.append(float(accept.sum(-1).float().mean()))
            argmax = torch.where(masked, argmax, canvas[:, :f])
        force = torch.zeros_like(force)
        result_argmax = argmax
        sc = sc_probs_full(probs, canvas, free)
        if steps < cfg.min_steps:
            continue
        if cfg.mode == "mask":
            if not bool(masked.any()):
                break
        elif bool(stopper(argmax, token_h, free).all()):
            break
    tokens = canvas.clone()
    tokens[:, :f] = torch.where(free, result_argmax, clamped_vals)
    mean_h = (token_h * free).sum(-1) / free.sum(-1).clamp_min(1)
    return DenoiseResult(tokens, steps, mean_h, token_h, accepted_hist, hooked, forced)
