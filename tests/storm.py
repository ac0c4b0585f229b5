"""A typing storm against the daemon (tests/test_reliability.py for 5 s, ``python -m bench.reliability`` for 60).

Several documents edited and completed at 50 requests/s with cancellations; no result may be stale (the client
replays every edit and checks each result against the version current when it was answered), memory after
warm-up must not grow by 5 % or more, latency must recover afterwards.
"""

from __future__ import annotations

import time
from typing import Any

from dgcomplete.syntax.document import offset_of, position_of

from .lsp_client import RawDaemon, id_key, inline_params

UNICODE_SOURCE = '''import unicodedata


def greet(name):
    message = "héllo " + name + " 😀"
    print(message)
    return message


def label(key):
    names = {"ja": "漢字", "emoji": "🎉🎉", "math": "∑ x²"}
    value = names.get(key, "?")
    return f"{key}: {value} ✓"


class Box:
    def __init__(self, items):
        self.items = list(items)
        self.tag = "📦"

    def describe(self):
        parts = [str(i) for i in self.items]
        return self.tag + " " + ", ".join(parts)
'''


class StormDoc:
    """One document of the storm: the client's copy, replayed edits, per-version snapshots and fences."""

    def __init__(self, uri: str, language: str, session: Any) -> None:
        self.uri, self.language, self.session = uri, language, session
        self.text = session.initial
        self.version = 1
        self.i = 0  # next key
        self.snapshots: dict[int, str] = {1: self.text}
        self.fences: list[tuple[int, Any]] = []  # (version, id of the stats request sent right after it)
        self.cursor = session.keys[0].start if session.keys else 0
        self.pending: Any = None  # the last completion request not yet known to be answered
        self.ready_at = 0.0  # storm clock: not typed in before (its typist is thinking)

    def pause(self, thinking_s: float) -> float:
        """Seconds the typist thinks before the next key: its session's own delay when that is ``thinking_s``
        or more (the pause before a line's Enter), else none (the storm's rate paces ordinary keys)."""
        k = self.session.keys[self.i] if self.i < len(self.session.keys) else None
        return k.delay if k is not None and k.delay >= thinking_s else 0.0

    def next_edit(self) -> tuple[dict[str, Any], int]:
        """The next keystroke as an LSP content change (positions in the text before it), and the cursor."""
        if self.i >= len(self.session.keys):  # replay from the start: one full-text change
            self.i = 0
            self.text = self.session.initial
            self.version += 1
            self.snapshots[self.version] = self.text
            return {"text": self.text}, self.session.keys[0].start
        k = self.session.keys[self.i]
        self.i += 1
        a, b = position_of(self.text, k.start), position_of(self.text, k.end)
        self.text = self.text[: k.start] + k.text + self.text[k.end :]
        self.version += 1
        self.snapshots[self.version] = self.text
        return {"range": {"start": {"line": a[0], "character": a[1]}, "end": {"line": b[0], "character": b[1]}},
                "text": k.text}, k.cursor


def _next_ready(docs: list[StormDoc], tick: int, now: float) -> StormDoc:
    """Round robin from ``tick`` over the documents whose typist is not thinking; when every one is (they
    start together, so their pauses can coincide), the one whose pause ends first: the storm keeps its rate."""
    for j in range(len(docs)):
        doc = docs[(tick + j) % len(docs)]
        if doc.ready_at <= now:
            return doc
    return min(docs, key=lambda d: d.ready_at)


