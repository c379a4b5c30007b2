"""A fidelity study of the Anthropic adapter: what the Messages API streams in a
multi-step, tool-using turn with extended thinking, and what it requires back.

Each scenario is served byte for byte by the loopback server of llm_wire and, where the
API's rule is about the next request, run as a real dsh turn (harness, tool, second
request). Scenarios and verdicts:

- thinking (``thinking_delta`` + ``signature_delta``) then ``tool_use``: the step-2
  request carries the thinking block with its signature unchanged, before the call
  (holds);
- two thinking blocks back to back (interleaved thinking; each has its own signature):
  they were merged into one block with the second signature, which the API refuses
  (bug, fixed in Assembler: reasoning after a signature starts a new block);
- ``redacted_thinking`` between thinking blocks and between tool calls: its data goes
  back verbatim, in order (holds);
- ``stop_reason: max_tokens`` in the middle of a ``tool_use`` input: stop reason
  ``max_tokens``, the half call is not run, the turn ends ``max-tokens`` (holds);
- ``pause_turn`` (a server tool's long turn paused) ended the step as ``stop``, so the
  turn ended there, unfinished (bug, fixed: stop reason ``paused``, and the turn takes
  another step, which sends the paused answer back for the API to go on);
  ``refusal`` is an ``error`` stop (holds, documented); a server tool's own blocks
  (``server_tool_use``, whose input streams as ``input_json_delta`` like a
  ``tool_use``'s, and ``web_search_tool_result``) failed the answer MALFORMED_RESPONSE
  (the input pieces became a call without id or name), then were left out with their
  deltas, so the next request lacked them (the model no longer saw its search results,
  and a ``pause_turn`` could not be resumed): now each is kept whole as a
  ``ProviderBlock`` (the input pieces put together) and goes back verbatim in its
  place, with the answer's text and client tool calls (fixed);
- usage: ``message_start`` input and cache tokens with ``message_delta`` output tokens
  add up (holds); but a ``message_delta`` that repeats the counts with some of them
  ``null`` (the API's SDKs type them optional) zeroed the start's counts (bug, fixed in
  the adapter: a null count does not replace a known one).
"""

from __future__ import annotations

import json
from typing import Any

from llm_wire import WireServer, by_event, collect, sse
from read_tool import CALLS, Tools

from dsh.config import ModelConfig
from dsh.harness import Harness
from dsh.llm import Assembler, Finish, ReasoningDelta, TextDelta, ToolCallDelta
from dsh.llm.anthropic import AnthropicModel
from dsh.messages import ModelRequest, ProviderBlock, ReasoningBlock, Usage, UserMessage
from dsh.testing import check_invariants, run_turn


def event(obj: dict[str, Any]) -> bytes:
    return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode()


def start(usage: dict[str, Any] | None = None) -> bytes:
    message = {
        "id": "msg_study",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 1},
    }
    return event({"type": "message_start", "message": message})


def thinking(index: int, pieces: list[str], signature: str) -> bytes:
    out = event(
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        }
    )
    for piece in pieces:
        delta = {"type": "thinking_delta", "thinking": piece}
        out += event({"type": "content_block_delta", "index": index, "delta": delta})
    delta = {"type": "signature_delta", "signature": signature}
    out += event({"type": "content_block_delta", "index": index, "delta": delta})
    return out + event({"type": "content_block_stop", "index": index})


def redacted(index: int, data: str) -> bytes:
    block = {"type": "redacted_thinking", "data": data}
    return event({"type": "content_block_start", "index": index, "content_block": block}) + event(
        {"type": "content_block_stop", "index": index}
    )


def text(index: int, words: str) -> bytes:
    block = {"type": "text", "text": ""}
    delta = {"type": "text_delta", "text": words}
    return (
        event({"type": "content_block_start", "index": index, "content_block": block})
        + event({"type": "content_block_delta", "index": index, "delta": delta})
        + event({"type": "content_block_stop", "index": index})
    )


def tool_use(index: int, call_id: str, pieces: list[str], *, stop: bool = True) -> bytes:
    block = {"type": "tool_use", "id": call_id, "name": "read_file", "input": {}}
    out = event({"type": "content_block_start", "index": index, "content_block": block})
    for piece in pieces:
        delta = {"type": "input_json_delta", "partial_json": piece}
        out += event({"type": "content_block_delta", "index": index, "delta": delta})
    return out + (event({"type": "content_block_stop", "index": index}) if stop else b"")


def end(reason: str, usage: dict[str, Any] | None = None) -> bytes:
    delta = {"stop_reason": reason, "stop_sequence": None}
    return event(
        {"type": "message_delta", "delta": delta, "usage": usage or {"output_tokens": 20}}
    ) + event({"type": "message_stop"})


