"""An answer cut off while it streams (an abort, a disposal, a stream error) keeps the
text streamed so far as the step's ``assistant/message`` (stop reason ``aborted`` or
``error``), so the model sees what it had said when the next turn starts, as the user
saw it. Only text is kept: a half-sent tool call's arguments are incomplete, and
reasoning lacks the signature a provider checks. Behaviours 13, 27, 30 and 31 hold
around it (no tool of the step runs, the turn ends as before, the log stays balanced)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from loop_support import LIMIT, Models, Seen, agent_on, ends, types

from dsh import (
    AssistantMessage,
    ModelError,
    ModelRequest,
    RequestErrorDecision,
    Usage,
    hookimpl,
)
from dsh.invariants import check_invariants
from dsh.llm import Chunk, Finish, ModelInfo, ReasoningDelta, TextDelta, ToolCallDelta
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, hang, run_turn, scripted_harness, text


def cut_messages(events: list[SessionEvent] | Any) -> list[dict[str, Any]]:
    return [
        e.data["message"]
        for e in events
        if e.type == "assistant/message"
        and e.data["message"]["stop_reason"] in ("aborted", "error")
    ]


async def abort_while_streaming(model: ScriptedModel, then: str = "go on") -> Any:
    seen = Seen()
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("write a poem")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        agent.send(then)
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        return list(agent.session.events)


async def test_an_aborted_answer_keeps_its_text_and_the_next_request_shows_it() -> None:
    model = ScriptedModel([hang("Roses are ", "red,"), text("fine")])
    events = await abort_while_streaming(model)

    assert cut_messages(events) == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Roses are red,"}],
            "stop_reason": "aborted",
            "usage": Usage().to_data(),
            "model": "scripted",
        }
    ]
    first_turn = types(events)[: types(events).index("turn/end") + 1]
    assert first_turn[-4:] == ["assistant/chunk", "assistant/message", "step/end", "turn/end"]
    assert ends(events) == [(1, "aborted"), (2, "completed")]
    seen_next = [
        (m.role, getattr(m, "text", None) or getattr(m, "content", None))
        for m in model.requests[1].messages
    ]
    assert seen_next == [
        ("user", "write a poem"),
        ("assistant", "Roses are red,"),
        ("user", "go on"),
    ]
    assert check_invariants(events) == []


@pytest.mark.parametrize("parts", [(), ("  \n",)])
async def test_an_abort_before_any_text_logs_no_message(parts: tuple[str, ...]) -> None:
    model = ScriptedModel([hang(*parts), text("fine")])
    seen = Seen()
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("hi")
        with anyio.fail_after(LIMIT):
            await (seen["assistant/chunk"] if parts else seen["step/start"]).wait()
            await anyio.sleep(0.01)  # the model is waiting in its stream
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert "assistant/message" not in types(agent.session.events)
        assert [m.role for m in agent.session.history] == ["user"]


async def test_disposing_mid_stream_keeps_the_text_as_aborted() -> None:
    model = ScriptedModel([hang("half an answer")])
    seen = Seen()
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("hi")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        session = agent.session
        with anyio.fail_after(LIMIT):
            await agent.dispose()
    events = list(session.events)
    assert [m["content"][0]["text"] for m in cut_messages(events)] == ["half an answer"]
    assert cut_messages(events)[0]["stop_reason"] == "aborted"
    assert ends(events) == [(1, "disposed")]
    assert check_invariants(events) == []


class ThinkThenHang:
    """Streams reasoning, text, a half tool call, more text, then waits."""

    info = ModelInfo("thinker", "test")

    def __init__(self) -> None:
        self.waiting = anyio.Event()  # set once every chunk is logged

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        yield ReasoningDelta("let me think", signature=None)
        yield TextDelta("First ")
        yield ToolCallDelta(0, id="c1", name="add")
        yield ToolCallDelta(0, arguments='{"a": 1,')
        yield TextDelta("second")
        self.waiting.set()
        await anyio.sleep_forever()


async def test_only_the_text_of_a_cut_off_answer_is_kept() -> None:
    thinker = ThinkThenHang()
    async with agent_on(ScriptedModel([]), ("thinker", Models(thinker))) as (h, _):
        agent = await h.agents.create("t", options={"model": "thinker"})
        agent.send("hi")
        with anyio.fail_after(LIMIT):
            await thinker.waiting.wait()
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        (cut,) = cut_messages(agent.session.events)
        assert cut["content"] == [
            {"type": "text", "text": "First "},
            {"type": "text", "text": "second"},
        ]
        assert cut["model"] == "thinker"
        assert "tool/call" not in types(agent.session.events)
        assert check_invariants(agent.session.events) == []


class HalfThenFail:
    """The first call streams some text, then fails retryably; later calls answer."""

    info = ModelInfo("flaky", "test")

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        if self.calls == 1:
            yield TextDelta("I will ans")
            raise ModelError("OVERLOADED", "try again")
        yield TextDelta("the whole answer")
        yield Finish("stop")


class Retry:
    @hookimpl
    def agent_request_error(self) -> RequestErrorDecision:
        return RequestErrorDecision(action="retry")


async def test_a_retried_request_keeps_only_the_answer_of_the_retry() -> None:
    flaky = HalfThenFail()
    async with scripted_harness(
        ScriptedModel([]), plugins=[("flaky", Models(flaky)), ("retry", Retry())]
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "flaky"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")
        messages = [e.data["message"] for e in events if e.type == "assistant/message"]
        assert [(m["stop_reason"], m["content"][0]["text"]) for m in messages] == [
            ("stop", "the whole answer")
        ]
        assert ends(events) == [(1, "completed")]


async def test_a_stream_that_fails_keeps_its_text_with_stop_reason_error() -> None:
    flaky = HalfThenFail()
    async with scripted_harness(ScriptedModel([]), plugins=[("flaky", Models(flaky))]) as h:
        agent = await h.agents.create("a", options={"model": "flaky"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")
        (cut,) = cut_messages(events)
        assert (cut["stop_reason"], cut["content"][0]["text"]) == ("error", "I will ans")
        assert events[-1].data["error"]["code"] == "OVERLOADED"
        history = agent.session.history
        assert isinstance(history[-1], AssistantMessage)
        assert history[-1].text == "I will ans"


async def test_what_a_retried_attempt_streamed_is_not_kept_when_the_retry_fails_early() -> None:
    """The retry's request never reaches the model (a plugin fails on it): the text the
    first attempt streamed was replaced by the retry, so it is not logged as the step's
    answer."""

    class FailOnRetry:
        def __init__(self) -> None:
            self.requests = 0

        @hookimpl
        def agent_request(self) -> None:
            self.requests += 1
            if self.requests == 2:
                raise RuntimeError("no second request")

    flaky = HalfThenFail()
    plugins = [("flaky", Models(flaky)), ("retry", Retry()), ("fail", FailOnRetry())]
    async with scripted_harness(ScriptedModel([]), plugins=plugins) as h:
        agent = await h.agents.create("a", options={"model": "flaky"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")
    assert "assistant/message" not in types(events)
    assert events[-1].data["error"]["plugin"] == "fail"
