"""Prepare a training run for a lent GPU machine: the corpus as xz shards that fit one transfer each, and the
one command, ``gpu/run.sh``, whose subcommands are the device calls.

    python -m dgcomplete.train.bundle --corpus data/corpus --tokenizer data/tokenizer.json --out gpu

A lent machine (the tool library's ``device``) has PyTorch, tokenizers and safetensors but reaches no network,
receives at most 64 MiB per call (the working tree included, about 17 MiB), runs one command for at most 10
minutes, keeps its files and a process started with ``setsid`` between consecutive calls (it is given back
about 30 s after a call unless the next one comes), and returns at most 8 files of 16 MiB from ``$OUT``. So:

* the corpus is shuffled (every shard mixes every language) and cut into ``gpu/shards/shard-NNNN.jsonl.xz`` of
  at most ``--shard-mib`` (default: what one call can carry beside the working tree, at most 55 MiB);
* ``gpu/run.sh start`` (call 1, carrying shard 1) starts the trainer detached; ``gpu/run.sh feed`` (calls 2..N,
  one shard each) moves the carried shard into the trainer's inbox, which the example-cutting workers poll
  (``--watch``, :class:`dgcomplete.train.data.ShardFolder`); ``gpu/run.sh finish`` (last call) waits for the
  end and returns the newest checkpoint. The trainer writes fp16 snapshots every ``EXPORT_EVERY`` minutes, so
  ``finish`` (or ``collect``) returns weights even if the run was cut short or crashed;
* ``gpu/README`` lists the exact calls (command, carry, timeout) for the shards this bundle wrote.

The run trains ONE shape, the shipped one: d 256 x 6 layers, ff 768, 4 heads (7.3M parameters with the
8,192-token embedding). It is the largest that keeps the keystroke within p50 <= 100 / p95 <= 200 ms on the
2-core machines (bench/results/shape_sweep.json: the next candidates, 8.1-9.0M parameters, cost 1.18-1.28x the
shipped shape per request, and the shipped model already measures p50 93.6 ms through LSP on the slower host), so
what the run returns can ship as it is. 1024-token prefixes, Muon + AdamW, bf16 autocast, torch.compile, noising on
the GPU, 14 example-cutting workers, 2 x 128 rows per step (~270k tokens), the shipped model's length
objective (``LENGTH_TARGET=fill``; ``end`` lost its A/B, bench/results/length_end_ab.json). Every setting is an
environment variable of run.sh (SHAPE, PREFIX, BATCH, ACCUM, MINUTES, WORKERS, LENGTH_TARGET, DRAWS, EXTRA, ...).
``run.sh probe``, an optional last call, times the issue's ~15-25M-parameter shape (``PROBE_SHAPE``, d 384 x 8,
22.0M) on the same data for ``PROBE_MINUTES`` and returns its metrics only: the throughput figure for a shape
that would not fit the CPU budget, without spending the run on it.

Rehearse on CPU (what tests/test_train_gpu.py does at tiny size): ``DEV=cpu COMPILE= WORKERS=2 MINUTES=0.5
SHAPE="--d 32 --layers 2 --heads 2 --ff 64" PREFIX=64 BATCH=8 ACCUM=1 OUT=/tmp/out bash gpu/run.sh local``.
Back here: ``python -m dgcomplete.train.bundle --unpack DIR --into runs/gpu --tokenizer gpu/tokenizer.json``
rebuilds the checkpoint folder from the returned files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import math
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

MIB = 2**20
CALL_LIMIT = 64 * MIB  # what one device call carries, working tree included
MAX_SHARD = 55 * MIB
MARGIN = 3 * MIB  # room for run.sh, the tokenizer beside shard 1, and untracked files that appear later

RUN_SH = r"""#!/bin/bash
# Written by python -m dgcomplete.train.bundle (read gpu/README for the device calls). Run from the repository
# root. One subcommand per device call:
#   start    the carried shard(s) into the inbox, the trainer started detached (setsid); returns once it runs
#   feed     the shard(s) carried with this call into the inbox; returns once the trainer took them (<= WAIT s)
#   finish   waits for the end of training (<= WAIT s); returns the newest checkpoint, logs and metrics
#   collect  returns the newest checkpoint, logs and metrics now
#   status   the log's tail and the last metrics line
#   local    start + finish in one command (a rehearsal: DEV=cpu COMPILE= ...)
#   probe    after the run: PROBE_SHAPE trained PROBE_MINUTES on the same inbox, its metrics and log returned
# END_IN=M (feed, finish, status): the running trainer ends within M minutes from now, its decay rescheduled; the
# budget only shrinks, so passing what the lease has left (less the export and return) on every call is safe
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
CMD=${1:-local}
DEV=${DEV:-cuda}
PY=${PY:-python3}
W=${DG_WORK:-/tmp/dg-train}
SRC=${SHARDS:-gpu/shards}
MINUTES=${MINUTES:-10}
WORKERS=${WORKERS:-14}
# the shipped shape: the largest within the 2-core keystroke budget (bench/results/shape_sweep.json)
SHAPE=${SHAPE:-"--d 256 --layers 6 --heads 4 --ff 768"}
# probe: the issue's ~15-25M throughput shape (22.0M), timed after the run without being shipped
PROBE_SHAPE=${PROBE_SHAPE:-"--d 384 --layers 8 --heads 6 --ff 1536"}
PROBE_MINUTES=${PROBE_MINUTES:-1.5}
PREFIX=${PREFIX:-1024}
BATCH=${BATCH:-128}
ACCUM=${ACCUM:-2}
LR=${LR:-2e-3}
MUON_LR=${MUON_LR:-0.02}
# fill: every <fill> slot a light target (the shipped model's objective); end: the stop scored at the true end
# (frontier-stop decoding). As a CPU fine-tune, end made samples longer but no more often right and the gate
# showed fewer right at equal coverage (bench/results/length_end_ab.json), so fill is the default
LENGTH_TARGET=${LENGTH_TARGET:-fill}
# masking draws per example over one prefix pass (bench/results/draws_ab.json: 4 won at equal wall-clock on CPU)
DRAWS=${DRAWS:-4}
EXPORT_EVERY=${EXPORT_EVERY:-1.5}
COMPILE=${COMPILE-"--compile"}
EXTRA=${EXTRA:-}
INBOX=$W/inbox

