"""The shared daemon (issue 18): one model, many LSP sessions over a Unix socket and TCP, relays that start it on
demand, sessions that end alone, status, idle exit, and the same frame limits as stdio.

Sessions are told apart by their documents: each client opens the *same* URI with a different number of lines
and asks for a position past its own end; the error names the line count of the document that session holds,
so a reply computed from another session's text (or sent to the wrong socket) cannot pass.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from .lsp_client import ROOT, DaemonProcess, RawDaemon, SocketClient, frame, free_port, proc_rss_kb, raw_frame

URI = "file:///shared/same.py"


def _text(i: int) -> str:
    return "x = 1\n" * (i + 1) + "y = "  # i + 2 lines


def _inline(line: int, col: int, uri: str = URI) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}, "context": {"triggerKind": 1}}


def _open(c: RawDaemon, i: int, uri: str = URI) -> None:
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                       "text": _text(i)}})


def _ask(c: RawDaemon, i: int, uri: str = URI) -> tuple[str, str]:
    """Two requests: one past the end of session i's document (an error naming its line count), one at its end."""
    return (c.request_nowait("textDocument/inlineCompletion", _inline(i + 2, 0, uri), msg_id="past"),
            c.request_nowait("textDocument/inlineCompletion", _inline(i + 1, 4, uri), msg_id="end"))


def _check(c: RawDaemon, i: int, ids: tuple[str, str], timeout: float = 120) -> None:
    past, end = (c.wait(x, timeout) for x in ids)
    assert past is not None and past.get("error", {}).get("code") == -32602, past
    assert f"({i + 2} lines)" in past["error"]["message"], (i, past)
    assert end is not None and "result" in end, end


@pytest.fixture(scope="module")
def runtime_env():
    d = tempfile.mkdtemp(prefix="dgrt-")  # short: a Unix socket path has ~100 bytes
    yield {**os.environ, "XDG_RUNTIME_DIR": d, "PYTHONPATH": str(ROOT)}
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def shared(tiny_model, runtime_env, tmp_path_factory):
    """One daemon on a Unix socket and on TCP, for the tests that only need it to be there."""
    sock = Path(runtime_env["XDG_RUNTIME_DIR"]) / "mod.sock"
    port = free_port()
    d = DaemonProcess("--model", str(tiny_model), "--threads", "1", "--socket", str(sock), "--tcp",
                      f"127.0.0.1:{port}", env=runtime_env, log=tmp_path_factory.mktemp("logs") / "daemon.log")
    d.wait_ready()
    d.unix, d.tcp = sock, ("127.0.0.1", port)
    yield d
    assert d.stop() == 0
    assert not sock.exists()  # removed on exit


def _client(shared, transport: str) -> SocketClient:
    c = SocketClient(shared.unix if transport == "unix" else shared.tcp)
    c.initialize()
    return c


