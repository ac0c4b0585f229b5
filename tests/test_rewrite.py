"""In-line rewrite commands: edit.py's algorithms (scripted fillers, property test) and the LSP side over stdio.

Random-weight models write garbage, so the daemon tests assert safety and protocol behaviour (confined,
versioned edits; ContentModified; cancellation); repair restoring a parse is tested with scripted fillers.
Plain-text documents (no parser, so no syntax veto) exercise the paths that apply an edit.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from types import SimpleNamespace

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from dgcomplete import edit, syntax
from dgcomplete.syntax import strict
from dgcomplete.syntax.languages import keywords, operators

from .conftest import inline_capabilities, start_daemon, stop_daemon

BROKEN = "def f(x):\n    y = (x + 1\n    return y\n\n\ndef g():\n    return 2\n"
HOLES = "def f(x):\n    ...\n\n\ndef g(y):\n    pass  # TODO\n    z = ???\n    # TODO: more\n    return z\n"


# ---- edit.py: range safety, holes, errors ------------------------------------------------------------------
def test_confine_trims_to_a_sub_range():
    text = "abc XYZ def"
    assert edit.confine(text, 4, 7, "XYZ") == []
    assert edit.confine(text, 0, 11, "abc X1Z def") == [edit.Edit(5, 6, "1")]
    e = edit.confine("a\r\nb", 0, 4, "a\r\nc")
    assert e == [edit.Edit(3, 4, "c")]
    assert edit.apply_edits("a\r\nb", e) == "a\r\nc"
    e = edit.confine("x\r\ny", 0, 4, "x\ny")  # never splits a CRLF pair
    assert all(not (s.start == 2) for s in e) and edit.apply_edits("x\r\ny", e) == "x\ny"


def test_find_holes_each_placeholder_its_own_span():
    holes = edit.find_holes(HOLES, 0, len(HOLES))
    assert [HOLES[h.start : h.end] for h in holes] == ["...", "pass  # TODO", "???", "# TODO: more"]
    assert [h.inline for h in holes] == [False, False, True, False]
    assert edit.find_holes(HOLES, HOLES.index("def g"), len(HOLES))[0].start == HOLES.index("pass")
    js = "function f() {\n  /* TODO */\n  return [...xs, x[..., 0]];\n}\n"
    assert [js[h.start : h.end] for h in edit.find_holes(js, 0, len(js))] == ["/* TODO */"]
    assert edit.find_holes("x = 1\n", 0, 6) == []


def test_error_points_are_near_the_error():
    errs = edit.error_nodes(BROKEN, "python")
    assert errs and edit.errors_in_range(errs, 0, len(BROKEN))
    assert not edit.errors_in_range(errs, BROKEN.index("def g"), len(BROKEN))
    points = edit.error_points(BROKEN, 0, len(BROKEN), errs)
    line = BROKEN.index("y = (")
    assert any(line <= a <= BROKEN.index("\n", line) for a, _ in points)


# ---- edit.py: the algorithms with scripted fillers ----------------------------------------------------------
BROKEN2 = "def f(x):\n    y = f((x + 1\n    return y\n\n\ndef g():\n    return 2\n"  # two ")" missing


def closing_filler(calls: list[edit.SpanJob]):
    """A scripted 'model': closes both brackets when given two slots after `1`, else writes garbage in the noise."""

    def fill(job: edit.SpanJob) -> str:
        calls.append(job)
        mid = job.middle
        at = mid.index("1\n") + 1 if "1\n" in mid else -1
        if job.extra >= 2 and any(a <= at <= b for a, b in job.noise or []):
            return mid[:at] + "))" + mid[at:]
        out, pos = [], 0
        for a, b in job.noise or []:
            out += [mid[pos:a], "@" * (b - a)]
            pos = b
        return "".join(out) + mid[pos:]

    return fill


class RankedFiller:
    """A scripted 'model' for one-token repairs: never asked to denoise; ranks ``best`` (a whole line) first and
    records what it was asked, (prefix, line variants, suffix) per call."""

    def __init__(self, best: str) -> None:
        self.best = best
        self.seen: list[tuple[str, list[str], str]] = []

    def __call__(self, job: edit.SpanJob) -> str:
        raise AssertionError("no denoising needed")

    def rank(self, prefix: str, options: list[str], suffix: str) -> list[float]:
        self.seen.append((prefix, options, suffix))
        return [1.0 if o == self.best else 0.0 for o in options]


def test_repair_restores_parsing_with_a_scripted_filler():
    calls: list[edit.SpanJob] = []
    start, end = 0, BROKEN2.index("\n\n\ndef g")
    out = edit.repair(BROKEN2, start, end, "python", closing_filler(calls), rounds=6)
    assert out.ok, out.reason
    fixed = edit.apply_edits(BROKEN2, out.edits)
    assert fixed == BROKEN2.replace("x + 1\n", "x + 1))\n")
    assert syntax.error_count(syntax.parse(fixed, "python")) == 0
    assert edit.edits_inside(out.edits, start, end)
    assert all(j.clamp_rest for j in calls) and len(calls) >= 2  # the first round (1 slot) could not do it
    assert out.stats["errors_after"] == 0 < out.stats["errors_before"] and out.stats["single_edits"] == 0


def test_repair_tries_one_missing_token_first_and_the_model_ranks_the_places():
    """One token that makes the range parse (Python's parser and tree-sitter agreeing) is the first repair
    tried; with several places, the filler's ranker chooses, else the latest place on the nearest line."""
    calls: list[edit.SpanJob] = []
    out = edit.repair(BROKEN, 0, len(BROKEN), "python", closing_filler(calls), rounds=6)
    assert out.ok and calls == [] and out.stats["single_edits"] >= 2
    assert edit.apply_edits(BROKEN, out.edits) == BROKEN.replace("x + 1\n", "x + 1)\n")
    ranked = RankedFiller("    y = (x )+ 1")
    out = edit.repair(BROKEN, 0, len(BROKEN), "python", ranked)
    seen = ranked.seen
    assert seen and seen[0][0] == "def f(x):\n" and seen[0][2].startswith("\n    return y")
    assert "    y = (x + 1)" in seen[0][1] and edit.apply_edits(BROKEN, out.edits).startswith("def f(x):\n    y = (x )+ 1\n")
    # deleting a ":" (Python's parser refuses what tree-sitter may let pass): found and put back
    colon = "def f(x):\n    if x > 1\n        return x\n    return 0\n"
    out = edit.repair(colon, 0, len(colon), "python", closing_filler([]))
    assert edit.apply_edits(colon, out.edits) == colon.replace("x > 1\n", "x > 1:\n")
    js = "function f(a) {\n  let b = a + 1\n  if (b > 2 {\n    return b;\n  }\n}\n"  # tree-sitter alone
    out = edit.repair(js, 0, len(js), "javascript", closing_filler([]))
    assert out.stats["rounds"] == 0 and edit.apply_edits(js, out.edits) == js.replace("(b > 2 {", "(b > 2) {")


def test_repair_swaps_two_tokens_typed_in_the_wrong_order_and_takes_back_a_lost_operator():
    """Two neighbouring tokens exchanged is one edit too (``f(x:)``, ``g(a;)``), and a lost ``=``, ``,`` or
    ``(`` goes back where it was, between the blanks it left; with rivals, the model's ranking chooses."""
    py = "def g(x):\n    if f(x:)\n        return 1\n    return 0\n"
    out = edit.repair(py, 0, len(py), "python", closing_filler([]))
    assert out.ok and out.stats["rounds"] == 0 and out.stats["swapped"] == "):"
    assert edit.apply_edits(py, out.edits) == py.replace("f(x:)", "f(x):")
    js = "function f(a) {\n  const b = g(a;)\n  return b;\n}\n"
    assert syntax.mends_errors(js, js.index(";)"), js.index(";)") + 2, ");", "javascript")
    assert not syntax.mends_errors(js, js.index("b;"), js.index("b;"), "(", "javascript")
    out = edit.repair(js, 0, len(js), "javascript", closing_filler([]))
    assert out.ok and out.stats["rounds"] == 0 and edit.apply_edits(js, out.edits) == js.replace("g(a;)", "g(a);")
    lost = "def h(self, sleep):\n    self.sleep  sleep\n    return self\n"
    ranked = RankedFiller("    self.sleep = sleep")
    out = edit.repair(lost, 0, len(lost), "python", ranked)
    assert {"    self.sleep = sleep", "    self.sleep,  sleep", "    self.sleep:  sleep"} <= set(ranked.seen[0][1])
    assert out.ok and out.stats["inserted"] == "=" and edit.apply_edits(lost, out.edits) == lost.replace("sleep  sleep", "sleep = sleep")


def test_repair_rewrites_a_wrong_closer_and_takes_out_a_token_written_twice():
    """A bracket written as another (``g(a, b]``) is one edit; so is one written twice (``g(x))``), where taking
    it out competes with opening another and the model decides."""
    js = "function f(a, b) {\n  return g(a, b];\n}\n"
    out = edit.repair(js, 0, len(js), "javascript", closing_filler([]))
    assert out.ok and out.stats["replaced"] == ")" and edit.apply_edits(js, out.edits) == js.replace("b];", "b);")
    py = "def f(x):\n    y = g(x))\n    return y\n"
    ranked = RankedFiller("    y = g(x)")
    out = edit.repair(py, 0, len(py), "python", ranked)
    assert {"    y = g(x)", "    y = (g(x))"} <= set(ranked.seen[0][1])
    assert out.ok and out.stats["deleted"] == "" and edit.apply_edits(py, out.edits) == py.replace("x))", "x)")


def test_repair_puts_back_a_word_that_was_left_out():
    """A deleted name or keyword (`x if else 2`, `for in`): one of the words used around the damage inserted where a
    token could go, a blank added where it would touch a word, is a one-token edit too; the model ranks those that
    parse with the punctuation edits."""
    py = "def f(x, items):\n    total = 0\n    y = x if else 2\n    return y + total\n"
    ranked = RankedFiller("    y = x if x else 2")
    out = edit.repair(py, 0, len(py), "python", ranked)
    assert out.ok and out.stats["rounds"] == 0 and out.stats["inserted_word"] == " x", out
    assert edit.apply_edits(py, out.edits) == py.replace("if else", "if x else")
    assert {"    y = x if x else 2", "    y = x if total else 2"} <= set(ranked.seen[0][1])
    assert {"x", "total", "y"} == set(edit.near_words(py, [(py.index("else"), py.index("else"))])[:3])  # twice each
    js = "function f(items) {\n  let total = 0;\n  for (const  of items) {\n    total += it;\n  }\n  return total;\n}\n"
    out = edit.repair(js, 0, len(js), "javascript", RankedFiller("  for (const it of items) {"))
    assert out.ok and edit.apply_edits(js, out.edits) == js.replace("const  of", "const it of"), out
    # a keyword nothing nearby uses, between the two blanks its loss left (and where a statement starts)
    loop = "def f(items):\n    total = 0\n    for i  items:\n        total += i\n    return total\n"
    assert "in" not in edit.near_words(loop, [(loop.index("items:"), loop.index("items:"))])
    assert {"in", "def", "return"} <= set(keywords("python")) and "func" in keywords("go") and keywords(None) == ()
    out = edit.repair(loop, 0, len(loop), "python", RankedFiller("    for i in items:"))
    assert out.ok and out.stats["inserted_word"] == "in" and "for i in items:" in out.new_text, out
    # a word deleted with a blank on each side left an odd indentation: the word goes before its last blank
    lost = "class A:\n    def f(self):\n        return 1\n\n     g(self, x):\n        return x\n"
    ranked = RankedFiller("    def g(self, x):")
    out = edit.repair(lost, 0, len(lost), "python", ranked)
    assert out.ok and edit.apply_edits(lost, out.edits) == lost.replace("     g(", "    def g("), out
    assert "    class g(self, x):" in ranked.seen[0][1]  # the model chooses
    # where a punctuation edit mends it too (`.x = x` without its `.`), the model chooses between them
    cls = "class A:\n    def f(self, x):\n        self.y = x\n        .x = x\n        return self\n"
    ranked = RankedFiller("        self.x = x")
    out = edit.repair(cls, 0, len(cls), "python", ranked)
    assert out.ok and out.stats["single_edits"] > 0 and out.stats["inserted_word"] == "self", out
    assert "        x = x" in ranked.seen[0][1] and edit.apply_edits(cls, out.edits) == cls.replace(" .x", " self.x")


def test_repair_splits_two_words_a_deleted_token_glued():
    """`to_seconds(max)` without its `(` is `to_secondsmax)`: a word the document has nowhere else, made of words it
    has, takes a token back between them (no edit makes a new name, so before this it could not be mended)."""
    py = ("def wait(lo, hi):\n    x = to_seconds(lo)\n    y = to_secondsmax)\n    return x + y\n\n\n"
          "def to_seconds(v):\n    return v\n\n\nmax = 2\n")
    ranked = RankedFiller("    y = to_seconds(max)")
    out = edit.repair(py, 0, len(py), "python", ranked)
    assert out.ok and out.stats["rounds"] == 0 and out.stats["inserted"] == "(", out
    assert edit.apply_edits(py, out.edits) == py.replace("to_secondsmax)", "to_seconds(max)")
    assert "    y = to_seconds.max)" not in ranked.seen[0][1]  # screened: it does not parse
    counts = edit.word_counts(py)
    splits = edit._splits(counts)(py, 0, len(py), py.index("    y"), py.index(")\n    return"))
    # where one part is a word of the document: `to_second` + `smax` is neither
    assert {py[: e.start].rsplit(" ", 1)[-1] for e in splits} == {"to_seconds"} and len(splits) == 12  # and `<`
    assert not edit._splits(counts)(py, 0, len(py), 0, py.index("\n"))  # `wait` and `hi`: nothing glued there
    java = "class A {\n  Map<String, V> m = new HashMapString, V>();\n  HashMap<K, V> n;\n}\n"
    out = edit.repair(java, 0, len(java), "java", RankedFiller("  Map<String, V> m = new HashMap<String, V>();"))
    assert out.ok and "new HashMap<String, V>();" in out.new_text, out


def test_repair_puts_a_lost_token_after_the_blanks_that_end_its_line():
    """`{` deleted with the blank before it kept (`f(int a) `): the brace may go after the blank, as it was, not
    only glued to `)` with the blank trailing (`f(int a){ `); in a CRLF file before the "\r"."""
    for eol in ("\n", "\r\n"):
        java = "class A {\n  int f(int a) \n    return a;\n  }\n}\n".replace("\n", eol)
        ranked = RankedFiller("  int f(int a) {" + eol[:-1])  # the scorer reads a line with its "\r"
        out = edit.repair(java, 0, len(java), "java", ranked)
        assert out.ok and edit.apply_edits(java, out.edits) == java.replace("a) " + eol, "a) {" + eol), out
        assert "  int f(int a){ " + eol[:-1] in ranked.seen[0][1]  # the model chooses between them


def test_repair_puts_back_an_operator_between_the_two_blanks_it_left():
    """`if cnt  0 {`: a deleted `==` (`:=`, `=>`, `&&`) leaves two blanks between two lexemes; the language's own
    operators are tried there (`syntax.languages.operators`), screened and ranked like the marks."""
    go = "package p\n\nfunc f() int {\n\tcnt := 1\n\tif cnt  0 {\n\t\treturn 1\n\t}\n\treturn cnt\n}\n"
    ranked = RankedFiller("\tif cnt == 0 {")
    out = edit.repair(go, 0, len(go), "go", ranked)
    assert out.ok and out.stats["inserted"] == "==" and "\tif cnt == 0 {\n" in out.new_text, out
    assert {"\tif cnt != 0 {", "\tif cnt >= 0 {"} <= set(ranked.seen[0][1])
    assert ":=" in operators("go") and "=>" in operators("javascript") and "//" not in operators("c")
    # exactly two blanks between two lexemes: not the alignment before a trailing comment (every operator at each of
    # its places crowded the screen's bound, and a `]` written twice was no longer taken out)
    aligned = "    y = f(a, b)]            # the pair\n"
    assert edit._gap_operators(operators("python"))(aligned, 0, len(aligned), 0, len(aligned) - 1) == []
    assert edit._two_blanks("n  0", 2) and not edit._two_blanks("n   0", 2) and not edit._two_blanks("  0", 1)


def test_repair_closes_a_string_left_open():
    """A string's closing quote left out: a quote goes back at a place of the line that has an odd number of them,
    and the model ranks the places; Java reports the whole method as one ERROR node, so the line is found by its
    open quote."""
    js = 'function f(b) {\n  log("a, b);\n  return b;\n}\n'
    ranked = RankedFiller('  log("a", b);')
    out = edit.repair(js, 0, len(js), "javascript", ranked)
    assert out.ok and edit.apply_edits(js, out.edits) == js.replace('"a, b);', '"a", b);'), out
    assert '  log("a, b");' in ranked.seen[0][1]  # parses too: the model chooses
    java = 'void start() {\n  stopped = false;\n  Thread t = new Thread(this, "WATCHDOG);\n  t.start();\n}\n'
    out = edit.repair(java, 0, len(java), "java", RankedFiller('  Thread t = new Thread(this, "WATCHDOG");'))
    assert out.ok and edit.apply_edits(java, out.edits) == java.replace('"WATCHDOG);', '"WATCHDOG");'), out
    py = "def f(s):\n    return s.replace('a, 'b')\n"
    out = edit.repair(py, 0, len(py), "python", RankedFiller("    return s.replace('a', 'b')"))
    assert out.ok and edit.apply_edits(py, out.edits) == "def f(s):\n    return s.replace('a', 'b')\n", out
    even, escaped = "x = 'it''s'", 'a("b\\"c'  # an escaped quote does not count
    assert edit._quotes(even, 0, len(even), 0, len(even)) == [] and edit._quotes(escaped, 0, 7, 0, 7)


def test_repair_puts_a_lost_closing_line_where_the_indentation_says():
    """A whole `}` line left out: it goes back on a line of its own after the block's last line of code, at the
    indentation of the statement that opened it (not glued to the next line, `}return 0;`, nor at the end, `}}`,
    which parse too); `})`-style closers and a closing line at the range's end as well, LF and CRLF."""
    for eol in ("\n", "\r\n"):
        c = "int f(int a) {\n    if (a > 1) {\n        return a;\n    }\n\n    return 0;\n}\n".replace("\n", eol)
        lost = c.replace("    }" + eol, "")
        out = edit.repair(lost, 0, len(lost), "c", RankedFiller("    }return 0;"))  # the model's choice is not asked
        assert out.ok and edit.apply_edits(lost, out.edits) == c and out.stats["closer_line"] == "    }" + eol, out
    js = "function f(x) {\n  x.on('a', function () {\n    go();\n  });\n  return x;\n}\n"
    lost = js.replace("  });\n", "")
    out = edit.repair(lost, 0, len(lost), "javascript", RankedFiller("  });\n  return x;"))  # the line it goes before
    assert out.ok and edit.apply_edits(lost, out.edits) == js, out
    java = "Process exec(CommandLine cmd)\n        throws IOException {\n    return launch(cmd);\n}\n"
    lost = java[: -len("}\n")]
    assert [e.new for e in edit.closer_lines(lost, 0, len(lost), "java")][:1] == ["}\n"]  # the statement's indentation
    out = edit.repair(lost, 0, len(lost), "java", RankedFiller("}"))
    assert out.ok and edit.apply_edits(lost, out.edits) == java, out
    assert edit._unclosed_brackets("} else {") == "}" and edit._unclosed_brackets("a(b)") == ""
    # never outside the range, which may end inside a line; a `;` where an expression statement ends, and the
    # blanks a deleted `}` left take it on their own line
    for cut in range(len(lost)):
        assert all(0 <= e.start <= e.end <= cut for e in edit.closer_lines(lost, 0, cut, "java"))
    obj = "function f() {\n  var mark = {\n    a: 1\n\n  return mark;\n}\n"
    assert [e.new for e in edit.closer_lines(obj, 0, len(obj), "javascript")][:2] == ["  };\n", "  }\n"]
    blanks = "int f(int a) {\n    if (a) {\n        a++;\n    \n    return a;\n}\n"
    out = edit.repair(blanks, 0, len(blanks), "c", RankedFiller(""))
    assert out.ok and edit.apply_edits(blanks, out.edits) == blanks.replace("a++;\n    \n", "a++;\n    }\n"), out


def test_repair_reindents_a_python_line_the_compiler_refuses():
    """tree-sitter reads most indentation errors without an error node; Python's compiler names the line where it
    noticed, which the repair re-indents (or a line above it, when that leaves fewer lines off the file's unit)."""
    cases = {
        "def f(v):\n    x = 1\n      return x\n": "def f(v):\n    x = 1\n    return x\n",  # unexpected indent
        "def f(v):\n    x = 1\n  return x\n": "def f(v):\n    x = 1\n    return x\n",  # unindent does not match
        "def f(v):\n    if v:\n    return 1\n": "def f(v):\n    if v:\n        return 1\n",  # expected a block
        "def f(v):\n   x = 1\n    return x\n": "def f(v):\n    x = 1\n    return x\n",  # the line above
        "def f(v):\n    x = 1\nreturn x\n": "def f(v):\n    x = 1\n    return x\n",  # 'return' outside function
        "def f(v):\n    x = 1\n        y = 2\n        z = 3\n    return x\n":
            "def f(v):\n    x = 1\n    y = 2\n    z = 3\n    return x\n",  # a pasted block, line by line
    }
    for broken, fixed in cases.items():
        assert syntax.error_count(syntax.parse(broken, "python")) == 0
        out = edit.repair(broken, 0, len(broken), "python", RankedFiller(""))
        assert out.ok and edit.apply_edits(broken, out.edits) == fixed, (broken, out)
        assert out.stats["reindented"]
    fine = "def f(v):\n    x = (1,\n  2)\n    return x\n"  # a continuation line may be indented any way
    assert edit.repair(fine, 0, len(fine), "python", RankedFiller("")).reason == "no syntax errors in the range"


def test_repair_respells_a_misspelled_keyword():
    """A word the document has once, one slip from a keyword (`retrun`, `fucntion`, `esle`), is tried as that
    keyword and ranked by the model with the other one-token edits; where tree-sitter reads the line without an
    error (`esle:`, `f(x=x, True)`), the line Python's compiler names is where the edits look."""
    py = "def f(x):\n    retrun x\n"
    ranked = RankedFiller("    return x")
    out = edit.repair(py, 0, len(py), "python", ranked)
    assert out.ok and out.stats["respelled"] == "return"
    assert edit.apply_edits(py, out.edits) == py.replace("retrun", "return")
    assert "    retrun: x" in ranked.seen[0][1]  # an annotation parses too: the model chooses
    js = "fucntion f(a) {\n  return a;\n}\n"
    out = edit.repair(js, 0, len(js), "javascript", RankedFiller("function f(a) {"))
    assert out.ok and edit.apply_edits(js, out.edits) == js.replace("fucntion", "function"), out
    esle = "def f(x):\n    if x:\n        y = 1\n    esle:\n        y = 2\n    return y\n"
    assert syntax.error_count(syntax.parse(esle, "python")) == 0  # tree-sitter reads it; the compiler does not
    out = edit.repair(esle, 0, len(esle), "python", RankedFiller("    else:"))
    assert out.ok and edit.apply_edits(esle, out.edits) == esle.replace("esle", "else"), out
    call = "def f(x):\n    g(x=x, True)\n"
    out = edit.repair(call, 0, len(call), "python", RankedFiller("    g(x==x, True)"))
    assert out.ok and edit.apply_edits(call, out.edits) == call.replace("x=x", "x==x"), out
    # a name the document uses elsewhere is no misspelling, nor a keyword another keyword
    assert edit._respellings({"form": 2}, ("from",))("form = 1", 0, 8, 0, 8) == []
    assert edit._respellings({"if": 1}, ("if", "in"))("x = y if z", 0, 10, 0, 10) == []
    assert [edit._one_slip(a, "return") for a in ("retrun", "retur", "reeturn", "rxturn", "return", "nruter")] == \
        [True, True, True, True, False, False]


def test_repair_inserts_what_the_parser_reports_missing():
    """When the model's rounds leave errors one token cannot fix, MISSING tokens tree-sitter names (here two
    ")") are inserted."""
    text = "function f(a) {\n  if (b > 2 {\n    return b;\n  }\n  while (a {\n    a--;\n  }\n}\n"
    out = edit.repair(text, 0, len(text), "javascript", lambda j: j.middle, rounds=2)
    assert out.ok and out.stats["inserted_missing"] == 2 and "inserted" not in out.stats and out.stats["rounds"] == 2
    assert edit.apply_edits(text, out.edits) == text.replace("(b > 2 {", "(b > 2) {").replace("(a {", "(a) {")
    a, b = text.index(" {\n    return"), text.index(" {\n    a--")
    assert out.edits == [edit.Edit(a, a, ")"), edit.Edit(b, b, ")")]  # one edit per changed line


def test_repair_never_applies_something_worse_nor_a_partial_or_distant_one():
    def worse(job: edit.SpanJob) -> str:
        return job.middle.replace("return", "return (((")

    out = edit.repair(BROKEN2, 0, len(BROKEN2), "python", worse, rounds=3)
    assert not out.ok and out.reason
    out = edit.repair("x = 1\n", 0, 6, "python", worse)
    assert not out.ok and "no syntax errors" in out.reason
    text = "def f(x):\n    return 1\ny = (2 +\n"
    a = text.index("y")
    assert edit.repair(text, a, len(text), "python", lambda j: "y = (2 + 1)\n").ok
    assert not edit.repair(text, a, len(text), "python", lambda j: "\n").ok  # deleting the code is no repair

    # a round that removes one of two errors is not applied: the range must be left without errors
    two = "def f(x):\n    y = f((x + 1\n    z = [1, 2\n    return y\n"
    fix_one = lambda j: j.middle.replace("f((x + 1", "f((x + 1))")  # noqa: E731
    out = edit.repair(two, 0, len(two), "python", fix_one, rounds=2)
    assert not out.ok and "every error" in out.reason and out.stats["errors_left_in_range"] >= 1

    # a repair that also rewrites a line away from the error is refused
    far = "def f(x):\n    a = 1\n    b = 2\n    c = 3\n    y = f((x + 1\n    return y\n"
    meddle = lambda j: j.middle.replace("a = 1", "a = 7").replace("f((x + 1", "f((x + 1))")  # noqa: E731
    out = edit.repair(far, 0, len(far), "python", meddle, rounds=2)
    assert not out.ok and out.stats["refused_reach"] >= 1 and "within the damage" in out.reason
    # ... as is one that changes more lexemes than the error needs, on the error's own line
    rewrite = lambda j: j.middle.replace("y = f((x + 1", "y = other_name(x + 1) + more(2) * 3")  # noqa: E731
    out = edit.repair(far, 0, len(far), "python", rewrite, rounds=2)
    assert not out.ok and out.stats["refused_reach"] >= 1
    ok = edit.repair(far, 0, len(far), "python", lambda j: j.middle.replace("f((x + 1", "f((x + 1))"), rounds=2)
    assert ok.ok and edit.apply_edits(far, ok.edits) == far.replace("f((x + 1", "f((x + 1))")


def test_tree_sitter_accepts_what_python_refuses_and_the_edit_is_vetoed():
    text = "def f(value, y):\n    x = value\n    return x\n"
    a = text.index("x = value")
    b = a + len("x = value")
    for bad in ("a, b += 1", "del f()", "x = f(**value, *y)"):
        assert syntax.new_errors(text, a, b, bad, "python") == 0  # tree-sitter lets it pass
        assert "Python's parser" in edit.judge(text, a, b, bad, "python").reason
        assert "Python's parser" in edit.rewrite(text, a, b, "python", lambda j, bad=bad: bad).reason
    assert edit.judge(text, a, b, "x = value + y", "python").ok
    # the compiler's checks too: an edit is applied to the file, not just parsed
    sig = text.index("value, y")
    assert edit.judge(text, sig, sig + 8, "value, value", "python").reason.endswith("(Python's parser refuses it)")
    assert edit.judge(text, sig, sig + 8, "value, z", "python").ok


def test_a_todo_hole_is_asked_with_its_words_above_it():
    """`# TODO: words` is completed below those words as a comment (the way code reads), then without them when
    that view proposes only comments; the fill replaces the whole placeholder either way."""
    text = "def area(w, h):\r\n    # TODO: multiply the sides\r\n    return result\r\n"
    hole = edit.find_holes(text, 0, len(text))[0]
    views = edit.hole_views(text, hole)
    assert [doc[:at] for doc, at in views] == ["def area(w, h):\r\n    # multiply the sides\r\n    ",
                                              "def area(w, h):\r\n    "]
    assert all(doc[at:] == "\r\n    return result\r\n" for doc, at in views)
    todo = "    pass  # TODO(ann) - sort it\n"
    assert edit.hole_views(todo, edit.find_holes(todo, 0, len(todo))[0])[0][0] == "    # sort it\n    \n"
    for bare in ("    # TODO\n", "    // TODO:  \n", "x = /* TODO: the sum */;\n", "    ...\n"):
        assert len(edit.hole_views(bare, edit.find_holes(bare, 0, len(bare))[0])) == 1
    asked: list[int] = []

    def propose(doc: str, at: int, hole: edit.Hole, i: int, view: int) -> list[str]:
        asked.append(view)
        # after the words the model goes on with the comment: a fill of comments alone does not count
        return ["# and return it", "   \n    # the sides"] if view == 0 else ["result = w * h"]

    out = edit.fill_holes(text, 0, len(text), "python", propose)
    assert asked == [0, 1] and out.ok
    assert edit.apply_edits(text, out.edits) == "def area(w, h):\r\n    result = w * h\r\n    return result\r\n"
    asked.clear()
    out = edit.fill_holes(text, 0, len(text), "python", lambda doc, at, h, i, v: asked.append(v) or ["result = 1"])
    assert asked == [0] and out.ok  # the first view that fills is the last asked
    js = "function f(a) {\n  // TODO: double it\n  return b;\n}\n"
    out = edit.fill_holes(js, 0, len(js), "javascript", lambda *a: ["// doubled", "/* b */", "const b = a * 2;"])
    assert out.ok and edit.apply_edits(js, out.edits).splitlines()[1] == "  const b = a * 2;"


def test_rewrite_and_fill_veto_new_errors_and_empty_results():
    text = "def f(x):\n    return x + 1\n"
    s, e = text.index("x + 1"), text.index("x + 1") + 5
    assert edit.rewrite(text, s, e, "python", lambda j: "x - 1").ok
    assert "syntax" in edit.rewrite(text, s, e, "python", lambda j: "x - (").reason
    assert "empty" in edit.rewrite(text, s, e, "python", lambda j: "  ").reason
    assert edit.rewrite(text, s, e, "python", lambda j: j.middle).reason == "unchanged"
    # a broken selection's error "matches" a broken fragment's: the length guard refuses the collapse
    broken = "def greet(name):\n    message = 'hello ' + name\n    print(message\n    pass\n"
    collapsed = edit.rewrite(broken, 0, len(broken), "python", lambda j: "re((namename")
    assert not collapsed.ok and "drops most" in collapsed.reason

    seen: list[str] = []

    def propose(doc: str, at: int, hole: edit.Hole, i: int, view: int) -> list[str]:
        seen.append(doc[:at][-12:])
        assert doc[at:].startswith("\n" if not hole.inline else "\n    # TODO")  # the placeholder taken out
        # best first: the placeholder again, Python's no-op and a broken line are passed over
        return ["1"] if hole.inline else ["...", "pass", "(((", "return 0"]

    out = edit.fill_holes(HOLES, 0, len(HOLES), "python", propose)
    assert out.ok and len(out.edits) == 4 and out.stats["proposed"] == 13
    assert [e.text for e in out.edits] == ["return 0", "return 0", "1", "return 0"]
    filled = edit.apply_edits(HOLES, out.edits)
    assert "???" not in filled and "TODO" not in filled and "    z = 1\n" in filled
    assert syntax.error_count(syntax.parse(filled, "python")) == 0
    assert "z = " in seen[2]  # filled in order, each seeing the text before it
    broken = edit.fill_holes(HOLES, 0, len(HOLES), "python", lambda *a: ["((("])
    assert not broken.ok and "syntax errors" in broken.reason
    assert edit.fill_holes(HOLES, 0, len(HOLES), "python", lambda *a: []).reason == "nothing to propose for the holes"
    # a time bound: no hole starts after it (the first always does), the rest stay as they are
    out = edit.fill_holes(HOLES, 0, len(HOLES), "python", propose, budget_s=0)
    assert [e.text for e in out.edits] == ["return 0"] and out.stats["not_started"] == 3
    out = edit.fill_holes(HOLES, 0, len(HOLES), "python", lambda *a: [], budget_s=0)
    assert out.reason == "nothing to propose for the holes (3 not started: select fewer)"
    # some holes filled, the others left as they were (still errors): applied
    many = "x0 = ???\nx1 = ???\nx2 = ???\n"
    out = edit.fill_holes(many, 0, len(many), "python", lambda doc, at, h, i, v: ["1"] if i == 1 else [])
    assert out.ok and edit.apply_edits(many, out.edits) == "x0 = ???\nx1 = 1\nx2 = ???\n"
    # at most MAX_HOLES holes a command: the others are left for the next. So many `???` lines are one ERROR node
    # to tree-sitter: each fill is judged with the other holes written as values
    lots = "".join(f"x{k} = ???\n" for k in range(edit.MAX_HOLES + 5))
    assert edit.neutral_holes(lots, "python").startswith("x0 = 0  \nx1 = 0  \nx2 = 0  \n")
    out = edit.fill_holes(lots, 0, len(lots), "python", lambda *a: ["1"])
    assert out.stats == {"holes": edit.MAX_HOLES + 5, "filled": edit.MAX_HOLES, "proposed": edit.MAX_HOLES,
                         "not_started": 5}
    js = "f(/* TODO */)\nconst x = ???\n"  # a placeholder where a comment may stand is left as it is
    assert edit.neutral_holes(js, "javascript") == "f(/* TODO */)\nconst x = 0  \n"


def test_fill_holes_judges_a_hole_inside_a_statement_of_several_lines_and_keeps_the_files_shape():
    """With its own `???` in place the whole function was one error, so any fill passed (and the last check then
    refused them all); judged with it as a value, the broken proposals are passed over."""
    for text in ("def f(x):\n    z = [???,\n        1]\n    return z\n",
                 "def f(x):\n    y = g(???,\n          1)\n    return y\n"):
        out = edit.fill_holes(text, 0, len(text), "python", lambda *a: ["(1", "**a", "x=1", "2"])
        assert [e.text for e in out.edits] == ["2"], out.reason
    # a body below a head: its newline kept, the blank before the hole taken with it
    head = "def f(x): ...\n\n\ndef g():\n    return 1\n"
    out = edit.fill_holes(head, 0, len(head), "python", lambda *a: ["\n    y = x + 1\n    return y"])
    assert edit.apply_edits(head, out.edits).startswith("def f(x):\n    y = x + 1\n    return y\n\n\ndef g")
    out = edit.fill_holes(head, 0, len(head), "python", lambda *a: ["return x"])
    assert edit.apply_edits(head, out.edits).startswith("def f(x): return x\n")
    # a CRLF document gets CRLF lines
    crlf = "def f(x):\r\n    ...\r\n\r\n\r\ndef g():\r\n    return 1\r\n"
    out = edit.fill_holes(crlf, 0, len(crlf), "python", lambda *a: ["y = x\n    return y"])
    assert edit.apply_edits(crlf, out.edits).startswith("def f(x):\r\n    y = x\r\n    return y\r\n\r\n")


def test_errors_spread_counts_the_lines_that_gain_an_error():
    many = "x0 = ???\nx1 = ???\nx2 = ???\n"
    a = many.index("???", 9)
    assert syntax.new_errors(many, a, a + 3, "1", "python") == 1  # the others' ERROR nodes regroup...
    assert edit.errors_spread(many, [edit.Edit(a, a + 3, "1")], "python") == 0  # ...on lines that had errors
    js = "function f(x) {\n  // TODO\n  return x\n}\n\nfunction g() {\n  return 1\n}\n"
    a = js.index("// TODO")
    assert edit.errors_spread(js, [edit.Edit(a, a + 7, "if (x) {")], "javascript") >= 1
    assert edit.errors_spread(js, [edit.Edit(a, a + 7, "x += 1\n  x -= 1")], "javascript") == 0
    assert edit.errors_spread(js, [edit.Edit(a, a + 7, "x += 1\n  if (x) {")], "javascript") == 1  # one line lower
    # lines the edits add or take out: an old error below maps back to its own line, a new one does not
    py = "def f():\n    ...\n\nz = ???\n"
    a = py.index("...")
    assert edit.errors_spread(py, [edit.Edit(a, a + 3, "a = 1\n    b = 2")], "python") == 0
    assert edit.errors_spread(py, [edit.Edit(0, a + 3, "x = 1")], "python") == 0


def test_fill_holes_refuses_a_block_head_without_its_block():
    """Python: tree-sitter reads the next method as the head's body, Python's compiler does not; the check reads
    the whole class, which is longer than the keystroke check's bound. JavaScript: the error it leaves is at the
    file's end."""
    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(150))
    text = f"class C:\n{methods}    def hole(self, x):\n        ...\n\n\n    def last(self):\n        return 0\n"
    assert text.count("\n") > strict.MAX_CHUNK_LINES
    at = text.index("...")
    assert syntax.new_errors(text, at, at + 3, "if x:", "python") == 0  # tree-sitter lets it through
    out = edit.fill_holes(text, 0, len(text), "python", lambda *a: ["if x:", "return x"])
    assert [e.text for e in out.edits] == ["return x"]
    # a block opened and not closed: the function's `}` closes it, the error is at the file's end, far from the hole
    js = "function f(x) {\n  // TODO\n  return x\n}\n"
    out = edit.fill_holes(js, 0, len(js), "javascript", lambda *a: ["if (x) {", "x += 1"])
    assert [e.text for e in out.edits] == ["x += 1"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_edits_only_touch_the_requested_range(data):
    alphabet = st.sampled_from(list("ab (){}:=+1\n\r\t ") + ["...", "???", "# TODO", "pass  # TODO", "é", "def "])
    text = "".join(data.draw(st.lists(alphabet, max_size=40)))
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    lang = data.draw(st.sampled_from([None, "python", "javascript"]))
    outputs = st.text(alphabet=list("ab()=+1 \n:é"), max_size=12)

    def filler(job: edit.SpanJob) -> str:
        return data.draw(outputs)

    for algo in ("rewrite", "repair", "fill"):
        if algo == "rewrite":
            out = edit.rewrite(text, start, end, lang, filler, fraction=0.5, seed=1)
        elif algo == "repair":
            out = edit.repair(text, start, end, lang, filler, rounds=2)
        else:
            out = edit.fill_holes(text, start, end, lang, lambda *a: [data.draw(outputs), data.draw(outputs)])
        assert edit.edits_inside(out.edits, start, end)
        if out.ok:
            result = edit.apply_edits(text, out.edits)
            tail = len(text) - end
            assert result[:start] == text[:start] and result[len(result) - tail :] == text[end:]
            assert result[start : len(result) - tail] == out.new_text
            if lang is not None and algo == "rewrite":  # never adds syntax errors
                (e,) = out.edits
                assert syntax.new_errors(text, e.start, e.end, e.text, lang) == 0
            if lang == "python" and algo == "fill":  # what compiled, holes written as values, still does
                assert not _compiles(edit.neutral_holes(text, lang)) or _compiles(edit.neutral_holes(result, lang))


def _compiles(src: str) -> bool:
    try:
        compile(src, "<test>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


# ---- edit.ModelFiller: token plumbing with a scripted model, then the real (random) tiny model --------------
class ScriptedModel:
    """Every denoising step is certain of one token everywhere (a scripted step function)."""

    def __init__(self, token: int, vocab: int) -> None:
        self.token, self.vocab = token, vocab

    def new_cache(self, capacity: int = 256):
        return SimpleNamespace(truncate=lambda n: None)

    def encode(self, ids, cache, logits="none"):
        return None

    def decode(self, canvas, cache, sc_probs=None, logits_slice=None):
        import torch

        f = canvas.shape[1] if logits_slice is None else logits_slice.stop
        logits = torch.zeros(canvas.shape[0], f, self.vocab)
        logits[..., self.token] = 50.0
        return SimpleNamespace(logits=logits)


@pytest.fixture(scope="module")
def infiller(tiny_model):
    from dgcomplete.local import LocalInfiller
    from dgcomplete.model import load_model

    return LocalInfiller(load_model(tiny_model), max_steps=6)


def test_model_filler_token_plumbing_with_a_scripted_model(infiller):
    from dgcomplete.local import LocalInfiller

    inf = LocalInfiller(infiller.loaded, max_steps=4)
    tok = inf.tok
    middle = "    y = (x + 1\n    return é\n"
    plus = tok.encode("+")[0]
    inf.model = ScriptedModel(plus, inf.cfg.vocab_size)
    _, offsets = tok.encode_with_offsets(middle)
    a = middle.index("1")
    hit = [i for i, (x, y) in enumerate(offsets) if x < a + 1 and y > a]
    lo, hi = offsets[hit[0]][0], offsets[hit[-1]][1]
    filler = edit.ModelFiller(inf, "k")
    job = edit.SpanJob("def f(x):\n", middle, "\n", [(a, a + 1)], extra=2, clamp_rest=True)
    assert filler(job) == middle[:lo] + "+" * (len(hit) + 2) + middle[hi:]
    inf.model = ScriptedModel(tok.fill_id, inf.cfg.vocab_size)  # <fill> everywhere: the noised text is deleted
    assert filler(job) == middle[:lo] + middle[hi:]
    inf.model = ScriptedModel(min(tok.eos_ids), inf.cfg.vocab_size)  # free text ends at EOS
    assert filler(edit.SpanJob("x = ", "", "\n", max_new=8)) == ""
    long = "abc + def\n" * 30  # longer than the canvas: done in chunks
    inf.model = ScriptedModel(plus, inf.cfg.vocab_size)
    spans = [(0, 3), (len(long) - 4, len(long) - 1)]
    out = filler(edit.SpanJob("", long, "", spans, clamp_rest=True))
    _, offs = tok.encode_with_offsets(long)
    hits = [[i for i, (x, y) in enumerate(offs) if x < b and y > a] for a, b in spans]
    (a0, b0), (a1, b1) = [(offs[h[0]][0], offs[h[-1]][1]) for h in hits]
    assert out == "+" * len(hits[0]) + long[b0:a1] + "+" * len(hits[1]) + long[b1:]
    assert filler.calls == 5  # two chunks of the long middle denoised; the untouched ones cost nothing


class EchoModel(ScriptedModel):
    """Keeps every token it sees and ends the text (EOS) wherever it sees ``<mask>``."""

    def __init__(self, mask: int, eos: int, vocab: int) -> None:
        self.mask, self.eos, self.vocab = mask, eos, vocab

    def decode(self, canvas, cache, sc_probs=None, logits_slice=None):
        import torch

        f = canvas.shape[1] if logits_slice is None else logits_slice.stop
        c = canvas[:, :f]
        logits = torch.zeros(canvas.shape[0], f, self.vocab)
        logits.scatter_(-1, torch.where(c == self.mask, self.eos, c)[..., None], 50.0)
        return SimpleNamespace(logits=logits)


def test_rewrite_keeps_the_tokens_after_a_deleted_one(infiller):
    """An EOS on a renoised token's slot deletes that token; cutting there collapsed a rewrite into a fragment."""
    import dataclasses

    from dgcomplete.local import LocalInfiller

    inf = LocalInfiller(infiller.loaded, max_steps=4)
    tok = inf.tok
    inf.mode = "mask"
    inf.sampler = dataclasses.replace(inf.sampler, mode="mask", mask_id=tok.mask_id)
    inf.model = EchoModel(tok.mask_id, min(tok.eos_ids), inf.cfg.vocab_size)
    text = "result = compute(alpha, beta)"
    job = edit.SpanJob("", text, "\n", None, 0.5, seed=1)
    filler = edit.ModelFiller(inf, "k")
    _, offs = tok.encode_with_offsets(text)
    flags = filler._noise_flags(job, offs)
    assert any(flags[: len(flags) // 2]) and not all(flags)
    assert filler(job) == "".join(text[x:y] for (x, y), hit in zip(offs, flags, strict=True) if not hit)


def test_completions_and_every_edit_kind_decode_through_the_one_core(infiller, monkeypatch):
    """LocalInfiller.denoise_canvas is the only place a canvas is denoised: completions (Fill holes among them) and the edits."""
    from dgcomplete import canvas as cv
    from dgcomplete import sampler
    from dgcomplete.local import LocalInfiller
    from dgcomplete.types import InfillRequest, SpanKind, SpanPlan

    inf = LocalInfiller(infiller.loaded, max_steps=2)
    seen: list[tuple[str | None, str]] = []
    core = inf.denoise_canvas

    def spy(prep, doc_key, cancel=None, on_step=None, *, sample=True):
        assert isinstance(prep, cv.Prepared)
        seen.append((doc_key, prep.prefix[-6:]))
        return core(prep, doc_key, cancel, on_step, sample=sample)

    calls = {"sampler": 0}
    real_denoise = sampler.denoise

    def counted(*a, **k):
        calls["sampler"] += 1
        return real_denoise(*a, **k)

    monkeypatch.setattr(inf, "denoise_canvas", spy)
    monkeypatch.setattr(sampler, "denoise", counted)
    monkeypatch.setattr("dgcomplete.local.denoise", counted)
    inf.infill(InfillRequest("def f(x):\n    return ", "\n", SpanPlan(SpanKind.REST_OF_LINE, 1, 8), seed=0,
                             doc_key="c"))
    assert seen == [("c", "eturn ")]
    text = "def f(x):\n    y = (x + 1\n    z = ???\n"
    for algo in (lambda f: edit.rewrite(text, 10, 26, "python", f), lambda f: edit.repair(text, 0, 26, "python", f,
                 rounds=1)):
        before = len(seen)
        filler = edit.ModelFiller(inf, "e")
        algo(filler)
        assert len(seen) - before == filler.calls >= 1 and all(k == "e" for k, _ in seen[before:])
    assert calls["sampler"] == len(seen)  # every sampler run came from the core


def test_model_filler_stops_at_its_work_bound(infiller):
    filler = edit.ModelFiller(infiller, "k", max_passes=3)
    long = "value = compute(alpha, beta) + other\n" * 12
    with pytest.raises(edit.WorkBound):
        filler(edit.SpanJob("", long, "", None, 1.0))
    assert filler.steps == 3


def test_commit_ends_free_spans_and_deletes_stops_on_kept_slots():
    from dgcomplete import canvas as cv

    stop = {0, 3}
    assert cv.commit([7, 8, 3, 9], stop) == ([7, 8], [-1, -1])  # a completion ends at its first filler
    # an edit: a stop on an original slot deletes that token only; after the last original one the span ends
    assert cv.commit([7, 3, 8, 9, 3, 5], stop, [0, 1, 2, -1, -1, -1]) == ([7, 8, 9], [0, 2, -1])
    assert cv.commit([7, 3, 8, 3, 5], stop, [0, -1, 1, -1, -1], open_end=False) == ([7, 8, 5], [0, 1, -1])


def test_model_filler_keeps_clamped_text_exactly(infiller):
    middle = "    naïve = (x + 1\n    return naïve  # ünïcode ✓\n"
    filler = edit.ModelFiller(infiller, "k")
    for seed in range(3):
        a = middle.index("(")
        out = filler(edit.SpanJob("def f(x):\n", middle, "\n", [(a, a + 1)], extra=1, clamp_rest=True, seed=seed))
        assert out.startswith(middle[: a - 2]) and out.endswith(middle[a + 4 :])
    assert filler.calls == 3 and filler.steps > 0


# ---- the daemon over stdio ----------------------------------------------------------------------------------
def rewrite_capabilities() -> lsp.ClientCapabilities:
    caps = inline_capabilities(progress=True)
    caps.text_document.code_action = lsp.CodeActionClientCapabilities(
        code_action_literal_support=lsp.ClientCodeActionLiteralOptions(lsp.ClientCodeActionKindOptions(
            value_set=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite])),
        data_support=True, resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]))
    caps.workspace = lsp.WorkspaceClientCapabilities(
        apply_edit=True, workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True))
    return caps


