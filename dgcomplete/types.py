"""Plain data passed between the layers (server → engine → syntax/canvas → sampler → model).

Nothing here knows LSP types or tensors, so every layer (and the remote backend) can share it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum


class SpanKind(str, Enum):
    """What the free span of a request is allowed to cover."""

    REST_OF_LINE = "rest_of_line"  # cursor mid-line: finish this line only
    LINE = "line"  # blank line / end of line: one whole line
    STATEMENT = "statement"  # the rest of a statement, possibly over a few lines
    BLOCK = "block"  # body of a block just opened (`def f():⏎`, `{⏎`)
    ARGS = "args"  # remaining arguments up to the matching bracket
    RANGE = "range"  # an explicit range chosen by the caller (rewrite commands)
    NONE = "none"  # nothing worth completing here (see SpanPlan.reason)


@dataclass
class SpanPlan:
    """Where a span may start and end; decided by the syntax layer, honoured by the engine."""

    kind: SpanKind
    max_lines: int = 1  # lines the middle may span; 1 means it must not contain a newline
    max_tokens: int = 32  # free canvas slots
    indent: str = ""  # indentation expected for the middle's lines after the first
    reason: str = ""  # why this plan (or why NONE), for logs and request stats

    @property
    def single_line(self) -> bool:
        return self.max_lines <= 1


@dataclass
class InfillRequest:
    """One fill-in-the-middle job: text before and after the span, and the span's plan."""

    prefix: str
    suffix: str
    plan: SpanPlan
    language: str | None = None  # tree-sitter language name ("python", "javascript", ...) or None
    n: int = 1  # number of distinct candidates wanted
    seed: int | None = None
    doc_key: str | None = None  # per-document state key (the URI) for cache reuse and cancel-previous
    version: int | None = None  # document version the request was computed for
    max_steps: int | None = None  # override of the sampler's step budget
    # retrieved lines the model scores beside its own samples; features hold "strength"
    drafts: list[Candidate] = field(default_factory=list)
    sample: bool = True  # denoise samples of the model's own (off: only score the drafts)
    causal: bool = False  # also the causal head's greedy continuation of the prefix (an Invoked request's extra)
    invoked: bool = False  # asked for explicitly (several items, shown without the gate): decoded left to right
    # a rewrite command's job on a remote backend: "rewrite" or "repair" the span's current text ``original``
    # (sent in chat mode) instead of filling an empty span ("fill")
    task: str = "fill"
    original: str = ""


@dataclass
class Candidate:
    text: str  # the middle, as it would be inserted at the cursor
    score: float = 0.0  # lower is better (mean entropy of the committed free tokens)
    source: str = "diffusion"  # diffusion | causal | successor | shape | predecessor | prefix | match | warm (the rest of a shown suggestion)
    features: dict[str, float] = field(default_factory=dict)  # the scorer's view (see local.score)
    confidence: float | None = None  # the gate's estimate that the first line is exactly right
    replaces: int = 0  # characters right of the cursor it writes over (closers the editor put there that it writes)


@dataclass
class InfillResult:
    candidates: list[Candidate]
    stats: dict[str, float | int | str] = field(default_factory=dict)
    reason: str = ""  # set when there are no candidates: why (cancelled, stale, nothing to complete, error)
    # the engine's checks already ran on these candidates (LocalInfiller.infill's ``vet``): why the others were
    # dropped; None when they did not run (a remote backend), so post-processing runs them
    drops: dict[str, int] | None = None
    # what those checks dropped, as written: the line may be unsound and the word being typed in it still right
    dropped: list[Candidate] = field(default_factory=list)


class Cancelled(Exception):
    """Raised inside the engine or a backend when a request's CancelToken fires."""


class CancelToken:
    """A flag checked between denoising steps (and between streamed chunks by remote backends).

    Thread-safe: the event loop sets it, the model worker thread reads it.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled(self.reason)
