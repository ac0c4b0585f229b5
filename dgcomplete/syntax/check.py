"""Cheap syntax checks of a candidate spliced into the document, and trimming candidates to a plan.

Every check edits a copy of a cached tree and reparses incrementally: the document's tree for
small files, else the tree of the definition(s) around the edit, so a check costs about the size
of that definition, not of the file. Errors are compared with the document as it is (it may
already be broken while the user types), never demanded to be zero.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import TypeVar

import tree_sitter

from ..types import SpanKind, SpanPlan
from .document import TextIndex, advance_point
from .languages import comment_openers, get_parser, is_comment_line, is_supported

_T = TypeVar("_T")

# --- error counting ---------------------------------------------------------------------------


def error_count(tree: tree_sitter.Tree | tree_sitter.Node | None) -> int:
    """ERROR + MISSING nodes; only descends into subtrees flagged has_error, so clean trees are O(1)."""
    if tree is None:
        return 0
    root = tree.root_node if isinstance(tree, tree_sitter.Tree) else tree
    if not root.has_error:
        return 0
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
        for child in node.children:
            if child.has_error:
                stack.append(child)
    return count


def _error_nodes(root: tree_sitter.Node, lo: int = 0, hi: int = -1) -> list[tree_sitter.Node]:
    """ERROR/MISSING nodes (touching [lo, hi] when hi >= 0), visiting only subtrees flagged has_error."""
    out: list[tree_sitter.Node] = []
    if not root.has_error:
        return out
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            out.append(node)
        for child in node.children:
            if child.has_error and (hi < 0 or (child.start_byte <= hi and child.end_byte >= lo)):
                stack.append(child)
    return out


def _error_key(node: tree_sitter.Node) -> str:
    return "ERROR" if node.is_error else "MISSING " + node.type


# --- the document a candidate is checked against ----------------------------------------------


# Above this size a check reparses only the definition(s) around the edit: tree-sitter's
# incremental reparse of a 5,000-line file costs ~1.5 ms even for a one-character edit, and tens
# of ms when an unclosed bracket sends error recovery to the end of the file.
_SMALL_DOC = 16 * 1024
_TARGET_WINDOW = 8 * 1024  # descend into enclosing nodes until the window is this small
_MAX_WINDOW = 64 * 1024
_CONFIRM_DOC = 256 * 1024  # a window's errors are confirmed on documents up to this size (_check)
_CONFIRM_BUDGET_S = 0.03  # ... spending at most this long per document version


def _first_child_for_byte(node: tree_sitter.Node, byte: int) -> tree_sitter.Node | None:
    """The first child of ``node`` that ends after ``byte``, or None.

    Not ``node.first_child_for_byte``: py-tree-sitter 0.26 returns an invalid node (touching it segfaults the
    process) instead of None when no child ends after ``byte`` (the cursor at the end of the file), and also
    when ``byte`` falls in a gap before the last child (the blank line before a Go ``const (...)`` block's
    ``)``). A binary search over ``child(i)``, which only takes valid indices, finds the same node.
    """
    lo, hi = 0, node.child_count
    while lo < hi:  # the first index whose child ends after byte (children's end bytes never decrease)
        mid = (lo + hi) // 2
        if node.child(mid).end_byte > byte:
            hi = mid
        else:
            lo = mid + 1
    return node.child(lo) if lo < node.child_count else None


def ancestors(root: tree_sitter.Node, node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """``node`` and its ancestors up to ``root``, innermost first.

    Not by climbing ``node.parent``: tree-sitter finds a node's parent by descending from the root, so a climb of a
    tree ``d`` deep costs ``d`` squared (completions in Go closures, Ruby blocks and Python calls nested 3,000 deep
    took up to 9.5, 5.1 and 5.2 s, bench/results/deep_nesting_before.json); this descends once (``child_with_descendant``), the
    same chain (tests/test_syntax.py compares them at every position of valid, broken and deep text)."""
    chain = [root]
    while chain[-1] != node:
        child = chain[-1].child_with_descendant(node)
        if child is None:  # not under root: what the climb gives
            chain = []
            while node is not None:
                chain.append(node)
                node = node.parent
            return chain
        chain.append(child)
    chain.reverse()
    return chain


def _point(data: bytes, offset: int) -> tuple[int, int]:
    return data.count(b"\n", 0, offset), offset - (data.rfind(b"\n", 0, offset) + 1)


class _Window:
    """A byte range of the document checked on its own: its bytes, tree and errors."""

    __slots__ = ("start", "data", "tree", "errors")

    def __init__(self, start: int, data: bytes, tree: tree_sitter.Tree) -> None:
        self.start = start
        self.data = data
        self.tree = tree
        # (kind, start byte) of each error: enough to recognise it again after an edit elsewhere
        self.errors = [(_error_key(n), n.start_byte) for n in _error_nodes(tree.root_node)]


class _Base:
    """The unmodified document: text/bytes and tree, plus lazily built check windows."""

    __slots__ = ("index", "lang", "tree", "_whole", "_windows", "confirm_s", "blanks")

    def __init__(self, text: str, lang: str, tree: tree_sitter.Tree | None) -> None:
        self.index = TextIndex(text)
        self.lang = lang
        self.tree = tree if tree is not None else get_parser(lang).parse(self.index.data)
        self._whole: _Window | None = None
        self._windows: OrderedDict[tuple[int, int], _Window | None] = OrderedDict()
        self.confirm_s = 0.0  # time spent confirming windows' refusals on this version (_check's budget)
        self.blanks: dict[tuple[int, int, int, int], _Base] = {}  # finishes_line's windows with the typed part taken out

    def whole(self) -> _Window:
        if self._whole is None:
            self._whole = _Window(0, self.index.data, self.tree)
        return self._whole

    def window(self, start_b: int, end_b: int) -> _Window:
        """The region a check of an edit at [start_b, end_b) parses.

        Small documents: all of it. Otherwise the definitions around the edit (plus the one
        before it, which the edit may extend), descending into a big enclosing node (a class
        body) while the slice parses as cleanly on its own as it does in the document.
        """
        data = self.index.data
        if len(data) <= _SMALL_DOC:
            return self.whole()
        spans: list[tuple[int, int]] = []  # outermost first
        node = self.tree.root_node
        for _ in range(64):
            bounds = _around(node, start_b, end_b)
            if bounds is None:
                break
            ws = data.rfind(b"\n", 0, bounds[0]) + 1
            we = data.find(b"\n", bounds[1])
            we = len(data) if we < 0 else we + 1
            if we - ws <= _MAX_WINDOW and we - ws < len(data) and (not spans or spans[-1] != (ws, we)):
                spans.append((ws, we))
            inner = _first_child_for_byte(node, start_b)
            if (
                inner is None
                or inner.start_byte > start_b
                or inner.end_byte < end_b
                or inner.child_count == 0
            ):
                break
            node = inner
        if not spans:
            # the edit comes after a statement bigger than any window (data, a list never closed) with nothing to
            # descend into: its own lines, without the statement it may extend. Each check reparsed the whole
            # document, a list of 900 KB with its error recovery (bench/results/reliability.md, "900 KB line")
            ws = data.rfind(b"\n", 0, start_b) + 1
            we = data.find(b"\n", end_b)
            we = len(data) if we < 0 else we + 1
            if we - ws <= _MAX_WINDOW:
                spans.append((ws, we))
        # the largest slice within the target size that parses on its own, else the smallest bigger one
        small = [sp for sp in spans if sp[1] - sp[0] <= _TARGET_WINDOW]
        big = [sp for sp in reversed(spans) if sp[1] - sp[0] > _TARGET_WINDOW]
        for ws, we in small + big:
            win = self._slice(ws, we)
            if win is not None:
                return win
        return self.whole()

    def _slice(self, ws: int, we: int) -> _Window | None:
        key = (ws, we)
        win = self._windows.get(key)
        if win is None and key not in self._windows:
            win_data = self.index.data[ws:we]
            win = _Window(ws, win_data, get_parser(self.lang).parse(win_data))
            in_doc = sum(1 for n in _error_nodes(self.tree.root_node, ws, we) if ws <= n.start_byte < we)
            if len(win.errors) > in_doc:
                win = None
            self._windows[key] = win
            if len(self._windows) > 32:
                self._windows.popitem(last=False)
        return win


def _around(node: tree_sitter.Node, start_b: int, end_b: int) -> tuple[int, int] | None:
    """Byte range of `node`'s children touching [start_b, end_b], plus the one just before it."""
    if node.child_count == 0:
        return None
    first = _first_child_for_byte(node, start_b)  # first child ending after start_b
    lo = first.start_byte if first is not None else start_b
    if first is None or first.start_byte >= start_b:
        prev = first.prev_sibling if first is not None else node.child(node.child_count - 1)
        while prev is not None and prev.is_extra and prev.prev_sibling is not None:
            prev = prev.prev_sibling  # comments between definitions
        if prev is not None:
            lo = prev.start_byte
    last = _first_child_for_byte(node, end_b)
    hi = end_b
    if last is not None and last.start_byte < end_b:
        hi = max(hi, last.end_byte)
    return min(lo, start_b), hi