def harness(url: str) -> Harness:
    config = (
        f"models:\n  wire:\n    provider: anthropic\n    model: claude-sonnet-4-5\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n"
        "agents:\n  - id: main\n    model: wire\n"
    )
    return Harness(
        config_text=config,
        plugins=[("tools", Tools())],
        load_entry_points=False,
        env={"DSH_WIRE_KEY": "sk-ant-study"},
    )


def model(url: str) -> AnthropicModel:
    config = ModelConfig(provider="anthropic", model="claude-x", base_url=url)
    return AnthropicModel("claude", config, env={"ANTHROPIC_API_KEY": "sk-ant-study"})


ASK = ModelRequest(messages=(UserMessage(content="read a"),))
DONE_TEXT = start() + text(0, "Done.") + end("end_turn")


async def turn_of(first: bytes, prompt: str) -> tuple[list[Any], list[Any], list[Any]]:
    """A real turn on ``harness``: ``first`` is the model's first answer, "Done." its
    second; the turn's events, the session's log (its invariants checked) and the
    messages of the second request. CALLS holds the calls of read_file it ran."""
    CALLS.clear()
    async with (
        WireServer([sse(by_event(first)), sse(DONE_TEXT)]) as server,
        harness(server.url) as h,
    ):
        agent = h.agents.get("main")
        assert agent is not None
        events = await run_turn(agent, prompt)
        log = list(agent.session.events)
        check_invariants(log)
    return list(events), log, server.requests[1].json()["messages"]


async def test_interleaved_thinking_goes_back_block_by_block_with_its_signatures() -> None:
    # interleaved thinking (beta interleaved-thinking-2025-05-14): thinking, two thinking
    # blocks back to back, a call, redacted thinking, thinking, a second call
    first = (
        start()
        + thinking(0, ["I should read ", "a."], "sig-A")
        + thinking(1, ["And then b."], "sig-B")
        + tool_use(2, "toolu_a", ['{"path": ', '"a"}'])
        + redacted(3, "opaque-R==")
        + thinking(4, ["Now b."], "sig-C")
        + tool_use(5, "toolu_b", ['{"path": "b"}'])
        + end("tool_use")
    )
    events, _, second = await turn_of(first, "read a and b")
    assert CALLS == ["a", "b"]
    assert events[-1].data["reason"] == "completed"
    assert second[1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "I should read a.", "signature": "sig-A"},
            {"type": "thinking", "thinking": "And then b.", "signature": "sig-B"},
            {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a"}},
            {"type": "redacted_thinking", "data": "opaque-R=="},
            {"type": "thinking", "thinking": "Now b.", "signature": "sig-C"},
            {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b"}},
        ],
    }
    assert [block["type"] for block in second[2]["content"]] == ["tool_result", "tool_result"]


def test_reasoning_after_a_signature_starts_a_block_of_its_own() -> None:
    assembler = Assembler()
    for chunk in (
        ReasoningDelta("one"),
        ReasoningDelta("", signature="s1"),
        ReasoningDelta("two"),
        ReasoningDelta("", signature="s2"),
        ReasoningDelta("", signature="s3"),  # a block whose text the API left out
        ReasoningDelta("unsigned "),  # another provider's reasoning: no signatures
        ReasoningDelta("pieces"),
        TextDelta("ok"),
        Finish("stop"),
    ):
        assembler.add(chunk)
    assert assembler.message().content[:4] == (
        ReasoningBlock(text="one", signature="s1"),
        ReasoningBlock(text="two", signature="s2"),
        ReasoningBlock(text="", signature="s3"),
        ReasoningBlock(text="unsigned pieces"),
    )


async def test_max_tokens_in_the_middle_of_a_tool_input_runs_nothing() -> None:
    # BEHAVIOURS 14: a max-tokens stop runs none of the step's calls
    cut = (
        start()
        + thinking(0, ["Read a."], "sig-A")
        + tool_use(1, "toolu_a", ['{"pa'], stop=False)
        + end("max_tokens")
    )
    CALLS.clear()
    async with WireServer([sse(by_event(cut))]) as server:
        chunks, message = await collect(model(server.url), ASK)
    assert message.stop_reason == "max_tokens"
    assert chunks[-1] == Finish("max_tokens")
    async with WireServer([sse(by_event(cut))]) as server, harness(server.url) as h:
        agent = h.agents.get("main")
        assert agent is not None
        events = await run_turn(agent, "read a")
        check_invariants(agent.session.events)
    assert CALLS == []
    assert not [e for e in events if e.type == "tool/call"]
    assert events[-1].data["reason"] == "max-tokens"
    logged = next(e.data["message"] for e in events if e.type == "assistant/message")
    assert [block["type"] for block in logged["content"]] == ["reasoning"]


