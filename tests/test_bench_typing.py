"""The typing replay (bench.typing_replay): its reading of a suggestion, and one replay through the real daemon
on the tiny random checkpoint (the accounting is checked, not quality)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import heldout, typing_replay
from bench.typing_replay import (
    block_document,
    block_of,
    extra_lines_right,
    judge,
    judge_edit,
    metrics,
    next_words,
    simulate,
    sweep,
)

from .test_bench_context import _build


def test_a_typist_reads_a_suggestion_as_the_rest_of_the_line_a_part_of_it_or_wrong():
    assert judge("", "return x") is None and judge("  ", "return x") is None
    assert judge("return x", "return x") == "complete"
    assert judge("return x  ", "return x") == "complete"  # trailing blanks do not count
    assert judge("return x\n    y = 2", "return x") == "complete"  # the first line decides; the rest is checked apart
    assert judge("return", "return x") == "part"  # a proper prefix on one line: accepted, the typist goes on
    assert judge("return\n", "return x") == "wrong"  # a prefix that breaks the line is not
    assert judge("return y", "return x") == "wrong"
    assert judge("return x + 1", "return x") == "wrong"  # longer than the line
    assert judge(" str:", " str:") == "complete" and judge("str:", " str:") == "wrong"  # leading blanks count


def test_the_suggest_widget_selects_a_name_of_the_open_files_while_a_name_is_typed():
    """``--widget`` plays VS Code's suggest widget: open while a name is typed in code (not in a string or a
    comment, not inside a word), its items the open files' names that begin with the typed part; ``first`` selects
    the first of them by name, ``right`` the line's own name where the files have it. No item, no widget."""
    w = typing_replay.Widget("first", ["def load(config_path, connect):\n    conn = connect()\n", "CONFIG = 1"])
    line = "path = config_path(name)"
    text, cursor = "x\n    path = con", len("x\n    path = con")
    assert w.select(text, cursor, line, len("path = con")) == (cursor - 3, cursor, "config_path")
    assert w.select(text + "x", cursor, line, len("path = con")) is None  # inside a word
    assert w.select("s = 'con", 8, "s = 'con'", 8) is None  # in a string
    assert w.select("# con", 5, "# con", 5) is None  # in a comment
    assert w.select("z = zz", 6, "z = zz", 6) is None  # no name begins so
    assert w.select("c = co", 6, "c = conn", 6)[2] == "config_path"  # the first: not the line's `conn`
    right = typing_replay.Widget("right", ["def load(config_path, connect):\n    conn = connect()\n"])
    assert right.select("c = co", 6, "c = conn", 6)[2] == "conn"
    assert right.select("c = co", 6, "c = cold", 6)[2] == "config_path"  # not in the files: the first


def test_an_auto_closing_editor_puts_closers_and_types_over_them():
    """``--autoclose`` types as VS Code does by default: an opener before a blank, a closer or the line's end gets its
    closer, a quote too unless it follows a word or the cursor is in a string or comment, and a closer or quote typed
    where the editor put that character is typed over. Typing a line whole leaves it as written, but for the
    closers of brackets it leaves open (the typist deletes them)."""
    def typed(line: str) -> tuple[str, str]:
        text, cursor = "", 0
        for c in line:
            start, end, s, cursor = heldout.auto_closed(text, cursor, c)
            text = text[:start] + s + text[end:]
        return text[:cursor], text[cursor:]

    assert heldout.auto_closed("", 0, "(") == (0, 0, "()", 1)
    assert heldout.auto_closed("f()", 2, ")") == (2, 2, "", 3)  # typed over
    assert heldout.auto_closed("ab", 2, "(") == (2, 2, "()", 3)
    assert heldout.auto_closed("ab", 1, "(") == (1, 1, "(", 2)  # before a word: no closer
    assert heldout.auto_closed("don", 3, "'") == (3, 3, "'", 4)  # after a word: no closing quote
    assert typed('print("a (b)", x[0])') == ('print("a (b)", x[0])', "")
    assert typed("if (a && f(b") == ("if (a && f(b", "))")
    assert typed("x = {'k': [1,") == ("x = {'k': [1,", "]}")
    assert typed("# it's (") == ("# it's (", ")")  # a comment's quote is not closed; brackets are
    assert heldout.editor_right("foo(bar, ") == ")" and heldout.editor_right("x = 1") == ""


