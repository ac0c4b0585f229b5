"""Edits of a range: rewrite and repair syntax (denoising), fill holes (completions) — engine level, no LSP types.

Rewrite and repair are written against a :data:`Filler` (one :class:`SpanJob` in, the span's new text out), so
they can be tested with a scripted filler; :class:`ModelFiller` is the real one: a canvas *builder* on the
local backend's decoding core (``LocalInfiller.denoise_canvas``, which encodes the prefix through the
per-document cache and denoises), run on the engine's model thread:

    encoder input : [<bos>] prefix tokens                              (cached per document, by the core)
    canvas        : span tokens (noised | warm | clamped) + inserted slots + <fill> slack | suffix head (clamped)

Fill holes is written against a :data:`Propose` instead: a hole is a completion where it stands, and the engine
proposes what its completion pipeline would list there (``Engine._hole_proposer``).

Safety is decided here, once, for every command (:func:`judge`, :func:`confine`, :func:`sound_edits`):
  * edits lie inside the requested range (sub-ranges of it, sorted, disjoint);
  * an empty or unchanged result, or one that adds syntax errors to the document, is no edit;
  * an edit is applied only if the edited text parses by the language's strictest cheap check: no
    tree-sitter ERROR/MISSING node on an edited line and, for Python, the standard library's parser on the
    enclosing top-level definition(s) (:func:`syntax.strict.python_range_sound`);
  * a repair leaves no error in the range, adds none outside it, and changes no more than the damage
    needs: only lines within one of an error's, and at most a few lexemes per error point
    (:func:`damage_bounds`).
Otherwise the outcome's ``reason`` says why, in one line.

Offsets are code points into the document text.
"""

from __future__ import annotations

import bisect
import difflib
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from . import syntax
from .syntax import strict, style
from .syntax.check import _OPEN_CLOSE, _indent_of, _unclosed
from .syntax.languages import is_comment_line, keywords, operators
from .types import Cancelled, CancelToken

if TYPE_CHECKING:
    from .local import LocalInfiller

TITLES = {"rewrite": "Rewrite selection", "repair": "Repair syntax", "fill": "Fill holes"}  # the commands' names

# ---- results -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


@dataclass
class Outcome:
    edits: list[Edit] = field(default_factory=list)  # sorted, disjoint, inside the requested range
    new_text: str = ""  # the requested range's text after the edits
    reason: str = ""  # why there is no edit (empty when there is one)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.edits)


@dataclass
class SpanJob:
    """One denoising job: replace ``middle`` (between ``prefix`` and ``suffix``) by a new text.

    ``noise``: character spans of ``middle`` whose tokens start as noise; None picks ``fraction`` of the
    tokens at random (seeded). ``extra`` noise slots are inserted after each noise span (room for tokens that
    are missing). With ``clamp_rest`` the other tokens are clamped (kept as they are), else they are free
    and only warm-start the canvas. An empty ``middle`` generates up to ``max_new`` tokens from noise.
    """

    prefix: str
    middle: str
    suffix: str
    noise: list[tuple[int, int]] | None = None
    fraction: float = 0.5
    extra: int = 0
    clamp_rest: bool = False
    max_new: int = 32
    seed: int = 0


Filler = Callable[[SpanJob], str]


# ---- range safety ------------------------------------------------------------------------------------------
def confine(text: str, start: int, end: int, new: str) -> list[Edit]:
    """The smallest edit inside [start, end) that turns ``text[start:end]`` into ``new``.

    Trims the common head and tail (never splitting a CRLF pair), so unchanged text keeps its place
    (cursors, marks, folds) and the edit is a sub-range of the requested one by construction.
    """
    old = text[start:end]
    if old == new:
        return []
    p = 0
    limit = min(len(old), len(new))
    while p < limit and old[p] == new[p]:
        p += 1
    s = 0
    while s < limit - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1
    if p and old[p - 1] == "\r" and (text[start + p : start + p + 1] == "\n"):
        p -= 1
    if s and start + len(old) - s > 0 and old[len(old) - s] == "\n" and text[end - s - 1 : end - s] == "\r":
        s -= 1
    return [Edit(start + p, end - s, new[p : len(new) - s])]


def target_span(text: str, start: int, end: int, kind: str) -> tuple[int, int]:
    """The range an edit works on: ``[start, end)`` clipped to the text; an empty one (a cursor) is its
    line for repair and fill (a rewrite of nothing is nothing)."""
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    start, end = min(start, end), max(start, end)
    if start == end and kind != "rewrite":
        start = text.rfind("\n", 0, start) + 1
        nl = text.find("\n", end)
        end = len(text) if nl < 0 else nl
    return start, end


def apply_edits(text: str, edits: list[Edit]) -> str:
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: e.start] + e.text + text[e.end :]
    return text


def edits_inside(edits: list[Edit], start: int, end: int) -> bool:
    """True when the edits are sorted, disjoint and inside [start, end]."""
    pos = start
    for e in edits:
        if e.start < pos or e.end < e.start or e.end > end:
            return False
        pos = e.end
    return True


# ---- syntax errors -----------------------------------------------------------------------------------------
ErrorNode = tuple[str, int, int]  # (kind, start, end) in code points; kind "ERROR" or "MISSING <type>"


def error_nodes(text: str, lang: str | None, tree: Any = None, index: Any = None) -> list[ErrorNode]:
    """ERROR and MISSING nodes of the document (a fresh parse unless ``tree`` is given), document order."""
    if not syntax.is_supported(lang):
        return []
    tree = tree if tree is not None else syntax.parse(text, lang)
    if tree is None or not tree.root_node.has_error:
        return []
    index = index if index is not None else syntax.TextIndex(text)
    out: list[ErrorNode] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            kind = "ERROR" if node.is_error else "MISSING " + node.type
            out.append((kind, index.char_offset(node.start_byte), index.char_offset(node.end_byte)))
        stack.extend(c for c in reversed(node.children) if c.has_error or c.is_missing)
    return sorted(out, key=lambda e: (e[1], e[2]))


def errors_in_range(errors: list[ErrorNode], start: int, end: int) -> list[ErrorNode]:
    """Errors overlapping [start, end]; a zero-width one (MISSING) or an empty range counts when touching."""
    out = []
    for e in errors:
        _, s, t = e
        if s == t or start == end:
            if s <= end and t >= start:
                out.append(e)
        elif s < end and t > start:
            out.append(e)
    return out


def _added_outside(before: list[ErrorNode], after: list[ErrorNode], start: int, end: int, new_end: int) -> int:
    """Errors of ``after`` starting outside the edited range that ``before`` did not have (mapped by the edit)."""
    delta = new_end - end
    expected: dict[tuple[str, int], int] = {}
    for kind, s, _ in before:
        if s < start or s >= end:
            key = (kind, s if s < start else s + delta)
            expected[key] = expected.get(key, 0) + 1
    added = 0
    for kind, s, _ in after:
        if start <= s < max(new_end, start + 1):
            continue
        key = (kind, s)
        if expected.get(key, 0) > 0:
            expected[key] -= 1
        else:
            added += 1
    return added


def judge(text: str, start: int, end: int, new: str, lang: str | None) -> Outcome:
    """The outcome of replacing ``text[start:end]`` by ``new``: confined edits, or the reason for none."""
    old = text[start:end]
    if not new.strip() and old.strip():
        return Outcome(reason="empty result")
    if new == old:
        return Outcome(new_text=new, reason="unchanged")
    edits = confine(text, start, end, new)
    # errors are matched by kind and place, so both spellings of the same change must add none
    added = max([syntax.new_errors(text, start, end, new, lang)] +
                [syntax.new_errors(text, e.start, e.end, e.text, lang) for e in edits])
    if added:
        return Outcome(new_text=new, reason=f"result adds {added} syntax error(s)")
    why = sound_edits(text, edits, lang)
    if why:
        return Outcome(new_text=new, reason=why)
    return Outcome(edits, new)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def sound_edits(text: str, edits: list[Edit], lang: str | None, errors: list[ErrorNode] | None = None,
                max_lines: int = strict.MAX_CHUNK_LINES) -> str:
    """Empty when the text parses where the edits put it; otherwise why not, in one line.

    tree-sitter: no ERROR or MISSING node on a line an edit wrote; Python: also the standard library's
    parser on the top-level definition(s) around the edits (when they parsed before, or with the edited
    lines neutral) when it is at most ``max_lines`` long. ``errors``: the result's error nodes, when the caller
    has them.
    """
    if not edits or not syntax.is_supported(lang):
        return ""
    edits = sorted(edits, key=lambda e: e.start)
    new = apply_edits(text, edits)
    errors = error_nodes(new, lang) if errors is None else errors
    shift = 0
    for e in edits:
        a = e.start + shift
        b = a + len(e.text)
        shift += len(e.text) - (e.end - e.start)
        ls = new.rfind("\n", 0, a) + 1
        le = new.find("\n", b)
        hit = errors_in_range(errors, ls, len(new) if le < 0 else le)
        if hit:
            return f"the result does not parse (line {_line_of(new, max(ls, hit[0][1])) + 1})"
    if lang == "python":
        lo, hi = edits[0].start, max(e.end for e in edits)
        if not strict.python_range_sound(text, lo, hi, new[lo : hi + shift], max_lines):
            return "the result does not parse (Python's parser refuses it)"
    return ""


