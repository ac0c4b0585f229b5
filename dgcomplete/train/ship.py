"""Export a training run's current weights as the embedded model (an HF-layout checkpoint in the package).

    python -m dgcomplete.train.ship --run runs/base --tokenizer runs/tokenizer.json \
        --out dgcomplete/models/dg-code-tiny --steps 8

Weights are stored in fp16 to halve the package size; the loader casts them to fp32 on CPU.
The model card is written separately (MODEL_CARD.md) because it quotes benchmark results.

    python -m dgcomplete.train.ship --candidate runs/gpu/A --out runs/gpu/A-cand   (or: make candidate CKPT=runs/gpu/A)

makes an exported checkpoint (what a lent GPU returned, unpacked by ``dgcomplete.train.bundle --unpack``) a ship
candidate: its weights, config and tokenizer with the *shipped* model's decoding settings (generation_config.json:
3 denoising steps and the sampler's thresholds; a trainer export says 4 steps, which the keystroke budget does not
allow), and no gate: the gate is fitted for these weights on the held-out dev split (``bench.gate_fit --write``).
"""

from __future__ import annotations

import argparse
import json
import shutil
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


SHIPPED = Path(__file__).resolve().parents[1] / "models" / "dg-code-tiny"
CANDIDATE_FILES = ("config.json", "tokenizer.json", "training.json", "model.safetensors.index.json")
RUN_OWN = ("self_conditioning", "frontier_stop")  # generation keys that follow how the run trained


def candidate(ckpt: Path, out: Path, shipped: Path = SHIPPED) -> Path:
    """``ckpt``'s weights, config and tokenizer in ``out`` with ``shipped``'s generation config (see the docstring);
    what depends on how the run trained stays the run's: self-conditioning, and the frontier-stop rule of a run
    trained with ``--length-target end``."""
    from ..model import CheckpointError, load_model, weight_files

    if out.resolve() == shipped.resolve():
        raise SystemExit("ship --candidate: --out must not be the shipped model (fit and measure the candidate first)")
    try:
        weights = weight_files(ckpt)
    except CheckpointError as e:
        raise SystemExit(f"ship --candidate: {e}") from e
    out.mkdir(parents=True, exist_ok=True)
    stale = [*out.glob("*.safetensors"), *(out / n for n in (*CANDIDATE_FILES, "generation_config.json", "gate.json"))]
    for f in stale:  # an earlier candidate's checkpoint files only: no stale shard or gate stays behind
        f.unlink(missing_ok=True)
    for f in [*(ckpt / n for n in CANDIDATE_FILES), *weights]:
        if f.exists():
            shutil.copyfile(f, out / f.name)
    gen = json.loads((shipped / "generation_config.json").read_text())
    own_path = ckpt / "generation_config.json"
    own = json.loads(own_path.read_text()) if own_path.exists() else {}
    for key in RUN_OWN:  # as the run's own checkpoint decodes them (absent: the loader's default)
        gen.pop(key, None)
        if key in own:
            gen[key] = own[key]
    (out / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
    load_model(out)  # the loader's own checks, now rather than in the benchmark that follows
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidate", default=None, help="an exported checkpoint to prepare as a ship candidate in --out")
    ap.add_argument("--run", default="runs/base")
    ap.add_argument("--tokenizer", default="runs/tokenizer.json")
    ap.add_argument("--out", default="dgcomplete/models/dg-code-tiny")
    ap.add_argument("--steps", type=int, default=8, help="default denoising step budget")
    args = ap.parse_args(argv)
    if args.candidate:
        if args.out == ap.get_default("out"):
            ap.error("--candidate needs its own --out (the shipped model changes only once the candidate wins)")
        print(f"candidate {args.candidate} -> {candidate(Path(args.candidate), Path(args.out))}")
        return
    out = export_run(Path(args.run), Path(args.tokenizer), Path(args.out), steps=args.steps)
    size = sum(f.stat().st_size for f in out.iterdir()) / 1e6
    print(f"exported {args.run} -> {out} ({size:.1f} MB)")


if __name__ == "__main__":
    main()
