"""Drafts from what the files already say: lines retrieved around and away from the cursor.

About a fifth of the lines a user is about to type already occur verbatim somewhere above the cursor or in
another open file of the same language (`bench/results/context*.json`). The model cannot copy them from its
short window reliably, so the engine hands a few retrieved lines to the model as *drafts*: the model scores
each one given both sides of the cursor, beside its own samples, and the gate decides (see :mod:`local`,
:mod:`gate`).

Sources, all text-only and bounded:

* ``successor`` — lines that followed a line equal to the one above the cursor (any indexed document);
* ``shape`` — the same, for a line of the same shape (identifiers, numbers and strings abstracted);
* ``predecessor`` — lines that came before a line equal to the one below the cursor: the suffix's side of
  ``successor`` (a header above a body the file wrote before, the line before a closer);
* ``prefix`` — lines near the cursor (or in other open documents) that start with what is typed on the line;
* ``analogy`` — a line near the cursor that the typed part matches token for token (blanks too) but for a word or
  two (``retry=_first_set(retry,`` against ``wait=_first_set(wait, self.wait),``): its rest, those words
  replaced as the typed part replaced them (`` self.retry),``), as code written in parallel rows goes on;
* ``match`` — what followed, to the end of its line, the longest earlier (or later) occurrence of the end of what
  is typed (`fa` after `if (ch === '_') return ` goes on as `lse;` where the file wrote that before): the
  prefix source needs the whole typed line to start a line, this one only its last characters.

(The previous line at the cursor's indentation, as a draft for the model to edit, was tried and dropped: in a
first 300-case dev run none of its 74 candidates was right; that run's output was not kept, and the draft edit
it relied on was measured and removed, ``bench/results/draft_edit_ab.json``.)

The index is kept incrementally: a change re-indexes only the lines it touched (and the two before them,
whose "next line" may have changed), never the whole document per keystroke.

Besides the open documents, the files of the cursor's workspace folder count as one more source (:class:`Folder`:
read from disk by :mod:`folders`, one set of maps for all files of a language family: one lookup per table serves
them all, however many files). An open document hides its file: the file may hold the saved version of the very
line being typed. The hiding happens when drafts are read (the hidden file's own counts are subtracted), never in
the folder's maps, so that the sessions of a shared daemon on one folder share one :class:`Folder` (the engine's
store) while each hides only the files it has open.
"""

from __future__ import annotations

import os
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice

from .folders import language_of, too_broad, uri_to_path
from .syntax.languages import comment_markers, is_comment_line, kin
from .syntax.plan import CLOSERS  # what editors auto-insert right of the cursor

MAX_LINE_CHARS = 200  # longer lines are not indexed (minified code, data)
MAX_DOC_LINES = 50_000  # documents with more lines are not indexed (the local scan still works)
MAX_TOTAL_LINES = 200_000  # across documents; the least recently used ones leave the index first
MAX_BUCKET = 512  # distinct lines kept per key: bounds memory and the time of one lookup
LOCAL_ABOVE, LOCAL_BELOW = 300, 100  # lines around the cursor scanned directly for ``prefix`` drafts
WINDOW_ABOVE, WINDOW_BELOW = 20_000, 8000  # characters around the cursor those lines are read from
# ``match``: key lengths tried, longest first (the typed text's last characters); occurrences read per key and
# document, so that a common key in a big file costs a bounded number of C-level searches
MATCH_KEYS = (64, 40, 24, 14, 8)  # the whole typed text first when shorter than 64
MATCH_SCAN = 64
# ``analogy``: lines scanned above and below the cursor; tokens of the typed part, blanks not counted, that must
# equal the line's (so ``self.x =`` does not take any attribute's right side); most words replaced. Chosen on the
# dev splits: at each keystroke, the nearest such line's rest was right 2 % of the time with up to one equal token,
# 16 % with two, 24 % with three and 54 % with four or more; live, four kept nearly all of three's gain for fewer
# wrong suggestions read (bench/results/analogy_rows.json, analogy_ab.json)
ANALOGY_ABOVE, ANALOGY_BELOW, ANALOGY_SAME, ANALOGY_SUBS = 30, 10, 4, 2
_NAME = re.compile(r"[\w$]+")  # a word as editors and menus read one (``$`` is JavaScript's)
_NAME_BEFORE = re.compile(r"[\w$]+\Z")
# a line's tokens, every character in one: a name, a run of blanks, or one other character (analogies match by
# them; a word head's tail goes on by them)
_TOKEN = re.compile(r"[\w$]+|[^\S\r\n]+|[^\w$\s]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as the documents (and LSP) count lines
_HEAD = re.compile(r"[A-Za-z_$][\w$]*|\S")
_SHAPE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`|\b\d[\w.]*|[A-Za-z_$][\w$]*")
_KEYWORDS = frozenset(
    "def class return if elif else for while in not and or is None True False import from as with try except "
    "finally raise yield lambda pass break continue async await self const let var function new this typeof "
    "export default switch case throw catch null undefined interface type extends implements public private "
    "static void int".split()
)


@dataclass
class Draft:
    text: str  # what would be inserted at the cursor (after the part of the line already typed)
    source: str  # successor | shape | predecessor | prefix | match
    strength: float  # how well the draft's surroundings matched the cursor's, 0..1
    here: bool  # found in the cursor's own document


def shape(line: str) -> str:
    """The line with identifiers, numbers and strings abstracted (keywords kept): its syntactic shape."""
    return _SHAPE.sub(lambda m: m.group(0) if m.group(0) in _KEYWORDS else ("s" if m.group(0)[0] in "\"'`" else "x"),
                      line)


