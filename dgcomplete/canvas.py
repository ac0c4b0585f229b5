"""What to fill: token-level layout of a denoising request, and its commit back to text.

    encoder input : [<bos>] prefix tokens                 (cached per document, reused across keystrokes)
    canvas        : free x N (noise | <mask> | warm start) | suffix head x K (clean, clamped)

A request is a :class:`Prepared` canvas (built here by :func:`build_canvas` for completions, or by
``edit.ModelFiller`` for rewrites, with :func:`draw_noise` for every noise slot); the local backend's one
decoding core (``LocalInfiller.denoise_canvas``) encodes the prefix and denoises it, and :func:`commit` +
:func:`detokenize` turn the result back into text.

Also the prefix window (which part of a long file the model sees, chosen so it moves rarely and the cache
survives) and token healing (a cursor inside a word backs up to the word start; the first free token must agree
with what was typed, and in mask mode the sampler writes the whole word first, :class:`Spelling`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from .model.tokenizer import Tokenizer

WORD_TAIL = re.compile(r"[A-Za-z0-9_]+\Z")  # \Z, not $: "$" also matches before a final newline


@dataclass
class Healing:
    prefix: str  # prefix text with the partial word removed
    typed: str  # the partial word (empty: no healing)


def heal(prefix: str, max_chars: int = 24) -> Healing:
    """Back up over a partially typed identifier so the model starts at a boundary it was trained on."""
    m = WORD_TAIL.search(prefix[-max_chars:])
    if not m or m.group(0) == "":
        return Healing(prefix, "")
    typed = m.group(0)
    return Healing(prefix[: len(prefix) - len(typed)], typed)


def prefix_window(prefix: str, max_chars: int) -> int:
    """Start offset of the prefix text the model sees.

    Snapped to multiples of half the window and then to a line start, so typing moves it only every
    ``max_chars / 2`` characters: between moves the cached keys/values stay valid and a keystroke costs only
    its own tokens. The window holds between half and all of ``max_chars``.
    """
    if len(prefix) <= max_chars:
        return 0
    step = max(1, max_chars // 2)
    start = ((len(prefix) - max_chars) // step + 1) * step
    nl = prefix.find("\n", start)
    return nl + 1 if nl != -1 else start


def prefix_ids(tok: Tokenizer, prefix: str, max_tokens: int, max_chars: int) -> tuple[list[int], int]:
    """Encoder input ids for a prefix and the character offset where the model's view starts."""
    start = prefix_window(prefix, max_chars)
    ids = tok.encode(prefix[start:])
    if start == 0 and tok.bos_id is not None:
        ids = [tok.bos_id] + ids
    if len(ids) > max_tokens:
        ids = ids[-max_tokens:]
    return ids, start


def suffix_head(tok: Tokenizer, suffix: str, k: int) -> list[int]:
    """The first K suffix tokens, closed with EOS and padding when the file ends (as in training)."""
    if k <= 0:
        return []
    ids = tok.encode(suffix[: 8 * k])
    if len(ids) < k and len(suffix) <= 8 * k:
        ids = ids + [min(tok.eos_ids)] + [tok.pad_id] * k
    return ids[:k]


def draw_noise(shape: tuple[int, ...], generator: torch.Generator | None, *, vocab_size: int,
               noise_ids: Tensor | None = None) -> Tensor:
    """Uniform noise tokens (from ``noise_ids`` when given: ordinary tokens only): the one noise draw, for
    starting canvases and for the sampler's renoising."""
    if noise_ids is None:
        return torch.randint(0, vocab_size, shape, generator=generator)
    return noise_ids[torch.randint(0, len(noise_ids), shape, generator=generator)]


def start_slots(n: int, generator: torch.Generator | None, *, mode: str, vocab_size: int, mask_id: int | None,
                noise_ids: Tensor | None = None) -> Tensor:
    """Starting tokens of ``n`` free slots: ``<mask>`` in mask mode, noise otherwise."""
    if mode == "mask":
        return torch.full((n,), mask_id if mask_id is not None else 0, dtype=torch.long)
    return draw_noise((n,), generator, vocab_size=vocab_size, noise_ids=noise_ids)


@dataclass
class Prepared:
    """A canvas ready for the decoding core: the prefix text (encoded, through the per-document cache) and
    the canvas [B, C] whose first F columns hold the slots, ``free`` [B, F] marking the denoised ones (the
    rest, and every column after F, the suffix head among them, are clamped)."""

    prefix: str
    canvas: Tensor
    free: Tensor
    generator: torch.Generator | None = None
    logit_bias: Tensor | None = None  # [F, V], 0 / -inf
    warm: bool = False  # the free slots hold a guess (warm start), not noise
    renoise_hook: Callable[[Tensor, int], Tensor | None] | None = None
    max_steps: int | None = None  # None: the sampler's
    leftmost: bool | tuple[bool, ...] = False  # mask mode: unmask the leftmost masked slot every step (SamplerConfig.leftmost)
    greedy_rows: int = 1  # mask mode: rows committing the argmax (SamplerConfig.greedy_rows)
    spell: Spelling | None = None  # mask mode: the healed word the first slots must write (sampler.denoise)


