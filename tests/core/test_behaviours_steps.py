"""Conformance: behaviours 1-11 of BEHAVIOURS.md (inbox send/steer; steps, requests,
streaming). What a step's answer leads to (12-15) and tools (16-21) are in
test_behaviours_tools.py.

Every test is named after the behaviour it checks (``test_bNN_...``). The tests hold
under any set of installed plugins: logs are compared on the core's event types only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from loop_support import Seen, contents

from dsh import AssistantMessage, DshError, Message, ModelRequest, ToolCall, hookimpl
from dsh.invariants import check_invariants
from dsh.llm import Chunk, Finish, ModelInfo, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk
from dsh.loop import AgentDisposedError
from dsh.messages import Usage
from dsh.session import Session, SessionEvent
from dsh.testing import (
    Reply,
    ScriptedModel,
    fail,
    hang,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool

MODEL = {"model": "scripted"}


def shape(events: Iterable[SessionEvent]) -> list[tuple[Any, ...]]:
    """The core events without chunks, as short tuples that read like the log."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        kind, data = event.type, event.data
        if kind in ("turn/start", "step/start", "step/end"):
            out.append((kind, data.get("step", data["turn"])))
        elif kind == "turn/end":
            out.append((kind, data["turn"], data["reason"]))
        elif kind in ("user/message", "steering/message"):
            out.append((kind, data["content"]))
        elif kind == "assistant/message":
            out.append((kind, AssistantMessage.model_validate(data["message"]).text))
        elif kind == "tool/call":
            out.append((kind, data["id"], data["name"]))
        elif kind == "tool/result":
            out.append((kind, data["call_id"], data["content"], data["is_error"]))
    return out


