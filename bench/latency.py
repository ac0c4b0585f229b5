"""Keystroke latency through LSP: a real ``dgcomplete serve`` over stdio, driven like an editor.

Typing sessions (:mod:`bench.typing_sessions`) are replayed in real time with incremental ``didChange``
edits, and inline completions are requested the way editors do:

* ``nvim``: Automatic trigger after a 150 ms debounce; earlier requests are never cancelled.
* ``vscode``: Automatic trigger on every keystroke; the previous request gets ``$/cancelRequest``.
* ``sequential``: one request per keystroke, awaited before the next keystroke (file-size and thread
  comparisons, and the burst that brings the daemon to 1,000 requests for the memory figure).

A request is *undisturbed* when no keystroke and no other request happened while it was in flight: only
those measure the latency a user sees (the others are answered early as stale/superseded, or cancelled).
Server-side timings come from the inline item's command arguments (the request's stats) or, for empty
answers, from ``dgcomplete.stats``; protocol time = client-measured time - ``engine_ms``.

    python -m bench.latency --model PATH [--seconds 60] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from dgcomplete.syntax.document import position_of

from . import Timer, fixture_sources, stdlib_sources, summary
from .typing_sessions import Pace, Session, build_sessions, make_session

DEBOUNCE_S = 0.15
SINGLE_LINE_PLANS = frozenset({"rest_of_line", "line", "args"})
_ids = itertools.count(1)


def capabilities() -> lsp.ClientCapabilities:
    """What VS Code / Neovim 0.12 declare (inline completion, UTF-16 positions)."""
    return lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            inline_completion=lsp.InlineCompletionClientCapabilities(dynamic_registration=False),
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
        ),
        window=lsp.WindowClientCapabilities(work_done_progress=False),
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    )


def pos_at(text: str, offset: int) -> lsp.Position:
    """The LSP position of a code-point offset (``position_of``, as an ``lsp.Position``)."""
    line, character = position_of(text, offset)
    return lsp.Position(line=line, character=character)


# ---- the daemon ---------------------------------------------------------------------------------------------
class Daemon:
    """``dgcomplete serve`` on stdio through pytest-lsp's client (a real subprocess)."""

    def __init__(self, model: Path, *, threads: int | None = None, log_dir: Path | None = None,
                 options: dict[str, Any] | None = None, folders: list[Path] | None = None) -> None:
        self.model = model
        self.folders = folders or []  # workspace folders named in initialize
        self.threads = threads
        self.options = options or {}  # initializationOptions: the settings under test
        self.log_file: Path | None = None
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="dgbench-"))
        self.client: Any = None
        self.startup_s: float | None = None
        self.ready_info = ""
        self.sent = 0  # inline requests sent

    async def start(self, timeout: float = 300.0) -> Daemon:
        from pytest_lsp import ClientServerConfig

        log = self.log_file = self.log_dir / f"daemon-{os.getpid()}-{next(_ids)}.log"
        cmd = [sys.executable, "-m", "dgcomplete", "serve", "--model", str(self.model), "--log-file", str(log)]
        if self.threads:
            cmd += ["--threads", str(self.threads)]
        t = Timer()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [str(Path(__file__).resolve().parent.parent),
                                                         env.get("PYTHONPATH", "")] if p)
        self.client = await ClientServerConfig(server_command=cmd, server_env=env).start()
        await self.client.initialize_session(lsp.InitializeParams(
            capabilities=capabilities(), initialization_options=self.options, process_id=None,
            workspace_folders=[lsp.WorkspaceFolder(uri=f.resolve().as_uri(), name=f.name) for f in self.folders] or None))
        while t.s < timeout:
            msgs = [m.message for m in self.client.log_messages] + [m.message for m in self.client.messages]
            hit = next((m for m in msgs if " ready " in m or "cannot load" in m), None)
            if hit is not None:
                if "cannot load" in hit:
                    await self.stop()
                    raise RuntimeError(hit)
                self.ready_info = hit
                break
            if self.client._server is not None and self.client._server.returncode is not None:
                raise RuntimeError(f"the daemon exited (code {self.client._server.returncode}); log: {log}")
            await asyncio.sleep(0.02)
        else:
            raise RuntimeError(f"the daemon did not get ready within {timeout:.0f} s")
        self.startup_s = round(t.s, 2)
        return self

    @property
    def pid(self) -> int:
        return self.client._server.pid

    def rss_mb(self) -> float:
        import psutil

        return round(psutil.Process(self.pid).memory_info().rss / 2**20, 1)

    def peak_rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return None

    async def stats(self) -> dict[str, Any]:
        res = await self.client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="dgcomplete.stats"))
        return res if isinstance(res, dict) else {}

    async def stop(self) -> None:
        if self.client is None:
            return
        try:
            await asyncio.wait_for(self.client.shutdown_session(), 10)
        except Exception:
            pass
        try:
            await asyncio.wait_for(self.client.stop(), 10)
        except Exception:
            pass
        self.client = None


