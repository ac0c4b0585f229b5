"""Completion in Jupyter notebook cells, through the real daemon: the notebook in view against the cell alone.

    python -m bench.notebooks [--n N] [--model DIR] [--threads N] [--dump FILE.jsonl] [--out bench/results/notebooks.json]

Each case is a line of a code cell of a real notebook, cut as :mod:`bench.heldout` cuts lines of files (a whole
line removed with the cursor at its indentation, or a line cut inside; the rest of that line is dropped). The
notebook is then played to the daemon in two ways, one daemon per way, an Automatic inline request in the cell:

* ``notebook``: LSP 3.17 notebook sync (``notebookDocument/didOpen`` with every cell), what VS Code's client
  sends since the server advertises it: the cell is completed with the notebook's other code cells in view;
* ``cells``: every code cell opened as a text document of its own, what a client gets that sends cells as
  documents (the server without notebook sync; a selector on the cell scheme): the other cells are other open
  documents, which retrieval reads, but the model sees the cell alone;
* ``notebook_folder``: as ``notebook``, with the package's notebooks written out as a project folder, named the
  workspace folder, and the notebook opened as its file there: retrieval also reads the other notebooks' code
  cells (the open notebook's own file is hidden while it is open, as an open file's always is).

Before the server took notebooks, cells got nothing at all (0 %). Scored as :mod:`bench.context` scores
(``exact`` first line, ``shown``, ``precision``, ``parse_rate`` of the cell after the edit).

Sources: the example notebooks in the PyPI sdists of packages that are in neither corpus manifest nor reserved
(checked by :func:`bench.heldout.check_clean`), pinned by sha256 and cached in ``data/heldout-src``:
hvplot 0.12.2 (BSD-3-Clause, its gallery and user guide), geoviews 1.16.0 (BSD-3-Clause, examples), emcee 3.1.6
(MIT, tutorials), corner 2.3.0 (BSD-2-Clause, docs). Python notebooks only; cells that do not parse even with
their magics read as comments are not cut. Nothing is tuned on these cases: they only report.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from dgcomplete.notebooks import neutral, read_ipynb

from . import ROOT, Timer, emit, machine_info, model_info, resolve_model, write_jsonl
from .context import (
    OptionsDaemon,
    _folders_read,
    ask_with_stats,
    code_version,
    metrics,
    score_request,
)
from .context import verbatim_above as context_verbatim_above
from .heldout import (
    MAX_LINE,
    MID_IDENT_SHARE,
    Package,
    check_clean,
    code_lines,
    cut_points,
    fetch,
    member_path,
)

NOTEBOOK_ONLY = r"\.ipynb$"
NO_EXCLUDE = r"(?!)"  # examples and docs are where the notebooks are
PACKAGES = (
    Package("hvplot", "0.12.2", "BSD-3-Clause", "pypi", "notebooks", "hvplot-0.12.2.tar.gz",
            "9e29bbe65f94937d4eeaeccf33566540df936c8f9aeadfa12ea9f306d5237938", NOTEBOOK_ONLY, NO_EXCLUDE, 100),
    Package("geoviews", "1.16.0", "BSD-3-Clause", "pypi", "notebooks", "geoviews-1.16.0.tar.gz",
            "7ce377c3a7aedc1aaf1a97f412be514d9bc426acfbe671d703b369a2b99a1784", NOTEBOOK_ONLY, NO_EXCLUDE, 100),
    Package("emcee", "3.1.6", "MIT", "pypi", "notebooks", "emcee-3.1.6.tar.gz",
            "11af4daf6ab8f9ca69681e3c29054665db7bbd87fd4eb8e437d2c3a1248c637d", NOTEBOOK_ONLY, NO_EXCLUDE, 50),
    Package("corner", "2.3.0", "BSD-2-Clause", "pypi", "notebooks", "corner-2.3.0.tar.gz",
            "685ecb1e778809b78c6783f4a4691d023bbd9f781c9efda683c2b793878b561c", NOTEBOOK_ONLY, NO_EXCLUDE, 50),
)
SEED = 22
VARIANTS = ("notebook", "cells", "notebook_folder")


# ---- cases --------------------------------------------------------------------------------------------------------
def notebook_cells(raw: bytes) -> list[dict[str, Any]] | None:
    """A Python notebook's cells as {kind: code|markdown, text}; None if it is not a Python notebook (or has no
    code)."""
    cells = read_ipynb(raw)
    if not cells or cells[0].language_id != "python" or not any(c.code and c.text.strip() for c in cells):
        return None
    return [{"kind": "code" if c.code else "markdown", "text": c.text} for c in cells]


def source_notebooks(p: Package, data: bytes) -> list[tuple[str, list[dict[str, Any]]]]:
    import re

    out = []
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar.getmembers():
            path = member_path(p, m.name)
            if m.isfile() and re.search(p.include, path) and not re.search(p.exclude, path):
                cells = notebook_cells(tar.extractfile(m).read())  # type: ignore[union-attr]
                if cells is not None:
                    out.append((path, cells))
    return sorted(out)


def build(packages: tuple[Package, ...] = PACKAGES, seed: int = SEED) -> dict[str, Any]:
    """The notebooks and the cases cut from their code cells, deterministic for a seed."""
    rng = random.Random(f"{seed}:notebooks")
    notebooks: dict[str, list[dict[str, Any]]] = {}
    cases: list[dict[str, Any]] = []
    for p in packages:
        lines = []
        for path, cells in source_notebooks(p, fetch(p)):
            nid = f"{p.name}/{path}"
            notebooks[nid] = cells
            for ci, c in enumerate(cells):
                if c["kind"] != "code":
                    continue
                for _ls, cs, le in code_lines(neutral(c["text"], "python"), "python") or []:
                    if le - cs <= MAX_LINE:
                        lines.append((nid, ci, cs, le))
        rng.shuffle(lines)
        made = 0
        for nid, ci, cs, le in lines:
            if made >= p.cases:
                break
            text = notebooks[nid][ci]["text"]
            kind = "whole_line" if made % 2 == 0 else "mid_line"
            off = cs
            if kind == "mid_line":
                bounds, mids = cut_points(text[cs:le].rstrip())
                pool = mids if mids and (rng.random() < MID_IDENT_SHARE or not bounds) else bounds
                if not pool:
                    continue
                off = cs + rng.choice(pool)
            cases.append({"id": f"nb-{len(cases):04d}", "package": p.name, "notebook": nid, "cell": ci, "offset": off,
                          "kind": kind, "expected": text[off:le].rstrip()})
            made += 1
    used = {c["notebook"] for c in cases}
    return {"seed": seed, "packages": [{"name": p.name, "version": p.version, "license": p.license,
                                        "source": p.source, "sha256": p.sha256,
                                        "notebooks": sum(n.startswith(p.name + "/") for n in notebooks),
                                        "with_cases": sum(n.startswith(p.name + "/") for n in used)}
                                       for p in packages],
            "notebooks": notebooks, "cases": cases}


def write_folder(data: dict[str, Any], root: Path) -> Path:
    """Every notebook of the cases' packages as an .ipynb file under ``root`` (code and Markdown cells, no
    outputs): the project folder of the ``notebook_folder`` variant."""
    for nid, cells in data["notebooks"].items():
        path = root / nid
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"cells": [{"cell_type": c["kind"], "metadata": {}, "source": c["text"]}
                                              for c in cells],
                                    "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                                    "nbformat": 4, "nbformat_minor": 5}))
    return root


def case_cells(data: dict[str, Any], case: dict[str, Any]) -> tuple[list[dict[str, Any]], str, int]:
    """The notebook's cells with the case's cell cut at the cursor (the rest of its line dropped), that cell's
    text, and the cursor's offset in it."""
    cells = [dict(c) for c in data["notebooks"][case["notebook"]]]
    text, off = cells[case["cell"]]["text"], case["offset"]
    eol = text.find("\n", off)
    cells[case["cell"]]["text"] = text[:off] + (text[eol:] if eol >= 0 else "")
    return cells, cells[case["cell"]]["text"], off


