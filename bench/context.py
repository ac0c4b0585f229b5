"""Completion quality on held-out real code, measured through the real daemon over LSP (issue #16, item 7).

Each case of :mod:`bench.heldout` is played the way an editor would: ``didOpen`` the case's other open
documents, then the case document, an Automatic (or, with ``--trigger invoked``, an Invoked)
``textDocument/inlineCompletion`` at the cursor, then
``dgcomplete.stats`` for the engine's own account of the request (``last``), then ``didClose`` everything.
One daemon serves all cases of a variant, so indexes and caches behave as in a session. With ``--workspace`` the
daemon is also given every package of the split, unpacked as a checkout (:mod:`bench.workspace`), as its
workspace folders, and the documents are opened as their files there; ``--no-others`` opens only the case's own
document (a user with one file open).

Reported, over all requests and by language family (python / js / go / rust / java / c) and kind (whole_line / mid_line;
``edit`` with ``--edits``: a piece of a mid-line case's line taken out, the rest of the line right of the cursor):

* ``exact``: the shown item's text, minus what is already typed (the item replaces ``range.start`` ..
  cursor), first line stripped, equals the expected rest of line stripped; the rate is over *all* requests;
* ``shown``: share of requests that got an item; ``precision``: exact among shown;
* ``words_shown``, ``words_right``: Automatic requests that showed the rest of the typed word (the engine's
  ``word`` source, shown where the gate hid the line) and those whose word the expected text starts with; they
  count in none of the line figures above or below;
* ``parse_rate``: shown items whose edit leaves the file parsing at least as well as before (tree-sitter
  ERROR/MISSING count not higher; for Python also ``ast.parse`` of the whole file when it parsed before);
* ``length_ratio``: median shown tokens / expected tokens (the model's tokenizer) over shown items,
  or the shown/expected character ratio when no tokenizer is at hand (``length_unit``
  says which; ``char_ratio`` is always given);
* latency p50/p95 measured by the client (one warm-up request first, not counted);
* two baselines that need no daemon: ``prev_line_same_indent`` (suggest the nearest line above at the same
  indentation, when it starts with what is typed) and ``verbatim_above`` (the oracle: the expected line occurs
  verbatim above the cursor).

    python -m bench.context [--split dev|test|dev_langs|test_langs] [--n N] [--model DIR] [--threads N] [--set key=JSON ...]
                            [--trigger automatic|invoked] [--workspace] [--no-others]
                            [--ablate [NAME ...]] [--dump FILE.jsonl] [--out bench/results/context.json]
    python -m bench.context --curve FILE.jsonl [--variant NAME] [--target 0.5] [--plot bench/results/context_gate.png]

``--curve`` sweeps the show/hide threshold offline over the dumped confidences (run with the gate off, e.g.
``--set minConfidence=0``, so every candidate is there) and prints the lowest threshold whose precision reaches
``--target``, with its coverage.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from dgcomplete.syntax.document import offset_of

from . import (
    RESULTS,
    ROOT,
    Timer,
    display_path,
    emit,
    loadavg,
    machine_info,
    model_info,
    pct,
    resolve_model,
    spread,
    write_jsonl,
)
from .heldout import OUT as HELDOUT
from .heldout import (
    SPLITS,
    add_sending_args,
    as_sent,
    case_document,
    family,
    load,
    other_text,
    real_language,
    sending,
)
from .latency import Daemon, pos_at
from .workspace import case_path, materialize, workspace_split

# Named variants for --ablate: initialization options merged over --set.  Edit freely (issue #16's settings).
ABLATIONS: dict[str, dict[str, Any]] = {
    "all": {},
    "no_gate": {"minConfidence": 0},
    "diffusion_only": {"contextSources": ["diffusion"]},
    "retrieval_only": {"contextSources": ["document", "workspace"]},
    "no_workspace": {"contextSources": ["diffusion", "document"]},
}
REQUEST_TIMEOUT_S = 60.0
GROUPS = ("family", "kind", "family_kind", "lang")


# ---- the daemon with initialization options ---------------------------------------------------------------------
class OptionsDaemon(Daemon):
    """:class:`bench.latency.Daemon` with the settings under test, and what it said about them."""

    def unknown_settings(self) -> list[str]:
        """The daemon's "unknown setting" warnings: a variant whose options it does not know yet."""
        try:
            text = self.log_file.read_text(errors="replace") if self.log_file else ""
        except OSError:
            return []
        return [m.group(1) for m in re.finditer(r"unknown setting '([^']*)' ignored", text)]


