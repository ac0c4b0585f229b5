"""Models shipped inside the package (loaded by default, no download)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
DEFAULT = "dg-code-tiny"


def default_model_path() -> Path:
    return HERE / DEFAULT


def shipped() -> list[str]:
    return sorted(p.name for p in HERE.iterdir() if (p / "config.json").exists())