_cache: OrderedDict[tuple[object, ...], tuple[str, tree_sitter.Tree | None, _Base]] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 8


def _base(text: str, lang: str, tree: tree_sitter.Tree | None) -> _Base:
    """Reuses the encoded text, windows and error counts across the many checks of one document version.

    With a tree the key is object identity (the entry holds both objects, so ids cannot be
    recycled): a hit is O(1) even for a large file. Without one, the text itself is the key.
    """
    key: tuple[object, ...] = (lang, id(text), id(tree)) if tree is not None else (lang, text)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is text and hit[1] is tree:
            _cache.move_to_end(key)
            return hit[2]
        if hit is not None and tree is None:
            _cache.move_to_end(key)
            return hit[2]
    base = _Base(text, lang, tree)
    with _cache_lock:
        _cache[key] = (text, tree, base)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return base


shared_base = _base


class _Splice:
    """The checked window with a candidate spliced in, parsed incrementally from the window's tree.

    start_b/end_b are the candidate's byte range in the window's coordinates.
    """

    __slots__ = ("tree", "data", "start_b", "end_b", "old_end_b", "cand_b", "window")

    def __init__(self, base: _Base, start: int, end: int, candidate: str, whole: bool = False) -> None:
        idx = base.index
        start = max(0, min(start, len(idx.text)))
        end = max(start, min(end, len(idx.text)))
        cand_b = candidate.encode("utf-8")
        abs_start = idx.byte_offset(start)
        abs_end = abs_start if end == start else idx.byte_offset(end)
        win = base.whole() if whole else base.window(abs_start, abs_end)
        start_b = abs_start - win.start
        end_b = abs_end - win.start
        data = win.data[:start_b] + cand_b + win.data[end_b:]
        tree = win.tree.copy()
        start_point = _point(win.data, start_b)
        tree.edit(
            start_b,
            end_b,
            start_b + len(cand_b),
            start_point,
            _point(win.data, end_b),
            advance_point(start_point, cand_b),
        )
        self.tree = get_parser(base.lang).parse(data, tree)
        self.data = data
        self.start_b = start_b
        self.end_b = start_b + len(cand_b)
        self.old_end_b = end_b
        self.cand_b = cand_b
        self.window = win


