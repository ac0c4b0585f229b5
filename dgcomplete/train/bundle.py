"""Pack what a training run on a lent GPU machine needs into one folder that fits the transfer limit.

A lent machine (see the tool library's ``device``) has PyTorch, tokenizers and safetensors but reaches no
network, takes at most 64 MiB of files with the working tree, runs one command for at most 10 minutes and
returns at most 8 files of 16 MiB. So the corpus travels xz-compressed (302 MB -> about 42 MB; the trainer
reads ``*.jsonl.xz`` directly), examples are cut there by worker processes, and the model comes back as fp16
shards of at most 15 MiB.

    python -m dgcomplete.train.bundle --out gpu          # here, once (gpu/ is ignored by git)

Then, through the device tool, ``carry=["gpu"]``, one command (prove it here first with ``--device cpu``
and a minute's budget):

    python3 -m dgcomplete.train.train --device cuda --workers 14 --corpus gpu/corpus \\
        --tokenizer gpu/tokenizer.json --run /tmp/run --mode mask --minutes 8 --decay-frac 0.25 \\
        --d 384 --layers 8 --heads 6 --ff 1536 --batch 128 --prefix 256 --lr 1e-3 \\
        --export $OUT/model --export-fp16 --shard-mb 15

and ``python -m dgcomplete.train.ship``'s model card step here on the returned folder.
"""

from __future__ import annotations

import argparse
import lzma
import shutil
import subprocess
from pathlib import Path

LIMIT = 60 * 2**20  # the working tree travels too: leave it room under the 64 MiB


def compress(src: Path, dst: Path) -> None:
    """xz with all cores when the xz program is there (5x faster than Python's single-threaded lzma)."""
    if shutil.which("xz"):
        with dst.open("wb") as out:
            subprocess.run(["xz", "-6", "-T0", "-c", str(src)], stdout=out, check=True)
    else:
        with src.open("rb") as f, lzma.open(dst, "wb", preset=6) as out:
            shutil.copyfileobj(f, out, 1 << 20)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--tokenizer", default="runs/tokenizer.json")
    ap.add_argument("--out", default="gpu")
    ap.add_argument("--langs", default="", help="comma-separated subset (default: every language)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    (out / "corpus").mkdir(parents=True, exist_ok=True)
    langs = {x for x in args.langs.split(",") if x}
    for f in sorted(Path(args.corpus).glob("*.jsonl")):
        if langs and f.stem not in langs:
            continue
        dst = out / "corpus" / (f.name + ".xz")
        if not dst.exists() or dst.stat().st_mtime < f.stat().st_mtime:
            compress(f, dst)
        print(f"{f.name}: {f.stat().st_size / 2**20:.1f} MiB -> {dst.stat().st_size / 2**20:.1f} MiB", flush=True)
    shutil.copyfile(args.tokenizer, out / "tokenizer.json")
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{out}: {total / 2**20:.1f} MiB")
    if total > LIMIT:
        raise SystemExit(f"{out} is {total / 2**20:.1f} MiB: over {LIMIT / 2**20:.0f} MiB, pass fewer --langs")


if __name__ == "__main__":
    main()
