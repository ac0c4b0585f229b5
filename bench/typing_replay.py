"""What typing with dgcomplete saves: held-out lines re-typed character by character through the real daemon.

:mod:`bench.context` asks once per line, at one position.  A user asks at every keystroke: a suggestion that is
wrong after ``re`` may be right after ``ret``, and a wrong one shown at every keystroke of a line is noise the
single request never sees.  So each ``whole_line`` case of a :mod:`bench.heldout` split is replayed as a typist
would write it: the case's other files and its document are opened (the line's text removed, the cursor after
its indentation, as an editor leaves it after Enter), an Automatic ``textDocument/inlineCompletion`` is sent,
and then the line is typed one character at a time (an incremental ``didChange`` each), with a request after
every character.  The typist reads every suggestion:

* one whose first line is exactly the rest of the line is accepted (Tab: one keystroke) and the line is done;
* a one-line suggestion that is a proper prefix of the rest (``foo(`` of ``foo(bar)``) is accepted too and the
  typist goes on from its end;
* anything else is *wrong*: the typist types on past it.

Reported over all lines and by language family: ``saved`` (share of the line's characters the typist did not
type: 1 - keystrokes / characters, Tab counted as a keystroke), ``lines_completed`` (share of lines a suggestion
finished), ``lines_helped`` (share with at least one acceptance), ``wrong`` (wrong suggestions read: one that
only goes on showing while the typist types through it, the same line, is read once), ``wrong_per_line``,
``wrong_lines`` (share of lines that showed one), ``accepted_share`` (accepted among the suggestions read:
what editors call the acceptance rate), keystrokes with a wrong suggestion on screen per 100, the characters
typed before the first acceptance (median), the accepted and the wrong ones by the engine's source (``word``: the
rest of the word being typed, shown where the gate hid the line), multi-line suggestions accepted with lines after the first that
the file did not have, and the request latency.  A typist who reads every suggestion is an upper bound on what
a user takes; the wrong counts are what such a typist had to read past.

``--block K`` writes code instead of re-typing a line: a case's line and up to K - 1 lines after it in its block
(at its indentation or deeper, to the next blank line) are taken out of the file and typed in order, so the model
sees none of what is being written after the cursor, as when a user writes a new function's body; a suggestion
whose further lines are the next ones to write completes them too.  Reported apart: the blocks' first lines and
the lines after them (``by_line_in_block``).

``--edits`` edits a written line instead (:func:`bench.heldout.with_edits`): a piece of a mid-line case's line
taken out at the cursor, the rest of the line right of it; the typist types the piece and takes a suggestion that
leaves the line as it was, or a part of the piece (:func:`_type_edit`); the figures are over the pieces' characters.

``--widget first|right`` types as in VS Code with a language server: while a name is typed, its suggest widget is
open and each request carries the selected item (``selectedCompletionInfo``; VS Code then shows only an inline item
that extends it over its range); where no right suggestion is on screen the typist takes the widget's item if it
is the right name (:class:`Widget`: ``first`` selects the first name of the open files that begins with the typed
part, ``right`` the line's own name where the files have it). With ``--autoclose``, as VS Code's defaults type.

``--observe`` (with ``--set minConfidence=0``) accepts nothing and keeps every suggestion with its confidence;
``--sweep DUMP`` then replays those lines offline with the gate at several thresholds (:func:`simulate`), with and
without the word heads the daemon shows under the gate (``--rivals``: at several of their limits), and for a
typist who also takes the right leading words of a wrong suggestion (VS Code's accept next word, Ctrl+Right).

    python -m bench.typing_replay [--split test] [--n N] [--words] [--block K] [--edits] [--autoclose]
                                  [--widget first|right] [--model DIR]
                                  [--set key=JSON ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import re
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from dgcomplete.context import MAX_WORD_RIVALS, word_head

from . import (
    RESULTS,
    Timer,
    display_path,
    emit,
    pct,
    resolve_model,
    spread,
    write_jsonl,
)
from .context import OptionsDaemon, ask_inline, open_case, parse_sets, run_info, shown_text
from .heldout import OUT as HELDOUT
from .heldout import (
    SPLITS,
    _in_string_or_comment,
    add_sending_args,
    as_sent,
    auto_closed,
    case_document,
    family,
    load,
    other_text,
    sending,
)
from .latency import pos_at

THRESHOLDS = [0.0, 0.2, 0.25, 0.29, 0.33, 0.37, 0.41, 0.45, 0.5, 0.6]
MAX_LINE_CHARS = 120  # longer lines are left out: one that long is pasted more often than typed (1 of 303 on dev)


def judge(shown: str, remaining: str) -> str | None:
    """What a typist does with a suggestion that shows ``shown`` (the text after the cursor) when ``remaining``
    is what is left to type on the line: ``"complete"`` (accept, the line is done), ``"part"`` (accept, then
    type on), ``"wrong"`` (type past it), or None when nothing is shown."""
    if not shown.strip():
        return None
    head = shown.split("\n", 1)[0].rstrip()
    rest = remaining.rstrip()
    if head == rest and head.strip():
        return "complete"
    if "\n" not in shown and rest.startswith(shown) and len(shown) < len(rest):
        return "part"
    return "wrong"


def accepted_text(verdict: str, shown: str) -> str:
    """What Tab puts in for an accepted suggestion: a complete one's first line (the lines after it are held
    against the file apart, :func:`extra_lines_right`), a part as it is."""
    return shown.split("\n", 1)[0].rstrip() if verdict == "complete" else shown


def on_screen(typed: str, shown: str) -> str:
    """The line as the typist reads it: what is typed of it and the suggestion's first line (one that stays the
    same while it is typed through is read once)."""
    return typed + shown.split("\n", 1)[0].rstrip()


class WrongReads:
    """Wrong suggestions read on a line: one that stays on screen while the typist types through it (the same
    line again) is read once; ``keystrokes`` counts every keystroke with a wrong one on screen."""

    def __init__(self) -> None:
        self.read = self.keystrokes = 0
        self.by_source: dict[str, int] = {}  # the engine's source of each one read (``word``: a word's rest)
        self._on_screen = ""

    def see(self, typed: str, shown: str, source: str | None = None) -> None:
        full = on_screen(typed, shown)
        self.keystrokes += 1
        if full != self._on_screen:
            self.read += 1
            self.by_source[str(source)] = self.by_source.get(str(source), 0) + 1
        self._on_screen = full


def outcome(keystrokes: int, accepts: list[dict[str, Any]], wrong: WrongReads) -> dict[str, Any]:
    """A typed line's figures, the same live (:func:`type_line`) and replayed (:func:`simulate`)."""
    return {"keystrokes": keystrokes, "wrong": wrong.read, "wrong_keystrokes": wrong.keystrokes,
            "wrong_by_source": wrong.by_source, "accepts": accepts,
            "completed": any(a["verdict"] == "complete" for a in accepts),
            "first_accept_at": accepts[0]["at"] if accepts else None}


