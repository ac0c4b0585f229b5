"""Retrieval from the workspace folders' files on disk: what is read, what an open document hides, what a change
on disk or in the settings does — in the index, and through the real daemon."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import attrs
import pytest
from lsprotocol import types as lsp

from dgcomplete import folders
from dgcomplete.context import ContextIndex, Folder
from dgcomplete.syntax.languages import kin

from .conftest import start_daemon, stop_daemon
from .test_server import inline_params, open_doc, stats

OTHER = "def load(path):\n    data = read(path)\n    rows = data.split_rows(';')\n    return rows\n"


def drafted(idx: ContextIndex, uri: str, text: str, off: int) -> list[str]:
    return [d.text for d in idx.drafts(uri, "python", text, off, before=True)]


def test_folder_files_are_drafts_for_documents_in_that_folder_only(tmp_path):
    root = tmp_path / "proj"
    idx = ContextIndex()
    idx.set_roots([str(root)])
    idx.add_folder(str(root), "python", Folder([(str(root / "a.py"), OTHER, 0.0)]), 1000)
    text = "def other(p):\n    data = read(p)\n    \n"
    off = text.index("    \n") + 4
    here = (root / "pkg" / "b.py").as_uri()
    idx.open(here, "python", text)
    assert "rows = data.split_rows(';')" in drafted(idx, here, text, off)
    # a document outside the folder, or another language, gets nothing from it
    idx.open("file:///elsewhere/c.py", "python", text)
    assert drafted(idx, "file:///elsewhere/c.py", text, off) == []
    assert idx.drafts(here, "javascript", text, off) == []
    # the workspace source switched off: nothing from the folder either
    assert idx.drafts(here, "python", text, off, workspace=False) == []


def test_an_open_document_hides_its_file_until_it_closes(tmp_path):
    """The file on disk may hold the very line being typed (the saved version): while its document is open,
    only the document speaks for it, for every document of the session; once closed, the file as saved does
    again. The folder's index itself keeps the file: another session sharing it (a shared daemon) has it."""
    root = tmp_path / "proj"
    idx = ContextIndex()
    idx.set_roots([str(root)])
    a = root / "a.py"
    folder = Folder([(str(a), OTHER, 0.0), (str(root / "c.py"), "import os\nimport sys\n", 0.0)])
    idx.add_folder(str(root), "python", folder, 1000)
    text = "def load(path):\n    data = read(path)\n    \n"
    off = text.index("    \n") + 4
    b = (root / "b.py").as_uri()
    idx.open(b, "python", "import os\n")
    idx.open(a.as_uri(), "python", text)
    hidden = idx._hidden[str(a)][1]  # built as it opens, not on the first keystroke; a re-open (a full sync)
    idx.open(a.as_uri(), "python", text)  # keeps it
    assert idx._hidden[str(a)][1] is hidden
    assert "rows = data.split_rows(';')" not in drafted(idx, a.as_uri(), text, off)
    assert "rows = data.split_rows(';')" not in drafted(idx, b, text, off)
    assert drafted(idx, b, "import os\n", len("import os\n")) == ["import sys"]  # c.py still speaks
    idx.put_file(str(a), OTHER + "more = 1\n")  # changed on disk while open: still hidden
    assert "rows = data.split_rows(';')" not in drafted(idx, a.as_uri(), text, off)
    # a second session on the same folder shares its index, and has not opened a.py
    other = ContextIndex()
    other.set_roots([str(root)])
    other.add_folder(str(root), "python", folder, 1000)
    other.open(b, "python", text)
    assert "rows = data.split_rows(';')" in drafted(other, b, text, off)
    idx.close(a.as_uri())
    assert "rows = data.split_rows(';')" in drafted(idx, b, text, off)
    assert str(a) in folder.files and folder.total == 9