def verbatim_above(data: dict[str, Any], case: dict[str, Any]) -> bool:
    """The oracle (:func:`bench.context.verbatim_above`): the case's whole line stands verbatim above it, in its
    cell or in a code cell above."""
    cells = data["notebooks"][case["notebook"]]
    above = "".join(c["text"] + "\n" for c in cells[: case["cell"]] if c["kind"] == "code")
    return context_verbatim_above(above + cells[case["cell"]]["text"], len(above) + case["offset"], case["expected"])


# ---- playing a case --------------------------------------------------------------------------------------------
def _cell_uri(case_id: str, i: int) -> str:
    return f"vscode-notebook-cell:/bench/{case_id}.ipynb#C{i}"


async def run_cases(daemon: OptionsDaemon, data: dict[str, Any], cases: list[dict[str, Any]], variant: str,
                    folder: Path | None = None) -> list[dict[str, Any]]:
    """Play every case (and the first once more as a warm-up, not counted); one record per request. With
    ``folder`` the notebook is opened as its file there, once the daemon has read the folder."""
    client = daemon.client
    out = []
    for i, case in enumerate([cases[0], *cases] if cases else []):
        warmup = i == 0
        cid = case["id"] + ("-warmup" if warmup else "")
        cells, doc, cursor = case_cells(data, case)
        nb_uri = (folder / case["notebook"]).resolve().as_uri() if folder else f"file:///bench/{cid}.ipynb"
        code = [j for j, c in enumerate(cells) if c["kind"] == "code"]
        if variant.startswith("notebook"):
            client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
                notebook_document=lsp.NotebookDocument(uri=nb_uri, notebook_type="jupyter-notebook", version=1, cells=[
                    lsp.NotebookCell(kind=lsp.NotebookCellKind.Code if c["kind"] == "code" else lsp.NotebookCellKind.Markup,
                                     document=_cell_uri(cid, j)) for j, c in enumerate(cells)]),
                cell_text_documents=[lsp.TextDocumentItem(uri=_cell_uri(cid, j), version=1, text=c["text"],
                                                          language_id="python" if c["kind"] == "code" else "markdown")
                                     for j, c in enumerate(cells)]))
        else:  # the cell last, so that it is the most recent document
            for j in [*(j for j in code if j != case["cell"]), case["cell"]]:
                client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
                    uri=_cell_uri(cid, j), language_id="python", version=1, text=cells[j]["text"])))
        if folder is not None:
            await _folders_read(daemon)
        rec: dict[str, Any] = {"id": case["id"], "variant": variant, "package": case["package"], "lang": "python",
                               "family": "python", "kind": case["kind"], "expected": case["expected"], "shown": False,
                               "text": "", "exact": False, "parses": None, "error": "", "items": 0,
                               "any_exact": False}
        items, rec["ms"], rec["error"], last = await ask_with_stats(daemon, _cell_uri(cid, case["cell"]), doc, cursor)
        if variant.startswith("notebook"):
            client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
                notebook_document=lsp.NotebookDocumentIdentifier(nb_uri),
                cell_text_documents=[lsp.TextDocumentIdentifier(_cell_uri(cid, j)) for j in range(len(cells))]))
        else:
            for j in code:
                client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(
                    _cell_uri(cid, j))))
        if warmup:
            continue
        # a notebook's layout parses with its magics and shell lines made neutral
        score_request(rec, items, last, doc, cursor, case["expected"], "python", parse_doc=neutral(doc, "python"))
        rec["committed_tokens"] = rec["expected_tokens"] = None
        rec["baseline_prev"] = None
        rec["verbatim_above"] = verbatim_above(data, case)
        out.append(rec)
    return out