def extra_lines_right(shown: str, after: str) -> bool:
    """A multi-line suggestion's lines after the first are the lines the file has after the line."""
    extra = shown.split("\n")[1:]
    if not extra:
        return True
    want = after.lstrip("\n").split("\n")[: len(extra)] if after.startswith("\n") else []
    return [s.rstrip() for s in extra] == [w.rstrip() for w in want]


_NAME_END = re.compile(r"[A-Za-z_$][\w$]*$")
_NAME_AT = re.compile(r"[\w$]+")
_NAMES = re.compile(r"[A-Za-z_$][\w$]*")
WIDGETS = ("first", "right")


class Widget:
    """VS Code's suggest widget as a language server fills it, while a name is typed in code (quick suggestions:
    on in code, off in strings and comments): its items, the names of the open files (the document without the
    line being typed, and the others) that begin with the typed part; the one selected, ``first``: the first of
    them in the widget's order (by name, case aside; ``editor.suggestSelection`` "first"), or ``right``: the name
    the line has there where the files have it (a language server that offers it first), else the first. No item,
    no widget. An approximation: a real server offers members, keywords and imports too, and ranks by more. The
    typist takes a right suggestion on screen first (Tab takes the inline item over the widget's), else the
    widget's item where it is the right name and saves a keystroke (source ``widget``): what the editor gives
    without us, so what a change to the inline items moves is the rest."""

    def __init__(self, mode: str, texts: Iterable[str]) -> None:
        self.mode = mode
        self.names = sorted({w for t in texts for w in _NAMES.findall(t)})

    def select(self, text: str, cursor: int, line: str, done: int) -> tuple[int, int, str] | None:
        """The selected item while ``line[:done]`` is typed, the cursor at ``cursor`` of ``text``: the range it
        replaces (the typed part of the name) and its text; None where no widget shows."""
        typed_line = line[:done]
        m = _NAME_END.search(typed_line)
        if m is None or _in_string_or_comment(typed_line) or _NAME_AT.match(text, cursor):
            return None
        typed = m.group(0)
        i = bisect.bisect_left(self.names, typed)
        items = []
        while i < len(self.names) and self.names[i].startswith(typed):
            items.append(self.names[i])
            i += 1
        if not items:
            return None
        want = _NAME_AT.match(line, m.start())
        word = want.group(0) if want else typed
        pick = word if self.mode == "right" and word in items else min(items, key=lambda w: (w.lower(), w))
        return cursor - len(typed), cursor, pick


