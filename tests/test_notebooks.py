"""Notebooks (Jupyter in VS Code): a cell is completed and rewritten with the notebook's other code cells in view.

The layout is checked as data; the rest against the real daemon over stdio, with LSP 3.17's notebook messages
as VS Code's language client sends them (cells in ``notebookDocument/*``, requests on the cells' own URIs).
"""

from __future__ import annotations

import random

import pytest

from dgcomplete.notebooks import Cell, key_of, layouts, neutral
from dgcomplete.syntax.document import changed_span

from .lsp_client import RawDaemon

NB = "file:///work/analysis.ipynb"


def _cell(i: int) -> str:
    return f"vscode-notebook-cell:/work/analysis.ipynb#W{i}sZmlsZQ%3D%3D"


# ---- the layout -------------------------------------------------------------------------------------------------
def test_code_cells_of_one_language_are_laid_out_in_order_with_whole_lines():
    cells = [Cell("a", "python", "import os\nx = 1"), Cell("m", "markdown", "# Title", code=False),
             Cell("b", "python", "y = 2\r\nz = 3\n"), Cell("s", "sql", "select 1"), Cell("c", "python", "")]
    lays = layouts(NB, cells)
    assert set(lays) == {"python"}  # sql has no grammar here; markdown is no code
    py = lays["python"]
    assert py.key == key_of(NB, "python") and py.key.startswith(NB + "#")
    assert py.text == "import os\nx = 1\n\ny = 2\r\nz = 3\n\n\n"
    assert py.cells == {"a": (0, 2), "b": (3, 3), "c": (7, 1)}
    lines = py.text.replace("\r\n", "\n").split("\n")
    for uri, (first, n) in py.cells.items():
        own = next(c.text for c in cells if c.uri == uri).replace("\r\n", "\n").split("\n")
        assert lines[first : first + n] == own


def test_magics_and_shell_escapes_read_as_comments_of_the_same_length():
    text = ("%matplotlib inline\n!pip install x\nif x:\n    %time f()\ny = a % b\n%%timeit\n"
            "s = ('%s-%s'\n     % (a, b))\n")
    out = neutral(text, "python")
    assert out == ("#matplotlib inline\n#pip install x\nif x:\n    #time f()\ny = a % b\n#%timeit\n"
                   "s = ('%s-%s'\n     % (a, b))\n")
    assert len(out) == len(text) and neutral(text, "javascript") == text


@pytest.mark.parametrize("old,new", [
    ("abc", "abXc"), ("abc", "ac"), ("", "x"), ("x", ""), ("same", "same"), ("a\r\nb", "a\nb"),
    ("a\r\nb", "a\r\r\nb"), ("aaa", "aaaa"), ("x\r\n", "x\r\ny\r\n"),
])
def test_one_change_turns_the_old_layout_into_the_new(old, new):
    a, b, ins = changed_span(old, new)
    assert old[:a] + ins + old[b:] == new and 0 <= a <= b <= len(old)
    assert not (0 < a < len(old) and old[a - 1] == "\r" and old[a] == "\n")  # never inside a CRLF
    assert not (0 < b < len(old) and old[b - 1] == "\r" and old[b] == "\n")


def test_one_change_for_random_edits_with_line_breaks_of_every_kind():
    rnd = random.Random(0)
    for _ in range(2000):
        old = "".join(rnd.choice("ab\r\n") for _ in range(rnd.randint(0, 40)))
        new = list(old)
        for _ in range(rnd.randint(0, 3)):
            i = rnd.randint(0, len(new))
            if rnd.random() < 0.5 and new:
                del new[min(i, len(new) - 1)]
            else:
                new.insert(i, rnd.choice("ab\r\n"))
        a, b, ins = changed_span(old, "".join(new))
        assert old[:a] + ins + old[b:] == "".join(new), (old, new)
        assert not any(0 < k < len(old) and old[k - 1] == "\r" and old[k] == "\n" for k in (a, b)), (old, new)