def test_changes_on_disk_and_the_line_budget(tmp_path):
    root = tmp_path / "proj"
    idx = ContextIndex()
    idx.set_roots([str(root)])
    a = str(root / "a.py")
    idx.add_folder(str(root), "python", Folder([(a, OTHER, 0.0)]), 1000)
    folder = idx.folders[(str(root), "python")]
    assert folder.total == 5 and "data = read(path)" in folder.maps.succ
    idx.put_file(a, "x = 1\ny = 2\n")  # changed: its old lines are gone from the maps
    assert "data = read(path)" not in folder.maps.succ and folder.maps.succ["x = 1"] == {"y = 2": 1}
    idx.put_file(a, None)  # deleted
    assert folder.total == 0 and not folder.maps.succ and not folder.maps.pred and not folder.maps.by_head
    # the least recently used (folder, language) leaves first when the budget is exceeded; 0 drops all
    idx.add_folder(str(root), "python", Folder([(a, OTHER, 0.0)]), 1000)
    idx.add_folder(str(root), "javascript", Folder([(str(root / "x.js"), "let a = 1;\n" * 8, 0.0)]), 10)
    assert list(idx.folders) == [(str(root), "javascript")]
    idx.trim(0)
    assert not idx.folders
    # the home folder or a file-system root is no project: not read
    idx.set_roots([str(Path.home()), "/", str(root)])
    assert idx.roots == [str(root)]
    # a folder no longer in the workspace leaves with its files
    idx.add_folder(str(root), "python", Folder([(a, OTHER, 0.0)]), 1000)
    idx.set_roots([str(tmp_path / "other")])
    assert not idx.folders


def test_files_of_a_folder_nearest_first_within_the_budget(tmp_path):
    root = tmp_path / "proj"
    for rel, text in {"pkg/sub/near.py": "a = 1\n", "pkg/mid.py": "b = 2\n", "far/x/y/far.py": "c = 3\n" * 4,
                      "pkg/sub/min.min.js": "x", "node_modules/dep/mod.py": "d = 4\n", ".hidden/h.py": "e = 5\n",
                      "pkg/big.py": "#" * (folders.MAX_FILE_BYTES + 1), "pkg/latin1.py": None,
                      "pkg/sub/open.py": "f = 6\n", "pkg/notes.txt": "g\n"}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"\xe9t\xe9 = 1\n") if text is None else p.write_text(text)
    near = str(root / "pkg" / "sub" / "open.py")
    got = folders.files_of(str(root), "python", near, 100)
    assert [Path(p).relative_to(root).as_posix() for p, _, _ in got] == ["pkg/sub/near.py", "pkg/sub/open.py",
                                                                     "pkg/mid.py", "far/x/y/far.py"]
    # the budget stops the reading after the file that reaches it
    assert len(folders.files_of(str(root), "python", near, 3)) == 2  # 2 lines each


def test_a_git_work_tree_is_listed_as_git_sees_it(tmp_path):
    root = tmp_path / "repo"
    (root / "gen").mkdir(parents=True)
    (root / "build").mkdir()
    (root / "a.py").write_text("a = 1\n")
    (root / "gen" / "out.py").write_text("g = 1\n")  # ignored by .gitignore
    (root / "build" / "keep.py").write_text("k = 1\n")  # tracked, though a walk would skip build/
    (root / ".gitignore").write_text("gen/\n")
    git = ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "a.py", ".gitignore", "build/keep.py"], check=True)
    (root / "new.py").write_text("n = 1\n")  # untracked, not ignored
    got = sorted(Path(p).relative_to(root).as_posix() for p, _, _ in folders.files_of(str(root), "python", None, 100))
    assert got == ["a.py", "build/keep.py", "new.py"]


def test_uri_to_path():
    assert folders.uri_to_path("file:///home/u/my%20proj/a.py") == "/home/u/my proj/a.py"
    assert folders.uri_to_path("untitled:Untitled-1") is None
    assert folders.uri_to_path("file://server/share/a.py") is None  # a UNC host: not this machine's file
    assert folders.uri_to_path(Path("/tmp/a b/c.py").as_uri()) == "/tmp/a b/c.py"  # as editors send it