class Typist:
    """One line typed into one open document; the document's text is mirrored to send ranged edits. ``widget``:
    the suggest widget that shows while a name is typed (:class:`Widget`), whose selected item each request
    sends."""

    def __init__(self, daemon: OptionsDaemon, uri: str, text: str, cursor: int, widget: Widget | None = None) -> None:
        self.d, self.uri, self.text, self.cursor, self.version = daemon, uri, text, cursor, 1
        self.widget = widget
        self.selected: tuple[int, int, str] | None = None  # what the next request sends
        self.closed = False  # a suggestion or item just taken closes the widget until a character is typed
        self.widget_stats = {"requests": 0, "right": 0}

    def open_widget(self, line: str, done: int) -> str:
        """The widget's selected item for the next request, while ``line[:done]`` is typed (none after a taking,
        until a character is typed); the rest of the name it writes where it is the right name, else ""."""
        self.selected = None if self.widget is None or self.closed else self.widget.select(
            self.text, self.cursor, line, done)
        self.closed = False
        if self.selected is None:
            return ""
        start, end, item = self.selected
        want = _NAME_AT.match(line, done - (end - start))
        self.widget_stats["requests"] += 1
        if not (want and want.group(0) == item):
            return ""
        self.widget_stats["right"] += 1
        return item[end - start:]

    def insert(self, s: str) -> None:
        self.replace(self.cursor, self.cursor, s, self.cursor + len(s))

    def replace(self, start: int, end: int, s: str, cursor: int) -> None:
        """An edit of the document (one ranged ``didChange``) that leaves the cursor at ``cursor``."""
        a, b = pos_at(self.text, start), pos_at(self.text, end)
        self.text = self.text[:start] + s + self.text[end:]
        self.cursor = cursor
        self.version += 1
        self.d.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=a, end=b), text=s)]))

    def type_char(self, c: str) -> None:
        """One character typed as an editor that auto-closes brackets and quotes takes it (:func:`auto_closed`)."""
        start, end, s, cursor = auto_closed(self.text, self.cursor, c)
        if (start, end, s) == (self.cursor, self.cursor, ""):
            self.cursor = cursor  # typed over a closer the editor put there: only the cursor moves
        else:
            self.replace(start, end, s, cursor)

    async def ask(self) -> tuple[str, float, str]:
        """The shown text after the cursor ("" when nothing), the request's ms, and an error if any."""
        shown, ms, err, _ = await self.ask_edit()
        return shown, ms, err

    async def ask_edit(self) -> tuple[str, float, str, tuple[int, int, str] | None]:
        """:meth:`ask`, with the first item's edit (start, end, text) as Tab would apply it (None when nothing)."""
        items, ms, err = await ask_inline(self.d.client, self.uri, self.text, self.cursor, selected=self.selected)
        if not items:
            return "", ms, err, None
        shown, start, end, insert = shown_text(self.text, self.cursor, items[0])
        return shown, ms, err, (start, end, insert)


def judge_edit(text: str, cursor: int, edit: tuple[int, int, str], want: str) -> str | None:
    """:func:`judge` where the editor auto-closes: what Tab's edit leaves of the cursor's line, against ``want``
    (the whole line as it will stand). ``"complete"``: the line is ``want``; ``"part"``: one line, the text left of
    the new cursor a proper prefix of ``want``; else ``"wrong"``."""
    start, end, insert = edit
    ls = text.rfind("\n", 0, cursor) + 1
    eol = text.find("\n", cursor)
    eol = len(text) if eol < 0 else eol
    if not insert[cursor - start:].strip() if start <= cursor else not insert.strip():
        return None
    if start < ls or end > eol:
        return "wrong"
    right = text[end:eol]
    if "\n" in insert:
        first = text[ls:start] + insert.split("\n", 1)[0]
        return "complete" if first.rstrip() == want.rstrip() and not right.strip() else "wrong"
    left = text[ls:start] + insert
    if (left + right).rstrip() == want.rstrip():
        return "complete"
    if cursor - ls < len(left) < len(want.rstrip()) and want.startswith(left):
        return "part"  # the closers right of it are the editor's: typed over, or deleted where the line ends
    return "wrong"


def block_of(text: str, off: int, size: int) -> list[tuple[str, str]]:
    """The lines a block-mode case writes (``--block``): the case's line and the lines after it that go on at its
    indentation or deeper, up to ``size`` lines in all, stopping at a blank line (the end of the paragraph of
    code being written); each as (indentation, content)."""
    ls = text.rfind("\n", 0, off) + 1
    base = len(text[ls:off])
    out: list[tuple[str, str]] = []
    for line in text[ls:].split("\n"):
        content = line.lstrip(" \t")
        indent = line[: len(line) - len(content)]
        if not content.strip() or (out and len(indent) < base) or len(out) >= size:
            break
        out.append((indent, content.rstrip()))
    return out


def block_document(files: dict[str, dict[str, Any]], case: dict[str, Any],
                   size: int) -> tuple[str, int, list[tuple[str, str]]]:
    """(document, cursor, lines to write) of a block-mode case: the file with the case's line and the block's
    later lines (:func:`block_of`) taken out, the cursor after the first line's indentation, as an editor leaves
    it after Enter, and nothing of what is to be written after it. ``size`` 1 is :func:`case_document`'s case."""
    text, off = files[case["file"]]["text"], case["offset"]
    lines = block_of(text, off, size)
    ls = text.rfind("\n", 0, off) + 1
    end = ls + len("\n".join(text[ls:].split("\n")[: len(lines)]))  # the end of the block's last line
    return text[:off] + text[end:], off, lines


