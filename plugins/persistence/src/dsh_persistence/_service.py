"""The ``SessionPersistence`` service: list, load and delete stored sessions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio.to_thread

from dsh_persistence._errors import PersistenceError, SessionInUseError

if TYPE_CHECKING:
    from dsh.persistence import SessionHeader, StoredSession
    from dsh_persistence._backend import LoadedSession, SessionBackend

__all__ = ["StoredSessions"]


class StoredSessions:
    """What ``session_persistence`` returns: a backend's sessions, read in worker threads
    so the event loop never waits on the disk. ``agents.resume`` loads through it."""

    def __init__(
        self, backend: SessionBackend, is_live: Callable[[str], bool] = lambda _: False
    ) -> None:
        self.backend = backend
        self._is_live = is_live

    async def list(self) -> list[SessionHeader]:
        """Every stored session, most recently updated first (headers only)."""
        headers = await anyio.to_thread.run_sync(self.backend.headers)
        return sorted(headers, key=lambda header: (-header.updated, header.id))

    async def load(self, session_id: str) -> StoredSession | None:
        """The stored log, with an interrupted last turn closed (see ``inspect``)."""
        loaded = await self.inspect(session_id)
        return None if loaded is None else loaded.stored

    async def inspect(self, session_id: str) -> LoadedSession | None:
        """``load`` with what loading did: events kept, records ignored, closers added."""
        return await anyio.to_thread.run_sync(self.backend.load, session_id)

    async def claim(self, session_id: str) -> None:
        """Reserve a stored session for an agent of this process (``agents.resume`` calls
        this first); ``SessionInUseError`` when another process continues it. The claim
        ends when the agent is disposed (or ``release``)."""
        if not await anyio.to_thread.run_sync(self.backend.claim, session_id):
            raise SessionInUseError(
                f"session {session_id!r} is in use: another process is continuing it (in "
                f"{self.backend.location}); try again when it is done"
            )

    async def release(self, session_id: str) -> None:
        """End the claim of ``session_id`` (nothing if this process holds none)."""
        await anyio.to_thread.run_sync(self.backend.release, session_id)

    async def delete(self, session_id: str) -> bool:
        """Remove a stored session; refuses one that an agent of this process is writing."""
        if self._is_live(session_id):
            raise PersistenceError(
                f"session {session_id!r} is live in this process; dispose its agent first"
            )
        return await anyio.to_thread.run_sync(self.backend.delete, session_id)