async def rewrite_daemon(tiny_model, **init):
    client = await start_daemon("--model", str(tiny_model), "--threads", "1", init_options=init,
                                capabilities=rewrite_capabilities())
    client.applied = []

    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        client.applied.append(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    return client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rw(tiny_model):
    """One daemon for the protocol tests below (each uses its own documents)."""
    client = await rewrite_daemon(tiny_model, steps=6, rewriteVariants=3)
    yield client
    await stop_daemon(client)


shared_loop = pytest.mark.asyncio(loop_scope="module")


TXT = "first line stays\nplease rewrite this part of the text\nlast line stays\n"


def open_doc(client, uri: str, text: str, lang: str, version: int = 1) -> None:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, lang, version, text)))


def rng(l1: int, c1: int, l2: int, c2: int) -> lsp.Range:
    return lsp.Range(lsp.Position(l1, c1), lsp.Position(l2, c2))


def arg(uri: str, r: lsp.Range, version: int) -> dict:
    return {"uri": uri, "version": version, "range": {"start": {"line": r.start.line, "character": r.start.character},
                                                      "end": {"line": r.end.line, "character": r.end.character}}}


async def actions(client, uri: str, r: lsp.Range, only=None) -> list[lsp.CodeAction]:
    res = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), r, lsp.CodeActionContext(diagnostics=[], only=only)))
    return list(res or [])


