"""Behaviour 39: the invariant checker names exactly the rule a broken log breaks."""

from __future__ import annotations

from typing import Any

import pytest

from dsh.invariants import check_invariants
from dsh.session import SessionEvent


def log(*entries: tuple[str, dict[str, Any]]) -> list[SessionEvent]:
    return [SessionEvent(kind, seq, 0.0, data) for seq, (kind, data) in enumerate(entries)]


def turn(number: int) -> tuple[str, dict[str, Any]]:
    return ("turn/start", {"turn": number})


def end(number: int, reason: str = "completed") -> tuple[str, dict[str, Any]]:
    return ("turn/end", {"turn": number, "reason": reason})


def step(number: int, of_turn: int | None = 1) -> tuple[str, dict[str, Any]]:
    return ("step/start", {"step": number, "turn": of_turn})


def step_end(number: int) -> tuple[str, dict[str, Any]]:
    return ("step/end", {"step": number})


def call(call_id: str) -> tuple[str, dict[str, Any]]:
    return ("tool/call", {"id": call_id, "name": "t", "arguments": "{}"})


def result(call_id: str) -> tuple[str, dict[str, Any]]:
    return ("tool/result", {"call_id": call_id, "name": "t", "content": "", "is_error": False})


USER = ("user/message", {"content": "hi"})
ASSISTANT = (
    "assistant/message",
    {"message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
)


def test_b39_a_sound_log_has_no_problems() -> None:
    events = log(
        turn(1), USER, step(1), ASSISTANT, call("a"), result("a"), step_end(1),
        step(2), ("assistant/chunk", {"text": "o"}), ASSISTANT, step_end(2), end(1),
        turn(2), USER, ("steering/message", {"content": "s"}), step(1, 2), step_end(1),
        end(2, "aborted"),
    )  # fmt: skip
    assert check_invariants(events) == []
    assert check_invariants([e.to_dict() for e in events]) == []
    assert check_invariants(log(turn(1), USER), complete=False) == []


BROKEN = {
    "seq not its index": (
        [
            SessionEvent("turn/start", 0, 0.0, {"turn": 1}),
            SessionEvent("turn/end", 5, 0.0, {"turn": 1, "reason": "completed"}),
        ],
        ["seq 5 (turn/end): seq should be 1"],
    ),
    "turn opened twice": (
        log(turn(1), turn(2), end(2)),
        ["seq 1 (turn/start): turn 1 is still open"],
    ),
    "turns not consecutive": (
        log(turn(1), end(1), turn(3), end(3)),
        ["seq 2 (turn/start): turn 3 follows turn 1"],
    ),
    "turn/end with no turn open": (
        log(end(1)),
        ["seq 0 (turn/end): no turn is open"],
    ),
    "turn/end closes another turn": (
        log(turn(1), end(2)),
        ["seq 1 (turn/end): closes turn 2 but turn 1 is open"],
    ),
    "turn ends with a step open": (
        log(turn(1), step(1), end(1)),
        ["seq 2 (turn/end): step 1 is still open"],
    ),
    "unknown end reason": (
        log(turn(1), end(1, "tired")),
        ["seq 1 (turn/end): unknown reason 'tired'"],
    ),
    "step outside a turn": (
        log(step(1, None), step_end(1)),
        ["seq 0 (step/start): outside a turn"],
    ),
    "step opened twice": (
        log(turn(1), step(1), step(2), step_end(2), end(1)),
        ["seq 2 (step/start): step 1 is still open"],
    ),
    "step number skips": (
        log(turn(1), step(2), step_end(2), end(1)),
        ["seq 1 (step/start): step 2 of turn 1 after step 0"],
    ),
    "step names another turn": (
        log(turn(1), step(1, 2), step_end(1), end(1)),
        ["seq 1 (step/start): step 1 of turn 2 after step 0"],
    ),
    "step/end closes another step": (
        log(turn(1), step(1), step_end(2), end(1)),
        ["seq 2 (step/end): closes step 2 but the open step is 1"],
    ),
    "step/end with no step open": (
        log(turn(1), step_end(1), end(1)),
        ["seq 1 (step/end): closes step 1 but the open step is None"],
    ),
    "numberless step/end with no step open": (
        log(turn(1), ("step/end", {}), end(1)),
        ["seq 1 (step/end): closes step None but the open step is None"],
    ),
    "step ends with a call unanswered": (
        log(turn(1), step(1), call("a"), call("b"), result("b"), step_end(1), end(1)),
        ["seq 5 (step/end): tool calls without a result: ['a']"],
    ),
    "step event outside a step": (
        log(turn(1), ASSISTANT, end(1)),
        ["seq 1 (assistant/message): outside a step"],
    ),
    "tool call logged twice": (
        log(turn(1), step(1), call("a"), call("a"), result("a"), step_end(1), end(1)),
        ["seq 3 (tool/call): call 'a' logged twice"],
    ),
    "tool result without its call": (
        log(turn(1), step(1), call("a"), result("a"), result("b"), step_end(1), end(1)),
        ["seq 4 (tool/result): result for 'b' without an open tool/call"],
    ),
    "user message outside a turn": (
        log(USER),
        ["seq 0 (user/message): outside a turn"],
    ),
    "log ends mid-turn": (
        log(turn(1), step(1), call("a")),
        ["end of log: turn 1 is still open, step 1 open, calls without a result: ['a']"],
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_b39_each_broken_rule_is_reported_alone_and_exactly(case: str) -> None:
    events, expected = BROKEN[case]
    assert check_invariants(events) == expected
