"""Conformance: behaviour 39 (every log passes the invariant checker) for logs whose
core events are malformed: the checker reports them (it never raises), so a resume
refuses them as a damaged session (``damaged``), never with a bare KeyError or
ValidationError from folding the history."""

from __future__ import annotations

from typing import Any

import pytest

from dsh._resume import damaged, resumed_session, sound
from dsh.errors import DshError
from dsh.invariants import check_invariants
from dsh.persistence import StoredSession
from dsh.session import SessionEvent, SessionStore


def log_of(*entries: tuple[str, Any]) -> list[SessionEvent]:
    return [SessionEvent(kind, seq, 0.0, data) for seq, (kind, data) in enumerate(entries)]


def answer(*calls: str, stop_reason: str = "tool_calls", **more: Any) -> dict[str, Any]:
    blocks = [{"type": "tool_call", "id": c, "name": "add", "arguments": "{}"} for c in calls]
    return {"message": {"role": "assistant", "content": blocks, "stop_reason": stop_reason, **more}}


T1, S1, END1 = {"turn": 1}, {"turn": 1, "step": 1}, {"turn": 1, "reason": "completed"}
CALL = {"id": "c", "name": "add", "arguments": "{}"}
RESULT = {"call_id": "c", "name": "add", "content": "2", "is_error": False}


def step(*events: tuple[str, Any]) -> list[SessionEvent]:
    return log_of(
        ("turn/start", T1), ("step/start", S1), *events, ("step/end", S1), ("turn/end", END1)
    )


MALFORMED = {
    "turn number a str": log_of(("turn/start", {"turn": "1"}), ("turn/end", END1)),
    "turn number a bool": log_of(("turn/start", {"turn": True}), ("turn/end", END1)),
    "turn number missing": log_of(("turn/start", {}), ("turn/end", {"reason": "completed"})),
    "step number a str": log_of(("turn/start", T1), ("step/start", {"turn": 1, "step": "x"})),
    "step number 0": log_of(("turn/start", T1), ("step/start", {"turn": 1, "step": 0})),
    "step/end of another turn": log_of(
        ("turn/start", T1),
        ("step/start", S1),
        ("step/end", {"turn": 9, "step": 1}),
        ("turn/end", END1),
    ),
    "core event data None": log_of(("turn/start", T1), ("user/message", None)),
    "core event data a list": log_of(("turn/start", [1])),
    "user/message without content": log_of(("turn/start", T1), ("user/message", {})),
    "user/message content an int": log_of(("turn/start", T1), ("user/message", {"content": 5})),
    "tool/result without name": step(
        ("assistant/message", answer("c")),
        ("tool/call", CALL),
        ("tool/result", {k: v for k, v in RESULT.items() if k != "name"}),
    ),
    "tool/call without id": step(("tool/call", {"name": "add", "arguments": "{}"})),
    "answer with an unknown stop reason": step(("assistant/message", answer(stop_reason="?"))),
    "answer without a message": step(("assistant/message", {})),
    "answer content not a list": step(("assistant/message", {"message": {"content": "hi"}})),
    "answer's call never called": step(("assistant/message", answer("c"))),
    "answer's call called, no result": step(
        ("assistant/message", answer("c")), ("tool/call", CALL)
    ),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_b39_the_checker_reports_malformed_core_events_without_raising(name: str) -> None:
    assert check_invariants(MALFORMED[name]) != []


@pytest.mark.parametrize("name", list(MALFORMED))
def test_b39_a_resume_of_a_malformed_log_fails_as_damage(name: str) -> None:
    with pytest.raises(DshError) as caught:
        sound(StoredSession("s", 0.0, MALFORMED[name], {}))
    assert damaged(caught.value)


def test_b39_a_sound_step_with_an_answer_s_call_passes() -> None:
    events = step(("assistant/message", answer("c")), ("tool/call", CALL), ("tool/result", RESULT))
    assert check_invariants(events) == []


def test_b39_an_answer_no_reducer_can_fold_is_damage_on_resume() -> None:
    """A content block of no known type passes the checker; folding it fails, and the
    resume says the session is damaged."""
    bad = {"message": {"role": "assistant", "content": [{"type": "?"}], "stop_reason": "stop"}}
    events = step(("assistant/message", bad))
    assert check_invariants(events) == []
    stored = StoredSession("s", 0.0, events, {})
    with pytest.raises(DshError) as caught:
        resumed_session(SessionStore(), stored, {}, agent_id="a")
    assert damaged(caught.value)
    assert "cannot be folded into a history" in str(caught.value)
