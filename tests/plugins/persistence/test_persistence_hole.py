"""A missing record in the middle of a turn left open by a crash: a hole.

A crash of an append-only writer only loses the end of a log (JSONL: a torn last line,
or a page of NUL bytes a power cut lost; SQLite, PostgreSQL: a transaction lands or
not), so intact records after a missing one mean the store was damaged or edited. It
used to be read as a crash tail: the events after the hole (tool calls that ran, their
results) were dropped on load, their calls closed as "outcome unknown", and the next
append cut them off the store for good. Now loading refuses it as
``SessionCorruptError`` naming the session, the place and what is missing, and the
store stays as found (docs/persistence.md, "Loading: the repair rules", rule 3). What a
crash does leave is still read as the cut-off tail, with ``fsync: never`` too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from persistence_cli_support import run
from test_persistence_behaviours import damage_for, harness_on, snapshot

from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, check_invariants
from dsh_persistence import PersistenceSettings, SessionCorruptError, SessionInfo, open_backend
from dsh_persistence._records import read_log
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def open_turn(settings: PersistenceSettings) -> tuple[list[SessionEvent], int]:
    """Stores a finished turn and one a crash cut off after its tool results: (the
    events, the seq of the open turn's ``assistant/message``)."""
    log = LogBuilder()
    log.turn("one", calls=())
    log.turn("two", calls=(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})))
    last_result = max(e.seq for e in log.events if e.type == "tool/result")
    events = log.events[: last_result + 1]
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("s", 1.0), events, durable=True)
    finally:
        backend.close()
    return events, max(e.seq for e in events if e.type == "assistant/message")


def place(settings: PersistenceSettings, seq: int) -> str:
    return f"s.jsonl:{seq + 2}:" if settings.backend == "jsonl" else f"'s', event #{seq}:"


async def test_resuming_a_session_with_a_hole_in_its_open_turn_is_refused_as_found(
    settings: PersistenceSettings,
) -> None:
    _, missing = open_turn(settings)
    damage_for(settings).drop("s", missing)
    before = snapshot(settings)

    for _ in range(2):  # said again: nothing was cut off
        async with harness_on(settings, ScriptedModel()) as harness:
            with pytest.raises(SessionCorruptError) as caught:
                await harness.agents.resume("a", "s", options={"model": "scripted"})
            assert harness.agents.get("a") is None
        message = str(caught.value)
        assert place(settings, missing) in message
        assert f"event seq {missing} is missing" in message
        assert f"intact event seq {missing + 1}" in message
        assert "corrupt" in message
        assert snapshot(settings) == before


def test_dsh_sessions_says_which_record_is_missing(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``show`` and ``resume`` print the error on one line and fail (``resume``, as
    ``dsh run --session``, then a line saying how to go on); ``list`` (which reads no
    whole log) still lists the session, so it can be shown or deleted."""
    _, missing = open_turn(settings)
    damage_for(settings).drop("s", missing)
    before = snapshot(settings)

    for args in (("show", "s"), ("resume", "s", "go on")):
        assert run(config, *args, model="scripted") != 0
        err = capsys.readouterr().err
        lines = err.splitlines()
        assert len(lines) == (1 if args[0] == "show" else 2), err
        assert place(settings, missing) in lines[0]
        assert f"event seq {missing} is missing" in lines[0]
        if args[0] == "resume":
            said = "dsh: sessions resume: session s is damaged: `dsh "  # not --session
            assert lines[1].startswith(said), err
    assert run(config, "list") == 0
    assert "s" in capsys.readouterr().out.split()
    assert snapshot(settings) == before


def test_read_log_names_what_is_missing_even_at_the_last_record() -> None:
    events = [SessionEvent("note", seq, 1.0, {}).to_json() for seq in range(5)]

    with pytest.raises(SessionCorruptError, match=r"^#3: event seq 3 is missing \(.*seq 4\)"):
        read_log([*events[:3], events[4]], lambda index: f"#{index}")
    with pytest.raises(SessionCorruptError, match=r"^#1: events seq 1-2 are missing"):
        read_log([events[0], *events[3:]], lambda index: f"#{index}")
    assert len(read_log(events[:4], lambda index: f"#{index}")[0]) == 4  # the last lost


@pytest.mark.parametrize("crash", ["last-lost", "torn", "lost-page"])
def test_what_a_crash_leaves_with_fsync_never_is_still_the_cut_off_tail(
    settings: PersistenceSettings, crash: str
) -> None:
    """The end lost (a last record missing with nothing after it), a torn last line, a
    last line of NULs: the turn is closed after what is left."""
    settings = settings.model_copy(update={"fsync": "never"})
    events, _ = open_turn(settings)
    last = events[-1].seq
    if crash == "last-lost":
        damage_for(settings).lose_end("s", 1)  # a database loses none: skipped
    elif settings.backend != "jsonl":
        pytest.skip("a transaction lands whole: no torn or NUL record")
    else:
        path = settings.session_directory() / "s.jsonl"
        data = path.read_bytes()
        record = len(events[-1].to_json_bytes()) + 1
        cut = data[: len(data) - record]
        path.write_bytes(cut + (data[-record:][:20] if crash == "torn" else b"\0" * 50 + b"\n"))

    backend: Any = open_backend(settings)
    try:
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None
    assert loaded.kept == last
    assert loaded.stored.events[-1].data["reason"] == "interrupted"
    assert check_invariants(loaded.stored.events) == []
