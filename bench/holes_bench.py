"""Fill holes on real files: a line, an expression or a body of a held-out file made a placeholder.

Each case takes one file of the held-out splits (``bench/heldout.py``: packages outside the training corpus),
opens it whole in :class:`~dgcomplete.engine.Engine` and runs ``Engine.edit("fill", ...)`` on the hole's line,
as the ``dgcomplete.fillHoles`` command does. Three kinds of hole, in functions of 3-40 lines:

* ``line``: one statement of a function body written as the language's placeholder (``...`` in Python,
  ``// TODO`` elsewhere); expected: that line;
* ``inline``: the right-hand side of an assignment written as ``???`` (Python) or ``/* TODO */``; expected: the
  line with it;
* ``body``: a whole function body of 2-8 lines as one placeholder; expected: the body (its first line and its
  similarity are reported: whole bodies are rarely exact);
* ``todo`` (asked for with ``--kinds``): a statement that a one-line comment of its own describes (``# sort by
  name`` above it), the two lines written as one ``# TODO: sort by name`` (``// TODO: ...``); expected: the
  statement. A request in words, as people leave them.

Reported per kind: filled (an edit applied), exact (the first line, blanks stripped), the file parses after
(tree-sitter, and Python's parser for Python) and timings. ``--split dev`` (the default) is where Fill holes is
tuned; ``--split test`` measures. Writes ``--out`` (``bench/results/holes.json``) and prints a table.

    python -m bench.holes_bench [--split dev|test] [--lang python] [--cases 60] [--seed 0] [--out F]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import difflib
import json
import random
import re
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dgcomplete import edit, syntax

from . import RESULTS, display_path, machine_info, model_info, pct, resolve_model
from .repair_bench import FUNCTION_NODES as REPAIR_FUNCTION_NODES

KINDS = ("line", "inline", "body", "todo")
DEFAULT_KINDS = ("line", "inline", "body")
_COMMENT = {"python": "#"}  # a line comment's mark; "//" elsewhere
# a comment that reads as words (not code commented out, not a marker of its own)
_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*(?:[ ,;]+[A-Za-z0-9_.'`()-]+){1,29}[.:]?")
# Repair's definitions, and the arrow functions of JavaScript and TypeScript (statement bodies a hole can stand in)
FUNCTION_NODES = {lang: types + (("arrow_function",) if lang in ("javascript", "typescript") else ())
                  for lang, types in REPAIR_FUNCTION_NODES.items()}
SPLITS = {"dev": ("dev", "dev_langs"), "test": ("test", "test_langs")}
_ASSIGN = re.compile(r"(?<![=!<>+\-*/%&|^:~.])=(?![=>])")


@dataclass
class Case:
    id: str  # file:line
    kind: str
    lang: str
    text: str  # the file with the hole
    start: int  # the hole's line (what the user selects)
    end: int
    expected: str  # what the hole stands for (dedented lines for a body)
    original: str  # the whole file


def hole_for(lang: str, inline: bool) -> str:
    if inline:
        return "???" if lang == "python" else "/* TODO */"
    return "..." if lang == "python" else "// TODO"


def _parses(text: str, lang: str) -> bool:
    if syntax.error_count(syntax.parse(text, lang)) != 0:
        return False
    if lang == "python":
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return False
    return True


def _functions(text: str, lang: str, lo: int = 3, hi: int = 40) -> tuple[list[tuple[int, int]], set[int]]:
    """(first line, last line), 0-based, of the definitions of ``lo``-``hi`` lines; and the lines a string or comment
    spans (no hole there: it would be text, not code)."""
    tree = syntax.parse(text, lang)
    out = []
    prose: set[int] = set()
    stack = [tree.root_node] if tree is not None else []
    while stack:
        node = stack.pop()
        a, b = node.start_point[0], node.end_point[0]
        if node.type in FUNCTION_NODES.get(lang, ()) and lo <= b - a + 1 <= hi:
            out.append((a, b))
        if "string" in node.type or "comment" in node.type:
            prose.update(range(a, b + 1))
            continue
        stack.extend(reversed(node.children))
    return out, prose


def _plain(line: str, lang: str) -> bool:
    """A one-line statement worth asking for: not a comment, not a block's head or end, not a continuation."""
    s = line.strip()
    if not 6 <= len(s) <= 100 or s.startswith(("#", "//", "/*", "*", "@", "}", ")", "]", "else", "elif", "case")):
        return False
    return not s.endswith(("{", ":", "(", "[", ",", "\\", "+", "&&", "||", "=", "."))


