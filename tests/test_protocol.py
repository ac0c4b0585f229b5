"""One test per pygls patch in dgcomplete/protocol.py, on the patch itself (the daemon-level behaviour is
covered in test_server, test_sync_faults, test_fuzz and test_daemon)."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from lsprotocol import types as lsp

from dgcomplete import protocol


def test_strict_integers():
    conv = protocol.strict_converter()
    ok = {"textDocument": {"uri": "file:///a"}, "position": {"line": 7, "character": 0},
          "context": {"triggerKind": 1}}
    assert conv.structure(ok, lsp.InlineCompletionParams).position.line == 7
    for bad in (7.9, "7", True, 2**70):
        with pytest.raises(Exception):  # noqa: B017 - cattrs wraps the TypeError/ValueError in its own group
            conv.structure({**ok, "position": {"line": bad, "character": 0}}, lsp.InlineCompletionParams)
    assert conv.structure({**ok, "context": {"triggerKind": 2}}, lsp.InlineCompletionParams).context.trigger_kind \
        is lsp.InlineCompletionTriggerKind.Automatic  # IntEnum fields still structure


def test_leaf_errors_say_what_was_wrong():
    conv = protocol.strict_converter()
    try:
        conv.structure({"textDocument": {"uri": "file:///a"}, "position": {"line": "x", "character": 0},
                        "context": {"triggerKind": 1}}, lsp.InlineCompletionParams)
    except Exception as e:  # noqa: BLE001
        assert "expected an integer" in protocol._leaf_errors(e)
    else:
        pytest.fail("structured a string line")


def test_bounded_input_skips_oversized_frames_without_reading_them_whole():
    body = b"x" * 5000
    raw = io.BytesIO(body + b"tail")
    bi = protocol.BoundedInput(raw, limit=1000)
    out = bi.read(5000)
    assert json.loads(out) == {protocol._OVERSIZED: 5000} and raw.read() == b"tail"
    assert protocol.BoundedInput(io.BytesIO(b"abc"), limit=10).read(3) == b"abc"
    assert protocol.BoundedInput(io.BytesIO(b"ab"), limit=1).read(5) == b""  # EOF inside a skipped frame


def test_bounded_stream_is_the_same_bound_on_sockets():
    async def go() -> tuple[bytes, bytes, bytes]:
        r = asyncio.StreamReader(limit=64)
        r.feed_data(b"Content-Length: 5000\r\n" + b"y" * 5000 + b"z" * 200 + b"\n")
        r.feed_eof()
        bs = protocol.BoundedStream(r, limit=1000)
        header = await bs.readline()
        skipped = await bs.readexactly(5000)
        long_line = await bs.readline()  # longer than the reader's buffer: a piece, not an exception
        return header, skipped, long_line

    header, skipped, piece = asyncio.run(go())
    assert header.startswith(b"Content-Length") and json.loads(skipped) == {protocol._OVERSIZED: 5000}
    assert piece and set(piece) <= set(b"z\n")
