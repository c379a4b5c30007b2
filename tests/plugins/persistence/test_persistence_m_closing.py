"""What the closers of an interrupted turn say (docs/persistence.md, rule 5; behaviour 41).

Loading a log cut mid-turn appends, after the kept prefix: an error ``tool/result``
for each call of the open step that has none (with its ``tool/call`` first when that
was never logged), ``step/end``, and ``turn/end`` with reason ``interrupted`` and
``error: {code: INTERRUPTED, ...}``, all with the time of the last event.
"""

from __future__ import annotations

import pytest

from dsh.invariants import check_invariants
from dsh.session import SessionEvent
from dsh_persistence import PersistenceSettings, SessionInfo, close_turn, open_backend
from dsh_persistence._records import NOT_STARTED, OUTCOME_UNKNOWN
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

CALLS = (("add", {"a": 1, "b": 2}), ("mul", {"a": 3, "b": 4}))


def loaded_events(settings: PersistenceSettings, events: list[SessionEvent]) -> list[SessionEvent]:
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("s", 1.0), events, durable=True)
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None
    assert loaded.kept == len(events)
    return loaded.stored.events


def cut_after(log: LogBuilder, kind: str, nth: int = 1) -> list[SessionEvent]:
    """The log up to and including the ``nth`` event of type ``kind`` of the last turn."""
    start = max(e.seq for e in log.events if e.type == "turn/start")
    seen = 0
    for event in log.events[start:]:
        if event.type == kind:
            seen += 1
            if seen == nth:
                return log.events[: event.seq + 1]
    raise AssertionError(f"no {kind} #{nth}")


def test_b41_a_call_already_answered_gets_no_second_result(
    settings: PersistenceSettings,
) -> None:
    """Cut right after the first of two results: only the second call is closed (its
    ``tool/call`` was logged: outcome unknown), then ``step/end`` and ``turn/end``."""
    log = LogBuilder()
    log.turn("one", calls=())
    log.turn("two", calls=CALLS)
    events = cut_after(log, "tool/call", 2)

    closers = loaded_events(settings, events)[len(events) :]
    assert [e.type for e in closers] == ["tool/result", "step/end", "turn/end"]
    assert closers[0].data["call_id"] == "t2-c1"
    assert closers[0].data["content"] == OUTCOME_UNKNOWN


def test_b41_a_crash_after_a_result_adds_no_result_for_it(
    settings: PersistenceSettings,
) -> None:
    """Cut right after the last call's result (before ``step/end``): every call is
    answered, so the closers are only ``step/end`` and ``turn/end``."""
    log = LogBuilder()
    log.turn("one", calls=CALLS)
    events = cut_after(log, "tool/result", 2)

    all_events = loaded_events(settings, events)
    assert [e.type for e in all_events[len(events) :]] == ["step/end", "turn/end"]
    assert check_invariants(all_events) == []


def test_b41_a_call_never_logged_is_closed_with_its_name_and_arguments(
    settings: PersistenceSettings,
) -> None:
    """The synthetic ``tool/call`` of a call the model asked for but that was never
    logged as started carries the name and arguments the model gave (as the live
    loop would have logged them), then a "not run" error result."""
    log = LogBuilder()
    log.turn("one", calls=CALLS)
    events = cut_after(log, "tool/result", 1)  # call 1 answered; call 2 never started

    closers = loaded_events(settings, events)[len(events) :]
    assert [e.type for e in closers] == ["tool/call", "tool/result", "step/end", "turn/end"]
    assert closers[0].data == {"id": "t1-c1", "name": "mul", "arguments": '{"a": 3, "b": 4}'}
    assert closers[1].data == {
        "call_id": "t1-c1",
        "name": "mul",
        "content": NOT_STARTED,
        "is_error": True,
    }


def test_b41_closers_have_the_last_events_time_and_say_interrupted(
    settings: PersistenceSettings,
) -> None:
    """Every closer has the time of the last stored event (so loading twice gives the
    same log), and the ``turn/end`` says ``interrupted`` with an ``INTERRUPTED`` error."""
    log = LogBuilder()
    log.turn("one", calls=())
    log.turn("two", calls=CALLS)
    events = cut_after(log, "tool/call", 1)
    assert events[-1].time > events[0].time

    all_events = loaded_events(settings, events)
    closers = all_events[len(events) :]
    assert {e.time for e in closers} == {events[-1].time}
    end = closers[-1].data
    assert (end["turn"], end["reason"]) == (2, "interrupted")
    assert end["error"]["code"] == "INTERRUPTED"
    assert end["error"]["message"]


def test_the_interrupted_turn_end_counts_the_usage_of_every_step_so_far() -> None:
    """The closing ``turn/end`` carries the tokens the turn's model calls used (the sum
    over its assistant messages), as a live ``turn/end`` does; earlier turns' usage is
    not counted."""
    log = LogBuilder()
    log.turn("one", calls=())
    log.turn("two", calls=CALLS)
    events = cut_after(log, "assistant/message", 2)  # both steps answered, no step/end

    (*_, end) = close_turn(events)
    assert end.type == "turn/end"
    assert end.data["usage"]["input_tokens"] == 20
    assert end.data["usage"]["output_tokens"] == 4
