"""Closers the editor put right of the cursor: what auto-closing brackets and quotes leave as one types.

VS Code (``editor.autoClosingBrackets``, on by default) and Neovim's autopair plugins insert the closer with the
opener, so while a line is typed the text right of the cursor is most often ``)``, ``]``, ``")`` or ``}``: on the
dev split's lines, typed so, 39 % of the keystrokes had one there. The engine reads the line without them (as
the line it will be once written) and lets each suggestion write over the ones it closes itself
(:func:`closed_by`); the rest stay for the user to type over. Strings and line comments are followed as a
tokenizer would on one line; anything it cannot follow (a comment open, a closer that does not match) leaves the
line as it is.
"""

from __future__ import annotations

_PAIRS = {"(": ")", "[": "]", "{": "}"}
_QUOTES = "\"'`"
_HASH_COMMENT = frozenset({"python", "ruby", "bash", "php"})
_NO_SLASH_COMMENT = frozenset({"python", "ruby", "bash"})


class _Line:
    """The state of one line read left to right: the open string's quote, the brackets open outside strings
    (their closers, innermost last), and whether a line comment or an unmatched closer ended the reading."""

    def __init__(self, lang: str | None) -> None:
        self.quote = ""
        self.stack: list[str] = []
        self.stopped = False  # a comment began, or a closer did not match (nothing more is followed)
        self.hash = lang in _HASH_COMMENT
        self.slash = lang not in _NO_SLASH_COMMENT

    def feed(self, text: str, on_close: list[str] | None = None, floor: int = 0) -> None:
        """Read ``text``. Each string or bracket open before the reading began (``floor`` of :attr:`stack`, and the
        string if one was open) that it closes is appended to ``on_close``, in order."""
        outer_string = bool(self.quote)
        i = 0
        while i < len(text) and not self.stopped:
            ch = text[i]
            if ch == "\n":  # a new line: only what was open before it carries on (a string does not)
                self.quote, outer_string = "", False
            elif self.quote:
                if ch == "\\":
                    i += 1
                elif ch == self.quote:
                    if outer_string and on_close is not None:
                        on_close.append(ch)
                    self.quote, outer_string = "", False
            elif ch in _QUOTES:
                self.quote = ch
            elif (self.hash and ch == "#") or (self.slash and text.startswith("//", i)):
                nl = text.find("\n", i)
                if nl < 0:
                    self.stopped = True
                    break
                i = nl
                continue
            elif ch in _PAIRS:
                self.stack.append(_PAIRS[ch])
            elif ch in ")]}":
                if not self.stack:
                    pass  # closes a line above (`} else {`)
                elif self.stack[-1] != ch:
                    self.stopped = True
                    break
                else:
                    self.stack.pop()
                    if len(self.stack) < floor:
                        floor = len(self.stack)
                        if on_close is not None:
                            on_close.append(ch)
            i += 1

    @property
    def owed(self) -> str:
        """What the line still owes, innermost first: the open string's quote, then the brackets' closers."""
        return self.quote + "".join(reversed(self.stack))


def editor_closers(text: str, offset: int, lang: str | None) -> str:
    """The closers right of ``offset`` on its line when they are all the line has there and the typed part of the
    line owes them, innermost first (``foo(bar`` + ``)``, ``print("x`` + ``")``): what an auto-closing editor
    put there. "" otherwise (other text right of the cursor, a comment, a quote the scan cannot place)."""
    eol = text.find("\n", offset)
    rest = text[offset : len(text) if eol < 0 else eol].rstrip(" \t\r")
    if not rest or any(ch not in ")]}" and ch not in _QUOTES for ch in rest):
        return ""
    line = _Line(lang)
    line.feed(text[text.rfind("\n", 0, offset) + 1 : offset])
    return rest if not line.stopped and line.owed.startswith(rest) else ""


def closed_by(typed: str, cand: str, closers: str, lang: str | None) -> int:
    """How many of ``closers`` (:func:`editor_closers` of the line whose typed part is ``typed``) ``cand`` writes
    itself, inserted at the cursor: those its item replaces. ``bar`` of ``foo(bar`` closes none, so the editor's
    ``)`` stays; ``bar) + 1`` closes it, so the ``)`` goes and the line reads ``foo(bar) + 1``."""
    line = _Line(lang)
    line.feed(typed)
    closed: list[str] = []
    line.feed(cand, closed, len(line.stack))
    n = 0
    for want, got in zip(closers, closed, strict=False):
        if want != got:
            break
        n += 1
    return n
