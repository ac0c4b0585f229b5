"""Checks stricter than tree-sitter's error recovery, for what is shown to the user or applied to the file.

tree-sitter recovers from many errors without an ERROR node where a real parser refuses (``return return``,
``def ret(self,)``, ``for iter``, ``x is is None``), so for Python the standard library's own parser also
reads the enclosing top-level definition(s) with the suggestion (:func:`python_sound`) or the edit of a range
(:func:`python_range_sound`) in place. And an insertion before a word must not glue onto it (``value``
before ``parse(val)`` gives ``valueparse(val)``), nor be a line that says nothing: a comment without a word
(``///``), or in Python an empty string as a statement.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import warnings
from typing import Any

from .check import _indent_of, _unclosed, _width, ancestors, enclosing_literal, shared_base
from .languages import comment_openers, is_comment_line
from .plan import previous_nonblank

MAX_CHUNK_LINES = 400  # larger enclosing definitions are left to tree-sitter alone (bounded cost per request)
# ... and those of more characters: Python's parser read a 900 KB line of data (a list not yet closed) five times a
# candidate (the reliability faults' "900 KB line": 4.1 s a request in the run of 2026-12-06, 0.6 s in that of 2026-12-08)
MAX_CHUNK_CHARS = 100_000
_WORD = re.compile(r"[\w$]")


def glues(text: str, offset: int, cand: str) -> bool:
    """The candidate's last character and the character after the cursor would form one word."""
    first_line = cand.split("\n", 1)[0]
    if "\n" in cand or not first_line or offset >= len(text):
        return False
    return bool(_WORD.match(first_line[-1]) and _WORD.match(text[offset]))


# the clauses that go on with a compound statement; an unindented line that starts with one, or with a closing
# bracket, goes on with the statement above
_CLAUSES = ("else", "elif", "except", "finally")
_GOES_ON = re.compile(rf"[)\]}}]|(?:{'|'.join(_CLAUSES)})\b")


def _starts_statement(line: str) -> bool:
    return bool(line.strip()) and not line[:1].isspace() and not line.startswith("#") and not _GOES_ON.match(line)


def _chunk_bounds(lines: list[str], row: int, max_lines: int = MAX_CHUNK_LINES) -> tuple[int, int] | None:
    """Lines [a, b) of the top-level statement around ``row`` (from an unindented line to the next one; a closing
    bracket or an ``except:``/``else:`` clause at the line's start goes on with it, and so does the cursor's line
    while what is typed on it may still become one: ``ex``)."""
    a = row
    typed = lines[row].strip()
    if typed and row > 0 and any(w.startswith(typed) for w in _CLAUSES):
        a -= 1
    while a > 0 and not _starts_statement(lines[a]):
        a -= 1
    while a > 0 and lines[a - 1].startswith("@"):  # decorators belong to the definition
        a -= 1
    b = row + 1
    while b < len(lines) and not _starts_statement(lines[b]):
        b += 1
    if b - a > max_lines:
        return None
    return a, b


