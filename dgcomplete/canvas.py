"""What to fill: token-level layout of an infilling request.

    encoder input : [<bos>] prefix tokens                 (cached per document, reused across keystrokes)
    canvas        : free x N (noise | <mask> | warm start) | suffix head x K (clean, clamped)

Also the prefix window (which part of a long file the model sees, chosen so it moves rarely and the cache
survives) and token healing (a cursor inside a word backs up to the word start and constrains the first
free token to agree with what was typed).
"""

from __future__ import annotations

import re
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
        if mode == "mask":
            start = torch.full((n,), mask_id if mask_id is not None else 0, dtype=torch.long)
        elif noise_ids is not None:
            start = noise_ids[torch.randint(0, len(noise_ids), (n,), generator=generator)]
        else:
            start = torch.randint(0, vocab_size, (n,), generator=generator)
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


def middle_tokens(row: Tensor, n_free: int, stop_ids: set[int]) -> list[int]:
    """The committed middle: free tokens up to the first filler/EOS/pad."""
    out: list[int] = []
    for t in row[:n_free].tolist():
        if t in stop_ids:
            break
        out.append(t)
    return out
