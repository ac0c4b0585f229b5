"""The syntax layer on big real files at random positions: nothing may crash the process.

The checks of a file over 16 KB parse windows found by walking the tree around the cursor, and a wrong node
from py-tree-sitter there is not an exception but a segfault of the daemon (a Go ``const (...)`` block's blank
last line did it, found on a corpus file). So each language runs in its own subprocess: plan the span and check
a handful of candidates (error counts, error spans, cut) at random offsets of the corpus's dev files over 16 KB.
A crash shows as that language's return code (-11: SIGSEGV). Needs a built corpus (``make corpus`` or
``make corpus-large``); CI has none, so this is a benchmark, not a test.

    python -m bench.syntax_sweep [--corpus data/corpus_large] [--files 60] [--positions 200] [--out FILE]
    python -m bench.syntax_sweep --dir FOLDER --langs ruby,php     # a folder's files instead (no corpus has
                                                                    # these languages)
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import display_path, emit, machine_info

LANGS = ("python", "go", "javascript", "typescript", "java", "rust", "c", "lua", "bash")
CANDIDATES = ("x", ")", "\n", "foo(bar)", " {", "}")  # plain, a closer, a line break, a call, an opener
MIN_BYTES = 17_000  # above check._SMALL_DOC: the windowed path


def _folder_texts(folder: Path, lang: str) -> list[str]:
    """The texts of the files under ``folder`` the editor would open as ``lang`` (by name), in path order."""
    from dgcomplete.syntax.languages import language_for

    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and language_for(None, path.name) == lang:
            out.append(path.read_text(encoding="utf-8", errors="replace"))
    return out


def sweep_language(corpus: Path, lang: str, files: int, positions: int, seed: int = 1,
                   folder: Path | None = None) -> dict[str, Any]:
    """Plan + checks at random offsets of up to ``files`` big dev files of ``lang`` (in this process); with
    ``folder``, of its big files of that language instead."""
    from dgcomplete.syntax import check, plan
    from dgcomplete.syntax.document import SyntaxDocument
    from dgcomplete.train.data import load_corpus, split_dev

    rng = random.Random(seed)
    dev = [(t, None) for t in _folder_texts(folder, lang)] if folder else split_dev(load_corpus(corpus, (lang,)))[1]
    texts = [t for t, _ in dev if len(t.encode("utf-8", "surrogatepass")) > MIN_BYTES][:files]
    done = errors = 0
    for text in texts:
        doc = SyntaxDocument(text, lang)
        for _ in range(positions):
            off = rng.randrange(len(text) + 1)
            try:
                p = plan.plan_span(text, off, lang, doc.tree)
                for cand in CANDIDATES:
                    check.new_errors(text, off, off, cand, lang, doc.tree)
                    check.error_char_spans(text, off, off, cand, lang, doc.tree)
                    check.cut_candidate(text, off, cand, p, lang, doc.tree)
            except Exception:  # an exception is a bug too, but not a dead daemon: counted apart
                errors += 1
            done += 1
    return {"files": len(texts), "positions": done, "exceptions": errors}


def run(corpus: Path, langs: tuple[str, ...], files: int, positions: int, folder: Path | None = None,
        ) -> dict[str, Any]:
    out: dict[str, Any] = {"bench": "syntax_sweep", "corpus": display_path(folder or corpus), "files_per_language": files,
                           "positions_per_file": positions, "candidates": list(CANDIDATES),
                           "machine": machine_info(), "languages": {}}
    t0 = time.perf_counter()
    for lang in langs:
        r = subprocess.run([sys.executable, "-m", "bench.syntax_sweep", "--worker", lang, "--corpus", str(corpus),
                            "--files", str(files), "--positions", str(positions),
                            *(["--dir", str(folder)] if folder else [])],
                           capture_output=True, text=True, timeout=3600)
        row: dict[str, Any] = {"returncode": r.returncode}
        if r.returncode == 0 and r.stdout.strip():
            row.update(json.loads(r.stdout.strip().splitlines()[-1]))
        else:
            row["stderr_tail"] = r.stderr.strip()[-400:]
        out["languages"][lang] = row
        print(lang, json.dumps(row), flush=True)
    out["crashed"] = sorted(k for k, v in out["languages"].items() if v["returncode"] != 0)
    out["positions"] = sum(v.get("positions", 0) for v in out["languages"].values())
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="the syntax layer at random positions of big real files")
    ap.add_argument("--corpus", default="data/corpus_large")
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--files", type=int, default=60)
    ap.add_argument("--positions", type=int, default=200)
    ap.add_argument("--dir", help="sweep this folder's files (by extension) instead of the corpus's dev files")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    folder = Path(args.dir) if args.dir else None
    if args.worker:
        print(json.dumps(sweep_language(Path(args.corpus), args.worker, args.files, args.positions, folder=folder)))
        return
    emit(run(Path(args.corpus), tuple(args.langs.split(",")), args.files, args.positions, folder), args.out)


if __name__ == "__main__":
    main()
