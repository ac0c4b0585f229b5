"""Smoke tests of the held-out set builder (bench.heldout) and the LSP quality harness (bench.context).

No downloads: cases are built from two small synthetic files, and the harness drives a real daemon on the
tiny random checkpoint, so only the report's shape and the scoring rules are checked, not quality.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from lsprotocol import types as lsp

from bench import context, heldout
from bench.latency import pos_at

PY = '''import os


class Store:
    """A tiny key-value store."""

    def __init__(self, root):
        self.root = root
        self.items = {}

    def get(self, key, default=None):
        value = self.items.get(key, default)
        return value

    def put(self, key, value):
        self.items[key] = value
        return os.path.join(self.root, key)
'''

JS = '''// a counter
export function makeCounter(start) {
  let count = start;
  const step = 1;
  return {
    next() {
      count += step;
      return count;
    },
    reset() {
      count = start;
      return count;
    },
  };
}
'''

PKGS = (
    heldout.Package("synthpy", "1.0", "MIT", "pypi", "dev", "synthpy.tar.gz", "0" * 64, r".*"),
    heldout.Package("synthjs", "1.0", "MIT", "npm", "dev", "synthjs.tgz", "0" * 64, r".*"),
)
SOURCES = {"synthpy": [("store.py", PY), ("store2.py", PY.replace("Store", "Shelf"))],
           "synthjs": [("counter.js", JS), ("counter2.js", JS.replace("Counter", "Ticker"))]}


def _build(per_package: int = 2) -> dict:
    return heldout.build_split("dev", seed=3, per_package=per_package, packages=PKGS, sources=SOURCES)


def test_cases_are_built_the_way_an_editor_sees_them():
    a, b = _build(6), _build(6)
    assert a == b  # a fixed seed gives the same set
    assert {c["kind"] for c in a["cases"]} == {"whole_line", "mid_line"}
    for c in a["cases"]:
        text = a["files"][c["file"]]["text"]
        doc, off = heldout.case_document(a["files"], c)
        line_start = text.rfind("\n", 0, off) + 1
        typed = text[line_start:off]
        assert (text[:off] + c["expected"]) in text and doc.startswith(text[:off])
        assert not c["expected"].lstrip().startswith(("#", "//", '"""')) and len(c["expected"].strip()) >= 2
        if c["kind"] == "whole_line":
            assert typed.strip() == ""  # only the indentation is left
        else:
            assert len(typed.strip()) >= 2
        assert c["file"] not in c["others"] and len(c["others"]) <= 2
        assert all(a["files"][o]["package"] == a["files"][c["file"]]["package"] for o in c["others"])
    starts = {PY[cs:le].strip() for _, cs, le in heldout.code_lines(PY, "python") or []}
    assert '"""A tiny key-value store."""' not in starts and "self.root = root" in starts  # no docstrings


def test_packages_are_clean_and_split_evenly():
    heldout.check_clean()
    for split in ("dev", "test"):
        ps = [p for p in heldout.PACKAGES if p.split == split]
        per = {"dev": 4, "test": 2}[split]  # the dev split was grown to 8 packages; test stays as built
        assert sum(p.registry == "pypi" for p in ps) == per and sum(p.registry == "npm" for p in ps) == per
    # Go, Rust, C and Java: about 75 cases of each language in each split, from different packages
    langs = {"dev_langs": {}, "test_langs": {}}
    for p in heldout.PACKAGES:
        if p.split in langs:
            lang = ("go" if p.name.startswith("golang-") else "rust" if p.name.startswith("librust-")
                    else "java" if "java" in p.include else "c")
            langs[p.split][lang] = langs[p.split].get(lang, 0) + (p.cases or heldout.CASES_PER_PACKAGE)
    assert langs["dev_langs"].keys() == langs["test_langs"].keys() == {"go", "rust", "java", "c"}
    assert all(74 <= n <= 76 for d in langs.values() for n in d.values()), langs
    dev = {p.name for p in heldout.PACKAGES if p.split == "dev_langs"}
    assert not dev & {p.name for p in heldout.PACKAGES if p.split == "test_langs"}
    # Ruby and PHP: two packages of each in each split, 150 cases per language
    for split in ("dev_ruby_php", "test_ruby_php"):
        ps = [p for p in heldout.PACKAGES if p.split == split]
        assert sorted(p.name.split("-")[0] for p in ps) == ["php", "php", "ruby", "ruby"]
        assert sum(p.cases or heldout.CASES_PER_PACKAGE for p in ps) == 300
    # C++: about 150 cases in each split, from different packages
    for split in ("dev_cpp", "test_cpp"):
        ps = [p for p in heldout.PACKAGES if p.split == split]
        assert 150 <= sum(p.cases or heldout.CASES_PER_PACKAGE for p in ps) <= 151
    assert not {p.name for p in heldout.PACKAGES if p.split == "dev_cpp"} & {
        p.name for p in heldout.PACKAGES if p.split == "test_cpp"}


