"""The show/hide gate: how likely a scored candidate's first line is exactly what the user will type.

A logistic model over the scorer's features (:meth:`dgcomplete.local.LocalInfiller.score`) and the
candidate's source, fitted on our own held-out dev set (``python -m bench.gate_fit``), never on the public
evaluation sets. Its output is a probability, so the ``minConfidence`` setting reads as "show a suggestion
only when at least this share of such suggestions were right on the dev set" (the precision/coverage curve
behind the default is ``bench/results/context_gate.png``). A checkpoint may ship its own ``gate.json`` next
to ``config.json``; without one (e.g. Google's checkpoint) the prior below is used, which ranks by the
scorer's mean log-probability. A feature added later is fitted with the rest kept: ``elsewhere``,
on the lines read while typing the dev splits (``bench.gate_fit --extend DUMP ...``), as the one-position cases rarely
see a line copied from a neighbour.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

from .types import Candidate

log = logging.getLogger(__name__)

SOURCES = ("diffusion", "successor", "shape", "prefix")
OTHER = "other"  # the key of gate.json's thresholds for documents of a language without a grammar
# a source the gate was not fitted on, read as the fitted one it mirrors: ``predecessor`` pairs the same lines as
# ``successor``, from the other side (ranking Invoked lists so: first item right 197 -> 204 of 903 on the dev
# splits, none lost; bench/results/predecessor_ab.json)
# ``analogy`` is a nearby line like ``prefix``'s, with the typed words put in
ALIASES = {"predecessor": "successor", "analogy": "prefix"}
NUMERIC = ("mean_lp", "min_lp", "end_lp", "causal_lp", "tokens", "strength", "agree", "cut", "typed", "margin", "dups")
INTERACT = ("mean_lp", "min_lp", "end_lp", "margin", "typed", "strength")
# how often the completed line already stands in the document: fitted on the lines read while typing (a one-position
# case rarely sees a neighbour copied), after the rest (bench.gate_fit --extend DUMP ...)
ELSEWHERE = ("elsewhere_once", "elsewhere_more")


def typing_only(name: str) -> bool:
    """A weight that ``bench.gate_fit`` fits only on typed lines, never on the one-position cases."""
    return name.split("*")[-1] in ELSEWHERE


def feature_vector(c: Candidate) -> dict[str, float]:
    """Named inputs of the gate for one candidate (numeric features, one-hot source, per-source slopes)."""
    f = c.features
    base = ALIASES.get(c.source, c.source)
    x = {k: float(f.get(k, 0.0)) for k in NUMERIC}
    x["tokens"] = math.log1p(x["tokens"])
    x["typed"] = math.log1p(x["typed"])
    x["margin"] = max(-5.0, min(5.0, x["margin"]))
    for s in SOURCES:
        x[f"src_{s}"] = 1.0 if base == s else 0.0
    x["here"] = float(f.get("here", 0.0))
    # how often the line the candidate completes already stands in the document: once is most often a neighbour
    # copied where another line goes, twice or more a pattern the file repeats
    n = f.get("elsewhere", 0.0)
    x["elsewhere_once"], x["elsewhere_more"] = float(n == 1), float(n >= 2)
    # what a score means depends on where the candidate came from: one slope per source
    for s in SOURCES:
        if x[f"src_{s}"]:
            for k in (*INTERACT, *ELSEWHERE):
                x[f"{s}*{k}"] = x[k]
    return x


@dataclass
class Gate:
    weights: dict[str, float] = field(default_factory=lambda: {"mean_lp": 2.0, "end_lp": 0.3})
    bias: float = 0.0
    fitted_on: str = "prior (no gate.json)"
    threshold: float = 0.35  # the default minConfidence: chosen on the dev split for the target precision
    # languages whose own dev split put the target precision elsewhere: a language the network never saw (Ruby and
    # PHP for the shipped model) gives confident wrong lines, so the same rule asks for more there; OTHER stands
    # for the languages without a grammar
    thresholds: dict[str, float] = field(default_factory=dict)

    def threshold_for(self, lang: str | None) -> float:
        """The default minConfidence for a document of ``lang`` (None: a language without a grammar)."""
        return self.thresholds.get(lang or OTHER, self.threshold)

    @classmethod
    def load(cls, model_dir: str | Path | None) -> Gate:
        p = Path(model_dir) / "gate.json" if model_dir else None
        if p is None or not p.is_file():
            return cls()
        try:
            raw = json.loads(p.read_text())
            w = {str(k): float(v) for k, v in raw["weights"].items()}
            if not all(math.isfinite(v) for v in [*w.values(), float(raw["bias"])]):
                raise ValueError("non-finite weight")
            t = float(raw.get("threshold") if raw.get("threshold") is not None else cls.threshold)
            by_lang = {str(k): float(v) for k, v in (raw.get("thresholds") or {}).items()}
            if not all(0.0 <= v <= 1.0 for v in [t, *by_lang.values()]):
                raise ValueError(f"a threshold outside 0..1: {t}, {by_lang}")
            return cls(w, float(raw["bias"]), str(raw.get("fitted_on", p.name)), t, by_lang)
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("ignoring %s (%s); using the prior gate", p, e)
            return cls()

    def confidence(self, c: Candidate) -> float:
        if c.source == "warm":  # the rest of a suggestion being typed through keeps the confidence it had
            return float(c.features.get("prior", 0.0))
        return self.probability(feature_vector(c))

    def probability(self, x: dict[str, float]) -> float:
        """The logistic model on a feature vector (what bench.gate_fit fits and evaluates)."""
        z = self.bias + sum(w * x.get(k, 0.0) for k, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