# ---- one editor -----------------------------------------------------------------------------------------------
@dataclass
class Req:
    client: str
    session: str
    language: str
    keystroke: int
    t_send: float
    ms: float | None = None
    status: str = "pending"  # items | empty | cancelled | error
    disturbed: bool = False
    cancel_sent: float | None = None
    cancel_ack_ms: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    error: str = ""

    @property
    def plan(self) -> str | None:
        return self.stats.get("plan")

    @property
    def model_ran(self) -> bool:
        return self.status in ("items", "empty") and not self.disturbed and self.plan not in (None, "none") \
            and "engine_ms" in self.stats


class Editor:
    """One open document, edited by keystrokes, requesting inline completions as a given client does."""

    def __init__(self, daemon: Daemon, mode: str, session: Session, uri: str, records: list[Req]) -> None:
        self.d = daemon
        self.mode = mode
        self.session = session
        self.uri = uri
        self.text = session.initial
        self.version = 0
        self.cursor = 0
        self.records = records
        self.inflight: list[tuple[Req, str]] = []
        self.tasks: set[asyncio.Task] = set()
        self.timer: asyncio.TimerHandle | None = None
        self.keystroke = 0

    def open(self) -> None:
        self.d.client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
            uri=self.uri, language_id=self.session.language, version=0, text=self.text)))

    def close(self) -> None:
        self.d.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(self.uri)))

    def _disturb(self) -> None:
        for r, _ in self.inflight:
            r.disturbed = True

    def press(self, start: int, end: int, new: str, cursor: int) -> None:
        self._disturb()
        if start != end or new:
            rng = lsp.Range(start=pos_at(self.text, start), end=pos_at(self.text, end))
            self.text = self.text[:start] + new + self.text[end:]
            self.version += 1
            self.d.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=new)]))
        self.cursor = cursor
        self.keystroke += 1

    def _spawn(self) -> None:
        task = asyncio.ensure_future(self.request())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def trigger(self) -> None:
        """What the client does after a keystroke."""
        if self.mode == "nvim":
            if self.timer is not None:
                self.timer.cancel()
            self.timer = asyncio.get_running_loop().call_later(DEBOUNCE_S, self._spawn)
        elif self.mode == "vscode":
            for r, msg_id in self.inflight:
                if r.cancel_sent is None:
                    r.cancel_sent = time.perf_counter()
                    self.d.client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            self._spawn()

    async def request(self) -> Req:
        self._disturb()
        msg_id = f"bench-{next(_ids)}"
        params = lsp.InlineCompletionParams(
            context=lsp.InlineCompletionContext(trigger_kind=lsp.InlineCompletionTriggerKind.Automatic),
            text_document=lsp.TextDocumentIdentifier(self.uri), position=pos_at(self.text, self.cursor))
        r = Req(self.mode, self.session.name, self.session.language, self.keystroke, time.perf_counter())
        self.records.append(r)
        self.inflight.append((r, msg_id))
        self.d.sent += 1
        fut = asyncio.wrap_future(self.d.client.protocol.send_request(
            lsp.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id))
        try:
            res = await fut
            done = time.perf_counter()
            items = list(getattr(res, "items", None) or (res if isinstance(res, list) else []))
            r.status = "items" if items else "empty"
            if items:
                r.text = items[0].insert_text if isinstance(items[0].insert_text, str) else str(items[0].insert_text)
                args = items[0].command.arguments if items[0].command else None
                if args and isinstance(args[0], dict):
                    r.stats = dict(args[0])
        except Exception as e:  # cancelled (RequestCancelled error) or a server error
            done = time.perf_counter()
            r.status = "cancelled" if r.cancel_sent is not None else "error"
            r.error = str(e)[:200]
        r.ms = round((done - r.t_send) * 1e3, 2)
        if r.cancel_sent is not None:
            r.cancel_ack_ms = round((done - r.cancel_sent) * 1e3, 2)
        self.inflight = [(x, i) for x, i in self.inflight if x is not r]
        if r.status == "empty" and not r.disturbed and not self.inflight:
            try:
                last = (await self.d.stats()).get("last") or {}
            except Exception:
                last = {}
            # `last` is this request's unless a later one finished first: check the server's own time
            if isinstance(last.get("ms"), (int, float)) and last["ms"] <= r.ms + 1 and r.ms - last["ms"] < max(25, r.ms / 2):
                r.stats = dict(last)
        return r

    async def drain(self) -> None:
        if self.timer is not None:
            await asyncio.sleep(DEBOUNCE_S + 0.01)
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


