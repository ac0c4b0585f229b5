"""A notebook's code cells as one document, so that a cell is completed with the cells around it in view.

Editors send a notebook (Jupyter in VS Code) as cells, each its own small text document. Completed alone, a
cell sees neither the imports nor the names the cells above it defined. Here the code cells of one language are
laid out in notebook order, one blank line between two cells, as a single document the engine opens under its
own key: the cells above are the prefix, the cells below the suffix, and retrieval reads them all as the
cursor's own document. A cell's lines stay whole, so a position maps to the layout by adding the line its cell
starts at.

Plain data only: :mod:`server` turns LSP's notebook messages into :class:`Cell` lists and positions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .syntax import language_for

if TYPE_CHECKING:
    from .engine import Session

SEPARATOR = "\n\n"  # between two cells: the second starts after one blank line
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# IPython's magics and shell escapes (`%time x`, `%%timeit`, `!pip install`) are no Python: written as comments of
# the same length, the layout parses and every position stays where it was. A name (or a command) must follow: a
# continuation line that starts with the `%` operator (`    % (a, b))`) is Python and stays
_MAGIC = re.compile(r"^([ \t]*)(?:%(?=%?[A-Za-z_])|!(?=[^\s=]))", re.MULTILINE)


@dataclass(frozen=True)
class Cell:
    uri: str
    language_id: str | None
    text: str
    code: bool = True  # markup (Markdown) cells are no code: left out


@dataclass
class Layout:
    """One language's code cells as one text: where each cell starts (its first line) and how long it is."""

    key: str  # the engine's document key
    language_id: str | None
    text: str
    cells: dict[str, tuple[int, int]] = field(default_factory=dict)  # cell URI -> (first line in ``text``, lines)


def read_ipynb(raw: str | bytes) -> list[Cell] | None:
    """A Jupyter notebook file's code and Markdown cells in order (``Cell.uri``: the cell's index), each code cell
    in the notebook's language (its kernel's; Python when the file names none); None when ``raw`` is no notebook.
    For what is not open in an editor: the folder index reads the workspace's notebooks so, and the notebook
    benchmark its sources."""
    try:
        nb = json.loads(raw)
        meta = nb.get("metadata") or {}
        lang = (meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name")
        out = []
        for i, c in enumerate(nb["cells"]):
            kind, src = c.get("cell_type"), c.get("source", "")
            if kind in ("code", "markdown"):
                text = "".join(src) if isinstance(src, list) else str(src)
                out.append(Cell(str(i), lang or "python", text, code=kind == "code"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return out


def key_of(notebook_uri: str, lang: str) -> str:
    """The engine's key of a notebook's cells of ``lang``: the notebook's URI (so a ``file:`` notebook is placed
    in its workspace folder) with a fragment no editor gives a document of its own."""
    return f"{notebook_uri.split('#', 1)[0]}#dgcomplete-cells-{lang}"


def line_count(text: str) -> int:
    return len(_LINE_BREAK.findall(text)) + 1


def neutral(text: str, lang: str | None) -> str:
    """``text`` as the engine reads it: in Python, magics and shell escapes written as comments."""
    return _MAGIC.sub(lambda m: m.group(1) + "#", text) if lang == "python" else text


def layouts(notebook_uri: str, cells: list[Cell]) -> dict[str, Layout]:
    """The notebook's code cells, one layout per language (by the tree-sitter language of their language id)."""
    groups: dict[str, list[Cell]] = {}
    for c in cells:
        lang = language_for(c.language_id, None) if c.code else None
        if lang is not None:
            groups.setdefault(lang, []).append(c)
    out = {}
    for lang, group in groups.items():
        places, parts, line = {}, [], 0
        for c in group:
            n = line_count(c.text)
            places[c.uri] = (line, n)
            parts.append(neutral(c.text, lang))
            line += n - 1 + SEPARATOR.count("\n")
        out[lang] = Layout(key_of(notebook_uri, lang), group[0].language_id, SEPARATOR.join(parts), places)
    return out


@dataclass
class View:
    """A document as the client addresses it (its URI and version) over the engine session holding its text,
    which starts at ``line`` there: 0 for a document of its own, a cell's first line in its notebook's layout.

    ``at`` is the session's version when the view was taken: a request whose session moved on since is stale.
    """

    uri: str
    version: int
    session: Session
    line: int = 0
    lines: int | None = None  # a cell's line count (a document's is its session's)
    at: int = field(init=False)

    def __post_init__(self) -> None:
        self.at = self.session.version

    @property
    def stale(self) -> bool:
        return self.session.version != self.at

    @property
    def line_count(self) -> int:
        return self.session.doc.line_count if self.lines is None else self.lines

    def offset(self, line: int, character: int) -> int:
        """The session's text offset of a position in the client's document (UTF-16 columns). Positions past
        its end clamp to its end, as in a document of its own: a cell's range never reaches into the next cell."""
        doc = self.session.doc
        if self.lines is not None:
            if line < 0:
                return doc.offset_at(self.line, 0)
            if line >= self.lines:
                line, character = self.lines - 1, 1 << 30
        return doc.offset_at(line + self.line, character)

    def position(self, offset: int) -> tuple[int, int]:
        """The client's (line, UTF-16 column) of a session text offset."""
        line, col = self.session.doc.position_at(offset)
        return line - self.line, col
