"""Embedded-model design check: dense MLP vs the DiffusionGemma MoE block at our small scale (CPU, 1 thread).

    python -m bench.moe_vs_dense

Same shape (d=192, 6 layers); the MoE variant adds 4 experts (top-2) of width ff/4 next to the dense MLP, as
in the reference layer. Prints the minimum over a few runs of one training step (batch 16 x 240 tokens) and
one decoder step (canvas 40, 24 scored positions).
"""

from __future__ import annotations

import time

import torch

from dgcomplete.model import DiffusionGemma, ListCache
from dgcomplete.train.train import small_config


def measure(moe: bool) -> tuple[float, float, int]:
    cfg = small_config(8192, moe=moe)
    m = DiffusionGemma(cfg)
    m.init_weights()
    x = torch.randint(6, 8000, (16, 192))
    c = torch.randint(6, 8000, (16, 48))
    opt = torch.optim.AdamW(m.parameters())
    train = []
    for _ in range(6):
        t = time.perf_counter()
        cache = ListCache(cfg.num_hidden_layers)
        lm = m.encode(x, cache, logits="all")
        out = m.decode(c, cache).logits
        (lm.float().mean() + out.mean()).backward()
        opt.step()
        opt.zero_grad()
        train.append(time.perf_counter() - t)
    decode = []
    with torch.inference_mode():
        cache = m.new_cache()
        m.encode(x[:1], cache)
        for _ in range(15):
            t = time.perf_counter()
            m.decode(c[:1, :40], cache, logits_slice=slice(0, 24))
            decode.append(time.perf_counter() - t)
    return min(train[1:]), min(decode[3:]), m.num_parameters()


def main() -> None:
    torch.set_num_threads(1)
    for moe in (False, True):
        tr, de, n = measure(moe)
        print(f"{'moe' if moe else 'dense'}: train step {tr * 1e3:.0f} ms ({16 * 240 / tr:.0f} tok/s), "
              f"decode step {de * 1e3:.2f} ms, non-embedding params {n / 1e6:.2f}M")


if __name__ == "__main__":
    main()
