"""The scripts of a page: a Vue or Svelte component's ``<script>``, an HTML page's.

Such a file has no grammar here; its scripts are JavaScript or TypeScript, which have. The engine completes inside
one as a document of that language (:class:`~dgcomplete.syntax.document.Reading`): the model, the checks and the
drafts read the script alone, as they read a ``.ts`` file, where the whole page read as text showed almost nothing
(bench/results/embedded_ab.json).
"""

from __future__ import annotations

import re

from .languages import _name_and_extension

PAGE_IDS = frozenset({"vue", "svelte", "html"})  # LSP languageIds of pages with scripts
PAGE_EXTENSIONS = frozenset({".vue", ".svelte", ".html", ".htm"})

_OPEN = re.compile(r"<script\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.IGNORECASE)
_CLOSE = re.compile(r"</script\s*>", re.IGNORECASE)
_ATTR = re.compile(r"""\b(lang|type)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_LANGS = {"ts": "typescript", "typescript": "typescript", "tsx": "tsx", "js": "javascript",
          "javascript": "javascript", "jsx": "javascript"}
_SCRIPT_TYPES = frozenset({"", "module", "text/javascript", "application/javascript", "text/babel", "text/jsx"})


def has_scripts(language_id: str | None, path: str | None = None) -> bool:
    """Whether a document of ``language_id`` or at ``path`` is a page whose scripts are completed as their own
    language: by either, as Emacs' ``web-mode`` sends a ``.vue`` file as ``web`` (the engine asks only for a
    document without a grammar)."""
    lid = (language_id or "").strip().lower()
    return lid in PAGE_IDS or _name_and_extension(path or "")[1] in PAGE_EXTENSIONS


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


def script_blocks(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, language)`` of each script's text: from just after its ``<script ...>`` to its
    ``</script>``, or to the end of the text while it is not yet written."""
    out = []
    pos = 0
    while (m := _OPEN.search(text, pos)) is not None:
        close = _CLOSE.search(text, m.end())
        end = close.start() if close else len(text)
        lang = script_language(m.group(1))
        if lang is not None:
            out.append((m.end(), end, lang))
        if close is None:
            break
        pos = close.end()
    return out