# ---- the daemon -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nb(tiny_model, tmp_path_factory):
    # document drafts only and no gate: what is shown is what the notebook's cells say, not the tiny model
    log = tmp_path_factory.mktemp("logs") / "daemon.log"
    d = RawDaemon("--model", str(tiny_model), "--threads", "1", stderr_path=log)
    d.init_result = d.initialize({"contextSources": ["document"], "minConfidence": 0}, capabilities={
        "textDocument": {"inlineCompletion": {}, "synchronization": {}},
        "notebookDocument": {"synchronization": {}},
        "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
        "general": {"positionEncodings": ["utf-16"]}})
    d.wait_ready()
    yield d
    assert d.close() == 0


CELLS = ["%matplotlib inline\nimport pandas as pd\n", "# Notes", "frame = pd.read_csv(path)\n"
         "summary = frame.describe(include='all')\n", "summ"]


def _open_notebook(d: RawDaemon, cells=CELLS) -> None:
    d.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": NB, "notebookType": "jupyter-notebook", "version": 1, "cells": [
            {"kind": 1 if text.startswith("# ") else 2, "document": _cell(i)} for i, text in enumerate(cells)]},
        "cellTextDocuments": [{"uri": _cell(i), "languageId": "markdown" if text.startswith("# ") else "python",
                               "version": 1, "text": text} for i, text in enumerate(cells)]})


def _edit_cell(d: RawDaemon, i: int, version: int, line: int, col: int, end_col: int, text: str) -> None:
    d.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": NB, "version": version},
        "change": {"cells": {"textContent": [{"document": {"uri": _cell(i), "version": version}, "changes": [
            {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": end_col}},
             "text": text}]}]}}})


def _ask(d: RawDaemon, i: int, line: int, col: int) -> dict:
    r = d.request("textDocument/inlineCompletion", {"textDocument": {"uri": _cell(i)},
                                                    "position": {"line": line, "character": col},
                                                    "context": {"triggerKind": 1}}, 60)
    assert r is not None, "no answer"
    return r


def test_a_cell_is_completed_from_the_cells_above_it(nb):
    assert nb.init_result["capabilities"]["notebookDocumentSync"]["notebookSelector"] == [{"notebook": "*"}]
    _open_notebook(nb)
    items = _ask(nb, 3, 0, 4)["result"]["items"]
    # the line two cells up, in the last cell's own coordinates (its line 0, not the layout's)
    assert {"insertText": "summary = frame.describe(include='all')",
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}}}.items() <= \
        next(i for i in items if i["insertText"].startswith("summary")).items(), items

    # an edit in an earlier cell is seen by the next request in a later one
    _edit_cell(nb, 2, 2, 1, 33, 38, "'number'")
    items = _ask(nb, 3, 0, 4)["result"]["items"]
    assert "summary = frame.describe(include='number')" in [i["insertText"] for i in items], items

    # a cell added on top moves every cell down in the layout: positions still map to their own cells
    new = _cell(9)
    nb.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": NB, "version": 3},
        "change": {"cells": {"structure": {"array": {"start": 0, "deleteCount": 0, "cells": [
            {"kind": 2, "document": new}]}, "didOpen": [
            {"uri": new, "languageId": "python", "version": 1, "text": "import numpy as np\nsumming = np.sum\n"}]}}}})
    items = _ask(nb, 3, 0, 4)["result"]["items"]
    assert items and all(i["range"]["start"]["line"] == 0 for i in items), items
    err = _ask(nb, 3, 5, 0)["error"]  # the cell has one line, whatever the layout holds below it
    assert err["code"] == -32602 and "past the end" in err["message"] and "(1 lines)" in err["message"]

    # a markdown cell gets nothing (and no error); a closed notebook's cells are unknown documents
    assert _ask(nb, 1, 0, 7)["result"]["items"] == []
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": NB}, "cellTextDocuments": [
        {"uri": _cell(i)} for i in (0, 1, 2, 3, 9)]})
    err = _ask(nb, 3, 0, 4)["error"]
    assert err["code"] == -32602 and "unknown document" in err["message"]
    assert nb.ping() is not None


