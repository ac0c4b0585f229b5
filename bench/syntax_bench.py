"""Timing of the syntax layer on large files: the checks run per candidate and must stay cheap.

    PYTHONPATH=. python bench/syntax_bench.py [--lines 5000] [--repeat 200]

Prints median/p90 milliseconds per call for a flat Python module, the same code inside one big
class, and a JavaScript file of class methods. Pure CPU; no model needed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from dgcomplete.syntax import (
    SyntaxDocument,
    cut_candidate,
    error_char_spans,
    get_parser,
    new_errors,
    plan_span,
)

_PY_FUNC = '''def handler_{i}(request, retries=3):
    """Handle one request (ünïcödé 😀 in docstrings is fine)."""
    total = 0
    for item in request.items:
        if item.value > {i}:
            total += item.value * 2
        else:
            total -= 1
    return {{"id": {i}, "total": total}}

'''

_JS_METHOD = """  handler{i}(request) {{
    let total = 0;
    for (const item of request.items) {{
      if (item.value > {i}) {{
        total += item.value * 2;
      }} else {{
        total -= 1;
      }}
    }}
    return {{ id: {i}, total }};
  }}

"""


def _repeat(template: str, lines: int) -> str:
    per = template.count("\n")
    return "".join(template.format(i=i) for i in range(lines // per + 1))


def make_python(lines: int) -> str:
    return "import os\nimport sys\n\n" + _repeat(_PY_FUNC, lines)


def make_python_class(lines: int) -> str:
    body = "".join("    " + ln if ln else ln for ln in _repeat(_PY_FUNC, lines).splitlines(True))
    return "class Service:\n" + body


def make_js(lines: int) -> str:
    return "class Service {\n" + _repeat(_JS_METHOD, lines) + "}\n"


def timeit(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    fn()  # warm caches
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


def bench_file(name: str, text: str, lang: str, anchor: str, valid: str, broken: str, repeat: int) -> None:
    doc = SyntaxDocument(text, lang)
    # cursor at the end of a line in a function in the middle of the file
    offset = text.index("\n", text.index(anchor, len(text) // 2))
    line, _ = doc.position_at(offset)
    print(f"\n{name}: {text.count(chr(10))} lines, {len(text.encode())} bytes, cursor at line {line}")
    results: list[tuple[str, tuple[float, float]]] = []
    results.append(("full parse (reference)", timeit(lambda: get_parser(lang).parse(text.encode()), 10)))
    results.append(("plan_span", timeit(lambda: plan_span(doc.text, offset, lang, doc.tree), repeat)))
    for kind, cand in (("valid", valid), ("unclosed bracket", broken)):
        results.append(
            (
                f"new_errors ({kind})",
                timeit(lambda c=cand: new_errors(doc.text, offset, offset, c, lang, doc.tree), repeat),
            )
        )
        results.append(
            (
                f"error_char_spans ({kind})",
                timeit(lambda c=cand: error_char_spans(doc.text, offset, offset, c, lang, doc.tree), repeat),
            )
        )
    plan = plan_span(doc.text, offset, lang, doc.tree)
    raw = valid + broken
    results.append(
        (
            f"cut_candidate ({plan.kind.value}, needs cutting)",
            timeit(lambda: cut_candidate(doc.text, offset, raw, plan, lang, doc.tree), max(1, repeat // 4)),
        )
    )
    key_line, key_col = doc.position_at(text.index("total += item", offset) + 7)

    def keystroke() -> None:  # type and delete one char inside an identifier
        doc.apply_change(key_line, key_col, key_line, key_col, "x")
        doc.apply_change(key_line, key_col, key_line, key_col + 1, "")

    med, p90 = timeit(keystroke, repeat)
    results.append(("apply_change (per edit)", (med / 2, p90 / 2)))

    def first_check_after_edit() -> None:  # a new document version: nothing cached yet
        keystroke()
        new_errors(doc.text, offset, offset, broken, lang, doc.tree)

    med, p90 = timeit(first_check_after_edit, max(1, repeat // 4))
    one_edit = results[-1][1]
    results.append(("first new_errors of a version (cold)", (med - 2 * one_edit[0], p90 - 2 * one_edit[0])))
    for label, (med, p90) in results:
        print(f"  {label:42s} median {med:7.3f} ms   p90 {p90:7.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    # cursor at the end of an `if` line: a STATEMENT plan, multi-line candidates
    bench_file(
        "python module",
        make_python(args.lines),
        "python",
        "if item.value >",
        "\n            total += 3",
        "\n            total = foo(1, ",
        args.repeat,
    )
    bench_file(
        "python, one big class",
        make_python_class(args.lines),
        "python",
        "if item.value >",
        "\n                total += 3",
        "\n                total = foo(1, ",
        args.repeat,
    )
    bench_file(
        "javascript class",
        make_js(args.lines),
        "javascript",
        "if (item.value >",
        "\n        total += 3;",
        "\n        total = foo(1, ",
        args.repeat,
    )


if __name__ == "__main__":
    main()
