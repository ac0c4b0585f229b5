"""Real-editor tests: they drive the Makefile targets in editors/ (which install what they need)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"


@pytest.fixture(scope="session")
def model_dir() -> str:
    """A checkpoint dir for --model: the memorizer of editors/test/model.py (its ghost text is predictable)."""
    out = subprocess.run([sys.executable, str(EDITORS / "test" / "model.py")], cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=900)
    return out.stdout.strip()


def make(*targets: str, timeout: int = 1800, **env: str) -> subprocess.CompletedProcess:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    return subprocess.run(["make", "--no-print-directory", "-C", str(EDITORS), *targets, f"PY={sys.executable}"],
                          cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout)


def tail(p: subprocess.CompletedProcess, n: int = 60) -> str:
    return "\n".join((p.stdout + "\n" + p.stderr).splitlines()[-n:])