def _status(sock: Path, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-m", "dgcomplete", "status", "--socket", str(sock), "--json"],
                         capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_socket_is_private(shared):
    assert (shared.unix.stat().st_mode & 0o777) == 0o600
    assert "unix:" in shared.ready_line and "tcp:127.0.0.1:" in shared.ready_line
    assert "model tiny" in shared.ready_line and "thread" in shared.ready_line and "loaded in" in shared.ready_line


@pytest.mark.parametrize("transport", ["unix", "tcp"])
@pytest.mark.parametrize("n", [2, 5])
def test_concurrent_clients_get_their_own_answers(shared, transport, n):
    """n sessions open the same URI with different texts and ask at once, with the same request ids."""
    clients = [_client(shared, transport) for _ in range(n)]
    try:
        for i, c in enumerate(clients):
            _open(c, i)
        asked = [_ask(c, i) for i, c in enumerate(clients)]  # all in flight together
        for i, c in enumerate(clients):
            _check(c, i, asked[i])
        for c in clients:
            assert not c.bad_frames and not c.null_id
    finally:
        for c in clients:
            assert c.close() == 0


def test_a_session_ending_ends_only_that_session(shared):
    """shutdown+exit, EOF and a reset each end one session; the others keep their documents; a later client
    initializes (the old `serve --tcp` refused a second initialize and stopped on one client's shutdown)."""
    stays = _client(shared, "tcp")
    _open(stays, 0)
    for how in ("exit", "eof", "reset"):
        c = _client(shared, "unix")
        _open(c, 3)
        _check(c, 3, _ask(c, 3))
        if how == "exit":
            assert "result" in c.request("shutdown")
            c.notify("exit")
            c.proc.wait(30)  # the daemon closes this connection only
            c.proc.sock.close()
        elif how == "eof":
            c.eof_close()
        else:
            c.close()
            _reset_mid_request(shared.unix)
        _check(stays, 0, _ask(stays, 0))  # still served, still its own text
    later = _client(shared, "tcp")
    _open(later, 1)
    _check(later, 1, _ask(later, 1))
    assert later.close() == 0 and stays.close() == 0
    assert shared.proc.poll() is None


def _reset_mid_request(address: Path) -> None:
    """A client that initializes, opens, asks, and resets the connection (RST) without reading a byte."""
    import socket
    import struct

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(address))
    s.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None,
                                                                                   "capabilities": {}}}))
    s.sendall(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    s.sendall(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": _text(5)}}}))
    s.sendall(frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/inlineCompletion", "params": _inline(6, 4)}))
    time.sleep(0.2)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def test_client_killed_mid_request(shared, runtime_env):
    """A relay process killed (SIGKILL) with requests in flight: its session ends, the model thread is not left
    working for it, the daemon serves the others."""
    relay = RawDaemon("--shared", "--socket", str(shared.unix), env=runtime_env)
    other = _client(shared, "unix")
    try:
        relay.initialize()
        for k in range(20):
            _open(relay, 1, uri=f"file:///killed/{k}.py")
            relay.request_nowait("textDocument/inlineCompletion", _inline(2, 4, f"file:///killed/{k}.py"))
        relay.proc.send_signal(signal.SIGKILL)
        relay.proc.wait(10)
        _open(other, 2)
        _check(other, 2, _ask(other, 2))
        deadline = time.monotonic() + 60
        while True:  # the daemon notices the closed socket and drops the session
            st = _status(shared.unix, runtime_env)
            drained = not st["queue"]["waiting"] and st["queue"]["running"] in (None, st["sessions"][0]["id"])
            if (len(st["sessions"]) == 1 and drained) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [s["documents"] for s in st["sessions"]] == [1], st["sessions"]
        assert not st["queue"]["waiting"], st["queue"]  # nothing left queued for the killed session
    finally:
        relay.kill()
        relay.close()
        other.close()


def test_oversized_frames_are_skipped_on_sockets_too(shared):
    """stdio skipped frames over 64 MiB; TCP read a 200 MiB frame whole (RSS 374 -> 775 MB). Same bound now."""
    from dgcomplete.protocol import MAX_MESSAGE_BYTES

    c = _client(shared, "tcp")
    try:
        before = proc_rss_kb(shared.proc.pid)
        c.write(raw_frame(b" " * (MAX_MESSAGE_BYTES + 1)))
        got = c.wait_null_id(1, 120)
        assert got and got[-1]["error"]["code"] == -32600 and "too large" in got[-1]["error"]["message"], got
        assert proc_rss_kb(shared.proc.pid) - before < 32 * 1024  # never held whole (it is 64 MiB)
        _open(c, 0)
        _check(c, 0, _ask(c, 0))
    finally:
        c.close()


def test_one_model_for_five_sessions_and_status(tiny_model, tmp_path):
    """RSS with five sessions (each with documents and completions) within 10 % of one session's; status lists
    them, with the model, memory and queue; with no session left the daemon exits (--idle-exit) and removes its
    socket."""
    rt = Path(tempfile.mkdtemp(prefix="dgrt-"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(rt), "PYTHONPATH": str(ROOT)}
    sock = rt / "rss.sock"
    d = DaemonProcess("--model", str(tiny_model), "--threads", "1", "--socket", str(sock), "--idle-exit", "0.05",
                      env=env, log=tmp_path / "daemon.log")
    clients: list[SocketClient] = []
    try:
        d.wait_ready()

        proj = tmp_path / "proj"  # sessions 0 and 1's workspace folder: read once, for those two only
        proj.mkdir()
        (proj / "lib.py").write_text("a = 1\nb = 2\n" * 10)

        def session(i: int) -> SocketClient:
            c = SocketClient(sock)
            c.initialize(folders=[proj.as_uri()] if i < 2 else None)
            for k in range(3):
                uri = f"{proj.as_uri()}/{i}_{k}.py" if i < 2 else f"file:///rss/{k}.py"
                _open(c, i, uri=uri)
                _check(c, i, _ask(c, i, uri=uri))
            return c

        clients.append(session(0))
        one = proc_rss_kb(d.proc.pid)
        clients += [session(i) for i in range(1, 5)]
        five = proc_rss_kb(d.proc.pid)
        print(f"daemon RSS: one session {one / 1024:.0f} MB, five sessions {five / 1024:.0f} MB")
        assert five <= 1.10 * one, (one, five)
        st, deadline = _status(sock, env), time.monotonic() + 30
        while sum(bool(s["workspace_lines"]) for s in st["sessions"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # the folder is read on a thread of its own
            st = _status(sock, env)
        assert len(st["sessions"]) == 5 and all(s["documents"] == 3 for s in st["sessions"]), st["sessions"]
        assert sorted(s["workspace_lines"] for s in st["sessions"]) == [0, 0, 0, 21, 21], st["sessions"]
        assert [(x["folder"], x["files"], x["lines"], x["sessions"]) for x in st["workspace_indexes"]] == [
            (str(proj), 1, 21, 2)]
        assert st["model"]["name"] == "tiny" and st["model"]["threads"] == 1 and st["memory"]["rss_mb"] > 0
        assert st["queue"]["jobs_done"] > 0 and st["idle_exit_min"] == 0.05
        human = subprocess.run([sys.executable, "-m", "dgcomplete", "status", "--socket", str(sock)],
                               capture_output=True, text=True, env=env, timeout=60, cwd=ROOT)
        assert human.returncode == 0 and "sessions: 5" in human.stdout and "MB resident" in human.stdout
        assert "21 workspace lines" in human.stdout and "held by 2 session(s)" in human.stdout
    finally:
        for c in clients:
            c.close()
    try:
        assert d.proc.wait(120) == 0  # idle exit, logged
        assert not sock.exists()
        assert "exiting (--idle-exit)" in (tmp_path / "daemon.log").read_text()
    finally:
        d.stop()
        shutil.rmtree(rt, ignore_errors=True)


def test_relays_start_one_daemon_when_started_at_once(tiny_model, tmp_path):
    """Three `serve --shared` relays start together with no daemon running: one daemon starts (the others wait
    on the lock and connect), each relay's session gets its own answers, relays stay small, LSP exit codes come
    through the relay, and the daemon exits idle afterwards."""
    rt = Path(tempfile.mkdtemp(prefix="dgrt-"))
    env = {"XDG_RUNTIME_DIR": str(rt), "PYTHONPATH": str(ROOT)}
    args = ("--shared", "--model", str(tiny_model), "--threads", "1", "--idle-exit", "0.05")
    relays = [RawDaemon(*args, env=env, stderr_path=tmp_path / f"relay{i}.log") for i in range(3)]
    try:
        for r in relays:
            r.initialize()
        for i, r in enumerate(relays):
            _open(r, i)
        asked = [_ask(r, i) for i, r in enumerate(relays)]
        for i, r in enumerate(relays):
            _check(r, i, asked[i])
        socks = list(rt.glob("dgcomplete*.sock"))
        assert len(socks) == 1, socks
        st = _status(socks[0], {**os.environ, **env})
        assert len(st["sessions"]) == 3, st["sessions"]
        rss = [proc_rss_kb(r.pid) for r in relays]
        print(f"relay RSS: {[round(x / 1024, 1) for x in rss]} MB; daemon {st['memory']['rss_mb']} MB")
        assert all(0 < x < 60 * 1024 for x in rss), rss
        daemon_pid = st["pid"]
        assert daemon_pid not in [r.pid for r in relays]
        relays[0].notify("exit")  # no shutdown: exit code 1 (LSP), and only this session ends
        assert relays[0].proc.wait(30) == 1
        assert relays[1].close() == 0
        _check(relays[2], 2, _ask(relays[2], 2))
        assert relays[2].close() == 0
        deadline = time.monotonic() + 120
        while socks[0].exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not socks[0].exists(), "the daemon did not exit when idle"
        log = Path(f"{socks[0]}.log").read_text()
        assert "exiting (--idle-exit)" in log  # the daemon logs next to its socket
    finally:
        for r in relays:
            r.kill()
            r.close()
        shutil.rmtree(rt, ignore_errors=True)


def test_a_daemon_that_cannot_start_is_an_lsp_error(tmp_path):
    """The editor gets an initialize error and one showMessage saying why, and the relay exits."""
    rt = Path(tempfile.mkdtemp(prefix="dgrt-"))
    too_long = rt / ("x" * 120 + ".sock")  # past AF_UNIX's path limit: the daemon cannot bind it
    r = RawDaemon("--shared", "--socket", str(too_long), "--start-timeout", "60",
                  env={"XDG_RUNTIME_DIR": str(rt), "PYTHONPATH": str(ROOT)}, stderr_path=tmp_path / "relay.log")
    try:
        got = r.request("initialize", {"processId": None, "capabilities": {}}, 90)
        assert got is not None and got["error"]["code"] == -32603, got
        assert "cannot start" in got["error"]["message"] and "cannot listen" in got["error"]["message"], got
        shown = [n for n in r.notifications if n["method"] == "window/showMessage"]
        assert len(shown) == 1 and shown[0]["params"]["type"] == 1
        r.notify("exit")
        assert r.proc.wait(30) == 1
    finally:
        r.kill()
        r.close()
        shutil.rmtree(rt, ignore_errors=True)


def test_make_serve_prints_ready_and_outlives_a_clients_shutdown(tiny_model, tmp_path):
    """`make serve` (`serve --tcp`): one human ready line; a client's shutdown+exit ends its session only."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "dgcomplete", "serve", "--tcp", f"127.0.0.1:{port}", "--model",
                             str(tiny_model), "--threads", "1"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=open(tmp_path / "serve.log", "wb"), text=True)  # noqa: SIM115
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith(f"dgcomplete ready on tcp:127.0.0.1:{port}: model tiny"), line
        assert "thread" in line and "loaded in" in line and "{" not in line
        for i in range(2):
            c = SocketClient(("127.0.0.1", port))
            c.initialize()
            _open(c, i)
            _check(c, i, _ask(c, i))
            assert c.close() == 0
            assert proc.poll() is None
        assert "{'threads'" not in (tmp_path / "serve.log").read_text()  # the ready log line is for people
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: a clean stop
        assert proc.wait(30) == 0


def test_fair_executor_takes_sessions_in_turn():
    """A session with many queued jobs does not hold back another session's one job."""
    import threading

    from dgcomplete.fair import LANE, FairExecutor

    ex = FairExecutor("test-fair")
    gate, order = threading.Event(), []
    first = ex.submit(gate.wait)  # holds the thread while the queue fills
    LANE.set("storm")
    futs = [ex.submit(order.append, f"storm{i}") for i in range(5)]
    LANE.set("editor")
    futs.append(ex.submit(order.append, "editor"))
    LANE.set("")
    gate.set()
    for f in [first, *futs]:
        f.result(30)
    assert order.index("editor") == 1, order  # right after the storm's first job, not after all five
    assert order == sorted(order, key=lambda x: (x != "storm0", x != "editor", x))
    hold, queued_ = threading.Event(), []
    ex.submit(hold.wait)
    queued_.append(ex.submit(order.append, "never"))
    ex.shutdown(wait=False, cancel_futures=True)  # what Engine.shutdown does: queued jobs are cancelled
    hold.set()
    assert queued_[0].cancelled() and "never" not in order


def test_a_daemon_whose_model_cannot_load_says_so_to_each_session(tmp_path):
    rt = Path(tempfile.mkdtemp(prefix="dgrt-"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(rt), "PYTHONPATH": str(ROOT)}
    sock = rt / "bad.sock"
    d = DaemonProcess("--model", str(tmp_path / "no-such-model"), "--socket", str(sock), env=env,
                      log=tmp_path / "daemon.log")
    try:
        assert "NO MODEL" in d.wait_ready() and "cannot load the model" in d.ready_line
        for _ in range(2):
            c = SocketClient(sock)
            c.initialize()
            _open(c, 0)
            r = c.request("textDocument/inlineCompletion", _inline(1, 4), 60)
            assert r is not None and r.get("result") == {"items": []}, r
            shown = [n for n in c.notifications if n["method"] == "window/showMessage"]
            assert len(shown) == 1 and "cannot load the model" in shown[0]["params"]["message"], shown
            assert c.close() == 0
        assert d.proc.poll() is None
    finally:
        assert d.stop() == 0
        shutil.rmtree(rt, ignore_errors=True)
