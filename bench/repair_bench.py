"""Repair syntax on real functions with injected syntax errors.

Functions (4-25 lines) come from the running interpreter's standard library ``test/`` package, which the
training corpus excludes (``STDLIB_EXCLUDE_DIRS`` in ``dgcomplete/train/corpus.py``); with ``--source all``
the rest of the standard library is used too (in the training corpus: optimistic numbers); with ``--source dev``
the functions of the held-out dev splits (outside the training corpus) in ``--lang``, where Repair is tuned. Each case
breaks one function by deleting one token or swapping two adjacent tokens (fixed seed), keeping only
corruptions that tree-sitter flags, then runs :func:`dgcomplete.edit.repair` over the whole function with
the resident model, as the ``dgcomplete.repairSyntax`` command does.

Reported per corruption kind: the share restored to a parsing state, the share restored to exactly the
original text, the share with fewer errors, and timings. Writes ``bench/results/repair.json`` and prints a
markdown table.

``--source heldout`` is the product-path suite of issue #17: functions of the held-out packages' Python
files (``bench/heldout.py``'s dev split; outside the training corpus), each in its own file, run through
``Engine.edit`` as the editor commands do. *Repair*: one ``)`` or ``:`` deleted (fixed seed; only deletions
Python's parser refuses), the function's lines selected; counted: fixed (the file parses again, by Python's
parser and tree-sitter), applied edits that leave the file unparseable, applied edits that touch a line
away from the damage (the deleted token's line +-1). *Rewrite selection* on the intact functions, and on one
line of each (the damaged line, intact): applied edits that break parsing. Also reported: how many repairs restore the original exactly without the model
(no denoising rounds, the nearest-place rule instead of the model's ranking). Writes
``bench/results/repair_heldout.json``.

    python -m bench.repair_bench [--model PATH] [--cases 100] [--seed 0] [--rounds 6] [--steps N]
    python -m bench.repair_bench --source heldout [--cases 20]
    python -m bench.repair_bench --source dev [--lang javascript] --out runs/repair_dev.json  # where it is tuned
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import dataclasses
import difflib
import io
import json
import random
import re
import sysconfig
import textwrap
import time
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dgcomplete import edit, syntax

from . import RESULTS, display_path, machine_info, model_info, resolve_model, summary

SKIP_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER, tokenize.ENCODING, tokenize.STRING}


@dataclass
class Case:
    id: str  # file:line (relative to the standard library)
    kind: str  # "delete" or "swap"
    original: str
    broken: str
    detail: str  # the token(s) touched
    lang: str = "python"


# ---- cases -------------------------------------------------------------------------------------------------
def stdlib_files(source: str) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted((root / "test").glob("test_*.py")) if source == "test" else sorted(root.rglob("*.py"))
    return [f for f in files if "site-packages" not in f.parts]


def functions(path: Path, root: Path, min_lines: int = 4, max_lines: int = 25) -> list[tuple[str, str]]:
    """(id, dedented source) of the function definitions of a file that parse on their own."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return functions_in(text, "python", str(path.relative_to(root)), min_lines, max_lines)


def functions_in(text: str, lang: str, label: str, min_lines: int = 4, max_lines: int = 25) -> list[tuple[str, str]]:
    """(``label:line``, dedented source) of the definitions in ``text`` (:data:`FUNCTION_NODES`) of ``min_lines``
    to ``max_lines`` lines and at most 1,500 characters that parse on their own."""
    tree = syntax.parse(text, lang)
    if tree is None:
        return []
    data = text.encode("utf-8")
    out = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in FUNCTION_NODES[lang] and min_lines <= node.end_point[0] - node.start_point[0] + 1 <= max_lines:
            line_start = data.rfind(b"\n", 0, node.start_byte) + 1
            src = textwrap.dedent(data[line_start : node.end_byte].decode("utf-8", errors="replace")) + "\n"
            if len(src) <= 1500 and syntax.error_count(syntax.parse(src, lang)) == 0:
                out.append((f"{label}:{node.start_point[0] + 1}", src))
        stack.extend(reversed(node.children))
    return out