async def type_line(daemon: OptionsDaemon, data: dict[str, Any], case: dict[str, Any],
                    observe: bool = False, words: bool = False, block: int = 1,
                    autoclose: bool = False, widget: str | None = None) -> list[dict[str, Any]]:
    """Open the case, type its line with suggestions, close; one record a typed line.  ``observe``: accept nothing,
    type every character and keep every suggestion with its confidence (run with ``minConfidence`` 0 for
    :func:`simulate`).  ``words``: the typist also takes the right leading words of a wrong suggestion
    (:func:`next_words`, one keystroke a word), where that saves keystrokes.  ``block`` above 1: code being
    written, not a line being re-typed: the case's line and up to ``block`` - 1 lines after it in its block are
    taken out (:func:`block_document`) and written one after another, Enter putting the next line's indentation
    (not counted, as the line's indentation is not); a suggestion whose first line is the rest of the line and
    whose further lines are the next lines to write completes those too (they cost no keystroke). ``autoclose``:
    typed in an editor that auto-closes brackets and quotes (:func:`_type_autoclosed`). ``widget``: with a suggest
    widget open while a name is typed (:class:`Widget`'s mode), whose selected item each request sends."""
    files = data["files"]
    if block > 1:
        doc, cursor, lines = block_document(files, case, block)
    else:
        doc, cursor = case_document(files, case)
        lines = [("", case.get("piece", case["expected"].rstrip()))]  # an edit's: the piece it types
    lang = files[case["file"]]["lang"]
    client = daemon.client
    uri, opened = open_case(client, data, case, doc)
    names = [doc] + [other_text(files, fid, data.get("others_max_chars", 30_000)) for fid in case["others"]]
    t = Typist(daemon, uri, doc, cursor, Widget(widget, names) if widget else None)
    recs: list[dict[str, Any]] = []
    covered = 0  # lines after this one that an accepted multi-line suggestion already wrote
    try:
        for j, (indent, line) in enumerate(lines):
            to_write = "".join(f"\n{ind}{c}" for ind, c in lines[j + 1:])
            after = t.text[t.cursor:] if block == 1 else to_write
            rec = {"id": case["id"] if j == 0 else f"{case['id']}+{j}", "package": files[case["file"]]["package"],
                   "lang": lang, "family": family(lang), "line": line, "chars": len(line)}
            if block > 1:
                rec["block"], rec["line_no"] = case["id"], j
            if covered:  # written by the suggestion accepted on a line above
                covered -= 1
                recs.append({**rec, "requests": 0, **outcome(0, [], WrongReads()), "completed": True,
                             "by_lines_above": True, "bad_extra_lines": 0, "ms": [], "seen": [], "errors": []})
                continue
            if j:
                t.insert("\n" + indent)  # Enter: the editor indents the new line
            res = (await _type_edit(daemon, t, case["piece"], observe) if "piece" in case
                   else await _type_autoclosed(daemon, t, line, observe) if autoclose
                   else await _type_one(daemon, t, line, after, observe, words, block > 1))
            covered = res.pop("covers")
            recs.append({**rec, **res})
    finally:
        for u in opened:
            client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(u)))
    return recs


async def _type_one(daemon: OptionsDaemon, t: Typist, line: str, after: str, observe: bool, words: bool,
                    multi: bool) -> dict[str, Any]:
    """One line typed at the cursor with a request after each keystroke; its record's figures, and in ``covers``
    how many lines after it an accepted multi-line suggestion wrote (``multi``: only where they are the lines to
    write next, ``after``; otherwise only its first line is taken and a wrong rest is counted)."""
    done, bad_extra, presses_more, covers = 0, 0, 0, 0
    t.widget_stats = {"requests": 0, "right": 0}
    accepts: list[dict[str, Any]] = []
    wrong = WrongReads()
    errors: list[str] = []
    ms: list[float] = []
    seen: list[dict[str, Any]] = []
    while done < len(line):
        item_rest = t.open_widget(line, done)
        shown, took, err = await t.ask()
        ms.append(took)
        if err:
            errors.append(err)
        verdict = judge(shown, line[done:])
        source = await _seen(daemon, seen, done, shown, verdict, observe)
        taken = None if observe else takes(done, verdict, shown, line[done:], source, words)
        if taken:
            take, acc = taken
            extra = verdict == "complete" and "\n" in shown.rstrip()
            if extra and multi and extra_lines_right(shown.rstrip(), after):
                more = shown.rstrip().split("\n")[1:]
                covers, acc["lines"] = len(more), 1 + len(more)
                t.insert(line[done:] + "".join("\n" + m for m in more))
                accepts.append(acc)
                break
            bad_extra += extra and not extra_lines_right(shown, after)
            accepts.append(acc)
            presses_more += acc.get("keys", 1) - 1  # the request was one keystroke; other presses are more
            t.insert(take)
            done += len(take)
            t.closed = True
            continue
        if verdict == "wrong":
            wrong.see(line[:done], shown, source)
        if len(item_rest) >= 2 and not observe:  # no right suggestion on screen: the widget's right name (Tab)
            accepts.append({"at": done, "chars": len(item_rest), "verdict": "part", "source": "widget"})
            t.insert(item_rest)
            done += len(item_rest)
            t.closed = True
            continue
        t.insert(line[done])
        done += 1
    return {"requests": len(ms), **outcome(len(ms) + presses_more, accepts, wrong), "bad_extra_lines": bad_extra,
            "ms": [round(x, 1) for x in ms], "seen": seen, "errors": errors[:3], "covers": covers,
            **({"widget": t.widget_stats} if t.widget else {})}


async def _seen(daemon: OptionsDaemon, seen: list[dict[str, Any]], at: int, shown: str, verdict: str | None,
                observe: bool) -> str | None:
    """What was on screen, and the engine's account of it (its source, confidence, ``elsewhere``), kept in ``seen``
    where something was shown (every request, ``observe``); the source, or None."""
    if verdict is None and not observe:
        return None
    last = (await daemon.stats()).get("last") or {}
    seen.append({"at": at, "shown": shown[:200], "verdict": verdict, "source": last.get("source"),
                 "confidence": last.get("confidence"), "elsewhere": last.get("elsewhere")})
    return last.get("source")


def _see_wrong(wrong: WrongReads, t: Typist, ls: int, edit: tuple[int, int, str], source: str | None) -> None:
    """A wrong suggestion read, as its edit (start, end, text) would leave the line that starts at ``ls``: the line
    left of the edit, then the edit's text and what stays right of it."""
    start, end, insert = edit
    eol = t.text.find("\n", t.cursor)
    wrong.see(t.text[ls:start], insert + t.text[end : len(t.text) if eol < 0 else eol], source)


