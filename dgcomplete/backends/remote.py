"""Remote backend: ask an OpenAI-compatible server (vLLM, SGLang) serving DiffusionGemma for the middle.

The daemon keeps its syntax layer and span planning locally and sends only the fill-in-the-middle job:

* ``mode="chat"`` (instruction-tuned checkpoints such as ``google/diffusiongemma-26B-A4B-it``): a system
  message that describes the infilling task, then one user turn holding the language, the span
  constraint and the text around the cursor, delimited as ``<prefix>…</prefix>`` and
  ``<suffix>…</suffix>``.  The reply is cleaned of chat wrappers (thinking block, ``` fences,
  ``<middle>`` tags, a restatement of the cursor line).
* ``mode="completions"`` (base checkpoints): ``/v1/completions`` with ``fim_template`` rendered around the
  prefix and suffix; the text that comes back is the middle as is.

The rewrite commands send ``task="rewrite"`` / ``"repair"`` requests: in chat mode a system message for a code
*editing* engine and a user turn that holds the selection (``<selection>…</selection>``) between the prefix and the
suffix; the reply is the selection's new text (cleaned the same way). Completions mode fills the span anew.

Streaming replies (SSE ``data: {json}`` lines ending with ``data: [DONE]``) are read only until the
span is complete (first newline for a single-line plan, ``plan.max_lines`` lines otherwise); then the
HTTP stream is closed, which makes vLLM and SGLang abort the request.  A ``CancelToken`` is polled between
chunks and raced against the whole call, so a stalled stream is dropped within ~10 ms of a cancel.

Errors surface as :class:`RemoteError` with a message fit for the user (the editor's status line) and a
``retryable`` flag; connect errors, 5xx, 429 and connections dropped mid-stream are retried with
exponential backoff (``Retry-After`` honoured, bounded), other 4xx never are.  ``timeout_s`` bounds the
whole ``infill`` call, retries and backoff included.

The API key is read from the environment variable named by ``api_key_env`` at each request and sent as
``Authorization: Bearer …``; it is never stored in settings, logged, or put into an error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import os
import re
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from .. import __version__
from ..types import Cancelled, CancelToken, Candidate, InfillRequest, InfillResult, SpanKind, SpanPlan

log = logging.getLogger(__name__)

MODES = ("chat", "completions")
DEFAULT_FIM_TEMPLATE = "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLACEHOLDER = re.compile(r"\{(prefix|suffix)\}")
_CANCEL_POLL_S = 0.01
# Special tokens a completions-mode server may leak into the text when it does not skip them.
_FIM_LEAKS = (
    "<|fim_prefix|>",
    "<|fim_suffix|>",
    "<|fim_middle|>",
    "<|file_separator|>",
    "<|endoftext|>",
    "<eos>",
)

SYSTEM_PROMPT = (
    "You are a code infilling engine inside an editor. The user gives the code before the cursor "
    "between <prefix> and </prefix> and the code after the cursor between <suffix> and </suffix>. "
    "Reply with only the missing code that goes at the cursor, exactly as it must be inserted between "
    "the prefix and the suffix: no explanation, no markdown fences, no tags, and do not repeat the "
    "prefix or the suffix."
)

# Rewrite selection and Repair syntax: the selection's text goes between the prefix and the suffix, and the reply
# is its new text. (Completions mode has no place for it: there the span is filled anew from its surroundings.)
EDIT_SYSTEM_PROMPT = (
    "You are a code editing engine inside an editor. The user gives the code before a selection between "
    "<prefix> and </prefix>, the selected code between <selection> and </selection> and the code after it "
    "between <suffix> and </suffix>. Reply with only the new text of the selection, exactly as it must replace "
    "the selection between the prefix and the suffix, with the same indentation: no explanation, no markdown "
    "fences, no tags, and do not repeat the prefix or the suffix."
)
_TASKS = {
    "rewrite": "rewrite the selected code so that it reads better; it must do the same thing.",
    "repair": "the selected code has syntax errors: correct them, changing as little as possible.",
}

_KIND_HINTS = {
    SpanKind.REST_OF_LINE: "finish the current line",
    SpanKind.LINE: "write one whole line",
    SpanKind.STATEMENT: "complete the current statement",
    SpanKind.BLOCK: "write the body of the block that was just opened",
    SpanKind.ARGS: "complete the remaining arguments up to the closing bracket",
    SpanKind.RANGE: "write the missing code",
}


@dataclass
class RemoteConfig:
    """Settings of the remote backend (CLI flags / LSP ``initializationOptions.remote``)."""

    url: str  # base URL including /v1, e.g. http://127.0.0.1:8000/v1
    model: str  # served model name, e.g. google/diffusiongemma-26B-A4B-it
    api_key_env: str | None = None  # NAME of the environment variable holding the key, never the key
    mode: str = "chat"  # "chat" (instruction-tuned) or "completions" (base model + fim_template)
    fim_template: str = DEFAULT_FIM_TEMPLATE
    timeout_s: float = 10.0  # whole infill call, retries included
    connect_timeout_s: float = 2.0
    max_retries: int = 2  # on connect errors, 5xx, 429 and dropped streams; never on other 4xx
    backoff_s: float = 0.25  # first backoff; doubles each retry
    max_retry_after_s: float = 2.0  # cap on a server's Retry-After
    stream: bool = True
    max_prefix_chars: int = 8000  # context kept before the cursor (cut at a line boundary)
    max_suffix_chars: int = 2000  # context kept after the cursor (cut at a line boundary)
    max_tokens_cap: int = 512  # upper bound on the max_tokens sent
    temperature: float | None = None  # None: 0.0 for one candidate, 0.7 for several (vLLM's dLLM ignores it)
    extra_body: dict[str, Any] = field(default_factory=dict)  # merged into each request body

    def __post_init__(self) -> None:
        url = (self.url or "").strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"remote url must start with http:// or https:// (got {self.url!r})")
        self.url = url
        if not self.model:
            raise ValueError("remote model name is required (the name the server serves, see GET /v1/models)")
        if self.mode not in MODES:
            raise ValueError(f"remote mode must be one of {', '.join(MODES)} (got {self.mode!r})")
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(self.api_key_env):
            # Do not echo the value: someone may have pasted the key itself here.
            raise ValueError(
                "api_key_env must be the NAME of an environment variable (like DG_API_KEY), not the key"
            )
        if "{prefix}" not in self.fim_template or "{suffix}" not in self.fim_template:
            raise ValueError("fim_template must contain {prefix} and {suffix}")
        if self.timeout_s <= 0 or self.connect_timeout_s <= 0:
            raise ValueError("remote timeouts must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> RemoteConfig:
        """Build from LSP ``initializationOptions["remote"]`` (camelCase keys, times in ms)."""
        if not isinstance(options, dict):
            raise ValueError("remote settings must be an object")
        kw: dict[str, Any] = {}
        names = {
            "url": "url",
            "model": "model",
            "apiKeyEnv": "api_key_env",
            "mode": "mode",
            "fimTemplate": "fim_template",
            "maxRetries": "max_retries",
            "stream": "stream",
            "maxPrefixChars": "max_prefix_chars",
            "maxSuffixChars": "max_suffix_chars",
            "maxTokensCap": "max_tokens_cap",
            "temperature": "temperature",
            "extraBody": "extra_body",
        }
        for key, attr in names.items():
            if options.get(key) is not None:
                kw[attr] = options[key]
        for key, attr in (
            ("timeoutMs", "timeout_s"),
            ("connectTimeoutMs", "connect_timeout_s"),
            ("backoffMs", "backoff_s"),
            ("maxRetryAfterMs", "max_retry_after_s"),
        ):
            if options.get(key) is not None:
                kw[attr] = float(options[key]) / 1000.0
        if "url" not in kw or "model" not in kw:
            raise ValueError('remote settings need "url" and "model"')
        return cls(**kw)


class RemoteError(Exception):
    """A remote call failed. ``message`` is meant for the user; ``retryable`` says whether retrying may help.

    ``kind`` is one of "unreachable", "timeout", "http", "protocol", "model", "config".
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        kind: str = "http",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind = kind


