"""The one settings model: what a user may set, its bounds, and whether it can change while running.

Sent as ``initializationOptions`` or ``workspace/didChangeConfiguration`` (flat or under ``"dgcomplete"``), in
camelCase or snake_case. Values are validated once, here, with a message that names the key, the value and
what was expected; a bad value is refused and the previous one kept (never coerced: ``"false"`` is not
false). :meth:`dgcomplete.engine.Engine.configure` applies the result; the few keys that cannot change in a
running daemon (``RESTART``) are reported instead of silently ignored.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

CONTEXT_SOURCES = ("diffusion", "document", "workspace", "causal")
COMPLETION_ITEMS = ("auto", "always", "never")
BACKENDS = ("local", "openai")
RESTART = frozenset({"model"})  # the weights are loaded once per process


def _int(lo: int, hi: int, *, optional: bool = False) -> dict[str, Any]:
    return {"kind": "int", "lo": lo, "hi": hi, "optional": optional}


# key -> how to read it; the attrs class below holds the values
SPEC: dict[str, dict[str, Any]] = {
    "model": {"kind": "str", "optional": True},
    "max_lines": _int(1, 200),
    "max_tokens": _int(1, 256),
    "steps": _int(1, 256, optional=True),
    "threads": _int(1, 256, optional=True),
    "enabled_languages": {"kind": "strlist", "optional": True},
    "completion_items": {"kind": "choice", "choices": COMPLETION_ITEMS},
    "syntax_renoise": {"kind": "bool"},
    "backend": {"kind": "choice", "choices": BACKENDS},
    "remote": {"kind": "dict"},
    "fallback_to_local": {"kind": "bool"},
    "rewrite_fraction": {"kind": "float", "lo": 0.0, "hi": 1.0},
    "rewrite_variants": _int(1, 5),
    "repair_rounds": _int(0, 32),
    "hole_tokens": _int(1, 256),
    "min_confidence": {"kind": "float", "lo": 0.0, "hi": 1.0, "optional": True},
    "context_sources": {"kind": "strlist", "optional": True, "choices": CONTEXT_SOURCES},
    "seed": _int(0, 2**31 - 1, optional=True),
    "workspace_index_lines": _int(0, 2_000_000),
}


@attrs.define
class Settings:
    """Values of one LSP session (see SPEC for bounds, README "Settings" for meanings)."""

    model: str | None = None
    max_lines: int = 8
    max_tokens: int = 48
    steps: int | None = None  # None: the model's generation_config.json
    threads: int | None = None  # None: measured at start-up
    enabled_languages: list[str] | None = None
    completion_items: str = "auto"  # "auto": only for clients without inline completion; "always"; "never"
    syntax_renoise: bool = True
    backend: str = "local"
    remote: dict[str, Any] = attrs.field(factory=dict)
    fallback_to_local: bool = True
    rewrite_fraction: float = 0.5  # share of the selection's tokens renoised by Rewrite selection
    rewrite_variants: int = 3  # Rewrite selection actions offered (one seed each)
    repair_rounds: int = 6  # denoising rounds Repair syntax may spend
    hole_tokens: int = 48  # tokens a hole may be filled with
    min_confidence: float | None = None  # the gate (gate.py); None: the threshold shipped with the model's gate
    context_sources: list[str] | None = None  # None: all of CONTEXT_SOURCES
    seed: int | None = None  # None: sampled rows (Invoked requests) vary from request to request; a number repeats
    workspace_index_lines: int = 50_000  # lines of the workspace folders' files read for retrieval; 0: none

    def update(self, raw: Any) -> tuple[list[str], list[str]]:
        """Apply a settings object; returns (keys that changed, messages about refused keys/values)."""
        values, errors = parse(raw)
        changed = [k for k, v in values.items() if getattr(self, k) != v]
        for k, v in values.items():
            setattr(self, k, v)
        return changed, errors


def _norm(key: str) -> str:
    return key.replace("_", "").lower()


_NAMES = {_norm(k): k for k in SPEC}


def _value(key: str, spec: dict[str, Any], v: Any) -> Any:
    kind = spec["kind"]
    if v is None and spec.get("optional"):
        return None
    if kind == "bool":
        if isinstance(v, bool):
            return v
        raise ValueError("expected true or false")
    if kind == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"expected an integer in {spec['lo']}..{spec['hi']}")
        return max(spec["lo"], min(spec["hi"], v))  # out of range: clamped (a typo costs speed, not a hang)
    if kind == "float":
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"expected a number in {spec['lo']}..{spec['hi']}")
        return max(spec["lo"], min(spec["hi"], float(v)))
    if kind == "str":
        if isinstance(v, str):
            return v
        raise ValueError("expected a string")
    if kind == "choice":
        if v in spec["choices"]:
            return v
        raise ValueError(f"expected one of {', '.join(spec['choices'])}")
    if kind == "strlist":
        if not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise ValueError("expected a list of strings")
        bad = [x for x in v if "choices" in spec and x not in spec["choices"]]
        if bad:
            raise ValueError(f"unknown {bad}; expected some of {', '.join(spec['choices'])}")
        return list(v)
    if kind == "dict":
        if isinstance(v, dict):
            return dict(v)
        raise ValueError("expected an object")
    raise AssertionError(kind)


def parse(raw: Any) -> tuple[dict[str, Any], list[str]]:
    """Validated values by field name, and one message per refused key (unknown, or a bad value)."""
    if not isinstance(raw, dict):
        return {}, ([] if raw is None else [f"settings must be an object, got {type(raw).__name__}"])
    inner = raw.get("dgcomplete", raw)
    if not isinstance(inner, dict):
        return {}, [f"settings.dgcomplete must be an object, got {type(inner).__name__}"]
    values: dict[str, Any] = {}
    errors: list[str] = []
    for k, v in inner.items():
        key = _NAMES.get(_norm(str(k)))
        if key is None:
            errors.append(f"unknown setting {k!r} ignored")
            continue
        try:
            values[key] = _value(key, SPEC[key], v)
        except ValueError as e:
            errors.append(f"setting {k!r}: {e}, got {v!r}"[:200] + " (kept the previous value)")
    return values, errors
