"""Print the --model path the editor tests use when DG_MODEL is unset: a tiny real model trained once (about
15 s on an idle machine) into editors/.cache/memo-model by tests/helpers.py.

The tests type the start of lines this memorizer has seen (tests/helpers.py MEMO_TEXT), so its ghost text is
predictable. The embedded model's is not (dg-code-tiny answers nothing for the tests' `return mess`, and it
changes with every model shipped), so it is only used when asked for: DG_MODEL= (empty) in make's environment.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    out = ROOT / "editors" / ".cache" / "memo-model"
    if not (out / "config.json").exists():
        from tests.helpers import train_memorizer

        train_memorizer(out)
    print(out)


if __name__ == "__main__":
    main()
