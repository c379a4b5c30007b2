"""What a database backend (SQLite, PostgreSQL) stores for one append, worked out once
from the batch (the event rows and what the session's row keeps about them), and what
it makes of the rows it reads back (the repaired log and where it ends)."""

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
from dsh_persistence._records import close_turn, read_log

if TYPE_CHECKING:
    from dsh.session import SessionEvent

__all__ = ["Batch", "batch_of", "loaded_of"]


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


def loaded_of(
    session_id: str, created: float, meta: str, records: list[str], location: str
) -> tuple[LoadedSession, StoredTail]:
    """The stored log of ``records`` (the event lines, in seq order) of the session in
    the database at ``location``, repaired by ``read_log`` + ``close_turn``, and where
    its readable part ends (a resume's claim and first write reuse that while nothing
    is stored since)."""
    events, ignored = read_log(records, event_places(location, session_id))
    tail = StoredTail(len(events), events[-1] if events else None)
    closers = close_turn(events)
    try:
        data = json.loads(meta)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise SessionCorruptError(
            f"{location}: session {session_id!r}: its stored meta is not a JSON object"
        )
    stored = StoredSession(session_id, float(created), events + closers, data)
    return LoadedSession(stored, len(events), ignored, len(closers)), tail
