"""Conformance: behaviours 38-39 (only lossless JSON enters the log; every log passes the
invariant checker, which catches each kind of violation).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks.
Persistence is ``InMemoryPersistence`` from ``dsh.testing``; what a file backend does
on load (repairing a torn log, refusing a newer format) belongs to the persistence
plugin and is tested there. Here: what the core owns of 41 and 43.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_durability_support import busy_session
from loop_support import LIMIT, agent_on, ends

from dsh import EventDataError, hookimpl
from dsh.session import Session, SessionEvent
from dsh.testing import (
    EventRecorder,
    ScriptedModel,
    check_invariants,
    run_turn,
    text,
)

# -- 38: data that is not lossless JSON is refused -------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        (1, 2),
        math.nan,
        math.inf,
        {1: "int key"},
        {"a", "set"},
        b"bytes",
        datetime.datetime(2024, 1, 1),
        object(),
        {"nested": [1, {"deep": (2,)}]},
    ],
    ids=["tuple", "nan", "inf", "int-key", "set", "bytes", "datetime", "object", "nested"],
)
def test_b38_session_append_refuses_data_that_is_not_lossless_json(value: Any) -> None:
    session = Session("s")
    session.append("note/ok", {"n": 1})

    with pytest.raises(EventDataError):
        session.append("note/bad", {"value": value})

    assert len(session.events) == 1
    assert session.append("note/ok", {"n": 2}).seq == 1


async def test_b38_a_plugin_event_with_bad_data_never_reaches_log_or_observers() -> None:
    recorder = EventRecorder()

    class Annotator:
        @hookimpl
        async def agent_step_result(self, agent: Any) -> None:
            await agent.session.emit("note/when", {"at": math.nan})

    model = ScriptedModel([text("hi"), text("again")])
    async with agent_on(model, ("recorder", recorder), ("annotator", Annotator())) as (
        _,
        agent,
    ):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")

        assert "note/when" not in [e.type for e in agent.session.events]
        assert "note/when" not in recorder.types()
        (end,) = [e.data for e in events if e.type == "turn/end"]
        assert end["reason"] == "error" and end["error"]["plugin"] == "annotator"
        assert check_invariants(agent.session.events) == []


# -- 39: every produced log passes the checker -------------------------------------------------


async def test_b39_a_busy_log_passes_the_invariant_checker() -> None:
    model = ScriptedModel()
    async with agent_on(model) as (_, agent):
        await busy_session(agent, model)

        events = agent.session.events
        assert ends(events) == [
            (1, "completed"),
            (2, "max-tokens"),
            (3, "error"),
            (4, "completed"),
            (5, "aborted"),
        ]
        assert check_invariants(events) == []


def log_of(*entries: tuple[str, dict[str, Any]]) -> list[SessionEvent]:
    return [SessionEvent(kind, seq, 0.0, data) for seq, (kind, data) in enumerate(entries)]


T1, T2, T3 = ({"turn": n} for n in (1, 2, 3))


S1, S2 = ({"turn": 1, "step": n} for n in (1, 2))


END1 = {"turn": 1, "reason": "completed"}


CALL = {"id": "c1", "name": "add", "arguments": "{}"}


RESULT = {"call_id": "c1", "name": "add", "content": "1", "is_error": False}


BROKEN_LOGS = {
    "turns not consecutive": log_of(
        ("turn/start", T1), ("turn/end", END1), ("turn/start", T3), ("turn/end", T3 | END1)
    ),
    "step not from 1": log_of(("turn/start", T1), ("step/start", S2)),
    "step event outside a step": log_of(("turn/start", T1), ("assistant/chunk", {})),
    "result before its call": log_of(
        ("turn/start", T1), ("step/start", S1), ("tool/result", RESULT), ("tool/call", CALL)
    ),
    "call without result at step end": log_of(
        ("turn/start", T1), ("step/start", S1), ("tool/call", CALL), ("step/end", S1)
    ),
    "turn ends with a step open": log_of(
        ("turn/start", T1), ("step/start", S1), ("turn/end", END1)
    ),
    "unknown end reason": log_of(("turn/start", T1), ("turn/end", {"turn": 1, "reason": "?"})),
    "user message outside a turn": log_of(("user/message", {"content": "hi"})),
    "turn opened twice": log_of(("turn/start", T1), ("turn/start", T2)),
}


@pytest.mark.parametrize("name", list(BROKEN_LOGS))
def test_b39_the_checker_catches_each_kind_of_violation(name: str) -> None:
    assert check_invariants(BROKEN_LOGS[name]) != []


def test_b39_the_checker_accepts_a_sound_log() -> None:
    sound = log_of(
        ("turn/start", T1),
        ("user/message", {"content": "hi"}),
        ("step/start", S1),
        ("tool/call", CALL),
        ("tool/result", RESULT),
        ("step/end", S1),
        ("turn/end", END1),
    )
    assert check_invariants(sound) == []
    assert check_invariants([e.to_dict() for e in sound]) == []
