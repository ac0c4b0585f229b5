"""The code inside a page: a Vue or Svelte component's ``<script>``, an HTML page's, a Markdown file's fenced blocks.

Such a file has no grammar here; the code in it is JavaScript, TypeScript or (in Markdown) any language with one.
The engine completes inside a block as a document of that language (:class:`~dgcomplete.syntax.document.Reading`):
the model, the checks and the drafts read the block alone, as they read a file of it, where the whole page read as
text showed almost nothing (bench/results/embedded_ab.json).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .languages import _name_and_extension, language_for

PAGE_IDS = {"vue": "html", "svelte": "html", "html": "html", "markdown": "markdown"}  # languageId -> kind of page
PAGE_EXTENSIONS = {".vue": "html", ".svelte": "html", ".html": "html", ".htm": "html", ".md": "markdown",
                   ".markdown": "markdown"}

_OPEN = re.compile(r"<script\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.IGNORECASE)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)
# a tag read no further than this: a `<script` not closed by a `>` within it opens no block. Matched to the end of the
# page, each `<script` without a `>` after it was a scan to the end, quadratic (a page ending in 40,000 characters of
# them: 5 to 10 s a request, bench/results/long_lines_before.json)
MAX_TAG = 1024
_CLOSE = re.compile(r"</script\s*>", re.IGNORECASE)
_ATTR = re.compile(r"""\b(lang|type)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_LANGS = {"ts": "typescript", "typescript": "typescript", "tsx": "tsx", "js": "javascript",
          "javascript": "javascript", "jsx": "javascript"}
_SCRIPT_TYPES = frozenset({"", "module", "text/javascript", "application/javascript", "text/babel", "text/jsx"})
# a fence opens with three or more backticks or tildes (at most three spaces in) and its info string's first word
# (the line's end or the text's: where the line had to end in "\n", refusing a last line of `~` was cubic, 3,000 of
# them 5 to 11 s a request, long_lines_before.json; ending at either, the first try matches, and the last line, not
# ended, is refused after)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^\n]*(\n|\Z)", re.MULTILINE)


def page_kind(language_id: str | None, path: str | None = None) -> str | None:
    """``html`` for a Vue, Svelte or HTML page (its ``<script>`` blocks), ``markdown`` for a Markdown file (its fenced
    code blocks), by the languageId or the path's extension (Emacs' ``web-mode`` sends a ``.vue`` file as ``web``;
    the engine asks only for a document without a grammar); None for another document."""
    lid = (language_id or "").strip().lower()
    return PAGE_IDS.get(lid) or PAGE_EXTENSIONS.get(_name_and_extension(path or "")[1])


def script_language(attrs: str) -> str | None:
    """The language of a ``<script>`` with these attributes: ``lang="ts"`` (Vue, Svelte) or a TypeScript ``type``
    is TypeScript, none or a JavaScript ``type`` (``module``) JavaScript; a template, JSON or import map is none."""
    lang, kind = None, ""
    for m in _ATTR.finditer(attrs):
        value = next(v for v in m.groups()[1:] if v is not None).strip().lower()
        if m.group(1).lower() == "lang":
            lang = _LANGS.get(value, "")
        else:
            kind = value
    if lang is not None:
        return lang or None
    if kind in ("text/typescript", "application/typescript"):
        return "typescript"
    return "javascript" if kind in _SCRIPT_TYPES else None


def _script_open(text: str, pos: int) -> re.Match[str] | None:
    """The first ``<script ...>`` tag at or after ``pos`` (its attributes within :data:`MAX_TAG` characters)."""
    for m in _SCRIPT.finditer(text, pos):
        end = min(len(text), m.start() + MAX_TAG)
        if text.find(">", m.end(), end) >= 0 and (tag := _OPEN.match(text, m.start(), end)) is not None:
            return tag
    return None


def _fence_open(text: str, pos: int) -> re.Match[str] | None:
    """The first opening fence at or after ``pos``: a whole line (the last, not yet ended, is being typed)."""
    m = _FENCE.search(text, pos)
    return m if m is not None and m.group(3) else None


def _blocks(text: str, opening: Callable[[str, int], re.Match[str] | None],
            closing: Callable[[re.Match[str]], re.Pattern[str]],
            language: Callable[[re.Match[str]], str | None]) -> list[tuple[int, int, str]]:
    """``(start, end, language)`` of each block from just after an ``opening`` match to the start of its
    ``closing`` match, or to the end of the text while that is not yet written; blocks of no language left out."""
    out = []
    pos = 0
    while (m := opening(text, pos)) is not None:
        close = closing(m).search(text, m.end())
        lang = language(m)
        if lang is not None:
            out.append((m.end(), close.start() if close else len(text), lang))
        if close is None:
            break
        pos = close.end()
    return out


def script_blocks(text: str) -> list[tuple[int, int, str]]:
    """Each script's text: from just after its ``<script ...>`` to its ``</script>``."""
    return _blocks(text, _script_open, lambda m: _CLOSE, lambda m: script_language(m.group(1)))


def fenced_blocks(text: str) -> list[tuple[int, int, str]]:
    """Each fenced code block of a Markdown text whose info string names a language with a grammar (```` ```python
    ````, ```` ~~~ts ````): from the line after the opening fence to the start of the closing one (a fence of the
    same character, at least as long)."""
    return _blocks(text, _fence_open,
                   lambda m: re.compile(rf"^ {{0,3}}{re.escape(m.group(1)[0])}{{{len(m.group(1))},}}[ \t]*$",
                                        re.MULTILINE),
                   lambda m: language_for(m.group(2)) if m.group(2) else None)


def code_blocks(text: str, kind: str) -> list[tuple[int, int, str]]:
    """The blocks of code of a page of ``kind`` (:func:`page_kind`)."""
    return fenced_blocks(text) if kind == "markdown" else script_blocks(text)
