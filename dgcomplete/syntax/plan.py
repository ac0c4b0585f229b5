"""Decide what kind of span to fill at the cursor (rest of line, args, a block body, ...).

A good plan is most of a completion's quality: it bounds how much the model writes, where it
must stop, and skips requests whose answer would only be noise.
"""

from __future__ import annotations

import re

import tree_sitter

from ..types import SpanKind, SpanPlan
from .check import EDITOR_INSERTS, _indent_of, _width, enclosing_literal, shared_base
from .document import TextIndex
from .languages import is_supported

# characters editors auto-insert to the right of the cursor; they don't make a line "mid-line"
CLOSERS = frozenset(EDITOR_INSERTS)
# a cursor's line longer than this is data or minified code, not a line being written or edited: each check of a
# candidate there reparses the whole line (an unterminated 300,000-character string took 1.8-2.3 s a parse, and a
# request 11-23 s, at its start or its end)
MAX_LINE_CHARS = 1000

_TOKENS = {
    SpanKind.REST_OF_LINE: 24,
    SpanKind.ARGS: 24,
    SpanKind.LINE: 32,
    SpanKind.STATEMENT: 48,
}
_STATEMENT_LINES = 4

# words before "(" that make it a grouping/condition paren, not a call
_NON_CALL_WORDS = frozenset(
    "if elif while for switch catch return and or not in is with assert yield await print_ "
    "case when until sizeof typeof".split()
)
# line ends that continue the statement on the next line even when the parse has no error yet
# (auto-inserted closers keep `x = [|]` error-free); other operators are caught by the parse
_CONTINUES = re.compile(r"(?:[(\[{,=\\.]|=>|->|\b(?:and|or|not|in|lambda)\b)$")
_LUA_OPENER = re.compile(r"(?:\b(?:then|do|else|repeat)|\bfunction\b.*\))$")
_BASH_OPENER = re.compile(r"(?:\b(?:then|do|else|in)|\{)$")
# a Ruby line that opens a body closed by `end` (or goes on with one: `else`, `when`, `rescue`); a modifier
# (`return x if y`) does not start the line, so it opens nothing
_RUBY_OPENER = re.compile(
    r"^\s*(?:(?:private\s+|protected\s+|public\s+)?def|class|module|if|unless"
    r"|while|until|case|begin|for|else|elsif|when|in|rescue|ensure)\b(?!.*\bend\s*$)"
    r"|(?:\bdo|\{)(?:\s*\|[^|]*\|)?$|=\s*(?:if|unless|case|begin)\b.*$")
# an endless method (`def full? = size > 3`) has no body below (a setter's `def name=(v)` has)
_RUBY_ENDLESS_DEF = re.compile(r"\s*(?:(?:private|protected|public)\s+)?def\s+(?:self\.)?(?:\w+[?!]?|[^\w\s(]+)\s*"
                               r"(?:\(.*\))?\s*=(?![=~>(])")
_TRAILING_COMMENT = re.compile(r"\s*(?:#|//|--)[^\"'`]*$")


def indent_unit(text: str, lang: str | None) -> str:
    """The document's indentation step (tab, or the most common increase in spaces)."""
    if lang == "go":
        return "\t"
    counts: dict[int, int] = {}
    prev = 0
    for line in text.split("\n", 400)[:400]:
        if not line.strip():
            continue
        if line.startswith("\t"):
            return "\t"
        width = len(line) - len(line.lstrip(" "))
        if width > prev:
            counts[width - prev] = counts.get(width - prev, 0) + 1
        prev = width
    if counts:
        step = max(counts, key=lambda k: (counts[k], -k))
        if 1 < step <= 8:
            return " " * step
    return "  " if lang in ("lua", "javascript", "typescript", "tsx", "json", "bash", "ruby") else "    "


def _is_block_opener(line: str, lang: str | None) -> bool:
    """Whether a line opens an indented/braced body, judged from its end (ignoring a trailing comment)."""
    code = line.rstrip()
    if not code:
        return False
    candidates = [code]
    stripped = _TRAILING_COMMENT.sub("", code)
    if stripped != code and stripped:
        candidates.append(stripped)
    for c in candidates:
        if c.endswith("{") and lang != "python":
            return True
        if c.endswith(":") and lang in ("python", None):
            return True
        if lang == "lua" and _LUA_OPENER.search(c):
            return True
        if lang == "bash" and _BASH_OPENER.search(c):
            return True
        if lang == "ruby" and _RUBY_OPENER.search(c) and not _RUBY_ENDLESS_DEF.match(c):
            return True
    return False