# --------------------------------------------------------------------------------------------- prompt


def trim_prefix(prefix: str, limit: int) -> str:
    """Keep at most ``limit`` characters before the cursor, starting at a line boundary when possible."""
    if len(prefix) <= limit:
        return prefix
    if limit <= 0:
        return ""
    cut = prefix[-limit:]
    nl = cut.find("\n")
    if 0 <= nl < len(cut) - 1:
        cut = cut[nl + 1 :]
    return cut


def trim_suffix(suffix: str, limit: int) -> str:
    """Keep at most ``limit`` characters after the cursor, ending at a line boundary when possible."""
    if len(suffix) <= limit:
        return suffix
    if limit <= 0:
        return ""
    cut = suffix[:limit]
    nl = cut.rfind("\n")
    if nl > 0:
        cut = cut[: nl + 1]
    return cut


def render_fim(template: str, prefix: str, suffix: str) -> str:
    """Fill ``{prefix}``/``{suffix}`` in one pass (code braces and placeholder-like text stay untouched)."""
    return _PLACEHOLDER.sub(lambda m: prefix if m.group(1) == "prefix" else suffix, template)


def span_constraint(plan: SpanPlan) -> str:
    hint = _KIND_HINTS.get(plan.kind, "write the missing code")
    if plan.single_line:
        return f"{hint}; one line only: the answer must not contain a newline."
    return f"{hint}; at most {plan.max_lines} lines."


