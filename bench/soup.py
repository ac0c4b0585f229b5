"""Uniform weight averages ("model soups") of checkpoints of one shape, as a candidate model directory.

    python -m bench.soup --out runs/soup dgcomplete/models/dg-code-tiny runs/cpu8/cand runs/A/snap/step-0000133

Why: every CPU continuation of the shipped weights ended within noise of them, each a different way (new text,
a language mix, the end objective, four masking draws). Averaging fine-tunes of one start often beats each of them
(Wortsman et al. 2022), so this asks whether the continuations, useless one by one, add up. The average takes
the first checkpoint's dtype; config, generation config, gate and tokenizer come from ``--base`` (the shipped
model), so the soup is decoded and gated exactly as the shipped model is. Evaluate it with ``bench.gate_fit``
(held-out dev) and ``bench.quality`` like any candidate. The result is in ``bench/results/soup_ab.json``.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from safetensors.torch import load_file, save_file

from dgcomplete.model import weight_files

WEIGHTS = "model.safetensors"
COPIED = ("config.json", "generation_config.json", "gate.json", "tokenizer.json")


def soup(checkpoints: list[Path], out: Path, base: Path) -> Path:
    """Write the uniform average of ``checkpoints``' weights (same tensor names and shapes) to ``out``."""
    parts = [{k: v for f in weight_files(c) for k, v in load_file(str(f)).items()} for c in checkpoints]
    names = set(parts[0])
    for c, p in zip(checkpoints, parts, strict=True):
        if set(p) != names or any(p[k].shape != parts[0][k].shape for k in names):
            raise SystemExit(f"bench.soup: {c} is not the shape of {checkpoints[0]}")
    avg = {k: (sum(p[k].float() for p in parts) / len(parts)).to(parts[0][k].dtype).contiguous() for k in names}
    out.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        if (base / name).exists():
            shutil.copy(base / name, out / name)
    save_file(avg, str(out / WEIGHTS), metadata={"format": "pt"})
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoints", nargs="+", type=Path, help="checkpoint directories (one file or shards)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base", type=Path, default=Path("dgcomplete/models/dg-code-tiny"),
                    help="config, generation config, gate and tokenizer from here")
    args = ap.parse_args(argv)
    if len(args.checkpoints) < 2:
        ap.error("a soup needs at least two checkpoints")
    print(f"soup of {len(args.checkpoints)} -> {soup(args.checkpoints, args.out, args.base)}")


if __name__ == "__main__":
    main()