class _Check:
    """A splice plus the error nodes it added.

    An error of the spliced tree is "old" when the base had one of the same kind starting at the
    same place (mapped through the edit; an error that merely grew keeps its start). So a
    candidate that leaves the user's unfinished statement as unfinished as before adds nothing,
    while one that fixes that error but breaks something else is still caught.
    """

    __slots__ = ("splice", "added", "errors")

    def __init__(self, base: _Base, start: int, end: int, candidate: str, whole: bool = False) -> None:
        splice = _Splice(base, start, end, candidate, whole)
        sb, old_end, delta = splice.start_b, splice.old_end_b, splice.end_b - splice.old_end_b
        expected: dict[tuple[str, int], int] = {}
        for kind, pos in splice.window.errors:
            mapped = pos if pos < sb else (pos + delta if pos >= old_end else sb)
            expected[(kind, mapped)] = expected.get((kind, mapped), 0) + 1
        added: list[tree_sitter.Node] = []
        nodes = _error_nodes(splice.tree.root_node)
        for node in nodes:
            key = (_error_key(node), node.start_byte)
            if expected.get(key, 0) > 0:
                expected[key] -= 1
            else:
                added.append(node)
        self.splice = splice
        self.added = added
        self.errors = len(nodes)  # all the spliced window has, old and added


_OPEN_CLOSE = {"{": "}", "(": ")", "[": "]"}


def _unclosed(line: str) -> list[str] | None:
    """The closers a line still owes for the brackets it opens, innermost last; None when a closer does not match
    the bracket it would close (the line is unbalanced). A closer with nothing open closes a line above (``} else
    {``, the typed ``if (x`` of ``if (x`` + ``) {``) and is passed over."""
    stack: list[str] = []
    for m in _CUT_TOKEN.finditer(line):
        t = m.group()
        if t in _OPEN_CLOSE:
            stack.append(_OPEN_CLOSE[t])
        elif t in _CLOSERS and stack:
            if stack.pop() != t:
                return None
    return stack


def _closing(candidate: str) -> str:
    """Closers for a candidate whose last line opens a brace block (``if (x) {``), else "".

    Such a line is a sound completion the user goes on from (the editor auto-closes it, the next lines fill
    it), so it is checked as if its open brackets were closed on the following line. A line ending in ``(`` or
    ``[`` is not: as ghost text it is a fragment, not a statement. Give it the typed part of the line too
    (:func:`_check_in`), so that the brackets opened there are closed (``foo(func`` + ``tion() {``); an
    unbalanced one gets none (the plain check judges it).
    """
    body = candidate.rstrip()
    if not body.endswith("{"):
        return ""
    stack = _unclosed(body)
    last = body.rsplit("\n", 1)[-1]
    return "\n" + _indent_of(last) + "".join(reversed(stack)) if stack else ""


_TRY = re.compile(r"(?:\}\s*)?try\s*\{$")


def _block_ends(typed: str, candidate: str) -> tuple[str, ...]:
    """What may follow a candidate that opens a block, for it to be checked as the sound line it is (:func:`_closing`
    with the brackets the typed part of the line opened: `if (x` + `) {`): its closers, then with `;` (a statement's
    braces: `let p = Point {`, `submit(() -> {`), and `try {` with an empty `finally` (its handlers come later)."""
    closer = (_closing(typed + candidate) if "\n" not in candidate else "") or _closing(candidate)
    if not closer:
        return ()
    last = (typed + candidate).rstrip().rsplit("\n", 1)[-1].strip()
    return (closer, closer + ";") + ((closer + " finally {}",) if _TRY.match(last) else ())


def _check(base: _Base, start: int, end: int, candidate: str) -> _Check:
    """The splice check, allowing a last line that opens a block (see :func:`_closing`).

    A window is a slice of the document parsed on its own, so what is sound in the document can break the
    slice: the ``}`` that closes a block opened above the window, a decorator or ``/**`` at the window's end.
    Errors a window finds are therefore confirmed on the whole document (up to ``_CONFIRM_DOC`` bytes;
    incremental, only for a candidate the window refused, and at most ``_CONFIRM_BUDGET_S`` per document
    version, so a pathological file costs a keystroke a bounded time). On corpus dev files this was 1-2 % of the
    right lines refused (bench/results/check_windows.json)."""
    check = _check_in(base, start, end, candidate, False)
    if check.added and _may_confirm(base, check.splice.window):
        check = _confirmed(base, lambda: _check_in(base, start, end, candidate, True))
    return check


def _confirmed(base: _Base, ask: Callable[[], _T]) -> _T:
    """``ask()``, a check on the whole document, its time charged to the version's ``_CONFIRM_BUDGET_S``."""
    t0 = time.perf_counter()
    try:
        return ask()
    finally:
        base.confirm_s += time.perf_counter() - t0


def _may_confirm(base: _Base, window: _Window) -> bool:
    """Whether a window's refusal is confirmed on the whole document: a window, not the whole, of a document up to
    ``_CONFIRM_DOC`` bytes whose version has not spent ``_CONFIRM_BUDGET_S`` on it yet."""
    return (len(base.index.data) <= _CONFIRM_DOC and base.confirm_s < _CONFIRM_BUDGET_S
            and window is not base.whole())  # whole() last: it lists the whole tree's errors


_BODY_SCAN = 400  # lines _body_below reads at most: a longer body is taken as written below (refusing the brace)


def _body_below(text: str, start: int, end: int, lang: str) -> bool:
    """Whether the block a line would open already has its body below, without a brace of its own: the lines after
    the cursor's are indented deeper, and the first that is not ends the body without the ``}`` at the line's
    indentation that would close it (``for (auto e : node)`` above ``Emit(*e);`` and then the next statement), or
    the next line opens the block itself (``{`` on a line of its own); comments and preprocessor lines are read past
    (zlib's ``if (...) {`` under ``#else``, its body below the ``#endif``). There the code written does not end, so a
    ``{`` suggested at the line's end is no head waiting for its body: the file has no ``}`` for it."""
    ls = text.rfind("\n", 0, start) + 1
    eol, deeper = text.find("\n", end), False
    width = _width(_indent_of(text[ls : eol if eol >= 0 else len(text)]))
    for _ in range(_BODY_SCAN):
        if eol < 0:
            break
        nxt = text.find("\n", eol + 1)
        line = text[eol + 1 : nxt if nxt >= 0 else len(text)]
        eol = nxt
        if not line.strip() or line.lstrip().startswith("#") or is_comment_line(line, lang):
            continue  # preprocessor lines, attributes, comments
        w = _width(_indent_of(line))
        if w > width:
            deeper = True
            continue
        return (line.lstrip().startswith("{") and not deeper) or (deeper and not (
            w == width and line.lstrip().startswith("}")))
    return deeper