def test_an_auto_closed_line_is_judged_by_the_line_tab_leaves():
    """With the editor's closers right of the cursor, a suggestion is read by the line Tab's edit leaves: one that
    writes over the closers it writes itself, or goes in before them, is the line or a part of it."""
    text, cursor, want = "    foo(bar)\n", 11, "    foo(bar, baz)"
    assert judge_edit(text, cursor, (11, 12, ", baz)"), want) == "complete"  # writes over the `)`
    assert judge_edit(text, cursor, (11, 11, ", baz"), want) == "complete"  # goes in before it
    assert judge_edit(text, cursor, (11, 11, ", baz)"), want) == "wrong"  # `))`
    assert judge_edit(text, cursor, (11, 11, ","), want) == "part"
    assert judge_edit(text, cursor, (11, 11, ", qux"), want) == "wrong"
    assert judge_edit(text, cursor, (11, 11, "  "), want) is None
    assert judge_edit(text, cursor, (7, 11, "(bar, baz"), want) == "complete"  # from the typed word's start


def test_the_lines_after_the_first_are_held_against_the_file():
    after = "\n    b = 2\n    c = 3\n"
    assert extra_lines_right("a = 1", after)
    assert extra_lines_right("a = 1\n    b = 2", after)
    assert extra_lines_right("a = 1\n    b = 2\n    c = 3", after)
    assert not extra_lines_right("a = 1\n    b = 3", after)
    assert not extra_lines_right("a = 1\n    b = 2", "")


def test_an_observed_line_replays_offline_at_any_threshold():
    """--observe keeps every suggestion with its confidence; simulate() puts the gate back at a threshold: what is
    on screen, what the typist accepts (and so skips typing), and each wrong suggestion read once while it stays."""
    seen = [{"at": 0, "shown": "retry()", "verdict": "wrong", "confidence": 0.5, "source": "prefix"},
            {"at": 1, "shown": "etry()", "verdict": "wrong", "confidence": 0.5, "source": "warm"},  # typed through
            {"at": 2, "shown": "ise", "verdict": "wrong", "confidence": 0.5, "source": "diffusion"},  # a new one
            {"at": 3, "shown": "urn x", "verdict": "complete", "confidence": 0.3, "source": "diffusion"},
            {"at": 4, "shown": "r", "verdict": "part", "confidence": 0.9}]  # one character: not shown under a gate
    rec = {"line": "return x", "chars": 8, "seen": seen, "ms": [1.0] * 8, "errors": []}
    low, high = simulate(rec, 0.25), simulate(rec, 0.4)
    assert low["keystrokes"] == 4 and low["wrong"] == 2 and low["wrong_keystrokes"] == 3  # typed r, e, t, then Tab
    assert low["accepts"] == [{"at": 3, "chars": 5, "verdict": "complete", "source": "diffusion"}]
    assert low["first_accept_at"] == 3 and low["wrong_by_source"] == {"prefix": 1, "diffusion": 1}
    assert high["keystrokes"] == 8 and high["wrong"] == 2 and not high["accepts"] and not high["completed"]
    assert simulate(rec, 0.6)["wrong"] == 0
    opened = simulate(rec, 0.0)  # minConfidence 0 shows everything, one character too
    assert opened["keystrokes"] == 4 and opened["accepts"][0]["at"] == 3
    points = sweep([rec], [0.25, 0.4])
    assert [p["accepted"] for p in points] == [1, 0] and points[0]["saved"] == 0.5
    m = metrics([low, high])
    assert m["accepted_by_source"] == {"diffusion": 1} and m["wrong_by_source"] == {"prefix": 2, "diffusion": 2}


