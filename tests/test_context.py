"""Context-seeded suggestions: the retrieval index, the strict soundness checks, the gate, the scorer."""

from __future__ import annotations

import asyncio
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgcomplete.context import ContextIndex, is_comment_line, shape, word_head
from dgcomplete.gate import Gate, feature_vector
from dgcomplete.syntax.strict import (
    duplicate_parameters,
    glues,
    misnamed_public_type,
    misplaced_statement_word,
    python_sound,
    redefines,
    repeats_neighbour,
    sound,
)
from dgcomplete.types import Candidate

SRC = """class Point:
    def __init__(self, x, y, z):
        self.x = x
        self.y = y
        self.z = z

    def total(self):
        return self.x + self.y + self.z


def main():
    p = Point(1, 2, 3)
    print(p.total())
"""


def maps_of(idx: ContextIndex, uri: str) -> tuple[dict, dict, dict, dict]:
    m = idx.docs[uri].maps
    return (dict(m.succ), dict(m.pred), dict(m.shape_succ), dict(m.by_head))


def test_successor_and_prefix_drafts():
    idx = ContextIndex()
    other = "def f(a):\n    if a is None:\n        raise ValueError(a)\n    return a\n"
    idx.open("file:///o.py", "python", other)
    text = "def g(b):\n    if b is None:\n        \n"
    idx.open("file:///t.py", "python", text)
    off = text.index("        \n") + 8
    drafts = idx.drafts("file:///t.py", "python", text, off)
    # "if b is None:" was never followed by anything, but a line of its shape was
    assert [(d.text, d.source) for d in drafts] == [("raise ValueError(a)", "shape")]
    text2 = "def g(a):\n    if a is None:\n        \n"
    idx.open("file:///t.py", "python", text2)
    d = idx.drafts("file:///t.py", "python", text2, text2.index("        \n") + 8)
    assert d and d[0].text == "raise ValueError(a)" and d[0].source == "successor" and not d[0].here
    # the workspace switched off: nothing from the other document
    assert not idx.drafts("file:///t.py", "python", text2, text2.index("        \n") + 8, workspace=False)
    # typed characters select lines that start with them (nearest first)
    text3 = SRC + "    p = Po"
    idx.open("file:///u.py", "python", text3)
    d = idx.drafts("file:///u.py", "python", text3, len(text3), workspace=False)
    assert d[0].text == "int(1, 2, 3)" and d[0].source == "prefix" and d[0].here
    # another language's documents are never consulted
    idx.open("file:///x.js", "javascript", "if (a is None):\n  raise ValueError(a)\n")
    assert all(x.text != "raise ValueError(a)" or not x.here for x in idx.drafts(
        "file:///t.py", "python", text2, text2.index("        \n") + 8))


def opened(idx: ContextIndex, uri: str, lang: str, text: str, off: int, **kw: bool) -> list[tuple[str, str, bool]]:
    """Open ``text`` and ask for drafts at ``off``: (text, source, here) of each."""
    idx.open(uri, lang, text)
    return [(x.text, x.source, x.here) for x in idx.drafts(uri, lang, text, off, **kw)]


def test_match_drafts_continue_the_end_of_what_is_typed():
    idx = ContextIndex()
    text = ("function a(ch) {\n  if (ch === 'x') return false;\n  return true;\n}\n"
            "function b(ch) {\n  if (ch === '_') return fa\n}\n")
    off = text.rindex("return fa") + len("return fa")
    # no line starts with what is typed, but its last characters occurred before: their line goes on as `lse;`
    assert opened(idx, "file:///m.js", "javascript", text, off, workspace=False, match=True) == [
        ("lse;", "match", True)]
    assert not idx.drafts("file:///m.js", "javascript", text, off, workspace=False)  # only when asked for
    # the cursor's own line is not a match for itself, and a short typed text matches nothing
    alone = "  if (ch === '_') return fa\n"
    idx.open("file:///n.js", "javascript", alone)
    assert not idx.drafts("file:///n.js", "javascript", alone, alone.index("fa") + 2, workspace=False, match=True)
    short = text[:off - len("if (ch === '_') return fa")] + "x = fa"
    assert not [x for x in idx.drafts("file:///m.js", "javascript", short, len(short), workspace=False, match=True)
                if x.source == "match"]
    # another open document of the language: found there (not here), and its edits are seen
    idx.open("file:///o.js", "javascript", "const s = String(ch).toUpperCase();\n")
    text2 = "let t = String(ch).to"
    idx.open("file:///p.js", "javascript", text2)
    d = idx.drafts("file:///p.js", "javascript", text2, len(text2), match=True)
    assert [(x.text, x.source, x.here) for x in d] == [("UpperCase();", "match", False)]
    idx.splice("file:///o.js", 0, 0, ["const s = String(ch).toLowerCase();"])
    assert [x.text for x in idx.drafts("file:///p.js", "javascript", text2, len(text2), match=True)] == ["LowerCase();"]
    # the longest key decides: the continuation of the 24-character match, not of a shorter, commoner one
    text3 = "f(a.b).toString(16);\nf(x).toString(8);\nf(x).toString(8);\ny = f(a.b).toString("
    idx.open("file:///q.js", "javascript", text3)
    d = idx.drafts("file:///q.js", "javascript", text3, len(text3), workspace=False, match=True)
    assert d[0].text == "16);" and d[0].source == "match"


def test_analogy_drafts_put_the_typed_words_into_a_nearby_line():
    idx = ContextIndex()
    head = "def copy(self, wait, retry):\n    return self.__class__(\n        wait=_first_set(wait, self.wait),\n"
    text = head + "        retry=_first_set(retry,\n    )\n"
    off = text.index("retry=_first_set(retry,\n") + len("retry=_first_set(retry,")
    # no line starts with what is typed, but the line above is the same but for one word, which comes again
    assert opened(idx, "file:///a.py", "python", text, off, workspace=False) == [
        (" self.retry),", "analogy", True)]
    assert not [d for d in opened(idx, "file:///a.py", "python", text, off - len("retry,"), workspace=False)
                if d[1] == "analogy"]  # three tokens equal (`=`, `_first_set`, `(`) are not enough
    # four tokens equal and a word replaced: the rest as it is; `x =` takes nobody's right side, nor does a
    # line whose blanks differ (a table aligned otherwise)
    rows = 'PAIRS = [\n    P_("7 (male)", "th"),\n    P_("8 (\n]\n'
    assert ("male)\", \"th\"),", "analogy", True) in opened(
        idx, "file:///b.py", "python", rows, rows.index('P_("8 (') + 7, workspace=False)
    lone = "y = compute(a, b)\nx = \n"
    assert not [d for d in opened(idx, "file:///c.py", "python", lone, lone.index("x = ") + 4, workspace=False)
                if d[1] == "analogy"]
    wide = 'PAIRS = [\n    P_("7  (male)", "th"),\n    P_("8 (\n]\n'
    assert not [d for d in opened(idx, "file:///f.py", "python", wide, wide.index('P_("8 (') + 7, workspace=False)
                if d[1] == "analogy"]
    # not in the middle of a word (the word may go on), nor with text right of the cursor other than closers
    assert not [d for d in opened(idx, "file:///a.py", "python", text, off - 1, workspace=False) if d[1] == "analogy"]
    mid = head + "        retry=_first_set(retry,x\n    )\n"
    assert not [d for d in opened(idx, "file:///d.py", "python", mid, off, workspace=False) if d[1] == "analogy"]
    closer = head + "        retry=_first_set(retry,)\n"
    assert (" self.retry),", "analogy", True) in opened(
        idx, "file:///e.py", "python", closer, off, workspace=False)
    # the gate reads an analogy as the nearby `prefix` line it is
    vec = feature_vector(Candidate("x", source="analogy", features={"strength": 0.9, "here": 1.0}))
    assert vec["src_prefix"] == 1.0 and vec["prefix*strength"] == 0.9


def test_predecessor_drafts_come_from_the_line_below():
    idx = ContextIndex()
    text = ("def a(x):\n    try:\n        return parse(x)\n    except ValueError:\n        return None\n\n\n"
            "def b(x, default):\n    \n        return parse(x)\n    except KeyError:\n        return default\n")
    off = text.index("default):\n    \n") + len("default):\n    ")
    here = {"workspace": False, "before": True}
    # nothing above the cursor was seen before, but the line below was: what came before it is a draft
    assert opened(idx, "file:///p.py", "python", text, off, **here) == [("try:", "predecessor", True)]
    assert not opened(idx, "file:///p.py", "python", text, off, workspace=False)  # only when asked for
    # typed characters filter them; from another document they are found too, not here
    for chars, want in (("tr", ["y:"]), ("ex", [])):
        d = opened(idx, "file:///p.py", "python", text[:off] + chars + text[off:], off + 2, **here)
        assert [t for t, source, _ in d if source == "predecessor"] == want
    idx.open("file:///p.py", "python", text)
    lone = "def c(x, y, z):\n    \n        return parse(x)\n"
    assert opened(idx, "file:///q.py", "python", lone, lone.index("    \n") + 4, before=True)[0] == (
        "try:", "predecessor", False)
    # the line above a blank cursor line pairs with the line below it in the index: neither is offered for that
    # pair (as the line above's successor, or the line below's predecessor)
    own = "a = load()\n\nb = a.x\n"
    assert not opened(idx, "file:///r.py", "python", own, own.index("\n\n") + 1, **here)
    twice = "a = load()\nb = a.x\n\nc = 1\n" + own
    assert sorted(opened(idx, "file:///r.py", "python", twice, twice.rindex("\n\n") + 1, **here)) == [
        ("a = load()", "predecessor", True), ("b = a.x", "successor", True)]
    # a pair above the cursor that does not reach its line is the file's: a line repeated right above still counts
    rep = "f()\nf()\n\ng()\n"
    assert opened(idx, "file:///r.py", "python", rep, rep.index("\n\n") + 1, workspace=False) == [
        ("f()", "successor", True)]


def test_comment_lines_are_drafts_only_once_a_comment_is_typed():
    idx = ContextIndex()
    text = "x = 1\n# set up the value\ny = 2\nx = 1\n\n"
    idx.open("file:///c.py", "python", text)
    off = len(text) - 1  # the blank line after the second `x = 1`
    # the line that followed `x = 1` was a comment: not offered where code goes
    assert all(not d.text.startswith("#") for d in idx.drafts("file:///c.py", "python", text, off))
    typed = text[:off] + "# s"
    d = idx.drafts("file:///c.py", "python", typed, len(typed))
    assert [x.text for x in d] == ["et up the value"]
    # C's `#include` and a dereference are code; JSDoc lines and doctest prompts are not
    assert not is_comment_line("#include <stdio.h>", "c") and not is_comment_line("*p = 0;", "c")
    assert is_comment_line(" * @param x", "javascript") and is_comment_line(">>> f(1)", "python")
    assert not is_comment_line("*args,", "python") and is_comment_line("-- note", "lua")