def _check_in(base: _Base, start: int, end: int, candidate: str, whole: bool) -> _Check:
    check = _Check(base, start, end, candidate, whole)
    if check.added:
        text = base.index.text
        ends = _block_ends(text[text.rfind("\n", 0, start) + 1 : start], candidate)
        if ends and not _body_below(text, start, end, base.lang):  # a head waiting for its body where code ends
            for end_ in ends:
                closed = _Check(base, start, end, candidate + end_, whole)
                if not closed.added:
                    return closed
    return check


def new_errors(
    text: str,
    start: int,
    end: int,
    candidate: str,
    lang: str | None,
    base_tree: tree_sitter.Tree | None = None,
) -> int:
    """ERROR/MISSING nodes added by replacing text[start:end] (code points) with `candidate`; 0 for unknown languages."""
    if not is_supported(lang):
        return 0
    assert lang is not None
    return len(_check(_base(text, lang, base_tree), start, end, candidate).added)


def mends_errors(text: str, start: int, end: int, candidate: str, lang: str | None) -> bool:
    """Whether replacing text[start:end] with ``candidate`` leaves fewer ERROR/MISSING nodes where it is checked
    (the window around it) and adds none: Repair's cheap screen of a one-token edit, before the whole document
    confirms it."""
    if not is_supported(lang):
        return False
    assert lang is not None
    check = _check(_base(text, lang, None), start, end, candidate)
    return not check.added and check.errors < len(check.splice.window.errors)


_NEAR_LINES = 30  # finishes_line: how far above the line an error the grammar also finds without it makes it unsure
# where a JavaScript regular expression may start (`.replace(/[<[].+/`): its brackets need not pair up (nor in a
# template or Go raw string, `regexp.MustCompile(`^"?([^"]*)"?`)`, which the bracket count does not read as one)
_REGEX_START = re.compile(r"(?:^|[=(,:\[!&|?{};]|return)\s*/[^/*]")
_LONG_QUOTES = re.compile(r'"""|\'\'\'|`|/\*|\*/')


def _typed_at_end(text: str, offset: int) -> str | None:
    """What is typed of the cursor's line from its indentation, or None in a middle of the line (right of the cursor
    more than closers): the line checks judge only a line the candidate finishes."""
    eol = text.find("\n", offset)
    if any(ch not in _CLOSERS and not ch.isspace() for ch in text[offset : eol if eol >= 0 else len(text)]):
        return None
    return text[text.rfind("\n", 0, offset) + 1 : offset].lstrip(" \t")


def finishes_line(
    text: str,
    offset: int,
    candidate: str,
    lang: str | None,
    base_tree: tree_sitter.Tree | None = None,
) -> bool:
    """False when the candidate finishes the cursor's line and that line, written whole where the line is blank,
    adds syntax errors.

    :func:`is_valid` compares with the document as it is, where the typed part is often an error already (``return
    (``), so a suggestion that leaves the line as broken passed it: ``return (`` + ``...args)``, ``function s`` +
    ``toreMappingPair``, ``? 1 `` + ``];``. Here the typed part and the candidate are checked together against the
    document with the typed part taken out (the window around the line, reparsed). Only a candidate that finishes
    the line is asked: right of the cursor nothing but closers, and its first line with what is typed closes every
    bracket it opens, or opens a block (checked with the block closed, or in Python with a body). A fragment
    (``foo(ba`` + ``r``, which the user goes on from), a line that opens or closes a string or comment running
    over lines, a C preprocessor line and a line under code the grammar fails on are not. The engine does not ask
    it of a candidate the checks cut short (a fragment too)."""
    if not is_supported(lang):
        return True
    assert lang is not None
    typed = _typed_at_end(text, offset)
    if not typed or not typed.strip():
        return True  # a middle of the line, or nothing typed (is_valid is this check)
    start = offset - len(typed)
    line = (typed + candidate.split("\n", 1)[0]).rstrip()
    if len(_LONG_QUOTES.findall(line)) % 2 or (lang in ("c", "cpp") and line.startswith("#")):
        return True  # a string or comment running over lines; a preprocessor line (its #if pairs with lines below)
    owed = _unclosed(line)
    if owed and not line.endswith("{"):
        return True  # a fragment (unbalanced, `(a ? 1 ];`, is none: a broken line)
    base = _base(text, lang, base_tree)
    s_b, o_b = base.index.byte_offset(start), base.index.byte_offset(offset)
    if (owed is None and _unclosed(typed) is not None and "`" not in line and not _REGEX_START.search(line)
            and not is_comment_line(line, lang) and not any(o in line for o in comment_openers(lang))
            and enclosing_literal(base.tree, o_b) is None):
        return False  # the candidate closes a bracket of the line with another closer (`? 1 ` + `];`), whatever is around
    indent = text[text.rfind("\n", 0, start) + 1 : start]
    pass_ = "\n" + indent + "    pass" if lang == "python" and line.endswith(":") else ""
    win = base.window(s_b, o_b)
    if _line_sound(base, win, s_b, o_b, typed + candidate, pass_):
        return True
    if not _may_confirm(base, win):
        return False
    t0 = time.perf_counter()  # a window's refusal is confirmed on the whole document, as _check does
    sound = _line_sound(base, base.whole(), s_b, o_b, typed + candidate, pass_)
    base.confirm_s += time.perf_counter() - t0
    return sound


