"""Speed note for the model core: one decoder step for canvas 32/64/256 over 512 cached tokens, 1 vs 2 threads.

    python -m bench.decoder_step [--model DIR] [--out bench/results/decoder_step.json]

Uses the embedded model by default (any checkpoint directory works). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch

from dgcomplete.model import load_model
from dgcomplete.models import default_model_path


def time_step(model, canvas_len: int, cached: int, threads: int, reps: int) -> dict[str, float]:
    torch.set_num_threads(threads)
    v = model.cfg.vocab_size
    g = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        cache = model.new_cache(cached + 8)
        model.encode(torch.randint(6, v, (1, cached), generator=g), cache)
        canvas = torch.randint(6, v, (1, canvas_len), generator=g)
        sc = torch.softmax(torch.randn(1, canvas_len, v, generator=g), -1)
        for _ in range(3):
            model.decode(canvas, cache, sc_probs=sc)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            model.decode(canvas, cache, sc_probs=sc)
            times.append((time.perf_counter() - t0) * 1e3)
    return {"median_ms": round(statistics.median(times), 3), "min_ms": round(min(times), 3)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default=str(default_model_path()))
    ap.add_argument("--cached", type=int, default=512)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", default="bench/results/decoder_step.json")
    args = ap.parse_args(argv)
    loaded = load_model(args.model)
    rows = []
    for c in (32, 64, 256):
        for t in (1, 2):
            r = time_step(loaded.model, c, args.cached, t, args.reps)
            rows.append({"canvas": c, "threads": t, **r})
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    out = {"model": loaded.name, "params_non_embedding": loaded.model.num_parameters(), "cached_tokens": args.cached,
           "vocab": loaded.config.vocab_size, "machine": {"cpu": cpu, "cores": torch.get_num_threads(),
                                                         "torch": torch.__version__}, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"| canvas | threads | median ms | min ms |  ({loaded.name}, {args.cached} cached tokens, {cpu})")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['canvas']} | {r['threads']} | {r['median_ms']} | {r['min_ms']} |")


if __name__ == "__main__":
    main()