def inside(edit_range: lsp.Range, r: lsp.Range) -> bool:
    pos = lambda p: (p.line, p.character)  # noqa: E731
    return pos(r.start) <= pos(edit_range.start) <= pos(edit_range.end) <= pos(r.end)


def apply_to(text: str, edits: list[lsp.TextEdit]) -> str:
    doc = syntax.SyntaxDocument(text, None)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character,
                         e.new_text)
    return doc.text


@shared_loop
async def test_code_actions_listed_by_what_the_range_holds(rw):
    clean, broken, holes = "file:///w/clean.py", "file:///w/broken.py", "file:///w/holes.py"
    open_doc(rw, clean, "def f(x):\n    return x + 1\n", "python")
    open_doc(rw, broken, BROKEN, "python")
    open_doc(rw, holes, HOLES, "python")
    caps = rw.init_result.capabilities
    assert caps.code_action_provider.resolve_provider
    assert {"dgcomplete.rewriteSelection", "dgcomplete.repairSyntax", "dgcomplete.fillHoles"} <= set(
        caps.execute_command_provider.commands)

    got = await actions(rw, clean, rng(1, 4, 1, 16))
    assert [a.title for a in got] == [f"dgcomplete: Rewrite selection (variant {i})" for i in (1, 2, 3)]
    assert all(a.kind == lsp.CodeActionKind.RefactorRewrite and a.edit is None and a.data["version"] == 1
               for a in got)  # lazy: the edit comes with codeAction/resolve
    assert len({a.data["seed"] for a in got}) == 3
    assert await actions(rw, clean, rng(1, 4, 1, 4)) == []  # a cursor on a clean line: nothing to offer

    got = await actions(rw, broken, rng(1, 0, 2, 12))
    assert {a.data["kind"] for a in got} == {"rewrite", "repair"}
    repair = [a for a in got if a.data["kind"] == "repair"][0]
    assert repair.kind == lsp.CodeActionKind.QuickFix
    assert [a.data["kind"] for a in await actions(rw, broken, rng(1, 0, 2, 12), only=["quickfix"])] == ["repair"]
    assert [a.data["kind"] for a in await actions(rw, broken, rng(1, 6, 1, 6))] == ["repair"]  # cursor line
    assert "repair" not in {a.data["kind"] for a in await actions(rw, broken, rng(5, 0, 6, 12))}
    # a Python line the compiler refuses for its indentation, which tree-sitter reads without an error: listed on
    # its line, not on a clean one, and the Quick Fix re-indents it
    dented = "file:///w/dented.py"
    open_doc(rw, dented, "def f(x):\n    y = x\n      return y\n", "python")
    assert [a.data["kind"] for a in await actions(rw, dented, rng(2, 8, 2, 8))] == ["repair"]
    assert await actions(rw, dented, rng(0, 2, 0, 2)) == []
    resolved = await rw.code_action_resolve_async((await actions(rw, dented, rng(2, 8, 2, 8)))[0])
    assert apply_to("def f(x):\n    y = x\n      return y\n", resolved.edit.document_changes[0].edits) == \
        "def f(x):\n    y = x\n    return y\n"

    got = await actions(rw, holes, rng(0, 0, 9, 0))
    assert {a.data["kind"] for a in got} == {"rewrite", "fill", "repair"}  # `???` does not parse either
    assert [a.data["kind"] for a in await actions(rw, holes, rng(1, 0, 1, 7))] == ["rewrite"] * 3 + ["fill"]
    assert "fill" not in {a.data["kind"] for a in await actions(rw, clean, rng(0, 0, 2, 0))}


