"""Sessions, the model thread, cancellation and the shape of a completion.

One resident model, one worker thread that owns it (the event loop never runs model code). Per document:
text + incremental syntax tree, the encoded prefix (in :mod:`local`), the last suggestion (warm start) and
the cancel token of the request in flight — a newer request for the same document cancels the older one,
which stops within one denoising step. Results for a document version that moved are dropped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import dataclasses
import logging
import os
import re
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import attrs
import torch

from . import edit as edits
from . import folders, syntax
from .context import ContextIndex, Folder, word_head
from .fair import FairExecutor
from .gate import Gate
from .local import LocalInfiller, WarmStart
from .model import LoadedModel
from .settings import CONTEXT_SOURCES, Settings
from .syntax.strict import misplaced_statement_word, rival, sound
from .syntax.style import omits_semicolons, without_semicolons
from .types import Cancelled, CancelToken, Candidate, InfillRequest, InfillResult, SpanKind, SpanPlan

log = logging.getLogger(__name__)

TAB_COLUMNS = 4  # what the view reads a leading tab as (Session.view)
TABS_LEARNED = frozenset({"go"})  # languages the model learned indented with tabs: read as they are
MAX_DOCUMENT_CHARS = 4_000_000  # larger documents are tracked but not completed (bounded memory and time)
MAX_PENDING_JOBS = 64  # model jobs queued at once; more are answered "busy" (each holds a copy of its text)
MAX_CACHED_PREFIXES = 16  # documents whose encoded prefix (keys/values) stays resident; least recent dropped
REFRESH_S = 60.0  # a document opening in a workspace folder listed longer ago than this looks for changed files
MAX_EDIT_CHARS = 8_000  # a rewrite/repair/fill range (about 200 lines): larger ones are refused with a message
MAX_EDIT_PASSES = 1_000  # decoder passes one edit may spend (bounds a long selection at high `steps`)
EDIT_KINDS = ("rewrite", "repair", "fill")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")



def scrub(text: str) -> str:
    """Lone UTF-16 surrogates (legal in JSON escapes, not in UTF-8) become U+FFFD: same UTF-16 length."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)


@dataclass
class LineShown:
    """What was shown as the cursor's line was typed (as you type), to tell a line the user has read and typed on
    from, not to be shown again on this line, from one they may still take.

    Typing through a shown line keeps it (its rest, ``warm``); inside a word only the word's rest shows, and at
    the word's end the line came back, at every word, however long the user had typed on without it: keystrokes
    with a wrong suggestion on screen. Once the rest of a word was shown after the line and the user typed past it
    (taking it or not), the line is not shown again; its words still are, as the rest of the word being typed
    (``bench/results/session35_ab.json``)."""

    start: int = -1  # where the line starts in the document
    lines: dict[str, int] = field(default_factory=dict)  # each whole line shown (stripped): how much was typed then
    words: list[int] = field(default_factory=list)  # how much was typed where the rest of a word was shown

    def declined(self, typed: int) -> set[str]:
        """The lines the user typed on from: one shown, then a word's rest shown after it, then typed past."""
        return {line for line, t in self.lines.items() if any(t <= w < typed for w in self.words)}

    def saw(self, typed: int, item: Candidate, line: str) -> None:
        """``item`` was shown with ``typed`` characters of the line before the cursor; ``line`` is the line it
        completes (:func:`_completed_line`)."""
        if item.source == "word":
            self.words.append(typed)
        else:
            self.lines.setdefault(line, typed)


@dataclass
class Session:
    uri: str
    version: int
    lang: str | None
    doc: syntax.SyntaxDocument
    inflight: CancelToken | None = None
    warm: WarmStart | None = None
    shown: LineShown = field(default_factory=LineShown)  # on the cursor's line, as you type
    big_lang: str | None = None  # the language of a document over MAX_DOCUMENT_CHARS (lang is None meanwhile)
    text_lang: str | None = None  # a language without a grammar: what its documents are grouped by for retrieval
    reading: syntax.SyntaxDocument | None = None  # the document as completion reads it, where that differs (view)
    tab: int = 0  # the columns each leading tab is read as in ``reading`` (0: tabs are read as they are)
    tabbed: bool | None = None  # indented_with_tabs (None: count again)
    page: str | None = None  # a page whose code blocks are completed as their language (syntax.page_kind)
    script: tuple[tuple[str, str, int], syntax.SyntaxDocument] | None = None  # the last block read (read_at)
    gave_up_logged: int | None = None  # the version whose grammar gave up, as logged (once a version)

    @property
    def view(self) -> syntax.SyntaxDocument:
        """The document as completion reads it: where its lines break with "\\r\\n" (or a lone "\\r"), or it is
        indented with tabs in a language the model learned indented with spaces, a copy with "\\n" breaks and the
        indentation in spaces (``reading``, :func:`syntax.view_text`); else the document itself. The model learned
        from "\\n" breaks only, and the checks, drafts and word heads read a line as ending at "\\n": typing the
        dev split's 303 lines with CRLF breaks, 30 % of them were completed, through the view 53 %
        (bench/results/crlf_ab.json). Indentation: bench/results/tabs_ab.json. The two have the same lines, and
        past each line's indentation the same text."""
        return self.reading or self.doc

    def read_at(self, start: int, end: int | None = None) -> syntax.Reading:
        """How completion reads the document at ``start`` (through ``end``): inside a page's block of code (a Vue,
        Svelte or HTML file's script, a Markdown file's fenced code), that block alone as a document of its
        language; else the :attr:`view`."""
        if self.page is not None:
            r = self._script_at(start, start if end is None else end)
            if r is not None:
                return r
        return syntax.Reading(self.doc, self.view, self.lang, self.tab)

    def _script_at(self, start: int, end: int) -> syntax.Reading | None:
        """The block of the page that holds ``[start, end]``, read as its language (edited incrementally as it is
        typed into, made again when another is read); None outside the blocks."""
        text = self.doc.text
        if self.page is None or len(text) > MAX_DOCUMENT_CHARS:
            return None
        for a, b, lang in syntax.code_blocks(text, self.page):
            if a <= start and end <= b:
                tab = TAB_COLUMNS if self.indented_with_tabs() else 0
                key = (text[a:b], lang, tab)
                if self.script is None or self.script[0][1:] != key[1:]:
                    self.script = (key, syntax.SyntaxDocument(syntax.view_text(key[0], tab), lang))
                elif self.script[0][0] != key[0]:  # typed into: one incremental edit of the block's tree
                    self.script[1].update(syntax.view_text(key[0], tab))
                    self.script = (key, self.script[1])
                line = self.doc.position_line(a)
                return syntax.Reading(self.doc, self.script[1], lang, tab, line, a - self.doc.offset_at(line, 0))
        return None

    def indented_with_tabs(self) -> bool:
        """Whether more lines start with a tab than with two spaces (kept in :attr:`tabbed` until a change may
        alter it: counting costs ~2 ms a megabyte)."""
        if self.tabbed is None:
            text = self.doc.text
            self.tabbed = "\t" in text and text.count("\n\t") > text.count("\n  ")
        return self.tabbed

    def sync_view(self) -> None:
        """Keep :attr:`reading` in step with the document after changes (:meth:`follow`): made when a "\\r" or
        tab indentation comes (:data:`TAB_COLUMNS`; not in :data:`TABS_LEARNED`), dropped when they go, made again
        where the two no longer have the same lines or the same grammar. None for a document too large to
        complete. While there is a view, only it has a tree (a tree costs ~50 bytes a character, and nothing reads
        the document's); the document gets its own back when the view goes."""
        small = len(self.doc.text) <= MAX_DOCUMENT_CHARS
        tab = TAB_COLUMNS if (small and self.lang is not None and self.lang not in TABS_LEARNED
                              and self.indented_with_tabs()) else 0
        if ("\r" not in self.doc.text and not tab) or not small:
            self.reading, self.tab = None, 0
            if self.doc.lang != self.lang:
                self.doc.parse_as(self.lang)
        elif (self.reading is None or self.reading.line_count != self.doc.line_count
              or self.reading.lang != self.lang or self.tab != tab):
            self.tab = tab
            self.reading = syntax.SyntaxDocument(syntax.view_text(self.doc.text, tab), self.lang)
            if self.doc.lang is not None:
                self.doc.parse_as(None)

    def follow(self, rng: tuple[int, int, int, int], lines_before: int) -> None:
        """Carry one change the document took (``rng``, when it had ``lines_before`` lines) into the view: the
        lines it touched, read again. Where the document's lines no longer match the view's (a change that joined
        a "\\r" and a "\\n" into one break), the view goes and :meth:`sync_view` makes it again."""
        r = self.reading
        if r is None:
            return
        first, last = min(rng[0], lines_before - 1), min(max(rng[0], rng[2]), lines_before - 1)
        new_last = last + self.doc.line_count - lines_before
        if first < 0 or new_last < first or r.line_count != lines_before:
            self.reading = None
            return
        lines = [self.doc.line_text(i) for i in range(first, new_last + 1)]
        if self.tab:
            lines = [syntax.view_line(line, self.tab) for line in lines]
        r.apply_change(first, 0, last, len(r.line_text(last).encode("utf-16-le")) // 2, "\n".join(lines))
        if r.line_count != self.doc.line_count:
            self.reading = None

    @property
    def retrieval_lang(self) -> str | None:
        """The language retrieval reads this document as (its lines, the other open documents of it): the
        grammar's, else the key of a language without one; none for a document too large to complete."""
        if self.lang is not None or self.big_lang is not None or len(self.doc.text) > MAX_DOCUMENT_CHARS:
            return self.lang
        return self.text_lang


@dataclass
class Completion:
    """What the server turns into LSP items; offsets are character offsets into the document text."""

    items: list[Candidate]
    start: int  # where replacement starts (the cursor, or the start of a healed word)
    offset: int  # the cursor
    version: int
    plan: SpanPlan | None
    stats: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


_CLOSING_ONLY = frozenset(")]};,")
_PUNCT_RIGHT = frozenset(")]}\"'`>;,")


def _writes_over(text: str, offset: int, cand: str) -> int:
    """Where the rest of the line is other punctuation than :func:`syntax.editor_closers` reads (``);`` of a call
    being edited): the characters of it a one-line suggestion ending with them writes over (all of it), else 0."""
    eol = text.find("\n", offset)
    rest = text[offset : len(text) if eol < 0 else eol]
    closers = rest.strip()
    if closers and all(ch in _PUNCT_RIGHT for ch in closers) and "\n" not in cand and cand.rstrip().endswith(closers):
        return len(rest.rstrip())
    return 0


def _completed_line(line_prefix: str, cand: str) -> str:
    """The cursor's line as far as accepting ``cand`` writes it (what is typed of it and the candidate's first line,
    stripped): what the gate's ``elsewhere`` counts and what :class:`LineShown` remembers. Not
    :func:`~dgcomplete.syntax.strict.edited_line`, which adds the text right of the cursor (an auto-closed ``)``):
    the gate's ``elsewhere`` weights were fitted on this reading."""
    return (line_prefix + cand.split("\n", 1)[0]).strip()


ELSEWHERE_WINDOW = 100_000  # characters each side of the cursor in which the gate's ``elsewhere`` counts a line


def _stands_elsewhere(text: str, offset: int, line: str, most: int = 2) -> int:
    """How often ``line`` (stripped) stands whole on a line of the document other than the cursor's, up to ``most``:
    a line the candidate completes that already stands twice is a pattern the file repeats, one that stands once is
    most often a neighbour copied where another line goes (the gate's ``elsewhere``). Looked for within
    ELSEWHERE_WINDOW characters each side with ``str.find`` (a `)` in a 1 MB file: 6 ms a keystroke without the
    window; splitting a 200 kB document into lines took 1 ms)."""
    if not line:
        return 0
    ls = text.rfind("\n", 0, offset) + 1
    lo, hi = max(0, offset - ELSEWHERE_WINDOW), offset + ELSEWHERE_WINDOW
    n, i = 0, text.find(line, lo, hi)
    while i >= 0 and n < most:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i + len(line))
        end = len(text) if end < 0 else end
        if start != ls and not text[start:i].strip(" \t") and not text[i + len(line) : end].strip(" \t\r"):
            n += 1
        i = text.find(line, end, hi)
    return n