# ---- scoring ------------------------------------------------------------------------------------------------
def offset_at(text: str, pos: lsp.Position) -> int:
    """Character offset of an LSP (UTF-16) position (``offset_of``, clamped)."""
    return offset_of(text, pos.line, pos.character)


def first_line(s: str) -> str:
    return s.split("\n", 1)[0].strip()


def _python_parses(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return False
    return True


def parses_after(doc: str, lang_id: str, start: int, end: int, insert: str) -> bool:
    """Does the file parse at least as well after the edit (tree-sitter errors; Python: ``ast`` too)?"""
    from dgcomplete.syntax.check import error_count
    from dgcomplete.syntax.document import parse
    from dgcomplete.syntax.languages import language_for

    new = doc[:start] + insert + doc[end:]
    lang_id = real_language(lang_id)  # the bench knows the file's language where the daemon is not told it
    ts = language_for(lang_id)
    ok = error_count(parse(new, ts)) <= error_count(parse(doc, ts))
    if ok and lang_id == "python" and _python_parses(doc):
        ok = _python_parses(new)
    return ok


def shown_text(doc: str, cursor: int, item: Any) -> tuple[str, int, int, str]:
    """(text shown after the cursor, edit start, edit end, insert text) of an inline item."""
    insert = item.insert_text if isinstance(item.insert_text, str) else str(getattr(item.insert_text, "value", ""))
    if item.range is None:
        return insert, cursor, cursor, insert
    start, end = offset_at(doc, item.range.start), offset_at(doc, item.range.end)
    typed = doc[start:cursor] if start <= cursor else ""
    text = insert[len(typed):] if insert.startswith(typed) else insert
    return text, start, end, insert


def line_after(doc: str, cursor: int, item: Any) -> str:
    """The cursor's line right of the cursor once ``item`` is taken (its first line): what it shows, then what is
    left right of its range (the closers an auto-closing editor put there that it does not write itself; nothing
    at the end of a line)."""
    text, _, end, _ = shown_text(doc, cursor, item)
    if "\n" in text:
        return text.split("\n", 1)[0]
    eol = doc.find("\n", end)
    return text + doc[end : len(doc) if eol < 0 else eol].rstrip("\r")


# ---- baselines (no daemon) ----------------------------------------------------------------------------------
def _line_parts(doc: str, cursor: int) -> tuple[str, str, list[str]]:
    """(indentation, typed content, the lines above) of the cursor's line."""
    ls = doc.rfind("\n", 0, cursor) + 1
    line = doc[ls:cursor]
    content = line.lstrip(" \t")
    return line[: len(line) - len(content)], content, doc[:ls].split("\n")[:-1]


def baseline_prev_line(doc: str, cursor: int) -> str | None:
    """The nearest non-blank line above at the same indentation, minus what is typed (None: no match)."""
    ind, typed, above = _line_parts(doc, cursor)
    for ln in reversed(above):
        body = ln.lstrip(" \t")
        if not body.strip():
            continue
        if ln[: len(ln) - len(body)] == ind:
            return body[len(typed):].rstrip() if body.startswith(typed) else None
    return None


def verbatim_above(doc: str, cursor: int, expected: str) -> bool:
    """The oracle: the whole expected line (typed + expected) occurs, stripped, as a line above the cursor."""
    _, typed, above = _line_parts(doc, cursor)
    want = (typed + expected).strip()
    return any(ln.strip() == want for ln in above)


# ---- one variant --------------------------------------------------------------------------------------------
async def _folders_read(daemon: OptionsDaemon, timeout: float = 120.0) -> None:
    """Wait until the daemon reads no workspace folder and no file again (``dgcomplete.stats``): the file of the
    case closed before is read again, and a request must not race that."""
    t = Timer()
    while t.s < timeout:
        ws = (await daemon.stats()).get("workspace") or {}
        if not ws.get("scanning") and not ws.get("rereading"):
            return
        await asyncio.sleep(0.05)
    raise RuntimeError(f"the daemon was still reading its workspace folders after {timeout:.0f} s")


def _uri(case_id: str, fid: str, split: str | None = None) -> str:
    """A case's document URI: a path of its own, or (``split`` given: ``--workspace``) the file in its unpacked
    package, so the daemon finds it in its workspace folder."""
    if split is not None:
        return case_path(split, fid).resolve().as_uri()
    return f"file:///heldout/{case_id}/{fid.replace('@', '')}"


TRIGGERS = {"automatic": lsp.InlineCompletionTriggerKind.Automatic, "invoked": lsp.InlineCompletionTriggerKind.Invoked}


async def ask_inline(client: Any, uri: str, text: str, cursor: int, trigger: str = "automatic",
                     selected: tuple[int, int, str] | None = None) -> tuple[list[Any], float, str]:
    """One ``textDocument/inlineCompletion`` at ``cursor`` of ``text`` (the client's copy of ``uri``): the items,
    the client-measured ms, and the error ("" when none; a server error or a timeout counts as nothing shown).
    ``selected``: the suggest widget's selected item, ``[start, end)`` of ``text`` and the item's text, sent as
    VS Code sends it (``selectedCompletionInfo``)."""
    context = lsp.InlineCompletionContext(trigger_kind=TRIGGERS[trigger])
    if selected is not None:
        context.selected_completion_info = lsp.SelectedCompletionInfo(
            range=lsp.Range(pos_at(text, selected[0]), pos_at(text, selected[1])), text=selected[2])
    params = lsp.InlineCompletionParams(context=context, text_document=lsp.TextDocumentIdentifier(uri),
                                        position=pos_at(text, cursor))
    t0 = time.perf_counter()
    try:
        res = await asyncio.wait_for(client.text_document_inline_completion_async(params), REQUEST_TIMEOUT_S)
        items, err = list(getattr(res, "items", None) or (res if isinstance(res, list) else [])), ""
    except Exception as e:
        items, err = [], f"{type(e).__name__}: {e}"[:200]
    return items, round((time.perf_counter() - t0) * 1e3, 2), err


def open_case(client: Any, data: dict[str, Any], case: dict[str, Any], doc: str, *, others: bool = True,
              split: str | None = None, doc_id: str | None = None) -> tuple[str, list[str]]:
    """``didOpen`` a case's other files of its package (trimmed as the set says), then its document ``doc`` last
    (the most recent one); the document's URI and every URI opened, to close after. ``split``: as files of the
    unpacked package (``--workspace``); ``doc_id``: the case id the document's URI is made from (a warm-up's own)."""
    files, opened = data["files"], []
    for fid in case["others"] if others else []:
        uri = _uri(case["id"], fid, split)
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
            uri=uri, language_id=files[fid]["lang"], version=0,
            text=other_text(files, fid, data.get("others_max_chars", 30_000)))))
        opened.append(uri)
    uri = _uri(doc_id or case["id"], case["file"], split)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id=files[case["file"]]["lang"], version=1, text=doc)))
    return uri, [*opened, uri]


