"""Keep evaluation problems out of the training corpus.

The evaluation sets (HumanEval-Infilling, SantaCoder-FIM, HumanEval-X) live in
``../shared/data`` relative to the repository root (override with ``--eval-dir`` or the
``DGCOMPLETE_EVAL_DIR`` environment variable).  They are only *read* here: we build an
in-memory set of hashed, whitespace-insensitive 13-token shingles of every problem
(prompt, canonical solution, suffix, tests) and drop any corpus file that shares more
than a handful of them.  Files that define a HumanEval entry point *and* contain the
start of its docstring are dropped too.  Nothing derived from the eval data is written
to disk.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
import warnings
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

EVAL_DIR_ENV = "DGCOMPLETE_EVAL_DIR"
# Relative to the repository root.
DEFAULT_EVAL_DIR = Path("..") / "shared" / "data"

TOKEN_RE = re.compile(r"\w+|[^\w\s]")
DEF_RE = re.compile(r"\b(?:def|function|func|fn)\s+([A-Za-z_]\w*)\s*\(")
_NON_ALNUM_RE = re.compile(r"[^0-9a-z]+")

# Odd 64-bit multipliers used to combine token hashes into n-gram hashes.
_MULTS = np.array(
    [
        0x9E3779B97F4A7C15,
        0xC2B2AE3D27D4EB4F,
        0x165667B19E3779F9,
        0xD6E8FEB86659FD93,
        0xFF51AFD7ED558CCD,
        0xC4CEB9FE1A85EC53,
        0x2545F4914F6CDD1D,
        0x5851F42D4C957F2D,
        0x14057B7EF767814F,
        0x94D049BB133111EB,
        0xBF58476D1CE4E5B9,
        0x27BB2EE687B0B0FD,
        0x61C8864680B583EB,
        0x8CB92BA72F3D8DD7,
        0xA0761D6478BD642F,
        0xE7037ED1A0B428DB,
    ],
    dtype=np.uint64,
)


@functools.lru_cache(maxsize=1 << 18)
def _token_crc(t: str) -> int:
    return zlib.crc32(t.encode("utf-8", "surrogatepass"))


def token_hashes(text: str) -> np.ndarray:
    """crc32 of every word / punctuation token (whitespace-insensitive), as uint64."""
    toks = TOKEN_RE.findall(text)
    return np.fromiter(map(_token_crc, toks), dtype=np.uint64, count=len(toks))


class ShingleSet:
    """Sorted distinct shingle hashes with a presence table on their top 24 bits: almost every n-gram of a
    corpus file is ruled out by one lookup, and only the few that pass are searched (same counts, faster)."""

    def __init__(self, shingles: np.ndarray) -> None:
        self.shingles = np.unique(shingles)
        self._present = np.zeros(1 << 24, dtype=bool)
        self._present[self.shingles >> np.uint64(40)] = True

    def __len__(self) -> int:
        return len(self.shingles)

    def shared(self, grams: np.ndarray) -> int:
        """How many distinct values of ``grams`` are in the set (made distinct only on a hit: most files
        share none, and sorting every file's n-grams was a third of the corpus build's time)."""
        if not len(grams) or not len(self.shingles):
            return 0
        grams = grams[self._present[grams >> np.uint64(40)]]
        if not len(grams):
            return 0
        idx = np.searchsorted(self.shingles, grams)
        idx[idx >= len(self.shingles)] = 0
        hit = self.shingles[idx] == grams
        return int(len(np.unique(grams[hit]))) if hit.any() else 0


def ngram_hashes(tok: np.ndarray, n: int, salt: int = 0, unique: bool = True) -> np.ndarray:
    """(Unique) 64-bit hashes of all token n-grams (empty if fewer than n tokens)."""
    if n > len(_MULTS):
        raise ValueError(f"n-gram size {n} > {len(_MULTS)}")
    m = len(tok) - n + 1
    if m <= 0:
        return np.empty(0, dtype=np.uint64)
    h = np.full(m, np.uint64(salt * 0x9E3779B1 + n), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n):
            h = (h ^ (tok[j : j + m] + np.uint64(j))) * _MULTS[j]
            h ^= h >> np.uint64(29)
    return np.unique(h) if unique else h


# Keywords of the eval languages: they don't make an n-gram specific.
_KEYWORDS = frozenset(
    "and as assert async await break case catch class const continue def default del do elif else "
    "enum except export extends false final finally fn for from func function go if impl import in "
    "int interface is lambda let long match mut new nil none nonlocal not null or package pass pub "
    "raise return self static string struct super switch this throw true try type use var void while "
    "with yield bool boolean char double float public private protected vector std include".split()
)
_WORD_RE = re.compile(r"[A-Za-z_]\w+")


def informative_ngram_hashes(text: str, n: int, min_words: int) -> np.ndarray:
    """Unique hashes of the n-grams of ``text`` with at least ``min_words`` non-keyword words.

    Number lists, ``"a", "b", "c"`` literals and keyword/punctuation idioms occur in lots of
    unrelated code, so they are not used as evidence of contamination.
    """
    toks = TOKEN_RE.findall(text)
    th = np.fromiter(
        (zlib.crc32(t.encode("utf-8", "surrogatepass")) for t in toks), dtype=np.uint64, count=len(toks)
    )
    h = ngram_hashes(th, n, salt=1, unique=False)
    if not len(h):
        return h
    word = np.fromiter(
        (bool(_WORD_RE.fullmatch(t)) and t.lower() not in _KEYWORDS for t in toks),
        dtype=np.int32,
        count=len(toks),
    )
    c = np.concatenate([[0], np.cumsum(word)])
    nwords = c[n:] - c[:-n]
    return np.unique(h[nwords >= min_words])


def normalize_words(text: str) -> str:
    """Lowercase, every run of non-alphanumerics collapsed to one space."""
    return _NON_ALNUM_RE.sub(" ", text.lower()).strip()


def _camel(name: str) -> set[str]:
    parts = [p for p in name.split("_") if p]
    if not parts:
        return {name}
    lower = parts[0].lower() + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    upper = "".join(p[:1].upper() + p[1:] for p in parts)
    return {name, lower, upper}


def _read_jsonl_gz(path: Path) -> Iterator[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                yield json.loads(line)


_DOCSTRING_RE = re.compile(r"(?:\"\"\"|''')\s*(.+?)(?:\n|\"\"\"|''')", re.S)


def iter_eval_records(eval_dir: Path) -> Iterator[tuple[str, str, str | None, str | None]]:
    """Yield (set name, full problem text, entry point, docstring head) for every eval record."""
    for f in sorted(eval_dir.glob("human-eval-infilling/*.jsonl.gz")):
        for r in _read_jsonl_gz(f):
            full = r.get("prompt", "") + r.get("canonical_solution", "") + r.get("suffix", "")
            doc = None
            m = _DOCSTRING_RE.search(full)
            if m:
                doc = m.group(1)
            yield "human-eval-infilling", full + "\n" + r.get("test", ""), r.get("entry_point"), doc
    for f in sorted(eval_dir.glob("santacoder-fim/*.jsonl.gz")):
        for r in _read_jsonl_gz(f):
            full = "\n".join([r.get("prompt", ""), r.get("canonical_solution", ""), r.get("suffix", "")])
            yield "santacoder-fim", full + "\n" + r.get("tests", ""), None, None
    for f in sorted(eval_dir.glob("humaneval-x/*.jsonl.gz")):
        for r in _read_jsonl_gz(f):
            full = r.get("prompt", "") + r.get("canonical_solution", "")
            yield "humaneval-x", full + "\n" + r.get("test", ""), None, None


def resolve_eval_dir(eval_dir: str | os.PathLike | None = None, repo_root: Path | None = None) -> Path:
    if eval_dir is None:
        eval_dir = os.environ.get(EVAL_DIR_ENV)
    if eval_dir is None:
        root = repo_root or Path(__file__).resolve().parents[2]
        return (root / DEFAULT_EVAL_DIR).resolve()
    return Path(eval_dir)


class Decontaminator:
    """Membership test of corpus files against the evaluation problems."""

    def __init__(
        self,
        records: Iterable[tuple[str, str, str | None, str | None]],
        ngram: int = 13,
        max_shared: int = 8,
        doc_chars: int = 40,
        min_words: int = 4,
    ) -> None:
        self.ngram = ngram
        self.max_shared = max_shared
        shingles: list[np.ndarray] = []
        self.entry_docs: dict[str, set[str]] = {}
        self.n_problems = 0
        seen: set[int] = set()
        for _set_name, text, entry, doc in records:
            key = zlib.crc32(text.encode("utf-8", "surrogatepass"))
            if key in seen:
                continue
            seen.add(key)
            self.n_problems += 1
            shingles.append(informative_ngram_hashes(text, ngram, min_words))
            if entry and doc:
                snippet = normalize_words(doc)[:doc_chars].strip()
                if len(snippet) >= 12:
                    for name in _camel(entry):
                        self.entry_docs.setdefault(name, set()).add(snippet)
        self.shingles = ShingleSet(np.concatenate(shingles) if shingles else np.empty(0, dtype=np.uint64))
        self.dropped = 0

    @classmethod
    def from_dir(cls, eval_dir: str | os.PathLike | None = None, **kw) -> Decontaminator | None:
        """Build from the eval directory, or warn and return None when it doesn't exist."""
        path = resolve_eval_dir(eval_dir)
        if not path.is_dir():
            warnings.warn(
                f"eval directory {path} not found: decontamination against eval sets SKIPPED", stacklevel=2
            )
            return None
        return cls(iter_eval_records(path), **kw)

    def shared_count(self, text: str, tok: np.ndarray | None = None) -> int:
        if tok is None:
            tok = token_hashes(text)
        return self.shingles.shared(ngram_hashes(tok, self.ngram, salt=1, unique=False))

    def check(self, text: str, tok: np.ndarray | None = None) -> str | None:
        """Return a drop reason if ``text`` overlaps the evaluation sets, else None."""
        if self.entry_docs:
            names = {m for m in DEF_RE.findall(text) if m in self.entry_docs}
            if names:
                norm = normalize_words(text)
                for name in names:
                    if any(s in norm for s in self.entry_docs[name]):
                        self.dropped += 1
                        return "eval_entry_point"
        if self.shared_count(text, tok) > self.max_shared:
            self.dropped += 1
            return "eval_ngram_overlap"
        return None