async def _type_autoclosed(daemon: OptionsDaemon, t: Typist, line: str, observe: bool) -> dict[str, Any]:
    """:func:`_type_one` in an editor that auto-closes brackets and quotes (:func:`auto_closed`): suggestions are
    judged by the line Tab's edit leaves (:func:`judge_edit`), and closers left over where the line ends (its last
    bracket opens lines below) are deleted, Shift+End and Delete, two keystrokes."""
    ls = t.text.rfind("\n", 0, t.cursor) + 1
    indent = t.text[ls:t.cursor]
    want = indent + line
    presses_more = 0
    t.widget_stats = {"requests": 0, "right": 0}
    accepts: list[dict[str, Any]] = []
    wrong = WrongReads()
    errors: list[str] = []
    ms: list[float] = []
    seen: list[dict[str, Any]] = []
    while (done := t.cursor - ls - len(indent)) < len(line):
        item_rest = t.open_widget(line, done)
        shown, took, err, edit = await t.ask_edit()
        ms.append(took)
        if err:
            errors.append(err)
        verdict = judge_edit(t.text, t.cursor, edit, want) if edit else None
        source = await _seen(daemon, seen, done, shown, verdict, observe)
        if verdict == "complete" and not observe:  # Tab leaves the line as it is to be: its first line, the rest kept
            eol = t.text.find("\n", t.cursor)
            accepts.append({"at": done, "chars": ls + len(want) - t.cursor, "verdict": verdict, "source": source})
            t.replace(ls, len(t.text) if eol < 0 else eol, want, ls + len(want))
            break
        if verdict == "part" and edit and not observe:
            start, end, insert = edit
            accepts.append({"at": done, "chars": start + len(insert) - t.cursor, "verdict": verdict,
                            "source": source})
            t.replace(start, end, insert, start + len(insert))
            t.closed = True
            continue
        if verdict == "wrong" and edit:
            _see_wrong(wrong, t, ls, edit, source)
        if len(item_rest) >= 2 and not observe:  # the widget's right name (Tab), the closers kept right of it
            accepts.append({"at": done, "chars": len(item_rest), "verdict": "part", "source": "widget"})
            t.insert(item_rest)
            t.closed = True
            continue
        t.type_char(line[done])
    eol = t.text.find("\n", t.cursor)
    eol = len(t.text) if eol < 0 else eol
    if t.text[ls:eol] != want:  # closers the line's own brackets leave open: Shift+End, Delete
        presses_more += 2
        t.replace(ls, eol, want, ls + len(want))
    return {"requests": len(ms), **outcome(len(ms) + presses_more, accepts, wrong), "bad_extra_lines": 0,
            "ms": [round(x, 1) for x in ms], "seen": seen, "errors": errors[:3], "covers": 0,
            **({"widget": t.widget_stats} if t.widget else {})}


async def _type_edit(daemon: OptionsDaemon, t: Typist, piece: str, observe: bool) -> dict[str, Any]:
    """An edit inside a written line (``--edits``): ``piece`` typed at the cursor, the rest of the line right of it
    as it was, with a request after each keystroke. A suggestion is judged by the line Tab's edit leaves
    (:func:`judge_edit`): ``complete`` when it is the line as it was, ``part`` when the new cursor stays inside the
    piece and what is left of it is right; the typist takes either. Characters are typed as they are (an editor
    auto-closes a bracket only before a blank or a closer, which a piece rarely meets). The record's ``chars`` are
    the piece's: the figures say what typing it saved."""
    ls = t.text.rfind("\n", 0, t.cursor) + 1
    eol = t.text.find("\n", t.cursor)
    start_at, right = t.cursor, t.text[t.cursor : len(t.text) if eol < 0 else eol]
    want = t.text[ls:t.cursor] + piece + right
    gap_end = len(want) - len(right)  # in the line: where the piece ends
    accepts: list[dict[str, Any]] = []
    wrong = WrongReads()
    errors: list[str] = []
    ms: list[float] = []
    seen: list[dict[str, Any]] = []
    while (done := t.cursor - start_at) < len(piece):
        shown, took, err, edit = await t.ask_edit()
        ms.append(took)
        if err:
            errors.append(err)
        verdict = judge_edit(t.text, t.cursor, edit, want) if edit else None
        if verdict == "part" and edit and edit[0] - ls + len(edit[2]) >= gap_end:
            verdict = "wrong"  # it writes past the piece: the text right of the cursor would follow it twice
        source = await _seen(daemon, seen, done, shown, verdict, observe)
        if verdict in ("complete", "part") and edit and not observe:
            start, end, insert = edit
            accepts.append({"at": done, "chars": start + len(insert) - t.cursor if verdict == "part"
                            else len(piece) - done, "verdict": verdict, "source": source})
            t.replace(start, end, insert, start + len(insert))
            if verdict == "complete":
                break
            continue
        if verdict == "wrong" and edit:
            _see_wrong(wrong, t, ls, edit, source)
        t.insert(piece[done])
    return {"requests": len(ms), **outcome(len(ms), accepts, wrong), "bad_extra_lines": 0,
            "ms": [round(x, 1) for x in ms], "seen": seen, "errors": errors[:3], "covers": 0}


_WORD_PRESS = re.compile(r"[^\w$]*[\w$]+|[^\w$]+")  # what one accept-next-word takes: other characters, then a name


