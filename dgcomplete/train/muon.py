"""Muon for the 2-D weight matrices, AdamW for the rest (embedding / tied head, norms, scalars).

Muon (Keller Jordan's, as used by modded-nanogpt and the OpenAI Parameter Golf baseline): SGD momentum with
Nesterov, then each matrix's update is replaced by the nearest semi-orthogonal matrix, computed by a quintic
Newton-Schulz iteration (5 steps, coefficients 3.4445, -4.7750, 2.0315, bf16 on an accelerator), and scaled by
sqrt(max(1, rows / cols)). Matrices of one shape are orthogonalised together (one batched matmul per iteration
instead of one per matrix: on a GPU the optimizer step is a few dozen kernels, not hundreds).

:class:`Hybrid` holds both optimizers behind one ``param_groups`` / ``step`` / ``zero_grad`` so the trainer's
schedule scales every group: each group keeps its peak in ``group["peak"]`` and the trainer sets
``lr = peak * factor``.
"""

from __future__ import annotations

from collections import defaultdict

import torch
from torch import Tensor, nn

NS_COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz(g: Tensor, steps: int = 5, eps: float = 1e-7) -> Tensor:
    """Approximately U V^T for g = U S V^T (batched over leading dims): the orthogonalised update."""
    a, b, c = NS_COEFFS
    x = g.to(torch.bfloat16) if g.is_cuda else g.float()
    tall = x.size(-2) > x.size(-1)
    if tall:
        x = x.mT
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + eps)
    for _ in range(steps):
        m = x @ x.mT
        x = a * x + (b * m + c * m @ m) @ x
    if tall:
        x = x.mT
    return x


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 0.02, momentum: float = 0.95, nesterov: bool = True, ns_steps: int = 5,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov, ns_steps=ns_steps,
                                      weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):  # noqa: ARG002 - the Optimizer signature
        for group in self.param_groups:
            by_shape: dict[tuple[int, ...], list[tuple[Tensor, Tensor]]] = defaultdict(list)
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if "momentum_buffer" not in st:
                    st["momentum_buffer"] = torch.zeros_like(p.grad)
                buf = st["momentum_buffer"]
                buf.lerp_(p.grad, 1 - group["momentum"])
                upd = p.grad.lerp(buf, group["momentum"]) if group["nesterov"] else buf
                by_shape[tuple(p.shape)].append((p, upd))
            for shape, items in by_shape.items():
                ortho = newton_schulz(torch.stack([u for _, u in items]), group["ns_steps"])
                scale = max(1.0, shape[0] / shape[1]) ** 0.5
                for (p, _), o in zip(items, ortho.unbind(0), strict=True):
                    if group["weight_decay"]:
                        p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(o.to(p.dtype), alpha=-group["lr"] * scale)


class Hybrid:
    """Several optimizers used as one (the trainer's schedule loop, zero_grad, step, state save/load)."""

    def __init__(self, optimizers: list[torch.optim.Optimizer]) -> None:
        self.optimizers = optimizers

    @property
    def param_groups(self) -> list[dict]:
        return [g for o in self.optimizers for g in o.param_groups]

    @property
    def state(self) -> dict:
        out: dict = {}
        for o in self.optimizers:
            out.update(o.state)
        return out

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.optimizers:
            o.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for o in self.optimizers:
            o.step()


def is_muon_param(name: str, p: Tensor) -> bool:
    """Hidden 2-D matrices: attention and MLP projections (not the embedding, which is also the output head)."""
    return p.ndim == 2 and "embed_tokens" not in name and "lm_head" not in name


def build_optimizer(model: nn.Module, kind: str, *, lr: float, muon_lr: float = 0.02, weight_decay: float = 0.05,
                    betas: tuple[float, float] = (0.9, 0.98), momentum: float = 0.95) -> Hybrid:
    """``kind`` "adamw": AdamW everywhere (decay on matrices, as before); "muon": Muon on hidden matrices and
    AdamW (lr ``lr``) on embedding, norms and scalars."""
    muon, decay, no_decay = [], [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if kind == "muon" and is_muon_param(n, p):
            muon.append(p)
        elif p.ndim < 2 or "norm" in n:
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [{"params": decay, "weight_decay": weight_decay, "peak": lr},
              {"params": no_decay, "weight_decay": 0.0, "peak": lr}]
    opts: list[torch.optim.Optimizer] = [torch.optim.AdamW([g for g in groups if g["params"]], lr=lr, betas=betas,
                                                           eps=1e-8)]
    if muon:
        opts.append(Muon([{"params": muon, "peak": muon_lr}], lr=muon_lr, momentum=momentum))
    return Hybrid(opts)