train() {  # into ${R:-$W} (the probe trains into its own folder)
    local R=${R:-$W}
    $PY -m dgcomplete.train.train --device "$DEV" --corpus "$INBOX" --watch --tokenizer "$W/tokenizer.json" \
        --run "$R/run" --mode mask --minutes "$MINUTES" --decay-frac 0.3 --warmup 100 \
        --batch "$BATCH" --accum "$ACCUM" --prefix "$PREFIX" $SHAPE \
        --optimizer muon --lr "$LR" --muon-lr "$MUON_LR" --t-min 0.1 --length-target "$LENGTH_TARGET" --draws "$DRAWS" --self-cond 0 \
        --workers "$WORKERS" $COMPILE --snapshots "$R/snap" --export-every "$EXPORT_EVERY" --export-fp16 \
        --shard-mb 15 --metrics "$R/metrics.jsonl" --save-every 1000 --eval-every 200 --log-every 20 \
        --deadline-file "$R/deadline" $EXTRA
}

end_in_s() {  # END_IN (minutes) in whole seconds; nothing when it is unset or not a number >= 0
    awk -v m="${END_IN:-}" 'BEGIN { if (m != "" && m + 0 == m && m >= 0) printf "%.0f", m * 60 }'
}

set_deadline() {  # END_IN minutes from now, as a Unix time the trainer reads (--deadline-file)
    local s
    s=$(end_in_s)
    [ -n "$s" ] || { echo "END_IN=$END_IN is not a number of minutes"; return 1; }
    echo $(($(date +%s) + s)) > "$W/.deadline.tmp" && mv "$W/.deadline.tmp" "$W/deadline" \
        && echo "deadline: training ends within $END_IN min"
}

