"""A suggestion follows the document's style: no trailing `;` in JavaScript and TypeScript files without them."""

from __future__ import annotations

import asyncio

from dgcomplete.syntax.style import omits_semicolons, without_semicolons

BARE = "".join(f"const a{i} = f({i})\nthis.push(a{i})\n" for i in range(20)) + "function g() {\n  \n}\n"
SEMI = BARE.replace(")\n", ");\n")


def test_a_file_without_semicolons_is_told_from_one_with_them():
    at = BARE.index("  \n}") + 2
    assert omits_semicolons(BARE, at, "javascript") and omits_semicolons(BARE, at, "typescript")
    assert not omits_semicolons(SEMI, SEMI.index("  \n}") + 2, "javascript")
    assert not omits_semicolons(BARE, at, "python") and not omits_semicolons(BARE, at, "c")
    short = "let a = 1\nf(a)\n\n"  # too few lines to call a style
    assert not omits_semicolons(short, len(short) - 1, "javascript")
    # one `;` in forty statement ends (a `for (;;)` header's, say) is still a file without semicolons
    assert omits_semicolons(BARE.replace("this.push(a3)", "this.push(a3);"), at, "javascript")


def test_the_ending_semicolon_of_a_suggestion_is_dropped():
    assert without_semicolons("push(child);", "") == "push(child)"
    assert without_semicolons("push(child);", ")") == "push(child);"  # text after the cursor: not the line's end
    assert without_semicolons("if (a) {\n  b();\n}", "") == "if (a) {\n  b()\n}"
    assert without_semicolons("for (;;) {", "") == "for (;;) {"
    assert without_semicolons(";", "") == ";" and without_semicolons("x;;", "") == "x;;"


def test_a_line_from_a_file_with_semicolons_is_shown_without_them(tiny_mask_model):
    """Retrieval finds the line in another open file that ends its statements with `;`; typed in a file that
    does not, the suggestion has none (on the engine before this rule it was shown with its `;`)."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    eng = Engine(load_model(tiny_mask_model), threads=1)
    eng.open("file:///semi.js", SEMI.replace("  \n", "  this.nodes.push(child);\n"), 1, "javascript")
    doc = BARE.replace("  \n", "  this.nodes.p\n")
    eng.open("file:///bare.js", doc, 1, "javascript")
    eng.settings.update({"min_confidence": 0.0, "context_sources": ["document", "workspace"]})
    comp = asyncio.run(eng.complete("file:///bare.js", doc.index("this.nodes.p") + 12, n=3, seed=0))
    shown = [c.text for c in comp.items]
    assert "ush(child)" in shown and not any(t.endswith(";") for t in shown)