def test_a_cell_is_repaired_in_its_own_coordinates_and_version(nb):
    cells = ["import math\n", "def area(r):\n    return math.pi * r ** 2\n", "print(area(2.0)\n"]
    _open_notebook(nb, cells)
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 15}}
    r = nb.request("textDocument/codeAction", {"textDocument": {"uri": _cell(2)}, "range": rng,
                                               "context": {"diagnostics": []}}, 60)
    listed = {a["title"]: a for a in r["result"]}
    assert "dgcomplete: Repair syntax" in listed, r  # the cell's error, read in the notebook's layout
    cmd = listed["dgcomplete: Repair syntax"]["command"]["arguments"][0]
    assert (cmd["uri"], cmd["version"], cmd["range"]) == (_cell(2), 1, rng)
    n = len(nb.server_requests)
    r = nb.request("workspace/executeCommand", {"command": "dgcomplete.repairSyntax", "arguments": [
        {"uri": _cell(2), "version": 1, "range": {"start": {"line": 0, "character": 0},
                                                  "end": {"line": 0, "character": 15}}}]}, 120)
    assert r is not None and "result" in r, r
    edits = [m["params"]["edit"] for m in list(nb.server_requests)[n:] if m["method"] == "workspace/applyEdit"]
    assert len(edits) == 1, r  # the raw client answers applied: false
    change = edits[0]["documentChanges"][0]
    assert change["textDocument"] == {"uri": _cell(2), "version": 1}
    (e,) = change["edits"]
    line = "print(area(2.0)"
    s, t = e["range"]["start"], e["range"]["end"]
    assert s["line"] == t["line"] == 0  # the cell's line, not the layout's line 7
    fixed = line[: s["character"]] + e["newText"] + line[t["character"] :]
    assert e["newText"] == ")" and s == t, e  # the one missing token, where the (random) model ranks it
    compile(fixed, "cell", "exec")

    # a range past the cell's end stops at its end: the next cell's error is not the cell's to repair
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": NB}, "cellTextDocuments": [
        {"uri": _cell(i)} for i in range(3)]})
    _open_notebook(nb, ["print(area(2.0)\n", "x = (1,\n", "y = 2\n"])
    n = len(nb.server_requests)
    r = nb.request("workspace/executeCommand", {"command": "dgcomplete.repairSyntax", "arguments": [
        {"uri": _cell(0), "version": 1, "range": {"start": {"line": 0, "character": 0},
                                                  "end": {"line": 50, "character": 0}}}]}, 120)
    assert r is not None and "result" in r, r
    for m in list(nb.server_requests)[n:]:
        for change in m["params"]["edit"]["documentChanges"]:
            assert change["textDocument"]["uri"] == _cell(0)
            assert all(e["range"]["end"]["line"] <= 1 for e in change["edits"]), change  # the cell's 2 lines
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": NB}, "cellTextDocuments": [
        {"uri": _cell(i)} for i in range(3)]})
    _open_notebook(nb, cells)

    # a request for an older version of the cell changes nothing
    _edit_cell(nb, 2, 2, 0, 0, 0, "x = 1; ")
    r = nb.request("workspace/executeCommand", {"command": "dgcomplete.repairSyntax", "arguments": [
        {"uri": _cell(2), "version": 1, "range": {"start": {"line": 0, "character": 0},
                                                  "end": {"line": 0, "character": 15}}}]}, 120)
    assert r is not None and r["error"]["code"] == -32801, r
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": NB}, "cellTextDocuments": [
        {"uri": _cell(i)} for i in range(3)]})


