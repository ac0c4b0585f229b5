"""Training curve and throughput of the embedded model, from its training.json (written by the export).

    python -m bench.training_curve [--model DIR] [--out bench/results/training_curve.png]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dgcomplete.models import default_model_path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default=str(default_model_path()))
    ap.add_argument("--out", default="bench/results/training_curve.png")
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info = json.loads((Path(args.model) / "training.json").read_text())
    curve, dev = info["curve"], info["dev"]
    where = "GPU" if info.get("args", {}).get("device", "cpu").startswith("cuda") else "CPU"
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.plot([c["tokens"] / 1e6 for c in curve], [c["dec"] for c in curve], label="diffusion loss (train)", alpha=0.6)
    a.plot([c["tokens"] / 1e6 for c in curve], [c["lm"] for c in curve], label="causal LM loss (train)", alpha=0.6)
    a.set_xlabel("training tokens (M)")
    if dev:  # held-out files, evaluated every few hundred steps
        a.plot([d["step"] * info["tokens"] / info["step"] / 1e6 for d in dev], [d["dec"] for d in dev], "o-",
               ms=3, label="diffusion loss (dev)")
    a.set_ylabel("nats")
    a.set_title(f"dg-code-tiny: {info['step']} steps, {info['tokens'] / 1e6:.1f}M tokens, "
                f"{info['elapsed'] / 60:.0f} min {where}")
    a.legend()
    b.plot([c["min"] for c in curve], [c["tok_s"] for c in curve])
    b.set_xlabel("minutes")
    b.set_ylabel("training tokens / s (1 H200, bf16)" if where == "GPU" else
                 "training tokens / s (2-core CPU, fp32)")
    b.set_title("throughput")
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    last = dev[-1] if dev else {}
    print(f"wrote {args.out}; final dev: {last}")


if __name__ == "__main__":
    main()