def test_shape_abstracts_names_numbers_and_strings():
    assert shape('self.a = a + 1  # "x"') == shape("self.b = b + 22  # 'y'")
    assert shape("return a") != shape("yield a")


def test_incremental_index_equals_a_fresh_one():
    """Random edits through the engine's change path leave the index as a full rebuild would."""
    from dgcomplete.engine import Engine

    eng = Engine(None)
    uri = "file:///r.py"
    eng.open(uri, SRC, 1, "python")
    rnd = random.Random(0)
    for v in range(2, 80):
        text = eng.session(uri).doc.text
        lines = text.split("\n")
        a = rnd.randrange(len(lines))
        b = min(len(lines) - 1, a + rnd.randrange(3))
        ca = rnd.randrange(len(lines[a]) + 1)
        cb = rnd.randrange(len(lines[b]) + 1) if b > a else rnd.randrange(ca, len(lines[a]) + 1)
        new = rnd.choice(["", "x", "self.q = q\n", "\n", "    return 1\n    ", "if a:\n        b\n", "\r\n"])
        eng.change(uri, v, [((a, ca, b, cb), new)])
        fresh = ContextIndex()
        fresh.open(uri, "python", eng.session(uri).doc.text)
        assert eng.context.lines_of(uri) == fresh.lines_of(uri)
        assert maps_of(eng.context, uri) == maps_of(fresh, uri)
    eng.close(uri)
    assert uri not in eng.context.docs


def test_index_is_bounded():
    from dgcomplete import context as cx

    idx = ContextIndex()
    idx.open("file:///big.py", "python", "x = 1\n" * (cx.MAX_DOC_LINES + 1))
    assert "file:///big.py" not in idx.docs  # too many lines: not indexed (the local scan still works)
    long = "y = '" + "a" * (cx.MAX_LINE_CHARS + 10) + "'\n"
    idx.open("file:///long.py", "python", long * 3)
    assert not idx.docs["file:///long.py"].maps.succ  # lines over the cap contribute nothing
    many = "".join(f"v{i} = {i}\n" for i in range(cx.MAX_BUCKET * 3))
    idx.open("file:///many.py", "python", many)
    assert all(len(c) <= cx.MAX_BUCKET for c in idx.docs["file:///many.py"].maps.by_head.values())


def test_python_parser_catches_what_tree_sitter_lets_through():
    text = "def f(x):\n    return \n\n\ndef g():\n    pass\n"
    off = text.index("return ") + len("return ")
    assert sound(text, off, "x + 1", "python") == ""
    assert sound(text, off, "return x", "python") == "python_parser"  # `return return x`
    text2 = "def f(items):\n    for \n"
    assert not python_sound(text2, text2.index("for ") + 4, "iter")  # `for iter` is no statement
    assert python_sound(text2, text2.index("for ") + 4, "x in items:\n        pass")
    # a file broken elsewhere: the parser cannot tell, tree-sitter's verdict stands
    broken = "def f(x):\n    return \n    y = (\n"
    assert python_sound(broken, broken.index("return ") + 7, "return x")
    # a new line inside a call's arguments, where `pass` is no neutral line: the line left blank is
    call = "def f(cl, a):\n    return g(\n        cl,\n        False,\n        \n        True,\n        type=a,\n    )\n"
    off = call.index("False,\n        \n") + len("False,\n        ")
    assert not python_sound(call, off, "type=a,")  # a positional argument after it: Python refuses the call
    assert python_sound(call, off, "False,")