def span_canvas(slots: list[int], free: list[bool], head: list[int]) -> tuple[Tensor, Tensor]:
    """One row: the given slots then the suffix head (an edit's canvas, laid out as in training)."""
    return torch.tensor([slots + head], dtype=torch.long), torch.tensor([free], dtype=torch.bool)


def build_canvas(
    n_free: list[int],
    head: list[int],
    *,
    mode: str,
    vocab_size: int,
    fill_id: int | None,
    mask_id: int | None,
    generator: torch.Generator | None,
    warm: list[int] | None = None,
    noise_ids: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Canvases [B, max(N) + K] (one row per entry of ``n_free``) and the free mask [B, max(N)].

    Rows with a shorter free span (length search for models without a filler token) are right-padded with
    clamped filler/pad tokens after their suffix head, so all rows share one shape and one decoder call.
    """
    f = max(n_free)
    pad = fill_id if fill_id is not None else 0
    rows, free = [], torch.zeros(len(n_free), f, dtype=torch.bool)
    for i, n in enumerate(n_free):
        start = start_slots(n, generator, mode=mode, vocab_size=vocab_size, mask_id=mask_id, noise_ids=noise_ids)
        if warm:
            w = torch.tensor(warm[:n] + ([fill_id] * (n - len(warm)) if fill_id is not None else []), dtype=torch.long)
            start[: len(w)] = w
        row = torch.cat([start, torch.tensor(head, dtype=torch.long), torch.full((f - n,), pad, dtype=torch.long)])
        rows.append(row)
        free[i, :n] = True
    # a shorter row's suffix head sits right after its own span: those columns are clamped, not free
    return torch.stack(rows), free


def healing_bias(tok: Tokenizer, typed: str, f: int, vocab_size: int) -> Tensor | None:
    """Logit bias [F, V]: the first free token must agree with the typed characters."""
    if not typed:
        return None
    ids = tok.ids_starting_with(typed)
    if not ids:
        return None
    bias = torch.zeros(f, vocab_size)
    bias[0] = float("-inf")
    bias[0, ids] = 0.0
    return bias


class Spelling:
    """The word the free slots must begin with (a healed word), piece by piece, for the sampler.

    :func:`healing_bias` holds only the first slot to the typed characters; where that slot takes a part of the
    word (``re`` of ``retry_s``), the next slots are free to write anything, and on the held-out dev split the
    model's sample then failed to write the typed word in 55 of the 158 requests inside a word (``retry_s`` +
    ``tatestate`` is no completion of it), dropping the model from the request (bench/results/session37_ab.json).
    :meth:`allowed` gives, after ``done`` characters of the word, the tokens that may come next and how many
    characters each then has written.
    """

    def __init__(self, tok: Tokenizer, word: str) -> None:
        self.tok, self.word = tok, word
        self._cache: dict[int, tuple[Tensor, Tensor]] = {}

    def __len__(self) -> int:
        return len(self.word)

    def allowed(self, done: int) -> tuple[Tensor, Tensor]:
        hit = self._cache.get(done)
        if hit is None:
            ids = self.tok.ids_starting_with(self.word[done:])
            pieces = self.tok.pieces
            reach = [min(len(self.word), done + len(pieces[i])) for i in ids]
            hit = self._cache[done] = (torch.tensor(ids, dtype=torch.long), torch.tensor(reach, dtype=torch.long))
        return hit


def commit(tokens: list[int], stop_ids: set[int], origin: list[int] | None = None, *,
           open_end: bool = True) -> tuple[list[int], list[int]]:
    """The committed span of a denoised row: (tokens, origin) with the filler/EOS/pad/mask tokens taken out.

    ``origin[k]`` is the index of the original token slot ``k`` held (an edit's canvas), -1 for a new slot;
    None: every slot is new (a completion). With ``open_end`` the span ends at the first stop token after
    the last original slot, as in training (``m1 .. mk <fill> .. <fill>``); a stop token on or among the
    original slots deletes just that slot (cutting there would drop the rest of a rewritten selection).
    Without it (a clamped edit) every stop token is just removed.
    """
    origin = [-1] * len(tokens) if origin is None else origin
    tail = max((k for k, o in enumerate(origin) if o >= 0), default=-1) + 1
    out: list[int] = []
    kept: list[int] = []
    for k, t in enumerate(tokens):
        if t in stop_ids:
            if open_end and k >= tail:
                break
            continue
        out.append(t)
        kept.append(origin[k])
    return out, kept


def detokenize(tok: Tokenizer, tokens: list[int], origin: list[int] | None = None, original: str = "",
               ids: list[int] | None = None, offsets: list[tuple[int, int]] | None = None) -> str:
    """Text of committed tokens. For an edit, an original token still in its slot keeps its exact text (up
    to the next original token: whatever lay between them, too); runs of new tokens are decoded."""
    if origin is None or ids is None or offsets is None:
        return tok.decode(tokens)
    parts: list[str] = []
    run: list[int] = []
    for t, o in zip(tokens, origin, strict=True):
        if o >= 0 and t == ids[o]:
            if run:
                parts.append(tok.decode(run))
                run = []
            hi = offsets[o + 1][0] if o + 1 < len(offsets) else len(original)
            parts.append(original[offsets[o][0] : hi])
        else:
            run.append(t)
    if run:
        parts.append(tok.decode(run))
    return "".join(parts)
