"""The session-persistence service a persistence plugin provides to the core.

A plugin offers one through the ``session_persistence`` hook; ``agents.resume`` loads
through it. Writing happens on the ``session_event``/``session_flush`` hooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dsh.session import SessionEvent

__all__ = ["SessionHeader", "SessionPersistence", "StoredSession"]


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """What ``list()`` returns: cheap to read for thousands of sessions."""

    id: str
    created: float
    updated: float
    turns: int
    title: str = ""


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A loaded (and, where needed, repaired) session log."""

    id: str
    created: float
    events: list[SessionEvent]
    meta: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class SessionPersistence(Protocol):
    async def list(self) -> list[SessionHeader]: ...

    async def load(self, session_id: str) -> StoredSession | None: ...

    async def delete(self, session_id: str) -> bool: ...
