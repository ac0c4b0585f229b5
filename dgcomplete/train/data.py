"""Training examples shaped like the product's requests.

An example is cut from a corpus file at a span the editor would ask for (whole line, rest of line, block body,
argument list, random span), then tokenized the way the engine tokenizes a request: prefix, middle and suffix
separately, so a prefix that ends mid-indentation looks in training exactly as it does at the cursor.

    encoder input : [<bos>] prefix tokens (last P)                      -> causal LM loss on every token
    canvas        : middle + <fill> ... up to N | suffix head (K, clean) -> diffusion loss on free slots
"""

from __future__ import annotations

import itertools
import json
import lzma
import os
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from ..model.tokenizer import Tokenizer

SPAN_KINDS = ("line", "rest_of_line", "block", "args", "random")
SHORT_WEIGHTS = {"line": 0.45, "rest_of_line": 0.3, "args": 0.12, "random": 0.13}
OPENER = re.compile(r"[:{(\[]\s*$")


@dataclass
class Batch:
    prefix: torch.Tensor  # [B, P] encoder input (left-padded with <pad>)
    prefix_loss_mask: torch.Tensor  # [B, P] positions whose next token is a target
    canvas: torch.Tensor  # [B, N + K] clean canvas: middle, fills, suffix head
    free: int  # N: the first N canvas slots are free (noised and scored)
    fill_mask: torch.Tensor  # [B, N] True where the clean free slot is <fill>
    kinds: list[str]

    def to(self, device: torch.device) -> Batch:
        if self.prefix.device == device:
            return self
        return Batch(self.prefix.to(device, non_blocking=True), self.prefix_loss_mask.to(device, non_blocking=True),
                     self.canvas.to(device, non_blocking=True), self.free,
                     self.fill_mask.to(device, non_blocking=True), self.kinds)


# One training step's rows are split into fixed groups of canvas sizes (free slots, share of rows): 16- and
# 32-slot short spans and 64-slot block bodies, as the product asks. Every step has the same shapes, so a compiled
# step is compiled once (no recompiles when the span mix changes) and examples still vary in length.
GROUPS: tuple[tuple[int, int], ...] = ((16, 3), (32, 3), (64, 2))


