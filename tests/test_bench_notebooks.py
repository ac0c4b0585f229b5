"""bench.notebooks: cases cut from notebook cells, and both ways of playing them through the real daemon."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from bench import notebooks
from bench.heldout import Package

CELLS = [("code", "%matplotlib inline\nimport numpy as np\nvalues = np.linspace(0, 1, 50)\n"),
         ("markdown", "# Sum"), ("code", "total = values.sum()\nprint(total)\nvalues = np.linspace(0, 1, 50)\n")]


def _sdist() -> bytes:
    nb = {"cells": [{"cell_type": k, "metadata": {}, "source": t.splitlines(keepends=True)} for k, t in CELLS],
          "metadata": {"kernelspec": {"language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, body in (("pkg-1.0/docs/demo.ipynb", json.dumps(nb).encode()),
                           ("pkg-1.0/docs/r.ipynb", json.dumps({**nb, "metadata": {"kernelspec": {"language": "R"}}})
                            .encode()), ("pkg-1.0/pkg/x.py", b"x = 1\n")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return raw.getvalue()


PKG = Package("pkg", "1.0", "MIT", "pypi", "notebooks", "pkg-1.0.tar.gz", "0" * 64, notebooks.NOTEBOOK_ONLY,
              notebooks.NO_EXCLUDE, 4)


def test_cases_are_cut_from_code_cells_of_python_notebooks(monkeypatch):
    monkeypatch.setattr(notebooks, "fetch", lambda p: _sdist())
    data = notebooks.build((PKG,))
    assert list(data["notebooks"]) == ["pkg/docs/demo.ipynb"]  # the R notebook and the .py file are not cases
    cases = data["cases"]
    assert len(cases) == 4 and {c["kind"] for c in cases} == {"whole_line", "mid_line"}
    for c in cases:
        cells, doc, cursor = notebooks.case_cells(data, c)
        assert data["notebooks"][c["notebook"]][c["cell"]]["kind"] == "code" and c["cell"] in (0, 2)
        original = data["notebooks"][c["notebook"]][c["cell"]]["text"]
        assert doc[:cursor] + c["expected"] + doc[cursor:] == original  # the rest of the line was dropped
        assert cells[1]["text"] == "# Sum" and "%matplotlib" not in c["expected"]  # a magic is no line to type
    # the oracle: the last cell's linspace line stands in the first cell
    last = {"id": "x", "notebook": "pkg/docs/demo.ipynb", "cell": 2, "offset": len("total = values.sum()\nprint(total)\n"),
            "kind": "whole_line", "expected": "values = np.linspace(0, 1, 50)"}
    assert notebooks.verbatim_above(data, last)
    assert not notebooks.verbatim_above(data, {**last, "offset": 0, "expected": "total = values.sum()"})


def test_both_ways_through_the_daemon(tiny_model: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(notebooks, "fetch", lambda p: _sdist())
    monkeypatch.setattr(notebooks, "PACKAGES", (PKG,))
    out, dump = tmp_path / "nb.json", tmp_path / "nb.jsonl"
    res = notebooks.main(["--model", str(tiny_model), "--threads", "1", "--out", str(out), "--dump", str(dump)])
    assert json.loads(out.read_text()) == res and res["cases"] == 4
    for v in notebooks.VARIANTS:
        m = res["variants"][v]["all"]
        assert m["n"] == 4 and 0 <= m["exact"] <= m["shown"] <= 1 and m["latency_ms"]["p50"] > 0
        assert not any(r["error"] for r in map(json.loads, dump.read_text().splitlines()) if r["variant"] == v)
    assert set(res["paired"]) == {"right_only_with_the_notebook", "right_only_with_the_cell_alone",
                                  "right_only_with_the_folder", "right_only_without_the_folder"}
    assert str(Path(__file__).resolve().parent.parent) not in out.read_text()  # no machine paths
