"""Smoke tests of the benchmarks (bench/): the whole `python -m bench.run` pipeline on a tiny random model.

The fast test shrinks every part (a few seconds of faster-than-life typing, a handful of spans and tasks, no
thread comparison); the `slow` one is the real `--quick` run (about 2 minutes).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from numbers import Number
from pathlib import Path

import pytest

from bench import data_dir, fixture_sources
from bench.typing_sessions import Pace, apply_keys, build_sessions, make_session, pick_regions

ROOT = Path(__file__).resolve().parent.parent

NUMBERS = ["latency_ms.p50", "latency_ms.p95", "latency_ms.p99", "tokens_per_forward", "ar_speedup",
           "file_scale_ratio", "rss_mb.after_load", "rss_mb.after_requests"]
QUALITY = ["humaneval_single_line_pass1", "santacoder_py_em", "santacoder_js_em", "santacoder_java_em",
           "oracle_ratio"]


def _get(d, dotted):
    for k in dotted.split("."):
        d = d[k]
    return d


def _run(model: Path, out: Path, *extra: str, timeout: int) -> dict:
    cmd = [sys.executable, "-m", "bench.run", "--model", str(model), "--out", str(out), "--threads", "1", *extra]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads((out / "latest.json").read_text())
    assert not res["errors"], res["errors"]
    for key in NUMBERS:
        assert isinstance(_get(res, key), Number), (key, _get(res, key))
    for key in QUALITY + ["baselines", "machine", "model", "settings", "timestamp", "goals"]:
        assert key in res, key
    if data_dir() is not None:
        for key in QUALITY[:4]:
            assert isinstance(res[key], Number), (key, res[key])
        assert set(res["baselines"]["humaneval_single"]) >= {"ours", "empty", "copy_prev", "ar", "oracle"}
    assert res["machine"]["cores"] and res["machine"]["torch"] and res["model"]["params"] > 0
    assert (out / "summary.md").read_text().startswith("# dgcomplete benchmarks")
    assert (out / "latency.png").exists() and (out / "ar_vs_diffusion.png").exists()
    assert str(ROOT) not in (out / "latest.json").read_text()  # no machine paths in the report
    return res


def test_typing_sessions_are_consistent():
    sources = fixture_sources()
    for name, lang, text in sources:
        regions = pick_regions(text, lang, random.Random(0), 3)
        s = make_session(name, lang, text, regions, Pace(), random.Random(0))
        assert s.final == text and apply_keys(s) == text  # re-typed regions give the file back
        assert {k.kind for k in s.keys} >= {"enter", "char"}
        assert all(k.delay >= 0 for k in s.keys)
    short = build_sessions(sources, 6, seed=1)
    assert short and all(apply_keys(s) == s.final for s in short)


def test_bench_run_smoke(tiny_model, tmp_path):
    res = _run(tiny_model, tmp_path, "--quick", "--skip", "syntax", "--seconds", "1", "--sessions", "3",
               "--pace-scale", "0.4", "--requests", "10", "--scale-keys", "3", "--thread-keys", "0", "--spans", "3",
               "--positions", "1", "--quality-limit", "1", timeout=120)
    assert res["latency_ms"]["n"] >= 1
    assert res["context"]["n"] == 8 and 0 <= res["context"]["shown"] <= 1  # held-out suggestions through the daemon
    assert res["context_langs"]["n"] == 8 and res["context_langs"]["by_family"]  # Go, Rust, C, Java: the same
    assert res["typing"]["lines"] == 3 and 0 <= res["typing"]["saved"] < 1  # lines typed with suggestions
    assert res["rss_mb"]["after_requests"] >= res["rss_mb"]["after_load"] * 0.5


@pytest.mark.slow
def test_bench_run_quick(tiny_model, tmp_path):
    res = _run(tiny_model, tmp_path, "--quick", timeout=600)
    assert res["threads"]["threads_1"]["p50"] is not None


def test_quality_paired_counts_changed_tasks(tmp_path):
    """bench.quality --paired: gained/lost on the tasks both runs evaluated, and the exact McNemar p."""
    from bench.quality import main, mcnemar_p, paired

    assert mcnemar_p(0, 0) == 1.0 and mcnemar_p(5, 5) == 1.0
    assert abs(mcnemar_p(23, 4) - 0.00031) < 1e-5  # 2 * P(Bin(27, 1/2) <= 4)
    assert mcnemar_p(10, 0) == mcnemar_p(0, 10) < 0.002
    old = {"s": {"per_task": {"a": 1, "b": 0, "c": 1, "d": 0}}, "wall_s": 3.0}
    new = {"s": {"per_task": {"a": 1, "b": 1, "c": 0, "e": 1}}, "t": {"per_task": {"a": 1}}}
    got = paired(old, new)
    assert got == {"s": {"tasks": 3, "old": 2, "new": 2, "gained": 1, "lost": 1, "mcnemar_exact_p": 1.0}}
    a, b, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "p.json"
    a.write_text(json.dumps(old))
    b.write_text(json.dumps(new))
    main(["--paired", str(a), str(b), "--out", str(out)])
    assert json.loads(out.read_text()) == got


def test_soup_is_the_loadable_average_and_refuses_other_shapes(tmp_path):
    """bench.soup writes the element-wise mean as a checkpoint the loader takes, config from --base."""
    from bench.soup import soup
    from dgcomplete.model import load_model

    from .helpers import make_tiny_checkpoint

    a = make_tiny_checkpoint(tmp_path / "a", seed=0, moe=False)
    b = make_tiny_checkpoint(tmp_path / "b", seed=1, moe=False)
    out = soup([a, b], tmp_path / "soup", base=a)
    wa, wb, ws = (load_model(p).model.state_dict() for p in (a, b, out))
    assert any(not (wa[k] == wb[k]).all() for k in wa)  # the two starts differ, so the mean is a real test
    for k in wa:
        assert (ws[k] - (wa[k] + wb[k]) / 2).abs().max() < 1e-6, k
    other = make_tiny_checkpoint(tmp_path / "moe", seed=0, moe=True)
    with pytest.raises(SystemExit, match="not the shape"):
        soup([a, other], tmp_path / "bad", base=a)


def test_grammar_fuzz_counts_only_tree_sitters_errors_and_runs_the_daemons_parsers():
    """``bench.grammar_fuzz``: a valgrind log's errors are counted where their stack runs through tree-sitter (the
    bash scanner's bad read of session 48), not CPython's own; and a worker's cases parse, edit and reparse with
    the daemon's parsers (bash's masked) for the languages a held-out split has."""
    from bench.grammar_fuzz import fuzz_language, scanner_errors

    log = """==9== Conditional jump or move depends on uninitialised value(s)