def test_replay_through_the_daemon(tiny_model: Path, tmp_path: Path):
    data = _build(2)
    heldout.write(data, tmp_path)
    out, dump = tmp_path / "typing.json", tmp_path / "typing.jsonl"
    res = typing_replay.main(["--data", str(tmp_path), "--split", "dev", "--model", str(tiny_model),
                              "--threads", "1", "--set", "minConfidence=0", "--dump", str(dump), "--out", str(out)])
    assert json.loads(out.read_text()) == res
    lines = [c for c in data["cases"] if c["kind"] == "whole_line"]
    assert res["n"] == len(lines) == 2 and set(res["by_family"]) <= {"python", "js"}
    recs = [json.loads(ln) for ln in dump.read_text().splitlines()]
    assert [r["line"] for r in recs] == [c["expected"].rstrip() for c in lines]
    for r in recs:
        accepted = sum(a["chars"] for a in r["accepts"])
        # every character was typed or accepted, every keystroke was one or the other, one request per keystroke
        assert r["keystrokes"] == len(r["accepts"]) + (r["chars"] - accepted)
        assert r["requests"] == r["keystrokes"] and r["errors"] == []
        assert 0 <= r["wrong"] <= r["requests"]
        # what the gate read of the shown line comes with it (bench.gate_fit --extend fits on it)
        assert all(isinstance(x["elsewhere"], int) for x in r["seen"] if x["source"] not in (None, "word"))
    assert any(x["source"] not in (None, "word") for r in recs for x in r["seen"])  # a line was read, not only words
    # --words: a typist who also takes the right leading words of a wrong suggestion; each press is a keystroke
    # (under the default gate, so that keystrokes with nothing on screen come too)
    words = typing_replay.main(["--data", str(tmp_path), "--split", "dev", "--model", str(tiny_model), "--words",
                                "--threads", "1", "--dump", str(dump), "--out", str(out)])
    assert "accept next word" in words["settings"]["accept_rule"]
    for r in (json.loads(ln) for ln in dump.read_text().splitlines()):
        accepted = sum(a["chars"] for a in r["accepts"])
        presses = sum(a.get("keys", 1) for a in r["accepts"])
        assert r["keystrokes"] == presses + (r["chars"] - accepted) and r["requests"] <= r["keystrokes"]
        assert all(a["chars"] > a["keys"] for a in r["accepts"] if a["verdict"] == "words")
    m = res["all"]
    assert m["keystrokes"] == sum(r["keystrokes"] for r in recs) and m["chars"] == sum(r["chars"] for r in recs)
    assert m["saved"] == round(1 - m["keystrokes"] / m["chars"], 4) and m["latency_ms"]["p50"] > 0
    assert str(Path(__file__).resolve().parent.parent) not in out.read_text()  # no machine paths
    # --compare: the two runs' dumps, line by line (the --words run took more keystrokes where it took words)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in recs))
    cmp = typing_replay.main(["--compare", str(first), str(dump), "--out", str(out)])
    words_recs = [json.loads(ln) for ln in dump.read_text().splitlines()]
    assert cmp["lines"] == 2 and cmp["total_a_b"]["keystrokes"] == [m["keystrokes"], words["all"]["keystrokes"]]
    moved = {x["id"] for x in cmp["lines_that_moved"]}
    def figures(r: dict) -> tuple:
        return r["keystrokes"], r["wrong"], len(r["accepts"]), bool(r["completed"])

    assert moved == {y["id"] for x, y in zip(recs, words_recs, strict=True) if figures(x) != figures(y)}
    same = typing_replay.main(["--compare", str(first), str(first)])
    assert same["lines_that_moved"] == [] and same["by_package"] == {}


