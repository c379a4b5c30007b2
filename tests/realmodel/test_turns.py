"""dsh's model adapters against the real server, through both of its protocols: streams
of chunks, full agent turns with a tool, output limits, errors and aborts.

The model is built the way the CLI builds one (``parse_model_shorthand`` +
``build_model``) and registered by a plugin through ``register_models``, like a
third-party provider would register it.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from realmodel_support import Peer

from dsh import ContinuationDecision, hookimpl
from dsh.agent import AgentHandle
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, TextDelta, UsageChunk
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.llm.providers import build_model, parse_model_shorthand
from dsh.messages import AssistantMessage, ModelRequest, ToolResultMessage, UserMessage
from dsh.session import SessionEvent
from dsh.testing import check_invariants, run_turn
from dsh.tools import tool

PROTOCOLS = ["openai", "anthropic"]
SYSTEM = "You are a helpful assistant. Use the tools when they help."
ASK_WEATHER = "What is the weather in Paris right now?"
LONG_PROMPT = "Please repeat these words back to me: " + "apple banana cherry " * 1000
#: temperature 0: the same prompt gets the same answer, run after run
DETERMINISTIC = {"temperature": 0}
TURN_LIMIT = 60.0  # seconds; a turn here takes a few


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: sunny, 21 degrees Celsius"


def make_model(protocol: str, peer: Peer) -> OpenAICompatibleModel | AnthropicModel:
    if protocol == "openai":
        name, config = parse_model_shorthand(f"openai-compatible:qwen@{peer.base_url}")
    else:
        name, config = (
            "local-anthropic",
            ModelConfig(provider="anthropic", model="qwen", base_url=peer.base_url),
        )
    # env={}: no API key is sent, whatever the developer's environment holds
    model = build_model(name, config, env={})
    assert isinstance(model, OpenAICompatibleModel | AnthropicModel)
    return model


class Local:
    """A plugin: registers the model and ``get_weather``; in ``agent_request`` offers the
    model that tool only (or, unless ``tools``, none), asks for temperature 0, applies
    ``change`` and records the request; ends a turn after two steps (this small model
    calls a tool again and again).

    Why so few tools: the built-in ones would fill most of the small context, and a
    prompt the small model cannot answer with the tools it has may make it call one that
    does not exist, which llama-server reports as an error in the stream.
    """

    def __init__(
        self,
        model: OpenAICompatibleModel | AnthropicModel,
        change: Callable[[ModelRequest], ModelRequest],
        tools: bool,
    ) -> None:
        self.model = model
        self.change = change
        self.tools = tools
        self.requests: list[ModelRequest] = []
        self.streaming = anyio.Event()

    @hookimpl
    def agent_turn_continuation(
        self, decision: ContinuationDecision, step: int
    ) -> ContinuationDecision | None:
        return ContinuationDecision(action="stop") if step >= 2 else None

    @hookimpl
    def register_models(self, register: Callable[..., None]) -> None:
        register(self.model)

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        register(get_weather)

    @hookimpl
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        tools = tuple(t for t in request.tools if self.tools and t.name == get_weather.name)
        options = {**DETERMINISTIC, **request.options}
        request = self.change(request.model_copy(update={"tools": tools, "options": options}))
        self.requests.append(request)
        return request

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        if event.type == "assistant/chunk":
            self.streaming.set()


@asynccontextmanager
async def local_agent(
    protocol: str,
    peer: Peer,
    change: Callable[[ModelRequest], ModelRequest] = lambda request: request,
    *,
    tools: bool = False,
    **options: Any,
) -> AsyncIterator[tuple[AgentHandle, Local]]:
    """A started harness with one agent on the local model: (agent handle, plugin)."""
    model = make_model(protocol, peer)
    plugin = Local(model, change, tools)
    async with (
        model,
        Harness(plugins=[("local", plugin)], load_entry_points=False) as harness,
    ):
        options = {"model": model.name, "system_prompt": SYSTEM, "max_tokens": 96, **options}
        agent = await harness.agents.create("main", options=options)
        yield agent, plugin
        check_invariants(agent.session.events)


async def turn(agent: AgentHandle, prompt: str) -> list[SessionEvent]:
    with anyio.fail_after(TURN_LIMIT):
        return await run_turn(agent, prompt)


def of_type(events: list[SessionEvent], kind: str) -> list[SessionEvent]:
    return [event for event in events if event.type == kind]


def answers(events: list[SessionEvent]) -> list[AssistantMessage]:
    """The assistant messages, read back from the log."""
    return [
        AssistantMessage.model_validate(e.data["message"])
        for e in of_type(events, "assistant/message")
    ]


async def busy(peer: Peer) -> bool:
    """Whether the server is working on a request (its one slot is processing)."""
    async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
        slots = (await http.get(f"{peer.url}/slots")).json()
    return any(slot["is_processing"] for slot in slots)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_plain_answer_streams_text_then_usage_then_finish(
    protocol: str, peer: Peer
) -> None:
    request = ModelRequest(
        messages=(UserMessage(content="Say hello."),), max_tokens=64, options=DETERMINISTIC
    )
    async with make_model(protocol, peer) as model:
        chunks = [chunk async for chunk in model.stream(request)]
    texts = [c for c in chunks if isinstance(c, TextDelta)]
    usages = [c for c in chunks if isinstance(c, UsageChunk)]
    assert len(texts) > 1  # streamed, not sent whole
    assert usages and usages[-1].usage.input_tokens > 0
    assert 0 < usages[-1].usage.output_tokens < 64
    assert chunks[-1] == Finish("stop")
    assert not any(isinstance(c, Finish) for c in chunks[:-1])
    assert chunks.index(usages[-1]) > chunks.index(texts[-1])
    assembler = Assembler()
    for chunk in chunks:
        assembler.add(chunk)
    message = assembler.message(model=model.name)
    assert message.text == "".join(t.text for t in texts) and message.text.strip()
    assert message.stop_reason == "stop"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_turn_runs_the_streamed_tool_call_and_sends_the_result_back(
    protocol: str, peer: Peer
) -> None:
    async with local_agent(protocol, peer, tools=True) as (agent, plugin):
        events = await turn(agent, ASK_WEATHER)
        model = plugin.model
    first, *later = answers(events)
    assert first.stop_reason == "tool_calls"
    [call] = first.tool_calls
    assert call.name == "get_weather" and call.id
    assert isinstance(json.loads(call.arguments), dict)  # the raw text, as streamed
    result = of_type(events, "tool/result")[0]
    assert result.data["call_id"] == call.id
    assert not result.data["is_error"], result.data["content"]
    assert "sunny" in result.data["content"]
    # the next request carries the call and its result, in the protocol's own shape
    assert len(plugin.requests) == 2 and len(later) == 1
    sent = plugin.requests[1]
    [sent_result] = [m for m in sent.messages if isinstance(m, ToolResultMessage)]
    assert sent_result.call_id == call.id
    body = json.dumps(model.request_body(sent))
    marker = '"tool_call_id"' if protocol == "openai" else '"tool_use_id"'
    assert f"{marker}: {json.dumps(call.id)}" in body
    # ...and the server read it: the second prompt is longer by the call and the result
    assert later[0].usage.input_tokens > first.usage.input_tokens
    end = events[-1]
    assert (end.type, end.data["reason"]) == ("turn/end", "completed")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_small_max_tokens_ends_the_turn_max_tokens(protocol: str, peer: Peer) -> None:
    async with local_agent(protocol, peer, max_tokens=4) as (agent, _):
        events = await turn(agent, "Tell me a long story about a dragon.")
    [message] = answers(events)
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 4
    assert events[-1].data["reason"] == "max-tokens"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_bad_request_ends_the_turn_with_invalid_request(protocol: str, peer: Peer) -> None:
    def break_it(request: ModelRequest) -> ModelRequest:  # a body the server refuses
        return request.model_copy(update={"options": {**request.options, "max_tokens": "many"}})

    async with local_agent(protocol, peer, break_it) as (agent, _):
        events = await turn(agent, "Say hello.")
    end = events[-1]
    assert end.data["reason"] == "error"
    assert end.data["error"]["code"] == "INVALID_REQUEST", end.data["error"]
    assert "max_tokens" in end.data["error"]["message"]  # the server's own words


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_over_long_prompt_ends_the_turn_with_context_window_exceeded(
    protocol: str, peer: Peer
) -> None:
    async with local_agent(protocol, peer) as (agent, _):
        events = await turn(agent, LONG_PROMPT)
    error = events[-1].data["error"]
    assert error["code"] == "CONTEXT_WINDOW_EXCEEDED", error
    async with make_model(protocol, peer) as model:
        request = ModelRequest(messages=(UserMessage(content=LONG_PROMPT),))
        with pytest.raises(ModelError) as raised:
            async for _ in model.stream(request):
                pass
    assert raised.value.code == "CONTEXT_WINDOW_EXCEEDED"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_abort_mid_stream_ends_the_turn_and_frees_the_server(
    protocol: str, peer: Peer
) -> None:
    prompt = "Count from 1 to 500, one number per line."
    async with local_agent(protocol, peer, max_tokens=400) as (agent, plugin):
        agent.send(prompt)  # ~8 s of generation if nobody stopped it
        with anyio.fail_after(TURN_LIMIT):
            await plugin.streaming.wait()
        agent.abort()
        aborted = time.monotonic()
        with anyio.fail_after(2):
            await agent.when_idle()
        end = agent.session.events[-1]
        assert (end.type, end.data["reason"]) == ("turn/end", "aborted")
        # the server noticed the closed connection and stopped generating
        while await busy(peer):
            assert time.monotonic() - aborted < 3.0, "the server still generates"
            await anyio.sleep(0.05)
        chunks = [e for e in agent.session.events if e.type == "assistant/chunk"]
        assert chunks and not any(e.data["kind"] == "finish" for e in chunks)