def _key(line: str) -> str:
    s = line.strip()
    return s if 0 < len(s) <= MAX_LINE_CHARS else ""


class _Doc:
    """One document's lines and what they contribute to its maps."""

    __slots__ = ("_text", "lang", "lines", "maps")

    def __init__(self, lang: str | None, lines: list[str]) -> None:
        self.lang = lang
        self.lines = lines
        self.maps = _Maps()
        self._text: str | None = None

    def text(self) -> str:
        """The lines joined (built when first searched, dropped when they change)."""
        if self._text is None:
            self._text = "\n".join(self.lines)
        return self._text


def _next_line(lines: list[str], i: int) -> int:
    """The index of the line after ``lines[i]``, skipping one blank line (-1 if none): what pairs lines."""
    for j in (i + 1, i + 2):
        if j < len(lines) and _key(lines[j]):
            return j
    return -1


def _next_key(lines: list[str], i: int) -> str:
    j = _next_line(lines, i)
    return _key(lines[j]) if j >= 0 else ""


class _Maps:
    """Multisets keyed by line: what follows a line, what follows a line shape, lines by first word."""

    def __init__(self) -> None:
        self.succ: dict[str, Counter[str]] = {}
        self.pred: dict[str, Counter[str]] = {}  # the same pairs read the other way: what came before a line
        self.shape_succ: dict[str, Counter[str]] = {}
        self.by_head: dict[str, Counter[str]] = {}

    @staticmethod
    def _bump(table: dict[str, Counter[str]], key: str, value: str, d: int) -> None:
        c = table.get(key)
        if c is None:
            if d < 0:
                return
            c = table[key] = Counter()
        elif d > 0 and value not in c and len(c) >= MAX_BUCKET:
            return
        n = c.get(value, 0) + d
        if n > 0:
            c[value] = n
        else:
            c.pop(value, None)
            if not c:
                del table[key]

    def contribute(self, lines: list[str], i: int, d: int) -> None:
        k = _key(lines[i])
        if not k:
            return
        if len(k) >= 4:
            m = _HEAD.match(k)
            if m:
                self._bump(self.by_head, m.group(0), k, d)
        nxt = _next_key(lines, i)
        if nxt:
            self._bump(self.succ, k, nxt, d)
            self._bump(self.pred, nxt, k, d)
            self._bump(self.shape_succ, shape(k), nxt, d)

    def contribute_all(self, lines: list[str], d: int) -> None:
        """Every line of ``lines`` (a whole document or file) counted ``d`` times."""
        for i in range(len(lines)):
            self.contribute(lines, i, d)