finish_wait() {  # WAIT, else END_IN plus time for the final evaluation and export, at most 540 s (a call's limit is 600)
    local s
    s=$(end_in_s)
    if [ -n "${WAIT:-}" ]; then echo "$WAIT"
    elif [ -n "$s" ] && [ $((s + 90)) -lt 540 ]; then echo $((s + 90))
    else echo 540; fi
}

take_shards() {  # the carried shards into the inbox, each atomically (the trainer ignores dot-files)
    mkdir -p "$INBOX"
    for f in "$SRC"/shard-*.jsonl.xz; do
        [ -e "$f" ] || continue
        b=$(basename "$f")
        [ -e "$INBOX/$b" ] && continue
        cp "$f" "$INBOX/.$b.tmp" && mv "$INBOX/.$b.tmp" "$INBOX/$b" && echo "inbox: $b ($(du -k "$f" | cut -f1) KiB)"
    done
}

# alive and not done: a finished trainer can linger as a zombie where nothing reaps it, and kill -0 still succeeds
running() { [ -f "$W/pid" ] && [ ! -f "$W/done" ] && kill -0 "$(cat "$W/pid")" 2>/dev/null; }

taken() {  # every shard in the inbox was taken by at least one worker (or by the trainer itself)
    for f in "$INBOX"/shard-*.jsonl.xz; do
        [ -e "$f" ] || continue
        grep -q "shard $(basename "$f"):" "$W/train.log" 2>/dev/null || return 1
    done
}

wait_for() {  # $1: started | taken | done; $2: at most this many seconds
    local end=$((SECONDS + $2))
    while [ $SECONDS -lt $end ]; do
        case $1 in
            started) grep -qE "^(corpus:|shard )" "$W/train.log" 2>/dev/null && taken && return 0 ;;
            taken) taken && return 0 ;;
            done) [ -f "$W/done" ] && return 0 ;;
        esac
        [ "$1" != done ] && [ -f "$W/done" ] && return 1
        sleep 2
    done
    return 1
}

status() {
    echo "--- $(date -u +%H:%M:%S) running=$(running && echo yes || echo no) done=$(cat "$W/done" 2>/dev/null)"
    grep -vE "^(step|shard) " "$W/train.log" 2>/dev/null | tail -n 8
    grep -E "^step " "$W/train.log" 2>/dev/null | tail -n 3
    tail -n 1 "$W/metrics.jsonl" 2>/dev/null
}

