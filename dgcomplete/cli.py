"""``dgcomplete serve | infill | doctor | train`` — the commands users and scripts rely on."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path


def _setup_logging(log_file: str | None, verbose: bool) -> None:
    handlers: list[logging.Handler] = []
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    else:  # stdout carries the protocol: logs go to stderr
        handlers.append(logging.StreamHandler(sys.stderr))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, handlers=handlers,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)


def _remote_from_args(args: argparse.Namespace):
    if getattr(args, "backend", "local") != "openai":
        return None
    from .backends.remote import RemoteBackend, RemoteConfig

    # with the remote backend, --model names the served model (as in the vLLM/SGLang docs)
    name = args.remote_model or args.model
    if not args.url or not name:
        sys.exit("dgcomplete: --backend openai needs --url and --model NAME")
    try:
        return RemoteBackend(RemoteConfig(url=args.url, model=name, api_key_env=args.api_key_env))
    except ValueError as e:
        sys.exit(f"dgcomplete: {e}")


def cmd_serve(args: argparse.Namespace) -> int:
    _setup_logging(args.log_file, args.verbose)
    if args.tcp:
        host = args.tcp.rpartition(":")[0] or "127.0.0.1"
        if host not in ("127.0.0.1", "localhost", "::1") and not args.allow_remote:
            sys.exit(f"dgcomplete: refusing to listen on {host}: pass --allow-remote to expose the daemon")
    from .server import serve

    remote = _remote_from_args(args)
    local = args.local_model if remote is not None else args.model
    serve(local, tcp=args.tcp, threads=args.threads, remote=remote)
    return 0


def _load(model: str | None):
    from .model import CheckpointError, load_model
    from .models import default_model_path

    path = model or str(default_model_path())
    try:
        return load_model(path)
    except CheckpointError as e:
        sys.exit(f"dgcomplete: cannot load the model at {path}: {e}")


def cmd_infill(args: argparse.Namespace) -> int:
    from .engine import Engine

    logging.basicConfig(level=logging.WARNING)
    try:
        text = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"dgcomplete: cannot read {args.file}: {e}")
    loaded = _load(args.model)
    engine = Engine(loaded, threads=args.threads, max_steps=args.steps)

    async def run():
        uri = Path(args.file).resolve().as_uri()
        s = engine.open(uri, text, 0, None)
        if args.line < 0 or args.line >= s.doc.line_count:
            sys.exit(f"dgcomplete: line {args.line} is outside {args.file} ({s.doc.line_count} lines, 0-based)")
        offset = s.doc.offset_at(args.line, args.col)
        t0 = time.perf_counter()
        comp = await engine.complete(uri, offset, n=args.n, seed=args.seed, max_lines=args.max_lines)
        ms = (time.perf_counter() - t0) * 1e3
        await engine.shutdown()
        return comp, ms

    comp, ms = asyncio.run(run())
    if args.json:
        print(json.dumps({"middle": [c.text for c in comp.items], "scores": [c.score for c in comp.items],
                          "reason": comp.reason, "ms": round(ms, 1), "stats": comp.stats}, indent=1))
    elif comp.items:
        print(comp.items[0].text)
    else:
        print(f"(no completion: {comp.reason})", file=sys.stderr)
        return 1
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    import torch

    from . import __version__
    from .engine import Engine

    print(f"dgcomplete {__version__}  python {platform.python_version()}  torch {torch.__version__}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        print("  ".join(f"{pkg} {version(pkg)}" for pkg in ("pygls", "lsprotocol", "tree-sitter", "tokenizers")))
    except PackageNotFoundError as e:
        print(f"missing dependency: {e}")
        return 1
    from .syntax import SUPPORTED, get_parser

    ok = []
    for lang in SUPPORTED:
        try:
            get_parser(lang)
            ok.append(lang)
        except Exception as e:  # a broken grammar wheel
            print(f"grammar {lang}: FAILED ({e})")
    print(f"grammars: {', '.join(ok)}")
    print(f"cpu: {os.cpu_count()} cores, {platform.processor() or platform.machine()}; cuda: {torch.cuda.is_available()}")
    t0 = time.perf_counter()
    loaded = _load(args.model)
    cfg = loaded.config
    print(f"model: {loaded.path} ({loaded.model.num_parameters(False) / 1e6:.1f}M params, mode {cfg.diffusion.mode}, "
          f"vocab {cfg.vocab_size}, canvas {cfg.canvas_length}) loaded in {(time.perf_counter() - t0) * 1e3:.0f} ms")
    engine = Engine(loaded, threads=args.threads)

    async def run():
        info = await engine.start()
        prefix = "def is_even(n):\n    return n % 2 == "
        engine.open("file:///doctor.py", prefix + "\n", 0, "python")
        t1 = time.perf_counter()
        comp = await engine.complete("file:///doctor.py", len(prefix), seed=0)
        ms = (time.perf_counter() - t1) * 1e3
        await engine.shutdown()
        return info, comp, ms

    info, comp, ms = asyncio.run(run())
    print(f"threads: {info.get('threads')} (measured {info.get('timings_ms')})")
    got = comp.items[0].text if comp.items else f"(none: {comp.reason})"
    print(f"sample completion in {ms:.0f} ms: 'return n % 2 == {got}'  steps={comp.stats.get('steps')}")
    return 0


def cmd_train(args: argparse.Namespace, rest: list[str]) -> int:
    if args.what == "corpus":
        from .train import corpus

        return corpus.main(rest) or 0
    if args.what == "tokenizer":
        from .train import tokenizer

        return tokenizer.main(rest) or 0
    from .train import train

    train.main(rest)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="dgcomplete", description="Diffusion code completion over LSP")
    sub = ap.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("serve", help="run the language server (stdio by default)")
    s.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (127.0.0.1 unless told)")
    s.add_argument("--allow-remote", action="store_true", help="allow --tcp on a non-loopback address")
    s.add_argument("--model", help="checkpoint directory (default: the embedded model); with --backend openai: "
                                   "the model name on the server")
    s.add_argument("--threads", type=int, help="torch threads (default: measured at start-up)")
    s.add_argument("--log-file")
    s.add_argument("--verbose", action="store_true")
    s.add_argument("--backend", choices=["local", "openai"], default="local")
    s.add_argument("--url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    s.add_argument("--remote-model", help="model name on the remote server (alias of --model with --backend openai)")
    s.add_argument("--local-model", help="with --backend openai: local checkpoint used as fallback")
    s.add_argument("--api-key-env", help="environment variable holding the API key")

    i = sub.add_parser("infill", help="fill the span at a position of a file and print it")
    i.add_argument("file")
    i.add_argument("--line", type=int, required=True, help="0-based line")
    i.add_argument("--col", type=int, required=True, help="0-based column (UTF-16, like LSP)")
    i.add_argument("--model")
    i.add_argument("--json", action="store_true", help="print the middle and request stats as JSON")
    i.add_argument("--n", type=int, default=1)
    i.add_argument("--seed", type=int, default=0)
    i.add_argument("--steps", type=int)
    i.add_argument("--threads", type=int, default=1)
    i.add_argument("--max-lines", type=int)

    d = sub.add_parser("doctor", help="check versions, grammars, model, threads and a timed completion")
    d.add_argument("--model")
    d.add_argument("--threads", type=int)

    t = sub.add_parser("train", help="build the corpus / tokenizer, or train (args passed through)")
    t.add_argument("what", choices=["corpus", "tokenizer", "model"])

    args, rest = ap.parse_known_args(argv)
    if args.cmd != "train" and rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.cmd == "serve":
        return cmd_serve(args)
    if args.cmd == "infill":
        return cmd_infill(args)
    if args.cmd == "doctor":
        return cmd_doctor(args)
    return cmd_train(args, rest)


if __name__ == "__main__":
    sys.exit(main())
