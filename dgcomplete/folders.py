"""The workspace's files on disk, for retrieval: which files of a language a folder holds, nearest first.

An editor usually has one or two files open, but the project around them already says much of what the user is
about to type: on the held-out test split, a user with one file open is shown 45 right suggestions of 77, and 57 of
87 once the package is the workspace folder (``bench/results/workspace_folders_ab.json``). The engine therefore
indexes the files of the workspace folders the client names, one language at a time, the first time a document of
that language opens. This module only lists and reads them (no LSP, no index): :mod:`dgcomplete.context` keeps what
they contribute.

Which files: ``git ls-files --cached --others --exclude-standard`` where the folder is a git work tree (what the
repository tracks, plus new files it does not ignore), else a walk that skips hidden folders and the usual
dependency and build folders. Files over ``MAX_FILE_BYTES``, minified or not UTF-8 are skipped; the nearest to
the document that asked come first, until the line budget is spent. Jupyter notebooks count as Python: their
code cells are read as a notebook's layout reads them (:mod:`dgcomplete.notebooks`), outputs left aside.
"""

from __future__ import annotations

import os
import subprocess
import time
from urllib.parse import unquote, urlsplit

from .notebooks import layouts, read_ipynb
from .syntax.languages import EXTENSIONS, keyed_by_extension, kin, language_for, text_language

MAX_FILE_BYTES = 256_000  # bigger files are data or generated code
MAX_NOTEBOOK_BYTES = 8_000_000  # a notebook's outputs (plots) are most of its bytes; its code is read from it
NOTEBOOK = ".ipynb"
MAX_LISTED = 50_000  # paths considered per folder: bounds the walk of a huge tree
GIT_TIMEOUT_S = 10.0
WALK_S = 3.0  # a folder walk stops listing after this long (a slow or huge tree)
RACY_S = 2.0  # a file modified this recently when read is read again at the next look (see read())
# languages whose files are read (a JSON document gains nothing from lock files and fixtures)
LANGUAGES = frozenset(lang for lang in EXTENSIONS.values() if lang != "json")
WATCHED_EXTENSIONS = tuple(sorted([*(ext for ext, lang in EXTENSIONS.items() if lang in LANGUAGES), NOTEBOOK]))
SKIP_DIRS = frozenset({
    "node_modules", "bower_components", "__pycache__", "site-packages", "venv", "env", "dist", "build", "out",
    "target", "vendor", "third_party", "_build", "coverage", "htmlcov",
})


def uri_to_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI (None for any other scheme): what ties an open document to its file."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or (parts.netloc not in ("", "localhost")):
        return None
    path = unquote(parts.path)
    if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]
    return os.path.normpath(path)


def _git_files(root: str) -> list[str] | None:
    """The folder's files as git sees them (tracked and untracked-not-ignored), or None if it is no work tree."""
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, timeout=GIT_TIMEOUT_S, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = out.decode("utf-8", "surrogateescape").split("\0")
    return [os.path.join(root, n) for n in names[:MAX_LISTED] if n]


def _walk_files(root: str) -> list[str]:
    out: list[str] = []
    deadline = time.monotonic() + WALK_S
    for d, dirs, files in os.walk(root):  # symlinked folders are not followed
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x not in SKIP_DIRS)
        out += (os.path.join(d, f) for f in sorted(files))
        if len(out) >= MAX_LISTED or time.monotonic() > deadline:
            return out[:MAX_LISTED]
    return out


def too_broad(root: str) -> bool:
    """A file-system root or the home folder is no project (an editor opened on a lone file may name one)."""
    root = os.path.normpath(root)
    return os.path.dirname(root) == root or root == os.path.normpath(os.path.expanduser("~"))


