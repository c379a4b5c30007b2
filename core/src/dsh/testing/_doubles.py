"""Test doubles that are real plugins: event and error recorders, in-memory persistence."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from dsh._json import copied, decode, encode
from dsh._stored_meta import check_meta
from dsh.errors import DshError, SessionInUseError
from dsh.hookspecs import hookimpl
from dsh.persistence import SessionHeader, StoredSession
from dsh.session import SessionEvent

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dsh._calling import Dispatcher
    from dsh.agent import Agent
    from dsh.errors import HookError
    from dsh.plugins import PluginManager
    from dsh.session import Session

__all__ = ["EventRecorder", "InMemoryPersistence"]

# An event as the double stores it: the JSON array [type, seq, time, data]. The same
# JSON values as ``to_dict``'s object without its keys, taken in C (one tuple per
# event, no dict built in Python): the bench's turn (~19 events, one flush) costs
# ~25,000 instructions less than with the dicts (bench/README.md, nineteenth session).
_row = attrgetter("type", "seq", "time", "data")


class EventRecorder:
    """Records every ``session_event`` of every session, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, SessionEvent]] = []

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        self.events.append((session.id, event))

    def types(self, session_id: str | None = None) -> list[str]:
        return [e.type for sid, e in self.events if session_id in (None, sid)]


class ErrorRecorder:
    """Records every ``agent_error`` in ``errors`` (failures outside a turn's log, e.g.
    a flush) and, once it watches a plugin manager, every hook failure the manager
    reports in ``failures`` (an observer or notification impl that raised, a
    ``tools_execute`` impl failing closed), which otherwise reach only the log, and
    every interception hook failure that ended a turn (its ``turn/end`` error, code
    HOOK). ``scripted_harness`` and ``dsh_register`` make it watch theirs."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []
        self.failures: list[HookError] = []
        self._watched: list[Dispatcher] = []

    def watch(self, pm: PluginManager) -> None:
        """Record the failures ``pm`` reports from now on (still reported, logged, as
        before). Watching a manager twice records each failure once."""
        dispatcher = pm.dispatcher
        if any(watched is dispatcher for watched in self._watched):
            return
        self._watched.append(dispatcher)
        pm.turn_failures.append(self.failures.append)  # raised, not reported: not logged
        report = dispatcher.report

        def record(error: HookError) -> None:
            self.failures.append(error)
            report(error)

        dispatcher.report = record

    @hookimpl
    def agent_error(self, error: BaseException) -> None:
        self.errors.append(error)


class InMemoryPersistence:
    """A persistence plugin keeping sessions in memory, as JSON text like a real store.

    ``session_flush`` stores what the session logged since its last flush (one JSON
    document per flush: an array of events, each the array ``[type, seq, time,
    data]``); ``session_persistence`` serves ``agents.resume``. Share one instance
    between harnesses to test resume. A new agent on a session id stored with events is
    refused as it is created (``claim``), as dsh-persistence refuses it; so is one on a
    session another agent continues (in another harness sharing it) until that one is
    disposed: ``SessionInUseError``, as dsh-persistence raises. ``stored`` maps
    session ids to the committed logs, decoded when read (nothing is shared with a live
    session; changes to it are what a later ``load`` sees, and a session resumed from
    that ``load`` stores only what follows it). ``flushes`` counts successful flushes;
    set ``fail_flush`` to make flushes raise."""

    def __init__(self) -> None:
        self._stored: dict[str, StoredSession] = {}
        self._unread: dict[str, list[bytes]] = {}  # flushed since ``stored`` was read
        # per session id: the live session last flushed (None: the log was loaded since),
        # how many of its events are stored, and the time of the last one (a new
        # session object must continue it)
        self._written: dict[str, tuple[Session | None, int, float]] = {}
        self.flushes = 0
        self.fail_flush: Exception | None = None
        self._claims: set[str] = set()  # the sessions agents continue: reserved

    @property
    def stored(self) -> dict[str, StoredSession]:
        """The committed sessions by id (the last flushes are decoded on first read)."""
        for session_id, batches in self._unread.items():
            events = self._stored[session_id].events
            for batch in batches:
                events.extend([SessionEvent(*row) for row in decode(batch)])
        self._unread.clear()
        return self._stored

    @hookimpl
    def session_flush(self, session: Session) -> None:
        if self.fail_flush is not None:
            raise self.fail_flush
        log = session.events
        last = self._written.get(session.id)
        written, tail = (0, 0.0) if last is None else last[1:]
        if (
            written
            and last is not None
            and last[0] is not session
            and (len(log) < written or log[written - 1].time != tail)
        ):
            raise RuntimeError(
                f"session {session.id!r}: its log does not continue the {written} stored events"
            )
        if session.id not in self._stored:
            # stored as JSON, as a real store writes it: refused like theirs if it is not
            prefix = f"session {session.id!r}: its meta is not JSON ("
            check_meta(session.meta, prefix, "); nothing was written")
            meta = copied(session.meta)  # the live session's changes after: not stored
            self._stored[session.id] = StoredSession(session.id, session.created, [], meta)
        new = log[written:]
        if new:
            self._unread.setdefault(session.id, []).append(encode(list(map(_row, new))))
            tail = new[-1].time
        self._written[session.id] = (session, len(log), tail)
        self.flushes += 1

    @hookimpl
    def session_persistence(self) -> InMemoryPersistence:
        return self

    async def claim(self, session_id: str, events: Sequence[SessionEvent] = ()) -> None:
        """Reserve ``session_id`` for an agent until it is disposed (``agent_disposed``)
        or the start fails (``release``): refused while another agent holds it, and a new
        session (``events`` empty) under an id stored with events (its first flush would
        fail)."""
        if session_id in self._claims:
            raise SessionInUseError(
                f"session {session_id!r} is in use: another process or harness is "
                "continuing it (stored in memory); try again when it is done"
            )
        stored = self.stored.get(session_id)
        if not events and stored is not None and stored.events:
            raise DshError(
                f"session {session_id!r} is stored already (in memory): resume it, or give "
                "the new agent another session id"
            )
        self._claims.add(session_id)

    async def release(self, session_id: str) -> None:
        """Let ``session_id`` go (nothing if no agent holds it)."""
        self._claims.discard(session_id)

    @hookimpl
    def agent_disposed(self, agent: Agent) -> None:
        self._claims.discard(agent.session.id)

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
        text = encode(list(map(_row, stored.events)))
        events = [SessionEvent(*row) for row in decode(text)]
        # a session resumed from these stores what follows them (``stored`` may have been
        # changed by hand since this store last flushed it): the core's closers of a
        # last turn left open, which it logs on the resumed session, then its turns
        tail = events[-1].time if events else 0.0
        self._written[session_id] = (None, len(events), tail)
        return StoredSession(stored.id, stored.created, events, copied(stored.meta))

    async def delete(self, session_id: str) -> bool:
        self._written.pop(session_id, None)
        return self.stored.pop(session_id, None) is not None
