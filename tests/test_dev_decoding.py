"""bench.dev_decoding's pieces that decide what its A/B tables say: the length measure and the variants."""

from __future__ import annotations

import pytest

from bench.dev_decoding import VARIANTS, _apply, length_ratios
from bench.quality import Task


class _Words:
    """A tokenizer whose tokens are whitespace-separated words (the measure only counts tokens)."""

    def encode(self, text: str) -> list[str]:
        return text.split()


def _task(truth: str, out: str) -> Task:
    t = Task("dev_python", "python/0", "python", "py", "x = 1\n\n", 6, truth, True)
    t.out = {"ours": out}
    return t


def test_length_ratios_over_written_and_all() -> None:
    tasks = [_task("a b c d", "a b"), _task("a b", "a b c d"), _task("a b c d", ""), _task("a", "a")]
    # written: 0.5, 2.0, 1.0 -> median 1.0; all: 0, 0.5, 1.0, 2.0 -> median 0.75
    assert length_ratios(_Words(), tasks) == {"shown": 1.0, "all": 0.75}
    assert length_ratios(_Words(), [_task("a b", "")]) == {"shown": None, "all": 0.0}


def test_samples_only_variant_turns_drafts_off(tiny_mask_model) -> None:
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    assert eng.settings.context_sources is None
    _apply(eng, VARIANTS["samples_only"])
    assert eng.settings.context_sources == ["diffusion"]
    _apply(eng, VARIANTS["steps8"])
    assert eng.local is not None and eng.local.sampler.max_steps == 8
    with pytest.raises(SystemExit, match="context_sources"):
        _apply(eng, {"settings": {"context_sources": ["nowhere"]}})


def test_variants_combine_and_unknown_ones_are_refused() -> None:
    from bench.dev_decoding import variant_changes

    assert variant_changes("samples_only+steps8") == {"settings": {"context_sources": ["diffusion"]}, "max_steps": 8}
    with pytest.raises(SystemExit, match="steps9"):
        variant_changes("samples_only+steps9")
