"""Per-document text + syntax tree, kept in sync with LSP incremental changes.

Three coordinate systems meet here: LSP positions count UTF-16 code units, Python strings
count code points, tree-sitter counts UTF-8 bytes. Everything public takes/returns
code-point offsets (or LSP line/UTF-16 column); bytes stay internal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import overload

import tree_sitter

from .languages import ParseGaveUp, get_parser, is_supported

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # chars that take two UTF-16 units


def utf16_to_chars(line: str, col16: int) -> int:
    """Code-point column for a UTF-16 column in `line` (clamped; mid-surrogate rounds up)."""
    if col16 <= 0:
        return 0
    if not _ASTRAL.search(line):
        return min(col16, len(line))
    data = line.encode("utf-16-le", "surrogatepass")  # in C: a long line of emoji stays cheap
    if 2 * col16 >= len(data):
        return len(line)
    # a cut inside a surrogate pair leaves a lone high surrogate, counted as the whole character: rounds up
    return len(data[: 2 * col16].decode("utf-16-le", "surrogatepass"))


def chars_to_utf16(line: str, col: int) -> int:
    """UTF-16 column for a code-point column in `line`."""
    head = line[:col]
    return len(head) + len(_ASTRAL.findall(head))


class TextIndex:
    """A str with its UTF-8 bytes, converting between code-point and byte offsets.

    ASCII text (the common case) converts for free; other text uses byte offsets of every
    _CHUNK-th code point, built on first use, so a conversion encodes at most one chunk.
    """

    __slots__ = ("text", "data", "ascii", "_chunks")

    _CHUNK = 2048

    def __init__(self, text: str, data: bytes | None = None) -> None:
        self.text = text
        self.data = text.encode("utf-8") if data is None else data
        self.ascii = len(self.data) == len(text)
        self._chunks: list[int] | None = None

    def byte_offset(self, char_offset: int) -> int:
        char_offset = max(0, min(char_offset, len(self.text)))
        if self.ascii:
            return char_offset
        if len(self.text) <= self._CHUNK:
            return len(self.text[:char_offset].encode("utf-8"))
        if self._chunks is None:
            text, step, acc = self.text, self._CHUNK, 0
            chunks = [0]
            for i in range(0, len(text), step):
                acc += len(text[i : i + step].encode("utf-8"))
                chunks.append(acc)
            self._chunks = chunks
        k = char_offset // self._CHUNK
        return self._chunks[k] + len(self.text[k * self._CHUNK : char_offset].encode("utf-8"))

    def char_offset(self, byte_offset: int) -> int:
        byte_offset = max(0, min(byte_offset, len(self.data)))
        if self.ascii:
            return byte_offset
        return len(self.data[:byte_offset].decode("utf-8", errors="ignore"))

    def point(self, byte_offset: int) -> tuple[int, int]:
        """tree-sitter (row, byte column) of a byte offset."""
        row = self.data.count(b"\n", 0, byte_offset)
        return row, byte_offset - (self.data.rfind(b"\n", 0, byte_offset) + 1)


def advance_point(point: tuple[int, int], inserted: bytes) -> tuple[int, int]:
    """The point reached after inserting `inserted` at `point` (for tree.edit's new_end_point)."""
    newlines = inserted.count(b"\n")
    if newlines == 0:
        return point[0], point[1] + len(inserted)
    return point[0] + newlines, len(inserted) - (inserted.rfind(b"\n") + 1)


def parse(text: str | bytes, lang: str | None) -> tree_sitter.Tree | None:
    """A fresh tree for `text`, or None when the language is unknown; :class:`ParseGaveUp` where the grammar went
    past its budget."""
    if not is_supported(lang):
        return None
    assert lang is not None
    data = text.encode("utf-8") if isinstance(text, str) else text
    return get_parser(lang).parse(data)


_BREAK = re.compile(r"\r\n?|\n")  # LSP's line breaks: \n, \r\n and a lone \r
_CR_BREAK = re.compile(r"\r\n?")


def lf_text(text: str) -> str:
    """``text`` with every line break a "\\n": the same lines, and the same LSP positions in them."""
    return _CR_BREAK.sub("\n", text) if "\r" in text else text


_LEAD = re.compile(r"^[ \t]*\t[ \t]*", re.M)  # a line's leading whitespace, where it has a tab
_NEXT_LEAD = re.compile(r"\n([ \t]*)")


def view_text(text: str, tab: int = 0) -> str:
    """``text`` as completion reads it: every line break a "\\n" and, with ``tab``, each line's leading tabs
    spaces to stops ``tab`` apart (:func:`view_line`). The same lines, and past each line's indentation the same
    text."""
    text = lf_text(text)
    return _LEAD.sub(lambda m: m.group(0).expandtabs(tab), text) if tab and "\t" in text else text


def _lead(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def view_line(line: str, tab: int) -> str:
    """One line of :func:`view_text`: its leading tabs as spaces to stops ``tab`` apart."""
    n = _lead(line)
    return line[:n].expandtabs(tab) + line[n:] if "\t" in line[:n] else line


def view_column(line: str, col: int, tab: int) -> int:
    """The column in :func:`view_line` of column ``col`` of ``line`` (either unit: indentation is ASCII, and past it
    the two differ by a constant)."""
    n = _lead(line)
    return len(line[:col].expandtabs(tab)) if col < n else col + len(line[:n].expandtabs(tab)) - n


def document_column(line: str, col: int, tab: int) -> int:
    """The column of ``line`` of column ``col`` of its :func:`view_line`; inside a tab's spaces, the tab's start."""
    n = _lead(line)
    width = len(line[:n].expandtabs(tab))
    if col >= width:
        return col - width + n
    k = 0
    while k < n and len(line[: k + 1].expandtabs(tab)) <= col:
        k += 1
    return k


def tab_indent(space: str, tab: int) -> str:
    """Indentation ``space`` (read in a view) as a tab-indented file writes it: a tab for each ``tab`` columns, the
    rest (an alignment, a JSDoc ``*``'s space) spaces."""
    width = len(space.expandtabs(tab))
    return "\t" * (width // tab) + " " * (width % tab)


def tab_lines(text: str, tab: int, before: str | None = None) -> str:
    """``text`` written in a :func:`view_text` (indented with spaces) as its tab-indented document writes it: the
    indentation of each line it starts, and of its first line where ``before`` (the document's whitespace before
    ``text`` on that line) is given and ``text`` goes on with it."""
    out = _NEXT_LEAD.sub(lambda m: "\n" + tab_indent(m.group(1), tab), text) if "\n" in text else text
    if before is not None and out[:1] in (" ", "\t"):
        n = _lead(out.split("\n", 1)[0])
        new = tab_indent(before + out[:n], tab)
        if new.startswith(before):
            out = new[len(before) :] + out[n:]
    return out


def _common(x: str, y: str, n: int, way: int) -> int:
    """How many of the first (``way`` 1) or last (-1) ``n`` characters ``x`` and ``y`` share: compared in
    blocks that halve on a mismatch, so a keystroke in a long text costs a few slice compares, not a loop
    over every character."""
    same, block = 0, 4096
    while same < n:
        k = min(block, n - same)
        if way == 1:
            eq = x[same : same + k] == y[same : same + k]
        else:
            eq = x[len(x) - same - k : len(x) - same] == y[len(y) - same - k : len(y) - same]
        if eq:
            same += k
        elif k == 1:
            break
        else:
            block = max(1, k // 2)
    return same


def changed_span(old: str, new: str) -> tuple[int, int, str]:
    """The one change that turns ``old`` into ``new``: (start, end in ``old``, inserted text), found as the
    common prefix and suffix; never between a CR and its LF (LSP positions cannot point there)."""
    n = min(len(old), len(new))
    a = _common(old, new, n, 1)
    b = _common(old, new, n - a, -1)
    if 0 < a and old[a - 1] == "\r":
        a -= 1
    if 0 < b and old[len(old) - b] == "\n" and len(old) - b > a and old[len(old) - b - 1] == "\r":
        b -= 1
    return a, len(old) - b, new[a : len(new) - b]


def break_at(text: str, offset: int) -> str:
    """The line break ``text`` uses on ``offset``'s line ("\\r\\n", "\\r" or "\\n"): the one ending it, else (the
    last line) the one ending the line above, else "\\n"."""
    m = _BREAK.search(text, offset)
    if m is None:
        nl = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset))
        if nl < 0:
            return "\n"
        m = _BREAK.search(text, nl - 1 if nl and text[nl] == "\n" and text[nl - 1] == "\r" else nl)
        assert m is not None
    return m.group(0)


def _line_starts(text: str) -> list[int]:
    if "\r" not in text:  # the common case, at C speed
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        return starts
    return [0] + [m.end() for m in _BREAK.finditer(text)]


class SyntaxDocument:
    """Keeps a tree per open document, edited incrementally (tree.edit + reparse with the old tree),
    not reparsed from scratch per keystroke.

    A change only edits the tree; the reparse waits until the tree is read, so the changes that arrive
    between two reads (a formatter's many edits in one didChange, fast typing under a debouncing client) cost
    one reparse. That matters in a big file: tree-sitter-python reuses little of what follows the end of a
    block, where one types most, so a reparse there grows with the rest of the file.

    Lines break at "\\n", "\\r\\n" and a lone "\\r", as LSP positions count them.
    """

    def __init__(self, text: str, lang: str | None) -> None:
        self.lang: str | None = lang if is_supported(lang) else None
        self.text: str = ""
        self._tree: tree_sitter.Tree | None = None
        self._edited = False  # the tree has edits not yet reparsed
        self._gave_up: bytes | None = None  # the text the grammar last gave up on (ParseGaveUp), if it did
        self._data: bytes = b""
        self._starts: list[int] = [0]
        self.replace_all(text)

    @property
    def tree(self) -> tree_sitter.Tree | None:
        """The current text's tree (reparsed incrementally here if changes came since the last read)."""
        if self._edited:  # set only after an edit of a parsed tree (apply_change), so lang and tree are set
            assert self._tree is not None
            self._tree = self._parsed(self._tree)
            self._edited = False
        elif self._gave_up is not None and self._gave_up != self._data:  # (the same object compares at once)
            self._tree = self._parsed(None)  # the grammar gave up on an earlier text: this one afresh
        return self._tree

    @property
    def gave_up(self) -> bool:
        """Whether the grammar gave up on the current text (:class:`ParseGaveUp`): a language it has, no tree."""
        return self.tree is None and self._gave_up is not None

    def _parsed(self, old: tree_sitter.Tree | None) -> tree_sitter.Tree | None:
        """The current text's tree (``old``, edited, to reuse), or None where the grammar gives up on it: a
        document keeps its text and stays usable, and tries again once the text has changed."""
        if self.lang is None:
            self._gave_up = None
            return None
        try:
            tree = get_parser(self.lang).parse(self._data, old)
        except ParseGaveUp:
            self._gave_up = self._data
            return None
        self._gave_up = None
        return tree

    @property
    def parse_pending(self) -> bool:
        """Whether the next read of ``tree`` reparses."""
        return self._edited

    # --- positions -------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_text(self, line: int) -> str:
        """Line `line` without its line break (empty past the end)."""
        if line < 0 or line >= len(self._starts):
            return ""
        start = self._starts[line]
        if line + 1 >= len(self._starts):
            return self.text[start:]
        end = self._starts[line + 1] - 1  # the break's last character (\n, or a lone \r)
        if end > start and self.text[end] == "\n" and self.text[end - 1] == "\r":
            end -= 1
        return self.text[start:end]

    def offset_at(self, line: int, col_utf16: int) -> int:
        """Code-point offset of an LSP position; positions past a line's end or the document's end clamp."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self.text)
        return self._starts[line] + utf16_to_chars(self.line_text(line), col_utf16)

    def position_at(self, offset: int) -> tuple[int, int]:
        """LSP (line, UTF-16 column) of a code-point offset."""
        offset = max(0, min(offset, len(self.text)))
        line = self.position_line(offset)
        start = self._starts[line]
        return line, chars_to_utf16(self.text[start:offset], offset - start)

    def index(self) -> TextIndex:
        """A TextIndex over the current text, sharing the already-encoded bytes."""
        return TextIndex(self.text, self._data)

    # --- edits -----------------------------------------------------------------------------

    def replace_all(self, text: str) -> None:
        """Full-document sync: a fresh parse (an edit covering everything could reuse nothing)."""
        self.text = text
        self._data = text.encode("utf-8")
        self._starts = _line_starts(text)
        self._tree = self._parsed(None)
        self._edited = False

    def parse_as(self, lang: str | None) -> None:
        """Read the same text as ``lang`` (None: no tree): a fresh parse, the encoded text and line starts kept (a
        document whose tree goes to its view, or comes back from it; one over the size bound)."""
        self.lang = lang if is_supported(lang) else None
        self._tree = self._parsed(None)
        self._edited = False

    def update(self, text: str) -> None:
        """Become ``text`` by the one change :func:`changed_span` finds: the tree edited and reparsed
        incrementally, as for a keystroke (a document kept as a derived copy, like a page's script)."""
        if text != self.text:
            a, b, new = changed_span(self.text, text)
            self.apply_change(*self.position_at(a), *self.position_at(b), new)

    def edited_copy(self, start: int, end: int, text: str) -> SyntaxDocument:
        """A copy with ``[start, end)`` (characters) made ``text``, its tree the copy's tree edited and reparsed
        incrementally: a variant one request reads (the line without the editor's closers), the document itself
        untouched. Costs a copy of the encoded text and the line starts, not a parse from scratch."""
        doc = object.__new__(SyntaxDocument)
        doc.lang, doc.text, doc._data, doc._starts = self.lang, self.text, self._data, list(self._starts)
        tree = self.tree
        doc._tree, doc._edited, doc._gave_up = (None if tree is None else tree.copy()), False, self._gave_up
        doc.apply_change(*self.position_at(start), *self.position_at(end), text)
        return doc

    def apply_change(
        self, start_line: int, start_col_utf16: int, end_line: int, end_col_utf16: int, new_text: str
    ) -> None:
        """Apply one LSP incremental change (UTF-16 columns): the tree is edited, and reparsed when next read."""
        start = self.offset_at(start_line, start_col_utf16)
        end = self.offset_at(end_line, end_col_utf16)
        if end < start:
            start, end = end, start
        old_text = self.text
        # line bookkeeping: lines strictly inside the replaced range disappear
        first = self.position_line(start)
        last = self.position_line(end)
        self.text = old_text[:start] + new_text + old_text[end:]
        if "\r" in new_text or "\r" in old_text[start:end] or (
                old_text[start - 1 : start] == "\r" and (new_text or old_text[end : end + 1]).startswith("\n")):
            # a "\r" comes or goes, or a "\r" left of the edit meets a "\n" (a pair joined): recount. Typing at the
            # end of a CRLF line (a "\r" right of the edit) recounted every line at each keystroke before
            self._starts = _line_starts(self.text)
        else:
            delta = len(new_text) - (end - start)
            added = [start + m + 1 for m in _newline_positions(new_text)]
            tail = self._starts[last + 1 :]
            if delta:
                tail = [s + delta for s in tail]
            self._starts = self._starts[: first + 1] + added + tail

        if self._tree is None or self.lang is None:
            self._data = self.text.encode("utf-8")
            return
        old_data = self._data
        start_b = self._byte_offset_in(old_text, old_data, start)
        end_b = self._byte_offset_in(old_text, old_data, end)
        new_b = new_text.encode("utf-8")
        self._data = old_data[:start_b] + new_b + old_data[end_b:]
        start_point = (first, start_b - (old_data.rfind(b"\n", 0, start_b) + 1))
        end_point = (last, end_b - (old_data.rfind(b"\n", 0, end_b) + 1))
        self._tree.edit(
            start_b, end_b, start_b + len(new_b), start_point, end_point, advance_point(start_point, new_b)
        )
        self._edited = True  # reparsed when the tree is next read

    def position_line(self, offset: int) -> int:
        """0-based line of a code-point offset."""
        lo, hi = 0, len(self._starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    @staticmethod
    def _byte_offset_in(text: str, data: bytes, offset: int) -> int:
        if len(data) == len(text):
            return offset
        return len(text[:offset].encode("utf-8"))


def _newline_positions(s: str) -> list[int]:
    out: list[int] = []
    i = s.find("\n")
    while i >= 0:
        out.append(i)
        i = s.find("\n", i + 1)
    return out


def position_of(text: str, offset: int) -> tuple[int, int]:
    """LSP (line, UTF-16 column) of a code-point offset in `text` (clamped), lines broken as LSP breaks them."""
    return SyntaxDocument(text, None).position_at(offset)


@overload
def offset_of(text: str, line: int, col16: int) -> int: ...
@overload
def offset_of(text: str, line: int, col16: int, *, strict: bool) -> int | None: ...
def offset_of(text: str, line: int, col16: int, *, strict: bool = False) -> int | None:
    """Code-point offset of an LSP position in `text`, clamped as :meth:`SyntaxDocument.offset_at` clamps.

    ``strict``: None instead for a position that does not name a place in the text exactly (past its line's
    end or the document's, negative, or inside a surrogate pair).
    """
    doc = SyntaxDocument(text, None)
    offset = doc.offset_at(line, col16)
    if strict and doc.position_at(offset) != (line, col16):
        return None
    return offset


@dataclass(frozen=True)
class Reading:
    """A document as completion reads it, and the way back: ``view`` is what the model, the checks and the drafts
    see, the document itself (``view is doc``), a copy with "\\n" breaks and leading tabs read as ``tab`` spaces
    (:func:`view_text`), or one part of it in another language (a page's script, :mod:`.embedded`). The view's
    line i is the document's line ``line`` + i, the first cut at character ``col``; past each line's indentation
    the two have the same text, but in a request's copy without the closers the editor put right of the cursor
    (``Engine.complete``), whose offsets are mapped back only up to the cursor. Offsets are characters. ``lang``: the language the view is read as (a page's
    block's; else the document's, which a view too large to complete has none of)."""

    doc: SyntaxDocument
    view: SyntaxDocument
    lang: str | None
    tab: int = 0
    line: int = 0
    col: int = 0

    def to_view(self, offset: int) -> int:
        """The view's offset of the document's ``offset`` (before or after the part viewed: its start or end)."""
        if self.view is self.doc:
            return offset
        line = self.doc.position_line(max(0, min(offset, len(self.doc.text))))
        vl = line - self.line
        if vl < 0:
            return 0
        if vl >= self.view.line_count:
            return len(self.view.text)
        cut = self.col if vl == 0 else 0
        piece = self.doc.line_text(line)[cut:]
        c = min(max(0, offset - self.doc.offset_at(line, 0) - cut), len(piece))
        if self.tab:
            c = view_column(piece, c, self.tab)
        return self.view.offset_at(vl, 0) + min(c, len(self.view.line_text(vl)))

    def from_view(self, offset: int) -> int:
        """The document's offset of the view's ``offset`` (inside a tab's spaces, the tab's start)."""
        if self.view is self.doc:
            return offset
        vl = self.view.position_line(max(0, min(offset, len(self.view.text))))
        c = offset - self.view.offset_at(vl, 0)
        line = vl + self.line
        cut = self.col if vl == 0 else 0
        piece = self.doc.line_text(line)[cut:]
        if self.tab:
            c = document_column(piece, c, self.tab)
        return self.doc.offset_at(line, 0) + cut + min(c, len(piece))

    def edit_in_document(self, start: int, end: int, text: str, floor: int = 0) -> tuple[int, int, str]:
        """An edit of the view (``[start, end)`` becomes ``text``) as the document's: its offsets, and its text as
        :meth:`in_document` writes it. Where the view reads tabs as spaces and the edit writes into a line's
        indentation (re-indenting it), the whole indentation is written again from the line's start (not before
        ``floor``, the start of what was asked), so that the line gets tabs and no spaces mixed in."""
        ds, de = self.from_view(start), self.from_view(end)
        if self.tab and self.view is not self.doc:
            vls = self.view.offset_at(self.view.position_line(start), 0)
            dls = self.doc.offset_at(self.doc.position_line(ds), 0)
            before = self.view.text[vls:start]
            lead = len(text) - len(text.lstrip(" \t"))
            if not before.strip(" \t") and (before or lead) and dls >= floor:
                return dls, de, self.in_document(tab_indent(before + text[:lead], self.tab) + text[lead:], dls)
        return ds, de, self.in_document(text, ds)

    def in_document(self, text: str, offset: int) -> str:
        """``text`` written in the view (its breaks "\\n", its indentation spaces), to go in at the document's
        ``offset``: with the break the document uses on that line, and where the view reads tabs as spaces, the
        indentation of the lines it starts in tabs."""
        if self.view is self.doc:
            return text
        if self.tab:
            ls = self.doc.offset_at(self.doc.position_line(offset), 0)
            before = self.doc.text[ls:offset]
            text = tab_lines(text, self.tab, None if before.strip(" \t") else before)
        eol = break_at(self.doc.text, offset)
        return text if eol == "\n" else text.replace("\n", eol)