# ---- holes -------------------------------------------------------------------------------------------------
# (pattern, inline): the hole is group 1; line holes are the whole statement, inline ones part of a line
_HOLES: list[tuple[re.Pattern[str], bool]] = [
    (re.compile(r"^[ \t]*(pass[ \t]*#[ \t]*TODO\b[^\n]*?)[ \t]*\r?$", re.M), False),
    (re.compile(r"^[ \t]*((?:#|//)[ \t]*TODO\b[^\n]*?)[ \t]*\r?$", re.M), False),
    (re.compile(r"^[ \t]*(\.\.\.)[ \t]*\r?$", re.M), False),
    (re.compile(r":[ \t]*(\.\.\.)[ \t]*\r?$", re.M), False),
    (re.compile(r"(/\*[ \t]*TODO\b[^\n]*?\*/)"), True),
    (re.compile(r"(\?\?\?)"), True),
]


@dataclass(frozen=True)
class Hole:
    start: int
    end: int
    inline: bool  # part of a line (fill with one line) rather than a whole statement


def find_holes(text: str, start: int, end: int) -> list[Hole]:
    """Placeholders inside [start, end]: ``...``, ``pass  # TODO``, ``???``, ``/* TODO */``, ``# TODO`` lines."""
    lo = text.rfind("\n", 0, start) + 1  # whole lines, so line anchors mean real line starts
    hi = text.find("\n", end)
    hi = len(text) if hi < 0 else hi
    window = text[lo:hi]
    found: list[Hole] = []
    for pattern, inline in _HOLES:
        for m in pattern.finditer(window):
            a, b = lo + m.start(1), lo + m.end(1)
            if start <= a and b <= end:
                found.append(Hole(a, b, inline))
    found.sort(key=lambda h: (h.start, -(h.end - h.start)))
    out: list[Hole] = []
    for h in found:  # first and longest wins (`pass  # TODO` over its `# TODO`)
        if not out or h.start >= out[-1].end:
            out.append(h)
    return out


# a line placeholder's request in words: `# TODO: sort by name` (`pass  # TODO(ann) - ...`, `// TODO ...`)
_REQUEST = re.compile(r"(#|//)[ \t]*TODO\b(?:\([^)\n]*\))?[ \t]*[:\-]?[ \t]*([^\s:\-][^\n]*?)[ \t]*$")


def hole_views(text: str, hole: Hole) -> list[tuple[str, int]]:
    """The documents a hole is completed in, with its place, in the order they are asked: the placeholder taken
    out; first, where it is a line that says what it wants (``# TODO: sort by name``), with those words left
    above it as a comment of their own, the way code reads where a comment says what the next line does. After
    a comment the model's likeliest line often goes on with the comment, so the view without the words is asked
    when that one's proposals fill nothing. Either way the fill replaces the whole placeholder
    (bench/results/holes_todo.json)."""
    plain = (text[: hole.start] + text[hole.end :], hole.start)
    m = None if hole.inline else _REQUEST.search(text, hole.start, hole.end)
    if m is None:
        return [plain]
    ls = text.rfind("\n", 0, hole.start) + 1
    indent = text[ls : hole.start] if not text[ls : hole.start].strip() else ""
    eol = "\r\n" if text.startswith("\r", hole.end) else "\n"
    said = f"{m.group(1)} {m.group(2)}{eol}{indent}"
    return [(text[: hole.start] + said + text[hole.end :], hole.start + len(said)), plain]


# ---- rewrite -----------------------------------------------------------------------------------------------
MIN_KEPT = 0.5  # a rewrite keeps at least this share of the selection's non-blank characters


def rewrite(text: str, start: int, end: int, lang: str | None, filler: Filler, *, fraction: float = 0.5,
            seed: int = 0) -> Outcome:
    """Renoise ``fraction`` of the selection's tokens, the rest warm-starts the canvas; surroundings clamped.

    The selection's leading and trailing whitespace stays as it is (the span is the text between).
    """
    old = text[start:end]
    if not old.strip():
        return Outcome(reason="empty selection")
    a = start + len(old) - len(old.lstrip())
    b = end - (len(old) - len(old.rstrip()))
    fraction = min(1.0, max(0.0, fraction))
    new = filler(SpanJob(text[:a], text[a:b], text[b:], None, fraction, seed=seed))
    if new.strip() and len("".join(new.split())) < MIN_KEPT * len("".join(old.split())):
        # renoising a fraction of the tokens reworks the code; a result far shorter deleted it instead
        return Outcome(new_text=text[start:a] + new + text[b:end], reason="the result drops most of the selection",
                       stats={"seed": seed, "fraction": fraction})
    out = judge(text, a, b, new, lang)
    out.new_text = text[start:a] + (out.new_text or text[a:b]) + text[b:end]
    out.stats.update(seed=seed, fraction=fraction)
    return out


# ---- repair ------------------------------------------------------------------------------------------------
_LEXEME = re.compile(r"\w+|[^\w\s]")
_BIG_ERROR = 16  # characters: larger ERROR nodes are blamed on the tail of their first line


def _lexemes(line: str, base: int) -> list[tuple[int, int]]:
    return [(base + m.start(), base + m.end()) for m in _LEXEME.finditer(line)]


def error_points(text: str, start: int, end: int, errors: list[ErrorNode]) -> list[tuple[int, int]]:
    """Where the errors touching [start, end] most likely are, as document spans clipped to the range.

    MISSING nodes are zero-width points; small ERROR nodes are taken whole; a big ERROR node (tree-sitter
    wraps a whole statement or function in one) is blamed on the last lexemes of its first line, where an
    unclosed bracket or a missing ``:`` usually is, and on its own last lexeme.
    """
    out: list[tuple[int, int]] = []
    for kind, s, e in errors_in_range(errors, start, end):
        if kind != "ERROR":
            p = min(max(s, start), end)
            out.append((p, p))
            continue
        guesses: list[tuple[int, int]] = []
        if e - s <= _BIG_ERROR or "\n" not in text[s:e]:
            guesses.append((s, e))
        else:
            line_end = text.find("\n", s)
            lex = _lexemes(text[s:line_end], s)
            if lex:
                guesses.append((lex[max(0, len(lex) - 2)][0], line_end))
            last_start = text.rfind("\n", 0, e) + 1
            tail = _lexemes(text[last_start:e], last_start)
            if tail:
                guesses.append(tail[-1])
            guesses += [(p, p) for p in _open_quote_ends(text, s, e)]
        inside = [(max(a, start), min(b, end)) for a, b in guesses if a <= end and b >= start]
        out.extend(inside or [(max(s, start), min(e, end))])
    return sorted({(a, b) for a, b in out if a <= b})


_QUOTE_SCAN_LINES = 200  # lines of one ERROR node read for a string left open


def _open_quote_ends(text: str, s: int, e: int) -> list[int]:
    """The ends of the lines of [s, e) with an odd number of some quote: a string left open there, which a
    tree-sitter grammar may report only as one ERROR node over the whole function (Java)."""
    out, ls = [], text.rfind("\n", 0, s) + 1
    for _ in range(_QUOTE_SCAN_LINES):
        if ls >= e:
            break
        le = text.find("\n", ls)
        le = len(text) if le < 0 else le
        if _open_quotes(text[ls:le]):
            out.append(le - (text[le - 1 : le] == "\r"))
        ls = le + 1
    return out


