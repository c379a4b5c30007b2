"""Resuming a session whose crashed last turn left what a crash leaves, then writing to it.

Loading ignores a torn last line, a last line of NULs (a page a power cut lost) or
finds the log shorter ("cut off"), when no intact event follows (one that does makes it
corruption, as does a missing record, a whole bad line or any bad row:
test_persistence_damage_mid_turn.py, test_persistence_hole.py,
test_persistence_m_records.py). The backend must then continue the log from the kept
prefix: the next append replaces the ignored records, and every later event is stored.
A database loses no part of a transaction that landed, so it has no such tail: what
used to be repaired there (the next append deleted the rows after the readable prefix)
is corruption now (test_persistence_stored_count.py).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from dsh.testing import (
    ErrorRecorder,
    ScriptedModel,
    check_invariants,
    run_turn,
    scripted_harness,
    text,
)
from dsh_persistence import PersistencePlugin, PersistenceSettings, SessionInfo, open_backend
from dsh_persistence._files import file_name
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


def crashed_session(settings: PersistenceSettings) -> tuple[list[Any], int]:
    """Stores turn 1 and the start of turn 2 (the process died mid-turn): (events, the
    seq where turn 2 starts)."""
    log = LogBuilder()
    log.turn("first")
    done = len(log.events)
    log.turn("second")
    events = log.events[: done + 7]  # turn/start ... tool/call of turn 2
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("s", 1.0), events, durable=True)
    finally:
        backend.close()
    return events, done


def damage(settings: PersistenceSettings, seq: int, line: bytes | None) -> None:
    """Replace the stored last event ``seq`` by ``line`` (no line end: torn), or remove
    it (None)."""
    if settings.backend != "jsonl":
        pytest.skip("a transaction lands whole: a crash leaves no damaged rows")
    path = settings.session_directory() / file_name("s")
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == seq + 2  # the last one
    if line is None:
        del lines[seq + 1]  # line 1 is the header
    else:
        lines[seq + 1] = line
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize(
    ("where", "line"),
    [
        (6, b'{"type":"tool/ca'),
        (6, None),
        (6, b"\0" * 30 + b"\n"),
    ],
    ids=["torn-last", "missing-last", "lost-page-last"],
)
async def test_new_turns_of_a_resumed_session_with_a_damaged_crashed_turn_are_all_stored(
    settings: PersistenceSettings, where: int, line: bytes | None
) -> None:
    crashed, turn_two = crashed_session(settings)
    bad = turn_two + where
    damage(settings, bad, line)

    errors = ErrorRecorder()
    plugin = PersistencePlugin(settings)
    plugins = [("persistence", plugin), ("errors", errors)]
    model = ScriptedModel([text("three"), text("four")])
    try:
        async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
            resumed = await h.agents.resume("a", "s", options={"model": "scripted"})
            kept = resumed.session.events[:bad]
            assert [e.to_dict() for e in kept] == [e.to_dict() for e in crashed[:bad]]
            closed = resumed.session.events[-1].data
            assert (closed["turn"], closed["reason"]) == (2, "interrupted")
            with anyio.fail_after(LIMIT):
                await run_turn(resumed, "third")
                await run_turn(resumed, "fourth")
            live = [event.to_dict() for event in resumed.session.events]
    finally:
        plugin.close()

    assert [str(error) for error in errors.errors] == []
    backend = open_backend(settings)
    try:
        tail = backend.tail("s")
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None and tail is not None
    assert [event.to_dict() for event in loaded.stored.events] == live
    assert (loaded.kept, loaded.dropped, loaded.closers) == (len(live), 0, 0)
    assert tail.next_seq == len(live)
    assert check_invariants(loaded.stored.events) == []
