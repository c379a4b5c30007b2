"""A provider's own blocks (``ProviderBlock``): Anthropic's server tool blocks kept whole,
sent back by the Anthropic request builder and left out by every other one, never a
tool call; the assembler's checks and order. Wire scenarios run on the loopback server
of llm_wire, turns in a real harness."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, by_event, collect, sse
from read_tool import CALLS, Tools
from test_llm_http import anthropic, openai
from test_providers_study_anthropic import (
    SEARCH_FOUND,
    SEARCH_USE,
    end,
    event,
    start,
    text,
    tool_use,
    web_search,
)

from dsh import hookimpl
from dsh.agent import Agent
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, ProviderBlockChunk, TextDelta
from dsh.messages import (
    AssistantMessage,
    ModelRequest,
    ProviderBlock,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from dsh.testing import check_invariants, run_turn

USE = ProviderBlock(provider="anthropic", data=SEARCH_USE)
FOUND = ProviderBlock(provider="anthropic", data=SEARCH_FOUND)
CALL = ToolCall(id="toolu_a", name="read_file", arguments='{"path": "a"}')
HISTORY = (
    UserMessage(content="search and read a"),
    AssistantMessage(content=(USE, FOUND, TextBlock(text="Reading it."), CALL)),
    ToolResultMessage(call_id="toolu_a", name="read_file", content="A"),
)
OPENAI_DONE = (
    b'data: {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}'
    b"\n\ndata: [DONE]\n\n"
)


async def test_the_openai_builder_leaves_a_provider_block_out() -> None:
    """It made every block that was not text or reasoning a tool call (here an
    AttributeError: a provider block has no name); the server gets the text and the
    one real call."""
    async with WireServer([sse(OPENAI_DONE)]) as server:
        _, message = await collect(openai(server.url), ModelRequest(messages=HISTORY))
        sent = server.requests[0].json()["messages"]
    assert message.text == "ok"
    assert sent[1] == {
        "role": "assistant",
        "content": "Reading it.",
        "tool_calls": [
            {
                "id": "toolu_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a"}'},
            }
        ],
    }
    assert "srvtoolu" not in server.requests[0].body.decode()


async def test_a_message_of_provider_blocks_only_is_empty_text_for_openai() -> None:
    alone = (UserMessage(content="look"), AssistantMessage(content=(USE, FOUND)))
    async with WireServer([sse(OPENAI_DONE)]) as server:
        await collect(openai(server.url), ModelRequest(messages=alone))
        sent = server.requests[0].json()["messages"]
    assert sent[1] == {"role": "assistant", "content": ""}


async def test_the_anthropic_builder_leaves_another_provider_s_block_out() -> None:
    other = ProviderBlock(provider="elsewhere", data={"type": "web_search_call", "id": "ws_1"})
    history = (UserMessage(content="look"), AssistantMessage(content=(other, USE, FOUND)))
    body = start() + text(0, "ok") + end("end_turn")
    async with WireServer([sse(body)]) as server:
        await collect(anthropic(server.url), ModelRequest(messages=history))
        sent = server.requests[0].json()["messages"]
    assert sent[1] == {"role": "assistant", "content": [SEARCH_USE, SEARCH_FOUND]}


class _SwitchToOpenAI:
    """The second turn goes to the OpenAI-compatible model (a model switch)."""

    @hookimpl
    def agent_request(
        self, agent: Agent, request: ModelRequest, turn: int, step: int
    ) -> ModelRequest | None:
        return request.model_copy(update={"model": "gpt"}) if turn == 2 else None


async def test_after_a_model_switch_the_search_is_not_a_tool_call() -> None:
    """A real session: Anthropic searches and calls a tool; the next turn goes to an
    OpenAI-compatible model, which gets the text and the one call, not the search."""
    first = start() + web_search(0) + tool_use(2, "toolu_a", ['{"path": "a"}']) + end("tool_use")
    done = start() + text(0, "Done.") + end("end_turn")
    CALLS.clear()
    async with (
        WireServer([sse(by_event(first)), sse(done)]) as claude,
        WireServer([sse(OPENAI_DONE)]) as gpt,
    ):
        config = (
            f"models:\n  claude:\n    provider: anthropic\n    model: claude-x\n"
            f"    base_url: {claude.url}\n    api_key_env: DSH_WIRE_KEY\n"
            f"  gpt:\n    provider: openai-compatible\n    model: m\n"
            f"    base_url: {gpt.url}\n    api_key_env: DSH_WIRE_KEY\n"
            "agents:\n  - id: main\n    model: claude\n"
        )
        plugins = [("tools", Tools()), ("switch", _SwitchToOpenAI())]
        harness = Harness(
            config_text=config,
            plugins=plugins,
            load_entry_points=False,
            env={"DSH_WIRE_KEY": "sk-wire-key"},
        )
        async with harness as h:
            agent = h.agents.get("main")
            assert agent is not None
            await run_turn(agent, "search and read a")
            events = await run_turn(agent, "and now?")
            check_invariants(agent.session.events)
        sent = gpt.requests[0].json()["messages"]
    assert events[-1].data["reason"] == "completed"
    calls = [m.get("tool_calls") for m in sent if m["role"] == "assistant"]
    assert calls[0] == [
        {
            "id": "toolu_a",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a"}'},
        }
    ]
    assert "srvtoolu" not in gpt.requests[0].body.decode()


async def test_a_block_without_its_stop_is_kept_and_pause_turn_keeps_the_search() -> None:
    """A paused turn (``pause_turn``) ends in the middle of the server's work: the
    server_tool_use it stopped at is kept, to go back (a server that sends no
    content_block_stop still gives the whole block)."""
    use = {**SEARCH_USE, "input": {}}
    body = start() + event({"type": "content_block_start", "index": 0, "content_block": use})
    delta = {"type": "input_json_delta", "partial_json": '{"query": "dsh"}'}
    body += event({"type": "content_block_delta", "index": 0, "delta": delta})
    body += end("pause_turn")
    async with WireServer([sse(by_event(body))]) as server:
        chunks, message = await collect(anthropic(server.url), ModelRequest(messages=HISTORY))
    assert message.content == (USE,)
    assert [type(c).__name__ for c in chunks][:1] == ["ProviderBlockChunk"]
    assert chunks[0].to_data() == {
        "kind": "provider_block",
        "provider": "anthropic",
        "data": SEARCH_USE,
    }


async def test_a_server_tool_input_that_is_not_json_is_malformed() -> None:
    use = {**SEARCH_USE, "input": {}}
    body = start() + event({"type": "content_block_start", "index": 0, "content_block": use})
    delta = {"type": "input_json_delta", "partial_json": '{"query": '}
    body += event({"type": "content_block_delta", "index": 0, "delta": delta})
    body += event({"type": "content_block_stop", "index": 0}) + end("end_turn")
    async with WireServer([sse(body)]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(anthropic(server.url), ModelRequest(messages=HISTORY))
    assert caught.value.code == "MALFORMED_RESPONSE"


def test_text_around_a_provider_block_stays_apart_and_in_order() -> None:
    assembler = Assembler()
    for chunk in (
        TextDelta("Searching. "),
        ProviderBlockChunk("anthropic", dict(SEARCH_USE)),
        ProviderBlockChunk("anthropic", dict(SEARCH_FOUND)),
        TextDelta("Found "),
        TextDelta("it."),
        Finish("stop"),
    ):
        assembler.add(chunk)
    message = assembler.message()
    assert message.content == (
        TextBlock(text="Searching. "),
        USE,
        FOUND,
        TextBlock(text="Found it."),
    )
    assert message == AssistantMessage.model_validate(message.to_data())
    assert assembler.cut_off("aborted") == AssistantMessage(
        content=(TextBlock(text="Searching. "), TextBlock(text="Found it.")),
        stop_reason="aborted",
    )


@pytest.mark.parametrize(
    ("provider", "data", "what"),
    [
        ("", {"type": "x"}, "without a provider name"),
        (None, {"type": "x"}, "without a provider name"),
        ("p", [1], "without a provider name or a dict"),
        ("p", {"type": "x", "n": float("nan")}, "not JSON"),
        ("p", {"type": "x", "at": {1, 2}}, "not JSON"),
        ("p", {1: "x"}, "not JSON"),
    ],
)
def test_a_provider_block_chunk_that_is_not_json_is_malformed(
    provider: Any, data: Any, what: str
) -> None:
    with pytest.raises(ModelError, match=what) as caught:
        Assembler().add(ProviderBlockChunk(provider, data))
    assert caught.value.code == "MALFORMED_RESPONSE"


def test_a_provider_block_reads_back_from_its_json() -> None:
    message = AssistantMessage(content=(USE, FOUND, CALL))
    again = AssistantMessage.model_validate_json(json.dumps(message.to_data()))
    assert again == message
    assert again.tool_calls == [CALL]
    assert not again.is_empty
    assert AssistantMessage(content=(USE,)).text == ""


async def test_a_paused_turn_goes_on_with_the_paused_answer_sent_back() -> None:
    """``pause_turn`` (the server paused its own tools' long turn) ended the turn as a
    ``stop``, unfinished; now the turn takes another step, whose request ends with the
    paused answer as it came, and the API goes on from it. A later request has the two
    answers as one assistant message."""
    use = {**SEARCH_USE, "input": {}}
    paused = start() + event({"type": "content_block_start", "index": 0, "content_block": use})
    delta = {"type": "input_json_delta", "partial_json": '{"query": "dsh"}'}
    paused += event({"type": "content_block_delta", "index": 0, "delta": delta})
    paused += event({"type": "content_block_stop", "index": 0}) + end("pause_turn")
    found = {"type": "content_block_start", "index": 0, "content_block": SEARCH_FOUND}
    went_on = start() + event(found) + event({"type": "content_block_stop", "index": 0})
    went_on += text(1, "Found it.") + end("end_turn")
    done = start() + text(0, "ok") + end("end_turn")
    async with WireServer([sse(by_event(paused)), sse(went_on), sse(done)]) as server:
        config = (
            f"models:\n  claude:\n    provider: anthropic\n    model: claude-x\n"
            f"    base_url: {server.url}\n    api_key_env: DSH_WIRE_KEY\n"
            "agents:\n  - id: main\n    model: claude\n"
        )
        harness = Harness(
            config_text=config, load_entry_points=False, env={"DSH_WIRE_KEY": "sk-wire-key"}
        )
        async with harness as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "look it up")
            await run_turn(agent, "thanks")
            check_invariants(agent.session.events)
        sent = [request.json()["messages"] for request in server.requests]
    assert len(sent) == 3
    stops = [e.data["message"]["stop_reason"] for e in events if e.type == "assistant/message"]
    assert stops == ["paused", "stop"]
    assert sent[1] == [
        {"role": "user", "content": [{"type": "text", "text": "look it up"}]},
        {"role": "assistant", "content": [SEARCH_USE]},
    ]
    assert [e.type for e in events].count("step/start") == 2
    assert events[-1].data["reason"] == "completed"
    assert sent[2][1] == {
        "role": "assistant",
        "content": [SEARCH_USE, SEARCH_FOUND, {"type": "text", "text": "Found it."}],
    }