async def _indexed(client, timeout: float = 30.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ws = (await stats(client)).get("workspace") or {}
        if ws.get("indexed") and not ws["scanning"]:
            return ws["indexed"]
        await asyncio.sleep(0.05)
    raise AssertionError("the workspace folder was not read")


@pytest.mark.asyncio
async def test_a_vue_page_reads_the_folder_files_of_its_script_language(tiny_model, tmp_path):
    """A Vue component opens: besides the folder's ``.vue`` files (read as text), the files of its script's
    language are read, and a line of a ``.ts`` file there is offered inside the script (Invoked)."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "load.ts").write_text(
        "export function load(path: string) {\n  const data = read(path);\n  const rows = data.splitRows(';');\n"
        "  return rows;\n}\n")
    client = await start_daemon("--model", str(tiny_model), "--threads", "1", folders=[root])
    try:
        uri = (root / "src" / "Table.vue").as_uri()
        text = ('<template>\n  <table />\n</template>\n\n<script setup lang="ts">\nfunction show(p: string) {\n'
                "  const data = read(p);\n  \n}\n</script>\n")
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
            uri=uri, language_id="vue", version=1, text=text)))
        indexed = await _indexed(client)
        assert ("javascript", 1) in [(x["language"], x["files"]) for x in indexed], indexed  # the JS/TS family
        res = await client.text_document_inline_completion_async(inline_params(7, 2, uri, invoked=True))
        assert "const rows = data.splitRows(';');" in [i.insert_text.strip() for i in res.items]
    finally:
        await stop_daemon(client)


@pytest.mark.asyncio
async def test_the_daemon_reads_its_workspace_folder(tiny_model, tmp_path):
    """Through the daemon: the folder's files of the document's language are read when it opens, their lines are
    offered (Invoked), a file changed on disk is read again when the client says so, and workspaceIndexLines 0
    lets them go."""
    root = tmp_path / "proj"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "io.py").write_text(OTHER)
    (root / "lib" / "skip.js").write_text("let rows = 1;\n")
    registrations: list[lsp.RegistrationParams] = []
    client = await start_daemon("--model", str(tiny_model), "--threads", "1", folders=[root],
                                capabilities=_watching_capabilities(),
                                features={lsp.CLIENT_REGISTER_CAPABILITY: lambda ls, p: registrations.append(p)})
    try:
        uri = (root / "main.py").as_uri()
        text = "def main(p):\n    data = read(p)\n    \n"
        open_doc(client, text, uri=uri)
        indexed = await _indexed(client)
        assert [(x["language"], x["files"], x["lines"]) for x in indexed] == [("python", 1, 5)]
        res = await client.text_document_inline_completion_async(inline_params(2, 4, uri, invoked=True))
        assert "rows = data.split_rows(';')" in [i.insert_text.strip() for i in res.items]
        # the client was asked to watch source files
        globs = [w["globPattern"] for r in registrations for reg in r.registrations
                 for w in reg.register_options["watchers"]]
        assert globs and "py" in globs[0] and "json" not in globs[0]
        # the file changes on disk and the client's watcher says so
        (root / "lib" / "io.py").write_text(OTHER.replace("split_rows(';')", "split_lines()"))
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent((root / "lib" / "io.py").as_uri(), lsp.FileChangeType.Changed)]))
        for _ in range(100):
            res = await client.text_document_inline_completion_async(inline_params(2, 4, uri, invoked=True))
            if "rows = data.split_lines()" in [i.insert_text.strip() for i in res.items]:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the changed file was not read again")
        assert "rows = data.split_rows(';')" not in [i.insert_text.strip() for i in res.items]
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"dgcomplete": {"workspaceIndexLines": 0}}))
        assert (await stats(client))["workspace"]["indexed"] == []
        res = await client.text_document_inline_completion_async(inline_params(2, 4, uri, invoked=True))
        assert "rows = data.split_lines()" not in [i.insert_text.strip() for i in res.items]
        # a budget again reads the folder again; the workspace source switched off lets it go
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"dgcomplete": {"workspaceIndexLines": 1000}}))
        assert [x["files"] for x in await _indexed(client)] == [1]
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            settings={"dgcomplete": {"contextSources": ["diffusion", "document"]}}))
        assert (await stats(client))["workspace"]["indexed"] == []
    finally:
        await stop_daemon(client)


async def test_files_of_a_language_without_a_grammar_are_watched_once_one_opens(tiny_model, tmp_path):
    """A Kotlin document opens: the client is asked to watch `.kt` files too (the grammars' extensions were asked
    for at start-up), and a `.kt` file of the folder changed on disk is read again when the client says so."""
    root = tmp_path / "proj"
    (root / "lib").mkdir(parents=True)
    kt = root / "lib" / "Io.kt"
    kt.write_text("fun load(p: String) {\n    val data = read(p)\n    val rows = data.splitRows(';')\n}\n")
    registrations: list[lsp.RegistrationParams] = []
    client = await start_daemon("--model", str(tiny_model), "--threads", "1", folders=[root],
                                capabilities=_watching_capabilities(),
                                features={lsp.CLIENT_REGISTER_CAPABILITY: lambda ls, p: registrations.append(p)})

    def globs() -> list[str]:
        return [w["globPattern"] for r in registrations for reg in r.registrations
                for w in reg.register_options["watchers"]]

    async def lines() -> list[str]:
        res = await client.text_document_inline_completion_async(inline_params(2, 4, uri, invoked=True))
        return [i.insert_text.strip() for i in res.items]

    try:
        uri = (root / "Main.kt").as_uri()
        open_doc(client, "fun main(p: String) {\n    val data = read(p)\n    \n}\n", uri=uri, lang="kotlin")
        assert [(x["language"], x["files"]) for x in await _indexed(client)] == [("text:.kt", 1)]
        assert "val rows = data.splitRows(';')" in await lines()
        for _ in range(100):
            if "**/*.{kt}" in globs():
                break
            await asyncio.sleep(0.05)
        assert "**/*.{kt}" in globs() and "kt" not in globs()[0], globs()  # asked once, after the grammars'
        open_doc(client, "val x = 1\n", uri=(root / "Other.kt").as_uri(), lang="kotlin")
        await stats(client)
        assert globs().count("**/*.{kt}") == 1
        kt.write_text(kt.read_text().replace("splitRows(';')", "splitLines()"))
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(kt.as_uri(), lsp.FileChangeType.Changed)]))
        for _ in range(100):
            if "val rows = data.splitLines()" in await lines():
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the changed .kt file was not read again")
    finally:
        await stop_daemon(client)


def _watching_capabilities() -> lsp.ClientCapabilities:
    from .conftest import inline_capabilities

    caps = inline_capabilities()
    caps.workspace = lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        workspace_folders=True)
    return caps


def test_changes_on_disk_are_found_without_a_file_watcher(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (root / name).write_text(f"{name[0]} = 1\n")
        os.utime(root / name, ns=(0, 2 * 10**9))  # written long ago: not racy (see below)
    seen = set(folders.listed(str(root), "python"))
    known = {p: m for p, _, m in folders.files_of(str(root), "python", None, 3)}  # the budget left c.py out
    assert sorted(Path(p).name for p in known) == ["a.py", "b.py"]
    assert folders.changes(str(root), "python", known, seen, 100) == ([], sorted(seen))
    os.utime(root / "a.py", ns=(0, 10**9))  # modified
    (root / "b.py").unlink()  # gone
    (root / "d.py").write_text("d = 1\nd = 2\n")  # new
    got = sorted((Path(p).name, t) for p, t, _ in folders.changes(str(root), "python", known, seen, 100)[0])
    assert got == [("a.py", "a = 1\n"), ("b.py", None), ("d.py", "d = 1\nd = 2\n")]  # not c.py: not new
    # no room left: a new file is not read, a changed one is
    assert [Path(p).name for p, t, _ in folders.changes(str(root), "python", known, seen, 0)[0]
            if t is not None] == ["a.py"]


def test_a_file_read_right_after_a_write_is_read_again(tmp_path):
    """A second write within the file system's time resolution keeps the modification time: a file modified
    within RACY_S of its read counts as unknown, so the next look reads it again whatever its time says."""
    root = tmp_path / "proj"
    root.mkdir()
    a = root / "a.py"
    a.write_text("a = 1\n")
    (path, text, m), = folders.files_of(str(root), "python", None, 100)
    assert text == "a = 1\n" and m == -1.0
    stamp = os.stat(a).st_mtime_ns
    a.write_text("a = 2\n")
    os.utime(a, ns=(stamp, stamp))  # the same time as when it was read: only the racy mark finds the change
    (_, text, _), = folders.changes(str(root), "python", {path: m}, {path}, 100)[0]
    assert text == "a = 2\n"
    settled = stamp - 10 * 10**9
    os.utime(a, ns=(settled, settled))
    assert folders.read(path) == ("a = 2\n", os.stat(a).st_mtime)  # long enough ago: its time is kept
    assert folders.changes(str(root), "python", {path: os.stat(a).st_mtime}, {path}, 100)[0] == []


def test_the_engine_looks_again_when_a_document_opens_later(tiny_mask_model, tmp_path, monkeypatch):
    """A client that does not watch files (Neovim on Linux): a document opening in a folder read more than
    REFRESH_S ago makes the engine read what changed on disk since."""
    from dgcomplete import engine as engine_mod
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    root = tmp_path / "proj"
    root.mkdir()
    (root / "io.py").write_text(OTHER)

    async def scenario() -> tuple[dict, dict]:
        eng = Engine(load_model(tiny_mask_model), threads=1)
        eng.set_folders([str(root)])
        eng.open((root / "main.py").as_uri(), "x = 1\n", 1, "python")

        async def settled() -> dict:
            for _ in range(200):
                await asyncio.sleep(0.02)
                if not eng._scanning:
                    return eng.context.folders[(str(root), "python")].files
            raise AssertionError("still reading")

        first = dict(await settled())
        (root / "new.py").write_text("y = 2\n")
        eng.open((root / "other.py").as_uri(), "z = 3\n", 1, "python")  # within REFRESH_S: nothing read
        assert dict(await settled()) == first
        monkeypatch.setattr(engine_mod, "REFRESH_S", 0.0)
        eng.open((root / "third.py").as_uri(), "w = 4\n", 1, "python")
        return first, dict(await settled())

    first, later = asyncio.run(scenario())
    assert [Path(p).name for p in first] == ["io.py"]
    assert sorted(Path(p).name for p in later) == ["io.py", "new.py"]


def test_a_language_without_a_grammar_reads_its_files_by_extension(tiny_mask_model, tmp_path):
    """Kotlin has no grammar: a .kt document in the folder reads the folder's other .kt files (found by their
    extension), not its other files."""
    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    root = tmp_path / "proj"
    root.mkdir()
    (root / "Repo.kt").write_text("val count = items.size\nlogger.info(count)\n")
    (root / "notes.txt").write_text("val count = items.size\nprint(count)\n")
    (root / "util.py").write_text("val count = items.size\nreturn count\n")
    assert [Path(p).name for p in folders.listed(str(root), "text:.kt")] == ["Repo.kt"]

    async def scenario() -> list[str]:
        eng = Engine(load_model(tiny_mask_model), threads=1)
        eng.settings.min_confidence = 0.0
        eng.set_folders([str(root)])
        text = "val count = items.size\n"
        eng.open((root / "Main.kt").as_uri(), text, 1, "kotlin")
        for _ in range(200):
            await asyncio.sleep(0.02)
            if not eng._scanning and (str(root), "text:.kt") in eng.context.folders:
                break
        comp = await eng.complete((root / "Main.kt").as_uri(), len(text), seed=0, n=3)
        return [c.text for c in comp.items]

    got = asyncio.run(scenario())
    assert "logger.info(count)" in got and "print(count)" not in got and "return count" not in got


def test_related_languages_read_each_other(tmp_path):
    """A TypeScript document reads JavaScript files and documents (and the other way round); C++ reads C headers."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.js").write_text("const a = load(x);\nconst b = a.rows();\n")
    (root / "src" / "api.h").write_text("int open_db(const char *path);\nint close_db(void);\n")
    (root / "src" / "notes.py").write_text("const a = load(x);\nnot = 'this'\n")
    assert [Path(p).name for p in folders.listed(str(root), "typescript")] == ["util.js"]
    assert [Path(p).name for p in folders.listed(str(root), "cpp")] == ["api.h"]
    idx = ContextIndex()
    idx.set_roots([str(root)])
    idx.add_folder(str(root), kin("tsx"), Folder(folders.files_of(str(root), "tsx", None, 100)), 1000)
    text = "const a = load(x);\n"
    uri = (root / "src" / "view.tsx").as_uri()
    idx.open(uri, "tsx", text)
    assert [d.text for d in idx.drafts(uri, "tsx", text, len(text))] == ["const b = a.rows();"]
    # an open JavaScript document serves a TypeScript one too
    other = "file:///elsewhere/o.js"
    idx.open(other, "javascript", "const a = load(x);\nconst c = 2;\n")
    assert "const c = 2;" in [d.text for d in idx.drafts("file:///elsewhere/t.ts", "typescript", text, len(text))]


