"""dgcomplete in a real Emacs (Debian 12's 28.2, batch) through its two LSP clients, eglot 1.9 and lsp-mode 8.0,
against the real daemon: the completion item kept for the typed word and inserted by C-M-i and by company,
and Repair syntax through the client's code actions, confined to the region."""

from __future__ import annotations

import json

import pytest

from .conftest import ROOT, make, tail

pytestmark = pytest.mark.editors


def test_emacs_completion_item_and_repair(model_dir: str) -> None:
    p = make("test-emacs", DG_MODEL=model_dir, timeout=900)
    assert p.returncode == 0, tail(p)
    for client in ("eglot", "lsp-mode"):
        results = sorted((ROOT / ".test-artifacts").glob(f"emacs-*-{client}/result.json"))
        assert results, tail(p)
        report = json.loads(results[-1].read_text())
        assert report["ok"] is True, report
        names = {c["name"] for c in report["checks"] if c["ok"] is True}
        assert {"one item survives the typed symbol's filter", "C-M-i inserts the suggestion's first line",
                "company's pick inserts the item's textEdit", "outside the selection unchanged",
                "the repaired file parses"} <= names, names