==9==    at 0x4A: PyObject_Free (obmalloc.c:1)
==9==    by 0x4B: main (python.c:15)
==9==
==9== Invalid read of size 1
==9==    at 0x7EF8630: scan (scanner.c:1158)
==9==    by 0x7EF8630: tree_sitter_bash_external_scanner_scan (scanner.c:1195)
==9==    by 0x729C093: ts_parser__lex (parser.c:545)
==9==  Address 0x8 is 8 bytes inside a block of size 64 free'd
==9==
==9== Invalid read of size 8
==9==    at 0x4023C74: strncmp (strcmp-sse2.S:162)
==9==    by 0x4004BEE: is_dst (dl-load.c:216)
"""
    got = scanner_errors(log)
    assert got["tree_sitter_errors"] == 1 and "tree_sitter_bash_external_scanner_scan" in " ".join(got["first"])
    assert scanner_errors(log.split("==9== Invalid read of size 1")[0])["tree_sitter_errors"] == 0
    for lang in ("python", "tsx", "php", "cpp", "json"):
        assert fuzz_language(lang, "tokens", 20, 1) == (20, 0) and fuzz_language(lang, "files", 5, 1) == (5, 0)


def test_parse_budget_measures_real_edited_and_token_texts_against_the_daemons_budget():
    """bench.parse_budget at a tiny size: the shares of the budget it reports are checks over the daemon's budget,
    and a text that runs past its cap (TSX's hang) counts as over budget, not as a hang."""
    import tree_sitter

    from bench.parse_budget import measure
    from dgcomplete.syntax.languages import BUDGET_BASE, budget_for, get_language, parse_counted

    row = measure("python", edits=4, tokens=10, cap_times=2.0)
    assert row["files"] > 0 and 0 < row["file_worst_share"] < 1 and row["edited_over_budget"] == 0
    assert row["file_worst"]["checks"] / budget_for(row["file_worst"]["bytes"]) == \
        pytest.approx(row["file_worst_share"], abs=1e-3)
    hang = json.loads((Path(__file__).resolve().parent.parent / "bench/results/grammar_fuzz_tsx_hang.json")
                      .read_text())["text"].encode()
    tree, n = parse_counted(tree_sitter.Parser(get_language("tsx")), hang, 2 * BUDGET_BASE)
    assert tree is None and n == 2 * BUDGET_BASE + 1
