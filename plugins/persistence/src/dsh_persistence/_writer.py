"""Writes one live session to a backend: what is new in its log, in order, once.

``Session.events`` is append-only with ``seq`` equal to the index, so the log itself is
the buffer: a write stores ``session.events[written:]``. ``written`` starts at the
stored next seq (read from the backend on the first write, after checking that the
live log really continues the stored one), so the first seq written always equals the
stored next seq: re-appending after a resume cannot happen. Closers that loading added
to a resumed log are simply the first events written.

A write that fails stores nothing out of order: the next write starts again at the
first event not stored. An event that cannot be encoded (``UnencodableEventError``) is
such a failure: the events before it are stored, and it and everything after it stay
in the log, retried (and reported) by every later write. A failed ``sync`` (a database
removed since the events were written) also makes the next write ask the backend where
the stored log ends, so it stores the whole log again rather than nothing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from dsh_persistence._backend import SessionBackend, SessionInfo, StoredTail
from dsh_persistence._errors import SessionConflictError, UnencodableEventError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dsh.session import Session, SessionEvent
    from dsh_persistence._settings import PersistenceSettings

__all__ = ["SessionWriter", "continues"]


class SessionWriter:
    """Called from worker threads; a lock keeps one write per session at a time."""

    __slots__ = (
        "_durable",
        "_info",
        "_lock",
        "_written",
        "backend",
        "cwd",
        "due",
        "durable_checkpoint",
        "queued_due",
        "scheduled",
        "session",
        "settings",
    )

    def __init__(
        self,
        backend: SessionBackend,
        session: Session,
        settings: PersistenceSettings | None = None,
        cwd: str | None = None,
    ) -> None:
        self.backend = backend
        self.session = session
        #: The agent's workspace, recorded as where the session runs (None: the process's).
        self.cwd = cwd
        #: The settings in force when the session was first written: it keeps them (and
        #: its store), whatever another harness of the process configures later.
        self.settings = settings
        #: A checkpoint is asked for and no write has begun since (set by the event
        #: loop thread; a write clears it before it reads the log, so a checkpoint asked
        #: for before a write began is stored by that write).
        self.scheduled = False
        #: When the checkpoint asked for is due, and whether it must reach the disk.
        self.due = 0.0
        self.durable_checkpoint = False
        #: When the checkpoint thread's job for this writer comes up (None: no job);
        #: read and set under the thread's lock.
        self.queued_due: float | None = None
        self._lock = threading.Lock()
        self._written: int | None = None  # None: the stored end is not known yet
        self._durable = 0
        self._info: SessionInfo | None = None

    def write(self, durable: bool) -> None:
        """Store every event logged so far; ``durable``: return once it is on disk."""
        # before reading the log: a checkpoint asked for after this still runs
        self.scheduled = False
        with self._lock:
            events = self.session.events
            end = len(events)
            written = self._attach() if self._written is None else self._written
            if written < end:
                if self._info is None:
                    self._info = SessionInfo.of(self.session, self.cwd)
                info = self._info
                try:
                    self.backend.append(info, events[written:end], durable=durable)
                except UnencodableEventError as exc:
                    self._written = None
                    if written < exc.seq < end:  # store what comes before it
                        self.backend.append(info, events[written : exc.seq], durable=durable)
                        self._stored(exc.seq, durable)
                    raise
                except BaseException:
                    self._written = None  # part may be stored: ask the backend next time
                    raise
                self._stored(end, durable)
            elif durable and self._durable < written:
                try:
                    self.backend.sync(self.session.id)
                except BaseException:
                    # the store may have lost what was written (a database removed):
                    # ask the backend next time, which then stores what it lacks
                    self._written = None
                    raise
                self._durable = written

    def _stored(self, end: int, durable: bool) -> None:
        self._written = end
        if durable:
            self._durable = end

    def _attach(self) -> int:
        """The stored next seq, after checking that the live log continues it."""
        tail = self.backend.tail(self.session.id)
        stored = 0 if tail is None else tail.next_seq
        events = self.session.events
        if tail is not None and not continues(events, tail):
            raise SessionConflictError(
                f"session {self.session.id!r} is stored in {self.backend.location} with other "
                f"events ({stored} stored, {len(events)} live, and the last stored one does "
                "not match): two sessions share this id, or another process or harness "
                "appended to it. Nothing was written; resume the stored session, or use "
                "another id."
            )
        self._written = self._durable = stored
        return stored


def continues(events: Sequence[SessionEvent], tail: StoredTail) -> bool:
    """Whether the log ``events`` continues the stored one that ends at ``tail``: it
    holds the stored events (the last one compared), and perhaps more."""
    stored, last = tail.next_seq, tail.last
    if not stored:
        return True
    if stored > len(events) or last is None:
        return False
    live = events[stored - 1]
    return (live.type, live.seq, live.time) == (last.type, last.seq, last.time)
