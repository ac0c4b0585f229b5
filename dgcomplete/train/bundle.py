"""Pack what a training run on a lent GPU machine needs into one folder that fits the transfer limit.

A lent machine (see the tool library's ``device``) has PyTorch, tokenizers and safetensors but reaches no
network, takes at most 64 MiB of files with the working tree, runs one command for at most 10 minutes and
returns at most 8 files of 16 MiB. So the corpus travels xz-compressed (302 MB -> about 42 MB; the trainer
reads ``*.jsonl.xz`` directly), examples are cut there by worker processes, and the model comes back as fp16
shards of at most 15 MiB.

    python -m dgcomplete.train.bundle --out gpu          # here, once (gpu/ is ignored by git)

Then, through the device tool, ``carry=["gpu"]``, one command: ``bash gpu/run.sh`` (prove it here first
with ``DEV=cpu MINUTES=0.3 OUT=/tmp/out bash gpu/run.sh``). It trains two shapes side by side on the one GPU,
each with its own example-cutting workers, so one lease yields both a quality and a latency candidate:

    A: d 384, 8 layers, ff 1536 (22M parameters, 42 MiB fp16)
    B: d 256, 6 layers, ff 768  ( 7M parameters, 14 MiB fp16)

``SHAPES=B`` trains one; ``EXTRA="--init-from dgcomplete/models/dg-code-tiny --lr 5e-4"`` continues the
shipped model (B's shape; its weights travel with the working tree). $OUT gets at most 8 files (the return
limit): the logs, ``meta.tar`` (configs, shard index, training.json) and the fp16 weight shards renamed
``A-model-*.safetensors`` / ``B-model*.safetensors``.
``python -m dgcomplete.train.bundle --unpack DIR --into runs/gpu`` puts them back into two checkpoint folders.
"""

from __future__ import annotations

import argparse
import lzma
import shutil
import subprocess
from pathlib import Path

LIMIT = 60 * 2**20  # the working tree travels too: leave it room under the 64 MiB

RUN_SH = r"""#!/bin/bash
# Written by python -m dgcomplete.train.bundle; runs on the lent GPU machine from the repository root.
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
DEV=${DEV:-cuda}
MINUTES=${MINUTES:-7.5}
: "${OUT:?OUT must name the folder whose files come back}"
W=${TMPDIR:-/tmp}/dg-train
rm -rf "$W" && mkdir -p "$W"
(nvidia-smi --query-gpu=name,memory.total --format=csv 2>/dev/null; python3 -c 'import torch; print(torch.__version__)')
train() {
    name=$1; shift
    python3 -m dgcomplete.train.train --device "$DEV" --corpus gpu/corpus --tokenizer gpu/tokenizer.json \
        --run "$W/run-$name" --mode mask --minutes "$MINUTES" --decay-frac 0.25 --warmup 200 --batch 128 \
        --prefix 384 --save-every 1000 --export "$W/$name" --export-fp16 --shard-mb 15 "$@" > "$OUT/$name.log" 2>&1
    echo "$name exit $?" >> "$OUT/$name.log"
}
# SHAPES picks which to train (default both); EXTRA is added to each trainer command, e.g.
# SHAPES=B EXTRA="--init-from dgcomplete/models/dg-code-tiny --lr 5e-4" continues the shipped model
SHAPES=${SHAPES:-A B}
EXTRA=${EXTRA:-}
for name in $SHAPES; do
    case $name in
        A) train A --workers 8 --d 384 --layers 8 --heads 6 --ff 1536 --lr 1e-3 $EXTRA & ;;
        B) train B --workers 6 --d 256 --layers 6 --heads 4 --ff 768 --lr 1.5e-3 $EXTRA & ;;
    esac
done
wait
for name in $SHAPES; do
    rm -f "$W/$name/tokenizer.json"
    for f in "$W/$name"/*.safetensors; do [ -e "$f" ] && mv "$f" "$OUT/$name-$(basename "$f")"; done
done
tar cf "$OUT/meta.tar" -C "$W" $SHAPES
ls -l "$OUT"
tail -n 3 "$OUT"/*.log
"""


def unpack(src: Path, into: Path) -> list[Path]:
    """Rebuild the checkpoint folders from what ``run.sh`` left in $OUT (weights renamed ``<name>-<file>``)."""
    import tarfile

    with tarfile.open(src / "meta.tar") as tar:
        names = sorted({m.name.split("/")[0] for m in tar.getmembers()})  # the shapes trained, e.g. A, B
        tar.extractall(into, filter="data")
    for name in names:
        for f in src.glob(f"{name}-*.safetensors"):
            shutil.copyfile(f, into / name / f.name[len(name) + 1 :])
    return [into / name for name in names]


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
    ap.add_argument("--unpack", default=None, help="a returned $OUT folder: rebuild its checkpoints (with --into)")
    ap.add_argument("--into", default="runs/gpu")
    args = ap.parse_args(argv)
    if args.unpack:
        tok = Path(args.tokenizer)
        for d in unpack(Path(args.unpack), Path(args.into)):
            shutil.copyfile(tok, d / "tokenizer.json")
            print(d)
        return
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
    (out / "run.sh").write_text(RUN_SH)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{out}: {total / 2**20:.1f} MiB")
    if total > LIMIT:
        raise SystemExit(f"{out} is {total / 2**20:.1f} MiB: over {LIMIT / 2**20:.0f} MiB, pass fewer --langs")


if __name__ == "__main__":
    main()