def _parses(src: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences warn; they are not our concern here
            ast.parse(src)
        return True
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False


def _window(text: str, ls: int) -> tuple[int, int]:
    """Character span of the lines around the line starting at ``ls``: MAX_CHUNK_LINES + 1 each way at most
    (a longer definition is not checked anyway), so a keystroke's check never splits the whole file."""
    a = ls
    for _ in range(MAX_CHUNK_LINES + 1):
        if a <= 0:
            break
        a = text.rfind("\n", 0, a - 1) + 1
    b = ls
    for _ in range(MAX_CHUNK_LINES + 2):
        nl = text.find("\n", b)
        if nl < 0:
            return a, len(text)
        b = nl + 1
    return a, b


# a line that opens a block: ends with `:` (a comment after it aside); group 1 is its indentation
_HEAD_START = re.compile(r"([ \t]*)[^\s#]")
_COLON_COMMENT = re.compile(r":[ \t]*#")


def block_head_indent(line: str) -> str | None:
    """The indentation of ``line`` where it is a block's head as Python writes one: code that ends in ``:``, blanks
    and a comment aside (a comment without a quote: past a quote the ``#`` may be in a string); else None.

    In one pass: as a regex (``.*:[ \t]*(?:#[^'"]*)?$``) it tried each ``:`` and scanned the rest of the line from
    each, quadratic in the line. The planner completes no line past 1,000 characters
    (``plan.MAX_LINE_CHARS``), so users met no such delay; the bound no longer rests on that cap."""
    m = _HEAD_START.match(line)
    if m is None:
        return None
    code = line.rstrip(" \t")
    if len(code) > m.end() and code[-1] == ":":
        return m.group(1)
    after_quotes = max(line.rfind("'"), line.rfind('"')) + 1  # a colon before a comment begins after the last quote
    return m.group(1) if _COLON_COMMENT.search(line, max(m.end(), after_quotes)) else None


@functools.lru_cache(maxsize=16)
def _neutral_parses(above: str, below: str, indent: str, line: str) -> bool:
    """The definition parses with the cursor's line neutral: a statement, (inside brackets, where no statement
    goes) the line as it is, blank on a new line, or, where the lines below are a body, a block's head that fits
    what is around it (`e` typed where `elif x:` or `else:` goes: `if 0:` there, and an `else:` that would be the
    chain's second shows as the error it is; after a `try:` block, `finally:`). If none parses, the file is
    broken elsewhere or mid-statement, and tree-sitter's verdict stands. Cached: every candidate of a request
    asks the same."""
    return any(_parses(f"{above}\n{neutral}\n{below}" if above else f"{neutral}\n{below}")
               for neutral in (indent + "pass", line, indent + "if 0:", indent + "finally:"))


def python_sound(text: str, offset: int, cand: str, tree: Any = None) -> bool:
    """False when the enclosing top-level definition parsed with the cursor's line neutral, but not with
    the candidate inserted: the suggestion itself breaks the file. A block's head whose body is not below it yet
    (``if x:`` at the end of what is written) is read with one, as the next lines will give it. True when it
    cannot tell, and inside a string (with the document's ``tree``): there prose goes, a docstring's line that
    looks like a statement start cuts the definition in two, and the parser refused 6.8 % of the corpus's
    docstring lines as they were (bench/results/python_check.json); tree-sitter's check still holds a line that
    ends the string."""
    if tree is not None and _literal_at(text, offset, "python", tree) == "string":
        return True
    ls = text.rfind("\n", 0, offset) + 1
    le = text.find("\n", offset)
    le = len(text) if le == -1 else le
    wa, wb = _window(text, ls)
    lines = text[wa:wb].split("\n")
    row = text.count("\n", wa, ls)
    bounds = _chunk_bounds(lines, row)
    after_line = text[ls:offset] + cand + text[offset:le]
    if bounds is not None and after_line.startswith("@"):  # a decorator: the definition under it comes too
        b = bounds[1]
        while b < len(lines) and lines[b].startswith("@"):
            b += 1
        definition = _chunk_bounds(lines, b) if b < len(lines) else bounds
        bounds = None if definition is None else (bounds[0], definition[1])
    if bounds is None or (bounds[0] == 0 and wa > 0) or (bounds[1] >= len(lines) and wb < len(text)):
        return True  # the definition reaches past the window: longer than MAX_CHUNK_LINES
    a, b = bounds
    if sum(len(x) + 1 for x in lines[a:b]) > MAX_CHUNK_CHARS:
        return True  # longer than MAX_CHUNK_CHARS: tree-sitter's check alone
    line = text[ls:le]
    indent = line[: len(line) - len(line.lstrip())]
    if not _neutral_parses("\n".join(lines[a:row]), "\n".join(lines[row + 1 : b]), indent, line):
        return True
    written = after_line.split("\n")
    rest = lines[row + 1 : b]
    head = block_head_indent(written[-1])
    if head is not None:
        rest = _with_body(written[-1], head, rest)
    return _parses("\n".join(lines[a:row] + written + rest))


def _with_body(head: str, ind: str, rest: list[str]) -> list[str]:
    """The lines after a block's ``head`` (indented ``ind``) as the parser gets them: code is written top down, so
    where the head ends what is written (a blank line, the end of the definition or of its block follows), a body
    not written yet is given (``pass``), and a ``try:``'s handlers (``finally:``) also where it heads code
    already there (wrapping it). A head right above a statement of its own indentation gets none: there it is
    the wrong line (the parse-rate of what is shown counts on it), not code on its way."""
    code = [i for i, x in enumerate(rest) if x.strip() and not x.lstrip().startswith("#")]
    end = next((i for i in code if len(rest[i]) - len(rest[i].lstrip()) <= len(ind)), len(rest))
    has_body = any(i < end for i in code)
    ends_what_is_written = not rest or not rest[0].strip() or (end == 0 and len(rest[0]) - len(rest[0].lstrip()) < len(ind))
    if not (has_body or ends_what_is_written):
        return rest
    body = rest[:end] if has_body else [ind + "    pass"] + rest[:end]
    if re.match(r"\s*try\s*:", head) and (end == len(rest) or not _GOES_ON.match(rest[end].lstrip())):
        body += [ind + "finally:", ind + "    pass"]
    return body + rest[end:]


def _row(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def compiles(src: str) -> bool:
    """Python's compiler accepts ``src`` (see :func:`_compiles`)."""
    return _compiles(src)


def _compiles(src: str) -> bool:
    """Python's compiler accepts ``src``: its parser, and the checks after it (a duplicate argument, ``nonlocal``
    at module level, ``break`` outside a loop) that ``ast.parse`` lets pass."""
    return _compile_error(src) is None


def _compile_error(src: str) -> BaseException | None:
    """What Python's compiler raises on ``src`` (a ``SyntaxError`` with its line, or a ``ValueError`` and the
    like for what it cannot read at all), or None when it accepts it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(src, "<dgcomplete>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as e:
        return e
    return None


def parses(src: str) -> bool:
    """Python's own parser accepts ``src``."""
    return _parses(src)


def python_chunk(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Character span [a, b) of the top-level definition(s) around ``[start, end)`` (whole lines), or None
    when they are longer than MAX_CHUNK_LINES."""
    lines = text.split("\n")
    r0 = _row(text, start)
    r1 = _row(text, max(start, end - 1) if end > start and text[end - 1] == "\n" else end)
    first, last = _chunk_bounds(lines, r0), _chunk_bounds(lines, r1)
    if first is None or last is None or max(first[1], last[1]) - first[0] > MAX_CHUNK_LINES:
        return None
    a, b = first[0], max(first[1], last[1])
    ca = sum(len(x) + 1 for x in lines[:a])
    return ca, min(len(text), ca + sum(len(x) + 1 for x in lines[a:b]) - 1)


def python_range_sound(text: str, start: int, end: int, new: str, max_lines: int = MAX_CHUNK_LINES) -> bool:
    """False when the top-level definitions around ``[start, end)`` compiled before the edit (as they are, or
    with the range's lines neutral: a broken range being repaired) but do not with ``new`` in place. True
    when it cannot tell (broken elsewhere too, or a definition over ``max_lines`` lines). Compiled, not just
    parsed: an edit is applied to the file, so ``def f(a, a)`` must not pass."""
    lines = text.split("\n")
    r0 = _row(text, start)
    r1 = _row(text, max(start, end - 1) if end > start and text[end - 1] == "\n" else end)
    first, last = _chunk_bounds(lines, r0, max_lines), _chunk_bounds(lines, r1, max_lines)
    if first is None or last is None:
        return True
    a, b = first[0], max(first[1], last[1])
    if b - a > max_lines:
        return True
    line = lines[r0]
    indent = line[: len(line) - len(line.lstrip())]
    if not _compiles("\n".join(lines[a:b])) and \
            not _compiles("\n".join(lines[a:r0] + [indent + "pass"] + lines[r1 + 1 : b])):
        return True  # broken outside the range as well: tree-sitter's verdict stands
    shift = new.count("\n") - text.count("\n", start, end)
    after = (text[:start] + new + text[end:]).split("\n")
    return _compiles("\n".join(after[a : b + shift]))


def compile_error_row(text: str, start: int, end: int, any_error: bool = False) -> int | None:
    """The document row at which Python's compiler refuses the definition(s) around ``[start, end)`` for their
    indentation (``unexpected indent``, ``unindent does not match any outer indentation level``, ``expected an
    indented block``; tree-sitter reads most such lines without an error node), or with ``any_error`` for any
    reason (``'return' outside function`` is a ``return`` dedented to column 0); None when it accepts them."""
    chunk = python_chunk(text, start, end)
    err = None if chunk is None else _compile_error(text[chunk[0] : chunk[1]])
    if not isinstance(err, SyntaxError) or err.lineno is None or not (any_error or isinstance(err, IndentationError)):
        return None
    return _row(text, chunk[0]) + err.lineno - 1


_ALNUM = re.compile(r"[^\W_]")


def empty_comment(cand: str, lang: str | None) -> bool:
    """The candidate starts a comment that says nothing (``///``, ``#``, ``# =``, ``-- -``): no letter or digit.

    Such samples (the model's way of ending a span early) are valid code that no one wants suggested; a
    decorative rule of dashes is left to the user to type.
    """
    body = cand.strip()
    if not body or lang is None or _ALNUM.search(body):
        return False
    return body.startswith(comment_openers(lang))


_EMPTY_STRINGS = frozenset({'""', "''", '""""""', "''''''"})


def empty_string_line(text: str, offset: int, cand: str, lang: str | None) -> bool:
    """A Python line that is only an empty string literal, as a statement: a no-op (an empty docstring at best).

    Inside an open bracket (the line before ends with ``(``, ``[``, ``{`` or ``,``) it is an element, and kept.
    """
    if lang != "python" or cand.strip() not in _EMPTY_STRINGS:
        return False
    line_start = text.rfind("\n", 0, offset) + 1
    if text[line_start:offset].strip():
        return False  # after code on the line (``name = ""``): a value
    above = previous_nonblank(text, line_start)
    return above is None or above[1].rstrip()[-1] not in "([{,\\"


def edited_line(text: str, offset: int, cand: str) -> tuple[int, int, str]:
    """(start, end, stripped text) of the cursor's line as accepting the candidate's first line would leave it:
    what is typed before the cursor, the candidate, and the rest of the line after it."""
    ls = text.rfind("\n", 0, offset) + 1
    le = text.find("\n", offset)
    le = len(text) if le < 0 else le
    return ls, le, (text[ls:offset] + cand.split("\n", 1)[0] + text[offset:le]).strip()


# A whole import line per language (the one-line forms; Go's parenthesised block is a list of strings, not matched),
# on lines of at most MAX_IMPORT_LINE characters: JavaScript's backtracks over each " from " (quadratic; the
# planner's own cap, plan.MAX_LINE_CHARS, kept such lines from it, and this no longer rests on that)
MAX_IMPORT_LINE = 1000
_IMPORT_LINE = {
    "python": re.compile(r"(import\s+[\w.]+(\s+as\s+\w+)?(\s*,\s*[\w.]+(\s+as\s+\w+)?)*"
                         r"|from\s+[\w.]+\s+import\s+[\w*][\w\s,*]*)"),
    "javascript": re.compile(r"import\s+.*\sfrom\s*(['\"]).*\1\s*;?|import\s*(['\"]).*\2\s*;?"),
    "java": re.compile(r"import\s+(static\s+)?[\w.]+(\.\*)?\s*;"),
    "go": re.compile(r"import\s+(\w+\s+)?\"[^\"]+\""),
    "rust": re.compile(r"(pub(\([\w:]+\))?\s+)?use\s+[^;]+;"),
    "c": re.compile(r"#\s*include\s*[<\"][^>\"]+[>\"]"),
    "ruby": re.compile(r"require(_relative)?\s*\(?\s*(['\"])[^'\"]+\2\s*\)?"),
    "php": re.compile(r"use\s+((function|const)\s+)?\\?[\w\\]+(\s+as\s+\w+)?\s*;"
                      r"|(require|include)(_once)?\s*\(?\s*(['\"])[^'\"]+\6\s*\)?\s*;"),
}
_IMPORT_LINE |= {"typescript": _IMPORT_LINE["javascript"], "tsx": _IMPORT_LINE["javascript"],
                 "cpp": _IMPORT_LINE["c"]}


def duplicate_import(text: str, offset: int, cand: str, lang: str | None) -> bool:
    """Accepting the candidate would make the line an import the file already has, word for word.

    Never what the user is typing: redundant at best, an error in Go (``redeclared``) and Rust (E0252). Such
    suggestions come from retrieval, which offers the file's own lines, and from the model copying the block
    above. Only the one-line import forms of each language are checked, on the whole line the edit would leave,
    against lines at column 0 (the file's top level): an indented one is scoped (Python's ``if TYPE_CHECKING:``
    block, a Rust ``use`` inside a function), and importing the same again elsewhere is legitimate.
    """
    pattern = _IMPORT_LINE.get(lang or "")
    if pattern is None:
        return False
    ls, le, line = edited_line(text, offset, cand)
    if len(line) > MAX_IMPORT_LINE or not pattern.fullmatch(line):
        return False
    same = re.compile(rf"^{re.escape(line)}[ \t]*$", re.M)
    return bool(same.search(text, 0, ls) or same.search(text, le + 1))


_NAMES = re.compile(r"[A-Za-z_$][\w$]*")


def repeats_neighbour(text: str, offset: int, cand: str) -> bool:
    """Accepting the candidate would make the line the same as the line right above or right below it (blanks at
    either end aside), and that line has two names or more.

    Retrieval offers the lines around the cursor and the model copies them, so a suggestion that rewrites the line
    next door is common (``from .after import after_nothing  # noqa`` while typing ``after_log`` above it), and
    never what is being written: typing the dev split's lines, none of the 25 such suggestions was right (all 25
    next to their twin, no blank line between). Real code rarely puts a line with two names next to its twin
    (0.04-0.17 % of such lines in each of the corpus's seven languages); a line of one name or none (``}``,
    ``#endif``, ``try:``, ``None,``) does so in 2-19 % and stays allowed (``bench/results/neighbour_twins.json``).
    A blank line between ends the neighbourhood: a notebook's next cell (one blank line down in its layout) may well start by running the
    previous cell's last line again.

    Not one of :func:`sound`'s checks: the engine drops such a line after ranking, so that it still counts as the
    rival it is (rows of a table, one of which the user is writing, leave the model unsure which; that doubt is
    the score margin the gate reads). Dropped before scoring, the next row's margin grew and it showed instead:
    typing the dev split's lines, wrong suggestions read went 417 -> 424; dropped after ranking, 417 -> 393, with
    the same characters saved (``bench/results/repeats_neighbour_ab.json``).
    """
    ls, le, line = edited_line(text, offset, cand)
    above = text[text.rfind("\n", 0, ls - 1) + 1 : ls - 1] if ls else ""  # it ends at the break before ``ls``
    end = text.find("\n", le + 1)
    below = text[le + 1 : end if end >= 0 else len(text)] if le < len(text) else ""
    return twin_of_neighbour(line, above, below)


def twin_of_neighbour(line: str, above: str, below: str) -> bool:
    """``line`` (stripped) has two names or more and equals the line above or below it: :func:`repeats_neighbour`'s
    rule on three lines (``bench.neighbour_twins`` counts how often real code does it)."""
    return len(_NAMES.findall(line)) >= 2 and line in (above.strip(), below.strip())


# Words that only modify the declaration after them on the same line (types and struct/enum heads left out:
# GNU-style C puts ``static unsigned`` above the function name, Allman style ``typedef struct`` above its brace).
_MODIFIERS: dict[str, frozenset[str]] = {
    "java": frozenset("public private protected static final abstract synchronized native transient volatile "
                      "strictfp default sealed class interface enum".split()),
    "javascript": frozenset("export default async const let var function public private protected static "
                            "readonly abstract declare override class".split()),
    "go": frozenset("func var const type".split()),
    "rust": frozenset("pub const static unsafe async extern mut let fn".split()),
    "c": frozenset("static extern inline const volatile register restrict".split()),
    "php": frozenset("public private protected static final abstract readonly var const function".split()),
}
_MODIFIERS |= {"typescript": _MODIFIERS["javascript"], "tsx": _MODIFIERS["javascript"], "cpp": _MODIFIERS["c"]}


def dangling_modifiers(text: str, offset: int, cand: str, lang: str | None) -> bool:
    """Accepting the candidate would leave a line of modifiers only (``public``, ``public static``, ``pub``,
    ``const``), or one that repeats a modifier (``private static final final``): a declaration the model stopped
    early or stuttered, never a line anyone writes (no style breaks a line after its modifiers)."""
    mods = _MODIFIERS.get(lang or "")
    if mods is None:
        return False
    words = edited_line(text, offset, cand)[2].split()
    lead = []
    for w in words:
        if w not in mods:
            break
        lead.append(w)
    return bool(lead) and (len(lead) == len(words) or len(set(lead)) < len(lead))


_RETURN = re.compile(r"return\b\s*(.*?)\s*;?\s*$")
_FUNCTIONS = {"go": ("function_declaration", "method_declaration", "func_literal"),
              "java": ("method_declaration", "constructor_declaration", "lambda_expression"),
              "c": ("function_definition",)}
_STOP_AT = ("class_body", "source_file", "program", "translation_unit")


def _results(fn: Any, lang: str) -> tuple[int, bool] | None:
    """(values the function returns, whether Go's results are named) of a function node; None: cannot tell."""
    if lang == "go":
        res = fn.child_by_field_name("result")
        if res is None:
            return 0, False
        if res.type != "parameter_list":
            return 1, False
        decls = [c for c in res.named_children if c.type == "parameter_declaration"]
        names = [sum(1 for i, _ in enumerate(d.children) if d.field_name_for_child(i) == "name") for d in decls]
        return sum(max(1, n) for n in names), any(names)
    if lang == "java":
        if fn.type == "constructor_declaration":
            return 0, False
        if fn.type == "lambda_expression":
            return None
        typ = fn.child_by_field_name("type")
        return (0 if typ is not None and typ.type == "void_type" else 1), False
    typ, decl = fn.child_by_field_name("type"), fn.child_by_field_name("declarator")
    if typ is None or decl is None:
        return None
    void = typ.type == "primitive_type" and typ.text == b"void" and decl.type == "function_declarator"
    return (0 if void else 1), False


def _values(expr: str, lang: str) -> int:
    """How many values ``return <expr>`` gives: 0 without an expression; Go counts its top-level commas."""
    if not expr:
        return 0
    if lang != "go":
        return 1
    return len(_top_level_parts(expr, "([{", ")]}")[0])


def return_mismatch(text: str, offset: int, cand: str, lang: str | None, tree: Any) -> bool:
    """The candidate's line is a ``return`` that cannot compile in the function around the cursor: a value from a
    Go function without results, a Java ``void`` method or constructor, or a C ``void`` function; no value where
    one is due (a Go function without named results, a non-void Java method or C function); a Go value count
    that differs from the results' (one call may stand for several: ``return f()``). Retrieval copies
    ``return nil, err`` from other functions, and the model guesses ``return;`` in functions it cannot see whole.
    Only when the document's tree shows the enclosing function (``tree``: the document's, before the edit)."""
    if tree is None or lang not in _FUNCTIONS:
        return False
    ls, _, line = edited_line(text, offset, cand)
    m = _RETURN.fullmatch(line)
    if m is None:
        return False
    at = len(text[:ls].encode("utf-8"))
    here = tree.root_node.descendant_for_byte_range(at, at)
    for node in ancestors(tree.root_node, here) if here is not None else ():
        if node.type in _FUNCTIONS[lang]:
            break
        if node.type in _STOP_AT or node.type == "ERROR":
            return False
    else:
        node = None  # no enclosing function
    if node is None or node.start_byte >= at:
        return False
    res = _results(node, lang)
    if res is None:
        return False
    want, named = res
    got = _values(m.group(1).split("//", 1)[0].strip(), lang)
    if got == 0:
        return want > 0 and not named
    if want == 0:
        return True
    if lang == "go" and got != want:
        return not (got == 1 and m.group(1).rstrip().endswith(")"))
    return False


_PARAM_LISTS = {
    "python": re.compile(r"(?:async\s+)?def\s+\w+\s*(?:\[.*\])?\s*\((.*)\)\s*(?:->.*)?:"),
    # a function or method header with its body opened on the line, or an arrow function's parameters
    "javascript": re.compile(r"(?:.*?\bfunction\b\s*\*?\s*[\w$]*|(?!(?:if|for|while|switch|catch|with|return)\b)[\w$]+)"
                             r"\s*(?:<[^()]*>)?\s*\((.*)\)\s*(?::[^{=]*)?\{"
                             r"|(?:.*?[=(,:]\s*)?(?:async\s+)?\((.*)\)\s*(?::[^=]*)?=>.*"),
}
_PARAM_LISTS |= {"typescript": _PARAM_LISTS["javascript"], "tsx": _PARAM_LISTS["javascript"]}
_PARAM_NAME = {"python": re.compile(r"\s*\*{0,2}\s*([A-Za-z_]\w*)"),
               "javascript": re.compile(r"\s*(?:\.\.\.)?\s*(?:(?:public|private|protected|readonly)\s+)*([A-Za-z_$][\w$]*)")}
_PARAM_NAME |= {"typescript": _PARAM_NAME["javascript"], "tsx": _PARAM_NAME["javascript"]}


def _top_level_parts(params: str, opens: str = "([{<", closes: str = ")]}>") -> tuple[list[str], bool]:
    """``params`` split at its top-level commas (outside brackets and quotes), and whether its brackets and quotes
    balance (after a stray closer, commas no longer count as top-level)."""
    parts, depth, quote, start, balanced = [], 0, "", 0, True
    for i, ch in enumerate(params):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'`":
            quote = ch
        elif ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
            balanced = balanced and depth >= 0
        elif ch == "," and depth == 0:
            parts.append(params[start:i])
            start = i + 1
    return [*parts, params[start:]], balanced and not depth and not quote


def duplicate_parameters(text: str, offset: int, cand: str, lang: str | None) -> bool:
    """Accepting the candidate would leave a function header that names a parameter twice (``def f(self, a, a):``,
    ``function skip(state, comments, state) {``): an error in Python and in JavaScript's strict mode, modules,
    classes and arrow functions, and never what is meant. The model writes them when it repeats the first
    parameter to fill a list it cannot see the end of. Python and JavaScript/TypeScript headers on one line."""
    pattern = _PARAM_LISTS.get(lang or "")
    if pattern is None:
        return False
    m = pattern.fullmatch(edited_line(text, offset, cand)[2])
    params = next((g for g in m.groups() if g is not None), None) if m else None
    parts, balanced = _top_level_parts(params) if params else ([], False)
    if not balanced:
        return False
    names = []
    for p in parts:
        if p.strip() in ("", "*", "/") or p.lstrip()[:1] in "{[":
            continue  # a bare `*` or `/`, a destructuring pattern
        n = _PARAM_NAME[lang].match(p)
        if n is None:
            return False  # not a parameter list after all
        names.append(n.group(1))
    return len(names) != len(set(names))


def unasked_comment(text: str, offset: int, cand: str, lang: str | None, tree: Any = None) -> bool:
    """The candidate begins a comment the user has not started: nothing on the line before the cursor opens one,
    the line above is not a comment, and (with the document's ``tree``) the cursor is not inside a comment or a
    string. A sample that drifts into prose (``// The first time is used to the same as the name``,
    ``# noqa: Either-01``) is not the code about to be written; retrieved comment lines already wait for a typed
    comment (bench/results/comment_drafts_ab.json)."""
    if lang is None:
        return False
    openers = comment_openers(lang)
    first = cand.split("\n", 1)[0].strip()
    if not first.startswith(openers):
        return False
    ls = text.rfind("\n", 0, offset) + 1
    typed = text[ls:offset]
    if any(o in typed for o in openers) or is_comment_line(typed, lang):  # opened here, or a block's `*` line
        return False
    above = previous_nonblank(text, ls)
    if above is not None and (is_comment_line(above[1], lang) or above[1].rstrip().endswith("*/")):
        return False  # a comment block goes on
    return tree is None or _literal_at(text, offset, lang, tree) is None


def _literal_at(text: str, at: int, lang: str, tree: Any) -> str | None:
    """'string' or 'comment' when character ``at`` of ``text`` is inside one in the document's ``tree`` (the plan's
    own test, :func:`enclosing_literal`; the byte offset from the checks' shared encoding)."""
    return enclosing_literal(tree, shared_base(text, lang, tree).index.byte_offset(at))


# one side of an ordering comparison the other side repeats: a name or a member chain, standing alone between what may
# bound an operand (the line's start, `(`, `,`, `&&`, `return`, an assignment's `=`, ...) and what may end one
_SELF_COMPARISON = re.compile(
    r"(?:^|(?<=[(,;!?:])|(?<=&&)|(?<=\|\|)|(?<=[^=!<>]=)|(?<=\breturn)|(?<=\bif)|(?<=\bwhile)|(?<=\band)|(?<=\bor)"
    r"|(?<=\bnot))\s*([A-Za-z_$][\w$]*(?:(?:\.|->|::)[A-Za-z_$][\w$]*)*)\s*(?<![<>=!\-])(?:<=|>=|<|>)(?![<>=\-])\s*\1"
    r"\s*(?=$|[),;?:{]|&&|\|\||\band\b|\bor\b)")


def self_comparison(text: str, offset: int, cand: str) -> bool:
    """Accepting the candidate makes the line order a value against itself (``index < index``, ``a.n >= a.n``):
    always false or always true, what linters flag (ESLint's no-self-compare, Pylint's comparison-with-itself,
    clang's -Wtautological-compare). Typing the dev_langs split, ``return 0 <= index && index <`` + `` index;`` showed;
    no line of the held-out files or of the corpus's first 300 files of each language has one. ``==`` and ``!=`` are
    left alone: ``x === x`` is how JavaScript and C code tests for NaN. Only a comparison the candidate writes part
    of counts."""
    ls, _, line = edited_line(text, offset, cand)
    typed = len(text[ls:offset].lstrip())
    return any(m.end() > typed for m in _SELF_COMPARISON.finditer(line))


# languages whose blocks are braces (and whose closers :func:`misplaced_closer` reads)
BRACE_LANGS = frozenset({"javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "php"})


def _indent_width(line: str, tab: int = 4) -> int:
    return _width(_indent_of(line), tab)


_CLOSER_LOOKBACK = 400  # lines looked at above the cursor for the line a `}` would close (a longer body: not judged)
# `case 1:` (or a case over several lines), `default:`, `out:`
_LABEL = re.compile(r"\s*(?:case\b|default\b|[A-Za-z_]\w*\s*:\s*(?://.*|/\*.*)?$)")


def misplaced_closer(text: str, offset: int, cand: str, lang: str | None, tree: Any = None) -> bool:
    """On a line where nothing is typed yet, the candidate starts with a ``}`` the code above does not place there:
    the line is in the middle of a body (the last line above at its indentation is a statement, not one opening a
    block, nor a block's ``}``). ``} else {`` offered between two lines of an ``else if`` block's body would close
    it and make the lines below an ``else`` block; the editor put the cursor at the body's indentation, so a ``}``
    there cannot be right, and one the user means has the user's ``}`` (or an editor's dedent) first. Typing the dev split's lines, such suggestions were never right (``} else
    {`` in the body of ``} else if (...) {``, twice). Read from indentation and brackets, not the syntax tree: with a
    ``}`` still to write, the tree nests the code below it wrongly. ``case`` and ``default`` labels (at their
    switch's indentation in Go), other labels, comments (one over the next ``} else {``, at its indentation) and C
    preprocessor lines are passed over. With the document's ``tree``, a line in a string or a comment (C code in a
    cgo preamble) is not judged."""
    if lang not in BRACE_LANGS:
        return False
    ls = text.rfind("\n", 0, offset) + 1
    typed = text[ls:offset]
    first = cand.split("\n", 1)[0]
    if typed.strip() or not first.lstrip().startswith("}"):
        return False
    if tree is not None and _literal_at(text, offset, lang, tree) is not None:
        return False
    if lang in ("c", "cpp") and not _indent_width(typed + first):
        return False  # C++'s namespaces and `extern "C" {` do not indent what they hold
    # where tabs and spaces mix, a tab may stand for 4 columns or 8 (libzip's `\t    `): judged only where both agree
    # (without a tab above or on the line, the two readings are the same: read once)
    tabs = (4, 8) if "\t" in first or text.find("\t", 0, offset) >= 0 else (4,)
    return all(_closes_nothing_here(text, ls, typed + first, lang, tree, tab) for tab in tabs)


def _closes_nothing_here(text: str, ls: int, line: str, lang: str, tree: Any, tab: int) -> bool:
    """:func:`misplaced_closer`'s reading of the code above the line starting at ``ls``, with a tab ``tab`` wide."""
    width = _indent_width(line, tab)
    at = ls
    for _ in range(_CLOSER_LOOKBACK):  # the last line above at this indentation or less
        above = previous_nonblank(text, at)
        if above is None:
            break
        at, line = above
        if (_indent_width(line, tab) > width or _LABEL.match(line) or is_comment_line(line, lang)
                or (lang in ("c", "cpp") and line.lstrip().startswith("#"))):
            continue
        if tree is not None and _literal_at(text, at + len(line) - len(line.lstrip()), lang, tree) is not None:
            continue  # a line of a string or a comment running over lines (a Go raw string's text)
        if _indent_width(line, tab) < width or line.lstrip().startswith("}"):
            return False  # a block's first line (prettier puts `? {` above its body and `}` deeper), or after a block
        # the brackets from there down, comment lines left out (`// } from '#x';`, a javadoc's `it's {@code`); None:
        # brackets that do not pair up (a regular expression): cannot tell
        owed = _unclosed("\n".join(x for x in text[at:ls].split("\n") if not is_comment_line(x, lang)))
        return owed is not None and "}" not in owed  # nothing from there down opened a block a `}` here would close
    return False


def sound(text: str, offset: int, cand: str, lang: str | None, tree: Any = None) -> str:
    """Empty when the candidate may be shown; otherwise the reason it may not. ``tree``: the document's
    tree-sitter tree before the edit, for the checks that look at the code around the cursor."""
    if glues(text, offset, cand):
        return "glues"
    if empty_comment(cand, lang):
        return "empty_comment"
    if empty_string_line(text, offset, cand, lang):
        return "empty_string"
    if duplicate_import(text, offset, cand, lang):
        return "duplicate_import"
    if dangling_modifiers(text, offset, cand, lang):
        return "dangling_modifiers"
    if misplaced_closer(text, offset, cand, lang, tree):
        return "misplaced_closer"
    if self_comparison(text, offset, cand):
        return "self_comparison"
    if return_mismatch(text, offset, cand, lang, tree):
        return "return_mismatch"
    if duplicate_parameters(text, offset, cand, lang):
        return "duplicate_parameters"
    if unasked_comment(text, offset, cand, lang, tree):
        return "unasked_comment"
    if lang == "python" and not python_sound(text, offset, cand, tree):
        return "python_parser"
    return ""


_ID = r"[A-Za-z_$][\w$]*"
# the start of a definition line, up to its name, per language: (pattern, its namespace). The name must be followed by
# what a definition puts after it (or the line's end: a word typed at the name, see :func:`redefines`)
_DEF_HEADS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "python": ((re.compile(rf"(?:async\s+)?def\s+({_ID})(?=\s*[(\[]|$)"), "name"),
               (re.compile(rf"class\s+({_ID})(?=\s*[(:\[]|$)"), "name")),
    "javascript": ((re.compile(rf"(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*({_ID})"
                               rf"(?=\s*[(<]|$)"), "body"),
                   (re.compile(rf"(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+({_ID})(?=[\s{{<]|$)"), "body"),
                   (re.compile(rf"(?:export\s+)?(?:const|let)\s+({_ID})(?=\s*[=:])"), "name"),
                   # a method: its parameters, then its body on the same line (a call with a callback has brackets)
                   (re.compile(rf"((?:static\s+)?(?:(?:async|public|private|protected|readonly|override)\s+)*"
                               rf"(?:[gs]et\s+)?\*?{_ID})(?=\s*\([^()]*\)\s*(?::[^{{]*)?\{{)"), "body")),
    "go": ((re.compile(rf"func\s+((?:\(\s*(?:{_ID}\s+)?\*?\s*{_ID}[^)]*\)\s*)?{_ID})(?=\s*[(\[]|$)"), "name"),
           (re.compile(rf"type\s+({_ID})(?=\s)"), "type")),
    "rust": ((re.compile(rf"(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
                         rf"(?:extern\s+\"\w+\"\s+)?fn\s+({_ID})(?=\s*[(<]|$)"), "name"),
             (re.compile(rf"(?:pub(?:\([\w:]+\))?\s+)?(?:struct|enum|trait|union|mod)\s+({_ID})(?=[\s{{<;(]|$)"),
              "type")),
}
_DEF_HEADS |= {"typescript": _DEF_HEADS["javascript"], "tsx": _DEF_HEADS["javascript"],
               # Ruby reopens classes and modules on purpose: only methods
               "ruby": ((re.compile(r"def\s+((?:self\.)?[A-Za-z_]\w*[?!=]?)(?=[\s(;]|$)"), "name"),),
               "php": ((re.compile(r"(?:(?:public|private|protected|static|final|abstract)\s+)*"
                                   r"function\s+&?([A-Za-z_]\w*)(?=\s*\(|$)"), "name"),
                       (re.compile(r"(?:(?:final|abstract|readonly)\s+)*(?:class|interface|trait|enum)\s+([A-Za-z_]\w*)"
                                   r"(?=[\s{]|$)"), "type")),
               # a C function's header at the line's start, its type words before it or on the line above (GNU
               # style): a definition when its parameters close on the line, no `;` after them (a prototype's)
               "c": ((re.compile(rf"(?:[A-Za-z_]\w*[\s*]+)*\**({_ID})(?=\s*\()"), "body"),)}
_NOT_METHODS = frozenset("if for while switch catch function return with do else try new typeof await".split())
_MEMBER_WORDS = re.compile(r"\b(?:async|public|private|protected|readonly|override)\s+|\*")
_RECEIVER = re.compile(rf"\(\s*(?:{_ID}\s+)?\*?\s*({_ID})[^)]*\)\s*")


def defined_name(line: str, lang: str | None) -> tuple[str, bool] | None:
    """(the name a definition line defines, keyed by its namespace; whether only a body makes it a definition) of a
    stripped line, or None when it defines nothing. ``body``: in JavaScript and TypeScript a function, class or
    method whose line does not end with ``{`` may be an overload signature (``function f(a: string): void;``), and
    a C header that does not end with ``)`` or ``{`` a prototype (:func:`_has_body`)."""
    for pattern, kind in _DEF_HEADS.get(lang or "", ()):
        m = pattern.match(line)
        if m is None:
            continue
        name = m.group(1)
        if lang == "go":  # a method is keyed by its receiver's type, not the receiver's name
            r = _RECEIVER.match(name)
            name = f"{r.group(1)}.{name[r.end():]}" if r else name
        elif kind == "body":
            name = _MEMBER_WORDS.sub("", name)
            if name.split()[-1] in _NOT_METHODS or (lang == "c" and _c_macro(name)):
                return None
        return ("type " if kind == "type" else "") + " ".join(name.split()), kind == "body"
    return None


def _c_macro(name: str) -> bool:
    """A C name written like a macro (``XMLPARSEAPI(void)`` over a header, ``__attribute__((unused))``) or
    ``sizeof``: a line that starts with it is no function definition."""
    return name.isupper() or name.startswith("__") or name == "sizeof"


def _has_body(line: str, lang: str | None) -> bool:
    """A definition line whose kind needs a body opens it, or in C has it whole or on the next line (GNU style)."""
    return line.rstrip().endswith(("{", ")", "}") if lang == "c" else "{")


def _c_signature(line: str, name: str) -> str:
    """A C header line from its function's name on, spaces dropped: what a copy of it repeats."""
    m = re.search(rf"(?<![\w$]){re.escape(name)}\s*\(", line)
    return re.sub(r"\s+", "", line[m.start():]).rstrip("{") if m else line


def _c_copies_definition(line: str, sibling: str, after: str, name: str) -> bool:
    """``line`` repeats the header of the definition ``sibling`` (its body follows it on its line or on the next,
    ``after``): C++ in a C header overloads, and a prototype may end on the next line after an attribute."""
    return _c_signature(sibling, name) == _c_signature(line, name) and (
        sibling.rstrip().endswith(("{", "}")) or after.lstrip().startswith("{"))


_C_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|el|endif)", re.M)


def _c_same_branch(text: str, lo: int, hi: int) -> bool:
    """No preprocessor conditional separates ``text[lo:hi]``'s two ends: every ``#if`` opened between is closed
    between, and no ``#else``, ``#elif`` or ``#endif`` of an enclosing one comes between (two definitions on either
    side of one may be alternatives, one of them compiled)."""
    depth = 0
    for m in _C_DIRECTIVE.finditer(text, lo, hi):
        if m.group(1) == "if":
            depth += 1
        elif depth == 0:
            return False
        elif m.group(1) == "endif":
            depth -= 1
    return depth == 0


def _decorated(text: str, ls: int, lang: str | None, name: str) -> bool:
    """The line starting at ``ls`` is a definition made again on purpose, by what is right above it (past comments):
    in Python a decorator that says so (``@overload``, or one naming the name: ``@x.setter``, ``@f.register``; not
    ``@staticmethod`` or ``@synchronized(lock)``, which a definition made twice has as well), in other languages
    any decorator or attribute (``#[cfg(unix)]``; one over several lines ends with ``]``, or ``)`` on a line of its
    own)."""
    said = re.compile(rf"\boverload\b|(?<![\w$]){re.escape(name)}(?![\w$])")
    while (above := previous_nonblank(text, ls)) is not None:
        line = above[1].strip()
        ls = above[0]
        if line.startswith(("//", "#")) and not line.startswith("#["):
            continue  # a comment between the decorator and the definition
        if lang != "python":
            return line.startswith(("@", "#[")) or line in (")", "):") or (lang == "rust" and line.endswith("]"))
        if not line.startswith("@"):
            return line in (")", "):")  # the end of a decorator over several lines: cannot tell
        if said.search(line):
            return True
    return False


def redefines(text: str, offset: int, cand: str, lang: str | None, tree: Any = None, *, word: bool = False) -> bool:
    """Accepting the candidate would make the line a definition of a name that a sibling already defines: a line at
    the same indentation in the same block (no line less indented between) heads a definition of the same name.

    Retrieval offers the definitions nearby and the model copies them, so while ``def __l`` is typed in a class
    that has ``__le__``, ``def __le__(self, other):`` is offered again, as the ``__lt__`` being written is not;
    typing the dev split's lines, such suggestions were never right. Defining a name twice in one scope is an error
    (Go, Rust, PHP, ``let`` and ``const``) or a bug that hides the first (Python, JavaScript, Ruby), so real code does
    it only on purpose, and then with a decorator or an attribute (``@overload``, ``@x.setter``, ``#[cfg(unix)]``:
    allowed; see :func:`_decorated`), or as TypeScript overload signatures (a line without a body: allowed). Java,
    C# and C++ overload: not checked. C has no overloads: a function's header at the line's start (``zix_tree_find(
    const ZixTree* t, ...)``, its type on the line above) whose parameters close on the line without ``;`` (a
    prototype says it again on purpose) is checked against the file's definitions (a body follows) with the very
    same header (C++ in a ``.h`` overloads), unless a preprocessor conditional lies between the two (one of them
    is compiled); the rest of a word only where it goes on to close the parameters. Ruby reopens classes: only its
    methods are. A candidate of several lines is read by its first, and one that only ends
    the name being typed (the rest of a word) is checked as a definition of that name. With the document's
    ``tree``, lines inside a string or a comment (code in a docstring's example, a test's source in a raw string)
    are left out. ``word``: the candidate is the rest of the word being typed, which a Ruby method's name may go on
    from with ``?``, ``!`` or ``=`` (``def check_unknown_options`` + ``!`` beside ``def check_unknown_options``).

    Like :func:`repeats_neighbour`, applied after ranking: such a line is the rival of the one being written.
    """
    if lang not in _DEF_HEADS or (word and lang == "ruby"):
        return False
    ls, le, line = edited_line(text, offset, cand)  # a block's first line: the definition it starts
    got = defined_name(line, lang)
    if got is None:
        return False
    name, body = got
    bare = re.findall(_ID, name)[-1]  # the name itself, without its receiver or namespace
    if (body and not _has_body(line, lang)) or bare == "_" or (lang == "go" and name == "init"):
        return False  # ``_``: a throwaway name; Go runs every ``init`` a file has

    def quoted(at: int) -> bool:
        return tree is not None and _literal_at(text, at, lang, tree) is not None

    if _decorated(text, ls, lang, bare) or quoted(offset):
        return False
    full = text[ls:offset] + cand.split("\n", 1)[0]
    indent = full[: len(full) - len(full.lstrip())]
    if lang == "c" and indent:
        return False  # C defines functions at the line's start; indented, `list_for_each(p, head) {` is a loop
    shallower = re.compile(rf"^(?!{re.escape(indent)})[ \t]*\S", re.M) if indent else None
    # the lines at the same indentation that name it (few), then whether each defines it in the same block
    for m in re.finditer(rf"^{re.escape(indent)}(?=\S)(.*(?<![\w$]){re.escape(bare)}(?![\w$]).*)$", text, re.M):
        if ls <= m.start() <= le or defined_name(m.group(1).strip(), lang) != got:
            continue
        if body and not _has_body(m.group(1), lang):
            continue
        if lang == "c" and not _c_copies_definition(line, m.group(1), text[m.end() : m.end() + 200], bare):
            continue
        lo, hi = (m.end(), ls) if m.start() < ls else (le, m.start())
        if shallower is not None and shallower.search(text, lo, hi):
            continue  # another block
        if lang == "c" and not _c_same_branch(text, lo, hi):
            continue  # `#ifdef A` ... `#else` ...: one of the two is compiled
        if not _decorated(text, m.start(), lang, bare) and not quoted(m.start() + len(indent)):
            return True
    return False


# words that begin a statement and nothing else: ``return`` cannot follow a name, an operator or an open bracket
_C_LIKE_STATEMENT_WORDS = frozenset({"return", "break", "continue"})
_STATEMENT_WORDS = {"python": _C_LIKE_STATEMENT_WORDS | {"pass", "raise"},
                    **{lang: _C_LIKE_STATEMENT_WORDS
                       for lang in ("javascript", "typescript", "tsx", "go", "java", "c", "cpp", "php")}}
# what may come before a statement on its line, beside nothing: Python's one-line ``if x: return``, ``a; b``; in the
# braced languages a block's brace, ``;``, an ``if (...)`` without braces, ``else``, ``do``, and the ``:`` of a case
# or a label (not a type's: ``types: r`` + ``eturn``)
_C_LIKE_BEFORE = r"(?:[{};)]|(?<![\w$])(?:else|do)|^\s*(?:(?:case|default)\b.*|[A-Za-z_$][\w$]*\s*):)"
_STATEMENT_AFTER = {"python": re.compile(r"[:;]\Z"),
                    # a property may be named ``return`` in JavaScript (``iterator.return()``) and PHP (``$o->return``)
                    **{lang: re.compile(rf"(?:{_C_LIKE_BEFORE}|\?\.|\.|->|::)\Z")
                       for lang in ("javascript", "typescript", "tsx", "php")},
                    **{lang: re.compile(rf"{_C_LIKE_BEFORE}\Z") for lang in ("go", "java", "c", "cpp")}}


def misplaced_statement_word(text: str, offset: int, rest: str, lang: str | None, tree: Any = None) -> bool:
    """Ending the word being typed with ``rest`` makes it a statement's first word (``return``, ``break``,
    ``continue``; Python's ``pass`` and ``raise`` too) where no statement can begin: after a name, an operator or an
    open bracket. The model's favourite word is ``return``, and the rest of a word it gives was ``return`` in
    ``if (pos == 0) return re|turn``, ``this.names = re|turn``, ``function re|turn``, ``types: r|eturn`` and
    ``List<CSVRecord> r|eturn`` typing the dev splits, never right. Words in a comment or a string (with the
    document's ``tree``) and on a C preprocessor line are left alone; Rust and Ruby (``return`` is an expression,
    ``x or return``), Lua and shell are not checked."""
    words = _STATEMENT_WORDS.get(lang or "")
    head = re.match(r"[\w$]*", rest).group(0)
    if not words or not head:
        return False
    ls = text.rfind("\n", 0, offset) + 1
    typed = re.search(r"[\w$]*\Z", text[ls:offset]).group(0)
    if typed + head not in words:
        return False
    before = text[ls : offset - len(typed)].rstrip()
    if not before or _STATEMENT_AFTER[lang].search(before):
        return False
    if lang in ("c", "cpp") and before.lstrip().startswith("#"):
        return False  # a macro's body may be any tokens
    if any(o in before for o in comment_openers(lang)):
        return False
    return tree is None or _literal_at(text, offset, lang, tree) is None


_JAVA_PUBLIC_TYPE = re.compile(r"public\s+(?:(?:abstract|final|sealed|non-sealed|strictfp)\s+)*"
                               r"(?:class|interface|enum|record|@interface)\s+([A-Za-z_$][\w$]*)")


def misnamed_public_type(text: str, offset: int, cand: str, lang: str | None, path: str | None, *,
                         word: bool = False) -> bool:
    """Java: accepting the candidate makes the line a top-level ``public class`` (interface, enum, record) named
    otherwise than its file, which javac refuses. Retrieval offers the other files' headers (``public class
    InputStreamPumper implements Runnable {`` at the top of ``DefaultProcessingEnvironment.java``, twice typing the
    dev_langs split). A nested type (indented) may be named anything; a document without a file (``path`` None: an
    unsaved buffer) is not checked. ``word``: the candidate only ends the name being typed, which may go on
    (``InputStreamPumper`` + ``Test``): only a name the file's is not written from counts."""
    stem, ext = os.path.splitext(os.path.basename(path or ""))
    if lang != "java" or ext != ".java":
        return False
    ls, _, line = edited_line(text, offset, cand)
    if text[ls:offset][:1].isspace():
        return False  # a nested type
    m = _JAVA_PUBLIC_TYPE.match(line)
    if m is None:
        return False
    return not stem.startswith(m.group(1)) if word else m.group(1) != stem


def rival(text: str, offset: int, cand: str, lang: str | None, tree: Any = None, path: str | None = None, *,
          word: bool = False) -> str:
    """Why accepting the candidate would write the rival of the line being written (ranked as one, then never
    shown), or "": the twin of a neighbour (:func:`repeats_neighbour`), a definition its block has
    (:func:`redefines`), a Java public type its file is not named for (:func:`misnamed_public_type`). ``word``:
    the candidate is the rest of the word being typed. The one list both the lines and the word heads are read by."""
    if repeats_neighbour(text, offset, cand):
        return "repeats_neighbour"
    if redefines(text, offset, cand, lang, tree, word=word):
        return "redefines"
    if misnamed_public_type(text, offset, cand, lang, path, word=word):
        return "misnamed_type"
    return ""
