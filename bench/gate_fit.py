"""Fit the show/hide gate (dgcomplete/gate.py) on the held-out *dev* split, in-process.

Runs the engine (no LSP: every scored candidate is visible, not only the one shown) over the dev cases of
:mod:`bench.heldout` with the gate open, labels each surviving candidate by whether its first line is exactly
the expected one, fits a logistic regression over the gate's features (L2, full batch), and reports what the
fitted gate would do: exact first line over all requests when the top candidate is shown, and the
precision/coverage trade of the threshold. ``--write`` stores ``gate.json`` next to the model's config, with
the threshold that reaches ``--target`` precision on dev. The test split is never used here (report it with
``python -m bench.context --split test``).

``--extend DUMP ...`` keeps the fitted gate (weights, bias, thresholds) and fits only the weights meant for
typed lines (:func:`dgcomplete.gate.typing_only`: how often the completed line already stands in the file), on the
lines read while typing the dev splits (``bench.typing_replay --observe --set minConfidence=0``), the shown
confidence the kept gate's score: a new feature weighed against the rest as they stand.

    python -m bench.gate_fit [--split dev] [--n N] [--target 0.6] [--write] [--out FILE]
    python -m bench.gate_fit --extend DEV.jsonl DEV_LANGS.jsonl [--write] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from . import display_path, emit, heldout, machine_info, model_info, pct, resolve_model


def first_line(s: str) -> str:
    return s.split("\n", 1)[0].strip()


def labelled(items: list[Any], expected: str) -> list[dict[str, Any]]:
    """A completion's candidates as fitting rows: the gate's features and whether the first line is exact.

    Collected with the gate open (minConfidence 0); under it the engine shows only what saves keystrokes, so
    only those candidates are rows."""
    from dgcomplete.engine import saves_keystrokes
    from dgcomplete.gate import feature_vector

    want = first_line(expected)
    return [{"text": c.text, "source": c.source, "x": feature_vector(c), "y": int(first_line(c.text) == want),
             "conf": c.confidence} for c in items if saves_keystrokes(c.text)]


async def collect(model: Path, split: str, n: int | None, threads: int, settings: dict[str, Any],
                  log: Any = print, corpus_tasks: list[Any] | None = None) -> dict[str, Any]:
    """Every candidate the engine keeps for each case, with its features and label."""
    import torch

    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    torch.set_num_threads(threads)
    loaded = load_model(model)
    eng = Engine(loaded, threads=threads)
    await eng.start()
    _, errors = eng.settings.update({"min_confidence": 0.0, **settings})
    if errors:
        raise SystemExit("bench.gate_fit: " + "; ".join(errors))
    data = heldout.load(split)
    files, cases = data["files"], data["cases"]
    if n:
        step = max(1, len(cases) // n)
        cases = cases[::step][:n]
    rows: list[dict[str, Any]] = []
    per_case: list[dict[str, Any]] = []
    t_all = time.perf_counter()
    for i, case in enumerate(cases):
        lang = files[case["file"]]["lang"]
        others = [o for o in case.get("others", []) if o in files]
        for j, o in enumerate(others):
            eng.open(f"file:///other{j}/{o}", heldout.other_text(files, o), 1, files[o]["lang"])
        text, off = heldout.case_document(files, case)
        uri = f"file:///case/{case['file']}"
        eng.open(uri, text, 1, lang)
        t0 = time.perf_counter()
        comp = await eng.complete(uri, off, seed=i)
        ms = (time.perf_counter() - t0) * 1e3
        cands = labelled(comp.items, case["expected"])
        rows.extend({"case": case["id"], **c} for c in cands)
        per_case.append({"id": case["id"], "family": heldout.family(lang), "kind": case["kind"], "ms": ms,
                         "cands": cands, "any_exact": any(c["y"] for c in cands),
                         "drafts": comp.stats.get("drafts", 0)})
        eng.close(uri)
        for j, o in enumerate(others):
            eng.close(f"file:///other{j}/{o}")
        if (i + 1) % 50 == 0:
            log(f"  {i + 1}/{len(cases)} cases, {time.perf_counter() - t_all:.0f} s")
    corpus_cases: list[dict[str, Any]] = []
    for i, t in enumerate(corpus_tasks or []):
        # the shape of function-level suites, from the corpus's dev files (bench.dev_decoding): as bench.quality
        # asks them (one item, seed 0), labelled by the same first-line rule
        uri = f"file:///corpus/{t.id}.{t.ext}"
        eng.open(uri, t.document, 1, t.language)
        comp = await eng.complete(uri, t.offset, seed=0)
        eng.close(uri)
        cands = labelled(comp.items, t.truth)
        rows.extend({"case": f"corpus-{t.id}", **c} for c in cands)
        corpus_cases.append({"id": t.id, "family": t.language, "kind": "corpus", "cands": cands,
                             "any_exact": any(c["y"] for c in cands)})
        if (i + 1) % 100 == 0:
            log(f"  corpus {i + 1}/{len(corpus_tasks or [])}, {time.perf_counter() - t_all:.0f} s")
    await eng.shutdown()
    return {"rows": rows, "cases": per_case, "corpus_cases": corpus_cases, "model": model_info(loaded)}


def fit(rows: list[dict[str, Any]], l2: float = 1e-2, steps: int = 500,
        base: tuple[dict[str, float], float] | None = None) -> tuple[dict[str, float], float]:
    """Logistic regression over the feature dicts (torch, LBFGS).

    The weights meant for typed lines (:func:`dgcomplete.gate.typing_only`) are left out, unless ``base`` is given:
    a fitted gate's (weights, bias) kept as they are, while only those are fitted, each row's ``z`` (the score the
    kept gate gave it when shown) a fixed offset and no new bias, so they move only the candidates that have them."""
    import torch

    from dgcomplete.gate import typing_only

    names = sorted(k for k in {k for r in rows for k in r["x"]} if typing_only(k) == (base is not None))
    x = torch.tensor([[r["x"].get(k, 0.0) for k in names] for r in rows], dtype=torch.float64)
    y = torch.tensor([r["y"] for r in rows], dtype=torch.float64)
    offset = torch.tensor([r["z"] if base else 0.0 for r in rows], dtype=torch.float64)
    w = torch.zeros(len(names), dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=base is None)
    opt = torch.optim.LBFGS([w, b] if base is None else [w], max_iter=steps, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = (torch.nn.functional.binary_cross_entropy_with_logits(offset + x @ w + b, y)
                + l2 * (w * w).sum())
        loss.backward()
        return loss

    opt.step(closure)
    fitted = {k: round(float(v), 5) for k, v in zip(names, w.detach(), strict=True)}
    if base:
        return dict(sorted({**base[0], **fitted}.items())), base[1]
    return fitted, round(float(b.detach()), 5)


def typing_rows(paths: list[str]) -> list[dict[str, Any]]:
    """Fitting rows from ``bench.typing_replay --observe --set minConfidence=0`` dumps of the dev splits: each line
    the typist read (once while it stays on screen as it is typed through), its shown confidence as the kept gate's
    score (``z``), labelled by whether it was the rest of the line or a part of it (what the typist takes).

    Only what a dump records of the candidate is a feature (its source and ``elsewhere``), so these rows fit an
    ``--extend``: the candidates of every keystroke as typed, where the single-request cases above see one position
    per line."""
    from dgcomplete.gate import feature_vector
    from dgcomplete.types import Candidate

    from .typing_replay import on_screen

    rows: list[dict[str, Any]] = []
    for p in paths:
        for ln in Path(p).read_text().splitlines():
            rec, last = json.loads(ln), ""
            for s in rec.get("seen", []):
                conf, source = s.get("confidence"), s.get("source")
                if s.get("verdict") is None or s.get("elsewhere") is None or conf is None or source in ("word", "warm"):
                    continue
                full = on_screen(rec["line"][: s["at"]], s["shown"])
                if full == last:
                    continue
                last = full
                p_ = min(max(float(conf), 1e-4), 1 - 1e-4)
                x = feature_vector(Candidate(s["shown"], source=source, features={"elsewhere": s["elsewhere"]}))
                rows.append({"case": rec["id"], "source": source, "elsewhere": s["elsewhere"], "x": x,
                             "z": math.log(p_ / (1 - p_)), "y": int(s["verdict"] != "wrong")})
    return rows


def typing_evaluation(rows: list[dict[str, Any]], weights: dict[str, float], threshold: float,
                      new: list[str]) -> dict[str, Any]:
    """The typing rows at ``threshold`` before and after the extension, by source and ``elsewhere`` (0, 1, 2+):
    lines read and how many of them were right."""
    out: dict[str, Any] = {}
    cut = math.log(threshold / (1 - threshold))
    for r in rows:
        z2 = r["z"] + sum(weights[k] * r["x"].get(k, 0.0) for k in new)
        key = f"{r['source']} elsewhere={min(r['elsewhere'], 2)}{'+' if r['elsewhere'] >= 2 else ''}"
        row = out.setdefault(key, {"before": [0, 0], "after": [0, 0]})
        for when, z in (("before", r["z"]), ("after", z2)):
            if z >= cut:
                row[when][0] += r["y"]
                row[when][1] += 1
    return {k: {w: f"{v[0]}/{v[1]} right" for w, v in out[k].items()} for k in sorted(out)}


def confidence(x: dict[str, float], weights: dict[str, float], bias: float) -> float:
    """The gate's probability for fitted weights (the product's own formula, dgcomplete.gate.Gate)."""
    from dgcomplete.gate import Gate

    return Gate(weights, bias).probability(x)


def evaluate(cases: list[dict[str, Any]], weights: dict[str, float], bias: float) -> dict[str, Any]:
    """Top candidate per case by the gate, and the precision/coverage curve over thresholds."""
    tops = []
    for c in cases:
        if not c["cands"]:
            tops.append((0.0, 0))
            continue
        best = max(c["cands"], key=lambda r: confidence(r["x"], weights, bias))
        tops.append((confidence(best["x"], weights, bias), best["y"]))
    n = len(cases)
    curve = []
    for t in [i / 100 for i in range(0, 96)]:
        shown = [y for p, y in tops if p >= t and (p > 0 or t == 0)]
        if not shown:
            break
        curve.append({"threshold": t, "coverage": round(len(shown) / n, 4),
                      "precision": round(sum(shown) / len(shown), 4), "exact_all": round(sum(shown) / n, 4)})
    return {"n": n, "top_exact": round(sum(y for _, y in tops) / n, 4),
            "oracle_any_candidate": round(sum(c["any_exact"] for c in cases) / n, 4), "curve": curve}


def pick_threshold(curve: list[dict[str, Any]], target: float) -> dict[str, Any] | None:
    """The lowest threshold whose precision, and that of every higher one with some coverage, reaches target."""
    ok = None
    for row in reversed(curve):
        if row["precision"] < target:
            break
        ok = row
    return ok


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=["dev"], help="fit on dev only (test is for reporting)")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--target", type=float, default=0.6)
    ap.add_argument("--l2", type=float, default=1e-2)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="engine settings")
    ap.add_argument("--write", action="store_true", help="store gate.json in the model directory")
    ap.add_argument("--extend", nargs="+", metavar="DUMP",
                    help="keep the model's gate.json (weights, bias, thresholds) and fit only the weights meant for "
                         "typed lines (gate.typing_only) on these bench.typing_replay --observe --set minConfidence=0 "
                         "dumps of the dev splits")
    ap.add_argument("--out", default=None)
    ap.add_argument("--rows", default=None, help="reuse (or, with --save-rows, write) collected candidates")
    ap.add_argument("--save-rows", action="store_true")
    ap.add_argument("--corpus-dev", type=int, default=0, metavar="N",
                    help="also fit on N tasks per language and kind from half 0 of the corpus's dev files "
                         "(bench.dev_decoding: whole line at column 0, a line of a definition given alone); the "
                         "threshold is still chosen on the held-out cases")
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--corpus-langs", default="python,javascript,java")
    a = ap.parse_args(argv)
    model = resolve_model(a.model)
    settings = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.set)}
    t0 = time.perf_counter()
    if a.extend:
        return extend_on_typing(a, model)
    if a.rows and not a.save_rows:
        got = json.loads(Path(a.rows).read_text())
    else:
        tasks = []
        if a.corpus_dev:
            from .dev_decoding import dev_tasks

            langs = tuple(a.corpus_langs.split(","))
            for kind in ("whole_line", "function"):
                for t in dev_tasks(Path(a.corpus), langs, a.corpus_dev, half=0, kind=kind):
                    t.id = f"{kind}/{t.id}"
                    tasks.append(t)
        got = asyncio.run(collect(model, a.split, a.n, a.threads, settings, corpus_tasks=tasks))
        if a.rows:
            Path(a.rows).write_text(json.dumps(got))
    weights, bias = fit(got["rows"], a.l2)
    ev = evaluate(got["cases"], weights, bias)
    chosen = pick_threshold(ev["curve"], a.target)
    corpus_ev = evaluate(got["corpus_cases"], weights, bias) if got.get("corpus_cases") else None
    by_source: dict[str, list[int]] = {}
    for r in got["rows"]:
        by_source.setdefault(r["source"], []).append(r["y"])
    res = {
        "what": "gate fitted on the held-out dev split (in-process engine, gate open)",
        "split": a.split, "settings": settings, "target_precision": a.target, "l2": a.l2,
        "weights": weights, "bias": bias, "threshold": chosen,
        "evaluation": ev,
        "corpus_dev_fit_half": {k: v for k, v in corpus_ev.items() if k != "curve"} if corpus_ev else None,
        "candidates": len(got["rows"]), "positives": sum(r["y"] for r in got["rows"]),
        "by_source": {k: {"n": len(v), "exact": sum(v)} for k, v in sorted(by_source.items())},
        "latency_ms": {"p50": pct([c["ms"] for c in got["cases"]], 50),
                       "p95": pct([c["ms"] for c in got["cases"]], 95)},
        "model": got["model"], "machine": machine_info(), "wall_s": round(time.perf_counter() - t0, 1),
    }
    if a.write:
        path = model / "gate.json"
        old = json.loads(path.read_text()).get("thresholds") if path.is_file() else None
        if old:  # chosen for the old weights: they do not carry over
            print(f"bench.gate_fit: the per-language thresholds {old} are dropped; choose them again for the new "
                  "weights (python -m bench.context --split SPLIT --ablate no_gate --dump D, then --curve D)",
                  file=sys.stderr)
        path.write_text(json.dumps({
            "weights": weights, "bias": bias, "threshold": chosen["threshold"] if chosen else None,
            "fitted_on": f"bench.heldout dev split ({ev['n']} cases), python -m bench.gate_fit",
            "target_precision": a.target}, indent=1) + "\n")
        res["written"] = display_path(path)
    emit(res, a.out)
    return res


def extend_on_typing(a: argparse.Namespace, model: Path) -> dict[str, Any]:
    """``--extend DUMP ...``: fit the gate's new features on typed lines, keep the rest (``--write``: gate.json)."""
    t0 = time.perf_counter()
    path = model / "gate.json"
    if not path.is_file():
        raise SystemExit(f"bench.gate_fit: --extend needs a fitted {display_path(path)}")
    from dgcomplete.gate import typing_only

    old_gate = json.loads(path.read_text())
    if any(typing_only(k) for k in old_gate["weights"]):
        # the dumps' confidences would already hold them: observe and fit with the gate as it was before
        raise SystemExit(f"bench.gate_fit: {display_path(path)} is extended already ({old_gate.get('extended_on')}); "
                         "observe and fit with its weights before the extension (without the typing-only ones)")
    rows = typing_rows(a.extend)
    weights, bias = fit(rows, a.l2, base=(old_gate["weights"], old_gate["bias"]))
    new = sorted(k for k in weights if typing_only(k))
    res: dict[str, Any] = {
        "what": "new gate features fitted on the lines read while typing the dev splits (bench.typing_replay "
                "--observe), the gate's other weights, bias and thresholds kept",
        "dumps": [display_path(p) for p in a.extend], "rows": len(rows), "positives": sum(r["y"] for r in rows),
        "l2": a.l2, "extended": {k: weights[k] for k in new},
        "at_threshold": {"threshold": old_gate["threshold"],
                         **typing_evaluation(rows, weights, old_gate["threshold"], new)},
        "machine": machine_info(), "wall_s": round(time.perf_counter() - t0, 1),
    }
    if a.write:
        path.write_text(json.dumps({
            **old_gate, "weights": weights,
            "extended_on": f"{', '.join(new)}: fitted on {len(rows)} lines read while typing the dev splits "
                           "(python -m bench.gate_fit --extend DUMP ...), the other weights, the bias and the "
                           "thresholds kept"}, indent=1) + "\n")
        res["written"] = display_path(path)
    emit(res, a.out)
    return res


if __name__ == "__main__":
    main()