def test_code_lines_skip_comments_and_strings_in_each_language():
    """Whole-line cases start on code, never inside a comment or a multi-line string, in every split's language."""
    go = "package x\n\n// Sum adds up the numbers.\nfunc Sum(xs []int) int {\n\ts := `raw\nstring line`\n\treturn len(s)\n}\n"
    rs = "/// Doc comment here.\nfn total(a: u32) -> u32 {\n    /* block\n       comment */\n    a + 10\n}\n"
    java = "class A {\n  /** Javadoc\n   * more text */\n  int size() {\n    return 1;\n  }\n}\n"
    c = "/* header\n * text */\nint add(int a) {\n    return a + 1;\n}\n"
    cpp = "// Adds.\nint add(int a) {\n  auto s = R\"(raw\nline)\";\n  return a + 1;\n}\n"
    rb = "# Adds.\ndef add(a)\n  doc = <<~TXT\n    heredoc text\n  TXT\n  a + 1\nend\n"
    php = "<?php\n/**\n * Doc comment.\n */\nfunction add($a) {\n    $s = \"two\n    lines\";\n    return $a + 1;\n}\n"
    for text, lang, code, not_code in ((go, "go", "return len(s)", "string line`"),
                                       (rb, "ruby", "def add(a)", "heredoc text"),
                                       (cpp, "cpp", "return a + 1;", 'line)";'),
                                       (php, "php", "return $a + 1;", "lines\";"),
                                       (rs, "rust", "a + 10", "comment */"),
                                       (java, "java", "return 1;", "* more text */"),
                                       (c, "c", "return a + 1;", "* text */")):
        starts = {text[cs:le].strip() for _, cs, le in heldout.code_lines(text, lang) or []}
        assert code in starts and not_code not in starts, (lang, starts)


def test_scoring_rules():
    doc = "def f(x):\n    y = x + 1\n    return y\n\n\ndef g(x):\n    y = x + 1\n    ret\n"
    cursor = len(doc) - 1
    item = lsp.InlineCompletionItem(insert_text="return y", range=lsp.Range(
        start=pos_at(doc, cursor - 3), end=pos_at(doc, cursor)))
    text, start, end, insert = context.shown_text(doc, cursor, item)
    assert text == "urn y" and (start, end) == (cursor - 3, cursor)
    assert context.parses_after(doc, "python", start, end, insert)
    assert not context.parses_after(doc, "python", start, end, "return return (")
    assert context.baseline_prev_line(doc, cursor) is None  # "y = x + 1" does not start with "ret"
    assert context.baseline_prev_line(doc[: cursor - 3] + "\n", cursor - 3) == "y = x + 1"
    assert context.verbatim_above(doc, cursor, "urn y")