def word_head_shown(last: dict[str, Any], items: list[Any], doc: str, cursor: int, expected: str,
                    trigger: str = "automatic") -> dict[str, Any] | None:
    """The rest of the typed word the daemon showed where the gate hid the line (its ``word`` source), as
    ``{"word": text, "word_right": the expected text starts with it}``; None when a line (or nothing) was shown.
    Counted apart from the line figures, so that those mean what they did before word heads."""
    if last.get("source") != "word" or not items or trigger != "automatic":
        return None
    text = shown_text(doc, cursor, items[0])[0]
    return {"word": text, "word_right": bool(text) and expected.startswith(text)}


async def ask_with_stats(daemon: OptionsDaemon, uri: str, doc: str, cursor: int,
                         trigger: str = "automatic") -> tuple[list[Any], float, str, dict[str, Any]]:
    """:func:`ask_inline`, then the daemon's stats of that request (``{}`` when they cannot be read)."""
    items, ms, error = await ask_inline(daemon.client, uri, doc, cursor, trigger)
    try:
        last = (await daemon.stats()).get("last") or {}
    except Exception:
        last = {}
    return items, ms, error, last


def score_request(rec: dict[str, Any], items: list[Any], last: dict[str, Any], doc: str, cursor: int,
                  expected: str, lang: str, trigger: str = "automatic", parse_doc: str | None = None) -> None:
    """Fill a request's record from what the daemon showed: a word head apart (``word``, ``word_right``), else the
    first item's line (``shown``, ``text``, ``exact``, ``parses``: the file still parses with it in place, checked
    on ``parse_doc`` if given; ``items``, ``any_exact``), and the stats' confidence, source and why nothing was
    shown (``reason``)."""
    word = word_head_shown(last, items, doc, cursor, expected, trigger)
    if word:
        rec.update(word)
    elif items:
        text, start, end, insert = shown_text(doc, cursor, items[0])
        rec.update(shown=True, text=text, exact=first_line(line_after(doc, cursor, items[0])) == first_line(expected),
                   parses=parses_after(doc if parse_doc is None else parse_doc, lang, start, end, insert),
                   items=len(items),
                   any_exact=any(first_line(line_after(doc, cursor, it)) == first_line(expected) for it in items))
    conf = last.get("confidence")
    rec["confidence"] = float(conf) if isinstance(conf, (int, float)) else None
    rec["source"] = last.get("source") if isinstance(last.get("source"), str) else None
    rec["reason"] = ("the rest of a word" if word else last.get("reason")) if not rec["shown"] else None