def _open_call(left: str, lang: str | None) -> bool:
    """True when the innermost bracket still open on this line is a call's/definition's "(".

    A small lexer that skips string literals; Rust lifetimes ('a) are not strings.
    """
    stack: list[int] = []
    i, n = 0, len(left)
    while i < n:
        c = left[i]
        if c in "\"'`":
            if c == "'" and lang == "rust":
                m = re.match(r"'(?:\\.|[^'\\])'", left[i:])
                i += m.end() if m else 1
                continue
            j = i + 1
            while j < n and left[j] != c:
                j += 2 if left[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            stack.append(i)
        elif c in ")]}" and stack:
            stack.pop()
        i += 1
    if not stack or left[stack[-1]] != "(":
        return False
    before = left[: stack[-1]].rstrip()
    if not before or not (before[-1].isalnum() or before[-1] in "_)]>!"):
        return False
    word = re.search(r"(\w+)$", before)
    return not (word and word.group(1) in _NON_CALL_WORDS)


def _unfinished_here(tree: tree_sitter.Tree, lo: int, hi: int) -> bool:
    """Whether an ERROR/MISSING node touches the byte range [lo, hi] (the line up to the cursor)."""
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return True
        for child in node.children:
            if child.has_error and child.start_byte <= hi and child.end_byte >= lo:
                stack.append(child)
    return False


def previous_nonblank(text: str, line_start: int) -> tuple[int, str] | None:
    """(start offset, text) of the closest non-blank line above the one starting at `line_start`."""
    pos = line_start - 1
    while pos > 0:
        start = text.rfind("\n", 0, pos) + 1
        line = text[start:pos].rstrip("\r")
        if line.strip():
            return start, line
        pos = start - 1
    return None


def _next_nonblank(text: str, line_end: int) -> str | None:
    """The closest non-blank line below the one ending at `line_end`."""
    pos = line_end + 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end].rstrip("\r")
        if line.strip():
            return line
        pos = end + 1
    return None


def plan_span(
    text: str,
    offset: int,
    lang: str | None,
    tree: tree_sitter.Tree | None = None,
    *,
    max_lines: int = 8,
    max_tokens: int = 48,
) -> SpanPlan:
    """Pick the span kind at code-point `offset`; `tree` (for `text`) saves a parse when given."""
    offset = max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    if line_end < 0:
        line_end = len(text)
    if line_end - line_start > MAX_LINE_CHARS:
        return SpanPlan(SpanKind.NONE, max_tokens=0, reason="a line too long to complete (data or minified code)")
    left = text[line_start:offset]
    right = text[offset:line_end].rstrip("\r")
    line_indent = _indent_of(text[line_start:line_end])
    blank_left = not left.strip()
    known = is_supported(lang)
    if not known:
        lang = None

    def plan(kind: SpanKind, reason: str, lines: int = 1, indent: str | None = None) -> SpanPlan:
        tokens = max_tokens if kind is SpanKind.BLOCK else min(_TOKENS.get(kind, max_tokens), max_tokens)
        return SpanPlan(
            kind=kind,
            max_lines=max(1, lines),
            max_tokens=tokens,
            indent=line_indent if indent is None else indent,
            reason=reason,
        )

    index: TextIndex | None = None
    if known:
        assert lang is not None
        base = shared_base(text, lang, tree)  # shared with the checks that follow on this text
        tree, index = base.tree, base.index
    byte = index.byte_offset(offset) if index is not None else offset

    # strings and comments: pointless mid-word, otherwise finish the line
    literal = enclosing_literal(tree, byte) if tree is not None else None
    if literal is not None:
        before = left[-1:] or " "
        after = right[:1] or " "
        if (before.isalnum() or before == "_") and (after.isalnum() or after == "_"):
            return SpanPlan(SpanKind.NONE, max_tokens=0, reason=f"inside {literal} mid-word")

    # an edit inside a written line is filled whatever follows it there: the model sees that text and the checks
    # cut a candidate where it starts writing it again (:func:`check.join_right`). Editing the dev split's lines,
    # llama.vim's rule (nothing when more than 12 characters follow) had left 42 of 91 edits without a suggestion
    # (bench/results/edits_ab.json)
    real_right = [c for c in right if not c.isspace() and c not in CLOSERS]
    if literal is not None:
        return plan(SpanKind.REST_OF_LINE, f"in {literal}")
    if real_right:
        return plan(SpanKind.REST_OF_LINE, "mid-line")

    unit = indent_unit(text, lang)
    statement_lines = min(_STATEMENT_LINES, max_lines)
    if blank_left:
        prev = previous_nonblank(text, line_start)
        if prev is not None and _is_block_opener(prev[1], lang):
            prev_indent = _indent_of(prev[1])
            deeper = len(left) > len(prev_indent) and left.startswith(prev_indent)
            # a body that already continues below gets a few new lines, not a whole new body
            nxt = _next_nonblank(text, line_end)
            if nxt is not None and _width(_indent_of(nxt)) > _width(prev_indent):
                lines, reason = min(_STATEMENT_LINES, max_lines), "new line at the top of a block"
            else:
                lines, reason = max_lines, "empty line after a block opener"
            return plan(SpanKind.BLOCK, reason, lines, left if deeper else prev_indent + unit)
        if prev is not None and tree is not None and index is not None:
            prev_code = _TRAILING_COMMENT.sub("", prev[1].rstrip()).rstrip()
            if _CONTINUES.search(prev_code) and _unfinished_here(tree, index.byte_offset(prev[0]), byte):
                return plan(
                    SpanKind.STATEMENT, "blank line inside an unfinished statement", statement_lines, left
                )
        return plan(SpanKind.LINE, "blank line", indent=left)

    if _is_block_opener(left, lang):
        return plan(SpanKind.STATEMENT, "block opener at end of line", statement_lines, line_indent + unit)
    if tree is None or index is None:
        return plan(SpanKind.LINE, "end of line")
    if _open_call(left, lang):
        return plan(SpanKind.ARGS, "inside an unfinished argument list")
    code = _TRAILING_COMMENT.sub("", left.rstrip()).rstrip() if lang != "bash" else left.rstrip()
    if _CONTINUES.search(code) or _unfinished_here(tree, index.byte_offset(line_start), byte):
        return plan(
            SpanKind.STATEMENT, "unfinished statement at end of line", statement_lines, line_indent + unit
        )
    return plan(SpanKind.LINE, "end of line")