def test_sessions_of_a_daemon_share_one_index_of_a_folder(tiny_mask_model, tmp_path, monkeypatch):
    """Two sessions on one folder (two editor windows on one project): the folder is read once and indexed once,
    while each session hides only the files it has open; a session with another line budget reads its own, and
    the index goes with the last session holding it."""
    import gc

    from dgcomplete.engine import Engine
    from dgcomplete.model import load_model

    root = tmp_path / "proj"
    root.mkdir()
    (root / "io.py").write_text(OTHER)
    reads: list[str] = []
    files_of = folders.files_of
    monkeypatch.setattr(folders, "files_of", lambda root, *a, **k: reads.append(root) or files_of(root, *a, **k))
    key = (str(root), "python")
    text = "def load(path):\n    data = read(path)\n    \n"
    off = text.index("    \n") + 4

    async def settled(*engines: Engine) -> None:
        for _ in range(200):
            await asyncio.sleep(0.02)
            if not any(e._scanning for e in engines):
                return
        raise AssertionError("still reading")

    async def scenario() -> None:
        base = Engine(load_model(tiny_mask_model), threads=1)
        one, two, three = base.view(), base.view(), base.view()
        for e in (one, two, three):
            e.set_folders([str(root)])
        one.open((root / "a.py").as_uri(), "x = 1\n", 1, "python")
        two.open((root / "b.py").as_uri(), "y = 2\n", 1, "python")  # while the first read is in flight
        await settled(one, two)
        assert reads == [str(root)]
        assert one.context.folders[key] is two.context.folders[key]
        # one session opens io.py: hidden from it, not from the other
        one.open((root / "io.py").as_uri(), text, 1, "python")
        two.open((root / "c.py").as_uri(), text, 1, "python")
        assert "rows = data.split_rows(';')" not in drafted(one.context, (root / "io.py").as_uri(), text, off)
        assert "rows = data.split_rows(';')" in drafted(two.context, (root / "c.py").as_uri(), text, off)
        # saved while open in one: that session leaves it to its document; the other reads it again
        (root / "io.py").write_text(OTHER.replace("split_rows(';')", "split_lines()"))
        one.files_changed([(str(root / "io.py"), False)])
        assert one._rereading == 0
        two.files_changed([(str(root / "io.py"), False)])
        for _ in range(200):
            await asyncio.sleep(0.02)
            if not two._rereading:
                break
        assert "rows = data.split_lines()" in drafted(two.context, (root / "c.py").as_uri(), text, off)
        assert "rows = data.split_lines()" not in drafted(one.context, (root / "io.py").as_uri(), text, off)
        # the same change reported again (a third session's watcher): its time is known, it is not read again
        shared = two.context.folders[key]
        stamp = os.stat(root / "io.py").st_mtime_ns - 10 * 10**9
        os.utime(root / "io.py", ns=(stamp, stamp))  # settled: not racy
        shared.mtimes[str(root / "io.py")] = os.stat(root / "io.py").st_mtime
        lines = shared.files[str(root / "io.py")]
        two.files_changed([(str(root / "io.py"), False)])
        for _ in range(200):
            await asyncio.sleep(0.02)
            if not two._rereading:
                break
        assert shared.files[str(root / "io.py")] is lines
        del shared, lines  # (the test's own references would keep the index alive below)
        # another budget: its own read
        three.settings = attrs.evolve(three.settings, workspace_index_lines=7)
        three.open((root / "d.py").as_uri(), "z = 3\n", 1, "python")
        await settled(three)
        assert reads == [str(root)] * 2 and three.context.folders[key] is not one.context.folders[key]
        # the shared index lives as long as a session holds it
        one.context.trim(0)
        gc.collect()
        assert (str(root), "python", 50_000) in base._store
        two.context.trim(0)
        gc.collect()
        assert (str(root), "python", 50_000) not in base._store

    asyncio.run(scenario())