def test_autoclose_sends_the_closers_a_typed_part_leaves_and_scores_the_line_tab_leaves():
    """``--autoclose``: right of a mid-line case's cursor, the closers an auto-closing editor left while its typed part
    was typed; a request is right when the line, once its item is taken, is the expected one."""
    text = "def f(a, b):\n    return g(a, [b])\n"
    files = {"m.py": {"text": text, "lang": "python", "package": "p"}}
    mid = {"id": "c0", "file": "m.py", "offset": text.index("[b]") + 1, "kind": "mid_line", "expected": "b])"}
    whole = {"id": "c1", "file": "m.py", "offset": text.index("return"), "kind": "whole_line",
             "expected": "return g(a, [b])"}
    sent = heldout.with_autoclose({"files": files, "cases": [mid, whole]})
    assert [c.get("right") for c in sent["cases"]] == ["])", None]
    doc, cursor = heldout.case_document(files, sent["cases"][0])
    assert doc[doc.rfind("\n", 0, cursor) + 1 : doc.find("\n", cursor)] == "    return g(a, [])" and doc[cursor] == "]"
    at = pos_at(doc, cursor)
    over = lsp.InlineCompletionItem(insert_text="b])", range=lsp.Range(start=at, end=pos_at(doc, cursor + 2)))
    before = lsp.InlineCompletionItem(insert_text="b", range=lsp.Range(start=at, end=at))
    doubled = lsp.InlineCompletionItem(insert_text="b])", range=lsp.Range(start=at, end=at))
    assert [context.line_after(doc, cursor, it) for it in (over, before, doubled)] == ["b])", "b])", "b])])"]
    assert heldout.case_document(files, sent["cases"][1]) == heldout.case_document(files, whole)


def test_edits_take_a_piece_out_of_a_written_line_and_score_the_line_tab_leaves():
    """``--edits``: a mid-line case's line with one syntax node taken out at the cursor (or, mid-word, the word's
    rest), the rest of the line left right of it; the whole-line cases and those with no such piece are left out.
    A request is right when the line, once its item is taken, is the line as it was."""
    text = "def f(a, b):\n    return divmod(a, b)\n    x = y\n"
    files = {"m.py": {"text": text, "lang": "python", "package": "p"}}
    arg = {"id": "c0", "file": "m.py", "offset": text.index("(a, b)\n") + 1, "kind": "mid_line", "expected": "a, b)"}
    word = {"id": "c1", "file": "m.py", "offset": text.index("mod("), "kind": "mid_line", "expected": "mod(a, b)"}
    last = {"id": "c2", "file": "m.py", "offset": text.index("y\n"), "kind": "mid_line", "expected": "y"}
    whole = {"id": "c3", "file": "m.py", "offset": text.index("return"), "kind": "whole_line",
             "expected": "return divmod(a, b)"}
    sent = heldout.with_edits({"files": files, "cases": [arg, word, last, whole]})
    assert [(c["id"], c["kind"], c["piece"], c["right"], c["expected"]) for c in sent["cases"]] == [
        ("c0", "edit", "a", ", b)", "a, b)"), ("c1", "edit", "mod", "(a, b)", "mod(a, b)")]
    doc, cursor = heldout.case_document(files, sent["cases"][0])
    assert doc == text.replace("divmod(a, b)", "divmod(, b)") and doc[cursor:].startswith(", b)")
    at = pos_at(doc, cursor)
    right = lsp.InlineCompletionItem(insert_text="a", range=lsp.Range(start=at, end=at))
    twice = lsp.InlineCompletionItem(insert_text="a, b)", range=lsp.Range(start=at, end=at))
    assert [context.line_after(doc, cursor, it) == "a, b)" for it in (right, twice)] == [True, False]


def test_gate_curve():
    recs = [{"shown": True, "confidence": c, "exact": e} for c, e in [(0.9, True), (0.8, True), (0.5, False),
                                                                       (0.5, True), (0.2, False)]]
    recs.append({"shown": False, "confidence": None, "exact": False})
    pts = context.curve(recs)
    assert [p["threshold"] for p in pts] == [0.2, 0.5, 0.8, 0.9]
    assert pts[0]["coverage"] == 5 / 6 and pts[0]["precision"] == 3 / 5
    best = context.pick_threshold(pts, 0.75)
    assert best is not None and best["threshold"] == 0.5 and best["precision"] == 0.75


def test_as_text_sends_a_split_as_a_language_without_a_grammar():
    from dgcomplete.syntax import language_for

    data = _build(2)
    text = heldout.as_text(data)
    assert [c["expected"] for c in text["cases"]] == [c["expected"] for c in data["cases"]]
    for c in text["cases"]:
        f = text["files"][c["file"]]
        was = data["files"][c["file"][:-4]]["lang"]
        assert language_for(f["lang"], f"file:///x/{c['file']}") is None and f["lang"] == f"x-{was}"
        assert heldout.family(f["lang"]) == heldout.family(was)
        assert heldout.case_document(text["files"], c) == heldout.case_document(data["files"], {**c, "file": c["file"][:-4]})