def test_notebook_messages_that_make_no_sense_lose_nothing(nb):
    """Changes to a notebook never opened, a cell that is in no notebook, a closed one closed again, broken
    params: logged, and the daemon answers on."""
    ghost = "file:///work/ghost.ipynb"
    nb.notify("notebookDocument/didChange", {"notebookDocument": {"uri": ghost, "version": 2}, "change": {
        "cells": {"textContent": [{"document": {"uri": _cell(7), "version": 2}, "changes": [{"text": "x"}]}]}}})
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": ghost}, "cellTextDocuments": []})
    nb.notify("notebookDocument/didOpen", {"notebookDocument": {"uri": NB}})  # no cells, no version
    _open_notebook(nb, ["a = 1\n", "b = a"])
    nb.notify("notebookDocument/didChange", {"notebookDocument": {"uri": NB, "version": 2}, "change": {
        "cells": {"textContent": [{"document": {"uri": _cell(8), "version": 2}, "changes": [{"text": "zzz"}]}]}}})
    r = _ask(nb, 1, 0, 5)
    assert "result" in r, r
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": NB}, "cellTextDocuments": [
        {"uri": _cell(i)} for i in range(2)]})
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": NB}, "cellTextDocuments": [
        {"uri": _cell(i)} for i in range(2)]})
    assert nb.ping() is not None and nb.alive()


def test_a_notebook_opened_while_the_model_loads_is_completed_once_it_is_there(tiny_model, tmp_path):
    d = RawDaemon("--model", str(tiny_model), "--threads", "1", stderr_path=tmp_path / "daemon.log")
    try:
        d.initialize({"contextSources": ["document"], "minConfidence": 0}, capabilities={
            "textDocument": {"inlineCompletion": {}}, "notebookDocument": {"synchronization": {}}})
        _open_notebook(d)  # arrives while the model loads
        _edit_cell(d, 3, 2, 0, 4, 4, "ary = frame.desc")
        items = _ask(d, 3, 0, 20)["result"]["items"]  # the item replaces the word being typed ("desc")
        assert ("describe(include='all')", 16) in [(i["insertText"], i["range"]["start"]["character"])
                                                    for i in items], items
    finally:
        d.close()


def test_a_shared_server_sees_the_cells_around_the_cell(tmp_path):
    """With the remote backend (vLLM/SGLang) the prompt's prefix and suffix are the notebook's, not the cell's."""
    import json

    from .fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer(default_text="frame.describe()") as fake:
        d = RawDaemon("--local-model", str(tmp_path / "none"), "--backend", "openai", "--url", fake.url,
                      "--remote-model", fake.model, stderr_path=tmp_path / "daemon.log")
        try:
            d.initialize({}, capabilities={"textDocument": {"inlineCompletion": {}},
                                           "notebookDocument": {"synchronization": {}}})
            _open_notebook(d, ["import pandas as pd\nframe = pd.read_csv(path)\n", "# Notes",
                               "summary = ", "plot = summary.plot()\n"])
            items = _ask(d, 2, 0, 10)["result"]["items"]
            assert items and items[0]["insertText"] == "frame.describe()", items
            assert items[0]["range"]["start"] == {"line": 0, "character": 10}  # the cell's line 0
            prompt = json.dumps(fake.completion_requests[-1].body)
            assert "frame = pd.read_csv(path)" in prompt and "plot = summary.plot()" in prompt, prompt
            assert "# Notes" not in prompt  # Markdown is no code
        finally:
            assert d.close() == 0


