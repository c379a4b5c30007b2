"""A fidelity study of the OpenAI-compatible adapter: the reasoning fields of DeepSeek,
OpenRouter and vLLM, and the chunk shapes that break a multi-step tool-using turn.

Each scenario is served by the loopback server of llm_wire; where the rule is about the
next request, it runs as real dsh turns (harness, tool, following requests). Scenarios
and verdicts:

- DeepSeek thinking mode (``reasoning_content`` deltas, then a tool call, then the
  answer): its documented rule is that the reasoning of every assistant message between
  two user messages in which the model called tools goes back in all later requests,
  the answer after the calls included, and a tool-call message without
  ``reasoning_content`` is refused (HTTP 400, "The reasoning_content in the thinking
  mode must be passed back to the API"). dsh sent it on the tool-call messages only,
  and left it out where the reasoning was empty (bug, fixed in openai._messages: every
  assistant message of such an exchange, an empty string when there was none); the
  reasoning of an exchange without tool calls is not sent (DeepSeek ignores it);
- OpenRouter / vLLM ``reasoning`` instead of ``reasoning_content``, and a server that
  sends both with the same text: one reasoning block, not doubled (holds);
- text, a tool call, then text again in one answer: kept in order in the message, and
  sent back as one content string with the call (holds);
- ``finish_reason: "length"`` in the middle of a tool call's arguments: stop reason
  ``max_tokens``, the half call not run, the turn ends ``max-tokens`` (holds);
- the usage chunk after ``finish_reason`` (``stream_options.include_usage``), with empty
  ``choices``, and an empty-``choices`` chunk first (Azure): counted, nothing added to
  the answer, also when the response ends cleanly without ``[DONE]`` (holds).
"""

from __future__ import annotations

import json
from typing import Any

from llm_wire import WireServer, collect, sse
from read_tool import CALLS, Tools
from test_llm_http import ASK, openai

from dsh.harness import Harness
from dsh.llm import Finish, ReasoningDelta, UsageChunk
from dsh.messages import ReasoningBlock, TextBlock, ToolCall, Usage
from dsh.testing import check_invariants, run_turn

DONE = b"data: [DONE]\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    body = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def call(call_id: str | None, arguments: str) -> dict[str, Any]:
    piece: dict[str, Any] = {"index": 0, "function": {"arguments": arguments}}
    if call_id:
        piece.update(id=call_id, type="function")
        piece["function"]["name"] = "read_file"
    return {"content": None, "tool_calls": [piece]}


def think(words: str) -> bytes:
    return chunk({"content": None, "reasoning_content": words})


def answer(words: str, reasoning: str = "") -> bytes:
    return (think(reasoning) if reasoning else b"") + chunk({"content": words}, "stop") + DONE


def harness(url: str) -> Harness:
    config = (
        f"models:\n  wire:\n    provider: deepseek\n    model: deepseek-v4-flash\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n"
        "agents:\n  - id: main\n    model: wire\n"
    )
    return Harness(
        config_text=config,
        plugins=[("tools", Tools())],
        load_entry_points=False,
        env={"DSH_WIRE_KEY": "sk-ds-study"},
    )


async def test_deepseek_gets_the_reasoning_of_every_message_of_a_tool_using_exchange() -> None:
    calls_a = think("Read a.") + chunk(call("call_a", '{"path":')) + chunk(call(None, '"a"}'))
    calls_b = chunk(call("call_b", '{"path": "b"}'))  # a call with no reasoning at all
    replies = [
        sse(calls_a + chunk({}, "tool_calls") + DONE),
        sse(calls_b + chunk({}, "tool_calls") + DONE),
        sse(answer("a and b read.", "Both read.")),
        sse(answer("You're welcome.", "Polite.")),  # an exchange without tool calls
        sse(answer("Bye.")),
    ]
    CALLS.clear()
    async with WireServer(replies) as server, harness(server.url) as h:
        agent = h.agents.get("main")
        assert agent is not None
        first = await run_turn(agent, "read a then b")
        await run_turn(agent, "thanks")
        await run_turn(agent, "bye")
        check_invariants(agent.session.events)
        sent = [request.json()["messages"] for request in server.requests]
    assert CALLS == ["a", "b"]
    assert first[-1].data["reason"] == "completed"
    assert [m.get("reasoning_content") for m in sent[3] if m["role"] == "assistant"] == [
        "Read a.",
        "",  # none: an empty one, never a missing one
        "Both read.",  # the answer after the calls too
    ]
    assert sent[4][-2] == {"role": "assistant", "content": "You're welcome."}
    assert sent[3] == sent[4][: len(sent[3])]  # what was sent once goes again unchanged