class Folder:
    """The files of one language family under one workspace folder, as read from disk: one set of maps for all of
    them (one lookup per table, however many files), and each file's lines, to take its share out again when the
    file changes on disk. What is on disk is the same for every session, so one Folder may serve several
    (:meth:`ContextIndex.add_folder`); none of them changes it but to say what the disk says."""

    def __init__(self, files: Iterable[tuple[str, str, float]] = (), seen: Iterable[str] = ()) -> None:
        self.files: dict[str, list[str]] = {}
        self.mtimes: dict[str, float] = {}  # when each file was last modified, as read
        self.seen = set(seen)  # every file of the listing these were read from (the budget left some out)
        self.maps = _Maps()
        self.total = 0
        for path, text, mtime in files:
            self.put(path, text, mtime)

    def put(self, path: str, text: str | None, mtime: float = 0.0) -> None:
        """The file at ``path`` now reads ``text`` (None: it is gone or unreadable)."""
        self.mtimes.pop(path, None)
        old = self.files.pop(path, None)
        if old is not None:
            self.maps.contribute_all(old, -1)
            self.total -= len(old)
        if text is None:
            return
        lines = _LINE_BREAK.split(text)
        if len(lines) > MAX_DOC_LINES:
            return
        self.files[path] = lines
        self.mtimes[path] = mtime
        self.maps.contribute_all(lines, +1)
        self.total += len(lines)