@shared_loop
async def test_resolve_gives_an_edit_confined_to_the_range(rw):
    uri = "file:///w/notes.txt"
    open_doc(rw, uri, TXT, "plaintext")
    applied = len(rw.applied)
    r = rng(1, 7, 1, 24)
    acts = await actions(rw, uri, r)
    assert len(acts) == 3
    resolved = await rw.code_action_resolve_async(acts[0])
    assert resolved.edit is not None, [m.message for m in rw.messages]
    (doc_edit,) = resolved.edit.document_changes
    assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == 1
    assert doc_edit.edits and all(inside(e.range, r) for e in doc_edit.edits)
    new = apply_to(TXT, doc_edit.edits)
    assert new.startswith("first line stays\nplease ") and new.endswith(" of the text\nlast line stays\n")
    assert len(rw.applied) == applied  # resolving applies nothing

    py = "file:///w/r.py"
    open_doc(rw, py, "def f(x):\n    return x + 1\n", "python")
    r = rng(1, 11, 1, 16)
    resolved = await rw.code_action_resolve_async((await actions(rw, py, r))[1])
    if resolved.edit is not None:  # garbage from a random model is vetoed unless it parses
        text = apply_to("def f(x):\n    return x + 1\n", resolved.edit.document_changes[0].edits)
        assert syntax.error_count(syntax.parse(text, "python")) == 0


