"""Conformance: behaviours 22-25 (continuation: the default decision, plugin stop and
continue, the step limit).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks. The
loop is driven with a scripted model; tests wait on session events, status
notifications or ``when_idle()``, always under ``anyio.fail_after``. Entry-point plugins
may be installed (the nox matrix), so event type lists are filtered to the core's types.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
from loop_support import LIMIT, agent_on, contents, ends, types

from dsh import ContinuationDecision, UserMessage, hookimpl
from dsh.agent import AgentHandle
from dsh.testing import (
    ScriptedModel,
    check_invariants,
    run_turn,
    text,
    tool_calls,
)


class Decisions:
    """Records the continuation decision each step starts from (runs first)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []

    @hookimpl(tryfirst=True)
    def agent_turn_continuation(self, decision: ContinuationDecision, step: int) -> None:
        self.seen.append((step, decision.action))


# -- 22: the default continuation decision --------------------------------------------


async def test_b22_a_step_without_tool_calls_or_steering_stops() -> None:
    decisions = Decisions()
    model = ScriptedModel([text("hello"), text("never asked")])
    async with agent_on(model, ("decisions", decisions)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hi")

        assert decisions.seen == [(1, "stop")]
        assert len(model.requests) == 1


async def test_b22_tool_calls_make_the_default_continue() -> None:
    decisions = Decisions()
    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2})), text("3")])
    async with agent_on(model, ("decisions", decisions)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")

        assert decisions.seen == [(1, "continue"), (2, "stop")]
        assert types(agent.session.events).count("step/start") == 2


async def test_b22_steering_drained_in_a_step_makes_the_default_continue() -> None:
    decisions = Decisions()
    handle: list[AgentHandle] = []

    def answer_and_get_steered(request: Any) -> str:
        handle[0].steer("also say bye")  # arrives while this step streams
        return "hello"

    model = ScriptedModel([answer_and_get_steered, text("bye")])
    async with agent_on(model, ("decisions", decisions)) as (_, agent):
        handle.append(agent)
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hi")

        assert decisions.seen == [(1, "continue"), (2, "stop")]
        assert contents(agent.session.events, "steering/message") == ["also say bye"]
        assert model.requests[1].messages[-1] == UserMessage(content="also say bye")


# -- 23: a stop decision wins over tool calls -------------------------------------------


class StepBudget:
    """A budget guard: no turn gets more than ``steps`` steps."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    @hookimpl
    def agent_turn_continuation(self, step: int) -> ContinuationDecision | None:
        return ContinuationDecision(action="stop") if step >= self.steps else None


async def test_b23_a_plugin_stop_ends_the_turn_even_after_tool_calls() -> None:
    call = tool_calls(("add", {"a": 1, "b": 2}))
    model = ScriptedModel([call, call, call, text("unreachable")])
    async with agent_on(model, ("budget", StepBudget(2))) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "keep adding")

        assert ends(events) == [(1, "completed")]
        assert types(events).count("step/start") == 2
        assert len(model.requests) == 2
        # the tools of the last step still ran before the turn stopped
        assert [e.data["content"] for e in events if e.type == "tool/result"] == ["3", "3"]
        assert check_invariants(agent.session.events) == []


# -- 24: continue with a reason -----------------------------------------------------------


class AskToCheck:
    def __init__(self, reason: str | None) -> None:
        self.reason = reason

    @hookimpl
    def agent_turn_continuation(self, step: int) -> ContinuationDecision | None:
        if step == 1:
            return ContinuationDecision(action="continue", reason=self.reason)
        return None


async def test_b24_continue_with_a_reason_logs_it_as_steering_for_the_next_step() -> None:
    model = ScriptedModel([text("draft"), text("final")])
    async with agent_on(model, ("check", AskToCheck("check your answer"))) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "question")

        steering = [e for e in events if e.type == "steering/message"]
        assert [e.data["content"] for e in steering] == ["check your answer"]
        assert steering[0].data.get("source") == "plugin"
        # logged after step 1's answer, before step 2's request, in the same turn
        seqs = {(e.type, e.data.get("step")): e.seq for e in events}
        first_answer = next(e.seq for e in events if e.type == "assistant/message")
        assert first_answer < steering[0].seq < seqs[("step/start", 2)]
        assert model.requests[1].messages[-1] == UserMessage(content="check your answer")
        assert ends(events) == [(1, "completed")]
        assert check_invariants(agent.session.events) == []


async def test_b24_continue_without_a_reason_adds_no_steering() -> None:
    model = ScriptedModel([text("draft"), text("final")])
    async with agent_on(model, ("check", AskToCheck(None))) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "question")

        assert types(events).count("step/start") == 2
        assert "steering/message" not in types(events)


async def test_b24_a_reason_given_at_the_step_limit_is_named_in_its_error_not_logged() -> None:
    """At ``max_steps``' last step no step of the turn answers a plugin's reason: it is
    not logged as steering (a message nothing answers, the next turn's request would
    carry it), and the step limit's error names it."""

    class KeepGoing:
        @hookimpl
        def agent_turn_continuation(self) -> ContinuationDecision:
            return ContinuationDecision(action="continue", reason="check again")

    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, ("keep", KeepGoing()), max_steps=2) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "question")
        steering = [e.data["content"] for e in events if e.type == "steering/message"]
        assert steering == ["check again"]  # after step 1 only: step 2 answered it
        [end] = [e.data for e in events if e.type == "turn/end"]
        assert end["error"]["message"] == (
            "turn 1 stopped after 2 steps (max_steps); "
            "a plugin's reason to go on was not sent: 'check again'"
        )
        assert check_invariants(agent.session.events) == []


# -- 25: the step limit -------------------------------------------------------------------


def always_add(request: Any) -> Any:
    return tool_calls(("add", {"a": 1, "b": 1}))


async def test_b25_max_steps_ends_a_runaway_turn_with_a_clear_reason() -> None:
    model = ScriptedModel([always_add, always_add, always_add, text("fine")])
    async with agent_on(model, max_steps=3) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "loop forever")

        assert types(events).count("step/start") == 3
        assert len(model.requests) == 3
        end = [e.data for e in events if e.type == "turn/end"]
        assert [d["reason"] for d in end] == ["error"]
        assert "max_steps" in end[0]["error"]["message"]
        assert end[0]["error"]["code"] == "MAX_STEPS"
        assert "stopped after 3 steps (max_steps)" in end[0]["error"]["message"]
        assert check_invariants(agent.session.events) == []

        with anyio.fail_after(LIMIT):
            later = await run_turn(agent, "now stop")
        assert ends(later) == [(2, "completed")]


async def test_b25_there_is_a_default_step_limit() -> None:
    model = ScriptedModel([always_add] * 60)
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "loop forever")

        assert ends(events) == [(1, "error")]
        assert len(model.requests) == 50  # documented default of ``max_steps``


async def test_b25_a_limit_of_one_step_says_1_step() -> None:
    # before: "stopped after 1 steps"
    async with agent_on(ScriptedModel([always_add, text("fine")]), max_steps=1) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "loop")
    [end] = [e.data for e in events if e.type == "turn/end"]
    assert end["error"]["message"] == "turn 1 stopped after 1 step (max_steps)"
