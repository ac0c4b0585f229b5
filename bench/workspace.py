"""The held-out packages as workspaces on disk: each package's archive unpacked as a user's checkout would be.

The held-out splits (:mod:`bench.heldout`) store only the files their cases use. A user's editor has one or two
files open and the project folder as its workspace; this module unpacks every file of each split's packages
into ``data/heldout-ws/{SPLIT}/{package}/`` (the tarball's top folder stripped, as :func:`bench.heldout.source_files`
names paths; a ``.deb``'s file-system tree as is) and returns the folder each package's sources live in, so
``bench.context --workspace`` can hand it to the daemon as its workspace folder.

Nothing is filtered here: tests, docs and build output stay, as in a checkout; what the daemon indexes of a
folder is the daemon's decision.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
from pathlib import Path
from typing import Any

from . import ROOT, heldout
from .heldout import PACKAGES, Package, as_tar, fetch, member_path

WS = ROOT / "data" / "heldout-ws"
CACHE = heldout.CACHE  # where the archives are (bench.heldout fetches them there)


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name)


def unpack(p: Package, dest: Path) -> Path:
    """Unpack ``p`` under ``dest`` (case file ids ``{p.name}/{path}`` resolve to ``dest/path``); return the
    package's root: the folder holding every file its ``include`` pattern names (a Go module's or a crate's
    folder inside a ``.deb``), the archive's top otherwise."""
    deb = p.archive.endswith(".deb")
    included: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(as_tar(p, fetch(p, CACHE))), mode="r:*") as tar:
        for m in tar.getmembers():
            if not m.isfile() or (not deb and "/" not in m.name.removeprefix("./")):
                continue  # not a file, or a tarball's member outside its top folder
            path = member_path(p, m.name)
            if not path or path.startswith("/") or ".." in path.split("/"):
                continue
            f = tar.extractfile(m)
            if f is None:
                continue
            out = dest / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(f.read())
            if re.search(p.include, path):
                included.append(path)
    if not deb or not included:
        return dest
    top = os.path.commonpath([os.path.dirname(x) for x in included])
    return dest / (top[: -len("/src")] if top.endswith("/src") else top)  # a crate's folder, not its src/


# a split's packages with every source file renamed as bench.heldout.as_text names them (``+ ".txt"``): the
# workspace of a language without a grammar
AS_TEXT = "@text"


def materialize(split: str) -> dict[str, Path]:
    """Package name -> its workspace folder, for every package of ``split`` (unpacked once; kept); ``split +
    AS_TEXT``: with its source files renamed."""
    base = split.removesuffix(AS_TEXT)
    out = {}
    for p in (p for p in PACKAGES if p.split == base):
        dest = WS / split / _safe(p.name)
        mark = dest / ".dgcomplete-ws-root"
        if mark.exists():
            out[p.name] = dest / mark.read_text()
            continue
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        ws = unpack(p, dest)
        if split != base:
            for f in [f for f in dest.rglob("*") if f.is_file() and heldout.language_id(f.name)]:
                f.rename(f.with_name(f.name + heldout.AS_TEXT_SUFFIX))
        mark.write_text(str(ws.relative_to(dest)))
        out[p.name] = ws
    return out


def workspace_split(data: dict[str, Any]) -> str:
    """The name :func:`materialize` and :func:`case_path` take for a loaded split (``+ AS_TEXT`` for
    :func:`bench.heldout.as_text`'s)."""
    return data["split"] + (AS_TEXT if data.get("as_text") else "")


def case_path(split: str, fid: str) -> Path:
    """The file of case file id ``fid`` (``{package}/{path}``) in its unpacked package (``split + AS_TEXT``: the
    renamed one, where ``fid`` is as_text's)."""
    for p in PACKAGES:
        if p.split == split.removesuffix(AS_TEXT) and fid.startswith(p.name + "/"):
            return WS / split / _safe(p.name) / fid[len(p.name) + 1 :]
    raise KeyError(fid)