async def run_cases(daemon: OptionsDaemon, data: dict[str, Any], cases: list[dict[str, Any]],
                    tokenizer: Any = None, variant: str = "default", trigger: str = "automatic",
                    others: bool = True, workspace: bool = False) -> list[dict[str, Any]]:
    """Play every case through the daemon; one record per request.

    ``trigger``: ``automatic`` (as typing asks: one item, gated) or ``invoked`` (the user asked: several items,
    no gate); the first item is scored either way, and ``any_exact`` says whether any item was right.
    ``others``: open the case's other files first; ``workspace``: the daemon was given the unpacked packages as
    workspace folders (:mod:`bench.workspace`), the documents are opened as their files there, and each request
    waits until the daemon has read its folder (the steady state of a session).
    """
    files = data["files"]
    client = daemon.client
    split = workspace_split(data) if workspace else None
    out = []
    for i, case in enumerate([cases[0], *cases] if cases else []):
        warmup = i == 0
        doc, cursor = case_document(files, case)
        lang = files[case["file"]]["lang"]
        uri, opened = open_case(client, data, case, doc, others=others, split=split,
                                doc_id=case["id"] + ("-warmup" if warmup else ""))
        if workspace:
            await _folders_read(daemon)
        rec: dict[str, Any] = {"id": case["id"], "variant": variant, "package": files[case["file"]]["package"],
                               "lang": lang, "family": family(lang), "kind": case["kind"],
                               "expected": case["expected"], "shown": False, "text": "", "exact": False,
                               "parses": None, "error": "", "items": 0, "any_exact": False}
        items, rec["ms"], rec["error"], last = await ask_with_stats(daemon, uri, doc, cursor, trigger)
        for uri in opened:
            client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
        if warmup:
            continue
        score_request(rec, items, last, doc, cursor, case["expected"], lang, trigger)
        # the length of what is shown (after the typed part), in the model's tokens: whatever its source
        ct = len(tokenizer.encode(rec["text"])) if tokenizer is not None and rec["shown"] else last.get("committed_tokens")
        rec["committed_tokens"] = ct if isinstance(ct, (int, float)) and rec["shown"] else None
        rec["expected_tokens"] = len(tokenizer.encode(case["expected"])) if tokenizer is not None else None
        rec["server_ms"] = last.get("ms")
        rec["drafts"] = last.get("drafts") if isinstance(last.get("drafts"), int) else None
        rec["steps"] = last.get("steps") if isinstance(last.get("steps"), int) else None
        rec["baseline_prev"] = baseline_prev_line(doc, cursor)
        rec["verbatim_above"] = verbatim_above(doc, cursor, case["expected"])
        out.append(rec)
    return out


