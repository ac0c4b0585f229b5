"""The shared daemon from outside (``python -m bench.shared``): memory of one vs five sessions, relay memory.

Through the clients tests/test_daemon.py uses (tests/lsp_client.py): ``dgcomplete daemon`` as a subprocess
(:class:`DaemonProcess`) and relays (``serve --shared``, :class:`RawDaemon`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.lsp_client import ROOT, DaemonProcess, RawDaemon, proc_rss_kb


def measure(model: str | None, sessions: int = 5, docs: int = 3) -> dict[str, Any]:
    """Daemon RSS with one session, then with ``sessions``, each with ``docs`` documents and a completion in
    each; the RSS of ``serve --shared`` relays, one per session."""
    import json
    import shutil
    import tempfile

    rt = Path(tempfile.mkdtemp(prefix="dgrt-"))
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
            r.initialize()
            for k in range(docs):
                uri = f"file:///measure/{i}/{k}.py"
                r.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                   "version": 1, "text": text}})
                got = r.request("textDocument/inlineCompletion", {"textDocument": {"uri": uri}, "position": {
                    "line": 5, "character": 11}, "context": {"triggerKind": 1}}, 120)
                assert got is not None and "result" in got, got
            rss.append(proc_rss_kb(d.proc.pid))
        out = {"ready": re.sub(r"unix:\S+:", "unix:<socket>:", ready.strip()), "daemon_rss_mb": [round(x / 1024, 1) for x in rss],
               "five_over_one": round(rss[-1] / rss[0], 3),
               "relay_rss_mb": [round(proc_rss_kb(r.pid) / 1024, 1) for r in relays]}
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
    ap.add_argument("--out", help="also write the JSON here (e.g. bench/results/shared.json)")
    a = ap.parse_args()
    res = measure(a.model, a.sessions)
    if a.out:
        from bench import machine_info

        Path(a.out).write_text(json.dumps({**res, "sessions": a.sessions, "machine": machine_info(),
                                           "command": "python -m bench.shared"}, indent=1) + "\n")