# the grammars' node types whose text is a string or a comment (enclosing_literal: the plan, the line check, strict)
_STRING_TYPES = frozenset(
    {
        "string",
        "string_literal",
        "raw_string_literal",
        "interpreted_string_literal",
        "template_string",
        "string_fragment",
        "string_content",
        "char_literal",
        "character_literal",
        "text_block",
        "raw_string",
        "heredoc_body",
        "string_array",  # Ruby's %w[...]
        "encapsed_string",  # PHP's "...{$x}..."
        "nowdoc_body",
    }
)
_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment", "doc_comment"})


def enclosing_literal(tree: tree_sitter.Tree, byte: int) -> str | None:
    """'string' or 'comment' when the cursor is inside a string literal or a comment (its text, not after it)."""
    root = tree.root_node
    starts = [root.descendant_for_byte_range(byte, byte)]
    if byte > 0:
        starts.append(root.descendant_for_byte_range(byte - 1, byte))
    for start in starts:
        for node in ancestors(root, start) if start is not None else ():
            if not node.start_byte <= byte <= node.end_byte:
                break
            if node.type in _COMMENT_TYPES:
                if node.start_byte < byte < node.end_byte:
                    return "comment"
                # a line comment ends at the line end: the cursor there is still in it; after `*/` it is not
                if (
                    byte == node.end_byte
                    and byte > node.start_byte
                    and not (node.text or b"").endswith(b"*/")
                ):
                    return "comment"
                break
            if node.type in _STRING_TYPES:
                if node.start_byte < byte < node.end_byte:
                    return "string"
                if byte == node.end_byte > node.start_byte and node.has_error:
                    return "string"  # unterminated string
    return None


def _blank(base: _Base, win: _Window, s_b: int, o_b: int) -> _Base:
    """``win`` with the typed part [s_b, o_b) of the cursor's line taken out, reparsed; cached on ``base`` (one
    document version), as the line checks of every candidate of a request ask for the same one."""
    key = (win.start, len(win.data), s_b, o_b)
    blank = base.blanks.get(key)
    if blank is None:
        a, b = s_b - win.start, o_b - win.start
        tree = win.tree.copy()
        pa = _point(win.data, a)
        tree.edit(a, b, a, pa, _point(win.data, b), pa)
        data = win.data[:a] + win.data[b:]
        blank = _Base(data.decode("utf-8", "replace"), base.lang, get_parser(base.lang).parse(data, tree))
        if len(base.blanks) > 8:
            base.blanks.clear()
        base.blanks[key] = blank
    return blank


def _line_sound(base: _Base, win: _Window, s_b: int, o_b: int, whole: str, pass_: str) -> bool:
    """Whether ``whole`` (the typed part and the candidate) written at byte ``s_b`` of ``win`` with its typed part
    [s_b, o_b) taken out adds no error on its first line (a block it opens closed, or given ``pass_`` as its body).
    Windows with the typed part taken out are cached on ``base`` (one document version)."""
    blank = _blank(base, win, s_b, o_b)
    a = s_b - win.start
    # an error just above the line that runs on into it: the code there is not finished (a header's parameters
    # written one a line, its `)` not yet), so the line cannot be judged alone; or one the document as typed has too:
    # the grammar fails on the code above (C++ in a `.h` read as C, Rust's `try!`, a template). Not an error taking
    # the typed part out made and that ends above (`void` left alone above the header being typed), nor one below:
    # taking a line out breaks what follows it (a header's parameters, an `else`'s block) in both versions alike
    line_lo = win.data.rfind(b"\n", 0, a) + 1
    near_lo = line_lo
    for _ in range(_NEAR_LINES):
        near_lo = win.data.rfind(b"\n", 0, max(0, near_lo - 1)) + 1
    own = set(win.errors)
    for node in _error_nodes(blank.whole().tree.root_node):
        if near_lo <= node.start_byte < line_lo and (node.end_byte > line_lo
                                                      or (_error_key(node), node.start_byte) in own):
            return True
    at = len(win.data[:a].decode("utf-8", "replace"))
    check = _Check(blank, at, at, whole, True)
    if check.added and pass_ and "\n" not in whole.rstrip():
        check = _Check(blank, at, at, whole.rstrip() + pass_, True)
    elif check.added:
        for end_ in _block_ends("", whole):
            check = _Check(blank, at, at, whole + end_, True)
            if not check.added:
                break
    # only errors on the line count: where the code around is not finished (writing a call's arguments one a line,
    # its `)` not yet), error recovery moves errors elsewhere with whatever is written (a line below, or the
    # `)` still owed put after the line: the same missing token, not the line's)
    owed = Counter(kind for kind, _ in blank.whole().errors if kind.startswith("MISSING"))
    lo, hi = check.splice.start_b, check.splice.start_b + len(whole.split("\n", 1)[0].encode("utf-8"))
    for node in check.added:
        if not (node.start_byte <= hi and node.end_byte >= lo):
            continue
        kind = _error_key(node)
        if owed[kind] <= 0:
            return False
        owed[kind] -= 1
    return True


_BELOW_LINES = 60  # mends_below: how far below the cursor's line an error counts as one the line must mend


def _errors_below(tree: tree_sitter.Tree, data: bytes, pos: int) -> tuple[list[tuple[str, int, int]], bool]:
    """The ERROR/MISSING nodes (kind, start, end) that start from the end of the line at byte ``pos`` to
    ``_BELOW_LINES`` lines below it, and whether there are others (the grammar fails on code elsewhere, or code
    above is not finished)."""
    lo = data.find(b"\n", pos)
    if lo < 0:
        return [], False
    hi = lo
    for _ in range(_BELOW_LINES):
        nxt = data.find(b"\n", hi + 1)
        if nxt < 0:
            hi = len(data)
            break
        hi = nxt
    nodes = _error_nodes(tree.root_node)
    return ([(_error_key(n), n.start_byte, n.end_byte) for n in nodes if lo <= n.start_byte <= hi],
            any(not lo <= n.start_byte <= hi for n in nodes))