class ContextIndex:
    """Index of the open documents' lines and of the workspace folders' files (the engine's event loop owns it)."""

    MAX_DOCS_QUERIED = 16  # other documents of the language consulted per request, most recently used first

    def __init__(self) -> None:
        self.docs: OrderedDict[str, _Doc] = OrderedDict()
        self.total = 0
        self.roots: list[str] = []  # workspace folder paths, deepest first
        self.folders: OrderedDict[tuple[str, str], Folder] = OrderedDict()  # (root, language), least recent first
        self.paths: dict[str, str] = {}  # open document URI -> its file's path
        # an open document's file as its folder holds it, as maps of its own to subtract: path -> (the folder's
        # lines they were built from, the maps)
        self._hidden: dict[str, tuple[list[str], _Maps]] = {}

    # ---- workspace folders ----------------------------------------------------------------------------------
    def set_roots(self, roots: list[str]) -> None:
        """The workspace folders (paths); the files of folders no longer among them leave the index."""
        self.roots = sorted({os.path.normpath(r) for r in roots if not too_broad(r)}, key=lambda r: (-len(r), r))
        for key in [k for k in self.folders if k[0] not in self.roots]:
            del self.folders[key]

    def root_of(self, path: str | None) -> str | None:
        """The deepest workspace folder holding ``path``."""
        if path is None:
            return None
        for r in self.roots:
            if path == r or path.startswith(r.rstrip(os.sep) + os.sep):
                return r
        return None

    def folder_key(self, path: str | None, lang: str | None) -> tuple[str, str] | None:
        """(workspace folder, language family) whose files a document at ``path`` in ``lang`` reads, if any."""
        root, family = self.root_of(path), kin(lang)
        return (root, family) if root is not None and family is not None else None

    def folder_of(self, path: str) -> Folder | None:
        """The indexed folder a file on disk belongs to (by its own extension, as the listing chose it)."""
        key = self.folder_key(path, language_of(path))
        return self.folders.get(key) if key is not None else None

    def add_folder(self, root: str, lang: str, folder: Folder, max_lines: int) -> None:
        """Install what a scan read (or another session's index of the same folder: it is shared, not copied);
        the least recently used other (folder, language) indexes leave while the lines exceed ``max_lines``."""
        if root not in self.roots:
            return
        self.folders[(root, lang)] = folder
        self.folders.move_to_end((root, lang))
        self._less(folder)  # the open files' counts now, not on the next keystroke
        self.trim(max_lines)

    def trim(self, max_lines: int) -> None:
        """Drop the least recently used folder indexes until their lines fit ``max_lines`` (0: all of them)."""
        while self.folders and (max_lines <= 0 or (
                len(self.folders) > 1 and sum(f.total for f in self.folders.values()) > max_lines)):
            del self.folders[next(iter(self.folders))]

    def put_file(self, path: str, text: str | None, mtime: float = 0.0) -> None:
        """A file under an indexed folder changed on disk (None: deleted); an open document still hides it."""
        folder = self.folder_of(path)
        if folder is not None:
            folder.put(path, text, mtime)

    def _less(self, folder: Folder) -> list[_Maps]:
        """What the folder's files that are open here contribute to its maps (subtracted when drafts are read).
        Built when a document opens or a folder is installed (about 6 µs a line), again only for a file that
        changed on disk while open."""
        out = []
        open_paths = set(self.paths.values())
        for path in [p for p in self._hidden if p not in open_paths]:
            del self._hidden[path]
        for path in open_paths:
            lines = folder.files.get(path)
            if lines is None:
                continue
            have = self._hidden.get(path)
            if have is None or have[0] is not lines:  # first asked, or the file changed on disk since
                maps = _Maps()
                maps.contribute_all(lines, +1)
                have = self._hidden[path] = (lines, maps)
            out.append(have[1])
        return out

    def disk_copy(self, uri: str) -> str | None:
        """The path of an open document's file (None if it is no file)."""
        return self.paths.get(uri)

    # ---- keeping it in sync ---------------------------------------------------------------------------------
    def open(self, uri: str, lang: str | None, text: str) -> None:
        self.close(uri)
        path = uri_to_path(uri)
        if path is not None:  # its file on disk no longer speaks (drafts subtract it): the document does
            self.paths[uri] = path
            for folder in self.folders.values():  # its counts now, not on the next keystroke
                if path in folder.files:
                    self._less(folder)
        lines = _LINE_BREAK.split(text)
        if lang is None or len(lines) > MAX_DOC_LINES:
            return
        doc = _Doc(lang, lines)
        self.docs[uri] = doc
        doc.maps.contribute_all(lines, +1)
        self.total += len(lines)
        while self.total > MAX_TOTAL_LINES and len(self.docs) > 1:
            old = next(iter(self.docs))
            self.close(old)

    def close(self, uri: str) -> None:
        self.paths.pop(uri, None)  # (its file's counts leave _hidden at the next _less: a re-open keeps them)
        doc = self.docs.pop(uri, None)
        if doc is not None:
            self.total -= len(doc.lines)

    def touch(self, uri: str) -> None:
        if uri in self.docs:
            self.docs.move_to_end(uri)

    def splice(self, uri: str, first: int, old_last: int, new_lines: list[str]) -> None:
        """Lines ``first..old_last`` (inclusive) were replaced by ``new_lines``."""
        doc = self.docs.get(uri)
        if doc is None:
            return
        maps = doc.maps
        lo = max(0, first - 2)  # their "next line" may change
        old_last = min(old_last, len(doc.lines) - 1)
        for i in range(lo, old_last + 1):
            maps.contribute(doc.lines, i, -1)
        doc.lines[first : old_last + 1] = new_lines
        doc._text = None
        self.total += len(new_lines) - (old_last + 1 - first)
        for i in range(lo, min(len(doc.lines), first + len(new_lines))):
            maps.contribute(doc.lines, i, +1)
        if len(doc.lines) > MAX_DOC_LINES:
            self.close(uri)

    def lines_of(self, uri: str) -> list[str] | None:
        doc = self.docs.get(uri)
        return None if doc is None else doc.lines

    # ---- drafts ---------------------------------------------------------------------------------------------
    def drafts(self, uri: str, lang: str | None, text: str, offset: int, *, limit: int = 3,
               document: bool = True, workspace: bool = True, match: bool = False,
               before: bool = False, own_line: str | None = None) -> list[Draft]:
        """Up to ``limit`` distinct drafts for the cursor at ``offset`` of ``text``, best first.

        ``document``: drafts from the cursor's own document; ``workspace``: from other open documents of
        ``lang`` (at most MAX_DOCS_QUERIED of them); ``match``, ``before``: the ``match`` and ``predecessor``
        sources too (the engine asks for them on Invoked requests). ``own_line``: the cursor's line as the index
        holds it, where ``text`` reads it otherwise (without the closers the editor put right of the cursor).
        """
        ls = text.rfind("\n", 0, offset) + 1
        line_prefix = text[ls:offset]
        typed = line_prefix.lstrip()
        indent = line_prefix[: len(line_prefix) - len(typed)]
        if len(typed) > MAX_LINE_CHARS or lang is None:
            return []
        above = lines_above(text, ls)
        prev = next((_key(x) for x in reversed(above[-3:]) if _key(x)), "")
        # (maps, whether they are the cursor's document's, maps whose counts do not count: hidden files)
        sources: list[tuple[_Maps, bool, list[_Maps]]] = []
        if document and uri in self.docs:
            sources.append((self.docs[uri].maps, True, []))
        family = kin(lang)
        others = [d for u, d in reversed(self.docs.items()) if u != uri and kin(d.lang) == family] if workspace else []
        sources += [(d.maps, False, []) for d in others[: self.MAX_DOCS_QUERIED]]
        home = self.folder_key(self.paths.get(uri), lang)
        if workspace and home in self.folders:  # the files of the cursor's workspace folder, read from disk
            self.folders.move_to_end(home)
            folder = self.folders[home]
            sources.append((folder.maps, False, self._less(folder)))
        out: dict[str, Draft] = {}
        # a comment copied from elsewhere is not what the user is about to write where code goes: comment lines
        # are drafts only once a comment (or its marker's first character) is typed
        commenting = bool(typed) and (is_comment_line(typed, lang)
                                      or any(m.startswith(typed) for m in comment_markers(lang)))

        def add(full: str, source: str, strength: float, here: bool) -> None:
            if not full.startswith(typed) or len(full) <= len(typed):
                return
            if not commenting and is_comment_line(full, lang):
                return
            cand = full[len(typed) :]
            old = out.get(cand)
            if old is None or old.strength < strength:
                out[cand] = Draft(cand, source, round(strength, 3), here)

        # pairs that reach or pass over the cursor's line are the cursor's own (the line above a blank cursor line
        # with the line below, the line above with what is being typed): the index holds them for the cursor's
        # document, the counts here do not
        cur_end = text.find("\n", offset)
        cur_end = len(text) if cur_end < 0 else cur_end
        around, c = _around(text, ls, cur_end)
        if own_line is not None:
            around[c] = own_line
        own = Counter((_key(around[i]), _key(around[j])) for i in range(c + 1)
                      if _key(around[i]) and (j := _next_line(around, i)) >= c)
        if prev:
            for source, weight, keyof, table in (("successor", 1.0, str, "succ"), ("shape", 0.6, shape, "shape_succ")):
                key = keyof(prev)
                for maps, here, less in sources:
                    nexts = _without(getattr(maps, table).get(key), less, table, key)
                    if nexts and here:
                        nexts = _minus(nexts, own, lambda line, keyof=keyof, key=key: keyof(line) == key, first=True)
                    if not nexts:
                        continue
                    total = sum(nexts.values())
                    for full, n in nexts.most_common(8):
                        add(full, source, weight * (1.0 if here else 0.8) * n / total, here)
        after = _next_key(around, c)
        if before and after:
            for maps, here, less in sources:
                came = _without(maps.pred.get(after), less, "pred", after)
                if came and here:
                    came = _minus(came, own, lambda line: line == after, first=False)
                if not came:
                    continue
                total = sum(came.values())
                for full, n in came.most_common(8):
                    add(full, "predecessor", 0.8 * (1.0 if here else 0.8) * n / total, here)
        if typed:
            cur_line = text[ls:cur_end].strip()
            if document:
                # lines near the cursor that start with what is typed: the nearest at the same indentation first
                below = lines_below(text, offset)
                near = list(enumerate(reversed(above[-LOCAL_ABOVE:]), 1)) + list(enumerate(below[:LOCAL_BELOW], 1))
                for d, x in sorted(near, key=lambda t: t[0]):
                    k = _key(x)
                    if k and k != cur_line and len(k) >= 4:
                        same = x[: len(x) - len(x.lstrip())] == indent
                        add(k, "prefix", (0.9 if same else 0.7) / (1 + d / 50), True)
                for d, x, rest, _ in analogies(typed, analogy_rows(above, below), text[offset:cur_end]):
                    same = x[: len(x) - len(x.lstrip())] == indent
                    add(typed + rest, "analogy", (0.9 if same else 0.7) / (1 + d / 50), True)
            if match and (document or workspace):
                hays = [(text, (ls, cur_end), True)] if document else []
                if workspace:
                    hays += [(d.text(), None, False) for d in others[: self.MAX_DOCS_QUERIED]]
                for rank, (cont, n, here) in enumerate(_match_continuations(typed, hays, offset)):
                    add(typed + cont, "match", (0.8 if here else 0.6) * n / (rank + 1), here)
            m = _HEAD.match(typed)
            head = m.group(0) if m else ""
            for maps, here, less in sources:
                if here or len(out) >= limit or not head:
                    continue
                heads = [head] if m and m.end() < len(typed) else [h for h in maps.by_head if h.startswith(head)][:64]
                for h in heads:
                    bucket = _without(maps.by_head.get(h), less, "by_head", h)
                    for full, n in (bucket or Counter()).most_common(MAX_BUCKET):
                        add(full, "prefix", 0.3 * min(1.0, n / 3), False)
        ranked = sorted(out.values(), key=lambda d: -d.strength)
        return ranked[:limit]


