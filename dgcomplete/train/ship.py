"""Export a training run's current weights as the embedded model (an HF-layout checkpoint in the package).

    python -m dgcomplete.train.ship --run runs/base --tokenizer runs/tokenizer.json \
        --out dgcomplete/models/dg-code-tiny --steps 8

Weights are stored in fp16 to halve the package size; the loader casts them to fp32 on CPU.
The model card is written separately (MODEL_CARD.md) because it quotes benchmark results.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer as HFTok

from ..model import DiffusionGemma
from .train import export, run_config


def export_run(run: Path, tokenizer: Path, out: Path, *, steps: int, dtype: torch.dtype = torch.float16) -> Path:
    meta = json.loads((run / "state.json").read_text())
    a = meta["args"]
    vocab = HFTok.from_file(str(tokenizer)).get_vocab_size()
    cfg = run_config(vocab, a)
    model = DiffusionGemma(cfg)
    tensors = load_file(str(run / "state.safetensors"))
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    export(model, tokenizer, out, meta, dtype=dtype, length_target=a.get("length_target", "fill"), steps=steps,
           quiet=True)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default="runs/base")
    ap.add_argument("--tokenizer", default="runs/tokenizer.json")
    ap.add_argument("--out", default="dgcomplete/models/dg-code-tiny")
    ap.add_argument("--steps", type=int, default=8, help="default denoising step budget")
    args = ap.parse_args(argv)
    out = export_run(Path(args.run), Path(args.tokenizer), Path(args.out), steps=args.steps)
    size = sum(f.stat().st_size for f in out.iterdir()) / 1e6
    print(f"exported {args.run} -> {out} ({size:.1f} MB)")


if __name__ == "__main__":
    main()