def _latencies(d: RawDaemon, uri: str, text: str, n: int, timeout: float = 60.0) -> list[float]:
    """``n`` sequential completion requests at the end of ``text`` (ms each)."""
    line, col = position_of(text, len(text))
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = d.request("textDocument/inlineCompletion", inline_params(uri, line, col, invoked=True), timeout)
        if r is None:
            raise RuntimeError("the daemon did not answer a latency probe")
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def storm(d: RawDaemon, seconds: float = 60.0, *, rate: float = 50.0, warmup_s: float | None = None,
          cancel_prob: float = 0.5, request_prob: float = 0.6, seed: int = 0, probes: int = 15,
          extra_sources: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    """A typing storm on several documents at ``rate`` completion requests/s (plus their edits), then checks.

    Every keystroke is a didChange (incremental, UTF-16 ranges) and a fence (the stats command, answered
    synchronously: every response read after it was written after the change was applied); ``request_prob`` of
    them also send a completion request at the cursor (keystrokes come at ``rate / request_prob`` per second,
    so a request often sees its document change without being superseded), and about ``cancel_prob`` of the
    previous requests get a $/cancelRequest (VS Code cancels on each keystroke, Neovim does not). Keys come
    round robin, but a document whose typist pauses to think (a session delay of at least the shortest
    ``Pace.line_pause``) gets none for that long, cut short when every typist is thinking: a change cancels
    the document's request in flight, so without pauses hardly any request finishes for its version and the
    checks below have little to check. A result with items is *stale* when it arrived after the fence of a
    newer version of its document; every item must also fit the text of the version it was
    requested for (same line, range around the cursor, insert text extending the typed word).
    """
    import random

    # the documents and their keystrokes: the benchmarks' fixture files and typing sessions (bench/)
    from bench import fixture_sources
    from bench.typing_sessions import Pace, build_sessions

    rng = random.Random(seed)
    thinking_s = Pace().line_pause[0]  # the sessions below are built with the default pace
    warmup_s = min(10.0, seconds / 4) if warmup_s is None else warmup_s
    sources = fixture_sources() + [("unicode.py", "python", UNICODE_SOURCE)] + list(extra_sources or [])
    sessions = build_sessions(sources, max(240.0, seconds * 8), seed=seed)
    docs = [StormDoc(f"file:///storm/{i}-{s.name.replace('/', '_')}", s.language, s) for i, s in enumerate(sessions)]
    probe_uri = "file:///storm/probe.py"
    probe_text = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return "
    d.notify("textDocument/didOpen", {"textDocument": {"uri": probe_uri, "languageId": "python", "version": 1,
                                                       "text": probe_text}})
    before = _latencies(d, probe_uri, probe_text, probes)
    for doc in docs:
        d.notify("textDocument/didOpen", {"textDocument": {"uri": doc.uri, "languageId": doc.language,
                                                           "version": doc.version, "text": doc.text}})
    requests: dict[str, dict[str, Any]] = {}
    rss: list[tuple[float, int]] = []
    cancels = 0
    t0 = time.perf_counter()
    tick = request_prob / rate
    n = keys = 0
    next_rss = 0.0
    while (now := time.perf_counter() - t0) < seconds:
        if now >= next_rss:
            rss.append((round(now, 2), d.rss_kb()))
            next_rss += 1.0
        doc = _next_ready(docs, keys, now)
        keys += 1
        doc.ready_at = now + doc.pause(thinking_s)
        change, cursor = doc.next_edit()
        d.notify("textDocument/didChange", {"textDocument": {"uri": doc.uri, "version": doc.version},
                                            "contentChanges": [change]})
        doc.fences.append((doc.version, d.request_nowait("workspace/executeCommand",
                                                         {"command": "dgcomplete.stats"}, d.new_id("fence"))))
        if rng.random() >= request_prob:
            _pace(t0 + keys * tick)
            continue
        if doc.pending is not None and rng.random() < cancel_prob:
            d.notify("$/cancelRequest", {"id": doc.pending})
            cancels += 1
        line, col = position_of(doc.text, cursor)
        rid = d.request_nowait("textDocument/inlineCompletion", inline_params(doc.uri, line, col), d.new_id("storm"))
        requests[id_key(rid)] = {"id": rid, "doc": doc, "version": doc.version, "cursor": cursor,
                                 "t": time.perf_counter()}
        doc.pending = rid
        n += 1
        if not d.alive():
            break
        _pace(t0 + keys * tick)
    storm_s = time.perf_counter() - t0
    rss.append((round(storm_s, 2), d.rss_kb()))
    # collect every answer (fences included: they prove order)
    answers: dict[str, dict[str, Any]] = {}
    unanswered = 0
    for k, req in requests.items():
        r = d.wait(req["id"], 60.0)
        if r is None:
            unanswered += 1
        else:
            answers[k] = r
    fence_seq: dict[str, list[tuple[int, int]]] = {}
    for doc in docs:
        seqs = []
        for version, fid in doc.fences:
            r = d.wait(fid, 60.0)
            if r is None:
                unanswered += 1
            else:
                seqs.append((version, r["_seq"]))
        fence_seq[doc.uri] = seqs
    drained_s = time.perf_counter() - t0
    # latency after the storm: how long until a request is fast again, then the same probe as before
    base = sorted(before)[len(before) // 2]
    t_rec = time.perf_counter()
    recovered_after = None
    for _ in range(50):
        lat = _latencies(d, probe_uri, probe_text, 1)[0]
        if lat <= max(2 * base, base + 50):
            recovered_after = round((time.perf_counter() - t_rec) * 1e3, 1)
            break
    after = _latencies(d, probe_uri, probe_text, probes)
    rss.append((round(time.perf_counter() - t0, 2), d.rss_kb()))
    # checks
    stale, inconsistent, empty, codes = 0, 0, 0, {}
    examples: list[str] = []
    by_doc: dict[str, int] = {}
    latency = []
    for k, req in requests.items():
        r = answers.get(k)
        if r is None:
            continue
        if "error" in r:
            c = str(r["error"].get("code"))
            codes[c] = codes.get(c, 0) + 1
            continue
        latency.append((r["_t"] - req["t"]) * 1e3)
        items = (r.get("result") or {}).get("items") or []
        if not items:
            empty += 1
            continue
        doc, v = req["doc"], req["version"]
        by_doc[doc.uri] = by_doc.get(doc.uri, 0) + 1
        later = [seq for version, seq in fence_seq[doc.uri] if version > v]
        if later and min(later) < r["_seq"]:
            stale += 1
            examples.append(f"stale: {doc.uri} v{v} answered after the fence of v{v + 1}")
        text = doc.snapshots[v]
        problem = _item_problem(text, req["cursor"], items)
        if problem:
            inconsistent += 1
            examples.append(f"{doc.uri} v{v}: {problem}")
    warm = [kb for t, kb in rss if t >= warmup_s] or [rss[-1][1]]
    growth = (rss[-2][1] - warm[0]) / warm[0] * 100 if warm[0] else None
    return {
        "seconds": round(storm_s, 1), "rate_target": rate, "rate_sent": round(n / storm_s, 1),
        "documents": len(docs), "keystrokes": keys, "requests": n, "cancel_requests_sent": cancels, "answered": len(answers),
        "unanswered": unanswered, "with_items": sum(by_doc.values()),
        "with_items_by_doc": by_doc, "empty": empty, "errors": codes, "stale": stale,
        "inconsistent": inconsistent, "examples": examples[:10],
        "drain_s": round(drained_s - storm_s, 2), "alive": d.alive(),
        "latency_storm_ms": _summ(latency),
        "latency_before_ms": _summ(before), "latency_after_ms": _summ(after),
        "recovered_after_ms": recovered_after,
        "rss_mb": {"warm": round(warm[0] / 1024, 1), "end_of_storm": round(rss[-2][1] / 1024, 1),
                   "after": round(rss[-1][1] / 1024, 1), "peak": round(max(kb for _, kb in rss) / 1024, 1)},
        "rss_growth_pct": None if growth is None else round(growth, 2), "warmup_s": warmup_s,
        "rss_samples": [(t, round(kb / 1024, 1)) for t, kb in rss],
    }


def _pace(until: float) -> None:
    left = until - time.perf_counter()
    if left > 0:
        time.sleep(left)


def _summ(xs: list[float]) -> dict[str, float | int | None]:
    if not xs:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    s = sorted(xs)
    pick = lambda q: round(s[min(len(s) - 1, int(q * len(s)))], 1)  # noqa: E731
    return {"n": len(s), "p50": pick(0.5), "p95": pick(0.95), "max": round(s[-1], 1)}


def _item_problem(text: str, cursor: int, items: list[dict[str, Any]]) -> str:
    """Why an inline item does not fit ``text`` with the cursor at ``cursor`` ('' when it does)."""
    line, col = position_of(text, cursor)
    for it in items:
        rng, insert = it.get("range"), it.get("insertText")
        if not isinstance(insert, str):
            return f"insertText is not a string: {it}"
        if rng is None:
            continue
        s, e = rng["start"], rng["end"]
        if not (s["line"] == e["line"] == line):
            return f"range {rng} is not on the cursor's line {line}"
        a = offset_of(text, s["line"], s["character"], strict=True)
        b = offset_of(text, e["line"], e["character"], strict=True)
        if a is None or b is None:
            return f"range {rng} is not inside the document (or splits a surrogate pair)"
        if not a <= cursor <= b:
            return f"range {rng} does not contain the cursor {line}:{col}"
        typed = text[a:cursor]
        if not insert.startswith(typed):
            return f"insertText {insert!r} does not extend the typed {typed!r}"
        if any(c not in ")]}\"'`>;, \t" for c in text[cursor:b]):
            return f"range {rng} replaces text that is not closers: {text[cursor:b]!r}"
    return ""