def _distance(a: list[str], b: list[str]) -> int:
    """Folder steps from one directory (as path components) to another."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return len(a) + len(b) - 2 * n


def listable(lang: str) -> bool:
    """Whether a folder's files of ``lang`` can be listed and read: a grammar language's (but JSON, data), or a
    language without a grammar keyed by its extension."""
    return lang in LANGUAGES or keyed_by_extension(lang)


def language_of(path: str) -> str | None:
    """The language of a file as the folder index reads it: by extension, a notebook's code as Python, and a file
    of a language without a grammar by the key its documents have (:func:`text_language`)."""
    if path.endswith(NOTEBOOK):
        return "python"
    return language_for(None, path) or text_language(None, path)


def notebook_code(raw: str) -> str | None:
    """A Jupyter notebook's Python code cells in order, laid out as an open notebook is (magics as comments),
    empty cells left out; None for a notebook of another language or no notebook at all."""
    cells = read_ipynb(raw)
    if cells is None or (cells and cells[0].language_id != "python"):
        return None
    lay = layouts("", [c for c in cells if c.text.strip()]).get("python")
    text = lay.text if lay is not None else ""  # a notebook without code: read, and empty
    return text if len(text) <= MAX_FILE_BYTES else None


def read_text(path: str) -> str | None:
    """The file's text if it is a readable, UTF-8, not minified source file within the size bound (of a
    notebook: its code cells)."""
    book = path.endswith(NOTEBOOK)
    try:
        if os.path.getsize(path) > (MAX_NOTEBOOK_BYTES if book else MAX_FILE_BYTES) or not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if book:
        return notebook_code(text)
    if "\0" in text or path.endswith((".min.js", ".min.mjs")):
        return None
    return text


def read(path: str) -> tuple[str | None, float]:
    """(:func:`read_text`, the modification time it was read at). A file modified within RACY_S of the read is
    given time -1, so the next look reads it again: a second write within the file system's time resolution
    (a second or two on some) would leave the same time, and the change would go unseen (git's "racily clean")."""
    m = _mtime(path)
    text = read_text(path)
    return text, (-1.0 if m >= 0 and time.time() - m < RACY_S else m)


def read_changed(path: str, known: float | None) -> tuple[str | None, float] | None:
    """:func:`read`, unless the file's modification time is still ``known`` (as read before, not racy): None."""
    if known is not None and known >= 0 and _mtime(path) == known:
        return None
    return read(path)


def listed(root: str, lang: str) -> list[str]:
    """The files of ``lang``'s family (:func:`kin`) under ``root`` (normalized paths), as git or the walk lists them."""
    names = _git_files(root)
    if names is None:
        names = _walk_files(root)
    family = kin(lang)
    return [os.path.normpath(p) for p in names if kin(language_of(p)) == family]


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return -1.0


def files_of(root: str, lang: str, near: str | None, max_lines: int,
             names: list[str] | None = None) -> list[tuple[str, str, float]]:
    """(path, text, modification time) of the files of ``lang`` under ``root`` (or of ``names``, :func:`listed`
    before), the nearest to ``near`` (a file's path) first, until ``max_lines`` lines are read. Files open in the
    editor are read too: the sessions of a shared daemon share what is read, and each hides its own open files."""
    mine = list(listed(root, lang) if names is None else names)
    if near is not None:
        here = os.path.dirname(near).split(os.sep)
        mine.sort(key=lambda p: (_distance(os.path.dirname(p).split(os.sep), here), p))
    out, lines = [], 0
    for p in mine:
        if lines >= max_lines:
            break
        text, m = read(p)
        if text is None:
            continue
        out.append((p, text, m))
        lines += text.count("\n") + 1
    return out


def changes(root: str, lang: str, known: dict[str, float], seen: set[str],
            room: int) -> tuple[list[tuple[str, str | None, float]], list[str]]:
    """What changed on disk since ``known`` (path -> modification time of the files read) was read from a listing
    of ``seen``: (path, text, time) of files modified, and of files new since that listing while ``room`` lines last;
    (path, None, 0) of files gone. Also the new listing. For clients that do not watch files (Neovim on Linux):
    the engine asks now and then."""
    names = listed(root, lang)
    out: list[tuple[str, str | None, float]] = [(p, None, 0.0) for p in set(known) - set(names)]
    for p in names:
        if p not in known and (p in seen or room <= 0):  # left out by the budget when it was listed, or no room
            continue
        got = read_changed(p, known.get(p))
        if got is None:
            continue
        text, m = got
        out.append((p, text, m))
        if p not in known and text is not None:
            room -= text.count("\n") + 1
    return out, names