def metrics(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's figures for a group of requests (rates in 0..1, latency in ms)."""
    n = len(recs)
    shown = [r for r in recs if r["shown"]]
    words = [r for r in recs if r.get("word")]
    exact = sum(r["exact"] for r in recs)
    tok = [r["committed_tokens"] / r["expected_tokens"] for r in shown
           if r.get("committed_tokens") is not None and r.get("expected_tokens")]
    chars = [len(first_line(r["text"])) / max(1, len(first_line(r["expected"]))) for r in shown]
    ms = [r["ms"] for r in recs if r.get("ms") is not None]
    sources: dict[str, int] = {}
    for r in shown:
        sources[str(r.get("source"))] = sources.get(str(r.get("source")), 0) + 1
    reasons: dict[str, int] = {}
    for r in recs:
        if not r["shown"]:
            k = str(r.get("reason") or r.get("error") or "unknown")[:60]
            reasons[k] = reasons.get(k, 0) + 1
    rnd = lambda v, d=4: None if v is None else round(v, d)  # noqa: E731
    prev_exact = sum(r["baseline_prev"] is not None and first_line(r["baseline_prev"]) == first_line(r["expected"])
                     for r in recs)
    prev_shown = sum(r["baseline_prev"] is not None for r in recs)
    return {
        "n": n,
        "exact": rnd(exact / n) if n else None,
        "exact_count": exact,
        "any_exact": rnd(sum(bool(r.get("any_exact")) for r in recs) / n) if n else None,
        "shown": rnd(len(shown) / n) if n else None,
        "shown_count": len(shown),
        "precision": rnd(exact / len(shown)) if shown else None,
        "parse_rate": rnd(sum(bool(r["parses"]) for r in shown) / len(shown)) if shown else None,
        "length_ratio": rnd(statistics.median(tok) if tok else (statistics.median(chars) if chars else None), 3),
        "length_unit": "tokens" if tok else "chars",
        "char_ratio": rnd(statistics.median(chars) if chars else None, 3),
        "latency_ms": {"p50": rnd(pct(ms, 50), 1), "p95": rnd(pct(ms, 95), 1), "max": rnd(max(ms) if ms else None, 1)},
        "with_confidence": sum(r.get("confidence") is not None for r in recs),
        "words_shown": len(words),
        "words_right": sum(bool(r.get("word_right")) for r in words),
        "sources_shown": dict(sorted(sources.items(), key=lambda kv: -kv[1])),
        "empty_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])[:8]),
        "baselines": {
            "prev_line_same_indent": {"exact": rnd(prev_exact / n) if n else None,
                                      "precision": rnd(prev_exact / prev_shown) if prev_shown else None},
            "verbatim_above": {"exact": rnd(sum(r["verbatim_above"] for r in recs) / n) if n else None},
        },
    }


def report(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """``metrics`` over all requests and broken down by language family, kind, both, and languageId."""
    out = {"all": metrics(recs)}
    keys = {"family": lambda r: r["family"], "kind": lambda r: r["kind"],
            "family_kind": lambda r: f"{r['family']}/{r['kind']}", "lang": lambda r: r["lang"]}
    for g in GROUPS:
        out[f"by_{g}"] = {k: metrics([r for r in recs if keys[g](r) == k]) for k in sorted({keys[g](r) for r in recs})}
    return out


# ---- the gate curve -----------------------------------------------------------------------------------------
def curve(recs: list[dict[str, Any]]) -> list[dict[str, float]]:
    """(threshold, coverage, precision, exact over all) for every distinct confidence of a shown item."""
    n = len(recs)
    scored = sorted(((r["confidence"], r["exact"]) for r in recs if r["shown"] and r.get("confidence") is not None),
                    key=lambda x: -x[0])
    out: list[dict[str, float]] = []
    hits = 0
    for i, (c, ex) in enumerate(scored):
        hits += ex
        if i + 1 < len(scored) and scored[i + 1][0] == c:
            continue
        out.append({"threshold": c, "coverage": (i + 1) / n, "precision": hits / (i + 1), "exact": hits / n})
    return out[::-1]  # ascending threshold


def pick_threshold(points: list[dict[str, float]], target: float) -> dict[str, float] | None:
    """The lowest threshold whose precision reaches the target (the most coverage at that precision)."""
    ok = [p for p in points if p["precision"] >= target]
    return min(ok, key=lambda p: p["threshold"]) if ok else None


def plot_curve(points: list[dict[str, float]], path: Path, target: float, title: str) -> str:
    """Precision vs coverage, and both vs threshold; returns what was written (or why not)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot([p["coverage"] for p in points], [p["precision"] for p in points], marker=".")
    a.axhline(target, color="grey", ls="--", lw=0.8)
    a.set(xlabel="coverage (share of requests shown)", ylabel="precision of shown (exact first line)",
          xlim=(0, 1), ylim=(0, 1.02), title="precision / coverage")
    t = [p["threshold"] for p in points]
    b.plot(t, [p["precision"] for p in points], label="precision")
    b.plot(t, [p["coverage"] for p in points], label="coverage")
    b.plot(t, [p["exact"] for p in points], label="exact over all")
    best = pick_threshold(points, target)
    if best:
        b.axvline(best["threshold"], color="grey", ls="--", lw=0.8)
    b.set(xlabel="minConfidence", ylim=(0, 1.02), title="vs threshold")
    b.legend()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return display_path(path)


def run_curve(a: argparse.Namespace) -> dict[str, Any]:
    recs = [json.loads(ln) for ln in Path(a.curve).read_text().splitlines() if ln.strip()]
    variants = list(dict.fromkeys(r.get("variant", "default") for r in recs))
    name = a.variant or ("no_gate" if "no_gate" in variants else variants[0] if variants else "default")
    recs = [r for r in recs if r.get("variant", "default") == name]
    points = curve(recs)
    res: dict[str, Any] = {"file": display_path(a.curve), "variant": name, "n": len(recs),
                           "with_confidence": sum(r.get("confidence") is not None for r in recs),
                           "target_precision": a.target, "points": len(points)}
    if not points:
        res["note"] = "no shown item carries a confidence: the engine does not report one yet"
        return res
    r4 = lambda p: {k: round(v, 4) for k, v in p.items()}  # noqa: E731
    best = pick_threshold(points, a.target)
    res["threshold"] = best and r4(best)
    res["ungated"] = r4(points[0])
    res["best_precision"] = r4(max(points, key=lambda p: (p["precision"], p["coverage"])))
    res["curve"] = [r4(p) for p in spread(points, 60)]
    if a.plot:
        res["plot"] = plot_curve(points, Path(a.plot), a.target, f"{display_path(a.curve)} ({name}, n={len(recs)})")
    if getattr(a, "write_thresholds", None):  # (a caller may pass only the curve's own options)
        if best is None:
            raise SystemExit(f"bench.context: no threshold reaches precision {a.target}; gate.json left as it is")
        res["written"] = write_thresholds(Path(resolve_model(a.model)), a.write_thresholds.split(","),
                                          round(best["threshold"], 4), display_path(a.curve))
    return res


def write_thresholds(model: Path, langs: list[str], threshold: float, source: str) -> str:
    """Set the gate's own threshold for ``langs`` in the model's gate.json (languages whose dev split the dump
    is: the same precision rule as the gate's threshold, on their own data)."""
    path = model / "gate.json"
    raw = json.loads(path.read_text())
    raw["thresholds"] = {**(raw.get("thresholds") or {}), **{lang: threshold for lang in langs}}
    raw["thresholds_chosen_on"] = (f"{source}: the lowest threshold whose precision of shown reaches "
                                   "target_precision, as for threshold (python -m bench.context --curve)")
    path.write_text(json.dumps(raw, indent=1) + "\n")
    return display_path(path)


# ---- main ---------------------------------------------------------------------------------------------------
def parse_sets(pairs: Iterable[str]) -> dict[str, Any]:
    """``key=JSON`` pairs (a value that is not JSON is taken as a string)."""
    out: dict[str, Any] = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise SystemExit(f"bench.context: --set wants key=value, got {p!r}")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def pick_cases(data: dict[str, Any], n: int | None) -> list[dict[str, Any]]:
    """``n`` cases spread evenly over the set (it is ordered by package, kinds alternating), or all."""
    return spread(data["cases"], n)


async def run_variants(model: Path, data: dict[str, Any], cases: list[dict[str, Any]],
                       variants: dict[str, dict[str, Any]], threads: int | None, tokenizer: Any,
                       trigger: str = "automatic", others: bool = True, workspace: bool = False,
                       ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out: dict[str, Any] = {}
    every: list[dict[str, Any]] = []
    log_dir = Path(tempfile.mkdtemp(prefix="dgcontext-"))
    folders = sorted(materialize(workspace_split(data)).values()) if workspace else None
    for name, options in variants.items():
        d = OptionsDaemon(model, options=options, threads=threads, log_dir=log_dir, folders=folders)
        t = Timer()
        await d.start()
        try:
            recs = await run_cases(d, data, cases, tokenizer, name, trigger, others, workspace)
            peak = d.peak_rss_mb()
        finally:
            unknown = d.unknown_settings()
            await d.stop()
        out[name] = {"options": options, "unknown_settings": unknown, "startup_s": d.startup_s,
                     "wall_s": round(t.s, 1), "peak_rss_mb": peak, **report(recs)}
        every += recs
        m = out[name]["all"]
        print(f"bench.context: {name}: n={m['n']} exact={m['exact']} shown={m['shown']} precision={m['precision']} "
              f"parse={m['parse_rate']} length={m['length_ratio']} ({m['length_unit']}) "
              f"p50={m['latency_ms']['p50']} p95={m['latency_ms']['p95']} ms"
              + (f" unknown settings: {unknown}" if unknown else ""), file=sys.stderr)
    return out, every


def code_version(note: str | None = None) -> dict[str, Any]:
    """The commit and the uncommitted engine files the daemon ran with (results are only as clean as the tree)."""
    def git(*args: str) -> str | None:
        try:
            r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.rstrip() if r.returncode == 0 else None  # porcelain lines start with a space

    dirty = git("status", "--porcelain", "--", "dgcomplete")
    return {"commit": git("rev-parse", "--short", "HEAD"),
            "dirty_engine_files": None if dirty is None else [ln[3:] for ln in dirty.splitlines()],
            "note": note}


def run_info(loaded: Any, note: str | None, t: Timer) -> dict[str, Any]:
    """What a held-out run ran with and when: the model, the code (:func:`code_version`), the machine, the time."""
    return {"model": model_info(loaded), "code": code_version(note),
            "machine": {**machine_info(), "loadavg_end": loadavg()}, "wall_s": round(t.s, 1),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=SPLITS,
                    help="dev / test: Python and JS/TS; dev_langs / test_langs: Go, Rust, C and Java; "
                         "dev_ruby_php / test_ruby_php; dev_cpp / test_cpp")
    ap.add_argument("--data", default=str(HELDOUT), help="folder of the built set (bench.heldout)")
    ap.add_argument("--n", type=int, help="cases, spread evenly over the split (default: all)")
    add_sending_args(ap)
    ap.add_argument("--model", help="checkpoint directory (default: the embedded model)")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="an initialization option")
    ap.add_argument("--ablate", nargs="*", metavar="NAME", help="run these ABLATIONS variants (none named: all)")
    ap.add_argument("--trigger", default="automatic", choices=tuple(TRIGGERS),
                    help="automatic: as typing asks (one gated item); invoked: as the user asks (several, no gate)")
    ap.add_argument("--workspace", action="store_true",
                    help="give the daemon each package, unpacked, as a workspace folder (bench.workspace)")
    ap.add_argument("--no-others", dest="others", action="store_false",
                    help="open only the case's document (a user with one file open)")
    ap.add_argument("--dump", help="per-request JSONL")
    ap.add_argument("--out", help=f"write the JSON report here (e.g. {display_path(RESULTS / 'context.json')})")
    ap.add_argument("--note", help="a note stored with the results (e.g. which engine ran)")
    ap.add_argument("--curve", help="sweep the gate over a --dump file instead of running")
    ap.add_argument("--variant", help="with --curve: the variant to use (default: no_gate when present)")
    ap.add_argument("--target", type=float, default=0.5, help="with --curve: the precision to reach")
    ap.add_argument("--plot", help="with --curve: write the plot (PNG) here")
    ap.add_argument("--write-thresholds", metavar="LANGS",
                    help="with --curve: store the chosen threshold for these languages (comma-separated) in the "
                         "model's gate.json (--model)")
    a = ap.parse_args(argv)
    if a.curve:
        res = run_curve(a)
        emit(res, a.out)
        return res

    from dgcomplete.model import load_model

    model = resolve_model(a.model)
    loaded = load_model(model)
    data = as_sent(load(a.split, Path(a.data)), a)
    cases = pick_cases(data, a.n)
    base = parse_sets(a.set)
    if a.ablate is None:
        variants = {"default": base}
    else:
        names = a.ablate or list(ABLATIONS)
        missing = [n for n in names if n not in ABLATIONS]
        if missing:
            raise SystemExit(f"bench.context: unknown variants {missing}; known: {list(ABLATIONS)}")
        variants = {n: {**base, **ABLATIONS[n]} for n in names}
    t = Timer()
    res_variants, recs = asyncio.run(run_variants(model, data, cases, variants, a.threads, loaded.tokenizer,
                                                  a.trigger, a.others, a.workspace))
    if a.dump:
        write_jsonl(a.dump, recs)
    first = next(iter(res_variants.values()))
    res = {
        "benchmark": "context",
        "split": a.split,
        "data": display_path(Path(a.data) / f"{a.split}.json.xz"),
        "seed": data.get("seed"),
        "n": len(cases),
        "packages": [{k: p[k] for k in ("name", "version", "license", "lang", "split")} for p in data["packages"]],
        "settings": {"set": base, "threads": a.threads, "trigger": a.trigger, "warmup_requests": 1,
                     "other_open_files": a.others, "workspace_folders": a.workspace, **sending(a),
                     "request_timeout_s": REQUEST_TIMEOUT_S, "exact_rule": "first line of the shown text after "
                     "the typed part (and what is left right of its range: closers an auto-closing editor put there "
                     "that it does not write), stripped, equals the expected first line stripped; rate over all "
                     "requests"},
        **run_info(loaded, a.note, t),
        "all": first["all"],
        "variants": res_variants,
    }
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