def _deeper_below(text: str, offset: int, candidate: str, lang: str) -> bool:
    """Whether the next line with code under the cursor's line is indented deeper than that line written with the
    candidate (whose own leading blanks count where the cursor is in the indentation); comments are read past."""
    ls = text.rfind("\n", 0, offset) + 1
    width = _width(_indent_of(text[ls:offset] + candidate))
    eol = text.find("\n", offset)
    while eol >= 0:
        nxt = text.find("\n", eol + 1)
        line = text[eol + 1 : nxt if nxt >= 0 else len(text)]
        eol = nxt
        if line.strip() and not is_comment_line(line, lang):
            return _width(_indent_of(line)) > width
    return False


def mends_below(
    text: str,
    offset: int,
    candidate: str,
    lang: str | None,
    base_tree: tree_sitter.Tree | None = None,
) -> bool:
    """False when the code below the cursor's line is a body broken without a head there, and the line the
    candidate finishes leaves it broken.

    Taking the head of a block out of finished code breaks the lines under it: the parameters under ``def f(``, the
    entries under ``exponents = {``, the block of an ``if (...) {`` or a ``} else {`` and the ``}`` that closed it.
    :func:`is_valid` and :func:`finishes_line` ask only that a candidate add no error, so while such a line is
    written again any line that parses alone passed (``try:`` above ``def naturalsize``'s parameters). Here, where
    the next line with code is indented deeper than the cursor's and the document with the line's typed part taken
    out has errors starting below the line (to ``_BELOW_LINES`` lines), a candidate that finishes the line must mend
    one of them and leave the others as they were. Not asked: where the code below is shallower (the body of a block
    opened above, its ``}`` not written yet: an error no line here mends), where the checked window has an error
    elsewhere too (code above unfinished, C++ or a macro the grammar fails on: there the errors below may be the
    code's own, which no line mends), a middle of the line, a fragment the user goes on from (an unclosed ``(``,
    which swallows the lines below until it is closed), a line in a comment or string or one opening one, a C
    preprocessor line. A window's refusal is confirmed on the whole document, as :func:`_check`'s are."""
    if not is_supported(lang):
        return True
    assert lang is not None
    typed = _typed_at_end(text, offset)
    if typed is None:
        return True  # a middle of the line
    whole = typed + candidate.rstrip()
    first = whole.split("\n", 1)[0].strip()
    if not first or len(_LONG_QUOTES.findall(whole)) % 2 or (lang in ("c", "cpp") and first.startswith("#")):
        return True
    owed = _unclosed(whole)
    if owed is None or (owed and not whole.endswith("{")) or not _deeper_below(text, offset, candidate, lang):
        return True  # unbalanced (the other checks judge it), a fragment, or no body below waiting for a head
    base = _base(text, lang, base_tree)
    s_b, o_b = base.index.byte_offset(offset - len(typed)), base.index.byte_offset(offset)
    if enclosing_literal(base.tree, o_b) is not None:
        return True  # a comment's or a string's line heads nothing
    win = base.window(s_b, o_b)
    if _mends_in(base, win, s_b, o_b, whole):
        return True
    if not _may_confirm(base, win):
        return False
    # a window cut where the code is broken may end inside a block (its `}` outside)
    return _confirmed(base, lambda: _mends_in(base, base.whole(), s_b, o_b, whole))


def _mends_in(base: _Base, win: _Window, s_b: int, o_b: int, whole: str) -> bool:
    """:func:`mends_below` in one window: where taking the typed part [s_b, o_b) out leaves errors below the line (and
    none elsewhere), ``whole`` written at byte ``s_b`` instead mends one of them and makes no other."""
    blank = _blank(base, win, s_b, o_b)
    a = s_b - win.start
    before, elsewhere = _errors_below(blank.tree, blank.index.data, a)
    if not before or elsewhere:
        return True
    at = blank.index.char_offset(a)  # the blank window's text is the window's up to the line
    splice = _Splice(blank, at, at, whole, True)
    after, _ = _errors_below(splice.tree, splice.data, splice.end_b)
    n = len(splice.cand_b)
    # the line must mend one of those errors and make no other: one it leaves exactly as it was (kind and place)
    # beside one it mends is the code's own (C++ read as C), not the line's
    had = {(kind, lo + n, hi + n) for kind, lo, hi in before}
    return len(after) < len(before) and all(e in had for e in after)


def is_valid(
    text: str,
    start: int,
    end: int,
    candidate: str,
    lang: str | None,
    base_tree: tree_sitter.Tree | None = None,
) -> bool:
    """True when the candidate adds no syntax errors to the document."""
    return new_errors(text, start, end, candidate, lang, base_tree) == 0


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _token_around(cand: str, pos: int) -> tuple[int, int]:
    """The candidate token ending at (or containing) code-point `pos`, skipping whitespace backwards."""
    pos = max(0, min(pos, len(cand)))
    while pos > 0 and cand[pos - 1].isspace():
        pos -= 1
    if pos == 0:
        m = _TOKEN.match(cand, 0)
        return (0, m.end()) if m else (0, 0)
    start = pos - 1
    if cand[start].isalnum() or cand[start] == "_":
        while start > 0 and (cand[start - 1].isalnum() or cand[start - 1] == "_"):
            start -= 1
    return start, pos


