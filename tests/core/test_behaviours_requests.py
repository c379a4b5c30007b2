"""Conformance: behaviours 8-11 of BEHAVIOURS.md (steps, requests, streaming: the history
of each request, the request waterfall, no model, every chunk logged). What a step's
answer leads to (12-15) is in test_behaviours_answers.py.

Every test is named after the behaviour it checks (``test_bNN_...``). The tests hold
under any set of installed plugins: logs are compared on the core's event types only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_steps_support import FAILED_STEP, MODEL, end, of_type, said, shape, start

from dsh import AssistantMessage, DshError, ModelRequest, ToolCall, hookimpl
from dsh.harness import Harness
from dsh.llm import Chunk, Finish, ModelInfo, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk
from dsh.messages import Usage
from dsh.session import Session, SessionEvent
from dsh.testing import (
    Reply,
    ScriptedModel,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool


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


async def test_b10_no_model_says_where_to_set_one_by_whether_a_config_was_read() -> None:
    """A harness that read no config file does not point at dsh.yml, which it never read:
    it says how to name a file or pass a model in code."""
    for config_text, expected in (
        (None, "this harness read no config file (Harness(config=...) names one); "),
        ("agents: []\n", "set `model:` in the config text it read (config_text=...) or pass one "),
    ):
        async with scripted_harness(ScriptedModel(), config_text=config_text) as h:
            with anyio.fail_after(5):
                events = await run_turn(await h.agents.create("bare"), "hi")
            message = events[-1].data["error"]["message"]
            assert message.startswith(f"agent 'bare' has no model: {expected}"), message
            if config_text is None:
                assert "pass options={'model': ...} (registered models: " in message


async def test_b10_no_model_names_the_config_file_read(tmp_path: Path) -> None:
    """Not dsh.yml when the harness read another file (review rerev-cli, finding 5)."""
    config = tmp_path / "team.yml"
    config.write_text("agents: []\n")
    async with Harness(config=config, load_entry_points=False) as h:
        with anyio.fail_after(5):
            events = await run_turn(await h.agents.create("bare"), "hi")
    message = events[-1].data["error"]["message"]
    assert message.startswith(f"agent 'bare' has no model: set `model:` in {config} or pass one")


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
