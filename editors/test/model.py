"""Print the --model path the editor tests should use: empty for the embedded model when it has shipped,
else a tiny real model trained once (about 15 s) into editors/.cache/memo-model by tests/helpers.py."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    if (ROOT / "dgcomplete" / "models" / "dg-code-tiny" / "config.json").exists():
        print("")
        return
    out = ROOT / "editors" / ".cache" / "memo-model"
    if not (out / "config.json").exists():
        from tests.helpers import train_memorizer

        train_memorizer(out)
    print(out)


if __name__ == "__main__":
    main()
