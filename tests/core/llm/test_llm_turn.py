"""Full dsh turns through the real adapters against the loopback wire server: the tool
runs and its result goes back to the model in the next request; an abort closes the
connection."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
from llm_wire import WireServer, by_event, recorded, sse

from dsh import hookimpl
from dsh._json import decode
from dsh.harness import Harness
from dsh.testing import check_invariants, run_turn
from dsh.tools import tool

CALLS: list[dict[str, str]] = []


@tool
def get_weather(city: str = "", location: str = "", unit: str = "celsius") -> str:
    """The weather now."""
    CALLS.append({"city": city, "location": location, "unit": unit})
    return f"{city or location}: 24 {unit}"


class Tools:
    def __init__(self) -> None:
        self.streaming = anyio.Event()

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(get_weather)

    @hookimpl
    def session_event(self, event: Any) -> None:
        if event.type == "assistant/chunk":
            self.streaming.set()


def config(provider: str, url: str) -> str:
    return (
        f"models:\n  wire:\n    provider: {provider}\n    model: wire-model\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n"
        "agents:\n  - id: main\n    model: wire\n    system_prompt: Be brief.\n"
    )


def harness(provider: str, url: str, tools: Tools | None = None) -> Harness:
    return Harness(
        config_text=config(provider, url),
        plugins=[("tools", tools or Tools())],
        load_entry_points=False,
        env={"DSH_WIRE_KEY": "sk-wire-turn"},
    )


async def test_openai_compatible_turn_runs_the_tool_and_sends_the_result_back() -> None:
    CALLS.clear()
    replies = [
        sse(by_event(recorded("deepseek_reasoning_tool_call.sse"))),
        sse(recorded("llamacpp_text_crlf.sse")),
    ]
    async with WireServer(replies) as server, harness("openai-compatible", server.url) as h:
        agent = h.agents.get("main")
        assert agent is not None
        events = await run_turn(agent, "weather in Hangzhou?")
        check_invariants(agent.session.events)
        first, second = (r.json() for r in server.requests)
    assert CALLS == [{"city": "Hangzhou", "location": "", "unit": "celsius"}]
    assert events[-1].type == "turn/end"
    assert events[-1].data["reason"] == "completed"
    assert events[-1].data["usage"]["cache_read_tokens"] == 384
    assert first["tools"][0]["function"]["name"] == "get_weather"
    assert server.requests[1].headers["authorization"] == "Bearer sk-wire-turn"
    assert second["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather in Hangzhou?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_00_Xk3Rz9pLqWm2",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"city":"Hangzhou","unit":"celsius"}',
                    },
                }
            ],
            # DeepSeek's rule: the reasoning of a tool-call turn goes back with it
            "reasoning_content": "The user asks for the weather in Hangzhou. I should call "
            'get_weather with city="Hangzhou".',
        },
        {
            "role": "tool",
            "tool_call_id": "call_00_Xk3Rz9pLqWm2",
            "content": "Hangzhou: 24 celsius",
        },
    ]
    assert "sk-wire-turn" not in json.dumps([e.data for e in agent.session.events])


async def test_anthropic_turn_runs_the_tool_and_ends_max_tokens() -> None:
    CALLS.clear()
    replies = [
        sse(recorded("anthropic_thinking_tool_use.sse")),
        sse(recorded("anthropic_max_tokens.sse")),
    ]
    async with WireServer(replies) as server, harness("anthropic", server.url) as h:
        agent = h.agents.get("main")
        assert agent is not None
        events = await run_turn(agent, "weather in SF?")
        check_invariants(agent.session.events)
        second = server.requests[1].json()
    assert CALLS == [{"city": "", "location": "San Francisco, CA", "unit": "fahrenheit"}]
    assert events[-1].data["reason"] == "max-tokens"
    assert second["system"] == "Be brief."
    assistant, results = second["messages"][1:]
    assert [block["type"] for block in assistant["content"]] == ["thinking", "text", "tool_use"]
    assert assistant["content"][0]["signature"].startswith("EqQBCgIYAhIM")
    assert assistant["content"][2]["input"] == {
        "location": "San Francisco, CA",
        "unit": "fahrenheit",
    }
    assert results == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "content": "San Francisco, CA: 24 fahrenheit",
            }
        ],
    }


async def test_abort_during_a_real_stream_ends_the_turn_and_closes_the_connection() -> None:
    stalled = sse(by_event(recorded("llamacpp_text_crlf.sse"))[:3], then="stall")
    tools = Tools()
    server = WireServer([stalled])
    async with server, harness("openai-compatible", server.url, tools) as h:
        agent = h.agents.get("main")
        assert agent is not None
        agent.send("count")
        with anyio.fail_after(30):  # hang guards: only a failing run waits them out
            await tools.streaming.wait()
        agent.abort()
        await agent.when_idle()
        with anyio.fail_after(10):
            await server.disconnected.wait()
        check_invariants(agent.session.events)
        end = agent.session.events[-1]
    assert (end.type, end.data["reason"]) == ("turn/end", "aborted")


@tool
def list_names() -> str:
    """Names as os.listdir gives them: one is not UTF-8 on disk."""
    return os.fsdecode(b"caf\xe9.txt")  # 'caf\udce9.txt'


class NameTools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(list_names)


async def test_a_lone_surrogate_is_kept_in_the_log_and_sent_as_u_fffd() -> None:
    call = (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1",'
        b'"type":"function","function":{"name":"list_names","arguments":"{}"}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    replies = [sse(call), sse(recorded("llamacpp_text_crlf.sse"))]
    tools: Any = NameTools()
    async with WireServer(replies) as server, harness("openai-compatible", server.url, tools) as h:
        agent = h.agents.get("main")
        assert agent is not None
        events = await run_turn(agent, "what is here?")
        second = server.requests[1].json()
    assert events[-1].data["reason"] == "completed"
    assert second["messages"][-1]["content"] == "caf\ufffd.txt"  # valid UTF-8 on the wire
    (result,) = [e for e in events if e.type == "tool/result"]
    assert result.data["content"] == "caf\udce9.txt"  # the log keeps what the tool said
    assert decode(result.to_json()) == result.to_dict()
    assert decode(result.to_json_bytes()) == result.to_dict()
