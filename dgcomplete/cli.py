"""``dgcomplete serve | daemon | status | infill | doctor | train`` — the commands users and scripts rely on."""

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


def _tcp_address(args: argparse.Namespace) -> tuple[str, int] | None:
    if not args.tcp:
        return None
    host, _, port = args.tcp.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if host not in ("127.0.0.1", "localhost", "::1") and not args.allow_remote:
        sys.exit(f"dgcomplete: refusing to listen on {host}: pass --allow-remote to expose the daemon")
    try:
        return host, int(port)
    except ValueError:
        sys.exit(f"dgcomplete: --tcp wants HOST:PORT, not {args.tcp!r}")


def _backend_key(args: argparse.Namespace) -> dict[str, str] | None:
    if getattr(args, "backend", "local") != "openai":
        return None
    return {"backend": "openai", "url": args.url or "", "model": args.remote_model or args.model or ""}


def _daemon_args(args: argparse.Namespace) -> list[str]:
    """The flags ``serve --shared`` hands to the daemon it starts."""
    out = []
    for flag in ("model", "threads", "backend", "url", "remote_model", "local_model", "api_key_env"):
        v = getattr(args, flag, None)
        if v is not None and not (flag == "backend" and v == "local"):
            out += [f"--{flag.replace('_', '-')}", str(v)]
    return out + (["--verbose"] if args.verbose else [])


def cmd_serve(args: argparse.Namespace) -> int:
    if args.shared:  # the relay: no torch, no model here
        if args.tcp:
            sys.exit("dgcomplete: --shared relays stdio to the per-user daemon; it takes no --tcp")
        from .relay import serve_shared

        model = args.local_model if args.backend == "openai" else args.model
        return serve_shared(_daemon_args(args), model=model, backend=_backend_key(args), socket_override=args.socket,
                            idle_exit_min=args.idle_exit, start_timeout=args.start_timeout)
    _setup_logging(args.log_file, args.verbose)
    tcp = _tcp_address(args)
    remote = _remote_from_args(args)
    local = args.local_model if remote is not None else args.model
    if tcp is not None:  # `make serve`: many sessions, one model, until interrupted (a client's exit ends its own)
        from .daemon import run_daemon

        return run_daemon(local, unix=None, tcp=tcp, threads=args.threads, remote=remote)
    from .server import serve

    return serve(local, threads=args.threads, remote=remote)


def cmd_daemon(args: argparse.Namespace) -> int:
    from .relay import DaemonError, socket_path

    _setup_logging(args.log_file, args.verbose)
    tcp = _tcp_address(args)
    remote = _remote_from_args(args)
    local = args.local_model if remote is not None else args.model
    unix = None
    if not args.no_unix:
        try:
            unix = Path(args.socket) if args.socket else socket_path(local, _backend_key(args))
        except DaemonError as e:
            sys.exit(f"dgcomplete: {e}")
    if unix is None and tcp is None:
        sys.exit("dgcomplete: --no-unix needs --tcp")
    from .daemon import run_daemon

    return run_daemon(local, unix=unix, tcp=tcp, threads=args.threads, steps=args.steps, remote=remote,
                      idle_exit_min=args.idle_exit)


def cmd_status(args: argparse.Namespace) -> int:
    import socket

    from .relay import DaemonError, connect, format_status, query_status, runtime_dir, socket_path

    try:
        if args.tcp:
            host, _, port = args.tcp.rpartition(":")
            targets = [(args.tcp, socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), 10))]
        else:
            paths = [Path(args.socket)] if args.socket else [socket_path(args.model)] if args.model else \
                sorted(runtime_dir().glob("dgcomplete*.sock"))
            targets = [(str(p), connect(p)) for p in paths]
    except (OSError, ValueError, DaemonError) as e:
        print(f"dgcomplete: no daemon answers: {e}", file=sys.stderr)
        return 1
    found = [(where, s) for where, s in targets if s is not None]
    if not found:
        where = ", ".join(w for w, _ in targets) or str(socket_path())
        print(f"dgcomplete: no daemon running ({where})", file=sys.stderr)
        return 1
    out = []
    for where, s in found:
        with s:
            try:
                out.append(query_status(s))
            except (OSError, ValueError, DaemonError) as e:
                print(f"dgcomplete: {where}: {e}", file=sys.stderr)
                return 1
    print(json.dumps(out if len(out) > 1 else out[0], indent=1) if args.json else
          "\n\n".join(format_status(st) for st in out))
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
    from .engine import Engine, saves_keystrokes

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
    remote = _remote_from_args(args)
    t0 = time.perf_counter()
    loaded = _load(args.local_model if remote is not None else args.model)
    cfg = loaded.config
    print(f"model: {loaded.path} ({loaded.model.num_parameters(False) / 1e6:.1f}M params, mode {cfg.diffusion.mode}, "
          f"vocab {cfg.vocab_size}, canvas {cfg.canvas_length}) loaded in {(time.perf_counter() - t0) * 1e3:.0f} ms")
    engine = Engine(loaded, threads=args.threads)

    async def run():
        info = await engine.start()
        prefix = "def is_even(n):\n    return n % 2 == "
        engine.open("file:///doctor.py", prefix + "\n", 0, "python")
        engine.settings.update({"min_confidence": 0.0})  # what the model writes; the gate's verdict is printed
        t1 = time.perf_counter()
        comp = await engine.complete("file:///doctor.py", len(prefix), seed=0)
        ms = (time.perf_counter() - t1) * 1e3
        await engine.shutdown()
        return info, comp, ms

    info, comp, ms = asyncio.run(run())
    print(f"threads: {info.get('threads')} (measured {info.get('timings_ms')})")
    got = comp.items[0].text if comp.items else f"(none: {comp.reason})"
    print(f"sample completion in {ms:.0f} ms: 'return n % 2 == {got}'  steps={comp.stats.get('steps')}")
    if comp.items:
        conf, floor = comp.items[0].confidence or 0.0, engine.gate.threshold_for("python")
        verdict = ("no: one character saves no keystroke" if not saves_keystrokes(got)
                   else "yes" if conf >= floor else "no: below the gate")
        print(f"  gate confidence {conf:.2f} (minConfidence {floor:.2f}); shown as you type: {verdict}")
    return 0 if remote is None else asyncio.run(_doctor_remote(remote))


