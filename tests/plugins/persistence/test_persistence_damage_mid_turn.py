"""A damaged record in the middle of a turn left open by a crash, intact records after it.

An append never leaves a whole line after a torn one (the torn tail is cut off before
anything is written), so a bad record followed by an event whose seq fits its place is
damage, not the cut-off tail of a crashed write. Before, it was read as that tail:
the intact records after it (tool calls that ran, their results) were dropped on load,
their calls closed as "outcome unknown" or "not run" (so the model might run them
again), and the next append cut them off the store for good. Now loading refuses it as
``SessionCorruptError`` naming the bad record and the intact one after it, and the
store stays as found (docs/persistence.md, "Loading: the repair rules", rule 3).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_persistence_m_records import load_error, place, raw_text, replace, store

from dsh.session import SessionEvent
from dsh_persistence import (
    LoadedSession,
    PersistenceSettings,
    PostgresBackend,
    SessionCorruptError,
    SessionInfo,
    open_backend,
)
from dsh_persistence._records import read_log
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def open_turn() -> list[SessionEvent]:
    """A finished turn, then one cut off by a crash after its tool results were stored."""
    log = LogBuilder()
    log.turn("one", calls=())
    log.turn("two", calls=(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})))
    last_result = max(e.seq for e in log.events if e.type == "tool/result")
    return log.events[: last_result + 1]


def load(settings: PersistenceSettings) -> LoadedSession:
    backend = open_backend(settings)
    try:
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None
    return loaded


def bad_seq(events: list[SessionEvent]) -> int:
    """The open turn's ``assistant/message``, which named the tool calls."""
    return max(e.seq for e in events if e.type == "assistant/message")


@pytest.mark.parametrize("damage", ["{garbled", "", '{"seq": 1}'])
def test_a_bad_record_in_an_open_turn_with_intact_events_after_it_is_corruption(
    settings: PersistenceSettings, damage: str
) -> None:
    events = open_turn()
    bad = bad_seq(events)
    store(settings, events)
    replace(settings, bad, damage)
    before = raw_text(settings)

    message = load_error(settings)
    assert place(settings, bad) + ":" in message.split(";", 1)[0]
    assert place(settings, bad + 1) + "," in message.split(";", 1)[1]
    assert "corrupt" in message
    assert raw_text(settings) == before  # nothing cut off: the evidence stays as found


def test_a_whole_bad_last_record_of_an_open_turn_is_corruption(
    settings: PersistenceSettings,
) -> None:
    """Nothing intact after it, but whole (a line with its line end, a row): no crash
    leaves that (rule 3). It used to be read as the cut-off tail, which the next
    append cut off."""
    events = open_turn()
    store(settings, events)
    replace(settings, events[-1].seq, "{garbled")

    with pytest.raises(SessionCorruptError, match=r"not a JSON event.*corrupt"):
        load(settings)


def test_a_page_lost_to_a_power_cut_in_an_open_turn_is_still_the_cut_off_tail(
    settings: PersistenceSettings,
) -> None:
    """An open turn's checkpoints are not fsynced: after a power cut a file system may
    keep a later page (and the file's size) but not an earlier one, which reads as NULs
    ending in the rest of a record, intact records after it. That is the unfinished
    tail rule 4 drops (as `fsync: flush` promises: a power cut can lose the last turn),
    not damage that refuses the whole session."""
    events = open_turn()
    bad = bad_seq(events)
    store(settings, events)
    record = events[bad].to_json()
    replace(settings, bad, "\x00" * 40 + record[40:])

    if settings.backend == "sqlite":  # a database loses no page of a row: damage
        with pytest.raises(SessionCorruptError, match=r"seq 14 follows .* corrupt"):
            load(settings)
        return
    loaded = load(settings)
    assert (loaded.kept, loaded.dropped) == (bad, len(events) - bad)


def test_read_log_takes_any_intact_event_after_a_bad_record_as_proof() -> None:
    """Records after a lost page (NUL bytes) that are not events are still the cut-off
    tail; an intact event is proof of damage whatever its seq: one that fits its place,
    or one shifted by a record holding two events (a lost line end) or by a missing
    record. (Shifted ones used to be read as the tail.)"""
    first = SessionEvent("turn/start", 0, 1.0, {"turn": 1}).to_json()
    records = [first, "\x00\x00{bad", "[]", "{bad"]
    events, ignored = read_log(records, lambda index: f"#{index}")
    assert (len(events), ignored) == (1, 3)

    for seq in (2, 3):  # fits index 2; shifted by one
        intact = SessionEvent("note", seq, 1.0, {}).to_json()
        with pytest.raises(
            SessionCorruptError, match=rf"#1: not a JSON event .*seq {seq} follows at #2, so"
        ):
            read_log([first, "{bad", intact, "{bad"], lambda index: f"#{index}")


def test_postgres_a_bad_row_in_an_open_turn_with_intact_rows_after_it_is_corruption(
    pg_server: Any,
) -> None:
    events = open_turn()
    bad = bad_seq(events)
    schema = pg_server.schema()
    backend = PostgresBackend(pg_server.url(schema))
    try:
        backend.append(SessionInfo("s", 1.0), events, durable=True)
        pg_server.execute(
            f"UPDATE \"{schema}\".dsh_events SET line='{{garbled' WHERE session='s' AND seq={bad}"
        )
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
        assert f"event #{bad}:" in str(caught.value)
        with pytest.raises(SessionCorruptError):  # the next append's start: no rows cut
            backend.tail("s")
    finally:
        backend.close()