def widen(text: str, spans: list[tuple[int, int]], grow: int) -> list[tuple[int, int]]:
    """Extend each span by ``grow`` lexemes on each side, staying on its line (``grow < 0``: the whole line)."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        ls = text.rfind("\n", 0, a) + 1
        le = text.find("\n", max(a, b - 1) if b > a else a)
        le = len(text) if le < 0 else le
        if grow < 0:
            lex = _lexemes(text[ls:le], ls)
            out.append((lex[0][0], lex[-1][1]) if lex else (a, b))
            continue
        lex = _lexemes(text[ls:le], ls)
        inside = [i for i, (x, y) in enumerate(lex) if x < b and y > a]
        if not inside:  # a point: the lexemes on either side of it
            before = [i for i, (_, y) in enumerate(lex) if y <= a]
            after = [i for i, (x, _) in enumerate(lex) if x >= b]
            inside = ([before[-1]] if before else []) + ([after[0]] if after else [])
            grow -= 1
        if not inside:
            out.append((a, b))
            continue
        i0, i1 = max(0, inside[0] - max(0, grow)), min(len(lex) - 1, inside[-1] + max(0, grow))
        out.append((min(a, lex[i0][0]), max(b, lex[i1][1])))
    merged: list[tuple[int, int]] = []
    for a, b in sorted(out):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


# neighbourhood (lexemes each side; -1 the whole line) and inserted slots per round
REPAIR_SCHEDULE: list[tuple[int, int]] = [(1, 1), (1, 2), (2, 1), (2, 2), (-1, 2), (-1, 3)]


def _lexeme_loss(old: str, new: str) -> int:
    """Lexemes the change deletes beyond those it inserts (a repair fixes a few tokens, it does not delete code)."""
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    gone, came = old[p : len(old) - s], new[p : len(new) - s]
    return len(_WORDS.findall(gone)) - len(_WORDS.findall(came))


_WORDS = re.compile(r"\w+|[^\w\s]+")


@dataclass(frozen=True)
class DamageBounds:
    """How far a repair may reach: the lines it may change and how many lexemes (error points' lines +-1;
    LEXEMES_PER_POINT per error point, at least MIN_LEXEMES)."""

    lines: frozenset[int]
    lexemes: int


LEXEMES_PER_POINT = 2
MIN_LEXEMES = 4


def damage_bounds(text: str, points: list[tuple[int, int]]) -> DamageBounds:
    lines: set[int] = set()
    region = 0
    for a, b in points:
        for r in range(_line_of(text, a), _line_of(text, b) + 1):
            lines.update((r - 1, r, r + 1))
        region += max(1, len(_LEXEME.findall(text[a:b])))
    return DamageBounds(frozenset(lines), max(MIN_LEXEMES, LEXEMES_PER_POINT * region))


def _lines(text: str) -> list[str]:
    """Lines with their "\n" (only "\n" ends a line here, as in :func:`_line_of`)."""
    return [x for x in _LINE.split(text) if x]


_LINE = re.compile(r"(?<=\n)")


def _hunks(old: str, new: str) -> list[tuple[int, int, int, int]]:
    """Changed line runs of ``new`` against ``old``: (old first line, old end line, new first, new end)."""
    a, b = _lines(old), _lines(new)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            if tag != "equal"]


def _edited_lexemes(old: str, new: str) -> int:
    a, b = _LEXEME.findall(old), _LEXEME.findall(new)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in
               difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal")


def reach(text: str, start: int, old: str, new: str, bounds: DamageBounds) -> str:
    """Empty when replacing ``old`` (at ``start`` of ``text``) by ``new`` stays within ``bounds``; else why not."""
    first = _line_of(text, start)
    for i1, i2, _, _ in _hunks(old, new):
        touched = range(first + i1, first + i2) if i2 > i1 else (first + i1 - 1, first + i1)  # an insertion: beside
        if not any(r in bounds.lines for r in touched) or (i2 > i1 and not all(r in bounds.lines for r in touched)):
            line = next((r for r in touched if r not in bounds.lines), touched[0])
            return f"the repair would change line {line + 1}, away from the errors"
    n = _edited_lexemes(old, new)
    if n > bounds.lexemes:
        return f"the repair would change {n} lexemes (the errors need at most {bounds.lexemes})"
    return ""


def line_edits(text: str, start: int, end: int, new: str) -> list[Edit]:
    """The change from ``text[start:end]`` to ``new`` as one confined edit per changed run of lines."""
    old = text[start:end]
    a, b = _lines(old), _lines(new)
    at_a = [0]
    for line in a:
        at_a.append(at_a[-1] + len(line))
    at_b = [0]
    for line in b:
        at_b.append(at_b[-1] + len(line))
    out: list[Edit] = []
    for i1, i2, j1, j2 in _hunks(old, new):
        out += confine(text, start + at_a[i1], start + at_a[i2], new[at_b[j1] : at_b[j2]])
    return out


# tokens a one-token repair inserts (what a typo most often drops) at each lexeme boundary of the damage, and
# (brackets and ,;:.=) writes over or takes out
REPAIR_TOKENS = (")", ":", "]", "}", ";", "(", "[", "{", ",", ".", "=")
MAX_SINGLE_EDITS = 1600  # candidate one-token edits screened per repair (bounded parser work)...
SCREEN_BUDGET_S = 1.0  # ...and time (a stray quote makes every window parse reach the file's end)
_SMALL_CHUNK = 2000  # characters of Python compiled faster than tree-sitter checks a window (measured on dev)
MAX_VERIFIED = 40  # screened ones confirmed on the whole document (in single_edits' order)...
VERIFY_BUDGET_S = 0.3  # ...within this time (a long file's parses are slower); the model ranks those confirmed
# no round starts after this long in the rounds: a range full of errors (code tree-sitter cannot read) spent 18 s in
# six rounds denoising every error point, to no repair; the slowest repair of the dev splits took 2.0 s
ROUNDS_BUDGET_S = 6.0
# a swapped pair's lexemes: words, the common two-character operators, else one punctuation character
_TOKEN = re.compile(r"\w+|==|!=|<=|>=|->|=>|\*\*|//|::|&&|\|\||<<|>>|[-+*/%|&^]=|[^\w\s]")

Ranker = Callable[[str, list[str], str], list[float]]  # (prefix, line variants, suffix) -> score each (higher: likelier)


@dataclass(frozen=True)
class SingleEdit:
    """Replace ``text[start:end]`` by ``new``: one token inserted, two neighbouring tokens swapped, one bracket
    or ``,;:.=`` written as another or taken out."""

    start: int
    end: int
    new: str
    kind: str  # one of _KINDS


# without a model: a closing line the indentation asks for first, then a respelled keyword, then an insertion
_KINDS = ("closer", "respell", "insert", "swap", "replace", "delete", "word")
WORD_CHOICES = 24  # a word insertion's words: the commonest near the damage (a deleted name or keyword)...
WORD_LINES = 40  # ...within this many lines of it
_WORDLIKE = re.compile(r"[^\W\d]\w*|\d+")


def _line_spans(text: str, lines: Iterable[int]) -> dict[int, tuple[int, int]]:
    """(start, end) offsets of the document lines asked for that exist (the damage's bounds reach one line past
    each end of the text), found in one pass."""
    out: dict[int, tuple[int, int]] = {}
    ls = row = 0
    for r in sorted(r for r in lines if r >= 0):
        while row < r:
            ls = text.find("\n", ls) + 1
            if ls == 0:
                return out
            row += 1
        le = text.find("\n", ls)
        out[r] = (ls, len(text) if le < 0 else le)
    return out


def _insertion_points(text: str, start: int, end: int, ls: int, le: int) -> list[int]:
    """Where a lost token may go on the line [ls, le) inside [start, end]: at a lexeme boundary, inside a run of
    blanks between two lexemes (where ``x = y`` lost its ``=``, ``x  y`` takes it back between the two blanks), and
    after the blanks that end a line (``f() `` lost its ``{``: ``f() {``, not ``f(){ ``; a line of blanks alone,
    its ``}``)."""
    lex = _lexemes(text[ls:le], ls)
    at = {x for a, b in lex for x in (a, b)}
    at.update(p for (_, b), (c, _) in zip(lex, lex[1:], strict=False) for p in range(b + 1, c))
    eol = le - (text[le - 1 : le] == "\r")
    if eol > ls and text[eol - 1] in " \t":
        at.add(eol)
    return sorted(p for p in at if start <= p <= end)


def _insertions(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
    """One :data:`REPAIR_TOKENS` token inserted at each :func:`_insertion_points` point of the line [ls, le)."""
    return [SingleEdit(p, p, t, "insert") for p in _insertion_points(text, start, end, ls, le) for t in REPAIR_TOKENS]


_QUOTES = "\"'`"


def _open_quotes(line: str) -> list[str]:
    """The quotes ``line`` has an odd number of, escaped ones not counted: a string left open there."""
    return [q for q in _QUOTES if (line.count(q) - line.count("\\" + q)) % 2]


def _quotes(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
    """A quote inserted at each :func:`_insertion_points` point of the line [ls, le) that has an odd number of them
    (:func:`_open_quotes`): a string left open (``log("x);``, ``s.replace('a, 'b')``). Before, nothing put a quote
    back, and the rounds' denoising did not either."""
    odd = _open_quotes(text[ls:le])
    if not odd:
        return []
    return [SingleEdit(p, p, q, "insert") for p in _insertion_points(text, start, end, ls, le) for q in odd]


def _indent_width(line: str) -> int:
    """Columns of ``line``'s indentation, tab stops 8 apart (as Python's compiler reads them)."""
    return len(_indent_of(line).expandtabs(8))


@dataclass
class _Open:
    """A statement whose line left brackets open, as :func:`closer_lines` reads down the range."""

    width: int  # the statement's indentation, in columns...
    indent: str  # ...and as written
    closers: str  # what its line left open, innermost first (`})`)
    opener: str  # the statement's first line of code
    # whether the line of code after the opener is deeper (None until it is read): only a block with a body lost a
    # closing line; `t = f(` above a line as deep lost the `)` of `f()`, which a one-token insertion puts back
    body: bool | None = None


def closer_lines(text: str, start: int, end: int, lang: str | None) -> list[SingleEdit]:
    """A line of closing brackets put back where the indentation says a block ended without one: after a line that
    leaves brackets open (``if (a > 1) {``, ``foo(function () {``) and a deeper line below it, the first later line
    of code indented less than the statement it ends, or as much but not closing them itself, gets them on a line
    of its own after the block's last line of code (or on the line of blanks there), at the statement's
    indentation; where the range ends with brackets still open, after its last line. Each place comes in three
    forms, the likeliest first (:func:`_closer_forms`: ``}``, ``};``, ``},``). A whole lost ``}`` line was put back
    glued to the next line (``}return 0;``) or at the file's end (``}}``), which parses but closes the wrong
    block."""
    if lang is None or not syntax.is_supported(lang):
        return []
    nl = "\r\n" if "\r\n" in text[start:end] else "\n"
    semis = not style.omits_semicolons(text, start, lang)
    out: list[SingleEdit] = []

    def closing(at: int, block: _Open, tail: bool) -> None:
        """The forms of ``block``'s closing line at ``at``; on a line of blanks there, on it; ``tail``: after the
        last line."""
        le = text.find("\n", at)
        blank = text[at : len(text) if le < 0 else le].rstrip("\r")
        if not start <= at <= end or (blank and not blank.strip() and at + len(blank) > end):
            return  # never outside the range (which may end inside a line)
        forms = _closer_forms(block.closers, block.opener, lang, semis)
        ind = block.indent
        if at < len(text) and blank and not blank.strip():  # the blanks a deleted `}` left: it goes back there
            out.extend(SingleEdit(at, at + len(blank), ind + f, "closer") for f in forms)
        elif tail and at and text[at - 1] != "\n":
            out.extend(SingleEdit(at, at, nl + ind + f, "closer") for f in forms)
        else:
            out.extend(SingleEdit(at, at, ind + f + nl, "closer") for f in forms)

    stack: list[_Open] = []
    code_lines: list[tuple[str, int, str]] = []  # (code, width, indentation) of the lines read so far
    after_code = after_any = at = text.rfind("\n", 0, start) + 1  # the starts of the lines after the last code line
    while at < end and at < len(text):
        le = text.find("\n", at)
        le = len(text) if le < 0 else le
        line = text[at:le].rstrip("\r")
        code = line.strip()
        if code and not is_comment_line(line, lang) and not code.startswith("#"):  # nor C's `#ifdef` at column 0
            width, indent = _indent_width(line), _indent_of(line)
            label = bool(stack) and width == stack[-1].width and _LABEL.match(code)  # Go's `case` under `switch {`
            if stack and stack[-1].body is None and not label:
                stack[-1].body = width > stack[-1].width
            while stack and not label and (width < stack[-1].width or
                                           (width == stack[-1].width and not code.startswith(stack[-1].closers[:1]))):
                top = stack.pop()
                if top.body:
                    closing(after_code, top, False)
            if stack and width == stack[-1].width and code.startswith(stack[-1].closers[:1]):
                stack.pop()
            opened = _unclosed_brackets(code)
            if opened:
                head, head_width, head_indent = _statement_start(code_lines, (code, width, indent), lang)
                stack.append(_Open(head_width, head_indent, opened, head))
            code_lines.append((code, width, indent))
            after_code = le + 1
        if code:
            after_any = le + 1
        at = le + 1
    for top in reversed(stack):
        if top.body:
            closing(min(after_any, len(text)), top, True)
    return out


_LABEL = re.compile(r"(?:case\b|default\b\s*:)")
_BLOCK_HEAD = re.compile(r"(?:\}\s*)?(?:if|else|for|while|do|switch|try|catch|finally|function|class|interface|enum|"
                         r"struct|union|impl|fn|pub|mod|trait|match|loop|unsafe|namespace|static|public|private|"
                         r"protected|export\s+(?:default\s+)?(?:function|class))\b")
_ASSIGNS = re.compile(r"(?<![=!<>])=(?!=)|^return\b")


def _closer_forms(closers: str, opener: str, lang: str | None, semis: bool) -> list[str]:
    """A closing line's text in its three forms, the likeliest first: with a ``;`` where the statement the opener
    began is an expression a ``;`` ends (``var mark = {``, ``return {``, ``foo(function () {``) in a language and
    file that write them; else bare. (tree-sitter accepts ``};`` after a block and ``}`` after an object literal
    in JavaScript, and the model ranked the bare form first where the file had ``};``.)"""
    semi = (semis and lang not in ("python", "go") and not _BLOCK_HEAD.match(opener)
            and bool(")" in closers or _ASSIGNS.search(opener)))
    return [closers + ";", closers, closers + ","] if semi else [closers, closers + ";", closers + ","]


def _statement_start(code_lines: list[tuple[str, int, str]], own: tuple[str, int, str],
                     lang: str | None) -> tuple[str, int, str]:
    """The line of code (code, width, indentation) that begins the statement the line ``own`` goes on, given the
    lines of code above it: the line that opened the brackets it closes first (a condition's last
    line ``x === '_') {``), else the line above while this one is indented deeper and that one ends without ``;``,
    ``{``, ``}``, ``:``, ``,``, ``(`` or ``[`` (``public Process launch(...)`` above ``        throws IOException {``;
    not in Python, where a line ends its statement outside brackets)."""
    need = depth = 0
    for ch in own[0]:
        depth += ch in _OPEN_CLOSE
        if ch in ")]}":
            need += depth == 0
            depth = max(0, depth - 1)
    for prev in reversed(code_lines):
        if need <= 0:
            break
        need -= sum(ch in _OPEN_CLOSE for ch in prev[0]) - sum(ch in ")]}" for ch in prev[0])
        if need <= 0:
            return prev
    head = own
    for prev in reversed(code_lines) if lang != "python" else ():  # a Python line ends its statement
        if prev[1] >= head[1] or prev[0][-1:] in (";", "{", "}", ":", ",", "(", "["):
            break
        head = prev
    return head


def _unclosed_brackets(code: str) -> str:
    """The closers of the brackets that ``code``, a line ending with an opening one, leaves open, innermost first
    (``foo(function () {`` -> ``})``), as :func:`syntax.check._unclosed` reads them (a closer that closes nothing
    opened on the line closes a line above: ``} else {``, a condition's last line ``x === '_') {``); none where
    the line's brackets do not pair up."""
    owed = _unclosed(code)
    return "".join(reversed(owed)) if owed and code.rstrip()[-1:] in _OPEN_CLOSE else ""


def _gap_operators(ops: Sequence[str]) -> Callable[[str, int, int, int, int], list[SingleEdit]]:
    """One of the language's operators ``ops`` (other than :data:`REPAIR_TOKENS`) inserted between the two blanks a
    lost operator left between two lexemes of the line [ls, le) (``if n  0:``, ``cnt  0``, ``i  f(i)``;
    :func:`_two_blanks`)."""

    def make(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
        lex = _lexemes(text[ls:le], ls)
        return [SingleEdit(b + 1, b + 1, op, "insert") for (_, b), _ in zip(lex, lex[1:], strict=False)
                if start <= b + 1 <= end and _two_blanks(text, b + 1) for op in ops if op not in REPAIR_TOKENS]

    return make


def _two_blanks(text: str, p: int) -> bool:
    """Whether ``p`` stands between exactly two blanks that separate two lexemes (``x  y``): where a deleted token
    left a blank on each side; not inside a longer run (the alignment before a trailing comment, which would offer
    every keyword and operator at each of its places: one mark written twice was then mended no more)."""
    return (text[p - 1 : p] in (" ", "\t") and text[p : p + 1] in (" ", "\t")
            and text[p - 2 : p - 1] not in ("", " ", "\t", "\n", "\r")
            and text[p + 1 : p + 2] not in ("", " ", "\t", "\n", "\r"))


def word_counts(text: str, lo: int = 0, hi: int | None = None) -> dict[str, int]:
    """How often each word (name, keyword, number) stands in ``text[lo:hi]``: which names the document has."""
    counts: dict[str, int] = {}
    for m in _WORDLIKE.finditer(text, lo, len(text) if hi is None else hi):
        counts[m.group()] = counts.get(m.group(), 0) + 1
    return counts


def _splits(counts: dict[str, int]) -> Callable[[str, int, int, int, int], list[SingleEdit]]:
    """One :data:`REPAIR_TOKENS` token, or a ``<``, inserted inside a word of the line [ls, le) that the document has
    nowhere else, where a part (of two characters or more) is a word it has: the token deleted between two words
    glued them (``to_seconds(max)`` without its ``(`` is ``to_secondsmax)``, ``self.x`` without its ``.``
    ``selfx``, ``HashMap<String, V>`` without its ``<`` ``HashMapString, V>``).
    One part is enough: a function's name is often its definition's only word (``gettextmessage)``: `message`),
    and on the Python dev split the glued words mended 2 of 6 such deletions with both parts asked, 5 with one."""

    def make(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
        out = []
        for m in _WORDLIKE.finditer(text, ls, le):
            w = m.group()
            if counts.get(w, 0) > 1 or m.start() < start or m.end() > end:
                continue
            out += [SingleEdit(m.start() + k, m.start() + k, t, "insert") for k in range(2, len(w) - 1)
                    if counts.get(w[:k]) or counts.get(w[k:]) for t in (*REPAIR_TOKENS, "<")]
        return out

    return make


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with one letter dropped, added, replaced, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :] or (a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :])
    return a[i + 1 :] == b[i:] if len(a) > len(b) else a[i:] == b[i + 1 :]


def _respellings(counts: dict[str, int], kws: Sequence[str]) -> Callable[[str, int, int, int, int], list[SingleEdit]]:
    """A word of the line [ls, le) that the document has nowhere else and that is not a keyword, written as a
    keyword one slip away (``retrun`` -> ``return``, ``fucntion``, ``pubilc``, ``esle``): a misspelled keyword
    leaves a name where the grammar wants one, which no token edit mends."""
    spelled = [k for k in kws if len(k) >= 3]

    def make(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
        out = []
        for m in _WORDLIKE.finditer(text, ls, le):
            w = m.group()
            if m.start() < start or m.end() > end or counts.get(w, 0) > 1 or w in kws or len(w) < 2:
                continue
            out += [SingleEdit(m.start(), m.end(), k, "respell") for k in spelled if _one_slip(w, k)]
        return out

    return make


def near_words(text: str, points: list[tuple[int, int]]) -> list[str]:
    """The :data:`WORD_CHOICES` commonest words (names, keywords, numbers) within :data:`WORD_LINES` lines of the
    error points: what a deleted word most likely was."""
    lo, hi = min(a for a, _ in points), max(b for _, b in points)
    for _ in range(WORD_LINES):
        lo = max(0, text.rfind("\n", 0, max(0, lo - 1)))
        nl = text.find("\n", hi + 1)
        hi = len(text) if nl < 0 else nl
    counts = word_counts(text, lo, hi)
    return sorted(counts, key=lambda w: (-counts[w], w))[:WORD_CHOICES]


def _word_insertions(words: list[str], starters: Sequence[str] = ()
                     ) -> Callable[[str, int, int, int, int], list[SingleEdit]]:
    """One of ``words`` inserted at each :func:`_insertion_points` point of the line [ls, le), a blank added where
    it would touch a word (``x = `` + ``y``; `` f(self)`` + ``def``), and before the last blank of an indentation
    whose spaces at its end are odd in number: a word deleted with both its blanks kept
    (``    ␣'a' in b:`` takes its ``if`` there); one of ``starters`` (the language's keywords) too where the line's
    code starts and between two blanks (a function's one ``def`` or ``in`` is rarely among the words around it);
    never between a separator and itself
    (``self..x``, ``a,, b``: a mark typed twice, which taking one out mends; with words there, the model preferred
    ``self._parent.x`` to it in 8 of 200 dev cases, bench/results/repair_dev_ab.json)."""

    def make(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
        out = []
        points = _insertion_points(text, start, end, ls, le)
        first = ls + len(_indent_of(text[ls:le]))
        odd = len(text[ls:first]) - len(text[ls:first].rstrip(" "))
        if odd % 2 and start <= first - 1 and first < le:  # `    ␣'a' in b:`: `if` deleted with a blank each side
            points = [first - 1, *points]
        for p in points:
            if text[p - 1 : p] == text[p : p + 1] and text[p : p + 1] in ",;:.":
                continue
            left, right = _word(text[p - 1 : p]), _word(text[p : p + 1])
            # the language's keywords where a statement starts and between two blanks (`for i  items:`) only:
            # everywhere, they restored 3 more dev cases, not 7, at twice the time (bench/results/repair_dev_ab.json)
            gap = p in (first, first - 1) or _two_blanks(text, p)
            out += [SingleEdit(p, p, " " * left + w + " " * right, "word") for w in [*words, *(starters if gap else ())]]
        return out

    return make


def _swaps(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
    """Two neighbouring tokens of the line [ls, le) exchanged, the blanks between them kept (typed in the wrong
    order: ``f(x:)`` for ``f(x):``, ``g(a;)`` for ``g(a);``)."""
    toks = [(m.start(), m.end()) for m in _TOKEN.finditer(text, ls, le)]
    out = []
    for (a, b), (c, d) in zip(toks, toks[1:], strict=False):
        if a < start or d > end or text[a:b] == text[c:d] or text[b:c].strip():
            continue
        out.append(SingleEdit(a, d, text[c:d] + text[b:c] + text[a:b], "swap"))
    return out


# the tokens a punctuation edit takes out or writes over (all of REPAIR_TOKENS), each only with one of its own kind:
# a wrong closer or separator, not `=` for `(`
_LIKE = {t: group for group in ("([{", ")]}", ",;:.=") for t in group}


def _marks(text: str, start: int, end: int, ls: int, le: int) -> list[SingleEdit]:
    """One bracket or ``,;:.=`` of the line [ls, le) taken out (written twice: ``f(x))``) or written as another of
    its kind (``f(x]``, ``x;`` for ``x:``)."""
    out = []
    for m in _TOKEN.finditer(text, ls, le):
        a, b = m.span()
        if start <= a and b <= end and m.group() in _LIKE:
            out += [SingleEdit(a, b, tok, "replace") for tok in _LIKE[m.group()] if tok != m.group()]
            out.append(SingleEdit(a, b, "", "delete"))
    return out


def _word(ch: str) -> bool:
    return bool(ch) and (ch.isalnum() or ch == "_")


def _joins_words(text: str, e: SingleEdit) -> bool:
    """Whether ``e`` runs two words into one that were apart (``type(x`` without its ``(`` is ``typex``): no
    repair makes a new name."""
    left, right = text[e.start - 1 : e.start], text[e.end : e.end + 1]
    if not e.new:
        return _word(left) and _word(right)
    return (_word(left) and _word(e.new[0]) and not _word(text[e.start : e.start + 1])) or (
        _word(e.new[-1]) and _word(right) and not _word(text[e.end - 1 : e.end]))


def single_edits(text: str, start: int, end: int, lang: str | None, bounds: DamageBounds,
                 before: list[ErrorNode], points: list[tuple[int, int]], words: list[str] | None = None,
                 starters: Sequence[str] = ()) -> list[SingleEdit]:
    """One-token edits on the damage's lines that pass a cheap screen: one :data:`REPAIR_TOKENS` token inserted,
    two neighbouring tokens swapped, one such token written as another or taken out; the likeliest first without
    a model (a token tree-sitter reports MISSING there, then nearest an error point, in :data:`_KINDS` order,
    attached to the lexeme before it, the latest place: closers and ":" end what the line opened).

    The screen: tree-sitter on a window around the edit finds fewer errors and no new one, and for Python the
    standard parser accepts the enclosing definition (alone where that is short, :data:`_SMALL_CHUNK`; else
    second, as the dearer test). Lines nearest an error point are tried first, at most MAX_SINGLE_EDITS
    candidates within SCREEN_BUDGET_S: bounded work on any file size. :func:`_verified` confirms one on the
    document. With ``words``, the candidates are instead one of them inserted on an error point's line
    (:func:`_word_insertions`: a deleted name or keyword; ``starters``, keywords for a statement's start and a
    gap between two blanks), screened the same way.
    """
    chunk = strict.python_chunk(text, start, end) if lang == "python" else None
    small = chunk is not None and chunk[1] - chunk[0] <= _SMALL_CHUNK  # Python's parser alone is the cheaper screen
    missing = {(s, kind[8:]) for kind, s, t in before if kind.startswith("MISSING ") and s == t}
    err_lines = [_line_of(text, a) for a, _ in points]
    spans = _line_spans(text, bounds.lines)
    near_of = {line: min((abs(line - r) for r in err_lines), default=0) for line in spans}
    lines = sorted(spans, key=lambda r: (near_of[r], r))
    counts = word_counts(text) if words is None else {}
    # a respelled keyword first: few candidates, and on a line of an ERROR node over the whole function the
    # insertions alone filled the screen's bounds before them (`edf checkcall(self, ...):`)
    makers = (_respellings(counts, keywords(lang)), _insertions, _quotes, _splits(counts),
              _gap_operators(operators(lang)), _swaps, _marks) if words is None else (_word_insertions(words, starters),)
    if words is not None:
        lines = [r for r in lines if near_of[r] == 0]
    # kind by kind, each over the lines nearest first: the bounds cut the rarer kinds on far lines; first the
    # closer lines the indentation asks for, wherever in the range (few, and a lost `}` line is reported far away)
    closers = [] if words is not None else [(_line_of(text, e.start), e) for e in closer_lines(text, start, end, lang)]
    near_of.update({r: 0 for r, _ in closers})
    candidates = chain(closers, ((r, e) for make in makers for r in lines for e in make(text, start, end, *spans[r])))
    tried = 0
    screened: list[tuple[tuple[int, int, int, int, int], SingleEdit]] = []
    t0 = time.perf_counter()
    for line, e in candidates:
        if tried >= MAX_SINGLE_EDITS or time.perf_counter() - t0 > SCREEN_BUDGET_S:
            break
        if _joins_words(text, e):
            continue
        tried += 1
        if not (small or syntax.mends_errors(text, e.start, e.end, e.new, lang)):
            continue
        if chunk is not None and not strict.parses(text[chunk[0] : e.start] + e.new + text[e.end : chunk[1]]):
            continue
        detached = int(e.start == 0 or text[e.start - 1].isspace())
        screened.append(((int((e.start, e.new) not in missing), near_of[line], _KINDS.index(e.kind), detached,
                          -e.start), e))
    return [e for _, e in sorted(screened, key=lambda x: x[0])]


def _verified(text: str, start: int, end: int, lang: str | None, before: list[ErrorNode], e: SingleEdit) -> bool:
    """The whole document after ``e``: no error left in the range, none added outside it, and sound."""
    grow = len(e.new) - (e.end - e.start)
    errs = error_nodes(text[: e.start] + e.new + text[e.end :], lang)
    if errors_in_range(errs, start, end + grow) or _added_outside(before, errs, start, end, end + grow):
        return False
    return not sound_edits(text, [Edit(e.start, e.end, e.new)], lang)


_DONE = {"insert": "inserted", "swap": "swapped", "replace": "replaced", "delete": "deleted",
         "word": "inserted_word", "closer": "closer_line", "respell": "respelled"}  # a single edit's stats key


def _ranked(text: str, options: list[SingleEdit], rank: Ranker | None) -> list[SingleEdit]:
    """The options, likeliest first as the model scores each whole line between its prefix and suffix (one
    scorer pass per line); without a model, in :func:`single_edits`' order."""
    if rank is None or len(options) <= 1:
        return options
    by_line: dict[int, list[int]] = {}
    for i, e in enumerate(options):
        by_line.setdefault(text.rfind("\n", 0, e.start) + 1, []).append(i)
    scores = [0.0] * len(options)
    for ls, idx in by_line.items():
        le = text.find("\n", ls)
        le = len(text) if le < 0 else le
        variants = [text[ls : options[i].start] + options[i].new + text[options[i].end : le] for i in idx]
        for i, sc in zip(idx, rank(text[:ls], variants, text[le:]), strict=True):
            scores[i] = sc
    order = sorted(range(len(options)), key=lambda i: (-scores[i], i))
    return [options[i] for i in order]


def repair(text: str, start: int, end: int, lang: str | None, filler: Filler, *, rounds: int = 6,
           seed: int = 0, max_loss: int = 1, on_round: Callable[[int, int], None] | None = None) -> Outcome:
    """Renoise only the tokens at the range's syntax errors and their neighbours, until the range parses.

    Each round denoises the current best text with the error points widened by the schedule (and a few
    inserted slots for missing tokens); a round's result is kept only when it lowers the document's error
    count without adding errors outside the range, without deleting more than ``max_loss`` lexemes net
    (deleting the broken code is not a repair) and within the damage's :func:`damage_bounds`. Tokens the
    parser itself reports missing are inserted after the rounds. The result is applied only if the range is
    then free of errors and passes :func:`sound_edits` (partial repairs are not applied).
    """
    if not syntax.is_supported(lang):
        return Outcome(reason=f"no parser for {lang or 'this language'}")
    before = error_nodes(text, lang)
    if lang == "python":  # what the compiler refuses: any error where tree-sitter sees none, else indentation
        quiet = not errors_in_range(before, start, end)
        row = strict.compile_error_row(text, start, end, any_error=quiet)
        if row is not None and (out := reindented(text, start, end, before, row, quiet)) is not None:
            return out
        if row is not None and quiet:
            before = before + _line_error(text, start, end, row)
    if not errors_in_range(before, start, end):
        return Outcome(reason="no syntax errors in the range")
    orig = text[start:end]
    points0 = error_points(text, start, end, before)
    bounds = damage_bounds(text, points0)
    options = single_edits(text, start, end, lang, bounds, before, points0)
    stats0: dict[str, Any] = {"single_edits": len(options), "errors_before": len(before)}

    def confirmed(options: list[SingleEdit]) -> list[SingleEdit]:
        found: list[SingleEdit] = []
        t0 = time.perf_counter()
        for e in options[:MAX_VERIFIED]:
            if time.perf_counter() - t0 > VERIFY_BUDGET_S:
                break
            if _verified(text, start, end, lang, before, e):
                found.append(e)
        return found

    # or a word that was left out, one of those around the damage or a keyword; the model ranks them together
    near = near_words(text, points0)
    words = single_edits(text, start, end, lang, bounds, before, points0, near,
                         [k for k in keywords(lang) if k not in near])
    stats0["word_edits"] = len(words)
    found = confirmed(options) + confirmed(words)
    if found:  # the smallest repair there is: one token the parser and the model agree on
        # where the indentation says a block's closing line went: the first such place, its likeliest form
        closers = [e for e in found if e.kind == "closer"]
        e = min(closers, key=lambda c: c.start) if closers else _ranked(text, found, getattr(filler, "rank", None))[0]
        cur = orig[: e.start - start] + e.new + orig[e.end - start :]
        return Outcome(confine(text, start, end, cur), cur, "", {**stats0, "rounds": 0, "errors_after": 0,
                                                                  _DONE[e.kind]: e.new})
    cur, cur_errors = orig, before
    tried = refused = 0
    t0 = time.perf_counter()
    for r in range(max(0, rounds)):
        if r and time.perf_counter() - t0 > ROUNDS_BUDGET_S:
            break
        doc_end = start + len(cur)
        doc = text[:start] + cur + text[end:]
        points = error_points(doc, start, doc_end, cur_errors)
        if not points:
            break
        grow, extra = REPAIR_SCHEDULE[min(r, len(REPAIR_SCHEDULE) - 1)]
        spans = [(a - start, b - start) for a, b in widen(doc, points, grow)]
        spans = [(max(0, a), min(len(cur), b)) for a, b in spans]
        if on_round is not None:
            on_round(r, rounds)
        cand = filler(SpanJob(text[:start], cur, text[end:], spans, extra=extra, clamp_rest=True,
                              seed=seed + r))
        tried += 1
        cand_doc = text[:start] + cand + text[end:]
        cand_errors = error_nodes(cand_doc, lang)
        if len(cand_errors) < len(cur_errors) and _lexeme_loss(cur, cand) <= max_loss and \
                not _added_outside(before, cand_errors, start, end, start + len(cand)):
            if reach(text, start, orig, cand, bounds):
                refused += 1
                continue
            cur, cur_errors = cand, cand_errors
            if not errors_in_range(cur_errors, start, start + len(cur)):
                break
    inserted = 0
    for _ in range(3):  # what the model left: tokens the parser itself says are missing (")", ":", ";", "}")
        if not errors_in_range(cur_errors, start, start + len(cur)):
            break
        cand, n = _insert_missing(cur, start, cur_errors)
        if not n:
            break
        cand_errors = error_nodes(text[:start] + cand + text[end:], lang)
        if len(cand_errors) >= len(cur_errors) or _added_outside(before, cand_errors, start, end, start + len(cand)) \
                or reach(text, start, orig, cand, bounds):
            break
        cur, cur_errors, inserted = cand, cand_errors, inserted + n
    left = errors_in_range(cur_errors, start, start + len(cur))
    stats = {**stats0, "rounds": tried, "errors_after": len(cur_errors), "inserted_missing": inserted,
             "refused_reach": refused, "errors_left_in_range": len(left)}
    if cur == orig:
        why = "no repair found that removes errors"
        return Outcome(reason=why + (" within the damage's lines" if refused else ""), stats=stats)
    if left:
        return Outcome(reason=f"no repair found that removes every error in the range ({len(left)} left)",
                       stats=stats)
    edits = line_edits(text, start, end, cur)
    why = reach(text, start, orig, cur, bounds) or sound_edits(text, edits, lang)
    if why:
        return Outcome(reason=why, stats=stats)
    return Outcome(edits, cur, "", stats)


def repairable(text: str, start: int, end: int, lang: str | None, errors: list[ErrorNode]) -> bool:
    """Whether Repair has something to mend in [start, end]: a tree-sitter error there (``errors``: the
    document's), or, in Python, a line there whose indentation the compiler refuses (which tree-sitter mostly
    reads without an error)."""
    if errors_in_range(errors, start, end):
        return True
    if lang != "python":
        return False
    row = strict.compile_error_row(text, start, end)
    return row is not None and text.count("\n", 0, start) <= row <= text.count("\n", 0, end)


def _line_error(text: str, start: int, end: int, row: int) -> list[ErrorNode]:
    """The line ``row``, where Python's compiler refuses the definitions around the range, as an ERROR node where
    it is in the range and tree-sitter reads it without one (``esle:``, ``f(x=x, True)``): the one-token edits then
    look there."""
    spans = _line_spans(text, [row])
    if row not in spans or spans[row][1] < start or spans[row][0] > end:
        return []
    ls, le = spans[row]
    return [("ERROR", max(ls, start), min(le, end))]


MAX_REINDENTED = 20  # lines of one range a repair re-indents (a pasted block one level off)


def reindented(text: str, start: int, end: int, before: list[ErrorNode], row: int, any_error: bool
               ) -> Outcome | None:
    """Python: the lines of the range whose indentation the compiler refuses (:func:`strict.compile_error_row`;
    tree-sitter reads most of them without an error) given another, one line at a time while each step moves the
    error further down; None when the compiler has nothing to say about the range's indentation or no
    re-indentation makes the definition compile.

    The compiler names the line where it noticed, which is not always the wrong one (``   x = 1`` above
    ``    return x``: the second is refused; a block's first line two columns short is noticed where the block
    ends); so the lines of code above it in the range are tried too (up to :data:`REINDENT_ROWS`), and a step
    after which the definition compiles wins, then the one that leaves fewest lines off the document's
    indentation unit (4 columns, or 2), then the nearest to the named line. Where tree-sitter sees no error in the
    range, any error the compiler names is tried this way (``return`` at column 0 is ``'return' outside
    function``). ``row``: where the compiler first refuses them (:func:`strict.compile_error_row` with
    ``any_error``)."""
    cur, rows, unit = text, [], _indent_unit(text)
    for step in range(MAX_REINDENTED):
        hi = end + len(cur) - len(text)
        row = row if step == 0 else strict.compile_error_row(cur, start, hi, any_error)
        if row is None:
            break
        chunk = strict.python_chunk(cur, start, hi)
        top = chunk[0] if chunk is not None else cur.rfind("\n", 0, start) + 1
        steps = []
        for r in _code_rows_up(cur, row, start):
            if rows and r <= rows[-1]:
                break
            spans = _line_spans(cur, [r])
            if r in spans and spans[r][0] <= hi:
                got = _reindent_line(cur, *spans[r], top, row)
                if got is not None:
                    fixed, whole = got
                    steps.append((not whole, _off_unit(fixed, start, hi + len(fixed) - len(cur), unit), len(steps), r,
                                  fixed))
        if not steps:
            return None
        *_, r, cur = min(steps)
        rows.append(r)
    if not rows:
        return None
    grow = len(cur) - len(text)
    chunk = strict.python_chunk(cur, start, end + grow)
    errs = error_nodes(cur, "python")
    if chunk is None or not strict.compiles(cur[chunk[0] : chunk[1]]) or errors_in_range(errs, start, end + grow) \
            or _added_outside(before, errs, start, end, end + grow):
        return None
    new = cur[start : end + grow]
    return Outcome(confine(text, start, end, new), new, "",
                   {"reindented": [r + 1 for r in rows], "rounds": 0, "errors_before": len(before), "errors_after": 0})


def _code_widths(text: str, a: int = 0, b: int | None = None) -> list[int]:
    return [_indent_width(x) for x in text[a:b].split("\n") if x.strip() and not x.lstrip().startswith("#")]


def _indent_unit(text: str) -> int:
    """2 where at least four in five indented code lines of ``text`` are that many columns in steps but not four,
    and two or more are not four in steps (a two-space file, not one line two columns off), else PEP 8's 4."""
    widths = [w for w in _code_widths(text) if w]
    fits = lambda unit: sum(w % unit == 0 for w in widths) >= 0.8 * len(widths)  # noqa: E731
    return 2 if sum(w % 4 == 2 for w in widths) >= 2 and fits(2) and not fits(4) else 4


def _off_unit(text: str, a: int, b: int, unit: int) -> int:
    return sum(w % unit != 0 for w in _code_widths(text, text.rfind("\n", 0, a) + 1, b))


REINDENT_ROWS = 40  # lines of code, from the one the compiler names upwards, that a re-indentation may be of


def _code_rows_up(text: str, row: int, start: int) -> list[int]:
    """``row`` and the rows above it with code on them, nearest first, down to the range's first line."""
    top = text.count("\n", 0, start)
    lines = text.split("\n")
    out = [row]
    for r in range(min(row, len(lines)) - 1, top - 1, -1):
        if len(out) >= REINDENT_ROWS:
            break
        if lines[r].strip() and not lines[r].lstrip().startswith("#"):
            out.append(r)
    return out


def _reindent_line(text: str, ls: int, le: int, top: int, row: int) -> tuple[str, bool] | None:
    """``text`` with the line [ls, le) given the indentation, nearest in width to its own, of a line above it in the
    definition (which starts at ``top``), or one level deeper than the line above where that opens a block, such
    that the compiler accepts the definition (True), else no longer refuses it at ``row`` or before it (False: a
    pasted block is mended line by line)."""
    line = text[ls:le]
    own = _indent_of(line)
    above = [x for x in text[top:ls].split("\n") if x.strip() and not x.lstrip().startswith("#")]
    options = {_indent_of(x) for x in above}
    if above and above[-1].rstrip().endswith(":"):  # a block's head: its body goes one level deeper
        prev = _indent_of(above[-1])
        widths = sorted({_indent_width(x) for x in above} | {0})
        step = min((b - a for a, b in zip(widths, widths[1:], strict=False) if b > a), default=4)
        options.add(prev + ("\t" if prev.startswith("\t") else " " * step))
    width = _indent_width(line)
    moved = None  # the nearest that moves the error down, where none makes the definition compile
    for ind in sorted(options - {own}, key=lambda x: (abs(_indent_width(x) - width), _indent_width(x))):
        cand = text[:ls] + ind + line[len(own) :] + text[le:]
        after = strict.compile_error_row(cand, top, ls + len(ind) + len(line) - len(own), any_error=True)
        if after is None:
            return cand, True
        if after > row and moved is None:
            moved = cand
    return None if moved is None else (moved, False)


_PUNCT = re.compile(r"[^\w\s]{1,3}")


def _insert_missing(cur: str, start: int, errors: list[ErrorNode]) -> tuple[str, int]:
    """``cur`` with the punctuation tree-sitter reports as MISSING inserted where it expected it."""
    points = sorted({(s - start, kind[8:]) for kind, s, t in errors
                     if kind.startswith("MISSING ") and s == t and 0 <= s - start <= len(cur)
                     and _PUNCT.fullmatch(kind[8:])}, reverse=True)
    for pos, token in points:
        cur = cur[:pos] + token + cur[pos:]
    return cur, len(points)


# ---- fill holes --------------------------------------------------------------------------------------------
# the completion core's answers for a hole: (document, its offset with the hole taken out, the hole, its index,
# the view's index in hole_views) -> the lines it would show there, best first; the engine's runs the completion
# pipeline (drafts, samples, the scorer, the checks), tests script it
Propose = Callable[[str, int, "Hole", int, int], list[str]]


FILL_BUDGET_S = 10.0  # no hole is started after this long (a range of 700 `???` lines held the model thread 6 min)
MAX_HOLES = 64  # holes one command looks at (each is an Invoked completion, ~0.4 s: more never start in time)
# Python's compiler reads a definition this long around a fill (a class of 400+ lines is common; tree-sitter alone
# let a body `if x:` without its block through in one); the keystroke check and Repair keep their 400
FILL_CHUNK_LINES = 5_000


def fill_holes(text: str, start: int, end: int, lang: str | None, propose: Propose, *,
               on_hole: Callable[[int, int], None] | None = None, budget_s: float = FILL_BUDGET_S) -> Outcome:
    """Complete each placeholder in the range, one after another, with the others (filled or not) as context.

    A hole is completed as the cursor would be where it stands, the placeholder taken out: what the completion
    core proposes there (a line, a statement, a body), best first; the first that is not empty and adds no syntax
    error is the hole's edit, else the hole stays as it is. Holes not started within ``budget_s``, and those past
    the first :data:`MAX_HOLES`, stay too (the model thread is free for completions again sooner; the command can
    be run again for them). Each fill is judged on :func:`neutral_holes`: sound there, and sound relative to it.
    """
    found = find_holes(text, start, end)
    if not found:
        return Outcome(reason="no holes in the range")
    holes = found[:MAX_HOLES]
    cur, shift = text, 0
    edits: list[Edit] = []
    tried = 0
    t0 = time.perf_counter()
    left = len(found) - len(holes)
    for i, h in enumerate(holes):
        if i and time.perf_counter() - t0 > budget_s:
            left = len(found) - i
            break
        if on_hole is not None:
            on_hole(i, len(holes))
        a, b = h.start + shift, h.end + shift
        check = neutral_holes(cur, lang)  # this hole and the others as values: tree-sitter reads the rest as a whole
        before = _error_lines(check, error_nodes(check, lang))
        ls = cur.rfind("\n", 0, a) + 1
        head = cur[ls:a]  # what stands before the hole on its line (`def f(x): ` before `...`)
        nl = cur.find("\n", b)
        crlf = (cur[nl - 1 : nl] if nl > 0 else cur[ls - 2 : ls - 1]) == "\r"
        proposals = (c for v, (doc, at) in enumerate(hole_views(cur, Hole(a, b, h.inline)))
                     for c in propose(doc, at, h, i, v))  # the next view is asked only when one fills nothing
        for cand in proposals:
            tried += 1
            cand = _shape_fill(cand, h.inline, not head.strip())
            if not cand.strip() or is_placeholder(cand) or _only_comments(cand, lang):
                continue
            if crlf:  # the document's line ends
                cand = crlf_lines(cand)
            # a body on the lines below a head: the blanks between the head and the hole go with the hole
            lead = min(len(head) - len(head.rstrip(" \t")), h.start - start) if cand[:1] in "\r\n" else 0
            # sound where it is written, and no error on any other line that had none: a completion may open a
            # block the user goes on to write (`if x {`), a fill may not (the function's `}` would close it, the
            # file's end then misses one)
            fill = [Edit(a - lead, b, cand)]
            errors = error_nodes(check[: a - lead] + cand + check[b:], lang)
            if not sound_edits(check, fill, lang, errors, FILL_CHUNK_LINES) and not errors_spread(
                    check, fill, lang, before=before, errors=errors):
                edits.append(Edit(h.start - lead, h.end, cand))
                cur = cur[: a - lead] + cand + cur[b:]
                shift += len(cand) - (b - a + lead)
                break
    stats = {"holes": len(found), "filled": len(edits), "proposed": tried, "not_started": left}
    if not edits:
        why = "no hole could be filled without syntax errors" if tried else "nothing to propose for the holes"
        if left:
            why += f" ({left} not started: select fewer)"
        return Outcome(reason=why, stats=stats)
    if errors_spread(neutral_holes(text, lang), edits, lang):
        return Outcome(reason="the filled range adds syntax errors", stats=stats)
    return Outcome(edits, cur[start : end + shift], "", stats)


def neutral_holes(text: str, lang: str | None) -> str:
    """``text`` with each placeholder inside a line written as ``0`` (padded to its length, so offsets stay) where
    its line has a syntax error: what Fill holes judges a fill on. Ten `???` lines or more made tree-sitter wrap
    them all in one ERROR node, where no fill counted as parsing (8 of 20 filled); with its own `???` kept, a hole
    inside a statement of several lines made the whole function an error, and any fill passed."""
    holes = [h for h in find_holes(text, 0, len(text)) if h.inline]
    if not holes or not syntax.is_supported(lang):
        return text
    broken = _error_lines(text, error_nodes(text, lang))
    starts = _line_starts(text)
    out, last = [], 0
    for h in holes:
        if bisect.bisect_right(starts, h.start) - 1 in broken:
            out += [text[last : h.start], "0".ljust(h.end - h.start)]
            last = h.end
    return "".join(out) + text[last:]


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _error_lines(text: str, errors: list[ErrorNode]) -> set[int]:
    """The lines the error nodes span."""
    starts = _line_starts(text)
    out: set[int] = set()
    for _, s, e in errors:
        out.update(range(bisect.bisect_right(starts, s) - 1, bisect.bisect_right(starts, max(s, e - 1))))
    return out


def errors_spread(text: str, edits: list[Edit], lang: str | None, *, before: set[int] | None = None,
                  errors: list[ErrorNode] | None = None) -> int:
    """Lines of the result with a syntax error that had none before, other than the lines the edits wrote.

    By lines, not by node: around other errors tree-sitter regroups its ERROR nodes when a line changes (after
    one of three `x = ???` lines is filled the others' errors start elsewhere), so nodes matched by place would
    call them new. ``before``: ``text``'s error lines, ``errors``: the result's error nodes, when the caller has
    them.
    """
    if not edits or not syntax.is_supported(lang):
        return 0
    new = apply_edits(text, edits)
    after = _error_lines(new, error_nodes(new, lang) if errors is None else errors)
    if not after:
        return 0
    before = _error_lines(text, error_nodes(text, lang)) if before is None else before
    written: list[tuple[int, int, int]] = []  # (first, last line of the result an edit wrote, line shift after it)
    shift = delta = 0
    for e in sorted(edits, key=lambda e: e.start):
        first = new.count("\n", 0, e.start + shift)
        delta += e.text.count("\n") - text.count("\n", e.start, e.end)
        written.append((first, first + e.text.count("\n"), delta))
        shift += len(e.text) - (e.end - e.start)
    spread = 0
    for line in after:
        moved = 0
        for first, last, d in written:
            if line < first:
                break
            if line <= last:
                moved = None
                break
            moved = d
        spread += moved is not None and line - moved not in before
    return spread


def crlf_lines(text: str) -> str:
    """``text`` with CRLF line ends (a fill or reply read with "\\n", for a document that has them)."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def is_placeholder(cand: str) -> bool:
    """A fill that is itself a hole, or Python's ``pass``: the placeholder again, in other words."""
    return cand.strip() == "pass" or bool(find_holes(cand, 0, len(cand)))


def _only_comments(cand: str, lang: str | None) -> bool:
    """A fill of comment lines alone: it says what the hole should do and does not do it (after a request's
    words, ``// TODO: rotate left``, the model's likeliest line goes on with the comment)."""
    return all(is_comment_line(ln, lang) for ln in cand.split("\n") if ln.strip())


def _shape_fill(cand: str, inline: bool, starts_line: bool) -> str:
    """One line for a hole inside a line; lines for a hole of its own, whose first stands where the hole does; a
    hole after a head (``def f(x): ...``) keeps the newline a body below it begins with."""
    if inline:
        return cand.split("\n", 1)[0].strip()
    if not starts_line and cand.lstrip(" \t").startswith(("\n", "\r\n")):
        return cand.lstrip(" \t").rstrip()
    return cand.lstrip("\r\n").rstrip()


def _slack(job: SpanJob, n: int) -> int:
    """<fill> slots after a free span (room to grow); none when the rest is clamped."""
    return 0 if job.clamp_rest else max(2, n // 4)


# ---- the model: a canvas builder on the local backend's decoding core ------------------------------------
class WorkBound(Cancelled):
    """An edit asked for more decoder passes than one command may spend (the bound keeps the model thread
    from being held for minutes by one long selection)."""


class ModelFiller:
    """Denoises :class:`SpanJob` s with the resident model; call it on the engine's model thread only.

    Builds each canvas (span tokens noised | kept, inserted slots, ``<fill>`` slack, then the suffix head)
    and hands it to :meth:`LocalInfiller.denoise_canvas`, which encodes the prefix through the document's
    cache and denoises; :func:`canvas.commit` and :func:`canvas.detokenize` turn the tokens back into text.
    A middle longer than the canvas is done in consecutive chunks, each seeing the already rewritten chunks
    as prefix and the rest as suffix. ``on_step(step, max_steps)`` runs between denoising steps (progress,
    staleness checks); ``cancel`` stops within one step; after ``max_passes`` decoder passes in all the job
    stops with :class:`WorkBound`.
    """

    def __init__(self, core: LocalInfiller, doc_key: str | None, *, cancel: CancelToken | None = None,
                 max_steps: int | None = None, on_step: Callable[[int, int], None] | None = None,
                 max_passes: int | None = None) -> None:
        self.core = core
        self.doc_key = doc_key
        self.cancel = cancel
        self.on_step = on_step
        self.max_steps = max_steps
        self.max_passes = max_passes
        self.steps = 0
        self.calls = 0

    # ---- one job ------------------------------------------------------------------------------------------
    def __call__(self, job: SpanJob) -> str:
        core = self.core
        cap = core.span_capacity
        if not job.middle:
            return self._denoise(job.prefix, "", [], [], [], [], job.suffix, job, min(job.max_new, cap), 0)
        ids, offs = core.tok.encode_with_offsets(job.middle)
        n = len(ids)
        if n == 0:
            return job.middle
        starts = [o[0] for o in offs] + [len(job.middle)]
        noised = self._noise_flags(job, offs)
        # tokens sharing a character (a split multi-byte character) are noised together
        for k in range(1, n):
            if offs[k][0] < offs[k - 1][1] and (noised[k] or noised[k - 1]):
                noised[k] = noised[k - 1] = True
        inserts = [0] * n
        if job.extra > 0:
            for k in range(n):
                if noised[k] and (k + 1 == n or not noised[k + 1]):
                    inserts[k] = job.extra
        clean = [k == 0 or offs[k][0] >= offs[k - 1][1] for k in range(n)] + [True]  # chunk boundaries
        out: list[str] = []
        i = 0
        chunk_no = 0
        while i < n:
            j, used = i, 0
            while j < n and used + 1 + inserts[j] + _slack(job, j + 1 - i) <= cap:
                used += 1 + inserts[j]
                j += 1
            j = max(j, i + 1)
            while j < n and not clean[j] and j > i + 1:
                j -= 1
            used = sum(1 + inserts[k] for k in range(i, j))
            a, b = starts[i], starts[j]
            piece = job.middle[a:b]
            if job.clamp_rest and not any(noised[i:j]):
                out.append(piece)  # nothing to denoise here
            else:
                prefix = job.prefix + "".join(out)
                suffix = job.middle[b:] + job.suffix
                rel = [(o[0] - a, o[1] - a) for o in offs[i:j]]
                slack = min(_slack(job, j - i), max(0, cap - used))
                out.append(self._denoise(prefix, piece, ids[i:j], rel, noised[i:j], inserts[i:j], suffix, job,
                                         slack, chunk_no))
            chunk_no += 1
            i = j
        return "".join(out)

    def rank(self, prefix: str, options: list[str], suffix: str) -> list[float]:
        """Each option's score between ``prefix`` and ``suffix`` (mean log-probability of its tokens and its
        end, from the core's bidirectional scorer): one decoder pass for all of them."""
        import torch

        from .types import Candidate

        core = self.core
        with torch.inference_mode():
            cache, _, _ = core.prefix_cache(prefix, self.doc_key, self.cancel)
            scored = core.score(cache, [Candidate(o, source="diffusion") for o in options], core.suffix_head(suffix),
                                "", False, self.cancel)
        self.calls += 1
        self.steps += 1
        total = {c.text: c.features.get("total", float("-inf")) for c in scored}
        return [total.get(o, float("-inf")) for o in options]

    def _noise_flags(self, job: SpanJob, offs: list[tuple[int, int]]) -> list[bool]:
        import torch

        n = len(offs)
        if job.noise is None:
            k = max(1, round(job.fraction * n)) if job.fraction > 0 else 0
            g = torch.Generator().manual_seed(job.seed)
            chosen = set(torch.randperm(n, generator=g)[:k].tolist())
            return [i in chosen for i in range(n)]
        flags = [False] * n
        for a, b in job.noise:
            hit = False
            for i, (x, y) in enumerate(offs):
                if (x < b and y > a) or (a == b and x < a <= y):
                    flags[i] = hit = True
            if not hit and a == b and n:  # a point before the first token
                flags[0] = True
        return flags

    def _step(self, step: int, total: int) -> None:
        if self.max_passes is not None and self.steps >= self.max_passes:
            raise WorkBound(f"stopped after {self.steps} denoising steps (the bound for one edit): "
                            "select less")
        self.steps += 1
        if self.on_step is not None:
            self.on_step(step, total)

    def _denoise(self, prefix: str, piece: str, ids: list[int], offs: list[tuple[int, int]], noised: list[bool],
                 inserts: list[int], suffix: str, job: SpanJob, slack: int, chunk_no: int) -> str:
        """One canvas: the piece's tokens (noised or kept), inserted slots and slack, then the suffix head."""
        import torch

        from . import canvas as cv

        core, tok = self.core, self.core.tok
        g = torch.Generator().manual_seed((job.seed * 1_000_003 + chunk_no) % 2**62)
        fresh = iter(core.start_slots(sum(noised) + sum(inserts) + (0 if ids else max(1, slack)), g).tolist())
        row: list[int] = []
        free: list[bool] = []
        origin: list[int] = []  # index of the original token a slot holds, -1 for new slots
        for k, t in enumerate(ids):
            row.append(next(fresh) if noised[k] else t)
            free.append(noised[k] or not job.clamp_rest)
            origin.append(k)
            for _ in range(inserts[k]):
                row.append(next(fresh))
                free.append(True)
                origin.append(-1)
        if not ids:
            row = list(fresh)
            free = [True] * len(row)
            origin = [-1] * len(row)
        elif slack and tok.fill_id is not None:
            fill = int(tok.mask_id) if core.mode == "mask" and tok.mask_id is not None else int(tok.fill_id)
            row += [fill] * slack
            free += [True] * slack
            origin += [-1] * slack
        f = len(row)
        canvas, free_t = cv.span_canvas(row, free, core.suffix_head(suffix))
        warm = bool(ids) and not all(noised)
        prep = cv.Prepared(prefix, canvas, free_t, g, warm=warm, max_steps=self.max_steps)
        den = core.denoise_canvas(prep, self.doc_key, self.cancel, self._step)
        self.calls += 1
        assert den.tokens is not None
        out, kept = cv.commit(den.tokens[0, :f].tolist(), core.stop_ids, origin, open_end=not job.clamp_rest)
        return cv.detokenize(tok, out, kept, piece, ids, offs)
