"""llama-server's wire format, checked with raw HTTP: what the dsh adapters rely on.

Each test documents one exchange of the OpenAI (``/v1/chat/completions``) or Anthropic
(``/v1/messages``) protocol as this server speaks it, streamed over SSE.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from realmodel_support import CONTEXT, Peer, sse_events

WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city's name."}},
        "required": ["city"],
    },
}
ASK_WEATHER = "What is the weather in Paris right now?"
SAY_HELLO = "Say hello."
LONG_PROMPT = "Please repeat these words back to me: " + "apple banana cherry " * 1000


def client() -> httpx.Client:
    return httpx.Client(timeout=60.0, trust_env=False)  # straight to 127.0.0.1, no proxy


def openai_stream(peer: Peer, **body: Any) -> list[dict[str, Any]]:
    """The JSON chunks of a streamed chat completion; asserts it ends with [DONE]."""
    body = {"stream": True, "stream_options": {"include_usage": True}, "temperature": 0, **body}
    with (
        client() as http,
        http.stream("POST", f"{peer.base_url}/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        data = [event.data for event in sse_events(response)]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(item) for item in data[:-1]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    return chunks


def anthropic_stream(peer: Peer, **body: Any) -> list[dict[str, Any]]:
    """The events of a streamed Messages answer (their ``data``; ``type`` repeats the
    SSE event name)."""
    body = {"model": "qwen", "max_tokens": 64, "stream": True, "temperature": 0, **body}
    items: list[dict[str, Any]] = []
    with (
        client() as http,
        http.stream("POST", f"{peer.base_url}/messages", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for event in sse_events(response):
            item = json.loads(event.data)
            assert item["type"] == event.event
            items.append(item)
    return items


def deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [chunk["choices"][0]["delta"] for chunk in chunks if chunk["choices"]]


def finish_reasons(chunks: list[dict[str, Any]]) -> list[str]:
    return [
        c["choices"][0]["finish_reason"]
        for c in chunks
        if c["choices"] and c["choices"][0]["finish_reason"]
    ]


# -- OpenAI chat completions -----------------------------------------------------------


def test_openai_streams_text_then_finish_then_usage(peer: Peer) -> None:
    chunks = openai_stream(peer, messages=[{"role": "user", "content": SAY_HELLO}], max_tokens=64)
    text = "".join(d.get("content") or "" for d in deltas(chunks))
    assert text.strip()
    assert finish_reasons(chunks) == ["stop"]
    # include_usage: a last chunk with no choices and the token counts
    last = chunks[-1]
    assert last["choices"] == []
    assert last["usage"]["prompt_tokens"] > 0
    assert 0 < last["usage"]["completion_tokens"] < 64


def test_openai_streams_a_tool_call_id_and_name_first_then_argument_fragments(
    peer: Peer,
) -> None:
    chunks = openai_stream(
        peer,
        messages=[{"role": "user", "content": ASK_WEATHER}],
        tools=[{"type": "function", "function": WEATHER}],
        max_tokens=64,
    )
    calls = [call for d in deltas(chunks) for call in d.get("tool_calls") or ()]
    assert calls, f"no tool call streamed: {chunks}"
    first, rest = calls[0], calls[1:]
    assert first["index"] == 0
    assert first["id"] and first["type"] == "function"
    assert first["function"]["name"] == "get_weather"
    assert all("id" not in c and "name" not in c.get("function", {}) for c in rest)
    arguments = "".join(c["function"].get("arguments", "") for c in calls)
    assert isinstance(json.loads(arguments), dict)
    assert finish_reasons(chunks) == ["tool_calls"]


def test_openai_takes_a_tool_call_and_its_result_back(peer: Peer) -> None:
    call = {
        "id": "call-1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    ask = [{"role": "user", "content": ASK_WEATHER}]
    answered = [
        *ask,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call-1", "content": "sunny, 21 degrees"},
    ]
    tools = [{"type": "function", "function": WEATHER}]
    before = openai_stream(peer, messages=ask, tools=tools, max_tokens=1)
    after = openai_stream(peer, messages=answered, tools=tools, max_tokens=1)
    # the call and the result are in the prompt (what the model then says is its business:
    # this small one tends to call the tool again)
    assert after[-1]["usage"]["prompt_tokens"] > before[-1]["usage"]["prompt_tokens"] + 20


def test_openai_max_tokens_finishes_with_length(peer: Peer) -> None:
    chunks = openai_stream(
        peer, messages=[{"role": "user", "content": LONG_PROMPT[:200]}], max_tokens=3
    )
    assert finish_reasons(chunks) == ["length"]
    assert chunks[-1]["usage"]["completion_tokens"] == 3


def post_error(peer: Peer, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    with client() as http:
        response = http.post(f"{peer.base_url}{path}", json=body)
    return response.status_code, response.json()


def test_openai_bad_request_is_a_400_with_an_error_object(peer: Peer) -> None:
    bad = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": "many"}
    status, body = post_error(peer, "/chat/completions", {**bad, "stream": True})
    assert status == 400
    assert body["error"]["code"] == 400
    assert body["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in body["error"]["message"]


def test_openai_over_long_prompt_is_a_400_naming_the_context_size(peer: Peer) -> None:
    status, body = post_error(
        peer,
        "/chat/completions",
        {"messages": [{"role": "user", "content": LONG_PROMPT}], "stream": True},
    )
    assert status == 400
    assert body["error"]["type"] == "exceed_context_size_error"
    assert body["error"]["n_ctx"] == CONTEXT
    assert body["error"]["n_prompt_tokens"] > CONTEXT


def test_closing_a_stream_frees_the_server_at_once(peer: Peer) -> None:
    body = {
        "messages": [{"role": "user", "content": "Count from 1 to 500, one number per line."}],
        "max_tokens": 400,  # ~8 s of work at 50 tokens/s if the server kept going
        "stream": True,
    }
    with (
        client() as http,
        http.stream("POST", f"{peer.base_url}/chat/completions", json=body) as response,
    ):
        for seen, _ in enumerate(sse_events(response)):
            if seen == 3:
                break  # leaving the block closes the connection
    closed = time.monotonic()
    while busy(peer):
        assert time.monotonic() - closed < 3.0, "the server still generates for a closed stream"
        time.sleep(0.05)


def busy(peer: Peer) -> bool:
    with client() as http:
        slots = http.get(f"{peer.url}/slots").json()
    return any(slot["is_processing"] for slot in slots)


# -- Anthropic messages ----------------------------------------------------------------


def test_anthropic_streams_message_block_and_delta_events(peer: Peer) -> None:
    events = anthropic_stream(peer, messages=[{"role": "user", "content": SAY_HELLO}])
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0]["message"]["usage"]["input_tokens"] > 0
    starts = [e for e in events if e["type"] == "content_block_start"]
    assert [s["content_block"]["type"] for s in starts] == ["text"]
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert text.strip()
    final = events[-2]
    assert final["delta"]["stop_reason"] == "end_turn"
    assert final["usage"]["output_tokens"] > 0


def test_anthropic_streams_tool_use_with_input_json_deltas(peer: Peer) -> None:
    tool = {"name": WEATHER["name"], "description": WEATHER["description"]}
    tool["input_schema"] = WEATHER["parameters"]
    events = anthropic_stream(
        peer, messages=[{"role": "user", "content": ASK_WEATHER}], tools=[tool]
    )
    starts = [e for e in events if e["type"] == "content_block_start"]
    uses = [s for s in starts if s["content_block"]["type"] == "tool_use"]
    assert len(uses) == 1, events
    block = uses[0]["content_block"]
    assert block["id"] and block["name"] == "get_weather"
    index = uses[0]["index"]
    parts = [
        e["delta"]["partial_json"]
        for e in events
        if e["type"] == "content_block_delta" and e["index"] == index
    ]
    assert all(isinstance(p, str) for p in parts)
    assert isinstance(json.loads("".join(parts)), dict)
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_max_tokens_stop_reason(peer: Peer) -> None:
    events = anthropic_stream(peer, messages=[{"role": "user", "content": SAY_HELLO}], max_tokens=2)
    assert events[-2]["delta"]["stop_reason"] == "max_tokens"
    assert events[-2]["usage"]["output_tokens"] == 2


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"messages": [{"role": "user"}]}, "invalid_request_error"),  # no content
        ({"messages": [{"role": "user", "content": LONG_PROMPT}]}, "exceed_context_size_error"),
    ],
    ids=["bad request", "over-long prompt"],
)
def test_anthropic_errors_are_400s(peer: Peer, body: dict[str, Any], kind: str) -> None:
    status, error = post_error(peer, "/messages", {"model": "qwen", "max_tokens": 8, **body})
    assert status == 400
    assert error["error"]["type"] == kind
