"""Realistic typing sessions: re-type regions of real files character by character, like a person in an editor.

A session starts from a file with some lines removed and the cursor at the end of the line before them; the
typist presses Enter (the editor auto-indents), fixes the indentation with Tab/Backspace, types each line
(the editor auto-closes brackets whose closer belongs to the same line and the typist types over them,
closing brackets dedent electrically), makes the odd typo and erases it, and pauses to think between lines.

Every keystroke is an edit on character offsets of the document as it is *before* the keystroke
(``start``, ``end``, ``text``) plus the cursor after it and a delay before it; the generator simulates the
document, so sessions are self-consistent by construction.  Pure Python, deterministic for a seed.

    python -m bench.typing_sessions [--seconds 60] [--seed 0]     # prints a summary of the sessions
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass, field

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = set(OPENERS.values())
NEIGHBOURS = "qwertyuiopasdfghjklzxcvbnm"


@dataclass
class Key:
    delay: float  # seconds since the previous keystroke
    start: int  # edit range (character offsets into the document before this keystroke)
    end: int
    text: str
    cursor: int  # cursor offset after the keystroke
    kind: str  # char | enter | tab | backspace | overtype | cut | electric | typo


@dataclass
class Session:
    name: str
    language: str
    initial: str  # the text opened with didOpen
    keys: list[Key] = field(default_factory=list)
    final: str = ""

    @property
    def seconds(self) -> float:
        return sum(k.delay for k in self.keys)

    @property
    def typed_chars(self) -> int:
        return sum(1 for k in self.keys if k.kind in ("char", "overtype", "electric"))


@dataclass
class Pace:
    """Inter-key timing (seconds): a log-normal base around ``median`` with thinking pauses."""

    median: float = 0.11
    sigma: float = 0.35
    line_pause: tuple[float, float] = (0.3, 1.2)  # after Enter, before typing the next line
    pause_prob: float = 0.03  # a mid-line pause
    pause: tuple[float, float] = (0.5, 2.0)
    typo_prob: float = 0.02
    scale: float = 1.0  # multiplies every delay (``< 1`` replays faster, for smoke tests)

    def key(self, rng: random.Random, prev: str = "") -> float:
        d = self.median * math.exp(rng.gauss(0.0, self.sigma))
        if prev in " .,(:;":
            d *= 1.3
        if rng.random() < self.pause_prob:
            d += rng.uniform(*self.pause)
        return min(max(d, 0.04), 2.5) * self.scale

    def line(self, rng: random.Random) -> float:
        return rng.uniform(*self.line_pause) * self.scale


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def indent_unit(text: str, language: str) -> str:
    if language == "go":
        return "\t"
    counts: dict[int, int] = {}
    prev = 0
    for line in text.split("\n")[:400]:
        if not line.strip():
            continue
        if line.startswith("\t"):
            return "\t"
        w = len(indent_of(line))
        if w > prev:
            counts[w - prev] = counts.get(w - prev, 0) + 1
        prev = w
    if counts:
        step = max(counts, key=lambda k: (counts[k], -k))
        if 1 < step <= 8:
            return " " * step
    return "  " if language == "javascript" else "    "


def matching_closers(line: str) -> dict[int, int]:
    """Index of each opener in ``line`` -> index of its closer on the same line (strings skipped)."""
    out: dict[int, int] = {}
    stack: list[int] = []
    quote = ""
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
        elif c == "#" or line.startswith("//", i):
            break
        elif c in OPENERS:
            stack.append(i)
        elif c in CLOSERS and stack and OPENERS[line[stack[-1]]] == c:
            out[stack.pop()] = i
        i += 1
    return out


class Typist:
    """Types target lines into a simulated document, recording keystrokes."""

    def __init__(self, text: str, cursor: int, language: str, pace: Pace, rng: random.Random) -> None:
        self.text = text
        self.cursor = cursor
        self.lang = language
        self.unit = indent_unit(text, language)
        self.pace = pace
        self.rng = rng
        self.keys: list[Key] = []

    def _edit(self, start: int, end: int, new: str, delay: float, kind: str, cursor: int | None = None) -> None:
        self.text = self.text[:start] + new + self.text[end:]
        self.cursor = start + len(new) if cursor is None else cursor
        self.keys.append(Key(round(delay, 4), start, end, new, self.cursor, kind))

    def _line_start(self) -> int:
        return self.text.rfind("\n", 0, self.cursor) + 1

    def _auto_indent(self) -> str:
        line = self.text[self._line_start() : self.cursor]
        ind = indent_of(line)
        code = line.rstrip()
        if code.endswith(("{", "(", "[")) or (self.lang == "python" and code.endswith(":")):
            ind += self.unit
        return ind

    def enter(self) -> None:
        ls = self._line_start()
        ind = self._auto_indent()
        delay = self.pace.key(self.rng) + 0.1 * self.pace.scale
        if not self.text[ls : self.cursor].strip():  # editors drop auto-indent left on an empty line
            self._edit(ls, self.cursor, "\n" + ind, delay, "enter")
        else:
            self._edit(self.cursor, self.cursor, "\n" + ind, delay, "enter")

    def fix_indent(self, target: str, first_char: str) -> None:
        cur = self.text[self._line_start() : self.cursor]
        if cur == target:
            return
        if first_char in CLOSERS and cur.startswith(target):
            return  # the closer dedents electrically when typed
        if target.startswith(cur):
            extra = target[len(cur) :]
            step = self.unit if extra and len(extra) % len(self.unit) == 0 and extra == self.unit * (
                len(extra) // len(self.unit)) else extra[:1]
            while extra:
                n = len(step) if extra.startswith(step) else 1
                self._edit(self.cursor, self.cursor, extra[:n], self.pace.key(self.rng), "tab")
                extra = extra[n:]
        elif cur.startswith(target):
            excess = len(cur) - len(target)
            step = len(self.unit) if excess % len(self.unit) == 0 else 1
            while excess > 0:
                self._edit(self.cursor - step, self.cursor, "", self.pace.key(self.rng), "backspace")
                excess -= step
        else:  # mixed tabs/spaces: select the indentation and retype it
            self._edit(self._line_start(), self.cursor, target, self.pace.key(self.rng), "tab")

    def type_line(self, line: str) -> None:
        """Type ``line`` (its indentation already fixed) at the cursor, which is at the end of the line."""
        target_indent = indent_of(line)
        body = line[len(target_indent) :]
        pairs = matching_closers(line)
        pending: list[int] = []  # target indices of auto-inserted closers, innermost last
        prev = ""
        for j, c in enumerate(body):
            i = len(target_indent) + j
            delay = self.pace.key(self.rng, prev)
            if pending and pending[-1] == i:
                pending.pop()
                self._edit(self.cursor, self.cursor, "", delay, "overtype", cursor=self.cursor + 1)
            elif j == 0 and c in CLOSERS and self.text[self._line_start() : self.cursor] != target_indent:
                self._edit(self._line_start(), self.cursor, target_indent + c, delay, "electric")
            elif c in OPENERS and i in pairs:
                self._edit(self.cursor, self.cursor, c + OPENERS[c], delay, "char", cursor=self.cursor + 1)
                pending.append(pairs[i])
            else:
                if c.isalnum() and self.rng.random() < self.pace.typo_prob:
                    wrong = self.rng.choice(NEIGHBOURS)
                    self._edit(self.cursor, self.cursor, wrong, delay, "typo")
                    self._edit(self.cursor - 1, self.cursor, "", self.pace.key(self.rng) + 0.2 * self.pace.scale,
                               "backspace")
                    delay = self.pace.key(self.rng)
                self._edit(self.cursor, self.cursor, c, delay, "char")
            prev = c

    def retype(self, lines: list[str]) -> None:
        for k, line in enumerate(lines):
            self.enter()
            if k:
                self.keys[-1].delay += self.pace.line(self.rng)
            body = line.strip()
            if not body:
                continue  # a blank line: the next Enter drops the auto-indent, as editors do
            self.fix_indent(indent_of(line), body[:1])
            self.type_line(line)


def pick_regions(text: str, language: str, rng: random.Random, count: int, *, min_lines: int = 2,
                 max_lines: int = 6, max_width: int = 100) -> list[tuple[int, int]]:
    """Line ranges [a, b) to re-type: inside a block, preceded by a non-blank line, ending on a non-blank one."""
    lines = text.split("\n")
    ok = []
    for a in range(1, len(lines) - 1):
        if not lines[a - 1].strip() or not lines[a].strip() or not indent_of(lines[a]):
            continue
        n = rng.randint(min_lines, max_lines)
        b = min(a + n, len(lines) - 1)
        seg = lines[a:b]
        if not seg or not seg[-1].strip() or any(len(s) > max_width for s in seg):
            continue
        if language == "python" and any("\t" in s for s in seg):
            continue
        ok.append((a, b))
    rng.shuffle(ok)
    chosen: list[tuple[int, int]] = []
    for a, b in ok:
        if all(b <= a2 - 2 or a >= b2 + 2 for a2, b2 in chosen):
            chosen.append((a, b))
        if len(chosen) >= count:
            break
    return sorted(chosen)


def _line_offsets(text: str) -> list[int]:
    out = [0]
    for i, c in enumerate(text):
        if c == "\n":
            out.append(i + 1)
    return out


def make_session(name: str, language: str, text: str, regions: list[tuple[int, int]], pace: Pace,
                 rng: random.Random) -> Session:
    """Cut each region (lines [a, b), from the end of line a-1) and re-type it, one region after the other."""
    lines = text.split("\n")
    starts = _line_offsets(text)

    def cut_range(a: int, b: int) -> tuple[int, int]:
        return starts[a] - 1, starts[b] - 1  # "\n" + lines a..b-1

    if not regions:
        return Session(name, language, text, [], text)
    a0, b0 = regions[0]
    s0, e0 = cut_range(a0, b0)
    initial = text[:s0] + text[e0:]
    typist = Typist(initial, s0, language, pace, rng)
    for k, (a, b) in enumerate(regions):
        if k:
            s, e = cut_range(a, b)
            # the document equals the original again here, so the original offsets still hold
            assert typist.text == text, "typing session diverged from the source"
            typist._edit(s, e, "", 1.0 * pace.scale + rng.uniform(0.3, 1.0) * pace.scale, "cut", cursor=s)
        typist.cursor = cut_range(a, b)[0]
        typist.retype(lines[a:b])
    return Session(name, language, initial, typist.keys, typist.text)


def build_sessions(sources: list[tuple[str, str, str]], seconds: float, *, seed: int = 0,
                   pace: Pace | None = None) -> list[Session]:
    """Sessions over ``sources`` (name, language, text) totalling about ``seconds`` of typing."""
    pace = pace or Pace()
    rng = random.Random(seed)
    per_file = seconds / max(1, len(sources))
    out = []
    for name, lang, text in sources:
        # grow the region count until the session fills its share of the time
        chosen: list[tuple[int, int]] = []
        session = None
        for count in range(1, 40):
            regions = pick_regions(text, lang, random.Random(f"{seed}-{name}"), count)
            if regions == chosen and session is not None:
                break
            chosen = regions
            session = make_session(name, lang, text, regions, pace, random.Random(f"{seed}-{name}-keys"))
            if session.seconds >= per_file:
                break
        if session is not None and session.keys:
            out.append(truncate(session, per_file))
    rng.shuffle(out)
    return out


def truncate(session: Session, seconds: float, min_keys: int = 6) -> Session:
    """The session cut after ``seconds`` of typing (the document need not be whole again)."""
    keys, t = [], 0.0
    for k in session.keys:
        t += k.delay
        if t > seconds and len(keys) >= min_keys:
            break
        keys.append(k)
    s = Session(session.name, session.language, session.initial, keys)
    s.final = apply_keys(s)
    return s


def apply_keys(session: Session) -> str:
    """Replay the keystrokes on the initial text (a consistency check)."""
    text = session.initial
    for k in session.keys:
        text = text[: k.start] + k.text + text[k.end :]
    return text


def main(argv: list[str] | None = None) -> None:
    from . import fixture_sources, stdlib_sources

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sessions = build_sessions(stdlib_sources() + fixture_sources(), args.seconds, seed=args.seed)
    for s in sessions:
        kinds: dict[str, int] = {}
        for k in s.keys:
            kinds[k.kind] = kinds.get(k.kind, 0) + 1
        ok = apply_keys(s) == s.final
        print(f"{s.name:28s} {s.language:11s} {len(s.keys):5d} keys {s.seconds:6.1f}s consistent={ok} {kinds}")


if __name__ == "__main__":
    main()