@shared_loop
async def test_commands_apply_versioned_edits(rw):
    uri = "file:///w/cmd.txt"
    open_doc(rw, uri, TXT, "plaintext", version=3)
    applied = len(rw.applied)
    r = rng(1, 7, 1, 24)
    res = await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="dgcomplete.rewriteSelection", arguments=[arg(uri, r, 3)]))
    assert res["applied"] is True and res["newText"] and res["reason"] == ""
    (we,) = rw.applied[applied:]
    (doc_edit,) = we.document_changes
    assert doc_edit.text_document.version == 3 and all(inside(e.range, r) for e in doc_edit.edits)
    assert apply_to(TXT, doc_edit.edits) == TXT[:24] + res["newText"] + TXT[41:]
    reports = [v for vs in rw.progress_reports.values() for v in vs]
    assert any(isinstance(v, lsp.WorkDoneProgressBegin) and "Rewrite" in v.title for v in reports)

    holes = "file:///w/holes.txt"
    text = "a = ???\nb = 2\nc = /* TODO */ + 1\n"
    open_doc(rw, holes, text, "plaintext", version=7)
    r = rng(0, 0, 3, 0)
    res = await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="dgcomplete.fillHoles", arguments=[arg(holes, r, 7)]))
    assert res["applied"] is True, res
    doc_edit = rw.applied[-1].document_changes[0]
    assert doc_edit.text_document.version == 7 and 1 <= len(doc_edit.edits) <= 2
    hole_ranges = [rng(0, 4, 0, 7), rng(2, 4, 2, 14)]  # each hole its own edit
    assert all(any(inside(e.range, h) for h in hole_ranges) for e in doc_edit.edits)
    assert "\nb = 2\n" in apply_to(text, doc_edit.edits)

    py = "file:///w/broken.py"
    open_doc(rw, py, BROKEN, "python", version=2)
    r = rng(0, 0, 3, 0)
    n = len(rw.applied)
    res = await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="dgcomplete.repairSyntax", arguments=[arg(py, r, 2)]))
    assert set(res) >= {"applied", "newText", "reason"}
    if res["applied"]:  # a random model rarely repairs; when it does, the edit is versioned, confined, better
        doc_edit = rw.applied[-1].document_changes[0]
        assert doc_edit.text_document.version == 2 and all(inside(e.range, r) for e in doc_edit.edits)
        fixed = apply_to(BROKEN, doc_edit.edits)
        assert syntax.error_count(syntax.parse(fixed, "python")) < syntax.error_count(syntax.parse(BROKEN, "python"))
    else:
        assert len(rw.applied) == n and res["reason"]
        assert res["stats"]["rounds"] >= 1