def test_the_offline_replay_shows_word_heads_as_the_daemon_does():
    """Under the gate, simulate() shows the rest of the typed word when the document has it (the engine's own
    rule), so the replay of an observed line matches the daemon's screen; without the document it cannot."""
    doc = "total_cost = 1\n\nprint()\n"
    cursor = doc.index("\n\n") + 1  # the empty line: the case's line goes there
    seen = [{"at": 0, "shown": "total_cost = 2", "verdict": "wrong", "confidence": 0.1, "source": "prefix"},
            {"at": 1, "shown": "otal_cost += 1", "verdict": "wrong", "confidence": 0.1, "source": "diffusion"},
            {"at": 2, "shown": "tal_price = 1", "verdict": "wrong", "confidence": 0.1, "source": "diffusion"},
            {"at": 3, "shown": "al_cost *= 2", "verdict": "wrong", "confidence": 0.1, "source": "diffusion"}]
    rec = {"id": "c", "line": "total_cost *= 3", "chars": 15, "seen": seen, "ms": [1.0] * 15, "errors": []}
    plain, words = simulate(rec, 0.29), simulate(rec, 0.29, (doc, cursor))
    assert simulate({**rec, "seen": seen[2:3]}, 0.29, (doc, cursor))["accepts"] == []  # no `total_price` in the file
    assert plain["keystrokes"] == 15 and plain["wrong"] == 0
    # nothing typed: no word to finish; after `t` the rest of `total_cost` (the file has it) is taken, with Tab
    assert words["accepts"] == [{"at": 1, "chars": 9, "verdict": "part", "source": "word"}]
    assert words["keystrokes"] == 15 - 9 + 1 and words["wrong"] == 0
    assert simulate(rec, 0.0, (doc, cursor))["accepts"] == []  # minConfidence 0: what the model wrote, no heads
    # --rivals: the limit is passed down (past it, only the nearby favourite word shows: here `total_price`)
    two = "total_cost = 1\ntotal_price = 2\ntotal_price = 3\n\nprint()\n"
    at_two = (two, two.index("\n\n") + 1)
    assert simulate(rec, 0.29, at_two)["accepts"] == words["accepts"]
    assert simulate(rec, 0.29, at_two, rivals=0)["accepts"] == []


def test_a_typist_who_accepts_word_by_word_takes_the_right_words_of_a_wrong_suggestion():
    """VS Code's accept next word: the right leading words of a wrong suggestion are taken one keystroke a word,
    where that saves keystrokes; the Tab-only typist reads the same suggestion as wrong."""
    assert next_words("self.size = 0", "self.count = 0") == ("self", 1)
    assert next_words("self.size = 0", "self.size += 1") == ("self.size", 2)
    assert next_words("x", "y = 1") == ("", 0)
    seen = [{"at": 0, "shown": "total_cost = 2", "verdict": "wrong", "confidence": 0.9, "source": "prefix"}]
    rec = {"id": "c", "line": "total_cost *= 3", "chars": 15, "seen": seen, "ms": [1.0] * 15, "errors": []}
    tab, both = simulate(rec, 0.29), simulate(rec, 0.29, words=True)
    assert tab["accepts"] == [] and tab["wrong"] == 1 and tab["keystrokes"] == 15
    assert both["accepts"] == [{"at": 0, "chars": 10, "verdict": "words", "source": "prefix", "keys": 1}]
    assert both["wrong"] == 0 and both["keystrokes"] == 15 - 10 + 1  # one press took `total_cost`


def test_a_block_is_the_line_and_what_goes_on_at_its_indentation():
    """--block: the case's line and the lines after it at its indentation or deeper, up to the size, ending at a
    blank line; the document keeps the cursor after the first line's indentation and nothing of the block."""
    text = "def f(a):\n    x = 1\n    if a:\n        y = 2\n    return x\n\n\ndef g():\n    pass\n"
    off = text.index("x = 1")
    assert block_of(text, off, 9) == [("    ", "x = 1"), ("    ", "if a:"), ("        ", "y = 2"), ("    ", "return x")]
    assert block_of(text, off, 2) == [("    ", "x = 1"), ("    ", "if a:")]
    assert block_of(text, text.index("y = 2"), 9) == [("        ", "y = 2")]  # `return x` is outside its block
    files = {"f": {"text": text}}
    doc, cursor, lines = block_document(files, {"file": "f", "offset": off}, 2)
    assert doc == "def f(a):\n    \n        y = 2\n    return x\n\n\ndef g():\n    pass\n" and cursor == off
    assert [c for _, c in lines] == ["x = 1", "if a:"]
    doc, cursor, lines = block_document(files, {"file": "f", "offset": off}, 1)
    assert doc == text[:off] + text[text.index("\n    if a:"):] and len(lines) == 1


