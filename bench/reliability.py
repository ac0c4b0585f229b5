"""Reliability under bad input, load and faults (``python -m bench.reliability``, ``make reliability``).

Writes ``bench/results/reliability.md`` and ``reliability.json``. Three parts, each against the real daemon
process (``python -m dgcomplete serve``) driven over stdio by :class:`tests.lsp_client.RawDaemon`, a small client that writes raw
``Content-Length`` frames (so it can send malformed bytes) and reads every frame the daemon writes:

* fuzzing (``tests/fuzz.py``): hypothesis-generated cases (malformed / truncated JSON, wrong types, unknown methods, positions past
  the end, negative or mid-surrogate positions, CRLF / lone CR / NUL / binary text, huge documents and lines,
  unknown language ids, changes to unopened documents, batches, requests after shutdown). Every request (a
  message with an id) must get a result or a JSON-RPC error, and the daemon must stay up;
* a typing storm (``tests/storm.py``): several documents edited and completed at 50 requests/s with cancellations; no result may
  be stale (the client replays every edit and checks each result against the version current when it was
  answered), memory after warm-up must not grow by 5 % or more, latency must recover afterwards;
* faults: missing / corrupt checkpoints, a remote backend that dies mid-request, oversized inputs.

The tests (tests/test_fuzz.py, tests/test_reliability.py) run shortened versions of the same code.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from tests.fuzz import FUZZ_INIT, fuzz
from tests.helpers import (
    CHECKPOINT_DAMAGES,
    damage_checkpoint,
    make_tiny_checkpoint,
    storm_memo_sources,
    train_storm_model,
)
from tests.lsp_client import ROOT, RawDaemon, inline_params, raw_frame
from tests.storm import storm


# ---- faults -------------------------------------------------------------------------------------------------------
def _outcome(name: str, ok: bool, detail: str, **extra: Any) -> dict[str, Any]:
    return {"fault": name, "ok": bool(ok), "detail": detail[:300], **extra}


def _crash_detail(d: RawDaemon, log: Path | None) -> str:
    tail = log.read_text(errors="replace").splitlines()[-60:] if log and log.exists() else []
    where = [ln.strip().replace(str(ROOT) + "/", "") for ln in tail
             if "Fatal Python error" in ln or (ln.strip().startswith("File ") and "dgcomplete/" in ln)][:4]
    return f"daemon died (exit {d.proc.poll()}): " + " | ".join(where)


def faults(tiny: Path, work: Path) -> list[dict[str, Any]]:
    """Every fault scenario; each outcome says what the daemon did and whether that is the wanted behaviour."""
    from dgcomplete.model import CheckpointError, load_model

    out: list[dict[str, Any]] = []
    work.mkdir(parents=True, exist_ok=True)
    for damage in CHECKPOINT_DAMAGES:
        bad = damage_checkpoint(tiny, work / f"ckpt-{damage}", damage)
        try:
            load_model(bad)
            out.append(_outcome(f"checkpoint: {damage}", False, "loaded without an error"))
        except CheckpointError as e:
            out.append(_outcome(f"checkpoint: {damage}", True, f"CheckpointError: {e}".replace(str(work), "…")))
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            out.append(_outcome(f"checkpoint: {damage}", False, f"{type(e).__name__}: {e}"))
    # the daemon on a truncated checkpoint: one message, empty results, still up
    log = work / "daemon-truncated.log"
    d = RawDaemon("--model", str(work / "ckpt-truncated"), stderr_path=log)
    try:
        d.initialize()
        d.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///b.py", "languageId": "python",
                                                           "version": 1, "text": "x = "}})
        rs = [d.request("textDocument/inlineCompletion", inline_params("file:///b.py", 0, 4), 60) for _ in range(3)]
        shown = [n["params"]["message"] for n in d.notifications if n["method"] == "window/showMessage"]
        ok = all(r and r.get("result") == {"items": []} for r in rs) and len(shown) == 1 and d.alive()
        out.append(_outcome("daemon on a truncated checkpoint", ok,
                            f"{len(shown)} error message(s), empty results, alive={d.alive()}: "
                            + (shown[0].replace(str(work), "…") if shown else "")))
    finally:
        d.close()
    out += _remote_faults(tiny, work)
    out += _input_faults(tiny, work)
    return out


def _remote_faults(tiny: Path, work: Path) -> list[dict[str, Any]]:
    from tests.fake_openai_server import FakeOpenAIServer, Reply  # a test helper, on purpose

    out = []
    uri = "file:///r.py"
    req = inline_params(uri, 1, 11, invoked=True)

    def ask(d: RawDaemon) -> tuple[dict[str, Any] | None, float]:
        t0 = time.perf_counter()
        r = d.request("textDocument/inlineCompletion", req, 60)
        return r, time.perf_counter() - t0

    def describe(r: dict[str, Any] | None, s: float) -> str:
        if r is None:
            return f"no answer after {s:.1f} s"
        if "error" in r:
            return f"error {r['error']['code']} after {s:.1f} s: {r['error']['message']}"
        return f"{len(r['result']['items'])} item(s) after {s:.1f} s"

    with FakeOpenAIServer(default_text="a + b") as fake:
        port = fake.port
        d = RawDaemon("--local-model", str(work / "no-local-model"), "--backend", "openai", "--url", fake.url,
                      "--remote-model", fake.model, stderr_path=work / "daemon-remote.log")
        d.initialize()
        d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": "def add(a, b):\n    return "}})
        r, s = ask(d)
        out.append(_outcome("remote: healthy", bool(r and r.get("result", {}).get("items")), describe(r, s)))
        fake.script(*[Reply(text="a + b" * 20, chunk_chars=2, close_after_chunks=1)] * 5)
        r, s = ask(d)
        out.append(_outcome("remote: connection dropped mid-stream (every retry)",
                            bool(r and r.get("error", {}).get("code") == -32803), describe(r, s)))
        fake.script(Reply(text="a + b", stall_after_chunks=1, stall_s=30))
        r, s = ask(d)
        out.append(_outcome("remote: stream stalls mid-request", bool(r and "error" in r and s < 20),
                            describe(r, s)))
    r, s = ask(d)
    out.append(_outcome("remote: server gone", bool(r and r.get("error", {}).get("code") == -32803 and s < 15),
                        describe(r, s)))
    with FakeOpenAIServer(port=port, default_text="a + b"):
        r, s = ask(d)
        out.append(_outcome("remote: server back on the same port", bool(r and r.get("result", {}).get("items")),
                            describe(r, s)))
    out.append(_outcome("remote: daemon exit", d.close() == 0 and not d.bad_frames, f"exit {d.proc.returncode}"))
    with FakeOpenAIServer(default_text="a + b") as fake:
        d = RawDaemon("--local-model", str(tiny), "--threads", "1", "--backend", "openai", "--url", fake.url,
                      "--remote-model", fake.model, stderr_path=work / "daemon-fallback.log")
        d.initialize(FUZZ_INIT)
        d.wait_ready()
    d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                       "text": "def add(a, b):\n    return "}})
    r, s = ask(d)
    out.append(_outcome("remote gone, local model present: fallback", bool(r and "result" in r), describe(r, s)))
    d.close()
    return out


def _input_faults(tiny: Path, work: Path) -> list[dict[str, Any]]:
    from dgcomplete.protocol import MAX_MESSAGE_BYTES

    out = []
    log = work / "daemon-inputs.log"
    d = RawDaemon("--model", str(tiny), "--threads", "1", stderr_path=log, env={"PYTHONFAULTHANDLER": "1"})

    def restart() -> RawDaemon:
        nonlocal d
        d.kill()
        d.close()
        d = RawDaemon("--model", str(tiny), "--threads", "1", stderr_path=log, env={"PYTHONFAULTHANDLER": "1"})
        d.initialize(FUZZ_INIT)
        d.wait_ready()
        return d

    try:
        d.initialize(FUZZ_INIT)
        d.wait_ready()
        rss0 = d.rss_kb()
        n0 = len(d.null_id)
        d.write(raw_frame(b" " * (MAX_MESSAGE_BYTES + 1)))
        got = d.wait_null_id(n0 + 1, 60)[n0:]
        ok = bool(got) and got[0]["error"]["code"] == -32600 and d.ping() is not None
        out.append(_outcome(f"frame over {MAX_MESSAGE_BYTES >> 20} MiB", ok,
                            f"{got[0]['error'] if got else 'no answer'}; RSS {rss0 // 1024} -> {d.rss_kb() // 1024} MB"))
        # documents: 10 MB (tracked, not completed), a 900 KB line, typing at the end of a 36 KB file
        block = "def f_{i}(a, b):\n    total = a + b\n    return total * {i}\n\n"
        huge = "".join(block.format(i=i) for i in range(10_000_000 // len(block) + 1))
        body = "".join(f"def f_{i}(a, b):\n    return a + b * {i}\n\n\n" for i in range(1000))
        # tree-sitter-typescript's TSX grammar never finishes this text (session 50): the parse gives up
        hang = json.loads((Path(__file__).parent / "results" / "grammar_fuzz_tsx_hang.json").read_text())["text"]
        for name, text, ext, want in [("10 MB document", huge, "py", None),
                                      ("900 KB line", "x = [" + "1, " * 300_000 + "\n", "py", None),
                                      ("cursor at the end of a 36 KB file", body, "py", None),
                                      ("a text the TSX grammar never finishes", hang, "tsx", "gave up")]:
            uri = f"file:///in/{len(text)}.{ext}"
            t0 = time.perf_counter()
            rss0 = d.rss_kb()
            d.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "typescriptreact" if ext == "tsx" else "python", "version": 1,
                "text": text}})
            n = text.count("\n")
            r = d.request("textDocument/inlineCompletion", inline_params(uri, n, 0), 120)
            s = time.perf_counter() - t0
            if r is None or not d.alive():
                out.append(_outcome(name, False, _crash_detail(d, log)))
                restart()
                continue
            stats = (d.ping() or {}).get("result", {})
            rss1 = d.rss_kb()
            d.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            why = str(stats.get("last", {}).get("reason"))
            out.append(_outcome(name, "result" in r and (want is None or want in why), f"answered in {s:.1f} s ({why!r}); "
                                f"RSS +{(rss1 - rss0) // 1024} MB", seconds=round(s, 2)))
        # 100 documents with a request in flight each
        ids = []
        for i in range(100):
            uri = f"file:///many/{i}.py"
            d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": f"def g_{i}(x):\n    return "}})
            ids.append(d.request_nowait("textDocument/inlineCompletion", inline_params(uri, 1, 11)))
        t0 = time.perf_counter()
        answers = [d.wait(i, 120) for i in ids]
        good = sum(1 for a in answers if a is not None and "result" in a)
        out.append(_outcome("100 documents, a request in flight on each", good == 100 and d.alive(),
                            f"{good}/100 answered in {time.perf_counter() - t0:.1f} s"))
        # requests after shutdown, then exit
        assert "result" in (d.request("shutdown") or {})
        r = d.request("textDocument/inlineCompletion", inline_params("file:///many/0.py", 1, 11))
        d.notify("exit")
        code = d.proc.wait(timeout=30)
        out.append(_outcome("request after shutdown", bool(r and r.get("error", {}).get("code") == -32600) and code == 0,
                            f"{r.get('error') if r else 'no answer'}; exit code {code}"))
    finally:
        d.kill()
        d.close()
    # a header asking for 100 GB, then EOF
    log = work / "daemon-huge-header.log"
    d = RawDaemon("--model", str(tiny), "--threads", "1", stderr_path=log)
    try:
        d.initialize()
        d.write(b"Content-Length: 100000000000\r\n\r\n{}")
        time.sleep(1.0)
        alive = d.alive()
        assert d.proc.stdin is not None
        d.proc.stdin.close()
        code = d.proc.wait(timeout=60)
        text = log.read_text(errors="replace")
        out.append(_outcome("Content-Length: 100 GB, then EOF", alive and "MemoryError" not in text,
                            f"alive while waiting for the body: {alive}; exit {code} at EOF; "
                            f"MemoryError logged: {'MemoryError' in text}"))
    finally:
        d.kill()
        d.close()
    return out


# ---- safety -------------------------------------------------------------------------------------------------------
UNSAFE_PATTERNS = (
    (r"\btorch\.load\s*\(", "torch.load (unpickles)"),
    (r"^\s*(import|from)\s+(c?pickle|dill|joblib|marshal|shelve)\b", "pickle-like deserialization"),
    (r"(?<![.\w])eval\s*\(", "eval"),
    (r"(?<![.\w])exec\s*\(", "exec"),
    (r"\btrust_remote_code\s*=\s*True", "remote code from checkpoints"),
    (r"\byaml\.load\s*\(", "yaml.load"),
    (r"(?<![.\w])__import__\s*\(", "dynamic import"),
)


def unsafe_code() -> list[str]:
    """Lines of the package that could execute code from data (pickle, eval, ...): should be none."""
    import re

    found = []
    for f in sorted((ROOT / "dgcomplete").rglob("*.py")):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            for pattern, why in UNSAFE_PATTERNS:
                if re.search(pattern, line):
                    found.append(f"{f.relative_to(ROOT)}:{i}: {why}")
    return found


# ---- report -------------------------------------------------------------------------------------------------------
def _models(model: str | None, storm_model: str | None, log: Any) -> tuple[Path, str, list[tuple[Path, str]]]:
    """The fuzz/fault model and its description, and the storm models. Defaults: a tiny random checkpoint for
    fuzzing and faults (robustness does not depend on the weights); for the storm a tiny model trained in
    seconds to memorize a file (fast, and its completions have items whose staleness can be checked), then the
    embedded model when there is one (real memory and latency)."""
    from dgcomplete.models import default_model_path

    cache = ROOT / "bench" / "results" / "tmp" / "reliability-models"
    if model:
        fuzz_model, fuzz_desc = Path(model), display_path(model)
    else:
        fuzz_model = cache / "tiny-random"
        if not (fuzz_model / "config.json").exists():
            make_tiny_checkpoint(fuzz_model)
        fuzz_desc = "tiny random-weight checkpoint (tests/helpers.make_tiny_checkpoint)"
    if storm_model:
        return fuzz_model, fuzz_desc, [(Path(storm_model), display_path(storm_model))]
    memo = cache / "memorizer"
    if not (memo / "config.json").exists():
        log("training the memorizing tiny model for the storm...")
        train_storm_model(memo)
    storms = [(memo, "tiny model trained to memorize tests/helpers.MEMO_TEXT")]
    if (default_model_path() / "config.json").exists():
        storms.append((default_model_path(), f"embedded model {default_model_path().name}"))
    return fuzz_model, fuzz_desc, storms


def display_path(p: str | Path) -> str:
    from bench import display_path as dp

    return dp(p)


def _storm_rows(st: dict[str, Any]) -> list[str]:
    m = st["model"]
    return [
        f"| storm ({m}): completion requests | {st['requests']:,} in {st['seconds']} s ({st['rate_sent']}/s), "
        f"{st['keystrokes']:,} edits, {st['cancel_requests_sent']} cancels, {st['documents']} documents | 50/s, ≥ 60 s |",
        f"| storm ({m}): unanswered / stale / inconsistent with their version | {st['unanswered']} / {st['stale']} / "
        f"{st['inconsistent']} (of {st['with_items']} results with items) | 0 / 0 / 0 |",
        f"| storm ({m}): memory growth after {st['warmup_s']:.0f} s warm-up | {st['rss_growth_pct']} % "
        f"({st['rss_mb']['warm']} → {st['rss_mb']['end_of_storm']} MB, peak {st['rss_mb']['peak']} MB) | < 5 % |",
        f"| storm ({m}): latency p50 before → after | {st['latency_before_ms']['p50']} → "
        f"{st['latency_after_ms']['p50']} ms (fast again {st['recovered_after_ms']} ms after the drain) | recovers |",
    ]


def report_md(res: dict[str, Any]) -> str:
    fz, m = res["fuzz"], res["machine"]
    fault_ok = sum(f["ok"] for f in res["faults"])
    lines = [
        "<!-- generated by `python -m bench.reliability` (make reliability); do not edit -->",
        "# Reliability under bad input, load and faults",
        "",
        f"Run {res['date']} on {m['cores']} cores ({m['cpu']}), load average at start {m.get('loadavg_start')} "
        f"(a shared machine), Python {m['python']}, torch {m['torch']}; {res['seconds']:.0f} s in all. "
        f"Fuzzing and faults: {res['models']['fuzz']}.",
        "",
        "| check | result | goal |",
        "|---|---|---|",
        f"| fuzz cases (hypothesis, raw frames over stdio) | {fz['cases']:,} cases, {fz['frames']:,} frames, "
        f"{fz['requests']:,} requests | ≥ 10,000 cases |",
        f"| daemon crashes / hangs during fuzzing | {fz['crashes']} / {fz['hangs']} | 0 |",
        f"| fuzz problems (unanswered, answered twice, internal errors, bad frames) | {fz['problem_count']} | 0 |",
        f"| valid request after the last case | {'answered' if fz['final_request_ok'] else 'FAILED'} "
        f"(exit code {fz['exit_code']}) | answered, exit 0 |",
    ]
    for st in res["storms"]:
        lines += _storm_rows(st)
    lines += [
        f"| faults handled as intended | {fault_ok} / {len(res['faults'])} | all |",
        f"| unsafe code in the package (pickle, torch.load, eval, exec, ...) | {len(res['unsafe'])} | 0 |",
        "",
        "## Fuzzing",
        "",
        f"{fz['cases']:,} cases of 1-4 frames each (seed {res['settings']['seed']}, daemon options "
        f"`{json.dumps(res['settings']['fuzz_init_options'])}`): 3 in 4 messages well-formed with edge-case values "
        "(positions past the end of a line or document, mid-surrogate columns, CRLF, lone CR, NUL, binary and "
        "lone-surrogate text, unknown language ids, changes to unopened documents, odd settings), the others with "
        "ill-typed params, dropped keys, any-JSON values and byte-level damage (truncated or flipped bodies, random "
        "bytes, invalid UTF-8, batches, deep nesting, extra headers). Every request must be answered exactly once "
        "(a result or a JSON-RPC error; id null when the id cannot be known), never with an internal error, and a "
        "valid request after each case must be answered.",
        "",
        "Answers: " + ", ".join(f"`{k}` {v:,}" for k, v in fz["answers"].items())
        + f"; of the errors, {fz['null_id_responses']:,} with id null (parse errors, invalid requests). "
        f"{fz['seconds']:.0f} s; daemon RSS at the end {fz['rss_mb_end']} MB.",
        "",
    ]
    if fz["problems"]:
        lines += ["Problems:", ""] + [f"- `{p[:300]}`" for p in fz["problems"][:10]] + [""]
    if fz.get("failure"):
        lines += [f"Failure: `{fz['failure'][:500]}`", ""]
    lines += [
        "## Typing storm",
        "",
        "Each keystroke of re-typed regions (bench/fixtures, a Unicode-heavy file, eight documents holding "
        "tests/helpers.MEMO_TEXT twice) is an "
        "incremental didChange (UTF-16 ranges) followed by a fence request (answered synchronously); 60 % of "
        "keystrokes also request an inline completion at the cursor and half of the previous requests get a "
        "`$/cancelRequest`. Keys go round robin, but a document gets none while its typist pauses to think (a "
        "session delay of 0.3 s or more, as after a line), so a request can finish before its document changes. "
        "A result with items is stale when it arrives after the fence of a newer version of its "
        "document; every item must fit the text of the version it was requested for (same line, range around "
        "the cursor, extending the typed word). (Checked against a build with the version checks removed: that "
        "one is caught returning stale results.) The memorizing model is fast enough for results to come back "
        "at this rate; the embedded model mostly is not (its requests are superseded or dropped as stale), so "
        "its storm measures memory and latency: it runs twice as long and counts memory growth over its second "
        "half, because its RSS climbs for about a minute (the allocator's high-water mark for per-request logits "
        "of varying shape) and is flat after that.",
        "",
    ]
    for st in res["storms"]:
        lines += [
            f"- {st['model']}: {st['with_items']} results with items, {st['empty']} empty, errors {st['errors']}; "
            f"latency during the storm p50 {st['latency_storm_ms']['p50']} ms, p95 {st['latency_storm_ms']['p95']} ms; "
            f"drained {st['drain_s']} s after the last request; RSS (MB) over time: "
            + ", ".join(f"{t:.0f}s {mb}" for t, mb in st["rss_samples"][::5]) + ".",
        ] + [f"  - {e}" for e in st["examples"]]
    lines += ["", "## Faults", "", "| fault | ok | what the daemon did |", "|---|---|---|"]
    lines += [f"| {f['fault']} | {'yes' if f['ok'] else '**NO**'} | {f['detail'].replace('|', '/')} |"
              for f in res["faults"]]
    lines += ["", "## Safe defaults", "",
              "- TCP listens on 127.0.0.1 unless `--allow-remote` (tests/test_server.py, tests/test_reliability.py).",
              "- Weights load through safetensors only; the package has "
              + (f"these risky lines: {res['unsafe']}" if res["unsafe"] else
                 "no pickle, `torch.load`, `eval`, `exec`, `trust_remote_code` or dynamic import") + ".",
              "- Frames over 64 MiB are skipped unread; documents over 4 M characters are tracked without a syntax "
              "tree and not completed; at most 64 model jobs wait at once; at most 16 documents keep an encoded "
              "prefix resident.", ""]
    return "\n".join(lines)


def render(out: Path) -> None:
    """Rewrite reliability.md from reliability.json (after a change to the report's layout)."""
    (out / "reliability.md").write_text(report_md(json.loads((out / "reliability.json").read_text())))


def main(argv: list[str] | None = None) -> int:
    import argparse
    from datetime import datetime, timezone

    from bench import RESULTS, machine_info

    ap = argparse.ArgumentParser(prog="python -m bench.reliability", description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10_000, help="fuzz cases (default 10,000)")
    ap.add_argument("--seconds", type=float, default=60.0, help="typing storm duration (default 60)")
    ap.add_argument("--rate", type=float, default=50.0, help="completion requests per second in the storm")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", help="checkpoint for fuzzing and faults (default: a tiny random one)")
    ap.add_argument("--storm-model", help="checkpoint for the storm (default: the embedded model, else a memorizer)")
    ap.add_argument("--out", help="output directory (default bench/results)")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    work = ROOT / "bench" / "results" / "tmp" / "reliability"
    if work.exists():
        import shutil

        shutil.rmtree(work)
    work.mkdir(parents=True)
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:6.0f}s] {msg}", flush=True)

    machine = machine_info()
    fuzz_model, fuzz_desc, storm_models = _models(args.model, args.storm_model, log)
    log(f"fuzzing: {args.cases} cases")
    fz = fuzz(fuzz_model, args.cases, seed=args.seed, log_dir=work)
    log(f"fuzzing done: {fz['crashes']} crashes, {fz['problem_count']} problems in {fz['seconds']} s")

    storms = []
    for i, (path, desc) in enumerate(storm_models):
        # the embedded model's allocator takes about a minute of storm to reach its high-water mark (logits of
        # 64 x 8192 per row, shapes varying per request): twice as long a storm, half of it warm-up
        seconds = args.seconds if i == 0 else 2 * args.seconds
        warmup = None if i == 0 else seconds / 2
        log(f"typing storm ({desc}): {seconds:.0f} s at {args.rate}/s")
        d = RawDaemon("--model", str(path), stderr_path=work / f"daemon-storm-{path.name}.log")
        try:
            d.initialize()
            d.wait_ready()
            st = storm(d, seconds, rate=args.rate, seed=args.seed, warmup_s=warmup,
                       extra_sources=storm_memo_sources())
        finally:
            st["exit_code"] = d.close()
        st["model"] = desc
        storms.append(st)
        log(f"storm done: {st['stale']} stale, {st['inconsistent']} inconsistent of {st['with_items']} with items, "
            f"RSS {st['rss_growth_pct']} %")
    log("faults")
    fl = faults(fuzz_model, work / "faults")
    log(f"faults done: {sum(f['ok'] for f in fl)}/{len(fl)} as intended")
    res = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "seconds": round(time.perf_counter() - t0, 1),
        "machine": machine, "models": {"fuzz": fuzz_desc, "storm": [st["model"] for st in storms]},
        "settings": {"cases": args.cases, "storm_seconds": args.seconds, "rate": args.rate, "seed": args.seed,
                     "fuzz_init_options": FUZZ_INIT},
        "fuzz": fz, "storms": storms, "faults": fl, "unsafe": unsafe_code(),
    }
    home = str(Path.home())  # no machine paths in the reports
    scrub_paths = lambda t: t.replace(str(ROOT) + "/", "").replace(str(ROOT), ".").replace(home, "~")  # noqa: E731
    (out / "reliability.json").write_text(scrub_paths(json.dumps(res, indent=1, default=str)) + "\n")
    (out / "reliability.md").write_text(scrub_paths(report_md(res)))
    log(f"wrote {display_path(out / 'reliability.md')} and reliability.json")
    ok = (fz["crashes"] == 0 and fz["problem_count"] == 0 and all(f["ok"] for f in fl) and not res["unsafe"]
          and all(st["stale"] == 0 and st["inconsistent"] == 0 and st["unanswered"] == 0 for st in storms))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