def _cases_in(fid: str, text: str, lang: str, rng: random.Random) -> dict[str, list[Case]]:
    lines = text.split("\n")
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)
    out: dict[str, list[Case]] = {k: [] for k in KINDS}
    funcs, prose = _functions(text, lang)
    out["todo"] = _todo_cases(fid, text, lang, lines, starts, _functions(text, lang, 3, 10**6)[0], prose)
    rng.shuffle(funcs)
    for a, b in funcs:
        body = [i for i in range(a + 1, b) if _plain(lines[i], lang) and i not in prose]
        rng.shuffle(body)
        for i in body[:1]:  # line: the statement as the placeholder
            line = lines[i]
            ind = line[: len(line) - len(line.lstrip())]
            hole = hole_for(lang, False)
            new = text[: starts[i]] + ind + hole + text[starts[i] + len(line) :]
            if _parses(new, lang):
                s = starts[i]
                out["line"].append(Case(f"{fid}:{i + 1}", "line", lang, new, s, s + len(ind + hole), line.strip(), text))
        for i in body:  # inline: an assignment's right-hand side
            line = lines[i]
            m = _ASSIGN.search(line)
            if m is None or line.lstrip().startswith(("for", "if", "while", "return")):
                continue
            rhs = line[m.end() :].strip()
            semi = rhs.endswith(";")
            rhs = rhs[:-1].rstrip() if semi else rhs
            if not 3 <= len(rhs) <= 80 or "#" in rhs or "//" in rhs:
                continue
            hole = hole_for(lang, True)
            col = line.index(rhs, m.end())
            new_line = line[:col] + hole + line[col + len(rhs) :]
            new = text[: starts[i]] + new_line + text[starts[i] + len(line) :]
            s = starts[i]
            out["inline"].append(Case(f"{fid}:{i + 1}", "inline", lang, new, s, s + len(new_line), line.strip(), text))
            break
        # body: the lines between the head and the end (brace languages) or after the head (Python)
        first = a + 1
        last = b if lang == "python" else b - 1
        if lang != "python" and not (lines[a].rstrip().endswith("{") and lines[b].strip() == "}"):
            continue
        if lang == "python" and not lines[a].rstrip().endswith(":"):
            continue
        n = last - first + 1
        if not 2 <= n <= 8 or any(ln.lstrip().startswith(('"""', "'''")) for ln in lines[first:first + 1]):
            continue
        ind = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        if not ind:
            continue
        hole = hole_for(lang, False)
        new = text[: starts[first]] + ind + hole + text[starts[last] + len(lines[last]) :]
        if _parses(new, lang):
            expected = textwrap.dedent("\n".join(lines[first : last + 1]))
            s = starts[first]
            out["body"].append(Case(f"{fid}:{first + 1}", "body", lang, new, s, s + len(ind + hole), expected, text))
    return out


def _todo_cases(fid: str, text: str, lang: str, lines: list[str], starts: list[int], funcs: list[tuple[int, int]],
                prose: set[int]) -> list[Case]:
    """The ``todo`` holes of a file, in line order (no draw from the seeded order, so the other kinds' cases stay
    those of the runs before this kind existed): a statement below a comment of 1-3 lines of words, its lines
    joined into one request."""
    mark = _COMMENT.get(lang, "//")
    out = []
    body = sorted({i for a, b in funcs for i in range(a + 2, b)})  # any definition's length: few comments a file
    for i in body:
        line = lines[i]
        ind = line[: len(line) - len(line.lstrip())]
        if i in prose or not _plain(line, lang):
            continue
        k = i
        while k > 0 and lines[k - 1].strip().startswith(mark) and i - k < 4:
            k -= 1
        said = [ln.strip()[len(mark) :].strip() for ln in lines[k:i]]
        if not 1 <= i - k <= 3 or any(ln[: len(ln) - len(ln.lstrip())] != ind for ln in lines[k:i]):
            continue
        words = " ".join(said)
        if (len(words) > 160 or not _WORDS.fullmatch(words)
                or any(w in words for w in ("TODO", "XXX", "FIXME", "noqa", "pylint", "eslint", "NOLINT"))):
            continue
        hole = f"{mark} TODO: {words}"
        new = text[: starts[k]] + ind + hole + text[starts[i] + len(line) :]
        if _parses(new, lang):
            s = starts[k]
            out.append(Case(f"{fid}:{i + 1}", "todo", lang, new, s, s + len(ind + hole), line.strip(), text))
    return out


def make_cases(split: str, lang: str, n: int, seed: int, kinds: tuple[str, ...] = DEFAULT_KINDS) -> list[Case]:
    """``n`` cases of ``lang`` a kind at most, one a kind per file in a seeded order (round-robin over files)."""
    from . import heldout

    files: dict[str, dict[str, Any]] = {}
    for name in SPLITS[split]:
        files.update(heldout.load(name)["files"])
    rng = random.Random(seed)
    ids = sorted(f for f in files if heldout.real_language(files[f]["lang"]) == lang and _parses(files[f]["text"], lang))
    rng.shuffle(ids)
    per_file = [_cases_in(fid, files[fid]["text"], lang, rng) for fid in ids]
    out: list[Case] = []
    for kind in kinds:
        got: list[Case] = []
        for round_ in range(8):
            for found in per_file:
                if len(found[kind]) > round_ and len(got) < n:
                    got.append(found[kind][round_])
        out += got
    return out