def lines_above(text: str, ls: int) -> list[str]:
    """The lines above the line that starts at ``ls``, as far as WINDOW_ABOVE characters reach."""
    return text[max(0, ls - WINDOW_ABOVE) : ls].split("\n")[:-1] if ls else []


def lines_below(text: str, offset: int) -> list[str]:
    """The lines below the cursor's line (``offset`` on it), as far as WINDOW_BELOW characters reach."""
    return text[offset : offset + WINDOW_BELOW].split("\n")[1:]


def analogy_rows(above: list[str], below: list[str]) -> list[tuple[int, str]]:
    """The lines an analogy may copy: ANALOGY_ABOVE of ``above`` (:func:`lines_above`) and ANALOGY_BELOW of
    ``below`` (:func:`lines_below`), as (distance, line), nearest first (above before below at one distance)."""
    rows = list(enumerate(reversed(above[-ANALOGY_ABOVE:]), 1)) + list(enumerate(below[:ANALOGY_BELOW], 1))
    return sorted(rows, key=lambda t: t[0])


def analogies(typed: str, rows: list[tuple[int, str]], right: str, limit: int = 2,
              min_same: int = ANALOGY_SAME) -> list[tuple[int, str, str, int]]:
    """``analogy`` drafts: for the typed part of a line (ending at a token's end, nothing but closers right of the
    cursor), the nearby lines ``rows`` ((distance, line), nearest first) whose tokens the typed ones equal but for
    up to ANALOGY_SUBS words, one for one (at least ``min_same`` non-blank tokens equal); each one's rest with those
    words replaced wherever they stand alone in it. Up to ``limit`` (distance, line, rest, equal tokens), distinct
    rests (``bench.analogy_rows`` counts them by their equal tokens)."""
    if not typed or _NAME.match(typed[-1]) or right.strip("".join(CLOSERS) + " \t"):
        return []
    mine = _TOKEN.findall(typed)
    out: list[tuple[int, str, str, int]] = []
    for d, line in rows:
        src = line.strip()
        if not src or len(src) > MAX_LINE_CHARS:
            continue
        theirs = list(_TOKEN.finditer(src))
        if len(theirs) <= len(mine):
            continue
        swap: dict[str, str] = {}
        back: dict[str, str] = {}
        same = 0
        for a, m in zip(mine, theirs, strict=False):
            b = m.group(0)
            if a == b:
                same += not a.isspace()
            elif not (_NAME.fullmatch(a) and _NAME.fullmatch(b)) or swap.get(b, a) != a or back.get(a, b) != b:
                break
            else:
                swap[b], back[a] = a, b
        else:
            if not swap or len(swap) > ANALOGY_SUBS or same < min_same:
                continue
            rest = src[theirs[len(mine) - 1].end() :]
            for b, a in swap.items():
                rest = re.sub(rf"(?<![\w$]){re.escape(b)}(?![\w$])", a, rest)
            rest = rest.rstrip()
            if rest.strip() and all(rest != r for _, _, r, _ in out):
                out.append((d, line, rest, same))
                if len(out) >= limit:
                    break
    return out