def test_a_chosen_threshold_is_stored_for_its_languages(tmp_path: Path):
    (tmp_path / "gate.json").write_text(json.dumps({"weights": {}, "bias": 0.0, "threshold": 0.3,
                                                    "thresholds": {"lua": 0.5}}))
    context.write_thresholds(tmp_path, ["ruby", "php"], 0.73, "dump.jsonl")
    raw = json.loads((tmp_path / "gate.json").read_text())
    assert raw["thresholds"] == {"lua": 0.5, "ruby": 0.73, "php": 0.73} and raw["threshold"] == 0.3
    assert raw["thresholds_chosen_on"].startswith("dump.jsonl")


def test_harness_through_the_daemon(tiny_model: Path, tmp_path: Path):
    data = _build(2)
    heldout.write(data, tmp_path)
    out, dump = tmp_path / "context.json", tmp_path / "dump.jsonl"
    res = context.main(["--data", str(tmp_path), "--split", "dev", "--model", str(tiny_model), "--threads", "1",
                        "--set", "minConfidence=0", "--dump", str(dump), "--out", str(out)])
    assert json.loads(out.read_text()) == res
    assert res["n"] == 4 and res["settings"]["set"] == {"minConfidence": 0}
    m = res["all"]
    for key in ("exact", "shown", "precision", "parse_rate", "length_ratio", "length_unit", "latency_ms",
                "baselines"):
        assert key in m, key
    assert 0 <= m["exact"] <= m["shown"] <= 1 and m["latency_ms"]["p50"] > 0
    assert set(res["variants"]["default"]["by_family"]) == {"python", "js"}
    assert set(res["variants"]["default"]["by_kind"]) == {"whole_line", "mid_line"}
    assert res["model"]["params"] > 0 and res["machine"]["cores"]
    recs = [json.loads(ln) for ln in dump.read_text().splitlines()]
    assert len(recs) == 4 and {"id", "text", "confidence", "source", "exact", "parses", "ms"} <= set(recs[0])
    cur = context.run_curve(SimpleNamespace(curve=str(dump), variant=None, target=0.5, plot=None))
    assert cur["n"] == 4
    assert str(Path(__file__).resolve().parent.parent) not in out.read_text()  # no machine paths


def test_harness_with_the_package_as_workspace_folder(tiny_model: Path, tmp_path: Path, monkeypatch):
    """``--workspace --no-others``: each package's archive is unpacked as a checkout (here a synthetic one, with
    a file that is in no case), named to the daemon as its workspace folder, and the case opened as its file."""
    import hashlib
    import io
    import tarfile

    from bench import workspace

    data = _build(2)
    heldout.write(data, tmp_path)
    cache, pkgs = tmp_path / "cache", []
    cache.mkdir()
    for p in PKGS:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for path, text in [*SOURCES[p.name], ("extra/more" + Path(SOURCES[p.name][0][0]).suffix, "x = 1\n")]:
                raw = text.encode()
                info = tarfile.TarInfo(f"{p.name}-1.0/{path}")
                info.size = len(raw)
                tar.addfile(info, io.BytesIO(raw))
        (cache / p.archive).write_bytes(buf.getvalue())
        pkgs.append(heldout.Package(p.name, p.version, p.license, p.registry, p.split, p.archive,
                                    hashlib.sha256(buf.getvalue()).hexdigest(), p.include))
    monkeypatch.setattr(workspace, "PACKAGES", tuple(pkgs))
    monkeypatch.setattr(workspace, "CACHE", cache)
    monkeypatch.setattr(workspace, "WS", tmp_path / "ws")
    folders = workspace.materialize("dev")
    assert sorted(folders) == ["synthjs", "synthpy"] and (folders["synthpy"] / "extra" / "more.py").exists()
    case = data["cases"][0]
    assert workspace.case_path("dev", case["file"]).read_text() == data["files"][case["file"]]["text"]
    res = context.main(["--data", str(tmp_path), "--split", "dev", "--model", str(tiny_model), "--threads", "1",
                        "--set", "minConfidence=0", "--workspace", "--no-others"])
    assert res["n"] == 4 and res["settings"]["workspace_folders"] and not res["settings"]["other_open_files"]
    assert 0 <= res["all"]["exact"] <= res["all"]["shown"] <= 1
