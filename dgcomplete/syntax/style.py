"""The document's own style, where a suggestion should follow it: JavaScript and TypeScript without semicolons.

The model learnt from code that mostly ends its statements with ``;``, so it writes ``this.nodes.push(child);`` in a
file that never does (postcss, ProseMirror, ``standard``, Prettier's ``semi: false``). In such a file a suggestion's
trailing ``;`` is dropped: what is shown is what the file would have.
"""

from __future__ import annotations

import re

LANGS = frozenset({"javascript", "typescript", "tsx"})
WINDOW = 12_000  # characters each side of the cursor that decide the style
MIN_LINES = 12  # statement-ending lines needed to call a style
MAX_SHARE = 0.05  # at most this share of them end with `;` in a file without semicolons
_ENDS_STATEMENT = re.compile(r"[\w$)\]'\"`!]\s*;?$")
_COMMENT = re.compile(r"^\s*(//|/\*|\*)")


def omits_semicolons(text: str, offset: int, lang: str | None) -> bool:
    """The code around ``offset`` ends its statements without ``;``: of its lines that end like a statement (a
    name, a literal, a closing bracket, with or without ``;``), at least MIN_LINES, at most MAX_SHARE end with ``;``.
    A ``for (;;)`` header or a line inside brackets that ends with ``)`` counts as well: both styles have them."""
    if lang not in LANGS:
        return False
    a, b = max(0, offset - WINDOW), offset + WINDOW
    lines = text[a:b].split("\n")
    lines = lines[1 if a else 0 : -1 if b < len(text) else None]  # whole lines only
    ends = semis = 0
    for line in lines:
        s = line.rstrip()
        if not s or _COMMENT.match(s) or not _ENDS_STATEMENT.search(s):
            continue
        ends += 1
        semis += s.endswith(";")
    return ends >= MIN_LINES and semis <= MAX_SHARE * ends


def without_semicolons(cand: str, rest_of_line: str) -> str:
    """``cand`` with the ``;`` that ends its lines dropped (the first line's only when nothing follows the cursor on
    it); ``;;`` and a lone ``;`` are left as they are."""
    lines = cand.split("\n")
    for i, line in enumerate(lines):
        if i == 0 and rest_of_line.strip():
            continue
        s = line.rstrip()
        if s.endswith(";") and not s.endswith(";;") and s[:-1].strip():
            lines[i] = s[:-1] + line[len(s) :]
    return "\n".join(lines)