def _repeats_suffix(cand: str, suffix: str, next_line: str, line_prefix: str) -> bool:
    """The candidate only repeats what follows the cursor (the next line, or the suffix's start).

    A line of closers (``}``, ``});``) at another indentation than the next line closes an outer block, as
    nested code does line after line: that is not a repeat.
    """
    body = cand.strip()
    if not body:
        return False
    if set(body) <= _CLOSING_ONLY:
        return bool(next_line.strip()) and (line_prefix + cand).rstrip() == next_line.rstrip()
    if next_line.strip() and body == next_line.strip():
        return True
    return bool(suffix.strip()) and suffix.lstrip().startswith(body) and len(body) > 1


def saves_keystrokes(text: str) -> bool:
    """Whether a suggestion is worth showing as you type: accepting ghost text is a keystroke (Tab), so a
    one-character suggestion saves none (on the dev split such items were ';', ':', '{', none right)."""
    return len(text) > 1


def gave_up_reason(lang: str | None) -> str:
    """Why a document its grammar gave up on (:class:`syntax.ParseGaveUp`) gets no suggestion or edit."""
    return (f"tree-sitter's {lang} grammar gave up on this document (past its parse budget): nothing is suggested "
            "or changed in it until its text changes")


class EngineError(RuntimeError):
    """A request the engine cannot serve (unknown document, model not loaded); the message is user-facing."""


class StaleEdit(EngineError):
    """The document moved away from the version an edit was asked for (before or while it ran)."""


@dataclass
class EditOptions:
    seed: int = 0
    fraction: float = 0.5  # rewrite: share of the selection's tokens renoised
    rounds: int = 6  # repair: denoising rounds
    hole_tokens: int = 48  # fill: tokens per hole


@dataclass
class EditResult:
    """An edit's outcome for ``[start, end)`` of document ``version`` (a cursor widened to its line)."""

    outcome: edits.Outcome
    start: int
    end: int
    version: int


def _folder_row(root: str, lang: str, f: Folder) -> dict[str, Any]:
    """One folder index as the stats and ``dgcomplete status`` list it."""
    return {"folder": root, "language": lang, "files": len(f.files), "lines": f.total}


class RemoteUse:
    """One command's requests to the remote backend from the model thread, which waits while ``loop`` runs each
    (cancelled with ``cancel``; a cancelled call raises :class:`Cancelled`).

    ``stats`` receives ``backend`` ("remote"), ``count`` (the calls answered) and ``remote_ms``. When a call fails,
    the command goes on with the local model if ``may_fall_back`` (``fallbackToLocal`` and a local model): ``stats``
    gets ``backend`` "local" and ``fallback`` (the server's message), and :meth:`ask` answers None from then on,
    without asking again; otherwise the failure is an :class:`EngineError` with the server's message.
    """

    def __init__(self, remote: Any, loop: asyncio.AbstractEventLoop, cancel: CancelToken, stats: dict[str, Any],
                 count: str, may_fall_back: bool, kind: str) -> None:
        self.remote, self.loop, self.cancel, self.stats = remote, loop, cancel, stats
        self.count, self.may_fall_back, self.kind = count, may_fall_back, kind
        stats["backend"] = "remote"

    @property
    def failed(self) -> bool:
        return "fallback" in self.stats

    def ask(self, req: InfillRequest) -> InfillResult | None:
        """The server's answer to ``req``, or None once it failed and the local model stands in."""
        if self.failed:
            return None
        try:
            res = asyncio.run_coroutine_threadsafe(self.remote.infill(req, self.cancel), self.loop).result()
        except Cancelled:
            raise
        except concurrent.futures.CancelledError as e:  # the call's task was cancelled (the loop is closing)
            raise Cancelled("cancelled") from e
        except Exception as e:  # RemoteError and transport failures
            message = getattr(e, "message", "") or str(e) or type(e).__name__
            if not self.may_fall_back:
                raise EngineError(message) from e
            log.warning("remote backend failed (%s); the local model does the rest of %s", message,
                        edits.TITLES[self.kind])
            self.stats.update(backend="local", fallback=message)
            return None
        self.stats[self.count] = self.stats.get(self.count, 0) + 1
        self.stats["remote_ms"] = round(self.stats.get("remote_ms", 0.0) + float(res.stats.get("remote_ms", 0.0)), 2)
        return res


