"""Behaviour 39, continued: rules of the invariant checker that test_invariants.py does
not pin down. Each test fails on a concrete mutant of ``dsh.invariants``."""

from __future__ import annotations

import pytest
from test_invariants import call, end, log, result, step, step_end, turn

from dsh.invariants import END_REASONS, check_invariants


@pytest.mark.parametrize(
    "reason", ["completed", "max-tokens", "aborted", "error", "disposed", "interrupted"]
)
def test_b39_every_documented_end_reason_is_accepted(reason: str) -> None:
    assert reason in END_REASONS
    assert check_invariants(log(turn(1), end(1, reason))) == []


def test_b39_an_unanswered_call_is_reported_once_not_again_at_later_steps() -> None:
    events = log(
        turn(1), step(1), call("a"), step_end(1),
        step(2), call("b"), result("b"), step_end(2), end(1),
    )  # fmt: skip
    assert check_invariants(events) == ["seq 3 (step/end): tool calls without a result: ['a']"]


def test_b39_a_turn_end_closes_the_open_step_too() -> None:
    events = log(turn(1), step(1), end(1), step_end(1))
    assert check_invariants(events) == [
        "seq 2 (turn/end): step 1 is still open",
        "seq 3 (step/end): closes step 1 but the open step is None",
    ]


def test_b39_steering_outside_a_turn_is_reported() -> None:
    events = log(turn(1), end(1), ("steering/message", {"content": "late"}))
    assert check_invariants(events) == ["seq 2 (steering/message): outside a turn"]


def test_b39_a_log_cut_between_steps_names_only_the_open_turn() -> None:
    events = log(turn(1), step(1), step_end(1))
    assert check_invariants(events) == ["end of log: turn 1 is still open"]
    assert check_invariants(events, complete=False) == []


def test_b39_turns_keep_counting_across_a_whole_log() -> None:
    events = log(turn(1), end(1), turn(2), end(2), turn(2), end(2))
    assert check_invariants(events) == ["seq 4 (turn/start): turn 2 follows turn 2"]


def test_b39_a_call_left_open_by_one_turn_is_not_blamed_on_the_next() -> None:
    events = log(
        turn(1), step(1), call("a"), end(1, "error"),
        turn(2), step(1, 2), step_end(1), end(2),
    )  # fmt: skip
    problems = check_invariants(events)
    assert problems[0] == "seq 3 (turn/end): step 1 is still open"
    assert any("['a']" in problem for problem in problems)
    assert [p for p in problems if p.startswith("seq 6")] == []  # turn 2 is sound