async def replay(daemon: Daemon, session: Session, mode: str, records: list[Req], *, uri: str,
                 max_keys: int | None = None, deadline: float | None = None) -> None:
    """Replay one session in real time (``nvim``/``vscode``) or as fast as answers come (``sequential``)."""
    ed = Editor(daemon, mode, session, uri, records)
    ed.open()
    t_next = time.perf_counter()
    keys = session.keys if max_keys is None else session.keys[:max_keys]
    for k in keys:
        if deadline is not None and time.perf_counter() > deadline:
            break
        if mode != "sequential":
            t_next += k.delay
            wait = t_next - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
        ed.press(k.start, k.end, k.text, k.cursor)
        if mode == "sequential":
            await ed.request()
        else:
            ed.trigger()
    await ed.drain()
    ed.close()


# ---- analysis -------------------------------------------------------------------------------------------------
def breakdown(reqs: list[Req]) -> dict[str, Any]:
    """Percentiles of client-measured latency and its server-side parts over model-running requests."""
    ms = [r.ms for r in reqs if r.ms is not None]
    out: dict[str, Any] = summary(ms)
    parts: dict[str, list[float]] = {"encode": [], "denoise": [], "syntax": [], "engine_other": [], "protocol": []}
    for r in reqs:
        s = r.stats
        enc, den, syn, eng = (float(s.get(k, 0.0) or 0.0) for k in ("encode_ms", "denoise_ms", "syntax_ms", "engine_ms"))
        parts["encode"].append(enc)
        parts["denoise"].append(den)
        parts["syntax"].append(syn)
        parts["engine_other"].append(max(0.0, eng - enc - den - syn))
        parts["protocol"].append(max(0.0, (r.ms or 0.0) - eng))
    out["parts_ms"] = {k: {"p50": summary(v)["p50"], "mean": summary(v)["mean"]} for k, v in parts.items()}
    return out


