"""Checks stricter than tree-sitter's error recovery, for what is shown to the user.

tree-sitter recovers from many errors without an ERROR node where a real parser refuses (``return return``,
``def ret(self,)``, ``for iter``), so for Python the standard library's own parser also reads the enclosing
top-level definition with the suggestion in place. And an insertion before a word must not glue onto it
(``value`` before ``parse(val)`` gives ``valueparse(val)``).
"""

from __future__ import annotations

import ast
import re
import warnings

MAX_CHUNK_LINES = 400  # larger enclosing definitions are left to tree-sitter alone (bounded cost per request)
_WORD = re.compile(r"[\w$]")


def glues(text: str, offset: int, cand: str) -> bool:
    """The candidate's last character and the character after the cursor would form one word."""
    first_line = cand.split("\n", 1)[0]
    if "\n" in cand or not first_line or offset >= len(text):
        return False
    return bool(_WORD.match(first_line[-1]) and _WORD.match(text[offset]))


def _chunk_bounds(lines: list[str], row: int) -> tuple[int, int] | None:
    """Lines [a, b) of the top-level statement around ``row`` (from an unindented line to the next one)."""
    a = row
    while a > 0 and not (lines[a].strip() and not lines[a][:1].isspace() and not lines[a].lstrip().startswith("#")):
        a -= 1
    while a > 0 and lines[a - 1].startswith("@"):  # decorators belong to the definition
        a -= 1
    b = row + 1
    while b < len(lines) and not (lines[b].strip() and not lines[b][:1].isspace() and not lines[b].startswith(")")):
        b += 1
    if b - a > MAX_CHUNK_LINES:
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


def python_sound(text: str, offset: int, cand: str) -> bool:
    """False when the enclosing top-level definition parsed with the cursor's line neutral, but not with
    the candidate inserted: the suggestion itself breaks the file. True when it cannot tell."""
    ls = text.rfind("\n", 0, offset) + 1
    le = text.find("\n", offset)
    le = len(text) if le == -1 else le
    lines = text.split("\n")
    row = text.count("\n", 0, ls)
    bounds = _chunk_bounds(lines, row)
    if bounds is None:
        return True
    a, b = bounds
    line = text[ls:le]
    indent = line[: len(line) - len(line.lstrip())]
    before = "\n".join(lines[a:row] + [indent + "pass"] + lines[row + 1 : b])
    if not _parses(before):
        return True  # broken elsewhere (or mid-statement): tree-sitter's verdict stands
    after_line = text[ls:offset] + cand + text[offset:le]
    after = "\n".join(lines[a:row] + after_line.split("\n") + lines[row + 1 : b])
    return _parses(after)


def sound(text: str, offset: int, cand: str, lang: str | None) -> str:
    """Empty when the candidate may be shown; otherwise the reason it may not."""
    if glues(text, offset, cand):
        return "glues"
    if lang == "python" and not python_sound(text, offset, cand):
        return "python_parser"
    return ""