async def test_pause_turn_and_refusal_stop_reasons() -> None:
    paused = start() + text(0, "Searching...") + end("pause_turn")
    refused = start() + text(0, "I can't help with that.") + end("refusal")
    async with WireServer([sse(paused), sse(refused)]) as server:
        claude = model(server.url)
        _, first = await collect(claude, ASK, keep_open=True)
        _, second = await collect(claude, ASK)
    assert (first.stop_reason, first.text) == ("paused", "Searching...")
    assert (second.stop_reason, second.text) == ("error", "I can't help with that.")


async def test_usage_adds_the_cache_tokens_and_takes_output_from_message_delta() -> None:
    counts = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 4000,
        "output_tokens": 1,
    }
    # the newer API repeats the counts in message_delta, some of them null
    later = {
        "input_tokens": None,
        "cache_creation_input_tokens": None,
        "cache_read_input_tokens": 4000,
        "output_tokens": 57,
    }
    body = start(counts) + text(0, "hi") + end("end_turn", later)
    async with WireServer([sse(body)]) as server:
        _, message = await collect(model(server.url), ASK)
    assert message.usage == Usage(
        input_tokens=4312, output_tokens=57, cache_read_tokens=4000, cache_write_tokens=300
    )


#: The blocks of the search below, whole, as the API wants them back.
SEARCH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "dsh"},
}
SEARCH_FOUND = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.com/dsh",
            "title": "dsh",
            "encrypted_content": "opaque-E==",
            "page_age": None,
        }
    ],
}


def web_search(index: int) -> bytes:
    """A web search the server ran: its ``server_tool_use`` block (the input streamed in
    two pieces) and its ``web_search_tool_result`` block (whole in its start)."""
    use = {**SEARCH_USE, "input": {}}
    out = event({"type": "content_block_start", "index": index, "content_block": use})
    for piece in ['{"query": ', '"dsh"}']:
        delta = {"type": "input_json_delta", "partial_json": piece}
        out += event({"type": "content_block_delta", "index": index, "delta": delta})
    out += event({"type": "content_block_stop", "index": index})
    start = {"type": "content_block_start", "index": index + 1, "content_block": SEARCH_FOUND}
    out += event(start)
    return out + event({"type": "content_block_stop", "index": index + 1})


async def test_a_server_tool_block_streams_without_failing_the_answer() -> None:
    """Its input pieces made a call without id or name: MALFORMED_RESPONSE."""
    body = start() + web_search(0) + text(2, "Found it.") + end("end_turn")
    async with WireServer([sse(by_event(body))]) as server:
        chunks, message = await collect(model(server.url), ASK)
    assert message.text == "Found it."
    assert message.tool_calls == []
    assert not [c for c in chunks if isinstance(c, ToolCallDelta)]
    assert message.content[:2] == (
        ProviderBlock(provider="anthropic", data=SEARCH_USE),
        ProviderBlock(provider="anthropic", data=SEARCH_FOUND),
    )


async def test_a_call_after_a_server_tool_runs_and_its_step_goes_back() -> None:
    """A real turn: the search, text, a call of dsh's tool; the call runs and the next
    request carries the step's blocks as they came: the search's, text, call."""
    first = (
        start()
        + web_search(0)
        + text(2, "Reading it.")
        + tool_use(3, "toolu_a", ['{"path": ', '"a"}'])
        + end("tool_use")
    )
    events, _, second = await turn_of(first, "search and read a")
    assert CALLS == ["a"]
    assert events[-1].data["reason"] == "completed"
    assert second[1] == {
        "role": "assistant",
        "content": [
            SEARCH_USE,
            SEARCH_FOUND,
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a"}},
        ],
    }


async def test_a_server_tool_s_blocks_go_back_in_the_next_request() -> None:
    """They were left out, so the model no longer saw its search results; now they go
    back as they came (the input whole), and the log's assistant/message holds them."""
    first = start() + web_search(0) + tool_use(2, "toolu_a", ['{"path": "a"}']) + end("tool_use")
    _, log, second = await turn_of(first, "search and read a")
    logged = [e.data for e in log if e.type == "assistant/message"]
    call = {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a"}}
    assert second[1]["content"] == [SEARCH_USE, SEARCH_FOUND, call]
    assert logged[0]["message"]["content"][:2] == [
        {"type": "provider", "provider": "anthropic", "data": SEARCH_USE},
        {"type": "provider", "provider": "anthropic", "data": SEARCH_FOUND},
    ]