def test_writing_a_block_through_the_daemon(tiny_model: Path, tmp_path: Path):
    """Every line of each block is typed (or written by a suggestion accepted above it), in order, one request a
    keystroke; the report holds the block's first lines apart from the lines after them."""
    data = _build(2)
    heldout.write(data, tmp_path)
    out, dump = tmp_path / "typing.json", tmp_path / "typing.jsonl"
    res = typing_replay.main(["--data", str(tmp_path), "--split", "dev", "--model", str(tiny_model), "--block", "3",
                              "--threads", "1", "--set", "minConfidence=0", "--dump", str(dump), "--out", str(out)])
    recs = [json.loads(ln) for ln in dump.read_text().splitlines()]
    cases = [c for c in data["cases"] if c["kind"] == "whole_line"]
    want = [(c["id"], j, line) for c in cases
            for j, (_, line) in enumerate(block_of(data["files"][c["file"]]["text"], c["offset"], 3))]
    assert [(r["block"], r["line_no"], r["line"]) for r in recs] == want and res["lines_typed"] == len(want)
    for r in recs:
        accepted = sum(a["chars"] for a in r["accepts"])
        assert r["keystrokes"] == len(r["accepts"]) + (r["chars"] - accepted) or r.get("by_lines_above")
        assert r["requests"] == r["keystrokes"] and r["errors"] == []
    parts = res["by_line_in_block"]
    assert parts["first"]["lines"] == len(cases) and parts["first"]["lines"] + parts["later"]["lines"] == len(recs)


def test_typing_the_pieces_of_edits_through_the_daemon(tiny_model: Path, tmp_path: Path):
    """``--edits``: each edit case's piece is typed into its line, the rest of the line right of the cursor, one
    request a keystroke; a record's characters are the piece's, and what was accepted and typed makes it up."""
    data = _build(6)
    heldout.write(data, tmp_path)
    out, dump = tmp_path / "typing.json", tmp_path / "typing.jsonl"
    res = typing_replay.main(["--data", str(tmp_path), "--split", "dev", "--model", str(tiny_model), "--edits",
                              "--threads", "1", "--set", "minConfidence=0", "--dump", str(dump), "--out", str(out)])
    edits = heldout.with_edits(data)["cases"]
    recs = [json.loads(ln) for ln in dump.read_text().splitlines()]
    assert edits and [(r["id"], r["line"], r["chars"]) for r in recs] == [
        (c["id"], c["piece"], len(c["piece"])) for c in edits]
    assert res["settings"]["cases"] == "edits inside a written line"
    for r in recs:
        accepted = sum(a["chars"] for a in r["accepts"])
        assert r["keystrokes"] == len(r["accepts"]) + (r["chars"] - accepted) and accepted <= r["chars"]
        assert r["requests"] == r["keystrokes"] and r["errors"] == []
    with pytest.raises(SystemExit):
        typing_replay.main(["--data", str(tmp_path), "--split", "dev", "--edits", "--autoclose"])


@pytest.mark.parametrize("autoclose", [False, True])
def test_typing_with_the_suggest_widget_open_through_the_daemon(tiny_model: Path, tmp_path: Path, autoclose: bool):
    """``--widget right``: while a name is typed the request carries the widget's selected item, and where no right
    suggestion shows, the typist takes the item (the right name, one keystroke, source ``widget``); what was
    taken and typed makes up each line, in an editor that auto-closes too."""
    data = _build(2)
    heldout.write(data, tmp_path)
    out, dump = tmp_path / "typing.json", tmp_path / "typing.jsonl"
    res = typing_replay.main(["--data", str(tmp_path), "--split", "dev", "--model", str(tiny_model), "--widget",
                              "right", "--threads", "1", "--dump", str(dump), "--out", str(out)]
                             + (["--autoclose"] if autoclose else []))
    recs = [json.loads(ln) for ln in dump.read_text().splitlines()]
    assert res["settings"]["suggest_widget"] == "right" and res["all"]["widget_open"] > 0
    assert any(a["source"] == "widget" for r in recs for a in r["accepts"])
    for r in recs:
        accepted = sum(a["chars"] for a in r["accepts"])
        assert r["requests"] == r["keystrokes"] - (2 if autoclose and r["keystrokes"] > r["requests"] else 0)
        assert r["errors"] == [] and r["widget"]["right"] <= r["widget"]["requests"] <= r["requests"]
        if not autoclose:
            assert r["keystrokes"] == len(r["accepts"]) + (r["chars"] - accepted)
    with pytest.raises(SystemExit):
        typing_replay.main(["--data", str(tmp_path), "--split", "dev", "--edits", "--widget", "first"])


