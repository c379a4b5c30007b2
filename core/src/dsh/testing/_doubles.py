"""Test doubles that are real plugins: an event recorder and in-memory persistence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh._json import decode
from dsh.hookspecs import hookimpl
from dsh.persistence import SessionHeader, StoredSession
from dsh.session import SessionEvent

if TYPE_CHECKING:
    from dsh.session import Session

__all__ = ["EventRecorder", "InMemoryPersistence"]


class EventRecorder:
    """Records every ``session_event`` of every session, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, SessionEvent]] = []

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        self.events.append((session.id, event))

    def types(self, session_id: str | None = None) -> list[str]:
        return [e.type for sid, e in self.events if session_id in (None, sid)]


class InMemoryPersistence:
    """A persistence plugin keeping sessions in memory: buffers on ``session_event``,
    commits on ``session_flush``, serves ``agents.resume``. Share one instance between
    harnesses to test resume. ``flushes`` counts successful flushes; set ``fail_flush``
    to make flushes raise."""

    def __init__(self) -> None:
        self.stored: dict[str, StoredSession] = {}
        self.pending: dict[str, list[SessionEvent]] = {}
        self.flushes = 0
        self.fail_flush: Exception | None = None

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        self.pending.setdefault(session.id, []).append(event)

    @hookimpl
    def session_flush(self, session: Session) -> None:
        if self.fail_flush is not None:
            raise self.fail_flush
        events = self.pending.pop(session.id, [])
        stored = self.stored.get(session.id)
        if stored is None:
            stored = StoredSession(session.id, session.created, [], dict(session.meta))
            self.stored[session.id] = stored
        if events and events[0].seq != len(stored.events):
            raise RuntimeError(
                f"session {session.id!r}: would append seq {events[0].seq} after "
                f"{len(stored.events)} stored events"
            )
        stored.events.extend(map(_round_trip, events))
        self.flushes += 1

    @hookimpl
    def session_persistence(self) -> InMemoryPersistence:
        return self

    async def list(self) -> list[SessionHeader]:
        headers = []
        for stored in self.stored.values():
            turns = sum(1 for e in stored.events if e.type == "turn/start")
            updated = stored.events[-1].time if stored.events else stored.created
            headers.append(SessionHeader(stored.id, stored.created, updated, turns))
        return headers

    async def load(self, session_id: str) -> StoredSession | None:
        stored = self.stored.get(session_id)
        if stored is None:
            return None
        events = list(map(_round_trip, stored.events))
        return StoredSession(stored.id, stored.created, events, dict(stored.meta))

    async def delete(self, session_id: str) -> bool:
        return self.stored.pop(session_id, None) is not None


def _round_trip(event: SessionEvent) -> SessionEvent:
    """A copy through the JSON a real store writes and reads (nothing is shared)."""
    return SessionEvent.from_dict(decode(event.to_json_bytes()))