def build_messages(prefix: str, suffix: str, req: InfillRequest) -> list[dict[str, str]]:
    """The chat turns: the span to fill between ``<prefix>`` and ``<suffix>``, or for an edit task (rewrite, repair)
    the selection to edit between them, ``<selection>``."""
    edit = req.task in _TASKS
    ask = f"Task: {_TASKS[req.task]} At most {req.plan.max_lines} lines." if edit else (
        f"Span: {span_constraint(req.plan)}")
    selection = f"<selection>{req.original}</selection>\n" if edit else ""
    user = (
        f"Language: {req.language or 'unknown'}\n"
        f"{ask}\n"
        f"<prefix>{prefix}</prefix>\n"
        f"{selection}"
        f"<suffix>{suffix}</suffix>"
    )
    return [{"role": "system", "content": EDIT_SYSTEM_PROMPT if edit else SYSTEM_PROMPT},
            {"role": "user", "content": user}]


def max_tokens_for(plan: SpanPlan, mode: str, cap: int) -> int:
    """Scale the plan's canvas slots to the server's tokenizer, with room for chat wrappers."""
    n = int(plan.max_tokens * 1.5) + (16 if mode == "chat" else 0)
    if not plan.single_line:
        n = max(n, 12 * plan.max_lines)
    return max(16, min(cap, n))


# ----------------------------------------------------------------------------------- reply cleaning


def _strip_restatement(text: str, prefix: str) -> str:
    """Drop a leading copy of the cursor line (what the prefix already has on the current line)."""
    cur = prefix.rsplit("\n", 1)[-1]
    core = cur.strip()
    if len(core) < 2:
        return text
    if text.startswith(cur):
        rest = text[len(cur) :]
    else:
        lead = text.lstrip(" \t")
        if not lead.startswith(core):
            return text
        rest = lead[len(core) :]
        if cur[-1:].isspace():
            rest = rest.lstrip(" \t")
    return rest


def extract_middle(raw: str, req: InfillRequest, mode: str, *, final: bool) -> tuple[str, bool]:
    """Turn the raw reply so far into the middle to insert; also say whether the span is complete.

    Used on every streamed chunk (``final=False``) to decide when to stop reading, and once on the
    whole text.  ``complete`` is True when more text could not change the result.
    """
    text = raw.replace("\r\n", "\n")
    complete = False
    if mode == "chat":
        # A thinking block ("<|channel>thought ... <channel|>") when the server has no reasoning parser.
        if "<channel|>" in text:
            text = text.split("<channel|>", 1)[1]
        elif text.lstrip().startswith("<|channel>"):
            return "", False
        head = text.lstrip(" \t\n")
        if head.startswith("```"):
            nl = head.find("\n")
            if nl < 0:
                return "", False  # the fence line ("```python") is not finished yet
            text = head[nl + 1 :]
        head = text.lstrip(" \t\n")
        for tag in ("<middle>", "<selection>"):
            if head.startswith(tag):
                text = head[len(tag) :]
        for closer in ("\n```", "</middle>", "</selection>"):
            pos = text.find(closer)
            if pos >= 0:
                text, complete = text[:pos], True
        if text.startswith("```"):
            text, complete = "", True
        if req.plan.single_line or req.prefix.endswith("\n"):
            text = text.lstrip("\n")
        text = _strip_restatement(text, req.prefix)
    else:
        for leak in _FIM_LEAKS:
            pos = text.find(leak)
            if pos >= 0:
                text, complete = text[:pos], True
    if req.plan.single_line:
        nl = text.find("\n")
        if nl >= 0:
            text, complete = text[:nl], True
    else:
        lines = text.split("\n")
        if len(lines) > req.plan.max_lines:
            text, complete = "\n".join(lines[: req.plan.max_lines]), True
    if mode == "chat" and (final or complete):
        text = text.rstrip()
    return text, complete


