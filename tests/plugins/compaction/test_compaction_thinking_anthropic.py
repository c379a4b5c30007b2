"""Compaction in the middle of a tool loop with extended thinking, through the real
Anthropic adapter against a loopback server (tests/core/llm/llm_wire.py).

The server streams each step as the Messages API does (``thinking`` with its
``signature_delta``, ``redacted_thinking``, ``tool_use``); every request it received is
then checked against the API's rules for a tool loop with thinking enabled: roles
alternate, each ``tool_use`` is answered by a ``tool_result`` in the next message and
each result answers a call of the message before it, every thinking block comes back
exactly as the server issued it (text and signature; redacted data as it came), and the
final assistant run (after the last user message that is not only tool results) starts
with a thinking block. The request after the third read is over the threshold: it is
the one compacted.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from compaction_util import BulkyTool, CountChars, events_of

import dsh_compaction
from dsh import Message, ModelRequest, hookimpl
from dsh.harness import Harness
from dsh.testing import check_invariants, run_turn

pytestmark = pytest.mark.plugins("compaction")


def _wire() -> ModuleType:
    """The loopback server of the provider tests (one module, however it is reached)."""
    if "llm_wire" in sys.modules:
        return sys.modules["llm_wire"]
    path = Path(__file__).parents[2] / "core" / "llm" / "llm_wire.py"
    spec = importlib.util.spec_from_file_location("llm_wire", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["llm_wire"] = module
    spec.loader.exec_module(module)
    return module


wire = _wire()
THINKING = {"type": "enabled", "budget_tokens": 1024}


def event(obj: dict[str, Any]) -> bytes:
    return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode()


def message(blocks: Sequence[dict[str, Any]], stop: str) -> Any:
    """One streamed answer of ``blocks`` (in their final form), as the API sends it."""
    head = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x"}
    head |= {"content": [], "stop_reason": None, "usage": {"input_tokens": 9}}
    out = [event({"type": "message_start", "message": head})]
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "redacted_thinking":  # whole in its start event
            out.append(
                event({"type": "content_block_start", "index": index, "content_block": block})
            )
        else:
            empty = {
                "thinking": {"type": "thinking", "thinking": "", "signature": ""},
                "tool_use": {**block, "input": {}},
                "text": {"type": "text", "text": ""},
            }[kind]
            start = {"type": "content_block_start", "index": index, "content_block": empty}
            out.append(event(start))
            deltas = {
                "thinking": [
                    {"type": "thinking_delta", "thinking": block.get("thinking", "")},
                    {"type": "signature_delta", "signature": block.get("signature", "")},
                ],
                "tool_use": [
                    {"type": "input_json_delta", "partial_json": json.dumps(block.get("input"))}
                ],
                "text": [{"type": "text_delta", "text": block.get("text", "")}],
            }[kind]
            for delta in deltas:
                out.append(event({"type": "content_block_delta", "index": index, "delta": delta}))
        out.append(event({"type": "content_block_stop", "index": index}))
    delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}
    out += [event(delta), event({"type": "message_stop"})]
    return wire.sse(out)


def think(n: int) -> dict[str, Any]:
    return {"type": "thinking", "thinking": f"plan of step {n}", "signature": f"sig-{n}=="}


def read(n: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "read", "input": {"path": f"f{n}.py"}}


def anthropic_problems(body: dict[str, Any], issued: list[dict[str, Any]]) -> list[str]:
    """What the Messages API would refuse in ``body`` (thinking enabled, a tool loop)."""
    problems: list[str] = []
    messages = body["messages"]
    for i, wire_message in enumerate(messages):
        role = wire_message["role"]
        if role != ("user" if i % 2 == 0 else "assistant"):
            problems.append(f"messages.{i}: roles must alternate, starting with user")
        blocks = wire_message["content"]
        for j, block in enumerate(blocks):
            if block["type"] in ("thinking", "redacted_thinking") and block not in issued:
                problems.append(f"messages.{i}.content.{j}: thinking not as issued: {block}")
        if role == "assistant":
            calls = {b["id"] for b in blocks if b["type"] == "tool_use"}
            after = messages[i + 1]["content"] if i + 1 < len(messages) else []
            answered = {b["tool_use_id"] for b in after if b["type"] == "tool_result"}
            if calls - answered:
                problems.append(f"messages.{i}: tool_use without a result: {calls - answered}")
        if role == "user" and i:
            before = messages[i - 1]["content"]
            calls = {b["id"] for b in before if b["type"] == "tool_use"}
            for j, block in enumerate(blocks):
                if block["type"] == "tool_result" and block["tool_use_id"] not in calls:
                    problems.append(f"messages.{i}.content.{j}: tool_result without its call")
    # the final assistant run: after the last user message with more than tool results
    human = [
        i
        for i, m in enumerate(messages)
        if m["role"] == "user" and any(b["type"] != "tool_result" for b in m["content"])
    ]
    first = human[-1] + 1 if human else 0
    if first < len(messages):
        opening = messages[first]["content"][0]["type"]
        if opening not in ("thinking", "redacted_thinking"):
            problems.append(
                f"messages.{first}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{opening}`: a final assistant message must start with a "
                "thinking block"
            )
    return problems


class Thinking:
    """Turns extended thinking on for every request (after compaction rebuilt it)."""

    @hookimpl
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return request.model_copy(update={"options": {"thinking": THINKING}})


class Summariser:
    @hookimpl(optionalhook=True)
    def compaction_summarize(self, messages: Sequence[Message]) -> str:
        return f"the summary of {len(messages)} messages"


def harness(url: str) -> Harness:
    config = (
        f"models:\n  wire:\n    provider: anthropic\n    model: claude-x\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n    context_window: 4000\n"
        "agents:\n  - id: main\n    model: wire\n"
        "    options: {compaction: {prune_chars: 0}}\n"
    )
    plugins = [
        ("compaction", dsh_compaction),
        ("bulky", BulkyTool()),
        ("chars", CountChars()),
        ("summariser", Summariser()),
        ("thinking", Thinking()),
    ]
    return Harness(
        config_text=config,
        plugins=plugins,
        load_entry_points=False,
        env={"DSH_WIRE_KEY": "sk-ant-study"},
    )


@pytest.mark.parametrize("interleaved", [True, False], ids=["interleaved", "thinks-once"])
async def test_the_compacted_tool_loop_request_is_one_the_api_accepts(interleaved: bool) -> None:
    # three reads (each ~1250 tokens by the CharCounter): the fourth request is over
    # 0.8 of the 4000-token window; a tail budget of 1200 holds the last step alone
    steps = [
        [think(1), read(1)],
        [*([think(2)] if interleaved else []), read(2)],
        [
            *(
                [think(3), {"type": "redacted_thinking", "data": "opaque-3=="}]
                if interleaved
                else []
            ),
            read(3),
        ],
    ]
    issued = [b for blocks in steps for b in blocks if "thinking" in b["type"]]
    replies = [message(blocks, "tool_use") for blocks in steps]
    replies.append(message([think(4), {"type": "text", "text": "Done."}], "end_turn"))
    async with wire.WireServer(replies) as server:
        async with harness(server.url) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "read f1, f2 and f3")
            assert check_invariants(agent.session.events) == []
        bodies = [r.json() for r in server.requests]

    assert events[-1].data["reason"] == "completed"
    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized"]
    assert len(bodies) == 4
    for body in bodies:
        assert body["thinking"] == THINKING
        assert anthropic_problems(body, issued) == []
    last = bodies[3]["messages"]
    assert last[0]["content"][0]["text"].startswith(dsh_compaction.SUMMARY_HEADER)
    # the step the compaction came after: its message and its result, exactly
    assert last[-2] == {"role": "assistant", "content": steps[2]}
    (result,) = last[-1]["content"]
    assert result["tool_use_id"] == "toolu_3" and result["content"].startswith("f3.py: ")
    # the run that the summary and the task precede opens with the turn's thinking
    assert last[1]["content"][0] == (think(3) if interleaved else think(1))
