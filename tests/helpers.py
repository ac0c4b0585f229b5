"""Small real artefacts for tests: tokenizers and random-weight checkpoints written to disk."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

SPECIALS = ["<pad>", "<eos>", "<bos>", "<fill>", "<mask>", "<sep>"]


def write_char_tokenizer(path: Path, vocab_size: int) -> None:
    """A character-level tokenizer of exactly ``vocab_size`` tokens (specials first)."""
    chars = [chr(c) for c in range(32, 127)][: vocab_size - len(SPECIALS)]
    vocab = {t: i for i, t in enumerate(SPECIALS + chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok.add_special_tokens(SPECIALS)
    tok.save(str(path))


def write_byte_tokenizer(path: Path, extra_merges_text: str = "", vocab_size: int = 300) -> None:
    """A byte-level BPE (lossless on any text) with our special tokens at ids 0-5."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    text = extra_merges_text or "def f(x):\n    return x + 1\n" * 20
    tok.train_from_iterator([text], trainer)
    tok.save(str(path))


def make_tiny_checkpoint(out: Path, *, seed: int = 0, moe: bool = True, mode: str = "uniform", vocab: int = 300) -> Path:
    """A random-weight DiffusionGemma-architecture checkpoint in our format (config, weights, tokenizer)."""
    import torch

    from dgcomplete.model import DiffusionGemma, ModelConfig, save_checkpoint
    from dgcomplete.model.config import DiffusionOptions, RopeSpec

    out.mkdir(parents=True, exist_ok=True)
    write_byte_tokenizer(out / "tokenizer.json", vocab_size=vocab)
    n_vocab = Tokenizer.from_file(str(out / "tokenizer.json")).get_vocab_size()
    cfg = ModelConfig(
        vocab_size=n_vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        layer_types=["sliding_attention", "full_attention"], layer_head_dim=[16, 16], layer_kv_heads=[1, 1],
        rope={"sliding_attention": RopeSpec(10_000.0), "full_attention": RopeSpec(1e6, 0.25, "proportional")},
        sliding_window=64, num_experts=4 if moe else 0, top_k_experts=2 if moe else 0,
        moe_intermediate_size=16 if moe else 0, canvas_length=32,
        diffusion=DiffusionOptions(mode=mode, fill_token_id=3, mask_token_id=4, sep_token_id=5),
    )
    model = DiffusionGemma(cfg)
    model.init_weights(seed=seed)
    with torch.no_grad():
        model.embed_tokens.weight.mul_(5)  # sharper random logits so sampling decisions are exercised
    save_checkpoint(model, out, tokenizer_json=out / "tokenizer.json")
    meta = json.loads((out / "config.json").read_text())
    assert meta["dgcomplete"]["mode"] == mode
    return out


MEMO_TEXT = '''def add(a, b):
    return a + b


def greet(name):
    message = "hello " + name
    print(message)
    return message


class Counter:
    def __init__(self):
        self.count = 0

    def increment(self):
        self.count += 1
        return self.count
'''


def storm_memo_sources(copies: int = 8) -> list[tuple[str, str, str]]:
    """The memorizer's documents for a typing storm: MEMO_TEXT twice in each, in ``copies`` documents.

    A document's change cancels its request in flight, so in a storm only requests that finish inside a
    typist's pause come back with items: with one memo document among five and no pauses that was 0 to 8 of
    248 (a matter of timing; CI failed on 0). Every retyped line here also stands verbatim in the other half
    (a retrieval draft, whatever the tiny model guesses), and eight documents typed with pauses give the
    storm's stale and fit checks some 20-40 results to check.
    """
    return [(f"memo{i}.py", "python", MEMO_TEXT + "\n\n" + MEMO_TEXT) for i in range(copies)]