def analyse(records: list[Req]) -> dict[str, Any]:
    model = [r for r in records if r.model_ran]
    single = [r for r in model if r.plan in SINGLE_LINE_PLANS]
    out: dict[str, Any] = {
        "all": breakdown(model),
        "single_line": breakdown(single),
        "multi_line": breakdown([r for r in model if r.plan not in SINGLE_LINE_PLANS]),
        "answered_undisturbed_any_plan": summary([r.ms for r in records if r.status in ("items", "empty")
                                                  and not r.disturbed and r.ms is not None]),
        "by_client": {},
        "by_language": {},
        "by_plan": {},
    }
    for mode in sorted({r.client for r in records}):
        rs = [r for r in records if r.client == mode]
        m = [r for r in rs if r.model_ran]
        reasons: dict[str, int] = {}
        for r in rs:
            if r.status == "empty" and not r.disturbed:
                key = str(r.stats.get("reason") or r.stats.get("plan_reason") or "unknown")[:60]
                reasons[key] = reasons.get(key, 0) + 1
        acks = [r.cancel_ack_ms for r in rs if r.cancel_ack_ms is not None]
        out["by_client"][mode] = {
            "requests": len(rs),
            "with_items": sum(r.status == "items" for r in rs),
            "empty": sum(r.status == "empty" for r in rs),
            "cancelled": sum(r.status == "cancelled" for r in rs),
            "errors": sum(r.status == "error" for r in rs),
            "disturbed": sum(r.disturbed for r in rs),
            "undisturbed_with_items": sum(r.status == "items" and not r.disturbed for r in rs),
            "empty_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])[:8]),
            "latency_ms": breakdown(m),
            "single_line_latency_ms": breakdown([r for r in m if r.plan in SINGLE_LINE_PLANS]),
            "cancel_ack_ms": summary(acks),
        }
    for lang in sorted({r.language for r in model}):
        out["by_language"][lang] = summary([r.ms for r in model if r.language == lang])
    for plan in sorted({r.plan for r in model if r.plan}):
        rs = [r for r in model if r.plan == plan]
        out["by_plan"][plan] = {
            "latency_ms": summary([r.ms for r in rs]),
            "steps": summary([float(r.stats.get("steps", 0)) for r in rs]),
            "tokens_per_forward": summary([float(r.stats.get("tokens_per_forward", 0)) for r in rs], 2),
            "committed_tokens": summary([float(r.stats.get("committed_tokens", 0)) for r in rs]),
        }
    return out


# ---- the file-size comparison ---------------------------------------------------------------------------------
def _long_python(min_lines: int) -> str:
    import sysconfig

    base = Path(sysconfig.get_paths()["stdlib"])
    names = ["textwrap.py", "heapq.py", "shlex.py", "fnmatch.py", "argparse.py", "statistics.py", "difflib.py",
             "inspect.py", "pathlib.py", "tarfile.py", "typing.py"]
    parts: list[str] = []
    n = 0
    for name in names:
        try:
            t = (base / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        parts.append(t)
        n += t.count("\n")
        if n >= min_lines:
            break
    if n < min_lines:  # no stdlib sources: repeat the fixture
        fx = next(t for name, lang, t in fixture_sources() if lang == "python")
        while n < min_lines:
            parts.append(fx)
            n += fx.count("\n")
    return "\n\n".join(parts)


def scale_documents(big_lines: int = 5000, small_lines: int = 50) -> tuple[tuple[str, tuple[int, int]], ...]:
    """(text, region) for a ~50-line and a ~5,000-line Python file with the same function to finish.

    The region is the last two lines of a function in the middle of the big file; the small file is the
    50 lines around it (the function near its end).
    """
    import re

    lines = _long_python(big_lines).split("\n")[:big_lines]
    mid = len(lines) // 2
    defs = [i for i, ln in enumerate(lines) if re.match(r"^\s*def \w+\(.*\):\s*$", ln) and i >= mid - 400]
    for i in defs:
        ind = len(lines[i]) - len(lines[i].lstrip())
        j = i + 1
        last = i
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ind):
            if lines[j].strip():
                last = j
            j += 1
        body = [k for k in range(i + 1, last + 1) if lines[k].strip()]
        if len(body) >= 4 and all(lines[k].strip() for k in (last - 1, last)) and '"""' not in lines[last - 1] + lines[last]:
            a, b = last - 1, last + 1
            break
    else:
        raise RuntimeError("no function to finish in the long file")
    big = "\n".join(lines)
    s0 = max(0, a - (small_lines - 10))
    small = "\n".join(lines[s0 : s0 + small_lines])
    return (small, (a - s0, b - s0)), (big, (a, b))