async def _doctor_remote(remote) -> int:
    """The remote backend as the daemon will use it: the server's models, a timed completion and a timed Fill holes
    (the server alone, no fallback); 1 when the server cannot serve."""
    from .engine import Engine, EngineError

    engine = Engine(None, remote=remote, fallback_to_local=False)
    engine.settings.update({"min_confidence": 0.0})  # what the server writes, as for the local model above
    try:
        print(f"remote: {remote.config.url} ({remote.config.mode} mode)")
        try:
            print(f"  server: {await remote.health()}")
        except Exception as e:  # RemoteError: its message is the user's
            print(f"  server: FAILED ({getattr(e, 'message', e)})")
            return 1
        doc = "def is_even(n):\n    return n % 2 == \n\n\ndef is_odd(n):\n    return ???\n"
        engine.open("file:///doctor.py", doc, 0, "python")
        at = doc.index("== ") + 3
        t0 = time.perf_counter()
        comp = await engine.complete("file:///doctor.py", at, seed=0)
        ms = (time.perf_counter() - t0) * 1e3
        got = comp.items[0].text if comp.items else f"(none: {comp.reason})"
        print(f"  completion in {ms:.0f} ms: 'return n % 2 == {got}'")
        t0 = time.perf_counter()
        res = await engine.edit("fill", "file:///doctor.py", doc.index("???"), doc.index("???") + 3, 0)
        ms = (time.perf_counter() - t0) * 1e3
        filled = res.outcome.new_text.strip() if res.outcome.ok else f"(none: {res.outcome.reason})"
        print(f"  Fill holes in {ms:.0f} ms: 'return {filled}'")
        return 0
    except EngineError as e:
        print(f"  FAILED: {e}")
        return 1
    finally:
        await engine.shutdown()


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
    s.add_argument("--shared", action="store_true",
                   help="relay stdio to this user's shared daemon (one model for every editor), starting it if needed")
    s.add_argument("--socket", help="with --shared: the daemon's Unix socket (default: per user and model)")
    s.add_argument("--idle-exit", type=float, default=10.0, metavar="MINUTES",
                   help="with --shared: a daemon it starts exits after this long without sessions (default 10)")
    s.add_argument("--start-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="with --shared: how long to wait for a daemon it starts to listen")

    dm = sub.add_parser("daemon", help="serve many editors from one model (Unix socket, optionally TCP)")
    dm.add_argument("--socket", help="Unix socket path (default: $XDG_RUNTIME_DIR/dgcomplete*.sock, mode 0600)")
    dm.add_argument("--no-unix", action="store_true", help="no Unix socket (with --tcp)")
    dm.add_argument("--tcp", metavar="HOST:PORT", help="also listen on TCP (127.0.0.1 unless told)")
    dm.add_argument("--allow-remote", action="store_true", help="allow --tcp on a non-loopback address")
    dm.add_argument("--idle-exit", type=float, metavar="MINUTES", help="exit after this long without sessions")
    dm.add_argument("--model", help="checkpoint directory (default: the embedded model)")
    dm.add_argument("--threads", type=int, help="torch threads (default: measured at start-up)")
    dm.add_argument("--steps", type=int, help="denoising steps per request (default: the model's)")
    dm.add_argument("--log-file")
    dm.add_argument("--verbose", action="store_true")
    dm.add_argument("--backend", choices=["local", "openai"], default="local")
    dm.add_argument("--url")
    dm.add_argument("--remote-model")
    dm.add_argument("--local-model")
    dm.add_argument("--api-key-env")

    st = sub.add_parser("status", help="the shared daemon's sessions, model, memory and queue")
    st.add_argument("--socket", help="the daemon's Unix socket (default: every daemon of this user)")
    st.add_argument("--model", help="the daemon serving this checkpoint")
    st.add_argument("--tcp", metavar="HOST:PORT", help="a daemon on TCP (`make serve`)")
    st.add_argument("--json", action="store_true")

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
    d.add_argument("--model", help="checkpoint directory (default: the embedded model); with --backend openai: "
                                   "the model name on the server")
    d.add_argument("--threads", type=int)
    d.add_argument("--backend", choices=["local", "openai"], default="local",
                   help="openai: also check the remote server (its models, a completion and a Fill holes)")
    d.add_argument("--url")
    d.add_argument("--remote-model")
    d.add_argument("--local-model", help="with --backend openai: the local checkpoint to check too")
    d.add_argument("--api-key-env")

    t = sub.add_parser("train", help="build the corpus / tokenizer, or train (args passed through)")
    t.add_argument("what", choices=["corpus", "tokenizer", "model"])

    args, rest = ap.parse_known_args(argv)
    if args.cmd != "train" and rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.cmd == "serve":
        return cmd_serve(args)
    if args.cmd == "daemon":
        return cmd_daemon(args)
    if args.cmd == "status":
        return cmd_status(args)
    if args.cmd == "infill":
        return cmd_infill(args)
    if args.cmd == "doctor":
        return cmd_doctor(args)
    return cmd_train(args, rest)


if __name__ == "__main__":
    sys.exit(main())