@shared_loop
async def test_stale_version_is_content_modified_and_applies_nothing(rw):
    uri = "file:///w/stale.txt"
    open_doc(rw, uri, TXT, "plaintext", version=1)
    applied = len(rw.applied)
    r = rng(1, 7, 1, 24)
    acts = await actions(rw, uri, r)
    rw.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [lsp.TextDocumentContentChangePartial(range=rng(0, 0, 0, 0), text="x")]))
    with pytest.raises(JsonRpcException) as err:
        await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command="dgcomplete.rewriteSelection", arguments=[arg(uri, r, 1)]))
    assert err.value.code == -32801
    with pytest.raises(JsonRpcException) as err:
        await rw.code_action_resolve_async(acts[0])
    assert err.value.code == -32801
    assert len(rw.applied) == applied
    with pytest.raises(JsonRpcException) as err:
        await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command="dgcomplete.rewriteSelection", arguments=[{"uri": uri}]))
    assert err.value.code == -32602


async def test_cancelling_a_long_rewrite_stops_it(tiny_model):
    client = await rewrite_daemon(tiny_model, steps=200)
    try:
        uri = "file:///w/long.txt"
        text = "".join(f"line {i} of a long plain text that takes many denoising passes\n" for i in range(40))
        open_doc(client, uri, text, "plaintext")
        msg_id = str(uuid.uuid4())
        fut = asyncio.ensure_future(client.protocol.send_request_async("workspace/executeCommand",
                                    lsp.ExecuteCommandParams(command="dgcomplete.rewriteSelection",
                                                             arguments=[arg(uri, rng(0, 0, 40, 0), 1)]), msg_id=msg_id))

        def reports(kind):
            return [(t, v) for t, vs in client.progress_reports.items() for v in vs if isinstance(v, kind)
                    and (kind is not lsp.WorkDoneProgressReport or "step" in (v.message or ""))]

        deadline = time.monotonic() + 20
        while not reports(lsp.WorkDoneProgressReport) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert reports(lsp.WorkDoneProgressReport), "the rewrite should report progress"
        ends_before = len(reports(lsp.WorkDoneProgressEnd))
        t0 = time.monotonic()
        client.protocol.notify("$/cancelRequest", lsp.CancelParams(id=msg_id))
        with pytest.raises(JsonRpcException) as err:
            await asyncio.wait_for(fut, 5)
        assert err.value.code == -32800
        while len(reports(lsp.WorkDoneProgressEnd)) == ends_before and time.monotonic() - t0 < 5:
            await asyncio.sleep(0.02)
        assert time.monotonic() - t0 < 3, "the model thread should stop within a denoising step"
        assert reports(lsp.WorkDoneProgressEnd)[-1][1].message == "cancelled"
        await asyncio.sleep(0.2)
        assert client.applied == []
        # the model thread is free again: a small rewrite completes
        short = "file:///w/short.txt"
        open_doc(client, short, "abc def\n", "plaintext")
        res = await asyncio.wait_for(client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command="dgcomplete.rewriteSelection", arguments=[arg(short, rng(0, 0, 0, 3), 1)])), 20)
        assert "applied" in res
    finally:
        await stop_daemon(client)


