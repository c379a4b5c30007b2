"""Conformance: behaviours 12-15 of BEHAVIOURS.md: what a step's answer leads to (rewrites,
provider and stream errors, max-tokens, empty answers). Tool calls (16-21) are in
test_behaviours_tool_calls.py.

Every test is named after the behaviour it checks (``test_bNN_...``). The tests hold
under any set of installed plugins: logs are compared on the core's event types only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_steps_support import MODEL, end, of_type, start, step
from behaviours_tools_support import Toolbox, ran, shape

from dsh import AssistantMessage, Message, ModelRequest, TextBlock, ToolCall, hookimpl
from dsh.errors import ModelError
from dsh.llm import Chunk, Finish, ModelInfo, TextDelta, ToolCallDelta
from dsh.session import Session, SessionEvent
from dsh.testing import (
    Reply,
    ScriptedModel,
    fail,
    max_tokens,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)


def said(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """(role, text) of each message of a history or request."""
    return [(m.role, m.text if isinstance(m, AssistantMessage) else m.content) for m in messages]


def simple_turn(number: int, prompt: str, answer: str, reason: str = "completed") -> list[Any]:
    return [*start(number, prompt), *step(1, answer), *end(number, reason)]


FAILED_STEP = [("step/start", 1), ("step/end", 1)]


# -- 12-15: what a step's answer leads to -----------------------------------------------


async def test_b12_step_result_rewrite_is_what_log_request_and_tools_see() -> None:
    seen: list[tuple[int, int, str]] = []
    rewritten = ToolCall(id="rw", name="add", arguments='{"a": 10, "b": 20}')

    class Rewrite:
        @hookimpl
        def agent_step_result(
            self, agent: Any, message: AssistantMessage, step: int
        ) -> AssistantMessage | None:
            logged = len(of_type(agent.session.events, "assistant/message"))
            seen.append((step, logged, message.text))
            if step != 1:
                return None
            return message.model_copy(update={"content": (TextBlock(text="new"), rewritten)})

    box = Toolbox()
    model = ScriptedModel([tool_calls(("add#orig", {"a": 1, "b": 2}), say="old"), text("30")])
    async with scripted_harness(model, plugins=[box, Rewrite()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "1+2?")
        assert seen == [(1, 0, "old"), (2, 1, "30")]  # each before its assistant/message
        steps = [*step(1, "new", *ran(("rw", "add", False))), *step(2, "30")]
        assert shape(events) == [*start(1, "1+2?"), *steps, *end(1)]
        assert box.ran == ["add 10 20"]
        assert of_type(events, "tool/call")[0].data["arguments"] == rewritten.arguments
        step_two = model.requests[1].messages
        assert said(step_two) == [("user", "1+2?"), ("assistant", "new"), ("tool", "30")]
        assert isinstance(step_two[1], AssistantMessage)
        assert step_two[1].tool_calls == [rewritten]


async def test_b12_step_result_dropping_the_calls_runs_no_tool() -> None:
    class NoTools:
        @hookimpl
        def agent_step_result(self, message: AssistantMessage) -> AssistantMessage:
            return message.model_copy(update={"content": (TextBlock(text="I will not"),)})

    box = Toolbox()
    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2}))])
    async with scripted_harness(model, plugins=[box, NoTools()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "1+2?")
        assert shape(events) == simple_turn(1, "1+2?", "I will not")
        assert box.ran == []
        model.assert_complete()


async def test_b13_provider_error_ends_the_turn_with_its_code_and_message() -> None:
    model = ScriptedModel([fail("RATE_LIMIT", "slow down, please"), text("ok")])
    async with scripted_harness(model) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
            assert shape(events) == [*start(1, "hi"), *FAILED_STEP, *end(1, "error")]
            error = {"code": "RATE_LIMIT", "message": "model 'scripted': slow down, please"}
            assert events[-1].data["error"] == error
            assert shape(await run_turn(agent, "again")) == simple_turn(2, "again", "ok")


class BrokenStream:
    """Streams a text and a tool call, then raises ``error`` (None: just stops, with no
    Finish chunk)."""

    info = ModelInfo("broken", "test")
    chunks = (
        TextDelta("let me"),
        ToolCallDelta(0, id="c1", name="add"),
        ToolCallDelta(0, arguments='{"a": 1, "b": 2}'),
    )

    def __init__(self, error: Exception | None) -> None:
        self.error = error

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        for chunk in self.chunks:
            yield chunk
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (ModelError("SERVER", "connection reset"), "SERVER", "connection reset"),
        (RuntimeError("kaput"), "UNKNOWN", "kaput"),
        (None, "STREAM_CLOSED", "finish"),
    ],
)
async def test_b13_stream_error_after_a_tool_call_runs_no_tool(
    error: Exception | None, code: str, message: str
) -> None:
    box = Toolbox()
    async with scripted_harness(BrokenStream(error), plugins=[box]) as h:  # type: ignore[arg-type]
        agent = await h.agents.create("a", options={"model": "broken"})
        with anyio.fail_after(5):
            events = await run_turn(agent, "1+2?")
        logged = [e.data for e in of_type(events, "assistant/chunk")]
        assert logged == [c.to_data() for c in BrokenStream.chunks]
        # the text streamed before the failure is kept, its half-sent tool call is not
        assert shape(events) == [*start(1, "1+2?"), *step(1, "let me"), *end(1, "error")]
        kept = of_type(events, "assistant/message")[0].data["message"]
        assert (kept["stop_reason"], kept["content"]) == (
            "error",
            [{"type": "text", "text": "let me"}],
        )
        assert [m.role for m in agent.session.history] == ["user", "assistant"]
        assert box.ran == []
        assert events[-1].data["error"]["code"] == code
        assert message in events[-1].data["error"]["message"]


async def test_b14_max_tokens_keeps_the_text_and_runs_no_tool_call() -> None:
    box = Toolbox()
    model = ScriptedModel([max_tokens("Let me add", ("add", {"a": 1, "b": 2})), text("fresh")])
    async with scripted_harness(model, plugins=[box]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "again")
        events = agent.session.events
        assert shape(events) == [
            *simple_turn(1, "1+2?", "Let me add", "max-tokens"),
            *simple_turn(2, "again", "fresh"),
        ]
        assert box.ran == []
        cut = AssistantMessage.model_validate(
            of_type(events, "assistant/message")[0].data["message"]
        )
        assert (cut.stop_reason, cut.tool_calls) == ("max_tokens", [])
        history = [("user", "1+2?"), ("assistant", "Let me add"), ("user", "again")]
        assert said(model.requests[1].messages) == history


async def test_b14_a_later_step_does_not_undo_max_tokens() -> None:
    handle: list[Any] = []

    def steer_then_cut(request: ModelRequest) -> Reply:
        handle[0].steer("go on")  # steering makes the turn take another step
        return max_tokens("par")

    model = ScriptedModel([steer_then_cut, text("tial"), text("next")])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "write")
            await run_turn(agent, "more")
        steps = [*step(1, "par", ("steering/message", "go on")), *step(2, "tial")]
        first = [*start(1, "write"), *steps, *end(1, "max-tokens")]
        assert shape(agent.session.events) == [*first, *simple_turn(2, "more", "next")]


async def test_b15_an_empty_assistant_message_never_enters_history() -> None:
    nothing = Reply((Finish("stop"),))
    model = ScriptedModel([text(""), nothing, max_tokens("", ("add", {"a": 1, "b": 2})), "ok"])
    async with scripted_harness(model, plugins=[Toolbox()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            for prompt in "abcd":
                await run_turn(agent, prompt)
        events = agent.session.events
        assert len(of_type(events, "assistant/message")) == 4  # logged, but not shown again
        assert said(model.requests[3].messages) == [("user", p) for p in "abcd"]
        assert said(agent.session.history) == [*[("user", p) for p in "abcd"], ("assistant", "ok")]
        replayed = Session("replay", [SessionEvent.from_dict(e.to_dict()) for e in events])
        assert replayed.history == agent.session.history


class ClosingModel:
    """Streams a text chunk, then a malformed one; ``closed_at`` is the number of
    events logged when its generator was closed (None: not closed)."""

    info = ModelInfo("closing", "test")

    def __init__(self) -> None:
        self.session: Session | None = None
        self.closed_at: int | None = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        try:
            yield TextDelta("fine so far")
            yield TextDelta(123)  # type: ignore[arg-type]
            yield TextDelta("never asked for")
        finally:
            assert self.session is not None
            self.closed_at = len(self.session.events)


async def test_b13_a_stream_that_fails_mid_way_is_closed_before_the_turn_ends() -> None:
    model = ClosingModel()
    async with scripted_harness(model) as h:  # type: ignore[arg-type]
        agent = await h.agents.create("a", options={"model": "closing"})
        model.session = agent.session
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
        assert events[-1].data["error"]["code"] == "MALFORMED_RESPONSE"
        turn_end = of_type(events, "turn/end")[0]
        assert model.closed_at is not None
        assert model.closed_at <= turn_end.seq


class StepResultFailsOnce:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def agent_step_result(self) -> None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("broken plugin")


async def test_b12_an_answer_whose_step_result_hook_raises_stays_in_history() -> None:
    model = ScriptedModel([text("The answer ", "is 42."), text("ok")])
    async with scripted_harness(model, plugins=[("flaky", StepResultFailsOnce())]) as harness:
        agent = await harness.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            first = await run_turn(agent, "q1")
            await run_turn(agent, "q2")

    (logged,) = [e.data["message"] for e in of_type(first, "assistant/message")]
    assert logged["stop_reason"] == "error"  # cut off by the failure, as mid-stream
    assert [e.data["reason"] for e in of_type(first, "turn/end")] == ["error"]
    assert said(model.requests[1].messages) == [
        ("user", "q1"),
        ("assistant", "The answer is 42."),
        ("user", "q2"),
    ]
