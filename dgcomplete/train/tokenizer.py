"""Byte-level BPE tokenizer trained on the code corpus.

    python -m dgcomplete.train.tokenizer --corpus data/corpus --vocab-size 8192 --out data/tokenizer.json

Special tokens get the fixed ids 0..5 (``SPECIAL_TOKENS``).  Pre-tokenization is the GPT-2
byte-level regex (``add_prefix_space=False``), whose ``\\s+(?!\\S)`` branch keeps newline +
indentation runs together so BPE learns them as single tokens; the ByteLevel decoder makes
``decode(encode(x)) == x`` for any string (tabs, CRLF, unicode).  The training text is
sampled by language: Python ~55 %, JavaScript + TypeScript ~20 %, the other languages share
the rest.  A deterministic ~2 % of files is held out and used to report bytes/token.
"""

from __future__ import annotations

import argparse
import json
import random
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

SPECIAL_TOKENS = ["<pad>", "<eos>", "<bos>", "<fill>", "<mask>", "<sep>"]
PAD_ID, EOS_ID, BOS_ID, FILL_ID, MASK_ID, SEP_ID = range(len(SPECIAL_TOKENS))

GROUP_SHARES = {"python": 0.55, "jsts": 0.20, "other": 0.25}
# The GPT-2 byte-level split regex, adapted to code: no English contractions ('s would
# split 'self'), and a tab may prefix a word / number / punctuation run just like a space,
# so tab-indented code (Go, C, Java) gets "\n\t" + "\treturn" instead of "\n", "\t",
# "return".  Newline + indentation runs stay together via \s+(?!\S).
CODE_SPLIT_REGEX = r"[ \t]?\p{L}+|[ \t]?\p{N}+|[ \t]?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
HELDOUT_MOD = 50  # 1 file in 50 (by hash of source+path) is held out


def lang_group(lang: str) -> str:
    if lang == "python":
        return "python"
    if lang in ("javascript", "typescript"):
        return "jsts"
    return "other"


def is_heldout(rec: dict) -> bool:
    key = f"{rec.get('source', '')}|{rec.get('path', '')}".encode()
    return zlib.crc32(key) % HELDOUT_MOD == 0


def load_corpus(corpus_dir: Path) -> dict[str, list[dict]]:
    by_lang: dict[str, list[dict]] = {}
    for f in sorted(Path(corpus_dir).glob("*.jsonl")):
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                by_lang.setdefault(rec["lang"], []).append(rec)
    return by_lang


def sample_texts(
    by_lang: dict[str, list[dict]], budget_bytes: int, seed: int = 0
) -> tuple[list[str], dict[str, int]]:
    """Training texts (held-out files excluded), sampled to the language-group shares."""
    rng = random.Random(seed)
    pools = {lang: [r["text"] for r in recs if not is_heldout(r)] for lang, recs in by_lang.items()}
    sizes = {
        lang: sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) for lang, texts in pools.items()
    }
    groups: dict[str, list[str]] = {}
    for lang in pools:
        groups.setdefault(lang_group(lang), []).append(lang)
    present = {g: s for g, s in GROUP_SHARES.items() if g in groups}
    norm = sum(present.values())
    budgets: dict[str, float] = {}
    for g, share in present.items():
        gbud = budget_bytes * share / norm
        langs = groups[g]
        if g == "other":
            # equal split, what a small language can't use goes to the others
            rem = sorted(langs, key=lambda lang: sizes[lang])
            left = gbud
            for i, lang in enumerate(rem):
                b = min(sizes[lang], left / (len(rem) - i))
                budgets[lang] = b
                left -= b
        else:
            tot = sum(sizes[lang] for lang in langs) or 1
            for lang in langs:
                budgets[lang] = gbud * sizes[lang] / tot
    out: list[str] = []
    used: dict[str, int] = {}
    for lang in sorted(pools):
        texts = pools[lang][:]
        rng.shuffle(texts)
        n = 0
        for t in texts:
            if n >= budgets.get(lang, 0):
                break
            out.append(t)
            n += len(t.encode("utf-8", "surrogatepass"))
        used[lang] = n
    rng.shuffle(out)
    return out, used


def new_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CODE_SPLIT_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def train_on_texts(texts: list[str], vocab_size: int) -> Tokenizer:
    tok = new_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )

    def it() -> Iterator[str]:
        yield from texts

    tok.train_from_iterator(it(), trainer=trainer, length=len(texts))
    for i, s in enumerate(SPECIAL_TOKENS):
        got = tok.token_to_id(s)
        if got != i:
            raise RuntimeError(f"special token {s} got id {got}, expected {i}")
    return tok


def bytes_per_token(
    tok: Tokenizer, by_lang: dict[str, list[dict]], max_bytes: int = 2_000_000
) -> dict[str, float]:
    res = {}
    for lang, recs in sorted(by_lang.items()):
        texts, n = [], 0
        for r in recs:
            if is_heldout(r):
                texts.append(r["text"])
                n += len(r["text"].encode("utf-8", "surrogatepass"))
                if n >= max_bytes:
                    break
        if not texts:
            continue
        ntok = sum(len(e.ids) for e in tok.encode_batch(texts))
        res[lang] = round(n / max(ntok, 1), 3)
    return res


def train_tokenizer(
    corpus_dir: str | Path,
    vocab_size: int = 8192,
    out_path: str | Path = "data/tokenizer.json",
    budget_bytes: int = 40_000_000,
    seed: int = 0,
    verbose: bool = True,
) -> Tokenizer:
    """Train the byte-level BPE on ``corpus_dir/*.jsonl`` and save it to ``out_path``."""
    t0 = time.time()
    by_lang = load_corpus(Path(corpus_dir))
    if not by_lang:
        raise FileNotFoundError(f"no *.jsonl in {corpus_dir}")
    texts, used = sample_texts(by_lang, budget_bytes, seed)
    if verbose:
        tot = sum(used.values()) or 1
        print(
            "training sample:",
            ", ".join(f"{k} {v / 1e6:.1f}MB ({100 * v / tot:.0f}%)" for k, v in used.items()),
            flush=True,
        )
    tok = train_on_texts(texts, vocab_size)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(out_path))
    if verbose:
        print(f"trained vocab {tok.get_vocab_size()} in {time.time() - t0:.0f}s -> {out_path}", flush=True)
        bpt = bytes_per_token(tok, by_lang)
        print("held-out bytes/token:", json.dumps(bpt), flush=True)
    return tok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=Path("data/corpus"))
    ap.add_argument("--vocab-size", type=int, default=8192)
    ap.add_argument("--out", type=Path, default=Path("data/tokenizer.json"))
    ap.add_argument("--sample-mb", type=float, default=40.0, help="training sample size in MB")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    train_tokenizer(args.corpus, args.vocab_size, args.out, int(args.sample_mb * 1e6), args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
