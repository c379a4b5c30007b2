"""What a database backend (SQLite, PostgreSQL) stores for one append, worked out once
from the batch (the event rows and what the session's row keeps about them), and what
it makes of the rows it reads back (the log with its open turn closed, or
``SessionCorruptError``, and where it ends)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from dsh.persistence import StoredSession
from dsh_persistence._backend import (
    LoadedSession,
    SessionInfo,
    StoredTail,
    check_contiguous,
    encode_events,
)
from dsh_persistence._errors import PersistenceError, SessionCorruptError
from dsh_persistence._lossless import NotLossless, loads
from dsh_persistence._records import check_repaired, close_turn, missing, read_log
from dsh_persistence._row_values import number, text

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = [
    "Batch",
    "LoadedTail",
    "LoadedTails",
    "batch_of",
    "event_places",
    "loaded_of",
    "read_rows",
]


class Batch(NamedTuple):
    #: The seq of the batch's first event (the seqs are contiguous).
    first: int
    #: (session id, seq, JSON line) per event.
    rows: list[tuple[str, int, str]]
    #: The highest turn number a ``turn/start`` of the batch names (0: none).
    turns: int
    #: Whether the batch starts or ends a turn (the workspace of the session's last
    #: turn is recorded with it).
    ran: bool
    #: The session's meta as JSON, non-ASCII escaped (a lone surrogate could not be
    #: stored as UTF-8).
    meta: str


def batch_of(info: SessionInfo, events: Sequence[SessionEvent]) -> Batch:
    """The rows of ``events`` (at least one); ``SessionConflictError`` when their seqs are
    not contiguous, ``UnencodableEventError`` or ``PersistenceError`` (the meta) when
    something is not JSON: nothing is written then."""
    check_contiguous(events, info.id)
    first = events[0].seq
    lines = encode_events(events, info.id)
    rows = [(info.id, first + n, line.decode()) for n, line in enumerate(lines)]
    turns = max(
        (e.data["turn"] for e in events if e.type == "turn/start" and "turn" in e.data),
        default=0,
    )
    ran = any(e.type in ("turn/start", "turn/end") for e in events)
    try:
        meta = json.dumps(info.meta, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise PersistenceError(
            f"session {info.id!r}: its meta is not JSON ({exc}); nothing was written"
        ) from None
    return Batch(first, rows, turns, ran, meta)


def event_places(location: str, session_id: str) -> Callable[[int], str]:
    """Where event #N of ``session_id`` is in the database at ``location``, for messages."""

    def where(index: int) -> str:
        return f"{location}: session {session_id!r}, event #{index}"

    return where


def read_rows(
    records: list[str], location: str, session_id: str, next_seq: int
) -> tuple[list[SessionEvent], list[SessionEvent]]:
    """The stored log of ``records`` (the event lines, in seq order) of the session in
    the database at ``location`` whose row says ``next_seq`` events are stored, and the
    events that close its open turn. A transaction lands whole, so a crash leaves
    neither a bad row nor fewer rows than ``next_seq``: anything else is damage,
    ``SessionCorruptError`` (never repaired: the rows stay as found)."""
    where = event_places(location, session_id)
    events, _ = read_log(records, where, lost_pages=False, kind=str)
    if len(events) != next_seq:
        found = len(events)
        if found < next_seq:
            end = f"the log ends at event #{found - 1}" if found else "no event is stored"
            what = f"{missing(found, next_seq)} ({end})"
        else:
            what = f"{found - next_seq} event(s) from seq {next_seq} on are stored beyond it"
        raise SessionCorruptError(
            f"{location}: session {session_id!r}: its sessions row says {next_seq} events "
            f"are stored, but {what}; a transaction lands whole, so this is damage, not a "
            "cut-off write. The session is corrupt and was left as it is."
        )
    closers = close_turn(events)
    check_repaired(events, closers, where)
    return events, closers


class LoadedTail(NamedTuple):
    """Where a ``load`` found a stored log ending, kept for a resume's claim and first
    write (each would read the whole log again): reused only while the session's row
    still says ``next_seq`` and its last stored line is still ``line`` (one indexed
    read). The count alone is not enough: a session deleted and stored again under its
    id, as long, by another process would pass for the one loaded."""

    next_seq: int
    line: object  # the stored value of the last event row (None: no rows)
    tail: StoredTail

    def holds(self, next_seq: int, line: object) -> bool:
        """Whether a log stored as ``next_seq`` ending with ``line`` is the one loaded."""
        return next_seq == self.next_seq and line == self.line


class LoadedTails(dict[str, LoadedTail]):
    """The ends the last loads found, by session id (at most ``KEPT``), for a resume's
    claim and first write; an append or delete of a session drops its own."""

    KEPT = 64

    def keep(self, session_id: str, end: LoadedTail) -> None:
        if len(self) >= self.KEPT:
            self.clear()
        self[session_id] = end

    def reused(
        self, session_id: str, next_seq: int, last_line: Callable[[], object]
    ) -> StoredTail | None:
        """The tail kept for ``session_id`` while the log stored (``next_seq``, and
        ``last_line()``, read only when one is kept) is still the one loaded; else None,
        and it is dropped."""
        end = self.get(session_id)
        if end is not None and end.holds(next_seq, last_line()):
            return end.tail
        self.pop(session_id, None)
        return None


def loaded_of(
    session_id: str, created: object, meta: object, records: list[str], location: str, next_seq: int
) -> tuple[LoadedSession, LoadedTail]:
    """The stored log of ``records`` (``read_rows``) with its turn left open closed, and
    where it ends (a resume's claim and first write reuse that while nothing is stored
    since)."""
    time = number(created, location, session_id, "created")  # SQLite holds any type
    stored_meta = text(meta, location, session_id, "meta")
    events, closers = read_rows(records, location, session_id, next_seq)
    tail = StoredTail(len(events), events[-1] if events else None)
    try:
        data = loads(stored_meta)
    except NotLossless as exc:  # NaN, 1e400: no meta dsh stores, so damage
        raise SessionCorruptError(
            f"{location}: session {session_id!r}: its stored meta is damaged: {exc}"
        ) from None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise SessionCorruptError(
            f"{location}: session {session_id!r}: its stored meta is not a JSON object"
        )
    stored = StoredSession(session_id, time, events + closers, data)
    end = LoadedTail(next_seq, records[-1] if records else None, tail)
    return LoadedSession(stored, len(events), 0, len(closers)), end