def test_random_notebook_traffic_is_answered_and_stays_in_step(nb):
    """200 random notebook messages (cells added, removed, moved, edited, retyped as Markdown; some of them
    nonsense) with requests between them: every request is answered, and a code cell's item is always in that
    cell's own lines."""
    rnd = random.Random(7)
    uri = "file:///work/fuzz.ipynb"
    texts: dict[str, str] = {}
    order: list[str] = []
    version = 1

    def cell_uri() -> str:
        return f"vscode-notebook-cell:/work/fuzz.ipynb#F{rnd.randrange(10**6)}"

    def line() -> str:
        return rnd.choice(["x = 1", "import os", "%time f()", "y = x + 1", "def f(a):", "    return a", "", "é = 'ü'"])

    first = [cell_uri() for _ in range(3)]
    for c in first:
        texts[c] = "\n".join(line() for _ in range(rnd.randint(1, 4)))
        order.append(c)
    nb.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": uri, "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": 2, "document": c} for c in order]},
        "cellTextDocuments": [{"uri": c, "languageId": "python", "version": 1, "text": texts[c]} for c in order]})
    asked = 0
    for _ in range(200):
        version += 1
        op = rnd.random()
        if op < 0.45 and order:  # an edit inside a cell
            c = rnd.choice(order)
            lines = texts[c].split("\n")
            ln = rnd.randrange(len(lines))
            col = rnd.randint(0, len(lines[ln]))
            new = rnd.choice(["a", "\n", "(", " = ", "\n    z", ""])
            end = min(len(lines[ln]), col + rnd.randint(0, 2))
            lines[ln] = lines[ln][:col] + new + lines[ln][end:]
            texts[c] = "\n".join(lines)
            nb.notify("notebookDocument/didChange", {"notebookDocument": {"uri": uri, "version": version}, "change": {
                "cells": {"textContent": [{"document": {"uri": c, "version": version}, "changes": [
                    {"range": {"start": {"line": ln, "character": col}, "end": {"line": ln, "character": end}},
                     "text": new}]}]}}})
        elif op < 0.65:  # a cell added somewhere
            c, at = cell_uri(), rnd.randint(0, len(order))
            texts[c] = line()
            order.insert(at, c)
            nb.notify("notebookDocument/didChange", {"notebookDocument": {"uri": uri, "version": version}, "change": {
                "cells": {"structure": {"array": {"start": at, "deleteCount": 0, "cells": [{"kind": 2, "document": c}]},
                                        "didOpen": [{"uri": c, "languageId": "python", "version": 1,
                                                     "text": texts[c]}]}}}})
        elif op < 0.8 and len(order) > 1:  # a cell removed
            at = rnd.randrange(len(order))
            c = order.pop(at)
            texts.pop(c)
            nb.notify("notebookDocument/didChange", {"notebookDocument": {"uri": uri, "version": version}, "change": {
                "cells": {"structure": {"array": {"start": at, "deleteCount": 1}, "didClose": [{"uri": c}]}}}})
        elif op < 0.88:  # nonsense: a change for a cell that is not there, a structure past the end
            nb.notify("notebookDocument/didChange", {"notebookDocument": {"uri": uri, "version": version}, "change": {
                "cells": {"structure": {"array": {"start": 999, "deleteCount": 5}},
                          "textContent": [{"document": {"uri": cell_uri(), "version": 1}, "changes": [{"text": "q"}]}]}}})
        if order and rnd.random() < 0.35:
            c = rnd.choice(order)
            lines = texts[c].split("\n")
            ln = rnd.randrange(len(lines))
            r = nb.request("textDocument/inlineCompletion", {"textDocument": {"uri": c}, "position": {
                "line": ln, "character": len(lines[ln])}, "context": {"triggerKind": 1}}, 60)
            asked += 1
            assert r is not None and "result" in r, r
            for item in r["result"]["items"]:
                assert item["range"]["start"]["line"] == ln and item["range"]["end"]["line"] == ln, (item, texts[c])
    assert asked > 30 and nb.alive()
    for c in order:  # each cell's line count, as the server maps it, is the cell's
        r = nb.request("textDocument/inlineCompletion", {"textDocument": {"uri": c}, "position": {
            "line": 10_000, "character": 0}, "context": {"triggerKind": 1}}, 60)
        assert f"({texts[c].count(chr(10)) + 1} lines)" in r["error"]["message"], (r, texts[c])
    nb.notify("notebookDocument/didClose", {"notebookDocument": {"uri": uri},
                                            "cellTextDocuments": [{"uri": c} for c in order]})