def said(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """(role, text) of each message of a history or request."""
    return [(m.role, m.text if isinstance(m, AssistantMessage) else m.content) for m in messages]


def of_type(events: Iterable[SessionEvent], kind: str) -> list[SessionEvent]:
    return [e for e in events if e.type == kind]


def start(number: int, *prompts: str) -> list[tuple[Any, ...]]:
    return [("turn/start", number), *(("user/message", p) for p in prompts)]


def step(number: int, answer: str, *after: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """A step that answered ``answer``; ``after``: what it logged after the answer."""
    return [("step/start", number), ("assistant/message", answer), *after, ("step/end", number)]


def end(number: int, reason: str = "completed") -> list[tuple[Any, ...]]:
    return [("turn/end", number, reason)]


def simple_turn(number: int, prompt: str, answer: str, reason: str = "completed") -> list[Any]:
    """The shape of a one-step turn without tools."""
    return [*start(number, prompt), *step(1, answer), *end(number, reason)]


FAILED_STEP = [("step/start", 1), ("step/end", 1)]


class Statuses:
    """Records ``agent_status`` notifications; ``running`` is set on the first one."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.running = anyio.Event()

    @hookimpl
    def agent_status(self, status: str) -> None:
        self.seen.append(status)
        if status == "running":
            self.running.set()


class On:
    """Calls ``action(event)`` for every event logged (a ``session_event`` observer)."""

    def __init__(self, action: Any) -> None:
        self.action = action

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        self.action(event)


class ChunkModel:
    """Streams one reply (a tuple of chunks) per request. ``lagging`` counts chunks that
    were not yet logged when the loop asked for the next one."""

    def __init__(self, *replies: tuple[Chunk, ...]) -> None:
        self.replies = list(replies)
        self.session: Session | None = None
        self.lagging = 0

    @property
    def info(self) -> ModelInfo:
        return ModelInfo("chunks", "test")

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        for chunk in self.replies.pop(0):
            yield chunk
            assert self.session is not None
            last = of_type(self.session.events, "assistant/chunk")[-1]
            self.lagging += last.data != chunk.to_data()


# -- 1-7: inbox, send and steer ---------------------------------------------------------


async def test_b01_send_queues_and_returns_without_flipping_status() -> None:
    statuses = Statuses()
    async with scripted_harness(ScriptedModel([text("hi")]), plugins=[statuses]) as h:
        agent = await h.agents.create("a", options=MODEL)
        agent.send("hello")
        assert agent.agent.status == "idle"
        assert statuses.seen == []
        assert list(agent.agent.inbox.queued) == ["hello"]
        assert list(agent.session.events) == []
        with anyio.fail_after(5):
            await statuses.running.wait()  # the loop, not send(), flipped the status
            await agent.when_idle()
        assert statuses.seen == ["running", "idle"]
        assert shape(agent.session.events) == simple_turn(1, "hello", "hi")


async def test_b02_burst_of_sends_one_at_a_time_gives_one_turn_each() -> None:
    model = ScriptedModel([text(f"r{i}") for i in range(5)])
    async with scripted_harness(model) as h:
        agent = await h.agents.create("a", options={**MODEL, "queue_mode": "one-at-a-time"})
        for i in range(5):
            agent.send(f"p{i}")
        with anyio.fail_after(5):
            await agent.when_idle()
        expected = [row for i in range(5) for row in simple_turn(i + 1, f"p{i}", f"r{i}")]
        assert shape(agent.session.events) == expected
        assert agent.agent.turns == 5
        assert check_invariants(agent.session.events) == []
        model.assert_complete()


async def test_b02_concurrent_sends_lose_nothing_and_turns_increase() -> None:
    model = ScriptedModel([text(f"r{i}") for i in range(40)])
    sent: list[str] = []
    async with scripted_harness(model) as h:
        agent = await h.agents.create("a", options=MODEL)

        async def sender(i: int) -> None:
            for _ in range(i % 7):
                await anyio.lowlevel.checkpoint()  # interleave with the running turns
            sent.append(f"p{i}")
            agent.send(f"p{i}")

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(sender, i)
            await agent.when_idle()
        events = agent.session.events
        assert [e.data["content"] for e in of_type(events, "user/message")] == sent
        turns = [e.data["turn"] for e in of_type(events, "turn/start")]
        assert turns == list(range(1, len(turns) + 1))
        assert len(turns) > 1  # sends landed while turns were running
        assert [e.data["reason"] for e in of_type(events, "turn/end")] == ["completed"] * len(turns)
        assert len(model.requests) == len(turns)
        assert check_invariants(events) == []


def sending(agent: list[Any], *prompts: str, then: str) -> Any:
    """A script entry that sends ``prompts`` while its turn runs, then answers ``then``."""

    def entry(request: ModelRequest) -> str:
        for prompt in prompts:
            agent[0].send(prompt)
        return then

    return entry


async def test_b03_prompts_sent_while_running_are_batched_into_the_next_turn() -> None:
    handle: list[Any] = []
    model = ScriptedModel([sending(handle, "b", "c", then="A"), text("BC")])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "a")
        expected = [*simple_turn(1, "a", "A"), *start(2, "b", "c"), *step(1, "BC"), *end(2)]
        assert shape(agent.session.events) == expected
        history = [("user", "a"), ("assistant", "A"), ("user", "b"), ("user", "c")]
        assert said(model.requests[1].messages) == history
        model.assert_complete()


async def test_b03_one_at_a_time_runs_one_turn_per_queued_prompt() -> None:
    handle: list[Any] = []
    model = ScriptedModel([sending(handle, "b", "c", then="A"), text("B"), text("C")])
    async with scripted_harness(model) as h:
        options = {**MODEL, "queue_mode": "one-at-a-time"}
        handle.append(agent := await h.agents.create("a", options=options))
        with anyio.fail_after(5):
            await run_turn(agent, "a")
        expected = [*simple_turn(1, "a", "A"), *simple_turn(2, "b", "B"), *simple_turn(3, "c", "C")]
        assert shape(agent.session.events) == expected
        assert said(model.requests[1].messages) == [
            ("user", "a"),
            ("assistant", "A"),
            ("user", "b"),
        ]
        assert said(model.requests[2].messages)[-2:] == [("assistant", "B"), ("user", "c")]


async def test_b04_steer_on_an_idle_agent_is_a_send() -> None:
    statuses = Statuses()
    model = ScriptedModel([text("A"), text("B")])
    async with scripted_harness(model, plugins=[statuses]) as h:
        agent = await h.agents.create("a", options=MODEL)
        agent.steer("a")
        assert agent.agent.status == "idle"
        assert list(agent.agent.inbox.queued) == ["a"]
        with anyio.fail_after(5):
            await agent.when_idle()
            agent.send("b")  # a send right before a steer: both are queued prompts
            agent.steer("c")
            await agent.when_idle()
        expected = [*simple_turn(1, "a", "A"), *start(2, "b", "c"), *step(1, "B"), *end(2)]
        assert shape(agent.session.events) == expected
        assert statuses.seen == ["running", "idle", "running", "idle"]


def steering(agent: list[Any], prompt: str, then: Reply | str) -> Any:
    """A script entry that steers ``prompt`` while its step streams, then answers."""

    def entry(request: ModelRequest) -> Reply | str:
        agent[0].steer(prompt)
        return then

    return entry


async def test_b05_steer_while_running_is_logged_before_the_next_request() -> None:
    handle: list[Any] = []
    model = ScriptedModel([steering(handle, "also B", then="A"), text("A and B")])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            events = await run_turn(agent, "say A")
        # no tool calls, yet the steering makes the turn take a second step
        steered = ("steering/message", "also B")
        expected = [*start(1, "say A"), *step(1, "A", steered), *step(2, "A and B"), *end(1)]
        assert shape(events) == expected
        history = [("user", "say A"), ("assistant", "A"), ("user", "also B")]
        assert said(model.requests[1].messages) == history
        model.assert_complete()


async def test_b05_steer_before_the_first_request_joins_it() -> None:
    handle: list[Any] = []

    def steer_on_prompt(event: SessionEvent) -> None:
        if event.type == "user/message":
            handle[0].steer("and be brief")

    model = ScriptedModel([text("ok")])
    async with scripted_harness(model, plugins=[On(steer_on_prompt)]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            events = await run_turn(agent, "explain")
        assert shape(events) == [
            *start(1, "explain"),
            ("step/start", 1),
            ("steering/message", "and be brief"),
            ("assistant/message", "ok"),
            ("step/end", 1),
            *end(1),
        ]
        assert said(model.requests[0].messages) == [("user", "explain"), ("user", "and be brief")]


def steer_as_turn_one_ends(agent: list[Any], prompt: str) -> On:
    """An observer that steers ``prompt`` while turn/end of turn 1 is logged: too late."""

    def steer(event: SessionEvent) -> None:
        if event.type == "turn/end" and event.data["turn"] == 1:
            agent[0].steer(prompt)

    return On(steer)


async def test_b06_steering_after_the_last_step_becomes_the_next_turns_prompt() -> None:
    handle: list[Any] = []
    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(model, plugins=[steer_as_turn_one_ends(handle, "late")]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        assert shape(agent.session.events) == [
            *simple_turn(1, "first", "one"),
            *simple_turn(2, "late", "two"),
        ]
        assert said(model.requests[1].messages)[-1] == ("user", "late")


async def test_b06_steering_during_the_final_continuation_is_requeued() -> None:
    handle: list[Any] = []

    class SteerAtTheEnd:
        @hookimpl
        def agent_turn_continuation(self, turn: int) -> None:
            if turn == 1:
                handle[0].steer("one more thing")

    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(model, plugins=[SteerAtTheEnd()]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        expected = [*simple_turn(1, "first", "one"), *simple_turn(2, "one more thing", "two")]
        assert shape(agent.session.events) == expected


async def test_b06_late_steering_is_the_next_turn_also_one_at_a_time() -> None:
    handle: list[Any] = []
    model = ScriptedModel([sending(handle, "queued", then="one"), "two", "three"])
    async with scripted_harness(model, plugins=[steer_as_turn_one_ends(handle, "late")]) as h:
        options = {**MODEL, "queue_mode": "one-at-a-time"}
        handle.append(agent := await h.agents.create("a", options=options))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        assert shape(agent.session.events) == [
            *simple_turn(1, "first", "one"),
            *simple_turn(2, "late", "two"),
            *simple_turn(3, "queued", "three"),
        ]


async def test_b06_steering_left_by_a_failed_turn_is_not_dropped() -> None:
    handle: list[Any] = []
    model = ScriptedModel([steering(handle, "still here", then=fail("SERVER", "down")), "ok"])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        expected = [*start(1, "first"), *FAILED_STEP, *end(1, "error")]
        assert shape(agent.session.events) == [*expected, *simple_turn(2, "still here", "ok")]


async def test_b07_send_and_steer_on_a_disposed_agent_raise() -> None:
    async with scripted_harness(ScriptedModel()) as h:
        agent = await h.agents.create("gone", options=MODEL)
        await agent.dispose()
        with pytest.raises(DshError, match=r"'gone'.*disposed"):
            agent.send("hello?")
        with pytest.raises(DshError, match=r"'gone'.*disposed"):
            agent.steer("hello?")
        kept = await h.agents.create("kept", options=MODEL)
    with pytest.raises(DshError, match=r"'kept'.*disposed"):  # the harness disposed it
        kept.send("hello?")
    assert list(agent.session.events) == list(kept.session.events) == []


# -- 8-11: steps, requests, streaming ---------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(add)


async def test_b08_each_request_is_the_history_derived_from_the_log_before_it() -> None:
    handle: list[Any] = []
    log_length: list[int] = []

    def noting(reply: Reply) -> Any:
        def entry(request: ModelRequest) -> Reply:
            log_length.append(len(handle[0].session.events))
            return reply

        return entry

    model = ScriptedModel(
        [
            noting(tool_calls(("add", {"a": 1, "b": 2}))),
            noting(text("3")),
            noting(tool_calls(("add#x", {"a": 3, "b": 4}), ("add#y", {"a": 5, "b": 6}))),
            noting(text("7 and 11")),
        ]
    )
    async with scripted_harness(model, plugins=[Tools()]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "3+4 and 5+6?")
        events = agent.session.events
        assert len(model.requests) == len(log_length) == 4
        for request, length in zip(model.requests, log_length, strict=True):
            stored = [SessionEvent.from_dict(e.to_dict()) for e in events[:length]]
            assert request.messages == tuple(Session("replay", stored).history)
        assert [m.role for m in model.requests[3].messages] == [
            *("user", "assistant", "tool", "assistant"),
            *("user", "assistant", "tool", "tool"),
        ]


async def test_b09_request_waterfall_and_the_adapter_gets_the_replacement() -> None:
    seen: list[tuple[str, Any, Any]] = []
    replaced: list[ModelRequest] = []

    class Switch:
        @hookimpl(tryfirst=True)
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            seen.append(("switch", request.model, len(request.messages)))
            return request.model_copy(update={"model": "other"})

    class Trim:
        @hookimpl
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            seen.append(("trim", request.model, len(request.messages)))
            update = {"messages": request.messages[-1:], "system": "trimmed"}
            replaced.append(request.model_copy(update=update))
            return replaced[-1]

    class Watch:
        @hookimpl(trylast=True)
        def agent_request(self, request: ModelRequest) -> None:
            seen.append(("watch", request.model, request.system))

    main = ScriptedModel()
    other = ScriptedModel([text("A"), text("B")], name="other")
    plugins = [Watch(), Trim(), Switch()]
    async with scripted_harness(main, other, plugins=plugins) as h:
        agent = await h.agents.create("a", options={**MODEL, "system_prompt": "be nice"})
        with anyio.fail_after(5):
            await run_turn(agent, "a")
            await run_turn(agent, "b")
        assert seen == [
            ("switch", "scripted", 1),
            ("trim", "other", 1),
            ("watch", "other", "trimmed"),
            ("switch", "scripted", 3),
            ("trim", "other", 3),
            ("watch", "other", "trimmed"),
        ]
        assert main.requests == []
        assert other.requests == replaced
        assert said(other.requests[1].messages) == [("user", "b")]
        # the log is untouched: the rewrite only changed what this request carried
        assert said(agent.session.history) == [
            *[("user", "a"), ("assistant", "A"), ("user", "b"), ("assistant", "B")]
        ]


async def test_b10_no_model_configured_fails_the_step_naming_the_agent() -> None:
    model = ScriptedModel()
    async with scripted_harness(model, config_text="agents:\n  - id: from-config\n") as h:
        for agent in (await h.agents.create("bare"), h.agents.get("from-config")):
            assert agent is not None
            with anyio.fail_after(5):
                events = await run_turn(agent, "hi")
            assert shape(events) == [*start(1, "hi"), *FAILED_STEP, *end(1, "error")]
            error = events[-1].data["error"]
            assert error["code"] == "NO_MODEL"
            assert f"agent {agent.id!r}" in error["message"]
            assert "Traceback" not in error["message"]
            assert "KeyError" not in error["message"]
        assert model.requests == []


async def test_b10_unregistered_model_name_is_a_no_model_error() -> None:
    """Named when the agent is created, it is refused there; a request a plugin sends
    to such a name fails the step with NO_MODEL."""

    class Reroute:
        @hookimpl
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            return request.model_copy(update={"model": "gpt-nope"})

    async with scripted_harness(ScriptedModel(), plugins=[("reroute", Reroute())]) as h:
        with pytest.raises(DshError, match="model 'gpt-nope' is not registered"):
            await h.agents.create("a", options={"model": "gpt-nope"})
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
        error = events[-1].data["error"]
        assert (events[-1].data["reason"], error["code"]) == ("error", "NO_MODEL")
        assert "'a'" in error["message"]
        assert "'gpt-nope'" in error["message"]


STREAM: tuple[Chunk, ...] = (
    ReasoningDelta("thinking"),
    TextDelta("Hel"),
    TextDelta("lo"),
    ToolCallDelta(0, id="c1", name="add"),
    ToolCallDelta(0, arguments='{"a": 1,'),
    ToolCallDelta(0, arguments=' "b": 2}'),
    UsageChunk(Usage(input_tokens=3, output_tokens=4)),
    Finish("tool_calls"),
)


async def test_b11_every_chunk_is_logged_in_order_as_it_streams() -> None:
    chunks = ChunkModel(STREAM, text("3").chunks)
    async with scripted_harness(chunks, plugins=[Tools()]) as h:  # type: ignore[arg-type]
        agent = await h.agents.create("a", options={"model": "chunks"})
        chunks.session = agent.session
        with anyio.fail_after(5):
            events = await run_turn(agent, "1+2?")
        logged = of_type(events, "assistant/chunk")
        assert [e.data for e in logged] == [
            *(c.to_data() for c in STREAM),
            *(c.to_data() for c in text("3").chunks),
        ]
        first = logged[0].seq
        assert [e.seq for e in logged[: len(STREAM)]] == list(range(first, first + len(STREAM)))
        assert chunks.lagging == 0
        assert [e.seq for e in agent.session.events] == list(range(len(agent.session.events)))
        message = AssistantMessage.model_validate(
            of_type(events, "assistant/message")[0].data["message"]
        )
        assert message.text == "Hello"
        assert message.tool_calls == [ToolCall(id="c1", name="add", arguments='{"a": 1, "b": 2}')]


async def test_b07_prompts_must_be_str_and_a_disposing_agent_takes_no_steering() -> None:
    seen = Seen()
    model = ScriptedModel([hang("partial")])
    async with scripted_harness(model, plugins=[seen]) as h:
        agent = await h.agents.create("going", options=MODEL)
        with pytest.raises(TypeError, match="must be a str, not int"):
            agent.send(123)  # type: ignore[arg-type]
        agent.send("go")
        with anyio.fail_after(5):
            await seen["assistant/chunk"].wait()
        with pytest.raises(TypeError, match="must be a str, not bytes"):
            agent.steer(b"bytes")  # type: ignore[arg-type]
        agent.agent.begin_stop()  # disposing: the turn has not ended yet
        with pytest.raises(AgentDisposedError, match=r"'going'.*disposed"):
            agent.steer("too late")
        with anyio.fail_after(5):
            await agent.dispose()
        events = agent.session.events
        assert contents(events, "user/message") == ["go"]
        assert contents(events, "steering/message") == []


async def test_b09_the_request_carries_the_agents_max_tokens() -> None:
    model = ScriptedModel([text("short")])
    async with scripted_harness(model) as h:
        agent = await h.agents.create("a", options={**MODEL, "max_tokens": 77})
        with anyio.fail_after(5):
            await run_turn(agent, "hi")
        assert [r.max_tokens for r in model.requests] == [77]


async def test_b09_the_logged_answer_names_the_model_that_gave_it() -> None:
    switch = [False]
    other = ScriptedModel([text("from other")], name="other")

    class Switch:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(other, "fast")  # registered under a name of its own

        @hookimpl
        def agent_request(self, request: ModelRequest) -> ModelRequest | None:
            return request.model_copy(update={"model": "fast"}) if switch[0] else None

    main = ScriptedModel([text("from main")])
    async with scripted_harness(main, plugins=[Switch()]) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            first = await run_turn(agent, "a")
            switch[0] = True
            second = await run_turn(agent, "b")
        [answer] = of_type(first, "assistant/message")
        assert answer.data["message"]["model"] == "scripted"
        # the model's own name (what answered), not the name the request asked for
        [answer] = of_type(second, "assistant/message")
        assert answer.data["message"]["model"] == "other"
        assert len(main.requests) == len(other.requests) == 1