def _around(text: str, ls: int, cur_end: int) -> tuple[list[str], int]:
    """The two lines above the cursor's line (``ls``..``cur_end``), that line, and the two below; and the cursor
    line's index there."""
    up = text[max(0, ls - 2000) : ls].split("\n")[:-1][-2:] if ls else []
    down = text[cur_end : cur_end + 4000].split("\n")[1:3]
    return [*up, text[ls:cur_end], *down], len(up)


def _without(counts: Counter[str] | None, less: list[_Maps], table: str, key: str) -> Counter[str] | None:
    """``counts`` (a folder's, under ``key`` in ``table``) less what the hidden files' maps count there."""
    if not counts or not less:
        return counts
    subs = [c for m in less if (c := getattr(m, table).get(key))]
    if not subs:
        return counts
    out = Counter(counts)
    for c in subs:
        out.subtract(c)
    return +out


def _minus(counts: Counter[str], own: Counter[tuple[str, str]], keyed: Callable[[str], bool],
           first: bool) -> Counter[str]:
    """``counts`` less the cursor's own pairs: those whose first (or second) line ``keyed`` accepts, counted
    under the other line."""
    out = Counter(counts)
    for (a, b), n in own.items():
        if keyed(a if first else b):
            out[b if first else a] -= n
    return +out