# ------------------------------------------------------------------------------------ error helpers


def _server_message(resp: httpx.Response) -> str:
    """The message out of vLLM/SGLang/OpenAI error bodies, else the start of the body."""
    try:
        body = resp.json()
    except ValueError:
        body = None
    msg = _error_message(body) if body is not None else None
    if msg:
        return msg
    text = resp.text.strip()
    return text[:300] if text else (resp.reason_phrase or "no details")


def _error_message(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return None
    err = obj.get("error")
    if isinstance(err, dict) and err.get("message"):
        return str(err["message"])
    if isinstance(err, str) and err:
        return err
    if obj.get("object") == "error" and obj.get("message"):
        return str(obj["message"])
    detail = obj.get("detail")
    if detail and not obj.get("choices"):
        return detail if isinstance(detail, str) else json.dumps(detail)[:300]
    return None


def _error_code(obj: dict[str, Any]) -> int | None:
    err = obj.get("error")
    code = err.get("code") if isinstance(err, dict) else obj.get("code")
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _describe_connect_error(exc: BaseException) -> str:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cur, socket.gaierror):
            return f"cannot resolve host ({cur.strerror or cur})"
        if isinstance(cur, ConnectionResetError):
            return "connection reset"
        cur = cur.__cause__ or cur.__context__
    text = str(exc).strip()
    return text or type(exc).__name__


async def _wait_cancelled(cancel: CancelToken) -> None:
    while not cancel.cancelled:
        await asyncio.sleep(_CANCEL_POLL_S)


# ------------------------------------------------------------------------------------------ backend


