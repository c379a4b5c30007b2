"""``SessionWriter``: what is new in the live log is stored in order, once, and only on
top of the very log it continues (docs/persistence.md, "What is written, and when")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from dsh.session import Session, SessionEvent
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
    PersistenceSettings,
    SessionConflictError,
    SessionInfo,
    open_backend,
)
from dsh_persistence._writer import SessionWriter
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


class FailsHalfway(JsonlBackend):
    """Stores the first two events of its next batch, then fails (a disk that filled up
    in the middle of a write)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.fail_next = False

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        if self.fail_next and len(events) > 2:
            self.fail_next = False
            super().append(info, events[:2], durable=durable)
            raise PersistenceError("s.jsonl: cannot append to the session file: No space left")
        super().append(info, events, durable=durable)


def test_a_write_that_stored_part_of_its_batch_is_continued_where_the_store_ends(
    tmp_path: Path,
) -> None:
    """A failed write may have stored part of its events: the next write asks the
    store where the log ends and stores the rest, each event once, in order."""
    log = LogBuilder()
    log.turn("one")
    session = Session("s", log.events[:5])
    backend = FailsHalfway(tmp_path)
    writer = SessionWriter(backend, session)
    writer.write(True)

    session.events.extend(log.events[5:])
    backend.fail_next = True
    with pytest.raises(PersistenceError, match="No space left"):
        writer.write(True)
    writer.write(True)  # the next flush: no conflict, no duplicate

    loaded = JsonlBackend(tmp_path).load("s")
    assert loaded is not None
    assert (loaded.kept, loaded.dropped, loaded.closers) == (len(log.events), 0, 0)
    assert [e.to_dict() for e in loaded.stored.events] == [e.to_dict() for e in log.events]


def test_a_new_session_whose_events_only_look_like_the_stored_ones_is_refused(
    settings: PersistenceSettings,
) -> None:
    """A session created under a stored id is refused even when its last event has the
    stored one's type and seq: it is another session (another time), and merging the two
    logs would alter what was stored. Nothing is written."""
    stored = LogBuilder(start=1_700_000_000.0)
    stored.turn("the stored session", calls=())
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("s", 1.0), stored.events, durable=True)
        other = LogBuilder(start=1_800_000_000.0)
        other.turn("another session, same id", calls=())
        other.turn("and more")
        writer = SessionWriter(backend, Session("s", other.events))
        share = "two sessions share this id, or another process or harness appended to it"
        with pytest.raises(SessionConflictError, match=share):
            writer.write(True)
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None
    assert [e.to_dict() for e in loaded.stored.events] == [e.to_dict() for e in stored.events]


def test_a_new_session_under_an_id_stored_with_one_event_is_refused(
    settings: PersistenceSettings,
) -> None:
    """The check that the live log continues the stored one applies from the first
    stored event on: a session stored with a single event is not appended to by
    another session that happens to share its id."""
    backend = open_backend(settings)
    try:
        backend.append(
            SessionInfo("s", 1.0), [SessionEvent("note", 0, 1.0, {"by": "first"})], durable=True
        )
        other = Session("s", [SessionEvent("note", 0, 2.0, {"by": "second"})])
        other.append("test/note", {"by": "second"})
        with pytest.raises(SessionConflictError, match="two sessions share this id"):
            SessionWriter(backend, other).write(True)
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None
    assert [e.data for e in loaded.stored.events] == [{"by": "first"}]
