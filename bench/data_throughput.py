"""How fast one process cuts training examples: sizes the example workers of a GPU run (train --workers).

    python -m bench.data_throughput [--corpus data/corpus] [--prefixes 256,384] [--seconds 20] [--out FILE]

Times ``train.next_batch`` (span choice, tokenization, padding; batch 128) on the corpus's training split,
one process, the way each DataLoader worker runs it.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from . import emit, machine_info


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--tokenizer", default="dgcomplete/models/dg-code-tiny/tokenizer.json")
    ap.add_argument("--prefixes", default="256,384")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    from dgcomplete.model import Tokenizer
    from dgcomplete.train.data import ExampleSampler, load_corpus, split_dev
    from dgcomplete.train.train import next_batch, small_config

    t0 = time.perf_counter()
    train_texts, _ = split_dev(load_corpus(args.corpus))
    load_s = time.perf_counter() - t0
    tok = Tokenizer.from_file(Path(args.tokenizer), small_config(8192, mode="mask"))
    rows = []
    for prefix in (int(p) for p in args.prefixes.split(",")):
        sampler, rng = ExampleSampler(train_texts, tok, prefix_tokens=prefix, seed=0), random.Random(0)
        n = ntok = 0
        t = time.perf_counter()
        while time.perf_counter() - t < args.seconds:
            b = next_batch(sampler, rng, 128)
            n += b.prefix.shape[0]
            ntok += b.prefix.numel() + b.canvas.numel()
        dt = time.perf_counter() - t
        rows.append({"prefix_tokens": prefix, "examples_per_s": round(n / dt), "tokens_per_s": round(ntok / dt)})
        print(f"prefix {prefix}: {n / dt:.0f} examples/s, {ntok / dt:.0f} tokens/s (one process)", flush=True)
    emit({"bench": "data_throughput", "machine": machine_info(), "files": len(train_texts),
          "corpus_load_s": round(load_s, 1), "seconds_each": args.seconds, "rows": rows}, args.out)


if __name__ == "__main__":
    main()