class RemoteBackend:
    """Infill through an OpenAI-compatible server; see the module docstring."""

    name = "remote"

    def __init__(self, config: RemoteConfig, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self._own_client = client is None
        self._client = client or httpx.AsyncClient(
            timeout=self._timeout(),
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=8),
        )
        self._n_ignored = False  # learnt: the server returns one choice whatever "n" says

    def __repr__(self) -> str:  # no headers, no key
        return (
            f"RemoteBackend(url={self.config.url!r}, model={self.config.model!r}, mode={self.config.mode!r})"
        )

    # -- public API --------------------------------------------------------------------------

    async def infill(self, req: InfillRequest, cancel: CancelToken | None = None) -> InfillResult:
        """Ask the server for up to ``req.n`` middles.

        Raises :class:`Cancelled` when ``cancel`` fires (the HTTP stream is closed first) and
        :class:`RemoteError` when the server cannot be used.
        """
        if cancel is not None:
            cancel.raise_if_cancelled()
        t0 = time.monotonic()
        deadline = t0 + self.config.timeout_s
        stats: dict[str, float | int | str] = {
            "backend": "remote",
            "remote_ms": 0.0,
            "ttfb_ms": -1.0,
            "retries": 0,
            "chunks": 0,
            "calls": 0,
        }
        texts = await self._guard(self._collect(req, cancel, stats, t0, deadline), cancel, deadline)
        stats["remote_ms"] = round((time.monotonic() - t0) * 1000.0, 2)
        candidates = [Candidate(text=t, score=0.0) for t in texts]
        reason = "" if candidates else "remote backend returned no usable text"
        return InfillResult(candidates=candidates, stats=stats, reason=reason)

    async def health(self) -> str:
        """GET {url}/models; a one-line summary, or RemoteError (also when the model is not served)."""
        deadline = time.monotonic() + self.config.timeout_s
        return await self._guard(self._health(), None, deadline)

    async def aclose(self) -> None:
        if self._own_client:
            await self._client.aclose()

    async def __aenter__(self) -> RemoteBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- request building ----------------------------------------------------------------------

    def build_body(self, req: InfillRequest, n: int = 1, seed: int | None = None) -> dict[str, Any]:
        cfg = self.config
        prefix = trim_prefix(req.prefix, cfg.max_prefix_chars)
        suffix = trim_suffix(req.suffix, cfg.max_suffix_chars)
        body: dict[str, Any] = dict(cfg.extra_body)
        body.update(
            {
                "model": cfg.model,
                "max_tokens": max_tokens_for(req.plan, cfg.mode, cfg.max_tokens_cap),
                "stream": cfg.stream,
            }
        )
        if cfg.mode == "chat":
            body["messages"] = build_messages(prefix, suffix, req)
        else:
            body["prompt"] = render_fim(cfg.fim_template, prefix, suffix)
            if req.plan.single_line:
                # Chat mode gets no newline stop: a "```python" fence line would end the reply early.
                body["stop"] = ["\n"]
        if n > 1:
            body["n"] = n
        if "temperature" not in cfg.extra_body:
            # Several candidates (in one call or in sequential ones) need sampling; one wants greedy.
            # A rewrite's variants and a repair's later rounds (seed > 0) are sampled too: greedy, each is the first.
            sampled = req.n > 1 or (req.task in _TASKS and bool(req.seed))
            body["temperature"] = (
                cfg.temperature if cfg.temperature is not None else (0.7 if sampled else 0.0)
            )
        if seed is not None:
            body["seed"] = seed
        return body

    def _endpoint(self) -> str:
        return f"{self.config.url}/{'chat/completions' if self.config.mode == 'chat' else 'completions'}"

    def _timeout(self) -> httpx.Timeout:
        cfg = self.config
        return httpx.Timeout(cfg.timeout_s, connect=cfg.connect_timeout_s, pool=cfg.connect_timeout_s)

    def _headers(self, stream: bool = False) -> dict[str, str]:
        headers = {"User-Agent": f"dgcomplete/{__version__}"}
        if stream:
            headers["Accept"] = "text/event-stream"
        name = self.config.api_key_env
        if name:
            key = os.environ.get(name, "").strip()
            if not key:
                raise RemoteError(
                    f"remote backend {self.config.url}: environment variable {name} (the API key) is not set",
                    kind="config",
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    # -- orchestration -------------------------------------------------------------------------

    async def _guard(self, coro: Any, cancel: CancelToken | None, deadline: float) -> Any:
        """Run ``coro`` racing ``cancel`` and the deadline; on either, cancel it (closing its stream)."""
        task = asyncio.ensure_future(coro)
        watcher = asyncio.ensure_future(_wait_cancelled(cancel)) if cancel is not None else None
        try:
            waiting = {task} if watcher is None else {task, watcher}
            done, _ = await asyncio.wait(
                waiting, timeout=max(0.0, deadline - time.monotonic()), return_when=asyncio.FIRST_COMPLETED
            )
            if task in done:
                return task.result()
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)  # let the stream's `async with` close the connection
            if task.done() and not task.cancelled():
                task.exception()  # consumed: it lost the race
            if watcher is not None and watcher in done:
                assert cancel is not None
                log.debug("remote request to %s cancelled (%s)", self.config.url, cancel.reason)
                raise Cancelled(cancel.reason or "cancelled")
            raise RemoteError(
                f"remote backend {self.config.url} timed out after {self.config.timeout_s:g} s",
                kind="timeout",
            )
        finally:
            if not task.done():
                task.cancel()
            if watcher is not None and not watcher.done():
                watcher.cancel()

    async def _collect(
        self,
        req: InfillRequest,
        cancel: CancelToken | None,
        stats: dict[str, Any],
        t0: float,
        deadline: float,
    ) -> list[str]:
        want = max(1, req.n)
        ask = 1 if self._n_ignored else want
        raws = await self._call_with_retries(
            self.build_body(req, ask, req.seed), req, ask, cancel, stats, t0, deadline
        )
        out: list[str] = []
        for text in raws:
            if text and text not in out:
                out.append(text)
        if want > 1 and len(raws) < want:
            if ask > 1:
                log.info(
                    "remote backend %s ignored n=%d; asking one candidate per call", self.config.url, ask
                )
                self._n_ignored = True
            for i in range(len(raws), want):
                if len(out) >= want or time.monotonic() >= deadline:
                    break
                seed = None if req.seed is None else req.seed + i
                try:
                    more = await self._call_with_retries(
                        self.build_body(req, 1, seed), req, 1, cancel, stats, t0, deadline
                    )
                except RemoteError as exc:
                    if out:  # keep what we have
                        log.info("extra candidate call failed: %s", exc.message)
                        break
                    raise
                for text in more:
                    if text and text not in out:
                        out.append(text)
        return out[:want]

    async def _call_with_retries(
        self,
        body: dict[str, Any],
        req: InfillRequest,
        n: int,
        cancel: CancelToken | None,
        stats: dict[str, Any],
        t0: float,
        deadline: float,
    ) -> list[str]:
        cfg = self.config
        attempt = 0
        while True:
            stats["calls"] += 1
            try:
                return await self._call_once(body, req, n, cancel, stats, t0)
            except RemoteError as exc:
                if not exc.retryable or attempt >= cfg.max_retries:
                    raise
                delay = cfg.backoff_s * (2**attempt)
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, cfg.max_retry_after_s))
                if time.monotonic() + delay >= deadline:
                    raise
                log.info("%s; retry %d/%d in %.2f s", exc.message, attempt + 1, cfg.max_retries, delay)
                await asyncio.sleep(delay)
                attempt += 1
                stats["retries"] += 1

    async def _call_once(
        self,
        body: dict[str, Any],
        req: InfillRequest,
        n: int,
        cancel: CancelToken | None,
        stats: dict[str, Any],
        t0: float,
    ) -> list[str]:
        url = self._endpoint()
        stream = bool(body.get("stream"))
        headers = self._headers(stream)
        log.debug(
            "POST %s stream=%s n=%d max_tokens=%s prompt_chars=%d",
            url,
            stream,
            n,
            body.get("max_tokens"),
            len(body.get("prompt") or "") + sum(len(m["content"]) for m in body.get("messages") or []),
        )
        try:
            if stream:
                async with self._client.stream(
                    "POST", url, json=body, headers=headers, timeout=self._timeout()
                ) as resp:
                    if resp.status_code >= 400:
                        await resp.aread()
                        raise self._http_error(resp)
                    return await self._read_stream(resp, req, n, cancel, stats, t0)
            resp = await self._client.post(url, json=body, headers=headers, timeout=self._timeout())
            if resp.status_code >= 400:
                raise self._http_error(resp)
            if stats["ttfb_ms"] < 0:
                stats["ttfb_ms"] = round((time.monotonic() - t0) * 1000.0, 2)
            return self._parse_full(resp, req, stats)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc

    async def _read_stream(
        self,
        resp: httpx.Response,
        req: InfillRequest,
        n: int,
        cancel: CancelToken | None,
        stats: dict[str, Any],
        t0: float,
    ) -> list[str]:
        mode = self.config.mode
        raw: dict[str, str] = {}
        complete: set[int] = set()  # the span is complete: more text cannot change the middle
        finished: set[int] = set()  # the server sent a finish_reason
        cut: set[int] = set()  # ... and it was "length": the reply stopped at max_tokens
        async with contextlib.aclosing(resp.aiter_lines()) as lines:
            async for line in lines:
                if cancel is not None:
                    cancel.raise_if_cancelled()
                if not line.startswith("data:"):
                    continue  # blank separators, ": keep-alive" comments, "event:" lines
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    obj = json.loads(data)
                except ValueError:
                    raise RemoteError(
                        f"remote backend {self.config.url} sent a malformed stream event: {data[:120]!r}",
                        kind="protocol",
                    ) from None
                msg = _error_message(obj)
                if msg:
                    code = _error_code(obj)
                    raise RemoteError(
                        f"remote backend {self.config.url} failed mid-stream: {msg}",
                        retryable=code is None or code >= 500,
                        status=code,
                        kind="http",
                    )
                got_text = False
                for choice in obj.get("choices") or []:
                    idx = int(choice.get("index") or 0)
                    if mode == "chat":
                        piece = (choice.get("delta") or {}).get("content")
                    else:
                        piece = choice.get("text")
                    if piece:
                        got_text = True
                        raw[idx] = raw.get(idx, "") + piece
                    if choice.get("finish_reason"):
                        finished.add(idx)
                        if choice["finish_reason"] == "length":
                            cut.add(idx)
                if got_text:
                    stats["chunks"] += 1
                    if stats["ttfb_ms"] < 0:
                        stats["ttfb_ms"] = round((time.monotonic() - t0) * 1000.0, 2)
                    for idx, text in raw.items():
                        if idx not in complete and extract_middle(text, req, mode, final=False)[1]:
                            complete.add(idx)
                    # Stop early only when that saves server work; a finished stream is read to
                    # [DONE] so that its connection can be reused.
                    if all(i in complete or i in finished for i in range(n)) and not all(
                        i in finished for i in range(n)
                    ):
                        log.debug("span complete after %d chunks; closing the stream", stats["chunks"])
                        break
        return self._whole(raw, cut, req, stats)

    def _whole(self, raw: dict[int, str], cut: set[int], req: InfillRequest, stats: dict[str, Any]) -> list[str]:
        """The middles of the choices; an edit task's reply cut at ``max_tokens`` is no reply (it would drop the end
        of the selection), counted in ``stats["cut_short"]``."""
        if req.task in _TASKS and cut:
            stats["cut_short"] = stats.get("cut_short", 0) + len(cut)
            raw = {i: t for i, t in raw.items() if i not in cut}
        return [extract_middle(raw[i], req, self.config.mode, final=True)[0] for i in sorted(raw)]

    def _parse_full(self, resp: httpx.Response, req: InfillRequest, stats: dict[str, Any]) -> list[str]:
        try:
            obj = resp.json()
        except ValueError:
            raise RemoteError(
                f"remote backend {self.config.url} returned a body that is not JSON: {resp.text[:120]!r}",
                kind="protocol",
            ) from None
        msg = _error_message(obj)
        if msg:
            raise RemoteError(f"remote backend {self.config.url} returned an error: {msg}", kind="http")
        texts: dict[int, str] = {}
        cut: set[int] = set()
        for choice in obj.get("choices") or []:
            idx = int(choice.get("index") or 0)
            if self.config.mode == "chat":
                texts[idx] = (choice.get("message") or {}).get("content") or ""
            else:
                texts[idx] = choice.get("text") or ""
            if choice.get("finish_reason") == "length":
                cut.add(idx)
        return self._whole(texts, cut, req, stats)

    def _http_error(self, resp: httpx.Response) -> RemoteError:
        status = resp.status_code
        msg = f"remote backend {self.config.url} returned {status}: {_server_message(resp)}"
        if status == 404 and not self.config.url.endswith("/v1"):
            msg += " (does the URL need to end with /v1?)"
        retryable = status == 429 or status >= 500
        retry_after = _parse_retry_after(resp.headers.get("retry-after")) if retryable else None
        return RemoteError(msg, retryable=retryable, status=status, retry_after=retry_after, kind="http")

    def _transport_error(self, exc: httpx.HTTPError) -> RemoteError:
        url, cfg = self.config.url, self.config
        if isinstance(exc, httpx.ConnectTimeout):
            return RemoteError(
                f"remote backend {url} unreachable: connect timed out after {cfg.connect_timeout_s:g} s",
                retryable=True,
                kind="unreachable",
            )
        if isinstance(exc, httpx.ConnectError):
            return RemoteError(
                f"remote backend {url} unreachable: {_describe_connect_error(exc)}",
                retryable=True,
                kind="unreachable",
            )
        if isinstance(exc, httpx.TimeoutException):
            return RemoteError(f"remote backend {url} timed out after {cfg.timeout_s:g} s", kind="timeout")
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
            return RemoteError(
                f"remote backend {url} closed the connection mid-response ({exc})",
                retryable=True,
                kind="protocol",
            )
        return RemoteError(f"remote backend {url} request failed: {exc}", retryable=True, kind="protocol")

    async def _health(self) -> str:
        url = f"{self.config.url}/models"
        try:
            resp = await self._client.get(url, headers=self._headers(), timeout=self._timeout())
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        if resp.status_code >= 400:
            raise self._http_error(resp)
        try:
            data = resp.json().get("data") or []
        except (ValueError, AttributeError):
            raise RemoteError(
                f"remote backend {self.config.url} answered /models with something that is not a model list",
                kind="protocol",
            ) from None
        models = [m for m in data if isinstance(m, dict) and m.get("id")]
        ids = [str(m["id"]) for m in models]
        if self.config.model not in ids:
            raise RemoteError(
                f"remote backend {self.config.url} does not serve model {self.config.model!r} "
                f"(it serves: {', '.join(ids) or 'nothing'})",
                kind="model",
            )
        ours = next(m for m in models if m["id"] == self.config.model)
        summary = f"{self.config.url}: {self.config.model}"
        if ours.get("max_model_len"):
            summary += f" (max_model_len {ours['max_model_len']})"
        others = [i for i in ids if i != self.config.model]
        if others:
            summary += f"; also serving {', '.join(others)}"
        return summary