def _match_continuations(typed: str, hays: list[tuple[str, tuple[int, int] | None, bool]], offset: int,
                         limit: int = 2) -> list[tuple[str, float, bool]]:
    """Rests of lines that followed the longest key (the last characters of ``typed``) found in ``hays``.

    ``hays``: (text, the span to skip (the cursor's own line) or None, whether it is the cursor's document).
    Keys are tried longest first (MATCH_KEYS, at most the typed text); the first length with an occurrence
    followed by something on its line decides. Returns (continuation, strength 0..1, here), the most
    frequent first, then the nearest to ``offset``: strength is the key's share of a 24-character match."""
    if len(typed) < MATCH_KEYS[-1]:
        return []
    longest = min(len(typed), MATCH_KEYS[0])
    for size in [longest, *(k for k in MATCH_KEYS if k < longest)]:
        key = typed[-size:]
        if not any(ch.isalnum() or ch == "_" for ch in key):
            return []
        found: dict[str, list[float]] = {}  # continuation -> [count, nearest distance, here]
        for hay, skip, here in hays:
            start, seen = 0, 0
            while seen < MATCH_SCAN:
                i = hay.find(key, start)
                if i < 0:
                    break
                start = i + 1
                seen += 1
                if skip is not None and skip[0] <= i <= skip[1]:
                    continue
                j = i + len(key)
                e = hay.find("\n", j)
                cont = hay[j : len(hay) if e < 0 else e].rstrip()
                if not cont.strip() or len(cont) > MAX_LINE_CHARS:
                    continue
                dist = abs(i - offset) if here else 1e9
                f = found.setdefault(cont, [0.0, dist, float(here)])
                f[0] += 1
                f[1] = min(f[1], dist)
                f[2] = max(f[2], float(here))
        if found:
            ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:limit]
            total = sum(v[0] for v in found.values())
            share = min(1.0, len(key) / 24)
            return [(c, share * v[0] / total, bool(v[2])) for c, v in ranked]
    return []


# ---- the rest of a word, when the line is not sure ----------------------------------------------------------
WORD_WINDOW = 200_000  # characters each side of the cursor searched for the words a typed part may complete to
# a word head is shown only when the document has at most this many words that complete the typed part: typing the
# dev splits' lines, the heads each rival up to the fifth added were accepted at least 65 % of the time (the gate's
# own precision target; 4 -> 5: 66 and 65 % on the two splits), the sixth's 78 % on one split and 30 % on the
# other, six to eight 55 %, eight to twelve 33 % (bench/results/word_head_ab.json)
MAX_WORD_RIVALS = 5
# with more rivals, the head is shown when its word is the one that completes the typed part most often within this
# many characters each side (a tie is no favourite): typing the dev splits, those heads were accepted 97 times for
# 14 more wrong reads (dev) and 24 for 13 (dev_langs), 26.5 -> 30.1 and 28.6 -> 31.2 % of the characters saved;
# 1,000 to 200,000 characters gave the same within half a point (bench/results/word_head_ab.json, session_25.favourite)
NEAR_WINDOW = 10_000


def word_before(text: str, offset: int) -> re.Match[str] | None:
    """The part of a name that ends at ``offset`` (what a menu filters by; a word head completes it), if any; at
    most 200 characters are looked at."""
    return _NAME_BEFORE.search(text, max(0, offset - 200), offset)