# ---- Engine.edit: the engine's queue, bounds, staleness and cache bookkeeping cover rewrites ----------------
async def test_engine_edit_is_queued_bounded_and_stale_checked(tiny_model, monkeypatch):
    from dgcomplete import engine as eng
    from dgcomplete.model import load_model

    monkeypatch.setattr(eng, "MAX_PENDING_JOBS", 2)
    e = eng.Engine(load_model(tiny_model), threads=1, max_steps=4)
    try:
        uri = "file:///e/a.txt"
        e.open(uri, TXT, 1, "plaintext")
        res = await e.edit("rewrite", uri, 24, 41, 1, options=eng.EditOptions(seed=1))
        assert res.outcome.ok and (res.start, res.end, res.version) == (24, 41, 1)
        assert uri in e._recent and uri in e.local.states  # the prefix cache is the engine's to evict
        steps: list[tuple[int, int]] = []
        res = await e.edit("repair", uri, 30, 30, None, progress=lambda i, n: steps.append((i, n)))
        assert (res.start, res.end) == (17, 53)  # a cursor: its line
        assert res.outcome.reason == "no parser for this language" and steps == []

        # the queue: with the model thread held, the edits beyond MAX_PENDING_JOBS are refused as busy
        gate = asyncio.Event()
        loop = asyncio.get_running_loop()
        e._pool.submit(lambda: asyncio.run_coroutine_threadsafe(gate.wait(), loop).result())
        jobs = [asyncio.ensure_future(e.edit("rewrite", uri, 24, 41, 1, options=eng.EditOptions(seed=i)))
                for i in range(4)]
        await asyncio.sleep(0.05)
        # a change while the edits wait: they are stale when they run
        e.change(uri, 2, [((0, 0, 0, 0), "x")])
        gate.set()
        got = await asyncio.gather(*jobs, return_exceptions=True)
        assert [type(g).__name__ for g in got[:2]] == ["StaleEdit", "StaleEdit"]
        assert [g.outcome.reason for g in got[2:]] == ["busy: too many requests waiting for the model"] * 2
        assert e._pending == 0
        with pytest.raises(eng.StaleEdit):
            await e.edit("rewrite", uri, 24, 41, 1)

        # bounds: the range's size, and the decoder passes of one edit
        big = "file:///e/big.txt"
        e.open(big, "word " * (eng.MAX_EDIT_CHARS // 5 + 10), 1, "plaintext")
        res = await e.edit("rewrite", big, 0, eng.MAX_EDIT_CHARS + 40, 1)
        assert res.outcome.reason.startswith("selection too large") and "select less" in res.outcome.reason
        crlf = "file:///e/crlf.txt"  # 8,500 characters, 6,800 read with "\n" breaks: the document's count
        e.open(crlf, "abc\r\n" * 1700, 1, "plaintext")
        res = await e.edit("rewrite", crlf, 0, 8500, 1)
        assert res.outcome.reason.startswith(f"selection too large (8500 characters; at most {eng.MAX_EDIT_CHARS})")
        monkeypatch.setattr(eng, "MAX_EDIT_PASSES", 3)
        res = await e.edit("rewrite", big, 0, 2000, 1, options=eng.EditOptions(fraction=1.0))
        assert not res.outcome.ok and "select less" in res.outcome.reason and res.outcome.stats["steps"] == 3
        with pytest.raises(eng.EngineError):
            await e.edit("nope", big, 0, 1, 1)
    finally:
        await e.shutdown()


async def test_engine_edit_without_a_model_says_why():
    from dgcomplete import engine as eng

    e = eng.Engine(None)
    e.load_error = "model directory not found"
    e.open("file:///r.py", "x = (\n", 1, "python")
    with pytest.raises(eng.EngineError, match="Repair syntax needs a model .no model loaded: model directory not"):
        await e.edit("repair", "file:///r.py", 0, 5, 1)
    await e.shutdown()


async def test_a_remote_only_daemon_runs_the_rewrite_commands_through_the_server(tmp_path):
    """The daemon on a vLLM/SGLang server without the local model offers the rewrite commands and applies what the
    server wrote: where each hole stands (Fill holes), the error's lines anew (Repair), judged as usual."""
    from .fake_openai_server import FakeOpenAIServer, Reply

    with FakeOpenAIServer(model="m") as fake:
        client = await start_daemon("--backend", "openai", "--url", fake.url, "--remote-model", "m",
                                    "--local-model", str(tmp_path / "no-local-model"),
                                    capabilities=rewrite_capabilities())
        client.applied = []
        client.feature(lsp.WORKSPACE_APPLY_EDIT)(
            lambda params: client.applied.append(params.edit) or lsp.ApplyWorkspaceEditResult(applied=True))
        try:
            uri, text = "file:///w/remote.py", "def f(x):\n    y = ???\n    return y\n\n\ndef g(x):\n    ...\n"
            open_doc(client, uri, text, "python", version=4)
            whole = rng(0, 0, 7, 0)
            assert {a.data["kind"] for a in await actions(client, uri, whole)} == {"rewrite", "repair", "fill"}
            fake.script(Reply(text=["(x", "x + 1"]), Reply(text="return f(x) * 2"))
            res = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command="dgcomplete.fillHoles", arguments=[arg(uri, whole, 4)]))
            assert res["applied"] is True and res["stats"]["backend"] == "remote", res
            doc_edit = client.applied[-1].document_changes[0]
            assert doc_edit.text_document.version == 4
            assert apply_to(text, doc_edit.edits) == text.replace("???", "x + 1").replace("...", "return f(x) * 2")
            broken = "def f(x):\n    y = x y z\n    return y\n"
            open_doc(client, "file:///w/broken.py", broken, "python", version=1)
            fake.script(Reply(text="    y = x + y + z"))
            res = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command="dgcomplete.repairSyntax", arguments=[arg("file:///w/broken.py", rng(1, 0, 1, 0), 1)]))
            assert res["applied"] is True and res["stats"]["remote_calls"] == 1, res
            fixed = apply_to(broken, client.applied[-1].document_changes[0].edits)
            assert fixed == broken.replace("x y z", "x + y + z")
        finally:
            await stop_daemon(client)


