"""``tokenizer.json`` through the `tokenizers` library, with special-token ids read from the checkpoint.

Special ids come from config.json (pad/eos/bos and our ``dgcomplete`` section) or, failing that, from the
tokenizer's own added tokens by name — never hard-coded, so Google's tokenizer and ours both work.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cached_property
from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer

from .config import ModelConfig


class TokenizerError(RuntimeError):
    pass


class Tokenizer:
    def __init__(self, tok: HFTokenizer, cfg: ModelConfig) -> None:
        self.tok = tok
        self.vocab_size = tok.get_vocab_size(with_added_tokens=True)
        self.pad_id = cfg.pad_token_id
        self.bos_id = cfg.bos_token_id
        self.eos_ids = set(cfg.eos_token_ids)
        d = cfg.diffusion
        self.fill_id = d.fill_token_id if d.fill_token_id is not None else tok.token_to_id("<fill>")
        self.mask_id = d.mask_token_id if d.mask_token_id is not None else tok.token_to_id("<mask>")
        self.sep_id = d.sep_token_id if d.sep_token_id is not None else tok.token_to_id("<sep>")
        self.special_ids = {i for i in (self.pad_id, self.bos_id, self.fill_id, self.mask_id, self.sep_id) if i is not None}
        self.special_ids |= self.eos_ids
        self._healing_cache: dict[str, list[int]] = {}

    @classmethod
    def from_dir(cls, root: Path, cfg: ModelConfig) -> Tokenizer:
        path = root / "tokenizer.json"
        if not path.exists():
            raise TokenizerError(f"{root.name}: tokenizer.json is missing")
        try:
            tok = HFTokenizer.from_file(str(path))
        except Exception as e:  # the library raises plain Exception subclasses for bad files
            raise TokenizerError(f"tokenizer.json: cannot be parsed ({e})") from e
        return cls(tok, cfg)

    @classmethod
    def from_file(cls, path: str | Path, cfg: ModelConfig) -> Tokenizer:
        return cls(HFTokenizer.from_file(str(path)), cfg)

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and each token's (start, end) code-point span in ``text`` (tokens that split a multi-byte
        character share it: their spans overlap)."""
        enc = self.tok.encode(text, add_special_tokens=False)
        return list(enc.ids), [(int(a), int(b)) for a, b in enc.offsets]

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch(texts, add_special_tokens=False)]

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode([i for i in ids if i not in self.special_ids], skip_special_tokens=False)

    @cached_property
    def pieces(self) -> list[str]:
        """Decoded text of every token (partial UTF-8 shows as U+FFFD), for token healing."""
        return [self.tok.decode([i], skip_special_tokens=False) for i in range(self.vocab_size)]

    @cached_property
    def _sorted_pieces(self) -> tuple[list[str], list[int], dict[str, list[int]]]:
        """The non-special pieces in text order with their ids, and the ids of each piece's text."""
        order = sorted((p, i) for i, p in enumerate(self.pieces) if i not in self.special_ids and p)
        by_text: dict[str, list[int]] = {}
        for p, i in order:
            by_text.setdefault(p, []).append(i)
        return [p for p, _ in order], [i for _, i in order], by_text

    def ids_starting_with(self, text: str) -> list[int]:
        """Tokens whose text extends ``text`` (or is a prefix of it): candidates for healing a partial word.

        Those extending it are one range of the pieces in text order, those it extends are looked up by its
        prefixes: no vocabulary scan per word (the sampler spells a healed word piece by piece, one call per
        piece). Cached per word: typing through ``ret``, ``retu``, ``retur`` asks again and again.
        """
        hit = self._healing_cache.get(text)
        if hit is None:
            keys, ids, by_text = self._sorted_pieces
            lo = bisect_left(keys, text)
            hi = bisect_left(keys, text + "\U0010ffff", lo)
            hit = sorted([*ids[lo:hi], *(i for k in range(1, len(text)) for i in by_text.get(text[:k], ()))])
            if len(self._healing_cache) > 4096:
                self._healing_cache.clear()
            self._healing_cache[text] = hit
        return hit