def word_head(text: str, offset: int, cand: str, rivals: int = MAX_WORD_RIVALS) -> str:
    """The rest of the word being typed, as a suggestion's first characters write it, when the document already
    has that word and few others the typed part could become, or it is the nearby text's most frequent of them;
    else "". It goes on over the suggestion's next tokens while the document agrees with them
    (:func:`_agreed_tail`).

    As you type, the gate hides most whole lines (the model is rarely sure of the rest of a line), yet the word
    under the cursor is the part the model gets right most often: typing the dev split's lines, the best
    suggestion's first word was the rest of the word being typed on 80 % of the keystrokes where the document has
    the word it makes, on 14 % where it does not, and on 99 % where that is the only word of the document that
    completes the typed part (``bench/results/word_head_ab.json``). ``rivals``: the limit (a benchmark's knob).
    """
    m = word_before(text, offset)
    if m is None or (offset < len(text) and _NAME.match(text, offset)):
        return ""  # not inside a word, or in the middle of one
    head = _NAME.match(cand)
    if head is None or len(head.group(0)) < 2:
        return ""  # a one-character head saves no keystroke
    typed, rest = m.group(0), head.group(0)
    word = typed + rest
    lo, hi = max(0, offset - WORD_WINDOW), offset + WORD_WINDOW
    # the typed part as a literal first (the regex engine scans for it fast; a look-behind first would test every
    # position: 4 ms instead of 0.3 on a 5,000-line file), a word start checked after
    completions = re.compile(re.escape(typed) + r"[\w$]+")
    found: set[str] = set()
    for w in _words(completions, text, lo, hi):
        found.add(w.group(0))
        if len(found) > rivals:  # more than enough rivals: only the nearby text's favourite is shown
            near = Counter(w.group(0) for w in _words(completions, text, max(0, offset - NEAR_WINDOW),
                                                      offset + NEAR_WINDOW))
            best = near.most_common(2)
            if not best or best[0][0] != word or (len(best) > 1 and best[1][1] == best[0][1]):
                return ""
            break
    else:
        if word not in found:
            return ""
    brk = _LINE_BREAK.search(text, offset)
    right = text[offset : brk.start() if brk else len(text)].strip()
    if any(ch not in CLOSERS and not ch.isspace() for ch in right):
        return rest  # text right of the cursor: the tokens after the word could not be placed before it
    after = _LINE_BREAK.split(cand[len(rest) :], maxsplit=1)[0]
    stop = frozenset(ch for ch in right if not ch.isspace())
    return rest + _agreed_tail(text, offset - len(typed), typed + rest, after, lo, hi, stop)


def _words(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> Iterable[re.Match[str]]:
    """The matches of ``pattern`` in ``text[lo:hi]`` that begin a word (the typed part's completions, a phrase's
    other places)."""
    for w in pattern.finditer(text, lo, hi):
        if not (w.start() > lo and _NAME.match(text, w.start() - 1)):
            yield w


MAX_PLACES = 50  # the other places of the phrase asked whether they go on alike (the first ones; the rest not read)


def _agreed_tail(text: str, start: int, phrase: str, after: str, lo: int, hi: int, stop: frozenset[str]) -> str:
    """The tokens of ``after`` (what the suggestion writes after the word head) for as long as every other place
    the document has the phrase so far goes on with that same token (the first ``MAX_PLACES`` places); it ends
    on a non-blank token, and before any character in ``stop`` (closers the editor already put right of the
    cursor). ``start``: where the phrase begins at the cursor (not another place).

    The places are found once; each token keeps those that go on with it (a place of a longer word is no place),
    so a keystroke reads the document once, not once per token.

    The model proposes and the document confirms, token by token: the word head's own recipe. Replayed over the
    observed typing of the dev splits at the shipped gate, this gave 25.9 -> 26.5 % (dev) and 26.7 -> 28.6 %
    (dev_langs) of the characters saved with no more wrong suggestions read; a majority instead of every place
    saved more, for 3-6 % more wrong reads (``bench/results/word_head_ab.json``, ``session_25.agreed_tail``).
    """
    places = list(islice((w.start() for w in _words(re.compile(re.escape(phrase)), text, lo, hi)
                          if w.start() != start), MAX_PLACES))
    tail = kept = ""
    for tok in _TOKEN.findall(after):
        if tok in stop:
            break
        end = len(phrase) + len(tail)
        word_end = bool(_NAME.match(tail[-1:] or phrase[-1]))
        going_on = []
        for i in places:
            nxt = _TOKEN.match(text, i + end)
            cont = nxt.group(0) if nxt else ""
            if word_end and _NAME.match(cont):
                continue  # another place of a longer word is no place
            if cont != tok:
                return kept
            going_on.append(i)
        if not going_on:
            break
        places = going_on
        tail += tok
        if not tok.isspace():
            kept = tail
    return kept
