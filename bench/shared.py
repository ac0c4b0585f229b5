"""The shared daemon from outside (``python -m bench.shared``): memory of one vs five sessions, relay memory.

Through the clients tests/test_daemon.py uses (tests/lsp_client.py): ``dgcomplete daemon`` as a subprocess
(:class:`DaemonProcess`) and relays (``serve --shared``, :class:`RawDaemon`). ``--folder-lines N``: every session
names one workspace folder (Python files of the training corpus, N lines; ``make corpus``) and opens its
documents there, as editor windows on one project do; the daemon's memory is taken once the folder is indexed.

    python -m bench.shared [--sessions 5] [--folder-lines 60000] [--out bench/results/shared.json]
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.lsp_client import ROOT, DaemonProcess, RawDaemon, proc_rss_kb


def write_folder(root: Path, corpus: Path, lines: int) -> dict[str, int]:
    """A project folder of corpus Python files holding about ``lines`` lines."""
    n = files = 0
    with corpus.open(encoding="utf-8") as f:
        for row in f:
            text = json.loads(row)["text"]
            if n >= lines:
                break
            (root / f"m{files:04d}.py").write_text(text, encoding="utf-8")
            n += text.count("\n") + 1
            files += 1
    return {"files": files, "lines": n}


def _indexed(r: RawDaemon, timeout: float = 120.0) -> int:
    """Lines of the session's workspace index once it is read (dgcomplete.stats)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = r.request("workspace/executeCommand", {"command": "dgcomplete.stats"}, 30) or {}
        ws = (got.get("result") or {}).get("workspace") or {}
        if ws.get("indexed") and not ws.get("scanning"):
            return sum(x["lines"] for x in ws["indexed"])
        time.sleep(0.1)
    raise RuntimeError("the workspace folder was not read")


def measure(model: str | None, sessions: int = 5, docs: int = 3, folder_lines: int = 0,
            corpus: str = "data/corpus/python.jsonl") -> dict[str, Any]:
    """Daemon RSS with one session, then with ``sessions``, each with ``docs`` documents and a completion in
    each; the RSS of ``serve --shared`` relays, one per session. ``folder_lines``: each session names the same
    workspace folder of that many lines."""
    import json
    import shutil
    import tempfile

    rt = Path(tempfile.mkdtemp(prefix="dgrt-"))
    folder: dict[str, Any] = {}
    proj = rt / "proj"
    if folder_lines:
        proj.mkdir()
        folder = write_folder(proj, Path(corpus), folder_lines)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(rt), "PYTHONPATH": str(ROOT)}
    model_args = ["--model", model] if model else []
    d = DaemonProcess(*model_args, "--socket", str(rt / "m.sock"), env=env, log=rt / "daemon.log")
    relays: list[RawDaemon] = []
    text = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return "
    try:
        ready = d.wait_ready(300)
        rss = []
        for i in range(sessions):
            r = RawDaemon("--shared", "--socket", str(rt / "m.sock"), env=env)
            relays.append(r)
            r.initialize(folders=[proj.as_uri()] if folder_lines else None)
            for k in range(docs):
                uri = (proj / f"open_{i}_{k}.py").as_uri() if folder_lines else f"file:///measure/{i}/{k}.py"
                r.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                   "version": 1, "text": text}})
                got = r.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri}, "position": {
                    "line": 5, "character": 11}, "context": {"triggerKind": 1}}, 120)
                assert got is not None and "result" in got, got
            if folder_lines:
                folder["indexed_lines"] = _indexed(r)
            rss.append(proc_rss_kb(d.proc.pid))
        out = {"ready": re.sub(r"unix:\S+:", "unix:<socket>:", ready.strip()), "daemon_rss_mb": [round(x / 1024, 1) for x in rss],
               "five_over_one": round(rss[-1] / rss[0], 3),
               "relay_rss_mb": [round(proc_rss_kb(r.pid) / 1024, 1) for r in relays]}
        if folder_lines:
            out["workspace_folder"] = folder
        print(json.dumps(out, indent=1))
        return out
    finally:
        for r in relays:
            r.close()
        d.stop()
        shutil.rmtree(rt, ignore_errors=True)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=measure.__doc__)
    ap.add_argument("--model", help="checkpoint (default: the embedded model)")
    ap.add_argument("--sessions", type=int, default=5)
    ap.add_argument("--folder-lines", type=int, default=0, help="one workspace folder of this many lines for all")
    ap.add_argument("--corpus", default="data/corpus/python.jsonl")
    ap.add_argument("--out", help="also write the JSON here (e.g. bench/results/shared.json)")
    a = ap.parse_args()
    res = measure(a.model, a.sessions, folder_lines=a.folder_lines, corpus=a.corpus)
    if a.out:
        from bench import machine_info

        cmd = "python -m bench.shared" + (f" --folder-lines {a.folder_lines}" if a.folder_lines else "")
        Path(a.out).write_text(json.dumps({**res, "sessions": a.sessions, "machine": machine_info(),
                                           "command": cmd}, indent=1) + "\n")
