"""How long a lent GPU's run takes to prepare from a fresh clone (``make gpu-prep``, step by step).

Nothing under ``data/`` or ``gpu/`` survives a session, so a session that is lent a GPU builds the corpus, its
shards and the reference wheel first. The clone must sit beside ``shared/`` (the corpus refuses to build
without the eval sets to decontaminate against), with an empty download cache: what a new machine pays.

    git clone -q . ../prepclone && python -m bench.prep_time --clone ../prepclone --out bench/results/gpu_prep.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from . import emit, machine_info

STEPS = ("setup", "corpus", "gpu-bundle", "gpu-reference")  # what make gpu-prep runs, setup first


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clone", type=Path, required=True, help="a fresh clone (no .venv, data/ or gpu/)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if any((args.clone / p).exists() for p in (".venv", "data", "gpu")):
        raise SystemExit(f"bench.prep_time: {args.clone.name} is not a fresh clone")
    steps = {}
    for step in STEPS:
        t0 = time.perf_counter()
        r = subprocess.run(["make", step], cwd=args.clone, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "MAKEFLAGS": ""})
        steps[step] = round(time.perf_counter() - t0, 1)
        print(f"{step}: {steps[step]} s (exit {r.returncode})", flush=True)
        if r.returncode:
            raise SystemExit(f"bench.prep_time: make {step} failed: {r.stderr[-2000:]}")
    shards = sorted((args.clone / "gpu" / "shards").glob("shard-*.jsonl.xz"))
    manifest = json.loads((args.clone / "dgcomplete" / "train" / "corpus_manifest.json").read_text())
    emit({
        "benchmark": "make gpu-prep from a fresh clone, step by step, empty download cache",
        "command": "python -m bench.prep_time --clone CLONE",
        "seconds": steps, "total_s": round(sum(steps.values()), 1),
        "shards": [{"name": p.name, "mib": round(p.stat().st_size / 2**20, 1)} for p in shards],
        "corpus": {"files": manifest["totals"]["files"], "bytes": manifest["totals"]["bytes"],
                   "decontaminated": manifest["decontamination"]["eval_dir_present"],
                   # the build is reproducible: the clone's rebuilt manifest is the committed one, byte for byte
                   "manifest_as_committed": subprocess.run(
                       ["git", "diff", "--quiet", "--", "dgcomplete/train/corpus_manifest.json"],
                       cwd=args.clone).returncode == 0},
        "machine": machine_info(),
    }, args.out)


if __name__ == "__main__":
    main()