def group_rows(rows: int, groups: tuple[tuple[int, int], ...] = GROUPS) -> list[int]:
    total = sum(s for _, s in groups)
    sizes = [max(1, rows * s // total) for _, s in groups[:-1]]
    return sizes + [max(1, rows - sum(sizes))]


@dataclass
class StepBatch:
    """Token ids only (the trainer noises and masks on its device): a prefix per row and, per canvas-size
    group, the clean canvases of that group's rows (rows in prefix order: group 0 first)."""

    prefix: torch.Tensor  # [B, P] left-padded with <pad>
    canvases: list[torch.Tensor]  # [B_g, n_g + K] middle, <fill>s, suffix head
    frees: tuple[int, ...]  # n_g

    def to(self, device: torch.device) -> StepBatch:
        return StepBatch(self.prefix.to(device, non_blocking=True),
                         [c.to(device, non_blocking=True) for c in self.canvases], self.frees)

    def pin_memory(self) -> StepBatch:
        return StepBatch(self.prefix.pin_memory(), [c.pin_memory() for c in self.canvases], self.frees)

    @property
    def tokens(self) -> int:
        """Prefix + canvas positions, each example once (what tokens/s counts)."""
        return self.noised_tokens(1)

    def noised_tokens(self, draws: int) -> int:
        """Prefix + canvas positions as the step computes them: each canvas noised ``draws`` times (train --draws)."""
        return self.prefix.numel() + draws * sum(c.numel() for c in self.canvases)

    def real_tokens(self, pad_id: int) -> int:
        """The same without the left padding of short prefixes."""
        return int((self.prefix != pad_id).sum()) + sum(c.numel() for c in self.canvases)

    def split(self, k: int) -> list[StepBatch]:
        """k smaller batches (each group split k ways), e.g. to retry a step that ran out of memory."""
        if k <= 1:
            return [self]
        bounds = list(itertools.accumulate([0] + [c.shape[0] for c in self.canvases]))
        out = []
        for j in range(k):
            pre, can = [], []
            for g, c in enumerate(self.canvases):
                n = c.shape[0]
                lo, hi = n * j // k, n * (j + 1) // k
                pre.append(self.prefix[bounds[g] + lo : bounds[g] + hi])
                can.append(c[lo:hi])
            out.append(StepBatch(torch.cat(pre), can, self.frees))
        return out


# Sampling weight per language (per file, on top of size): the product's first users and our quality
# benchmarks are Python-heavy, the rest keeps the model useful elsewhere.
LANG_WEIGHT = {"python": 2.5, "javascript": 1.5, "typescript": 1.5}


def load_corpus(corpus_dir: str | Path, langs: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """(text, language) for every corpus file of at least 200 characters."""
    out: list[tuple[str, str]] = []
    files = sorted(Path(corpus_dir).glob("*.jsonl")) + sorted(Path(corpus_dir).glob("*.jsonl.xz"))
    for f in files:
        lang = f.name.split(".")[0]
        if langs and lang not in langs:
            continue
        opener = lzma.open if f.suffix == ".xz" else open
        with opener(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                t = json.loads(line)["text"]
                if len(t) >= 200:
                    out.append((t, lang))
    return out


def read_jsonl(path: str | Path, default_lang: str = "") -> list[tuple[str, str]]:
    """(text, language) of every record of at least 200 characters in one .jsonl or .jsonl.xz file."""
    path = Path(path)
    opener = lzma.open if path.suffix == ".xz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if len(rec["text"]) >= 200:
                out.append((rec["text"], rec.get("lang") or default_lang))
    return out


SHARD_GLOB = "shard-*.jsonl*"


def is_shard_dir(corpus_dir: str | Path) -> bool:
    return any(Path(corpus_dir).glob(SHARD_GLOB))


class ShardFolder:
    """A corpus that grows while training: ``shard-NNNN.jsonl.xz`` files arriving in one folder.

    Each shard has its own dev split (every 100th record, as :func:`split_dev`), so training never sees a dev
    file whatever order shards come in. ``poll`` returns the train records of shards not seen before; a
    writer must create a shard atomically (write ``.name.tmp``, then rename: dot-files are ignored). With
    ``part=(i, n)`` only every n-th train record (offset i) is kept: n example-cutting workers then hold
    disjoint slices of the corpus instead of n copies.
    """

    def __init__(self, folder: str | Path, part: tuple[int, int] = (0, 1), dev_every: int = 100,
                 log: bool = False) -> None:
        self.folder, self.part, self.dev_every, self.log = Path(folder), part, dev_every, log
        self.seen: list[str] = []

    def pending(self) -> list[Path]:
        names = sorted(p for p in self.folder.glob(SHARD_GLOB) if p.name not in self.seen
                       and not p.name.endswith(".tmp"))
        return names

    def poll(self) -> list[tuple[str, str]]:
        new: list[tuple[str, str]] = []
        for path in self.pending():
            recs = read_jsonl(path)
            i, n = self.part
            train = [r for j, r in enumerate(recs) if j % self.dev_every]
            mine = train[i::n]
            new += mine
            self.seen.append(path.name)
            if self.log:
                print(f"shard {path.name}: {len(mine)} train files taken (part {i}/{n}, pid {os.getpid()})",
                      file=sys.stderr, flush=True)
        return new

    def dev(self, max_shards: int = 1) -> list[tuple[str, str]]:
        """Dev records of the first shard(s): a fixed dev set for the whole run."""
        out: list[tuple[str, str]] = []
        for path in sorted(self.folder.glob(SHARD_GLOB))[:max_shards]:
            out += [r for j, r in enumerate(read_jsonl(path)) if not j % self.dev_every]
        return out


def split_dev(texts: list, dev_every: int = 100) -> tuple[list, list]:
    """Deterministic split by position (the corpus order is fixed by its builder)."""
    train = [t for i, t in enumerate(texts) if i % dev_every]
    dev = [t for i, t in enumerate(texts) if not i % dev_every]
    return train, dev


class ExampleSampler:
    def __init__(self, texts: list[str] | list[tuple[str, str]], tok: Tokenizer, *, prefix_tokens: int = 192,
                 suffix_tokens: int = 16, seed: int = 0, kinds: dict[str, float] | None = None,
                 lang_weight: dict[str, float] | None = None) -> None:
        self.kinds = kinds or SHORT_WEIGHTS
        self.lang_weight = {**LANG_WEIGHT, **(lang_weight or {})}  # per-file weight by language (train --lang-weight)
        pairs = [(t, "") if isinstance(t, str) else t for t in texts]
        self.texts, self.tok = [t for t, _ in pairs], tok
        self.P, self.K = prefix_tokens, suffix_tokens
        self.rng = random.Random(seed)
        # sample files proportionally to size (capped, so big files don't dominate) and language weight
        weights = [min(len(t), 20_000) * self.lang_weight.get(lang, 1.0) for t, lang in pairs]
        # cumulative once: ``choices(weights=...)`` re-sums all ~35k weights on every example (a quarter of
        # a worker's time); with ``cum_weights`` the draw is a bisection and picks the same file
        self.cum_weights = list(itertools.accumulate(weights))

    def add(self, texts: list[tuple[str, str]]) -> None:
        """More files (a shard that arrived while training); the same size x language weighting."""
        total = self.cum_weights[-1] if self.cum_weights else 0.0
        for t, lang in texts:
            total += min(len(t), 20_000) * self.lang_weight.get(lang, 1.0)
            self.texts.append(t)
            self.cum_weights.append(total)

    # ---- span choice (character offsets into a file) ------------------------------------------------------
    def _lines(self, text: str) -> list[tuple[int, int]]:
        out, pos = [], 0
        for line in text.split("\n"):
            out.append((pos, pos + len(line)))
            pos += len(line) + 1
        return out

    def choose_span(self, text: str, kind: str) -> tuple[int, int] | None:
        rng = self.rng
        lines = self._lines(text)
        content = [(a, b) for a, b in lines if text[a:b].strip()]
        if len(content) < 3:
            return None
        if kind in ("line", "rest_of_line"):
            a, b = rng.choice(content[1:])
            indent = len(text[a:b]) - len(text[a:b].lstrip())
            if kind == "line":
                start = a if rng.random() < 0.5 else a + indent
                return start, b
            body = text[a + indent : b]
            cuts = [m.end() for m in re.finditer(r"[\w)\]\"']+|[^\w\s]", body)][:-1]
            if not cuts:
                return None
            return a + indent + rng.choice(cuts), b
        if kind == "block":
            openers = [i for i, (a, b) in enumerate(lines[:-1]) if OPENER.search(text[a:b]) and text[a:b].strip()]
            if not openers:
                return None
            i = rng.choice(openers)
            a0, b0 = lines[i]
            base = len(text[a0:b0]) - len(text[a0:b0].lstrip())
            j, end = i + 1, None
            n_lines = rng.randint(1, 8)
            taken = 0
            while j < len(lines) and taken < n_lines:
                a, b = lines[j]
                s = text[a:b]
                if s.strip() and len(s) - len(s.lstrip()) <= base:
                    break
                end = b
                taken += 1 if s.strip() else 0
                j += 1
            if end is None:
                return None
            a1 = lines[i + 1][0]
            first = text[a1 : lines[i + 1][1]]
            start = a1 if rng.random() < 0.5 else a1 + len(first) - len(first.lstrip())
            return (start, end) if end > start else None
        if kind == "args":
            opens = [m.end() for m in re.finditer(r"\w\(", text)]
            if not opens:
                return None
            start = rng.choice(opens)
            depth, j = 1, start
            while j < len(text) and j < start + 300:
                c = text[j]
                if c in "([{":
                    depth += 1
                elif c in ")]}":
                    depth -= 1
                    if depth == 0:
                        break
                elif c == "\n" and depth == 1:
                    return None
                j += 1
            if depth != 0 or j == start:
                return None
            # sometimes the user already typed the first arguments
            commas = [m.end() for m in re.finditer(r", ?", text[start:j])]
            if commas and rng.random() < 0.4:
                start += rng.choice(commas)
            return start, j
        # random span inside one or two lines
        a = rng.randrange(lines[1][0], len(text) - 1) if len(lines) > 1 else 0
        b = min(len(text), a + rng.randint(1, 60))
        return a, b

    # ---- tokenization -------------------------------------------------------------------------------------
    def make(self, kind: str, n_free: int) -> tuple[list[int], list[int], list[int]] | None:
        text = self.rng.choices(self.texts, cum_weights=self.cum_weights, k=1)[0]
        span = self.choose_span(text, kind)
        if span is None:
            return None
        a, b = span
        prefix_text = text[max(0, a - 6 * self.P) : a]
        middle_text = text[a:b]
        suffix_text = text[b : b + 8 * self.K]
        if "\t" in middle_text and self.rng.random() < 0.5:
            return None
        p, m, s = self.tok.encode_batch([prefix_text, middle_text, suffix_text])
        if len(m) > n_free:
            if kind != "block":
                return None
            # cut a block at a line boundary that fits
            lines = middle_text.split("\n")
            while lines and len(self.tok.encode("\n".join(lines))) > n_free:
                lines.pop()
            if not lines or not "\n".join(lines).strip():
                return None
            m = self.tok.encode("\n".join(lines))
            s = self.tok.encode(text[a + len("\n".join(lines)) :][: 8 * self.K])
        if a < 6 * self.P and self.tok.bos_id is not None:
            p = [self.tok.bos_id] + p
        return p[-self.P :], m, s[: self.K]

    def batch(self, batch_size: int, n_free: int, long: bool = False) -> Batch:
        tok, P, K = self.tok, self.P, self.K
        eos = min(tok.eos_ids)
        prefixes, canvases, kinds = [], [], []
        while len(prefixes) < batch_size:
            if long:
                kind = "block"
            else:
                kind = self.rng.choices(list(self.kinds), weights=list(self.kinds.values()))[0]
            ex = self.make(kind, n_free)
            if ex is None:
                continue
            p, m, s = ex
            s = s + [eos] + [tok.pad_id] * K
            prefixes.append([tok.pad_id] * (P - len(p)) + p)
            canvases.append(m + [tok.fill_id] * (n_free - len(m)) + s[:K])
            kinds.append(kind)
        prefix = torch.tensor(prefixes)
        canvas = torch.tensor(canvases)
        loss_mask = prefix != tok.pad_id
        loss_mask[:, -1] = False  # the last prefix token's successor is the middle: not an LM target here
        return Batch(prefix, loss_mask, canvas, n_free, canvas[:, :n_free] == tok.fill_id, kinds)

    def step_batch(self, rows: int, groups: tuple[tuple[int, int], ...] = GROUPS) -> StepBatch:
        """One step's token ids: :func:`group_rows` rows per canvas size; the 64-slot group are block bodies."""
        prefixes, canvases = [], []
        for (n_free, _), n in zip(groups, group_rows(rows, groups), strict=True):
            b = self.batch(n, n_free, long=n_free >= 64)
            prefixes.append(b.prefix)
            canvases.append(b.canvas)
        return StepBatch(torch.cat(prefixes), canvases, tuple(n for n, _ in groups))