def error_char_spans(
    text: str,
    start: int,
    end: int,
    candidate: str,
    lang: str | None,
    base_tree: tree_sitter.Tree | None = None,
) -> list[tuple[int, int]]:
    """Code-point ranges inside `candidate` that the new errors point at (for renoising those tokens).

    ERROR nodes contribute their overlap with the candidate; a MISSING node marks the candidate
    token just before it. When errors were added but none touch the candidate (e.g. an unclosed
    bracket breaking the suffix), the candidate's last token is blamed.
    """
    if not is_supported(lang) or not candidate:
        return []
    assert lang is not None
    check = _check(_base(text, lang, base_tree), start, end, candidate)
    if not check.added:
        return []
    splice = check.splice
    cand_b = splice.cand_b
    ascii_cand = len(cand_b) == len(candidate)

    def to_char(b: int) -> int:
        b = max(0, min(b, len(cand_b)))
        return b if ascii_cand else len(cand_b[:b].decode("utf-8", errors="ignore"))

    spans: list[tuple[int, int]] = []
    for node in check.added:
        if node.is_missing:
            if splice.start_b <= node.start_byte <= splice.end_b:
                spans.append(_token_around(candidate, to_char(node.start_byte - splice.start_b)))
            continue
        lo = max(node.start_byte, splice.start_b) - splice.start_b
        hi = min(node.end_byte, splice.end_b) - splice.start_b
        if hi > lo:
            spans.append((to_char(lo), to_char(hi)))
    if not spans:
        spans.append(_token_around(candidate, len(candidate)))
    return _merge(spans)


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(s for s in spans if s[1] > s[0]):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


# --- trimming candidates to a plan ------------------------------------------------------------

_CLOSERS = ")]}"
# what editors put right of the cursor as they auto-close (it does not make a line "mid-line": plan.CLOSERS)
EDITOR_INSERTS = ")]}\"'`;,"
_TRAILING_PUNCT = set(")]}>\"'`;,: \t")
_MAX_PARSES = 8
# tokens after which a cut leaves an unfinished expression
_BAD_END = re.compile(
    r"(?:[-+*/%=<>!&|^~.,(\[{:\\@]|\b(?:and|or|not|in|is|return|if|else|elif|for|while)\b)\s*$"
)
_CUT_TOKEN = re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|\w+|\s+|[^\w\s]")


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _width(indent: str, tab: int = 4) -> int:
    return sum(tab if c == "\t" else 1 for c in indent)


def _block_outer(text: str, offset: int, kind: SpanKind) -> str:
    """Indentation a multi-line middle must stay right of: the opener's (BLOCK) or the statement's line."""
    line_start = text.rfind("\n", 0, offset) + 1
    if kind is SpanKind.BLOCK:
        pos = line_start - 1
        while pos > 0:  # previous non-blank line
            prev_start = text.rfind("\n", 0, pos) + 1
            line = text[prev_start:pos]
            if line.strip():
                return _indent_of(line)
            pos = prev_start - 1
        return ""
    line_end = text.find("\n", offset)
    return _indent_of(text[line_start : len(text) if line_end < 0 else line_end])


def _reindent(line: str, plan_indent: str, base: str) -> str:
    """Move `line` from the candidate's body indentation `base` to the plan's, keeping relative depth."""
    ind = _indent_of(line)
    if ind.startswith(base):
        rest = ind[len(base) :]
    else:
        rest = " " * max(0, _width(ind) - _width(base))
    if "\t" in plan_indent and not plan_indent.strip("\t"):
        rest = rest.replace("    ", "\t")
    return plan_indent + rest + line[len(ind) :]


def _shape_lines(text: str, offset: int, cand: str, plan: SpanPlan) -> str:
    """Line limit, stop at the end of the enclosing block, re-indent, strip trailing whitespace."""
    suffix = text[offset:]
    rest_of_line = suffix.split("\n", 1)[0].rstrip("\r")
    lines = cand.split("\n")
    if plan.single_line:
        lines = lines[:1]
    else:
        lines = lines[: max(1, plan.max_lines)]
    if len(lines) > 1:
        outer_indent = _block_outer(text, offset, plan.kind)
        outer = _width(outer_indent)
        body = [ln for ln in lines[1:] if ln.strip()]
        base = _indent_of(body[0]) if body else ""
        # a body shallower than the plan but still inside the block is misindented, not finished
        reindent = bool(body) and outer < _width(base) < _width(plan.indent)
        next_line = suffix.split("\n", 1)[1].lstrip() if "\n" in suffix else ""
        kept = [lines[0]]
        closer_on_line = False
        for ln in lines[1:]:
            if not ln.strip():
                kept.append("")
                continue
            if _width(_indent_of(ln)) <= outer and plan.kind in (SpanKind.BLOCK, SpanKind.STATEMENT):
                stripped = ln.strip()
                if stripped[0] in _CLOSERS:
                    # closing the block/bracket: keep it unless the suffix already closes it
                    follows = rest_of_line.strip() or next_line
                    if follows.startswith(stripped[0]):
                        closer_on_line = bool(rest_of_line.strip())
                    else:
                        kept.append(ln)
                break
            kept.append(_reindent(ln, plan.indent, base) if reindent else ln)
        while len(kept) > 1 and not kept[-1].strip():
            kept.pop()
        if closer_on_line and len(kept) > 1:
            kept.append(outer_indent)  # the suffix's closer then lands on its own line
        lines = kept
    # strip trailing whitespace, except where it separates the last line from same-line suffix text
    keep_tail = (
        bool(rest_of_line) and not rest_of_line[0].isspace() and rest_of_line[0] not in _TRAILING_PUNCT
    )
    out = [ln.rstrip() for ln in lines[:-1]]
    last = lines[-1]
    if not (keep_tail and last.strip()):
        last = last.rstrip() if last.strip() else last
    out.append(last)
    return "\n".join(out)


def _drop_suffix_overlap(cand: str, suffix: str) -> str:
    """Remove a tail of the candidate that the suffix already provides (auto-inserted closers, the next line)."""
    rest_of_line = suffix.split("\n", 1)[0].rstrip("\r")
    if rest_of_line and "\n" not in cand.rstrip():
        stripped = cand.rstrip()
        for k in range(min(len(stripped), len(rest_of_line)), 0, -1):
            overlap = rest_of_line[:k]
            if not stripped.endswith(overlap):
                continue
            if all(c in _TRAILING_PUNCT for c in overlap) or (k == len(rest_of_line.rstrip()) and k >= 4):
                return stripped[:-k].rstrip() if all(c in _TRAILING_PUNCT for c in overlap) else stripped[:-k]
    if "\n" in cand:
        cand_lines = cand.split("\n")
        head = [ln.strip() for ln in suffix.split("\n") if ln.strip()][:3]
        for m in range(min(3, len(cand_lines) - 1, len(head)), 0, -1):
            tail = [ln.strip() for ln in cand_lines[-m:]]
            if tail == head[:m] and all(tail):
                return "\n".join(cand_lines[:-m]).rstrip()
    return cand


