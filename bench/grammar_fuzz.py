"""Every grammar under random edits, parsed whole and incrementally: nothing may crash or read freed memory.

A tree-sitter grammar is C code run inside the daemon: a bad read in a grammar's external scanner is a dead
daemon now and then, not an exception (session 48 found tree-sitter-bash's scanner reading freed memory on
characters past U+FFFF; the daemon's fuzz suite died of it in 4 runs of 7). :mod:`bench.syntax_sweep` and the
daemon's fuzz tests meet such a bug by chance; this meets it on purpose, for each language the daemon parses:

* texts: short runs of tokens that trouble scanners (``#{``, heredocs, raw strings, ``?>``, quotes, characters
  past U+FFFF, NUL, CR, BOM, combining marks, and the language's own tokens from the dev split's files), and
  windows of those files with a few such tokens inserted, ranges deleted or copied;
* each text parsed, edited as an editor edits it (the smallest change, ``Tree.edit``) and parsed again
  incrementally and from scratch, both trees walked, as :class:`~dgcomplete.syntax.SyntaxDocument` does;
* in a subprocess per language and seed, natively with freed memory filled (``MALLOC_PERTURB_``: a crash is a
  signal in the return code), and with ``--valgrind N`` N cases of each under valgrind's memcheck, counting the
  errors whose stack is in tree-sitter (CPython's own are not counted). Neither is sure: bash's bad read crashes
  some native runs and not others, and memcheck showed it in one run of 100 cases and not in the next
  (``bench/results/grammar_fuzz_first.json``, ``grammar_fuzz.json``); a clean run bounds such a bug, no more.

The daemon's parsers are used (:func:`~dgcomplete.syntax.languages.get_parser`: bash's masks characters past
U+FFFF; each gives up past its parse budget, counted as ``gave_up``: TSX's grammar hung this fuzz before it had one,
``grammar_fuzz_tsx_hang.json``). A positive control runs bash's parser unmasked: it must crash, or the harness is too weak to trust.

    python -m bench.grammar_fuzz [--langs python,bash] [--cases 20000] [--seeds 4] [--valgrind 300] [--out FILE]
    python -m bench.grammar_fuzz --langs "" --valgrind 100     # the positive controls alone
    python -m bench.grammar_fuzz --langs tsx --seeds 2 --gave-up 100000   # the texts given up on: would they return?
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import display_path, emit, machine_info

LANGS = ("python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "lua", "bash", "json",
         "ruby", "php")
SPLIT = {"python": "dev", "javascript": "dev", "typescript": "dev", "tsx": "dev", "java": "dev_langs",
         "go": "dev_langs", "rust": "dev_langs", "c": "dev_langs", "php": "dev_ruby_php", "ruby": "dev_ruby_php",
         "cpp": "dev_cpp"}
CORPUS = {"lua": "lua", "bash": "shell"}  # no held-out split has these: the corpus's dev files
TOKENS = ("#{", "${", "$(", "`", '"', "'", "<<EOF\n", "<<-EOF\n", "<<<EOT\n", "\\", "\r", "\x00", "\t", "/*", "*/",
          '"""', "'''", 'r#"', '"#', "?>", "<?php ", "%w[", "%q(", "\n=begin\n", "\n=end\n", "\u0301", "\u200d",
          "\ufeff", "\u2028", "<div>", "</", "{{", "}}", "@", "#!", "--[[", "]]", "[[", 'R"x(', ')x"', "'\\u{",
          "b'", 'f"{', '}"', "\n__END__\n", "//", "#", "\n", "  ", "<<~EOS\n", "${{", "%>", "<%", "=>", "::",
          "#if 0\n", "#endif\n", "\\\n", "$'", '$"', "case", "esac", "fi", "done", "do", "\U0001f600", "\U0010ffff",
          "é", "漢字", "\x1b", "\x7f", "\x0c", "def f(x):\n", "    return ", "x", "(", ")", "{", "}", "[", "]", ":",
          ".", ",", " ", "\r\n", "if x:", "import os\n", "function g() {", "fn main() {", "func main() {",
          "let y = ", "0" * 40, "é" * 30 + "\n", "<?php\n", "$x = ", "do |x|\n", "end\n")
_WORDS = re.compile(r"[^\w\s]{1,3}|\w+")
_SCANNER_FRAME = re.compile(r"tree_sitter|\bts_|scanner\.c|parser\.c|/tree_sitter")


def seeds(lang: str) -> list[str]:
    """Real files of ``lang`` to start from: a held-out dev split's, or the corpus's dev files."""
    if lang in CORPUS:
        from dgcomplete.train.data import load_corpus, split_dev

        return [t for t, _ in split_dev(load_corpus(Path("data/corpus"), (CORPUS[lang],)))[1]][:60]
    from . import heldout

    data = heldout.load(SPLIT.get(lang, "dev"))
    if lang == "json":  # no split has JSON files: the split's own records, as JSON text
        return [json.dumps({k: v for k, v in f.items() if k != "text"}, indent=2) for f in data["files"].values()]
    want = "typescript" if lang == "tsx" else lang
    return [f["text"] for fid, f in data["files"].items() if heldout.language_id(fid) == want][:60]


def _char(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.4:
        return chr(rng.randrange(0x10000, 0x110000))
    if r < 0.7:
        c = rng.randrange(0x80, 0x10000)
        return "é" if 0xD800 <= c < 0xE000 else chr(c)
    return chr(rng.randrange(0, 0x80))


def _tokens(rng: random.Random, pool: list[str]) -> str:
    return "".join(rng.choice(pool) if rng.random() < 0.85 else _char(rng) for _ in range(rng.randrange(1, 40)))


def _mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randrange(1, 6)):
        at, op = rng.randrange(len(text) + 1), rng.random()
        if op < 0.35:
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        elif op < 0.7:
            text = text[:at] + "".join(_char(rng) for _ in range(rng.randrange(1, 4))) + text[at:]
        elif op < 0.85:
            text = text[:at] + text[at + rng.randrange(1, 40):]
        else:
            other = rng.randrange(len(text) + 1)
            text = text[:at] + text[min(at, other):max(at, other)][:200] + text[at:]
    return text


def _point(data: bytes, i: int) -> tuple[int, int]:
    return data.count(b"\n", 0, i), i - (data.rfind(b"\n", 0, i) + 1)


def _walk(tree: Any, steps: int = 200) -> None:
    tree.root_node.has_error  # noqa: B018 (read, as the checks read it)
    c = tree.walk()
    for _ in range(steps):
        if not (c.goto_first_child() or c.goto_next_sibling()):
            if not c.goto_parent():
                break
            c.goto_next_sibling()


def fuzz_language(lang: str, mode: str, cases: int, seed: int, raw: bool = False,
                  kept: list[tuple[bytes, bool]] | None = None) -> tuple[int, int]:
    """``cases`` texts of ``mode`` ("tokens" or "files"), each parsed, edited and parsed again (in this process:
    a bad read kills it). The cases run, and the parses that gave up (past the daemon's parse budget: a grammar
    that would not return, like TSX's on ``grammar_fuzz_tsx_hang.json``'s text), each appended to ``kept`` as
    (text, incremental) when it is given."""
    import tree_sitter

    from dgcomplete.syntax.languages import ParseGaveUp, get_language, get_parser

    parser = tree_sitter.Parser(get_language(lang)) if raw else get_parser(lang)
    rng = random.Random(seed)
    gave_up = 0
    texts = [t for t in seeds(lang) if t]
    pool = list(TOKENS) + sorted({w for t in texts[:20] for w in _WORDS.findall(t)})[:400]
    for _ in range(cases):
        if mode == "tokens":
            text = _tokens(rng, pool)
            new_text = _mutate(text, rng) if rng.random() < 0.5 else text + _tokens(rng, pool)
        else:
            base = rng.choice(texts)
            start = rng.randrange(max(1, len(base) - 3000))
            text = base[start:start + 3000]
            new_text = _mutate(text, rng)
        old, new = text.encode("utf-8", "replace"), new_text.encode("utf-8", "replace")
        try:
            tree = parser.parse(old)
        except ParseGaveUp:
            gave_up += 1
            if kept is not None:
                kept.append((old, False))
            continue
        a = 0  # the smallest change from old to new, as a document applies an editor's
        while a < min(len(old), len(new)) and old[a] == new[a]:
            a += 1
        b_old, b_new = len(old), len(new)
        while b_old > a and b_new > a and old[b_old - 1] == new[b_new - 1]:
            b_old, b_new = b_old - 1, b_new - 1
        tree.edit(a, b_old, b_new, _point(old, a), _point(old, b_old), _point(new, b_new))
        for old_tree in (tree, None):
            try:
                _walk(parser.parse(new) if old_tree is None else parser.parse(new, old_tree))
            except ParseGaveUp:
                gave_up += 1
                if kept is not None:
                    kept.append((new, old_tree is not None))
    return cases, gave_up


def _child(lang: str, mode: str, cases: int, seed: int, raw: bool, valgrind: bool, log: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.grammar_fuzz", "--worker", lang, mode, str(cases), str(seed)]
    cmd += ["--raw"] if raw else []
    # natively, freed memory filled with a byte (glibc's MALLOC_PERTURB_): a read of it goes wrong more often, where
    # it read what was still there (the unmasked bash control crashed in no run of grammar_fuzz_first.json, without)
    env = {**os.environ, "MALLOC_PERTURB_": "165"}
    if valgrind:  # CPython's own allocator hides heap errors from memcheck
        env = {**os.environ, "PYTHONMALLOC": "malloc"}
        cmd = ["valgrind", "--tool=memcheck", "--leak-check=no", "--num-callers=30", f"--log-file={log}", *cmd]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=7200)
    row: dict[str, Any] = {"mode": mode, "seed": seed, "cases": cases, "returncode": r.returncode,
                           "s": round(time.perf_counter() - t0, 1)}
    if r.returncode != 0:
        row["stderr_tail"] = r.stderr.strip()[-300:]
    elif r.stdout.split():
        row["gave_up"] = int(r.stdout.split()[-1])
    if valgrind:
        row.update(scanner_errors(log.read_text(errors="replace")))
    return row


def scanner_errors(log: str) -> dict[str, Any]:
    """valgrind errors whose stack runs through tree-sitter (a grammar or the runtime), and the first of them."""
    blocks, cur = [], []
    for line in log.splitlines():
        body = line.split("== ", 1)[1] if "== " in line else ""
        if body and not body.startswith(" ") and not body.startswith(("at ", "by ", "Address")) and cur:
            blocks.append(cur)
            cur = []
        if body:
            cur.append(body)
    blocks.append(cur)
    hits = [b for b in blocks if b and b[0].startswith(("Invalid", "Use of uninit", "Conditional jump"))
            and any(_SCANNER_FRAME.search(x) for x in b[1:])]
    return {"tree_sitter_errors": len(hits), "first": hits[0][:8] if hits else None}


def run(langs: tuple[str, ...], cases: int, file_cases: int, seeds_n: int, vg_cases: int) -> dict[str, Any]:
    out: dict[str, Any] = {"bench": "grammar_fuzz", "cases_per_seed": {"tokens": cases, "files": file_cases},
                           "seeds": seeds_n, "valgrind_cases": vg_cases, "machine": machine_info(),
                           "languages": {}}
    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="dg-grammar-fuzz-"))
    for lang in langs:
        rows = [_child(lang, mode, n, seed, False, False, tmp / "x.log")
                for mode, n in (("tokens", cases), ("files", file_cases)) for seed in range(1, seeds_n + 1)]
        entry: dict[str, Any] = {"runs": rows, "crashed_runs": sum(r["returncode"] != 0 for r in rows),
                                 "gave_up": sum(r.get("gave_up", 0) for r in rows)}
        if vg_cases and shutil.which("valgrind"):
            entry["valgrind"] = [_child(lang, mode, vg_cases, 101, False, True, tmp / f"{lang}-{mode}.log")
                                 for mode in ("tokens", "files")]
        out["languages"][lang] = entry
        print(lang, json.dumps({"crashed_runs": entry["crashed_runs"], "gave_up": entry["gave_up"],
                                "valgrind": [v.get("tree_sitter_errors") for v in entry.get("valgrind", [])]}),
              flush=True)
    # the positive control: bash's scanner unmasked, which reads freed memory (session 48): natively it must crash
    # now and then, and under memcheck show the bad read long before (seed 1 crashes natively within 100 cases)
    control = [_child("bash", "tokens", cases, seed, True, False, tmp / "x.log") for seed in range(1, seeds_n + 1)]
    out["control_bash_unmasked"] = {"runs": control, "crashed_runs": sum(r["returncode"] != 0 for r in control)}
    if vg_cases and shutil.which("valgrind"):
        out["control_bash_unmasked"]["valgrind"] = _child("bash", "tokens", min(vg_cases, 100), 1, True, True,
                                                          tmp / "control.log")
    out["crashed"] = sorted(k for k, v in out["languages"].items() if v["crashed_runs"])
    out["valgrind_tree_sitter_errors"] = {k: sum(x.get("tree_sitter_errors", 0) for x in v.get("valgrind", []))
                                          for k, v in out["languages"].items()}
    out["valgrind"] = shutil.which("valgrind") is not None
    out["data"] = display_path(Path("bench/data/heldout"))
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def gave_up_texts(langs: tuple[str, ...], cases: int, file_cases: int, seeds_n: int, cap: int) -> dict[str, Any]:
    """The fuzz's texts the daemon's parsers gave up on (the same cases as :func:`run`'s native runs, in this
    process), each parsed again by a bare parser with no budget but ``cap`` progress checks: whether the grammar
    would have returned at all, and the seconds it ran."""
    import tree_sitter

    from dgcomplete.syntax.languages import BUDGET_BASE, BUDGET_PER_KB, get_language, parse_counted

    out: dict[str, Any] = {"bench": "grammar_fuzz_gave_up", "cases_per_seed": {"tokens": cases, "files": file_cases},
                           "seeds": seeds_n, "cap_checks": cap, "budget": {"base": BUDGET_BASE, "per_kib": BUDGET_PER_KB},
                           "machine": machine_info(), "languages": {}}
    for lang in langs:
        kept: list[tuple[bytes, bool]] = []
        for mode, n in (("tokens", cases), ("files", file_cases)):
            for seed in range(1, seeds_n + 1):
                fuzz_language(lang, mode, n, seed, kept=kept)
        bare = tree_sitter.Parser(get_language(lang))
        rows = []
        for data, incremental in kept:
            t0 = time.perf_counter()
            tree, checks = parse_counted(bare, data, cap)  # afresh: an incremental parse's old tree is not kept
            rows.append({"text": data.decode("utf-8", "replace"), "bytes": len(data), "as": "incremental" if
                         incremental else "fresh", "checks": checks, "returned": tree is not None,
                         "s": round(time.perf_counter() - t0, 2)})
            print(lang, {k: v for k, v in rows[-1].items() if k != "text"}, flush=True)
        out["languages"][lang] = {"gave_up": len(rows), "distinct_texts": len({r["text"] for r in rows}),
                                  "returned_within_cap": sum(r["returned"] for r in rows), "texts": rows}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--cases", type=int, default=20_000, help="token texts per seed")
    ap.add_argument("--file-cases", type=int, default=1_500, help="mutated file windows per seed")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--valgrind", type=int, default=0, metavar="N", help="N cases of each mode under memcheck")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--gave-up", type=int, metavar="CAP", help="list the texts the parsers gave up on, each parsed "
                    "again with no budget but CAP progress checks (the native cases, in this process)")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.gave_up:
        emit(gave_up_texts(tuple(x for x in a.langs.split(",") if x), a.cases, a.file_cases, a.seeds, a.gave_up),
             a.out)
        return
    if a.worker:
        lang, mode, n, seed = a.worker
        print(*fuzz_language(lang, mode, int(n), int(seed), a.raw))
        return
    emit(run(tuple(x for x in a.langs.split(",") if x), a.cases, a.file_cases, a.seeds, a.valgrind), a.out)


if __name__ == "__main__":
    main()
