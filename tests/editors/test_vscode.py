"""The VS Code extension (.vsix) in a real VS Code (code-server) driven by Chromium through Playwright:
ghost text from the daemon appears, Tab inserts exactly it, the status bar and "Show log" work."""

from __future__ import annotations

import json

import pytest

from .conftest import ROOT, make, tail

pytestmark = pytest.mark.editors


def test_vscode_ghost_text(model_dir: str) -> None:
    p = make("test-vscode", DG_MODEL=model_dir, timeout=2400)
    assert p.returncode == 0, tail(p)
    report = json.loads((ROOT / ".test-artifacts" / "vscode" / "result.json").read_text())
    failed = [c for c in report["checks"] if not c["ok"]]
    assert not failed, failed
    names = {c["name"] for c in report["checks"]}
    assert {"ghost text appears", "Tab inserts exactly the ghost text", "status bar shows ready"} <= names
    assert (ROOT / ".test-artifacts" / "vscode-ghost-text.png").stat().st_size > 10_000
