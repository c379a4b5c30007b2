"""Anthropic's ``redacted_thinking`` blocks: streamed, assembled, logged and sent back
verbatim in their place (the API refuses a tool-use turn whose thinking blocks do not
come back as they came), against the loopback wire server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, by_event, collect, every, recorded, sse

from dsh import hookimpl
from dsh._json import decode
from dsh.config import ModelConfig
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, ReasoningDelta, TextDelta
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from dsh.session import Session, SessionEvent
from dsh.testing import check_invariants, run_turn
from dsh.tools import tool

STREAM = "anthropic_redacted_thinking_tool_use.sse"
DATA = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+kNRj2YfWXGm=="
# the assistant turn as the API wants it back: every block, verbatim, in order
SENT_BACK = [
    {
        "type": "thinking",
        "thinking": "The user wants the weather in Paris.",
        "signature": "EqQBCgIYAhIMsig1st",
    },
    {"type": "redacted_thinking", "data": DATA},
    {"type": "thinking", "thinking": "I will call get_weather.", "signature": "EqQBCgIYAhIMsig2nd"},
    {
        "type": "tool_use",
        "id": "toolu_01Rd4Paris",
        "name": "get_weather",
        "input": {"city": "Paris"},
    },
]


def blocks() -> tuple[Any, ...]:
    return (
        ReasoningBlock(text="The user wants the weather in Paris.", signature="EqQBCgIYAhIMsig1st"),
        ReasoningBlock(text="", redacted=DATA),
        ReasoningBlock(text="I will call get_weather.", signature="EqQBCgIYAhIMsig2nd"),
        ToolCall(id="toolu_01Rd4Paris", name="get_weather", arguments='{"city": "Paris"}'),
    )


def anthropic(url: str) -> AnthropicModel:
    config = ModelConfig(provider="anthropic", model="claude-x", base_url=url)
    return AnthropicModel("claude", config, env={"ANTHROPIC_API_KEY": "sk-ant-wire"})


@pytest.mark.parametrize("split", ["event", "7 bytes"])
async def test_a_redacted_block_streams_into_a_block_of_its_own(split: str) -> None:
    body = recorded(STREAM)
    pieces = by_event(body) if split == "event" else every(body, 7)
    async with WireServer([sse(pieces)]) as server:
        chunks, message = await collect(anthropic(server.url), ModelRequest())
    assert ReasoningDelta("", redacted=DATA) in chunks
    assert message.content == blocks()
    assert message.stop_reason == "tool_calls"
    assert not AssistantMessage(content=(ReasoningBlock(text="", redacted=DATA),)).is_empty


@tool
def get_weather(city: str) -> str:
    """The weather now."""
    return f"{city}: 18 celsius"


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(get_weather)


def harness(url: str) -> Harness:
    config = (
        f"models:\n  wire:\n    provider: anthropic\n    model: wire-model\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n"
        "agents:\n  - id: main\n    model: wire\n"
    )
    return Harness(
        config_text=config,
        plugins=[("tools", Tools())],
        load_entry_points=False,
        env={"DSH_WIRE_KEY": "sk-wire-turn"},
    )


async def test_a_turn_sends_the_redacted_block_back_and_a_resumed_log_sends_the_same() -> None:
    replies = [sse(by_event(recorded(STREAM))), sse(recorded("anthropic_max_tokens.sse"))]
    async with WireServer(replies) as server, harness(server.url) as h:
        agent = h.agents.get("main")
        assert agent is not None
        events = await run_turn(agent, "weather in Paris?")
        check_invariants(agent.session.events)
        live = agent.session

        second = server.requests[1].json()["messages"]
        assert second[1] == {"role": "assistant", "content": SENT_BACK}
        assert second[2]["content"][0]["tool_use_id"] == "toolu_01Rd4Paris"

        # the log is lossless JSON: read back, it derives the same history
        resumed = Session(
            "resumed", [SessionEvent.from_dict(decode(e.to_json())) for e in live.events]
        )
        assert [e.to_dict() for e in resumed.events] == [e.to_dict() for e in live.events]
        assert list(resumed.history) == list(live.history)
        assert resumed.history[1] == AssistantMessage(
            content=blocks(), stop_reason="tool_calls", usage=resumed.history[1].usage, model="wire"
        )

        # and the resumed history goes over the wire exactly as the live one did
        server.replies.append(sse(recorded("anthropic_max_tokens.sse")))
        await collect(anthropic(server.url), ModelRequest(messages=resumed.history[:3]))
        assert server.requests[2].json()["messages"] == second
    assert events[-1].data["reason"] == "max-tokens"
    chunk = {"kind": "reasoning", "text": "", "redacted": DATA}
    assert [e.data for e in events if e.data.get("redacted")] == [chunk]
    logged = next(e.data["message"] for e in events if e.type == "assistant/message")
    assert logged["content"][:3] == [
        # a block without redacted data is logged as before: no "redacted" key
        {
            "type": "reasoning",
            "text": "The user wants the weather in Paris.",
            "signature": "EqQBCgIYAhIMsig1st",
        },
        {"type": "reasoning", "text": "", "signature": None, "redacted": DATA},
        {
            "type": "reasoning",
            "text": "I will call get_weather.",
            "signature": "EqQBCgIYAhIMsig2nd",
        },
    ]


async def test_the_openai_compatible_adapter_never_sends_a_redacted_block() -> None:
    turn = AssistantMessage(content=blocks(), stop_reason="tool_calls")
    only_redacted = AssistantMessage(
        content=(ReasoningBlock(text="", redacted=DATA), ToolCall(id="c2", name="get_weather")),
        stop_reason="tool_calls",
    )
    history = (
        UserMessage(content="weather in Paris?"),
        turn,
        ToolResultMessage(call_id="toolu_01Rd4Paris", name="get_weather", content="18"),
        only_redacted,
        ToolResultMessage(call_id="c2", name="get_weather", content="19"),
    )
    async with WireServer([sse(recorded("llamacpp_text_crlf.sse"))]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        model = OpenAICompatibleModel("local", config, key_optional=True)
        await collect(model, ModelRequest(messages=history))
    sent = server.requests[0].json()["messages"]
    assert DATA not in json.dumps(sent)
    assert sent[1]["reasoning_content"] == (
        "The user wants the weather in Paris.I will call get_weather."
    )
    # no readable reasoning: an empty one (DeepSeek refuses a tool-call turn without it)
    assert sent[3]["reasoning_content"] == ""


def test_a_redacted_delta_between_two_thinking_pieces_gives_three_blocks() -> None:
    assembler = Assembler()
    for chunk in (
        ReasoningDelta("first "),
        ReasoningDelta("thought"),
        ReasoningDelta("", signature="s1"),
        ReasoningDelta("", redacted="opaque-1"),
        ReasoningDelta("", redacted="opaque-2"),  # two redacted blocks stay two
        ReasoningDelta("second"),
        ReasoningDelta("", signature="s2"),
        TextDelta("done"),
        Finish("stop"),
    ):
        assembler.add(chunk)
    message = assembler.message()
    assert message.content[:4] == (
        ReasoningBlock(text="first thought", signature="s1"),
        ReasoningBlock(text="", redacted="opaque-1"),
        ReasoningBlock(text="", redacted="opaque-2"),
        ReasoningBlock(text="second", signature="s2"),
    )
    # what the loop logs is what pydantic would dump, and reads back the same
    assert message.to_data() == message.model_dump(mode="json")
    assert AssistantMessage.model_validate(decode(json.dumps(message.to_data()))) == message
    assert ReasoningBlock(text="x").model_dump() == {
        "type": "reasoning",
        "text": "x",
        "signature": None,
    }


def test_a_redacted_delta_of_the_wrong_type_is_malformed() -> None:
    from dsh.errors import ModelError

    with pytest.raises(ModelError) as caught:
        Assembler().add(ReasoningDelta("", redacted=5))  # type: ignore[arg-type]
    assert caught.value.code == "MALFORMED_RESPONSE"