def test_a_block_head_is_read_as_the_old_pattern_read_it_in_one_pass_over_long_lines():
    """``block_head_indent`` answers as the pattern it replaced (``([ \\t]*)[^\\s#].*:[ \\t]*(?:#[^'"]*)?$``) on
    every short line of these characters; on a long line of ``:#`` that pattern took a line's worth of work per
    colon, as JavaScript's import pattern did per `` from `` (a child process must return within a bound hundreds
    of times what it takes: without the fix these took minutes)."""
    import subprocess
    import sys

    from dgcomplete.syntax.strict import block_head_indent

    old = re.compile(r"([ \t]*)[^\s#].*:[ \t]*(?:#[^'\"]*)?$")
    rng = random.Random(7)
    for _ in range(20_000):
        line = "".join(rng.choice([" ", "\t", ":", "#", "'", '"', "a", "(", "if"]) for _ in range(rng.randrange(12)))
        m = old.match(line)
        assert block_head_indent(line) == (m.group(1) if m else None), repr(line)
    assert block_head_indent("    if x:  # a: 'b'") is None and block_head_indent("\tif x:  # why") == "\t"
    code = ("from dgcomplete.syntax.strict import block_head_indent, duplicate_import\n"
            "assert block_head_indent('a' + ':#' * 100000 + \"'\") is None\n"
            "line = 'import a' + \" from 'x\" * 60000\n"
            "assert not duplicate_import(line + '\\n' + line + '\\n', 0, '', 'javascript')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_python_parser_leaves_a_definition_of_more_than_max_chunk_chars_to_tree_sitter():
    """Python's parser read a 900 KB list never closed five times a candidate (1.2 s each); a definition longer than
    MAX_CHUNK_CHARS is left to tree-sitter's check, as one longer than MAX_CHUNK_LINES is."""
    from dgcomplete.syntax.strict import MAX_CHUNK_CHARS

    small = "def f(items):\n    for \n"
    assert not python_sound(small, small.index("for ") + 4, "iter")
    big = "def f(items):\n    data = [" + "1, " * (MAX_CHUNK_CHARS // 3) + "1]\n    for \n"
    assert python_sound(big, big.index("for ") + 4, "iter")  # cannot tell cheaply: True, tree-sitter decides

def test_a_clause_that_breaks_its_chain_is_caught_with_the_body_below_it():
    """``e`` typed where ``elif x:`` goes, its body below it and the chain's ``else:`` further down: ``else:`` would
    be the chain's second (typing the dev split, shown and wrong three times; the line left ``pass`` or as typed
    cannot parse above a body, so the parser could not tell). At the top level, a clause or a closing bracket at the
    line's start goes on with the statement above, and a decorator with the definition below."""
    chain = ("def f(value, now):\n    if isinstance(value, int):\n        date = value\n    e\n"
             "        date = now - value\n    else:\n        date = None\n    return date\n")
    off = chain.index("    e\n") + 5
    assert not python_sound(chain, off, "lse:")
    assert python_sound(chain, off, "lif isinstance(value, float):")
    tried = "def f(v):\n    try:\n        v = int(v)\n    \n        return str(v)\n    return v\n"
    off = tried.index("    \n        return") + 4
    assert not python_sound(tried, off, "else:")  # an `else:` needs an `except:` before it
    assert python_sound(tried, off, "except ValueError:") and python_sound(tried, off, "finally:")
    top = "import sys\n\ntry:\n    import _crypt\nex\n    _crypt = None\n\nx = 1\n"
    assert python_sound(top, top.index("ex\n") + 2, "cept ImportError:")  # the `try:` above is in the chunk
    assert not python_sound(top, top.index("ex\n") + 2, "it()")
    listed = "names = [\n    \n    'b',\n]\n\ny = 2\n"
    assert python_sound(listed, listed.index("    \n") + 4, "'a',")  # `]` at the line's start closes the list
    deco = "app = Flask(\n    __name__,\n)\n\n\n\ndef index():\n    return 1\n"
    off = deco.index("\n\ndef") + 1
    assert python_sound(deco, off, '@app.route("/")') and not python_sound(deco, off, '@app.route("/"')
    # inside a string (the document's tree says), where prose goes: a docstring's line that looks like a statement
    # start cut the module in two, and the parser refused the line the file had
    from dgcomplete.syntax import get_parser

    doc = '"""\nT\n"""\n\nimport sys\n'
    off = doc.index("T\n") + 1
    tree = get_parser("python").parse(doc.encode())
    assert not python_sound(doc, off, "he objects used by the site module.")  # without the tree it cannot see
    assert python_sound(doc, off, "he objects used by the site module.", tree)
    assert sound(doc, off, "he objects used by the site module.", "python", tree) == ""
    from bench.python_check import count

    checked = count("def f(x):\n    if x:\n        return 1\n    return 2\n", random.Random(0), 10)
    # four lines, each at 0, 1 and 2 characters; the two heads once more, before their bodies
    assert checked == {"code": [12, 0], "string": [0, 0], "head_before_body": [2, 0]}


def test_a_block_s_head_is_sound_before_its_body_is_written():
    """Code is written top down: ``if y:`` typed where what is written ends (a blank line, the block's end) is not
    an error the suggestion makes (the parser refused 69 % of such heads in the corpus,
    bench/results/python_check.json); right above a statement of its own indentation it is the wrong line, a head
    still has to fit where it goes, and a line that is no head still needs no body."""
    for text, cand, sound_ in (("def f(x):\n    y = 1\n    @\n\n    return y\n", "if y:", True),
                               ("def f(x):\n    if x:\n        y = 1\n        @\n    return y\n", "if y:", True),
                               ("def f(x):\n    y = 1\n    @\n    return y\n", "if y:", False),  # no code on its way
                               ("def f(x):\n    y = 1\n    @\n", "for i in y:  # each", True),
                               ("x = 1\n@\n", "def f():", True), ("class A:\n    @\n", "def f(self):", True),
                               ("def f(x):\n    y = 1\n    @\n    return y\n", "else:", False),
                               ("def f(x):\n    y = 1\n    @\n    return y\n", "if y", False),
                               ("def f(x):\n    y = 1\n    @\n        return y\n", "y = 2", False),
                               ("def f(x):\n    y = 1\n    @\n    return y\n", "# why:", True),
                               ("def f(x):\n    @\n\n    return x\n", "try:  # it may fail", True),
                               ("def f(x):\n    @\n    except ValueError:\n        pass\n", "try:", True),
                               ("def f(x):\n    @\n        y = g(x)\n    return y\n", "try:", True),  # wrapping code
                               ("def f(x):\n    @\n        y = g(x)\n    return y\n", "y = 2", False)):
        off = text.index("@")
        assert python_sound(text.replace("@", ""), off, cand) is sound_, (text, cand)


def test_no_identifier_glue_mid_line():
    text = "    return parse(val);\n"
    off = text.index("parse")
    assert glues(text, off, "value")
    assert not glues(text, off, "value + ")
    assert not glues("x = \n", 4, "value")
    assert sound(text, off, "value", "javascript") == "glues"


def test_a_line_that_says_nothing_is_not_suggested():
    """`///`, `#`, `# =`, a Python `""` statement: valid code, nothing to read (the model's way of ending early);
    comments with words stay where one is started, and `#` is no comment marker in JavaScript (private names) nor
    `//` in Python."""
    js = "function f(a) {\n  \n}\n"
    off = js.index("\n  \n") + 3
    assert sound(js, off, "///", "javascript") == "empty_comment"
    assert sound(js, off, "/* */", "javascript") == "empty_comment"
    assert sound(js, off, "// sum the items", "javascript") == "unasked_comment"
    noted = "function f(a) {\n  // the total\n  \n}\n"
    assert sound(noted, noted.index("\n  \n") + 3, "// sum the items", "javascript") == ""
    assert sound(js, off, "});", "javascript") == ""
    py = "def f(a):\n    \n    return a\n"
    off = py.index("    \n") + 4
    assert sound(py, off, "# =", "python") == "empty_comment"
    assert sound(py, off, "# 2 items", "python") == "unasked_comment"
    assert sound("x = a \n", 6, "// 2", "python") == ""
    assert sound("x = a \n", 6, "# -", "python") == "empty_comment"
    assert sound("x = \n", 4, "--", "lua") == "empty_comment"
    assert sound("{\n  \n}\n", 4, "//", "json") != "empty_comment"
    # a Python line that is only an empty string is a no-op statement; as a value or an element it is kept
    assert sound(py, off, '""', "python") == sound(py, off, "''''''", "python") == "empty_string"
    assert sound("x = \n", 4, '""', "python") == ""
    call = "f(\n    a,\n    \n)\n"
    assert sound(call, call.index("    \n") + 4, "''", "python") == ""
    assert sound(js, js.index("\n  \n") + 3, '"";', "javascript") == ""


def test_an_import_the_file_has_is_not_suggested():
    """Accepting the suggestion would repeat an import line the file has at its top level (retrieval offers the
    file's own lines): dropped in every language; a new import, and one scoped elsewhere, are kept."""
    py = "import sys\nfrom a import B\n\nif TYPE_CHECKING:\n    from c import D\n\ndef f():\n    \n"
    off = len(py) - 1
    assert sound(py, off, "import sys", "python") == "duplicate_import"
    assert sound(py, off, "from a import B", "python") == "duplicate_import"
    assert sound(py, off, "from c import D", "python") == ""  # the other one is under `if TYPE_CHECKING:`
    assert sound(py, off, "import os", "python") == sound(py, off, "sys.exit()", "python") == ""
    java = "import java.util.List;\nimport java.util.Map;\nimport java.util.\nclass A {}\n"
    off = java.index("java.util.\n") + len("java.util.")
    assert sound(java, off, "List;", "java") == "duplicate_import"
    assert sound(java, off, "Set;", "java") == ""
    go = 'package x\n\nimport "fmt"\nimport \nfunc f() {}\n'
    off = go.index("import \n") + 7
    assert sound(go, off, '"fmt"', "go") == "duplicate_import" and sound(go, off, '"os"', "go") == ""
    rs = "use std::io;\nfn f() {\n    use std::fmt;\n}\nfn g() {\n    \n}\n"
    off = rs.index("    \n") + 4
    assert sound(rs, off, "use std::io;", "rust") == "duplicate_import"
    assert sound(rs, off, "use std::fmt;", "rust") == ""  # scoped to f
    c = "#include <stdio.h>\n#include \nint x;\n"
    off = c.index("#include \n") + 9
    assert sound(c, off, "<stdio.h>", "c") == "duplicate_import" and sound(c, off, "<stdlib.h>", "c") == ""
    ts = 'import {Mark} from "./mark"\nimport \n'
    off = ts.index("import \n") + 7
    assert sound(ts, off, '{Mark} from "./mark"', "typescript") == "duplicate_import"
    assert sound(ts, off, '{Node} from "./node"', "typescript") == ""
    rb = 'require "json"\nrequire_relative "lib/a"\n\n'
    assert sound(rb, len(rb), 'require "json"', "ruby") == sound(rb, len(rb), 'require_relative "lib/a"', "ruby") \
        == "duplicate_import"
    assert sound(rb, len(rb), 'require "set"', "ruby") == ""
    php = "<?php\nuse Monolog\\Logger;\n\n"
    assert sound(php, len(php), "use Monolog\\Logger;", "php") == "duplicate_import"
    assert sound(php, len(php), "use Monolog\\Handler;", "php") == ""
    # the whole line the edit leaves counts: the rest of the line after the cursor too
    mid = "import java.util.List;\nimport java.util.;\n"
    assert sound(mid, mid.index(".;") + 1, "List", "java") == "duplicate_import"


def test_a_line_the_same_as_the_next_one_is_a_twin():
    """Accepting the suggestion would make the line the twin of the line right above or below it: the neighbour
    copied, not the line being written; lines of one name or none repeat legitimately and stay, and a blank line
    ends the neighbourhood (a notebook's next cell, one blank line down, may run the last line again)."""
    rows = "def f(self):\n    self.wait = wait\n    self.\n    self.stop = stop\n"
    off = rows.index("self.\n") + 5
    assert repeats_neighbour(rows, off, "stop = stop")  # below
    assert repeats_neighbour(rows, off, "wait = wait")  # above
    assert not repeats_neighbour(rows, off, "retry = retry")
    apart = "df = load(path)\ndf.describe()\n\ndf.\n"
    assert not repeats_neighbour(apart, len(apart) - 1, "describe()")
    js = "function f() {\n  if (a) {\n    g(a, b);\n    \n  }\n}\n"
    off = js.index("    \n  }") + 4
    assert repeats_neighbour(js, off, "g(a, b);") and not repeats_neighbour(js, off, "g(b, a);")
    # the rest of the line after the cursor counts: `g(` typed before `a, b);`
    mid = "g(a, b);\ng(\n"
    assert repeats_neighbour(mid, len(mid) - 1, "a, b);")
    # a closer, a keyword, one name: real code repeats them next to each other
    nested = "if (a) {\n  if (b) {\n    f();\n  }\n  \n}\n"
    assert not repeats_neighbour(nested, nested.index("  \n}") + 2, "}")
    assert not repeats_neighbour("try:\n    try:\n        \n", 17, "pass")
    assert not repeats_neighbour("#endif\n\n", 7, "#endif")


def test_the_base_rate_of_twins_counts_the_rule_s_lines():
    """bench.neighbour_twins counts with the engine's own rule: a twin of two names next to its line, a closer
    apart, a twin across a blank line not."""
    from bench.neighbour_twins import count

    text = "x = f(a)\nx = f(a)\n}\n}\ny = g(b)\n\ny = g(b)\n"
    assert count(text) == {"names_2_or_more": [4, 2], "names_0_or_1": [2, 2]}
    # the wider neighbourhood measured and left (twin_nearby_ab.json): one twin 2-10 lines away, of two names or more
    from bench.neighbour_twins import count_one_twin_nearby

    assert count_one_twin_nearby(text) == [4, 2]  # `y = g(b)` two lines from its twin; `x = f(a)` adjacent
    far = "a = f(b)\n" + "pass\n" * 11 + "a = f(b)\nc = d(e)\nc = d(e)\nc = d(e)\n"
    assert count_one_twin_nearby(far) == [5, 0]  # 12 lines apart; three of `c = d(e)` is a pattern


def test_the_twin_of_a_neighbouring_line_is_never_shown(tiny_mask_model):
    """Retrieval offers the rows around the cursor; the two next to it are twins of their neighbours and never
    shown (counted in the stats), the row further up may be."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    text = "def f(self):\n    self.retry = retry\n    x = 1\n    self.wait = wait\n    self.\n    self.stop = stop\n"
    uri = "file:///rows.py"
    eng.open(uri, text, 1, "python")
    eng.settings.update({"min_confidence": 0.0, "context_sources": ["document"]})
    comp = asyncio.run(eng.complete(uri, text.index("self.\n") + 5, n=3, seed=0))
    shown = [c.text for c in comp.items]
    assert "retry = retry" in shown and not {"wait = wait", "stop = stop"} & set(shown)
    assert comp.stats["dropped_repeats_neighbour"] == 2


def test_a_definition_the_scope_already_has_is_a_redefinition():
    """A definition line of a name a sibling (same indentation, same block) already defines: the copy of a nearby
    method, not the one being written; another block, a decorator or attribute, an overload signature, ``_`` and
    Go's ``init`` repeat names on purpose; code inside a string is not the scope's. Ruby and PHP methods too."""
    from dgcomplete.syntax import get_parser

    py = "class A:\n    def __le__(self, o):\n        return 1\n\n    def __l\n\n    def __eq__(self, o):\n        pass\n"
    off = py.index("def __l\n") + 7
    assert redefines(py, off, "e__(self, other):", "python") and redefines(py, off, "e__", "python")  # a word's rest
    assert not redefines(py, off, "t__(self, other):", "python")
    assert redefines(py, off, "e__(self, other):\n        return 2", "python")  # a block: its first line decides
    blank = py.replace("def __l\n", "\n")
    at = blank.index("    \n\n    def __eq") + 4
    assert redefines(blank, at, "def __eq__(self):", "python") and not redefines(blank, at, "def __ne__(self):", "python")
    other = "class A:\n    def f(self):\n        pass\n\n\nclass B:\n    \n"
    assert not redefines(other, len(other) - 1, "def f(self):", "python")  # another class
    setter = "class A:\n    @property\n    def x(self):\n        pass\n\n    @x.setter\n    \n"
    assert not redefines(setter, len(setter) - 1, "def x(self, v):", "python")
    decorated = "@overload\ndef f(a: int) -> int: ...\n\n\n"
    assert not redefines(decorated, len(decorated) - 1, "def f(a):", "python")
    # a decorator that does not say so is no excuse: `@synchronized(lock)` above the first `register`
    locked = "@synchronized(lock)\ndef register(hook, name):\n    pass\n\n\n"
    assert redefines(locked, len(locked) - 1, "def register(hook, name):", "python")
    assert not redefines("def _(x):\n    pass\n\n\n", 22, "def _(y):", "python")
    doc = 'def f():\n    """Example:\n\n    class A:\n        pass\n    """\n    \n'
    at = len(doc) - 1
    assert redefines(doc, at, "class A:", "python")  # without the tree, the docstring's text reads as code
    assert not redefines(doc, at, "class A:", "python", get_parser("python").parse(doc.encode()))
    js = "class C {\n  outputHelp() {\n    return 1;\n  }\n\n  out\n}\n"
    off = js.index("  out\n") + 5
    assert redefines(js, off, "putHelp() {", "javascript") and not redefines(js, off, "putVersion() {", "javascript")
    assert not redefines(js, off, "putHelp();", "javascript")  # a call, not a definition
    ts = "export function f(a: string): string;\n\n"
    assert not redefines(ts, len(ts) - 1, "export function f(a: number): number;", "typescript")  # overloads
    fn = "function isHex(c) {\n  return c;\n}\n\n"
    assert redefines(fn, len(fn) - 1, "function isHex(c) {", "javascript")
    assert redefines("const a = 1;\n\n", 13, "const a = 2;", "typescript")
    go = "type V struct{}\n\nfunc (v V) Major() int {\n\treturn 1\n}\n\n"
    assert redefines(go, len(go) - 1, "func (x V) Major() int {", "go")
    assert not redefines(go, len(go) - 1, "func (v V) Minor() int {", "go")
    assert not redefines(go, len(go) - 1, "func (v W) Major() int {", "go")  # another type's method
    inits = "func init() {\n}\n\n"
    assert not redefines(inits, len(inits) - 1, "func init() {", "go")
    rs = "impl A {\n    #[cfg(unix)]\n    fn now() -> u64 {\n        1\n    }\n\n    \n}\n"
    at = rs.index("    \n}") + 4
    assert not redefines(rs, at, "fn now() -> u64 {", "rust")  # the first one is for unix only
    plain = rs.replace("    #[cfg(unix)]\n", "")
    assert redefines(plain, plain.index("    \n}") + 4, "fn now() -> u64 {", "rust")
    rb = "class A\n  def size\n    1\n  end\n\n  \nend\n\nclass A\n  def count\n  end\nend\n"
    at = rb.index("  \nend") + 2
    assert redefines(rb, at, "def size", "ruby") and not redefines(rb, at, "def length", "ruby")
    assert not redefines(rb, rb.index("  def count") + 2, "def size", "ruby")  # the class reopened: another block
    typed = rb.replace("  \nend", "  def si\nend", 1)
    at = typed.index("def si\n") + 6  # `size` ends the word, but `size?` or `size=` may be the name being written
    assert redefines(typed, at, "ze", "ruby") and not redefines(typed, at, "ze", "ruby", word=True)
    php = "<?php\nclass A {\n    public function getVersion() {\n    }\n\n    \n}\n"
    at = php.index("    \n}") + 4
    assert redefines(php, at, "public function getVersion()", "php")
    assert not redefines(php, at, "public function isZero()", "php")
    java = "class A {\n    void f(int a) {\n    }\n\n    \n}\n"
    assert not redefines(java, java.index("    \n}") + 4, "void f(String s) {", "java")  # Java overloads


def test_a_c_function_the_file_defines_is_a_redefinition():
    """C has no overloads: retrieval offers ``zix_tree_remove(ZixTree* t, ZixTreeIter* ti)`` again while
    ``zix_tree_insert`` is written under ``ZixStatus``. Only a copy of a definition's header (a body follows it) at
    the line's start counts; a prototype, another header of the name (C++ in a ``.h``), definitions on either side
    of a preprocessor conditional, macros and indented loop macros do not."""
    from dgcomplete.syntax import get_parser

    src = ("#include <stdio.h>\n\nstatic int helper(int x);\n\nZixStatus\nzix_tree_remove(ZixTree* t, ZixTreeIter* ti)\n"
           "{\n#ifdef VERIFY\n    check(t);\n#endif\n    list_each(p, h) {\n    }\n    list_each(p, h) {\n    }\n}\n\n"
           "#ifdef FAST\nint fast(void) { return 1; }\n#else\nint fast(void) { return 0; }\n#endif\n\n"
           "XMLPARSEAPI(void)\nXML_Free(void *p);\n\nZixStatus\n@\n\nint helper(int x) {\n    return x;\n}\n")
    off = src.index("@")
    text = src.replace("@", "")
    tree = get_parser("c").parse(text.encode())
    for cand in ("zix_tree_remove(ZixTree* t, ZixTreeIter* ti)", "zix_tree_remove(ZixTree *t, ZixTreeIter *ti) {",
                 "int helper(int x)", "static int helper(int x) {"):
        assert redefines(text, off, cand, "c", tree), cand
    for cand in ("zix_tree_find(ZixTree* t)", "zix_tree_remove(ZixTree* t,", "zix_tree_remove(ZixTree* t)",
                 "int helper(int x);", "int fast(void) {", "XMLPARSEAPI(void)", "sizeof(x)", "if (x)"):
        assert not redefines(text, off, cand, "c", tree), cand
    typed = text[:off] + "zix_tree_re" + text[off:]  # the rest of a word, on to the header's end
    assert redefines(typed, off + 11, "move(ZixTree* t, ZixTreeIter* ti)", "c", None, word=True)
    assert not redefines(typed, off + 11, "move", "c", None, word=True)  # a name alone may be a prototype's
    loop = src.index("    list_each(p, h) {\n    }\n}")
    assert not redefines(src, loop + 4, "list_each(p, h) {", "c")  # indented: a loop macro, not a definition
    assert not redefines(text, off, "zix_tree_remove(ZixTree* t, ZixTreeIter* ti)", "cpp", tree)  # C++ overloads


def test_a_java_public_class_is_named_for_its_file():
    """javac refuses a top-level public type named otherwise than its file: retrieval offered ``public class
    InputStreamPumper implements Runnable {`` at the top of DefaultProcessingEnvironment.java. Nested types, other
    languages and unsaved buffers (no file) are not checked; the rest of a word only where the file's name is not written
    from it."""
    from dgcomplete.engine import Engine

    text = "package x;\n\nimport java.util.List;\n\n\n"
    off = len(text) - 1
    path = "/src/org/a/DefaultProcessingEnvironment.java"
    for cand in ("public class InputStreamPumper implements Runnable {", "public final class Other {",
                 "public interface Other {", "public record Point(int x, int y) {"):
        assert misnamed_public_type(text, off, cand, "java", path), cand
    for cand, name in (("public class DefaultProcessingEnvironment {", path), ("class Helper {", path),
                       ("public class Other {", None), ("public class Other {", "/a/other.kt")):
        assert not misnamed_public_type(text, off, cand, "java", name), (cand, name)
    nested = "public class DefaultProcessingEnvironment {\n    \n}\n"
    assert not misnamed_public_type(nested, nested.index("    \n") + 4, "public static class Inner {", "java", path)
    typed = text + "public class Default"
    assert not misnamed_public_type(typed, len(typed), "Processing", "java", path, word=True)
    assert misnamed_public_type(typed, len(typed), "Executor", "java", path, word=True)
    doc = "package x;\n\nclass DefaultExecutor {}\n\npublic class Default\n"
    at = doc.index("Default\n") + 7
    assert Engine._word_head(doc, at, "Executor {", "java", None).startswith("Executor")  # no name: unchecked
    assert Engine._word_head(doc, at, "Executor {", "java", None, path) == ""
    from bench.java_public_types import count

    assert count("package a;\npublic class B {\n    public class C {}\n}\npublic class D {}\n", "a/B.java") == [2, 1]


def test_the_base_rate_of_redefinitions_counts_the_rule_s_lines():
    """bench.redefinitions runs the engine's own rule on each definition of a file, as if it were being typed."""
    from bench.redefinitions import count

    text = "def f():\n    pass\n\n\ndef g():\n    pass\n\n\ndef f():\n    pass\n"
    assert count(text, "python") == [3, 2]  # both f's see the other
    assert count("class A:\n    def f(self):\n        pass\n", "python") == [2, 0]
    assert count("int f(void);\n\nint\nf(void)\n{\n}\n\nint\nf(void)\n{\n}\n", "c") == [3, 2]


def test_a_definition_the_class_has_is_never_shown_nor_its_name(tiny_mask_model):
    """Retrieval offers the class's other methods while ``def __`` is typed: those the class has are ranked and
    dropped (counted in the stats), the others may show; the rest of a word that names a method the class has is
    not shown either, where the gate hides the line."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    text = ("class A:\n    def __le__(self, other):\n        return 1\n\n    def __\n        return 0\n\n\nclass B:\n"
            "    def __lt__(self, other):\n        return 2\n")
    uri = "file:///methods.py"
    eng.open(uri, text, 1, "python")
    eng.settings.update({"min_confidence": 0.0, "context_sources": ["document"]})
    off = text.index("def __\n") + 6
    comp = asyncio.run(eng.complete(uri, off, n=3, seed=0))
    shown = [c.text for c in comp.items]
    assert not any(t.startswith("le__") for t in shown) and comp.stats.get("dropped_redefines", 0) >= 1
    # `def __l`: the document has `__le__` and `__lt__`; the rest of the word the engine shows under the gate
    text2 = text.replace("def __\n", "def __l\n")
    off2 = off + 1
    assert word_head(text2, off2, "e__(self, other):").startswith("e__")  # and on, as far as the file agrees
    assert Engine._word_head(text2, off2, "e__(self, other):", "python", None) == ""  # class A has it
    assert Engine._word_head(text2, off2, "t__(self, other):", "python", None).startswith("t__")  # class B's only


def test_a_rival_ranked_first_still_gives_the_word_being_typed(tiny_mask_model):
    """The only line is the twin of the line above (``self.wait = wait`` again): never shown, but the word being
    typed in it is the best guess there is, and shows as the rest of the word (before, nothing was shown)."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    text = "def f(self):\n    self.stop = stop\n    self.wait = wait\n    self.w\n"
    uri = "file:///rival.py"
    eng.open(uri, text, 1, "python")
    eng.settings.update({"min_confidence": 0.5, "context_sources": ["document"]})
    comp = asyncio.run(eng.complete(uri, text.index("self.w\n") + 6, seed=0))
    assert [(c.text, c.source) for c in comp.items] == [("ait", "word")]
    assert comp.stats["dropped_repeats_neighbour"] == 1


def test_a_header_that_names_a_parameter_twice_is_not_suggested():
    """``function skip(state, comments, state) {``: the model repeats the first parameter to fill a list it cannot
    see the end of; an error in Python and strict JavaScript. Calls, conditions, destructuring, defaults with
    commas and arrow functions as arguments are no headers, or name nothing twice."""
    blank = "x\n\n"
    for cand, lang in (("def f(self, a, a):", "python"), ("def f[T](a: T, a: T) -> T:", "python"),
                       ("function skip(state, comments, state) {", "javascript"),
                       ("const f = (a, b, a) => a", "typescript"), ("async (req, res, req) => {", "javascript"),
                       ("constructor(private a: string, public a: number) {", "typescript")):
        assert sound(blank, 2, cand, lang) == "duplicate_parameters", cand
    for cand, lang in (("def f(self, a, b=(1, 2), *args, **kw):", "python"), ("def f(*, a, b):", "python"),
                       ("foo(a, a)", "javascript"), ("if (a, a) {", "javascript"), ("f({a, b}, [a, b]) {", "javascript"),
                       ("foo(a, (b) => b, a)", "javascript"), ("items.map((x, i) => f(x, x))", "typescript")):
        assert not duplicate_parameters(blank, 2, cand, lang), cand
    typed = "x\ndef step(self, \n"  # what is typed counts: `self` typed, `self):` suggested
    assert sound(typed, len(typed) - 1, "self):", "python") == "duplicate_parameters"
    from bench.duplicate_parameters import count

    assert count("def f(a, b):\n    pass\ndef g(a, a):\n    f(a, a)\n", "python") == [2, 1]


def test_a_return_where_no_statement_begins_is_not_the_word_s_rest():
    """``if (pos == 0) return re`` + ``turn``, ``x = re`` + ``turn``, ``types: r`` + ``eturn``: the model's favourite
    word where a name or an expression must come. A statement may begin at the line's start, after a brace, ``;``,
    ``if (...)``, ``else``, a case's or a label's ``:``, Python's one-line ``if x:``; a property may be named
    ``return`` in JavaScript; strings, comments and macros are left alone, Rust and Ruby not checked."""
    from dgcomplete.engine import Engine
    from dgcomplete.syntax import get_parser

    def hidden(line: str, rest: str, lang: str) -> bool:
        text = "x\n" + line + "\n"
        off = text.index("|")
        text = text.replace("|", "", 1)
        return misplaced_statement_word(text, off, rest, lang, get_parser(lang).parse(text.encode()))

    for line, rest, lang in (("  if (pos == 0) return re|", "turn", "javascript"), ("    x = re|", "turn", "python"),
                             ("    if ok: return re|", "turn", "python"), ("function re|", "turn", "javascript"),
                             ("function search(m: Match, types: r|", "eturn", "typescript"),
                             ("    final List<CSVRecord> r|", "eturn", "java"), ("  x ? y : re|", "turn", "javascript"),
                             ("    foo(a, b|", "reak", "go"), ("    y = pa|", "ss", "python"), ("  $x = re|", "turn", "php"),
                             ("    it.re|", "turn", "java")):
        assert hidden(line, rest, lang), (line, lang)
    for line, rest, lang in (("    re|", "turn", "python"), ("    if ok: re|", "turn", "python"),
                             ("  if (pos == 0) re|", "turn x;", "javascript"), ("  } else re|", "turn", "javascript"),
                             ("  case 'a': re|", "turn", "javascript"), ("  default: b|", "reak", "c"),
                             ("\tcase x == 1: re|", "turn", "go"), ("  outer: con|", "tinue", "javascript"),
                             ("  it.re|", "turn()", "javascript"), ("  $o->re|", "turn", "php"),
                             ("    x = re|", "turned", "python"), ('    s = "we re|"', "turn", "python"),
                             ("    # we re|", "turn", "python"), ("#define RET re|", "turn", "c"),
                             ("    let x = re|", "turn", "rust"), ("  x = y or re|", "turn", "ruby")):
        assert not hidden(line, rest, lang), (line, lang)
    # through the engine: the document has `return` and `retIndex`, the word head `turn` is not shown
    text = "function f(pos) {\n  if (pos == 1) return retIndex(1, pos)\n  if (pos == 0) return ret\n}\n"
    off = text.index("ret\n") + 3
    assert word_head(text, off, "urn 0") == "urn"
    assert Engine._word_head(text, off, "urn 0", "javascript", None) == ""
    assert Engine._word_head(text, off, "Index(0, pos)", "javascript", None).startswith("Index")
    from bench.statement_words import count

    assert count("def f(x):\n    if x: return 1\n    return 2  # a return\n", "python") == [2, 0]
    assert count("int f(int x) {\n  return x + return;\n}\n", "c") == [2, 1]


def test_a_closer_the_code_above_does_not_place_is_not_suggested():
    """``} else {`` offered in the middle of a body (nothing typed, the editor's indentation: the body's) would close
    the block there and make the lines below an ``else`` block; a ``}`` is kept where the code above places it: after
    the line that opened the block at its indentation, past a Go switch's ``case`` labels, past a comment, in a
    prettier ternary, and where tabs and spaces mix so that the indentation cannot be read."""
    from dgcomplete.syntax.strict import misplaced_closer

    def refused(src: str, cand: str, lang: str) -> bool:
        text, off = src.replace("|", ""), src.index("|")
        return misplaced_closer(text, off, cand, lang)

    js = "function f(x) {\n  if (x) {\n    a()\n  } else if (y) {\n    b = 1\n    |\n    c = 2\n  }\n}\n"
    assert refused(js, "} else {", "javascript") and sound(js.replace("|", ""), js.index("|"), "} else {",
                                                           "javascript") == "misplaced_closer"
    assert not refused(js, "c = 3", "javascript")  # not a closer
    assert not refused(js.replace("    |", "    } |"), "else {", "javascript")  # the user typed the `}`
    # where a `}` goes: at the indentation of the line that opened the block
    assert not refused("function f(x) {\n  if (x) {\n    a()\n  |\n}\n", "} else {", "javascript")
    assert not refused("int f(int x) {\n  if (x &&\n      y) {\n    a();\n  |\n}\n", "}", "c")
    go = "func f(x int) {\n\tswitch {\n\tcase x > 0:\n\t\tg()\n\t|\n}\n"
    assert not refused(go, "}", "go") and refused("func f() {\n\tg()\n\t|\n\th()\n}\n", "}", "go")
    assert not refused("if (a) {\n  b()\n\n// the other case\n|\n", "} else {", "javascript")  # js-yaml's style
    ternary = "type T<A> = A extends B\n  ? {\n      a: A\n    |\n  : never\n"
    assert not refused(ternary, "}", "typescript")
    mixed = "int f(void) {\n    switch (x) {\n    case 1:\n\treturn 1;\n    |\n}\n"  # a tab of 8 columns
    assert not refused(mixed, "}", "c")
    assert not refused("def f():\n    a = 1\n    |\n", "}", "python")
    cases = "func f(w string) bool {\n\tswitch w {\n\tcase \"A\",\n\t\t\"B\":\n\t\treturn true\n\t|\n\treturn false\n}\n"
    assert not refused(cases, "}", "go")  # a case over two lines
    # the lines of a raw string (read with the document's tree), and a comment line's `}`, are not the code's
    raw = "func f() []byte {\n\ts := `\nab\ncd`\n\treturn g(s)\n|\n"
    text, off = raw.replace("|", ""), raw.index("|")
    from dgcomplete.syntax.document import parse

    assert sound(text, off, "}", "go", parse(text, "go")) == ""
    assert not refused("export {\n\ta,\n\tb,\n// } from 'x';\n|\n", "} from './y.js';", "typescript")
    assert not refused("namespace a {\nint f();\n|\n", "}  // namespace a", "c")  # C++ does not indent these


def test_a_value_ordered_against_itself_is_not_suggested():
    """``index <`` + `` index;``: always false, what linters flag; ``==`` is left alone (``x === x`` tests for NaN), so
    are longer operands (``a + n < n``), generics (``Foo<Foo>``) and a comparison the user typed whole."""
    from dgcomplete.syntax.strict import self_comparison

    def refused(typed: str, cand: str) -> bool:
        text = "f() {\n  " + typed + "\n}\n"
        return self_comparison(text, text.index(typed) + len(typed), cand)

    assert refused("return 0 <= index && index <", " index;") and refused("if (p.n >= ", "p.n) {")
    py = "x = 1\nwhile i > \n"
    assert sound(py, len(py) - 1, "i:", "python") == "self_comparison"
    assert not refused("return 0 <= index && index <", " values.length;")
    assert not refused("return value ===", " value") and not refused("if (x ==", " x) {")
    assert not refused("if (a + n <", " n) {") and not refused("impl<T: Eq> Eq for Foo<", "Foo> {")
    assert not refused("if (i < i", ") {")  # typed whole by the user: not the suggestion's doing


def test_a_line_of_modifiers_only_is_not_suggested():
    """`public`, `public static`, `pub`, `const` alone, or a stutter (`private static final final`): a declaration
    stopped early, which no style breaks across lines; a whole declaration, and C's GNU/Allman heads, are kept."""
    java = "class A {\n    \n}\n"
    off = java.index("    \n") + 4
    for cand in ("public", "public static", "private static final final", "final"):
        assert sound(java, off, cand, "java") == "dangling_modifiers", cand
    for cand in ("public static void main(String[] args) {", "static final int X = 1;", "default:", "return x;"):
        assert sound(java, off, cand, "java") == "", cand
    blank = "x\n\n"
    assert sound(blank, 2, "pub", "rust") == sound(blank, 2, "const", "typescript") == "dangling_modifiers"
    assert sound(blank, 2, "static", "c") == sound(blank, 2, "func", "go") == "dangling_modifiers"
    assert sound(blank, 2, "pub fn f() {", "rust") == sound(blank, 2, "const x = 1", "typescript") == ""
    assert sound(blank, 2, "typedef struct", "c") == sound(blank, 2, "static unsigned", "c") == ""
    assert sound(blank, 2, "return", "python") == ""  # a whole statement there
    php = "<?php\nclass A {\n    \n}\n"
    off = php.index("    \n") + 4
    assert sound(php, off, "public static", "php") == "dangling_modifiers"
    assert sound(php, off, "public static function f(): int", "php") == ""
    assert sound("class A\n  \nend\n", 10, "private", "ruby") == ""  # Ruby's visibility for the defs below
    # what is already typed counts: `public` typed, `static` suggested
    typed = "class A {\n    public \n}\n"
    assert sound(typed, typed.index("public ") + 7, "static", "java") == "dangling_modifiers"


def _at(src: str, lang: str, cand: str) -> str:
    """sound() at the ``@`` of ``src``, with the document's tree as the engine passes it."""
    from dgcomplete.syntax.document import parse

    off = src.index("@")
    text = src.replace("@", "", 1)
    return sound(text, off, cand, lang, parse(text, lang))


def test_a_return_that_does_not_fit_the_function_is_not_suggested():
    """Retrieval copies `return nil, err` into functions with other results and the model guesses `return;`:
    a return the enclosing function cannot compile is dropped (Go, Java, C); what fits, or cannot be told, stays."""
    go = "package x\n\nfunc f(a int) (bool, error) {\n\tif a > 0 {\n\t\t@\n\t}\n\treturn true, nil\n}\n"
    for cand in ("return true", "return"):
        assert _at(go, "go", cand) == "return_mismatch", cand
    for cand in ("return true, nil", "return g()", "return nil, err", "x := 1"):  # one call may give both
        assert _at(go, "go", cand) == "", cand
    main = "package x\n\nfunc main() {\n\tif err != nil {\n\t\t@\n\t}\n}\n"
    assert _at(main, "go", "return nil, err") == "return_mismatch" and _at(main, "go", "return") == ""
    named = "package x\n\nfunc p(s string) (head, tail string) {\n\t@\n}\n"
    assert _at(named, "go", "return") == "" and _at(named, "go", "return s") == "return_mismatch"
    closure = "package x\n\nfunc p() error {\n\tf := func() {\n\t\t@\n\t}\n\treturn nil\n}\n"
    assert _at(closure, "go", "return nil") == "return_mismatch"  # the literal around the cursor counts
    assert _at("package x\n\nfunc main() {\n\tret@\n}\n", "go", "urn 1") == "return_mismatch"  # typed part too
    java = "class A {\n  A(int x) {\n    @\n  }\n  long g() {\n    return 1;\n  }\n}\n"
    assert _at(java, "java", "return x;") == "return_mismatch" and _at(java, "java", "return;") == ""
    assert _at("class A {\n  long g() {\n    @\n  }\n}\n", "java", "return;") == "return_mismatch"
    lam = "class A {\n  void g() {\n    Runnable r = () -> {\n      @\n    };\n  }\n}\n"
    assert _at(lam, "java", "return 1;") == ""  # a lambda's type is not in the tree
    c = "void f(int a)\n{\n  if (a) {\n    @\n  }\n}\n"
    assert _at(c, "c", "return 1;") == "return_mismatch" and _at(c, "c", "return;") == ""
    assert _at("void *g(int a)\n{\n  @\n}\n", "c", "return;") == "return_mismatch"  # a pointer is a value
    assert _at("void *g(int a)\n{\n  @\n}\n", "c", "return NULL;") == ""
    assert _at("def f():\n    @\n", "python", "return 1") == ""  # no static signature to hold it to


def test_a_comment_is_suggested_only_where_one_is_started():
    """Model prose (`// The first time is used to ...`, a trailing `# noqa`) is dropped where code goes; a comment
    stays where the user opened one, continues a comment block, or sits inside a comment or a string."""
    go = "package x\n\nfunc f() {\n\t@\n}\n"
    for cand in ("// The first time is used to the same as the name", "/* x */ y := 1"):
        assert _at(go, "go", cand) == "unasked_comment", cand
    assert _at(go, "go", "x := 1 // one") == ""  # code first: a trailing comment the model ended with is kept
    assert _at("def f(x) -> str@\n", "python", " # noqa:") == "unasked_comment"
    assert _at("x = 1  # @\n", "python", "noqa") == ""  # typed after the marker
    assert _at("def f():\n    # step one\n    @\n    return 1\n", "python", "# step two") == ""  # a block goes on
    assert _at("fn f() {\n    //@\n}\n", "rust", "/ doc") == ""
    assert _at("int f(void)\n{\n  if (c == 0x23/* #@\n}\n", "c", "*/) {") == ""  # closing a typed comment
    assert _at("/*\n * one\n@\n */\n", "c", "// two") == ""  # inside a block comment
    doc = 'def f():\n    """Text.\n\n    @\n    """\n'
    assert _at(doc, "python", "# not a comment in a docstring") == ""


def test_gate_prior_and_file(tmp_path):
    g = Gate.load(None)
    good = Candidate("x", source="prefix", features={"mean_lp": -0.2, "end_lp": -0.1, "strength": 0.9})
    bad = Candidate("x", source="prefix", features={"mean_lp": -6.0, "end_lp": -3.0, "strength": 0.9})
    assert 0 <= g.confidence(bad) < g.confidence(good) <= 1
    (tmp_path / "gate.json").write_text('{"weights": {"src_prefix": 3.0}, "bias": -1.0}')
    fitted = Gate.load(tmp_path)
    assert fitted.confidence(good) > fitted.confidence(Candidate("x", source="diffusion", features={"a": 1.0}))
    (tmp_path / "gate.json").write_text('{"weights": {"mean_lp": NaN}, "bias": 0}')
    assert Gate.load(tmp_path).fitted_on.startswith("prior")  # a broken file falls back, never raises
    # a language of its own threshold (one the network never saw); the rest keep the gate's
    (tmp_path / "gate.json").write_text('{"weights": {}, "bias": 0, "threshold": 0.3, "thresholds": {"ruby": 0.7}}')
    by_lang = Gate.load(tmp_path)
    assert (by_lang.threshold_for("ruby"), by_lang.threshold_for("python"), by_lang.threshold_for(None)) == (0.7, 0.3, 0.3)
    (tmp_path / "gate.json").write_text('{"weights": {}, "bias": 0, "thresholds": {"ruby": 7}}')
    assert Gate.load(tmp_path).fitted_on.startswith("prior")
    x = feature_vector(Candidate("t", source="successor", features={"mean_lp": -1.0, "tokens": 3}))
    assert x["src_successor"] == 1.0 and x["src_prefix"] == 0.0 and x["successor*mean_lp"] == -1.0
    assert "prefix*mean_lp" not in x
    # a predecessor draft (the same line pairs read from below) is read as the successor drafts it was fitted on
    assert feature_vector(Candidate("t", source="predecessor", features={"mean_lp": -1.0, "tokens": 3})) == x
    # two decoded rows (or two drafts) that wrote the same text: the gate sees how many agreed
    assert feature_vector(Candidate("t", source="diffusion", features={"dups": 1.0}))["dups"] == 1.0
    assert x["dups"] == 0.0


def test_scorer_ranks_drafts_and_reports_features(tiny_mask_model):
    """Real (tiny, random) checkpoint: every candidate gets the scorer's features, drafts included."""
    from dgcomplete.local import LocalInfiller
    from dgcomplete.model import load_model
    from dgcomplete.types import InfillRequest, SpanKind, SpanPlan

    inf = LocalInfiller(load_model(tiny_mask_model))
    req = InfillRequest("def f(a):\n    return ", "\n", SpanPlan(SpanKind.LINE, 1, 16), "python", seed=0,
                        doc_key="k", drafts=[Candidate("a + 1", source="successor", features={"strength": 1.0})])
    res = inf.infill(req)
    assert res.stats["scored"] >= 1 and any(c.source == "successor" for c in res.candidates)
    for c in res.candidates:
        assert {"mean_lp", "min_lp", "end_lp", "tokens", "total"} <= set(c.features)
        assert c.features["mean_lp"] <= 0 and c.features["min_lp"] <= c.features["mean_lp"] + 1e-6
    totals = [c.features["total"] for c in res.candidates]
    assert res.candidates and len(totals) == len(res.candidates)
    # only the drafts: no sampling at all
    only = inf.infill(InfillRequest("def f(a):\n    return ", "\n", SpanPlan(SpanKind.LINE, 1, 16), "python",
                                    seed=0, doc_key="k", sample=False, drafts=req.drafts))
    assert [c.text for c in only.candidates] == ["a + 1"]
    assert only.stats["steps"] == 0


def test_what_would_not_be_shown_is_not_scored(tiny_mask_model):
    """The engine's checks run before the scorer: dropped candidates cost no scoring rows, cut ones are scored
    (and shown) as cut, and a draft that the cut makes equal to another is scored once."""
    from dgcomplete.local import LocalInfiller
    from dgcomplete.model import load_model
    from dgcomplete.types import InfillRequest, SpanKind, SpanPlan

    inf = LocalInfiller(load_model(tiny_mask_model))
    drafts = [Candidate("a + 1\nmore", source="successor", features={"strength": 1.0}),
              Candidate("a + 1", source="shape", features={"strength": 0.5}),
              Candidate("return return", source="prefix", features={})]
    seen: list[str] = []

    def vet(text: str) -> tuple[str, str]:
        seen.append(text)
        if text.startswith("return"):
            return text, "syntax"
        return text.split("\n", 1)[0], ""

    req = InfillRequest("def f(a):\n    return ", "\n", SpanPlan(SpanKind.LINE, 1, 16), "python", seed=0,
                        doc_key="k", sample=False, drafts=drafts)
    res = inf.infill(req, vet=vet)
    assert seen == [d.text for d in drafts]
    assert [c.text for c in res.candidates] == ["a + 1"] and res.stats["scored"] == 1
    top = res.candidates[0]
    assert top.source == "successor" and top.features["cut"] == 1.0 and top.features["dups"] == 1.0
    assert res.drops == {"syntax": 1} and [c.text for c in res.dropped] == ["return return"]  # as written
    none = inf.infill(req, vet=lambda t: (t, "empty"))
    assert none.candidates == [] and none.stats["scored"] == 0 and none.drops == {"empty": 3}
    assert [c.text for c in none.dropped] == [d.text for d in drafts]
    assert inf.infill(req).drops is None  # no checks given: post-processing will run them


def test_the_gate_threshold_follows_the_documents_language(tiny_mask_model):
    """A language with a threshold of its own in gate.json is gated by it; a session's minConfidence still wins."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    eng.gate.threshold, eng.gate.thresholds = 0.0, {"ruby": 1.0}
    text = "def f(a)\n  a + 1\nend\n\ndef g(a)\n  \nend\n"
    eng.open("file:///g.rb", text, 1, "ruby")

    async def go():
        return await eng.complete("file:///g.rb", text.rindex("  \nend") + 2, seed=0)

    comp = asyncio.run(go())
    assert comp.items == [] and "confidence gate" in comp.reason and comp.stats["min_confidence"] == 1.0
    eng.settings.min_confidence = 0.0
    assert asyncio.run(go()).items


def test_a_language_without_a_grammar_gets_retrieval_and_its_own_gate(tiny_mask_model):
    """Kotlin has no grammar here: its documents are still read for drafts (its own lines, the other open Kotlin
    documents, not a Python one), under the gate's threshold for languages without a grammar."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model
    from dgcomplete.syntax import text_language

    assert text_language("kotlin", "file:///a/Main.kt") == text_language(None, "/a/Main.kt") == "text:.kt"
    assert text_language("kotlin", "untitled:Untitled-1") == "text:kotlin" and text_language(None, "Makefile") is None
    eng = Engine(load_model(tiny_mask_model), threads=1)
    eng.settings.min_confidence = 0.0
    text = "val total = items.sumOf { it.price }\nprintln(total)\n\nval count = items.size\n"
    eng.open("file:///Main.kt", text, 1, "kotlin")
    eng.open("file:///Other.kt", "fun f() {\n    val count = items.size\n    logger.info(count)\n}\n", 1, "kotlin")
    eng.open("file:///x.py", "val count = items.size\nprint(count)\n", 1, "python")
    s = eng.session("file:///Main.kt")
    assert s.lang is None and s.retrieval_lang == "text:.kt"

    async def go():
        return await eng.complete("file:///Main.kt", len(text), seed=0, n=3)

    comp = asyncio.run(go())
    got = {c.text: c.source for c in comp.items}
    assert got.get("logger.info(count)") == "successor" and "print(count)" not in got
    eng.settings.min_confidence = None
    eng.gate.threshold, eng.gate.thresholds = 0.0, {"other": 1.0}
    assert asyncio.run(eng.complete("file:///Main.kt", len(text), seed=0)).stats["min_confidence"] == 1.0


@pytest.mark.parametrize("floor,shown", [(0.0, True), (1.0, False)])
def test_gate_hides_below_min_confidence(tiny_mask_model, floor, shown):
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    eng.settings.min_confidence = floor
    text = "def f(a):\n    return a + 1\n\n\ndef g(a):\n    return \n"
    eng.open("file:///g.py", text, 1, "python")

    async def go():
        return await eng.complete("file:///g.py", text.rindex("return ") + 7, seed=0)

    comp = asyncio.run(go())
    if shown:
        assert comp.items and all(c.confidence is not None for c in comp.items)
        assert "a + 1" in [c.text for c in comp.items]  # the retrieved line survives and is ranked
        assert comp.items == sorted(comp.items, key=lambda c: -(c.confidence or 0))
    else:
        assert comp.items == [] and "confidence gate" in comp.reason


def test_typing_through_keeps_the_suggestion(tiny_mask_model):
    """A shown suggestion stays shown (its rest, same confidence) while the user types what it says."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    text = "def f(a):\n    return a + 1\n\n\ndef g(a):\n    return \n"
    uri = "file:///w.py"
    eng.open(uri, text, 1, "python")
    off = text.rindex("return ") + 7
    eng.settings.update({"min_confidence": 0.0, "context_sources": ["document"]})  # retrieval only: "a + 1" on top

    async def at(o: int):
        return await eng.complete(uri, o, seed=0)

    first = asyncio.run(at(off))
    shown = first.items[0]
    assert shown.text == "a + 1"
    eng.settings.min_confidence = (shown.confidence or 0.0) - 1e-6  # the gate lets exactly this one through
    typed = shown.text[:1]
    eng.change(uri, 2, [((5, 11, 5, 11), typed)])
    nxt = asyncio.run(at(off + 1))
    assert nxt.items and nxt.items[0].text == shown.text[1:] and nxt.items[0].source == "warm"
    assert nxt.items[0].confidence == shown.confidence
    # typing something else: no warm candidate any more
    eng.change(uri, 3, [((5, 12, 5, 12), "\u00e9")])
    other = asyncio.run(at(off + 2))
    assert all(c.source != "warm" for c in other.items)


@pytest.mark.parametrize(("name", "shown"), [("a", [(" + 1", "warm", 0.75)]), ("alpha", [("lpha", "word", 0.75)])])
def test_typing_through_a_line_the_model_writes_again(tiny_mask_model, name, shown):
    """With the model sampling, its canvas starts from the shown suggestion, so it writes the rest again: that
    rest still keeps the confidence it was shown with (scored as the model's own sample, it took the sample's far
    lower confidence, and a retrieved line went off and on at every other keystroke while it was typed). Inside a
    word (``alpha``), the rest of that word shows instead, as where the gate hides a line; Tab takes it."""
    from dgcomplete.engine import Engine
    from dgcomplete.local import WarmStart
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    text = f"def f({name}):\n    return {name} + 1\n\n\ndef g({name}):\n    return \n"
    uri = "file:///w.py"
    eng.open(uri, text, 1, "python")
    off = text.rindex("return ") + 7
    eng.settings.update({"min_confidence": 0.5, "context_sources": ["document", "diffusion"]})
    eng.session(uri).warm = WarmStart(text[:off], f"{name} + 1", 0.75)  # shown at 0.75
    eng.change(uri, 2, [((5, 11, 5, 11), "a")])
    nxt = asyncio.run(eng.complete(uri, off + 1, seed=0))
    assert nxt.stats["warm_start"] == 1
    assert [(c.text, c.source, c.confidence) for c in nxt.items] == shown


def test_typing_through_a_word_then_a_line_that_goes_on_from_it_shows_the_word(tiny_mask_model):
    """A word's rest was shown (``kens`` after ``g(to``) and the user typed through it: a retrieved line that goes
    on from what was shown (``ens[0])``) shows as the rest of the word, not the line; the two alternated at every
    keystroke before."""
    from dgcomplete.engine import Engine
    from dgcomplete.local import WarmStart
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    text = "def f(tokens):\n    g(tokens[0])\n\n\ndef h(tokens):\n    g(tok\n"
    uri = "file:///w.py"
    eng.open(uri, text, 1, "python")
    off = text.rindex("g(tok") + 5
    # the line's confidence from the tiny model is about 1e-6: a floor below it, and a word shown at less
    eng.settings.update({"min_confidence": 1e-15, "context_sources": ["document"]})
    eng.session(uri).warm = WarmStart(text[: off - 1], "kens", 1e-12)
    comp = asyncio.run(eng.complete(uri, off, seed=0))
    assert [(c.text, c.source) for c in comp.items] == [("ens", "word")]


def test_a_line_typed_on_from_past_a_word_does_not_come_back(tiny_mask_model):
    """A line shown, then the rest of a word from it shown and typed past (taken or typed): the user read the line
    and went on without it, so it is not shown again on this line (it came back at every word's end, a wrong
    line on screen while the user typed on); typing on through it without a word between keeps it (the line
    above), and so does another line, or the same line once the cursor is on another line."""
    from dgcomplete.engine import Engine, LineShown
    from dgcomplete.model import load_model

    shown = LineShown(10, {"return alpha + 1": 7}, [8])
    assert shown.declined(8) == set() and shown.declined(9) == {"return alpha + 1"}
    assert LineShown(10, {"x = 1": 9}, [8]).declined(12) == set()  # the word came before the line

    eng = Engine(load_model(tiny_mask_model), threads=1)
    text = "def f(alpha):\n    return alpha + 1\n\n\ndef g(alpha):\n    return \n"
    uri = "file:///d.py"
    eng.open(uri, text, 1, "python")
    off = text.rindex("return ") + 7
    eng.settings.update({"min_confidence": 1e-15, "context_sources": ["document"]})  # retrieval only, all shown

    def at(o: int):
        return asyncio.run(eng.complete(uri, o, seed=0))

    first = at(off)
    assert first.items[0].text == "alpha + 1"
    line = text[: off].count("\n")
    eng.change(uri, 2, [((line, 11, line, 11), "a")])
    word = at(off + 1)
    assert [(c.text, c.source) for c in word.items] == [("lpha", "word")]  # inside the word: its rest
    eng.change(uri, 3, [((line, 12, line, 12), "lpha")])  # taken (or typed)
    after = at(off + 5)
    assert all(not ("return alpha" + c.text).startswith("return alpha + 1") for c in after.items)
    assert after.stats["dropped_declined"] >= 1
    # the same line typed afresh on the next line is a new line: shown again
    eng.change(uri, 4, [((line, 16, line, 16), "\n    return ")])
    again = at(len(text[: off]) + len("alpha") + len("\n    return "))
    assert again.items and again.items[0].text == "alpha + 1"


def test_retrieval_stays_bounded_with_many_and_binary_documents():
    from dgcomplete import context as cx

    idx = ContextIndex()
    for i in range(40):  # 40 open documents; each "knows" its own successor of `if ready:`
        idx.open(f"file:///d{i}.py", "python", f"if ready:\n    go_{i}()\n")
    text = "if ready:\n    \n"
    idx.open("file:///t.py", "python", text)
    d = idx.drafts("file:///t.py", "python", text, text.index("    \n") + 4, limit=100)
    seen = {x.text for x in d}
    assert seen and seen <= {f"go_{i}()" for i in range(40 - ContextIndex.MAX_DOCS_QUERIED, 40)}
    # binary junk: indexed without error, its long lines ignored, lookups still answer
    junk = bytes(range(256)).decode("latin-1") * 40 + "\n\x00\x01\n"
    idx.open("file:///bin.py", "python", junk)
    assert idx.drafts("file:///bin.py", "python", junk, len(junk)) == []
    # the total is bounded: the least recently used documents leave the index first
    big = "x = 1\n" * (cx.MAX_DOC_LINES - 10)
    for i in range(5):
        idx.open(f"file:///big{i}.py", "python", big)
    assert idx.total <= cx.MAX_TOTAL_LINES + cx.MAX_DOC_LINES
    assert "file:///d0.py" not in idx.docs


def test_a_model_trained_to_score_the_end_decodes_and_scores_so(tiny_mask_model, tmp_path):
    """train --length-target end exports length_target/frontier_stop: the sampler ends spans at the frontier."""
    import json
    import shutil

    from dgcomplete.local import LocalInfiller
    from dgcomplete.model import load_model
    from dgcomplete.types import InfillRequest, SpanKind, SpanPlan

    d = tmp_path / "end"
    shutil.copytree(tiny_mask_model, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["dgcomplete"]["length_target"] = "end"
    (d / "config.json").write_text(json.dumps(cfg))
    inf = LocalInfiller(load_model(d))
    assert inf.frontier_stop and LocalInfiller(load_model(tiny_mask_model)).frontier_stop is False
    res = inf.infill(InfillRequest("def f(a):\n    return ", "\n", SpanPlan(SpanKind.LINE, 1, 16), "python", seed=0,
                                   doc_key="k", drafts=[Candidate("a + 1", source="prefix", features={})]))
    assert any(c.text == "a + 1" and "end_lp" in c.features for c in res.candidates)
    cfg["dgcomplete"]["length_target"] = "middle"
    (d / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(Exception, match="length_target"):
        load_model(d)


def test_invoked_alternatives_come_from_the_file_when_it_has_some(tiny_mask_model):
    """An Invoked request (several items) decodes one local row when the file gives drafts, else n rows."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    eng.settings.min_confidence = 0.0
    with_drafts = "def f(a):\n    return a + 1\n\n\ndef g(a):\n    return \n"
    bare = "def g(a):\n    return \n"
    eng.open("file:///d.py", with_drafts, 1, "python")
    eng.open("file:///b.py", bare, 1, "python")

    async def go(uri: str, text: str):
        return await eng.complete(uri, text.rindex("return ") + 7, n=3, seed=0)

    drafted = asyncio.run(go("file:///d.py", with_drafts))
    assert drafted.stats["drafts"] >= 1 and drafted.stats["rows"] == 1
    assert "a + 1" in [c.text for c in drafted.items]  # the draft is one of the items offered
    eng.context.close("file:///d.py")  # nothing to retrieve from: the model's own rows are the alternatives
    alone = asyncio.run(go("file:///b.py", bare))
    assert alone.stats["drafts"] == 0 and alone.stats["rows"] == 3


def test_match_and_predecessor_drafts_are_offered_when_invoked_only(tiny_mask_model):
    """The engine asks the index for ``match`` and ``predecessor`` drafts on Invoked requests; as you type they
    stay off."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    eng.settings.min_confidence = 0.0
    text = "def f(ch):\n    if ch == 'x': return False\n\n\ndef g(ch):\n    if ch == '_': return Fa\n"
    eng.open("file:///m.py", text, 1, "python")
    off = text.rindex("Fa") + 2

    invoked = asyncio.run(eng.complete("file:///m.py", off, n=3, seed=0))
    assert invoked.stats["drafts"] >= 1 and "lse" in [c.text for c in invoked.items]
    typing = asyncio.run(eng.complete("file:///m.py", off, seed=0))
    assert all(c.source != "match" for c in typing.items) and typing.stats["drafts"] == 0

    text = "def f(x):\n    try:\n        return parse(x)\n    except KeyError:\n        pass\n\n\n" \
        "def g(x, y):\n    \n        return parse(x)\n    except KeyError:\n        pass\n"
    eng.open("file:///p.py", text, 1, "python")
    off = text.index("y):\n    \n") + len("y):\n    ")
    invoked = asyncio.run(eng.complete("file:///p.py", off, n=3, seed=0))
    assert invoked.stats["drafts"] >= 1 and "try:" in [c.text for c in invoked.items]
    typing = asyncio.run(eng.complete("file:///p.py", off, seed=0))
    assert typing.stats["drafts"] == 0


def test_the_causal_continuation_is_greedy_and_leaves_the_cache_as_it_was():
    """An Invoked request adds the causal head's greedy line: the same text as token-by-token decoding.

    On the shipped model: a random tiny one seldom ends a line within the bound.
    """
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model
    from dgcomplete.models import default_model_path
    from dgcomplete.types import SpanKind, SpanPlan

    eng = Engine(load_model(default_model_path()), threads=1)
    li = eng.local
    prefix = "def g(a):\n    return "
    plan = SpanPlan(SpanKind.LINE, 1, 12)
    cache, n, _ = li.prefix_cache(prefix, "k")
    before = cache.length
    text = li.continue_causally(cache, "", plan.max_tokens, plan.max_lines, after_space=True)
    assert cache.length == before == n  # the greedy tokens were taken back off the document's cache
    # the same greedy line from a fresh cache, written out here: whole lines only, None when the bound cuts one
    import math

    import torch

    from dgcomplete import canvas as cv

    tok, model = li.tok, li.model
    ids, _ = cv.prefix_ids(tok, prefix, li.max_ctx, li.max_chars)
    fresh = model.new_cache(len(ids) + 16)
    with torch.inference_mode():
        logits = model.encode(torch.tensor([ids]), fresh, logits="last")
        out: list[int] = []
        expected = None
        for _ in range(plan.max_tokens):
            logits[0, [i for i in tok.special_ids if i not in tok.eos_ids]] = -math.inf
            nxt = int(logits[0].argmax())
            if nxt in tok.eos_ids or "\n" in tok.decode(out + [nxt]):
                line = tok.decode(out + ([] if nxt in tok.eos_ids else [nxt])).split("\n")[0].lstrip()
                expected = line if line.strip() else None
                break
            out.append(nxt)
            logits = model.encode(torch.tensor([[nxt]]), fresh, logits="last")
    assert expected and text == expected
    assert li.prefix_cache(prefix, "k")[2] == n - 1  # the next request still reuses the prefix
    # typed characters: the continuation starts by reproducing them and returns what follows
    rest = li.continue_causally(li.prefix_cache("def g(a):\n    ", "k")[0], "ret", 12, 1)
    assert rest and "\n" not in rest
    eng.open("file:///b.py", prefix + "\n", 1, "python")

    async def go(n_items: int):
        return await eng.complete("file:///b.py", len(prefix), n=n_items, seed=0)

    assert asyncio.run(go(3)).stats["causal"] in (0, 1) and asyncio.run(go(1)).stats["causal"] == 0


def test_the_rest_of_a_word_the_document_has():
    """The word head: the rest of the typed word as the suggestion writes it, only where the document has that word
    and at most MAX_WORD_RIVALS words complete the typed part, never a one-character rest or mid-word."""
    text = "total_cost = 1\ntotal_price = 2\nprint(total_c)\n"
    off = text.index("total_c)") + len("total_c")
    text = text[:off] + "\n" + text[off + 1 :]  # the cursor at the end of a line: `print(total_c`
    assert word_head(text, off, "ost)") == "ost"  # `total_cost` is written above
    assert word_head(text, off, "ount)") == ""  # `total_count` is not
    assert word_head(text, off, "o") == ""  # one character saves no keystroke
    assert word_head(text, off, " + 1") == ""  # the suggestion does not go on with the word
    assert word_head(text, off - 2, "al_cost") == ""  # `tot` + `al_cost`: the cursor is inside a word
    three = "".join(f"total_{k} = {i}\n" for i, k in enumerate(["a1", "b2", "c3"])) + "x = total_"
    assert word_head(three, len(three), "a1 + 1") == "a1"
    six = "total_d4 = 3\ntotal_e5 = 4\ntotal_f6 = 5\n" + three
    assert word_head(six, len(six), "a1 + 1") == ""  # six words complete `total_`: too many to guess among
    fav = "y = total_a1\n" + six  # ... unless the suggestion's is the one the nearby text writes most often
    assert word_head(fav, len(fav), "a1 + 1") == "a1" and word_head(fav, len(fav), "b2 + 1") == ""
    far = "y = total_a1\n" + "#\n" * 6000 + six  # (nearby: within NEAR_WINDOW characters)
    assert word_head(far, len(far), "a1 + 1") == ""
    js = "const $el = 1;\nconst x = $e"
    assert word_head(js, len(js), "l + 1") == ""  # one-character rest
    js = "const $elem = 1;\nconst x = $e"
    assert word_head(js, len(js), "lem;") == "lem"  # `$` is part of a JavaScript name


def test_a_word_head_goes_on_while_the_document_agrees():
    """After the word, the suggestion's next tokens are shown for as long as every other place of the document
    that has the phrase so far goes on with the same token; the tail ends on a non-blank token, stops before a
    closer the editor put right of the cursor, and a place of a longer word is no place."""
    text = "x = compute(a, b)\ny = compute(a, c)\nz = comp"
    assert word_head(text, len(text), "ute(a, d)") == "ute(a,"  # `b` and `c` disagree: the tail stops before them
    assert word_head(text, len(text), "ute(x)") == "ute("  # the suggestion leaves the document
    one = "f(total_cost)\ng(total_c"
    assert word_head(one, len(one), "ost)") == "ost)"
    closed = one + ")"  # the editor auto-inserted `)`: the suggestion's own `)` would double it
    assert word_head(closed, len(one), "ost)") == "ost"
    edited = one + " + y)"  # text right of the cursor: only the word
    assert word_head(edited, len(one), "ost)") == "ost"
    longer = "total_costs.pop()\ntotal_cost.add(1)\ntotal_c"
    assert word_head(longer, len(longer), "ost.add(2)") == "ost.add("  # `total_costs` is another word
    odd = "x = abcd= 1\ny = ab"  # a vertical tab in the suggestion is a token too: the tail stops at it
    assert word_head(odd, len(odd), "cd\x0b= 1") == "cd" and word_head(odd, len(odd), "cd= 1") == "cd= 1"



_NAMES = ["ab", "abc", "abd", "a_b", "$a", "bb", "b1", "abcd"]
_GAPS = [" ", ".", "(", ")", ", ", "\n", "\t", "\r\n", "", " = ", "\r", "\x0b", "\u00a0"]
_pieces = st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(_GAPS)), max_size=30)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pieces, _pieces, st.sampled_from(_NAMES), st.integers(0, 3), _pieces, st.sampled_from(_GAPS + [")", ");"]),
       st.booleans())
def test_a_word_head_is_only_ever_the_start_of_the_suggestion(before, after, name, cut, cand_tail, right, echo):
    """Whatever the document, cursor and suggestion: no exception, and what shows is the start of the suggestion's
    first line (a word head never invents text) of two or more characters, or nothing; text right of the cursor
    other than closers keeps it to the word. The documents are made of a few names that complete each other, so
    that heads, rivals, favourites and agreed tails all occur (and a tail can run into a closer right of it)."""
    typed = name[: max(1, min(cut, len(name) - 1))]
    left = "".join(w + g for w, g in before)
    cand = name[len(typed) :] + "".join(w + g for w, g in cand_tail)
    echoed = "\n" + typed + cand if echo else ""  # the document writes the suggestion elsewhere: a tail may agree
    text = left + typed + right + "".join(w + g for w, g in after) + echoed
    offset = len(left) + len(typed)
    head = word_head(text, offset, cand)
    assert head == "" or (cand.startswith(head) and "\n" not in head and "\r" not in head and len(head) >= 2)
    line_right = re.split(r"[\r\n]", text[offset:], maxsplit=1)[0].strip()
    if head and any(ch not in ")]}\"'`;," for ch in line_right):
        assert head == cand[: len(head)] and all(ch.isalnum() or ch in "_$" for ch in head)


def test_the_gate_knows_how_often_the_completed_line_already_stands(tiny_mask_model):
    """A line copied from one neighbour is most often the wrong line; one the file has twice is a pattern: the
    engine counts the completed line's other occurrences (``elsewhere``, the cursor's own line left out) and the
    gate weighs them per source."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    eng.settings.min_confidence = 0.0
    text = ("def f(a):\n    total = a.size + 1\n    check(a)\n    count = a.count(1)\n    check(a)\n\n"
            "def g(a):\n    c\n")
    eng.open("file:///e.py", text, 1, "python")

    async def go(n: int):
        return await eng.complete("file:///e.py", text.rindex("    c\n") + 5, seed=0, n=n)

    comp = asyncio.run(go(1))
    got = {c.text: c.features.get("elsewhere") for c in comp.items}
    assert got.get("heck(a)") == 2.0 and got.get("ount = a.count(1)") == 1.0
    assert all(v is not None for v in got.values())
    assert comp.stats["elsewhere"] == int(comp.items[0].features["elsewhere"])
    # an Invoked list ranks without it (fitted on typed lines, which never have the causal line)
    invoked = asyncio.run(go(3))
    assert invoked.items and all("elsewhere" not in c.features for c in invoked.items)
    # whole lines only, CRLF or not; the cursor's own line is not one; counted up to twice
    from dgcomplete.engine import _stands_elsewhere

    doc = "a = 1\r\n  a = 1 \t\r\nba = 1\na = 10\n# a = 1\na = 1\n"
    assert _stands_elsewhere(doc, len(doc), "a = 1") == 2
    assert _stands_elsewhere(doc, doc.index("ba"), "a = 1", most=9) == 3
    assert _stands_elsewhere(doc, 2, "a = 1", most=9) == 2 and _stands_elsewhere(doc, 0, "") == 0
    # the fitted weights move only what has them: once, twice, the source's own slope
    once = feature_vector(Candidate("t", source="prefix", features={"elsewhere": 1.0}))
    more = feature_vector(Candidate("t", source="analogy", features={"elsewhere": 3.0}))
    none = feature_vector(Candidate("t", source="prefix", features={}))
    assert (once["elsewhere_once"], once["prefix*elsewhere_once"], once["elsewhere_more"]) == (1.0, 1.0, 0.0)
    assert (more["elsewhere_more"], more["prefix*elsewhere_more"]) == (1.0, 1.0)
    assert none["elsewhere_once"] == none["elsewhere_more"] == 0.0
    g = Gate({"elsewhere_once": -2.0}, 0.0)
    assert g.probability(once) < g.probability(none) == g.probability(more) == 0.5
