"""Contract tests of the remote backend against a fake vLLM/SGLang server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from dgcomplete.backends import InfillBackend, RemoteBackend, RemoteConfig, RemoteError
from dgcomplete.backends.remote import extract_middle, render_fim, trim_prefix, trim_suffix
from dgcomplete.types import Cancelled, CancelToken, InfillRequest, SpanKind, SpanPlan

from .fake_openai_server import FakeOpenAIServer, Reply

MODEL = "google/diffusiongemma-26B-A4B-it"


@pytest.fixture
def fake():
    with FakeOpenAIServer(model=MODEL) as server:
        yield server


@pytest.fixture
async def make_backend(fake):
    made: list[RemoteBackend] = []

    def make(**kw) -> RemoteBackend:
        kw.setdefault("url", fake.url)
        kw.setdefault("model", MODEL)
        kw.setdefault("backoff_s", 0.01)
        kw.setdefault("timeout_s", 5.0)
        backend = RemoteBackend(RemoteConfig(**kw))
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()


def line_req(prefix: str = "def add(a, b):\n    return ", suffix: str = "\n", **kw) -> InfillRequest:
    return InfillRequest(
        prefix=prefix, suffix=suffix, plan=SpanPlan(SpanKind.REST_OF_LINE), language="python", **kw
    )


def block_req(max_lines: int = 3, **kw) -> InfillRequest:
    plan = SpanPlan(SpanKind.BLOCK, max_lines=max_lines, max_tokens=64, indent="    ")
    return InfillRequest(prefix="def f(x):\n", suffix="\n\nprint(f(2))\n", plan=plan, language="python", **kw)


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ------------------------------------------------------------------------------------ happy paths


async def test_chat_stream_assembles_middle_and_sends_prompt(fake, make_backend):
    fake.script(Reply(text="a + b", chunk_chars=2))
    backend = make_backend()
    assert isinstance(backend, InfillBackend)
    res = await backend.infill(line_req())
    assert [c.text for c in res.candidates] == ["a + b"]
    assert res.stats["backend"] == "remote"
    assert res.stats["chunks"] == 3 and res.stats["retries"] == 0
    assert res.stats["ttfb_ms"] >= 0 and res.stats["remote_ms"] >= res.stats["ttfb_ms"]

    (rq,) = fake.completion_requests
    assert rq.path == "/v1/chat/completions"
    body = rq.body
    assert body["model"] == MODEL and body["stream"] is True
    assert "n" not in body and "stop" not in body  # chat mode: no newline stop (fences); the client cuts
    assert 16 <= body["max_tokens"] <= 512
    system, user = body["messages"]
    assert system["role"] == "system" and "infilling" in system["content"] and "fences" in system["content"]
    assert user["role"] == "user"
    assert "Language: python" in user["content"]
    assert "one line only" in user["content"]
    assert "<prefix>def add(a, b):\n    return </prefix>" in user["content"]
    assert "<suffix>\n</suffix>" in user["content"]
    assert rq.headers["accept"] == "text/event-stream"
    assert "authorization" not in rq.headers


async def test_single_line_stops_reading_at_first_newline(fake, make_backend):
    tail = "".join(f"    line_{i} = {i}\n" for i in range(40))
    fake.script(Reply(text="a + b\n" + tail, chunk_chars=4, chunk_interval_s=0.01))
    res = await make_backend().infill(line_req())
    assert [c.text for c in res.candidates] == ["a + b"]
    assert res.stats["chunks"] <= 3
    # The client closed the stream early: the server noticed it before sending the 200 remaining chunks.
    assert fake.wait_disconnect(2.0)
    assert fake.completion_requests[0].outcome == "disconnected"


async def test_chat_wrappers_are_stripped(fake, make_backend):
    backend = make_backend()
    fake.script(Reply(text="```python\na + b\n```\n"))
    assert (await backend.infill(line_req())).candidates[0].text == "a + b"
    # a restatement of the cursor line
    fake.script(Reply(text="    return a + b"))
    assert (await backend.infill(line_req())).candidates[0].text == "a + b"
    fake.script(Reply(text="return a + b\n"))
    assert (await backend.infill(line_req())).candidates[0].text == "a + b"
    # a thinking block, <middle> tags
    fake.script(Reply(text="<|channel>thought\nthe sum<channel|><middle>a + b</middle>"))
    assert (await backend.infill(line_req())).candidates[0].text == "a + b"


async def test_multi_line_plan_keeps_max_lines_and_strips_fences(fake, make_backend):
    body = "    y = x * 2\n    z = y + 1\n    return z\n    unreachable()\n"
    fake.script(Reply(text=f"```python\n{body}```"))
    backend = make_backend()
    res = await backend.infill(block_req(max_lines=3))
    assert res.candidates[0].text == "    y = x * 2\n    z = y + 1\n    return z"
    user = fake.completion_requests[0].body["messages"][1]["content"]
    assert "at most 3 lines" in user and "body of the block" in user


async def test_completions_mode_uses_fim_template_and_newline_stop(fake, make_backend):
    fake.script(Reply(text="a + b\n    # the server cuts at the stop string\n"))
    backend = make_backend(mode="completions")
    res = await backend.infill(
        line_req(prefix="x = {'a': 1}\ndef add(a, b):\n    return ", suffix="\n# {suffix}\n")
    )
    assert [c.text for c in res.candidates] == ["a + b"]
    (rq,) = fake.completion_requests
    assert rq.path == "/v1/completions"
    assert rq.body["prompt"] == (
        "<|fim_prefix|>x = {'a': 1}\ndef add(a, b):\n    return <|fim_suffix|>\n# {suffix}\n<|fim_middle|>"
    )
    assert rq.body["stop"] == ["\n"]
    assert "messages" not in rq.body


async def test_completions_mode_custom_template_multi_line(fake, make_backend):
    fake.script(Reply(text="    return x + 1\n\n\nextra\n", ignore_stop=True))
    backend = make_backend(mode="completions", fim_template="<PRE> {prefix} <SUF>{suffix} <MID>")
    res = await backend.infill(block_req(max_lines=2))
    assert res.candidates[0].text == "    return x + 1\n"
    rq = fake.completion_requests[0]
    assert rq.body["prompt"] == "<PRE> def f(x):\n <SUF>\n\nprint(f(2))\n <MID>"
    assert "stop" not in rq.body


async def test_non_streaming(fake, make_backend):
    fake.script(Reply(text="```\na + b\n```"))
    res = await make_backend(stream=False).infill(line_req())
    assert [c.text for c in res.candidates] == ["a + b"]
    assert fake.completion_requests[0].body["stream"] is False
    assert res.stats["chunks"] == 0 and res.stats["ttfb_ms"] >= 0


@pytest.mark.parametrize("stream", [True, False])
async def test_n_candidates(fake, make_backend, stream):
    fake.script(Reply(text=["a + b", "b + a", "a + b", "sum((a, b))"]))
    res = await make_backend(stream=stream).infill(line_req(n=4))
    assert [c.text for c in res.candidates] == ["a + b", "b + a", "sum((a, b))"]  # duplicates dropped
    (rq,) = fake.completion_requests
    assert rq.body["n"] == 4 and rq.body["temperature"] > 0


async def test_n_ignored_falls_back_to_sequential_calls(fake, make_backend):
    fake.script(
        Reply(text=["a + b", "nope"], ignore_n=True),
        Reply(text="b + a", ignore_n=True),
        Reply(text="a+b", ignore_n=True),
    )
    backend = make_backend()
    res = await backend.infill(line_req(n=3, seed=7))
    assert [c.text for c in res.candidates] == ["a + b", "b + a", "a+b"]
    reqs = fake.completion_requests
    assert [r.body.get("n") for r in reqs] == [3, None, None]
    assert [r.body.get("seed") for r in reqs] == [7, 8, 9]
    assert res.stats["calls"] == 3
    # learnt: the next multi-candidate request does not ask for n again
    fake.script(Reply(text="x"), Reply(text="y"))
    res = await backend.infill(line_req(n=2))
    assert [c.text for c in res.candidates] == ["x", "y"]
    assert all("n" not in r.body for r in fake.completion_requests[3:])


async def test_empty_reply_gives_no_candidates_with_reason(fake, make_backend):
    fake.script(Reply(text="\n"))
    res = await make_backend().infill(line_req())
    assert res.candidates == [] and res.reason


# ---------------------------------------------------------------------------- retries and errors


async def test_retry_on_500_then_success(fake, make_backend):
    fake.script(Reply(status=500, error_message="engine overloaded"), Reply(text="a + b"))
    res = await make_backend().infill(line_req())
    assert res.candidates[0].text == "a + b"
    assert res.stats["retries"] == 1 and len(fake.completion_requests) == 2


async def test_gives_up_after_max_retries(fake, make_backend):
    fake.script(*[Reply(status=503, error_message="no capacity", error_format="legacy")] * 3)
    with pytest.raises(RemoteError) as ei:
        await make_backend(max_retries=2).infill(line_req())
    assert "returned 503: no capacity" in ei.value.message and ei.value.retryable
    assert len(fake.completion_requests) == 3


async def test_retry_after_is_honoured(fake, make_backend):
    fake.script(
        Reply(status=429, error_message="slow down", headers={"Retry-After": "1"}), Reply(text="a + b")
    )
    t0 = time.monotonic()
    res = await make_backend(backoff_s=0.01).infill(line_req())
    elapsed = time.monotonic() - t0
    assert res.candidates[0].text == "a + b" and res.stats["retries"] == 1
    assert 0.95 <= elapsed < 2.0
    first, second = fake.completion_requests
    assert second.at - first.at >= 0.95


async def test_retry_after_is_bounded(fake, make_backend):
    fake.script(Reply(status=429, headers={"Retry-After": "3600"}), Reply(text="a + b"))
    t0 = time.monotonic()
    res = await make_backend(backoff_s=0.01, max_retry_after_s=0.2).infill(line_req())
    assert res.candidates[0].text == "a + b"
    assert 0.19 <= time.monotonic() - t0 < 1.0


@pytest.mark.parametrize("fmt", ["openai", "legacy"])
async def test_no_retry_on_400_and_server_message_shown(fake, make_backend, fmt):
    msg = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    fake.script(Reply(status=400, error_message=msg, error_format=fmt), Reply(text="never"))
    with pytest.raises(RemoteError) as ei:
        await make_backend(max_retries=3).infill(line_req())
    err = ei.value
    assert err.message == f"remote backend {fake.url} returned 400: {msg}"
    assert not err.retryable and err.status == 400
    assert len(fake.completion_requests) == 1


async def test_unknown_model_is_a_clear_404(fake, make_backend):
    with pytest.raises(RemoteError) as ei:
        await make_backend(model="no-such-model").infill(line_req())
    assert "returned 404" in ei.value.message and "no-such-model" in ei.value.message
    assert len(fake.completion_requests) == 1


async def test_timeout_is_enforced(fake, make_backend):
    fake.script(Reply(delay_s=5.0))
    t0 = time.monotonic()
    with pytest.raises(RemoteError) as ei:
        await make_backend(timeout_s=0.4).infill(line_req())
    elapsed = time.monotonic() - t0
    assert elapsed < 0.4 + 0.3
    assert ei.value.kind == "timeout" and "timed out after 0.4 s" in ei.value.message
    assert fake.wait_disconnect(2.0)  # the request was dropped, not left running


async def test_stalled_stream_times_out(fake, make_backend):
    fake.script(Reply(text="a + b c d e f", chunk_chars=2, stall_after_chunks=1, stall_s=10))
    t0 = time.monotonic()
    with pytest.raises(RemoteError) as ei:
        await make_backend(timeout_s=0.5).infill(line_req())
    assert time.monotonic() - t0 < 0.9 and ei.value.kind == "timeout"


async def test_server_down_is_unreachable(make_backend):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    backend = make_backend(url=url, max_retries=2)
    t0 = time.monotonic()
    with pytest.raises(RemoteError) as ei:
        await backend.infill(line_req())
    assert time.monotonic() - t0 < 2.0
    assert ei.value.message == f"remote backend {url} unreachable: connection refused"
    assert ei.value.kind == "unreachable" and ei.value.retryable
    with pytest.raises(RemoteError, match="unreachable"):
        await backend.health()


async def test_connection_closed_mid_stream_is_retried(fake, make_backend):
    fake.script(Reply(text="a + b", chunk_chars=1, close_after_chunks=2), Reply(text="a + b"))
    res = await make_backend().infill(line_req())
    assert res.candidates[0].text == "a + b" and res.stats["retries"] == 1
    assert fake.completion_requests[0].outcome == "closed"


async def test_connection_closed_mid_stream_without_retries(fake, make_backend):
    fake.script(Reply(text="a + b", chunk_chars=1, close_after_chunks=2))
    with pytest.raises(RemoteError) as ei:
        await make_backend(max_retries=0).infill(line_req())
    assert "closed the connection mid-response" in ei.value.message


async def test_error_event_mid_stream(fake, make_backend):
    fake.script(Reply(text="a + b", chunk_chars=1, error_after_chunks=1, error_message="canvas exploded"))
    with pytest.raises(RemoteError) as ei:
        await make_backend(max_retries=0).infill(line_req())
    assert "canvas exploded" in ei.value.message


# ---------------------------------------------------------------------------------- cancellation


async def test_cancel_mid_stream_closes_stream_quickly(fake, make_backend):
    fake.script(Reply(text="a + b + c + d", chunk_chars=2, stall_after_chunks=1, stall_s=20))
    backend = make_backend(timeout_s=10.0)
    token = CancelToken()
    task = asyncio.create_task(backend.infill(line_req(), token))
    while not fake.completion_requests:  # the request is in flight, the stream stalls after one chunk
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.15)
    t0 = time.monotonic()
    token.cancel("newer request")
    with pytest.raises(Cancelled, match="newer request"):
        await task
    assert time.monotonic() - t0 < 0.1
    assert await asyncio.to_thread(fake.wait_disconnect, 1.0)
    assert fake.completion_requests[0].outcome == "disconnected"


async def test_cancel_while_waiting_for_first_byte(fake, make_backend):
    fake.script(Reply(delay_s=10))
    token = CancelToken()
    task = asyncio.create_task(make_backend().infill(line_req(), token))
    await asyncio.sleep(0.2)
    t0 = time.monotonic()
    token.cancel()
    with pytest.raises(Cancelled):
        await task
    assert time.monotonic() - t0 < 0.1
    assert await asyncio.to_thread(fake.wait_disconnect, 1.0)


async def test_already_cancelled_sends_nothing(fake, make_backend):
    token = CancelToken()
    token.cancel("stale")
    with pytest.raises(Cancelled):
        await make_backend().infill(line_req(), token)
    assert fake.completion_requests == []


async def test_cancel_during_backoff(fake, make_backend):
    fake.script(Reply(status=429, headers={"Retry-After": "2"}), Reply(text="never"))
    token = CancelToken()
    task = asyncio.create_task(make_backend(max_retry_after_s=2.0).infill(line_req(), token))
    await asyncio.sleep(0.2)
    token.cancel()
    with pytest.raises(Cancelled):
        await asyncio.wait_for(task, 0.2)
    assert len(fake.completion_requests) == 1


# ------------------------------------------------------------------------------------- api key


async def test_api_key_from_env_is_sent_and_never_logged(monkeypatch, caplog, make_backend):
    secret = "sk-test-5c1e7a9d"
    with FakeOpenAIServer(model=MODEL, api_key=secret) as server:
        monkeypatch.setenv("DG_TEST_REMOTE_KEY", secret)
        caplog.set_level(logging.DEBUG)
        backend = make_backend(url=server.url, api_key_env="DG_TEST_REMOTE_KEY")
        res = await backend.infill(line_req())
        assert res.candidates[0].text == "42"  # "return 42" restates the cursor line
        assert MODEL in await backend.health()
        assert all(r.headers["authorization"] == f"Bearer {secret}" for r in server.requests)

        # a wrong key: the server's 401 message, not the key, ends up in the error
        monkeypatch.setenv("DG_TEST_REMOTE_KEY", "sk-wrong-key-000")
        with pytest.raises(RemoteError) as ei:
            await backend.infill(line_req())
        assert ei.value.message == f"remote backend {server.url} returned 401: Unauthorized"
        assert not ei.value.retryable

        # unset: a config error naming the variable
        monkeypatch.delenv("DG_TEST_REMOTE_KEY")
        with pytest.raises(RemoteError, match="DG_TEST_REMOTE_KEY") as ei:
            await backend.infill(line_req())
        assert ei.value.kind == "config"

    assert caplog.records  # debug logging was on
    for text in (caplog.text, repr(backend), repr(backend.config)):
        assert secret not in text and "sk-wrong-key-000" not in text


def test_config_rejects_a_key_pasted_as_env_name():
    with pytest.raises(ValueError) as ei:
        RemoteConfig(url="http://127.0.0.1:1/v1", model="m", api_key_env="sk-abc-123")
    assert "sk-abc-123" not in str(ei.value)


# --------------------------------------------------------------------------------------- health


async def test_health(fake, make_backend):
    summary = await make_backend().health()
    assert MODEL in summary and "8192" in summary
    with pytest.raises(RemoteError, match="does not serve model 'other'"):
        await make_backend(model="other").health()
    with pytest.raises(RemoteError, match="returned 404"):
        await make_backend(url=fake.base_url + "/v2").health()


# ------------------------------------------------------------------------------------ pure parts


def test_options_from_lsp_settings():
    cfg = RemoteConfig.from_options(
        {
            "url": "http://gpu-box:8000/v1/",
            "model": MODEL,
            "apiKeyEnv": "DG_KEY",
            "mode": "completions",
            "timeoutMs": 1500,
        }
    )
    assert cfg.url == "http://gpu-box:8000/v1" and cfg.api_key_env == "DG_KEY"
    assert cfg.mode == "completions" and cfg.timeout_s == 1.5
    with pytest.raises(ValueError):
        RemoteConfig.from_options({"url": "http://x/v1"})
    with pytest.raises(ValueError):
        RemoteConfig(url="http://x/v1", model="m", mode="fim")


async def test_context_trimming_and_prompt_rendering(make_backend):
    prefix = "".join(f"line {i}\n" for i in range(1000)) + "x = "
    suffix = "\n" + "".join(f"after {i}\n" for i in range(1000))
    p = trim_prefix(prefix, 100)
    s = trim_suffix(suffix, 100)
    assert len(p) <= 100 and p.endswith("x = ") and p.startswith("line ")
    assert len(s) <= 100 and s.endswith("\n") and suffix.startswith(s)
    assert render_fim("{prefix}|{suffix}", "a{suffix}", "b") == "a{suffix}|b"
    backend = make_backend(max_prefix_chars=100, max_suffix_chars=100)
    body = backend.build_body(InfillRequest(prefix=prefix, suffix=suffix, plan=SpanPlan(SpanKind.LINE)))
    user = body["messages"][1]["content"]
    assert f"<prefix>{p}</prefix>" in user and f"<suffix>{s}</suffix>" in user


def test_extract_middle_streaming_completeness():
    req = line_req()
    assert extract_middle("```py", req, "chat", final=False) == ("", False)
    assert extract_middle("```python\na + ", req, "chat", final=False) == ("a + ", False)
    assert extract_middle("```python\na + b\n", req, "chat", final=False) == ("a + b", True)
    assert extract_middle("a + b", req, "completions", final=True) == ("a + b", False)
    multi = block_req(max_lines=2)
    assert extract_middle("    a\n    b", multi, "completions", final=False) == ("    a\n    b", False)
    assert extract_middle("    a\n    b\n", multi, "completions", final=False) == ("    a\n    b", True)


def test_standalone_server_runs():
    script = Path(__file__).with_name("fake_openai_server.py")
    proc = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--model", "m", "--text", "pass"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("fake-openai listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1]
        with httpx.Client(timeout=5.0) as client:
            assert client.get(f"{url}/models").json()["data"][0]["id"] == "m"
            base = url[: -len("/v1")]
            client.post(f"{base}/_fake/script", json=[{"text": "scripted", "status": 200}])
            r = client.post(f"{url}/completions", json={"model": "m", "prompt": "x"})
            assert r.json()["choices"][0]["text"] == "scripted"
            r = client.post(f"{url}/completions", json={"model": "m", "prompt": "y"})
            assert r.json()["choices"][0]["text"] == "pass"
            assert [q["body"]["prompt"] for q in client.get(f"{base}/_fake/requests").json()[1:]] == [
                "x",
                "y",
            ]
    finally:
        proc.terminate()
        proc.wait(timeout=5)
        proc.stdout.close()


# ------------------------------------------------------------------------------- Fill holes, remote
HOLES = ("def add(a, b):\n    total = a + b\n    return total\n\n\ndef sub(a, b):\n    total = ???\n"
         "    return total\n\n\ndef mul(a, b):\n    ...\n")


async def _fill(engine, text: str = HOLES, uri: str = "file:///h.py"):
    from dgcomplete.engine import EditOptions

    engine.open(uri, text, 1, "python")
    return await engine.edit("fill", uri, 0, len(text), 1, options=EditOptions(seed=3))


async def test_fill_holes_asks_the_remote_backend_where_each_hole_stands(fake, make_backend):
    """Without the local model, each hole is a completion of the remote backend's where it stands (the placeholder
    taken out, one line for a hole inside a line), its choices judged as the local model's are: what does not parse
    or is a placeholder again is passed over."""
    from dgcomplete.engine import Engine

    fake.script(Reply(text=["(a", "...", "a - b"]), Reply(text="    return a * b\n"))
    e = Engine(None, remote=make_backend(), fallback_to_local=False)
    try:
        res = await _fill(e)
        assert res.outcome.ok, res.outcome.reason
        after = res.outcome.new_text
        assert "    total = a - b\n" in after and after.endswith("    return a * b\n"), after
        assert res.outcome.stats["filled"] == 2 and res.outcome.stats["backend"] == "remote"
        assert res.outcome.stats["remote_holes"] == 2 and "fallback" not in res.outcome.stats
        first, second = (r.body["messages"][1]["content"] for r in fake.completion_requests)
        assert "total = </prefix>" in first and "<suffix>\n    return total" in first and "one line only" in first
        assert "a - b" in second and "def mul(a, b):\n    </prefix>" in second  # the first hole is filled
    finally:
        await e.shutdown()


async def test_fill_holes_on_a_failing_remote_backend(fake, make_backend, tiny_model):
    """The server fails: without fallback the command fails with its message and nothing is written; with the
    local model and fallback, the local model fills that hole and the rest (the server is not asked again)."""
    from dgcomplete.engine import Engine, EngineError
    from dgcomplete.model import load_model

    fake.script(Reply(status=400, error_message="context too long"))
    e = Engine(None, remote=make_backend(), fallback_to_local=False)
    try:
        with pytest.raises(EngineError, match="returned 400: context too long"):
            await _fill(e)
        assert e.session("file:///h.py").doc.text == HOLES
    finally:
        await e.shutdown()
    fake.reset()
    fake.script(Reply(status=400, error_message="context too long"))
    e = Engine(load_model(tiny_model), threads=1, remote=make_backend(), fallback_to_local=True)
    try:
        res = await _fill(e)
        stats = res.outcome.stats
        assert stats["backend"] == "local" and "context too long" in stats["fallback"], stats
        assert "remote_holes" not in stats and stats["proposed"] >= 1
        assert len(fake.completion_requests) == 1
    finally:
        await e.shutdown()


# --------------------------------------------------------------------------- Rewrite and Repair, remote
CODE = "def f(x):\n    y = x+1\n    return y\n"


async def test_rewrite_asks_the_remote_backend_with_the_selection(fake, make_backend):
    """Rewrite selection sends the selection between the text before and after it (chat mode) and writes the reply
    in its place: the first variant greedy, the others sampled; a reply that breaks the file is not applied."""
    from dgcomplete.engine import EditOptions, Engine

    e = Engine(None, remote=make_backend(), fallback_to_local=False)
    try:
        e.open("file:///r.py", CODE, 1, "python")
        start, end = CODE.index("y = x"), len(CODE) - 1
        fake.script(Reply(text="```python\n    y = x + 1\n    return y\n```"))
        res = await e.edit("rewrite", "file:///r.py", start, end, 1)
        assert res.outcome.ok, res.outcome.reason
        assert res.outcome.new_text == "y = x + 1\n    return y" and res.outcome.stats["remote_calls"] == 1
        (rq,) = fake.completion_requests
        system, user = (m["content"] for m in rq.body["messages"])
        assert "code editing engine" in system and rq.body["temperature"] == 0.0
        assert "Task: rewrite the selected code" in user
        assert "<prefix>def f(x):\n    </prefix>\n<selection>y = x+1\n    return y</selection>\n<suffix>\n</suffix>" in user
        crlf = CODE.replace("\n", "\r\n")  # a CRLF file gets CRLF lines (the reply is read with "\n")
        e.open("file:///c.py", crlf, 1, "python")
        fake.script(Reply(text="y = x + 1\r\n    return y\r\n"))
        res = await e.edit("rewrite", "file:///c.py", crlf.index("y = x"), len(crlf) - 2, 1)
        assert res.outcome.new_text == "y = x + 1\r\n    return y", res.outcome
        fake.script(Reply(text="y = (x + 1\n    return y"))
        res = await e.edit("rewrite", "file:///r.py", start, end, 1, options=EditOptions(seed=2))
        assert not res.outcome.ok and res.outcome.reason, res.outcome
        assert fake.completion_requests[-1].body["temperature"] == 0.7
    finally:
        await e.shutdown()


async def test_repair_asks_the_remote_backend_for_the_error_lines_only(fake, make_backend):
    """A damage no one-token edit mends: the server gets the error's line and one line either side as the selection
    (the rest of the range stays context) and its repair is judged by Repair's rules; a one-token repair asks
    nothing of the server."""
    from dgcomplete.engine import Engine

    text = "def f(x):\n    a = 1\n    b = 2\n    y = x y z\n    c = 3\n    d = 4\n    return y\n"
    e = Engine(None, remote=make_backend(), fallback_to_local=False)
    try:
        e.open("file:///p.py", text, 1, "python")
        fake.script(Reply(text="    b = 2\n    y = x + y + z\n    c = 3"))
        res = await e.edit("repair", "file:///p.py", 0, len(text), 1)
        assert res.outcome.ok, res.outcome.reason
        assert res.outcome.new_text == text.replace("x y z", "x + y + z")
        (rq,) = fake.completion_requests
        user = rq.body["messages"][1]["content"]
        assert "<selection>    b = 2\n    y = x y z\n    c = 3</selection>" in user
        assert "Task: the selected code has syntax errors" in user and "    a = 1\n" in user.split("<selection>")[0]
        # a reply that changes more than the damage needs: not applied
        fake.script(*[Reply(text="    b = 2\n    y = x + y + z + f(x, x, x)\n    c = 3")] * 6)
        res = await e.edit("repair", "file:///p.py", 0, len(text), 1)
        assert not res.outcome.ok and "within the damage" in res.outcome.reason, res.outcome
        assert res.outcome.stats["remote_calls"] == 6  # each round asks again (sampled after the first)
        fake.reset()
        e.open("file:///q.py", "x = (1\n", 1, "python")
        res = await e.edit("repair", "file:///q.py", 0, 7, 1)
        assert res.outcome.new_text == "x = (1)\n" and res.outcome.stats["remote_calls"] == 0
        assert fake.completion_requests == []
    finally:
        await e.shutdown()


async def test_rewrite_on_a_failing_remote_backend_falls_back_or_says_why(fake, make_backend, tiny_model):
    from dgcomplete.engine import Engine, EngineError
    from dgcomplete.model import load_model

    fake.script(Reply(status=503, error_message="no capacity"))
    e = Engine(None, remote=make_backend(max_retries=0), fallback_to_local=False)
    try:
        e.open("file:///r.py", CODE, 1, "python")
        with pytest.raises(EngineError, match="returned 503: no capacity"):
            await e.edit("rewrite", "file:///r.py", 14, len(CODE) - 1, 1)
    finally:
        await e.shutdown()
    fake.script(Reply(status=503, error_message="no capacity"))
    e = Engine(load_model(tiny_model), threads=1, remote=make_backend(max_retries=0), fallback_to_local=True)
    try:
        e.open("file:///r.py", CODE, 1, "python")
        res = await e.edit("rewrite", "file:///r.py", 14, len(CODE) - 1, 1)
        stats = res.outcome.stats
        assert stats["backend"] == "local" and "no capacity" in stats["fallback"] and stats["steps"] > 0, stats
    finally:
        await e.shutdown()


def _replies(rng, doc: str) -> list[str]:
    """What a server might send back: pieces of the document, mutated, wrapped, CRLF, tagged, long, empty."""
    a, b = sorted(rng.sample(range(len(doc) + 1), 2))
    piece = doc[a:b]
    cut = rng.randrange(len(piece) + 1)
    return [piece, piece[:cut] + rng.choice(["(", ")", ":", "???", "\n", "é😀", "</selection>", ""]) + piece[cut:],
            f"```python\n{piece}\n```", piece.replace("\n", "\r\n"), f"<selection>{piece}</selection>",
            "    return x\n" * rng.randrange(1, 40), "", " \n ", "x" * rng.randrange(1, 3000),
            rng.choice(["pass", "...", "return 1", "x = 1", "if x:", "}", "def g(:"])]


async def test_whatever_the_server_writes_no_edit_leaves_the_range_or_breaks_the_file(fake, make_backend):
    """Random replies to random commands on random ranges (remote-only engine): every applied edit lies inside the
    range, and a file that compiled still compiles (the checks are the daemon's, not the server's)."""
    import random

    from dgcomplete import edit as edits
    from dgcomplete.engine import EditOptions, Engine

    docs = ["def f(x):\n    y = ???\n    if y:\n        return y + 1\n    ...\n\n\nclass A:\n    def g(self, z):\n"
            "        pass  # TODO\n        return z * 2\n",
            "import os\n\n\ndef h(a, b):\n    c = a + (b\n    return c\n\n\nx = [1, 2,, 3]\n",
            "def k(items):\n    total = 0\n    for i in items:\n        total += i\n    # TODO: the rest\n"
            "    return total\r\n"]
    rng = random.Random(42)
    e = Engine(None, remote=make_backend(max_retries=0), fallback_to_local=False)
    applied = compiled = 0
    try:
        for case in range(int(os.environ.get("DG_FUZZ_CASES", 90))):
            doc = rng.choice(docs)
            kind = ("fill", "rewrite", "repair")[case % 3]
            start, end = sorted(rng.sample(range(len(doc) + 1), 2))
            if rng.random() < 0.3:
                start, end = 0, len(doc)
            fake.reset()
            fake.script(*[Reply(text=rng.sample(_replies(rng, doc), 3)) for _ in range(8)])
            uri = f"file:///fz{case}.py"
            e.open(uri, doc, 1, "python")
            res = await e.edit(kind, uri, start, end, 1, options=EditOptions(seed=case % 2))
            out = res.outcome
            if out.ok:
                applied += 1
                lo, hi = edits.target_span(doc, start, end, kind)
                assert edits.edits_inside(out.edits, lo, hi), (kind, start, end, out.edits)
                after = edits.apply_edits(doc, out.edits)
                broken = [len(edits._error_lines(t, edits.error_nodes(t, "python")))
                          for t in (edits.neutral_holes(doc, "python"), edits.neutral_holes(after, "python"))]
                assert broken[1] <= broken[0], (kind, start, end, out.edits)  # no line gains an error
                try:
                    compile(doc.replace("\r", ""), "doc", "exec")
                except SyntaxError:
                    continue
                compiled += 1
                compile(after.replace("\r", ""), "after", "exec")  # raises if the edit broke the file
            e.close(uri)
    finally:
        await e.shutdown()
    print(f"{applied} edits applied, {compiled} to a file that compiled")
    assert applied >= 10 and compiled >= 3  # the property is not vacuous


def test_doctor_checks_the_remote_server(fake, tiny_model):
    """`dgcomplete doctor --backend openai`: the server's models, a timed completion and a Fill holes through it;
    exit status 1 with the reason when the server cannot serve."""
    fake.script(Reply(text="0"), Reply(text="n % 2 == 1"))
    cmd = [sys.executable, "-m", "dgcomplete", "doctor", "--threads", "1", "--backend", "openai", "--url", fake.url,
           "--model", MODEL, "--local-model", str(tiny_model)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"server: {fake.url}: {MODEL}" in out.stdout
    assert "completion in" in out.stdout and "'return n % 2 == 0'" in out.stdout
    assert "Fill holes in" in out.stdout and "'return n % 2 == 1'" in out.stdout
    out = subprocess.run([*cmd[:-4], "--model", "other", *cmd[-2:]], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "server: FAILED (" in out.stdout and "does not serve model 'other'" in out.stdout


async def test_remote_repair_keeps_line_ends_blank_lines_and_indentation(fake, make_backend):
    """The error's window is sent without the line breaks at its edges: a CRLF file keeps its "\\r", the blank lines
    beside the error stay; a range that begins inside the indentation keeps the indentation the server echoes; a
    rewrite whose reply stopped at maxTokensCap is refused with a message that says so."""
    from dgcomplete.engine import Engine, EngineError

    e = Engine(None, remote=make_backend(), fallback_to_local=False)
    try:
        text = "def f(x):\r\n    b = 2\r\n    y = x y z\r\n    c = 3\r\n    return y\r\n"
        e.open("file:///crlf.py", text, 1, "python")
        fake.script(Reply(text="    b = 2\n    y = x + y + z\n    c = 3"))
        res = await e.edit("repair", "file:///crlf.py", 0, len(text), 1)
        assert res.outcome.new_text == text.replace("x y z", "x + y + z"), res.outcome
        text = "def f(x):\n    b = 2\n\n    y = x y z\n\n    return y\n"
        e.open("file:///blank.py", text, 1, "python")
        fake.script(Reply(text="    y = x + y + z"))
        res = await e.edit("repair", "file:///blank.py", 0, len(text), 1)
        assert res.outcome.new_text == text.replace("x y z", "x + y + z"), res.outcome
        js = "function f(x) {\n    let y = x y z;\n    return y;\n}\n"
        e.open("file:///ind.js", js, 1, "javascript")
        start = js.index("    let") + 2  # inside the indentation
        fake.script(Reply(text="  let y = x + y + z;"))
        res = await e.edit("repair", "file:///ind.js", start, js.index("\n    return"), 1)
        assert edit_result(js, res) == js.replace("x y z", "x + y + z"), res.outcome
        fake.script(Reply(text="y = x + 1", finish_reason="length"))
        with pytest.raises(EngineError, match="stopped at remote.maxTokensCap .512 tokens"):
            await e.edit("rewrite", "file:///blank.py", text.index("b = 2"), text.index("\n\n    return"), 1)
    finally:
        await e.shutdown()


def edit_result(text, res):
    from dgcomplete import edit as edits

    return edits.apply_edits(text, res.outcome.edits)
