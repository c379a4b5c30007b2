"""The load rules applied to records that are damaged in ways a crash cannot explain.

Every record of the kept prefix must be an event object with ``type`` (a string),
``seq`` (an int equal to its index), ``time`` (a number) and ``data`` (an object)
(docs/persistence.md, "Loading: the repair rules", rule 2). A record that is not one,
followed by a finished turn or by any intact event, is corruption reported with its file
and line (or database, session and event), never read as an event (behaviour 41); as
the last record of an unfinished turn it is the cut-off tail. These hold for logs that are otherwise
readable in one piece, the case the loader reads fastest.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dsh.session import SessionEvent
from dsh_persistence import (
    PersistenceSettings,
    SessionCorruptError,
    SessionInfo,
    open_backend,
    read_log,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

BAD = 3  # the damaged record: a streamed chunk of turn 1


def store(settings: PersistenceSettings, events: list[SessionEvent]) -> None:
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("s", 1.0), events, durable=True)
    finally:
        backend.close()


def replace(settings: PersistenceSettings, seq: int, line: str) -> None:
    """Overwrite the stored record of event ``seq`` with ``line``."""
    if settings.backend == "sqlite":
        with closing(sqlite3.connect(settings.database_path())) as db, db:
            db.execute("UPDATE events SET line=? WHERE session='s' AND seq=?", (line, seq))
        return
    path = settings.session_directory() / "s.jsonl"
    lines = path.read_text().split("\n")
    lines[seq + 1] = line  # line 1 is the header
    path.write_text("\n".join(lines))


def raw_text(settings: PersistenceSettings) -> bytes:
    if settings.backend == "sqlite":
        with closing(sqlite3.connect(settings.database_path())) as db:
            rows = db.execute("SELECT seq, line FROM events ORDER BY seq").fetchall()
        return repr(rows).encode()
    return (settings.session_directory() / "s.jsonl").read_bytes()


def place(settings: PersistenceSettings, seq: int) -> str:
    """How messages name the record of event ``seq`` (followed by ":" or ",")."""
    return f"s.jsonl:{seq + 2}" if settings.backend == "jsonl" else f"event #{seq}"


def defective(events: list[SessionEvent], defect: str) -> str:
    """The record of ``events[BAD]`` damaged by ``defect``."""
    raw: Any = events[BAD].to_dict()
    if defect == "duplicate":  # the line before, written twice
        return events[BAD - 1].to_json()
    if defect == "seq-true":  # json.loads gives True, and True == 1 in Python
        return json.dumps({**raw, "seq": True})
    if defect == "seq-float":
        return json.dumps({**raw, "seq": float(BAD)})
    if defect == "no-type":
        del raw["type"]
    elif defect == "type-number":
        raw["type"] = 7
    elif defect == "no-data":
        del raw["data"]
    elif defect == "data-list":
        raw["data"] = [1]
    elif defect == "no-time":
        del raw["time"]
    elif defect == "time-text":
        raw["time"] = "noon"
    elif defect == "array":
        raw = [raw]
    elif defect == "two-values":  # two events in one record, the next record removed
        return f"{events[BAD].to_json()},{events[BAD + 1].to_json()}"
    return json.dumps(raw)


DEFECTS = [
    "duplicate",
    "seq-true",
    "seq-float",
    "no-type",
    "type-number",
    "no-data",
    "data-list",
    "no-time",
    "time-text",
    "array",
    "two-values",
]


@pytest.mark.parametrize("defect", DEFECTS)
def test_b41_a_record_that_is_not_the_event_before_a_finished_turn_is_corruption(
    settings: PersistenceSettings, defect: str
) -> None:
    """Rule 2/3: a bad record followed by a ``turn/end`` is reported (file and line, or
    database, session and event) and nothing is read as an event or rewritten."""
    log = LogBuilder()
    log.turn("one")
    log.turn("two", calls=())
    events = log.events
    store(settings, events)
    replace(settings, BAD, defective(events, defect))
    if defect == "two-values":
        remove_next(settings)
    before = raw_text(settings)

    backend = open_backend(settings)
    try:
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
        assert place(settings, BAD) + ":" in str(caught.value)
        assert "corrupt" in str(caught.value)
    finally:
        backend.close()
    assert raw_text(settings) == before  # the evidence stays as found


@pytest.mark.parametrize("defect", DEFECTS)
def test_b41_a_record_that_is_not_the_event_ending_an_unfinished_turn_is_corruption(
    settings: PersistenceSettings, defect: str
) -> None:
    """Rule 3: in a crashed turn too, a whole bad last record is damage, not a crash
    tail (a torn append has no line end, a lost page reads as NUL bytes, a transaction
    lands whole): reported with its place, and nothing is cut off. (A torn last line
    and a lost page still are the tail: the contract suite, test_persistence_damage_mid_turn.py.)"""
    log = LogBuilder()
    log.turn("one")
    # no turn/end (the turn was cut off by a crash), and BAD the last record
    events = log.events[: BAD + (2 if defect == "two-values" else 1)]
    store(settings, events)
    replace(settings, BAD, defective(log.events, defect))
    if defect == "two-values":
        remove_next(settings)
    before = raw_text(settings)

    backend = open_backend(settings)
    try:
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
        assert place(settings, BAD) + ":" in str(caught.value)
        assert "corrupt" in str(caught.value)
        with pytest.raises(SessionCorruptError):
            backend.tail("s")
    finally:
        backend.close()
    assert raw_text(settings) == before  # the evidence stays as found


def remove_next(settings: PersistenceSettings) -> None:
    """Remove the record after ``BAD`` (its event now sits in ``BAD``'s record) and
    renumber nothing: the store then holds one record fewer."""
    if settings.backend == "sqlite":
        pytest.skip("a row holds one value: two events cannot share one")
    path = settings.session_directory() / "s.jsonl"
    lines = path.read_text().split("\n")
    del lines[BAD + 2]
    path.write_text("\n".join(lines))


def test_read_log_refuses_a_non_int_seq_that_equals_its_index() -> None:
    """``read_log`` (the public helper for custom backends) keeps only int seqs: a
    ``true`` or ``1.0`` at index 1 is not event 1."""
    first = SessionEvent("turn/start", 0, 1.0, {"turn": 1}).to_json()
    for seq, said in (("true", "True"), ("1.0", "1.0")):
        second = f'{{"type":"note","seq":{seq},"time":1.0,"data":{{}}}}'
        with pytest.raises(SessionCorruptError, match=f"#1: seq {said} where seq 1 was"):
            read_log([first, second], lambda index: f"#{index}")


def two_turns() -> list[SessionEvent]:
    log = LogBuilder()
    log.turn("one")
    log.turn("two", calls=())
    return log.events


def load_error(settings: PersistenceSettings) -> str:
    backend = open_backend(settings)
    try:
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
    finally:
        backend.close()
    return str(caught.value)


@pytest.mark.parametrize("damage", ["misnumbered", "no-seq"])
def test_b41_a_damaged_last_turn_end_is_corruption_not_an_interrupted_turn(
    settings: PersistenceSettings, damage: str
) -> None:
    """A finished turn whose ``turn/end`` record is itself the bad one (misnumbered, or
    its seq lost) was not cut off by a crash (the line is whole): rule 3 reports it; it
    is not re-closed as interrupted."""
    events = two_turns()
    last = events[-1].to_dict()
    store(settings, events)
    if damage == "misnumbered":
        last["seq"] += 5
    else:
        del last["seq"]
    replace(settings, events[-1].seq, json.dumps(last))

    message = load_error(settings)
    assert place(settings, events[-1].seq) + ":" in message


def test_b41_a_hole_in_the_last_turn_whose_turn_end_is_the_last_record_is_corruption(
    settings: PersistenceSettings,
) -> None:
    """The ``turn/end`` that proves a hole may be the very last record."""
    events = two_turns()
    bad = events[-3].seq  # in turn 2, after turn 1's turn/end
    store(settings, events)
    replace(settings, bad, "{not json")

    message = load_error(settings)
    assert place(settings, bad) + ":" in message
    assert "not a JSON event" in message


def test_b41_the_corruption_message_names_where_the_finished_turn_is(
    settings: PersistenceSettings,
) -> None:
    """The message reads "…/s.jsonl:5: …; a finished turn follows at …/s.jsonl:12": both
    places named, the second being the last ``turn/end`` (docs/persistence.md, rule 3)."""
    events = two_turns()
    store(settings, events)
    replace(settings, BAD, "{not json")

    message = load_error(settings)
    follows = message.split("a finished turn follows at", 1)[1]
    assert place(settings, events[-1].seq) + "," in follows
    assert place(settings, BAD) + ":" in message.split(";", 1)[0]


def test_b41_a_turn_start_after_a_damaged_turn_end_is_corruption(
    settings: PersistenceSettings,
) -> None:
    """A damaged ``turn/end`` followed by the intact start of a turn is not the tail of
    a crashed write (an append never writes after a torn line): corruption, reported at
    the damaged line. (It used to be read as a tail, and turn 2 dropped.)"""
    log = LogBuilder()
    log.turn("one", calls=())
    end = log.events[-1].seq
    log.add("turn/start", {"turn": 2})
    log.add("user/message", {"content": "two"})
    store(settings, log.events)
    replace(settings, end, "{not json")

    message = load_error(settings)
    assert place(settings, end) + ":" in message
    assert f"the intact event seq {end + 1} follows at" in message


def test_b41_a_blank_line_between_events_is_a_damaged_record(tmp_path: Path) -> None:
    """A blank line inside a JSONL log is not skipped: it is a record that is not an
    event, so with a finished turn after it the file is reported corrupt at that line
    (and left as it is)."""
    settings = PersistenceSettings(directory=tmp_path)
    store(settings, two_turns())
    path = tmp_path / "s.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines.insert(BAD + 1, b"")  # a blank line 5, where event BAD was (it moves to line 6)
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()

    assert "s.jsonl:5: a blank line, not an event" in load_error(settings)
    assert path.read_bytes() == before
