"""Two tool calls of one answer sharing an id: the second is renamed and not run, its
error result says why (18), so the log, the history and the next request hold each id
once; the invariant checker flags an id repeated within a step (39)."""

from __future__ import annotations

from typing import Any

import anyio
from loop_support import LIMIT, Tools, ends
from test_invariants import call, end, log, result, step, step_end, turn

from dsh import hookimpl
from dsh.invariants import check_invariants
from dsh.messages import AssistantMessage, ToolCall, ToolResultMessage
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls


def test_b39_a_call_id_repeated_within_a_step_is_flagged() -> None:
    """Behaviour 39: two calls answered one after the other, one id."""
    events = log(
        turn(1), step(1), call("x"), result("x"), call("x"), result("x"), step_end(1), end(1),
    )  # fmt: skip
    assert check_invariants(events) == ["seq 4 (tool/call): call 'x' repeated in step 1"]


def test_b39_an_answer_holding_one_call_id_twice_is_flagged() -> None:
    """Behaviour 39: the answer itself, before any tool/call."""
    message = AssistantMessage(
        role="assistant",
        content=(
            ToolCall(id="x", name="add", arguments="{}"),
            ToolCall(id="x", name="add", arguments="{}"),
        ),
        stop_reason="tool_calls",
    )
    answer = ("assistant/message", {"message": message.to_data()})
    events = log(turn(1), step(1), answer, step_end(1), end(1))
    assert check_invariants(events) == [
        "seq 2 (assistant/message): call 'x' repeated",
        "seq 3 (step/end): tool calls of the answer without a tool/call and result: ['x']",
    ]


def test_b39_one_id_in_two_steps_of_a_turn_is_sound() -> None:
    """Each answer numbers its own calls (dsh.testing's ``call-0``...): not a repeat."""
    events = log(
        turn(1), step(1), call("x"), result("x"), step_end(1),
        step(2), call("x"), result("x"), step_end(2), end(1),
    )  # fmt: skip
    assert check_invariants(events) == []


ADD = {"a": 1, "b": 2}


async def _turn(model: ScriptedModel, *plugins: tuple[str, object]) -> tuple[list[Any], Any]:
    async with scripted_harness(model, plugins=[("tools", Tools()), *plugins]) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "go")
        assert check_invariants(agent.session.events) == []
    return events, model.requests[-1]


def _results(events: list[Any]) -> list[tuple[str, bool, str]]:
    return [
        (e.data["call_id"], e.data["is_error"], e.data["content"])
        for e in events
        if e.type == "tool/result"
    ]


async def test_b18_a_repeated_call_id_gives_the_repeat_an_error_result() -> None:
    """Behaviour 18: the first call runs; the repeat does not, and the model reads why."""
    model = ScriptedModel([tool_calls(("add#x", ADD), ("add#x", ADD)), text("done")])
    events, request = await _turn(model)
    (first, repeat) = _results(events)
    assert first == ("x", False, "3")
    assert repeat[0] != "x" and repeat[1] is True
    assert "'x'" in repeat[2] and "not run" in repeat[2]
    ids = [m.call_id for m in request.messages if isinstance(m, ToolResultMessage)]
    assert sorted(ids) == sorted({*ids})  # the next request names each call once
    assert ends(events) == [(1, "completed")]


class AddsRepeats:
    """An ``agent_step_result`` impl adding two calls with one id to the first answer."""

    @hookimpl
    def agent_step_result(self, message: AssistantMessage, step: int) -> AssistantMessage | None:
        if step != 1:
            return None
        added = (ToolCall(id="dup", name="add", arguments='{"a": 1, "b": 2}'),) * 2
        return message.model_copy(update={"content": (*message.content, *added)})


async def test_b18_a_repeat_added_by_agent_step_result_is_not_run() -> None:
    """Behaviour 18: the same for calls a plugin added to the answer."""
    model = ScriptedModel([text("first"), text("done")])
    events, _ = await _turn(model, ("adds", AddsRepeats()))
    results = _results(events)
    assert [(i, e) for i, e, _ in results[:1]] == [("dup", False)]
    assert results[1][0] != "dup" and results[1][1] is True