# ---- requests to the client: timeouts, malformed replies, progress that always ends (raw client) ------------
class ScriptedClient:
    """A raw JSON-RPC client (tests.lsp_client.RawDaemon) whose answers to the server's requests are scripted
    per method: "ok", "never", or a raw result to send as it is (garbage)."""

    def __new__(cls, *args, answers: dict, **kw):
        from .lsp_client import RawDaemon, frame

        class Client(RawDaemon):
            def _dispatch(self, msg):
                self.order.append(msg)
                if isinstance(msg, dict) and "method" in msg and "id" in msg:
                    self.server_requests.append(msg)
                    how = self.answers.get(msg["method"], "ok")
                    if how == "never":
                        return
                    result = ({"applied": True} if msg["method"] == "workspace/applyEdit" else None) if how == "ok" else how
                    self.write(frame({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
                    return
                super()._dispatch(msg)

        Client.answers, Client.order = answers, []
        return Client(*args, **kw)


def progress_by_token(client) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in list(client.notifications):
        if m.get("method") == "$/progress" and "rewrite" in str(m["params"]["token"]):
            out.setdefault(m["params"]["token"], []).append(m["params"]["value"]["kind"])
    return out


def test_client_requests_have_timeouts_and_survive_garbage_replies(tiny_model):
    caps = {"window": {"workDoneProgress": True}, "general": {"positionEncodings": ["utf-16"]},
            "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
            "textDocument": {"inlineCompletion": {}, "synchronization": {}}}
    answers: dict = {}
    d = ScriptedClient("--model", str(tiny_model), "--threads", "1", answers=answers,
                       env={"DGCOMPLETE_CLIENT_TIMEOUT_S": "1.5"})
    try:
        d.initialize({"steps": 4, "minConfidence": 0}, caps)
        d.wait_ready()
        uri = "file:///raw/notes.txt"
        d.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1,
                                                            "text": TXT}})

        def command(name="dgcomplete.rewriteSelection", r=((1, 7), (1, 24)), u=uri):
            (l1, c1), (l2, c2) = r
            res = d.request("workspace/executeCommand", {"command": name, "arguments": [{
                "uri": u, "version": 1, "range": {"start": {"line": l1, "character": c1},
                                                  "end": {"line": l2, "character": c2}}}]}, timeout=120)
            assert res is not None and "result" in res, res  # always answered
            return res["result"]

        for garbage in (42, {"applied": "yes"}, [1, 2], "applied"):
            answers.update({"window/workDoneProgress/create": "ok", "workspace/applyEdit": garbage})
            got = command()
            assert got["applied"] is False and "malformed" in got["reason"], got
        answers.update({"workspace/applyEdit": {"applied": False, "failureReason": "read-only"}})
        assert command()["reason"] == "read-only"
        answers.update({"workspace/applyEdit": "never"})
        got = command()
        assert got["applied"] is False and "did not answer workspace/applyEdit" in got["reason"]
        # progress: never created, or created with a garbage answer: the edit runs and applies without it
        for create in ("never", {"token": 1}):
            answers.update({"window/workDoneProgress/create": create, "workspace/applyEdit": "ok"})
            seen = set(progress_by_token(d))
            got = command()
            assert got["applied"] is True, got
            assert set(progress_by_token(d)) == seen  # nothing begun
        # created and answered: begun and ended, the end before the command's answer (no toast left up). A
        # progress begins only once the client's answer to create is read; a tiny model's edit can finish first
        # (then nothing begins, by design), so up to 8 tries, and one must begin
        answers.update({"window/workDoneProgress/create": "ok"})
        begun = 0
        for _ in range(8):
            n = len(d.order)
            assert command()["applied"] is True
            tail = d.order[n:]
            ours = [(i, m["params"]["value"]["kind"]) for i, m in enumerate(tail)
                    if m.get("method") == "$/progress" and "rewrite" in str(m["params"]["token"])]
            kinds = [k for _, k in ours]
            answer = next(i for i, m in enumerate(tail) if "result" in m and "method" not in m
                          and m.get("id", "").startswith("r"))
            if kinds:
                assert kinds[0] == "begin" and kinds[-1] == "end" and ours[-1][0] < answer, tail
                begun += 1
                break
        assert begun
        # refusals end their progress too: a selection over the bound, and a repair that finds nothing
        big = "file:///raw/big.txt"
        d.notify("textDocument/didOpen", {"textDocument": {"uri": big, "languageId": "plaintext", "version": 1,
                                                            "text": "word word word\n" * 700}})
        got = command(r=((0, 0), (699, 0)), u=big)
        assert got["applied"] is False and got["reason"].startswith("selection too large")
        py = "file:///raw/ok.py"
        d.notify("textDocument/didOpen", {"textDocument": {"uri": py, "languageId": "python", "version": 1,
                                                            "text": "def f(x):\n    return x\n"}})
        assert "no syntax errors" in command("dgcomplete.repairSyntax", ((0, 0), (2, 0)), py)["reason"]
        kinds = progress_by_token(d)
        assert kinds and all(k[0] == "begin" and k[-1] == "end" for k in kinds.values()), kinds
        assert d.ping() is not None and d.alive() and not d.bad_frames
    finally:
        d.close()


def test_heldout_repair_cases_are_real_single_token_damage():
    """bench.repair_bench --source heldout: each case deletes one ")" or ":" of a function that Python's parser
    then refuses, in an otherwise intact held-out file."""
    import ast

    from bench.repair_bench import heldout_cases

    cases = heldout_cases(4, 0)
    assert len(cases) == 4 and len({c.id.split(":")[0] for c in cases}) == 4  # one function per file
    for c in cases:
        assert c.deleted in (")", ":") and c.text[c.at] == c.deleted
        assert c.broken == c.text[: c.at] + c.text[c.at + 1 :] and c.start <= c.at < c.end
        ast.parse(c.text)
        with pytest.raises(SyntaxError):
            ast.parse(c.broken)
    assert [c.id for c in heldout_cases(4, 0)] == [c.id for c in cases]  # fixed seed


def test_slip_cases_break_the_code_the_way_people_do():
    """bench.repair_bench --kinds typos|spell: each slip is one of its kind, applied where it breaks the code
    (tree-sitter, or for Python the compiler), and the earlier kinds' case sets are unchanged by them."""
    import random

    from bench.repair_bench import SLIPS, broken_for, typo

    py = ("def f(items, name):\n    for x in items:\n        if x == name:\n            return \"found\"\n"
          "    total = sum(\n        len(x) for x in items\n    )\n    return total\n")
    js = "function f(a) {\n  if (a == 1) {\n    log(\"one\");\n  }\n  return a;\n}\n"
    for src, lang in ((py, "python"), (js, "javascript")):
        assert not broken_for(src, lang)
        for kind in SLIPS:
            got = typo(src, kind, random.Random(0), lang)
            if got is None:
                assert (kind, lang) in {("indent", "javascript"), ("eq", "javascript")}  # no break there
                continue
            broken, detail = got
            assert broken_for(broken, lang) and detail.startswith(kind), (kind, lang)
            assert abs(len(broken) - len(src)) <= 12  # one slip, not a rewrite
    # an indentation slip that tree-sitter reads without an error counts: the compiler refuses it
    dented = py.replace("    total = sum(", "      total = sum(")
    assert syntax.error_count(syntax.parse(dented, "python")) == 0 and broken_for(dented, "python")


async def repaired(rw, uri: str, text: str, lang: str | None, lines: tuple[int, int]) -> str:
    """The document after Repair on ``lines`` (first, end), applied (the command must apply an edit); ``lang``:
    open it first as that language."""
    if lang is not None:
        open_doc(rw, uri, text, lang, version=1)
    res = await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="dgcomplete.repairSyntax", arguments=[arg(uri, rng(lines[0], 0, lines[1], 0), 1)]))
    assert res["applied"] is True, res
    return apply_to(text, rw.applied[-1].document_changes[0].edits)


@shared_loop
async def test_a_tab_indented_document_is_repaired_with_tabs(rw):
    """Python indented with tabs is read through a view indented with spaces (the model learned Python so); the
    edits come back in the document's columns and its tabs: the lost ``:`` where it was lost, a line indented
    too little by a tab, two spaces where the file has tabs written again from the line's start (test_engine: a
    filled hole's lines)."""
    text = "def f(x):\n\tif x > 0\n\t\treturn x\n\treturn -x\n"
    open_doc(rw, "file:///w/tabs.py", text, "python", version=1)
    assert [a.data["kind"] for a in await actions(rw, "file:///w/tabs.py", rng(1, 3, 1, 3))] == ["repair"]
    assert await repaired(rw, "file:///w/tabs.py", text, None, (0, 4)) == text.replace("0\n", "0:\n")
    text = "def f(x):\n\tif x > 0:\n\treturn x\n\treturn -x\n"
    assert await repaired(rw, "file:///w/dented.py", text, "python", (0, 4)) == text.replace(
        "\treturn x", "\t\treturn x")
    text = "def f(x):\n\tx += 1\n  y = x\n\treturn y\n"
    assert await repaired(rw, "file:///w/mixed.py", text, "python", (0, 5)) == text.replace("  y = x", "\ty = x")


@shared_loop
async def test_a_page_script_is_repaired_as_its_language(rw):
    """Inside a Svelte component's ``<script lang="ts">`` Repair is listed and works as in a ``.ts`` file (the edit
    in the page's offsets, nothing outside the script touched); the page's markup, a language without a grammar,
    lists none."""
    uri = "file:///w/Counter.svelte"
    text = ('<script lang="ts">\n  let count = 0;\n  function add(n: number) {\n    count = Math.max(count + n, 0;\n  }\n'
            '</script>\n\n<button on:click={() => add(1)}>{count}</button>\n')
    open_doc(rw, uri, text, "svelte", version=1)
    assert [a.data["kind"] for a in await actions(rw, uri, rng(3, 10, 3, 10))] == ["repair"]
    assert await actions(rw, uri, rng(7, 3, 7, 3)) == []
    assert await repaired(rw, uri, text, None, (2, 5)) == text.replace("n, 0;", "n, 0);")


@shared_loop
async def test_a_crlf_document_is_repaired_and_filled_in_its_own_line_breaks(rw):
    """The edits are worked out on the document read with "\\n" breaks and sent back in the document's offsets
    and "\\r\\n" breaks: the lost ``:`` goes where it was lost, no line gains a bare "\\n", nothing else moves."""
    uri = "file:///w/crlf.py"
    text = "def f(x):\r\n    if x > 0\r\n        return x\r\n    return -x\r\n"
    open_doc(rw, uri, text, "python", version=4)
    assert [a.data["kind"] for a in await actions(rw, uri, rng(1, 6, 1, 6))] == ["repair"]  # listed on its line
    assert await actions(rw, uri, rng(3, 4, 3, 4)) == []
    res = await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="dgcomplete.repairSyntax", arguments=[arg(uri, rng(0, 0, 4, 0), 4)]))
    assert res["applied"] is True, res
    assert apply_to(text, rw.applied[-1].document_changes[0].edits) == text.replace("0\r\n", "0:\r\n")
    assert res["newText"] == text.replace("0\r\n", "0:\r\n")

    holes = "file:///w/crlf_holes.py"
    text = "def g(y):\r\n    ...\r\n\r\n\r\ndef h():\r\n    return 1\r\n"
    open_doc(rw, holes, text, "python", version=2)
    assert [a.data["kind"] for a in await actions(rw, holes, rng(1, 4, 1, 4))] == ["fill"]
    res = await rw.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="dgcomplete.fillHoles", arguments=[arg(holes, rng(0, 0, 6, 0), 2)]))
    if res["applied"]:  # a random model's fill is applied only where it parses
        new = apply_to(text, rw.applied[-1].document_changes[0].edits)
        assert "\n" not in new.replace("\r\n", "") and "\r" not in new.replace("\r\n", "")
        assert new.startswith("def g(y):\r\n    ") and new.endswith("\r\n\r\n\r\ndef h():\r\n    return 1\r\n")
    else:
        assert res["reason"]