class RemoteFiller:
    """Rewrite's and Repair's :data:`edit.Filler` on a remote backend: a job's span is sent as the selection to
    rewrite or repair (chat mode; completions mode fills it anew from its surroundings) and the reply is its new
    text, judged by :mod:`edit` as the local model's is. Called on the model thread (``remote`` makes the calls). A
    repair round's job sends only the lines of its error points and one line either side, the rest of the range
    going with the prefix and the suffix.

    ``rank`` (the local model's filler, when loaded) orders Repair's one-token edits, else they keep their order;
    ``fallback`` (the same, when ``remote`` may fall back) takes the job once the server failed. The stats get
    ``remote_calls`` and ``remote_ms`` from the start (:class:`RemoteUse`).
    """

    def __init__(self, remote: RemoteUse, task: str, lang: str | None,
                 on_step: Callable[[int, int], None] | None, *, rank: edits.ModelFiller | None = None,
                 fallback: edits.ModelFiller | None = None) -> None:
        self.remote, self.task, self.lang, self.on_step = remote, task, lang, on_step
        self._rank, self.fallback = rank, fallback
        remote.stats.update({remote.count: 0, "remote_ms": 0.0})

    @property
    def calls(self) -> int:  # the local model's work (ranking, fallback), as a ModelFiller counts it
        local = self._rank or self.fallback
        return local.calls if local is not None else 0

    @property
    def steps(self) -> int:
        local = self._rank or self.fallback
        return local.steps if local is not None else 0

    def rank(self, prefix: str, options: list[str], suffix: str) -> list[float]:
        return self._rank.rank(prefix, options, suffix) if self._rank is not None else [0.0] * len(options)

    def __call__(self, job: edits.SpanJob) -> str:
        if self.remote.failed and self.fallback is not None:
            return self.fallback(job)
        middle, lo, hi = job.middle, 0, len(job.middle)
        if job.noise:  # a repair round: the lines of its points, one line either side
            a, b = min(x for x, _ in job.noise), max(y for _, y in job.noise)
            lo = middle.rfind("\n", 0, max(0, middle.rfind("\n", 0, a))) + 1
            for _ in range(2):
                nl = middle.find("\n", b)
                hi = len(middle) if nl < 0 else nl
                b = hi + 1
                if nl < 0:
                    break
            # line breaks and blanks at its edges stay around it (a reply is read without them: a CRLF line's
            # "\r", the blank lines beside the error, would be lost)
            while lo < hi and middle[lo] in "\r\n":
                lo += 1
            while hi > lo and middle[hi - 1] in " \t\r\n":
                hi -= 1
        before, piece, after = middle[:lo], middle[lo:hi], middle[hi:]
        prefix = job.prefix + before
        lines = piece.count("\n") + 1
        plan = SpanPlan(SpanKind.RANGE, max_lines=2 * lines + 2, max_tokens=len(piece) // 2 + 32)
        req = InfillRequest(prefix, after + job.suffix, plan, self.lang, seed=job.seed, task=self.task,
                            original=piece)
        if self.on_step is not None:
            self.on_step(0, 1)  # staleness and progress, as between denoising steps
        res = self.remote.ask(req)
        if res is None:  # the server failed: the local model stands in (ask raised where it may not)
            assert self.fallback is not None
            return self.fallback(job)
        if not res.candidates and res.stats.get("cut_short"):
            cap = self.remote.remote.config.max_tokens_cap
            raise EngineError(f"the server's reply stopped at remote.maxTokensCap ({cap} "
                              "tokens) before the end of the selection: select less, or raise it")
        if not res.candidates:
            return middle  # unchanged: no edit
        text = res.candidates[0].text
        lead = prefix[prefix.rfind("\n") + 1 :]
        if lead and not lead.strip() and not piece[:1].isspace() and text.startswith(lead):  # written again
            text = text[len(lead) :]
        return before + text + after


class Engine:
    def __init__(
        self,
        loaded: LoadedModel | None,
        *,
        threads: int | None = None,
        max_steps: int | None = None,
        syntax_renoise: bool = True,
        remote: Any | None = None,
        fallback_to_local: bool = True,
    ) -> None:
        self.loaded = loaded
        self.local = LocalInfiller(loaded, max_steps=max_steps) if loaded is not None else None
        self.remote = remote
        self.fallback_to_local = fallback_to_local
        self.sessions: dict[str, Session] = {}
        self.threads = threads
        self.syntax_renoise = syntax_renoise
        self._pool = FairExecutor("dgcomplete-model")  # one model thread; sessions of a daemon served in turn
        self._base: Engine | None = None  # set on a view (see view())
        self._pending = 0
        self._recent: OrderedDict[str, None] = OrderedDict()  # doc keys with a resident prefix cache, LRU order
        self.load_error: str | None = None
        self.settings = Settings()  # the session's values (configure() replaces them); defaults until then
        self.context = ContextIndex()
        # workspace files are listed, read and indexed here, off the event loop and the model thread
        self._files = ThreadPoolExecutor(1, thread_name_prefix="dgcomplete-files")
        self._scanning: set[tuple[str, str]] = set()  # (folder, language) this session waits for
        self._rereading = 0  # files changed on disk (or closed) being read again
        # shared by the sessions of a daemon (view() keeps them), by (folder, language, line budget): the indexes
        # read (held by the sessions' ContextIndex, gone with the last), the reads in flight, when each was listed
        self._store: weakref.WeakValueDictionary[tuple[str, str, int], Folder] = weakref.WeakValueDictionary()
        self._reads: dict[tuple[str, str, int], asyncio.Future] = {}
        self._read_at: dict[tuple[str, str, int], float] = {}
        self.gate = Gate.load(loaded.path if loaded is not None else None)

    # ---- lifecycle ------------------------------------------------------------------------------------------
    async def start(self, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Choose the torch thread count by measurement and pay first-call costs once."""
        if self.local is None:
            return {}
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._warm_up, progress)

    def _warm_up(self, progress: Callable[[str], None] | None) -> dict[str, Any]:
        assert self.local is not None
        req = InfillRequest("def add(a, b):\n    return ", "\n", SpanPlan(SpanKind.REST_OF_LINE, 1, 16),
                            seed=0, doc_key="<warm-up>", max_steps=2)
        timings: dict[int, float] = {}
        cores = os.cpu_count() or 1  # a thread count from settings is clamped (100000 threads would sink the box)
        choices = [max(1, min(self.threads, cores))] if self.threads else [1, 2] if torch.get_num_threads() > 1 else [1]
        for n in choices:
            torch.set_num_threads(n)
            self.local.infill(req)
            runs = []
            for _ in range(5):
                t0 = time.perf_counter()
                self.local.infill(req)
                runs.append(time.perf_counter() - t0)
            timings[n] = min(runs)  # the least disturbed run: a busy box adds noise, never speed
            if progress:
                progress(f"{n} thread(s): {timings[n] * 1e3:.1f} ms per warm-up request")
        # more threads must clearly win: on a loaded 2-core machine a second thread can cost several times over
        best = 1 if 1 in timings and timings[1] <= 1.15 * min(timings.values()) else min(timings, key=timings.get)
        torch.set_num_threads(best)
        self.threads = best
        self.local.forget("<warm-up>")
        return {"threads": best, "timings_ms": {k: round(v * 1e3, 2) for k, v in timings.items()}}

    def min_confidence(self, lang: str | None) -> float:
        """The gate's threshold: the session's ``minConfidence``, else the one shipped with the model's gate for
        documents of ``lang`` (None: a language without a grammar)."""
        v = self.settings.min_confidence
        return self.gate.threshold_for(lang) if v is None else float(v)

    def configure(self, st: Settings) -> list[str]:
        """Apply a session's settings now; returns the changed keys this engine cannot apply (and why).

        Live: span sizes, languages, the gate, context sources, syntax renoising, the step budget (per
        request, so per session), remote fallback; threads (model-wide) when this engine owns the model.
        """
        before = self.settings.workspace_index_lines
        self.settings = attrs.evolve(st)  # a copy: the server's object keeps changing with the editor's
        if not self._reads_folders():
            self.context.trim(0)
        elif st.workspace_index_lines < before:
            self.context.trim(st.workspace_index_lines)
        elif st.workspace_index_lines > before:  # read again, further out
            self.context.trim(0)
        for s in self.sessions.values():
            self._want_folder(s)
        self.syntax_renoise = st.syntax_renoise
        self.fallback_to_local = st.fallback_to_local
        refused = []
        if st.threads is not None and st.threads != self.threads:
            if self._base is not None:
                refused.append("threads (the shared daemon's --threads applies to every session)")
            elif self.local is not None:
                n = max(1, min(st.threads, os.cpu_count() or 1))
                self.threads = n
                self._pool.submit(torch.set_num_threads, n)  # on the model thread, between requests
        return refused

    def view(self) -> Engine:
        """An engine for one more LSP session of a shared daemon: the same model, model thread and prefix
        caches (keyed by URI and checked token by token, so sharing one is only a cache miss, never a wrong
        answer), and the same indexes of workspace folders read from disk (what is on disk is the same for both);
        its own documents, settings and requests in flight. Two sessions never see each other's text."""
        v = copy.copy(self)
        v.sessions, v.settings, v._pending, v._base = {}, attrs.evolve(self.settings), 0, self
        v.context = ContextIndex()  # retrieval sees this session's documents (and folders) only
        v._scanning, v._rereading = set(), 0  # the folder indexes on disk are shared (_store)
        return v

    async def shutdown(self) -> None:
        for s in self.sessions.values():
            if s.inflight:
                s.inflight.cancel("shutdown")
        if self._base is not None:  # one session of a daemon ends: its documents go, the model stays
            for uri in list(self.sessions):
                self.close(uri)
            if self.remote is not None and self.remote is not self._base.remote:
                await self.remote.aclose()
            return
        if self.remote is not None:
            await self.remote.aclose()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._files.shutdown(wait=False, cancel_futures=True)

    # ---- documents ------------------------------------------------------------------------------------------
    def open(self, uri: str, text: str, version: int, language_id: str | None) -> Session:
        lang = syntax.language_for(language_id, uri)
        text = scrub(text)
        if len(text) > MAX_DOCUMENT_CHARS:  # see _fit
            s = Session(uri, version, None, syntax.SyntaxDocument(text, None), big_lang=lang)
        else:  # parsed by sync_view: as the document, or (a "\r" break, tab indentation) as its view only
            s = Session(uri, version, lang, syntax.SyntaxDocument(text, None))
        s.text_lang = None if lang is not None else syntax.text_language(language_id, uri)
        s.page = syntax.page_kind(language_id, uri) if lang is None else None
        s.sync_view()
        self.sessions[uri] = s
        self.context.open(uri, s.retrieval_lang, text)
        self._want_folder(s)
        return s

    # ---- workspace folders ----------------------------------------------------------------------------------
    def set_folders(self, paths: list[str]) -> None:
        """The client's workspace folders (local paths). A folder's files of a language are read for retrieval
        when a document of that language opens in it (``workspaceIndexLines`` bounds them, nearest first)."""
        self.context.set_roots(paths)
        for s in self.sessions.values():
            self._want_folder(s)

    def _want_folder(self, s: Session) -> None:
        """Start reading the files of ``s``'s language in its workspace folder (and of a page's script languages,
        whose completions read them), unless they are read already (by this session, or by another session of the
        daemon with the same line budget: then its index is shared)."""
        langs = [s.retrieval_lang or s.big_lang]
        if s.page is not None and len(s.doc.text) <= MAX_DOCUMENT_CHARS:
            langs += sorted({lang for _, _, lang in syntax.code_blocks(s.doc.text, s.page)})
        for lang in langs:
            self._want_folder_of(s, lang)

    def _want_folder_of(self, s: Session, lang: str | None) -> None:
        if not self._reads_folders():
            return
        budget = self.settings.workspace_index_lines
        key = self.context.folder_key(self.context.disk_copy(s.uri), lang)
        if key is None or not folders.listable(key[1]) or key in self._scanning:
            return
        root, lang = key
        shared = (root, lang, budget)
        folder = self.context.folders.get(key)
        if folder is None and (theirs := self._store.get(shared)) is not None:  # another session read it
            self.context.add_folder(root, lang, theirs, budget)
            folder = self.context.folders.get(key)
        if folder is not None and time.monotonic() - self._read_at.get(shared, 0.0) < REFRESH_S:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script driving the engine): no background reading
            return
        fut = self._reads.get(shared)
        if fut is None:
            fut = self._read_folder(loop, shared, folder, self.context.disk_copy(s.uri))
        self._scanning.add(key)

        def done(f: asyncio.Future) -> None:
            self._scanning.discard(key)
            if f.cancelled() or f.exception() is not None or not self._reads_folders():  # failed, switched off
                return
            if isinstance(f.result(), Folder):
                self.context.add_folder(root, lang, f.result(), self.settings.workspace_index_lines)

        fut.add_done_callback(done)

    def _read_folder(self, loop: asyncio.AbstractEventLoop, shared: tuple[str, str, int], folder: Folder | None,
                     near: str | None) -> asyncio.Future:
        """Read a folder's files of a language on the files thread (what changed since, when ``folder`` holds
        them already); the result goes into the store and ``folder`` here, once for all sessions waiting on it."""
        root, lang, budget = shared
        self._read_at[shared] = time.monotonic()
        # what the files thread reads of the folder's state is copied here, on the loop that changes it
        known, seen = (dict(folder.mtimes), set(folder.seen)) if folder is not None else ({}, set())
        room = budget - folder.total if folder is not None else budget

        def job() -> Any:  # on the files thread
            if folder is not None:  # read before: what changed since (a watching client has said so already)
                return folders.changes(root, lang, known, seen, room)
            names = folders.listed(root, lang)
            return Folder(folders.files_of(root, lang, near, budget, names=names), seen=names)

        def done(f: asyncio.Future) -> None:  # runs before the waiting sessions' callbacks
            self._reads.pop(shared, None)
            if f.cancelled():
                return
            if f.exception() is not None:
                log.warning("reading workspace folder %s (%s) failed: %s", root, lang, f.exception())
                return
            if folder is not None:
                updates, names = f.result()
                folder.seen = set(names)
                for p, text, mtime in updates:
                    folder.put(p, text, mtime)
                return
            self._store[shared] = f.result()
            log.info("workspace folder %s: %d %s files, %d lines indexed", root, len(f.result().files), lang,
                     f.result().total)

        fut = loop.run_in_executor(self._files, job)
        self._reads[shared] = fut
        fut.add_done_callback(done)
        return fut

    def _reads_folders(self) -> bool:
        """Whether retrieval reads workspace files: a local model to score drafts, the ``workspace`` source on,
        and a line budget."""
        return self.local is not None and "workspace" in (self.settings.context_sources or CONTEXT_SOURCES) and \
            self.settings.workspace_index_lines > 0

    def files_changed(self, changes: list[tuple[str, bool]]) -> None:
        """Files changed on disk ((path, deleted) pairs, from the client's file watcher): read them again."""
        for path, deleted in changes:
            self._reread(path, deleted)

    def _reread(self, path: str, deleted: bool = False) -> None:
        """Read a file of an indexed folder again, on the files thread (a deleted one just leaves). Not while it
        is open here: its document speaks for it (each save would otherwise re-index it twice, in the folder and
        in what drafts subtract); it is read when it closes. Another session sharing the folder reads it on its
        own client's report, or at its next look (REFRESH_S)."""
        folder = self.context.folder_of(path)
        if folder is None:
            return
        if deleted:
            self.context.put_file(path, None)
            return
        if path in self.context.paths.values():
            return
        # the same change reported to two sessions sharing the folder is read once (the time tells)
        known = folder.mtimes.get(path)
        try:
            fut = asyncio.get_running_loop().run_in_executor(self._files, folders.read_changed, path, known)
        except RuntimeError:
            return
        self._rereading += 1

        def done(f: asyncio.Future) -> None:
            self._rereading -= 1
            if not f.cancelled() and f.exception() is None and f.result() is not None:
                self.context.put_file(path, *f.result())

        fut.add_done_callback(done)

    def folder_indexes(self, views: Iterable[Engine]) -> list[dict[str, Any]]:
        """The workspace folder indexes in memory (one per folder, language family and line budget) and how many
        of ``views`` (a daemon's sessions) hold each, for ``dgcomplete status``."""
        held = [id(f) for v in views for f in v.context.folders.values()]
        return [{**_folder_row(r, lg, f), "line_budget": b, "sessions": held.count(id(f))}
                for (r, lg, b), f in sorted(self._store.items())]

    def folder_stats(self) -> dict[str, Any]:
        """What the workspace index holds, for ``dgcomplete.stats``."""
        return {"folders": self.context.roots, "scanning": sorted(f"{r} ({lg})" for r, lg in self._scanning),
                "rereading": self._rereading,
                "indexed": [_folder_row(r, lg, f) for (r, lg), f in self.context.folders.items()]}

    @staticmethod
    def _fit(s: Session) -> None:
        """No syntax tree (a tree costs ~50 bytes per character) and no language (nothing re-parses it) for a
        document too large to complete; both come back when it shrinks well below the bound."""
        n = len(s.doc.text)
        if s.lang is not None and n > MAX_DOCUMENT_CHARS:
            s.big_lang, s.lang = s.lang, None
            s.doc.parse_as(None)
        elif s.big_lang is not None and n < 0.9 * MAX_DOCUMENT_CHARS:
            s.lang, s.big_lang = s.big_lang, None
            s.doc.parse_as(s.lang)

    def change(self, uri: str, version: int, changes: list[tuple[tuple[int, int, int, int] | None, str]]) -> None:
        """Apply LSP content changes: ((start_line, start_col16, end_line, end_col16) | None for full, text)."""
        s = self.session(uri)
        for rng, text in changes:
            text = scrub(text)
            if rng is None:
                s.reading = None  # made again from the new text (sync_view)
            if rng is None and len(text) > MAX_DOCUMENT_CHARS:
                s.doc = syntax.SyntaxDocument(text, None)
            elif rng is None:
                s.doc.replace_all(text)
            else:
                if s.lang is not None and len(s.doc.text) + len(text) > MAX_DOCUMENT_CHARS:
                    # the size cap applies before the parse: a 30 MB paste was parsed first (27 s on the loop)
                    a, b = s.doc.offset_at(rng[0], rng[1]), s.doc.offset_at(rng[2], rng[3])
                    if len(s.doc.text) - abs(b - a) + len(text) > MAX_DOCUMENT_CHARS:
                        s.big_lang, s.lang = s.lang, None
                        s.doc.parse_as(None)
                lines_before = s.doc.line_count
                s.doc.apply_change(*rng, text)
                s.follow(rng, lines_before)
            if rng is None or ("  " if s.tabbed else "\t") in text:  # may tip the indentation's count
                s.tabbed = None
            self._reindex(s, rng, text)
        self._fit(s)
        s.sync_view()
        s.version = version
        if s.inflight is not None:  # the request in flight was computed for an older version
            s.inflight.cancel("stale")

    def _reindex(self, s: Session, rng: tuple[int, int, int, int] | None, text: str) -> None:
        """Keep the retrieval index in step with one applied change: only the lines it touched."""
        if rng is None or s.retrieval_lang is None or self.context.lines_of(s.uri) is None:
            self.context.open(s.uri, s.retrieval_lang, s.doc.text)
            return
        first = min(rng[0], rng[2])
        added = text.count("\n") + text.count("\r") - text.count("\r\n")
        count = s.doc.line_count
        new = [s.doc.line_text(i) for i in range(first, min(count, first + added + 1))]
        self.context.splice(s.uri, first, max(rng[0], rng[2]), new)
        lines = self.context.lines_of(s.uri)
        if lines is not None and len(lines) != count:  # out of step (a change past the end): start over
            self.context.open(s.uri, s.retrieval_lang, s.doc.text)

    def close(self, uri: str) -> None:
        path = self.context.disk_copy(uri)
        self.context.close(uri)
        s = self.sessions.pop(uri, None)
        if path is not None and s is not None:  # its file speaks again, as saved (if it was saved)
            self._reread(path)
        if s and s.inflight:
            s.inflight.cancel("closed")
        self._recent.pop(uri, None)
        if self.local is not None:
            self._pool.submit(self.local.forget, uri)

    def session(self, uri: str) -> Session:
        s = self.sessions.get(uri)
        if s is None:
            raise EngineError(f"unknown document {uri} (not opened with textDocument/didOpen)")
        return s

    # ---- completion -----------------------------------------------------------------------------------------
    async def complete(
        self,
        uri: str,
        offset: int,
        *,
        n: int = 1,
        max_lines: int | None = None,
        seed: int | None = None,
        cancel: CancelToken | None = None,
        single_line: bool = False,
    ) -> Completion:
        """Complete at ``offset``: plan the span, gather candidates (samples and drafts), rank and gate them.

        Worked out on the document as :meth:`Session.read_at` reads it (its lines broken with "\\n", leading tabs as
        spaces where the model learned spaces, a page's script alone); the items come back in the document's
        offsets, with its own line break and indentation. Where the editor auto-closed what the typed part of the
        line opened (``foo(`` + ``)``: :func:`syntax.editor_closers`), the line is read without those closers, as
        the line it will be, and each item writes over the ones it writes itself (``Candidate.replaces``): typing
        the dev split's lines in an editor that auto-closes, the model saw ``)`` where the line goes on and the
        retrieved lines that close the call did not parse before it (bench/results/autoclose_ab.json)."""
        s = self.session(uri)
        offset = max(0, min(offset, len(s.doc.text)))
        try:
            return await self._complete_at(s, offset, n=n, max_lines=max_lines, seed=seed, cancel=cancel,
                                           single_line=single_line)
        except syntax.ParseGaveUp as e:  # a grammar gave up on a window or a candidate the checks parsed
            return Completion([], offset, offset, s.version, None, reason=str(e))

    async def _complete_at(self, s: Session, offset: int, *, n: int, max_lines: int | None, seed: int | None,
                           cancel: CancelToken | None, single_line: bool) -> Completion:
        """:meth:`complete` at ``offset`` (within the document) of ``s``."""
        r = s.read_at(offset)
        at = r.to_view(offset)
        closers = syntax.editor_closers(r.view.text, at, r.lang) if len(r.view.text) <= MAX_DOCUMENT_CHARS else ""
        if closers:  # read the line as it will be written; each item writes over the closers it writes itself
            r = dataclasses.replace(r, view=r.view.edited_copy(at, at + len(closers), ""))
        comp = await self._complete(s, r, at, n=n, max_lines=max_lines, seed=seed, cancel=cancel,
                                    single_line=single_line)
        if closers:
            comp.stats["editor_closers"] = len(closers)
        typed = r.view.text[r.view.text.rfind("\n", 0, at) + 1 : at]
        items = [dataclasses.replace(c, text=r.in_document(c.text, offset),
                                     replaces=syntax.closed_by(typed, c.text, closers, r.lang) if closers
                                     else _writes_over(r.view.text, at, c.text))
                 for c in comp.items]
        return dataclasses.replace(comp, items=items, start=r.from_view(comp.start), offset=offset)

    async def _complete(self, s: Session, r: syntax.Reading, offset: int, *, n: int,
                        max_lines: int | None, seed: int | None, cancel: CancelToken | None,
                        single_line: bool) -> Completion:
        """:meth:`complete` at ``offset`` of the view ``r`` reads, in its language."""
        uri = s.uri
        version = s.version
        view, lang = r.view, r.lang
        text = view.text
        if len(text) > MAX_DOCUMENT_CHARS:
            return Completion([], offset, offset, version, None, reason="document too large to complete")
        if view.gave_up:  # no tree to plan a span by or check a suggestion against
            if s.gave_up_logged != version:
                s.gave_up_logged = version
                log.warning("%s (version %d): %s", uri, version, gave_up_reason(lang))
            return Completion([], offset, offset, version, None, reason=gave_up_reason(lang))
        enabled = self.settings.enabled_languages
        if enabled is not None and (lang or "plaintext") not in enabled:
            return Completion([], offset, offset, version, None, reason=f"completion disabled for {lang}")
        t0 = time.perf_counter()
        plan = self._plan(text, offset, lang, view.tree, max_lines=max_lines, single_line=single_line)
        t_plan = time.perf_counter()
        if plan.kind == SpanKind.NONE:
            return Completion([], offset, offset, version, plan, {"plan": plan.kind.value}, reason=plan.reason)
        prefix = text[:offset]
        through = s.warm.rest(prefix) if s.warm is not None else None  # typing through what was shown
        own_line = r.doc.line_text(r.line + view.position_line(offset))  # the cursor's line as retrieval indexed it
        drafts = self._drafts(s, text, offset, lang, invoked=n > 1, through=through, own_line=own_line)
        if seed is None:  # unset: the clock's, so asking again may give other alternatives; the stats say which
            seed = self.settings.seed if self.settings.seed is not None else time.time_ns() % 2**31
        req = self._request(text, offset, plan, s, lang, drafts, n, seed, version, remote=self.remote is not None)
        token = cancel or CancelToken()
        if s.inflight is not None and s.inflight is not token:
            s.inflight.cancel("superseded")  # Neovim does not cancel its previous request; we do
        s.inflight = token
        try:
            result = await self._run_infill(req, token, s, view, offset, lang)
        except Cancelled as e:
            return Completion([], offset, offset, version, plan, {"plan": plan.kind.value}, reason=str(e) or "cancelled")
        finally:
            if s.inflight is token:
                s.inflight = None
        if s.version != version:
            return Completion([], offset, offset, version, plan, reason="stale: document changed during the request")
        t_inf = time.perf_counter()
        drops = dict(result.drops or {})  # what the model thread's checks dropped before scoring
        dropped = list(result.dropped)
        ranked: list[Candidate] = []  # every line as ranked, the rivals never shown among them
        path = folders.uri_to_path(uri)  # the document's file, for the check that reads its name
        ls = text.rfind("\n", 0, offset) + 1
        if s.shown.start != ls:
            s.shown = LineShown(ls)
        items = self._postprocess(result.candidates, text, offset, plan, lang, view.tree, drops,
                                  vetted=result.drops is not None, dropped=dropped, ranked=ranked, path=path,
                                  as_you_type=n <= 1, declined=s.shown.declined(offset - ls) if n <= 1 else None)
        gated = ""
        floor = self.min_confidence(lang)
        if n <= 1 and floor > 0 and items:
            # as you type, under the gate, only what saves keystrokes (bench/results/one_char_ab.json); the next
            # candidate may show instead of a dropped one; minConfidence 0 still shows everything
            kept = [c for c in items if saves_keystrokes(c.text)]
            if len(kept) < len(items):
                drops["one_char"] = drops.get("one_char", 0) + len(items) - len(kept)
                items = kept
                gated = "" if items else "only a one-character suggestion (accepting it saves no keystroke)"
        top = items[0] if items else None

        def head_of(cand: str) -> str:  # the rest of the word being typed that a line gives, if it may show
            return self._word_head(text, offset, cand, lang, view.tree, path)

        # the best line as ranked that saves a keystroke: a rival never shown as a line (the twin of a neighbour, a
        # method the class has) still begins with the word being typed (one character is no line to take it from)
        first = next((c for c in ranked if saves_keystrokes(c.text)), None)
        if top is not None and n <= 1 and top.confidence is not None and top.confidence < floor:
            # the line is not sure, the word being typed may be: its rest, when the document has that word
            # (not from the next candidates: typing the dev split, their heads were right 6 times in 19)
            rest = head_of((first or top).text)
            if rest:
                top = Candidate(rest, top.score, "word", dict(top.features), top.confidence)
                items = [top]
            else:
                gated = "below the confidence gate"  # the numbers are in the stats (confidence, min_confidence)
                items = []
        elif top is not None and n <= 1 and floor > 0 and (top.source == "warm" or (
                through is not None and top.text.startswith(through))):
            # a shown line the user types through instead of taking it (or a line that goes on from what was
            # shown, a word's rest): inside a word, only the rest of that word (the line comes back where no word
            # is being typed). Typing the dev split's lines, with the twin rule: 417 -> 361 wrong suggestions
            # read, 669 -> 679 accepted; the whole line kept instead: 359 wrong read but 601 accepted, the word
            # heads it hid lost (bench/results/typing_through_ab.json)
            rest = head_of(top.text)
            if rest and rest != top.text:
                top = Candidate(rest, top.score, "word", dict(top.features), top.confidence)
                items = [top]
        elif top is None and not gated and n <= 1 and floor > 0:
            # every line was dropped as unsound, yet the word being typed may be right in the first that has one
            # (typing the dev split: right 15 times in 20, as often as the heads of lines the gate hides)
            rest = next((h for c in ([first] if first else []) + dropped if (h := head_of(c.text))), "")
            if rest:
                top = Candidate(rest, 0.0, "word", {"dropped": 1.0}, 0.0)
                items = [top]
        t_post = time.perf_counter()
        if items:
            s.warm = WarmStart(prefix, items[0].text, items[0].confidence)
            if n <= 1:
                s.shown.saw(offset - ls, items[0], _completed_line(text[ls:offset], items[0].text))
        stats = dict(result.stats)
        stats.update({
            "plan": plan.kind.value, "plan_reason": plan.reason, "max_tokens": plan.max_tokens,
            "max_lines": plan.max_lines,
            "syntax_ms": round((t_plan - t0 + t_post - t_inf) * 1e3, 2),
            "engine_ms": round((t_post - t0) * 1e3, 2), "candidates": len(result.candidates),
            "returned": len(items), **{f"dropped_{k}": v for k, v in drops.items()},
            "drafts": len(req.drafts), "rows": req.n, "seed": seed,
            "language": lang or s.retrieval_lang,  # as read: a page's script as its own, a file without a grammar's key
        })
        if top is not None:
            stats.update({"confidence": round(top.confidence or 0.0, 4), "source": top.source,
                          "min_confidence": round(floor, 4),
                          "shown_tokens": int(top.features.get("tokens", 0)),
                          "elsewhere": int(top.features.get("elsewhere", 0))})
            if top.source == "word":  # the rest of the word from a line the gate hid, or one the checks dropped
                stats["word_of"] = "dropped" if top.features.get("dropped") else "hidden"
        reason = "" if items else (gated or result.reason or "no candidate survived post-processing")
        # a healed word is replaced from its start: the item's range begins where the typed word begins
        start = offset - len(str(stats.get("healed", "")))
        return Completion(items, start, offset, version, plan, stats, reason)

    @staticmethod
    def _word_head(text: str, offset: int, cand: str, lang: str | None, tree: Any, path: str | None = None) -> str:
        """The rest of the word being typed that ``cand`` gives (:func:`word_head`), unless it would write a rival
        of the line (:func:`rival`: ``def __l`` + ``e__`` where the class has ``__le__``, with what follows it where
        the file agrees the twin of a neighbour, a Java public class its file is not named for) or a ``return``
        where no statement can begin (``return re`` + ``turn``: :func:`misplaced_statement_word`)."""
        rest = word_head(text, offset, cand)
        if rest and (rival(text, offset, rest, lang, tree, path, word=True)
                     or misplaced_statement_word(text, offset, rest, lang, tree)):
            return ""
        return rest

    def _drafts(self, s: Session, text: str, offset: int, lang: str | None, invoked: bool = False,
                through: str | None = None, own_line: str | None = None) -> list[Candidate]:
        """Retrieved lines for the model to score beside its samples (the enabled sources only), and ``through``,
        the rest of the shown suggestion the user is typing through, if any; ``own_line``: the cursor's line as the
        retrieval index holds it (:meth:`ContextIndex.drafts`).

        ``match`` and ``predecessor`` drafts only when Invoked: they add right items there, but as you type a gate
        refitted with ``match`` showed about as many right suggestions on the dev splits and fewer on test
        (bench/results/match_source_ab.json), and ``predecessor`` drafts under the shipped gate were right on 11
        of the 32 suggestions they added on the dev splits (bench/results/predecessor_ab.json)."""
        sources = self.settings.context_sources or CONTEXT_SOURCES
        if self.local is None:
            return []
        self.context.touch(s.uri)
        found = self.context.drafts(s.uri, lang or s.retrieval_lang, text, offset, limit=3, document="document" in sources,
                                    workspace="workspace" in sources, match=invoked, before=invoked,
                                    own_line=own_line)
        out = [Candidate(d.text, source=d.source, features={"strength": d.strength, "here": float(d.here)})
               for d in found]
        # typing through a shown suggestion: its rest stays a candidate, with the confidence it was shown with
        rest = through if s.warm is not None and s.warm.confidence is not None else None
        if rest is not None:
            out = [c for c in out if c.text != rest]
            out.insert(0, Candidate(rest, source="warm", features={"prior": float(s.warm.confidence or 0.0)}))
        return out

    async def _run_infill(self, req: InfillRequest, token: CancelToken, s: Session,
                          view: syntax.SyntaxDocument, offset: int, lang: str | None) -> InfillResult:
        if self.remote is not None:
            try:
                return await self.remote.infill(req, token)
            except Cancelled:
                raise
            except Exception as e:  # RemoteError and transport failures
                if not (self.fallback_to_local and self.local is not None):
                    raise EngineError(getattr(e, "message", str(e))) from e
                log.warning("remote backend failed (%s); using the local model", getattr(e, "message", e))
        if self.local is None:
            raise EngineError(self.load_error or "no model loaded")
        if self._pending >= MAX_PENDING_JOBS:
            raise Cancelled("busy: too many requests waiting for the model")
        # a copy of the tree for the model thread (O(1)); the event loop keeps editing the session's own
        text, tree, warm = view.text, None if view.tree is None else view.tree.copy(), s.warm
        loop = asyncio.get_running_loop()
        self._remember(req.doc_key or "")
        fut = loop.run_in_executor(self._pool, lambda: self._infill(req, token, text, offset, lang, tree, warm))
        self._pending += 1
        try:
            return await fut
        except asyncio.CancelledError:
            token.cancel("cancelled")  # $/cancelRequest: the worker stops at its next step
            raise
        finally:
            self._pending -= 1

    def _plan(self, text: str, offset: int, lang: str | None, tree: Any, *, max_lines: int | None = None,
              max_tokens: int | None = None, single_line: bool = False) -> SpanPlan:
        """The span to fill at ``offset`` (:func:`syntax.plan_span` within the settings' bounds); one line of at most
        32 tokens when ``single_line``."""
        plan = syntax.plan_span(text, offset, lang, tree, max_lines=max_lines or self.settings.max_lines,
                                max_tokens=max_tokens or self.settings.max_tokens)
        if single_line and plan.max_lines > 1:
            plan = SpanPlan(SpanKind.REST_OF_LINE, 1, min(plan.max_tokens, 32), plan.indent, plan.reason)
        return plan

    def _request(self, text: str, offset: int, plan: SpanPlan, s: Session, lang: str | None, drafts: list[Candidate], n: int,
                 seed: int, version: int, *, remote: bool) -> InfillRequest:
        """The infill job at ``offset``: ``n > 1`` asks as Invoked (several items, the causal line too); ``remote``:
        for the remote backend."""
        # the local model's alternatives are the file's drafts when it has some: its extra (Gumbel-sampled)
        # rows lost the top item to them on the dev split and added no right answer
        # (bench/results/invoked_rows_ab.json); a remote backend is asked for n
        rows = 1 if drafts and not remote else n
        sources = self.settings.context_sources or CONTEXT_SOURCES
        return InfillRequest(text[:offset], text[offset:], plan, lang, n=rows, seed=seed, doc_key=s.uri,
                             version=version, drafts=drafts, sample="diffusion" in sources,
                             max_steps=self.settings.steps,
                             # an Invoked request can wait for the causal head's greedy line (~10 encoder passes)
                             causal=n > 1 and "causal" in sources, invoked=n > 1)

    def _infill(self, req: InfillRequest, token: CancelToken, text: str, offset: int, lang: str | None, tree: Any,
                warm: WarmStart | None = None) -> InfillResult:
        """The local model's candidates for ``req`` at ``offset`` of ``text``, vetted before scoring (model thread)."""
        assert self.local is not None
        hook = self._syntax_hook(text, offset, req.plan, lang, tree) if self.syntax_renoise else None
        vet = self._vetter(text, offset, req.plan, lang, tree)
        return self.local.infill(req, token, warm=warm, syntax_hook=hook, vet=vet)

    def _remember(self, key: str) -> None:
        """Keep at most MAX_CACHED_PREFIXES prefix caches: the least recently used is forgotten (model thread)."""
        self._recent[key] = None
        self._recent.move_to_end(key)
        while len(self._recent) > MAX_CACHED_PREFIXES:
            old, _ = self._recent.popitem(last=False)
            if self.local is not None:
                self._pool.submit(self.local.forget, old)

    async def run_in_model_thread(self, fn: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    # ---- edits of a range (rewrite, repair, fill holes) -------------------------------------------------------
    async def edit(self, kind: str, uri: str, start: int, end: int, version: int | None = None,
                   cancel: CancelToken | None = None, progress: Callable[[int, int], None] | None = None,
                   options: EditOptions | None = None) -> EditResult:
        """Run one of :mod:`edit`'s algorithms on ``[start, end)`` (code points) of document ``version``.

        Queued on the model thread like a completion (MAX_PENDING_JOBS), bounded in range size and in work (decoder
        passes for rewrite and repair; for fill, :data:`edit.MAX_HOLES` holes started within
        :data:`edit.FILL_BUDGET_S`), cancelled when the document changes (then :class:`StaleEdit`).
        ``progress(step, total)`` is called from the model thread (for fill: hole, holes). An empty range is the
        cursor's line for repair and fill.

        Worked out on the document as :meth:`Session.read_at` reads the range, as completions are; the edits come
        back in the document's offsets, with its own line break and indentation.
        """
        if kind not in EDIT_KINDS:
            raise EngineError(f"unknown edit kind {kind!r}")
        s = self.session(uri)
        version = s.version if version is None else version
        if s.version != version:
            raise StaleEdit(f"{uri} changed (version {s.version}, the request was for {version})")
        n = len(s.doc.text)
        start, end = max(0, min(start, n)), max(0, min(end, n))
        r = s.read_at(start, end)
        try:
            res = await self._edit(kind, s, r, r.to_view(start), r.to_view(end), version, cancel, progress, options)
        except syntax.ParseGaveUp as e:  # on a candidate the checks parsed: nothing is applied
            return EditResult(edits.Outcome(reason=str(e)), start, end, version)
        if r.view is s.doc:
            return res
        out = res.outcome
        mapped: list[edits.Edit] = []
        for e in out.edits:  # sorted and disjoint: none may reach back over the one before it
            mapped.append(edits.Edit(*r.edit_in_document(e.start, e.end, e.text, mapped[-1].end if mapped else start)))
        out.edits = mapped
        out.new_text = r.in_document(out.new_text, start)
        return EditResult(out, r.from_view(res.start), r.from_view(res.end), res.version)

    async def _edit(self, kind: str, s: Session, r: syntax.Reading, start: int, end: int, version: int,
                    cancel: CancelToken | None, progress: Callable[[int, int], None] | None,
                    options: EditOptions | None) -> EditResult:
        """:meth:`edit` on ``[start, end)`` of the view ``r`` reads."""
        uri = s.uri
        text, lang, opts = r.view.text, r.lang, options or EditOptions()
        start, end = edits.target_span(text, start, end, kind)

        def result(reason: str, **stats: Any) -> EditResult:
            return EditResult(edits.Outcome(reason=reason, stats=stats), start, end, version)

        if self.local is None and self.remote is None:
            raise EngineError(f"{edits.TITLES[kind]} needs a model (no model loaded"
                              f"{': ' + self.load_error if self.load_error else ''})")
        if len(text) > MAX_DOCUMENT_CHARS:
            return result("document too large")
        if r.view.gave_up:  # no tree to check an edit against
            return result(gave_up_reason(lang))
        size = r.from_view(end) - r.from_view(start)  # the document's characters, a CRLF break two
        if size > MAX_EDIT_CHARS:
            return result(f"selection too large ({size} characters; at most {MAX_EDIT_CHARS}): select less")
        if self._pending >= MAX_PENDING_JOBS:
            return result("busy: too many requests waiting for the model")
        token = cancel or CancelToken()

        def on_step(step: int, total: int) -> None:  # model thread
            if s.version != version or self.sessions.get(uri) is not s:
                token.cancel("stale")
            if progress is not None:
                progress(step, total)

        filler = None
        backend: dict[str, Any] = {}  # which backend answered, when there is a remote one (RemoteUse)
        remote = None if self.remote is None else RemoteUse(
            self.remote, asyncio.get_running_loop(), token, backend, "remote_holes" if kind == "fill" else
            "remote_calls", self.fallback_to_local and self.local is not None, kind)
        if kind == "fill":  # each hole's drafts, read here on the event loop that owns the context index
            drafts = [[[d for d in self._drafts(s, doc, at, lang, invoked=True) if not edits.is_placeholder(d.text)]
                       for doc, at in edits.hole_views(text, h)]
                      for h in edits.find_holes(text, start, end)[: edits.MAX_HOLES]]
            propose = self._hole_proposer(s, lang, drafts, token, opts, version, remote)
        else:
            local = None if self.local is None else edits.ModelFiller(self.local, uri, cancel=token, on_step=on_step,
                                                                      max_passes=MAX_EDIT_PASSES)
            filler = local
            if remote is not None:  # the server rewrites or repairs, as it completes
                filler = RemoteFiller(remote, kind, lang, on_step, rank=local,
                                      fallback=local if remote.may_fall_back else None)

        def run() -> edits.Outcome:
            if kind == "rewrite":
                return edits.rewrite(text, start, end, lang, filler, fraction=opts.fraction, seed=opts.seed)
            if kind == "repair":
                return edits.repair(text, start, end, lang, filler, rounds=opts.rounds, seed=opts.seed)
            return edits.fill_holes(text, start, end, lang, propose, on_hole=on_step)

        t0 = time.perf_counter()
        self._remember(uri)
        fut = asyncio.get_running_loop().run_in_executor(self._pool, run)
        self._pending += 1
        try:
            outcome = await fut
        except asyncio.CancelledError:
            token.cancel("cancelled")  # the worker stops at its next denoising step
            raise
        except Cancelled as e:
            if token.reason == "stale":
                raise StaleEdit(f"{uri} changed during the edit (version {s.version}, it was for {version})") from e
            work = {} if filler is None else {"steps": filler.steps, "denoise_calls": filler.calls}
            return result(str(e) or "cancelled", **work)
        finally:
            self._pending -= 1
        if s.version != version or self.sessions.get(uri) is not s:
            raise StaleEdit(f"{uri} changed during the edit (version {s.version}, it was for {version})")
        outcome.stats.update(ms=round((time.perf_counter() - t0) * 1e3, 1), **backend)
        if filler is not None:  # a fill's work is completions, counted in its own stats
            outcome.stats.update(denoise_calls=filler.calls, steps=filler.steps)
        if outcome.ok and not edits.edits_inside(outcome.edits, start, end):  # never: edit.py confines them
            log.error("%s produced edits outside the range; dropped", kind)
            return result("internal error: edit outside the range")
        return EditResult(outcome, start, end, version)

    def _hole_proposer(self, s: Session, lang: str | None, drafts: list[list[list[Candidate]]], token: CancelToken,
                       opts: EditOptions,
                       version: int, remote: RemoteUse | None) -> edits.Propose:
        """Fill holes' proposals: what an Invoked completion would list where the hole stands (model thread).

        The same pipeline as :meth:`complete` with ``n > 1``: the span planned at the hole (a line, a statement, a
        body; one line for a hole inside a line), the retrieved drafts beside the model's samples and the causal
        line, the scorer, then the checks every suggestion passes; no gate, the user asked; the retrieved lines
        that pass come first. A bare denoising of the hole wrote noise (`self_______`) and restored one line of 583
        held-out dev holes, this 58 (bench/results/holes_ab.json).

        ``view`` is the index of the document asked in :func:`edit.hole_views` (a TODO's words above the hole, then
        without them), whose drafts ``drafts[i][view]`` holds, read on the event loop for each.

        With a remote backend (``remote``) the holes are asked of it, as the completions are (its choices, then the
        same checks); when it fails, the local model answers that hole and the rest if ``fallbackToLocal`` allows,
        else the command fails with the server's message (:class:`RemoteUse`).
        """
        path = folders.uri_to_path(s.uri)

        def propose(doc: str, at: int, hole: edits.Hole, i: int, view: int) -> list[str]:
            tree = syntax.parse(doc, lang) if syntax.is_supported(lang) else None
            plan = self._plan(doc, at, lang, tree, max_tokens=opts.hole_tokens, single_line=hole.inline)
            if plan.kind == SpanKind.NONE:
                return []
            seed = opts.seed + 7919 * i
            res = None
            if remote is not None:  # None once the server failed and the local model stands in
                req = self._request(doc, at, plan, s, lang, [], 3, seed, version, remote=True)
                res = remote.ask(req)
            if res is None:
                req = self._request(doc, at, plan, s, lang, drafts[i][view], 3, seed, version, remote=False)
                res = self._infill(req, token, doc, at, lang, tree)
            items = self._postprocess(res.candidates, doc, at, plan, lang, tree, vetted=res.drops is not None,
                                      path=path, as_you_type=False)
            # what the file already says where the hole stands before what the model makes up, each in rank order:
            # restored 53 -> 58 of the dev splits' 583 holes (bench/results/holes_ab.json, "drafts first")
            said = {d.text.strip() for d in req.drafts}
            return [c.text for c in items if c.text.strip() in said] + [c.text for c in items
                                                                          if c.text.strip() not in said]

        return propose

    def _syntax_hook(self, text: str, offset: int, plan: SpanPlan, lang: str | None, tree: Any = None):
        """Character spans of new ERROR/MISSING nodes in each candidate, for syntax-guided renoising.

        Runs on the model thread with its own copy of the document's tree, so checks on a large file reparse
        only the region around the cursor instead of the whole file per keystroke.
        """
        if not syntax.is_supported(lang):
            return None

        def hook(cands: list[str], step: int) -> list[list[tuple[int, int]]]:
            out = []
            for c in cands:
                c = c.split("\n", 1)[0] if plan.single_line else "\n".join(c.split("\n")[: plan.max_lines])
                out.append(syntax.error_char_spans(text, offset, offset, c, lang, tree) if c.strip() else [])
            return out

        return hook

    @staticmethod
    def _vetter(text: str, offset: int, plan: SpanPlan, lang: str | None, tree: Any) -> Callable[[str], tuple[str, str]]:
        """A candidate's text -> (its text cut to the plan at syntax boundaries, why it is dropped or "").

        In a JavaScript or TypeScript file without semicolons, a line's ending ``;`` is dropped (:mod:`syntax.style`).
        Dropped: empty, only repeating the suffix, new syntax errors, or unsound by the language's strict check
        (:func:`syntax.strict.sound`: glued identifiers, a line that says nothing, an import the file has, a line
        of modifiers only, a ``}`` the code above does not place there, a value ordered against itself, a return that
        does not fit the function, a header naming a parameter twice, a comment no one started, Python's own
        parser). The model thread runs it on its copy of the tree before scoring (what will not be shown is not
        scored); post-processing runs it again.
        """
        suffix = text[offset:]
        next_line = suffix.split("\n", 2)[1] if suffix.startswith("\n") and suffix.count("\n") >= 1 else ""
        line_prefix = text[text.rfind("\n", 0, offset) + 1 : offset]
        rest_of_line = suffix.split("\n", 1)[0]
        bare = omits_semicolons(text, offset, lang)  # a file without `;`: a suggestion does without them too

        def vet(raw: str) -> tuple[str, str]:
            t = syntax.cut_candidate(text, offset, raw, plan, lang, tree)
            if bare:
                t = without_semicolons(t, rest_of_line)
            if not t.strip():
                return t, "empty"
            if _repeats_suffix(t, suffix, next_line, line_prefix):
                return t, "repeats_suffix"  # the next line, or only what the suffix already has
            if not syntax.is_valid(text, offset, offset, t, lang, tree):
                return t, "syntax"
            return t, sound(text, offset, t, lang, tree)

        return vet

    def _postprocess(self, cands: list[Candidate], text: str, offset: int, plan: SpanPlan, lang: str | None,
                     tree: Any, drops: dict[str, int] | None = None, *, vetted: bool = False,
                     dropped: list[Candidate] | None = None, ranked: list[Candidate] | None = None,
                     path: str | None = None, as_you_type: bool = True,
                     declined: set[str] | None = None) -> list[Candidate]:
        """Cut to the plan at syntax boundaries, drop unsound or redundant candidates, rank by the gate.

        ``drops`` counts why candidates were dropped (empty, duplicate, repeats_suffix, syntax, glues,
        empty_comment, empty_string, duplicate_import, dangling_modifiers, misplaced_closer, self_comparison,
        return_mismatch, duplicate_parameters, python_parser, and repeats_neighbour, redefines, misnamed_type,
        declined, broken_line and leaves_body: ranked, then never shown) for the stats;
        ``dropped`` receives those the checks dropped, as written (the word being typed may be right in them).
        ``vetted``: the model thread already ran these checks on the same text (the local backend), so they are not
        run twice per keystroke.
        ``ranked`` receives every distinct line in rank order, the rivals dropped after ranking among them.
        ``path``: the document's file, for the one check that reads its name (:func:`misnamed_public_type`).
        ``declined``: the whole lines the user has typed on from (:meth:`LineShown.declined`): ranked, never shown.
        ``as_you_type``: an automatic request, whose candidates the gate also weighs by how often their line already
        stands in the file (``elsewhere``, fitted on typed lines). An Invoked list ranks without it: there a right
        draft that stands once lost first place to the causal line, which typed lines never have (first item right
        123 -> 121 and 80 -> 78 of the dev splits' 600 and 303, bench/results/session34_ab.json).
        """
        drops = {} if drops is None else drops
        kept: list[Candidate] = []
        vet = None if vetted else self._vetter(text, offset, plan, lang, tree)
        line_prefix = text[text.rfind("\n", 0, offset) + 1 : offset]
        for c in cands:
            t, why = vet(c.text) if vet is not None else (c.text, "")
            if why:
                drops[why] = drops.get(why, 0) + 1
                if dropped is not None:
                    dropped.append(c)
                continue
            kept.append(Candidate(t, c.score, c.source, {**c.features, **syntax.cut_marks(c.text, t)}))
        # independent sources that agree on a text (the model's sample and a retrieved line) are more often right
        agree: dict[str, int] = {}
        for c in kept:
            agree[c.text] = agree.get(c.text, 0) + 1
        typed = len(line_prefix.lstrip())
        totals = sorted(((c.features.get("total", -99.0), c.text) for c in kept if c.features), reverse=True)
        elsewhere: dict[str, float] = {}  # per text: a sample and a draft that agree are looked up once
        for c in kept:
            if c.features:
                c.features["agree"] = (float(agree[c.text] - 1) + c.features.get("agree_draft", 0.0)
                                       + c.features.get("dups", 0.0))
                c.features["typed"] = float(typed)
                if as_you_type:
                    if c.text not in elsewhere:
                        done = _completed_line(line_prefix, c.text)
                        elsewhere[c.text] = float(_stands_elsewhere(text, offset, done))
                    c.features["elsewhere"] = elsewhere[c.text]
                other = next((t for t, x in totals if x != c.text), c.features.get("total", 0.0) - 5.0)
                c.features["margin"] = c.features.get("total", 0.0) - other
                c.confidence = self.gate.confidence(c)
        # best first: the gate's estimate when the candidates were scored, else the sampler's entropy
        kept.sort(key=lambda c: (-(c.confidence if c.confidence is not None else -1.0), c.score))
        seen: set[str] = set()
        out: list[Candidate] = []
        for c in kept:
            if c.text in seen:
                drops["duplicate"] = drops.get("duplicate", 0) + 1
                continue
            seen.add(c.text)
            if ranked is not None:
                ranked.append(c)
            # ranked as rivals above (rows of a table, methods of a class), never shown
            why = rival(text, offset, c.text, lang, tree, path)
            if not why and declined and _completed_line(line_prefix, c.text) in declined:
                why = "declined"
            # the line checks: never shown, yet ranked, as a first word may be the rest of the word being typed. A
            # candidate the checks cut short is a fragment the user goes on from (`lilv_i` + `s_directory`), not a
            # line; the rest of one shown before (warm) was asked when it was shown
            if not why and c.source != "warm" and not c.features.get("cut_short"):
                if not syntax.finishes_line(text, offset, c.text, lang, tree):
                    why = "broken_line"  # the typed part, finished so, is still an error (`return (` + `...args)`)
                elif not syntax.mends_below(text, offset, c.text, lang, tree):
                    why = "leaves_body"  # the lines below are a body without its head, and the line leaves them so
            if why:
                drops[why] = drops.get(why, 0) + 1
                continue
            out.append(c)
        return out