def next_words(shown: str, remaining: str) -> tuple[str, int]:
    """The leading words of a suggestion's first line that are right (the start of ``remaining``), as
    accept-next-word presses take them, and how many presses that is."""
    took, presses = "", 0
    for unit in _WORD_PRESS.findall(shown.split("\n", 1)[0]):
        if not remaining.startswith(took + unit):
            break
        took, presses = took + unit, presses + 1
    return took, presses


def takes(at: int, verdict: str | None, shown: str, remaining: str, source: str | None,
          words: bool = False) -> tuple[str, dict[str, Any]] | None:
    """What the typist takes of the suggestion on screen, the same live (:func:`type_line`) and replayed
    (:func:`simulate`): the text inserted and its accept record, or None when the typist types on. The rest of
    the line or a part of it is taken with Tab (one keystroke); with ``words``, the right leading words of a wrong
    one, one keystroke a word (accept next word), where that saves keystrokes (the record's ``keys``)."""
    if verdict in ("complete", "part"):
        take = accepted_text(verdict, shown)
        return take, {"at": at, "chars": len(take), "verdict": verdict, "source": source}
    if verdict == "wrong" and words:
        part, presses = next_words(shown, remaining)
        if len(part) > presses:
            return part, {"at": at, "chars": len(part), "verdict": "words", "source": source, "keys": presses}
    return None


def simulate(rec: dict[str, Any], threshold: float, doc: tuple[str, int] | None = None,
             rivals: int = MAX_WORD_RIVALS, words: bool = False) -> dict[str, Any]:
    """An observed line (``type_line(observe=True)`` with the gate open) replayed offline with the gate at
    ``threshold``: a suggestion is on screen when its confidence reaches it (and, above 0, when it is more than one
    character, as the daemon rules); under the gate, the rest of the typed word when the engine's rule
    (:func:`dgcomplete.context.word_head`) finds it in ``doc`` (the case's document without the line, and the
    cursor; ``rivals``: its limit), as the daemon shows it.  Exact but for what the daemon carries between keystrokes (a shown
    suggestion's rest stays a candidate while it is typed through) and for the heads the daemon also takes from
    lines its checks dropped (an observed dump has no dropped lines): accepting a part inserts the very characters
    the typist would have typed, so the requests after it are the observed ones. ``words``: the typist also takes
    the right leading words of a wrong suggestion, one keystroke a word (VS Code's accept next word), where that
    saves keystrokes; such an accept's verdict is ``words``, with its ``keys`` (presses)."""
    by_at = {s["at"]: s for s in rec["seen"]}
    line = rec["line"]
    done = keys = 0
    accepts: list[dict[str, Any]] = []
    wrong = WrongReads()
    while done < rec["chars"]:
        s = by_at.get(done)
        conf = (s or {}).get("confidence")
        keys += 1
        shown, verdict, source = "", None, None
        if s is not None and isinstance(conf, (int, float)) and s["shown"].strip():
            if conf >= threshold and (threshold <= 0 or len(s["shown"].strip()) > 1):
                shown, verdict, source = s["shown"], s["verdict"], s.get("source")
            elif doc is not None and threshold > 0:
                text, cursor = doc
                head = word_head(text[:cursor] + line[:done] + text[cursor:], cursor + done, s["shown"], rivals)
                shown, verdict, source = head, judge(head, line[done:]), "word"
        taken = takes(done, verdict, shown, line[done:], source, words)
        if taken:
            take, acc = taken
            accepts.append(acc)
            keys += acc.get("keys", 1) - 1
            done += len(take)
            continue
        if verdict == "wrong":
            wrong.see(line[:done], shown, source)
        done += 1
    return {**rec, **outcome(keys, accepts, wrong), "ms": rec["ms"][:keys], "bad_extra_lines": 0}


def sweep(recs: list[dict[str, Any]], thresholds: list[float], docs: dict[str, tuple[str, int]] | None = None,
          rivals: int = MAX_WORD_RIVALS, words: bool = False) -> list[dict[str, Any]]:
    """:func:`simulate` at each threshold: saved characters against wrong suggestions read (``docs``: each line's
    document by case id, for the word heads; ``rivals``: their limit)."""
    out = []
    for t in thresholds:
        m = metrics([simulate(r, t, docs.get(r["id"]) if docs else None, rivals, words) for r in recs])
        out.append({"threshold": t, **{k: m[k] for k in ("saved", "lines_completed", "accepted", "wrong",
                                                            "accepted_share", "wrong_lines", "accepted_by_source",
                                                            "wrong_by_source")}})
    return out