def test_the_raw_analogy_count_types_the_line_and_stops_at_the_right_row():
    """bench.analogy_rows: at each keystroke the nearest matching row's rest, counted by its equal tokens; each
    distinct wrong line once, and the line ends at the first right one."""
    from bench.analogy_rows import typed_line

    doc = 'X = [\n    P_("7 (male)", "th"),\n    \n]\n'
    cursor = doc.index("    \n]") + 4
    # `P_("8 ` matches the row above but for 7/8 (three equal tokens: P_ ( "), and its rest is the line's
    assert typed_line(doc, cursor, 'P_("8 (male)", "th"),') == (6, [(3, True)])
    # the same row is wrong for `(female)` until that word is typed too (five equal tokens by then)
    assert typed_line(doc, cursor, 'P_("8 (female)", "th"),') == (14, [(3, False), (5, True)])
    # with no equal token asked for, `return ` matches `X = [` (X replaced), wrong; it is counted in bin 0
    assert typed_line(doc, cursor, "return x") == (None, [(0, False)])


def test_new_gate_features_are_fitted_on_the_lines_read_while_typing(tmp_path: Path):
    """bench.gate_fit --extend DUMP: each line read once (typed through: once), its shown confidence the kept
    gate's score; only the weights gate.json lacks are fitted, and --write keeps the rest of gate.json."""
    from bench import gate_fit

    def seen(at: int, shown: str, verdict: str, source: str, conf: float, elsewhere: int) -> dict:
        return {"at": at, "shown": shown, "verdict": verdict, "source": source, "confidence": conf,
                "elsewhere": elsewhere}

    recs = []
    for i in range(30):  # a neighbour copied once: wrong, typed through (read once); one standing twice: right
        recs.append({"id": f"a{i}", "line": "check(b)", "seen": [
            seen(1, "heck(a)", "wrong", "prefix", 0.5, 1), seen(2, "eck(a)", "wrong", "prefix", 0.5, 1),
            seen(6, "b)", "complete", "prefix", 0.5, 2), seen(7, "x", "wrong", "word", 0.1, 0)]})
    dump = tmp_path / "obs.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rows = gate_fit.typing_rows([str(dump)])
    assert len(rows) == 60 and sum(r["y"] for r in rows) == 30
    assert {r["elsewhere"] for r in rows if r["y"]} == {2} and all(r["z"] == 0.0 for r in rows)
    # the full fit on one-position cases leaves these weights to the typed lines
    full, _ = gate_fit.fit([{**r, "x": {**r["x"], "mean_lp": float(r["y"])}} for r in rows])
    assert full["mean_lp"] > 0 and not any("elsewhere" in k for k in full)
    model = tmp_path / "model"
    model.mkdir()
    kept = {"weights": {"mean_lp": 1.5}, "bias": -0.5, "threshold": 0.3, "thresholds": {"ruby": 0.7}}
    (model / "config.json").write_text("{}")  # what resolve_model looks for; the fit loads no network
    (model / "gate.json").write_text(json.dumps(kept))
    res = gate_fit.main(["--model", str(model), "--extend", str(dump), "--write",
                         "--out", str(tmp_path / "fit.json")])
    w = res["extended"]
    assert w["elsewhere_once"] + w["prefix*elsewhere_once"] < 0 < w["elsewhere_more"] + w["prefix*elsewhere_more"]
    assert res["at_threshold"]["prefix elsewhere=1"] == {"before": "0/30 right", "after": "0/0 right"}
    written = json.loads((model / "gate.json").read_text())
    assert written["weights"]["mean_lp"] == 1.5 and written["bias"] == -0.5 and written["thresholds"] == {"ruby": 0.7}
    assert set(written["weights"]) == {"mean_lp", *w} and "--extend DUMP" in written["extended_on"]
    # once extended, the dumps' confidences would hold the weights twice: refused, the file kept
    with pytest.raises(SystemExit, match="extended already"):
        gate_fit.main(["--model", str(model), "--extend", str(dump), "--write"])
    assert json.loads((model / "gate.json").read_text()) == written
