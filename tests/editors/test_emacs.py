"""dgcomplete in a real Emacs (Debian 12's 28.2, batch) against the real daemon: editors/emacs/dgcomplete.el's ghost
text (typed through the command loop, TAB, word by word, multi-line, the daemon's copy in step, Repair syntax on a
region), and through the two LSP clients, eglot 1.9 and lsp-mode 8.0, the completion item kept for the typed word
and inserted by C-M-i and by company, and Repair syntax through the client's code actions, confined to the region."""

from __future__ import annotations

import json

import pytest

from .conftest import ROOT, make, tail

pytestmark = pytest.mark.editors


CHECKS = {
    "ghost": {"ghost text appears", "TAB inserts exactly the ghost text", "the daemon counted the accept",
              "the rest stays shown", "multi-line text inserted",
              "the daemon's copy agrees (the item starts at the typed word)", "Repair syntax applied",
              "outside the selection unchanged", "a stale edit is refused", "through a shared daemon: ghost text"},
    "eglot": {"one item survives the typed symbol's filter", "C-M-i inserts the suggestion's first line",
              "company's pick inserts the item's textEdit", "outside the selection unchanged",
              "the repaired file parses"},
}
CHECKS["lsp-mode"] = CHECKS["eglot"] | {"company's pick ran the item's command (the server counted the accept)"}


def test_emacs(model_dir: str) -> None:
    p = make("test-emacs", DG_MODEL=model_dir, timeout=900)
    assert p.returncode == 0, tail(p)
    for client, wanted in CHECKS.items():
        results = sorted((ROOT / ".test-artifacts").glob(f"emacs-*-{client}/result.json"))
        assert results, tail(p)
        report = json.loads(results[-1].read_text())
        assert report["ok"] is True, report
        names = {c["name"] for c in report["checks"] if c["ok"] is True}
        assert wanted <= names, (client, wanted - names)
