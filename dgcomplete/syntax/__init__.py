"""Syntax layer: languages, incrementally parsed documents, span planning and candidate checks.

Pure Python + tree-sitter (no torch, no LSP types) so it can be tested and benchmarked alone.
"""

from .check import (
    cut_candidate,
    cut_marks,
    cut_short,
    error_char_spans,
    error_count,
    finishes_line,
    is_valid,
    mends_below,
    mends_errors,
    new_errors,
)
from .closers import closed_by, editor_closers
from .document import (
    Reading,
    SyntaxDocument,
    TextIndex,
    break_at,
    document_column,
    lf_text,
    parse,
    tab_lines,
    view_column,
    view_line,
    view_text,
)
from .embedded import code_blocks, page_kind
from .languages import (
    SUPPORTED,
    ParseGaveUp,
    get_language,
    get_parser,
    is_supported,
    language_for,
    text_language,
)
from .plan import indent_unit, plan_span

__all__ = [
    "SUPPORTED",
    "ParseGaveUp",
    "Reading",
    "SyntaxDocument",
    "TextIndex",
    "break_at",
    "closed_by",
    "code_blocks",
    "document_column",
    "editor_closers",
    "cut_candidate",
    "cut_marks",
    "cut_short",
    "error_char_spans",
    "error_count",
    "finishes_line",
    "get_language",
    "get_parser",
    "indent_unit",
    "is_supported",
    "is_valid",
    "language_for",
    "lf_text",
    "mends_below",
    "text_language",
    "mends_errors",
    "new_errors",
    "page_kind",
    "parse",
    "plan_span",
    "tab_lines",
    "view_column",
    "view_line",
    "view_text",
]