async def run(model: Path, data: dict[str, Any], cases: list[dict[str, Any]], threads: int | None,
              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out: dict[str, Any] = {}
    every: list[dict[str, Any]] = []
    log_dir = Path(tempfile.mkdtemp(prefix="dgnotebooks-"))
    for variant in VARIANTS:
        folder = write_folder(data, log_dir / "project") if variant == "notebook_folder" else None
        d = OptionsDaemon(model, threads=threads, log_dir=log_dir, folders=[folder] if folder else None)
        t = Timer()
        await d.start()
        try:
            recs = await run_cases(d, data, cases, variant, folder)
        finally:
            await d.stop()
        m = metrics(recs)
        m.pop("baselines", None)
        by_kind = {k: metrics([r for r in recs if r["kind"] == k]) for k in ("whole_line", "mid_line")}
        by_pkg = {p: metrics([r for r in recs if r["package"] == p]) for p in sorted({r["package"] for r in recs})}
        for g in (*by_kind.values(), *by_pkg.values()):
            g.pop("baselines", None)
        out[variant] = {"wall_s": round(t.s, 1), "all": m, "by_kind": by_kind, "by_package": by_pkg}
        every += recs
        print(f"bench.notebooks: {variant}: n={m['n']} exact={m['exact']} shown={m['shown']} "
              f"precision={m['precision']} parse={m['parse_rate']} p50={m['latency_ms']['p50']} ms", file=sys.stderr)
    return out, every


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--n", type=int, help="the first N cases only (a smoke run)")
    ap.add_argument("--dump", help="one JSON line per request")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "notebooks.json"))
    a = ap.parse_args(argv)
    check_clean(PACKAGES)
    data = build(PACKAGES)
    cases = data["cases"][: a.n] if a.n else data["cases"]
    model = resolve_model(a.model)
    from dgcomplete.model import load_model

    variants, recs = asyncio.run(run(model, data, cases, a.threads))
    if a.dump:
        write_jsonl(a.dump, recs)
    both: dict[str, list[bool]] = {r["id"]: [] for r in recs}  # [notebook, cells, notebook_folder]
    for r in recs:
        both[r["id"]].append(r["exact"])
    res = {
        "bench": "notebooks",
        "command": "python -m bench.notebooks" + (f" --n {a.n}" if a.n else ""),
        "what": "a line of a code cell of a real notebook cut (whole line or inside it), one Automatic inline request "
                "in the cell: 'notebook' plays the notebook with LSP notebook sync (the cell completed with the other "
                "code cells in view), 'cells' opens every code cell as a document of its own (the model sees the "
                "cell alone; retrieval reads the other cells as open documents), 'notebook_folder' plays the notebook "
                "with the package's notebooks as the workspace folder (its own file hidden while open); before "
                "notebook sync cells got nothing",
        "date": time.strftime("%Y-%m-%d"),
        "model": model_info(load_model(model)),
        "machine": machine_info(),
        "code": code_version(),
        "settings": "defaults (the shipped gate), one Automatic request per case",
        "packages": data["packages"],
        "cases": len(cases),
        "by_kind_cases": {k: sum(c["kind"] == k for c in cases) for k in ("whole_line", "mid_line")},
        "verbatim_in_cells_above": round(sum(r["verbatim_above"] for r in recs if r["variant"] == "notebook")
                                         / max(1, len(cases)), 4),
        "paired": {"right_only_with_the_notebook": sum(v[:2] == [True, False] for v in both.values()),
                   "right_only_with_the_cell_alone": sum(v[:2] == [False, True] for v in both.values()),
                   "right_only_with_the_folder": sum(v[2:] == [True] and not v[0] for v in both.values()),
                   "right_only_without_the_folder": sum(v[2:] == [False] and v[0] for v in both.values())},
        "variants": variants,
    }
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