def _python_tokens(src: str) -> list[tuple[int, int, int, str]]:
    """(start, end, type, text) of Python's tokens, as character spans; empty where the tokenizer fails."""
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(src).readline):
            out.append((starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1], t.type, t.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return out


def tokens(src: str) -> list[tuple[int, int, str]]:
    """(start, end, text) character spans of the code tokens (no strings, comments or layout)."""
    return [(a, b, s) for a, b, kind, s in _python_tokens(src) if kind not in SKIP_TOKENS and s.strip()]


# the slips people make that a token's deletion or swap does not model (``--kinds typos``; ``spell`` apart)
TYPOS = ("quote", "closer", "eq", "indent")
SLIPS = (*TYPOS, "spell")
_CLOSER_LINE = re.compile(r"^[ \t]*[)\]}]+[;,]?[ \t]*$")
_STRING_NODES = ("string", "string_literal", "interpreted_string_literal", "raw_string_literal", "char_literal",
                 "character_literal", "template_string")


def _strings(src: str, lang: str) -> list[tuple[int, int]]:
    """(start, end) of the string literals written on one line whose last character is their closing quote."""
    if lang == "python":
        return [(a, b) for a, b, kind, s in _python_tokens(src)
                if kind == tokenize.STRING and "\n" not in s and not s.endswith(('"""', "'''"))]
    tree = syntax.parse(src, lang)
    index = syntax.TextIndex(src)
    out, stack = [], [tree.root_node] if tree is not None else []
    while stack:
        node = stack.pop()
        if node.type in _STRING_NODES and node.start_point[0] == node.end_point[0]:
            a, b = index.char_offset(node.start_byte), index.char_offset(node.end_byte)
            if b - a >= 2 and src[b - 1] in "\"'`" and src[b - 1] in src[a : b - 1]:
                out.append((a, b))
            continue
        stack.extend(node.children)
    return sorted(out)


def _python_compiles(src: str) -> bool:
    try:
        compile(src, "<case>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def broken_for(src: str, lang: str) -> bool:
    """What the suites count as broken: tree-sitter reports an error, or (Python) the compiler refuses."""
    return syntax.error_count(syntax.parse(src, lang)) > 0 or (lang == "python" and not _python_compiles(src))


def typo(src: str, kind: str, rng: random.Random, lang: str, tries: int = 20) -> tuple[str, str] | None:
    """One slip of :data:`SLIPS`, where it breaks the code: a string's closing quote left out (``quote``), a line
    of closing brackets left out (``closer``: ``}``, ``});``), ``==`` written ``=`` (``eq``), a Python line
    indented one to four columns off (``indent``), or a keyword of three letters or more misspelled, two letters
    swapped, one dropped or one doubled (``spell``: ``retrun``, ``fucntion``)."""
    places: list[tuple[int, int, str]] = []  # (start, end, replacement)
    if kind == "quote":
        places = [(b - 1, b, "") for _, b in _strings(src, lang)]
    elif kind == "closer":
        at = 0
        for line in src.splitlines(keepends=True):
            if _CLOSER_LINE.match(line.rstrip("\n")):
                places.append((at, at + len(line), ""))
            at += len(line)
    elif kind == "eq":
        places = [(a + m.start(), a + m.end(), "=") for a, b, t in
                  (tokens(src) if lang == "python" else leaf_tokens(src, lang)) for m in [re.fullmatch("==", t)] if m]
    elif kind == "spell":  # a keyword misspelled: two letters swapped, one dropped or one doubled
        from dgcomplete.syntax.languages import keywords

        kws = {k for k in keywords(lang) if len(k) >= 3 and k.isalpha()}
        for a, b, t in tokens(src) if lang == "python" else leaf_tokens(src, lang):
            if t in kws:
                places += [(a, b, t[:i] + t[i + 1] + t[i] + t[i + 2 :]) for i in range(len(t) - 1) if t[i] != t[i + 1]]
                places += [(a, b, t[:i] + t[i + 1 :]) for i in range(len(t))]
                places += [(a, b, t[:i] + t[i] + t[i:]) for i in range(len(t))]
    elif kind == "indent" and lang == "python":
        at = 0
        for i, line in enumerate(src.splitlines(keepends=True)):
            if i and line.strip() and not line.lstrip().startswith("#"):
                for d in (-4, -2, -1, 1, 2, 4):
                    width = len(line) - len(line.lstrip(" "))
                    if width + d >= 0:
                        places.append((at, at + width, " " * (width + d)))
            at += len(line)
    for _ in range(min(tries, len(places))):
        a, b, new = places.pop(rng.randrange(len(places)))
        broken = src[:a] + new + src[b:]
        if broken_for(broken, lang):
            return broken, f"{kind}: {src[a:b].strip() or repr(src[a:b])} -> {new.strip() or repr(new)}"
    return None


def corrupt(src: str, kind: str, rng: random.Random, tries: int = 20, lang: str = "python") -> tuple[str, str] | None:
    """Delete one token or swap two adjacent ones on a line (``extra``: a bracket or ``,;:.`` token written twice;
    ``replace``: one written as another of its kind, ``]`` for ``)``, ``;`` for ``:``), until tree-sitter reports
    an error."""
    if kind in SLIPS:
        return typo(src, kind, rng, lang)
    toks = tokens(src) if lang == "python" else leaf_tokens(src, lang)
    if len(toks) < 4:
        return None
    if kind in ("extra", "replace"):
        toks = [t for t in toks if t[2] in PUNCT] + [toks[-1]]  # the last one is never picked (as for swaps)
        if len(toks) < 2:
            return None
    for _ in range(tries):
        i = rng.randrange(len(toks) - 1)
        a, b, s = toks[i]
        if kind == "delete":
            broken = src[:a] + src[b:]
            detail = s
        elif kind == "extra":
            broken = src[:b] + s + src[b:]
            detail = s
        elif kind == "replace":
            s2 = rng.choice([p for p in next(g for g in PUNCT_KINDS if s in g) if p != s])
            broken = src[:a] + s2 + src[b:]
            detail = f"{s} -> {s2}"
        else:
            c, d, s2 = toks[i + 1]
            if s == s2 or src[b:c].count("\n"):
                continue
            broken = src[:a] + s2 + src[b:c] + s + src[d:]
            detail = f"{s} <-> {s2}"
        if syntax.error_count(syntax.parse(broken, lang)) > 0:
            return broken, detail
    return None


PUNCT = ("(", ")", "[", "]", "{", "}", ",", ";", ":", ".")  # what an extra or replaced token is
PUNCT_KINDS = ("([{", ")]}", ",;:.")  # a replaced token is written as another of its kind: a typo, not a rewrite

# the definitions a dev case is cut from, per language (tree-sitter node types)
FUNCTION_NODES = {
    "python": ("function_definition",),
    "javascript": ("function_declaration", "method_definition", "function_expression"),
    "typescript": ("function_declaration", "method_definition", "function_expression"),
    "go": ("function_declaration", "method_declaration"),
    "java": ("method_declaration", "constructor_declaration"),
    "rust": ("function_item",),
    "c": ("function_definition",),
}


def _dev_functions(rng: random.Random, lang: str) -> list[list[tuple[str, str]]]:
    """The functions of the held-out dev splits' files in ``lang`` (packages outside the training corpus), one
    list per file in a seeded order: where Repair's rules are tuned, so that the stdlib suite stays a
    measurement."""
    from . import heldout

    files = {**heldout.load("dev")["files"], **heldout.load("dev_langs")["files"]}
    out = []
    for fid in sorted(files):
        if files[fid]["lang"] != lang:
            continue
        found = functions_in(files[fid]["text"], lang, fid)
        rng.shuffle(found)
        out.append(found)
    rng.shuffle(out)
    return out


def leaf_tokens(src: str, lang: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of tree-sitter's leaves outside strings and comments: the other languages' tokens."""
    tree = syntax.parse(src, lang)
    index = syntax.TextIndex(src)
    out = []
    stack = [tree.root_node] if tree is not None else []
    while stack:
        node = stack.pop()
        if "comment" in node.type or "string" in node.type or "char" in node.type or "template" in node.type:
            continue
        if node.child_count == 0:
            a, b = index.char_offset(node.start_byte), index.char_offset(node.end_byte)
            if src[a:b].strip():
                out.append((a, b, src[a:b]))
        stack.extend(reversed(node.children))
    return sorted(out)


def make_cases(n: int, seed: int, source: str, lang: str = "python",
               kinds: tuple[str, ...] = ("delete", "swap")) -> list[Case]:
    root = Path(sysconfig.get_paths()["stdlib"])
    rng = random.Random(seed)
    if source == "dev":  # several functions per file: the split has fewer files than the stdlib's tests
        per_file = _dev_functions(rng, lang)
        by_file = [fs[i : i + 1] for i in range(8) for fs in per_file if len(fs) > i]
    else:
        files = stdlib_files(source)
        rng.shuffle(files)
        by_file = (functions(f, root) for f in files)
    cases: list[Case] = []
    taken, quota = dict.fromkeys(kinds, 0), -(-n // len(kinds))
    for funcs in by_file:
        if not funcs:
            continue
        fid, src = funcs[rng.randrange(len(funcs))]  # one function per file: a spread sample
        if all(k in SLIPS for k in kinds):  # slips, each up to its share (few functions have an `==` to lose)
            for kind in kinds:
                got = None if taken[kind] >= quota else corrupt(src, kind, rng, lang=lang)
                if got is not None:
                    taken[kind] += 1
                    cases.append(Case(fid, kind, src, got[0], got[1], lang))
            if len(cases) >= n:
                break
            continue
        kind = kinds[len(cases) % len(kinds)]
        got = corrupt(src, kind, rng, lang=lang)
        if got is None:
            continue
        cases.append(Case(fid, kind, src, got[0], got[1], lang))
        if len(cases) >= n:
            break
    return cases


# ---- run ---------------------------------------------------------------------------------------------------
def with_crlf(cases: list[Case]) -> list[Case]:
    """The cases written with "\\r\\n" line breaks, as an editor on Windows often sends a file (``--crlf``)."""
    return [dataclasses.replace(c, original=edit.crlf_lines(c.original), broken=edit.crlf_lines(c.broken))
            for c in cases]


def with_tabs(cases: list[Case]) -> list[Case]:
    """The cases indented with tabs, as a tab-indented project writes them (``--tabs``; an indentation slip of
    spaces stays one past the tabs): :func:`bench.heldout.tab_lines` at each function's own indent unit."""
    from .heldout import tab_lines, tab_unit

    return [dataclasses.replace(c, original=tab_lines(c.original, tab_unit(c.original)),
                                broken=tab_lines(c.broken, tab_unit(c.original))) for c in cases]


def run(model: Path, cases: list[Case], *, rounds: int, steps: int | None, threads: int,
        engine: bool = False) -> dict[str, Any]:
    """Repair each case: :func:`edit.repair` with the model, or with ``engine`` through ``Engine.edit`` as the daemon
    runs it (the document opened, the whole function the range)."""
    import torch

    from dgcomplete.engine import EditOptions, Engine
    from dgcomplete.local import LocalInfiller
    from dgcomplete.model import load_model

    torch.set_num_threads(threads)
    loaded = load_model(model)
    inf = None if engine else LocalInfiller(loaded, max_steps=steps)
    eng = Engine(loaded, threads=threads, max_steps=steps) if engine else None
    loop = asyncio.new_event_loop()
    rows = []
    for i, c in enumerate(cases):
        key = f"case-{i}"
        t0 = time.perf_counter()
        if inf is not None:
            filler = edit.ModelFiller(inf, key)
            out = edit.repair(c.broken, 0, len(c.broken), c.lang, filler, rounds=rounds, seed=i)
            calls, steps_run = filler.calls, filler.steps
            inf.forget(key)
        else:
            eng.open(f"file:///{key}", c.broken, 1, c.lang)
            out = loop.run_until_complete(eng.edit("repair", f"file:///{key}", 0, len(c.broken), 1,
                                                   options=EditOptions(seed=i, rounds=rounds))).outcome
            eng.close(f"file:///{key}")
            calls, steps_run = out.stats.get("denoise_calls", 0), out.stats.get("steps", 0)
        ms = (time.perf_counter() - t0) * 1e3
        result = edit.apply_edits(c.broken, out.edits)
        before = syntax.error_count(syntax.parse(c.broken, c.lang))
        after = syntax.error_count(syntax.parse(result, c.lang))
        rows.append({
            "id": c.id, "kind": c.kind, "detail": c.detail, "offered": out.ok,
            "parses": not broken_for(result, c.lang) if c.kind in SLIPS else after == 0,
            "exact": result == c.original, "errors_before": before, "errors_after": after,
            "fewer_errors": after < before, "rounds": out.stats.get("rounds", 0), "denoise_calls": calls,
            "steps": steps_run, "ms": round(ms, 1), "reason": out.reason,
            "repaired": result if out.ok else None,
        })
    if eng is not None:
        loop.run_until_complete(eng.shutdown())
    loop.close()
    return {"model": model_info(loaded), "rows": rows}


def table(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    kinds = dict.fromkeys(r["kind"] for r in rows)
    groups = {**{k: [r for r in rows if r["kind"] == k] for k in kinds}, "all": rows}
    out = []
    md = ["| corruption | cases | parses | exact original | fewer errors | ms p50 | ms p95 |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    for name, rs in groups.items():
        n = len(rs)
        share = lambda k: round(100 * sum(r[k] for r in rs) / n, 1) if n else None  # noqa: E731, B023
        ms = summary([r["ms"] for r in rs], 0)
        g = {"corruption": name, "cases": n, "parses_pct": share("parses"), "exact_pct": share("exact"),
             "fewer_errors_pct": share("fewer_errors"), "ms": ms}
        out.append(g)
        md.append(f"| {name} | {n} | {g['parses_pct']}% | {g['exact_pct']}% | {g['fewer_errors_pct']}% "
                  f"| {ms['p50']} | {ms['p95']} |")
    return out, "\n".join(md)


# ---- held-out functions through the product path (Engine.edit) ----------------------------------------------
@dataclass
class FileCase:
    id: str  # package/path:line
    text: str  # the whole file, intact
    start: int  # the function's first and last character (whole lines)
    end: int
    broken: str  # the file with one ")" or ":" deleted inside the function
    at: int  # where it was deleted
    deleted: str


def _python_parses(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except (SyntaxError, ValueError):
        return False


def heldout_cases(n: int, seed: int, min_lines: int = 4, max_lines: int = 25) -> list[FileCase]:
    """One function per held-out Python file (files in a seeded order, round-robin over packages), one ``)``
    or ``:`` of it deleted where Python's parser then refuses the file."""
    from . import heldout

    files = heldout.load("dev")["files"]
    rng = random.Random(seed)
    by_pkg: dict[str, list[str]] = {}
    for fid in sorted(files):
        f = files[fid]
        if f["lang"] == "python" and _python_parses(f["text"]):
            by_pkg.setdefault(f["package"], []).append(fid)
    for ids in by_pkg.values():
        rng.shuffle(ids)
    order = [fid for group in zip(*[v + [None] * (max(map(len, by_pkg.values())) - len(v))  # type: ignore[operator]
                                    for _, v in sorted(by_pkg.items())], strict=True) for fid in group if fid]
    cases: list[FileCase] = []
    for fid in order:
        text = files[fid]["text"]
        tree = syntax.parse(text, "python")
        if tree is None:
            continue
        index = syntax.TextIndex(text)
        funcs = []
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "function_definition" and min_lines <= node.end_point[0] - node.start_point[0] + 1 <= max_lines:
                a = index.char_offset(node.start_byte)
                funcs.append((text.rfind("\n", 0, a) + 1, index.char_offset(node.end_byte)))
            stack.extend(reversed(node.children))
        rng.shuffle(funcs)
        for a, b in funcs:
            toks = [(x, y, t) for x, y, t in tokens(text[a:b]) if t in (")", ":")]
            rng.shuffle(toks)
            hit = next(((a + x, t) for x, y, t in toks if not _python_parses(text[: a + x] + text[a + y :])), None)
            if hit is None:
                continue
            at, t = hit
            line = text.count("\n", 0, a) + 1
            cases.append(FileCase(f"{fid}:{line}", text, a, b, text[:at] + text[at + 1 :], at, t))
            break
        if len(cases) >= n:
            break
    return cases


def _changed_lines(old: str, new: str) -> set[int]:
    """0-based lines of ``old`` that ``new`` replaces or deletes, and for insertions the lines on either side."""
    a, b = old.split("\n"), new.split("\n")
    out: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.update(range(i1, i2) if i2 > i1 else (i1 - 1, i1))
    return out


def run_heldout(model: Path, cases: list[FileCase], *, rounds: int, steps: int | None, threads: int) -> dict[str, Any]:
    import torch

    from dgcomplete.engine import EditOptions, Engine
    from dgcomplete.model import load_model

    torch.set_num_threads(threads)
    loaded = load_model(model)

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        engine = Engine(loaded, threads=threads, max_steps=steps)
        repairs: list[dict[str, Any]] = []
        rewrites: list[dict[str, Any]] = []
        line_rewrites: list[dict[str, Any]] = []
        try:
            for i, c in enumerate(cases):
                uri = f"file:///heldout/{i}.py"
                engine.open(uri, c.broken, 1, "python")
                t0 = time.perf_counter()
                res = await engine.edit("repair", uri, c.start, c.end - 1, 1, options=EditOptions(seed=i, rounds=rounds))
                ms = (time.perf_counter() - t0) * 1e3
                out = res.outcome
                after = edit.apply_edits(c.broken, out.edits)
                damage = c.broken.count("\n", 0, c.at)
                lines = _changed_lines(c.broken, after)
                parses = _python_parses(after) and syntax.error_count(syntax.parse(after, "python")) == 0
                # ablation: the same repair without the model (no denoising rounds, no ranking of the places)
                plain = edit.repair(c.broken, c.start, c.end - 1, "python", lambda job: job.middle, rounds=0)
                repairs.append({
                    "id": c.id, "deleted": c.deleted, "line": damage + 1, "applied": out.ok,
                    "exact_without_model": edit.apply_edits(c.broken, plain.edits) == c.text,
                    "fixed": out.ok and parses, "exact": after == c.text,
                    "applied_unparseable": out.ok and not parses,
                    "applied_outside_damage": out.ok and not lines <= {damage - 1, damage, damage + 1},
                    "changed_lines": sorted(x + 1 for x in lines), "reason": out.reason, "ms": round(ms, 1),
                    "stats": {k: v for k, v in out.stats.items() if k != "ms"},
                    "edits": [[e.start, e.end, e.text] for e in out.edits],
                })
                engine.close(uri)
                engine.open(uri, c.text, 1, "python")
                t0 = time.perf_counter()
                res = await engine.edit("rewrite", uri, c.start, c.end, 1, options=EditOptions(seed=i))
                ms = (time.perf_counter() - t0) * 1e3
                out = res.outcome
                after = edit.apply_edits(c.text, out.edits)
                parses = _python_parses(after) and syntax.error_count(syntax.parse(after, "python")) == 0
                rewrites.append({"id": c.id, "applied": out.ok, "applied_breaks_parse": out.ok and not parses,
                                 "reason": out.reason, "ms": round(ms, 1),
                                 "new_text": out.new_text if out.ok else None})
                # one line of it (the damaged one, intact): small selections are where rewrites get applied
                a = c.text.rfind("\n", 0, c.at) + 1
                b = c.text.find("\n", c.at)
                a += len(c.text[a:b]) - len(c.text[a:b].lstrip())
                res = await engine.edit("rewrite", uri, a, b, 1, options=EditOptions(seed=i))
                out = res.outcome
                after = edit.apply_edits(c.text, out.edits)
                parses = _python_parses(after) and syntax.error_count(syntax.parse(after, "python")) == 0
                line_rewrites.append({"id": c.id, "line": c.text[a:b], "applied": out.ok,
                                      "applied_breaks_parse": out.ok and not parses, "reason": out.reason,
                                      "new_text": out.new_text if out.ok else None})
                engine.close(uri)
        finally:
            await engine.shutdown()
        return repairs, rewrites, line_rewrites

    repairs, rewrites, line_rewrites = asyncio.run(go())
    return {"model": model_info(loaded), "repair": repairs, "rewrite": rewrites, "rewrite_line": line_rewrites}


def heldout_summary(res: dict[str, Any]) -> tuple[dict[str, Any], str]:
    rp, rw, rl = res["repair"], res["rewrite"], res["rewrite_line"]
    count = lambda rows, k: sum(1 for r in rows if r[k])  # noqa: E731
    out = {
        "repair": {"cases": len(rp), "fixed": count(rp, "fixed"), "exact": count(rp, "exact"),
                   "exact_without_model": count(rp, "exact_without_model"),
                   "applied": count(rp, "applied"), "applied_unparseable": count(rp, "applied_unparseable"),
                   "applied_outside_damage": count(rp, "applied_outside_damage"),
                   "by_deleted": {t: {"cases": sum(r["deleted"] == t for r in rp),
                                      "fixed": sum(r["fixed"] for r in rp if r["deleted"] == t)} for t in (")", ":")},
                   "ms": summary([r["ms"] for r in rp], 0)},
        "rewrite": {"cases": len(rw), "applied": count(rw, "applied"),
                    "applied_breaks_parse": count(rw, "applied_breaks_parse"), "ms": summary([r["ms"] for r in rw], 0)},
        "rewrite_line": {"cases": len(rl), "applied": count(rl, "applied"),
                         "applied_breaks_parse": count(rl, "applied_breaks_parse")},
    }
    r, w, ln = out["repair"], out["rewrite"], out["rewrite_line"]
    md = "\n".join([
        "| suite | cases | fixed | exact original | applied | applied, file unparseable | applied, outside damage |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| Repair (one `)` or `:` deleted) | {r['cases']} | {r['fixed']} | {r['exact']} | {r['applied']} "
        f"| {r['applied_unparseable']} | {r['applied_outside_damage']} |",
        f"| Rewrite selection (intact function) | {w['cases']} | – | – | {w['applied']} | {w['applied_breaks_parse']} | – |",
        f"| Rewrite selection (one line of it) | {ln['cases']} | – | – | {ln['applied']} | {ln['applied_breaks_parse']} "
        "| – |",
    ])
    return out, md


def main_heldout(args: argparse.Namespace) -> None:
    model = resolve_model(args.model)
    t0 = time.perf_counter()
    cases = heldout_cases(args.cases, args.seed)
    res = run_heldout(model, cases, rounds=args.rounds, steps=args.steps, threads=args.threads)
    summ, md = heldout_summary(res)
    report = {
        "bench": "repair_heldout", "model": res["model"], "machine": machine_info(),
        "settings": {"cases": args.cases, "seed": args.seed, "rounds": args.rounds, "steps": args.steps,
                     "source": "held-out dev split (bench/heldout.py), Python files; Engine.edit"},
        "summary": summ, "wall_s": round(time.perf_counter() - t0, 1),
        "repair": res["repair"], "rewrite": res["rewrite"], "rewrite_line": res["rewrite_line"],
    }
    out = Path(args.out or RESULTS / "repair_heldout.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"Repair / Rewrite on held-out functions — {res['model']['name']}, {len(cases)} functions\n")
    print(md)
    print(f"\nwrote {display_path(out)}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Repair syntax on functions with injected syntax errors")
    ap.add_argument("--model", help="checkpoint directory (default: the embedded model)")
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=6, help="denoising rounds Repair may spend per case")
    ap.add_argument("--steps", type=int, default=None, help="denoising steps per round (default: the model's)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--source", choices=("test", "all", "heldout", "dev"), default="test",
                    help="stdlib test/ package (held out of training), the whole standard library, the held-out dev "
                         "split's Python functions (dev: where Repair is tuned), or the held-out "
                         "packages' functions through Engine.edit (issue #17's suite; default 20 cases)")
    ap.add_argument("--kinds", default="delete,swap",
                    help="corruptions, taken in turn: delete, swap, extra (a bracket or ,;:. twice), replace (one "
                         "written as another of its kind); quote, closer, eq, indent (the slips of TYPOS; "
                         "`typos` is all four), spell (a keyword misspelled)")
    ap.add_argument("--lang", default="python", choices=sorted(FUNCTION_NODES),
                    help="the dev source's language (the stdlib suites are Python)")
    ap.add_argument("--crlf", action="store_true",
                    help="the cases with CRLF line breaks, repaired through Engine.edit as the daemon runs them")
    ap.add_argument("--tabs", action="store_true",
                    help="the cases indented with tabs, repaired through Engine.edit as the daemon runs them")
    ap.add_argument("--engine", action="store_true", help="repair through Engine.edit as the daemon runs it")
    ap.add_argument("--out", default=None, help="default bench/results/repair.json (repair_heldout.json)")
    args = ap.parse_args(argv)
    if args.source == "heldout":
        if args.cases == ap.get_default("cases"):
            args.cases = 20
        main_heldout(args)
        return
    args.out = args.out or str(RESULTS / "repair.json")

    model = resolve_model(args.model)
    t0 = time.perf_counter()
    kinds = tuple(k for name in args.kinds.split(",") for k in (TYPOS if name == "typos" else (name,)))
    cases = make_cases(args.cases, args.seed, args.source, args.lang, kinds)
    cases = with_crlf(cases) if args.crlf else cases
    cases = with_tabs(cases) if args.tabs else cases
    res = run(model, cases, rounds=args.rounds, steps=args.steps, threads=args.threads,
              engine=args.engine or args.crlf or args.tabs)
    groups, md = table(res["rows"])
    report = {
        "bench": "repair", "model": res["model"], "machine": machine_info(),
        "settings": {"cases": args.cases, "seed": args.seed, "rounds": args.rounds, "steps": args.steps,
                     "source": {"test": "stdlib test/ (held out of training)", "all": "whole stdlib",
                                "dev": f"held-out dev splits' {args.lang} functions (for tuning)"}[args.source],
                     "lang": args.lang, "kinds": args.kinds, "line_breaks": "crlf" if args.crlf else "lf",
                     "indent": "tabs" if args.tabs else "as written",
                     "through": "Engine.edit" if args.engine or args.crlf or args.tabs else "edit.repair"},
        "summary": groups, "wall_s": round(time.perf_counter() - t0, 1),
        "cases": [{**asdict(c), **r} for c, r in zip(cases, res["rows"], strict=True)],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"Repair syntax — {res['model']['name']}, {len(cases)} cases ({report['settings']['source']}), "
          f"{args.rounds} rounds\n")
    print(md)
    print(f"\nwrote {display_path(out)}")


if __name__ == "__main__":
    main()