async def scale_test(daemon: Daemon, rounds: int, *, max_keys: int | None = 40, seed: int = 0) -> dict[str, Any]:
    import random

    (small, rs), (big, rb) = scale_documents()
    out: dict[str, Any] = {"small_lines": small.count("\n") + 1, "big_lines": big.count("\n") + 1}
    recs: dict[str, list[Req]] = {"small": [], "big": []}
    firsts: dict[str, list[float]] = {"small": [], "big": []}
    sessions = {name: make_session(f"scale-{name}", "python", text, [region], Pace(scale=0.0), random.Random(seed))
                for name, text, region in (("small", small, rs), ("big", big, rb))}
    for k in range(rounds):
        for name in ("small", "big"):
            s = sessions[name]
            rr: list[Req] = []
            # the small file is edited with the big one (the same lines missing) open beside it: retrieval sees
            # the same lines in both rounds (a draft adds a scoring pass), so the ratio measures the size of the
            # edited document, not what else it offers to copy from
            beside = None
            if name == "small":
                beside = Editor(daemon, "sequential", sessions["big"], f"file:///bench/scale/beside-{k}.py", [])
                beside.open()
            await replay(daemon, s, "sequential", rr, uri=f"file:///bench/scale/{name}-{k}.py",
                         max_keys=None if max_keys is None else max_keys + 1)
            if beside is not None:
                beside.close()
            if rr:
                firsts[name].append(rr[0].ms or 0.0)
            recs[name].extend(rr[1:])  # the first request encodes the whole window: reported apart
    for name in ("small", "big"):
        model = [r for r in recs[name] if r.model_ran]
        out[name] = breakdown(model)
        out[name]["first_request_ms"] = summary(firsts[name])
        out[name]["prefix_tokens_p50"] = summary([float(r.stats.get("prefix_tokens", 0)) for r in model])["p50"]
        out[name]["cache_hit_tokens_p50"] = summary([float(r.stats.get("cache_hit_tokens", 0)) for r in model])["p50"]
        out[name]["scored_mean"] = summary([float(r.stats.get("scored", 0)) for r in model])["mean"]
        out[name]["drafts_mean"] = summary([float(r.stats.get("drafts", 0)) for r in model])["mean"]
    a, b = out["small"].get("p50"), out["big"].get("p50")
    out["ratio_p50"] = round(b / a, 3) if a and b else None
    out["keystrokes_per_round"] = len(recs["small"]) // max(1, rounds)
    return out


async def threads_test(model: Path, keystrokes: int, log_dir: Path, *, max_s: float = 45.0) -> dict[str, Any]:
    import random

    (small, rs), _ = scale_documents()
    out: dict[str, Any] = {}
    for n in (1, 2):
        d = await Daemon(model, threads=n, log_dir=log_dir).start()
        try:
            s = make_session("threads", "python", small, [rs], Pace(scale=0.0), random.Random(0))
            rr: list[Req] = []
            await replay(d, s, "sequential", rr, uri=f"file:///bench/threads/{n}.py", max_keys=keystrokes + 1,
                         deadline=time.perf_counter() + max_s)
            model_reqs = [r for r in rr[1:] if r.model_ran]  # the first request encodes the whole file
            out[f"threads_{n}"] = breakdown(model_reqs)
            out[f"threads_{n}"]["startup_s"] = d.startup_s
        finally:
            await d.stop()
    a, b = out["threads_1"].get("p50"), out["threads_2"].get("p50")
    out["speedup_2_over_1"] = round(a / b, 3) if a and b else None
    return out


# ---- the whole latency benchmark --------------------------------------------------------------------------------
@dataclass
class LatencyConfig:
    seconds: float = 90.0  # typing time per client mode
    modes: tuple[str, ...] = ("nvim", "vscode")
    scale_rounds: int = 2
    scale_keys: int = 40  # keystrokes per file per round
    thread_keystrokes: int = 30
    thread_max_s: float = 20.0  # per thread count (2 threads on a busy 2-core machine can be very slow)
    burst_max_s: float = 240.0
    total_requests: int = 1000  # the memory figure is taken after this many inline requests
    threads: int | None = None
    seed: int = 0
    pace_scale: float = 1.0
    max_sessions: int | None = None  # None: every source file (3 stdlib modules + 3 fixtures)


