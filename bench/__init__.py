"""Benchmarks for dgcomplete: keystroke latency through LSP, parallelism, diffusion vs autoregressive,
file-size scaling, memory and infilling quality.  Entry point: ``python -m bench.run`` (``make bench``).

This module holds the small shared pieces: paths, model resolution, percentiles, machine facts and
the evaluation-data loaders.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import sysconfig
import time
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the repository root
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RESULTS = Path(__file__).resolve().parent / "results"
DATA = ROOT.parent / "shared" / "data"  # evaluation data (see ../shared/data/README.md); evaluation only

# stdlib modules re-typed for latency (they are in the training corpus: never used for quality)
STDLIB_MODULES = ("textwrap.py", "heapq.py", "shlex.py")
FIXTURE_FILES = (("inventory.py", "python"), ("eventbus.js", "javascript"), ("lru.go", "go"))


def corpus_parser(doc: str, files: int, out: str) -> argparse.ArgumentParser:
    """The arguments of a base-rate bench: ``--files`` of each language, the ``--corpus`` folder, the ``--out`` file
    (``out`` under bench/results by default)."""
    ap = argparse.ArgumentParser(description=doc.split("\n", 1)[0])
    ap.add_argument("--files", type=int, default=files)
    ap.add_argument("--corpus", default=str(ROOT / "data" / "corpus"))
    ap.add_argument("--out", default=str(RESULTS / out))
    return ap


def corpus_rows(corpus: str | Path, lang: str, files: int) -> Iterator[dict[str, Any]]:
    """The first ``files`` rows (text, path, ...) of one language of the training corpus (``make corpus``)."""
    with open(Path(corpus) / f"{lang}.jsonl") as f:
        for row in islice(f, files):
            yield json.loads(row)


def corpus_texts(corpus: str | Path, lang: str, files: int) -> Iterator[str]:
    """The texts of the first ``files`` files of one language of the training corpus: what the base-rate benches
    (neighbour_twins, redefinitions, duplicate_parameters, statement_words) run the engine's rules over."""
    for row in corpus_rows(corpus, lang, files):
        yield row["text"]


def tally(counts: Iterable[Sequence[int]]) -> list[int]:
    """The per-file [checked, the rule fired] counts of a base-rate bench, summed."""
    total = [0, 0]
    for n, fired in counts:
        total[0] += n
        total[1] += fired
    return total


def tally_by_kind(counts: Iterable[dict[str, Sequence[int]]]) -> dict[str, list[int]]:
    """Per-file {kind: [checked, fired]} counts summed kind by kind (every file names the same kinds)."""
    total: dict[str, list[int]] = {}
    for per_file in counts:
        for kind, pair in per_file.items():
            total[kind] = tally([total.get(kind, [0, 0]), pair])
    return total


# ---- model --------------------------------------------------------------------------------------------------
def emit(res: Any, out: str | None) -> None:
    """A bench script's result: printed as JSON, and written to ``--out`` when given."""
    text = json.dumps(res, indent=1)
    if out:
        Path(out).write_text(text + "\n")
    print(text)


def resolve_model(path: str | None) -> Path:
    """``--model`` or the embedded model; a clear exit when neither exists."""
    if path:
        p = Path(path)
    else:
        from dgcomplete.models import default_model_path

        p = default_model_path()
    if not (p / "config.json").exists():
        sys.exit(f"bench: no model at {display_path(p)} (pass --model PATH to a checkpoint directory)")
    return p.resolve()


def display_path(p: str | Path) -> str:
    """A path for reports: relative to the repository when inside it, else just its name (no machine paths)."""
    p = Path(p)
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return p.name


def model_info(loaded: Any) -> dict[str, Any]:
    cfg = loaded.config
    return {
        "name": loaded.name,
        "path": display_path(loaded.path),
        "params": int(loaded.model.num_parameters(False)),
        "params_non_embedding": int(loaded.model.num_parameters(True)),
        "mode": cfg.diffusion.mode,
        "vocab": cfg.vocab_size,
        "layers": cfg.num_hidden_layers,
        "hidden": cfg.hidden_size,
        "canvas_length": cfg.canvas_length,
        "max_context_tokens": cfg.diffusion.max_context_tokens,
        "max_denoising_steps": loaded.sampler_defaults.max_denoising_steps,
        "has_fill_token": loaded.tokenizer.fill_id is not None,
    }


# ---- machine ------------------------------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_info() -> dict[str, Any]:
    import torch

    return {
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        "loadavg_start": loadavg(),
    }


# ---- numbers ------------------------------------------------------------------------------------------------
def pct(xs: list[float], q: float) -> float | None:
    """Percentile by linear interpolation (q in 0..100); None for no data."""
    if not xs:
        return None
    s = sorted(xs)
    if len(s) == 1:
        return float(s[0])
    k = (len(s) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return float(s[lo] + (s[hi] - s[lo]) * (k - lo))


def summary(xs: list[float], nd: int = 1) -> dict[str, Any]:
    """n, mean, p50, p95, p99, max of a sample (None where empty)."""
    r = lambda v: None if v is None else round(v, nd)  # noqa: E731
    return {
        "n": len(xs),
        "mean": r(statistics.fmean(xs)) if xs else None,
        "p50": r(pct(xs, 50)),
        "p95": r(pct(xs, 95)),
        "p99": r(pct(xs, 99)),
        "max": r(max(xs)) if xs else None,
    }


class Timer:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    @property
    def s(self) -> float:
        return time.perf_counter() - self.t0


# ---- sources ------------------------------------------------------------------------------------------------
def stdlib_sources() -> list[tuple[str, str, str]]:
    """(name, language, text) of a few stdlib modules of the running interpreter (may be empty)."""
    base = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for name in STDLIB_MODULES:
        try:
            out.append((f"stdlib/{name}", "python", (base / name).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def fixture_sources() -> list[tuple[str, str, str]]:
    return [(f"fixtures/{n}", lang, (FIXTURES / n).read_text(encoding="utf-8")) for n, lang in FIXTURE_FILES]


# ---- evaluation data ----------------------------------------------------------------------------------------
def data_dir(override: str | None = None) -> Path | None:
    for p in ([Path(override)] if override else []) + [Path(os.environ["DGCOMPLETE_EVAL_DATA"])
                                                      if os.environ.get("DGCOMPLETE_EVAL_DATA") else None,
                                                      DATA]:
        if p is not None and (p / "human-eval-infilling").is_dir():
            return p
    return None


def write_jsonl(path: str | Path, recs: list[dict[str, Any]]) -> None:
    """A benchmark's per-request dump: one JSON object per line (the folder made if need be)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))


def read_jsonl_gz(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def spread(items: list[Any], n: int | None) -> list[Any]:
    """``n`` items spread evenly over the list (deterministic), or all of them."""
    if n is None or n >= len(items):
        return list(items)
    if n <= 0:
        return []
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]
