"""Every setting takes effect at run time through workspace/didChangeConfiguration, or is reported as not."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as lsp

from .conftest import start_daemon, stop_daemon

URI = "file:///work/live.py"
TEXT = "def f(a):\n    return a + 1\n\n\ndef g(a):\n    if a:\n        return \n"
LINE, COL = 6, len("        return ")


async def stats(client) -> dict:
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="dgcomplete.stats"))


async def inline(client, invoked: bool = False):
    kind = lsp.InlineCompletionTriggerKind.Invoked if invoked else lsp.InlineCompletionTriggerKind.Automatic
    return await client.text_document_inline_completion_async(lsp.InlineCompletionParams(
        text_document=lsp.TextDocumentIdentifier(URI), position=lsp.Position(LINE, COL),
        context=lsp.InlineCompletionContext(trigger_kind=kind)))


def configure(client, **settings) -> None:
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"dgcomplete": settings}))


async def messages_since(client, n: int, timeout: float = 5.0) -> list[str]:
    for _ in range(int(timeout / 0.05)):
        if len(client.messages) > n:
            break
        await asyncio.sleep(0.05)
    return [m.message for m in client.messages[n:]]


@pytest.mark.asyncio
async def test_each_setting_acts_at_run_time(tiny_mask_model):
    client = await start_daemon("--model", str(tiny_mask_model), "--threads", "1")
    try:
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(URI, "python", 1, TEXT)))
        await inline(client)  # waits for the model
        last = (await stats(client))["last"]
        assert last["max_lines"] >= 1

        configure(client, maxLines=1, maxTokens=5, steps=1, contextSources=["diffusion"])
        await inline(client)
        last = (await stats(client))["last"]
        assert last["max_lines"] == 1 and last["max_tokens"] <= 5 and last["steps"] <= 1 and last["drafts"] == 0

        configure(client, contextSources=["document"], maxTokens=48, maxLines=8, steps=4)
        await inline(client)
        last = (await stats(client))["last"]
        assert last["steps"] == 0 and last["drafts"] >= 1  # retrieval only: nothing sampled

        configure(client, minConfidence=1.0, contextSources=None)
        res = await inline(client)
        assert not res.items and "confidence gate" in (await stats(client))["last"]["reason"]
        configure(client, minConfidence=0.0)
        assert (await inline(client)).items

        # an Invoked request's sampled rows: the seed drawn is reported, and setting it repeats the items
        configure(client, contextSources=["diffusion"])  # no drafts: three sampled rows
        first = [i.insert_text for i in (await inline(client, invoked=True)).items]
        drawn = (await stats(client))["last"]["seed"]
        configure(client, seed=drawn)
        again = [[i.insert_text for i in (await inline(client, invoked=True)).items] for _ in range(2)]
        assert again == [first, first] and (await stats(client))["last"]["seed"] == drawn
        configure(client, seed=None, contextSources=None)

        configure(client, enabledLanguages=["javascript"])
        await inline(client)
        assert "disabled" in (await stats(client))["last"]["reason"]
        configure(client, enabledLanguages=None)

        configure(client, threads=2)
        await inline(client)
        assert (await stats(client))["threads"] == 2

        configure(client, syntaxRenoise=False, fallbackToLocal=False, workspaceIndexLines=0)
        await inline(client)
        live = (await stats(client))["engine"]
        assert live["syntax_renoise"] is False and live["fallback_to_local"] is False
        assert live["workspace_index_lines"] == 0  # what it does to a folder's files: tests/test_workspace.py

        # the backend switches live: a remote server that is not there fails the request (no fallback) ...
        configure(client, backend="openai", remote={"url": "http://127.0.0.1:9/v1", "model": "m", "timeoutMs": 500})
        await asyncio.sleep(0.2)
        from pygls.exceptions import JsonRpcException

        with pytest.raises(JsonRpcException):  # RequestFailed: the remote backend is unreachable
            await inline(client)
        # ... and back to the local model
        configure(client, backend="local")
        await asyncio.sleep(0.2)
        assert (await inline(client)).items is not None and (await stats(client))["engine"]["backend"] == "local"

        # rewrite settings: the number of Rewrite actions follows rewriteVariants
        async def rewrite_actions() -> int:
            acts = await client.text_document_code_action_async(lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(URI),
                range=lsp.Range(lsp.Position(1, 4), lsp.Position(1, 16)), context=lsp.CodeActionContext([])))
            return sum("Rewrite" in a.title for a in acts or [])

        configure(client, rewriteVariants=1)
        await asyncio.sleep(0.1)
        assert await rewrite_actions() == 1
        configure(client, rewriteVariants=3)
        await asyncio.sleep(0.1)
        assert await rewrite_actions() == 3

        # what cannot change live, and bad values, are said in the editor
        n = len(client.messages)
        configure(client, model="/elsewhere")
        assert any("model (needs a restart)" in m for m in await messages_since(client, n))
        n = len(client.messages)
        configure(client, syntaxRenoise="false")
        assert any("'syntaxRenoise'" in m for m in await messages_since(client, n))
    finally:
        await stop_daemon(client)