_JOIN_TOKEN = re.compile(r"\w+|[^\w\s]")


def _common_prefix(s: str, at: int, other: str) -> int:
    """How many characters of ``s`` from ``at`` on equal the start of ``other``."""
    n, most = 0, min(len(s) - at, len(other))
    while n < most and s[at + n] == other[n]:
        n += 1
    return n


def join_right(cand: str, rest_of_line: str) -> str:
    """A one-line candidate cut where it starts writing what is already right of the cursor (an edit inside a
    written line: ``isfinite(value)`` before ``(number):`` is ``isfinite``), so the line reads as the candidate
    then the text that was there. The cut is at the candidate's token where the most of that text begins again
    (at least its first token; on a tie, the earliest). Unchanged when it never does, or nothing but closers
    and blanks is right of the cursor."""
    right = rest_of_line.rstrip("\r")
    if not right.strip(EDITOR_INSERTS + " \t") or "\n" in cand.rstrip():
        return cand
    want = right.lstrip()
    head = _JOIN_TOKEN.match(want)
    if head is None:
        return cand
    best, most = -1, 0
    for m in _JOIN_TOKEN.finditer(cand):
        i = m.start()
        if i == 0:
            continue  # the whole candidate again is no insertion
        n = _common_prefix(cand, i, want)  # how much of the text right of the cursor begins here again
        if n >= len(head.group()) and n > most:
            best, most = i, n
    if best < 0:
        return cand
    return cand[:best].rstrip() if right[:1].isspace() else cand[:best]


def _cut_points(cand: str) -> list[int]:
    """Prefix lengths worth trying: line ends (longest first), then token ends that finish an expression."""
    line_ends = [i for i, c in enumerate(cand) if c == "\n" and cand[:i].strip()]
    line_ends.sort(reverse=True)
    token_ends: list[int] = []
    for m in _CUT_TOKEN.finditer(cand):
        if m.group().isspace():
            continue
        end = m.end()
        if end < len(cand) and not _BAD_END.search(cand[:end]):
            token_ends.append(end)
    token_ends.sort(reverse=True)
    seen: set[int] = set()
    out: list[int] = []
    for p in line_ends + token_ends:
        if p not in seen and p > 0:
            seen.add(p)
            out.append(p)
    return out


def cut_candidate(
    text: str,
    offset: int,
    candidate: str,
    plan: SpanPlan,
    lang: str | None,
    base_tree: tree_sitter.Tree | None = None,
) -> str:
    """Trim a raw candidate to what the plan allows and the syntax accepts.

    Order: line limit / block end / re-indent, drop what the suffix already has, then, if the
    result adds syntax errors, the longest clean prefix at a line end or token boundary
    (bounded to a few incremental parses). Falls back to the shaped candidate when no prefix is clean.
    """
    if plan.kind is SpanKind.NONE or not candidate:
        return ""
    offset = max(0, min(offset, len(text)))
    cand = candidate.replace("\r\n", "\n")
    cand = _shape_lines(text, offset, cand, plan)
    cand = _drop_suffix_overlap(cand, text[offset:])
    cand = join_right(cand, text[offset:].split("\n", 1)[0])
    if not cand.strip() or not is_supported(lang):
        return cand if cand.strip() else ""
    assert lang is not None
    base = _base(text, lang, base_tree)
    check = _check(base, offset, offset, cand)
    if not check.added:
        return _fewest_errors(base, offset, cand, len(_error_nodes(check.splice.tree.root_node)))
    for parses, cut in enumerate(_cut_points(cand), start=2):
        if parses > _MAX_PARSES:
            break
        prefix = cand[:cut].rstrip()
        if prefix and not _check(base, offset, offset, prefix).added:
            return prefix
    return cand


def cut_marks(raw: str, kept: str) -> dict[str, float]:
    """The features a candidate the checks changed carries: ``cut`` (the gate reads it) and ``cut_short`` when its
    first line was cut to a fragment (:func:`cut_short`); none when unchanged."""
    if kept == raw:
        return {}
    return {"cut": 1.0, **({"cut_short": 1.0} if cut_short(raw, kept) else {})}


def cut_short(raw: str, kept: str) -> bool:
    """Whether the checks cut a candidate's first line short (``return _Adapter(s`` + ``elf``: a fragment the user
    goes on from, which :func:`finishes_line` does not ask), not just of trailing blanks, a ``;`` the file does
    without or closers the editor already put right of the cursor."""
    a, b = raw.split("\n", 1)[0].rstrip(), kept.split("\n", 1)[0].rstrip()
    return len(b) < len(a) and a.startswith(b) and a[len(b):].strip(" \t;" + _CLOSERS) != ""


def _fewest_errors(base: _Base, offset: int, cand: str, total: int) -> str:
    """A candidate that adds no error may still leave the user's unfinished statement broken while a
    shorter cut would close it (``== 0)`` vs ``== 0``): keep the longest cut with the fewest errors left."""
    best = cand
    for parses, cut in enumerate(_cut_points(cand), start=2):
        if total == 0 or parses > _MAX_PARSES:
            break
        prefix = cand[:cut].rstrip()
        if not prefix:
            continue
        check = _check(base, offset, offset, prefix)
        if check.added:
            continue
        left = len(_error_nodes(check.splice.tree.root_node))
        if left < total:
            best, total = prefix, left
    return best