collect() {  # logs and metrics into $OUT; with "weights", the newest snapshot as A-*.safetensors + meta.tar
    tail -c 4000000 "$W/train.log" > "$OUT/train.log" 2>/dev/null
    [ -f "$W/metrics.jsonl" ] && cp "$W/metrics.jsonl" "$OUT/metrics.jsonl"
    if [ "${1:-}" = weights ]; then
        for try in 1 2 3 4 5; do  # the trainer may replace the snapshot while we copy it: copy, then check
            [ -f "$W/snap/latest" ] || { echo "no snapshot yet"; break; }
            name=$(cat "$W/snap/latest")
            rm -rf "$W/stage" && mkdir -p "$W/stage/A"
            if cp -r "$W/snap/$name/." "$W/stage/A/" 2>/dev/null && [ "$(cat "$W/snap/latest")" = "$name" ]; then
                rm -f "$W/stage/A/tokenizer.json"
                cp "$W/env.txt" "$W/stage/A/env.txt" 2>/dev/null
                for f in "$W/stage/A"/*.safetensors; do mv "$f" "$OUT/A-$(basename "$f")"; done
                tar cf "$OUT/meta.tar" -C "$W/stage" A
                echo "returned snapshot $name"
                break
            fi
            sleep 2
        done
    fi
    ls -l "$OUT"
}

if [ "$CMD" = _train ]; then  # the detached trainer (started by start)
    echo $$ > "$W/pid"
    train >> "$W/train.log" 2>&1
    echo $? > "$W/done"
    exit 0
fi
: "${OUT:?OUT must name the folder whose files come back}"
case $CMD in  # END_IN reaches a trainer already running (start begins a fresh work folder)
    feed|finish|status) [ -z "${END_IN:-}" ] || set_deadline ;;
esac
case $CMD in
    start|local)
        if running; then
            echo "already running (pid $(cat "$W/pid"))"
        else
            rm -rf "$W" && mkdir -p "$W"
            cp gpu/tokenizer.json "$W/tokenizer.json" && cp "$0" "$W/run.sh"
            take_shards
            { nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
              $PY -c 'import sys, torch; print("torch", torch.__version__, "python", sys.version.split()[0], "cuda", torch.cuda.is_available())'
              echo "cpus $(nproc)"; } > "$W/env.txt" 2>&1
            cat "$W/env.txt" | tee "$W/train.log"
            setsid bash "$W/run.sh" _train < /dev/null > /dev/null 2>&1 &
        fi
        wait_for started "${WAIT:-60}"
        if [ "$CMD" = local ]; then
            wait_for done "${WAIT_DONE:-3600}"
            status; collect weights
        else
            status; collect
        fi ;;
    feed)
        take_shards
        wait_for taken "${WAIT:-45}"
        status; collect ;;
    finish)
        take_shards
        wait_for done "$(finish_wait)"
        status; collect weights ;;
    collect) status; collect weights ;;
    status) status ;;
    probe)
        if running; then echo "the run is still training: probe after finish"; exit 1; fi
        [ -n "$(ls "$INBOX" 2>/dev/null)" ] || { echo "no shards in $INBOX: nothing to probe on"; exit 1; }
        rm -rf "$W/probe" && mkdir -p "$W/probe"
        SHAPE=$PROBE_SHAPE MINUTES=$PROBE_MINUTES EXPORT_EVERY=0 R=$W/probe train > "$W/probe/train.log" 2>&1
        echo "probe exit $?"
        tail -c 2000000 "$W/probe/train.log" > "$OUT/probe-train.log"
        cp "$W/probe/metrics.jsonl" "$OUT/probe-metrics.jsonl" 2>/dev/null
        grep -E "^step " "$W/probe/train.log" | tail -n 3; tail -n 1 "$W/probe/metrics.jsonl" 2>/dev/null ;;
    *) echo "usage: bash gpu/run.sh start|feed|finish|collect|status|local|probe"; exit 2 ;;
esac
"""


def tree_bytes(root: Path) -> int:
    """What the device tool sends with every call: tracked and untracked-not-ignored files."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return 0
    return sum((root / n).stat().st_size for n in out.decode().split("\0") if n and (root / n).is_file())


def compress(src: Path, dst: Path) -> None:
    """xz with all cores when the xz program is there (5x faster than Python's single-threaded lzma)."""
    if shutil.which("xz"):
        with dst.open("wb") as out:
            subprocess.run(["xz", "-6", "-T0", "-c", str(src)], stdout=out, check=True)
    else:
        with src.open("rb") as f, lzma.open(dst, "wb", preset=6) as out:
            shutil.copyfileobj(f, out, 1 << 20)


def corpus_lines(corpus: Path, langs: set[str]) -> list[bytes]:
    """Every record line of ``corpus/*.jsonl[.xz]`` (each with its "lang")."""
    files = sorted(corpus.glob("*.jsonl")) + sorted(corpus.glob("*.jsonl.xz"))
    lines: list[bytes] = []
    for f in files:
        lang = f.name.split(".")[0]
        if langs and lang not in langs:
            continue
        opener = lzma.open if f.suffix == ".xz" else open
        with opener(f, "rb") as fh:
            for line in fh:
                if not line.strip():
                    continue
                if b'"lang"' not in line:
                    rec = json.loads(line)
                    rec["lang"] = lang
                    line = json.dumps(rec, ensure_ascii=False).encode() + b"\n"
                lines.append(line if line.endswith(b"\n") else line + b"\n")
    return lines


def write_shards(lines: list[bytes], out: Path, limit: int, seed: int = 0, log=print) -> list[dict]:
    """Shuffle the records and cut them into xz shards of at most ``limit`` bytes each.

    The fewest shards the estimated xz ratio allows (5 % margin), of even raw size: a greedy cut left a last shard
    of a few files that cost a device call of its own. A shard that still compresses over ``limit`` is halved."""
    lines = list(lines)
    random.Random(seed).shuffle(lines)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("shard-*"):
        old.unlink()
    sample = b"".join(lines[: max(1, len(lines) // 20)])[: 16 * MIB]
    ratio = max(1.5, len(sample) / max(1, len(lzma.compress(sample, preset=6))))
    total = sum(map(len, lines))
    shards = max(1, math.ceil(total / (limit * ratio * 0.95)))
    target = math.ceil(total / shards)
    pending = []
    chunk, size = [], 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size >= target and len(pending) < shards - 1:  # over by at most one record; the last one is the rest
            pending.append(chunk)
            chunk, size = [], 0
    if chunk:
        pending.append(chunk)
    with tempfile.TemporaryDirectory() as td:
        raw, packed = Path(td) / "raw.jsonl", Path(td) / "packed.xz"
        results: list[tuple[list[bytes], bytes]] = []
        while pending:
            chunk = pending.pop(0)
            raw.write_bytes(b"".join(chunk))
            compress(raw, packed)
            if packed.stat().st_size > limit and len(chunk) > 1:  # the estimate missed: halve and retry
                half = len(chunk) // 2
                pending[:0] = [chunk[:half], chunk[half:]]
                continue
            if packed.stat().st_size > limit:
                raise SystemExit(f"one record compresses to {packed.stat().st_size} bytes: over the shard limit")
            results.append((chunk, packed.read_bytes()))
        index = []
        for i, (chunk, data) in enumerate(results, 1):
            name = f"shard-{i:04d}.jsonl.xz"
            (out / name).write_bytes(data)
            index.append({"name": name, "records": len(chunk), "raw_bytes": sum(map(len, chunk)),
                          "xz_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
            log(f"{name}: {len(chunk)} files, {index[-1]['raw_bytes'] / MIB:.1f} MiB -> {len(data) / MIB:.1f} MiB")
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    return index


def readme(index: list[dict], tree: int, out_name: str = "gpu", wheels: list[str] | None = None) -> str:
    n = len(index)
    calls = [f"1. `run(command=\"WAIT=60 bash {out_name}/run.sh start\", carry=[\"{out_name}/run.sh\", "
             f"\"{out_name}/tokenizer.json\", \"{out_name}/shards/{index[0]['name']}\"], timeout_s=240)`: code, "
             "tokenizer and shard 1; the trainer starts detached (setsid) and the call returns once it has read "
             "shard 1 (the log's head and env.txt come back)."]
    for i, s in enumerate(index[1:], 2):
        calls.append(f"{i}. `run(command=\"END_IN=M bash {out_name}/run.sh feed\", carry=[\"{out_name}/run.sh\", "
                     f"\"{out_name}/shards/{s['name']}\"], timeout_s=180)`: shard {i} into the inbox; returns once a "
                     "worker has taken it (at most 45 s), with the log's tail (compile, first tokens/s).")
    calls.append(f"{n + 1}. `run(command=\"END_IN=M bash {out_name}/run.sh finish\", carry=[\"{out_name}/run.sh\"], "
                 "timeout_s=600)`: waits for the end of training (MINUTES=10 from the start, or END_IN) and returns "
                 "`train.log`, `metrics.jsonl` (tokens/s, step time, GPU memory per 20 steps; `tok_s` counts "
                 "each example's prefix and canvas once, `noised_tok_s` every masking draw), `meta.tar` (config, "
                 "training.json, shard index) and the fp16 weights `A-model-*.safetensors` (at most 8 files in all).")
    calls.append(f"{n + 2}. optional, right after call {n + 1} and only if the device status leaves 4 minutes: "
                 f"`run(command=\"bash {out_name}/run.sh probe\", carry=[\"{out_name}/run.sh\"], timeout_s=300)`: "
                 "PROBE_SHAPE (d 384 x 8, 22.0M parameters, the issue's ~15-25M throughput shape) trained "
                 "PROBE_MINUTES=1.5 on the shards already there; returns `probe-metrics.jsonl` and `probe-train.log` "
                 "(tokens/s, step time, GPU memory), no weights.")
    if wheels:  # make gpu-reference: transformers for issue #19's reference, which the device image lacks
        calls.append(f"{n + 3}. optional, issue #19, if about 4 device minutes remain after the training calls: "
                     f"`run(command=\"python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir "
                     f"--upgrade --target /tmp/site {out_name}/whl/*.whl && export PYTHONPATH=/tmp/site && "
                     "PYTHONUNBUFFERED=1 python3 -m bench.real_shape --device cuda --out $OUT/real_shape.json\", "
                     f"carry=[\"{out_name}/whl\"], timeout_s=420)`: our network at the 26B-A4B shape (random bf16 "
                     f"weights built on the GPU) timed against transformers' DiffusionGemma ({', '.join(wheels)}); "
                     "copy the returned `real_shape.json` to `bench/results/`.")
    total = sum(s["xz_bytes"] for s in index)
    return f"""# The GPU run (written by python -m dgcomplete.train.bundle)

{n} shard(s), {total / MIB:.1f} MiB of xz in all (largest {max(s['xz_bytes'] for s in index) / MIB:.1f} MiB);
the working tree that travels with every call was {tree / MIB:.1f} MiB when this was written.

Device calls, one right after the other (the machine is given back about 30 s after a call returns, and the
detached trainer with it): each call carries ONE shard, so every call stays under the 64 MiB transfer limit.
END_IN=M keeps the run inside the lease: M = (the last reply's `lease.budget_left_s` - 150) / 60 minutes, which
leaves 2.5 minutes for the final evaluation, export and return. The trainer ends by then, with its decay
rescheduled, if that is sooner than MINUTES; a later END_IN never lengthens the run, so pass it on every call
after the first (leave it out only while the lease has more than the run needs). `finish` then waits END_IN
plus 90 s, at most 540 s (WAIT overrides).

{chr(10).join(calls)}

Then, here: `python -m dgcomplete.train.bundle --unpack <files_at> --into runs/gpu --tokenizer {out_name}/tokenizer.json`
and copy `metrics.jsonl` / `train.log` into `bench/results/`. `make candidate CKPT=runs/gpu/A` gives the checkpoint
the shipped decoding settings (3 steps; the trainer's export says 4), fits its gate on the held-out dev split and
measures HumanEval single-line (about 10 minutes); ship it when it beats the shipped model there.

If a call is cut short or the run crashes, `bash {out_name}/run.sh collect` (carry `{out_name}/run.sh`) returns the
newest snapshot (written every EXPORT_EVERY=1.5 minutes). If a call finds a fresh machine (the log says
`running=no` and no `{out_name}/shards` are left there), start again from call 1. Time plan: start ~1-2 min,
training 10 min (MINUTES), transfers and the final export ~1 min: about 13 of the 15 device minutes. A slower
start shortens the training through END_IN instead of cutting off the last call, whose files come back only
when it returns.
Settings are environment variables of run.sh (SHAPE, PREFIX, BATCH, ACCUM, MINUTES, WORKERS, LR, MUON_LR,
LENGTH_TARGET, DRAWS, COMPILE, EXPORT_EVERY, EXTRA, PROBE_SHAPE, PROBE_MINUTES). The default SHAPE is the shipped
one, so `EXTRA="--init-from dgcomplete/models/dg-code-tiny"` would continue the shipped weights instead of
starting over.
"""


def unpack(src: Path, into: Path) -> list[Path]:
    """Rebuild the checkpoint folders from what ``run.sh`` left in $OUT (weights renamed ``<name>-<file>``)."""
    import tarfile

    with tarfile.open(src / "meta.tar") as tar:
        names = sorted({m.name.split("/")[0] for m in tar.getmembers()})  # the shapes trained, e.g. A
        tar.extractall(into, filter="data")
    for name in names:
        for f in src.glob(f"{name}-*.safetensors"):
            shutil.copyfile(f, into / name / f.name[len(name) + 1 :])
    return [into / name for name in names]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--tokenizer", default="data/tokenizer.json")
    ap.add_argument("--out", default="gpu")
    ap.add_argument("--langs", default="", help="comma-separated subset (default: every language)")
    ap.add_argument("--shard-mib", type=float, default=0.0,
                    help="largest shard (default: 64 MiB less the working tree and a margin, at most 55)")
    ap.add_argument("--seed", type=int, default=0, help="record shuffle")
    ap.add_argument("--unpack", default=None, help="a returned $OUT folder: rebuild its checkpoints (with --into)")
    ap.add_argument("--into", default="runs/gpu")
    ap.add_argument("--scripts-only", action="store_true",
                    help="rewrite run.sh and README for the shards already in OUT (no corpus read, no packing)")
    args = ap.parse_args(argv)
    if args.unpack:
        tok = Path(args.tokenizer)
        for d in unpack(Path(args.unpack), Path(args.into)):
            shutil.copyfile(tok, d / "tokenizer.json")
            print(d)
        return
    out = Path(args.out)
    tree = tree_bytes(Path(__file__).resolve().parents[2])
    if args.scripts_only:
        try:
            index = json.loads((out / "shards" / "index.json").read_text())
        except (OSError, ValueError) as e:
            raise SystemExit(f"{out}: no shard index to write the scripts for ({e}); pack the corpus first") from e
        write_scripts(out, index, tree)
        return
    out.mkdir(parents=True, exist_ok=True)
    limit = int(args.shard_mib * MIB) if args.shard_mib else min(MAX_SHARD, CALL_LIMIT - tree - MARGIN)
    langs = {x for x in args.langs.split(",") if x}
    lines = corpus_lines(Path(args.corpus), langs)
    if not lines:
        raise SystemExit(f"{args.corpus}: no *.jsonl records")
    print(f"{len(lines)} records, {sum(map(len, lines)) / MIB:.1f} MiB; shards of at most {limit / MIB:.1f} MiB "
          f"(working tree {tree / MIB:.1f} MiB)", flush=True)
    index = write_shards(lines, out / "shards", limit)
    shutil.copyfile(args.tokenizer, out / "tokenizer.json")
    write_scripts(out, index, tree)


def write_scripts(out: Path, index: list[dict], tree: int) -> None:
    """run.sh and the README of the device calls, and the check that the first call fits one transfer."""
    (out / "run.sh").write_text(RUN_SH)
    (out / "run.sh").chmod(0o755)
    wheels = sorted(w.name for w in (out / "whl").glob("*.whl"))
    (out / "README").write_text(readme(index, tree, out.name, wheels))
    first = tree + sum((out / p).stat().st_size for p in ("run.sh", "tokenizer.json")) + index[0]["xz_bytes"]
    print(f"{out}/README: {len(index) + 1} device calls; the first carries {first / MIB:.1f} MiB with the tree")
    if first > CALL_LIMIT:
        raise SystemExit(f"the first call would carry {first / MIB:.1f} MiB: over 64 MiB (pass --shard-mib)")


if __name__ == "__main__":
    main()
