"""Shared fixtures: a tiny real checkpoint on disk and a real daemon over stdio (pytest-lsp)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_asyncio
import torch
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from .helpers import make_tiny_checkpoint

# In-process model tests run on one thread: on a busy 2-core machine a second OpenMP thread can make a tiny
# model's matmuls many times slower (the daemon measures its own choice at start-up).
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def tiny_mask_model(tmp_path_factory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("models") / "tiny-mask", mode="mask", seed=1)


def inline_capabilities(progress: bool = True) -> lsp.ClientCapabilities:
    """What VS Code / Neovim 0.12 declare (pytest-lsp's snapshots lack inline completion)."""
    return lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            inline_completion=lsp.InlineCompletionClientCapabilities(dynamic_registration=False),
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
        ),
        window=lsp.WindowClientCapabilities(work_done_progress=progress),
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    )


async def start_daemon(*args: str, init_options: dict | None = None, progress: bool = True,
                       capabilities: lsp.ClientCapabilities | None = None,
                       folders: list[Path] | None = None, features: dict | None = None) -> LanguageClient:
    """``folders``: the workspace folders named in initialize; ``features``: client-side handlers (method ->
    function) for requests the server sends, registered before initialize."""
    config = ClientServerConfig(server_command=[sys.executable, "-m", "dgcomplete", "serve", *args])
    client = await config.start()
    for method, handler in (features or {}).items():
        client.feature(method)(handler)
    client.init_result = await client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities or inline_capabilities(progress),
        # the gate off unless a test sets it: plumbing tests run random weights, whose guesses it would hide
        initialization_options={"minConfidence": 0, **(init_options or {})},
        process_id=None,
        workspace_folders=[lsp.WorkspaceFolder(f.as_uri(), f.name) for f in folders] if folders else None,
    ))
    return client


async def stop_daemon(client: LanguageClient) -> None:
    try:
        await client.shutdown_session()
    except Exception:
        pass
    await client.stop()


@pytest_asyncio.fixture
async def daemon(tiny_model):
    client = await start_daemon("--model", str(tiny_model), "--threads", "1")
    yield client
    await stop_daemon(client)


@pytest_asyncio.fixture
async def embedded_daemon():
    """The daemon on the embedded (shipped) model, with a small Python file open."""
    text = "def is_even(n):\n    return n % 2 == \n\n\ndef area(w, h):\n    return w * h\n"
    client = await start_daemon("--threads", "1")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem("file:///work/even.py", "python", 1, text)))
    yield client, text, 1, len("    return n % 2 == ")
    await stop_daemon(client)