def _notebook(cells: list[tuple[str, str]], lang: str = "python", outputs: int = 0) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": k, "metadata": {}, "source": t.splitlines(keepends=True),
                                  "outputs": [{"data": {"image/png": "A" * outputs}}] if k == "code" else []}
                                 for k, t in cells],
                       "metadata": {"kernelspec": {"language": lang, "name": lang}}, "nbformat": 4})


def test_the_notebooks_of_a_folder_are_read_as_python(tmp_path):
    """A notebook's code cells (not its outputs, not its Markdown) are Python of the folder: drafts for a .py file
    and for a notebook open in that folder, which hides its own file as an open file does."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "explore.ipynb").write_text(_notebook(
        [("code", "%matplotlib inline\nimport pandas as pd\n"), ("markdown", "# Load\nframe = not code"),
         ("code", "frame = pd.read_csv(path)\nsummary = frame.describe()\n")], outputs=400_000))
    (root / "r.ipynb").write_text(_notebook([("code", "frame <- read.csv(path)\n")], lang="R"))
    (root / "broken.ipynb").write_text("{not json")
    (root / "app.js").write_text("const a = 1;\n")
    assert [Path(p).name for p in folders.listed(str(root), "python")] == ["broken.ipynb", "explore.ipynb", "r.ipynb"]
    assert folders.listed(str(root), "javascript") == [str(root / "app.js")]
    got = {Path(p).name: t for p, t, _ in folders.files_of(str(root), "python", None, 1000)}
    assert got == {"explore.ipynb": "#matplotlib inline\nimport pandas as pd\n\n\nframe = pd.read_csv(path)\n"
                                    "summary = frame.describe()\n"}  # 400 KB of plots left aside
    assert ".ipynb" in folders.WATCHED_EXTENSIONS
    idx = ContextIndex()
    idx.set_roots([str(root)])
    idx.add_folder(str(root), "python", Folder(folders.files_of(str(root), "python", None, 1000)), 1000)
    text = "frame = pd.read_csv(path)\n"
    py = (root / "report.py").as_uri()
    idx.open(py, "python", text)
    assert drafted(idx, py, text, len(text)) == ["summary = frame.describe()"]
    assert idx.folder_of(str(root / "explore.ipynb")) is idx.folders[(str(root), "python")]  # a save re-reads it
    # the notebook itself, open (its cells laid out under its own file's path): its file on disk is hidden
    from dgcomplete.notebooks import key_of

    mine = key_of((root / "explore.ipynb").as_uri(), "python")
    idx.open(mine, "python", text)
    assert "summary = frame.describe()" not in drafted(idx, mine, text, len(text))
    assert "summary = frame.describe()" not in drafted(idx, py, text, len(text))
    idx.close(mine)
    assert drafted(idx, py, text, len(text)) == ["summary = frame.describe()"]
