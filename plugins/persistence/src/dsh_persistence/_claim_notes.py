"""Which store each claim of this process's agents was taken in, until the session's
writer is made: the writer writes there (``PersistencePlugin``). Imported when dsh loads
its plugins: it imports nothing else of the plugin's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from dsh.session import Session, SessionEvent
    from dsh_persistence._backend import SessionBackend
    from dsh_persistence._settings import PersistenceSettings

__all__ = ["ClaimNotes"]


class ClaimNotes:
    """The claims ``StoredSessions`` take and no writer has taken yet (their agents are
    being created), each with the settings and store of the service that took it (those
    of the harness that asked for it). The plugin makes a session's writer with its
    note, so it writes where the claim is, with those settings, whatever harness started
    (choosing another store or other settings) in between."""

    def __init__(self) -> None:
        self._notes: list[_Note] = []

    def note(
        self,
        settings: PersistenceSettings | None,
        backend: SessionBackend,
        session_id: str,
        events: Sequence[SessionEvent],
    ) -> object:
        """A claim of ``session_id`` (its log so far: ``events``, the session's own list,
        which the core claims with) is being taken in ``backend`` by a service for
        ``settings``: a note of it (None for no ``settings``: a service the plugin did
        not make, whose writer takes the store of sessions of no harness)."""
        if settings is None:
            return None
        note = _Note(session_id, events, settings, backend)
        self._notes.append(note)
        return note

    def drop(self, note: object) -> None:
        """Forget ``note``: its claim failed."""
        self._notes = [noted for noted in self._notes if noted is not note]

    def released(self, backend: SessionBackend, session_id: str) -> None:
        """Forget the note of the claim of ``session_id`` in ``backend``: let go."""
        self._notes = [
            note
            for note in self._notes
            if note.session_id != session_id or note.backend is not backend
        ]

    def take(self, session: Session) -> tuple[PersistenceSettings, SessionBackend] | None:
        """The settings and store of the claim of ``session``, its note forgotten (its
        writer's now); None when none is noted."""
        found = [note for note in self._notes if note.events is session.events] or [
            note for note in self._notes if note.session_id == session.id
        ]
        if not found:
            return None
        self.drop(found[-1])
        return found[-1].settings, found[-1].backend

    def backends(self) -> set[int]:
        """id() of each store a noted claim is in (kept open)."""
        return {id(note.backend) for note in self._notes}

    def clear(self) -> None:
        self._notes.clear()


class _Note(NamedTuple):
    session_id: str
    events: Sequence[SessionEvent]
    settings: PersistenceSettings
    backend: SessionBackend