async def run_latency(model: Path, cfg: LatencyConfig, log: Any = print) -> dict[str, Any]:
    log_dir = Path(tempfile.mkdtemp(prefix="dgbench-logs-"))
    t = Timer()
    sources = stdlib_sources() + fixture_sources()
    if cfg.max_sessions is not None:  # keep the language mix: interleave Python, JavaScript and Go
        sources = sorted(sources, key=lambda s: (sum(1 for x in sources[: sources.index(s)] if x[1] == s[1]), s[1]))
        sources = sources[: cfg.max_sessions]
    sessions = build_sessions(sources, cfg.seconds, seed=cfg.seed, pace=Pace(scale=cfg.pace_scale))
    d = await Daemon(model, threads=cfg.threads, log_dir=log_dir).start()
    result: dict[str, Any] = {"startup_s": d.startup_s, "ready": d.ready_info[-200:]}
    records: list[Req] = []
    try:
        result["rss_after_load_mb"] = d.rss_mb()
        st = await d.stats()
        result["daemon_threads"] = st.get("threads")
        log(f"  daemon ready in {d.startup_s} s, {result['rss_after_load_mb']} MB, threads={st.get('threads')}")
        for mode in cfg.modes:
            t0 = t.s
            for s in sessions:
                await replay(d, s, mode, records, uri=f"file:///bench/{mode}/{s.name}")
            log(f"  {mode}: {sum(1 for r in records if r.client == mode)} requests in {t.s - t0:.0f} s")
        result["sessions"] = [{"name": s.name, "language": s.language, "keys": len(s.keys),
                               "typed_chars": s.typed_chars, "seconds": round(s.seconds, 1)} for s in sessions]
        t0 = t.s
        result["file_scale"] = await scale_test(d, cfg.scale_rounds, max_keys=cfg.scale_keys, seed=cfg.seed)
        log(f"  file scale: ratio {result['file_scale']['ratio_p50']} in {t.s - t0:.0f} s")
        # bring the daemon to `total_requests` inline requests (sequential typing) before measuring memory
        t0 = t.s
        burst: list[Req] = []
        k = 0
        deadline = time.perf_counter() + cfg.burst_max_s
        while d.sent < cfg.total_requests and sessions and time.perf_counter() < deadline:
            s = sessions[k % len(sessions)]
            await replay(d, s, "sequential", burst, uri=f"file:///bench/burst/{k}/{s.name}",
                         max_keys=cfg.total_requests - d.sent, deadline=deadline)
            k += 1
        result["burst"] = breakdown([r for r in burst if r.model_ran])
        result["requests_total"] = d.sent
        result["rss_after_requests_mb"] = d.rss_mb()
        result["rss_peak_mb"] = d.peak_rss_mb()
        log(f"  {d.sent} requests: rss {result['rss_after_requests_mb']} MB (burst {t.s - t0:.0f} s)")
        st = await d.stats()
        result["server_stats"] = {k: st.get(k) for k in ("requests", "shown", "empty", "cancelled", "stale",
                                                         "latency_ms", "threads", "model")}
    finally:
        await d.stop()
    result.update(analyse(records))
    if cfg.thread_keystrokes > 0:
        t0 = t.s
        result["threads"] = await threads_test(model, cfg.thread_keystrokes, log_dir, max_s=cfg.thread_max_s)
        log(f"  threads 1 vs 2: speedup {result['threads']['speedup_2_over_1']} in {t.s - t0:.0f} s")
    result["records"] = [asdict(r) | {"model_ran": r.model_ran, "plan": r.plan} for r in records]
    result["wall_s"] = round(t.s, 1)
    return result


def quick_latency_config(threads: int | None = None) -> LatencyConfig:
    return LatencyConfig(seconds=15, scale_rounds=1, scale_keys=15, thread_keystrokes=10, thread_max_s=10,
                         total_requests=150, burst_max_s=30, threads=threads)


def main(argv: list[str] | None = None) -> None:
    from . import emit, resolve_model

    ap = argparse.ArgumentParser(description="keystroke latency through LSP")
    ap.add_argument("--model")
    ap.add_argument("--seconds", type=float, default=90.0, help="typing time per client mode")
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", help="write the JSON here")
    args = ap.parse_args(argv)
    cfg = LatencyConfig(seconds=args.seconds, total_requests=args.requests, threads=args.threads)
    if args.quick:
        cfg = quick_latency_config(args.threads)
    res = asyncio.run(run_latency(resolve_model(args.model), cfg))
    res.pop("records", None)
    emit(res, args.out)


if __name__ == "__main__":
    main()