def metrics(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's figures for a group of lines."""
    n = len(recs)
    if not n:
        return {"n": 0}
    chars = sum(r["chars"] for r in recs)
    keys = sum(r["keystrokes"] for r in recs)
    ms = [x for r in recs for x in r["ms"]]
    at = [r["first_accept_at"] for r in recs if r["first_accept_at"] is not None]
    rnd = lambda v, d=4: None if v is None else round(v, d)  # noqa: E731
    return {
        "lines": n,
        "chars": chars,
        "keystrokes": keys,
        "saved": rnd(1 - keys / chars) if chars else None,
        "lines_completed": rnd(sum(r["completed"] for r in recs) / n),
        "lines_helped": rnd(sum(bool(r["accepts"]) for r in recs) / n),
        "accepted": sum(len(r["accepts"]) for r in recs),
        "wrong": sum(r["wrong"] for r in recs),
        "wrong_per_line": rnd(sum(r["wrong"] for r in recs) / n, 3),
        "wrong_lines": rnd(sum(r["wrong"] > 0 for r in recs) / n),
        "accepted_share": rnd(sum(len(r["accepts"]) for r in recs)
                              / max(1, sum(len(r["accepts"]) + r["wrong"] for r in recs))),
        "wrong_keystrokes_per_100": rnd(100 * sum(r["wrong_keystrokes"] for r in recs) / max(1, keys), 2),
        "accepted_by_source": _tally((str(a.get("source")), 1) for r in recs for a in r["accepts"]),
        "wrong_by_source": _tally(kv for r in recs for kv in r.get("wrong_by_source", {}).items()),
        "typed_before_accept_median": statistics.median(at) if at else None,
        "multi_line_accepts_with_wrong_lines": sum(r["bad_extra_lines"] for r in recs),
        "multi_line_accepts": sum(a.get("lines", 1) > 1 for r in recs for a in r["accepts"]),
        "lines_written_by_a_suggestion_above": sum(bool(r.get("by_lines_above")) for r in recs),
        "requests": len(ms),
        "errors": sum(len(r["errors"]) for r in recs),
        "latency_ms": {"p50": rnd(pct(ms, 50), 1), "p95": rnd(pct(ms, 95), 1)},
        **({"widget_open": sum(r["widget"]["requests"] for r in recs),
            "widget_selected_right": sum(r["widget"]["right"] for r in recs)} if recs[0].get("widget") else {}),
    }


def _tally(pairs: Iterable[tuple[str, int]]) -> dict[str, int]:
    """(source, count) pairs summed by source, the most frequent first."""
    out: Counter[str] = Counter()
    for k, n in pairs:
        out[k] += n
    return dict(out.most_common())


def report(recs: list[dict[str, Any]]) -> dict[str, Any]:
    fams = sorted({r["family"] for r in recs})
    out = {"all": metrics(recs), "by_family": {f: metrics([r for r in recs if r["family"] == f]) for f in fams}}
    if any("block" in r for r in recs):  # --block: a block's first line (the case's) apart from the lines after it
        out["by_line_in_block"] = {"first": metrics([r for r in recs if not r.get("line_no")]),
                                   "later": metrics([r for r in recs if r.get("line_no")])}
    return out


FIGURES = ("keystrokes", "wrong", "accepted", "completed")  # what --compare reads of each line


def compare(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
    """Two dumps of one split, line by line: the figures by package where they differ, and each line whose
    keystrokes, wrong suggestions, accepts or completion differ (what an A/B's summary moved, and where)."""
    old = {r["id"]: r for r in a}
    pairs = [(old[r["id"]], r) for r in b if r["id"] in old]

    def figures(r: dict[str, Any]) -> dict[str, int]:
        return dict(zip(FIGURES, (r["keystrokes"], r["wrong"], len(r["accepts"]), int(bool(r["completed"]))),
                        strict=True))

    by_part: dict[str, dict[str, int]] = {}
    lines = []
    for x, y in pairs:
        fx, fy = figures(x), figures(y)
        part = by_part.setdefault(y["package"], {"lines": 0, **{f"{k}_{s}": 0 for s in "ab" for k in FIGURES}})
        part["lines"] += 1
        for k in FIGURES:
            part[f"{k}_a"] += fx[k]
            part[f"{k}_b"] += fy[k]
        if fx != fy:
            lines.append({"id": y["id"], "line": y["line"], **{k: [fx[k], fy[k]] for k in FIGURES if fx[k] != fy[k]}})
    total = {k: [sum(p[f"{k}_{s}"] for p in by_part.values()) for s in "ab"] for k in FIGURES}
    moved = {p: f for p, f in sorted(by_part.items()) if any(f[f"{k}_a"] != f[f"{k}_b"] for k in FIGURES)}
    return {"lines": len(pairs), "only_in_a": len(old) - len(pairs), "total_a_b": total, "by_package": moved,
            "lines_that_moved": lines}


async def run(model: Path, data: dict[str, Any], cases: list[dict[str, Any]], options: dict[str, Any],
              threads: int | None, log: Any = None, observe: bool = False,
              words: bool = False, block: int = 1, autoclose: bool = False,
              widget: str | None = None) -> list[dict[str, Any]]:
    d = OptionsDaemon(model, options=options, threads=threads, log_dir=Path(tempfile.mkdtemp(prefix="dgtyping-")))
    await d.start()
    recs = []
    try:
        if cases:  # one warm-up line, not counted (the first request pays for the model's first pass)
            await type_line(d, data, {**cases[0], "id": cases[0]["id"] + "-warmup"})
        for i, case in enumerate(cases):
            recs.extend(await type_line(d, data, case, observe, words, block, autoclose, widget))
            if log and (i + 1) % 25 == 0:
                m = metrics(recs)
                log(f"bench.typing_replay: {i + 1}/{len(cases)} lines, saved {m['saved']}, "
                    f"completed {m['lines_completed']}, wrong/line {m['wrong_per_line']}")
    finally:
        await d.stop()
    return recs


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=SPLITS)
    ap.add_argument("--data", default=str(HELDOUT), help="folder of the built set (bench.heldout)")
    ap.add_argument("--n", type=int, help="lines, spread evenly over the split's whole-line cases (default: all)")
    add_sending_args(ap)
    ap.add_argument("--model", help="checkpoint directory (default: the embedded model)")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="an initialization option")
    ap.add_argument("--observe", action="store_true",
                    help="accept nothing and keep every suggestion (use with --set minConfidence=0), then --sweep")
    ap.add_argument("--sweep", metavar="DUMP", help="simulate the gate's thresholds over an --observe dump")
    ap.add_argument("--words", action="store_true",
                    help="the typist also takes the right leading words of a wrong suggestion (accept next word)")
    ap.add_argument("--rivals", type=lambda v: [int(x) for x in v.split(",")], metavar="K,K,...",
                    help="with --sweep: also replay the word heads at these MAX_WORD_RIVALS (the model's threshold)")
    ap.add_argument("--block", type=int, default=1, metavar="K",
                    help="write code instead of re-typing a line: each case's line and up to K-1 lines after it in "
                    "its block are taken out of the file and typed in order (default 1: the line alone)")
    ap.add_argument("--widget", choices=WIDGETS,
                    help="a suggest widget open while a name is typed, its selected item sent with each request as "
                    "VS Code sends it: the first name of the open files that begins with the typed part, or the "
                    "right one where they have it (Widget)")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"),
                    help="two --dump files of one split: where B's figures differ from A's, by package and line")
    ap.add_argument("--dump", help="per-line JSONL")
    ap.add_argument("--note", help="a note stored with the results")
    ap.add_argument("--out", help=f"write the JSON report here (e.g. {display_path(RESULTS / 'typing_replay.json')})")
    a = ap.parse_args(argv)
    if a.compare:
        dumps = [[json.loads(ln) for ln in Path(p).read_text().splitlines()] for p in a.compare]
        res = {"benchmark": "typing_replay_compare", "a": display_path(a.compare[0]),
               "b": display_path(a.compare[1]), **compare(*dumps)}
        emit(res, a.out)
        return res
    if a.edits and (a.block > 1 or a.words or a.sweep or a.autoclose or a.observe):
        sys.exit("bench.typing_replay: --edits types the pieces of edit cases, taking whole suggestions or parts")
    if a.widget and (a.edits or a.sweep or a.observe):
        sys.exit("bench.typing_replay: --widget types whole lines, taking suggestions (no --edits, --observe)")
    if a.autoclose and (a.block > 1 or a.words or a.sweep):
        sys.exit("bench.typing_replay: --autoclose types single lines, taking whole suggestions or parts")
    if (a.crlf or a.tabs) and a.block > 1:
        sys.exit("bench.typing_replay: --crlf and --tabs type single lines (a --block writes its lines as read)")
    data = as_sent(load(a.split, Path(a.data)), a)
    if a.sweep:
        if a.block > 1:
            sys.exit("bench.typing_replay: --sweep replays single lines; a --block dump has other documents")
        recs = [json.loads(ln) for ln in Path(a.sweep).read_text().splitlines()]
        cases = {c["id"]: c for c in data["cases"]}
        docs = {r["id"]: case_document(data["files"], cases[r["id"]]) for r in recs if r["id"] in cases}
        res = {"benchmark": "typing_replay_sweep", "dump": display_path(a.sweep), "split": a.split,
               "lines": len(recs), "sweep": sweep(recs, THRESHOLDS, docs),
               "without_word_heads": sweep(recs, THRESHOLDS),
               "accepting_words_too": sweep(recs, THRESHOLDS, docs, words=True)}
        if a.rivals:  # the word heads' one knob, at the model's threshold
            from dgcomplete.gate import Gate

            t = Gate.load(resolve_model(a.model)).threshold
            res["rivals"] = {"threshold": t, "shipped": MAX_WORD_RIVALS,
                             "points": [{"rivals": k, **sweep(recs, [t], docs, k)[0]} for k in a.rivals]}
        emit(res, a.out)
        return res

    from dgcomplete.model import load_model

    model = resolve_model(a.model)
    loaded = load_model(model)
    kind = "edit" if a.edits else "whole_line"  # --edits: the pieces of edits inside written lines
    lines = [c for c in data["cases"] if c["kind"] == kind and 0 < len(c["expected"].rstrip()) <= MAX_LINE_CHARS]
    cases = spread(lines, a.n)
    options = parse_sets(a.set)
    t = Timer()
    recs = asyncio.run(run(model, data, cases, options, a.threads, log=lambda s: print(s, file=sys.stderr),
                           observe=a.observe, words=a.words, block=a.block, autoclose=a.autoclose,
                           widget=a.widget))
    if a.dump:
        write_jsonl(a.dump, recs)
    res = {
        "benchmark": "typing_replay",
        "split": a.split,
        "data": display_path(Path(a.data) / f"{a.split}.json.xz"),
        "n": len(cases),
        **({"block": a.block, "lines_typed": len(recs)} if a.block > 1 else {}),
        "settings": {"set": options, "threads": a.threads, "trigger": "automatic, after every character",
                     "warmup_lines": 1, "max_line_chars": MAX_LINE_CHARS, "other_open_files": True,
                     **sending(a), **({"suggest_widget": a.widget} if a.widget else {}),
                     "accept_rule": "first line == rest of the line (stripped at the right), or a one-line "
                     "proper prefix of it; Tab counts as a keystroke" + ("; and the right leading words of a wrong "
                     "suggestion, one keystroke a word (accept next word)" if a.words else "")},
        **run_info(loaded, a.note, t),
        **({"sweep": sweep(recs, THRESHOLDS)} if a.observe else report(recs)),
    }
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