async def test_reasoning_under_openrouters_name_or_both_names_is_read_once() -> None:
    # OpenRouter and newer vLLM: "reasoning"; a server in between sends both
    only = chunk({"reasoning": "Plan. "}) + chunk({"reasoning": "Go."}) + answer("ok")
    both = chunk({"reasoning": "Plan.", "reasoning_content": "Plan."}) + answer("ok")
    async with WireServer([sse(only), sse(both)]) as server:
        model = openai(server.url)
        chunks, first = await collect(model, ASK, keep_open=True)
        _, second = await collect(model, ASK)
    assert ReasoningDelta("Plan. ") in chunks
    assert first.content == (ReasoningBlock(text="Plan. Go."), TextBlock(text="ok"))
    assert second.content == (ReasoningBlock(text="Plan."), TextBlock(text="ok"))


async def test_text_a_call_and_text_again_keep_their_order_and_go_back_as_one_text() -> None:
    body = (
        chunk({"content": "Let me look"})
        + chunk(call("call_a", '{"path": "a"}'))
        + chunk({"content": " at a."})
        + chunk({}, "tool_calls")
        + DONE
    )
    CALLS.clear()
    async with WireServer([sse(body), sse(answer("Done."))]) as server:
        async with harness(server.url) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "read a")
            check_invariants(agent.session.events)
        second = server.requests[1].json()["messages"]
    logged = next(e.data["message"] for e in events if e.type == "assistant/message")
    assert [block["type"] for block in logged["content"]] == ["text", "tool_call", "text"]
    assert CALLS == ["a"]
    assert second[1]["content"] == "Let me look at a."
    assert second[1]["tool_calls"][0]["function"] == {
        "name": "read_file",
        "arguments": '{"path": "a"}',
    }


async def test_length_in_the_middle_of_a_tool_call_runs_nothing() -> None:
    # BEHAVIOURS 14: a max-tokens stop runs none of the step's calls
    cut = chunk(call("call_a", '{"pa')) + chunk({}, "length") + DONE
    async with WireServer([sse(cut)]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert chunks[-1] == Finish("max_tokens")
    assert message.content == (ToolCall(id="call_a", name="read_file", arguments='{"pa'),)
    CALLS.clear()
    async with WireServer([sse(cut)]) as server, harness(server.url) as h:
        agent = h.agents.get("main")
        assert agent is not None
        events = await run_turn(agent, "read a")
        check_invariants(agent.session.events)
    assert CALLS == []
    assert not [e for e in events if e.type == "tool/call"]
    assert events[-1].data["reason"] == "max-tokens"


async def test_the_usage_chunk_after_the_finish_counts_and_adds_nothing() -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 9, "prompt_tokens_details": {}}
    filter_first = b'data: {"choices": [], "prompt_filter_results": []}\n\n'
    body = (
        filter_first
        + chunk(call("call_a", '{"path": "a"}'))
        + chunk({}, "tool_calls")
        + b"data: "
        + json.dumps({"choices": [], "usage": usage}).encode()
        + b"\n\n"
    )
    async with WireServer([sse(body + DONE), sse(body)]) as server:
        model = openai(server.url)
        chunks, with_done = await collect(model, ASK, keep_open=True)
        _, without_done = await collect(model, ASK)
    assert chunks[-2:] == [
        UsageChunk(Usage(input_tokens=40, output_tokens=9)),
        Finish("tool_calls"),
    ]
    for message in (with_done, without_done):
        assert message.stop_reason == "tool_calls"
        assert message.content == (
            ToolCall(id="call_a", name="read_file", arguments='{"path": "a"}'),
        )
        assert message.usage == Usage(input_tokens=40, output_tokens=9)
