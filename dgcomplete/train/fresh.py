"""The large corpus less everything a continuation must not train on: a CPU continuation's fresh data.

A model trained on the tier-1-2 corpus (``data/corpus``) sees new text when continued on the tier-3 additions
alone. Dropped: every file of the base corpus (its dev split is the trainer's dev set, ``--dev-corpus``), and
the large corpus's own per-language dev split (what ``bench.dev_decoding --corpus data/corpus_large`` measures
on). The output is one ``<lang>.jsonl`` per language, in the large corpus's order.

    python -m dgcomplete.train.fresh --large data/corpus_large --base data/corpus --out data/corpus_fresh
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from .data import load_corpus, split_dev


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def build(large: Path, base: Path, out: Path) -> dict[str, int]:
    """Write the fresh corpus; returns files kept per language."""
    seen = {_key(t) for t, _ in load_corpus(base)}
    out.mkdir(parents=True, exist_ok=True)
    kept: dict[str, int] = {}
    for path in sorted(large.glob("*.jsonl")):
        lang = path.name.split(".")[0]
        _, dev = split_dev(load_corpus(large, (lang,)))
        held = {_key(t) for t, _ in dev}
        n = 0
        with open(path, encoding="utf-8") as src, open(out / f".{path.name}.tmp", "w", encoding="utf-8") as dst:
            for line in src:
                k = _key(json.loads(line)["text"])
                if k in seen or k in held:
                    continue
                dst.write(line)
                n += 1
        (out / f".{path.name}.tmp").rename(out / path.name)
        kept[lang] = n
    return kept


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--large", default="data/corpus_large")
    ap.add_argument("--base", default="data/corpus")
    ap.add_argument("--out", default="data/corpus_fresh")
    a = ap.parse_args(argv)
    kept = build(Path(a.large), Path(a.base), Path(a.out))
    print(json.dumps({"kept": kept, "total": sum(kept.values())}))


if __name__ == "__main__":
    main()