def _first_line(s: str) -> str:
    return next((ln.strip() for ln in s.split("\n") if ln.strip()), "")


def run(model: Path, cases: list[Case], *, threads: int, steps: int | None) -> dict[str, Any]:
    import torch

    from dgcomplete.engine import EditOptions, Engine
    from dgcomplete.model import load_model

    torch.set_num_threads(threads)
    loaded = load_model(model)

    async def go() -> list[dict[str, Any]]:
        engine = Engine(loaded, threads=threads, max_steps=steps)
        rows = []
        try:
            for i, c in enumerate(cases):
                uri = f"file:///holes/{i}.{c.lang}"
                engine.open(uri, c.text, 1, c.lang)
                t0 = time.perf_counter()
                res = await engine.edit("fill", uri, c.start, c.end, 1, options=EditOptions(seed=i))
                ms = (time.perf_counter() - t0) * 1e3
                out = res.outcome
                after = edit.apply_edits(c.text, out.edits)
                filled = after[c.start : len(after) - (len(c.text) - c.end)] if out.ok else ""
                got = filled.strip() if c.kind != "body" else _dedent(filled)
                rows.append({
                    "id": c.id, "kind": c.kind, "lang": c.lang, "filled": out.ok,
                    "exact": out.ok and _first_line(got) == _first_line(c.expected),
                    "whole_exact": out.ok and got.strip() == c.expected.strip(),
                    "similarity": round(difflib.SequenceMatcher(None, got.strip(), c.expected.strip()).ratio(), 3)
                    if out.ok else 0.0,
                    "parses": out.ok and _parses(after, c.lang),
                    "outside": out.ok and (after[: c.start] != c.text[: c.start]
                                           or after[len(after) - (len(c.text) - c.end) :] != c.text[c.end :]),
                    "ms": round(ms, 1), "reason": out.reason, "expected": c.expected, "got": got if out.ok else None,
                    "stats": {k: v for k, v in out.stats.items() if k != "ms"},
                })
                engine.close(uri)
        finally:
            await engine.shutdown()
        return rows

    return {"model": model_info(loaded), "rows": asyncio.run(go())}


def _dedent(s: str) -> str:
    return textwrap.dedent(s.strip("\n"))


def table(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    out = []
    lines = ["| kind | n | filled | exact first line | exact whole | similarity | parses | p50 ms | p95 ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for kind in [*KINDS, "all"]:
        rs = [r for r in rows if kind in ("all", r["kind"])]
        if not rs:
            continue
        ms = [r["ms"] for r in rs]
        n = len(rs)
        row = {"kind": kind, "n": n, "filled": sum(r["filled"] for r in rs) / n,
               "exact": sum(r["exact"] for r in rs) / n, "whole_exact": sum(r["whole_exact"] for r in rs) / n,
               "similarity": sum(r["similarity"] for r in rs) / n, "parses": sum(r["parses"] for r in rs) / n,
               "outside": sum(r["outside"] for r in rs),
               "p50_ms": round(pct(ms, 50) or 0.0, 1), "p95_ms": round(pct(ms, 95) or 0.0, 1)}
        out.append(row)
        lines.append(f"| {kind} | {n} | {row['filled']:.2f} | {row['exact']:.2f} | {row['whole_exact']:.2f} | "
                     f"{row['similarity']:.2f} | {row['parses']:.2f} | {row['p50_ms']:.0f} | {row['p95_ms']:.0f} |")
    return out, "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--split", choices=sorted(SPLITS), default="dev")
    ap.add_argument("--lang", default="python", help="python, javascript, typescript, go, java, rust, c, or all")
    ap.add_argument("--cases", type=int, default=30, help="cases per kind and language")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default=",".join(DEFAULT_KINDS), help=f"of {', '.join(KINDS)}")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--out", type=Path, default=RESULTS / "holes.json")
    args = ap.parse_args(argv)
    model = resolve_model(args.model)
    langs = list(FUNCTION_NODES) if args.lang == "all" else [args.lang]
    kinds = tuple(k for k in args.kinds.split(",") if k)
    if not kinds or set(kinds) - set(KINDS):
        ap.error(f"--kinds takes {', '.join(KINDS)}")
    cases = [c for lang in langs for c in make_cases(args.split, lang, args.cases, args.seed, kinds)]
    res = run(model, cases, threads=args.threads, steps=args.steps)
    summary_rows, md = table(res["rows"])
    by_lang = {lang: table([r for r in res["rows"] if r["lang"] == lang])[0] for lang in langs}
    doc = {"bench": "holes", "split": args.split, "langs": langs, "kinds": list(kinds), "cases_per_kind": args.cases,
           "seed": args.seed,
           "machine": machine_info(), "model": res["model"], "threads": args.threads, "steps": args.steps,
           "summary": summary_rows, "by_lang": by_lang, "rows": res["rows"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(md)
    print(f"wrote {display_path(args.out)}")


if __name__ == "__main__":
    main()
