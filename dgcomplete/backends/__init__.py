"""Backends that turn an InfillRequest into candidates: the resident model, or a remote server.

Every backend has the same shape (see :class:`InfillBackend`), so the engine can swap them and fall
back from one to another.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..types import CancelToken, InfillRequest, InfillResult
from .remote import RemoteBackend, RemoteConfig, RemoteError


@runtime_checkable
class InfillBackend(Protocol):
    name: str

    async def infill(self, req: InfillRequest, cancel: CancelToken | None = None) -> InfillResult: ...

    async def aclose(self) -> None: ...


__all__ = ["InfillBackend", "RemoteBackend", "RemoteConfig", "RemoteError"]