# the canvases the engine builds for the memorizer (canvas 48): free slots per span kind from syntax.plan
# (rest of line 24, line 32, +2 while a word is typed; statement/block capped at 36 = 48 less the suffix head,
# LocalInfiller.head_size = 48 // 4 = 12 tokens). A tiny model knows only the positions it was trained at.
FREE_SLOTS = (24, 26, 32, 34, 36)
MEMO_HEAD = 12


def train_memorizer(out: Path, text: str = MEMO_TEXT, *, steps: int = 300, seed: int = 0, mode: str = "mask") -> Path:
    """A tiny model trained (for real, a few seconds on CPU) to infill lines of ``text``.

    Gives end-to-end tests a real checkpoint whose completions are predictable: it has seen nothing else.
    """
    import torch

    from dgcomplete.model import DiffusionGemma, save_checkpoint
    from dgcomplete.model import Tokenizer as DgTokenizer
    from dgcomplete.train.data import ExampleSampler
    from dgcomplete.train.train import losses, small_config

    out.mkdir(parents=True, exist_ok=True)
    write_byte_tokenizer(out / "tokenizer.json", extra_merges_text=text * 5, vocab_size=400)
    vocab = Tokenizer.from_file(str(out / "tokenizer.json")).get_vocab_size()
    cfg = small_config(vocab, d=64, layers=2, heads=2, ff=128, mode=mode)
    cfg.canvas_length = 48
    tok = DgTokenizer.from_file(out / "tokenizer.json", cfg)
    torch.manual_seed(seed)
    model = DiffusionGemma(cfg)
    model.init_weights(seed=seed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    sampler = ExampleSampler([text], tok, prefix_tokens=64, suffix_tokens=MEMO_HEAD, seed=seed, kinds={"line": 1.0})
    g = torch.Generator().manual_seed(seed)
    for step in range(steps):
        batch = sampler.batch(16, FREE_SLOTS[step % len(FREE_SLOTS)])
        r = losses(model, batch, mode, g)
        loss = r["dec"] + 0.5 * r["lm"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    save_checkpoint(model, out, tokenizer_json=out / "tokenizer.json", generation={"max_denoising_steps": 12})
    # a test model's own gate: open (threshold 0), so the editor and storm tests see what it memorised
    (out / "gate.json").write_text(json.dumps({"weights": {}, "bias": 0.0, "threshold": 0.0,
                                               "fitted_on": "none: a test memorizer, gate open"}))
    return out


def train_storm_model(out: Path, steps: int = 150) -> Path:
    """train_memorizer on one torch thread (seconds; two threads on a busy box take minutes)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_memorizer(out, steps=steps)
    finally:
        torch.set_num_threads(threads)


CHECKPOINT_DAMAGES = ("truncated", "garbage-weights", "no-weights", "no-tokenizer", "bad-tokenizer", "bad-config",
                      "wrong-config", "empty-dir")


def damage_checkpoint(src: Path, dst: Path, damage: str) -> Path:
    """A copy of the checkpoint at ``src`` broken one way (see CHECKPOINT_DAMAGES)."""
    import re
    import shutil

    shutil.copytree(src, dst)
    w = dst / "model.safetensors"
    if damage == "truncated":
        data = w.read_bytes()
        w.write_bytes(data[: len(data) // 3])
    elif damage == "garbage-weights":
        w.write_bytes(b"\x00\xff" * 5000)
    elif damage == "no-weights":
        w.unlink()
    elif damage == "no-tokenizer":
        (dst / "tokenizer.json").unlink()
    elif damage == "bad-tokenizer":
        (dst / "tokenizer.json").write_text("{]")
    elif damage == "bad-config":
        (dst / "config.json").write_text("{not json")
    elif damage == "wrong-config":  # parses, but the tensors do not fit
        text = (dst / "config.json").read_text()
        (dst / "config.json").write_text(re.sub(r'"hidden_size": \d+', '"hidden_size": 48', text))
    elif damage == "empty-dir":
        shutil.rmtree(dst)
        dst.mkdir()
    else:
        raise ValueError(damage)
    return dst
